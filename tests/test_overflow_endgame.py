"""Overflow endgame tables (`solve overflow --max-discs D`): every position of at most D discs
that keeps one group, whatever the start, solved tier by tier over (discs, occupied cells).

The facts checked here are computed apart from the tier solver: the positions a tier must hold
by brute force over every spread of discs (the Python rules' one-group test), the order of the
tiers by playing every move with the Python rules, and the values against the full tables of
3x3 and 3x4 (a search from the start, cext/ttsolve.pyx) and against searches from positions of
4x4 (the full 4x4 table takes minutes and gigabytes: the searches reach every position below
each of their roots instead)."""
from __future__ import annotations

import itertools
import pathlib
import re
import json
import random

import pytest
from typer.testing import CliRunner

from sowsolve.cli.app import app
from sowsolve.solver.games import make_game
from sowsolve.solver.search import search
from sowsolve.solver.values import WIN_LOSS
from sowsolve.tables.store import TableWriter, open_table

from conftest import documentation, random_walk, solve_to

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def solve_endgame(path, size: str, discs: int):
    game = make_game("overflow", endgame=True, size=size)
    writer = TableWriter(str(path), game, max_stones=discs)
    game.solver.solve(game, writer, threads=2)
    writer.finish({})
    writer.close()
    return game


def spreads(cells: int, discs: int):
    """Every spread of exactly `discs` discs over `cells` cells."""
    for bars in itertools.combinations(range(discs + cells - 1), cells - 1):
        edges = (-1, *bars, discs + cells - 1)
        yield tuple(edges[i + 1] - edges[i] - 1 for i in range(cells))


def test_each_tier_holds_every_one_group_position_once():
    game = make_game("overflow", endgame=True, size="3x3")
    n = game.ncells
    for d in range(1, 8):
        expected: dict[int, int] = {}
        for heights in spreads(n, d):
            if game.one_group(heights):
                k = sum(1 for h in heights if h)
                expected[d * (n + 1) + k] = expected.get(d * (n + 1) + k, 0) + 2
                for side in "LD":
                    tier, index = game.locate(game.parse_position(
                        game.format_position(type(game.initial())(heights, side))))
                    assert tier == d * (n + 1) + k
                    assert game.stored_positions(tier, index, index + 1)[0] == (heights, side)
        assert {t: game.tier_size(t) for t in game.tiers() if game.tier_stones(t) == d} == \
            {t: expected.get(t, 0) for t in game.tiers() if game.tier_stones(t) == d}


@pytest.mark.slow
def test_every_move_lowers_discs_then_occupied_cells():
    """The tiers are closed under play: by the Python rules, every move of every position of
    3x3 with up to 7 discs lowers (discs, occupied cells) lexicographically."""
    game = make_game("overflow", endgame=True, size="3x3")
    moves = 0
    for tier in game.tiers():
        if game.tier_stones(tier) > 7:
            continue
        for position in game.stored_positions(tier, 0, game.tier_size(tier)):
            pair = (sum(position.heights), sum(1 for h in position.heights if h))
            for move in game.legal_moves(position):
                child = game.play(position, move)
                assert (sum(child.heights), sum(1 for h in child.heights if h)) < pair
                moves += 1
    assert moves > 10_000


def agree(endgame_path, full_path) -> int:
    """Every position of the full table with at most the endgame table's discs has the same
    record in both; returns how many were compared."""
    compared = 0
    with open_table(endgame_path) as small, open_table(full_path) as full:
        limit = small.meta["max_stones"]
        records = {t: small.tier_records(t) for t in small.tiers}
        kernel = small.game.kernel()
        for tier in full.tiers:
            if tier > limit:
                continue
            for key, record in zip(full.tier_keys(tier), full.tier_records(tier)):
                heights, side = full.game.position_of_key(int(key))
                where = kernel.rank(heights, "LD".index(side))
                assert where is not None
                assert records[where[0]][where[1]] == record, full.game.format_position(
                    full.game.position_of_key(int(key)))
                compared += 1
    return compared


def test_3x3_endgame_table_of_every_disc_agrees_with_the_full_table(tmp_path):
    solve_endgame(tmp_path / "e.sqlite", "3x3", 9)
    solve_to(tmp_path / "f.sqlite", "overflow", size="3x3")
    assert agree(tmp_path / "e.sqlite", tmp_path / "f.sqlite") == 6_742    # README: reachable


@pytest.mark.slow
def test_3x4_endgame_table_agrees_with_the_full_table(tmp_path):
    solve_endgame(tmp_path / "e.sqlite", "3x4", 8)
    solve_to(tmp_path / "f.sqlite", "overflow", size="3x4")
    assert agree(tmp_path / "e.sqlite", tmp_path / "f.sqlite") > 10_000


