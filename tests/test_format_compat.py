"""Tables written by an earlier sowsolve (format version 2, before the engine was split into
solver, value-kind and indexing objects) still open, pass `check --full`, and hold exactly the
records -- and, for keyed tables, the keys -- that solving the same board today stores.

tests/data/format2/ holds one small table per solver, written by sowsolve 0.1.0 of that time
with `sowsolve solve GAME <board> --table FILE`.  Zig Zag tables of that time are the exception:
they hold every tier, where tables now hold one record for a position and its half-turn; they
are refused with the command that rebuilds them, and nothing is changed."""
import pathlib
import shutil

import numpy as np
import pytest

from conftest import solve_to
from sowsolve.tables import open_table
from sowsolve.tables.verify import check_table

DATA = pathlib.Path(__file__).parent / "data" / "format2"
TABLES = {
    "diffusion-2x4-k1.sqlite": ("diffusion", {"cols": 4, "stones": 1}),
    "diffusion-v2-2x3-k1.sqlite": ("diffusion-v2", {"cols": 3, "stones": 1}),
    "overflow-3x3.sqlite": ("overflow", {"size": "3x3"}),
}
EARLIER_LAYOUT = {"zigzag-2x2-k2.sqlite": ("zigzag", {"cols": 2, "stones": 2})}


def test_every_solver_has_an_old_table():
    from sowsolve.solver.games import make_game
    solvers = {make_game(name, **parameters).solver.name
               for name, parameters in [*TABLES.values(), *EARLIER_LAYOUT.values()]}
    from sowsolve.solver.solvers import SOLVERS
    assert solvers == set(SOLVERS)


@pytest.mark.parametrize("file", sorted(EARLIER_LAYOUT))
def test_a_table_of_an_earlier_layout_is_refused_with_the_rebuild_command(tmp_path, file):
    from typer.testing import CliRunner
    from sowsolve.cli.app import app
    from sowsolve.tables.format import OutdatedTable
    old_path = tmp_path / file
    shutil.copy(DATA / file, old_path)
    before = old_path.read_bytes()
    with pytest.raises(OutdatedTable) as refused:
        open_table(old_path)
    assert "tiers of an earlier layout" in str(refused.value)
    assert "--force" in str(refused.value) and "\n" not in str(refused.value)
    for command in (["info", "--table", str(old_path)], ["query", "--table", str(old_path), "22/22 p - -"]):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 1 and "rebuild it with" in result.output, result.output
    assert old_path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [file]


@pytest.mark.parametrize("file", sorted(TABLES))
def test_an_old_table_opens_checks_and_equals_a_new_solve(tmp_path, file):
    name, parameters = TABLES[file]
    old_path = tmp_path / file
    shutil.copy(DATA / file, old_path)      # reading must not change it, but never risk the data
    before = old_path.read_bytes()
    solve_to(tmp_path / "new.sqlite", name, **parameters)
    with open_table(old_path) as old, open_table(tmp_path / "new.sqlite") as new:
        assert old.meta["format_version"] == 2
        assert check_table(old, samples=100, full=True, seed=0)["failures"] == []
        assert old.tiers == new.tiers
        for tier in old.tiers:
            assert np.array_equal(old.tier_records(tier), new.tier_records(tier)), tier
            size = old.tier_size(tier)        # the positions (keys of a keyed table) too
            assert old.stored_positions(tier, 0, size) == new.stored_positions(tier, 0, size)
        for position in old.game.initial_positions():
            assert old.probe(position) == new.probe(position)
            text = old.game.format_position(position)
            assert dict(old.query(text), table=None) == dict(new.query(text), table=None)
    assert old_path.read_bytes() == before


