"""Solving on a Dask cluster (solver/cluster.py, `solve --workers/--scheduler`): tables
byte-identical to the in-process solve's, with tiers cut into work units by level; a worker
killed mid-solve and a driver killed and resumed change nothing; a cluster that cannot be
reached is a usage error that writes nothing; files of the shared directory are checked before
any kernel reads them."""
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from conftest import solve_to
from sowsolve.solver.cluster import DaskExecutor, load_tier, save_array, tier_file
from sowsolve.solver.games import make_game
from sowsolve.solver.retrograde import plan_units
from sowsolve.solver.tiers import no_progress
from sowsolve.tables import open_table
from sowsolve.tables.store import TableWriter

#: the whole module is left out of `pytest -m "not slow"` (processes, clusters, long solves)
pytestmark = pytest.mark.slow

distributed = pytest.importorskip("distributed")

SOWSOLVE = os.path.join(os.path.dirname(sys.executable), "sowsolve")


def same_records(a, b) -> None:
    with open_table(a) as here, open_table(b) as there:
        assert here.tiers == there.tiers
        for tier in here.tiers:
            assert np.array_equal(here.tier_records(tier), there.tier_records(tier)), tier
            if here.game.value_kind.has_long:
                assert np.array_equal(here._long_table(tier), there._long_table(tier)), tier
        assert here.meta["solved_tiers"] == there.meta["solved_tiers"]


def cluster_solve(client, path, name, parameters, max_stones=None, **split):
    game = make_game(name, **parameters)
    with DaskExecutor(client, os.path.dirname(path), str(path), **split) as executor, \
            TableWriter(str(path), game, max_stones=max_stones) as writer:
        game.solver.solve(game, writer, threads=2, progress=no_progress, executor=executor)
        writer.finish({})
        run_dir = executor.run_dir
    assert not os.path.exists(run_dir)          # the shared directory is cleaned up
    return executor


def solve_in_background(client, path, name, parameters, max_stones=None, **split):
    """cluster_solve on a thread of its own, for a test to kill workers meanwhile: (the
    thread, an event set when it ends, the errors it raised, {"executor": ...} once done)."""
    errors, finished, result = [], threading.Event(), {}

    def solve():
        try:
            result["executor"] = cluster_solve(client, path, name, parameters, max_stones,
                                               **split)
        except BaseException as exc:    # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            finished.set()

    thread = threading.Thread(target=solve)
    thread.start()
    return thread, finished, errors, result


@pytest.mark.parametrize("name, parameters, one_machine", [
    ("diffusion", {"cols": 4, "stones": 3}, True),
    ("diffusion", {"cols": 4, "stones": 3}, False),
    ("diffusion-v2", {"cols": 4, "stones": 3}, True),
    ("zigzag", {"cols": 2, "stones": 3}, None)])
def test_a_cluster_solve_is_identical_to_the_in_process_one(tmp_path, client, name, parameters,
                                                             one_machine):
    """Diffusion tiers cut into units, the parts solving in place into one shared file (every
    worker on this machine) or each unit through a file of its own (as on several machines)."""
    solve_to(tmp_path / "here.sqlite", name, **parameters)
    # the Diffusion tiers of 50,000 positions or more are cut into units (levels of 2,000 or
    # more positions split in two, runs of smaller ones grouped), so rounds of units really run
    executor = cluster_solve(client, tmp_path / "there.sqlite", name, parameters,
                             split_from=50_000, split_min=2_000, one_machine=one_machine)
    game = make_game(name, **parameters)
    tiers = len(list(game.tiers()))
    if name.startswith("diffusion"):
        assert executor.split_tiers >= 3 and executor.rounds > 100
        # a split tier: two parts (and, through files, the task that assembles the tier)
        assert executor.tasks == tiers + (1 if one_machine else 2) * executor.split_tiers
    else:
        assert executor.tasks == tiers and executor.split_tiers == 0   # score tiers go whole
    same_records(tmp_path / "here.sqlite", tmp_path / "there.sqlite")


