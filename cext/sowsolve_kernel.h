/* The kernel layer of the Game contract: what a solver kernel may call, with integers only.
 *
 * A game kernel fills one GameKernel and hands it to the solvers inside a PyCapsule named
 * SOWSOLVE_KERNEL_CAPSULE, so that solver modules need no compile-time knowledge of any game.
 */
#ifndef SOWSOLVE_KERNEL_H
#define SOWSOLVE_KERNEL_H

#include <stdint.h>

#define SOWSOLVE_KERNEL_CAPSULE "sowsolve.GameKernel"
#define SOWSOLVE_MAX_CHILDREN 64
#define PROOF_INF 0x3FFFFFFF    /* proof and disproof numbers saturate here */

/* The two record layouts, each 16 bits and always from the side to move, with 0 meaning "not
 * solved yet", so a fresh zeroed array is an unsolved tier.  They are defined here only: the
 * kernels use these macros, and Python reads them from retrograde.WINLOSS_LAYOUT and
 * scoresolve.MARGIN_LAYOUT.
 *
 * Win/loss records: the outcome in the low REC_OUTCOME_BITS bits, the remoteness above them. */
#define REC_UNSOLVED 0u
#define REC_LOSS 1u
#define REC_DRAW 2u
#define REC_WIN 3u
#define REC_OUTCOME_BITS 2u
#define REC_OUTCOME_MASK ((1u << REC_OUTCOME_BITS) - 1u)
#define REC_OUTCOME(r) ((r) & REC_OUTCOME_MASK)
#define REC_REMOTENESS(r) ((r) >> REC_OUTCOME_BITS)
#define REC_MAKE(outcome, rem) ((uint16_t)(((rem) << REC_OUTCOME_BITS) | (outcome)))
#define REC_MAX_REMOTENESS 16383u   /* (1 << (16 - REC_OUTCOME_BITS)) - 1 */

/* Margin records (games scored by a margin): the low 7 bits hold the margin plus
 * MARGIN_BIAS (margins -MARGIN_MAX_VALUE..MARGIN_MAX_VALUE, so a solved record is never 0), the
 * high 9 bits the remoteness: 0..MARGIN_REM_LONG-1 plies as they are, MARGIN_REM_ENDLESS "no
 * end" (the value comes from play that goes on forever), and MARGIN_REM_LONG "long": the
 * remoteness, MARGIN_REM_LONG..MARGIN_MAX_REMOTENESS plies, is in the tier's long table, a
 * sorted array of uint64 entries (index << MARGIN_LONG_SHIFT) | plies beside the records.
 * A margin game's forced lines pass 510 plies on 2x4 with 4 seeds per pit; rather than widen every
 * record, the records stay 16 bits and each long one costs 8 bytes more.  (Margins of up to 63 seeds cover
 * the standard board's 60.)  Plain int constants, so comparisons with signed values stay
 * signed. */
#define MARGIN_UNSOLVED 0
#define MARGIN_BIAS 64
#define MARGIN_VALUE_MASK 0x7F
#define MARGIN_MAX_VALUE 63
#define MARGIN_REM_SHIFT 7
#define MARGIN_REM_ENDLESS 511
#define MARGIN_REM_LONG 510
#define MARGIN_LONG_SHIFT 16
#define MARGIN_MAX_REMOTENESS 65533
#define MARGIN_VALUE(r) ((int)((r) & MARGIN_VALUE_MASK) - MARGIN_BIAS)
#define MARGIN_REMOTENESS(r) ((int)((r) >> MARGIN_REM_SHIFT))
#define MARGIN_MAKE(margin, rem) \
    ((uint16_t)(((unsigned)(rem) << MARGIN_REM_SHIFT) | (unsigned)((margin) + MARGIN_BIAS)))

/* Distances in plies inside the score solvers and between a game's kernel and them (exit_rem
 * of ScoreTier.moves): DIST_ENDLESS is "no end"; a line reaching DIST_CAP is refused. */
#define DIST_ENDLESS 0xFFFF
#define DIST_CAP (MARGIN_MAX_REMOTENESS + 1)

/* The remoteness in plies (DIST_ENDLESS: no end) of record `rec` at `index` of a tier whose
 * long table is `table` (n entries, sorted: checked when a table is loaded); -1 where the
 * record says "long" and the table lacks its index. */
