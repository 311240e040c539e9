"""Text rendering of the command results (the JSON output is the dicts themselves)."""
from __future__ import annotations

import math

from ..solver.values import REM_LONG, VALUE_KINDS, plies

UNITS = ("bytes", "KB", "MB", "GB", "TB", "PB", "EB")


def plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def size_short(n: float) -> str:
    """Bytes in decimal units: '512 bytes', '172 KB', '4.4 MB', '1.7 GB'."""
    n = float(n)
    unit = 0
    while n >= 1000 and unit < len(UNITS) - 1:
        n /= 1000
        unit += 1
    if unit == 0:
        return plural(int(n), "byte", "bytes")
    return f"{n:.1f} {UNITS[unit]}" if n < 100 else f"{n:.0f} {UNITS[unit]}"


def size_text(n: int) -> str:
    """'4.4 MB (4,412,416 bytes)'."""
    if n < 1000:
        return plural(n, "byte", "bytes")
    return f"{size_short(n)} ({n:,} bytes)"


def count_text(n: int) -> str:
    """Exact with separators up to a trillion, then 'm x 10^e'."""
    if n < 10 ** 12:
        return f"{n:,}"
    exponent = int(math.floor(math.log10(n)))
    return f"{n / 10 ** exponent:.1f} x 10^{exponent}"


def duration(seconds: float) -> str:
    for limit, unit, size in ((120, "s", 1), (7200, "min", 60), (3 * 86400, "hours", 3600),
                              (730 * 86400, "days", 86400)):
        if seconds < limit:
            value = seconds / size
            return f"{value:.1f} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{seconds / (365.25 * 86400):,.0f} years"



def _value(r: dict, value, remoteness) -> str:
    """A value in words, as the value kind of the result `r` says it."""
    return VALUE_KINDS[r["value_kind"]].text(value, remoteness)


def summary_text(r: dict) -> str:
    lines = [f"{r['description']}{_endgame(r.get('max_stones'))}: {r['positions_per_side']:,} "
             f"positions stored"]
    for start in r["start"]:
        lines.append(f"  {start['position']}: {_value(r, start['value'], start['remoteness'])} "
                     f"for the side to move")
    if r.get("solved_now"):
        lines.append(f"solved {r['positions_solved_now']:,} positions in {r['seconds']:.1f} s"
                     + (f" (resumed after the tier of {r['resumed_after']})"
                        if r.get("resumed_after") is not None else ""))
        if r.get("cluster"):
            c = r["cluster"]
            lines.append(f"on the cluster: {c['tasks']:,} tasks ({c['rounds']:,} rounds of work "
                         f"units) over {c['task_slots']} task slots")
    else:
        lines.append("the table was already finished: nothing to do")
    lines.append(f"table: {r['table']}, {size_text(r['size_on_disk'])}")
    return "\n".join(lines)


def board_header(r: dict) -> list[str]:
    """The game and board of an answer and why it is that board; the table that answered,
    and its board where that is another one holding the same positions."""
    why = f" ({r['board_reason']})" if r.get("board_reason") else ""
    if not r.get("table"):
        return [f"game       {r['description']}{why}"]
    if r.get("table_description"):
        return [f"game       {r['description']}{why}",
                f"table      {r['table']}: {r['table_description']}, which holds this "
                f"position too (the same pits)"]
    if why:
        return [f"game       {r['description']}{why}", f"table      {r['table']}"]
    return [f"game       {r['description']} (table {r['table']})"]


