"""The tier manager's executor seam: an executor that runs each tier's work in another process
(the game rebuilt there from its name and parameters, the window's records sent along) plugs
in without any change to solvers or games, and its tables are byte-identical to the in-process
solve's -- the shape a cluster executor takes."""
import concurrent.futures
import multiprocessing

import numpy as np
import pytest

from conftest import solve_to
from sowsolve.solver.games import make_game
from sowsolve.solver.tiers import TierProgress, no_progress
from sowsolve.tables import open_table
from sowsolve.tables.store import TableWriter


class _Quiet:
    def update(self, n):
        pass

    def set_description(self, desc):
        pass


def solve_tier_elsewhere(name: str, parameters: dict, tier: int, window: dict) -> np.ndarray:
    """What a worker process does: rebuild the game, ask its solver for the tier worker."""
    game = make_game(name, **parameters)
    worker = game.solver.worker(game, 1)
    return worker(tier, window, TierProgress(_Quiet(), game))


class OtherProcess:
    """Runs every tier in a process of a pool (fork: the kernels are already loaded)."""

    def __init__(self, pool):
        self.pool = pool
        self.tiers = 0

    def run(self, worker, tier, window, calls):
        game = worker.game
        self.tiers += 1
        return self.pool.submit(solve_tier_elsewhere, game.name, game.parameters(), tier,
                                dict(window)).result()

    def release(self, tier):
        pass


@pytest.mark.parametrize("name, parameters", [("diffusion", {"cols": 4, "stones": 2}),
                                              ("diffusion-v2", {"cols": 3, "stones": 2}),
                                              ("zigzag", {"cols": 2, "stones": 3})])
def test_an_executor_in_other_processes_gives_the_same_table(tmp_path, name, parameters):
    solve_to(tmp_path / "here.sqlite", name, **parameters)
    game = make_game(name, **parameters)
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        executor = OtherProcess(pool)
        with TableWriter(str(tmp_path / "there.sqlite"), game) as writer:
            game.solver.solve(game, writer, threads=1, progress=no_progress, executor=executor)
            writer.finish({})
    assert executor.tiers == len(list(game.tiers()))
    with open_table(tmp_path / "here.sqlite") as here, open_table(tmp_path / "there.sqlite") as there:
        for tier in here.tiers:
            assert np.array_equal(here.tier_records(tier), there.tier_records(tier)), tier
