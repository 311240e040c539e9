# cython: language_level=3
"""The analysis engine: an anytime alpha-beta search over any game's play layer (PlayKernel of
sowsolve_kernel.h), with endgame tables at its leaves.  It names no game.

Values are integers from the side to move.  Win/loss games: a win in r plies is MATE - r, a
loss in r plies -(MATE - r), an estimate lies within +-EST_MAX (the game's features weighed by
its weights).  Margin games: a margin of m seeds is m * SCALE, estimates on the same scale.

Every result carries a flag, *proven*: the number (as a value, or as the bound the window made
of it) holds for the game itself and not only for the searched tree.  Finals and table entries
are proven, an evaluation is not; a node is proven when every child it read was (a cut-off
needs only the child that cut).  A proven number needs no depth, so the transposition table
keeps it for every later search.  The table stores each entry's whole state beside its hash:
two positions never share an entry, so a proven entry is never another position's answer.

Games with endless play (the `endless` hook): a position already on the path from the root
scores as the rules score play that goes round for ever.  That score holds for the path only:
a result that leans on a repetition of a position above its node (Worker.repeated_ply) is not
stored, or another path to the same node would read it where no cycle closes (graph history
interaction).  Results that lean on repetitions at or below their node are stored: every path
to that node holds the same cycle.

Threads (OpenMP): thread 0 runs iterative deepening and reports; the others run the same
search one ply deeper or shallower on the shared table (lazy SMP), which fills it with results
thread 0 then reads.  One thread and a node budget give the same answer every time.
"""
from cpython.exc cimport PyErr_CheckSignals
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from cython.parallel cimport prange
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort
from libc.string cimport memcmp, memcpy, memset
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

import numpy as np
cimport numpy as cnp

from kernel_api cimport (MARGIN_VALUE, PLAY_FEATURES, PLAY_MAX_MOVES, PLAY_STATE_MAX, PLAY_WINS_AT_ONCE,
                         PlayKernel,
                         REC_DRAW, REC_LOSS, REC_OUTCOME, REC_REMOTENESS, REC_WIN,
                         SOWSOLVE_PLAY_CAPSULE, big_table_alloc, big_table_free, count_add,
                         count_load, flag_load, flag_store, key_mix, prefetch_for_write,
                         sorted_find, spin_lock, spin_unlock)

cnp.import_array()

cdef enum:
    MATE = 1000000
    MATE_BOUND = 900000        # beyond this, a score is a win or loss with its distance
    EST_MAX = 400000           # estimates are clamped inside +-EST_MAX
    INF = 1100000
    SCALE = 100                # margin games: one seed
    MAX_PLY = 128
    MAX_DEPTH = 120
    PROVEN_DEPTH = 30000
    POLL = 1023
    BOUND_NONE = 0
    BOUND_EXACT = 1
    BOUND_LOWER = 2
    BOUND_UPPER = 3
    PICKED = -0x7FFFFFFF
    SELECTED = 3               # moves picked one by one (most cut-offs come there); the rest sorted
    WARM_SLICE = 64 << 20      # bytes of the table warm() touches between two looks at Ctrl-C
    REDUCE_FROM = 2            # late move reductions: quiet moves from the 3rd on one ply shallower,
    REDUCE_MORE = 4            # ... from the 5th on two (at depth 5 and more; docs/analysis.md)
    PREFETCH_MOVES = 16        # a node of at most this many moves hashes its children at once
    NO_REPETITION = MAX_PLY

MATE_SCORE = MATE
MATE_LIMIT = MATE_BOUND
SCORE_SCALE = SCALE
MAX_SEARCH_DEPTH = MAX_DEPTH


cdef struct Entry:
    uint32_t lock
    int32_t score
    int16_t depth
    int16_t move               # code of the best move, -1 none
    uint8_t bound
    uint8_t proven
    uint8_t generation         # the search generation that wrote it (Shared.generation)
    uint8_t pad
    uint64_t hash
    uint8_t state[PLAY_STATE_MAX]


cdef struct OTier:
    const uint16_t *records
    const uint64_t *keys       # NULL: a dense tier, indexed directly
    int64_t n


cdef struct RootMove:
    int16_t code
    int16_t gain
    int32_t score              # from the root's side to move
    int32_t depth              # of the search behind it (0: none yet)
    uint8_t bound              # BOUND_EXACT or BOUND_UPPER (at most `score`)
    uint8_t proven
    int32_t index              # into the root's children


cdef struct Shared:
    PlayKernel *k
    Entry *tt
    int64_t tt_mask            # buckets - 1 (two entries a bucket)
    # entries of another generation are empty: a clear between searches is a new generation,
    # not a pass over the table (10 ms of a 0.1 s search for the default 256 MB)
    uint8_t generation
    const int32_t *weights
    OTier *tiers
    int ntiers
    int stop
    int64_t nodes
    int64_t max_nodes          # 0: none
    double deadline            # 0: none
    int max_depth              # the deepest iteration (MAX_DEPTH: none)
    int multipv
    uint64_t seed
    # what thread 0 reports (under report_lock)
    uint32_t report_lock
    int depth_done
    int nroot
    RootMove root[PLAY_MAX_MOVES]
    uint8_t root_state[PLAY_STATE_MAX]
    uint8_t root_children[PLAY_MAX_MOVES * PLAY_STATE_MAX]
    int threads
    double started


