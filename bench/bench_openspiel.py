"""sowsolve's players against OpenSpiel's Monte Carlo tree search, played through OpenSpiel's own
game loop (`pyspiel.load_game`, `state.apply_action`, `state.returns()`; the games and bots of
`sowsolve.openspiel`, docs/openspiel.md).

The opponent is OpenSpiel's Python `open_spiel.python.algorithms.mcts.MCTSBot` with
`RandomRolloutEvaluator(n_rollouts=1)`, MCTS-Solver on (solve=True, OpenSpiel's default) and
uct_c = 2, the default of OpenSpiel's examples/mcts.py (not sqrt 2: the point is OpenSpiel's MCTS
as OpenSpiel runs it).  Where the returns are margins (Zig Zag: up to max_utility, 60 seeds on the
standard board) uct_c is scaled by max_utility (2 x 60 = 120), which chooses exactly the moves
uct_c = 2 chooses on returns divided by max_utility (--no-scale-uct: 2 as it is).  MCTSBot has no
clock, only `max_simulations`: so it is calibrated per board to think --time seconds a move.  The
calibration plays one seeded uniformly random game to its end, times MCTSBot's searches (all of
the same number of simulations) from --calibration-positions positions spread evenly along it,
the start first, and sets max_simulations = (simulations per second: their total over the total
time) x --time; the JSON records every timing.  A search's time depends on how long its random
rollouts run, so a move near a game's start takes longer than one near its end: each game
records both players' mean wall and CPU seconds a move (and, in part 1, by bands of 100 plies),
so the equal time can be checked.

--part engine-vs-mcts: sowsolve's analysis engine (`EngineBot`, seconds = --time a move, one
thread, one engine per board kept from game to game) against MCTSBot, on the standard boards
of Overflow (6x6) and Zig Zag (2x6, 5 seeds a pit, ended at OpenSpiel's max_game_length of 200
plies as the game's own rules end infinite play).  Game g opens with --opening-plies uniformly
random plies from a seeded RNG (seed --seed x 100003 + board x 1000 + g // 2), and each opening is played
twice, sowsolve taking player 0 in the even game and player 1 in the odd one.  Records each game
(opening, sowsolve's player, returns, plies) and the totals per board: sowsolve's wins, draws,
losses, score rate (a win 1, a draw 0.5) and, for Zig Zag, its mean margin.

--part mcts-vs-perfect: MCTSBot (calibrated the same way) against the perfect player
(`TableBot`) of a solved table, on Overflow 4x4 and Diffusion v1 2x6 with 2 stones a pit, MCTSBot
always on the side that is won: player 0 if the table's value of the start is a win for the
side to move, else player 1.  The first --from-start games start at the start; the others after
--perfect-opening-plies random plies (both sides' moves, seeded), keeping only openings whose
position is still won for MCTSBot's side per the table (the rejected draws are counted).  After
every move the table's value of the new position is read: it records the ply (of the whole
game, 1 the first) and the move at which MCTSBot first turned its won position into a lost one,
and it checks the perfect player never does (a TableBot move that gives up a win, or a TableBot
loss from a won position, would be a bug).  Totals per board: won games lost by MCTSBot (count
and rate) and the distribution of the ply of the first losing move.

Tables: build them first (`sowsolve solve ... --dry-run` prints the estimate alone):

    export SOWSOLVE_TABLES=/some/tmp/dir
    sowsolve solve overflow --size 4x4
    sowsolve solve diffusion --cols 6 --stones 2

then --tables DIR (default $SOWSOLVE_TABLES, else sowsolve-tables) is where they are found.

    python bench/bench_openspiel.py --part engine-vs-mcts --games 40 --time 0.5 \\
        --progress evm.jsonl --out bench/results/openspiel-engine-vs-mcts.json
    python bench/bench_openspiel.py --part mcts-vs-perfect --games 40 --time 0.5 \\
        --progress mvp.jsonl --out bench/results/openspiel-mcts-vs-perfect.json
    python bench/bench_openspiel.py --part engine-vs-mcts --games 2 --time 0.1   # a smoke run

A long run is resumable: --progress FILE keeps the settings and the calibration (first line)
and each finished game (one JSON line each); run the same command again and it plays only the
games the file lacks, with the calibration it holds.  Run one part at a time: both players
share the CPU with whatever else runs, and the calibration measures what it gets.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import random
import sys
import time

import numpy as np

from report import emit, machine

import pyspiel
from open_spiel.python.algorithms import mcts

import sowsolve
from sowsolve.openspiel import EngineBot, TableBot
from sowsolve.tables.directory import tables_directory, tables_of_board

#: the boards of each part: (key, OpenSpiel game string)
BOARDS = {
    "engine-vs-mcts": [("overflow-6x6", "sowsolve_overflow(rows=6,cols=6)"),
                       ("zigzag-2x6-5", "sowsolve_zigzag(cols=6,stones=5,max_game_length=200)")],
    "mcts-vs-perfect": [("overflow-4x4", "sowsolve_overflow(rows=4,cols=4)"),
                        ("diffusion-2x6-2", "sowsolve_diffusion(cols=6,stones=2)")],
}
#: OpenSpiel's examples/mcts.py: --uct_c 2, --rollout_count 1
UCT_C = 2.0
#: where the per-move seconds are summed up separately: plies [0, 100), [100, 200), ...
BAND_PLIES = 100


class MCTS(mcts.MCTSBot):
    """OpenSpiel's MCTSBot, unchanged, keeping the root of its last search (its simulations)."""
    last_root = None

    def mcts_search(self, state):
        root = super().mcts_search(state)
        self.last_root = root
        return root


