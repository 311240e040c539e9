# cython: language_level=3
"""Score solvers for tiers with cycles: the exact value of every position of one tier.

Two implementations of the same rules.  `solve_tier` (the compact solver, below) is what solves
tables: moves and un-moves come from the game's kernel (a ScoreTier), 5 bytes per position, every
thread.  `solve_graph` takes an explicit move graph and runs on one thread: the reference the
self-check and the tests compare `solve_tier` with on small tiers.  The rules, as solve_graph
implements them:

Values are a player's margin.  Inside a tier, moves either stay (cycles are possible) or leave it
through an exit of known value (a capture into a solved tier); play that stays forever is worth
a fixed `endless value`.  Seen from P (the maximiser), a position's value is the greatest
threshold t > endless value at which P can force an exit worth at least t (P's attractor), else
the least t < endless value at which p can force an exit worth at most t (p's attractor), else
the endless value itself.  The attractors are built once per side, threshold by threshold from
the most extreme value inwards, so each edge is handled a bounded number of times.

Remoteness: the forcing side hurries and the other delays, among the moves that keep the value
(the attractors are filled in Dijkstra order of plies to the exit plus the plies after it; a
position of the side that does not force counts only its moves worth exactly its threshold).  A
position from which no capture can be reached at all is final (0).  A position worth exactly
the value of endless play is scored like endless play: it stores "no end" unless every
move that keeps its value ends, and then the slowest (delay_to_the_end).
Records: the margin layout of sowsolve_kernel.h (MARGIN_MAKE), which Python reads from
MARGIN_LAYOUT; a remoteness of MARGIN_REM_LONG plies or more goes to the tier's long table
(uint64 entries index << MARGIN_LONG_SHIFT | plies, sorted), which both solvers return beside
the records.  Inside the sweeps distances are plies (uint16), DIST_ENDLESS meaning "no end".
"""
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t, uint64_t
from libc.stdlib cimport free, realloc

import numpy as np
cimport numpy as cnp

from kernel_api cimport (CONTROL_FLUSH, DIST_CAP, DIST_ENDLESS, MARGIN_BIAS, MARGIN_LONG_SHIFT,
                         MARGIN_MAKE, MARGIN_MAX_REMOTENESS, MARGIN_MAX_VALUE,
                         MARGIN_REM_ENDLESS, MARGIN_REM_LONG, MARGIN_REM_SHIFT,
                         MARGIN_VALUE_MASK, Control, control_of, ctl_add, ctl_stopped,
                         margin_rem_field)

cnp.import_array()


class RecordLimit(RuntimeError):
    """A value of the tier does not fit a margin record (a remoteness past the longest)."""

    def __init__(self, message):
        super().__init__(message)

#: The margin record layout (sowsolve_kernel.h): a record is
#: (remoteness << rem_shift) | (margin + bias), the margin read back as (record & value_mask) -
#: bias; remoteness `endless` means the value comes from play that never ends, `long` that the
#: tier's long table holds it (entries index << long_shift | plies, plies from `long` to
#: max_remoteness).  0 is "not solved yet".
MARGIN_LAYOUT = {"bias": MARGIN_BIAS, "rem_shift": MARGIN_REM_SHIFT,
                 "value_mask": MARGIN_VALUE_MASK, "endless": MARGIN_REM_ENDLESS,
                 "long": MARGIN_REM_LONG, "long_shift": MARGIN_LONG_SHIFT,
                 "max_remoteness": MARGIN_MAX_REMOTENESS}


def long_table(dist, finite):
    """The long table of a tier: (index << long_shift) | plies of every position whose finite
    remoteness does not fit the record's 9 bits, by index (a distance of DIST_ENDLESS is no
    end, even where `finite` holds: an attractor can force a capture that never ends)."""
    at = np.flatnonzero(finite & (dist >= MARGIN_REM_LONG) & (dist < DIST_ENDLESS)).astype(np.uint64)
    return (at << np.uint64(MARGIN_LONG_SHIFT)) | dist[at.astype(np.int64)].astype(np.uint64)


cdef struct HeapItem:
    int dist
    int64_t node


cdef struct Heap:
    HeapItem *items
    int64_t size
    int64_t capacity


cdef int heap_push(Heap *h, int dist, int64_t node) noexcept nogil:
    cdef HeapItem *grown
    cdef int64_t i, parent
    cdef HeapItem item
    if h.size == h.capacity:
        h.capacity = h.capacity * 2 + 16
        grown = <HeapItem *>realloc(h.items, h.capacity * sizeof(HeapItem))
        if grown == NULL:
            return -1
        h.items = grown
    item.dist = dist
    item.node = node
    i = h.size
    h.size += 1
    while i > 0:
        parent = (i - 1) >> 1
        if h.items[parent].dist <= dist:
            break
        h.items[i] = h.items[parent]
        i = parent
    h.items[i] = item
    return 0


cdef HeapItem heap_pop(Heap *h) noexcept nogil:
    cdef HeapItem top = h.items[0], last
    cdef int64_t i = 0, child
    h.size -= 1
    last = h.items[h.size]
    while True:
        child = 2 * i + 1
        if child >= h.size:
            break
        if child + 1 < h.size and h.items[child + 1].dist < h.items[child].dist:
            child += 1
        if h.items[child].dist >= last.dist:
            break
        h.items[i] = h.items[child]
        i = child
    if h.size > 0:
        h.items[i] = last
    return top


cdef inline int longer(int d) noexcept nogil:
    """One ply more; 'no end' stays 'no end'; a finite remoteness stops at DIST_CAP, which the
    solvers refuse rather than store a clipped value."""
    if d >= DIST_ENDLESS:
        return DIST_ENDLESS
    return d + 1 if d + 1 < DIST_CAP else DIST_CAP


cdef inline bint tick(int64_t *settled, Control *ctl) noexcept nogil:
    """Count one settled position; every CONTROL_FLUSH of them, report them and tell whether
    the solve was asked to stop."""
    settled[0] += 1
    if settled[0] < CONTROL_FLUSH:
        return False
    ctl_add(ctl, settled[0])
    settled[0] = 0
    return ctl_stopped(ctl)


cdef struct Graph:
    int64_t n
    int width
    int bound
    const uint8_t *side_of
    const uint8_t *deg
    const int16_t *exit_u
    const uint16_t *exit_rem
    const int64_t *rev_off
    const int32_t *rev
    const int32_t *same            # same-tier child of each move slot (-1 none, -2 an exit)
    const int64_t *bucket_off      # exits by value for P, from -bound to +bound
    const int64_t *bucket
    int16_t *value                 # results, shared by both sweeps (they never meet)
    uint16_t *dist
    uint8_t *counter               # scratch
    uint16_t *acc
    int16_t *acc_at                # the threshold at which acc was last raised
    uint16_t *tent


cdef inline int wait_for_all(Heap *heap, int64_t node, int d, uint8_t *counter,
                             uint16_t *acc) noexcept nogil:
    """One more move of a delaying position is settled, `d` plies from the end: it joins once
    all its counted moves are, at the slowest of them."""
    if d > acc[node]:
        acc[node] = d
    counter[node] -= 1
    if counter[node] == 0:
        return heap_push(heap, acc[node], node)
    return 0


cdef inline int offer(Heap *heap, int64_t node, int d, int forcing, int t, const uint8_t *side_of,
                      uint8_t *counter, uint16_t *acc, int16_t *acc_at, uint16_t *tent) noexcept nogil:
    """A successor of `node` worth the threshold t, `d` plies from the end: the forcing side
    takes the quickest such move; the other side joins once every move is worth t or more to
    the forcing side, and then delays among the moves worth exactly t (its best ones): moves
    that joined at an earlier, more extreme threshold are worse for it and do not count."""
    if side_of[node] == forcing:
        if tent[node] == DIST_ENDLESS or d < tent[node]:
            tent[node] = d
            return heap_push(heap, d, node)
        return 0
    if acc_at[node] != t:
        acc_at[node] = t
        acc[node] = 0
    return wait_for_all(heap, node, d, counter, acc)