cdef struct Worker:
    Shared *s
    int id
    int64_t nodes
    uint8_t *children          # MAX_PLY x max_moves x state_bytes
    int16_t *codes             # MAX_PLY x max_moves
    int16_t *gains
    int32_t *order             # MAX_PLY x max_moves
    int64_t *keys              # MAX_PLY x max_moves: the moves after the first few, sorted once
    uint64_t *hashes           # MAX_PLY x max_moves: state_hash of each child
    int16_t killers[MAX_PLY][2]
    int32_t history[PLAY_MAX_MOVES]
    const uint8_t *path[MAX_PLY]      # the states from the root to the node searched
    uint64_t path_hash[MAX_PLY]
    # the lowest ply of a position on the path that the last search's result depends on (a
    # repetition of it scored as endless play), NO_REPETITION where none: a result that leans
    # on a position above its node holds for this path only and is not stored
    int repeated_ply


cdef inline double now() noexcept nogil:
    cdef timespec t
    clock_gettime(CLOCK_MONOTONIC, &t)
    return t.tv_sec + t.tv_nsec * 1e-9


cdef inline uint64_t state_hash(const uint8_t *state, int n) noexcept nogil:
    cdef uint64_t h = 0xcbf29ce484222325ULL
    cdef int i
    for i in range(n):
        h = (h ^ state[i]) * 0x100000001b3ULL
    return key_mix(h)


# --- values between a node and its parent ----------------------------------------------------------
cdef inline int32_t to_parent(int32_t child, int gain, int margin) noexcept nogil:
    """The value for the mover of a move whose child is worth `child` to its side to move."""
    cdef int32_t v
    if margin:
        return gain * SCALE - child
    v = -child
    if v > MATE_BOUND:
        return v - 1
    if v < -MATE_BOUND:
        return v + 1
    return v


cdef inline int32_t from_parent(int32_t p, int gain, int margin) noexcept nogil:
    """The child's value whose to_parent is `p` (windows are passed down through it)."""
    if p >= INF:
        return -INF
    if p <= -INF:
        return INF
    if margin:
        return gain * SCALE - p
    if p >= MATE_BOUND:
        return -p - 1
    if p <= -MATE_BOUND:
        return -p + 1
    return -p


cdef inline int32_t final_score(int final, int margin) noexcept nogil:
    if margin:
        return final * SCALE
    return MATE if final > 0 else (-MATE if final < 0 else 0)


# --- tables at the leaves ----------------------------------------------------------------------------
cdef inline bint oracle(const Shared *s, const uint8_t *state, int32_t *score) noexcept nogil:
    """The value of a state an endgame table holds (proven), else 0."""
    cdef int tier
    cdef uint64_t where
    cdef int64_t i
    cdef const OTier *t
    cdef uint16_t rec
    cdef unsigned outcome
    if s.ntiers == 0 or not s.k.locate(s.k.ctx, state, &tier, &where):
        return False
    if tier < 0 or tier >= s.ntiers:
        return False
    t = &s.tiers[tier]
    if t.records == NULL:
        return False
    if t.keys != NULL:
        i = sorted_find(t.keys, t.n, where)
        if i < 0:
            return False
    else:
        if where >= <uint64_t>t.n:
            return False
        i = <int64_t>where
    rec = t.records[i]
    if s.k.margin:
        if rec == 0:
            return False
        score[0] = MARGIN_VALUE(rec) * SCALE
        return True
    outcome = REC_OUTCOME(rec)
    if outcome == REC_WIN:
        score[0] = MATE - <int32_t>REC_REMOTENESS(rec)
    elif outcome == REC_LOSS:
        score[0] = -(MATE - <int32_t>REC_REMOTENESS(rec))
    elif outcome == REC_DRAW:
        score[0] = 0
    else:
        return False
    return True


# --- the transposition table -----------------------------------------------------------------------
cdef inline void tt_prefetch(const Shared *s, uint64_t h) noexcept nogil:
    cdef const Entry *e = &s.tt[(h & <uint64_t>s.tt_mask) * 2]
    prefetch_for_write(e)
    prefetch_for_write(&e[1])


cdef inline bint tt_probe(Shared *s, uint64_t h, const uint8_t *state, Entry *out) noexcept nogil:
    cdef Entry *e = &s.tt[(h & <uint64_t>s.tt_mask) * 2]
    cdef int j
    cdef int sb = s.k.state_bytes
    for j in range(2):
        spin_lock(&e[j].lock)
        if (e[j].bound != BOUND_NONE and e[j].generation == s.generation and e[j].hash == h
                and memcmp(e[j].state, state, sb) == 0):
            out.score = e[j].score
            out.depth = e[j].depth
            out.move = e[j].move
            out.bound = e[j].bound
            out.proven = e[j].proven
            spin_unlock(&e[j].lock)
            return True
        spin_unlock(&e[j].lock)
    return False


