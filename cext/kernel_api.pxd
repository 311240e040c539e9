# Declarations of the kernel layer (sowsolve_kernel.h), shared by game kernels and solvers.
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

cdef extern from "sowsolve_kernel.h" nogil:
    const char *SOWSOLVE_KERNEL_CAPSULE
    int SOWSOLVE_MAX_CHILDREN, PROOF_INF
    # the win/loss record layout
    unsigned REC_UNSOLVED, REC_LOSS, REC_DRAW, REC_WIN, REC_MAX_REMOTENESS
    unsigned REC_OUTCOME_BITS, REC_OUTCOME_MASK
    unsigned REC_OUTCOME(unsigned r)
    unsigned REC_REMOTENESS(unsigned r)
    uint16_t REC_MAKE(unsigned outcome, unsigned rem)

    # the margin record layout
    int MARGIN_UNSOLVED, MARGIN_BIAS, MARGIN_VALUE_MASK, MARGIN_MAX_VALUE
    int MARGIN_REM_SHIFT, MARGIN_REM_ENDLESS, MARGIN_REM_LONG, MARGIN_LONG_SHIFT
    int MARGIN_MAX_REMOTENESS, DIST_ENDLESS, DIST_CAP
    int margin_plies(uint16_t rec, const uint64_t *table, int64_t n, int64_t index)
    int margin_rem_field(int plies)
    uint64_t key_mix(uint64_t x)
    int MARGIN_VALUE(uint16_t r)
    int MARGIN_REMOTENESS(uint16_t r)
    uint16_t MARGIN_MAKE(int margin, int rem)

    ctypedef int (*expand_fn)(const void *ctx, int tier, int64_t index, int *child_tier,
                              int64_t *child_index, uint16_t *final_record) noexcept nogil

    ctypedef int (*expand_key_fn)(const void *ctx, uint64_t key, uint64_t *child_key,
                                  uint32_t *child_hint, uint16_t *final_record) noexcept nogil

    ctypedef struct GameKernel:
        const void *ctx
        int max_children
        expand_fn expand
        expand_key_fn expand_key
        int (*proof_hint)(const void *ctx, uint64_t key, uint32_t *phi, uint32_t *delta) noexcept nogil
        int32_t (*level)(const void *ctx, int tier, int64_t index) noexcept nogil
        int32_t level_count
        int (*level_members)(const void *ctx, int tier, uint32_t *members, int64_t *first) noexcept nogil
        int (*expand_member)(const void *ctx, int tier, uint32_t member, int64_t *index,
                             int *child_tier, int64_t *child_index, uint16_t *final_record) noexcept nogil

    const char *SOWSOLVE_SCORE_TIER_CAPSULE
    int SCORE_EXIT, SCORE_ERR_UNSOLVED, SCORE_ERR_BEYOND, SCORE_ERR_PREDS, SCORE_ERR_LONG
    ctypedef struct ScoreTier:
        const void *ctx
        int64_t n
        int width
        int max_preds
        int bound
        int endless_value
        int64_t side_stride
        int64_t scratch_bytes
        int (*moves)(const void *ctx, void *scratch, int64_t index, int64_t *child,
                     int16_t *exit_value, uint16_t *exit_rem) noexcept nogil
        int (*unmoves)(const void *ctx, int64_t index, int64_t *pred, int max) noexcept nogil

    void *big_table_alloc(size_t bytes)
    void big_table_free(void *p, size_t bytes)
    int64_t sorted_find(const uint64_t *keys, int64_t n, uint64_t key)
    void spin_lock(uint32_t *p)
    void spin_unlock(uint32_t *p)
    void team_barrier()
    void count_add(int64_t *p, int64_t n)
    int64_t count_load(const int64_t *p)
    int flag_load(const int *p)
    void flag_store(int *p, int v)
    void prefetch_for_write(const void *p)
    void prefetch_for_read(const void *p)
    uint8_t byte_load(const uint8_t *p)
    void byte_store(uint8_t *p, uint8_t v)
    uint8_t byte_fetch_sub(uint8_t *p, uint8_t v)
    void byte_add(uint8_t *p, uint8_t v)
    uint8_t byte_fetch_or(uint8_t *p, uint8_t v)
    uint8_t byte_fetch_and(uint8_t *p, uint8_t v)
    uint16_t word_load(const uint16_t *p)
    bint word_lower(uint16_t *p, uint16_t v)
    void word_raise(uint16_t *p, uint16_t v)
    void first_error(int *p, int code)

    ctypedef struct Fold:
        uint32_t win_in
        uint32_t lose_in
        int draw

    void fold_start(Fold *f)
    void fold_add(Fold *f, uint16_t record)
    bint fold_fits(const Fold *f)
    uint16_t fold_result(const Fold *f)
    uint32_t fold_score(uint16_t record)
    uint16_t fold_score_record(uint32_t best)

    uint16_t rec_load(const uint16_t *p)
    void rec_store(uint16_t *p, uint16_t v)
    bint rec_claim(uint16_t *p, uint16_t v)

    int CONTROL_WORDS
    int CONTROL_FLUSH
    ctypedef struct Control:
        int64_t stop
        int64_t done

    bint ctl_stopped(const Control *c)
    void ctl_add(Control *c, int64_t n)
    void ctl_set(Control *c, int64_t n)


cdef inline Control *control_of(int64_t[::1] words, Control *spare) except NULL:
    """The Control in `words` (16 int64 from solver/kernels.py), or `spare` zeroed when None."""
    if words is None:
        spare.stop = 0
        spare.done = 0
        return spare
    if words.shape[0] < CONTROL_WORDS:
        raise ValueError(f"a control block has {CONTROL_WORDS} int64 words, not {words.shape[0]}")
    return <Control *>&words[0]


cdef extern from "sowsolve_kernel.h" nogil:
    int signals_pending "sowsolve_signals_pending" () noexcept


# Kernels that run in the caller's thread (perft) look at Python's pending signals every 16384
# calls (Ctrl-C sets KeyboardInterrupt there); once one is pending, every call returns at once.
cdef struct SignalPoll:
    int64_t calls
    int pending          # 1 once a signal handler raised; its exception is set


cdef inline bint poll_signals(SignalPoll *p) noexcept nogil:
    p.calls += 1
    if (p.calls & 0x3FFF) == 0 and not p.pending:
        p.pending = signals_pending()
    return p.pending


cdef inline int raise_pending() except -1:
    """Hand on the exception that poll_signals left set."""
    return -1


cdef extern from "sowsolve_kernel.h" nogil:
    const char *SOWSOLVE_PLAY_CAPSULE
    enum:
        PLAY_STATE_MAX
        PLAY_MAX_MOVES
        PLAY_FEATURES
        PLAY_WINS_AT_ONCE
    ctypedef struct PlayKernel:
        const void *ctx
        int state_bytes
        int max_moves
        int margin
        int features
        int (*moves)(const void *ctx, const uint8_t *state, uint8_t *children, int16_t *codes,
                     int16_t *gains, int *final) noexcept nogil
        void (*features_of)(const void *ctx, const uint8_t *state, int32_t *f) noexcept nogil
        int (*locate)(const void *ctx, const uint8_t *state, int *tier, uint64_t *where) noexcept nogil
        int (*endless)(const void *ctx, const uint8_t *state) noexcept nogil
        int (*horizon)(const void *ctx, const uint8_t *state, int32_t *f, int *final) noexcept nogil
