"""Zig Zag un-moves (the compact score solver walks them backwards): the kernel's predecessors
of a position are exactly the positions from which a move of the reference rules (RULES.md
section 3, solver/games/zigzag.py) that captures nothing leads to it, once per such move --
every position of small tiers, and random positions of the standard board with many seeds,
where turns run many laps."""
import collections
import random

import pytest

from sowsolve.cext import zigzag as zigzag_kernel
from sowsolve.solver.games.zigzag import Position, ZigZag


def index_of(game, position):
    return zigzag_kernel.rank(game.kernel(), position.board, 0 if position.side == "P" else 1,
                              position.ko)[1]


def tier_view(game, seeds):
    """The tier of `seeds` seeds; its lower tiers are not read by un-moves."""
    return zigzag_kernel.ScoreTierOf(game.kernel(), seeds, 1, {})


@pytest.mark.parametrize("cols,seeds", [(2, 1), (2, 4), (2, 8), (4, 3), (4, 6), (6, 3)])
def test_every_position_of_a_tier_has_exactly_its_predecessors(cols, seeds):
    game = ZigZag(cols=cols, stones=9)
    view = tier_view(game, seeds)
    size = zigzag_kernel.tier_size(game.npits, seeds)
    expected = collections.defaultdict(list)
    for position in game.stored_positions(seeds * 3 + 1, 0, size):
        for pit, turn in game.turns(position):
            if not turn.captured:
                child = Position(turn.board, game.other(position.side), turn.ko, position.last)
                expected[index_of(game, child)].append(index_of(game, position))
    assert sum(len(v) for v in expected.values()) > size // 4      # moves that stay do exist
    for index in range(size):
        assert sorted(view.unmoves(index)) == sorted(expected[index]), index


def random_position(game, rng, seeds):
    board = [0] * game.npits
    for _ in range(seeds):
        board[rng.randrange(game.npits)] += 1
    side = rng.choice("Pp")
    row = 0 if side == "P" else game.cols
    ko = rng.choice([None, row + game.cols // 2 - 1, row + game.cols // 2])
    return Position(tuple(board), side, ko, "P")


def test_random_positions_of_the_standard_board_replay_their_un_moves():
    game = ZigZag(cols=6, stones=5)
    rng = random.Random(2007)
    checked = 0
    for _ in range(400):
        seeds = rng.randrange(20, 60)
        view = tier_view(game, seeds)
        position = random_position(game, rng, seeds)
        # forwards: every move that keeps the tier is found among its child's un-moves
        for pit, turn in game.turns(position):
            if turn.captured:
                continue
            child = Position(turn.board, game.other(position.side), turn.ko, "P")
            assert index_of(game, position) in view.unmoves(index_of(game, child))
            checked += 1
        # backwards: every un-move replays to the position, as often as it is listed
        index = index_of(game, position)
        parents = view.unmoves(index)
        for parent in set(parents):
            before = game.stored_positions(seeds * 3 + 1, parent, parent + 1)[0]
            leading = [p for p, t in game.turns(before) if not t.captured
                       and Position(t.board, game.other(before.side), t.ko, "P") == position]
            assert len(leading) == parents.count(parent)
        checked += len(parents)
    assert checked > 1000


def test_unturns_of_a_board_are_the_boards_and_pits_of_the_rules():
    """The board-level walk (before the index is taken): the rule sheet's two-lap example."""
    game = ZigZag(cols=6, stones=5)
    before = game.parse_position("565656/056565 P - -")
    after = game.play(before, game.parse_move(before, "D"))
    found = zigzag_kernel.unturns_of(game.kernel(), after.board, 0, after.ko)
    assert (3, before.board) in found
    for pit, board in found:
        replay = game.play(Position(board, "P", None, None), pit)
        assert replay.board == after.board and replay.ko == after.ko
