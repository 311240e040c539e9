"""One score tier split into blocks across processes (solver/splittier.py, cext/scoresolve.pyx
ScorePart, the cluster's `solve_block_task`): the records of every block, joined, are those of
the whole tier's solve (cext solve_tier, itself checked against the reference solver); a part
run again goes on from its saved state to the same records; files of the exchange that this
split solve did not write (planted, forged, links, FIFOs, another round's) are refused before
any offer reaches a kernel."""
import os
import threading

import numpy as np
import pytest

from sowsolve.solver.games import make_game
from sowsolve.solver.kernels import solve_score_tier
from sowsolve.solver.splittier import (BLOCK_ALIGN, FileExchange, Resume, Saved, blocks,
                                       solve_block, solve_split)
from sowsolve.solver.tiers import TierManager, no_progress


def test_blocks_cover_a_tier_in_aligned_consecutive_pieces():
    for n in (0, 1, 7, 64, 65, 1000, 123_457, 10**7 + 3):
        for parts in (1, 2, 3, 5, 8):
            bounds = blocks(n, parts)
            assert len(bounds) == parts and bounds[0][0] == 0 and bounds[-1][1] == n
            for (lo, hi), (nlo, _) in zip(bounds, bounds[1:]):
                assert lo <= hi == nlo
            for lo, hi in bounds:
                assert lo % BLOCK_ALIGN == 0 or lo == hi == n
            sizes = [hi - lo for lo, hi in bounds]
            assert max(sizes) - min(sizes) <= 2 * BLOCK_ALIGN or n < parts * BLOCK_ALIGN


class _Compare:
    """An executor that solves every tier whole and split, asserts they agree, and hands the
    tier manager the whole tier's records."""

    def __init__(self, parts, folder, least=0, every=0.0):
        self.parts, self.folder, self.least, self.every = parts, folder, least, every
        self.split = 0

    def run(self, worker, tier, window, calls):
        game = worker.game
        n = game.tier_size(tier)
        whole = solve_score_tier(game.score_tier(tier, window), 1)
        if n >= self.least:
            for parts in self.parts:
                folder = os.path.join(self.folder, f"{tier}-{parts}")
                os.mkdir(folder)
                records, long, finals, endless, _ = solve_split(
                    lambda lo, hi: worker.part(tier, window, lo, hi), n, parts, folder,
                    self.every)
                assert np.array_equal(records, whole[0]), (tier, parts)
                assert np.array_equal(long, whole[1]), (tier, parts)
                assert (finals, endless) == whole[2:], (tier, parts)
                self.split += 1
        return worker.assemble(whole[0], whole[1])

    def release(self, tier):
        pass


def _every_tier(game, executor, order=None):
    store = {}
    TierManager(game, lambda t: store[t], executor, order).run(
        game.solver.worker(game, 1), lambda t, data, s: store.__setitem__(t, data), set(),
        no_progress)
    return store


def test_split_blocks_give_the_records_of_the_whole_tier(tmp_path):
    """Zig Zag 2x4 with 2 seeds a pit, every tier in 2 and in 3 blocks (the smallest tiers
    leave blocks empty), saving after every threshold."""
    game = make_game("zigzag", cols=2, stones=2)
    executor = _Compare((2, 3), str(tmp_path))
    _every_tier(game, executor)
    assert executor.split == 2 * len(game.tiers())


@pytest.mark.slow
def test_split_blocks_of_the_standard_board_give_the_records_of_the_whole_tier(tmp_path):
    """The standard board's endgame tiers of at most 10 seeds, each of 1,000 positions or more
    in 2 blocks."""
    game = make_game("zigzag")
    order = [t for group in game.earlier_tiers(10) for t in group if t in game.tiers()]
    executor = _Compare((2,), str(tmp_path), least=1000)
    _every_tier(game, executor, order)
    assert executor.split >= 6


def _top_tier(cols=2, stones=2):
    """The largest tier of a small board, with its window, for the tests below."""
    game = make_game("zigzag", cols=cols, stones=stones)
    store = _every_tier(game, _Compare((), "unused", least=1 << 62))
    top = max(game.tiers(), key=game.tier_size)
    window = {t: store[t] for t in game.tier_dependencies(top)}
    return game, top, window


class _Crash(Exception):
    pass


