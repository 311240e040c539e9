"""Zig Zag: turning the board 180 degrees and swapping the players' names is a symmetry of the
rules (every position of 2x2, a sample of 2x6) and so of the solved values."""
import json
import math
import random

import pytest
from typer.testing import CliRunner

from sowsolve.cli.app import app
from sowsolve.solver.games import make_game
from sowsolve.solver.games.zigzag import Position
from sowsolve.solver.kernels import solve_score_tier
from sowsolve.solver.values import MARGIN
from sowsolve.tables import open_table

OTHER = {"P": "p", "p": "P", None: None}


def boards(total, pits):
    """Every board of `pits` pits holding at most `total` seeds."""
    def fill(left, parts):
        if parts == 0:
            yield ()
            return
        for x in range(left + 1):
            for rest in fill(left - x, parts - 1):
                yield (x,) + rest
    return fill(total, pits)


def ko_pits(cols, side):
    """RULES.md: the ko pit is the empty pit of the mover's row that a lone seed reached across
    the centre line, so one of the mover's two centre pits (or none)."""
    row = 0 if side == "P" else cols
    return [None, row + cols // 2 - 1, row + cols // 2]


def every_position(cols, stones):
    for board in boards(2 * cols * stones, 2 * cols):
        for side in "Pp":
            for ko in ko_pits(cols, side):
                for last in (None, "P", "p"):
                    yield Position(board, side, ko, last)


def pit(cols, row, col):
    return row * cols + col


def expected_turn(cols, position):
    """The board turned half a turn, written from the geometry: (row, col) goes to
    (other row, cols-1-col); the names of the players swap with the rows they sit at."""
    board = [None] * (2 * cols)
    for row in (0, 1):
        for col in range(cols):
            board[pit(cols, 1 - row, cols - 1 - col)] = position.board[pit(cols, row, col)]
    ko = None
    if position.ko is not None:
        row, col = divmod(position.ko, cols)
        ko = pit(cols, 1 - row, cols - 1 - col)
    return Position(tuple(board), OTHER[position.side], ko, OTHER[position.last])


def assert_symmetric(game, position, kernel=False):
    turned = game.turned(position)
    assert turned == expected_turn(game.cols, position)
    assert game.turned(turned) == position
    moves = game.legal_moves(position)
    assert sorted(game.legal_moves(turned)) == sorted(game.turned_move(m) for m in moves)
    for m in moves:
        image = game.turned_move(m)
        assert game.play(turned, image) == game.turned(game.play(position, m))
        assert game.captured_by(turned, image) == game.captured_by(position, m)
    assert game.leftover_margin(turned) == game.leftover_margin(position)
    if kernel:        # the compiled rules the solver uses, the same way
        assert (sorted(game.kernel_moves(turned))
                == sorted((game.turned_move(m), game.turned(child))
                          for m, child in game.kernel_moves(position)))


def test_the_turn_is_the_half_turn_of_the_board():
    game = make_game("zigzag", cols=6, stones=5)
    position = game.parse_position("1,0,2,0,3,0/4,0,5,0,10,0 P D p")
    assert game.format_position(game.turned(position)) == "0,10,0,5,0,4/0,3,0,2,0,1 p c P"
    assert [game.pit_names[game.turned_move(m)] for m in range(12)] == list("fedcbaFEDCBA")


@pytest.mark.slow
@pytest.mark.parametrize("stones", [1, 2, 3])
def test_every_2x2_position_is_symmetric(stones):
    game = make_game("zigzag", cols=2, stones=stones)
    count = 0
    for position in every_position(2, stones):
        assert_symmetric(game, position, kernel=True)
        count += 1
    assert count == math.comb(4 * stones + 4, 4) * 2 * 3 * 3     # boards, sides, kos, capturers


def random_play_positions(game, rng, games, plies):
    for _ in range(games):
        position = game.initial()
        for _ in range(plies):
            yield position
            moves = game.legal_moves(position)
            if not moves:
                break
            position = game.play(position, rng.choice(moves))


def random_positions(game, rng, count):
    for _ in range(count):
        board = [0] * game.npits
        for _ in range(rng.randint(0, game.total)):
            board[rng.randrange(game.npits)] += 1
        side = rng.choice("Pp")
        yield Position(tuple(board), side, rng.choice(ko_pits(game.cols, side)),
                       rng.choice([None, "P", "p"]))


@pytest.mark.slow
def test_a_sample_of_2x6_positions_is_symmetric():
    game = make_game("zigzag", cols=6, stones=5)
    rng = random.Random(20070)
    played = list(random_play_positions(game, rng, games=40, plies=80))
    assert len(played) > 2000 and any(p.ko is not None for p in played)
    assert any(p.last is not None for p in played)
    for position in played + list(random_positions(game, rng, 2000)):
        assert_symmetric(game, position, kernel=True)


@pytest.mark.parametrize("stones", [2, 3])
def test_solved_values_are_symmetric(tmp_path, stones):
    """Tables store one position of each turned pair (the one where P captured last); here the
    tiers where p captured last are solved too, directly, and each record (margin and
    remoteness) must equal the stored record of its turned position."""
    table = tmp_path / "z.sqlite"
    solved = CliRunner().invoke(app, ["solve", "zigzag", "--cols", "2", "--stones", str(stones),
                                      "--table", str(table), "--json"])
    assert solved.exit_code == 0, solved.output
    assert json.loads(solved.stdout)["parameters"] == {"cols": 2, "stones": stones}
    game = make_game("zigzag", cols=2, stones=stones)
    margins = set()
    with open_table(table) as t:
        stored = {tier // 3: t.tier_data(tier) for tier in t.tiers if tier % 3 == 1}
        for seeds in range(game.total):
            lower = {s * 3 + 1: stored[s] for s in range(seeds)}
            p_last, *_ = solve_score_tier(game.score_tier(seeds * 3 + 2, lower), 2)
            size = game.tier_size(seeds * 3 + 2)
            for index, position in enumerate(game.stored_positions(seeds * 3 + 1, 0, size)):
                mine = position._replace(last="p")
                image = game.turned(mine)
                assert image.last == "P"
                value = MARGIN.decode(int(p_last[index]))    # the same index in p's tier
                expected = t.probe(image)
                assert (value.margin, value.remoteness) == (expected.margin, expected.remoteness), \
                    game.format_position(mine)
                margins.add(value.margin)
    assert len(margins) > 2 * stones        # the values do differ from position to position
