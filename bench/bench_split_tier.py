"""Score tiers split across the workers of a local Dask cluster, against the same solve in one
process, measured as JSON: `sowsolve solve zigzag --max-stones S --threads 2` and `sowsolve
solve zigzag --max-stones S --workers 2` (every score tier of 2^22 positions or more split
into one block per worker, as the command does by default), taken in turn, each process of each run sampled from /proc
every half second -- the peak of its own memory (RssAnon) and of its resident set (VmRSS) --
and the two tables compared record by record.

    python bench/bench_split_tier.py --max-stones 16 [--workers 2] [--runs 1] [--dir DIR]
        [--out FILE]

The ratio is the cluster's wall time over the one process's; each worker's peak is set
against the one process's peak (the largest tier with its window).  The exchange's figures
(rounds, bytes, seconds the parts waited) come from the cluster solve's own report.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading

import numpy as np

from report import emit, machine, run_sampled
from sowsolve.tables.store import open_table


def tree(root: int) -> list[int]:
    """root and every process below it."""
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                parents.setdefault(int(fields[1]), []).append(int(name))
            except OSError:
                continue
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, []))
    return found


def role(pid: int, root: int) -> str:
    if pid == root:
        return "driver"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            line = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "gone"
    return "spawned" if "multiprocessing" in line else "other"


def sample(root: int, peaks: dict, done: threading.Event) -> None:
    while not done.is_set():
        for pid in tree(root):
            try:
                with open(f"/proc/{pid}/status") as f:
                    seen = {}
                    for line in f:
                        key, _, value = line.partition(":")
                        if key in ("RssAnon", "VmRSS"):
                            seen[key] = int(value.split()[0]) * 1024
            except OSError:
                continue
            entry = peaks.setdefault(pid, {"role": role(pid, root), "RssAnon": 0, "VmRSS": 0})
            for key, value in seen.items():
                entry[key] = max(entry[key], value)
        done.wait(0.5)


def run(command: list[str]) -> dict:
    child, out, err, wall, peaks = run_sampled(command, sample)
    if child.returncode != 0:
        raise SystemExit(f"bench: {' '.join(command[:4])} failed: {err.strip()[-400:]}")
    return {"wall_seconds": round(wall, 1), "report": json.loads(out),
            "processes": sorted(peaks.values(), key=lambda p: -p["RssAnon"])}


def same_records(a: str, b: str) -> bool:
    with open_table(a) as here, open_table(b) as there:
        return here.tiers == there.tiers and all(
            np.array_equal(here.tier_records(t), there.tier_records(t))
            and np.array_equal(here._long_table(t), there._long_table(t)) for t in here.tiers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-stones", type=int, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--dir", default=None)
    parser.add_argument("--out")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-split-", dir=args.dir)
    beside = os.path.join(os.path.dirname(sys.executable), "sowsolve")
    program = beside if os.path.exists(beside) else shutil.which("sowsolve") or "sowsolve"
    try:
        runs = []
        for k in range(args.runs):
            here, there = (os.path.join(folder, f"{name}-{k}.sqlite") for name in ("one", "split"))
            base = [program, "solve", "zigzag", "--max-stones", str(args.max_stones), "--json"]
            one = run(base + ["--threads", "2", "--table", here])
            split = run(base + ["--workers", str(args.workers), "--table", there])
            workers = [p for p in split["processes"] if p["role"] == "spawned"]
            workers = sorted(workers, key=lambda p: -p["RssAnon"])[:args.workers]
            peak_one = one["processes"][0]
            runs.append({
                "in_process": {"wall_seconds": one["wall_seconds"],
                               "solve_seconds": one["report"].get("seconds"),
                               "peak_own_memory": peak_one["RssAnon"],
                               "peak_resident": peak_one["VmRSS"]},
                "split": {"wall_seconds": split["wall_seconds"],
                          "solve_seconds": split["report"].get("seconds"),
                          "cluster": split["report"].get("cluster"),
                          "driver_peak_own_memory": next(
                              p["RssAnon"] for p in split["processes"] if p["role"] == "driver"),
                          "worker_peak_own_memory": [w["RssAnon"] for w in workers],
                          "worker_peak_resident": [w["VmRSS"] for w in workers]},
                "time_ratio": round(split["wall_seconds"] / one["wall_seconds"], 2),
                "worker_over_one_process_own_memory": round(
                    max(w["RssAnon"] for w in workers) / peak_one["RssAnon"], 2),
                "worker_over_one_process_resident": round(
                    max(w["VmRSS"] for w in workers) / peak_one["VmRSS"], 2),
                "identical_records": same_records(here, there),
                "positions": one["report"].get("positions_solved_now")})
            for path in (here, there):
                os.unlink(path)
        emit({"command": "python bench/bench_split_tier.py " + " ".join(
                  f"--{k.replace('_', '-')} {'DIR' if k == 'dir' else v}"
                  for k, v in vars(args).items() if v is not None and k != "out"),
              "machine": machine(), "runs": runs}, args.out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
