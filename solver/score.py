"""Tiered solver for score games whose tiers hold cycles (Zig Zag): the Python driver around
cext/scoresolve.pyx.  The game builds each tier's move graph in its kernel (tier_graph); the
solver kernel turns it into records.  Tiers are solved in the game's order and stored as they
finish, so a killed solve resumes from the last stored tier."""
from __future__ import annotations

import time

import numpy as np

from .contract import Game
from .kernels import solve_graph
from .retrograde import Progress, SolveReport, finish_tier, last_uses, no_progress
from .values import summarize_margins


def solve_score_tiers(game: Game, store, progress: Progress = no_progress) -> SolveReport:
    done = store.finished_tiers()
    report = SolveReport(resumed_from=max(done) if done else None)
    window: dict[int, np.ndarray] = {}
    order = list(game.tiers())
    last = last_uses(game, order)
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
        with progress(size, f"{game.tier_name(tier)} ({position + 1}/{len(order)})") as bar:
            records, finals, endless = solve_graph(game.tier_graph(tier, window))
            bar.update(size)
        finish_tier(store, report, tier, records, summarize_margins(records),
                    time.perf_counter() - started)
        if last[tier] > position:
            window[tier] = records
    return report
