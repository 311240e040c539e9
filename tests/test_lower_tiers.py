"""Out of core: the tiers a solve reads kept on disk, mapped (solver/lower.py), give tables
identical, record for record, to a solve that keeps them in memory; leave nothing behind,
however the solve ends; and are chosen by the plan where the tiers in memory would pass the
memory bound."""
import os

import numpy as np
import pytest

import sowsolve
from sowsolve.solver import lower as lower_tiers
from sowsolve.solver.lower import LowerTiers
from sowsolve.tables import solving
from sowsolve.tables.store import open_table


@pytest.fixture
def every_array_mapped(monkeypatch):
    """Map every array, however small (the tests' tiers are all under the 1 MiB threshold)."""
    monkeypatch.setattr(lower_tiers, "SMALL", 0)


def records(path):
    with open_table(path) as table:
        return {tier: table.tier_records(tier).copy() for tier in table.tiers}


def leftovers(folder):
    return [name for name in os.listdir(folder) if name.startswith(".sowsolve-lower-")]


@pytest.mark.parametrize("game, board", [
    ("zigzag", {"cols": 4, "stones": 2}),
    ("zigzag", {"max_stones": 8}),              # the standard board's endgame table
    ("diffusion", {"cols": 4, "stones": 2}),
    ("diffusion-v2", {"cols": 4, "stones": 2}),
])
def test_a_solve_out_of_core_writes_the_same_records(game, board, tmp_path, every_array_mapped):
    inside, outside = tmp_path / "in" / "t.sqlite", tmp_path / "out" / "t.sqlite"
    inside.parent.mkdir()
    outside.parent.mkdir()
    sowsolve.solve(game, table=str(inside), **board)
    work = solving.plan(game, table=str(outside), memory=1, **board)
    assert work.out_of_core and work.estimate["lower_on_disk"] > 0
    sowsolve.solve(game, table=str(outside), memory=1, allow_large=True, **board)
    a, b = records(inside), records(outside)
    assert a.keys() == b.keys() and all(np.array_equal(a[t], b[t]) for t in a)
    assert leftovers(outside.parent) == []


def test_an_interrupted_solve_out_of_core_leaves_nothing_and_resumes_identically(
        tmp_path, every_array_mapped):
    whole, stopped = tmp_path / "whole.sqlite", tmp_path / "stopped.sqlite"
    sowsolve.solve("zigzag", table=str(whole), cols=4, stones=2)
    calls = []

    class Stop:
        """A progress bar that interrupts the solve in its fourth tier."""
        def __init__(self, *args):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n):
            pass

        def set_description(self, desc):
            calls.append(desc)
            if len(calls) == 4:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sowsolve.solve("zigzag", table=str(stopped), cols=4, stones=2, memory=1,
                       allow_large=True, progress=Stop)
    assert leftovers(tmp_path) == []
    with open_table(str(stopped), allow_unfinished=True) as table:
        assert 0 < len(table.solved_tiers) < len(table.tiers)
    sowsolve.solve("zigzag", table=str(stopped), cols=4, stones=2, memory=1, allow_large=True)
    a, b = records(whole), records(stopped)
    assert all(np.array_equal(a[t], b[t]) for t in a)
    assert leftovers(tmp_path) == []


def test_a_kept_tier_is_mapped_privately_and_no_file_names_it(tmp_path, every_array_mapped):
    game = sowsolve.make_game("zigzag", cols=4, stones=2)
    tier = next(t for t in game.tiers() if game.tier_size(t) > 10)
    data = game.value_kind.tier_data(np.arange(game.tier_size(tier), dtype=np.uint16),
                                     np.zeros(0, np.uint64))
    with LowerTiers(str(tmp_path / "t.sqlite")) as kept:
        mapped = kept.keep(game, tier, data)
        assert os.listdir(kept.directory) == [".lock"]  # unlinked: nothing can truncate it
        assert oct(os.stat(kept.directory).st_mode & 0o777) == oct(0o700)
        assert isinstance(mapped.records, np.memmap) and mapped.records.mode == "c"
        assert np.array_equal(mapped.records, data.records)
    assert leftovers(tmp_path) == []


def test_the_plan_keeps_the_lower_tiers_on_disk_only_past_the_bound():
    game = sowsolve.make_game("zigzag", cols=4, stones=3)
    inside = solving.plan(game, table="unused.sqlite", memory=1 << 40)
    assert not inside.out_of_core and inside.estimate["lower_on_disk"] == 0
    bound = inside.estimate["peak_memory"] - 1
    outside = solving.plan(game, table="unused.sqlite", memory=bound)
    assert outside.out_of_core and outside.estimate["peak_memory"] < inside.estimate["peak_memory"]
    assert outside.estimate["lower_on_disk"] > 0


def test_a_memory_bound_below_any_solve_is_refused_in_one_sentence(tmp_path):
    with pytest.raises(sowsolve.BadParameters, match="does not fit"):
        sowsolve.solve("zigzag", table=str(tmp_path / "t.sqlite"), cols=4, stones=2, memory=1)
    with pytest.raises(sowsolve.BadParameters, match="more than 0"):
        solving.plan("zigzag", table=str(tmp_path / "t.sqlite"), cols=4, stones=2, memory=0)
    assert not (tmp_path / "t.sqlite").exists()


