# cython: language_level=3
"""Sets and stacks of (packed position, role) for walking a proof: the proof search's extraction
and the proof check walk the same graph the same way.  A position and its mirror with the houses
(and sides) swapped share a packed position, so the role (winner or loser to move) is part of
what is held: checking one says nothing of the other."""
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc, realloc

from kernel_api cimport big_table_alloc, big_table_free, key_mix

cdef enum:
    WALK_OK = 0
    WALK_NO_MEMORY = 6


cdef struct Seen:
    # open addressing over (position, role): slot empty when its key is 0 (no packed position is)
    uint64_t *keys
    uint8_t *roles
    int64_t slots
    int64_t used


cdef inline int seen_grow(Seen *s) noexcept nogil:
    cdef Seen bigger
    cdef int64_t i, j
    bigger.slots = s.slots * 2
    bigger.used = s.used
    bigger.keys = <uint64_t *>big_table_alloc(bigger.slots * 8)
    bigger.roles = <uint8_t *>big_table_alloc(bigger.slots)
    if bigger.keys == NULL or bigger.roles == NULL:
        big_table_free(bigger.keys, bigger.slots * 8)
        big_table_free(bigger.roles, bigger.slots)
        return WALK_NO_MEMORY
    for i in range(s.slots):
        if s.keys[i] != 0:
            j = <int64_t>(key_mix(s.keys[i] ^ s.roles[i]) & <uint64_t>(bigger.slots - 1))
            while bigger.keys[j] != 0:
                j = (j + 1) & (bigger.slots - 1)
            bigger.keys[j] = s.keys[i]
            bigger.roles[j] = s.roles[i]
    big_table_free(s.keys, s.slots * 8)
    big_table_free(s.roles, s.slots)
    s[0] = bigger
    return WALK_OK


cdef inline int seen_add(Seen *s, uint64_t key, uint8_t role) noexcept nogil:
    """1 if (key, role) was new (and is now held), 0 if held before, or -WALK_NO_MEMORY."""
    cdef int64_t j
    # grown at three quarters full: a proof of hundreds of millions of positions is walked
    # beside the search's table, and linear probing stays short at that load
    if 4 * (s.used + 1) > 3 * s.slots and seen_grow(s) != WALK_OK:
        return -WALK_NO_MEMORY
    j = <int64_t>(key_mix(key ^ role) & <uint64_t>(s.slots - 1))
    while s.keys[j] != 0:
        if s.keys[j] == key and s.roles[j] == role:
            return 0
        j = (j + 1) & (s.slots - 1)
    s.keys[j] = key
    s.roles[j] = role
    s.used += 1
    return 1


cdef inline bint seen_has(const Seen *s, uint64_t key, uint8_t role) noexcept nogil:
    """Whether (key, role) is held."""
    cdef int64_t j = <int64_t>(key_mix(key ^ role) & <uint64_t>(s.slots - 1))
    while s.keys[j] != 0:
        if s.keys[j] == key and s.roles[j] == role:
            return True
        j = (j + 1) & (s.slots - 1)
    return False


cdef struct Todo:
    uint64_t *keys
    uint8_t *roles
    int64_t n
    int64_t room


cdef inline int push(Todo *t, uint64_t key, uint8_t role) noexcept nogil:
    cdef uint64_t *k
    cdef uint8_t *r
    if t.n == t.room:
        k = <uint64_t *>realloc(t.keys, 2 * t.room * 8)
        if k == NULL:
            return WALK_NO_MEMORY
        t.keys = k
        r = <uint8_t *>realloc(t.roles, 2 * t.room)
        if r == NULL:
            return WALK_NO_MEMORY
        t.roles = r
        t.room *= 2
    t.keys[t.n] = key
    t.roles[t.n] = role
    t.n += 1
    return WALK_OK


cdef inline int seen_open(Seen *s) noexcept nogil:
    s.slots = 1 << 16
    s.used = 0
    s.keys = <uint64_t *>big_table_alloc(s.slots * 8)
    s.roles = <uint8_t *>big_table_alloc(s.slots)
    return WALK_OK if s.keys != NULL and s.roles != NULL else WALK_NO_MEMORY


cdef inline void seen_close(Seen *s) noexcept nogil:
    big_table_free(s.keys, s.slots * 8)
    big_table_free(s.roles, s.slots)
    s.keys = NULL
    s.roles = NULL


cdef inline int todo_open(Todo *t) noexcept nogil:
    t.room = 1 << 12
    t.n = 0
    t.keys = <uint64_t *>malloc(t.room * 8)
    t.roles = <uint8_t *>malloc(t.room)
    return WALK_OK if t.keys != NULL and t.roles != NULL else WALK_NO_MEMORY


cdef inline void todo_close(Todo *t) noexcept nogil:
    free(t.keys)
    free(t.roles)
    t.keys = NULL
    t.roles = NULL
