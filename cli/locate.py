"""Finding tables: the tables directory ($SOWSOLVE_TABLES, else sowsolve-tables), what is in it,
and which table answers a position or a game -- the way a chess tablebase directory is opened
once and asked about any position.  Nothing here creates or changes a file."""
from __future__ import annotations

import math
import os

from ..solver.contract import Game
from ..solver.errors import BadParameters, BadPosition
from ..solver.games import make_game
from ..tables.format import CorruptTable, ForeignTable, TableError, TableMissing
from ..tables.store import open_table

DEFAULT_DIRECTORY = "sowsolve-tables"
SIDECARS = ("-journal", "-wal", "-shm")
SIDES = {"A": "Diffusion", "B": "Diffusion", "L": "Overflow", "D": "Overflow", "P": "Zig Zag",
         "p": "Zig Zag"}


def tables_directory() -> str:
    return os.environ.get("SOWSOLVE_TABLES") or DEFAULT_DIRECTORY


def short(text: str, limit: int = 40) -> str:
    """Bad input quoted by its prefix only."""
    text = str(text)
    return repr(text if len(text) <= limit else text[:limit] + "...")


def table_file_name(game: Game) -> str:
    board = "-".join(f"{k}{v}" for k, v in game.parameters().items())
    return f"{game.name}-{board}.sqlite"


def default_table_path(game: Game, directory: str | None = None) -> str:
    return os.path.join(directory or tables_directory(), table_file_name(game))


def solve_command(game: Game) -> str:
    options = " ".join(f"--{k} {v}" for k, v in game.parameters().items())
    return f"sowsolve solve {game.name} {options}"


def game_and_board(description: str) -> tuple[str, str]:
    """'Diffusion v1, 2x4, 2 stones per pit' -> ('Diffusion v1', '2x4, 2 stones per pit')."""
    game, _, board = description.partition(", ")
    return game, board


def family(game: Game) -> str:
    """The game as position text shows it (the text does not tell Diffusion v1 from v2)."""
    return "Diffusion" if game.name.startswith("diffusion") else game_and_board(game.describe())[0]


# --- what a position's text looks like ---------------------------------------------------------
def _counts(row: str) -> list[int] | None:
    cells = row.split(",") if "," in row else list(row)
    if not cells or not all(c.isascii() and c.isdigit() for c in cells):
        return None
    return [int(c) for c in cells]


def guess_games(text: str) -> list[Game]:
    """The games, on the smallest board of their family, whose rules accept the text as a
    position: what a position 'looks like'.  Diffusion text fits both variants."""
    fields = str(text).split()
    if len(fields) not in (2, 4) or "/" not in fields[0] or len(fields[0]) > 400:
        return []
    rows = [_counts(row) for row in fields[0].split("/")]
    if any(r is None for r in rows) or len({len(r) for r in rows}) != 1:
        return []
    width, total, side = len(rows[0]), sum(map(sum, rows)), fields[1]
    if len(fields) == 2 and side in ("L", "D"):
        attempts = [("overflow", {"size": f"{len(rows)}x{width}"})]
    elif len(rows) != 2:
        return []
    elif len(fields) == 2 and side in ("A", "B"):
        least = max(1, math.ceil(total / (2 * width)))
        attempts = [(name, {"cols": width, "stones": k}) for name in ("diffusion", "diffusion-v2")
                    for k in range(least, 6)]
    elif len(fields) == 4 and side in ("P", "p"):
        least = max(1, math.ceil(total / (2 * width)))
        attempts = [("zigzag", {"cols": width, "stones": k}) for k in range(least, 10)]
    else:
        return []
    found: list[Game] = []
    for name, parameters in attempts:
        if any(g.name == name for g in found):
            continue
        try:
            game = make_game(name, **parameters)
            game.parse_position(text)
        except (BadParameters, BadPosition):
            continue
        found.append(game)
    return found


def parse_for_table(game: Game, text: str):
    """A position of the table's game; a position of another game is named as such."""
    name = game_and_board(game.describe())[0]
    return _parse_as(game, text, f"this is {'an' if name[0] in 'AEIOU' else 'a'} {name} table")


def parse_for_game(game: Game, text: str):
    """A position of the game named on the command line, the same way."""
    return _parse_as(game, text, f"the game is {game_and_board(game.describe())[0]}")


def _parse_as(game: Game, text: str, context: str):
    try:
        return game.parse_position(text)
    except BadPosition:
        others = [g for g in guess_games(text) if family(g) != family(game)]
        if others:
            raise BadPosition(f"{context}; that position looks like {family(others[0])}") from None
        raise


def _looked_for(games: list[Game]) -> str:
    game = games[0]
    if game.name == "overflow":
        return f"an Overflow table of {game.parameters()['size']}"
    unit = "seeds" if game.name == "zigzag" else "stones"
    return (f"a {family(game)} table of 2x{game.parameters()['cols']} with at least "
            f"{game.parameters()['stones']} {unit} per pit")


