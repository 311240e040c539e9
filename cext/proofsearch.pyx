# cython: language_level=3
"""Depth-first proof-number search (df-pn) for win/loss games without draws, over packed
canonical positions (the GameKernel's expand_key hook), in bounded memory.

Proving who wins a position does not need every position: a proof holds one winning move at
each of the winner's turns and every move at the loser's.  Proof-number search grows only the
part of the game that such a proof needs, guided by two numbers per position (negamax form):
phi, a lower bound on the positions still to expand to prove that the side to move wins, and
delta, the same to prove that it loses.  For a position with children c:

    phi(n) = min over c of delta(c)          delta(n) = sum over c of phi(c)

and a final position is (0, INF) when its side to move has won, (INF, 0) when it has lost.
Df-pn (Nagai 2002) walks down from the root to the most-proving position under thresholds,
so it needs no tree in memory: (phi, delta) of positions live in a transposition table of fixed
size (4-entry buckets; when a bucket is full the entry with the least work below it goes), and
a position whose entry was lost is simply searched again.  The child's delta threshold uses the
1 + epsilon trick (Pawlewicz and Lew 2007), which cuts the re-searches of plain df-pn.

An entry is 16 bytes: the position's key, then phi and delta (30 bits each) and the work below
it as a power of two (4 bits), so that a bucket of 4 entries is one cache line.  Threads share
the table: each bucket is locked (one of LOCKS spin locks, by the bucket's number) while it is
read or written, and each thread marks the positions it is inside, so that where
another thread is inside the most promising child a thread takes the next one; after each
descent a thread reads all children again, seeing what the others proved.  A proof or disproof
in the table is never overwritten by weaker numbers, so no interleaving makes a value wrong.

A search runs in slices of a node budget: between slices the driver may report progress, write
a checkpoint (the table's entries) or stop; the next slice goes on from the table.  Once the
root is proved, `extract()` walks the proof in the table (searching again where an entry was
replaced): for every position of the winner's on it, the child chosen.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport INT64_MAX, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from cython.parallel cimport parallel, threadid
from keyset cimport Seen, Todo, push, seen_add, seen_close, seen_has, seen_open, todo_close, todo_open

import numpy as np
cimport numpy as cnp

from kernel_api cimport (CONTROL_FLUSH, PROOF_INF, REC_LOSS, REC_OUTCOME, REC_WIN, Control, GameKernel,
                         SOWSOLVE_KERNEL_CAPSULE, control_of, ctl_add, ctl_stopped, key_mix,
                         prefetch_for_read, big_table_alloc, big_table_free, spin_lock, spin_unlock,
                         count_add, count_load, flag_load, flag_store, byte_load, byte_add, byte_fetch_sub)

cnp.import_array()

cdef enum:
    MAX_CHILDREN = 512
    MAX_DEPTH = 1024
    BUCKET = 4
    ERR_KEY = -1
    ERR_DRAW = -2
    ERR_DEPTH = -3
    ERR_MEMORY = -4
    ERR_STOPPED = -5
    ERR_BUDGET = -6          # the slice's node budget is spent (not an error: the search goes on)
    ERR_FINISHED = -7        # another thread proved the root (not an error)
    ERR_LINE_NOT_WON = -8    # extraction: a line ends where its winner has not won
    ERR_NO_WINNING_MOVE = -9 # extraction: a position proved won shows no winning move
    ERR_OUT_FULL = -10       # extraction: the pairs' buffer is full (handed to spill, walk goes on)
    BUSY_BITS = 16           # slots of the marks of positions being searched (parallel runs)

cdef enum:
    INF = 0x3FFFFFFF          # proof and disproof numbers saturate here (PROOF_INF, checked below)
    # 1 + EPSILON_NUM / EPSILON_DEN for the child's delta threshold (Pawlewicz and Lew: 1/4)
    EPSILON_NUM = 1
    EPSILON_DEN = 4

if INF != PROOF_INF:
    raise ImportError("the proof search's infinity differs from sowsolve_kernel.h's PROOF_INF")

#: bytes of one table entry (the --memory budget divided by this gives the entries)
ENTRY_BYTES = 16
#: pairs (position, chosen child) an extraction with a spill gathers before handing them over
EXTRACT_CHUNK = 1 << 22

ERRORS = {
    ERR_KEY: "the game refused one of its own packed positions",
    ERR_DRAW: "a position is a draw; the prover handles games without draws only",
    ERR_DEPTH: f"the search went deeper than {MAX_DEPTH} plies",
    ERR_MEMORY: "out of memory",
    ERR_LINE_NOT_WON: "a line of the proof ends where its winner does not win",
    ERR_NO_WINNING_MOVE: "the search proved a position it cannot show a winning move of",
}


cdef struct Entry:
    uint64_t key            # 0: empty (no packed position is 0)
    uint64_t numbers        # phi | delta << 30 | work class << 60 (NUMBER_BITS, work_class)


cdef enum:
    NUMBER_BITS = 30          # phi and delta: 0 .. INF, INF = 2^30 - 1
    WORK_CLASSES = 16         # the work below an entry (positions expanded) as a power of two
    LOCKS = 1 << 16           # spin locks of the buckets in parallel runs (256 KB: in cache)


cdef extern from *:
    int __builtin_clzll(unsigned long long x) nogil

cdef uint64_t NUMBER_MASK = (<uint64_t>1 << NUMBER_BITS) - 1


cdef inline uint64_t work_class(uint32_t work) noexcept nogil:
    """The work below an entry in 4 bits, as the power of two nearest to it: class c stands
    for 2^(c-1) (0 for none); a work of 1.5 times a power or more goes to the next; 15 (2^14)
    and more are one class.  Replacement compares the entries of one bucket, where a factor
    of two is what matters."""
    cdef int c
    if work == 0:
        return 0
    c = 64 - __builtin_clzll(<unsigned long long>work)       # 2^(c-1) <= work < 2^c
    if c >= 2 and (work >> (c - 2)) == 3:                     # nearer 2^c than 2^(c-1)
        c += 1
    return <uint64_t>(c if c < WORK_CLASSES else WORK_CLASSES - 1)


cdef inline uint32_t work_of_class(uint64_t c) noexcept nogil:
    return 0 if c == 0 else <uint32_t>1 << (c - 1)


cdef inline uint32_t work_after(uint32_t before, uint64_t added, uint64_t salt) noexcept nogil:
    """The work to keep after `added` more expansions below an entry that held `before` (a
    class's power of two): the sum, where its class is higher; else the next power with the
    probability added / before, so that many visits each smaller than the entry's class still
    add up (an approximate counter; drawn from a hash of `salt`, so one thread's run draws
    the same every time)."""
    cdef uint64_t total = <uint64_t>before + added
    if total > 0xFFFFFFFFU:
        total = 0xFFFFFFFFU
    if before == 0 or work_class(<uint32_t>total) > work_class(before):
        return <uint32_t>total
    if (key_mix(salt) & (before - 1)) < added:    # before: a power of two
        return before * 2 if before < (<uint32_t>1 << 31) else before
    return before


cdef inline uint64_t pack_numbers(uint32_t phi, uint32_t delta, uint32_t work) noexcept nogil:
    """An entry's numbers word (phi and delta held to INF: a game's hint never spills over)."""
    if phi > INF:
        phi = INF
    if delta > INF:
        delta = INF
    return (<uint64_t>phi) | (<uint64_t>delta << NUMBER_BITS) | (work_class(work) << (2 * NUMBER_BITS))


cdef inline uint32_t entry_phi(const Entry *e) noexcept nogil:
    return <uint32_t>(e.numbers & NUMBER_MASK)


cdef inline uint32_t entry_delta(const Entry *e) noexcept nogil:
    return <uint32_t>((e.numbers >> NUMBER_BITS) & NUMBER_MASK)


cdef inline uint32_t entry_work(const Entry *e) noexcept nogil:
    return work_of_class(e.numbers >> (2 * NUMBER_BITS))


cdef inline uint32_t sat_add(uint32_t a, uint32_t b) noexcept nogil:
    """a + b, INF only where one of them is (a proof or disproof); a sum that grows past the
    numbers saturates at INF - 1, which no threshold takes for proved."""
    cdef uint64_t s = <uint64_t>a + b
    if a == INF or b == INF:
        return INF
    return INF - 1 if s >= INF - 1 else <uint32_t>s


cdef struct Search:
    const GameKernel *game
    Entry *table
    uint32_t *locks         # LOCKS spin locks (parallel runs), bucket b's is b % LOCKS
    int64_t buckets
    int64_t nodes           # positions expanded, all slices and threads
    int64_t budget          # the slice stops when nodes reach it
    int64_t replaced        # entries pushed out of a full bucket
    int64_t stored          # entries in use
    Control *ctl
    uint64_t root
    # Parallel runs: the threads share the table (each bucket locked while read or written: the
    # lock of its number in `locks`), and each marks the positions it is inside, so that where the
    # most promising child is being searched by another thread, a thread takes the next one.
    int parallel
    int finished            # a thread proved the root: the others stop
    uint8_t *busy           # 1 << BUSY_BITS counters, by key; a shared slot only misleads the choice
    int64_t *depth_counts   # positions expanded by the search at each depth (NULL: not counted)
    # Techniques, each switchable so that the bench measures what it pays (bench/
    # bench_proof_techniques.py; the defaults are the ones that pay):
    # - hints: the game's first guess of a new position's numbers (df-pn+), else (1, 1);
    # - epsilon: the 1 + epsilon trick on the child's delta threshold, else plain df-pn's
    #   "the second best plus one";
    # - weak: weak proof numbers (Ueda et al. 2008), delta the children's largest phi plus one
    #   for each other child not yet lost, instead of their sum, which counts a position reached
    #   by several moves once per move (it does not pay here: more expansions on every board)
    int no_hints
    int no_epsilon
    int weak
    # Drawing a proof (one thread): which entries the walk has been at, a byte a bucket, bit
    # 2 * slot + role (the winner to move: 1), so that the walk needs no set of its own beside
    # the table (NULL while searching).  While it is set, `store` pushes out an unproved entry
    # before a proved one, and one the walk has been at last of all; the marks of such an
    # entry go to `marks_pushed_out` (a set that stays small: the table is far larger than a
    # proof it can hold), so that no position is walked twice.
    uint8_t *marks
    int64_t walked          # positions the walks expanded (counted in `nodes` too)
    Seen *marks_pushed_out
    int marks_lost          # marks_pushed_out could not grow (out of memory)


cdef struct Worker:
    # one thread of a search
    Search *s
    int64_t expanded        # positions this thread expanded (the work below an entry)
    int64_t unreported      # expansions not yet added to the control's count
    int err                 # how the thread's part of a parallel run ended


cdef inline int64_t bucket_number(Search *s, uint64_t key) noexcept nogil:
    return <int64_t>(key_mix(key) % <uint64_t>s.buckets)


cdef inline Entry *bucket_of(Search *s, uint64_t key) noexcept nogil:
    return &s.table[bucket_number(s, key) * BUCKET]


cdef inline void prefetch_bucket(Search *s, uint64_t key) noexcept nogil:
    cdef char *b = <char *>bucket_of(s, key)
    prefetch_for_read(b)
    prefetch_for_read(b + BUCKET * sizeof(Entry) - 1)


cdef inline bint look_up(Search *s, uint64_t key, uint32_t *phi, uint32_t *delta) noexcept nogil:
    """(phi, delta) the table holds for `key`, else (1, 1); whether it holds them."""
    cdef int64_t number = bucket_number(s, key)
    cdef Entry *b = &s.table[number * BUCKET]
    cdef uint32_t *lock = &s.locks[number & (LOCKS - 1)]
    cdef int i
    cdef bint found = False
    phi[0] = 1
    delta[0] = 1
    if s.parallel:
        spin_lock(lock)
    for i in range(BUCKET):
        if b[i].key == key:
            phi[0] = entry_phi(&b[i])
            delta[0] = entry_delta(&b[i])
            found = True
            break
    if s.parallel:
        spin_unlock(lock)
    return found


cdef inline uint32_t work_of(Search *s, uint64_t key) noexcept nogil:
    cdef int64_t number = bucket_number(s, key)
    cdef Entry *b = &s.table[number * BUCKET]
    cdef uint32_t *lock = &s.locks[number & (LOCKS - 1)]
    cdef int i
    cdef uint32_t work = 0
    if s.parallel:
        spin_lock(lock)
    for i in range(BUCKET):
        if b[i].key == key:
            work = entry_work(&b[i])
            break
    if s.parallel:
        spin_unlock(lock)
    return work


cdef inline uint8_t *busy_slot(Search *s, uint64_t key) noexcept nogil:
    return &s.busy[key_mix(key) >> (64 - BUSY_BITS)]


cdef void store(Search *s, uint64_t key, uint32_t phi, uint32_t delta, uint32_t work) noexcept nogil:
    """Keep (phi, delta) of `key`: in its entry, an empty one, or the one of least work (a
    proved or disproved entry counts its work double: it is worth more).  A proof or disproof
    already in the entry stays: it is a fact, where new numbers may come from children whose
    entries were lost, or from a thread that stopped before it saw the proof."""
    cdef int64_t number = bucket_number(s, key)
    cdef Entry *b = &s.table[number * BUCKET]
    cdef uint32_t *lock = &s.locks[number & (LOCKS - 1)]
    cdef int i, victim = -1
    cdef uint64_t least = 0xFFFFFFFFFFFFFFFFULL, worth, held
    cdef uint32_t held_phi, held_delta
    if s.parallel:
        spin_lock(lock)
    for i in range(BUCKET):
        held = b[i].key
        held_phi = entry_phi(&b[i])
        held_delta = entry_delta(&b[i])
        if held == key or held == 0:
            if held == 0:
                count_add(&s.stored, 1)
            elif held_phi == 0 or held_delta == 0:
                phi = held_phi
                delta = held_delta
            victim = i
            break
        # a class is a power of two: a proved or disproved entry counts its work double
        worth = (b[i].numbers >> (2 * NUMBER_BITS)) + (1 if held_phi == 0 or held_delta == 0 else 0)
        if s.marks != NULL:
            # drawing a proof: the proved entries are the proof, and those walked are its part
            # already drawn (pushed out, they are walked again); unproved ones only guide a search
            worth += (WORK_CLASSES + 1 if held_phi == 0 or held_delta == 0 else 0) + (
                2 * (WORK_CLASSES + 1) if (s.marks[number] >> (2 * i)) & 3 else 0)
        if worth < least:
            least = worth
            victim = i
    else:
        count_add(&s.replaced, 1)
    if s.marks != NULL and b[victim].key != key and (s.marks[number] >> (2 * victim)) & 3:
        for i in range(2):
            if (s.marks[number] >> (2 * victim + i)) & 1 and seen_add(s.marks_pushed_out, b[victim].key, i) < 0:
                s.marks_lost = 1
        s.marks[number] &= ~(<uint8_t>3 << (2 * victim))
    b[victim].key = key
    b[victim].numbers = pack_numbers(phi, delta, work)
    if s.parallel:
        spin_unlock(lock)


cdef int sort_unique(uint64_t *keys, uint32_t *hint, int n) noexcept nogil:
    """Children that are the same canonical position count once (insertion sort: n is small);
    their hints (2 per child, or NULL) move with them."""
    cdef int i, j, m
    cdef uint64_t x
    cdef uint32_t hp, hd
    for i in range(1, n):
        x = keys[i]
        if hint != NULL:
            hp = hint[2 * i]
            hd = hint[2 * i + 1]
        j = i - 1
        while j >= 0 and keys[j] > x:
            keys[j + 1] = keys[j]
            if hint != NULL:
                hint[2 * j + 2] = hint[2 * j]
                hint[2 * j + 3] = hint[2 * j + 1]
            j -= 1
        keys[j + 1] = x
        if hint != NULL:
            hint[2 * j + 2] = hp
            hint[2 * j + 3] = hd
    m = 0
    for i in range(n):
        if m == 0 or keys[i] != keys[m - 1]:
            keys[m] = keys[i]
            if hint != NULL:
                hint[2 * m] = hint[2 * i]
                hint[2 * m + 1] = hint[2 * i + 1]
            m += 1
    return m


cdef int expand(Worker *w, uint64_t key, uint64_t *child, uint32_t *hint, uint32_t *phi,
                uint32_t *delta) noexcept nogil:
    """Children of `key` (distinct), or 0 with the final (phi, delta); counts the expansion.
    `hint` (2 per child, or NULL) gets the game's proof_hint of each child, where it has one."""
    cdef Search *s = w.s
    cdef uint16_t record = 0
    cdef int n
    if s.game.proof_hint == NULL:
        hint = NULL
    n = s.game.expand_key(s.game.ctx, key, child, hint, &record)
    count_add(&s.nodes, 1)
    w.expanded += 1
    w.unreported += 1
    if w.unreported >= CONTROL_FLUSH:
        ctl_add(s.ctl, w.unreported)
        w.unreported = 0
    if n < 0:
        return ERR_KEY
    if n == 0:
        if REC_OUTCOME(record) == REC_WIN:
            phi[0] = 0
            delta[0] = INF
        elif REC_OUTCOME(record) == REC_LOSS:
            phi[0] = INF
            delta[0] = 0
        else:
            return ERR_DRAW
        return 0
    return sort_unique(child, hint, n)


