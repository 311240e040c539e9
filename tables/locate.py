"""Finding tables: the tables directory ($SOWSOLVE_TABLES, else sowsolve-tables), what is in it,
and which table answers a position or a game -- the way a chess tablebase directory is opened
once and asked about any position.  Nothing here creates or changes a file."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..solver import games as registry
from ..solver.contract import Game
from ..solver.errors import BadParameters, BadPosition, quote
from .format import CorruptTable, TableMissing
from .layout import layout_of
from .solving import default_table_path, table_file_name  # noqa: F401  (re-exported)
from .directory import (DEFAULT_DIRECTORY, SIDECARS, game_and_board, public, readable,  # noqa: F401
                                scan, tables_directory, tables_of_board)

if TYPE_CHECKING:
    from .store import Table


def short(text: str, limit: int = 40) -> str:
    """Bad input quoted by its prefix only, with its length when it is longer."""
    return quote(text, limit)


def check_directory(directory: str) -> None:
    """BadParameters when the tables directory names something that is not a directory, or
    cannot be looked at (a name too long, a loop of links); a missing one is fine: it has no
    tables yet, and solve makes it."""
    if not isinstance(directory, str):
        raise BadParameters(f"a tables directory is a path (text), not {type(directory).__name__}")
    try:
        os.stat(directory)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise BadParameters(f"the tables directory {quote(tables_directory_label(directory), 60)} "
                            f"cannot be read: {exc.strerror or exc}") from None
    if not os.path.isdir(directory):
        raise BadParameters(f"the tables directory {tables_directory_label(directory)} is not a "
                            f"directory")


def solve_command(game: Game) -> str:
    options = "".join(f" --{k.replace('_', '-')} {v}" for k, v in game.parameters().items())
    return f"sowsolve solve {game.name}{options}"


def family(game: Game) -> str:
    """The game as position text shows it (variants written alike share a family)."""
    return registry.entry_of(game).family


# --- what a position's text looks like ---------------------------------------------------------
def guess_games(text: str) -> list[Game]:
    """The registered games, each on the smallest of the boards its text could be, whose rules
    accept the text as a position: what a position 'looks like'."""
    found = (on_smallest_board(entry, text)[0] for entry in registry.GAMES.values())
    return [game for game in found if game is not None]


def on_smallest_board(entry, text: str) -> tuple[Game | None, BadPosition | None]:
    """The game of `entry` on the smallest board whose rules accept `text` as a position, or
    None and the rules' reason on the first board the text's shape gives (None where no board
    could be built for it). The reason names the board where the text alone gives it, not where
    it is a guess of the stones a pit."""
    boards = entry.boards_for_text(text)
    reason = None
    for board in boards:
        try:
            game = entry.build(board)
        except BadParameters:
            continue
        try:
            game.check_position(game.parse_position(text))
            return game, None
        except BadPosition as exc:
            if reason is None:
                reason = BadPosition(f"{game.describe()}: {exc}" if len(boards) == 1 else str(exc))
    return None, reason


def no_position(text: str) -> BadPosition:
    """Why `text` is no position of any game: the rules' own reason on the smallest board of
    the first game whose position text it looks like (too many stones, stacks apart, ...), else
    what the games' positions look like."""
    for entry in registry.GAMES.values():
        if entry.looks_like(text):
            game, reason = on_smallest_board(entry, text)
            if game is None and reason is not None:
                return reason
    # where the side to move names the players of one game only, that game's rules say what
    # is wrong (on its standard board: a row of the wrong length, a count that is no number)
    fields = text.split() if isinstance(text, str) else []
    near = [entry for entry in registry.GAMES.values()
            if len(fields) >= 2 and fields[1] in getattr(entry.cls, "sides", ())]
    if near and len({entry.family for entry in near}) == 1:
        try:
            game = near[0].build({})
            game.check_position(game.parse_position(text))
        except BadPosition as exc:
            return BadPosition(f"{exc} (read as {game.describe()}, the standard board)")
        except BadParameters:
            pass
    return BadPosition(f"{short(text)} is no position of {_examples()}")


