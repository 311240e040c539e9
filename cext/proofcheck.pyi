"""Checking a proof with a game's compiled move generator, apart from the search that made it."""
import numpy as np

#: what each failure code means (the check's caller names the position)
FAILURES: dict[int, str]

def check_proof(capsule: object, root: int, winner_to_move: bool, keys: np.ndarray,
                chosen: np.ndarray, control: np.ndarray | None = None) -> tuple[int, int, int, np.ndarray]:
    """Replay a proof from `root` (its side to move the winner when `winner_to_move`): returns
    (positions checked, failure code or 0, the packed position where it failed, which of the
    proof's positions the replay reached: a bool array).  `keys` must be sorted (the caller
    checks); `chosen` holds the child chosen at each."""