cdef inline void child_numbers(Search *s, uint64_t key, uint32_t *phi, uint32_t *delta) noexcept nogil:
    """(phi, delta) of a child: the table's, else the game's hint (final positions at once;
    without hints, only those), else (1, 1)."""
    if not look_up(s, key, phi, delta) and s.game.proof_hint != NULL:
        if s.game.proof_hint(s.game.ctx, key, phi, delta) == 0 and s.no_hints:
            phi[0] = 1
            delta[0] = 1


cdef inline uint32_t child_delta_threshold(const Search *s, uint32_t th_phi,
                                           uint32_t next_best) noexcept nogil:
    """The delta a child may reach before its sibling next_best is the better one: a little
    beyond it (1 + epsilon), never past this position's own threshold."""
    cdef uint64_t grown = <uint64_t>next_best + 1
    if next_best < INF and not s.no_epsilon:
        grown = max(grown, (<uint64_t>next_best * (EPSILON_DEN + EPSILON_NUM) + EPSILON_DEN - 1) // EPSILON_DEN)
    return <uint32_t>min(<uint64_t>th_phi, grown)


cdef int mid(Worker *w, uint64_t key, uint32_t th_phi, uint32_t th_delta, int depth) noexcept nogil:
    """Search `key` until its phi reaches th_phi or its delta th_delta (or it is proved); 0, or
    ERR_*: the entries stored on the way stay valid bounds, so a later call goes on.  The
    children's numbers are read once and, after each descent, again for the child searched (all
    of them in a parallel run: another thread may have proved one)."""
    cdef Search *s = w.s
    cdef uint64_t *child
    cdef uint32_t *cphi
    cdef uint32_t *cdelta
    cdef uint32_t *hint
    cdef uint32_t phi = 0, delta = 0, best_delta, second, third, th_c_phi, th_c_delta, limit
    cdef uint32_t read_phi, read_delta, most = 0
    cdef uint64_t grown
    cdef int n, i, best, alternative, pick, err = 0, open_children = 0
    cdef int64_t start = w.expanded
    if depth >= MAX_DEPTH:
        return ERR_DEPTH
    child = <uint64_t *>malloc(MAX_CHILDREN * (sizeof(uint64_t) + 4 * sizeof(uint32_t)))
    if child == NULL:
        return ERR_MEMORY
    cphi = <uint32_t *>(child + MAX_CHILDREN)
    cdelta = cphi + MAX_CHILDREN
    hint = cdelta + MAX_CHILDREN
    n = expand(w, key, child, hint, &phi, &delta)
    if s.depth_counts != NULL:
        count_add(&s.depth_counts[depth], 1)
    if n <= 0:
        if n == 0:
            store(s, key, phi, delta, 1)
        free(child)
        return n
    if s.parallel:
        byte_add(busy_slot(s, key), 1)
    for i in range(n):
        # the children's buckets are scattered over the table: ask for all of them at once,
        # so their cache misses overlap instead of following one another
        prefetch_bucket(s, child[i])
    for i in range(n):
        if not look_up(s, child[i], &cphi[i], &cdelta[i]) and s.game.proof_hint != NULL:
            cphi[i] = hint[2 * i]
            cdelta[i] = hint[2 * i + 1]
            if s.no_hints and cphi[i] != 0 and cdelta[i] != 0:
                cphi[i] = 1         # not final: no guess
                cdelta[i] = 1
    while True:
        delta = 0
        best = 0
        alternative = 0
        best_delta = INF
        second = INF
        third = INF
        most = 0
        open_children = 0
        for i in range(n):
            if s.weak:
                if cphi[i] != 0:
                    open_children += 1
                    most = max(most, cphi[i])
            else:
                delta = sat_add(delta, cphi[i])
            if cdelta[i] < best_delta:
                third = second
                second = best_delta
                alternative = best
                best_delta = cdelta[i]
                best = i
            elif cdelta[i] < second:
                third = second
                second = cdelta[i]
                alternative = i
            elif cdelta[i] < third:
                third = cdelta[i]
        if s.weak and open_children > 0:
            delta = sat_add(most, <uint32_t>(open_children - 1))
        phi = best_delta
        if phi >= th_phi or delta >= th_delta or err != 0:
            break
        if count_load(&s.nodes) >= s.budget:
            err = ERR_BUDGET
            break
        if ctl_stopped(s.ctl):
            err = ERR_STOPPED
            break
        pick = best
        limit = second
        if s.parallel:
            if flag_load(&s.finished):
                err = ERR_FINISHED
                break
            # another thread is inside the most promising child: take the next one if it is
            # nearly as promising, and leave it when it grows past the busy one counted double
            if (second < th_phi and <uint64_t>second <= 2 * <uint64_t>best_delta
                    and byte_load(busy_slot(s, child[best])) != 0
                    and byte_load(busy_slot(s, child[alternative])) == 0):
                pick = alternative
                limit = <uint32_t>min(2 * <uint64_t>best_delta + 1, <uint64_t>third)
        # the child's phi adds to this delta (weak: this delta reaches th_delta when the
        # child's phi, or a sibling's, reaches it less one for each other open child); its
        # delta is this phi
        if s.weak:
            grown = <uint64_t>th_delta - (open_children - 1) if th_delta < INF else INF
        else:
            grown = <uint64_t>th_delta + cphi[pick] - delta
        th_c_phi = INF if grown >= INF else <uint32_t>grown
        th_c_delta = child_delta_threshold(s, th_phi, limit)
        err = mid(w, child[pick], th_c_phi, th_c_delta, depth + 1)
        if s.parallel:
            for i in range(n):
                prefetch_bucket(s, child[i])
            for i in range(n):
                # a lost entry keeps the numbers read before (valid bounds)
                if look_up(s, child[i], &read_phi, &read_delta):
                    cphi[i] = read_phi
                    cdelta[i] = read_delta
                elif i == pick:
                    child_numbers(s, child[i], &cphi[i], &cdelta[i])
        else:
            child_numbers(s, child[pick], &cphi[pick], &cdelta[pick])
        if err != 0 and err != ERR_BUDGET and err != ERR_STOPPED and err != ERR_FINISHED:
            break
    store(s, key, phi, delta, work_after(work_of(s, key), <uint64_t>(w.expanded - start),
                                         key ^ (<uint64_t>w.expanded * 0x9E3779B97F4A7C15ULL)))
    if s.parallel:
        byte_fetch_sub(busy_slot(s, key), 1)
    free(child)
    return err


cdef int drive(Worker *w) noexcept nogil:
    """One thread of a run: search from the root until it is proved, the slice's budget is
    spent, or the run is stopped; the thread that proves the root tells the others."""
    cdef int err = mid(w, w.s.root, INF, INF, 0)
    if err == 0:
        flag_store(&w.s.finished, 1)
    return err


cdef int prove_key(Worker *w, uint64_t key) noexcept nogil:
    """Search `key` until it is proved (its entry may have been replaced since): 0, or ERR_*."""
    cdef uint32_t phi, delta
    cdef int err
    while True:
        look_up(w.s, key, &phi, &delta)
        if phi == 0 or delta == 0:
            return 0
        err = mid(w, key, INF, INF, 0)
        if err != 0:
            return err


cdef int losing_child(Worker *w, const uint64_t *child, int n) noexcept nogil:
    """The first child proved lost for its side to move (by the table or the game's hint), or -1."""
    cdef uint32_t phi, delta
    cdef int i
    for i in range(n):
        child_numbers(w.s, child[i], &phi, &delta)
        if delta == 0:
            return i
    return -1


cdef inline bint walked(Search *s, uint64_t key, uint8_t role) noexcept nogil:
    """Whether the walk has been at (key, role): marked in its entry, or among the marks of
    entries pushed out since."""
    cdef int64_t number = bucket_number(s, key)
    cdef Entry *b = &s.table[number * BUCKET]
    cdef int i
    for i in range(BUCKET):
        if b[i].key == key:
            if (s.marks[number] >> (2 * i + role)) & 1:
                return True
            break
    return s.marks_pushed_out.used > 0 and seen_has(s.marks_pushed_out, key, role)


cdef inline void mark_walked(Search *s, uint64_t key, uint8_t role) noexcept nogil:
    """The walk has been at (key, role): marked in its entry, stored (as the role says: won or
    lost for its side to move) where it has none.  What is stored so is borne out by the walk
    below it, or the walk fails."""
    cdef int64_t number = bucket_number(s, key)
    cdef Entry *b = &s.table[number * BUCKET]
    cdef int i
    for i in range(BUCKET):
        if b[i].key == key:
            break
    else:
        if role == 1:
            store(s, key, 0, INF, 1)
        else:
            store(s, key, INF, 0, 1)
        for i in range(BUCKET):
            if b[i].key == key:
                break
    s.marks[number] |= <uint8_t>1 << (2 * i + role)


cdef struct Pairs:
    uint64_t *keys
    uint64_t *chosen
    int64_t n
    int64_t room


cdef int extract_walk(Worker *w, Todo *todo, Pairs *out, uint64_t *child, bint bounded) noexcept nogil:
    """Walk the proof in the table from the positions in `todo` (the root, pushed by the
    caller): every child of the loser's positions, and at the winner's the first child proved
    lost (searching again where entries were replaced), kept in `out`; the positions walked are
    marked in the table (`marks`).  `bounded`: `out` never grows; when it is full the walk
    returns ERR_OUT_FULL, and goes on where it stopped when called again with `out` emptied.
    0, or ERR_*."""
    cdef uint64_t key
    cdef uint64_t *grown
    cdef uint32_t phi, delta
    cdef uint8_t role
    cdef int n, i, chosen, err
    while todo.n > 0:
        if bounded and out.n == out.room:
            return ERR_OUT_FULL
        if w.s.marks_lost:
            return ERR_MEMORY
        todo.n -= 1
        key = todo.keys[todo.n]
        role = todo.roles[todo.n]
        if walked(w.s, key, role):
            continue
        if ctl_stopped(w.s.ctl):
            return ERR_STOPPED
        n = expand(w, key, child, NULL, &phi, &delta)
        w.s.walked += 1
        if w.s.budget != INT64_MAX:
            w.s.budget += 1         # the walk's own expansions are no search: --max-nodes bounds the search
        if n < 0:
            return n
        if n == 0:
            # the end of a line (the game's end, an endgame table's position) is checked at each
            # visit and never marked: a proof's leaves outnumber its inner positions, and they
            # need no entries of their own
            if (phi == 0) != (role == 1):
                return ERR_LINE_NOT_WON
            continue
        if role == 0:
            mark_walked(w.s, key, 0)
            for i in range(n):
                if push(todo, child[i], 1) != 0:
                    return ERR_MEMORY
            continue
        chosen = losing_child(w, child, n)
        if chosen < 0:
            err = prove_key(w, key)
            if err != 0:
                return err
            chosen = losing_child(w, child, n)
        i = 0
        while chosen < 0 and i < n:
            err = prove_key(w, child[i])
            if err != 0:
                return err
            look_up(w.s, child[i], &phi, &delta)
            if delta == 0:
                chosen = i
            i += 1
        if chosen < 0:
            return ERR_NO_WINNING_MOVE
        mark_walked(w.s, key, 1)
        if out.n == out.room:
            grown = <uint64_t *>realloc(out.keys, 2 * out.room * sizeof(uint64_t))
            if grown == NULL:
                return ERR_MEMORY
            out.keys = grown
            grown = <uint64_t *>realloc(out.chosen, 2 * out.room * sizeof(uint64_t))
            if grown == NULL:
                return ERR_MEMORY
            out.chosen = grown
            out.room *= 2
        out.keys[out.n] = key
        out.chosen[out.n] = child[chosen]
        out.n += 1
        if push(todo, child[chosen], 0) != 0:
            return ERR_MEMORY
    return 0


cdef class Prover:
    """A df-pn search over the packed positions of a game kernel capsule (win/loss, no draws),
    with a transposition table of `entries` entries (ENTRY_BYTES each)."""
    cdef Search s
    cdef object _capsule
    cdef readonly uint64_t root
    cdef readonly bint running      # a call is searching (a checkpoint then would be torn)

    def __cinit__(self, capsule, uint64_t root, int64_t entries):
        if not PyCapsule_IsValid(capsule, SOWSOLVE_KERNEL_CAPSULE):
            raise TypeError("expected a game kernel capsule")
        self.s.game = <const GameKernel *>PyCapsule_GetPointer(capsule, SOWSOLVE_KERNEL_CAPSULE)
        if self.s.game.expand_key == NULL:
            raise ValueError("this game's kernel does not offer packed positions")
        if self.s.game.max_children > MAX_CHILDREN:
            raise ValueError(f"{self.s.game.max_children} children per position is more than {MAX_CHILDREN}")
        if root == 0:
            raise ValueError("0 is not a packed position")
        if entries < BUCKET:
            raise ValueError(f"a table of {entries} entries is too small (at least {BUCKET})")
        self._capsule = capsule
        self.root = root
        self.s.root = root
        self.s.buckets = entries // BUCKET
        self.s.table = <Entry *>big_table_alloc(self.s.buckets * BUCKET * sizeof(Entry))
        self.s.locks = <uint32_t *>calloc(LOCKS, sizeof(uint32_t))
        if self.s.table == NULL or self.s.locks == NULL:
            raise MemoryError(f"out of memory for a table of {entries:,} entries")

    def __dealloc__(self):
        big_table_free(self.s.table, self.s.buckets * BUCKET * sizeof(Entry))
        free(self.s.locks)
        free(self.s.busy)
        free(self.s.depth_counts)

    @property
    def techniques(self) -> dict:
        """Which of the search's switchable techniques are on (see Search): hints, epsilon,
        weak."""
        return {"hints": not self.s.no_hints, "epsilon": not self.s.no_epsilon,
                "weak": bool(self.s.weak)}

    def set_techniques(self, hints: bool = True, epsilon: bool = True, weak: bool = False):
        """Switch the techniques (before a search starts: a table searched one way is
        searched on the same way)."""
        if self.running or self.s.nodes:
            raise RuntimeError("techniques are chosen before the search starts")
        self.s.no_hints = not hints
        self.s.no_epsilon = not epsilon
        self.s.weak = weak

    def release(self):
        """Free the search's table now (its proof drawn, the sort and the write of a large
        proof need the memory); every call that reads the table then raises RuntimeError."""
        if self.running:
            raise RuntimeError("the search is running")
        big_table_free(self.s.table, self.s.buckets * BUCKET * sizeof(Entry))
        self.s.table = NULL

    def _usable(self):
        if self.s.table == NULL:
            raise RuntimeError("the search's table has been released")

    def count_depths(self):
        """From now on, count the positions the search expands at each depth (for a bench of
        where a search spends its work: `depths()`)."""
        if self.s.depth_counts == NULL:
            self.s.depth_counts = <int64_t *>calloc(MAX_DEPTH, sizeof(int64_t))
            if self.s.depth_counts == NULL:
                raise MemoryError("out of memory for the depth counts")

    def depths(self):
        """Positions expanded at each depth (0: the root) since count_depths(), trailing zeros
        cut; None when they are not counted."""
        if self.s.depth_counts == NULL:
            return None
        counts = np.array(<int64_t[:MAX_DEPTH]>self.s.depth_counts, dtype=np.int64)
        used = np.flatnonzero(counts)
        return counts[:used[used.size - 1] + 1] if used.size else counts[:0]

    cdef Worker worker(self):
        cdef Worker w
        w.s = &self.s
        w.expanded = 0
        w.unreported = 0
        w.err = 0
        return w

    @property
    def nodes(self):
        """Positions expanded so far (all slices)."""
        return self.s.nodes

    @property
    def entries(self):
        return self.s.buckets * BUCKET

    @property
    def stored(self):
        """Entries in use."""
        return self.s.stored

    @property
    def walked(self):
        """Positions the extractions' walks expanded (part of `nodes`; the rest of what an
        extraction adds to `nodes` is searching again where entries were lost)."""
        return self.s.walked

    @property
    def replaced(self):
        """Entries pushed out of a full bucket so far."""
        return self.s.replaced

    def numbers(self, uint64_t key):
        """(phi, delta) of `key` as the search reads a child: the table's, else the game's
        hint (a final position: 0 and INF), else (1, 1)."""
        cdef uint32_t phi, delta
        self._usable()
        child_numbers(&self.s, key, &phi, &delta)
        return phi, delta

    def final_value(self, uint64_t key):
        """'win' or 'loss' for the side to move of a final position (the game's own record,
        never the table's), None for a position with moves."""
        cdef uint64_t child[MAX_CHILDREN]
        cdef uint32_t phi, delta
        cdef Worker w = self.worker()
        cdef int n = expand(&w, key, child, NULL, &phi, &delta)
        if n < 0:
            raise ValueError(ERRORS.get(n, f"{key:#x} cannot be expanded"))
        if n > 0:
            return None
        return "win" if phi == 0 else "loss"

    def value(self):
        """'win' or 'loss' for the side to move at the root once proved, else None."""
        cdef uint32_t phi, delta
        self._usable()
        look_up(&self.s, self.root, &phi, &delta)
        return "win" if phi == 0 else "loss" if delta == 0 else None

    def aim(self, uint64_t key):
        """Search from `key` from now on, keeping the table: a worker of a distributed proof
        takes job after job in one table, so what one job proved the next need not prove."""
        if key == 0:
            raise ValueError("0 is not a packed position")
        if self.running:
            raise RuntimeError("the search is running")
        self.root = key
        self.s.root = key

    def run(self, int64_t budget, int64_t[::1] control=None, int threads=1):
        """Search on from the root for at most `budget` more expansions (all threads together,
        give or take one per thread): True once the root is proved.  KeyboardInterrupt when
        `control` asks to stop (the table stays valid).  With threads > 1 the threads share the
        table; the run's node count then depends on their timing."""
        cdef Control spare
        cdef int err
        if threads < 1:
            raise ValueError(f"{threads} threads: at least 1")
        self._usable()
        self.s.ctl = control_of(control, &spare)
        self.s.budget = self.s.nodes + budget
        self.running = True
        try:
            err = self._run(threads)
        finally:
            self.running = False
        if err == ERR_STOPPED:
            raise KeyboardInterrupt
        if err < 0 and err != ERR_BUDGET:
            raise RuntimeError(ERRORS.get(err, f"the proof search failed ({err})"))
        return self.value() is not None

    cdef int _run(self, int threads) except? -100:
        cdef int err = 0, t, e
        cdef Worker *workers
        cdef Worker w
        if threads == 1:
            w = self.worker()
            with nogil:
                err = mid(&w, self.root, INF, INF, 0)
            ctl_add(self.s.ctl, w.unreported)
        else:
            if self.s.busy == NULL:
                self.s.busy = <uint8_t *>calloc(1 << BUSY_BITS, 1)
            workers = <Worker *>calloc(threads, sizeof(Worker))
            if self.s.busy == NULL or workers == NULL:
                free(workers)
                raise MemoryError("out of memory for the threads of the search")
            self.s.parallel = 1
            self.s.finished = 0
            with nogil, parallel(num_threads=threads):
                t = threadid()
                workers[t].s = &self.s
                workers[t].expanded = 0
                workers[t].unreported = 0
                workers[t].err = drive(&workers[t])
                ctl_add(self.s.ctl, workers[t].unreported)
            self.s.parallel = 0
            for t in range(threads):
                e = workers[t].err
                if e == ERR_STOPPED or (e < 0 and e != ERR_BUDGET and e != ERR_FINISHED and err >= 0):
                    err = e
            free(workers)
        return err

    def prove(self, uint64_t key, int64_t[::1] control=None):
        """Search `key` until it is proved (its entry may have been replaced since): 'win' or
        'loss' for its side to move."""
        cdef Control spare
        cdef int err = 0
        cdef uint32_t phi, delta
        cdef Worker w = self.worker()
        self._usable()
        self.s.ctl = control_of(control, &spare)
        self.s.budget = 0x7FFFFFFFFFFFFFFF
        self.running = True
        with nogil:
            err = prove_key(&w, key)
        self.running = False
        ctl_add(self.s.ctl, w.unreported)
        if err == ERR_STOPPED:
            raise KeyboardInterrupt
        if err < 0:
            raise RuntimeError(ERRORS.get(err, f"the proof search failed ({err})"))
        look_up(&self.s, key, &phi, &delta)
        return "win" if phi == 0 else "loss"

    def extract(self, uint64_t root, bint winner_to_move, int64_t[::1] control=None,
                int64_t budget=-1, spill=None, int64_t chunk=EXTRACT_CHUNK):
        """The proof in the table from `root` (its side to move the winner when winner_to_move):
        (positions of the winner's, the child chosen at each), unsorted; None when searching
        again where entries were replaced takes more than `budget` expansions (-1: no limit).
        With `spill`, the pairs are gathered `chunk` at a time and each full chunk is
        handed to spill(keys, chosen) (copies), so that a proof of hundreds of millions of
        positions need not sit in memory beside the search's table; the rest is returned.
        ValueError when the table's values do not bear out (a damaged or forged checkpoint),
        KeyboardInterrupt when `control` asks to stop."""
        cdef Control spare
        cdef Seen pushed_out
        cdef Todo todo
        cdef Pairs out
        cdef uint64_t *child = <uint64_t *>malloc(MAX_CHILDREN * sizeof(uint64_t))
        cdef int err = 0
        cdef bint bounded = spill is not None
        if chunk < 1 or self.s.table == NULL:
            free(child)
            self._usable()
            raise ValueError(f"an extraction's chunk holds at least one pair, not {chunk}")
        cdef Worker w = self.worker()
        self.s.ctl = control_of(control, &spare)
        self.s.budget = 0x7FFFFFFFFFFFFFFF if budget < 0 else self.s.nodes + budget
        out.n = 0
        out.room = chunk if bounded else 1 << 12
        out.keys = <uint64_t *>malloc(out.room * sizeof(uint64_t))
        out.chosen = <uint64_t *>malloc(out.room * sizeof(uint64_t))
        opened = (seen_open(&pushed_out), todo_open(&todo))      # both, so that both can be closed
        # the walk's marks: a byte a bucket (a 64th of the table's memory)
        self.s.marks = <uint8_t *>big_table_alloc(self.s.buckets)
        self.s.marks_pushed_out = &pushed_out
        self.s.marks_lost = 0
        try:
            if opened != (0, 0) or self.s.marks == NULL or child == NULL or out.keys == NULL or out.chosen == NULL:
                raise MemoryError("out of memory for the proof")
            if push(&todo, root, winner_to_move) != 0:
                raise MemoryError("out of memory for the proof")
            while True:
                self.running = True
                with nogil:
                    err = extract_walk(&w, &todo, &out, child, bounded)
                self.running = False
                if err != ERR_OUT_FULL:
                    break
                spill(np.array(<uint64_t[:out.n]>out.keys, dtype=np.uint64),
                      np.array(<uint64_t[:out.n]>out.chosen, dtype=np.uint64))
                out.n = 0
            ctl_add(self.s.ctl, w.unreported)
            if err == ERR_BUDGET:
                return None
            if err == ERR_STOPPED:
                raise KeyboardInterrupt
            if err == ERR_LINE_NOT_WON or err == ERR_NO_WINNING_MOVE:
                raise ValueError(ERRORS[err])
            if err < 0:
                raise RuntimeError(ERRORS.get(err, f"the proof search failed ({err})"))
            keys = np.array(<uint64_t[:out.n]>out.keys if out.n else [], dtype=np.uint64)
            chosen = np.array(<uint64_t[:out.n]>out.chosen if out.n else [], dtype=np.uint64)
        finally:
            self.running = False
            big_table_free(self.s.marks, self.s.buckets)
            self.s.marks = NULL
            self.s.marks_pushed_out = NULL
            seen_close(&pushed_out)
            todo_close(&todo)
            free(out.keys)
            free(out.chosen)
            free(child)
        return keys, chosen

    def children(self, uint64_t key):
        """Distinct children of a packed position as the search sees them (empty: final)."""
        cdef uint64_t child[MAX_CHILDREN]
        cdef uint32_t phi, delta
        cdef Worker w = self.worker()
        cdef int n = expand(&w, key, child, NULL, &phi, &delta)
        if n < 0:
            raise ValueError(ERRORS.get(n, f"{key:#x} cannot be expanded"))
        return [child[i] for i in range(n)]

    def child_hints(self, uint64_t key):
        """[(child, phi, delta)]: the distinct children with the hints that came with them from
        the game's expansion (the game's proof_hint of each, where it offers one, else 1, 1)."""
        cdef uint64_t child[MAX_CHILDREN]
        cdef uint32_t hint[2 * MAX_CHILDREN]
        cdef uint32_t phi, delta
        cdef int i, n
        for i in range(2 * MAX_CHILDREN):
            hint[i] = 1
        cdef Worker w = self.worker()
        n = expand(&w, key, child, hint, &phi, &delta)
        if n < 0:
            raise ValueError(ERRORS.get(n, f"{key:#x} cannot be expanded"))
        return [(child[i], hint[2 * i], hint[2 * i + 1]) for i in range(n)]

    @property
    def slots(self):
        """Entries the table has room for (used or not): `used_entries` ranges over them."""
        return self.s.buckets * BUCKET

    def used_entries(self, int64_t start, int64_t stop, column=None):
        """Copies of the entries in use among slots [start, stop): (keys, phi, delta, work), or
        the one array `column` names ('key', 'phi', 'delta', 'work'), so that a checkpoint is
        written a slice of the table and a column at a time, in little memory."""
        cdef int64_t total = self.s.buckets * BUCKET
        self._usable()
        start = max(0, min(start, total))
        stop = max(start, min(stop, total))
        fields = [("key", "<u8"), ("phi", "<u4"), ("delta", "<u4"), ("work", "<u4")]
        if column is not None and column not in dict(fields):
            raise ValueError(f"no column {column!r}")
        if stop == start:
            if column is not None:
                return np.zeros(0, dtype=dict(fields)[column])
            return tuple([np.zeros(0, dtype=kind) for _, kind in fields])
        table = np.frombuffer(<char[:(stop - start) * sizeof(Entry)]><char *>(self.s.table + start),
                              dtype=np.uint8)
        view = table.view(np.dtype([("key", "<u8"), ("numbers", "<u8")]))
        keys = view["key"]
        used = keys != 0
        numbers = view["numbers"][used]
        # the columns computed in this scope, no closure: a nested function here would sit in a
        # reference cycle with its scope, and each slice's arrays would wait for the cyclic
        # garbage collector (gigabytes over the slices of a checkpoint of a large table)
        columns = []
        for name, _ in fields:
            if column is not None and name != column:
                continue
            if name == "key":
                columns.append(keys[used])
            elif name == "phi":
                columns.append((numbers & np.uint64(NUMBER_MASK)).astype("<u4"))
            elif name == "delta":
                columns.append(((numbers >> np.uint64(NUMBER_BITS)) & np.uint64(NUMBER_MASK)).astype("<u4"))
            else:
                cls = (numbers >> np.uint64(2 * NUMBER_BITS)).astype(np.int64)
                columns.append(np.where(cls > 0, np.left_shift(1, np.maximum(cls - 1, 0)), 0).astype("<u4"))
        return columns[0] if column is not None else tuple(columns)

    def state(self):
        """The table's entries in use (keys, phi, delta, work) and the positions expanded."""
        return self.used_entries(0, self.s.buckets * BUCKET) + (self.s.nodes,)

    def restore(self, keys, phi, delta, work, int64_t nodes):
        """Refill the table from (a slice of) a checkpoint, and set the positions expanded:
        every entry is checked here (equal lengths; keys nonzero; numbers a search writes)."""
        cdef const cnp.uint64_t[::1] k = np.ascontiguousarray(keys, dtype=np.uint64)
        cdef const cnp.uint32_t[::1] p = np.ascontiguousarray(phi, dtype=np.uint32)
        cdef const cnp.uint32_t[::1] d = np.ascontiguousarray(delta, dtype=np.uint32)
        cdef const cnp.uint32_t[::1] w = np.ascontiguousarray(work, dtype=np.uint32)
        cdef int64_t i, n = k.shape[0]
        self._usable()
        if p.shape[0] != n or d.shape[0] != n or w.shape[0] != n:
            raise ValueError("a checkpoint's arrays differ in length")
        for i in range(n):
            # a search writes (0, INF), (INF, 0), or two numbers from 1 to INF - 1
            if k[i] == 0 or not ((p[i] == 0 and d[i] == INF) or (p[i] == INF and d[i] == 0)
                                 or (1 <= p[i] < INF and 1 <= d[i] < INF)):
                raise ValueError("a checkpoint holds an entry no search writes")
        with nogil:
            for i in range(n):
                store(&self.s, k[i], p[i], d[i], w[i])
        self.s.nodes = nodes


INFINITY = INF
