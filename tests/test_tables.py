"""Table files: probes, checksums, foreign files, unfinished and resumed solves."""
import os
import pickle
import shutil
import sqlite3

import numpy as np
import pytest

from conftest import solve_to
from sowsolve.solver.errors import BadPosition
from sowsolve.solver.games import make_game
from sowsolve.solver.values import Value
from sowsolve.tables.format import (CorruptTable, ForeignTable, TableMismatch, TableMissing,
                                    UnfinishedTable)
from sowsolve.tables.store import TableWriter, open_table


def test_probe_and_get(table_2x4_k2):
    with open_table(table_2x4_k2) as table:
        start = table.probe("2222/2222 A")
        assert start == table.probe("2222/2222 B")
        assert start.value == "win"
        assert table.probe("0000/0001 A") == Value("win", 0)      # A's block is empty: A wins
        assert table.get("2222/2222 Q") is None
        assert table.get("2222/2222 Q", default="x") == "x"
        with pytest.raises(BadPosition):
            table.probe("22222/2222 A")


def test_turned_positions_share_a_value(table_2x4_k2):
    """A table stores one record for a position and its half-turned image (so probing both
    reads one record: that alone proves nothing).  What makes it right is that the turn is a
    symmetry of the rules: the same outcome, and the children of the image are the images of
    the children -- checked here with the reference rules."""
    game = make_game("diffusion", cols=4, stones=2)
    rng = np.random.default_rng(3)
    checked = 0
    with open_table(table_2x4_k2) as table:
        for _ in range(200):
            board = tuple(int(x) for x in rng.integers(0, 3, size=8))
            if not sum(board):
                continue
            a = game.parse_position(f"{''.join(map(str, board[:4]))}/{''.join(map(str, board[4:]))} A")
            turned = game.images(a)[1]
            assert turned != a and game.outcome(a) == game.outcome(turned)
            children = {game.images(game.play(a, m))[1] for m in game.legal_moves(a)}
            assert children == {game.play(turned, m) for m in game.legal_moves(turned)}
            assert table.probe(a) == table.probe(turned)     # one record, read from either
            checked += 1
    assert checked > 150


def test_a_read_never_creates_a_file(tmp_path):
    missing = tmp_path / "nope.sqlite"
    with pytest.raises(TableMissing):
        open_table(missing)
    assert not missing.exists()


def test_a_flipped_byte_in_a_block_is_caught(tmp_path, table_2x4_k2):
    path = tmp_path / "t.sqlite"
    shutil.copy(table_2x4_k2, path)
    with sqlite3.connect(path) as db:
        key, blob = db.execute("SELECT key, value FROM sowsolve WHERE key = 'block/16/0'").fetchone()
        for offset in (len(blob) // 2, 3, len(blob) - 1):
            corrupt = bytearray(blob)
            corrupt[offset] ^= 0x10
            db.execute("UPDATE sowsolve SET value = ? WHERE key = ?", (bytes(corrupt), key))
            db.commit()
            with open_table(path) as table:
                with pytest.raises(CorruptTable):
                    table.probe("2222/2222 A")
                with pytest.raises(CorruptTable):       # get() gives no default for damage
                    table.get("2222/2222 A")


class Boom:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_a_pickle_payload_is_never_unpickled(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE sowsolve (key TEXT PRIMARY KEY, value BLOB)")
        db.execute("INSERT INTO sowsolve VALUES ('meta', ?)", (pickle.dumps(Boom()),))
    with pytest.raises(ForeignTable):
        open_table(path)
    assert not (tmp_path / "pwned").exists()


def test_a_file_that_is_not_sqlite_is_foreign(tmp_path):
    path = tmp_path / "x.sqlite"
    path.write_bytes(b"hello, this is not a database" * 100)
    with pytest.raises(ForeignTable):
        open_table(path)


def test_an_unfinished_table_is_refused_and_resumes_to_the_same_values(tmp_path, table_2x4_k2):
    game = make_game("diffusion", cols=4, stones=2)
    path = tmp_path / "partial.sqlite"

    class Crash(Exception):
        pass

    class CrashingWriter(TableWriter):
        def save_tier(self, tier, records, summary):
            if tier == 9:
                raise Crash()
            super().save_tier(tier, records, summary)

    writer = CrashingWriter(str(path), game)
    with pytest.raises(Crash):
        game.solver.solve(game, writer)
    writer.close()
    with pytest.raises(UnfinishedTable, match="not finished"):
        open_table(path)
    writer = TableWriter(str(path), game)
    assert writer.finished_tiers() == set(range(1, 9))
    report = game.solver.solve(game, writer)
    writer.finish({})
    writer.close()
    assert report.resumed_from == 8 and [t.tier for t in report.tiers] == list(range(9, 17))
    with open_table(path) as resumed, open_table(table_2x4_k2) as whole:
        for tier in whole.tiers:
            assert np.array_equal(resumed.tier_records(tier), whole.tier_records(tier))


def test_a_table_of_another_board_is_not_overwritten(tmp_path, table_2x4_k2):
    path = tmp_path / "t.sqlite"
    shutil.copy(table_2x4_k2, path)
    with pytest.raises(TableMismatch, match="--force"):
        TableWriter(str(path), make_game("diffusion", cols=4, stones=1))


def test_tables_stay_under_one_byte_per_position(tmp_path):
    game = solve_to(tmp_path / "t.sqlite", "diffusion-v2", cols=4, stones=3)
    positions = sum(game.tier_size(t) for t in game.tiers())
    assert os.path.getsize(tmp_path / "t.sqlite") < positions
