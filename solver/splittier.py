"""One score tier split across processes: each holds a block of the tier's positions.

A score tier is solved by sweeps (cext/scoresolve.pyx): per threshold, an attractor settles
positions level by level (distance 0, 1, 2, ...), and each position settled makes an offer to
each of its predecessors.  Split into blocks of consecutive positions, each process (a *part*)
holds the working records of its block alone (5 bytes a position) and solves the levels of its
block; the offers to positions of other blocks are handed to their owners between two levels
(one *round* of the exchange: every part sends every other part what it has for it, and the
nearest level where anything waits; all go on to the nearest of them).  Offers commute, so the
records are those of the tier solved whole, byte for byte.  The reach closure before the delay
phase is rounds too (waves), and the delay phase needs the whole tier's joined bits (one bit a
position, gathered in one round).

The exchange goes through files of a folder every part sees (`FileExchange`): one file per round
and pair of parts, written whole under its final name, authenticated with a key the driver draws
for the tier and hands to the parts alone (never written to the folder): a file planted there,
one of another round or pair, or of an earlier solve, is refused, and every offer is checked
against the receiving block before its kernel takes it.

A part saves its state between two thresholds (`Saved`: at most every `every` seconds) and keeps
the files it received since; a part run again (its worker lost) starts from its saved state and
replays the rounds after it from the files, while the other parts wait for it.  So a killed
worker costs the rounds since the part's last save.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import struct
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .sharedfiles import _open_regular, write_whole

#: block boundaries are multiples of this (the joined bits of a block are whole bytes)
BLOCK_ALIGN = 64
#: a file of the exchange: magic, round, sender, receiver, count of values, payload bytes; then
#: the values (int64), the payload, and a keyed BLAKE2b of all that
_MAGIC = b"SOWSPLIT"
_HEADER = struct.Struct("<8sQIIIQ")
_MAC_BYTES = 32
#: an offer in a file of the exchange: position and distance, uint32 each
OFFER_BYTES = 8


def blocks(n: int, parts: int) -> list[tuple[int, int]]:
    """The blocks of a tier of n positions for `parts` parts: consecutive, nearly equal, each
    starting at a multiple of BLOCK_ALIGN (some may be empty on a small tier)."""
    if parts < 1:
        raise ValueError("a tier is split into one part or more")
    cuts = [min(n, (n * k // parts + BLOCK_ALIGN - 1) // BLOCK_ALIGN * BLOCK_ALIGN)
            for k in range(parts)] + [n]
    return [(cuts[k], cuts[k + 1]) for k in range(parts)]


@dataclass
class Figures:
    """What a part's exchange cost: rounds, bytes written and read, seconds spent waiting for
    the other parts' files."""
    rounds: int = 0
    bytes_out: int = 0
    bytes_in: int = 0
    wait_seconds: float = 0.0
    levels: int = 0
    saves: int = 0
    save_seconds: float = 0.0
    solve_seconds: float = 0.0
    resumed_round: int = 0          # the round a part run again went on after (0: from the start)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _mac(key: bytes, *chunks) -> bytes:
    digest = hashlib.blake2b(key=key, digest_size=_MAC_BYTES)
    for chunk in chunks:
        digest.update(chunk)
    return digest.digest()


def write_authentic(path: str, key: bytes, head: bytes, chunks: list) -> int:
    """A file of the exchange's folder under `path`, whole or not at all (write_whole): its
    head (a fixed-size struct that says how long the rest is), the head's keyed hash, the
    chunks (bytes, or arrays: written from their memory, never copied whole), and the keyed
    hash of head and chunks; the bytes written."""
    views = [memoryview(c).cast("B") if isinstance(c, np.ndarray) else c for c in chunks]

    def write(f) -> None:
        f.write(head)
        f.write(_mac(key, head))
        for view in views:
            f.write(view)
        f.write(_mac(key, head, *views))

    write_whole(path, write)
    return len(head) + sum(len(v) for v in views) + 2 * _MAC_BYTES


