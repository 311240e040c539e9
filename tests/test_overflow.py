"""Overflow: RULES.md vectors and clauses, kernel against the reference rules, packing, and
solved values against a plain minimax written here."""
import functools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import reference_children, vectors
from sowsolve.solver.errors import BadParameters, BadPosition
from sowsolve.solver.games import make_game
from sowsolve.solver.games.overflow import Position
from sowsolve.solver.search import search
from sowsolve.tables.store import open_table

# The legal moves at the start and the perft counts of RULES.md are in solver/games/overflow/overflow.json,
# checked by test_vectors.py.

G44 = make_game("overflow", size="4x4")


def test_houses_a1_is_dark_and_light_moves_first():
    assert G44.house[0] == "D" and G44.house[1] == "L" and G44.house[4] == "L" and G44.house[5] == "D"
    assert G44.initial().side == "L"


def test_running_into_the_edge_piles_the_rest_on_the_edge_cell():
    p = G44.parse_position("1111/1111/1111/0031 L")        # c1 (3 discs) east: only d1 is left
    assert G44.sow(p.heights, 2, 0) == ("contained", 1, (0, 0, 0, 4) + p.heights[4:])


def test_overflow_move_drops_the_rest_off_the_board():
    p = G44.parse_position("0000/0000/1110/1014 L")        # d1 (4) west: 3 cells, b1 empty
    assert G44.sow(p.heights, 3, 4) == ("overflow", 0, (2, 1, 2, 0) + p.heights[4:])


def test_contained_move_stops_at_the_first_empty_cell():
    p = G44.parse_position("0000/0000/1111/3101 L")        # a1 (3) east: 3 cells, none beyond
    assert G44.sow(p.heights, 0, 0) == ("contained", 1, (0, 4, 0, 1) + p.heights[4:])


def test_contained_moves_must_reach_as_far_as_possible():
    p = G44.parse_position("0000/0000/1111/3101 L")
    directions = {d for (cell, d) in G44.legal_moves(p) if cell == 0}
    reaches = {d: G44.sow(p.heights, 0, d)[1] for d in range(8) if G44.sow(p.heights, 0, d)}
    best = max(reaches.values())
    assert directions == {d for d, r in reaches.items() if r == best}


def test_one_group_after_every_move():
    rng = random.Random(5)
    p = G44.initial()
    for _ in range(30):
        moves = G44.legal_moves(p)
        if not moves:
            break
        p = G44.play(p, rng.choice(moves))
        assert G44.one_group(p.heights)


def test_empty_house_wins_for_the_other_house_whoever_moved():
    p = G44.parse_position("0000/0000/0100/2000 D")        # only dark cells (a1, b2): Dark wins
    assert G44.outcome(p) == "win" and G44.legal_moves(p) == []
    assert G44.outcome(p._replace(side="L")) == "loss"


def test_position_and_move_text():
    p = G44.initial()
    assert G44.format_position(p) == "1111/1111/1111/1111 L"
    assert G44.format_move((1, 1)) == "b1-c2"
    q = G44.parse_position("1,11,0,0/1,1,0,0/0,1,0,0/0,0,1,0 D")
    assert q.heights[13] == 11 and G44.format_position(q) == "1,11,0,0/1,1,0,0/0,1,0,0/0,0,1,0 D"


@pytest.mark.parametrize("text", ["111/111/111 L", "1111/1111/1111/1111 X", "1111/1111/1111 L",
                                   "1111/1111/1111/111a L", "1000/0000/0000/0001 L",
                                   "0000/0000/0000/0000 L", "9999/9999/9999/9999 L"])
def test_bad_positions(text):
    with pytest.raises(BadPosition):
        G44.parse_position(text)


@pytest.mark.parametrize("size", ["0x3", "3", "9x9", "1x4", "axb"])
def test_bad_sizes(size):
    with pytest.raises(BadParameters):
        make_game("overflow", size=size)


@st.composite
def walks(draw):
    size = draw(st.sampled_from(["3x3", "3x4", "4x4", "4x5", "5x5", "6x6", "8x8", "2x5"]))
    game = make_game("overflow", size=size)
    rng = random.Random(draw(st.integers(0, 10**9)))
    p = game.initial()
    # walked with the kernel's moves (the reference rules take seconds per walk on 8x8); each
    # test then compares the kernel with the reference rules at the position reached
    for _ in range(draw(st.integers(0, 25))):
        moves = game.kernel_moves(p)
        if not moves:
            break
        p = rng.choice(moves)[1]
    return game, p


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(walks())
def test_kernel_moves_equal_reference_moves(case):
    game, position = case
    other = "D" if position.side == "L" else "L"
    assert game.kernel_moves(position) == [(m, Position(h, other)) for m, h in game.moves_with_children(position)]


@settings(max_examples=100, deadline=None)
@given(walks())
def test_packing_round_trip_and_canonical_children(case):
    game, position = case
    if not game.kernel().keyable:
        return
    tier, key = game.key(position)
    stored = game.position_of_key(key)
    assert game.key(stored) == (tier, key)
    assert sum(stored.heights) == tier and game.outcome(stored) == game.outcome(position)
    view = game.kernel().children(key)
    children = [game.play(stored, m) for m in game.legal_moves(stored)]
    if children:
        assert view == [game.key(c)[1] for c in children]


def plain_packing(heights, side: str) -> int:
    """The packing the kernel documents: each cell's height in unary (that many one-bits, then a
    zero), cell after cell from a1, and the side to move (Dark: 1) in bit 63."""
    key, at = 0, 0
    for height in heights:
        key |= ((1 << height) - 1) << at
        at += height + 1
    return key | ((side == "D") << 63)


