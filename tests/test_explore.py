"""`sowsolve show`, `play` and the web explorer's API.  Counts come from RULES.md (its move
counts from the starts) and from the position text; values from a brute force written from the
rule text (tests/test_solver_bruteforce.py), never from the table under test.  The pictures
the README shows are written here, by the test run (docs/images/)."""
import json
import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from conftest import solve_to
from sowsolve.cli.app import app
from test_solver_bruteforce import brute_force

SVG = "{http://www.w3.org/2000/svg}"
IMAGES = pathlib.Path(__file__).parent.parent / "docs" / "images"


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    directory = tmp_path_factory.mktemp("explore")
    made = {"d21": ("diffusion", {"cols": 2, "stones": 1}), "d42": ("diffusion", {"cols": 4, "stones": 2}),
            "o33": ("overflow", {"size": "3x3"}), "z22": ("zigzag", {"cols": 2, "stones": 2})}
    for name, (game, board) in made.items():
        solve_to(directory / f"{name}.sqlite", game, **board)
    return {name: directory / f"{name}.sqlite" for name in made}


def svg_of(*args) -> ET.Element:
    result = cli("show", *args, "--svg", "-")
    assert result.exit_code == 0, result.output
    return ET.fromstring(result.stdout)


def spots(root, kind):
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == f"spot {kind}"]


def counts(groups) -> dict[str, int]:
    return {g.get("data-spot"): int(next(t.text for t in g.iter(f"{SVG}text") if t.get("class") == "count"))
            for g in groups}


def diffusion_names(cols: int) -> list[str]:
    """RULES.md: counterclockwise from the top-right pit -- the top row right to left, then the
    bottom row left to right; returned in the order of the position text."""
    letters = [chr(ord("A") + i) for i in range(2 * cols)]
    return list(reversed(letters[:cols])) + letters[cols:]


@pytest.mark.parametrize("text, cols, moves", [("444444/444444 A", 6, 12), ("302002/000010 B", 6, 4)])
def test_a_diffusion_svg_holds_every_pit_s_count_and_a_mark_per_move(text, cols, moves):
    root = svg_of(text, "--game", "diffusion")
    digits = [int(ch) for ch in text.split()[0].replace("/", "")]
    assert counts(spots(root, "pit")) == dict(zip(diffusion_names(cols), digits))
    assert len(spots(root, "store")) == 2
    marks = [g for g in root.iter(f"{SVG}g") if "move" in (g.get("class") or "").split()]
    assert len(marks) == moves                      # RULES.md: 12 moves from the start
    assert {g.get("data-move") for g in marks} <= set(diffusion_names(cols))
    regions = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "region"]
    assert len(regions) == 2                        # both blocks outlined


def test_the_two_variants_outline_different_blocks():
    def outlines(game):
        root = svg_of("4444/4444 A", "--game", game)
        return sorted((r.get("width"), r.get("height")) for r in root.iter(f"{SVG}rect")
                      if r.get("class") == "region")
    assert outlines("diffusion") != outlines("diffusion-v2")


@pytest.mark.parametrize("size, moves", [("3x3", 40), ("4x4", 84), ("5x5", 144)])
def test_an_overflow_svg_holds_every_cell_and_an_arrow_per_start_move(size, moves):
    rows, cols = map(int, size.split("x"))
    start = "/".join(["1" * cols] * rows) + " L"
    root = svg_of(start, "--game", "overflow")
    cells = counts(spots(root, "cell"))
    assert len(cells) == rows * cols and set(cells.values()) == {1}
    arrows = [g for g in root.iter(f"{SVG}g") if "move" in (g.get("class") or "").split()]
    assert len(arrows) == moves                     # RULES.md: legal moves at the start
    assert all(len(list(g.iter(f"{SVG}line"))) == 1 for g in arrows)


