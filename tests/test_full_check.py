"""`check --table --full` on whole tables: every stored value equals the fold of its children's
(kernel), block checksums and summaries -- on 2x4 and 2x6 boards of both variants and
a 2x5 v2 board of 12.4 M positions (the 2x6 k=2 board's 388 M: `sowsolve check --table T --full`)."""
import pytest

from conftest import solve_to
from sowsolve.tables import open_table
from sowsolve.tables.verify import check_table

#: the whole module is left out of `pytest -m "not slow"` (processes, clusters, long solves)
pytestmark = pytest.mark.slow

BOARDS = [("diffusion", 4, 1), ("diffusion-v2", 4, 1), ("diffusion", 4, 2), ("diffusion-v2", 4, 2),
          ("diffusion", 6, 1), ("diffusion-v2", 6, 1),
          pytest.param("diffusion-v2", 5, 2, id="diffusion-v2-2x5-k2 (12.4M positions)")]


@pytest.mark.parametrize("name, cols, stones", BOARDS)
def test_full_check_of_a_solved_table(tmp_path, name, cols, stones):
    game = solve_to(tmp_path / "t.sqlite", name, cols=cols, stones=stones)
    with open_table(tmp_path / "t.sqlite") as table:
        report = check_table(table, samples=200, full=True, seed=0)
        assert report["failures"] == []
        assert report["positions_verified"] == sum(game.tier_size(t) for t in game.tiers())
        sampled = check_table(table, samples=300, full=False, seed=1)
        assert sampled["failures"] == [] and sampled["positions_verified"] > 0


def test_a_sampled_check_reports_a_missing_child_and_goes_on(tmp_path, monkeypatch):
    """A keyed table that lacks a position one of its positions leads to is a failure in the
    report (with the others checked), not the end of the check."""
    from sowsolve.tables.format import NotInTable
    from sowsolve.tables.store import Table
    solve_to(tmp_path / "o.sqlite", "overflow", size="3x3")
    with open_table(tmp_path / "o.sqlite") as table:
        lost = table.game.parse_position("020/000/000 D")     # a child of '011/000/000 L'
        honest = Table.record

        def record(self, position):
            if self.game.key(position) == self.game.key(lost):
                raise NotInTable(f"{self.game.format_position(position)} is not in the table")
            return honest(self, position)
        monkeypatch.setattr(Table, "record", record)
        report = check_table(table, samples=10**6, full=False, seed=0)
    assert report["positions_verified"] == sum(table.tier_size(t) for t in table.tiers)
    assert report["failure_count"] >= 1
    assert all("a position it leads to is missing" in f for f in report["failures"])
