"""The plain UCT player (cext/uct.pyx), the yardstick of the engine's strength
(bench/bench_match.py): its rewards against the reference rules, determinism, bad arguments."""
import random

import pytest

from conftest import end_gain, random_walk, solve_to
from sowsolve.cext import uct
from sowsolve.cext.engine import Engine
from sowsolve.solver.games import make_game
from sowsolve.tables.store import open_table

BOARDS = [("overflow", dict(size="3x3")), ("overflow", dict(size="3x4")),
          ("diffusion", dict(cols=4, stones=2)), ("zigzag", dict(cols=4, stones=2)),
          ("zigzag", dict(cols=6, stones=5))]


def positions_with_final_children(game, rng, wanted):
    """Positions (met along random games) where some move ends the game."""
    found = []
    for _ in range(4000):
        position = game.initial()
        for _ in range(400):
            moves = game.legal_moves(position)
            if not moves:
                break
            if any(not game.legal_moves(game.play(position, m)) for m in moves):
                found.append(position)
                break
            position = game.play(position, rng.choice(moves))
        if len(found) >= wanted:
            break
    return found


@pytest.mark.slow
@pytest.mark.parametrize("name,board", BOARDS)
def test_a_move_that_ends_the_game_is_scored_by_the_rules(name, board):
    """Every root move is tried; one whose child is final always scores the same, so its mean
    reward is exactly the result the reference rules give the mover: 1 a win, 0.5 a draw,
    0 a loss (Zig Zag: the sign of what the mover banks plus the end's count, plus `lead`)."""
    game = make_game(name, **board)
    rng = random.Random(3)
    checked = 0
    for position in positions_with_final_children(game, rng, 6):
        moves = game.legal_moves(position)
        lead = rng.randrange(-3, 4) if game.value_kind.name == "margin" else 0
        ranked, playouts = uct.choose(game.play_kernel(), game.play_state(position),
                                      playouts=40 * len(moves), threads=1, seed=5, lead=lead)
        assert playouts == 40 * len(moves)
        assert sum(m[1] for m in ranked) == playouts
        by_code = {code: (visits, reward) for code, visits, reward, _ in ranked}
        for code, (visits, reward) in by_code.items():
            move = game.play_move(position, code)
            child = game.play(position, move)
            if game.legal_moves(child):
                continue
            assert visits >= 1
            if game.value_kind.name == "margin":
                mine = lead + game.move_gain(position, move) - game.leftover_margin(child)
                expected = 1.0 if mine > 0 else (0.0 if mine < 0 else 0.5)
            else:
                expected = {"loss": 1.0, "draw": 0.5, "win": 0.0}[game.outcome(child)]
            assert reward == expected, (game.format_position(position), game.format_move(move))
            checked += 1
    assert checked >= 3


@pytest.mark.slow
def test_a_winning_move_is_found():
    """Overflow 3x3 positions with a move that wins at once: the most visited move wins too
    (4,000 playouts; the reward of a won child is 1 every time, of any other below)."""
    game = make_game("overflow", size="3x3")
    rng = random.Random(8)
    tried = 0
    for position in positions_with_final_children(game, rng, 40):
        wins = [m for m in game.legal_moves(position)
                if not game.legal_moves(game.play(position, m))
                and game.outcome(game.play(position, m)) == "loss"]
        if not wins:
            continue
        ranked, _ = uct.choose(game.play_kernel(), game.play_state(position), playouts=4000,
                               threads=1, seed=1)
        best = game.play_move(position, ranked[0][0])
        assert game.outcome(game.play(position, best)) == "loss", game.format_position(position)
        tried += 1
    assert tried >= 5


