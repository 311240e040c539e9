"""The tier manager: the one loop over a game's tiers, shared by every tiered solve and by the
verification of a table.

A game orders its positions into tiers such that every child of a tier lies in it or in an
earlier one (`Tiered.tiers`, `Tiered.tier_dependencies`).  The manager walks that order and owns
everything around the work on one tier: which tiers stay in memory (a window holding exactly
the tiers some later tier still reads), loading them from the store, skipping the tiers a store
already holds (resume), handing each finished tier on (to the store), and one progress bar for
the whole walk.  The work on one tier is a *tier worker* -- retrograde analysis of a win/loss
tier, the attractors of a score tier, a verification pass -- called through an *executor*:
`IN_PROCESS` runs it here, with the kernels' own threads; an executor for a cluster sends the
same worker elsewhere without solvers or games changing (model: GamesmanOne's tier manager and
tier workers).
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, ContextManager, Iterable, Protocol

import numpy as np

from .contract import Game
from .kernels import observing


class TierStore(Protocol):
    """Where solved tiers go (tables/ implements it): the solvers never name a file format."""

    def finished_tiers(self) -> set[int]: ...

    def load_tier(self, tier: int) -> np.ndarray: ...

    def save_tier(self, tier: int, records: np.ndarray, summary: dict, **extra) -> None: ...

    # optional: def tier_order(self) -> list[int], the tiers to solve (default: the game's)


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
    resumed_from: int | None = None         # the last tier stored before, in solving order
    search_seconds: float | None = None     # a search solves all tiers at once

    @property
    def positions(self) -> int:
        return sum(t.positions for t in self.tiers)

    @property
    def seconds(self) -> float:
        if self.search_seconds is not None:
            return self.search_seconds
        return sum(t.seconds or 0.0 for t in self.tiers)

    def add(self, tier: int, summary: dict, seconds: float | None) -> None:
        self.tiers.append(TierReport(tier, summary["positions"], seconds, summary["losses"],
                                     summary["draws"], summary["wins"], summary["longest_win"],
                                     summary["longest_win_index"]))


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


def default_threads() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def tier_label(game: Game, tier: int) -> str:
    """A tier as every message and progress bar names it: "tier 12" where the game names
    tiers by number, else the game's name of it ("20 discs on 9 cells")."""
    name = game.tier_name(tier)
    return f"tier {name}" if name == str(tier) else name


class TierProgress:
    """Feeds one bar over a whole walk from the running counts of the kernel calls of each
    tier (`observer`, for kernels.observing); a count may run a little ahead (two threads
    that store one position at once both count it), so the bar stops one short of the tier
    until `finish_tier`, which adds what is left: the bar's updates sum to exactly the sizes
    of the tiers walked."""

    def __init__(self, bar: Bar, game: Game):
        self.bar = bar
        self.game = game
        self.size = self.shown = self.base = self.current = 0
        self.passes = 1

    def start_tier(self, tier: int, size: int, passes: int = 1) -> None:
        """A tier of `size` positions whose kernel calls count `passes` times over it."""
        self.size, self.passes = size, passes
        self.shown = self.base = self.current = 0
        self.bar.set_description(tier_label(self.game, tier))

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


class TierWorker(Protocol):
    """The work on one tier: its records, from the records of the tiers it reads (`window`,
    tier -> records, holding at least `game.tier_dependencies(tier)`).  `passes` is how many
    times its kernel calls count over the tier (for the progress bar); a worker with several
    kernel calls says `calls.next_call()` between them.  A solving worker depends only on its
    game, its tier and the window: an executor that runs it in another process rebuilds it
    there with `make_game(game.name, **game.parameters())` and `game.solver.worker(game,
    threads)` (tests/test_executor.py does so).  Verifying workers read the table they check
    and run where it is."""
    game: Game
    passes: int

    def __call__(self, tier: int, window: dict[int, np.ndarray],
                 calls: TierProgress) -> np.ndarray: ...


@dataclass(frozen=True)
class WorkUnit:
    """A piece of one tier's work that an executor may run apart from the others (on a cluster):
    unit `index` of the tier's plan, in `round`.  The units of one round are independent; a
    round needs every unit of the rounds before it.  `spec` is the worker's own (the executor
    passes it back unread)."""
    index: int
    round: int
    positions: int
    spec: tuple


