"""The fault matrix: every surface (solve, export, check, prove, serve, play, the cluster) against
every fault -- Ctrl-C (SIGINT), SIGTERM, kill -9 and then the same command again, a full disk, a
hostile input file, two processes at once -- each cell asserting the exit code, the message and
the state left behind.  A cell that does not apply is a skip that says why, so the whole matrix
shows in the test list (`test_fault_matrix[SURFACE-FAULT]`).

A signal must reach a command while it works, and the boards here are solved in milliseconds, so
the command runs in a child process that stops at a chosen point of its work (PAUSES: before a
tier, inside an export, between two slices of a proof search, inside a search kernel that counts
and looks at its stop flag as the real ones do) until the test lets it go on; the test sends the
signal while it waits there.  The pauses are this file's, installed in the child before sowsolve
starts; sowsolve itself has no such hook.  A full disk is a small tmpfs, so those cells need
root (they say so and skip elsewhere).  Expected values come from tables solved here in one
process, never from the command under test.  Bounds on waiting (LIVENESS) only keep a broken
command from hanging the test run.
"""
import http.client
import itertools
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import solve_to
from sowsolve.cli.app import app
from sowsolve.solver.games import make_game
from sowsolve.tables.store import open_table

#: the whole module is left out of `pytest -m "not slow"` (processes, clusters, long solves)
pytestmark = pytest.mark.slow

LIVENESS = 60               # seconds a child may take to reach its pause or to end
DIFFUSION_4_2 = ["diffusion", "--cols", "4", "--stones", "2"]
DIFFUSION_4_1 = ["diffusion", "--cols", "4", "--stones", "1"]
LACKED = "201/111/111 L"    # a 3x3 Overflow position the table lacks: serve searches it

# Where the child stops (the environment's FAULT_PAUSE: "point|ready file|go file"): it makes
# the ready file and waits until the go file appears (or, in an export, until a signal has been
# noted: the export takes note of signals while it reads and acts on them after the block).
CHILD = r'''
import os, sys, time

point, ready, go = os.environ["FAULT_PAUSE"].split("|")
noted = []

def pause():
    open(ready, "w").close()
    while not os.path.exists(go) and not noted:
        time.sleep(0.01)

def pause_at(owner, name, call, before=True):
    real, calls = getattr(owner, name), []
    def wrapped(*args, **kwargs):
        calls.append(1)
        if before and len(calls) == call:
            pause()
        result = real(*args, **kwargs)
        if not before and len(calls) == call:
            pause()
        return result
    setattr(owner, name, wrapped)

if point == "tier":                     # solve: before the third tier's work
    from sowsolve.solver import tiers
    pause_at(tiers.InProcess, "run", 3)
elif point == "cluster-tier":           # a solve on a cluster: before the third tier's work
    from sowsolve.solver import cluster
    pause_at(cluster.DaskExecutor, "run", 3)
elif point == "export":                 # export: while the second block of rows is made
    from sowsolve.tables import export, rows
    pause_at(rows, "block_rows", 2)
    real_handler = export._Stop._handler
    def handler(self, signum, frame):
        noted.append(signum)
        real_handler(self, signum, frame)
    export._Stop._handler = handler
elif point == "check":                  # check: as the second tier is read
    from sowsolve.tables import store
    pause_at(store.Table, "tier_records", 2)
elif point == "prove":                  # prove: after the second slice of the search
    from sowsolve.solver import proof
    proof.SLICE_NODES = 64
    pause_at(proof, "run_stoppable", 2, before=False)
elif point == "perft":                  # perft: just before the counting kernel
    from sowsolve.solver.games import overflow
    pause_at(overflow.Overflow, "perft", 1)
elif point == "search":                 # serve: a search kernel counting, its stop flag polled
    from sowsolve.solver import search
    real = search.run_stoppable
    def run_stoppable(call, positions=None):
        def kernel(words):
            open(ready, "w").close()
            while not words[0]:
                if os.path.exists(go):
                    return call(words)
                words[8] += 1
                time.sleep(0.01)
        return real(kernel, positions)
    search.run_stoppable = run_stoppable
from sowsolve.cli.entry import main

main()
'''


