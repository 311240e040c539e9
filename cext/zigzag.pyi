"""Types of the compiled Zig Zag kernel (zigzag.pyx): turns, perft, and the tiers of the score
solver (ranking, moves and un-moves of a tier)."""
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

FEATURES: tuple[str, ...]

class ZigZagKernel:
    """Kernel of one Zig Zag board."""

    def __init__(self, cols: int, circuit: Sequence[int], first_orientation: Sequence[int]) -> None: ...
    def play_capsule(self) -> Any:
        """The play layer (PlayKernel of sowsolve_kernel.h) for the analysis engine."""
    def play_state(self, board: Sequence[int], side: int, ko: int | None, last: int) -> bytes: ...
    def play_move(self, code: int) -> int: ...
    @property
    def cols(self) -> int: ...
    @property
    def npits(self) -> int: ...
    def turns(self, board: Sequence[int], side: int,
              ko: int | None) -> list[tuple[int, tuple[int, ...], int, int | None]]:
        """[(pit, board after, captured, ko pit or None)] of the legal moves (side 0 = P)."""
    def perft(self, board: Sequence[int], side: int, ko: int | None, depth: int) -> list[int]: ...

# Functions of the module that take the kernel as their first argument.
def tier_size(pits: int, seeds: int) -> int:
    """Positions of tier (seeds, any capturer) of a board of `pits` pits."""
def unturns_of(self: ZigZagKernel, board: Sequence[int], mover: int,
               ko_after: int | None) -> list[tuple[int, tuple[int, ...]]]:
    """[(pit, board before)] of every turn of `mover` that captures nothing and leaves `board`."""
def rank(self: ZigZagKernel, board: Sequence[int], side: int, ko: int | None) -> tuple[int, int]:
    """(seeds, index inside any tier of that many seeds) of a position (side 0 = P)."""
def unrank_range(self: ZigZagKernel, seeds: int, start: int,
                 stop: int) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8], npt.NDArray[np.int8]]:
    """Boards, sides (0 = P) and ko pits (-1 none) of indices start..stop-1."""

class ScoreTierOf:
    """One tier of a Zig Zag board for scoresolve.solve_tier."""

    def __init__(self, kernel: ZigZagKernel, seeds: int, capturer: int,
                 lower: dict[int, tuple[npt.NDArray[np.uint16], npt.NDArray[np.uint64]]]) -> None: ...
    @property
    def size(self) -> int: ...
    @property
    def endless_value(self) -> int: ...
    def capsule(self) -> Any: ...
    def moves(self, index: int) -> list[tuple[int | None, int | None, int | None]]: ...
    def unmoves(self, index: int) -> list[int]: ...
