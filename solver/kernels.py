"""Thin wrappers over the Cython kernels in cext/.  There is no pure-Python fallback: a
sowsolve without its compiled kernels says so instead of running a thousand times slower.

Every long kernel call goes through `run_stoppable`: the kernel runs with the GIL released in a
kernel thread while the calling thread waits in short steps, so Ctrl-C reaches Python at once;
the waiting thread then sets the call's stop flag, the kernel returns within milliseconds, and
KeyboardInterrupt goes on up.  While it waits, the calling thread hands the kernel's count of
positions done to the observer installed with `observing` (progress bars).
"""
from __future__ import annotations

import importlib
import mmap
import os
import queue
import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator, TypeVar

import numpy as np

from ..cext import retrograde as _retrograde, scoresolve as _scoresolve, ttsolve as _ttsolve

def compiled(name: str):
    """The compiled kernel module cext/<name>.pyx (a game's kernel imports its own this way)."""
    try:
        return importlib.import_module(f"..cext.{name}", __package__)
    except ImportError as exc:  # pragma: no cover - only without a build
        raise ImportError(f"sowsolve's compiled kernel {name!r} is missing; reinstall with "
                          f"`pip install -e .` (needs a C compiler)") from exc



T = TypeVar("T")

#: Seconds between two looks at a running kernel's progress (and at Ctrl-C, which interrupts
#: the wait at once anyway).
POLL_SECONDS = 0.2
#: Seconds to wait for a call asked to stop before leaving it behind (see _wait).
STOP_WAIT = 1.0
#: Calls over fewer positions run in the calling thread: they end within a fraction of a second
#: (Ctrl-C is handled as they return) and skip the hand-over to the kernel thread, which costs
#: little on a quiet machine but a scheduler time slice or two on a busy one.
DIRECT_POSITIONS = 1 << 17

CONTROL_WORDS = 16      # sowsolve_kernel.h: struct Control
_STOP, _DONE = 0, 8


class Control:
    """The stop flag and progress counter a kernel shares with the thread that drives it."""

    def __init__(self) -> None:
        self.words = np.zeros(CONTROL_WORDS, dtype=np.int64)

    def stop(self) -> None:
        self.words[_STOP] = 1

    @property
    def stopped(self) -> bool:
        return bool(self.words[_STOP])

    @property
    def done(self) -> int:
        return int(self.words[_DONE])


Observer = Callable[[int], None]
_observer: ContextVar[Observer | None] = ContextVar("sowsolve_kernel_observer", default=None)


@contextmanager
def observing(observer: Observer) -> Iterator[None]:
    """Kernel calls made in this block (by this thread) call observer(done) every POLL_SECONDS
    while they run and once when they end, `done` being how many positions that call has
    finished so far (it restarts from 0 with each call)."""
    token = _observer.set(observer)
    try:
        yield
    finally:
        _observer.reset(token)


def bar_advancer(bar) -> Observer:
    """An observer that moves a progress bar up to the count it is given (never back): the
    counts a kernel call reports are totals so far, a bar takes steps."""
    shown = 0

    def advance(done: int) -> None:
        nonlocal shown
        if done > shown:
            bar.update(done - shown)
            shown = done
    return advance


class _Job:
    def __init__(self, call: Callable[[], object]):
        self.call = call
        self.finished = threading.Event()
        self.result: object = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.call()
        except BaseException as exc:  # handed to the calling thread
            self.error = exc
        finally:
            self.finished.set()


