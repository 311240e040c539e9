# Declarations of the kernel layer (sowsolve_kernel.h), shared by game kernels and solvers.
from libc.stdint cimport int64_t, uint16_t, uint32_t, uint64_t

cdef extern from "sowsolve_kernel.h" nogil:
    const char *SOWSOLVE_KERNEL_CAPSULE
    int SOWSOLVE_MAX_CHILDREN
    unsigned REC_UNSOLVED, REC_LOSS, REC_DRAW, REC_WIN, REC_MAX_REMOTENESS
    unsigned REC_OUTCOME(unsigned r)
    unsigned REC_REMOTENESS(unsigned r)
    uint16_t REC_MAKE(unsigned outcome, unsigned rem)

    ctypedef int (*expand_fn)(const void *ctx, int tier, int64_t index, int *child_tier,
                              int64_t *child_index, uint16_t *final_record) noexcept nogil

    ctypedef int (*expand_key_fn)(const void *ctx, uint64_t key, uint64_t *child_key,
                                  uint16_t *final_record) noexcept nogil

    ctypedef struct GameKernel:
        const void *ctx
        int max_children
        expand_fn expand
        expand_key_fn expand_key

    ctypedef struct Fold:
        uint32_t win_in
        uint32_t lose_in
        int draw

    void fold_start(Fold *f)
    void fold_add(Fold *f, uint16_t record)
    bint fold_fits(const Fold *f)
    uint16_t fold_result(const Fold *f)

    uint16_t rec_load(const uint16_t *p)
    void rec_store(uint16_t *p, uint16_t v)
