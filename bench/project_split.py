"""What the standard Zig Zag board's endgame tables would take on a cluster, projected from a
measured split solve (bench/bench_split_tier.py's JSON): per tier of T positions, the parts'
work (seconds per position per worker, measured), its rounds (fitted to the seeds on the board,
measured), the bytes the parts trade (per position, measured) and what a round costs on the
cluster (`--round-ms`, an assumption: the measured local figure is in the input).  Printed as
JSON, one entry per target.

    python bench/project_split.py bench/results/split-zigzag-18.json --target 30 --target 60 \\
        [--memory-gb 256] [--round-ms 5] [--out FILE]

With --stones K, the whole table of 2x6 with K seeds a pit instead (its positions are the
standard board's of fewer than 12K seeds, and its start: the same tiers' sizes).

Memory per worker: its block of the largest tier (5 bytes a position) and, mapped, every tier
below it (2 bytes a position, read at random by captures: page cache each worker needs for
speed, which is what grows past any machine at the full board).
"""
from __future__ import annotations

import argparse
import json
import math

import numpy as np

from report import emit
from sowsolve.solver.games import make_game

WORKING_BYTES = 5          # records, flags and distance word per position of a block
RECORD_BYTES = 2           # a lower tier's record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("measured")
    parser.add_argument("--target", type=int, action="append", default=[])
    parser.add_argument("--stones", type=int, help="the whole table of 2x6 with this many seeds a pit")
    parser.add_argument("--memory-gb", type=float, default=256.0)
    parser.add_argument("--round-ms", type=float, default=5.0)
    parser.add_argument("--out")
    args = parser.parse_args()
    with open(args.measured) as f:
        measured = json.load(f)
    run = measured["runs"][0]
    workers_then = len(run["split"]["worker_peak_own_memory"])
    tiers = run["split"]["cluster"]["split_score_tiers"]["by_tier"]
    game = make_game("zigzag", **({"stones": args.stones} if args.stones else {}))
    if args.stones:
        args.target = [game.total]
    elif not args.target:
        parser.error("give --target (seeds) or --stones")
    big = [t for t in tiers if t["positions"] >= 10**7]
    # work per position per worker: the slowest part's seconds, less its waiting, times the
    # workers, over the positions (the largest tiers: what a projection scales)
    work = sum(t["part_seconds"] * workers_then - t["wait_seconds"] for t in big) / \
        sum(t["positions"] for t in big)
    waiting = sum(t["wait_seconds"] for t in big) / sum(t["part_seconds"] * workers_then
                                                       for t in big)
    per_position_bytes = sum(t["bytes"] for t in big) / sum(t["positions"] for t in big)
    seeds = np.array([t["tier"] // 3 for t in tiers], dtype=float)
    rounds = np.array([t["rounds"] for t in tiers], dtype=float)
    slope, intercept = np.polyfit(seeds, rounds, 1)
    out = {"command": "python bench/project_split.py " + args.measured.split("bench/")[-1] + " "
           + (f"--stones {args.stones}" if args.stones else " ".join(f"--target {t}" for t in args.target))
           + f" --memory-gb {args.memory_gb:g} --round-ms {args.round_ms:g}",
           "measured": {"file": args.measured.split("/")[-1], "workers": workers_then,
                        "work_seconds_per_position_per_worker": float(f"{work:.3g}"),
                        "waiting_share": round(waiting, 3),
                        "bytes_traded_per_position": round(per_position_bytes, 2),
                        "rounds_fit": {"per_seed": round(slope, 1), "at_0": round(intercept, 1)}},
           "assumed": {"memory_per_worker_gb": args.memory_gb, "round_ms": args.round_ms},
           "targets": []}
    memory = args.memory_gb * 1e9
    for target in args.target:
        order = [t for t in game.tiers() if t // 3 <= target]
        sizes = {t: game.tier_size(t) for t in order}
        top = max(order, key=sizes.get)
        lower = sum(sizes[t] for t in order if t // 3 < top // 3)
        mapped = RECORD_BYTES * lower
        room = memory * 0.8 - mapped        # what a worker keeps for its block
        if room <= 0:
            workers = None
        else:
            workers = max(1, math.ceil(WORKING_BYTES * sizes[top] / room))
        entry = {"board": game.describe(), "max_stones": target, "positions": sum(sizes.values()),
                 "largest_tier": sizes[top], "lower_tiers_of_it": lower,
                 "lower_tiers_bytes_per_worker": mapped,
                 "fits": workers is not None}
        if workers is not None:
            seconds = sum(sizes[t] * work / workers / (1 - waiting)
                          + max(0.0, slope * (t // 3) + intercept) * args.round_ms / 1000
                          for t in order)
            entry.update({"workers": workers,
                          "block_bytes_per_worker": WORKING_BYTES * sizes[top] // workers,
                          "hours": round(seconds / 3600, 1),
                          "bytes_traded": int(per_position_bytes * sum(sizes.values()))})
        else:
            entry["why_not"] = (f"every worker reads the tiers below the largest at random: "
                                f"{mapped / 1e12:.1f} TB of records, past {args.memory_gb:g} GB")
        out["targets"].append(entry)
    emit(out, args.out)


if __name__ == "__main__":
    main()
