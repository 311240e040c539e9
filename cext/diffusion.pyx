# cython: language_level=3
"""Diffusion kernel: move generation, perfect ranking inside a tier, un-moves, perft.

Positions are boards of 2n pits (top row left to right, then bottom row left to right), each
holding 0..5 stones; the tier is the number of stones on the board.  The table stores only
positions with A to move: a position with B to move is looked up as its 180-degree turn, which
is the reversal of the pit sequence (RULES.md, "Symmetry").

Ranking.  The pits fall into n turn pairs (top c, bottom n-1-c), which the turn swaps.  Pairs
0..h-1 form half 1, the rest half 2, so the turn maps each half onto itself.  A half is coded in
base 6; inside tier s the index is

    offset[s][s1] + rank1(code1) * count2[s - s1] + rank2(code2)

with s1 the stones in half 1 and rank_h the rank of a code among the codes of its half with the
same stone count.  Because the turn keeps the halves, a child's stored index is found by adding
per-pit weights to the parent's turned codes, and children of neighbouring indices fall into a
few small blocks of the tier (cache friendly).
"""
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy


cdef extern from *:
    int __builtin_ctz(unsigned x) nogil

cdef extern from "diffusion_lanes.h" nogil:
    int sowsolve_lanes_available() noexcept
    int diffusion_lanes_children(const uint8_t *m0, const uint8_t *m1, uint32_t nonzero,
                                 const int64_t *entries, int columns, const int64_t *row,
                                 int stride, const int32_t *window, int dmin,
                                 const int32_t *rank0, const int32_t *rank1, int32_t t0, int32_t t1,
                                 int tier, int *child_tier, int64_t *child_index) noexcept

import operator

import numpy as np
cimport numpy as cnp

from kernel_api cimport (PROOF_INF, GameKernel, PlayKernel, REC_LOSS, REC_MAKE, REC_WIN, SOWSOLVE_KERNEL_CAPSULE,
                         SOWSOLVE_PLAY_CAPSULE, SignalPoll, poll_signals, raise_pending)

cnp.import_array()

cdef enum:
    MAX_PITS = 16        # n <= 8 columns
    SLOTS = 5
    MAX_STONES = 5       # a pit never holds more
    LANES_PAD = 32       # zeros either side of the lanes' copy of hcount[1]: its windows of 16

MAX_COLS = MAX_PITS // 2
# HalfCode as a numpy record (its fields at the offsets C gives them; checked against sizeof)
HALF_CODE = np.dtype({"names": ["moves", "turned", "rank", "nonzero", "stones"],
                      "formats": [(np.uint8, MAX_PITS), np.int32, np.int32, np.uint16, np.uint8],
                      "offsets": [0, 16, 20, 24, 26], "itemsize": 32})


cdef struct MoveDelta:
    int32_t dt0                  # change of the turned code of half 0, of half 1
    int32_t dt1
    int16_t doffset              # change of the row of `offsets` read: ds1 - lost * stride
    int8_t dcount                # change of the stones of half 1 read in hcount[1]: -(lost + ds1)
    int8_t lost                  # stones lost to the stores (the child's tier is tier - lost)


cdef struct HalfCode:
    # what expand reads of one half code, in one 32-byte record (one cache line's half): a
    # position's two codes are two reads, not ten from five tables
    uint8_t moves[MAX_PITS]      # per pit (board order): its stones << 5 if the pit is the
                                 #   half's, and bit j set where slot j of the pit deals to a pit
                                 #   of the half that holds 5 (half 0: or to a store), so that the
                                 #   OR of a position's two halves' bytes of pit p is p's column
                                 #   of `move` (a << 5 | full)
    int32_t turned               # the code of its turned image (same half)
    int32_t rank                 # its rank among the codes of the same sum (hrank)
    uint16_t nonzero             # mask of its non-empty pits
    uint8_t stones               # its stones (hsum)
    uint8_t unused[5]


cdef struct DiffCtx:
    int n                        # columns
    int npits
    int max_tier
    int8_t slots[MAX_PITS][SLOTS]  # target pit of each slot, -1 for a store
    uint8_t owner[MAX_PITS]      # 0: block A, 1: block B
    int m[2]                     # pits per half
    int8_t half_pits[2][MAX_PITS]  # pit at each code digit, per half
    uint8_t half_of[MAX_PITS]
    int32_t weight[MAX_PITS]     # base-6 weight of the pit in its half's code
    int32_t turned_weight[MAX_PITS]  # weight of the pit's turned image
    int stride                   # row length of offsets: 5*m[0] + 2
    const int32_t *hrank[2]      # code -> rank among codes of the same sum
    const uint8_t *hsum[2]       # code -> stones
    const int32_t *hcount[2]     # stones -> number of codes
    const int32_t *hstart[2]     # stones -> first position in hcodes
    const int32_t *hcodes[2]     # codes grouped by stones, ascending
    const int64_t *offsets       # [tier][s1] -> first index, row length `stride`
    const int64_t *tier_size
    const int32_t *hpotential[2]  # code -> its pits' share of the potential (level)
    # what expand reads per half code instead of working it out (precomputed once per board)
    const HalfCode *hcode[2]
    const HalfCode *hslot[2]     # the same records in the order of pcodes (a member's slots)
    int32_t ncodes[2]            # 6 ** m[h]
    uint16_t block_mask[2]       # pits of block A, of block B
    # moves of one stone (each to its pit's first slot) that take a stone of pit p out of its
    # owner's block (to a store or into the other block): the race both sides run (play layer)
    int32_t pips[MAX_PITS]
    # move[p][a][full] for pit p scooping a stones, `full` the slots (bit j: slot j) whose
    # target is a store or holds 5: the change of the turned codes, of the stones in half 1's
    # turned image (half 0), and the stones lost to the stores
    MoveDelta move[MAX_PITS][SLOTS + 1][1 << SLOTS]
    # the sweep's enumeration by level (n <= 6: a half code fits 16 bits, a member is
    # slot0 << 16 | slot1, a slot a code's place in pcodes): per half, its codes sorted by
    # (stones, potential); pstart[h][s * pstride[h] + v] where those of s stones and potential
    # v start; pvalues[h][pfirst[h][s] .. pfirst[h][s + 1] - 1] the potentials that occur
    # among the codes of s stones
    const int32_t *pcodes[2]
    const int32_t *pstart[2]
    int32_t pstride[2]
    const int32_t *pvalues[2]
    const int32_t *pfirst[2]
    int32_t level_count
    # the same moves for diffusion_lanes_children (see diffusion_lanes.h): packed in 64 bits
    # each, and hcount[1] with LANES_PAD zeros on either side for its window of 16 counts
    int64_t lanes_move[MAX_PITS][(SLOTS + 1) << SLOTS]
    const int32_t *lanes_count   # hcount[1], padded
    int32_t dmin                 # least dcount of any move
    bint lanes                   # children computed by diffusion_lanes_children (this CPU has it)