def test_plan_units_cover_the_tier_in_rounds_of_independent_units():
    rng = np.random.default_rng(5)
    for _ in range(200):
        counts = rng.integers(0, 50, rng.integers(1, 40)) * rng.integers(0, 2, 1)[0] + \
            rng.integers(0, 5, 1)[0]
        first = np.concatenate([[0], np.cumsum(counts)])
        parts, split_min = int(rng.integers(1, 4)), int(rng.integers(1, 60))
        units = plan_units(first, parts, split_min)
        covered = 0
        for u in units:
            start, stop, lo, hi = u.spec[:4]
            assert start == covered and u.positions == stop - start
            covered = stop
            assert first[lo] <= start <= stop <= first[hi]
        assert covered == first[-1]
        for r in range(units[-1].round + 1 if units else 0):
            members = [u for u in units if u.round == r]
            levels = {u.spec[2:4] for u in members}
            if len(members) > 1:        # a split level: one level of split_min or more
                assert len(levels) == 1 and len(members) == parts
                lo, hi = levels.pop()
                assert hi == lo + 1 and first[hi] - first[lo] >= split_min
            else:                        # a run of smaller levels (or one large, parts = 1)
                lo, hi = members[0].spec[2:4]
                small = [first[L + 1] - first[L] < split_min for L in range(lo, hi)]
                assert all(small) or (hi == lo + 1 and parts == 1)
        assert [u.round for u in units] == sorted(u.round for u in units)


def test_every_worker_killed_mid_solve_changes_nothing(tmp_path, client):
    name, parameters = "diffusion", {"cols": 4, "stones": 5}
    solve_to(tmp_path / "here.sqlite", name, **parameters)
    pids = list(client.run(os.getpid).values())
    thread, finished, errors, _ = solve_in_background(
        client, tmp_path / "there.sqlite", name, parameters, split_from=20_000, split_min=500)
    deadline = time.monotonic() + 120    # a quarter of the tiers stored: the largest are ahead
    while not finished.is_set() and time.monotonic() < deadline and \
            _stored_tiers(tmp_path / "there.sqlite") < 10:
        time.sleep(0.02)
    killed_mid_solve = not finished.is_set()
    for pid in pids:                     # every worker at once: the nannies start new ones,
        os.kill(pid, signal.SIGKILL)     # and the lost parts must run on those
    thread.join(300)
    assert killed_mid_solve, "the solve ended before the worker was killed"
    assert not errors, errors
    same_records(tmp_path / "here.sqlite", tmp_path / "there.sqlite")
    client.wait_for_workers(2, timeout=60)   # the nanny brought the worker back


def test_the_cli_solves_on_workers_and_a_killed_driver_resumes(tmp_path):
    """`solve --workers 2` on Diffusion 2x6 k=1, whose tier of 1,203,632 positions is cut into
    units by default; the driver is killed (SIGKILL) once tiers are stored, and the same
    command resumes after them.  Both runs: the in-process table."""
    solve_to(tmp_path / "here.sqlite", "diffusion", cols=6, stones=1)
    table = tmp_path / "there.sqlite"
    command = [SOWSOLVE, "solve", "diffusion", "--cols", "6", "--stones", "1", "--table",
               str(table), "--workers", "2", "--json"]
    kill_driver_once_stored(command, table, 8)
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    result = json.loads(resumed.stdout)
    assert result["resumed_from_tier"] is not None
    assert result["positions_solved_now"] < result["positions_per_side"]
    same_records(tmp_path / "here.sqlite", table)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here.sqlite", "there.sqlite"]


def kill_driver_once_stored(command: list, table, tiers: int) -> None:
    """Run `command` (a solve on workers) and kill it (SIGKILL, its whole process group: the
    driver and its cluster) once its table holds `tiers` tiers."""
    driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and driver.poll() is None and \
                _stored_tiers(table) < tiers:
            time.sleep(0.05)
        assert driver.poll() is None, "the solve ended before the driver could be killed"
        driver.kill()
        driver.wait()
    finally:
        os.killpg(driver.pid, signal.SIGKILL) if _group_alive(driver.pid) else None


def _stored_tiers(path) -> int:
    import sqlite3
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.1) as db:
            return db.execute("SELECT count(*) FROM sowsolve WHERE key LIKE 'tier/%'").fetchone()[0]
    except sqlite3.Error:
        return 0


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except OSError:
        return False


