"""Diffusion (Mark Steere, 2006) and Diffusion v2: the reference rules (RULES.md section 1).

A position is a board of 2n pits -- the top row left to right, then the bottom row left to
right -- and the side to move, 'A' (bottom player) or 'B' (top player).  This module is the
readable reference: the kernel (cext/diffusion.pyx) must agree with it move for move.
"""
from __future__ import annotations

import string
from typing import NamedTuple

import numpy as np

from ...contract import (BoardColumns, Columnar, Compiled, DenseIndex, Drawable, Evaluation, Game, Playable, Provable, Rates, Unmoves)
from ...drawing import Picture, Region, Spot
from ....cext import diffusion as _diffusion
from ...errors import BadParameters, BadPosition, quote
from ...params import Parameter
from ..notation import (check_side, grid_of, parse_pit_move, pit_table_phrase, side_is,
                        split_fields, two_row_boards)

MAX_STONES_PER_PIT = 5
MAX_COLS = 8          # the kernel's limit (a half of the board is coded in base 6 in 32 bits)

# Slot order of a move (RULES.md): bottom row E, NE, N, NW, W; top row W, SW, S, SE, E.
# Each slot is (row step, column step); rows: 0 top, 1 bottom.
BOTTOM_SLOTS = [(0, +1), (-1, +1), (-1, 0), (-1, -1), (0, -1)]
TOP_SLOTS = [(0, -1), (+1, -1), (+1, 0), (+1, +1), (0, +1)]


class Position(NamedTuple):
    board: tuple[int, ...]
    side: str            # 'A' or 'B'


