"""The proof search (df-pn, `sowsolve prove`) against the solved Overflow tables, its proof files
against the verifier (which replays them with the reference rules), and tampered proofs."""
import json
import random
import zipfile
import zlib

import numpy as np
import pytest
import zstandard
from typer.testing import CliRunner

from conftest import documentation, random_walk, solve_to
from sowsolve.cli.app import app
from sowsolve.solver import proof as proofs
from sowsolve.solver.games import make_game
from sowsolve.tables.store import open_table

MEMORY = 192 << 20


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def table_3x4(tmp_path_factory):
    path = tmp_path_factory.mktemp("prove") / "o34.sqlite"
    game = solve_to(path, "overflow", size="3x4")
    return game, path


@pytest.mark.slow
@pytest.mark.parametrize("size", ["3x3", "3x4", "4x3"])
def test_the_start_is_proved_as_the_table_says(tmp_path, size):
    game = solve_to(tmp_path / "o.sqlite", "overflow", size=size)
    start = game.initial()
    proved, _ = proofs.prove(game, start, MEMORY)
    with open_table(tmp_path / "o.sqlite") as table:
        assert proved.value == table.probe(start).value
        assert proved.moves == len(game.legal_moves(start))
        for text in proved.winning_moves:     # every move it calls winning loses for the reply
            child = game.play(start, game.parse_move(start, text))
            assert table.probe(child).value == "loss", text
    assert (proved.value == "win") == bool(proved.winning_moves)


def sampled_positions(table, rng, per_tier):
    """Up to `per_tier` positions of each tier of a table, drawn by `rng`."""
    for tier in table.tiers:
        size = table.tier_size(tier)
        for index in rng.sample(range(size), min(size, per_tier)):
            yield table.stored_positions(tier, index, index + 1)[0]


@pytest.mark.slow
def test_sampled_positions_are_proved_as_the_table_says(table_3x4):
    game, path = table_3x4
    checked = 0
    with open_table(path) as table:
        for position in sampled_positions(table, random.Random(7), 12):
            if game.outcome(position) is not None:
                continue
            proved, _ = proofs.prove(game, position, MEMORY)
            assert proved.value == table.probe(position).value, game.format_position(position)
            checked += 1
    assert checked > 60


@pytest.mark.parametrize("threads", [1, 2])
def test_a_table_smaller_than_the_search_still_proves(table_3x4, threads):
    """A table of 2**15 entries holds less than the 3x4 search visits: entries are replaced,
    positions searched again (by two threads sharing the table, too), and the value is still
    the table's, with a proof that the compiled replay accepts."""
    game, path = table_3x4
    memory = proofs.PROCESS_BYTES + (1 << 15) * proofs.ENTRY_BYTES
    proved, prover = proofs.prove(game, game.initial(), memory, threads=threads)
    assert proved.replaced > 0
    with open_table(path) as table:
        assert proved.value == table.probe(game.initial()).value
    choices = proofs.extract(prover, game.key(game.initial())[1], proved.value, release=True)
    # the proof (25,000 positions of the winner's) outgrows the table: the walk's marks are
    # pushed out with their entries, and still no position is walked (and listed) twice
    assert np.unique(choices.keys).size == len(choices) > 1 << 14
    assert choices.searched_again > 0           # entries of the proof were lost: searched again
    proof = proofs.ProofFile(game, game.initial(), proved.value, choices.keys, choices.chosen)
    assert proofs.verify_proof(proof, samples=10)["positions_verified"] > len(choices) > 0
    with pytest.raises(RuntimeError, match="released"):
        prover.value()


def test_a_proof_drawn_through_its_temporary_file_is_the_proof_drawn_in_memory(table_3x4, tmp_path,
                                                                              monkeypatch):
    """Drawn a few hundred pairs at a time through the temporary file (as a proof of hundreds of
    millions of positions is), the proof is the very one the kernel's walk gives in one piece,
    and written (a slice at a time) and read back it verifies."""
    game, _ = table_3x4
    proved, prover = proofs.prove(game, game.initial(), MEMORY)
    root = game.key(game.initial())[1]
    keys, chosen = prover.extract(root, proved.value == "win")        # in memory, no spill
    order = np.argsort(keys)
    monkeypatch.setattr(proofs, "EXTRACT_CHUNK", 300)
    monkeypatch.setattr(proofs, "PROOF_WRITE_SLICE", 700)
    choices = proofs.extract(prover, root, proved.value)
    assert len(choices) > 3000
    assert proved.replaced == 0 and choices.searched_again == 0     # a table with room for all
    assert np.array_equal(choices.keys, keys[order]) and np.array_equal(choices.chosen, chosen[order])
    path = str(tmp_path / "drawn.proof")
    proofs.write_proof(path, game, game.initial(), proved.value, choices)
    read = proofs.read_proof(path)
    assert np.array_equal(read.keys, choices.keys) and np.array_equal(read.chosen, choices.chosen)
    assert proofs.verify_proof(read, samples=10)["positions_verified"] > len(choices)


def test_a_proof_that_cannot_be_kept_aside_is_one_sentence(table_3x4, tmp_path, monkeypatch):
    """Where the temporary file of a large proof cannot be made (no such directory, a full disk),
    drawing the proof fails with CannotWrite, one sentence, and leaves nothing."""
    import tempfile
    game, _ = table_3x4
    proved, prover = proofs.prove(game, game.initial(), MEMORY)
    monkeypatch.setattr(proofs, "EXTRACT_CHUNK", 300)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    with pytest.raises(proofs.CannotWrite, match="cannot keep the proof while it is drawn"):
        proofs.extract(prover, game.key(game.initial())[1], proved.value)
    assert list(tmp_path.iterdir()) == []


def test_the_proved_search_is_saved_before_its_proof_is_drawn(tmp_path):
    """With --checkpoint, a search that has been saved is saved again the moment the root is
    proved (not only every few minutes), so that a run stopped while it draws a large proof
    starts again proved; a search too short to have been saved leaves no checkpoint."""
    game = make_game("overflow", size="3x4")
    path = str(tmp_path / "proved.ckpt")
    proofs.prove(game, game.initial(), MEMORY, checkpoint=str(tmp_path / "short.ckpt"), checkpoint_seconds=1e9)
    assert not (tmp_path / "short.ckpt").exists()
    assert proofs.prove(game, game.initial(), MEMORY, max_nodes=1000, checkpoint=path)[0] is None
    proved, _ = proofs.prove(game, game.initial(), MEMORY, checkpoint=path, checkpoint_seconds=1e9)
    again = proofs.prover_for(game, game.initial(), proofs.memory_entries(MEMORY))
    proofs.restore_checkpoint(path, game, game.initial(), again)
    assert again.value() == proved.value and 1000 < again.nodes <= proved.nodes


