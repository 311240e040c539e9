# cython: language_level=3
"""Overflow kernel: move generation on bitboards, packed canonical positions, perft.

Cells are numbered rank * cols + file (a1 = 0), one bit each in the occupancy word, so the
one-group rule is a flood fill by word shifts.  A position packs into 64 bits when cells + discs
<= 63: for each cell its height in unary (h one-bits, then a zero), and the side to move in bit
63.  The packing is exact (no hashing); the canonical key is the least packing over the board's
symmetries, with the side flipped by the symmetries that swap the two houses.
"""
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint64_t, uint32_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset

import numpy as np
cimport numpy as cnp

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
    int __builtin_ctzll(unsigned long long x) nogil

from kernel_api cimport (PROOF_INF, GameKernel, PlayKernel, REC_LOSS, REC_MAKE, REC_OUTCOME, REC_WIN,
                         SOWSOLVE_KERNEL_CAPSULE, SOWSOLVE_PLAY_CAPSULE, SignalPoll, poll_signals,
                         big_table_alloc, big_table_free, prefetch_for_read, raise_pending)

cnp.import_array()

cdef enum:
    MAXC = 64
    NDIR = 8
    MAX_MOVES = 8 * 64
    OVERFLOW = 0
    CONTAINED = 1

SIDE_BIT = 1 << 63


cdef struct OvCtx:
    int rows
    int cols
    int ncells
    int8_t step[MAXC][NDIR]
    uint64_t full
    uint64_t not_first_file
    uint64_t not_last_file
    uint64_t dark
    uint64_t light
    int nsym
    int8_t source[8][MAXC]     # source[s][j]: the cell whose stack lands on cell j under symmetry s
    uint8_t swaps[8]           # symmetry s swaps the houses
    int keyable
    # the proof search's guesses look one move ahead where that move can end the game at once
    # (hint_of_heights): on by default, off to measure what it pays
    int no_lookahead


cdef struct Move:
    uint8_t cell
    uint8_t direction
    uint8_t kind
    uint8_t reach


cdef inline uint64_t bit(int cell) noexcept nogil:
    return (<uint64_t>1) << cell


cdef inline uint64_t dilate(const OvCtx *c, uint64_t x) noexcept nogil:
    cdef uint64_t h = x | ((x & c.not_last_file) << 1) | ((x & c.not_first_file) >> 1)
    return (h | (h << c.cols) | (h >> c.cols)) & c.full


cdef inline bint one_group(const OvCtx *c, uint64_t occ) noexcept nogil:
    cdef uint64_t group, grown
    if occ == 0:
        return False
    group = occ & (~occ + 1)
    while True:
        grown = dilate(c, group) & occ
        if grown == group:
            return group == occ
        group = grown


cdef inline uint64_t occupancy(const OvCtx *c, const uint8_t *h) noexcept nogil:
    cdef uint64_t occ = 0
    cdef int i
    for i in range(c.ncells):
        if h[i]:
            occ |= bit(i)
    return occ


cdef inline int final_outcome(const OvCtx *c, uint64_t occ, int side) noexcept nogil:
    """REC_WIN / REC_LOSS for the side to move (0 = Light, 1 = Dark) when a house is empty."""
    if (occ & c.light) == 0:
        return REC_WIN if side == 1 else REC_LOSS
    if (occ & c.dark) == 0:
        return REC_WIN if side == 0 else REC_LOSS
    return 0


cdef inline int stack_moves(const OvCtx *c, const uint8_t *h, uint64_t occ, int cell, Move *out,
                            int n) noexcept nogil:
    """Append the legal moves of the stack on `cell` to out[n:]; the new count."""
    cdef int d, x, length, lead, empty, best = 0, first = n, i, stack = h[cell]
    cdef uint64_t line, rest
    cdef bint rest_ok
    if stack == 0:
        return n
    rest = occ & ~bit(cell)
    for d in range(NDIR):
        x = cell
        length = 0
        lead = 0
        empty = 0
        line = 0
        while length < stack:
            x = c.step[x][d]
            if x < 0:
                break
            length += 1
            line |= bit(x)
            if h[x] == 0:
                empty = 1
            elif not empty:
                lead += 1
        if length == 0:
            continue
        if length < stack and empty:
            if one_group(c, rest | line):
                out[n].cell = cell
                out[n].direction = d
                out[n].kind = OVERFLOW
                out[n].reach = 0
                n += 1
        elif lead > 0:
            out[n].cell = cell
            out[n].direction = d
            out[n].kind = CONTAINED
            out[n].reach = lead
            n += 1
            if lead > best:
                best = lead
    if best:
        # keep the overflow moves and the contained moves that reach furthest, if the
        # emptied cell leaves one group (the same test for every contained direction)
        rest_ok = one_group(c, rest)
        i = first
        for x in range(first, n):
            if out[x].kind == OVERFLOW or (rest_ok and out[x].reach == best):
                out[i] = out[x]
                i += 1
        n = i
    return n


cdef int gen_moves(const OvCtx *c, const uint8_t *h, uint64_t occ, Move *out) noexcept nogil:
    """Legal moves of a position whose houses are both occupied."""
    cdef int n = 0, cell
    for cell in range(c.ncells):
        n = stack_moves(c, h, occ, cell, out, n)
    return n


cdef inline uint64_t apply_move(const OvCtx *c, const uint8_t *h, uint64_t occ, Move m,
                                uint8_t *out) noexcept nogil:
    """The child's heights into `out`; returns its occupancy (`occ` is the parent's)."""
    cdef int stack = h[m.cell], x = m.cell, j
    memcpy(out, h, c.ncells)
    out[m.cell] = 0
    occ &= ~bit(m.cell)
    if m.kind == OVERFLOW:
        for j in range(stack):
            x = c.step[x][m.direction]
            if x < 0:
                break
            out[x] += 1
            occ |= bit(x)
    else:
        for j in range(m.reach):
            x = c.step[x][m.direction]
            out[x] += 1
        out[x] += stack - m.reach
    return occ


cdef inline uint64_t pack(const OvCtx *c, const uint8_t *h, int side, int s) noexcept nogil:
    cdef uint64_t key = 0
    cdef int pos = 0, j, hj
    for j in range(c.ncells):
        hj = h[c.source[s][j]]
        key |= (((<uint64_t>1) << hj) - 1) << pos
        pos += hj + 1
    return key | ((<uint64_t>(side ^ c.swaps[s])) << 63)