def test_4x4_endgame_table_agrees_with_searches_from_its_positions(tmp_path):
    """Roots drawn from the 4x4 table of at most 7 discs; the transposition-table search from
    each solves every position below it, each compared with the table."""
    game = solve_endgame(tmp_path / "e.sqlite", "4x4", 7)
    board = make_game("overflow", size="4x4")
    rng = random.Random(4)
    compared = 0
    with open_table(tmp_path / "e.sqlite") as table:
        kernel = table.game.kernel()
        records = {t: table.tier_records(t) for t in table.tiers}
        roots = [t for t in table.tiers if table.game.tier_stones(t) == 7]
        for _ in range(12):
            tier = rng.choice(roots)
            index = rng.randrange(table.tier_size(tier))
            position = table.stored_positions(tier, index, index + 1)[0]
            keys, found = search(board, position).results()
            for key, record in zip(keys, found):
                heights, side = board.position_of_key(int(key))
                where = kernel.rank(heights, "LD".index(side))
                assert records[where[0]][where[1]] == record
                compared += 1
    assert compared > 1_000
    assert game.tier_stones(max(table.tiers)) == 7


def test_the_commands_read_an_endgame_table(tmp_path):
    path = tmp_path / "overflow-size3x3-max5.sqlite"
    said = run("solve", "overflow", "--size", "3x3", "--max-discs", 5, "--table", path, "--json")
    assert said.exit_code == 0, said.output
    summary = json.loads(said.stdout)
    assert summary["max_stones"] == 5
    game = make_game("overflow", size="3x3")
    position = game.parse_position("100/110/100 L")
    value = run("query", "100/110/100 L", "--table", path, "--json")
    assert value.exit_code == 0, value.output
    answer = json.loads(value.stdout)
    assert answer["source"] == "table"
    assert {m["move"] for m in answer["moves"]} == {game.format_move(m) for m in game.legal_moves(position)}
    beyond = run("query", "111/111/000 L", "--table", path)
    assert beyond.exit_code == 1 and "beyond this table" in beyond.output
    info = run("info", "--table", path, "--json")
    assert info.exit_code == 0, info.output
    checked = run("check", "--table", path, "--full", "--json")
    assert checked.exit_code == 0, checked.output
    out = tmp_path / "e.csv"
    exported = run("export", "--table", path, "--format", "csv", "--out", out)
    assert exported.exit_code == 0, exported.output
    rows = out.read_text().splitlines()
    with open_table(path) as table:
        assert len(rows) - 1 == sum(table.tier_size(t) for t in table.tiers)


def test_a_changed_record_fails_the_full_check(tmp_path):
    """A table whose stored values were solved wrong (one record changed before it was
    written, its checksums then its own) is caught by check --full."""
    game = make_game("overflow", endgame=True, size="3x3")
    path = tmp_path / "bad.sqlite"
    writer = TableWriter(str(path), game, max_stones=4)
    real = writer.save_tier

    def save_tier(tier, records, summary, **kw):
        if tier == max(writer.tier_order()):
            records = records.copy()
            records[0] ^= 2                 # a loss becomes a win in as many plies, or back
            summary = WIN_LOSS.summarize(records)
        return real(tier, records, summary, **kw)

    writer.save_tier = save_tier
    game.solver.solve(game, writer, threads=1)
    writer.finish({})
    writer.close()
    checked = run("check", "--table", path, "--full")
    assert checked.exit_code == 1 and "differ from their children" in checked.output, checked.output


def test_a_board_of_more_cells_than_listed_is_refused():
    said = run("solve", "overflow", "--size", "6x6", "--max-discs", 6, "--dry-run")
    assert said.exit_code == 2 and "at most 25 cells" in said.output


# --- the endgame table at the leaves of the proof search -----------------------------------------

@pytest.fixture(scope="module")
def leaves_3x4(tmp_path_factory):
    """An endgame table of 3x4 (at most 7 discs) in a directory of its own, a proof of the 3x4
    start written with it, and the same search's node count without it."""
    directory = tmp_path_factory.mktemp("leaves")
    said = run("solve", "overflow", "--size", "3x4", "--max-discs", 7, "--table",
               directory / "overflow-size3x4-max7.sqlite", "--json")
    assert said.exit_code == 0, said.output
    proof = directory / "p.proof"
    proved = run("prove", "overflow", "--size", "3x4", "--tables", directory, "--proof", proof,
                 "--threads", 1, "--memory", "192M", "--json")
    assert proved.exit_code == 0, proved.output
    plain = run("prove", "overflow", "--size", "3x4", "--tables", tmp_path_factory.mktemp("none"),
                "--threads", 1, "--memory", "192M", "--json")
    assert plain.exit_code == 2 and "no endgame table" in plain.output
    alone = run("prove", "overflow", "--size", "3x4", "--threads", 1, "--memory", "192M", "--json")
    return directory, proof, json.loads(proved.stdout), json.loads(alone.stdout)


