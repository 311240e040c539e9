"""What the commands ask of a table, as plain data (dicts and lists) for text or JSON output."""
from __future__ import annotations

import random
import re
from typing import Callable, ContextManager

import numpy as np

from ..solver.kernels import verify_keys, verify_range
from ..solver.search import DEFAULT_MAX_POSITIONS, discs_of, search
from ..solver.retrograde import default_threads, last_uses, no_progress, summarize
from ..solver.values import Margin, Value, decode, summarize_margins
from ..solver.errors import BadParameters
from .format import CorruptTable, NotInTable
from .store import Table

Progress = Callable[[int, str], ContextManager]


def _value_dict(value) -> dict:
    return {"value": value.value, "remoteness": value.remoteness}


def query(table: Table, text: str, max_search: int = DEFAULT_MAX_POSITIONS,
          progress: Progress | None = None) -> dict:
    """Value of a position and of each legal move for the side playing it, best first.

    A keyed table holds only what its search reached from the start; any other position is
    answered by searching from it with the same engine (up to `max_search` positions)."""
    game = table.game
    position = game.parse_position(text)
    record, source = table.record, "table"
    try:
        record(position)
    except NotInTable:
        solver = search(game, position, max_search, progress or no_progress, "searching")
        record, source = (lambda p: solver.record(game.key(p)[1])), "search"
    value = decode(game.value_kind, record(position))
    if source == "table":
        record = _children_held(table, position)
    moves = []
    for move in game.legal_moves(position):
        child = game.play(position, move)
        moves.append((game.format_move(move), decode(game.value_kind, record(child))
                      .for_mover(game.move_gain(position, move))))
    moves.sort(key=lambda mv: mv[1].sort_key())
    return {
        "position": game.format_position(position),
        "value": value.value,
        "remoteness": value.remoteness,
        "final": not moves or value.remoteness == 0,
        "moves": [{"move": m, **_value_dict(v)} for m, v in moves],
        "best": [m for m, v in moves if v == value],
        "source": source,
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
        solver = search(game, position, max_search, progress or no_progress, "searching")
        record = lambda p: solver.record(game.key(p)[1])  # noqa: E731
    seen, steps = {position}, []
    limit = MAX_LINE if plies is None else min(plies, MAX_LINE)
    while True:
        value = decode(game.value_kind, record(position))
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
            child_value = decode(game.value_kind, record(child))
            if child_value.for_mover(gain) == value:
                chosen = (move, child, child_value, gain)
                break
        if chosen is None:
            end = "no best move"
            break
        move, child, child_value, gain = chosen
        step = {"move": game.format_move(move), "position": game.format_position(child),
                **_value_dict(child_value)}
        if game.value_kind == "margin":
            step["captured"] = gain
        steps.append(step)
        if child in seen:
            end = "repetition"
            break
        seen.add(child)
        position = child
    return {"line": steps, "end": end}


def final_result(table: Table, query_result: dict, stores: str) -> dict:
    """Score games: the end of the game from the stores already filled ("P,p") and the margin
    the side to move secures from here on."""
    game = table.game
    if game.value_kind != "margin":
        raise BadParameters("--stores applies to score games (Zig Zag) only")
    match = re.fullmatch(r"\s*(\d{1,4})\s*,\s*(\d{1,4})\s*", stores)
    if match is None:
        raise BadParameters(f"--stores must be two counts, P's and p's, like 12,8; not "
                            f"{stores[:20]!r}{'...' if len(stores) > 20 else ''}")
    store_p, store_q = int(match.group(1)), int(match.group(2))
    position = game.parse_position(query_result["position"])
    seeds = sum(position.board)
    if store_p + store_q + seeds != game.total:
        raise BadParameters(f"--stores {store_p},{store_q}: the stores and the board hold every "
                            f"seed of the game, {game.total}; {store_p} + {store_q} in the stores "
                            f"and {seeds} on the board make {store_p + store_q + seeds}")
    if position.last is None and store_p + store_q:
        raise BadParameters(f"--stores {store_p},{store_q}: the position says nobody has captured "
                            f"yet (last capturer -), so both stores are empty")
    if position.last is not None and (store_p if position.last == "P" else store_q) == 0:
        raise BadParameters(f"--stores {store_p},{store_q}: the position says {position.last} "
                            f"captured last, so {position.last}'s store cannot be empty")
    margin = query_result["value"]
    own, other = (store_p, store_q) if position.side == "P" else (store_q, store_p)
    difference = own - other + margin
    result = {"side": position.side, "final_margin": difference,
              "result": "win" if difference > 0 else "loss" if difference < 0 else "tie"}
    if (seeds + margin) % 2 == 0 and (position.last is not None or margin != 0):
        # every seed on the board ends in a store: the last capturer takes what is left
        gain_own, gain_other = (seeds + margin) // 2, (seeds - margin) // 2
        finals = (own + gain_own, other + gain_other)
        result["final_stores"] = dict(zip(("P", "p") if position.side == "P" else ("p", "P"), finals))
    return result


def _start_values(table: Table) -> list[dict]:
    game = table.game
    return [{"position": game.format_position(p), **_value_dict(table.probe(p))}
            for p in game.initial_positions()]


def summary(table: Table) -> dict:
    """The short result a finished solve prints."""
    meta = table.meta
    positions = sum(table.tier_size(t) for t in table.tiers)
    return {
        "game": meta["game"], "description": table.game.describe(),
        "parameters": meta["parameters"],
        "positions_per_side": positions,
        "start": _start_values(table),
        "solve_seconds": meta.get("solve_seconds"),
        "size_on_disk": table.size_on_disk(),
    }


def info(table: Table) -> dict:
    meta = table.meta
    tiers, longest = [], None
    totals = {"losses": 0, "draws": 0, "wins": 0}
    for tier in table.tiers:
        row = {"tier": tier, "name": table.game.tier_name(tier), "positions": table.tier_size(tier),
               "solved": tier in table.solved_tiers}
        if row["solved"]:
            summary_ = table.tier_info(tier)
            for key in ("losses", "draws", "wins", "longest_win", "stored_bytes", "seconds"):
                row[key] = summary_.get(key)
            for key in totals:
                totals[key] += int(summary_.get(key, 0))
            if summary_.get("longest_win_index", -1) >= 0 and (
                    longest is None or summary_["longest_win"] > longest[0]):
                longest = (summary_["longest_win"], tier, summary_["longest_win_index"])
        tiers.append(row)
    size = table.size_on_disk()
    positions = sum(row["positions"] for row in tiers)
    solved_positions = sum(row["positions"] for row in tiers if row["solved"])
    result = {
        "table": table.path, "game": meta["game"], "description": table.game.describe(),
        "parameters": meta["parameters"], "finished": table.finished,
        "format_version": meta["format_version"], "software": meta.get("software"),
        "positions_per_side": positions,
        "positions_solved": solved_positions,
        "note": table.game.storage_note,
        **totals,
        "tiers": tiers,
        "size_on_disk": size,
        "bytes_per_position": round(size / solved_positions, 4) if solved_positions else None,
        "solve_seconds": meta.get("solve_seconds"),
        "created": meta.get("created"), "finished_at": meta.get("finished_at"),
    }
    if table.finished:
        result["start"] = _start_values(table)
    if longest is not None:
        rem, tier, index = longest
        position = table.stored_positions(tier, index, index + 1)[0]
        result["longest_win"] = {"remoteness": rem, "position": table.game.format_position(position)}
    return result


def _fold_python(options: list):
    """The value of a position from its moves' values for the player to move here."""
    return min(options, key=lambda v: v.sort_key())


def check_table(table: Table, samples: int, full: bool, seed: int) -> dict:
    """Checksums of every block, metadata consistency, and stored values against children:
    every position with `full` (in the kernel; for score tables through the Python rules),
    else `samples` per tier through the Python rules (independent of the kernel's moves)."""
    game = table.game
    failures: list[str] = []
    if not table.keyed and [int(t) for t in table.tiers] != list(game.tiers()):
        failures.append("the metadata's tier list differs from the game's")
    if sorted(table.solved_tiers) != sorted(table.tiers):
        failures.append("the metadata marks the table finished but not every tier solved")
    rng = random.Random(seed)
    window: dict[int, np.ndarray] = {}          # dense tables: the tiers children lie in
    keyed_parts: list[tuple[np.ndarray, np.ndarray]] = []
    capsule = game.kernel().capsule() if full and game.value_kind == "winloss" else None
    checked = blocks = 0

    def child_record(child) -> int:
        if table.keyed:
            return table.record(child)
        tier, index = game.locate(child)
        return int(window[tier][index])

    last = last_uses(game, table.tiers) if not table.keyed else {}
    for position, tier in enumerate(table.tiers):
        if not table.keyed and table.tier_size(tier) != game.tier_size(tier):
            failures.append(f"tier {tier} holds {table.tier_size(tier)} positions; the game has "
                            f"{game.tier_size(tier)}")
            continue
        records = table.tier_records(tier)          # every block's checksum verified here
        blocks += table.blocks_of(tier)
        stored = table.tier_info(tier)
        computed = summarize_margins(records) if game.value_kind == "margin" else summarize(records)
        for key in ("positions", "losses", "draws", "wins", "longest_win"):
            if stored.get(key) != computed[key]:
                failures.append(f"tier {tier}: the summary says {key} = {stored.get(key)}, the "
                                f"records give {computed[key]}")
        if computed["unsolved"]:
            failures.append(f"tier {tier}: {computed['unsolved']} records hold no value")
        if table.keyed:
            keys = table.tier_keys(tier)
            blocks += table.blocks_of(tier)
            if keys.size > 1 and not bool(np.all(keys[1:] > keys[:-1])):
                failures.append(f"tier {tier}: its keys are not strictly increasing")
            if keys.size and not bool(np.all(discs_of(keys) == tier)):
                failures.append(f"tier {tier}: some keys hold another number of discs")
            if stored.get("first_keys") != [int(k) for k in keys[::table.block_records]]:
                failures.append(f"tier {tier}: the block index disagrees with the keys")
            keyed_parts.append((keys, records))
        else:
            for old in [t for t in window if last[t] < position]:
                del window[old]
            for dep in set(game.tier_dependencies(tier)) - set(window):
                window[dep] = table.tier_records(dep)
            window[tier] = records
            if full and game.value_kind == "winloss":
                arrays: list = [None] * (max(table.tiers) + 1)
                for t, array in window.items():
                    arrays[t] = array
                bad = verify_range(capsule, tier, 0, records.size, arrays, default_threads())
                checked += records.size
                if bad:
                    failures.append(f"tier {tier}: {bad} stored values differ from their children's")
        if not full or game.value_kind == "margin":     # score tables: --full in Python
            size = records.size
            count = size if full else samples
            for index in (range(size) if size <= count else rng.sample(range(size), count)):
                position = table.stored_positions(tier, index, index + 1)[0]
                stored_value = decode(game.value_kind, int(records[index]))
                expected = _expected(game, position, child_record)
                checked += 1
                if game.value_kind == "margin":
                    if expected != stored_value:
                        failures.append(f"{game.format_position(position)}: stored margin "
                                        f"{stored_value.margin} in {_plies(stored_value.remoteness)}, "
                                        f"its moves give {expected.margin} in "
                                        f"{_plies(expected.remoteness)}")
                elif expected != stored_value:
                    failures.append(f"{game.format_position(position)}: stored {stored_value.value} "
                                    f"in {stored_value.remoteness}, its children give "
                                    f"{expected.value} in {expected.remoteness}")
    if full and keyed_parts:
        keys = np.concatenate([k for k, _ in keyed_parts])
        records = np.concatenate([r for _, r in keyed_parts])
        order = np.argsort(keys, kind="stable")
        bad, missing = verify_keys(capsule, keys[order], records[order], keys)
        checked += keys.size
        if bad:
            failures.append(f"{bad} stored values differ from their children's")
        if missing:
            failures.append(f"{missing} children of stored positions are missing from the table")
    return {"table": table.path, "tiers": len(table.tiers), "blocks": blocks,
            "positions_verified": checked, "full": full, "failures": failures[:100],
            "failure_count": len(failures)}


def _plies(remoteness) -> str:
    return "no end" if remoteness is None else f"{remoteness} plies"


def _expected_margin(game, position, child_record: Callable[[object], int]) -> Margin:
    """The margin and remoteness a score position must have given its children's records.

    The margin is the best of the moves (what the move banks minus the child's margin).  The
    remoteness is that of a move keeping the margin, following the threshold attractors: where
    the margin beats the leftover margin (the value of play that never captures again) the side
    to move forces it and hurries, where it falls short the opponent forces it and the side to
    move delays.  A margin equal to the leftover is final (remoteness 0) exactly when no move
    captures and every child is final; otherwise it is scored like endless play: no end unless
    every margin-keeping move ends, and then the slowest of them."""
    moves = game.legal_moves(position)
    leftover = game.leftover_margin(position)
    if not moves:
        return Margin(leftover, 0)
    tier = game.locate(position)[0]
    options = []
    for move in moves:
        child = game.play(position, move)
        options.append((decode("margin", child_record(child)).for_mover(game.move_gain(position, move)),
                        game.locate(child)[0] == tier))
    margin = max(value.margin for value, _ in options)
    keeping = [value.remoteness for value, _ in options if value.margin == margin]
    if margin == leftover and all(same_tier and value.remoteness == 1 for value, same_tier in options):
        return Margin(margin, 0)    # final: no capture can be reached any more
    if margin > leftover:           # the side to move forces it: the quickest
        finite = [r for r in keeping if r is not None]
        return Margin(margin, min(finite) if finite else None)
    if any(r is None for r in keeping):  # the opponent forces it, or nobody: the slowest
        return Margin(margin, None)
    return Margin(margin, max(keeping))


def _expected(game, position, child_record: Callable[[object], int]):
    """The value a position must have given its children's stored values."""
    if game.value_kind == "margin":
        return _expected_margin(game, position, child_record)
    outcome = game.outcome(position)
    if outcome is not None:
        return Value(outcome, 0)
    return _fold_python([decode(game.value_kind, child_record(game.play(position, move))).for_mover()
                         for move in game.legal_moves(position)])
