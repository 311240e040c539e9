"""The web explorer of `sowsolve serve`: a Starlette app over the tables named on the command
line, and the one page that uses its JSON API.

    GET /                                   the explorer (HTML and a small script)
    GET /api/tables                         the served tables: name, game, start positions
    GET /api/query?position=P[&table=NAME]  the object `sowsolve query --json` prints
    GET /api/svg?position=P[&table=NAME]    the board as SVG, each move marked by its value
    GET /api/play?position=P&move=M[&table=NAME]   the position after the move

NAME is a served table's file name; it may be left out when one table is served.  Only the
tables given at start are ever opened: no part of a URL becomes a path.  Bad input gets HTTP 400
and {"error": one sentence}; a table that fails its checks, HTTP 500 and the same (one rebuilt
by another solve while it is served, HTTP 503: it changed, it is not damaged); a search
refused because every search slot is taken, or given up because the server is stopping, HTTP
503 and the same.

Every answer about a position (its value and its moves' values) is worked out by one function,
`Explorer.position_answer`, once per table and position: the page asks /api/svg and /api/query
for the same position together, and both get the one computation (a bounded cache keeps recent
answers, and a request arriving while a position is being worked out waits for that work).
Table reads and searches run on worker threads, never on the event loop, so the server answers
other requests meanwhile; a search (a position a keyed table lacks) is bounded by SEARCH_LIMIT
positions, at most MAX_SEARCHES run at once, and a stopping server stops them.
"""
from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import threading
from collections import OrderedDict

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..solver import drawing
from ..solver.errors import BadMove, BadParameters, BadPosition
from ..solver.search import SearchLimitReached
from ..solver.tiers import default_threads
from ..tables import analysis, query as queries
from ..tables.format import BeyondTable, NotInTable, TableChanged, TableError
from ..tables.store import open_table

#: positions a query may search where a keyed table lacks one (as `query` by default)
SEARCH_LIMIT = 1 << 20
#: searches running at once; a request that needs another gets HTTP 503 at once
MAX_SEARCHES = 1
#: the analysis engine's time, transposition table and leaf tables for a position no table holds
ENGINE_SECONDS = 1.0
ENGINE_HASH = 64 << 20
ENGINE_LEAVES = 256 << 20
#: answers kept (per table and position) for the requests that follow
CACHED_ANSWERS = 512
MAX_TEXT = 300                 # longest position or move text accepted

#: what a request may get wrong (HTTP 400); the same input always gets the same one, so it is
#: kept like an answer
BAD_INPUT = (BadPosition, BadMove, BadParameters, NotInTable, BeyondTable, SearchLimitReached)


class BadRequest(ValueError):
    """Input from the URL that names nothing served or parses as no position or move."""


class Unavailable(RuntimeError):
    """A search the server cannot run now (HTTP 503): every search slot is taken, or the
    server is stopping."""


def table_names(paths: list[str]) -> dict[str, str]:
    """File name -> path of each table to serve; BadParameters if two share a file name."""
    names: dict[str, str] = {}
    for path in paths:
        name = os.path.basename(path)
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:      # the page and its API carry the name as UTF-8 text
            raise BadParameters(f"the explorer names tables by file name, and {name!r} is not "
                                f"valid UTF-8: rename the file (or link it under a UTF-8 name)") from None
        if name in names:
            raise BadParameters(f"two tables to serve are both named {name[:60]!r}; the explorer "
                                f"names tables by file name")
        names[name] = path
    return names


def allowed_hosts(host: str) -> list[str]:
    """The Host headers to answer: this machine's names where it listens on a loopback
    address (so that a page of another site cannot reach the API by DNS rebinding), any where
    it was told to listen on every address or on a name of its own."""
    if host in ("127.0.0.1", "localhost", "::1"):
        return ["127.0.0.1", "localhost", "[::1]", "::1"]
    return ["*"]