class _Crashing(FileExchange):
    """An exchange that stops its part (as a killed worker would) when it reaches a round."""

    def __init__(self, *args, at: int, **kw):
        super().__init__(*args, **kw)
        self.at = at

    def trade(self, payloads, values, limits=None):
        if self.round + 1 == self.at:
            raise _Crash()
        return super().trade(payloads, values, limits)


def test_a_part_run_again_goes_on_from_its_saved_state_to_the_same_records(tmp_path):
    game, tier, window = _top_tier()
    worker = game.solver.worker(game, 1)
    n = game.tier_size(tier)
    whole = solve_score_tier(game.score_tier(tier, window), 1)
    bounds = blocks(n, 2)
    key = os.urandom(32)
    total_rounds = None
    # first, how many rounds the split takes, to crash in the middle of it
    records, long, *_rest, figures = solve_split(lambda lo, hi: worker.part(tier, window, lo, hi),
                                                 n, 2, str(tmp_path / "count"))
    total_rounds = figures[0].rounds
    assert total_rounds > 20
    folder = str(tmp_path / "run")
    os.mkdir(folder)
    results, errors = {}, []

    def run(part, exchange):
        try:
            results[part] = solve_block(worker.part(tier, window, *bounds[part]), exchange,
                                        bounds, Saved(folder, part, key, 0.0))
        except BaseException as exc:    # noqa: BLE001 - checked below
            errors.append((part, exc))

    crash_at = total_rounds // 2
    steady = FileExchange(folder, 0, 2, key)
    first = _Crashing(folder, 1, 2, key, at=crash_at)
    threads = [threading.Thread(target=run, args=(0, steady), daemon=True),
               threading.Thread(target=run, args=(1, first), daemon=True)]
    for t in threads:
        t.start()
    threads[1].join(60)
    assert errors and errors[0][0] == 1 and isinstance(errors[0][1], _Crash)
    assert os.path.exists(os.path.join(folder, "state-1"))     # it had saved before
    errors.clear()
    again = FileExchange(folder, 1, 2, key)                     # the part run again
    rerun = threading.Thread(target=run, args=(1, again), daemon=True)
    rerun.start()
    rerun.join(60)
    threads[0].join(60)
    assert not errors, errors
    assert 0 < again.figures.resumed_round < crash_at
    joined = np.concatenate([results[0][0], results[1][0]])
    assert np.array_equal(joined, whole[0])
    assert np.array_equal(np.sort(np.concatenate([results[0][1], results[1][1]])), whole[1])


# --- files of the exchange that this split solve did not write --------------------------------

def _pair(tmp_path):
    key = os.urandom(32)
    folder = str(tmp_path)
    return folder, key, FileExchange(folder, 0, 2, key), FileExchange(folder, 1, 2, key)


def _valid_file(folder, key, r=1, src=1, dst=0, payload=b"", values=(5,)):
    """A file part `src` would write for round r (made with the key: as the part writes it)."""
    sender = FileExchange(folder, src, 2, key)
    sender.round = r - 1
    waiting = sender._await
    sender._await = lambda *a: (_ for _ in ()).throw(_Stop())     # write only, then stop
    try:
        sender.trade([payload, payload], list(values))
    except _Stop:
        pass
    sender._await = waiting
    return sender.path(r, src, dst)


class _Stop(Exception):
    pass


def test_a_forged_file_of_the_exchange_is_refused(tmp_path):
    folder, key, receiver, _ = _pair(tmp_path)
    path = _valid_file(folder, os.urandom(32))      # the right layout, another key
    assert os.path.basename(path) == "round-0000000001-1-0"
    receiver._await = lambda *a: None
    with pytest.raises(ValueError, match="authentication fails"):
        receiver.trade([b"", b""], [0])


def test_a_file_of_another_round_or_pair_is_refused(tmp_path):
    folder, key, receiver, _ = _pair(tmp_path)
    path = _valid_file(folder, key, r=7)            # a genuine file of round 7 ...
    os.replace(path, receiver.path(1, 1, 0))        # ... put in round 1's place
    receiver._await = lambda *a: None
    with pytest.raises(ValueError, match="not the file of round 1 from part 1"):
        receiver.trade([b"", b""], [0])


