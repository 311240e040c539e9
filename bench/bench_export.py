"""Exports at table scale, timed as whole processes: `sowsolve export` of a table as Parquet
(a folder, one file a tier) and as CSV, with the rows a second, the peak memory and the size
on disk -- the figures of docs/export.md.

    python bench/bench_export.py --table T.sqlite [--parquet] [--csv] [--max-stones S]
        [--csv-max-stones S] [--threads N] [--out F]

The standard Diffusion v1 table (`sowsolve solve diffusion`, 2,175,504,513 positions a side to
move; every export row is a position with a side to move: 4,351,009,026 rows) is the one the
targets are set for: Parquet in at most 10 minutes and 12 GB, CSV at 5 M rows a second.
Where the whole CSV would not fit the disk (about 100 GB), --csv-max-stones exports the tiers
up to that many stones, written to a file all the same.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

from report import emit, machine, time_process


def sowsolve() -> list[str]:
    return [sys.executable, "-c", "from sowsolve.cli.entry import main; main()"]


def folder_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(path) for name in names)


def rows_written(stderr: str) -> int:
    for line in stderr.splitlines():
        if line.startswith("wrote "):
            return int(line.split()[1].replace(",", ""))
    raise RuntimeError(f"the export said no row count: {stderr[-300:]}")


def run(args, fmt: str, max_stones: int | None, work: str) -> dict:
    out = os.path.join(work, "export.parquet" if fmt == "parquet" else "export.csv")
    command = sowsolve() + ["export", "--table", args.table, "--format", fmt, "--out", out]
    if fmt == "parquet" and not args.text:
        command.append("--no-text")
    if max_stones is not None:
        command += ["--max-stones", str(max_stones)]
    if args.threads:
        command += ["--threads", str(args.threads)]
    finished, wall, peak_kb = time_process(command)
    if finished.returncode != 0:
        raise RuntimeError(f"export failed: {finished.stderr[-500:]}")
    rows = rows_written(finished.stderr)
    size = folder_bytes(out) if os.path.isdir(out) else os.path.getsize(out)
    shutil.rmtree(out, ignore_errors=True) if os.path.isdir(out) else os.unlink(out)
    return {"format": fmt, "max_stones": max_stones, "text_column": args.text if fmt == "parquet" else True,
            "rows": rows, "wall_seconds": wall, "rows_per_second": round(rows / wall) if wall else None,
            "peak_memory_mb": round(peak_kb / 1024), "bytes_on_disk": size,
            "bytes_per_row": round(size / rows, 3) if rows else None,
            "load_average_after": round(os.getloadavg()[0], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True)
    parser.add_argument("--parquet", action="store_true")
    parser.add_argument("--csv", action="store_true")
    parser.add_argument("--max-stones", type=int, help="Parquet: only the tiers up to this many stones")
    parser.add_argument("--csv-max-stones", type=int)
    parser.add_argument("--text", action="store_true", help="Parquet: with the position text column")
    parser.add_argument("--threads", type=int)
    parser.add_argument("--work", help="folder the exports are written into (removed after)")
    parser.add_argument("--out")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="bench-export-", dir=os.path.dirname(os.path.abspath(args.table)))
    results = {"benchmark": "export at table scale", "machine": machine(),
               "table": os.path.basename(args.table), "table_bytes": os.path.getsize(args.table),
               "load_average_before": round(os.getloadavg()[0], 2), "runs": []}
    try:
        if args.parquet:
            results["runs"].append(run(args, "parquet", args.max_stones, work))
        if args.csv:
            results["runs"].append(run(args, "csv", args.csv_max_stones, work))
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    emit(results, args.out)


if __name__ == "__main__":
    main()
