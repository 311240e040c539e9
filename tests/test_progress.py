"""Progress that moves: one bar over a whole solve, fed while the kernel runs with the positions
it has solved, named after the tier being solved; its updates add up to exactly the positions
solved.  Position counts come from the rules: boards of 2n pits holding 0-5 stones (Diffusion),
compositions of the seeds into 2n pits times 2 sides, 3 ko states and 3 last capturers (Zig Zag),
and agree with the README's tables."""
import copy
import os
from collections import Counter
from math import comb

import numpy as np
import pytest
from typer.testing import CliRunner

from sowsolve.cli.app import app
from sowsolve.solver import kernels
from sowsolve.solver.games import make_game
from sowsolve.solver.search import SearchLimitReached, solve_by_search


def diffusion_boards(pits: int, stones: int) -> int:
    """Boards of `pits` pits holding 0-5 stones each, `stones` in all."""
    counts = np.array([1], dtype=object)
    for _ in range(pits):
        counts = np.convolve(counts, np.ones(6, dtype=object))
    return int(counts[stones]) if stones < counts.size else 0


class MemoryStore:
    def __init__(self):
        self.tiers = {}

    def finished_tiers(self):
        return set(self.tiers)

    def load_tier(self, tier):
        return self.tiers[tier]

    def save_tier(self, tier, records, summary, keys=None):
        self.tiers[tier] = copy.deepcopy(records)


class Bar:
    def __init__(self, total, desc):
        self.total, self.desc, self.closed = total, desc, False
        self.updates = []           # (description at the time, positions)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.closed = True

    def update(self, n):
        assert not self.closed and n > 0
        self.updates.append((self.desc, n))

    def set_description(self, desc):
        self.desc = desc


class Recorder:
    """A Progress (solver.retrograde) that keeps every bar it opens."""

    def __init__(self):
        self.bars = []

    def __call__(self, total, desc):
        self.bars.append(Bar(total, desc))
        return self.bars[-1]


def per_name(bar):
    positions, updates = Counter(), Counter()
    for name, n in bar.updates:
        positions[name] += n
        updates[name] += 1
    return positions, updates


@pytest.fixture
def quick_polls(monkeypatch):
    monkeypatch.setattr(kernels, "POLL_SECONDS", 0.001)


def test_one_bar_follows_a_diffusion_solve_inside_its_tiers(quick_polls):
    game = make_game("diffusion", cols=6, stones=1)
    progress = Recorder()
    game.solver.solve(game, MemoryStore(), threads=2, progress=progress)
    (bar,) = progress.bars
    assert bar.closed
    assert bar.total == 2_481_453 == sum(n for _, n in bar.updates)
    positions, updates = per_name(bar)
    assert positions == {f"tier {s}": diffusion_boards(12, s) for s in range(1, 13)}
    # the largest tier (1.2 M positions) takes hundreds of times the 1 ms between two looks:
    # its bar moves while the kernel runs, not once at the end
    assert updates["tier 12"] >= 3, updates


def test_a_resumed_solve_counts_only_the_tiers_left(quick_polls):
    game = make_game("diffusion", cols=4, stones=2)
    store = MemoryStore()
    game.solver.solve(game, store, threads=2)
    del store.tiers[15], store.tiers[16]
    progress = Recorder()
    game.solver.solve(game, store, threads=2, progress=progress)
    (bar,) = progress.bars
    assert bar.total == diffusion_boards(8, 15) + diffusion_boards(8, 16)
    assert per_name(bar)[0] == {"tier 15": diffusion_boards(8, 15), "tier 16": diffusion_boards(8, 16)}


def test_the_tier_solver_counts_the_positions_it_solves():
    """One thread counts each position once; two threads that meet on a position may both
    store it at the same moment and count it twice, which is rare."""
    game = make_game("diffusion", cols=6, stones=1)
    capsule = game.kernel().capsule()
    for threads in (1, 2):
        arrays = [None] * 13
        for tier in game.tiers():
            size = diffusion_boards(12, tier)
            arrays[tier] = np.zeros(size, dtype=np.uint16)
            control = kernels.Control()
            kernels._retrograde.solve_range(capsule, tier, 0, size, arrays, threads, control.words)
            if threads == 1:
                assert control.done == size
            else:
                assert size <= control.done <= size + size // 50, (tier, control.done)
    control = kernels.Control()
    assert kernels._retrograde.verify_range(capsule, 12, 0, arrays[12].size, arrays, 2,
                                            control.words) == 0
    assert control.done == diffusion_boards(12, 12)


def test_one_bar_follows_a_zigzag_solve(quick_polls):
    game = make_game("zigzag", cols=4, stones=1)
    progress = Recorder()
    store = MemoryStore()
    game.solver.solve(game, store, progress=progress)
    (bar,) = progress.bars
    assert bar.closed
    # boards of 0-7 seeds after a capture (P's; p's are stored turned) and of all 8 before one
    assert bar.total == sum(comb(s + 7, 7) * 6 for s in range(9)) == sum(n for _, n in bar.updates)
    positions, _ = per_name(bar)
    assert len(positions) == 9           # each tier named
    for name, n in positions.items():
        seeds = int(name.split()[0])
        assert "capture" in name and n == comb(seeds + 7, 7) * 6, name
    # the kernel counts each position once per sweep over the tier, and once as it settles
    control = kernels.Control()
    lower = {t: store.tiers[t] for t in game.tier_dependencies(8 * 3)}
    size = comb(8 + 7, 7) * 6
    records, *_ = kernels._scoresolve.solve_tier(game.score_tier(8 * 3, lower), 2, control.words)
    assert records.size == size and size < control.done <= 4 * size


def test_a_search_stops_at_its_limit_with_the_true_count():
    game = make_game("overflow", size="3x4")
    solver = kernels.TTSolver(game.kernel().capsule(), 1000)
    with pytest.raises(kernels.SearchLimit) as caught:
        solver.run(game.key(game.initial())[1])
    assert solver.positions == 1000 == caught.value.solved
    with pytest.raises(SearchLimitReached, match=r"--max-positions 1000 before solving the start"):
        solve_by_search(game, MemoryStore(), max_positions=1000)


def test_solve_refuses_to_leave_half_a_searched_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["solve", "overflow", "--size", "3x4", "--max-positions", "1000",
                                      "--table", "o.sqlite"])
    assert result.exit_code == 1, result.output
    assert result.stderr.strip().splitlines()[-1] == (
        "sowsolve: the search reached --max-positions 1000 before solving the start "
        "(1,000 positions solved); raise it")
    assert "Traceback" not in result.output
    assert os.listdir(tmp_path) == []


def test_a_resumed_zigzag_solve_equals_an_uninterrupted_one():
    """The tiers left after a stop are solved again from the stored ones: the same records."""
    game = make_game("zigzag", cols=4, stones=1)
    whole = MemoryStore()
    game.solver.solve(game, whole, threads=2)
    resumed = MemoryStore()
    game.solver.solve(game, resumed, threads=1)
    top = list(game.tiers())[-3:]
    for tier in top:
        del resumed.tiers[tier]
    progress = Recorder()
    game.solver.solve(game, resumed, progress=progress, threads=2)
    (bar,) = progress.bars
    assert bar.total == sum(game.tier_size(t) for t in top)
    assert set(resumed.tiers) == set(whole.tiers) == set(game.tiers())
    for tier in game.tiers():
        assert np.array_equal(resumed.tiers[tier].records, whole.tiers[tier].records), tier
        assert np.array_equal(resumed.tiers[tier].long, whole.tiers[tier].long), tier
