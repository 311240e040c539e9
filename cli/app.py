"""The `sowsolve` command suite (Typer): solve, query, export, info, perft, check."""
from __future__ import annotations

import json
import os
import sys
import time
from contextlib import contextmanager
from enum import Enum
from typing import Optional

import typer
from tqdm import tqdm

from ..solver.errors import BadMove, BadParameters, BadPosition
from ..solver.games import GAMES, make_game
from ..solver.retrograde import default_threads
from ..solver.search import DEFAULT_MAX_POSITIONS, solve as solve_game
from ..tables.format import ForeignTable, TableError, TableMismatch, TableMissing
from ..tables.store import TableWriter, open_table
from ..solver import selfcheck
from ..tables import analysis
from . import render

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode=None,
                  help="Solve sowing games exactly and query their endgame tables.")

USAGE_ERRORS = (BadParameters, BadPosition, BadMove, TableMissing, TableMismatch, ForeignTable)
RUNTIME_ERRORS = (TableError, RuntimeError, MemoryError)


class ExportFormat(str, Enum):
    csv = "csv"
    jsonl = "jsonl"


def fail(message: str, code: int) -> None:
    typer.echo(f"sowsolve: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def clear_errors():
    """One sentence and an exit code for every error a user can cause; never a traceback."""
    try:
        yield
    except USAGE_ERRORS as exc:
        fail(str(exc), 2)
    except RUNTIME_ERRORS as exc:
        fail(str(exc) or type(exc).__name__, 1)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except OSError as exc:
        fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc), 1)


def emit_json(obj) -> None:
    typer.echo(json.dumps(obj, indent=2))


def default_table_path(game) -> str:
    directory = os.environ.get("SOWSOLVE_TABLES", "sowsolve-tables")
    board = "-".join(f"{k}{v}" for k, v in game.parameters().items())
    return os.path.join(directory, f"{game.name}-{board}.sqlite")


def tier_bar(total: int, desc: str):
    return tqdm(total=total, desc=desc, unit="pos", unit_scale=True, leave=False,
                disable=None, file=sys.stderr, dynamic_ncols=True)


GAME_HELP = f"Game: {', '.join(GAMES)}."
COLS = typer.Option(None, "--cols", help="Diffusion, Zig Zag: pits per row [default: 6].")
STONES = typer.Option(None, "--stones", help="Diffusion: stones per pit at the start, 1-5 "
                      "[default: 4]; Zig Zag: seeds per pit, 1-9 [default: 5].")
SIZE = typer.Option(None, "--size", help="Overflow: ranks x files, e.g. 4x4 [default: 6x6].")
MAX_POSITIONS = typer.Option(DEFAULT_MAX_POSITIONS, "--max-positions",
                             help="Search limit for games solved by search (Overflow).")


