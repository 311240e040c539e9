"""Checks of a game against its reference rules, and of a table's values against their children.

`sowsolve check GAME` runs the checks its solver lists (Solver.checks), each over positions
sampled the same way (one seed), each filling one Report:

  check_ranking      dense index: locate(stored_positions(t, i)) == (t, i), for every image
  check_kernel_moves kernel moves and children == the Python reference's
  check_children     the solver's view: kernel_children(t, i) == locate(child) of every
                     reference move, or the final record where the reference says it is over
  check_dependencies every child lies in its tier or in a tier it declares it reads
  check_unmoves      every kernel un-move replays to the position; every reference move that
                     keeps the tier is found back among its child's un-moves (games offering
                     un-moves)
  check_score_tier   score tiers: the moves and un-moves the solver kernel reads, against the
                     rules, with lower tiers filled with random records; small tiers solved by
                     the kernel and by the reference solver over an explicit graph
  check_walks        keyed games: positions along random games; packing and the solver view

Every game's check also runs check_picture: along random games from the start, the drawing
hook's picture names every legal move exactly once, at spots it draws, each spot once.

`sampled_values` is the value part of `sowsolve check --table`: stored values against the value
kind's fold of their children's records (solver/values.py, `expected`).
"""
from __future__ import annotations

import random
from typing import Callable, Iterator

import numpy as np

from .contract import Drawable, Game, Unmoves
from .tiers import TierManager
from .values import REM_LONG, Margin, widen

class Report:
    """Counts and failures of a self-check."""

    def __init__(self, game: Game):
        self.game = game
        self.counts = {"positions": 0, "moves": 0, "unmoves": 0}
        self.failures: list[str] = []
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        """What the check could not look at, and why (shown with its result)."""
        if text not in self.notes:
            self.notes.append(text)

    def fail(self, position, what: str) -> None:
        self.failures.append(f"{self.game.format_position(position)}: {what}")

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n

    def result(self) -> dict:
        return {"game": self.game.name, "description": self.game.describe(), **self.counts,
                "notes": self.notes, "failures": self.failures[:100],
                "failure_count": len(self.failures)}


def sampled_indices(game: Game, samples: int, rng: random.Random) -> Iterator[tuple[int, list[int]]]:
    """(tier, indices) of every tier: all of a small tier, `samples` of a larger one."""
    for tier in game.tiers():
        size = game.tier_size(tier)
        yield tier, list(range(size)) if size <= samples else rng.sample(range(size), samples)


def _sampled(game: Game, samples: int, rng: random.Random):
    for tier, indices in sampled_indices(game, samples, rng):
        for index in indices:
            yield tier, index, game.stored_positions(tier, index, index + 1)[0]


def check_ranking(game: Game, samples: int, rng: random.Random, report: Report) -> None:
    for tier, index, position in _sampled(game, samples, rng):
        report.count("positions")
        for image in game.images(position):
            if tuple(game.locate(image)) != (tier, index):
                report.fail(image, f"locates to {game.locate(image)}, stored at {(tier, index)}")


def _reference(game: Game, position) -> list:
    return [(m, game.play(position, m)) for m in game.legal_moves(position)]


def check_kernel_moves(game: Game, samples: int, rng: random.Random, report: Report) -> None:
    for _, _, position in _sampled(game, samples, rng):
        reference = _reference(game, position)
        report.count("moves", len(reference))
        if game.kernel_moves(position) != reference:
            report.fail(position, "kernel moves differ from the reference rules")


def check_children(game: Game, samples: int, rng: random.Random, report: Report) -> None:
    for tier, index, position in _sampled(game, samples, rng):
        reference = _reference(game, position)
        view = game.kernel_children(tier, index)
        if not reference:
            outcome = game.outcome(position)
            final = game.value_kind.decode(view) if isinstance(view, int) and view else None
            if final != game.value_kind.value_type(outcome, 0):
                report.fail(position, f"final ({outcome}) but the kernel says {view!r}")
        elif view != [tuple(game.locate(child)) for _, child in reference]:
            report.fail(position, "the kernel's child indices differ from the reference children")