cdef inline uint64_t canonical(const OvCtx *c, const uint8_t *h, int side) noexcept nogil:
    """The least packing over the symmetries, found without packing each: every packing of a
    position has the same length (cells + discs), so one packing is less than another exactly
    when its side bit is, or with equal side bits when its heights read from the last cell
    backwards are lexicographically less (a taller last stack puts more one-bits at the top).
    Most symmetries differ from the best so far within a cell or two."""
    cdef int best = 0, s, j, a = 0, b = 0
    cdef int best_bit = side ^ c.swaps[0], bit_s
    for s in range(1, c.nsym):
        bit_s = side ^ c.swaps[s]
        if bit_s != best_bit:
            if bit_s < best_bit:
                best = s
                best_bit = bit_s
            continue
        for j in range(c.ncells - 1, -1, -1):
            a = h[c.source[s][j]]
            b = h[c.source[best][j]]
            if a != b:
                break
        if a < b:
            best = s
    return pack(c, h, side, best)


cdef inline int unpack(const OvCtx *c, uint64_t key, uint8_t *h) noexcept nogil:
    """Heights of a packed position; returns the side to move, -1 for a malformed key."""
    cdef int cell = 0, pos = 0, run = 0
    memset(h, 0, c.ncells)
    while cell < c.ncells:
        if pos >= 63:
            return -1
        if (key >> pos) & 1:
            run += 1
        else:
            h[cell] = run
            run = 0
            cell += 1
        pos += 1
    if (key >> pos) & ((<uint64_t>1 << (63 - pos)) - 1):
        return -1
    return <int>(key >> 63)


cdef inline int hint_of(const OvCtx *c, uint64_t occ, int side, uint32_t *phi,
                        uint32_t *delta) noexcept nogil:
    """proof_hint from a position's occupancy: final positions at once (1); else from the
    occupied cells of each house (the side to move wins when the other house empties, loses
    when its own does), to the fifth power.  Positions expanded to prove a start, by power
    (a table of 40 M entries, no entry replaced on the way):

        power        3x4        3x5        4x4
        2        222,969  6,125,853 15,341,820
        3        132,514  6,098,536 11,564,639
        5        110,903  4,349,385  4,742,574

    (2^count: 14.7 M on 4x4; powers 4, 6 and 7 lie near 5 on 4x4.)  The fifth power of a
    house of 16 cells is 2^20, so sums over children stay below PROOF_INF on every board whose
    positions pack (at most 31 cells)."""
    cdef int outcome = final_outcome(c, occ, side), mine, theirs
    if outcome == REC_WIN:
        phi[0] = 0
        delta[0] = PROOF_INF
        return 1
    if outcome == REC_LOSS:
        phi[0] = PROOF_INF
        delta[0] = 0
        return 1
    mine = __builtin_popcountll(occ & (c.light if side == 0 else c.dark))
    theirs = __builtin_popcountll(occ & (c.dark if side == 0 else c.light))
    phi[0] = theirs * theirs * theirs * theirs * theirs
    delta[0] = mine * mine * mine * mine * mine
    return 0


cdef inline bint wins_at_once(const OvCtx *c, const uint8_t *h, uint64_t occ, int side) noexcept nogil:
    """Whether the side to move of a position that is not over wins with one move: a move
    empties only its own cell, so the other house must hold exactly one stack, and a move of
    that stack must leave no disc on that house."""
    cdef uint64_t theirs = occ & (c.dark if side == 0 else c.light), after
    cdef Move moves[NDIR]
    cdef uint8_t child[MAXC]
    cdef int n, i
    if __builtin_popcountll(theirs) != 1:
        return False
    n = stack_moves(c, h, occ, __builtin_ctzll(theirs), moves, 0)
    for i in range(n):
        after = apply_move(c, h, occ, moves[i], child)
        if after & (c.dark if side == 0 else c.light) == 0:
            return True
    return False


cdef inline int hint_of_heights(const OvCtx *c, const uint8_t *h, uint64_t occ, int side,
                                uint32_t *phi, uint32_t *delta) noexcept nogil:
    """hint_of, one move further where it is cheap: a position whose side to move wins with
    one move (wins_at_once) is proved at once, as a final one is (1; it is then never
    expanded: a third of the positions the search expanded were such, 4x4 and 3x5)."""
    cdef int found = hint_of(c, occ, side, phi, delta)
    if found or c.no_lookahead or not wins_at_once(c, h, occ, side):
        return found
    phi[0] = 0
    delta[0] = PROOF_INF
    return 1


cdef int expand_key(const void *ctx, uint64_t key, uint64_t *child_key, uint32_t *child_hint,
                    uint16_t *final_record) noexcept nogil:
    return expand_packed(<const OvCtx *>ctx, NULL, key, child_key, child_hint, final_record)


cdef int proof_hint(const void *ctx, uint64_t key, uint32_t *phi, uint32_t *delta) noexcept nogil:
    """hint_of a packed position (1 for a final one, phi and delta set; else 0)."""
    cdef const OvCtx *c = <const OvCtx *>ctx
    cdef uint8_t h[MAXC]
    cdef int side = unpack(c, key, h)
    phi[0] = 1
    delta[0] = 1
    if side < 0:
        return 0
    return hint_of_heights(c, h, occupancy(c, h), side, phi, delta)


cdef void perft_rec(const OvCtx *c, const uint8_t *h, int depth, int ply, int64_t *counts,
                    SignalPoll *poll) noexcept nogil:
    cdef Move moves[MAX_MOVES]
    cdef uint8_t child[MAXC]
    cdef uint64_t occ = occupancy(c, h)
    cdef int n, i
    if final_outcome(c, occ, 0) or poll_signals(poll):
        return
    n = gen_moves(c, h, occ, moves)
    counts[ply] += n
    if ply + 1 < depth:
        for i in range(n):
            apply_move(c, h, occ, moves[i], child)
            perft_rec(c, child, depth, ply + 1, counts, poll)



# --- a census of expansions (bench/bench_prove_census.py) ---------------------------------------
cdef struct CensusCtx:
    const OvCtx *c
    int64_t *counts            # [discs][occupied cells], (MAXC + 1) x (MAXC + 1)


