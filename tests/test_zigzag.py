"""Zig Zag rules: rule-sheet vectors, one test per clause, kernel against the reference."""
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import vectors
from sowsolve.solver.errors import BadParameters, BadPosition
from sowsolve.solver.games import make_game
from sowsolve.solver.games.zigzag import Position

G = make_game("zigzag", cols=6, stones=5)


@pytest.mark.parametrize("vector", vectors("zigzag")["moves"], ids=lambda v: v["name"])
def test_rule_sheet_examples(vector):
    game = make_game("zigzag", **vector["parameters"])
    position = game.parse_position(vector["position"])
    move = game.parse_move(position, vector["move"])
    assert game.format_position(game.play(position, move)) == vector["after"]
    assert game.captured_by(position, move) == vector["extra"]["captured"]
    assert dict(game.kernel_moves(position))[move] == game.play(position, move)


def test_the_start_is_the_rule_sheets():
    assert G.format_position(G.initial()) == "555555/555555 p - -"


def test_circuit_zig_zags_and_crosses_at_the_ends():
    assert [G.pit_names[p] for p in G.circuit] == list("aBcDeFfEdCbA")


def test_first_lap_goes_towards_the_centre():
    for pit in range(G.npits):
        nxt = G.step(pit, G.first_orientation(pit))
        assert (G.col(nxt) > G.col(pit)) == (G.col(pit) < 3)


def test_later_laps_keep_the_orientation():
    # D sows leftwards (c B a A b C); C then continues the same way round (d E f F e D)
    position = G.parse_position("565656/056565 P - -")
    assert G.format_position(G.play(position, 3)).startswith("670167/167676")


def test_an_empty_own_pit_ends_the_turn():
    position = G.parse_position("000000/200000 p - -")      # a (2 seeds): B, then c, empty and own
    assert G.format_position(G.play(position, 6)) == "010000/001000 P - -"


def test_capture_of_zero_is_no_capture():
    position = G.parse_position("000000/001000 p - P")      # c (1 seed) -> D empty; d empty
    after = G.play(position, 8)
    assert G.captured_by(position, 8) == 0 and after.last == "P"


def test_ko_forbids_sowing_the_lone_seed_straight_back():
    position = G.parse_position("110011/111011 p - -")
    after = G.play(position, G.parse_move(position, "c"))
    assert G.format_position(after) == "110111/110011 P D -"
    assert "D" not in [G.format_move(m) for m in G.legal_moves(after)]
    assert all(pit != 3 for pit, _ in G.kernel_moves(after))


def test_ko_allows_the_seed_back_when_it_captures():
    position = G.parse_position("111011/111011 p - -")
    after = G.play(position, G.parse_move(position, "c"))
    assert G.format_position(after) == "111111/110011 P D -"
    assert G.captured_by(after, 3) == 1


def test_no_ko_without_crossing_the_centre():
    position = G.parse_position("100000/010000 p - -")      # b (1 seed) -> C: empty, same half
    after = G.play(position, 7)
    assert after.ko is None


def test_turns_always_end():
    """A lap that goes on drops a seed in the opponent's row, which no lap empties: a turn has
    at most as many laps as there are seeds, so no pit is ever refused for endless laps."""
    game = make_game("zigzag", cols=2, stones=5)
    for board in itertools.product(range(9), repeat=4):
        for side in "Pp":
            for pit in range(4):
                if game.owner(pit) == side and board[pit]:
                    assert game.sow(board, side, pit) is not None


def test_the_game_ends_without_moves_and_the_leftover_goes_to_the_last_capturer():
    position = G.parse_position("000000/030000 P - p")      # P has no seed to lift
    assert G.legal_moves(position) == [] and G.outcome(position) == "loss"
    assert G.leftover_margin(position) == -3
    assert G.leftover_margin(position._replace(last=None)) == 0


@pytest.mark.parametrize("text", ["555555/555555 p -", "555555/555555 x - -", "55555/555555 p - -",
                                  "555555/555555 p a -", "555555/555555 p D -", "555555/555555 p - q",
                                  "99999,9/555555 p - -", "5555\u06f55/555555 p - -"])
def test_bad_positions(text):
    with pytest.raises(BadPosition):
        G.parse_position(text)


@pytest.mark.parametrize("cols, stones", [(3, 5), (0, 5), (10, 5), (6, 0), (6, 10)])
def test_bad_parameters(cols, stones):
    with pytest.raises(BadParameters):
        make_game("zigzag", cols=cols, stones=stones)


@st.composite
def positions(draw):
    cols = draw(st.sampled_from([2, 4, 6, 8]))
    game = make_game("zigzag", cols=cols, stones=5)
    board = tuple(draw(st.lists(st.integers(0, 12), min_size=2 * cols, max_size=2 * cols)))
    side = draw(st.sampled_from("Pp"))
    own = [p for p in range(2 * cols) if game.owner(p) == side and p % cols in (cols // 2 - 1, cols // 2)]
    ko = draw(st.sampled_from([None] + own))
    return game, Position(board, side, ko, draw(st.sampled_from([None, "P", "p"])))


@settings(max_examples=500, deadline=None)
@given(positions())
def test_kernel_turns_equal_reference_turns(case):
    game, position = case
    assert game.kernel_moves(position) == [(m, game.play(position, m)) for m in game.legal_moves(position)]


