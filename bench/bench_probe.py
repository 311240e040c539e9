"""Probe latency of finished tables, printed as JSON: the same random positions probed through
the API in a fresh reader (cold: mostly blocks not yet decoded) and again (warm: 16 of them, cached), and
`sowsolve query` of a position as a whole process.  Tables of one game with different block
sizes or format versions compare side by side.

    python bench/bench_probe.py --table std.sqlite --table old.sqlite --query '444444/444444 A' \
        [--check 25000] [--export 12]
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from report import emit, machine
from sowsolve.tables.store import open_table


def bench_table(path: str, probes: int, query: str | None, runs: int) -> dict:
    with open_table(path) as table:
        rng = random.Random(1)
        tiers = [t for t in table.tiers if table.tier_size(t)]
        positions = []
        for _ in range(probes):
            tier = rng.choice(tiers)
            index = rng.randrange(table.tier_size(tier))
            positions.append(table.stored_positions(tier, index, index + 1)[0])
        meta = table.meta
        positions_total = sum(table.tier_size(t) for t in table.tiers)
    with open_table(path) as table:
        started = time.perf_counter()
        for p in positions:
            table.probe(p)
        cold = (time.perf_counter() - started) / probes
        again = positions[:16] * (probes // 16)        # 16 blocks at most: all stay cached
        started = time.perf_counter()
        for p in again:
            table.probe(p)
        warm = (time.perf_counter() - started) / len(again)
    result = {"table": os.path.basename(path), "game": meta["game"],
              "format_version": meta["format_version"], "block_records": meta["block_records"],
              "table_bytes": os.path.getsize(path),
              "bytes_per_position": round(os.path.getsize(path) / positions_total, 4),
              "probes": probes, "probe_cold_ms": round(cold * 1e3, 3),
              "probe_warm_ms": round(warm * 1e3, 4)}
    if query:
        command = shutil.which("sowsolve", path=os.path.dirname(sys.executable)) or "sowsolve"
        walls = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run([command, "query", query, "--table", path],
                           check=True, capture_output=True)
            walls.append(time.perf_counter() - started)
        result["query"] = {"position": query, "runs": runs,
                           "median_seconds": round(statistics.median(walls), 3),
                           "min_seconds": round(min(walls), 3)}
    return result


def time_command(args: list[str]) -> dict:
    """One whole `sowsolve` process: its wall time and the last line it printed."""
    command = shutil.which("sowsolve", path=os.path.dirname(sys.executable)) or "sowsolve"
    started = time.perf_counter()
    run = subprocess.run([command, *args], capture_output=True, text=True)
    lines = (run.stdout or run.stderr).strip().splitlines()
    return {"command": " ".join(["sowsolve", *args]), "exit_code": run.returncode,
            "wall_seconds": round(time.perf_counter() - started, 1),
            "last_line": lines[-1] if lines else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--table", action="append", required=True, help="a finished table (repeatable)")
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--query", help="a position to time `sowsolve query` on, in every table")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--check", type=int, metavar="SAMPLES",
                        help="also time `sowsolve check --samples SAMPLES` of the first table")
    parser.add_argument("--export", type=int, metavar="STONES",
                        help="also time `sowsolve export --max-stones STONES` of the first table")
    parser.add_argument("--out")
    args = parser.parse_args()
    result = {"machine": machine(),
              "tables": [bench_table(t, args.probes, args.query, args.runs) for t in args.table]}
    first = args.table[0]
    if args.check is not None:
        result["check"] = time_command(["check", "--table", first, "--samples", str(args.check)])
    if args.export is not None:
        with tempfile.TemporaryDirectory() as tmp:
            result["export"] = time_command(["export", "--table", first, "--format", "csv",
                                             "--max-stones", str(args.export),
                                             "--out", os.path.join(tmp, "e.csv")])
    emit(result, args.out)


if __name__ == "__main__":
    main()
