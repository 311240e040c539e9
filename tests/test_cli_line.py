"""`query --line`: the principal variation, checked move by move against the reference rules
and the table's values."""
import json

import pytest
from typer.testing import CliRunner

from conftest import solve_to
from sowsolve.cli.app import app
from sowsolve.tables.store import open_table

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def tables(tmp_path_factory, table_2x4_k2):
    directory = tmp_path_factory.mktemp("line")
    paths = {"diffusion": table_2x4_k2}
    for key, name, kwargs in [("zigzag2", "zigzag", {"cols": 2, "stones": 2}),
                              ("zigzag1", "zigzag", {"cols": 2, "stones": 1}),
                              ("overflow", "overflow", {"size": "3x3"})]:
        paths[key] = str(directory / f"{key}.sqlite")
        solve_to(paths[key], name, **kwargs)
    return paths


def query_line(table, position, *extra):
    result = run("query", position, "--table", table, "--line", "--json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def replay(table, start, steps):
    """(parent, move, child) of every ply, the child played by the reference rules."""
    game = table.game
    position = game.parse_position(start)
    plies = []
    for step in steps:
        move = game.parse_move(position, step["move"])
        child = game.play(position, move)
        assert game.format_position(child) == step["position"]
        plies.append((position, move, child))
        position = child
    return plies


@pytest.mark.parametrize("key, start", [("diffusion", "2222/2222 A"), ("diffusion", "1201/0110 B"),
                                        ("overflow", "111/111/111 L")])
def test_win_loss_line_plays_to_the_end(tables, key, start):
    q = query_line(tables[key], start)
    steps = q["line"]
    assert q["line_end"] == "final"
    assert len(steps) == q["remoteness"]            # one ply per unit of remoteness
    assert steps[0]["move"] == q["best"][0]
    flip = {"win": "loss", "loss": "win"}
    with open_table(tables[key]) as table:
        value, remoteness = q["value"], q["remoteness"]
        for (parent, move, child), step in zip(replay(table, start, steps), steps):
            assert (step["value"], step["remoteness"]) == (flip[value], remoteness - 1)
            stored = table.probe(child)
            assert (stored.value, stored.remoteness) == (step["value"], step["remoteness"])
            value, remoteness = step["value"], step["remoteness"]
        assert table.game.legal_moves(child) == [] and remoteness == 0


def test_plies_stop_the_line(tables):
    q = query_line(tables["diffusion"], "2222/2222 A", "--plies", 5)
    assert len(q["line"]) == 5 and q["line_end"] == "plies"
    full = query_line(tables["diffusion"], "2222/2222 A")
    assert q["line"] == full["line"][:5]
    text = run("query", "2222/2222 A", "--table", tables["diffusion"], "--plies", 1)
    assert text.exit_code == 0
    assert "after 1 ply:" in text.stdout and "1 plies" not in text.stdout


def test_zigzag_line_margins_follow_the_captures(tables):
    start = "22/22 p - -"
    q = query_line(tables["zigzag2"], start)
    steps = q["line"]
    assert q["line_end"] == "final" and steps
    with open_table(tables["zigzag2"]) as table:
        game = table.game
        margin, remoteness = q["value"], q["remoteness"]
        captured_total = 0
        for (parent, move, child), step in zip(replay(table, start, steps), steps):
            captured = game.captured_by(parent, move)      # the reference rules' capture
            assert step["captured"] == captured
            # what the mover secures = what this move captures - what the opponent secures after
            assert margin == captured - step["value"]
            if remoteness is not None:
                assert step["remoteness"] == remoteness - 1
            assert table.probe(child).margin == step["value"]
            margin, remoteness = step["value"], step["remoteness"]
            captured_total += captured
        assert remoteness == 0
        assert captured_total + sum(child.board) == game.total


def endless_start(path):
    """A position, not final, whose stored value comes from play that never ends."""
    with open_table(path) as table:
        for tier in table.tiers:
            for position in table.stored_positions(tier, 0, table.tier_size(tier)):
                if table.probe(position).remoteness is None and table.game.legal_moves(position):
                    return table.game.format_position(position)
    raise AssertionError("no endless position in the table")


def test_endless_play_stops_at_a_repetition(tables):
    start = endless_start(tables["zigzag1"])
    q = query_line(tables["zigzag1"], start)
    assert q["remoteness"] is None
    assert q["line_end"] == "repetition"
    positions = [start] + [s["position"] for s in q["line"]]
    assert positions[-1] in positions[:-1]           # it stops at the first repeat
    assert len(set(positions)) == len(positions) - 1
    assert all(s["remoteness"] is None for s in q["line"])
    text = run("query", start, "--table", tables["zigzag1"], "--line")
    assert "repeats" in text.stdout


def test_a_final_position_has_an_empty_line(tables):
    q = query_line(tables["diffusion"], "0000/0001 A")
    assert q["line"] == [] and q["line_end"] == "final"


@pytest.mark.parametrize("plies", [0, -1, 10 ** 20])
def test_bad_plies(tables, plies):
    result = run("query", "2222/2222 A", "--table", tables["diffusion"], "--plies", plies)
    assert result.exit_code == 2 and "--plies" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
