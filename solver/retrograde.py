"""Retrograde analysis of acyclic win/loss tiers: the tier worker around cext/retrograde.pyx.

The kernel solves a whole tier in one call (never a Python call per position), reading the
children of each position through the game's kernel capsule (`expand`) and the records of the
lower tiers in the window; it runs in the kernel thread of solver/kernels.py, so Ctrl-C stops it
at once and the progress bar follows the positions it stores.  The tier manager
(solver/tiers.py) does the rest: order, window, store, resume.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from .contract import Game
from .kernels import (SCRATCH_PER_POSITION, SWEEP_LIMIT, SWEEP_MIN_POSITIONS, scratch_for, solve_range,
                      verify_range)
from .tiers import (IN_PROCESS, Executor, Progress, SolveReport, TierProgress, TierStore,
                    default_threads, no_progress, solve_tiers_with)


class _KernelTiers:
    """What both workers share: the game's kernel capsule, and the list of tier arrays the
    kernel indexes by tier number (None for tiers not in memory)."""
    passes = 1

    def __init__(self, game: Game, threads: int | None = None):
        self.game = game
        self.threads = threads or default_threads()
        self.capsule = game.kernel().capsule()
        self.slots = max(game.tiers()) + 1

    def arrays(self, window: dict[int, np.ndarray], tier: int, records: np.ndarray) -> list:
        arrays: list = [None] * self.slots
        for dep, array in window.items():
            arrays[dep] = array
        arrays[tier] = records
        return arrays


class RetrogradeWorker(_KernelTiers):
    """Solves one tier: every record from the children's records.  The kernel's scratch (a
    swept tier sorted by level) is allocated once, for the largest of the tiers it will be
    given (`tiers`: an endgame table's; all of the game's by default), and kept: fresh pages
    for every tier cost the system as much zeroing as a tenth of the solve."""

    def __init__(self, game: Game, threads: int | None = None, tiers: Iterable[int] | None = None):
        super().__init__(game, threads)
        sizes = [game.tier_size(t) for t in (game.tiers() if tiers is None else tiers)]
        swept = [n for n in sizes if SWEEP_MIN_POSITIONS <= n < SWEEP_LIMIT]
        self.largest = max(swept, default=0)
        self.scratch: np.ndarray | None = None

    def __call__(self, tier: int, window: dict[int, np.ndarray], calls: TierProgress) -> np.ndarray:
        size = self.game.tier_size(tier)
        if (SWEEP_MIN_POSITIONS <= size < SWEEP_LIMIT
                and (self.scratch is None or self.scratch.size < size * SCRATCH_PER_POSITION)):
            self.scratch = None          # the old one goes before the new one comes
            self.scratch = scratch_for(max(size, self.largest))
        records = np.zeros(size, dtype=np.uint16)
        solve_range(self.capsule, tier, 0, size, self.arrays(window, tier, records), self.threads,
                    self.scratch)
        return records


class RetrogradeVerifier(_KernelTiers):
    """Verifies one stored tier (`load` reads it): how many records differ from the fold of
    their children's, added up in `mismatches` per tier."""

    def __init__(self, game: Game, load, threads: int | None = None):
        super().__init__(game, threads)
        self.load = load
        self.mismatches: dict[int, int] = {}

    def __call__(self, tier: int, window: dict[int, np.ndarray], calls: TierProgress) -> np.ndarray:
        records = self.load(tier)
        self.mismatches[tier] = verify_range(self.capsule, tier, 0, records.size,
                                             self.arrays(window, tier, records), self.threads)
        return records


def solve_tiers(game: Game, store: TierStore, threads: int | None = None,
                progress: Progress = no_progress, executor: Executor = IN_PROCESS) -> SolveReport:
    """Solve every tier of `game` that `store` does not hold yet (see tiers.solve_tiers_with)."""
    done = store.finished_tiers()
    order = store.tier_order() if hasattr(store, "tier_order") else list(game.tiers())
    worker = RetrogradeWorker(game, threads, [t for t in order if t not in done])
    return solve_tiers_with(game, store, worker, progress, executor)
