"""Pictures of positions: what a game's drawing hook (`Drawable.picture`) returns, and the two ways
it is drawn -- an SVG picture (ElementTree, as python-chess's chess.svg) and text for a
terminal.  A game says *what* is on its board (pits or cells on a grid, their counts, whose
block or house each is, the outlined blocks, where each move starts and where it heads); this
module alone says *how* that looks, so the command line and the web explorer draw every game the
same way and name no game.

A move's mark is the value it leads to for the side playing it (`marks_from_query`): win
green, loss red, draw (or a margin of zero) yellow, with the remoteness (or margin) beside it.
In the SVG, each mark is an element with `class="move ..."` and `data-move="<move text>"`, so a
page can make moves clickable without knowing the game.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

#: grid unit in SVG pixels
UNIT = 56
MARGIN = 34
#: an estimate (the engine's, beyond the tables) is drawn apart from every exact value
COLOURS = {"win": "#2e7d32", "loss": "#c62828", "draw": "#f9a825", "estimate": "#6a4fb3"}
#: fills of the players' blocks or houses, in the order a picture names its owners
OWNER_FILLS = ("#d6e6f5", "#f7dcc4")
OWNER_STROKES = ("#2f5f8a", "#a0522d")


@dataclass(frozen=True)
class Spot:
    """A pit, cell or store.  row/col: its centre on the picture's grid (rows downwards)."""
    name: str
    row: float
    col: float
    count: int | None            # stones, discs or seeds; None where the position has none (stores)
    kind: str = "pit"            # "pit" (round), "cell" (square), "store" (tall, rounded)
    owner: str | None = None     # whose block, house or row (a key of Picture.owners)
    flag: str | None = None      # e.g. "ko": drawn as a ring and named in the text
    height: float = 1.0          # rows a store spans


@dataclass(frozen=True)
class Region:
    """An outlined part of the board (a game's blocks): grid rows r0..r1, cols c0..c1."""
    label: str
    r0: float
    r1: float
    c0: float
    c1: float
    owner: str | None = None


@dataclass(frozen=True)
class Picture:
    title: str
    caption: str                               # "A to move"
    spots: tuple[Spot, ...]
    owners: dict[str, str]                     # owner key -> legend ("block A (left half)")
    regions: tuple[Region, ...] = ()
    #: move text -> (spot it starts at, spot it heads to, or None where a move is its spot)
    moves: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    #: labels along the top and bottom of the columns, and left of the rows (None: none)
    top_labels: tuple[str, ...] | None = None
    bottom_labels: tuple[str, ...] | None = None
    row_labels: tuple[str, ...] | None = None
    notes: tuple[str, ...] = ()                # more lines for the text (ko, last capturer)


@dataclass(frozen=True)
class Mark:
    """What a move leads to, for the side playing it: exact (a table, a proof, a search that
    reached the end) or the engine's estimate, which has a tone of its own."""
    value: str | int | float | None            # "win"/"loss"/"draw", a margin, an estimate
    #                                            (None: an estimate not made yet)
    remoteness: int | None
    exact: bool = True
    #: False where an exact value comes without its length (a search that reached only ends
    #: and table entries): a null remoteness then is not play that never ends
    remoteness_known: bool = True

    @property
    def tone(self) -> str:
        if not self.exact:
            return "estimate"
        if isinstance(self.value, str):
            return self.value
        return "win" if self.value > 0 else "loss" if self.value < 0 else "draw"

    @property
    def short(self) -> str:
        """'win 129', 'loss 12', 'win proved', '+2 17', '0 no end'; estimates '~+1.25',
        'win 13?'."""
        if not self.exact:
            if self.value is None:
                return "~?"                    # no playout tried the move yet
            if isinstance(self.value, str):
                return f"{self.value} {self.remoteness}?"
            return f"~{self.value:+.2f}"
        head = self.value if isinstance(self.value, str) else f"{self.value:+d}" if self.value else "0"
        if self.remoteness is None and self.value in ("win", "loss"):
            return f"{head} proved"            # a proof: the value, no remoteness
        if self.remoteness is None and not self.remoteness_known:
            return f"{head} exact"             # the search's: no length
        return f"{head} {'no end' if self.remoteness is None else self.remoteness}"


