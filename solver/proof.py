"""Proving who wins without solving every position: df-pn in the kernel (cext/proofsearch.pyx),
its proofs written to a file, and a verifier of such files that uses the reference rules only.

A proof of "the side to move wins" holds one winning move at each of the winner's turns and
every move at the loser's; the file keeps, for every position of the winner's on the proof, its
canonical packed position and the one of the child chosen.  The verifier replays the proof from
the position with the game's Python rules (its legal moves, its play and its end), so it
trusts nothing of the search: a proof that names a move no rule allows, leaves a reply of the
loser unanswered or ends anywhere but in the winner's win is refused.  Remoteness is no part of
a proof: the winner's moves on it win, not necessarily fastest."""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import random
import re
import struct
import tempfile
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
import zstandard

from .contract import Game
from .errors import BadParameters, quote, shown
from ..cext import proofcheck as _proofcheck, proofsearch as _proofsearch
from .kernels import bar_advancer, compiled, observing, run_stoppable
from .sharedfiles import remove_partials, write_whole as _write_whole
from .tiers import Progress, no_progress
from .values import Value

PROOF_FORMAT = "sowsolve-proof"
PROOF_VERSION = 1
#: the most positions (16 bytes each) a proof may declare per byte of its compressed payload
MAX_PROOF_RATIO = 64
#: the header line of a proof file (JSON) is at most this long
MAX_HEADER = 1 << 16
#: expansions per slice of the search between progress, checkpoints and Ctrl-C checks
SLICE_NODES = 1 << 20
#: seconds between two checkpoints of a search given --checkpoint
CHECKPOINT_SECONDS = 120
#: the checkpoint is saved every CHECKPOINT_SECONDS, or this many times as long as the last
#: save took if that is longer
SAVE_SHARE = 10
ENTRY_BYTES = _proofsearch.ENTRY_BYTES
#: where proof and disproof numbers saturate (a proved or disproved position)
INFINITY = _proofsearch.INFINITY


class BadProof(ValueError):
    """A file that is not a sowsolve proof or checkpoint, or an output that cannot be one."""


class DamagedProof(RuntimeError):
    """A proof or checkpoint file that is damaged (checksum, truncation), or whose values the
    game's positions do not bear out."""


class ProofFails(DamagedProof):
    """A proof file that does not prove what it says."""


class CheckpointInUse(RuntimeError):
    """A checkpoint another search is using (or whose lock cannot be taken)."""


class CannotWrite(RuntimeError):
    """A proof or checkpoint that could not be written (a full disk, say); the file it would
    have replaced is as it was."""


@dataclass
class Choices:
    """A proof's choices: the positions of the winner's on it (sorted packed positions) and the
    child chosen at each."""
    keys: np.ndarray
    chosen: np.ndarray
    #: how `extract` drew them (None: not drawn by it): seconds, positions its walk expanded
    #: (each inner position once, each end of a line at each visit), and positions expanded by
    #: searching again where the search's table had lost entries of the proof
    drawn_seconds: float | None = None
    walked: int | None = None
    searched_again: int | None = None

    def __len__(self) -> int:
        return int(self.keys.size)

    def get(self, key: int) -> int | None:
        at = int(np.searchsorted(self.keys, np.uint64(key)))
        return int(self.chosen[at]) if at < self.keys.size and int(self.keys[at]) == key else None


def no_choices() -> Choices:
    return Choices(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.uint64))


@dataclass
class Proved:
    value: str                       # 'win' or 'loss' for the side to move at the position
    winning_moves: list[str]         # moves the search proved winning (a win), in move order
    moves: int                       # legal moves at the position
    nodes: int                       # positions expanded by the search
    seconds: float
    table_entries: int
    table_bytes: int
    replaced: int                    # entries pushed out of a full table
    winner_choices: Choices = field(default_factory=no_choices)    # filled by `extract`


#: what the process takes beside the search's table (Python, numpy, the kernels, the proof's
#: bookkeeping), kept out of --memory so that the whole process stays under it (measured: about
#: 70 MB on 4x4)
PROCESS_BYTES = 128 << 20


#: the least memory of the search's table (1,024 entries)
MIN_TABLE_BYTES = 1024 * ENTRY_BYTES
#: a search whose table has replaced this many times its entries is told, on its progress
#: bar, that more --memory would be faster (a proof measured with 512 Ki entries replaced
#: them 28 times and took 30 s; with 8 Mi entries, 0.01 times and 8 s; with 64 Ki it did not
#: end in 12 minutes)
CROWDED_REPLACEMENTS = 8


def mebibytes(n: int) -> str:
    """Bytes as --memory takes them (units of 1024): '129M', '1.5G', '16K', or '134,234,112
    bytes'."""
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n * 10 % size == 0:
            return f"{n * 10 // size / 10:g}{unit}"
    return f"{n:,} bytes"


#: the most memory the search takes when --memory is left out (a larger proof asks for more)
DEFAULT_MEMORY = 1 << 30


