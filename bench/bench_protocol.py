"""The engine protocol's overhead, measured as a match program meets it: from another process.

`sowsolve engine GAME` is started once per board; after `isready`, each move of a game the
engine plays against itself is asked with `position start moves ...` and `go time SECONDS`,
and the wall time from writing `go` to reading `bestmove` is taken (the search's own time, as
its last `info` line says, beside it).  For comparison, the same budget asked the old way: a
new `sowsolve analyse POSITION --time SECONDS --json` process per move, timed whole.

    python bench/bench_protocol.py [--time 0.2] [--moves 20] [--processes 5] [--threads 2] [--out F]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from report import emit, machine

BOARDS = [("overflow", ["--size", "6x6"]), ("zigzag", ["--cols", "6", "--stones", "5"]),
          ("diffusion", ["--cols", "6", "--stones", "4"])]


def sowsolve() -> list[str]:
    return [sys.executable, "-c", "from sowsolve.cli.entry import main; main()"]


class Engine:
    """`sowsolve engine` in a process of its own, one line in, lines out."""

    def __init__(self, args: list[str], env: dict):
        self.process = subprocess.Popen(sowsolve() + ["engine", *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1, env=env)

    def send(self, line: str) -> None:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def until(self, prefix: str) -> list[str]:
        lines = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the engine ended before {prefix!r}: {lines[-3:]}")
            lines.append(line.rstrip("\n"))
            if line.startswith(prefix) or line.startswith("error"):
                return lines

    def close(self) -> None:
        self.send("quit")
        self.process.wait(timeout=30)


def summary(values: list[float]) -> dict:
    return {"min": round(min(values), 4), "median": round(statistics.median(values), 4),
            "max": round(max(values), 4)}


def protocol_moves(game: str, board: list[str], seconds: float, moves: int, threads: int,
                   env: dict) -> dict:
    engine = Engine([game, *board, "--threads", str(threads)], env)
    started = time.perf_counter()
    engine.send("isready")
    engine.until("readyok")
    ready = time.perf_counter() - started
    played, walls, searches = [], [], []
    for _ in range(moves):
        engine.send("position start" + (" moves " + " ".join(played) if played else ""))
        sent = time.perf_counter()
        engine.send(f"go time {seconds}")
        lines = engine.until("bestmove")
        walls.append(time.perf_counter() - sent)
        if lines[-1].startswith("error"):
            raise RuntimeError(lines[-1])
        best = lines[-1].split()[1]
        info = next(line for line in reversed(lines) if line.startswith("info source"))
        words = info.split()
        searches.append(float(words[words.index("time") + 1]) if "time" in words else 0.0)
        if best == "none":
            break
        played.append(best)
    engine.close()
    return {"game": game, "board": " ".join(board), "moves": len(walls),
            "start_to_readyok_seconds": round(ready, 3),
            "go_to_bestmove_seconds": summary(walls),
            "search_seconds": summary(searches),
            "overhead_seconds": summary([w - s for w, s in zip(walls, searches)]),
            "within_budget_plus_0.05": sum(w <= seconds + 0.05 for w in walls)}


def process_moves(game: str, board: list[str], seconds: float, count: int, threads: int,
                  env: dict) -> dict:
    from sowsolve.solver.games import make_game
    options = dict(zip(board[::2], board[1::2]))
    g = make_game(game, **{k.lstrip("-"): (int(v) if v.isdigit() else v) for k, v in options.items()})
    position = g.format_position(g.initial())
    walls = []
    for _ in range(count):
        started = time.perf_counter()
        subprocess.run(sowsolve() + ["analyse", position, "--game", game, "--time", str(seconds),
                                     "--threads", str(threads), "--json"],
                       check=True, capture_output=True, env=env)
        walls.append(time.perf_counter() - started)
    return {"game": game, "processes": count, "wall_seconds": summary(walls)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", type=float, default=0.2)
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out")
    args = parser.parse_args()
    env = dict(os.environ, SOWSOLVE_TABLES=os.path.join(os.getcwd(), "no-tables-here"))
    result = {"benchmark": "engine protocol overhead", "machine": machine(),
              "seconds_per_move": args.time, "threads": args.threads,
              "protocol": [protocol_moves(g, b, args.time, args.moves, args.threads, env)
                           for g, b in BOARDS],
              "process_per_move": [process_moves(g, b, args.time, args.processes, args.threads, env)
                                   for g, b in BOARDS]}
    emit(result, args.out)


if __name__ == "__main__":
    main()
