"""The tables directory ($SOWSOLVE_TABLES, else sowsolve-tables) and what is in it, read-only:
the command line finds a position's table here, and the analysis engine every table of a
board for its leaves.  Nothing here creates or changes a file."""
from __future__ import annotations

import os
import stat

from ..solver.contract import Game
from .format import CorruptTable, ForeignTable, TableError
from .store import open_table


DEFAULT_DIRECTORY = "sowsolve-tables"
SIDECARS = ("-journal", "-wal", "-shm")


def tables_directory() -> str:
    return os.environ.get("SOWSOLVE_TABLES") or DEFAULT_DIRECTORY


def game_and_board(description: str) -> tuple[str, str]:
    """'<title>, 2x4, 2 stones per pit' -> ('<title>', '2x4, 2 stones per pit')."""
    game, _, board = description.partition(", ")
    return game, board


def scan(directory: str | None = None) -> list[dict]:
    """Every file of the directory (not hidden, not an SQLite sidecar), read-only: tables with
    their game, board and size; other files with what is wrong with them.  Never raises for a
    file; a missing directory is an empty list."""
    directory = directory or tables_directory()
    try:
        names = sorted(os.listdir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return []
    entries = []
    for name in names:
        path = os.path.join(directory, name)
        if name.startswith(".") or name.endswith(SIDECARS):
            continue
        odd = _not_regular(path)
        if odd is None:
            entries.append(_entry(path, name))
        elif odd != "gone" and name.endswith(TABLE_SUFFIX):   # named as a table, and no file to read: say so
            entries.append(_odd_entry(path, name, odd))
    return entries


TABLE_SUFFIX = ".sqlite"


def _not_regular(path: str) -> str | None:
    """None for a regular file (through links); else what the path is, from its status alone:
    nothing is opened, so a FIFO never blocks the listing."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a symbolic link to nowhere" if os.path.islink(path) else "gone"
    except OSError as exc:
        return f"not readable ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _odd_entry(path: str, name: str, what: str) -> dict:
    problem = (f"{name} is not a regular file ({what})" if what != "not a regular file"
               else f"{name} is not a regular file")
    return {"file": name, "path": path, "status": "not a table", "problem": problem,
            "game": None, "description": None, "board": None, "parameters": None,
            "finished": None, "positions": None, "size_on_disk": None, "max_stones": None}


def _entry(path: str, name: str) -> dict:
    entry: dict = {"file": name, "path": path, "status": "table", "problem": None,
                   "game": None, "description": None, "board": None, "parameters": None,
                   "finished": None, "positions": None, "size_on_disk": None, "max_stones": None}
    try:
        entry["size_on_disk"] = os.path.getsize(path)
        with open_table(path, allow_unfinished=True) as table:
            meta = table.meta
            game = table.game
            entry.update(game=meta["game"], description=game.describe(),
                         board=game_and_board(game.describe())[1], parameters=game.parameters(),
                         finished=table.finished,
                         positions=sum(int(v) for v in meta["tier_sizes"].values()))
            entry["_game"] = game
            entry["_max_stones"] = entry["max_stones"] = meta.get("max_stones")
        if not entry["finished"]:
            entry["status"] = "unfinished"
    except ForeignTable as exc:
        entry.update(status="not a table", problem=str(exc).replace(path, name))
    except CorruptTable as exc:
        entry.update(status="corrupt", problem=str(exc).replace(path, name))
    except (TableError, OSError) as exc:
        entry.update(status="unreadable", problem=(str(exc) or type(exc).__name__).replace(path, name))
    except Exception as exc:  # noqa: BLE001 - a listing never fails for one odd file
        entry.update(status="unreadable", problem=f"{type(exc).__name__}: {str(exc)[:80]}")
    return entry


def public(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if not k.startswith("_")}


def readable(entries: list[dict]) -> list[dict]:
    """The entries that are tables sowsolve can read (finished or not)."""
    return [e for e in entries if e["status"] in ("table", "unfinished")]


def sharing_order(game: Game):
    """Sort key of tables that hold positions of `game`'s board: finished first, then the
    board's own, its whole table before its endgame tables (the most stones first), then by
    file name -- so that the same position finds the same table whatever else is there."""
    def key(entry: dict):
        own = entry["game"] == game.name and entry["parameters"] == game.parameters()
        most = entry.get("_max_stones")
        return (not entry["finished"], not own, most is not None, -(most or 0), entry["file"])
    return key


def tables_of_board(game: Game, directory: str | None = None) -> list[str]:
    """Paths of the finished tables in the directory that hold positions of this game and
    board (Game.shares_tables_with: its own, and those of boards that differ only in the
    stones of the start), the board's own first."""
    found = [e for e in readable(scan(directory))
             if e["finished"] and game.shares_tables_with(e["_game"])]
    return [e["path"] for e in sorted(found, key=sharing_order(game))]
