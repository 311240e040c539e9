# cython: language_level=3
"""Zig Zag kernel: multi-lap sowing around the zig-zag circuit, captures, ko, perft.

A turn is a sequence of laps, each fixed by the board, the pit in hand and the seeds; laps that
never end are found exactly by Brent's cycle detection on those lap states (the state space is
finite, so a turn that does not end repeats a state), with two board copies and no hashing.
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t
from libc.string cimport memcmp, memcpy, memset

import numpy as np
cimport numpy as cnp

from kernel_api cimport (CONTROL_FLUSH, MARGIN_REMOTENESS, MARGIN_UNSOLVED, MARGIN_VALUE, Control,
                         SignalPoll, control_of, ctl_add, ctl_stopped, poll_signals, raise_pending)

cnp.import_array()

cdef enum:
    MAXP = 16          # pits (8 columns)
    NO_KO = -1
    INFINITE = -1


cdef struct ZzCtx:
    int cols
    int npits
    int8_t next_pit[2][MAXP]      # [0]: forward orientation, [1]: backward
    uint8_t first_orientation[MAXP]
    uint8_t left_half[MAXP]


cdef struct TurnResult:
    uint8_t board[MAXP]
    int captured
    int ko


cdef inline int owner(const ZzCtx *c, int pit) noexcept nogil:
    """0 for P (top row), 1 for p (bottom row)."""
    return 0 if pit < c.cols else 1


cdef inline int across(const ZzCtx *c, int pit) noexcept nogil:
    return pit + c.cols if pit < c.cols else pit - c.cols


cdef int sow(const ZzCtx *c, const uint8_t *board, int side, int pit, TurnResult *out) noexcept nogil:
    """The turn of lifting `pit` (side 0 = P, 1 = p): 0 with the result in *out, or INFINITE."""
    cdef uint8_t *cells = out.board
    cdef uint8_t saved[MAXP]
    cdef int saved_here = -1, saved_seeds = -1
    cdef int orientation = c.first_orientation[pit]
    cdef int here = pit, seeds, i, own, laps = 0
    cdef int64_t power = 1, lam = 0
    memcpy(cells, board, c.npits)
    seeds = cells[pit]
    cells[pit] = 0
    while True:
        # Brent: compare this lap state with the saved one; move the save point at powers of 2
        if here == saved_here and seeds == saved_seeds and memcmp(cells, saved, c.npits) == 0:
            return INFINITE
        if lam == power:
            memcpy(saved, cells, c.npits)
            saved_here = here
            saved_seeds = seeds
            power *= 2
            lam = 0
        lam += 1
        laps += 1
        for i in range(seeds):
            here = c.next_pit[orientation][here]
            cells[here] += 1
        if owner(c, here) == side:
            if cells[here] == 1:
                out.captured = 0
                out.ko = NO_KO
                return 0
            seeds = cells[here]
            cells[here] = 0
            continue
        if cells[here] > 1:
            out.captured = 0
            out.ko = NO_KO
            return 0
        own = across(c, here)
        out.captured = cells[own]
        cells[own] = 0
        out.ko = NO_KO
        if laps == 1 and seeds == 1 and out.captured == 0 and c.left_half[pit] != c.left_half[here]:
            out.ko = here
        return 0


cdef int gen_turns(const ZzCtx *c, const uint8_t *board, int side, int ko, TurnResult *out,
                   int *pits) noexcept nogil:
    cdef int pit, n = 0
    for pit in range(c.npits):
        if owner(c, pit) != side or board[pit] == 0:
            continue
        if sow(c, board, side, pit, &out[n]) == INFINITE:
            continue
        if pit == ko and out[n].captured == 0:
            continue
        pits[n] = pit
        n += 1
    return n


cdef void perft_rec(const ZzCtx *c, const uint8_t *board, int side, int ko, int depth, int ply,
                    int64_t *counts, SignalPoll *poll) noexcept nogil:
    cdef TurnResult turns[MAXP]
    cdef int pits[MAXP]
    cdef int n, i
    if poll_signals(poll):
        return
    n = gen_turns(c, board, side, ko, turns, pits)
    counts[ply] += n
    if ply + 1 < depth:
        for i in range(n):
            perft_rec(c, turns[i].board, 1 - side, turns[i].ko, depth, ply + 1, counts, poll)


cdef class ZigZagKernel:
    """Kernel of one Zig Zag board (move generation and perft; the solver is still to come)."""
    cdef ZzCtx ctx
    cdef readonly int cols, npits

    def __cinit__(self, int cols, circuit, first_orientation):
        cdef int i, pit
        if not (2 <= cols <= MAXP // 2) or cols % 2:
            raise ValueError(f"the kernel supports an even number of columns from 2 to {MAXP // 2}")
        self.cols, self.npits = cols, 2 * cols
        self.ctx.cols, self.ctx.npits = cols, 2 * cols
        if sorted(circuit) != list(range(self.npits)):
            raise ValueError("the circuit must visit every pit once")
        for i in range(self.npits):
            pit = circuit[i]
            self.ctx.next_pit[0][pit] = circuit[(i + 1) % self.npits]
            self.ctx.next_pit[1][pit] = circuit[(i + self.npits - 1) % self.npits]
        for pit in range(self.npits):
            self.ctx.first_orientation[pit] = 0 if first_orientation[pit] == 1 else 1
            self.ctx.left_half[pit] = (pit % cols) < cols // 2

    cdef void _board_in(self, board, uint8_t *out) except *:
        if len(board) != self.npits:
            raise ValueError(f"a board of this kernel has {self.npits} pits, not {len(board)}")
        if sum(board) > 255:
            raise ValueError("the kernel counts at most 255 seeds")
        for i in range(self.npits):
            if board[i] < 0:
                raise ValueError("a pit cannot hold a negative number of seeds")
            out[i] = board[i]

    def turns(self, board, int side, ko):
        """[(pit, board after, captured, ko pit or None)] of the legal moves (side 0 = P)."""
        cdef uint8_t b[MAXP]
        cdef TurnResult turns[MAXP]
        cdef int pits[MAXP]
        self._board_in(board, b)
        n = gen_turns(&self.ctx, b, side, NO_KO if ko is None else ko, turns, pits)
        return [(pits[i], tuple(turns[i].board[j] for j in range(self.npits)), turns[i].captured,
                 None if turns[i].ko == NO_KO else turns[i].ko) for i in range(n)]

    def perft(self, board, int side, ko, int depth):
        cdef uint8_t b[MAXP]
        self._board_in(board, b)
        if depth < 1:
            raise ValueError(f"perft depth must be at least 1, not {depth}")
        counts = np.zeros(depth, dtype=np.int64)
        cdef int64_t[::1] cv = counts
        cdef int k = NO_KO if ko is None else ko
        cdef SignalPoll poll
        poll.calls = 0
        poll.pending = 0
        with nogil:
            perft_rec(&self.ctx, b, side, k, depth, 0, &cv[0], &poll)
        if poll.pending:
            raise_pending()
        return [int(x) for x in counts]


# --- the score solver -----------------------------------------------------------------------
#
# Tier (S, c): S seeds on the board, c who captured last (0 nobody, 1 P, 2 p).  Inside a tier the
# index is (rank(board) * 2 + side) * 3 + ko slot, with the board ranked among the compositions
# of S into 2n pits and the ko slot 0 (none), 1 or 2 (the side to move's left or right centre
# pit).  Records follow the margin layout of sowsolve_kernel.h (MARGIN_VALUE, MARGIN_REMOTENESS;
# remoteness MARGIN_REM_ENDLESS: the value comes from play that avoids captures forever), which
# is also how scoresolve.pyx reads the remoteness of an exit.


cdef enum:
    MAX_TOTAL = 160


cdef int64_t ncomp[MAXP + 2][MAX_TOTAL + 1]     # ncomp[k][s]: compositions of s into k parts


cdef void init_ncomp() noexcept nogil:
    cdef int k, s
    for s in range(MAX_TOTAL + 1):
        ncomp[0][s] = 1 if s == 0 else 0
    for k in range(1, MAXP + 2):
        ncomp[k][0] = 1
        for s in range(1, MAX_TOTAL + 1):
            ncomp[k][s] = ncomp[k][s - 1] + ncomp[k - 1][s]      # saturates long before overflow here


init_ncomp()


cdef inline int64_t rank_board(int m, const uint8_t *b, int total) noexcept nogil:
    cdef int64_t r = 0
    cdef int i, k, rest = total
    for i in range(m - 1):
        k = m - i - 1
        r += ncomp[k + 1][rest] - ncomp[k + 1][rest - b[i]]
        rest -= b[i]
    return r


cdef inline void unrank_board(int m, int64_t r, int total, uint8_t *b) noexcept nogil:
    cdef int i, k, x, rest = total
    for i in range(m - 1):
        k = m - i - 1
        x = 0
        while r >= ncomp[k][rest - x]:
            r -= ncomp[k][rest - x]
            x += 1
        b[i] = x
        rest -= x
    b[m - 1] = rest


cdef inline int ko_slot(const ZzCtx *c, int side, int ko) noexcept nogil:
    cdef int row = 0 if side == 0 else c.cols
    if ko < 0:
        return 0
    return 1 if ko == row + c.cols // 2 - 1 else 2


cdef inline int ko_pit(const ZzCtx *c, int side, int slot) noexcept nogil:
    cdef int row = 0 if side == 0 else c.cols
    if slot == 0:
        return NO_KO
    return row + c.cols // 2 - 1 + (slot - 1)


cdef int64_t child_index(const ZzCtx *c, const uint8_t *board, int seeds, int side, int ko) noexcept nogil:
    return (rank_board(c.npits, board, seeds) * 2 + side) * 3 + ko_slot(c, side, ko)


def tier_size(int pits, int seeds):
    """Positions of tier (seeds, any capturer) of a board of `pits` pits."""
    if not 0 <= seeds <= MAX_TOTAL or not 1 <= pits <= MAXP:
        raise ValueError("no such tier")
    return int(ncomp[pits][seeds]) * 6


def tier_graph(ZigZagKernel self, int seeds, int capturer, dict lower, int64_t[::1] control=None):
    """The move graph of tier (seeds, capturer) for the score solver: per position its side
    (0 = P), its moves, the same-tier child of each move (-1 none, -2 a capture), and for each
    capture its value for P and the remoteness after it, read from `lower`, which maps
    (seeds, capturer) to the solved records of every tier a capture leads to.

    `control` (solver/kernels.py): the loop stops early when asked (KeyboardInterrupt) and
    counts the positions it has handled."""
    cdef ZzCtx *c = &self.ctx
    cdef int width = c.cols, m = c.npits, nmoves, j, side, k, cside, cslot, infinite_value
    cdef int64_t n, i, r, edges = 0, captures = 0, finals = 0, endless = 0
    cdef int64_t e, y, q_head, q_tail, idx
    cdef uint8_t board[MAXP]
    cdef TurnResult turns[MAXP]
    cdef int pits[MAXP]
    cdef const uint16_t *low[MAX_TOTAL + 1][3]
    cdef uint16_t rec
    cdef int u_child, missing = 0, beyond = 0, stopped = 0
    cdef Control spare
    cdef Control *ctl = control_of(control, &spare)
    if not 0 <= seeds <= MAX_TOTAL or not 0 <= capturer <= 2:
        raise ValueError(f"no tier ({seeds}, {capturer})")
    n = ncomp[m][seeds] * 6
    for k in range(MAX_TOTAL + 1):
        low[k][0] = low[k][1] = low[k][2] = NULL
    keep = []
    for (s, cap), array in lower.items():
        if not (0 <= s <= MAX_TOTAL and 0 <= cap <= 2):
            raise ValueError(f"no tier ({str(s)[:20]}, {str(cap)[:20]}) among the lower tiers")
        array = np.ascontiguousarray(array, dtype=np.uint16)
        if array.ndim != 1 or array.shape[0] != ncomp[m][s] * 6:
            raise ValueError(f"tier ({s}, {cap}) holds {array.size} records, not {ncomp[m][s] * 6}")
        keep.append(array)
        low[s][cap] = <const uint16_t *>cnp.PyArray_DATA(array)
    side_of = np.empty(n, dtype=np.uint8)
    deg = np.zeros(n, dtype=np.uint8)
    same = np.full(n * width, -1, dtype=np.int32)
    exit_u = np.zeros(n * width, dtype=np.int16)
    exit_rem = np.zeros(n * width, dtype=np.uint8)
    has_capture = np.zeros(n, dtype=np.uint8)
    cdef uint8_t[::1] side_v = side_of, deg_v = deg, rem_v = exit_rem, cap_v = has_capture
    cdef int32_t[::1] same_v = same
    cdef int16_t[::1] u_v = exit_u
    infinite_value = 0 if capturer == 0 else (seeds if capturer == 1 else -seeds)
    with nogil:
        for i in range(n):
            if (i & (CONTROL_FLUSH - 1)) == 0 and i:
                ctl_add(ctl, CONTROL_FLUSH)
                if ctl_stopped(ctl):
                    stopped = 1
                    break
            r = i
            k = r % 3
            r = r // 3
            side = r % 2
            r = r // 2
            unrank_board(m, r, seeds, board)
            side_v[i] = side
            nmoves = gen_turns(c, board, side, ko_pit(c, side, k), turns, pits)
            deg_v[i] = nmoves
            for j in range(nmoves):
                if turns[j].captured == 0:
                    same_v[i * width + j] = <int32_t>child_index(c, turns[j].board, seeds, 1 - side, turns[j].ko)
                    edges += 1
                    continue
                captures += 1
                cap_v[i] = 1
                same_v[i * width + j] = -2
                k = turns[j].captured
                cside = 1 if side == 0 else 2
                if low[seeds - k][cside] == NULL:
                    missing += 1
                    continue
                rec = low[seeds - k][cside][child_index(c, turns[j].board, seeds - k, 1 - side, turns[j].ko)]
                if rec == MARGIN_UNSOLVED:
                    missing += 1
                    continue
                u_child = MARGIN_VALUE(rec) if side == 1 else -MARGIN_VALUE(rec)   # child: other side
                if u_child > seeds - k or u_child < k - seeds:
                    beyond += 1                     # more seeds than the child's tier holds
                    continue
                u_v[i * width + j] = (k if side == 0 else -k) + u_child
                rem_v[i * width + j] = MARGIN_REMOTENESS(rec)
        if not stopped:
            ctl_add(ctl, n - ((n - 1) & ~(<int64_t>CONTROL_FLUSH - 1)) if n else 0)
    if stopped:
        raise KeyboardInterrupt
    if missing:
        raise RuntimeError(f"tier ({seeds}, {capturer}): {missing} captures lead to unsolved tiers")
    if beyond:
        raise RuntimeError(f"tier ({seeds}, {capturer}): {beyond} captures lead to records whose "
                           f"margin exceeds the seeds left on the board")
    return {"side": side_of, "moves": deg, "same": same, "width": width, "exit_value": exit_u,
            "exit_remoteness": exit_rem, "captures": has_capture, "bound": seeds,
            "endless_value": infinite_value, "edges": int(edges), "capture_moves": int(captures)}


def rank(ZigZagKernel self, board, int side, ko):
    """(seeds, index inside any tier of that many seeds) of a position (side 0 = P)."""
    cdef uint8_t b[MAXP]
    self._board_in(board, b)
    seeds = sum(board)
    if seeds > MAX_TOTAL:
        raise ValueError(f"at most {MAX_TOTAL} seeds")
    return seeds, int(child_index(&self.ctx, b, seeds, side, NO_KO if ko is None else ko))


def unrank_range(ZigZagKernel self, int seeds, int64_t start, int64_t stop):
    """Boards (count x pits, uint8), sides (0 = P) and ko pits (-1 none) of indices start..stop-1."""
    cdef int64_t i, r, n = ncomp[self.npits][seeds] * 6
    if not 0 <= start <= stop <= n:
        raise IndexError(f"range {start}..{stop} is outside the tier of {seeds} seeds")
    boards = np.empty((stop - start, self.npits), dtype=np.uint8)
    sides = np.empty(stop - start, dtype=np.uint8)
    kos = np.empty(stop - start, dtype=np.int8)
    cdef uint8_t[:, ::1] bv = boards
    cdef uint8_t[::1] sv = sides
    cdef int8_t[::1] kv = kos
    with nogil:
        for i in range(stop - start):
            r = start + i
            kv[i] = ko_pit(&self.ctx, (r // 3) % 2, r % 3)
            sv[i] = (r // 3) % 2
            unrank_board(self.ctx.npits, r // 6, seeds, &bv[i, 0])
    return boards, sides, kos