def check_dependencies(game: Game, samples: int, rng: random.Random, report: Report) -> None:
    """Every child lies in the position's own tier or in one its tier declares it reads
    (`tier_dependencies`): the tier manager hands a tier's work only those."""
    for tier, _, position in _sampled(game, samples, rng):
        reads = {tier, *game.tier_dependencies(tier)}
        for move, child in _reference(game, position):
            child_tier = game.locate(child)[0]
            if child_tier not in reads:
                report.fail(position, f"move {game.format_move(move)} leads to tier "
                                      f"{child_tier}, which tier {tier} does not declare it reads")


def check_unmoves(game: Game, samples: int, rng: random.Random, report: Report) -> None:
    if not isinstance(game, Unmoves):
        return                      # the game offers no un-moves (its solver needs none)
    for tier, _, position in _sampled(game, samples, rng):
        for move, parent in game.kernel_unmoves(position):
            report.count("unmoves")
            if game.play(parent, move) != position or game.locate(parent)[0] != tier:
                report.fail(position, f"un-move {game.format_move(move)} from "
                                      f"{game.format_position(parent)} does not replay to it")
        for move, child in _reference(game, position):
            if game.locate(child)[0] == tier and (move, position) not in game.kernel_unmoves(child):
                report.fail(position, f"move {game.format_move(move)} keeps the tier but is "
                                      f"missing from the un-moves of {game.format_position(child)}")


def check_score_tier(game: Game, samples: int, rng: random.Random, report: Report) -> None:
    """Score games: what the solver kernel reads of a tier, against the rules.  For each sampled
    position, its moves in the kernel (the stored index of each same-tier child; for each capture
    the value it is worth, read from lower tiers filled with random records, so a capture that
    looked up the wrong position would show) and its un-moves (each replays to it, and every
    move of the rules that keeps the tier is found among its child's un-moves).  Small tiers are
    also solved by the kernel and by the reference solver over an explicit move graph
    (scoresolve.solve_graph); the records must be the same."""
    from .kernels import solve_graph, solve_score_tier
    kind = game.value_kind
    for tier, indices in sampled_indices(game, samples, rng):
        noise = np.random.default_rng(rng.randrange(1 << 32))
        lower = {dep: _random_tier(kind, game.tier_stones(dep), game.tier_size(dep), noise)
                 for dep in game.tier_dependencies(tier)}
        view = game.score_tier(tier, lower)
        for index in indices:
            position = game.stored_positions(tier, index, index + 1)[0]
            moves = game.legal_moves(position)
            kernel = view.moves(index)
            first = game.side_index(position) == 0
            report.count("positions")
            if len(kernel) != len(moves):
                report.fail(position, "the solver's kernel gives it another number of moves")
                continue
            for (target, value, remoteness), move in zip(kernel, moves):
                child = game.play(position, move)
                child_tier, child_index = game.locate(child)
                if child_tier == tier:
                    if target != child_index:
                        report.fail(position, f"the solver's kernel sends {game.format_move(move)} "
                                              f"to index {target}, the rules to {child_index}")
                    elif index not in view.unmoves(child_index):
                        report.fail(position, f"move {game.format_move(move)} keeps the tier but "
                                              f"is missing from the un-moves of "
                                              f"{game.format_position(child)}")
                    continue
                low = lower[child_tier]
                worth = kind.decode(int(widen(low.records[child_index:child_index + 1], low.long,
                                              child_index)[0]))
                plies = SCORE_NO_END if worth.remoteness is None else worth.remoteness
                worth = worth.for_mover(game.move_gain(position, move)).value
                if target is not None or value != (worth if first else -worth) or remoteness != plies:
                    report.fail(position, f"the solver's kernel values the capture "
                                          f"{game.format_move(move)} wrongly")
            parents = view.unmoves(index)
            for parent in set(parents):
                before = game.stored_positions(tier, parent, parent + 1)[0]
                leading = [m for m in game.legal_moves(before) if game.play(before, m) == position]
                report.count("unmoves")
                if len(leading) != parents.count(parent):
                    report.fail(position, f"un-move from {game.format_position(before)} does not "
                                          f"replay to it as often as the kernel lists it")
        if game.tier_size(tier) <= SOLVER_CHECK_LIMIT:
            records, long, _, _ = solve_score_tier(view, 2)
            first = game.stored_positions(tier, 0, 1)[0]
            try:
                reference, reference_long, _, _ = solve_graph(_explicit_graph(game, tier, view))
            except (ValueError, RuntimeError) as refused:
                report.fail(first, f"its tier ({game.tier_name(tier)}): the reference solver "
                                   f"refuses the moves the kernel gives ({refused})")
                continue
            if not (np.array_equal(records, reference) and np.array_equal(long, reference_long)):
                report.fail(first, f"its tier ({game.tier_name(tier)}): the solver kernel and the "
                                   f"reference solver give different records")
            report.count("tiers_solved_twice")