def test_a_zigzag_svg_rings_the_ko_pit_and_marks_each_start_move():
    root = svg_of("555555/555555 p - -", "--game", "zigzag")
    assert set(counts(spots(root, "pit")).values()) == {5}
    marks = [g for g in root.iter(f"{SVG}g") if "move" in (g.get("class") or "").split()]
    assert len(marks) == 6                          # RULES.md: perft 1 from the start
    assert not [c for c in root.iter(f"{SVG}circle") if "ko" in (c.get("class") or "")]
    ringed = svg_of("2022/2202 P B p", "--game", "zigzag")
    flagged = [g.get("data-spot") for g in spots(ringed, "pit")
               if any("ko" in (c.get("class") or "") for c in g.iter(f"{SVG}circle"))]
    assert flagged == ["B"]


def test_with_a_table_each_move_is_coloured_by_the_brute_force_value(tables):
    value = brute_force(2, 1)
    root = svg_of("11/11 A", "--table", tables["d21"])
    names = diffusion_names(2)
    board = (1, 1, 1, 1)
    for g in root.iter(f"{SVG}g"):
        if "move" not in (g.get("class") or "").split():
            continue
        pit = names.index(g.get("data-move"))
        # the reply's value for B, through the brute force; the mover gets the opposite
        after = play_reference(board, pit)
        replied, remoteness = value(after, "B")
        expected = "win" if replied == "loss" else "loss"
        assert g.get("class").split()[1] == expected, g.get("data-move")
        # a move's remoteness counts the move itself: the reply's plus one
        assert g.find(f"{SVG}title").text.endswith(f"{expected} {remoteness + 1}")


def play_reference_cols(board, pit, cols):
    """RULES.md's move on a board of `cols` columns (top row, then bottom row): slots E NE N NW
    W from the bottom row, W SW S SE E from the top, a store beyond the edge, at most 5 per pit."""
    cells = list(board)
    row, col = divmod(pit, cols)
    steps = [(0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1)] if row else [(0, -1), (1, -1), (1, 0), (1, 1), (0, 1)]
    stones, cells[pit] = cells[pit], 0
    for dr, dc in steps[:stones]:
        r, c = row + dr, col + dc
        if 0 <= r < 2 and 0 <= c < cols and cells[cols * r + c] < 5:
            cells[cols * r + c] += 1
    return tuple(cells)


def play_reference(board, pit):
    return play_reference_cols(board, pit, 2)


