"""The proof search on a local Dask cluster against the search in process, printed as JSON: for
each Overflow board given, `sowsolve prove overflow --size RxC --memory M --threads 2 --json`
and `sowsolve prove overflow --size RxC --memory M --workers 2 --json` (each one process under
`/usr/bin/time -v`, the cluster started and stopped inside it), --runs times each, alternating:
value, positions expanded, wall seconds, peak memory of the driver, and the ratio of the
medians of the wall times (cluster over in process).

    python bench/bench_prove_cluster.py --size 4x4 [--memory 1G] [--runs 3] [--out FILE]

--memory is the table of the search in process, and each worker's table on the cluster.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics

from report import emit, machine, time_process


def run_once(size: str, memory: str, where: list[str]) -> dict:
    command = ["sowsolve", "prove", "overflow", "--size", size, "--memory", memory, "--json", *where]
    done, seconds, peak = time_process(command)
    said = json.loads(done.stdout) if done.returncode == 0 else None
    return {"exit": done.returncode, "value": said and said.get("value"),
            "nodes": said and said.get("nodes"), "wall_seconds": round(seconds, 2),
            "peak_rss_kb": peak, "error": None if said else done.stderr.strip()[-300:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", action="append", required=True)
    parser.add_argument("--memory", default="1G")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out")
    args = parser.parse_args()
    boards = []
    load_before = [round(x, 2) for x in os.getloadavg()]
    for size in args.size:
        runs = {"in_process": [], "cluster": []}
        for _ in range(args.runs):
            runs["in_process"].append(run_once(size, args.memory, ["--threads", "2"]))
            runs["cluster"].append(run_once(size, args.memory, ["--workers", "2"]))
        medians = {k: statistics.median(r["wall_seconds"] for r in v) for k, v in runs.items()}
        boards.append({"size": size, **runs, "median_wall_seconds": medians,
                       "cluster_over_in_process": round(medians["cluster"] / medians["in_process"], 2)})
    emit({"command": "python bench/bench_prove_cluster.py " + " ".join(
              f"--size {s}" for s in args.size) + f" --memory {args.memory} --runs {args.runs}",
          "machine": machine(), "load_average_before": load_before,
          "load_average_after": [round(x, 2) for x in os.getloadavg()], "boards": boards}, args.out)


if __name__ == "__main__":
    main()