class _Searching:
    """The progress bar a search is handed (solver/search.py): it holds one search slot while
    the search runs, and stops the search (its kernel) once the server is stopping."""

    def __init__(self, slots: threading.BoundedSemaphore, searches: int, stop: threading.Event):
        self.slots, self.searches, self.stop = slots, searches, stop

    def __call__(self, total, desc):
        return self

    def __enter__(self) -> "_Searching":
        if not self.slots.acquire(blocking=False):
            raise Unavailable(f"the explorer is searching {self.searches} "
                              f"{'position' if self.searches == 1 else 'positions'} its tables "
                              f"lack already; try this one again when that is done")
        return self

    def __exit__(self, *exc) -> None:
        self.slots.release()

    def update(self, n: int) -> None:
        if self.stop.is_set():
            raise Unavailable("the explorer is stopping")

    def set_description(self, desc: str) -> None:
        pass


class Explorer:
    """The served tables (name -> open table) and the one place where a position's answer is
    worked out: `position_answer`."""

    def __init__(self, tables: dict, stop: threading.Event, searches: int = MAX_SEARCHES,
                 cached: int = CACHED_ANSWERS):
        self.tables = tables
        self.stop = stop
        self.searches = searches
        self.slots = threading.BoundedSemaphore(searches)
        self.cached = cached
        self.answers: OrderedDict[tuple[str, str], tuple[bool, object]] = OrderedDict()
        self.working: dict[tuple[str, str], asyncio.Task] = {}
        self.engines: dict[str, analysis.Analyser] = {}
        self._engines_lock = threading.Lock()

    async def position_answer(self, name: str, text: str) -> dict:
        """The object `sowsolve query --json` prints for the position `text` of the served table
        `name` (with "table": its name), worked out once per position however many requests
        ask for it: from the cache, or by the computation already under way, or by a new one
        on a worker thread.  Raises what the query raises (BAD_INPUT, TableError) or
        Unavailable.  Every endpoint that needs a position's values asks here, and only here."""
        table = self.tables[name]
        # the key: the position as the table's game writes it (one for every spelling)
        key = (name, table.game.format_position(table.game.parse_position(text)))
        kept = self.answers.get(key)
        if kept is None:
            task = self.working.get(key)
            if task is None:
                task = asyncio.ensure_future(self._work_out(key, table))
                self.working[key] = task
            # shielded: a request that goes away does not cancel the work others wait for
            kept = await asyncio.shield(task)
        else:
            self.answers.move_to_end(key)
        found, answer = kept
        if not found:
            raise answer
        return answer

    async def _work_out(self, key: tuple[str, str], table) -> tuple[bool, object]:
        """The answer for `key`, worked out on a worker thread and kept (an error the same input
        always gets is kept too; a damaged table's or a busy server's is not)."""
        try:
            kept = (True, await run_in_threadpool(self._query, table, key[1], key[0]))
        except BAD_INPUT as exc:
            kept = (False, exc)
        except Exception as exc:  # noqa: BLE001 - handed to every request waiting for it
            return False, exc
        finally:
            self.working.pop(key, None)
        self.answers[key] = kept
        while len(self.answers) > self.cached:
            self.answers.popitem(last=False)
        return kept

    def _query(self, table, text: str, name: str) -> dict:
        """On a worker thread: the query, searching (within SEARCH_LIMIT positions, holding
        a search slot) where a keyed table lacks the position; where the table cannot answer
        (an endgame table's limit, a search too large), the analysis engine for ENGINE_SECONDS,
        holding a slot too, its values labelled exact or estimated."""
        try:
            result = queries.query(table, text, SEARCH_LIMIT,
                                   progress=_Searching(self.slots, self.searches, self.stop))
        except (NotInTable, BeyondTable, SearchLimitReached):
            result = self._analyse(table, name, text)
        result["table"] = name
        return result

    def _analyse(self, table, name: str, text: str) -> dict:
        with self._engines_lock:
            engine = self.engines.get(name)
            if engine is None:
                engine = self.engines[name] = analysis.Analyser(
                    table.game, [table], hash_bytes=ENGINE_HASH, leaf_bytes=ENGINE_LEAVES)

        def stop_with_server(status) -> None:
            if self.stop.is_set():
                engine.stop()
        with _Searching(self.slots, self.searches, self.stop):
            result = engine.analyse(table.game.parse_position(text), seconds=ENGINE_SECONDS,
                                    threads=default_threads(), on_status=stop_with_server)
        result["search"]["leaf_tables"] = [name]          # tables by file name, never by path
        if "endgame_table" in result["search"]:
            result["search"]["endgame_table"] = name
        return result