cdef inline void tt_store(Shared *s, uint64_t h, const uint8_t *state, int32_t score, int depth,
                          int move, int bound, int proven) noexcept nogil:
    """Slot 0 of a bucket keeps the deeper (or proven) entry, slot 1 takes what slot 0 will not;
    an entry of the same state is always replaced."""
    cdef Entry *e = &s.tt[(h & <uint64_t>s.tt_mask) * 2]
    cdef int sb = s.k.state_bytes, j = 1
    cdef int d = PROVEN_DEPTH if proven else depth
    spin_lock(&e[0].lock)
    if (e[0].bound == BOUND_NONE or e[0].generation != s.generation or d >= e[0].depth
            or (e[0].hash == h and memcmp(e[0].state, state, sb) == 0)):
        j = 0
    else:
        spin_unlock(&e[0].lock)
        spin_lock(&e[1].lock)
    e[j].score = score
    e[j].depth = d
    e[j].move = move
    e[j].bound = bound
    e[j].proven = proven
    e[j].generation = s.generation
    e[j].hash = h
    memcpy(e[j].state, state, sb)
    spin_unlock(&e[j].lock)


# --- the search ---------------------------------------------------------------------------------------
cdef inline int32_t evaluate(const Shared *s, const uint8_t *state) noexcept nogil:
    cdef int32_t f[PLAY_FEATURES]
    s.k.features_of(s.k.ctx, state, f)
    return weigh(s, f)


cdef inline int32_t weigh(const Shared *s, const int32_t *f) noexcept nogil:
    """The estimate of a state of features `f`: the weighted sum, clamped inside +-EST_MAX."""
    cdef int64_t total = 0
    cdef int i
    for i in range(s.k.features):
        total += <int64_t>s.weights[i] * f[i]
    if total > EST_MAX:
        return EST_MAX
    if total < -EST_MAX:
        return -EST_MAX
    return <int32_t>total


cdef inline void poll(Worker *w) noexcept nogil:
    cdef Shared *s = w.s
    count_add(&s.nodes, POLL + 1)
    if w.id != 0:
        return
    if s.max_nodes and count_load(&s.nodes) >= s.max_nodes:
        flag_store(&s.stop, 1)
    if s.deadline > 0 and now() >= s.deadline:
        flag_store(&s.stop, 1)


cdef int by_key_descending(const void *a, const void *b) noexcept nogil:
    cdef int64_t x = (<const int64_t *>a)[0], y = (<const int64_t *>b)[0]
    return (x < y) - (x > y)


