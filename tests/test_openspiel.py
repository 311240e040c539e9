"""sowsolve's games as OpenSpiel games (sowsolve.openspiel, docs/openspiel.md): OpenSpiel's own
random simulation test with serialisation on small boards and the standard ones, the action
texts against the reference rules, the returns (Zig Zag's margin computed here from the stores
and the rules' end), the end of play, the observation planes, the bots, and the import without
OpenSpiel."""
import pathlib
import pickle
import random
import re
import subprocess
import sys

import numpy as np
import pytest
import pyspiel
from open_spiel.python.algorithms import mcts

import sowsolve
import sowsolve.openspiel as sos
from sowsolve.cext.diffusion import potential_weights
from sowsolve.solver.games import GAMES, make_game
from sowsolve.solver.games.diffusion import Diffusion

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "openspiel.md"
SMALL = ["sowsolve_diffusion(cols=4,stones=1)", "sowsolve_diffusion(cols=4,stones=2)",
         "sowsolve_diffusion_v2(cols=4,stones=1)", "sowsolve_diffusion_v2(cols=4,stones=2)",
         "sowsolve_overflow(rows=3,cols=3)", "sowsolve_overflow(rows=3,cols=4)",
         "sowsolve_zigzag(cols=4,stones=2)"]
STANDARD = ["sowsolve_diffusion", "sowsolve_diffusion_v2", "sowsolve_overflow", "sowsolve_zigzag"]
#: sowsolve's board of each small board above
BOARDS = {"sowsolve_diffusion(cols=4,stones=1)": ("diffusion", {"cols": 4, "stones": 1}),
          "sowsolve_diffusion(cols=4,stones=2)": ("diffusion", {"cols": 4, "stones": 2}),
          "sowsolve_diffusion_v2(cols=4,stones=1)": ("diffusion-v2", {"cols": 4, "stones": 1}),
          "sowsolve_diffusion_v2(cols=4,stones=2)": ("diffusion-v2", {"cols": 4, "stones": 2}),
          "sowsolve_overflow(rows=3,cols=3)": ("overflow", {"size": "3x3"}),
          "sowsolve_overflow(rows=3,cols=4)": ("overflow", {"size": "3x4"}),
          "sowsolve_zigzag(cols=4,stones=2)": ("zigzag", {"cols": 4, "stones": 2})}


def random_states(game, rng, games: int, plies: int | None = None):
    """Every state of `games` uniformly random games (to the end, or `plies` plies)."""
    for _ in range(games):
        state = game.new_initial_state()
        yield state.clone()
        while not state.is_terminal() and (plies is None or len(state.history()) < plies):
            state.apply_action(rng.choice(state.legal_actions()))
            yield state.clone()


# --- loading ----------------------------------------------------------------------------------

def test_every_game_of_the_registry_is_registered_under_its_name():
    assert set(sos.REGISTERED) == {f"sowsolve_{name.replace('-', '_')}" for name in GAMES}
    assert set(sos.REGISTERED) <= set(pyspiel.registered_names())