def test_two_threads_prove_what_the_table_says(table_3x4):
    """Two threads sharing one table prove the values the table holds, position by position, and
    every first move they call winning loses for the reply."""
    game, path = table_3x4
    checked = 0
    with open_table(path) as table:
        for position in sampled_positions(table, random.Random(11), 6):
            if game.outcome(position) is not None:
                continue
            proved, _ = proofs.prove(game, position, MEMORY, threads=2)
            assert proved.value == table.probe(position).value, game.format_position(position)
            for text in proved.winning_moves:
                child = game.play(position, game.parse_move(position, text))
                assert table.probe(child).value == "loss", (game.format_position(position), text)
            checked += 1
    assert checked > 30


@pytest.fixture(scope="module")
def proof_3x4(tmp_path_factory):
    path = tmp_path_factory.mktemp("proof") / "o34.proof"
    result = run("prove", "overflow", "--size", "3x4", "--proof", path, "--json", "--memory", "192M")
    assert result.exit_code == 0, result.output
    return path, json.loads(result.stdout)


def test_a_written_proof_verifies(proof_3x4):
    path, said = proof_3x4
    assert said["value"] == "win" and said["proof"]["winner_positions"] > 0
    assert "remoteness" in said["note"]
    # the walk expands every position of the proof once at least (the winner's among them)
    assert said["proof"]["positions_walked"] > said["proof"]["winner_positions"]
    assert said["proof"]["positions_searched_again"] >= 0
    checked = run("check", "--proof", path, "--json")
    assert checked.exit_code == 0, checked.output
    report = json.loads(checked.stdout)
    assert report["failures"] == [] and report["value"] == "win"
    assert report["winner_positions"] == said["proof"]["winner_positions"]


def test_both_replays_count_the_same_positions(tmp_path):
    """The compiled replay and the reference rules' replay of one proof visit the same positions
    (each with its role), and the sample replayed with the reference rules is as asked.  (The
    3x3 proof: 509 positions of the winner's; the reference rules replay it in a second.)"""
    path = tmp_path / "o33.proof"
    assert run("prove", "overflow", "--size", "3x3", "--proof", path, "--memory", "192M").exit_code == 0
    fast = json.loads(run("check", "--proof", path, "--json", "--samples", 50, "--seed", 4).stdout)
    slow = json.loads(run("check", "--proof", path, "--json", "--full").stdout)
    assert fast["method"] == "compiled move generator" and slow["method"] == "reference rules"
    assert fast["positions_verified"] == slow["positions_verified"] > fast["winner_positions"]
    assert fast["reference_positions"] == 2 * 50
    one = json.loads(run("check", "--proof", path, "--json", "--samples", 1).stdout)
    assert one["failures"] == [] and one["reference_positions"] == 2 * 1


def test_the_reference_sample_catches_a_generator_that_drops_a_move(proof_3x4):
    """A fault of the compiled move generator where the proof runs (here: one child of every
    position left out) is caught by the positions replayed again with the reference rules."""
    path, _ = proof_3x4
    proof = proofs.read_proof(str(path))
    honest = proof.game.kernel()

    class DropsAMove:
        def __getattr__(self, name):
            return getattr(honest, name)

        def children(self, key):
            view = honest.children(key)
            return view[1:] if isinstance(view, list) else view

    proof.game._kernel = DropsAMove()
    with pytest.raises(proofs.ProofFails, match="disagree"):
        proofs.cross_check_with_reference_rules(proof, 20, 0)


def rewrite(source, target, edit):
    """A copy of a proof file with its header and positions edited, checksum recomputed."""
    head, payload = source.read_bytes().split(b"\n", 1)
    header = json.loads(head)
    words = np.frombuffer(zstandard.ZstdDecompressor().decompress(payload), dtype="<u8")
    count = header["winner_positions"]
    keys, chosen = words[:count].copy(), words[count:].copy()
    keys, chosen = edit(header, keys, chosen)
    header["winner_positions"] = int(keys.size)
    payload = zstandard.ZstdCompressor().compress(keys.astype("<u8").tobytes()
                                                  + chosen.astype("<u8").tobytes())
    header["payload_crc32"] = zlib.crc32(payload)
    target.write_bytes(json.dumps(header).encode() + b"\n" + payload)


def test_tampered_proofs_are_refused(tmp_path):
    """On 3x3 (a loss for Light: Dark is the winner), with the table to find a losing move."""
    game = solve_to(tmp_path / "o33.sqlite", "overflow", size="3x3")
    path = tmp_path / "o33.proof"
    assert run("prove", "overflow", "--size", "3x3", "--proof", path, "--memory", "192M").exit_code == 0
    assert run("check", "--proof", path).exit_code == 0
    with open_table(tmp_path / "o33.sqlite") as table:
        # a position of Dark's one move into the proof, and a move of Dark's there that loses
        start = game.initial()
        first = game.play(start, game.legal_moves(start)[0])
        first_key = game.key(first)[1]
        losing = [game.key(game.play(first, m))[1] for m in game.legal_moves(first)
                  if table.probe(game.play(first, m)).value == "win"]
    assert losing, "Dark has a losing move there"

    def at_first(keys):
        i = int(np.searchsorted(keys, np.uint64(first_key)))
        assert int(keys[i]) == first_key
        return i

    def wrong_move(header, keys, chosen):          # a move that loses for the winner
        chosen[at_first(keys)] = losing[0]
        return keys, chosen

    def illegal(header, keys, chosen):              # a position no move leads to
        chosen[at_first(keys)] = game.key(start)[1]
        return keys, chosen

    def dropped(header, keys, chosen):              # the winner's move there left out
        i = at_first(keys)
        return np.delete(keys, i), np.delete(chosen, i)

    def other_value(header, keys, chosen):          # claims the start is won
        header["value"] = "win"
        return keys, chosen

    for edit, words in [(wrong_move, ""), (illegal, "not a legal move"),
                        (dropped, "no move for the winner"), (other_value, "")]:
        forged = tmp_path / f"{edit.__name__}.proof"
        rewrite(path, forged, edit)
        for how in ([], ["--full"]):        # the compiled generator, the reference rules alone
            result = run("check", "--proof", forged, *how)
            assert result.exit_code == 1, (edit.__name__, how, result.output)
            assert "FAILED" in result.stdout and words in result.stdout, (edit.__name__, how, result.output)
            assert result.stderr.startswith("sowsolve: ") and len(result.stderr.splitlines()) == 1
    damaged = tmp_path / "damaged.proof"
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF
    damaged.write_bytes(bytes(data))
    result = run("check", "--proof", damaged)
    assert result.exit_code == 1 and "checksum" in result.stderr, result.output    # damaged: 1
    for text in (b"", b"hello\n", b'{"format": "sowsolve-table"}\n'):
        other = tmp_path / "other.proof"
        other.write_bytes(text)
        result = run("check", "--proof", other)
        assert result.exit_code == 2 and "not a sowsolve proof" in result.stderr, result.output
        assert "Traceback" not in result.output


