# cython: language_level=3
"""Tier solver kernel for acyclic win/loss games, written once against the GameKernel.

A tier's children lie in lower, already solved tiers or in the same tier.  Inside a tier the
game graph is acyclic.  Where the game offers levels (GameKernel.level: a potential,
which falls along every move), a whole tier is solved as a sweep: its indices sorted by level
(a counting sort), then level by level upwards, each level shared by the threads in chunks
taken as they come -- the positions of one level are independent, so there is no search and no
long first chunk, and a thread the system pauses holds nobody up; each batch of positions asks for all its children's records before folding any, so
the reads from memory overlap.  This is also the split a cluster needs.

Otherwise (a game without levels, or a part of a tier) each position is solved by a depth-first
walk that first solves its unsolved same-tier children (memoised in the tier's own array): no
counters, no un-moves, no ordering pass.  Threads split the tier's indices; two threads that
meet on one position compute the same record, and records are read and written atomically, so
the race is benign (progress counts a position once, or twice in the rare case that both
threads store it at once).

Every child index is checked against the length of its tier's array before it is read, so arrays
of the wrong size give an error, never a read outside them.  A Control block (solver/kernels.py)
lets the driving thread stop a call within milliseconds and read how many positions it solved.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from cython.parallel cimport parallel, prange, threadid
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc

import numpy as np
cimport numpy as cnp

from kernel_api cimport (CONTROL_FLUSH, Control, Fold, GameKernel, REC_DRAW, REC_LOSS,
                         REC_MAX_REMOTENESS, REC_OUTCOME, REC_OUTCOME_BITS, REC_REMOTENESS,
                         REC_MAKE, REC_OUTCOME_MASK, REC_UNSOLVED, REC_WIN,
                         SOWSOLVE_KERNEL_CAPSULE, control_of, ctl_add, ctl_stopped, first_error,
                         flag_load, fold_add, fold_fits, fold_result, fold_score,
                         fold_score_record, fold_start,
                         prefetch_for_read, rec_claim, rec_load, rec_store, team_barrier)

cnp.import_array()

cdef extern from "sowsolve_lanes.h" nogil:
    int sowsolve_lanes_available() noexcept
    int sowsolve_lanes_records(const int *ct, const int64_t *ci, int n, int tier,
                               uint16_t **tables, const int64_t *lengths,
                               const uint16_t **at) noexcept
    int64_t sowsolve_lanes_fold(const uint16_t **at, int n) noexcept

# the sweep forms its children's record pointers, and folds their records, in vector lanes
# where the CPU has them (sowsolve_lanes.h)
cdef bint sweep_lanes = sowsolve_lanes_available() != 0


def use_lanes(enabled=None):
    """Whether the sweep uses the CPU's vector lanes (AVX-512) for its children's records; with
    `enabled`, turn them on (where the CPU has them) or off and return the previous setting.
    Records are the same either way: the tests compare the two."""
    global sweep_lanes
    previous = bool(sweep_lanes)
    if enabled is not None:
        sweep_lanes = bool(enabled) and sowsolve_lanes_available() != 0
    return previous

#: The win/loss record layout (sowsolve_kernel.h): a record is (remoteness << outcome_bits) |
#: outcome, the outcome one of unsolved, loss, draw, win (for the side to move), the remoteness
#: at most max_remoteness.
WINLOSS_LAYOUT = {"unsolved": REC_UNSOLVED, "loss": REC_LOSS, "draw": REC_DRAW, "win": REC_WIN,
                  "outcome_bits": REC_OUTCOME_BITS, "max_remoteness": REC_MAX_REMOTENESS}

cdef enum:
    MAX_CHILDREN = 256      # keyed endgame tiers: 8 directions x up to 32 stacks
    MAX_DEPTH = 1 << 16
    ERR_RANGE = 1          # the game refused an index it should hold
    ERR_MISSING_TIER = 2   # a child in a tier that is not loaded (or above the current one)
    ERR_UNSOLVED = 4       # a child in a lower tier that holds no record
    ERR_DEPTH = 8          # same-tier chain deeper than MAX_DEPTH: the tier is not acyclic
    ERR_MEMORY = 16
    ERR_REMOTENESS = 32    # remoteness beyond what a record holds
    ERR_CHILD_RANGE = 64   # a child index beyond the length of its tier's array
    ERR_STOPPED = 128      # the driver asked the call to stop
    ERR_LEVEL = 256        # a level out of range, or a same-tier child not at a lower level
    SWEEP_BATCH = 8        # positions a sweep expands (prefetching their children) before it folds
                           # the first of them: the depth of its pipeline (a power of two)
    SWEEP_RUN = 128        # positions a thread takes at a time from a level (dynamic: a thread the
                           # system pauses, for the store thread, leaves its share to the others
                           # instead of holding them at the level's barrier)
    SWEEP_CHUNKS = 256     # pieces a tier is cut into to sort it by level
    SWEEP_SCRATCH = 6      # scratch bytes per position of a swept tier: order (4), level (2)
    POLL_STEPS = 1024      # walk steps between looks at the stop flag
    SUMMARY_RUN = 1 << 16  # records tier_summary counts in 32-bit words before adding them up

ERRORS = {
    ERR_RANGE: "the game kernel refused one of its own indices",
    ERR_MISSING_TIER: "a child lies in a tier that is not loaded",
    ERR_UNSOLVED: "a child in a lower tier has no value",
    ERR_DEPTH: f"a chain of same-tier moves is deeper than {MAX_DEPTH} (is the tier acyclic?)",
    ERR_MEMORY: "out of memory for the search stack",
    ERR_REMOTENESS: "a remoteness exceeds what a record can hold",
    ERR_CHILD_RANGE: "a child's index lies outside the array of its tier (an array of the wrong size)",
    ERR_LEVEL: "the game's levels do not order the tier (a level out of range, or a same-tier child "
               "not at a lower level)",
}


cdef struct Frame:
    int64_t index
    int count                  # children, -1 before expansion
    int next
    Fold fold
    int child_tier[MAX_CHILDREN]
    int64_t child_index[MAX_CHILDREN]


cdef struct SweepFrame:
    int64_t index
    int count                  # children (0: stored at once)
    const uint16_t *at[MAX_CHILDREN]   # each child's record, checked in range when expanded


cdef struct SweepScratch:
    SweepFrame frames[SWEEP_BATCH]
    int child_tier[MAX_CHILDREN]       # what the game's expand writes, for the frame being filled
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
                              or not t.flags.c_contiguous or not t.flags.writeable
                              or not t.flags.aligned):
            # aligned: the sweep's vector fold reads each record as the aligned word holding it
            raise TypeError("tier arrays must be writeable, aligned, contiguous one-dimensional "
                            "uint16 numpy arrays")
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


cdef inline int fold_sweep(const Tiers *tiers, int tier, const SweepFrame *f,
                           uint16_t *current) noexcept nogil:
    """Fold an expanded position's children's records and store its record: one maximum of
    fold_score over the children (no branch on each child's outcome), the record fold_add and
    fold_result give.  The maximum is taken in vector lanes where the sweep has them; on an
    unsolved child (or without lanes) the loop below takes it, and names the error."""
    cdef uint32_t best = 0, score
    cdef uint16_t record
    cdef int j, unsolved = 0
    cdef int64_t lanes_best = sowsolve_lanes_fold(<const uint16_t **>f.at, f.count) if sweep_lanes else -1
    if lanes_best >= 0:
        best = <uint32_t>lanes_best
    else:
        for j in range(f.count):
            record = rec_load(f.at[j])
            unsolved |= record == 0
            score = fold_score(record)
            if score > best:
                best = score
        if unsolved:
            for j in range(f.count):
                if rec_load(f.at[j]) == 0:
                    return ERR_LEVEL if current <= f.at[j] < current + tiers.lengths[tier] else ERR_UNSOLVED
    record = fold_score_record(best)
    if record == 0:
        return ERR_REMOTENESS
    rec_store(current + f.index, record)
    return 0


cdef int sweep_run(const GameKernel *game, int tier, const uint32_t *members, int n,
                   const Tiers *tiers, SweepScratch *scratch, bint keyed) noexcept nogil:
    """Solve positions members[0..n-1] of `tier`, all of one group (so none is a child of
    another), as a pipeline SWEEP_BATCH positions deep: each position is expanded, its
    children checked in range once and their records asked for (prefetch), and folded
    SWEEP_BATCH expansions later, so that the reads from memory overlap and each has that long
    to arrive.  `keyed`: the members are the game's own (level_members, expanded by
    expand_member), else indices."""
    cdef uint16_t *current = tiers.tables[tier]
    cdef uint16_t final_record = 0
    cdef int b, j, count, err, ct
    cdef int64_t ci
    cdef SweepFrame *f
    cdef int *child_tier = scratch.child_tier
    cdef int64_t *child_index = scratch.child_index
    cdef uint16_t **tables = tiers.tables         # tier < tiers.ntables (tier_pointers)
    cdef const int64_t *lengths = tiers.lengths   # 0 where a tier is not loaded
    cdef const uint16_t *at
    for b in range(n + SWEEP_BATCH):
        f = &scratch.frames[b & (SWEEP_BATCH - 1)]
        if b >= SWEEP_BATCH and f.count > 0:
            err = fold_sweep(tiers, tier, f, current)
            if err:
                return err
        if b >= n:
            continue
        if keyed:
            count = game.expand_member(game.ctx, tier, members[b], &f.index, child_tier,
                                       child_index, &final_record)
            if count >= 0 and not 0 <= f.index < tiers.lengths[tier]:
                return ERR_RANGE
        else:
            f.index = members[b]
            count = game.expand(game.ctx, tier, f.index, child_tier, child_index, &final_record)
        if count < 0:
            return ERR_RANGE
        f.count = count
        if count == 0:
            rec_store(current + f.index, final_record)
            continue
        if sweep_lanes and sowsolve_lanes_records(child_tier, child_index, count, tier, tables, lengths,
                                            f.at) == 0:
            continue
        for j in range(count):
            ct = child_tier[j]
            ci = child_index[j]
            # one test for both (an unloaded tier has length 0), told apart only on failure
            if <unsigned>ct > <unsigned>tier or <uint64_t>ci >= <uint64_t>lengths[ct]:
                return ERR_CHILD_RANGE if 0 <= ct <= tier and tables[ct] != NULL else ERR_MISSING_TIER
            at = tables[ct] + ci
            f.at[j] = at
            prefetch_for_read(at)
    return 0


cdef int level_order(const GameKernel *game, int tier, int64_t size, uint32_t *order,
                     uint16_t *kept, int64_t *first, int threads, Control *ctl) noexcept nogil:
    """The tier's indices sorted by level (stable: ascending inside a level) into `order`, and
    first[L] the position of level L's first index (first[level_count] = size): a counting
    sort over SWEEP_CHUNKS pieces of the tier, each counted and placed by one thread, the
    levels of the first pass kept in `kept` (2 bytes each; NULL: computed again).  With no
    `order`, only `first` is filled (one pass)."""
    cdef int32_t levels = game.level_count
    cdef int64_t chunks = SWEEP_CHUNKS, c, i, lo, hi, total, count, slot
    cdef int32_t lv, L
    cdef int error = 0
    cdef int *errp = &error
    if size < chunks * 64:
        chunks = 1
    if chunks * levels > (1 << 24):
        chunks = max(1, (1 << 24) // levels)
    cdef int64_t *hist = <int64_t *>calloc(chunks * levels, sizeof(int64_t))
    if hist == NULL:
        return ERR_MEMORY
    if levels > 65536 or order == NULL:
        kept = NULL
    with parallel(num_threads=threads):
        for c in prange(chunks, schedule="dynamic"):
            if ctl_stopped(ctl):
                first_error(errp, ERR_STOPPED)
            if flag_load(errp) == 0:
                lo = size * c // chunks
                hi = size * (c + 1) // chunks
                for i in range(lo, hi):
                    lv = game.level(game.ctx, tier, i)
                    if lv < 0 or lv >= levels:
                        first_error(errp, ERR_LEVEL)
                        break
                    if kept != NULL:
                        kept[i] = <uint16_t>lv
                    hist[c * levels + lv] += 1
    if error == 0:
        total = 0
        for L in range(levels):
            first[L] = total
            for c in range(chunks):
                count = hist[c * levels + L]
                hist[c * levels + L] = total
                total += count
        first[levels] = total
    if error == 0 and order != NULL:
        with parallel(num_threads=threads):
            for c in prange(chunks, schedule="dynamic"):
                lo = size * c // chunks
                hi = size * (c + 1) // chunks
                for i in range(lo, hi):
                    lv = kept[i] if kept != NULL else game.level(game.ctx, tier, i)
                    if lv < 0 or lv >= levels:         # a level that changed between passes
                        first_error(errp, ERR_LEVEL)
                        break
                    slot = hist[c * levels + lv]
                    if slot >= first[lv + 1]:
                        first_error(errp, ERR_LEVEL)
                        break
                    hist[c * levels + lv] = slot + 1
                    order[slot] = <uint32_t>i
    free(hist)
    return error


cdef int sweep_groups(const GameKernel *game, int tier, const uint32_t *order, const int64_t *first,
                      int64_t groups, const Tiers *tiers, int threads, Control *ctl,
                      bint keyed=False) noexcept nogil:
    """Solve order[first[0]..first[groups]-1] group by group: the indices of group g,
    order[first[g]..first[g+1]-1], have their same-tier children in earlier groups (or solved
    before the call), so each group is split between the threads (taken SWEEP_RUN positions at
    a time, each run a pipeline: sweep_run), with a team barrier between groups.  Returns an error code."""
    cdef int64_t g, b, nruns, lo, hi, n
    cdef int error = 0, e
    cdef int *errp = &error
    cdef SweepScratch *scratch
    cdef int64_t *solved
    with parallel(num_threads=threads):
        scratch = <SweepScratch *>malloc(sizeof(SweepScratch))
        solved = <int64_t *>calloc(1, sizeof(int64_t))
        if scratch == NULL or solved == NULL:
            first_error(errp, ERR_MEMORY)
        for g in range(groups):
            lo = first[g]
            hi = first[g + 1]
            if hi > lo:
                nruns = (hi - lo + SWEEP_RUN - 1) // SWEEP_RUN
                for b in prange(nruns, schedule="dynamic", chunksize=1):
                    if ctl_stopped(ctl):
                        first_error(errp, ERR_STOPPED)
                    if flag_load(errp) == 0:
                        n = hi - (lo + b * SWEEP_RUN)
                        if n > SWEEP_RUN:
                            n = SWEEP_RUN
                        e = sweep_run(game, tier, order + lo + b * SWEEP_RUN, <int>n, tiers, scratch, keyed)
                        if e:
                            first_error(errp, e)
                        else:
                            solved[0] += n
                            if solved[0] >= CONTROL_FLUSH:
                                ctl_add(ctl, solved[0])
                                solved[0] = 0
                team_barrier()      # every record of this group stored before the next
        if solved != NULL:
            ctl_add(ctl, solved[0])
        free(scratch)
        free(solved)
    return error


cdef int sweep_tier(const GameKernel *game, int tier, int64_t size, const Tiers *tiers,
                    uint8_t *scratch, int threads, Control *ctl) noexcept nogil:
    """Solve a whole tier level by level upwards: the children of a level lie in lower levels
    or lower tiers, all solved, so each level is a group of sweep_groups.  `scratch`
    (SWEEP_SCRATCH bytes per position, or NULL: allocated here) holds the sorted order and the
    levels; a caller that passes the same scratch for every tier spares the system zeroing
    fresh pages for each.  Returns an error code (0: solved)."""
    cdef int32_t levels = game.level_count
    cdef int error = 0
    cdef uint8_t *owned = NULL
    if scratch == NULL:
        owned = <uint8_t *>malloc(size * SWEEP_SCRATCH + 1)
        scratch = owned
    cdef uint32_t *order = <uint32_t *>scratch
    cdef uint16_t *kept = <uint16_t *>(scratch + size * sizeof(uint32_t))
    cdef int64_t *first = <int64_t *>malloc((levels + 1) * sizeof(int64_t))
    if scratch == NULL or first == NULL:
        free(owned)
        free(first)
        return ERR_MEMORY
    if game.level_members != NULL and game.expand_member != NULL:
        # the game enumerates the tier by level itself: no level per index, no counting sort
        if game.level_members(game.ctx, tier, order, first) != 0 or first[levels] != size:
            error = ERR_LEVEL
        if error == 0:
            error = sweep_groups(game, tier, order, first, levels, tiers, threads, ctl, True)
    else:
        error = level_order(game, tier, size, order, kept, first, threads, ctl)
        if error == 0:
            error = sweep_groups(game, tier, order, first, levels, tiers, threads, ctl)
    free(owned)
    free(first)
    return error


#: scratch bytes per position a whole-tier sweep uses (solve_range's `scratch`)
SCRATCH_PER_POSITION = SWEEP_SCRATCH
#: tiers smaller than this are walked depth first even where the game offers levels: their
#: records stay in cache, and a sweep's barrier per level would cost more than it saves
SWEEP_MIN_POSITIONS = 1 << 20


def solve_range(object capsule, int tier, int64_t start, int64_t stop, list tables, int threads=1,
                int64_t[::1] control=None, cnp.ndarray scratch=None,
                int64_t sweep_from=SWEEP_MIN_POSITIONS):
    """Solve indices start..stop-1 of `tier` in place.

    tables[t] is the uint16 record array of tier t (None where not loaded); tables[tier] is
    the array being filled.  Raises RuntimeError naming what broke the contract.  With a
    `control` (solver/kernels.py): adds each record it stores to its count of positions done,
    and stops within milliseconds when its stop flag is set (KeyboardInterrupt; the records
    stored so far are correct, the rest stay unsolved).  `scratch`: a writeable contiguous
    uint8 array of at least SCRATCH_PER_POSITION bytes per position of the tier, used by a
    whole-tier sweep (and reused by a caller across tiers); too small or None: allocated here.
    A whole tier of at least `sweep_from` positions is swept where the game offers levels.
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
    cdef uint8_t *scratch_data = NULL
    if (scratch is not None and scratch.dtype == np.uint8 and scratch.ndim == 1
            and scratch.flags.c_contiguous and scratch.flags.writeable
            and cnp.PyArray_DIM(scratch, 0) >= stop * SWEEP_SCRATCH):
        scratch_data = <uint8_t *>cnp.PyArray_DATA(scratch)
    if (game.level != NULL and game.level_count > 0 and start == 0 and stop == tiers.lengths[tier]
            and sweep_from <= stop < (<int64_t>1 << 32)):
        try:
            with nogil:
                error = sweep_tier(game, tier, stop, &tiers, scratch_data, threads, ctl)
        finally:
            free_tiers(&tiers)
        if error:
            raise _failure("solving", tier, error)
        return
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


