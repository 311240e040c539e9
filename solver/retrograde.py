"""Retrograde analysis of acyclic win/loss tiers: the tier worker around cext/retrograde.pyx.

The kernel solves a whole tier in one call (never a Python call per position), reading the
children of each position through the game's kernel capsule (`expand`) and the records of the
lower tiers in the window; it runs in the kernel thread of solver/kernels.py, so Ctrl-C stops it
at once and the progress bar follows the positions it stores.  The tier manager
(solver/tiers.py) does the rest: order, window, store, resume.

For an executor that spreads a tier over several processes (solver/cluster.py), the worker also
cuts a tier into work units by level (`plan`, `plan_units`) and solves one unit at a time
(`solve_unit`), with the same kernel (`solve_groups`).
"""
from __future__ import annotations

import threading
from typing import Callable, Iterable

import numpy as np

from .contract import Game
from .kernels import (SCRATCH_PER_POSITION, SWEEP_LIMIT, SWEEP_MIN_POSITIONS, level_bounds, records_array,
                      scratch_for, solve_groups, solve_range, verify_range)
from .tiers import TierProgress, WorkUnit, default_threads

#: levels of at least this many positions are split between the parts of a round; runs of
#: smaller levels are grouped, in order, into units of at least this many, each solved by one
#: part while the others wait (docs/cluster.md).  Measured on a 2x6 board of 2 stones a pit on 2 workers
#: exchanging units through files: 2^12 took 77 s where 2^16 took 89 s (fewer parts idle, for
#: more rounds, which cost little once parts wait on each other without the scheduler)
SPLIT_MIN = 1 << 12