cdef int32_t search(Worker *w, const uint8_t *state, uint64_t h, int depth, int ply,
                    int32_t alpha, int32_t beta, bint *proven) noexcept nogil:
    """Fail-soft alpha-beta; *proven as the module says.  `h`: state_hash of the state (the
    parent hashed its children at once, to ask for their table entries before they are read)."""
    cdef Shared *s = w.s
    cdef PlayKernel *k = s.k
    cdef int sb = k.state_bytes, mm = k.max_moves, margin = k.margin
    cdef uint8_t *children = &w.children[<int64_t>ply * mm * sb]
    cdef int16_t *codes = &w.codes[ply * mm]
    cdef int16_t *gains = &w.gains[ply * mm]
    cdef int32_t *order = &w.order[ply * mm]
    cdef int64_t *keys = &w.keys[ply * mm]
    cdef uint64_t *hashes = &w.hashes[ply * mm]
    cdef int m
    cdef int n, final = 0, i, j, pick, tt_move = -1, best_move = -1, bound, r, look
    cdef int repeated = NO_REPETITION
    cdef int32_t score, best, v, c, alpha0 = alpha
    cdef Entry e
    cdef int32_t f[PLAY_FEATURES]
    cdef bint cp, all_proven = True, cut_proven = False, cut = False, hashed
    cdef uint64_t hc
    w.nodes += 1
    w.repeated_ply = NO_REPETITION
    if (w.nodes & POLL) == 0:
        poll(w)
    if oracle(s, state, &score):
        proven[0] = True
        return score
    if k.endless != NULL:
        # a position already on the path: play that goes round for ever from here scores as
        # the game's rule for it says (not proven: either side may leave the cycle)
        w.path[ply] = state
        w.path_hash[ply] = h
        for j in range(ply - 1, -1, -1):
            if w.path_hash[j] == h and memcmp(w.path[j], state, sb) == 0:
                proven[0] = False
                w.repeated_ply = j
                return final_score(k.endless(k.ctx, state), margin)
    # the table before the moves: a final state has no entry (nothing is stored for one), and
    # a cut-off here costs no move generation
    if tt_probe(s, h, state, &e):
        tt_move = e.move
        if e.proven or e.depth >= depth:
            if (e.bound == BOUND_EXACT or (e.bound == BOUND_LOWER and e.score >= beta)
                    or (e.bound == BOUND_UPPER and e.score <= alpha)):
                proven[0] = e.proven
                return e.score
    if (depth <= 0 or ply >= MAX_PLY - 1) and k.horizon != NULL:
        # the horizon: the game's own look at the state, without making its children
        look = k.horizon(k.ctx, state, f, &final)
        if look == 0:
            proven[0] = True
            return final_score(final, margin)
        if look == PLAY_WINS_AT_ONCE and not margin:
            proven[0] = True            # (not stored: the table would not know the move)
            return MATE - 1
        if look == 1:
            proven[0] = False
            return weigh(s, f)
        # any other answer is none the engine knows: the moves and features below decide
    n = k.moves(k.ctx, state, children, codes, gains, &final)
    if n == 0:
        proven[0] = True
        return final_score(final, margin)
    # the children's entries are asked for now: by the time a child is searched its bucket is
    # in the cache (a miss there was most of the time of a node).  Not at a node of many moves:
    # most are never searched, and hashing them all cost more than the misses saved
    hashed = n <= PREFETCH_MOVES
    if hashed:
        for i in range(n):
            hashes[i] = state_hash(&children[i * sb], sb)
            tt_prefetch(s, hashes[i])
    if not margin:
        # a move that wins at once (its gain, in a win/loss game) is the best there is, a win
        # in one ply: taken without a search, at the leaves too, where it is the one ply of
        # tactics that costs nothing (a move that loses at once is ordered last by its gain)
        for i in range(n):
            if gains[i] > 0:
                proven[0] = True
                tt_store(s, h, state, MATE - 1, depth, codes[i], BOUND_EXACT, True)
                return MATE - 1
    if depth <= 0 or ply >= MAX_PLY - 1:
        proven[0] = False
        return evaluate(s, state)
    if flag_load(&s.stop):
        proven[0] = False
        return 0
    for i in range(n):
        if codes[i] == tt_move:
            order[i] = 1 << 30
        else:
            order[i] = gains[i] * (1 << 20) + w.history[codes[i]]
            if codes[i] == w.killers[ply][0]:
                order[i] += 1 << 19
            elif codes[i] == w.killers[ply][1]:
                order[i] += 1 << 18
    best = -INF
    for i in range(n):
        if i < SELECTED:
            # the best remaining by a scan: the first of equals, as the sort below orders them
            pick = -1
            for j in range(n):
                if order[j] != PICKED and (pick < 0 or order[j] > order[pick]):
                    pick = j
            order[pick] = PICKED
        else:
            if i == SELECTED:
                # a node that gets this far usually tries every move: one sort, not a scan a move
                m = 0
                for j in range(n):
                    if order[j] != PICKED:
                        keys[m] = ((<int64_t>order[j]) << 16) | (0xFFFF - j)
                        m += 1
                qsort(keys, m, sizeof(int64_t), by_key_descending)
            pick = 0xFFFF - <int>(keys[i - SELECTED] & 0xFFFF)
        hc = hashes[pick] if hashed else state_hash(&children[pick * sb], sb)
        if i == 0:
            c = search(w, &children[pick * sb], hc, depth - 1, ply + 1,
                       from_parent(beta, gains[pick], margin), from_parent(alpha, gains[pick], margin), &cp)
        else:
            # the later moves rarely beat the first: a null window first (principal variation
            # search), a ply or two shallower for quiet late moves (late move reductions); a
            # move that beats alpha is searched again in full
            r = 0
            if depth >= 3 and i >= REDUCE_FROM and gains[pick] == 0:
                r = 1 if i < REDUCE_MORE or depth < 5 else 2
            c = search(w, &children[pick * sb], hc, depth - 1 - r, ply + 1,
                       from_parent(alpha + 1, gains[pick], margin), from_parent(alpha, gains[pick], margin), &cp)
            if r and not flag_load(&s.stop) and to_parent(c, gains[pick], margin) > alpha:
                c = search(w, &children[pick * sb], hc, depth - 1, ply + 1,
                           from_parent(alpha + 1, gains[pick], margin), from_parent(alpha, gains[pick], margin), &cp)
            if (not flag_load(&s.stop) and alpha + 1 < beta
                    and alpha < to_parent(c, gains[pick], margin) < beta):
                c = search(w, &children[pick * sb], hc, depth - 1, ply + 1,
                           from_parent(beta, gains[pick], margin), from_parent(alpha, gains[pick], margin), &cp)
        if flag_load(&s.stop):
            proven[0] = False
            return 0
        if w.repeated_ply < repeated:
            repeated = w.repeated_ply
        v = to_parent(c, gains[pick], margin)
        if not cp:
            all_proven = False
        if v > best:
            best = v
            best_move = codes[pick]
        if v > alpha:
            alpha = v
        if alpha >= beta:
            cut = True
            cut_proven = cp
            if gains[pick] == 0 and codes[pick] != w.killers[ply][0]:
                w.killers[ply][1] = w.killers[ply][0]
                w.killers[ply][0] = codes[pick]
            if w.history[codes[pick]] < (1 << 17):
                w.history[codes[pick]] += depth * depth
            break
    if cut:
        bound = BOUND_LOWER
        proven[0] = cut_proven
    else:
        bound = BOUND_UPPER if best <= alpha0 else BOUND_EXACT
        proven[0] = all_proven
    if repeated >= ply:
        tt_store(s, h, state, best, depth, best_move, bound, proven[0])
    w.repeated_ply = repeated
    return best


