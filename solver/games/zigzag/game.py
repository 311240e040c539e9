"""Zig Zag (Clark D. and Amanda J. L. Rodeffer, 2007): the reference rules (RULES.md section 3).

A position is the board -- the top row (player P's pits A, B, ...) left to right, then the bottom
row (player p's pits a, b, ...) left to right -- the side to move ('P' or 'p'), the ko pit (a pit
index or None) and who captured last ('P', 'p' or None).  This module is the readable reference;
the kernel (cext/zigzag.pyx) must agree with it move for move.
"""
from __future__ import annotations

import re
import string
from typing import NamedTuple

import numpy as np

from ...contract import (BoardColumns, Columnar, Compiled, DenseIndex, Drawable, Evaluation, Game, Playable, Rates, ScoreTiers)
from ...drawing import Picture, Region, Spot
from ....cext import zigzag as _zigzag
from ...kernels import run_stoppable
from ...values import MARGIN
from ...errors import BadMove, BadParameters, BadPosition, quote
from ...params import Parameter
from ..notation import (check_side, format_grid, grid_of, parse_grid, parse_pit_move,
                        pit_table_phrase, side_is, split_fields, two_row_boards)

MAX_COLS = 8
MAX_STONES = 9


class Position(NamedTuple):
    board: tuple[int, ...]
    side: str                 # 'P' (top row) or 'p' (bottom row)
    ko: int | None = None     # pit the side to move may not sow straight back (unless capturing)
    last: str | None = None   # who made the last capture


class Turn(NamedTuple):
    """What one move does: the board after it, seeds captured, the ko pit it leaves."""
    board: tuple[int, ...]
    captured: int
    ko: int | None