def _examples() -> str:
    """'<family> (like <example>), <family> (<example>) or <family> (<example>)'."""
    shown: dict[str, str] = {}
    for entry in registry.GAMES.values():
        shown.setdefault(entry.family, entry.position_example())
    texts = [f"{name} ({'like ' if not i else ''}{example!r})"
             for i, (name, example) in enumerate(shown.items())]
    return ", ".join(texts[:-1]) + f" or {texts[-1]}" if len(texts) > 1 else texts[0]


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
    return registry.entry_of(games[0]).table_phrase(games[0])


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
def table_for_position(text: str, directory: str | None = None,
                       entries: list[dict] | None = None) -> str:
    """The one table of the directory whose game and board accept the position (`entries`:
    the directory's scan, where the caller keeps one)."""
    directory = directory or tables_directory()
    check_directory(directory)
    entries = scan(directory) if entries is None else entries
    tables = readable(entries)
    fits, beyond = [], []
    for entry in tables:
        game = entry["_game"]
        try:
            position = game.parse_position(text)
            game.check_position(position)
            if entry.get("_max_stones") is not None and game.tier_stones(
                    layout_of(game).address(game, position)[0]) > entry["_max_stones"]:
                beyond.append(entry)    # that endgame table says so, if no table holds it
                continue
        except BadPosition:
            continue
        fits.append(entry)
    if not fits and beyond:
        return max(beyond, key=lambda e: e["_max_stones"])["path"]
    whole = [e for e in fits if e.get("_max_stones") is None]
    if len(whole) == 1 and all(e["game"] == whole[0]["game"] and e["parameters"] == whole[0]["parameters"]
                               for e in fits):
        fits = whole                # a board's whole table before its endgame tables
    finished = [e for e in fits if e["finished"]]
    if len(fits) == 1 or len(finished) == 1:
        return (finished or fits)[0]["path"]
    if fits:
        raise BadParameters(f"position {short(text)} fits {len(fits)} tables in {directory} "
                            f"({_names(fits)}); choose one with --table")
    games = guess_games(text)
    if not games:
        # what is wrong with the text, or why it cannot arise on the board its shape gives
        # (not on the board of some table of the directory that it does not fit)
        raise no_position(text)
    damaged = [e for e in entries if e["status"] not in ("table", "unfinished")
               and e["file"].endswith(".sqlite")]
    if damaged:         # the table that would answer may be the damaged one: never pass it over
        raise CorruptTable(f"no readable table in {tables_directory_label(directory)} answers "
                           f"{short(text)}, and {damaged[0]['problem']}"
                           + (f" (and {len(damaged) - 1} more damaged)" if len(damaged) > 1 else "")
                           + "; `sowsolve tables` lists what is wrong")
    if tables:
        others = f"the directory holds {len(tables)} other table{'s' if len(tables) != 1 else ''}: {_names(tables)}"
    else:
        others = _no_tables(directory)
    raise TableMissing(f"no table in {tables_directory_label(directory)} answers {short(text)}: "
                       f"looked for {_looked_for(games)}, and {others}; solve one with "
                       f"`{solve_command(games[0])}` or name a table file with --table")


def tables_directory_label(directory: str) -> str:
    given = os.environ.get("SOWSOLVE_TABLES")
    return f"{directory} ($SOWSOLVE_TABLES)" if given and given == directory else directory


def table_for_game(game: Game, directory: str | None = None) -> str:
    """The table of this game and board: its default file name, else any table of the
    directory that holds it."""
    directory = directory or tables_directory()
    check_directory(directory)
    path = default_table_path(game, directory)
    if os.path.lexists(path):       # a FIFO, a directory, a dangling link: opening says so
        return path
    for entry in readable(scan(directory)):
        if entry["game"] == game.name and entry["parameters"] == game.parameters():
            return entry["path"]
    raise TableMissing(f"no table of {game.describe()} in {tables_directory_label(directory)} "
                       f"(looked for {table_file_name(game)}); solve it with "
                       f"`{solve_command(game)}` or name a table file with --table")


