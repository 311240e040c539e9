"""Types of the compiled Overflow kernel (overflow.pyx): move generation on bitboards, packed
canonical positions (64-bit keys), perft."""
from typing import Any, Final, Sequence

import numpy as np
import numpy.typing as npt

#: the bit of a packed position that holds the side to move
SIDE_BIT: Final[int]

FEATURES: tuple[str, ...]

class OverflowKernel:
    """Kernel of one Overflow board: owns the tables, hands out the GameKernel capsule."""

    def __init__(self, rows: int, cols: int) -> None: ...
    def play_capsule(self) -> Any:
        """The play layer (PlayKernel of sowsolve_kernel.h) for the analysis engine."""
    def play_state(self, heights: Sequence[int], side: int) -> bytes: ...
    def play_move(self, code: int) -> tuple[int, int]: ...
    @property
    def rows(self) -> int: ...
    @property
    def cols(self) -> int: ...
    @property
    def ncells(self) -> int: ...
    @property
    def symmetries(self) -> int: ...
    @property
    def keyable(self) -> bool:
        """Whether positions of this board pack into 64-bit keys."""
    def capsule(self) -> object:
        """The GameKernel for solver modules (a PyCapsule, valid while this object lives)."""
    def moves(self, heights: Sequence[int]) -> list[tuple[tuple[int, int], tuple[int, ...]]]:
        """[((cell, direction), child heights)] of a position."""
    def count_moves(self, heights_array: npt.NDArray[np.uint8]) -> int: ...
    def perft(self, heights: Sequence[int], depth: int) -> list[int]: ...
    def key(self, heights: Sequence[int], side: int) -> int:
        """Canonical packed position (side 0 = Light to move, 1 = Dark)."""
    def unpack(self, key: int) -> tuple[tuple[int, ...], int]:
        """(heights, side) of a packed position."""
    def proof_hint_of(self, key: int) -> tuple[bool, int, int]:
        """(final, phi, delta) the proof search reads of a packed position before expanding it."""
    def children(self, key: int) -> int | list[int]:
        """Canonical keys of the children, or the final record."""
