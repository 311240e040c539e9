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

    def for_mover(self) -> "Value":
        """The value of the move leading here, for the player who made it."""
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
