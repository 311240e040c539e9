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
            view = game.kernel_children(tier, index)
            if not reference:
                outcome = game.outcome(position)
                if not isinstance(view, int) or Value.from_record(view) != Value(outcome, 0):
                    fail(position, f"final ({outcome}) but the kernel says {view!r}")
            elif view != [tuple(game.locate(child)) for _, child in reference]:
                fail(position, "the kernel's child indices differ from the reference children")
            counts["moves"] += len(reference)
            for move, parent in game.kernel_unmoves(position):
                counts["unmoves"] += 1
                if game.play(parent, move) != position or game.locate(parent)[0] != tier:
                    fail(position, f"un-move {game.format_move(move)} from "
                                   f"{game.format_position(parent)} does not replay to it")
            for move, child in reference:
                if game.locate(child)[0] == tier and (move, position) not in game.kernel_unmoves(child):
                    fail(position, f"move {game.format_move(move)} keeps the tier but is missing "
                                   f"from the un-moves of {game.format_position(child)}")
    return {"game": game.name, "description": game.describe(), **counts,
            "failures": failures[:100], "failure_count": len(failures)}


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
