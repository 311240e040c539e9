"""Tables found by default: the tables directory ($SOWSOLVE_TABLES), `sowsolve tables`, and
which table answers a position or a game."""
import csv
import hashlib
import json
import os
import shutil

import pytest
from typer.testing import CliRunner

from conftest import solve_to
from sowsolve.cli.app import app
from sowsolve.tables.store import open_table

runner = CliRunner()

# README figures: positions stored by each small table
POSITIONS = {"diffusion-cols4-stones2.sqlite": 399_266, "zigzag-cols2-stones2.sqlite": 2_970,
             "overflow-size3x3.sqlite": 6_742}


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def tables_dir(tmp_path_factory, table_2x4_k2):
    directory = tmp_path_factory.mktemp("tables") / "sowsolve-tables"
    directory.mkdir()
    shutil.copy(table_2x4_k2, directory / "diffusion-cols4-stones2.sqlite")
    solve_to(directory / "zigzag-cols2-stones2.sqlite", "zigzag", cols=2, stones=2)
    solve_to(directory / "overflow-size3x3.sqlite", "overflow", size="3x3")
    return directory


@pytest.fixture
def in_tables(tables_dir, monkeypatch):
    monkeypatch.setenv("SOWSOLVE_TABLES", str(tables_dir))
    return tables_dir


def snapshot(directory):
    """Every file under the directory: name, size, mtime and content hash."""
    found = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.stat(path)
            digest = hashlib.sha256(open(path, "rb").read()).hexdigest() if os.path.isfile(path) else None
            found[os.path.relpath(path, directory)] = (st.st_size, st.st_mtime_ns, digest)
    return found


def one_sentence(result, code=2):
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sowsolve: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("text, file, board, description", [
    # a 2x4 text is on the smallest 2x4 board whose start holds it; the table of 2 stones a
    # pit holds every position of up to 16 stones, and answers for the 1-stone board too
    ("2222/2222 A", "diffusion-cols4-stones2.sqlite", "Diffusion v1, 2x4, 2 stones per pit",
     "Diffusion v1, 2x4, 2 stones per pit"),
    ("1201/0110 B", "diffusion-cols4-stones2.sqlite", "Diffusion v1, 2x4, 1 stone per pit",
     "Diffusion v1, 2x4, 2 stones per pit"),
    # nobody has captured: all 8 seeds of a 2-seed start, which no standard 5-seed start has
    ("22/22 p - -", "zigzag-cols2-stones2.sqlite", "Zig Zag, 2x2, 2 seeds per pit",
     "Zig Zag, 2x2, 2 seeds per pit"),
    ("111/111/111 L", "overflow-size3x3.sqlite", "Overflow, 3x3", "Overflow, 3x3"),
])
def test_query_finds_the_table_of_the_position(in_tables, text, file, board, description):
    before = snapshot(in_tables)
    result = run("query", text, "--json")
    assert result.exit_code == 0, result.output
    q = json.loads(result.stdout)
    assert q["table"] == str(in_tables / file)
    assert q["description"] == board
    assert q.get("table_description", board) == description
    with open_table(in_tables / file) as table:
        value = table.probe(text)
        assert q["game"] == table.meta["game"]
        if board == description:
            assert q["parameters"] == table.meta["parameters"]
    assert (q["value"], q["remoteness"]) == (value.value, value.remoteness)
    text_out = run("query", text)
    lines = text_out.stdout.splitlines()
    assert text_out.exit_code == 0 and board in lines[0]
    assert board == description or (lines[1].startswith("table ") and description in lines[1])
    assert snapshot(in_tables) == before


def test_query_with_no_table_for_the_position(in_tables):
    before = snapshot(in_tables)
    line = one_sentence(run("query", "222/222 A"))
    assert str(in_tables) in line and "2x3" in line and "Diffusion" in line
    assert "--table" in line
    line = one_sentence(run("query", "1111/1111/1111 L"))
    assert "Overflow table of 3x4" in line and "sowsolve solve overflow --size 3x4" in line
    assert snapshot(in_tables) == before


def test_query_when_several_tables_fit(in_tables, tmp_path, monkeypatch):
    twin = tmp_path / "twin"
    shutil.copytree(in_tables, twin)
    shutil.copy(twin / "diffusion-cols4-stones2.sqlite", twin / "my-copy.sqlite")
    monkeypatch.setenv("SOWSOLVE_TABLES", str(twin))
    # both hold it: the same table answers whatever else the directory holds (the board's
    # own, finished, then by file name), and the answer names it
    answer = run("query", "2222/2222 A", "--json")
    assert answer.exit_code == 0, answer.output
    assert json.loads(answer.stdout)["table"] == str(twin / "diffusion-cols4-stones2.sqlite")
    os.rename(twin / "diffusion-cols4-stones2.sqlite", twin / "z-last.sqlite")
    assert json.loads(run("query", "2222/2222 A", "--json").stdout)["table"] == str(twin / "my-copy.sqlite")
    # the other games' positions still find their one table
    assert run("query", "22/22 p - -").exit_code == 0


