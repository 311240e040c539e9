"""The solvers, as objects, registered in one place.

A solver declares what it needs of a game -- the hooks of the Game contract it calls, the kind
of value it computes, how its tables index positions -- and `require` checks a game against that
before anything runs, naming what is missing in one sentence.  Everything that differs between
solvers lives on the solver: solving, the estimate before a solve, the self-check of a game, the
verification of a table, answering positions a table does not hold, and whether an interrupted
solve resumes.  Nothing outside this module (and the workers it calls) asks which solver a game
has; games never import a solver: the registry of games (solver/games/__init__.py) pairs them.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import estimate as estimates
from . import selfcheck
from .contract import Compiled, DenseIndex, Game, KeyedIndex, ScoreTiers
from .errors import BadParameters
from .kernels import verify_keys
from .retrograde import RetrogradeVerifier, RetrogradeWorker
from .score import ScoreTierWorker
from .search import DEFAULT_MAX_POSITIONS, search, solve_by_search
from .tiers import (IN_PROCESS, Executor, Progress, SolveReport, TierManager, TierStore,
                    default_threads, no_progress, solve_tiers_with)
from .values import MARGIN, WIN_LOSS, ValueKind


class MissingHooks(BadParameters):
    """A game that lacks a hook its solver needs (a usage error: it cannot be solved so)."""


@dataclass(frozen=True)
class Indexing:
    """How a table finds a position's record: `dense` (a perfect index per tier, every tier
    known before the solve) or `keys` (canonical packed positions, sorted, only those a search
    reached).  The name is what a table's metadata stores; tables/layout.py holds what each
    indexing means for a table file."""
    name: str
    #: the capability of the Game contract this indexing reads positions through
    needs: tuple[type, ...]
    #: whether a stopped solve keeps its finished tiers and resumes after them
    resumable: bool


DENSE = Indexing("dense", (DenseIndex,), resumable=True)
KEYS = Indexing("keys", (KeyedIndex,), resumable=False)
INDEXINGS = {indexing.name: indexing for indexing in (DENSE, KEYS)}

class Solver:
    """What every solver is; subclasses fill solve, estimate and the checks."""
    name: str
    indexing: Indexing
    value_kind: ValueKind
    #: capabilities of the Game contract this solver calls (beyond its indexing's)
    needs: tuple[type, ...] = (Compiled,)
    #: what the game's kernel object must offer (checked when the kernel is first used: a
    #: kernel is built only by a solve or a check, never by a game being named)
    kernel_needs: tuple[str, ...] = ("capsule",)
    #: the self-check of a game: functions of solver/selfcheck.py, run in order
    checks: tuple[Callable, ...] = ()
    #: whether `sowsolve prove` can prove positions of its games (solver/proof.py: a df-pn
    #: search over the kernel's packed positions, win/loss without draws)
    proves = False
    #: whether its solve can run on a cluster (its work goes through the tier manager's executor)
    spreads = False
    #: whether its solve can keep the tiers it reads on disk (`lower`), out of memory
    out_of_core = False

    @property
    def resumable(self) -> bool:
        return self.indexing.resumable

    def require(self, game: Game) -> Game:
        """The game, if it offers everything this solver needs; MissingHooks naming what not."""
        missing = [need for need in (*self.needs, *self.indexing.needs) if not isinstance(game, need)]
        if missing:
            what = ", ".join(f"{need.purpose} ({need.__name__})" for need in missing)
            raise MissingHooks(f"{game.describe()} cannot be solved by the {self.name} solver: "
                               f"the game does not offer {what}")
        if game.value_kind is not self.value_kind:
            raise MissingHooks(f"{game.describe()} cannot be solved by the {self.name} solver: "
                               f"it computes {self.value_kind.name} values, the game has "
                               f"{game.value_kind.name} values")
        return game

    def require_kernel(self, game: Game) -> Game:
        """The game, if its kernel offers what this solver calls; MissingHooks naming what not."""
        if not self.kernel_needs:
            return game
        kernel = game.kernel()
        missing = [name for name in self.kernel_needs if not hasattr(kernel, name)]
        if missing:
            raise MissingHooks(f"{game.describe()} cannot be solved by the {self.name} solver: "
                               f"its kernel offers no {', '.join(missing)}")
        return game

    def prepare(self, game: Game) -> None:
        """Checks before a solve writes anything (a board the kernel cannot handle fails here)."""
        self.require_kernel(game)

    def solve(self, game: Game, store: TierStore, threads: int | None = None,
              progress: Progress = no_progress, max_positions: int = DEFAULT_MAX_POSITIONS,
              executor: Executor = IN_PROCESS, lower=None) -> SolveReport:
        """Solve into `store`; `lower` (solver/lower.py), for tiered solvers: the window's
        tiers kept in files mapped from disk rather than in memory."""
        raise NotImplementedError

    def estimate(self, game: Game, threads: int, max_positions: int,
                 solved: set[int] | frozenset[int], order: list[int] | None = None,
                 out_of_core: bool = False) -> estimates.Estimate:
        """The cost of a solve (of the tiers of `order`, an endgame table's, where given);
        `out_of_core`: with the lower tiers on disk (tiered solvers)."""
        raise NotImplementedError

    def self_check(self, game: Game, samples: int = 1000, seed: int = 0) -> dict:
        """`sowsolve check GAME`: this solver's view of the game against the reference rules."""
        self.require_kernel(game)
        report = selfcheck.Report(game)
        for check in (*self.checks, selfcheck.check_picture):
            check(game, samples, random.Random(seed), report)
        return report.result()

    def verify(self, table, load: Callable[[int], np.ndarray], full: bool, samples: int,
               seed: int, fail: Callable[[str], None]) -> int:
        """`sowsolve check --table`: stored values against their children's (every position with
        `full`, else `samples` per tier, through the Python rules); `load` reads a tier (its
        checksums and summary checked once).  Returns the positions checked."""
        return selfcheck.sampled_values(table, load, samples, seed, fail, tiered=True)

    def answer(self, game: Game, position, max_positions: int, progress: Progress):
        """A record function for positions a table does not hold, or None where this solver
        answers none (the table's NotInTable stands)."""
        return None


class TierSolver(Solver):
    """Solvers whose tiers are walked by the tier manager with one worker per tier."""
    spreads = True

    #: the window's tiers may be kept on disk (solver/lower.py)
    out_of_core = True

    def estimate(self, game, threads, max_positions, solved, order=None, out_of_core=False):
        return self.estimator(game, threads, solved, order, out_of_core)

    def worker(self, game: Game, threads: int | None):
        raise NotImplementedError

    def solve(self, game, store, threads=None, progress=no_progress,
              max_positions=DEFAULT_MAX_POSITIONS, executor=IN_PROCESS, lower=None):
        self.require_kernel(game)
        return solve_tiers_with(game, store, self.worker(game, threads), progress, executor,
                                lower)


class Retrograde(TierSolver):
    """Acyclic win/loss games by tiers (cext/retrograde.pyx): each position's value from its
    children's, depth-first inside a tier."""
    name = "retrograde"
    indexing = DENSE
    value_kind = WIN_LOSS
    #: capsule: `expand` for the solver kernel; children: the same view from Python (the check)
    kernel_needs = ("capsule", "children")
    checks = (selfcheck.check_ranking, selfcheck.check_kernel_moves, selfcheck.check_dependencies,
              selfcheck.check_children, selfcheck.check_unmoves)
    estimator = staticmethod(estimates.window_estimate)

    def worker(self, game, threads, tiers=None):
        return RetrogradeWorker(game, threads, tiers)

    def solve(self, game, store, threads=None, progress=no_progress,
              max_positions=DEFAULT_MAX_POSITIONS, executor=IN_PROCESS, lower=None):
        """As every tier solver; the worker sized for the tiers the table holds (an endgame
        table's, not the game's)."""
        self.require_kernel(game)
        order = store.tier_order() if hasattr(store, "tier_order") else None
        return solve_tiers_with(game, store, self.worker(game, threads, order), progress,
                                executor, lower)

    def verify(self, table, load, full, samples, seed, fail):
        if not full:
            return super().verify(table, load, full, samples, seed, fail)
        game = self.require_kernel(table.game)
        verifier = RetrogradeVerifier(game, load, default_threads())
        TierManager(game, load, order=table.tiers).run(verifier, lambda tier, records, seconds: None)
        for tier, bad in verifier.mismatches.items():
            if bad:
                fail(f"tier {tier}: {bad} stored values differ from their children's")
        return sum(game.tier_size(t) for t in verifier.mismatches)


class ScoreTiers(TierSolver):
    """Score games whose tiers hold cycles (cext/scoresolve.pyx): margins by threshold
    attractors over each tier, on moves and un-moves the game's kernel generates (no move
    graph is kept: 5 bytes per position of the tier), on every thread."""
    name = "score-tiers"
    indexing = DENSE
    value_kind = MARGIN
    kernel_needs = ()           # the game hands over each tier itself (score_tier)
    needs = (Compiled, ScoreTiers)
    checks = (selfcheck.check_ranking, selfcheck.check_kernel_moves, selfcheck.check_dependencies,
              selfcheck.check_score_tier)
    estimator = staticmethod(estimates.score_estimate)

    def worker(self, game, threads):
        return ScoreTierWorker(game, threads)

    def verify(self, table, load, full, samples, seed, fail):
        """Every position through the Python rules with `full` (no kernel verifier yet)."""
        return selfcheck.sampled_values(table, load, None if full else samples, seed, fail,
                                        tiered=True)


class Search(Solver):
    """Games without a dense index (cext/ttsolve.pyx): a depth-first search with a
    transposition table over canonical packed positions, from the start (or any position)."""
    name = "search"
    indexing = KEYS
    value_kind = WIN_LOSS
    #: capsule: `expand_key` for the search kernel; children: the same view from Python (the
    #: check); keyable: whether the board's positions pack into a key at all
    kernel_needs = ("capsule", "children", "keyable")
    checks = (selfcheck.check_walks,)
    proves = True

    def prepare(self, game):
        super().prepare(game)
        game.key(game.initial())        # a board too large to pack fails here, writing nothing

    def solve(self, game, store, threads=None, progress=no_progress,
              max_positions=DEFAULT_MAX_POSITIONS, executor=IN_PROCESS, lower=None):
        """`lower` is for tiered solves: a search holds what it reached in its table."""
        self.require_kernel(game)
        return solve_by_search(game, store, max_positions, progress)

    def estimate(self, game, threads, max_positions, solved, order=None, out_of_core=False):
        return estimates.search_estimate(game, max_positions)

    def verify(self, table, load, full, samples, seed, fail):
        if not full:
            return selfcheck.sampled_values(table, load, samples, seed, fail, tiered=False)
        self.require_kernel(table.game)
        keys = [table.tier_keys(t) for t in table.tiers]
        records = [load(t) for t in table.tiers]
        keys = np.concatenate(keys) if keys else np.zeros(0, np.uint64)
        records = np.concatenate(records) if records else np.zeros(0, np.uint16)
        order = np.argsort(keys, kind="stable")
        game = table.game
        bad, missing, unreached = verify_keys(game.kernel().capsule(), keys[order], records[order],
                                              keys, game.key(game.initial())[1])
        if bad:
            fail(f"{bad} stored values differ from their children's")
        if missing:
            fail(f"{missing} stored positions lead to positions missing from the table")
        if unreached:
            fail(f"{unreached} stored positions are led to by no stored position (nor are the "
                 f"start): the search from the start cannot have reached them")
        return int(keys.size)

    def answer(self, game, position, max_positions, progress):
        self.require_kernel(game)
        solver = search(game, position, max_positions, progress, "searching")
        return lambda p: solver.record(game.key(p)[1])


RETROGRADE = Retrograde()
SCORE_TIERS = ScoreTiers()
SEARCH = Search()
SOLVERS = {solver.name: solver for solver in (RETROGRADE, SCORE_TIERS, SEARCH)}
