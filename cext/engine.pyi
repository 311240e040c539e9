"""Types of the compiled analysis engine (engine.pyx): alpha-beta with iterative deepening, a
transposition table of whole states, lazy SMP threads, endgame tables at the leaves."""
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

MATE_SCORE: int
MATE_LIMIT: int
SCORE_SCALE: int
MAX_SEARCH_DEPTH: int

class Engine:
    """One game board's engine: its transposition table, weights and leaf tables."""

    def __init__(self, capsule: Any, weights: Sequence[int], table_bytes: int = ...) -> None: ...
    @property
    def state_bytes(self) -> int: ...
    @property
    def margin(self) -> int: ...
    @property
    def features(self) -> int: ...
    @property
    def max_moves(self) -> int: ...
    @property
    def table_bytes(self) -> int: ...
    def set_weights(self, weights: Sequence[int]) -> None: ...
    def add_tier(self, tier: int, records: npt.NDArray[np.uint16],
                 keys: npt.NDArray[np.uint64] | None = None) -> None:
        """Hand a solved tier of a table of this board to the leaves."""
    def clear(self) -> None: ...
    def warm(self) -> None: ...
    def moves(self, state: bytes) -> list[tuple[int, int, bytes]]:
        """[(code, gain, child state)] of a state; [] when the game is over there."""
    def final(self, state: bytes) -> int | None: ...
    def features_of(self, state: bytes) -> list[int]: ...
    def horizon(self, state: bytes) -> tuple[str, int | list[int] | None] | None:
        """What the game's look at a state on the horizon says: ("over", score), ("wins at
        once", None) or ("goes on", features); None where the game has none."""
    def evaluate(self, state: bytes) -> int: ...
    def leaf(self, state: bytes) -> int | None:
        """The score the tables at the leaves give a state, None where they hold none."""
    def run(self, state: bytes, seconds: float = 0, nodes: int = 0, threads: int = 1,
            multipv: int = 0, seed: int = 0, depth: int = 0) -> int | None:
        """Search `state` (releases the GIL) at most `depth` plies deep (0: no limit); the
        score of a final state, else None."""
    def stop(self) -> None: ...
    def status(self) -> tuple[int, int, float, int | None, int | None, bool]:
        """(depth completed, nodes, seconds, best code or None, its score, proven)."""
    def report(self) -> list[tuple[int, int, int, bool, bool, int, int]]:
        """[(code, gain, score, exact value, proven, depth, child index)], best first."""
    def principal_variation(self, state: bytes, limit: int = 40) -> list[int]: ...
