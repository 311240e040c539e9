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

A search runs in slices of a node budget: between slices the driver may report progress, write
a checkpoint (the table's entries) or stop; the next slice goes on from the table.  Once the
root is proved, `proof()` extracts the proof from the table (searching again where an entry was
replaced): for every position of the winner's on it, the child chosen.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int64_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

import numpy as np
cimport numpy as cnp

from kernel_api cimport (CONTROL_FLUSH, PROOF_INF, REC_LOSS, REC_OUTCOME, REC_WIN, Control, GameKernel,
                         SOWSOLVE_KERNEL_CAPSULE, control_of, ctl_add, ctl_stopped, key_mix)

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

cdef enum:
    INF = 0x3FFFFFFF          # proof and disproof numbers saturate here (PROOF_INF, checked below)
    # 1 + EPSILON_NUM / EPSILON_DEN for the child's delta threshold (Pawlewicz and Lew: 1/4)
    EPSILON_NUM = 1
    EPSILON_DEN = 4

if INF != PROOF_INF:
    raise ImportError("the proof search's infinity differs from sowsolve_kernel.h's PROOF_INF")

#: bytes of one table entry (the --memory budget divided by this gives the entries)
ENTRY_BYTES = 24

ERRORS = {
    ERR_KEY: "the game refused one of its own packed positions",
    ERR_DRAW: "a position is a draw; the prover handles games without draws only",
    ERR_DEPTH: f"the search went deeper than {MAX_DEPTH} plies",
    ERR_MEMORY: "out of memory",
}


cdef struct Entry:
    uint64_t key            # 0: empty (no packed position is 0)
    uint32_t phi
    uint32_t delta
    uint32_t work           # positions expanded below it (saturating): what replacement keeps
    uint32_t spare


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
    int64_t buckets
    int64_t nodes           # positions expanded, all slices
    int64_t budget          # the slice stops when nodes reach it
    int64_t replaced        # entries pushed out of a full bucket
    int64_t stored          # entries in use
    Control *ctl
    int64_t flushed


cdef inline Entry *bucket_of(Search *s, uint64_t key) noexcept nogil:
    return &s.table[<int64_t>(key_mix(key) % <uint64_t>s.buckets) * BUCKET]


cdef inline bint look_up(Search *s, uint64_t key, uint32_t *phi, uint32_t *delta) noexcept nogil:
    """(phi, delta) the table holds for `key`, else (1, 1); whether it holds them."""
    cdef Entry *b = bucket_of(s, key)
    cdef int i
    for i in range(BUCKET):
        if b[i].key == key:
            phi[0] = b[i].phi
            delta[0] = b[i].delta
            return True
    phi[0] = 1
    delta[0] = 1
    return False


cdef inline uint32_t work_of(Search *s, uint64_t key) noexcept nogil:
    cdef Entry *b = bucket_of(s, key)
    cdef int i
    for i in range(BUCKET):
        if b[i].key == key:
            return b[i].work
    return 0


cdef void store(Search *s, uint64_t key, uint32_t phi, uint32_t delta, uint32_t work) noexcept nogil:
    """Keep (phi, delta) of `key`: in its entry, an empty one, or the one of least work (a
    proved or disproved entry counts its work double: it is worth more)."""
    cdef Entry *b = bucket_of(s, key)
    cdef int i, victim = -1
    cdef uint64_t least = 0xFFFFFFFFFFFFFFFFULL, worth
    for i in range(BUCKET):
        if b[i].key == key or b[i].key == 0:
            if b[i].key == 0:
                s.stored += 1
            victim = i
            break
        worth = <uint64_t>b[i].work * (2 if b[i].phi == 0 or b[i].delta == 0 else 1)
        if worth < least:
            least = worth
            victim = i
    else:
        s.replaced += 1
    b[victim].key = key
    b[victim].phi = phi
    b[victim].delta = delta
    b[victim].work = work


cdef int sort_unique(uint64_t *keys, int n) noexcept nogil:
    """Children that are the same canonical position count once (insertion sort: n is small)."""
    cdef int i, j, m
    cdef uint64_t x
    for i in range(1, n):
        x = keys[i]
        j = i - 1
        while j >= 0 and keys[j] > x:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = x
    m = 0
    for i in range(n):
        if m == 0 or keys[i] != keys[m - 1]:
            keys[m] = keys[i]
            m += 1
    return m


cdef int expand(Search *s, uint64_t key, uint64_t *child, uint32_t *phi, uint32_t *delta) noexcept nogil:
    """Children of `key` (distinct), or 0 with the final (phi, delta); counts the expansion."""
    cdef uint16_t record = 0
    cdef int n = s.game.expand_key(s.game.ctx, key, child, &record)
    s.nodes += 1
    if s.nodes - s.flushed >= CONTROL_FLUSH:
        ctl_add(s.ctl, s.nodes - s.flushed)
        s.flushed = s.nodes
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
    return sort_unique(child, n)


cdef inline void child_numbers(Search *s, uint64_t key, uint32_t *phi, uint32_t *delta) noexcept nogil:
    """(phi, delta) of a child: the table's, else the game's hint (final positions at once),
    else (1, 1)."""
    if not look_up(s, key, phi, delta) and s.game.proof_hint != NULL:
        s.game.proof_hint(s.game.ctx, key, phi, delta)


cdef int mid(Search *s, uint64_t key, uint32_t th_phi, uint32_t th_delta, int depth) noexcept nogil:
    """Search `key` until its phi reaches th_phi or its delta th_delta (or it is proved); 0, or
    ERR_*: the entries stored on the way stay valid bounds, so a later call goes on.  The
    children's numbers are read once and, after each descent, again for the child searched."""
    cdef uint64_t *child
    cdef uint32_t *cphi
    cdef uint32_t *cdelta
    cdef uint32_t phi = 0, delta = 0, best_delta, second, th_c_phi, th_c_delta
    cdef uint64_t grown
    cdef int n, i, best, err = 0
    cdef int64_t start = s.nodes
    if depth >= MAX_DEPTH:
        return ERR_DEPTH
    child = <uint64_t *>malloc(MAX_CHILDREN * (sizeof(uint64_t) + 2 * sizeof(uint32_t)))
    if child == NULL:
        return ERR_MEMORY
    cphi = <uint32_t *>(child + MAX_CHILDREN)
    cdelta = cphi + MAX_CHILDREN
    n = expand(s, key, child, &phi, &delta)
    if n <= 0:
        if n == 0:
            store(s, key, phi, delta, 1)
        free(child)
        return n
    for i in range(n):
        child_numbers(s, child[i], &cphi[i], &cdelta[i])
    while True:
        delta = 0
        best = 0
        best_delta = INF
        second = INF
        for i in range(n):
            delta = sat_add(delta, cphi[i])
            if cdelta[i] < best_delta:
                second = best_delta
                best_delta = cdelta[i]
                best = i
            elif cdelta[i] < second:
                second = cdelta[i]
        phi = best_delta
        if phi >= th_phi or delta >= th_delta or err != 0:
            break
        if s.nodes >= s.budget:
            err = ERR_BUDGET
            break
        if ctl_stopped(s.ctl):
            err = ERR_STOPPED
            break
        # the child's phi adds to this delta; its delta is this phi
        grown = <uint64_t>th_delta + cphi[best] - delta
        th_c_phi = INF if grown >= INF else <uint32_t>grown
        grown = <uint64_t>second + 1
        if second < INF:
            grown = max(grown, (<uint64_t>second * (EPSILON_DEN + EPSILON_NUM) + EPSILON_DEN - 1) // EPSILON_DEN)
        th_c_delta = <uint32_t>min(<uint64_t>th_phi, grown)
        err = mid(s, child[best], th_c_phi, th_c_delta, depth + 1)
        child_numbers(s, child[best], &cphi[best], &cdelta[best])
        if err != 0 and err != ERR_BUDGET and err != ERR_STOPPED:
            break
    grown = <uint64_t>work_of(s, key) + (s.nodes - start)
    store(s, key, phi, delta, <uint32_t>(0xFFFFFFFFU if grown > 0xFFFFFFFFU else grown))
    free(child)
    return err


cdef class Prover:
    """A df-pn search over the packed positions of a game kernel capsule (win/loss, no draws),
    with a transposition table of `entries` entries (ENTRY_BYTES each)."""
    cdef Search s
    cdef object _capsule
    cdef readonly uint64_t root

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
        self.s.buckets = entries // BUCKET
        self.s.table = <Entry *>calloc(self.s.buckets * BUCKET, sizeof(Entry))
        if self.s.table == NULL:
            raise MemoryError(f"out of memory for a table of {entries:,} entries")

    def __dealloc__(self):
        free(self.s.table)

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
    def replaced(self):
        """Entries pushed out of a full bucket so far."""
        return self.s.replaced

    def numbers(self, uint64_t key):
        """(phi, delta) of `key` as the search reads a child: the table's, else the game's
        hint (a final position: 0 and INF), else (1, 1)."""
        cdef uint32_t phi, delta
        child_numbers(&self.s, key, &phi, &delta)
        return phi, delta

    def final_value(self, uint64_t key):
        """'win' or 'loss' for the side to move of a final position (the game's own record,
        never the table's), None for a position with moves."""
        cdef uint64_t child[MAX_CHILDREN]
        cdef uint32_t phi, delta
        cdef int n = expand(&self.s, key, child, &phi, &delta)
        if n < 0:
            raise ValueError(ERRORS.get(n, f"{key:#x} cannot be expanded"))
        if n > 0:
            return None
        return "win" if phi == 0 else "loss"

    def value(self):
        """'win' or 'loss' for the side to move at the root once proved, else None."""
        cdef uint32_t phi, delta
        look_up(&self.s, self.root, &phi, &delta)
        return "win" if phi == 0 else "loss" if delta == 0 else None

    def run(self, int64_t budget, int64_t[::1] control=None):
        """Search on from the root for at most `budget` more expansions: True once the root is
        proved.  KeyboardInterrupt when `control` asks to stop (the table stays valid)."""
        cdef Control spare
        cdef int err
        self.s.ctl = control_of(control, &spare)
        self.s.flushed = self.s.nodes
        self.s.budget = self.s.nodes + budget
        with nogil:
            err = mid(&self.s, self.root, INF, INF, 0)
        ctl_add(self.s.ctl, self.s.nodes - self.s.flushed)
        self.s.flushed = self.s.nodes
        if err == ERR_STOPPED:
            raise KeyboardInterrupt
        if err < 0 and err != ERR_BUDGET:
            raise RuntimeError(ERRORS.get(err, f"the proof search failed ({err})"))
        return self.value() is not None

    def prove(self, uint64_t key, int64_t[::1] control=None):
        """Search `key` until it is proved (its entry may have been replaced since): 'win' or
        'loss' for its side to move."""
        cdef Control spare
        cdef int err = 0
        cdef uint32_t phi, delta
        self.s.ctl = control_of(control, &spare)
        self.s.flushed = self.s.nodes
        self.s.budget = 0x7FFFFFFFFFFFFFFF
        with nogil:
            while True:
                look_up(&self.s, key, &phi, &delta)
                if phi == 0 or delta == 0:
                    break
                err = mid(&self.s, key, INF, INF, 0)
                if err != 0:
                    break
        ctl_add(self.s.ctl, self.s.nodes - self.s.flushed)
        self.s.flushed = self.s.nodes
        if err == ERR_STOPPED:
            raise KeyboardInterrupt
        if err < 0:
            raise RuntimeError(ERRORS.get(err, f"the proof search failed ({err})"))
        return "win" if phi == 0 else "loss"

    def children(self, uint64_t key):
        """Distinct children of a packed position as the search sees them (empty: final)."""
        cdef uint64_t child[MAX_CHILDREN]
        cdef uint32_t phi, delta
        cdef int n = expand(&self.s, key, child, &phi, &delta)
        if n < 0:
            raise ValueError(ERRORS.get(n, f"{key:#x} cannot be expanded"))
        return [child[i] for i in range(n)]

    def state(self):
        """The table's entries in use (keys, phi, delta, work): a checkpoint."""
        cdef int64_t i, total = self.s.buckets * BUCKET
        table = np.frombuffer(<char[:total * sizeof(Entry)]><char *>self.s.table, dtype=np.uint8)
        view = table.view(np.dtype([("key", "<u8"), ("phi", "<u4"), ("delta", "<u4"),
                                    ("work", "<u4"), ("spare", "<u4")]))
        used = view[view["key"] != 0]
        return (used["key"].copy(), used["phi"].copy(), used["delta"].copy(), used["work"].copy(),
                self.s.nodes)

    def restore(self, keys, phi, delta, work, int64_t nodes):
        """Refill the table from a checkpoint (every array checked by the caller: equal
        lengths; keys nonzero; numbers at most INF)."""
        cdef cnp.uint64_t[::1] k = np.ascontiguousarray(keys, dtype=np.uint64)
        cdef cnp.uint32_t[::1] p = np.ascontiguousarray(phi, dtype=np.uint32)
        cdef cnp.uint32_t[::1] d = np.ascontiguousarray(delta, dtype=np.uint32)
        cdef cnp.uint32_t[::1] w = np.ascontiguousarray(work, dtype=np.uint32)
        cdef int64_t i, n = k.shape[0]
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