cdef void sort_root(RootMove *rm, int n) noexcept nogil:
    """Best first: higher score, an exact value before a bound, deeper before shallower."""
    cdef int i, j
    cdef RootMove t
    for i in range(1, n):
        t = rm[i]
        j = i - 1
        while j >= 0 and (rm[j].score < t.score or (rm[j].score == t.score and (
                (rm[j].bound != BOUND_EXACT and t.bound == BOUND_EXACT)
                or (rm[j].bound == t.bound and rm[j].depth < t.depth)))):
            rm[j + 1] = rm[j]
            j -= 1
        rm[j + 1] = t


cdef void root_search(Worker *w, const uint8_t *root_children, const uint64_t *root_hashes) noexcept nogil:
    """Iterative deepening over the root moves.  The first `multipv` moves of each iteration
    (best first by the last) get a full window, so their scores are values; the rest a window
    above the multipv-th best so far, so each is a value where it beats that, else a bound."""
    cdef Shared *s = w.s
    cdef int n = s.nroot, sb = s.k.state_bytes, margin = s.k.margin
    cdef RootMove rm[PLAY_MAX_MOVES]
    cdef int depth, i, j, searched, start, settled
    cdef bint completed
    cdef int32_t c, v, kth, alpha
    cdef bint cp
    memcpy(rm, s.root, n * sizeof(RootMove))
    w.path[0] = s.root_state
    w.path_hash[0] = state_hash(s.root_state, sb)
    if w.id:                          # helpers: another order, one ply deeper every other one
        for i in range(n):
            rm[i] = s.root[(i + w.id) % n]
    start = 1 + (w.id & 1)
    for depth in range(start, s.max_depth + 1):
        searched = 0
        completed = True
        for i in range(n):
            if rm[i].proven and rm[i].bound == BOUND_EXACT:
                searched += 1
                continue
            kth = -INF
            if searched >= s.multipv:
                # the multipv-th best of this iteration so far
                kth = kth_best(rm, i, s.multipv)
            alpha = kth
            if alpha > -INF:
                # a null window first: most moves only need to be shown no better than the kth
                c = search(w, &root_children[rm[i].index * sb], root_hashes[rm[i].index], depth - 1, 1,
                           from_parent(alpha + 1, rm[i].gain, margin), from_parent(alpha, rm[i].gain, margin), &cp)
                if not flag_load(&s.stop) and to_parent(c, rm[i].gain, margin) > alpha:
                    c = search(w, &root_children[rm[i].index * sb], root_hashes[rm[i].index], depth - 1, 1,
                               from_parent(INF, rm[i].gain, margin), from_parent(alpha, rm[i].gain, margin), &cp)
            else:
                c = search(w, &root_children[rm[i].index * sb], root_hashes[rm[i].index], depth - 1, 1,
                           from_parent(INF, rm[i].gain, margin), from_parent(alpha, rm[i].gain, margin), &cp)
            if flag_load(&s.stop) and depth > 1:
                completed = False
                break
            v = to_parent(c, rm[i].gain, margin)
            rm[i].score = v
            rm[i].depth = depth
            rm[i].proven = cp
            rm[i].bound = BOUND_EXACT if v > alpha or alpha == -INF else BOUND_UPPER
            searched += 1
        if w.id == 0:
            publish(s, rm, n, depth if completed else depth - 1)
        if flag_load(&s.stop):
            break
        sort_root(rm, n)
        settled = 0
        for i in range(n):
            if rm[i].proven:
                settled += 1
        if settled == n and rm[0].bound == BOUND_EXACT:
            break                     # every root move proven: nothing deeper can change them
    if w.id == 0:
        flag_store(&s.stop, 1)


cdef int32_t kth_best(const RootMove *rm, int upto, int k) noexcept nogil:
    """The k-th highest score among rm[0..upto-1] (each searched this iteration or proven)."""
    cdef int32_t top[PLAY_MAX_MOVES]
    cdef int m = 0, i, j
    cdef int32_t t
    for i in range(upto):
        t = rm[i].score
        j = m
        while j > 0 and top[j - 1] < t:
            top[j] = top[j - 1]
            j -= 1
        top[j] = t
        m += 1
    return top[k - 1] if k <= m else -INF


cdef void publish(Shared *s, const RootMove *rm, int n, int depth) noexcept nogil:
    spin_lock(&s.report_lock)
    memcpy(s.root, rm, n * sizeof(RootMove))
    sort_root(s.root, n)
    if depth > s.depth_done:
        s.depth_done = depth
    spin_unlock(&s.report_lock)


cdef int pv_step(Shared *s, const uint8_t *state, uint8_t *child, int16_t *code) noexcept nogil:
    """The best move of `state` by the transposition table, or by the tables at the leaves
    (the child best for the mover); 0 where neither knows one."""
    cdef PlayKernel *k = s.k
    cdef int sb = k.state_bytes, n, i, final, best = -1
    cdef uint8_t *children = <uint8_t *>malloc(<size_t>k.max_moves * sb)
    cdef int16_t codes[PLAY_MAX_MOVES]
    cdef int16_t gains[PLAY_MAX_MOVES]
    cdef int32_t score, v, best_v = -INF
    cdef Entry e
    if children == NULL:
        return 0
    n = k.moves(k.ctx, state, children, codes, gains, &final)
    if n > 0 and tt_probe(s, state_hash(state, sb), state, &e):
        for i in range(n):
            if codes[i] == e.move:
                best = i
    if n > 0 and best < 0 and oracle(s, state, &score):
        for i in range(n):
            if oracle(s, &children[i * sb], &score):
                v = to_parent(score, gains[i], k.margin)
                if v > best_v:
                    best_v = v
                    best = i
    if best >= 0:
        memcpy(child, &children[best * sb], sb)
        code[0] = codes[best]
    free(children)
    return best >= 0


