"""Types of the compiled Diffusion kernel (diffusion.pyx): move generation, ranking inside a
tier (the stones on the board), un-moves, perft and the proof search's packed positions."""
from typing import Any, Final, Literal, Sequence

import numpy as np
import numpy.typing as npt

#: the most columns a board of this kernel has
MAX_COLS: Final[int]
#: the kernel's record of one half code (HalfCode of diffusion.pyx) as a numpy dtype
HALF_CODE: Final[np.dtype[Any]]

def potential_weights(slots: Sequence[Sequence[int]]) -> list[int] | None:
    """The least positive integer pit weights under which every move lowers the potential."""

FEATURES: tuple[str, ...]

class DiffusionKernel:
    """Kernel of one Diffusion board: owns the tables, hands out the GameKernel capsule."""

    def __init__(self, cols: int, variant: int, max_tier: int,
                 slots: Sequence[Sequence[int]], owner: Sequence[int], lanes: bool = ...) -> None: ...
    def play_capsule(self) -> Any:
        """The play layer (PlayKernel of sowsolve_kernel.h) for the analysis engine."""
    def play_state(self, board: Sequence[int], side: int) -> bytes: ...
    def play_move(self, code: int) -> int: ...
    def key(self, board: Sequence[int], side: int) -> int:
        """The proof search's key of a position (side 0 = A to move): 3 bits a pit, the side
        above them, the lesser packing of the position and its turn with the other side."""
    def children_of_key(self, key: int) -> tuple[list[int], int | None]:
        """([child keys], None), or ([], the final record) of a packed position."""
    @property
    def cols(self) -> int: ...
    @property
    def variant(self) -> int: ...
    @property
    def max_tier(self) -> int: ...
    @property
    def npits(self) -> int: ...
    @property
    def lanes(self) -> bool:
        """Children computed in the CPU's vector lanes (False: the scalar loop, same children)."""
    @property
    def tier_sizes(self) -> npt.NDArray[np.int64]: ...
    @property
    def pips(self) -> tuple[int, ...]:
        """Per pit, the one-stone moves that take a stone of it out of its owner's block."""
    @property
    def weights(self) -> tuple[int, ...]:
        """The potential's weight of each pit (potential_weights)."""
    def capsule(self) -> object:
        """The GameKernel for solver modules (a PyCapsule, valid while this object lives)."""
    def rank(self, board: Sequence[int]) -> tuple[int, int]:
        """(tier, index) of a board."""
    def unrank(self, tier: int, index: int) -> tuple[int, ...]: ...
    def level(self, tier: int, index: int) -> int:
        """The potential of (tier, index): what orders the solver's sweep of a tier."""
    def unrank_range(self, tier: int, start: int, stop: int) -> npt.NDArray[np.uint8]:
        """Boards of indices start..stop-1 of a tier as a (count, pits) array."""
    def outcome(self, board: Sequence[int]) -> Literal["win", "loss"] | None: ...
    def moves(self, board: Sequence[int]) -> list[tuple[int, tuple[int, ...], int]]:
        """[(pit, child board, stones to stores)] for every legal move of a board."""
    def children(self, tier: int, index: int) -> int | list[tuple[int, int]]:
        """[(tier, index)] of the stored children, or the final record."""
    def unmoves_in_tier(self, board: Sequence[int]) -> list[tuple[int, tuple[int, ...]]]: ...
    def perft(self, board: Sequence[int], depth: int) -> list[int]: ...
