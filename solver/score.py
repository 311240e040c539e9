"""Tiered solver for score games whose tiers hold cycles (Zig Zag): the Python driver around
cext/scoresolve.pyx.  The game builds each tier's move graph in its kernel (tier_graph); the
solver kernel turns it into records.  Tiers are solved in the game's order and stored as they
finish, so a killed or interrupted solve resumes from the last stored tier.  Both kernel calls
of a tier run in a worker thread (solver/kernels.py); one progress bar follows them."""
from __future__ import annotations

import time

import numpy as np

from .contract import Game
from .kernels import observing, solve_graph
from .retrograde import (Progress, SolveReport, TierProgress, bar_name, finish_tier, last_uses,
                         no_progress, remaining)
from .values import summarize_margins


def solve_score_tiers(game: Game, store, progress: Progress = no_progress) -> SolveReport:
    done = store.finished_tiers()
    report = SolveReport(resumed_from=max(done) if done else None)
    window: dict[int, np.ndarray] = {}
    order = list(game.tiers())
    last = last_uses(game, order)
    todo = [t for t in order if t not in done]
    if not todo:
        return report
    with progress(remaining(game, order, done), bar_name(game, todo[0])) as bar:
        tracker = TierProgress(bar, game)
        for position, tier in enumerate(order):
            if tier in done:
                continue
            for old in [t for t in window if last[t] < position]:
                del window[old]
            needed = set(game.tier_dependencies(tier))
            for dep in needed - set(window):
                window[dep] = store.load_tier(dep)
            size = game.tier_size(tier)
            started = time.perf_counter()
            # the graph counts every position once, the sweeps at most once more
            tracker.start_tier(tier, size, passes=2)
            with observing(tracker.observer):
                graph = game.tier_graph(tier, window)
                tracker.next_call()
                records, finals, endless = solve_graph(graph)
            del graph
            finish_tier(store, report, tier, records, summarize_margins(records),
                        time.perf_counter() - started)
            tracker.finish_tier()
            if last[tier] > position:
                window[tier] = records
    return report
