# cython: language_level=3
"""Monte Carlo tree search over any game's play layer (PlayKernel of sowsolve_kernel.h): the
plain UCT player, the yardstick the analysis engine's strength is measured against
(bench/bench_match.py), and with the solver extension and informed playouts the engine's own
Monte Carlo search (`Searcher`, used by tables/analysis.py for the games that declare it).

The plain player is the textbook algorithm and nothing more: UCB1 selection with c = sqrt 2 on rewards
1 / 0.5 / 0 (win / draw / loss of the whole game for the side that made the move), one node
expanded per playout, playouts of uniformly random moves to the end of the game, the move
played the most visited.  No tables, no evaluation, no solver extension.  Margin games (Zig
Zag) score a playout by the sign of the final margin plus `lead`, what the side to move at the
root has already banked over its opponent -- the game's result, as the match counts it.

Both cores: root parallelism -- each thread grows its own tree from its own random stream and
the root's visits are summed at the end (a plain and well-known way to use several cores).
A playout longer than PLAYOUT_CAP plies is infinite play, ended as the rules end it: a draw in
a win/loss game; in a margin game the last capturer takes the `leftover` seeds the root had on
the board less what was captured since (random play in a game of captures often never
ends: 39 of 100 playouts from the standard start of the margin game were still going after
3,000 plies).
"""
import operator

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from cython.parallel cimport prange
from libc.math cimport log, sqrt
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from kernel_api cimport (PLAY_FEATURES, PLAY_MAX_MOVES, PLAY_STATE_MAX, PlayKernel, SOWSOLVE_PLAY_CAPSULE,
                        count_load, flag_load, flag_store)

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil


cdef enum:
    PLAYOUT_CAP = 1000
    MAX_PATH = 4096
    CLOCK_EVERY = 16

EXPLORATION = 1.4142135623730951
#: playouts of one tree at most: a node's visits are 32 bits
cdef int64_t MAX_TREE_PLAYOUTS = 4000000000
#: nodes of one tree at most: a node's first child is a 32-bit index
cdef int64_t MAX_TREE_NODES = 2147483647


cdef struct Node:
    int32_t first        # first child's index; -1 while unexpanded
    int16_t count        # children (0: the game is over here, `final` its value)
    int16_t code         # the move into this node
    int16_t gain         # what that move banked (margin games)
    int16_t final
    int8_t proven        # solver: +1 a win for the side that moved into this node, -1 a loss
    float prior          # the evaluation of this node for the side that moved into it (units)
    uint32_t visits
    double reward        # summed for the side that moved into this node


cdef struct Tree:
    const PlayKernel *k
    Node *nodes
    uint8_t *states
    int64_t capacity
    int64_t used
    uint8_t *scratch     # one ply of children for playouts
    int16_t *codes
    int16_t *gains
    int16_t *safe        # informed playouts: the children that do not lose at once
    int32_t *path
    int solver
    int informed
    uint64_t rng
    int64_t playouts
    int32_t lead         # margin games: the root's side to move's seeds over its opponent's
    int32_t leftover     # ... the seeds on the board at the root
    int32_t last         # ... who captured last: +1 the root's side to move, -1 the other, 0 none
    const int *stop      # set (by another thread) to stop the search
    int ordered          # children get `prior` (the evaluation) and are first tried best first
    double fpu           # first-play urgency: an untried move's score (< 0: every move tried once first)
    int32_t weights[PLAY_FEATURES]


cdef inline double now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef inline uint64_t next_random(uint64_t *x) noexcept nogil:
    """xorshift64*: a small, fast generator; each thread has its own stream."""
    x[0] ^= x[0] >> 12
    x[0] ^= x[0] << 25
    x[0] ^= x[0] >> 27
    return x[0] * <uint64_t>2685821657736338717


cdef inline uint64_t mixed_seed(uint64_t seed, int thread) noexcept nogil:
    """A thread's first random state: never 0 (xorshift would stay there)."""
    cdef uint64_t x = (seed + 1) * <uint64_t>0x9E3779B97F4A7C15u + <uint64_t>thread * <uint64_t>0xD1B54A32D192ED03u
    return x if x else 1


