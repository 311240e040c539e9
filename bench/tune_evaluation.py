"""Tune a game's evaluation weights against a solved table: coordinate search, each weight
scaled by the factors below in turn, keeping a change when the engine (not given the table,
a fixed node budget, one thread: deterministic) keeps the value of more sampled positions.

    python bench/tune_evaluation.py --tables DIR --game zigzag --cols 4 --stones 3 \\
        [--positions 300] [--nodes 3000] [--rounds 2] [--out F]

With --board (below) and --fit (win/loss games) it starts from a logistic regression of the
tuning boards' wins and losses on the features (--fit-positions a board; weights in hundredths
of the log-odds). With --game and --fit (margin games) it starts from a least-squares fit instead: the weights whose sum
over the features best predicts the table's margin of --fit-positions sampled positions (a
third seed; one unit of weight per hundredth of a seed, as the engine scores), and --rounds 0
keeps the fit as it is.

Several boards at once (`--board GAME:K=V,...`, repeatable, e.g. `--board zigzag:cols=4,stones=3
--board zigzag:cols=6,stones=1`; one evaluation, so not Diffusion v1 and v2 together):
each board's sampled positions are scored apart, and a change is kept when the --objective of
the boards' rates (`min`: the worst board's, the default; `mean`) rises; `--check-board`
(repeatable) names boards held out of the tuning, measured only with the weights it starts
and ends with and the game's own. --tables may be given more than once.

It prints the weights it starts from and ends with and the agreement of each, on the positions
it tuned on and on --holdout other positions (another seed), and the game's own weights' on the
same positions: the game's weights
(solver/games/<name>.py, `evaluation`) are set from such a run by hand, and only where the
held-out positions agree (a gain on the tuning sample alone may be noise).
"""
from __future__ import annotations

import argparse
import random
import sys

from bench_analyse import board_of, chosen_move, sample
from report import emit, machine

from sowsolve.solver.games import make_game
from sowsolve.tables.analysis import Analyser
from sowsolve.tables.directory import tables_of_board
from sowsolve.tables.store import open_table

FACTORS = (0, 0.5, 2, -1)


def coordinate_search(weights: list[int], judged, rounds: int):
    """Each weight in turn times each of FACTORS (a zero weight: 50 times it), kept where
    `judged(trial)` -> (score, record) beats the best so far; (weights, best score, history of
    the records of the start and of each improvement)."""
    best, record = judged(weights)
    history = [{"weights": list(weights), **record}]
    for _ in range(rounds):
        for i in range(len(weights)):
            for factor in FACTORS:
                trial = list(weights)
                trial[i] = int(round(weights[i] * factor)) if weights[i] else int(50 * factor)
                if trial == weights:
                    continue
                score, record = judged(trial)
                if score > best:
                    best, weights = score, trial
                    history.append({"weights": list(weights), **record})
    return weights, best, history


def fresh(game, weights):
    """An engine that has searched nothing yet, with `weights`: the proof search's table is
    kept from one search to the next in an Analyser (what it proved stays true), so reusing
    one would let every trial after the first start from the proofs of those before it."""
    return Analyser(game, hash_bytes=1 << 24, search="alphabeta", weights=list(weights))


def agreement(analyser, cases, nodes) -> int:
    kept = 0
    for position, truth, values in cases:
        result = analyser.analyse(position, nodes=nodes, threads=1, multipv=1)
        kept += values[chosen_move(result)] == truth
    return kept


def cases_of(table, game, count, rng) -> list:
    """(position, its value, {move: the value it keeps}) of `count` sampled positions."""
    cases = []
    for position in sample(table, count, rng):
        truth = table.query(game.format_position(position))
        if truth.get("source") == "table":
            cases.append((position, truth["value"], {m["move"]: m["value"] for m in truth["moves"]}))
    return cases


def fit_weights(table, game, count: int, rng) -> dict:
    """Least squares: the weights (hundredths of a seed per unit of each feature) whose
    weighted features best predict the margin the table gives the side to move."""
    import numpy as np
    from sowsolve.cext.engine import Engine
    engine = Engine(game.play_kernel(), list(game.evaluation.weights), 1 << 20)
    rows, margins = [], []
    for position in sample(table, count, rng):
        truth = table.query(game.format_position(position))
        if truth.get("source") == "table" and isinstance(truth["value"], int):
            rows.append(engine.features_of(game.play_state(position)))
            margins.append(truth["value"])
    features, margin = np.array(rows, dtype=float), np.array(margins, dtype=float)
    solution = np.linalg.lstsq(features, margin, rcond=None)[0]
    weights = [int(round(100 * w)) for w in solution]

    def explained(ws) -> float | None:
        residue = margin - features @ (np.array(ws, dtype=float) / 100)
        spread = float(((margin - margin.mean()) ** 2).sum())
        return round(1 - float((residue ** 2).sum()) / spread, 3) if spread else None

    return {"weights": weights, "positions": len(margin), "r2": explained(weights),
            "r2_of_the_games_weights": explained(game.evaluation.weights)}


