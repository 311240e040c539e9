"""The proof search spread over a Dask cluster (`prove --workers N | --scheduler ADDRESS`).

Job-level proof-number search (Wu, Lin et al., "Job-level proof-number search", 2010), the
method that proved Connect6 openings on a cluster: the driver keeps the top of the proof tree
(a DAG of positions, one node per canonical position), picks its most-proving leaf as df-pn
would pick it, and hands that position to a worker as a job: "search this position with df-pn
for at most B expansions".  The worker's answer is either a proof of the position (who wins,
with the winner's choices below it: a subproof) or the numbers the worker's search found for
each of its children, which become the node's children in the driver's tree.  Proof and
disproof numbers then go up the DAG as in any proof-number search, and the next leaf is picked.

What is proved is never lost and never repeated:
- a proved position is a node with its value and its subproof, kept by the driver (and in its
  checkpoint), whatever happens to the worker that proved it; a worker killed mid-job costs that
  job, which the driver takes back and hands out again;
- each worker keeps one search table across all its jobs (`Prover.aim`), so what one job
  proved, the next job on that worker reads instead of searching again; children that a job
  proved on its way are sent back with their subproofs, so the driver never hands them out;
- a position's job goes to the worker whose job searched its parent (its table holds what was
  searched below), unless that worker has its share of jobs out (then to the worker with
  fewest); a job asked of a worker that has since died is taken back and handed out again;
- an answer taken is released at once (Dask would compute a job again, on another worker,
  if the worker holding its answer died while the driver still held the job);
- when the root is proved, the jobs still out are cancelled and those running are stopped on
  their workers (`stop_jobs`), which are free for the next proof at once.

The proof written at the end is one proof file like the in-process search's: the driver's
winning choices in its tree joined with the subproofs below them, kept to the positions its
lines reach, and replayed by the compiled proof checker before anything is reported."""
from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
import zipfile
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from .contract import Game
from .errors import BadParameters, quote
from ..cext import proofcheck as _proofcheck, proofsearch as _proofsearch
from .kernels import Control, run_stoppable
from .proof import (CHECKPOINT_SECONDS, SAVE_SHARE, BadProof, Choices, DamagedProof, Leaves, Proved,
                    ProofFails, _npy_header, _npy_member, checkpoint_lock, write_whole)
from .tiers import Progress, no_progress

#: expansions a job may spend before it answers with its children's numbers: a few seconds of one
#: core, so that a job's answer and the driver's choice of the next are small beside it
JOB_NODES = 1 << 22
#: jobs in flight per worker: one computing, one waiting, so a worker never idles on the driver
JOBS_PER_WORKER = 2
#: how often the driver, waiting for an answer, looks for jobs sent to workers now gone
HOME_CHECK_SECONDS = 2.0
#: what a wait with a timeout raises (asyncio's is another class before Python 3.11)
TIMEOUTS = (TimeoutError, asyncio.TimeoutError)
#: names of stopped jobs a worker remembers (a few per proof; more are forgotten)
STOPPED_KEPT = 4096
INFINITY = _proofsearch.INFINITY
#: a node's value in the driver's tree and in its checkpoint
UNKNOWN, LOSS, WIN = -1, 0, 1
VALUE_NAMES = {WIN: "win", LOSS: "loss"}


@dataclass(frozen=True)
class Job:
    """What a worker needs for one job (pickled to it): the game by name and board, the
    position, the budget, the size of its table, and where its endgame leaves come from."""
    game: str
    parameters: tuple
    key: int
    budget: int
    entries: int
    leaves: Callable[[], Leaves] | None      # picklable; called once per worker
    table: str | None                        # the leaves' checksum: which search table to keep
    name: str = ""                           # the job's Dask key, by which the driver stops it


# --- the worker's side -----------------------------------------------------------------------

