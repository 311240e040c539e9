"""Diffusion benchmarks, printed as JSON: perft leaves/s (kernel, one thread), solve
positions/s, table bytes per position, probe latency (cold and warm).

    python bench/bench_diffusion.py --board diffusion:4:5 --board diffusion-v2:4:5 \
        --board diffusion:6:2 [--threads 2] [--out bench.json]
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import tempfile
import time

from report import emit, machine
from sowsolve.solver.games import make_game
from sowsolve.solver.tiers import default_threads
import sowsolve
from sowsolve.tables.store import open_table


def bench_perft(depth: int) -> dict:
    game = make_game("diffusion", cols=6, stones=4)
    kernel = game.kernel()
    started = time.perf_counter()
    counts = kernel.perft(game.initial().board, depth)
    seconds = time.perf_counter() - started
    nodes = sum(counts)
    return {"position": "444444/444444 A", "depth": depth, "leaves": counts[-1], "nodes": nodes,
            "seconds": round(seconds, 3), "leaves_per_s": round(counts[-1] / seconds),
            "nodes_per_s": round(nodes / seconds), "threads": 1}


def bench_board(name: str, cols: int, stones: int, threads: int, probes: int) -> dict:
    game = make_game(name, cols=cols, stones=stones)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.sqlite")
        started = time.perf_counter()
        report = sowsolve.solve(game, table=path, threads=threads, allow_large=True)
        total = time.perf_counter() - started
        size = os.path.getsize(path)
        rng = random.Random(1)
        positions = []
        for _ in range(probes):
            tier = rng.choice(list(game.tiers()))
            index = rng.randrange(game.tier_size(tier))
            positions.append(game.stored_positions(tier, index, index + 1)[0])
        with open_table(path) as table:
            started = time.perf_counter()
            for p in positions:
                table.probe(p)
            cold = (time.perf_counter() - started) / probes
            started = time.perf_counter()
            for p in positions[:16] * (probes // 16):
                table.probe(p)
            warm = (time.perf_counter() - started) / (16 * (probes // 16))
            start = table.probe(game.initial())
    return {"game": name, "cols": cols, "stones": stones, "threads": threads,
            "positions": report.positions, "solve_kernel_seconds": round(report.seconds, 3),
            "solve_total_seconds": round(total, 3),
            "positions_per_s": round(report.positions / report.seconds),
            "table_bytes": size, "bytes_per_position": round(size / report.positions, 4),
            "probe_cold_ms": round(cold * 1e3, 4), "probe_warm_ms": round(warm * 1e3, 4),
            "start": {"value": start.value, "remoteness": start.remoteness}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--board", action="append", default=[],
                        help="GAME:COLS:STONES (repeatable)")
    parser.add_argument("--threads", type=int, default=default_threads())
    parser.add_argument("--perft-depth", type=int, default=8)
    parser.add_argument("--probes", type=int, default=2000)
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args()
    boards = args.board or ["diffusion:4:5", "diffusion-v2:4:5"]
    result = {"machine": dict(machine(), processor=platform.machine()),
              "perft": bench_perft(args.perft_depth),
              "boards": []}
    for board in boards:
        name, cols, stones = board.split(":")
        result["boards"].append(bench_board(name, int(cols), int(stones), args.threads, args.probes))
    emit(result, args.out)


if __name__ == "__main__":
    main()
