"""What a solve will cost before it starts: positions, peak memory, table size on disk and time,
from the game's own counts and rates measured on the reference machine (2-core AMD EPYC,
24 GiB), and whether that fits this machine.

The rates are measurements, not promises: a solve on other hardware, or on a board whose tiers
fall out of cache differently, runs faster or slower.  Each constant names the command that
measured it (the figures are those of the README).
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

from .contract import Game
from .search import DEFAULT_MAX_POSITIONS

# --- measured rates --------------------------------------------------------------------------
# Diffusion: `python bench/bench_standard.py --game diffusion --table T.sqlite` (the standard
# board, 2x6 with 4 stones): 6.2 million positions/s in the solver kernel on 2 threads (v2: 6.4),
# wall time 1.12x the kernel time (compression and writing), table 0.41 bytes/position (v2:
# 0.43), peak memory the window of tiers (2 bytes per record) plus the interpreter.
DIFFUSION_POSITIONS_PER_SECOND_2_THREADS = 6.2e6
DIFFUSION_WALL_OVER_KERNEL = 1.12
DIFFUSION_TABLE_BYTES_PER_POSITION = 0.43
# Zig Zag: `python bench/bench_zigzag.py --board 4:2 --board 4:3` (one core; the solver uses
# one): 2.0 million positions/s on 2x4 K=3 (3.3 on K=2); peak memory about 150 bytes per
# position of the largest tier (its move graph with numpy temporaries) plus the records of the
# lower tiers; table 0.25 (K=3) to 0.33 (K=2) bytes/position.
ZIGZAG_POSITIONS_PER_SECOND = 2.0e6
ZIGZAG_GRAPH_BYTES_PER_POSITION = 150
ZIGZAG_TABLE_BYTES_PER_POSITION = 0.33
# Overflow: `/usr/bin/time sowsolve solve overflow --size 4x4` (README): 61,571,886 positions
# in 267 s (0.23 million positions/s), peak 3.45 GB (56 bytes per position: the transposition
# table of 10-byte entries at most half full, doubled while it grows, and the sorted results),
# table 36 MB (0.59 bytes/position; 3x4: 0.64).  The positions a search reaches are unknown
# before it runs; boards solved so far are listed, others are bounded by --max-positions.
OVERFLOW_POSITIONS_PER_SECOND = 0.23e6
OVERFLOW_BYTES_PER_POSITION = 56
OVERFLOW_TABLE_BYTES_PER_POSITION = 0.65
OVERFLOW_REACHABLE = {"3x3": 6_742, "3x4": 674_116, "4x3": 674_116, "4x4": 61_571_886}
# Boards beyond the largest solved one (16 cells) reach far more positions than --max-positions
# admits: new canonical positions per ply on 5x5 grow by 54, 36, 24, 17 over plies 1-5 (README,
# `python bench/bench_overflow.py --growth-size 5x5 --growth-plies 5`), 10^10..10^11 in all.
OVERFLOW_LARGEST_SOLVED_CELLS = 16

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
    cells: int | None = None        # boards solved by search: cells of the board

    @property
    def fits(self) -> bool:
        return not self.too_large

    def as_dict(self) -> dict:
        return dict(asdict(self), fits=self.fits)


def estimate(game: Game, threads: int = 2, max_positions: int = DEFAULT_MAX_POSITIONS,
             solved_tiers: set[int] | frozenset[int] = frozenset()) -> Estimate:
    """The cost of solving `game` (the tiers not in `solved_tiers`) on `threads` threads."""
    if game.method == "search":
        return _search_estimate(game, max_positions)
    order = list(game.tiers())
    sizes = {t: game.tier_size(t) for t in order}
    todo = [t for t in order if t not in solved_tiers]
    positions = sum(sizes[t] for t in todo)
    if game.method == "score-tiers":
        largest = max((sizes[t] for t in todo), default=0)
        lower = sum(sizes.values())         # the lower tiers' records that captures lead to
        memory = BASELINE_MEMORY + ZIGZAG_GRAPH_BYTES_PER_POSITION * largest + RECORD_BYTES * lower
        return Estimate(game.name, game.describe(), positions, True, memory,
                        TABLE_OVERHEAD + round(ZIGZAG_TABLE_BYTES_PER_POSITION * sum(sizes.values())),
                        positions / ZIGZAG_POSITIONS_PER_SECOND, 1,
                        f"{ZIGZAG_POSITIONS_PER_SECOND / 1e6:.1f} M positions/s on one core, "
                        f"{ZIGZAG_GRAPH_BYTES_PER_POSITION} bytes per position of the largest tier")
    window = 0
    for tier in todo:                       # the tier being solved and the tiers it reads
        needed = {tier, *game.tier_dependencies(tier)}
        window = max(window, sum(sizes[t] for t in needed))
    rate = DIFFUSION_POSITIONS_PER_SECOND_2_THREADS * max(1, min(threads, _cores())) / 2
    return Estimate(game.name, game.describe(), positions, True,
                    BASELINE_MEMORY + RECORD_BYTES * window,
                    TABLE_OVERHEAD + round(DIFFUSION_TABLE_BYTES_PER_POSITION * sum(sizes.values())),
                    positions / rate * DIFFUSION_WALL_OVER_KERNEL, threads,
                    f"{DIFFUSION_POSITIONS_PER_SECOND_2_THREADS / 1e6:.1f} M positions/s on 2 threads")


def _search_estimate(game: Game, max_positions: int) -> Estimate:
    board = game.parameters().get("size")
    known = OVERFLOW_REACHABLE.get(board)
    positions = known if known is not None and known <= max_positions else max_positions
    return Estimate(game.name, game.describe(), positions, known is not None and known <= max_positions,
                    BASELINE_MEMORY + OVERFLOW_BYTES_PER_POSITION * positions,
                    TABLE_OVERHEAD + round(OVERFLOW_TABLE_BYTES_PER_POSITION * positions),
                    positions / OVERFLOW_POSITIONS_PER_SECOND, 1,
                    f"{OVERFLOW_POSITIONS_PER_SECOND / 1e6:.2f} M positions/s, "
                    f"{OVERFLOW_BYTES_PER_POSITION} bytes per position in memory",
                    cells=game.rows * game.cols)


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


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


def check_machine(est: Estimate, table_path: str) -> Estimate:
    """Fill in this machine's limits and the reasons the solve does not fit them."""
    est.available_memory = available_memory()
    est.free_disk = free_disk(table_path)
    est.too_large = []
    if est.available_memory is not None and est.peak_memory > est.available_memory:
        est.too_large.append("memory")
    if est.free_disk is not None and est.table_bytes > est.free_disk:
        est.too_large.append("disk")
    if est.seconds > MAX_SECONDS:
        est.too_large.append("time")
    if not est.positions_exact and est.cells is not None and est.cells > OVERFLOW_LARGEST_SOLVED_CELLS:
        est.too_large.append("unknown")
    return est
