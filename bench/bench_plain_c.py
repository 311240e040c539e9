"""sowsolve's Diffusion solve against a plain C solver of the same game, in one run, printed as
JSON: the C program (bench/plain_diffusion.c, compiled here with the system's C compiler,
`-O2 -fopenmp`) solves every board of the size for A to move with two threads and writes
nothing; `sowsolve solve diffusion` solves and writes its table as usual.  Each runs as one
process under `/usr/bin/time -v`, one after the other; the figure is the ratio of their wall
times (sowsolve over C), and both must give the start the same record.  The C program is the
simple way to write the solver: every board indexed in base 6, sorted by RULES.md's potential,
solved level by level with the levels split between the threads (see its header).

    python bench/bench_plain_c.py [--cols 6] [--stones 4] [--threads 2] [--out FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile

from report import emit, machine, time_process

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cols", type=int, default=6)
    parser.add_argument("--stones", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out")
    args = parser.parse_args()
    cc = os.environ.get("CC", "cc")
    exe = shutil.which("sowsolve") or "sowsolve"
    environment = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    with tempfile.TemporaryDirectory() as directory:
        plain = os.path.join(directory, "plain_diffusion")
        subprocess.run([cc, "-O2", "-fopenmp", os.path.join(HERE, "plain_diffusion.c"), "-o", plain],
                       check=True)
        run, c_seconds, c_peak = time_process([plain, str(args.cols), str(args.stones)], environment)
        if run.returncode != 0:
            raise SystemExit(f"the plain C solver failed: {run.stderr.strip()[-300:]}")
        c_said = json.loads(run.stdout)
        table = os.path.join(directory, "d.sqlite")
        run, seconds, peak = time_process([exe, "solve", "diffusion", "--cols", str(args.cols), "--stones",
                                           str(args.stones), "--threads", str(args.threads), "--table",
                                           table, "--json"], environment)
        if run.returncode != 0:
            raise SystemExit(f"sowsolve solve failed: {run.stderr.strip()[-300:]}")
        solved = json.loads(run.stdout)
        query = subprocess.run([exe, "query", "--table", table, "--json",
                                " ".join(["/".join([str(args.stones) * args.cols] * 2), "A"])],
                               capture_output=True, text=True, check=True)
        start = json.loads(query.stdout)
        table_bytes = os.path.getsize(table)
    outcome = {"win": 3, "loss": 1}[start["value"]]
    emit({"command": f"/usr/bin/time -v plain_diffusion {args.cols} {args.stones}; /usr/bin/time -v sowsolve "
                     f"solve diffusion --cols {args.cols} --stones {args.stones} --threads {args.threads} "
                     f"--table T --json (OMP_NUM_THREADS={args.threads})",
          "machine": machine(),
          "plain_c": {"wall_seconds": c_seconds, "peak_rss_kb": c_peak, "positions": c_said["positions"],
                      "start_record": c_said["start_record"]},
          "sowsolve": {"wall_seconds": seconds, "peak_rss_kb": peak,
                       "positions_per_side": solved.get("positions_per_side"),
                       "table_bytes": table_bytes,
                       "start": {"value": start["value"], "remoteness": start["remoteness"]},
                       "start_record": (start["remoteness"] << 2) | outcome},
          "same_start": c_said["start_record"] == (start["remoteness"] << 2) | outcome,
          "sowsolve_over_c": round(seconds / c_seconds, 2)}, args.out)


if __name__ == "__main__":
    main()