@pytest.mark.parametrize("text,parameters,actions,length,utility", [
    ("sowsolve_diffusion", {"cols": 6, "stones": 4}, 12, sos.ACYCLIC_PLIES, 1),
    ("sowsolve_diffusion_v2", {"cols": 6, "stones": 4}, 12, sos.ACYCLIC_PLIES, 1),
    ("sowsolve_overflow", {"rows": 6, "cols": 6}, 6 * 6 * 8, sos.ACYCLIC_PLIES, 1),
    ("sowsolve_zigzag", {"cols": 6, "stones": 5, "max_game_length": 600}, 12, 600, 60),
    ("sowsolve_diffusion(cols=4,stones=2)", {"cols": 4, "stones": 2}, 8, sos.ACYCLIC_PLIES, 1),
    ("sowsolve_diffusion_v2(cols=3,stones=5)", {"cols": 3, "stones": 5}, 6, sos.ACYCLIC_PLIES, 1),
    ("sowsolve_overflow(rows=3,cols=4)", {"rows": 3, "cols": 4}, 96, sos.ACYCLIC_PLIES, 1),
    ("sowsolve_zigzag(cols=4,stones=2)", {"cols": 4, "stones": 2, "max_game_length": 600}, 8,
     600, 16),
    ("sowsolve_zigzag(cols=2,max_game_length=40)", {"cols": 2, "stones": 5,
                                                   "max_game_length": 40}, 4, 40, 20),
])
def test_a_game_loads_with_and_without_parameters(text, parameters, actions, length, utility):
    game = pyspiel.load_game(text)
    assert game.get_parameters() == parameters
    assert game.num_distinct_actions() == actions
    assert game.max_game_length() == length
    assert (game.min_utility(), game.max_utility()) == (-utility, utility)
    assert game.num_players() == 2 and game.max_chance_outcomes() == 0
    game_type = game.get_type()
    assert game_type.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert game_type.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert game_type.chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    # the same board as sowsolve's own
    board = {k: v for k, v in parameters.items() if k != "max_game_length"}
    if "rows" in board:
        board = {"size": f"{board['rows']}x{board['cols']}"}
    own = make_game(game.sowsolve_game().name, **board)
    assert game.sowsolve_game().parameters() == own.parameters()
    assert str(game.new_initial_state()) == own.format_position(own.initial())


@pytest.mark.parametrize("text,says", [
    ("sowsolve_diffusion(cols=5)", "Diffusion v1 needs an even number of columns"),
    ("sowsolve_diffusion(cols=9)", "cols of sowsolve_diffusion must be a whole number from 2 to 8, not 9"),
    ("sowsolve_diffusion(stones=0)", "stones of sowsolve_diffusion must be a whole number from 1 to 5, not 0"),
    ("sowsolve_overflow(rows=1)", "rows of sowsolve_overflow must be a whole number from 2 to 8, not 1"),
    ("sowsolve_zigzag(cols=3)", "cols of sowsolve_zigzag must be an even number from 2 to 8, not 3"),
    ("sowsolve_zigzag(max_game_length=0)", "max_game_length of sowsolve_zigzag must be a whole number"),
])
def test_a_bad_parameter_is_one_sentence(text, says):
    with pytest.raises(ValueError) as refused:
        pyspiel.load_game(text)
    assert says in str(refused.value) and "\n" not in str(refused.value)
    assert isinstance(refused.value, sowsolve.BadParameters)


def test_games_that_cannot_draw_take_no_length_parameter():
    with pytest.raises(pyspiel.SpielError, match="max_game_length"):
        pyspiel.load_game("sowsolve_overflow(max_game_length=10)")


# --- OpenSpiel's own checks -----------------------------------------------------------------

@pytest.mark.parametrize("text", SMALL)
def test_random_simulations_with_serialisation_on_small_boards(text):
    pyspiel.random_sim_test(pyspiel.load_game(text), num_sims=8, serialize=True, verbose=False)