def version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def uct_of(game, scale: bool) -> float:
    """uct_c for the game: 2, times max_utility where returns are margins (and scale asked)."""
    utility = game.max_utility()
    return UCT_C * utility if scale and utility != 1 else UCT_C


def make_mcts(game, uct_c: float, simulations: int, seed: int) -> MCTS:
    rng = np.random.RandomState(seed)
    return MCTS(game, uct_c=uct_c, max_simulations=simulations,
                evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng),
                solve=True, random_state=rng)


def calibrate(game, uct_c: float, seconds: float, positions: int, seed: int) -> dict:
    """MCTSBot's simulations per second from `positions` positions spread evenly along one
    seeded uniformly random game (its start among them), and the max_simulations that makes a
    move take `seconds` on the mean over them: each position is searched with the same number
    of simulations, and the rate is their total over the total time."""
    rng = random.Random(seed)
    state, states = game.new_initial_state(), []
    while not state.is_terminal():
        states.append(state.clone())
        state.apply_action(rng.choice(state.legal_actions()))
    length = len(states)
    plies = sorted({round(i * length / positions) for i in range(positions)})
    # a first guess of the rate, from the start, sizes the timed searches
    probe = make_mcts(game, uct_c, 50, seed)
    started = time.perf_counter()
    probe.step(states[0])
    guess = probe.last_root.explore_count / (time.perf_counter() - started)
    simulations = max(20, round(guess * seconds))
    timings = []
    for ply in plies:
        s = states[ply]
        bot = make_mcts(game, uct_c, simulations, seed + ply)
        wall, cpu = time.perf_counter(), time.process_time()
        bot.step(s)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        timings.append({"ply": ply, "position": str(s), "simulations": bot.last_root.explore_count,
                        "solved": bot.last_root.outcome is not None,
                        "seconds": round(wall, 4), "cpu_seconds": round(cpu, 4),
                        "rate": round(bot.last_root.explore_count / wall, 1)})
    rate = sum(t["simulations"] for t in timings) / sum(t["seconds"] for t in timings)
    return {"random_game_seed": seed, "random_game_plies": length,
            "probe_rate": round(guess, 1), "simulations_timed": simulations,
            "positions": timings, "rate": round(rate, 1),
            "max_simulations": max(1, round(rate * seconds)),
            "load_average": round(os.getloadavg()[0], 2)}


