"""`export --format parquet` and the compiled rows of CSV and JSON lines: every row of a small
board of each game equal to the rows the Python reference writes (format_position and the csv
module), read back with pyarrow and DuckDB; the columns decode to the text; the metadata names
the table; a killed export leaves no folder that reads as complete, and resumes; what is
refused; the docs' DuckDB queries and pandas read."""
import csv
import hashlib
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from sowsolve.tables import export as exports
from sowsolve.tables.format import dump_json
from sowsolve.tables.parquet import MANIFEST, export_parquet
from sowsolve.tables.store import open_table

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOWSOLVE = [sys.executable, "-c", "from sowsolve.cli.entry import main; main()"]
BOARDS = {"diffusion-2x4-k1": ("diffusion", {"cols": 4, "stones": 1}, None),
          "diffusion-v2-2x3-k2": ("diffusion-v2", {"cols": 3, "stones": 2}, None),
          "overflow-3x3": ("overflow", {"size": "3x3"}, None),              # keyed
          "overflow-3x4-d6": ("overflow", {"size": "3x4"}, 6),               # dense endgame
          "zigzag-2x4-k1": ("zigzag", {"cols": 4, "stones": 1}, None),
          "zigzag-2x2-k3": ("zigzag", {"cols": 2, "stones": 3}, None)}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tables")
    made = {}
    for label, (name, board, max_stones) in BOARDS.items():
        path = folder / f"{label}.sqlite"
        import sowsolve
        sowsolve.solve(name, table=str(path), threads=2, max_stones=max_stones, **board)
        made[label] = str(path)
    return made


def reference_rows(table, every_orientation=False) -> list[tuple]:
    """The rows as the Python reference writes them: each stored position's images (or
    orientations), format_position, the value kind's columns, the csv module's text."""
    game, rows = table.game, []
    for tier in table.tiers:
        for first, records in table.iter_blocks(tier):
            positions = table.stored_positions(tier, first, first + records.size)
            values, rems = game.value_kind.columns(records)
            for position, value, rem in zip(positions, values, rems):
                images = game.orientations(position) if every_orientation else game.images(position)
                rows += [(game.format_position(image), str(value), "" if rem is None else str(rem))
                         for image in images]
    return rows


#: the boards of the equality tests: the largest (7 x 10^5 rows) only in the slow run
LABELS = [pytest.param(label, marks=pytest.mark.slow) if label == "zigzag-2x4-k1" else label
          for label in BOARDS]


@pytest.mark.parametrize("label", LABELS)
def test_compiled_csv_and_jsonl_equal_the_reference(tables, tmp_path, label):
    with open_table(tables[label]) as table:
        for every in (False, True):
            expected = reference_rows(table, every)
            exports.export(table, str(tmp_path / "t.csv"), "csv", None, every_orientation=every)
            with open(tmp_path / "t.csv", newline="") as f:
                got = [tuple(row) for row in csv.reader(f)]
            assert got[0] == ["position", "value", "remoteness"] or got[0] == ("position", "value", "remoteness")
            assert got[1:] == expected
            exports.export(table, str(tmp_path / "t.jsonl"), "jsonl", None, every_orientation=every)
            lines = (tmp_path / "t.jsonl").read_text().splitlines()
            assert [json.loads(line) for line in lines] == [
                {"position": p, "value": (v if not re.fullmatch(r"-?\d+", v) else int(v)),
                 "remoteness": None if r == "" else int(r)} for p, v, r in expected]


def rebuilt_text(row: dict, meta: dict) -> str:
    """A row's text from its columns, as the metadata says the text is made of them."""
    counts = [row[name] for name in meta["counts"]]
    ranks, at = [], 0
    for width in meta["ranks"]:
        ranks.append(counts[at:at + width])
        at += width
    wide = any(c >= 10 for c in counts)
    grid = "/".join((",".join if wide else "".join)(str(c) for c in rank) for rank in ranks)
    fields = [row[name] if row[name] is not None else "-" for name, _ in meta["fields"]]
    return " ".join([grid] + fields)