class _KernelThread:
    """The one long-lived thread that runs kernel calls: OpenMP keeps a thread team per calling
    thread, so a new thread for every call would build a new team every time (and leave the
    old one spinning); one thread keeps one team.  Calls from several threads take turns."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def submit(self, call: Callable[[], object]) -> _Job:
        job = _Job(call)
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="sowsolve-kernel",
                                                daemon=True)
                self._thread.start()
            self._jobs.put(job)
        return job

    def _serve(self) -> None:
        while True:
            self._jobs.get().run()

    def is_current(self) -> bool:
        return self._thread is threading.current_thread()


_worker = _KernelThread()
if hasattr(os, "register_at_fork"):     # a forked child has no kernel thread: start afresh
    os.register_at_fork(after_in_child=lambda: globals().update(_worker=_KernelThread()))


def _wait(job: _Job) -> None:
    """Wait for a job that was asked to stop: kernels return within milliseconds, a second
    Ctrl-C does not cut that short.  A job still busy after STOP_WAIT seconds is in numpy code
    between two kernels (a large tier's graph): it is left to finish in the background, its
    result dropped (its closure keeps its arrays alive), so Ctrl-C still ends the command."""
    deadline = time.monotonic() + STOP_WAIT
    while not job.finished.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return
        try:
            job.finished.wait(left)
        except KeyboardInterrupt:
            pass


def run_stoppable(call: Callable[[np.ndarray], T], positions: int | None = None) -> T:
    """call(control_words) in the kernel thread (the kernel must release the GIL and poll the
    words); Ctrl-C or any other exception in this thread stops it before going on up.  A call
    over fewer than DIRECT_POSITIONS `positions` runs in this thread."""
    control = Control()
    observer = _observer.get()
    if (positions is not None and positions < DIRECT_POSITIONS) or _worker.is_current():
        result = call(control.words)
        if observer is not None:
            observer(control.done)
        return result
    job = None
    try:
        job = _worker.submit(lambda: call(control.words))
        while not job.finished.wait(POLL_SECONDS):
            if observer is not None:
                observer(control.done)
    except BaseException:
        control.stop()
        if job is not None:
            _wait(job)
        raise
    if job.error is not None:
        raise job.error
    if observer is not None:
        observer(control.done)
    return job.result  # type: ignore[return-value]


# --- the kernels --------------------------------------------------------------------------

def solve_range(capsule, tier: int, start: int, stop: int, tables: list, threads: int = 1,
                scratch: np.ndarray | None = None) -> None:
    """Solve indices start..stop-1 of `tier` in place (cext/retrograde.pyx); counts the records
    it stores.  `scratch`: bytes a whole-tier sweep may use (scratch_for), kept across tiers."""
    run_stoppable(lambda words: _retrograde.solve_range(capsule, tier, start, stop, tables,
                                                        threads, words, scratch), stop - start)


def level_bounds(capsule, tier: int, size: int, threads: int = 1, with_order: bool = True,
                 out: np.ndarray | None = None):
    """(indices sorted by level or None, where each level starts) of a tier, or None where the
    game offers no levels (cext/retrograde.pyx); the order written into `out` where given."""
    return run_stoppable(lambda words: _retrograde.level_bounds(capsule, tier, size, threads, words,
                                                                with_order, out), size)


def solve_groups(capsule, tier: int, tables: list, members: np.ndarray, bounds: np.ndarray,
                 threads: int = 1) -> None:
    """Solve the indices `members` of `tier` in place, group by group (cext/retrograde.pyx)."""
    run_stoppable(lambda words: _retrograde.solve_groups(capsule, tier, tables, members, bounds,
                                                         threads, words), len(members))


#: arrays smaller than this stay ordinary numpy arrays (a huge page is 2 MB)
HUGE_PAGES_FROM = 8 << 20


def records_array(size: int) -> np.ndarray:
    """A zeroed uint16 array of `size` records for a tier, backed by huge pages where the
    system offers them (madvise).  A tier's positions read their children's records at random
    from the tiers below, hundreds of megabytes of them: with 4 KB pages nearly every such read
    also misses the TLB and walks the page table; with 2 MB pages the tiers' pages fit the TLB.
    The mapping is anonymous (zeroed by the system as first touched) and lives as long as the
    array."""
    nbytes = size * 2
    if nbytes < HUGE_PAGES_FROM:
        return np.zeros(size, dtype=np.uint16)
    try:
        area = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except OSError:             # no room for the mapping: numpy's own (MemoryError) as before
        return np.zeros(size, dtype=np.uint16)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        try:
            area.madvise(mmap.MADV_HUGEPAGE)
        except OSError:         # a system without transparent huge pages: ordinary pages
            pass
    return np.frombuffer(area, dtype=np.uint16)


def scratch_for(positions: int) -> np.ndarray:
    """Scratch for sweeping tiers of up to `positions` positions (solve_range)."""
    return np.empty(positions * SCRATCH_PER_POSITION, dtype=np.uint8)


def verify_range(capsule, tier: int, start: int, stop: int, tables: list, threads: int = 1) -> int:
    """How many records start..stop-1 of `tier` differ from the fold of their children."""
    return run_stoppable(lambda words: _retrograde.verify_range(capsule, tier, start, stop, tables,
                                                                threads, words), stop - start)


def verify_keys(capsule, keys: np.ndarray, records: np.ndarray, check: np.ndarray,
                root: int | None = None) -> tuple[int, int, int]:
    """(mismatches, missing children, keys not reached from `check` other than `root`) of the
    packed positions `check` (cext/ttsolve.pyx)."""
    return run_stoppable(lambda words: _ttsolve.verify_keys(capsule, keys, records, check, words,
                                                            root), len(check))


def solve_graph(graph: dict):
    """(records, long table, final positions, endless ones) of a score tier from an explicit move
    graph (cext/scoresolve.pyx): the reference the self-check compares solve_score_tier with on
    small tiers."""
    return run_stoppable(lambda words: _scoresolve.solve_graph(graph, words), len(graph["side"]))


def solve_score_tier(tier, threads: int = 1):
    """(records, long table, final positions, endless ones) of a score tier from its moves and
    un-moves
    (cext/scoresolve.pyx solve_tier, on `threads` threads)."""
    return run_stoppable(lambda words: _scoresolve.solve_tier(tier, threads, words), tier.size)


tier_summary = _retrograde.tier_summary
SCRATCH_PER_POSITION: int = _retrograde.SCRATCH_PER_POSITION
#: tiers of this many positions or more are solved depth first, not swept (32-bit order)
SWEEP_LIMIT = 1 << 32
#: tiers smaller than this are solved depth first too (their records stay in cache)
SWEEP_MIN_POSITIONS: int = _retrograde.SWEEP_MIN_POSITIONS
RecordLimit = _scoresolve.RecordLimit
ScorePart = _scoresolve.ScorePart
#: record layouts (cext/sowsolve_kernel.h), read by solver/values.py
WINLOSS_LAYOUT = _retrograde.WINLOSS_LAYOUT
MARGIN_LAYOUT = _scoresolve.MARGIN_LAYOUT
TTSolver = _ttsolve.TTSolver
SearchLimit = _ttsolve.SearchLimit

