"""The alpha-beta engine's own speed, comparable between two builds: positions searched a second
at a fixed node budget on one thread (the answer is then the same on every run), over positions
sampled from solved tables as bench_analyse.py samples them, with a digest of the answers (the
move chosen and its score) so that a change meant to make the search faster and nothing else
shows the same digest before and after.

    python bench/bench_engine.py --tables DIR [--positions 300] [--nodes 200000]
        [--start-nodes 2000000] [--out F]

Run it on two checkouts (each built) to compare them; DIR as for bench_analyse.py.
"""
from __future__ import annotations

import argparse
import hashlib
import random
import time

from bench_analyse import BOARDS, STANDARD, sample
from report import emit, machine

from sowsolve.solver.games import make_game
from sowsolve.tables.analysis import Analyser
from sowsolve.tables.directory import tables_of_board
from sowsolve.tables.store import open_table


def answer_of(result: dict, depth: bool = False) -> bytes:
    """What two builds must agree on: the best moves, the first move's score and value (and
    the depth reached, for a search from the start)."""
    first = result["moves"][0]
    answer = (result["best"], first["move"], first.get("score"), first["value"])
    return repr(answer + (result["search"]["depth"],) if depth else answer).encode()


def measure(name, board, directory, count, nodes, seed) -> dict:
    game = make_game(name, **board)
    paths = tables_of_board(game, directory)
    if not paths:
        return {"game": game.describe(), "missing": "no table in the directory"}
    analyser = Analyser(game, proof_share=0, search="alphabeta")     # the kernel search alone
    with open_table(paths[0]) as table:
        positions = sample(table, count, random.Random(seed))
    digest = hashlib.sha256()
    searched = 0
    spent = 0.0
    started = time.time()
    for position in positions:
        result = analyser.analyse(position, nodes=nodes, threads=1, multipv=1)
        searched += result["search"]["nodes"]
        spent += result["search"]["seconds"]
        digest.update(answer_of(result))
    return {"game": game.describe(), "positions": len(positions), "nodes_each": nodes,
            "nodes": searched, "search_seconds": round(spent, 2),
            "positions_per_second": round(searched / spent) if spent else None,
            "answers_sha256": digest.hexdigest(), "seconds": round(time.time() - started, 1)}


def from_start(name, board, nodes) -> dict:
    """The same from the start of a standard board: one search of `nodes` positions."""
    game = make_game(name, **board)
    analyser = Analyser(game, proof_share=0, search="alphabeta")
    result = analyser.analyse(game.initial(), nodes=nodes, threads=1, multipv=1)
    search = result["search"]
    return {"game": game.describe(), "nodes": search["nodes"], "depth": search["depth"],
            "search_seconds": round(search["seconds"], 2),
            "positions_per_second": round(search["nodes"] / search["seconds"]),
            "answers_sha256": hashlib.sha256(answer_of(result, depth=True)).hexdigest()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", required=True)
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--nodes", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--start-nodes", type=int, default=2_000_000,
                        help="the search from the start of each standard board")
    parser.add_argument("--game", action="append", choices=[n for n, _ in BOARDS])
    parser.add_argument("--label", default="", help="what the build is (recorded)")
    parser.add_argument("--out")
    args = parser.parse_args()
    games = [(n, b) for n, b in BOARDS if not args.game or n in args.game]
    emit({"command": "python bench/bench_engine.py --tables DIR", "label": args.label,
          "machine": machine(),
          "engine": [measure(n, b, args.tables, args.positions, args.nodes, args.seed)
                     for n, b in games],
          "from_start": [from_start(n, b, args.start_nodes) for n, b in STANDARD
                         if not args.game or n in args.game]}, args.out)


if __name__ == "__main__":
    main()