cdef int attract(const Graph *g, int forcing, int lo, int hi, int step, uint8_t *joined,
                 Control *ctl) noexcept nogil:
    """Thresholds t = lo, lo+step, ..., hi: positions from which `forcing` (0 = P, 1 = p) can
    force an exit worth t or better for it join with value t; remoteness: the forcing side
    hurries, the other delays (Dijkstra order over the attractor).  -1: out of memory; -2:
    stopped through `ctl` (which counts the positions that joined)."""
    cdef Heap heap
    cdef HeapItem item
    cdef int64_t e, i, y, k, t_index, joins = 0
    cdef int t, d
    cdef const uint8_t *side_of = g.side_of
    cdef uint8_t *counter = g.counter
    cdef uint16_t *acc = g.acc
    cdef int16_t *acc_at = g.acc_at
    cdef uint16_t *tent = g.tent
    heap.items = NULL
    heap.size = 0
    heap.capacity = 0
    for i in range(g.n):
        counter[i] = g.deg[i]
        acc[i] = 0
        acc_at[i] = -32768
        tent[i] = DIST_ENDLESS
    t = lo
    while (step > 0 and t <= hi) or (step < 0 and t >= hi):
        t_index = t + g.bound
        for k in range(g.bucket_off[t_index], g.bucket_off[t_index + 1]):
            e = g.bucket[k]
            i = e // g.width
            if joined[i]:
                continue
            if offer(&heap, i, longer(g.exit_rem[e]), forcing, t, side_of, counter, acc, acc_at, tent) < 0:
                free(heap.items)
                return -1
        while heap.size > 0:
            item = heap_pop(&heap)
            i = item.node
            if joined[i]:
                continue
            joined[i] = 1
            g.value[i] = t
            g.dist[i] = item.dist
            if tick(&joins, ctl):
                free(heap.items)
                return -2
            for k in range(g.rev_off[i], g.rev_off[i + 1]):
                y = g.rev[k]
                if joined[y]:
                    continue
                if offer(&heap, y, longer(item.dist), forcing, t, side_of, counter, acc, acc_at, tent) < 0:
                    free(heap.items)
                    return -1
        t += step
    free(heap.items)
    ctl_add(ctl, joins)
    return 0




cdef int delay_to_the_end(const Graph *g, int endless_value, const uint8_t *decided,
                          const uint8_t *reach, uint8_t *settled, Control *ctl) noexcept nogil:
    """Remoteness of the positions worth exactly the value of endless play (neither attractor
    took them).  Ending changes nothing for either side there, and the rules score endless play
    like the end, so play goes on while it can: a position ends only if every move keeping that
    value ends, and then as late as the slowest of them (remoteness: the largest, plus one).
    Final positions (no capture reachable) are 0 plies from the end; an exit worth that value
    is its own remoteness plus one.  Positions with a value-keeping move that never ends keep
    dist 'no end'.  Like the non-forcing side of an attractor: counters and Dijkstra order."""
    cdef Heap heap
    cdef HeapItem item
    cdef int64_t i, e, j, k, y, t_index, settles = 0
    cdef int d
    cdef uint8_t *counter = g.counter
    cdef uint16_t *acc = g.acc
    heap.items = NULL
    heap.size = 0
    heap.capacity = 0
    for i in range(g.n):
        settled[i] = 0
        counter[i] = 0
        acc[i] = 0
        if decided[i]:
            continue
        if not reach[i]:
            if heap_push(&heap, 0, i) < 0:
                free(heap.items)
                return -1
            continue
        for j in range(g.deg[i]):
            e = i * g.width + j
            y = g.same[e]
            if (y >= 0 and not decided[y]) or (y == -2 and g.exit_u[e] == endless_value):
                counter[i] += 1
    t_index = endless_value + g.bound
    for k in range(g.bucket_off[t_index], g.bucket_off[t_index + 1]):
        e = g.bucket[k]
        i = e // g.width
        d = longer(g.exit_rem[e])
        if decided[i] or not reach[i] or d >= DIST_ENDLESS:
            continue            # an exit that never ends keeps its position from ending
        if wait_for_all(&heap, i, d, counter, acc) < 0:
            free(heap.items)
            return -1
    while heap.size > 0:
        item = heap_pop(&heap)
        i = item.node
        if settled[i]:
            continue
        settled[i] = 1
        g.dist[i] = item.dist
        if tick(&settles, ctl):
            free(heap.items)
            return -2
        d = longer(item.dist)
        if d >= DIST_ENDLESS:
            continue
        for k in range(g.rev_off[i], g.rev_off[i + 1]):
            y = g.rev[k]
            if settled[y] or decided[y] or not reach[y]:
                continue
            if wait_for_all(&heap, y, d, counter, acc) < 0:
                free(heap.items)
                return -1
    free(heap.items)
    ctl_add(ctl, settles)
    return 0


