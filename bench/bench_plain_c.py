"""sowsolve's standard Diffusion solve against the yardstick, a plain C solver of the same game,
side by side in one run, printed as JSON (and written with --out).

The yardstick is a C program kept outside the project (`--yardstick`, by default
../shared/yardsticks/diffusion_plain.c beside the repository; when it is not there the bench says
so and exits with 1).  It is compiled here with the system's C compiler (`-O2 -fopenmp`, as its
header says) and run as `diffusion_plain COLS VARIANT STONES -noreach -threads T`: it solves every
board of 0..5 stones per pit for A to move with T OpenMP threads and writes nothing; its
"solve:" line gives its wall time.  `sowsolve solve diffusion` (or diffusion-v2) solves and writes
its table as usual, into a scratch directory.

The two run one after the other, alternating (sowsolve, yardstick, sowsolve, yardstick, ...),
`--runs` times each, every run one process under `/usr/bin/time -v` (wall time, peak resident
memory), with the load average read before and after each run: the machine may be shared, so
only figures taken side by side in one run compare.  The figure is `sowsolve_over_yardstick`:
the median of sowsolve's whole-process wall times over the median of the yardstick's solve
times (its "solve:" line, which leaves out its statistics pass after the solve; over its
whole-process time the ratio is lower, and is given too).  Both must give the start the same
record.

    python bench/bench_plain_c.py [--yardstick FILE] [--variant 1] [--runs 2] [--threads 2]
                                  [--sowsolve EXE] [--keep-table FILE] [--out FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

from report import emit, machine, time_process

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_YARDSTICK = os.path.join("..", "shared", "yardsticks", "diffusion_plain.c")


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def cpu_seconds(run: subprocess.CompletedProcess) -> float:
    """User plus system CPU seconds of a run under `/usr/bin/time -v` (what the load does not
    stretch as it stretches wall time)."""
    user = re.search(r"User time \(seconds\): ([\d.]+)", run.stderr)
    system = re.search(r"System time \(seconds\): ([\d.]+)", run.stderr)
    return round(float(user[1]) + float(system[1]), 1) if user and system else None


def run_yardstick(program: str, args, environment: dict) -> dict:
    before = load()
    run, wall, peak = time_process([program, str(args.cols), str(args.variant), str(args.stones),
                                    "-noreach", "-threads", str(args.threads)], environment)
    after = load()
    if run.returncode != 0:
        raise SystemExit(f"the yardstick failed (exit {run.returncode}): {run.stderr.strip()[-300:]}")
    solve = re.search(r"^solve: .* wall ([\d.]+)s cpu ([\d.]+)s", run.stdout, re.M)
    start = re.search(r"start A-to-move ([WL]) rem (\d+)", run.stdout)
    if not solve or not start:
        raise SystemExit("the yardstick printed no 'solve:' or 'RESULT' line")
    return {"program": "yardstick", "wall_seconds": wall, "cpu_seconds": cpu_seconds(run),
            "solve_wall_seconds": float(solve[1]),
            "solve_cpu_seconds": float(solve[2]), "peak_rss_kb": peak,
            "start": {"value": "win" if start[1] == "W" else "loss", "remoteness": int(start[2])},
            "load_before": before, "load_after": after}


def run_sowsolve(exe: str, args, environment: dict, scratch: str, keep: str | None) -> dict:
    game = "diffusion" if args.variant == 1 else "diffusion-v2"
    table = os.path.join(scratch, "d.sqlite")
    before = load()
    run, wall, peak = time_process([exe, "solve", game, "--cols", str(args.cols), "--stones",
                                    str(args.stones), "--threads", str(args.threads), "--table",
                                    table, "--json"], environment)
    after = load()
    if run.returncode != 0:
        raise SystemExit(f"sowsolve solve failed (exit {run.returncode}): {run.stderr.strip()[-300:]}")
    solved = json.loads(run.stdout)
    start_text = " ".join(["/".join([str(args.stones) * args.cols] * 2), "A"])
    query = subprocess.run([exe, "query", "--table", table, "--json", start_text],
                           capture_output=True, text=True, check=True)
    start = json.loads(query.stdout)
    table_bytes = os.path.getsize(table)
    positions = solved.get("positions_per_side")
    if keep:
        shutil.move(table, keep)
    else:
        os.remove(table)
    return {"program": "sowsolve", "wall_seconds": wall, "cpu_seconds": cpu_seconds(run),
            "peak_rss_kb": peak,
            "positions_per_side": positions, "table_bytes": table_bytes,
            "bytes_per_position": round(table_bytes / positions, 4) if positions else None,
            "start": {"value": start["value"], "remoteness": start["remoteness"]},
            "solve_report": {k: solved.get(k) for k in ("seconds", "positions_per_s", "profile")
                             if k in solved},
            "load_before": before, "load_after": after}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--yardstick", default=os.path.join(os.path.dirname(HERE), DEFAULT_YARDSTICK),
                        help="the yardstick's C source (default: %s beside the repository)"
                             % DEFAULT_YARDSTICK)
    parser.add_argument("--cols", type=int, default=6)
    parser.add_argument("--stones", type=int, default=4)
    parser.add_argument("--variant", type=int, default=1, choices=[1, 2])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=2, help="runs of each program (at least 1)")
    parser.add_argument("--sowsolve", default=None, help="the sowsolve executable (default: the one on PATH)")
    parser.add_argument("--scratch", default=None, help="directory for the table being written "
                                                        "(default: a temporary directory)")
    parser.add_argument("--keep-table", default=None, help="keep the first run's table as this file")
    parser.add_argument("--label", default=None, help="a name for this run, kept in the JSON")
    parser.add_argument("--out")
    args = parser.parse_args()
    if not os.path.isfile(args.yardstick):
        print(f"no yardstick at {args.yardstick}: give the C source with --yardstick FILE",
              file=sys.stderr)
        raise SystemExit(1)
    if args.runs < 1 or args.threads < 1:
        print("--runs and --threads must be at least 1", file=sys.stderr)
        raise SystemExit(2)
    cc = os.environ.get("CC", "cc")
    exe = args.sowsolve or shutil.which("sowsolve") or "sowsolve"
    environment = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(dir=args.scratch) as directory:
        program = os.path.join(directory, "diffusion_plain")
        built = subprocess.run([cc, "-O2", "-fopenmp", "-o", program, args.yardstick],
                               capture_output=True, text=True)
        if built.returncode != 0:
            print(f"the yardstick did not compile: {built.stderr.strip()[-300:]}", file=sys.stderr)
            raise SystemExit(1)
        for i in range(args.runs):
            runs.append(run_sowsolve(exe, args, environment, directory,
                                     args.keep_table if i == 0 else None) | {"order": len(runs)})
            print(json.dumps(runs[-1]), file=sys.stderr)
            runs.append(run_yardstick(program, args, environment) | {"order": len(runs)})
            print(json.dumps(runs[-1]), file=sys.stderr)
    ours = [r for r in runs if r["program"] == "sowsolve"]
    theirs = [r for r in runs if r["program"] == "yardstick"]
    ours_wall = round(statistics.median(r["wall_seconds"] for r in ours), 2)
    their_solve = round(statistics.median(r["solve_wall_seconds"] for r in theirs), 2)
    their_wall = round(statistics.median(r["wall_seconds"] for r in theirs), 2)
    starts = {json.dumps(r["start"], sort_keys=True) for r in runs}
    emit({"command": " ".join(["python bench/bench_plain_c.py", f"--variant {args.variant}",
                               f"--cols {args.cols}", f"--stones {args.stones}",
                               f"--runs {args.runs}", f"--threads {args.threads}"]),
          "label": args.label,
          "yardstick": os.path.basename(args.yardstick),
          "yardstick_command": f"cc -O2 -fopenmp; diffusion_plain {args.cols} {args.variant} "
                               f"{args.stones} -noreach -threads {args.threads}",
          "sowsolve_command": f"sowsolve solve {'diffusion' if args.variant == 1 else 'diffusion-v2'} "
                              f"--cols {args.cols} --stones {args.stones} --threads {args.threads} "
                              f"--table T --json",
          "machine": machine() | {"shared": "other work ran on the machine meanwhile; see each "
                                            "run's load average before and after"},
          "runs": runs,
          "sowsolve_wall_seconds_median": ours_wall,
          "sowsolve_peak_rss_kb_max": max(r["peak_rss_kb"] for r in ours),
          "sowsolve_bytes_per_position": ours[0]["bytes_per_position"],
          "yardstick_solve_seconds_median": their_solve,
          "yardstick_wall_seconds_median": their_wall,
          "yardstick_peak_rss_kb_max": max(r["peak_rss_kb"] for r in theirs),
          "sowsolve_cpu_seconds_median": statistics.median(r["cpu_seconds"] for r in ours),
          "yardstick_cpu_seconds_median": statistics.median(r["cpu_seconds"] for r in theirs),
          "same_start": len(starts) == 1,
          "sowsolve_over_yardstick": round(ours_wall / their_solve, 2),
          "sowsolve_over_yardstick_whole_process": round(ours_wall / their_wall, 2),
          "sowsolve_over_yardstick_pairs": [round(o["wall_seconds"] / t["solve_wall_seconds"], 2)
                                            for o, t in zip(ours, theirs)]}, args.out)


if __name__ == "__main__":
    main()
