"""The Cython kernel against the Python reference rules, on random positions (hypothesis)."""
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sowsolve.solver.games import make_game
from sowsolve.solver.games.diffusion import Position

BOARDS = [("diffusion", 2), ("diffusion", 4), ("diffusion", 6), ("diffusion", 8),
          ("diffusion-v2", 2), ("diffusion-v2", 3), ("diffusion-v2", 5), ("diffusion-v2", 6)]
GAMES = {key: make_game(key[0], cols=key[1], stones=5) for key in BOARDS}


@st.composite
def positions(draw):
    key = draw(st.sampled_from(BOARDS))
    game = GAMES[key]
    board = draw(st.lists(st.integers(0, 5), min_size=game.npits, max_size=game.npits)
                 .filter(lambda b: sum(b) > 0))
    return game, Position(tuple(board), draw(st.sampled_from("AB")))


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(positions())
def test_kernel_moves_equal_reference_moves(case):
    game, position = case
    reference = [(m, game.play(position, m)) for m in game.legal_moves(position)]
    assert game.kernel_moves(position) == reference
    assert game.kernel().outcome(position.board if position.side == "A" else game.turn(position.board)) \
        == game.outcome(position)


@settings(max_examples=600, deadline=None)
@given(positions())
def test_rank_unrank_round_trip(case):
    game, position = case
    tier, index = game.locate(position)
    assert tier == sum(position.board)
    assert 0 <= index < game.tier_size(tier)
    stored = game.stored_positions(tier, index, index + 1)[0]
    assert position in game.images(stored)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(positions())
def test_kernel_children_are_the_located_reference_children(case):
    game, position = case
    tier, index = game.locate(position)
    stored = game.stored_positions(tier, index, index + 1)[0]
    view = game.kernel_children(tier, index)
    children = [game.play(stored, m) for m in game.legal_moves(stored)]
    if children:
        assert view == [game.locate(c) for c in children]
    else:
        assert view & 3 == {"win": 3, "loss": 1}[game.outcome(stored)] and view >> 2 == 0


@settings(max_examples=600, deadline=None)
@given(positions())
def test_unmove_move_round_trip(case):
    game, position = case
    for move, parent in game.kernel_unmoves(position):
        assert game.play(parent, move) == position
        assert sum(parent.board) == sum(position.board)
        assert game.outcome(parent) is None
    for move in game.legal_moves(position):
        child = game.play(position, move)
        if sum(child.board) == sum(position.board):
            assert (move, position) in game.kernel_unmoves(child)


@pytest.mark.parametrize("name, cols", [("diffusion", 2), ("diffusion-v2", 3), ("diffusion", 4)])
def test_ranking_is_a_bijection_on_every_tier(name, cols):
    game = make_game(name, cols=cols, stones=5 if cols < 4 else 1)
    kernel = game.kernel()
    for tier in game.tiers():
        boards = [b for b in itertools.product(range(6), repeat=game.npits) if sum(b) == tier] \
            if game.npits <= 6 else [tuple(r) for r in kernel.unrank_range(tier, 0, game.tier_size(tier))]
        assert len(boards) == game.tier_size(tier)
        assert sorted(kernel.rank(b)[1] for b in boards) == list(range(len(boards)))