class ZigZag(Game, ScoreTiers, DenseIndex, Compiled, Drawable, Playable, Columnar):
    """Zig Zag on 2 rows of `cols` pits (cols even) with `stones` seeds per pit at the start."""
    pieces = "seeds"
    sides = ("p", "P")
    name = "zigzag"
    # python bench/bench_zigzag_scale.py (bench/results/zigzag-scale.json): the standard
    # board's endgame table of at most 20 seeds, 1.35 x 10^9 positions stored in 756 s on two
    # threads, 1.8 M positions/s (smaller tiers run faster: 2x4 K=3 2.1 M/s), peak 4.4 GB: a
    # tier takes 5 bytes per position (record, distance, counter and flags) and the lists of
    # positions queued by distance, besides the 2-byte records of the tiers below it; table
    # 0.79 byte per position
    rates = Rates(positions_per_second=1.8e6, threads=2, table_bytes_per_position=0.8,
                  memory_bytes_per_position=5)
    value_kind = MARGIN
    storage_note = ("every board with fewer seeds than the start where P captured last, both sides "
                    "to move, every ko (a position where p captured last is one of these turned "
                    "half a turn), and the start's count with nobody having captured; values are "
                    "margins for the side to move")

    # --- what the registry and the command line know of the game (solver/games/__init__.py)
    family = "Zig Zag"
    position_example = "5555/5555 p - -"
    command_notes = {
        "solve": "every position, tier by tier (seeds on the board, last capturer), values are "
                 "margins.",
        "query": "the value is the margin the side to move secures from here on (its future "
                 "seeds minus the opponent's, the seeds left at the end going to the last "
                 "capturer); remoteness is null where play never ends with best play.",
        "query --stores": "seeds already in the stores of P and p, as P,p; adds the final "
                          "result.",
        "export": "the value is the margin for the side to move, and the remoteness is empty "
                  "(JSON null) where play never ends with best play.",
        "show": "pits, stores, the ko pit ringed.",
    }
    command_examples = {
        "solve": ("zigzag --cols 4 --stones 2", "zigzag --dry-run", "zigzag --max-stones 8"),
        "query": ("'21/22 p - P' --stores 1,0",),
        "info": ("zigzag --cols 4 --stones 2 --json",),
        "perft": ("zigzag --depth 4",),
        "analyse": ("'555555/555555 p - -' --time 10", "'2311/3010 P - P' --multipv 3"),
        "engine": ("zigzag --threads 1",),
    }
    parameters_spec = (
        Parameter("cols", 6, range(2, MAX_COLS + 1, 2), "pits per row"),
        Parameter("stones", 5, range(1, MAX_STONES + 1), "seeds per pit at the start"),
    )

    @classmethod
    def looks_like(cls, text: str) -> bool:
        return side_is(text, "Pp")

    @classmethod
    def boards_for_text(cls, text: str) -> list[dict]:
        """Two rows of counts, P or p, ko and last capturer."""
        return two_row_boards(grid_of(text, 4, "Pp"), cls.parameters_spec[1].values)

    def table_phrase(self) -> str:
        return pit_table_phrase(self.family, self.cols, self.stones, self.pieces)

    def __init__(self, cols: int = 6, stones: int = 5):
        if isinstance(cols, bool) or not isinstance(cols, int) or not 2 <= cols <= MAX_COLS or cols % 2:
            raise BadParameters(f"Zig Zag needs an even number of columns from 2 to {MAX_COLS}, "
                                f"not {cols!r}")
        if isinstance(stones, bool) or not isinstance(stones, int) or not 1 <= stones <= MAX_STONES:
            raise BadParameters(f"--stones must be a whole number from 1 to {MAX_STONES}, not {stones!r}")
        self.cols, self.stones = cols, stones
        self.npits = 2 * cols
        self.total = self.npits * stones
        n = cols
        forward = [(n + c) if c % 2 == 0 else c for c in range(n)]
        forward += [(n + c) if c % 2 == 1 else c for c in reversed(range(n))]
        self.circuit = forward                      # a B c D ... then back ... A (one orientation)
        self.place = {pit: i for i, pit in enumerate(forward)}
        # worked out once: the reference rules ask for them at every seed sown
        self._steps = {o: [self.circuit[(self.place[p] + o) % self.npits] for p in range(self.npits)]
                       for o in (1, -1)}
        self._first = [self._first_orientation(p) for p in range(self.npits)]
        self.pit_names = ([string.ascii_uppercase[c] for c in range(n)]
                          + [string.ascii_lowercase[c] for c in range(n)])
        self._kernel = None

    # --- geometry ---------------------------------------------------------------------
    def col(self, pit: int) -> int:
        return pit % self.cols

    def owner(self, pit: int) -> str:
        return "P" if pit < self.cols else "p"

    def across(self, pit: int) -> int:
        """The pit in the same column on the other row."""
        return pit + self.cols if pit < self.cols else pit - self.cols

    def step(self, pit: int, orientation: int) -> int:
        return self._steps[orientation][pit]

    def first_orientation(self, pit: int) -> int:
        """+1 or -1: the orientation whose first step goes towards the vertical centre line."""
        return self._first[pit]

    def _first_orientation(self, pit: int) -> int:
        c = self.col(pit)
        towards = c + 1 if c < self.cols // 2 else c - 1
        return 1 if self.col(self.step(pit, 1)) == towards else -1

    def left_half(self, pit: int) -> bool:
        return self.col(pit) < self.cols // 2

    # --- the turn ---------------------------------------------------------------------
    def sow(self, board: tuple[int, ...], side: str, pit: int) -> Turn | None:
        """The whole turn of lifting `pit`; None when its laps would never end."""
        cells = list(board)
        orientation = self.first_orientation(pit)
        seeds, cells[pit], here = cells[pit], 0, pit
        laps = 0
        seen = set()
        while True:
            state = (tuple(cells), here, seeds)
            if state in seen:
                return None
            seen.add(state)
            laps += 1
            steps = self._steps[orientation]
            for _ in range(seeds):
                here = steps[here]
                cells[here] += 1
            if self.owner(here) == side:
                if cells[here] == 1:                         # an empty pit of your own: stop
                    return Turn(tuple(cells), 0, None)
                seeds, cells[here] = cells[here], 0         # lift and sow on
                continue
            if cells[here] > 1:                              # an occupied pit of the opponent
                return Turn(tuple(cells), 0, None)
            own = self.across(here)                          # an empty pit of the opponent
            captured, cells[own] = cells[own], 0
            ko = None
            if (laps == 1 and seeds == 1 and captured == 0
                    and self.left_half(pit) != self.left_half(here)):
                ko = here                                    # a lone seed across the centre
            return Turn(tuple(cells), captured, ko)

    def turns(self, position: Position) -> list[tuple[int, Turn]]:
        """(pit, turn) of every legal move."""
        result = []
        for pit in range(self.npits):
            if self.owner(pit) != position.side or position.board[pit] == 0:
                continue
            turn = self.sow(position.board, position.side, pit)
            if turn is None:
                continue                                     # laps that never end
            if pit == position.ko and turn.captured == 0:
                continue                                     # ko: not straight back
            result.append((pit, turn))
        return result

    # --- symmetry -----------------------------------------------------------------------
    # Turning the board half a turn puts each row onto the other row reversed: pit i goes to
    # pit 2n-1-i (the board text read backwards), so the players' names swap.  The turn maps
    # the circuit onto itself run the other way round (a B c D e F f E d C b A becomes
    # F e D c B a A b C d E f), each column onto a column and each half of the board onto the
    # other half; "towards the vertical centre line", "the pit in the same column" and "across
    # the centre line" are kept, so a turn sowed one way round becomes the same turn sowed the
    # other way, which is the way the first-lap rule picks for the turned pit.  Moves, boards,
    # captures, ko and leftover correspond one to one: a position and its turned one have the
    # same value (margin and remoteness).  The left-right mirror with the players kept is a
    # symmetry too (the same argument); it is not used here.
    def turned_move(self, move: int) -> int:
        """The pit diametrically opposite `move`."""
        return self.npits - 1 - move

    def images(self, position: Position) -> list[Position]:
        """The position and its half-turn with the players swapped: they share one record
        (the table stores the one where P captured last)."""
        return [position, self.turned(position)] if position.last is not None else [position]

    def turned(self, position: Position) -> Position:
        """`position` with the board turned 180 degrees and the players' names swapped."""
        swap = {"P": "p", "p": "P", None: None}
        ko = None if position.ko is None else self.turned_move(position.ko)
        return Position(tuple(reversed(position.board)), swap[position.side], ko,
                        swap[position.last])

    # --- Python layer -------------------------------------------------------------------
    def parameters(self) -> dict:
        return {"cols": self.cols, "stones": self.stones}

    def shares_tables_with(self, other) -> bool:
        """The seeds a pit at the start say only where games begin: a position is stored at
        the same index, with the same value, in every table of these pits (a table of fewer
        seeds a pit holds the positions of up to its start's seeds)."""
        return other.name == self.name and getattr(other, "cols", None) == self.cols

    def describe(self) -> str:
        return f"Zig Zag, 2x{self.cols}, {self.stones} {'seed' if self.stones == 1 else 'seeds'} per pit"

    def initial(self) -> Position:
        return Position((self.stones,) * self.npits, "p", None, None)

    def other(self, side: str) -> str:
        return "P" if side == "p" else "p"

    def legal_moves(self, position: Position) -> list[int]:
        return [pit for pit, _ in self.turns(position)]

    def play(self, position: Position, move: int) -> Position:
        for pit, turn in self.turns(position):
            if pit == move:
                last = position.side if turn.captured else position.last
                return Position(turn.board, self.other(position.side), turn.ko, last)
        raise BadMove(f"{self.format_move(move)} is not a legal move in {self.format_position(position)}")

    def move_gain(self, position: Position, move: int) -> int:
        return self.captured_by(position, move)

    def captured_by(self, position: Position, move: int) -> int:
        for pit, turn in self.turns(position):
            if pit == move:
                return turn.captured
        raise BadMove(f"{self.format_move(move)} is not a legal move in {self.format_position(position)}")

    def outcome(self, position: Position) -> str | None:
        """Only the plain end (no legal move) is seen here: whether a capture can still happen
        is decided by the solver over the whole tier."""
        if self.turns(position):
            return None
        margin = self.leftover_margin(position)
        return "win" if margin > 0 else "loss" if margin < 0 else "tie"

    def side_index(self, position: Position) -> int:
        """0 for P (the score solver counts P's margin), 1 for p."""
        return 0 if position.side == "P" else 1

    def leftover_margin(self, position: Position) -> int:
        """What the side to move gets when the game ends here: the seeds on the board go to the
        last capturer."""
        seeds = sum(position.board)
        if position.last is None:
            return 0
        return seeds if position.last == position.side else -seeds

    def final_result(self, position: Position, stores: str, margin: int) -> dict:
        """The end of the game from the stores already filled ("P,p", as typed after --stores)
        and the margin the side to move secures from `position` on: side, final margin, result,
        the stores given and (where the end is known) the final stores, by side."""
        match = re.fullmatch(r"\s*(\d{1,4})\s*,\s*(\d{1,4})\s*", stores)
        if match is None:
            raise BadParameters(f"--stores must be two counts, P's and p's, like 12,8; not "
                                f"{quote(stores)}")
        store_p, store_q = int(match.group(1)), int(match.group(2))
        seeds = sum(position.board)
        if store_p + store_q + seeds != self.total:
            raise BadParameters(f"--stores {store_p},{store_q}: the stores and the board hold every "
                                f"seed of the game, {self.total}; {store_p} + {store_q} in the "
                                f"stores and {seeds} on the board make {store_p + store_q + seeds}")
        if position.last is None and store_p + store_q:
            raise BadParameters(f"--stores {store_p},{store_q}: the position says nobody has "
                                f"captured yet (last capturer -), so both stores are empty")
        if position.last is not None and (store_p if position.last == "P" else store_q) == 0:
            raise BadParameters(f"--stores {store_p},{store_q}: the position says {position.last} "
                                f"captured last, so {position.last}'s store cannot be empty")
        own, other = (store_p, store_q) if position.side == "P" else (store_q, store_p)
        difference = own - other + margin
        result = {"side": position.side, "final_margin": difference,
                  "result": "win" if difference > 0 else "loss" if difference < 0 else "tie",
                  "given": {"P": store_p, "p": store_q}, "unit": ("seed", "seeds")}
        if (seeds + margin) % 2 == 0 and (position.last is not None or margin != 0):
            # every seed on the board ends in a store: the last capturer takes what is left
            gain_own, gain_other = (seeds + margin) // 2, (seeds - margin) // 2
            finals = (own + gain_own, other + gain_other)
            sides = ("P", "p") if position.side == "P" else ("p", "P")
            result["final_stores"] = {side: dict(zip(sides, finals))[side] for side in ("P", "p")}
        return result

    def picture(self, position: Position) -> Picture:
        """P's row on top, p's below, between the stores; the ko pit ringed.  The stores'
        seeds are not part of a position (a table holds what the side to move gains)."""
        n = self.cols
        spots = [Spot(self.pit_names[p], p // n, p % n, position.board[p], "pit", self.owner(p),
                      "ko" if p == position.ko else None) for p in range(self.npits)]
        spots += [Spot("left store", 0.5, -1, None, "store", height=2),
                  Spot("right store", 0.5, n, None, "store", height=2)]
        regions = (Region("P", 0, 0, 0, n - 1, "P"), Region("p", 1, 1, 0, n - 1, "p"))
        notes = [f"last capture: {position.last or 'none yet'}"]
        if position.ko is not None:
            notes.insert(0, f"ko: {self.pit_names[position.ko]} may not sow its seed straight back "
                            f"unless it captures")
        moves = self.legal_moves(position)
        caption = f"{position.side} to move" if moves else "game over"
        return Picture(self.describe(), caption, tuple(spots),
                       {"P": "top row: player P", "p": "bottom row: player p"}, regions,
                       {self.pit_names[m]: (self.pit_names[m], None) for m in moves},
                       top_labels=tuple(self.pit_names[:n]), bottom_labels=tuple(self.pit_names[n:]),
                       notes=tuple(notes))

    def format_move(self, move: int) -> str:
        return self.pit_names[move]

    def parse_move(self, position: Position, text: str) -> int:
        return parse_pit_move(self, position, text.strip(), text)

    def format_position(self, position: Position) -> str:
        text = format_grid([position.board[:self.cols], position.board[self.cols:]])
        ko = "-" if position.ko is None else self.pit_names[position.ko]
        return f"{text} {position.side} {ko} {position.last or '-'}"

    def parse_position(self, text: str) -> Position:
        rows, side, ko, last = split_fields(
            text, 4, "'<top row>/<bottom row> <side P|p> <ko pit or -> <last capturer P|p|->'")
        check_side(text, side, ("P", "p"))
        grid = parse_grid(text, rows, 2, self.cols, ("the top row", "the bottom row"), "seed count")
        board = grid[0] + grid[1]
        if sum(board) > self.total:
            raise BadPosition(f"position {quote(text)} holds {sum(board)} seeds, more than the "
                              f"{self.total} of the start")
        if last not in ("P", "p", "-"):
            raise BadPosition(f"position {quote(text)}: the last capturer must be P, p or -, not {quote(last)}")
        ko_pit = None
        if ko != "-":
            centre = (self.cols // 2 - 1, self.cols // 2)
            pit = self.pit_names.index(ko) if ko in self.pit_names else -1
            if pit < 0 or self.owner(pit) != side or self.col(pit) not in centre:
                raise BadPosition(f"position {quote(text)}: a ko pit is one of the two centre pits of "
                                  f"the side to move, or -; not {quote(ko)}")
            ko_pit = pit
        return Position(tuple(board), side, ko_pit, None if last == "-" else last)

    # --- kernel -----------------------------------------------------------------------
    def kernel(self):
        if self._kernel is None:
            self._kernel = _zigzag.ZigZagKernel(self.cols, self.circuit,
                                                [self.first_orientation(p) for p in range(self.npits)])
        return self._kernel

    def kernel_moves(self, position: Position) -> list[tuple[int, Position]]:
        side = 0 if position.side == "P" else 1
        result = []
        for pit, board, captured, ko in self.kernel().turns(position.board, side, position.ko):
            last = position.side if captured else position.last
            result.append((pit, Position(board, self.other(position.side), ko, last)))
        return result

    def perft(self, position: Position, depth: int) -> list[int]:
        return self.kernel().perft(position.board, 0 if position.side == "P" else 1,
                                   position.ko, depth)

    # --- tier layer -------------------------------------------------------------------
    # Tier id = seeds * 3 + last capturer (0 nobody, 1 P, 2 p).  Moves that capture nothing
    # stay in their tier (cycles are possible); a capture leads to a tier of fewer seeds.
    # Tables hold the tiers where P captured last: a position where p did is the same position
    # turned half a turn with the players swapped (see `turned`), so it is looked up there.
    # Nobody has captured only while every seed of the start is on the board: the tier of
    # nobody exists for that count alone.
    CAPTURERS = (None, "P", "p")

    def tiers(self) -> list[int]:
        return [seeds * 3 + 1 for seeds in range(self.total)] + [self.total * 3]

    def earlier_tiers(self, max_stones: int | None) -> list[list[int]]:
        """Before positions where p captured last were stored turned, tables held every tier."""
        top = self.total if max_stones is None else min(max_stones, self.total)
        return [[seeds * 3 + c for seeds in range(top + 1) for c in range(3)]]

    def tier_size(self, tier: int) -> int:
        return _zigzag.tier_size(self.npits, tier // 3)

    def tier_dependencies(self, tier: int) -> list[int]:
        return [s * 3 + 1 for s in range(tier // 3)]

    def tier_name(self, tier: int) -> str:
        seeds, c = divmod(tier, 3)
        who = {0: "no capture yet", 1: "last capture P (and p's, turned)"}.get(c, "last capture p")
        return f"{seeds} {'seed' if seeds == 1 else 'seeds'}, {who}"

    def tier_stones(self, tier: int) -> int:
        return tier // 3

    def score_tier(self, tier: int, lower: dict[int, object]):
        seeds, c = divmod(tier, 3)
        return _zigzag.ScoreTierOf(self.kernel(), seeds, c,
                                   {t // 3: (data.records, data.long) for t, data in lower.items()})

    def check_position(self, position: Position) -> None:
        """Seeds leave the board only by captures: nobody has captured exactly while every
        seed of the start is on the board."""
        seeds = sum(position.board)
        if position.last is None and seeds != self.total:
            raise BadPosition(f"position {quote(self.format_position(position))} cannot arise: "
                              f"nobody has captured yet, so the board holds all {self.total} seeds "
                              f"of the start, not {seeds}")
        if position.last is not None and seeds >= self.total:
            raise BadPosition(f"position {quote(self.format_position(position))} cannot arise: "
                              f"after a capture fewer than the {self.total} seeds of the start are "
                              f"on the board")

    def locate(self, position: Position) -> tuple[int, int]:
        self.check_position(position)
        if position.last == "p":
            position = self.turned(position)
        seeds, index = _zigzag.rank(self.kernel(), position.board,
                                    0 if position.side == "P" else 1, position.ko)
        return seeds * 3 + self.CAPTURERS.index(position.last), index

    # --- play layer (the analysis engine) ----------------------------------------------
    # From the side to move, who captures from its own row: seeds on its row less the other
    # row, the seeds left counted for the last capturer, its best capture now, the best the
    # other side would have on this board, and the quiet leftover (below).  Scores are margins
    # in hundredths of a seed.  The first four weights from bench/tune_evaluation.py --fit against the 2x4 table with 3 seeds a pit
    # (bench/results/tune-zigzag-fit.json): the least-squares fit of the table's margins to
    # the features; the engine keeps the value of 578 of 600 held-out positions with these,
    # 563 with the coordinate search's (0, 0, 40, 50) of bench/results/tune-zigzag.json.
    # The fifth, the quiet leftover: the leftover counted again where neither side can
    # capture at once and the board holds no more seeds than pits, weighed 100 (a seed left
    # there counts a seed more, as the rules give the seeds left at a dead end to the last
    # capturer), set by that rule, not fitted; without it the search valued such endgames
    # by seeds on rows and lost exact margins on 2x6 with 1 seed a pit
    # (bench/results/tune-zigzag-quiet-leftover.json, docs/analysis.md).
    evaluation = Evaluation(features=("row_seeds", "leftover", "capture_now", "capture_next", "quiet_leftover"),
                            weights=(17, 1, 49, -26, 100), unit="seeds",
                            tuned="least squares on the 2x4 table of 3 seeds a pit; the "
                                  "quiet leftover 100 by the rule for a dead end")

    def play_kernel(self):
        return self.kernel().play_capsule()

    def play_state(self, position: Position) -> bytes:
        return self.kernel().play_state(position.board, 0 if position.side == "P" else 1, position.ko,
                                        self.CAPTURERS.index(position.last))

    def play_move(self, position: Position, code: int) -> int:
        return int(code)

    # --- columns (export at table scale) ------------------------------------------------
    def board_columns(self) -> BoardColumns:
        n = self.cols
        return BoardColumns(tuple(f"top_{name}" for name in self.pit_names[:n])
                            + tuple(f"bottom_{name}" for name in self.pit_names[n:]), (n, n),
                            (("side", ("P", "p")), ("ko", ("-",) + tuple(self.pit_names)),
                             ("last_capturer", ("-", "P", "p"))))

    def stored_columns(self, tier, start, stop, keys=None, every_orientation=False):
        """Each stored position and, where someone has captured, its half-turn with the
        players swapped (`images`)."""
        seeds, c = divmod(tier, 3)
        boards, sides, kos = _zigzag.unrank_range(self.kernel(), seeds, start, stop)
        boards = np.asarray(boards, dtype=np.uint8)
        n = len(boards)
        fields = np.empty((n, 3), dtype=np.uint8)
        fields[:, 0] = np.asarray(sides, dtype=np.uint8)
        kos = np.asarray(kos, dtype=np.int64)
        fields[:, 1] = np.where(kos < 0, 0, kos + 1)
        fields[:, 2] = c
        if self.CAPTURERS[c] is None:
            return boards, fields, np.arange(n, dtype=np.int64)
        counts = np.empty((2 * n, self.npits), dtype=np.uint8)
        counts[0::2] = boards
        counts[1::2] = boards[:, ::-1]
        turned = fields.copy()
        turned[:, 0] = 1 - fields[:, 0]
        turned[:, 1] = np.where(kos < 0, 0, self.npits - kos)     # turned_move(ko) + 1
        turned[:, 2] = 3 - c                                        # P <-> p
        both = np.empty((2 * n, 3), dtype=np.uint8)
        both[0::2], both[1::2] = fields, turned
        return counts, both, np.repeat(np.arange(n, dtype=np.int64), 2)

    def stored_positions(self, tier: int, start: int, stop: int) -> list[Position]:
        seeds, c = divmod(tier, 3)
        boards, sides, kos = _zigzag.unrank_range(self.kernel(), seeds, start, stop)
        last = self.CAPTURERS[c]
        return [Position(tuple(int(x) for x in b), "Pp"[s], None if k < 0 else int(k), last)
                for b, s, k in zip(boards, sides, kos)]