def test_one_thread_and_a_playout_budget_repeat_exactly():
    game = make_game("zigzag", cols=6, stones=5)
    state = game.play_state(game.initial())
    first = uct.choose(game.play_kernel(), state, playouts=3000, threads=1, seed=9)
    again = uct.choose(game.play_kernel(), state, playouts=3000, threads=1, seed=9)
    other = uct.choose(game.play_kernel(), state, playouts=3000, threads=1, seed=10)
    assert first == again
    assert first != other
    both = uct.choose(game.play_kernel(), state, playouts=3000, threads=2, seed=9)
    assert both[1] >= 3000 and sum(m[1] for m in both[0]) == both[1]


def test_a_kept_subtree_is_the_old_trees_below_the_position_played():
    """Tree reuse: after a search, the position two plies down the best line (the engine's move
    and the reply) becomes the root with what was learnt below it -- every playout through it
    kept (its children's visits sum to its own less the one that made it), the line below it
    the old line's tail -- and the search grows on from there."""
    game = make_game("overflow", size="4x4")
    position = game.initial()
    state = game.play_state(position)
    searcher = uct.Searcher(game.play_kernel(), 1 << 26, 0.7, True, True, reuse=True)
    searcher.run(state, playouts=40000, threads=1, seed=3)
    first = searcher.report()[0][0]
    line = [first] + searcher.principal_variation(first, 12)
    assert len(line) >= 4
    for code in line[:2]:
        position = game.play(position, game.play_move(position, code))
    kept = searcher.reroot(game.play_state(position))
    assert kept > 1 and searcher.kept == kept
    report = searcher.report()
    assert sum(r[2] for r in report) == searcher.carried - 1 > 0
    assert searcher.principal_variation(line[2], 12)[:len(line) - 3] == line[3:]
    ran = searcher.run(game.play_state(position), playouts=2000, threads=1, seed=3)
    assert ran == 2000
    assert sum(r[2] for r in searcher.report()) == searcher.carried - 1 + 2000


def test_trees_start_afresh_beyond_two_plies_or_without_reuse():
    game = make_game("overflow", size="4x4")
    position = game.initial()
    for reuse in (True, False):
        searcher = uct.Searcher(game.play_kernel(), 1 << 24, 0.7, True, True, reuse=reuse)
        searcher.run(game.play_state(position), playouts=3000, threads=1, seed=1)
        later = position
        for _ in range(3):                       # three plies: beyond what is kept
            later = game.play(later, game.legal_moves(later)[0])
        assert searcher.reroot(game.play_state(later)) == 0
        assert searcher.report() == [] and searcher.carried == 0
        # with the same position again: kept whole with reuse, forgotten without
        searcher.run(game.play_state(position), playouts=3000, threads=1, seed=1)
        assert (searcher.reroot(game.play_state(position)) > 0) == reuse
        # one tree becomes two: the searcher starts afresh, and counts only this run's
        assert searcher.run(game.play_state(position), playouts=1000, threads=2, seed=1) >= 1000
        assert searcher.carried == 0
        # a run without a reroot before it starts afresh: the same budget, the same visits
        searcher.run(game.play_state(position), playouts=1000, threads=1, seed=1)
        first = searcher.report()
        searcher.run(game.play_state(position), playouts=1000, threads=1, seed=1)
        assert searcher.report() == first and sum(r[2] for r in first) == 1000


def test_a_margin_games_searches_never_build_on_one_another():
    """Zig Zag's rewards count the root's lead: a search with another lead is its own, however
    it is asked (reroot or not), and answers as a fresh searcher does."""
    game = make_game("zigzag", cols=4, stones=2)
    state = game.play_state(game.initial())
    searcher = uct.Searcher(game.play_kernel(), 1 << 24, reuse=True)
    assert not searcher.reuse
    searcher.run(state, playouts=600, threads=1, seed=5, lead=0, leftover=16)
    assert searcher.reroot(state) == 0
    searcher.run(state, playouts=600, threads=1, seed=5, lead=9, leftover=16)
    fresh = uct.Searcher(game.play_kernel(), 1 << 24)
    fresh.run(state, playouts=600, threads=1, seed=5, lead=9, leftover=16)
    assert searcher.report() == fresh.report()


