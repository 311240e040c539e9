"""One test per rule clause of RULES.md section 1, on the reference rules and the kernel; the
Diffusion vector files' solved values against a count of boards and a brute force."""
import sys

import pytest

from conftest import vectors
from test_solver_bruteforce import brute_force
from sowsolve.solver.errors import BadMove, BadParameters, BadPosition
from sowsolve.solver.games import make_game
from sowsolve.solver.games.diffusion import Position

VARIANTS = ("diffusion", "diffusion-v2")
STANDARD = make_game("diffusion", cols=6, stones=4)


@pytest.mark.parametrize("variant, vector", [(variant, vector) for variant in VARIANTS
                                             for vector in vectors(variant)["moves"]],
                         ids=lambda v: v if isinstance(v, str) else v["name"])
def test_move_vectors_of_the_rule_sheet(variant, vector):
    game = make_game(variant, **vector["parameters"])
    position = game.parse_position(vector["position"])
    pit = game.parse_move(position, vector["move"])
    board, lost = game.sow(position.board, pit)
    assert game.format_position(Position(board, {"A": "B", "B": "A"}[position.side])) == vector["after"]
    assert lost == vector["extra"]["to_stores"]
    kernel_moves = {p: (child, l) for p, child, l in game.kernel().moves(position.board)}
    assert kernel_moves[pit] == (board, lost)


def test_pit_names_run_counterclockwise_from_the_top_right():
    assert STANDARD.pit_names == list("FEDCBA") + list("GHIJKL")
    assert make_game("diffusion", cols=2, stones=1).pit_names == ["B", "A", "C", "D"]


def test_blocks_v1_left_half_is_A():
    assert STANDARD.owner == list("AAABBB") + list("AAABBB")


def test_blocks_v2_bottom_row_is_A():
    assert make_game("diffusion-v2", cols=6, stones=4).owner == ["B"] * 6 + ["A"] * 6


def test_slot_order_bottom_row_E_NE_N_NW_W():
    # I = bottom column 2 (pit 8): E bottom 3, NE top 3, N top 2, NW top 1, W bottom 1
    assert STANDARD.slots[8] == [9, 3, 2, 1, 7]


def test_slot_order_top_row_W_SW_S_SE_E():
    # C = top column 3: W top 2, SW bottom 2, S bottom 3, SE bottom 4, E top 4
    assert STANDARD.slots[3] == [2, 8, 9, 10, 4]


def test_slots_beyond_the_board_are_the_store():
    assert STANDARD.slots[0] == [-1, -1, 6, 7, 1]          # F, top-left corner
    assert STANDARD.slots[11] == [-1, -1, 5, 4, 10]        # L, bottom-right corner


def test_a_pit_never_holds_more_than_five():
    game = make_game("diffusion", cols=6, stones=5)
    position = game.parse_position("555555/555555 A")
    for pit in game.legal_moves(position):
        board, lost = game.sow(position.board, pit)
        assert max(board) == 5 and board[pit] == 0 and lost == 5


def test_empty_block_wins_for_its_owner_whoever_moved():
    game = make_game("diffusion", cols=4, stones=1)
    for mover, to_move, value in (("A", "B", "loss"), ("B", "A", "win")):
        position = game.parse_position(f"1011/0000 {mover}")
        child = game.play(position, game.parse_move(position, "D"))   # the stone goes to the store
        assert game.format_position(child) == f"0011/0000 {to_move}"
        assert game.outcome(child) == value                             # A's block is empty: A wins


def test_final_positions_have_no_moves():
    position = STANDARD.parse_position("000444/000444 A")
    assert STANDARD.outcome(position) == "win"
    assert STANDARD.legal_moves(position) == []
    assert STANDARD.kernel().moves(position.board) == []


def test_first_move_is_A_and_both_starts_exist():
    assert STANDARD.format_position(STANDARD.initial()) == "444444/444444 A"
    assert [p.side for p in STANDARD.initial_positions()] == ["A", "B"]


def test_turn_maps_block_A_onto_block_B():
    for name in ("diffusion", "diffusion-v2"):
        game = make_game(name, cols=6, stones=4)
        for pit in range(game.npits):
            assert game.owner[pit] != game.owner[game.npits - 1 - pit]


@pytest.mark.parametrize("text, fragment", [
    ("44444/444444 A", "top row has 5 pits"),
    ("444444/444444", "side to move"),
    ("444444/444444 C", "side to move must be A or B"),
    ("444444/444444 A x", "side to move"),
    ("444446/444444 A", "'6' is not a stone count"),
    ("44444\u0664/444444 A", "is not a stone count"),
    ("444444444444 A", "two rows"),
    ("000000/000000 A", "no stones"),
    ("555555/555555 A", "more than the 48"),
])
def test_bad_position_text_is_refused_with_a_reason(text, fragment):
    with pytest.raises(BadPosition, match=fragment):
        STANDARD.parse_position(text)


