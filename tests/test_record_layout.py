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
                      "max_remoteness": 510}


def graph(sides, moves, bound, endless_value):
    """A tier graph for solve_graph: moves[i] lists ("to", j) or ("exit", value for P, remoteness)."""
    width = max(1, max(len(m) for m in moves))
    n = len(sides)
    same = np.full(n * width, -1, dtype=np.int32)
    exit_value = np.zeros(n * width, dtype=np.int16)
    exit_rem = np.zeros(n * width, dtype=np.uint8)
    for i, listed in enumerate(moves):
        for j, move in enumerate(listed):
            if move[0] == "to":
                same[i * width + j] = move[1]
            else:
                same[i * width + j] = -2
                exit_value[i * width + j], exit_rem[i * width + j] = move[1], move[2]
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
    records, finals, endless = scoresolve.solve_graph(g)
    assert [decode(r) for r in records] == [(3, 1), (-2, 5), (0, None), (0, None), (0, 0)]
    assert (finals, endless) == (1, 2)
    assert all(records != 0)


def test_the_score_solver_refuses_a_margin_a_record_cannot_hold():
    too_far = MARGIN["bias"]        # margins go from -(bias - 1) to bias - 1: 0 stays "unsolved"
    g = graph(sides=[0], moves=[[("exit", too_far, 0)]], bound=too_far, endless_value=0)
    with pytest.raises(RuntimeError, match="margin"):
        scoresolve.solve_graph(g)


@pytest.fixture(scope="module")
def zigzag_2x2():
    return make_game("zigzag", cols=2, stones=2)


def lower_tiers(game, seeds, margin_of):
    """Every tier below `seeds` seeds where P captured last (the tables' tiers: positions where
    p did are stored turned), each record saying margin_of(s) and remoteness 10 s + 1."""
    return {s: np.full(zigzag_kernel.tier_size(game.npits, s), encode(margin_of(s), 10 * s + 1),
                       dtype=np.uint16)
            for s in range(seeds)}


def test_zigzag_score_tiers_read_captures_through_the_margin_layout(zigzag_2x2):
    game, seeds = zigzag_2x2, 3
    kernel = game.kernel()
    # a lower record says its side to move gets every seed left: P when P is to move after a
    # capture by p (stored turned: p to move, P captured last), p after a capture by P
    tier = zigzag_kernel.ScoreTierOf(kernel, seeds, 0, lower_tiers(game, seeds, lambda s: s))
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
            assert remoteness == 10 * left + 1
            checked += 1
    assert checked > 0


def test_zigzag_score_tiers_refuse_a_margin_beyond_the_seeds_left(zigzag_2x2):
    game, seeds = zigzag_2x2, 3
    tier = zigzag_kernel.ScoreTierOf(game.kernel(), seeds, 0, lower_tiers(game, seeds, lambda s: s + 1))
    with pytest.raises(RuntimeError, match="exceeds the seeds left"):
        for index in range(tier.size):
            tier.moves(index)
    with pytest.raises(RuntimeError, match="exceeds the seeds left"):
        scoresolve.solve_tier(tier, 2)
