"""`sowsolve engine` driven from another process, as a match program drives it (docs/engine.md):
whole games, stop in mid-search, bad commands answered with one error line while the engine
goes on answering, the end of input, SIGTERM and Ctrl-C, tables answering what they hold."""
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import solve_to
from sowsolve.solver.games import make_game

ENGINE = [sys.executable, "-c", "from sowsolve.cli.entry import main; main()", "engine"]


class Engine:
    """The engine in a process of its own; lines read on a thread so a test never hangs."""

    def __init__(self, *args, env=None, cwd=None):
        environment = dict(os.environ, **(env or {}))
        environment.setdefault("SOWSOLVE_TABLES", os.path.join(str(cwd or os.getcwd()), "none"))
        self.process = subprocess.Popen(ENGINE + list(args), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, bufsize=1, env=environment, cwd=cwd)
        self.lines: "queue.Queue[str | None]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def send(self, *lines):
        for line in lines:
            self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def line(self, timeout=30.0):
        line = self.lines.get(timeout=timeout)
        assert line is not None, f"the engine ended: {self.process.stderr.read()}"
        return line

    def until(self, prefix, timeout=30.0):
        """Lines up to and including the first that starts with `prefix`."""
        seen, deadline = [], time.monotonic() + timeout
        while True:
            seen.append(self.line(max(0.01, deadline - time.monotonic())))
            if seen[-1].startswith(prefix):
                return seen

    def ask(self, command):
        """One command that answers in one line (and isready's readyok after it)."""
        self.send(command, "isready")
        lines = self.until("readyok")
        return lines[:-1]

    def finish(self, timeout=30.0):
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        code = self.process.wait(timeout=timeout)
        return code, self.process.stderr.read()


def play_out(engine, game, budget="nodes 300"):
    """The engine plays the game against itself to the end from the start; the moves."""
    position, played = game.initial(), []
    while True:
        engine.send("position start" + (" moves " + " ".join(played) if played else ""),
                    f"go {budget}")
        lines = engine.until("bestmove")
        best = lines[-1].split()[1]
        legal = [game.format_move(m) for m in game.legal_moves(position)]
        if not legal:
            assert best == "none" and " final" in lines[-2]
            return played
        assert best in legal, (best, legal)
        assert lines[-2].startswith("info source engine") and " pv " in lines[-2]
        position = game.play(position, game.parse_move(position, best))
        played.append(best)
        assert len(played) < 400


@pytest.mark.parametrize("name, board", [("diffusion", ["--cols", "4", "--stones", "1"]),
                                         ("diffusion-v2", ["--cols", "3", "--stones", "1"]),
                                         ("overflow", ["--size", "3x3"]),
                                         ("zigzag", ["--cols", "2", "--stones", "2"])])
def test_a_whole_game_of_each_game(tmp_path, name, board):
    game = make_game(name, **{k.lstrip("-"): int(v) if v.isdigit() else v
                              for k, v in zip(board[::2], board[1::2])})
    engine = Engine("--threads", "1", cwd=tmp_path)
    engine.send("game " + name + " " + " ".join(board))
    assert engine.ask("show") == [f"position {game.format_position(game.initial())}"]
    played = play_out(engine, game)
    assert played, "the start has moves"
    # the position after those moves is final by the rules, and `show` writes it
    position = game.initial()
    for move in played:
        position = game.play(position, game.parse_move(position, move))
    assert game.legal_moves(position) == []
    assert engine.ask("show") == [f"position {game.format_position(position)}"]
    assert engine.finish() == (0, "")


