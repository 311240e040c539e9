"""The speed of Overflow endgame tables, printed as JSON: for each disc limit D given,
`sowsolve solve overflow --size RxC --max-discs D --json` as one process under `/usr/bin/time -v`
(positions, solve seconds, positions per second, peak memory, the table's bytes on disk and per
position).

    python bench/bench_overflow_endgame.py --size 4x5 --max-discs 10 --max-discs 12
                                           [--threads T] [--keep DIR] [--out FILE]

--keep DIR leaves the tables in DIR (for `sowsolve prove --tables DIR`).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile

from report import emit, machine, time_process


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", default="4x5")
    parser.add_argument("--max-discs", type=int, action="append", required=True)
    parser.add_argument("--threads", type=int, default=0, help="solver threads (0: every core)")
    parser.add_argument("--keep", help="write the tables here and leave them")
    parser.add_argument("--out")
    args = parser.parse_args()
    exe = shutil.which("sowsolve") or "sowsolve"
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.keep or scratch
        os.makedirs(directory, exist_ok=True)
        for discs in args.max_discs:
            path = os.path.join(directory, f"overflow-size{args.size}-max{discs}.sqlite")
            run, wall, peak = time_process([exe, "solve", "overflow", "--size", args.size,
                                            "--max-discs", str(discs), "--threads",
                                            str(args.threads), "--table", path, "--force", "--json"])
            if run.returncode != 0:
                runs.append({"max_discs": discs, "failed": run.stderr.strip().splitlines()[-1:]})
                continue
            said = json.loads(run.stdout)
            positions, seconds = said["positions_solved_now"], said["seconds"]
            size = os.path.getsize(path)
            runs.append({"max_discs": discs, "positions": positions, "solve_seconds": seconds,
                         "positions_per_second": round(positions / seconds),
                         "wall_seconds": wall, "peak_rss_kb": peak, "table_bytes": size,
                         "table_bytes_per_position": round(size / positions, 3),
                         "peak_rss_bytes_per_position": round(peak * 1024 / positions, 2)})
    emit({"command": f"/usr/bin/time -v sowsolve solve overflow --size {args.size} --max-discs D "
                     f"--threads {args.threads} --table T --force --json",
          "machine": machine(), "size": args.size, "runs": runs}, args.out)


if __name__ == "__main__":
    main()