@settings(max_examples=150, deadline=None)
@given(walks())
def test_the_canonical_key_is_the_least_packing_of_the_symmetric_images(case):
    """The key of a position is the least plain packing among its images under the board's
    symmetries (the kernel finds it without packing every image)."""
    game, position = case
    if not game.kernel().keyable:
        return
    images = [position] + game.orientations(position)
    assert game.key(position)[1] == min(plain_packing(p.heights, p.side) for p in images)


#: one memo per board, shared by the tests that check against it (it takes seconds to fill)
_MINIMAX: dict = {}


def plain_minimax(game):
    """Negamax over the reference rules, memoised on the position itself (no symmetry)."""
    board = (game.name, tuple(sorted(game.parameters().items())))
    if board not in _MINIMAX:
        _MINIMAX[board] = _plain_minimax(game)
    return _MINIMAX[board]


def _plain_minimax(game):
    children = reference_children(game)

    @functools.lru_cache(maxsize=None)
    def value(position):
        outcome = game.outcome(position)
        if outcome:
            return outcome, 0
        results = [value(child) for child in children(position)]
        wins = [r for v, r in results if v == "loss"]
        if wins:
            return "win", min(wins) + 1
        return "loss", max(r for _, r in results) + 1
    return value


@pytest.mark.slow
def test_3x3_solve_equals_plain_minimax(tmp_path):
    from conftest import solve_to
    game = solve_to(tmp_path / "o.sqlite", "overflow", size="3x3")
    minimax = plain_minimax(game)
    with open_table(tmp_path / "o.sqlite") as table:
        start = table.probe(game.initial())
        assert tuple(start) == minimax(game.initial())
        count = 0
        for tier in table.tiers:
            for position in table.stored_positions(tier, 0, table.tier_size(tier)):
                assert tuple(table.probe(position)) == minimax(position), game.format_position(position)
                count += 1
        assert count == sum(table.tier_size(t) for t in table.tiers)
    # the 3x3 start value of solver/games/overflow/overflow.json, by the same minimax
    entry = next(e for e in vectors("overflow")["solved"] if e["parameters"] == {"size": "3x3"})
    start = game.initial() if entry["position"] is None else game.parse_position(entry["position"])
    children = [minimax(game.play(start, move)) for move in game.legal_moves(start)]
    assert (entry["value"], entry["remoteness"]) == minimax(start)
    assert entry["winning_moves"] == sum(value == "loss" for value, _ in children)
    assert entry["legal_moves"] == len(children)


def test_search_answers_positions_beyond_the_table():
    game = make_game("overflow", size="4x4")
    position = game.parse_position("0000/0120/0310/0000 L")
    solver = search(game, position, max_positions=10**6)
    minimax = plain_minimax(game)
    record = solver.record(game.key(position)[1])
    assert ({1: "loss", 3: "win"}[record & 3], record >> 2) == minimax(position)


@pytest.mark.slow
def test_overflow_through_the_commands(tmp_path):
    import csv
    import json

    from typer.testing import CliRunner

    from sowsolve.cli.app import app
    runner = CliRunner()
    table = tmp_path / "o.sqlite"
    solved = runner.invoke(app, ["solve", "overflow", "--size", "3x3", "--table", str(table), "--json"])
    assert solved.exit_code == 0, solved.output
    assert json.loads(solved.stdout)["positions_per_side"] == 6742
    q = json.loads(runner.invoke(app, ["query", "111/111/111 L", "--table", str(table), "--json"]).stdout)
    assert q["source"] == "table" and len(q["moves"]) == 40 and q["best"]
    assert all(m["move"].count("-") == 1 for m in q["moves"])
    # a position no game from the start reaches (Dark to move at the start) is searched
    q = json.loads(runner.invoke(app, ["query", "111/111/111 D", "--table", str(table), "--json"]).stdout)
    game = make_game("overflow", size="3x3")
    assert q["source"] == "search"
    assert (q["value"], q["remoteness"]) == plain_minimax(game)(game.parse_position("111/111/111 D"))
    out = tmp_path / "o.csv"
    assert runner.invoke(app, ["export", "--table", str(table), "--format", "csv", "--out", str(out)]).exit_code == 0
    rows = list(csv.DictReader(open(out)))
    assert len(rows) == 6742
    with open_table(table) as t:
        for row in rows[::97]:
            assert (row["value"], int(row["remoteness"])) == tuple(t.probe(row["position"]))
    check = runner.invoke(app, ["check", "--table", str(table), "--full", "--json"])
    assert check.exit_code == 0, check.output
    assert json.loads(check.stdout)["positions_verified"] == 6742
    assert runner.invoke(app, ["check", "overflow", "--size", "4x4", "--samples", "200"]).exit_code == 0
    perft = runner.invoke(app, ["perft", "overflow", "--size", "3x3", "--depth", "3", "--json"])
    assert json.loads(perft.stdout) == {"perft": [40, 1176, 22424]}
    bad = runner.invoke(app, ["solve", "overflow", "--size", "0x3", "--table", str(tmp_path / "n.sqlite")])
    assert bad.exit_code == 2 and not (tmp_path / "n.sqlite").exists()
    big = runner.invoke(app, ["solve", "overflow", "--size", "6x6", "--table", str(tmp_path / "n.sqlite")])
    assert big.exit_code == 2 and "64 bits" in big.stderr and not (tmp_path / "n.sqlite").exists()