def test_bad_commands_get_one_error_line_and_the_engine_goes_on(tmp_path):
    engine = Engine("--threads", "1", cwd=tmp_path)
    cases = {
        "position start": "no game chosen",
        "go nodes 10": "no game chosen",
        "fly me to the moon": "unknown command 'fly'",
        "game chess": "unknown game 'chess'",
        "game overflow --size 40x40": "--size",
        "game overflow --cols 4": "takes --size",
        "game diffusion --cols": "needs a value",
    }
    for command, words in cases.items():
        answer = engine.ask(command)
        assert len(answer) == 1 and answer[0].startswith("error ") and words in answer[0], (command, answer)
    engine.ask("game overflow --size 3x3")
    cases = {
        "position 11/11 L": "error ",                        # the wrong board
        "position 111/111/111 Q": "error ",                  # no side Q
        "position start moves a1-b2 zz": "move 2, 'zz', is not legal",
        "position start moves a9-a8": "legal:",
        "go time -1": "time must be more than 0",
        "go time soon": "time must be a number",
        "go nodes 0": "nodes must be from 1",
        "go nodes 1.5": "nodes must be a whole number",
        "go depth 3": "Monte Carlo",
        "go time 1 nodes 5": "not both",
        "go time": "needs a value",
        "go sideways 3": "takes time SECONDS",
        "setoption colour blue": "unknown option 'colour'",
        "setoption threads many": "threads must be a whole number",
        "setoption hash 1T": "memory available",
        "analyse time 0": "time must be more than 0",
    }
    for command, words in cases.items():
        answer = engine.ask(command)
        assert len(answer) == 1 and answer[0].startswith("error ") and words in answer[0], (command, answer)
    # a refused position left the last good one in place, and the engine still plays
    game = make_game("overflow", size="3x3")
    after = game.play(game.initial(), game.parse_move(game.initial(), "a1-b2"))
    engine.send("position start moves a1-b2")
    assert engine.ask("position start moves a1-b2 zz")[0].startswith("error")
    assert engine.ask("show") == [f"position {game.format_position(after)}"]
    engine.send("go nodes 50")
    assert engine.until("bestmove")[-1].split()[1] in {game.format_move(m)
                                                       for m in game.legal_moves(after)}
    # a line too long to be a command
    engine.send("position " + "1" * 70000)
    assert engine.until("error")[-1].startswith("error a line of more than")
    assert engine.ask("show") == [f"position {game.format_position(after)}"]
    assert engine.finish() == (0, "")


def test_stop_ends_a_search_with_its_best_move(tmp_path):
    engine = Engine("zigzag", "--threads", "1", cwd=tmp_path)
    engine.send("go infinite")
    first = engine.until("info")[-1]
    assert first.startswith("info depth")
    started = time.monotonic()
    engine.send("stop")
    lines = engine.until("bestmove", timeout=10)
    assert time.monotonic() - started < 5
    assert lines[-1].split()[1] in "abcdef"
    # a stop sent before the search could begin still stops it
    engine.send("go infinite", "stop")
    assert engine.until("bestmove", timeout=10)[-1].startswith("bestmove ")
    # isready is answered while a search runs
    engine.send("go infinite", "isready")
    assert engine.until("readyok", timeout=10)
    engine.send("stop")
    engine.until("bestmove", timeout=10)
    assert engine.finish() == (0, "")


def test_commands_run_in_order_and_the_end_of_input_answers_the_last_search(tmp_path):
    """A script piped in: the commands after a go wait for it, and the end of input lets the
    last search finish and answer."""
    script = "\n".join(["game diffusion --cols 4 --stones 2", "go time 0.3", "show",
                        "position start moves D", "go depth 4", ""])
    run = subprocess.run(ENGINE + ["--threads", "1"], input=script, capture_output=True, text=True,
                         timeout=60, env=dict(os.environ, SOWSOLVE_TABLES=str(tmp_path)))
    lines = run.stdout.splitlines()
    assert run.returncode == 0 and run.stderr == ""
    bests = [i for i, line in enumerate(lines) if line.startswith("bestmove")]
    shows = [i for i, line in enumerate(lines) if line.startswith("position ")]
    assert len(bests) == 2 and shows == [bests[0] + 1]
    assert lines[shows[0]] == "position 2222/2222 A"
    final = lines[bests[1] - 1]
    assert " depth 4 " in final           # the depth asked, and no more


