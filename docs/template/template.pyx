# cython: language_level=3
"""Kernel of the template game (docs/template/): one row of pits, positions ranked inside a
tier (the stones on the board) as compositions, and `expand`, the children of a ranked
position, which the retrograde solver (cext/retrograde.pyx) calls through the GameKernel
capsule.  Copy it to cext/<game>.pyx; setup.py builds every .pyx there."""
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int64_t, uint16_t

from kernel_api cimport GameKernel, REC_LOSS, REC_MAKE, SOWSOLVE_KERNEL_CAPSULE

cdef enum:
    MAX_PITS = 8
    MAX_STONES = 40


cdef struct Ctx:
    int pits
    int max_stones
    # binom[n][k] = n choose k, for the compositions' counts
    int64_t binom[MAX_STONES + MAX_PITS + 1][MAX_PITS + 1]


cdef inline int64_t compositions(const Ctx *c, int stones, int parts) noexcept nogil:
    """Ways to lay `stones` in `parts` pits (any number in each): the size of a tier."""
    if parts == 0:
        return 1 if stones == 0 else 0
    return c.binom[stones + parts - 1][parts - 1]


cdef int64_t rank(const Ctx *c, const int *board) noexcept nogil:
    """The index of a board among the boards of its stones, in lexicographic order."""
    cdef int p, v, left = 0
    cdef int64_t index = 0
    for p in range(c.pits):
        left += board[p]
    for p in range(c.pits - 1):
        for v in range(board[p]):
            index += compositions(c, left - v, c.pits - p - 1)
        left -= board[p]
    return index


cdef int unrank(const Ctx *c, int tier, int64_t index, int *board) noexcept nogil:
    """The board of `index` in tier `tier`; -1 where there is none."""
    cdef int p, v, left = tier
    cdef int64_t n
    if tier < 0 or tier > c.max_stones or index < 0 or index >= compositions(c, tier, c.pits):
        return -1
    for p in range(c.pits - 1):
        v = 0
        while True:
            n = compositions(c, left - v, c.pits - p - 1)
            if index < n:
                break
            index -= n
            v += 1
        board[p] = v
        left -= v
    board[c.pits - 1] = left
    return 0


cdef inline int sow(const Ctx *c, const int *board, int pit, int *child) noexcept nogil:
    """The rules' move from `pit`: one stone leaves the game, the others go one by one into
    the pits to its right, and those sown past the last pit leave too.  Returns the stones
    left on the board."""
    cdef int p, stones = board[pit] - 1, total = 0
    for p in range(c.pits):
        child[p] = board[p]
    child[pit] = 0
    p = pit + 1
    while stones > 0 and p < c.pits:
        child[p] += 1
        stones -= 1
        p += 1
    for p in range(c.pits):
        total += child[p]
    return total


cdef int expand(const void *ctx, int tier, int64_t index, int *child_tier,
                int64_t *child_index, uint16_t *final_record) noexcept nogil:
    """Children of a stored position, in the order of the game's legal_moves (pits left to
    right); 0 and the final record for an empty board (the player to move has lost); -1 for a
    position out of range."""
    cdef const Ctx *c = <const Ctx *>ctx
    cdef int board[MAX_PITS]
    cdef int child[MAX_PITS]
    cdef int pit, n = 0
    if unrank(c, tier, index, board) < 0:
        return -1
    for pit in range(c.pits):
        if board[pit] > 0:
            child_tier[n] = sow(c, board, pit, child)
            child_index[n] = rank(c, child)
            n += 1
    if n == 0:
        final_record[0] = REC_MAKE(REC_LOSS, 0)
    return n


cdef class TemplateKernel:
    """Kernel of one board of the template game: hands out the GameKernel capsule, and the
    same view to Python for the self-check."""
    cdef Ctx ctx
    cdef GameKernel kernel
    cdef readonly int pits, max_stones

    def __cinit__(self, int pits, int max_stones):
        cdef int n, k
        if not 1 <= pits <= MAX_PITS or not 0 <= max_stones <= MAX_STONES:
            raise ValueError(f"the kernel takes 1 to {MAX_PITS} pits and 0 to {MAX_STONES} "
                             f"stones, not {pits} and {max_stones}")
        self.pits = self.ctx.pits = pits
        self.max_stones = self.ctx.max_stones = max_stones
        for n in range(MAX_STONES + MAX_PITS + 1):
            for k in range(MAX_PITS + 1):
                if k == 0 or k == n:
                    self.ctx.binom[n][k] = 1
                elif k > n:
                    self.ctx.binom[n][k] = 0
                else:
                    self.ctx.binom[n][k] = self.ctx.binom[n - 1][k - 1] + self.ctx.binom[n - 1][k]
        self.kernel.ctx = &self.ctx
        self.kernel.max_children = pits
        self.kernel.expand = expand
        self.kernel.expand_key = NULL          # no keyed index: the retrograde solver only
        self.kernel.proof_hint = NULL
        self.kernel.level = NULL               # every move leaves the tier: no levels needed
        self.kernel.level_count = 0
        self.kernel.level_members = NULL
        self.kernel.expand_member = NULL

    def capsule(self):
        """The GameKernel for solver modules (valid while this object lives)."""
        return PyCapsule_New(&self.kernel, SOWSOLVE_KERNEL_CAPSULE, NULL)

    def tier_size(self, int tier) -> int:
        if not 0 <= tier <= self.max_stones:
            raise IndexError(f"no tier {tier}")
        return compositions(&self.ctx, tier, self.pits)

    def rank(self, board) -> tuple:
        """(tier, index) of a board (a sequence of `pits` counts)."""
        cdef int cells[MAX_PITS]
        cdef int p
        if len(board) != self.pits or min(board) < 0 or sum(board) > self.max_stones:
            raise ValueError(f"no board of this kernel: {tuple(board)[:MAX_PITS]}")
        for p in range(self.pits):
            cells[p] = board[p]
        return sum(board), rank(&self.ctx, cells)

    def unrank(self, int tier, int64_t index) -> tuple:
        cdef int cells[MAX_PITS]
        if unrank(&self.ctx, tier, index, cells) < 0:
            raise IndexError(f"no position {index} in tier {tier}")
        return tuple(cells[p] for p in range(self.pits))

    def children(self, int tier, int64_t index):
        """Solver view: [(tier, index)] of the children, or the final record."""
        cdef int ct[MAX_PITS]
        cdef int64_t ci[MAX_PITS]
        cdef uint16_t rec = 0
        n = expand(&self.ctx, tier, index, ct, ci, &rec)
        if n < 0:
            raise IndexError(f"no position {index} in tier {tier}")
        if n == 0:
            return rec
        return [(ct[i], ci[i]) for i in range(n)]

    def moves(self, board) -> list:
        """[(pit, child board)] of the legal moves, as the kernel plays them."""
        cdef int cells[MAX_PITS]
        cdef int child[MAX_PITS]
        tier, _ = self.rank(board)
        for p in range(self.pits):
            cells[p] = board[p]
        found = []
        for p in range(self.pits):
            if cells[p] > 0:
                sow(&self.ctx, cells, p, child)
                found.append((p, tuple(child[q] for q in range(self.pits))))
        return found