class Child:
    """A sowsolve command in a process of its own (optionally paused at `pause`), its output
    collected as it comes."""

    def __init__(self, args, cwd, pause=None, stdin=None, session=False):
        self.dir = cwd
        self.ready, self.go_file = os.path.join(cwd, ".ready"), os.path.join(cwd, ".go")
        env = dict(os.environ, FAULT_PAUSE=f"{pause}|{self.ready}|{self.go_file}")
        code = CHILD if pause else "from sowsolve.cli.entry import main; main()"
        self.proc = subprocess.Popen([sys.executable, "-c", code, *map(str, args)], cwd=cwd,
                                     env=env, stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=session)
        self.out, self.err = bytearray(), bytearray()
        self.readers = [threading.Thread(target=self._read, args=(s, b), daemon=True)
                        for s, b in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for reader in self.readers:
            reader.start()

    @staticmethod
    def _read(stream, into):
        while True:
            chunk = stream.read1(4096)
            if not chunk:
                break
            into += chunk

    def wait_for(self, condition, what):
        deadline = time.monotonic() + LIVENESS
        while not condition():
            assert self.proc.poll() is None, f"ended before {what}: {self.finish()}"
            assert time.monotonic() < deadline, f"never {what}"
            time.sleep(0.01)

    def paused(self):
        self.wait_for(lambda: os.path.exists(self.ready), "reached its pause")

    def go(self):
        open(self.go_file, "w").close()

    def stop(self, sig):
        self.proc.send_signal(sig)
        return self.finish()

    def finish(self):
        try:
            self.proc.wait(LIVENESS)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"still running {LIVENESS} s on")
        for reader in self.readers:
            reader.join(5)
        for leftover in (self.ready, self.go_file):
            if os.path.exists(leftover):
                os.remove(leftover)
        return self.proc.returncode, self.out.decode(), self.err.decode(errors="replace")

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)    # a session's workers too
            except (PermissionError, ProcessLookupError):
                self.proc.kill()
        self.proc.wait()


def cli(*args):
    """A command in this process: (exit code, stdout, stderr)."""
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def said(code, err, expected_code, sentence):
    """Exit code `expected_code` and, as the only line of sowsolve's own on stderr (besides
    serve's line saying where it listens), one that starts with `sentence`; no traceback."""
    assert code == expected_code, (code, err)
    assert "Traceback" not in err, err
    own = [line for line in err.splitlines()
           if line.startswith("sowsolve:") and not line.startswith("sowsolve: serving")]
    assert len(own) == 1 and own[0].startswith(f"sowsolve: {sentence}"), own
    return own[0]


SIGNALS = {"sigint": (signal.SIGINT, 130, "interrupted"),
           "sigterm": (signal.SIGTERM, 143, "terminated")}


def listing(directory):
    return sorted(os.listdir(directory))


def fingerprint(path):
    st = os.stat(path)
    with open(path, "rb") as f:
        return f.read(), st.st_mtime_ns


def same_table(path, reference):
    with open_table(path) as here, open_table(reference) as whole:
        assert here.tiers == whole.tiers
        for tier in whole.tiers:
            assert np.array_equal(here.tier_records(tier), whole.tier_records(tier)), tier