#: tiers up to this size are also solved by the reference solver (its graph is built in Python)
SOLVER_CHECK_LIMIT = 20_000
#: the remoteness a score tier's moves give a capture into a record of play that never ends
SCORE_NO_END = 0xFFFF


def _random_tier(kind, bound: int, size: int, noise: np.random.Generator):
    """A solved-looking lower tier: random margins within `bound`, remoteness 1, a few
    positions with a remoteness past the record's bits (in the long table) and a few with no
    end, so that a capture read from the wrong record or the wrong long entry shows."""
    margins = noise.integers(-bound, bound + 1, size=size)
    records = kind.encode(margins, 1)
    special = np.sort(noise.choice(size, size=min(size, 6), replace=False))
    long = []
    for k, at in enumerate(special.tolist()):
        full = Margin(int(margins[at]), int(noise.integers(REM_LONG, REM_LONG + 200))
                      if k % 2 else None).to_record()
        records[at] = full & 0xFFFF
        if full >> 16:
            long.append((at << 16) | (full >> 16))
    return kind.tier_data(records, np.array(long, dtype=np.uint64))


def _explicit_graph(game: Game, tier: int, view) -> dict:
    """The move graph scoresolve.solve_graph reads, from the moves the kernel offers."""
    size = game.tier_size(tier)
    rows = [view.moves(i) for i in range(size)]
    width = max([len(r) for r in rows] + [1])
    same = np.full(size * width, -1, dtype=np.int32)
    value = np.zeros(size * width, dtype=np.int16)
    rem = np.zeros(size * width, dtype=np.uint16)
    for i, row in enumerate(rows):
        for j, (target, worth, remoteness) in enumerate(row):
            same[i * width + j] = -2 if target is None else target
            if target is None:
                value[i * width + j], rem[i * width + j] = worth, remoteness
    sides = [game.side_index(p) for p in game.stored_positions(tier, 0, size)]
    bound = game.tier_stones(tier)
    return {"side": np.array(sides, dtype=np.uint8), "width": width, "same": same,
            "moves": np.array([len(r) for r in rows], dtype=np.uint8), "exit_value": value,
            "exit_remoteness": rem, "bound": bound,
            "captures": np.array([any(t is None for t, _, _ in r) for r in rows], dtype=np.uint8),
            "endless_value": view.endless_value}


