"""What endgame tables at the leaves save the proof search, printed as JSON: for an Overflow
board, `sowsolve prove overflow --size RxC --threads 1 --json` without tables and with the
board's endgame table of at most D discs (`solve --max-discs D`, each in a directory of its
own) for each D given: value, positions expanded, seconds (one thread, so the expansions are
the same every run).

    python bench/bench_prove_leaves.py --size 4x4 --max-discs 8 --max-discs 10 [--memory 1G]
                                       [--out FILE]
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
    parser.add_argument("--size", default="4x4")
    parser.add_argument("--max-discs", type=int, action="append", required=True)
    parser.add_argument("--memory", default="1G")
    parser.add_argument("--out")
    args = parser.parse_args()
    exe = shutil.which("sowsolve") or "sowsolve"
    prove = [exe, "prove", "overflow", "--size", args.size, "--threads", "1", "--memory",
             args.memory, "--json"]
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        for discs in [None, *args.max_discs]:
            folder = os.path.join(scratch, f"d{discs}")
            os.makedirs(folder)
            run = {"max_discs": discs}
            if discs is not None:
                solved, wall, peak = time_process([exe, "solve", "overflow", "--size", args.size,
                                                   "--max-discs", str(discs), "--table",
                                                   os.path.join(folder, "t.sqlite"), "--json"])
                said = json.loads(solved.stdout)
                run["table"] = {"positions": said["positions_solved_now"],
                                "solve_seconds": said["seconds"], "peak_rss_kb": peak}
            proved, wall, peak = time_process(prove, env={**os.environ, "SOWSOLVE_TABLES": folder})
            said = json.loads(proved.stdout)
            run.update(value=said["value"], nodes=said["nodes"], search_seconds=said["seconds"],
                       wall_seconds=wall, peak_rss_kb=peak, tables=said.get("tables"))
            runs.append(run)
    emit({"command": f"sowsolve prove overflow --size {args.size} --threads 1 --memory "
                     f"{args.memory} --json, $SOWSOLVE_TABLES holding the endgame table of at "
                     f"most D discs (none for D null)",
          "machine": machine(), "size": args.size, "runs": runs}, args.out)


if __name__ == "__main__":
    main()