def test_query_without_any_tables_directory(tmp_path, monkeypatch):
    missing = tmp_path / "nowhere"
    monkeypatch.setenv("SOWSOLVE_TABLES", str(missing))
    line = one_sentence(run("query", "2222/2222 A"))
    assert str(missing) in line and "does not exist" in line
    assert not missing.exists()


@pytest.mark.parametrize("text, table, table_game, looks_like", [
    ("2222/2222 A", "zigzag-cols2-stones2.sqlite", "Zig Zag", "Diffusion"),
    ("22/22 p - -", "diffusion-cols4-stones2.sqlite", "Diffusion v1", "Zig Zag"),
    ("111/111/111 L", "diffusion-cols4-stones2.sqlite", "Diffusion v1", "Overflow"),
    ("1111/1111 A", "overflow-size3x3.sqlite", "Overflow", "Diffusion"),
])
def test_a_position_of_another_game_is_named(tables_dir, text, table, table_game, looks_like):
    line = one_sentence(run("query", text, "--table", tables_dir / table))
    article = "an" if table_game[0] in "AEIOU" else "a"
    assert line == f"sowsolve: this is {article} {table_game} table; that position looks like {looks_like}"


def test_a_bad_position_of_the_same_game_keeps_its_own_message(tables_dir):
    line = one_sentence(run("query", "22222/22222 A", "--table",
                            tables_dir / "diffusion-cols4-stones2.sqlite"))
    assert "5 pits" in line and "looks like" not in line


