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
    match.uct_move = lambda position, state, *rest: (min(c for c, _, _ in match.engine.moves(state)), 0)
    match.engine_move = lambda position, state, moves, *rest: (min(moves, key=lambda t: moves[t][0]), 0)


def table_players(match, table):
    """Both players play the table's first best move where it holds the position, else (or
    where the rules have ended the game, no capture being possible any more, while moves are
    left) the move of the lowest kernel code."""
    def text(position, moves):
        if table.get(position) is not None:
            best = table.query(match.game.format_position(position))["best"]
            if best:
                return best[0]
        return min(moves, key=lambda t: moves[t][0])
    match.engine_move = lambda position, state, moves, *rest: (text(position, moves), 0)

    def uct_move(position, state, *rest):
        moves = match.codes(position, state)
        return moves[text(position, moves)][0], 0
    match.uct_move = uct_move


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


@pytest.fixture(scope="module")
def zigzag_2x4_k3_endgame(tmp_path_factory):
    """The endgame table of 2x4 with 3 seeds a pit: every position of at most 9 seeds."""
    import sowsolve
    path = tmp_path_factory.mktemp("match") / "zz-2x4-k3-9.sqlite"
    sowsolve.solve("zigzag", table=str(path), threads=2, allow_large=True, max_stones=9,
                   cols=4, stones=3)
    return str(path)


@pytest.mark.parametrize("engine_side", [0, 1])
def test_an_adjudicated_margin_is_the_margin_of_best_play_to_the_end(zigzag_2x4_k3_endgame,
                                                                     engine_side):
    """A game ended where the endgame table first holds its position (after captures, a last
    capturer) has the margin the same game reaches when both sides play the table's best
    moves from there to the end (a third repetition ending infinite play, as the rules end it)."""
    from sowsolve.solver.games import make_game
    game = make_game("zigzag", cols=4, stones=3)
    adjudicated = 0
    with open_table(zigzag_2x4_k3_endgame) as table:
        judged = bench_match.Match(game, 0.01, 1, 16 << 20, seeds=24, tables=[table], repetition=3)
        played = bench_match.Match(game, 0.01, 1, 16 << 20, seeds=24, tables=[table],
                                   adjudicate=False, repetition=3)
        for match in (judged, played):
            table_players(match, table)
        for seed in range(10):
            a = judged.play(seed, engine_side, 400, opening_plies=2)
            b = played.play(seed, engine_side, 400, opening_plies=2)
            assert a["opening"] == b["opening"] and "adjudicated" not in b
            if "adjudicated" not in a:
                continue
            adjudicated += 1
            position, banked, _ = replay_opening(game, a["opening"])
            assert sum(position.board) > 9 and a["plies"] > 2    # captures came first
            assert (a["margin"], a["result"]) == (b["margin"], b["result"]), (seed, a, b)
    assert adjudicated >= 6


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


def test_a_table_holding_the_start_is_refused_for_adjudication(zigzag_2x4_k2, tmp_path):
    _, path = zigzag_2x4_k2
    run = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_match.py"), "--game",
                          "zigzag", "--cols", "4", "--stones", "2", "--games", "1", "--time", "0.01",
                          "--tables", os.path.dirname(path)], capture_output=True, text=True,
                         cwd=tmp_path)
    assert run.returncode == 2 and "holds the start" in run.stderr


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


def test_a_table_is_recorded_by_its_records_not_by_when_it_was_made(tmp_path):
    """A match's settings name each table by the checksum of its records: the same table solved
    again (another time stamp) resumes the match, another table (other records) does not."""
    import time
    first, again, other = tmp_path / "a.sqlite", tmp_path / "b.sqlite", tmp_path / "c.sqlite"
    solve_to(first, "zigzag", cols=2, stones=2)
    time.sleep(1.1)                               # the time stamps have whole seconds
    solve_to(again, "zigzag", cols=2, stones=2)
    solve_to(other, "zigzag", cols=2, stones=1)
    with open_table(str(first)) as a, open_table(str(again)) as b, open_table(str(other)) as c:
        assert a.meta["finished_at"] != b.meta["finished_at"]
        notes = [bench_match.table_note(t) for t in (a, b, c)]
    assert notes[0]["records_sha256"] == notes[1]["records_sha256"] != notes[2]["records_sha256"]
    assert all(len(n["records_sha256"]) == 64 for n in notes)


def test_an_opponent_that_speaks_the_engine_protocol(tmp_path):
    """--opponent: the other player is a program driven through the engine protocol (sowsolve
    itself here); a whole game is played, each of its moves checked legal by the referee."""
    from sowsolve.solver.games import make_game
    game = make_game("diffusion", cols=4, stones=1)
    match = bench_match.Match(game, 0.05, 1, 16 << 20)
    command = f"{sys.executable} -c 'from sowsolve.cli.entry import main; main()' engine --threads 1"
    match.opponent = bench_match.ProtocolOpponent(command, game, 0.05)
    try:
        record = match.play(opening_seed=3, engine_side=1, max_plies=200, opening_plies=0)
    finally:
        match.opponent.close()
    assert record["result"] in ("win", "loss") and record["plies"] == len(match.history)
    position = game.initial()
    for move in match.history:                       # the game as played, by the rules
        position = game.play(position, game.parse_move(position, move))
    assert game.outcome(position) is not None