def solved_prefix(path, name, **board):
    """The tiers an unfinished table keeps: the first ones of the game's solving order."""
    with open_table(path, allow_unfinished=True) as table:
        assert not table.finished
        kept = table.solved_tiers
    order = list(make_game(name, **board).tiers())
    assert kept == order[:len(kept)], kept
    return kept


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(port, path):
    """(status, body) of a GET to the explorer."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=LIVENESS)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def listening(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class SmallDisk:
    """A tmpfs of `size` at `directory` (root only), unmounted at the end."""

    def __init__(self, directory, size):
        self.directory = str(directory)
        os.makedirs(self.directory, exist_ok=True)
        if os.geteuid() != 0:
            pytest.skip("a full disk is a small tmpfs here, which needs root")
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                               self.directory], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.decode().strip()[:80]})")

    def fill(self):
        """Take every free byte."""
        fd = os.open(os.path.join(self.directory, "filler"), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)

    def grow(self, size):
        subprocess.run(["mount", "-o", f"remount,size={size}", self.directory], check=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        subprocess.run(["umount", "-l", self.directory], capture_output=True)


@pytest.fixture(scope="module")
def refs(tmp_path_factory):
    """Tables solved in this process: the expected values of every cell."""
    directory = tmp_path_factory.mktemp("refs")
    made = {"d42": ("diffusion", {"cols": 4, "stones": 2}), "d41": ("diffusion", {"cols": 4, "stones": 1}),
            "o33": ("overflow", {"size": "3x3"})}
    for name, (game, board) in made.items():
        solve_to(directory / f"{name}.sqlite", game, **board)
    return {name: str(directory / f"{name}.sqlite") for name in made}


def copy(refs, name, directory):
    target = os.path.join(str(directory), f"{name}.sqlite")
    shutil.copyfile(refs[name], target)
    return target


# --- solve ------------------------------------------------------------------------------------

def solve_signal(tmp_path, refs, fault):
    sig, code, word = SIGNALS[fault]
    table = str(tmp_path / "t.sqlite")
    child = Child(["solve", *DIFFUSION_4_2, "--table", table], str(tmp_path), pause="tier")
    child.paused()
    code_, _, err = child.stop(sig)
    said(code_, err, code, f"{word}; {table} keeps 2 of 16 tiers (up to tier 2): run the same "
                           f"command again to resume")
    keeps_two_tiers_and_resumes(table, refs)
    assert listing(tmp_path) == ["t.sqlite"]


def solve_kill(tmp_path, refs):
    table = str(tmp_path / "t.sqlite")
    child = Child(["solve", *DIFFUSION_4_2, "--table", table], str(tmp_path), pause="tier")
    child.paused()
    code, _, _ = child.stop(signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert len(solved_prefix(table, "diffusion", cols=4, stones=2)) <= 2
    code, out, err = cli("solve", *DIFFUSION_4_2, "--table", table, "--json")
    assert code == 0, err
    assert json.loads(out)["positions_solved_now"] < json.loads(out)["positions_per_side"]
    same_table(table, refs["d42"])
    assert listing(tmp_path) == ["t.sqlite"]            # no journal, no temporary file


def solve_disk_full(tmp_path, refs):
    with SmallDisk(tmp_path / "small", "96k") as disk:
        table = os.path.join(disk.directory, "t.sqlite")
        code, _, err = cli("solve", *DIFFUSION_4_2, "--table", table, "--allow-large")
        line = said(code, err, 1, f"disk full while writing tier ")
        kept = solved_prefix(table, "diffusion", cols=4, stones=2)
        assert kept and line.endswith(f"of {table}; the table keeps tiers up to tier {kept[-1]} and "
                                      f"resumes when there is space"), line
        disk.grow("4m")
        assert cli("solve", *DIFFUSION_4_2, "--table", table)[0] == 0
        same_table(table, refs["d42"])
        assert listing(disk.directory) == ["t.sqlite"]


def solve_hostile(tmp_path, refs):
    table = tmp_path / "t.sqlite"
    table.write_bytes(bytes(range(256)) * 64)
    before = fingerprint(table)
    code, _, err = cli("solve", *DIFFUSION_4_2, "--table", table)
    said(code, err, 2, f"{table} is not a sowsolve table")
    assert fingerprint(table) == before and listing(tmp_path) == ["t.sqlite"]


def solve_two(tmp_path, refs):
    table = str(tmp_path / "t.sqlite")
    first = Child(["solve", *DIFFUSION_4_2, "--table", table], str(tmp_path), pause="tier")
    first.paused()
    try:
        for force in ([], ["--force"]):
            code, _, err = cli("solve", *DIFFUSION_4_2, "--table", table, *force)
            said(code, err, 1, f"{table} is being written by another sowsolve process")
    finally:
        first.go()
    code, _, err = first.finish()
    assert code == 0, err
    same_table(table, refs["d42"])


# --- export -----------------------------------------------------------------------------------

def export_rows():
    """Rows of the export of Diffusion 2x4 k=1: every position, both sides to move."""
    game = make_game("diffusion", cols=4, stones=1)
    return 2 * sum(game.tier_size(t) for t in game.tiers())


def export_args(table, out):
    return ["export", "--table", table, "--format", "csv", "--out", out]


def export_whole(out):
    with open(out) as f:
        lines = f.read().splitlines()
    assert lines[0] == "position,value,remoteness" and len(lines) == 1 + export_rows()


def export_signal(tmp_path, refs, fault):
    sig, code, word = SIGNALS[fault]
    table, out = copy(refs, "d41", tmp_path), tmp_path / "out.csv"
    out.write_text("old\n")
    child = Child(export_args(table, out), str(tmp_path), pause="export")
    child.paused()
    code_, _, err = child.stop(sig)
    said(code_, err, code, word)
    assert out.read_text() == "old\n" and listing(tmp_path) == ["d41.sqlite", "out.csv"]


def export_kill(tmp_path, refs):
    table, out = copy(refs, "d41", tmp_path), tmp_path / "out.csv"
    out.write_text("old\n")
    child = Child(export_args(table, out), str(tmp_path), pause="export")
    child.paused()
    assert child.stop(signal.SIGKILL)[0] == -signal.SIGKILL
    assert out.read_text() == "old\n"
    code, _, err = cli(*export_args(table, out))
    assert code == 0, err
    export_whole(out)
    assert listing(tmp_path) == ["d41.sqlite", "out.csv"]


def export_disk_full(tmp_path, refs):
    table = copy(refs, "d41", tmp_path)
    with SmallDisk(tmp_path / "small", "64k") as disk:
        out = os.path.join(disk.directory, "out.csv")
        with open(out, "w") as f:
            f.write("old\n")
        disk.fill()
        code, _, err = cli(*export_args(table, out))
        said(code, err, 1, f"cannot write {out}: No space left on device")
        assert open(out).read() == "old\n" and listing(disk.directory) == ["filler", "out.csv"]


def export_hostile(tmp_path, refs):
    """A table whose block was overwritten (checksums no longer match)."""
    table, out = copy(refs, "d41", tmp_path), tmp_path / "out.csv"
    out.write_text("old\n")
    with sqlite3.connect(table) as db:
        key, value = db.execute("SELECT key, value FROM sowsolve WHERE key LIKE 'block/5/%'").fetchone()
        damaged = bytearray(value)
        damaged[len(damaged) // 2] ^= 0xFF
        db.execute("UPDATE sowsolve SET value = ? WHERE key = ?", (bytes(damaged), key))
    db.close()
    code, _, err = cli(*export_args(table, out))
    said(code, err, 1, f"{table} is corrupt")
    assert out.read_text() == "old\n" and listing(tmp_path) == ["d41.sqlite", "out.csv"]


def export_two(tmp_path, refs):
    table, out = copy(refs, "d41", tmp_path), str(tmp_path / "out.csv")
    first = Child(export_args(table, out), str(tmp_path), pause="export")
    first.paused()
    try:
        code, _, err = cli(*export_args(table, out))
        assert code == 0, err
        export_whole(out)
    finally:
        first.go()
    code, _, err = first.finish()
    assert code == 0, err
    export_whole(out)
    assert listing(tmp_path) == ["d41.sqlite", "out.csv"]


# --- check ------------------------------------------------------------------------------------

def check_signal(tmp_path, refs, fault):
    sig, code, word = SIGNALS[fault]
    table = copy(refs, "d41", tmp_path)
    before = fingerprint(table)
    child = Child(["check", "--table", table], str(tmp_path), pause="check")
    child.paused()
    code_, out, err = child.stop(sig)
    said(code_, err, code, word)
    assert "OK" not in out
    assert fingerprint(table) == before and listing(tmp_path) == ["d41.sqlite"]


def check_kill(tmp_path, refs):
    table = copy(refs, "d41", tmp_path)
    before = fingerprint(table)
    child = Child(["check", "--table", table], str(tmp_path), pause="check")
    child.paused()
    assert child.stop(signal.SIGKILL)[0] == -signal.SIGKILL
    code, out, err = cli("check", "--table", table)
    assert code == 0 and out.rstrip().endswith("OK"), (out, err)
    assert fingerprint(table) == before and listing(tmp_path) == ["d41.sqlite"]


def read_on_a_full_disk(tmp_path, refs, name, read):
    """A read needs no room: `read(table, directory)` of a copy of the table `name` on a full
    disk runs, and leaves the disk as it was."""
    with SmallDisk(tmp_path / "small", "256k") as disk:
        table = copy(refs, name, disk.directory)
        disk.fill()
        before = fingerprint(table)
        read(table, disk.directory)
        assert fingerprint(table) == before
        assert listing(disk.directory) == sorted([f"{name}.sqlite", "filler"])


def check_disk_full(tmp_path, refs):
    def read(table, directory):
        code, out, err = cli("check", "--table", table, "--full")
        assert code == 0 and out.rstrip().endswith("OK"), (out, err)
    read_on_a_full_disk(tmp_path, refs, "d41", read)


def check_hostile(tmp_path, refs):
    proof = tmp_path / "x.proof"
    proof.write_bytes(b'{"format": "sowsolve-proof", "version": 1, "winner_positions": 99}\n'
                      + bytes(range(256)))
    before = fingerprint(proof)
    code, _, err = cli("check", "--proof", proof)
    said(code, err, 1, f"{proof}: its positions fail their checksum")
    proof.write_bytes(b"\x00" * 300)
    code, _, err = cli("check", "--proof", proof)
    said(code, err, 2, f"{proof} is not a sowsolve proof")
    assert before[0] != proof.read_bytes() and listing(tmp_path) == ["x.proof"]


def check_two(tmp_path, refs):
    table = copy(refs, "d41", tmp_path)
    before = fingerprint(table)
    first = Child(["check", "--table", table], str(tmp_path), pause="check")
    first.paused()
    try:
        code, out, err = cli("check", "--table", table)
        assert code == 0 and out.rstrip().endswith("OK"), (out, err)
    finally:
        first.go()
    code, out, err = first.finish()
    assert code == 0 and out.rstrip().endswith("OK"), (out, err)
    assert fingerprint(table) == before and listing(tmp_path) == ["d41.sqlite"]


# --- prove ------------------------------------------------------------------------------------

PROVE = ["prove", "overflow", "--size", "3x3", "--memory", "160M", "--threads", "1"]


def start_value(refs):
    """The 3x3 start's value, from the table solved in this process."""
    with open_table(refs["o33"]) as table:
        return table.probe(table.game.initial()).value