@pytest.mark.parametrize("text", STANDARD)
def test_random_simulations_with_serialisation_on_the_standard_boards(text):
    pyspiel.random_sim_test(pyspiel.load_game(text), num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("text", ["sowsolve_zigzag(cols=4,stones=2)", "sowsolve_overflow(rows=3,cols=3)"])
def test_a_state_survives_serialisation_and_pickling_deep_into_a_game(text):
    game = pyspiel.load_game(text)
    rng = random.Random(7)
    deepest = 0
    for state in random_states(game, rng, 3):
        if len(state.history()) % 97 != 5 and not state.is_terminal():
            continue
        deepest = max(deepest, len(state.history()))
        game2, copy = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
        assert str(game2) == str(game)
        for other in (copy, pickle.loads(pickle.dumps(state))):
            assert str(other) == str(state) and other.history() == state.history()
            assert other.returns() == state.returns() and other.is_terminal() == state.is_terminal()
            assert other.legal_actions() == state.legal_actions()
            assert other.stores() == state.stores()
            if not state.is_terminal():
                action = state.legal_actions()[-1]
                assert str(other.child(action)) == str(state.child(action))
    assert deepest >= 10


# --- actions, moves and returns against the reference rules ---------------------------------

@pytest.mark.parametrize("text", SMALL)
def test_actions_are_the_reference_rules_legal_moves(text):
    """At random positions: the actions' texts are the texts of the legal moves of the rules
    (solver/games/<game>/game.py), each action leads where the rules' move does, and the game
    ends where the rules end it (or at max_game_length)."""
    game = pyspiel.load_game(text)
    own = make_game(*BOARDS[text][0:1], **BOARDS[text][1])
    rng = random.Random(text)
    for state in random_states(game, rng, 6):
        position = state.position()
        assert str(state) == own.format_position(position)
        assert state.observation_string(0) == state.information_state_string(1) == str(state)
        moves = own.legal_moves(position)
        if state.is_terminal():
            assert moves == [] or len(state.history()) == game.max_game_length()
            assert state.current_player() == pyspiel.PlayerId.TERMINAL
            continue
        assert state.current_player() == len(state.history()) % 2
        texts = [state.action_to_string(a) for a in state.legal_actions()]
        assert sorted(texts) == sorted(own.format_move(m) for m in moves)
        for action, move_text in zip(state.legal_actions(), texts):
            move = own.parse_move(position, move_text)
            assert state.child(action).position() == own.play(position, move)
        assert state.legal_actions(1 - state.current_player()) == []


@pytest.mark.parametrize("text", [t for t in SMALL if "zigzag" not in t])
def test_win_loss_returns_are_the_rules_outcome(text):
    game = pyspiel.load_game(text)
    own = game.sowsolve_game()
    first = own.side_to_move(own.initial())
    for state in random_states(game, random.Random(3), 20):
        outcome = own.outcome(state.position())
        assert state.is_terminal() == (outcome is not None)
        if outcome is not None:
            mover = len(state.history()) % 2
            assert own.side_to_move(state.position()) == (first if mover == 0 else
                                                          next(s for s in own.sides if s != first))
            win = 1.0 if outcome == "win" else -1.0
            assert state.returns() == ([win, -win] if mover == 0 else [-win, win])
        else:
            assert state.returns() == [0.0, 0.0]


def zigzag_margin(own, actions_and_texts, capped: bool) -> int:
    """Player 0's margin of a Zig Zag game, computed from the rules: each side's banked seeds
    (the reference `move_gain`), and at the end the seeds left on the board to the last
    capturer (nobody, if nobody has captured), whether the game ends by no move or by
    max_game_length."""
    position = own.initial()
    first = position.side
    stores = {"P": 0, "p": 0}
    for text in actions_and_texts:
        move = own.parse_move(position, text)
        stores[position.side] += own.move_gain(position, move)
        position = own.play(position, move)
    assert capped or own.legal_moves(position) == []
    if position.last is not None:
        stores[position.last] += sum(position.board)
    second = "P" if first == "p" else "p"
    return stores[first] - stores[second]


@pytest.mark.parametrize("text", ["sowsolve_zigzag(cols=4,stones=2)",
                                  "sowsolve_zigzag(cols=2,stones=3,max_game_length=30)",
                                  "sowsolve_zigzag(cols=6,stones=5,max_game_length=90)"])
def test_zigzag_returns_are_the_margin_from_the_stores_and_the_end(text):
    game = pyspiel.load_game(text)
    own = game.sowsolve_game()
    rng = random.Random(5)
    ended = {"no move": 0, "length": 0}
    for _ in range(30):
        state = game.new_initial_state()
        texts = []
        while not state.is_terminal():
            action = rng.choice(state.legal_actions())
            texts.append(state.action_to_string(action))
            state.apply_action(action)
        capped = len(texts) == game.max_game_length()
        ended["length" if capped else "no move"] += 1
        margin = zigzag_margin(own, texts, capped)
        assert state.returns() == [margin, -margin]
        assert abs(margin) <= game.max_utility()
    assert ended["length"] > 0          # both ends were met
    if "max_game_length=30" not in text:
        assert ended["no move"] > 0


def test_a_game_at_max_game_length_ends_as_the_rules_end_infinite_play():
    game = pyspiel.load_game("sowsolve_zigzag(cols=4,stones=2,max_game_length=9)")
    own = game.sowsolve_game()
    rng = random.Random(4)
    capped = 0
    for _ in range(20):
        state = game.new_initial_state()
        texts = []
        while not state.is_terminal():
            action = rng.choice(state.legal_actions())
            texts.append(state.action_to_string(action))
            state.apply_action(action)
        assert len(texts) <= 9 and state.legal_actions() == []
        if len(texts) == 9 and own.legal_moves(state.position()):     # the rules would go on
            capped += 1
            assert state.current_player() == pyspiel.PlayerId.TERMINAL
            margin = zigzag_margin(own, texts, True)
            assert state.returns() == [margin, -margin]
    assert capped


def test_every_game_that_cannot_draw_ends_within_its_max_game_length():
    """ACYCLIC_PLIES bounds the games of every board of every game that cannot draw, by the
    potential docs/openspiel.md gives: Diffusion's pit weights (each move lowers the weighted
    stones by at least one, sowsolve.cext.diffusion.potential_weights), Overflow's (discs,
    occupied cells), lowered lexicographically by every move."""
    bounds = {}
    for name in ("diffusion", "diffusion-v2"):
        for cols in range(2, 9):
            for stones in range(1, 6):
                if name == "diffusion" and cols % 2:
                    continue
                game = Diffusion(cols, stones, variant=1 if name == "diffusion" else 2)
                bounds[name, cols, stones] = stones * sum(potential_weights(game.slots))
    for rows in range(2, 9):
        for cols in range(2, 9):
            cells = rows * cols
            bounds["overflow", rows, cols] = cells * (cells + 1) // 2 - 1
    assert {name for name, *_ in bounds} == {n for n, e in GAMES.items() if not e.cls.can_draw}
    assert max(bounds.values()) <= sos.ACYCLIC_PLIES
    assert bounds["diffusion", 6, 4] == 3640 and bounds["overflow", 6, 6] == 665
    # the potentials fall on random games
    rng = random.Random(1)
    for _ in range(20):
        game = make_game("diffusion-v2", cols=5, stones=5)
        weights = potential_weights(game.slots)
        position = game.initial()
        while game.legal_moves(position):
            child = game.play(position, rng.choice(game.legal_moves(position)))
            assert (sum(w * s for w, s in zip(weights, child.board))
                    < sum(w * s for w, s in zip(weights, position.board)))
            position = child
        game = make_game("overflow", size="4x4")
        position = game.initial()
        while moves := game.kernel_moves(position):
            _, child = rng.choice(moves)
            assert ((sum(child.heights), sum(1 for h in child.heights if h))
                    < (sum(position.heights), sum(1 for h in position.heights if h)))
            position = child


# --- observation ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", SMALL)
def test_the_observation_planes(text):
    game = pyspiel.load_game(text)
    own = game.sowsolve_game()
    margin = "zigzag" in text
    planes = 7 if margin else 5
    first = own.side_to_move(own.initial())
    sides = (first, next(s for s in own.sides if s != first))
    for state in random_states(game, random.Random(11), 4):
        obs = np.array(state.observation_tensor(0)).reshape(game.observation_tensor_shape())
        assert obs.shape[0] == planes
        assert state.observation_tensor(1) == state.information_state_tensor(0)
        picture = own.picture(state.position())
        for spot in picture.spots:
            if spot.count is None:
                continue
            r, c = int(spot.row), int(spot.col)
            assert obs[0, r, c] == spot.count
            assert (obs[1, r, c], obs[2, r, c]) == (spot.owner == sides[0], spot.owner == sides[1])
            assert obs[3, r, c] == (spot.flag is not None)
        assert np.all(obs[4] == len(state.history()) % 2)
        if margin:
            last = state.position().last
            assert np.all(obs[5] == (last == sides[0])) and np.all(obs[6] == (last == sides[1]))


def test_the_observation_shows_the_ko_pit_and_the_grid_of_the_board():
    game = pyspiel.load_game("sowsolve_zigzag(cols=4,stones=2)")
    rng = random.Random(2)
    seen_ko = False
    for state in random_states(game, rng, 40):
        position = state.position()
        obs = np.array(state.observation_tensor(0)).reshape(7, 2, 4)
        assert np.array_equal(obs[0].ravel(), np.array(position.board))   # top row, bottom row
        if position.ko is not None:
            seen_ko = True
            assert obs[3].sum() == 1 and obs[3].ravel()[position.ko] == 1
    assert seen_ko
    game = pyspiel.load_game("sowsolve_overflow(rows=3,cols=4)")
    state = game.new_initial_state()
    state.apply_action(state.legal_actions()[0])
    obs = np.array(state.observation_tensor(0)).reshape(5, 3, 4)
    heights = state.position().heights
    assert np.array_equal(obs[0], np.array(heights).reshape(3, 4)[::-1])   # rank 1 at the bottom
    assert obs[2, 2, 0] == 1 and obs[1, 2, 0] == 0      # a1 is dark: Dark's house, player 1's


# --- the bots ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("openspiel-tables")
    found = {}
    for key, name, board in (("diffusion", "diffusion", {"cols": 4, "stones": 1}),
                             ("overflow", "overflow", {"size": "3x3"}),
                             ("zigzag", "zigzag", {"cols": 2, "stones": 2})):
        path = folder / f"{key}.sqlite"
        sowsolve.solve(name, table=str(path), threads=1, **board)
        found[key] = sowsolve.open_table(str(path))
    path = folder / "diffusion-endgame.sqlite"
    sowsolve.solve("diffusion", table=str(path), threads=1, max_stones=4, cols=4, stones=1)
    found["endgame"] = sowsolve.open_table(str(path))
    yield found
    for table in found.values():
        table.close()


def won_states(game, table, rng, count):
    """States reached by random play from the start where the side to move wins."""
    found = []
    while len(found) < count:
        state = game.new_initial_state()
        for _ in range(rng.randrange(0, 12)):
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
        if not state.is_terminal() and table.probe(state.position()).value == "win":
            found.append(state)
    return found


def play(state, bots):
    """Play to the end, each player's bot choosing; the returns."""
    state = state.clone()
    while not state.is_terminal():
        action = bots[state.current_player()].step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
    return state.returns()


@pytest.mark.parametrize("text,key", [("sowsolve_diffusion(cols=4,stones=1)", "diffusion"),
                                      ("sowsolve_overflow(rows=3,cols=3)", "overflow")])
def test_the_table_bot_never_loses_a_won_position(text, key, tables):
    game = pyspiel.load_game(text)
    table = tables[key]
    rng = random.Random(key)
    for n, state in enumerate(won_states(game, table, rng, 6)):
        me = state.current_player()
        perfect = sos.TableBot(game, table)
        random_bot = pyspiel.make_uniform_random_bot(1 - me, n)
        evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(n))
        searcher = mcts.MCTSBot(game, 2.0, 40, evaluator, random_state=np.random.RandomState(n))
        for opponent in (random_bot, searcher):
            bots = {me: perfect, 1 - me: opponent}
            assert play(state, bots)[me] == 1.0