def test_bad_moves_are_refused():
    position = STANDARD.parse_position("000444/100444 A")
    with pytest.raises(BadMove, match="not a legal move"):
        STANDARD.parse_move(position, "F")
    with pytest.raises(BadMove, match="'Z' is not a legal move in 000444/100444 A; legal: "):
        STANDARD.parse_move(position, "Z")


@pytest.mark.parametrize("name, cols, stones, fragment", [
    ("diffusion", 3, 2, "even number of columns"),
    ("diffusion", 4, 0, "--stones"),
    ("diffusion", 4, 6, "--stones"),
    ("diffusion-v2", 1, 2, "--cols"),
    ("diffusion", 10, 2, "--cols"),
    ("chess", 4, 2, "unknown game"),
])
def test_bad_parameters_are_refused(name, cols, stones, fragment):
    with pytest.raises(BadParameters, match=fragment):
        make_game(name, cols=cols, stones=stones)


def test_v2_allows_odd_columns():
    assert make_game("diffusion-v2", cols=3, stones=2).max_stones == 12


SOLVED = [pytest.param(variant, entry, id="{}-2x{cols}-k{stones}-{}".format(
              variant, entry["position"] or "start", **entry["parameters"]))
          for variant in VARIANTS for entry in vectors(variant)["solved"]]


def boards_holding(pits: int, most: int) -> int:
    """Boards of `pits` pits of 0..5 stones holding 1..most stones: a table's positions per side."""
    ways = [1] + [0] * most                 # ways[s]: fillings of the pits so far with s stones
    for _ in range(pits):
        ways = [sum(ways[s - x] for x in range(min(5, s) + 1)) for s in range(most + 1)]
    return sum(ways[1:])


@pytest.mark.parametrize("variant, entry", [p for p in SOLVED if "positions" in p.values[1]])
def test_solved_vectors_count_the_boards(variant, entry):
    cols, stones = entry["parameters"]["cols"], entry["parameters"]["stones"]
    assert entry["positions"] == boards_holding(2 * cols, 2 * cols * stones)


def pits_and_side(text: str) -> tuple[tuple[int, ...], str]:
    rows, side = text.split()
    return tuple(int(c) for c in rows.replace("/", "")), side


@pytest.mark.parametrize("variant, entry", [p for p in SOLVED
                                             if p.values[1].get("positions", 10**9) <= 50_000])
def test_small_solved_vectors_equal_brute_force(variant, entry):
    """The small boards' values in the vector files, by the brute force of
    test_solver_bruteforce.py (written from the rule text): value, remoteness, best moves."""
    sys.setrecursionlimit(20000)
    game = make_game(variant, **entry["parameters"])
    value = brute_force(entry["parameters"]["cols"], 1 if variant == "diffusion" else 2)
    position = game.initial() if entry["position"] is None else game.parse_position(entry["position"])
    assert value(*pits_and_side(game.format_position(position))) == (entry["value"], entry["remoteness"])
    moves = {}
    for move in game.legal_moves(position):
        child, plies = value(*pits_and_side(game.format_position(game.play(position, move))))
        moves[game.format_move(move)] = ("win" if child == "loss" else "loss", plies + 1)
    keeping = {move: plies for move, (v, plies) in moves.items() if v == entry["value"]}
    fastest = (min if entry["value"] == "win" else max)(keeping.values())
    if "best" in entry:
        assert sorted(entry["best"]) == sorted(m for m, plies in keeping.items() if plies == fastest)
    if "winning_moves" in entry:
        assert entry["winning_moves"] == sum(v == "win" for v, _ in moves.values())
    if "legal_moves" in entry:
        assert entry["legal_moves"] == len(moves)
    for move, expected in entry.get("moves", {}).items():
        found = dict(zip(("value", "remoteness"), moves[move]))
        assert {key: found[key] for key in expected} == expected, move


def test_an_illegal_move_is_said_alike_in_every_game():
    """One sentence in every game: the move as typed, the position, and the legal moves where
    they are few (else how many, and how a move is written)."""
    from sowsolve.solver.games import make_game
    for name, board, typed in (("diffusion", {"cols": 4, "stones": 1}, "Z"), ("zigzag", {}, "q"),
                               ("overflow", {"size": "3x3"}, "a9")):
        game = make_game(name, **board)
        start = game.initial()
        legal = [game.format_move(m) for m in game.legal_moves(start)]
        with pytest.raises(BadMove) as caught:
            game.parse_move(start, typed)
        sentence = str(caught.value)
        assert sentence.startswith(f"{typed!r} is not a legal move in {game.format_position(start)}; ")
        if len(legal) <= 12:
            assert sentence.endswith("legal: " + " ".join(legal))
        else:
            assert sentence.endswith(f"{len(legal)} moves are legal, written like b2-c3")