#: the one search table a worker process keeps across jobs: (identity, prover, game, leaves);
#: the game and leaves own the kernels whose capsule the prover holds, so they are kept with it
_kept: dict = {}
#: the stop flags of the jobs this worker is running, by name, and the names of jobs stopped
#: (a job the driver stopped that had not yet begun here ends as it begins)
_running: dict[str, Control] = {}
_stopped: set[str] = set()
_running_lock = threading.Lock()


def forget() -> None:
    """Drop the worker's kept search table (a worker of a long-lived cluster, between proofs
    that should not share what they proved, such as runs to compare)."""
    _kept.clear()


def _prover(job: Job):
    identity = (job.game, job.parameters, job.entries, job.table)
    held = _kept.get("search")
    if held is None or held[0] != identity:
        _kept.clear()                       # a new proof frees the last one's table first
        from .games import make_game
        game = make_game(job.game, **dict(job.parameters))
        leaves = None if job.leaves is None else job.leaves()
        capsule = game.kernel().capsule() if leaves is None else leaves.kernel.capsule()
        prover = _proofsearch.Prover(capsule, job.key, job.entries)
        held = _kept["search"] = (identity, prover, game, leaves)
    return held[1]


def _subproof(prover, key: int, value: int) -> tuple[np.ndarray, np.ndarray]:
    found = prover.extract(key, value == WIN)
    if found is None:                       # pragma: no cover - no budget given: never
        raise RuntimeError("a subproof could not be drawn from the worker's table")
    return found


def run_job(job: Job) -> dict:
    """One job on a worker: df-pn from `job.key` for at most `job.budget` expansions in the
    worker's kept table.  Answers {key, nodes, value, keys, chosen, worker} when the position
    is proved (keys/chosen: the subproof), else {key, nodes, value: UNKNOWN, children: [(child,
    phi, delta)], proved: [(child, value, keys, chosen)], worker}: `worker` names this worker
    (None outside Dask), whose table holds the search below the children: the driver sends
    their jobs here.  A job the driver stopped (`stop_jobs`) answers None."""
    prover = _prover(job)
    prover.aim(job.key)
    before = prover.nodes
    control = Control()
    with _running_lock:
        if job.name in _stopped:
            return None
        _running[job.name] = control
    try:
        prover.run(job.budget, control.words, 1)
    except KeyboardInterrupt:
        return None
    finally:
        with _running_lock:
            _running.pop(job.name, None)
    nodes = prover.nodes - before
    phi, delta = prover.numbers(job.key)
    if phi == 0 or delta == 0:
        value = WIN if phi == 0 else LOSS
        keys, chosen = _subproof(prover, job.key, value)
        return {"key": job.key, "nodes": nodes, "value": value, "keys": keys, "chosen": chosen,
                "worker": _worker_address()}
    children, proved = [], []
    for child in prover.children(job.key):
        c_phi, c_delta = prover.numbers(child)
        if c_phi == 0 or c_delta == 0:
            value = WIN if c_phi == 0 else LOSS
            keys, chosen = _subproof(prover, child, value)
            proved.append((child, value, keys, chosen))
        else:
            children.append((child, c_phi, c_delta))
    return {"key": job.key, "nodes": nodes, "value": UNKNOWN, "children": children, "proved": proved,
            "worker": _worker_address()}


def stop_jobs(names: list[str]) -> int:
    """Stop this worker's searches of the jobs named (run by the driver on every worker when a
    proof ends with jobs still out: Dask cancels a job waiting its turn, not one running, which
    would hold its worker for the rest of its budget).  Returns how many were running."""
    with _running_lock:
        found = [_running[name] for name in names if name in _running]
        if len(_stopped) > STOPPED_KEPT:
            _stopped.clear()
        _stopped.update(names)
    for control in found:
        control.stop()
    return len(found)


def _worker_address() -> str | None:
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return None


# --- the driver's tree --------------------------------------------------------------------------

class Node:
    """A position of the top of the proof tree: its numbers, its value once known, its children
    once a job came back without a proof, and whether a job is out on it."""
    __slots__ = ("phi", "delta", "value", "children", "busy")

    def __init__(self, phi: int = 1, delta: int = 1, value: int = UNKNOWN):
        self.phi, self.delta, self.value = phi, delta, value
        self.children: list[int] | None = None
        self.busy = False