def test_the_table_bot_plays_the_tables_margin(tables):
    """Both sides perfect in Zig Zag: the returns are the table's margin of the start."""
    game = pyspiel.load_game("sowsolve_zigzag(cols=2,stones=2)")
    table = tables["zigzag"]
    bot = sos.TableBot(game, table)
    start = game.new_initial_state()
    margin = table.probe(start.position()).margin
    assert play(start, {0: bot, 1: bot}) == [margin, -margin]


def test_the_table_bot_names_a_position_its_table_does_not_hold(tables):
    game = pyspiel.load_game("sowsolve_diffusion(cols=4,stones=1)")
    bot = sos.TableBot(game, tables["endgame"])
    with pytest.raises(sos.NotHeld) as refused:
        bot.step(game.new_initial_state())
    assert isinstance(refused.value, ValueError)
    assert "does not hold 1111/1111 A" in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(sowsolve.BadParameters, match="not of Diffusion v1, 2x4, 2 stones"):
        sos.TableBot(pyspiel.load_game("sowsolve_diffusion(cols=4,stones=2)"), tables["diffusion"])


@pytest.mark.parametrize("text", SMALL[::2] + ["sowsolve_overflow(rows=3,cols=4)"])
def test_the_engine_bot_plays_legal_moves(text):
    game = pyspiel.load_game(text)
    bot = sos.EngineBot(game, nodes=60, hash_bytes=1 << 22)
    other = pyspiel.make_uniform_random_bot(1, 3)
    state = game.new_initial_state()
    for _ in range(8):
        if state.is_terminal():
            break
        player = state.current_player()
        action = (bot if player == 0 else other).step(state)
        assert action in state.legal_actions()
        state.apply_action(action)


