"""The analysis engine against perfect play, and its speed.

Agreement: positions sampled from solved tables (the engine is not given the table); for each,
the move the engine chooses in --time seconds keeps the position's value (a win stays a win;
Zig Zag: the margin stays the same), counted per game and per remoteness band; and every value
it labels exact is compared with the table (it must be right every time).

Speed: positions searched (alpha-beta) or playouts (Monte Carlo) per second from the start of
each standard board, and the time alpha-beta takes to reach depth 10 from the start of Overflow
6x6 (the engine's search alone: no proof search first).

    python bench/bench_analyse.py --tables DIR [--positions 2000] [--time 0.1] [--out F]

DIR must hold the tables (it is where they are looked for): Overflow 4x4, Zig Zag 2x4 with 3
seeds per pit, Diffusion 2x6 with 2 stones per pit (`sowsolve solve ...`).

Boards tuned and boards held out: the three boards above are those the games' evaluations were
tuned and first measured on (`--boards tuned`, the default). `--boards held-out` measures the
agreement on boards no weight or constant was set on (HELD_OUT below: at least two of each
game, Diffusion v1 and v2 both), `--boards all` on both lists; the JSON gives each list apart
("agreement": the tuned boards, "held_out": the others), and `--board GAME:K=V,...` (repeatable,
e.g. `zigzag:cols=4,stones=2`) measures the boards named instead. `--tables` may be given more
than once (each board's table is looked for in every one). The solves of the held-out tables:

    sowsolve solve overflow --size 3x3 (3x4, 4x3)
    sowsolve solve zigzag --cols 6 --stones 1 (--cols 4 --stones 2 and 4; --cols 2 --stones 5 and 9)
    sowsolve solve diffusion --cols 4 --stones 3 (--cols 4 --stones 5; --cols 8 --stones 1)
    sowsolve solve diffusion-v2 --cols 5 --stones 2 (--cols 5 --stones 3; --cols 6 --stones 2)

(each under two minutes on one core, Zig Zag 2x4 with 4 seeds a pit about ten).
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time

from report import emit, machine

from sowsolve.solver.games import make_game
from sowsolve.tables.analysis import Analyser
from sowsolve.tables.directory import tables_of_board
from sowsolve.tables.store import open_table

BOARDS = [("overflow", {"size": "4x4"}), ("zigzag", {"cols": 4, "stones": 3}),
          ("diffusion", {"cols": 6, "stones": 2})]
#: boards no weight or constant was tuned on (--boards held-out): each table a few seconds to a
#: minute to solve on one core
HELD_OUT = [("overflow", {"size": "3x3"}), ("overflow", {"size": "3x4"}), ("overflow", {"size": "4x3"}),
            ("zigzag", {"cols": 6, "stones": 1}), ("zigzag", {"cols": 4, "stones": 2}),
            ("zigzag", {"cols": 4, "stones": 4}), ("zigzag", {"cols": 2, "stones": 5}),
            ("zigzag", {"cols": 2, "stones": 9}),
            ("diffusion", {"cols": 4, "stones": 3}), ("diffusion", {"cols": 4, "stones": 5}),
            ("diffusion", {"cols": 8, "stones": 1}),
            ("diffusion-v2", {"cols": 5, "stones": 2}), ("diffusion-v2", {"cols": 5, "stones": 3}),
            ("diffusion-v2", {"cols": 6, "stones": 2})]
STANDARD = [("overflow", {"size": "6x6"}), ("zigzag", {"cols": 6, "stones": 5}),
            ("diffusion", {"cols": 6, "stones": 4})]
BANDS = [(0, 10), (10, 20), (20, 40), (40, 80), (80, 10 ** 6)]


def band(remoteness) -> str:
    if remoteness is None:
        return "no end"
    lo, hi = next(b for b in BANDS if b[0] <= remoteness < b[1])
    return f"{lo}-{hi - 1}" if hi < 10 ** 6 else f"{lo}+"


def sample(table, count, rng):
    """Non-final positions the table holds, drawn over its tiers (weighted by tier size)."""
    game = table.game
    tiers = [t for t in table.solved_tiers if table.tier_size(t)]
    weights = [table.tier_size(t) for t in tiers]
    found = []
    while len(found) < count:
        tier = rng.choices(tiers, weights)[0]
        index = rng.randrange(table.tier_size(tier))
        position = rng.choice(game.images(table.stored_positions(tier, index, index + 1)[0]))
        if game.legal_moves(position) and game.outcome(position) is None:
            found.append(position)
    return found


def chosen_move(result: dict) -> str:
    """The move the engine plays: its first best move."""
    return result["best"][0] if result["best"] else result["moves"][0]["move"]


def board_of(spec: str) -> tuple[str, dict]:
    """`zigzag:cols=4,stones=2` -> ("zigzag", {"cols": 4, "stones": 2})."""
    name, _, rest = spec.partition(":")
    board = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        board[key] = int(value) if value.isdigit() else value
    return name, board


def agreement(name, board, directory, count, seconds, threads, seed, search=None,
              details=False, engine_options=None) -> dict:
    game = make_game(name, **board)
    directories = [directory] if isinstance(directory, str) else list(directory)
    paths = [p for d in directories for p in tables_of_board(game, d)]
    if not paths:
        return {"game": game.describe(), "missing": "no table in the directory"}
    depths, misses = [], []
    rng = random.Random(seed)
    analyser = Analyser(game, search=search, **(engine_options or {}))   # not given the table
    analyser.warm()         # the table's pages touched before the first position's budget
    kept = tried = exact_seen = exact_right = proved_labels = 0
    by_band: dict[str, list[int]] = {}
    started = time.time()
    with open_table(paths[0]) as table:
        for position in sample(table, count, rng):
            truth = table.query(game.format_position(position))
            if truth.get("source") != "table":
                continue
            moves = {m["move"]: m for m in truth["moves"]}
            result = analyser.analyse(position, seconds=seconds, threads=threads, multipv=1)
            ok = moves[chosen_move(result)]["value"] == truth["value"]
            tried += 1
            kept += ok
            stats = by_band.setdefault(band(truth["remoteness"]), [0, 0])
            stats[0] += ok
            stats[1] += 1
            if details:
                depths.append(result["search"].get("depth") or 0)
                if not ok:
                    misses.append({"position": game.format_position(position),
                                   "value": truth["value"], "remoteness": truth["remoteness"],
                                   "chosen": chosen_move(result), "best": truth["best"],
                                   "depth": result["search"].get("depth"),
                                   "nodes": result["search"].get("nodes",
                                                                 result["search"].get("playouts"))})
            for m in result["moves"]:
                if m["exact"]:
                    exact_seen += 1
                    # a proof gives the value only; every other exact label its remoteness too
                    right = m["value"] == moves[m["move"]]["value"] and (
                        game.value_kind.name != "winloss" or m.get("proved")
                        or m["remoteness"] == moves[m["move"]]["remoteness"])
                    exact_right += right
                    proved_labels += bool(m.get("proved"))
    return {"game": game.describe(), "search": analyser.search,
            "table": os.path.basename(paths[0]), "positions": tried,
            "value_kept": kept, "rate": round(kept / tried, 4) if tried else None,
            "by_remoteness": {k: {"kept": v[0], "positions": v[1], "rate": round(v[0] / v[1], 4)}
                              for k, v in sorted(by_band.items())},
            "exact_labels": exact_seen, "exact_right": exact_right, "of_them_proved": proved_labels,
            "exact_rate": round(exact_right / exact_seen, 4) if exact_seen else None,
            "seconds": round(time.time() - started, 1),
            **({"mean_depth": round(sum(depths) / len(depths), 2) if depths else None,
                "misses": misses} if details else {})}


def speed(name, board, seconds, threads, search=None) -> dict:
    game = make_game(name, **board)
    analyser = Analyser(game, proof_share=0, search=search)   # the kernel search alone
    result = analyser.analyse(game.initial(), seconds=seconds, threads=threads, multipv=1)
    search = result["search"]
    if search["method"] == "mcts":
        return {"game": game.describe(), "search": "mcts", "threads": threads,
                "seconds": search["seconds"], "playouts": search["playouts"],
                "playouts_per_second": search["playouts_per_second"], "best": result["best"],
                "value": result["value"]}
    return {"game": game.describe(), "search": "alphabeta", "threads": threads,
            "seconds": search["seconds"], "nodes": search["nodes"],
            "nodes_per_second": search["nodes_per_second"], "depth": search["depth"],
            "best": result["best"], "value": result["value"]}


def time_to_depth(name, board, depth, threads, limit) -> dict:
    """Seconds from the start until alpha-beta completes `depth`, and when each depth before
    it was completed (the growth from one depth to the next), within `limit` seconds."""
    game = make_game(name, **board)
    analyser = Analyser(game, proof_share=0, search="alphabeta")   # depth: alpha-beta's measure
    completed = {}

    def watch(status):
        if status.depth and status.depth not in completed:
            completed[status.depth] = round(status.seconds, 2)
        if status.depth >= depth:
            completed.setdefault(depth, round(status.seconds, 2))    # a poll past it, too
            analyser.stop()
    result = analyser.analyse(game.initial(), seconds=limit, threads=threads, multipv=1,
                              on_status=watch, status_every=0.02)
    if result["search"]["depth"] >= depth:         # reached after the last poll
        completed.setdefault(depth, round(result["search"]["seconds"], 2))
    return {"game": game.describe(), "depth": depth, "threads": threads,
            "seconds": completed.get(depth), "depth_reached": result["search"]["depth"],
            "seconds_by_depth": {str(d): completed[d] for d in sorted(completed)},
            "nodes": result["search"]["nodes"], "limit_seconds": limit}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", action="append",
                        help="a directory of tables (repeatable: a board's table is looked for in each)")
    parser.add_argument("--boards", choices=("tuned", "held-out", "all"), default="tuned",
                        help="the boards the evaluations were tuned on (default), those held out "
                             "of the tuning, or both; the JSON gives each apart")
    parser.add_argument("--board", action="append", metavar="GAME:K=V,...",
                        help="this board instead of a list (repeatable), e.g. zigzag:cols=4,stones=2; "
                             "counted as held out unless it is one of the tuned boards")
    parser.add_argument("--weights", help="the evaluation's weights, comma-separated, instead "
                                          "of the game's own (trying weights out)")
    parser.add_argument("--proof-share", type=float,
                        help="the proof search's share of the budget instead of the game's own")
    parser.add_argument("--details", action="store_true",
                        help="each board's mean depth and every position whose value was lost")
    parser.add_argument("--positions", type=int, default=2000)
    parser.add_argument("--time", type=float, default=0.1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--speed-seconds", type=float, default=10.0)
    parser.add_argument("--game", action="append", choices=sorted({n for n, _ in BOARDS + HELD_OUT}),
                        help="only this game's agreement (repeatable; the speed figures are left out)")
    parser.add_argument("--speed-only", action="store_true",
                        help="only the speed figures (no tables needed)")
    parser.add_argument("--search", choices=("alphabeta", "mcts"),
                        help="the engine's search for the agreement (default: each game's own)")
    parser.add_argument("--depth-limit", type=float, default=60.0,
                        help="seconds the search from the start of Overflow 6x6 may take to "
                             "reach depth 10 (default 60)")
    parser.add_argument("--depth-only", action="store_true",
                        help="only the time to depth 10 from the start of Overflow 6x6")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.depth_only:
        emit({"command": "python bench/bench_analyse.py " + " ".join(sys.argv[1:]),
              "machine": machine(), "threads": args.threads,
              "overflow_6x6_depth_10": time_to_depth("overflow", {"size": "6x6"}, 10,
                                                     args.threads, args.depth_limit)}, args.out)
        return
    if not args.speed_only and not args.tables:
        parser.error("--tables DIR is needed for the agreement (or --speed-only)")
    if args.board:
        named = [board_of(spec) for spec in args.board]
        tuned = [nb for nb in named if nb in BOARDS]
        held_out = [nb for nb in named if nb not in BOARDS]
    else:
        tuned = BOARDS if args.boards in ("tuned", "all") else []
        held_out = HELD_OUT if args.boards in ("held-out", "all") else []
    if args.speed_only:
        tuned, held_out = [], []
    tuned = [(n, b) for n, b in tuned if not args.game or n in args.game]
    held_out = [(n, b) for n, b in held_out if not args.game or n in args.game]
    result = {"command": "python bench/bench_analyse.py " + " ".join(sys.argv[1:]),
              "machine": machine(), "time_per_move": args.time, "threads": args.threads}
    options = {}
    if args.weights:
        options["weights"] = [int(w) for w in args.weights.split(",")]
        result["weights"] = options["weights"]
    if args.proof_share is not None:
        options["proof_share"] = result["proof_share"] = args.proof_share
    result["load_average_before"] = [round(x, 2) for x in os.getloadavg()]   # 1, 5, 15 minutes

    def measure(boards, which):
        runs = []
        for n, b in boards:
            runs.append({**agreement(n, b, args.tables, args.positions, args.time, args.threads,
                                     args.seed, args.search, args.details, options), "boards": which})
            print(f"{runs[-1]['game']}: {runs[-1].get('value_kept')} of {runs[-1].get('positions')}",
                  file=sys.stderr, flush=True)
        return runs
    if tuned or not held_out:
        result["agreement"] = measure(tuned, "tuned")
    if held_out:
        result["held_out"] = measure(held_out, "held out")
        runs = [a for a in result["held_out"] if a.get("positions")]
        result["held_out_summary"] = {
            "boards": len(runs), "positions": sum(a["positions"] for a in runs),
            "value_kept": sum(a["value_kept"] for a in runs),
            "lowest_rate": min((a["rate"] for a in runs), default=None),
            "boards_under_97": [a["game"] for a in runs if a["rate"] < 0.97]}
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    if args.speed_only or not (args.game or args.board or held_out):
        result["speed"] = [speed(n, b, args.speed_seconds, t) for n, b in STANDARD for t in (1, 2)]
        # a game searched by Monte Carlo trees: its alpha-beta too (the depth figure below)
        result["speed"] += [speed(n, b, args.speed_seconds, t, "alphabeta") for n, b in STANDARD
                            for t in (1, 2) if make_game(n, **b).evaluation.monte_carlo is not None]
        result["overflow_6x6_depth_10"] = time_to_depth("overflow", {"size": "6x6"}, 10,
                                                        args.threads, args.depth_limit)
    emit(result, args.out)


if __name__ == "__main__":
    main()