cdef inline int expand(Tree *t, int32_t at) noexcept nogil:
    """Give node `at` its children (every legal move); 0 when the tree has no room left."""
    cdef const PlayKernel *k = t.k
    cdef int sb = k.state_bytes, n, i, final = 0
    cdef Node *node
    cdef int32_t f[PLAY_FEATURES]
    cdef int64_t score
    cdef int j
    if t.used + k.max_moves > t.capacity:
        return 0
    n = k.moves(k.ctx, &t.states[<int64_t>at * sb], &t.states[t.used * sb], t.codes, t.gains, &final)
    node = &t.nodes[at]
    node.first = <int32_t>t.used
    node.count = <int16_t>n
    node.final = <int16_t>final
    for i in range(n):
        t.nodes[t.used + i].first = -1
        t.nodes[t.used + i].count = 0
        t.nodes[t.used + i].code = t.codes[i]
        t.nodes[t.used + i].gain = t.gains[i]
        t.nodes[t.used + i].proven = 0
        t.nodes[t.used + i].visits = 0
        t.nodes[t.used + i].reward = 0
        t.nodes[t.used + i].prior = 0
        if t.ordered:
            # the features are the child's side to move's: its mover's are their opposite
            k.features_of(k.ctx, &t.states[(t.used + i) * sb], f)
            score = 0
            for j in range(k.features):
                score += <int64_t>t.weights[j] * f[j]
            t.nodes[t.used + i].prior = <float>(-score / 100.0)
    t.used += n
    return 1


cdef inline double result_of(int margin_game, int64_t margin, int final, int plies) noexcept nogil:
    """The reward for the side to move at the playout's start: `margin` is what it banked over
    its opponent (margin games), `final` the end's value for the side to move `plies` later."""
    cdef int64_t total
    if margin_game:
        total = margin + (final if plies % 2 == 0 else -final)
        return 1.0 if total > 0 else (0.0 if total < 0 else 0.5)
    if final == 0:
        return 0.5
    if plies % 2 == 1:
        final = -final
    return 1.0 if final > 0 else 0.0


cdef inline int informed_pick(Tree *t, int n) noexcept nogil:
    """A move that wins at once if there is one, else a random move among those that do not
    lose at once (any move when all do): a win/loss game's gains tell (+1 the move wins at
    once, -1 it loses)."""
    cdef int i, safe = 0
    for i in range(n):
        if t.gains[i] > 0:
            return i
        if t.gains[i] < 0:
            continue
        t.safe[safe] = <int16_t>i
        safe += 1
    if safe == 0:
        return <int>(next_random(&t.rng) % <uint64_t>n)
    return t.safe[<int>(next_random(&t.rng) % <uint64_t>safe)]


cdef double playout(Tree *t, const uint8_t *start, int64_t margin, int64_t leftover,
                    int last) noexcept nogil:
    """Uniformly random moves from `start` to the end; the reward for its side to move.  Margin
    games: `margin` is what that side banked over its opponent before `start`, `leftover` the
    seeds still on the board and `last` who captured last (+1 that side, -1 the other, 0 none)."""
    cdef const PlayKernel *k = t.k
    cdef int sb = k.state_bytes, n, pick, final = 0, plies = 0, gain
    cdef uint8_t state[PLAY_STATE_MAX]
    memcpy(state, start, sb)
    while plies < PLAYOUT_CAP:
        n = k.moves(k.ctx, state, t.scratch, t.codes, t.gains, &final)
        if n == 0:
            return result_of(k.margin, margin, final, plies)
        if t.informed:
            pick = informed_pick(t, n)
        else:
            pick = <int>(next_random(&t.rng) % <uint64_t>n)
        gain = t.gains[pick] if k.margin else 0     # win/loss games: the end, not seeds
        if gain:
            leftover -= gain
            last = 1 if plies % 2 == 0 else -1
            margin += gain if plies % 2 == 0 else -gain
        memcpy(state, &t.scratch[pick * sb], sb)
        plies += 1
    if k.margin:
        return result_of(1, margin + last * leftover, 0, 0)
    return 0.5


