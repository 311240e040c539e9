"""The vector (AVX-512) paths give what the scalar loops give: Diffusion's children computed in
vector lanes equal the scalar loop's, position by position, and a sweep that forms and folds
its children's records in lanes stores the records the scalar sweep stores.  On a CPU without
the instructions both paths are the scalar one and there is nothing to compare."""
import random

import numpy as np
import pytest

from sowsolve.cext import diffusion, retrograde
from sowsolve.solver.games import make_game

NAMES = {1: "diffusion", 2: "diffusion-v2"}


def kernels(name, cols, stones):
    game = make_game(name, cols=cols, stones=stones)
    owner = [0 if o == "A" else 1 for o in game.owner]
    with_lanes = diffusion.DiffusionKernel(game.cols, game.variant, game.max_stones, game.slots,
                                           owner)
    scalar = diffusion.DiffusionKernel(game.cols, game.variant, game.max_stones, game.slots,
                                       owner, lanes=False)
    if not retrograde.use_lanes() and not with_lanes.lanes:
        pytest.skip("this CPU has no AVX-512: the kernel has only the scalar loop")
    assert with_lanes.lanes, "the CPU has the lanes but the kernel did not take them"
    assert not scalar.lanes
    return game, with_lanes, scalar


@pytest.mark.parametrize("name,cols,stones,sample", [
    ("diffusion", 2, 5, None), ("diffusion-v2", 3, 3, None), ("diffusion", 4, 3, None),
    ("diffusion", 6, 4, 200), ("diffusion-v2", 6, 4, 200), ("diffusion", 8, 1, 100),
    ("diffusion-v2", 7, 2, 100)])
def test_the_lanes_children_are_the_scalar_loop_s(name, cols, stones, sample):
    """Every position of the small boards (a sample of each tier of the larger): the same
    children in the same order, or the same final record."""
    game, with_lanes, scalar = kernels(name, cols, stones)
    rng = random.Random(cols * 100 + stones)
    for tier in game.tiers():
        size = game.tier_size(tier)
        indices = range(size) if sample is None or size <= sample else rng.sample(range(size), sample)
        for index in indices:
            assert with_lanes.children(tier, index) == scalar.children(tier, index), (tier, index)


@pytest.fixture
def scalar_sweep():
    previous = retrograde.use_lanes(False)
    yield
    retrograde.use_lanes(previous)


def sweep_all(game, kernel, lanes: bool) -> list:
    """Every tier swept (solve_range with sweep_from=0), the sweep's lanes on or off."""
    previous = retrograde.use_lanes(lanes)
    try:
        tables: list = [None] * (max(game.tiers()) + 1)
        for tier in game.tiers():
            tables[tier] = np.zeros(game.tier_size(tier), dtype=np.uint16)
            retrograde.solve_range(kernel.capsule(), tier, 0, game.tier_size(tier), tables, 2,
                                   sweep_from=0)
        return tables
    finally:
        retrograde.use_lanes(previous)


@pytest.mark.parametrize("name,cols,stones", [("diffusion", 4, 5), ("diffusion-v2", 4, 5),
                                              ("diffusion", 6, 1), ("diffusion-v2", 5, 2)])
def test_a_sweep_in_lanes_stores_the_scalar_sweep_s_records(name, cols, stones):
    game, with_lanes, scalar = kernels(name, cols, stones)
    if not retrograde.use_lanes():
        pytest.skip("the sweep has no lanes on this CPU")
    expected = sweep_all(game, scalar, lanes=False)
    got = sweep_all(game, with_lanes, lanes=True)
    for tier in game.tiers():
        assert np.array_equal(got[tier], expected[tier]), f"tier {tier}"
        assert np.count_nonzero(got[tier]) == game.tier_size(tier)


def test_use_lanes_reports_and_restores_the_setting(scalar_sweep):
    assert retrograde.use_lanes() is False
    assert retrograde.use_lanes(True) is False
    has_lanes = retrograde.use_lanes()      # True on a CPU with AVX-512, else it stays False
    assert retrograde.use_lanes(False) is has_lanes
    assert retrograde.use_lanes() is False


def test_an_unaligned_tier_array_is_refused():
    """The vector fold reads each record as the aligned word that holds it: a tier array at an
    odd address is refused, whichever path would run."""
    game = make_game("diffusion", cols=2, stones=2)
    size = game.tier_size(1)
    odd = np.frombuffer(bytearray(2 * size + 1), dtype=np.uint16, count=size, offset=1)
    assert not odd.flags.aligned and odd.flags.writeable
    tables = [None, odd]
    with pytest.raises(TypeError, match="aligned"):
        retrograde.solve_range(game.kernel().capsule(), 1, 0, size, tables, 1, sweep_from=0)


def assert_refused(game, kernel, tables, tier, lanes, message):
    """Sweeping `tier` over `tables` fails with `message`, the sweep's lanes on or off."""
    tables[tier][:] = 0
    previous = retrograde.use_lanes(lanes)
    try:
        with pytest.raises(RuntimeError, match=message):
            retrograde.solve_range(kernel.capsule(), tier, 0, game.tier_size(tier), tables, 2,
                                   sweep_from=0)
    finally:
        retrograde.use_lanes(previous)


@pytest.mark.parametrize("lanes", [False, True])
def test_a_child_outside_its_tier_s_array_is_refused_in_either_path(lanes):
    """The lanes check every child's tier and index as the scalar loop does; on one out of
    range they leave it to the scalar loop, which names the error."""
    game = make_game("diffusion", cols=4, stones=5)
    kernel = game.kernel()
    tables = sweep_all(game, kernel, lanes=lanes)
    tier = max(game.tiers()) // 2       # its children lie in this tier and the ones below
    tables[tier - 1] = tables[tier - 1][:len(tables[tier - 1]) // 2].copy()   # too short
    assert_refused(game, kernel, tables, tier, lanes, "outside the array of its tier")


@pytest.mark.parametrize("lanes", [False, True])
def test_an_unsolved_child_is_refused_in_either_path(lanes):
    game = make_game("diffusion", cols=4, stones=5)
    kernel = game.kernel()
    tables = sweep_all(game, kernel, lanes=lanes)
    tier = max(game.tiers()) // 2
    tables[tier - 1][:] = 0
    assert_refused(game, kernel, tables, tier, lanes, "has no value")
