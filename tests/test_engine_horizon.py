"""The games' look at a state on the search's horizon (PlayKernel.horizon): the engine reads it
in place of making every child and weighing the features, so it must say exactly what those
say -- the game over (with the same score) or the same features.  Only Zig Zag gives one (a
margin game: no move "wins at once" there)."""
import random

import pytest

from conftest import random_walk
from sowsolve.cext.engine import Engine
from sowsolve.solver.games import make_game

BOARDS = [("zigzag", dict(cols=2, stones=2)), ("zigzag", dict(cols=4, stones=3)),
          ("zigzag", dict(cols=6, stones=5)), ("zigzag", dict(cols=8, stones=1))]


@pytest.mark.parametrize("name,board", BOARDS)
def test_the_horizon_says_what_the_moves_and_features_say(name, board):
    game = make_game(name, **board)
    engine = Engine(game.play_kernel(), list(game.evaluation.weights), 1 << 20)
    rng = random.Random(11)
    seen = {"over": 0, "goes on": 0}
    for walk in range(60):
        # half the walks to the end of the game, half stopped on the way
        position = random_walk(game, rng, 10_000 if walk % 2 else rng.randrange(0, 120))
        state = game.play_state(position)
        kind, what = engine.horizon(state)
        seen[kind] += 1
        if kind == "over":
            assert not engine.moves(state) and what == engine.final(state), game.format_position(position)
        else:
            assert engine.moves(state) and what == engine.features_of(state), game.format_position(position)
    assert seen["goes on"] and seen["over"]


@pytest.mark.parametrize("name,board", [("diffusion", dict(cols=4, stones=2)), ("overflow", dict(size="3x3"))])
def test_a_game_without_the_look_is_searched_through_its_moves(name, board):
    game = make_game(name, **board)
    engine = Engine(game.play_kernel(), list(game.evaluation.weights), 1 << 20)
    assert engine.horizon(game.play_state(game.initial())) is None
