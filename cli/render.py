"""Text rendering of the command results (the JSON output is the dicts themselves)."""
from __future__ import annotations


def _value(value, remoteness) -> str:
    if isinstance(value, int):           # a margin (score games)
        if remoteness is None:
            return f"margin {value:+d}, from play that avoids every capture forever"
        if remoteness == 0:
            return f"margin {value:+d} (game over: no capture can happen any more)"
        return f"margin {value:+d}, game over in {remoteness} plies"
    if remoteness == 0:
        return f"{value} (game over)"
    return f"{value} in {remoteness} plies"


def summary_text(r: dict) -> str:
    lines = [f"{r['description']}: {r['positions_per_side']:,} positions stored"]
    for start in r["start"]:
        lines.append(f"  {start['position']}: {_value(start['value'], start['remoteness'])} "
                     f"for the side to move")
    if r.get("solved_now"):
        lines.append(f"solved {r['positions_solved_now']:,} positions in {r['seconds']:.1f} s"
                     + (f" (resumed after tier {r['resumed_from_tier']})"
                        if r.get("resumed_from_tier") is not None else ""))
    else:
        lines.append("the table was already finished: nothing to do")
    lines.append(f"table: {r['table']} ({r['size_on_disk']:,} bytes)")
    return "\n".join(lines)


def query_text(r: dict) -> str:
    lines = [f"position   {r['position']}",
             f"value      {_value(r['value'], r['remoteness'])}"]
    if r["moves"]:
        lines.append("moves      (value for the side playing it)")
        width = max(len(m["move"]) for m in r["moves"])
        for m in r["moves"]:
            value = f"{m['value']:+d}" if isinstance(m["value"], int) else m["value"]
            rem = "no end" if m["remoteness"] is None else m["remoteness"]
            lines.append(f"  {m['move']:<{width}}  {value:<5} {rem}")
        lines.append(f"best       {' '.join(r['best'])}")
    if "result" in r:
        res = r["result"]
        stores = (", final stores " + ", ".join(f"{k} {v}" for k, v in res["final_stores"].items())
                  if "final_stores" in res else "")
        lines.append(f"result     {res['result']} for {res['side']} by {abs(res['final_margin'])}{stores}")
    return "\n".join(lines)


def info_text(r: dict) -> str:
    lines = [f"table      {r['table']}",
             f"game       {r['description']} ({r['game']} {r['parameters']})",
             f"status     {'finished' if r['finished'] else 'NOT finished'}",
             f"positions  {r['positions_per_side']:,} stored: {r['note']}",
             f"results    {r['wins']:,} wins, {r['losses']:,} losses, {r['draws']:,} draws "
             f"for the side to move"]
    for start in r.get("start", []):
        lines.append(f"start      {start['position']}: {_value(start['value'], start['remoteness'])}")
    if "longest_win" in r:
        lines.append(f"longest    win in {r['longest_win']['remoteness']} plies from "
                     f"{r['longest_win']['position']}")
    lines.append(f"size       {r['size_on_disk']:,} bytes ({r['bytes_per_position']} per position)")
    if r.get("solve_seconds") is not None:
        lines.append(f"solved in  {r['solve_seconds']} s")
    lines.append("tier  positions        wins      losses  longest")
    for t in r["tiers"]:
        if t["solved"]:
            lines.append(f"{t['tier']:>4} {t['positions']:>10,} {t['wins']:>11,} {t['losses']:>11,} "
                         f"{t['longest_win']:>8}")
        else:
            lines.append(f"{t['tier']:>4} {t['positions']:>10,}   (not solved)")
    return "\n".join(lines)


def check_text(r: dict) -> str:
    if "table" in r:
        head = (f"checked {r['table']}: {r['tiers']} tiers, {r['blocks']} blocks, "
                f"{r['positions_verified']:,} positions against their children"
                + (" (all)" if r["full"] else " (sampled)"))
    else:
        head = (f"checked the contract of {r['description']}: {r['positions']:,} positions, "
                f"{r['moves']:,} moves, {r['unmoves']:,} un-moves")
    if not r["failures"]:
        return head + "\nOK"
    return "\n".join([head, f"{r['failure_count']} FAILURES:"] + [f"  {f}" for f in r["failures"]])
