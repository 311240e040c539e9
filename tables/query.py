"""`sowsolve query`: the value of a position and of each of its moves, the principal variation,
and (score games) the end of the game from the stores -- as plain data for text or JSON."""
from __future__ import annotations

from typing import Callable, ContextManager, Protocol

from ..solver.contract import Game
from ..solver.search import DEFAULT_MAX_POSITIONS
from ..solver.tiers import no_progress
from .format import CorruptTable, NotInTable

Progress = Callable[[int, str], ContextManager]


class Table(Protocol):
    """What the answers here read of a table (tables/store.py's reader is one, and hands
    itself to them): its game and path, the record of a position it holds, and the error for
    one it does not."""
    game: Game
    path: str

    def record(self, position) -> int: ...

    def not_in_table(self, position) -> NotInTable: ...


def _answer(table: Table, position, max_search: int, progress: Progress | None):
    """Records of positions the table does not hold, from the game's solver (a search from
    the position); NotInTable where the solver answers none."""
    game = table.game
    record = game.solver.answer(game, position, max_search, progress or no_progress)
    if record is None:
        raise table.not_in_table(position)
    return record


def _value_dict(value) -> dict:
    return {"value": value.value, "remoteness": value.remoteness}


class NotProved(RuntimeError):
    """A proof search that spent its budget before proving the position."""


#: the table of the proof search that answers a position a table lacks (query --max-nodes)
PROOF_MEMORY = 1 << 30


def proved(table: Table, position, max_nodes: int, progress: Progress | None) -> dict:
    """A position the table lacks, answered by the proof search within `max_nodes`
    expansions: its value and the moves the search proved (win or loss for the side playing
    them), no remoteness (no part of a proof).  NotProved when the budget runs out."""
    from ..solver import proof as proofs
    game = table.game
    result, prover = proofs.prove(game, position, PROOF_MEMORY, progress or no_progress, max_nodes)
    if result is None:
        raise NotProved(f"{game.format_position(position)} is not proved within the budget: "
                        f"{prover.nodes:,} positions expanded (--max-nodes {max_nodes})")
    moves = []
    for move in game.legal_moves(position):
        phi, delta = prover.numbers(game.key(game.play(position, move))[1])
        if delta == 0 or phi == 0:      # the reply's side to move proved lost, or won
            moves.append({"move": game.format_move(move), "value": "win" if delta == 0 else "loss",
                          "remoteness": None})
    moves.sort(key=lambda m: m["value"] != "win")
    return {
        "position": game.format_position(position), "value": result.value, "remoteness": None,
        "final": result.moves == 0, "moves": moves,
        "best": [m["move"] for m in moves if m["value"] == result.value == "win"],
        "side_to_move": game.side_to_move(position),
        "source": "proof", "nodes": result.nodes, "value_kind": game.value_kind.name,
        "game": game.name, "description": game.describe(), "parameters": game.parameters(),
    }


def query(table: Table, text: str, max_search: int = DEFAULT_MAX_POSITIONS,
          progress: Progress | None = None, max_nodes: int | None = None) -> dict:
    """Value of a position and of each legal move for the side playing it, best first.

    A keyed table holds only what its search reached from the start; any other position is
    answered by searching from it with the same engine (up to `max_search` positions), or with
    `max_nodes`, by the proof search (`proved`)."""
    game = table.game
    position = game.parse_position(text)
    record, source = table.record, "table"
    try:
        record(position)
    except NotInTable:
        if max_nodes is not None and game.solver.proves:
            return proved(table, position, max_nodes, progress)
        record = _answer(table, position, max_search, progress)
        source = game.solver.name           # answered by the solver, not the table
    kind = game.value_kind
    value = kind.decode(record(position))
    if source == "table":
        record = _children_held(table, position)
    moves = []
    for move in game.legal_moves(position):
        child = game.play(position, move)
        moves.append((game.format_move(move), kind.decode(record(child))
                      .for_mover(game.move_gain(position, move))))
    moves.sort(key=lambda mv: mv[1].sort_key())
    return {
        "position": game.format_position(position),
        "value": value.value,
        "remoteness": value.remoteness,
        "final": not moves or value.remoteness == 0,
        "moves": [{"move": m, **_value_dict(v)} for m, v in moves],
        "best": [m for m, v in moves if v == value],
        "side_to_move": game.side_to_move(position),
        "source": source,
        "value_kind": kind.name,
        "game": game.name, "description": game.describe(), "parameters": game.parameters(),
    }


def _children_held(table: Table, position) -> Callable[[object], int]:
    """The table's records of positions played from one it holds: a keyed table holds every
    position reachable from its start, so a child it lacks means a damaged table, not a
    position out of its reach."""
    def record(child) -> int:
        try:
            return table.record(child)
        except NotInTable:
            raise CorruptTable(f"{table.path} is corrupt: it holds "
                               f"{table.game.format_position(position)} but not "
                               f"{table.game.format_position(child)}, reached from it") from None
    return record


MAX_LINE = 10_000


def line(table: Table, text, plies: int | None = None, max_search: int = DEFAULT_MAX_POSITIONS,
         progress: Progress | None = None) -> dict:
    """The principal variation from a position: play the first best move (the first of
    query's `best`: it keeps the value, with the best remoteness) again and again.

    Returns {"line": [{"move", "position", "value", "remoteness"} per ply, with "captured" in
    score games], "end": why it stops}: "final" (a final position), "plies" (`plies` played),
    "repetition" (a position repeats: both sides keep to endless play), or "no best move" (no
    move keeps the stored value: a damaged table).  Values are for the side to move after each
    move, so in win/loss games they alternate, and in score games each value is the seeds the
    move captured minus the value before it."""
    game = table.game
    position = game.parse_position(text) if isinstance(text, str) else text
    try:
        table.record(position)
        record = _children_held(table, position)
    except NotInTable:
        record = _answer(table, position, max_search, progress)
    kind = game.value_kind
    seen, steps = {position}, []
    limit = MAX_LINE if plies is None else min(plies, MAX_LINE)
    while True:
        value = kind.decode(record(position))
        moves = game.legal_moves(position)
        if not moves or value.remoteness == 0:
            end = "final"
            break
        if len(steps) >= limit:
            end = "plies"
            break
        chosen = None
        for move in moves:          # query's best[0]: the first legal move that keeps the value
            child = game.play(position, move)
            gain = game.move_gain(position, move)
            child_value = kind.decode(record(child))
            if child_value.for_mover(gain) == value:
                chosen = (move, child, child_value, gain)
                break
        if chosen is None:
            end = "no best move"
            break
        move, child, child_value, gain = chosen
        steps.append({"move": game.format_move(move), "position": game.format_position(child),
                      **_value_dict(child_value), **kind.step(gain)})
        if child in seen:
            end = "repetition"
            break
        seen.add(child)
        position = child
    return {"line": steps, "end": end, "value_kind": kind.name}


def final_result(table: Table, query_result: dict, stores: str, board=None) -> dict:
    """Score games: the end of the game from the stores already filled ("P,p") and the margin
    the side to move secures from here on (the game's own rule, Game.final_result).  `board`:
    the game the position is of, where the table is of another board holding its positions
    (the seeds of the game are that board's)."""
    game = table.game if board is None else board
    return game.final_result(game.parse_position(query_result["position"]), stores,
                             query_result["value"])
