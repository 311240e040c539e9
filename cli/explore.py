"""`sowsolve show`, `play` and `serve`: see a position, play against the perfect player, explore
in a browser.  Every game is drawn through its own drawing hook (`Drawable.picture`) by
solver/drawing.py; nothing here names a game."""
from __future__ import annotations

import contextlib
import os
import sys
from typing import Optional

import typer

from ..solver import drawing
from ..solver.contract import Drawable
from ..solver.errors import BadMove, BadParameters, quote
from ..solver.games import make_game
from ..solver.values import VALUE_KINDS
from ..tables import query as queries
from ..tables import locate
from ..tables.export import write_output
from ..solver.tiers import default_threads
from ..tables import analysis
from ..tables.directory import tables_of_board
from ..tables.format import BeyondTable, NotInTable, TableMissing
from ..tables.store import open_table
from .common import GAME_HELP, app, clear_errors, complete_game, emit_json, stop_on_terminate
from .gamehelp import documented, sides
from .options import BOARD, board_options

def value_text(result: dict) -> str:
    if result.get("exact") is False:
        return f"{analysis.describe_value(result, None, result.get('unit', ''))} (estimate)"
    if result.get("remoteness_known") is False:
        return f"{analysis.describe_value(result, None, '')} (exact; how long the game lasts not known)"
    return VALUE_KINDS[result["value_kind"]].text(result["value"], result["remoteness"])


@app.command("show", short_help="Draw a position, each move marked by the value it leads to.")
@board_options
@documented("show")
def show_command(
    position: str = typer.Argument(..., help="Position text, e.g. '444444/444444 A'."),
    table: Optional[str] = typer.Option(None, "--table", help="Table file: each move is marked "
                                        "by the value and remoteness (or margin) it leads to. "
                                        "Left out with --game also left out: the table of the "
                                        "tables directory whose game and board fit the position."),
    game: Optional[str] = typer.Option(None, "--game", help=GAME_HELP + " Draw the position on "
                                       "this game's board, without values (no table read).  "
                                       "The board, with or without --game: the board options "
                                       "given, else the standard board where the position fits "
                                       "it, else the smallest that holds it.",
                                       autocompletion=complete_game),
    board: dict = BOARD,
    svg: Optional[str] = typer.Option(None, "--svg", help="Also write the picture as SVG: a "
                                      "file (written whole or not at all), or - for standard "
                                      "output instead of the text."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: the query's "
                                 "(with a table) and the SVG."),
):
    """Draw a position: in the terminal as text, and with --svg as an SVG picture.

    With a table, each legal move is marked by the value it leads to for the side playing it
    (win green, loss red, draw or margin 0 yellow) and its remoteness.  Where no table of the
    tables directory holds the position, it is drawn without values, and says so.

    [game notes]

    [examples]
    """
    with clear_errors():
        if svg is not None and as_json and _is_stdout(svg):
            raise BadParameters("--svg - and --json both write to standard output; the JSON "
                                "holds the SVG already")
        if table is not None and (game is not None or board):
            raise BadParameters("name a table with --table, or a game with --game, not both")
        result, path, placed, unvalued = None, None, None, None
        if game is not None:
            placed = locate.place_position(position, game, board)
            g = placed.game
            pos = g.parse_position(position)
        else:
            try:
                found = None if table is not None else locate.find_table(position, board=board)
                path = table if table is not None else found.path
                with open_table(path) as t:
                    locate.parse_for_table(t.game, position)
                    result = queries.query(t, position)
                    g = t.game
                    if found is not None:
                        placed = found.placed
                        found.annotate(result, t.game)
                        g = placed.game
            except (TableMissing, BeyondTable) as exc:
                if table is not None:
                    raise                    # the --table file named is missing, or lacks it
                # no table holds it: drawn without values, and said so
                unvalued = str(exc)
                result, path = None, None
                placed = locate.place_position(position, None, board)
                g = placed.game
            pos = g.parse_position(position)
        picture = drawable(g, "show").picture(pos)
        marks = drawing.marks_from_query(result) if result else {}
        picture_svg = drawing.svg(picture, marks)
        if svg is not None:
            write_output(svg, picture_svg, path, "--svg")
        if as_json:
            shown = dict(result) if result else {
                "position": g.format_position(pos), "game": g.name, "description": g.describe(),
                "parameters": g.parameters(), "moves": [{"move": m} for m in picture.moves]}
            if placed is not None:
                shown["board_reason"] = placed.why
            if unvalued is not None:
                shown["values"] = None          # drawn without values: no table holds it
                shown["note"] = unvalued
            if path is not None:
                shown["table"] = path
            shown["svg"] = picture_svg
            emit_json(shown)
        elif svg is None or not _is_stdout(svg):
            lines = [drawing.text(picture, marks, colour=sys.stdout.isatty())]
            if placed is not None and placed.why != "the board given":
                lines.append(f"board: {g.describe()} ({placed.why})")
            if result and result.get("table_description"):
                lines.append(f"table: {path}: {result['table_description']}, which holds "
                             f"this position too (the same pits)")
            if result:
                lines.append(f"value: {value_text(result)} for the side to move")
            elif unvalued is not None:
                lines.append("values: none here, no table holds this position (`sowsolve "
                             "analyse` values it with the engine)")
            typer.echo("\n".join(lines))


