"""What every command of the `sowsolve` suite shares: the Typer app, one sentence for every
error (clear_errors), JSON and text output, progress bars, options several commands take,
signals, sizes; the commands themselves are in commands.py, analyse.py and explore.py."""
from __future__ import annotations

import errno
import json
import os
import sys
import contextlib
import traceback
from contextlib import contextmanager
from enum import Enum
from typing import Optional

import typer
from tqdm import tqdm
from typer._click import exceptions as click_exceptions
from typer.core import TyperGroup

from ..solver.contract import proves_first
from ..solver.errors import BadMove, BadParameters, BadPosition, quote, shown
from ..solver.games import GAMES
from ..solver.search import DEFAULT_MAX_POSITIONS
from ..solver.solvers import SEARCH
from ..solver import proof as proofs
from ..tables.format import ForeignTable, TableError, TableMismatch, TableMissing
from ..tables.store import software_version
from ..tables.export import OutputError, Terminated, _silence_stdout
from .gamehelp import families
from .options import whole_number
from ..solver.params import parse_size

def _plain(message: str) -> str:
    """Click's messages without the validator jargon that some of its versions pass through."""
    message = message.replace("Input should be a valid integer, unable to parse string as an "
                              "integer", "expected a whole number")
    message = message.replace("Value error, ", "")
    return message


class OneSentenceGroup(TyperGroup):
    """Click's own usage errors (a missing argument, a word where a number belongs) as one
    sentence on stderr like every other error, instead of usage, hint and error lines."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click_exceptions.NoArgsIsHelpError as exc:
            exc.show()                       # `sowsolve` alone: the help, as click shows it
            sys.exit(exc.exit_code)
        except click_exceptions.ClickException as exc:
            ctx = getattr(exc, "ctx", None)
            hint = f" (see `{ctx.command_path} -h`)" if ctx is not None else ""
            message = _plain(" ".join(exc.format_message().split()))
            note(f"sowsolve: {message}{hint}")
            sys.exit(exc.exit_code)
        except typer.Abort:
            note("sowsolve: aborted")
            sys.exit(1)
        except OSError as exc:      # help or --version into a full disk or a closed pipe
            found = stdout_failure(exc)
            if found is None:
                raise
            if found[0]:
                note(f"sowsolve: {found[0]}")
            sys.exit(found[1])
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(cls=OneSentenceGroup, add_completion=True, no_args_is_help=True,
                  pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})

#: whole-number options read strictly (cli/options.py: no '4.0', '2_2' or other scripts' digits)
WHOLE = {"parser": whole_number, "metavar": "INTEGER"}

USAGE_ERRORS = (BadParameters, BadPosition, BadMove, TableMissing, TableMismatch, ForeignTable,
                proofs.BadProof)
RUNTIME_ERRORS = (TableError, RuntimeError, MemoryError)
SAMPLES = 1000                  # check --samples left out


class ExportFormat(str, Enum):
    csv = "csv"
    jsonl = "jsonl"
    parquet = "parquet"


def note(text: str) -> None:
    """A line for the user on stderr (an estimate, a count); a stderr that cannot be written
    (`2>/dev/full`) never stops the command."""
    try:
        typer.echo(text, err=True)
    except (OSError, ValueError):
        pass


#: whether a command has said why it stops (the entry point adds a line for an exit it did not
#: explain: Ctrl-C while click still reads the options is exit 130 without a word)
explained = False


def _line_start() -> str:
    """On a terminal, back to the start of the line and erase it: a progress bar that Ctrl-C
    caught as it was being drawn, before its owner could close it, is not left in front of the
    sentence."""
    try:
        return "\r\x1b[K" if sys.stderr.isatty() else ""
    except (AttributeError, ValueError):
        return ""


def fail(message: str, code: int) -> None:
    global explained
    note(f"{_line_start()}sowsolve: {message}")
    explained = True
    raise typer.Exit(code)


def stdout_failure(exc: BaseException) -> Optional[tuple[str, int]]:
    """(sentence, exit code) when `exc` is standard output refusing what was written to it (a
    full disk, a closed pipe), else None.  Every command's output, help and version go through
    click's echo: the error is standard output's when it was raised in an echo to it.  Its
    reader gone (EPIPE): exit 141 without a word, as `cat` and `sowsolve export --out -` do;
    any other error: one sentence, exit 1.  Standard output then points at /dev/null, so that
    the exit's own flush of what is left is quiet."""
    if (not isinstance(exc, OSError) or isinstance(exc, OutputError)    # a named output's
            or getattr(exc, "filename", None) is not None or not _raised_writing_stdout(exc)):
        return None
    _silence_stdout()
    if exc.errno == errno.EPIPE:
        return "", 128 + 13
    return f"cannot write standard output: {exc.strerror or exc}", 1


def _raised_writing_stdout(exc: BaseException) -> bool:
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == "echo" and not frame.f_locals.get("err"):
            target = frame.f_locals.get("file")
            if target is not None and target is sys.stdout:
                return True
            try:
                if target is not None and target.fileno() == 1:
                    return True
            except (AttributeError, OSError, ValueError):
                pass
        tb = tb.tb_next
    return False


def _leave_for_stdout(exc: BaseException) -> None:
    found = stdout_failure(exc)
    if found is None:
        return
    sentence, code = found
    if sentence:
        note(f"sowsolve: {sentence}")
    raise typer.Exit(code)


