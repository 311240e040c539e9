"""A solve with the tiers it reads on disk (`--memory`), measured as JSON: one `sowsolve solve
... --memory M --json` process, its memory sampled from /proc every half second -- peak of
its own memory (RssAnon: what it allocated) and of its resident set (VmRSS: that plus the
mapped pages of lower tiers it touched, which are page cache the system may reclaim) -- and,
with --cgroup, run inside a memory cgroup (v1) limited to M, so the bound is the kernel's, not
a reading: the cgroup's peak (memory.max_usage_in_bytes, page cache included) and how often
the limit was hit (memory.failcnt: pages reclaimed to stay under it).

    python bench/bench_out_of_core.py --game zigzag --max-stones 22 --memory 8G --cgroup \\
        [--threads 2] [--dir DIR] [--out FILE]

The table is written to a temporary directory under --dir and removed.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time

from report import emit, machine, run_sampled

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
CGROUP_ROOT = "/sys/fs/cgroup/memory"


def size(text: str) -> int:
    return int(float(text[:-1]) * UNITS[text[-1].upper()]) if text[-1].upper() in UNITS else int(text)


def own_cgroup() -> str | None:
    """This process's memory cgroup (v1) folder, if it can hold a child."""
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.strip().split(":", 2)
                if "memory" in controllers.split(","):
                    folder = CGROUP_ROOT + path
                    return folder if os.access(folder, os.W_OK) else None
    except OSError:
        return None
    return None


def sample(pid: int, peaks: dict, done: threading.Event) -> None:
    while not done.is_set():
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    if key in ("RssAnon", "VmRSS", "RssFile"):
                        peaks[key] = max(peaks.get(key, 0), int(value.split()[0]) * 1024)
        except OSError:
            pass
        done.wait(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", default="zigzag")
    parser.add_argument("--max-stones", type=int, required=True)
    parser.add_argument("--memory", required=True)
    parser.add_argument("--cgroup", action="store_true")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dir", default=None)
    parser.add_argument("--out")
    args = parser.parse_args()
    limit = size(args.memory)
    folder = tempfile.mkdtemp(prefix="bench-ooc-", dir=args.dir)
    table = os.path.join(folder, "t.sqlite")
    beside = os.path.join(os.path.dirname(sys.executable), "sowsolve")
    command = [beside if os.path.exists(beside) else shutil.which("sowsolve") or "sowsolve", "solve", args.game, "--max-stones",
               str(args.max_stones), "--memory", args.memory, "--table", table, "--threads",
               str(args.threads), "--json"]
    group = None
    if args.cgroup:
        parent = own_cgroup()
        if parent is None:
            raise SystemExit("bench: no writable memory cgroup (v1) here; leave out --cgroup")
        group = os.path.join(parent, f"sowsolve-bench-{os.getpid()}")
        os.mkdir(group)
        with open(os.path.join(group, "memory.limit_in_bytes"), "w") as f:
            f.write(str(limit))
    try:
        def enter():                         # the child joins the group before it runs
            if group is not None:
                with open(os.path.join(group, "cgroup.procs"), "w") as f:
                    f.write(str(os.getpid()))
        child, out, err, wall, peaks = run_sampled(command, sample, enter)
        result = {"command": "python bench/bench_out_of_core.py " + " ".join(
                      f"--{k.replace('_', '-')} {'DIR' if k == 'dir' else v}" if v is not True
                      else f"--{k}"
                      for k, v in vars(args).items() if v not in (None, False) and k != "out"),
                  "machine": machine(), "solve": " ".join(command[1:]).replace(table, "T"),
                  "exit": child.returncode, "wall_seconds": round(wall, 1),
                  "memory_limit": limit,
                  "peak_own_memory": peaks.get("RssAnon"), "peak_resident": peaks.get("VmRSS"),
                  "peak_mapped_resident": peaks.get("RssFile")}
        estimate = [line for line in err.splitlines() if line.startswith("estimate")]
        result["estimate_line"] = estimate[0] if estimate else None
        if child.returncode == 0:
            solved = json.loads(out)
            result["positions"] = solved.get("positions_solved_now")
            result["solve_seconds"] = solved.get("seconds")
            result["table_bytes"] = os.path.getsize(table)
        else:
            result["stderr_tail"] = err.strip().splitlines()[-3:]
        if group is not None:
            for name in ("memory.max_usage_in_bytes", "memory.failcnt"):
                with open(os.path.join(group, name)) as f:
                    result["cgroup_" + name.split(".", 1)[1]] = int(f.read())
        result["lower_tier_files_left"] = [n for n in os.listdir(folder) if n.startswith(".sowsolve-lower-")]
        emit(result, args.out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if group is not None:
            for _ in range(50):
                try:
                    os.rmdir(group)
                    break
                except OSError:
                    time.sleep(0.2)


if __name__ == "__main__":
    main()
