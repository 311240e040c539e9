"""The analysis engine against a plain UCT player, game after game on the standard boards.

The UCT player (cext/uct.pyx) is the textbook yardstick: UCB1 with c = sqrt 2, uniformly random
playouts to the end, the most visited move, over the same compiled move generator, its trees
grown on --threads cores.  Both players get the same time per move and the same threads.
Openings vary: each game starts after --opening-plies uniformly random plies (seeded), and each
opening is played twice, sowsolve taking each side once.  A win/loss game is won by whoever the
rules say; Zig Zag's game is won by the margin at the end (what each side banked, plus the
end's own count), a draw at margin 0.  A game longer than --max-plies, or (--repetition N) one
whose position comes round the Nth time, is infinite play, ended as the rules end it: a draw in
a win/loss game; in Zig Zag the last capturer takes the seeds left on the board.

    python bench/bench_match.py --game overflow --size 6x6 --games 200 --time 1 [--out F]
    python bench/bench_match.py --game zigzag --cols 6 --stones 5 --games 200 --time 1
    python bench/bench_match.py --game overflow --size 4x4 --games 4 --time 0.2 \
        --opponent 'sowsolve engine --threads 1'

--opponent COMMAND replaces the UCT player by any program that speaks sowsolve's engine
protocol (docs/engine.md), started with COMMAND: sowsolve itself, or another engine.

sowsolve plays through its analysis engine (`Analyser`) with the game's own search (--search:
the other one), and no tables unless --tables names a directory: then that directory's tables
of the board are the engine's leaves, and a game ends the moment one of them holds its
position, decided by the table's exact value there (what each side gets with best play from
both: tablebase adjudication; --play-out plays such games to the end instead).  Adjudication
needs tables the engine reads whole at its leaves, and none holding the start.  It records
every game (opening, sowsolve's side, result, margin, plies) and the totals: the score rate (a
win 1, a draw 0.5), the engine's mean effort per move
(depth, or playouts) and the UCT's mean playouts per move.  A long match is resumable:
--progress FILE keeps each finished game (one JSON line each, after a line of the match's
settings); run the same command again and it plays only the games the file lacks.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time

import numpy as np

from report import emit, machine

from sowsolve.cext import uct
from sowsolve.cext.engine import SCORE_SCALE
from sowsolve.solver.games import make_game
from sowsolve.solver.values import Margin
from sowsolve.tables.analysis import MCTS_FPU, PROOF_SHARE, Analyser
from sowsolve.tables.directory import tables_of_board
from sowsolve.tables.store import open_table


def board_of(args) -> dict:
    board = {}
    if args.size:
        board["size"] = args.size
    if args.cols:
        board["cols"] = args.cols
    if args.stones:
        board["stones"] = args.stones
    return board


class Match:
    """One board: the engine (an Analyser, with the board's `tables` at its leaves) and the UCT
    player, and the referee (who ends a game where a table holds it, if `adjudicate`)."""

    def __init__(self, game, seconds: float, threads: int, hash_bytes: int, seeds: int = 0,
                 search: str | None = None, weights: list[int] | None = None,
                 exploration: float | None = None, proof_share: float = PROOF_SHARE,
                 mcts_options: dict | None = None, tables=(), adjudicate: bool = True,
                 repetition: int = 0):
        self.game = game
        self.seeds = seeds                   # margin games: the seeds in play
        self.seconds = seconds
        self.threads = threads
        self.tables = list(tables)
        self.adjudicate = adjudicate and bool(self.tables)
        self.repetition = repetition         # a position seen this often: infinite play (0: off)
        self.analyser = Analyser(game, self.tables, hash_bytes=hash_bytes, weights=weights,
                                 proof_share=proof_share, search=search, exploration=exploration,
                                 **(mcts_options or {}))
        self.analyser.warm()            # as the engine's `isready`: not in the first move's time
        self.search = self.analyser.search
        self.exploration = self.analyser.mcts.exploration if self.analyser.mcts else None
        self.engine = self.analyser.engine
        self.engine_weights = weights or game.evaluation.weights
        self.capsule = game.play_kernel()
        self.margin_game = bool(self.engine.margin)
        self.opponent = None                 # a ProtocolOpponent in place of the UCT player
        self.history: list[str] = []         # the moves of the game under way, from the start

    def codes(self, position, state: bytes) -> dict:
        """{move text: (code, what the mover banks)} of a position."""
        return {self.game.format_move(self.game.play_move(position, code)): (code, gain)
                for code, gain, _ in self.engine.moves(state)}

    def engine_move(self, position, state, moves, lead: int, leftover: int, last: int,
                    seed: int) -> tuple[str, int]:
        result = self.analyser.analyse(position, seconds=self.seconds, threads=self.threads,
                                       multipv=1, seed=seed)
        move = result["best"][0] if result["best"] else result["moves"][0]["move"]
        search = result["search"]
        return move, search["playouts"] if search["method"] == "mcts" else search["depth"]

    def uct_move(self, position, state, lead: int, leftover: int, last: int,
                 seed: int) -> tuple[int, int]:
        if self.opponent is not None:
            text = self.opponent.move(self.history)
            moves = self.codes(position, state)
            if text not in moves:
                raise RuntimeError(f"the opponent played {text[:40]!r}, no legal move of "
                                   f"{self.game.format_position(position)}")
            return moves[text][0], 0
        ranked, playouts = uct.choose(self.capsule, state, seconds=self.seconds,
                                      threads=self.threads, seed=seed, lead=lead,
                                      leftover=leftover, last=last)
        return ranked[0][0], playouts

    def table_value(self, position):
        """The exact value of a position for the side to move from the first table holding it
        (a Value or a Margin), else None."""
        for table in self.tables:
            value = table.get(position)
            if value is not None:
                return value
        return None

    def play(self, opening_seed: int, engine_side: int, max_plies: int, opening_plies: int) -> dict:
        """One game from a seeded random opening; engine_side 0: the engine moves first."""
        game = self.game
        rng = random.Random(opening_seed)
        position = game.initial()
        banked = [0, 0]                      # by the first player, by the second
        last_capturer = None
        ply = 0
        depths, playouts = [], []
        opening = []
        adjudicated = None
        seen: dict[bytes, int] = {}
        repeated = False
        self.history = []
        while ply < max_plies:
            mover = ply % 2
            if self.adjudicate and ply >= opening_plies:
                adjudicated = self.table_value(position)
                if adjudicated is not None:
                    break
            state = game.play_state(position)
            if self.repetition and ply >= opening_plies:
                seen[state] = seen.get(state, 0) + 1
                if seen[state] >= self.repetition:
                    repeated = True
                    break
            moves = self.codes(position, state)
            if not moves:
                break
            if ply < opening_plies:
                move = rng.choice(sorted(moves))
                opening.append(move)
            elif mover == engine_side:
                lead = banked[mover] - banked[1 - mover]
                last = 0 if last_capturer is None else (1 if last_capturer == mover else -1)
                move, depth = self.engine_move(position, state, moves, lead,
                                               self.seeds - sum(banked), last,
                                               opening_seed * 1000 + ply + 7)
                depths.append(depth)
            else:
                lead = banked[mover] - banked[1 - mover]
                last = 0 if last_capturer is None else (1 if last_capturer == mover else -1)
                code, n = self.uct_move(position, state, lead, self.seeds - sum(banked), last,
                                        opening_seed * 1000 + ply)
                move = game.format_move(game.play_move(position, code))
                playouts.append(n)
            code, gain = moves[move]
            self.history.append(move)
            banked[mover] += gain
            if gain > 0:
                last_capturer = mover
            position = game.play(position, game.play_move(position, code))
            ply += 1
        state = game.play_state(position)
        final = self.engine.final(state) if ply < max_plies and not repeated else None
        mover = ply % 2
        if adjudicated is not None:
            margin, winner = self.adjudication(adjudicated, banked, mover, engine_side)
        elif final is None and not self.margin_game:
            margin, winner = None, None       # infinite play: a draw
        elif self.margin_game:
            totals = list(banked)
            if final is not None:
                totals[mover] += final // SCORE_SCALE   # the end's own count, for the side to move
            elif last_capturer is not None:
                # infinite play ends the game: the last capturer takes the seeds left
                totals[last_capturer] += self.seeds - sum(banked)
            margin = totals[engine_side] - totals[1 - engine_side]
            winner = None if margin == 0 else (engine_side if margin > 0 else 1 - engine_side)
        else:
            margin = None
            winner = None if final == 0 else (mover if final > 0 else 1 - mover)
        score = 0.5 if winner is None else (1.0 if winner == engine_side else 0.0)
        record = {"opening": opening, "engine_moves_first": engine_side == 0, "plies": ply,
                  "result": {1.0: "win", 0.5: "draw", 0.0: "loss"}[score], "score": score,
                  "margin": margin}
        if repeated:
            record["repeated"] = True
        if adjudicated is not None:
            # the table's value for the side to move at the ply the game ended
            record["adjudicated"] = ({"margin": adjudicated.margin} if isinstance(adjudicated, Margin)
                                     else {"value": adjudicated.value})
        return record | {
            "sowsolve_mean_effort": round(sum(depths) / len(depths), 1) if depths else None,
            "uct_mean_playouts": round(sum(playouts) / len(playouts)) if playouts else None}

    def adjudication(self, value, banked: list[int], mover: int, engine_side: int):
        """(margin, winner) of a game ended by a table's exact value for the side to move: in a
        margin game, what each side banked so far plus what the mover secures from here."""
        if isinstance(value, Margin):
            totals = list(banked)
            totals[mover] += value.margin
            margin = totals[engine_side] - totals[1 - engine_side]
            return margin, (None if margin == 0 else
                            engine_side if margin > 0 else 1 - engine_side)
        return None, {"win": mover, "loss": 1 - mover}.get(value.value)


class ProtocolOpponent:
    """Any program that speaks sowsolve's engine protocol (docs/engine.md), started with
    `command`: told the game and board once, then each of its moves asked with `position start
    moves ...` and `go time T`, its `bestmove` played."""

    def __init__(self, command: str, game, seconds: float):
        import shlex
        import subprocess
        from sowsolve.solver.games import entry_of
        self.command, self.seconds = command, seconds
        self.process = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1)
        board = " ".join(f"{p.option} {game.parameters()[p.name]}" for p in entry_of(game).parameters)
        self.ask(f"game {game.name} {board}", "isready", until="readyok")

    def ask(self, *lines: str, until: str) -> str:
        for line in lines:
            self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        while True:
            reply = self.process.stdout.readline()
            if not reply:
                raise RuntimeError(f"the opponent ({self.command[:60]}) ended")
            if reply.startswith("error"):
                raise RuntimeError(f"the opponent said: {reply.strip()[:200]}")
            if reply.startswith(until):
                return reply.strip()

    def move(self, history: list[str]) -> str:
        position = "position start" + (" moves " + " ".join(history) if history else "")
        return self.ask(position, f"go time {self.seconds}", until="bestmove").split()[1]

    def close(self) -> None:
        try:
            self.process.stdin.write("quit\n")
            self.process.stdin.close()
        except OSError:
            pass
        self.process.wait(timeout=30)


def table_note(table) -> dict:
    """A table as a match records it: its file's name (not where it lies), its limit and the
    SHA-256 of its records (and keys), tier by tier: the same table solved again on another
    machine resumes the match, any other table does not."""
    digest = hashlib.sha256()
    keyed = table.meta.get("indexing") != "dense"
    for tier in sorted(table.tiers):
        records = table.tier_records(tier)
        digest.update(int(tier).to_bytes(4, "little"))
        digest.update(records.astype("<u2").tobytes())            # the 16-bit records
        high = records >> 16 if records.dtype.itemsize > 2 else None
        if high is not None and high.any():                       # a margin tier's long part
            digest.update(b"long" + high.astype("<u4").tobytes())
        if keyed:
            digest.update(np.ascontiguousarray(table.tier_keys(tier), dtype="<u8").tobytes())
    return {"file": os.path.basename(table.path), "max_stones": table.meta.get("max_stones"),
            "records_sha256": digest.hexdigest()}


def resume(path: str | None, settings: dict) -> tuple[list[dict], float]:
    """The games a progress file holds (and their seconds), after checking it was written by
    the same match; a new file starts with the settings line."""
    if not path:
        return [], 0.0
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(json.dumps(settings) + "\n")
        return [], 0.0
    lines = []
    with open(path) as f:
        for line in f:
            try:
                lines.append(json.loads(line))
            except ValueError:           # a line cut short by a kill: that game is played again
                temporary = path + ".tmp"
                with open(temporary, "w") as out:
                    out.writelines(json.dumps(kept) + "\n" for kept in lines)
                os.replace(temporary, path)
                break
    if not lines or lines[0] != settings:
        sys.exit(f"{path} holds another match's games (its first line names the settings)")
    games = lines[1:]
    return games, sum(g.get("seconds", 0.0) for g in games)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", required=True)
    parser.add_argument("--size")
    parser.add_argument("--cols", type=int)
    parser.add_argument("--stones", type=int)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--time", type=float, default=1.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--opening-plies", type=int, default=2)
    parser.add_argument("--max-plies", type=int, default=600)
    parser.add_argument("--hash-mb", type=int, default=256)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--search", choices=("alphabeta", "mcts"),
                        help="sowsolve's search (default: the game's own, Evaluation.monte_carlo)")
    parser.add_argument("--weights", help="the engine's evaluation weights, comma-separated "
                        "(default: the game's own)")
    parser.add_argument("--exploration", type=float,
                        help="the Monte Carlo search's UCB1 constant (default: the game's own; "
                             "the UCT yardstick keeps sqrt 2)")
    parser.add_argument("--progress", help="a file of the games played so far: resume from it")
    parser.add_argument("--proof-share", type=float, default=PROOF_SHARE,
                        help="the engine: the share of each move's time the proof search takes "
                        "first, in games it can prove (0: none)")
    parser.add_argument("--fpu", type=float, default=MCTS_FPU,
                        help="the Monte Carlo search's first-play urgency (< 0: every move once first)")
    parser.add_argument("--unordered", action="store_true",
                        help="the Monte Carlo search tries untried moves in the moves' order, "
                        "not the evaluation's best first")
    parser.add_argument("--no-reuse", action="store_true",
                        help="the Monte Carlo search starts every move's trees afresh")
    parser.add_argument("--tables", help="a directory whose tables of the board are the engine's "
                        "leaves and end a game where they hold its position (adjudication)")
    parser.add_argument("--play-out", action="store_true",
                        help="with --tables: play every game to its end, no adjudication")
    parser.add_argument("--repetition", type=int, default=0,
                        help="a position (side to move, ko and last capturer included) seen the "
                        "Nth time ends the game as infinite play (0: only --max-plies does)")
    parser.add_argument("--opponent", metavar="COMMAND",
                        help="instead of the UCT player, the program COMMAND starts, which speaks "
                        "the engine protocol (docs/engine.md): e.g. 'sowsolve engine --threads 1'")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.repetition < 0 or args.repetition == 1:
        parser.error("--repetition is 0 (off) or at least 2")
    game = make_game(args.game, **board_of(args))
    tables = []
    if args.tables:
        if not os.path.isdir(args.tables):
            parser.error(f"--tables {args.tables[:60]} is not a directory")
        tables = [open_table(path) for path in tables_of_board(game, args.tables)]
        if not tables:
            parser.error(f"{args.tables[:60]} holds no finished table of {game.describe()}")
        if not args.play_out and any(t.get(game.initial()) is not None for t in tables):
            parser.error(f"a table in {args.tables[:60]} holds the start: every game would be "
                         f"adjudicated before a move (give endgame tables, or --play-out)")
    elif args.play_out:
        parser.error("--play-out goes with --tables (without tables every game is played out)")
    seeds = 2 * args.cols * args.stones if args.cols and args.stones else 0
    weights = [int(w) for w in args.weights.split(",")] if args.weights else None
    match = Match(game, args.time, args.threads, args.hash_mb << 20, seeds, args.search, weights,
                  args.exploration, args.proof_share,
                  {"fpu": args.fpu, "ordered": not args.unordered, "reuse": not args.no_reuse},
                  tables, not args.play_out, args.repetition)
    if args.opponent:
        match.opponent = ProtocolOpponent(args.opponent, game, args.time)
    leaves = match.analyser.leaves
    if match.adjudicate and (len(match.analyser.tables) < len(tables) or leaves["tiers_left_out"]
                             or not leaves["tiers"]):
        parser.error("the engine does not read every tier of the tables at its leaves (its search "
                     "reads none, or they do not fit its memory): adjudicating by them would "
                     "judge its play by what it cannot see; add --play-out")
    if weights and match.search == "mcts":
        parser.error("--weights are the alpha-beta search's; the Monte Carlo search has none "
                     "(add --search alphabeta)")
    settings = {"game": game.describe(), "search": match.search, "exploration": match.exploration,
                "weights": list(match.engine_weights), "time": args.time, "threads": args.threads,
                "opening_plies": args.opening_plies, "max_plies": args.max_plies,
                "hash_mb": args.hash_mb, "seed": args.seed, "proof_share": args.proof_share}
    if match.search == "mcts":
        settings.update(fpu=args.fpu, ordered=not args.unordered, reuse=not args.no_reuse)
    if args.repetition:
        settings.update(repetition=args.repetition)
    if args.opponent:
        settings.update(opponent=args.opponent)
    if tables:
        settings.update(tables=[table_note(t) for t in tables], adjudication=match.adjudicate,
                        leaf_tiers=leaves["tiers"], leaf_bytes=leaves["bytes"])
    games, seconds_before = resume(args.progress, settings)
    started = time.time()
    load_before = os.getloadavg()[0]
    for g in range(len(games), args.games):
        opening_seed = args.seed * 100003 + g // 2
        game_started = time.time()
        record = match.play(opening_seed, g % 2, args.max_plies, args.opening_plies)
        record["seconds"] = round(time.time() - game_started, 1)
        record["load_average"] = round(os.getloadavg()[0], 2)
        games.append(record)
        if args.progress:
            with open(args.progress, "a") as f:
                f.write(json.dumps(record) + "\n")
        print(f"game {g + 1}/{args.games}: {record['result']} ({record['plies']} plies)",
              file=sys.stderr, flush=True)
    games = games[:args.games]
    total = sum(r["score"] for r in games)
    depths = [r["sowsolve_mean_effort"] for r in games if r["sowsolve_mean_effort"] is not None]
    playouts = [r["uct_mean_playouts"] for r in games if r["uct_mean_playouts"] is not None]
    result = {
        "command": "python bench/bench_match.py " + " ".join(sys.argv[1:]),
        "machine": machine(), "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        "game": game.describe(), "search": match.search,
        "effort_unit": "playouts" if match.search == "mcts" else "depth",
        "time_per_move": args.time,
        "threads": args.threads,
        "weights": list(match.engine_weights) if match.search == "alphabeta" else None,
        "exploration": match.exploration,
        "proof_share": args.proof_share,
        "mcts": ({k: settings[k] for k in ("fpu", "ordered", "reuse")}
                 if match.search == "mcts" else None),
        "tables": settings.get("tables"),
        "adjudication": settings.get("adjudication"),
        "adjudicated": sum("adjudicated" in r for r in games),
        "repetition": args.repetition or None,
        "repeated": sum(r.get("repeated", False) for r in games),
        "opponent": (f"through the engine protocol: {args.opponent}" if args.opponent else
                     "plain UCT (UCB1 c=sqrt 2, uniformly random playouts, root-parallel)"),
        "games": len(games),
        "wins": sum(r["result"] == "win" for r in games),
        "draws": sum(r["result"] == "draw" for r in games),
        "losses": sum(r["result"] == "loss" for r in games),
        "score_rate": round(total / len(games), 4) if games else None,
        "sowsolve_mean_effort": round(sum(depths) / len(depths), 1) if depths else None,
        "uct_mean_playouts_per_move": round(sum(playouts) / len(playouts)) if playouts else None,
        "seconds": round(time.time() - started + seconds_before, 1),
        "sessions": "resumed from --progress" if seconds_before else "one run",
        "per_game": games,
    }
    if match.opponent is not None:
        match.opponent.close()
    emit(result, args.out)


if __name__ == "__main__":
    main()
