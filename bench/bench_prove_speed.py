"""The proof search's speed on a board too large to prove in a bench, two builds side by side:
the first `--nodes` expansions from the start (`Prover.run`, timed in the process, after the
endgame table at the leaves is loaded), of this checkout and of an earlier build (a directory
holding its built `sowsolve` package, put first on PYTHONPATH), alternating run by run.  One
thread: both builds expand the same positions, so the seconds compare the work of one
expansion (move generation, the table's look-ups, the leaves').

    python bench/bench_prove_speed.py --before DIR --size 4x5 --tables TABLES
                                      [--nodes 10000000] [--memory 2G] [--runs 2] [--out F]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from report import emit, machine

BUILDS = ("after", "before")

#: run in a fresh interpreter of the build under test
PROBE = """
import json, sys, time
from sowsolve.solver.games import make_game
from sowsolve.solver import proof as proofs
from sowsolve.tables import proving
size, tables, nodes, memory = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
game = make_game("overflow", size=size)
prepared = proving.prepare(game, game.initial(), tables=tables)
prover = proofs.prover_for(game, game.initial(), proofs.memory_entries(memory), prepared.leaves)
began = time.perf_counter()
prover.run(nodes, None, 1)
print(json.dumps({"nodes": prover.nodes, "seconds": time.perf_counter() - began}))
"""


def size_bytes(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def run(build: str | None, args) -> dict:
    env = dict(os.environ)
    if build is not None:
        env["PYTHONPATH"] = build + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", PROBE, args.size, args.tables, str(args.nodes),
                           str(size_bytes(args.memory))], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        return {"failed": done.stderr.strip().splitlines()[-1:]}
    said = json.loads(done.stdout)
    return {"nodes": said["nodes"], "seconds": round(said["seconds"], 2),
            "per_second": round(said["nodes"] / said["seconds"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="a directory holding the earlier build's sowsolve package")
    parser.add_argument("--size", default="4x5")
    parser.add_argument("--tables", required=True, help="a directory with the board's endgame table")
    parser.add_argument("--nodes", type=int, default=10_000_000)
    parser.add_argument("--memory", default="2G", help="the search's table")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--out")
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.before, "sowsolve")):
        parser.error(f"{args.before} holds no sowsolve package (DIR/sowsolve)")
    rows = {build: [] for build in BUILDS}
    for _ in range(args.runs):
        for build in BUILDS:                          # alternating: the machine's drift shared
            rows[build].append(run(args.before if build == "before" else None, args))
    result = {"command": f"python bench/bench_prove_speed.py --before DIR --size {args.size} --tables TABLES "
                         f"--nodes {args.nodes} --memory {args.memory} --runs {args.runs}",
              "machine": machine(), "size": args.size, "threads": 1, "runs": rows}
    medians = {}
    for build in BUILDS:
        done = [r for r in rows[build] if "failed" not in r]
        if done:
            medians[build] = statistics.median(r["seconds"] for r in done)
            result[f"{build}_seconds_median"] = medians[build]
    if len(medians) == 2:
        result["after_over_before"] = round(medians["after"] / medians["before"], 3)
    emit(result, args.out)


if __name__ == "__main__":
    main()
