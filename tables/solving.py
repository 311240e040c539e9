"""Solving a board into a table, as a library call: `solve(game, ...)` is what `sowsolve solve`
runs (the command parses, calls it, renders), and what the tests and benches call.

    from sowsolve import make_game, solve
    result = solve(make_game(GAME, **board), table="t.sqlite")
    result.summary["start"]          # what `sowsolve solve --json` prints

`plan` does everything before the work -- checks, the table's path, what is already solved,
the estimate -- and writes nothing (`solve --dry-run`).  Nothing here prints: the estimate goes
to `on_estimate`, progress to `progress` (a tier bar factory, see solver/tiers.py)."""
from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..solver import estimate as estimates
from ..solver.contract import Game
from ..solver.errors import BadParameters, quote, shown
from ..solver.games import GAMES, make_game
from ..solver.lower import LowerTiers
from ..solver.search import DEFAULT_MAX_POSITIONS
from ..solver.tiers import IN_PROCESS, Progress, tier_label, default_threads, last_solved, no_progress
from .directory import tables_directory
from .layout import layout_of
from .store import TableWriter, check_same_table, open_table
from . import report as reports

MAX_THREADS = 1024
#: without --memory, a solve keeps the tiers it reads in memory while its estimate stays within
#: this share of the available memory, else on disk: the rest is the page cache's, which the
#: table's writes (and the mapped tiers) use
IN_MEMORY_SHARE = 0.6
#: --max-positions: far beyond any machine's memory, within int64
MAX_SEARCH = 1 << 40


def check_threads(threads: int | None) -> int:
    """Threads: 0 or None is every core; at most 4 per core (and 1024)."""
    cores = default_threads()
    if threads is None or threads == 0:
        return cores
    limit = min(MAX_THREADS, 4 * cores)
    if not 0 < threads <= limit:
        raise BadParameters(f"--threads must be from 1 to {limit} (4 per core) or 0 for every "
                            f"core, not {shown(threads)}")
    return threads


def check_max_positions(max_positions: int) -> int:
    if not 1 <= max_positions <= MAX_SEARCH:
        raise BadParameters(f"--max-positions must be from 1 to {MAX_SEARCH:,}, not "
                            f"{shown(max_positions)}")
    return max_positions


def table_file_name(game: Game, max_stones: int | None = None) -> str:
    """GAME-BOARD.sqlite (GAME-BOARD-maxS.sqlite for an endgame table)."""
    board = "-".join(f"{k}{v}" for k, v in game.parameters().items())
    limit = "" if max_stones is None else f"-max{max_stones}"
    return f"{game.name}-{board}{limit}.sqlite"


def default_table_path(game: Game, directory: str | None = None,
                       max_stones: int | None = None) -> str:
    """Where `solve` writes a game's table when no path is given: the tables directory."""
    return os.path.join(directory or tables_directory(), table_file_name(game, max_stones))


class TooLarge(BadParameters):
    """A solve whose estimate does not fit this machine (memory, disk, a day); `estimate` says
    by how much."""

    def __init__(self, estimate: dict):
        super().__init__(f"solving {estimate['description']} ({estimate['positions']:,} positions) "
                         f"does not fit this machine ({', '.join(estimate['too_large'])}); allow "
                         f"a large solve to start it anyway")
        self.estimate = estimate


@dataclass
class Plan:
    """What a solve would do, worked out before any of it is done (nothing written)."""
    game: Game
    path: str
    threads: int
    max_stones: int | None
    max_positions: int
    force: bool
    #: the tiers already solved in the table, and whether it is finished
    solved: set[int] = field(default_factory=set)
    finished: bool = False
    #: positions, memory, disk, time and whether it fits this machine (None: finished)
    estimate: dict | None = None
    #: whether the tiers the solve reads are kept on disk, mapped, rather than in memory
    #: (solver/lower.py): chosen when they would not fit the memory bound in memory
    out_of_core: bool = False
    #: the memory bound asked for (None: this machine's available memory)
    memory: int | None = None


@dataclass
class SolveResult:
    """A solve's outcome: the table's path and summary (what `solve --json` prints)."""
    table: str
    summary: dict
    solved_now: bool
    #: positions solved by this call, its seconds, the tier it resumed from (None: from the start)
    positions: int | None = None
    seconds: float | None = None
    resumed_from: int | None = None
    resumed_after: str | None = None
    estimate: dict | None = None

    def as_dict(self) -> dict:
        result = dict(self.summary)
        result["table"] = self.table
        result["solved_now"] = self.solved_now
        if self.estimate is not None:
            result["estimate"] = self.estimate
        if self.solved_now:
            result["positions_solved_now"] = self.positions
            result["seconds"] = round(self.seconds, 3)
            result["resumed_from_tier"] = self.resumed_from
            if self.resumed_from is not None:
                result["resumed_after"] = self.resumed_after
        return result


