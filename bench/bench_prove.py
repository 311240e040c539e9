"""The proof search against the full solve, printed as JSON: for each Overflow board given,
`sowsolve prove overflow --size RxC --json` and `sowsolve solve overflow --size RxC --json`
(each one process under `/usr/bin/time -v`): value, positions expanded or solved, seconds,
peak memory, and the ratio of the two times; then the proof written (`prove --proof`) and
checked (`check --proof`), each timed the same way.

    python bench/bench_prove.py --size 3x4 --size 4x4 [--memory 1G] [--threads T] [--no-solve]
                                [--out FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile

from report import emit, machine, time_process


def timed(command: list[str]) -> tuple[dict | None, float, int, str]:
    """(JSON printed or None, wall seconds, peak RSS in KB, last error line)."""
    run, seconds, peak = time_process(command)
    said = [line for line in run.stderr.splitlines() if line.startswith("sowsolve:")]
    return (json.loads(run.stdout) if run.returncode == 0 else None), seconds, peak, \
        (said[-1] if said else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", action="append", required=True)
    parser.add_argument("--memory", default="1G")
    parser.add_argument("--threads", type=int, default=0, help="prove --threads (0: every core)")
    parser.add_argument("--no-solve", action="store_true", help="prove only")
    parser.add_argument("--out")
    args = parser.parse_args()
    exe = shutil.which("sowsolve") or "sowsolve"
    runs = []
    with tempfile.TemporaryDirectory() as directory:
        for size in args.size:
            prove = [exe, "prove", "overflow", "--size", size, "--memory", args.memory, "--threads",
                     str(args.threads), "--json"]
            proved, seconds, peak, error = timed(prove)
            run = {"size": size, "prove": {"value": proved and proved["value"],
                                           "winning_moves": proved and proved["winning_moves"],
                                           "nodes": proved and proved["nodes"],
                                           "threads": proved and proved["threads"],
                                           "search_seconds": proved and proved["seconds"],
                                           "wall_seconds": seconds,
                                           "peak_rss_kb": peak, "failed": error or None}}
            proof = os.path.join(directory, f"o{size}.proof")
            written, seconds, peak, error = timed(prove + ["--proof", proof])
            run["proof"] = {"wall_seconds": seconds, "peak_rss_kb": peak, "failed": error or None,
                            "winner_positions": written and written["proof"]["winner_positions"],
                            "bytes": written and written["proof"]["bytes"]}
            if written:
                checked, seconds, peak, error = timed([exe, "check", "--proof", proof, "--json"])
                run["check"] = {"wall_seconds": seconds, "peak_rss_kb": peak, "failed": error or None,
                                "positions_verified": checked and checked["positions_verified"],
                                "reference_positions": checked and checked["reference_positions"]}
            if not args.no_solve:
                table = os.path.join(directory, f"o{size}.sqlite")
                solved, seconds, peak, error = timed([exe, "solve", "overflow", "--size", size, "--table",
                                                      table, "--json", "--allow-large"])
                run["solve"] = {"positions": solved and solved.get("positions_per_side"),
                                "wall_seconds": seconds, "peak_rss_kb": peak, "failed": error or None}
                if proved and solved:
                    run["solve_over_prove"] = round(run["solve"]["wall_seconds"] / run["prove"]["wall_seconds"], 2)
            runs.append(run)
    emit({"command": "/usr/bin/time -v sowsolve prove overflow --size RxC --memory M --threads T --json "
                     "[--proof FILE]; /usr/bin/time -v sowsolve solve overflow --size RxC --json; "
                     "/usr/bin/time -v sowsolve check --proof FILE --json",
          "machine": machine(),
          "memory": args.memory, "runs": runs}, args.out)


if __name__ == "__main__":
    main()
