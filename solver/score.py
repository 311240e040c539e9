"""Score tiers with cycles inside them (Zig Zag): the tier worker around cext/scoresolve.pyx.

The game builds each tier's move graph in its kernel (`Game.tier_graph`, with the values of
the moves that leave the tier read from the lower tiers in the window); the solver kernel turns
it into margin records with threshold attractors.  Both kernel calls of a tier run in the kernel
thread of solver/kernels.py; the tier manager (solver/tiers.py) does the rest."""
from __future__ import annotations

import numpy as np

from .contract import Game
from .kernels import solve_graph
from .tiers import (IN_PROCESS, Executor, Progress, SolveReport, TierProgress, TierStore,
                    no_progress, solve_tiers_with)


class ScoreTierWorker:
    """Solves one score tier: its move graph, then the attractors over it."""
    # the graph counts every position once, the sweeps at most once more
    passes = 2

    def __init__(self, game: Game):
        self.game = game

    def __call__(self, tier: int, window: dict[int, np.ndarray], calls: TierProgress) -> np.ndarray:
        graph = self.game.tier_graph(tier, window)
        calls.next_call()
        records, _finals, _endless = solve_graph(graph)
        return records


def solve_score_tiers(game: Game, store: TierStore, progress: Progress = no_progress,
                      executor: Executor = IN_PROCESS) -> SolveReport:
    return solve_tiers_with(game, store, ScoreTierWorker(game), progress, executor)
