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
from libc.string cimport memcpy, memset

import numpy as np
cimport numpy as cnp

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil

from kernel_api cimport (PROOF_INF, GameKernel, PlayKernel, REC_LOSS, REC_MAKE, REC_WIN,
                         SOWSOLVE_KERNEL_CAPSULE, SOWSOLVE_PLAY_CAPSULE, SignalPoll, poll_signals,
                         raise_pending)

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


cdef int gen_moves(const OvCtx *c, const uint8_t *h, uint64_t occ, Move *out) noexcept nogil:
    """Legal moves of a position whose houses are both occupied."""
    cdef int n = 0, cell, d, x, length, lead, empty, best, first, i, stack
    cdef uint64_t line, rest
    cdef bint rest_ok
    for cell in range(c.ncells):
        stack = h[cell]
        if stack == 0:
            continue
        rest = occ & ~bit(cell)
        best = 0
        first = n
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


cdef int expand_key(const void *ctx, uint64_t key, uint64_t *child_key, uint32_t *child_hint,
                    uint16_t *final_record) noexcept nogil:
    cdef const OvCtx *c = <const OvCtx *>ctx
    cdef uint8_t h[MAXC]
    cdef uint8_t child[MAXC]
    cdef Move moves[MAX_MOVES]
    cdef int side = unpack(c, key, h), n, i, outcome
    cdef uint64_t occ, child_occ
    if side < 0:
        return -1
    occ = occupancy(c, h)
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
            hint_of(c, child_occ, side ^ 1, &child_hint[2 * i], &child_hint[2 * i + 1])
    return n


cdef int proof_hint(const void *ctx, uint64_t key, uint32_t *phi, uint32_t *delta) noexcept nogil:
    """hint_of a packed position (1 for a final one, phi and delta set; else 0)."""
    cdef const OvCtx *c = <const OvCtx *>ctx
    cdef uint8_t h[MAXC]
    cdef int side = unpack(c, key, h)
    phi[0] = 1
    delta[0] = 1
    if side < 0:
        return 0
    return hint_of(c, occupancy(c, h), side, phi, delta)


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



# --- the play layer (the analysis engine, engine.pyx) -------------------------------------------
# A state is the heights of the cells (a1 first), then the side to move (0 Light, 1 Dark): any
# board, 2x2 to 8x8.  A move's code is cell * 8 + direction.
FEATURES = ("house_discs", "house_cells", "last_cell")


cdef int play_moves(const void *ctx, const uint8_t *state, uint8_t *children, int16_t *codes,
                    int16_t *gains, int *final) noexcept nogil:
    cdef const OvCtx *c = <const OvCtx *>ctx
    cdef Move moves[MAX_MOVES]
    cdef int side = state[c.ncells], n, i, outcome, width = c.ncells + 1
    cdef uint64_t occ = occupancy(c, state)
    outcome = final_outcome(c, occ, side)
    if outcome:
        final[0] = 1 if outcome == REC_WIN else -1
        return 0
    n = gen_moves(c, state, occ, moves)
    if n == 0:                 # never happens (RULES.md); as expand_key: the side to move loses
        final[0] = -1
        return 0
    for i in range(n):
        apply_move(c, state, occ, moves[i], &children[i * width])
        children[i * width + c.ncells] = side ^ 1
        codes[i] = moves[i].cell * NDIR + moves[i].direction
        gains[i] = 0
    return n


cdef int play_over(const void *ctx, const uint8_t *state, int *final) noexcept nogil:
    """Over when a house is empty (RULES.md: a position with both houses occupied has a move)."""
    cdef const OvCtx *c = <const OvCtx *>ctx
    cdef int outcome = final_outcome(c, occupancy(c, state), state[c.ncells])
    if outcome:
        final[0] = 1 if outcome == REC_WIN else -1
        return 1
    return 0


cdef void play_features(const void *ctx, const uint8_t *state, int32_t *f) noexcept nogil:
    """From the side to move, whose house must keep a disc while the other's empties: discs
    and occupied cells of its house less the other's, and whether a house is down to its last
    occupied cell (+1 the other's, -1 its own).  (The number of moves on the board was a
    feature too; generating the moves at every leaf halved the positions searched a second on
    6x6, for no gain in the values kept on 4x4: 174 of 200 with it, 171 without, 0.1 s a move.)"""
    cdef const OvCtx *c = <const OvCtx *>ctx
    cdef int side = state[c.ncells], i, discs = 0, mine_cells, theirs_cells
    cdef uint64_t occ = occupancy(c, state)
    cdef uint64_t mine = c.light if side == 0 else c.dark
    for i in range(c.ncells):
        if (mine >> i) & 1:
            discs += state[i]
        else:
            discs -= state[i]
    mine_cells = __builtin_popcountll(occ & mine)
    theirs_cells = __builtin_popcountll(occ & ~mine)
    f[0] = discs
    f[1] = mine_cells - theirs_cells
    f[2] = (theirs_cells == 1) - (mine_cells == 1)


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
        self.play.over = play_over

    def capsule(self):
        return PyCapsule_New(&self.kernel, SOWSOLVE_KERNEL_CAPSULE, NULL)

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
