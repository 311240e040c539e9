"""Perft: the Diffusion kernel agrees with a plain Python count (the perft counts of RULES.md
are in the games' vector files, solver/games/<game>/<game>.json, checked by test_vectors.py)."""
import pytest

from sowsolve.solver.games import make_game


def python_perft(game, position, depth):
    counts = [0] * depth
    frontier = [position]
    for ply in range(depth):
        frontier = [game.play(p, m) for p in frontier for m in game.legal_moves(p)]
        counts[ply] = len(frontier)
    return counts


@pytest.mark.parametrize("name, cols, stones, position, depth", [
    ("diffusion", 4, 3, None, 4),
    ("diffusion-v2", 3, 2, None, 5),
    ("diffusion", 6, 4, "000103/100000 B", 6),   # games end inside the horizon
    ("diffusion-v2", 5, 1, "10000/00001 A", 8),
])
def test_kernel_perft_equals_reference_perft(name, cols, stones, position, depth):
    game = make_game(name, cols=cols, stones=stones)
    start = game.initial() if position is None else game.parse_position(position)
    assert game.kernel().perft(start.board, depth) == python_perft(game, start, depth)
