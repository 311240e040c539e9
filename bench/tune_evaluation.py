"""Tune a game's evaluation weights against a solved table: coordinate search, each weight
scaled by the factors below in turn, keeping a change when the engine (not given the table,
a fixed node budget, one thread: deterministic) keeps the value of more sampled positions.

    python bench/tune_evaluation.py --tables DIR --game zigzag --cols 4 --stones 3 \\
        [--positions 300] [--nodes 3000] [--rounds 2] [--out F]

With --fit (margin games) it starts from a least-squares fit instead: the weights whose sum
over the features best predicts the table's margin of --fit-positions sampled positions (a
third seed; one unit of weight per hundredth of a seed, as the engine scores), and --rounds 0
keeps the fit as it is.

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

from bench_analyse import chosen_move, sample
from report import emit, machine

from sowsolve.solver.games import make_game
from sowsolve.tables.analysis import Analyser
from sowsolve.tables.directory import tables_of_board
from sowsolve.tables.store import open_table

FACTORS = (0, 0.5, 2, -1)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", required=True)
    parser.add_argument("--game", required=True)
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
                        help="start from the least-squares fit of the table's margins")
    parser.add_argument("--fit-positions", type=int, default=5000)
    parser.add_argument("--out")
    args = parser.parse_args()
    board = {k: v for k, v in (("cols", args.cols), ("stones", args.stones), ("size", args.size))
             if v is not None}
    game = make_game(args.game, **board)
    if args.fit and args.start:
        parser.error("--fit starts from the fit: give --fit or --start, not both")
    if args.fit and game.value_kind.name != "margin":
        parser.error("--fit fits margins: a margin game's table")
    path = tables_of_board(game, args.tables)[0]
    with open_table(path) as table:
        cases = cases_of(table, game, args.positions, random.Random(args.seed))
        held_out = cases_of(table, game, args.holdout, random.Random(args.seed + 1000))
        fit = fit_weights(table, game, args.fit_positions, random.Random(args.seed + 2000)) if args.fit else None
    analyser = Analyser(game, hash_bytes=1 << 24, search="alphabeta")
    first = (fit["weights"] if fit else [int(w) for w in args.start.split(",")] if args.start
             else list(game.evaluation.weights))
    weights = list(first)
    analyser.engine.set_weights(weights)
    start_score = best_score = agreement(analyser, cases, args.nodes)
    history = [{"weights": list(weights), "kept": best_score}]
    for _ in range(args.rounds):
        for i in range(len(weights)):
            for factor in FACTORS:
                trial = list(weights)
                trial[i] = int(round(weights[i] * factor)) if weights[i] else int(50 * factor)
                if trial == weights:
                    continue
                analyser.engine.set_weights(trial)
                score = agreement(analyser, cases, args.nodes)
                if score > best_score:
                    best_score, weights = score, trial
                    history.append({"weights": list(weights), "kept": best_score})
        analyser.engine.set_weights(weights)
    held = {}
    games_own = list(game.evaluation.weights)
    analyser.engine.set_weights(games_own)
    games_own_score = agreement(analyser, cases, args.nodes)
    for label, trial in (("start", first), ("end", weights), ("games_own", games_own)):
        analyser.engine.set_weights(trial)
        held[label] = agreement(analyser, held_out, args.nodes)
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
