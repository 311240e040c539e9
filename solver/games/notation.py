"""Position and move text shared by the games: grids of counts and moves named by a pit."""
from __future__ import annotations

import math
import re
from typing import Sequence

from ..errors import BadMove, BadPosition, quote

#: longer text is no position of any board (an 8x8 grid of stacks with commas is ~300 characters)
MAX_POSITION_TEXT = 1000
MAX_MOVE_TEXT = 100


def format_grid(rows: Sequence[Sequence[int]]) -> str:
    """Rows joined by '/': one digit per count while every count is below 10, else commas."""
    if all(x < 10 for row in rows for x in row):
        return "/".join("".join(str(x) for x in row) for row in rows)
    return "/".join(",".join(str(x) for x in row) for row in rows)


def parse_grid(text: str, grid: str, nrows: int, ncols: int, row_names: Sequence[str],
               unit: str) -> list[list[int]]:
    """The rows of `grid` (a field of the position `text`) as counts; BadPosition naming the
    problem.  Digits per count, or commas between counts in every row."""
    rows = grid.split("/")
    if len(rows) != nrows:
        raise BadPosition(f"position {quote(text)} has {len(rows)} rows separated by '/', this "
                          f"board has {nrows}")
    commas = "," in grid
    result = []
    for name, row in zip(row_names, rows):
        cells = row.count(",") + 1 if commas else len(row)
        if cells != ncols:
            raise BadPosition(f"position {quote(text)}: {name} has {cells} cells, this board "
                              f"has {ncols}")
        cells = row.split(",") if commas else list(row)
        for cell in cells:
            if not re.fullmatch(r"[0-9]{1,3}", cell):
                raise BadPosition(f"position {quote(text)}: {quote(cell)} is not a {unit}")
        result.append([int(cell) for cell in cells])
    return result


#: an illegal move's sentence lists the legal moves where there are at most this many
LISTED_MOVES = 12


def illegal_move(game, position, text: str, example: str | None = None) -> BadMove:
    """The one sentence of every game for a move that is not legal: the move as typed, the
    position, and the legal moves where they are few (else how many there are and, where given,
    how a move is written)."""
    moves = [game.format_move(m) for m in game.legal_moves(position)]
    if not moves:
        legal = "the game is over: no move is legal"
    elif len(moves) <= LISTED_MOVES:
        legal = f"legal: {' '.join(moves)}"
    else:
        legal = f"{len(moves)} moves are legal" + (f", written like {example}" if example else "")
    return BadMove(f"{quote(text)} is not a legal move in {game.format_position(position)}; {legal}")


def parse_pit_move(game, position, name: str, text: str) -> int:
    """The legal move that lifts the pit called `name` (as the game spells pit names)."""
    if name not in game.pit_names:
        raise illegal_move(game, position, text)
    pit = game.pit_names.index(name)
    if pit not in game.legal_moves(position):
        raise illegal_move(game, position, text)
    return pit


def split_fields(text, count: int, shape: str) -> list[str]:
    """The space-separated fields of position text, `count` of them, or BadPosition."""
    if not isinstance(text, str):
        raise BadPosition(f"a position must be text, not {type(text).__name__}")
    if len(text) > MAX_POSITION_TEXT:
        raise BadPosition(f"position {quote(text)} is far longer than any position of this board")
    fields = text.split()
    if len(fields) != count:
        raise BadPosition(f"position {quote(text)} must be {shape}")
    return fields


def check_side(text: str, side: str, sides: Sequence[str]) -> str:
    if side not in sides:
        raise BadPosition(f"position {quote(text)}: side to move must be {' or '.join(sides)}, "
                          f"not {quote(side)}")
    return side


def count_rows(grid: str) -> list[list[int]] | None:
    """The rows of a grid field ('2222/2222', '10,2/3,4') as counts when it has two or more
    rows of the same length, else None: the shape of a position's text, judged before any
    board's own parse says what is wrong with it (how a position finds its game and table)."""
    if "/" not in grid or len(grid) > MAX_POSITION_TEXT:
        return None
    rows = []
    for row in grid.split("/"):
        cells = row.split(",") if "," in row else list(row)
        if not cells or not all(c.isascii() and c.isdigit() for c in cells):
            return None
        rows.append([int(c) for c in cells])
    if len({len(row) for row in rows}) != 1:
        return None
    return rows


def side_is(text: str, sides: Sequence[str]) -> bool:
    """Whether the second field of a position's text is one of `sides`: the mark by which a
    text tells its game (each game names its sides by its own letters)."""
    fields = str(text).split()
    return len(fields) > 1 and fields[1] in sides


def grid_of(text: str, fields: int, sides: Sequence[str]) -> list[list[int]] | None:
    """The counts of a position text with `fields` fields and a side among `sides`, or None."""
    parts = str(text).split()
    if len(parts) != fields or parts[1] not in sides:
        return None
    return count_rows(parts[0])


def two_row_boards(rows: list[list[int]] | None, stones: Sequence[int]) -> list[dict]:
    """Boards of two rows of pits that a grid could be a position of: its width, with every
    per-pit count in `stones` whose start holds at least the grid's stones; where none does,
    the largest, whose rules then say what is wrong with the grid (a pit's count, the total)."""
    if rows is None or len(rows) != 2:
        return []
    least = math.ceil(sum(map(sum, rows)) / (2 * len(rows[0])))
    fitting = [{"cols": len(rows[0]), "stones": k} for k in stones if k >= least]
    return fitting or [{"cols": len(rows[0]), "stones": max(stones)}]


def pit_table_phrase(family: str, cols: int, per_pit: int, pieces: str) -> str:
    """How a two-row pit game's table is looked for: 'a <family> table of 2x4 with at least 1
    seed per pit'."""
    piece = pieces[:-1] if per_pit == 1 else pieces
    return f"a {family} table of 2x{cols} with at least {per_pit} {piece} per pit"