@pytest.mark.slow
def test_a_proof_with_table_leaves_proves_what_the_search_alone_proves(leaves_3x4):
    directory, proof, proved, alone = leaves_3x4
    assert proved["value"] == alone["value"] == "win"
    assert proved["tables"]["file"] == "overflow-size3x4-max7.sqlite"
    assert proved["tables"]["max_discs"] == 7
    assert proved["nodes"] < alone["nodes"]
    checked = run("check", "--proof", proof, "--tables", directory, "--json")
    assert checked.exit_code == 0, checked.output
    report = json.loads(checked.stdout)
    assert report["failures"] == [] and report["tables"] == proved["tables"]


def test_a_proof_finds_its_table_beside_it(leaves_3x4):
    directory, proof, _, _ = leaves_3x4
    assert run("check", "--proof", proof).exit_code == 0


def test_a_swapped_table_is_refused(leaves_3x4, tmp_path):
    """Another table under the cited file name (fewer discs: other records) is not the one the
    proof cites."""
    _, proof, _, _ = leaves_3x4
    other = run("solve", "overflow", "--size", "3x4", "--max-discs", 6, "--table",
                tmp_path / "overflow-size3x4-max7.sqlite")
    assert other.exit_code == 0, other.output
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / "p.proof").write_bytes(proof.read_bytes())
    checked = run("check", "--proof", moved / "p.proof", "--tables", tmp_path)
    assert checked.exit_code == 1 and "is not the endgame table the proof cites" in checked.output
    missing = run("check", "--proof", moved / "p.proof", "--tables", moved)
    assert missing.exit_code == 1 and "is not in" in missing.output
    nowhere = run("check", "--proof", moved / "p.proof", "--tables", tmp_path / "no such directory")
    assert nowhere.exit_code == 2 and "is not a directory" in nowhere.output     # a usage error


def test_a_tampered_leaf_is_refused(leaves_3x4, tmp_path):
    """The proof's move at one of the winner's positions changed to a move onto a position the
    table gives the loser as won: the check follows the table there and refuses the proof."""
    from sowsolve.cli.commands import proof_leaves
    from sowsolve.solver import proof as proofs
    directory, proof, _, _ = leaves_3x4
    found = proofs.read_proof(str(proof))
    leaves = proof_leaves(str(proof), str(directory))(found)
    board = found.game.kernel()
    chosen = found.chosen.copy()
    for at, key in enumerate(found.keys):
        bad = [c for c in board.children(int(key)) if c != int(chosen[at])
               and (leaves.kernel.leaf(c) or 0) & 3 == 3]      # a win for its side to move
        if bad:
            chosen[at] = bad[0]
            break
    else:
        pytest.fail("no position of the winner's has a move onto a table position it loses")
    forged = tmp_path / "forged.proof"
    proofs.write_proof(str(forged), found.game, found.position, found.value,
                       proofs.Choices(found.keys, chosen), found.tables)
    checked = run("check", "--proof", forged, "--tables", directory)
    assert checked.exit_code == 1 and "does not win" in checked.output, checked.output


def test_a_position_finds_the_table_that_holds_it(tmp_path, monkeypatch):
    """With a board's whole table and its endgame table in the tables directory, a position
    is answered by the whole table; with the endgame table alone, one with more discs is beyond
    it (exit 1)."""
    monkeypatch.setenv("SOWSOLVE_TABLES", str(tmp_path))
    assert run("solve", "overflow", "--size", "3x3", "--max-discs", 4).exit_code == 0
    beyond = run("query", "111/111/000 L")
    assert beyond.exit_code == 1 and "beyond this table" in beyond.output, beyond.output
    held = run("query", "100/110/100 L", "--json")
    assert held.exit_code == 0 and json.loads(held.stdout)["source"] == "table"
    assert run("solve", "overflow", "--size", "3x3").exit_code == 0
    for text in ("111/111/000 L", "100/110/100 L"):
        said = run("query", text, "--json")
        assert said.exit_code == 0, said.output