def level_bounds(object capsule, int tier, int64_t size, int threads=1,
                 int64_t[::1] control=None, bint with_order=True, cnp.ndarray out=None):
    """(order, first) of a tier of `size` positions whose game offers levels: `order` (uint32,
    `size`) its indices sorted by level, ascending inside a level; `first` (int64, one more
    than the game's levels) where each level starts in it.  Without `with_order`, `order` is
    None (one pass, nothing per position).  `out`: a writeable contiguous uint32 array of at
    least `size` that the order is written into (its first `size` entries are returned).
    None where the game offers no levels."""
    cdef const GameKernel *game = kernel_of(capsule)
    cdef int error = 0
    cdef Control spare
    cdef Control *ctl = control_of(control, &spare)
    if game.level == NULL or game.level_count <= 0:
        return None
    if not 0 <= size < (<int64_t>1 << 32):
        raise ValueError(f"a tier of {size} positions cannot be sorted by level")
    if threads < 1:
        threads = 1
    first = np.zeros(game.level_count + 1, dtype=np.int64)
    if out is not None and with_order:
        if (out.dtype != np.uint32 or out.ndim != 1 or not out.flags.c_contiguous
                or not out.flags.writeable or out.shape[0] < size):
            raise ValueError(f"the order's array must be a writeable contiguous uint32 array of "
                             f"at least {size} entries")
        order = out[:size]
    else:
        order = np.empty(size if with_order else 0, dtype=np.uint32)
    cdef int64_t[::1] first_view = first
    cdef uint32_t[::1] order_view = order
    cdef uint32_t *order_data = &order_view[0] if with_order and size > 0 else NULL
    with nogil:
        error = level_order(game, tier, size, order_data, NULL, &first_view[0], threads, ctl)
    if error:
        raise _failure("sorting", tier, error)
    return (order if with_order else None), first