def test_a_proof_with_bytes_after_its_positions_or_a_count_its_bytes_cannot_hold_is_refused(tmp_path):
    """Both with a checksum that matches: bytes after the zstd frame (the frame alone would
    decompress) are refused, as is a count of positions far beyond what the payload can hold
    (a file of a few bytes must not make the checker allocate gigabytes)."""
    path = tmp_path / "o33.proof"
    assert run("prove", "overflow", "--size", "3x3", "--proof", path, "--memory", "192M").exit_code == 0
    head, payload = path.read_bytes().split(b"\n", 1)
    header = json.loads(head)

    def forged(name, header_, payload_):
        target = tmp_path / name
        target.write_bytes(json.dumps(dict(header_, payload_crc32=zlib.crc32(payload_))).encode()
                           + b"\n" + payload_)
        return run("check", "--proof", target)

    for name, header_, payload_, words in [
            ("junk.proof", header, payload + b"junk", "bytes follow its positions"),
            ("cut.proof", header, payload[:-4], "its positions"),
            ("bomb.proof", dict(header, winner_positions=10 ** 9),
             zstandard.ZstdCompressor().compress(bytes(16 * 10 ** 6)), "cannot be held")]:
        result = forged(name, header_, payload_)
        assert result.exit_code == 1 and words in result.stderr, (name, result.output)
        assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.output


@pytest.mark.slow
def test_prove_refuses_bad_input_in_one_sentence(tmp_path):
    for args, words in [(["overflow", "--size", "3x3", "--memory", "lots"], "--memory must be a size"),
                        (["overflow", "--size", "3x3", "--memory", "1K"], "too small"),
                        (["diffusion"], "solved whole"),
                        (["overflow", "--size", "3x3", "--proof", tmp_path], "is a directory"),
                        (["overflow", "--size", "3x3", "--proof", "/dev/null"], "not a regular file"),
                        (["overflow", "--size", "3x3", "--position", "111/111/11 L"], "rank")]:
        result = run("prove", *args)
        assert result.exit_code == 2, (args, result.output)
        assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1, (args, result.output)
    assert list(tmp_path.iterdir()) == []
    budget = run("prove", "overflow", "--size", "3x4", "--max-nodes", 100)
    assert budget.exit_code == 1 and "not proved within the budget" in budget.stderr, budget.output
    # with --json the same exit and sentence, and on stdout how far the search went
    budget = run("prove", "overflow", "--size", "3x4", "--max-nodes", 100, "--json")
    assert budget.exit_code == 1 and "not proved within the budget" in budget.stderr, budget.output
    said = json.loads(budget.stdout)
    assert said["proved"] is False and said["max_nodes"] == 100 and 100 <= said["nodes"]
    assert said["position"] == make_game("overflow", size="3x4").format_position(
        make_game("overflow", size="3x4").initial())


def test_a_stopped_search_goes_on_from_its_checkpoint(tmp_path, table_3x4):
    """A search stopped after a few slices and started again from its checkpoint needs fewer
    new expansions than from scratch, and proves the same value; a checkpoint of another
    position is refused."""
    game, path = table_3x4
    checkpoint = str(tmp_path / "search.ckpt")
    fresh, _ = proofs.prove(game, game.initial(), MEMORY)
    half = fresh.nodes // 2
    stopped, _ = proofs.prove(game, game.initial(), MEMORY, max_nodes=half, checkpoint=checkpoint,
                              checkpoint_seconds=0)
    assert stopped is None and (tmp_path / "search.ckpt").exists()
    resumed, prover = proofs.prove(game, game.initial(), MEMORY, checkpoint=checkpoint)
    assert resumed.value == fresh.value
    assert resumed.nodes - half < fresh.nodes
    other = game.play(game.initial(), game.legal_moves(game.initial())[0])
    with pytest.raises(proofs.BadProof, match="another board or position"):
        proofs.prove(game, other, MEMORY, checkpoint=checkpoint)
    (tmp_path / "junk.ckpt").write_bytes(b"not a checkpoint")
    result = run("prove", "overflow", "--size", "3x4", "--checkpoint", tmp_path / "junk.ckpt")
    assert result.exit_code == 2 and "not a checkpoint" in result.stderr, result.output


