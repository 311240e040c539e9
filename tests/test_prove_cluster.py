"""The proof search on a Dask cluster (solver/proofcluster.py, `prove --workers/--scheduler`):
the same value as the in-process search and a proof that checks, on 3x4 and a 4x4 position;
workers killed mid-proof lose nothing proved; a stopped proof goes on from the driver's
checkpoint; a forged checkpoint never gives a value; bad options are usage errors."""
import json
import os
import signal
import subprocess
import sys
import threading
import time
import zipfile

import numpy as np
import pytest
from typer.testing import CliRunner

from sowsolve.cli.app import app
from sowsolve.solver import proof as proofs, proofcluster
from sowsolve.solver.games import make_game

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.slow

ENTRIES = 1 << 18
SOWSOLVE = os.path.join(os.path.dirname(sys.executable), "sowsolve")


@pytest.fixture(autouse=True)
def fresh_workers(request):
    """Each test's workers start without the search tables earlier tests left them (a worker
    keeps its table from job to job, and so from proof to proof of one board)."""
    if "client" in request.fixturenames:
        request.getfixturevalue("client").run(proofcluster.forget)


def checks(game, position, result) -> None:
    """The cluster's proof replays with the compiled checker from the position, reaching every
    position it holds (what `check --proof` does with a proof file)."""
    proof = proofs.ProofFile(game, position, result.value, result.winner_choices.keys,
                             result.winner_choices.chosen)
    report = proofs.verify_proof(proof, samples=200)
    assert report["value"] == result.value and report["winner_positions"] == len(result.winner_choices)


@pytest.mark.parametrize("size, position, job_nodes", [
    ("3x4", None, 20000),
    ("4x4", "2010/0132/0101/2111 D", 40000),     # four plies in: 158,000 expansions in process
])
def test_the_cluster_proves_what_the_search_in_process_proves(client, size, position, job_nodes):
    game = make_game("overflow", size=size)
    start = game.initial() if position is None else game.parse_position(position)
    here, _ = proofs.prove(game, start, 192 << 20)
    there, expanded = proofcluster.prove_on_cluster(client, game, start, ENTRIES, job_nodes=job_nodes)
    assert there.value == here.value and expanded == there.nodes > job_nodes   # split into jobs
    checks(game, start, there)
    for text in there.winning_moves:            # each move it names wins: a proof from the child
        child = game.play(start, game.parse_move(start, text))
        lost, _ = proofs.prove(game, child, 192 << 20)
        assert lost.value == "loss", text


def test_workers_killed_mid_proof_lose_nothing_proved(client):
    game = make_game("overflow", size="3x4")
    start = game.initial()
    pids = list(client.run(os.getpid).values())
    done, errors, results = threading.Event(), [], []

    def prove():
        try:
            results.append(proofcluster.prove_on_cluster(client, game, start, ENTRIES, job_nodes=5000))
        except BaseException as exc:        # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=prove)
    thread.start()
    time.sleep(1.0)
    killed_mid_proof = not done.is_set()
    for pid in pids:                        # every worker at once: their jobs go to the new ones
        os.kill(pid, signal.SIGKILL)
    thread.join(300)
    assert killed_mid_proof, "the proof ended before the workers were killed"
    assert not errors, errors
    result, _ = results[0]
    assert result.value == "win"
    checks(game, start, result)
    client.wait_for_workers(2, timeout=60)


def test_a_stopped_proof_goes_on_from_the_driver_s_checkpoint(client, tmp_path):
    game = make_game("overflow", size="3x4")
    start = game.initial()
    checkpoint = str(tmp_path / "c.ckpt")
    stopped, expanded = proofcluster.prove_on_cluster(client, game, start, ENTRIES, job_nodes=5000,
                                                      max_nodes=30000, checkpoint=checkpoint)
    assert stopped is None and expanded >= 30000 and os.path.isfile(checkpoint)
    with zipfile.ZipFile(checkpoint) as archive:
        saved_nodes = int(np.frombuffer(archive.read("keys.npy")[128:], dtype="<u8").size)
    assert saved_nodes > 1                   # the tree grew before it stopped
    result, total = proofcluster.prove_on_cluster(client, game, start, ENTRIES, job_nodes=20000,
                                                  checkpoint=checkpoint)
    assert result.value == "win" and total > expanded
    checks(game, start, result)
    # a checkpoint of the search in process is not one of the cluster's, nor the reverse
    with pytest.raises(proofs.BadProof, match="not a checkpoint"):
        proofs.prove(game, start, 192 << 20, checkpoint=checkpoint)


def _rewrite(path, **arrays):
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            stem = name[:-len(".npy")]
            if stem in arrays:
                with archive.open(name, "w") as member:
                    np.lib.format.write_array(member, arrays[stem], allow_pickle=False)
            else:
                archive.writestr(name, data)