def test_show_prints_the_board_and_the_values_as_text(tables):
    result = cli("show", "2222/2222 A", "--table", tables["d42"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "D   C   B   A" in lines[1] and "E   F   G   H" in lines[4]
    assert lines[2].count("2") == 4 and lines[3].count("2") == 4
    assert sum(1 for line in lines if line.startswith("  ") and (" win " in line or " loss " in line)) == 8


def test_show_writes_svg_whole_and_never_over_the_table(tables, tmp_path):
    out = tmp_path / "b.svg"
    result = cli("show", "11/11 A", "--table", tables["d21"], "--svg", out)
    assert result.exit_code == 0, result.output
    ET.parse(out)
    before = tables["d21"].read_bytes()
    refused = cli("show", "11/11 A", "--table", tables["d21"], "--svg", tables["d21"])
    assert refused.exit_code == 2 and "is the table being read" in refused.output
    assert tables["d21"].read_bytes() == before
    both = cli("show", "11/11 A", "--table", tables["d21"], "--game", "diffusion")
    assert both.exit_code == 2 and "not both" in both.output
    bad = cli("show", "11/1 A", "--table", tables["d21"])
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1


def test_show_json_is_the_query_object_and_the_svg(tables):
    shown = json.loads(cli("show", "111/111/111 L", "--table", tables["o33"], "--json").stdout)
    queried = json.loads(cli("query", "111/111/111 L", "--table", tables["o33"], "--json").stdout)
    svg = shown.pop("svg")
    assert shown == queried and ET.fromstring(svg).tag == f"{SVG}svg"


def test_the_readme_pictures_are_drawn_by_the_test_run(tables):
    IMAGES.mkdir(parents=True, exist_ok=True)
    for name, args in {"diffusion": ("2222/2222 A", "--table", tables["d42"]),
                       "overflow": ("111/111/111 L", "--table", tables["o33"]),
                       "zigzag": ("555555/555555 p - -", "--game", "zigzag")}.items():
        result = cli("show", *args, "--svg", IMAGES / f"{name}.svg")
        assert result.exit_code == 0, result.output
        ET.parse(IMAGES / f"{name}.svg")
    readme = (IMAGES.parent.parent / "README.md").read_text()
    for name in ("diffusion", "overflow", "zigzag"):
        assert f"docs/images/{name}.svg" in readme


# --- play ----------------------------------------------------------------------------------

def drive_to_the_end(table, start: str, human: str):
    """Play as `human` through a pipe, each move chosen by the brute force (the fastest win);
    returns the whole transcript."""
    value = brute_force(2, 1)
    names = diffusion_names(2)
    process = subprocess.Popen([sys.executable, "-c", "from sowsolve.cli.entry import main; main()", "play", "--table", str(table),
                                "--position", start, "--as", human], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=0)
    transcript, position = "", None
    try:
        while True:
            ch = process.stdout.read(1)
            if not ch:
                break
            transcript += ch
            if transcript.endswith("\n") and transcript.rstrip("\n").splitlines()[-1].startswith("position: "):
                position = transcript.rstrip("\n").splitlines()[-1].split(": ", 1)[1]
            if transcript.endswith("quit): "):
                rows, side = position.split()
                board = tuple(int(ch) for ch in rows.replace("/", ""))
                other = "B" if side == "A" else "A"
                best = None
                for pit in range(4):
                    if board[pit]:
                        result, remoteness = value(play_reference(board, pit), other)
                        if result == "loss" and (best is None or remoteness < best[1]):
                            best = (pit, remoteness)
                assert best is not None, f"no winning move in {position}"
                process.stdin.write(names[best[0]] + "\n")
                process.stdin.flush()
        process.wait(timeout=60)
    finally:
        process.kill()
    return process.returncode, transcript, process.stderr.read()


def test_play_through_a_pipe_to_the_end_of_a_won_game(tables):
    code, transcript, errors = drive_to_the_end(tables["d21"], "11/11 A", "A")
    assert code == 0, errors
    assert transcript.count("your move") >= 2 and " plays " in transcript
    assert transcript.rstrip().endswith("game over: A wins (you win)")


def test_play_undo_hint_quit_and_bad_moves(tables):
    steps = "Z\nhint\nC\nundo\nquit\n"
    run = subprocess.run([sys.executable, "-c", "from sowsolve.cli.entry import main; main()", "play", "--table", str(tables["d21"]),
                          "--position", "11/11 A"], input=steps, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "'Z' is not a legal move in 11/11 A; legal: " in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert "  C  win 3" in run.stdout                       # the hint
    assert run.stdout.count("position: 11/11 A") == 2       # back after undo
    assert run.stdout.rstrip().endswith("game left unfinished")
    wrong_side = cli("play", "--table", tables["d21"], "--as", "L")
    assert wrong_side.exit_code == 2 and "A or B" in wrong_side.output


# --- the explorer's API ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def client(tables):
    from starlette.testclient import TestClient
    from sowsolve.cli.web import create_app
    with TestClient(create_app([str(tables["d21"]), str(tables["o33"])])) as test_client:
        yield test_client


def test_the_api_answers_what_query_json_prints(client, tables):
    for name, position in (("d21.sqlite", "11/11 A"), ("o33.sqlite", "111/111/111 L")):
        answer = client.get("/api/query", params={"position": position, "table": name})
        assert answer.status_code == 200
        printed = json.loads(cli("query", position, "--table", tables[name[:-7]], "--json").stdout)
        printed["table"] = name
        assert answer.json() == printed
    listed = client.get("/api/tables").json()
    assert [t["name"] for t in listed] == ["d21.sqlite", "o33.sqlite"]
    played = client.get("/api/play", params={"position": "11/11 A", "move": "C", "table": "d21.sqlite"})
    assert played.json()["position"] == "11/02 B"          # RULES.md's move by hand
    svg = client.get("/api/svg", params={"position": "11/11 A", "table": "d21.sqlite"})
    assert svg.headers["content-type"].startswith("image/svg+xml") and ET.fromstring(svg.text) is not None
    assert "sowsolve explorer" in client.get("/").text


@pytest.mark.parametrize("params, fragment", [
    ({"position": "11/11 A"}, "name a table"),
    ({"table": "d21.sqlite"}, "give the position"),
    ({"position": "11/1 A", "table": "d21.sqlite"}, "row"),
    ({"position": "11/11 A", "table": "../d21.sqlite"}, "by its file name, not a path"),
    ({"position": "11/11 A", "table": "/etc/passwd"}, "by its file name, not a path"),
    ({"position": "x" * 400, "table": "d21.sqlite"}, "longer than"),
])
def test_the_api_answers_bad_input_with_400_and_one_sentence(client, params, fragment):
    answer = client.get("/api/query", params=params)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert fragment in error and "\n" not in error


def test_a_bad_move_is_400(client):
    answer = client.get("/api/play", params={"position": "11/11 A", "move": "Q", "table": "d21.sqlite"})
    assert answer.status_code == 400 and "'Q' is not a legal move" in answer.json()["error"]


def test_serve_refuses_bad_options_in_one_sentence(tables, tmp_path):
    bad_port = cli("serve", "--table", tables["d21"], "--port", "70000")
    assert bad_port.exit_code == 2 and "--port" in bad_port.output
    missing = cli("serve", "--table", tmp_path / "none.sqlite")
    as_query = cli("query", "11/11 A", "--table", tmp_path / "none.sqlite")
    assert missing.exit_code == as_query.exit_code != 0
    assert len(missing.output.strip().splitlines()) == 1 and "none.sqlite" in missing.output
    assert not (tmp_path / "none.sqlite").exists()
    twice = cli("serve", "--table", tables["d21"], "--table", tables["d21"])
    assert twice.exit_code == 2 and "both named" in twice.output


def test_show_refuses_two_things_on_standard_output_and_names_the_text_s_problem(tables):
    both = cli("show", "11/11 A", "--table", tables["d21"], "--svg", "-", "--json")
    assert both.exit_code == 2 and "standard output" in both.output
    empty = cli("show", "0000/0000 A", "--game", "diffusion")
    assert empty.exit_code == 2 and "no stones" in empty.output


def test_undo_before_your_first_move_has_nothing_to_undo(tables):
    """Playing B, the table moves first: undo then takes nothing back."""
    run = subprocess.run([sys.executable, "-c", "from sowsolve.cli.entry import main; main()", "play",
                          "--table", str(tables["d21"]), "--position", "11/11 A", "--as", "B"],
                         input="undo\nquit\n", capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "nothing to undo" in run.stdout and run.stdout.count("\nA plays ") == 1


def test_the_api_answers_only_this_machine_s_names_on_loopback(tables):
    from starlette.testclient import TestClient
    from sowsolve.cli.web import allowed_hosts, create_app
    app_ = create_app([str(tables["d21"])], allowed_hosts("127.0.0.1"))
    with TestClient(app_, base_url="http://127.0.0.1:8000") as local:
        assert local.get("/api/query", params={"position": "11/11 A"}).status_code == 200
    with TestClient(app_, base_url="http://rebound.example") as foreign:
        assert foreign.get("/api/query", params={"position": "11/11 A"}).status_code == 400


def test_the_api_names_tables_by_file_name_and_offers_only_starts_they_hold(tmp_path):
    from starlette.testclient import TestClient
    from sowsolve.cli.web import create_app
    endgame = tmp_path / "deep" / "endgame.sqlite"
    made = cli("solve", "diffusion", "--cols", 4, "--stones", 1, "--max-stones", 3, "--table", endgame)
    assert made.exit_code == 0, made.output
    with TestClient(create_app([str(endgame)])) as client:
        listed = client.get("/api/tables").json()
        assert listed[0]["name"] == "endgame.sqlite" and listed[0]["start"] == []
        beyond = client.get("/api/query", params={"position": "1111/1111 A"})
        # beyond the endgame table, the engine answers, each value labelled, no path shown
        assert beyond.status_code == 200, beyond.text
        assert beyond.json()["source"] == "engine" and beyond.json()["table"] == "endgame.sqlite"
        assert str(tmp_path) not in beyond.text
        assert all("exact" in m for m in beyond.json()["moves"])
        inside = client.get("/api/query", params={"position": "1001/0001 A"})
        assert inside.status_code == 200 and inside.json()["table"] == "endgame.sqlite"


def test_the_api_names_an_overflow_endgame_table_by_file_name_beyond_it(tmp_path):
    """Beyond an Overflow endgame table the engine answers with the table at its proof's leaves
    and on the moves to positions it holds: the table is named by its file name, no path."""
    from starlette.testclient import TestClient
    from sowsolve.cli.web import create_app
    endgame = tmp_path / "deep" / "o33.sqlite"
    made = cli("solve", "overflow", "--size", "3x3", "--max-discs", 5, "--table", endgame)
    assert made.exit_code == 0, made.output
    with TestClient(create_app([str(endgame)])) as client:
        beyond = client.get("/api/query", params={"position": "110/121/000 L"})
        assert beyond.status_code == 200, beyond.text
        answer = beyond.json()
        assert answer["source"] == "engine" and answer["search"]["endgame_table"] == "o33.sqlite"
        assert str(tmp_path) not in beyond.text
        assert any(m.get("table") for m in answer["moves"])


def test_the_self_check_catches_a_picture_that_drops_a_move():
    import dataclasses
    import random
    from sowsolve.solver import selfcheck
    from sowsolve.solver.games.diffusion import Diffusion

    class DropsAMove(Diffusion):
        def picture(self, position):
            picture = super().picture(position)
            moves = dict(picture.moves)
            if moves:
                moves.popitem()
            return dataclasses.replace(picture, moves=moves)

    for game, failing in ((Diffusion(cols=4, stones=1), False), (DropsAMove(cols=4, stones=1), True)):
        report = selfcheck.Report(game)
        selfcheck.check_picture(game, 200, random.Random(0), report)
        assert bool(report.failures) == failing
        assert report.counts["picture"] > 0


def test_svg_never_replaces_another_table_and_stdout_gets_the_svg_alone(tables, tmp_path):
    other = tmp_path / "other.sqlite"
    other.write_bytes(tables["o33"].read_bytes())
    refused = cli("show", "11/11 A", "--table", tables["d21"], "--svg", other)
    assert refused.exit_code == 2 and "SQLite file" in refused.output
    assert other.read_bytes() == tables["o33"].read_bytes()
    run = subprocess.run([sys.executable, "-c", "from sowsolve.cli.entry import main; main()", "show",
                          "11/11 A", "--table", str(tables["d21"]), "--svg", "/dev/stdout"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert ET.fromstring(run.stdout).tag == f"{SVG}svg"


def test_play_ends_a_margin_game_with_who_is_ahead(tables):
    """Zig Zag 2x2 with 2 seeds: every line to the end, played through the table for both
    sides; the last line names who ends ahead by the seeds captured plus the leftover."""
    run = subprocess.run([sys.executable, "-c", "from sowsolve.cli.entry import main; main()", "play",
                          "--table", str(tables["z22"]), "--hints"],
                         input="a\nb\n" * 30, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    last = run.stdout.rstrip().splitlines()[-1]
    assert last.startswith("game over: ") and ("ahead" in last or "tie" in last), last


def test_play_finds_the_table_that_fits_its_position_as_query_does(tables, monkeypatch):
    """With several tables in the tables directory, --position picks the one whose game and
    board fit it (no --table needed), as query and show do."""
    monkeypatch.setenv("SOWSOLVE_TABLES", str(tables["d21"].parent))
    result = CliRunner().invoke(app, ["play", "--position", "2222/2222 B", "--as", "A"],
                                input="quit\n")
    assert result.exit_code == 0, result.output
    assert "2x4, 2 stones per pit" in result.output


def test_play_on_an_endgame_table_asks_for_a_position_first(tmp_path):
    endgame = tmp_path / "endgame.sqlite"
    assert cli("solve", "diffusion", "--cols", 4, "--stones", 1, "--max-stones", 3, "--table",
               endgame).exit_code == 0
    result = cli("play", "--table", endgame)
    assert result.exit_code == 2 and "--position" in result.output and "you play" not in result.output


# --- the explorer's work: once per position, off the event loop, bounded -------------------

LACKED = ["201/111/111 L", "102/111/111 L"]     # 3x3 positions the table lacks: searched
HELD = "030/111/111 L"                           # one it holds


def serving(tables, check):
    """check(client, app), a coroutine, run against the explorer over the 3x3 Overflow table
    in this process (its lifespan run as a server runs it)."""
    import asyncio

    import httpx
    from sowsolve.cli.web import create_app

    async def main():
        app = create_app([str(tables["o33"])])
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
                await check(client, app)
    asyncio.run(main())


class HeldSearch:
    """The search kernel's call, held until `release` is set (at most 60 s: a liveness bound,
    after which `timed_out` says the test's own requests could not get through meanwhile)."""

    def __init__(self, monkeypatch):
        import threading
        from sowsolve.solver import search
        self.started, self.release = threading.Event(), threading.Event()
        self.timed_out = False
        real = search.run_stoppable

        def held(call, positions=None):
            self.started.set()
            self.timed_out = not self.release.wait(60)
            return real(call, positions)
        monkeypatch.setattr(search, "run_stoppable", held)


def test_the_page_s_two_requests_for_a_position_are_worked_out_once(tables, monkeypatch):
    """The page asks /api/svg and /api/query for a position together: the position (here one
    the table lacks, which a query searches) is worked out once, and both answers are the ones
    `query --json` gives."""
    import asyncio
    from sowsolve.tables import query as queries
    asked = []
    real = queries.query
    monkeypatch.setattr(queries, "query", lambda *args, **kw: asked.append(args[1]) or real(*args, **kw))
    printed = json.loads(cli("query", LACKED[0], "--table", tables["o33"], "--json").stdout)
    assert printed["source"] == "search"

    async def check(client, app):
        svg, answer = await asyncio.gather(client.get("/api/svg", params={"position": LACKED[0]}),
                                           client.get("/api/query", params={"position": LACKED[0]}))
        assert svg.status_code == answer.status_code == 200
        assert answer.json() == dict(printed, table="o33.sqlite")
        again = await client.get("/api/svg", params={"position": " " + LACKED[0]})
        assert again.text == svg.text
    asked.clear()
    serving(tables, check)
    assert asked == [LACKED[0]]


def test_a_search_runs_off_the_event_loop_and_searches_are_bounded(tables, monkeypatch):
    """While a search runs (held here), the explorer answers the page, its tables and a position
    the table holds; a second position that needs a search is refused at once with 503 and one
    sentence; once the first search ends its answer arrives."""
    import asyncio
    held = HeldSearch(monkeypatch)

    async def check(client, app):
        searching = asyncio.ensure_future(client.get("/api/query", params={"position": LACKED[0]}))
        while not held.started.is_set():
            await asyncio.sleep(0.01)
        try:
            assert (await client.get("/")).status_code == 200
            assert (await client.get("/api/tables")).status_code == 200
            answer = await client.get("/api/query", params={"position": HELD})
            assert answer.status_code == 200 and answer.json()["source"] == "table"
            busy = await client.get("/api/svg", params={"position": LACKED[1]})
            assert busy.status_code == 503
            assert "searching" in busy.json()["error"] and "\n" not in busy.json()["error"]
        finally:
            held.release.set()
        answer = await searching
        assert answer.status_code == 200 and answer.json()["source"] == "search"
        later = await client.get("/api/svg", params={"position": LACKED[1]})   # a slot again
        assert later.status_code == 200
    serving(tables, check)
    assert not held.timed_out, "the other requests waited for the search"


def test_a_stopping_server_stops_its_searches(tables, monkeypatch):
    import asyncio
    held = HeldSearch(monkeypatch)

    async def check(client, app):
        searching = asyncio.ensure_future(client.get("/api/query", params={"position": LACKED[0]}))
        while not held.started.is_set():
            await asyncio.sleep(0.01)
        app.state.explorer.stop.set()           # what `serve` does as a signal arrives
        held.release.set()
        answer = await searching
        assert answer.status_code == 503 and answer.json() == {"error": "the explorer is stopping"}
    serving(tables, check)