def create_app(paths: list[str], hosts: list[str] | None = None,
               stop: threading.Event | None = None) -> Starlette:
    """The explorer over the tables at `paths` (opened when the app starts, closed when it
    stops), answering requests whose Host header is one of `hosts` (default: any).  `stop`,
    once set (by the server as it begins to stop), stops the searches under way."""
    served = table_names(paths)
    tables: dict = {}
    stop = stop if stop is not None else threading.Event()
    explorer = Explorer(tables, stop)

    def public(message: str) -> str:
        """An error as the page shows it: tables named by file name, never by path."""
        for name, path in served.items():
            message = message.replace(str(path), name)
        return message

    @contextlib.asynccontextmanager
    async def lifespan(app):
        with contextlib.ExitStack() as stack:
            for name, path in served.items():
                tables[name] = stack.enter_context(open_table(path))
                tables[name].game.kernel()      # built before any thread can ask for it
            try:
                yield
            finally:
                stop.set()
                tables.clear()

    def name_of(request: Request) -> str:
        name = request.query_params.get("table")
        if name is None:
            if len(tables) == 1:
                return next(iter(tables))
            raise BadRequest(f"name a table with table=NAME: this explorer serves "
                             f"{', '.join(sorted(tables))}")
        if name not in tables:
            if "/" in name or "\\" in name:
                raise BadRequest(f"name a served table by its file name, not a path: "
                                 f"{', '.join(sorted(tables))}")
            raise BadRequest(f"no table named {name[:60]!r} is served here")
        return name

    def text_param(request: Request, key: str) -> str:
        value = request.query_params.get(key)
        if value is None or not value.strip():
            raise BadRequest(f"give the {key} as {key}=...")
        if len(value) > MAX_TEXT:
            raise BadRequest(f"the {key} is longer than {MAX_TEXT} characters")
        return value

    def position_of(request: Request):
        """(table name, position text, position) of a request, the position checked."""
        name = name_of(request)
        text = text_param(request, "position")
        game = tables[name].game
        position = game.parse_position(text)
        game.check_position(position)
        return name, text, position

    def answer(work):
        """An endpoint of `work(request)`, a coroutine or a function (run on a worker thread:
        it may read a table), with every error as one sentence."""
        async def endpoint(request: Request) -> Response:
            try:
                if inspect.iscoroutinefunction(work):
                    return await work(request)
                return await run_in_threadpool(work, request)
            except (BadRequest, *BAD_INPUT) as exc:
                return JSONResponse({"error": public(str(exc))}, status_code=400)
            except Unavailable as exc:
                return JSONResponse({"error": str(exc)}, status_code=503)
            except TableChanged as exc:     # rebuilt under us (solve --force): not damaged
                return JSONResponse({"error": public(str(exc))}, status_code=503)
            except TableError as exc:
                return JSONResponse({"error": public(str(exc))}, status_code=500)
        return endpoint

    async def page(request: Request) -> Response:
        return HTMLResponse(PAGE)

    def held(table, position) -> bool:
        try:
            table.record(position)
            return True
        except (NotInTable, BeyondTable, TableError):
            return False

    def example(table) -> str | None:
        """A position the table holds: the first of its last tier (the most stones)."""
        try:
            tier = table.tiers[-1]
            return table.game.format_position(table.stored_positions(tier, 0, 1)[0])
        except (TableError, IndexError):
            return None

    def list_tables(request: Request) -> Response:
        """The served tables, each with the starts it holds (none: an endgame table, whose
        positions are typed)."""
        return JSONResponse([{"name": name, "game": t.game.name, "description": t.game.describe(),
                              "start": [t.game.format_position(p) for p in t.game.initial_positions()
                                        if held(t, p)],
                              "example": example(t)}
                             for name, t in tables.items()])

    async def query(request: Request) -> Response:
        name, text, _ = position_of(request)
        return JSONResponse(await explorer.position_answer(name, text))

    async def svg(request: Request) -> Response:
        name, text, position = position_of(request)
        marks = drawing.marks_from_query(await explorer.position_answer(name, text))
        picture = tables[name].game.picture(position)
        return Response(drawing.svg(picture, marks), media_type="image/svg+xml")

    def play(request: Request) -> Response:
        name, text, position = position_of(request)
        game = tables[name].game
        move = game.parse_move(position, text_param(request, "move"))
        child = game.play(position, move)
        return JSONResponse({"position": game.format_position(child), "move": game.format_move(move),
                             "table": name})

    app = Starlette(routes=[Route("/", answer(page)), Route("/api/tables", answer(list_tables)),
                            Route("/api/query", answer(query)), Route("/api/svg", answer(svg)),
                            Route("/api/play", answer(play))],
                    middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts or ["*"])],
                    lifespan=lifespan)
    app.state.explorer = explorer
    return app


PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>sowsolve explorer</title>
<style>
  body { font-family: sans-serif; margin: 1.2em; color: #222; background: #fbfaf7; }
  header { display: flex; gap: .6em; align-items: center; flex-wrap: wrap; }
  #position { width: 22em; font-family: monospace; }
  main { display: flex; gap: 2em; margin-top: 1em; flex-wrap: wrap; }
  #board svg { max-width: 640px; height: auto; }
  #board .move { cursor: pointer; }
  #moves { list-style: none; padding: 0; margin: 0; min-width: 12em; }
  #moves li { padding: .15em .5em; margin: .1em 0; cursor: pointer; border-radius: 4px;
              font-family: monospace; }
  #moves li.win { background: #c8e6c9; } #moves li.loss { background: #ffcdd2; }
  #moves li.draw { background: #fff3b0; } #moves li.estimate { background: #e4dcf5; font-style: italic; }
  #value { font-weight: bold; margin: .4em 0; }
  #error { color: #b00020; min-height: 1.2em; }
  #chart { border: 1px solid #ccc; background: #fff; }
  #line { font-family: monospace; }
</style>
</head>
<body>
<header>
  <label>table <select id="table"></select></label>
  <input id="position" aria-label="position">
  <button id="go">show</button>
  <button id="back">&larr; back</button>
  <button id="forward">forward &rarr;</button>
</header>
<div id="error"></div>
<main>
  <div>
    <div id="board"></div>
    <div id="value"></div>
    <div>value along the moves played (remoteness; up: the first player wins)</div>
    <svg id="chart" width="640" height="160" viewBox="0 0 640 160"></svg>
    <div id="line"></div>
  </div>
  <div>
    <div>moves (value for the side playing it, remoteness)</div>
    <ul id="moves"></ul>
  </div>
</main>
<script>
"use strict";
const state = { table: null, history: [], moves: [], index: 0, results: {} };
const $ = (id) => document.getElementById(id);

async function api(path, params) {
  const query = new URLSearchParams(Object.assign({ table: state.table }, params));
  const response = await fetch(path + "?" + query.toString());
  if (!response.ok) {
    let message = response.statusText;
    try { message = (await response.json()).error; } catch (e) { /* not JSON */ }
    throw new Error(message);
  }
  return path === "/api/svg" ? response.text() : response.json();
}

function tone(value, exact) {
  if (exact === false) return "estimate";     // the engine's estimate: drawn apart
  if (typeof value === "number") return value > 0 ? "win" : value < 0 ? "loss" : "draw";
  return value;
}

function shortValue(m) {
  if (m.value === null) return "not searched (estimate)";   // no playout tried it yet
  if (m.exact === false) {
    if (typeof m.value === "number") return "~" + (m.value > 0 ? "+" : "") + m.value.toFixed(2) + " (estimate)";
    return m.value + " " + m.remoteness + "? (estimate)";
  }
  const v = typeof m.value === "number" ? (m.value > 0 ? "+" + m.value : String(m.value)) : m.value;
  if (m.remoteness === null && m.proved) return v + " proved";   // a proof: no remoteness
  if (m.remoteness === null && m.remoteness_known === false) return v + " exact";  // length not known
  return v + " " + (m.remoteness === null ? "no end" : m.remoteness);
}

async function show() {
  const position = state.history[state.index];
  $("position").value = position;
  $("error").textContent = "";
  try {
    const [svg, result] = await Promise.all([api("/api/svg", { position }), api("/api/query", { position })]);
    state.results[position] = result;
    $("board").innerHTML = svg;
    $("value").textContent = "value: " + shortValue(result) + " for " + result.side_to_move + " (to move)";
    const list = $("moves");
    list.innerHTML = "";
    for (const m of result.moves) {
      const item = document.createElement("li");
      item.className = tone(m.value, m.exact);
      item.dataset.move = m.move;
      item.textContent = m.move + "  " + shortValue(m);
      item.addEventListener("click", () => play(m.move));
      list.appendChild(item);
    }
    for (const element of $("board").querySelectorAll("[data-move]")) {
      element.addEventListener("click", () => play(element.dataset.move));
    }
    $("line").textContent = state.index ? "moves played: " + state.moves.slice(0, state.index).join(" ") : "";
    drawChart();
  } catch (error) {
    $("error").textContent = error.message;
  }
  $("back").disabled = state.index === 0;
  $("forward").disabled = state.index >= state.history.length - 1;
}