def test_analyse_prints_the_object_of_analyse_json(tmp_path):
    position = "0222/2222 B"
    env = dict(os.environ, SOWSOLVE_TABLES=str(tmp_path))
    engine = Engine("diffusion", "--cols", "4", "--stones", "2", "--threads", "1",
                    env={"SOWSOLVE_TABLES": str(tmp_path)})
    engine.send(f"position {position}", "analyse nodes 3000")
    ours = json.loads(engine.line())
    theirs = json.loads(subprocess.run(
        [sys.executable, "-c", "from sowsolve.cli.entry import main; main()", "analyse", position,
         "--game", "diffusion", "--cols", "4", "--stones", "2", "--nodes", "3000", "--threads", "1", "--json"],
        capture_output=True, text=True, check=True, env=env).stdout)
    # the command line says why the position is on that board; the engine's board is the one
    # its game command names
    assert theirs.pop("board_reason") == "the board options" and "board_reason" not in ours
    for volatile in (ours, theirs):
        for key in ("seconds", "nodes_per_second"):
            volatile["search"].pop(key)
        volatile["search"].get("proof", {}).pop("seconds", None)
    assert ours == theirs
    assert engine.finish() == (0, "")


def test_a_table_answers_the_positions_it_holds(tmp_path):
    solve_to(tmp_path / "diffusion-cols4-stones1.sqlite", "diffusion", cols=4, stones=1)
    from sowsolve.tables.store import open_table
    with open_table(str(tmp_path / "diffusion-cols4-stones1.sqlite")) as table:
        expected = table.query("1111/1111 A")
    engine = Engine("diffusion", "--cols", "4", "--stones", "1", env={"SOWSOLVE_TABLES": str(tmp_path)})
    engine.send("go time 5")
    started = time.monotonic()
    info, best = engine.until("bestmove")[-2:]
    assert time.monotonic() - started < 4          # answered, not searched for its budget
    assert info.startswith(f"info source table value {expected['value']} remoteness "
                           f"{expected['remoteness']} exact pv {expected['best'][0]}")
    assert best.split()[1] in expected["best"]
    # elsewhere (no table there) the setoption'd directory is read afresh
    (tmp_path / "empty").mkdir()
    engine.send(f"setoption tables {tmp_path / 'empty'}", "go nodes 100")
    assert engine.until("bestmove")[-2].startswith("info source engine")
    assert engine.finish() == (0, "")


@pytest.mark.parametrize("signum, code, words", [(signal.SIGTERM, 143, "terminated"),
                                                 (signal.SIGINT, 130, "interrupted")])
def test_sigterm_and_ctrl_c_end_it_in_one_sentence(tmp_path, signum, code, words):
    engine = Engine("zigzag", "--threads", "1", cwd=tmp_path)
    try:
        engine.send("go infinite")
        engine.until("info")
        engine.process.send_signal(signum)
        got, stderr = engine.process.wait(timeout=20), engine.process.stderr.read()
    finally:
        engine.process.kill()          # never left searching on a core after the test
    assert got == code
    assert stderr.count("\n") == 1 and words in stderr and "Traceback" not in stderr


def test_the_command_line_refuses_bad_options_in_one_sentence(tmp_path, monkeypatch):
    """(Run in this process, as `sowsolve engine ...` runs it: a process each would take
    seconds to start.)"""
    from typer.testing import CliRunner

    from sowsolve.cli.app import app
    monkeypatch.setenv("SOWSOLVE_TABLES", str(tmp_path))
    for args, words in ((["chess"], "unknown game"), (["overflow", "--size", "2x2x2"], "--size"),
                        (["--hash", "lots"], "--hash"), (["--threads", "-3"], "--threads"),
                        (["--cols", "4"], "need a GAME")):
        run = CliRunner().invoke(app, ["engine", *args], input="")
        assert run.exit_code == 2 and run.stdout == "", (args, run.output)
        assert run.stderr.count("\n") == 1 and words in run.stderr, (args, run.stderr)


