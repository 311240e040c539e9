"""The compact score solver (scoresolve.solve_tier: moves and un-moves from the game's kernel,
on one or two threads, even on small tiers) against the reference solver over an explicit move graph
(scoresolve.solve_graph, whose rules the Zig Zag brute force of test_zigzag_solver.py checks):
every tier of small boards, whoever captured last, with the lower tiers holding random margins
and remoteness -- short, around the 9 bits of a record and past them (the long table), the
longest a tier holds, and 'no end' -- so every path of the rules (hurry, delay, captures that
never end, the value of endless play) and of the long tables is compared."""
import numpy as np
import pytest

from sowsolve.cext import scoresolve
from sowsolve.solver.games import make_game
from sowsolve.solver.selfcheck import _explicit_graph
from sowsolve.solver.values import MarginTier

LAYOUT = scoresolve.MARGIN_LAYOUT
NO_END = -1
REMOTENESS = [0, 1, 2, 3, 5, 8, 13, 250, 300, 508, 509, 510, 511, 700, 5000,
              LAYOUT["max_remoteness"] - 2, NO_END]
#: mostly short; the longest only now and then, or every tier would reach the tier's limit
WEIGHTS = np.array([10, 10, 10, 10, 10, 10, 10, 2, 2, 1, 1, 1, 1, 1, 1, 0.02, 5])


def random_records(rng, seeds, size):
    """A lower tier: 9-bit remoteness fields as the layout says (LONG: the long table holds the
    plies), with the long table of (index << long_shift) | plies."""
    margins = rng.integers(-seeds, seeds + 1, size=size)
    rems = rng.choice(REMOTENESS, size=size, p=WEIGHTS / WEIGHTS.sum())
    field = np.where(rems == NO_END, LAYOUT["endless"], np.minimum(rems, LAYOUT["long"]))
    records = ((field << LAYOUT["rem_shift"]) | (margins + LAYOUT["bias"])).astype(np.uint16)
    at = np.flatnonzero(rems >= LAYOUT["long"])
    long = (at.astype(np.uint64) << np.uint64(LAYOUT["long_shift"])) | rems[at].astype(np.uint64)
    return MarginTier(records, long)


def solved_by_both(game, tier, lower):
    view = game.score_tier(tier, lower)
    try:
        reference = scoresolve.solve_graph(_explicit_graph(game, tier, view))
    except RuntimeError as refused:             # a remoteness past the longest a record holds
        for threads in (1, 2):
            with pytest.raises(RuntimeError) as also:
                scoresolve.solve_tier(view, threads, parallel_from=0)
            assert str(also.value) == str(refused)
        return None
    for threads in (1, 2):
        records, long, finals, endless = scoresolve.solve_tier(view, threads, parallel_from=0)
        assert np.array_equal(records, reference[0]), (game.tier_name(tier), threads)
        assert np.array_equal(long, reference[1]), (game.tier_name(tier), threads)
        assert (finals, endless) == reference[2:]
    return reference


@pytest.mark.slow
@pytest.mark.parametrize("cols,stones", [(2, 2), (2, 3), (4, 1)])
def test_the_compact_solver_equals_the_reference_on_every_tier(cols, stones):
    game = make_game("zigzag", cols=cols, stones=stones)
    rng = np.random.default_rng(cols * 10 + stones)
    compared = refused = long = 0
    for seeds in range(1, game.total):
        for capturer in (0, 1, 2):               # every tier, stored or not
            lower = {s * 3 + 1: random_records(rng, s, game.tier_size(s * 3 + 1)) for s in range(seeds)}
            solved = solved_by_both(game, seeds * 3 + capturer, lower)
            if solved is None:
                refused += 1
            else:
                compared += 1
                long += solved[1].size
    assert compared > 3 * refused
    assert long > 0             # the solvers wrote long tables, not only read them


@pytest.mark.slow
def test_the_compact_solver_equals_the_reference_on_solved_lower_tiers():
    """The same with the true lower records (the solve itself), 2x4 with 2 seeds per pit."""
    game = make_game("zigzag", cols=4, stones=2)
    solved = {}
    for tier in game.tiers():
        lower = {t: solved[t] for t in game.tier_dependencies(tier)}
        if game.tier_size(tier) <= 60_000:
            solved[tier] = MarginTier(*solved_by_both(game, tier, lower)[:2])
        else:
            solved[tier] = MarginTier(*scoresolve.solve_tier(game.score_tier(tier, lower), 2)[:2])
    assert len(solved) == len(game.tiers())


@pytest.mark.slow
def test_two_threads_give_the_records_of_one_on_a_tier_of_a_million_positions():
    """Small tiers finish before two threads meet; on 1.5 M positions (the top tier of 2x4 with
    2 seeds per pit, lower tiers random) both threads sweep at once, each with its own move
    buffers and its game's scratch area, and must still give one thread's records."""
    game = make_game("zigzag", cols=4, stones=2)
    rng = np.random.default_rng(42)
    top = max(game.tiers())
    lower = {}
    for t in game.tier_dependencies(top):       # margins and short remoteness, or no end
        seeds, size = t // 3, game.tier_size(t)
        field = np.where(rng.random(size) < 0.1, LAYOUT["endless"], rng.integers(0, 200, size))
        margins = rng.integers(-seeds, seeds + 1, size=size)
        records = ((field << LAYOUT["rem_shift"]) | (margins + LAYOUT["bias"])).astype(np.uint16)
        lower[t] = MarginTier(records, np.zeros(0, dtype=np.uint64))
    view = game.score_tier(top, lower)
    assert view.size > 1_000_000
    one = scoresolve.solve_tier(view, 1)
    two = scoresolve.solve_tier(view, 2, parallel_from=0)
    assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])
    assert one[2:] == two[2:]
