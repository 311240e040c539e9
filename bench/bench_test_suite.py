"""The test suite's wall time, printed as JSON: `pytest -m "not slow"` (the everyday subset) and
`pytest` (every test), each run once from the repository's root as the README runs them, with
the load average before each (the figures are of an idle machine only where it says ~0).

    python bench/bench_test_suite.py [--only everyday|full] [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

from report import emit, machine

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = {"everyday": ["-m", "not slow"], "full": []}


def run(args: list[str]) -> dict:
    load = os.getloadavg()
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    counts = {kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed|skipped|deselected|error)",
                                                     done.stdout + done.stderr)}
    return {"command": " ".join(["pytest", *(f'"{a}"' if " " in a else a for a in args)]),
            "exit": done.returncode, "wall_seconds": round(wall, 1), "tests": counts,
            "load_average_before": [round(x, 2) for x in load]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=list(RUNS), action="append")
    parser.add_argument("--out")
    args = parser.parse_args()
    result = {"machine": machine()}
    for name in args.only or list(RUNS):
        result[name] = run(RUNS[name])
    emit(result, args.out)


if __name__ == "__main__":
    main()