cdef void iterate(Tree *t, double c) noexcept nogil:
    """One playout: select by UCB1 down the tree, expand one node, play out, back up.  With the
    solver, a node whose result is proven is never played out again: a move into a proven win
    is taken, a proven loss avoided, and proofs climb toward the root (MCTS-Solver)."""
    cdef int32_t at = 0, best, i, depth = 0, d
    cdef Node *node
    cdef Node *child
    cdef double score, best_score, log_n, r, untried_prior
    cdef int32_t untried
    cdef int64_t margin = t.lead, leftover = t.leftover
    cdef int sb = t.k.state_bytes, last = t.last, gain
    t.path[0] = 0
    while True:
        node = &t.nodes[at]
        if node.proven:
            break                                  # its result is known: no playout needed
        if node.first < 0:
            if node.visits == 0 and at != 0:
                break                              # a new leaf: play out from it
            if not expand(t, at):
                break                              # no room: play out from here
            if t.solver and not t.k.margin and settle_by_gains(t, at):
                break                              # a move ends the game at once: proven
        if node.count == 0:
            break                                  # the game is over here
        log_n = log(<double>node.visits + 1.0)
        best, best_score = -1, -1.0
        untried, untried_prior = -1, 0.0
        for i in range(node.count):
            child = &t.nodes[node.first + i]
            if child.proven:
                continue                           # (a proven win would have proven `node`)
            if child.visits == 0:
                # untried: in order, or the evaluation's best first
                if untried < 0 or (t.ordered and child.prior > untried_prior):
                    untried, untried_prior = node.first + i, child.prior
                continue
            score = child.reward / child.visits + c * sqrt(log_n / child.visits)
            if score > best_score:
                best_score, best = score, node.first + i
        if untried >= 0 and (t.fpu < 0 or best < 0 or best_score < t.fpu):
            best = untried                         # every move tried once first, or urgent
        if best < 0:
            break                                  # every move proven: `node` is proven
        gain = t.nodes[best].gain if t.k.margin else 0
        if gain:
            leftover -= gain
            last = 1 if depth % 2 == 0 else -1
            margin += gain if depth % 2 == 0 else -gain
        at = best
        depth += 1
        t.path[depth] = at
        if depth + 1 >= MAX_PATH:
            break
    node = &t.nodes[at]
    if depth % 2 == 1:
        margin, last = -margin, -last              # now for the side to move at `at`
    if node.proven:
        r = 0.0 if node.proven > 0 else 1.0
    elif node.first >= 0 and node.count == 0:
        r = result_of(t.k.margin, margin, node.final, 0)
        if t.solver and r != 0.5:
            node.proven = 1 if r == 0.0 else -1
    else:
        r = playout(t, &t.states[<int64_t>at * sb], margin, leftover, last)
    # r is for the side to move at `at`; a node's reward is for the side that moved into it
    for d in range(depth, -1, -1):
        t.nodes[t.path[d]].visits += 1
        r = 1.0 - r
        t.nodes[t.path[d]].reward += r
    if t.solver:
        for d in range(depth, 0, -1):
            if not prove_parent(t, t.path[d - 1], t.path[d]):
                break
    t.playouts += 1


cdef inline int settle_by_gains(Tree *t, int32_t at) noexcept nogil:
    """Solver, win/loss games: mark the children of a node just expanded whose move ends the
    game (their gain), and the node itself where that decides it -- a move that wins at once
    proves it lost for the side that moved into it, every move losing at once proves it won.
    Returns whether the node is proven."""
    cdef Node *node = &t.nodes[at]
    cdef int i, lost = 0
    for i in range(node.count):
        t.nodes[node.first + i].proven = <int8_t>t.nodes[node.first + i].gain
        if t.nodes[node.first + i].gain > 0:
            node.proven = -1
        elif t.nodes[node.first + i].gain < 0:
            lost += 1
    if not node.proven and node.count > 0 and lost == node.count:
        node.proven = 1
    return node.proven != 0


cdef inline int prove_parent(Tree *t, int32_t parent, int32_t child) noexcept nogil:
    """After `child` was proven: whether that proves `parent` (its mover's win proves the
    parent lost for the side that moved into it; all its siblings lost prove the parent won)."""
    cdef Node *p = &t.nodes[parent]
    cdef int i
    if t.nodes[child].proven > 0:
        p.proven = -1
        return 1
    if t.nodes[child].proven < 0:
        for i in range(p.count):
            if t.nodes[p.first + i].proven >= 0:
                return 0
        p.proven = 1
        return 1
    return 0