def proved(refs, *args):
    code, out, err = cli(*PROVE, *args, "--json")
    assert code == 0, err
    assert json.loads(out)["value"] == start_value(refs)


def prove_signal(tmp_path, refs, fault):
    sig, code, word = SIGNALS[fault]
    checkpoint = str(tmp_path / "s.ckpt")
    child = Child([*PROVE, "--checkpoint", checkpoint], str(tmp_path), pause="prove")
    child.paused()
    code_, _, err = child.stop(sig)
    said(code_, err, code, word)
    assert listing(tmp_path) == ["s.ckpt"]      # saved as it stopped; its lock gone
    proved(refs, "--checkpoint", checkpoint)     # and a search goes on from it
    assert listing(tmp_path) == ["s.ckpt"]


def prove_kill(tmp_path, refs):
    checkpoint = str(tmp_path / "s.ckpt")
    child = Child([*PROVE, "--checkpoint", checkpoint], str(tmp_path), pause="prove")
    child.paused()
    assert child.stop(signal.SIGKILL)[0] == -signal.SIGKILL
    assert listing(tmp_path) == ["s.ckpt.lock"]  # the dead search's lock file, no lock held
    proved(refs, "--checkpoint", checkpoint)
    assert listing(tmp_path) == []


def prove_disk_full(tmp_path, refs):
    with SmallDisk(tmp_path / "small", "64k") as disk:
        disk.fill()
        proof = os.path.join(disk.directory, "p.proof")
        code, _, err = cli(*PROVE, "--proof", proof)
        line = said(code, err, 1, "cannot write '")      # the name given, never a temporary one
        assert line.endswith(": No space left on device") and ".tmp" not in line, line
        assert listing(disk.directory) == ["filler"]


