"""`sowsolve export`: valid CSV and JSON lines holding every stored position, --max-stones
counting what is on the board, and outputs that never destroy data."""
import csv
import io
import itertools
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time

import pytest
from typer.testing import CliRunner

from conftest import solve_to
from sowsolve.cli.app import app
from sowsolve.tables.export import TEMP_PREFIX
from sowsolve.tables.store import open_table

#: the whole module is left out of `pytest -m "not slow"` (processes, clusters, long solves)
pytestmark = pytest.mark.slow

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


# --- counts from the rule text (RULES.md), independent of the solver ------------------------

def diffusion_rows(cols: int, stones: int, max_stones: int | None = None) -> int:
    """Boards of 2*cols pits holding 0..5 stones each, 1 to 2*cols*stones stones in all (the
    empty board is no position), each with both sides to move."""
    top = 2 * cols * stones if max_stones is None else min(max_stones, 2 * cols * stones)
    return 2 * sum(1 for b in itertools.product(range(6), repeat=2 * cols) if 1 <= sum(b) <= top)


def zigzag_boards(cols: int, stones: int, max_seeds: int | None = None) -> list[tuple]:
    """Boards of 2*cols pits of any counts with at most the start's seeds (or max_seeds)."""
    top = 2 * cols * stones if max_seeds is None else min(max_seeds, 2 * cols * stones)
    return [b for b in itertools.product(range(top + 1), repeat=2 * cols) if sum(b) <= top]


def zigzag_rows(boards: list, total: int) -> int:
    """Each board with either side to move, ko none or one of the mover's two centre pits, and
    the last capturers it can have: P or p with fewer seeds than the start's `total`, nobody
    with all of them (seeds leave the board only by captures)."""
    return sum(2 * 3 * (1 if sum(b) == total else 2) for b in boards)


def read_csv(text: str) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == ["position", "value", "remoteness"]
    assert all(len(row) == 3 for row in rows[1:])
    return rows[1:]


def read_jsonl(text: str) -> list[list]:
    rows = []
    for line in text.splitlines():
        obj = json.loads(line)
        assert set(obj) == {"position", "value", "remoteness"}
        rows.append([obj["position"], obj["value"], obj["remoteness"]])
    return rows


def assert_rows_probe(table_path, rows, fmt: str) -> None:
    """Every row's position parses with the game's parser and probes to the row's value."""
    with open_table(table_path) as table:
        game = table.game
        for text, value, rem in rows:
            probed = table.probe(game.parse_position(text))
            if fmt == "csv":
                value = type(probed[0])(value)      # CSV holds text: margins read as numbers
                rem = None if rem == "" else int(rem)
            assert (value, rem) == tuple(probed), text


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    directory = tmp_path_factory.mktemp("export-tables")
    paths = {}
    for name, game, kwargs in [("zigzag", "zigzag", {"cols": 2, "stones": 3}),
                               ("diffusion", "diffusion", {"cols": 4, "stones": 1}),
                               ("overflow", "overflow", {"size": "3x3"})]:
        paths[name] = directory / f"{name}.sqlite"
        solve_to(paths[name], game, **kwargs)
    return paths


# --- the rows ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("name", ["zigzag", "diffusion", "overflow"])
def test_every_export_reads_back_whole(tmp_path, tables, name, fmt):
    out = tmp_path / f"e.{fmt}"
    result = run("export", "--table", tables[name], "--format", fmt, "--out", out)
    assert result.exit_code == 0, result.output
    text = out.read_text()
    rows = read_csv(text) if fmt == "csv" else read_jsonl(text)
    if name == "zigzag":
        boards = zigzag_boards(2, 3)
        expected = zigzag_rows(boards, 12)
        assert expected == 19_110
        # a count of 10 or more writes the board with commas: those positions are quoted
        with_commas = zigzag_rows([b for b in boards if max(b) >= 10], 12)
        assert with_commas == 480 and sum("," in row[0] for row in rows) == with_commas
        if fmt == "csv":
            assert text.count('"') == 2 * with_commas
    elif name == "diffusion":
        expected = diffusion_rows(4, 1)
    else:       # Overflow: what its search reached, one position per symmetry class
        with open_table(tables[name]) as table:
            expected = sum(table.tier_size(t) for t in table.tiers)
    assert len(rows) == expected
    assert len({row[0] for row in rows}) == len(rows)
    assert_rows_probe(tables[name], rows, fmt)


