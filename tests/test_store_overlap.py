"""A finished tier is stored (summed up, compressed, written) on a thread of its own while the
next tier is solved: tiers still land in order and whole, an error of the store reaches the
solve, and Ctrl-C during the next tier's work leaves the tier being stored stored."""
import threading
import time

import numpy as np
import pytest

from sowsolve.solver.games import make_game
from sowsolve.solver.retrograde import RetrogradeWorker
from sowsolve.solver.tiers import solve_tiers_with
from sowsolve.tables.store import TableWriter, open_table

#: the whole module is left out of `pytest -m "not slow"` (processes, clusters, long solves)
pytestmark = pytest.mark.slow


class RecordingWriter(TableWriter):
    """Notes the thread and the moment each tier is stored; the store takes its time."""

    def __init__(self, *args, pause=0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.pause = pause
        self.stored = []

    def save_tier(self, tier, records, summary):
        started = time.monotonic()
        time.sleep(self.pause)
        super().save_tier(tier, records, summary)
        self.stored.append((tier, threading.current_thread() is threading.main_thread(),
                            started, time.monotonic()))


def test_tiers_are_stored_in_order_beside_the_next_tiers_work(tmp_path):
    game = make_game("diffusion", cols=4, stones=2)
    writer = RecordingWriter(str(tmp_path / "t.sqlite"), game, pause=0.05)
    report = game.solver.solve(game, writer)
    writer.finish({})
    writer.close()
    tiers = [t for t, *_ in writer.stored]
    assert tiers == sorted(tiers) == [t.tier for t in report.tiers]
    assert not any(on_main for _, on_main, *_ in writer.stored)
    # one store at a time: each began after the one before it ended
    assert all(b[2] >= a[3] for a, b in zip(writer.stored, writer.stored[1:]))
    with open_table(tmp_path / "t.sqlite") as table:
        assert table.solved_tiers == tiers


def test_an_error_of_the_store_reaches_the_solve_and_nothing_after_it_is_stored(tmp_path):
    game = make_game("diffusion", cols=4, stones=2)

    class Full(OSError):
        pass

    class FailingWriter(TableWriter):
        def save_tier(self, tier, records, summary):
            if tier == 6:
                raise Full("no room")
            super().save_tier(tier, records, summary)

    writer = FailingWriter(str(tmp_path / "t.sqlite"), game)
    with pytest.raises(Full):
        game.solver.solve(game, writer)
    assert writer.finished_tiers() == set(range(1, 6))
    writer.close()


def test_ctrl_c_during_the_next_tier_leaves_the_tier_being_stored_whole(tmp_path):
    """Ctrl-C (here: the next tier's work interrupted) while a slow store is under way: the
    solve stops with KeyboardInterrupt only after that tier is stored, and a resume gives the
    table of a solve never interrupted."""
    game = make_game("diffusion", cols=4, stones=2)
    path = tmp_path / "t.sqlite"
    solving = RetrogradeWorker(game, None)

    class InterruptedAtTier9:
        passes = solving.passes

        def __init__(self):
            self.game = game

        def __call__(self, tier, window, calls):
            if tier == 9:
                raise KeyboardInterrupt
            return solving(tier, window, calls)

    writer = RecordingWriter(str(path), game, pause=0.3)
    with pytest.raises(KeyboardInterrupt):
        solve_tiers_with(game, writer, InterruptedAtTier9())
    assert writer.finished_tiers() == set(range(1, 9))      # tier 8 was being stored: it is
    writer.close()
    writer = TableWriter(str(path), game)
    report = game.solver.solve(game, writer)
    writer.finish({})
    writer.close()
    assert report.resumed_from == 8
    whole_path = tmp_path / "whole.sqlite"
    writer = TableWriter(str(whole_path), game)
    game.solver.solve(game, writer)
    writer.finish({})
    writer.close()
    with open_table(path) as resumed, open_table(whole_path) as whole:
        for tier in whole.tiers:
            assert np.array_equal(resumed.tier_records(tier), whole.tier_records(tier))


def test_a_signal_during_the_wait_for_the_store_leaves_no_store_running(tmp_path):
    """A signal handler's exception (as SIGTERM's under `stop_on_terminate`) arriving while the
    solve waits for the tier being stored: the solve raises it only once that store has ended,
    so nothing writes to the table after the solve has given up."""
    import signal

    class Terminated(Exception):
        pass

    def terminate(signum, frame):
        raise Terminated()

    game = make_game("diffusion", cols=4, stones=2)
    writer = RecordingWriter(str(tmp_path / "t.sqlite"), game, pause=0.4)
    previous = signal.signal(signal.SIGALRM, terminate)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.6)     # while a store of 0.4 s is being waited for
        with pytest.raises(Terminated):
            game.solver.solve(game, writer)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not [t.name for t in threading.enumerate() if t.name.startswith("sowsolve-store")]
    stored = writer.finished_tiers()
    assert stored == set(range(1, len(stored) + 1)) and stored      # whole tiers, in order
    writer.close()