def test_reuse_one_ply_down_and_on_two_trees():
    """The move just played (one ply) is kept too, and each of two trees keeps what it holds:
    a tree without the position starts afresh while the other keeps its subtree; the status
    after a reroot counts no playout of the last search."""
    game = make_game("overflow", size="4x4")
    position = game.initial()
    searcher = uct.Searcher(game.play_kernel(), 1 << 26, 0.7, True, True, reuse=True, fpu=1.0,
                            weights=game.evaluation.weights)
    searcher.run(game.play_state(position), playouts=20000, threads=2, seed=8)
    best = searcher.report()[0][0]
    child = game.play(position, game.play_move(position, best))
    assert searcher.reroot(game.play_state(child)) > 2
    playouts, seconds, *_ = searcher.status()
    assert playouts == 0 and seconds == 0
    report = searcher.report()
    assert report and sum(r[2] for r in report) <= searcher.carried
    # a move few playouts tried: in one tree, maybe not the other
    rare = min(searcher.report(), key=lambda r: r[2])[0]
    grandchild = game.play(child, game.play_move(child, rare))
    searcher.run(game.play_state(child), playouts=4000, threads=2, seed=8)
    searcher.reroot(game.play_state(grandchild))
    ran = searcher.run(game.play_state(grandchild), playouts=2000, threads=2, seed=8)
    assert ran >= 2000 and sum(r[2] for r in searcher.report()) >= ran - 2


def test_urgency_follows_the_best_tried_moves():
    """With first-play urgency, untried moves wait while a tried move scores above it (the
    solver's proofs under it: test_the_solvers_proofs_are_the_tables_values)."""
    game = make_game("overflow", size="5x5")
    state = game.play_state(game.initial())
    moves = len(Engine(game.play_kernel(), list(game.evaluation.weights), 1 << 20).moves(state))
    urgent = uct.Searcher(game.play_kernel(), 1 << 24, 0.7, True, True, fpu=1.0,
                          weights=game.evaluation.weights)
    urgent.run(state, playouts=moves, threads=1, seed=3)
    tried = [r for r in urgent.report() if r[2] > 0]
    assert len(tried) < moves                     # some moves got a second playout first
    every = uct.Searcher(game.play_kernel(), 1 << 24, 0.7, True, True, fpu=-1.0,
                         weights=game.evaluation.weights)
    every.run(state, playouts=moves, threads=1, seed=3)
    assert all(r[2] == 1 for r in every.report())  # every move once before any twice


def test_ordered_search_tries_the_evaluations_best_moves_first():
    """With the evaluation's weights, untried moves are tried best first: after as many
    playouts as there are moves to spare, every move tried scores at least as well as every
    move left untried, scored here by the alpha-beta engine's own evaluation of each child."""
    game = make_game("overflow", size="5x5")
    weights = game.evaluation.weights
    engine = Engine(game.play_kernel(), list(weights), 1 << 20)
    rng = random.Random(4)
    checked = 0
    for _ in range(5):
        position = random_walk(game, rng, rng.randrange(0, 12))
        state = game.play_state(position)
        children = engine.moves(state)
        if len(children) < 8 or game.outcome(position) is not None:
            continue
        mover_score = {code: -engine.evaluate(child) for code, _, child in children}
        searcher = uct.Searcher(game.play_kernel(), 1 << 24, 0.7, False, True, weights=weights)
        searcher.run(state, playouts=5, threads=1, seed=2)
        tried = [r[0] for r in searcher.report() if r[2] > 0]
        untried = [code for code in mover_score if code not in tried]
        assert len(tried) == 5 and untried
        assert min(mover_score[c] for c in tried) >= max(mover_score[c] for c in untried)
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("kwargs", [dict(weights=(1,)), dict(weights=(1, 1 << 30)),
                                    dict(weights=(1.5, 2)), dict(weights="ab"),
                                    dict(fpu=float("nan"))])