def test_pandas_reads_the_csv(tmp_path, tables):
    pandas = pytest.importorskip("pandas")
    out = tmp_path / "z.csv"
    assert run("export", "--table", tables["zigzag"], "--format", "csv", "--out", out).exit_code == 0
    frame = pandas.read_csv(out, dtype={"position": str})
    assert list(frame.columns) == ["position", "value", "remoteness"]
    assert len(frame) == zigzag_rows(zigzag_boards(2, 3), 12)
    assert frame["position"].str.contains(",").sum() == zigzag_rows(
        [b for b in zigzag_boards(2, 3) if max(b) >= 10], 12)


@pytest.mark.parametrize("max_seeds", [1, 4, 6, 11])
def test_max_stones_counts_zigzag_seeds(tmp_path, tables, max_seeds):
    out = tmp_path / "z.csv"
    result = run("export", "--table", tables["zigzag"], "--format", "csv", "--out", out,
                 "--max-stones", max_seeds)
    assert result.exit_code == 0, result.output
    rows = read_csv(out.read_text())
    with open_table(tables["zigzag"]) as table:
        seeds = [sum(table.game.parse_position(row[0]).board) for row in rows]
    assert max(seeds) == max_seeds
    assert len(rows) == len(set(r[0] for r in rows)) == zigzag_rows(zigzag_boards(2, 3, max_seeds), 12)


def test_max_stones_counts_diffusion_stones(tmp_path, tables):
    out = tmp_path / "d.jsonl"
    assert run("export", "--table", tables["diffusion"], "--format", "jsonl", "--out", out,
               "--max-stones", 3).exit_code == 0
    rows = read_jsonl(out.read_text())
    assert len(rows) == diffusion_rows(4, 1, 3)
    assert max(sum(int(c) for c in row[0] if c.isdigit()) for row in rows) == 3


def test_out_dash_streams_to_stdout(tmp_path, monkeypatch, tables):
    monkeypatch.chdir(tmp_path)
    result = run("export", "--table", tables["diffusion"], "--format", "csv", "--out", "-")
    assert result.exit_code == 0, result.output
    assert len(read_csv(result.stdout)) == diffusion_rows(4, 1)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("path", ["/dev/fd/1", "/proc/self/fd/1"])
