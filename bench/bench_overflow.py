"""Overflow benchmarks, printed as JSON: kernel move generation on random positions (one
thread), and the number of distinct canonical positions per ply from the start (the growth that
decides whether a board can be solved by search).

    python bench/bench_overflow.py --movegen-size 6x6 --growth-size 5x5 --growth-plies 8
"""
from __future__ import annotations

import argparse
import random
import time

import numpy as np

from report import emit
from sowsolve.solver.games import make_game


def random_positions(game, count: int, seed: int) -> np.ndarray:
    """Positions met along random games from the start (kernel moves)."""
    rng = random.Random(seed)
    kernel = game.kernel()
    out = []
    heights = game.initial().heights
    while len(out) < count:
        moves = kernel.moves(heights)
        if not moves:
            heights = game.initial().heights
            continue
        out.append(heights)
        heights = rng.choice(moves)[1]
    return np.array(out, dtype=np.uint8)


def bench_movegen(size: str, count: int, repeat: int) -> dict:
    game = make_game("overflow", size=size)
    positions = random_positions(game, count, seed=1)
    kernel = game.kernel()
    best = None
    for _ in range(repeat):
        started = time.perf_counter()
        moves = kernel.count_moves(positions)
        seconds = time.perf_counter() - started
        best = seconds if best is None else min(best, seconds)
    return {"size": size, "positions": count, "moves": moves, "seconds": round(best, 4),
            "moves_per_s": round(moves / best), "positions_per_s": round(count / best),
            "threads": 1}


def bench_growth(size: str, plies: int, limit: int) -> dict:
    game = make_game("overflow", size=size)
    kernel = game.kernel()
    level = {game.key(game.initial())[1]}
    seen = set(level)
    per_ply = []
    started = time.perf_counter()
    for ply in range(1, plies + 1):
        nxt = set()
        for key in level:
            children = kernel.children(key)
            if isinstance(children, list):
                nxt.update(children)
        nxt -= seen
        seen |= nxt
        level = nxt
        per_ply.append(len(nxt))
        if len(seen) > limit:
            break
    return {"size": size, "new_positions_per_ply": per_ply, "distinct_positions": len(seen),
            "growth_factors": [round(b / a, 2) for a, b in zip(per_ply, per_ply[1:]) if a],
            "seconds": round(time.perf_counter() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--movegen-size", default="6x6")
    parser.add_argument("--positions", type=int, default=200_000)
    parser.add_argument("--growth-size", default="5x5")
    parser.add_argument("--growth-plies", type=int, default=6)
    parser.add_argument("--growth-limit", type=int, default=5_000_000)
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args()
    result = {"movegen": bench_movegen(args.movegen_size, args.positions, 3),
              "growth": bench_growth(args.growth_size, args.growth_plies, args.growth_limit)}
    emit(result, args.out)


if __name__ == "__main__":
    main()