def test_bad_search_settings_are_refused(kwargs):
    game = make_game("overflow", size="3x3")
    with pytest.raises(ValueError):
        uct.Searcher(game.play_kernel(), 1 << 20, **kwargs)


def test_a_final_position_has_no_moves():
    game = make_game("overflow", size="3x3")
    rng = random.Random(2)
    position = positions_with_final_children(game, rng, 1)[0]
    child = next(game.play(position, m) for m in game.legal_moves(position)
                 if not game.legal_moves(game.play(position, m)))
    assert uct.choose(game.play_kernel(), game.play_state(child), playouts=10) == ([], 0)


@pytest.mark.parametrize("kwargs", [dict(playouts=0), dict(seconds=-1), dict(playouts=5, threads=0),
                                    dict(playouts=5, memory=100), dict(playouts=5, last=2),
                                    dict(playouts=5, leftover=-1)])
def test_bad_arguments_are_refused(kwargs):
    game = make_game("overflow", size="3x3")
    with pytest.raises(ValueError):
        uct.choose(game.play_kernel(), game.play_state(game.initial()), **kwargs)


def test_a_state_of_another_size_is_refused():
    game = make_game("overflow", size="3x3")
    with pytest.raises(ValueError, match="bytes"):
        uct.choose(game.play_kernel(), b"\0" * 3, playouts=5)
    with pytest.raises(TypeError):
        uct.choose(object(), game.play_state(game.initial()), playouts=5)


@pytest.mark.slow
@pytest.mark.parametrize("name,board", [("overflow", dict(size="3x3")), ("overflow", dict(size="6x6")),
                                        ("diffusion", dict(cols=4, stones=2)),
                                        ("diffusion", dict(cols=6, stones=4))])
def test_a_moves_gain_is_the_end_it_makes_by_the_rules(name, board):
    """In a win/loss game a move's gain (what informed playouts and the engine read) is the
    end the reference rules give its child: +1 the mover has won at once, -1 it has lost,
    0 the game goes on."""
    game = make_game(name, **board)
    engine = Engine(game.play_kernel(), list(game.evaluation.weights))
    rng = random.Random(4)
    ends = {1: 0, -1: 0, 0: 0}
    walks = 40 if len(game.legal_moves(game.initial())) < 100 else 6
    for _ in range(walks):
        position = game.initial()
        while game.legal_moves(position):
            for code, gain, _ in engine.moves(game.play_state(position)):
                assert gain == end_gain(game, position, game.play_move(position, code)), \
                    (game.format_position(position), code)
                ends[gain] += 1
            position = game.play(position, rng.choice(game.legal_moves(position)))
    assert ends[1] and ends[0]


@pytest.mark.slow
@pytest.mark.parametrize("fpu,ordered", [(-1.0, False), (1.0, True), (0.0, True)])
def test_the_solvers_proofs_are_the_tables_values(tmp_path, fpu, ordered):
    """With the solver on Overflow 3x3: every move it marks proven is what the solved table
    says (+1 the mover wins, -1 it loses), and where a move wins at once the move it plays
    wins -- trying every move once first, or with first-play urgency (at 0: an untried move
    only once every tried one is proven) and the evaluation's order."""
    path = tmp_path / "overflow-3x3.sqlite"
    solve_to(path, "overflow", size="3x3")
    game = make_game("overflow", size="3x3")
    rng = random.Random(8)
    proofs = played = 0
    with open_table(str(path)) as table:
        for position in positions_with_final_children(game, rng, 40):
            truth = {m["move"]: m["value"] for m in table.query(game.format_position(position))["moves"]}
            searcher = uct.Searcher(game.play_kernel(), 1 << 24, uct.EXPLORATION, True, True,
                                    fpu=fpu, weights=game.evaluation.weights if ordered else None)
            searcher.run(game.play_state(position), playouts=3000, threads=1, seed=2)
            ranked = [(code, visits, mean, proven)
                      for code, _, visits, mean, proven in searcher.report()]
            for code, _, _, proven in ranked:
                text = game.format_move(game.play_move(position, code))
                if proven:
                    assert truth[text] == ("win" if proven > 0 else "loss"), text
                    proofs += 1
            wins_at_once = [m for m in game.legal_moves(position)
                            if game.outcome(game.play(position, m)) == "loss"]
            if wins_at_once:
                top = game.format_move(game.play_move(position, ranked[0][0]))
                assert truth[top] == "win" and ranked[0][3] == 1
                played += 1
    assert proofs >= 20 and played >= 5