@pytest.mark.slow
def test_a_checkpoint_is_written_and_read_a_slice_at_a_time(tmp_path, monkeypatch):
    """Saved and restored in slices of a few hundred slots, a checkpoint holds exactly the
    table's entries in use and the positions expanded; cut short, it is refused in one
    sentence."""
    monkeypatch.setattr(proofs, "CHECKPOINT_SLICE", 300)
    game = make_game("overflow", size="3x3")
    _, prover = proofs.prove(game, game.initial(), MEMORY, max_nodes=2000)
    path = str(tmp_path / "sliced.ckpt")
    proofs.save_checkpoint(path, game, game.initial(), prover)
    again = proofs.prover_for(game, game.initial(), prover.entries)
    proofs.restore_checkpoint(path, game, game.initial(), again)
    before, after = prover.state(), again.state()
    assert before[4] == after[4] == prover.nodes and before[0].size > 300
    assert sorted(zip(*(a.tolist() for a in before[:4]))) == sorted(zip(*(a.tolist() for a in after[:4])))
    with zipfile.ZipFile(path) as whole, zipfile.ZipFile(tmp_path / "short.ckpt", "w") as short:
        for name in whole.namelist():
            data = whole.read(name)
            short.writestr(name, data[:len(data) // 2] if name == "phi.npy" else data)
    result = run("prove", "overflow", "--size", "3x3", "--checkpoint", tmp_path / "short.ckpt")
    assert result.exit_code == 2 and "ends inside its entries" in result.stderr, result.output


def test_saving_a_checkpoint_keeps_no_slice_behind(tmp_path, monkeypatch):
    """Each slice's arrays are freed when the slice is written, not left for the cyclic garbage
    collector: with it off, saving in 64 slices holds no more memory afterwards than before (a
    closure's reference cycle kept about a byte a slot of every slice: gigabytes for a 15 GB
    table)."""
    import gc
    import tracemalloc
    game = make_game("overflow", size="3x3")
    _, prover = proofs.prove(game, game.initial(), MEMORY, max_nodes=2000)
    monkeypatch.setattr(proofs, "CHECKPOINT_SLICE", -(-prover.slots // 64))
    path = str(tmp_path / "kept.ckpt")
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        proofs.save_checkpoint(path, game, game.initial(), prover)    # imports, caches: once
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(3):
            proofs.save_checkpoint(path, game, game.initial(), prover)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        gc.enable()
    assert kept < prover.slots // 8, (kept, prover.slots)


def _checkpoint_with(path, base, replace):
    """A copy of the checkpoint `base` with some of its .npy members' bytes replaced."""
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(path, "w") as target:
        for name in source.namelist():
            target.writestr(name, replace.get(name, source.read(name)))


def _npy(header: str, body: bytes = b"") -> bytes:
    head = header.encode()
    head += b" " * (63 - (10 + len(head)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + head + body


def test_hostile_checkpoints_are_refused_before_they_cost_memory(tmp_path):
    """Checkpoints built to make the reader allocate, recurse or believe: a member whose header
    claims huge elements, a header nested past the parser's depth, negative lengths, and one
    true entry (the start, proved won) that would have the search prove everything under it
    past --max-nodes.  Each is refused in one sentence, or stops within the budget."""
    game = make_game("overflow", size="3x4")
    base = tmp_path / "base.ckpt"
    proofs.prove(game, game.initial(), MEMORY, max_nodes=500, checkpoint=str(base))
    forged = {
        "huge-elements": {"identity.npy": _npy("{'descr': '|V1000000', 'fortran_order': False, 'shape': (4096,), }",
                                               bytes(1 << 16))},
        "deep-header": {"keys.npy": _npy("{'descr': '<u8', 'fortran_order': False, 'shape': (" + "-" * 3000 + "1,), }")},
        "negative": {name: _npy(f"{{'descr': '{kind}', 'fortran_order': False, 'shape': (-5,), }}")
                     for name, kind in (("keys.npy", "<u8"), ("phi.npy", "<u4"), ("delta.npy", "<u4"),
                                        ("work.npy", "<u4"))},
    }
    for name, replace in forged.items():
        path = tmp_path / f"{name}.ckpt"
        _checkpoint_with(path, base, replace)
        result = run("prove", "overflow", "--size", "3x4", "--memory", "160M", "--checkpoint", path)
        assert result.exit_code == 2 and "not a checkpoint" in result.stderr, (name, result.output)
        assert len(result.stderr.splitlines()) == 1
    root = np.array([game.key(game.initial())[1]], dtype="<u8")
    one = {"keys.npy": _npy("{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }", root.tobytes())}
    for name, kind, value in (("phi.npy", "<u4", 0), ("delta.npy", "<u4", proofs.INFINITY), ("work.npy", "<u4", 1)):
        one[name] = _npy(f"{{'descr': '{kind}', 'fortran_order': False, 'shape': (1,), }}",
                         np.array([value], dtype=kind).tobytes())
    _checkpoint_with(tmp_path / "root-only.ckpt", base, one)
    result = run("prove", "overflow", "--size", "3x4", "--max-nodes", 300, "--checkpoint", tmp_path / "root-only.ckpt")
    assert result.exit_code == 1 and "not proved within the budget" in result.stderr, result.output


def test_a_proof_with_positions_its_lines_never_reach_is_refused(proof_3x4, tmp_path):
    """Entries no line of the proof reaches would go unchecked and crowd the sample replayed with
    the reference rules: the file is refused."""
    path, _ = proof_3x4
    game = make_game("overflow", size="3x4")
    stray = game.key(game.parse_position("1111/1111/1101 D"))[1]

    def add_stray(header, keys, chosen):
        at = int(np.searchsorted(keys, np.uint64(stray)))
        return np.insert(keys, at, stray), np.insert(chosen, at, chosen[0])

    forged = tmp_path / "stray.proof"
    rewrite(path, forged, add_stray)
    result = run("check", "--proof", forged, "--samples", 100000)
    assert result.exit_code == 1 and "never reach" in result.stdout, result.output


def test_the_search_s_hint_knows_the_end_as_the_rules_do(table_3x4):
    """Overflow's proof hint (read before a position is expanded) calls a position final
    exactly when the reference rules end the game there, with the rules' winner, and else
    gives numbers of at least 1 -- without its lookahead, which also proves the wins at once
    (tests/test_proof_techniques.py)."""
    game, path = table_3x4
    kernel = game.kernel()
    kernel.lookahead = False
    finals = 0
    with open_table(path) as table:
        for position in sampled_positions(table, random.Random(3), 40):
            final, phi, delta = kernel.proof_hint_of(game.key(position)[1])
            outcome = game.outcome(position)
            assert final == (outcome is not None), game.format_position(position)
            if final:
                finals += 1
                assert (phi, delta) == ((0, proofs.INFINITY) if outcome == "win" else (proofs.INFINITY, 0))
            else:
                assert phi >= 1 and delta >= 1
    kernel.lookahead = True
    assert finals > 0


def test_the_hints_that_come_with_an_expansion_are_the_children_s_own(table_3x4):
    """The hints the game hands over with a position's children (sorted and made distinct by the
    search) are each child's own proof hint, and a child the rules call final comes with its
    final numbers."""
    game, path = table_3x4
    kernel = game.kernel()
    prover = proofs.prover_for(game, game.initial(), 1024)
    finals = 0
    with open_table(path) as table:
        for position in sampled_positions(table, random.Random(5), 40):
            key = game.key(position)[1]
            hinted = prover.child_hints(key)
            assert [child for child, _, _ in hinted] == prover.children(key)
            for child, phi, delta in hinted:
                final, own_phi, own_delta = kernel.proof_hint_of(child)
                assert (phi, delta) == (own_phi, own_delta)
                outcome = game.outcome(game.position_of_key(child))
                finals += outcome is not None
                if outcome is not None:
                    assert (phi, delta) == ((0, proofs.INFINITY) if outcome == "win" else (proofs.INFINITY, 0))
    assert finals > 0


@pytest.mark.slow
def test_a_forged_checkpoint_never_gives_a_value(tmp_path):
    """A checkpoint whose entries call every position on the way a loss (a valid file, values
    made up) is refused after the search: the value stands only on a proof that ends in the
    game's own final positions."""
    game = make_game("overflow", size="3x3")
    checkpoint = tmp_path / "forged.ckpt"
    proved, prover = proofs.prove(game, game.initial(), MEMORY)
    keys, phi, delta, work, nodes = prover.state()
    loss = proofs.INFINITY
    identity = np.frombuffer(json.dumps({"game": game.name, "parameters": game.parameters(),
                                         "position": game.format_position(game.initial())},
                                        sort_keys=True).encode(), dtype=np.uint8)
    for name, forged_phi, forged_delta in (("every-loss", loss, 0), ("every-win", 0, loss)):
        with open(checkpoint, "wb") as out:
            np.savez(out, keys=keys, phi=np.full_like(phi, forged_phi), delta=np.full_like(delta, forged_delta),
                     work=work, nodes=np.array([nodes], dtype=np.int64), identity=identity)
        result = run("prove", "overflow", "--size", "3x3", "--checkpoint", checkpoint)
        assert result.exit_code == 1 and "do not bear out" in result.stderr, (name, result.output)
        assert "value" not in result.stdout, name


def test_a_move_that_ends_the_game_at_once_is_listed_as_winning():
    game = make_game("overflow", size="3x3")
    position = game.parse_position("210/000/000 L")
    proved, _ = proofs.prove(game, position, MEMORY)
    ending = [game.format_move(m) for m in game.legal_moves(position)
              if game.outcome(game.play(position, m)) == "loss"]
    assert ending and proved.value == "win" and set(ending) <= set(proved.winning_moves)
    over = run("prove", "overflow", "--size", "3x3", "--position", "900/000/000 L")
    assert over.exit_code == 0 and "loss for the side to move (game over)" in over.stdout, over.output


def test_outputs_are_checked_before_the_search(tmp_path):
    table = tmp_path / "t.sqlite"
    table.write_bytes(b"SQLite format 3\0" + bytes(100))
    for target, words in ((table, "exists and is not a proof"), (f"{tmp_path}/x.proof/", "not a file name"),
                          ("", "not a file name"), (tmp_path / ("a" * 300), "cannot be written")):
        result = run("prove", "overflow", "--size", "3x4", "--proof", target)
        assert result.exit_code == 2 and words in result.stderr, (target, result.output)
    assert table.read_bytes().startswith(b"SQLite format 3")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.sqlite"]


DATA = __import__("pathlib").Path(__file__).resolve().parent / "data"


def test_a_mirror_with_the_loser_to_move_is_checked_on_its_own(tmp_path):
    """On boards with an even side a position and its mirror with the houses (and the side to
    move) swapped share a key.  Two forged files (made by a reviewer) pass only if a key checked
    with the winner to move counts as checked with the loser to move: a proof that '002/011 D'
    (a loss) is a win, and a checkpoint whose proved entries make '110/111 L' (a loss) a win."""
    forged = tmp_path / "forged.proof"
    forged.write_bytes((DATA / "overflow-2x3-mirror-forged.proof").read_bytes())
    for how in ([], ["--full"]):
        result = run("check", "--proof", forged, *how)
        assert result.exit_code == 1 and "does not prove its claim" in result.stderr, (how, result.output)
    checkpoint = tmp_path / "forged.ckpt"
    checkpoint.write_bytes((DATA / "overflow-2x3-mirror-forged.ckpt").read_bytes())
    result = run("prove", "overflow", "--size", "2x3", "--position", "110/111 L", "--checkpoint", checkpoint)
    assert result.exit_code == 1 and "do not bear out" in result.stderr, result.output
    honest = run("prove", "overflow", "--size", "2x3", "--position", "110/111 L", "--json")
    assert json.loads(honest.stdout)["value"] == "loss"


def test_a_remoteness_of_511_plies_is_not_no_end():
    from sowsolve.solver.values import Margin, MARGIN
    for plies in (509, 510, 511, 512, 65533, None):
        assert MARGIN.decode(Margin(3, plies).to_record()) == Margin(3, plies), plies


def test_the_readme_figures_of_4x4_are_the_measured_ones():
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parent.parent
    runs = json.loads((root / "bench/results/prove.json").read_text())["runs"]
    run_ = next(r for r in runs if r["size"] == "4x4")
    text = " ".join(documentation().split())
    found = re.search(r"\*\*4x4 start is proved a win\*\* \(([^)]*) proved winning\) in (\d+) s, "
                      r"([\d,]+) positions expanded and ([\d.]+) GB at peak .*? the full solve took "
                      r"(\d+) s and ([\d.]+) GB in the same run: ([\d.]+) times faster", text)
    assert found, "the README gives the 4x4 proof"
    assert found[1].split(" and ") == run_["prove"]["winning_moves"]
    assert int(found[2]) == round(run_["prove"]["wall_seconds"])
    assert int(found[3].replace(",", "")) == run_["prove"]["nodes"]
    assert float(found[4]) == round(run_["prove"]["peak_rss_kb"] * 1024 / 1e9, 2)
    assert run_["prove"]["peak_rss_kb"] * 1024 <= 1 << 30          # within --memory 1G
    assert int(found[5]) == round(run_["solve"]["wall_seconds"])
    assert float(found[6]) == round(run_["solve"]["peak_rss_kb"] * 1024 / 1e9, 1)
    assert float(found[7]) == round(run_["solve_over_prove"], 1)
    assert run_["prove"]["threads"] == 2 and "two threads" in text
    proof = re.search(r"Writing its proof \(([\d,]+) positions of the winner's, ([\d.]+) MB\) takes "
                      r"([\d.]+) s in all, and checking it ([\d.]+) s \(([\d,]+) positions replayed\)", text)
    assert proof, "the README gives the 4x4 proof file and its check"
    assert int(proof[1].replace(",", "")) == run_["proof"]["winner_positions"]
    assert float(proof[2]) == round(run_["proof"]["bytes"] / 1e6, 1)
    assert float(proof[3]) == run_["proof"]["wall_seconds"]
    assert float(proof[4]) == run_["check"]["wall_seconds"]
    assert int(proof[5].replace(",", "")) == run_["check"]["positions_verified"]


def test_the_readme_growth_figures_are_the_measured_ones():
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parent.parent
    growth = json.loads((root / "bench/results/prove-growth.json").read_text())
    nodes = {r["size"]: r["nodes"] for r in growth["runs"]}
    unfinished = growth["unfinished"]
    text = " ".join(documentation().split())
    found = re.search(r"take ([\d,]+) positions expanded on 3x3, ([\d,]+) on 3x4, ([\d,]+) on 3x5 and "
                      r"([\d,]+) on 4x4 .*? 4x5 was not proved in (\d+) minutes of search on two threads "
                      r"with `--memory 8G` and no endgame table \(([\d,]+) positions expanded, the table full "
                      r"at ([\d,]+) entries\)", text)
    assert found, "the README gives the growth of the proof search"
    assert [int(found[i].replace(",", "")) for i in range(1, 5)] == [nodes[s] for s in ("3x3", "3x4", "3x5", "4x4")]
    assert unfinished["size"] == "4x5" and not unfinished["proved"]
    assert int(found[5]) == round(unfinished["search_seconds"] / 60)
    assert int(found[6].replace(",", "")) == unfinished["nodes"]
    assert int(found[7].replace(",", "")) == unfinished["entries_used"]
    proved = json.loads((root / "bench/results/prove-4x5-d16.json").read_text())["prove"]["said"]
    found = re.search(r"That is (\d+) times the expansions of 4x4 for four more cells \(([\d.]+) times a "
                      r"cell\)", text)
    assert found, "the README gives the growth from 4x4 to the proof of 4x5"
    assert int(found[1]) == round(proved["nodes"] / nodes["4x4"])
    assert float(found[2]) == round((proved["nodes"] / nodes["4x4"]) ** 0.25, 1)


@pytest.mark.slow
def test_a_board_and_its_transpose_are_one_game():
    """Positions of 3x4 and the same heights with files made ranks on 4x3 (the README's ground
    for one proof settling 4x5 and 5x4) have the same value, by the proof search, and the same
    number of moves, by the reference rules."""
    wide, tall = make_game("overflow", size="3x4"), make_game("overflow", size="4x3")
    rng = random.Random(2)
    for _ in range(12):
        position = random_walk(wide, rng, rng.randrange(0, 6))
        heights = position.heights             # rank * 4 + file on 3x4 -> file * 3 + rank on 4x3
        turned = type(position)(tuple(heights[(cell % 3) * 4 + cell // 3] for cell in range(12)), position.side)
        assert len(tall.legal_moves(turned)) == len(wide.legal_moves(position))
        assert tall.outcome(turned) == wide.outcome(position)
        if wide.outcome(position) is None:
            assert proofs.prove(tall, turned, MEMORY)[0].value == proofs.prove(wide, position, MEMORY)[0].value


@pytest.mark.slow
def test_query_proves_a_position_the_table_lacks_within_its_budget(table_3x4):
    """A position the 3x4 table does not hold (not reachable from the start): with --max-nodes
    the proof search answers it -- the value and the moves it proved, which a whole search from
    the position (the other answer, with remoteness) confirms -- or says it ran out."""
    game, path = table_3x4
    checked = 0
    for text in ("2222/1111/0000 L", "2222/1111/0000 D", "1111/1111/1110 L", "0111/1111/1112 D"):
        with open_table(path) as table:
            if game.parse_position(text) in table:
                continue
        searched = run("query", text, "--table", path, "--json")
        proved = run("query", text, "--table", path, "--json", "--max-nodes", 1_000_000)
        assert searched.exit_code == 0 and proved.exit_code == 0, (searched.output, proved.output)
        exact, answer = json.loads(searched.stdout), json.loads(proved.stdout)
        assert exact["source"] == "search" and answer["source"] == "proof"
        assert answer["value"] == exact["value"] and answer["remoteness"] is None
        values = {m["move"]: m["value"] for m in exact["moves"]}
        assert answer["moves"] and all(values[m["move"]] == m["value"] for m in answer["moves"])
        checked += 1
    assert checked >= 2
    short = run("query", "2222/1111/0000 L", "--table", path, "--max-nodes", 5)
    assert short.exit_code == 1 and "not proved within the budget" in short.stderr, short.output
    line = run("query", "2222/1111/0000 L", "--table", path, "--max-nodes", 5, "--line")
    assert line.exit_code == 2 and "remoteness" in line.stderr, line.output


def test_a_checkpoint_in_use_is_refused_and_a_killed_search_s_lock_blocks_nothing(tmp_path):
    """A second search of a checkpoint another process holds is refused in one sentence (exit
    1), leaving the checkpoint as it was; once that process is killed (SIGKILL: its lock file
    stays), a search of the checkpoint runs, and removes the lock file as it ends (and the
    partial save of a killed one)."""
    import subprocess
    import sys
    checkpoint = tmp_path / "search.ckpt"
    game = make_game("overflow", size="3x4")
    stopped, _ = proofs.prove(game, game.initial(), MEMORY, max_nodes=2000, checkpoint=str(checkpoint))
    assert stopped is None and checkpoint.exists()
    saved = checkpoint.read_bytes()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom sowsolve.solver import proof\n"
         f"with proof.checkpoint_lock({str(checkpoint)!r}):\n print('held', flush=True)\n sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        second = run("prove", "overflow", "--size", "3x4", "--checkpoint", checkpoint, "--memory", "192M")
        assert second.exit_code == 1, second.output
        said = second.stderr.strip().splitlines()
        assert len(said) == 1 and said[0].startswith("sowsolve: --checkpoint '"), said
        assert said[0].endswith("is in use by another sowsolve prove; wait for it to end or "
                                "stop it first"), said
        assert checkpoint.read_bytes() == saved
    finally:
        holder.kill()
        holder.wait()
    assert (tmp_path / "search.ckpt.lock").exists()
    # a save killed outright leaves its partial file: the next search of the checkpoint removes it
    (tmp_path / f".search.ckpt.{'ab' * 16}.partial").write_bytes(b"\0" * 1000)
    after = run("prove", "overflow", "--size", "3x4", "--checkpoint", checkpoint, "--memory", "192M",
                "--json")
    assert after.exit_code == 0, after.output
    assert json.loads(after.stdout)["value"] == "win"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["search.ckpt"]


def test_check_proof_draws_its_sample_by_samples_and_seed_and_refuses_them_with_full(proof_3x4,
                                                                                   table_3x4):
    """Without --full, --samples and --seed choose the positions replayed with the reference
    rules (the report says how many, and the seed); --full replays every position, so either
    option with it is a usage error naming it, for a proof and a table alike."""
    path, _ = proof_3x4
    drawn = json.loads(run("check", "--proof", path, "--json", "--samples", 7, "--seed", 11).stdout)
    assert drawn["reference_positions"] == 2 * 7 and drawn["seed"] == 11
    assert "seed 11" in run("check", "--proof", path, "--samples", 7, "--seed", 11).stdout
    _, table = table_3x4
    for target in (["--proof", path], ["--table", table]):
        for given in (["--samples", 5], ["--seed", 3], ["--samples", 5, "--seed", 3]):
            refused = run("check", *target, "--full", *given)
            assert refused.exit_code == 2, refused.output
            said = refused.stderr.strip().splitlines()
            assert len(said) == 1 and said[0].startswith("sowsolve: --full checks every position")
            assert all(option in said[0] for option in given if str(option).startswith("--"))


def test_the_search_table_keeps_what_a_checkpoint_gives_it():
    """A checkpoint's entries restored into the search's table come back out as they went in:
    the key (all 64 bits: Overflow's side to move is the top one), phi and delta exactly (from 1
    to INF - 1, or a proof or disproof), and the work below each as the power of two nearest
    to it (what replacement compares), at most 2^14."""
    from sowsolve.cext import proofsearch
    from sowsolve.solver.games import make_game
    game = make_game("overflow", size="3x3")
    inf = proofsearch.INFINITY
    prover = proofsearch.Prover(game.proof_capsule(), game.proof_key(game.initial()), 1 << 12)
    rng = random.Random(11)
    works = [0, 1, 2, 3, 5, 6, 7, 100, 1000, 3 << 10, 1 << 20, (1 << 32) - 1]
    entries = {}
    for work in works:
        key = rng.getrandbits(64) | 1
        phi, delta = rng.choice([(0, inf), (inf, 0), (inf - 1, 1), (1, inf - 1),
                                 (rng.randrange(1, inf), rng.randrange(1, inf))])
        entries[key] = (phi, delta, work)
    keys = np.array(list(entries), dtype=np.uint64)
    phis, deltas, wks = (np.array([v[i] for v in entries.values()], dtype=np.uint32) for i in range(3))
    prover.restore(keys, phis, deltas, wks, 77)
    got_keys, got_phi, got_delta, got_work = prover.used_entries(0, prover.slots)
    assert sorted(got_keys.tolist()) == sorted(entries) and prover.nodes == 77

    def nearest_power(work):
        if work == 0:
            return 0
        power = 1 << (work.bit_length() - 1)
        if 2 * work >= 3 * power:           # half way (in work) to the next one
            power *= 2
        return min(power, 1 << 14)
    for key, phi, delta, work in zip(got_keys.tolist(), got_phi.tolist(), got_delta.tolist(),
                                     got_work.tolist()):
        assert (phi, delta) == entries[key][:2]
        assert work == nearest_power(entries[key][2]), (entries[key][2], work)
        assert prover.numbers(key) == (phi, delta)


def test_a_budget_the_drawing_of_the_proof_would_pass_says_what_the_search_proved(tmp_path):
    """In a table of 2**15 entries the 3x4 start is proved, but the proof's entries are lost on
    the way and drawing it searches again (test_a_table_smaller_than_the_search_still_proves):
    with --max-nodes just past the search's the search proves it, the proof cannot be drawn, and
    the user is told both, with no proof written."""
    game = make_game("overflow", size="3x4")
    memory = proofs.PROCESS_BYTES + (1 << 15) * proofs.ENTRY_BYTES
    proved, _ = proofs.prove(game, game.initial(), memory)
    budget = proved.nodes + 1
    proof = tmp_path / "p.proof"
    result = run("prove", "overflow", "--size", "3x4", "--threads", 1, "--memory", memory,
                 "--max-nodes", budget, "--proof", proof)
    assert result.exit_code == 1
    assert f"the search proved a win for the side to move in {proved.nodes:,} positions" in result.output
    assert f"more than --max-nodes {budget}: no proof written" in result.output
    assert not proof.exists()
    # the JSON's count is the search's, its searching again included, the walk's expansions not
    # (one thread: up to one past the budget, as --help says)
    said = json.loads(run("prove", "overflow", "--size", "3x4", "--threads", 1, "--memory", memory,
                          "--max-nodes", budget, "--proof", proof, "--json").stdout)
    assert said["proved"] is False and said["searched_nodes"] == proved.nodes
    assert proved.nodes < said["nodes"] <= budget + 1


def test_the_walk_of_the_proof_is_not_charged_to_max_nodes(tmp_path):
    """--max-nodes bounds the search: the walk that draws the proof expands every position of it
    besides, uncounted, so a budget that covers the search and its searching again where entries
    were lost (but not the walk on top) still gives the proof."""
    game = make_game("overflow", size="3x4")
    memory = proofs.PROCESS_BYTES + (1 << 15) * proofs.ENTRY_BYTES
    proved, prover = proofs.prove(game, game.initial(), memory)
    drawn = proofs.extract(prover, game.key(game.initial())[1], proved.value)
    assert drawn.walked > 1 and drawn.searched_again > 0    # the case of the test above
    budget = proved.nodes + drawn.searched_again
    assert budget < proved.nodes + drawn.searched_again + drawn.walked
    proof = tmp_path / "p.proof"
    result = run("prove", "overflow", "--size", "3x4", "--threads", 1, "--memory", memory,
                 "--max-nodes", budget, "--proof", proof, "--json")
    assert result.exit_code == 0, result.output
    said = json.loads(result.output)
    assert said["proved"] and said["value"] == proved.value
    assert said["proof"]["positions_walked"] == drawn.walked
    assert run("check", "--proof", proof).exit_code == 0


def test_a_checkpoint_given_by_a_link_has_its_killed_save_removed_beside_the_target(tmp_path):
    """A checkpoint named by a symbolic link is saved beside the link's target (the link stays a
    link), so that is where the partial file of a save killed outright lies, and where the next
    search of the checkpoint removes it."""
    target = tmp_path / "store" / "real.ckpt"
    target.parent.mkdir()
    game = make_game("overflow", size="3x4")
    link = tmp_path / "search.ckpt"
    link.symlink_to(target)
    stopped, _ = proofs.prove(game, game.initial(), MEMORY, max_nodes=2000, checkpoint=str(link))
    assert stopped is None and link.is_symlink() and target.exists()
    stale = target.parent / f".real.ckpt.{'ab' * 16}.partial"
    stale.write_bytes(b"\0" * 1000)
    after = run("prove", "overflow", "--size", "3x4", "--checkpoint", link, "--memory", "192M", "--json")
    assert after.exit_code == 0, after.output
    assert not stale.exists() and link.is_symlink()
    assert sorted(p.name for p in target.parent.iterdir()) == ["real.ckpt"]


def test_a_proof_header_without_a_whole_number_version_says_so(tmp_path):
    """A header whose version is text, missing or a fraction is damaged, and says it has no
    format version; a whole number other than this sowsolve's names that version."""
    import json as json_
    cases = {"text": {"version": "1"}, "missing": {}, "fraction": {"version": 1.5},
             "true": {"version": True}}
    for name, fields in cases.items():
        path = tmp_path / f"{name}.proof"
        path.write_bytes(json_.dumps({"format": proofs.PROOF_FORMAT, **fields}).encode() + b"\n")
        with pytest.raises(proofs.DamagedProof, match="no format version"):
            proofs.read_proof(str(path))
    path = tmp_path / "later.proof"
    path.write_bytes(json_.dumps({"format": proofs.PROOF_FORMAT, "version": proofs.PROOF_VERSION + 1}).encode()
                     + b"\n")
    with pytest.raises(proofs.BadProof, match=f"format version '{proofs.PROOF_VERSION + 1}'"):
        proofs.read_proof(str(path))


@pytest.mark.parametrize("typed,said", [("100M", "--memory 100M is"), ("128M", "--memory 128M is"),
                                        ("0.1G", "--memory 0.1G is"),
                                        ("1000000", "--memory 1000000 is")])
def test_too_little_memory_is_said_in_the_units_one_types(typed, said):
    """Too little --memory (128M go to the process, the search's table needs 16K more) is said
    so, quoting what was typed; from the library (bytes, nothing typed), in the units --memory
    takes where the bytes are a whole (or tenth) number of them."""
    from sowsolve.solver import proof as proofs
    from sowsolve.solver.errors import BadParameters
    for memory, words in [(100 << 20, "--memory 100M is"), (128 << 20, "--memory 128M is"),
                          ((128 << 20) + 100, "--memory 134,217,828 bytes is")]:
        with pytest.raises(BadParameters, match=words):
            proofs.memory_entries(memory)
    result = run("prove", "overflow", "--size", "2x3", "--memory", typed)
    assert result.exit_code == 2 and said in result.stderr and "needs 16K more" in result.stderr, result.output
    assert run("prove", "overflow", "--size", "2x3", "--memory", "129M").exit_code == 0


def test_a_crowded_search_table_is_said_on_the_progress_bar():
    """A table far too small for the search (Overflow 4x4 in 129M: 65,536 entries, which it
    replaces over and over) says on the progress bar that more --memory is faster; a roomy one
    (3x3 in 256M) says nothing of it."""
    from sowsolve.solver import proof as proofs
    from sowsolve.solver.games import make_game

    def recorder(said):
        class Bar:
            def update(self, n):
                pass

            def set_description(self, desc):
                said.append(desc)

        import contextlib
        return lambda total, desc: contextlib.nullcontext(Bar())

    for size, memory, budget, crowded in [("4x4", 129 << 20, 3_000_000, True), ("3x3", 256 << 20, None, False)]:
        said: list[str] = []
        game = make_game("overflow", size=size)
        result, prover = proofs.prove(game, game.initial(), memory, progress=recorder(said), max_nodes=budget)
        assert (prover.replaced > proofs.CROWDED_REPLACEMENTS * prover.entries) == crowded
        assert any("more --memory is faster" in d for d in said) == crowded, said


def test_more_memory_than_the_machine_has_available_is_a_usage_error(monkeypatch):
    """--memory past what this machine has available is refused before anything is allocated
    (exit 2, quoting it), not met by the table's allocation failing (exit 1)."""
    from sowsolve.cli import commands
    monkeypatch.setattr(commands, "available_memory", lambda: 3 << 30)
    result = run("prove", "overflow", "--size", "2x3", "--memory", "4G")
    assert result.exit_code == 2, result.output
    assert "--memory 4G is more than this machine has available (3.0G)" in result.stderr
    assert run("prove", "overflow", "--size", "2x3", "--memory", "2G").exit_code == 0


def test_the_default_memory_is_sized_by_the_board(tmp_path):
    """Left out, --memory is two table entries for each position the board reaches (3x4:
    674,116), not a gigabyte; a board of unknown reach gets the 1G of before."""
    import json
    import subprocess
    import sys
    from sowsolve.solver import proof as proofs
    from sowsolve.solver.games import make_game
    run = subprocess.run([sys.executable, "-c", "from sowsolve.cli.entry import main; main()",
                          "prove", "overflow", "--size", "3x4", "--threads", "1", "--json"],
                         capture_output=True, text=True, env=dict(__import__("os").environ,
                                                                  SOWSOLVE_TABLES=str(tmp_path)))
    report = json.loads(run.stdout)
    assert report["proved"] and report["value"] == "win"
    assert report["table_bytes"] == 2 * 674116 * proofs.ENTRY_BYTES
    assert report["table_bytes"] < 32 << 20
    assert proofs.default_memory(make_game("overflow", size="6x6"), 64 << 30) == 1 << 30
    assert proofs.default_memory(make_game("overflow", size="6x6"), 1 << 30) == 512 << 20
