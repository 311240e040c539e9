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
import time

from report import emit, machine

from sowsolve.cext import proofsearch
from sowsolve.solver.games import make_game
from sowsolve.solver.kernels import run_stoppable
from sowsolve.solver.proof import (ENTRY_BYTES, memory_entries, prover_for, restore_checkpoint,
                                   save_checkpoint)
from sowsolve.cli.common import parse_memory



def shown(number: int) -> int | str:
    return "inf" if number >= proofsearch.INFINITY else int(number)


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
    previous = {}
    if os.path.exists(args.out):
        with open(args.out) as f:
            previous = json.load(f)
    timeline = previous.get("timeline", [])
    searched_before = timeline[-1]["search_seconds"] if timeline else 0.0
    resumed = os.path.exists(args.checkpoint)
    if resumed:
        restore_checkpoint(args.checkpoint, game, start, prover)
    runs = previous.get("runs", []) + [{"resumed": resumed, "memory": args.memory,
                                        "entries": entries, "seconds_asked": args.seconds}]
    result = {"command": "python bench/bench_prove_long.py --size %s --memory %s --seconds S "
                         "--checkpoint C --out F (one thread, no endgame table)" % (args.size, args.memory),
              "machine": machine(), "size": args.size, "entry_bytes": ENTRY_BYTES, "runs": runs,
              "timeline": timeline}
    began = last_saved = time.perf_counter()
    try:
        while prover.value() is None and time.perf_counter() - began < args.seconds:
            run_stoppable(lambda words: prover.run(args.slice, words, 1))
            now = time.perf_counter()
            phi, delta = prover.numbers(root)
            timeline.append({
                "search_seconds": round(searched_before + now - began, 1), "nodes": int(prover.nodes),
                "entries_used": int(prover.stored), "entries_replaced": int(prover.replaced),
                "root": [shown(phi), shown(delta)],
                "first_moves": {move: [shown(n) for n in prover.numbers(key)] for move, key in firsts}})
            if now - last_saved >= args.save_every:
                saving = time.perf_counter()
                save_checkpoint(args.checkpoint, game, start, prover)
                runs[-1].setdefault("saves_seconds", []).append(round(time.perf_counter() - saving, 1))
                last_saved = time.perf_counter()
                began += last_saved - saving          # saving is not searching
            result["value"] = prover.value()
            with open(args.out + ".part", "w") as f:
                json.dump(result, f, indent=1)
            os.replace(args.out + ".part", args.out)
    finally:
        saving = time.perf_counter()
        save_checkpoint(args.checkpoint, game, start, prover)
        runs[-1].setdefault("saves_seconds", []).append(round(time.perf_counter() - saving, 1))
        result["value"] = prover.value()
        emit(result, args.out)


if __name__ == "__main__":
    main()