def test_a_version_2_table_resumed_keeps_writing_version_2(tmp_path):
    """A version-2 table whose solve stopped resumes as version 2: its new tiers are byte-plane
    blocks of 65,536 records that an older sowsolve reads, never palette blocks."""
    import json
    import sqlite3
    from sowsolve.tables import format as fmt
    path = tmp_path / "old.sqlite"
    shutil.copy(DATA / "diffusion-2x4-k1.sqlite", path)
    with sqlite3.connect(path) as db:     # every tier dropped, as if stopped before the first
        meta = json.loads(db.execute("SELECT value FROM sowsolve WHERE key = 'meta'").fetchone()[0])
        meta.pop("checksum")
        meta["solved_tiers"], meta["finished"] = [], False
        db.execute("DELETE FROM sowsolve WHERE key LIKE 'block/%' OR key LIKE 'tier/%'")
        db.execute("UPDATE sowsolve SET value = ? WHERE key = 'meta'", (fmt.seal_json(meta, b"meta"),))
    db.close()
    from typer.testing import CliRunner
    from sowsolve.cli.app import app
    resumed = CliRunner().invoke(app, ["solve", "diffusion", "--cols", "4", "--stones", "1", "--table", str(path)])
    assert resumed.exit_code == 0, resumed.output
    with sqlite3.connect(path) as db:
        magics = {bytes(row[0][:4]) for row in db.execute("SELECT value FROM sowsolve WHERE key LIKE 'block/%'")}
    db.close()
    assert magics == {fmt.BLOCK_MAGIC}
    solve_to(tmp_path / "new.sqlite", "diffusion", cols=4, stones=1)
    with open_table(path) as old, open_table(tmp_path / "new.sqlite") as new:
        assert old.meta["format_version"] == 2 and old.block_records == 1 << 16
        assert new.meta["format_version"] == 3 and new.block_records == 1 << 17
        assert check_table(old, samples=100, full=True, seed=0)["failures"] == []
        for tier in new.tiers:
            assert np.array_equal(old.tier_records(tier), new.tier_records(tier)), tier


@pytest.mark.slow
def test_a_table_of_1m_record_blocks_reads_checks_and_resumes_as_written(tmp_path, monkeypatch):
    """The first version-3 tables were written in blocks of 2^20 records; tables are now written
    in blocks of 2^17.  Diffusion 2x6 k=1 has a tier of 1,203,632 positions, so both sizes cut it
    into several blocks: the old table must read the same records, pass `check --full`, and a
    resumed solve must go on in its own block size."""
    import json
    import sqlite3
    from sowsolve.tables import format as fmt
    from sowsolve.tables.layout import DenseLayout
    from sowsolve.tables.store import TableWriter
    from sowsolve.solver.games import make_game
    solve_to(tmp_path / "new.sqlite", "diffusion", cols=6, stones=1)
    monkeypatch.setattr(DenseLayout, "block_records", 1 << 20)
    solve_to(tmp_path / "old.sqlite", "diffusion", cols=6, stones=1)
    monkeypatch.undo()
    with open_table(tmp_path / "old.sqlite") as old, open_table(tmp_path / "new.sqlite") as new:
        assert (old.block_records, new.block_records) == (1 << 20, 1 << 17)
        largest = max(new.tiers, key=new.tier_size)
        assert (old.blocks_of(largest), new.blocks_of(largest)) == (2, 10)
        assert check_table(old, samples=100, full=True, seed=0)["failures"] == []
        for tier in new.tiers:
            assert np.array_equal(old.tier_records(tier), new.tier_records(tier)), tier
        rng = np.random.default_rng(3)
        for index in rng.integers(0, new.tier_size(largest), 50):
            [position] = new.stored_positions(largest, int(index), int(index) + 1)
            assert old.probe(position) == new.probe(position)
        solved = old.meta["solved_tiers"]
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:       # the last half of the tiers dropped, as if stopped
        meta = json.loads(db.execute("SELECT value FROM sowsolve WHERE key = 'meta'").fetchone()[0])
        meta.pop("checksum")
        kept = solved[:len(solved) // 2]
        meta["solved_tiers"], meta["finished"] = kept, False
        for tier in solved[len(solved) // 2:]:
            db.execute("DELETE FROM sowsolve WHERE key LIKE ? OR key = ?", (f"block/{tier}/%", f"tier/{tier}"))
        db.execute("UPDATE sowsolve SET value = ? WHERE key = 'meta'", (fmt.seal_json(meta, b"meta"),))
    db.close()
    game = make_game("diffusion", cols=6, stones=1)
    writer = TableWriter(str(path), game)
    game.solver.solve(game, writer, threads=2)
    writer.finish({})
    writer.close()
    with open_table(path) as old, open_table(tmp_path / "new.sqlite") as new:
        assert old.block_records == 1 << 20 and old.meta["finished"]
        for tier in new.tiers:
            assert np.array_equal(old.tier_records(tier), new.tier_records(tier)), tier