@app.command()
def solve(
    game: str = typer.Argument(..., help=GAME_HELP),
    cols: Optional[int] = COLS,
    stones: Optional[int] = STONES,
    size: Optional[str] = SIZE,
    table: Optional[str] = typer.Option(None, "--table", help="Table file to write "
                                        "[default: sowsolve-tables/GAME-colsN-stonesK.sqlite, "
                                        "or under $SOWSOLVE_TABLES]."),
    threads: int = typer.Option(0, "--threads", help="Solver threads [default: all cores]."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing table and start over."),
    max_positions: int = MAX_POSITIONS,
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
):
    """Solve every position of a board into a table.

    Diffusion: every position, tier by tier (stones on the board); a second solve of a finished
    table does nothing, an unfinished one resumes after its last finished tier.  Overflow: every
    position reachable from the start, by a search with a transposition table (a killed search
    starts over).  Zig Zag: every position, tier by tier (seeds on the board, last capturer),
    values are margins.

    \b
    Examples: sowsolve solve diffusion --cols 4 --stones 2
              sowsolve solve overflow --size 3x4
              sowsolve solve zigzag --cols 4 --stones 2
    """
    with clear_errors():
        if threads < 0:
            raise BadParameters(f"--threads must be 0 (all cores) or more, not {threads}")
        if max_positions < 1:
            raise BadParameters(f"--max-positions must be at least 1, not {max_positions}")
        g = make_game(game, cols=cols, stones=stones, size=size)
        if g.indexing == "keys":
            g.key(g.initial())            # a board too large to pack fails here, writing nothing
        path = table or default_table_path(g)
        writer = TableWriter(path, g, force=force)
        try:
            started = time.perf_counter()
            report = None
            if not writer.finished:
                report = solve_game(g, writer, threads=threads or default_threads(), progress=tier_bar,
                               max_positions=max_positions)
                writer.finish({"solve_seconds": round(time.perf_counter() - started, 3),
                               "threads": threads or default_threads()})
        finally:
            writer.close()
        with open_table(path) as t:
            result = analysis.summary(t)
        result["table"] = path
        result["solved_now"] = report is not None
        if report is not None:
            result["positions_solved_now"] = report.positions
            result["seconds"] = round(report.seconds, 3)
            result["resumed_from_tier"] = report.resumed_from
        if as_json:
            emit_json(result)
        else:
            typer.echo(render.summary_text(result))


@app.command()
def query(
    position: str = typer.Argument(..., help="Position text, e.g. '4444/4444 A'."),
    table: str = typer.Option(..., "--table", help="Table file."),
    max_positions: int = MAX_POSITIONS,
    stores: Optional[str] = typer.Option(None, "--stores", help="Zig Zag: seeds already in the "
                                         "stores of P and p, as P,p; adds the final result."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
):
    """Value and remoteness of a position, and of every legal move, best first.

    Zig Zag: the value is the margin the side to move secures from here on (its future seeds
    minus the opponent's, the seeds left at the end going to the last capturer); remoteness
    is null where that margin comes from play in which both sides avoid every capture forever.

    An Overflow table holds the positions reachable from the start; any other position is
    answered by a search from it (JSON "source": "search"), up to --max-positions.

    \b
    Examples: sowsolve query '2222/2222 A' --table sowsolve-tables/diffusion-cols4-stones2.sqlite
              sowsolve query '111/111/111 L' --table sowsolve-tables/overflow-size3x3.sqlite
    """
    with clear_errors():
        with open_table(table) as t:
            result = analysis.query(t, position, max_positions, progress=tier_bar)
            if stores is not None:
                result["result"] = analysis.final_result(t, result, stores)
        if as_json:
            emit_json(result)
        else:
            typer.echo(render.query_text(result))


@app.command()
def export(
    table: str = typer.Option(..., "--table", help="Table file."),
    fmt: ExportFormat = typer.Option(..., "--format", help="csv or jsonl."),
    out: str = typer.Option(..., "--out", help="Output file (written whole or not at all)."),
    max_stones: Optional[int] = typer.Option(None, "--max-stones",
                                             help="Only positions with at most this many stones."),
):
    """Write one row per position: position, value, remoteness.

    Diffusion: both sides to move; Overflow: one position per symmetry class; Zig Zag: the
    value is the margin for the side to move, and the remoteness is empty (JSON null) where
    that margin comes from play that avoids every capture forever.

    Example: sowsolve export --table T.sqlite --format csv --out t.csv --max-stones 6
    """
    with clear_errors():
        if max_stones is not None and max_stones < 1:
            raise BadParameters(f"--max-stones must be at least 1, not {max_stones}")
        with open_table(table) as t:
            rows = analysis.export(t, out, fmt.value, max_stones, progress=tier_bar)
        typer.echo(f"wrote {rows} rows to {out}", err=True)


@app.command()
def info(
    table: str = typer.Option(..., "--table", help="Table file."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
):
    """Game, board, positions and results per tier, start value, longest win, size on disk.

    Example: sowsolve info --table sowsolve-tables/diffusion-cols4-stones2.sqlite
    """
    with clear_errors():
        with open_table(table, allow_unfinished=True) as t:
            result = analysis.info(t)
        if as_json:
            emit_json(result)
        else:
            typer.echo(render.info_text(result))


@app.command()
def perft(
    game: str = typer.Argument(..., help=GAME_HELP),
    cols: Optional[int] = COLS,
    stones: Optional[int] = STONES,
    size: Optional[str] = SIZE,
    depth: int = typer.Option(..., "--depth", help="Plies to count."),
    position: Optional[str] = typer.Option(None, "--position", help="Start from this position."),
    as_json: bool = typer.Option(False, "--json", help='Print {"perft": [n1, ..., nD]}.'),
):
    """Count move paths of each length from a position (no moves from a finished game).

    \b
    Examples: sowsolve perft diffusion --cols 6 --stones 4 --depth 4
              sowsolve perft overflow --size 4x4 --depth 3 --json
              sowsolve perft zigzag --cols 6 --stones 5 --depth 4
    """
    with clear_errors():
        if not 1 <= depth <= 40:
            raise BadParameters(f"--depth must be from 1 to 40, not {depth}")
        g = make_game(game, cols=cols, stones=stones, size=size)
        pos = g.parse_position(position) if position is not None else g.initial()
        started = time.perf_counter()
        counts = g.perft(pos, depth)
        seconds = time.perf_counter() - started
        if as_json:
            emit_json({"perft": counts})
        else:
            for d, n in enumerate(counts, 1):
                typer.echo(f"depth {d}: {n}")
            typer.echo(f"{sum(counts)} nodes in {seconds:.3f} s", err=True)


@app.command()
def check(
    game: Optional[str] = typer.Argument(None, help=GAME_HELP + " Checks the game's contract."),
    cols: Optional[int] = COLS,
    stones: Optional[int] = STONES,
    size: Optional[str] = SIZE,
    table: Optional[str] = typer.Option(None, "--table", help="Check this table file instead."),
    samples: int = typer.Option(1000, "--samples", help="Positions sampled per tier."),
    full: bool = typer.Option(False, "--full", help="Table: verify every position, not a sample."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sampling."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Self-check: the game contract (kernel == rules, ranking, un-moves), or a whole table
    (block checksums, metadata, every sampled value against its children).

    Examples: sowsolve check diffusion --cols 4 --stones 2
              sowsolve check --table T.sqlite --full
    """
    with clear_errors():
        if samples < 1:
            raise BadParameters(f"--samples must be at least 1, not {samples}")
        if (game is None) == (table is None):
            raise BadParameters("name a GAME to check its contract, or a --table to check, "
                                "not both or neither")
        if table is not None:
            with open_table(table) as t:
                report = analysis.check_table(t, samples, full, seed)
        else:
            report = selfcheck.check_game(make_game(game, cols=cols, stones=stones, size=size),
                                          samples, seed)
        if as_json:
            emit_json(report)
        else:
            typer.echo(render.check_text(report))
        if report["failures"]:
            raise typer.Exit(1)


def main() -> None:
    app()
