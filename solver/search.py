"""Solving by search: a depth-first search with a transposition table, in the kernel, over the
canonical packed positions of a game (keyed indexing).  Used where positions do not form a dense
index (stacks of any height on a connected set of cells), and to answer positions that
a table does not hold."""
from __future__ import annotations

import time

import numpy as np

from .contract import Game
from .kernels import SearchLimit, TTSolver, bar_advancer, observing, run_stoppable
from .tiers import Progress, SolveReport, no_progress

DEFAULT_MAX_POSITIONS = 1 << 28


class SearchLimitReached(RuntimeError):
    """A search that filled its --max-positions before solving the position it started from."""


def search(game: Game, position, max_positions: int = DEFAULT_MAX_POSITIONS,
           progress: Progress = no_progress, label: str = "search",
           what: str = "the position") -> TTSolver:
    """Solve every position reachable from `position`; the solver answers record(key).
    Ctrl-C stops the search at once; SearchLimitReached when it needs more than max_positions
    positions (`what` names the position in that message)."""
    solver = TTSolver(game.kernel().capsule(), max_positions)
    _, root = game.key(position)
    with progress(None, label) as bar:
        try:
            with observing(bar_advancer(bar)):
                run_stoppable(lambda words: solver.run(root, words))
        except SearchLimit as exc:
            raise SearchLimitReached(
                f"the search reached --max-positions {max_positions} before solving {what} "
                f"({exc.solved:,} positions solved); raise it") from None
    return solver


def solve_by_search(game: Game, store, max_positions: int = DEFAULT_MAX_POSITIONS,
                    progress: Progress = no_progress) -> SolveReport:
    """Solve everything reachable from the start and store it tier by tier (the game's tier of
    each packed position)."""
    started = time.perf_counter()
    solver = search(game, game.initial(), max_positions, progress, "positions searched",
                    what="the start")
    keys, records = solver.results()
    searched = time.perf_counter() - started
    tiers = game.tiers_of_keys(keys)
    report = SolveReport(search_seconds=searched)
    for tier in np.unique(tiers):
        chosen = tiers == tier
        tier_records = records[chosen]
        summary = game.value_kind.summarize(tier_records)
        store.save_tier(int(tier), tier_records, summary, keys=keys[chosen])
        report.add(int(tier), summary, None)
    return report
