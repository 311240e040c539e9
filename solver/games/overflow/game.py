"""Overflow (Michael Amundsen, 2022): the reference rules (RULES.md section 2, as Ludii plays it).

A position is the stack height of every cell -- cell index = rank * cols + file, a1 first -- and
the side to move, 'L' (Light, moves first) or 'D' (Dark).  A move is (cell, direction).  This
module is the readable reference; the kernel (cext/overflow.pyx) must agree with it move for move.
"""
from __future__ import annotations

import functools
import math
import string
from typing import NamedTuple

import numpy as np

from ...contract import (BoardColumns, Columnar, Compiled, DenseIndex, Drawable, Evaluation, Game, KeyedIndex, Playable, Provable, Rates)
from ...drawing import Picture, Spot
from ....cext import overflow as _overflow
from ...errors import BadMove, BadParameters, BadPosition, quote
from ...params import GRID, Parameter
from ..notation import (check_side, format_grid, grid_of, illegal_move, parse_grid, side_is,
                        split_fields)

# (file step, rank step): E, NE, N, NW, W, SW, S, SE
DIRECTIONS = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]
MAX_CELLS = 64
MAX_SOLVE_CELLS = 31      # a position packs into 64 bits: one bit per cell and per disc, plus side
SIDE_BIT = np.uint64(1 << 63)   # of a packed position (cext/overflow.pyx): Dark to move
_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


class Position(NamedTuple):
    heights: tuple[int, ...]
    side: str            # 'L' or 'D'