def test_the_readme_figures_of_the_4x5_endgame_table_are_the_measured_ones():
    root = pathlib.Path(__file__).resolve().parent.parent
    runs = json.loads((root / "bench/results/overflow-endgame-4x5.json").read_text())["runs"]
    found = re.search(r"--max-discs (\d+)`\): ([\d,]+)\s+positions of at most (\d+) discs in (\d+) s "
                      r"on two threads \(([\d.]+) M positions/s, on (?:a machine shared\s+with other "
                      r"work|an idle\s+machine)\), ([\d.]+) bytes per position", documentation())
    assert found, "the README gives the 4x5 endgame table"
    run_ = next(r for r in runs if r["max_discs"] == int(found[1]))
    assert int(found[3]) == run_["max_discs"]
    assert int(found[2].replace(",", "")) == run_["positions"]
    assert int(found[4]) == round(run_["solve_seconds"])
    assert float(found[5]) == round(run_["positions_per_second"] / 1e6, 2)
    assert float(found[6]) == round(run_["table_bytes_per_position"], 2)


def test_the_readme_figure_of_the_4x5_proof_with_leaves_is_the_measured_one():
    root = pathlib.Path(__file__).resolve().parent.parent
    text = " ".join(documentation().split())
    unproved = json.loads((root / "bench/results/prove-4x5-d14.json").read_text())
    found = re.search(rf"table of {unproved['tables']['max_discs']} discs at its leaves, (\d+) minutes "
                      r"\(([\d,]+) positions expanded\) did not prove 4x5", text)
    assert found, "the documentation gives the unproved 4x5 run"
    assert not unproved["proved"]
    assert int(found[1]) == round(unproved["wall_seconds"] / 60)
    assert int(found[2].replace(",", "")) == unproved["nodes"]
    proved = json.loads((root / "bench/results/prove-4x5-d15.json").read_text())
    assert proved["proved"] and proved["tables"]["max_discs"] == 15
    move = proved["winning_moves_listed"][0]
    found = re.search(r"proved the start a (win|loss) \((\S+)\) after ([\d,]+) positions expanded\*\*, about "
                      r"(\d+) minutes of search .*? drew a proof of ([\d,]+) positions of the winner's", text)
    assert found, "the documentation gives the proof of 4x5"
    assert (found[1], found[2]) == (proved["value"], move)
    assert int(found[3].replace(",", "")) == proved["nodes_at_proof"]
    assert int(found[4]) == round(proved["search_seconds_estimate"] / 60)
    assert int(found[5].replace(",", "")) == proved["proof"]["winner_positions"]
    one_run = json.loads((root / "bench/results/prove-4x5-d16.json").read_text())
    said = one_run["prove"]["said"]
    row = re.search(r"\| Overflow, 4x5 \(and 5x4\) \| proved in (\d+) minutes on two cores within ([\d.]+) GiB: "
                    r"([\d,]+) positions expanded, the endgame table of (\d+) discs at the leaves \| "
                    r"\*\*(win|loss)\*\* \((\S+)\) \|", documentation())
    assert row, "the README's results give 4x5"
    assert int(row[1]) == round(one_run["prove"]["wall_seconds"] / 60)
    assert float(row[2]) == round(one_run["prove"]["peak_rss_kb"] / 2 ** 20, 1)
    assert int(row[3].replace(",", "")) == said["nodes"]
    assert (int(row[4]), row[5], row[6]) == (said["tables"]["max_discs"], said["value"], said["winning_moves"][0])
    check = proved["check"]
    found = re.search(r"verifies it: ([\d,]+) positions replayed with the compiled move generator, ([\d,]+) "
                      r"of the winner's again with the reference rules, no failure \((\d+) minutes, ([\d.]+) GB",
                      text)
    assert found, "the documentation gives the check of the 4x5 proof"
    assert check["failures"] == 0 and int(found[1].replace(",", "")) == check["positions_verified"]
    assert int(found[2].replace(",", "")) == check["reference_positions"]
    assert int(found[3]) == round(check["wall_seconds"] / 60)
    assert float(found[4]) == round(check["peak_rss_kb"] / 1e6, 1)