def prove_hostile(tmp_path, refs):
    checkpoint = tmp_path / "s.ckpt"
    checkpoint.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 8)
    before = fingerprint(checkpoint)
    code, _, err = cli(*PROVE, "--checkpoint", checkpoint)
    said(code, err, 2, "--checkpoint")
    assert "is not a checkpoint of the proof search" in err
    assert fingerprint(checkpoint) == before and listing(tmp_path) == ["s.ckpt"]


def prove_two(tmp_path, refs):
    checkpoint = str(tmp_path / "s.ckpt")
    first = Child([*PROVE, "--checkpoint", checkpoint, "--json"], str(tmp_path), pause="prove")
    first.paused()
    try:
        code, _, err = cli(*PROVE, "--checkpoint", checkpoint)
        said(code, err, 1, "--checkpoint")
        assert "is in use by another sowsolve prove" in err
    finally:
        first.go()
    code, out, err = first.finish()
    assert code == 0, err
    assert json.loads(out)["value"] == start_value(refs)
    assert listing(tmp_path) == []


# --- serve ------------------------------------------------------------------------------------

def serve(table, port, directory, pause=None):
    child = Child(["serve", "--table", table, "--port", port], directory, pause=pause)
    child.wait_for(lambda: listening(port), "listened")
    return child


