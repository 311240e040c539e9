"""Where a solve leaves a core idle: the solve run in this process (as `sowsolve solve` runs it,
the table written) with the process's CPU time read at each tier's start (the progress bar's
description changes then), so each tier -- from its start to the next one's, its store on the
store thread and the step between tiers included -- gets its wall seconds, its CPU seconds and
the cores it kept busy; then the tiers that leave the most core-seconds idle.

    python bench/profile_cores.py --game diffusion --cols 6 --stones 4 [--threads 2]
        [--table T] [--out F]

The idle core-seconds of a tier are threads x wall - CPU: what a perfect split of the same CPU
work would not have waited.  Read it on a machine with nothing else running.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time

from report import emit, machine

import sowsolve


def process_cpu() -> float:
    times = os.times()
    return times.user + times.system


class Timeline:
    """A progress factory for sowsolve.solve that records (wall, CPU, tier label) at every
    tier's start."""

    def __init__(self):
        self.marks: list[tuple[float, float, str]] = []

    def __call__(self, total, desc):
        timeline = self

        class Bar:
            def update(self, n: int) -> None:
                pass

            def set_description(self, label: str) -> None:
                timeline.marks.append((time.perf_counter(), process_cpu(), label))
        self.marks.append((time.perf_counter(), process_cpu(), desc))
        return contextlib.nullcontext(Bar())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="diffusion")
    parser.add_argument("--cols", type=int, default=6)
    parser.add_argument("--stones", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--table", help="write the table here (default: a scratch directory)")
    parser.add_argument("--top", type=int, default=12, help="tiers listed by idle core-seconds")
    parser.add_argument("--out")
    args = parser.parse_args()
    timeline = Timeline()
    with tempfile.TemporaryDirectory() as scratch:
        table = args.table or os.path.join(scratch, "t.sqlite")
        started_wall, started_cpu = time.perf_counter(), process_cpu()
        sowsolve.solve(args.game, cols=args.cols, stones=args.stones, table=table,
                       threads=args.threads, progress=timeline)
        ended_wall, ended_cpu = time.perf_counter(), process_cpu()
    marks = timeline.marks + [(ended_wall, ended_cpu, "end")]
    tiers = []
    for (wall, cpu, label), (next_wall, next_cpu, _) in zip(marks, marks[1:]):
        seconds, used = next_wall - wall, next_cpu - cpu
        if seconds <= 0:
            continue
        tiers.append({"tier": label, "wall_seconds": round(seconds, 3),
                      "cpu_seconds": round(used, 3), "cores": round(used / seconds, 2),
                      "idle_core_seconds": round(max(0.0, args.threads * seconds - used), 3)})
    wall, cpu = ended_wall - started_wall, ended_cpu - started_cpu
    setup_idle = max(0.0, args.threads * (marks[0][0] - started_wall) - (marks[0][1] - started_cpu))
    emit({"command": "python bench/profile_cores.py " + " ".join(
              "T" if a == args.table else a for a in sys.argv[1:]),
          "machine": machine(), "threads": args.threads, "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
          "cores": round(cpu / wall, 2), "idle_core_seconds": round(args.threads * wall - cpu, 1),
          "before_the_first_tier": {"wall_seconds": round(marks[0][0] - started_wall, 2),
                                    "idle_core_seconds": round(setup_idle, 2)},
          "most_idle": sorted(tiers, key=lambda t: -t["idle_core_seconds"])[:args.top],
          "tiers": tiers}, args.out)


if __name__ == "__main__":
    main()