def query_text(r: dict) -> str:
    lines = [*board_header(r),
             f"position   {r['position']}",
             f"value      {_value(r, r['value'], r['remoteness'])}"]
    if r.get("source") == "proof":
        lines.append(f"source     a proof search from this position ({r['nodes']:,} positions "
                     f"expanded; the table does not hold it): the moves it proved, no remoteness")
    elif r.get("source", "table") != "table":
        lines.append("source     a search from this position (the table does not hold it)")
    if r["moves"]:
        lines.append("moves      (value for the side playing it)")
        width = max(len(m["move"]) for m in r["moves"])
        for m in r["moves"]:
            rem = ("proved" if r.get("source") == "proof" else "no end") if m["remoteness"] is None \
                else m["remoteness"]
            lines.append(f"  {m['move']:<{width}}  {VALUE_KINDS[r['value_kind']].short(m['value']):<5} {rem}")
        lines.append(f"best       {' '.join(r['best'])}")
    if "result" in r:
        res = r["result"]
        lines.append("stores     " + ", ".join(f"{side} {count}" for side, count
                                              in res["given"].items()) + " (given)")
        finals = res.get("final_stores") or {}
        stores = (", final stores " + ", ".join(f"{k} {n}" for k, n in finals.items())
                  if finals else "")
        if res["final_margin"]:
            lines.append(f"result     {res['result']} for {res['side']} by "
                         f"{plural(abs(res['final_margin']), *res['unit'])}{stores}")
        else:
            lines.append(f"result     a tie: equal stores at the end{stores}")
    if "line" in r:
        lines.extend(line_text(r, r["line"], r.get("line_end")))
    return "\n".join(lines)


LINE_ENDS = {
    "final": "the game is over",
    "plies": "the plies asked for are played",
    "repetition": "the last position repeats an earlier one: best play goes on forever",
    "no best move": "no move keeps the stored value (the table is inconsistent here)",
}


def line_text(r: dict, steps: list[dict], end: str | None) -> list[str]:
    if not steps:
        return [f"line       none: {LINE_ENDS.get(end, end)}"]
    lines = ["line       (best play; each value is for the side to move after the move)"]
    move_width = max(len(s["move"]) for s in steps)
    pos_width = max(len(s["position"]) for s in steps)
    for ply, s in enumerate(steps, 1):
        captured = f" (captures {s['captured']})" if s.get("captured") else ""
        lines.append(f"  {ply:>3}. {s['move']:<{move_width}}  {s['position']:<{pos_width}}  "
                     f"{_value(r, s['value'], s['remoteness'])}{captured}")
    lines.append(f"line ends  after {plies(len(steps))}: {LINE_ENDS.get(end, end)}")
    return lines


def info_text(r: dict) -> str:
    lines = [f"table      {r['table']}",
             f"game       {r['description']}",
             f"status     {'finished' if r['finished'] else 'NOT finished'}",
             *([f"endgame    at most {r['max_stones']:,} stones (discs, seeds) on the board"]
               if r.get("max_stones") is not None else []),
             (f"positions  {r['positions_per_side']:,} stored: {r['note']}"
              if r["finished"] else
              f"positions  {r.get('positions_solved', 0):,} of {r['positions_per_side']:,} solved so "
              f"far: {r['note']}"),
             f"results    {r['wins']:,} wins, {r['losses']:,} losses, {r['draws']:,} draws "
             f"for the side to move"]
    for start in r.get("start", []):
        lines.append(f"start      {start['position']}: {_value(r, start['value'], start['remoteness'])}")
    if "longest_win" in r:
        lines.append(f"longest    win in {plies(r['longest_win']['remoteness'])} from "
                     f"{r['longest_win']['position']}")
    long = r.get("long_remoteness")
    if long and long["records"]:
        lines.append(f"long       remoteness past {REM_LONG - 1} plies, in the tiers' long "
                     f"tables: {plural(long['records'], 'record', 'records')}, the longest "
                     f"{plies(long['longest'])}")
    per = r["bytes_per_position"]
    lines.append(f"size       {size_text(r['size_on_disk'])}"
                 + (f", {per} bytes per position" if per is not None else ""))
    if r.get("solve_seconds") is not None:
        lines.append(f"solved in  {duration(r['solve_seconds'])}")
    names = [t.get("name", str(t["tier"])) for t in r["tiers"]]
    width = max([4] + [len(n) for n in names])
    lines.append(f"{'tier':<{width}}   positions        wins      losses  longest")
    for name, t in zip(names, r["tiers"]):
        if t["solved"]:
            lines.append(f"{name:<{width}} {t['positions']:>11,} {t['wins']:>11,} {t['losses']:>11,} "
                         f"{t['longest_win']:>8}")
        else:
            lines.append(f"{name:<{width}} {t['positions']:>11,}   (not solved)")
    return "\n".join(lines)