def serve_signal(tmp_path, refs, fault):
    """A signal while a search runs: the search stops at once (its request gets 503), the
    server stops and says so."""
    sig, code, word = SIGNALS[fault]
    table, port = copy(refs, "o33", tmp_path), free_port()
    before = fingerprint(table)
    child = serve(table, port, str(tmp_path), pause="search")
    answers = []
    asking = threading.Thread(target=lambda: answers.append(
        get(port, f"/api/query?position={LACKED.replace(' ', '%20')}")), daemon=True)
    asking.start()
    child.paused()
    code_, _, err = child.stop(sig)
    asking.join(LIVENESS)
    said(code_, err, code, word)
    assert answers == [(503, json.dumps({"error": "the explorer is stopping"}, separators=(",", ":")))]
    assert fingerprint(table) == before and listing(tmp_path) == ["o33.sqlite"]


def serve_kill(tmp_path, refs):
    table, port = copy(refs, "o33", tmp_path), free_port()
    before = fingerprint(table)
    first = serve(table, port, str(tmp_path))
    assert first.stop(signal.SIGKILL)[0] == -signal.SIGKILL
    again = serve(table, port, str(tmp_path))           # the port is free again
    status, body = get(port, f"/api/query?position={LACKED.replace(' ', '%20')}")
    assert status == 200 and json.loads(body)["source"] == "search"
    said(*again.stop(signal.SIGINT)[::2], 130, "interrupted")
    assert fingerprint(table) == before and listing(tmp_path) == ["o33.sqlite"]


def serve_disk_full(tmp_path, refs):
    from starlette.testclient import TestClient
    from sowsolve.cli.web import create_app

    def read(table, directory):
        with TestClient(create_app([table])) as client:
            for position in (LACKED, "111/111/111 L"):
                assert client.get("/api/svg", params={"position": position}).status_code == 200
    read_on_a_full_disk(tmp_path, refs, "o33", read)


def serve_hostile(tmp_path, refs):
    """A FIFO named as the table: refused before anything listens (opening it would wait)."""
    fifo, port = str(tmp_path / "t.sqlite"), free_port()
    os.mkfifo(fifo)
    child = Child(["serve", "--table", fifo, "--port", port], str(tmp_path))
    code, _, err = child.finish()
    said(code, err, 2, f"{fifo} is not a table file")
    assert not listening(port) and listing(tmp_path) == ["t.sqlite"]


def serve_two(tmp_path, refs):
    table, port = copy(refs, "o33", tmp_path), free_port()
    first = serve(table, port, str(tmp_path))
    try:
        code, _, err = Child(["serve", "--table", table, "--port", port], str(tmp_path)).finish()
        said(code, err, 1, f"cannot listen on 127.0.0.1:{port}")
        assert get(port, "/api/tables")[0] == 200
    finally:
        code, _, err = first.stop(signal.SIGINT)
    said(code, err, 130, "interrupted")


# --- play -------------------------------------------------------------------------------------

def play(table, directory):
    child = Child(["play", "--table", table], directory, stdin=subprocess.PIPE)
    child.wait_for(lambda: b"your move" in child.out, "asked for a move")
    return child


def play_signal(tmp_path, refs, fault):
    sig, code, word = SIGNALS[fault]
    table = copy(refs, "d41", tmp_path)
    before = fingerprint(table)
    code_, _, err = play(table, str(tmp_path)).stop(sig)
    said(code_, err, code, word)
    assert fingerprint(table) == before and listing(tmp_path) == ["d41.sqlite"]


def play_quits(table, directory):
    done = subprocess.run([sys.executable, "-c", "from sowsolve.cli.entry import main; main()",
                           "play", "--table", table], input="quit\n", capture_output=True,
                          text=True, cwd=directory, timeout=LIVENESS)
    assert done.returncode == 0 and done.stdout.rstrip().endswith("game left unfinished"), done.stderr


