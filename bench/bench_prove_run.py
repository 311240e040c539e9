"""One whole proof run, as a user runs it, printed as JSON: `sowsolve prove overflow --size S
--tables DIR --memory M --threads T [--checkpoint C] --proof P --json` as one process, its
memory read from /proc every few seconds (a timeline: the search, the drawing of the proof, the
sort and the write show as steps), then, with --check, `sowsolve check --proof P --tables DIR
--json` the same way.  What the issue's targets ask of a run (wall time, peak memory with the
tables) is read from the process itself, not estimated.

    python bench/bench_prove_run.py --size 4x5 --tables DIR --memory 14G --threads 2
                                    --proof P [--checkpoint C] [--check] [--every 10] [--out FILE]
"""
from __future__ import annotations

import argparse
import json
import shutil
import threading
import time

from report import emit, machine, run_sampled


def timeline(every: float):
    """A sampler for run_sampled: the peak of VmHWM (the kernel's own high-water mark) and
    (seconds, VmRSS kB) every `every` seconds."""
    def sample(pid: int, peaks: dict, done: threading.Event) -> None:
        began = time.perf_counter()
        peaks["rss_kb"] = []
        while not done.is_set():
            try:
                with open(f"/proc/{pid}/status") as f:
                    fields = dict(line.split(":", 1) for line in f if ":" in line)
                peaks["hwm_kb"] = max(peaks.get("hwm_kb", 0), int(fields["VmHWM"].split()[0]))
                peaks["rss_kb"].append([round(time.perf_counter() - began, 1), int(fields["VmRSS"].split()[0])])
            except (OSError, KeyError, ValueError):
                pass
            done.wait(every)
    return sample


def timed(command: list[str], every: float) -> dict:
    child, out, err, wall, peaks = run_sampled(command, timeline(every))
    run = {"wall_seconds": round(wall, 1), "peak_rss_kb": peaks.get("hwm_kb"),
           "peak_rss_gib": round(peaks.get("hwm_kb", 0) / 2 ** 20, 2), "exit": child.returncode,
           "rss_kb_every": every, "rss_kb": peaks.get("rss_kb", [])}
    if child.returncode == 0:
        run["said"] = json.loads(out)
    else:
        run["error"] = err.strip().splitlines()[-1:]
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", default="overflow")
    parser.add_argument("--size", default="4x5")
    parser.add_argument("--tables", required=True)
    parser.add_argument("--memory", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--checkpoint")
    parser.add_argument("--proof", required=True)
    parser.add_argument("--check", action="store_true", help="then check the proof")
    parser.add_argument("--every", type=float, default=10.0, help="seconds between memory samples")
    parser.add_argument("--out")
    args = parser.parse_args()
    exe = shutil.which("sowsolve") or "sowsolve"
    command = [exe, "prove", args.game, "--size", args.size, "--tables", args.tables, "--memory",
               args.memory, "--threads", str(args.threads), "--proof", args.proof, "--json"]
    if args.checkpoint:
        command[-1:-1] = ["--checkpoint", args.checkpoint]
    shown = ["sowsolve", *command[1:]]
    result = {"command": " ".join(shown).replace(args.tables, "DIR").replace(args.proof, "P"),
              "machine": machine(), "prove": timed(command, args.every)}
    if args.checkpoint:
        result["command"] = result["command"].replace(args.checkpoint, "CKPT")
    if args.check and result["prove"]["exit"] == 0:
        result["check"] = timed([exe, "check", "--proof", args.proof, "--tables", args.tables, "--json"],
                                args.every)
        result["check_command"] = "sowsolve check --proof P --tables DIR --json"
    for part in ("prove", "check"):
        said = result.get(part, {}).get("said", {})
        for name in ("file", "table"):
            said.pop(name, None)
        if "proof" in said:
            said["proof"].pop("file", None)
    emit(result, args.out)


if __name__ == "__main__":
    main()
