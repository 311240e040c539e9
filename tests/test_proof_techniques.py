"""Every technique of the proof search keeps every value: with each set of techniques (the
game's first guesses, the 1 + epsilon trick, weak proof numbers; bench/bench_proof_techniques.py
measures what each pays), the values proved equal the solved tables' at sampled positions, and
a position and its mirror images are one entry of the table with one value."""
import random

import pytest

from conftest import solve_to
from sowsolve.solver import proof as proofs
from sowsolve.solver.games import make_game
from sowsolve.tables.store import open_table

SETS = [dict(hints=False, epsilon=False, weak=False, lookahead=False),
        dict(hints=True, epsilon=False, weak=False, lookahead=False),
        dict(hints=False, epsilon=True, weak=False, lookahead=False),
        dict(hints=False, epsilon=False, weak=True, lookahead=False),
        dict(hints=False, epsilon=False, weak=False, lookahead=True),
        dict(hints=True, epsilon=True, weak=False, lookahead=True),
        dict(hints=True, epsilon=True, weak=True, lookahead=True)]
DEFAULT = SETS[5]


def label(techniques: dict) -> str:
    return "+".join(name for name, on in techniques.items() if on) or "none"


@pytest.fixture(scope="module")
def table_3x3(tmp_path_factory):
    path = tmp_path_factory.mktemp("techniques") / "o33.sqlite"
    return solve_to(path, "overflow", size="3x3"), path


def proved_value(game, position, techniques: dict, entries: int = 1 << 16) -> str:
    searched = dict(techniques)
    game.kernel().lookahead = searched.pop("lookahead")
    prover = proofs.prover_for(game, position, entries)
    prover.set_techniques(**searched)
    assert prover.techniques == searched
    while not prover.run(1 << 40):
        pass
    return prover.value()


@pytest.mark.parametrize("techniques", SETS, ids=label)
def test_each_set_proves_what_the_table_says(table_3x3, techniques):
    game, path = table_3x3
    rng = random.Random(11)
    checked = 0
    with open_table(path) as table:
        for tier in table.tiers:
            size = table.tier_size(tier)
            for index in rng.sample(range(size), min(size, 6)):
                position = table.stored_positions(tier, index, index + 1)[0]
                if game.outcome(position) is not None:
                    continue
                assert proved_value(game, position, techniques) == table.probe(position).value, \
                    game.format_position(position)
                checked += 1
    assert checked > 20


@pytest.mark.parametrize("techniques", SETS, ids=label)
def test_the_start_of_3x4_is_a_win_with_each_set(techniques):
    """RULES.md's 3x4 is a win for Light (README: win in 21, from the solved table)."""
    game = make_game("overflow", size="3x4")
    assert proved_value(game, game.initial(), techniques, entries=1 << 20) == "win"


def test_a_position_and_its_images_are_one_entry():
    """The mirror images of a position (each reflection of the square, the side to move swapped
    where the houses swap) pack to one key, so the search proves one entry, one value."""
    game = make_game("overflow", size="3x3")
    position = game.parse_position("120/011/003 L")
    images = game.orientations(position)
    assert len({game.format_position(image) for image in images}) > 1
    assert len({game.key(image)[1] for image in images}) == 1
    assert len({proved_value(game, image, DEFAULT) for image in images}) == 1


def test_techniques_are_chosen_before_the_search():
    game = make_game("overflow", size="3x3")
    prover = proofs.prover_for(game, game.initial(), 1 << 12)
    prover.run(10)
    with pytest.raises(RuntimeError, match="before the search starts"):
        prover.set_techniques(weak=True)


def test_the_defaults_are_the_techniques_that_pay():
    """A new search uses hints, epsilon and the lookahead, not weak proof numbers (see
    bench/results/proof-techniques-*.json: weak expands more on every board measured)."""
    game = make_game("overflow", size="3x3")
    prover = proofs.prover_for(game, game.initial(), 1 << 12)
    assert dict(prover.techniques, lookahead=game.kernel().lookahead) == DEFAULT


def test_the_lookahead_proves_a_win_at_once_and_nothing_else(table_3x3):
    """Every position of 3x3 whose side to move has a move that ends the game in its favour
    (by the reference rules: the position after it is lost for the side to move there) gets a
    proved hint, and no other position that is not over does; with the lookahead off, none."""
    game, path = table_3x3
    kernel = game.kernel()
    seen = 0
    with open_table(path) as table:
        for tier in table.tiers:
            for position in table.stored_positions(tier, 0, table.tier_size(tier)):
                if game.outcome(position) is not None:
                    continue
                at_once = any(game.outcome(game.play(position, move)) == "loss"
                              for move in game.legal_moves(position))
                key = game.key(position)[1]
                kernel.lookahead = True
                final, phi, delta = kernel.proof_hint_of(key)
                assert final == at_once and (phi == 0) == at_once, game.format_position(position)
                kernel.lookahead = False
                assert not kernel.proof_hint_of(key)[0]
                seen += at_once
    kernel.lookahead = True
    assert seen > 100


def test_the_docs_table_is_the_measured_one():
    """docs/overflow-endgame.md's table of techniques is bench/results/proof-techniques.json,
    row for row, and the default set is the one that expands least on every board."""
    import json
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parent.parent
    runs = json.loads((root / "bench/results/proof-techniques.json").read_text())["runs"]
    text = (root / "docs/overflow-endgame.md").read_text()
    section = text[text.index("## What each technique pays"):text.index("## What remains")]
    rows = re.findall(r"^\| (\dx\d) \| ([^|]+) \| ([\d,]+)( \(not proved\))? \| ([\d.]+) \| ([\d,-]+) \| ([\d.-]+) \|$",
                      section, flags=re.M)
    assert len(rows) == len(runs) == 24
    for row, run in zip(rows, runs):
        size, name, nodes, unproved, seconds, proof, per = row
        assert (size, name.strip(), int(nodes.replace(",", ""))) == (run["size"], run["name"], run["nodes"])
        assert bool(unproved) == (not run["proved"]) and float(seconds) == run["seconds"]
        if run["proved"]:
            assert int(proof.replace(",", "")) == run["proof_positions"]
            assert float(per) == run["nodes_per_proof_position"]
    for size in ("3x4", "3x5", "4x4"):
        board = [r for r in runs if r["size"] == size and r["proved"]]
        best = min(board, key=lambda r: r["nodes"])
        assert best["name"].endswith("(default)")
        assert {r["value"] for r in board} == {best["value"]}     # every set proves one value
        assert best["techniques"] == DEFAULT