class SplitWorker(TierWorker, Protocol):
    """A tier worker that can also cut a tier into work units (optional; the retrograde
    worker does, by levels).  `state` is a dict the executor keeps per tier in the process that
    runs the units; `earlier(unit)` gives the records an earlier unit produced (wherever it
    ran): a unit's worker applies those of the rounds before its own, then solves its own.
    Where every part runs on one machine, the executor puts the tier's array in `state`
    ("records", shared by all the parts, which solve into it in place) and passes no
    `earlier`; the plan may then write what the parts share into `order` (a buffer every
    part maps), and `shared_arrays` gives the rest of it."""

    def plan(self, tier: int, parts: int, split_from: int | None = None,
             split_min: int | None = None, order: np.ndarray | None = None
             ) -> list[WorkUnit] | None: ...

    def shared_arrays(self, tier: int) -> dict[str, np.ndarray]: ...

    def solve_unit(self, tier: int, unit: WorkUnit, window: dict, state: dict,
                   earlier: Callable[[WorkUnit], np.ndarray] | None) -> np.ndarray | None: ...

    def assemble(self, tier: int, units: list[WorkUnit], window: dict, state: dict,
                 earlier: Callable[[WorkUnit], np.ndarray]) -> np.ndarray: ...


class Executor(Protocol):
    """Where tier workers run.  `release(tier)`: the manager will not pass that tier in a
    window again (an executor that copied it elsewhere may drop the copy)."""

    def run(self, worker: TierWorker, tier: int, window: dict[int, np.ndarray],
            calls: TierProgress) -> np.ndarray: ...

    def release(self, tier: int) -> None: ...


class InProcess:
    """Runs a tier's work in this process: the kernels release the GIL and use their own
    threads (OpenMP); solver/kernels.py keeps Ctrl-C and progress working around them."""

    def run(self, worker: TierWorker, tier: int, window: dict[int, np.ndarray],
            calls: TierProgress) -> np.ndarray:
        with observing(calls.observer):
            return worker(tier, window, calls)

    def release(self, tier: int) -> None:
        pass


IN_PROCESS = InProcess()


def last_solved(order: Iterable[int], done: Iterable[int]) -> int | None:
    """The last tier of `order` (a solving order) that `done` holds, or None: where a stopped
    solve resumes after.  Tier numbers need not rise along the order (the contract promises
    only that every child of a tier lies in it or in an earlier one)."""
    done = set(done)
    kept = [tier for tier in order if tier in done]
    return kept[-1] if kept else None


def last_uses(game: Game, order: list[int]) -> dict[int, int]:
    """For each tier, the last position in `order` whose work reads it: the window may drop a
    tier once past that point."""
    last: dict[int, int] = {}
    for position, tier in enumerate(order):
        last[tier] = max(last.get(tier, position), position)
        for dep in game.tier_dependencies(tier):
            last[dep] = position
    return last


#: what the manager does with each finished tier: (tier, records, seconds)
Finished = Callable[[int, np.ndarray, float], None]


class TierManager:
    """Walks `order` (the game's tiers by default), running `worker` on every tier not in
    `skip`, with the tiers it reads loaded by `load` (a store's or a table's tiers) and kept
    only as long as a later tier reads them."""

    def __init__(self, game: Game, load: Callable[[int], np.ndarray],
                 executor: Executor = IN_PROCESS, order: Iterable[int] | None = None):
        self.game = game
        self.load = load
        self.executor = executor
        self.order = list(game.tiers() if order is None else order)

    def remaining(self, skip: set[int]) -> int:
        """Positions of the tiers still to walk."""
        return sum(self.game.tier_size(t) for t in self.order if t not in skip)

    def run(self, worker: TierWorker, finished: Finished, skip: set[int] = frozenset(),
            progress: Progress = no_progress, overlap: bool = False, lower=None) -> None:
        """With `overlap`, `finished` (storing a tier: summing it up, compressing, writing)
        runs on a thread of its own while the next tier is worked on; at most one tier waits
        to be finished, and every exit from here (an error, Ctrl-C) first lets it finish, so a
        stored tier is always whole and a resume starts after the last one stored.  With
        `lower` (solver/lower.py: LowerTiers), the window keeps its tiers in files mapped from
        disk, not in memory: a finished tier a later one reads is stored from its mapped copy,
        so its records leave memory as soon as it is solved."""
        def kept(tier: int, data):
            return data if lower is None else lower.keep(self.game, tier, data)
        todo = [t for t in self.order if t not in skip]
        if not todo:
            return
        last = last_uses(self.game, self.order)
        window: dict[int, np.ndarray] = {}
        with contextlib.ExitStack() as stack:
            pending = stack.enter_context(_Pending()) if overlap else None
            bar = stack.enter_context(progress(self.remaining(skip), tier_label(self.game, todo[0])))
            tracker = TierProgress(bar, self.game)
            for position, tier in enumerate(self.order):
                if tier in skip:
                    continue
                for old in [t for t in window if last[t] < position]:
                    del window[old]
                    self.executor.release(old)
                deps = list(self.game.tier_dependencies(tier))
                for dep in deps:
                    if dep not in window:
                        if pending is not None:
                            pending.wait()      # the store is read only between writes
                        window[dep] = kept(dep, self.load(dep))
                size = self.game.tier_size(tier)
                tracker.start_tier(tier, size, worker.passes)
                started = time.perf_counter()
                # only what the tier declares it reads: an undeclared dependency fails at once,
                # not later on a resume whose window happens to lack it
                reads = {dep: window[dep] for dep in deps}
                records = self.executor.run(worker, tier, reads, tracker)
                seconds = time.perf_counter() - started
                if last[tier] > position:
                    records = window[tier] = kept(tier, records)
                if pending is None:
                    finished(tier, records, seconds)
                else:
                    pending.submit(finished, tier, records, seconds)
                tracker.finish_tier()
                del records
                if last[tier] <= position:
                    self.executor.release(tier)     # no later tier reads it
            if pending is not None:
                pending.wait()