def _is_stdout(out: str) -> bool:
    """Whether --svg names standard output (then the SVG alone goes there)."""
    if out == "-":
        return True
    try:
        return os.path.samestat(os.stat(out), os.fstat(1))
    except (OSError, ValueError):
        return False


class _Quit(Exception):
    pass


def _read(prompt: str) -> str:
    """A line of the player's, prompt first; _Quit at the end of the input."""
    typer.echo(prompt, nl=False)
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        typer.echo("")
        raise _Quit()
    if not sys.stdin.isatty():          # piped moves: show what was played
        typer.echo(line.rstrip("\n"))
    return line.strip()


@app.command("play", short_help="Play a position against the perfect player in the terminal.")
@documented("play", "play --table T.sqlite", "play --hints")
def play_command(
    table: Optional[str] = typer.Option(None, "--table", help="Table file; left out, the table "
                                        "of the tables directory that fits --position (as "
                                        "query finds it), else the directory's only table."),
    position: Optional[str] = typer.Option(None, "--position", help="Start here (the game's "
                                           "start by default)."),
    side: Optional[str] = typer.Option(None, "--as", help=f"The side you play ({sides()}); "
                                       "left out, the side to move at the start: you move "
                                       "first."),
    hints: bool = typer.Option(False, "--hints", help="Show every move's value on each of "
                               "your turns."),
    seconds: Optional[float] = typer.Option(None, "--time", metavar="SECONDS", help="Where no "
                                            "table holds the position, the engine thinks this "
                                            "long a move (any board: with --position, no table "
                                            "is needed)."),
    game_name: Optional[str] = typer.Option(None, "--game", metavar="GAME", help="With --time "
                                            "and no table: the game (its standard board, or the "
                                            "board of --position), where the text could be "
                                            "another's (a game's variants read alike)."),
):
    """Play against the perfect player: it wins as fast as it can and loses as slowly as it
    can (in a game of margins: the best margin).  With --time, the engine plays where the table does not
    reach (its values marked as estimates where they are).  Type a move as `query` prints it,
    `hint` for the value of every move, `undo` to take back your last move (and the reply),
    `quit` to stop.  The value of the position is shown after every move.  Reads moves from a
    pipe as well as from a terminal.

    [examples]
    """
    with clear_errors(), stop_on_terminate():
        if seconds is not None:
            analysis.check_budget(seconds, None, 1, None, 0)
        if game_name is not None and (table is not None or seconds is None):
            raise BadParameters("--game chooses the engine's game: give it with --time, and "
                                "without --table (a table names its own game)")
        if table is None and seconds is not None and (position is not None or game_name is not None):
            from .analyse import game_of_text
            g = game_of_text(position, None, game_name).game if position is not None else make_game(game_name)
            paths = tables_of_board(g)
            path = paths[0] if paths else None
        elif table is None and position is not None:
            try:
                found = locate.find_table(position)  # the table that holds it, as query finds
            except TableMissing as exc:
                raise TableMissing(f"{exc}; or play the engine with --time SECONDS") from None
            path, g = found.path, found.placed.game     # the position's board, as query names it
        else:
            path = table if table is not None else only_table()
        with (open_table(path) if path is not None else contextlib.nullcontext()) as t:
            g = drawable(g if t is None or (position is not None and table is None) else t.game,
                         "play")
            text = position if position is not None else g.format_position(g.initial())
            locate.parse_for_table(g, text)
            current = g.parse_position(text)
            g.check_position(current)
            sides = tuple(g.sides)
            if side is not None and side not in sides:
                raise BadParameters(f"--as must be one of the sides of {g.describe()}: "
                                    f"{' or '.join(sides)}, not {quote(side, 20)}")
            engine = (analysis.Analyser(g, [t] if t is not None else [])
                      if seconds is not None else None)
            answer = _answerer(t, g, engine, seconds)
            if engine is None:
                try:
                    answer(current)              # a start the table cannot answer: said first
                except BeyondTable:
                    if position is not None:
                        raise
                    raise BadParameters(f"{os.path.basename(path)} is an endgame table, and the "
                                        f"start is beyond it; give a --position it holds, or "
                                        f"--time for the engine") from None
            human = side if side is not None else g.side_to_move(current)
            colour = sys.stdout.isatty()
            player = ("the table plays" if engine is None else "the table and the engine play"
                      if t is not None else "the engine plays")
            typer.echo(f"you play {human} in {g.describe()}; {player} "
                       f"{' and '.join(s for s in sides if s != human)}")
            try:
                _play(answer, g, [current], human, hints, colour)
            except _Quit:
                typer.echo("game left unfinished")


