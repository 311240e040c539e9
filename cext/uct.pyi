"""Types of the compiled UCT module (uct.pyx): the plain UCT player, the yardstick of the
engine's strength, and the engine's Monte Carlo search (MCTS-Solver, informed playouts)."""
from typing import Any

EXPLORATION: float

class Searcher:
    """One search's trees, kept after it ends so they can be read."""

    exploration: float
    solver: bool
    informed: bool
    reuse: bool
    fpu: float
    weights: tuple[int, ...] | None
    kept: int
    carried: int
    def __init__(self, capsule: Any, memory: int = ..., exploration: float = ...,
                 solver: bool = ..., informed: bool = ..., reuse: bool = ...,
                 weights: Any = ..., fpu: float = ...) -> None: ...
    @property
    def state_bytes(self) -> int: ...
    @property
    def playouts(self) -> int: ...
    def fits(self, threads: int) -> bool:
        """Whether the memory holds a tree for each of `threads` threads."""
    def clear(self) -> None:
        """Forget the last search's trees."""
    def reroot(self, state: bytes) -> int:
        """Keep each tree's subtree of `state` (within two plies of the last root) with
        `reuse`, else forget the trees; the nodes kept."""
    def run(self, state: bytes, seconds: float = 0, playouts: int = 0, threads: int = 1,
            seed: int = 0, lead: int = 0, leftover: int = 0, last: int = 0) -> int:
        """Search `state` (releases the GIL); the playouts run."""
    def stop(self) -> None: ...
    def report(self) -> list[tuple[int, int, int, float, int]]:
        """[(code, gain, visits, mean reward for the mover, proven)] best first."""
    def status(self) -> tuple[int, float, int | None, float | None, int]:
        """(playouts, seconds, best code or None, its mean reward, its proof)."""
    def principal_variation(self, first: int, limit: int = 40) -> list[int]: ...

def choose(capsule: Any, state: bytes, seconds: float = 0, playouts: int = 0, threads: int = 1,
           seed: int = 0, lead: int = 0, leftover: int = 0, last: int = 0,
           memory: int = ..., exploration: float = ..., solver: bool = False,
           informed: bool = False) -> tuple[list[tuple[int, int, float, int]], int]:
    """[(code, visits, mean reward for the mover, proven)] best first, and the playouts run."""