# --- what is in the directory ------------------------------------------------------------------
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
        if name.startswith(".") or name.endswith(SIDECARS) or not os.path.isfile(path):
            continue
        entries.append(_entry(path, name))
    return entries


def _entry(path: str, name: str) -> dict:
    entry: dict = {"file": name, "path": path, "status": "table", "problem": None,
                   "game": None, "description": None, "board": None, "parameters": None,
                   "finished": None, "positions": None, "size_on_disk": None}
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


def _readable(entries: list[dict]) -> list[dict]:
    return [e for e in entries if e["status"] in ("table", "unfinished")]


def _no_tables(directory: str) -> str:
    """Why a directory offers no table: it is missing, empty, or holds only other files."""
    if not os.path.isdir(directory):
        return "the directory does not exist"
    odd = scan(directory)
    if odd:
        return (f"the directory holds no table that sowsolve can read ({len(odd)} other "
                f"file{'s' if len(odd) != 1 else ''}; `sowsolve tables` says what they are)")
    return "the directory holds no table"


def _names(entries: list[dict], limit: int = 4) -> str:
    names = [e["file"] for e in entries]
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


# --- which table answers -------------------------------------------------------------------------
def table_for_position(text: str, directory: str | None = None) -> str:
    """The one table of the directory whose game and board accept the position."""
    directory = directory or tables_directory()
    tables = _readable(scan(directory))
    fits = []
    for entry in tables:
        try:
            entry["_game"].parse_position(text)
        except BadPosition:
            continue
        fits.append(entry)
    finished = [e for e in fits if e["finished"]]
    if len(fits) == 1 or len(finished) == 1:
        return (finished or fits)[0]["path"]
    if fits:
        raise BadParameters(f"position {short(text)} fits {len(fits)} tables in {directory} "
                            f"({_names(fits)}); choose one with --table")
    games = guess_games(text)
    if not games:
        fields = str(text).split()
        side = fields[1] if len(fields) > 1 else ""
        for entry in tables:
            if side and family(entry["_game"]) == SIDES.get(side):
                entry["_game"].parse_position(text)     # says what is wrong with the text
        raise BadPosition(f"{short(text)} is no position of Diffusion (like '4444/4444 A'), "
                          f"Overflow ('111/111/111 L') or Zig Zag ('5555/5555 p - -')")
    if tables:
        others = f"the directory holds {len(tables)} other table{'s' if len(tables) != 1 else ''}: {_names(tables)}"
    else:
        others = _no_tables(directory)
    raise TableMissing(f"no table in {tables_directory_label(directory)} answers {short(text)}: "
                       f"looked for {_looked_for(games)}, and {others}; solve one with "
                       f"`{solve_command(games[0])}` or name a table file with --table")


def tables_directory_label(directory: str) -> str:
    return f"{directory} ($SOWSOLVE_TABLES)" if os.environ.get("SOWSOLVE_TABLES") else directory


def table_for_game(game: Game, directory: str | None = None) -> str:
    """The table of this game and board: its default file name, else any table of the
    directory that holds it."""
    directory = directory or tables_directory()
    path = default_table_path(game, directory)
    if os.path.isfile(path):
        return path
    for entry in _readable(scan(directory)):
        if entry["game"] == game.name and entry["parameters"] == game.parameters():
            return entry["path"]
    raise TableMissing(f"no table of {game.describe()} in {tables_directory_label(directory)} "
                       f"(looked for {table_file_name(game)}); solve it with "
                       f"`{solve_command(game)}` or name a table file with --table")


def resolve_read_table(table: str | None, game: str | None = None, cols: int | None = None,
                       stones: int | None = None, size: str | None = None,
                       directory: str | None = None) -> str:
    """The table file a read command works on: --table as given; else the table of GAME and
    board in the tables directory; else the directory's only table."""
    board_given = any(v is not None for v in (cols, stones, size))
    if table is not None:
        if game is not None or board_given:
            raise BadParameters("name a table with --table, or a GAME and board options to find "
                                "its table, not both")
        return table
    if game is not None:
        return table_for_game(make_game(game, cols=cols, stones=stones, size=size), directory)
    if board_given:
        raise BadParameters("board options (--cols, --stones, --size) need a GAME before them")
    directory = directory or tables_directory()
    tables = _readable(scan(directory))
    if len(tables) == 1:
        return tables[0]["path"]
    if not tables:
        raise TableMissing(f"no table to read in {tables_directory_label(directory)}: "
                           f"{_no_tables(directory)}; name a GAME and board options, or a table "
                           f"file with --table")
    raise BadParameters(f"{directory} holds {len(tables)} tables ({_names(tables)}); name a "
                        f"GAME and board options, or a table file with --table")
