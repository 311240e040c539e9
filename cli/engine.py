"""`sowsolve engine`: the engine protocol (tables/protocol.py) on standard input and output,
for match programs, GUIs and scripts in any language (docs/engine.md)."""
from __future__ import annotations

import sys
from typing import Optional

import typer

from ..solver.errors import BadParameters
from ..solver.games import make_game
from ..tables import analysis
from ..tables.protocol import EngineProtocol, OutputClosed
from .common import app, clear_errors, parse_memory, stop_on_terminate
from .gamehelp import documented
from .options import BOARD, board_options


def _writer():
    out = sys.stdout

    def write(line: str) -> None:
        try:
            out.write(line + "\n")
            out.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise OutputClosed(str(exc)) from None
    return write


@app.command("engine", short_help="A long-lived engine driven by text commands on stdin.")
@documented("engine", "engine")
@board_options
def engine_command(
    game_name: Optional[str] = typer.Argument(None, metavar="[GAME]", help="Start with this game "
                                              "(and the board options), as the command `game` "
                                              "does; left out, send `game` first."),
    board: dict = BOARD,
    threads: Optional[int] = typer.Option(None, "--threads", help="Search threads; left out or "
                                          "0, every core (setoption threads N)."),
    memory: str = typer.Option("256M", "--hash", metavar="SIZE", help="Memory of the search's "
                               "transposition table or Monte Carlo trees (setoption hash SIZE)."),
):
    """A long-lived engine: reads one command a line on standard input, answers on standard
    output, one line each, until `quit` or the end of input.  Commands: game, position, go,
    stop, analyse, setoption, isready, legal, show, newgame, protocol, help, quit
    (docs/engine.md has each, with a transcript).  A bad command gets one line
    `error <sentence>` and the engine goes on.  The search's tree and table stay between
    moves; the board's tables in the tables directory answer the positions they hold and sit
    at the search's leaves.

    \b
    A session (> what is sent, < what comes back):
      > game GAME [board options]
      > position start moves M1 M2
      > go time 0.5
      < info ... value ... pv ...
      < bestmove M

    [examples]
    """
    with clear_errors(), stop_on_terminate():
        if sys.stdout is None or sys.stdin is None:
            raise BadParameters("the engine needs standard input and output open: it reads "
                                "commands and answers on them")
        hash_bytes = parse_memory(memory, "--hash", allow_zero=False)
        analysis.check_hash(hash_bytes)
        analysis.check_budget(None, None, threads or 0, None, 0)
        if game_name is None and board:
            raise BadParameters("board options need a GAME before them")
        game = make_game(game_name, **board) if game_name is not None else None
        for stream in (sys.stdin,):
            try:
                stream.reconfigure(errors="replace")
            except (AttributeError, ValueError, OSError):
                pass
        engine = EngineProtocol(_writer(), threads=threads, hash_bytes=hash_bytes)
        try:
            if game is not None:
                engine.choose_game(game)
            engine.run(sys.stdin.readline)
        finally:
            engine.close()

