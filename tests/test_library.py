"""`import sowsolve`: the library the command line calls (api/__init__.py): a solve as a library
call gives the command's table, record for record; a directory of tables answers any position
the way `query` does; bad input is one sentence of a built-in error type; nothing printed."""
import json
import os

import numpy as np
import pytest
from typer.testing import CliRunner

import sowsolve
from sowsolve.cli.app import app


def records(table, tier):
    data = table.tier_data(tier)
    return np.asarray(getattr(data, "records", data))


def test_a_library_solve_is_the_commands_table(tmp_path, capsys):
    """The same board solved by `sowsolve solve` and by `sowsolve.solve`: every tier's records
    equal; the library printed nothing; a second call does nothing to the finished table."""
    by_command = tmp_path / "cli.sqlite"
    done = CliRunner().invoke(app, ["solve", "zigzag", "--cols", "4", "--stones", "1", "--table",
                                    str(by_command), "--json"])
    assert done.exit_code == 0, done.output
    result = sowsolve.solve("zigzag", cols=4, stones=1, table=str(tmp_path / "lib.sqlite"))
    assert capsys.readouterr() == ("", "")
    assert result.solved_now and result.positions > 0 and result.resumed_from is None
    assert json.loads(done.output[done.output.index("{"):])["start"] == result.summary["start"]
    with sowsolve.open_table(str(by_command)) as a, sowsolve.open_table(result.table) as b:
        assert a.solved_tiers == b.solved_tiers
        for tier in a.solved_tiers:
            assert np.array_equal(records(a, tier), records(b, tier)), tier
    again = sowsolve.solve(sowsolve.make_game("zigzag", cols=4, stones=1), table=result.table)
    assert not again.solved_now and again.summary["start"] == result.summary["start"]


def test_plan_writes_nothing_and_a_solve_too_large_is_refused(tmp_path):
    path = str(tmp_path / "standard.sqlite")
    plan = sowsolve.plan("zigzag", table=path)             # the standard board
    assert not plan.estimate["fits"] and plan.path == path and not os.path.exists(path)
    with pytest.raises(sowsolve.TooLarge) as refused:
        sowsolve.solve("zigzag", table=path)
    assert isinstance(refused.value, ValueError) and refused.value.estimate["positions"] > 10 ** 13
    assert not os.path.exists(path)
    with pytest.raises(ValueError, match="--max-stones must be 0 or more"):
        sowsolve.plan("zigzag", max_stones=-1, table=path)
    with pytest.raises(ValueError, match="not both"):
        sowsolve.solve(sowsolve.make_game("zigzag", cols=2, stones=1), cols=2, table=path)


def test_a_directory_of_tables_answers_any_position(tmp_path):
    """open_tables: each position finds its table (as `query` finds it), probe raises and
    get defaults; a damaged table is not hidden behind a default."""
    sowsolve.solve("diffusion", cols=4, stones=2, table=str(tmp_path / "d.sqlite"))
    sowsolve.solve("overflow", size="3x3", table=str(tmp_path / "o.sqlite"))
    with sowsolve.open_tables(str(tmp_path)) as tables, \
            sowsolve.open_table(str(tmp_path / "d.sqlite")) as d, \
            sowsolve.open_table(str(tmp_path / "o.sqlite")) as o:
        assert sorted(map(os.path.basename, tables.paths)) == ["d.sqlite", "o.sqlite"]
        assert tables.probe("2222/2222 A") == d.probe("2222/2222 A")
        assert tables.probe("111/111/111 L") == o.probe("111/111/111 L")
        assert tables.query("111/111/111 L")["moves"] == o.query("111/111/111 L")["moves"]
        assert "2222/2222 A" in tables and "2222/2222 Q" not in tables
        assert tables.get("555555/555555 p - -") is None and tables.get(None, 7) == 7
        with pytest.raises(sowsolve.TableMissing):             # a FileNotFoundError
            tables.probe("555555/555555 p - -")
        with pytest.raises(sowsolve.BadPosition, match="hello"):
            tables.probe("hello")
    with pytest.raises(ValueError, match="not a directory"):
        sowsolve.open_tables(str(tmp_path / "d.sqlite"))


def test_the_front_names_what_it_offers():
    assert set(sowsolve.__all__) <= set(dir(sowsolve))
    assert issubclass(sowsolve.NotInTable, LookupError) and issubclass(sowsolve.BadPosition, ValueError)


def test_prove_as_a_library_call(tmp_path):
    """The start of 3x3 Overflow is a loss for Light (solver/games/overflow/overflow.json: loss in 14);
    a budget too small says so without raising; a proof file is written and checks."""
    from sowsolve.solver import proof as proofs
    game = sowsolve.make_game("overflow", size="3x3")
    report = sowsolve.prove(game, memory=1 << 28, use_tables=False, proof=str(tmp_path / "p"))
    assert report["proved"] and report["value"] == "loss" and report["winning_moves"] == []
    assert proofs.verify_file(str(tmp_path / "p"))["value"] == "loss"
    short = sowsolve.prove(game, "111/111/111 L", memory=1 << 28, max_nodes=5, use_tables=False)
    assert short["proved"] is False and short["nodes"] >= 5
    with pytest.raises(sowsolve.BadParameters, match="solved whole"):
        sowsolve.prove(sowsolve.make_game("zigzag", cols=2, stones=1))


