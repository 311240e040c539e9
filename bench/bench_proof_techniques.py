"""What each technique of the proof search pays, printed as JSON: for each Overflow board given,
the start proved on one thread (deterministic) in a table of --entries entries, once for each
set of techniques (cext/proofsearch.pyx, Search: hints -- the game's first guess of a new
position's numbers, df-pn+; epsilon -- the 1 + epsilon trick; weak -- weak proof numbers; and
the game's, cext/overflow.pyx: lookahead -- a position whose side to move wins with one move
is proved when first seen, not expanded), each alone and together: value, positions expanded, seconds, the table's bytes, and the
proof's size (positions of the winner's on it, drawn from the table after the search) with the
expansions per position of the proof.

    python bench/bench_proof_techniques.py --size 3x4 --size 3x5 --size 4x4 [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import time

from report import emit, machine
from sowsolve.solver.games import make_game
from sowsolve.solver.proof import ENTRY_BYTES, extract, prover_for

#: the sets measured: none, each alone, the default (hints and epsilon), and weak besides
TECHNIQUES = {
    "none": dict(hints=False, epsilon=False, weak=False, lookahead=False),
    "hints": dict(hints=True, epsilon=False, weak=False, lookahead=False),
    "epsilon": dict(hints=False, epsilon=True, weak=False, lookahead=False),
    "weak": dict(hints=False, epsilon=False, weak=True, lookahead=False),
    "lookahead": dict(hints=False, epsilon=False, weak=False, lookahead=True),
    "hints+epsilon": dict(hints=True, epsilon=True, weak=False, lookahead=False),
    "hints+epsilon+lookahead (default)": dict(hints=True, epsilon=True, weak=False, lookahead=True),
    "hints+epsilon+lookahead+weak": dict(hints=True, epsilon=True, weak=True, lookahead=True),
}


def prove(size: str, techniques: dict, entries: int, budget: int) -> dict:
    game = make_game("overflow", size=size)
    techniques = dict(techniques)
    game.kernel().lookahead = techniques.pop("lookahead")
    prover = prover_for(game, game.initial(), entries)
    prover.set_techniques(**techniques)
    started = time.perf_counter()
    proved = prover.run(budget)
    seconds = time.perf_counter() - started
    run = {"size": size, "cells": game.rows * game.cols,
           "techniques": dict(prover.techniques, lookahead=game.kernel().lookahead),
           "proved": proved, "value": prover.value(), "nodes": prover.nodes,
           "seconds": round(seconds, 2), "table_bytes": entries * ENTRY_BYTES,
           "entries_replaced": prover.replaced}
    if proved:
        proof = extract(prover, prover.root, prover.value())
        run["proof_positions"] = len(proof)
        run["nodes_per_proof_position"] = round(prover.nodes / max(1, len(proof)), 2)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", action="append", default=[])
    parser.add_argument("--entries", type=int, default=1 << 24, help="table entries (16 bytes each)")
    parser.add_argument("--budget", type=int, default=60_000_000,
                        help="give up after this many expansions (a set that does not pay)")
    parser.add_argument("--only", action="append", choices=list(TECHNIQUES),
                        help="measure only these sets (repeatable)")
    parser.add_argument("--out")
    args = parser.parse_args()
    chosen = args.only or list(TECHNIQUES)
    runs = []
    for size in args.size or ["3x4", "3x5", "4x4"]:
        for name in chosen:
            runs.append(dict(prove(size, TECHNIQUES[name], args.entries, args.budget), name=name))
    emit({"load_average_before": os.getloadavg(), "command": f"Prover(start, {args.entries:,} entries).set_techniques(...).run on one "
                     f"thread, in process, at most {args.budget:,} expansions",
          "machine": machine(), "runs": runs}, args.out)


if __name__ == "__main__":
    main()
