"""Zig Zag solve benchmark, printed as JSON: positions/s per board and how the time grows from
one board to the next (one core; the score solver is single-threaded).

    python bench/bench_zigzag.py --board 4:1 --board 4:2 --board 4:3
"""
from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time

from report import emit
from sowsolve.solver.games import make_game
from sowsolve.tables.store import TableWriter, open_table


def bench_board(cols: int, stones: int) -> dict:
    game = make_game("zigzag", cols=cols, stones=stones)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "z.sqlite")
        writer = TableWriter(path, game)
        started = time.perf_counter()
        report = game.solver.solve(game, writer, threads=1)
        writer.finish({})
        writer.close()
        seconds = time.perf_counter() - started
        with open_table(path) as table:
            start = table.probe(game.initial())
        size = os.path.getsize(path)
    return {"cols": cols, "stones": stones, "positions": report.positions,
            "seconds": round(seconds, 2), "positions_per_s": round(report.positions / seconds),
            "table_bytes": size, "bytes_per_position": round(size / report.positions, 4),
            "start": {"margin": start.margin, "remoteness": start.remoteness}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--board", action="append", default=[], help="COLS:STONES (repeatable)")
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args()
    boards = [bench_board(*map(int, b.split(":"))) for b in (args.board or ["4:1", "4:2"])]
    growth = [{"from": f"2x{a['cols']} K={a['stones']}", "to": f"2x{b['cols']} K={b['stones']}",
               "positions": round(b["positions"] / a["positions"], 2),
               "time": round(b["seconds"] / a["seconds"], 2)} for a, b in zip(boards, boards[1:])]
    emit({"boards": boards, "growth": growth,
          "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}, args.out)


if __name__ == "__main__":
    main()
