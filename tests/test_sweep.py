"""The Diffusion tier solve is a sweep in order of RULES.md's potential: the potential must fall
along every move (checked here with the Python rules, not the kernel), the kernel's level of a
stored position must be that potential, and the sweep must give the records a depth-first solve
gives."""
import random

import numpy as np
import pytest

from sowsolve.cext import retrograde
from sowsolve.solver.games import make_game

#: RULES.md's example weights for six columns (top row left to right, then bottom row)
RULES_WEIGHTS_6 = [97, 151, 161, 163, 165, 167, 167, 165, 163, 161, 151, 97]

NAMES = {1: "diffusion", 2: "diffusion-v2"}
BOARDS = [(1, 2), (1, 4), (1, 6), (1, 8), (2, 2), (2, 3), (2, 5), (2, 7)]


@pytest.mark.slow
@pytest.mark.parametrize("variant,cols", BOARDS)
def test_the_potential_falls_along_every_move_of_the_python_rules(variant, cols):
    game = make_game(NAMES[variant], cols=cols, stones=5)
    weights = game.kernel().weights
    rng = random.Random(cols * 10 + variant)
    for _ in range(3000):
        board = tuple(rng.randint(0, 5) for _ in range(2 * cols))
        before = sum(w * s for w, s in zip(weights, board))
        for pit, stones in enumerate(board):
            if stones:
                after, _ = game.sow(board, pit)
                assert sum(w * s for w, s in zip(weights, after)) < before, (board, pit)


@pytest.mark.slow
@pytest.mark.parametrize("variant,cols", BOARDS)
def test_the_level_of_a_stored_position_is_its_potential(variant, cols):
    game = make_game(NAMES[variant], cols=cols, stones=3)
    kernel = game.kernel()
    rng = random.Random(cols)
    for tier in game.tiers():
        size = game.tier_size(tier)
        for index in {0, size - 1, *(rng.randrange(size) for _ in range(20))}:
            board = kernel.unrank(tier, index)
            assert kernel.level(tier, index) == sum(w * s for w, s in zip(kernel.weights, board))
    with pytest.raises(IndexError):
        kernel.level(1, game.tier_size(1))


def test_the_least_weights_lie_below_the_rule_sheet_s():
    """The rule sheet's weights satisfy the same inequalities, so the least solution found by
    raising weights from 1 lies at or below them pit by pit; both fall along every move."""
    weights = make_game("diffusion", cols=6, stones=4).kernel().weights
    assert all(w <= r for w, r in zip(weights, RULES_WEIGHTS_6))
    assert weights == tuple(reversed(weights))      # the turn keeps the potential


@pytest.mark.parametrize("variant,cols,stones", [(1, 4, 2), (2, 3, 3)])
def test_the_sweep_gives_the_depth_first_solve_s_records(variant, cols, stones):
    """solve_range sweeps a whole tier; given the same tier in two halves it searches depth
    first (a half's same-tier children may lie in the other half): the records agree."""
    game = make_game(NAMES[variant], cols=cols, stones=stones)
    capsule = game.kernel().capsule()
    slots = max(game.tiers()) + 1
    swept: list = [None] * slots
    searched: list = [None] * slots
    for tier in game.tiers():
        size = game.tier_size(tier)
        swept[tier] = np.zeros(size, dtype=np.uint16)
        searched[tier] = np.zeros(size, dtype=np.uint16)
        retrograde.solve_range(capsule, tier, 0, size, swept, 2, sweep_from=0)
        retrograde.solve_range(capsule, tier, 0, size // 2, searched, 2)
        retrograde.solve_range(capsule, tier, size // 2, size, searched, 2)
        assert np.array_equal(swept[tier], searched[tier]), f"tier {tier}"
        assert np.count_nonzero(swept[tier]) == size