cdef inline bint block_empty(const DiffCtx *c, const uint8_t *board, int who) noexcept nogil:
    cdef int p
    for p in range(c.npits):
        if c.owner[p] == who and board[p] != 0:
            return False
    return True


cdef inline int final_outcome(const DiffCtx *c, const uint8_t *board) noexcept nogil:
    """Outcome for A to move: REC_WIN if A's block is empty, REC_LOSS if B's is, else 0."""
    if block_empty(c, board, 0):
        return REC_WIN
    if block_empty(c, board, 1):
        return REC_LOSS
    return 0


cdef inline int play_move(const DiffCtx *c, const uint8_t *board, int pit, uint8_t *out) noexcept nogil:
    """Scoop `pit` and deal it around; returns the stones that went to the stores."""
    cdef int j, q, lost = 0
    cdef int a = board[pit]
    memcpy(out, board, c.npits)
    out[pit] = 0
    for j in range(a):
        q = c.slots[pit][j]
        if q < 0 or out[q] == MAX_STONES:
            lost += 1
        else:
            out[q] += 1
    return lost


cdef inline void decode_half(const DiffCtx *c, int h, int32_t code, uint8_t *board) noexcept nogil:
    cdef int j
    for j in range(c.m[h]):
        board[c.half_pits[h][j]] = code % 6
        code = code // 6


cdef inline void half_stone_range(const DiffCtx *c, int tier, int *lo, int *hi) noexcept nogil:
    """The stones half 0 can hold in a tier of `tier` stones: from what half 1 cannot hold
    to what half 0 can."""
    lo[0] = tier - MAX_STONES * c.m[1]
    if lo[0] < 0:
        lo[0] = 0
    hi[0] = MAX_STONES * c.m[0]
    if hi[0] > tier:
        hi[0] = tier