def solve_groups(object capsule, int tier, list tables, const uint32_t[::1] members,
                 const int64_t[::1] bounds, int threads=1, int64_t[::1] control=None):
    """Solve the indices `members` of `tier` in place, group by group: group g is
    members[bounds[g]..bounds[g+1]-1], and every same-tier child of a group's positions must
    lie in an earlier group or be solved already (a tier sorted by level_bounds: a run of
    levels, or part of one).  An unsolved same-tier child is an error, never a wrong record.
    Each group is split between the threads."""
    cdef const GameKernel *game = kernel_of(capsule)
    cdef int error = 0
    cdef int64_t g, groups = bounds.shape[0] - 1, n = members.shape[0]
    cdef Tiers tiers
    cdef Control spare
    cdef Control *ctl = control_of(control, &spare)
    if game.max_children > MAX_CHILDREN:
        raise ValueError(f"a game with {game.max_children} children per position needs a larger MAX_CHILDREN")
    if groups < 1 or bounds[0] != 0 or bounds[groups] != n:
        raise ValueError("the group bounds must run from 0 to the number of members")
    for g in range(groups):
        if bounds[g + 1] < bounds[g]:
            raise ValueError("the group bounds must not decrease")
    tier_pointers(tables, tier, 0, 0, &tiers)
    if n > 0 and np.asarray(members).max() >= tiers.lengths[tier]:
        free_tiers(&tiers)
        raise ValueError(f"a member lies outside tier {tier}")
    if threads < 1:
        threads = 1
    try:
        if n > 0:
            with nogil:
                error = sweep_groups(game, tier, &members[0], &bounds[0], groups, &tiers, threads, ctl)
    finally:
        free_tiers(&tiers)
    if error:
        raise _failure("solving", tier, error)


