"""Tiered solver for acyclic win/loss games: the Python driver around cext/retrograde.pyx.

Tiers are solved in the game's order; each tier needs only itself and the tiers that
`game.tier_dependencies` names, so memory holds a window of tiers, and each finished tier goes
to the store before the next one starts (a killed or interrupted solve resumes from the last
stored tier).  The driver calls the kernel once per tier, never per position; the kernel runs in
a worker thread (solver/kernels.py) and one progress bar follows the positions it solves.
"""
from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from typing import Callable, ContextManager, Iterable, Protocol

import numpy as np

from .contract import Game
from .kernels import observing, solve_range, tier_summary


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


class Bar(Protocol):
    """What a Progress hands out (tqdm is one): positions done since the last update, and the
    name of the part being solved now."""

    def update(self, n: int) -> None: ...

    def set_description(self, desc: str) -> None: ...


#: progress(total positions or None, description) -> a context manager giving a Bar; the
#: solvers open one bar for a whole solve and close it however the solve ends.
Progress = Callable[[int | None, str], ContextManager]


class _Quiet:
    def update(self, n: int) -> None:
        pass

    def set_description(self, desc: str) -> None:
        pass


def no_progress(total: int | None, desc: str) -> ContextManager:
    return contextlib.nullcontext(_Quiet())


class TierProgress:
    """Feeds one bar over a whole solve from the running counts of the kernel calls of each
    tier (`observer`, for kernels.observing); a count may run a little ahead (two threads
    that store one position at once both count it), so the bar stops one short of the tier
    until `finish_tier`, which adds what is left: the bar's updates sum to exactly the sizes
    of the tiers solved."""

    def __init__(self, bar: Bar, game: Game):
        self.bar = bar
        self.game = game
        self.size = self.shown = self.base = self.current = 0
        self.passes = 1

    def start_tier(self, tier: int, size: int, passes: int = 1) -> None:
        """A tier of `size` positions whose kernel calls count `passes` times over it."""
        self.size, self.passes = size, passes
        self.shown = self.base = self.current = 0
        self.bar.set_description(bar_name(self.game, tier))

    def observer(self, done: int) -> None:
        """The running count of the tier's current kernel call."""
        self.current = done
        # one position held back: the tier's last one is shown once the tier is stored
        target = min((self.base + done) // self.passes, self.size - 1)
        if target > self.shown:
            self.bar.update(target - self.shown)
            self.shown = target

    def next_call(self) -> None:
        """The tier's next kernel call starts counting from 0."""
        self.base += self.current
        self.current = 0

    def finish_tier(self) -> None:
        if self.size > self.shown:
            self.bar.update(self.size - self.shown)
        self.shown = self.size


def bar_name(game: Game, tier: int) -> str:
    """The tier's name for a progress bar ("tier 12" where the game names tiers by number)."""
    name = game.tier_name(tier)
    return f"tier {name}" if name == str(tier) else name


def remaining(game: Game, order: Iterable[int], done: set[int]) -> int:
    """Positions of the tiers still to solve."""
    return sum(game.tier_size(t) for t in order if t not in done)


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
    """Solve every tier of `game` that `store` does not hold yet.  Ctrl-C stops the kernel at
    once; the interrupted tier is not stored, so the next solve resumes with it."""
    threads = threads or default_threads()
    capsule = game.kernel().capsule()
    order = list(game.tiers())
    done = store.finished_tiers()
    report = SolveReport()
    if done:
        report.resumed_from = max(done)
    window: dict[int, np.ndarray] = {}
    todo = [t for t in order if t not in done]
    if not todo:
        return report
    with progress(remaining(game, order, done), bar_name(game, todo[0])) as bar:
        tracker = TierProgress(bar, game)
        for tier in todo:
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
            tracker.start_tier(tier, size)
            with observing(tracker.observer):
                solve_range(capsule, tier, 0, size, arrays, threads)
            finish_tier(store, report, tier, records, summarize(records),
                        time.perf_counter() - started)
            tracker.finish_tier()
            window[tier] = records
    return report
