"""Types of the compiled tier solver for acyclic win/loss games (retrograde.pyx)."""
from typing import Final

import numpy as np
import numpy.typing as npt

#: what each error bit of a failed call means
ERRORS: Final[dict[int, str]]
#: the win/loss record layout of sowsolve_kernel.h: unsolved, loss, draw, win, outcome_bits,
#: max_remoteness
WINLOSS_LAYOUT: Final[dict[str, int]]

#: scratch bytes per position a whole-tier sweep uses (solve_range's `scratch`)
SCRATCH_PER_POSITION: int
#: tiers smaller than this are walked depth first, not swept
SWEEP_MIN_POSITIONS: int

def solve_range(capsule: object, tier: int, start: int, stop: int,
                tables: list[npt.NDArray[np.uint16] | None], threads: int = 1,
                control: npt.NDArray[np.int64] | None = None,
                scratch: npt.NDArray[np.uint8] | None = None,
                sweep_from: int = ...) -> None:
    """Solve indices start..stop-1 of `tier` in place (tables[tier] is filled)."""
def verify_range(capsule: object, tier: int, start: int, stop: int,
                 tables: list[npt.NDArray[np.uint16] | None], threads: int = 1,
                 control: npt.NDArray[np.int64] | None = None) -> int:
    """How many records start..stop-1 of `tier` differ from the fold of their children."""
def tier_summary(records: npt.NDArray[np.uint16]) -> tuple[int, int, int, int, int, int]:
    """(losses, draws, wins, unsolved, longest win, index of a longest win)."""
