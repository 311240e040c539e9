# cython: language_level=3
"""Score solver for tiers with cycles: the exact value of every position of one tier, given its
move graph (games build it: see zigzag.pyx tier_graph).

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
the value of endless play is scored like endless play: it stores MARGIN_REM_ENDLESS unless every
move that keeps its value ends, and then the slowest (delay_to_the_end).
Records: the margin layout of sowsolve_kernel.h (MARGIN_MAKE), which Python reads from
MARGIN_LAYOUT.  Inside the sweeps a distance of MARGIN_REM_ENDLESS plies means "no end" too.
"""
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t
from libc.stdlib cimport free, realloc

import numpy as np
cimport numpy as cnp

from kernel_api cimport (CONTROL_FLUSH, MARGIN_BIAS, MARGIN_MAKE, MARGIN_MAX_REMOTENESS,
                         MARGIN_MAX_VALUE, MARGIN_REM_ENDLESS, MARGIN_REM_SHIFT,
                         MARGIN_VALUE_MASK, Control, control_of, ctl_add, ctl_stopped)

cnp.import_array()

#: The margin record layout (sowsolve_kernel.h): a record is
#: (remoteness << rem_shift) | (margin + bias), the margin read back as (record & value_mask) -
#: bias; remoteness `endless` means the value comes from play that never ends, and a finite
#: remoteness is at most max_remoteness.  0 is "not solved yet".
MARGIN_LAYOUT = {"bias": MARGIN_BIAS, "rem_shift": MARGIN_REM_SHIFT,
                 "value_mask": MARGIN_VALUE_MASK, "endless": MARGIN_REM_ENDLESS,
                 "max_remoteness": MARGIN_MAX_REMOTENESS}


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
    """One ply more; 'no end' stays 'no end'; a finite remoteness stops at MARGIN_MAX_REMOTENESS,
    which solve_graph refuses rather than store a clipped value."""
    if d >= MARGIN_REM_ENDLESS:
        return MARGIN_REM_ENDLESS
    return d + 1 if d + 1 < MARGIN_REM_ENDLESS else MARGIN_MAX_REMOTENESS


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
    const uint8_t *exit_rem
    const int64_t *rev_off
    const int32_t *rev
    const int32_t *same            # same-tier child of each move slot (-1 none, -2 an exit)
    const int64_t *bucket_off      # exits by value for P, from -bound to +bound
    const int64_t *bucket
    int16_t *value                 # results, shared by both sweeps (they never meet)
    uint8_t *dist
    uint8_t *counter               # scratch
    uint8_t *acc
    int16_t *acc_at                # the threshold at which acc was last raised
    uint8_t *tent


cdef inline int wait_for_all(Heap *heap, int64_t node, int d, uint8_t *counter,
                             uint8_t *acc) noexcept nogil:
    """One more move of a delaying position is settled, `d` plies from the end: it joins once
    all its counted moves are, at the slowest of them."""
    if d > acc[node]:
        acc[node] = d
    counter[node] -= 1
    if counter[node] == 0:
        return heap_push(heap, acc[node], node)
    return 0


