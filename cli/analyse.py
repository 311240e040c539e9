"""`sowsolve analyse`: any position of any board, exact where a table or the search's end says
so, estimated elsewhere -- and never the one printed as the other."""
from __future__ import annotations

import sys
import time
from typing import Optional

import typer

from ..solver.errors import BadParameters
from ..solver.tiers import default_threads
from ..tables import analysis
from ..tables import locate
from ..tables.directory import tables_of_board
from ..tables.store import open_table
from . import render
from .common import (ANALYSE_PROVERS, GAME_OF_TEXT, WHOLE, app, clear_errors, complete_game, emit_json,
                     parse_memory, stop_on_terminate)
from .options import BOARD, board_options
from .gamehelp import documented


def game_of_text(text: str, table: str | None, game_name: str | None = None,
                 board: dict | None = None) -> locate.Placement:
    """The game and board a position is analysed on, and why: --table's; else the board
    options' (with --game: that game's), else the standard board where the position fits it,
    else the smallest that holds it (locate.place_position) -- never what the tables
    directory happens to hold."""
    if table is not None:
        if game_name is not None or board:
            raise BadParameters("name the game and board with --game and the board options, "
                                "or a table with --table, not both")
        with open_table(table) as t:
            game = t.game
        locate.parse_for_table(game, text)
        return locate.Placement(game, "the table's board")
    return locate.place_position(text, game_name, board)


class LiveLine:
    """The search's progress on one refreshed line of stderr, when stderr is a terminal."""

    def __init__(self):
        self.shown = sys.stderr.isatty()
        self.width = 0

    def __call__(self, status: analysis.Status) -> None:
        if not self.shown:
            return
        speed = status.nodes / status.seconds if status.seconds > 0 else 0
        if status.phase == "proof":
            text = (f"proof search  {status.nodes:,} positions expanded  {speed / 1e6:.2f} M/s  "
                    f"{status.seconds:.1f} s")
        elif status.search == "mcts":
            text = (f"playouts {status.nodes:,}  {speed / 1e3:.1f} k/s  "
                    f"best {status.best or '-'} {status.value}  {status.seconds:.1f} s")
        else:
            text = (f"depth {status.depth}  nodes {status.nodes:,}  {speed / 1e6:.2f} M/s  "
                    f"best {status.best or '-'} {status.value}  {status.seconds:.1f} s")
        sys.stderr.write("\r" + text.ljust(self.width))
        sys.stderr.flush()
        self.width = len(text)

    def clear(self) -> None:
        if self.shown and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


@app.command(short_help="Best moves of any position: exact from tables, else the engine's estimate.")
@board_options
@documented("analyse")
def analyse(
    position: str = typer.Argument(..., help="Position text, e.g. '555555/555555 p - -'."),
    seconds: Optional[float] = typer.Option(None, "--time", metavar="SECONDS", help="Think this "
                                            f"long (default {analysis.DEFAULT_SECONDS:g} s), "
                                            "counted from the command's start: the tables "
                                            "opened and the --hash memory taken are part of it."),
    nodes: Optional[int] = typer.Option(None, "--nodes", **WHOLE, help="Search this many "
                                        "positions (playouts, where the game's engine searches "
                                        "by Monte Carlo) instead of a time (with --threads 1, "
                                        "the same answer every run)."),
    threads: Optional[int] = typer.Option(None, "--threads", **WHOLE, help="Search threads; "
                                          "left out or 0, every core."),
    multipv: Optional[int] = typer.Option(None, "--multipv", **WHOLE, help="Give "
                                          "values to the K best moves (the rest: an upper bound, "
                                          "unless valued on the way); left out, every move.  Alpha-beta only: the "
                                          "Monte Carlo search values every move."),
    seed: int = typer.Option(0, "--seed", **WHOLE, help="Order of the moves tried first (0: "
                             "as generated), or the Monte Carlo playouts' random stream."),
    game_name: Optional[str] = typer.Option(None, "--game", metavar="GAME", help=GAME_OF_TEXT,
                                            autocompletion=complete_game),
    board: dict = BOARD,
    table: Optional[str] = typer.Option(None, "--table", help="A table of the position's board "
                                        "(its game and board are the position's); left out, "
                                        "every table of the tables directory that holds "
                                        "positions of that board."),
    memory: str = typer.Option("256M", "--hash", metavar="SIZE", help="Memory of the search's "
                               "transposition table or Monte Carlo trees (64M, 1G, ...); the "
                               f"proof search ({ANALYSE_PROVERS}) takes a quarter as much besides."),
    leaf_memory: str = typer.Option("1G", "--leaf-memory", metavar="SIZE", help="At most this "
                                    "much of the tables is read into memory for the leaves "
                                    "(tiers with the fewest stones first)."),
    top: Optional[int] = typer.Option(None, "--top", **WHOLE, help="Text: show the K best "
                                      "moves and count the rest in one line; left out, every "
                                      "move with a value (a Monte Carlo search counts the moves "
                                      "no playout tried).  --json keeps every move."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
):
    """Value of a position and of every legal move, best first, and the best line.

    A table that holds the position answers it: every value exact, as `query` prints it.
    Elsewhere the engine searches it and labels each value: exact (win/loss in N, or a
    margin) where the search reached only the end of the game and table entries, else an
    estimate.  [searches]  Where the proof search proves positions ([engine-provers], boards
    of at most 31 cells), it first gets half the budget.  What a proof settles is exact ("win
    (proved)", no remoteness).
    Ctrl-C prints the best found so far (exit 130).

    [examples]
    """
    live = LiveLine()
    started = time.perf_counter()        # --time bounds the whole command's thinking from here
    with clear_errors(), stop_on_terminate():
        if top is not None and top < 1:
            raise BadParameters(f"--top must be 1 or more, not {top}")
        hash_bytes = parse_memory(memory, "--hash", allow_zero=False)
        leaf_bytes = parse_memory(leaf_memory, "--leaf-memory", allow_zero=True)
        threads = default_threads() if threads is None or threads == 0 else threads
        analysis.check_budget(seconds, nodes, threads, multipv, seed)
        placed = game_of_text(position, table, game_name, board)
        game = placed.game
        parsed = locate.parse_for_game(game, position)
        game.check_position(parsed)
        paths = [table] if table is not None else tables_of_board(game)
        opened = []
        try:
            for path in paths:
                opened.append(open_table(path))
            try:
                result = analysis.analyse(parsed, game, opened, seconds=seconds, nodes=nodes,
                                          threads=threads, multipv=multipv, seed=seed,
                                          hash_bytes=hash_bytes, leaf_bytes=leaf_bytes,
                                          on_status=live, started=started)
            except analysis.Interrupted as stop:
                live.clear()
                _print(locate.annotate(stop.result, placed), as_json, top)
                raise KeyboardInterrupt("interrupted: the best found so far is above") from None
        finally:
            for t in opened:
                t.close()
        live.clear()
        _print(locate.annotate(result, placed, _answering(result, opened)), as_json, top)


def _answering(result: dict, opened: list):
    """The game of the table that answered the position whole, where one did."""
    for t in opened:
        if result.get("source") == "table" and result.get("table") == t.path:
            return t.game
    return None


def _print(result: dict, as_json: bool, top: int | None = None) -> None:
    if as_json:
        emit_json(result)
    else:
        typer.echo(render.analyse_text(result, top))
