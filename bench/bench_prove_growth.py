"""How the proof search grows with the board, printed as JSON: for each Overflow board given, the
start proved on one thread (deterministic) in a table of 40 M entries, in this process: value,
positions expanded, entries used and seconds.  With --unfinished SIZE CHECKPOINT SECONDS
COMMAND, the figures of a search that did not finish, read from the checkpoint it left
(positions expanded, entries used), with the seconds it searched and the command it ran.

    python bench/bench_prove_growth.py --size 3x3 --size 3x4 --size 3x5 --size 4x4 [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import time
import zipfile

import numpy as np

from report import emit, machine
from sowsolve.solver.games import make_game
from sowsolve.solver.proof import prover_for

ENTRIES = 40_000_000


def prove(size: str) -> dict:
    game = make_game("overflow", size=size)
    prover = prover_for(game, game.initial(), ENTRIES)
    started = time.perf_counter()
    while not prover.run(1 << 62):
        pass
    return {"size": size, "cells": game.rows * game.cols, "value": prover.value(), "nodes": prover.nodes,
            "entries_used": prover.stored, "entries_replaced": prover.replaced,
            "seconds": round(time.perf_counter() - started, 2)}


def from_checkpoint(path: str) -> dict:
    """Positions expanded and entries used of a search saved in a checkpoint (headers only)."""
    with zipfile.ZipFile(path) as archive:
        with archive.open("nodes.npy") as member:
            nodes = int(np.lib.format.read_array(member, allow_pickle=False)[0])
        with archive.open("keys.npy") as member:
            np.lib.format.read_magic(member)
            shape, _, _ = np.lib.format.read_array_header_1_0(member)
    return {"nodes": nodes, "entries_used": shape[0], "checkpoint_bytes": os.path.getsize(path)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", action="append", default=[])
    parser.add_argument("--unfinished", nargs=4, metavar=("SIZE", "CHECKPOINT", "SECONDS", "COMMAND"),
                        help="a search that did not finish: its board, checkpoint, seconds, command")
    parser.add_argument("--out")
    args = parser.parse_args()
    result = {"command": "Prover(start, 40 M entries).run on one thread, in process", "machine": machine(),
              "runs": [prove(size) for size in args.size]}
    if args.unfinished:
        size, path, seconds, command = args.unfinished
        result["unfinished"] = dict(from_checkpoint(path), size=size, search_seconds=float(seconds),
                                    command=command, proved=False)
    emit(result, args.out)


if __name__ == "__main__":
    main()