cdef int census_expand_key(const void *ctx, uint64_t key, uint64_t *child_key, uint32_t *child_hint,
                           uint16_t *final_record) noexcept nogil:
    """expand_key, counting the position by (discs, occupied cells) first (one thread only)."""
    cdef const CensusCtx *cc = <const CensusCtx *>ctx
    cdef uint8_t h[MAXC]
    cdef int side = unpack(cc.c, key, h), i, discs = 0, occupied = 0
    if side >= 0:
        for i in range(cc.c.ncells):
            discs += h[i]
            occupied += h[i] != 0
        cc.counts[discs * (MAXC + 1) + occupied] += 1
    return expand_key(cc.c, key, child_key, child_hint, final_record)


cdef int census_proof_hint(const void *ctx, uint64_t key, uint32_t *phi, uint32_t *delta) noexcept nogil:
    return proof_hint((<const CensusCtx *>ctx).c, key, phi, delta)



# --- the play layer (the analysis engine, engine.pyx) -------------------------------------------
# A state is the heights of the cells (a1 first), then the side to move (0 Light, 1 Dark): any
# board, 2x2 to 8x8.  A move's code is cell * 8 + direction.
FEATURES = ("house_cells", "last_cell")


cdef int play_moves(const void *ctx, const uint8_t *state, uint8_t *children, int16_t *codes,
                    int16_t *gains, int *final) noexcept nogil:
    cdef const OvCtx *c = <const OvCtx *>ctx
    cdef Move moves[MAX_MOVES]
    cdef int side = state[c.ncells], n, i, outcome, width = c.ncells + 1
    cdef uint64_t occ = occupancy(c, state), child_occ
    outcome = final_outcome(c, occ, side)
    if outcome:
        final[0] = 1 if outcome == REC_WIN else -1
        return 0
    n = gen_moves(c, state, occ, moves)
    if n == 0:                 # never happens (RULES.md); as expand_key: the side to move loses
        final[0] = -1
        return 0
    for i in range(n):
        child_occ = apply_move(c, state, occ, moves[i], &children[i * width])
        children[i * width + c.ncells] = side ^ 1
        codes[i] = moves[i].cell * NDIR + moves[i].direction
        # the end the move makes, from the child's occupancy apply_move gives for free
        outcome = final_outcome(c, child_occ, side ^ 1)
        gains[i] = 0 if outcome == 0 else (1 if outcome == REC_LOSS else -1)
    return n


cdef void play_features(const void *ctx, const uint8_t *state, int32_t *f) noexcept nogil:
    """From the side to move, whose house must keep a disc while the other's empties: the
    occupied cells of its house less the other's, and whether a house is down to its last
    occupied cell (+1 the other's, -1 its own).  (Two features were dropped, measured: the
    number of moves on the board, whose generation at every leaf halved the positions searched
    a second on 6x6 for no gain on 4x4; the discs in each house, which lost games on 6x6 --
    solver/games/overflow.py.)"""
    cdef const OvCtx *c = <const OvCtx *>ctx
    cdef int side = state[c.ncells], mine_cells, theirs_cells
    cdef uint64_t occ = occupancy(c, state)
    cdef uint64_t mine = c.light if side == 0 else c.dark
    mine_cells = __builtin_popcountll(occ & mine)
    theirs_cells = __builtin_popcountll(occ & ~mine)
    f[0] = mine_cells - theirs_cells
    f[1] = (theirs_cells == 1) - (mine_cells == 1)


cdef int play_locate(const void *ctx, const uint8_t *state, int *tier, uint64_t *where) noexcept nogil:
    """A keyed table's tier (discs) and canonical key; none where positions do not pack."""
    cdef const OvCtx *c = <const OvCtx *>ctx
    cdef int i, discs = 0
    if not c.keyable:
        return 0
    for i in range(c.ncells):
        discs += state[i]
    tier[0] = discs
    where[0] = canonical(c, state, state[c.ncells])
    return 1


def _symmetries(int rows, int cols):
    """Maps (file, rank) -> (file, rank) of the board's symmetries."""
    maps = [lambda f, k: (f, k), lambda f, k: (cols - 1 - f, k),
            lambda f, k: (f, rows - 1 - k), lambda f, k: (cols - 1 - f, rows - 1 - k)]
    if rows == cols:
        n = rows
        maps += [lambda f, k: (k, f), lambda f, k: (n - 1 - k, f),
                 lambda f, k: (k, n - 1 - f), lambda f, k: (n - 1 - k, n - 1 - f)]
    return maps