static inline int margin_plies(uint16_t rec, const uint64_t *table, int64_t n, int64_t index) {
    int rem = MARGIN_REMOTENESS(rec);
    int64_t lo = 0, hi = n;
    if (rem == MARGIN_REM_ENDLESS) return DIST_ENDLESS;
    if (rem != MARGIN_REM_LONG) return rem;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        uint64_t at = table[mid] >> MARGIN_LONG_SHIFT;
        if (at == (uint64_t)index) return (int)(table[mid] & ((1u << MARGIN_LONG_SHIFT) - 1u));
        if (at < (uint64_t)index) lo = mid + 1; else hi = mid;
    }
    return -1;
}

/* The 9-bit remoteness field for `plies` (DIST_ENDLESS: no end). */
static inline int margin_rem_field(int plies) {
    if (plies >= DIST_ENDLESS) return MARGIN_REM_ENDLESS;
    return plies >= MARGIN_REM_LONG ? MARGIN_REM_LONG : plies;
}

/* A 64-bit mixer (splitmix64's finaliser) for hash tables keyed by packed positions: every
 * bit of the key reaches every bit of the slot index. */
static inline uint64_t key_mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Folding children's records (each from the child's side to move) into the parent's record:
 * win as fast as possible, else draw, else lose as slowly as possible. */
typedef struct Fold {
    uint32_t win_in;   /* least remoteness of a child lost for its mover, UINT32_MAX if none */
    uint32_t lose_in;  /* greatest remoteness of a child won by its mover */
    int draw;
} Fold;

static inline void fold_start(Fold *f) { f->win_in = 0xFFFFFFFFu; f->lose_in = 0; f->draw = 0; }

static inline void fold_add(Fold *f, uint16_t record) {
    unsigned outcome = REC_OUTCOME(record), rem = REC_REMOTENESS(record);
    if (outcome == REC_LOSS) { if (rem < f->win_in) f->win_in = rem; }
    else if (outcome == REC_WIN) { if (rem > f->lose_in) f->lose_in = rem; }
    else f->draw = 1;
}

/* 0 when the result's remoteness does not fit a record */
static inline int fold_fits(const Fold *f) {
    return !((f->win_in != 0xFFFFFFFFu && f->win_in >= REC_MAX_REMOTENESS) || f->lose_in >= REC_MAX_REMOTENESS);
}

static inline uint16_t fold_result(const Fold *f) {
    if (f->win_in != 0xFFFFFFFFu) return REC_MAKE(REC_WIN, f->win_in + 1);
    if (f->draw) return REC_MAKE(REC_DRAW, 0);
    return REC_MAKE(REC_LOSS, f->lose_in + 1);
}

/* The same fold as one maximum, for the solver's sweep (no branch on each child's outcome): a
 * child lost for its mover scores 2 << 16 | (0xFFFF - remoteness), a draw 1 << 16, a child won
 * by its mover its remoteness, "unsolved" 0; the greatest score is the child fold_add's choice
 * follows.  fold_score_record gives the parent's record from it, 0 when its remoteness does not
 * fit a record (unlike fold_fits, a parent with a move that wins is not refused for the length
 * of a line it does not choose). */
static inline uint32_t fold_score(uint16_t record) {
    uint32_t outcome = REC_OUTCOME(record), rem = REC_REMOTENESS(record);
    uint32_t lost = (2u << 16) | (0xFFFFu - rem), won = outcome == REC_WIN ? rem : 0u;
    return outcome == REC_LOSS ? lost : (outcome == REC_DRAW ? (1u << 16) : won);
}

static inline uint16_t fold_score_record(uint32_t best) {
    uint32_t rem;
    if (best >= (2u << 16)) {
        rem = 0xFFFFu - (best & 0xFFFFu);
        return rem >= REC_MAX_REMOTENESS ? 0 : REC_MAKE(REC_WIN, rem + 1);
    }
    if (best >= (1u << 16)) return REC_MAKE(REC_DRAW, 0);
    return best >= REC_MAX_REMOTENESS ? 0 : REC_MAKE(REC_LOSS, best + 1);
}

