"""Value kinds: what a record means, for every part of sowsolve that reads one.

A record is 16 bits, always for the side to move, 0 meaning "not solved".  Its layout is defined
once, in cext/sowsolve_kernel.h, and read here from the compiled kernels (`WINLOSS_LAYOUT`,
`MARGIN_LAYOUT`), so Python never repeats a bit position.  A game names its kind
(`Game.value_kind`); everything else asks the kind -- decoding, tier summaries, which records a
table may hold, export columns, the value a position must have given its children (`check`),
and the words a value is shown in -- and never branches on which kind it has.

- WIN_LOSS: outcome (loss, draw, win) and remoteness, plies to the end with best play.
- MARGIN: the seeds the side to move gains from here on minus the opponent's, and the plies to
  the end (None where the value comes from play that never ends).  A remoteness past the 9 bits
  of the record is "long": the tier's long table holds it (`MarginTier`); a record read through
  a table carries those plies in bits 16 and up (a *full* record, `widen`), so one int says all.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from .kernels import MARGIN_LAYOUT, WINLOSS_LAYOUT, tier_summary

UNSOLVED = WINLOSS_LAYOUT["unsolved"]
LOSS, DRAW, WIN = WINLOSS_LAYOUT["loss"], WINLOSS_LAYOUT["draw"], WINLOSS_LAYOUT["win"]
OUTCOME_NAMES = {LOSS: "loss", DRAW: "draw", WIN: "win"}
OUTCOME_CODES = {name: code for code, name in OUTCOME_NAMES.items()}
_OUTCOME_BITS = WINLOSS_LAYOUT["outcome_bits"]
_OUTCOME_MASK = (1 << _OUTCOME_BITS) - 1
MAX_REMOTENESS = WINLOSS_LAYOUT["max_remoteness"]

_BIAS = MARGIN_LAYOUT["bias"]
_REM_SHIFT = MARGIN_LAYOUT["rem_shift"]
_VALUE_MASK = MARGIN_LAYOUT["value_mask"]
REM_ENDLESS = MARGIN_LAYOUT["endless"]
REM_LONG = MARGIN_LAYOUT["long"]
_LONG_SHIFT = MARGIN_LAYOUT["long_shift"]
_FIELD_MASK = (1 << (16 - _REM_SHIFT)) - 1
MAX_MARGIN_REMOTENESS = MARGIN_LAYOUT["max_remoteness"]
#: a tier without long entries
NO_LONG = np.zeros(0, dtype=np.uint64)


def plies(n: int) -> str:
    return f"{n:,} {'ply' if n == 1 else 'plies'}"


class Value(NamedTuple):
    """A solved value for the side to move."""
    value: str          # "win", "loss" or "draw"
    remoteness: int

    @classmethod
    def from_record(cls, record: int) -> "Value":
        outcome = record & _OUTCOME_MASK
        if outcome == UNSOLVED:
            raise ValueError("the record holds no value (position not solved)")
        return cls(OUTCOME_NAMES[outcome], record >> _OUTCOME_BITS)

    def to_record(self) -> int:
        return (self.remoteness << _OUTCOME_BITS) | OUTCOME_CODES[self.value]

    def for_mover(self, gained: int = 0) -> "Value":
        """The value of the move leading here, for the player who made it (win/loss games gain
        nothing along the way)."""
        flipped = {"win": "loss", "loss": "win", "draw": "draw"}[self.value]
        return Value(flipped, self.remoteness + 1)

    def sort_key(self) -> tuple:
        """Best first: quick wins, draws, slow losses."""
        if self.value == "win":
            return (0, self.remoteness)
        if self.value == "draw":
            return (1, 0)
        return (2, -self.remoteness)


class Margin(NamedTuple):
    """A solved score for the side to move: what it gains from here on minus what the opponent
    gains, and the plies to the end (None where the value comes from play that never ends)."""
    margin: int
    remoteness: int | None

    @classmethod
    def from_record(cls, record: int) -> "Margin":
        """From a full record (a 16-bit one whose remoteness fits it, or one widened by `widen`)."""
        if record == 0:
            raise ValueError("the record holds no value (position not solved)")
        field = (record >> _REM_SHIFT) & _FIELD_MASK
        if field == REM_LONG:
            rem = record >> 16
            if rem < REM_LONG:
                raise ValueError("the record's remoteness is in its tier's long table")
        elif record >> 16:
            raise ValueError("the record is not a margin record")
        else:
            rem = None if field == REM_ENDLESS else field
        return cls((record & _VALUE_MASK) - _BIAS, rem)

    def to_record(self) -> int:
        """The full record (bits 16 and up hold a long remoteness)."""
        if self.remoteness is None:
            return (REM_ENDLESS << _REM_SHIFT) | (self.margin + _BIAS)
        if self.remoteness >= REM_LONG:
            return (self.remoteness << 16) | (REM_LONG << _REM_SHIFT) | (self.margin + _BIAS)
        return (self.remoteness << _REM_SHIFT) | (self.margin + _BIAS)

    @property
    def value(self) -> int:
        return self.margin

    def for_mover(self, gained: int = 0) -> "Margin":
        """The value of the move leading here for the player who made it (and gained seeds)."""
        return Margin(gained - self.margin, None if self.remoteness is None else self.remoteness + 1)

    def sort_key(self) -> tuple:
        """Best first: larger margins; among equal ones hurry when ahead, delay when behind."""
        rem = float("inf") if self.remoteness is None else self.remoteness
        return (-self.margin, rem if self.margin > 0 else -rem)


ChildRecord = Callable[[object], int]


class MarginTier(NamedTuple):
    """A solved margin tier as the score solver makes it and its kernels read it: the 16-bit
    records and the long table (uint64 entries index << 16 | plies, sorted by index) of the
    records whose remoteness is "long"."""
    records: np.ndarray
    long: np.ndarray

    @property
    def size(self) -> int:
        return int(self.records.size)


def widen(records: np.ndarray, long: np.ndarray, first: int = 0) -> np.ndarray:
    """Full records of `records` (indices first, first+1, ... of their tier): a record whose
    remoteness is long gets its plies from the long table in bits 16 and up (uint32).  Records
    with no long entry among them come back as they are."""
    if not long.size:
        return records
    at = (long >> np.uint64(_LONG_SHIFT)).astype(np.int64)
    lo, hi = np.searchsorted(at, [first, first + records.size])
    if lo == hi:
        return records
    full = records.astype(np.uint32)
    full[at[lo:hi] - first] |= (long[lo:hi] & np.uint64(0xFFFF)).astype(np.uint32) << np.uint32(16)
    return full


def long_table_problem(long: np.ndarray, size: int) -> str | None:
    """What is wrong with a tier's long table read from a file (None: nothing), before any
    kernel sees it: entries strictly increasing, indices inside the tier, plies from REM_LONG
    to MAX_MARGIN_REMOTENESS.  Whether each entry meets a record saying "long" is checked per
    block (MarginKind.invalid on widened records)."""
    if long.ndim != 1 or long.dtype != np.uint64:
        return "it is not an array of entries"
    if not long.size:
        return None
    at = long >> np.uint64(_LONG_SHIFT)
    plies = long & np.uint64(0xFFFF)
    if long.size > 1 and not bool(np.all(at[1:] > at[:-1])):
        return "its positions are not strictly increasing"
    if int(at[-1]) >= size:
        return "it names a position outside the tier"
    if int(plies.min()) < REM_LONG or int(plies.max()) > MAX_MARGIN_REMOTENESS:
        return f"it holds a remoteness outside {REM_LONG}..{MAX_MARGIN_REMOTENESS} plies"
    return None


class ValueKind:
    """What records of one kind mean.  Subclasses fill every method below (a kind may offer
    more, as MARGIN's `encode`); the rest of sowsolve holds a kind as an object and asks it."""
    #: the kind's name in JSON output ("value_kind")
    name: str
    #: the most plies a record can count (longer lines are refused by the solvers)
    max_remoteness: int
    #: the most stones a tier may hold for its values to fit a record (None: any)
    max_tier_stones: int | None = None
    #: the type of decoded values
    value_type: type

    def decode(self, record: int):
        """The value object of one record; ValueError for an unsolved record."""
        return self.value_type.from_record(int(record))

    #: whether a tier of this kind may keep a long table beside its records (MarginTier)
    has_long = False

    def tier_data(self, records: np.ndarray, long: np.ndarray):
        """A solved tier as the kernels read it (the tier manager's window): its records."""
        return records

    def tier_array_names(self) -> tuple[str, ...]:
        """The names of tier_arrays, in order."""
        return ("records", "long") if self.has_long else ("records",)

    def tier_arrays(self, data) -> dict[str, np.ndarray]:
        """The arrays a solved tier (`tier_data`) is made of, by name: what a cluster's shared
        directory holds of it (solver/cluster.py)."""
        if self.has_long:
            return {"records": data.records, "long": data.long}
        return {"records": data}

    def tier_from_arrays(self, arrays: dict[str, np.ndarray], size: int):
        """The solved tier made of `arrays` (read from a file) of a tier of `size` positions,
        checked for what a kernel relies on -- type and size of the records, and the long
        table's order and positions (a kernel indexes by them) -- before any kernel reads them;
        ValueError naming what is wrong.  (Whether each record is a value the tier can hold is
        the table's check, `invalid`; records that a solve computed need not pass it again.)"""
        records = arrays.get("records")
        if (not isinstance(records, np.ndarray) or records.dtype != np.uint16
                or records.shape != (size,)):
            raise ValueError(f"its records are not {size} 16-bit records")
        long = arrays.get("long", NO_LONG) if self.has_long else NO_LONG
        problem = long_table_problem(long, size) if self.has_long else None
        if problem:
            raise ValueError(f"its long table is not valid: {problem}")
        return self.tier_data(records, long)

    def summarize(self, records: np.ndarray) -> dict:
        """Counts of one tier's records, as the table's tier summary stores them."""
        raise NotImplementedError

    def invalid(self, game, tier: int, records: np.ndarray) -> np.ndarray:
        """Which records of a solved tier hold a value no position of the tier can have."""
        raise NotImplementedError

    def columns(self, records: np.ndarray) -> tuple[list, list]:
        """Export columns of a block of records: values and remoteness (None: endless)."""
        raise NotImplementedError

    def column_arrays(self, records: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple | None]:
        """`columns` as arrays, for exports at table scale: (values as int32, remoteness as
        int32 with -1 for none, the text of each value code -- or None where the values are
        numbers, margins)."""
        raise NotImplementedError

    def expected(self, game, position, child_record: ChildRecord):
        """The value `position` must have, given the records of its children (`check`)."""
        raise NotImplementedError

    def mismatch(self, stored, expected) -> str:
        """How a stored value differs from the one its children give, in words."""
        raise NotImplementedError

    def text(self, value, remoteness) -> str:
        """A value as `query` and `info` print it (value and remoteness as JSON holds them)."""
        raise NotImplementedError

    def short(self, value) -> str:
        """A value in a column of moves."""
        return str(value)

    def step(self, gained: int) -> dict:
        """What a ply of a principal variation adds to the value after it (score games: the
        seeds the move captured)."""
        return {}


class WinLoss(ValueKind):
    name = "winloss"
    max_remoteness = MAX_REMOTENESS
    value_type = Value

    def summarize(self, records: np.ndarray) -> dict:
        losses, draws, wins, unsolved, longest, index = tier_summary(records)
        return {"positions": int(records.size), "losses": int(losses), "draws": int(draws),
                "wins": int(wins), "unsolved": int(unsolved), "longest_win": int(longest),
                "longest_win_index": int(index)}

    def invalid(self, game, tier: int, records: np.ndarray) -> np.ndarray:
        outcome = records & _OUTCOME_MASK
        bad = outcome == UNSOLVED
        if not game.can_draw:
            bad |= outcome == DRAW
        return bad

    def columns(self, records: np.ndarray) -> tuple[list, list]:
        names = np.array([OUTCOME_NAMES.get(code, "unsolved") for code in range(_OUTCOME_MASK + 1)])
        return names[records & _OUTCOME_MASK].tolist(), (records >> _OUTCOME_BITS).tolist()

    def column_arrays(self, records: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple | None]:
        records = np.asarray(records)
        texts = tuple(OUTCOME_NAMES.get(code, "unsolved") for code in range(_OUTCOME_MASK + 1))
        return ((records & _OUTCOME_MASK).astype(np.int32),
                (records >> _OUTCOME_BITS).astype(np.int32), texts)

    def expected(self, game, position, child_record: ChildRecord) -> Value:
        outcome = game.outcome(position)
        if outcome is not None:
            return Value(outcome, 0)
        moves = game.legal_moves(position)
        if not moves:
            raise ValueError("it has no move and no end: it is no position of the game")
        return min((self.decode(child_record(game.play(position, move))).for_mover()
                    for move in moves), key=lambda v: v.sort_key())

    def mismatch(self, stored: Value, expected: Value) -> str:
        return (f"stored {stored.value} in {stored.remoteness}, its children give "
                f"{expected.value} in {expected.remoteness}")

    def text(self, value, remoteness) -> str:
        if remoteness is None:
            return f"{value} (proved; remoteness is no part of a proof)"
        if remoteness == 0:
            return f"{value} (game over)"
        return f"{value} in {plies(remoteness)}"


def _no_end(remoteness) -> str:
    return "no end" if remoteness is None else plies(remoteness)


#: records a margin summary or check looks at in one go (its temporaries: about 12 bytes each)
SUMMARY_SLICE = 1 << 22


class MarginKind(ValueKind):
    name = "margin"
    max_remoteness = MAX_MARGIN_REMOTENESS
    #: a margin is at most the seeds on the board
    max_tier_stones = _VALUE_MASK - _BIAS
    value_type = Margin
    has_long = True

    @staticmethod
    def _split(records: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Margins, remoteness (-1: no end, or a long one missing) and the 9-bit remoteness
        fields of full records."""
        field = (records >> _REM_SHIFT) & _FIELD_MASK
        rems = np.where(field == REM_LONG, records >> 16, field).astype(np.int32)
        rems[(field == REM_ENDLESS) | ((field == REM_LONG) & (rems < REM_LONG))] = -1
        return (records & _VALUE_MASK).astype(np.int16) - _BIAS, rems, field

    def encode(self, margins: np.ndarray, remoteness: int) -> np.ndarray:
        """Records of margins with one remoteness that fits the record (the score solver's
        check fills lower tiers with them)."""
        return ((np.asarray(margins) + _BIAS) | (remoteness << _REM_SHIFT)).astype(np.uint16)

    def tier_data(self, records: np.ndarray, long: np.ndarray) -> MarginTier:
        """A solved tier as the kernels read it (the window of the tier manager)."""
        return MarginTier(records, long)

    def summarize(self, records) -> dict:
        """Counts of a tier (wins/losses/draws are margins >0 / <0 / =0; `long`: remoteness
        in the long table), of its full records or of a MarginTier, a slice at a time: a tier
        can hold billions of records, and whole-tier temporaries would take several times its
        memory."""
        long = records.long if isinstance(records, MarginTier) else NO_LONG
        records = records.records if isinstance(records, MarginTier) else records
        counts = dict.fromkeys(("wins", "losses", "draws", "unsolved", "endless", "final", "long"), 0)
        longest, index = 0, -1
        for start in range(0, records.size, SUMMARY_SLICE):
            chunk = widen(records[start:start + SUMMARY_SLICE], long, start)
            margins, rems, field = self._split(chunk)
            missing = (field == REM_LONG) & (rems < 0)      # "long" without its plies
            solved = (chunk != 0) & ~missing
            wins = solved & (margins > 0)
            counts["wins"] += int(wins.sum())
            counts["losses"] += int((solved & (margins < 0)).sum())
            counts["draws"] += int((solved & (margins == 0)).sum())
            counts["unsolved"] += int((~solved).sum())
            counts["endless"] += int((solved & (field == REM_ENDLESS)).sum())
            counts["final"] += int((solved & (rems == 0)).sum())
            counts["long"] += int((solved & (field == REM_LONG)).sum())
            finite_wins = wins & (rems >= 0)
            if finite_wins.any():
                at = int(np.argmax(np.where(finite_wins, rems, -1)))
                if int(rems[at]) > longest or index < 0:
                    longest, index = int(rems[at]), start + at
        return {"positions": int(records.size), "wins": counts["wins"], "losses": counts["losses"],
                "draws": counts["draws"], "unsolved": counts["unsolved"], "longest_win": longest,
                "longest_win_index": index, "endless": counts["endless"], "final": counts["final"],
                "long": counts["long"]}

    def invalid(self, game, tier: int, records: np.ndarray) -> np.ndarray:
        """Of full records: unsolved ones, margins beyond the tier's seeds, and a remoteness
        field and a long table that disagree (a "long" record without plies, plies on another)."""
        bad = np.empty(records.size, dtype=bool)
        for start in range(0, records.size, SUMMARY_SLICE):
            chunk = records[start:start + SUMMARY_SLICE]
            margins, rems, field = self._split(chunk)
            plies = chunk >> 16
            bad[start:start + SUMMARY_SLICE] = (chunk == 0) | (np.abs(margins) > game.tier_stones(tier)) \
                | ((field == REM_LONG) & (plies < REM_LONG)) | ((field != REM_LONG) & (plies != 0))
        return bad

    def columns(self, records: np.ndarray) -> tuple[list, list]:
        """Of full records."""
        margins, rems, _ = self._split(records)
        return margins.tolist(), [None if r < 0 else r for r in rems.tolist()]

    def column_arrays(self, records: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple | None]:
        """Of full records."""
        margins, rems, _ = self._split(np.asarray(records))
        return margins.astype(np.int32), rems.astype(np.int32), None

    def expected(self, game, position, child_record: ChildRecord) -> Margin:
        """The margin and remoteness a score position must have given its children's records.

        The margin is the best of the moves (what the move banks minus the child's margin).  The
        remoteness is that of a move keeping the margin, following the threshold attractors:
        where the margin beats the leftover margin (the value of play that never captures
        again) the side to move forces it and hurries, where it falls short the opponent forces
        it and the side to move delays.  A margin equal to the leftover is final (remoteness 0)
        exactly when no move captures and every child is final; otherwise it is scored like
        endless play: no end unless every margin-keeping move ends, and then the slowest."""
        moves = game.legal_moves(position)
        leftover = game.leftover_margin(position)
        if not moves:
            return Margin(leftover, 0)
        tier = game.locate(position)[0]
        options = []
        for move in moves:
            child = game.play(position, move)
            options.append((self.decode(child_record(child)).for_mover(game.move_gain(position, move)),
                            game.locate(child)[0] == tier))
        margin = max(value.margin for value, _ in options)
        keeping = [value.remoteness for value, _ in options if value.margin == margin]
        if margin == leftover and all(same and value.remoteness == 1 for value, same in options):
            return Margin(margin, 0)    # final: no capture can be reached any more
        if margin > leftover:           # the side to move forces it: the quickest
            finite = [r for r in keeping if r is not None]
            return Margin(margin, min(finite) if finite else None)
        if any(r is None for r in keeping):  # the opponent forces it, or nobody: the slowest
            return Margin(margin, None)
        return Margin(margin, max(keeping))

    def mismatch(self, stored: Margin, expected: Margin) -> str:
        return (f"stored margin {stored.margin} in {_no_end(stored.remoteness)}, its moves give "
                f"{expected.margin} in {_no_end(expected.remoteness)}")

    def text(self, value, remoteness) -> str:
        if remoteness is None:
            return f"margin {value:+d}, and play never ends"
        if remoteness == 0:
            return f"margin {value:+d} (game over: no capture can happen any more)"
        return f"margin {value:+d}, game over in {plies(remoteness)}"

    def short(self, value) -> str:
        return f"{value:+d}"

    def step(self, gained: int) -> dict:
        return {"captured": gained}


WIN_LOSS = WinLoss()
MARGIN = MarginKind()
#: every value kind by its JSON name (for readers of JSON output, such as the renderer)
VALUE_KINDS = {kind.name: kind for kind in (WIN_LOSS, MARGIN)}
