"""The record layouts the compiled modules expose (retrograde.WINLOSS_LAYOUT,
scoresolve.MARGIN_LAYOUT) are the table format, and the kernels read and write margin records
as MARGIN_LAYOUT says: values worked out by hand from the score solver's rules, and Zig Zag
captures from the reference rules."""
import numpy as np
import pytest

from sowsolve.cext import retrograde, scoresolve
from sowsolve.cext import zigzag as zigzag_kernel
from sowsolve.solver.games import make_game
from sowsolve.solver.games.zigzag import Position

MARGIN = scoresolve.MARGIN_LAYOUT
#: the remoteness of an exit into play that never ends, as kernels hand it to the solvers
NO_END = 0xFFFF


def encode(margin, remoteness):
    rem = MARGIN["endless"] if remoteness is None else remoteness
    return (rem << MARGIN["rem_shift"]) | (margin + MARGIN["bias"])


def decode(record):
    record = int(record)
    rem = record >> MARGIN["rem_shift"]
    return (record & MARGIN["value_mask"]) - MARGIN["bias"], None if rem == MARGIN["endless"] else rem


def test_the_layouts_are_those_of_the_table_format():
    # What tables on disk hold (README, "Records"): tables written before must still read the
    # same.  (Margin records took 8 + 8 bits until Zig Zag tables began to store one record per
    # position and its half-turn; tables of that layout are refused, see test_format_compat.)
    assert retrograde.WINLOSS_LAYOUT == {"unsolved": 0, "loss": 1, "draw": 2, "win": 3,
                                         "outcome_bits": 2, "max_remoteness": 2 ** 14 - 1}
    assert MARGIN == {"bias": 64, "rem_shift": 7, "value_mask": 127, "endless": 511,
                      "long": 510, "long_shift": 16, "max_remoteness": 65533}


def graph(sides, moves, bound, endless_value):
    """A tier graph for solve_graph: moves[i] lists ("to", j) or ("exit", value for P, remoteness)."""
    width = max(1, max(len(m) for m in moves))
    n = len(sides)
    same = np.full(n * width, -1, dtype=np.int32)
    exit_value = np.zeros(n * width, dtype=np.int16)
    exit_rem = np.zeros(n * width, dtype=np.uint16)
    for i, listed in enumerate(moves):
        for j, move in enumerate(listed):
            if move[0] == "to":
                same[i * width + j] = move[1]
            else:
                same[i * width + j] = -2
                exit_value[i * width + j] = move[1]
                exit_rem[i * width + j] = NO_END if move[2] is None else move[2]
    return {"side": np.array(sides, dtype=np.uint8), "moves": np.array([len(m) for m in moves], dtype=np.uint8),
            "same": same, "width": width, "exit_value": exit_value, "exit_remoteness": exit_rem,
            "captures": np.array([any(m[0] == "exit" for m in listed) for listed in moves], dtype=np.uint8),
            "bound": bound, "endless_value": endless_value}


def test_the_score_solver_writes_the_margin_layout():
    # 0: P takes an exit worth +3 to P at once; 1: p's only move is an exit worth +2 to P, 4 plies
    # from the end; 2 (P) and 3 (p) send play back and forth rather than take an exit worth -1 or
    # +1 to P, each worse for the mover than play without end (worth 0); 4: p has no move at all.
    g = graph(sides=[0, 1, 0, 1, 1],
              moves=[[("exit", 3, 0)], [("exit", 2, 4)], [("to", 3), ("exit", -1, 0)],
                     [("to", 2), ("exit", 1, 0)], []],
              bound=3, endless_value=0)
    records, long, finals, endless = scoresolve.solve_graph(g)
    assert [decode(r) for r in records] == [(3, 1), (-2, 5), (0, None), (0, None), (0, 0)]
    assert (finals, endless) == (1, 2)
    assert all(records != 0) and long.size == 0


def test_a_remoteness_past_nine_bits_goes_to_the_long_table():
    # 0 (P) exits at once, worth +1, into a line 508 plies long; 1 (p) must move to 0; 2 (P)
    # must move to 1; 3 (p) exits worth -2 into a line 5000 plies long; 4 (P) exits into play
    # that never ends.  Remoteness 509, 510, 511, 5001, no end: the first fits the record,
    # the next three are long.  (test_score_solvers.py compares the compact solver's long
    # tables with these.)
    g = graph(sides=[0, 1, 0, 1, 0],
              moves=[[("exit", 1, 508)], [("to", 0)], [("to", 1)], [("exit", -2, 5000)],
                     [("exit", 3, None)]],
              bound=3, endless_value=0)
    records, long, _, _ = scoresolve.solve_graph(g)
    fields = [int(r) >> MARGIN["rem_shift"] for r in records]
    assert fields == [509, MARGIN["long"], MARGIN["long"], MARGIN["long"], MARGIN["endless"]]
    assert [(int(r) & MARGIN["value_mask"]) - MARGIN["bias"] for r in records] == [1, -1, 1, 2, 3]
    assert [(int(e) >> MARGIN["long_shift"], int(e) & 0xFFFF) for e in long] == \
        [(1, 510), (2, 511), (3, 5001)]


