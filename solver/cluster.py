"""Solving on a Dask cluster: an executor for the tier manager (solver/tiers.py).

The driver (the `sowsolve solve` process) keeps everything it has in one process -- the order of
tiers, the window, the progress bar, resume, the SQLite table, which it alone writes -- and
sends each tier's work to the cluster as Dask tasks.  Bytes never travel through the scheduler:

- every tier a task reads lies in the shared directory as `.npy` files (the arrays of
  ValueKind.tier_arrays), memory-mapped by the workers and checked before a kernel sees them;
  the driver writes a lower tier there once (a resumed solve, the tiers it loads from the
  table), a tier solved on the cluster is written there by the task that finishes it;
- a tier a worker can cut into work units (SplitWorker.plan: by levels, where the kernel offers them) runs as
  rounds of independent units; each unit writes its records as one file, and the units of a
  later round read the files of the earlier rounds they did not solve themselves;
- a task's result is a count of positions (for the progress bar).

Each task is idempotent (its files are written whole under their final name, and a unit's
records depend only on the tiers below it), so Dask may run it again on another worker when a
worker is lost, and the table comes out the same.  docs/cluster.md has the data flow and its
limits.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .contract import Game
from .lower import LowerTiers
from .sharedfiles import (_npy_layout, _open_regular, check_whole, load_array,  # noqa: F401
                          new_mapped, save_array)
from .tiers import TierProgress, WorkUnit, tier_label

#: a solve's own directory in the shared one: <table file name>-<run id> + this
RUN_SUFFIX = ".sowsolve-cluster"
#: the file of a solve's directory naming the table it solves (stale directories of a table
#: whose driver was killed are recognised by it and removed by the table's next solve)
OWNER_FILE = "table"
#: the file whose presence tells the parts that the driver has ended the solve
STOP_FILE = "stop"
#: the order by level of the tier being solved, written by the driver, mapped by the parts
ORDER_FILE = "order.npy"
#: seconds between the driver's looks at a tier's progress
PROGRESS_SECONDS = 0.5
#: a score tier of this many positions or more is split across the parts (solver/splittier.py)
SCORE_SPLIT_FROM = 1 << 22
#: seconds between two saves of a part of a split score tier (what a lost worker can cost)
SAVE_SECONDS = 30.0


class ClusterError(RuntimeError):
    """The cluster failed a solve (a task's error, or workers lost too often)."""


# --- the shared directory ----------------------------------------------------------------------

def tier_file(run_dir: str, tier: int, name: str) -> str:
    return os.path.join(run_dir, f"tier-{tier}-{name}.npy")


def unit_file(run_dir: str, tier: int, plan: str, unit: WorkUnit) -> str:
    """The records of one unit of the plan `plan` (a token the driver draws for each tier)."""
    return os.path.join(run_dir, f"tier-{tier}-{plan}-unit-{unit.index}.npy")


def save_tier(run_dir: str, game: Game, tier: int, data) -> None:
    for name, array in game.value_kind.tier_arrays(data).items():
        save_array(tier_file(run_dir, tier, name), array)


def load_tier(run_dir: str, game: Game, tier: int):
    """A solved tier from the shared directory, checked (ValueError naming what is wrong)."""
    size = game.tier_size(tier)
    arrays = {}
    for name in game.value_kind.tier_array_names():
        path = tier_file(run_dir, tier, name)
        try:
            arrays[name] = load_array(path)
        except ValueError as exc:           # its sentence names the file
            raise ValueError(f"tier {tier} cannot be read from the shared directory: {exc}") from None
        except OSError as exc:
            raise ValueError(f"tier {tier} cannot be read from the shared directory: "
                             f"{exc.strerror or exc}: {path}") from None
    try:
        return game.value_kind.tier_from_arrays(arrays, size)
    except ValueError as exc:
        raise ValueError(f"tier {tier} in the shared directory {run_dir}: {exc}") from None


def version() -> str:
    from importlib import metadata
    try:
        return metadata.version("sowsolve")
    except metadata.PackageNotFoundError:
        return "unknown"


# --- what runs on a worker -------------------------------------------------------------------

@dataclass(frozen=True)
class Job:
    """What every task of one solve carries: the game by name and parameters (rebuilt on the
    worker), the solve's own directory (a new one for every run of the driver: no state of a
    run outlives it), the kernel threads of a task, and the driver's sowsolve version."""
    game: str
    parameters: tuple
    run_dir: str
    threads: int
    version: str
    lower_on_disk: bool = False


class _Quiet:
    def update(self, n: int) -> None:
        pass

    def set_description(self, desc: str) -> None:
        pass


class _Process:
    """A worker process's part of one solve: the game and its tier worker, the lower tiers it
    has mapped, and the unit state of the tiers it works on (SplitWorker's `state`)."""

    def __init__(self, job: Job):
        from .games import make_game
        if job.version != version():
            raise RuntimeError(f"this worker runs sowsolve {version()}, the driver "
                               f"{job.version}: install the same version everywhere")
        self.job = job
        self.game = make_game(job.game, **dict(job.parameters))
        self.worker = self.game.solver.worker(self.game, job.threads)
        self.lock = threading.Lock()
        self.tiers: dict[int, object] = {}
        self.states: dict[int, dict] = {}
        # the lower tiers a task reads, mapped from files without a name in the worker's local
        # directory (solver/lower.py): a worker's own memory is then the work on its tier or
        # block, the tiers below it page cache
        self.lower = LowerTiers(within=_local_directory()) if job.lower_on_disk else None

    def close(self) -> None:
        self.tiers.clear()
        self.states.clear()
        if self.lower is not None:
            self.lower.close()

    def window(self, deps: tuple[int, ...]) -> dict:
        with self.lock:
            for tier in [t for t in self.tiers if t not in deps]:
                del self.tiers[tier]
            for tier in deps:
                if tier not in self.tiers:
                    data = load_tier(self.job.run_dir, self.game, tier)
                    self.tiers[tier] = data if self.lower is None else \
                        self.lower.keep(self.game, tier, data)
            return {tier: self.tiers[tier] for tier in deps}

    def state(self, tier: int, plan: str) -> dict:
        with self.lock:
            for old in [key for key in self.states if key != (tier, plan)]:
                del self.states[old]     # one tier at a time: the manager walks them in order
            return self.states.setdefault((tier, plan), {})

    def earlier(self, tier: int, plan: str) -> Callable[[WorkUnit], np.ndarray]:
        return lambda unit: load_array(unit_file(self.job.run_dir, tier, plan, unit))


def _local_directory() -> str | None:
    """The Dask worker's local directory (its `--local-directory`), where this process runs in
    one; else None (the system's temporary files)."""
    try:
        from distributed import get_worker
        return get_worker().local_directory
    except (ImportError, ValueError):
        return None


def dask_setup(worker) -> None:
    """Dask's preload hook, run in a worker process as it starts (the local cluster of
    `solve --workers` names this module): the worker ignores SIGINT, so a Ctrl-C in the
    terminal, which reaches every process of the terminal's group, is the driver's alone --
    it stops the solve and closes the cluster, instead of workers dying mid-task with
    tracebacks of their own."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


_processes: dict[Job, _Process] = {}
_processes_lock = threading.Lock()


def _process(job: Job) -> _Process:
    with _processes_lock:
        found = _processes.get(job)
        if found is None:
            for old in _processes.values():     # a new solve: what the last one mapped goes
                old.close()
            _processes.clear()
            found = _processes[job] = _Process(job)
        return found


def forget(run_dir: str) -> None:
    """Drop what this worker process holds of the solve in `run_dir` (its end)."""
    with _processes_lock:
        for job in [j for j in _processes if j.run_dir == run_dir]:
            _processes.pop(job).close()


def solve_tier_task(job: Job, tier: int, deps: tuple[int, ...]) -> int:
    """A whole tier, by the game's tier worker; written to the shared directory."""
    here = _process(job)
    window = here.window(deps)
    data = here.worker(tier, window, TierProgress(_Quiet(), here.game))
    save_tier(job.run_dir, here.game, tier, data)
    return here.game.tier_size(tier)


def solve_block_task(job: Job, tier: int, deps: tuple[int, ...], folder: str, key: bytes,
                     bounds: list[tuple[int, int]], part: int, save_every: float) -> dict:
    """Block `part` of a score tier split across the parts (solver/splittier.py): its records
    and long entries written to `folder` for the driver; the exchange's figures returned.  A
    part run again (its worker lost) goes on from its saved state.  The task leaves the worker's
    thread pool (secede): it waits on the other parts, and one run again must start beside
    them."""
    from distributed import secede
    from .splittier import FileExchange, Saved, save_block, solve_block
    secede()
    here = _process(job)
    window = here.window(deps)
    lo, hi = bounds[part]

    def waiting() -> None:
        if _called_off(job.run_dir):
            raise RuntimeError(f"tier {tier}: the solve was called off")

    exchange = FileExchange(folder, part, len(bounds), key, waiting)
    block = here.worker.part(tier, window, lo, hi, job.threads)
    records, long, _finals, _endless = solve_block(block, exchange, bounds,
                                                   Saved(folder, part, key, save_every))
    save_block(folder, key, part, (lo, hi, block.n), records, long)
    return {"positions": hi - lo, **exchange.figures.as_dict()}


def owners(plan: list[WorkUnit], parts: int) -> list[int]:
    """Which part solves each unit: unit k of a round of several goes to part k; a round of
    one unit (a run of small levels) to the parts in turn."""
    sizes: dict[int, int] = {}
    for unit in plan:
        sizes[unit.round] = sizes.get(unit.round, 0) + 1
    owner, turn, first = [], 0, {}
    for unit in plan:
        first.setdefault(unit.round, unit.index)
        if sizes[unit.round] == 1:
            owner.append(turn % parts)
            turn += 1
        else:
            owner.append((unit.index - first[unit.round]) % parts)
    return owner


def solve_part_task(job: Job, tier: int, deps: tuple[int, ...], plan_token: str,
                    plan: list[WorkUnit], owner: list[int], part: int, parts: int) -> int:
    """Part `part` of a tier cut into units: its own units, in order; before each, the units of
    the rounds before it that other parts solve, each awaited until its file is there (files
    are written whole under their final name).  A unit whose file exists already (this part
    ran before, on a worker since lost) is not solved again.  The task leaves the worker's
    thread pool (secede) for its whole life: it waits on others, and a part that Dask runs
    again after losing a worker must be able to start beside it."""
    from distributed import Event, secede
    secede()
    here = _process(job)
    window = here.window(deps)
    state, earlier = here.state(tier, plan_token), here.earlier(tier, plan_token)
    abort = Event(f"sowsolve-{plan_token}-abort")
    round_start: dict[int, int] = {}
    for unit in plan:
        round_start.setdefault(unit.round, unit.index)
    awaited = 0                             # units before this index are written (or ours)
    solved = 0
    for unit in plan:
        if owner[unit.index] != part:
            continue
        for other in plan[awaited:round_start[unit.round]]:
            if owner[other.index] != part:
                _await(unit_file(job.run_dir, tier, plan_token, other), abort, tier)
        awaited = max(awaited, round_start[unit.round])
        path = unit_file(job.run_dir, tier, plan_token, unit)
        if _called_off(job.run_dir):
            raise RuntimeError(f"tier {tier}: the solve was called off")
        if not os.path.exists(path):
            save_array(path, here.worker.solve_unit(tier, unit, window, state, earlier))
            solved += unit.positions
    return solved


def _wait_until(ready: Callable[[], bool], abort, tier: int, longest: float) -> None:
    """Until `ready()`, or the driver calls the solve off: looks every 0.05 ms at first,
    backing off to every `longest` seconds (a unit takes milliseconds to minutes); the
    scheduler is asked about the call-off every 2 s."""
    pause, waited, asked = 5e-5, 0.0, 0.0
    while not ready():
        time.sleep(pause)
        waited += pause
        pause = min(pause * 1.5, longest)
        if waited - asked >= 2.0:
            asked = waited
            if abort.is_set():
                raise RuntimeError(f"tier {tier}: the solve was called off")


def _await(path: str, abort, tier: int) -> None:
    """Until `path` (another part's unit) exists (a file system call each look: at most
    every 5 ms)."""
    _wait_until(lambda: os.path.exists(path), abort, tier, 0.005)


def _called_off(run_dir: str) -> bool:
    """Whether the driver has ended the solve: it writes the stop file first, then removes the
    directory (a part checks between units, without asking the scheduler)."""
    return (os.path.exists(os.path.join(run_dir, STOP_FILE))
            or not os.path.exists(os.path.join(run_dir, OWNER_FILE)))


def done_file(run_dir: str, tier: int, plan: str) -> str:
    """The count of units each part has finished, shared by the parts of one machine."""
    return os.path.join(run_dir, f"tier-{tier}-{plan}-done.npy")


def _shared(path: str, dtype, shape: tuple) -> np.ndarray:
    """A file of the shared directory mapped for reading and writing by every process of this
    machine (MAP_SHARED), checked for type and size first (see above)."""
    with _open_regular(path, write=True) as f:
        found_shape, found_dtype, offset = _npy_layout(f, path)
        if found_dtype != dtype or found_shape != shape:
            raise ValueError(f"{path} does not hold {shape} of {np.dtype(dtype).name}")
        return np.memmap(f, dtype=dtype, mode="r+", offset=offset, shape=shape)


def _shared_whole(path: str, array: np.ndarray) -> None:
    """check_whole for a file mapped by `_shared`."""
    check_whole(path, array.offset + array.nbytes)


def solve_shared_part_task(job: Job, tier: int, deps: tuple[int, ...], plan_token: str,
                           plan: list[WorkUnit], owner: list[int], part: int, parts: int) -> int:
    """Part `part` of a tier cut into units, where every part runs on this machine: the tier's
    records are one file that every part maps and solves into in place, and `done` counts each
    part's finished units (stored after the unit's records, so a part that sees a count sees
    the records).  Before each unit, the part waits until the other parts have finished their
    units of the rounds before it.  A part that Dask runs again goes on after its count."""
    from distributed import Event, secede
    secede()
    here = _process(job)
    window = here.window(deps)
    size = here.game.tier_size(tier)
    paths = (tier_file(job.run_dir, tier, "records"), done_file(job.run_dir, tier, plan_token))
    records = _shared(paths[0], np.uint16, (size,))
    done = _shared(paths[1], np.int64, (parts,))
    state = here.state(tier, plan_token)
    state.setdefault("records", records)
    if "order" not in state or "first" not in state:    # the driver's sort (checked by the worker)
        order = load_array(os.path.join(job.run_dir, ORDER_FILE), first=size)
        if order.dtype != np.uint32:
            raise ValueError(f"the order of tier {tier} in {job.run_dir} does not fit it")
        first = load_array(os.path.join(job.run_dir, f"tier-{tier}-first.npy"))
        state["order"], state["first"] = order, first    # both or neither: a failed read keeps none
    abort = Event(f"sowsolve-{plan_token}-abort")
    # need[u][q]: how many of part q's units come before the round of unit u
    round_start: dict[int, int] = {}
    for unit in plan:
        round_start.setdefault(unit.round, unit.index)
    owned_before = np.zeros((len(plan) + 1, parts), dtype=np.int64)
    for unit in plan:
        owned_before[unit.index + 1] = owned_before[unit.index]
        owned_before[unit.index + 1, owner[unit.index]] += 1
    mine = [unit for unit in plan if owner[unit.index] == part]
    solved = 0
    for count, unit in enumerate(mine):
        if count < done[part]:
            continue                    # finished by this part's run before
        need = owned_before[round_start[unit.round]]
        _await_counts(done, need, part, abort, tier)
        if _called_off(job.run_dir):
            raise RuntimeError(f"tier {tier}: the solve was called off")
        for path, mapped in zip(paths, (state["records"], done)):
            _shared_whole(path, mapped)
        here.worker.solve_unit(tier, unit, window, state, None)
        done[part] = count + 1
        solved += unit.positions
    return solved


def _await_counts(done: np.ndarray, need: np.ndarray, part: int, abort, tier: int) -> None:
    """Until every other part's count reaches `need` (shared memory: a look costs nothing, so
    at most every millisecond)."""
    others = [q for q in range(len(need)) if q != part]
    _wait_until(lambda: all(done[q] >= need[q] for q in others), abort, tier, 0.001)


def assemble_task(job: Job, tier: int, deps: tuple[int, ...], plan_token: str,
                  units: list[WorkUnit], *after) -> int:
    """The tier's records from all its units, written as the tier (the driver removes the unit
    files once it has read it: this task may run again)."""
    here = _process(job)
    window = here.window(deps)
    records = here.worker.assemble(tier, units, window, here.state(tier, plan_token),
                                   here.earlier(tier, plan_token))
    save_tier(job.run_dir, here.game, tier, records)
    return 0


# --- the driver's side -----------------------------------------------------------------------

class DaskExecutor:
    """Runs each tier's work on a Dask cluster (`client`), with the tiers in a directory of its
    own inside `shared_dir`, which every worker must see under the same path.

    `parts`: tasks a round of units is cut into (default: the cluster's task slots, one per
    worker thread, counted when the solve starts); `threads`: kernel threads per task.
    `one_machine`: whether every worker runs on this machine, so that the parts of a tier can
    solve into one memory-mapped file in place (None: asked of the workers when the solve
    starts); otherwise each unit's records go through a file of their own.  `split_from` and
    `split_min` pass to the worker's plan (tests cut small tiers too); a score tier of
    `split_from` positions or more (SCORE_SPLIT_FROM when left out) is split into `parts`
    blocks, each part saving its state at most every `save_every` seconds.  `lower_on_disk`:
    the workers keep the tiers below the one they solve in files without a name in their local
    directory, mapped (solver/lower.py), not in their memory.  Use it as a context
    manager: its directory is made on entry (and stale ones of the same table, left by a killed
    driver, removed) and removed on exit."""

    def __init__(self, client, shared_dir: str, table_path: str, threads: int = 1,
                 parts: int | None = None, split_from: int | None = None,
                 split_min: int | None = None, one_machine: bool | None = None,
                 save_every: float = SAVE_SECONDS, lower_on_disk: bool = True):
        self.one_machine = one_machine
        self.lower_on_disk = lower_on_disk
        self.save_every = save_every
        self.client = client
        self.shared_dir = os.path.abspath(shared_dir)
        self.table = os.path.abspath(table_path)
        self.run_dir = os.path.join(self.shared_dir, f"{os.path.basename(self.table)}-"
                                                     f"{uuid.uuid4().hex[:12]}{RUN_SUFFIX}")
        self.threads = threads
        self.parts = parts
        self.split = {"split_from": split_from, "split_min": split_min}
        self.written: set[int] = set()
        self._order: np.ndarray | None = None
        self.tasks = self.rounds = self.split_tiers = 0    # figures of the solve, for its report
        self.block_figures: list[dict] = []     # per part of each split score tier

    def __enter__(self) -> "DaskExecutor":
        self._remove_stale()
        os.makedirs(self.run_dir)
        with open(os.path.join(self.run_dir, OWNER_FILE), "w") as f:
            f.write(self.table)
        if self.parts is None:
            self.parts = self.slots()
        if self.one_machine is None:
            here = socket.gethostname()
            self.one_machine = all(name == here for name in
                                   self.client.run(socket.gethostname).values())
        return self

    def _call_off(self) -> None:
        try:
            with open(os.path.join(self.run_dir, STOP_FILE), "w"):
                pass
        except OSError:
            pass

    def __exit__(self, *exc) -> None:
        self._call_off()
        try:
            self.client.run(forget, self.run_dir)
        except Exception:  # noqa: BLE001 - a cluster already gone holds nothing either
            pass
        self._order = None
        shutil.rmtree(self.run_dir, ignore_errors=True)

    def _remove_stale(self) -> None:
        """Directories of earlier solves of this table (a driver killed before its exit): the
        table's write lock, which the caller holds, says no solve of it runs now."""
        prefix = os.path.basename(self.table) + "-"
        for name in os.listdir(self.shared_dir):
            if name.startswith(prefix) and name.endswith(RUN_SUFFIX):
                path = os.path.join(self.shared_dir, name)
                try:
                    with open(os.path.join(path, OWNER_FILE)) as f:
                        owner = f.read()
                except OSError:
                    continue
                if owner == self.table:
                    shutil.rmtree(path, ignore_errors=True)

    def slots(self) -> int:
        """Tasks the cluster runs at once: one per worker thread."""
        return max(1, sum(self.client.nthreads().values()))

    def job(self, game: Game) -> Job:
        return Job(game.name, tuple(sorted(game.parameters().items())), self.run_dir,
                   self.threads, version(), self.lower_on_disk)

    def release(self, tier: int) -> None:
        self.written.discard(tier)
        for name in ("records", "long"):      # whatever the game's value kind stores
            try:
                os.unlink(tier_file(self.run_dir, tier, name))
            except FileNotFoundError:
                pass

    def run(self, worker, tier: int, window: dict, calls: TierProgress):
        game = worker.game
        token = uuid.uuid4().hex[:12]
        plan = None
        try:
            for dep, data in window.items():
                if dep not in self.written:
                    save_tier(self.run_dir, game, dep, data)
                    self.written.add(dep)
            job, deps = self.job(game), tuple(sorted(window))
            if self.splits(worker, tier):
                data = self._solve_blocks(worker, job, tier, deps, token, calls)
                self.written.add(tier)
                return data
            shared = self.in_place(game)
            plan = (worker.plan(tier, self.parts, **self.split,
                                order=self._order_buffer(game) if shared else None)
                    if hasattr(worker, "plan") else None)
            if plan:
                for name, array in worker.shared_arrays(tier).items():
                    save_array(os.path.join(self.run_dir, f"tier-{tier}-{name}.npy"), array)
            tasks = self._submit(job, tier, deps, plan, token,
                                 game.tier_size(tier) if shared else None)
            self._wait(tasks, calls, worker.passes if not plan else 1, tier, plan, token)
            data = load_tier(self.run_dir, game, tier)
        except RuntimeError:
            raise                       # the kernels' and solvers' own errors, as in one process
        except Exception as exc:        # noqa: BLE001 - anything else a cluster can raise
            if isinstance(exc, OSError) and exc.strerror:
                detail = exc.strerror[:300]         # a sentence naming the file (save_array)
            else:
                text = str(exc).splitlines()[0][:400] if str(exc) else ""
                detail = f"{type(exc).__name__}{': ' + text if text else ''}"
            raise ClusterError(f"solving {tier_label(game, tier)} on the cluster failed: "
                               f"{detail}") from None
        for path in [unit_file(self.run_dir, tier, token, unit) for unit in plan or ()] + [
                done_file(self.run_dir, tier, token),
                os.path.join(self.run_dir, f"tier-{tier}-first.npy")]:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        self.written.add(tier)
        return data

    def exchange_figures(self) -> dict:
        """What the split score tiers' exchange cost, for the solve's report: rounds (each
        tier's, summed), bytes written by the parts, seconds the parts waited for one another
        (summed over parts), the parts' saves; and the same per tier, with its positions and
        the seconds of its slowest part."""
        figures = self.block_figures
        by_tier: dict[int, dict] = {}
        for f in figures:
            entry = by_tier.setdefault(f["tier"], {"tier": f["tier"], "positions": 0, "rounds": 0,
                                                   "bytes": 0, "wait_seconds": 0.0,
                                                   "part_seconds": 0.0, "saves": 0})
            entry["positions"] += f["positions"]
            entry["rounds"] = max(entry["rounds"], f["rounds"])
            entry["bytes"] += f["bytes_out"]
            entry["wait_seconds"] = round(entry["wait_seconds"] + f["wait_seconds"], 3)
            entry["part_seconds"] = round(max(entry["part_seconds"], f["solve_seconds"]), 3)
            entry["saves"] += f["saves"]
        tiers = list(by_tier.values())
        return {"tiers": len(tiers), "rounds": sum(t["rounds"] for t in tiers),
                "bytes": sum(t["bytes"] for t in tiers),
                "wait_seconds": round(sum(t["wait_seconds"] for t in tiers), 3),
                "saves": sum(t["saves"] for t in tiers), "by_tier": tiers}

    def splits(self, worker, tier: int) -> bool:
        """Whether the tier is split into blocks across the parts: a score tier (its worker
        makes blocks) of SCORE_SPLIT_FROM positions or more, on more than one part."""
        least = SCORE_SPLIT_FROM if self.split["split_from"] is None else self.split["split_from"]
        return (hasattr(worker, "part") and (self.parts or 1) > 1
                and worker.game.tier_size(tier) >= least)

    def _solve_blocks(self, worker, job: Job, tier: int, deps: tuple, token: str,
                      calls: TierProgress):
        """A score tier split into blocks, one long task per part (solver/splittier.py), which
        trade offers through files of a folder of their own; the driver joins the blocks and
        writes the tier to the shared directory as a whole tier's task would."""
        from .splittier import blocks, load_block
        game = worker.game
        size = game.tier_size(tier)
        bounds = blocks(size, self.parts)
        folder = os.path.join(self.run_dir, f"tier-{tier}-{token}-split")
        os.mkdir(folder, 0o700)
        # the tier's key: handed to the parts with their tasks (through the scheduler), never
        # written to the shared directory, so a file planted in the folder fails its check
        key = os.urandom(32)
        try:
            tasks = [self.client.submit(solve_block_task, job, tier, deps, folder, key, bounds,
                                        part, self.save_every, pure=False,
                                        key=f"sowsolve-tier-{tier}-{token}-block-{part}")
                     for part in range(self.parts)]
            self.tasks += len(tasks)
            self.split_tiers += 1
            for figures in self._wait(tasks, calls, worker.passes, tier, None, token):
                self.block_figures.append({"tier": tier, **figures})
            joined = [load_block(folder, key, part, (lo, hi, size))
                      for part, (lo, hi) in enumerate(bounds)]
            arrays = {"records": np.concatenate([records for records, _ in joined]),
                      "long": np.sort(np.concatenate([long for _, long in joined]))}
            arrays = {name: arrays[name] for name in game.value_kind.tier_array_names()}
            try:
                data = game.value_kind.tier_from_arrays(arrays, size)
            except ValueError as exc:
                raise ValueError(f"the blocks of tier {tier} in {folder}: {exc}") from None
            save_tier(self.run_dir, game, tier, data)
            return data
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _submit(self, job: Job, tier: int, deps: tuple, plan: list[WorkUnit] | None,
                token: str, in_place: int | None) -> list:
        """The tier's tasks: one for a whole tier; else one long task per part (and, through
        files, the task that assembles the tier after them)."""
        submit = self.client.submit
        if not plan:
            self.tasks += 1
            return [submit(solve_tier_task, job, tier, deps, pure=False,
                           key=f"sowsolve-tier-{tier}-{token}")]
        owner = owners(plan, self.parts)
        shared = in_place is not None       # the tier's size, where its parts solve in place
        if shared:      # the tier's records, zeros, and each part's count of units done
            new_mapped(tier_file(self.run_dir, tier, "records"), np.uint16, (in_place,))
            new_mapped(done_file(self.run_dir, tier, token), np.int64, (self.parts,))
        task = solve_shared_part_task if shared else solve_part_task
        # no placement asked for: submitted together, the parts go to the idle task slots one
        # each, and a part whose worker is lost runs again on any worker, one that joins later
        # too (a task placed on a worker, even allowed elsewhere, waits for that worker for good)
        parts = [submit(task, job, tier, deps, token, plan, owner, part, self.parts, pure=False,
                        key=f"sowsolve-tier-{tier}-{token}-part-{part}")
                 for part in range(self.parts)]
        if not shared:
            parts.append(submit(assemble_task, job, tier, deps, token, plan, *parts, pure=False,
                                key=f"sowsolve-tier-{tier}-{token}-whole"))
        self.tasks += len(parts)
        self.rounds += plan[-1].round + 1
        self.split_tiers += 1
        return parts

    def _order_buffer(self, game: Game) -> np.ndarray:
        """The file the plan writes a tier's order by level into, for the parts to map: one for
        the whole solve, as large as the game's largest tier (written over tier after tier, so
        its pages are not made afresh for each)."""
        if self._order is None:
            largest = max(game.tier_size(t) for t in game.tiers())
            self._order = new_mapped(os.path.join(self.run_dir, ORDER_FILE), np.uint32, (largest,))
        return self._order

    def in_place(self, game: Game) -> bool:
        """Whether the parts of a tier solve into one shared file: every worker on this machine,
        and tiers that are records alone (a win/loss tier)."""
        return bool(self.one_machine) and game.value_kind.tier_array_names() == ("records",)


    def _wait(self, tasks: list, calls: TierProgress, weight: int, tier: int, plan,
              token: str) -> list[dict]:
        """Until every task ended, feeding the bar (from the unit files written so far, for a
        tier in units); a task's error (or Ctrl-C) calls the others off.  The figures the
        blocks of a split tier return."""
        from distributed import Event, wait
        sizes = {os.path.basename(unit_file(self.run_dir, tier, token, u)): u.positions
                 for u in plan or ()}
        counts = done_file(self.run_dir, tier, token)
        if plan and os.path.exists(counts):     # in place: each part's count of units done
            owner = owners(plan, self.parts)
            mine = [[u.positions for u in plan if owner[u.index] == q] for q in range(self.parts)]
            prefix = [np.concatenate([[0], np.cumsum(m)]) for m in mine]
        pending, done, results = list(tasks), 0, []
        try:
            while pending:
                try:
                    finished = wait(pending, timeout=PROGRESS_SECONDS, return_when="FIRST_COMPLETED")
                    ended = finished.done
                except (TimeoutError, asyncio.TimeoutError):
                    ended = set()
                for future in ended:
                    pending.remove(future)
                    count = future.result()
                    if isinstance(count, dict):     # a block of a split tier: its figures
                        results.append(count)
                        count = count["positions"]
                    done += count if not plan else 0
                if plan and os.path.exists(counts):
                    finished_units = load_array(counts)
                    done = sum(int(prefix[q][min(int(finished_units[q]), len(mine[q]))])
                               for q in range(self.parts))
                elif plan:
                    done = sum(sizes.get(name, 0) for name in os.listdir(self.run_dir))
                calls.observer(done * weight)
        except BaseException:
            self._call_off()
            if plan:
                try:
                    Event(f"sowsolve-{token}-abort", client=self.client).set()
                except Exception:  # noqa: BLE001 - the owner file says it too
                    pass
            self.client.cancel(pending)
            raise
        return results
