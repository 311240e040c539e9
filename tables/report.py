"""What `info` and a finished `solve` report about a table, as plain data for text or JSON."""
from __future__ import annotations

import numpy as np

from .query import _value_dict
from .format import BeyondTable, CorruptTable
from .store import Table


def _start_values(table: Table) -> list[dict]:
    """The start's values (none in an endgame table, whose positions have fewer stones)."""
    game = table.game
    starts = []
    for position in game.initial_positions():
        try:
            starts.append({"position": game.format_position(position),
                           **_value_dict(table.probe(position))})
        except BeyondTable:
            continue
    return starts


def summary(table: Table) -> dict:
    """The short result a finished solve prints."""
    meta = table.meta
    positions = sum(table.tier_size(t) for t in table.tiers)
    return {
        "game": meta["game"], "description": table.game.describe(),
        "parameters": meta["parameters"],
        "positions_per_side": positions,
        "start": _start_values(table),
        "max_stones": meta.get("max_stones"),
        "value_kind": table.game.value_kind.name,
        "solve_seconds": meta.get("solve_seconds"),
        "size_on_disk": table.size_on_disk(),
    }


def _longest_win(table: Table, tier: int, index: int, said: int) -> dict:
    """The longest win a summary names, as its record says: the position's record is read
    (its block and, in a margin tier, its long table, every check passed), so a remoteness
    kept in a long table is shown only once that table is read and agrees."""
    block, offset = divmod(index, table.block_records)
    value = table.game.value_kind.decode(int(table.block(tier, block)[offset]))
    if value.remoteness != said:
        raise CorruptTable(f"{table.path} is corrupt: the summary of tier {tier} gives its longest "
                           f"win as {said} plies, its record {value.remoteness}")
    position = table.stored_positions(tier, index, index + 1)[0]
    return {"remoteness": said, "position": table.game.format_position(position)}


def info(table: Table) -> dict:
    meta = table.meta
    tiers, longest = [], None
    totals = {"losses": 0, "draws": 0, "wins": 0}
    has_long = table.game.value_kind.has_long
    long_records, long_plies = 0, None
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
            if has_long:
                # remoteness past a record's bits: the tier's long table, read and checked
                long = table.long_table(tier)
                row["long"] = int(long.size)
                long_records += int(long.size)
                if long.size:
                    most = int((long & np.uint64(0xFFFF)).max())
                    long_plies = most if long_plies is None else max(long_plies, most)
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
        "max_stones": meta.get("max_stones"),
        "value_kind": table.game.value_kind.name,
        **totals,
        "tiers": tiers,
        "size_on_disk": size,
        "bytes_per_position": round(size / solved_positions, 4) if solved_positions else None,
        "solve_seconds": meta.get("solve_seconds"),
        "created": meta.get("created"), "finished_at": meta.get("finished_at"),
    }
    if has_long:
        result["long_remoteness"] = {"records": long_records, "longest": long_plies}
    if table.finished:
        result["start"] = _start_values(table)
    if longest is not None:
        result["longest_win"] = _longest_win(table, longest[1], longest[2], longest[0])
    return result
