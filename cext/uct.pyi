"""Types of the compiled plain UCT player (uct.pyx), the yardstick of the engine's strength."""
from typing import Any

EXPLORATION: float

def choose(capsule: Any, state: bytes, seconds: float = 0, playouts: int = 0, threads: int = 1,
           seed: int = 0, lead: int = 0, leftover: int = 0, last: int = 0,
           memory: int = ..., exploration: float = ..., solver: bool = False,
           informed: bool = False) -> tuple[list[tuple[int, int, float, int]], int]:
    """[(code, visits, mean reward for the mover, proven)] best first, and the playouts run."""