class Tree:
    """The driver's DAG of positions, keyed by canonical packed position (transpositions are
    one node), with the positions jobs proved and one store of the winner's choices below them
    (the subproofs joined: positions shared by subproofs are held once)."""

    def __init__(self, root: int):
        self.root = root
        self.nodes: dict[int, Node] = {root: Node()}
        self.proved_roots: set[int] = set()  # positions a job proved (their values its own)
        self._store = (np.zeros(0, np.uint64), np.zeros(0, np.uint64))
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []
        self._pending_size = 0
        self.expanded = 0                   # positions expanded by all jobs
        self.home: dict[int, str | None] = {}   # the worker whose table searched a position

    def proved(self, key: int, value: int, keys: np.ndarray, chosen: np.ndarray) -> None:
        node = self.nodes.setdefault(key, Node())
        if node.value == UNKNOWN:
            node.value = value
            node.phi, node.delta = (0, INFINITY) if value == WIN else (INFINITY, 0)
            node.children = None
            self.proved_roots.add(key)
            self.add_choices(np.asarray(keys, dtype=np.uint64), np.asarray(chosen, dtype=np.uint64))

    def add_choices(self, keys: np.ndarray, chosen: np.ndarray) -> None:
        if keys.size != chosen.size:
            raise ValueError("a subproof's positions and choices differ in number")
        self._pending.append((keys, chosen))
        self._pending_size += keys.size
        if self._pending_size > max(1 << 20, self._store[0].size):
            self.store()

    def store(self) -> tuple[np.ndarray, np.ndarray]:
        """The winner's choices of every subproof, one per position (sorted)."""
        if self._pending:
            keys = np.concatenate([self._store[0]] + [k for k, _ in self._pending])
            chosen = np.concatenate([self._store[1]] + [c for _, c in self._pending])
            keys, first = np.unique(keys, return_index=True)
            self._store = (keys, chosen[first])
            self._pending, self._pending_size = [], 0
        return self._store

    def answer(self, result: dict) -> None:
        """A job's answer: its position proved, or its children with their numbers."""
        self.expanded += int(result["nodes"])
        key = int(result["key"])
        node = self.nodes[key]
        node.busy = False
        if result["value"] != UNKNOWN:
            self.proved(key, int(result["value"]), result["keys"], result["chosen"])
            self.update()
            return
        if node.value != UNKNOWN or node.children is not None:
            return                          # proved or expanded meanwhile (a transposition)
        worker = result.get("worker")
        children = []
        for child, phi, delta in result["children"]:
            child = int(child)
            if child not in self.nodes:
                self.nodes[child] = Node(int(phi), int(delta))
                self.home[child] = worker
            children.append(child)
        for child, value, keys, chosen in result["proved"]:
            self.proved(int(child), int(value), keys, chosen)
            children.append(int(child))
        node.children = children
        self.update()

    def update(self) -> None:
        """Numbers and values of every node from its children (the DAG is acyclic: every move of
        a game proved by search lowers its tier), bottom up."""
        for key in self._post_order():
            node = self.nodes[key]
            if node.children is not None and node.value == UNKNOWN:
                kids = [self.nodes[c] for c in node.children]
                if any(k.value == LOSS for k in kids):
                    node.value, node.phi, node.delta = WIN, 0, INFINITY
                elif all(k.value == WIN for k in kids):
                    node.value, node.phi, node.delta = LOSS, INFINITY, 0
                else:
                    node.phi = min(k.delta for k in kids)
                    node.delta = min(INFINITY - 1, sum(k.phi for k in kids))

    def _post_order(self) -> Iterator[int]:
        seen: set[int] = set()
        stack = [(self.root, False)]
        while stack:
            key, after = stack.pop()
            if after:
                yield key
                continue
            if key in seen:
                continue
            seen.add(key)
            stack.append((key, True))
            node = self.nodes[key]
            if node.children is not None and node.value == UNKNOWN:
                stack.extend((c, False) for c in node.children if c not in seen)

    def select(self) -> int | None:
        """The most-proving leaf with no job out on it (None: every open leaf is out): from the
        root, the child whose disproof number is least (the one that sets its parent's proof
        number), among those with such a leaf below."""
        open_below: dict[int, bool] = {}
        for key in self._post_order():
            node = self.nodes[key]
            if node.value != UNKNOWN:
                open_below[key] = False
            elif node.children is None:
                open_below[key] = not node.busy
            else:
                open_below[key] = any(open_below.get(c, False) for c in node.children)
        key = self.root
        if not open_below.get(key, False):
            return None
        while self.nodes[key].children is not None:
            key = min((c for c in self.nodes[key].children if open_below.get(c, False)),
                      key=lambda c: (self.nodes[c].delta, self.nodes[c].phi))
        return key

    @property
    def value(self) -> int:
        return self.nodes[self.root].value

    def choices(self) -> Choices:
        """The winner's choices of the proof from the root: in the tree, a child lost for its
        side to move at each of the winner's nodes; below a position a job proved, the store.
        Joined and sorted, one choice per position (a position chosen twice is a win either
        way); the proof checker keeps the ones its lines reach."""
        keys, chosen = [], []
        seen: set[int] = set()
        stack = [self.root]
        while stack:
            key = stack.pop()
            if key in seen or key in self.proved_roots:
                continue
            seen.add(key)
            node = self.nodes[key]
            if node.children is None:        # pragma: no cover - update() gives no such value
                raise DamagedProof("a position of the proof tree has a value and no proof")
            if node.value == WIN:
                pick = next((c for c in node.children if self.nodes[c].value == LOSS), None)
                if pick is None:             # pragma: no cover - as above
                    raise DamagedProof("a position of the proof tree is won by no move")
                keys.append(key)
                chosen.append(pick)
                stack.append(pick)
            else:                            # a loss in the tree: every child, each a win
                stack.extend(node.children)
        store_keys, store_chosen = self.store()
        all_keys = np.concatenate([np.array(keys, dtype=np.uint64), store_keys])
        all_chosen = np.concatenate([np.array(chosen, dtype=np.uint64), store_chosen])
        unique, first = np.unique(all_keys, return_index=True)
        return Choices(unique, all_chosen[first])