cdef int32_t find_descendant(const Tree *t, const uint8_t *state, int depth) noexcept nogil:
    """The node within `depth` (at most 2) plies of the root whose state is `state`, or -1:
    where the position now analysed sits in the last search's tree.  The root itself first;
    of the nodes below that hold it (moves played in another order reach one position twice)
    the most visited."""
    cdef int sb = t.k.state_bytes, i, j
    cdef int32_t found = -1, at
    cdef const Node *node
    cdef const Node *child
    if t.used < 1:
        return -1
    if memcmp(&t.states[0], state, sb) == 0:
        return 0
    node = &t.nodes[0]
    if node.first < 0 or depth < 1:
        return -1
    for i in range(node.count):
        at = node.first + i
        if memcmp(&t.states[<int64_t>at * sb], state, sb) == 0:
            if found < 0 or t.nodes[at].visits > t.nodes[found].visits:
                found = at
        child = &t.nodes[at]
        if depth < 2 or child.first < 0:
            continue
        for j in range(child.count):
            if memcmp(&t.states[<int64_t>(child.first + j) * sb], state, sb) == 0:
                if found < 0 or t.nodes[child.first + j].visits > t.nodes[found].visits:
                    found = child.first + j
    return found


cdef int64_t keep_subtree(Tree *t, int32_t at) noexcept nogil:
    """Make node `at` the tree's root, keeping what was learnt below it and dropping the rest:
    its subtree moved to the front of the arrays in place, in the order it was made.  A node's
    children are made together after it, so the subtree lies within [at, used), each block of
    children stays side by side, and every node moves toward the front (a copy from the front
    never overwrites a node not yet moved).  It takes a quarter of a byte a node besides (a
    bitmap of the subtree and its running counts).  Returns the nodes kept, or -1 when even
    that was not to be had (the tree is then left as it was)."""
    cdef int sb = t.k.state_bytes
    cdef int64_t span = t.used - at, words = (t.used - at + 63) // 64, i, j, rel, kept = 0
    cdef uint64_t *member
    cdef int64_t *before                 # members in the words before each word
    cdef Node *node
    cdef int32_t c
    if at == 0:
        return t.used
    member = <uint64_t *>calloc(words, sizeof(uint64_t))
    before = <int64_t *>malloc(words * sizeof(int64_t))
    if member == NULL or before == NULL:
        free(member)
        free(before)
        return -1
    member[0] = 1                        # `at` itself
    for i in range(span):                # a member's children are members (they come later)
        if not (member[i >> 6] >> (i & 63)) & 1:
            continue
        node = &t.nodes[at + i]
        if node.first < 0:
            continue
        for c in range(node.count):
            j = node.first + c - at
            member[j >> 6] |= (<uint64_t>1) << (j & 63)
    for i in range(words):
        before[i] = kept
        kept += __builtin_popcountll(member[i])
    for i in range(span):
        if not (member[i >> 6] >> (i & 63)) & 1:
            continue
        # where it goes: the members before it; its children's block likewise
        rel = before[i >> 6] + __builtin_popcountll(member[i >> 6] & (((<uint64_t>1) << (i & 63)) - 1))
        node = &t.nodes[at + i]
        if node.first >= 0 and node.count == 0:
            node.first = 0                  # the game is over here: expanded, no children
        elif node.first >= 0:
            j = node.first - at
            node.first = <int32_t>(before[j >> 6] + __builtin_popcountll(
                member[j >> 6] & (((<uint64_t>1) << (j & 63)) - 1)))
        if rel != at + i:
            t.nodes[rel] = node[0]
            memcpy(&t.states[rel * sb], &t.states[(at + i) * sb], sb)
    t.used = kept
    free(member)
    free(before)
    return kept


cdef void fresh_root(Tree *t, const uint8_t *state) noexcept nogil:
    """Start the tree afresh at `state` (its root not yet expanded)."""
    memcpy(t.states, state, t.k.state_bytes)
    t.nodes[0].first = -1
    t.nodes[0].count = 0
    t.nodes[0].visits = 0
    t.nodes[0].reward = 0
    t.nodes[0].proven = 0
    t.nodes[0].prior = 0
    t.used = 1