def test_the_engine_bot_answers_from_a_table_that_holds_the_position(tables):
    game = pyspiel.load_game("sowsolve_diffusion(cols=4,stones=1)")
    bot = sos.EngineBot(game, nodes=1, hash_bytes=1 << 22, tables=[tables["diffusion"]])
    state = game.new_initial_state()
    best = tables["diffusion"].query(state.position())["best"]
    assert state.action_to_string(bot.step(state)) in best


def test_the_bots_refuse_a_game_that_is_not_sowsolves():
    with pytest.raises(ValueError, match="the bots play the games sowsolve.openspiel registers"):
        sos.EngineBot(pyspiel.load_game("tic_tac_toe"), nodes=1)


def test_an_illegal_action_is_one_sentence():
    state = pyspiel.load_game("sowsolve_zigzag(cols=4,stones=2)").new_initial_state()
    with pytest.raises(sos.IllegalAction, match=r"^action 0 is no legal move of 2222/2222 p - -$"):
        state.apply_action(0)


# --- without OpenSpiel ------------------------------------------------------------------------

def test_without_openspiel_the_import_says_how_to_install_it():
    code = ("import sys; sys.modules['pyspiel'] = None\n"
            "try:\n    import sowsolve.openspiel\n"
            "except ModuleNotFoundError as exc:\n    print(exc.name); print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "pyspiel", "sowsolve.openspiel needs OpenSpiel (pip install 'sowsolve[openspiel]')"]


# --- docs/openspiel.md ------------------------------------------------------------------------

def test_the_docs_examples_print_what_their_comments_say(tmp_path, monkeypatch, capsys):
    """Each ```python block of docs/openspiel.md runs; a print's comment (on its line, or the
    comment line after it) is what it prints, or that and ": " and an explanation."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOWSOLVE_TABLES", str(tmp_path / "tables"))
    blocks = [body for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", DOC.read_text(),
                                                flags=re.S | re.M) if lang == "python"]
    assert len(blocks) == 2
    for body in blocks:
        lines = body.splitlines()
        expected = []
        for number, line in enumerate(lines):
            if line.startswith("print("):
                said = re.search(r"\)\s+# (.*)$", line)
                expected.append(said.group(1) if said else lines[number + 1].removeprefix("# "))
        exec(compile(body, str(DOC), "exec"), {})
        printed = capsys.readouterr().out.splitlines()
        assert len(printed) == len(expected)
        for out, comment in zip(printed, expected):
            assert comment == out or comment.startswith(out + ": "), (out, comment)


def test_the_docs_figures():
    text = " ".join(DOC.read_text().split())
    assert f"{sos.ACYCLIC_PLIES:,} plies (`ACYCLIC_PLIES`)" in text
    assert f"({sos.ENDLESS_PLIES} unless given" in text and "`max_game_length` (600)" in text
    shapes = {"sowsolve_diffusion": "5 x 2 x 6", "sowsolve_overflow": "5 x 6 x 6",
              "sowsolve_zigzag": "7 x 2 x 6"}
    for name, shape in shapes.items():
        game = pyspiel.load_game(name)
        assert " x ".join(map(str, game.observation_tensor_shape())) == shape and shape in text
    firsts = {"sowsolve_diffusion": "A", "sowsolve_diffusion_v2": "A", "sowsolve_overflow": "L",
              "sowsolve_zigzag": "p"}
    for name, side in firsts.items():
        own = pyspiel.load_game(name).sowsolve_game()
        assert own.side_to_move(own.initial()) == side
    assert "| Zig Zag | p (the bottom row, moves first) | P |" in DOC.read_text()