def read_authentic(path: str, key: bytes, head_size: int,
                   body_size: Callable[[bytes], int]) -> tuple[bytes, memoryview]:
    """(head, body) of a file of the exchange's folder, after the checks every such file gets:
    a regular file (no link, FIFO or device); its head's keyed hash right before anything else
    is read, then the size the head declares (`body_size(head)`, which checks the head and
    raises ValueError for one that does not fit) that of the file, and the whole file's keyed
    hash right.  A file nobody here wrote is refused after its first bytes, however large it
    is; ValueError naming the file for every fault."""
    try:
        with _open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            if size < head_size + 2 * _MAC_BYTES:
                raise ValueError(f"{path} is not a file of this split solve ({size:,} bytes)")
            head = f.read(head_size)
            if len(head) != head_size or not hmac.compare_digest(_mac(key, head),
                                                                 f.read(_MAC_BYTES)):
                raise ValueError(f"{path} is not a file of this split solve (its "
                                 f"authentication fails)")
            body = body_size(head)
            if size != head_size + body + 2 * _MAC_BYTES:
                raise ValueError(f"{path} holds {size:,} bytes, not the "
                                 f"{head_size + body + 2 * _MAC_BYTES:,} its head declares")
            rest = f.read(body + _MAC_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"{path} cannot be read ({exc.strerror or exc})") from None
    view = memoryview(rest)
    if len(rest) != body + _MAC_BYTES or not hmac.compare_digest(
            _mac(key, head, view[:body]), view[body:]):
        raise ValueError(f"{path} changed while it was read, or is not a file of this split "
                         f"solve")
    return head, view[:body]


class FileExchange:
    """The rounds of one part, through files of `folder`: `trade` sends every other part its
    payload and this part's values, and returns theirs once all are there.  `waiting` is
    called while it waits (it raises to give up: the solve called off)."""

    def __init__(self, folder: str, part: int, parts: int, key: bytes,
                 waiting: Callable[[], None] | None = None, longest: float = 0.001):
        self.folder, self.part, self.parts, self.key = folder, part, parts, key
        self.waiting = waiting or (lambda: None)
        self.longest = longest
        self.round = 0
        self.received: list[str] = []      # files read since the last save
        self.figures = Figures()

    def path(self, r: int, src: int, dst: int) -> str:
        return os.path.join(self.folder, f"round-{r:010d}-{src}-{dst}")

    def trade(self, payloads: list, values: list[int], limits: list[int] | None = None
              ) -> tuple[list, list[list[int]]]:
        """One round: payloads[q] to part q (this part's own ignored), `values` to all;
        (payload from each part, values of each part), this part's own in its place.
        `limits[q]`: the most bytes part q's payload can hold (none: empty)."""
        self.round += 1
        r = self.round
        head_values = np.asarray(values, dtype=np.int64).tobytes()
        for q in range(self.parts):
            if q == self.part:
                continue
            head = _HEADER.pack(_MAGIC, r, self.part, q, len(values), len(payloads[q]))
            self.figures.bytes_out += write_authentic(self.path(r, self.part, q), self.key,
                                                      head, [head_values, payloads[q]])
        got_payloads, got_values = list(payloads), [list(values)] * self.parts
        got_payloads[self.part] = payloads[self.part]
        waited = time.monotonic()
        for q in range(self.parts):
            if q == self.part:
                continue
            path = self.path(r, q, self.part)
            self._await(path, r, q)
            most = 0 if limits is None else limits[q]

            def body_size(head: bytes) -> int:
                magic, fr, src, dst, count, nbytes = _HEADER.unpack(head)
                if (magic, fr, src, dst, count) != (_MAGIC, r, q, self.part, len(values)) \
                        or nbytes > most:
                    raise ValueError(f"{path} is not the file of round {r} from part {q}")
                return 8 * count + nbytes

            _, body = read_authentic(path, self.key, _HEADER.size, body_size)
            self.received.append(path)
            self.figures.bytes_in += _HEADER.size + len(body) + 2 * _MAC_BYTES
            got_values[q] = np.frombuffer(body, dtype=np.int64, count=len(values)).tolist()
            got_payloads[q] = body[8 * len(values):]       # a view: never copied
        self.figures.wait_seconds += time.monotonic() - waited
        self.figures.rounds += 1
        return got_payloads, got_values

    def _await(self, path: str, r: int, src: int) -> None:
        """Until the file of round r from part `src` is there.  Once a second: the solve may
        have been called off (`waiting`), and a file of a later round from the same part says
        this one was removed (by another run of this part, or by someone else): an error, not
        a wait for good."""
        pause, looked = 2e-5, time.monotonic()
        while not os.path.lexists(path):
            time.sleep(pause)
            pause = min(pause * 1.5, self.longest)
            if time.monotonic() - looked > 1.0:
                looked = time.monotonic()
                self.waiting()
                if self._gone_on(r, src) and not os.path.lexists(path):
                    raise ValueError(f"{path} is gone while part {src} has gone on past round "
                                     f"{r}: the split solve cannot go on (another run of part "
                                     f"{self.part} at once, an older saved state, or a file "
                                     f"removed)")

    def _gone_on(self, r: int, src: int) -> bool:
        """Whether part `src` is past round r: it has ended, or a file of a later round from
        it to this part is there."""
        if os.path.lexists(self.end_path(src)):
            return True
        suffix = f"-{src}-{self.part}"
        for name in os.listdir(self.folder):
            if name.startswith("round-") and name.endswith(suffix):
                try:
                    if int(name[len("round-"):-len(suffix)]) > r:
                        return True
                except ValueError:
                    continue
        return False

    def end_path(self, part: int) -> str:
        return os.path.join(self.folder, f"end-{part}")

    def ended(self) -> None:
        """This part has traded its last round (a part waiting for a file of it that is not
        there then knows the file is gone)."""
        write_whole(self.end_path(self.part), lambda f: f.write(b"ended"))

    def forget_received(self) -> None:
        """The files read so far are needed no more (the state after them is saved)."""
        for path in self.received:
            try:
                os.unlink(path)
            except OSError:
                pass
        self.received.clear()