def tier_summary(object records):
    """(losses, draws, wins, unsolved, longest win, index of a longest win) of a tier's uint16
    records (any array: a strided or other one is copied first): one pass of counts and of the
    greatest win in runs of SUMMARY_RUN records, counted in 32-bit words and added up after each
    run, without a branch on a record (the compiler does several at once: it runs on the store
    thread beside the solve), then a pass to the first record of that win (it stops there)."""
    if getattr(records, "dtype", None) != np.uint16:
        raise TypeError(f"a tier summary takes uint16 records, not {getattr(records, 'dtype', type(records).__name__)}")
    cdef const uint16_t[::1] contiguous = np.ascontiguousarray(records)
    cdef int64_t i, start, stop, n = contiguous.shape[0], index = -1
    cdef int64_t losses = 0, draws = 0, wins = 0
    cdef uint32_t run_losses, run_draws, run_wins
    cdef int16_t top = 0, run_top, won
    cdef uint16_t r, outcome, longest_record
    cdef const uint16_t *data = &contiguous[0] if n else NULL
    with nogil:
        start = 0
        while start < n:
            stop = min(start + SUMMARY_RUN, n)
            run_losses = run_draws = run_wins = 0
            run_top = 0
            for i in range(start, stop):
                r = data[i]
                outcome = r & REC_OUTCOME_MASK
                run_losses += outcome == REC_LOSS
                run_draws += outcome == REC_DRAW
                run_wins += outcome == REC_WIN
                # remoteness + 1 of a win (at most REC_MAX_REMOTENESS + 1: a positive int16)
                won = <int16_t>((r >> REC_OUTCOME_BITS) + 1) if outcome == REC_WIN else 0
                run_top = won if won > run_top else run_top
            losses += run_losses
            draws += run_draws
            wins += run_wins
            top = run_top if run_top > top else top
            start = stop
        if top:
            longest_record = REC_MAKE(REC_WIN, top - 1)
            for i in range(n):
                if data[i] == longest_record:
                    index = i
                    break
    return losses, draws, wins, n - losses - draws - wins, (top - 1 if top else 0), index