def marks_from_query(result: dict) -> dict[str, Mark]:
    """Each move of a query result (tables/query.py) as a mark."""
    return {m["move"]: Mark(m["value"], m["remoteness"], m.get("exact", True),
                            m.get("remoteness_known", True))
            for m in result.get("moves", [])}


# --- SVG ----------------------------------------------------------------------------------------

def _extent(picture: Picture) -> tuple[float, float, float, float]:
    rows = [s.row for s in picture.spots] + [s.row + (s.height - 1) / 2 for s in picture.spots]
    rows += [s.row - (s.height - 1) / 2 for s in picture.spots]
    cols = [s.col for s in picture.spots]
    return min(rows) - 0.5, max(rows) + 0.5, min(cols) - 0.5, max(cols) + 0.5


def svg(picture: Picture, marks: dict[str, Mark] | None = None, size: int | None = None) -> str:
    """The picture as an SVG document (text), each move marked where `marks` gives it."""
    marks = marks or {}
    top, bottom, left, right = _extent(picture)
    # room above and below the grid for a pit's move badge, and beyond it the labels
    label_top = 0.8 if picture.top_labels else 0.35
    label_bottom = 0.8 if picture.bottom_labels else 0.35
    label_left = 0.45 if picture.row_labels else 0
    directions = [m for m, (_, toward) in picture.moves.items() if toward is not None]
    per_column = max(8, int((bottom - top) * UNIT // 15))
    list_width = (20 + 118 * -(-len(directions) // per_column)) if directions and marks else 0
    width = max((right - left + label_left) * UNIT + 2 * MARGIN + list_width, 330)
    height = (bottom - top + label_top + label_bottom + 0.9) * UNIT + 2 * MARGIN

    def x(col: float) -> float:
        return round(MARGIN + (col - left + label_left) * UNIT, 1)

    def y(row: float) -> float:
        return round(MARGIN + (row - top + label_top + 0.45) * UNIT, 1)

    owners = list(picture.owners)
    root = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "version": "1.1",
                              "viewBox": f"0 0 {width:.0f} {height:.0f}",
                              "width": str(size or round(width)),
                              "height": str(round(height * (size / width)) if size else round(height)),
                              "class": "sowsolve-board", "font-family": "sans-serif"})
    ET.SubElement(root, "title").text = f"{picture.title}: {picture.caption}"
    defs = ET.SubElement(root, "defs")
    for tone, colour in COLOURS.items():
        marker = ET.SubElement(defs, "marker", {"id": f"head-{tone}", "viewBox": "0 0 10 10",
                                                "refX": "8", "refY": "5", "markerWidth": "2.6",
                                                "markerHeight": "2.6", "orient": "auto"})
        ET.SubElement(marker, "path", {"d": "M0,0 L10,5 L0,10 z", "fill": colour})
    ET.SubElement(root, "rect", {"x": "0", "y": "0", "width": f"{width:.0f}", "height": f"{height:.0f}",
                                 "fill": "#fbfaf7"})
    caption = ET.SubElement(root, "text", {"x": f"{MARGIN}", "y": f"{MARGIN * 0.75:.0f}",
                                           "font-size": "16", "class": "caption"})
    caption.text = f"{picture.title}: {picture.caption}"
    for region in picture.regions:
        index = owners.index(region.owner) if region.owner in owners else 0
        ET.SubElement(root, "rect", {
            "x": str(x(region.c0 - 0.47)), "y": str(y(region.r0 - 0.47)),
            "width": str(round((region.c1 - region.c0 + 0.94) * UNIT, 1)),
            "height": str(round((region.r1 - region.r0 + 0.94) * UNIT, 1)),
            "rx": "10", "fill": "none", "stroke": OWNER_STROKES[index % 2], "stroke-width": "2.5",
            "stroke-dasharray": "7 4", "class": "region"})
    for spot in picture.spots:
        index = owners.index(spot.owner) if spot.owner in owners else None
        fill = "#ffffff" if index is None else OWNER_FILLS[index % 2]
        group = ET.SubElement(root, "g", {"class": f"spot {spot.kind}", "data-spot": spot.name})
        cx, cy = x(spot.col), y(spot.row)
        if spot.kind == "pit":
            ET.SubElement(group, "circle", {"cx": str(cx), "cy": str(cy), "r": str(UNIT * 0.4),
                                            "fill": fill, "stroke": "#555", "stroke-width": "1.5"})
        else:
            h = spot.height * UNIT * (0.9 if spot.kind == "store" else 0.96)
            w = UNIT * (0.8 if spot.kind == "store" else 0.96)
            ET.SubElement(group, "rect", {"x": str(round(cx - w / 2, 1)), "y": str(round(cy - h / 2, 1)),
                                          "width": str(round(w, 1)), "height": str(round(h, 1)),
                                          "rx": str(UNIT * (0.35 if spot.kind == "store" else 0.05)),
                                          "fill": fill, "stroke": "#555", "stroke-width": "1.5"})
        if spot.flag:
            ET.SubElement(group, "circle", {"cx": str(cx), "cy": str(cy), "r": str(UNIT * 0.46),
                                            "fill": "none", "stroke": "#6a1b9a", "stroke-width": "3",
                                            "class": f"flag {spot.flag}"})
        if spot.count is not None:
            text = ET.SubElement(group, "text", {"x": str(cx), "y": str(round(cy + 7, 1)),
                                                 "text-anchor": "middle", "font-size": "21",
                                                 "class": "count"})
            text.text = str(spot.count)
        else:
            text = ET.SubElement(group, "text", {"x": str(cx), "y": str(round(cy + 5, 1)),
                                                 "text-anchor": "middle", "font-size": "12",
                                                 "fill": "#777", "class": "store-name"})
            text.text = spot.kind
    by_col = sorted({s.col for s in picture.spots if s.kind != "store"})
    by_row = sorted({s.row for s in picture.spots if s.kind != "store"})
    for labels, row, dy in ((picture.top_labels, top, -0.45), (picture.bottom_labels, bottom, 0.62)):
        for col, label in zip(by_col, labels or ()):
            t = ET.SubElement(root, "text", {"x": str(x(col)), "y": str(y(row + dy)), "font-size": "13",
                                             "text-anchor": "middle", "fill": "#444", "class": "label"})
            t.text = label
    for row, label in zip(by_row, picture.row_labels or ()):
        t = ET.SubElement(root, "text", {"x": str(x(left - 0.2)), "y": str(y(row) + 5), "font-size": "13",
                                         "text-anchor": "middle", "fill": "#444", "class": "label"})
        t.text = label
    spots = {s.name: s for s in picture.spots}
    listed: list = []                           # direction moves, listed beside the board
    for move, (start, toward) in picture.moves.items():
        mark = marks.get(move)
        tone = mark.tone if mark else "none"
        colour = COLOURS.get(tone, "#888")
        group = ET.SubElement(root, "g", {"class": f"move {tone}", "data-move": move})
        ET.SubElement(group, "title").text = f"{move}: {mark.short}" if mark else move
        s = spots[start]
        if toward is None:                      # a pit: a badge below (bottom row) or above it
            below = s.row >= max(by_row) if by_row else True
            by = y(s.row + (0.62 if below else -0.62))
            ET.SubElement(group, "rect", {"x": str(round(x(s.col) - UNIT * 0.45, 1)),
                                          "y": str(round(by - 10, 1)), "width": str(round(UNIT * 0.9, 1)),
                                          "height": "17", "rx": "4", "fill": colour if mark else "#eee",
                                          "stroke": "#555" if not mark else colour})
            t = ET.SubElement(group, "text", {"x": str(x(s.col)), "y": str(round(by + 3, 1)),
                                              "text-anchor": "middle", "font-size": "11",
                                              "fill": "#fff" if mark and tone != "draw" else "#222"})
            t.text = mark.short if mark else move
        else:                                   # a direction: an arrow inside the cell toward it
            t_spot = spots[toward]
            dx, dy = t_spot.col - s.col, t_spot.row - s.row
            x1, y1 = x(s.col + dx * 0.24), y(s.row + dy * 0.24)
            x2, y2 = x(s.col + dx * 0.44), y(s.row + dy * 0.44)
            ET.SubElement(group, "line", {"x1": str(x1), "y1": str(y1), "x2": str(x2), "y2": str(y2),
                                          "stroke": colour, "stroke-width": "3",
                                          "marker-end": f"url(#head-{tone})" if mark else ""})
            listed.append((move, mark, colour))
    if listed and any(mark for _, mark, _ in listed):  # arrows carry colour; the list the numbers
        per_column = max(8, int((bottom - top) * UNIT // 15))
        for i, (move, mark, colour) in enumerate(listed):
            column, line = divmod(i, per_column)
            t = ET.SubElement(root, "text", {"x": str(round(x(right) + 20 + column * 118, 1)),
                                             "y": str(round(y(top) + 12 + line * 15, 1)),
                                             "font-size": "12", "font-family": "monospace",
                                             "fill": colour, "class": "move-list", "data-move": move})
            t.text = f"{move} {mark.short}" if mark else move
    legend_y = height - MARGIN * 0.6
    legend = ET.SubElement(root, "text", {"x": str(MARGIN), "y": f"{legend_y:.0f}", "font-size": "12",
                                          "fill": "#444", "class": "legend"})
    legend.text = " \u00b7 ".join([*picture.owners.values(), *picture.notes])
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


# --- text -----------------------------------------------------------------------------------

ANSI = {"win": "\033[32m", "loss": "\033[31m", "draw": "\033[33m", "estimate": "\033[35m",
        "end": "\033[0m"}
BRACKETS = (("(", ")"), ("[", "]"))


def text(picture: Picture, marks: dict[str, Mark] | None = None, colour: bool = False) -> str:
    """The picture for a terminal: the board as rows of counts (each owner's pits in its own
    brackets), labels around it, then every move with its mark, best first as given."""
    marks = marks or {}
    owners = list(picture.owners)
    grid = [s for s in picture.spots if s.kind != "store"]
    stores = sorted((s for s in picture.spots if s.kind == "store"), key=lambda s: s.col)
    rows = sorted({s.row for s in grid})
    cols = sorted({s.col for s in grid})
    width = max([3] + [len(str(s.count)) + 2 for s in grid]
                + [len(lab) for lab in (picture.top_labels or ()) + (picture.bottom_labels or ())])
    pad = max([0] + [len(lab) + 1 for lab in picture.row_labels or ()])
    left_store = [s for s in stores if s.col < cols[0]]
    right_store = [s for s in stores if s.col > cols[-1]]
    side = 8 if stores else 0

    def cell(s: Spot) -> str:
        i = owners.index(s.owner) if s.owner in owners else None
        o, c = BRACKETS[i % 2] if i is not None else (" ", " ")
        body = f"{o}{s.count}{c}"
        if s.flag:
            body = f"*{s.count}*"
        return body.center(width)

    def labels(names) -> str:
        return " " * (pad + side) + " ".join(n.center(width) for n in names).rstrip()

    lines = [f"{picture.title}: {picture.caption}"]
    if picture.top_labels:
        lines.append(labels(picture.top_labels))
    at = {(s.row, s.col): s for s in grid}
    for i, row in enumerate(rows):
        head = (picture.row_labels[i] if picture.row_labels else "").rjust(pad - 1) + (" " if pad else "")
        middle = i == (len(rows) - 1) // 2
        store_l = ("[store] " if middle else " " * 8) if left_store else ""
        store_r = ("[store]" if middle else "") if right_store else ""
        body = " ".join(cell(at[(row, c)]) if (row, c) in at else " " * width for c in cols)
        lines.append((head + store_l + body + " " + store_r).rstrip())
    if picture.bottom_labels:
        lines.append(labels(picture.bottom_labels))
    legend = [f"{BRACKETS[i % 2][0]} {BRACKETS[i % 2][1]} {label}" for i, label in enumerate(picture.owners.values())]
    lines.append("   ".join(legend + (["*n* " + f for f in picture.notes if f.startswith("ko")]
                                      if any(s.flag for s in grid) else [])))
    lines.extend(n for n in picture.notes if not n.startswith("ko") or not any(s.flag for s in grid))
    if marks:
        lines.append("moves (value for the side playing it, remoteness):")
        mw = max(len(m) for m in marks)
        for move, mark in marks.items():
            shown = mark.short
            if colour:
                shown = f"{ANSI.get(mark.tone, '')}{shown}{ANSI['end']}"
            lines.append(f"  {move:<{mw}}  {shown}")
    elif picture.moves:
        lines.append("moves: " + " ".join(picture.moves))
    else:
        lines.append("no moves: the game is over")
    return "\n".join(lines)