cdef inline int half_codes(const DiffCtx *c, int tier, int64_t index, int32_t *code) noexcept nogil:
    """The two half codes of (tier, index) in code[0], code[1]; -1 when out of range."""
    cdef const int64_t *row
    cdef int s1, lo, hi
    cdef int64_t rest, count2
    if tier < 0 or tier > c.max_tier or index < 0 or index >= c.tier_size[tier]:
        return -1
    row = c.offsets + <int64_t>tier * c.stride
    half_stone_range(c, tier, &lo, &hi)
    s1 = hi
    while s1 > lo and row[s1] > index:
        s1 -= 1
    rest = index - row[s1]
    count2 = c.hcount[1][tier - s1]
    code[0] = c.hcodes[0][c.hstart[0][s1] + rest // count2]
    code[1] = c.hcodes[1][c.hstart[1][tier - s1] + rest % count2]
    return 0


cdef inline int unrank(const DiffCtx *c, int tier, int64_t index, uint8_t *board) noexcept nogil:
    """Board of (tier, index); -1 when out of range."""
    cdef int32_t code[2]
    if half_codes(c, tier, index, code) < 0:
        return -1
    decode_half(c, 0, code[0], board)
    decode_half(c, 1, code[1], board)
    return 0


cdef int32_t level(const void *ctx, int tier, int64_t index) noexcept nogil:
    """RULES.md's potential of a stored position: it falls along every move, so it orders a
    tier for the solver's sweep."""
    cdef const DiffCtx *c = <const DiffCtx *>ctx
    cdef int32_t code[2]
    if half_codes(c, tier, index, code) < 0:
        return -1
    return c.hpotential[0][code[0]] + c.hpotential[1][code[1]]


cdef inline int64_t rank_codes(const DiffCtx *c, int tier, int32_t code1, int32_t code2) noexcept nogil:
    cdef int s1 = c.hsum[0][code1]
    return (c.offsets[<int64_t>tier * c.stride + s1]
            + <int64_t>c.hrank[0][code1] * c.hcount[1][tier - s1] + c.hrank[1][code2])


cdef inline int64_t rank_board(const DiffCtx *c, const uint8_t *board, int *tier) noexcept nogil:
    cdef int p, s = 0
    cdef int32_t code[2]
    code[0] = 0
    code[1] = 0
    for p in range(c.npits):
        s += board[p]
        code[c.half_of[p]] += board[p] * c.weight[p]
    tier[0] = s
    return rank_codes(c, s, code[0], code[1])


cdef int expand(const void *ctx, int tier, int64_t index, int *child_tier,
                int64_t *child_index, uint16_t *final_record) noexcept nogil:
    """Children of a stored position (A to move), each as the index of its turned image: the
    half codes' precomputed masks, digits and turned codes, and each move's effect on the
    turned codes read from `move` by the scooped pit, its stones and which slots are full."""
    cdef const DiffCtx *c = <const DiffCtx *>ctx
    cdef int32_t code[2]
    if half_codes(c, tier, index, code) < 0:
        return -1
    return expand_codes(c, tier, c.hcode[0] + code[0], c.hcode[1] + code[1], child_tier,
                        child_index, final_record)


cdef inline int expand_codes(const DiffCtx *c, int tier, const HalfCode *h0, const HalfCode *h1,
                             int *child_tier, int64_t *child_index,
                             uint16_t *final_record) noexcept nogil:
    cdef const uint8_t *m0 = &h0.moves[0]
    cdef const uint8_t *m1 = &h1.moves[0]
    cdef uint32_t nonzero = h0.nonzero | h1.nonzero
    cdef int32_t t0, t1
    cdef int p, s1, nchildren = 0
    cdef const MoveDelta *e
    # the context's tables in locals: the stores below cannot then make the compiler read them
    # again for every child
    cdef const MoveDelta *moves = &c.move[0][0][0]
    cdef const int64_t *row
    cdef const int32_t *count
    cdef const int32_t *rank0 = c.hrank[0]
    cdef const int32_t *rank1 = c.hrank[1]
    if (nonzero & c.block_mask[0]) == 0:
        final_record[0] = REC_MAKE(REC_WIN, 0)
        return 0
    if (nonzero & c.block_mask[1]) == 0:
        final_record[0] = REC_MAKE(REC_LOSS, 0)
        return 0
    t0 = h0.turned
    t1 = h1.turned
    s1 = h0.stones
    row = c.offsets + <int64_t>tier * c.stride + s1      # offsets[tier][s1]
    count = c.hcount[1] + (tier - s1)                     # hcount[1][stones of half 1]
    if c.lanes:
        return diffusion_lanes_children(m0, m1, nonzero, &c.lanes_move[0][0], (SLOTS + 1) << SLOTS,
                                        row, c.stride, c.lanes_count + (tier - s1) + c.dmin, c.dmin,
                                        rank0, rank1, t0, t1, tier, child_tier, child_index)
    while nonzero:
        p = __builtin_ctz(nonzero)
        nonzero &= nonzero - 1
        # move[p][a][full]: the OR of the halves' bytes is a << 5 | full
        e = moves + p * ((SLOTS + 1) << SLOTS) + (m0[p] | m1[p])
        child_tier[nchildren] = tier - e.lost
        # offsets[child][ns1] + rank0(child's half 0) * hcount[1][child - ns1] + rank1(...)
        child_index[nchildren] = (row[e.doffset] + <int64_t>rank0[t0 + e.dt0] * count[e.dcount]
                                  + rank1[t1 + e.dt1])
        nchildren += 1
    return nchildren


cdef int level_members(const void *ctx, int tier, uint32_t *members, int64_t *first) noexcept nogil:
    """Every position of `tier` as slot0 << 16 | slot1 (a slot: the place of a half's code in
    pcodes, where hslot keeps its record), sorted by level (the potential, which is the sum of
    the halves' potentials): for each stone count s1 of half 0 and each pair of half potentials
    (v0, v1) that occur, the block of all pairs of codes with those stones and potentials
    belongs to level v0 + v1.  A first pass counts each level, a second writes each block at
    its level's cursor; inside a level, by s1, then v0, then code0, then code1 (in pcodes'
    order, so a run of members reads hslot[1] in order)."""
    cdef const DiffCtx *c = <const DiffCtx *>ctx
    cdef int pass_, s1, s2, lo, hi, i, j, a, b
    cdef int32_t v0, v1, L, levels = c.level_count
    cdef int64_t n0, n1, w, k0, k1
    cdef int64_t *cursor
    if tier < 0 or tier > c.max_tier:
        return -1
    half_stone_range(c, tier, &lo, &hi)
    cursor = <int64_t *>calloc(levels + 1, sizeof(int64_t))
    if cursor == NULL:
        return -1
    for pass_ in range(2):
        for s1 in range(lo, hi + 1):
            s2 = tier - s1
            for i in range(c.pfirst[0][s1], c.pfirst[0][s1 + 1]):
                v0 = c.pvalues[0][i]
                k0 = <int64_t>s1 * c.pstride[0] + v0
                n0 = c.pstart[0][k0 + 1] - c.pstart[0][k0]
                for j in range(c.pfirst[1][s2], c.pfirst[1][s2 + 1]):
                    v1 = c.pvalues[1][j]
                    k1 = <int64_t>s2 * c.pstride[1] + v1
                    n1 = c.pstart[1][k1 + 1] - c.pstart[1][k1]
                    L = v0 + v1
                    if pass_ == 0:
                        cursor[L + 1] += n0 * n1
                        continue
                    w = cursor[L]
                    for a in range(c.pstart[0][k0], c.pstart[0][k0 + 1]):
                        for b in range(c.pstart[1][k1], c.pstart[1][k1 + 1]):
                            members[w] = (<uint32_t>a << 16) | <uint32_t>b
                            w += 1
                    cursor[L] = w
        if pass_ == 0:
            for L in range(levels):
                cursor[L + 1] += cursor[L]
            for L in range(levels + 1):
                first[L] = cursor[L]
    free(cursor)
    return 0 if first[levels] == c.tier_size[tier] else -1


cdef int expand_member(const void *ctx, int tier, uint32_t member, int64_t *index, int *child_tier,
                       int64_t *child_index, uint16_t *final_record) noexcept nogil:
    """expand of a member of level_members: its index ranked from its halves' records (read
    from hslot, where a run of members finds them side by side), no unranking."""
    cdef const DiffCtx *c = <const DiffCtx *>ctx
    cdef int32_t slot0 = <int32_t>(member >> 16), slot1 = <int32_t>(member & 0xFFFF)
    cdef const HalfCode *h0
    cdef const HalfCode *h1
    cdef int s1
    if (tier < 0 or tier > c.max_tier or slot0 >= c.ncodes[0] or slot1 >= c.ncodes[1]
            or c.hslot[0] == NULL or c.hslot[1] == NULL):
        return -1
    h0 = c.hslot[0] + slot0
    h1 = c.hslot[1] + slot1
    s1 = h0.stones
    if s1 + h1.stones != tier:
        return -1
    index[0] = (c.offsets[<int64_t>tier * c.stride + s1]
                + <int64_t>h0.rank * c.hcount[1][tier - s1] + h1.rank)
    return expand_codes(c, tier, h0, h1, child_tier, child_index, final_record)


cdef void perft_rec(const DiffCtx *c, const uint8_t *board, int depth, int ply,
                    int64_t *counts, SignalPoll *poll) noexcept nogil:
    cdef uint8_t child[MAX_PITS]
    cdef int p
    if final_outcome(c, board) or poll_signals(poll):
        return
    for p in range(c.npits):
        if board[p] == 0:
            continue
        play_move(c, board, p, child)
        counts[ply] += 1
        if ply + 1 < depth:
            perft_rec(c, child, depth, ply + 1, counts, poll)


def potential_weights(slots):
    """The least positive integer pit weights under which every move lowers the potential
    sum(weight * stones) (RULES.md, "End"): a move scooping a stones from pit p removes
    a * weight[p] and adds at most the weights of its first a slots' pits (a stone dealt to a
    store or a full pit adds nothing), so weight[p] must exceed that sum / a for a = 1..5.
    Each weight is raised to what its inequalities need until none changes; None if that does
    not settle (no board of up to 10 columns is such)."""
    weights = [1] * len(slots)
    for _ in range(100000):
        changed = False
        for p, targets in enumerate(slots):
            dealt = 0
            for a in range(1, SLOTS + 1):
                if targets[a - 1] >= 0:
                    dealt += weights[targets[a - 1]]
                if a * weights[p] <= dealt:
                    weights[p] = dealt // a + 1
                    changed = True
        if not changed:
            return weights
    return None


def _counts_of_half(object m):
    """Per-code stones and rank-within-stones for a half of m pits, plus grouped codes."""
    size = 6 ** m
    codes = np.arange(size, dtype=np.int64)
    sums = np.zeros(size, dtype=np.int64)
    rest = codes.copy()
    for _ in range(m):
        sums += rest % 6
        rest //= 6
    order = np.argsort(sums, kind="stable")          # ascending code inside each sum
    count = np.bincount(sums, minlength=5 * m + 1).astype(np.int32)
    start = np.zeros(5 * m + 2, dtype=np.int32)
    start[1:] = np.cumsum(count)
    rank = np.empty(size, dtype=np.int32)
    rank[order] = np.arange(size, dtype=np.int32) - start[sums[order]]
    return (sums.astype(np.uint8), rank, count, start[:5 * m + 1].copy(), order.astype(np.int32))



# --- the play layer (the analysis engine, engine.pyx) -------------------------------------------
# A state is the board (top row left to right, then the bottom row), then the side to move
# (0 A, 1 B).  A move's code is the pit.
FEATURES = ("block_stones", "block_empty_pits", "block_pips")


cdef int play_moves(const void *ctx, const uint8_t *state, uint8_t *children, int16_t *codes,
                    int16_t *gains, int *final) noexcept nogil:
    cdef const DiffCtx *c = <const DiffCtx *>ctx
    cdef int side = state[c.npits], p, n = 0, width = c.npits + 1
    if block_empty(c, state, side):
        final[0] = 1                # the owner of the empty block wins
        return 0
    if block_empty(c, state, side ^ 1):
        final[0] = -1
        return 0
    for p in range(c.npits):
        if state[p] == 0:
            continue
        play_move(c, state, p, &children[n * width])
        children[n * width + c.npits] = side ^ 1
        codes[n] = p
        # the end the move makes (its mover's: +1 won, -1 lost), as the child's moves() would
        # tell it; the side to move there wins by its own block's emptying
        if block_empty(c, &children[n * width], side ^ 1):
            gains[n] = -1
        elif block_empty(c, &children[n * width], side):
            gains[n] = 1
        else:
            gains[n] = 0
        n += 1
    return n


cdef void play_features(const void *ctx, const uint8_t *state, int32_t *f) noexcept nogil:
    """From the side to move, who wins when its own block empties: stones in the other block
    less stones in its own, its own empty pits less the other's, and the pips of the other
    block less its own (each stone counted by the one-stone moves that take it out of its
    block: how far each side is from emptying its block)."""
    cdef const DiffCtx *c = <const DiffCtx *>ctx
    cdef int side = state[c.npits], p, sign
    f[0] = 0
    f[1] = 0
    f[2] = 0
    for p in range(c.npits):
        sign = 1 if c.owner[p] != side else -1
        f[0] += sign * state[p]
        f[2] += sign * state[p] * c.pips[p]
        if state[p] == 0:
            f[1] -= sign
    return


cdef int play_locate(const void *ctx, const uint8_t *state, int *tier, uint64_t *where) noexcept nogil:
    """Tier and index of the stored position: with B to move, the board turned (reversed)."""
    cdef const DiffCtx *c = <const DiffCtx *>ctx
    cdef uint8_t turned[MAX_PITS]
    cdef const uint8_t *board = state
    cdef int p, stones = 0
    for p in range(c.npits):
        stones += state[p]
    if stones > c.max_tier:
        return 0
    if state[c.npits]:
        for p in range(c.npits):
            turned[p] = state[c.npits - 1 - p]
        board = turned
    where[0] = <uint64_t>rank_board(c, board, tier)
    return 1


# --- the proof layer (the analysis engine's df-pn search, proofsearch.pyx) --------------------
# A key packs a position for the proof search: 3 bits a pit in board order, the side to move
# above them.  A position and its 180-degree turn with the other side to move have one value
# (RULES.md, "Symmetry"), so the key is the lesser of the two packings.  At most 16 pits: 49
# bits.
cdef inline uint64_t pack_state(const DiffCtx *c, const uint8_t *state) noexcept nogil:
    cdef int p, n = c.npits, side = state[c.npits]
    cdef uint64_t forward = 0, turned = 0
    for p in range(n):
        forward |= (<uint64_t>state[p]) << (3 * p)
        turned |= (<uint64_t>state[n - 1 - p]) << (3 * p)
    forward |= (<uint64_t>side) << (3 * n)
    turned |= (<uint64_t>(side ^ 1)) << (3 * n)
    return forward if forward < turned else turned


cdef inline int unpack_key(const DiffCtx *c, uint64_t key, uint8_t *state) noexcept nogil:
    """The state of a key (0), or -1 where the key is no position of the board (a pit above 5
    stones, bits above the side's, no stone at all)."""
    cdef int p, n = c.npits, stones, total = 0
    if key >> (3 * n + 1):
        return -1
    for p in range(n):
        stones = (key >> (3 * p)) & 7
        if stones > MAX_STONES:
            return -1
        state[p] = stones
        total += stones
    state[n] = (key >> (3 * n)) & 1
    return 0 if total else -1        # the empty board is no position (and key 0 no key)


cdef inline int hint_of(const DiffCtx *c, const uint8_t *state, uint32_t *phi,
                        uint32_t *delta) noexcept nogil:
    """The proof search's first guess of a position's numbers (1 and the numbers themselves
    for a final one; else 0): the side to move wins when its own block empties, so proving
    that it wins costs more the more stones its block holds, proving that it loses the more
    the other block holds (each plus one, squared).  Measured against no guess (1, 1) on
    positions of random play, 50,000 expansions each: 111 of 134 settled against 107 on 2x4
    with 2 stones a pit, 20 of 296 against 13 on 2x6."""
    cdef int side = state[c.npits], p, mine = 1, theirs = 1
    if block_empty(c, state, side):
        phi[0] = 0
        delta[0] = PROOF_INF
        return 1
    if block_empty(c, state, side ^ 1):
        phi[0] = PROOF_INF
        delta[0] = 0
        return 1
    for p in range(c.npits):
        if c.owner[p] == side:
            mine += state[p]
        else:
            theirs += state[p]
    phi[0] = mine * mine
    delta[0] = theirs * theirs
    return 0


cdef int expand_key(const void *ctx, uint64_t key, uint64_t *child_key, uint32_t *child_hint,
                    uint16_t *final_record) noexcept nogil:
    cdef const DiffCtx *c = <const DiffCtx *>ctx
    cdef uint8_t state[MAX_PITS + 1]
    cdef uint8_t children[MAX_PITS * (MAX_PITS + 1)]
    cdef int16_t codes[MAX_PITS]
    cdef int16_t gains[MAX_PITS]
    cdef int n, i, final = 0, width = c.npits + 1
    if unpack_key(c, key, state) < 0:
        return -1
    n = play_moves(ctx, state, children, codes, gains, &final)
    if n == 0:                 # a block is empty (a position that is not over has a move)
        final_record[0] = REC_MAKE(REC_WIN if final > 0 else REC_LOSS, 0)
        return 0
    for i in range(n):
        child_key[i] = pack_state(c, &children[i * width])
        if child_hint != NULL:
            hint_of(c, &children[i * width], &child_hint[2 * i], &child_hint[2 * i + 1])
    return n


cdef int proof_hint(const void *ctx, uint64_t key, uint32_t *phi, uint32_t *delta) noexcept nogil:
    """hint_of a packed position (1 for a final one; else 0)."""
    cdef const DiffCtx *c = <const DiffCtx *>ctx
    cdef uint8_t state[MAX_PITS + 1]
    phi[0] = 1
    delta[0] = 1
    if unpack_key(c, key, state) < 0:
        return 0
    return hint_of(c, state, phi, delta)


cdef class DiffusionKernel:
    """Kernel of one Diffusion board: owns the tables, hands out the GameKernel capsule."""
    cdef DiffCtx ctx
    cdef GameKernel kernel
    cdef PlayKernel play
    cdef object _keep
    cdef readonly int cols, variant, max_tier, npits
    cdef readonly bint lanes       # children computed in vector lanes (False: the scalar loop)
    cdef readonly object tier_sizes
    cdef readonly object weights

    def __cinit__(self, int cols, int variant, int max_tier, slots, owner, lanes=True):
        cdef int p, j, h, c, pos
        cdef MoveDelta *e
        if not 1 <= cols <= MAX_COLS:
            raise ValueError(f"the kernel supports 1 to {MAX_COLS} columns, not {cols}")
        self.cols = cols
        self.variant = variant
        self.npits = 2 * cols
        self.max_tier = max_tier
        self.ctx.n = cols
        self.ctx.npits = 2 * cols
        self.ctx.max_tier = max_tier
        for p in range(self.npits):
            self.ctx.owner[p] = owner[p]
            for j in range(SLOTS):
                self.ctx.slots[p][j] = slots[p][j]
        # Halves are unions of turn pairs (top c, bottom n-1-c).
        first = (cols + 1) // 2
        self.ctx.m[0] = 0
        self.ctx.m[1] = 0
        for c in range(cols):
            h = 0 if c < first else 1
            for p in (c, 2 * cols - 1 - c):
                pos = self.ctx.m[h]
                self.ctx.half_pits[h][pos] = p
                self.ctx.half_of[p] = h
                self.ctx.weight[p] = [6 ** i for i in range(MAX_PITS)][pos]
                self.ctx.m[h] += 1
        for p in range(self.npits):
            self.ctx.turned_weight[p] = self.ctx.weight[self.npits - 1 - p]
        halves = [_counts_of_half(self.ctx.m[h]) for h in range(2)]
        hsum0, hrank0, hcount0, hstart0, hcodes0 = halves[0]
        hsum1, hrank1, hcount1, hstart1, hcodes1 = halves[1]
        stride = 5 * self.ctx.m[0] + 2
        offsets = np.zeros((max_tier + 1, stride), dtype=np.int64)
        sizes = np.zeros(max_tier + 1, dtype=np.int64)
        for s in range(max_tier + 1):
            total = 0
            for s1 in range(stride):
                offsets[s, s1] = total
                s2 = s - s1
                if s1 <= 5 * self.ctx.m[0] and 0 <= s2 <= 5 * self.ctx.m[1]:
                    total += int(hcount0[s1]) * int(hcount1[s2])
            sizes[s] = total
        self.ctx.stride = stride
        weights = potential_weights([[slots[p][j] for j in range(SLOTS)] for p in range(self.npits)])
        if weights is None:
            raise ValueError(f"no pit weights make the potential of a {cols}-column board fall")
        self.weights = tuple(weights)
        hpotential = []
        for h in range(2):
            codes = np.arange(6 ** int(self.ctx.m[h]), dtype=np.int64)
            potential = np.zeros(codes.size, dtype=np.int64)
            for pos in range(self.ctx.m[h]):
                potential += (codes // 6 ** int(pos)) % 6 * weights[self.ctx.half_pits[h][pos]]
            hpotential.append(potential.astype(np.int32))
        # per half code: its byte of each pit's column of `move`, its non-empty pits, its
        # turned code
        hcode = []
        for h in range(2):
            codes = np.arange(6 ** int(self.ctx.m[h]), dtype=np.int64)
            # in bytes (a move's byte is a << 5 | full, at most 5 << 5 | 31): a board of 16
            # pits has 6^8 codes a half, and 64-bit columns took seconds to build
            digits = np.zeros((codes.size, MAX_PITS), dtype=np.uint8)
            full = np.zeros((codes.size, MAX_PITS), dtype=np.uint8)
            nonzero = np.zeros(codes.size, dtype=np.int64)
            turned = np.zeros(codes.size, dtype=np.int64)
            for pos in range(self.ctx.m[h]):
                pit = self.ctx.half_pits[h][pos]
                digit = (codes // 6 ** int(pos)) % 6
                digits[:, pit] = digit
                full[:, pit] = digit == MAX_STONES
                nonzero |= (digit > 0).astype(np.int64) << pit
                turned += digit * self.ctx.turned_weight[pit]
            moves = np.zeros((codes.size, MAX_PITS), dtype=np.uint8)
            for p in range(self.npits):
                if self.ctx.half_of[p] == h:
                    moves[:, p] = digits[:, p] << SLOTS
                for j in range(SLOTS):
                    q = slots[p][j]
                    if q < 0:
                        if h == 0:
                            moves[:, p] |= 1 << j
                    elif self.ctx.half_of[q] == h:
                        moves[:, p] |= full[:, q] << j
            packed = np.zeros(codes.size, dtype=HALF_CODE)
            packed["moves"] = moves
            packed["turned"] = turned
            packed["rank"] = halves[h][1]
            packed["nonzero"] = nonzero
            packed["stones"] = halves[h][0]
            hcode.append(packed)
        for p in range(self.npits):
            j, q = 0, p
            while q >= 0 and owner[q] == owner[p] and j <= self.npits:
                q = slots[q][0]
                j += 1
            self.ctx.pips[p] = j
        self.ctx.block_mask[0] = sum(1 << p for p in range(self.npits) if owner[p] == 0)
        self.ctx.block_mask[1] = sum(1 << p for p in range(self.npits) if owner[p] != 0)
        for p in range(self.npits):
            for a in range(SLOTS + 1):
                for fullmask in range(1 << SLOTS):
                    e = &self.ctx.move[p][a][fullmask]
                    e.dt0 = e.dt1 = e.doffset = e.dcount = e.lost = 0
                    if a == 0:
                        continue
                    ds1 = 0         # change of the stones in half 0
                    if self.ctx.half_of[p] == 0:
                        e.dt0 -= a * self.ctx.turned_weight[p]
                        ds1 -= a
                    else:
                        e.dt1 -= a * self.ctx.turned_weight[p]
                    for j in range(a):
                        q = slots[p][j]
                        if q < 0 or fullmask >> j & 1:
                            e.lost += 1
                        elif self.ctx.half_of[q] == 0:
                            e.dt0 += self.ctx.turned_weight[q]
                            ds1 += 1
                        else:
                            e.dt1 += self.ctx.turned_weight[q]
                    e.doffset = ds1 - e.lost * stride
                    e.dcount = -(e.lost + ds1)
        # per half: codes sorted by (stones, potential), where each group starts, and which
        # potentials occur at each stone count (level_members)
        pcodes, pstart, pvalues, pfirst, pstride = [], [], [], [], []
        for h in range(2):
            sums = halves[h][0].astype(np.int64)
            stride_h = int(hpotential[h].max()) + 1
            key = sums * stride_h + hpotential[h]
            order = np.argsort(key, kind="stable")
            groups = (5 * self.ctx.m[h] + 1) * stride_h
            start = np.zeros(groups + 1, dtype=np.int64)
            start[1:] = np.cumsum(np.bincount(key, minlength=groups))
            present = np.unique(key)
            values_first = np.searchsorted(present // stride_h, np.arange(5 * self.ctx.m[h] + 2))
            pcodes.append(order.astype(np.int32))
            pstart.append(start.astype(np.int32))
            pvalues.append((present % stride_h).astype(np.int32))
            pfirst.append(values_first.astype(np.int32))
            pstride.append(stride_h)
        arrays = [hsum0, hrank0, hcount0, hstart0, hcodes0,
                  hsum1, hrank1, hcount1, hstart1, hcodes1, offsets, sizes] + hpotential
        arrays += hcode
        arrays += pcodes + pstart + pvalues + pfirst
        # the records in the sweep's order, for level_members' slots (only where it is offered)
        slotted = all(6 ** int(self.ctx.m[h]) <= 1 << 16 for h in range(2))
        arrays += [hcode[h][pcodes[h]] if slotted else hcode[h][:0] for h in range(2)]
        arrays = [np.ascontiguousarray(a) for a in arrays]
        self._keep = arrays
        self.ctx.hsum[0] = <const uint8_t *>cnp.PyArray_DATA(arrays[0])
        self.ctx.hrank[0] = <const int32_t *>cnp.PyArray_DATA(arrays[1])
        self.ctx.hcount[0] = <const int32_t *>cnp.PyArray_DATA(arrays[2])
        self.ctx.hstart[0] = <const int32_t *>cnp.PyArray_DATA(arrays[3])
        self.ctx.hcodes[0] = <const int32_t *>cnp.PyArray_DATA(arrays[4])
        self.ctx.hsum[1] = <const uint8_t *>cnp.PyArray_DATA(arrays[5])
        self.ctx.hrank[1] = <const int32_t *>cnp.PyArray_DATA(arrays[6])
        self.ctx.hcount[1] = <const int32_t *>cnp.PyArray_DATA(arrays[7])
        self.ctx.hstart[1] = <const int32_t *>cnp.PyArray_DATA(arrays[8])
        self.ctx.hcodes[1] = <const int32_t *>cnp.PyArray_DATA(arrays[9])
        self.ctx.offsets = <const int64_t *>cnp.PyArray_DATA(arrays[10])
        self.ctx.tier_size = <const int64_t *>cnp.PyArray_DATA(arrays[11])
        self.ctx.hpotential[0] = <const int32_t *>cnp.PyArray_DATA(arrays[12])
        self.ctx.hpotential[1] = <const int32_t *>cnp.PyArray_DATA(arrays[13])
        for h in range(2):
            if HALF_CODE.itemsize != sizeof(HalfCode):
                raise RuntimeError("HALF_CODE does not match the kernel's HalfCode")
            self.ctx.hcode[h] = <const HalfCode *>cnp.PyArray_DATA(arrays[14 + h])
            self.ctx.ncodes[h] = len(arrays[14 + h])
            self.ctx.hslot[h] = (<const HalfCode *>cnp.PyArray_DATA(arrays[24 + h])
                                 if len(arrays[24 + h]) == self.ctx.ncodes[h] else NULL)
            self.ctx.pcodes[h] = <const int32_t *>cnp.PyArray_DATA(arrays[16 + h])
            self.ctx.pstart[h] = <const int32_t *>cnp.PyArray_DATA(arrays[18 + h])
            self.ctx.pvalues[h] = <const int32_t *>cnp.PyArray_DATA(arrays[20 + h])
            self.ctx.pfirst[h] = <const int32_t *>cnp.PyArray_DATA(arrays[22 + h])
            self.ctx.pstride[h] = pstride[h]
        self.tier_sizes = sizes
        self.kernel.ctx = &self.ctx
        # room for a whole vector of children: the lanes path stores MAX_PITS entries at once
        self.kernel.max_children = MAX_PITS
        self.ctx.lanes = bool(lanes) and sowsolve_lanes_available() != 0 and self._pack_lanes(arrays[7])
        self.lanes = self.ctx.lanes
        self.kernel.expand = expand
        # every board packs (at most 16 pits): the analysis engine's proof search runs on it
        self.kernel.expand_key = expand_key
        self.kernel.proof_hint = proof_hint
        self.kernel.level = level
        self.kernel.level_count = MAX_STONES * sum(weights) + 1
        self.ctx.level_count = self.kernel.level_count
        if slotted:     # members (slot0 << 16 | slot1) fit 32 bits
            self.kernel.level_members = level_members
            self.kernel.expand_member = expand_member
        else:
            self.kernel.level_members = NULL
            self.kernel.expand_member = NULL
        self.play.ctx = &self.ctx
        self.play.state_bytes = self.npits + 1
        self.play.max_moves = self.npits
        self.play.margin = 0
        self.play.features = len(FEATURES)
        self.play.moves = play_moves
        self.play.features_of = play_features
        self.play.locate = play_locate
        self.play.endless = NULL        # cycles searched as before (to the depth, then evaluated)

    def capsule(self):
        """The GameKernel for solver modules (valid while this object lives)."""
        return PyCapsule_New(&self.kernel, SOWSOLVE_KERNEL_CAPSULE, NULL)

    @property
    def pips(self):
        """Per pit, the one-stone moves that take a stone of it out of its owner's block."""
        return tuple(self.ctx.pips[p] for p in range(self.npits))

    def play_capsule(self):
        """The play layer (PlayKernel of sowsolve_kernel.h) for the analysis engine."""
        return PyCapsule_New(&self.play, SOWSOLVE_PLAY_CAPSULE, NULL)

    def play_state(self, board, int side):
        """The engine's state of a position (side 0 = A to move), checked."""
        cdef uint8_t b[MAX_PITS]
        self._board_in(board, b)
        if side not in (0, 1):
            raise ValueError(f"side to move 0 or 1, not {side}")
        return bytes(b[p] for p in range(self.npits)) + bytes([side])

    def play_move(self, int code):
        """The pit of a move code."""
        return code

    def key(self, board, int side):
        """The proof search's key of a position (side 0 = A to move), checked."""
        cdef uint8_t state[MAX_PITS + 1]
        self._board_in(board, state)
        if side not in (0, 1):
            raise ValueError(f"side to move 0 or 1, not {side}")
        if not any(state[p] for p in range(self.npits)):
            raise ValueError("the empty board is no position")
        state[self.npits] = side
        return pack_state(&self.ctx, state)

    def children_of_key(self, key):
        """The proof search's view of a key: ([child keys], None), or ([], the final record);
        ValueError for a key that is no packed position of the board."""
        cdef uint64_t children[MAX_PITS]
        cdef uint16_t record = 0
        cdef int n = -1
        key = operator.index(key)
        if 0 <= key < 1 << 64:
            n = expand_key(&self.ctx, key, children, NULL, &record)
        if n < 0:
            raise ValueError(f"{str(key)[:24]} is no packed position of this board")
        if n == 0:
            return [], int(record)
        return [int(children[i]) for i in range(n)], None


    cdef bint _pack_lanes(self, hcount1) except -1:
        """The move table packed for diffusion_lanes_children, and hcount[1] padded; False
        when a move does not fit the packing (then the scalar loop computes children)."""
        cdef int p, col, lo = 0, hi = 0
        cdef MoveDelta *e
        cdef int64_t ds1
        for p in range(MAX_PITS):
            for col in range((SLOTS + 1) << SLOTS):
                e = &self.ctx.move[0][0][0] + p * ((SLOTS + 1) << SLOTS) + col
                ds1 = e.doffset + e.lost * self.ctx.stride
                if not (-(1 << 23) <= e.dt0 < 1 << 23 and -(1 << 23) <= e.dt1 < 1 << 23
                        and -128 <= ds1 < 128 and 0 <= e.lost < 128 and e.dcount == -(e.lost + ds1)):
                    return False
                self.ctx.lanes_move[p][col] = (
                    (<int64_t>(e.dt0 & 0xFFFFFF) | <int64_t>((ds1 & 0xFF) << 24))
                    | (<int64_t>(e.dt1 & 0xFFFFFF) << 32) | (<int64_t>e.lost << 56))
                lo = min(lo, e.dcount)
                hi = max(hi, e.dcount)
        if hi - lo > 15:
            return False
        padded = np.zeros(LANES_PAD + len(hcount1) + LANES_PAD, dtype=np.int32)
        padded[LANES_PAD:LANES_PAD + len(hcount1)] = hcount1
        self._keep.append(padded)
        self.ctx.lanes_count = <const int32_t *>cnp.PyArray_DATA(padded) + LANES_PAD
        self.ctx.dmin = lo
        return True

    cdef void _board_in(self, board, uint8_t *out) except *:
        if len(board) != self.npits:
            raise ValueError(f"a board of this kernel has {self.npits} pits, not {len(board)}")
        for p in range(self.npits):
            v = board[p]
            if not 0 <= v <= MAX_STONES:
                raise ValueError(f"pit {p} holds {v} stones; a pit holds 0 to 5")
            out[p] = v

    def rank(self, board):
        """(tier, index) of a board."""
        cdef uint8_t b[MAX_PITS]
        cdef int tier
        self._board_in(board, b)
        index = rank_board(&self.ctx, b, &tier)
        if tier > self.max_tier:
            raise ValueError(f"the board holds {tier} stones, more than this table's {self.max_tier}")
        return tier, index

    def unrank(self, int tier, int64_t index):
        cdef uint8_t b[MAX_PITS]
        if unrank(&self.ctx, tier, index, b) < 0:
            raise IndexError(f"no position {index} in tier {tier}")
        return tuple(b[p] for p in range(self.npits))

    def level(self, int tier, int64_t index):
        """The potential of (tier, index): what orders the solver's sweep of a tier."""
        cdef int32_t value = level(&self.ctx, tier, index)
        if value < 0:
            raise IndexError(f"no position {index} in tier {tier}")
        return value

    def unrank_range(self, int tier, int64_t start, int64_t stop):
        """Boards of indices start..stop-1 of a tier as a (count, pits) uint8 array."""
        if not (0 <= start <= stop <= self.tier_sizes[tier]):
            raise IndexError(f"range {start}..{stop} is outside tier {tier}")
        out = np.empty((stop - start, self.npits), dtype=np.uint8)
        cdef uint8_t[:, ::1] view = out
        cdef int64_t i
        with nogil:
            for i in range(stop - start):
                unrank(&self.ctx, tier, start + i, &view[i, 0])
        return out

    def outcome(self, board):
        """'win' / 'loss' for A to move on a finished board, None when play goes on."""
        cdef uint8_t b[MAX_PITS]
        self._board_in(board, b)
        o = final_outcome(&self.ctx, b)
        return {REC_WIN: "win", REC_LOSS: "loss"}.get(o)

    def moves(self, board):
        """[(pit, child board, stones to stores)] for every legal move of a board."""
        cdef uint8_t b[MAX_PITS]
        cdef uint8_t child[MAX_PITS]
        self._board_in(board, b)
        if final_outcome(&self.ctx, b):
            return []
        result = []
        for p in range(self.npits):
            if b[p]:
                lost = play_move(&self.ctx, b, p, child)
                result.append((p, tuple(child[q] for q in range(self.npits)), lost))
        return result

    def children(self, int tier, int64_t index):
        """Solver view: [(tier, index)] of the stored children, or the final record."""
        cdef int ct[MAX_PITS]
        cdef int64_t ci[MAX_PITS]
        cdef uint16_t rec = 0
        n = expand(&self.ctx, tier, index, ct, ci, &rec)
        if n < 0:
            raise IndexError(f"no position {index} in tier {tier}")
        if n == 0:
            return rec
        return [(ct[i], ci[i]) for i in range(n)]

    def unmoves_in_tier(self, board):
        """[(pit, parent board)]: the moves that lead to `board` sending no stone to a store."""
        cdef uint8_t b[MAX_PITS]
        cdef uint8_t parent[MAX_PITS]
        cdef int p, a, j, q
        cdef bint ok
        self._board_in(board, b)
        result = []
        for p in range(self.npits):
            if b[p] != 0:
                continue
            for a in range(1, SLOTS + 1):
                ok = True
                memcpy(parent, b, self.npits)
                parent[p] = a
                for j in range(a):
                    q = self.ctx.slots[p][j]
                    if q < 0 or b[q] == 0:
                        ok = False
                        break
                    parent[q] -= 1
                if ok and not final_outcome(&self.ctx, parent):
                    result.append((p, tuple(parent[q] for q in range(self.npits))))
        return result

    def perft(self, board, int depth):
        """Move-path counts for depths 1..depth."""
        cdef uint8_t b[MAX_PITS]
        self._board_in(board, b)
        if depth < 1:
            raise ValueError(f"perft depth must be at least 1, not {depth}")
        counts = np.zeros(depth, dtype=np.int64)
        cdef int64_t[::1] cv = counts
        cdef SignalPoll poll
        poll.calls = 0
        poll.pending = 0
        with nogil:
            perft_rec(&self.ctx, b, depth, 0, &cv[0], &poll)
        if poll.pending:
            raise_pending()
        return [int(x) for x in counts]
