/* The children of one Diffusion position computed in the 16 lanes of AVX-512 registers, one
 * lane a pit: what diffusion.pyx's expand_codes does child by child, for every pit at once.
 *
 * Why: a sweep of the standard board spends about half its time computing children (some 40
 * instructions each, the compiler spilling its locals); the same arithmetic done as 8
 * gathers and a few vector operations per position costs a fraction of that.  Built with the
 * target attribute, so the module still compiles for (and runs on) any x86-64 or other CPU:
 * sowsolve_lanes_available() says at run time whether this CPU has the instructions, and the
 * kernel falls back to the scalar loop when it does not.
 *
 * The moves are read from the kernel's packed copy of its move table (lanes_move of
 * diffusion.pyx, 64 bits an entry, below); the kernel builds it, and uses this path, only when
 * every move fits the packing. */
#ifndef SOWSOLVE_DIFFUSION_LANES_H
#define SOWSOLVE_DIFFUSION_LANES_H

#include <stdint.h>
#include "sowsolve_lanes.h"

#if SOWSOLVE_LANES
#define DIFFUSION_LANES_TARGET SOWSOLVE_LANES_TARGET

/* Children of the position whose halves' move bytes are m0[0..15], m1[0..15] (pit order),
 * `nonzero` the mask of its non-empty pits (the moves), in pit order as the scalar loop gives
 * them: child_tier[i], child_index[i] for i < the count returned.  Both arrays must have room
 * for 16 entries (the vectors are stored whole).
 *
 * `entries[p * columns + column]` is the move of pit p with that column byte, packed in 64
 * bits: low word dt0 (24 bits, signed) | ds1 << 24 (the change of half 0's stones, signed),
 * high word dt1 (24 bits, signed) | lost << 24.  From them, as diffusion.pyx's MoveDelta has
 * them, doffset = ds1 - lost * stride and dcount = -(lost + ds1).  `row` is the offsets row of
 * (tier, stones of half 0), `window` the 16 entries of hcount[1] from (stones of half 1) +
 * dmin on (every dcount lies in dmin .. dmin + 15, the kernel checks), t0 and t1 the turned
 * codes of the halves. */
static inline DIFFUSION_LANES_TARGET int diffusion_lanes_children(
    const uint8_t *m0, const uint8_t *m1, uint32_t nonzero, const int64_t *entries, int columns,
    const int64_t *row, int stride, const int32_t *window, int dmin,
    const int32_t *rank0, const int32_t *rank1, int32_t t0, int32_t t1, int tier,
    int *child_tier, int64_t *child_index)
{
    const __mmask16 k = (__mmask16)nonzero;
    const __mmask8 klo = (__mmask8)(nonzero & 0xFF), khi = (__mmask8)(nonzero >> 8);
    const __m512i zero = _mm512_setzero_si512();
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    __m128i bytes = _mm_or_si128(_mm_loadu_si128((const __m128i *)m0),
                                 _mm_loadu_si128((const __m128i *)m1));
    __m512i entry = _mm512_add_epi32(_mm512_mullo_epi32(lane, _mm512_set1_epi32(columns)),
                                     _mm512_cvtepu8_epi32(bytes));
    __m512i q_lo = _mm512_mask_i32gather_epi64(zero, klo, _mm512_castsi512_si256(entry), entries, 8);
    __m512i q_hi = _mm512_mask_i32gather_epi64(zero, khi, _mm512_extracti64x4_epi64(entry, 1),
                                               entries, 8);
    __m512i low = _mm512_permutex2var_epi32(q_lo, even, q_hi);
    __m512i high = _mm512_permutex2var_epi32(q_lo, odd, q_hi);
    __m512i dt0 = _mm512_srai_epi32(_mm512_slli_epi32(low, 8), 8);
    __m512i ds1 = _mm512_srai_epi32(low, 24);
    __m512i dt1 = _mm512_srai_epi32(_mm512_slli_epi32(high, 8), 8);
    __m512i lost = _mm512_srli_epi32(high, 24);
    __m512i doffset = _mm512_sub_epi32(ds1, _mm512_mullo_epi32(lost, _mm512_set1_epi32(stride)));
    /* hcount[1][stones of half 1 + dcount], dcount = -(lost + ds1): from the window */
    __m512i n1 = _mm512_permutexvar_epi32(
        _mm512_sub_epi32(_mm512_set1_epi32(-dmin), _mm512_add_epi32(lost, ds1)),
        _mm512_loadu_si512((const void *)window));
    __m512i r0 = _mm512_mask_i32gather_epi32(zero, k, _mm512_add_epi32(dt0, _mm512_set1_epi32(t0)),
                                             rank0, 4);
    __m512i r1 = _mm512_mask_i32gather_epi32(zero, k, _mm512_add_epi32(dt1, _mm512_set1_epi32(t1)),
                                             rank1, 4);
    __m512i off_lo = _mm512_mask_i32gather_epi64(zero, klo, _mm512_castsi512_si256(doffset), row, 8);
    __m512i off_hi = _mm512_mask_i32gather_epi64(zero, khi, _mm512_extracti64x4_epi64(doffset, 1),
                                                 row, 8);
    /* offsets + rank0 * count (both below 2^31: unsigned 32 x 32 -> 64) + rank1 */
    __m512i idx_lo = _mm512_add_epi64(
        _mm512_add_epi64(off_lo, _mm512_mul_epu32(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(r0)),
                                                  _mm512_cvtepu32_epi64(_mm512_castsi512_si256(n1)))),
        _mm512_cvtepu32_epi64(_mm512_castsi512_si256(r1)));
    __m512i idx_hi = _mm512_add_epi64(
        _mm512_add_epi64(off_hi, _mm512_mul_epu32(_mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(r0, 1)),
                                                  _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(n1, 1)))),
        _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(r1, 1)));
    __m512i ct = _mm512_sub_epi32(_mm512_set1_epi32(tier), lost);
    /* the children in pit order, packed: the first nlo from the low half's lanes, then the high
     * half's; written as two whole vectors that do not overlap (a reader's loads of 8 then
     * forward from one store each) */
    int nlo = __builtin_popcount(klo);
    __m512i first = _mm512_maskz_compress_epi64(klo, idx_lo), rest = _mm512_maskz_compress_epi64(khi, idx_hi);
    const __m512i q = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    __m512i shift = _mm512_set1_epi64(8 - nlo);
    __m512i pick = _mm512_mask_add_epi64(q, _mm512_cmpge_epi64_mask(q, _mm512_set1_epi64(nlo)), q, shift);
    _mm512_storeu_si512((void *)child_tier, _mm512_maskz_compress_epi32(k, ct));
    _mm512_storeu_si512((void *)child_index, _mm512_permutex2var_epi64(first, pick, rest));
    _mm512_storeu_si512((void *)(child_index + 8),
                        _mm512_permutexvar_epi64(_mm512_add_epi64(q, shift), rest));
    return __builtin_popcount(nonzero & 0xFFFF);
}

#else
static int diffusion_lanes_children(
    const uint8_t *m0, const uint8_t *m1, uint32_t nonzero, const int64_t *entries, int columns,
    const int64_t *row, int stride, const int32_t *window, int dmin,
    const int32_t *rank0, const int32_t *rank1, int32_t t0, int32_t t1, int tier,
    int *child_tier, int64_t *child_index)
{
    return -1;
}
#endif

#endif