@pytest.mark.parametrize("options, says", [
    (["--scheduler", "tcp://127.0.0.1:9"], "does not answer"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:9"], "cannot be given together"),
    (["--workers", "0"], "--workers must be from 1 to 256"),
    (["--shared-dir", "."], "--shared-dir is for a solve on a cluster"),
])
def test_a_cluster_that_cannot_be_had_is_a_usage_error_and_writes_nothing(tmp_path, options, says):
    table = tmp_path / "t.sqlite"
    run = subprocess.run([SOWSOLVE, "solve", "diffusion", "--cols", "4", "--stones", "1",
                          "--table", str(table), *options], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, SOWSOLVE_CONNECT_SECONDS="1"))
    assert run.returncode == 2, run.stderr
    assert says in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    if says == "does not answer":
        assert "within 1 s" in run.stderr, run.stderr        # $SOWSOLVE_CONNECT_SECONDS, read
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("wait", ["soon", "0", "-3", "nan", "1e9"])
def test_a_bad_wait_for_the_scheduler_is_a_usage_error(tmp_path, wait):
    run = subprocess.run([SOWSOLVE, "solve", "diffusion", "--cols", "4", "--stones", "1",
                          "--table", str(tmp_path / "t.sqlite"), "--scheduler", "tcp://127.0.0.1:9"],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, SOWSOLVE_CONNECT_SECONDS=wait))
    assert run.returncode == 2, run.stderr
    assert "$SOWSOLVE_CONNECT_SECONDS must be a number of seconds" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and list(tmp_path.iterdir()) == []


