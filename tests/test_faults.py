"""Fault injection: poisoned and corrupted tables, solves killed mid-way, hostile input,
readers beside a running solve."""
import os
import pickle
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sowsolve.cli.app import app
from sowsolve.solver.errors import BadPosition
from sowsolve.solver.games import make_game
from sowsolve.tables.format import CorruptTable, ForeignTable, decode_block, identity
from sowsolve.tables.store import open_table

#: the whole module is left out of `pytest -m "not slow"` (processes, clusters, long solves)
pytestmark = pytest.mark.slow

runner = CliRunner()
IDENTITY_2X4_K2 = identity("diffusion", {"cols": 4, "stones": 2})   # table_2x4_k2's


def cli(*args):
    return runner.invoke(app, [str(a) for a in args])


class Payload:
    """Unpickling this would create the file `pwned` in the working directory."""

    def __reduce__(self):
        return (os.system, ("touch pwned",))


def poison(path, keys_like: str, value: bytes) -> int:
    with sqlite3.connect(path) as db:
        changed = db.execute("UPDATE sowsolve SET value = ? WHERE key LIKE ?", (value, keys_like)).rowcount
    return changed


def read_commands(table, out):
    return {
        "query": ["query", "2222/2222 A", "--table", table],
        "info": ["info", "--table", table],
        "export": ["export", "--table", table, "--format", "csv", "--out", out],
        "check": ["check", "--table", table],
    }


POISONS = {
    "pickle": pickle.dumps(Payload()),
    "arbitrary bytes": bytes(range(256)) * 3,
    "empty": b"",
}


@pytest.mark.parametrize("poison_name", POISONS)
@pytest.mark.parametrize("keys_like", ["meta", "tier/%", "block/%"])
def test_poisoned_values_are_refused_by_every_reader(tmp_path, monkeypatch, table_2x4_k2,
                                                      poison_name, keys_like):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "t.sqlite"
    shutil.copy(table_2x4_k2, path)
    assert poison(path, keys_like, POISONS[poison_name]) > 0
    out = tmp_path / "out.csv"
    for name, args in read_commands(path, out).items():
        if keys_like == "tier/%" and name in ("query", "export"):
            continue            # these never read tier summaries
        result = cli(*args)
        assert result.exit_code in (1, 2), (name, result.output)
        assert "Traceback" not in result.output, (name, result.output)
        assert len(result.stderr.strip().splitlines()) == 1 and str(path) in result.stderr, \
            (name, result.stderr)
        assert not out.exists()
    with pytest.raises((ForeignTable, CorruptTable)):
        with open_table(path) as table:
            table.probe("2222/2222 A")
            table.info if keys_like != "tier/%" else [table.tier_info(t) for t in table.tiers]
    assert not (tmp_path / "pwned").exists()


def test_every_flipped_byte_of_a_block_is_reported(table_2x4_k2):
    with sqlite3.connect(table_2x4_k2) as db:
        (blob,) = db.execute("SELECT value FROM sowsolve WHERE key = 'block/3/0'").fetchone()
    records = decode_block(blob, 3, 0, 120, context=IDENTITY_2X4_K2)
    assert records.size == 120
    for offset in range(len(blob)):
        for bit in (0x01, 0x80):
            corrupt = bytearray(blob)
            corrupt[offset] ^= bit
            with pytest.raises(CorruptTable):
                decode_block(bytes(corrupt), 3, 0, 120, context=IDENTITY_2X4_K2)