def play_kill(tmp_path, refs):
    table = copy(refs, "d41", tmp_path)
    before = fingerprint(table)
    assert play(table, str(tmp_path)).stop(signal.SIGKILL)[0] == -signal.SIGKILL
    play_quits(table, str(tmp_path))
    assert fingerprint(table) == before and listing(tmp_path) == ["d41.sqlite"]


def play_disk_full(tmp_path, refs):
    read_on_a_full_disk(tmp_path, refs, "d41", play_quits)


def play_hostile(tmp_path, refs):
    """An SQLite file of another program's."""
    table = str(tmp_path / "t.sqlite")
    with sqlite3.connect(table) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    db.close()
    before = fingerprint(table)
    code, _, err = cli("play", "--table", table)
    said(code, err, 2, f"{table} is not a sowsolve table")
    assert fingerprint(table) == before and listing(tmp_path) == ["t.sqlite"]


# --- the cluster ------------------------------------------------------------------------------

def cluster_args(table, *extra):
    return ["solve", *DIFFUSION_4_2, "--table", table, "--workers", "2", *extra]


def run_dirs(directory):
    return [name for name in os.listdir(directory) if name.endswith(".sowsolve-cluster")]


def paused_cluster_solve(tmp_path, act):
    """(table, act(child)) of a cluster solve of Diffusion 2x4 k=2 paused before its third
    tier; the driver and its workers are gone afterwards."""
    table = str(tmp_path / "t.sqlite")
    child = Child(cluster_args(table), str(tmp_path), pause="cluster-tier", session=True)
    try:
        child.paused()
        return table, act(child)
    finally:
        child.kill()


def keeps_two_tiers_and_resumes(table, refs):
    """A solve stopped before its third tier: the table keeps the first two, nothing of the
    run is left in the shared directory, and the next solve finishes the table."""
    assert solved_prefix(table, "diffusion", cols=4, stones=2) == [1, 2]
    assert run_dirs(os.path.dirname(table)) == []
    assert cli("solve", *DIFFUSION_4_2, "--table", table)[0] == 0
    same_table(table, refs["d42"])


def cluster_signal(tmp_path, refs, fault):
    sig, code, word = SIGNALS[fault]
    table, (code_, _, err) = paused_cluster_solve(tmp_path, lambda child: child.stop(sig))
    said(code_, err, code, f"{word}; {table} keeps 2 of 16 tiers (up to tier 2): run the same "
                           f"command again to resume")
    keeps_two_tiers_and_resumes(table, refs)


def cluster_kill(tmp_path, refs):
    table = str(tmp_path / "t.sqlite")
    child = Child(cluster_args(table), str(tmp_path), pause="cluster-tier", session=True)
    child.paused()
    child.kill()                                # the driver and its workers
    assert len(run_dirs(tmp_path)) == 1         # the dead driver's, removed by the next solve
    done = Child(cluster_args(table, "--json"), str(tmp_path), session=True)
    code, out, err = done.finish()
    assert code == 0, err
    assert json.loads(out)["resumed_from_tier"] is not None
    same_table(table, refs["d42"])
    assert listing(tmp_path) == ["t.sqlite"]


def cluster_disk_full(tmp_path, refs):
    table = str(tmp_path / "t.sqlite")
    with SmallDisk(tmp_path / "small", "64k") as disk:
        code, _, err = Child(cluster_args(table, "--shared-dir", disk.directory), str(tmp_path),
                             session=True).finish()
        line = said(code, err, 1, "solving tier ")
        assert "on the cluster failed: cannot write " in line and line.endswith(
            ": No space left on device"), line
        solved_prefix(table, "diffusion", cols=4, stones=2)
        assert listing(disk.directory) == []
    assert cli("solve", *DIFFUSION_4_2, "--table", table)[0] == 0
    same_table(table, refs["d42"])


def cluster_hostile(tmp_path, refs):
    """The file of a tier the workers are about to read replaced by a FIFO (whose open would
    wait for a writer for good): the solve fails in one sentence naming it, and resumes."""
    def swap(child):
        [run] = run_dirs(tmp_path)
        tier_file = os.path.join(str(tmp_path), run, "tier-2-records.npy")
        os.replace(tier_file, tier_file + ".moved")
        os.mkfifo(tier_file)
        child.go()
        return child.finish()
    table, (code, _, err) = paused_cluster_solve(tmp_path, swap)
    line = said(code, err, 1, "solving tier 3 on the cluster failed")
    assert "tier-2-records.npy is not a regular file" in line, line
    keeps_two_tiers_and_resumes(table, refs)


