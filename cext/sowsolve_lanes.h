/* The vector (AVX-512) paths of the kernels, and whether this CPU can run them.
 *
 * Functions here are compiled with the target attribute, so a module that includes this header
 * builds with the default flags for any CPU; sowsolve_lanes_available() says at run time whether
 * this one has the instructions, and every caller keeps its scalar loop for when it has not (or
 * when a solve is asked to use it, as the tests do to compare the two). */
#ifndef SOWSOLVE_LANES_H
#define SOWSOLVE_LANES_H

#include <stdint.h>
#include "sowsolve_kernel.h"

#if defined(__x86_64__) && defined(__GNUC__) && __SIZEOF_POINTER__ == 8   /* not x32 */
#define SOWSOLVE_LANES 1
#include <immintrin.h>

#define SOWSOLVE_LANES_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,popcnt")))

static inline int sowsolve_lanes_available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")
        && __builtin_cpu_supports("popcnt");
}

/* The record of each child, as the sweep of retrograde.pyx reads it: at[i] = tables[ct[i]] +
 * ci[i] for i < n, 8 children a step, each asked for (prefetch) as soon as it is formed.
 * Returns 0 when every child lies in one of the tiers tier - 7 .. tier and inside its array
 * (lengths[ct], 0 for a tier not loaded); otherwise nonzero, and the caller works the children
 * out one by one (which also tells the errors apart).  `tables` and `lengths` have at least
 * tier + 1 entries, tier >= 7; ct, ci and at have room for n rounded up to a multiple of 8
 * (entries past n are read and written, never used). */
static inline SOWSOLVE_LANES_TARGET int sowsolve_lanes_records(
    const int *ct, const int64_t *ci, int n, int tier, uint16_t *const *tables,
    const int64_t *lengths, const uint16_t **at)
{
    if (tier < 7)
        return 1;
    const __m512i base = _mm512_loadu_si512((const void *)(tables + tier - 7));
    const __m512i length = _mm512_loadu_si512((const void *)(lengths + tier - 7));
    const __m256i lowest = _mm256_set1_epi32(tier - 7), seven = _mm256_set1_epi32(7);
    int i, j;
    for (i = 0; i < n; i += 8) {
        __mmask8 k = n - i >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (n - i)) - 1);
        __m256i rel = _mm256_sub_epi32(_mm256_loadu_si256((const __m256i *)(ct + i)), lowest);
        if (_mm256_mask_cmpgt_epu32_mask(k, rel, seven))
            return 1;
        __m512i rel64 = _mm512_cvtepu32_epi64(rel);
        __m512i index = _mm512_loadu_si512((const void *)(ci + i));
        if (_mm512_mask_cmpge_epu64_mask(k, index, _mm512_permutexvar_epi64(rel64, length)))
            return 1;
        _mm512_storeu_si512((void *)(at + i), _mm512_add_epi64(_mm512_permutexvar_epi64(rel64, base),
                                                               _mm512_add_epi64(index, index)));
        for (j = i; j < n && j < i + 8; j++)
            __builtin_prefetch(at[j], 0, 3);
    }
    return 0;
}

/* The best fold_score (sowsolve_kernel.h) of the records at at[0..n-1], 16 a step; -1 when one
 * of them is 0 (unsolved: the caller's scalar loop tells which error that is).  `at` has room
 * for n rounded up to a multiple of 16 (entries past n are read, never used).  Each record is
 * read as the aligned 4-byte word that holds it: such a word never crosses a page, so it reads
 * nothing a 2-byte load of the record would not make readable. */
static inline SOWSOLVE_LANES_TARGET int64_t sowsolve_lanes_fold(const uint16_t *const *at, int n)
{
    const __m512i zero = _mm512_setzero_si512();
    const __m512i word = _mm512_set1_epi64(~(int64_t)3), half = _mm512_set1_epi64(16);
    const __m512i low16 = _mm512_set1_epi32(0xFFFF), outcome_mask = _mm512_set1_epi32(REC_OUTCOME_MASK);
    __m512i best = zero;
    int i;
    for (i = 0; i < n; i += 16) {
        __mmask16 k = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
        __mmask8 klo = (__mmask8)(k & 0xFF), khi = (__mmask8)(k >> 8);
        __m512i a_lo = _mm512_loadu_si512((const void *)(at + i));
        __m512i a_hi = _mm512_loadu_si512((const void *)(at + i + 8));
        __m256i w_lo = _mm512_mask_i64gather_epi32(_mm256_setzero_si256(), klo,
                                                   _mm512_and_si512(a_lo, word), (const void *)0, 1);
        __m256i w_hi = _mm512_mask_i64gather_epi32(_mm256_setzero_si256(), khi,
                                                   _mm512_and_si512(a_hi, word), (const void *)0, 1);
        /* the record is the word's low half at an address = 0 mod 4, its high half at 2 mod 4 */
        __m256i s_lo = _mm512_cvtepi64_epi32(_mm512_and_si512(_mm512_slli_epi64(a_lo, 3), half));
        __m256i s_hi = _mm512_cvtepi64_epi32(_mm512_and_si512(_mm512_slli_epi64(a_hi, 3), half));
        __m512i words = _mm512_inserti64x4(_mm512_castsi256_si512(w_lo), w_hi, 1);
        __m512i shift = _mm512_inserti64x4(_mm512_castsi256_si512(s_lo), s_hi, 1);
        __m512i rec = _mm512_and_si512(_mm512_srlv_epi32(words, shift), low16);
        if (_mm512_mask_cmpeq_epi32_mask(k, rec, zero))
            return -1;
        /* fold_score, lane by lane */
        __m512i outcome = _mm512_and_si512(rec, outcome_mask);
        __m512i rem = _mm512_srli_epi32(rec, REC_OUTCOME_BITS);
        __m512i score = _mm512_maskz_mov_epi32(
            _mm512_cmpeq_epi32_mask(outcome, _mm512_set1_epi32(REC_WIN)), rem);
        score = _mm512_mask_mov_epi32(score, _mm512_cmpeq_epi32_mask(outcome, _mm512_set1_epi32(REC_DRAW)),
                                      _mm512_set1_epi32(1 << 16));
        score = _mm512_mask_mov_epi32(score, _mm512_cmpeq_epi32_mask(outcome, _mm512_set1_epi32(REC_LOSS)),
                                      _mm512_or_si512(_mm512_set1_epi32(2 << 16),
                                                      _mm512_sub_epi32(_mm512_set1_epi32(0xFFFF), rem)));
        best = _mm512_mask_max_epu32(best, k, best, score);
    }
    return (int64_t)_mm512_reduce_max_epu32(best);
}

#else
#define SOWSOLVE_LANES 0
#define SOWSOLVE_LANES_TARGET
static int sowsolve_lanes_available(void) { return 0; }
static int sowsolve_lanes_records(
    const int *ct, const int64_t *ci, int n, int tier, uint16_t *const *tables,
    const int64_t *lengths, const uint16_t **at)
{
    return 1;
}
static int64_t sowsolve_lanes_fold(const uint16_t *const *at, int n) { return -1; }
#endif

#endif
