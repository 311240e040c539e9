"""Resuming follows the game's solving order (`Tiered.tiers()`), never the numbers of its tiers:
the contract promises only that every child of a tier lies in it or in an earlier one, not that
tier numbers rise along the order.  A game whose tiers run 30, 10, 20 is stopped after 30 and
10: the solve resumed after 10, the table keeps tiers up to 10, and the tiers are marked solved
in that order."""
import numpy as np

from sowsolve.tables.solving import interrupted_text as _interrupted
from sowsolve.solver.games import make_game
from sowsolve.solver.tiers import last_solved, solve_tiers_with
from sowsolve.solver.values import LOSS, WIN_LOSS
from sowsolve.tables.store import TableWriter

ORDER = [30, 10, 20]


class Falling:
    """A game of three tiers of two positions each, solved in the order 30, 10, 20 (each tier
    reads the ones before it in that order)."""
    name = "falling"
    value_kind = WIN_LOSS

    class solver:
        resumable = True
        name = "retrograde"

    def tiers(self):
        return list(ORDER)

    def tier_size(self, tier):
        return 2

    def tier_dependencies(self, tier):
        return ORDER[:ORDER.index(tier)]

    def tier_name(self, tier):
        return str(tier)


class Store:
    """Holds the tiers it is given, as a table does; `tier_order` is the game's."""

    def __init__(self, done=()):
        self.saved = {tier: np.full(2, LOSS, dtype=np.uint16) for tier in done}

    def finished_tiers(self):
        return set(self.saved)

    def tier_order(self):
        return list(ORDER)

    def load_tier(self, tier):
        return self.saved[tier]

    def save_tier(self, tier, records, summary):
        self.saved[tier] = records


class Worker:
    passes = 1

    def __init__(self):
        self.game = Falling()
        self.solved = []

    def __call__(self, tier, window, calls):
        assert set(window) == set(ORDER[:ORDER.index(tier)])
        self.solved.append(tier)
        return np.full(2, LOSS, dtype=np.uint16)


def test_last_solved_is_the_last_of_the_order_not_the_largest_number():
    assert last_solved(ORDER, {30, 10}) == 10
    assert last_solved(ORDER, {30}) == 30
    assert last_solved(ORDER, set()) is None


def test_a_resumed_solve_reports_the_last_tier_stored_in_solving_order():
    store, worker = Store(done=(30, 10)), Worker()
    report = solve_tiers_with(Falling(), store, worker)
    assert worker.solved == [20]
    assert report.resumed_from == 10


def test_an_interrupted_solve_says_it_keeps_tiers_up_to_the_last_in_solving_order():
    class Writer(Store):
        pass
    said = _interrupted(Falling(), Writer(done=(30, 10)), "t.sqlite")
    assert "keeps 2 of 3 tiers (up to tier 10)" in said, said


def test_a_table_marks_and_reports_its_tiers_in_solving_order(tmp_path, monkeypatch):
    """A writer's solved tiers (and its 'keeps tiers up to' of a full disk) follow its tier list,
    whatever the numbers: here the list of a real table, turned round."""
    game = make_game("diffusion", cols=2, stones=1)
    with TableWriter(str(tmp_path / "t.sqlite"), game) as writer:
        backwards = list(reversed(writer.meta["tiers"]))
        monkeypatch.setitem(writer.meta, "tiers", backwards)
        first, second = backwards[0], backwards[1]
        writer.meta["solved_tiers"] = [first]
        writer._solved = {first}
        assert writer._kept() == f"the table keeps tiers up to tier {first}"
        records = np.full(game.tier_size(second), LOSS, dtype=np.uint16)
        monkeypatch.setattr(writer, "_commit_meta", lambda: None)   # the list is the point here
        writer._save_tier(second, records, WIN_LOSS.summarize(records), None)
        assert writer.meta["solved_tiers"] == [first, second]
        assert writer._kept() == f"the table keeps tiers up to tier {second}"
