"""Where an unfinished proof search spends its work, printed as JSON: the df-pn search of an
Overflow start (one thread, a bounded number of expansions) through the kernel's census capsule,
which counts every position expanded by (discs on the board, occupied cells), and the search's
count by depth.  Beside them, for each disc limit D, the share of the expansions at positions of
at most D discs and the size of an endgame table of every position of at most D discs (its
dense index: connected sets of occupied cells x spreads of the discs over them x side to move):
what decides the --max-discs of the tables under the proof search.

    python bench/bench_prove_census.py --size 4x5 --nodes 60000000 [--memory 2G] [--out FILE]
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from report import emit, machine

from sowsolve.solver.games import make_game
from sowsolve.solver.kernels import compiled, run_stoppable
from sowsolve.cli.app import parse_memory
from sowsolve.solver.proof import memory_entries


def connected_sets(game) -> list[int]:
    """How many sets of k cells are one group under 8-connectivity, k = 0 .. cells."""
    n, counts = game.ncells, [0] * (game.ncells + 1)
    neighbours = [sum(1 << m for d in range(8) if (m := game.step(c, d)) >= 0) for c in range(n)]
    for mask in range(1, 1 << n):
        group, grown = mask & -mask, 0
        while grown != group:
            grown = group
            bits, g = group, 0
            while bits:
                low = bits & -bits
                g |= neighbours[low.bit_length() - 1]
                bits ^= low
            group = (group | g) & mask
        if group == mask:
            counts[bin(mask).count("1")] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", default="4x5")
    parser.add_argument("--nodes", type=int, default=60_000_000)
    parser.add_argument("--memory", default="2G")
    parser.add_argument("--out")
    args = parser.parse_args()
    game = make_game("overflow", size=args.size)
    kernel = game.kernel()
    entries = memory_entries(parse_memory(args.memory))
    _, root = game.key(game.initial())
    prover = compiled("proofsearch").Prover(kernel.census_capsule(), root, entries)
    prover.count_depths()
    started = time.perf_counter()
    run_stoppable(lambda words: prover.run(args.nodes, words, 1))
    seconds = time.perf_counter() - started
    census = kernel.census()
    depths = prover.depths()
    total = int(census.sum())
    n = game.ncells
    by_discs = census.sum(axis=1)
    sets = connected_sets(game)
    limits = []
    table = 0
    for d in range(1, n + 1):
        tier = [sets[k] * math.comb(d - 1, k - 1) * 2 for k in range(1, min(d, n) + 1)]
        table += sum(tier)
        limits.append({"max_discs": d, "share_of_expansions": round(int(by_discs[:d + 1].sum()) / total, 4),
                       "table_positions": table})
    cells = [{"discs": d, "occupied": k, "expansions": int(census[d, k])}
             for d in range(n + 1) for k in range(n + 1) if census[d, k]]
    emit({"command": f"Prover(start of {args.size}, {entries:,} entries, census capsule).run("
                     f"{args.nodes:,}) on one thread, in process",
          "machine": machine(), "size": args.size, "proved": prover.value(),
          "expansions": total, "nodes": int(prover.nodes), "seconds": round(seconds, 1),
          "entries": entries, "entries_used": int(prover.stored),
          "entries_replaced": int(prover.replaced),
          "connected_sets": sets,
          "by_discs": {str(d): int(by_discs[d]) for d in range(n + 1) if by_discs[d]},
          "by_discs_and_occupied": cells,
          "by_depth": [int(x) for x in depths],
          "mean_depth": round(float((np.arange(depths.size) * depths).sum() / max(1, depths.sum())), 2),
          "limits": limits}, args.out)


if __name__ == "__main__":
    main()
