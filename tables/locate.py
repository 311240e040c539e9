"""Finding tables: the tables directory ($SOWSOLVE_TABLES, else sowsolve-tables), what is in it,
and which table answers a position or a game -- the way a chess tablebase directory is opened
once and asked about any position.  Nothing here creates or changes a file."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..solver import games as registry
from ..solver.contract import Game
from ..solver.errors import BadParameters, BadPosition, quote
from .format import CorruptTable, TableMissing
from .layout import layout_of
from .solving import default_table_path, table_file_name  # noqa: F401  (re-exported)
from .directory import (DEFAULT_DIRECTORY, SIDECARS, game_and_board, public, readable,  # noqa: F401
                                scan, sharing_order, tables_directory, tables_of_board)

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


# --- what a position's text looks like, and the board it is on ----------------------------------
@dataclass(frozen=True)
class Placement:
    """The game and board a position is read on, and why, in words for an answer's header
    ("the standard board", ...): the board decides which positions can arise, and so which
    tables answer -- never what else the tables directory holds."""
    game: Game
    why: str


def guess_games(text: str) -> list[Game]:
    """The registered games whose rules accept the text as a position, each on the board
    `place_position` reads it on: what a position 'looks like'."""
    found = []
    for entry in registry.GAMES.values():
        if entry.looks_like(text):
            placed, _ = _place_in(entry, text, {})
            if placed is not None:
                found.append(placed.game)
    return found


def place_position(text: str, game: "str | Game | None" = None,
                   board: dict | None = None) -> Placement:
    """The board a position's text is read on.  `game`: a registered name (only its boards),
    or a Game (that board, as given); `board`: the board options given (by parameter name),
    the rest from the text's shape and the standard board.  Without board options a position
    that fits the standard board is on it -- a position of a standard game stays on the
    standard board however few stones are left; else on the smallest board that holds it.
    Text of two games alike (a game's variants): the first registered, unless `game` says.
    BadPosition (the rules' reason on the board the text would be on) where no board takes
    it; BadParameters for a game or board options that do not exist."""
    if not isinstance(text, str):
        raise BadPosition(f"a position is text, not {type(text).__name__}")
    board = {k: v for k, v in (board or {}).items() if v is not None}
    if isinstance(game, Game):
        if board:
            raise BadParameters("a Game names its board: give no board options with it")
        game.check_position(game.parse_position(text))
        return Placement(game, "the board given")
    if game is not None:
        if not isinstance(game, str) or game not in registry.GAMES:
            raise BadParameters(f"--game must be one of {', '.join(registry.GAMES)}, not "
                                f"{short(str(game), 20)}")
        entries = [registry.GAMES[game]]
        if not entries[0].looks_like(text):
            others = [e for e in registry.GAMES.values() if e.family != entries[0].family
                      and e.looks_like(text)]
            if others:
                raise BadPosition(f"the game is {entries[0].family}; that position looks like "
                                  f"{others[0].family}")
    else:
        entries = [e for e in registry.GAMES.values() if e.looks_like(text)]
        if board:
            takers = [e for e in entries if set(board) <= {p.name for p in e.parameters}]
            if entries and not takers:
                registry.GAMES[entries[0].name].build(board)     # says what it takes
            entries = takers
    first_reason = None
    for entry in entries:
        placed, reason = _place_in(entry, text, board)
        if placed is not None:
            alike = [e for e in entries if e is not entry and e.family == entry.family
                     and _place_in(e, text, board)[0] is not None]
            if alike and game is None:
                placed = Placement(placed.game, f"{placed.why}; --game {alike[0].name} reads it "
                                   f"as {alike[0].title}")
            return placed
        first_reason = first_reason or reason
    if first_reason is not None:
        raise first_reason
    if game is not None:
        entry = entries[0]
        raise BadPosition(f"{short(text)} is no position of {entry.family} "
                          f"(like {entry.position_example()!r})")
    raise no_position(text)


def _place_in(entry, text: str, given: dict) -> tuple[Placement | None, BadPosition | None]:
    """The board of `entry` that the text is read on (see place_position), or None and the
    rules' reason on the board it would first be on."""
    shapes = entry.boards_for_text(text)
    if not shapes:
        shapes = [{}]       # not this game's shape: its standard board says what is wrong
    standard = entry.build({}).parameters()
    # what the text's shape fixes: the parameters every board of that shape agrees on; a
    # text of the standard board's shape is on the standard board where it fits (a position
    # of a standard game, however few stones are left), any other on the smallest board that
    # holds it
    fixed = {k: v for k, v in shapes[0].items() if all(b.get(k) == v for b in shapes)}
    standard_shape = all(_same(entry, k, v, standard.get(k)) for k, v in fixed.items())
    candidates = [{**b, **given} for b in shapes]
    if standard_shape:
        candidates.insert(0, {**entry.defaults(), **given})
    seen, reason = [], None
    for parameters in candidates:
        if parameters in seen:
            continue
        seen.append(parameters)
        game = entry.build(parameters) if given else _built(entry, parameters)
        if game is None:
            continue
        try:
            game.check_position(game.parse_position(text))
        except BadPosition as exc:
            reason = reason or BadPosition(f"{game.describe()}: {exc}")
            continue
        return Placement(game, _why(entry, game, given, standard_shape, reason)), None
    return None, reason


def _same(entry, name: str, value, standard) -> bool:
    """Whether a parameter's value as the text's shape gives it is the standard board's (a
    grid size is written as text: compared as the game reads it)."""
    if value == standard:
        return True
    try:
        return entry.build({name: value}).parameters().get(name) == standard
    except BadParameters:
        return False


def _built(entry, parameters: dict):
    try:
        return entry.build(parameters)
    except BadParameters:
        return None


def _why(entry, game: Game, given: dict, standard_shape: bool, refused: BadPosition | None) -> str:
    """Why the position is on this board, in words."""
    if given:
        return ("the board options" if refused is None else
                f"the board options, the rest the smallest board that holds it ({refused})")
    if game.parameters() == entry.build({}).parameters():
        return "the standard board"
    if standard_shape and refused is not None:
        return f"the smallest board that holds it, not the standard one ({refused})"
    if len(entry.boards_for_text(game.format_position(game.initial()))) <= 1:
        return "the board its text shows"
    return "the smallest board of its shape whose start holds it"


def on_smallest_board(entry, text: str) -> tuple[Game | None, BadPosition | None]:
    """The game of `entry` on the board `place_position` reads the text on, or None and the
    rules' reason."""
    placed, reason = _place_in(entry, text, {})
    return (placed.game if placed is not None else None), reason


def no_position(text: str) -> BadPosition:
    """Why `text` is no position of any game: the rules' own reason on the board of the first
    game whose position text it looks like (too many stones, stacks apart, ...), else what the
    games' positions look like."""
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
@dataclass(frozen=True)
class Found:
    """The table that answers a position, and the board the position is on."""
    path: str
    placed: Placement

    def annotate(self, result: dict, table_game: Game) -> dict:
        """An answer of the table, saying the board the position is on and why ("board_reason"),
        and the table's board where it is another ("table_description")."""
        return annotate(result, self.placed, table_game)


def annotate(result: dict, placed: Placement, table_game: Game | None = None) -> dict:
    """`result` (a query's or an analysis's) naming the board `placed` chose and why, and the
    board of the table that answered where it is another one holding the same positions."""
    game = placed.game
    result.update(description=game.describe(), parameters=game.parameters(),
                  board_reason=placed.why)
    if table_game is not None and table_game.parameters() != game.parameters():
        result["table_description"] = table_game.describe()
    return result


def table_for_position(text: str, directory: str | None = None,
                       entries: list[dict] | None = None, game: "str | Game | None" = None,
                       board: dict | None = None) -> str:
    """The path of the table of the directory that answers the position (see find_table)."""
    return find_table(text, directory, entries, game, board).path


def find_table(text: str, directory: str | None = None, entries: list[dict] | None = None,
               game: "str | Game | None" = None, board: dict | None = None) -> Found:
    """The table of the directory that answers a position: the position is read on its board
    first (place_position: `game`, `board` as there), then answered by a table of that board,
    else by one of a board that holds its positions too (Game.shares_tables_with), finished
    first, the board's own first, then by file name -- the same answer whatever else the
    directory holds.  `entries`: the directory's scan, where the caller keeps one."""
    directory = directory or tables_directory()
    check_directory(directory)
    placed = place_position(text, game, board)
    wanted = placed.game
    entries = scan(directory) if entries is None else entries
    tables = readable(entries)
    fits, beyond = [], []
    for entry in tables:
        table_game = entry["_game"]
        if not wanted.shares_tables_with(table_game):
            continue
        try:
            position = table_game.parse_position(text)
            table_game.check_position(position)
        except BadPosition:
            continue                # a smaller board's table, of fewer stones than this
        if entry.get("_max_stones") is not None and table_game.tier_stones(
                layout_of(table_game).address(table_game, position)[0]) > entry["_max_stones"]:
            beyond.append(entry)    # that endgame table says so, if no table holds it
            continue
        fits.append(entry)
    if fits:
        return Found(sorted(fits, key=sharing_order(wanted))[0]["path"], placed)
    if beyond:
        return Found(max(beyond, key=lambda e: (e["_max_stones"], e["file"]))["path"], placed)
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
    also = _read_otherwise(text, placed, tables, game)
    least = _least_holding(text, wanted)
    beyond = _beyond_this_machine(least, directory)
    solve = (f"solve one with `{solve_command(least)}` or name a table file with --table"
             if beyond is None else f"no table of it can be solved here ({beyond})")
    raise TableMissing(f"no table in {tables_directory_label(directory)} answers {short(text)} "
                       f"on {wanted.describe()} ({placed.why}): looked for "
                       f"{_looked_for([least])}, and {others}{also}; {solve}")


def _beyond_this_machine(game: Game, directory: str) -> str | None:
    """Why a whole table of `game`'s board cannot be solved on this machine (solve's own
    estimate refuses it), in words; None where it can."""
    from ..solver.estimate import check_machine, estimate
    try:
        est = check_machine(estimate(game), directory if os.path.isdir(directory) else ".")
    except (BadParameters, ValueError, OSError) as exc:
        return str(exc)
    if est.fits:
        return None
    if "unknown" in est.too_large:
        return f"`{solve_command(game)}` would search an unknown number of positions"
    days = est.seconds / 86400
    return (f"`{solve_command(game)}` is estimated at {est.positions:,} positions, "
            + (f"{days:,.0f} days" if days >= 2 else f"{est.seconds / 3600:,.1f} hours")
            + f" and {est.peak_memory / 2**30:,.0f} GiB of memory")


def _least_holding(text: str, game: Game) -> Game:
    """The smallest board whose tables hold the position of `game`'s board (the fewest stones
    a pit that a table can have and still hold it): the table to solve."""
    entry = registry.entry_of(game)
    for board in entry.boards_for_text(text):
        candidate = _built(entry, board)
        if candidate is None or not game.shares_tables_with(candidate):
            continue
        try:
            candidate.check_position(candidate.parse_position(text))
        except BadPosition:
            continue
        return candidate
    return game


def _read_otherwise(text: str, placed: Placement, tables: list[dict], game) -> str:
    """Where a table of another game of the family (a variant written alike) holds the text,
    the --game that reads it so."""
    if game is not None:
        return ""
    for entry in tables:
        other = entry["_game"]
        if other.name == placed.game.name or family(other) != family(placed.game):
            continue
        try:
            other.check_position(other.parse_position(text))
        except BadPosition:
            continue
        return f" ({entry['file']} holds it read as {other.name}: add --game {other.name})"
    return ""


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
    beyond = _beyond_this_machine(game, directory)
    raise TableMissing(f"no table of {game.describe()} in {tables_directory_label(directory)} "
                       f"(looked for {table_file_name(game)}); "
                       + (f"solve it with `{solve_command(game)}` or name a table file with --table"
                          if beyond is None else f"no table of it can be solved here ({beyond})"))


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
        if isinstance(game, str) and game not in registry.GAMES:
            registry.make_game(game)        # an unknown name: one sentence
        elif game is not None and not isinstance(game, (str, Game)):
            raise BadParameters(f"a game is a registered name or a Game, not {type(game).__name__}")
        #: the game (a Game: and its board) positions are read as, where the text of a
        #: position fits two games (variants written alike); None: the first that takes it
        self.game = game
        self._entries = entries
        self._open: dict[str, "Table"] = {}

    @property
    def paths(self) -> list[str]:
        """The readable tables of the directory (of the game, where one was given)."""
        game = self.game
        return [entry["path"] for entry in readable(self._entries)
                if game is None or (entry["game"] == game if isinstance(game, str)
                                    else game.shares_tables_with(entry["_game"]))]

    def table_for(self, position: str) -> "Table":
        """The open table that answers `position` (text)."""
        from .store import open_table
        path = table_for_position(position, self.directory, self._entries, self.game)
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