def plan_units(first: np.ndarray, parts: int, split_min: int = SPLIT_MIN) -> list[WorkUnit]:
    """The work units of a tier sorted by level (`first`: where each level starts, from
    level_bounds), in rounds: a level of `split_min` positions or more is one round of `parts`
    units, its positions cut evenly; a run of smaller levels is one round of one unit.  A
    unit's spec is (start, stop, first level, last level + 1, parts, split_min): its slice of
    the sorted order and its levels."""
    units: list[WorkUnit] = []
    levels = len(first) - 1
    group_lo = None

    def add(start: int, stop: int, lo: int, hi: int, round_: int) -> None:
        units.append(WorkUnit(len(units), round_, stop - start,
                              (start, stop, lo, hi, parts, split_min)))

    rounds = 0
    for level in range(levels):
        lo, hi = int(first[level]), int(first[level + 1])
        if hi == lo:
            continue
        if hi - lo >= split_min:
            if group_lo is not None:
                add(int(first[group_lo]), lo, group_lo, level, rounds)
                rounds, group_lo = rounds + 1, None
            for part in range(parts):
                add(lo + (hi - lo) * part // parts, lo + (hi - lo) * (part + 1) // parts,
                    level, level + 1, rounds)
            rounds += 1
            continue
        if group_lo is None:
            group_lo = level
        if hi - int(first[group_lo]) >= split_min:
            add(int(first[group_lo]), hi, group_lo, level + 1, rounds)
            rounds, group_lo = rounds + 1, None
    if group_lo is not None:
        add(int(first[group_lo]), int(first[levels]), group_lo, levels, rounds)
    return units


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
        #: a game whose tiers have no levels (every child in a lower tier) is never swept
        self.sweeps = getattr(game, "tier_levels", True)
        swept = [n for n in sizes if SWEEP_MIN_POSITIONS <= n < SWEEP_LIMIT and self.sweeps]
        self.largest = max(swept, default=0)
        self.scratch: np.ndarray | None = None

    def __call__(self, tier: int, window: dict[int, np.ndarray], calls: TierProgress) -> np.ndarray:
        size = self.game.tier_size(tier)
        if (SWEEP_MIN_POSITIONS <= size < SWEEP_LIMIT and self.sweeps
                and (self.scratch is None or self.scratch.size < size * SCRATCH_PER_POSITION)):
            self.scratch = None          # the old one goes before the new one comes
            self.scratch = scratch_for(max(size, self.largest))
        records = records_array(size)
        solve_range(self.capsule, tier, 0, size, self.arrays(window, tier, records), self.threads,
                    self.scratch)
        return records


    # --- work units, for executors that spread a tier (solver/cluster.py) -------------------
    def plan(self, tier: int, parts: int, split_from: int | None = None,
             split_min: int | None = None, order: np.ndarray | None = None
             ) -> list[WorkUnit] | None:
        """The tier's work units for `parts` tasks at once (plan_units), or None where the tier
        is better solved in one piece: a game without levels, one part, or a tier under
        `split_from` positions (SWEEP_MIN_POSITIONS: in one process, those are walked).  With
        `order` (a uint32 array of at least the tier's size, which parts on one machine map),
        the tier's indices sorted by level are written into it, so that the parts need not
        each sort the tier again; shared_arrays then gives where each level starts."""
        size = self.game.tier_size(tier)
        low = SWEEP_MIN_POSITIONS if split_from is None else split_from
        self._shared = None
        if parts < 2 or not low <= size < SWEEP_LIMIT:
            return None
        bounds = level_bounds(self.capsule, tier, size, self.threads,
                              with_order=order is not None, out=order)
        if bounds is None:
            return None
        if order is not None:
            self._shared = (tier, {"first": bounds[1]})
        return plan_units(bounds[1], parts, SPLIT_MIN if split_min is None else split_min)

    def shared_arrays(self, tier: int) -> dict[str, np.ndarray]:
        """What the last plan(order=...) of `tier` kept for the parts to share (then dropped
        here): where each level starts in the order."""
        kept, self._shared = getattr(self, "_shared", None), None
        return kept[1] if kept is not None and kept[0] == tier else {}

    def _unit_state(self, tier: int, spec: tuple, state: dict) -> dict:
        """The tier's order by level, its records so far (`records`, where the caller put the
        tier's array shared by every part already; else its own) and its plan, made once per
        process."""
        if "units" not in state:
            size = self.game.tier_size(tier)
            if "order" not in state:        # else the parts share the driver's (shared_arrays)
                state["order"], state["first"] = level_bounds(self.capsule, tier, size,
                                                              self.threads)
            order, first = state["order"], state["first"]
            if (order.dtype != np.uint32 or order.shape != (size,) or first.dtype != np.int64
                    or first.ndim != 1 or first.size < 2 or first[0] != 0 or first[-1] != size
                    or bool(np.any(np.diff(first) < 0))):
                raise ValueError(f"the order by level of tier {tier} does not fit the tier")
            units = plan_units(first, *spec[4:6])
            round_start: dict[int, int] = {}
            for u in units:
                round_start.setdefault(u.round, u.index)
            if "records" not in state:
                state["records"] = np.zeros(size, dtype=np.uint16)
            state.update(units=units, round_start=round_start, have=set(), upto=0)
        return state

    def _apply(self, state: dict, stop: int, earlier: Callable[[WorkUnit], np.ndarray]) -> None:
        """The records of units 0..stop-1 put in place where this process did not solve them
        (their files, from wherever they ran); `upto` remembers how far that is done."""
        units, have = state["units"], state["have"]
        for unit in units[state["upto"]:stop]:
            if unit.index in have:
                continue
            start, end = unit.spec[:2]
            records = earlier(unit)
            if records.dtype != np.uint16 or records.shape != (end - start,):
                raise ValueError(f"unit {unit.index} came back with {records.size} records; it "
                                 f"has {end - start} positions")
            state["records"][state["order"][start:end]] = records
            have.add(unit.index)
        state["upto"] = max(state["upto"], stop)

    def solve_unit(self, tier: int, unit: WorkUnit, window: dict[int, np.ndarray], state: dict,
                   earlier: Callable[[WorkUnit], np.ndarray] | None) -> np.ndarray | None:
        """Solve one unit of plan_units: the records of the rounds before it put in place (once
        per process), then its levels, in order; its records come back in its slice's order.
        With no `earlier`, the state's records are the tier's array that every part writes in
        place (one machine's shared memory): nothing is put in place, nothing comes back."""
        with state.setdefault("lock", threading.Lock()):    # a process may run several units
            state = self._unit_state(tier, unit.spec, state)
            units = state["units"]
            if unit.index >= len(units) or units[unit.index] != unit:
                raise ValueError(f"unit {unit.index} of tier {tier} is not this process's plan")
            if earlier is not None:
                self._apply(state, state["round_start"][unit.round], earlier)
        start, stop, lo, hi = unit.spec[:4]
        members = state["order"][start:stop]
        bounds = np.clip(state["first"][lo:hi + 1], start, stop) - start
        bounds[0], bounds[-1] = 0, stop - start
        solve_groups(self.capsule, tier, self.arrays(window, tier, state["records"]), members,
                     bounds.astype(np.int64), self.threads)
        state["have"].add(unit.index)
        return None if earlier is None else state["records"][members]

    def assemble(self, tier: int, units: list[WorkUnit], window: dict[int, np.ndarray],
                 state: dict, earlier: Callable[[WorkUnit], np.ndarray]) -> np.ndarray:
        """The whole tier's records from all its units."""
        with state.setdefault("lock", threading.Lock()):
            state = self._unit_state(tier, units[0].spec, state)
            if state["units"] != units:
                raise ValueError(f"the units of tier {tier} are not this process's plan")
            self._apply(state, len(units), earlier)
        return state["records"]


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
