"""Solved tables of tiny boards against a brute-force minimax written here, from the rule text,
without the package's rules, kernel or solver."""
import functools
import sys

import pytest

from conftest import solve_to
from sowsolve.tables.store import open_table

COMPASS = {"E": (0, 1), "NE": (-1, 1), "N": (-1, 0), "NW": (-1, -1), "W": (0, -1),
           "SW": (1, -1), "S": (1, 0), "SE": (1, 1)}
DEAL = {1: ["E", "NE", "N", "NW", "W"], 0: ["W", "SW", "S", "SE", "E"]}   # row 1 is the bottom


def brute_force(cols: int, variant: int):
    def owner(row, col):
        if variant == 1:
            return "A" if col < cols // 2 else "B"
        return "A" if row == 1 else "B"

    cells = [(r, c) for r in (0, 1) for c in range(cols)]

    def after(board, r, c):
        grid = {cell: n for cell, n in zip(cells, board)}
        stones, grid[(r, c)] = grid[(r, c)], 0
        for direction in DEAL[r][:stones]:
            dr, dc = COMPASS[direction]
            target = (r + dr, c + dc)
            if target in grid and grid[target] < 5:
                grid[target] += 1
        return tuple(grid[cell] for cell in cells)

    @functools.lru_cache(maxsize=None)
    def value(board, side):
        for who in "AB":
            if all(n == 0 for cell, n in zip(cells, board) if owner(*cell) == who):
                return ("win" if who == side else "loss", 0)
        other = "B" if side == "A" else "A"
        results = [value(after(board, r, c), other) for (r, c), n in zip(cells, board) if n]
        wins = [rem for v, rem in results if v == "loss"]
        if wins:
            return ("win", min(wins) + 1)
        return ("loss", max(rem for _, rem in results) + 1)

    return value


@pytest.mark.slow
@pytest.mark.parametrize("name, cols, stones", [
    ("diffusion", 2, 1), ("diffusion", 2, 2), ("diffusion", 2, 3),
    ("diffusion-v2", 2, 1), ("diffusion-v2", 2, 2), ("diffusion-v2", 2, 3),
    ("diffusion-v2", 3, 1), ("diffusion-v2", 3, 2), ("diffusion", 4, 1),
])
def test_every_stored_value_equals_brute_force(tmp_path, name, cols, stones):
    sys.setrecursionlimit(20000)
    game = solve_to(tmp_path / "t.sqlite", name, cols=cols, stones=stones)
    minimax = brute_force(cols, 1 if name == "diffusion" else 2)
    compared = 0
    with open_table(tmp_path / "t.sqlite") as table:
        for tier in table.tiers:
            for start, records in table.iter_blocks(tier):
                for position, record in zip(game.stored_positions(tier, start, start + records.size),
                                            records.tolist()):
                    for image in game.images(position):
                        expected = minimax(image.board, image.side)
                        assert (table.probe(image).value, table.probe(image).remoteness) == expected, \
                            game.format_position(image)
                        compared += 1
    assert compared == 2 * sum(game.tier_size(t) for t in game.tiers())