@dataclass
class Resume:
    """Where a saved part goes on: the attractor of `forcing`, after `done` of its thresholds,
    with the sums of the blocks' summaries `worth`, after exchange round `round`."""
    forcing: int
    done: int
    worth: list[int]
    round: int
    state: dict = field(repr=False)


class Saved:
    """A part's saved state, one file in the exchange's folder, authenticated like the rounds'
    files; written at most every `every` seconds (0: after every threshold)."""
    _NAMES = (("records", np.uint16), ("flags", np.uint8), ("dist", np.uint16),
              ("longs", np.uint32))

    def __init__(self, folder: str, part: int, key: bytes, every: float,
                 block: tuple[int, int, int] = (0, 0, 0)):
        """`block`: (lo, hi, n) of the part's block and tier, which the file names and a load
        checks (a state of another part, block or tier is refused)."""
        self.path = os.path.join(folder, f"state-{part}")
        self.part, self.key, self.every, self.block = part, key, every, tuple(block)
        self.last = time.monotonic()

    def due(self) -> bool:
        return time.monotonic() - self.last >= self.every

    _HEAD = struct.Struct("<8s12q")     # magic; part, lo, hi, n; forcing, done, round; the
                                        # count of worth values; the four arrays' sizes

    def save(self, resume: Resume) -> None:
        arrays = [np.ascontiguousarray(resume.state[name], dtype=dtype)
                  for name, dtype in self._NAMES]
        head = self._HEAD.pack(b"SOWSTATE", self.part, *self.block, resume.forcing,
                               resume.done, resume.round, len(resume.worth),
                               *[a.size for a in arrays])
        # the block's arrays go to the file from their own memory (a copy would double the
        # part's memory while it saves)
        write_authentic(self.path, self.key, head,
                        [np.asarray(resume.worth, dtype=np.int64), *arrays])
        self.last = time.monotonic()

    def load(self, block_size: int) -> Resume | None:
        if not os.path.lexists(self.path):
            return None
        lo, hi, _ = self.block

        def body_size(head: bytes) -> int:
            fields = self._HEAD.unpack(head)
            magic, part, block, (_, _, rnd, nworth), sizes = (
                fields[0], fields[1], tuple(fields[2:5]), fields[5:9], list(fields[9:]))
            if (magic, part, block) != (b"SOWSTATE", self.part, self.block):
                raise ValueError(f"{self.path} is not the saved state of part {self.part} of "
                                 f"this tier")
            if not (0 <= nworth <= 1024 and sizes[:3] == [hi - lo] * 3
                    and 0 <= sizes[3] <= 2 * (hi - lo) and sizes[3] % 2 == 0 and rnd >= 0):
                raise ValueError(f"{self.path} is not a saved part of this block")
            return 8 * nworth + sum(size * np.dtype(dtype).itemsize
                                    for size, (_, dtype) in zip(sizes, self._NAMES))

        head, body = read_authentic(self.path, self.key, self._HEAD.size, body_size)
        _, _, _, _, _, forcing, done, rnd, nworth, *sizes = self._HEAD.unpack(head)
        worth = np.frombuffer(body, dtype=np.int64, count=nworth).tolist()
        at, state = 8 * nworth, {}
        for (name, dtype), size in zip(self._NAMES, sizes):
            state[name] = np.frombuffer(body, dtype=dtype, count=size, offset=at)   # views
            at += size * np.dtype(dtype).itemsize
        return Resume(forcing, done, worth, rnd, state)