def test_a_path_naming_stdout_streams_to_it(tmp_path, tables, path):
    proc = subprocess.run([sys.executable, "-c", "from sowsolve.cli.app import main; main()",
                           "export", "--table", str(tables["diffusion"]), "--format", "csv",
                           "--out", path, "--max-stones", "4"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len(read_csv(proc.stdout)) == diffusion_rows(4, 1, 4)


# --- outputs never destroy data -----------------------------------------------------------------

@pytest.fixture
def table(tmp_path, tables):
    path = tmp_path / "t.sqlite"
    shutil.copy(tables["diffusion"], path)
    return path


def fingerprint(path):
    st = os.stat(path)
    return path.read_bytes(), st.st_mtime_ns, st.st_ino


def leftovers(directory) -> list[str]:
    return [n for n in os.listdir(directory) if n.startswith(TEMP_PREFIX)]


@pytest.mark.parametrize("spelling", ["same", "relative", "dotted", "hard link", "symlink",
                                      "journal"])
def test_out_naming_the_table_is_refused(tmp_path, monkeypatch, table, spelling):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    before = fingerprint(table)
    out = {"same": str(table), "relative": "t.sqlite", "dotted": "./sub/../t.sqlite",
           "hard link": "hard.sqlite", "symlink": "soft.sqlite", "journal": "t.sqlite-journal"}[spelling]
    if spelling == "hard link":
        os.link(table, out)
    if spelling == "symlink":
        os.symlink("t.sqlite", out)
    result = run("export", "--table", table, "--format", "csv", "--out", out)
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and out in result.stderr
    assert "table being read" in result.stderr or "journal" in result.stderr
    assert fingerprint(table) == before
    if spelling == "symlink":
        assert os.path.islink(out) and os.readlink(out) == "t.sqlite"
    if spelling == "hard link":
        assert os.stat(out).st_nlink == 2 and os.path.samefile(out, table)
    assert sorted(os.listdir(tmp_path)) == sorted({"t.sqlite", "sub", out.split("/")[-1]}
                                                  - {"t.sqlite-journal"})


def null_device(path) -> bool:
    """A character device like /dev/null (major 1, minor 3) at `path`; False where not allowed."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError):
        return False
    try:
        with open(path, "w") as f:
            f.write("x")
    except OSError:         # a file system mounted nodev
        os.remove(path)
        return False
    return True


def test_a_character_device_is_written_through(tmp_path, table):
    node = tmp_path / "null"
    if not null_device(node):
        pytest.skip("cannot make a device node here (needs root and a file system without nodev)")
    result = run("export", "--table", table, "--format", "csv", "--out", node)
    assert result.exit_code == 0, result.output
    st = os.lstat(node)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    assert leftovers(tmp_path) == []
    # only now, with the private node unharmed: the machine's own /dev/null
    result = run("export", "--table", table, "--format", "jsonl", "--out", "/dev/null")
    assert result.exit_code == 0, result.output
    st = os.lstat("/dev/null")
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)


def test_a_fifo_is_written_through(tmp_path, table):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []

    def reader():
        with open(fifo) as f:
            received.append(f.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    result = run("export", "--table", table, "--format", "csv", "--out", fifo)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    thread.join(timeout=120)            # a guard against a hang, not a timing assertion
    assert received and len(read_csv(received[0])) == diffusion_rows(4, 1)
    assert sorted(os.listdir(tmp_path)) == ["pipe", "t.sqlite"]


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlink_stays_a_link_to_the_written_file(tmp_path, table, dangling):
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "rows.csv"
    if not dangling:
        target.write_text("old contents\n")
    link = tmp_path / "rows.csv"
    os.symlink("data/rows.csv", link)
    result = run("export", "--table", table, "--format", "csv", "--out", link)
    assert result.exit_code == 0, result.output
    assert os.path.islink(link) and os.readlink(link) == "data/rows.csv"
    assert stat.S_ISREG(os.lstat(target).st_mode)
    assert len(read_csv(target.read_text())) == diffusion_rows(4, 1)
    assert os.listdir(tmp_path / "data") == ["rows.csv"] and leftovers(tmp_path) == []


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)],
                         ids=["022", "077", "002"])
def test_a_new_file_gets_0666_minus_the_umask(tmp_path, table, umask, mode):
    out = tmp_path / "e.csv"
    old = os.umask(umask)
    try:
        result = run("export", "--table", table, "--format", "csv", "--out", out)
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(os.stat(out).st_mode) == mode


def test_a_replaced_file_keeps_its_mode(tmp_path, table):
    out = tmp_path / "e.csv"
    out.write_text("old\n")
    os.chmod(out, 0o640)
    result = run("export", "--table", table, "--format", "csv", "--out", out)
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o640
    assert len(read_csv(out.read_text())) == diffusion_rows(4, 1)
    assert sorted(os.listdir(tmp_path)) == ["e.csv", "t.sqlite"]


# --- killed exports ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def big_table(tmp_path_factory):
    """Diffusion 2x4 with 5 stones: 3,359,230 rows, seconds of export."""
    path = tmp_path_factory.mktemp("big") / "big.sqlite"
    solve_to(path, "diffusion", cols=4, stones=5)
    return path


def start_export(table, out, unnamed: bool, *extra):
    """The export in a process of its own, each block of rows held back 50 ms (the compiled
    rows take well under a second for the whole table: a kill would find it done)."""
    code = ("import sys, time; from sowsolve.tables import export, rows; "
            "made = rows.block_rows; "
            "rows.block_rows = lambda *a, **k: (time.sleep(0.05), made(*a, **k))[1]; "
            f"export.USE_O_TMPFILE = {unnamed}; from sowsolve.cli.app import main; main()")
    return subprocess.Popen([sys.executable, "-c", code, "export", "--table", str(table),
                             "--format", "csv", "--out", str(out), *map(str, extra)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_output_file(proc, directory) -> str:
    """Wait until the process holds a file open in `directory` (its temporary file)."""
    deadline = time.monotonic() + 120          # a guard against a hang only
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        try:
            for fd in os.listdir(f"/proc/{proc.pid}/fd"):
                with_link = os.readlink(f"/proc/{proc.pid}/fd/{fd}")
                if with_link.startswith(str(directory) + "/"):
                    return with_link
        except (FileNotFoundError, ProcessLookupError):
            pass
        time.sleep(0.01)
    raise AssertionError("the export never opened its output")


@pytest.mark.parametrize("unnamed", [True, False], ids=["O_TMPFILE", "named"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_killed_export_leaves_nothing_behind(tmp_path, big_table, signum, unnamed):
    out = tmp_path / "e.csv"
    proc = start_export(big_table, out, unnamed)
    held = wait_for_output_file(proc, tmp_path)
    assert ("(deleted)" in held) == unnamed
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=120)
    if signum == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM
        assert stderr.strip().splitlines()[-1] == "sowsolve: terminated"
        assert os.listdir(tmp_path) == []
        return
    assert proc.returncode == -signal.SIGKILL
    if unnamed:
        assert os.listdir(tmp_path) == []
        return
    # a named temporary file outlives SIGKILL: the next export into the directory removes it
    assert len(leftovers(tmp_path)) == 1 and not out.exists()
    other = tmp_path / "other.csv"
    again = start_export(big_table, other, unnamed, "--max-stones", 2)
    assert again.wait(timeout=120) == 0, again.stderr.read()
    assert os.listdir(tmp_path) == ["other.csv"]


def test_a_running_export_keeps_its_temporary_file(tmp_path, big_table):
    """The clean-up of leftovers never takes the file of an export still running."""
    slow = start_export(big_table, tmp_path / "slow.csv", False)
    try:
        wait_for_output_file(slow, tmp_path)
        quick = start_export(big_table, tmp_path / "quick.csv", False, "--max-stones", 2)
        assert quick.wait(timeout=120) == 0, quick.stderr.read()
        assert len(leftovers(tmp_path)) == 1
    finally:
        slow.send_signal(signal.SIGTERM)
        slow.communicate(timeout=120)
    assert sorted(os.listdir(tmp_path)) == ["quick.csv"]


# --- errors name the user's path and create nothing -------------------------------------------

def assert_one_sentence_naming(result, out, code: int):
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sowsolve: ") and str(out) in lines[0], lines
    assert TEMP_PREFIX not in result.stderr and "Traceback" not in result.output


def test_out_in_a_missing_directory(tmp_path, table):
    out = tmp_path / "missing" / "e.csv"
    assert_one_sentence_naming(run("export", "--table", table, "--format", "csv", "--out", out),
                               out, 2)
    assert sorted(os.listdir(tmp_path)) == ["t.sqlite"]


def test_out_under_a_regular_file(tmp_path, table):
    (tmp_path / "file.txt").write_text("x")
    out = tmp_path / "file.txt" / "e.csv"
    assert_one_sentence_naming(run("export", "--table", table, "--format", "csv", "--out", out),
                               out, 2)
    assert sorted(os.listdir(tmp_path)) == ["file.txt", "t.sqlite"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_out_in_a_read_only_directory(tmp_path, table):
    directory = tmp_path / "ro"
    directory.mkdir()
    directory.chmod(0o555)
    try:
        out = directory / "e.csv"
        assert_one_sentence_naming(run("export", "--table", table, "--format", "csv", "--out", out),
                                   out, 1)
        assert os.listdir(directory) == []
    finally:
        directory.chmod(0o755)


def test_a_full_disk(tmp_path, table):
    directory = tmp_path / "full"
    directory.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(directory)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        out = directory / "e.csv"
        result = run("export", "--table", table, "--format", "csv", "--out", out)
        assert_one_sentence_naming(result, out, 1)
        assert "space" in result.stderr
        assert os.listdir(directory) == []
    finally:
        subprocess.run(["umount", str(directory)], check=True)


def corrupt_a_late_block(path) -> None:
    with sqlite3.connect(path) as db:
        key, blob = db.execute("SELECT key, value FROM sowsolve WHERE key LIKE 'block/%' "
                               "ORDER BY length(key) DESC, key DESC LIMIT 1").fetchone()
        damaged = bytearray(blob)
        damaged[len(blob) // 2] ^= 0x10
        db.execute("UPDATE sowsolve SET value = ? WHERE key = ?", (bytes(damaged), key))


@pytest.mark.parametrize("case", ["missing table", "foreign file", "corrupt block",
                                  "bad --max-stones", "bad --format", "out is the table"])
@pytest.mark.parametrize("existing", [False, True], ids=["new", "existing"])
def test_a_failing_export_creates_and_changes_nothing(tmp_path, table, case, existing):
    out = tmp_path / "e.csv"
    if existing:
        out.write_text("keep me\n")
    args = {"table": table, "format": "csv", "out": out}
    extra = []
    if case == "missing table":
        args["table"] = tmp_path / "none.sqlite"
    elif case == "foreign file":
        args["table"] = tmp_path / "foreign.sqlite"
        args["table"].write_bytes(b"not a table" * 100)
    elif case == "corrupt block":
        corrupt_a_late_block(table)
    elif case == "bad --max-stones":
        extra = ["--max-stones", -1]
    elif case == "bad --format":
        args["format"] = "xml"
    else:
        args["out"] = table
    listing = sorted(os.listdir(tmp_path))
    result = run("export", "--table", args["table"], "--format", args["format"],
                 "--out", args["out"], *extra)
    assert result.exit_code in (1, 2), result.output
    assert "Traceback" not in result.output
    assert sorted(os.listdir(tmp_path)) == listing
    assert out.read_text() == "keep me\n" if existing else not out.exists()
