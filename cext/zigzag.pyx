# cython: language_level=3
"""Zig Zag kernel: multi-lap sowing around the zig-zag circuit, captures, ko, perft.

A turn is a sequence of laps, each fixed by the board, the pit in hand and the seeds; laps that
never end are found exactly by Brent's cycle detection on those lap states (the state space is
finite, so a turn that does not end repeats a state), with two board copies and no hashing.
"""
from libc.stdint cimport int8_t, int64_t, uint8_t
from libc.string cimport memcmp, memcpy

import numpy as np
cimport numpy as cnp

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
                    int64_t *counts) noexcept nogil:
    cdef TurnResult turns[MAXP]
    cdef int pits[MAXP]
    cdef int n = gen_turns(c, board, side, ko, turns, pits), i
    counts[ply] += n
    if ply + 1 < depth:
        for i in range(n):
            perft_rec(c, turns[i].board, 1 - side, turns[i].ko, depth, ply + 1, counts)


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
        with nogil:
            perft_rec(&self.ctx, b, side, k, depth, 0, &cv[0])
        return [int(x) for x in counts]