def check_text(r: dict) -> str:
    if "table" in r:
        head = (f"checked {r['table']}: {plural(r['tiers'], 'tier', 'tiers')}, "
                f"{plural(r['blocks'], 'block', 'blocks')}, "
                f"{plural(r['positions_verified'], 'position', 'positions')} against their children"
                + (" (all)" if r["full"] else " (sampled)"))
    else:
        head = (f"checked the contract of {r['description']}: "
                f"{plural(r['positions'], 'position', 'positions')}, "
                f"{plural(r['moves'], 'move', 'moves')}, {plural(r['unmoves'], 'un-move', 'un-moves')}")
    head = "\n".join([head] + [f"note: {note}" for note in r.get("notes", [])])
    if not r["failures"]:
        return head + "\nOK"
    return "\n".join([head, f"{r['failure_count']} FAILURES:"] + [f"  {f}" for f in r["failures"]])


def prove_text(r: dict) -> str:
    lines = [f"game       {r['description']}", f"position   {r['position']}"]
    if r["moves"] == 0:
        lines.append(f"value      {r['value']} for the side to move (game over)")
    elif r["value"] == "win":
        lines.append(f"value      win for the side to move: {plural(len(r['winning_moves']), 'move', 'moves')} "
                     f"of {r['moves']} proved winning: {' '.join(r['winning_moves'])}")
    else:
        lines.append(f"value      loss for the side to move: every one of its {r['moves']} moves loses")
    if "cluster" in r:
        lines.append(f"search     {r['nodes']:,} positions expanded in {r['seconds']:.1f} s on "
                     f"{plural(r['cluster']['workers'], 'worker', 'workers')} (jobs of "
                     f"{r['cluster']['job_nodes']:,} expansions), a table of "
                     f"{r['table_entries']:,} entries ({size_short(r['table_bytes'])}) on each")
    else:
        lines.append(f"search     {r['nodes']:,} positions expanded in {r['seconds']:.1f} s "
                     f"({plural(r['threads'], 'thread', 'threads')}), a table of "
                     f"{r['table_entries']:,} entries ({size_short(r['table_bytes'])}, "
                     f"{r['entries_replaced']:,} replaced)")
    if "tables" in r:
        lines.append(f"leaves     the endgame table {r['tables']['file']} (at most "
                     f"{r['tables']['max_discs']} discs)")
    if "proof" in r:
        drawn = r["proof"]
        how = (f"; drawn from the search's table in {drawn['drawn_seconds']:.1f} s "
               f"({drawn['positions_walked']:,} positions walked, {drawn['positions_searched_again']:,} "
               f"searched again)" if "drawn_seconds" in drawn else "")
        lines.append(f"proof      {drawn['file']}: {drawn['winner_positions']:,} positions of "
                     f"the winner's, {size_short(drawn['bytes'])}{how}, written in "
                     f"{drawn['written_seconds']:.1f} s")
    lines.append(f"note       {r['note']}")
    return "\n".join(lines)


def proof_check_text(r: dict) -> str:
    head = (f"checked the proof {r['file']}: {r.get('position', '?')} is a "
            f"{r.get('value', '?')} for the side to move")
    if not r["failures"]:
        also = "" if r["method"] == "reference rules" else \
            (f", {plural(r['reference_positions'], 'position', 'positions')} of it again with the "
             f"reference rules (sample drawn with seed {r['seed']})")
        leaves = "" if "tables" not in r else \
            f"; its lines end in the endgame table {r['tables']['file']}, whose records match its checksum"
        return (f"{head}; {plural(r['positions_verified'], 'position', 'positions')} replayed with "
                f"the {r['method']}{also}{leaves}\nOK")
    return "\n".join([f"checked the proof {r['file']}", "FAILED: " + r["failures"][0]])


