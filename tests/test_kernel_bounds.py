"""Defense in depth: a kernel handed arrays of the wrong size (say, a tier shrunk in a crafted
table) refuses with one sentence instead of reading outside them."""
import numpy as np
import pytest

from sowsolve.solver import kernels
from sowsolve.solver.games import make_game


@pytest.fixture(scope="module")
def solved_4_2():
    game = make_game("diffusion", cols=4, stones=2)
    capsule = game.kernel().capsule()
    arrays = [None] * (max(game.tiers()) + 1)
    for tier in game.tiers():
        arrays[tier] = np.zeros(game.tier_size(tier), dtype=np.uint16)
        kernels.solve_range(capsule, tier, 0, arrays[tier].size, arrays, 2)
    return game, capsule, arrays


def one_sentence(exc) -> str:
    text = str(exc.value)
    assert "\n" not in text and text.count(". ") == 0, text
    return text


@pytest.mark.parametrize("shrunk", ["lower", "same"])
def test_the_tier_solver_refuses_a_tier_array_too_short(solved_4_2, shrunk):
    game, capsule, arrays = solved_4_2
    top = max(game.tiers())
    tables = list(arrays)
    tables[top] = np.zeros(arrays[top].size, dtype=np.uint16)
    victim = top - 1 if shrunk == "lower" else top
    tables[victim] = tables[victim][:tables[victim].size // 8].copy()
    stop = tables[top].size
    with pytest.raises(RuntimeError) as solving:
        kernels.solve_range(capsule, top, 0, stop, tables, 2)
    assert "outside the array of its tier" in one_sentence(solving)
    checked = list(arrays)
    checked[victim] = arrays[victim][:arrays[victim].size // 8].copy()
    with pytest.raises(RuntimeError) as verifying:
        kernels.verify_range(capsule, top, 0, checked[top].size, checked, 2)
    assert "outside the array of its tier" in one_sentence(verifying)


def test_zigzag_score_tiers_check_the_lower_tiers():
    game = make_game("zigzag", cols=4, stones=1)
    kernel = game.kernel()
    ones, none = np.ones(6, dtype=np.uint16), np.zeros(0, dtype=np.uint64)
    unsorted = np.array([3 << 16 | 600, 1 << 16 | 600], dtype=np.uint64)
    for lower, words in [({500: (ones, none)}, "no lower tier"),
                         ({8: (ones, none)}, "no lower tier"),
                         ({-1: (ones, none)}, "no lower tier"),
                         ({"7": (ones, none)}, "no lower tier"),
                         ({7: (np.ones(10, dtype=np.uint16), none)}, "holds 10 records"),
                         ({7: ones}, "records and a long table"),
                         ({7: (ones, unsorted)}, "not sorted")]:
        with pytest.raises(ValueError) as refused:
            kernels.compiled("zigzag").ScoreTierOf(kernel, 8, 0, lower)
        assert words in one_sentence(refused)
    with pytest.raises(ValueError):
        kernels.compiled("zigzag").ScoreTierOf(kernel, 400, 0, {})
    # a lower tier left out, or holding an unsolved record, is refused when a capture reads it
    tier = kernels.compiled("zigzag").ScoreTierOf(kernel, 8, 0, {})
    with pytest.raises(RuntimeError, match="not solved"):
        kernels._scoresolve.solve_tier(tier, 2)


def test_verify_keys_checks_its_arrays():
    game = make_game("overflow", size="3x3")
    solver = kernels.TTSolver(game.kernel().capsule(), 10**5)
    solver.run(game.key(game.initial())[1])
    keys, records = solver.results()
    with pytest.raises(ValueError) as refused:
        kernels.verify_keys(game.kernel().capsule(), keys, records[:10], keys)
    assert "records" in one_sentence(refused)
    start = game.key(game.initial())[1]
    assert kernels.verify_keys(game.kernel().capsule(), keys, records, keys, start) == (0, 0, 0)
    # without the start named, the start is the one position no stored position leads to
    assert kernels.verify_keys(game.kernel().capsule(), keys, records, keys) == (0, 0, 1)


def test_verify_keys_finds_positions_the_start_does_not_reach():
    """A keyed table with a position of two stacks that do not touch (no game reaches it:
    RULES.md's one-group rule) and everything below it, each value consistent with its
    children's, is still found out: the position is no child of any stored one."""
    game = make_game("overflow", size="3x3")
    capsule = game.kernel().capsule()
    solver = kernels.TTSolver(capsule, 10**5)
    start = game.key(game.initial())[1]
    solver.run(start)
    keys, records = solver.results()
    stray = game.key(type(game.initial())((1,) + (0,) * 7 + (1,), "L"))[1]
    assert int(stray) not in set(int(k) for k in keys)
    extra = kernels.TTSolver(capsule, 10**5)
    extra.run(stray)
    more_keys, more_records = extra.results()
    merged = {int(k): int(r) for k, r in zip(keys, records)}
    merged.update({int(k): int(r) for k, r in zip(more_keys, more_records)})
    all_keys = np.array(sorted(merged), dtype=np.uint64)
    all_records = np.array([merged[int(k)] for k in all_keys], dtype=np.uint16)
    bad, missing, unreached = kernels.verify_keys(capsule, all_keys, all_records, all_keys, start)
    assert (bad, missing) == (0, 0) and unreached >= 1