class Overflow(Game, KeyedIndex, Compiled, Drawable, Playable, Provable, Columnar):
    """Overflow on `rows` ranks of `cols` files, one disc per cell at the start."""
    pieces = "discs"
    sides = ("L", "D")
    name = "overflow"
    # `/usr/bin/time sowsolve solve overflow --size 4x4` (README): 61,571,886 positions in 267 s
    # (0.23 million positions/s), peak 3.45 GB (56 bytes per position: the transposition table
    # of 10-byte entries at most half full, doubled while it grows, and the sorted results),
    # table 36 MB (0.59 bytes/position; 3x4: 0.64)
    rates = Rates(positions_per_second=0.23e6, threads=1, table_bytes_per_position=0.65,
                  memory_bytes_per_position=56)
    #: positions reachable from the start (README), by board
    REACHABLE = {"3x3": 6_742, "3x4": 674_116, "4x3": 674_116, "4x4": 61_571_886}
    #: boards beyond the largest solved one reach far more positions than --max-positions admits:
    #: new canonical positions per ply on 5x5 grow by 54, 36, 24, 17 over plies 1-5 (README,
    #: `python bench/bench_overflow.py --growth-size 5x5 --growth-plies 5`), 10^10..10^11 in all
    LARGEST_SOLVED_CELLS = 16
    can_draw = False          # every move lowers (discs, occupied cells); every end has a winner
    storage_note = ("every position reachable from the start, one per class of board symmetries; "
                    "others are answered by search")

    # --- what the registry and the command line know of the game (solver/games/__init__.py)
    family = "Overflow"
    position_example = "111/111/111 L"
    command_notes = {
        "solve": "every position reachable from the start, by a search with a transposition "
                 "table (a killed search starts over); with --max-discs D, an endgame table of "
                 "every position of at most D discs, whatever the start, tier by tier (discs, "
                 "occupied cells).",
        "solve --max-stones": "every position of at most this many discs, whatever the start, "
                              "tier by tier.",
        "query": "a table holds the positions reachable from the start; any other position is "
                 "answered by a search from it (JSON \"source\": \"search\"), up to "
                 "--max-positions, or with --max-nodes by the proof search (\"source\": "
                 "\"proof\": win or loss, no remoteness; \"not proved within the budget\", exit "
                 "1, when it runs out).",
        "query --max-nodes": "a position the table lacks is proved by the proof search within "
                             "this many expansions (value and the moves proved, no "
                             "remoteness), not searched whole.",
        "export": "one position per symmetry class.",
        "export --every-orientation": "a row for every symmetric image of each stored "
                                      "position, as a player would type it, not one per class.",
        "show": "the checkered houses and stack heights, a move an arrow toward its direction.",
        "serve": "a position a table lacks is searched, one search at a time (a request that "
                 "needs another meanwhile gets HTTP 503), while the explorer goes on answering.",
    }
    command_examples = {
        "solve": ("overflow --size 3x4", "overflow --size 4x5 --max-discs 8"),
        "query": ("'1111/1111/1111 L' --json",),
        "perft": ("overflow --size 4x4 --depth 3 --json",),
        "prove": ("overflow --size 4x4", "overflow --size 3x4 --proof 3x4.proof",
                  "overflow --size 4x5 --tables DIR", "overflow --size 3x4 --workers 2"),
        "analyse": ("'1111/1111/1111/1111 L' --time 2",),
        "engine": ("overflow --size 6x6 --hash 1G",),
        "show": ("'111/111/111 L' --game overflow",),
    }
    parameters_spec = (Parameter("size", "6x6", range(2, 9), "ranks x files", kind=GRID),)

    @classmethod
    def from_parameters(cls, size: tuple[int, int]) -> "Overflow":
        rows, cols = size
        return cls(rows=rows, cols=cols)

    @classmethod
    def looks_like(cls, text: str) -> bool:
        return side_is(text, "LD")

    @classmethod
    def boards_for_text(cls, text: str) -> list[dict]:
        """Rows of counts and L or D: the board of that many ranks and files."""
        rows = grid_of(text, 2, "LD")
        return [] if rows is None else [{"size": f"{len(rows)}x{len(rows[0])}"}]

    def table_phrase(self) -> str:
        return f"an {self.family} table of {self.rows}x{self.cols}"

    def __init__(self, rows: int = 4, cols: int = 4):
        for what, n in (("ranks", rows), ("files", cols)):
            if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= 8:
                raise BadParameters(f"Overflow needs 2 to 8 {what}, not {n!r}")
        self.rows, self.cols = rows, cols
        self.ncells = rows * cols
        self.house = ["D" if (self.file(i) + self.rank(i)) % 2 == 0 else "L" for i in range(self.ncells)]
        # each cell's neighbour in each direction (-1 off the board) and its neighbours on the
        # board, worked out once: the reference rules (and the tests that walk whole boards
        # with them) ask for them millions of times
        self._steps = [[self._step(c, d) for d in range(8)] for c in range(self.ncells)]
        self._adjacent = [[n for n in steps if n >= 0] for steps in self._steps]
        self._adjacent_bits = [sum(1 << n for n in around) for around in self._adjacent]
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
        return self._steps[cell][direction]

    def _step(self, cell: int, direction: int) -> int:
        df, dk = DIRECTIONS[direction]
        f, k = self.file(cell) + df, self.rank(cell) + dk
        return k * self.cols + f if 0 <= f < self.cols and 0 <= k < self.rows else -1

    def ray(self, cell: int, direction: int, length: int) -> list[int]:
        cells = []
        steps = self._steps
        while len(cells) < length:
            cell = steps[cell][direction]
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
        """Whether the occupied cells are one group (8-connected): a flood fill from the lowest
        occupied cell over occupied neighbours reaches them all.  Sets of cells are bit masks
        (cell c is bit c), as whole-board walks call this millions of times."""
        occupied = 0
        for c, h in enumerate(heights):
            if h:
                occupied |= 1 << c
        if not occupied:
            return False
        group = frontier = occupied & -occupied
        while frontier:
            reached = 0
            while frontier:
                low = frontier & -frontier
                reached |= self._adjacent_bits[low.bit_length() - 1]
                frontier ^= low
            frontier = reached & occupied & ~group
            group |= frontier
        return group == occupied

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

    def symmetries(self) -> list[tuple[list[int], bool]]:
        """The board's symmetries as (cell -> image cell, whether it swaps the houses): the
        four reflections of a rectangle, the eight of a square.  A symmetry that swaps the
        houses swaps the players too (a house is a player's), so the image of a position
        keeps its value for the side to move with the side named the other way."""
        rows, cols = self.rows, self.cols
        maps = [lambda f, k: (f, k), lambda f, k: (cols - 1 - f, k),
                lambda f, k: (f, rows - 1 - k), lambda f, k: (cols - 1 - f, rows - 1 - k)]
        if rows == cols:
            maps += [lambda f, k: (k, f), lambda f, k: (rows - 1 - k, f),
                     lambda f, k: (k, rows - 1 - f), lambda f, k: (rows - 1 - k, rows - 1 - f)]
        result = []
        for image in maps:
            cells = [0] * self.ncells
            for cell in range(self.ncells):
                f, k = image(self.file(cell), self.rank(cell))
                cells[cell] = k * cols + f
            result.append((cells, self.house[cells[0]] != self.house[0]))
        return result

    def orientations(self, position: Position) -> list[Position]:
        """The distinct images of a position under the board's symmetries (itself first): the
        positions its stored record (one per class, the class's least packing) stands for."""
        found = []
        for cells, swaps in self.symmetries():
            heights = [0] * self.ncells
            for cell, target in enumerate(cells):
                heights[target] = position.heights[cell]
            image = Position(tuple(heights), self._other(position.side) if swaps else position.side)
            if image not in found:
                found.append(image)
        return found

    # --- columns (export at table scale) ------------------------------------------------
    def _text_cells(self) -> list[int]:
        """The cells in the order the text writes them: ranks top first, files left to right."""
        return [k * self.cols + f for k in reversed(range(self.rows)) for f in range(self.cols)]

    def board_columns(self) -> BoardColumns:
        return BoardColumns(tuple(self.cell_name(c) for c in self._text_cells()),
                            (self.cols,) * self.rows, (("side", ("L", "D")),))

    def stored_columns(self, tier, start, stop, keys=None, every_orientation=False):
        """The stored positions (of `keys`, or of a dense tier), with `every_orientation` each
        one's distinct images under the board's symmetries (`orientations`)."""
        if keys is not None:
            heights, sides = self.board_kernel().unpack_many(np.ascontiguousarray(keys, dtype=np.uint64))
        else:
            heights, sides = self.kernel().unrank_range(int(tier), start, stop)
        heights, sides = np.asarray(heights, dtype=np.uint8), np.asarray(sides, dtype=np.uint8)
        n = len(heights)
        order = self._text_cells()
        if not every_orientation or type(self).orientations is not Overflow.orientations:
            return (np.ascontiguousarray(heights[:, order]), sides.reshape(n, 1).copy(),
                    np.arange(n, dtype=np.int64))
        images, image_sides = [], []
        for cells, swaps in self.symmetries():
            inverse = np.empty(self.ncells, dtype=np.int64)
            inverse[np.asarray(cells)] = np.arange(self.ncells)
            images.append(heights[:, inverse])              # heights[target] = heights[cell]
            image_sides.append(1 - sides if swaps else sides)
        images, image_sides = np.stack(images, axis=1), np.stack(image_sides, axis=1)
        keep = np.ones(image_sides.shape, dtype=bool)       # the first of equal images
        for j in range(1, images.shape[1]):
            for i in range(j):
                same = (images[:, j] == images[:, i]).all(axis=1) & (image_sides[:, j] == image_sides[:, i])
                keep[:, j] &= ~same
        owners = np.repeat(np.arange(n, dtype=np.int64), images.shape[1])[keep.ravel()]
        counts = images.reshape(-1, self.ncells)[keep.ravel()][:, order]
        return (np.ascontiguousarray(counts), image_sides.reshape(-1, 1)[keep.ravel()].copy(), owners)

    def picture(self, position: Position) -> Picture:
        """The checkered houses (a1 dark) with each stack's height; a move is an arrow from
        its stack toward the neighbouring cell that names its direction."""
        spots = tuple(Spot(self.cell_name(c), self.rows - 1 - self.rank(c), self.file(c),
                           position.heights[c], "cell", self.house[c]) for c in range(self.ncells))
        names = {"L": "Light", "D": "Dark"}
        other = "D" if position.side == "L" else "L"
        over = self.outcome(position)
        caption = (f"{names[position.side]} to move" if over is None else
                   f"game over: {names[position.side if over == 'win' else other]} wins")
        moves = {}
        for move in self.legal_moves(position):
            cell, direction = move
            moves[self.format_move(move)] = (self.cell_name(cell), self.cell_name(self.step(cell, direction)))
        return Picture(self.describe(), caption, spots,
                       {"L": "light cells: Light's house", "D": "dark cells: Dark's house"}, (), moves,
                       bottom_labels=tuple(string.ascii_lowercase[:self.cols]),
                       row_labels=tuple(str(k) for k in range(self.rows, 0, -1)))

    def format_move(self, move: tuple[int, int]) -> str:
        cell, direction = move
        return f"{self.cell_name(cell)}-{self.cell_name(self.step(cell, direction))}"

    def parse_move(self, position: Position, text: str) -> tuple[int, int]:
        for move in self.legal_moves(position):
            if self.format_move(move) == text.strip().lower():
                return move
        raise illegal_move(self, position, text, "b2-c3")

    def format_position(self, position: Position) -> str:
        ranks = [position.heights[k * self.cols:(k + 1) * self.cols] for k in reversed(range(self.rows))]
        text = format_grid(ranks)
        return f"{text} {position.side}"

    def parse_position(self, text: str) -> Position:
        board, side = split_fields(text, 2, "the ranks (top first, '/' between) and the side to "
                                            "move, L or D, separated by a space")
        check_side(text, side, ("L", "D"))
        names = [f"rank {k + 1}" for k in reversed(range(self.rows))]     # "rank 3 has ..."
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

    # --- play layer (the analysis engine) ----------------------------------------------
    # From the side to move, whose house must keep a disc: its house's occupied cells less
    # the other's, a house down to its last cell.  The discs in each house were a feature too
    # (weight 20): on 6x6 the engine scored 42.5% against the plain UCT player with it, 62.5%
    # without (bench/bench_match.py, 40 games each, 0.1 s a move), and on the 4x4 table the
    # moves kept the value as often either way (280 of 300 positions, 0.1 s).
    # The engine searches Overflow by Monte Carlo trees instead (UCB1 constant 0.7): at 1 s a
    # move on 6x6, alpha-beta over these features scored 9 of 20 against the plain UCT player,
    # the Monte Carlo search 18 of 20; on the 4x4 table they keep the value of 99.7% and 99.8% of 2,000
    # positions in 0.1 s (docs/analysis.md, bench/results/).
    evaluation = Evaluation(features=("house_cells", "last_cell"),
                            weights=(100, 300), unit="house cells", monte_carlo=0.7)

    def play_kernel(self):
        return self.board_kernel().play_capsule()

    def play_state(self, position: Position) -> bytes:
        return self.board_kernel().play_state(position.heights, 0 if position.side == "L" else 1)

    def play_move(self, position: Position, code: int) -> tuple[int, int]:
        return tuple(self.board_kernel().play_move(code))

    # --- search layer -----------------------------------------------------------------
    def board_kernel(self):
        """The board's kernel: moves, packed positions, perft, the play layer."""
        if self._kernel is None:
            self._kernel = _overflow.OverflowKernel(self.rows, self.cols)
        return self._kernel

    def kernel(self):
        return self.board_kernel()

    def _other(self, side: str) -> str:
        return "D" if side == "L" else "L"

    def key(self, position: Position) -> tuple[int, int]:
        """(tier, canonical packed position); the tier is the number of discs."""
        kernel = self.board_kernel()
        if not kernel.keyable:
            raise BadParameters(f"positions of {self.rows}x{self.cols} Overflow do not pack into "
                                f"64 bits; sowsolve solves boards of at most {MAX_SOLVE_CELLS} cells")
        return sum(position.heights), kernel.key(position.heights, 0 if position.side == "L" else 1)

    def proof_key(self, position: Position) -> int:
        return self.key(position)[1]

    def proof_capsule(self):
        """The board's kernel (not an endgame table's view of it), where positions pack."""
        kernel = self.board_kernel()
        return kernel.capsule() if kernel.keyable else None

    def position_of_key(self, key: int) -> Position:
        heights, side = self.board_kernel().unpack(int(key))
        return Position(heights, "LD"[side])

    # A packed position is unary: each occupied cell's height as that many one-bits followed
    # by a zero, cell after cell, below the side bit; so a key's discs are its one-bits.
    def tiers_of_keys(self, keys: np.ndarray) -> np.ndarray:
        """Discs (one-bits of the unary packing, side bit excluded) of each packed position."""
        octets = (keys & ~SIDE_BIT).astype("<u8").view(np.uint8).reshape(-1, 8)
        return _POPCOUNT[octets].sum(axis=1, dtype=np.int64)

    def keys_fit(self, tier: int, keys: np.ndarray) -> bool:
        """Packings of `tier` discs: that many one-bits among the low tier + cells bits."""
        body = keys & ~SIDE_BIT
        return bool(np.all(self.tiers_of_keys(keys) == tier)) and not bool(
            np.any(body >> np.uint64(tier + self.ncells)))

    def keyed_tier_bound(self, tier: int) -> int:
        """Every spread of `tier` discs over the cells, either side to move."""
        return 2 * math.comb(tier + self.ncells - 1, self.ncells - 1)

    def keyed_tier_possible(self, tier: int) -> bool:
        return 1 <= tier <= self.ncells

    def positions_bound(self) -> int:
        """Every spread of 1..cells discs, either side to move."""
        return sum(self.keyed_tier_bound(t) for t in range(1, self.ncells + 1))

    def reachable_positions(self) -> int | None:
        return self.REACHABLE.get(f"{self.rows}x{self.cols}")

    def beyond_measured(self) -> str | None:
        if self.ncells <= self.LARGEST_SOLVED_CELLS:
            return None
        return (f"boards beyond {self.LARGEST_SOLVED_CELLS} cells reach billions "
                f"(5x5: about 10^10 to 10^11)")

    def perft(self, position: Position, depth: int) -> list[int]:
        return self.board_kernel().perft(position.heights, depth)

    def kernel_moves(self, position: Position) -> list:
        return [(move, Position(child, self._other(position.side)))
                for move, child in self.board_kernel().moves(position.heights)]