@pytest.mark.parametrize("kind", ["symlink", "fifo", "huge", "short"])
def test_links_fifos_and_files_of_the_wrong_size_are_refused_without_hanging(tmp_path, kind):
    folder, key, receiver, _ = _pair(tmp_path)
    path = receiver.path(1, 1, 0)
    if kind == "symlink":
        genuine = _valid_file(folder, key)
        os.rename(genuine, genuine + ".real")
        os.symlink(genuine + ".real", path)
        says = "symbolic link"
    elif kind == "fifo":
        os.mkfifo(path)
        says = "not a regular file"
    elif kind == "huge":
        with open(path, "wb") as f:
            f.truncate(1 << 40)                     # sparse: refused by its size alone
        says = "not a file of this split solve"
    else:
        with open(path, "wb") as f:
            f.write(b"\0" * 10)
        says = "not a file of this split solve"
    receiver._await = lambda *a: None
    with pytest.raises(ValueError, match=says):
        receiver.trade([b"", b""], [0])


def test_hidden_and_partial_files_in_the_folder_are_never_read(tmp_path):
    """Files the exchange did not name (a dot file, a partial write, another name) change
    nothing: a split solve through a folder full of them gives the whole tier's records."""
    game, tier, window = _top_tier()
    worker = game.solver.worker(game, 1)
    for name in (".round-0000000001-1-0", ".round-0000000001-1-0.x.partial",
                 "round-1-1-0", "state-9", ".state-0"):
        with open(tmp_path / name, "wb") as f:
            f.write(os.urandom(100))
    records, long, *_ = solve_split(lambda lo, hi: worker.part(tier, window, lo, hi),
                                    game.tier_size(tier), 2, str(tmp_path))
    whole = solve_score_tier(game.score_tier(tier, window), 1)
    assert np.array_equal(records, whole[0]) and np.array_equal(long, whole[1])


def test_offers_outside_the_receiving_block_never_reach_the_kernel(tmp_path):
    """Even a file with the right key (a sender gone wrong) cannot make the kernel write outside
    its block: every offer is checked against the block and the phase first."""
    game, tier, window = _top_tier()
    worker = game.solver.worker(game, 1)
    n = game.tier_size(tier)
    (lo, hi), _ = blocks(n, 2)
    part = worker.part(tier, window, lo, hi)
    part.summarise(1)
    part.seed(-part.bound)
    for bad in ([hi, 3], [n + 10, 3], [2**32 - 1, 3], [lo, 0], [lo, 65536], [lo, 2**31],
                [lo, 2**32 - 1]):
        with pytest.raises(ValueError, match="not one for positions"):
            part.receive(np.asarray([bad], dtype=np.uint32))
    part.level(0)
    part.level(4)                       # an offer for a level already settled would be lost
    for bad in ([lo, 4], [lo, 2]):
        with pytest.raises(ValueError, match="not one for positions"):
            part.receive(np.asarray([bad], dtype=np.uint32))
    for bad in ([lo, 6], [lo, 65533], [lo, 65535]):  # authentic, but no part offers those now
        with pytest.raises(ValueError, match="not one for positions"):
            part.receive(np.asarray([bad], dtype=np.uint32))
    part.receive(np.asarray([[lo, 5]], dtype=np.uint32))
    with pytest.raises(ValueError, match="no level 3"):
        part.level(3)
    with pytest.raises(ValueError):
        part.receive(np.zeros((1, 3), dtype=np.uint32))
    with pytest.raises(ValueError, match="not one of a tier"):
        worker.part(tier, window, 3, hi)            # a block must start on a multiple of 8
    with pytest.raises(ValueError, match="not one of a tier"):
        worker.part(tier, window, 0, n + 1)


def test_a_removed_round_file_is_an_error_not_a_wait_for_good(tmp_path):
    """Round 1's file from part 1 is gone while its round 2 is there (another run of this part
    removed it, or someone else): the part says so within seconds."""
    folder, key, receiver, _ = _pair(tmp_path)
    later = _valid_file(folder, key, r=2)
    assert os.path.exists(later)
    with pytest.raises(ValueError, match="is gone while part 1 has gone on past round 1"):
        receiver.trade([b"", b""], [0])


