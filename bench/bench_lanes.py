"""The sweep of one Diffusion tier with and without the vector lanes, side by side in one process,
printed as JSON (and written with --out).

The tier's five tiers below are read from a finished table (`--table`, e.g. the standard board's:
`sowsolve solve diffusion --cols 6 --stones 4 --table T`) into huge-page arrays, as a solve holds
them; then the tier is swept from scratch (solve_range, every position of it) by the kernel and
sweep with lanes (AVX-512: the children, their records and the fold) and without (the scalar
loops), alternating, `--rounds` times each.  The figure is CPU seconds of the sweep (two threads
by default), which the machine's other load disturbs less than wall time, and the ratio with
lanes over without, round by round.  Every sweep's records must equal the table's.

    python bench/bench_lanes.py --table T [--game diffusion] [--cols 6] [--stones 4]
                                [--tier 26] [--rounds 4] [--threads 2] [--out FILE]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from report import emit, machine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True, help="a finished table of the board")
    parser.add_argument("--game", default="diffusion", choices=["diffusion", "diffusion-v2"])
    parser.add_argument("--cols", type=int, default=6)
    parser.add_argument("--stones", type=int, default=4)
    parser.add_argument("--tier", type=int, default=26)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out")
    args = parser.parse_args()

    from sowsolve.cext import diffusion, retrograde
    from sowsolve.solver.games import make_game
    from sowsolve.solver.kernels import records_array
    from sowsolve.tables.store import Table

    game = make_game(args.game, cols=args.cols, stones=args.stones)
    owner = [0 if o == "A" else 1 for o in game.owner]
    kernels = {lanes: diffusion.DiffusionKernel(game.cols, game.variant, game.max_stones,
                                                game.slots, owner, lanes=lanes)
               for lanes in (True, False)}
    if not kernels[True].lanes or not retrograde.use_lanes():
        sys.exit("this CPU has no AVX-512: there is only the scalar sweep to time")
    table = Table(args.table)
    tier = args.tier
    tables: list = [None] * (tier + 1)
    for below in range(max(1, tier - 5), tier):
        records = table.tier_records(below)
        tables[below] = records_array(records.size)
        tables[below][:] = records
    expected = table.tier_records(tier)
    tables[tier] = records_array(expected.size)
    scratch = np.empty(expected.size * retrograde.SCRATCH_PER_POSITION + 1, dtype=np.uint8)
    seconds: dict = {"lanes": [], "scalar": []}
    previous = retrograde.use_lanes()
    try:
        for _ in range(args.rounds):
            for name, lanes in (("scalar", False), ("lanes", True)):
                retrograde.use_lanes(lanes)
                tables[tier][:] = 0
                started = time.process_time()
                retrograde.solve_range(kernels[lanes].capsule(), tier, 0, expected.size, tables,
                                       args.threads, None, scratch)
                seconds[name].append(round(time.process_time() - started, 3))
                if not np.array_equal(tables[tier], expected):
                    sys.exit(f"the sweep {'with' if lanes else 'without'} lanes stored other records")
    finally:
        retrograde.use_lanes(previous)
    ratios = [round(a / b, 3) for a, b in zip(seconds["lanes"], seconds["scalar"])]
    emit({
        "command": "python bench/bench_lanes.py " + " ".join(sys.argv[1:]),
        "board": f"{game.describe()}, tier {tier} ({expected.size:,} positions), the five tiers "
                 "below read from a finished table",
        "machine": machine(),
        "threads": args.threads,
        "cpu_seconds": seconds,
        "cpu_seconds_median": {name: statistics.median(v) for name, v in seconds.items()},
        "lanes_over_scalar_by_round": ratios,
        "lanes_over_scalar_median": round(statistics.median(ratios), 2),
        "records": "identical to the table's, every sweep",
    }, args.out)


if __name__ == "__main__":
    main()
