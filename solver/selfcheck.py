"""`sowsolve check GAME`: sample positions and verify the Game contract.

Games with a dense index: positions sampled from every tier.  For each P (and its images):
  rank/unrank round-trip   locate(stored_positions(t, i)) == (t, i), for every image of P
  kernel == rules          the kernel's moves and children equal the Python reference's
  solver view              kernel_children(t, i) == locate(child) of every reference move,
                           or the final record when the reference says the game is over
  un-moves                 every kernel un-move replays to P without loss; every reference
                           move that keeps the tier is found back among its child's un-moves
"""
from __future__ import annotations

import random

import numpy as np

from .contract import Game
from .values import Value


def check_game(game: Game, samples: int = 1000, seed: int = 0) -> dict:
    if game.indexing != "dense":
        return check_by_walks(game, samples, seed)
    rng = random.Random(seed)
    failures: list[str] = []
    counts = {"positions": 0, "moves": 0, "unmoves": 0}

    def fail(position, what: str) -> None:
        failures.append(f"{game.format_position(position)}: {what}")

    for tier in game.tiers():
        size = game.tier_size(tier)
        indices = range(size) if size <= samples else rng.sample(range(size), samples)
        for index in indices:
            position = game.stored_positions(tier, index, index + 1)[0]
            counts["positions"] += 1
            for image in game.images(position):
                if tuple(game.locate(image)) != (tier, index):
                    fail(image, f"locates to {game.locate(image)}, stored at {(tier, index)}")
            reference = [(m, game.play(position, m)) for m in game.legal_moves(position)]
            if game.kernel_moves(position) != reference:
                fail(position, "kernel moves differ from the reference rules")
            if game.method == "score-tiers":
                counts["moves"] += len(reference)
                continue            # the solver's view is the tier graph, checked below
            view = game.kernel_children(tier, index)
            if not reference:
                outcome = game.outcome(position)
                if not isinstance(view, int) or Value.from_record(view) != Value(outcome, 0):
                    fail(position, f"final ({outcome}) but the kernel says {view!r}")
            elif view != [tuple(game.locate(child)) for _, child in reference]:
                fail(position, "the kernel's child indices differ from the reference children")
            counts["moves"] += len(reference)
            if type(game).kernel_unmoves is Game.kernel_unmoves:
                continue            # the game offers no un-moves (its solver needs none)
            for move, parent in game.kernel_unmoves(position):
                counts["unmoves"] += 1
                if game.play(parent, move) != position or game.locate(parent)[0] != tier:
                    fail(position, f"un-move {game.format_move(move)} from "
                                   f"{game.format_position(parent)} does not replay to it")
            for move, child in reference:
                if game.locate(child)[0] == tier and (move, position) not in game.kernel_unmoves(child):
                    fail(position, f"move {game.format_move(move)} keeps the tier but is missing "
                                   f"from the un-moves of {game.format_position(child)}")
        if game.method == "score-tiers":
            _check_tier_graph(game, tier, indices, rng, fail, counts)
    return {"game": game.name, "description": game.describe(), **counts,
            "failures": failures[:100], "failure_count": len(failures)}


#: tiers larger than this are sampled by the rules only: their graph would take too long to build
GRAPH_CHECK_LIMIT = 1 << 21


def _check_tier_graph(game: Game, tier: int, indices, rng: random.Random, fail, counts) -> None:
    """Score games: the tier graph the solver reads must hold, for each sampled position, its
    side, its number of moves, the stored index of each same-tier child, and for each capture
    the value the capture is worth, read from the lower tiers.  The lower tiers are filled with
    random records here, so a capture that looked up the wrong position would show."""
    if game.tier_size(tier) > GRAPH_CHECK_LIMIT:
        counts["tiers_too_large_for_graph_check"] = counts.get("tiers_too_large_for_graph_check", 0) + 1
        return
    lower = {}
    noise = np.random.default_rng(rng.randrange(1 << 32))
    for dep in game.tier_dependencies(tier):
        margins = noise.integers(-game.total, game.total + 1, size=game.tier_size(dep))
        lower[dep] = ((margins + 128) | (1 << 8)).astype(np.uint16)
    graph = game.tier_graph(tier, lower)
    width = graph["width"]
    for index in indices:
        position = game.stored_positions(tier, index, index + 1)[0]
        moves = game.legal_moves(position)
        if int(graph["moves"][index]) != len(moves) or int(graph["side"][index]) != "Pp".index(position.side):
            fail(position, "the tier graph gives it another side to move or number of moves")
            continue
        for slot, move in enumerate(moves):
            child = game.play(position, move)
            gain = game.move_gain(position, move)
            target = int(graph["same"][index * width + slot])
            child_tier, child_index = game.locate(child)
            if child_tier == tier:
                if target != child_index:
                    fail(position, f"the tier graph sends {game.format_move(move)} to index "
                                   f"{target}, the rules to {child_index}")
                continue
            record = int(lower[child_tier][child_index])
            child_margin = (record & 0xFF) - 128           # for the child's side to move
            for_p = (gain - child_margin) if position.side == "P" else -(gain - child_margin)
            if target != -2 or int(graph["exit_value"][index * width + slot]) != for_p:
                fail(position, f"the tier graph values the capture {game.format_move(move)} "
                               f"wrongly")
        counts["graph_positions"] = counts.get("graph_positions", 0) + 1


def check_by_walks(game: Game, samples: int = 1000, seed: int = 0) -> dict:
    """Positions met along random games: kernel moves == reference, and for games with packed
    positions the packing and the solver view."""
    rng = random.Random(seed)
    failures: list[str] = []
    counts = {"positions": 0, "moves": 0, "unmoves": 0}

    def fail(position, what: str) -> None:
        failures.append(f"{game.format_position(position)}: {what}")

    position = game.initial()
    while counts["positions"] < samples:
        counts["positions"] += 1
        reference = [(m, game.play(position, m)) for m in game.legal_moves(position)]
        counts["moves"] += len(reference)
        if game.kernel_moves(position) != reference:
            fail(position, "kernel moves differ from the reference rules")
        if game.indexing != "keys":
            position = rng.choice(reference)[1] if reference else game.initial()
            continue
        tier, key = game.key(position)
        stored = game.position_of_key(key)
        if game.key(stored) != (tier, key):
            fail(position, "its canonical key is not canonical for its own unpacking")
        if game.outcome(stored) != game.outcome(position):
            fail(position, f"unpacks to {game.format_position(stored)} with another outcome")
        view = game.kernel().children(key)
        stored_children = [game.play(stored, m) for m in game.legal_moves(stored)]
        if not stored_children:
            if not isinstance(view, int) or Value.from_record(view) != Value(game.outcome(stored), 0):
                fail(position, f"final ({game.outcome(stored)}) but the kernel says {view!r}")
        elif view != [game.key(c)[1] for c in stored_children]:
            fail(position, "the kernel's children differ from the reference children")
        position = rng.choice(reference)[1] if reference else game.initial()
    return {"game": game.name, "description": game.describe(), **counts,
            "failures": failures[:100], "failure_count": len(failures)}
