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

SETS = [dict(hints=False, epsilon=False, weak=False), dict(hints=True, epsilon=False, weak=False),
        dict(hints=False, epsilon=True, weak=False), dict(hints=False, epsilon=False, weak=True),
        dict(hints=True, epsilon=True, weak=False), dict(hints=True, epsilon=True, weak=True)]


def label(techniques: dict) -> str:
    return "+".join(name for name, on in techniques.items() if on) or "none"


@pytest.fixture(scope="module")
def table_3x3(tmp_path_factory):
    path = tmp_path_factory.mktemp("techniques") / "o33.sqlite"
    return solve_to(path, "overflow", size="3x3"), path


def proved_value(game, position, techniques: dict, entries: int = 1 << 16) -> str:
    prover = proofs.prover_for(game, position, entries)
    prover.set_techniques(**techniques)
    assert prover.techniques == techniques
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
    assert len({proved_value(game, image, SETS[4]) for image in images}) == 1


def test_techniques_are_chosen_before_the_search():
    game = make_game("overflow", size="3x3")
    prover = proofs.prover_for(game, game.initial(), 1 << 12)
    prover.run(10)
    with pytest.raises(RuntimeError, match="before the search starts"):
        prover.set_techniques(weak=True)