def test_the_docs_match_figures_are_the_measured_ones():
    """docs/analysis.md's table of matches against the UCT yardstick is bench/results'."""
    import json
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parent.parent
    text = (root / "docs/analysis.md").read_text()
    rows = re.findall(r"^\| (\S+) \| (engine|mcts) \| ([\d.]+) s \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+)% \|$",
                      text, re.M)
    assert len(rows) >= 4
    for board, player, seconds, games, wins, draws, losses, rate in rows:
        name = "overflow" if board.startswith("Overflow") else "zigzag"
        path = root / f"bench/results/match-{name}-{board.split('-')[1]}-{player}.json"
        result = json.loads(path.read_text())
        assert result["time_per_move"] == float(seconds) and result["games"] == int(games)
        assert (result["wins"], result["draws"], result["losses"]) == (int(wins), int(draws), int(losses))
        assert round(100 * result["score_rate"]) == int(rate)


def test_the_docs_figures_of_the_match_under_way_are_the_recorded_ones():
    """Each 1 s match on 6x6 docs/analysis.md reports is its recorded summary, and that summary
    is what its progress file (the summary's --progress) holds."""
    import json
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parent.parent
    text = " ".join((root / "docs/analysis.md").read_text().split())
    found = re.findall(r"After \*\*(\d+) games: (\d+) won, (\d+) lost, (\d+)%\*\* \(`([\w.-]+)`", text)
    assert len(found) >= 2, "docs/analysis.md gives the matches at 1 s a move"
    for games, wins, losses, rate, name in found:
        result = json.loads((root / "bench/results" / name).read_text())
        assert (result["games"], result["wins"], result["losses"]) == (int(games), int(wins), int(losses))
        assert round(100 * result["score_rate"]) == int(rate) and result["time_per_move"] == 1.0
        progress = re.search(r"--progress (\S+)", result["command"])[1]
        lines = (root / "bench" / progress).read_text().splitlines()
        played = [json.loads(line) for line in lines[1:]][:int(games)]
        assert sum(g["result"] == "win" for g in played) == int(wins) and len(played) == int(games)


def test_the_readme_figures_of_the_engine_are_the_recorded_ones():
    """The README's sentence on the engine: the 1 s matches' wins and the agreement with
    perfect play, as the bench files record them."""
    import json
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parent.parent
    readme = " ".join((root / "README.md").read_text().split())
    said = re.search(r"won (\d+) of (\d+) games of Overflow 6x6 and (\d+) of (\d+) of Zig Zag 2x6"
                     r".*? kept the value of at least (\d+)% of ([\d,]+) positions", readme)
    assert said, "the README gives the engine's figures"
    for (wins, games), name in zip([said.group(1, 2), said.group(3, 4)],
                                   ["match-overflow-6x6-1s-fpu.json", "match-zigzag-2x6-1s.json"]):
        result = json.loads((root / "bench/results" / name).read_text())
        assert (result["wins"], result["games"], result["time_per_move"]) == (int(wins), int(games), 1.0)
    agreement = json.loads((root / "bench/results/analyse.json").read_text())
    assert agreement["time_per_move"] == 0.1 and len(agreement["agreement"]) == 3
    for row in agreement["agreement"]:
        assert row["positions"] == int(said[6].replace(",", ""))
        assert row["value_kept"] / row["positions"] >= int(said[5]) / 100
        assert row["exact_right"] == row["exact_labels"]