def solve_graph(dict graph, int64_t[::1] control=None):
    """Records (uint16) of a tier from its move graph (exit remoteness in plies, DIST_ENDLESS
    for no end), its long table, and (final positions, endless ones).  With a `control` (solver/kernels.py): stops when asked (KeyboardInterrupt) and counts the
    positions the sweeps settle."""
    cdef Control spare
    cdef Control *ctl = control_of(control, &spare)
    side_of = np.ascontiguousarray(graph["side"], dtype=np.uint8)
    deg = np.ascontiguousarray(graph["moves"], dtype=np.uint8)
    same = np.ascontiguousarray(graph["same"], dtype=np.int32)
    exit_u = np.ascontiguousarray(graph["exit_value"], dtype=np.int16)
    exit_rem = np.ascontiguousarray(graph["exit_remoteness"], dtype=np.uint16)
    has_capture = np.ascontiguousarray(graph["captures"], dtype=np.uint8)
    cdef int width = graph["width"], seeds = graph["bound"], infinite_value = graph["endless_value"]
    cdef int64_t n = side_of.shape[0], i, e, y, q_head, q_tail
    if same.shape[0] != n * width or exit_u.shape[0] != n * width or deg.shape[0] != n:
        raise ValueError("inconsistent tier graph")
    if not -seeds <= infinite_value <= seeds:
        raise ValueError("the endless value lies outside the bound")
    if n and int(deg.max()) > width:
        raise ValueError("a position of the tier graph has more moves than its width")
    if np.any((same == -2) & ((exit_u < -seeds) | (exit_u > seeds))):
        raise ValueError("an exit value lies outside the bound")
    # reverse same-tier edges
    rev_off = np.zeros(n + 1, dtype=np.int64)
    valid = same >= 0
    np.add.at(rev_off, same[valid].astype(np.int64) + 1, 1)
    rev_off = np.cumsum(rev_off)
    order = np.argsort(same[valid], kind="stable")
    rev = (np.nonzero(valid)[0][order] // width).astype(np.int32)
    # captures reachable by any sequence of moves: backwards from the positions that capture
    reach = has_capture.copy()
    queue = np.nonzero(reach)[0].astype(np.int64)
    cdef uint8_t[::1] reach_v = reach
    cdef uint8_t[::1] side_v = side_of, deg_v = deg
    cdef int64_t[::1] roff_v = rev_off
    cdef int32_t[::1] rev_v = rev
    queue_buffer = np.empty(n, dtype=np.int64)
    queue_buffer[:queue.shape[0]] = queue
    cdef int64_t[::1] queue_v = queue_buffer
    q_head, q_tail = 0, queue.shape[0]
    with nogil:
        while q_head < q_tail:
            i = queue_v[q_head]
            q_head += 1
            for e in range(roff_v[i], roff_v[i + 1]):
                y = rev_v[e]
                if not reach_v[y]:
                    reach_v[y] = 1
                    queue_v[q_tail] = y
                    q_tail += 1
    # exits grouped by their value for P, from -seeds to +seeds
    is_exit = same == -2
    exit_slots = np.nonzero(is_exit)[0].astype(np.int64)
    slot_values = exit_u[exit_slots].astype(np.int64) + seeds
    bucket_order = np.argsort(slot_values, kind="stable")
    bucket = exit_slots[bucket_order]
    bucket_off = np.zeros(2 * seeds + 2, dtype=np.int64)
    np.add.at(bucket_off, slot_values + 1, 1)
    bucket_off = np.cumsum(bucket_off)
    joined_p = np.zeros(n, dtype=np.uint8)
    joined_q = np.zeros(n, dtype=np.uint8)
    value = np.zeros(n, dtype=np.int16)
    dist = np.zeros(n, dtype=np.uint16)
    counter = np.empty(n, dtype=np.uint8)
    acc = np.empty(n, dtype=np.uint16)
    acc_at = np.empty(n, dtype=np.int16)
    tent = np.empty(n, dtype=np.uint16)
    cdef Graph graph_c
    graph_c.n, graph_c.width, graph_c.bound = n, width, seeds
    graph_c.side_of = &side_v[0]
    graph_c.deg = &deg_v[0]
    graph_c.exit_u = <const int16_t *>cnp.PyArray_DATA(exit_u)
    graph_c.exit_rem = <const uint16_t *>cnp.PyArray_DATA(exit_rem)
    graph_c.rev_off = <const int64_t *>cnp.PyArray_DATA(rev_off)
    graph_c.rev = <const int32_t *>cnp.PyArray_DATA(rev)
    graph_c.same = <const int32_t *>cnp.PyArray_DATA(same)
    graph_c.bucket_off = <const int64_t *>cnp.PyArray_DATA(bucket_off)
    graph_c.bucket = <const int64_t *>cnp.PyArray_DATA(bucket)
    graph_c.value = <int16_t *>cnp.PyArray_DATA(value)
    graph_c.dist = <uint16_t *>cnp.PyArray_DATA(dist)
    graph_c.counter = <uint8_t *>cnp.PyArray_DATA(counter)
    graph_c.acc = <uint16_t *>cnp.PyArray_DATA(acc)
    graph_c.acc_at = <int16_t *>cnp.PyArray_DATA(acc_at)
    graph_c.tent = <uint16_t *>cnp.PyArray_DATA(tent)
    cdef uint8_t *joined_p_c = <uint8_t *>cnp.PyArray_DATA(joined_p)
    cdef uint8_t *joined_q_c = <uint8_t *>cnp.PyArray_DATA(joined_q)
    cdef int ok1, ok2 = 0
    with nogil:
        ok1 = attract(&graph_c, 0, seeds, infinite_value + 1, -1, joined_p_c, ctl)
        if ok1 == 0:
            ok2 = attract(&graph_c, 1, -seeds, infinite_value - 1, 1, joined_q_c, ctl)
    if ok1 == -2 or ok2 == -2:
        raise KeyboardInterrupt
    if ok1 < 0 or ok2 < 0:
        raise MemoryError("out of memory in the attractor queue")
    if np.any(joined_p & joined_q):
        raise RuntimeError("a position is forced both above and below the value of endless play")
    decided_u8 = (joined_p | joined_q).astype(np.uint8)
    settled = np.zeros(n, dtype=np.uint8)
    cdef const uint8_t *decided_c = <const uint8_t *>cnp.PyArray_DATA(decided_u8)
    cdef uint8_t *settled_c = <uint8_t *>cnp.PyArray_DATA(settled)
    with nogil:
        ok1 = delay_to_the_end(&graph_c, infinite_value, decided_c, &reach_v[0], settled_c, ctl)
    if ok1 == -2:
        raise KeyboardInterrupt
    if ok1 < 0:
        raise MemoryError("out of memory in the attractor queue")
    decided = decided_u8.astype(bool)
    finite = decided | settled.astype(bool)
    if np.any(finite & (dist == DIST_CAP)):
        raise RecordLimit(f"a remoteness passed {MARGIN_MAX_REMOTENESS} plies, the most a score "
                          f"tier holds")
    u = np.where(decided, value, infinite_value).astype(np.int64)
    margin = np.ascontiguousarray(np.where(side_of == 0, u, -u), dtype=np.int64)
    if n and int(np.abs(margin).max()) > MARGIN_MAX_VALUE:
        raise RuntimeError(f"a margin exceeds {MARGIN_MAX_VALUE}, the most a score record holds")
    rem = np.ascontiguousarray(np.where(finite, dist, DIST_ENDLESS), dtype=np.int64)
    records = np.empty(n, dtype=np.uint16)
    cdef uint16_t[::1] records_v = records
    cdef const int64_t[::1] margin_v = margin, rem_v = rem
    with nogil:
        for i in range(n):
            records_v[i] = MARGIN_MAKE(<int>margin_v[i], margin_rem_field(<int>rem_v[i]))
    finals = int(np.count_nonzero(~reach.astype(bool)))
    endless = int(np.count_nonzero(~decided & reach.astype(bool)))
    return records, long_table(dist, finite), finals, endless



# --- the compact solver: no move graph, moves and un-moves from the game's kernel -------------
#
# Per position three arrays: the record (2 bytes; before a position's value is known it holds
# the summary of its exits for the sweep under way), a flags byte (a counter of moves not yet
# settled and four bits) and a distance word (uint16: the forcing side's best offer, or the
# delaying side's slowest counted move).  Distances are processed in order through per-thread
# lists of indices (uint32), one per distance, so every level runs on all threads; edges have
# length one, and a level's work only adds to later levels (or, for 'no end', to its own level,
# which is then run again; a line reaching DIST_CAP is an error).  The rules are the ones of
# solve_graph above; solve_tier gives the same records and long tables (tests compare them).

from libc.stdint cimport uint32_t
from libc.stdlib cimport calloc, malloc
from libc.string cimport memcpy, memset
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from cython.parallel cimport parallel, prange, threadid

from kernel_api cimport (MARGIN_REMOTENESS, MARGIN_VALUE, SCORE_EXIT, SCORE_ERR_BEYOND,
                         SCORE_ERR_LONG, SCORE_ERR_PREDS, SCORE_ERR_UNSOLVED,
                         SOWSOLVE_SCORE_TIER_CAPSULE, ScoreTier, byte_fetch_and, byte_fetch_or,
                         byte_fetch_sub, byte_load, byte_store, first_error, prefetch_for_write,
                         word_load, word_lower, word_raise)

cdef enum:
    F_COUNT = 0x0F        # moves not yet settled (to the sweep's rule)
    F_JOINED = 0x10       # value known from an attractor (record final)
    F_EXIT = 0x20         # the position has a capture (a move leaving the tier)
    F_OFFERED = 0x40      # attractor: a forcing position already queued
    F_REACH = 0x40        # delay phase (the same bit): a capture can be reached from here
    F_SETTLED = 0x80      # delay: remoteness known (record final)
    LEVELS = 65536        # distances 0 .. DIST_ENDLESS (checked at import)
    ERR_MEMORY = -10
    ERR_STOPPED = -11
    ERR_REMOTENESS = -12
    ERR_KERNEL = -13
    CHUNK = 1024
    SEED_BLOCK = 1 << 14  # positions per piece of seed_threshold's scan
    PREFETCH_AHEAD = 8    # run_levels asks for the lines of the position this far ahead
    SMALL_TIER = 1 << 16

cdef uint64_t ALL_JOINED = 0x1010101010101010     # F_JOINED in each of 8 flag bytes



if LEVELS != DIST_ENDLESS + 1:
    raise ImportError("the score solver's distance lists do not match the margin record layout")


cdef struct Vec:
    uint32_t *items
    int64_t size
    int64_t cap


cdef inline int vec_push(Vec *v, uint32_t x) noexcept nogil:
    cdef uint32_t *grown
    if v.size == v.cap:
        grown = <uint32_t *>realloc(v.items, (v.cap * 2 + 256) * sizeof(uint32_t))
        if grown == NULL:
            return -1
        v.items = grown
        v.cap = v.cap * 2 + 256
    v.items[v.size] = x
    v.size += 1
    return 0


cdef struct Sweep:
    const ScoreTier *tier
    uint16_t *rec
    uint8_t *flags
    uint16_t *dist
    Vec *lists            # threads x LEVELS
    Vec *longs            # threads: (index, plies) of the long records each thread settled
    int threads
    int forcing           # 0: the maximiser forces, 1: the minimiser
    int t                 # the threshold under way (value for the maximiser)
    int endless           # delay phase: the value of endless play
    int delay             # 1 in the delay phase
    int *error
    Control *ctl
    int64_t *counted      # threads x 8 (padding): positions settled, not yet reported; the
                          # highest distance queued (word 1)
    int64_t *worth        # threads x (2 bound + 1): positions whose capture summary is worth v
    int64_t lo            # the block of the tier this sweep holds: positions lo <= i < hi (the
    int64_t hi            # whole tier in one process; rec, flags and dist are indexed by i)
    Vec *outbox           # threads: (position, distance) offers to positions of other blocks
    const uint8_t *joined_bits   # the whole tier's F_JOINED bits (delay phase of a block)


# One thread's room for the moves of a position, and the game's scratch area for `moves`.
cdef struct MoveBuffers:
    int64_t *child
    int16_t *value
    uint16_t *rem
    void *scratch


cdef MoveBuffers buffers_open(const ScoreTier *tier) noexcept nogil:
    """A thread's buffers (assigned inside a parallel block, so private to each thread); check
    them with buffers_ready."""
    cdef MoveBuffers b
    b.child = <int64_t *>malloc(tier.width * sizeof(int64_t) + 8)
    b.value = <int16_t *>malloc(tier.width * sizeof(int16_t) + 8)
    b.rem = <uint16_t *>malloc(tier.width * sizeof(uint16_t) + 8)
    b.scratch = calloc(1, tier.scratch_bytes + 8)
    return b


cdef inline bint buffers_ready(const MoveBuffers *b) noexcept nogil:
    return b.child != NULL and b.value != NULL and b.rem != NULL and b.scratch != NULL


cdef void buffers_close(MoveBuffers *b) noexcept nogil:
    free(b.child)
    free(b.value)
    free(b.rem)
    free(b.scratch)


cdef inline int side_of(const ScoreTier *tier, int64_t i) noexcept nogil:
    return <int>((i // tier.side_stride) & 1)


cdef inline void fail(Sweep *s, int code) noexcept nogil:
    first_error(s.error, code)


cdef inline void count_one(Sweep *s, int tid) noexcept nogil:
    cdef int64_t *c = &s.counted[tid * 8]
    c[0] += 1
    if c[0] >= CONTROL_FLUSH:
        ctl_add(s.ctl, c[0])
        c[0] = 0
        if ctl_stopped(s.ctl):
            fail(s, ERR_STOPPED)


cdef inline void push(Sweep *s, int tid, int d, int64_t i) noexcept nogil:
    if vec_push(&s.lists[tid * LEVELS + d], <uint32_t>i) < 0:
        fail(s, ERR_MEMORY)
    if d > s.counted[tid * 8 + 1]:
        s.counted[tid * 8 + 1] = d


cdef inline int64_t highest_queued(Sweep *s) noexcept nogil:
    cdef int64_t top = -1
    cdef int tid
    for tid in range(s.threads):
        if s.counted[tid * 8 + 1] > top:
            top = s.counted[tid * 8 + 1]
    return top


cdef inline bint worse(int forcing, int value, int t) noexcept nogil:
    """Whether an exit worth `value` is worse than the threshold for the forcing side."""
    return value < t if forcing == 0 else value > t


cdef inline uint16_t final_record(const ScoreTier *tier, int64_t i, int value, int d) noexcept nogil:
    return MARGIN_MAKE(value if side_of(tier, i) == 0 else -value, d)


cdef inline bint settle(Sweep *s, int tid, int64_t i, int d, uint8_t bit, int value) noexcept nogil:
    """Position i gets its record (`value` for the maximiser, d plies to the end) and `bit`:
    False when another thread or an earlier entry of the lists gave it one already."""
    if byte_load(&s.flags[i]) & bit or byte_fetch_or(&s.flags[i], bit) & bit:
        return False                # (a plain read first: entries queued twice are common)
    if d == DIST_CAP:
        fail(s, ERR_REMOTENESS)
    s.rec[i] = final_record(s.tier, i, value, margin_rem_field(d))
    if MARGIN_REM_LONG <= d < DIST_ENDLESS:
        if vec_push(&s.longs[tid], <uint32_t>i) < 0 or vec_push(&s.longs[tid], <uint32_t>d) < 0:
            fail(s, ERR_MEMORY)
    count_one(s, tid)
    return True


cdef inline bint handed_out(Sweep *s, int tid, int64_t x, int nd) noexcept nogil:
    """Whether position x lies outside this sweep's block: its offer then goes into the outbox,
    for the block's owner to take in (`ScorePart.receive`) before the next level."""
    if s.lo <= x < s.hi:
        return False
    if vec_push(&s.outbox[tid], <uint32_t>x) < 0 or vec_push(&s.outbox[tid], <uint32_t>nd) < 0:
        fail(s, ERR_MEMORY)
    return True


cdef void settle_attractor(Sweep *s, int tid, int64_t i, int d, int64_t *preds) noexcept nogil:
    """Position i joins the attractor at the threshold, d plies from the end; its
    predecessors learn of it."""
    cdef const ScoreTier *tier = s.tier
    cdef int n, k, nd
    cdef int64_t x
    if not settle(s, tid, i, d, F_JOINED, s.t):
        return
    nd = longer(d)
    n = tier.unmoves(tier.ctx, i, preds, tier.max_preds)
    if not checked_preds(s, n, preds):
        return
    for k in range(n):
        if s.lo <= preds[k] < s.hi:
            prefetch_for_write(&s.flags[preds[k]])
            prefetch_for_write(&s.dist[preds[k]])
    for k in range(n):
        x = preds[k]
        if not handed_out(s, tid, x, nd):
            offer_attractor(s, tid, x, nd)


cdef void offer_attractor(Sweep *s, int tid, int64_t x, int nd) noexcept nogil:
    """A successor of position x (of this block) joined the attractor, nd - 1 plies from the
    end."""
    cdef uint8_t old
    if byte_load(&s.flags[x]) & F_JOINED:
        return
    if side_of(s.tier, x) == s.forcing:
        # the forcing side takes its quickest move worth the threshold
        # (an atomic read-modify-write waits for memory and holds the loads behind it: a
        # plain read first spares it where the flag is already set)
        if word_lower(&s.dist[x], <uint16_t>nd):
            if not (byte_load(&s.flags[x]) & F_OFFERED):
                byte_fetch_or(&s.flags[x], F_OFFERED)
            push(s, tid, nd, x)
        elif not (byte_load(&s.flags[x]) & F_OFFERED) and not (byte_fetch_or(&s.flags[x], F_OFFERED) & F_OFFERED):
            push(s, tid, nd, x)
        return
    # the other side joins once every move is worth the threshold or more, and then
    # delays among those worth exactly it (the ones joining now, in order of distance)
    word_raise(&s.dist[x], <uint16_t>nd)
    old = byte_fetch_sub(&s.flags[x], 1)
    if (old & F_COUNT) != 1:
        return
    if (old & F_EXIT) and worse(s.forcing, MARGIN_VALUE(s.rec[x]), s.t):
        return                      # a capture worse for the forcing side: a later threshold
    push(s, tid, word_load(&s.dist[x]), x)


cdef void settle_delay(Sweep *s, int tid, int64_t i, int d, int64_t *preds) noexcept nogil:
    """Position i, worth the value of endless play, ends d plies from here (delay_to_the_end)."""
    cdef const ScoreTier *tier = s.tier
    cdef int n, k, nd
    cdef int64_t x
    if not settle(s, tid, i, d, F_SETTLED, s.endless):
        return
    nd = longer(d)
    if nd >= DIST_ENDLESS:
        return
    n = tier.unmoves(tier.ctx, i, preds, tier.max_preds)
    if not checked_preds(s, n, preds):
        return
    for k in range(n):
        if s.lo <= preds[k] < s.hi:
            prefetch_for_write(&s.flags[preds[k]])
            prefetch_for_write(&s.dist[preds[k]])
    for k in range(n):
        x = preds[k]
        if not handed_out(s, tid, x, nd):
            offer_delay(s, tid, x, nd)


cdef void offer_delay(Sweep *s, int tid, int64_t x, int nd) noexcept nogil:
    """A move of position x (of this block) that keeps the value of endless play ends nd - 1
    plies after it: x ends once all of them do, at the slowest."""
    cdef uint8_t old, fx
    fx = byte_load(&s.flags[x])
    if (fx & (F_JOINED | F_SETTLED)) or not (fx & F_REACH):
        return
    word_raise(&s.dist[x], <uint16_t>nd)
    old = byte_fetch_sub(&s.flags[x], 1)
    if (old & F_COUNT) == 1:
        push(s, tid, word_load(&s.dist[x]), x)


cdef void offer_reach(Sweep *s, int tid, int64_t x) noexcept nogil:
    """A capture can be reached from a successor of position x (of this block)."""
    if byte_load(&s.flags[x]) & F_JOINED:
        return
    if not (byte_fetch_or(&s.flags[x], F_REACH) & F_REACH):
        push(s, tid, 0, x)


cdef int64_t gather(Sweep *s, int d, uint32_t **out) noexcept nogil:
    """The positions queued at distance d by every thread, in one array (the lists emptied)."""
    cdef int64_t total = 0, at = 0
    cdef int tid
    cdef Vec *v
    for tid in range(s.threads):
        total += s.lists[tid * LEVELS + d].size
    out[0] = NULL
    if total == 0:
        return 0
    out[0] = <uint32_t *>malloc(total * sizeof(uint32_t))
    if out[0] == NULL:
        fail(s, ERR_MEMORY)
        return 0
    for tid in range(s.threads):
        v = &s.lists[tid * LEVELS + d]
        if v.size:
            memcpy(out[0] + at, v.items, v.size * sizeof(uint32_t))
            at += v.size
        free(v.items)
        v.items = NULL
        v.size = 0
        v.cap = 0
    return total


cdef void one_level(Sweep *s, int d) noexcept nogil:
    """Settle everything queued at distance d (again, while settling queues more at d)."""
    cdef int tid
    cdef int64_t total, k
    cdef uint32_t *cur
    cdef int64_t *preds
    while s.error[0] == 0:
        total = gather(s, d, &cur)
        if total == 0:
            break
        with parallel(num_threads=s.threads):
            tid = threadid()
            preds = <int64_t *>malloc(s.tier.max_preds * sizeof(int64_t))
            if preds == NULL:
                fail(s, ERR_MEMORY)
            for k in prange(total, schedule="dynamic", chunksize=CHUNK):
                if s.error[0] != 0 or preds == NULL:
                    continue
                if k + PREFETCH_AHEAD < total:
                    prefetch_for_write(&s.flags[cur[k + PREFETCH_AHEAD]])
                    prefetch_for_write(&s.rec[cur[k + PREFETCH_AHEAD]])
                if s.delay:
                    settle_delay(s, tid, cur[k], d, preds)
                else:
                    settle_attractor(s, tid, cur[k], d, preds)
            free(preds)
        free(cur)


cdef void run_levels(Sweep *s, int first) noexcept nogil:
    """Settle everything queued, level by level from distance `first`."""
    cdef int d, tid
    d = first
    while d <= highest_queued(s):   # the 65536 levels are mostly empty: only up to the top one
        one_level(s, d)
        d += 1
    for tid in range(s.threads):    # every list is empty again
        s.counted[tid * 8 + 1] = 0


cdef bint checked_moves(Sweep *s, int n, const int64_t *child, const int16_t *value,
                        const uint16_t *rem) noexcept nogil:
    """What a game kernel returns is checked before it indexes anything here."""
    cdef const ScoreTier *tier = s.tier
    cdef int j
    if n < 0:
        fail(s, n)
        return False
    if n > tier.width:
        fail(s, ERR_KERNEL)
        return False
    for j in range(n):
        if child[j] == SCORE_EXIT:
            if value[j] < -tier.bound or value[j] > tier.bound or (
                    rem[j] > MARGIN_MAX_REMOTENESS and rem[j] != DIST_ENDLESS):
                fail(s, ERR_KERNEL)
                return False
        elif child[j] < 0 or child[j] >= tier.n:
            fail(s, ERR_KERNEL)
            return False
    return True


cdef inline bint checked_preds(Sweep *s, int n, const int64_t *preds) noexcept nogil:
    cdef int k
    if n < 0:
        fail(s, n)
        return False
    for k in range(n):
        if preds[k] < 0 or preds[k] >= s.tier.n:
            fail(s, ERR_KERNEL)
            return False
    return True


cdef int capture_summary(Sweep *s, int64_t i, MoveBuffers *b, int *best, int *bd) noexcept nogil:
    """Position i's same-tier moves (-1 after an error) and its captures' summary for the sweep
    under way: the forcing side's best capture, quickest, or the other side's worst, slowest
    (*best 0x7FFF where it has no capture)."""
    cdef const ScoreTier *tier = s.tier
    cdef int n, j, same = 0, v, dd
    cdef int side
    cdef const int64_t *child = b.child
    cdef const int16_t *value = b.value
    cdef const uint16_t *rem = b.rem
    n = tier.moves(tier.ctx, b.scratch, i, b.child, b.value, b.rem)
    if not checked_moves(s, n, child, value, rem):
        return -1
    side = side_of(tier, i)
    best[0] = 0x7FFF
    bd[0] = 0
    for j in range(n):
        if child[j] != SCORE_EXIT:
            same += 1
            continue
        v = value[j]
        dd = longer(rem[j])
        if best[0] == 0x7FFF:
            best[0] = v
            bd[0] = dd
        elif side == s.forcing:      # the best capture for the forcing side, quickest
            if (v > best[0] if s.forcing == 0 else v < best[0]) or (v == best[0] and dd < bd[0]):
                best[0] = v
                bd[0] = dd
        else:                        # the worst for it, slowest
            if (v < best[0] if s.forcing == 0 else v > best[0]) or (v == best[0] and dd > bd[0]):
                best[0] = v
                bd[0] = dd
    return same


cdef void summarise_one(Sweep *s, int tid, int64_t i, MoveBuffers *b) noexcept nogil:
    """The counter and the capture summary of position i, in its flags and record (a distance
    past the record's 9 bits kept as MARGIN_REM_LONG: seed_threshold asks the moves again)."""
    cdef const ScoreTier *tier = s.tier
    cdef int same, best, bd
    same = capture_summary(s, i, b, &best, &bd)
    if same < 0:
        return
    s.flags[i] = same | (F_EXIT if best != 0x7FFF else 0)
    s.rec[i] = MARGIN_MAKE(best, margin_rem_field(bd)) if best != 0x7FFF else 0
    if best != 0x7FFF:
        s.worth[tid * (2 * tier.bound + 1) + best + tier.bound] += 1
    s.dist[i] = DIST_ENDLESS if side_of(tier, i) == s.forcing else 0


cdef void forward_sweep(Sweep *s, bint delay) noexcept nogil:
    """Every position not yet joined, on every thread, through the game's moves: its capture
    summary before an attractor (summarise_one), or its moves that keep the value of endless
    play before the delay phase (delay_one)."""
    cdef const ScoreTier *tier = s.tier
    cdef int64_t i
    cdef MoveBuffers b
    cdef bint ready
    cdef int tid
    with parallel(num_threads=s.threads):
        tid = threadid()
        b = buffers_open(tier)
        ready = buffers_ready(&b)
        if not ready:
            fail(s, ERR_MEMORY)
        for i in prange(s.lo, s.hi, schedule="dynamic", chunksize=CHUNK * 16):
            if s.error[0] != 0 or not ready:
                continue
            if not delay:
                count_one(s, tid)
            if s.flags[i] & F_JOINED:
                continue
            if delay:
                delay_one(s, tid, i, &b)
            else:
                summarise_one(s, tid, i, &b)
        buffers_close(&b)


cdef void summarise(Sweep *s) noexcept nogil:
    """Before an attractor: per position not yet joined, its same-tier moves (the counter) and
    its captures' summary in the record: the forcing side's best capture, the other side's worst
    (value for the maximiser), each with its quickest / slowest distance."""
    memset(s.worth, 0, s.threads * (2 * s.tier.bound + 1) * sizeof(int64_t))
    forward_sweep(s, False)


cdef void seed_threshold(Sweep *s) noexcept nogil:
    """A new threshold: captures worth exactly it start the attractor; the delaying side's
    distances restart from its captures worth it.  A scan of the whole tier per threshold, so
    it is kept lean: blocks of positions whose sides follow from the first one (no division
    per position), and a distance word written only when it changes."""
    cdef const ScoreTier *tier = s.tier
    cdef int64_t i, block, lo, hi, blocks = (s.hi - s.lo + SEED_BLOCK - 1) // SEED_BLOCK
    cdef int64_t stride = tier.side_stride, k, j
    cdef uint64_t group
    cdef int tid, v, d, best, side, here
    cdef uint8_t f
    cdef uint16_t r
    cdef MoveBuffers b
    cdef bint ready
    with parallel(num_threads=s.threads):
        tid = threadid()
        b = buffers_open(tier)
        ready = buffers_ready(&b)
        if not ready:
            fail(s, ERR_MEMORY)
        for block in prange(blocks, schedule="static"):
            if not ready:
                continue
            lo = s.lo + block * SEED_BLOCK
            hi = lo + SEED_BLOCK if lo + SEED_BLOCK < s.hi else s.hi
            side = <int>((lo // stride) & 1)
            k = lo % stride                 # where lo lies in its run of one side's positions
            i = lo
            while i < hi:
                if (i - lo) % 8 == 0 and i + 8 <= hi:
                    group = eight_flags(&s.flags[i])
                    if (group & ALL_JOINED) == ALL_JOINED:     # late thresholds: most are
                        i = i + 8
                        k = k + 8
                        while k >= stride:
                            k = k - stride
                            side = 1 - side
                        continue
                j = i                       # this position; i, k and side move on to the next
                here = side
                i = i + 1
                k = k + 1
                if k == stride:
                    k = 0
                    side = 1 - side
                f = s.flags[j]
                if f & F_JOINED:
                    continue
                if not (f & F_EXIT):        # no capture: nothing to seed, and its record
                    if here != s.forcing and s.dist[j] != 0:    # need not be read
                        s.dist[j] = 0
                    continue
                r = s.rec[j]
                v = MARGIN_VALUE(r)
                if v != s.t:
                    if here != s.forcing and s.dist[j] != 0:
                        s.dist[j] = 0
                    continue
                d = MARGIN_REMOTENESS(r)
                best = 0                    # assigned in the loop: private to each thread
                if d == MARGIN_REM_ENDLESS:
                    d = DIST_ENDLESS
                elif d == MARGIN_REM_LONG:
                    # rare: the summary's distance did not fit the record; the moves give it
                    # again
                    if capture_summary(s, j, &b, &best, &d) < 0:
                        continue
                s.dist[j] = <uint16_t>d
                if here == s.forcing:
                    s.flags[j] = f | F_OFFERED
                    push(s, tid, d, j)
                elif (f & F_COUNT) == 0:
                    push(s, tid, d, j)
        buffers_close(&b)


cdef inline uint64_t eight_flags(const uint8_t *at) noexcept nogil:
    cdef uint64_t word
    memcpy(&word, at, 8)
    return word


cdef bint worth_anything(Sweep *s, int t) noexcept nogil:
    cdef int tid, width = 2 * s.tier.bound + 1
    for tid in range(s.threads):
        if s.worth[tid * width + t + s.tier.bound]:
            return True
    return False


cdef void attractor(Sweep *s, int forcing, int lo, int hi, int step) noexcept nogil:
    if (step > 0 and lo > hi) or (step < 0 and lo < hi):
        return
    s.forcing = forcing
    s.delay = 0
    summarise(s)
    s.t = lo
    while s.error[0] == 0 and ((step > 0 and s.t <= hi) or (step < 0 and s.t >= hi)):
        if worth_anything(s, s.t):      # else nothing can join at this threshold
            seed_threshold(s)
            run_levels(s, 0)
        s.t += step


cdef inline bint is_joined(Sweep *s, int64_t x) noexcept nogil:
    """Whether position x (of any block) joined an attractor: its flags in this block, the
    bits gathered from every block elsewhere."""
    if s.lo <= x < s.hi:
        return (byte_load(&s.flags[x]) & F_JOINED) != 0
    return (s.joined_bits[x >> 3] >> (x & 7)) & 1


cdef void delay_one(Sweep *s, int tid, int64_t i, MoveBuffers *b) noexcept nogil:
    cdef const ScoreTier *tier = s.tier
    cdef int n, j, count = 0, finite = 0, acc = 0, dd
    cdef bint seed = False
    cdef const int64_t *child = b.child
    cdef const int16_t *value = b.value
    cdef const uint16_t *rem = b.rem
    n = tier.moves(tier.ctx, b.scratch, i, b.child, b.value, b.rem)
    if not checked_moves(s, n, child, value, rem):
        return
    for j in range(n):
        if child[j] != SCORE_EXIT:
            if is_joined(s, child[j]):
                seed = True
            else:
                count += 1
            continue
        seed = True
        if value[j] != s.endless:
            continue
        dd = longer(rem[j])
        if dd >= DIST_ENDLESS:
            count += 1              # a capture worth it that never ends: never counted off
        else:
            finite += 1
            if dd > acc:
                acc = dd
    # only this position's byte is written; other threads read only its F_JOINED bit
    byte_store(&s.flags[i], (count & F_COUNT) | (byte_load(&s.flags[i]) & F_EXIT)
               | (F_REACH if seed else 0))
    s.dist[i] = acc if finite else 0
    if seed:
        push(s, tid, 0, i)


cdef int64_t reach_wave(Sweep *s) noexcept nogil:
    """One wave backwards from the positions queued at 0: F_REACH on their predecessors (those
    of other blocks into the outbox); how many positions it started from."""
    cdef const ScoreTier *tier = s.tier
    cdef int64_t k, total, x
    cdef int tid, n, p
    cdef int64_t *preds
    cdef uint32_t *cur
    total = gather(s, 0, &cur)
    if total == 0:
        return 0
    with parallel(num_threads=s.threads):
        tid = threadid()
        preds = <int64_t *>malloc(tier.max_preds * sizeof(int64_t))
        if preds == NULL:
            fail(s, ERR_MEMORY)
        for k in prange(total, schedule="dynamic", chunksize=CHUNK):
            if s.error[0] != 0 or preds == NULL:
                continue
            n = tier.unmoves(tier.ctx, cur[k], preds, tier.max_preds)
            if not checked_preds(s, n, preds):
                continue
            for p in range(n):
                x = preds[p]
                if not handed_out(s, tid, x, 0):
                    offer_reach(s, tid, x)
        free(preds)
    free(cur)
    return total


cdef void reach_closure(Sweep *s) noexcept nogil:
    """Delay phase set-up: per position not joined, its moves that keep the value of endless
    play (the counter; captures worth it with a finite end already counted off into the
    distance word), and F_REACH on every one from which a capture can be reached."""
    forward_sweep(s, True)
    # every position from which a capture can be reached: backwards from the seeds
    while s.error[0] == 0 and reach_wave(s) > 0:
        pass


cdef void seed_delay(Sweep *s) noexcept nogil:
    """Positions without a reachable capture end here (0); those whose value-keeping moves are
    all captures that end start at the slowest of them."""
    cdef int64_t i
    cdef int tid
    cdef uint8_t f
    with parallel(num_threads=s.threads):
        tid = threadid()
        for i in prange(s.lo, s.hi, schedule="static"):
            f = s.flags[i]
            if f & F_JOINED:
                continue
            if not (f & F_REACH):
                push(s, tid, 0, i)
            elif (f & F_COUNT) == 0 and s.dist[i] > 0:
                push(s, tid, s.dist[i], i)


cdef const ScoreTier *checked_tier(capsule) except NULL:
    """The game kernel's ScoreTier behind a capsule, its sizes checked before a sweep uses them."""
    if not PyCapsule_IsValid(capsule, SOWSOLVE_SCORE_TIER_CAPSULE):
        raise TypeError("expected a score tier capsule")
    cdef const ScoreTier *t = <const ScoreTier *>PyCapsule_GetPointer(capsule, SOWSOLVE_SCORE_TIER_CAPSULE)
    if t.n < 0 or t.n >= (<int64_t>1 << 32):
        raise ValueError(f"a tier of {t.n} positions is beyond this solver (at most 2**32 - 1)")
    if not 0 <= t.bound <= MARGIN_MAX_VALUE or not -t.bound <= t.endless_value <= t.bound:
        raise ValueError("the tier's bound or endless value is outside the margin records")
    if not 1 <= t.width <= F_COUNT or t.max_preds < 1:
        raise ValueError("the tier's width or predecessor bound is out of range")
    if t.side_stride < 1:
        raise ValueError("the tier's side stride must be at least 1")
    if not 0 <= t.scratch_bytes <= (1 << 20):
        raise ValueError("the tier asks for a scratch area beyond 1 MiB")
    return t


cdef int open_lists(Sweep *s, int threads) except -1:
    s.lists = <Vec *>calloc(threads * LEVELS, sizeof(Vec))
    s.longs = <Vec *>calloc(threads, sizeof(Vec))
    s.outbox = <Vec *>calloc(threads, sizeof(Vec))
    if s.lists == NULL or s.longs == NULL or s.outbox == NULL:
        close_lists(s)
        raise MemoryError("out of memory for the distance lists")
    return 0


cdef void close_lists(Sweep *s) noexcept:
    cdef int64_t i
    if s.lists != NULL:
        for i in range(s.threads * LEVELS):
            free(s.lists[i].items)
        free(s.lists)
    if s.longs != NULL:
        for i in range(s.threads):
            free(s.longs[i].items)
        free(s.longs)
    if s.outbox != NULL:
        for i in range(s.threads):
            free(s.outbox[i].items)
        free(s.outbox)
    s.lists = NULL
    s.longs = NULL
    s.outbox = NULL


cdef object take_longs(Sweep *s):
    """The long table of what this sweep settled: (index << long_shift) | plies, sorted."""
    cdef int64_t nlong = 0, at = 0, k
    cdef int i
    for i in range(s.threads):
        nlong += s.longs[i].size // 2
    long = np.empty(nlong, dtype=np.uint64)
    cdef uint64_t *long_out = <uint64_t *>cnp.PyArray_DATA(long)
    for i in range(s.threads):
        for k in range(s.longs[i].size // 2):
            long_out[at] = (<uint64_t>s.longs[i].items[2 * k] << MARGIN_LONG_SHIFT) | s.longs[i].items[2 * k + 1]
            at += 1
    long.sort()
    return long


cdef int count_ends(Sweep *s, int64_t *finals, int64_t *unending) noexcept nogil:
    """The last step of a sweep: positions of the block no attractor took and the delay phase
    left unsettled store 'no end'; counts the final positions and the endless ones."""
    cdef int64_t i
    for i in range(s.lo, s.hi):
        if s.flags[i] & F_JOINED:
            continue
        if s.flags[i] & F_REACH:
            unending[0] += 1
        else:
            finals[0] += 1
        if not (s.flags[i] & F_SETTLED):
            s.rec[i] = final_record(s.tier, i, s.endless, MARGIN_REM_ENDLESS)
    return 0


cdef int raise_sweep_error(int error) except -1:
    if error == 0:
        return 0
    if error == ERR_STOPPED:
        raise KeyboardInterrupt
    if error == ERR_MEMORY:
        raise MemoryError("out of memory in the distance lists of a score tier")
    if error == ERR_REMOTENESS:
        raise RecordLimit(f"a remoteness passed {MARGIN_MAX_REMOTENESS} plies, the most a score "
                          f"tier holds")
    if error == SCORE_ERR_LONG:
        raise RuntimeError("a capture leads to a record whose remoteness its tier's long table "
                           "lacks")
    if error == SCORE_ERR_UNSOLVED:
        raise RuntimeError("a capture leads to a record that is not solved")
    if error == SCORE_ERR_BEYOND:
        raise RuntimeError("a capture leads to a record whose margin exceeds the seeds left on "
                           "the board")
    if error == SCORE_ERR_PREDS:
        raise RuntimeError("a position has more predecessors than the game's bound")
    if error == ERR_KERNEL:
        raise RuntimeError("the game's kernel gave a move or an un-move outside its tier's bounds")
    raise RuntimeError(f"the score tier solver failed ({error})")


def solve_tier(tier, int threads=1, int64_t[::1] control=None, int64_t parallel_from=SMALL_TIER):
    """Records (uint16) of one score tier, solved from its moves and un-moves (a ScoreTier from
    the game's kernel: `tier.capsule()`), on `threads` threads; also its long table and (final
    positions, endless ones).  5 bytes per position plus the lists of positions queued at each
    distance.
    With a `control` (solver/kernels.py): stops when asked and counts its work.  Tiers of
    fewer than `parallel_from` positions run on one thread."""
    capsule = tier.capsule()
    cdef const ScoreTier *t = checked_tier(capsule)
    cdef Control spare
    cdef Control *ctl = control_of(control, &spare)
    # a small tier is done before two threads would have met at their first barrier (a busy
    # other core makes every barrier slow): one thread
    threads = 1 if t.n < parallel_from else max(1, threads)
    records = np.zeros(t.n, dtype=np.uint16)
    flags = np.zeros(t.n, dtype=np.uint8)
    dist = np.zeros(t.n, dtype=np.uint16)
    counted = np.zeros(threads * 8, dtype=np.int64)
    worth = np.zeros(threads * (2 * t.bound + 1), dtype=np.int64)
    cdef Sweep s
    memset(&s, 0, sizeof(Sweep))
    cdef int error = 0, bound = t.bound, endless = t.endless_value
    cdef int64_t finals = 0, unending = 0
    s.threads = threads
    open_lists(&s, threads)
    s.tier = t
    s.lo = 0
    s.hi = t.n
    s.rec = <uint16_t *>cnp.PyArray_DATA(records)
    s.flags = <uint8_t *>cnp.PyArray_DATA(flags)
    s.dist = <uint16_t *>cnp.PyArray_DATA(dist)
    s.error = &error
    s.ctl = ctl
    s.counted = <int64_t *>cnp.PyArray_DATA(counted)
    s.worth = <int64_t *>cnp.PyArray_DATA(worth)
    s.endless = endless
    try:
        with nogil:
            attractor(&s, 0, bound, endless + 1, -1)
            attractor(&s, 1, -bound, endless - 1, 1)
            if error == 0:
                s.delay = 1
                reach_closure(&s)
            if error == 0:
                seed_delay(&s)
                run_levels(&s, 0)
            if error == 0:
                count_ends(&s, &finals, &unending)
        long = take_longs(&s)
    finally:
        close_lists(&s)
    raise_sweep_error(error)
    ctl_add(ctl, int(counted.sum()))
    return records, long, int(finals), int(unending)


cdef class ScorePart:
    """One block (positions lo <= i < hi) of a score tier, for a solve split across processes
    (solver/splittier.py drives it): the sweeps of solve_tier over the block's positions alone,
    level by level.  An offer to a position of another block leaves through the outbox that
    `level` and `reach_wave` return (pairs position, distance); the owner takes it in with
    `receive` before its next level.  Offers commute (a minimum, a maximum, a counter, a bit),
    so the records are those of solve_tier whatever the order they arrive in.  5 bytes per
    position of the block, plus (in the delay phase) one bit per position of the tier."""
    cdef object tier_ref, capsule, control_ref, bits_ref
    cdef const ScoreTier *t
    cdef Sweep s
    cdef int error
    cdef Control spare
    cdef readonly object records, flags, dist
    cdef object counted, worth
    cdef readonly int64_t lo, hi, n
    cdef readonly int bound, endless, phase, max_preds
    cdef int settled_to             # the last level settled in the sweep under way (-1: none)

    # (the object's memory comes zeroed: the sweep's lists are NULL until __init__ opens them,
    # so __dealloc__ frees nothing of an object whose __init__ failed)

    def __init__(self, tier, int64_t lo, int64_t hi, int threads=1, int64_t[::1] control=None):
        self.tier_ref = tier            # the capsule points into it
        self.capsule = tier.capsule()
        self.t = checked_tier(self.capsule)
        if not 0 <= lo <= hi <= self.t.n or (lo % 8 and lo != hi):
            raise ValueError(f"the block {lo}..{hi} is not one of a tier of {self.t.n} positions "
                             f"(its start a multiple of 8)")
        self.lo, self.hi, self.n = lo, hi, self.t.n
        self.bound, self.endless = self.t.bound, self.t.endless_value
        self.max_preds = self.t.max_preds
        self.settled_to = -1
        threads = max(1, threads)
        self.control_ref = control
        self.records = np.zeros(hi - lo, dtype=np.uint16)
        self.flags = np.zeros(hi - lo, dtype=np.uint8)
        self.dist = np.zeros(hi - lo, dtype=np.uint16)
        self.counted = np.zeros(threads * 8, dtype=np.int64)
        self.worth = np.zeros(threads * (2 * self.bound + 1), dtype=np.int64)
        self.s.threads = threads
        open_lists(&self.s, threads)
        self.s.tier = self.t
        self.s.lo, self.s.hi = lo, hi
        # indexed by the position's number in the tier (only lo <= i < hi is ever read)
        self.s.rec = <uint16_t *>cnp.PyArray_DATA(self.records) - lo
        self.s.flags = <uint8_t *>cnp.PyArray_DATA(self.flags) - lo
        self.s.dist = <uint16_t *>cnp.PyArray_DATA(self.dist) - lo
        self.s.error = &self.error
        self.s.ctl = control_of(control, &self.spare)
        self.s.counted = <int64_t *>cnp.PyArray_DATA(self.counted)
        self.s.worth = <int64_t *>cnp.PyArray_DATA(self.worth)
        self.s.endless = self.endless
        self.phase = 0

    def __dealloc__(self):
        close_lists(&self.s)

    cdef int check(self) except -1:
        cdef int error = self.error
        self.error = 0
        return raise_sweep_error(error)

    cdef object take_outbox(self):
        """The offers to other blocks since the last call, (position, distance) rows."""
        cdef int64_t total = 0, at = 0
        cdef int i
        for i in range(self.s.threads):
            total += self.s.outbox[i].size
        out = np.empty((total // 2, 2), dtype=np.uint32)
        cdef uint32_t *o = <uint32_t *>cnp.PyArray_DATA(out)
        for i in range(self.s.threads):
            if self.s.outbox[i].size:
                memcpy(o + at, self.s.outbox[i].items, self.s.outbox[i].size * sizeof(uint32_t))
                at += self.s.outbox[i].size
            self.s.outbox[i].size = 0
        return out

    def summarise(self, int forcing):
        """An attractor of `forcing` (0 = P, 1 = p) begins: the block's positions not joined
        get their counters and capture summaries; how many summaries are worth each threshold
        (-bound..bound), for the sum over the blocks."""
        if forcing not in (0, 1):
            raise ValueError("forcing is 0 or 1")
        self.s.forcing = forcing
        self.s.delay = 0
        self.phase = 1
        with nogil:
            summarise(&self.s)
        self.check()
        return self.worth.reshape(self.s.threads, -1).sum(axis=0)

    def seed(self, int t):
        """A threshold begins (the attractor's under way): the block's captures worth exactly
        t are queued."""
        if self.phase != 1 or not -self.bound <= t <= self.bound:
            raise ValueError(f"no attractor at threshold {t} is under way")
        self.s.t = t
        self.settled_to = -1
        with nogil:
            seed_threshold(&self.s)
        self.check()

    def level(self, int d):
        """Settles what is queued at distance d; the offers to other blocks it made."""
        if not max(0, self.settled_to) <= d <= DIST_ENDLESS or self.phase not in (1, 3):
            raise ValueError(f"no level {d} of a sweep is under way")
        self.settled_to = d
        with nogil:
            one_level(&self.s, d)
        self.check()
        return self.take_outbox()

    def next_level(self, int d):
        """The nearest distance d or more at which something is queued here (-1: none)."""
        cdef int tid, e
        cdef int64_t top = highest_queued(&self.s)
        for e in range(max(d, 0), top + 1):
            for tid in range(self.s.threads):
                if self.s.lists[tid * LEVELS + e].size:
                    return e
        return -1

    def end_levels(self):
        """Every level of the sweep under way is settled, in every block."""
        cdef int tid, d
        for tid in range(self.s.threads):
            for d in range(LEVELS):
                if self.s.lists[tid * LEVELS + d].size:
                    raise RuntimeError("a sweep ended with positions still queued")
            self.s.counted[tid * 8 + 1] = 0
        self.settled_to = -1

    def receive(self, const cnp.uint32_t[:, ::1] offers):
        """Offers of other blocks to this one's positions (rows position, distance), each
        checked before it is used: a position of this block, a distance a level can hold."""
        if offers.shape[0] and offers.shape[1] != 2:
            raise ValueError("offers are rows of (position, distance)")
        cdef int64_t k, m = offers.shape[0], x, d
        cdef int tid, phase = self.phase, after = self.settled_to
        for k in range(m):
            x = offers[k, 0]
            d = offers[k, 1]        # (64 bits: every uint32 compares as itself)
            # a level-phase offer is one ply after the level settled (as `longer` makes it:
            # the endless level settles into itself); a reach-phase offer is a position alone
            if not (self.lo <= x < self.hi) or (phase == 2 and d != 0) or (
                    phase != 2 and (after < 0 or d != longer(after))):
                raise ValueError(f"an offer ({x}, {d}) is not one for positions "
                                 f"{self.lo}..{self.hi} in this phase")
        if phase not in (1, 2, 3):
            raise ValueError("no sweep is under way")
        with nogil:
            for k in range(m):
                x = offers[k, 0]
                if phase == 1:
                    offer_attractor(&self.s, 0, x, offers[k, 1])
                elif phase == 2:
                    offer_reach(&self.s, 0, x)
                else:
                    offer_delay(&self.s, 0, x, offers[k, 1])
        self.check()

    def joined_bits(self):
        """The block's F_JOINED bits, one per position, little-endian in bytes."""
        return np.packbits((self.flags & F_JOINED) != 0, bitorder="little")

    def delay_phase(self, bits):
        """After both attractors: `bits` is the whole tier's joined bits (the blocks' joined_bits
        in order); every position of the block not joined counts its moves that keep the value
        of endless play, and those with a capture within reach are queued at 0 for the reach
        waves."""
        bits = np.ascontiguousarray(bits, dtype=np.uint8)
        if bits.shape != ((self.n + 7) // 8,):
            raise ValueError(f"the joined bits of a tier of {self.n} positions are "
                             f"{(self.n + 7) // 8} bytes")
        self.bits_ref = bits
        self.s.joined_bits = <const uint8_t *>cnp.PyArray_DATA(bits)
        self.s.delay = 1
        self.phase = 2
        with nogil:
            forward_sweep(&self.s, True)
        self.check()

    def reach_wave(self):
        """One wave of the reach closure: (positions it started from, offers to other blocks)."""
        if self.phase != 2:
            raise ValueError("no reach closure is under way")
        cdef int64_t total
        with nogil:
            total = reach_wave(&self.s)
        self.check()
        return total, self.take_outbox()

    def seed_delay(self):
        """The reach closure is complete in every block: the delay levels begin."""
        if self.phase != 2:
            raise ValueError("no reach closure is under way")
        self.phase = 3
        self.settled_to = -1
        with nogil:
            seed_delay(&self.s)
        self.check()

    def finish(self):
        """(records of the block, long table (indices in the tier), final positions, endless
        ones); the positions settled are counted into the control."""
        cdef int64_t finals = 0, unending = 0
        with nogil:
            count_ends(&self.s, &finals, &unending)
        self.phase = 4
        long = take_longs(&self.s)
        ctl_add(self.s.ctl, int(self.counted[::8].sum()))
        self.counted[::8] = 0
        return self.records, long, int(finals), int(unending)

    def state(self):
        """What a restart needs between two thresholds (no level queued): the block's arrays
        and the long entries settled so far (pairs index, plies)."""
        cdef int64_t total = 0, at = 0
        cdef int i
        for i in range(self.s.threads):
            total += self.s.longs[i].size
        longs = np.empty(total, dtype=np.uint32)
        cdef uint32_t *o = <uint32_t *>cnp.PyArray_DATA(longs)
        for i in range(self.s.threads):
            if self.s.longs[i].size:
                memcpy(o + at, self.s.longs[i].items, self.s.longs[i].size * sizeof(uint32_t))
                at += self.s.longs[i].size
        return {"records": self.records, "flags": self.flags, "dist": self.dist, "longs": longs}

    def restore(self, dict state, int forcing, int phase):
        """The state() of an earlier run of this block (checked: shapes, the long entries' indices
        within the block); the attractor of `forcing` under way (phase 1)."""
        cdef int64_t size = self.hi - self.lo, k
        for name, dtype in (("records", np.uint16), ("flags", np.uint8), ("dist", np.uint16)):
            a = state[name]
            if a.dtype != dtype or a.shape != (size,):
                raise ValueError(f"a saved {name} does not fit the block {self.lo}..{self.hi}")
        longs = np.ascontiguousarray(state["longs"], dtype=np.uint32)
        if longs.ndim != 1 or longs.size % 2:
            raise ValueError("the saved long entries are not pairs")
        pairs = longs.reshape(-1, 2)
        if pairs.size and (pairs[:, 0].min() < self.lo or pairs[:, 0].max() >= self.hi
                           or pairs[:, 1].min() < MARGIN_REM_LONG or pairs[:, 1].max() >= DIST_ENDLESS):
            raise ValueError("a saved long entry is not one of this block")
        if forcing not in (0, 1) or phase != 1:
            raise ValueError("a block is restored between two thresholds of an attractor")
        self.records[:] = state["records"]
        self.flags[:] = state["flags"]
        self.dist[:] = state["dist"]
        for k in range(self.s.threads):
            self.s.longs[k].size = 0
        for k in range(longs.size):
            if vec_push(&self.s.longs[0], longs[k]) < 0:
                raise MemoryError("out of memory for the long table")
        self.s.forcing = forcing
        self.s.delay = 0
        self.phase = 1