# --- the driver's checkpoint ---------------------------------------------------------------------

CHECKPOINT_KIND = "sowsolve-proof-cluster"


def save_tree(path: str, identity: str, tree: Tree) -> None:
    """The driver's tree and choice store, written whole (a numpy .npz archive, never
    pickled)."""
    keys = np.fromiter(tree.nodes, dtype=np.uint64, count=len(tree.nodes))
    nodes = [tree.nodes[int(k)] for k in keys]
    numbers = np.array([(n.phi, n.delta, n.value) for n in nodes], dtype=np.int64).reshape(-1, 3)
    counts = np.array([-1 if n.children is None else len(n.children) for n in nodes], dtype=np.int64)
    children = np.array([c for n in nodes if n.children is not None for c in n.children], dtype=np.uint64)
    roots = np.array(sorted(tree.proved_roots), dtype=np.uint64)
    store_keys, store_chosen = tree.store()
    arrays = {"keys": keys, "numbers": numbers, "counts": counts, "children": children,
              "roots": roots, "store_keys": store_keys, "store_chosen": store_chosen,
              "expanded": np.array([tree.expanded], dtype=np.int64),
              "identity": np.frombuffer(identity.encode(), dtype=np.uint8)}

    def write(out) -> None:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
            for name, array in arrays.items():
                _npy_member(archive, name, np.ascontiguousarray(array))
    write_whole(path, write)


#: each array of a driver's checkpoint: its type and number of dimensions
TREE_ARRAYS = {"keys": ("<u8", 1), "numbers": ("<i8", 2), "counts": ("<i8", 1),
               "children": ("<u8", 1), "roots": ("<u8", 1), "store_keys": ("<u8", 1),
               "store_chosen": ("<u8", 1), "expanded": ("<i8", 1), "identity": ("|u1", 1)}