def _kernel(capsule):
    if not PyCapsule_IsValid(capsule, SOWSOLVE_PLAY_CAPSULE):
        raise TypeError("not a play kernel capsule (sowsolve.PlayKernel)")
    return capsule


cdef class Searcher:
    """The trees of one search kept after it ends, so they can be read: the analysis engine's
    Monte Carlo search (MCTS-Solver with informed playouts, in the games that declare it) runs
    in the background with `run` while another thread reads `status` and may `stop` it, then
    reads `report` and `principal_variation`.  `choose` is one search and its report.

    With `reuse`, what the trees learnt is kept for the next position: `reroot` makes the
    position now searched the root of each tree where it lies within two plies of the last
    root (the move played and the reply), its subtree kept and the rest dropped, and `run`
    grows the trees on from there (a game's searches build on one another, as engines'
    trees do); elsewhere the trees start afresh.  The plain player never reuses."""
    cdef object capsule
    cdef bytes rooted
    cdef readonly bint reuse
    cdef readonly int64_t kept
    cdef readonly int64_t carried
    cdef const PlayKernel *k
    cdef Tree *trees
    cdef int ntrees
    cdef int stop_flag
    cdef int64_t memory
    cdef double started
    cdef double ended
    cdef readonly double exploration
    cdef readonly bint solver
    cdef readonly bint informed
    cdef readonly double fpu
    cdef readonly object weights
    cdef int running

    def __cinit__(self, capsule, int64_t memory=1 << 28, double exploration=EXPLORATION,
                  bint solver=False, bint informed=False, bint reuse=False, weights=None,
                  double fpu=-1):
        _kernel(capsule)
        self.capsule = capsule
        self.k = <PlayKernel *>PyCapsule_GetPointer(capsule, SOWSOLVE_PLAY_CAPSULE)
        if not 0 <= self.k.features <= PLAY_FEATURES:
            raise ValueError(f"the play kernel declares {self.k.features} features, more than {PLAY_FEATURES}")
        if not exploration >= 0:
            raise ValueError(f"the exploration constant must be at least 0, not {exploration}")
        self.memory = memory
        self.exploration = exploration
        self.solver = solver
        self.informed = informed and not self.k.margin
        if weights is not None:
            try:
                weights = tuple(operator.index(w) for w in weights)
            except TypeError:
                raise ValueError(f"the weights must be integers, not {weights!r:.60}") from None
            if len(weights) != self.k.features or any(abs(w) > 1 << 20 for w in weights):
                raise ValueError(f"give {self.k.features} weights of at most 2^20 in absolute "
                                 f"value, not {weights!r:.60}")
        self.weights = weights
        if not fpu == fpu:
            raise ValueError("the first-play urgency must be a number, not nan")
        self.fpu = fpu
        # a margin game's rewards count the root's lead: kept only in win/loss games
        self.reuse = reuse and not self.k.margin
        self.rooted = None
        self.kept = 0
        self.carried = 0
        self.trees = NULL
        self.ntrees = 0
        self.running = 0

    def __dealloc__(self):
        self._free()

    cdef void _free(self) noexcept:
        cdef int th
        if self.trees == NULL:
            return
        for th in range(self.ntrees):
            free(self.trees[th].nodes)
            free(self.trees[th].states)
            free(self.trees[th].scratch)
            free(self.trees[th].codes)
            free(self.trees[th].gains)
            free(self.trees[th].path)
            free(self.trees[th].safe)
        free(self.trees)
        self.trees = NULL
        self.ntrees = 0
        self.rooted = None

    @property
    def state_bytes(self):
        return self.k.state_bytes

    def fits(self, int threads):
        """Whether the memory holds a tree for each of `threads` threads."""
        return threads >= 1 and self.memory // threads // (sizeof(Node) + self.k.state_bytes) >= 2 * self.k.max_moves + 1

    def clear(self):
        """Forget the last search's trees (its report, its status)."""
        if self.running:
            raise RuntimeError("the search is running")
        self._free()

    def reroot(self, bytes state):
        """Before a search of `state`: with `reuse`, keep of each tree the subtree of `state`
        where it lies within two plies of the last root, and forget the rest (a tree that does
        not hold it starts afresh at it); without, forget the trees (as `clear`).  The report
        then reads `state`'s kept moves (none yet: []), never the last position's, and the
        status counts no playout until `run`, which grows the kept trees when given `state`
        next with as many threads.  Returns the nodes kept over all trees (`kept`; `carried`:
        the playouts through them)."""
        cdef int th
        cdef int32_t at
        cdef int64_t kept, total = 0
        if self.running:
            raise RuntimeError("the search is running")
        if len(state) != self.k.state_bytes:
            raise ValueError(f"a state of this game has {self.k.state_bytes} bytes, not {len(state)}")
        self.kept = self.carried = 0
        self.rooted = None
        if not self.reuse or self.trees == NULL:
            self._free()
            return 0
        cdef const uint8_t *wanted = <const uint8_t *>state
        for th in range(self.ntrees):
            at = find_descendant(&self.trees[th], wanted, 2)
            kept = -1
            # a node's visits are 32 bits: a root near the bound is not grown on
            if at >= 0 and self.trees[th].nodes[at].visits < <uint32_t>2147483648u:
                kept = keep_subtree(&self.trees[th], at)
            if kept < 0:
                fresh_root(&self.trees[th], wanted)
                kept = 0
            self.trees[th].playouts = 0
            total += kept
            self.carried += self.trees[th].nodes[0].visits
        self.rooted = state
        self.kept = total
        self.started = self.ended = now()
        return total

    def run(self, bytes state, double seconds=0, int64_t playouts=0, int threads=1,
            uint64_t seed=0, int64_t lead=0, int64_t leftover=0, int last=0):
        """Search `state` for `seconds` or `playouts` (in all), on `threads` trees grown at
        once, until then, the root proven, or `stop`; returns the playouts run.  Releases the
        GIL while it runs.  Margin games: `lead` is what the side to move has banked over its
        opponent so far, `leftover` the seeds on the board and `last` who captured last (+1
        the side to move, -1 the other, 0 nobody), for infinite play's end."""
        cdef const PlayKernel *k = self.k
        cdef int sb = k.state_bytes, th
        if len(state) != sb:
            raise ValueError(f"a state of this game has {sb} bytes, not {len(state)}")
        if threads < 1 or (seconds <= 0 and playouts <= 0):
            raise ValueError("give threads >= 1 and a time or a number of playouts")
        if not (-1 << 20 < lead < 1 << 20 and 0 <= leftover < 1 << 20 and -1 <= last <= 1):
            raise ValueError("lead, leftover or last out of range")
        cdef int64_t per_tree = self.memory // threads // (sizeof(Node) + sb)
        if per_tree < 2 * k.max_moves + 1:
            raise ValueError(f"{self.memory:,} bytes hold no tree")
        if per_tree > MAX_TREE_NODES:
            per_tree = MAX_TREE_NODES
        if self.running:
            raise RuntimeError("the search is running")
        # the trees `reroot` kept for this very state, else afresh: a run never builds on one
        # it was not kept for (the plain player, a margin game: every run its own)
        kept_for_this = (self.reuse and self.trees != NULL and self.rooted == state
                         and self.ntrees == threads and self.trees[0].capacity == per_tree)
        self.rooted = None
        if kept_for_this:
            self._grow_kept(seed, lead, leftover, last, seconds, playouts)
            return self.playouts
        self._free()
        self.kept = self.carried = 0
        self.trees = <Tree *>calloc(threads, sizeof(Tree))
        if self.trees == NULL:
            raise MemoryError()
        self.ntrees = threads
        cdef Tree *trees = self.trees
        for th in range(threads):
            trees[th].k = k
            trees[th].capacity = per_tree
            trees[th].nodes = <Node *>malloc(per_tree * sizeof(Node))
            trees[th].states = <uint8_t *>malloc(per_tree * sb)
            trees[th].scratch = <uint8_t *>malloc(<size_t>k.max_moves * sb)
            trees[th].codes = <int16_t *>malloc(k.max_moves * sizeof(int16_t))
            trees[th].gains = <int16_t *>malloc(k.max_moves * sizeof(int16_t))
            trees[th].path = <int32_t *>malloc(MAX_PATH * sizeof(int32_t))
            trees[th].safe = <int16_t *>malloc(k.max_moves * sizeof(int16_t))
            if (trees[th].nodes == NULL or trees[th].states == NULL or trees[th].scratch == NULL
                    or trees[th].codes == NULL or trees[th].gains == NULL or trees[th].path == NULL
                    or trees[th].safe == NULL):
                self._free()
                raise MemoryError()
            trees[th].solver = self.solver
            trees[th].informed = self.informed
            self._configure(&trees[th])
            trees[th].rng = mixed_seed(seed, th)
            trees[th].lead = <int32_t>lead
            trees[th].leftover = <int32_t>leftover
            trees[th].last = last
            trees[th].stop = &self.stop_flag
            memcpy(trees[th].states, <const char *>state, sb)
            trees[th].nodes[0].first = -1
            trees[th].nodes[0].visits = 0
            trees[th].nodes[0].reward = 0
            trees[th].nodes[0].proven = 0
            trees[th].used = 1
            # every root expanded before the threads start: a reader of the roots' children
            # (status, while the search runs) never meets one half made
            expand(&trees[th], 0)
            if self.solver and not k.margin:
                settle_by_gains(&trees[th], 0)
        self._grow(seconds, playouts)
        return self.playouts

    cdef void _configure(self, Tree *t):
        """The tree's move ordering and first-play urgency, as the searcher was made."""
        cdef int j
        t.ordered = self.weights is not None
        t.fpu = self.fpu
        for j in range(self.k.features if self.weights is not None else 0):
            t.weights[j] = self.weights[j]

    cdef int _grow_kept(self, uint64_t seed, int64_t lead, int64_t leftover, int last,
                        double seconds, int64_t playouts) except -1:
        """`run` on trees `reroot` kept: fresh streams and counts, the root made ready as a new
        one is (expanded, its moves that end the game settled)."""
        cdef int th
        cdef Tree *t
        for th in range(self.ntrees):
            t = &self.trees[th]
            t.rng = mixed_seed(seed, th)
            t.playouts = 0
            t.lead = <int32_t>lead
            t.leftover = <int32_t>leftover
            t.last = last
            if t.nodes[0].first < 0 and expand(t, 0) and self.solver and not self.k.margin:
                settle_by_gains(t, 0)
        return self._grow(seconds, playouts)

    cdef int _grow(self, double seconds, int64_t playouts) except -1:
        """Grow every tree (one thread each) for `seconds` or `playouts` in all."""
        cdef Tree *trees = self.trees
        cdef int threads = self.ntrees, th
        self.started = now()
        self.ended = 0
        if trees[0].nodes[0].count == 0 and trees[0].nodes[0].first >= 0:
            self.ended = self.started
            return 0
        # a stop asked before this point is not this run's (the analysis asks again while
        # the run is under way)
        flag_store(&self.stop_flag, 0)
        cdef double deadline = self.started + seconds if seconds > 0 else 0
        cdef int64_t share = (playouts + threads - 1) // threads if playouts > 0 else 0
        cdef double c = self.exploration
        self.running = 1
        try:
            with nogil:
                for th in prange(threads, num_threads=threads, schedule="static", chunksize=1):
                    grow(&trees[th], share, deadline, c)
        finally:
            self.running = 0
        self.ended = now()
        return 0

    def stop(self):
        """Ask the search under way to stop (from another thread); a run that starts later
        is not stopped by it."""
        flag_store(&self.stop_flag, 1)

    @property
    def playouts(self):
        cdef int64_t total = 0
        cdef int th
        for th in range(self.ntrees):
            total += count_load(&self.trees[th].playouts)
        return total

    def report(self):
        """The root's moves summed over the trees, best first: [(code, gain, visits, mean
        reward for the mover, proven)] -- a proven win (+1), then the most visited, proven
        losses (-1) last; [] before a search or where the game is over."""
        cdef int th, i
        cdef Node *child
        counts = {}
        for th in range(self.ntrees):
            if self.trees[th].nodes[0].first < 0:
                continue
            for i in range(self.trees[th].nodes[0].count):
                child = &self.trees[th].nodes[self.trees[th].nodes[0].first + i]
                visits, reward, gain, proven = counts.get(child.code, (0, 0.0, child.gain, 0))
                counts[child.code] = (visits + child.visits, reward + child.reward, gain,
                                      child.proven if child.proven else proven)
        moves = [(code, gain, v, (r / v) if v else 0.0, p)
                 for code, (v, r, gain, p) in counts.items()]
        moves.sort(key=lambda m: (-m[4], -m[2], m[0]))
        return moves

    def status(self):
        """(playouts, seconds, best code or None, its mean reward, its proof): what a running
        search has found so far (read while it runs, a little stale)."""
        moves = self.report()
        end = self.ended if self.ended else now()
        seconds = end - self.started if self.ntrees else 0.0
        if not moves or moves[0][2] == 0 and not moves[0][4]:
            return self.playouts, seconds, None, None, 0
        return self.playouts, seconds, moves[0][0], moves[0][3], moves[0][4]

    def principal_variation(self, int first, int limit=40):
        """The line after the root's move `first`: in the tree that visited it most, the
        child proven won for its mover or else the most visited, while there is one.  Only
        once the search has ended (below the root, its trees are still growing)."""
        cdef int th, best_tree = -1, i
        cdef uint32_t most = 0
        cdef int32_t at = -1, pick
        cdef Node *node
        cdef Node *child
        if self.running:
            raise RuntimeError("the search is running")
        for th in range(self.ntrees):
            node = &self.trees[th].nodes[0]
            for i in range(node.count if node.first >= 0 else 0):
                child = &self.trees[th].nodes[node.first + i]
                if child.code == first and (best_tree < 0 or child.visits > most):
                    best_tree, most, at = th, child.visits, node.first + i
        line = []
        if best_tree < 0:
            return line
        cdef Tree *t = &self.trees[best_tree]
        while len(line) < limit:
            node = &t.nodes[at]
            if node.first < 0 or node.count == 0:
                break
            pick, most = -1, 0
            for i in range(node.count):
                child = &t.nodes[node.first + i]
                if child.proven > 0:
                    pick = node.first + i
                    break
                if child.visits > most:
                    pick, most = node.first + i, child.visits
            if pick < 0:
                break
            line.append(t.nodes[pick].code)
            at = pick
        return line


