"""What a solve will cost before it starts: positions, peak memory, table size on disk and time,
from the game's own counts and rates measured on the reference machine (2-core AMD EPYC,
24 GiB), and whether that fits this machine.

The rates are measurements, not promises: a solve on other hardware, or on a board whose tiers
fall out of cache differently, runs faster or slower.  Each constant names the command that
measured it (the figures are those of docs/results.md).
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

from .contract import Game
from .search import DEFAULT_MAX_POSITIONS
from .tiers import default_threads

# The measured rates of each game are the game's (Game.rates, solver/contract.py: Rates), each
# with the command that measured it; the shape of the estimate is the solver's.
RECORD_BYTES = 2                    # one 16-bit record per position
BASELINE_MEMORY = 80_000_000        # the interpreter, numpy and the kernels (measured ~60-80 MB)
TABLE_OVERHEAD = 40_000             # SQLite pages, metadata and tier summaries of a small table
MAX_SECONDS = 24 * 3600             # a solve estimated longer than a day is refused unless allowed


@dataclass
class Estimate:
    game: str
    description: str
    positions: int                  # positions the solve computes (a bound where not exact)
    positions_exact: bool           # False: reachable positions unknown, `positions` is a bound
    peak_memory: int                # bytes
    table_bytes: int                # bytes on disk
    seconds: float
    threads: int
    basis: str                      # the measured rate the figures come from
    available_memory: int | None = None
    free_disk: int | None = None
    too_large: list[str] = field(default_factory=list)   # why it does not fit this machine
    beyond_measured: str | None = None  # why the positions are unknown beyond a guess, if so
    #: bytes of lower tiers kept on disk, memory-mapped, while solving (0: all in memory);
    #: the disk they take besides the table, freed at the end
    lower_on_disk: int = 0
    #: the memory bound the solve was planned for (None: this machine's available memory)
    memory_limit: int | None = None

    @property
    def fits(self) -> bool:
        return not self.too_large

    def as_dict(self) -> dict:
        return dict(asdict(self), fits=self.fits)


def estimate(game: Game, threads: int = 2, max_positions: int = DEFAULT_MAX_POSITIONS,
             solved_tiers: set[int] | frozenset[int] = frozenset(),
             order: list[int] | None = None, out_of_core: bool = False) -> Estimate:
    """The cost of solving `game` (the tiers of `order`, all by default, not in `solved_tiers`)
    on `threads` threads, by the rates of the game's solver; `out_of_core`: with the tiers it
    reads kept on disk (solver/lower.py)."""
    return game.solver.estimate(game, threads, max_positions, solved_tiers, order, out_of_core)


def _todo(game: Game, solved_tiers, order=None) -> tuple[dict[int, int], list[int]]:
    sizes = {t: game.tier_size(t) for t in (game.tiers() if order is None else order)}
    return sizes, [t for t in sizes if t not in solved_tiers]


def score_estimate(game: Game, threads: int, solved_tiers, order=None,
                   out_of_core: bool = False) -> Estimate:
    """Score tiers: the largest tier's working bytes, and the lower tiers' records that captures
    read (out of core: on disk, mapped, not counted in memory); the rate scales with the
    threads up to the cores."""
    rates = game.rates
    sizes, todo = _todo(game, solved_tiers, order)
    positions = sum(sizes[t] for t in todo)
    memory = on_disk = 0
    for tier in todo:                   # the tier being solved and the records it reads
        lower = sum(sizes[t] for t in game.tier_dependencies(tier) if t in sizes)
        on_disk = max(on_disk, RECORD_BYTES * lower)
        memory = max(memory, rates.memory_bytes_per_position * sizes[tier]
                     + (0 if out_of_core else RECORD_BYTES * lower))
    used = max(1, min(threads, default_threads()))
    rate = rates.positions_per_second * used / rates.threads
    return Estimate(game.name, game.describe(), positions, True, BASELINE_MEMORY + round(memory),
                    TABLE_OVERHEAD + round(rates.table_bytes_per_position * sum(sizes.values())),
                    positions / rate * rates.wall_over_kernel, used,
                    f"scaled from {rates.positions_per_second / 1e6:.1f} M positions/s on "
                    f"{rates.threads} {'thread' if rates.threads == 1 else 'threads'}, "
                    f"{rates.memory_bytes_per_position:g} bytes per position of the tier solved"
                    + (", lower tiers mapped from disk" if out_of_core else ""),
                    lower_on_disk=on_disk if out_of_core else 0)


def window_estimate(game: Game, threads: int, solved_tiers, order=None,
                    out_of_core: bool = False) -> Estimate:
    """Retrograde tiers: the window of tiers in memory (2 bytes per record), and the working
    bytes beyond its record of each position of the largest tier solved (a sweep's sorted
    order, kept for the whole solve); the rate scales with the threads up to the cores."""
    rates = game.rates
    sizes, todo = _todo(game, solved_tiers, order)
    positions = sum(sizes[t] for t in todo)
    window = on_disk = 0
    for tier in todo:                       # the tier being solved and the tiers it reads
        reads = sum(sizes[t] for t in game.tier_dependencies(tier) if t in sizes)
        on_disk = max(on_disk, reads)
        window = max(window, sizes[tier] + (0 if out_of_core else reads))
    working = (rates.memory_bytes_per_position - RECORD_BYTES) * max((sizes[t] for t in todo), default=0)
    rate = rates.positions_per_second * max(1, min(threads, default_threads())) / rates.threads
    return Estimate(game.name, game.describe(), positions, True,
                    BASELINE_MEMORY + RECORD_BYTES * window + round(max(working, 0)),
                    TABLE_OVERHEAD + round(rates.table_bytes_per_position * sum(sizes.values())),
                    positions / rate * rates.wall_over_kernel, threads,
                    f"scaled from {rates.positions_per_second / 1e6:.1f} M positions/s on "
                    f"{rates.threads} {'thread' if rates.threads == 1 else 'threads'}"
                    + (", lower tiers mapped from disk" if out_of_core else ""),
                    lower_on_disk=RECORD_BYTES * on_disk if out_of_core else 0)


def search_estimate(game: Game, max_positions: int) -> Estimate:
    """Search: the positions it reaches (boards solved before) or --max-positions."""
    rates = game.rates
    known = game.reachable_positions()
    exact = known is not None and known <= max_positions
    bound = game.positions_bound()
    positions = known if exact else min(max_positions, bound if bound is not None else max_positions)
    return Estimate(game.name, game.describe(), positions, exact,
                    round(BASELINE_MEMORY + rates.memory_bytes_per_position * positions),
                    TABLE_OVERHEAD + round(rates.table_bytes_per_position * positions),
                    positions / rates.positions_per_second * rates.wall_over_kernel, 1,
                    f"{rates.positions_per_second / 1e6:.2f} M positions/s, "
                    f"{rates.memory_bytes_per_position:g} bytes per position in memory",
                    beyond_measured=None if exact else game.beyond_measured())


def available_memory() -> int | None:
    """Bytes of memory available to a new process (MemAvailable), None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def free_disk(path: str) -> int | None:
    """Free bytes on the filesystem that `path` (or its nearest existing parent) is on."""
    directory = os.path.dirname(os.path.abspath(path))
    while directory and not os.path.isdir(directory):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    try:
        st = os.statvfs(directory)
    except (OSError, AttributeError):
        return None
    return st.f_bavail * st.f_frsize


def check_machine(est: Estimate, table_path: str, memory_limit: int | None = None) -> Estimate:
    """Fill in this machine's limits (or the user's bound on memory) and the reasons the
    solve does not fit them."""
    est.available_memory = available_memory()
    est.free_disk = free_disk(table_path)
    est.memory_limit = memory_limit
    est.too_large = []
    limit = memory_limit if memory_limit is not None else est.available_memory
    if limit is not None and est.peak_memory > limit:
        est.too_large.append("memory")
    if est.free_disk is not None and est.table_bytes + est.lower_on_disk > est.free_disk:
        est.too_large.append("disk")
    if est.seconds > MAX_SECONDS:
        est.too_large.append("time")
    if not est.positions_exact and est.beyond_measured:
        est.too_large.append("unknown")
    return est
