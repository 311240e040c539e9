"""Types of the compiled df-pn proof search over packed positions (proofsearch.pyx)."""
from typing import Callable, Final

import numpy as np
import numpy.typing as npt

#: bytes of one entry of the search's table
ENTRY_BYTES: Final[int]
EXTRACT_CHUNK: Final[int]
#: proof and disproof numbers saturate here
INFINITY: Final[int]
#: what each error code of a failed search means
ERRORS: Final[dict[int, str]]

class Prover:
    """A df-pn search from `root` with a table of `entries` entries."""

    def __init__(self, capsule: object, root: int, entries: int) -> None: ...
    @property
    def root(self) -> int: ...
    @property
    def nodes(self) -> int:
        """Positions expanded so far (all slices)."""
    @property
    def entries(self) -> int: ...
    @property
    def stored(self) -> int:
        """Entries in use."""
    @property
    def walked(self) -> int:
        """Positions the extractions' walks expanded (part of `nodes`)."""
    @property
    def replaced(self) -> int:
        """Entries pushed out of a full bucket so far."""
    @property
    def techniques(self) -> dict[str, bool]: ...
    def set_techniques(self, hints: bool = True, epsilon: bool = True, weak: bool = False) -> None: ...
    def release(self) -> None:
        """Free the search's table (its proof drawn); a later call that reads it raises RuntimeError."""
    def count_depths(self) -> None:
        """From now on, count the positions the search expands at each depth."""
    def depths(self) -> npt.NDArray[np.int64] | None:
        """Positions expanded at each depth (0: the root) since count_depths(); None when not
        counted."""
    def numbers(self, key: int) -> tuple[int, int]:
        """(phi, delta) of `key` as the search reads a child: the table's, else the hint's."""
    def final_value(self, key: int) -> str | None:
        """'win' or 'loss' for the side to move of a final position, None with moves."""
    def value(self) -> str | None:
        """'win' or 'loss' for the side to move at the root once proved, else None."""
    def aim(self, key: int) -> None:
        """Search from `key` from now on, keeping the table (a worker's next job)."""
    def run(self, budget: int, control: npt.NDArray[np.int64] | None = None, threads: int = 1) -> bool:
        """Search on for at most `budget` more expansions (threads > 1: threads sharing the
        table): True once the root is proved."""
    def prove(self, key: int, control: npt.NDArray[np.int64] | None = None) -> str:
        """Search `key` until it is proved: 'win' or 'loss' for its side to move."""
    def extract(self, root: int, winner_to_move: bool, control: npt.NDArray[np.int64] | None = None,
                budget: int = -1,
                spill: Callable[[npt.NDArray[np.uint64], npt.NDArray[np.uint64]], object] | None = None,
                chunk: int = ...) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]] | None:
        """The proof in the table from `root`: (positions of the winner's, the child chosen at
        each), unsorted; None when searching again takes more than `budget` expansions (-1: no
        limit); ValueError when the table's values do not bear out.  With `spill`, each full
        chunk of `chunk` pairs goes to spill(keys, chosen) and only the rest is returned."""
    def children(self, key: int) -> list[int]:
        """Distinct children of a packed position as the search sees them (empty: final)."""
    def child_hints(self, key: int) -> list[tuple[int, int, int]]:
        """[(child, phi, delta)]: the distinct children with the hints that came with them from
        the game's expansion (the game's proof_hint of each, where it offers one, else 1, 1)."""
    @property
    def running(self) -> bool:
        """A call is searching (a checkpoint then would be torn)."""
    @property
    def slots(self) -> int:
        """Entries the table has room for (used or not)."""
    def used_entries(self, start: int, stop: int, column: str | None = None
                     ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32], npt.NDArray[np.uint32],
                                npt.NDArray[np.uint32]] | npt.NDArray:
        """Copies of the entries in use among slots [start, stop): (keys, phi, delta, work), or
        the one array `column` names ('key', 'phi', 'delta', 'work')."""
    def state(self) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32], npt.NDArray[np.uint32],
                             npt.NDArray[np.uint32], int]:
        """The table's entries in use (keys, phi, delta, work) and the expansions so far."""
    def restore(self, keys: npt.NDArray[np.uint64], phi: npt.NDArray[np.uint32],
                delta: npt.NDArray[np.uint32], work: npt.NDArray[np.uint32], nodes: int) -> None:
        """Refill the table from (a slice of) a checkpoint, and set the positions expanded."""
