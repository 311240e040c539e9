"""The match referee of bench/bench_match.py: a game ended by a table (tablebase adjudication)
or by a position come round again (infinite play), its margin counted from the rules."""
import os
import subprocess
import sys

import pytest

from conftest import solve_to
from sowsolve.cext.engine import Engine
from sowsolve.tables.store import open_table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import bench_match  # noqa: E402


def lowest_code_players(match):
    """Both players play the move of the lowest kernel code: a deterministic game."""
    match.uct_move = lambda state, *rest: (min(c for c, _, _ in match.engine.moves(state)), 0)
    match.engine_move = lambda position, state, moves, *rest: (min(moves, key=lambda t: moves[t][0]), 0)


def replay_opening(game, texts):
    """The position after the opening's moves, what each player captured and who captured last
    (None: nobody), by the rules."""
    position, banked, last_capturer = game.initial(), [0, 0], None
    for ply, text in enumerate(texts):
        move = game.parse_move(position, text)
        gain = game.captured_by(position, move) if hasattr(game, "captured_by") else 0
        banked[ply % 2] += gain
        last_capturer = ply % 2 if gain else last_capturer
        position = game.play(position, move)
    return position, banked, last_capturer


@pytest.fixture(scope="module")
def zigzag_2x4_k2(tmp_path_factory):
    path = tmp_path_factory.mktemp("match") / "zz-2x4-k2.sqlite"
    game = solve_to(path, "zigzag", cols=4, stones=2)
    return game, str(path)


@pytest.mark.parametrize("engine_side", [0, 1])
def test_a_game_a_table_holds_ends_with_the_tables_margin(zigzag_2x4_k2, engine_side):
    game, path = zigzag_2x4_k2
    with open_table(path) as table:
        match = bench_match.Match(game, 0.01, 1, 16 << 20, seeds=16, tables=[table])
        checked = 0
        for seed in range(8):
            record = match.play(seed, engine_side, 100, opening_plies=3)
            position, banked, _ = replay_opening(game, record["opening"])
            if game.outcome(position) is not None or not game.legal_moves(position):
                continue
            value = table.probe(position)
            mover = 3 % 2
            totals = list(banked)
            totals[mover] += value.margin
            margin = totals[engine_side] - totals[1 - engine_side]
            assert record["plies"] == 3 and record["adjudicated"] == {"margin": value.margin}
            assert record["margin"] == margin
            assert record["result"] == ("win" if margin > 0 else "loss" if margin < 0 else "draw")
            checked += 1
        assert checked >= 4


def test_a_win_loss_game_a_table_holds_goes_to_the_side_it_wins_for(tmp_path):
    path = tmp_path / "o-3x3.sqlite"
    game = solve_to(path, "overflow", size="3x3")
    with open_table(str(path)) as table:
        match = bench_match.Match(game, 0.01, 1, 16 << 20, tables=[table])
        results = set()
        for seed in range(6):
            record = match.play(seed, seed % 2, 100, opening_plies=2)
            position, _, _ = replay_opening(game, record["opening"])
            value = table.probe(position)
            assert record["adjudicated"] == {"value": value.value}
            # two plies played: the first player is to move again
            engine_to_move = seed % 2 == 0
            expected = {"win": "win" if engine_to_move else "loss",
                        "loss": "loss" if engine_to_move else "win"}.get(value.value, "draw")
            assert record["result"] == expected
            results.add(record["result"])
        assert results == {"win", "loss"}


def test_play_out_ignores_the_table(zigzag_2x4_k2):
    game, path = zigzag_2x4_k2
    with open_table(path) as table:
        match = bench_match.Match(game, 0.01, 1, 16 << 20, seeds=16, tables=[table],
                                  adjudicate=False)
        lowest_code_players(match)
        record = match.play(3, 0, 300, opening_plies=2)
    assert "adjudicated" not in record and record["plies"] > 2


@pytest.mark.parametrize("cols,stones", [(4, 2), (4, 3)])
def test_a_position_come_round_the_third_time_ends_the_game_as_infinite_play(cols, stones):
    from sowsolve.solver.games import make_game
    game = make_game("zigzag", cols=cols, stones=stones)
    seeds = 2 * cols * stones
    match = bench_match.Match(game, 0.01, 1, 16 << 20, seeds=seeds, repetition=3)
    lowest_code_players(match)
    engine = Engine(game.play_kernel(), list(game.evaluation.weights), 1 << 20)
    repeated = 0
    for seed in range(6):
        engine_side = seed % 2
        record = match.play(seed, engine_side, 400, opening_plies=2)
        # the same game by the rules, counting each position (as text) as it comes round
        position, banked, last_capturer = replay_opening(game, record["opening"])
        seen, ply, cut = {}, 2, False
        while ply < 400:
            text = game.format_position(position)
            seen[text] = seen.get(text, 0) + 1
            if seen[text] == 3:
                cut = True
                break
            codes = [c for c, _, _ in engine.moves(game.play_state(position))]
            if not codes:
                break
            move = game.play_move(position, min(codes))
            gain = game.captured_by(position, move)
            banked[ply % 2] += gain
            if gain:
                last_capturer = ply % 2
            position = game.play(position, move)
            ply += 1
        assert record["plies"] == ply
        assert record.get("repeated", False) == cut
        if cut:
            repeated += 1
            totals = list(banked)
            if last_capturer is not None:
                totals[last_capturer] += seeds - sum(banked)
            assert record["margin"] == totals[engine_side] - totals[1 - engine_side]
    assert repeated >= 3


@pytest.mark.parametrize("arguments,words", [
    (["--play-out"], "--play-out goes with --tables"),
    (["--tables", "no-such-directory"], "is not a directory"),
    (["--repetition", "1"], "--repetition is 0"),
])
def test_bad_match_options_get_one_sentence(tmp_path, arguments, words):
    run = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_match.py"), "--game",
                          "zigzag", "--cols", "4", "--stones", "2", "--games", "1", "--time", "0.01",
                          *arguments], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 2 and words in run.stderr and "Traceback" not in run.stderr


def test_a_directory_without_the_boards_table_is_refused(tmp_path):
    run = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_match.py"), "--game",
                          "zigzag", "--cols", "4", "--stones", "2", "--games", "1", "--time", "0.01",
                          "--tables", str(tmp_path)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 2 and "holds no finished table" in run.stderr
