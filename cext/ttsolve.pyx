# cython: language_level=3
"""Transposition-table solver for acyclic win/loss games over packed positions.

A depth-first search from a root expands every reachable position once (children come from the
game's expand_key hook as canonical packed positions) and stores its exact record in an
open-addressing table keyed by the full 64-bit packed position: a lookup compares whole keys, so
two positions never share an entry.  Every position is fully expanded, so values and remoteness
are exact for all of them, not just the root.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc

import numpy as np
cimport numpy as cnp

from kernel_api cimport (CONTROL_FLUSH, Control, Fold, GameKernel, SOWSOLVE_KERNEL_CAPSULE, control_of,
                         ctl_add, ctl_set, ctl_stopped, fold_add, fold_fits, fold_result, fold_start,
                         key_mix, sorted_find)

cnp.import_array()

cdef enum:
    MAX_CHILDREN = 512
    MAX_DEPTH = 1 << 16
    ERR_KEY = 1
    ERR_FULL = 2
    ERR_DEPTH = 4
    ERR_MEMORY = 8
    ERR_REMOTENESS = 16
    ERR_STOPPED = 32



class SearchLimit(RuntimeError):
    """The search solved its limit of positions before it solved the root."""

    def __init__(self, limit, solved):
        super().__init__(f"the search reached its limit of {limit:,} positions before solving "
                         f"its root ({solved:,} positions solved)")
        self.limit = limit
        self.solved = solved


ERRORS = {
    ERR_KEY: "the game refused one of its own packed positions",
    ERR_FULL: "the position limit was reached",
    ERR_DEPTH: f"the search went deeper than {MAX_DEPTH} plies (is the game acyclic?)",
    ERR_MEMORY: "out of memory",
    ERR_REMOTENESS: "a remoteness exceeds what a record can hold",
    ERR_STOPPED: "stopped on request",
}


cdef struct Table:
    uint64_t *keys          # 0 marks an empty slot (no packed position is 0)
    uint16_t *records
    int64_t capacity        # a power of two
    int64_t count


cdef inline int64_t slot_of(const Table *t, uint64_t key) noexcept nogil:
    cdef int64_t mask = t.capacity - 1, i = <int64_t>(key_mix(key) & <uint64_t>mask)
    while t.keys[i] != 0 and t.keys[i] != key:
        i = (i + 1) & mask
    return i


cdef int grow(Table *t) noexcept nogil:
    cdef Table bigger
    cdef int64_t i, j
    bigger.capacity = t.capacity * 2
    bigger.count = t.count
    bigger.keys = <uint64_t *>calloc(bigger.capacity, sizeof(uint64_t))
    bigger.records = <uint16_t *>malloc(bigger.capacity * sizeof(uint16_t))
    if bigger.keys == NULL or bigger.records == NULL:
        free(bigger.keys)
        free(bigger.records)
        return ERR_MEMORY
    for i in range(t.capacity):
        if t.keys[i] != 0:
            j = slot_of(&bigger, t.keys[i])
            bigger.keys[j] = t.keys[i]
            bigger.records[j] = t.records[i]
    free(t.keys)
    free(t.records)
    t[0] = bigger
    return 0


cdef struct Frame:
    uint64_t key
    int count
    int next
    Fold fold
    uint64_t child[MAX_CHILDREN]


cdef class TTSolver:
    """One search: run() fills the table (GIL released, so another thread can read progress
    from `positions` or the Control); results() hands the table out as sorted numpy arrays.
    The table never holds more than max_positions positions: a search that needs more stops
    with SearchLimit."""
    cdef Table table
    cdef const GameKernel *game
    cdef object _capsule
    cdef readonly int64_t max_positions
    cdef int error
    cdef Control spare
    cdef Control *ctl

    def __cinit__(self, capsule, int64_t max_positions=1 << 26):
        if not PyCapsule_IsValid(capsule, SOWSOLVE_KERNEL_CAPSULE):
            raise TypeError("expected a game kernel capsule")
        self.game = <const GameKernel *>PyCapsule_GetPointer(capsule, SOWSOLVE_KERNEL_CAPSULE)
        if self.game.expand_key == NULL:
            raise ValueError("this game offers no packed positions to search over")
        if self.game.max_children > MAX_CHILDREN:
            raise ValueError(f"{self.game.max_children} children per position is more than {MAX_CHILDREN}")
        if max_positions < 1:
            raise ValueError(f"the position limit must be at least 1, not {max_positions}")
        self._capsule = capsule
        self.max_positions = max_positions
        self.ctl = control_of(None, &self.spare)
        self.table.capacity = 1 << 16
        self.table.count = 0
        self.table.keys = <uint64_t *>calloc(self.table.capacity, sizeof(uint64_t))
        self.table.records = <uint16_t *>malloc(self.table.capacity * sizeof(uint16_t))
        if self.table.keys == NULL or self.table.records == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.table.keys)
        free(self.table.records)

    @property
    def positions(self):
        return self.table.count

    cdef inline uint16_t get(self, uint64_t key) noexcept nogil:
        cdef int64_t i = slot_of(&self.table, key)
        return self.table.records[i] if self.table.keys[i] == key else 0

    cdef int put(self, uint64_t key, uint16_t record) noexcept nogil:
        cdef int64_t i = slot_of(&self.table, key)
        cdef int err
        if self.table.keys[i] == 0:
            if self.table.count >= self.max_positions:
                return ERR_FULL
            if 2 * (self.table.count + 1) > self.table.capacity:
                err = grow(&self.table)
                if err:
                    return err
                i = slot_of(&self.table, key)
            self.table.keys[i] = key
            self.table.count += 1
            if (self.table.count & (CONTROL_FLUSH - 1)) == 0:
                ctl_set(self.ctl, self.table.count)
        self.table.records[i] = record
        return 0

    cdef int search(self, uint64_t root) noexcept nogil:
        cdef int capacity = 64, depth = 0, n, err
        cdef Frame *frames = <Frame *>malloc(capacity * sizeof(Frame))
        cdef Frame *f
        cdef Frame *grown
        cdef uint16_t record, final_record = 0
        if frames == NULL:
            return ERR_MEMORY
        if self.get(root) != 0:
            free(frames)
            return 0
        frames[0].key = root
        frames[0].count = -1
        depth = 1
        err = 0
        while depth > 0 and not err:
            if ctl_stopped(self.ctl):
                err = ERR_STOPPED
                break
            f = &frames[depth - 1]
            if f.count < 0:
                n = self.game.expand_key(self.game.ctx, f.key, f.child, NULL, &final_record)
                if n < 0:
                    err = ERR_KEY
                    break
                if n == 0:
                    err = self.put(f.key, final_record)
                    depth -= 1
                    continue
                f.count = n
                f.next = 0
                fold_start(&f.fold)
            while f.next < f.count:
                record = self.get(f.child[f.next])
                if record == 0:
                    break
                fold_add(&f.fold, record)
                f.next += 1
            if f.next < f.count:
                if depth == capacity:
                    if capacity >= MAX_DEPTH:
                        err = ERR_DEPTH
                        break
                    capacity *= 2
                    grown = <Frame *>realloc(frames, capacity * sizeof(Frame))
                    if grown == NULL:
                        err = ERR_MEMORY
                        break
                    frames = grown
                    f = &frames[depth - 1]
                frames[depth].key = f.child[f.next]
                frames[depth].count = -1
                depth += 1
                continue
            if not fold_fits(&f.fold):
                err = ERR_REMOTENESS
                break
            err = self.put(f.key, fold_result(&f.fold))
            depth -= 1
        free(frames)
        return err

    def run(self, uint64_t root, int64_t[::1] control=None):
        """Solve every position reachable from `root` (a canonical packed position).

        With a `control` (solver/kernels.py): stops when asked (KeyboardInterrupt) and keeps
        its count of positions done equal to `positions`.  SearchLimit when the table is full."""
        cdef int err
        cdef Control *ctl = control_of(control, &self.spare)
        self.ctl = ctl
        try:
            with nogil:
                err = self.search(root)
                ctl_set(ctl, self.table.count)
        finally:
            self.ctl = control_of(None, &self.spare)
        if err & ERR_STOPPED:
            raise KeyboardInterrupt
        if err == ERR_FULL:
            raise SearchLimit(self.max_positions, self.table.count)
        if err:
            raise RuntimeError("search failed: " + "; ".join(
                text for bit, text in ERRORS.items() if err & bit) +
                f" ({self.table.count:,} positions solved)")

    def record(self, uint64_t key):
        """The record of a packed position, 0 if the search has not solved it."""
        return self.get(key)

    def results(self):
        """(keys, records) of every solved position, sorted by key."""
        cdef int64_t i, j = 0
        keys = np.empty(self.table.count, dtype=np.uint64)
        records = np.empty(self.table.count, dtype=np.uint16)
        cdef uint64_t[::1] kv = keys
        cdef uint16_t[::1] rv = records
        for i in range(self.table.capacity):
            if self.table.keys[i] != 0:
                kv[j] = self.table.keys[i]
                rv[j] = self.table.records[i]
                j += 1
        order = np.argsort(keys, kind="stable")
        return keys[order], records[order]


def verify_keys(capsule, cnp.ndarray keys, cnp.ndarray records, cnp.ndarray check,
                int64_t[::1] control=None, root=None):
    """Recompute the records of the positions `check` from their children, looked up in the
    sorted arrays (keys, records); returns (mismatches, positions with a child missing from the
    arrays,
    keys that are no child of a checked position and not `root`).  Where `check` is every key
    and `root` the start, the last count is of stored positions that cannot be reached from the
    start through the stored ones.  With a `control`: stops when asked (KeyboardInterrupt) and
    counts the positions checked."""
    cdef const GameKernel *game
    if not PyCapsule_IsValid(capsule, SOWSOLVE_KERNEL_CAPSULE):
        raise TypeError("expected a game kernel capsule")
    game = <const GameKernel *>PyCapsule_GetPointer(capsule, SOWSOLVE_KERNEL_CAPSULE)
    if keys.ndim != 1 or records.ndim != 1 or check.ndim != 1:
        raise ValueError("keys, records and the positions to check must be one-dimensional arrays")
    if keys.shape[0] != records.shape[0]:
        raise ValueError(f"{keys.shape[0]} keys but {records.shape[0]} records")
    if game.max_children > MAX_CHILDREN:
        raise ValueError(f"{game.max_children} children per position is more than {MAX_CHILDREN}")
    cdef const uint64_t[::1] k = np.ascontiguousarray(keys, dtype=np.uint64)
    cdef const uint16_t[::1] r = np.ascontiguousarray(records, dtype=np.uint16)
    cdef const uint64_t[::1] todo = np.ascontiguousarray(check, dtype=np.uint64)
    cdef uint64_t child[MAX_CHILDREN]
    cdef int64_t i, lo, hi, mid, bad = 0, missing = 0, unreached = 0, n_keys = k.shape[0], pos
    cdef uint8_t[::1] reached = np.zeros(n_keys, dtype=np.uint8)
    cdef int n, c, stopped = 0, lacking
    cdef uint16_t final_record = 0, stored
    cdef Fold fold
    cdef Control spare
    cdef Control *ctl = control_of(control, &spare)
    if game.expand_key == NULL:
        raise ValueError("this game offers no packed positions")
    with nogil:
        for i in range(todo.shape[0]):
            if (i & (CONTROL_FLUSH - 1)) == 0 and i:
                ctl_add(ctl, CONTROL_FLUSH)
                if ctl_stopped(ctl):
                    stopped = 1
                    break
            pos = sorted_find(&k[0] if n_keys else NULL, n_keys, todo[i])
            if pos < 0:
                missing += 1
                continue
            stored = r[pos]
            n = game.expand_key(game.ctx, todo[i], child, NULL, &final_record)
            if n < 0:
                bad += 1
                continue
            if n == 0:
                bad += stored != final_record
                continue
            fold_start(&fold)
            lacking = 0
            for c in range(n):              # every child found is marked reached
                pos = sorted_find(&k[0] if n_keys else NULL, n_keys, child[c])
                if pos < 0:
                    lacking = 1
                    continue
                reached[pos] = 1
                fold_add(&fold, r[pos])
            if lacking:
                missing += 1
            else:
                bad += stored != fold_result(&fold)
        if not stopped and todo.shape[0]:
            ctl_add(ctl, todo.shape[0] - ((todo.shape[0] - 1) & ~(<int64_t>CONTROL_FLUSH - 1)))
        for i in range(n_keys):
            unreached += reached[i] == 0
    if stopped:
        raise KeyboardInterrupt
    if root is not None:
        pos = sorted_find(&k[0] if n_keys else NULL, n_keys, <uint64_t>root)
        if pos >= 0 and reached[pos] == 0:
            unreached -= 1
    return bad, missing, unreached