def test_the_leaves_hold_every_position_of_the_table_with_its_winner(leaves_3x4):
    """The leaves keep a bit a position: for every position of every tier of the table, the
    leaf read by its packed position is a win exactly where the stored record is one."""
    from sowsolve.tables.leaves import leaves_of
    directory, _, _, _ = leaves_3x4
    path = directory / "overflow-size3x4-max7.sqlite"
    game = make_game("overflow", size="3x4")
    leaves = leaves_of(game, str(path))
    board = game.kernel()
    checked = 0
    with open_table(path) as table:
        tiers = table.game.kernel()
        for tier in table.tiers:
            records = table.tier_records(tier)
            heights, sides = tiers.unrank_range(tier, 0, len(records))
            for at in range(len(records)):
                leaf = leaves.kernel.leaf(board.key(list(heights[at]), int(sides[at])))
                assert leaf is not None and leaf & 3 == records[at] & 3, (tier, at)
                checked += 1
    assert checked == leaves.kernel.positions == sum(tiers.tier_size(t) for t in range(8 * 13))
    assert leaves.kernel.nbytes < checked // 8 + 8 * 13


def test_a_solved_tier_of_neither_wins_nor_losses_cannot_end_proofs():
    """A record of a draw or of no value in a tier the table holds solved refuses the table
    (one sentence naming the tier), before anything of it is used."""
    import numpy as np
    from sowsolve.solver import proof as proofs
    from sowsolve.solver.errors import BadParameters
    game = make_game("overflow", size="3x3")
    endgame = make_game("overflow", endgame=True, size="3x3")
    tiers = endgame.kernel()
    tier = next(t for t in range(5 * 10) if tiers.tier_size(t) > 3)
    for bad in (0, 2):                            # unsolved, a draw
        records = np.full(tiers.tier_size(tier), 3, dtype=np.uint16)
        records[2] = bad
        with pytest.raises(BadParameters, match=f"position 2 of tier {tier} is neither a win nor a loss"):
            proofs.table_leaves(game, endgame, [(tier, records, True)], 4, "t.sqlite")
        # an unsolved tier is digested (the citation covers it) but never a leaf
        leaves = proofs.table_leaves(game, endgame, [(tier, records, False)], 4, "t.sqlite")
        assert leaves.kernel.positions == 0
    short = np.full(tiers.tier_size(tier) - 1, 3, dtype=np.uint16)
    with pytest.raises(BadParameters, match="positions, not"):
        proofs.table_leaves(game, endgame, [(tier, short, True)], 4, "t.sqlite")


def test_the_docs_table_of_4x5_endgame_tables_is_the_measured_one():
    """Every row of docs/overflow-endgame.md's speed and size table against the bench file."""
    root = pathlib.Path(__file__).resolve().parent.parent
    runs = {r["max_discs"]: r for r in
            json.loads((root / "bench/results/overflow-endgame-4x5.json").read_text())["runs"]}
    text = (root / "docs/overflow-endgame.md").read_text()
    rows = re.findall(r"^\| (\d+) \| ([\d,]+) \| ([\d,.]+) s \| ([\d.]+) M \| [\d.]+ [MG]B \| "
                      r"[\d.]+ MB \| ([\d.]+) \|$", text, re.M)
    assert len(rows) == len(runs)
    for discs, positions, seconds, rate, per_position in rows:
        run_ = runs[int(discs)]
        assert int(positions.replace(",", "")) == run_["positions"]
        assert float(seconds.replace(",", "")) == round(run_["solve_seconds"], 1 if "." in seconds else 0)
        assert float(rate) == round(run_["positions_per_second"] / 1e6, 2)
        assert float(per_position) == round(run_["table_bytes_per_position"], 2)


def test_the_5x5_projection_is_the_bench_s_from_the_measured_proofs(tmp_path):
    """bench/project_prove.py recomputes the committed projection from the two measured proofs,
    and the documentation quotes it."""
    import subprocess
    import sys
    root = pathlib.Path(__file__).resolve().parent.parent
    out = tmp_path / "projection.json"
    subprocess.run([sys.executable, str(root / "bench/project_prove.py"), "--out", str(out)],
                   check=True, capture_output=True)
    fresh = json.loads(out.read_text())
    kept = json.loads((root / "bench/results/prove-projection.json").read_text())
    assert fresh == kept
    text = " ".join(documentation().split())
    found = re.search(r"that is some ([\d.]+) x 10\^(\d+) expansions: (\d+) days of this machine, or a day "
                      r"of (\d+) such machines with (\d+) GB each for their share of a (\d+) TB table", text)
    assert found, "the documentation gives the 5x5 projection"
    assert float(found[1]) * 10 ** int(found[2]) == kept["5x5_nodes"]
    assert (int(found[3]), int(found[4]), int(found[5]), int(found[6])) == (
        kept["one_machine_days"], kept["cluster_machines_of_two_cores"],
        kept["cluster_table_gigabytes_per_machine"], round(kept["table_terabytes"]))


