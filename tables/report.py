"""What `info` and a finished `solve` report about a table, as plain data for text or JSON."""
from __future__ import annotations

from .query import _value_dict
from .format import BeyondTable
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
        "max_stones": meta.get("max_stones"),
        "value_kind": table.game.value_kind.name,
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