def test_check_reports_a_corrupt_block(tmp_path, table_2x4_k2):
    path = tmp_path / "t.sqlite"
    shutil.copy(table_2x4_k2, path)
    with sqlite3.connect(path) as db:
        (blob,) = db.execute("SELECT value FROM sowsolve WHERE key = 'block/12/0'").fetchone()
        corrupt = bytearray(blob)
        corrupt[len(blob) // 2] ^= 0x04
        db.execute("UPDATE sowsolve SET value = ? WHERE key = 'block/12/0'", (bytes(corrupt),))
    result = cli("check", "--table", path)
    assert result.exit_code == 1 and "block 0 of tier 12" in result.stderr


def test_check_reports_a_wrong_value(tmp_path, table_2x4_k2):
    """A value rewritten with a valid checksum is still caught by the children check."""
    from sowsolve.tables.format import encode_block
    path = tmp_path / "t.sqlite"
    shutil.copy(table_2x4_k2, path)
    with open_table(path) as table:
        records = table.tier_records(5).copy()
    records[7] ^= 2 | (3 << 2)          # flip win/loss and change the remoteness
    with sqlite3.connect(path) as db:
        db.execute("UPDATE sowsolve SET value = ? WHERE key = 'block/5/0'",
                   (encode_block(5, 0, records, IDENTITY_2X4_K2),))
    result = cli("check", "--table", path, "--full")
    assert result.exit_code == 1 and "tier 5" in result.stdout


# --- crash safety -------------------------------------------------------------------------

SOLVE = ["solve", "diffusion-v2", "--cols", "5", "--stones", "2", "--threads", "1"]


def sowsolve(*args, **kwargs):
    return subprocess.Popen([sys.executable, "-c", "from sowsolve.cli.app import main; main()",
                             *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            **kwargs)


@pytest.fixture(scope="module")
def reference_v2_5x2(tmp_path_factory):
    path = tmp_path_factory.mktemp("ref") / "ref.sqlite"
    proc = sowsolve(*SOLVE, "--table", path)
    assert proc.wait(timeout=300) == 0, proc.stderr.read()
    return path


def test_a_solve_killed_at_any_moment_resumes_to_the_same_values(tmp_path, reference_v2_5x2):
    path = tmp_path / "t.sqlite"
    kills = 0
    for delay in (0.05, 0.4, 0.9, 1.5, 2.2):
        proc = sowsolve(*SOLVE, "--table", path)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=300)
        if path.exists():
            info = cli("info", "--table", path, "--json")
            assert info.exit_code == 0, info.output
    assert kills >= 3
    proc = sowsolve(*SOLVE, "--table", path)
    assert proc.wait(timeout=300) == 0, proc.stderr.read()
    with open_table(path) as resumed, open_table(reference_v2_5x2) as whole:
        assert resumed.finished
        for tier in whole.tiers:
            assert np.array_equal(resumed.tier_records(tier), whole.tier_records(tier)), tier
    leftovers = [p for p in os.listdir(tmp_path) if p.startswith(".sowsolve-new-")]
    assert len(leftovers) <= kills      # one at most from each kill between create and rename


def test_a_new_table_removes_the_leftovers_of_killed_creations(tmp_path):
    """A temporary file no process holds, older than a minute, is what a creation killed
    before its rename left: the next creation in that directory removes it; a fresh one (a
    creation in progress) or a locked one stays."""
    import fcntl
    from sowsolve.tables import store
    old, fresh, held = (tmp_path / f"{store.TEMP_PREFIX}{name}.sqlite" for name in ("a", "b", "c"))
    for path in (old, fresh, held):
        path.write_bytes(b"partial")
    ago = time.time() - 2 * store.STALE_SECONDS
    os.utime(old, (ago, ago))
    os.utime(held, (ago, ago))
    with open(held, "rb") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        proc = sowsolve("solve", "diffusion", "--cols", "2", "--stones", "1", "--table",
                        tmp_path / "t.sqlite")
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    assert not old.exists() and fresh.exists() and held.exists()


def test_readers_beside_a_running_solve(tmp_path, reference_v2_5x2):
    path = tmp_path / "t.sqlite"
    proc = sowsolve(*SOLVE, "--table", path)
    answers = set()
    with open_table(reference_v2_5x2) as reference:
        expected = reference.probe("22222/22222 A")
        while True:
            finished = proc.poll() is not None
            if path.exists():
                result = cli("query", "22222/22222 A", "--table", path, "--json")
                if result.exit_code == 0:
                    import json
                    q = json.loads(result.stdout)
                    assert (q["value"], q["remoteness"]) == tuple(expected)
                    answers.add("value")
                else:
                    assert result.exit_code == 1 and "not finished" in result.stderr, result.output
                    answers.add("not finished")
            if finished:
                break
            time.sleep(0.05)
    assert proc.returncode == 0
    assert "not finished" in answers


# --- hostile input ------------------------------------------------------------------------

GAME = make_game("diffusion", cols=4, stones=2)
POSITION_CHARS = st.sampled_from(list("0123452/ AB\t\n-x\u0664\u00a0\u0665\u2022\U0001F600"))


@settings(max_examples=3000, deadline=None)
@given(st.one_of(st.text(), st.text(POSITION_CHARS, max_size=14)))
def test_position_parser_fuzz(text):
    try:
        position = GAME.parse_position(text)
    except BadPosition as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        assert GAME.parse_position(GAME.format_position(position)) == position
        assert 0 < sum(position.board) <= GAME.max_stones


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(POSITION_CHARS, max_size=12))
def test_query_fuzz_exits_cleanly(table_2x4_k2, text):
    result = cli("query", text, "--table", table_2x4_k2)
    assert result.exit_code in (0, 2), result.output
    assert "Traceback" not in result.output
    if result.exit_code == 2:       # our sentence, or Click's usage line with one "Error:"
        errors = [line for line in result.stderr.splitlines() if line.startswith(("sowsolve:", "Error:"))]
        assert len(errors) == 1, result.stderr