def tables_text(r: dict) -> str:
    entries = r["tables"]
    if not entries:
        state = "holds no files" if r["exists"] else "does not exist"
        return f"{r['directory']} {state}: no tables"
    head = ("file", "game", "board", "finished", "positions", "size")
    rows = []
    for e in entries:
        if e["status"] in ("table", "unfinished"):
            game, board = e["description"].split(", ", 1) if ", " in e["description"] else (e["description"], "")
            if e.get("max_stones") is not None:     # an endgame table
                board += f", at most {e['max_stones']} on the board"
            rows.append((e["file"], game, board, "yes" if e["finished"] else "no",
                         f"{e['positions']:,}", size_short(e["size_on_disk"])))
        else:
            rows.append((e["file"], f"{e['status']}: {e['problem']}"))
    widths = [max([len(head[i])] + [len(row[i]) for row in rows if len(row) == len(head) or i == 0])
              for i in range(len(head))]
    right = {4, 5}

    def fmt(row) -> str:
        if len(row) != len(head):
            return f"{row[0]:<{widths[0]}}  {row[1]}"
        return "  ".join(f"{c:>{w}}" if i in right else f"{c:<{w}}"
                         for i, (c, w) in enumerate(zip(row, widths))).rstrip()
    return "\n".join([f"tables in {r['directory']}:", fmt(head)] + [fmt(row) for row in rows])


def _endgame(max_stones: int | None) -> str:
    """An endgame table's limit, after the board's description."""
    return "" if max_stones is None else f" (endgame table: at most {max_stones} on the board)"


def estimate_text(e: dict, max_stones: int | None = None) -> str:
    """One line: what a solve will take."""
    positions = f"{count_text(e['positions'])} positions" if e["positions_exact"] else \
        (f"at most {count_text(e['positions'])} positions (how many the search reaches is "
         f"unknown before it runs)")
    lower = (f" (the tiers it reads on disk, mapped: ~{size_short(e['lower_on_disk'])} "
             f"while it runs)" if e.get("lower_on_disk") else "")
    return (f"estimate for {e['description']}{_endgame(max_stones)}: {positions}, peak memory "
            f"~{size_short(e['peak_memory'])}{lower}, table ~{size_short(e['table_bytes'])} on "
            f"disk, time ~{duration(e['seconds'])} ({e['basis']})")


def refusal_text(e: dict) -> str:
    """One sentence: why a solve is refused, with its estimate."""
    limits = []
    if "memory" in e["too_large"]:
        bound = (f"--memory {size_short(e['memory_limit'])}" if e.get("memory_limit") is not None
                 else f"{size_short(e['available_memory'])} available")
        limits.append(f"~{size_short(e['peak_memory'])} of memory ({bound})")
    if "disk" in e["too_large"]:
        limits.append(f"~{size_short(e['table_bytes'] + e.get('lower_on_disk', 0))} of disk "
                      f"({size_short(e['free_disk'])} free)")
    if "time" in e["too_large"]:
        limits.append(f"~{duration(e['seconds'])} (more than a day)")
    if "unknown" in e["too_large"]:
        limits.append(f"more positions than --max-positions allows: {e['beyond_measured']}, so "
                      f"the search would stop unfinished")
    need = limits[0] if len(limits) == 1 else ", ".join(limits[:-1]) + " and " + limits[-1]
    return (f"solving {e['description']} ({count_text(e['positions'])} positions) would take "
            f"{need}; choose a smaller board, or pass --allow-large to start it anyway")


