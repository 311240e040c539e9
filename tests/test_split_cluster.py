"""Score tiers split across the workers of a Dask cluster (solver/cluster.py `_solve_blocks`,
solver/splittier.py): tables identical to the in-process solve's, a worker killed mid-tier
(its part runs again from its saved state), a driver killed and the same command resumed."""
import glob
import json
import os
import signal
import subprocess
import time

import pytest

import sowsolve
from test_cluster import (SOWSOLVE, cluster_solve, kill_driver_once_stored, same_records,
                          solve_in_background)

pytestmark = pytest.mark.slow

distributed = pytest.importorskip("distributed")


def solve_here(path, max_stones=None, **parameters):
    sowsolve.solve("zigzag", table=str(path), threads=2, allow_large=True,
                   max_stones=max_stones, **parameters)


@pytest.fixture(scope="module")
def solved_to_11(tmp_path_factory):
    """The standard board's table to 11 seeds solved in process, once for the tests that
    compare a cluster's solve to it."""
    path = tmp_path_factory.mktemp("reference") / "here.sqlite"
    solve_here(path, 11)
    return path


def split_solve(client, path, max_stones=None, parameters=None, **options):
    return cluster_solve(client, path, "zigzag", parameters or {}, max_stones, **options)


@pytest.mark.parametrize("parameters, max_stones, least", [
    ({"cols": 2, "stones": 2}, None, 0),        # every tier split, the smallest in empty blocks
    ({}, 10, 1000)])                            # the standard board's endgame tiers
def test_split_tiers_on_a_cluster_give_the_in_process_table(tmp_path, client, parameters,
                                                            max_stones, least):
    solve_here(tmp_path / "here.sqlite", max_stones, **parameters)
    executor = split_solve(client, tmp_path / "there.sqlite", max_stones, parameters,
                           split_from=least, save_every=0)
    assert executor.split_tiers >= 6
    figures = executor.exchange_figures()
    assert figures["tiers"] == executor.split_tiers and figures["rounds"] > 100
    assert figures["saves"] > 0
    same_records(tmp_path / "here.sqlite", tmp_path / "there.sqlite")


def test_a_worker_killed_mid_tier_costs_the_rounds_since_its_part_saved(tmp_path, client, solved_to_11):
    pids = list(client.run(os.getpid).values())
    thread, finished, errors, result = solve_in_background(
        client, tmp_path / "there.sqlite", "zigzag", {}, 11, split_from=1000, save_every=0)
    # a tier of 1,000,000 positions or more under way, both its parts past a save (whichever
    # part the killed worker runs, it has a state to go on from)
    deadline = time.monotonic() + 120
    pattern = str(tmp_path / "*.sowsolve-cluster" / "tier-3[0-9]-*-split")

    def saved_both() -> bool:
        return any(os.path.exists(os.path.join(folder, "state-0"))
                   and os.path.exists(os.path.join(folder, "state-1"))
                   for folder in glob.glob(pattern))

    while not finished.is_set() and time.monotonic() < deadline and not saved_both():
        time.sleep(0.005)
    killed_mid_tier = not finished.is_set() and saved_both()
    os.kill(pids[0], signal.SIGKILL)     # one worker: its part runs again, the other waits
    thread.join(300)
    assert killed_mid_tier, "the solve ended before a worker was killed"
    assert not errors, errors
    same_records(solved_to_11, tmp_path / "there.sqlite")
    resumed = [f for f in result["executor"].block_figures if f["resumed_round"] > 0]
    assert resumed, "no part went on from a saved state"
    client.wait_for_workers(2, timeout=60)   # the nanny brought the worker back


def test_a_killed_driver_resumes_through_split_tiers_by_default(tmp_path, solved_to_11):
    """`solve zigzag --max-stones 11 --workers 2`: its tier of 4,194,304 positions or more
    (11 seeds) is split by default; the driver is killed (SIGKILL) with that tier ahead, and
    the same command resumes and splits it."""
    table = tmp_path / "there.sqlite"
    command = [SOWSOLVE, "solve", "zigzag", "--max-stones", "11", "--table", str(table),
               "--workers", "2", "--json"]
    kill_driver_once_stored(command, table, 11)
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    result = json.loads(resumed.stdout)
    assert result["resumed_from_tier"] is not None
    assert result["cluster"]["split_score_tiers"]["tiers"] >= 1
    same_records(solved_to_11, table)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["there.sqlite"]


def test_ctrl_c_in_the_terminal_stops_a_solve_on_workers_without_their_tracebacks(tmp_path):
    """SIGINT to the whole process group (what Ctrl-C in a terminal does) once the workers run:
    the driver stops the solve (exit 130, the resume sentence); the workers ignore it (their
    preload), so no traceback of theirs reaches the terminal."""
    from test_cluster import _stored_tiers
    table = tmp_path / "t.sqlite"
    driver = subprocess.Popen([SOWSOLVE, "solve", "zigzag", "--max-stones", "12", "--table",
                               str(table), "--workers", "2"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and driver.poll() is None and _stored_tiers(table) < 4:
            time.sleep(0.05)
        assert driver.poll() is None, "the solve ended before Ctrl-C"
        os.killpg(driver.pid, signal.SIGINT)
        _, err = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    assert driver.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "run the same command again to resume" in err