def _answerer(t, g, engine, seconds):
    """position -> its result: the table's where it holds the position (exact), else the
    engine's (labelled), else the table's error."""
    def answer(position) -> dict:
        if t is not None:
            try:
                return queries.query(t, g.format_position(position))
            except (BeyondTable, NotInTable):
                if engine is None:
                    raise
        return engine.analyse(position, seconds=seconds, threads=default_threads())
    return answer


def only_table() -> str:
    """The tables directory's one table, for commands that take no GAME."""
    directory = locate.tables_directory()
    locate.check_directory(directory)
    found = locate.readable(locate.scan(directory))
    if len(found) == 1:
        return found[0]["path"]
    if not found:
        raise TableMissing(f"no table to read in {locate.tables_directory_label(directory)}; "
                           f"name a table file with --table")
    raise BadParameters(f"{directory} holds {len(found)} tables ({locate._names(found)}); name "
                        f"one with --table")


def _end_text(result: dict, mover: str, human: str, sides, gains: dict) -> str:
    """'game over: A wins (you win)', '... a draw'; in a game scored by a margin, who ends
    ahead over the play here: what each captured, plus what the end itself is worth to the
    side to move."""
    value = result["value"]
    other = next(s for s in sides if s != mover)
    if value in ("win", "loss"):
        winner = mover if value == "win" else other
    elif value == "draw":
        return "game over: a draw"
    else:
        lead = gains[mover] - gains[other] + value
        if lead == 0:
            return "game over: a tie over the play here"
        winner = mover if lead > 0 else other
        return (f"game over: {winner} ends {abs(lead)} ahead over the play here "
                f"({'you win' if winner == human else 'you lose'})")
    return f"game over: {winner} wins ({'you win' if winner == human else 'you lose'})"


def _after(g, position, move, gains: dict) -> tuple:
    """The position after `move`, and what each side has captured since play began."""
    mover = g.side_to_move(position)
    return g.play(position, move), {**gains, mover: gains[mover] + g.move_gain(position, move)}