def test_the_hints_of_children_the_table_holds_are_the_table_s(leaves_3x4):
    """The search reads a child's leaf from the heights its move left, before the child is
    packed; the child's packed position looked up on its own (`leaf`: unpacked, ranked) says the
    same: won or lost for its side to move where the table holds it, else the game's own hint."""
    from sowsolve.cext import proofsearch
    from sowsolve.tables.leaves import leaves_of
    directory, _, _, _ = leaves_3x4
    game = make_game("overflow", size="3x4")
    leaves = leaves_of(game, str(directory / "overflow-size3x4-max7.sqlite"))
    root = game.key(game.initial())[1]
    plain = proofsearch.Prover(game.kernel().capsule(), root, 1024)
    with_table = proofsearch.Prover(leaves.kernel.capsule(), root, 1024)
    infinity = proofsearch.INFINITY
    rng = random.Random(5)
    held = other = 0
    for _ in range(400):
        position = random_walk(game, rng, rng.randrange(0, 14))
        key = game.key(position)[1]
        if game.outcome(position) is not None or leaves.kernel.leaf(key) is not None:
            continue
        hinted, bare = with_table.child_hints(key), plain.child_hints(key)
        assert [c for c, _, _ in hinted] == [c for c, _, _ in bare]
        for (child, phi, delta), (_, bare_phi, bare_delta) in zip(hinted, bare):
            record = leaves.kernel.leaf(child)
            if record is None:
                other += 1
                assert (phi, delta) == (bare_phi, bare_delta)
            else:
                held += 1
                assert (phi, delta) == ((0, infinity) if record & 3 == 3 else (infinity, 0))
    assert held > 50 and other > 200


def test_the_docs_figures_of_drawing_the_4x5_proof_again_are_the_measured_ones():
    """The drawing of the 4x5 proof with the walk's marks in the search's table: its peak, the
    memory once the table is freed, the expansions and the check, as the bench JSON holds them."""
    root = pathlib.Path(__file__).resolve().parent.parent
    proved = json.loads((root / "bench/results/prove-4x5-d15.json").read_text())
    again = proved["drawn_again"]
    text = " ".join(documentation().split())
    found = re.search(r"the whole process took ([\d.]+) GiB at its peak \(([\d,]+) kB: the restored table and "
                      r"the walk\), ([\d.]+) GB once the table was freed, and (\d+) minutes .*? the proof "
                      r"\(([\d,]+) positions of the winner's: .*? checks: ([\d,]+) positions replayed, no "
                      r"failure", text)
    assert found, "the documentation gives the drawing of the 4x5 proof with marks"
    assert float(found[1]) == round(again["peak_rss_kb"] / 2 ** 20, 2) < 16
    assert int(found[2].replace(",", "")) == again["peak_rss_kb"]
    assert float(found[3]) == round(again["rss_kb_first_seen_after_the_table_freed"] / 1e6, 1)
    assert int(found[4]) == round(again["wall_seconds"] / 60)
    assert int(found[5].replace(",", "")) == again["proof"]["winner_positions"] == again["check"]["winner_positions"]
    assert int(found[6].replace(",", "")) == again["check"]["positions_verified"]
    assert again["check"]["failures"] == 0
    found = re.search(r"of the ([\d,]+) expansions between the proof and the end of the walk, at least "
                      r"([\d,]+) are the walk's own", text)
    assert found, "the documentation splits the drawing's expansions"
    assert int(found[1].replace(",", "")) == again["expansions_while_drawing"] == \
        again["nodes_after"] - proved["nodes_at_proof"]
    assert int(found[2].replace(",", "")) == again["check"]["positions_verified"] <= again["expansions_while_drawing"]


def test_a_forged_table_with_its_checksums_made_anew_carries_no_proof(tmp_path):
    """A table whose wins and losses are swapped, every block encoded anew (so that every
    checksum holds), proves the 3x3 start a win (it is a loss, RULES.md); the proof cites the
    forged table's records by their checksum, so only the table's own check can catch it, and
    `check --proof` runs it: refused, naming the position the forgery breaks."""
    import sqlite3
    import numpy as np
    from sowsolve.tables.format import block_key, encode_block
    from sowsolve.solver.values import LOSS, WIN, _OUTCOME_MASK
    directory = tmp_path / "forged"
    table = directory / "overflow-size3x3-max7.sqlite"
    assert run("solve", "overflow", "--size", "3x3", "--max-discs", 7, "--table", table).exit_code == 0
    with open_table(table) as t:
        ident, palette = t.ident, t.palette
        blocks = {(tier, b): t._load_block(tier, b, full=False).copy()
                  for tier in t.solved_tiers for b in range(t.blocks_of(tier))}
    with sqlite3.connect(table) as db:
        for (tier, b), records in blocks.items():
            outcome = records & _OUTCOME_MASK
            swapped = (records & ~np.uint16(_OUTCOME_MASK)) | np.where(
                outcome == WIN, LOSS, np.where(outcome == LOSS, WIN, outcome)).astype(np.uint16)
            db.execute("UPDATE sowsolve SET value=? WHERE key=?",
                       (sqlite3.Binary(encode_block(tier, b, swapped.astype(np.uint16), ident, palette=palette)),
                        block_key(tier, b)))
    proof = directory / "p.proof"
    proved = run("prove", "overflow", "--size", "3x3", "--tables", directory, "--memory", "192M",
                 "--threads", 1, "--proof", proof, "--json")
    assert proved.exit_code == 0 and json.loads(proved.stdout)["value"] == "win"    # the forgery's
    checked = run("check", "--proof", proof, "--tables", directory)
    assert checked.exit_code == 1
    assert "fails its own check" in checked.output and "its children give" in checked.output


