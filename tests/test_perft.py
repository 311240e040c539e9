"""Perft: the kernel reproduces RULES.md and agrees with a plain Python count."""
import pytest

from conftest import load_vectors
from sowsolve.solver.games import make_game

VECTORS = load_vectors("diffusion_vectors.json")["perft"]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["game"])
def test_perft_vectors(vector):
    game = make_game(vector["game"], cols=vector["cols"], stones=vector["stones"])
    start = game.initial() if vector["position"] is None else game.parse_position(vector["position"])
    assert game.kernel().perft(start.board, len(vector["counts"])) == vector["counts"]


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