def test_the_transcript_of_the_docs(tmp_path):
    """docs/engine.md's transcript, sent a line at a time as a driver sends it (each reply
    read before the next command): every reply as the page shows it, the times aside (and
    the info lines a slower machine adds while a search runs)."""
    import pathlib
    import re
    page = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "engine.md").read_text()
    block = page.split("## A transcript", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    steps: list = []
    for line in block.splitlines():
        if line.startswith("> "):
            steps.append((line[2:], []))
        else:
            assert line.startswith("< "), line
            steps[-1][1].append(line[2:])

    def masked(text):
        return re.sub(r"\b(time|nps|pps) [0-9.]+", r"\1 T", text)

    engine = Engine("--threads", "1", env={"SOWSOLVE_TABLES": str(tmp_path)})
    for command, replies in steps:
        engine.send(command)
        for expected in replies:
            got = engine.line()
            while got.startswith("info ") and not got.startswith("info source"):
                got = engine.line()
            if expected.endswith(" ..."):
                assert got.startswith(expected[:-4]), (command, got[:200])
                json.loads(got)
            else:
                assert masked(got) == masked(expected), (command, got)
    assert engine.process.wait(timeout=30) == 0
    assert engine.lines.get(timeout=5) is None          # nothing more was said


def test_a_damaged_table_is_said_once_and_the_engine_answers_without_it(tmp_path):
    """A table of the board whose block fails its checksum: isready says so in an error line
    and still answers readyok; the searches go on without the tables and answer."""
    import sqlite3
    path = tmp_path / "diffusion-cols4-stones1.sqlite"
    solve_to(path, "diffusion", cols=4, stones=1)
    with sqlite3.connect(path) as db:            # one byte of a block's data changed
        name = [r[0] for r in db.execute("select name from sqlite_master where type='table'")][0]
        key, blob = db.execute(f"select key, value from {name} where key like 'block%' "
                               f"order by length(value) desc limit 1").fetchone()
        blob = bytearray(blob)
        blob[len(blob) // 2] ^= 0xFF
        db.execute(f"update {name} set value = ? where key = ?", (bytes(blob), key))
    engine = Engine("diffusion", "--cols", "4", "--stones", "1", "--threads", "1",
                    env={"SOWSOLVE_TABLES": str(tmp_path)})
    engine.send("isready")
    error, ready = engine.line(), engine.line()
    assert error.startswith("error ") and "searches without the tables" in error and ready == "readyok"
    engine.send("go nodes 500")
    lines = engine.until("bestmove")
    assert lines[-2].startswith("info source engine") and lines[-1].split()[1] != "none", (error, lines)
    assert engine.finish() == (0, "")


def test_options_and_words_are_checked(tmp_path):
    engine = Engine("overflow", "--size", "3x3", "--threads", "1", cwd=tmp_path)
    for command, words in (("setoption tables /dev/null", "tables must name a folder"),
                           ("setoption tables " + str(tmp_path / "missing"), "tables must name a folder"),
                           ("setoption hash 64T", "more than"),
                           ("show please", "show takes nothing after it"),
                           ("legal now", "legal takes nothing after it"),
                           ("go time \uff10.\uff11", "time must be a number"),
                           ("go time nan", "time must be a number"),
                           ("game diffusion --cols 4 --cols 6", "--cols is given twice")):
        answer = engine.ask(command)
        assert len(answer) == 1 and answer[0].startswith("error") and words in answer[0], (command, answer)
    engine.send("isready please")
    assert engine.line().startswith("error isready takes nothing") and engine.line() == "readyok"
    engine.send("protocol")
    lines = engine.until("protocolok")
    assert "option threads value 1" in lines
    assert engine.finish() == (0, "")