def _capsule_kernel(capsule) -> int:
    if not PyCapsule_IsValid(capsule, SOWSOLVE_PLAY_CAPSULE):
        raise TypeError("not a play kernel capsule (sowsolve.PlayKernel)")
    return 0


cdef class Engine:
    """One game board's engine: its transposition table, weights and leaf tables; searches
    one position at a time (`run`), read while it runs (`status`, `report`), stopped by
    `stop`."""
    cdef Shared *s
    cdef object _capsule, _keep, _weights
    cdef int64_t _buckets
    #: whether a search has written the table since it was made or cleared (a new table is
    #: zeroed pages the system hands out as they are touched: clearing it would touch them all)
    cdef bint _written
    cdef readonly int state_bytes, margin, features, max_moves
    cdef readonly int64_t table_bytes

    def __cinit__(self, capsule, weights, int64_t table_bytes=1 << 26):
        _capsule_kernel(capsule)
        cdef PlayKernel *k = <PlayKernel *>PyCapsule_GetPointer(capsule, SOWSOLVE_PLAY_CAPSULE)
        if not (0 < k.state_bytes <= PLAY_STATE_MAX and 0 < k.max_moves <= PLAY_MAX_MOVES
                and 0 <= k.features <= PLAY_FEATURES):
            raise ValueError("the play kernel's sizes are out of range")
        self._weights = np.ascontiguousarray(weights, dtype=np.int32)
        if self._weights.shape[0] != k.features:
            raise ValueError(f"the game has {k.features} features, not {self._weights.shape[0]} weights")
        buckets = 1
        while buckets * 2 * 2 * sizeof(Entry) <= table_bytes:
            buckets *= 2
        self._buckets = buckets
        self.table_bytes = buckets * 2 * sizeof(Entry)
        self.s = <Shared *>calloc(1, sizeof(Shared))
        if self.s == NULL:
            raise MemoryError()
        self.s.tt = <Entry *>big_table_alloc(<size_t>self.table_bytes)   # zeroed, huge pages
        if self.s.tt == NULL:
            raise MemoryError(f"no room for a transposition table of {self.table_bytes:,} bytes")
        self.s.tt_mask = buckets - 1
        self.s.k = k
        cdef int32_t[::1] wv = self._weights
        self.s.weights = &wv[0] if k.features else NULL
        self._capsule = capsule
        self._keep = []
        self.state_bytes, self.margin = k.state_bytes, k.margin
        self.features, self.max_moves = k.features, k.max_moves

    def __dealloc__(self):
        if self.s != NULL:
            big_table_free(self.s.tt, <size_t>self.table_bytes)
            free(self.s.tiers)
            free(self.s)

    def set_weights(self, weights):
        w = np.ascontiguousarray(weights, dtype=np.int32)
        if w.shape[0] != self.features:
            raise ValueError(f"the game has {self.features} features, not {w.shape[0]} weights")
        self._weights = w
        cdef int32_t[::1] wv = self._weights
        self.s.weights = &wv[0] if self.features else NULL

    def add_tier(self, int tier, records, keys=None):
        """Hand a solved tier of a table of this board to the leaves: its 16-bit records (as
        the table's reader checked them) and, for a keyed tier, its sorted keys.  The arrays
        are kept alive by the engine."""
        if not 0 <= tier < 1 << 16:
            raise ValueError(f"no tier {tier}")
        rec = np.ascontiguousarray(records, dtype=np.uint16)
        cdef const uint16_t[::1] rv = rec
        cdef const uint64_t[::1] kv
        cdef OTier *grown
        if keys is not None:
            ks = np.ascontiguousarray(keys, dtype=np.uint64)
            if ks.shape[0] != rec.shape[0]:
                raise ValueError(f"tier {tier}: {ks.shape[0]} keys for {rec.shape[0]} records")
            if ks.shape[0] > 1 and not bool(np.all(ks[1:] > ks[:ks.shape[0] - 1])):
                raise ValueError(f"tier {tier}: keys not sorted")
            kv = ks
            self._keep.append(ks)
        self._keep.append(rec)
        if tier >= self.s.ntiers:
            grown = <OTier *>calloc(tier + 1, sizeof(OTier))
            if grown == NULL:
                raise MemoryError()
            if self.s.ntiers:
                memcpy(grown, self.s.tiers, self.s.ntiers * sizeof(OTier))
            free(self.s.tiers)
            self.s.tiers = grown
            self.s.ntiers = tier + 1
        self.s.tiers[tier].n = rec.shape[0]
        self.s.tiers[tier].records = &rv[0] if rec.shape[0] else NULL
        self.s.tiers[tier].keys = &kv[0] if keys is not None and rec.shape[0] else NULL

    def clear(self):
        """Forget every entry of the transposition table: a new generation, whose searches
        read the entries of the others as empty (the table is wiped at the 256th clear;
        nothing to do where no search has written it)."""
        if self._written:
            if self.s.generation == 255:
                with nogil:
                    memset(self.s.tt, 0, <size_t>self._buckets * 2 * sizeof(Entry))
                self.s.generation = 0
            else:
                self.s.generation += 1
            self._written = False

    def warm(self):
        """Touch every page of a new transposition table now, so that the first search does
        not pay for them (the system zeroes a fresh table's pages as they are first written:
        256 MB took the first 1,024 positions of a 0.1 s search 0.4 s).  A table a search has
        written is cleared instead.  Ctrl-C is seen between slices of 64 MB; the table reads
        as empty wherever the touching stopped (what it holds is zeros or entries of generations
        before this one)."""
        cdef char *at = <char *>self.s.tt
        cdef size_t left = <size_t>self._buckets * 2 * sizeof(Entry), piece
        if self._written:
            self.clear()
            return
        while left:
            piece = left if left < WARM_SLICE else WARM_SLICE
            with nogil:
                memset(at, 0, piece)          # zeros, or entries of older generations: empty alike
            at += piece
            left -= piece
            PyErr_CheckSignals()

    cdef int _check_state(self, bytes state) except -1:
        if len(state) != self.state_bytes:
            raise ValueError(f"a state of this game has {self.state_bytes} bytes, not {len(state)}")
        return 0

    def moves(self, bytes state):
        """[(code, gain, child state)] of a state; [] when the game is over there."""
        self._check_state(state)
        cdef uint8_t *children = <uint8_t *>malloc(<size_t>self.max_moves * self.state_bytes)
        cdef int16_t codes[PLAY_MAX_MOVES]
        cdef int16_t gains[PLAY_MAX_MOVES]
        cdef int final = 0, n, i
        if children == NULL:
            raise MemoryError()
        try:
            n = self.s.k.moves(self.s.k.ctx, <const uint8_t *><const char *>state, children, codes,
                               gains, &final)
            return [(codes[i], gains[i], bytes(children[i * self.state_bytes:(i + 1) * self.state_bytes]))
                    for i in range(n)]
        finally:
            free(children)

    def final(self, bytes state):
        """The score of a state where the game is over, None elsewhere."""
        self._check_state(state)
        cdef uint8_t *children = <uint8_t *>malloc(<size_t>self.max_moves * self.state_bytes)
        cdef int16_t codes[PLAY_MAX_MOVES]
        cdef int16_t gains[PLAY_MAX_MOVES]
        cdef int final = 0, n
        if children == NULL:
            raise MemoryError()
        n = self.s.k.moves(self.s.k.ctx, <const uint8_t *><const char *>state, children, codes, gains,
                           &final)
        free(children)
        return None if n else final_score(final, self.margin)

    def features_of(self, bytes state):
        self._check_state(state)
        cdef int32_t f[PLAY_FEATURES]
        self.s.k.features_of(self.s.k.ctx, <const uint8_t *><const char *>state, f)
        return [f[i] for i in range(self.features)]

    def horizon(self, bytes state):
        """What the game's look at a state on the horizon says (the search reads it in place of
        `moves` and `features_of` there): ("over", its score), ("wins at once", None) or
        ("goes on", features); ("not understood", the answer) for any other answer (the search
        then makes the moves); None where the game has no such look."""
        self._check_state(state)
        cdef int32_t f[PLAY_FEATURES]
        cdef int final = 0, look
        if self.s.k.horizon == NULL:
            return None
        look = self.s.k.horizon(self.s.k.ctx, <const uint8_t *><const char *>state, f, &final)
        if look == 0:
            return "over", final_score(final, self.margin)
        if look == PLAY_WINS_AT_ONCE and not self.margin:
            return "wins at once", None
        if look == 1:
            return "goes on", [f[i] for i in range(self.features)]
        return "not understood", look

    def evaluate(self, bytes state):
        self._check_state(state)
        return evaluate(self.s, <const uint8_t *><const char *>state)

    def leaf(self, bytes state):
        """The score the tables at the leaves give a state, None where they hold none."""
        self._check_state(state)
        cdef int32_t score
        return score if oracle(self.s, <const uint8_t *><const char *>state, &score) else None

    def run(self, bytes state, double seconds=0, int64_t nodes=0, int threads=1, int multipv=0,
            uint64_t seed=0, int depth=0):
        """Search `state` until `seconds` pass or `nodes` are searched (0: no limit of that
        kind), every root move proven, `depth` plies are searched (0: MAX_DEPTH, the deepest),
        or `stop`.  Releases the GIL
        while it runs, so another thread may read `status`/`report` and call `stop`."""
        self._check_state(state)
        cdef Shared *s = self.s
        cdef int final = 0, n, i, t, sb = self.state_bytes
        self._written = True
        cdef uint64_t x
        cdef Worker *workers
        if threads < 1:
            raise ValueError(f"threads must be at least 1, not {threads}")
        if not 0 <= depth <= MAX_DEPTH:
            raise ValueError(f"depth must be from 1 to {MAX_DEPTH} (0: no limit), not {depth}")
        codes = np.zeros(PLAY_MAX_MOVES, dtype=np.int16)
        gains = np.zeros(PLAY_MAX_MOVES, dtype=np.int16)
        cdef int16_t[::1] cv = codes
        cdef int16_t[::1] gv = gains
        n = s.k.moves(s.k.ctx, <const uint8_t *><const char *>state, s.root_children, &cv[0], &gv[0], &final)
        s.nroot = n
        memcpy(s.root_state, <const uint8_t *><const char *>state, sb)
        s.depth_done = 0
        s.nodes = 0
        s.stop = 0
        s.max_nodes = nodes
        s.max_depth = depth if depth > 0 else MAX_DEPTH
        s.multipv = n if multipv <= 0 or multipv > n else multipv
        s.seed = seed
        s.threads = threads
        s.started = now()
        s.deadline = s.started + seconds if seconds > 0 else 0
        order = list(range(n))
        if seed:
            np.random.default_rng(seed).shuffle(order)
        for i in range(n):
            j = order[i]
            s.root[i].code = cv[j]
            s.root[i].gain = gv[j]
            s.root[i].index = j
            s.root[i].score = -INF
            s.root[i].depth = 0
            s.root[i].bound = BOUND_UPPER
            s.root[i].proven = 0
        if n == 0:
            return final_score(final, self.margin)
        cdef uint64_t root_hashes[PLAY_MAX_MOVES]
        for i in range(n):
            root_hashes[i] = state_hash(&s.root_children[i * sb], sb)
        workers = <Worker *>calloc(threads, sizeof(Worker))
        if workers == NULL:
            raise MemoryError()
        try:
            for t in range(threads):
                workers[t].s = s
                workers[t].id = t
                workers[t].children = <uint8_t *>malloc(<size_t>MAX_PLY * self.max_moves * sb)
                workers[t].codes = <int16_t *>malloc(MAX_PLY * self.max_moves * sizeof(int16_t))
                workers[t].gains = <int16_t *>malloc(MAX_PLY * self.max_moves * sizeof(int16_t))
                workers[t].order = <int32_t *>malloc(MAX_PLY * self.max_moves * sizeof(int32_t))
                workers[t].keys = <int64_t *>malloc(MAX_PLY * self.max_moves * sizeof(int64_t))
                workers[t].hashes = <uint64_t *>malloc(MAX_PLY * self.max_moves * sizeof(uint64_t))
                if (workers[t].children == NULL or workers[t].codes == NULL or workers[t].gains == NULL
                        or workers[t].order == NULL or workers[t].keys == NULL or workers[t].hashes == NULL):
                    raise MemoryError()
                for i in range(MAX_PLY):
                    workers[t].killers[i][0] = -1
                    workers[t].killers[i][1] = -1
            with nogil:
                for t in prange(threads, num_threads=threads, schedule="static", chunksize=1):
                    root_search(&workers[t], s.root_children, root_hashes)
            for t in range(threads):
                count_add(&s.nodes, workers[t].nodes & POLL)
        finally:
            for t in range(threads):
                free(workers[t].children)
                free(workers[t].codes)
                free(workers[t].gains)
                free(workers[t].order)
                free(workers[t].keys)
                free(workers[t].hashes)
            free(workers)
        return None

    def stop(self):
        flag_store(&self.s.stop, 1)

    def status(self):
        """(depth completed, nodes, seconds, best code or None, its score, proven)."""
        cdef Shared *s = self.s
        spin_lock(&s.report_lock)
        depth, nroot = s.depth_done, s.nroot
        best = (s.root[0].code, s.root[0].score, s.root[0].proven) if nroot and s.root[0].depth else (None, None, False)
        spin_unlock(&s.report_lock)
        return depth, count_load(&s.nodes), now() - s.started, best[0], best[1], bool(best[2])

    def report(self):
        """The root moves, best first: [(code, gain, score, exact value (not a bound),
        proven, depth, child index)]."""
        cdef Shared *s = self.s
        spin_lock(&s.report_lock)
        out = [(s.root[i].code, s.root[i].gain, s.root[i].score, s.root[i].bound == BOUND_EXACT,
                bool(s.root[i].proven), s.root[i].depth, s.root[i].index) for i in range(s.nroot)]
        spin_unlock(&s.report_lock)
        return out

    def principal_variation(self, bytes state, int limit=40):
        """Codes of the best line from `state` as the transposition table and the leaf tables
        give it, until they know no move, the game ends, a state repeats, or `limit` plies."""
        self._check_state(state)
        cdef int sb = self.state_bytes
        cdef int16_t code
        line, seen = [], {state}
        current = bytearray(state)
        child = bytearray(sb)
        cdef uint8_t[::1] cur_v, child_v
        while len(line) < limit:
            cur_v = current
            child_v = child
            if not pv_step(self.s, &cur_v[0], &child_v[0], &code):
                break
            line.append(code)
            key = bytes(child)
            if key in seen:
                break
            seen.add(key)
            current = bytearray(child)
        return line