def check_walks(game: Game, samples: int, rng: random.Random, report: Report) -> None:
    """Positions met along random games: kernel moves == reference, the packing, and the
    solver view (children as packed positions, or the final record)."""
    position = game.initial()
    packs = game.kernel().keyable
    if not packs:
        report.note("positions of this board do not pack into 64 bits (it cannot be solved): "
                    "its moves were checked against the rules, packing and the solver's view not")
    while report.counts["positions"] < samples:
        report.count("positions")
        reference = _reference(game, position)
        report.count("moves", len(reference))
        if game.kernel_moves(position) != reference:
            report.fail(position, "kernel moves differ from the reference rules")
        if not packs:
            position = rng.choice(reference)[1] if reference else game.initial()
            continue
        tier, key = game.key(position)
        stored = game.position_of_key(key)
        if game.key(stored) != (tier, key):
            report.fail(position, "its canonical key is not canonical for its own unpacking")
        if game.outcome(stored) != game.outcome(position):
            report.fail(position, f"unpacks to {game.format_position(stored)} with another outcome")
        view = game.kernel().children(key)
        stored_children = [game.play(stored, m) for m in game.legal_moves(stored)]
        if not stored_children:
            final = game.value_kind.decode(view) if isinstance(view, int) and view else None
            if final != game.value_kind.value_type(game.outcome(stored), 0):
                report.fail(position, f"final ({game.outcome(stored)}) but the kernel says {view!r}")
        elif view != [game.key(c)[1] for c in stored_children]:
            report.fail(position, "the kernel's children differ from the reference children")
        position = rng.choice(reference)[1] if reference else game.initial()


def check_picture(game: Game, samples: int, rng: random.Random, report: Report) -> None:
    """The picture of positions along random games: its moves are the legal moves' texts, each
    starting (and heading) at a spot it draws, its spots named once each."""
    if not isinstance(game, Drawable):
        report.note("the game offers no picture (show, play and serve cannot draw it)")
        return
    games = max(1, samples // 50)
    for _ in range(games):
        position = game.initial()
        for _ in range(200):
            picture = game.picture(position)
            names = [s.name for s in picture.spots]
            legal = game.legal_moves(position)
            report.count("picture")
            if len(set(names)) != len(names):
                report.fail(position, "its picture names a spot twice")
            if sorted(picture.moves) != sorted(game.format_move(m) for m in legal):
                report.fail(position, "its picture's moves differ from the legal moves")
            for start, toward in picture.moves.values():
                if start not in names or (toward is not None and toward not in names):
                    report.fail(position, "its picture marks a move at a spot it does not draw")
                    break
            if not legal:
                break
            position = game.play(position, rng.choice(legal))


def sampled_values(table, load: Callable[[int], np.ndarray], samples: int | None, seed: int,
                   fail: Callable[[str], None], tiered: bool) -> int:
    """Stored values of `samples` positions per tier (all with None) against their children's
    records, through the Python rules.  `tiered`: children are read from the tiers in memory
    (the tier manager's window); else from the table, position by position.  Returns the
    positions checked."""
    game = table.game
    kind = game.value_kind
    rng = random.Random(seed)
    checked = 0

    def check_tier(tier: int, records: np.ndarray, child_record) -> None:
        nonlocal checked
        size = records.size
        count = size if samples is None else samples
        for index in (range(size) if size <= count else rng.sample(range(size), count)):
            position = table.stored_positions(tier, index, index + 1)[0]
            stored = kind.decode(int(records[index]))
            checked += 1
            try:
                expected = kind.expected(game, position, child_record)
            except LookupError as exc:  # a keyed table lacking a child: a failure, not an end
                fail(f"{game.format_position(position)}: a position it leads to is missing "
                     f"({exc})")
                continue
            except ValueError as exc:   # a stored position the rules cannot have
                fail(f"{game.format_position(position)}: {exc}")
                continue
            if expected != stored:
                fail(f"{game.format_position(position)}: {kind.mismatch(stored, expected)}")

    if not tiered:
        for tier in table.tiers:
            check_tier(tier, load(tier), table.record)
        return checked

    class Worker:
        passes = 1

        def __call__(self, tier, window, calls):
            records = load(tier)
            window = {**window, tier: records}

            def child_record(child) -> int:
                child_tier, index = game.locate(child)
                return int(window[child_tier][index])
            check_tier(tier, records, child_record)
            return records

    TierManager(game, load, order=table.tiers).run(Worker(), lambda *done: None)
    return checked
