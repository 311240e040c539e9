"""Overflow (Michael Amundsen, 2022): the reference rules (RULES.md section 2, as Ludii plays it).

A position is the stack height of every cell -- cell index = rank * cols + file, a1 first -- and
the side to move, 'L' (Light, moves first) or 'D' (Dark).  A move is (cell, direction).  This
module is the readable reference; the kernel (cext/overflow.pyx) must agree with it move for move.
"""
from __future__ import annotations

import functools
import re
import string
from typing import NamedTuple

from ..contract import Game
from ..errors import BadMove, BadParameters, BadPosition, quote
from .notation import check_side, format_grid, parse_grid, split_fields

# (file step, rank step): E, NE, N, NW, W, SW, S, SE
DIRECTIONS = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]
MAX_CELLS = 64
MAX_SOLVE_CELLS = 31      # a position packs into 64 bits: one bit per cell and per disc, plus side


class Position(NamedTuple):
    heights: tuple[int, ...]
    side: str            # 'L' or 'D'


def parse_size(text: str) -> tuple[int, int]:
    """'RxC' (ranks x files) -> (rows, cols); BadParameters when it is not a board size."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", str(text))
    if not match:
        raise BadParameters(f"--size must look like 4x4 (ranks x files), not {quote(text)}")
    rows, cols = int(match.group(1)), int(match.group(2))
    if not (2 <= rows <= 8 and 2 <= cols <= 8):
        raise BadParameters(f"--size {text}: ranks and files must each be from 2 to 8")
    return rows, cols


class Overflow(Game):
    """Overflow on `rows` ranks of `cols` files, one disc per cell at the start."""
    name = "overflow"
    indexing = "keys"
    method = "search"
    can_draw = False          # every move lowers (discs, occupied cells); every end has a winner
    storage_note = ("every position reachable from the start, one per class of board symmetries; "
                    "others are answered by search")

    def __init__(self, rows: int = 4, cols: int = 4):
        for what, n in (("ranks", rows), ("files", cols)):
            if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= 8:
                raise BadParameters(f"Overflow needs 2 to 8 {what}, not {n!r}")
        self.rows, self.cols = rows, cols
        self.ncells = rows * cols
        self.house = ["D" if (self.file(i) + self.rank(i)) % 2 == 0 else "L" for i in range(self.ncells)]
        self._kernel = None

    # --- geometry ---------------------------------------------------------------------
    def file(self, cell: int) -> int:
        return cell % self.cols

    def rank(self, cell: int) -> int:
        return cell // self.cols

    def cell_name(self, cell: int) -> str:
        return f"{string.ascii_lowercase[self.file(cell)]}{self.rank(cell) + 1}"

    def step(self, cell: int, direction: int) -> int:
        """The neighbouring cell in a direction, -1 off the board."""
        df, dk = DIRECTIONS[direction]
        f, k = self.file(cell) + df, self.rank(cell) + dk
        return k * self.cols + f if 0 <= f < self.cols and 0 <= k < self.rows else -1

    def ray(self, cell: int, direction: int, length: int) -> list[int]:
        cells = []
        while len(cells) < length:
            cell = self.step(cell, direction)
            if cell < 0:
                break
            cells.append(cell)
        return cells

    # --- Python layer -------------------------------------------------------------------
    def parameters(self) -> dict:
        return {"size": f"{self.rows}x{self.cols}"}

    def describe(self) -> str:
        return f"Overflow, {self.rows}x{self.cols}"

    def initial(self) -> Position:
        return Position((1,) * self.ncells, "L")

    def outcome(self, position: Position) -> str | None:
        for house, winner in (("L", "D"), ("D", "L")):
            if all(h == 0 for h, owner in zip(position.heights, self.house) if owner == house):
                return "win" if winner == position.side else "loss"
        return None

    def sow(self, heights: tuple[int, ...], cell: int, direction: int):
        """(kind, reach, heights after) of sowing `cell` towards `direction`, or None.

        kind is 'overflow' or 'contained'; reach is R of a contained move (0 for overflow)."""
        n = heights[cell]
        line = self.ray(cell, direction, n)
        if n == 0 or not line:
            return None
        after = list(heights)
        after[cell] = 0
        if len(line) < n and any(heights[c] == 0 for c in line):
            for c in line:
                after[c] += 1
            return "overflow", 0, tuple(after)
        if heights[line[0]] == 0:
            return None
        reach = 0
        while reach < len(line) and heights[line[reach]] > 0:
            reach += 1
        for c in line[:reach - 1]:
            after[c] += 1
        after[line[reach - 1]] += n - (reach - 1)
        return "contained", reach, tuple(after)

    def one_group(self, heights: tuple[int, ...]) -> bool:
        occupied = {c for c, h in enumerate(heights) if h}
        if not occupied:
            return False
        seen, todo = set(), [min(occupied)]
        while todo:
            c = todo.pop()
            if c in seen:
                continue
            seen.add(c)
            todo.extend(n for d in range(8) if (n := self.step(c, d)) in occupied)
        return seen == occupied

    def moves_with_children(self, position: Position) -> list[tuple[tuple[int, int], tuple]]:
        """[(move, heights after)] of the legal moves (cached: play() looks moves up here)."""
        return self._moves_cached(Position(*position))

    @functools.lru_cache(maxsize=1 << 14)
    def _moves_cached(self, position: Position) -> list[tuple[tuple[int, int], tuple]]:
        if self.outcome(position) is not None:
            return []
        result = []
        for cell, h in enumerate(position.heights):
            if h == 0:
                continue
            options = [(d, self.sow(position.heights, cell, d)) for d in range(8)]
            options = [(d, o) for d, o in options if o is not None]
            reach = max((o[1] for _, o in options if o[0] == "contained"), default=0)
            for d, (kind, r, after) in options:
                if (kind == "overflow" or r == reach) and self.one_group(after):
                    result.append(((cell, d), after))
        return result

    def legal_moves(self, position: Position) -> list[tuple[int, int]]:
        return [move for move, _ in self.moves_with_children(position)]

    def play(self, position: Position, move: tuple[int, int]) -> Position:
        for legal, after in self.moves_with_children(position):
            if legal == tuple(move):
                return Position(after, self._other(position.side))
        raise BadMove(f"{self.format_move(move)} is not a legal move in {self.format_position(position)}")

    def format_move(self, move: tuple[int, int]) -> str:
        cell, direction = move
        return f"{self.cell_name(cell)}-{self.cell_name(self.step(cell, direction))}"

    def parse_move(self, position: Position, text: str) -> tuple[int, int]:
        for move in self.legal_moves(position):
            if self.format_move(move) == text.strip().lower():
                return move
        raise BadMove(f"{quote(text)} is not a legal move in {self.format_position(position)} "
                      f"(moves are written like b2-c3)")

    def format_position(self, position: Position) -> str:
        ranks = [position.heights[k * self.cols:(k + 1) * self.cols] for k in reversed(range(self.rows))]
        text = format_grid(ranks)
        return f"{text} {position.side}"

    def parse_position(self, text: str) -> Position:
        board, side = split_fields(text, 2, "the ranks (top first, '/' between) and the side to "
                                            "move, L or D, separated by a space")
        check_side(text, side, ("L", "D"))
        names = [f"rank {k + 1}" for k in reversed(range(self.rows))]
        ranks = parse_grid(text, board, self.rows, self.cols, names, "stack height")
        heights = [h for rank in reversed(ranks) for h in rank]
        total = sum(heights)
        if total > self.ncells:
            raise BadPosition(f"position {quote(text)} holds {total} discs, more than the {self.ncells} "
                              f"of the start")
        if total == 0:
            raise BadPosition(f"position {quote(text)} has no discs")
        if not self.one_group(tuple(heights)):
            raise BadPosition(f"position {quote(text)}: the stacks do not form one group")
        return Position(tuple(heights), side)

    # --- search layer -----------------------------------------------------------------
    def kernel(self):
        if self._kernel is None:
            from ..kernels import overflow_kernel
            self._kernel = overflow_kernel(self.rows, self.cols)
        return self._kernel

    def _other(self, side: str) -> str:
        return "D" if side == "L" else "L"

    def key(self, position: Position) -> tuple[int, int]:
        """(tier, canonical packed position); the tier is the number of discs."""
        kernel = self.kernel()
        if not kernel.keyable:
            raise BadParameters(f"positions of {self.rows}x{self.cols} Overflow do not pack into "
                                f"64 bits; sowsolve solves boards of at most {MAX_SOLVE_CELLS} cells")
        return sum(position.heights), kernel.key(position.heights, 0 if position.side == "L" else 1)

    def position_of_key(self, key: int) -> Position:
        heights, side = self.kernel().unpack(int(key))
        return Position(heights, "LD"[side])

    def perft(self, position: Position, depth: int) -> list[int]:
        return self.kernel().perft(position.heights, depth)

    def kernel_moves(self, position: Position) -> list:
        return [(move, Position(child, self._other(position.side)))
                for move, child in self.kernel().moves(position.heights)]