def resolve_read_table(table: str | None, game: str | None = None, board: dict | None = None,
                       directory: str | None = None) -> str:
    """The table file a read command works on: --table as given; else the table of GAME and
    board (the board options given, by parameter name) in the tables directory; else the
    directory's only table."""
    board = {k: v for k, v in (board or {}).items() if v is not None}
    if table is not None:
        if game is not None or board:
            raise BadParameters("name a table with --table, or a GAME and board options to find "
                                "its table, not both")
        return table
    if game is not None:
        return table_for_game(registry.make_game(game, **board), directory)
    if board:
        given = ", ".join("--" + name.replace("_", "-") for name in board)
        raise BadParameters(f"board options ({given}) need a GAME before them")
    directory = directory or tables_directory()
    check_directory(directory)
    tables = readable(scan(directory))
    if len(tables) == 1:
        return tables[0]["path"]
    if not tables:
        raise TableMissing(f"no table to read in {tables_directory_label(directory)}: "
                           f"{_no_tables(directory)}; name a GAME and board options, or a table "
                           f"file with --table")
    raise BadParameters(f"{directory} holds {len(tables)} tables ({_names(tables)}); name a "
                        f"GAME and board options, or a table file with --table")


class Tables:
    """The tables of a directory, opened once and asked about any position -- as a chess
    tablebase directory is (python-chess's `open_tablebase`): each position finds its table
    the way `sowsolve query` finds it, from its text.  `probe` and `query` raise (BadPosition,
    TableMissing, NotInTable, BeyondTable: each one sentence); `get` returns a default
    instead.  Reads only; the files stay open until `close` (or the end of a `with`)."""

    def __init__(self, directory: str | None = None, game: "Game | str | None" = None):
        self.directory = directory or tables_directory()
        check_directory(self.directory)
        entries = scan(self.directory)
        if game is not None:        # only this game's tables (a Game: of its board too)
            if isinstance(game, str) and game not in registry.GAMES:
                registry.make_game(game)        # an unknown name: one sentence
            elif not isinstance(game, (str, Game)):
                raise BadParameters(f"a game is a registered name or a Game, not {type(game).__name__}")

            def wanted(e: dict) -> bool:
                if e["status"] not in ("table", "unfinished"):
                    return True
                if isinstance(game, str):
                    return e["game"] == game
                return e["game"] == game.name and e["parameters"] == game.parameters()
            entries = [e for e in entries if wanted(e)]
        self._entries = entries
        self._open: dict[str, "Table"] = {}

    @property
    def paths(self) -> list[str]:
        """The readable tables of the directory."""
        return [entry["path"] for entry in readable(self._entries)]

    def table_for(self, position: str) -> "Table":
        """The open table that answers `position` (text)."""
        from .store import open_table
        path = table_for_position(position, self.directory, self._entries)
        if path not in self._open:
            self._open[path] = open_table(path)
        return self._open[path]

    def probe(self, position: str):
        """The position's Value (value, remoteness); raises where no table holds it."""
        return self.table_for(position).probe(position)

    def get(self, position, default=None):
        """The position's Value, or `default` where no table holds it (or the text is no
        position)."""
        from .format import BeyondTable, NotInTable
        if not isinstance(position, str):
            return default
        try:
            return self.probe(position)
        except (BadPosition, TableMissing, NotInTable, BeyondTable):
            return default      # a damaged table still raises, as Table.get does, and so
            #                     does a position two tables of the directory answer

    def query(self, position: str) -> dict:
        """What `sowsolve query --json` prints for the position."""
        return self.table_for(position).query(position)

    def __contains__(self, position) -> bool:
        return self.get(position) is not None

    def close(self) -> None:
        for table in self._open.values():
            table.close()
        self._open.clear()

    def __enter__(self) -> "Tables":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_tables(directory: str | None = None, game: Game | str | None = None) -> Tables:
    """The tables of `directory` (left out: $SOWSOLVE_TABLES, else sowsolve-tables); with
    `game` (a registered name, or a Game for its board too), only that game's -- where the
    text of a position fits two games' tables (variants written alike), say which."""
    return Tables(directory, game)