def load_tree(path: str, identity: str, root: int) -> Tree:
    """A driver's checkpoint of the same proof, its form checked (stored members only, types,
    shapes, every child a node of the tree, values and numbers in range); never unpickled.
    Values are taken only where a job proved them; the tree's other values are worked out
    again from the children.  Even those are not trusted: the proof drawn from the checkpoint
    is replayed before anything is reported."""
    what = f"--checkpoint {quote(path, 60)}"
    bad = BadProof(f"{what} is not a checkpoint of a proof on a cluster")
    try:
        arrays = {}
        with zipfile.ZipFile(path) as archive:
            if {f"{name}.npy" for name in TREE_ARRAYS} - set(archive.namelist()):
                raise bad
            for name, (wanted, dims) in TREE_ARRAYS.items():
                info = archive.getinfo(f"{name}.npy")
                if info.compress_type != zipfile.ZIP_STORED:
                    raise bad                # what it holds is no larger than the file itself
                with archive.open(info) as member:
                    shape, dtype = _npy_header(member, what)
                    if dtype != np.dtype(wanted) or len(shape) != dims or (dims == 2 and shape[1] != 3):
                        raise bad
                    size = int(np.prod(shape)) * dtype.itemsize
                    if size > info.file_size:
                        raise bad
                    data = member.read(size)
                    if len(data) != size:
                        raise bad
                    arrays[name] = np.frombuffer(data, dtype=dtype).reshape(shape)
    except BadProof:
        raise
    except (OSError, ValueError, KeyError, EOFError, MemoryError, RuntimeError, zipfile.BadZipFile):
        raise bad from None
    if arrays["identity"].tobytes().decode("utf-8", "replace") != identity:
        raise BadProof(f"{what} is a checkpoint of another board, position or table")
    keys, numbers, counts, children = arrays["keys"], arrays["numbers"], arrays["counts"], arrays["children"]
    roots, store_keys, store_chosen = arrays["roots"], arrays["store_keys"], arrays["store_chosen"]
    n = keys.size
    known = set(keys.tolist())
    if (numbers.shape[0] != n or counts.size != n or arrays["expanded"].size != 1
            or int(arrays["expanded"][0]) < 0 or len(known) != n or root not in known
            or bool(np.any(counts < -1)) or int(counts[counts > 0].sum()) != children.size
            or bool(np.any(numbers[:, :2] < 0)) or bool(np.any(numbers[:, :2] > INFINITY))
            or not set(numbers[:, 2].tolist()) <= {UNKNOWN, WIN, LOSS}
            or store_keys.size != store_chosen.size
            or (store_keys.size > 1 and not bool(np.all(store_keys[1:] > store_keys[:-1])))
            or not set(children.tolist()) <= known or not set(roots.tolist()) <= known):
        raise bad
    tree = Tree(root)
    tree.nodes = {}
    proved_roots = set(roots.tolist())
    at = 0
    for key, (phi, delta, value), count in zip(keys.tolist(), numbers.tolist(), counts.tolist()):
        if key in proved_roots:
            if value == UNKNOWN:
                raise bad
            node = Node(phi, delta, value)
        elif count >= 0:
            node = Node(phi, delta)          # its value, if any, comes again from its children
            node.children = children[at:at + count].tolist()
        elif value != UNKNOWN:
            raise bad                        # a value with neither children nor a job's proof
        else:
            node = Node(phi, delta)
        if count >= 0:
            at += count
        tree.nodes[key] = node
    tree.proved_roots = proved_roots
    tree._store = (store_keys.copy(), store_chosen.copy())
    tree.expanded = int(arrays["expanded"][0])
    tree.update()
    return tree


# --- the driver ----------------------------------------------------------------------------------

def _identity(game: Game, position, citation: dict | None) -> str:
    from .proof import _identity as search_identity
    return CHECKPOINT_KIND + " " + search_identity(game, position, citation)