@pytest.mark.parametrize("label", LABELS)
def test_parquet_rows_equal_the_csv_and_decode_to_the_text(tables, tmp_path, label):
    with open_table(tables[label]) as table:
        every = label.startswith("overflow-3x3")
        expected = sorted(reference_rows(table, every))
        rows = export_parquet(table, str(tmp_path / "out"), every_orientation=every, threads=2)
        identity = hashlib.sha256(dump_json(table.meta) if isinstance(dump_json(table.meta), bytes)
                                  else dump_json(table.meta).encode()).hexdigest()
        tier_digests = {}
        for tier in table.tiers:
            digest = hashlib.sha256()
            for first, records in table.iter_blocks(tier):
                digest.update(np.ascontiguousarray(records).tobytes())
                if table.meta.get("indexing") not in (None, "dense"):
                    digest.update(np.ascontiguousarray(
                        table.block(tier, first // table.block_records, keys=True)).tobytes())
            tier_digests[tier] = digest.hexdigest()
    assert rows == len(expected)
    files = sorted((tmp_path / "out").glob("*.parquet"))
    got = []
    for path in files:
        meta = json.loads(pq.read_metadata(path).metadata[b"sowsolve"])
        assert meta["table_file"] == f"{label}.sqlite" and meta["table_metadata_sha256"] == identity
        assert meta["records_sha256"] == tier_digests[meta["tier"]]
        for row in pq.read_table(path).to_pylist():
            assert rebuilt_text(row, meta) == row["position"]
            assert row["stones"] == sum(row[name] for name in meta["counts"])
            value = str(row["value"])
            got.append((row["position"], value, "" if row["remoteness"] is None else str(row["remoteness"])))
    assert sorted(got) == expected
    # DuckDB reads the folder as one table, the same rows
    through_duckdb = duckdb.sql(f"SELECT position, CAST(value AS VARCHAR), remoteness "
                                f"FROM read_parquet('{tmp_path / 'out'}/*.parquet')").fetchall()
    assert sorted((p, v, "" if r is None else str(r)) for p, v, r in through_duckdb) == expected
    manifest = json.loads((tmp_path / "out" / MANIFEST).read_text())
    assert manifest["rows"] == rows and set(manifest["files"]) == {p.name for p in files}


def test_the_docs_queries_and_pandas_read(tables, tmp_path):
    """docs/export.md's DuckDB queries and pandas read, on the export it names, against counts
    taken from the table itself."""
    import pandas as pd
    page = (ROOT / "docs" / "export.md").read_text()
    sql = page.split("```sql\n", 1)[1].split("```", 1)[0]
    python = page.split("```python\n", 1)[1].split("```", 1)[0]
    run = subprocess.run(SOWSOLVE + ["export", "--table", tables["diffusion-2x4-k1"], "--format",
                                     "parquet", "--out", "d41", "--no-text"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    with open_table(tables["diffusion-2x4-k1"]) as table:
        rows = reference_rows(table)
        game = table.game
    con = duckdb.connect()
    os.chdir(tmp_path)
    statements = [s.strip() for s in sql.split(";") if s.strip()]
    wins_6 = con.sql(statements[0]).fetchall()[0][0]
    assert wins_6 == sum(1 for p, v, _ in rows if v == "win"
                         and sum(game.parse_position(p).board) == 6)
    longest = con.sql(statements[1]).fetchall()
    assert longest[0][-1] == max(int(r) for _, v, r in rows if v == "win")
    by_f = {(f, v): n for f, v, n in con.sql(statements[2]).fetchall()}
    f_index = [m for m in range(game.npits) if game.pit_names[m] == "F"][0]
    expected = {}
    for p, v, _ in rows:
        key = (game.parse_position(p).board[f_index], v)
        expected[key] = expected.get(key, 0) + 1
    assert by_f == expected
    rebuilt = con.sql(statements[3]).fetchall()
    assert sorted((p, v, str(r)) for p, v, r in rebuilt) == sorted(rows)
    namespace: dict = {}
    exec(compile(python, "docs/export.md", "exec"), namespace)
    frame = namespace["frame"]
    assert isinstance(frame, pd.DataFrame) and len(frame) == len(rows)
    counts = frame.groupby("stones", observed=True)["value"].value_counts()
    assert counts[(6, "win")] == wins_6


def test_a_killed_export_leaves_no_folder_and_resumes(tables, tmp_path):
    """SIGKILL while tiers are being written: no DIR (the hidden folder only); the same command
    then finishes, keeping the tiers already written, and the rows are all there."""
    command = SOWSOLVE + ["export", "--table", tables["zigzag-2x4-k1"], "--format", "parquet",
                          "--out", "z", "--threads", "1"]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    partial = tmp_path / ".z.sowsolve-partial"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(partial.glob("tier-*.parquet")):
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert not (tmp_path / "z").exists()
    kept = {p.name: p.stat().st_mtime_ns for p in partial.glob("tier-*.parquet")}
    assert kept
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert not partial.exists()
    for name, mtime in kept.items():             # resumed: what was written stays
        assert (tmp_path / "z" / name).stat().st_mtime_ns == mtime
    with open_table(tables["zigzag-2x4-k1"]) as table:
        expected = len(reference_rows(table))
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{tmp_path / 'z'}/*.parquet')").fetchall()[0][0] == expected


def test_what_is_refused(tables, tmp_path, monkeypatch):
    """Each refusal one sentence on standard error, exit 2 (the command run in this process,
    as `sowsolve export ...` runs it: 14 processes would take seconds to start)."""
    from typer.testing import CliRunner

    from sowsolve.cli.app import app
    table = tables["overflow-3x3"]
    monkeypatch.chdir(tmp_path)

    def export(*args):
        done = CliRunner().invoke(app, ["export", "--table", table, "--format", "parquet", *args])
        done.returncode = done.exit_code
        return done
    assert export("--out", "o").returncode == 0
    again = export("--out", "o")                                  # a previous export: --force
    assert again.returncode == 2 and "--force" in again.stderr and again.stderr.count("\n") == 1
    before = sorted(p.name for p in (tmp_path / "o").iterdir())
    assert export("--out", "o", "--force").returncode == 0
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == before
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    for args in (["--out", "mine"], ["--out", "mine", "--force"]):
        run = export(*args)
        assert run.returncode == 2 and "other things" in run.stderr
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    inside = export("--out", "o/sub")                   # a reader of o would take it for its own
    assert inside.returncode == 2 and "inside a previous export" in inside.stderr
    assert not (tmp_path / "o" / "sub").exists()
    (tmp_path / "o" / "extra.parquet").write_text("not ours")       # no longer only an export
    assert export("--out", "o", "--force").returncode == 2
    (tmp_path / "file").write_text("x")
    for args, words in ((["--out", "file"], "no folder"), (["--out", "-"], "folder"),
                        (["--out", "nowhere/o"], "does not exist"),
                        (["--out", "p", "--threads", "-1"], "--threads")):
        run = export(*args)
        assert run.returncode == 2 and words in run.stderr and run.stderr.count("\n") == 1, (args, run.stderr)
    run = CliRunner().invoke(app, ["export", "--table", table, "--format", "csv", "--out", "x.csv",
                                   "--no-text"])
    assert run.exit_code == 2 and "--format parquet" in run.stderr


def test_without_pyarrow_one_sentence(tables, tmp_path):
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text("import sys\nsys.modules['pyarrow'] = None\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    run = subprocess.run(SOWSOLVE + ["export", "--table", tables["overflow-3x3"], "--format",
                                     "parquet", "--out", "o"], cwd=tmp_path, capture_output=True,
                         text=True, env=env)
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert "pip install 'sowsolve[parquet]'" in run.stderr
    assert not (tmp_path / "o").exists()


def test_an_export_that_fails_leaves_nothing(tables, tmp_path):
    """A damaged block (its checksum fails) stops the export with one sentence, exit 1: no
    folder, and no hidden folder either (nothing to resume)."""
    import shutil
    import sqlite3
    damaged = tmp_path / "damaged.sqlite"
    shutil.copy(tables["zigzag-2x2-k3"], damaged)
    with sqlite3.connect(damaged) as db:
        key, blob = db.execute("select key, value from sowsolve where key like 'block%' "
                               "order by length(value) desc limit 1").fetchone()
        blob = bytearray(blob)
        blob[len(blob) // 2] ^= 0xFF
        db.execute("update sowsolve set value = ? where key = ?", (bytes(blob), key))
    run = subprocess.run(SOWSOLVE + ["export", "--table", str(damaged), "--format", "parquet",
                                     "--out", "d"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 1 and run.stderr.count("\n") == 1 and "corrupt" in run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged.sqlite"]
