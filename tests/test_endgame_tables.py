"""Endgame tables: `solve --max-stones S` solves the positions with at most S stones (discs,
seeds) on the board -- tiers closed under play, since no move adds stones -- and answers
positions with more as beyond the table (exit 1), never with a guess."""
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import solve_to
from sowsolve.cli.app import app
from sowsolve.solver.games import make_game
from sowsolve.tables import open_table
from test_zigzag_solver import brute_force_margins

BOARDS = [("diffusion", {"cols": 4, "stones": 2}, 5), ("diffusion-v2", {"cols": 3, "stones": 2}, 7),
          ("zigzag", {"cols": 2, "stones": 3}, 6), ("zigzag", {"cols": 4, "stones": 1}, 4)]


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def options(parameters):
    return [word for name, value in parameters.items() for word in (f"--{name}", value)]


@pytest.mark.parametrize("name, parameters, limit", BOARDS)
def test_an_endgame_table_holds_the_full_tables_records_of_its_tiers(tmp_path, name, parameters,
                                                                    limit):
    full = tmp_path / "full.sqlite"
    solve_to(full, name, **parameters)
    endgame = tmp_path / "endgame.sqlite"
    solved = run("solve", name, *options(parameters), "--max-stones", limit, "--table", endgame,
                 "--json")
    assert solved.exit_code == 0, solved.output
    game = make_game(name, **parameters)
    kept = [t for t in game.tiers() if game.tier_stones(t) <= limit]
    with open_table(endgame) as part, open_table(full) as whole:
        assert part.tiers == kept and part.meta["max_stones"] == limit
        for tier in kept:
            assert np.array_equal(part.tier_records(tier), whole.tier_records(tier)), tier
        # a position of the next tier up is beyond the table: exit 1, one sentence
        beyond = next(t for t in game.tiers() if game.tier_stones(t) > limit)
        text = game.format_position(whole.stored_positions(beyond, 0, 1)[0])
    answer = run("query", text, "--table", endgame)
    assert answer.exit_code == 1
    assert "beyond this table" in answer.stderr and len(answer.stderr.strip().splitlines()) == 1
    info = json.loads(run("info", "--table", endgame, "--json").stdout)
    assert info["max_stones"] == limit and info["positions_solved"] == sum(
        game.tier_size(t) for t in kept)
    checked = run("check", "--table", endgame, "--full", "--json")
    assert checked.exit_code == 0, checked.output


def test_an_endgame_table_is_not_taken_for_a_whole_one(tmp_path):
    path = tmp_path / "t.sqlite"
    assert run("solve", "diffusion", "--cols", 4, "--stones", 2, "--max-stones", 4,
               "--table", path).exit_code == 0
    for other in ([], ["--max-stones", 5]):
        refused = run("solve", "diffusion", "--cols", 4, "--stones", 2, *other, "--table", path)
        assert refused.exit_code == 2 and "--force" in refused.stderr, refused.output
    again = run("solve", "diffusion", "--cols", 4, "--stones", 2, "--max-stones", 4,
                "--table", path, "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["solved_now"] is False


def test_a_search_makes_no_endgame_table(tmp_path):
    refused = run("solve", "overflow", "--size", "3x3", "--max-stones", 4, "--table",
                  tmp_path / "o.sqlite")
    assert refused.exit_code == 2 and "endgame" in refused.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_standard_zigzag_board_up_to_4_seeds_equals_a_brute_force(tmp_path):
    """Zig Zag's standard board (2x6, 5 seeds per pit) with at most 4 seeds on the board,
    every position, against the brute force written from the rule text."""
    path = tmp_path / "z.sqlite"
    solved = run("solve", "zigzag", "--max-stones", 4, "--table", path)
    assert solved.exit_code == 0, solved.output
    game = make_game("zigzag")
    expected = brute_force_margins(game, max_seeds=4)
    # with at most 4 of the 60 seeds on the board, someone has captured; the table holds the
    # positions where P captured last, those where p did are the same turned half a turn
    possible = {p: v for p, v in expected.items() if p.last is not None}
    with open_table(path) as table:
        assert len([p for p in possible if p.last == "P"]) == sum(table.tier_size(t) for t in table.tiers)
        for position, p_margin in possible.items():
            margin = table.probe(position).margin
            assert margin == (p_margin if position.side == "P" else -p_margin), \
                game.format_position(position)


def test_the_readme_endgame_figures_are_the_measured_ones():
    """The README's Zig Zag rate figures are those of bench/results/zigzag-endgame.json."""
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parent.parent
    run_16 = next(r for r in json.loads((root / "bench/results/zigzag-endgame.json").read_text())["runs"]
                  if r["max_stones"] == 16)
    text = " ".join((root / "README.md").read_text().split())
    found = re.search(r"at most 16 seeds: ([\d,]+) positions in (\d+) s, peak ([\d.]+) GB, "
                      r"table (\d+) MB", text)
    assert found, "the README states the endgame measurement"
    assert int(found[1].replace(",", "")) == run_16["positions"]
    assert int(found[2]) == round(run_16["solve_seconds"])
    assert float(found[3]) == round(run_16["peak_rss_kb"] * 1024 / 1e9, 1)
    assert int(found[4]) == round(run_16["table_bytes"] / 1e6)
    rates = make_game("zigzag").rates        # the estimate uses this measurement, rounded
    assert abs(rates.positions_per_second - run_16["positions"] / run_16["solve_seconds"]) < 0.1e6
