"""The board a position is on: every command that reads a position (query, show, analyse)
takes the board options; without them a position that fits the standard board is on the
standard board, whatever the stones left; a table of a board that differs only in the stones
of the start answers the positions it holds and the answer says so; and the answer is the
same whatever else the tables directory holds."""
import json
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import solve_to
from sowsolve.cli.app import app
from sowsolve.solver.games import make_game
from sowsolve.tables.store import open_table

runner = CliRunner()

# a standard Zig Zag game after a capture: 48 seeds on the board, fewer than the 60 of the start
# (the text, refused before as a position of the 4-seed board)
ZIGZAG_AFTER_CAPTURE = "1,0,18,3,2,5/1,2,2,0,9,5 p - p"
# a 2x4 Diffusion position of 7 stones: not the standard board's shape, so on the smallest 2x4
# board whose start holds it (1 stone a pit), held by the tables of 1 and 2 stones a pit
DIFFUSION_2X4 = "2011/0102 A"


def run(*args, env=None):
    return runner.invoke(app, [str(a) for a in args], env=env)


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """Tables of boards that differ only in the stones of the start: Diffusion 2x4, Zig Zag 2x2."""
    folder = tmp_path_factory.mktemp("boards")
    paths = {}
    for name, cols, stones in (("diffusion", 4, 1), ("diffusion", 4, 2), ("zigzag", 2, 2),
                               ("zigzag", 2, 3)):
        paths[name, stones] = folder / f"{name}-{stones}.sqlite"
        solve_to(paths[name, stones], name, cols=cols, stones=stones)
    return paths


def directory_with(tmp_path, tables, *keys):
    folder = tmp_path / "-".join(f"{n}{k}" for n, k in keys) if keys else tmp_path / "empty"
    folder.mkdir()
    for key in keys:
        shutil.copy(tables[key], folder / tables[key].name)
    return str(folder)


def records(table, tier):
    data = table.tier_data(tier)
    return np.asarray(data.records if hasattr(data, "records") else data)


@pytest.mark.parametrize("name", ["diffusion", "zigzag"])
def test_tables_of_fewer_stones_a_pit_store_each_position_as_the_larger_board(tables, name):
    """What lets a smaller start's table answer: tier for tier, the same size and the same
    record at every index (the stones of the start only say where games begin)."""
    small, large = sorted(k for n, k in tables if n == name)
    with open_table(tables[name, small]) as a, open_table(tables[name, large]) as b:
        assert b.game.shares_tables_with(a.game) and a.game.shares_tables_with(b.game)
        shared = set(a.solved_tiers) & set(b.solved_tiers)
        assert len(shared) >= 8
        for tier in sorted(shared):
            assert a.tier_size(tier) == b.tier_size(tier)
            assert np.array_equal(records(a, tier), records(b, tier)), tier
    # another number of pits, or the other variant, holds other positions
    assert not make_game(name, cols=2, stones=2).shares_tables_with(make_game(name, cols=6, stones=2))
    assert not make_game("diffusion").shares_tables_with(make_game("diffusion-v2"))


def test_a_standard_game_stays_on_the_standard_board(tmp_path):
    """The issue's Zig Zag text after a capture (48 seeds) is a position of the standard
    board; a text with no capture yet is checked against the standard start's 60 seeds."""
    env = {"SOWSOLVE_TABLES": str(tmp_path)}
    shown = run("show", ZIGZAG_AFTER_CAPTURE, "--game", "zigzag", "--json", env=env)
    assert shown.exit_code == 0, shown.output
    picture = json.loads(shown.stdout)
    assert picture["description"] == "Zig Zag, 2x6, 5 seeds per pit"
    assert picture["board_reason"] == "the standard board"
    analysed = run("analyse", ZIGZAG_AFTER_CAPTURE, "--nodes", 500, "--threads", 1, env=env)
    assert analysed.exit_code == 0, analysed.output
    assert analysed.stdout.splitlines()[0] == ("game       Zig Zag, 2x6, 5 seeds per pit "
                                               "(the standard board)")
    missing = run("query", ZIGZAG_AFTER_CAPTURE, env=env)
    assert missing.exit_code != 0 and "Traceback" not in missing.output
    assert "on Zig Zag, 2x6, 5 seeds per pit (the standard board)" in missing.stderr
    # 25 stones of a standard Diffusion game: the standard board, not 2x6 with 3 a pit
    diffusion = json.loads(run("analyse", "530302/201442 A", "--nodes", 500, "--threads", 1,
                               "--json", env=env).stdout)
    assert diffusion["description"] == "Diffusion v1, 2x6, 4 stones per pit"
    # no capture yet: all the start's seeds are on the board, and 12 is no standard start's
    refused = run("show", "1,0,1,3,2,1/1,2,1,0,1,1 p - -", "--game", "zigzag", env=env)
    assert refused.exit_code == 2
    assert "nobody has captured yet, so the board holds all 60 seeds of the start, not 14" in refused.stderr
    smallest = json.loads(run("show", "111111/111111 p - -", "--game", "zigzag", "--json",
                              env=env).stdout)
    assert smallest["description"] == "Zig Zag, 2x6, 1 seed per pit"
    assert smallest["board_reason"].startswith("the smallest board that holds it")