class Diffusion(Game, DenseIndex, Unmoves, Compiled, Drawable, Playable, Provable, Columnar):
    """Diffusion on 2 rows of `cols` pits with `stones` per pit at the start."""

    sides = ("A", "B")
    can_draw = False          # the game is acyclic and every final position has a winner
    # The standard board, 2x6 with 4 stones (bench/results/standard-v1.json, standard-v2.json,
    # cluster-standard.json, plain-c.json): 7.0 to 8.7 million positions/s over the whole solve
    # on 2 threads (the store's compression overlaps the next tier), table 0.343 bytes/position
    # (v2: 0.349; plain-c.json, plain-c-v2.json); a position of a swept tier takes 8 bytes (its record and the sweep's scratch)
    rates = Rates(positions_per_second=7.1e6, threads=2, wall_over_kernel=1.0,
                  table_bytes_per_position=0.35, memory_bytes_per_position=8)
    storage_note = ("every position with A to move; B to move is read from the 180-degree turn "
                    "(counts are per side to move)")

    # --- what the registry and the command line know of the game (solver/games/__init__.py)
    family = "Diffusion"               # position text does not tell v1 from v2
    position_example = "4444/4444 A"
    command_notes = {
        "solve": "every position, tier by tier (stones on the board); a second solve of a "
                 "finished table does nothing, an unfinished one resumes after its last "
                 "finished tier.",
        "export": "both sides to move.",
        "show": "two rows of pits, both stores, the two blocks outlined.",
    }
    command_examples = {
        "solve": ("diffusion --cols 4 --stones 2", "diffusion --cols 6 --stones 1 --workers 2"),
        "query": ("'2222/2222 A'", "'2222/2222 A' --line --plies 6"),
        "info": ("diffusion --cols 4 --stones 2",),
        "perft": ("diffusion --cols 6 --stones 4 --depth 4",),
        "check": ("diffusion --cols 4 --stones 2", "diffusion --cols 4 --stones 2 --stored"),
        "analyse": ("'2222/2222 A' --nodes 9000 --json",),
        "engine": ("diffusion --cols 4 --stones 2",),
        "show": ("'2222/2222 A'", "'2222/2222 A' --svg board.svg"),
        "play": ("--position '2222/2222 B' --as A", "--position '1111/1111 A' --time 2"),
    }
    parameters_spec = (
        Parameter("cols", 6, range(2, MAX_COLS + 1), "pits per row, even in v1"),
        Parameter("stones", 4, range(1, MAX_STONES_PER_PIT + 1), "stones per pit at the start"),
    )

    @classmethod
    def looks_like(cls, text: str) -> bool:
        return side_is(text, "AB")

    @classmethod
    def boards_for_text(cls, text: str) -> list[dict]:
        """Two rows of counts and A or B."""
        return two_row_boards(grid_of(text, 2, "AB"), cls.parameters_spec[1].values)

    def table_phrase(self) -> str:
        return pit_table_phrase(self.family, self.cols, self.stones, self.pieces)

    def __init__(self, cols: int = 6, stones: int = 4, variant: int = 1):
        if variant not in (1, 2):
            raise BadParameters(f"Diffusion has variants 1 and 2, not {variant}")
        if isinstance(cols, bool) or not isinstance(cols, int) or not 2 <= cols <= MAX_COLS:
            raise BadParameters(f"--cols must be a whole number from 2 to {MAX_COLS}, not {cols!r}")
        if variant == 1 and cols % 2:
            raise BadParameters(f"Diffusion v1 needs an even number of columns (each player owns "
                                f"half of them), not {cols}")
        if isinstance(stones, bool) or not isinstance(stones, int) or not 1 <= stones <= 5:
            raise BadParameters(f"--stones must be a whole number from 1 to 5, not {stones!r}")
        self.cols = cols
        self.stones = stones
        self.variant = variant
        self.evaluation = self.evaluation_for(variant=variant)
        self.name = "diffusion" if variant == 1 else "diffusion-v2"
        self.npits = 2 * cols
        self.max_stones = self.npits * stones
        self.pit_names = [self._pit_name(p) for p in range(self.npits)]
        self.owner = [self._owner(p) for p in range(self.npits)]
        self.slots = [self._slots(p) for p in range(self.npits)]
        self._kernel = None

    # --- board geometry ------------------------------------------------------------
    def _row_col(self, pit: int) -> tuple[int, int]:
        return divmod(pit, self.cols)

    def _pit_name(self, pit: int) -> str:
        """Counterclockwise from the top-right pit: top row right to left, then bottom row."""
        row, col = self._row_col(pit)
        order = (self.cols - 1 - col) if row == 0 else (self.cols + col)
        return string.ascii_uppercase[order]

    def _owner(self, pit: int) -> str:
        row, col = self._row_col(pit)
        if self.variant == 1:
            return "A" if col < self.cols // 2 else "B"
        return "A" if row == 1 else "B"

    def _slots(self, pit: int) -> list[int]:
        """Target pit of each of the 5 slots around `pit`, -1 where the slot is a store."""
        row, col = self._row_col(pit)
        targets = []
        for drow, dcol in (BOTTOM_SLOTS if row == 1 else TOP_SLOTS):
            r, c = row + drow, col + dcol
            targets.append(r * self.cols + c if 0 <= c < self.cols else -1)
        return targets

    def perft(self, position: Position, depth: int) -> list[int]:
        return self.kernel().perft(position.board, depth)

    def turn(self, board: tuple[int, ...]) -> tuple[int, ...]:
        """The 180-degree turn: reverses the pit sequence and swaps the blocks."""
        return tuple(reversed(board))

    # --- Python layer ---------------------------------------------------------------
    def parameters(self) -> dict:
        return {"cols": self.cols, "stones": self.stones}

    def shares_tables_with(self, other) -> bool:
        """The stones a pit at the start say only where games begin: a position is stored at
        the same index, with the same value, in every table of these pits (a table of fewer
        stones a pit holds the positions of up to its start's stones)."""
        return other.name == self.name and getattr(other, "cols", None) == self.cols

    def describe(self) -> str:
        return (f"Diffusion v{self.variant}, 2x{self.cols}, {self.stones} "
                f"{'stone' if self.stones == 1 else 'stones'} per pit")

    def initial(self) -> Position:
        return Position((self.stones,) * self.npits, "A")

    def initial_positions(self) -> list[Position]:
        """The rule sheet names no first mover: A by convention, B as well."""
        start = self.initial()
        return [start, start._replace(side="B")]

    def outcome(self, position: Position) -> str | None:
        empty = {who: all(position.board[p] == 0 for p in range(self.npits) if self.owner[p] == who)
                 for who in "AB"}
        for who in "AB":
            if empty[who]:
                return "win" if who == position.side else "loss"
        return None

    def legal_moves(self, position: Position) -> list[int]:
        if self.outcome(position) is not None:
            return []
        return [p for p in range(self.npits) if position.board[p] > 0]

    def sow(self, board: tuple[int, ...], pit: int) -> tuple[tuple[int, ...], int]:
        """Board after scooping `pit`, and the number of stones that went to the stores."""
        cells = list(board)
        stones, cells[pit] = cells[pit], 0
        lost = 0
        for target in self.slots[pit][:stones]:
            if target < 0 or cells[target] == MAX_STONES_PER_PIT:
                lost += 1
            else:
                cells[target] += 1
        return tuple(cells), lost

    def play(self, position: Position, move: int) -> Position:
        board, _ = self.sow(position.board, move)
        return Position(board, self._other(position.side))

    def format_move(self, move: int) -> str:
        return self.pit_names[move]

    def parse_move(self, position: Position, text: str) -> int:
        return parse_pit_move(self, position, text.strip().upper(), text)

    def format_position(self, position: Position) -> str:
        b = "".join(str(x) for x in position.board)
        return f"{b[:self.cols]}/{b[self.cols:]} {position.side}"

    def parse_position(self, text: str) -> Position:
        rows, side = split_fields(text, 2, f"'<{self.cols} digits>/<{self.cols} digits> A|B': board "
                                           f"and side to move separated by a space")
        check_side(text, side, ("A", "B"))
        parts = rows.split("/")
        if len(parts) != 2:
            raise BadPosition(f"position {quote(text)} must have two rows separated by '/'")
        board = []
        for row_name, row in zip(("top", "bottom"), parts):
            if len(row) != self.cols:
                raise BadPosition(f"position {quote(text)}: the {row_name} row has {len(row)} pits, "
                                  f"this board has {self.cols}")
            for ch in row:
                if ch not in "012345":
                    raise BadPosition(f"position {quote(text)}: {ch!r} is not a stone count "
                                      f"(a pit holds 0 to 5 stones)")
                board.append(int(ch))
        total = sum(board)
        if total == 0:
            raise BadPosition(f"position {quote(text)} has no stones: an empty board is no position "
                              f"of the game")
        if total > self.max_stones:
            raise BadPosition(f"position {quote(text)} holds {total} stones, more than the "
                              f"{self.max_stones} of this board's start")
        return Position(tuple(board), side)

    # --- drawing --------------------------------------------------------------------
    def picture(self, position: Position) -> Picture:
        """Two rows of pits between the stores; each player's block outlined (v1: the left and
        right halves, v2: the bottom and top rows)."""
        n = self.cols
        spots = [Spot(self.pit_names[p], *self._row_col(p), position.board[p], "pit", self.owner[p])
                 for p in range(self.npits)]
        spots += [Spot("left store", 0.5, -1, None, "store", height=2),
                  Spot("right store", 0.5, n, None, "store", height=2)]
        if self.variant == 1:
            regions = (Region("block A", 0, 1, 0, n // 2 - 1, "A"), Region("block B", 0, 1, n // 2, n - 1, "B"))
            owners = {"A": "block A: left half (player A)", "B": "block B: right half (player B)"}
        else:
            regions = (Region("block A", 1, 1, 0, n - 1, "A"), Region("block B", 0, 0, 0, n - 1, "B"))
            owners = {"A": "block A: bottom row (player A)", "B": "block B: top row (player B)"}
        over = self.outcome(position)
        caption = (f"{position.side} to move" if over is None else
                   f"game over: {position.side if over == 'win' else self._other(position.side)} wins")
        return Picture(self.describe(), caption, tuple(spots), owners, regions,
                       {self.pit_names[p]: (self.pit_names[p], None) for p in self.legal_moves(position)},
                       top_labels=tuple(self.pit_names[:n]), bottom_labels=tuple(self.pit_names[n:]))

    # --- tier layer -----------------------------------------------------------------
    def kernel(self):
        if self._kernel is None:
            owner = [0 if o == "A" else 1 for o in self.owner]
            self._kernel = _diffusion.DiffusionKernel(self.cols, self.variant,
                                                                 self.max_stones, self.slots, owner)
        return self._kernel

    def tiers(self) -> range:
        """Stones on the board, 1..2nk (the empty board is no position: both blocks empty)."""
        return range(1, self.max_stones + 1)

    def tier_size(self, tier: int) -> int:
        return int(self.kernel().tier_sizes[tier])

    def tier_dependencies(self, tier: int) -> range:
        """A move sends at most 5 stones to the stores."""
        return range(max(1, tier - MAX_STONES_PER_PIT), tier)

    def locate(self, position: Position) -> tuple[int, int]:
        board = position.board if position.side == "A" else self.turn(position.board)
        return self.kernel().rank(board)

    def stored_positions(self, tier: int, start: int, stop: int) -> list[Position]:
        boards = self.kernel().unrank_range(tier, start, stop)
        return [Position(tuple(int(x) for x in row), "A") for row in boards]

    def _other(self, side: str) -> str:
        return "B" if side == "A" else "A"

    # --- columns (export at table scale) ------------------------------------------------
    def board_columns(self) -> BoardColumns:
        return BoardColumns(tuple(f"pit_{name}" for name in self.pit_names), (self.cols, self.cols),
                            (("side", ("A", "B")),))

    def stored_columns(self, tier, start, stop, keys=None, every_orientation=False):
        """Each stored position (A to move) and its turn (B to move): `images`."""
        boards = np.asarray(self.kernel().unrank_range(tier, start, stop), dtype=np.uint8)
        n = len(boards)
        counts = np.empty((2 * n, self.npits), dtype=np.uint8)
        counts[0::2] = boards
        counts[1::2] = boards[:, ::-1]               # the 180-degree turn
        fields = np.zeros((2 * n, 1), dtype=np.uint8)
        fields[1::2, 0] = 1
        return counts, fields, np.repeat(np.arange(n, dtype=np.int64), 2)

    # --- play layer (the analysis engine) ----------------------------------------------
    # From the side to move, who wins when its own block empties: stones in the other block
    # less its own, and its own empty pits less the other's.
    # The proof search first (Provable) for a fifth of the budget: on boards held out of the
    # tuning (2x4 with 3 and 5 stones a pit) the long wins alpha-beta misses are proved in a
    # fraction of 0.1 s (399 and 394 of 400 kept, against 369 and 370), and the tuned 2x6 board
    # keeps as many (391 of 400, 390 with none); half the budget cost 2x6 (docs/analysis.md).
    evaluation = Evaluation(features=("block_stones", "block_empty_pits", "block_pips"),
                            weights=(100, 30, 0), unit="stones", proof_share=0.2,
                            tuned="by hand; proof share 0.2 by bench/tune_evaluation.py on 2x6 "
                                  "and 2x4 (tune-diffusion-proof-share-0.2.json)")
    #: Diffusion v2 (blocks are rows): the race each side runs to empty its row decides, and
    #: the pips say it where stones and empty pits say next to nothing.  Fitted by logistic regression
    #: of the tuning boards' wins and losses (2x4 with 3 and 5 stones, 2x6 with 1 and 3), in
    #: hundredths of the log-odds (the fit's constant, the side to move's edge, left out: it
    #: moves no choice): fewer pips of one's own count, and, pips alike, more stones (near the
    #: exit) and fewer empty pits of one's own (docs/analysis.md).
    evaluation_v2 = Evaluation(features=("block_stones", "block_empty_pits", "block_pips"),
                               weights=(-75, -14, 29), unit="log-odds", proof_share=0.2,
                               tuned="logistic regression by bench/tune_evaluation.py --fit on "
                                     "2x4 and 2x6 (tune-diffusion-v2-fit.json)")

    @classmethod
    def evaluation_for(cls, **fixed):
        return cls.evaluation_v2 if fixed.get("variant") == 2 else cls.evaluation

    def play_kernel(self):
        return self.kernel().play_capsule()

    def play_state(self, position: Position) -> bytes:
        return self.kernel().play_state(position.board, 0 if position.side == "A" else 1)

    def play_move(self, position: Position, code: int) -> int:
        return int(code)

    def kernel_moves(self, position: Position) -> list[tuple[int, Position]]:
        return [(pit, Position(child, self._other(position.side)))
                for pit, child, _ in self.kernel().moves(position.board)]

    def kernel_unmoves(self, position: Position) -> list[tuple[int, Position]]:
        return [(pit, Position(parent, self._other(position.side)))
                for pit, parent in self.kernel().unmoves_in_tier(position.board)]

    # --- proof layer (the analysis engine's proof search) ------------------------------------
    def proof_key(self, position: Position) -> int:
        """3 bits a pit, the side above them; the lesser packing of the position and its turn
        with the other side to move (cext/diffusion.pyx)."""
        return self.kernel().key(position.board, 0 if position.side == "A" else 1)

    def proof_capsule(self):
        return self.kernel().capsule()

    def images(self, position: Position) -> list[Position]:
        """A position and its turn with the other side to move share one record."""
        return [position, Position(self.turn(position.board), self._other(position.side))]
