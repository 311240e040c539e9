"""The proof search's view of Diffusion (cext/diffusion.pyx `expand_key`): keys packed and
children generated in the kernel, against a packing and the moves written here from the rules
(RULES.md, Diffusion: 0..5 stones a pit; a position and its 180-degree turn with the other side
to move have one value)."""
import random

import pytest

from conftest import random_walk
from sowsolve.cext import proofsearch
from sowsolve.solver.games import make_game
from sowsolve.solver.kernels import Control
from sowsolve.solver.values import Value

BOARDS = [("diffusion", {"cols": 4, "stones": 2}), ("diffusion", {"cols": 6, "stones": 4}),
          ("diffusion", {"cols": 8, "stones": 5}), ("diffusion-v2", {"cols": 3, "stones": 3}),
          ("diffusion-v2", {"cols": 8, "stones": 4})]


def packed(board, side: str) -> int:
    """3 bits a pit in board order, the side to move (B: 1) above them; the lesser of the
    position's packing and its turn's (the board reversed, the other side to move)."""
    def pack(pits, b):
        return sum(stones << (3 * p) for p, stones in enumerate(pits)) | (b << (3 * len(pits)))
    b = 1 if side == "B" else 0
    return min(pack(board, b), pack(tuple(reversed(board)), 1 - b))


@pytest.mark.parametrize("name,board", BOARDS)
def test_keys_and_children_are_the_rules(name, board):
    game = make_game(name, **board)
    kernel = game.kernel()
    rng = random.Random(5)
    finals = 0
    for _ in range(300):
        position = random_walk(game, rng, rng.randrange(0, 600))
        key = game.proof_key(position)
        assert key == packed(position.board, position.side)
        turned = type(position)(tuple(reversed(position.board)), "A" if position.side == "B" else "B")
        assert game.proof_key(turned) == key
        children, record = kernel.children_of_key(key)
        outcome = game.outcome(position)
        if outcome is not None:
            finals += 1
            assert children == [] and Value.from_record(record) == Value(outcome, 0)
            continue
        expected = sorted(packed(game.play(position, m).board, game.play(position, m).side)
                          for m in game.legal_moves(position))
        assert sorted(children) == expected and record is None
    assert finals > 0


@pytest.mark.parametrize("cols", [4, 8])
def test_a_key_that_is_no_position_is_refused(cols):
    """Keys hold 3 bits a pit and the side above them: a pit of 6 or 7 stones, a bit above the
    side's, the empty board (key 0 marks an empty slot of the proof's table), a negative key or
    one beyond 64 bits are no positions."""
    kernel = make_game("diffusion", cols=cols, stones=2).kernel()
    pits = 2 * cols
    # B to move, a stone in each block (the top row's first and last pits): a position
    assert kernel.children_of_key((1 << 3 * pits) | 1 | 1 << 3 * (cols - 1))[0]
    for key in (6, 7 << 3 * (pits - 1), 1 << 3 * pits + 1, 0, 1 << 3 * pits, -1, 1 << 64):
        with pytest.raises(ValueError, match="no packed position"):
            kernel.children_of_key(key)
    with pytest.raises(ValueError, match="empty board"):
        kernel.key([0] * pits, 0)


def test_the_proof_search_proves_what_the_table_says(table_2x4_k2):
    """Every position of 2x4 with 2 stones a pit the proof search settles within a budget is
    settled as the solved table says."""
    from sowsolve.tables.store import open_table
    control = Control()
    settled = 0
    with open_table(table_2x4_k2) as table:
        game = table.game
        rng = random.Random(3)
        for _ in range(150):
            position = random_walk(game, rng, rng.randrange(0, 40))
            if game.outcome(position) is not None:
                continue
            prover = proofsearch.Prover(game.proof_capsule(), game.proof_key(position), 1 << 16)
            while prover.value() is None and prover.nodes < 20000:
                prover.run(2048, control.words, 1)
            if prover.value() is not None:
                settled += 1
                assert prover.value() == table.probe(position).value
    assert settled >= 50