def _route(offers: np.ndarray, bounds: list[tuple[int, int]]) -> list[bytes]:
    """The offers (rows position, distance) cut by the block that owns each position."""
    if not offers.size:
        return [b""] * len(bounds)
    owner = np.searchsorted([hi for _, hi in bounds], offers[:, 0], side="right")
    order = np.argsort(owner, kind="stable")
    cuts = np.searchsorted(owner[order], np.arange(len(bounds) + 1))
    ranked = offers[order]
    return [ranked[cuts[q]:cuts[q + 1]].tobytes() for q in range(len(bounds))]


def _offers(payload: bytes, where: str) -> np.ndarray:
    if len(payload) % 8:
        raise ValueError(f"the offers {where} are not rows of (position, distance)")
    return np.frombuffer(payload, dtype=np.uint32).reshape(-1, 2)


def _offer_limits(part, bounds) -> list[int]:
    """The most bytes of offers a part can send in one round: each position of its block
    settled at most once, offering to at most max_preds predecessors."""
    return [OFFER_BYTES * part.max_preds * (hi - lo) for lo, hi in bounds]


def _levels(part, exchange: FileExchange, bounds, me: int) -> None:
    """Every level of the sweep under way, in rounds: each part settles the level, trades the
    offers, and all go on at the nearest level where anything waits."""
    limits = _offer_limits(part, bounds)
    parts = len(bounds)
    d = 0
    while True:
        out = part.level(d)
        exchange.figures.levels += 1
        here = part.next_level(d)
        sent = int(out[:, 1].min()) if out.size else -1
        nearest = min([v for v in (here, sent) if v >= 0], default=-1)
        payloads, values = exchange.trade(_route(out, bounds), [nearest], limits)
        for q, payload in enumerate(payloads):
            if q != me and payload:
                part.receive(_offers(payload, f"of part {q}"))
        waiting = [v[0] for v in values if v[0] >= 0]
        if not waiting:
            break
        if min(waiting) < d:
            q = min(range(parts), key=lambda k: values[k][0] if values[k][0] >= 0 else 1 << 62)
            raise ValueError(f"{exchange.path(exchange.round, q, me)} names level "
                             f"{min(waiting)}, one already settled")
        d = min(waiting)
    part.end_levels()


