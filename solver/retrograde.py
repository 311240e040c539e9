"""Tiered solver for acyclic win/loss games: the Python driver around cext/retrograde.pyx.

Tiers are solved in the game's order; each tier needs only itself and the tiers that
`game.tier_dependencies` names, so memory holds a window of tiers, and each finished tier goes
to the store before the next one starts (a killed solve resumes from the last stored tier).
The driver calls the kernel once per chunk of about a million positions, never per position.
"""
from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from typing import Callable, ContextManager, Protocol

import numpy as np

from .contract import Game
from .kernels import solve_range, tier_summary

CHUNK = 1 << 20


class TierStore(Protocol):
    """Where solved tiers go (tables/ implements it): the solver never names a file format."""

    def finished_tiers(self) -> set[int]: ...

    def load_tier(self, tier: int) -> np.ndarray: ...

    def save_tier(self, tier: int, records: np.ndarray, summary: dict) -> None: ...


@dataclass
class TierReport:
    tier: int
    positions: int
    seconds: float | None
    losses: int
    draws: int
    wins: int
    longest_win: int
    longest_win_index: int


@dataclass
class SolveReport:
    tiers: list[TierReport] = field(default_factory=list)
    resumed_from: int | None = None
    search_seconds: float | None = None     # a search solves all tiers at once

    @property
    def positions(self) -> int:
        return sum(t.positions for t in self.tiers)

    @property
    def seconds(self) -> float:
        if self.search_seconds is not None:
            return self.search_seconds
        return sum(t.seconds or 0.0 for t in self.tiers)


Progress = Callable[[int, str], ContextManager]


def no_progress(total: int | None, desc: str) -> ContextManager:
    class Quiet:
        def update(self, n: int) -> None:
            pass
    return contextlib.nullcontext(Quiet())


def default_threads() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def last_uses(game: Game, order: list[int]) -> dict[int, int]:
    """For each tier, the last position in `order` whose solve (or check) reads it: a window
    of tiers may drop a tier once past that point."""
    last: dict[int, int] = {}
    for position, tier in enumerate(order):
        last[tier] = max(last.get(tier, position), position)
        for dep in game.tier_dependencies(tier):
            last[dep] = position
    return last


def summarize(records: np.ndarray) -> dict:
    losses, draws, wins, unsolved, longest, index = tier_summary(records)
    return {"positions": int(records.size), "losses": int(losses), "draws": int(draws),
            "wins": int(wins), "unsolved": int(unsolved), "longest_win": int(longest),
            "longest_win_index": int(index)}


def finish_tier(store: TierStore, report: SolveReport, tier: int, records: np.ndarray,
                summary: dict, seconds: float) -> None:
    """Store a solved tier (refusing one with unsolved records) and note it in the report."""
    if summary["unsolved"]:
        raise RuntimeError(f"tier {tier}: {summary['unsolved']} positions left unsolved")
    summary["seconds"] = round(seconds, 3)
    store.save_tier(tier, records, summary)
    report.tiers.append(TierReport(tier, int(records.size), seconds, summary["losses"],
                                   summary["draws"], summary["wins"], summary["longest_win"],
                                   summary["longest_win_index"]))


def solve_tiers(game: Game, store: TierStore, threads: int | None = None,
                progress: Progress = no_progress) -> SolveReport:
    """Solve every tier of `game` that `store` does not hold yet."""
    threads = threads or default_threads()
    capsule = game.kernel().capsule()
    order = list(game.tiers())
    done = store.finished_tiers()
    report = SolveReport()
    if done:
        report.resumed_from = max(done)
    window: dict[int, np.ndarray] = {}
    for position, tier in enumerate(order):
        if tier in done:
            continue
        needed = set(game.tier_dependencies(tier))
        for old in [t for t in window if t not in needed]:
            del window[old]
        for dep in needed:
            if dep not in window:
                window[dep] = store.load_tier(dep)
        size = game.tier_size(tier)
        records = np.zeros(size, dtype=np.uint16)
        arrays: list = [None] * (max(order) + 1)
        for dep, array in window.items():
            arrays[dep] = array
        arrays[tier] = records
        started = time.perf_counter()
        with progress(size, f"tier {tier} ({position + 1}/{len(order)})") as bar:
            for start in range(0, size, CHUNK):
                stop = min(size, start + CHUNK)
                solve_range(capsule, tier, start, stop, arrays, threads)
                bar.update(stop - start)
        finish_tier(store, report, tier, records, summarize(records),
                    time.perf_counter() - started)
        window[tier] = records
    return report