def test_a_line_past_the_longest_a_tier_holds_is_refused():
    g = graph(sides=[0], moves=[[("exit", 1, MARGIN["max_remoteness"])]], bound=1, endless_value=0)
    with pytest.raises(RuntimeError, match="remoteness passed"):
        scoresolve.solve_graph(g)
    g = graph(sides=[0], moves=[[("exit", 1, MARGIN["max_remoteness"] - 1)]], bound=1, endless_value=0)
    records, long, _, _ = scoresolve.solve_graph(g)
    assert [int(e) & 0xFFFF for e in long] == [MARGIN["max_remoteness"]]


def test_the_score_solver_refuses_a_margin_a_record_cannot_hold():
    too_far = MARGIN["bias"]        # margins go from -(bias - 1) to bias - 1: 0 stays "unsolved"
    g = graph(sides=[0], moves=[[("exit", too_far, 0)]], bound=too_far, endless_value=0)
    with pytest.raises(RuntimeError, match="margin"):
        scoresolve.solve_graph(g)


@pytest.fixture(scope="module")
def zigzag_2x2():
    return make_game("zigzag", cols=2, stones=2)


def lower_tiers(game, seeds, margin_of, plies_of=lambda s: 10 * s + 1, drop_long=False):
    """Every tier below `seeds` seeds where P captured last (the tables' tiers: positions where
    p did are stored turned), each record saying margin_of(s) and remoteness plies_of(s) (in
    the long table past the record's 9 bits; `drop_long`: a long table that lacks them)."""
    tiers = {}
    for s in range(seeds):
        size = zigzag_kernel.tier_size(game.npits, s)
        plies = plies_of(s)
        records = np.full(size, encode(margin_of(s), min(plies, MARGIN["long"])), dtype=np.uint16)
        at = np.arange(size if plies >= MARGIN["long"] and not drop_long else 0, dtype=np.uint64)
        tiers[s] = (records, (at << np.uint64(MARGIN["long_shift"])) | np.uint64(plies))
    return tiers


@pytest.mark.parametrize("plies_of", [lambda s: 10 * s + 1, lambda s: 500 + 7 * s])
def test_zigzag_score_tiers_read_captures_through_the_margin_layout(zigzag_2x2, plies_of):
    game, seeds = zigzag_2x2, 3
    kernel = game.kernel()
    # a lower record says its side to move gets every seed left: P when P is to move after a
    # capture by p (stored turned: p to move, P captured last), p after a capture by P; the
    # remoteness of 500 + 7 s plies is in the long table from 2 seeds on
    tier = zigzag_kernel.ScoreTierOf(kernel, seeds, 0, lower_tiers(game, seeds, lambda s: s, plies_of))
    boards, sides, kos = zigzag_kernel.unrank_range(kernel, seeds, 0, zigzag_kernel.tier_size(game.npits, seeds))
    checked = 0
    for i, (board, side, ko) in enumerate(zip(boards, sides, kos)):
        mover = "P" if side == 0 else "p"
        position = Position(tuple(int(x) for x in board), mover, None if ko < 0 else int(ko), None)
        turns = sorted(game.turns(position), key=lambda t: t[0])
        moves = tier.moves(i)
        assert len(moves) == len(turns)
        for (target, value, remoteness), (_, turn) in zip(moves, turns):
            if not turn.captured:
                assert target is not None and target >= 0
                continue
            # after the capture the other side moves with `left` seeds on the board and gets
            # them all (the record's margin): the capture is worth captured - left to the mover
            left = seeds - turn.captured
            worth = turn.captured - left
            assert target is None
            assert value == (worth if mover == "P" else -worth)
            assert remoteness == plies_of(left)
            checked += 1
    assert checked > 0


def test_zigzag_score_tiers_refuse_a_long_record_its_table_lacks(zigzag_2x2):
    game, seeds = zigzag_2x2, 3
    tier = zigzag_kernel.ScoreTierOf(game.kernel(), seeds, 0,
                                     lower_tiers(game, seeds, lambda s: 0, lambda s: 600, True))
    with pytest.raises(RuntimeError, match="long table lacks"):
        for index in range(tier.size):
            tier.moves(index)
    with pytest.raises(RuntimeError, match="long table lacks"):
        scoresolve.solve_tier(tier, 2)


def test_zigzag_score_tiers_refuse_a_margin_beyond_the_seeds_left(zigzag_2x2):
    game, seeds = zigzag_2x2, 3
    tier = zigzag_kernel.ScoreTierOf(game.kernel(), seeds, 0, lower_tiers(game, seeds, lambda s: s + 1))
    with pytest.raises(RuntimeError, match="exceeds the seeds left"):
        for index in range(tier.size):
            tier.moves(index)
    with pytest.raises(RuntimeError, match="exceeds the seeds left"):
        scoresolve.solve_tier(tier, 2)
