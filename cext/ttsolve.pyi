"""Types of the compiled transposition-table solver over packed positions (ttsolve.pyx)."""
from typing import Final

import numpy as np
import numpy.typing as npt

#: what each error bit of a failed search means
ERRORS: Final[dict[int, str]]

class SearchLimit(RuntimeError):
    """The search solved its limit of positions before it solved the root."""

    limit: int
    solved: int
    def __init__(self, limit: int, solved: int) -> None: ...

class TTSolver:
    """One search from a root over the packed positions of a game kernel capsule."""

    def __init__(self, capsule: object, max_positions: int = ...) -> None: ...
    @property
    def max_positions(self) -> int: ...
    @property
    def positions(self) -> int:
        """Positions solved so far."""
    def run(self, root: int, control: npt.NDArray[np.int64] | None = None) -> None:
        """Solve every position reachable from `root`; SearchLimit when the table is full."""
    def record(self, key: int) -> int:
        """The record of a packed position, 0 if the search has not solved it."""
    def results(self) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint16]]:
        """(keys, records) of every solved position, sorted by key."""

def verify_keys(capsule: object, keys: npt.NDArray[np.uint64], records: npt.NDArray[np.uint16],
                check: npt.NDArray[np.uint64],
                control: npt.NDArray[np.int64] | None = None,
                root: int | None = None) -> tuple[int, int, int]:
    """(mismatches, children missing from the arrays, keys no checked position leads to
    other than `root`) of the packed positions `check`."""
