"""The plain C solver of bench/ (the yardstick of the Diffusion speed figures) solves the game
sowsolve solves: compiled here, its record of every position of 2x4 with 2 stones per pit
(every board of 1 to 16 stones, A to move) equals the table's."""
import os
import shutil
import subprocess

import numpy as np
import pytest

from sowsolve.tables.store import open_table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_plain_c_solver_gives_every_position_the_table_s_record(tmp_path, table_2x4_k2):
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc}) to build bench/plain_diffusion.c")
    program = tmp_path / "plain_diffusion"
    subprocess.run([cc, "-O2", "-fopenmp", os.path.join(ROOT, "bench", "plain_diffusion.c"), "-o",
                    str(program)], check=True)
    records = tmp_path / "records.bin"
    said = subprocess.run([str(program), "4", "2", str(records)], capture_output=True, text=True, check=True)
    plain = np.fromfile(records, dtype="<u2")
    assert plain.size == 6 ** 8 and '"positions": 1679616' in said.stdout
    powers = 6 ** np.arange(8, dtype=np.int64)
    compared = 0
    with open_table(table_2x4_k2) as table:
        for tier in table.tiers:
            size = table.tier_size(tier)
            boards = np.array([p.board for p in table.stored_positions(tier, 0, size)], dtype=np.int64)
            assert np.array_equal(plain[boards @ powers], table.tier_records(tier)), f"tier {tier}"
            compared += size
    indices = np.arange(6 ** 8, dtype=np.int64)
    stones = sum((indices // power) % 6 for power in powers)
    # every board of 1 to 16 stones (the empty board never arises: a game ends before)
    assert compared == int(np.count_nonzero((stones >= 1) & (stones <= 16)))