def timed_step(bot, state) -> tuple[int, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    action = bot.step(state)
    return action, time.perf_counter() - wall, time.process_time() - cpu


def bands(timed: list[tuple[int, float]]) -> dict:
    """{"0-99": mean seconds of the moves made at plies 0..99, ...} of [(ply, seconds)]."""
    grouped: dict[int, list[float]] = {}
    for ply, seconds in timed:
        grouped.setdefault(ply // BAND_PLIES, []).append(seconds)
    return {f"{b * BAND_PLIES}-{(b + 1) * BAND_PLIES - 1}": mean(v) for b, v in sorted(grouped.items())}


def mean(values, digits: int = 3):
    values = list(values)
    return round(sum(values) / len(values), digits) if values else None


# --- part 1: the engine against MCTSBot -------------------------------------------------------

def engine_game(game, engine: EngineBot, opponent: MCTS, opening_seed: int, sowsolve_player: int,
                opening_plies: int) -> dict:
    rng = random.Random(opening_seed)
    state = game.new_initial_state()
    opening, plies = [], 0
    times = {"sowsolve": [], "mcts": []}
    cpus = {"sowsolve": [], "mcts": []}
    banded = {"sowsolve": [], "mcts": []}
    simulations, solved_roots = [], 0
    while not state.is_terminal():
        player = state.current_player()
        if plies < opening_plies:
            action = rng.choice(state.legal_actions())
            opening.append(state.action_to_string(player, action))
        elif player == sowsolve_player:
            action, wall, cpu = timed_step(engine, state)
            banded["sowsolve"].append((plies, wall))
            times["sowsolve"].append(wall)
            cpus["sowsolve"].append(cpu)
        else:
            action, wall, cpu = timed_step(opponent, state)
            banded["mcts"].append((plies, wall))
            times["mcts"].append(wall)
            cpus["mcts"].append(cpu)
            simulations.append(opponent.last_root.explore_count)
            solved_roots += opponent.last_root.outcome is not None
        if action not in state.legal_actions():
            raise RuntimeError(f"{'sowsolve' if player == sowsolve_player else 'MCTSBot'} chose "
                               f"action {action}, no legal move of {state}")
        state.apply_action(action)
        plies += 1
    returns = state.returns()
    mine = returns[sowsolve_player]
    result = "win" if mine > 0 else "loss" if mine < 0 else "draw"
    return {"opening_seed": opening_seed, "opening": opening, "sowsolve_player": sowsolve_player,
            "returns": returns, "sowsolve_return": mine, "result": result,
            "score": {"win": 1.0, "draw": 0.5, "loss": 0.0}[result], "plies": plies,
            "capped": plies >= game.max_game_length(), "final_position": str(state),
            "sowsolve_mean_seconds": mean(times["sowsolve"]),
            "sowsolve_mean_cpu_seconds": mean(cpus["sowsolve"]),
            "mcts_mean_seconds": mean(times["mcts"]),
            "mcts_mean_cpu_seconds": mean(cpus["mcts"]),
            "mcts_mean_simulations": mean(simulations, 1), "mcts_solved_roots": solved_roots,
            "mean_seconds_by_plies": {"sowsolve": bands(banded["sowsolve"]),
                                      "mcts": bands(banded["mcts"])}}


def engine_totals(games: list[dict], margin: bool) -> dict:
    scored = [g for g in games if "error" not in g]
    totals = {"games": len(scored), "errors": len(games) - len(scored),
              "wins": sum(g["result"] == "win" for g in scored),
              "draws": sum(g["result"] == "draw" for g in scored),
              "losses": sum(g["result"] == "loss" for g in scored),
              "score_rate": mean((g["score"] for g in scored), 4),
              "by_sowsolve_player": {
                  str(p): {"games": sum(g["sowsolve_player"] == p for g in scored),
                           "score": sum(g["score"] for g in scored if g["sowsolve_player"] == p)}
                  for p in (0, 1)},
              "mean_plies": mean((g["plies"] for g in scored), 1),
              "capped_games": sum(g["capped"] for g in scored),
              "sowsolve_mean_seconds_per_move": mean(g["sowsolve_mean_seconds"] for g in scored
                                                     if g["sowsolve_mean_seconds"] is not None),
              "mcts_mean_seconds_per_move": mean(g["mcts_mean_seconds"] for g in scored
                                                 if g["mcts_mean_seconds"] is not None),
              "sowsolve_mean_cpu_seconds_per_move": mean(
                  g["sowsolve_mean_cpu_seconds"] for g in scored
                  if g["sowsolve_mean_cpu_seconds"] is not None),
              "mcts_mean_cpu_seconds_per_move": mean(g["mcts_mean_cpu_seconds"] for g in scored
                                                     if g["mcts_mean_cpu_seconds"] is not None),
              "mcts_mean_simulations_per_move": mean((g["mcts_mean_simulations"] for g in scored
                                                      if g["mcts_mean_simulations"] is not None), 1),
              "mean_seconds_by_plies": {
                  who: {band: mean(g["mean_seconds_by_plies"][who][band] for g in scored
                                   if band in g["mean_seconds_by_plies"][who])
                        for band in sorted({b for g in scored
                                            for b in g["mean_seconds_by_plies"][who]},
                                           key=lambda b: int(b.split("-")[0]))}
                  for who in ("sowsolve", "mcts")},
              "seconds": round(sum(g["seconds"] for g in games), 1)}
    if margin:
        totals["mean_margin"] = mean((g["sowsolve_return"] for g in scored), 2)
    return totals


# --- part 2: MCTSBot against the perfect player -----------------------------------------------

def find_table(game, directory: str):
    """The finished table of the game's board in the directory that holds its start."""
    board = game.sowsolve_game()
    for path in tables_of_board(board, directory):
        table = sowsolve.open_table(path)
        if table.get(board.initial()) is not None:
            return table
        table.close()
    sys.exit(f"no finished table of {board.describe()} holding its start in the tables directory "
             f"(solve it first: sowsolve solve ...)")


def won_for(table, state, side: int) -> bool:
    """Whether the position of a live state is won for player `side`, per the table."""
    value = table.probe(state.position()).value
    if value not in ("win", "loss"):
        raise RuntimeError(f"the table's value of {state} is {value!r}, not win or loss")
    return (value == "win") == (state.current_player() == side)


def perfect_game(game, table, mcts_bot: MCTS, perfect: TableBot, mcts_player: int,
                 opening_seed: int | None, opening_plies: int, max_tries: int) -> dict:
    """One game, MCTSBot on player `mcts_player` (won at the start); opening_seed None: from
    the start, else random openings drawn from it until one keeps the win."""
    tries, opening = 0, []
    if opening_seed is None:
        state = game.new_initial_state()
    else:
        rng = random.Random(opening_seed)
        while True:
            tries += 1
            if tries > max_tries:
                raise RuntimeError(f"no opening of {opening_plies} plies kept the win in "
                                   f"{max_tries} draws")
            state, opening = game.new_initial_state(), []
            for _ in range(opening_plies):
                if state.is_terminal():
                    break
                action = rng.choice(state.legal_actions())
                opening.append(state.action_to_string(state.current_player(), action))
                state.apply_action(action)
            if not state.is_terminal() and won_for(table, state, mcts_player):
                break
    plies = len(opening)
    start = {"position": str(state), "value": table.probe(state.position()).value,
             "remoteness": table.probe(state.position()).remoteness}
    first_loss = None
    losing_moves = 0            # MCTSBot moves that turned a win into a loss (it can win back)
    perfect_errors = []         # TableBot moves that gave up a win: a bug
    mcts_moves, times, cpus, simulations = 0, [], [], []
    won = True                  # MCTSBot's side holds a win
    while not state.is_terminal():
        player = state.current_player()
        before = str(state)
        if player == mcts_player:
            remoteness_before = table.probe(state.position()).remoteness
            action, wall, cpu = timed_step(mcts_bot, state)
            mcts_moves += 1
            times.append(wall)
            cpus.append(cpu)
            simulations.append(mcts_bot.last_root.explore_count)
        else:
            action = perfect.step(state)
        if action not in state.legal_actions():
            raise RuntimeError(f"{'MCTSBot' if player == mcts_player else 'TableBot'} chose "
                               f"action {action}, no legal move of {state}")
        move = state.action_to_string(player, action)
        state.apply_action(action)
        plies += 1
        now = (state.returns()[mcts_player] > 0 if state.is_terminal()
               else won_for(table, state, mcts_player))
        if player == mcts_player and won and not now:
            losing_moves += 1
            if first_loss is None:
                first_loss = {"ply": plies, "mcts_move": mcts_moves, "position": before,
                              "move": move, "remoteness_before": remoteness_before}
        if player != mcts_player and not won and now:
            perfect_errors.append({"ply": plies, "position": before, "move": move})
        won = now
    returns = state.returns()
    lost = returns[mcts_player] < 0
    record = {"opening_seed": opening_seed, "opening": opening, "opening_tries": tries,
              "mcts_player": mcts_player, "start": start, "returns": returns,
              "mcts_result": "loss" if lost else "win" if returns[mcts_player] > 0 else "draw",
              "plies": plies, "mcts_moves": mcts_moves,
              "first_losing_ply": first_loss["ply"] if first_loss else None,
              "first_losing_move": first_loss, "losing_moves": losing_moves,
              "mcts_mean_seconds": mean(times), "mcts_mean_cpu_seconds": mean(cpus),
              "mcts_mean_simulations": mean(simulations, 1)}
    if perfect_errors:
        record["table_bot_errors"] = perfect_errors
    if lost != (first_loss is not None):
        # MCTSBot lost a won game without a losing move of its own, or won after one: the
        # perfect player erred
        record["inconsistent"] = True
    return record


def perfect_totals(games: list[dict]) -> dict:
    scored = [g for g in games if "error" not in g]
    lost = [g for g in scored if g["mcts_result"] == "loss"]
    plies = sorted(g["first_losing_ply"] for g in scored if g["first_losing_ply"] is not None)
    from_start = [g for g in scored if g["opening_seed"] is None]
    return {"games": len(scored), "errors": len(games) - len(scored),
            "won_games_lost_by_mcts": len(lost),
            "loss_rate": round(len(lost) / len(scored), 4) if scored else None,
            "won_games_won_by_mcts": sum(g["mcts_result"] == "win" for g in scored),
            "from_start": {"games": len(from_start),
                           "lost": sum(g["mcts_result"] == "loss" for g in from_start)},
            "from_openings": {"games": len(scored) - len(from_start),
                              "lost": len(lost) - sum(g["mcts_result"] == "loss"
                                                      for g in from_start)},
            "games_with_a_losing_move": len(plies),
            "first_losing_plies": plies,
            "first_losing_ply_median": plies[len(plies) // 2] if plies else None,
            "table_bot_errors": sum(len(g.get("table_bot_errors", [])) for g in scored),
            "inconsistent_games": sum(g.get("inconsistent", False) for g in scored),
            "mean_plies": mean((g["plies"] for g in scored), 1),
            "mcts_mean_seconds_per_move": mean(g["mcts_mean_seconds"] for g in scored
                                               if g["mcts_mean_seconds"] is not None),
            "mcts_mean_cpu_seconds_per_move": mean(g["mcts_mean_cpu_seconds"] for g in scored
                                                   if g["mcts_mean_cpu_seconds"] is not None),
            "mcts_mean_simulations_per_move": mean((g["mcts_mean_simulations"] for g in scored
                                                    if g["mcts_mean_simulations"] is not None), 1),
            "seconds": round(sum(g["seconds"] for g in games), 1)}


# --- the run ----------------------------------------------------------------------------------

def read_progress(path: str | None, settings: dict) -> tuple[dict | None, list[dict]]:
    """(the calibration, the finished games) of a progress file written with the same settings;
    (None, []) where there is none yet."""
    if not path or not os.path.exists(path):
        return None, []
    lines = []
    with open(path) as f:
        for line in f:
            try:
                lines.append(json.loads(line))
            except ValueError:           # a line cut short by a kill: that game is played again
                temporary = path + ".tmp"
                with open(temporary, "w") as out:
                    out.writelines(json.dumps(kept) + "\n" for kept in lines)
                os.replace(temporary, path)
                break
    if not lines or lines[0].get("settings") != settings:
        sys.exit(f"{path} holds another run's games (its first line names the settings)")
    return lines[0]["calibration"], lines[1:]


def shown_command(argv: list[str]) -> str:
    """The command line, file options as their base names (no path of this machine)."""
    words, paths = [], {"--out", "--progress", "--tables"}
    for i, word in enumerate(argv):
        if i and argv[i - 1] in paths:
            word = os.path.basename(word.rstrip("/")) or word
        elif "=" in word and word.split("=", 1)[0] in paths:
            key, value = word.split("=", 1)
            word = f"{key}={os.path.basename(value.rstrip('/'))}"
        words.append(word)
    return "python bench/bench_openspiel.py " + " ".join(words)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", required=True, choices=tuple(BOARDS))
    parser.add_argument("--games", type=int, default=40, help="games per board")
    parser.add_argument("--time", type=float, default=0.5, help="seconds a move, both players")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--opening-plies", type=int, default=2,
                        help="engine-vs-mcts: random plies before the players take over")
    parser.add_argument("--from-start", type=int, default=10,
                        help="mcts-vs-perfect: games per board from the start (the rest from "
                        "random openings)")
    parser.add_argument("--perfect-opening-plies", type=int, default=2,
                        help="mcts-vs-perfect: random plies of an opening")
    parser.add_argument("--max-tries", type=int, default=1000,
                        help="mcts-vs-perfect: random openings drawn at most per game")
    parser.add_argument("--calibration-positions", type=int, default=8)
    parser.add_argument("--no-scale-uct", action="store_true",
                        help="uct_c 2 also where returns are margins (Zig Zag)")
    parser.add_argument("--boards", help="comma-separated board keys of the part (default: all)")
    parser.add_argument("--tables", help="mcts-vs-perfect: the tables directory "
                        "(default $SOWSOLVE_TABLES, else sowsolve-tables)")
    parser.add_argument("--progress", help="a file of the games played so far: resume from it")
    parser.add_argument("--out")
    args = parser.parse_args()
    boards = BOARDS[args.part]
    if args.boards:
        keys = args.boards.split(",")
        unknown = set(keys) - {key for key, _ in boards}
        if unknown:
            parser.error(f"--boards of {args.part}: {', '.join(k for k, _ in boards)}")
        boards = [b for b in boards if b[0] in keys]
    games_of = {key: pyspiel.load_game(name) for key, name in boards}
    tables = {}
    if args.part == "mcts-vs-perfect":
        directory = args.tables or tables_directory()
        tables = {key: find_table(game, directory) for key, game in games_of.items()}
    uct = {key: uct_of(game, not args.no_scale_uct) for key, game in games_of.items()}
    settings = {"part": args.part, "time": args.time, "seed": args.seed,
                "boards": {key: name for key, name in boards}, "uct_c": uct,
                "opening_plies": args.opening_plies, "from_start": args.from_start,
                "perfect_opening_plies": args.perfect_opening_plies}
    calibration, games = read_progress(args.progress, settings)
    started = time.time()
    load_before = round(os.getloadavg()[0], 2)
    if calibration is None:
        calibration = {}
        for i, (key, game) in enumerate(games_of.items()):
            calibration[key] = calibrate(game, uct[key], args.time, args.calibration_positions,
                                         args.seed * 1009 + i)
            print(f"calibration {key}: {calibration[key]['rate']} simulations/s, "
                  f"max_simulations {calibration[key]['max_simulations']}",
                  file=sys.stderr, flush=True)
        if args.progress:
            with open(args.progress, "w") as f:
                f.write(json.dumps({"settings": settings, "calibration": calibration}) + "\n")
    seconds_before = sum(g["seconds"] for g in games)
    for b, (key, game) in enumerate(games_of.items()):
        simulations = calibration[key]["max_simulations"]
        engine = EngineBot(game, seconds=args.time, threads=1) if args.part == "engine-vs-mcts" \
            else None
        perfect = TableBot(game, tables[key]) if tables else None
        mcts_player = None
        if perfect is not None:
            start = game.new_initial_state()
            mcts_player = 0 if table_value(tables[key], start) == "win" else 1
        done = [g for g in games if g["board"] == key]
        for g in range(len(done), args.games):
            game_started = time.time()
            mcts_seed = args.seed * 7919 + b * 100003 + g
            bot = make_mcts(game, uct[key], simulations, mcts_seed)
            try:
                if engine is not None:
                    opening_seed = args.seed * 100003 + b * 1000 + g // 2
                    record = engine_game(game, engine, bot, opening_seed, g % 2,
                                         args.opening_plies)
                else:
                    opening_seed = (None if g < args.from_start
                                    else args.seed * 100003 + b * 1000 + g)
                    record = perfect_game(game, tables[key], bot, perfect, mcts_player,
                                          opening_seed, args.perfect_opening_plies,
                                          args.max_tries)
            except Exception as exc:      # recorded, and counted in the totals
                record = {"error": f"{type(exc).__name__}: {exc}"}
            record = {"board": key, "game": g, "mcts_seed": mcts_seed} | record
            record["seconds"] = round(time.time() - game_started, 1)
            record["load_average"] = round(os.getloadavg()[0], 2)
            games.append(record)
            done.append(record)
            if args.progress:
                with open(args.progress, "a") as f:
                    f.write(json.dumps(record) + "\n")
            if "error" in record:
                line = f"error: {record['error']}"
            elif engine is not None:
                line = (f"sowsolve {record['result']} ({record['sowsolve_return']:+g}, "
                        f"{record['plies']} plies); so far "
                        f"{sum(d.get('score', 0) for d in done):g}/{len(done)}")
            else:
                line = (f"MCTS {record['mcts_result']} (first losing ply "
                        f"{record['first_losing_ply']}, {record['plies']} plies); lost so far "
                        f"{sum(d.get('mcts_result') == 'loss' for d in done)}/{len(done)}")
            print(f"{key} game {g + 1}/{args.games}: {line} [{record['seconds']} s]",
                  file=sys.stderr, flush=True)
    per_board = {}
    for key, game in games_of.items():
        played = [g for g in games if g["board"] == key][:args.games]
        entry = {"openspiel_game": str(game), "max_game_length": game.max_game_length(),
                 "max_utility": game.max_utility(), "uct_c": uct[key],
                 "max_simulations": calibration[key]["max_simulations"],
                 "calibration": calibration[key]}
        if args.part == "engine-vs-mcts":
            entry["totals"] = engine_totals(played, game.max_utility() != 1)
        else:
            table = tables[key]
            start = game.new_initial_state()
            value = table.probe(start.position())
            entry["table"] = {"file": os.path.basename(table.path),
                              "start": {"position": str(start), "value": value.value,
                                        "remoteness": value.remoteness}}
            entry["mcts_player"] = 0 if value.value == "win" else 1
            entry["totals"] = perfect_totals(played)
        entry["per_game"] = played
        per_board[key] = entry
    result = {
        "command": shown_command(sys.argv[1:]),
        "part": args.part,
        "machine": machine(),
        "versions": {"open_spiel": version("open_spiel"), "sowsolve": version("sowsolve"),
                     "numpy": np.__version__},
        "load_average_before": load_before, "load_average_after": round(os.getloadavg()[0], 2),
        "time_per_move": args.time, "games_per_board": args.games, "seed": args.seed,
        "opponent": {"bot": "open_spiel.python.algorithms.mcts.MCTSBot",
                     "evaluator": "RandomRolloutEvaluator(n_rollouts=1)", "solve": True,
                     "uct_c": "2 (OpenSpiel's examples/mcts.py), times max_utility where "
                              "returns are margins" if not args.no_scale_uct else "2",
                     "max_simulations": "calibrated: simulations per second x time per move"},
        "sowsolve_player": ("EngineBot(seconds=time per move, threads=1), one per board"
                            if args.part == "engine-vs-mcts" else
                            "TableBot of the board's solved table"),
        "settings": settings,
        "boards": per_board,
        "seconds": round(time.time() - started + seconds_before, 1),
        "sessions": "resumed from --progress" if seconds_before else "one run",
    }
    if args.part == "engine-vs-mcts":
        result["openings"] = (f"{args.opening_plies} uniformly random plies, seed "
                              f"seed x 100003 + board x 1000 + game // 2: each opening twice, "
                              f"sowsolve player 0 in the even game, player 1 in the odd")
    else:
        result["openings"] = (f"the first {args.from_start} games of a board from the start, the "
                              f"others after {args.perfect_opening_plies} random plies (seed "
                              f"seed x 100003 + board x 1000 + game, drawn again until the "
                              f"position is won for MCTSBot's side)")
    emit(result, args.out)
    for table in tables.values():
        table.close()


def table_value(table, state) -> str:
    return table.probe(state.position()).value


if __name__ == "__main__":
    main()