def prove_on_cluster(client, game: Game, position, memory_entries: int, *,
                     leaves: Leaves | None = None, leaves_source: Callable[[], Leaves] | None = None,
                     job_nodes: int = JOB_NODES, max_nodes: int | None = None,
                     checkpoint: str | None = None, checkpoint_seconds: float = CHECKPOINT_SECONDS,
                     progress: Progress = no_progress) -> tuple[Proved | None, int]:
    """Prove `position` with jobs on the Dask `client`'s workers, each worker's search table of
    `memory_entries` entries.  `leaves` (the driver's) and `leaves_source` (a picklable call that
    gives each worker the same endgame table) end lines in an endgame table.  Returns the result
    (with the proof's choices, replayed by the proof checker) and the positions expanded; None
    when `max_nodes` were spent.  With `checkpoint`, the driver's tree is saved every
    `checkpoint_seconds`, when stopped and at the end, and a run given it goes on from it."""
    if (leaves is None) != (leaves_source is None):
        raise ValueError("leaves and leaves_source go together")
    if job_nodes < 1:
        raise BadParameters(f"a job needs at least 1 expansion, not {job_nodes}")
    _, root = game.key(position)
    citation = None if leaves is None else leaves.citation
    identity = _identity(game, position, citation)
    with contextlib.ExitStack() as held:
        if checkpoint is not None:
            held.enter_context(checkpoint_lock(checkpoint))
        tree = load_tree(checkpoint, identity, root) if checkpoint is not None and os.path.exists(checkpoint) \
            else Tree(root)
        started = time.perf_counter()
        try:
            proved = _drive(client, game, tree, memory_entries, leaves_source, citation, job_nodes,
                            max_nodes, progress, lambda: save_tree(checkpoint, identity, tree)
                            if checkpoint is not None else None, checkpoint_seconds)
        except BaseException as stop:
            if checkpoint is not None and not isinstance(stop, Exception):
                save_tree(checkpoint, identity, tree)       # Ctrl-C, TERM
            raise
        if checkpoint is not None:
            save_tree(checkpoint, identity, tree)
        if not proved:
            return None, tree.expanded
        seconds = time.perf_counter() - started
        value = VALUE_NAMES[tree.value]
        choices = _checked(game, position, tree, value, leaves, checkpoint)
        root_node = tree.nodes[root]
        winning = []
        if value == "win":
            lost = {c for c in (root_node.children or []) if tree.nodes[c].value == LOSS}
            if root in tree.proved_roots:
                lost.add(choices.get(root))
            for move in game.legal_moves(position):
                if game.key(game.play(position, move))[1] in lost:
                    winning.append(game.format_move(move))
        result = Proved(value, winning, len(game.legal_moves(position)), tree.expanded, round(seconds, 3),
                        memory_entries, memory_entries * _proofsearch.ENTRY_BYTES, 0, choices)
        return result, tree.expanded


@contextlib.contextmanager
def _signals_kept() -> Iterator[list]:
    """Ctrl-C, SIGTERM and SIGHUP noted as well as raised: Dask runs callbacks of its own in
    this process (its garbage-collection diagnosis, say), and an exception raised by a signal
    handler inside one of those is printed and dropped by Python.  The driver's loop looks at
    the note after every answer and raises the signal's exception again."""
    import signal
    import threading
    caught: list = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    previous = {}

    def note(signum, frame):
        caught.append(signum)
        handler = previous[signum]
        if callable(handler):
            handler(signum, frame)
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        handler = signal.getsignal(signum)
        if signum == signal.SIGINT or callable(handler):
            previous[signum] = handler
            signal.signal(signum, note)
    try:
        yield caught
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _raise_noted(caught: list) -> None:
    import signal
    if caught:
        signum = caught[0]
        handler = signal.getsignal(signum)
        if callable(handler):
            handler(signum, None)           # the note's own: raises the signal's exception
        raise KeyboardInterrupt


