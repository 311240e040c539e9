"""A solve on a local Dask cluster against the same solve in one process, as whole processes one
after the other on one machine, printed as JSON: wall time of each, the ratio, the cluster's
tasks and rounds, and whether every record of the two tables is the same.  Not part of CI (the
standard board takes minutes of both cores).

    python bench/bench_cluster.py --cols 6 --stones 4 --workers 2 --dir /tmp/cl --out cluster.json
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys

import numpy as np

from report import emit, machine, time_process
from sowsolve.tables.store import open_table


def sowsolve() -> str:
    return shutil.which("sowsolve", path=os.path.dirname(sys.executable)) or "sowsolve"


def solve(args, table: str, extra: list[str]) -> dict:
    command = [sowsolve(), "solve", args.game, "--cols", str(args.cols), "--stones",
               str(args.stones), "--table", table, "--force", "--json", *extra]
    run, wall, peak_kb = time_process(command)
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {run.stderr.strip()[-500:]}")
    result = json.loads(run.stdout)
    return {"command": " ".join(["sowsolve", *command[1:]]), "wall_seconds": wall,
            "driver_peak_mib": round(peak_kb / 1024, 1), "table_bytes": os.path.getsize(table),
            "cluster": result.get("cluster"), "start": result["start"]}


def same_records(a: str, b: str) -> dict:
    compared = 0
    with open_table(a) as here, open_table(b) as there:
        for tier in here.tiers:
            if not np.array_equal(here.tier_records(tier), there.tier_records(tier)):
                return {"compared": compared, "identical": False, "first_difference_tier": tier}
            compared += here.tier_size(tier)
    return {"compared": compared, "identical": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", default="diffusion", choices=["diffusion", "diffusion-v2"])
    parser.add_argument("--cols", type=int, default=6)
    parser.add_argument("--stones", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2, help="threads of the in-process solve")
    parser.add_argument("--dir", required=True, help="where both tables go")
    parser.add_argument("--out")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    here, there = os.path.join(args.dir, "threads.sqlite"), os.path.join(args.dir, "cluster.sqlite")
    threads = solve(args, here, ["--threads", str(args.threads)])
    cluster = solve(args, there, ["--workers", str(args.workers)])
    emit({"game": args.game, "cols": args.cols, "stones": args.stones, "machine": machine(),
          "in_process": threads, "cluster": cluster,
          "cluster_over_in_process": round(cluster["wall_seconds"] / threads["wall_seconds"], 3),
          "records": same_records(here, there)}, args.out)


if __name__ == "__main__":
    main()
