"""A long proof search of an Overflow start, watched: the search runs on one thread (deterministic)
in slices of --slice positions; after each slice the root's proof and disproof numbers and those
of each first move (as the search reads a child) are recorded with the positions expanded, the
entries used and the seconds; the search is saved to --checkpoint every --save-every seconds and
at the end, and goes on from that checkpoint when the file is there (the same file the
command's `prove --checkpoint` writes and reads). The JSON is rewritten after every slice, so a
run that is stopped keeps its timeline; a resumed run appends to the timeline it finds in --out.

    python bench/bench_prove_long.py --size 5x5 --memory 10G --seconds 7200 \
        --checkpoint C --out results/prove-5x5-run.json

The question it answers: is the start of 5x5 within reach of this machine?  The root's numbers
over time say how far the search is from a proof (a number that falls to 0 is a proof) and which
first moves it works on.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import time

from report import emit, machine

from sowsolve.cext import proofsearch
from sowsolve.solver.games import make_game
from sowsolve.solver.kernels import run_stoppable
from sowsolve.solver.proof import (ENTRY_BYTES, checkpoint_lock, memory_entries, prover_for,
                                   restore_checkpoint, save_checkpoint)
from sowsolve.cli.common import parse_memory



def shown(number: int) -> int | str:
    return "inf" if number >= proofsearch.INFINITY else int(number)


def record(prover, root: int, firsts, seconds: float) -> dict:
    """One row of the timeline: where the search stands after `seconds` of search in all."""
    phi, delta = prover.numbers(root)
    return {"search_seconds": round(seconds, 1), "nodes": int(prover.nodes),
            "entries_used": int(prover.stored), "entries_replaced": int(prover.replaced),
            "root": [shown(phi), shown(delta)],
            "first_moves": {move: [shown(n) for n in prover.numbers(key)] for move, key in firsts}}


def write(result: dict, out: str) -> None:
    """The JSON replaced whole (a run stopped while writing leaves the last one)."""
    with open(out + ".part", "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    os.replace(out + ".part", out)


def terminated(signum, frame):
    raise KeyboardInterrupt     # SIGTERM, SIGHUP: saved and written as on Ctrl-C


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", default="5x5")
    parser.add_argument("--memory", default="10G")
    parser.add_argument("--seconds", type=float, default=7200, help="search time of this run")
    parser.add_argument("--slice", type=int, default=20_000_000, help="positions between records")
    parser.add_argument("--save-every", type=float, default=1800)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.slice < 1 or args.seconds <= 0 or args.save_every <= 0:
        parser.error("--slice, --seconds and --save-every must be positive")
    previous = {}
    if os.path.exists(args.out):
        with open(args.out) as f:
            previous = json.load(f)
        if previous.get("size") != args.size:
            parser.error(f"--out holds a run of {previous.get('size')}, not {args.size}")
        if not os.path.exists(args.checkpoint):
            parser.error("--out holds a run, but its --checkpoint is not there: give a new --out")
    game = make_game("overflow", size=args.size)
    start = game.initial()
    entries = memory_entries(parse_memory(args.memory))
    prover = prover_for(game, start, entries)
    root = game.key(start)[1]
    firsts = {}             # one first move of each class of symmetric ones (the same key)
    for move in game.legal_moves(start):
        key = game.key(game.play(start, move))[1]
        if key not in firsts.values():
            firsts[game.format_move(move)] = key
    firsts = list(firsts.items())
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, terminated)
    with checkpoint_lock(args.checkpoint):
        resumed = os.path.exists(args.checkpoint)
        if resumed:
            restore_checkpoint(args.checkpoint, game, start, prover)
        # the timeline as far as the checkpoint goes (a run stopped without its last save
        # recorded rows the checkpoint does not hold)
        timeline = [row for row in previous.get("timeline", []) if row["nodes"] <= prover.nodes]
        searched_before = timeline[-1]["search_seconds"] if timeline else 0.0
        runs = previous.get("runs", []) + [{"resumed": resumed, "memory": args.memory,
                                            "entries": entries, "seconds_asked": args.seconds}]
        result = {"command": "python bench/bench_prove_long.py --size %s --memory %s --seconds S "
                             "--checkpoint C --out F (one thread, no endgame table)"
                             % (args.size, args.memory),
                  "machine": machine(), "size": args.size, "entry_bytes": ENTRY_BYTES,
                  "runs": runs, "timeline": timeline}
        began = last_saved = time.perf_counter()
        try:
            while prover.value() is None and time.perf_counter() - began < args.seconds:
                run_stoppable(lambda words: prover.run(args.slice, words, 1))
                timeline.append(record(prover, root, firsts, searched_before + time.perf_counter() - began))
                if time.perf_counter() - last_saved >= args.save_every:
                    saving = time.perf_counter()
                    save_checkpoint(args.checkpoint, game, start, prover)
                    runs[-1].setdefault("saves_seconds", []).append(round(time.perf_counter() - saving, 1))
                    last_saved = time.perf_counter()
                    began += last_saved - saving          # saving is not searching
                result["value"] = prover.value()
                write(result, args.out)
        finally:
            if not timeline or timeline[-1]["nodes"] != prover.nodes:   # stopped mid-slice
                timeline.append(record(prover, root, firsts, searched_before + time.perf_counter() - began))
            saving = time.perf_counter()
            save_checkpoint(args.checkpoint, game, start, prover)
            runs[-1].setdefault("saves_seconds", []).append(round(time.perf_counter() - saving, 1))
            result["value"] = prover.value()
            write(result, args.out)
    emit(result, None)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        raise SystemExit("bench_prove_long: stopped; the search is saved in --checkpoint and the "
                         "timeline in --out: run the same command again to go on")