def cluster_two(tmp_path, refs):
    def second_then_first(first):
        table = str(tmp_path / "t.sqlite")
        code, _, err = Child(cluster_args(table), str(tmp_path), session=True).finish()
        said(code, err, 1, f"{table} is being written by another sowsolve process")
        first.go()
        return first.finish()
    table, (code, _, err) = paused_cluster_solve(tmp_path, second_then_first)
    assert code == 0, err
    same_table(table, refs["d42"])
    assert listing(tmp_path) == ["t.sqlite"]


# --- the matrix -------------------------------------------------------------------------------

FAULTS = ("sigint", "sigterm", "kill9", "disk_full", "hostile", "two_at_once")
SURFACES = {
    "solve": (solve_signal, solve_kill, solve_disk_full, solve_hostile, solve_two),
    "export": (export_signal, export_kill, export_disk_full, export_hostile, export_two),
    "check": (check_signal, check_kill, check_disk_full, check_hostile, check_two),
    "prove": (prove_signal, prove_kill, prove_disk_full, prove_hostile, prove_two),
    "serve": (serve_signal, serve_kill, serve_disk_full, serve_hostile, serve_two),
    "play": (play_signal, play_kill, play_disk_full, play_hostile,
             "play only reads its table and writes nothing: two players share nothing that "
             "could conflict"),
    "cluster": (cluster_signal, cluster_kill, cluster_disk_full, cluster_hostile, cluster_two),
}


def cell(surface, fault):
    signal_cell, kill, disk_full, hostile, two = SURFACES[surface]
    return {"sigint": signal_cell, "sigterm": signal_cell, "kill9": kill, "disk_full": disk_full,
            "hostile": hostile, "two_at_once": two}[fault]


@pytest.mark.parametrize("surface, fault", [
    pytest.param(surface, fault, id=f"{surface}-{fault}",
                 marks=[pytest.mark.slow] if surface == "cluster" else [])
    for surface, fault in itertools.product(SURFACES, FAULTS)])
def test_fault_matrix(surface, fault, tmp_path, refs):
    run = cell(surface, fault)
    if isinstance(run, str):
        pytest.skip(run)
    if surface == "cluster":
        pytest.importorskip("distributed")
    if fault in SIGNALS:
        run(tmp_path, refs, fault)
    else:
        run(tmp_path, refs)


# --- beside the matrix: the other long commands stop with a sentence too ----------------------

@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_perft_stops_on_sigterm_and_sighup_with_a_sentence(tmp_path, sig, code):
    child = Child(["perft", "overflow", "--size", "8x8", "--depth", 5], str(tmp_path), pause="perft")
    child.paused()
    got, out, err = child.stop(sig)
    said(got, err, code, "terminated")
    assert out == ""


def waiting_in_open(pid):
    """Whether the process waits for a FIFO's other end (in open)."""
    def blocked_in_open():
        with open(f"/proc/{pid}/wchan") as f:
            if f.read().strip() in ("wait_for_partner", "fifo_open"):
                return True
        with open(f"/proc/{pid}/stat") as f:
            sleeping = f.read().rsplit(")", 1)[1].split()[0] == "S"
        with open(f"/proc/{pid}/syscall") as f:     # open, openat (x86-64), still there later
            return sleeping and f.read().split()[0] in ("2", "257")
    try:
        if not blocked_in_open():
            return False
        time.sleep(0.5)
        return blocked_in_open()
    except (OSError, IndexError):
        return False


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_show_into_a_fifo_nobody_reads_stops_with_a_sentence(tmp_path, sig, code):
    fifo = tmp_path / "board.svg"
    os.mkfifo(fifo)
    child = Child(["show", "2222/2222 A", "--game", "diffusion", "--svg", fifo], str(tmp_path))
    child.wait_for(lambda: waiting_in_open(child.proc.pid), "waited for the FIFO's reader")
    got, _, err = child.stop(sig)
    said(got, err, code, "terminated")
    assert listing(tmp_path) == ["board.svg"]
