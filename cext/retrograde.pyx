# cython: language_level=3
"""Tier solver kernel for acyclic win/loss games, written once against the GameKernel.

A tier's children lie in lower, already solved tiers or in the same tier.  Inside a tier the
game graph is acyclic, so each position is solved by a depth-first walk that first solves its
unsolved same-tier children (memoised in the tier's own array): no counters, no un-moves, no
ordering pass.  Threads split the tier's indices; two threads that meet on one position compute
the same record, and records are read and written atomically, so the race is benign (progress
counts a position once, or twice in the rare case that both threads store it at once).

Every child index is checked against the length of its tier's array before it is read, so arrays
of the wrong size give an error, never a read outside them.  A Control block (solver/kernels.py)
lets the driving thread stop a call within milliseconds and read how many positions it solved.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from cython.parallel cimport parallel, prange, threadid
from libc.stdint cimport int64_t, uint16_t, uint32_t
from libc.stdlib cimport calloc, free, malloc, realloc

import numpy as np
cimport numpy as cnp

from kernel_api cimport (CONTROL_FLUSH, Control, Fold, GameKernel, REC_DRAW, REC_LOSS,
                         REC_MAX_REMOTENESS, REC_OUTCOME, REC_OUTCOME_BITS, REC_REMOTENESS,
                         REC_UNSOLVED, REC_WIN,
                         SOWSOLVE_KERNEL_CAPSULE, control_of, ctl_add, ctl_stopped, fold_add,
                         fold_fits, fold_result, fold_start, rec_claim, rec_load)

cnp.import_array()

#: The win/loss record layout (sowsolve_kernel.h): a record is (remoteness << outcome_bits) |
#: outcome, the outcome one of unsolved, loss, draw, win (for the side to move), the remoteness
#: at most max_remoteness.
WINLOSS_LAYOUT = {"unsolved": REC_UNSOLVED, "loss": REC_LOSS, "draw": REC_DRAW, "win": REC_WIN,
                  "outcome_bits": REC_OUTCOME_BITS, "max_remoteness": REC_MAX_REMOTENESS}

cdef enum:
    MAX_CHILDREN = 64
    MAX_DEPTH = 1 << 16
    ERR_RANGE = 1          # the game refused an index it should hold
    ERR_MISSING_TIER = 2   # a child in a tier that is not loaded (or above the current one)
    ERR_UNSOLVED = 4       # a child in a lower tier that holds no record
    ERR_DEPTH = 8          # same-tier chain deeper than MAX_DEPTH: the tier is not acyclic
    ERR_MEMORY = 16
    ERR_REMOTENESS = 32    # remoteness beyond what a record holds
    ERR_CHILD_RANGE = 64   # a child index beyond the length of its tier's array
    ERR_STOPPED = 128      # the driver asked the call to stop
    POLL_STEPS = 1024      # walk steps between looks at the stop flag

ERRORS = {
    ERR_RANGE: "the game kernel refused one of its own indices",
    ERR_MISSING_TIER: "a child lies in a tier that is not loaded",
    ERR_UNSOLVED: "a child in a lower tier has no value",
    ERR_DEPTH: f"a chain of same-tier moves is deeper than {MAX_DEPTH} (is the tier acyclic?)",
    ERR_MEMORY: "out of memory for the search stack",
    ERR_REMOTENESS: "a remoteness exceeds what a record can hold",
    ERR_CHILD_RANGE: "a child's index lies outside the array of its tier (an array of the wrong size)",
}


cdef struct Frame:
    int64_t index
    int count                  # children, -1 before expansion
    int next
    Fold fold
    int child_tier[MAX_CHILDREN]
    int64_t child_index[MAX_CHILDREN]


cdef struct Stack:
    Frame *frames
    int capacity
    int64_t solved             # records this thread stored and has not yet added to the Control


cdef struct Tiers:
    uint16_t **tables          # record array of each tier, NULL where not loaded
    int64_t *lengths           # its length
    int ntables


cdef inline Frame *push(Stack *st, int *depth, int64_t index) noexcept nogil:
    cdef Frame *grown
    cdef int capacity
    if depth[0] == st.capacity:
        if st.capacity >= MAX_DEPTH:
            return NULL
        capacity = st.capacity * 2
        grown = <Frame *>realloc(st.frames, capacity * sizeof(Frame))
        if grown == NULL:
            return NULL
        st.frames = grown
        st.capacity = capacity
    cdef Frame *f = &st.frames[depth[0]]
    depth[0] += 1
    f.index = index
    f.count = -1
    return f


cdef inline int child_record(const Tiers *tiers, int tier, int ct, int64_t ci, uint16_t *record) noexcept nogil:
    """The record of child (ct, ci) of a position of `tier` in *record, or an error code."""
    if ct > tier or ct < 0 or ct >= tiers.ntables or tiers.tables[ct] == NULL:
        return ERR_MISSING_TIER
    if ci < 0 or ci >= tiers.lengths[ct]:
        return ERR_CHILD_RANGE
    record[0] = rec_load(tiers.tables[ct] + ci)
    return 0


cdef inline void count_solved(Stack *st, Control *ctl) noexcept nogil:
    st.solved += 1
    if st.solved == CONTROL_FLUSH:
        ctl_add(ctl, st.solved)
        st.solved = 0


cdef int solve_root(const GameKernel *game, int tier, int64_t root, const Tiers *tiers,
                    Stack *st, Control *ctl) noexcept nogil:
    """Solve `root` of `tier` and every unsolved same-tier position it depends on."""
    cdef uint16_t *current = tiers.tables[tier]
    cdef int depth = 0, n, err, steps = 0
    cdef uint16_t record = 0, final_record = 0
    cdef Frame *f
    if rec_load(current + root) != 0:
        return 0
    if ctl_stopped(ctl):
        return ERR_STOPPED
    if push(st, &depth, root) == NULL:
        return ERR_MEMORY
    while depth > 0:
        steps += 1
        if steps == POLL_STEPS:
            steps = 0
            if ctl_stopped(ctl):
                return ERR_STOPPED
        f = &st.frames[depth - 1]
        if f.count < 0:
            n = game.expand(game.ctx, tier, f.index, f.child_tier, f.child_index, &final_record)
            if n < 0:
                return ERR_RANGE
            if n == 0:
                if rec_claim(current + f.index, final_record):
                    count_solved(st, ctl)
                depth -= 1
                continue
            f.count = n
            f.next = 0
            fold_start(&f.fold)
        while f.next < f.count:
            err = child_record(tiers, tier, f.child_tier[f.next], f.child_index[f.next], &record)
            if err:
                return err
            if record == 0:
                if f.child_tier[f.next] != tier:
                    return ERR_UNSOLVED
                break
            fold_add(&f.fold, record)
            f.next += 1
        if f.next < f.count:
            if push(st, &depth, f.child_index[f.next]) == NULL:
                return ERR_DEPTH if st.capacity >= MAX_DEPTH else ERR_MEMORY
            continue
        if not fold_fits(&f.fold):
            return ERR_REMOTENESS
        if rec_claim(current + f.index, fold_result(&f.fold)):
            count_solved(st, ctl)
        depth -= 1
    return 0


cdef const GameKernel *kernel_of(object capsule) except NULL:
    if not PyCapsule_IsValid(capsule, SOWSOLVE_KERNEL_CAPSULE):
        raise TypeError("expected a game kernel capsule")
    return <const GameKernel *>PyCapsule_GetPointer(capsule, SOWSOLVE_KERNEL_CAPSULE)


cdef int tier_pointers(list tables, int tier, int64_t start, int64_t stop, Tiers *out) except -1:
    """C pointers and lengths of the tier arrays (NULL where not loaded), after checking them."""
    cdef int i, ntables = len(tables)
    if not 0 <= tier < ntables or tables[tier] is None:
        raise ValueError(f"tier {tier} has no array")
    if not 0 <= start <= stop <= len(tables[tier]):
        raise ValueError(f"range {start}..{stop} is outside tier {tier}")
    for t in tables:
        if t is not None and (not isinstance(t, np.ndarray) or t.dtype != np.uint16 or t.ndim != 1
                              or not t.flags.c_contiguous or not t.flags.writeable):
            raise TypeError("tier arrays must be writeable contiguous one-dimensional uint16 numpy arrays")
    out.ntables = ntables
    out.tables = <uint16_t **>malloc(ntables * sizeof(uint16_t *))
    out.lengths = <int64_t *>malloc(ntables * sizeof(int64_t))
    if out.tables == NULL or out.lengths == NULL:
        free(out.tables)
        free(out.lengths)
        raise MemoryError()
    for i in range(ntables):
        out.tables[i] = NULL if tables[i] is None else <uint16_t *>cnp.PyArray_DATA(tables[i])
        out.lengths[i] = 0 if tables[i] is None else cnp.PyArray_DIM(<cnp.ndarray>tables[i], 0)
    return 0


cdef void free_tiers(Tiers *t) noexcept:
    free(t.tables)
    free(t.lengths)


def _failure(str doing, int tier, int error):
    if error & ERR_STOPPED:
        return KeyboardInterrupt()
    return RuntimeError(f"{doing} tier {tier} failed: " + "; ".join(
        text for bit, text in ERRORS.items() if error & bit))


cdef int verify_one(const GameKernel *game, int tier, int64_t index, const Tiers *tiers,
                    Frame *f) noexcept nogil:
    """1 when the stored record of (tier, index) is not the fold of its children's, else 0
    (negative: an error code)."""
    cdef uint16_t final_record = 0, stored = tiers.tables[tier][index], record = 0
    cdef int n, i, err
    n = game.expand(game.ctx, tier, index, f.child_tier, f.child_index, &final_record)
    if n < 0:
        return -ERR_RANGE
    if n == 0:
        return stored != final_record
    fold_start(&f.fold)
    for i in range(n):
        err = child_record(tiers, tier, f.child_tier[i], f.child_index[i], &record)
        if err:
            return -err
        if record == 0:
            return -ERR_UNSOLVED
        fold_add(&f.fold, record)
    return stored != fold_result(&f.fold)


def verify_range(object capsule, int tier, int64_t start, int64_t stop, list tables, int threads=1,
                 int64_t[::1] control=None):
    """Recompute records start..stop-1 of `tier` from their children; returns how many differ.
    With a `control`: stops early when asked (KeyboardInterrupt) and counts positions checked."""
    cdef const GameKernel *game = kernel_of(capsule)
    cdef int64_t i, bad = 0
    cdef int r, tid, error = 0
    cdef Frame *f
    cdef Tiers tiers
    cdef Control spare
    cdef Control *ctl = control_of(control, &spare)
    if game.max_children > MAX_CHILDREN:
        raise ValueError(f"a game with {game.max_children} children per position needs a larger MAX_CHILDREN")
    if threads < 1:
        threads = 1
    cdef int64_t *per_thread = <int64_t *>calloc(2 * threads, sizeof(int64_t))
    if per_thread == NULL:
        raise MemoryError()
    try:
        tier_pointers(tables, tier, start, stop, &tiers)
    except BaseException:
        free(per_thread)
        raise
    try:
        with nogil, parallel(num_threads=threads):
            f = <Frame *>malloc(sizeof(Frame))
            for i in prange(start, stop, schedule="static"):
                tid = threadid()
                if ((i - start) & (CONTROL_FLUSH - 1)) == CONTROL_FLUSH - 1:
                    ctl_add(ctl, CONTROL_FLUSH)
                if ctl_stopped(ctl):
                    r = -ERR_STOPPED
                elif f == NULL:
                    r = -ERR_MEMORY
                else:
                    r = verify_one(game, tier, i, &tiers, f)
                if r < 0:
                    per_thread[2 * tid + 1] |= -r
                elif r > 0:
                    per_thread[2 * tid] += 1
            free(f)
        for tid in range(threads):
            bad += per_thread[2 * tid]
            error |= per_thread[2 * tid + 1]
    finally:
        free_tiers(&tiers)
        free(per_thread)
    if error:
        raise _failure("verifying", tier, error)
    ctl_add(ctl, (stop - start) % CONTROL_FLUSH)
    return bad


def solve_range(object capsule, int tier, int64_t start, int64_t stop, list tables, int threads=1,
                int64_t[::1] control=None):
    """Solve indices start..stop-1 of `tier` in place.

    tables[t] is the uint16 record array of tier t (None where not loaded); tables[tier] is
    the array being filled.  Raises RuntimeError naming what broke the contract.  With a
    `control` (solver/kernels.py): adds each record it stores to its count of positions done,
    and stops within milliseconds when its stop flag is set (KeyboardInterrupt; the records
    stored so far are correct, the rest stay unsolved).
    """
    cdef const GameKernel *game = kernel_of(capsule)
    cdef int error = 0, e
    cdef int64_t root
    cdef Stack *st
    cdef Tiers tiers
    cdef Control spare
    cdef Control *ctl = control_of(control, &spare)
    if game.max_children > MAX_CHILDREN:
        raise ValueError(f"a game with {game.max_children} children per position needs a larger MAX_CHILDREN")
    tier_pointers(tables, tier, start, stop, &tiers)
    if threads < 1:
        threads = 1
    try:
        with nogil, parallel(num_threads=threads):
            st = <Stack *>malloc(sizeof(Stack))
            if st != NULL:
                st.capacity = 64
                st.solved = 0
                st.frames = <Frame *>malloc(st.capacity * sizeof(Frame))
            for root in prange(start, stop, schedule="dynamic", chunksize=2048):
                if st == NULL or st.frames == NULL:
                    e = ERR_MEMORY
                else:
                    e = solve_root(game, tier, root, &tiers, st, ctl)
                error |= e
            if st != NULL:
                ctl_add(ctl, st.solved)
                free(st.frames)
                free(st)
    finally:
        free_tiers(&tiers)
    if error:
        raise _failure("solving", tier, error)


def tier_summary(cnp.ndarray[cnp.uint16_t, ndim=1] records):
    """(losses, draws, wins, unsolved, longest win, index of a longest win) of a tier array."""
    cdef int64_t i, n = records.shape[0], index = -1
    cdef int64_t counts[4]
    cdef unsigned longest = 0, r
    cdef const uint16_t *data = <const uint16_t *>records.data
    counts[0] = counts[1] = counts[2] = counts[3] = 0
    with nogil:
        for i in range(n):
            r = data[i]
            counts[REC_OUTCOME(r)] += 1
            if REC_OUTCOME(r) == REC_WIN and (index < 0 or REC_REMOTENESS(r) > longest):
                longest = REC_REMOTENESS(r)
                index = i
    return counts[REC_LOSS], counts[REC_DRAW], counts[REC_WIN], counts[REC_UNSOLVED], longest, index
