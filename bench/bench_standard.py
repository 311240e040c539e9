"""Solve standard Diffusion (2x6, 4 stones per pit) and write its figures as JSON: time per
tier, positions/s, peak memory, bytes per position.  Not part of CI (minutes of both cores).

    python bench/bench_standard.py --game diffusion --table std-v1.sqlite --out bench-v1.json
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time

from tqdm import tqdm

from report import emit, machine
from sowsolve.solver.games import make_game
from sowsolve.solver.tiers import default_threads
import sowsolve
from sowsolve.tables.store import open_table


def bar(total: int, desc: str):
    return tqdm(total=total, desc=desc, unit="pos", unit_scale=True, leave=False, file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", default="diffusion", choices=["diffusion", "diffusion-v2"])
    parser.add_argument("--cols", type=int, default=6)
    parser.add_argument("--stones", type=int, default=4)
    parser.add_argument("--table", required=True)
    parser.add_argument("--threads", type=int, default=default_threads())
    parser.add_argument("--out")
    args = parser.parse_args()
    game = make_game(args.game, cols=args.cols, stones=args.stones)
    started = time.perf_counter()
    report = sowsolve.solve(game, table=args.table, threads=args.threads, progress=bar,
                            allow_large=True)        # what `sowsolve solve` runs
    wall = time.perf_counter() - started
    if not report.solved_now:
        sys.exit(f"{args.table} is finished already: nothing was solved, nothing measured")
    size = os.path.getsize(args.table)
    with open_table(args.table) as table:
        starts = [{"position": game.format_position(p), **table.probe(p)._asdict()}
                  for p in game.initial_positions()]
        tiers = [table.tier_info(t) | {"tier": t} for t in table.tiers]
    positions = sum(t["positions"] for t in tiers)
    result = {
        "game": args.game, "cols": args.cols, "stones": args.stones, "threads": args.threads,
        "machine": machine(),
        "positions_per_side": positions,
        "wall_seconds_this_run": round(wall, 1),
        "kernel_seconds_this_run": round(report.seconds, 1),
        "positions_per_s": round(report.positions / report.seconds) if report.seconds else None,
        "resumed_from_tier": report.resumed_from,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "table_bytes": size, "bytes_per_position": round(size / positions, 4),
        "start": starts,
        "tiers": [{k: t.get(k) for k in ("tier", "positions", "seconds", "wins", "losses",
                                         "longest_win", "stored_bytes")} for t in tiers],
    }
    emit(result, args.out)


if __name__ == "__main__":
    main()