def test_a_damaged_table_is_never_passed_over(tmp_path):
    """A table whose metadata is cut short, alone in its directory: a position it would
    answer is refused as corrupt (the command: exit 1), never "no table answers" or a default."""
    import shutil
    import sqlite3
    good = tmp_path / "good.sqlite"
    sowsolve.solve("diffusion", cols=4, stones=2, table=str(good))
    damaged = tmp_path / "d"
    damaged.mkdir()
    shutil.copy(good, damaged / "t.sqlite")
    with sqlite3.connect(damaged / "t.sqlite") as db:
        (name,) = db.execute("select name from sqlite_master where type='table'").fetchone()
        key, value = db.execute(f"select key, value from {name} where key = 'meta'").fetchone()
        db.execute(f"update {name} set value = ? where key = 'meta'", (value[:len(value) // 2],))
    with sowsolve.open_tables(str(damaged)) as tables:
        with pytest.raises(sowsolve.TableError, match="t.sqlite"):
            tables.get("2222/2222 A")
    done = CliRunner().invoke(app, ["query", "2222/2222 A"], env={"SOWSOLVE_TABLES": str(damaged)})
    assert done.exit_code == 1 and "t.sqlite" in done.output, done.output


def test_two_tables_that_fit_are_told_apart_by_the_game(tmp_path):
    sowsolve.solve("diffusion", cols=4, stones=2, table=str(tmp_path / "v1.sqlite"))
    sowsolve.solve("diffusion-v2", cols=4, stones=2, table=str(tmp_path / "v2.sqlite"))
    with sowsolve.open_tables(str(tmp_path)) as both, \
            sowsolve.open_table(str(tmp_path / "v1.sqlite")) as v1_table:
        # text of both: read as the first game, v1, whatever else the directory holds
        assert both.get("2222/2222 A") == v1_table.probe("2222/2222 A")
    (tmp_path / "only-v2").mkdir()
    (tmp_path / "v2.sqlite").rename(tmp_path / "only-v2" / "v2.sqlite")
    with sowsolve.open_tables(str(tmp_path / "only-v2")) as only_v2:
        with pytest.raises(sowsolve.TableMissing, match="--game diffusion-v2"):
            only_v2.probe("2222/2222 A")        # never the other game's answer, quietly
    with sowsolve.open_tables(str(tmp_path / "only-v2"), game="diffusion-v2") as v2, \
            sowsolve.open_table(str(tmp_path / "only-v2" / "v2.sqlite")) as table:
        assert v2.probe("2222/2222 A") == table.probe("2222/2222 A")
    with pytest.raises(sowsolve.BadParameters, match="unknown game"):
        sowsolve.open_tables(str(tmp_path), game="chess")


@pytest.mark.parametrize("options", [dict(threads=1.5), dict(threads=True), dict(threads="1"),
                                     dict(max_stones="3"), dict(table=b"x.sqlite"), dict(table=5)])
def test_bad_types_are_one_sentence_before_any_work(tmp_path, options):
    options.setdefault("table", str(tmp_path / "t.sqlite"))
    with pytest.raises(sowsolve.BadParameters):
        sowsolve.solve("diffusion", cols=4, stones=2, **options)
    assert os.listdir(tmp_path) == []


def test_analyse_reads_the_game_from_the_text():
    result = sowsolve.analyse("1111/1111/1111/1111 L", nodes=3, threads=1)
    assert result["description"] == "Overflow, 4x4"
    # three playouts cannot try 84 moves: the others have no value yet, and say so
    untried = [m for m in result["moves"] if m.get("visits") == 0]
    assert len(untried) >= 80 and all(m["value"] is None and not m["exact"] for m in untried)
    with pytest.raises(sowsolve.BadPosition, match="hello"):
        sowsolve.analyse("hello", nodes=3)


def test_import_from_the_folder_that_holds_the_checkout(tmp_path):
    """`git clone` names the checkout sowsolve: from the folder that holds it, `import
    sowsolve` is the installed library all the same, not the checkout as an empty namespace."""
    import pathlib
    import subprocess
    import sys
    root = pathlib.Path(__file__).resolve().parent.parent
    (tmp_path / "sowsolve").symlink_to(root, target_is_directory=True)
    run = subprocess.run([sys.executable, "-c", "import sowsolve; print(callable(sowsolve.solve)); "
                          "from sowsolve.tables.query import line; print(line.__name__)"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "line"]
