"""Value records: what the solvers compute and the tables store, always for the side to move.

A record is 16 bits: the outcome in the low 2 bits (0 unsolved, 1 loss, 2 draw, 3 win) and the
remoteness (plies to the end with best play) above them.  It matches cext/sowsolve_kernel.h.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

UNSOLVED, LOSS, DRAW, WIN = 0, 1, 2, 3
OUTCOME_NAMES = {LOSS: "loss", DRAW: "draw", WIN: "win"}
OUTCOME_CODES = {name: code for code, name in OUTCOME_NAMES.items()}
MAX_REMOTENESS = (1 << 14) - 1


class Value(NamedTuple):
    """A solved value for the side to move."""
    value: str          # "win", "loss" or "draw"
    remoteness: int

    @classmethod
    def from_record(cls, record: int) -> "Value":
        outcome = record & 3
        if outcome == UNSOLVED:
            raise ValueError("the record holds no value (position not solved)")
        return cls(OUTCOME_NAMES[outcome], record >> 2)

    def to_record(self) -> int:
        return (self.remoteness << 2) | OUTCOME_CODES[self.value]

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


def outcome_names(records: np.ndarray) -> np.ndarray:
    """Vectorised outcome text of an array of records."""
    names = np.array(["unsolved", "loss", "draw", "win"])
    return names[records & 3]


REM_ENDLESS = 255   # margin records: the remoteness byte of a value that comes from endless play


class Margin(NamedTuple):
    """A solved score for the side to move: what it gains from here on minus what the opponent
    gains, and the plies to the end (None where the value comes from play that never ends)."""
    margin: int
    remoteness: int | None

    @classmethod
    def from_record(cls, record: int) -> "Margin":
        if record == 0:
            raise ValueError("the record holds no value (position not solved)")
        rem = record >> 8
        return cls((record & 0xFF) - 128, None if rem == REM_ENDLESS else rem)

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


def summarize_margins(records: np.ndarray) -> dict:
    """Counts of a tier of margin records (wins/losses/draws are margins >0 / <0 / =0)."""
    margins = (records & 0xFF).astype(np.int16) - 128
    rems = records >> 8
    solved = records != 0
    wins = solved & (margins > 0)
    finite_wins = wins & (rems != REM_ENDLESS)
    index = int(np.argmax(np.where(finite_wins, rems.astype(np.int32), -1))) if finite_wins.any() else -1
    return {"positions": int(records.size), "wins": int(wins.sum()),
            "losses": int((solved & (margins < 0)).sum()), "draws": int((solved & (margins == 0)).sum()),
            "unsolved": int((~solved).sum()),
            "longest_win": int(rems[index]) if index >= 0 else 0, "longest_win_index": index,
            "endless": int((solved & (rems == REM_ENDLESS)).sum()),
            "final": int((solved & (rems == 0)).sum())}


def decode(value_kind: str, record: int):
    """The value object of a record: Value (win/loss games) or Margin (score games)."""
    return Margin.from_record(record) if value_kind == "margin" else Value.from_record(record)