def _array(path, name):
    with zipfile.ZipFile(path) as archive, archive.open(f"{name}.npy") as member:
        return np.lib.format.read_array(member, allow_pickle=False)


def test_a_forged_checkpoint_never_gives_a_value(client, tmp_path):
    """A checkpoint whose values lie (every child of the 3x4 start, two of which lose for their
    side to move, called a win a job proved) ends in an error naming the checkpoint, never in
    a value; values of the tree's inner positions are worked out again, not read; one whose form
    is broken, or whose members are compressed, is refused before any job."""
    game = make_game("overflow", size="3x4")
    start = game.initial()
    checkpoint = str(tmp_path / "c.ckpt")
    proofcluster.prove_on_cluster(client, game, start, ENTRIES, job_nodes=2000, max_nodes=20000,
                                  checkpoint=checkpoint)
    numbers, counts, keys = (_array(checkpoint, name) for name in ("numbers", "counts", "keys"))
    numbers = numbers.copy()
    root = game.key(start)[1]
    at = int(np.flatnonzero(keys == root)[0])
    first = int(counts[:at][counts[:at] > 0].sum())
    kids = _array(checkpoint, "children")[first:first + int(counts[at])]
    for kid in kids:
        numbers[int(np.flatnonzero(keys == kid)[0])] = (0, proofcluster.INFINITY, proofcluster.WIN)
    roots = np.union1d(_array(checkpoint, "roots"), kids).astype("<u8")
    forged = str(tmp_path / "forged.ckpt")
    with open(checkpoint, "rb") as f, open(forged, "wb") as g:
        g.write(f.read())
    _rewrite(forged, numbers=numbers, roots=roots)
    with pytest.raises(proofs.DamagedProof, match="does not check"):
        proofcluster.prove_on_cluster(client, game, start, ENTRIES, job_nodes=2000, checkpoint=forged)
    # the root called won with children (no job proved it): its value is worked out again
    numbers = _array(checkpoint, "numbers").copy()
    numbers[at] = (0, proofcluster.INFINITY, proofcluster.WIN)
    inner = str(tmp_path / "inner.ckpt")
    with open(checkpoint, "rb") as f, open(inner, "wb") as g:
        g.write(f.read())
    _rewrite(inner, numbers=numbers)
    tree = proofcluster.load_tree(inner, proofcluster._identity(game, start, None), root)
    assert tree.value == proofcluster.UNKNOWN
    broken = str(tmp_path / "broken.ckpt")
    with open(checkpoint, "rb") as f, open(broken, "wb") as g:
        g.write(f.read())
    _rewrite(broken, children=np.full(3, 12345, dtype="<u8"))
    with pytest.raises(proofs.BadProof, match="not a checkpoint of a proof on a cluster"):
        proofcluster.prove_on_cluster(client, game, start, ENTRIES, checkpoint=broken)
    squeezed = str(tmp_path / "squeezed.ckpt")
    with zipfile.ZipFile(checkpoint) as source, \
            zipfile.ZipFile(squeezed, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            target.writestr(name, source.read(name))
    with pytest.raises(proofs.BadProof, match="not a checkpoint of a proof on a cluster"):
        proofcluster.load_tree(squeezed, proofcluster._identity(game, start, None), root)


def test_a_budget_holds_on_a_cluster(client):
    """--max-nodes on a cluster: no job is given more than what is left of the budget."""
    game = make_game("overflow", size="3x4")
    for budget in (1, 5000):
        result, expanded = proofcluster.prove_on_cluster(client, game, game.initial(), ENTRIES,
                                                         job_nodes=1 << 22, max_nodes=budget)
        assert result is None and budget <= expanded <= budget + 2, (budget, expanded)


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_prove_on_workers_from_the_command_line(tmp_path):
    proof = tmp_path / "p.proof"
    done = subprocess.run([SOWSOLVE, "prove", "overflow", "--size", "3x4", "--workers", "2",
                           "--job-nodes", "20000", "--memory", "256M", "--proof", str(proof), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["value"] == "win" and report["cluster"] == {"workers": 2, "job_nodes": 20000}
    # gathered from the workers' subproofs, not drawn from one search's table: no walk to report
    assert "positions_walked" not in report["proof"] and report["proof"]["winner_positions"] > 0
    assert run("check", "--proof", proof).exit_code == 0
    text = subprocess.run([SOWSOLVE, "prove", "overflow", "--size", "3x3", "--workers", "2",
                           "--memory", "256M"], capture_output=True, text=True, timeout=300)
    assert text.returncode == 0 and "on 2 workers" in text.stdout, text.stdout + text.stderr
    for bad, what in ((["--workers", "2", "--threads", "2"], "--threads"),
                      (["--workers", "2", "--job-nodes", "0"], "--job-nodes"),
                      (["--job-nodes", "5"], "--job-nodes is for a proof on a cluster"),
                      (["--workers", "0"], "--workers"),
                      (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "cannot be given together")):
        result = run("prove", "overflow", "--size", "3x4", *bad)
        assert result.exit_code == 2 and what in result.output, (bad, result.output)


def test_a_header_numpy_cannot_parse_is_refused(tmp_path):
    """A member whose .npy header is not a Python literal (numpy's parser raises a TokenError):
    refused with a sentence, by the cluster's reader and the search's alike."""
    game = make_game("overflow", size="3x3")
    start = game.initial()
    path = str(tmp_path / "bad.ckpt")
    header = b"\x93NUMPY\x01\x00\x10\x00{'descr': os.system('id')}"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name in proofcluster.TREE_ARRAYS:
            archive.writestr(f"{name}.npy", header)
        for name in ("phi", "delta", "work", "nodes"):
            archive.writestr(f"{name}.npy", header)
    with pytest.raises(proofs.BadProof, match="not a checkpoint"):
        proofcluster.load_tree(path, proofcluster._identity(game, start, None), game.key(start)[1])
    with pytest.raises(proofs.BadProof, match="not a checkpoint"):
        proofs.prove(game, start, 192 << 20, checkpoint=path)


def _job(game, position, budget, name):
    return proofcluster.Job(game.name, tuple(sorted(game.parameters().items())),
                            game.key(position)[1], budget, ENTRIES, None, None, name)


def test_a_job_the_driver_stops_ends_on_its_worker():
    """A job running when its proof ends is stopped where it runs (Dask cancels a job waiting
    its turn, not one running): its search ends and it answers None; a job stopped before it
    began ends as it begins, without searching."""
    game = make_game("overflow", size="4x4")        # proved in 4.4 M expansions, if not stopped
    answers = []
    running = threading.Thread(target=lambda: answers.append(
        proofcluster.run_job(_job(game, game.initial(), 1 << 40, "long"))))
    running.start()
    deadline = time.monotonic() + 60
    while not proofcluster._running and running.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proofcluster.stop_jobs(["long", "never-begun"]) == 1
    running.join(120)
    assert not running.is_alive() and answers == [None]
    searched = proofcluster._kept["search"][1].nodes
    assert proofcluster.run_job(_job(game, game.initial(), 1 << 40, "never-begun")) is None
    assert proofcluster._kept["search"][1].nodes == searched
    proofcluster.forget()


class _Recording:
    """A client that notes which worker each job was asked of."""

    def __init__(self, client):
        self.client, self.asked = client, []

    def __getattr__(self, name):
        return getattr(self.client, name)

    def submit(self, function, job, **options):
        self.asked.append((job.key, (options.get("workers") or [None])[0]))
        return self.client.submit(function, job, **options)


def test_a_position_s_job_goes_to_the_worker_that_searched_its_parent(client, monkeypatch):
    """With room for every job on every worker, each position a job answered with is asked of
    the worker that answered, and runs there."""
    monkeypatch.setattr(proofcluster, "JOBS_PER_WORKER", 1000)
    answers = []
    answer = proofcluster.Tree.answer
    monkeypatch.setattr(proofcluster.Tree, "answer",
                        lambda tree, result: (answers.append(result), answer(tree, result))[1])
    game = make_game("overflow", size="3x4")
    start = game.initial()
    recording = _Recording(client)
    result, _ = proofcluster.prove_on_cluster(recording, game, start, ENTRIES, job_nodes=5000)
    assert result.value == proofs.prove(game, start, 192 << 20)[0].value
    home = {int(child): r["worker"] for r in answers if r["value"] == proofcluster.UNKNOWN
            for child, *_ in r["children"]}
    ran = {int(r["key"]): r["worker"] for r in answers}
    workers = set(client.nthreads())
    with_home = [(key, asked) for key, asked in recording.asked if key in home]
    assert with_home, "no job of a position an answer brought"
    for key, asked in with_home:
        assert asked == home[key] and asked in workers
        if key in ran:
            assert ran[key] == asked


def test_no_job_is_left_to_dask_once_its_answer_is_taken(client, monkeypatch):
    """Every job's future is released once its answer is taken (or the job stopped): Dask
    computes again, on another worker, a job the driver still holds whose worker died -- and
    the driver's waits that time out leave references to the futures behind them in cycles
    (held here: the collector off, and waits of 10 ms)."""
    import gc
    monkeypatch.setattr(proofcluster, "HOME_CHECK_SECONDS", 0.01)
    game = make_game("overflow", size="3x4")
    start = game.initial()
    gc.disable()
    try:
        result, _ = proofcluster.prove_on_cluster(client, game, start, ENTRIES, job_nodes=5000)
        assert result.value == proofs.prove(game, start, 192 << 20)[0].value

        def jobs(dask_scheduler):
            return [str(k) for k in dask_scheduler.tasks if str(k).startswith("sowsolve-prove-")]
        deadline = time.monotonic() + 30
        while client.run_on_scheduler(jobs) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.run_on_scheduler(jobs) == []
    finally:
        gc.enable()