def _drive(client, game: Game, tree: Tree, entries: int, leaves_source, citation, job_nodes: int,
           max_nodes: int | None, progress: Progress, save: Callable[[], None],
           checkpoint_seconds: float) -> bool:
    """Hand out jobs and take their answers until the root is proved (True) or `max_nodes`
    expansions are spent or promised to jobs out (False: no job is given more than what is
    left of the budget)."""
    table = None if citation is None else citation["checksum"]
    parameters = tuple(sorted(game.parameters().items()))
    out: dict = {}      # Dask key -> (future, position, budget, worker asked)
    last_saved, interval = time.perf_counter(), checkpoint_seconds
    with progress(max_nodes, "positions expanded") as bar, _signals_kept() as caught:
        shown = tree.expanded
        bar.update(shown)
        try:
            while tree.value == UNKNOWN:
                _raise_noted(caught)
                present = _workers(client)
                for key in _take_back(client, out, present):
                    tree.nodes[key].busy = False
                while len(out) < JOBS_PER_WORKER * max(1, len(present)):
                    budget = job_nodes
                    if max_nodes is not None:
                        budget = min(budget, max_nodes - tree.expanded - sum(b for _, _, b, _ in out.values()))
                    if budget <= 0:
                        break
                    key = tree.select()
                    if key is None:
                        break
                    tree.nodes[key].busy = True
                    worker = _place(present, out, tree.home.get(key))
                    name = f"sowsolve-prove-{key:x}-{time.monotonic_ns()}"
                    job = Job(game.name, parameters, key, budget, entries, leaves_source, table, name)
                    # held to that worker: Dask's work stealing would move a job it may run
                    # elsewhere to a worker without its table; a worker that dies has its
                    # jobs taken back (_take_back)
                    where = {} if worker is None else {"workers": [worker], "allow_other_workers": False}
                    out[name] = (client.submit(run_job, job, pure=False, key=name, **where), key, budget, worker)
                if not out:
                    if max_nodes is not None and tree.expanded >= max_nodes:
                        return False
                    raise RuntimeError("the proof tree has no open position and no value")  # pragma: no cover
                key, result = _next_answer(client, out, caught)
                if key is None:
                    continue
                if result is None:          # cancelled, stopped, lost with its worker: free again
                    tree.nodes[key].busy = False
                    continue
                tree.answer(result)
                if tree.expanded > shown:
                    bar.update(tree.expanded - shown)
                    shown = tree.expanded
                if time.perf_counter() - last_saved >= interval:
                    began = time.perf_counter()
                    save()
                    last_saved = time.perf_counter()
                    interval = max(checkpoint_seconds, SAVE_SHARE * (last_saved - began))
            _raise_noted(caught)
        finally:
            _stop_out(client, out)
    return True


def _workers(client) -> set[str]:
    """The addresses of the cluster's workers now (all of them: the scheduler's identity lists
    only some in a few Dask releases)."""
    return set(client.nthreads())


def _place(present: set[str], out: dict, home: str | None) -> str | None:
    """The worker a job is asked of: `home`, the worker whose job searched the position's
    parent (its table holds what was searched below), while it is `present` with fewer than
    JOBS_PER_WORKER jobs out; else the worker with fewest jobs out (None: no worker)."""
    counts = dict.fromkeys(sorted(present), 0)
    for *_, worker in out.values():
        if worker in counts:
            counts[worker] += 1
    if home in counts and counts[home] < JOBS_PER_WORKER:
        return home
    return min(counts, key=counts.__getitem__, default=None)


def _take_back(client, out: dict, present: set[str]) -> list[int]:
    """The positions of the jobs asked of workers no longer `present`, taken out of `out`,
    cancelled and stopped wherever they may run.  (Dask keeps a job asked of a worker that died
    waiting for that worker, though it may run elsewhere, when the workers that take the dead
    ones' places have other names.)"""
    gone = [name for name, (*_, worker) in out.items() if worker is not None and worker not in present]
    if not gone:
        return []
    taken = {name: out.pop(name) for name in gone}
    _stop_out(client, taken)
    return [key for _, key, _, _ in taken.values()]


