"""Start-up of the command line, timed as whole processes (best and median of --runs): what a
user waits for before anything happens -- `sowsolve --version`, a query of a small table, and
`analyse --time 0.2` (the 0.2 s of thinking included).  A long-lived engine (`sowsolve
engine`, bench/bench_protocol.py) pays it once.

    python bench/bench_startup.py [--runs 5] [--out F]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from report import emit, machine


def sowsolve() -> list[str]:
    return [sys.executable, "-c", "from sowsolve.cli.entry import main; main()"]


def timed(command: list[str], runs: int, env: dict) -> dict:
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=env)
        walls.append(time.perf_counter() - started)
    return {"best": round(min(walls), 3), "median": round(statistics.median(walls), 3),
            "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tables:
        env = dict(os.environ, SOWSOLVE_TABLES=tables)
        subprocess.run(sowsolve() + ["solve", "diffusion", "--cols", "4", "--stones", "2"],
                       check=True, capture_output=True, env=env)
        result = {"benchmark": "start-up of the command line", "machine": machine(),
                  "load_average_before": round(os.getloadavg()[0], 2),
                  "version": timed(sowsolve() + ["--version"], args.runs, env),
                  "help": timed(sowsolve() + ["--help"], args.runs, env),
                  "query_small_table": timed(sowsolve() + ["query", "2222/2222 A"], args.runs, env),
                  "analyse_time_0.2": timed(sowsolve() + ["analyse", "555555/555555 p - -",
                                                          "--time", "0.2"], args.runs, env),
                  "load_average_after": round(os.getloadavg()[0], 2)}
    emit(result, args.out)


if __name__ == "__main__":
    main()