def logistic_fit(boards, directories, count: int, seed: int) -> dict:
    """Logistic regression (Newton's method) of win or loss for the side to move on the
    features, `count` sampled positions of each board pooled: the weights are the fitted
    log-odds per unit of each feature, in hundredths (100 points: odds of e to 1), so an
    estimate reads as how likely the engine thinks a win is.  For win/loss games."""
    import numpy as np
    from sowsolve.cext.engine import Engine
    rows, won = [], []
    for i, game in enumerate(boards):
        engine = Engine(game.play_kernel(), list(game.evaluation.weights), 1 << 20)
        with open_table(table_path(game, directories)) as table:
            for position in sample(table, count, random.Random(seed + i)):
                value = table.probe(position)[0]
                rows.append(engine.features_of(game.play_state(position)))
                won.append(value == "win")
    features, y = np.array(rows, dtype=float), np.array(won, dtype=float)
    x = np.hstack([features, np.ones((len(y), 1))])
    w = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x @ w)))
        step = np.linalg.solve((x * (p * (1 - p))[:, None]).T @ x + 1e-6 * np.eye(len(w)),
                               x.T @ (p - y))
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    weights = [int(round(100 * v)) for v in w[:-1]]
    # the constant (the side to move's edge) is left out of the engine's weights, as the
    # margin fit has none: the engine compares scores of one side to move
    intercept = int(round(100 * w[-1]))
    foretold = (features @ np.array(weights, dtype=float) + intercept > 0) == (y > 0.5)
    return {"method": "logistic regression of win/loss on the features", "weights": weights,
            "intercept": intercept, "positions": len(y), "win_share": round(float(y.mean()), 3),
            "accuracy_with_intercept": round(float(foretold.mean()), 3)}


def table_path(game, directories) -> str:
    paths = [p for d in directories for p in tables_of_board(game, d)]
    if not paths:
        raise SystemExit(f"no table of {game.describe()} in {', '.join(directories)}")
    return paths[0]