def test_a_checkpoint_of_a_search_with_leaves_names_its_table_when_resumed_without_it(leaves_3x4, tmp_path):
    """A search saved with the endgame table at its leaves does not restore into a search
    without it (or with another): the refusal names the table, not another board."""
    directory, _, _, _ = leaves_3x4
    checkpoint = tmp_path / "c.ckpt"
    stopped = run("prove", "overflow", "--size", "3x4", "--tables", directory, "--memory", "192M",
                  "--threads", 1, "--max-nodes", 500, "--checkpoint", checkpoint)
    assert stopped.exit_code == 1 and checkpoint.exists()
    empty = tmp_path / "none"
    empty.mkdir()
    again = CliRunner().invoke(app, ["prove", "overflow", "--size", "3x4", "--memory", "192M",
                                     "--checkpoint", str(checkpoint)], env={"SOWSOLVE_TABLES": str(empty)})
    assert again.exit_code != 0
    assert "with the endgame table 'overflow-size3x4-max7.sqlite' at its leaves; give it with --tables" \
        in again.output, again.output


def test_the_4x5_proof_in_one_run_is_within_its_targets_as_the_docs_say():
    """The run end to end with the table of 16 discs (bench_prove_run.py): proved, under two
    hours and 16 GiB of the process's own high-water mark, its proof checked with no failure, and
    the documentation's figures are the JSON's."""
    root = pathlib.Path(__file__).resolve().parent.parent
    run_ = json.loads((root / "bench/results/prove-4x5-d16.json").read_text())
    prove, check = run_["prove"], run_["check"]
    said, checked = prove["said"], check["said"]
    assert prove["exit"] == 0 and said["proved"] and said["value"] == "win"
    assert said["tables"] == checked["tables"] and said["tables"]["max_discs"] == run_["tables"]["max_discs"] == 16
    assert prove["wall_seconds"] <= 2 * 3600 and prove["peak_rss_kb"] * 1024 <= 16 * 2 ** 30
    assert max(kb for _, kb in prove["rss_kb"]) <= prove["peak_rss_kb"]
    assert check["exit"] == 0 and checked["failures"] == [] and checked["value"] == said["value"]
    assert checked["winner_positions"] == said["proof"]["winner_positions"]
    text = " ".join(documentation().split())
    found = re.search(r"took \*\*(\d+) minutes and ([\d.]+) GiB at its peak\*\* \(([\d,]+) kB\): (\d+) minutes of "
                      r"search to the proof \(([\d,]+) positions expanded, ([\d,]+) a second, checkpoints included; "
                      r"([\d,]+) entries in use at the proof\), (\d+) minutes to draw the proof \(([\d,]+) positions "
                      r"walked, ([\d,]+) searched again\) and (\d+) seconds to write it \(([\d,]+) positions of the "
                      r"winner's", text)
    assert found, "the documentation gives the run end to end"
    number = lambda i: int(found[i].replace(",", ""))
    assert number(1) == round(prove["wall_seconds"] / 60) and float(found[2]) == prove["peak_rss_gib"]
    assert number(3) == prove["peak_rss_kb"] and number(4) == round(said["seconds"] / 60)
    assert number(5) == said["nodes"] and number(6) == round(said["nodes"] / said["seconds"], -3)
    assert number(7) == run_["entries_in_table_at_proof"] <= said["table_entries"]
    assert number(8) == round(said["proof"]["drawn_seconds"] / 60)
    assert (number(9), number(10)) == (said["proof"]["positions_walked"], said["proof"]["positions_searched_again"])
    assert number(11) == round(said["proof"]["written_seconds"]) and number(12) == said["proof"]["winner_positions"]
    found = re.search(r"verified it: ([\d,]+) positions replayed, ([\d,]+) with the reference rules, no failure "
                      r"\((\d+) minutes, ([\d.]+) GiB\)", text)
    assert found, "the documentation gives the check of the run end to end"
    assert int(found[1].replace(",", "")) == checked["positions_verified"]
    assert int(found[2].replace(",", "")) == checked["reference_positions"]
    assert (int(found[3]), float(found[4])) == (round(check["wall_seconds"] / 60), check["peak_rss_gib"])


