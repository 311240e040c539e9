"""The proof search's table compared between two builds, side by side in one run: `sowsolve
prove overflow --size RxC --threads T --memory M --json` of this checkout and of an earlier
build (a directory holding its built `sowsolve` package, put first on PYTHONPATH), alternating
run by run, each one process under `/usr/bin/time -v`: the value, positions expanded, entries
the table holds, entries replaced, wall seconds and peak memory.  With one thread the
expansions are the same every run of a build: they show what the table's size and replacement
change; a memory too small for the search shows what an entry's size buys.

    python bench/bench_prove_table.py --before DIR --size 4x4 --memory 160M --memory 1G
        [--threads 1] [--runs 2] [--tables TABLES] [--out F]

With --tables the lines end in the board's endgame table there (its loading is outside the
search's seconds, inside the wall's).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

from report import emit, machine, time_process

BUILDS = ("after", "before")


def prove(size: str, memory: str, threads: int, before: str | None, tables: str | None = None) -> dict:
    env = dict(os.environ)
    if before is not None:
        env["PYTHONPATH"] = before + os.pathsep + env.get("PYTHONPATH", "")
    command = [sys.executable, "-c", "from sowsolve.cli.entry import main; main()", "prove",
               "overflow", "--size", size, "--threads", str(threads), "--memory", memory, "--json"]
    if tables is not None:
        command += ["--tables", tables]
    run, seconds, peak = time_process(command, env)
    if run.returncode != 0:
        return {"failed": run.stderr.strip().splitlines()[-1:]}
    said = json.loads(run.stdout)
    return {"value": said["value"], "nodes": said["nodes"], "entries": said["table_entries"],
            "replaced": said["entries_replaced"], "search_seconds": said["seconds"],
            "wall_seconds": seconds, "peak_rss_kb": peak}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="a directory holding the earlier build's "
                        "sowsolve package")
    parser.add_argument("--size", default="4x4")
    parser.add_argument("--memory", action="append", required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--tables", help="a directory with the board's endgame table, at the leaves")
    parser.add_argument("--out")
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.before, "sowsolve")):
        parser.error(f"{args.before} holds no sowsolve package (DIR/sowsolve)")
    result = {"command": "python bench/bench_prove_table.py " + " ".join(
                  "DIR" if a == args.before else "TABLES" if a == args.tables else a for a in sys.argv[1:]),
              "machine": machine(), "size": args.size, "threads": args.threads, "runs": [],
              "by_memory": {}}
    for memory in args.memory:
        rows = {build: [] for build in BUILDS}
        for _ in range(args.runs):
            for build in BUILDS:                      # alternating: the machine's drift shared
                row = prove(args.size, memory, args.threads,
                            args.before if build == "before" else None, args.tables)
                rows[build].append(row)
                result["runs"].append({"memory": memory, "build": build, **row})
        summary = {}
        for build in BUILDS:
            done = [r for r in rows[build] if "failed" not in r]
            if done:
                summary[build] = {"value": done[0]["value"], "nodes": done[0]["nodes"],
                                  "entries": done[0]["entries"],
                                  "replaced": done[0]["replaced"],
                                  "search_seconds_median": statistics.median(r["search_seconds"] for r in done),
                                  "wall_seconds_median": statistics.median(r["wall_seconds"] for r in done),
                                  "peak_rss_kb_max": max(r["peak_rss_kb"] for r in done)}
        if len(summary) == 2:
            summary["wall_after_over_before"] = round(
                summary["after"]["wall_seconds_median"] / summary["before"]["wall_seconds_median"], 3)
            summary["nodes_after_over_before"] = round(
                summary["after"]["nodes"] / summary["before"]["nodes"], 3)
        result["by_memory"][memory] = summary
    emit(result, args.out)


if __name__ == "__main__":
    main()
