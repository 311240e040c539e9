# cython: language_level=3
"""Zig Zag kernel: multi-lap sowing around the zig-zag circuit, captures, ko, perft.

A turn is a sequence of laps, each fixed by the board, the pit in hand and the seeds; laps that
never end are found exactly by Brent's cycle detection on those lap states (the state space is
finite, so a turn that does not end repeats a state), with two board copies and no hashing.
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy, memset
from cpython.pycapsule cimport PyCapsule_New

import numpy as np
cimport numpy as cnp

from kernel_api cimport (CONTROL_FLUSH, MARGIN_MAX_REMOTENESS, MARGIN_REM_LONG, MARGIN_UNSOLVED,
                         MARGIN_VALUE, Control, margin_plies, prefetch_for_read,
                         SCORE_ERR_BEYOND, SCORE_ERR_LONG, SCORE_ERR_PREDS, SCORE_ERR_UNSOLVED, SCORE_EXIT,
                         SOWSOLVE_SCORE_TIER_CAPSULE, ScoreTier, SignalPoll, control_of, ctl_add,
                         PlayKernel, SOWSOLVE_PLAY_CAPSULE,
                         ctl_stopped, poll_signals, raise_pending)

cnp.import_array()

cdef enum:
    MAXP = 16          # pits (8 columns)
    NO_KO = -1
    INFINITE = -1


cdef struct ZzCtx:
    # Inside the kernel a board is held in circuit order: cell k is the pit at position k of the
    # circuit, so sowing forward is k + 1 and backward k - 1 (no table walk on the hot path); a
    # ko pit is a circuit position too.  Pit order (the rules' numbering) is used only to rank
    # boards and at the Python boundary.
    int cols
    int npits
    int8_t circ[MAXP]             # the pit at each circuit position
    int8_t at[MAXP]               # the circuit position of each pit
    int8_t turned_at[MAXP]        # at[npits - 1 - pit]: pit `pit` of the board turned half a turn
    uint8_t owner_c[MAXP]         # by circuit position: 0 P (top row), 1 p
    int8_t across_c[MAXP]         # by circuit position: the circuit position across
    uint8_t backward_c[MAXP]      # by circuit position: 1 if a turn begun there sows backward
    uint8_t left_c[MAXP]          # by circuit position: in the left half of its row
    int8_t ko_at[2][3]            # [side][slot]: the circuit position of a ko slot (NO_KO for 0)


cdef struct TurnResult:
    uint8_t board[MAXP]           # circuit order
    int captured
    int ko                        # circuit position, or NO_KO


cdef inline int step_back(int k, int backward, int n) noexcept nogil:
    """The circuit position before k for a lap sown forward (backward == 0), or after it."""
    if backward:
        return k + 1 if k + 1 < n else 0
    return k - 1 if k > 0 else n - 1


cdef int sow(const ZzCtx *c, const uint8_t *board, int side, int start, TurnResult *out) noexcept nogil:
    """The turn of lifting circuit position `start` (side 0 = P, 1 = p): 0 with the result in
    *out, or INFINITE."""
    cdef uint8_t *cells = out.board
    cdef uint8_t saved[MAXP]
    cdef int n = c.npits
    cdef int saved_here = -1, saved_seeds = -1
    cdef int backward = c.backward_c[start]
    cdef int here = start, seeds, i, own, laps = 0, rest, full
    cdef int64_t power = 1, lam = 0
    memcpy(cells, board, n)
    seeds = cells[start]
    cells[start] = 0
    while True:
        # Brent: compare this lap state with the saved one; move the save point at powers of 2
        if here == saved_here and seeds == saved_seeds and memcmp(cells, saved, n) == 0:
            return INFINITE
        if lam == power:
            memcpy(saved, cells, n)
            saved_here = here
            saved_seeds = seeds
            power *= 2
            lam = 0
        lam += 1
        laps += 1
        rest = seeds
        if rest >= n:                # whole rounds of the circuit: a seed in every pit each
            full = rest // n
            rest -= full * n
            for i in range(n):
                cells[i] += full
        if backward:
            for i in range(rest):
                here = here - 1 if here > 0 else n - 1
                cells[here] += 1
        else:
            for i in range(rest):
                here = here + 1 if here + 1 < n else 0
                cells[here] += 1
        if c.owner_c[here] == side:
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
        own = c.across_c[here]
        out.captured = cells[own]
        cells[own] = 0
        out.ko = NO_KO
        if laps == 1 and seeds == 1 and out.captured == 0 and c.left_c[start] != c.left_c[here]:
            out.ko = here
        return 0


cdef int gen_turns(const ZzCtx *c, const uint8_t *board, int side, int ko, TurnResult *out,
                   int *pits) noexcept nogil:
    """The legal turns of `side` from `board` (circuit order, ko a circuit position), in pit
    order; `pits` gets the pit (the rules' number) of each."""
    cdef int pit, k, n = 0
    for pit in range(c.npits):
        k = c.at[pit]
        if c.owner_c[k] != side or board[k] == 0:
            continue
        if sow(c, board, side, k, &out[n]) == INFINITE:
            continue
        if k == ko and out[n].captured == 0:
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
    """Kernel of one Zig Zag board (move generation and perft; its tiers: ScoreTierOf)."""
    cdef ZzCtx ctx
    cdef PlayKernel play
    cdef readonly int cols, npits

    def __cinit__(self, int cols, circuit, first_orientation):
        cdef int i, pit, n
        if not (2 <= cols <= MAXP // 2) or cols % 2:
            raise ValueError(f"the kernel supports an even number of columns from 2 to {MAXP // 2}")
        n = 2 * cols
        self.cols, self.npits = cols, n
        self.ctx.cols, self.ctx.npits = cols, n
        if sorted(circuit) != list(range(n)):
            raise ValueError("the circuit must visit every pit once")
        for i in range(n):
            self.ctx.circ[i] = circuit[i]
            self.ctx.at[circuit[i]] = i
        for i in range(n):
            pit = circuit[i]
            self.ctx.turned_at[pit] = self.ctx.at[n - 1 - pit]
            self.ctx.owner_c[i] = 0 if pit < cols else 1
            self.ctx.across_c[i] = self.ctx.at[pit + cols if pit < cols else pit - cols]
            self.ctx.backward_c[i] = 0 if first_orientation[pit] == 1 else 1
            self.ctx.left_c[i] = (pit % cols) < cols // 2
        for side in range(2):
            self.ctx.ko_at[side][0] = NO_KO
            for slot in (1, 2):
                self.ctx.ko_at[side][slot] = self.ctx.at[ko_pit(&self.ctx, side, slot)]
        self.play.ctx = &self.ctx
        self.play.state_bytes = n + 3
        self.play.max_moves = n
        self.play.margin = 1
        self.play.features = len(FEATURES)
        self.play.moves = play_moves
        self.play.features_of = play_features
        self.play.locate = play_locate
        self.play.endless = play_endless
        self.play.horizon = play_horizon

    def play_capsule(self):
        """The play layer (PlayKernel of sowsolve_kernel.h) for the analysis engine."""
        return PyCapsule_New(&self.play, SOWSOLVE_PLAY_CAPSULE, NULL)

    def play_state(self, board, int side, ko, int last):
        """The engine's state of a position (side 0 = P to move; last 0 nobody, 1 P, 2 p)."""
        cdef uint8_t b[MAXP]
        self._board_in(board, b)
        if side not in (0, 1) or last not in (0, 1, 2):
            raise ValueError("side to move 0 or 1, last capturer 0, 1 or 2")
        k = self._ko_in(ko)
        return bytes(b[i] for i in range(self.npits)) + bytes([side, NO_KO_BYTE if k == NO_KO else k, last])

    def play_move(self, int code):
        """The pit of a move code."""
        return code

    cdef void _board_in(self, board, uint8_t *out) except *:
        """A board in pit order, checked, into `out` in circuit order."""
        if len(board) != self.npits:
            raise ValueError(f"a board of this kernel has {self.npits} pits, not {len(board)}")
        if sum(board) > 255:
            raise ValueError("the kernel counts at most 255 seeds")
        for i in range(self.npits):
            if board[i] < 0:
                raise ValueError("a pit cannot hold a negative number of seeds")
            out[self.ctx.at[i]] = board[i]

    cdef int _ko_in(self, ko) except -2:
        if ko is None:
            return NO_KO
        if not 0 <= ko < self.npits:
            raise ValueError(f"no pit {ko} on this board")
        return self.ctx.at[ko]

    cdef tuple _board_out(self, const uint8_t *cells):
        return tuple(cells[self.ctx.at[i]] for i in range(self.npits))

    def turns(self, board, int side, ko):
        """[(pit, board after, captured, ko pit or None)] of the legal moves (side 0 = P)."""
        cdef uint8_t b[MAXP]
        cdef TurnResult turns[MAXP]
        cdef int pits[MAXP]
        self._board_in(board, b)
        n = gen_turns(&self.ctx, b, side, self._ko_in(ko), turns, pits)
        return [(pits[i], self._board_out(turns[i].board), turns[i].captured,
                 None if turns[i].ko == NO_KO else int(self.ctx.circ[turns[i].ko])) for i in range(n)]

    def perft(self, board, int side, ko, int depth):
        cdef uint8_t b[MAXP]
        self._board_in(board, b)
        if depth < 1:
            raise ValueError(f"perft depth must be at least 1, not {depth}")
        counts = np.zeros(depth, dtype=np.int64)
        cdef int64_t[::1] cv = counts
        cdef int k = self._ko_in(ko)
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
# pit).  Records follow the margin layout of sowsolve_kernel.h (MARGIN_VALUE, and the remoteness
# read through margin_plies: the 9-bit field, the tier's long table for MARGIN_REM_LONG, and
# DIST_ENDLESS for MARGIN_REM_ENDLESS: the value comes from play that avoids captures forever);
# zz_moves hands scoresolve.pyx an exit's remoteness in those plies.


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

cdef int8_t IDENTITY[MAXP]          # the permutation of a board in pit order
for _pit in range(MAXP):
    IDENTITY[_pit] = _pit


cdef inline int64_t rank_board(int m, const uint8_t *b, const int8_t *perm, int total) noexcept nogil:
    """The rank of the board whose pit i holds b[perm[i]] among the compositions of `total`
    into m pits (perm: ZzCtx.at for a board in circuit order)."""
    cdef int64_t r = 0
    cdef int i, k, x, rest = total
    for i in range(m - 1):
        k = m - i - 1
        x = b[perm[i]]
        r += ncomp[k + 1][rest] - ncomp[k + 1][rest - x]
        rest -= x
    return r


cdef inline void unrank_board(int m, int64_t r, int total, const int8_t *perm, uint8_t *b) noexcept nogil:
    """The board of rank r, pit i into b[perm[i]]."""
    cdef int i, k, x, rest = total
    for i in range(m - 1):
        k = m - i - 1
        x = 0
        while r >= ncomp[k][rest - x]:
            r -= ncomp[k][rest - x]
            x += 1
        b[perm[i]] = x
        rest -= x
    b[perm[m - 1]] = rest


cdef inline int ko_slot(const ZzCtx *c, int side, int ko) noexcept nogil:
    """The ko slot (0 none, 1 left centre pit, 2 right) of a ko circuit position."""
    if ko < 0:
        return 0
    return 1 if ko == c.ko_at[side][1] else 2


cdef inline int ko_pit(const ZzCtx *c, int side, int slot) noexcept nogil:
    """The pit (the rules' number) of a ko slot, NO_KO for slot 0."""
    cdef int row = 0 if side == 0 else c.cols
    if slot == 0:
        return NO_KO
    return row + c.cols // 2 - 1 + (slot - 1)


cdef int64_t child_index(const ZzCtx *c, const uint8_t *board, int seeds, int side, int ko) noexcept nogil:
    """The index in its tier of a position: board in circuit order, ko a circuit position."""
    return (rank_board(c.npits, board, c.at, seeds) * 2 + side) * 3 + ko_slot(c, side, ko)


def tier_size(int pits, int seeds):
    """Positions of tier (seeds, any capturer) of a board of `pits` pits."""
    if not 0 <= seeds <= MAX_TOTAL or not 1 <= pits <= MAXP:
        raise ValueError("no such tier")
    return int(ncomp[pits][seeds]) * 6


def rank(ZigZagKernel self, board, int side, ko):
    """(seeds, index inside any tier of that many seeds) of a position (side 0 = P)."""
    cdef uint8_t b[MAXP]
    self._board_in(board, b)
    seeds = sum(board)
    if seeds > MAX_TOTAL:
        raise ValueError(f"at most {MAX_TOTAL} seeds")
    return seeds, int(child_index(&self.ctx, b, seeds, side, self._ko_in(ko)))



# --- the play layer (the analysis engine, engine.pyx) -------------------------------------------
# A state is the board in circuit order, then the side to move (0 P, 1 p), the ko as a circuit
# position (255: none) and who captured last (0 nobody, 1 P, 2 p).  A move's code is the pit.
FEATURES = ("row_seeds", "leftover", "capture_now", "capture_next", "quiet_leftover")
cdef enum:
    NO_KO_BYTE = 255


cdef inline int state_ko(const uint8_t *state, int n) noexcept nogil:
    """The ko of a state as a circuit position, NO_KO for none.  (Not a conditional
    expression: Cython types `NO_KO if ... else state[n + 1]` as uint8_t, which made no ko
    255 and gave positions without a ko the index of one with a ko at the leaves.)"""
    cdef int ko = state[n + 1]
    return NO_KO if ko == NO_KO_BYTE else ko


cdef int play_moves(const void *ctx, const uint8_t *state, uint8_t *children, int16_t *codes,
                    int16_t *gains, int *final) noexcept nogil:
    cdef const ZzCtx *c = <const ZzCtx *>ctx
    cdef TurnResult turns[MAXP]
    cdef int pits[MAXP]
    cdef int n = c.npits, side = state[n], last = state[n + 2], i, m
    cdef int ko = state_ko(state, n)
    cdef uint8_t *child
    m = gen_turns(c, state, side, ko, turns, pits)
    if m == 0:
        final[0] = play_endless(ctx, state)    # the end: the seeds left to the last capturer
        return 0
    for i in range(m):
        child = &children[i * (n + 3)]
        memcpy(child, turns[i].board, n)
        child[n] = side ^ 1
        child[n + 1] = NO_KO_BYTE if turns[i].ko == NO_KO else turns[i].ko
        child[n + 2] = side + 1 if turns[i].captured else last
        codes[i] = pits[i]
        gains[i] = turns[i].captured
    return m


cdef int play_endless(const void *ctx, const uint8_t *state) noexcept nogil:
    """The margin for the side to move when the game ends here, by no move or by play that
    goes on for ever (the rules end both alike): the seeds left go to the last capturer."""
    cdef const ZzCtx *c = <const ZzCtx *>ctx
    cdef int n = c.npits, side = state[n], last = state[n + 2], i, seeds = 0
    for i in range(n):
        seeds += state[i]
    return 0 if last == 0 else (seeds if last == side + 1 else -seeds)


cdef int best_capture(const ZzCtx *c, const uint8_t *board, int side, int ko) noexcept nogil:
    cdef TurnResult turns[MAXP]
    cdef int pits[MAXP]
    cdef int m = gen_turns(c, board, side, ko, turns, pits), i, best = 0
    for i in range(m):
        if turns[i].captured > best:
            best = turns[i].captured
    return best


cdef void play_features(const void *ctx, const uint8_t *state, int32_t *f) noexcept nogil:
    """From the side to move, who captures from its own row: seeds on its row less the other
    row, the seeds left on the board counted for the last capturer (+ its own, - the other's),
    its best capture now, the best capture the other side would have on this board, and the
    quiet leftover: the seeds left counted again where neither side has a capture at once and
    the board holds no more seeds than pits (the end is near: they go to the last capturer)."""
    cdef const ZzCtx *c = <const ZzCtx *>ctx
    cdef int n = c.npits
    fill_features(c, state, best_capture(c, state, state[n], state_ko(state, n)), f)


cdef inline void fill_features(const ZzCtx *c, const uint8_t *state, int best_now,
                               int32_t *f) noexcept nogil:
    """play_features, given the mover's best capture now."""
    cdef int n = c.npits, side = state[n], last = state[n + 2], i, seeds = 0
    f[0] = 0
    for i in range(n):
        seeds += state[i]
        f[0] += state[i] if c.owner_c[i] == side else -state[i]
    f[1] = 0 if last == 0 else (seeds if last == side + 1 else -seeds)
    f[2] = best_now
    f[3] = best_capture(c, state, side ^ 1, NO_KO)
    f[4] = f[1] if f[2] == 0 and f[3] == 0 and seeds <= n else 0


cdef int play_horizon(const void *ctx, const uint8_t *state, int32_t *f, int *final) noexcept nogil:
    """The engine's look at a state at its horizon: the mover's turns, made once, say both
    whether the game is over and its best capture (play_moves then play_features made them
    twice and copied every child)."""
    cdef const ZzCtx *c = <const ZzCtx *>ctx
    cdef TurnResult turns[MAXP]
    cdef int pits[MAXP]
    cdef int n = c.npits, i, m, best = 0
    m = gen_turns(c, state, state[n], state_ko(state, n), turns, pits)
    if m == 0:
        final[0] = play_endless(ctx, state)
        return 0
    for i in range(m):
        if turns[i].captured > best:
            best = turns[i].captured
    fill_features(c, state, best, f)
    return 1


cdef int play_locate(const void *ctx, const uint8_t *state, int *tier, uint64_t *where) noexcept nogil:
    """Tier (seeds * 3 + capturer) and index of the stored position: one where p captured last
    is stored turned half a turn with the players swapped (solver/games/zigzag.py: locate)."""
    cdef const ZzCtx *c = <const ZzCtx *>ctx
    cdef uint8_t turned[MAXP]
    cdef const uint8_t *board = state
    cdef int n = c.npits, side = state[n], last = state[n + 2], i, seeds = 0
    cdef int ko = state_ko(state, n)
    for i in range(n):
        seeds += state[i]
    if seeds > MAX_TOTAL:
        return 0
    if last == 2:
        for i in range(n):
            turned[c.turned_at[c.circ[i]]] = state[i]
        board = turned
        side ^= 1
        if ko != NO_KO:
            ko = c.turned_at[c.circ[ko]]
        last = 1
    tier[0] = seeds * 3 + last
    where[0] = <uint64_t>child_index(c, board, seeds, side, ko)
    return 1


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
            unrank_board(self.ctx.npits, r // 6, seeds, IDENTITY, &bv[i, 0])
    return boards, sides, kos


# --- un-moves and the tiers of the compact score solver ----------------------------------------
#
# A turn that captures nothing is undone lap by lap, backwards.  The last lap ended at some pit h
# in one of the two orientations.  Walking back from h and taking back one seed from each pit
# passed, every pit the lap sowed still holds a seed when it is reached (seeds are taken back in
# the reverse order they were sown, even on laps that go round more than once), and the pit the
# lap began at is the first one found empty (its seeds were lifted): one choice per
# (h, orientation).  That pit, given back its seeds, is either the pit the turn began at (it is
# the mover's, and the orientation is the one the first-lap rule gives it) or a relay (the
# mover's pit, where the previous lap ended: it held at least one seed before that lap's last
# seed), and the walk goes on.  Every turn is found once: a turn is fixed by its board and pit.

cdef enum:
    MAX_UNTURNS = 1024        # boards one position can be reached from (each with up to 3 ko slots)
    MAX_LAPS_BACK = 1 << 16


cdef struct UnTurn:
    uint8_t board[MAXP]
    int pit


cdef inline int fewest(const uint8_t *cells, int n) noexcept nogil:
    cdef int q, m = cells[0]
    for q in range(1, n):
        if cells[q] < m:
            m = cells[q]
    return m


cdef void lap_starts(const uint8_t *cells, int n, int8_t begun[2][MAXP]) noexcept nogil:
    """For each circuit position k and each way of sowing (0 forward, 1 backward), where a lap
    whose last seed fell on k began: walking back from k, the first pit holding the fewest
    seeds of any pit (with an empty pit on the board, the first empty one)."""
    cdef int q, j, least = fewest(cells, n), last
    cdef int first = 0
    while cells[first] != least:
        first += 1
    last = first                             # forward laps: the nearest such pit at or before k
    for j in range(n):
        q = first + j if first + j < n else first + j - n
        if cells[q] == least:
            last = q
        begun[0][q] = last
    last = first                             # backward laps: the nearest at or after k
    for j in range(n):
        q = first - j if first - j >= 0 else first - j + n
        if cells[q] == least:
            last = q
        begun[1][q] = last


cdef int unturns(const ZzCtx *c, const uint8_t *after, int mover, int ko_after, UnTurn *out,
                 int64_t *pred, int seeds, int limit) noexcept nogil:
    """Every (board before, pit) from which `mover` (0 = P) sows a turn that captures nothing,
    leaves `after` and the ko `ko_after` (NO_KO for none), into `out`; or, with `pred`, the
    indices of the positions (each ko slot the move allows) in the tier of `seeds` seeds.  The
    number found, or -1 if more than `limit`.  Boards in circuit order, ko and pit as circuit
    positions."""
    cdef uint8_t cells[MAXP]
    cdef int n = c.npits
    cdef int pit, h, o, here, p, q, lap_seeds, laps, found = 0, ending, ko, slot, rounds
    cdef int8_t begun[2][MAXP]               # where a last lap ending at each pit began, once needed
    begun[0][0] = -1
    cdef int64_t r
    for pit in range(n):
        h = c.at[pit]
        # how a turn whose last seed lands on h ends without a capture
        if c.owner_c[h] == mover:
            if after[h] != 1:
                continue
            ending = 0                       # an empty pit of the mover's own
        elif after[h] >= 2:
            ending = 1                       # an occupied pit of the opponent
        elif after[h] == 1 and after[c.across_c[h]] == 0:
            ending = 2                       # an empty pit of the opponent, nothing across
        else:
            continue
        if ko_after != NO_KO and (h != ko_after or ending != 2):
            continue                         # only a one-seed lap onto the ko pit leaves a ko
        for o in range(2):                   # the last lap sown forward (0) or backward (1)
            # where the last lap began: a lap shorter than the circuit passes each pit once, so
            # it began at the first empty pit behind h; a longer one went round m times (m the
            # fewest seeds of a pit) and began at the first pit behind h holding exactly m
            if begun[0][0] < 0:
                lap_starts(after, n, begun)
            p = begun[o][h]
            if c.owner_c[p] != mover:
                continue
            memcpy(cells, after, n)
            here = h
            laps = 0
            while True:
                lap_seeds = 0
                p = here
                while cells[p] != 0 and lap_seeds < n:
                    cells[p] -= 1
                    lap_seeds += 1
                    p = step_back(p, o, n)
                if lap_seeds == n and cells[p] != 0:
                    # round the whole circuit: as many more rounds as every pit allows at once
                    rounds = fewest(cells, n)
                    for q in range(n):
                        cells[q] -= rounds
                    lap_seeds += rounds * n
                    while cells[p] != 0:
                        cells[p] -= 1
                        lap_seeds += 1
                        p = step_back(p, o, n)
                cells[p] = lap_seeds         # the lap began at p, lifting these seeds
                laps += 1
                if laps > MAX_LAPS_BACK:
                    return -1                # cannot happen (a turn never repeats a lap state)
                if c.owner_c[p] != mover:
                    break
                if c.backward_c[p] == o:
                    ko = NO_KO
                    if laps == 1 and lap_seeds == 1 and ending == 2 and c.left_c[p] != c.left_c[h]:
                        ko = h
                    if ko == ko_after and pred == NULL:
                        if found == limit:
                            return -1
                        memcpy(out[found].board, cells, n)
                        out[found].pit = p
                        found += 1
                    elif ko == ko_after:
                        r = rank_board(n, cells, c.at, seeds)
                        for slot in range(3):
                            if c.ko_at[mover][slot] == p:
                                continue     # the ko pit cannot sow back without a capture
                            if found == limit:
                                return -1
                            pred[found] = (r * 2 + mover) * 3 + slot
                            found += 1
                if lap_seeds < 2 or ko_after != NO_KO:
                    break                    # a relay pit held a seed before the lap's last
                here = p                     # one; a turn that leaves a ko has one lap
    return found


def unturns_of(ZigZagKernel self, board, int mover, ko_after):
    """[(pit, board before)] of every turn of `mover` (0 = P) that captures nothing and leaves
    `board` with ko pit `ko_after` (None for none): the un-moves of the score solver."""
    cdef uint8_t b[MAXP]
    cdef UnTurn *found = <UnTurn *>malloc(MAX_UNTURNS * sizeof(UnTurn))
    if found == NULL:
        raise MemoryError()
    try:
        self._board_in(board, b)
        n = unturns(&self.ctx, b, mover, self._ko_in(ko_after), found, NULL, 0, MAX_UNTURNS)
        if n < 0:
            raise RuntimeError("more predecessors than the kernel's bound")
        return [(int(self.ctx.circ[found[i].pit]), self._board_out(found[i].board)) for i in range(n)]
    finally:
        free(found)


cdef struct ZzTier:
    ZzCtx c
    int seeds
    const uint16_t *low[MAX_TOTAL + 1]      # records of tier (s, P captured last), s < seeds
    const uint64_t *low_long[MAX_TOTAL + 1]  # and its long table (margin_plies)
    int64_t low_nlong[MAX_TOTAL + 1]


cdef struct SideMoves:
    int n                         # moves, or a SCORE_ERR_* code
    int8_t pit[MAXP]              # circuit position each move lifts
    int64_t child[MAXP]
    int16_t value[MAXP]
    uint16_t rem[MAXP]


# What the 6 indices of one board share (both sides, 3 ko slots each): the board and each
# side's moves as if no ko held (a ko only removes its pit's move that captures nothing).  It
# lives in the solver's per-thread scratch (zero-filled: nothing cached).
cdef struct MovesCache:
    int64_t rank_plus_one         # the board cached (its rank + 1; 0 none)
    uint8_t board[MAXP]           # circuit order
    int ready[2]
    SideMoves side[2]


cdef int side_moves(const ZzTier *t, const uint8_t *board, int side, SideMoves *out) noexcept nogil:
    """The moves of `side` from `board` (circuit order) with no ko: same-tier children and
    exits; their number or SCORE_ERR_*.  The lower records the captures read are scattered
    over large arrays: their cache lines are all asked for before the first is read."""
    cdef const ZzCtx *c = &t.c
    cdef TurnResult turns[MAXP]
    cdef int pits[MAXP]
    cdef int64_t lower[MAXP]              # index in its lower tier of each capture's child
    cdef int n, j, cap, rest, ko, v, plies
    cdef uint16_t rec
    n = gen_turns(c, board, side, NO_KO, turns, pits)
    for j in range(n):
        out.pit[j] = c.at[pits[j]]
        cap = turns[j].captured
        out.value[j] = 0
        out.rem[j] = 0
        if cap == 0:
            out.child[j] = child_index(c, turns[j].board, t.seeds, 1 - side, turns[j].ko)
            continue
        out.child[j] = SCORE_EXIT
        rest = t.seeds - cap
        if t.low[rest] == NULL:
            return SCORE_ERR_UNSOLVED
        if side == 0:
            # P captured: the child (p to move, P captured last) is stored as it is
            lower[j] = child_index(c, turns[j].board, rest, 1, turns[j].ko)
        else:
            # p captured: the child (P to move, p captured last) is stored turned half a turn
            ko = turns[j].ko
            if ko != NO_KO:
                ko = c.at[c.npits - 1 - c.circ[ko]]
            lower[j] = (rank_board(c.npits, turns[j].board, c.turned_at, rest) * 2 + 1) * 3 + ko_slot(c, 1, ko)
        prefetch_for_read(&t.low[rest][lower[j]])
    for j in range(n):
        cap = turns[j].captured
        if cap == 0:
            continue
        rest = t.seeds - cap
        rec = t.low[rest][lower[j]]
        if rec == MARGIN_UNSOLVED:
            return SCORE_ERR_UNSOLVED
        v = MARGIN_VALUE(rec)                 # for the child's side to move, the mover's opponent
        if v > rest or v < -rest:
            return SCORE_ERR_BEYOND
        out.value[j] = (cap - v) if side == 0 else (v - cap)
        plies = margin_plies(rec, t.low_long[rest], t.low_nlong[rest], lower[j])
        if plies < 0:
            return SCORE_ERR_LONG
        out.rem[j] = <uint16_t>plies
    return n


cdef int zz_moves(const void *ctx, void *scratch, int64_t index, int64_t *child,
                  int16_t *exit_value, uint16_t *exit_rem) noexcept nogil:
    cdef const ZzTier *t = <const ZzTier *>ctx
    cdef const ZzCtx *c = &t.c
    cdef MovesCache *cache = <MovesCache *>scratch
    cdef SideMoves *mine
    cdef int64_t r = index // 6
    cdef int side = <int>((index // 3) % 2), j, n = 0, ko
    if cache.rank_plus_one != r + 1:
        unrank_board(c.npits, r, t.seeds, c.at, cache.board)
        cache.rank_plus_one = r + 1
        cache.ready[0] = 0
        cache.ready[1] = 0
    mine = &cache.side[side]
    if not cache.ready[side]:
        mine.n = side_moves(t, cache.board, side, mine)
        cache.ready[side] = 1
    if mine.n < 0:
        return mine.n
    ko = c.ko_at[side][index % 3]
    for j in range(mine.n):
        if mine.pit[j] == ko and mine.child[j] != SCORE_EXIT:
            continue                          # the ko pit may not sow back without capturing
        child[n] = mine.child[j]
        exit_value[n] = mine.value[j]
        exit_rem[n] = mine.rem[j]
        n += 1
    return n


cdef int zz_unmoves(const void *ctx, int64_t index, int64_t *pred, int limit) noexcept nogil:
    cdef const ZzTier *t = <const ZzTier *>ctx
    cdef const ZzCtx *c = &t.c
    cdef uint8_t board[MAXP]
    cdef int side = <int>((index // 3) % 2), n
    unrank_board(c.npits, index // 6, t.seeds, c.at, board)
    n = unturns(c, board, 1 - side, c.ko_at[side][index % 3], NULL, pred, t.seeds, limit)
    return SCORE_ERR_PREDS if n < 0 else n


cdef class ScoreTierOf:
    """One tier (seeds, capturer) of a Zig Zag board for scoresolve.solve_tier: moves, un-moves,
    and the records of the lower tiers captures reach (tiers (s, 1): positions where p captured
    last are stored turned half a turn, as the same position with P)."""
    cdef ZzTier t
    cdef ScoreTier api
    cdef list keep
    cdef readonly int64_t size

    def __init__(self, ZigZagKernel kernel, int seeds, int capturer, dict lower):
        """`lower`: seeds -> (records, long table) of tier (s, 1), as the score solver made
        them (the table's loads check both)."""
        cdef int k
        if not 0 <= seeds <= MAX_TOTAL or not 0 <= capturer <= 2:
            raise ValueError(f"no tier ({seeds}, {capturer})")
        self.t.c = kernel.ctx
        self.t.seeds = seeds
        for k in range(MAX_TOTAL + 1):
            self.t.low[k] = NULL
            self.t.low_long[k] = NULL
            self.t.low_nlong[k] = 0
        self.keep = []
        for s, data in lower.items():
            if not (isinstance(s, int) and 0 <= s < seeds):
                raise ValueError(f"no lower tier of {str(s)[:20]} seeds below {seeds}")
            if not (isinstance(data, tuple) and len(data) == 2):
                raise ValueError(f"the tier of {s} seeds is not given as its records and a long table")
            array, table = data
            array = np.ascontiguousarray(array, dtype=np.uint16)
            table = np.ascontiguousarray(table, dtype=np.uint64)
            if table.ndim != 1 or (table.size > 1 and not bool(np.all(np.diff(table.astype(np.int64)) > 0))):
                raise ValueError(f"the long table of the tier of {s} seeds is not sorted")
            plies = table & np.uint64(0xFFFF)
            if table.size and (int(plies.min()) < MARGIN_REM_LONG or int(plies.max()) > MARGIN_MAX_REMOTENESS):
                raise ValueError(f"the long table of the tier of {s} seeds holds a remoteness "
                                 f"outside {MARGIN_REM_LONG}..{MARGIN_MAX_REMOTENESS} plies")
            self.keep.append(table)
            self.t.low_nlong[s] = table.shape[0]
            if table.shape[0]:
                self.t.low_long[s] = <const uint64_t *>cnp.PyArray_DATA(table)
            if array.ndim != 1 or array.shape[0] != ncomp[kernel.npits][s] * 6:
                raise ValueError(f"the tier of {s} seeds holds {array.size} records, not "
                                 f"{ncomp[kernel.npits][s] * 6}")
            self.keep.append(array)
            self.t.low[s] = <const uint16_t *>cnp.PyArray_DATA(array)
        self.size = ncomp[kernel.npits][seeds] * 6
        self.api.ctx = &self.t
        self.api.n = self.size
        self.api.width = kernel.cols
        self.api.max_preds = 3 * MAX_UNTURNS
        self.api.bound = seeds
        self.api.endless_value = 0 if capturer == 0 else (seeds if capturer == 1 else -seeds)
        self.api.side_stride = 3
        self.api.moves = zz_moves
        self.api.scratch_bytes = sizeof(MovesCache)
        self.api.unmoves = zz_unmoves

    @property
    def endless_value(self):
        """The value of play that never captures again, for P."""
        return self.api.endless_value

    def capsule(self):
        """The ScoreTier for the solver kernel; valid while this object lives."""
        return PyCapsule_New(&self.api, SOWSOLVE_SCORE_TIER_CAPSULE, NULL)

    def moves(self, int64_t index):
        """[(same-tier index, None, None) or (None, value for P, remoteness in plies, 65535 for
        no end)] of a position's moves, in pit order: what the solver reads (self-check)."""
        cdef int64_t child[MAXP]
        cdef int16_t value[MAXP]
        cdef uint16_t rem[MAXP]
        cdef MovesCache cache
        if not 0 <= index < self.size:
            raise IndexError(f"index {index} is outside the tier")
        memset(&cache, 0, sizeof(MovesCache))
        n = zz_moves(&self.t, &cache, index, child, value, rem)
        if n == SCORE_ERR_UNSOLVED:
            raise RuntimeError("a capture leads to a record that is not solved")
        if n == SCORE_ERR_BEYOND:
            raise RuntimeError("a capture leads to a record whose margin exceeds the seeds left")
        if n == SCORE_ERR_LONG:
            raise RuntimeError("a capture leads to a record whose remoteness its tier's long "
                               "table lacks")
        return [(int(child[j]), None, None) if child[j] != SCORE_EXIT
                else (None, int(value[j]), int(rem[j])) for j in range(n)]

    def unmoves(self, int64_t index):
        """Same-tier indices with a move to `index` (once per such move)."""
        if not 0 <= index < self.size:
            raise IndexError(f"index {index} is outside the tier")
        preds = np.empty(self.api.max_preds, dtype=np.int64)
        cdef int64_t[::1] pv = preds
        n = zz_unmoves(&self.t, index, &pv[0], self.api.max_preds)
        if n < 0:
            raise RuntimeError("more predecessors than the kernel's bound")
        return [int(x) for x in preds[:n]]
