"""Records identical to the previous version's: every tier of Diffusion 2x4 with 1 to 5 stones
per pit and 2x6 with 1, both variants, solved here both ways the tier solver has (swept level
by level, with the game's own enumeration of a tier by level, and walked depth first), hashed,
against the hashes the version before the sweep by half boards wrote
(tests/data/records-217b416.json: computed by that version, not by this one)."""
import hashlib
import json
import pathlib

import numpy as np
import pytest

from sowsolve.cext import retrograde
from sowsolve.solver.games import make_game

BEFORE = json.loads((pathlib.Path(__file__).parent / "data" / "records-217b416.json").read_text())
BOARDS = [(name, 4, k) for name in ("diffusion", "diffusion-v2") for k in (1, 2, 3, 4, 5)] + \
         [(name, 6, 1) for name in ("diffusion", "diffusion-v2")]


def tier_digests(name: str, cols: int, stones: int, sweep_from: int) -> dict[str, str]:
    game = make_game(name, cols=cols, stones=stones)
    capsule = game.kernel().capsule()
    tables: list = [None] * (max(game.tiers()) + 1)
    digests = {}
    for tier in game.tiers():
        size = game.tier_size(tier)
        tables[tier] = np.zeros(size, dtype=np.uint16)
        retrograde.solve_range(capsule, tier, 0, size, tables, 2, sweep_from=sweep_from)
        assert np.count_nonzero(tables[tier]) == size, f"tier {tier} left unsolved records"
        digests[str(tier)] = hashlib.sha256(tables[tier].astype("<u2").tobytes()).hexdigest()
    return digests


@pytest.mark.slow
@pytest.mark.parametrize("name,cols,stones", BOARDS)
@pytest.mark.parametrize("way", ["swept", "walked"])
def test_every_tier_s_records_equal_the_previous_version_s(name, cols, stones, way):
    sweep_from = 0 if way == "swept" else 1 << 62
    assert tier_digests(name, cols, stones, sweep_from) == BEFORE["boards"][f"{name}:{cols}:{stones}"]



@pytest.mark.slow
def test_a_solve_into_huge_page_arrays_stores_the_previous_version_s_records(tmp_path, monkeypatch):
    """Every tier's records array mapped for huge pages (the threshold lowered to nothing): the
    table written holds the same records as the version before."""
    from conftest import solve_to
    from sowsolve.solver import kernels
    from sowsolve.tables.store import open_table
    monkeypatch.setattr(kernels, "HUGE_PAGES_FROM", 0)
    probe = kernels.records_array(5)
    assert isinstance(probe.base, memoryview) and probe.flags.writeable and not probe.any()
    solve_to(tmp_path / "t.sqlite", "diffusion", cols=6, stones=1)
    with open_table(tmp_path / "t.sqlite") as table:
        digests = {str(tier): hashlib.sha256(table.tier_records(tier).astype("<u2").tobytes()).hexdigest()
                   for tier in table.tiers}
    assert digests == BEFORE["boards"]["diffusion:6:1"]