def analyse_text(r: dict, top: int | None = None) -> str:
    """`analyse` in words: every value says whether it is exact (a table, or a search that
    reached only the end of the game and table entries) or an estimate, in the game's unit.
    The moves best first (a Monte Carlo search's: proved wins, then the most visited, its own
    choice), the first `top` of them (left out: every move with a value), the rest counted in
    one line."""
    from ..tables.analysis import describe_value
    unit = r.get("unit", "")
    lines = [*board_header(r), f"position   {r['position']}"]
    if r.get("source") == "table":
        lines.append(f"value      {_value(r, r['value'], r['remoteness'])} (exact: the table)")
    else:
        by = {"table": "the endgame table shows it", "search": "the search shows it"}.get(
            r.get("proved_by"), "proved by the proof search")
        lines.append(f"value      {r['value']} (exact: {by}, no remoteness)"
                     if r.get("proved") else
                     f"value      {describe_value(r, None, unit)} "
                     + (
                        "(exact: the search reached only ends and table entries)" if r["exact"]
                        else "(estimate)" if isinstance(r["value"], str)
                        else f"(estimate; {unit})"))
    if r["moves"]:
        monte_carlo = (r.get("search") or {}).get("method") == "mcts"
        lines.append("moves      (value for the side playing it; exact or estimated; "
                     + ("best first: proved wins, then the most visited, the search's choice)"
                        if monte_carlo else "best first)"))
        shown = [m for m in r["moves"] if m.get("value") is not None or m.get("visits") != 0]
        if top is not None:
            shown = r["moves"][:top]
        rest = len(r["moves"]) - len(shown)
        width = max(len(m["move"]) for m in shown) if shown else 1
        for m in shown:
            if r.get("source") == "table":
                text = VALUE_KINDS[r["value_kind"]].short(m["value"])
                rem = "no end" if m["remoteness"] is None else m["remoteness"]
                lines.append(f"  {m['move']:<{width}}  {text:<5} {rem:<6} exact")
            else:
                label = ("exact (proof)" if m.get("proved") else "exact (table)" if m.get("table")
                         else "exact" if m["exact"]
                         else "no playout tried it" if m.get("visits") == 0
                         else f"estimate, {m['visits']:,} playout{'s' if m['visits'] != 1 else ''}" if "visits" in m
                         else f"estimate, depth {m.get('depth', 0)}")
                lines.append(f"  {m['move']:<{width}}  {describe_value(m, None, unit):<14} {label}")
        if rest:
            untried = sum(1 for m in r["moves"][len(shown):] if m.get("visits") == 0
                          and m.get("value") is None)
            lines.append(f"  ... and {rest} more move{'s' if rest != 1 else ''}"
                         + (f" ({untried} that no playout tried)" if untried else "")
                         + ("; --top K shows more, --json every move" if top is not None
                            else "; --json shows every move"))
        lines.append(f"best       {' '.join(r['best'])}")
    if r.get("line"):
        lines.append(f"line       {' '.join(r['line'])}")
    search = r.get("search")
    if search:
        if search.get("method") == "mcts":
            speed = search.get("playouts_per_second")
            what = f"Monte Carlo, {search['playouts']:,} playouts in {search['seconds']:.2f} s ("
            speed_text = f"{speed / 1e3:.1f} k/s, " if speed else ""
        else:
            speed = search.get("nodes_per_second")
            what = (f"depth {search['depth']}, {search['nodes']:,} positions in "
                    f"{search['seconds']:.2f} s (")
            speed_text = ("" if not speed else f"{speed / 1e6:.2f} M/s, " if speed >= 1e5
                          else f"{speed / 1e3:.1f} k/s, ")
        lines.append(f"search     {what}" + speed_text
                     + f"{search['threads']} thread{'s' if search['threads'] != 1 else ''})"
                     + (f"; tables at the leaves: {search['leaf_tiers']} tiers"
                        if search.get("leaf_tiers") else "; no table at the leaves"))
        leaves = (search.get("proof") or {}).get("leaves")
        if leaves:
            lines.append(f"proof      lines end in the endgame table {leaves['file']} (at most "
                         f"{leaves['max_discs']} discs)")
        if search.get("endgame_table"):
            lines.append(f"table      {search['endgame_table']}: the moves to positions it holds")
    return "\n".join(lines)