cdef inline int offer(Heap *heap, int64_t node, int d, int forcing, int t, const uint8_t *side_of,
                      uint8_t *counter, uint8_t *acc, int16_t *acc_at, uint8_t *tent) noexcept nogil:
    """A successor of `node` worth the threshold t, `d` plies from the end: the forcing side
    takes the quickest such move; the other side joins once every move is worth t or more to
    the forcing side, and then delays among the moves worth exactly t (its best ones): moves
    that joined at an earlier, more extreme threshold are worse for it and do not count."""
    if side_of[node] == forcing:
        if tent[node] == MARGIN_REM_ENDLESS or d < tent[node]:
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
    cdef uint8_t *acc = g.acc
    cdef int16_t *acc_at = g.acc_at
    cdef uint8_t *tent = g.tent
    heap.items = NULL
    heap.size = 0
    heap.capacity = 0
    for i in range(g.n):
        counter[i] = g.deg[i]
        acc[i] = 0
        acc_at[i] = -32768
        tent[i] = MARGIN_REM_ENDLESS
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
    cdef uint8_t *acc = g.acc
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
        if decided[i] or not reach[i] or d >= MARGIN_REM_ENDLESS:
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
        if d >= MARGIN_REM_ENDLESS:
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
    """Records (uint16) of a tier from its move graph; also (final positions, endless ones).
    With a `control` (solver/kernels.py): stops when asked (KeyboardInterrupt) and counts the
    positions the sweeps settle."""
    cdef Control spare
    cdef Control *ctl = control_of(control, &spare)
    side_of = np.ascontiguousarray(graph["side"], dtype=np.uint8)
    deg = np.ascontiguousarray(graph["moves"], dtype=np.uint8)
    same = np.ascontiguousarray(graph["same"], dtype=np.int32)
    exit_u = np.ascontiguousarray(graph["exit_value"], dtype=np.int16)
    exit_rem = np.ascontiguousarray(graph["exit_remoteness"], dtype=np.uint8)
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
    dist = np.zeros(n, dtype=np.uint8)
    counter = np.empty(n, dtype=np.uint8)
    acc = np.empty(n, dtype=np.uint8)
    acc_at = np.empty(n, dtype=np.int16)
    tent = np.empty(n, dtype=np.uint8)
    cdef Graph graph_c
    graph_c.n, graph_c.width, graph_c.bound = n, width, seeds
    graph_c.side_of = &side_v[0]
    graph_c.deg = &deg_v[0]
    graph_c.exit_u = <const int16_t *>cnp.PyArray_DATA(exit_u)
    graph_c.exit_rem = <const uint8_t *>cnp.PyArray_DATA(exit_rem)
    graph_c.rev_off = <const int64_t *>cnp.PyArray_DATA(rev_off)
    graph_c.rev = <const int32_t *>cnp.PyArray_DATA(rev)
    graph_c.same = <const int32_t *>cnp.PyArray_DATA(same)
    graph_c.bucket_off = <const int64_t *>cnp.PyArray_DATA(bucket_off)
    graph_c.bucket = <const int64_t *>cnp.PyArray_DATA(bucket)
    graph_c.value = <int16_t *>cnp.PyArray_DATA(value)
    graph_c.dist = <uint8_t *>cnp.PyArray_DATA(dist)
    graph_c.counter = <uint8_t *>cnp.PyArray_DATA(counter)
    graph_c.acc = <uint8_t *>cnp.PyArray_DATA(acc)
    graph_c.acc_at = <int16_t *>cnp.PyArray_DATA(acc_at)
    graph_c.tent = <uint8_t *>cnp.PyArray_DATA(tent)
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
    if np.any(finite & (dist == MARGIN_MAX_REMOTENESS)):
        raise RuntimeError(f"a remoteness reached {MARGIN_MAX_REMOTENESS} plies, the most a score "
                           f"record holds")
    u = np.where(decided, value, infinite_value).astype(np.int64)
    margin = np.ascontiguousarray(np.where(side_of == 0, u, -u), dtype=np.int64)
    if n and int(np.abs(margin).max()) > MARGIN_MAX_VALUE:
        raise RuntimeError(f"a margin exceeds {MARGIN_MAX_VALUE}, the most a score record holds")
    rem = np.ascontiguousarray(np.where(finite, dist, MARGIN_REM_ENDLESS), dtype=np.int64)
    records = np.empty(n, dtype=np.uint16)
    cdef uint16_t[::1] records_v = records
    cdef const int64_t[::1] margin_v = margin, rem_v = rem
    with nogil:
        for i in range(n):
            records_v[i] = MARGIN_MAKE(<int>margin_v[i], <int>rem_v[i])
    finals = int(np.count_nonzero(~reach.astype(bool)))
    endless = int(np.count_nonzero(~decided & reach.astype(bool)))
    return records, finals, endless