def _play(answer, g, history: list, human: str, hints: bool, colour: bool) -> None:
    """The game loop; `history` holds (position, gains so far) pairs."""
    history[:] = [(history[0], {s: 0 for s in g.sides})]
    while True:
        current, gains = history[-1]
        result = answer(current)
        mover = g.side_to_move(current)
        ours = mover == human
        marks = drawing.marks_from_query(result)
        typer.echo("")
        typer.echo(drawing.text(g.picture(current), marks if ours and hints else None, colour))
        typer.echo(f"position: {result['position']}")
        if any(gains.values()):
            typer.echo("captured since the start of play: "
                       + ", ".join(f"{s} {n}" for s, n in gains.items()))
        typer.echo(f"value: {value_text(result)} for {mover} (to move)")
        if result["final"]:
            typer.echo(_end_text(result, mover, human, g.sides, gains))
            return
        if not ours:
            move_text = (result["best"] or [result["moves"][0]["move"]])[0]
            move = g.parse_move(current, move_text)
            history.append(_after(g, current, move, gains))
            typer.echo(f"{mover} plays {move_text}")
            continue
        while True:
            said = _read(f"your move ({mover}; or hint, undo, quit): ")
            if said in ("quit", "q", "exit"):
                raise _Quit()
            if said == "hint":
                visits = {m["move"]: m["visits"] for m in result["moves"] if "visits" in m}
                for move_text, mark in marks.items():
                    # the Monte Carlo search's estimates come in its order: by playouts
                    behind = (f"  ({visits[move_text]:,} playout{'s' if visits[move_text] != 1 else ''})"
                              if visits.get(move_text) and not mark.exact else "")
                    typer.echo(f"  {move_text}  {mark.short}{behind}")
                continue
            if said == "undo":
                # back to before your last move: the last earlier position you were to move in
                mine = [i for i in range(len(history) - 1) if g.side_to_move(history[i][0]) == human]
                if not mine:
                    typer.echo("nothing to undo: you have not moved yet")
                    continue
                del history[mine[-1] + 1:]
                break
            if not said:
                continue
            try:
                move = g.parse_move(current, said)
            except BadMove as exc:
                typer.echo(f"sowsolve: {exc}", err=True)
                continue
            history.append(_after(g, current, move, gains))
            break


@app.command("serve", short_help="A local web explorer of tables: board, moves and values.")
@documented("serve", "serve --table a.sqlite --port 8080",
            "serve --table a.sqlite --table b.sqlite")
def serve_command(
    table: Optional[list[str]] = typer.Option(None, "--table", help="A table file to serve; "
                                              "repeat it for more. Left out, the tables "
                                              "directory's only table."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (only this "
                             "machine by default)."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
):
    """Serve a web explorer of the tables: the board as a picture (click a move to play it),
    every move coloured by its value with its remoteness, back and forward, a box to type a
    position, and a chart of the value along the moves played.  Its JSON API answers
    /api/query?position=...&table=NAME (NAME a served table's file name; optional with one
    table) with the object `query --json` prints.  Only the tables named here are ever opened.
    [game notes]  Ctrl-C stops it.

    [examples]
    """
    with clear_errors(), stop_on_terminate():
        if not 1 <= port <= 65535:
            raise BadParameters(f"--port must be from 1 to 65535, not {port}")
        paths = list(table) if table else [only_table()]
        from . import web
        web.table_names(paths)
        for path in paths:              # a bad table: its one sentence before anything listens
            with open_table(path) as t:
                drawable(t.game, "serve")
        _check_free(host, port)
        import threading
        import uvicorn
        stop = threading.Event()

        class Server(uvicorn.Server):
            def handle_exit(self, sig, frame) -> None:
                stop.set()          # searches under way stop now, not after they end
                super().handle_exit(sig, frame)

        shown = f"[{host}]" if ":" in host else host
        typer.echo(f"sowsolve: serving {len(paths)} {'table' if len(paths) == 1 else 'tables'} at "
                   f"http://{shown}:{port}/ (Ctrl-C stops)", err=True)
        Server(uvicorn.Config(web.create_app(paths, web.allowed_hosts(host), stop), host=host,
                              port=port, log_level="warning")).run()
        typer.echo("sowsolve: stopped", err=True)


def drawable(game, command: str):
    """The game, if it draws its positions (Drawable); else BadParameters saying `command`
    cannot show it."""
    if not isinstance(game, Drawable):
        raise BadParameters(f"{game.describe()} offers no pictures of its positions "
                            f"(Drawable), so `sowsolve {command}` cannot show them; query and "
                            f"analyse answer them")
    return game


def _check_free(host: str, port: int) -> None:
    """BadParameters naming the problem where nothing can listen on host:port."""
    import socket
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise BadParameters(f"--host {host[:60]!r} is no address of this machine") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
