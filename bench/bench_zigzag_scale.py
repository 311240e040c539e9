"""Zig Zag at scale, printed as JSON: whole solves of the boards given (full boards and
endgame tables of the standard board), each as one `sowsolve solve ... --json` process under
`/usr/bin/time -v`: positions, solve seconds, wall seconds, peak memory, table bytes, the
longest win (`sowsolve info`); for a solve that stops, the sentence it stops with.

    python bench/bench_zigzag_scale.py --board 4x3 --board 6x5/16 [--threads 2] [--out FILE]

A board is COLSxSTONES, with /S for an endgame table of at most S seeds.  Tables are written to
a temporary directory and removed.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from report import emit, machine, time_process


def run_one(board: str, threads: int, directory: str) -> dict:
    match = re.fullmatch(r"(\d+)x(\d+)(?:/(\d+))?", board)
    if match is None:
        raise SystemExit(f"bench: a board is COLSxSTONES[/MAX_SEEDS], not {board!r}")
    cols, stones, max_stones = match.groups()
    table = os.path.join(directory, f"zz-{cols}x{stones}-{max_stones}.sqlite")
    command = [shutil.which("sowsolve") or "sowsolve", "solve", "zigzag", "--cols", cols,
               "--stones", stones, "--table", table, "--threads", str(threads), "--json",
               "--allow-large"]
    if max_stones:
        command += ["--max-stones", max_stones]
    timed, seconds, peak = time_process(command)
    if timed.returncode != 0:
        said = [line for line in timed.stderr.splitlines() if line.startswith("sowsolve:")]
        return {"board": board, "failed": said[-1] if said else timed.stderr.strip().splitlines()[-1]}
    solved = json.loads(timed.stdout)
    size = os.path.getsize(table)
    info = json.loads(subprocess.run([command[0], "info", "--table", table, "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    os.remove(table)
    return {"board": board, "cols": int(cols), "stones": int(stones),
            "max_stones": int(max_stones) if max_stones else None,
            "positions": solved["positions_per_side"], "solve_seconds": solved["solve_seconds"],
            "wall_seconds": seconds, "peak_rss_kb": peak, "table_bytes": size,
            "positions_per_second": round(solved["positions_per_side"] / max(solved["solve_seconds"], 1e-9)),
            "start": solved.get("start"), "longest_win": info.get("longest_win")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--board", action="append", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as directory:
        for board in args.board:
            runs.append(run_one(board, args.threads, directory))
            print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
    emit({"command": "/usr/bin/time -v sowsolve solve zigzag --cols C --stones K [--max-stones S] "
                     "--threads T --json",
          "machine": machine(),
          "threads": args.threads, "runs": runs}, args.out)


if __name__ == "__main__":
    main()