typedef struct GameKernel {
    const void *ctx;
    int max_children;
    /* Children of position `index` of `tier`, each as the tier and index of the stored
     * position whose side to move is the child's side to move (a game that folds a
     * symmetry maps the child to its stored representative).  Returns the number of
     * children, 0 for a final position with its record in *final_record, or -1 when
     * (tier, index) is out of range. */
    int (*expand)(const void *ctx, int tier, int64_t index,
                  int *child_tier, int64_t *child_index, uint16_t *final_record);
    /* For games solved by search over packed positions (NULL where not offered): children of a
     * packed canonical position as packed canonical positions; same return convention.  When
     * child_hint is not NULL (only for a game that offers proof_hint), it gets the proof_hint of
     * each child, phi then delta (2 per child): the game has the child's board at hand there,
     * where proof_hint would unpack it again. */
    int (*expand_key)(const void *ctx, uint64_t key, uint64_t *child_key, uint32_t *child_hint,
                      uint16_t *final_record);
    /* For the proof search (optional, NULL where not offered): without expanding a packed
     * position, whether it is final (1, with *phi, *delta = 0, PROOF_INF for a win of its side
     * to move, PROOF_INF, 0 for a loss) or an estimate of the positions to expand to prove that
     * its side to move wins (*phi) or loses (*delta), each at least 1 (0 returned). */
    int (*proof_hint)(const void *ctx, uint64_t key, uint32_t *phi, uint32_t *delta);
    /* For the tier solver (optional, NULL where not offered): a level of every position of a
     * tier, 0 .. level_count-1, that is strictly lower at every same-tier child (a potential
     * every move inside a tier lowers).  Positions of one level are then independent of each other, so a
     * tier is solved as a sweep, level by level upwards, split evenly between threads (or
     * machines); -1 when (tier, index) is out of range. */
    int32_t (*level)(const void *ctx, int tier, int64_t index);
    int32_t level_count;
    /* For the tier solver's sweep (optional, NULL where not offered; only with `level`): every
     * position of a tier as a 32-bit member of the game's own coding, sorted by level, written
     * into members[0 .. size-1], and first[L] where level L starts (first[level_count] = size),
     * without a level worked out per index (a game may enumerate pairs of half boards whose
     * potentials add up to each level).  Returns 0, or -1 for a tier out of range. */
    int (*level_members)(const void *ctx, int tier, uint32_t *members, int64_t *first);
    /* ...and the children of a member, as `expand` (same return convention), with the
     * member's index in *index: the game need not unrank it. */
    int (*expand_member)(const void *ctx, int tier, uint32_t member, int64_t *index,
                         int *child_tier, int64_t *child_index, uint16_t *final_record);
} GameKernel;

/* One tier of a score game with cycles inside its tiers, for the compact score solver
 * (scoresolve.pyx), handed over in a PyCapsule named SOWSOLVE_SCORE_TIER_CAPSULE.  The game
 * generates moves and un-moves in its kernel, so the solver keeps no move graph: it holds a
 * record, a counter byte and a distance word per position.  Values are for the first player
 * (index side 0), the maximiser; |value| <= bound; play that never captures again is worth
 * endless_value.  Both calls are thread-safe (the context is read only); `moves` also gets a
 * scratch area of scratch_bytes private to the calling thread, zero-filled before its first
 * call and kept between calls, where a kernel may keep what consecutive indices share (the
 * solver's forward sweeps ask for the moves of every index in order). */
#define SOWSOLVE_SCORE_TIER_CAPSULE "sowsolve.ScoreTier"
#define SCORE_EXIT (-1)          /* a move that leaves the tier (child[j] in moves) */
#define SCORE_ERR_UNSOLVED (-2)  /* a move leads to a record not solved (or not given) */
#define SCORE_ERR_BEYOND (-3)    /* a move leads to a record worth more than its seeds */
#define SCORE_ERR_PREDS (-4)     /* more predecessors than the caller's buffer holds */
#define SCORE_ERR_LONG (-5)      /* a record says "long" and its tier's long table lacks it */

typedef struct ScoreTier {
    const void *ctx;
    int64_t n;                   /* positions of the tier: indices 0 .. n-1 */
    int width;                   /* the most moves a position has */
    int max_preds;               /* the most predecessors unmoves may return */
    int bound;
    int endless_value;
    /* the side to move at `index` is (index / side_stride) % 2: 0 the maximiser, 1 the other */
    int64_t side_stride;
    int64_t scratch_bytes;       /* the size of the scratch area `moves` gets (at most 1 MiB) */
    /* Moves of `index`: child[j] the same-tier index the move leads to, or SCORE_EXIT with
     * exit_value[j] (for the maximiser, the move's gain included) and exit_rem[j] (the
     * remoteness in plies of the record it leads to, DIST_ENDLESS for no end: margin_plies).  Returns the number of moves or SCORE_ERR_*. */
    int (*moves)(const void *ctx, void *scratch, int64_t index, int64_t *child,
                 int16_t *exit_value, uint16_t *exit_rem);
    /* Same-tier predecessors of `index`: one entry per move that leads here (a position with
     * two such moves appears twice).  Returns their number or SCORE_ERR_PREDS. */
    int (*unmoves)(const void *ctx, int64_t index, int64_t *pred, int max);
} ScoreTier;

