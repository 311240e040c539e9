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

def use_lanes(enabled: bool | None = None) -> bool:
    """Whether the sweep uses the CPU's vector lanes (AVX-512) for its children's records; with
    `enabled`, turn them on (where the CPU has them) or off and return the previous setting."""

def solve_range(capsule: object, tier: int, start: int, stop: int,
                tables: list[npt.NDArray[np.uint16] | None], threads: int = 1,
                control: npt.NDArray[np.int64] | None = None,
                scratch: npt.NDArray[np.uint8] | None = None,
                sweep_from: int = ...) -> None:
    """Solve indices start..stop-1 of `tier` in place (tables[tier] is filled)."""
def level_bounds(capsule: object, tier: int, size: int, threads: int = 1,
                 control: npt.NDArray[np.int64] | None = None, with_order: bool = True,
                 out: npt.NDArray[np.uint32] | None = None
                 ) -> tuple[npt.NDArray[np.uint32] | None, npt.NDArray[np.int64]] | None:
    """(indices sorted by level or None, where each level starts); None without levels."""
def solve_groups(capsule: object, tier: int, tables: list[npt.NDArray[np.uint16] | None],
                 members: npt.NDArray[np.uint32], bounds: npt.NDArray[np.int64], threads: int = 1,
                 control: npt.NDArray[np.int64] | None = None) -> None:
    """Solve the indices `members` of `tier` in place, group by group (bounds)."""
def verify_range(capsule: object, tier: int, start: int, stop: int,
                 tables: list[npt.NDArray[np.uint16] | None], threads: int = 1,
                 control: npt.NDArray[np.int64] | None = None) -> int:
    """How many records start..stop-1 of `tier` differ from the fold of their children."""
def tier_summary(records: npt.NDArray[np.uint16]) -> tuple[int, int, int, int, int, int]:
    """(losses, draws, wins, unsolved, longest win, index of a longest win)."""