async function play(move) {
  try {
    const next = await api("/api/play", { position: state.history[state.index], move });
    state.history = state.history.slice(0, state.index + 1).concat([next.position]);
    state.moves = state.moves.slice(0, state.index).concat([next.move]);
    state.index += 1;
    await show();
  } catch (error) {
    $("error").textContent = error.message;
  }
}

function drawChart() {
  const chart = $("chart");
  const first = state.results[state.history[0]];
  const points = [];
  for (let i = 0; i <= state.index; i++) {
    const r = state.results[state.history[i]];
    if (!r) continue;
    const sign = first && r.side_to_move === first.side_to_move ? 1 : -1;
    let y;
    if (r.value === null) continue;          // not searched: no point on the chart
    if (typeof r.value === "number") y = sign * r.value;
    // a win or loss away from the axis even when proved (no remoteness) or over (0)
    else y = r.value === "draw" ? 0 : (tone(r.value) === "win" ? sign : -sign) * Math.max(1, r.remoteness || 0);
    points.push([i, y, r]);
  }
  const top = Math.max(1, ...points.map((p) => Math.abs(p[1])));
  const count = Math.max(2, state.history.length);
  const x = (i) => 20 + i * (600 / (count - 1));
  const y = (v) => 80 - v * (70 / top);
  let inner = '<line x1="20" y1="80" x2="620" y2="80" stroke="#bbb"/>';
  inner += '<polyline fill="none" stroke="#555" stroke-width="2" points="' +
           points.map((p) => x(p[0]) + "," + y(p[1])).join(" ") + '"/>';
  for (const [i, v, r] of points) {
    if (r.exact === false) {    // an estimate: a hollow purple ring, never a value's colour
      inner += '<circle class="point estimate" cx="' + x(i) + '" cy="' + y(v) + '" r="4" fill="#fff" stroke="#6a4fb3" stroke-width="2"/>';
      continue;
    }
    const colour = v > 0 ? "#2e7d32" : v < 0 ? "#c62828" : "#f9a825";
    inner += '<circle class="point" cx="' + x(i) + '" cy="' + y(v) + '" r="4" fill="' + colour + '"/>';
  }
  chart.innerHTML = inner;
}

async function start() {
  try {
    const response = await fetch("/api/tables");
    const tables = await response.json();
    for (const t of tables) {
      const option = document.createElement("option");
      option.value = t.name;
      option.textContent = t.name + " (" + t.description + ")";
      option.dataset.start = t.start.length ? t.start[0] : "";
      $("table").appendChild(option);
    }
    state.table = tables[0].name;
    if (!tables[0].start.length) {
      $("position").value = "";
      $("error").textContent = "this table holds no start position: type one (e.g. " + tables[0].example + ")";
      return;
    }
    state.history = [tables[0].start[0]];
    state.moves = [];
    state.index = 0;
    await show();
  } catch (error) {
    $("error").textContent = error.message;
  }
}

$("table").addEventListener("change", () => {
  const option = $("table").selectedOptions[0];
  state.table = option.value;
  state.moves = []; state.index = 0; state.results = {};
  if (!option.dataset.start) {
    state.history = [];
    $("error").textContent = "this table holds no start position: type one";
    return;
  }
  state.history = [option.dataset.start];
  show();
});
$("go").addEventListener("click", () => {
  state.history = [$("position").value]; state.moves = []; state.index = 0; state.results = {};
  show();
});
$("position").addEventListener("keydown", (e) => { if (e.key === "Enter") $("go").click(); });
$("back").addEventListener("click", () => { if (state.index > 0) { state.index -= 1; show(); } });
$("forward").addEventListener("click", () => {
  if (state.index < state.history.length - 1) { state.index += 1; show(); }
});
start();
</script>
</body>
</html>
"""