def test_info_and_check_find_the_table_of_a_game(in_tables):
    result = run("info", "zigzag", "--cols", 2, "--stones", 2, "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["table"] == str(in_tables / "zigzag-cols2-stones2.sqlite")
    assert info["positions_per_side"] == POSITIONS["zigzag-cols2-stones2.sqlite"]
    result = run("check", "diffusion", "--cols", 4, "--stones", 2, "--stored", "--samples", 5, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["table"] == str(in_tables / "diffusion-cols4-stones2.sqlite")
    assert report["positions_verified"] > 0
    # a GAME alone still checks the game's contract, not a table
    contract = run("check", "diffusion", "--cols", 4, "--stones", 2, "--samples", 5, "--json")
    assert contract.exit_code == 0 and "table" not in json.loads(contract.stdout)


def test_a_table_under_another_name_is_found_by_its_game(in_tables, tmp_path, monkeypatch):
    other = tmp_path / "renamed"
    other.mkdir()
    shutil.copy(in_tables / "overflow-size3x3.sqlite", other / "o.sqlite")
    monkeypatch.setenv("SOWSOLVE_TABLES", str(other))
    result = run("info", "overflow", "--size", "3x3", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["table"] == str(other / "o.sqlite")
    # the directory's only table needs no GAME at all
    result = run("info", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["table"] == str(other / "o.sqlite")
    assert run("check", "--stored", "--samples", 5).exit_code == 0


def test_read_commands_without_a_table_say_what_they_looked_for(in_tables):
    line = one_sentence(run("info", "diffusion", "--cols", 2, "--stones", 1))
    assert str(in_tables) in line and "diffusion-cols2-stones1.sqlite" in line
    assert "sowsolve solve diffusion --cols 2 --stones 1" in line
    line = one_sentence(run("info"))
    assert "holds 3 tables" in line
    line = one_sentence(run("info", "--cols", 4))
    assert "GAME" in line
    line = one_sentence(run("check"))
    assert "--stored" in line
    line = one_sentence(run("info", "diffusion", "--table", in_tables / "overflow-size3x3.sqlite"))
    assert "not both" in line


def test_tables_lists_tables_and_odd_files_without_changing_anything(in_tables, tmp_path, monkeypatch):
    directory = tmp_path / "mixed"
    shutil.copytree(in_tables, directory)
    (directory / "notes.txt").write_text("not a table\n")
    (directory / "fake.sqlite").write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    with open(directory / "zigzag-cols2-stones2.sqlite", "rb") as f:
        (directory / "truncated.sqlite").write_bytes(f.read(1500))
    (directory / "subdir").mkdir()
    monkeypatch.setenv("SOWSOLVE_TABLES", str(directory))
    before = snapshot(directory)
    result = run("tables", "--json")
    assert result.exit_code == 0, result.output
    listing = json.loads(result.stdout)
    assert snapshot(directory) == before
    by_file = {e["file"]: e for e in listing["tables"]}
    assert set(by_file) == set(POSITIONS) | {"notes.txt", "fake.sqlite", "truncated.sqlite"}
    for name, positions in POSITIONS.items():
        entry = by_file[name]
        assert entry["status"] == "table" and entry["finished"] is True
        assert entry["positions"] == positions
        assert entry["size_on_disk"] == os.path.getsize(directory / name)
    assert by_file["diffusion-cols4-stones2.sqlite"]["board"] == "2x4, 2 stones per pit"
    assert by_file["overflow-size3x3.sqlite"]["game"] == "overflow"
    for odd in ("notes.txt", "fake.sqlite", "truncated.sqlite"):
        assert by_file[odd]["status"] not in ("table", "unfinished") and by_file[odd]["problem"]
    text = run("tables")
    assert text.exit_code == 0 and snapshot(directory) == before
    lines = text.stdout.splitlines()
    row = next(line for line in lines if line.startswith("diffusion-cols4-stones2.sqlite"))
    assert "Diffusion v1" in row and "399,266" in row and "KB" in row and "yes" in row
    assert any(line.startswith("notes.txt") and "not a sowsolve table" in line for line in lines)


def test_tables_of_a_directory_without_tables(tmp_path, monkeypatch):
    (tmp_path / "readme.txt").write_text("hello\n")
    monkeypatch.setenv("SOWSOLVE_TABLES", str(tmp_path))
    result = run("tables")
    assert result.exit_code == 0, result.output
    assert any(line.startswith("readme.txt") for line in result.stdout.splitlines())
    line = one_sentence(run("query", "2222/2222 A"))
    assert "no table that sowsolve can read" in line and "1 other file" in line


def test_tables_of_a_missing_directory_creates_nothing(tmp_path, monkeypatch):
    missing = tmp_path / "nowhere"
    monkeypatch.setenv("SOWSOLVE_TABLES", str(missing))
    result = run("tables", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["tables"] == []
    assert "does not exist" in run("tables").stdout
    assert not missing.exists()


def test_export_finds_the_table_of_a_game(in_tables, tmp_path):
    out = tmp_path / "z.csv"
    result = run("export", "zigzag", "--cols", 2, "--stones", 2, "--format", "csv", "--out", out)
    assert result.exit_code == 0, result.output
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    # a row for each position: a stored record answers a position where P captured last and
    # the same turned half a turn; the 8 seeds of the start (6 x 165 positions) stand alone
    before_a_capture = 6 * 165
    assert len(rows) == 2 * (POSITIONS["zigzag-cols2-stones2.sqlite"] - before_a_capture) + before_a_capture
    line = one_sentence(run("export", "zigzag", "--cols", 4, "--stones", 1, "--format", "csv",
                            "--out", tmp_path / "y.csv"))
    assert "zigzag-cols4-stones1.sqlite" in line and not (tmp_path / "y.csv").exists()


@pytest.mark.slow
def test_what_is_named_like_a_table_but_is_no_file_is_listed_and_never_opened(tmp_path, monkeypatch):
    """A FIFO, a link to a device, a directory and a dangling link, each named like a table:
    listed with what is wrong with them (no FIFO is opened, so nothing waits for a writer);
    the table a command looks for being one of them says so."""
    import subprocess
    import sys
    os.mkfifo(tmp_path / "fifo.sqlite")
    os.symlink("/dev/zero", tmp_path / "zero.sqlite")
    (tmp_path / "dir.sqlite").mkdir()
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling.sqlite")
    os.mkfifo(tmp_path / "diffusion-cols4-stones1.sqlite")
    before = sorted(os.listdir(tmp_path))

    def sowsolve(*args):        # in a process of its own: a FIFO opened would hang it
        done = subprocess.run([sys.executable, "-c", "from sowsolve.cli.entry import main; main()",
                               *map(str, args)], capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, SOWSOLVE_TABLES=str(tmp_path)))
        return done.returncode, done.stdout, done.stderr

    code, out, err = sowsolve("tables", "--json")
    assert code == 0, err
    by_file = {e["file"]: e for e in json.loads(out)["tables"]}
    assert set(by_file) == {"fifo.sqlite", "zero.sqlite", "dir.sqlite", "dangling.sqlite",
                            "diffusion-cols4-stones1.sqlite"}
    for name, what in (("fifo.sqlite", "a FIFO"), ("zero.sqlite", "a device"),
                       ("dir.sqlite", "a directory"), ("dangling.sqlite", "to nowhere")):
        assert by_file[name]["status"] == "not a table", by_file[name]
        assert "is not a regular file" in by_file[name]["problem"] and what in by_file[name]["problem"]
    code, out, err = sowsolve("info", "diffusion", "--cols", 4, "--stones", 1)
    said = err.strip().splitlines()
    assert code == 2 and len(said) == 1 and "not a regular file" in said[0], said
    assert sorted(os.listdir(tmp_path)) == before


def test_tables_marks_an_endgame_table_with_its_limit(tmp_path):
    runner = CliRunner()
    assert runner.invoke(app, ["solve", "diffusion", "--cols", "4", "--stones", "1", "--max-stones",
                               "3", "--table", str(tmp_path / "e.sqlite")]).exit_code == 0
    solve_to(tmp_path / "w.sqlite", "diffusion", cols=2, stones=1)
    listed = runner.invoke(app, ["tables", "--dir", str(tmp_path), "--json"])
    limits = {e["file"]: e["max_stones"] for e in json.loads(listed.stdout)["tables"]}
    assert limits == {"e.sqlite": 3, "w.sqlite": None}
    text = runner.invoke(app, ["tables", "--dir", str(tmp_path)]).stdout
    assert "at most 3 on the board" in text and text.count("at most") == 1