def choose(capsule, bytes state, double seconds=0, int64_t playouts=0, int threads=1,
           uint64_t seed=0, int64_t lead=0, int64_t leftover=0, int last=0,
           int64_t memory=1 << 28, double exploration=EXPLORATION, bint solver=False,
           bint informed=False):
    """Search `state` for `seconds` or `playouts` (in all), on `threads` trees grown at once;
    returns (moves, playouts): moves as [(code, visits, mean reward for the mover, proven)],
    best first (a proven win, then the most visited, proven losses last), [] when the game is
    over.  The plain player is the default; `solver` adds MCTS-Solver's proofs (proven +1 a
    win for the mover, -1 a loss, 0 unknown), `informed` playouts that take a move winning at
    once and avoid one losing at once (win/loss games: the moves' gains tell).  Margin games: `lead` is what the side to move has
    banked over its opponent so far, `leftover` the seeds on the board and `last` who captured
    last (+1 the side to move, -1 the other, 0 nobody), for infinite play's end.  `memory`
    bounds the trees (bytes, all threads)."""
    searcher = Searcher(capsule, memory, exploration, solver, informed)
    total = searcher.run(state, seconds, playouts, threads, seed, lead, leftover, last)
    return [(code, visits, mean, proven)
            for code, _, visits, mean, proven in searcher.report()], total


cdef void grow(Tree *t, int64_t playouts, double deadline, double c) noexcept nogil:
    """Playouts until the tree's share is done or the deadline passes."""
    while True:
        if playouts > 0 and t.playouts >= playouts:
            return
        if t.nodes[0].visits >= MAX_TREE_PLAYOUTS:
            return                                 # a node's visits would pass 2^32
        if t.nodes[0].proven:
            return                                 # the root is proven: nothing left to learn
        if flag_load(t.stop):
            return
        if deadline > 0 and t.playouts % CLOCK_EVERY == 0 and now() >= deadline:
            return
        iterate(t, c)
