"""Any registered game, printed as JSON: perft nodes/s from its start (the game's kernel), solve
positions/s by its solver, table bytes per position, and probe latency (cold and warm) --
with no line to add here for a new game.

    python bench/bench_solve.py --game diffusion --param cols=4 --param stones=3 \
        [--perft-depth 6] [--threads 2] [--probes 2000] [--out bench.json]
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import tempfile
import time

from report import emit, machine
from sowsolve.solver.games import make_game
from sowsolve.solver.tiers import default_threads
import sowsolve
from sowsolve.tables.store import open_table


def parameter(text: str) -> tuple[str, object]:
    name, _, value = text.partition("=")
    return name, int(value) if value.lstrip("-").isdigit() else value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", required=True)
    parser.add_argument("--param", action="append", default=[], type=parameter,
                        help="NAME=VALUE, a parameter the game declares (repeatable)")
    parser.add_argument("--perft-depth", type=int, default=0)
    parser.add_argument("--threads", type=int, default=default_threads())
    parser.add_argument("--probes", type=int, default=2000)
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args()
    game = make_game(args.game, **dict(args.param))
    result = {"game": game.name, "parameters": game.parameters(), "description": game.describe(),
              "solver": game.solver.name, "threads": args.threads,
              "machine": machine()}
    if args.perft_depth:
        started = time.perf_counter()
        counts = game.perft(game.initial(), args.perft_depth)
        seconds = time.perf_counter() - started
        result["perft"] = {"depth": args.perft_depth, "nodes": sum(counts), "seconds": round(seconds, 3),
                           "nodes_per_s": round(sum(counts) / seconds)}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.sqlite")
        started = time.perf_counter()
        report = sowsolve.solve(game, table=path, threads=args.threads, allow_large=True)
        total = time.perf_counter() - started
        size = os.path.getsize(path)
        with open_table(path) as table:
            rng = random.Random(1)
            tiers = table.tiers
            positions = []
            for _ in range(args.probes):
                tier = rng.choice(tiers)
                index = rng.randrange(table.tier_size(tier))
                positions.append(table.stored_positions(tier, index, index + 1)[0])
        cold = []
        with open_table(path) as table:
            for position in positions:
                started = time.perf_counter()
                table.probe(position)
                cold.append(time.perf_counter() - started)
            started = time.perf_counter()
            for position in positions:
                table.probe(position)
            warm = (time.perf_counter() - started) / max(1, len(positions))
    result["solve"] = {"positions": report.positions, "solver_seconds": round(report.seconds, 3),
                       "seconds_with_table": round(total, 3),
                       "positions_per_s": round(report.positions / report.seconds) if report.seconds else None,
                       "table_bytes": size, "bytes_per_position": round(size / report.positions, 4),
                       "probe_cold_ms": round(1000 * sum(cold) / max(1, len(cold)), 4),
                       "probe_warm_ms": round(1000 * warm, 4),
                       "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
    emit(result, args.out)


if __name__ == "__main__":
    main()