def test_the_growth_and_the_5x5_run_are_the_bench_s():
    """docs/overflow-endgame.md's growth table, projection and 5x5 run are the bench's JSON:
    every board of prove-growth-lookahead.json a row, the projection recomputed by
    bench/project_prove.py (its from_growth), the 5x5 run's root numbers rows of its timeline."""
    root = pathlib.Path(__file__).resolve().parent.parent
    results = root / "bench/results"
    growth = json.loads((results / "prove-growth-lookahead.json").read_text())
    import sys
    sys.path.insert(0, str(root / "bench"))
    from project_prove import from_growth
    projection = json.loads((results / "prove-projection.json").read_text())["from_growth"]
    assert projection == json.loads(json.dumps(from_growth()))       # recomputed, not stale
    run = json.loads((results / "prove-5x5-run.json").read_text())
    text = (root / "docs/overflow-endgame.md").read_text()
    section = text[text.index("## The growth with today's techniques"):text.index("## What remains")]
    rows = re.findall(r"^\| (\d+x\d+) \| (\d+) \| (win|loss) \| ([\d,]+) \| ([\d.]+) \|$", section, re.M)
    assert sorted(rows) == sorted((r["size"], str(r["cells"]), r["value"], f"{r['nodes']:,}",
                                   f"{r['seconds']:.1f}") for r in growth["runs"])
    flat = " ".join(section.split())
    assert f"grows {projection['growth_per_cell']} times a cell" in flat
    found = re.search(r"some ([\d.]+) x 10\^(\d+) expansions, (\d+) days of one thread", flat)
    assert found and float(found[1]) * 10 ** int(found[2]) == pytest.approx(projection["5x5_nodes"], rel=0.05)
    assert int(found[3]) == projection["one_thread_days"]
    assert {r["size"] for r in growth["runs"] if r["cells"] >= 12} == set(projection["boards"])
    last = run["timeline"][-1]
    assert f"5x5 searched for {round(last['search_seconds'] / 60)} minutes" in flat
    assert f"{last['nodes']:,} positions expanded" in flat
    assert f"a table of {run['runs'][0]['entries']:,} entries" in flat
    timeline = {(f"{e['search_seconds'] / 60:.1f}", f"{e['nodes']:,}", f"{e['entries_used']:,}",
                 f"{e['root'][0]:,}", f"{e['root'][1]:,}") for e in run["timeline"]}
    numbers = re.findall(r"^\| ([\d.]+) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \|$", section, re.M)
    assert len(numbers) >= 4 and set(numbers) <= timeline
    assert numbers[-1][1] == f"{last['nodes']:,}"
    # "both numbers grew ... no first move was proved or disproved", over the whole timeline
    first = run["timeline"][0]["root"]
    assert all(isinstance(n, int) for n in first + last["root"])
    assert last["root"][0] > first[0] and last["root"][1] > first[1]
    assert not any(n in (0, "inf") for row in run["timeline"] for numbers_ in row["first_moves"].values()
                   for n in numbers_)


def test_the_cluster_comparison_is_the_bench_s():
    root = pathlib.Path(__file__).resolve().parent.parent
    run = json.loads((root / "bench/results/prove-cluster-4x4.json").read_text())
    [board] = run["boards"]
    text = " ".join((root / "docs/overflow-endgame.md").read_text().split())
    medians = board["median_wall_seconds"]
    assert (f"{medians['cluster']} s on 2 local workers against {medians['in_process']} s in process"
            in text)
    assert f"**{board['cluster_over_in_process']} times**" in text
    assert board["cluster_over_in_process"] == round(medians["cluster"] / medians["in_process"], 2)
    assert all(r["value"] == "win" for r in board["cluster"] + board["in_process"])
    [before] = json.loads((root / "bench/results/prove-cluster-4x4-before.json").read_text())["boards"]
    was = before["median_wall_seconds"]
    assert (f"Before the changes above it was {was['cluster']} s against {was['in_process']} s, "
            f"{before['cluster_over_in_process']} times" in text)