class _Pending:
    """The one finished tier being stored on a thread of its own (TierManager.run)."""

    def __init__(self) -> None:
        self.done: threading.Event | None = None       # set by the storing thread as it ends
        self.error: BaseException | None = None

    def submit(self, finished: Finished, tier: int, records: np.ndarray, seconds: float) -> None:
        self.wait()                     # the previous tier first: tiers are stored in order
        done = threading.Event()

        def store() -> None:
            try:
                finished(tier, records, seconds)
            except BaseException as exc:     # handed to the main thread by wait()
                self.error = exc
            finally:
                done.set()

        self.done = done
        threading.Thread(target=store, name=f"sowsolve-store-{tier}").start()

    def wait(self) -> None:
        """Until the tier being stored is stored; its error, if any, raised here."""
        if self.done is not None:
            _wait_whole(self.done)
            self.done = None            # only once it ended: an exit from here still waits
        error, self.error = self.error, None
        if error is not None:
            raise error

    def __enter__(self) -> "_Pending":
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if exc is None:
            self.wait()
            return
        # already leaving with an error (Ctrl-C, a failed tier): the write in flight still
        # ends whole; the exception already on its way is the one reported, the store's own
        # error (a full disk, say) chained to it
        try:
            if self.done is not None:
                _wait_whole(self.done)
                self.done = None
        except BaseException as late:
            raise late from exc
        finally:
            if self.error is not None and exc.__context__ is None:
                exc.__context__ = self.error
            self.error = None


def _wait_whole(done: threading.Event) -> None:
    """Wait for a storing thread to end whatever arrives meanwhile (Ctrl-C, a signal handler's
    exception): leaving it half done would leave the table's transaction to whoever closes the
    table next.  The first such exception is raised once it has ended.  (An Event, not
    Thread.join: a join interrupted by a signal can mark a running thread as ended.)"""
    arrived: BaseException | None = None
    while True:
        try:
            if done.wait(0.5):
                break
        except BaseException as exc:
            arrived = arrived or exc
    if arrived is not None:
        raise arrived


def solve_tiers_with(game: Game, store: TierStore, worker: TierWorker,
                     progress: Progress = no_progress,
                     executor: Executor = IN_PROCESS, lower=None) -> SolveReport:
    """Solve every tier that `store` does not hold yet with `worker`, storing each as it
    finishes (refusing one with unsolved records).  Ctrl-C stops the kernel at once; the
    interrupted tier is not stored, so the next solve resumes with it.  `lower`: where the
    window keeps the tiers later ones read (TierManager.run)."""
    done = store.finished_tiers()
    # a table's own tier list (an endgame table holds the first tiers only), else the game's
    order = store.tier_order() if hasattr(store, "tier_order") else list(game.tiers())
    report = SolveReport(resumed_from=last_solved(order, done))

    def finished(tier: int, records: np.ndarray, seconds: float) -> None:
        summary = game.value_kind.summarize(records)
        if summary["unsolved"]:
            raise RuntimeError(f"tier {tier}: {summary['unsolved']} positions left unsolved")
        summary["seconds"] = round(seconds, 3)
        store.save_tier(tier, records, summary)
        report.add(tier, summary, seconds)

    TierManager(game, store.load_tier, executor, order).run(worker, finished, set(done), progress,
                                                            overlap=True, lower=lower)
    return report