@pytest.mark.parametrize("command", ["query", "show", "analyse"])
def test_the_board_options_choose_the_board(tables, tmp_path, command):
    folder = directory_with(tmp_path, tables, ("diffusion", 1), ("diffusion", 2))
    extra = ["--nodes", 200, "--threads", 1] if command == "analyse" else []
    done = run(command, DIFFUSION_2X4, "--cols", 4, "--stones", 2, "--json", *extra,
               env={"SOWSOLVE_TABLES": folder})
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert answer["description"] == "Diffusion v1, 2x4, 2 stones per pit"
    assert answer["board_reason"].startswith("the board options")
    assert answer["table"].endswith("diffusion-2.sqlite") and "table_description" not in answer
    # a board option of another game, or a board that cannot hold the position: one sentence
    wrong = run(command, DIFFUSION_2X4, "--size", "3x3", *extra, env={"SOWSOLVE_TABLES": folder})
    assert wrong.exit_code == 2 and "--size" in wrong.stderr and "Traceback" not in wrong.output
    small = run(command, "3021/1203 A", "--cols", 4, "--stones", 1, *extra,
                env={"SOWSOLVE_TABLES": folder})
    assert small.exit_code == 2 and "more than the 8 of this board's start" in small.stderr


@pytest.mark.parametrize("command", ["query", "show", "analyse"])
def test_the_same_answer_whatever_else_the_directory_holds(tables, tmp_path, command):
    """A 7-stone 2x4 position: on the 2x4 board of 1 stone a pit, answered by that board's
    table, or where only the table of 2 stones a pit is there (it holds every position of up
    to 16 stones) by that one, which the answer names -- the same values either way."""
    extra = ["--nodes", 200, "--threads", 1] if command == "analyse" else []
    answers = []
    for keys, answering in (((("diffusion", 2),), "diffusion-2.sqlite"),
                            ((("diffusion", 2), ("diffusion", 1)), "diffusion-1.sqlite"),
                            ((("diffusion", 1), ("diffusion", 2), ("zigzag", 2)), "diffusion-1.sqlite")):
        folder = directory_with(tmp_path, tables, *keys)
        done = run(command, DIFFUSION_2X4, "--json", *extra, env={"SOWSOLVE_TABLES": folder})
        assert done.exit_code == 0, done.output
        answer = json.loads(done.stdout)
        assert answer.pop("table").endswith("/" + answering)
        other = answer.pop("table_description", None)
        assert other == ("Diffusion v1, 2x4, 2 stones per pit" if answering == "diffusion-2.sqlite"
                         else None)
        answers.append(answer)
        text = run(command, DIFFUSION_2X4, *extra, env={"SOWSOLVE_TABLES": folder}).stdout
        if command != "show":
            first, second = text.splitlines()[:2]
            assert first == ("game       Diffusion v1, 2x4, 1 stone per pit (the smallest board "
                             "of its shape whose start holds it; --game diffusion-v2 reads it as "
                             "Diffusion v2)")
            assert second.startswith("table      ") and answering in second
            assert ("which holds this position too" in second) == (other is not None)
    for answer in answers:
        assert answer == answers[0]
    assert answers[0]["description"] == "Diffusion v1, 2x4, 1 stone per pit"
    with open_table(tables["diffusion", 2]) as table:    # the value: either table's
        assert (answers[0]["value"], answers[0]["remoteness"]) == tuple(table.probe(DIFFUSION_2X4))
    # where no table of that board holds it, not another board's table: the text's own
    empty = run(command, DIFFUSION_2X4, "--json", *extra,
                env={"SOWSOLVE_TABLES": directory_with(tmp_path, tables)})
    if command == "analyse":
        assert json.loads(empty.stdout)["description"] == "Diffusion v1, 2x4, 1 stone per pit"
    elif command == "show":
        assert empty.exit_code == 0 and json.loads(empty.stdout)["values"] is None
    else:
        assert empty.exit_code != 0 and "Diffusion v1, 2x4, 1 stone per pit" in empty.stderr


def test_the_engine_searches_past_a_table_of_fewer_stones(tables, tmp_path):
    """Diffusion 2x4: a 12-stone position (2 stones a pit) with only the 1-stone table there:
    the table's tiers (up to 8 stones) are the engine's leaves, the position itself beyond it."""
    folder = directory_with(tmp_path, tables, ("diffusion", 1))
    done = run("analyse", "3021/1203 A", "--nodes", 5000, "--threads", 1, "--json",
               env={"SOWSOLVE_TABLES": folder})
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert answer["description"] == "Diffusion v1, 2x4, 2 stones per pit"
    assert answer["source"] == "engine" and answer["search"]["leaf_tiers"] == 8


def test_the_engine_reads_a_smaller_starts_table_at_its_leaves(tables, tmp_path):
    """Zig Zag 2x2: a 9-seed position after a capture is on the 3-seed board (the smallest
    whose start holds it); with only the 2-seed table there, its tiers (up to 7 seeds after a
    capture) are the leaves of the search, and every move the search values exactly agrees
    with the 3-seed table."""
    folder = directory_with(tmp_path, tables, ("zigzag", 2))
    position = "5,0/1,3 p - p"
    done = run("analyse", position, "--nodes", 20000, "--threads", 1, "--json",
               env={"SOWSOLVE_TABLES": folder})
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert answer["description"] == "Zig Zag, 2x2, 3 seeds per pit"
    assert answer["search"]["leaf_tables"] and answer["search"]["leaf_tiers"] == 8
    with open_table(tables["zigzag", 3]) as table:
        truth = {m["move"]: m["value"] for m in table.query(position)["moves"]}
    exact = [m for m in answer["moves"] if m.get("exact")]
    assert exact, answer["moves"]
    for move in exact:
        assert move["value"] == truth[move["move"]], move