def test_a_search_solver_refuses_a_cluster(tmp_path):
    run = subprocess.run([SOWSOLVE, "solve", "overflow", "--size", "3x3", "--table",
                          str(tmp_path / "t.sqlite"), "--workers", "2"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 2 and "cannot be solved on a cluster" in run.stderr, run.stderr
    assert list(tmp_path.iterdir()) == []


def test_files_of_the_shared_directory_are_checked_before_a_kernel_reads_them(tmp_path):
    game = make_game("diffusion", cols=4, stones=2)
    tier = 3
    size = game.tier_size(tier)
    run_dir = str(tmp_path)
    for bad, says in [(np.zeros(size - 1, np.uint16), "are not"),
                      (np.zeros(size, np.uint32), "are not"),
                      (np.zeros((size, 1), np.uint16), "are not"),
                      (np.array([{"x": 1}] * 3, dtype=object), "cannot be read")]:
        path = tier_file(run_dir, tier, "records")
        if bad.dtype == object:
            np.save(path, bad, allow_pickle=True)      # a pickle inside: never unpickled
        else:
            save_array(path, bad)
        with pytest.raises(ValueError, match=says):
            load_tier(run_dir, game, tier)
    os.unlink(tier_file(run_dir, tier, "records"))
    with pytest.raises(ValueError, match="cannot be read"):
        load_tier(run_dir, game, tier)


def test_hostile_files_in_the_shared_directory_are_refused_without_hanging(tmp_path):
    """A FIFO in a tier file's place (whose open would wait for a writer for good), a symbolic
    link, a directory and a file shorter or longer than its header says are refused at once
    with a sentence naming the file."""
    game = make_game("diffusion", cols=4, stones=2)
    tier = 3
    size = game.tier_size(tier)
    path = tier_file(str(tmp_path), tier, "records")
    save_array(str(tmp_path / "real.npy"), np.zeros(size, np.uint16))
    whole = (tmp_path / "real.npy").read_bytes()

    def fifo():
        os.mkfifo(path)

    def link():
        os.symlink(tmp_path / "real.npy", path)

    def directory():
        os.mkdir(path)

    def short():
        open(path, "wb").write(whole[:-2])

    def long():
        open(path, "wb").write(whole + b"\0\0")

    for make, says in [(fifo, "not a regular file"), (link, "symbolic link"),
                       (directory, "not a regular file"), (short, "not the"), (long, "not the")]:
        make()
        outcome = []
        reader = threading.Thread(target=lambda: outcome.append(_error_of(load_tier, str(tmp_path),
                                                                          game, tier)), daemon=True)
        reader.start()
        reader.join(30)                 # a liveness bound: the refusal takes milliseconds
        if reader.is_alive():           # blocked in open(): let it go before failing
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            pytest.fail(f"{make.__name__}: the read blocked")
        assert isinstance(outcome[0], ValueError) and says in str(outcome[0]), (make.__name__, outcome)
        assert path in str(outcome[0])
        if os.path.isdir(path) and not os.path.islink(path):
            os.rmdir(path)
        else:
            os.unlink(path)


def _error_of(call, *args):
    try:
        call(*args)
    except Exception as exc:  # noqa: BLE001 - returned to the test
        return exc
    return None


def test_a_tier_file_truncated_in_place_after_it_was_read_harms_no_worker(tmp_path):
    """A worker's window holds its lower tiers; the file of one truncated in place afterwards
    (as `: > file` does) must not kill the worker (a mapped file's lost pages are a SIGBUS at
    the next access): the worker (a process of its own here) still reads every record."""
    game = make_game("diffusion", cols=4, stones=2)
    tier = max(game.tiers(), key=game.tier_size)
    records = (np.arange(game.tier_size(tier)) % 7 + 1).astype(np.uint16)
    job_dir = str(tmp_path)
    save_array(tier_file(job_dir, tier, "records"), records)
    script = (
        "import sys\n"
        "from sowsolve.solver import cluster\n"
        f"job = cluster.Job('diffusion', (('cols', 4), ('stones', 2)), {job_dir!r}, 1, cluster.version())\n"
        f"window = cluster._process(job).window(({tier},))\n"
        f"open({tier_file(job_dir, tier, 'records')!r}, 'r+b').truncate(0)\n"
        f"print(int(window[{tier}].astype('int64').sum()))\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, (run.returncode, run.stderr[-500:])
    assert int(run.stdout) == int(records.astype(np.int64).sum())


def test_a_shared_file_changed_between_units_is_an_error_not_a_crash(tmp_path):
    """The files the parts of a tier map and write in place are checked when mapped and again
    before each unit: a truncation in between is a sentence naming the file."""
    from sowsolve.solver.cluster import _shared, _shared_whole
    path = str(tmp_path / "records.npy")
    np.lib.format.open_memmap(path, mode="w+", dtype=np.uint16, shape=(5000,)).flush()
    mapped = _shared(path, np.uint16, (5000,))
    _shared_whole(path, mapped)
    os.truncate(path, 1000)
    with pytest.raises(ValueError, match="changed in place"):
        _shared_whole(path, mapped)
    with pytest.raises(ValueError, match="not the"):
        _shared(path, np.uint16, (5000,))
    os.unlink(path)
    os.mkfifo(path)
    with pytest.raises(ValueError, match="not a regular file"):
        _shared(path, np.uint16, (5000,))


def test_a_margin_tier_with_a_bad_long_table_is_refused(tmp_path):
    game = make_game("zigzag", cols=2, stones=2)
    tier = max(game.tiers(), key=game.tier_size)
    size = game.tier_size(tier)
    save_array(tier_file(str(tmp_path), tier, "records"), np.zeros(size, np.uint16))
    save_array(tier_file(str(tmp_path), tier, "long"),
               np.array([(size + 5) << 16 | 600], dtype=np.uint64))
    with pytest.raises(ValueError, match="long table"):
        load_tier(str(tmp_path), game, tier)


def test_solve_groups_refuses_what_would_read_outside_or_solve_wrongly():
    from sowsolve.cext import retrograde
    game = make_game("diffusion", cols=4, stones=2)
    capsule = game.kernel().capsule()
    tier = max(game.tiers(), key=game.tier_size)
    size = game.tier_size(tier)
    tables = [None] * (max(game.tiers()) + 1)
    tables[tier] = np.zeros(size, np.uint16)
    order, first = retrograde.level_bounds(capsule, tier, size)
    assert sorted(order.tolist()) == list(range(size)) and first[-1] == size
    with pytest.raises(ValueError, match="outside tier"):
        retrograde.solve_groups(capsule, tier, tables, np.array([size], np.uint32),
                                np.array([0, 1], np.int64))
    with pytest.raises(ValueError, match="bounds"):
        retrograde.solve_groups(capsule, tier, tables, order[:4].copy(), np.array([0, 3], np.int64))
    with pytest.raises(ValueError, match="bounds"):
        retrograde.solve_groups(capsule, tier, tables, order[:4].copy(),
                                np.array([0, 3, 2, 4], np.int64))
    # the highest level first, its lower levels unsolved: an error, never a wrong record
    top = order[first[-2]:].copy() if first[-2] < size else order[-1:].copy()
    with pytest.raises(RuntimeError):
        retrograde.solve_groups(capsule, tier, tables, top,
                                np.array([0, top.size], np.int64))