def test_a_round_file_missing_after_its_sender_ended_is_an_error(tmp_path):
    """The last round's file removed: no later round comes, but the sender's end mark says
    the file is gone."""
    folder, key, receiver, sender = _pair(tmp_path)
    sender.ended()
    with pytest.raises(ValueError, match="is gone while part 1 has gone on past round 1"):
        receiver.trade([b"", b""], [0])


def test_an_older_saved_state_of_the_same_part_is_an_error_not_a_wait_for_good(tmp_path):
    """A part run again from a state older than the files it was sent since (an older copy of
    its own state put back, or another run of it at once that went on and saved): the
    files it needs are gone, and it says so within seconds."""
    game, tier, window = _top_tier()
    worker = game.solver.worker(game, 1)
    n = game.tier_size(tier)
    bounds = blocks(n, 2)
    key = os.urandom(32)
    folder = str(tmp_path)
    copies = []

    class Keeping(Saved):
        def save(self, resume):
            super().save(resume)
            with open(self.path, "rb") as f:
                copies.append(f.read())

    errors = []

    def run(part, exchange, saved):
        try:
            solve_block(worker.part(tier, window, *bounds[part]), exchange, bounds, saved)
        except BaseException as exc:    # noqa: BLE001 - checked below
            errors.append((part, exc))

    steady = threading.Thread(target=run, daemon=True, args=(
        0, FileExchange(folder, 0, 2, key), Saved(folder, 0, key, 0.0)))
    first = threading.Thread(target=run, daemon=True, args=(
        1, _Crashing(folder, 1, 2, key, at=40), Keeping(folder, 1, key, 0.0)))
    steady.start()
    first.start()
    first.join(60)
    assert len(copies) >= 3 and isinstance(errors[0][1], _Crash)
    with open(os.path.join(folder, "state-1"), "wb") as f:
        f.write(copies[0])                  # its own, genuine, but older state
    errors.clear()
    again = threading.Thread(target=run, daemon=True, args=(
        1, FileExchange(folder, 1, 2, key), Saved(folder, 1, key, 0.0)))
    again.start()
    again.join(20)
    assert not again.is_alive(), "the part run again waits for good"
    assert errors and errors[0][0] == 1 and "is gone while part 0 has gone on" in str(errors[0][1])


def test_a_block_result_of_another_part_or_key_is_refused(tmp_path):
    from sowsolve.solver.splittier import block_path, load_block, save_block
    key = os.urandom(32)
    records = np.arange(64, dtype=np.uint16)
    long = np.asarray([5 << 16 | 600], dtype=np.uint64)
    save_block(str(tmp_path), key, 0, (0, 64, 128), records, long)
    got = load_block(str(tmp_path), key, 0, (0, 64, 128))
    assert np.array_equal(got[0], records) and np.array_equal(got[1], long)
    os.replace(block_path(str(tmp_path), 0), block_path(str(tmp_path), 1))   # swapped parts
    with pytest.raises(ValueError, match="not the block of part 1"):
        load_block(str(tmp_path), key, 1, (64, 128, 128))
    save_block(str(tmp_path), os.urandom(32), 0, (0, 64, 128), records, long)
    with pytest.raises(ValueError, match="authentication fails"):
        load_block(str(tmp_path), key, 0, (0, 64, 128))


def test_a_saved_state_that_is_not_this_parts_is_refused(tmp_path):
    game, tier, window = _top_tier()
    worker = game.solver.worker(game, 1)
    n = game.tier_size(tier)
    (lo, hi), _ = blocks(n, 2)
    key = os.urandom(32)
    part = worker.part(tier, window, lo, hi)
    part.summarise(1)
    forged = Saved(str(tmp_path), 0, os.urandom(32), 0.0)   # written with another key
    forged.block = (lo, hi, n)
    forged.save(Resume(1, 0, [0] * (2 * part.bound + 1), 3, part.state()))
    keyed = Saved(str(tmp_path), 0, key, 0.0)
    keyed.block = (lo, hi, n)
    with pytest.raises(ValueError, match="authentication fails"):
        keyed.load(hi - lo)
    other = Saved(str(tmp_path), 1, key, 0.0)         # another part's state in part 0's place
    other.block = (lo, hi, n)
    other.save(Resume(1, 0, [0] * (2 * part.bound + 1), 3, part.state()))
    os.replace(other.path, os.path.join(str(tmp_path), "state-0"))
    mine = Saved(str(tmp_path), 0, key, 0.0)
    mine.block = (lo, hi, n)
    with pytest.raises(ValueError, match="not the saved state of part 0 of this tier"):
        mine.load(hi - lo)
    genuine = Saved(str(tmp_path), 0, key, 0.0)
    genuine.block = (lo, hi, n)
    state = part.state()
    state["longs"] = np.asarray([hi + 5, 600], dtype=np.uint32)  # an entry outside the block
    genuine.save(Resume(1, 0, [0] * (2 * part.bound + 1), 3, state))
    resume = genuine.load(hi - lo)
    with pytest.raises(ValueError, match="not one of this block"):
        worker.part(tier, window, lo, hi).restore(resume.state, 1, 1)