def _check_whole(name: str, value) -> None:
    """A whole number (or None) where one is asked for: one sentence before any work."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise BadParameters(f"{name} must be a whole number, not {quote(repr(value), 20)}")


def _as_game(game: Game | str, max_stones: int | None, board: dict) -> Game:
    """The game to solve: a name with its board, or a Game; an endgame table's game is the one
    its tables hold (GameEntry.endgame: solved tier by tier, whatever the start)."""
    if isinstance(game, str):
        return make_game(game, endgame=max_stones is not None, **board)
    if not isinstance(game, Game):
        raise BadParameters(f"a game is a registered name or a Game, not {type(game).__name__}")
    if board:
        raise BadParameters("give the board with the game's name, or a Game, not both")
    if max_stones is not None and GAMES[game.name].endgame is not None:
        return make_game(game.name, endgame=True, **game.parameters())
    return game


def plan(game: Game | str, *, table: str | None = None, threads: int | None = None,
         max_stones: int | None = None, max_positions: int = DEFAULT_MAX_POSITIONS,
         force: bool = False, memory: int | None = None, **board) -> Plan:
    """Check a solve and work out what it would do (the table's path, what is already solved,
    the estimate, whether the tiers it reads stay on disk); writes nothing.  `memory`: the
    bound on the solve's memory in bytes; where the tiers it reads would take it past the
    bound in memory, they are kept on disk, mapped (tiered solvers).  Left out, they stay in
    memory while the solve fits IN_MEMORY_SHARE of the available memory, and the solve is
    refused only beyond all of it.  Bad parameters raise BadParameters (one sentence)."""
    for name, value in (("threads", threads), ("max_stones", max_stones),
                        ("max_positions", max_positions), ("memory", memory)):
        _check_whole(name, value)
    if memory is not None and memory <= 0:
        raise BadParameters(f"a memory bound must be more than 0 bytes, not {memory}")
    if table is not None and not isinstance(table, (str, os.PathLike)):
        raise BadParameters(f"a table is a path, not {type(table).__name__}")
    table = None if table is None else os.fspath(table)
    if isinstance(table, bytes):
        raise BadParameters("a table is a path given as text, not bytes")
    if table == "":
        raise BadParameters("the table's path is empty: name a file, or leave the option out for "
                            "the tables directory's")
    threads = check_threads(threads)
    check_max_positions(max_positions)
    if max_stones is not None and max_stones < 0:
        raise BadParameters(f"--max-stones must be 0 or more, not {max_stones}")
    game = _as_game(game, max_stones, board)
    game.solver.prepare(game)               # a board its kernel cannot take fails here
    order = layout_of(game).new_tiers(game, max_stones)    # an endgame limit the game cannot take
    if (max_stones is not None and len(order) == len(list(game.tiers()))
            and GAMES[game.name].endgame is None):
        raise BadParameters(f"--max-stones {max_stones} keeps every position of "
                            f"{game.describe()}: leave it out for the whole table")
    path = table or default_table_path(game, max_stones=max_stones)
    solved, finished = _solved_tiers(path, game, force, max_stones)
    result = Plan(game, path, threads, max_stones, max_positions, force, solved, finished,
                  memory=memory)
    if not finished:
        cost = estimates.estimate(game, threads, max_positions, solved, order or None)
        available = estimates.available_memory()
        limit = memory if memory is not None else \
            None if available is None else round(IN_MEMORY_SHARE * available)
        if game.solver.out_of_core and limit is not None and cost.peak_memory > limit:
            outside = estimates.estimate(game, threads, max_positions, solved, order or None,
                                         out_of_core=True)
            if outside.peak_memory < cost.peak_memory:
                cost, result.out_of_core = outside, True
        result.estimate = estimates.check_machine(cost, path, memory).as_dict()
    return result


def _solved_tiers(path: str, game: Game, force: bool, max_stones) -> tuple[set[int], bool]:
    """(tiers already solved, finished) of the table a solve would continue; read only."""
    if force or not os.path.exists(path):
        return set(), False
    with open_table(path, allow_unfinished=True) as existing:
        check_same_table(path, existing.meta, existing.game, game, max_stones)
        if not game.solver.resumable:       # it starts over: all of it is to do
            return set(), existing.finished
        return set(existing.solved_tiers), existing.finished


def solve(game: Game | str, *, table: str | None = None, threads: int | None = None,
          executor: Any = None, max_stones: int | None = None,
          progress: Progress = no_progress, max_positions: int = DEFAULT_MAX_POSITIONS,
          force: bool = False, allow_large: bool = False,
          on_estimate: Callable[[dict], None] | None = None, work: Plan | None = None,
          memory: int | None = None, **board) -> SolveResult:
    """Solve every position of a board (or, with `max_stones`, an endgame table) into the
    table file `table` (left out: GAME-BOARD.sqlite in the tables directory), resuming a table
    left unfinished and doing nothing to a finished one.

    `game` is a Game or a registered name with its board (`solve(GAME, **board)`,
    the board as its command-line options).  `threads`: kernel threads (None: every core); `executor`: where the tiers'
    work runs (None: in this process; a DaskExecutor for a cluster, entered here once the
    table is held); `progress`: a tier bar factory; `memory`: a bound in bytes on the solve's
    memory (plan).
    A solve whose estimate does not fit this machine raises BadParameters unless
    `allow_large`; `on_estimate` gets the estimate once the table is opened for writing.
    Ctrl-C raises KeyboardInterrupt saying what was kept (a table that cannot resume is
    removed if this call created it)."""
    executor = IN_PROCESS if executor is None else executor
    if work is None:        # (a caller that planned, as the command does, hands its plan over)
        work = plan(game, table=table, threads=threads, max_stones=max_stones,
                    max_positions=max_positions, force=force, memory=memory, **board)
    game, path = work.game, work.path
    if work.estimate is not None and not work.estimate["fits"] and not allow_large:
        raise TooLarge(work.estimate)
    on_cluster = executor is not IN_PROCESS
    if on_cluster:
        check_spreads(game, max_stones)
    created = force or not os.path.exists(path)
    writer = TableWriter(path, game, force=force, max_stones=max_stones)  # one solve at a time
    report = None
    stack = contextlib.ExitStack()
    try:
        if work.estimate is not None and on_estimate is not None:
            on_estimate(work.estimate)      # a callback that fails leaves the table as solves do
        started = time.perf_counter()
        if not writer.finished and hasattr(executor, "__enter__"):
            # a cluster's executor sets up its run directory only once this solve holds the
            # table (a second solve of it is refused by the writer before it touches any of it)
            executor = stack.enter_context(executor)
        if not writer.finished:
            lower = stack.enter_context(LowerTiers(path)) if work.out_of_core else None
            report = game.solver.solve(game, writer, threads=work.threads, progress=progress,
                                       max_positions=max_positions, executor=executor,
                                       lower=lower)
            writer.finish({"solve_seconds": round(time.perf_counter() - started, 3),
                           "threads": getattr(executor, "threads", None) if on_cluster
                           else work.threads})
    except BaseException as exc:
        if created and not game.solver.resumable:  # nothing to resume: leave no table
            writer.close()
            discard_table(path)
        from .export import Terminated
        if isinstance(exc, KeyboardInterrupt):
            raise KeyboardInterrupt(interrupted_text(game, writer, path)) from None
        if isinstance(exc, Terminated):     # SIGTERM, SIGHUP: as Ctrl-C
            raise Terminated(exc.signum, interrupted_text(game, writer, path, "terminated")) from None
        raise
    finally:
        stack.close()
        writer.close()
    with open_table(path) as t:
        summary = reports.summary(t)
    if report is None:
        return SolveResult(path, summary, False, estimate=work.estimate)
    return SolveResult(path, summary, True, report.positions, report.seconds, report.resumed_from,
                       game.tier_name(report.resumed_from) if report.resumed_from is not None
                       else None, work.estimate)


def check_spreads(game: Game, max_stones: int | None) -> None:
    """A solve on a cluster: only of a game whose solver spreads its tiers' work."""
    if GAMES[game.name].endgame is not None and max_stones is not None:
        raise BadParameters(f"endgame tables of {game.describe()} are solved in one process: "
                            f"leave out --workers, --scheduler and --scheduler-file")
    if not game.solver.spreads:
        raise BadParameters(f"{game.describe()} is solved by a search from the start, in one "
                            f"process: it cannot be solved on a cluster")


def discard_table(path: str) -> None:
    """Remove a table this solve created and could not finish."""
    for leftover in (path, path + "-journal"):
        try:
            os.remove(leftover)
        except FileNotFoundError:
            pass


def interrupted_text(game: Game, writer: TableWriter, path: str, how: str = "interrupted") -> str:
    """What an interrupted (or terminated) solve kept, and how to go on."""
    if not game.solver.resumable:
        return f"{how}; a {game.solver.name} solve starts over, so no table was kept"
    order = writer.tier_order()
    kept = writer.finished_tiers()
    last = last_solved(order, kept)
    if last is None:
        return f"{how} before the first tier was stored; {path} resumes from the start"
    return (f"{how}; {path} keeps {len(kept)} of {len(order)} tiers (up to "
            f"{tier_label(game, last)}): run the same command again to resume")
