"""Ctrl-C works everywhere: every long kernel polls a stop flag, the command ends with the one
sentence "sowsolve: interrupted" (exit 130), no progress bar stays on the terminal, and an
interrupted solve resumes to the same table as an uninterrupted one.

The commands run in subprocesses (stderr on a pseudo-terminal where a bar must show); a command
counts as running once it shows its progress bar, or once it has used more CPU time than its
start-up takes.  The 10 s bound after SIGINT is a liveness check, not a speed measurement."""
import fcntl
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time

import numpy as np
import pytest

from conftest import solve_to
from sowsolve.solver import kernels
from sowsolve.solver.games import make_game
from sowsolve.solver.values import NO_LONG, MarginTier
from sowsolve.tables.store import open_table

#: the whole module is left out of `pytest -m "not slow"` (processes, clusters, long solves)
pytestmark = pytest.mark.slow

STARTUP_CPU = 1.5        # seconds of CPU time; importing and starting the CLI takes about 0.5
LIVENESS = 10            # seconds a command may take to end after SIGINT


class Command:
    """A sowsolve command in a subprocess; with tty=True its stderr is a 100-column terminal."""

    def __init__(self, args, cwd, tty=False):
        self.output = bytearray()
        self._reader = None
        stderr, master = subprocess.PIPE, None
        if tty:
            master, slave = pty.openpty()
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
            stderr = slave
        # faulthandler: a command that outlives LIVENESS is sent SIGABRT, and prints the stack
        # of every thread of it on its way out (what the failure then quotes)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from sowsolve.cli.app import main; main()", *map(str, args)],
            stdout=subprocess.PIPE, stderr=stderr, cwd=cwd, env={**os.environ, "PYTHONFAULTHANDLER": "1"})
        if tty:
            os.close(slave)
            self._reader = threading.Thread(target=self._read, args=(master,), daemon=True)
            self._reader.start()

    def _read(self, fd):
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:         # EIO: the child closed the terminal
                break
            if not chunk:
                break
            self.output += chunk
        os.close(fd)

    def cpu_seconds(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def wait_until(self, condition, what):
        deadline = time.monotonic() + 120
        while not condition():
            assert self.proc.poll() is None, f"ended before {what}: {self.finish()}"
            assert time.monotonic() < deadline, f"never {what}"
            time.sleep(0.01)

    def interrupt(self):
        """SIGINT; then (exit code, stdout, stderr or terminal text)."""
        self.proc.send_signal(signal.SIGINT)
        return self.finish()

    def finish(self):
        try:
            out, err = self.proc.communicate(timeout=LIVENESS)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)       # its threads' stacks, then its end
            try:
                out, err = self.proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                out, err = self.proc.communicate()
            if self._reader is not None:
                self._reader.join(5)
                err = bytes(self.output)
            stacks = (err or b"").decode(errors="replace")[-12000:]
            pytest.fail(f"still running {LIVENESS} s after SIGINT; its threads then:\n{stacks}")
        if self._reader is not None:
            self._reader.join(5)
            err = bytes(self.output)
        return self.proc.returncode, out.decode(), err.decode(errors="replace")

    def __del__(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def screen(text: str) -> list[str]:
    """The lines a terminal shows after `text`: carriage returns, newlines, cursor up/down and
    erase-line, the controls progress bars use."""
    lines, row, col = [[]], 0, 0
    for token in re.findall(r"\x1b\[[0-9;?]*[A-Za-z]|.", text, flags=re.S):
        if token == "\r":
            col = 0
        elif token == "\n":
            row += 1
            col = 0
        elif token.startswith("\x1b["):
            n = int(re.sub(r"\D", "", token[2:-1]) or 1)
            if token[-1] == "A":
                row = max(0, row - n)
            elif token[-1] == "B":
                row += n
            elif token[-1] == "K":
                lines[row][col:] = []
            continue
        else:
            while len(lines[row]) <= col:
                lines[row].append(" ")
            lines[row][col] = token
            col += 1
        while len(lines) <= row:
            lines.append([])
    return ["".join(line).rstrip() for line in lines if "".join(line).strip()]


def assert_interrupted(code, stdout, terminal):
    assert code == 130, (code, stdout, terminal)
    assert "Traceback" not in terminal and "Traceback" not in stdout, terminal
    shown = screen(terminal)
    assert shown and shown[-1].startswith("sowsolve: interrupted"), shown
    assert [line for line in shown if line.startswith("sowsolve:")] == shown[-1:]
    stale = [line for line in shown if "pos/s" in line or "%|" in line]
    assert not stale, shown


# --- every command ----------------------------------------------------------------------

@pytest.mark.parametrize("game", [["diffusion"], ["overflow", "--size", "4x4"], ["zigzag"]],
                         ids=lambda g: g[0])
def test_perft_stops_on_ctrl_c(tmp_path, game):
    command = Command(["perft", *game, "--depth", "40"], tmp_path)
    command.wait_until(lambda: command.cpu_seconds() > STARTUP_CPU, "counting")
    code, out, err = command.interrupt()
    assert code == 130 and err.strip() == "sowsolve: interrupted" and out == "", (code, out, err)


DIFFUSION_6_1 = ["diffusion", "--cols", "6", "--stones", "1", "--threads", "2"]


@pytest.fixture(scope="module")
def reference_6_1(tmp_path_factory):
    path = tmp_path_factory.mktemp("ref") / "ref.sqlite"
    solve_to(path, "diffusion", cols=6, stones=1)
    return path


def test_an_interrupted_solve_leaves_a_clean_screen_and_resumes(tmp_path, reference_6_1):
    path = tmp_path / "t.sqlite"
    command = Command(["solve", *DIFFUSION_6_1, "--table", path], tmp_path, tty=True)
    command.wait_until(lambda: b"pos/s" in command.output, "showed its progress bar")
    assert_interrupted(*command.interrupt())
    assert b"/2.48M" in command.output       # one bar over all 2,481,453 positions
    assert b"resume" in command.output         # says how to go on
    with open_table(path, allow_unfinished=True) as table:
        assert not table.finished
        solved = [int(t) for t in table.solved_tiers]
    order = list(make_game("diffusion", cols=6, stones=1).tiers())
    assert solved == order[:len(solved)]
    resumed = subprocess.run([sys.executable, "-c", "from sowsolve.cli.app import main; main()",
                              "solve", *DIFFUSION_6_1, "--table", str(path)],
                             capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    with open_table(path) as table, open_table(reference_6_1) as whole:
        assert table.finished
        for tier in whole.tiers:
            assert np.array_equal(table.tier_records(tier), whole.tier_records(tier)), tier


def test_an_interrupted_search_leaves_no_table(tmp_path):
    path = tmp_path / "o.sqlite"
    command = Command(["solve", "overflow", "--size", "4x4", "--table", path, "--allow-large"],
                      tmp_path, tty=True)
    command.wait_until(lambda: b"pos/s" in command.output, "showed its progress bar")
    assert_interrupted(*command.interrupt())
    assert b"no table was kept" in command.output
    assert os.listdir(tmp_path) == []


def test_an_interrupted_zigzag_solve_stays_resumable(tmp_path):
    path = tmp_path / "z.sqlite"
    game = make_game("zigzag", cols=4, stones=3)
    command = Command(["solve", "zigzag", "--cols", 4, "--stones", 3, "--table", path], tmp_path,
                      tty=True)
    command.wait_until(lambda: b"pos/s" in command.output, "showed its progress bar")
    assert_interrupted(*command.interrupt())
    assert b"/63.1M" in command.output       # one bar over all 63,109,800 positions
    with open_table(path, allow_unfinished=True) as table:
        assert not table.finished
        solved = [int(t) for t in table.solved_tiers]
    order = list(game.tiers())
    assert solved == order[:len(solved)] and len(solved) < len(order)


def test_a_full_check_stops_on_ctrl_c(tmp_path, reference_6_1):
    command = Command(["check", "--table", reference_6_1, "--full"], tmp_path)
    table = os.path.realpath(reference_6_1)

    def checking() -> bool:         # the table is open: past the start-up, into the check
        try:
            return any(os.path.realpath(f"/proc/{command.proc.pid}/fd/{fd}") == table
                       for fd in os.listdir(f"/proc/{command.proc.pid}/fd"))
        except OSError:
            return False
    deadline = time.monotonic() + 120
    while command.proc.poll() is None and not checking():
        assert time.monotonic() < deadline, "never checking"
        time.sleep(0.005)
    if command.proc.poll() == 0:
        pytest.skip("the check ended before the signal")     # a fast machine
    code, out, err = command.interrupt()
    if code == 0 or "OK" in out:
        pytest.skip("the check ended before the signal")     # a fast machine
    assert code == 130 and err.strip() == "sowsolve: interrupted", (code, out, err)


# --- the kernels' stop flag (in this process) --------------------------------------------

def tier_arrays(game):
    """Fresh record arrays, indexed by tier (None where the game has no tier)."""
    arrays = [None] * (max(game.tiers()) + 1)
    for tier in game.tiers():
        arrays[tier] = np.zeros(game.tier_size(tier), dtype=np.uint16)
    return arrays


def stopped_control():
    control = kernels.Control()
    control.stop()
    return control


@pytest.fixture(scope="module")
def diffusion_4_2():
    """Game, capsule and solved records of Diffusion 2x4 k=2 (in memory)."""
    game = make_game("diffusion", cols=4, stones=2)
    arrays = tier_arrays(game)
    capsule = game.kernel().capsule()
    for tier in game.tiers():
        kernels.solve_range(capsule, tier, 0, arrays[tier].size, arrays, 2)
    return game, capsule, arrays


def test_the_tier_solver_stops_when_asked(diffusion_4_2):
    game, capsule, arrays = diffusion_4_2
    tier = max(game.tiers(), key=game.tier_size)
    fresh = list(arrays)
    fresh[tier] = np.zeros_like(arrays[tier])
    with pytest.raises(KeyboardInterrupt):
        kernels._retrograde.solve_range(capsule, tier, 0, fresh[tier].size, fresh, 2,
                                        stopped_control().words)
    assert not fresh[tier].any()
    with pytest.raises(KeyboardInterrupt):
        kernels._retrograde.verify_range(capsule, tier, 0, arrays[tier].size, arrays, 2,
                                         stopped_control().words)


def test_ctrl_c_stops_a_tier_in_the_middle(monkeypatch):
    """Ctrl-C while the driver waits (here: raised by the progress observer) stops the kernel
    before the tier is done: the largest tier of 2x6 k=1 (1.2 M positions) takes far longer than
    the 1 ms between two looks."""
    monkeypatch.setattr(kernels, "POLL_SECONDS", 0.001)
    game = make_game("diffusion", cols=6, stones=1)
    capsule = game.kernel().capsule()
    arrays = tier_arrays(game)
    top = max(game.tiers())
    for tier in game.tiers():
        if tier < top:
            kernels.solve_range(capsule, tier, 0, arrays[tier].size, arrays, 2)
    seen = []

    def ctrl_c(done):
        seen.append(done)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), kernels.observing(ctrl_c):
        kernels.solve_range(capsule, top, 0, arrays[top].size, arrays, 2)
    assert seen and np.count_nonzero(arrays[top] == 0) > 0


def test_the_search_and_the_score_kernels_stop_when_asked():
    overflow = make_game("overflow", size="3x3")
    solver = kernels.TTSolver(overflow.kernel().capsule(), 10**6)
    with pytest.raises(KeyboardInterrupt):
        solver.run(overflow.key(overflow.initial())[1], stopped_control().words)
    assert solver.positions == 0
    zigzag = make_game("zigzag", cols=4, stones=1)
    with pytest.raises(KeyboardInterrupt):      # 38,610 positions: the loop looks at the flag
        bias = kernels.MARGIN_LAYOUT["bias"]         # margin 0, remoteness 0: solved records
        tier = zigzag.score_tier(8 * 3, {s * 3 + 1: MarginTier(np.full(zigzag.tier_size(s * 3 + 1), bias,
                                                                       np.uint16), NO_LONG)
                                         for s in range(8)})
        kernels._scoresolve.solve_tier(tier, 2, stopped_control().words)
    with pytest.raises(KeyboardInterrupt):
        kernels._scoresolve.solve_graph(_big_graph(), stopped_control().words)


def _big_graph():
    """A tier graph with more positions than a sweep handles between two looks at the flag:
    a chain of 20,000 positions, each with one exit worth +1 for P."""
    n = 20000
    return {"side": np.zeros(n, dtype=np.uint8), "moves": np.ones(n, dtype=np.uint8),
            "same": np.full(n, -2, dtype=np.int32), "width": 1,
            "exit_value": np.ones(n, dtype=np.int16), "exit_remoteness": np.zeros(n, dtype=np.uint8),
            "captures": np.ones(n, dtype=np.uint8), "bound": 1, "endless_value": 0}