def _next_answer(client, out: dict, caught: list) -> tuple[int | None, dict | None]:
    """(position, answer) of the first job out to end, taken out of `out` (and released, so
    that Dask never computes it again: an answer held only by the driver is not recomputed on
    another worker when its worker dies); the answer None when the job was cancelled, stopped,
    or its answer lost with its worker (its position to be handed out again).  (None, None)
    when no job ended within HOME_CHECK_SECONDS."""
    from distributed import wait
    from distributed.client import FutureCancelledError
    from distributed.utils import CancelledError
    if not out:
        return None, None
    try:
        done, _ = wait([future for future, *_ in out.values()], timeout=HOME_CHECK_SECONDS,
                       return_when="FIRST_COMPLETED")
    except TIMEOUTS:
        return None, None
    except CancelledError:          # one was cancelled (the scheduler's, or a lost connection)
        done = [future for future, *_ in out.values() if future.cancelled()]
    if not done:
        return None, None
    future = next(iter(done))
    name = future.key
    _, key, _, worker = out.pop(name)
    try:
        while True:
            _raise_noted(caught)
            try:
                return key, future.result(timeout=HOME_CHECK_SECONDS)
            except FutureCancelledError:
                return key, None
            except TIMEOUTS:        # its answer lost with its worker, and asked again of it
                if worker is not None and worker not in _workers(client):
                    _stop_out(client, {name: (future, key, 0, worker)})
                    return key, None
            except Exception as exc:     # noqa: BLE001 - a worker's failure, named
                if type(exc).__name__ != "KilledWorker":
                    raise
                return key, None    # its workers died: hand it out again
    finally:
        future.release()


def _stop_out(client, out: dict) -> None:
    """Cancel the jobs of `out`, stop those already running on their workers, and release
    them (Dask computes a job again while the driver holds it)."""
    if not out:
        return
    with contextlib.suppress(Exception):        # a client cut off from its scheduler
        client.cancel([future for future, *_ in out.values()])
    with contextlib.suppress(Exception):        # a worker gone has no job left to stop
        client.run(stop_jobs, list(out), wait=True)
    for future, *_ in out.values():
        future.release()


def _checked(game: Game, position, tree: Tree, value: str, leaves: Leaves | None,
             checkpoint: str | None) -> Choices:
    """The proof joined from the tree and its subproofs, replayed by the compiled proof checker
    (whatever a worker or a checkpoint said), kept to the positions its lines reach."""
    choices = tree.choices()
    _, root = game.key(position)
    capsule = game.kernel().capsule() if leaves is None else leaves.kernel.capsule()
    checker = _proofcheck
    _, code, failed, reached = run_stoppable(lambda words: checker.check_proof(
        capsule, root, value == "win", choices.keys, choices.chosen, words))
    if code:
        where = f"--checkpoint {quote(checkpoint, 60)} or a worker" if checkpoint else "a worker"
        raise DamagedProof(f"the proof joined from the cluster's answers does not check "
                           f"({checker.FAILURES[code]} {failed:#x}): {where} gave values the "
                           f"game's positions do not bear out")
    reached = np.asarray(reached, dtype=bool)
    return Choices(choices.keys[reached], choices.chosen[reached])


__all__ = ["JOB_NODES", "Job", "Tree", "prove_on_cluster", "run_job", "ProofFails"]


def check_seen(client, path: str, what: str) -> None:
    """Every worker sees the file at `path` (an endgame table a proof's workers read);
    BadParameters otherwise, before any job."""
    try:
        seen = client.run(os.path.isfile, path)
    except Exception:  # noqa: BLE001 - a worker that cannot answer cannot prove either
        raise BadParameters("the Dask workers do not answer") from None
    blind = [address for address, ok in seen.items() if not ok]
    if blind:
        raise BadParameters(f"{len(blind)} of {len(seen)} Dask workers do not see {what} "
                            f"{path[:200]} (e.g. {blind[0]}): put it at the same path on every "
                            f"worker")