def test_the_command_takes_a_memory_bound_and_its_estimate_says_where_the_tiers_go():
    from typer.testing import CliRunner
    from sowsolve.cli.app import app
    runner = CliRunner()
    shown = runner.invoke(app, ["solve", "zigzag", "--cols", "4", "--stones", "3", "--dry-run",
                                "--memory", "64M"])
    assert shown.exit_code == 0, shown.output
    assert "the tiers it reads on disk, mapped" in shown.output
    inside = runner.invoke(app, ["solve", "zigzag", "--cols", "4", "--stones", "3", "--dry-run"])
    assert inside.exit_code == 0 and "on disk, mapped" not in inside.output
    for bad in ("lots", "0", "-5G"):
        refused = runner.invoke(app, ["solve", "zigzag", "--cols", "4", "--memory", bad])
        assert refused.exit_code == 2 and "--memory" in refused.output, (bad, refused.output)
        assert "Traceback" not in refused.output


def test_the_documented_out_of_core_solves_are_the_recorded_ones():
    """Each row of the out-of-core table in the documentation is a bench/results file."""
    import json
    import pathlib
    import re
    from conftest import documentation
    root = pathlib.Path(__file__).resolve().parent.parent
    rows = re.findall(r"^\| (\d+) \(`--memory (\w+)`\) \| ([\d,]+) \| ([\d,]+) s \| ([\d.]+) GB \| "
                      r"([\d.]+) GB \| ([\d.]+) GB \|$", documentation(), flags=re.M)
    assert rows, "the documentation states no out-of-core solve"
    for stones, memory, positions, seconds, own, resident, table in rows:
        found = json.loads((root / f"bench/results/out-of-core-zigzag-{stones}.json").read_text())
        assert f"--max-stones {stones} --memory {memory}" in found["solve"] and found["exit"] == 0
        assert found["positions"] == int(positions.replace(",", ""))
        assert round(found["wall_seconds"]) == int(seconds.replace(",", ""))
        assert round(found["peak_own_memory"] / 1e9, 1) == float(own)
        assert round(found["peak_resident"] / 1e9, 1) == float(resident)
        assert round(found["table_bytes"] / 1e9, 1) == float(table)
        assert found["peak_own_memory"] <= found["memory_limit"]
        assert found["lower_tier_files_left"] == []


def test_a_worker_s_lower_tiers_leave_no_file_even_when_it_is_killed(tmp_path):
    """In a cluster worker the tiers below go to files without a name in its local directory:
    a worker killed (SIGKILL) while it holds them leaves nothing there."""
    import subprocess
    import sys
    script = (
        "import os, signal, numpy as np\n"
        "from sowsolve.solver.lower import LowerTiers\n"
        "from sowsolve.solver.games import make_game\n"
        "game = make_game('zigzag', cols=2, stones=2)\n"
        "tier = max(game.tiers(), key=game.tier_size)\n"
        "data = game.value_kind.tier_data(np.zeros(game.tier_size(tier), np.uint16),\n"
        "                                 np.zeros(0, np.uint64))\n"
        f"kept = LowerTiers(within={str(tmp_path)!r})\n"
        "import sowsolve.solver.lower as lower; lower.SMALL = 0\n"
        "held = kept.keep(game, tier, data)\n"
        "assert isinstance(held.records, np.memmap)\n"
        "print(sorted(os.listdir(kept.directory)), flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == -9, done.stderr
    assert done.stdout.strip() == "[]"
    assert os.listdir(tmp_path) == []


def test_a_killed_solves_private_directory_is_removed_by_the_next(tmp_path):
    """A solve killed with SIGKILL leaves its empty private directory; the next solve beside
    the table removes it -- and never a running solve's (its lock is held)."""
    import fcntl
    import subprocess
    import sys
    import time
    table = tmp_path / "t.sqlite"
    script = ("import sys, time; from sowsolve.solver.lower import LowerTiers; "
              f"LowerTiers(beside={str(table)!r}); print('ready', flush=True); time.sleep(60)")
    dead = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert dead.stdout.readline().strip() == "ready"
    dead.kill()
    dead.wait()
    left = leftovers(tmp_path)
    assert len(left) == 1                                    # what SIGKILL leaves
    old = tmp_path / ".sowsolve-lower-beforelocks"            # a dead solve of before the locks
    old.mkdir()
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    running = tmp_path / ".sowsolve-lower-running"            # a live solve's: its lock held
    running.mkdir()
    held = os.open(running / ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        with lower_tiers.LowerTiers(beside=str(table)) as mine:
            assert sorted(leftovers(tmp_path)) == sorted([".sowsolve-lower-running",
                                                          os.path.basename(mine.directory)])
        assert leftovers(tmp_path) == [".sowsolve-lower-running"]
    finally:
        os.close(held)
