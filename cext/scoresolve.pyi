"""Types of the compiled score solver for tiers with cycles (scoresolve.pyx)."""
from typing import Any, Final

import numpy as np
import numpy.typing as npt

#: the margin record layout of sowsolve_kernel.h: bias, rem_shift, value_mask, endless, long,
#: long_shift, max_remoteness
MARGIN_LAYOUT: Final[dict[str, int]]

def long_table(dist: npt.NDArray[np.uint16], finite: npt.NDArray[np.bool_]) -> npt.NDArray[np.uint64]:
    """The long table (index << long_shift | plies) of the finite distances past 9 bits."""

class RecordLimit(RuntimeError):
    """A value of the tier does not fit a margin record (a remoteness past the longest)."""

    def __init__(self, message: str) -> None: ...

def solve_graph(graph: dict[str, Any],
                control: npt.NDArray[np.int64] | None = None
                ) -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.uint64], int, int]:
    """(records, long table, final positions, endless positions) of a tier from its move graph."""

def solve_tier(tier: Any, threads: int = 1, control: npt.NDArray[np.int64] | None = None,
               parallel_from: int = ...
               ) -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.uint64], int, int]:
    """(records, long table, final positions, endless positions) of a tier from its moves and
    un-moves."""

class ScorePart:
    """One block (lo <= i < hi) of a score tier, solved level by level with the offers to other
    blocks handed out and in (solver/splittier.py)."""
    records: npt.NDArray[np.uint16]
    flags: npt.NDArray[np.uint8]
    dist: npt.NDArray[np.uint16]
    lo: int
    hi: int
    n: int
    bound: int
    endless: int
    phase: int
    max_preds: int

    def __init__(self, tier: Any, lo: int, hi: int, threads: int = ...,
                 control: npt.NDArray[np.int64] | None = ...) -> None: ...
    def summarise(self, forcing: int) -> npt.NDArray[np.int64]: ...
    def seed(self, t: int) -> None: ...
    def level(self, d: int) -> npt.NDArray[np.uint32]: ...
    def next_level(self, d: int) -> int: ...
    def end_levels(self) -> None: ...
    def receive(self, offers: npt.NDArray[np.uint32]) -> None: ...
    def joined_bits(self) -> npt.NDArray[np.uint8]: ...
    def delay_phase(self, bits: npt.NDArray[np.uint8]) -> None: ...
    def reach_wave(self) -> tuple[int, npt.NDArray[np.uint32]]: ...
    def seed_delay(self) -> None: ...
    def finish(self) -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.uint64], int, int]: ...
    def state(self) -> dict[str, npt.NDArray[Any]]: ...
    def restore(self, state: dict[str, npt.NDArray[Any]], forcing: int, phase: int) -> None: ...