/* A large zeroed table that is read at random (a transposition table): mapped whole, zeroed by
 * the system page by page as first touched, and backed by huge pages where the system offers
 * them, so that a random read costs one cache miss and not also a page-table walk.  NULL when
 * out of memory; release with big_table_free and the same size. */
#include <stddef.h>
#include <sys/mman.h>
static inline void *big_table_alloc(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}
static inline void big_table_free(void *p, size_t bytes) { if (p != NULL) munmap(p, bytes); }

/* Ask for the cache line of p before an atomic on it: an atomic read-modify-write waits for its
 * line, and the loads behind it wait with it, so the misses of a batch overlap only if asked
 * for first. */
static inline void prefetch_for_write(const void *p) { __builtin_prefetch(p, 1, 3); }
/* Ask for a line that will be read: a batch of scattered reads then waits for memory once. */
static inline void prefetch_for_read(const void *p) { __builtin_prefetch(p, 0, 3); }

/* A spin lock in a 32-bit word (0: free), for short critical sections of a few loads and
 * stores (a transposition-table bucket shared by the threads of a search). */
#if defined(__x86_64__) || defined(__i386__)
#define SPIN_PAUSE() __builtin_ia32_pause()
#else
#define SPIN_PAUSE() ((void)0)
#endif
static inline void spin_lock(uint32_t *p) {
    while (__atomic_exchange_n(p, 1u, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(p, __ATOMIC_RELAXED)) SPIN_PAUSE();
    }
}
static inline void spin_unlock(uint32_t *p) { __atomic_store_n(p, 0u, __ATOMIC_RELEASE); }
/* Where `key` is in keys[0..n) (sorted ascending), or -1: binary search. */
static inline int64_t sorted_find(const uint64_t *keys, int64_t n, uint64_t key) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = (lo + hi) >> 1;
        if (keys[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo < n && keys[lo] == key ? lo : -1;
}
/* Relaxed counters shared by threads. */
/* A barrier of the enclosing OpenMP parallel region (nothing without OpenMP), for a kernel
 * whose threads go through levels together: Cython's prange inside a `with parallel()` block
 * promises none at its end. */
static inline void team_barrier(void) {
#ifdef _OPENMP
    _Pragma("omp barrier")
#endif
}

static inline void count_add(int64_t *p, int64_t n) { __atomic_fetch_add(p, n, __ATOMIC_RELAXED); }
static inline int64_t count_load(const int64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline int flag_load(const int *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void flag_store(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }

/* Relaxed atomics on the solver's per-position bytes, shared by the threads of one tier. */
static inline uint8_t byte_load(const uint8_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void byte_store(uint8_t *p, uint8_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline uint8_t byte_fetch_sub(uint8_t *p, uint8_t v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }
static inline void byte_add(uint8_t *p, uint8_t v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline uint8_t byte_fetch_or(uint8_t *p, uint8_t v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
static inline uint8_t byte_fetch_and(uint8_t *p, uint8_t v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }
static inline uint16_t word_load(const uint16_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
/* Lower *p to v if v is smaller (1 if it did) / raise *p to v if v is larger. */
static inline int word_lower(uint16_t *p, uint16_t v) {
    uint16_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < old) {
        if (__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return 1;
    }
    return 0;
}
static inline void word_raise(uint16_t *p, uint16_t v) {
    uint16_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > old) {
        if (__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
    }
}
/* The first error a thread reports is kept. */
static inline void first_error(int *p, int code) {
    int none = 0;
    __atomic_compare_exchange_n(p, &none, code, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* What a long kernel call shares with the thread that drives it: the driver sets `stop` (on
 * Ctrl-C) and the kernel polls it every few thousand positions, returning early; the kernel adds
 * the positions it finishes to `done`, which the driver reads for progress.  The two words lie
 * on separate cache lines, so progress updates do not slow the polling of `stop`.  Python hands
 * it over as 16 int64 words (solver/kernels.py, Control). */
typedef struct Control {
    int64_t stop;
    int64_t pad1[7];
    int64_t done;
    int64_t pad2[7];
} Control;

#define CONTROL_WORDS 16
#define CONTROL_FLUSH 4096      /* positions a kernel thread counts before adding them to done */

static inline int ctl_stopped(const Control *c) { return __atomic_load_n(&c->stop, __ATOMIC_RELAXED) != 0; }
static inline void ctl_add(Control *c, int64_t n) { if (n) __atomic_fetch_add(&c->done, n, __ATOMIC_RELAXED); }
static inline void ctl_set(Control *c, int64_t n) { __atomic_store_n(&c->done, n, __ATOMIC_RELAXED); }

/* Kernels that run in the caller's thread (perft) ask Python every few thousand calls whether
 * a signal is pending, taking the GIL for a moment: 1 when a handler raised (Ctrl-C: the
 * KeyboardInterrupt stays set for the caller to raise).  Kept out of line, off the hot path. */
#ifdef Py_PYTHON_H
__attribute__((noinline, cold, unused)) static int sowsolve_signals_pending(void) {
    PyGILState_STATE state = PyGILState_Ensure();
    int raised = PyErr_CheckSignals() < 0;
    PyGILState_Release(state);
    return raised;
}
#endif

/* Relaxed atomic access to records shared between threads: two threads that solve the same
 * position write the same record, so a racing read sees either "unsolved" or the answer. */
static inline uint16_t rec_load(const uint16_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void rec_store(uint16_t *p, uint16_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
/* Store a record where none is yet: 1 if this call stored it.  Two threads that finish the same
 * position at the same moment may both store it (the same record) and both count it, so a
 * progress count can exceed the positions by a few; a compare-and-swap would make it exact but
 * costs some 5% of a solve. */
static inline int rec_claim(uint16_t *p, uint16_t v) {
    if (__atomic_load_n(p, __ATOMIC_RELAXED) != 0) return 0;
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
    return 1;
}

/* The play layer, for the analysis engine (engine.pyx), handed over in a PyCapsule named
 * SOWSOLVE_PLAY_CAPSULE.  A position is a state of state_bytes bytes the game lays out as it
 * likes (unused bytes zero, so two equal positions are equal bytes): the engine copies, hashes
 * and compares states and never reads inside one.  Every board of every game has one, however
 * large (8x8 boards of discs, 144 seeds), unlike the tier index or the 64-bit key. */
#define SOWSOLVE_PLAY_CAPSULE "sowsolve.PlayKernel"
#define PLAY_STATE_MAX 72
#define PLAY_MAX_MOVES 512
#define PLAY_FEATURES 8

typedef struct PlayKernel {
    const void *ctx;
    int state_bytes;          /* <= PLAY_STATE_MAX */
    int max_moves;            /* <= PLAY_MAX_MOVES */
    int margin;               /* 1: values are margins (what the mover banks counts); 0: win/loss */
    int features;             /* evaluation features, <= PLAY_FEATURES */
    /* The legal moves of `state`: each child's state (state_bytes each) into `children`, its
     * move code (0..PLAY_MAX_MOVES-1, stable: the same move has the same code) into `codes`,
     * and what the mover banks by it into `gains`: in a margin game the seeds it captures; in
     * a win/loss game the end it makes at once, +1 the mover has won, -1 it has lost, 0 the
     * game goes on (the kernel knows it from the child it has just made: the engine takes a
     * winning move without a search, the UCT player's informed playouts read it).  Returns the
     * number of moves; 0 when the game is over, with *final its value for the side to move:
     * +1 win, -1 loss, 0 draw (win/loss games) or the margin the side to move gets. */
    int (*moves)(const void *ctx, const uint8_t *state, uint8_t *children, int16_t *codes,
                 int16_t *gains, int *final);
    /* The evaluation's features of a state that is not over, from the side to move (the
     * engine weighs them with the game's weights: solver/games/<name>.py). */
    void (*features_of)(const void *ctx, const uint8_t *state, int32_t *f);
    /* Where a table of this board stores the state's record: its tier and its index in a
     * dense tier, or its packed key in a keyed one; 0 where no table can hold it. */
    int (*locate)(const void *ctx, const uint8_t *state, int *tier, uint64_t *where);
    /* Optional (NULL: none): the value for the side to move of play that goes round for ever
     * from `state` (the game's rule for infinite play; a position can only come back after
     * moves that bank nothing), on the scale of *final above.  Where a game gives it, the
     * engine scores a position that repeats one on its search path by it (an estimate: the
     * players could leave the cycle). */
    int (*endless)(const void *ctx, const uint8_t *state);
    /* Optional (NULL: the engine calls moves, then features_of): what the search needs of a
     * state at its horizon, without making every child.  Returns 0 when the game is over there
     * (*final as moves gives it), PLAY_WINS_AT_ONCE when the mover has a move that wins at once
     * (a win/loss game: a gain of +1), else 1 with the features in f. */
    int (*horizon)(const void *ctx, const uint8_t *state, int32_t *f, int *final);
} PlayKernel;
#define PLAY_WINS_AT_ONCE 2

#endif
