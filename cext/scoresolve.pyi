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