@contextmanager
def clear_errors():
    """One sentence and an exit code for every error a user can cause; never a traceback."""
    try:
        yield
    except typer.Exit:                      # click's Exit is a RuntimeError: let it through
        raise
    except USAGE_ERRORS as exc:
        fail(str(exc), 2)
    except RUNTIME_ERRORS as exc:
        fail(str(exc) or type(exc).__name__, 1)
    except KeyboardInterrupt as exc:
        fail(str(exc) or "interrupted", 130)
    except Terminated as exc:               # SIGTERM or SIGHUP (export, show --svg, ...)
        fail(exc.sentence, 128 + exc.signum)
    except OSError as exc:
        _leave_for_stdout(exc)
        fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc), 1)
    except Exception as exc:  # noqa: BLE001 - a bug: still one sentence, the trace on request
        if os.environ.get("SOWSOLVE_TRACEBACK"):
            traceback.print_exc()
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        fail(f"unexpected {type(exc).__name__}{': ' + detail if detail else ''} (a bug in "
             f"sowsolve; set SOWSOLVE_TRACEBACK=1 for the details)", 1)


def emit_json(obj) -> None:
    typer.echo(json.dumps(obj, indent=2))


def show(result: dict, as_json: bool, text) -> None:
    """A command's result: the dict as JSON, or in words by its renderer."""
    if as_json:
        emit_json(result)
    else:
        typer.echo(text(result))


def tier_bar(total: Optional[int], desc: str):
    """The progress bar of solves, searches and exports (solver.tiers.Progress): positions
    per second and, with a total, the time left; it leaves nothing on the screen once closed
    (the solvers close it however they end, Ctrl-C included)."""
    return tqdm(total=total, desc=desc, unit="pos", unit_scale=True, leave=False,
                disable=None, file=sys.stderr, dynamic_ncols=True, mininterval=0.2)


def show_version(value: bool) -> None:
    if value:
        typer.echo(f"sowsolve {software_version()}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", callback=show_version, is_eager=True,
                                 help="Print the version and exit."),
):
    """Solve sowing games exactly and query their endgame tables.

    Tables are found in the directory $SOWSOLVE_TABLES (sowsolve-tables when unset): solve
    writes there, and query, info, export and check read from there when no --table is given.
    """


GAME_HELP = f"Game: {', '.join(GAMES)}."
#: the games the proof search proves, in a phrase
PROVERS = families(lambda entry: entry.solver.proves)
#: the games whose analysis runs the proof search first, in a phrase
ANALYSE_PROVERS = families(lambda entry: proves_first(entry.cls, by_default=True))


def complete_game(incomplete: str) -> list[str]:
    return [name for name in GAMES if name.startswith(incomplete)]


#: the GAME argument of the commands that name a game and its board
GAME = typer.Argument(..., help=GAME_HELP, autocompletion=complete_game)
#: `prove`'s GAME: only the games the proof search proves
PROVE_GAME = typer.Argument(..., help=f"Game: {', '.join(n for n, e in GAMES.items() if e.solver.proves)} "
                            f"(the games the proof search proves).", autocompletion=complete_game)
#: --game of the commands that read a position's text
GAME_OF_TEXT = ("The position's game, where its text could be another's (a game's variants "
                "read alike); left out, the first whose rules accept it.  Its board: the board "
                "options given, else the standard board where the position fits it, else the "
                "smallest that holds it.")


MAX_POSITIONS = typer.Option(DEFAULT_MAX_POSITIONS, "--max-positions", **WHOLE,
                             help=f"Search limit for games solved by search "
                             f"({families(lambda entry: entry.solver is SEARCH)}).")
READ_GAME = typer.Argument(None, help=GAME_HELP + " Reads the table of this game and board "
                           "from the tables directory; left out with --table also left out, "
                           "the directory's only table.", autocompletion=complete_game)
READ_TABLE = typer.Option(None, "--table", help="Table file (instead of GAME and board options).")


def workers_option(verb: str, each: str = ""):
    return typer.Option(None, "--workers", **WHOLE, help=f"{verb} on a local Dask cluster of this "
                        f"many worker processes{each} (needs sowsolve[cluster]).")


def scheduler_option(verb: str):
    return typer.Option(None, "--scheduler", metavar="ADDRESS", help=f"{verb} on the running Dask "
                        f"cluster of this scheduler.")


def scheduler_file_option(verb: str):
    return typer.Option(None, "--scheduler-file", metavar="FILE", help=f"{verb} on the running "
                        f"Dask cluster this scheduler file names.")


@contextmanager
def stop_on_terminate():
    """SIGTERM and SIGHUP stop a long command as Ctrl-C does (its work saved where it saves
    on Ctrl-C), then it exits 128 + the signal with one sentence."""
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield                   # only the main thread handles signals
        return

    def terminated(signum, frame):
        raise Terminated(signum)
    previous = {s: signal.signal(s, terminated) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    except Terminated as exc:
        fail(exc.sentence, 128 + exc.signum)
    finally:
        for s, old in previous.items():
            signal.signal(s, old)


def parse_memory(text: str, option: str = "--memory", allow_zero: bool = True) -> int:
    """'512M', '8G', '1.5G' or a number of bytes (units of 1024): solver/params.py's parse_size."""
    return parse_size(text, option, allow_zero)


def main() -> None:
    # file names are bytes, not always UTF-8: standard output gives them back as they are (a
    # table named '\xff.sqlite' is listed and reported as `ls` shows it), never an error
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="surrogateescape")
    app()
