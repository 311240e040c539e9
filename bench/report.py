"""Shared output of the benchmark scripts: JSON on stdout, and in a file when asked."""
from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import time


def machine() -> dict:
    """What every benchmark records of the machine it ran on."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpus": cpus, "python": platform.python_version()}


def emit(result: dict, out: str | None) -> None:
    text = json.dumps(result, indent=2)
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")


def time_process(command: list[str], env: dict | None = None) -> tuple[subprocess.CompletedProcess, float, int]:
    """Run one command under `/usr/bin/time -v` (in `env`, else this environment): (the finished
    process, wall seconds, peak resident memory in KB)."""
    run = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True, env=env)
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", run.stderr).group(1)
    seconds = 0.0
    for part in wall.split(":"):
        seconds = seconds * 60 + float(part)
    return run, round(seconds, 1), peak


def run_sampled(command: list[str], sample, preexec_fn=None):
    """Run `command`, its memory sampled meanwhile by `sample(pid, peaks, done)` on a thread
    of its own (until `done` is set); (the finished process, stdout, stderr, wall seconds,
    peaks)."""
    import threading
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, preexec_fn=preexec_fn)
    peaks: dict = {}
    done = threading.Event()
    sampler = threading.Thread(target=sample, args=(child.pid, peaks, done))
    sampler.start()
    out, err = child.communicate()
    done.set()
    sampler.join()
    return child, out, err, time.perf_counter() - started, peaks