def solve_block(part, exchange: FileExchange, bounds: list[tuple[int, int]],
                saved: Saved | None = None):
    """The records of one block (a ScorePart) of a split tier, as solve_tier gives the same
    positions: (records of the block, its long entries, final positions, endless ones)."""
    started = time.monotonic()
    me, parts = exchange.part, exchange.parts
    if (part.lo, part.hi) != tuple(bounds[me]):
        raise ValueError(f"part {me} is not the block {bounds[me]}")
    if saved is not None:
        saved.block = (part.lo, part.hi, part.n)
    bound, endless = part.bound, part.endless
    resume = saved.load(part.hi - part.lo) if saved is not None else None
    plan = [(0, list(range(bound, endless, -1))), (1, list(range(-bound, endless)))]
    for forcing, thresholds in plan:
        if not thresholds or (resume is not None and forcing < resume.forcing):
            continue                    # (no threshold: solve_tier does not summarise either)
        if resume is not None:
            if not 0 <= resume.done <= len(thresholds) or len(resume.worth) != 2 * bound + 1:
                raise ValueError(f"{saved.path} does not fit this tier")
            part.restore(resume.state, forcing, 1)
            worth, first, exchange.round = resume.worth, resume.done, resume.round
            exchange.figures.resumed_round = resume.round
            resume = None
        else:
            mine = part.summarise(forcing).tolist()
            _, values = exchange.trade([b""] * parts, mine)
            worth = np.sum(values, axis=0).tolist()
            first = 0
        for k in range(first, len(thresholds)):
            t = thresholds[k]
            if not worth[t + bound]:
                continue                # nothing anywhere is worth it: nothing joins
            part.seed(t)
            _levels(part, exchange, bounds, me)
            if saved is not None and saved.due():
                saving = time.monotonic()
                saved.save(Resume(forcing, k + 1, worth, exchange.round, part.state()))
                exchange.forget_received()
                exchange.figures.saves += 1
                exchange.figures.save_seconds += time.monotonic() - saving
    # the delay phase: the whole tier's joined bits, then the reach closure in waves
    mine = part.joined_bits().tobytes()
    sizes = [(hi - lo + 7) // 8 for lo, hi in bounds]
    payloads, _ = exchange.trade([mine] * parts, [], sizes)
    for q, payload in enumerate(payloads):
        if len(payload) != sizes[q]:
            raise ValueError(f"the joined bits of part {q} do not fit its block")
    part.delay_phase(np.frombuffer(b"".join(payloads), dtype=np.uint8))
    while True:
        total, out = part.reach_wave()
        payloads, values = exchange.trade(_route(out, bounds), [total + len(out)],
                                          _offer_limits(part, bounds))
        for q, payload in enumerate(payloads):
            if q != me and payload:
                part.receive(_offers(payload, f"of part {q}"))
        if not any(v[0] for v in values):
            break
    part.seed_delay()
    _levels(part, exchange, bounds, me)
    exchange.ended()
    exchange.figures.solve_seconds += time.monotonic() - started
    return part.finish()


_BLOCK = struct.Struct("<8sQQQQQQ")      # magic, part, lo, hi, n, records, long entries


def block_path(folder: str, part: int) -> str:
    return os.path.join(folder, f"block-{part}")


def save_block(folder: str, key: bytes, part: int, block: tuple[int, int, int],
               records: np.ndarray, long: np.ndarray) -> None:
    """A part's result, authenticated like the rounds' files, for the driver to join."""
    records = np.ascontiguousarray(records, dtype=np.uint16)
    long = np.ascontiguousarray(long, dtype=np.uint64)
    write_authentic(block_path(folder, part), key,
                    _BLOCK.pack(b"SOWBLOCK", part, *block, records.size, long.size),
                    [records, long])


def load_block(folder: str, key: bytes, part: int, block: tuple[int, int, int]
               ) -> tuple[np.ndarray, np.ndarray]:
    """(records, long entries) part `part` saved for the block (lo, hi, n): ValueError naming
    the file unless it is that part's, of that block, written with this tier's key."""
    lo, hi, n = block
    path = block_path(folder, part)

    def body_size(head: bytes) -> int:
        magic, who, *found, count, nlong = _BLOCK.unpack(head)
        if (magic, who, tuple(found), count) != (b"SOWBLOCK", part, (lo, hi, n), hi - lo) or \
                not 0 <= nlong <= hi - lo:
            raise ValueError(f"{path} is not the block of part {part} ({lo}..{hi} of {n})")
        return 2 * count + 8 * nlong

    head, body = read_authentic(path, key, _BLOCK.size, body_size)
    count, nlong = _BLOCK.unpack(head)[-2:]
    records = np.frombuffer(body, dtype=np.uint16, count=count)
    long = np.frombuffer(body, dtype=np.uint64, count=nlong, offset=2 * count)
    return records, long


def solve_split(make_part: Callable[[int, int], object], n: int, parts: int, folder: str,
                every: float = 0.0) -> tuple[np.ndarray, np.ndarray, int, int, list[Figures]]:
    """A tier of n positions split into `parts` blocks solved by threads of this process
    through files of `folder` (the exchange the cluster's parts use, without a cluster: for
    tests and measurements).  `make_part(lo, hi)` gives a block's ScorePart.  (records, long
    table, final positions, endless ones, each part's figures)."""
    import threading
    bounds = blocks(n, parts)
    key = os.urandom(32)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    results: list = [None] * parts
    errors: list[BaseException] = []
    exchanges = [FileExchange(folder, q, parts, key) for q in range(parts)]
    failed = threading.Event()

    def give_up():
        if failed.is_set():
            raise RuntimeError("another part failed")

    def run(q):
        try:
            exchanges[q].waiting = give_up
            results[q] = solve_block(make_part(*bounds[q]), exchanges[q], bounds,
                                     Saved(folder, q, key, every))
        except BaseException as exc:    # noqa: BLE001 - raised below
            errors.append(exc)
            failed.set()

    threads = [threading.Thread(target=run, args=(q,)) for q in range(parts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    records = np.concatenate([r[0] for r in results])
    long = np.sort(np.concatenate([r[1] for r in results]))
    return (records, long, sum(r[2] for r in results), sum(r[3] for r in results),
            [e.figures for e in exchanges])