@pytest.mark.parametrize("args", [
    ["solve", "diffusion", "--cols", "3", "--stones", "2"],
    ["solve", "diffusion", "--cols", "4", "--stones", "0"],
    ["solve", "diffusion", "--cols", "4", "--stones", "6"],
    ["solve", "othello", "--cols", "4", "--stones", "2"],
    ["solve", "diffusion", "--cols", "4", "--stones", "2", "--threads", "-1"],
])
def test_bad_parameters_write_nothing(tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    result = cli(*args, "--table", tmp_path / "x" / "t.sqlite")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert os.listdir(tmp_path) == []


def test_a_table_of_another_board_is_a_usage_error(table_2x4_k2):
    result = cli("query", "222/222 A", "--table", table_2x4_k2)
    assert result.exit_code == 2 and "this board has 4" in result.stderr


# --- --force, a table rebuilt while it is read, a search killed outright -------------------------

def _state(path):
    st = os.stat(path)
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    return st.st_ino, st.st_size, st.st_mtime_ns, head


@pytest.mark.parametrize("kind", ["notes", "database", "large"])
def test_force_empties_only_sowsolve_tables(tmp_path, kind):
    """`solve --force` over a file that is no sowsolve table (notes, a database of the user's
    without sowsolve's table, 10 GB of other bytes named like a table): one sentence, exit 2,
    the file as it was."""
    path = tmp_path / ("notes.txt" if kind == "notes" else "t.sqlite")
    if kind == "notes":
        path.write_text("notes\n")
    elif kind == "database":
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE mine (key TEXT PRIMARY KEY, value BLOB)")
            db.execute("INSERT INTO mine VALUES ('meta', x'00')")
        db.close()
    else:
        with open(path, "wb") as f:
            f.truncate(10 << 30)             # sparse: 10 GB of zeros, no disk used
    before = _state(path)
    result = cli("solve", "overflow", "--size", "3x3", "--table", path, "--force")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    said = result.stderr.strip().splitlines()
    assert len(said) == 1 and "is not a sowsolve table" in said[0] and "--force" in said[0], said
    assert _state(path) == before
    assert sorted(os.listdir(tmp_path)) == [path.name]


def test_force_still_rebuilds_an_unfinished_or_damaged_table(tmp_path, table_2x4_k2):
    path = tmp_path / "t.sqlite"
    shutil.copy(table_2x4_k2, path)
    assert poison(path, "block/%", b"") > 0                      # damaged blocks
    result = cli("solve", "diffusion", "--cols", 4, "--stones", 2, "--table", path, "--force")
    assert result.exit_code == 0, result.output
    with open_table(path) as table, open_table(table_2x4_k2) as reference:
        for tier in reference.tiers:
            assert np.array_equal(table.tier_records(tier), reference.tier_records(tier))


def test_a_table_rebuilt_while_it_is_read_changed_and_is_not_corrupt(tmp_path, table_2x4_k2):
    """A reader of a table that another process empties and solves again (`solve --force`)
    meanwhile is told the table changed (serve: HTTP 503), never that it is corrupt."""
    from starlette.testclient import TestClient
    from sowsolve.cli.web import create_app
    from sowsolve.tables.format import TableError
    from sowsolve.tables.store import TableWriter
    path = tmp_path / "t.sqlite"
    shutil.copy(table_2x4_k2, path)
    game = make_game("diffusion", cols=4, stones=2)
    reader = open_table(path)
    with TestClient(create_app([str(path)])) as client:
        assert client.get("/api/query", params={"position": "2222/2222 A"}).status_code == 200
        writer = TableWriter(str(path), game, force=True)       # emptied, being solved again
        try:
            with pytest.raises(TableError) as caught:
                reader.tier_records(reader.tiers[1])
            assert "changed while it was being read" in str(caught.value)
            assert type(caught.value).__name__ == "TableChanged"
            answer = client.get("/api/query", params={"position": "1000/0001 A"})
            assert answer.status_code == 503, answer.text
            assert "changed while it was being read" in answer.json()["error"]
            assert "corrupt" not in answer.text
        finally:
            writer.close()
            reader.close()


def test_an_overflow_table_left_by_a_killed_search_is_solved_again(tmp_path):
    """kill -9 early in an Overflow solve leaves the table it created, unfinished (nothing can
    remove it): reading it says so and how to solve it again, and that command does, to the
    records of a solve that was never stopped."""
    import re
    from sowsolve.tables.store import TableWriter
    path = tmp_path / "ov.sqlite"
    game = make_game("overflow", size="3x3")
    TableWriter(str(path), game).close()        # what a solve killed before its search ended leaves
    refused = cli("query", "111/111/111 L", "--table", path)
    assert refused.exit_code == 1, refused.output
    said = refused.stderr.strip()
    assert "not finished" in said and "0 of 0" not in said and "again" in said, said
    command = re.search(r"`sowsolve (solve [^`]*)`", said)
    assert command, said
    assert cli(*command[1].split()).exit_code == 0
    reference = tmp_path / "ref.sqlite"
    assert cli("solve", "overflow", "--size", "3x3", "--table", reference).exit_code == 0
    with open_table(path) as table, open_table(reference) as whole:
        assert table.tiers == whole.tiers
        for tier in whole.tiers:
            assert np.array_equal(table.tier_records(tier), whole.tier_records(tier))
