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
    def census_capsule(self) -> object:
        """A GameKernel like capsule() that also counts the positions it expands by (discs,
        occupied cells): census() reads them (one thread only)."""
    def census(self) -> npt.NDArray[np.int64] | None:
        """[discs][occupied cells] counts of the positions expanded through census_capsule()."""
    def moves(self, heights: Sequence[int]) -> list[tuple[tuple[int, int], tuple[int, ...]]]:
        """[((cell, direction), child heights)] of a position."""
    def count_moves(self, heights_array: npt.NDArray[np.uint8]) -> int: ...
    def perft(self, heights: Sequence[int], depth: int) -> list[int]: ...
    def key(self, heights: Sequence[int], side: int) -> int:
        """Canonical packed position (side 0 = Light to move, 1 = Dark)."""
    def unpack(self, key: int) -> tuple[tuple[int, ...], int]:
        """(heights, side) of a packed position."""
    def unpack_many(self, keys: npt.NDArray[np.uint64]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
        """(heights, sides) of packed positions, each checked."""
    #: whether the proof search's guesses look one move ahead (a win at once is proved)
    lookahead: bool
    def proof_hint_of(self, key: int) -> tuple[bool, int, int]:
        """(final, phi, delta) the proof search reads of a packed position before expanding it."""
    def children(self, key: int) -> int | list[int]:
        """Canonical keys of the children, or the final record."""

class OverflowTiers:
    """The endgame tiers of a board up to `max_discs` discs: tier d * (cells + 1) + k holds the
    positions of d discs on k occupied cells that keep one group, either side to move."""

    def __init__(self, board: OverflowKernel, max_discs: int) -> None: ...
    @property
    def ncells(self) -> int: ...
    @property
    def max_discs(self) -> int: ...
    @property
    def set_counts(self) -> list[int]:
        """One-group sets of occupied cells, by their size (0 .. cells)."""
    def capsule(self) -> object:
        """The GameKernel (`expand` over tiers and indices) for the tier solver."""
    def tier_size(self, tier: int) -> int: ...
    def rank(self, heights: Sequence[int], side: int) -> tuple[int, int] | None:
        """(tier, index) of a position; None when not ranked (more discs, not one group)."""
    def unrank(self, tier: int, index: int) -> tuple[tuple[int, ...], int]: ...
    def unrank_range(self, tier: int, start: int, stop: int) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
        """(heights, one row per position; sides) of positions start..stop-1 of a tier."""
    def children(self, tier: int, index: int) -> int | list[tuple[int, int]]:
        """[(tier, index)] of the children, or the final record."""

class TableLeaves:
    """The board's packed-position kernel with an endgame table's positions as final ones."""

    positions: int
    def __init__(self, board: OverflowKernel, tiers: OverflowTiers, max_discs: int) -> None: ...
    def add_tier(self, tier: int, records: npt.NDArray[np.uint16]) -> None:
        """Hold a solved tier (every record a win or a loss; ValueError otherwise) as a bit a
        position."""
    @property
    def nbytes(self) -> int:
        """Bytes the held tiers take."""
    def capsule(self) -> object:
        """The GameKernel (`expand_key`, `proof_hint`) for the proof search and its check."""
    def leaf(self, key: int) -> int | None:
        """The table's record of a packed position it holds, else None."""
    def children(self, key: int) -> int | list[int]:
        """Canonical keys of the children, or the final record (a table's position: its value)."""