cdef class OverflowKernel:
    """Kernel of one Overflow board: owns the tables, hands out the GameKernel capsule."""
    cdef OvCtx ctx
    cdef GameKernel kernel
    cdef PlayKernel play
    cdef CensusCtx census_ctx
    cdef GameKernel census_kernel
    cdef object census_counts
    cdef readonly int rows, cols, ncells, symmetries
    cdef readonly bint keyable

    def __cinit__(self, int rows, int cols):
        cdef int cell, d, f, k, s
        if not (2 <= rows <= 8 and 2 <= cols <= 8):
            raise ValueError(f"the kernel supports 2 to 8 ranks and files, not {rows}x{cols}")
        directions = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]
        self.rows, self.cols, self.ncells = rows, cols, rows * cols
        self.ctx.rows, self.ctx.cols, self.ctx.ncells = rows, cols, rows * cols
        self.ctx.full = 0
        self.ctx.not_first_file = 0
        self.ctx.not_last_file = 0
        self.ctx.dark = 0
        self.ctx.light = 0
        for cell in range(self.ncells):
            f, k = cell % cols, cell // cols
            self.ctx.full |= bit(cell)
            if f != 0:
                self.ctx.not_first_file |= bit(cell)
            if f != cols - 1:
                self.ctx.not_last_file |= bit(cell)
            if (f + k) % 2 == 0:
                self.ctx.dark |= bit(cell)
            else:
                self.ctx.light |= bit(cell)
            for d in range(NDIR):
                df, dk = directions[d]
                if 0 <= f + df < cols and 0 <= k + dk < rows:
                    self.ctx.step[cell][d] = (k + dk) * cols + f + df
                else:
                    self.ctx.step[cell][d] = -1
        maps = _symmetries(rows, cols)
        self.ctx.nsym = len(maps)
        self.symmetries = len(maps)
        for s, image in enumerate(maps):
            for cell in range(self.ncells):
                f, k = image(cell % cols, cell // cols)
                self.ctx.source[s][k * cols + f] = cell
            f, k = image(0, 0)
            self.ctx.swaps[s] = (f + k) % 2
        self.keyable = 2 * self.ncells + 1 <= 64
        self.ctx.keyable = self.keyable
        self.kernel.ctx = &self.ctx
        self.kernel.max_children = 8 * self.ncells
        self.kernel.expand = NULL
        self.kernel.expand_key = NULL
        if self.keyable:
            self.kernel.expand_key = expand_key
            self.kernel.proof_hint = proof_hint
        self.play.ctx = &self.ctx
        self.play.state_bytes = self.ncells + 1
        self.play.max_moves = 8 * self.ncells
        self.play.margin = 0
        self.play.features = len(FEATURES)
        self.play.moves = play_moves
        self.play.features_of = play_features
        self.play.locate = play_locate
        self.play.endless = NULL        # no position comes back: every move lowers (discs, cells)

    def capsule(self):
        return PyCapsule_New(&self.kernel, SOWSOLVE_KERNEL_CAPSULE, NULL)

    def census_capsule(self):
        """A GameKernel like capsule() that also counts every position it expands by (discs,
        occupied cells), read with census(): where a search spends its work.  One thread only
        (the counts are not atomic); the counts start from zero at each call."""
        cdef int64_t[:, ::1] counts
        self._need_keys()
        self.census_counts = np.zeros((MAXC + 1, MAXC + 1), dtype=np.int64)
        counts = self.census_counts
        self.census_ctx.c = &self.ctx
        self.census_ctx.counts = &counts[0, 0]
        self.census_kernel = self.kernel
        self.census_kernel.ctx = &self.census_ctx
        self.census_kernel.expand_key = census_expand_key
        self.census_kernel.proof_hint = census_proof_hint
        return PyCapsule_New(&self.census_kernel, SOWSOLVE_KERNEL_CAPSULE, NULL)

    def census(self):
        """Positions expanded through census_capsule(), as [discs][occupied cells] counts."""
        if self.census_counts is None:
            return None
        return self.census_counts[:self.ncells + 1, :self.ncells + 1].copy()

    def play_capsule(self):
        """The play layer (PlayKernel of sowsolve_kernel.h) for the analysis engine."""
        return PyCapsule_New(&self.play, SOWSOLVE_PLAY_CAPSULE, NULL)

    def play_state(self, heights, int side):
        """The engine's state of a position (side 0 = Light to move), checked."""
        cdef uint8_t h[MAXC]
        self._heights_in(heights, h)
        if side not in (0, 1):
            raise ValueError(f"side to move 0 or 1, not {side}")
        return bytes(h[j] for j in range(self.ncells)) + bytes([side])

    def play_move(self, int code):
        """(cell, direction) of a move code."""
        return divmod(code, NDIR)

    cdef void _heights_in(self, heights, uint8_t *out) except *:
        if len(heights) != self.ncells:
            raise ValueError(f"this board has {self.ncells} cells, not {len(heights)}")
        total = 0
        for i in range(self.ncells):
            v = heights[i]
            if not 0 <= v <= self.ncells:
                raise ValueError(f"a stack of {v} discs cannot occur on this board")
            out[i] = v
            total += v
        if total > self.ncells:
            raise ValueError(f"{total} discs is more than the {self.ncells} of the start")

    def moves(self, heights):
        """[((cell, direction), child heights)] of a position (empty when a house is empty)."""
        cdef uint8_t h[MAXC]
        cdef uint8_t child[MAXC]
        cdef Move moves[MAX_MOVES]
        self._heights_in(heights, h)
        occ = occupancy(&self.ctx, h)
        if final_outcome(&self.ctx, occ, 0):
            return []
        n = gen_moves(&self.ctx, h, occ, moves)
        result = []
        for i in range(n):
            apply_move(&self.ctx, h, occ, moves[i], child)
            result.append(((moves[i].cell, moves[i].direction),
                           tuple(child[j] for j in range(self.ncells))))
        return result

    def count_moves(self, heights_array):
        """Total legal moves over a (count, cells) uint8 array of positions (for benchmarks)."""
        cdef const uint8_t[:, ::1] hs = heights_array
        cdef Move moves[MAX_MOVES]
        cdef int64_t total = 0, i
        cdef uint64_t occ
        if hs.shape[1] != self.ncells:
            raise ValueError("wrong number of cells")
        with nogil:
            for i in range(hs.shape[0]):
                occ = occupancy(&self.ctx, &hs[i, 0])
                if not final_outcome(&self.ctx, occ, 0):
                    total += gen_moves(&self.ctx, &hs[i, 0], occ, moves)
        return total

    def perft(self, heights, int depth):
        cdef uint8_t h[MAXC]
        self._heights_in(heights, h)
        if depth < 1:
            raise ValueError(f"perft depth must be at least 1, not {depth}")
        counts = np.zeros(depth, dtype=np.int64)
        cdef int64_t[::1] cv = counts
        cdef SignalPoll poll
        poll.calls = 0
        poll.pending = 0
        with nogil:
            perft_rec(&self.ctx, h, depth, 0, &cv[0], &poll)
        if poll.pending:
            raise_pending()
        return [int(x) for x in counts]

    def _need_keys(self):
        if not self.keyable:
            raise ValueError(f"positions of a {self.rows}x{self.cols} board do not pack into 64 bits "
                             f"(at most 31 cells)")

    def key(self, heights, int side):
        """Canonical packed position (side 0 = Light to move, 1 = Dark)."""
        cdef uint8_t h[MAXC]
        self._need_keys()
        self._heights_in(heights, h)
        return canonical(&self.ctx, h, side)

    def unpack(self, uint64_t key):
        """(heights, side) of a packed position."""
        cdef uint8_t h[MAXC]
        self._need_keys()
        side = unpack(&self.ctx, key, h)
        if side < 0:
            raise ValueError(f"{key:#x} is not a packed position of this board")
        return tuple(h[j] for j in range(self.ncells)), side

    def unpack_many(self, const uint64_t[::1] keys):
        """(heights as a (len(keys), cells) uint8 array, sides as a uint8 array) of packed
        positions, each checked as `unpack` checks one."""
        cdef Py_ssize_t i, n = keys.shape[0]
        cdef int side
        self._need_keys()
        heights = np.zeros((n, self.ncells), dtype=np.uint8)
        sides = np.zeros(n, dtype=np.uint8)
        cdef uint8_t[:, ::1] hv = heights
        cdef uint8_t[::1] sv = sides
        cdef uint8_t h[MAXC]
        for i in range(n):
            side = unpack(&self.ctx, keys[i], h)
            if side < 0:
                raise ValueError(f"{keys[i]:#x} is not a packed position of this board")
            memcpy(&hv[i, 0], h, self.ncells)
            sv[i] = side
        return heights, sides

    @property
    def lookahead(self) -> bool:
        """Whether the proof search's guesses look one move ahead (hint_of_heights)."""
        return not self.ctx.no_lookahead

    @lookahead.setter
    def lookahead(self, bint value):
        self.ctx.no_lookahead = not value

    def proof_hint_of(self, uint64_t key):
        """(final, phi, delta) the proof search reads of a packed position before expanding it."""
        cdef uint32_t phi, delta
        self._need_keys()
        final = proof_hint(&self.ctx, key, &phi, &delta)
        return bool(final), phi, delta

    def children(self, uint64_t key):
        """Solver view: canonical keys of the children, or the final record."""
        cdef uint64_t out[MAX_MOVES]
        cdef uint16_t rec = 0
        self._need_keys()
        n = expand_key(&self.ctx, key, out, NULL, &rec)
        if n < 0:
            raise ValueError(f"{key:#x} is not a packed position of this board")
        if n == 0:
            return rec
        return [out[i] for i in range(n)]


# --- endgame tiers: every position of at most D discs, by (discs, occupied cells) --------------
# A move lowers (discs, occupied cells) lexicographically: an overflow move sends discs off the
# board, a contained move keeps them but empties its own cell and fills no empty one.  So tier
# (d, k) -- d discs on k occupied cells -- has its children in lower tiers only, and an endgame
# table of every position of at most D discs solves tier by tier with no search inside a tier.
#
# Tier number d * (cells + 1) + k.  Inside a tier a position is ranked by a perfect index:
#     index = (rank of its occupied cells among the tier's one-group sets of k cells
#              * C(d - 1, k - 1) + rank of the spread of d discs over those k cells) * 2 + side
# The one-group sets of each size are listed once, in increasing order (ranked by binary search);
# a spread h_1..h_k >= 1 is ranked by the combinatorial number system on its partial sums
# s_j = h_1 + .. + h_j, j < k, as the (k - 1)-subset {s_j - 1} of {0 .. d - 2}.  Positions that
# break the one-group rule hold no index; positions with one house empty (the end) do, so that
# every move of a position in the table reaches one in the table.

cdef enum:
    ENDGAME_MAX_DISCS = 32        # 8 directions x 32 stacks: the tier solver's MAX_CHILDREN
    BINOM = 66
    RANK_TABLE_CELLS = 22         # a rank per set of cells: 2^22 x 4 bytes = 16 MB at most


cdef struct TierCtx:
    OvCtx c
    int max_discs                 # tiers of at most this many discs are ranked
    int max_occupied              # min(max_discs, cells): the sizes of sets listed
    uint64_t *sets                # one-group sets, by size, each size in increasing order
    int64_t set_start[MAXC + 2]   # sets of k cells: sets[set_start[k] .. set_start[k + 1]]
    int32_t *set_rank             # boards of at most RANK_TABLE_CELLS cells: each set's rank
                                  # among the sets of its size, -1 for a set not one group
                                  # (else NULL: ranked by binary search)
    int64_t binom[BINOM][BINOM]


cdef inline int64_t spreads(const TierCtx *t, int d, int k) noexcept nogil:
    return t.binom[d - 1][k - 1]


cdef inline int64_t tier_size_of(const TierCtx *t, int d, int k) noexcept nogil:
    """Positions of tier (d, k), 0 for a tier this context does not rank."""
    if d < 1 or d > t.max_discs or k < 1 or k > d or k > t.c.ncells:
        return 0
    return (t.set_start[k + 1] - t.set_start[k]) * spreads(t, d, k) * 2


cdef inline int64_t rank_tier(const TierCtx *t, const uint8_t *h, uint64_t occ, int side,
                              int *tier) noexcept nogil:
    """(tier, index) of a position; -1 when it is not in the ranked tiers (or not one group)."""
    cdef int d = 0, k = 0, i, j = 0, s = 0
    cdef int64_t lo, hi, mid, spread = 0
    for i in range(t.c.ncells):
        d += h[i]
    k = __builtin_popcountll(occ)
    if d < 1 or d > t.max_discs or k < 1 or k > t.max_occupied:
        return -1
    if t.set_rank != NULL:
        lo = t.set_rank[occ]
        if lo < 0:
            return -1
        lo += t.set_start[k]
    else:
        lo = t.set_start[k]
        hi = t.set_start[k + 1]
        while lo < hi:
            mid = (lo + hi) >> 1
            if t.sets[mid] < occ:
                lo = mid + 1
            else:
                hi = mid
        if lo == t.set_start[k + 1] or t.sets[lo] != occ:
            return -1
    for i in range(t.c.ncells):
        if h[i]:
            j += 1
            s += h[i]
            if j < k:
                spread += t.binom[s - 1][j]
    tier[0] = d * (t.c.ncells + 1) + k
    return ((lo - t.set_start[k]) * spreads(t, d, k) + spread) * 2 + side


cdef inline int unrank_tier(const TierCtx *t, int tier, int64_t index, uint8_t *h,
                            uint64_t *occ) noexcept nogil:
    """Heights and occupancy of position `index` of `tier`; its side to move, -1 out of range."""
    cdef int d = tier // (t.c.ncells + 1), k = tier % (t.c.ncells + 1), j, x, i, prev
    cdef int64_t size = tier_size_of(t, d, k), nspread, rest
    cdef int bars[MAXC]
    cdef uint64_t mask
    if size == 0 or index < 0 or index >= size:
        return -1
    nspread = spreads(t, d, k)
    mask = t.sets[t.set_start[k] + (index >> 1) // nspread]
    rest = (index >> 1) % nspread
    x = d - 2
    for j in range(k - 1, 0, -1):
        while t.binom[x][j] > rest:
            x -= 1
        bars[j] = x + 1                 # s_j
        rest -= t.binom[x][j]
        x -= 1
    bars[0] = 0
    bars[k] = d
    memset(h, 0, t.c.ncells)
    j = 0
    for i in range(t.c.ncells):
        if (mask >> i) & 1:
            h[i] = bars[j + 1] - bars[j]
            j += 1
    occ[0] = mask
    return <int>(index & 1)


cdef int expand_tier(const void *ctx, int tier, int64_t index, int *child_tier,
                     int64_t *child_index, uint16_t *final_record) noexcept nogil:
    cdef const TierCtx *t = <const TierCtx *>ctx
    cdef uint8_t h[MAXC]
    cdef uint8_t child[MAXC]
    cdef Move moves[MAX_MOVES]
    cdef uint64_t occ = 0, child_occ
    cdef int side = unrank_tier(t, tier, index, h, &occ), n, i, outcome
    cdef int64_t at
    if side < 0:
        return -1
    outcome = final_outcome(&t.c, occ, side)
    if outcome:
        final_record[0] = REC_MAKE(outcome, 0)
        return 0
    n = gen_moves(&t.c, h, occ, moves)
    if n == 0:                 # never happens (RULES.md); as expand_key: the side to move loses
        final_record[0] = REC_MAKE(REC_LOSS, 0)
        return 0
    for i in range(n):
        child_occ = apply_move(&t.c, h, occ, moves[i], child)
        at = rank_tier(t, child, child_occ, side ^ 1, &child_tier[i])
        if at < 0:
            return -1
        child_index[i] = at
    return n


cdef class OverflowTiers:
    """The endgame tiers of one Overflow board up to `max_discs` discs: tier sizes, ranking, and
    the GameKernel capsule (`expand`) the tier solver and verifier call."""
    cdef TierCtx t
    cdef GameKernel kernel
    cdef object _sets
    cdef readonly int ncells, max_discs
    cdef readonly object set_counts

    def __cinit__(self, OverflowKernel board, int max_discs):
        cdef int i, j, k, n = board.ncells
        cdef uint64_t mask, low, ripple, limit
        cdef int64_t at, total = 0
        cdef uint64_t[::1] sets
        if not 1 <= max_discs <= min(ENDGAME_MAX_DISCS, n):
            raise ValueError(f"endgame tiers of 1 to {min(ENDGAME_MAX_DISCS, n)} discs, not {max_discs}")
        self.t.c = board.ctx
        self.ncells, self.max_discs = n, max_discs
        self.t.max_discs = max_discs
        self.t.max_occupied = min(max_discs, n)
        memset(self.t.binom, 0, sizeof(self.t.binom))
        for i in range(BINOM):
            self.t.binom[i][0] = 1
            for j in range(1, i + 1):
                self.t.binom[i][j] = self.t.binom[i - 1][j - 1] + (self.t.binom[i - 1][j] if j < i else 0)
        for k in range(1, self.t.max_occupied + 1):
            total += self.t.binom[n][k]
        if total > (<int64_t>1 << 32):
            raise ValueError(f"{total:,} sets of occupied cells are too many to list")
        counts = [0] * (n + 1)
        # every set of k cells in increasing order (Gosper's hack), kept when one group
        found = np.zeros(total, dtype=np.uint64)
        sets = found
        at = 0
        limit = (<uint64_t>1) << n if n < 64 else 0
        self.t.set_start[0] = 0
        self.t.set_start[1] = 0
        with nogil:
            for k in range(1, self.t.max_occupied + 1):
                self.t.set_start[k] = at
                mask = ((<uint64_t>1) << k) - 1
                while True:
                    if one_group(&self.t.c, mask):
                        sets[at] = mask
                        at += 1
                    if mask == (((<uint64_t>1) << k) - 1) << (n - k):
                        break
                    low = mask & (~mask + 1)
                    ripple = mask + low
                    mask = ripple | (((mask ^ ripple) >> 2) // low)
                self.t.set_start[k + 1] = at
        for k in range(self.t.max_occupied + 2, MAXC + 2):
            self.t.set_start[k] = at
        self._sets = found[:at].copy()
        sets = self._sets
        self.t.sets = &sets[0] if at else NULL
        self.set_counts = [0] + [int(self.t.set_start[k + 1] - self.t.set_start[k])
                                 for k in range(1, n + 1)]
        cdef int32_t *ranks
        self.t.set_rank = NULL
        if n <= RANK_TABLE_CELLS:
            # read at random by every look-up of a position's rank: in huge pages (big_table_alloc)
            ranks = <int32_t *>big_table_alloc(sizeof(int32_t) << n)
            if ranks == NULL:
                raise MemoryError("out of memory for the ranks of the endgame tiers")
            memset(ranks, 0xFF, sizeof(int32_t) << n)          # -1: not a one-group set
            for k in range(1, self.t.max_occupied + 1):
                for at in range(self.t.set_start[k], self.t.set_start[k + 1]):
                    ranks[sets[at]] = <int32_t>(at - self.t.set_start[k])
            self.t.set_rank = ranks
        self.kernel.ctx = &self.t
        self.kernel.max_children = 8 * self.t.max_occupied
        self.kernel.expand = expand_tier
        self.kernel.expand_key = NULL
        self.kernel.proof_hint = NULL
        self.kernel.level = NULL
        self.kernel.level_count = 0

    def __dealloc__(self):
        big_table_free(self.t.set_rank, sizeof(int32_t) << self.ncells)

    def capsule(self):
        return PyCapsule_New(&self.kernel, SOWSOLVE_KERNEL_CAPSULE, NULL)

    def tier_size(self, int tier):
        """Positions of a tier (0 for a number that names no tier this object ranks)."""
        if tier < 0:
            return 0
        return tier_size_of(&self.t, tier // (self.ncells + 1), tier % (self.ncells + 1))

    cdef void _position_in(self, heights, uint8_t *h, uint64_t *occ) except *:
        if len(heights) != self.ncells:
            raise ValueError(f"this board has {self.ncells} cells, not {len(heights)}")
        occ[0] = 0
        for i in range(self.ncells):
            v = heights[i]
            if not 0 <= v <= 255:
                raise ValueError(f"a stack of {v} discs cannot occur on this board")
            h[i] = v
            if v:
                occ[0] |= bit(i)

    def rank(self, heights, int side):
        """(tier, index) of a position (side 0 = Light to move); None where it is not ranked:
        more discs than max_discs, or the stacks not one group."""
        cdef uint8_t h[MAXC]
        cdef uint64_t occ
        cdef int tier = 0
        cdef int64_t index
        if side not in (0, 1):
            raise ValueError(f"side to move 0 or 1, not {side}")
        self._position_in(heights, h, &occ)
        index = rank_tier(&self.t, h, occ, side, &tier)
        return None if index < 0 else (tier, index)

    def unrank(self, int tier, int64_t index):
        """(heights, side) of position `index` of `tier`."""
        cdef uint8_t h[MAXC]
        cdef uint64_t occ
        cdef int side = unrank_tier(&self.t, tier, index, h, &occ)
        if side < 0:
            raise ValueError(f"no position {index} in tier {tier}")
        return tuple(h[j] for j in range(self.ncells)), side

    def unrank_range(self, int tier, int64_t start, int64_t stop):
        """(heights as a (stop - start, cells) uint8 array, sides as a uint8 array)."""
        cdef uint64_t occ
        cdef int64_t i
        cdef int side
        if not 0 <= start <= stop <= self.tier_size(tier):
            raise ValueError(f"range {start}..{stop} is outside tier {tier}")
        heights = np.zeros((stop - start, self.ncells), dtype=np.uint8)
        sides = np.zeros(stop - start, dtype=np.uint8)
        cdef uint8_t[:, ::1] hv = heights
        cdef uint8_t[::1] sv = sides
        cdef uint8_t h[MAXC]
        for i in range(start, stop):
            side = unrank_tier(&self.t, tier, i, h, &occ)
            memcpy(&hv[i - start, 0], h, self.ncells)
            sv[i - start] = side
        return heights, sides

    def children(self, int tier, int64_t index):
        """Solver view: [(tier, index)] of the children, or the final record."""
        cdef int ct[MAX_MOVES]
        cdef int64_t ci[MAX_MOVES]
        cdef uint16_t rec = 0
        n = expand_tier(&self.t, tier, index, ct, ci, &rec)
        if n < 0:
            raise ValueError(f"no position {index} in tier {tier}")
        if n == 0:
            return rec
        return [(ct[i], ci[i]) for i in range(n)]


# --- endgame tables at the leaves of the proof search -------------------------------------------
# A GameKernel over packed positions like the board's, except that a position an endgame table
# holds (at most its discs, a record of a win or a loss) is final, with the table's value: the
# proof search ends a line there, its hints say so of every child the table holds, and a proof
# checked with the same capsule (and the same table) ends its lines there too.

cdef struct LeafCtx:
    const OvCtx *c
    const TierCtx *t
    const uint8_t **wins          # by tier number: a bit per position (1: the side to move wins,
                                  # 0: it loses), NULL where the table holds none
    int64_t *lengths              # positions of each tier held
    int ntables
    int max_discs


cdef inline int leaf_tier(const LeafCtx *lc, const uint8_t *h, uint64_t occ, int side,
                          int64_t *index) noexcept nogil:
    """The tier of a position the table holds (its index there in `index`), else -1."""
    cdef int i, discs = 0, tier = 0
    for i in range(lc.c.ncells):
        discs += h[i]
    if discs > lc.max_discs:
        return -1
    index[0] = rank_tier(lc.t, h, occ, side, &tier)
    if index[0] < 0 or tier >= lc.ntables or lc.wins[tier] == NULL or index[0] >= lc.lengths[tier]:
        return -1
    return tier


cdef inline bint leaf_wins(const LeafCtx *lc, int tier, int64_t index) noexcept nogil:
    return (lc.wins[tier][index >> 3] >> (index & 7)) & 1


cdef inline int leaf_record(const LeafCtx *lc, const uint8_t *h, uint64_t occ, int side,
                            uint16_t *record) noexcept nogil:
    """1 with the table's record of a position it holds (a win or a loss, remoteness 0),
    else 0."""
    cdef int64_t index
    cdef int tier = leaf_tier(lc, h, occ, side, &index)
    if tier < 0:
        return 0
    record[0] = REC_MAKE(REC_WIN if leaf_wins(lc, tier, index) else REC_LOSS, 0)
    return 1


cdef int expand_packed(const OvCtx *c, const LeafCtx *lc, uint64_t key, uint64_t *child_key,
                       uint32_t *child_hint, uint16_t *final_record) noexcept nogil:
    """The children of a packed position (canonical keys; with `child_hint`, each one's
    hint_of), or 0 with its final record.  With an endgame table (`lc`, else NULL) a position
    it holds is final with the table's value, and so is the hint of a child it holds: read
    from the heights the move left, before the child is packed, and with the bytes of all the
    children asked for first, since they lie scattered over hundreds of megabytes."""
    cdef uint8_t h[MAXC]
    cdef uint8_t child[MAXC]
    cdef Move moves[MAX_MOVES]
    cdef int tiers[MAX_MOVES]
    cdef int64_t index[MAX_MOVES]
    cdef int side = unpack(c, key, h), n, i, outcome
    cdef uint64_t occ, child_occ
    cdef uint16_t record = 0
    cdef bint leaves = lc != NULL and child_hint != NULL
    if side < 0:
        return -1
    occ = occupancy(c, h)
    if (lc != NULL and __builtin_popcountll(key & ~(<uint64_t>1 << 63)) <= lc.max_discs
            and leaf_record(lc, h, occ, side, &record)):
        final_record[0] = REC_MAKE(REC_OUTCOME(record), 0)
        return 0
    outcome = final_outcome(c, occ, side)
    if outcome:
        final_record[0] = REC_MAKE(outcome, 0)
        return 0
    n = gen_moves(c, h, occ, moves)
    if n == 0:                 # never happens (RULES.md); the side that cannot move loses
        final_record[0] = REC_MAKE(REC_LOSS, 0)
        return 0
    for i in range(n):
        child_occ = apply_move(c, h, occ, moves[i], child)
        child_key[i] = canonical(c, child, side ^ 1)
        if child_hint != NULL:
            # the hint does not depend on the symmetry: houses swap with the side bit
            hint_of_heights(c, child, child_occ, side ^ 1, &child_hint[2 * i], &child_hint[2 * i + 1])
            if leaves:
                tiers[i] = leaf_tier(lc, child, child_occ, side ^ 1, &index[i])
                if tiers[i] >= 0:
                    prefetch_for_read(&lc.wins[tiers[i]][index[i] >> 3])
    if leaves:
        for i in range(n):
            if tiers[i] >= 0:
                if leaf_wins(lc, tiers[i], index[i]):
                    child_hint[2 * i] = 0
                    child_hint[2 * i + 1] = PROOF_INF
                else:
                    child_hint[2 * i] = PROOF_INF
                    child_hint[2 * i + 1] = 0
    return n


cdef inline int leaf_of_key(const LeafCtx *lc, uint64_t key, uint16_t *record) noexcept nogil:
    cdef uint8_t h[MAXC]
    cdef int side
    if __builtin_popcountll(key & ~(<uint64_t>1 << 63)) > lc.max_discs:
        return 0                # a disc is a one-bit of the packing: more than the table holds
    side = unpack(lc.c, key, h)
    if side < 0:
        return 0
    return leaf_record(lc, h, occupancy(lc.c, h), side, record)


cdef int leaf_expand_key(const void *ctx, uint64_t key, uint64_t *child_key, uint32_t *child_hint,
                         uint16_t *final_record) noexcept nogil:
    cdef const LeafCtx *lc = <const LeafCtx *>ctx
    return expand_packed(lc.c, lc, key, child_key, child_hint, final_record)


cdef int leaf_proof_hint(const void *ctx, uint64_t key, uint32_t *phi, uint32_t *delta) noexcept nogil:
    cdef const LeafCtx *lc = <const LeafCtx *>ctx
    cdef uint16_t record = 0
    if leaf_of_key(lc, key, &record):
        phi[0] = 0 if REC_OUTCOME(record) == REC_WIN else PROOF_INF
        delta[0] = PROOF_INF if REC_OUTCOME(record) == REC_WIN else 0
        return 1
    return proof_hint(lc.c, key, phi, delta)


cdef class TableLeaves:
    """The board's packed-position kernel with an endgame table's positions as final ones
    (`capsule()`): each tier the table holds solved is added with `add_tier` (its records, as
    the table's reader checked them), kept as one bit a position (who wins: all a proof needs of
    a leaf, so a table's leaves take an eighth of a byte a position and their look-ups touch
    sixteen times less memory than the records would); positions of at most `max_discs` discs
    are looked up.  The bits are kept in huge pages where the system offers them (as the search's
    table): a child's look-up is a read at random in hundreds of megabytes, which on small pages
    also waits for a walk of the page tables."""
    cdef LeafCtx lc
    cdef GameKernel kernel
    cdef OverflowKernel board
    cdef OverflowTiers tiers
    cdef uint8_t **wins
    cdef int64_t *lengths
    cdef int ntables
    cdef readonly int64_t positions

    def __cinit__(self, OverflowKernel board, OverflowTiers tiers, int max_discs):
        cdef int ntables = (tiers.max_discs + 1) * (tiers.ncells + 1)
        if not board.keyable:
            raise ValueError("positions of this board do not pack into 64 bits")
        if tiers.ncells != board.ncells:
            raise ValueError("the endgame tiers are of another board")
        if not 0 <= max_discs <= tiers.max_discs:
            raise ValueError(f"leaves of at most {max_discs} discs: the tiers rank at most {tiers.max_discs}")
        self.wins = <uint8_t **>calloc(ntables, sizeof(uint8_t *))
        self.lengths = <int64_t *>calloc(ntables, sizeof(int64_t))
        if self.wins == NULL or self.lengths == NULL:
            raise MemoryError()
        self.ntables = ntables
        self.board, self.tiers = board, tiers
        self.positions = 0
        self.lc.c = &board.ctx
        self.lc.t = &tiers.t
        self.lc.wins = <const uint8_t **>self.wins
        self.lc.lengths = self.lengths
        self.lc.ntables = ntables
        self.lc.max_discs = max_discs
        self.kernel = board.kernel
        self.kernel.ctx = &self.lc
        self.kernel.expand_key = leaf_expand_key
        self.kernel.proof_hint = leaf_proof_hint
        self.kernel.expand = NULL

    def add_tier(self, int tier, cnp.ndarray records):
        """Hold a solved tier of the table: `records` (uint16, one per position of the tier) must
        each be a win or a loss; they are kept as a bit each.  Refused (ValueError) otherwise,
        before anything is kept; a tier is added once."""
        cdef const cnp.uint16_t[::1] view
        cdef uint8_t *out
        cdef int64_t i, n, bad = -1
        cdef uint16_t outcome
        if not 0 <= tier < self.ntables:
            raise ValueError(f"no tier {tier} on this board")
        if self.wins[tier] != NULL:
            raise ValueError(f"tier {tier} is already held")
        if not (records.dtype == np.uint16 and records.ndim == 1):
            raise ValueError(f"the records of tier {tier} are not a uint16 array")
        n = records.shape[0]
        if n != self.tiers.tier_size(tier):
            raise ValueError(f"tier {tier} holds {self.tiers.tier_size(tier)} positions, not {n}")
        if n == 0:
            return
        view = np.ascontiguousarray(records)
        out = <uint8_t *>big_table_alloc((n + 7) // 8)          # zeroed
        if out == NULL:
            raise MemoryError(f"out of memory for tier {tier} of the endgame table")
        with nogil:
            for i in range(n):
                outcome = REC_OUTCOME(view[i])
                if outcome == REC_WIN:
                    out[i >> 3] |= <uint8_t>(1 << (i & 7))
                elif outcome != REC_LOSS:
                    bad = i
                    break
        if bad >= 0:
            big_table_free(out, (n + 7) // 8)
            raise ValueError(f"position {bad} of tier {tier} is neither a win nor a loss "
                             f"(record {records[bad]})")
        self.wins[tier] = out
        self.lengths[tier] = n
        self.positions += n

    @property
    def nbytes(self):
        """Bytes the held tiers take."""
        return sum((self.lengths[t] + 7) // 8 for t in range(self.ntables) if self.wins[t] != NULL)

    def __dealloc__(self):
        cdef int t
        if self.wins != NULL and self.lengths != NULL:
            for t in range(self.ntables):
                big_table_free(self.wins[t], (self.lengths[t] + 7) // 8)
        free(self.wins)
        free(self.lengths)

    def capsule(self):
        return PyCapsule_New(&self.kernel, SOWSOLVE_KERNEL_CAPSULE, NULL)

    def leaf(self, uint64_t key):
        """The table's record of a packed position it holds, else None."""
        cdef uint16_t record = 0
        return record if leaf_of_key(&self.lc, key, &record) else None

    def children(self, uint64_t key):
        """Canonical keys of the children, or the final record (a table's position: its value)."""
        cdef uint64_t out[MAX_MOVES]
        cdef uint16_t rec = 0
        n = leaf_expand_key(&self.lc, key, out, NULL, &rec)
        if n < 0:
            raise ValueError(f"{key:#x} is not a packed position of this board")
        if n == 0:
            return rec
        return [out[i] for i in range(n)]