def test_the_documented_split_figures_are_the_recorded_ones():
    """The README's sentence and results.md's tables on split tiers state what
    bench/results/split-zigzag-18.json and split-projection.json hold."""
    import json
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parent.parent
    measured = json.loads((root / "bench/results/split-zigzag-18.json").read_text())
    projected = json.loads((root / "bench/results/split-projection.json").read_text())
    (run,) = measured["runs"]
    assert run["identical_records"] and len(run["split"]["worker_peak_own_memory"]) == 2
    readme = (root / "README.md").read_text()
    said = re.search(r"2 workers solve the tables of at most (\d+) seeds in ([\d.]+) times the "
                     r"time of\s+one process, each with ([\d.]+) of its memory. Projected from "
                     r"that run, at most (\d+) seeds would take\s+(\d+) workers of (\d+) GB about "
                     r"([\d.]+) hours; the whole board does not fit this way \(every worker would"
                     r"\s+read (\d+) TB of lower tiers\)", readme)
    assert said, "the README states no split figures"
    stones, ratio, share, target, workers, memory, hours, lower = said.groups()
    assert f"--max-stones {stones}" in measured["command"]
    assert float(ratio) == run["time_ratio"] <= 1.5
    assert float(share) == run["worker_over_one_process_own_memory"] <= 0.6
    assert projected["assumed"]["memory_per_worker_gb"] == float(memory)
    by_target = {t["max_stones"]: t for t in projected["targets"]}
    assert by_target[int(target)]["workers"] == int(workers)
    assert by_target[int(target)]["hours"] == float(hours)
    assert not by_target[60]["fits"]
    assert round(by_target[60]["lower_tiers_bytes_per_worker"] / 1e12) == int(lower)
    results = (root / "docs/results.md").read_text()
    row = re.search(r"^\| (\d+) \| ([\d,]+) \| (\d+) s \| (\d+) s \| ([\d.]+) \| ([\d.]+) GB / "
                    r"([\d.]+) GB \(([\d.]+)\) \| ([\d,]+) \| ([\d.]+) GB \|$", results, re.M)
    assert row, "results.md states no split solve"
    (stones2, positions, one, split, ratio2, own_one, own_worker, share2, rounds,
     traded) = row.groups()
    cluster = run["split"]["cluster"]["split_score_tiers"]
    assert stones2 == stones and int(positions.replace(",", "")) == run["positions"]
    assert int(one) == round(run["in_process"]["wall_seconds"])
    assert int(split) == round(run["split"]["wall_seconds"])
    assert float(ratio2) == run["time_ratio"] and float(share2) == float(share)
    assert float(own_one) == round(run["in_process"]["peak_own_memory"] / 1e9, 2)
    assert float(own_worker) == round(max(run["split"]["worker_peak_own_memory"]) / 1e9, 2)
    assert int(rounds.replace(",", "")) == cluster["rounds"]
    assert float(traded) == round(cluster["bytes"] / 1e9, 1)
    table = re.findall(r"^\| (\d+)[^|]* \| [^|]+ \| [^|]+ \| (\d+|--) \| [^|]+ \| [^|]+ \| "
                       r"([\d.]+|--) \|$", results, re.M)
    assert [int(line[0]) for line in table] == [24, 30, 60]
    for line in table:
        stones3, workers3, hours3 = line
        if workers3 != "--":
            assert by_target[int(stones3)]["workers"] == int(workers3)
            assert by_target[int(stones3)]["hours"] == float(hours3)