class OverflowEndgame(Overflow, DenseIndex):
    """Overflow endgame tables (`solve overflow --max-discs D`): every position of the board
    with at most D discs that keeps one group, whatever the start, solved tier by tier by the
    retrograde solver.  A move lowers (discs, occupied cells) lexicographically -- an overflow
    move sends discs off the board; a contained move keeps them, empties its own cell and fills
    no empty one -- so tier (d, k), numbered d * (cells + 1) + k, reads lower tiers only.
    Positions with one house empty (the end) are held too, so that every move of a held
    position reaches a held one.  No board symmetry is folded: a record per position."""
    #: boards whose sets of occupied cells are listed whole (2^25 sets on 5x5)
    MAX_CELLS = 25
    #: no levels inside a tier (every child lies in a lower tier): the tier solver never sorts
    #: a tier by level, so it keeps no scratch for that
    tier_levels = False
    storage_note = ("every position of at most the table's discs that keeps one group, whatever "
                    "the start (one record per position, no symmetry folded)")
    # `python bench/bench_overflow_endgame.py --size 4x5 --max-discs 10 --max-discs 12`
    # (bench/results/overflow-endgame-4x5.json, two threads, the machine shared with other
    # work): 114,747,288 positions of at most 12 discs in 320 s (0.36 M/s), peak 303 MB, table
    # 46 MB (0.40 bytes/position)
    rates = Rates(positions_per_second=0.18e6, threads=1, table_bytes_per_position=0.41,
                  memory_bytes_per_position=2.0)

    def __init__(self, rows: int = 4, cols: int = 4):
        super().__init__(rows, cols)
        if self.ncells > self.MAX_CELLS:
            raise BadParameters(f"Overflow endgame tables are made for boards of at most "
                                f"{self.MAX_CELLS} cells, not {rows}x{cols}")
        self._tiers_kernel = None

    def table_phrase(self) -> str:
        return f"an {self.family} endgame table of {self.rows}x{self.cols}"

    def kernel(self):
        """The endgame tiers' kernel (ranking, `expand` for the tier solver)."""
        if self._tiers_kernel is None:
            self._tiers_kernel = _overflow.OverflowTiers(self.board_kernel(), self.ncells)
        return self._tiers_kernel

    def _tier_pair(self, tier: int) -> tuple[int, int]:
        return divmod(int(tier), self.ncells + 1)

    def tiers(self) -> list[int]:
        """(discs, occupied cells) in lexicographic order: d * (cells + 1) + k."""
        n = self.ncells
        return [d * (n + 1) + k for d in range(1, n + 1) for k in range(1, min(d, n) + 1)]

    def tier_size(self, tier: int) -> int:
        return int(self.kernel().tier_size(int(tier)))

    def tier_dependencies(self, tier: int) -> list[int]:
        """Every lower tier: an overflow move may send all but one disc of a stack off."""
        return [t for t in self.tiers() if t < tier]

    def tier_stones(self, tier: int) -> int:
        return self._tier_pair(tier)[0]

    def tier_name(self, tier: int) -> str:
        discs, cells = self._tier_pair(tier)
        return (f"{discs} {'disc' if discs == 1 else 'discs'} on {cells} "
                f"{'cell' if cells == 1 else 'cells'}")

    def locate(self, position: Position) -> tuple[int, int]:
        where = self.kernel().rank(position.heights, 0 if position.side == "L" else 1)
        if where is None:
            raise BadPosition(f"{self.format_position(position)}: the stacks do not form one group")
        return where

    def stored_positions(self, tier: int, start: int, stop: int) -> list[Position]:
        heights, sides = self.kernel().unrank_range(int(tier), start, stop)
        return [Position(tuple(int(x) for x in row), "LD"[side]) for row, side in zip(heights, sides)]

    def orientations(self, position: Position) -> list[Position]:
        return [position]