def default_memory(game, available: int | None = None) -> int:
    """The search's memory when --memory is left out: a table of two entries for every
    position the board can reach (as measured; else every position it has at all), the
    process's share besides, at least the least the search takes, at most DEFAULT_MEMORY and
    half of the memory `available` -- so a small board does not take a gigabyte."""
    positions = game.reachable_positions() or game.positions_bound() or (DEFAULT_MEMORY // ENTRY_BYTES)
    table = max(MIN_TABLE_BYTES, 2 * positions * ENTRY_BYTES)
    memory = min(PROCESS_BYTES + table, DEFAULT_MEMORY)
    if available is not None:
        memory = min(memory, max(available // 2, PROCESS_BYTES + MIN_TABLE_BYTES))
    return max(memory, PROCESS_BYTES + MIN_TABLE_BYTES)


def memory_entries(memory: int, typed: str | None = None) -> int:
    """Entries of the search's table for a --memory budget in bytes: the whole process stays
    under the budget.  BadParameters for too little, quoting `typed` (what --memory was given)
    where there is one, else the bytes as --memory takes them."""
    if memory - PROCESS_BYTES < MIN_TABLE_BYTES:
        given = mebibytes(memory) if typed is None else shown(typed.strip(), 20)
        raise BadParameters(f"--memory {given} is too small for the proof search: "
                            f"{mebibytes(PROCESS_BYTES)} go to the process and its table needs "
                            f"{mebibytes(MIN_TABLE_BYTES)} more "
                            f"({-(-(PROCESS_BYTES + MIN_TABLE_BYTES) // (1 << 20))}M will do)")
    return (memory - PROCESS_BYTES) // ENTRY_BYTES


@dataclass(frozen=True)
class Leaves:
    """An endgame table at the leaves of the proof search: a position it holds ends a line with
    the table's value.  `kernel` offers the capsule (the game's packed positions, the table's
    positions final); `citation` is what a proof records of the table: its file name, its limit
    of discs and the SHA-256 of its records (`table_leaves`)."""
    kernel: object
    citation: dict

    @property
    def max_discs(self) -> int:
        return self.citation["max_discs"]


def table_leaves(game: Game, endgame: Game, tiers: Iterable[tuple[int, np.ndarray, bool]],
                 max_discs: int, file: str) -> Leaves:
    """Leaves from an endgame table of `game`'s board (`endgame`: the table's game; `tiers`:
    (tier, its records as the table's reader checked them, whether the table holds it solved)
    of every tier of the table, in increasing order, taken one at a time so that only one
    tier's records are in memory).  A solved tier is held as a bit a position (who wins); a
    record of it that is neither a win nor a loss refuses the table.  The citation's checksum
    is the SHA-256 of every tier's number and records (little-endian 16-bit words), in order."""
    if endgame.name != game.name or endgame.parameters() != game.parameters():
        raise BadParameters(f"the endgame table {quote(file, 60)} is of {endgame.describe()}, "
                            f"not {game.describe()}")
    board = getattr(game, "board_kernel", None)
    if board is None:
        raise BadParameters(f"{game.describe()} takes no endgame tables at the leaves of its proofs")
    kernel = compiled(game.name).TableLeaves(board(), endgame.kernel(), max_discs)
    digest, last = hashlib.sha256(), -1
    for tier, records, solved in tiers:
        if tier <= last:
            raise BadParameters(f"the endgame table {quote(file, 60)} lists tier {tier} out of order")
        last = tier
        records = np.ascontiguousarray(records, dtype="<u2")
        digest.update(struct.pack("<I", int(tier)))
        digest.update(memoryview(records).cast("B"))
        if solved:
            try:
                kernel.add_tier(tier, records)
            except ValueError as exc:
                raise BadParameters(f"the endgame table {quote(file, 60)} cannot end proofs: "
                                    f"{exc}") from None
    return Leaves(kernel, {"file": os.path.basename(file), "max_discs": int(max_discs),
                           "checksum": digest.hexdigest()})


def prover_for(game: Game, position, entries: int, leaves: Leaves | None = None):
    """A df-pn search from `position` (its canonical packed position) with `entries` entries,
    ending its lines where `leaves` (an endgame table) holds the position."""
    kernel = game.kernel()
    if not getattr(kernel, "keyable", False):
        raise BadParameters(f"positions of {game.describe()} do not pack into 64 bits: no proof search")
    _, root = game.key(position)
    capsule = kernel.capsule() if leaves is None else leaves.kernel.capsule()
    return _proofsearch.Prover(capsule, root, entries)


def prove(game: Game, position, memory: int, progress: Progress = no_progress,
          max_nodes: int | None = None, checkpoint: str | None = None,
          checkpoint_seconds: float = CHECKPOINT_SECONDS, threads: int = 1,
          leaves: Leaves | None = None) -> tuple[Proved | None, object]:
    """Search until the position is proved (or `max_nodes` expansions are spent: None).  Ctrl-C
    stops it (KeyboardInterrupt).  With `checkpoint`, the search starts from that file when it
    holds a search of the same position and writes it every `checkpoint_seconds` (and when
    stopped), so a run killed at any moment loses at most that much work; a second search of
    the same checkpoint meanwhile is refused (CheckpointInUse, checkpoint_lock).  Returns the result
    and the prover (for `extract`).  With threads > 1 the threads share the table, and the
    positions expanded vary from run to run with their timing.  With `leaves`, a position the
    endgame table holds ends a line with the table's value (a checkpoint then names the table)."""
    entries = memory_entries(memory)
    with contextlib.ExitStack() as held:
        if checkpoint is not None:
            held.enter_context(checkpoint_lock(checkpoint))
        return _prove(game, position, entries, progress, max_nodes, checkpoint,
                      checkpoint_seconds, threads, leaves)


def _prove(game: Game, position, entries: int, progress: Progress, max_nodes: int | None,
           checkpoint: str | None, checkpoint_seconds: float, threads: int,
           leaves: Leaves | None = None):
    prover = prover_for(game, position, entries, leaves)
    restored = checkpoint is not None and os.path.exists(checkpoint)
    cited = None if leaves is None else leaves.citation
    if restored:
        restore_checkpoint(checkpoint, game, position, prover, cited)
    started = last_saved = time.perf_counter()
    interval = checkpoint_seconds
    searched = crowded = False
    with progress(max_nodes, "positions expanded") as bar:
        advance = bar_advancer(bar)      # the search's own count runs on over the slices
        with observing(lambda done: advance(prover.nodes)):
            while prover.value() is None:
                budget = SLICE_NODES if max_nodes is None else min(SLICE_NODES, max_nodes - prover.nodes)
                if budget <= 0:
                    if checkpoint is not None:
                        save_checkpoint(checkpoint, game, position, prover, cited)
                    return None, prover
                try:
                    run_stoppable(lambda words: prover.run(budget, words, threads))
                except BaseException as stop:
                    if checkpoint is not None and not isinstance(stop, Exception):
                        save_checkpoint(checkpoint, game, position, prover, cited)    # Ctrl-C, TERM
                    raise
                searched = True
                if not crowded and prover.replaced > CROWDED_REPLACEMENTS * prover.entries:
                    crowded = True
                    bar.set_description("table full: more --memory is faster")
                if checkpoint is not None and time.perf_counter() - last_saved >= interval:
                    began = time.perf_counter()
                    save_checkpoint(checkpoint, game, position, prover, cited)
                    last_saved = time.perf_counter()
                    # a large table takes a while to write: keep saving under a tenth of the run
                    interval = max(checkpoint_seconds, SAVE_SHARE * (last_saved - began))
    seconds = time.perf_counter() - started
    if checkpoint is not None and searched and os.path.exists(checkpoint):
        # a search long enough to have been saved keeps its proved table before the proof is
        # drawn from it: drawing a large proof takes a while and memory of its own, and what
        # stops it then must not cost the search (a short one leaves no checkpoint, as before)
        save_checkpoint(checkpoint, game, position, prover, cited)
    value = prover.value()
    # what the search took, before any drawing below adds its walk and searches again
    nodes, replaced = prover.nodes, prover.replaced
    choices = no_choices()
    if restored:
        # a checkpoint is a file like any other: the value stands only once a proof drawn from
        # the table ends, line by line, in the game's own final positions
        try:
            choices = extract(prover, game.key(position)[1], value, max_nodes, release=True)
        except DamagedProof:
            raise DamagedProof(f"--checkpoint {quote(checkpoint, 60)} holds values the game's "
                               f"positions do not bear out (damaged or forged); start without it") from None
        if choices is None:         # showing it would take more than --max-nodes
            return None, prover
    moves = game.legal_moves(position)
    winning = []
    root = game.key(position)[1]
    if value == "win":
        for move in moves:
            _, child = game.key(game.play(position, move))
            # proved lost for the side to move there: by this run (a restored table's entries
            # count only for the move its checked proof chose)
            if (choices.get(root) == child) if restored else prover.numbers(child)[1] == 0:
                winning.append(game.format_move(move))
    return Proved(value, winning, len(moves), nodes, round(seconds, 3), prover.entries,
                  prover.entries * ENTRY_BYTES, replaced, choices), prover


def extract(prover, root: int, value: str, max_nodes: int | None = None,
            release: bool = False) -> Choices | None:
    """The proof in the search's table (walked in the kernel): for every position of the
    winner's on it, the child chosen (a proved loss for its side to move).  Positions whose
    entries were replaced are searched again, until the positions the search expanded (before
    and now, the walk's own expansions not counted) reach `max_nodes` (None: no limit; then it
    returns None).  DamagedProof when the table's values do
    not bear out (a line ends where its winner has not won).

    The walk marks the positions it has been at in the search's table itself (a byte a bucket
    beside it), and a large proof is gathered in an anonymous temporary file (a chunk of the
    kernel's at a time), then sorted.  `release`: the caller needs nothing more of the search's
    table, which is freed before the sort, so drawing a proof takes little more memory than
    the search did."""
    budget = -1 if max_nodes is None else max(0, max_nodes - prover.nodes)
    began, nodes_before, walked_before = time.perf_counter(), prover.nodes, prover.walked
    with contextlib.ExitStack() as held:
        spilled = []                        # [the temporary file, pairs written]

        def spill(keys: np.ndarray, chosen: np.ndarray) -> None:
            if not spilled:
                spilled.extend([held.enter_context(tempfile.TemporaryFile(prefix="sowsolve-proof-")), 0])
            spilled[0].write(np.column_stack((keys, chosen)).astype("<u8").tobytes())
            spilled[1] += keys.size

        try:
            found = run_stoppable(lambda words: prover.extract(root, value == "win", words, budget, spill,
                                                               EXTRACT_CHUNK))
        except ValueError as exc:
            raise DamagedProof(str(exc)) from None
        except OSError as exc:
            raise _unkept(exc) from None
        if found is None:
            return None
        walked = prover.walked - walked_before
        searched_again = prover.nodes - nodes_before - walked
        if release:
            prover.release()
        keys, chosen = found
        if not spilled:
            order = np.argsort(keys)
            return Choices(keys[order], chosen[order], round(time.perf_counter() - began, 3), walked,
                           searched_again)
        try:
            spill(keys, chosen)
            spilled[0].flush()
        except OSError as exc:
            raise _unkept(exc) from None
        del keys, chosen
        pairs = np.memmap(spilled[0], dtype="<u8", mode="r", shape=(spilled[1], 2))
        keys = np.array(pairs[:, 0])
        order = np.argsort(keys)
        keys = keys[order]
        chosen = pairs[:, 1][order]
        del pairs, order
        return Choices(keys, np.asarray(chosen, dtype=np.uint64), round(time.perf_counter() - began, 3),
                       walked, searched_again)


def _unkept(exc: OSError) -> CannotWrite:
    return CannotWrite(f"cannot keep the proof while it is drawn from the search (a temporary "
                       f"file): {exc.strerror or exc}")


# --- checkpoints ---------------------------------------------------------------------------

#: the lock file beside a checkpoint (its real path, whatever link names it) + this
LOCK_SUFFIX = ".lock"


@contextlib.contextmanager
def checkpoint_lock(checkpoint: str):
    """An exclusive flock on the lock file beside `checkpoint` for as long as the search uses
    it: a second search of the same checkpoint is refused (CheckpointInUse) instead of both
    writing it in turn.  The kernel drops a flock when its process ends however it ends, so the
    lock file that a killed search leaves blocks nothing; a search removes its lock file as it
    ends, holding the lock, and one that locked a file removed meanwhile tries again.  Partial
    saves a killed search left beside the checkpoint are removed once the lock is held."""
    path = os.path.realpath(checkpoint) + LOCK_SUFFIX
    shown = quote(checkpoint, 60)
    for _ in range(20):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise CheckpointInUse(f"cannot lock --checkpoint {shown} ({exc.strerror or exc})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except BlockingIOError:
            os.close(fd)
            raise CheckpointInUse(f"--checkpoint {shown} is in use by another sowsolve prove; "
                                  f"wait for it to end or stop it first") from None
        except FileNotFoundError:
            same = False
        except OSError as exc:
            os.close(fd)
            raise CheckpointInUse(f"cannot lock --checkpoint {shown} ({exc.strerror or exc})") from None
        if same:
            break
        os.close(fd)                # removed by the search that held it as it ended: again
    else:
        raise CheckpointInUse(f"the lock of --checkpoint {shown} keeps being replaced; try again")
    try:
        # held: no other search writes this checkpoint, so a partial save of it is a killed one's
        remove_partials(os.path.realpath(checkpoint))   # write_whole saves beside a link's target
        yield
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
        os.close(fd)


def _identity(game: Game, position, tables: dict | None = None) -> str:
    """What a checkpoint is a search of: game, board, position and the endgame table at its
    leaves (none: the key is left out, as checkpoints without tables always wrote it)."""
    cited = {} if tables is None else {"tables": tables}
    return json.dumps({"game": game.name, "parameters": game.parameters(),
                       "position": game.format_position(position), **cited}, sort_keys=True)


#: slots of the table a checkpoint reads or writes at a time: what a save or a restore adds to
#: the search's memory is a slice of this many entries (a few tens of MB), whatever the table
CHECKPOINT_SLICE = 1 << 20
#: the arrays of a checkpoint, one .npy member each of an uncompressed zip (as numpy's savez)
CHECKPOINT_ARRAYS = (("keys", np.dtype("<u8"), "key"), ("phi", np.dtype("<u4"), "phi"),
                     ("delta", np.dtype("<u4"), "delta"), ("work", np.dtype("<u4"), "work"))


def _npy_member(archive: zipfile.ZipFile, name: str, array: np.ndarray) -> None:
    with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
        np.lib.format.write_array(member, array, allow_pickle=False)


def save_checkpoint(path: str, game: Game, position, prover, tables: dict | None = None) -> None:
    """The search's table entries in use, written whole (write_whole) as a numpy .npz archive
    of the arrays keys, phi, delta, work (one element per entry), nodes and identity.  Each
    array is written a slice of the table at a time, so saving a full table of 8 GB does not
    need 8 GB more."""
    if prover.running:
        # a search a Ctrl-C could not stop in time is still writing its table: keep the last
        # checkpoint rather than save a torn one
        return
    slots = prover.slots
    used = sum(prover.used_entries(start, start + CHECKPOINT_SLICE, "key").size
               for start in range(0, slots, CHECKPOINT_SLICE))

    def write(out) -> None:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
            for name, dtype, column in CHECKPOINT_ARRAYS:
                with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array_header_1_0(member, {
                        "descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                        "shape": (used,)})
                    written = 0
                    for start in range(0, slots, CHECKPOINT_SLICE):
                        part = prover.used_entries(start, start + CHECKPOINT_SLICE, column)
                        member.write(memoryview(np.ascontiguousarray(part, dtype=dtype)))
                        written += part.size
                    if written != used:
                        raise RuntimeError("the search's table changed while it was saved")
            _npy_member(archive, "nodes", np.array([prover.nodes], dtype=np.int64))
            _npy_member(archive, "identity", np.frombuffer(_identity(game, position, tables).encode(), dtype=np.uint8))
    write_whole(path, write)


def write_whole(path: str, write) -> None:
    """write(file) into a new file beside `path` (beside its target, for a link), synced, then
    renamed over it (sharedfiles.write_whole): a kill at any moment leaves the old file or the
    new one, never a part, and a link stays a link.  A failure is CannotWrite, naming the
    user's name of the file."""
    try:
        _write_whole(os.path.realpath(path), write, sync=True, shown=quote(path, 60))
    except OSError as exc:
        raise CannotWrite(exc.strerror) from None


def _npy_header(member, what: str) -> tuple[tuple, np.dtype]:
    """(shape, dtype) of a .npy member, read from its header alone (never unpickled)."""
    try:
        version = np.lib.format.read_magic(member)
        read = {(1, 0): np.lib.format.read_array_header_1_0,
                (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read is None:
            raise ValueError
        shape, fortran, dtype = read(member)
    except Exception:  # noqa: BLE001 - whatever numpy's header parser raises (a TokenError too)
        raise BadProof(f"{what} is not a checkpoint of the proof search") from None
    if fortran or dtype.hasobject:
        raise BadProof(f"{what} is not a checkpoint of the proof search")
    return shape, dtype


def restore_checkpoint(path: str, game: Game, position, prover, tables: dict | None = None) -> None:
    """Refill the search from a checkpoint of the same position (checked; never unpickled),
    a slice at a time."""
    what = f"--checkpoint {quote(path, 60)}"
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if not {f"{name}.npy" for name, _, _ in CHECKPOINT_ARRAYS} | {"nodes.npy", "identity.npy"} <= names:
                raise BadProof(f"{what} is not a checkpoint of the proof search")
            small = {}
            for name, wanted, most in (("nodes", np.dtype("<i8"), 1), ("identity", np.dtype("u1"), 4096)):
                with archive.open(f"{name}.npy") as member:
                    shape, dtype = _npy_header(member, what)
                    # the type first: a header's length says nothing of its element's size
                    if dtype != wanted or len(shape) != 1 or not 0 <= shape[0] <= most:
                        raise BadProof(f"{what} is not a checkpoint of the proof search")
                    data = member.read(shape[0] * dtype.itemsize)
                    if len(data) != shape[0] * dtype.itemsize:
                        raise BadProof(f"{what} is not a checkpoint of the proof search")
                    small[name] = np.frombuffer(data, dtype=dtype)
            identity, nodes = small["identity"], small["nodes"]
            held = identity.tobytes().decode("utf-8", "replace")
            if held != _identity(game, position, tables):
                try:
                    cited = json.loads(held)
                    same_search = (isinstance(cited, dict) and {k: v for k, v in cited.items() if k != "tables"}
                                   == json.loads(_identity(game, position)))
                except ValueError:
                    same_search = False
                if same_search:
                    said = cited.get("tables")
                    raise BadProof(f"{what} is a search of this position with "
                                   + (f"the endgame table {quote(str(said.get('file')), 60)} at its leaves"
                                      if isinstance(said, dict) else "no endgame table at its leaves")
                                   + (", not this one" if tables is not None and said is not None else
                                      ", not with one" if tables is not None else "; give it with --tables"))
                raise BadProof(f"{what} is a checkpoint of another board or position")
            if nodes.shape != (1,) or not 0 <= int(nodes[0]) < (1 << 50):
                raise BadProof(f"{what} is not a checkpoint of the proof search")
            members = [archive.open(f"{name}.npy") for name, _, _ in CHECKPOINT_ARRAYS]
            try:
                count = None
                for member, (name, dtype, _) in zip(members, CHECKPOINT_ARRAYS):
                    shape, found = _npy_header(member, what)
                    if found != dtype or len(shape) != 1 or shape[0] < 0 or count not in (None, shape[0]):
                        raise BadProof(f"{what} is not a checkpoint of the proof search")
                    count = shape[0]
                if count > prover.entries:
                    raise BadProof(f"{what} holds more entries than --memory gives the search's table")
                for start in range(0, count, CHECKPOINT_SLICE):
                    size = min(CHECKPOINT_SLICE, count - start)
                    arrays = []
                    for member, (name, dtype, _) in zip(members, CHECKPOINT_ARRAYS):
                        data = member.read(size * dtype.itemsize)
                        if len(data) != size * dtype.itemsize:
                            raise BadProof(f"{what} ends inside its entries")
                        arrays.append(np.frombuffer(data, dtype=dtype))
                    try:
                        prover.restore(*arrays, int(nodes[0]))
                    except ValueError as exc:
                        raise BadProof(f"{what}: {exc}") from None
            finally:
                for member in members:
                    member.close()
    except BadProof:
        raise
    except (OSError, ValueError, KeyError, EOFError, MemoryError, RuntimeError, zipfile.BadZipFile):
        # RuntimeError: a header nested past the parser's depth, a compression method or an
        # encryption the zip reader does not know
        raise BadProof(f"{what} is not a checkpoint of the proof search") from None


# --- proof files ------------------------------------------------------------------------------

def check_output(path: str, option: str = "--proof") -> None:
    """A proof or checkpoint goes to a new or regular file (written whole through a temporary
    file beside it, then renamed), checked before searching: refuse an empty name, a
    directory, a device, a missing directory, a name the file system refuses, and (for a
    proof) an existing file that is not a proof."""
    if not path or path.endswith(os.sep):
        raise BadProof(f"{option} {quote(path, 60)} is not a file name")
    if os.path.isdir(path):
        raise BadProof(f"{option} {quote(path, 60)} is a directory")
    if os.path.exists(path) and not os.path.isfile(path):
        raise BadProof(f"{option} {quote(path, 60)} is not a regular file (it is written whole, "
                       f"then renamed into place)")
    target = os.path.realpath(path)
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise BadProof(f"{option} {quote(path, 60)}: no directory {quote(directory, 60)}")
    if option == "--proof" and os.path.isfile(target):
        with open(target, "rb") as existing:
            if not existing.read(64).startswith(b'{"format": "' + PROOF_FORMAT.encode()):
                raise BadProof(f"--proof {quote(path, 60)} exists and is not a proof: choose "
                               f"another name or remove it")
    try:                                    # the name as the file system takes it
        probe = os.open(_temporary(target), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError as exc:
        raise BadProof(f"{option} {quote(path, 60)} cannot be written ({exc.strerror})") from None
    os.close(probe)
    os.remove(_temporary(target))


def _temporary(target: str) -> str:
    return os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.{os.getpid()}.tmp")


#: pairs (position, chosen child) the extraction gathers in memory before it writes them to its
#: temporary file (16 bytes each)
EXTRACT_CHUNK = 1 << 22
#: positions of a proof compressed at a time when it is written
PROOF_WRITE_SLICE = 1 << 22


def write_proof(path: str, game: Game, position, value: str, choices: Choices,
                tables: dict | None = None) -> int:
    """Write a proof file whole or not at all (write_whole); its size.  `tables`: the citation
    of the endgame table whose positions end its lines (Leaves.citation)."""
    count = int(choices.keys.size)
    # compressed a slice at a time (one frame that declares its size, as the reader wants):
    # a proof of a hundred million positions is never copied whole beside the search's table
    buffer = io.BytesIO()
    with zstandard.ZstdCompressor(level=9, write_checksum=True).stream_writer(
            buffer, size=16 * count, closefd=False) as frame:
        for column in (choices.keys, choices.chosen):
            for start in range(0, count, PROOF_WRITE_SLICE):
                frame.write(np.ascontiguousarray(column[start:start + PROOF_WRITE_SLICE], dtype="<u8"))
    payload = buffer.getbuffer()
    header = {"format": PROOF_FORMAT, "version": PROOF_VERSION, "game": game.name,
              "parameters": game.parameters(), "position": game.format_position(position),
              "value": value, "winner_positions": count,
              "payload_crc32": zlib.crc32(payload)}
    if tables is not None:
        header["tables"] = dict(tables)
    head = json.dumps(header, sort_keys=True).encode() + b"\n"

    def write(out) -> None:
        out.write(head)
        out.write(payload)
    write_whole(path, write)
    return len(head) + len(payload)


@dataclass
class ProofFile:
    game: Game
    position: object
    value: str
    keys: np.ndarray                 # sorted canonical packed positions of the winner's
    chosen: np.ndarray               # the child chosen at each
    tables: dict | None = None       # the endgame table its lines may end in (file, max_discs,
                                     # checksum), checked for form only
    leaves: Leaves | None = None     # that table, found and matched by the caller


def _citation(path: str, cited) -> dict | None:
    """A proof header's citation of an endgame table, its form checked."""
    if cited is None:
        return None
    if (not isinstance(cited, dict) or set(cited) != {"file", "max_discs", "checksum"}
            or not isinstance(cited["file"], str) or not re.fullmatch(r"[\w.+-]{1,200}", cited["file"])
            or type(cited["max_discs"]) is not int or not 1 <= cited["max_discs"] <= 64
            or not isinstance(cited["checksum"], str)
            or not re.fullmatch(r"[0-9a-f]{64}", cited["checksum"])):
        raise BadProof(f"{path}: its citation of an endgame table is not valid")
    return dict(cited)


def read_proof(path: str) -> ProofFile:
    """A proof file, its structure checked (what it proves is `verify_proof`'s)."""
    from .games import make_game
    with open(path, "rb") as stream:
        head = stream.readline(MAX_HEADER + 1)
        if not head.endswith(b"\n") or len(head) > MAX_HEADER:
            raise BadProof(f"{path} is not a sowsolve proof (no header line)")
        try:
            header = json.loads(head)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise BadProof(f"{path} is not a sowsolve proof (its header is not JSON)") from None
        if not isinstance(header, dict) or header.get("format") != PROOF_FORMAT:
            raise BadProof(f"{path} is not a sowsolve proof")
        version = header.get("version")
        if "version" not in header or type(version) is not int:
            raise DamagedProof(f"{path}: its header has no format version (a whole number), "
                               f"{'none' if 'version' not in header else quote(json.dumps(version), 20)}")
        if version != PROOF_VERSION:
            raise BadProof(f"{path} is a proof of format version {quote(str(version), 20)}; "
                           f"this sowsolve reads version {PROOF_VERSION}")
        count = header.get("winner_positions")
        if type(count) is not int or not 0 <= count <= (1 << 40):
            raise DamagedProof(f"{path}: its count of positions is not valid")
        payload = stream.read(16 * count + (16 * count >> 7) + (1 << 16))
        if stream.read(1):
            raise DamagedProof(f"{path}: it holds more than its count of positions")
    if header.get("payload_crc32") != zlib.crc32(payload):
        raise DamagedProof(f"{path}: its positions fail their checksum (the file is damaged)")
    if 16 * count > MAX_PROOF_RATIO * len(payload) + (1 << 16):
        # sorted pairs of 64-bit keys compress about 4:1; a count far beyond its bytes would
        # have the reader allocate what the file never held
        raise DamagedProof(f"{path}: its {count:,} positions cannot be held in its "
                           f"{len(payload):,} bytes")
    try:        # the frame must declare its size, and that size, before anything is allocated
        declared = zstandard.frame_content_size(payload)
        if declared != 16 * count:
            raise DamagedProof(f"{path}: its positions do not take the {16 * count:,} bytes of "
                               f"its count")
        frame = zstandard.ZstdDecompressor().decompressobj()
        raw = frame.decompress(payload)
        if not frame.eof or frame.unused_data:
            raise DamagedProof(f"{path}: {'bytes follow' if frame.eof else 'the file ends inside'} "
                               f"its positions")
    except zstandard.ZstdError:
        raise DamagedProof(f"{path}: its positions do not decompress") from None
    if len(raw) != 16 * count:
        raise DamagedProof(f"{path}: its positions take {len(raw):,} bytes, not {16 * count:,}")
    parameters = header.get("parameters")
    if not isinstance(parameters, dict) or not isinstance(header.get("game"), str):
        raise BadProof(f"{path}: it does not name its game")
    try:
        game = make_game(header["game"], **parameters)
    except (BadParameters, TypeError, ValueError) as exc:
        raise BadProof(f"{path}: its game is not valid ({exc})") from None
    if not game.solver.proves:
        raise BadProof(f"{path}: proofs are of games solved by search, not of {game.describe()}")
    if not isinstance(header.get("position"), str):
        raise BadProof(f"{path}: it does not name its position")
    position = game.parse_position(header["position"])
    if header.get("value") not in ("win", "loss"):
        raise BadProof(f"{path}: its value is neither win nor loss")
    words = np.frombuffer(raw, dtype="<u8")
    keys, chosen = words[:count].astype(np.uint64), words[count:].astype(np.uint64)
    if count > 1 and not bool(np.all(keys[1:] > keys[:-1])):
        raise DamagedProof(f"{path}: its positions are not in order")
    return ProofFile(game, position, header["value"], keys, chosen, _citation(path, header.get("tables")))


def verify_proof(proof: ProofFile, progress: Progress = no_progress, samples: int = 1000,
                 seed: int = 0, full: bool = False) -> dict:
    """Replay the proof: every move of the loser answered, every move of the winner legal, every
    line ending in the winner's win.  The whole proof is replayed with the game's compiled move
    generator (`proofcheck`, apart from the search), and `samples` of its positions (drawn with
    `seed`) again with the reference rules, which must give the same children; with `full`,
    every position with the reference rules alone (slow: Python).  ProofFails at the first
    fault."""
    game = proof.game
    if full:
        if proof.tables is not None:
            raise BadParameters("--full replays a proof with the reference rules alone; a proof "
                                "whose lines end in an endgame table is checked with the table")
        checked = replay_with_reference_rules(proof, progress)
        return _verified(proof, checked, "reference rules", checked)
    _, root = game.key(proof.position)
    if proof.tables is not None and (proof.leaves is None or proof.leaves.citation != proof.tables):
        raise ProofFails(f"the proof's lines end in the endgame table {quote(proof.tables['file'], 60)}, "
                         f"which was not found")
    capsule = game.kernel().capsule() if proof.tables is None else proof.leaves.kernel.capsule()
    with progress(None, "positions verified") as bar:
        with observing(bar_advancer(bar)):
            checked, code, failed, reached = run_stoppable(lambda words: _proofcheck.check_proof(
                capsule, root, proof.value == "win", proof.keys, proof.chosen, words))
    if code:
        where = game.format_position(game.position_of_key(failed)) if code != 4 else f"{failed:#x}"
        raise ProofFails(f"{_proofcheck.FAILURES[code]} {quote(where, 60)}")
    if not bool(np.all(reached)):
        # a proof as written holds the positions its lines reach, no others: the rest would go
        # unchecked, and dilute the sample replayed with the reference rules
        raise ProofFails(f"the proof holds {int(np.count_nonzero(~reached)):,} positions of the "
                         f"winner's that its lines never reach")
    sampled = cross_check_with_reference_rules(proof, samples, seed)
    return dict(_verified(proof, checked, "compiled move generator", sampled), seed=seed)


def _verified(proof: ProofFile, checked: int, method: str, reference_checked: int) -> dict:
    return {"game": proof.game.name, "parameters": proof.game.parameters(),
            "position": proof.game.format_position(proof.position), "value": proof.value,
            "positions_verified": checked, "winner_positions": int(proof.keys.size),
            "method": method, "reference_positions": reference_checked,
            **({} if proof.tables is None else {"tables": proof.tables})}


def _reference_children(game: Game, position) -> set[int] | str:
    """The keys of a position's children by the reference rules, or its outcome if final."""
    outcome = game.outcome(position)
    if outcome is not None:
        return outcome
    return {game.key(game.play(position, move))[1] for move in game.legal_moves(position)}


def cross_check_with_reference_rules(proof: ProofFile, samples: int, seed: int) -> int:
    """Positions of the proof (of the winner's, drawn with `seed`, and the loser's position each
    moves to) whose children by the reference rules must be the compiled generator's: a fault of
    the generator where the proof runs would otherwise go unseen.  Returns how many."""
    game, kernel = proof.game, proof.game.kernel()
    rng = random.Random(seed)
    picks = rng.sample(range(proof.keys.size), min(samples, int(proof.keys.size)))
    checked = 0
    for at in picks:
        for key in (int(proof.keys[at]), int(proof.chosen[at])):
            position = game.position_of_key(key)
            compiled_view = kernel.children(key)       # the children, or a final record
            compiled_view = set(compiled_view) if isinstance(compiled_view, list) else \
                Value.from_record(compiled_view).value
            if _reference_children(game, position) != compiled_view:
                raise ProofFails(f"the compiled move generator and the reference rules disagree in "
                                 f"{quote(game.format_position(position), 60)}")
            checked += 1
    return checked


def replay_with_reference_rules(proof: ProofFile, progress: Progress = no_progress) -> int:
    """Replay the whole proof with the reference rules (Python legal moves and play); how many
    positions it checked."""
    game, start = proof.game, proof.position
    winner = start.side if proof.value == "win" else None
    verified: set[tuple[int, bool]] = set()
    todo = [start]
    checked = 0
    with progress(None, "positions verified") as bar:
        while todo:
            position = todo.pop()
            _, key = game.key(position)
            # a position and its mirror with the houses swapped (the other side to move) share
            # a key: a key checked with the winner to move says nothing of it with the loser
            role = (key, position.side == winner)
            if role in verified:
                continue
            verified.add(role)
            checked += 1
            bar.update(1)
            text = game.format_position(position)
            moves = game.legal_moves(position)
            if winner is None:          # a loss at the start: the other side is the winner
                winner = game.play(position, moves[0]).side if moves else None
            outcome = game.outcome(position)
            if outcome is not None or not moves:
                won = (outcome == "win") == (position.side == winner)
                if not won:
                    raise ProofFails(f"the proof reaches {quote(text, 60)}, which its winner does not win")
                continue
            if position.side != winner:
                todo.extend(game.play(position, move) for move in moves)
                continue
            at = int(np.searchsorted(proof.keys, np.uint64(key)))
            if at == proof.keys.size or int(proof.keys[at]) != key:
                raise ProofFails(f"the proof gives no move for the winner in {quote(text, 60)}")
            wanted = int(proof.chosen[at])
            for move in moves:
                child = game.play(position, move)
                if game.key(child)[1] == wanted:
                    todo.append(child)
                    break
            else:
                raise ProofFails(f"the proof's move in {quote(text, 60)} is not a legal move there")
    return checked


def verify_file(path: str, progress: Progress = no_progress, samples: int = 1000, seed: int = 0,
                full: bool = False, leaves_for: Callable[[ProofFile], Leaves] | None = None) -> dict:
    """`sowsolve check --proof`: the report of verifying a proof file (failures: the first
    fault found); BadProof for a file that is not a proof.  A proof that cites an endgame table
    is checked with the table `leaves_for(proof)` finds (ProofFails unless its records are the
    ones the proof cites)."""
    if not os.path.isfile(path):
        if os.path.isdir(path):
            raise BadProof(f"{quote(path, 60)} is a directory, not a proof file")
        if os.path.exists(path):        # a FIFO, a device: never opened (a FIFO would block)
            raise BadProof(f"{quote(path, 60)} is not a proof file (not a regular file)")
        raise BadProof(f"no proof file at {quote(path, 60)}")
    proof = read_proof(path)
    if proof.tables is not None and leaves_for is not None:
        try:
            proof.leaves = leaves_for(proof)
        except ProofFails as exc:
            return {"game": proof.game.name, "parameters": proof.game.parameters(),
                    "position": proof.game.format_position(proof.position), "value": proof.value,
                    "tables": proof.tables, "failures": [str(exc)], "file": path}
    try:
        report = verify_proof(proof, progress, samples, seed, full)
        report["failures"] = []
    except ProofFails as exc:
        report = {"game": proof.game.name, "parameters": proof.game.parameters(),
                  "position": proof.game.format_position(proof.position), "value": proof.value,
                  "failures": [str(exc)]}
    return dict(report, file=path)