def tune_boards(args) -> None:
    """The coordinate search over several boards (module docstring)."""
    objective = min if args.objective == "min" else (lambda xs: sum(xs) / len(xs))
    boards = []
    for spec in args.board + (args.check_board or []):
        name, board = board_of(spec)
        game = make_game(name, **board)
        with open_table(table_path(game, args.tables)) as table:
            tuning = spec in args.board
            cases = cases_of(table, game, args.positions, random.Random(args.seed)) if tuning else []
            held_out = cases_of(table, game, args.holdout, random.Random(args.seed + 1000))
        boards.append({"spec": spec, "game": game, "tuning": tuning, "cases": cases,
                       "held_out": held_out})
    evaluations = {(b["game"].evaluation.features, b["game"].evaluation.weights) for b in boards}
    if len(evaluations) != 1:
        raise SystemExit("the boards must share one evaluation (one game's)")
    own = list(boards[0]["game"].evaluation.weights)
    tuning = [b for b in boards if b["tuning"]]

    def rates(weights, which="cases", of=None) -> list:
        out = []
        for b in of if of is not None else tuning:
            kept = agreement(fresh(b["game"], weights), b[which], args.nodes)
            out.append((kept, len(b[which])))
        return out

    def score(results) -> float:
        return round(objective([k / n for k, n in results]), 4)

    fit = None
    if args.fit:
        fit = logistic_fit([b["game"] for b in tuning], args.tables, args.fit_positions, args.seed + 2000)
    first = (fit["weights"] if fit else [int(w) for w in args.start.split(",")] if args.start
             else list(own))
    weights = list(first)
    def judged(trial):
        results = rates(trial)
        return score(results), {"objective": score(results), "kept": [k for k, _ in results]}

    weights, best_score, history = coordinate_search(weights, judged, args.rounds)
    report = []
    for b in boards:
        row = {"board": b["game"].describe(), "spec": b["spec"],
               "role": "tuned on" if b["tuning"] else "held out of the tuning",
               "positions": len(b["cases"]), "held_out_positions": len(b["held_out"])}
        for label, trial in (("start", first), ("end", weights), ("games_own", own)):
            if b["tuning"]:
                row[f"{label}_kept"] = rates(trial, "cases", [b])[0][0]
            row[f"{label}_kept_held_out"] = rates(trial, "held_out", [b])[0][0]
        report.append(row)
    emit({"command": "python bench/tune_evaluation.py " + " ".join(sys.argv[1:]),
          "machine": machine(), "features": list(boards[0]["game"].evaluation.features),
          "objective": args.objective, "nodes": args.nodes, "rounds": args.rounds,
          "start": {"weights": first, "objective": history[0]["objective"]},
          "end": {"weights": weights, "objective": best_score},
          "games_own": {"weights": own}, **({"fit": fit} if fit else {}),
          "boards": report, "steps": history}, args.out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", required=True, action="append")
    parser.add_argument("--game")
    parser.add_argument("--board", action="append", metavar="GAME:K=V,...",
                        help="a board to tune on (repeatable): several boards at once")
    parser.add_argument("--check-board", action="append", metavar="GAME:K=V,...",
                        help="a board held out of the tuning, measured at the start and the end")
    parser.add_argument("--objective", choices=("min", "mean"), default="min",
                        help="of the tuning boards' rates, what the search raises (default min)")
    parser.add_argument("--cols", type=int)
    parser.add_argument("--stones", type=int)
    parser.add_argument("--size")
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--nodes", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--holdout", type=int, default=400)
    parser.add_argument("--start", help="weights to start from, comma-separated "
                                        "(default: the game's own)")
    parser.add_argument("--fit", action="store_true",
                        help="start from a fit: with --game the least-squares fit of a margin "
                             "game's margins; with --board's the logistic fit of win/loss")
    parser.add_argument("--fit-positions", type=int, default=5000)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.board:
        if args.game:
            parser.error("--board tunes on several boards: no --game")
        if args.fit and args.start:
            parser.error("--fit starts from the fit: give --fit or --start, not both")
        if args.fit and any(make_game(name, **board).value_kind.name == "margin"
                            for name, board in map(board_of, args.board)):
            parser.error("--fit over several boards fits win/loss: one margin game's board with --game")
        tune_boards(args)
        return
    if not args.game:
        parser.error("--game (one board) or --board (several) is needed")
    board = {k: v for k, v in (("cols", args.cols), ("stones", args.stones), ("size", args.size))
             if v is not None}
    game = make_game(args.game, **board)
    if args.fit and args.start:
        parser.error("--fit starts from the fit: give --fit or --start, not both")
    if args.fit and game.value_kind.name != "margin":
        parser.error("--fit fits margins: a margin game's table")
    path = table_path(game, args.tables)
    with open_table(path) as table:
        cases = cases_of(table, game, args.positions, random.Random(args.seed))
        held_out = cases_of(table, game, args.holdout, random.Random(args.seed + 1000))
        fit = fit_weights(table, game, args.fit_positions, random.Random(args.seed + 2000)) if args.fit else None
    first = (fit["weights"] if fit else [int(w) for w in args.start.split(",")] if args.start
             else list(game.evaluation.weights))
    weights = list(first)
    def judged(trial):
        kept = agreement(fresh(game, trial), cases, args.nodes)
        return kept, {"kept": kept}

    weights, best_score, history = coordinate_search(weights, judged, args.rounds)
    start_score = history[0]["kept"]
    held = {}
    games_own = list(game.evaluation.weights)
    games_own_score = agreement(fresh(game, games_own), cases, args.nodes)
    for label, trial in (("start", first), ("end", weights), ("games_own", games_own)):
        held[label] = agreement(fresh(game, trial), held_out, args.nodes)
    emit({"command": "python bench/tune_evaluation.py " + " ".join(sys.argv[1:]),
          "machine": machine(), "game": game.describe(), "features": list(game.evaluation.features),
          "positions": len(cases), "nodes": args.nodes,
          "held_out_positions": len(held_out),
          "start": {"weights": first, "kept": start_score,
                    "kept_held_out": held["start"]},
          "end": {"weights": weights, "kept": best_score, "kept_held_out": held["end"]},
          "games_own": {"weights": games_own, "kept": games_own_score,
                        "kept_held_out": held["games_own"]},
          "fit": fit,
          "steps": history}, args.out)


if __name__ == "__main__":
    main()
