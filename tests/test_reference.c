/* test_reference.c: the CPU reference every stage is checked with (step00_cpu/reduce.c) and the
 * input patterns (common/input.c), CPU only.
 *
 * reduce_cpu is the plain left-to-right sum from the identity. In the int32 build it wraps modulo
 * 2^32 (-fwrapv), as the GPU's adds do, so every input has one exact sum; in the float build
 * (-DREDUCE_FLOAT) it is exact on small integers and rounds after each addition otherwise. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test_util.h"

/* ------------------------------------------------------------------------------------------ */
/* reduce_cpu                                                                                 */

Test(reference, empty_is_the_identity)
{
    elem_t sum = reduce_cpu(NULL, 0); /* n = 0 reads nothing */
    cr_expect(sum == IDENTITY, "sum of nothing = %.17g", (double)sum);
    cr_expect(sum == 0);
    elem_t one[] = {7};
    cr_expect(reduce_cpu(one, 0) == 0, "n = 0 read the array");
}

Test(reference, one_element)
{
    elem_t a[] = {5};
    cr_expect(reduce_cpu(a, 1) == 5);
    elem_t b[] = {-3};
    cr_expect(reduce_cpu(b, 1) == -3);
}

/* Only the first n elements count. */
Test(reference, reads_exactly_n)
{
    elem_t a[] = {1, 2, 3, 100};
    cr_expect(reduce_cpu(a, 3) == 6);
    cr_expect(reduce_cpu(a, 4) == 106);
}

/* 1 + 2 + ... + 1000 = 500500: exact in both builds (every partial sum is below 2^24). */
Test(reference, one_to_thousand)
{
    elem_t a[1000];
    for (int i = 0; i < 1000; ++i)
        a[i] = (elem_t)(i + 1);
    elem_t sum = reduce_cpu(a, 1000);
    cr_expect(sum == 500500, "sum = %.17g", (double)sum);
}

/* Padding with the identity changes no sum: what the harness relies on for single-block stages. */
Test(reference, identity_padding)
{
    elem_t a[64];
    for (int i = 0; i < 64; ++i)
        a[i] = i < 37 ? (elem_t)(i % 7 - 3) : IDENTITY;
    cr_expect(reduce_cpu(a, 64) == reduce_cpu(a, 37));
}

/* +k, -k pairs cancel. */
Test(reference, alternating_pairs_cancel)
{
    elem_t a[2000];
    for (int k = 0; k < 1000; ++k) {
        a[2 * k] = (elem_t)(k + 1);
        a[2 * k + 1] = (elem_t) - (k + 1);
    }
    elem_t sum = reduce_cpu(a, 2000);
    cr_expect(sum == 0, "sum = %.17g", (double)sum);
    cr_expect(reduce_cpu(a, 1999) == 1000); /* the last -1000 dropped */
}

#ifndef REDUCE_FLOAT
/* int32 wraps modulo 2^32, exactly as the GPU's adds do. */

Test(reference, closed_form_wraps)
{
    const size_t n = 100000;
    elem_t *a = malloc(n * sizeof *a);
    cr_assert_not_null(a);
    for (size_t i = 0; i < n; ++i)
        a[i] = (elem_t)(i + 1);
    uint64_t exact = (uint64_t)n * (n + 1) / 2; /* 5000050000: more than 2^32 */
    cr_assert_eq(exact, 5000050000ull);
    int32_t expected = (int32_t)(uint32_t)(exact % ((uint64_t)1 << 32)); /* 705082704 */
    elem_t sum = reduce_cpu(a, n);
    cr_expect_eq(sum, expected, "sum = %d, expected %d", sum, expected);
    cr_expect_eq(expected, 705082704);
    free(a);
}

Test(reference, max_plus_one_wraps_to_min)
{
    elem_t a[] = {INT32_MAX, 1};
    cr_expect_eq(reduce_cpu(a, 2), INT32_MIN);
}

Test(reference, min_minus_one_wraps_to_max)
{
    elem_t a[] = {INT32_MIN, -1};
    cr_expect_eq(reduce_cpu(a, 2), INT32_MAX);
}

/* Wrapping is associative: a sum that overflows on the way still comes back exactly. */
Test(reference, wraps_back)
{
    elem_t a[] = {INT32_MAX, INT32_MAX, 5, -INT32_MAX, -INT32_MAX};
    cr_expect_eq(reduce_cpu(a, 5), 5);
    elem_t b[] = {INT32_MIN, INT32_MIN}; /* 2^32 = 0 (mod 2^32) */
    cr_expect_eq(reduce_cpu(b, 2), 0);
}

/* The reference against an independent wrapping sum over uint32, on full-range input. */
Test(reference, full_range_matches_modular_sum)
{
    const size_t n = 10007;
    elem_t *a = malloc(n * sizeof *a);
    cr_assert_not_null(a);
    input_fill(a, n, PATTERN_FULL_RANGE, 99);
    uint32_t want = 0;
    for (size_t i = 0; i < n; ++i)
        want += (uint32_t)a[i];
    cr_expect_eq(reduce_cpu(a, n), (int32_t)want);
    free(a);
}
#else
/* float32: exact on small integers and on sums of powers of two; otherwise rounded after each
 * addition, left to right. */

Test(reference, float_small_integers_exact)
{
    elem_t a[] = {1.0f, -2.0f, 3.0f, 4.0f, -5.0f, 6.0f};
    cr_expect_float_eq(reduce_cpu(a, 6), 7.0f, 0.0f);
    cr_expect(reduce_cpu(a, 6) == 7.0f);
}

Test(reference, float_fractions)
{
    elem_t a[] = {0.5f, 0.25f};
    cr_expect(reduce_cpu(a, 2) == 0.75f);
    elem_t b[] = {0.5f, 0.25f, 0.125f, -1.0f};
    cr_expect(reduce_cpu(b, 4) == -0.125f);
}

/* Left to right: 2^24 + 1 rounds back to 2^24 (ties to even) each time, so the two ones are lost;
 * summed first, they survive. The order of additions matters in float. */
Test(reference, float_order_matters)
{
    elem_t big_first[] = {16777216.0f, 1.0f, 1.0f};
    elem_t big_last[] = {1.0f, 1.0f, 16777216.0f};
    cr_expect(reduce_cpu(big_first, 3) == 16777216.0f, "sum = %.9g",
              (double)reduce_cpu(big_first, 3));
    cr_expect(reduce_cpu(big_last, 3) == 16777218.0f, "sum = %.9g",
              (double)reduce_cpu(big_last, 3));
}
#endif

/* ------------------------------------------------------------------------------------------ */
/* input_fill                                                                                 */

static const enum pattern PATTERNS[] = {PATTERN_SMALL, PATTERN_FULL_RANGE, PATTERN_ALTERNATING,
                                        PATTERN_QUARTERS};
#define N_FILL 10000

Test(reference, fill_same_seed_same_array)
{
    static elem_t a[N_FILL], b[N_FILL];
    for (size_t p = 0; p < COUNT(PATTERNS); ++p) {
        memset(a, 0x11, sizeof a);
        memset(b, 0x22, sizeof b);
        input_fill(a, N_FILL, PATTERNS[p], 12345);
        input_fill(b, N_FILL, PATTERNS[p], 12345);
        cr_expect(memcmp(a, b, sizeof a) == 0, "pattern %d: same seed, different arrays",
                  (int)PATTERNS[p]);
    }
}

Test(reference, fill_different_seeds_differ)
{
    static elem_t a[N_FILL], b[N_FILL];
    for (size_t p = 0; p < COUNT(PATTERNS); ++p) {
        input_fill(a, N_FILL, PATTERNS[p], 1);
        input_fill(b, N_FILL, PATTERNS[p], 2);
        cr_expect(memcmp(a, b, sizeof a) != 0, "pattern %d: seeds 1 and 2 gave the same array",
                  (int)PATTERNS[p]);
        input_fill(b, N_FILL, PATTERNS[p], UINT64_MAX);
        cr_expect(memcmp(a, b, sizeof a) != 0, "pattern %d: seeds 1 and 2^64-1 agree",
                  (int)PATTERNS[p]);
    }
}

/* n = 0 writes nothing. */
Test(reference, fill_empty)
{
    for (size_t p = 0; p < COUNT(PATTERNS); ++p)
        input_fill(NULL, 0, PATTERNS[p], 1);
    elem_t a[1] = {42};
    input_fill(a, 0, PATTERN_FULL_RANGE, 1);
    cr_expect(a[0] == 42);
}

Test(reference, fill_small_range)
{
    static elem_t a[N_FILL];
    input_fill(a, N_FILL, PATTERN_SMALL, 1);
    int seen[33] = {0};
    int neg = 0, pos = 0;
    for (size_t i = 0; i < N_FILL; ++i) {
        cr_assert(a[i] >= -16 && a[i] <= 16, "a[%zu] = %.17g is outside [-16, 16]", i,
                  (double)a[i]);
        cr_assert(a[i] == (elem_t)(int)a[i], "a[%zu] = %.17g is not whole", i, (double)a[i]);
        seen[(int)a[i] + 16]++;
        neg += a[i] < 0;
        pos += a[i] > 0;
    }
    cr_expect_gt(neg, 0, "no negative value");
    cr_expect_gt(pos, 0, "no positive value");
    cr_expect_lt(seen[17], N_FILL, "all ones"); /* "never all ones" */
    int distinct = 0;
    for (int v = 0; v < 33; ++v)
        distinct += seen[v] > 0;
    cr_expect_eq(distinct, 33, "only %d of the 33 values in [-16, 16] appear", distinct);
    /* Roughly uniform: each value about N_FILL / 33 = 303 times. */
    for (int v = 0; v < 33; ++v)
        cr_expect(seen[v] > 150 && seen[v] < 500, "%d appears %d times", v - 16, seen[v]);
}

Test(reference, fill_full_range)
{
    static elem_t a[N_FILL];
    input_fill(a, N_FILL, PATTERN_FULL_RANGE, 1);
    int neg = 0, pos = 0, big = 0;
    for (size_t i = 0; i < N_FILL; ++i) {
        neg += a[i] < 0;
        pos += a[i] > 0;
#ifndef REDUCE_FLOAT
        big += llabs((long long)a[i]) > (1ll << 30);
#else
        cr_assert(isfinite(a[i]), "a[%zu] = %g", i, (double)a[i]);
        big += fabs((double)a[i]) > 0x1p20;
#endif
    }
    cr_expect_gt(neg, N_FILL / 4, "%d negative values", neg);
    cr_expect_gt(pos, N_FILL / 4, "%d positive values", pos);
    cr_expect_gt(big, N_FILL / 4, "only %d values of large magnitude", big);
}

Test(reference, fill_alternating)
{
    static elem_t a[N_FILL];
    input_fill(a, N_FILL, PATTERN_ALTERNATING, 1);
    int distinct_magnitudes = 0;
    for (size_t i = 0; i < N_FILL; ++i) {
        cr_assert(a[i] != 0, "a[%zu] = 0", i);
        if (i % 2 == 0)
            cr_assert(a[i] > 0, "a[%zu] = %.17g should be positive", i, (double)a[i]);
        else
            cr_assert(a[i] < 0, "a[%zu] = %.17g should be negative", i, (double)a[i]);
        if (i > 0 && fabs((double)a[i]) != fabs((double)a[i - 1]))
            ++distinct_magnitudes;
    }
    cr_expect_gt(distinct_magnitudes, N_FILL / 2, "the magnitudes barely vary");
}

/* Quarters (float32; +-1 in int32) of either sign, on every element up to n = 2^24 and on every
 * k-th past it, so that at most 2^24 are not 0: in float every partial sum is then exact, and the
 * loop forwards and backwards gives the double sum's bits. */
Test(reference, fill_quarters)
{
#ifdef REDUCE_FLOAT
    const elem_t unit = 0.25f;
#else
    const elem_t unit = 1;
#endif
    const size_t ns[] = {N_FILL, (1u << 24) + 3, 3 * (1u << 24) + 1}, every[] = {1, 2, 4};
    for (size_t c = 0; c < COUNT(ns); ++c) {
        size_t n = ns[c], nonzero = 0, neg = 0;
        elem_t *a = malloc(n * sizeof *a);
        cr_assert_not_null(a);
        input_fill(a, n, PATTERN_QUARTERS, 3);
        for (size_t i = 0; i < n; ++i) {
            cr_assert(i % every[c] ? a[i] == 0 : a[i] == unit || a[i] == -unit,
                      "n = %zu: a[%zu] = %.17g", n, i, (double)a[i]);
            nonzero += a[i] != 0;
            neg += a[i] < 0;
        }
        cr_expect(nonzero <= (1u << 24) && neg > nonzero / 3 && neg < 2 * nonzero / 3,
                  "n = %zu: %zu not 0, %zu negative", n, nonzero, neg);
        elem_t backwards = IDENTITY;
        for (size_t i = n; i-- > 0;)
            backwards += a[i];
        cr_expect((double)reduce_cpu(a, n) == reduce_double(a, n) &&
                      (double)backwards == reduce_double(a, n),
                  "n = %zu: loop %.9g, backwards %.9g, double %.17g", n, (double)reduce_cpu(a, n),
                  (double)backwards, reduce_double(a, n));
        free(a);
    }
}

/* sort_median: the middle time, or the mean of the two middle ones; the times end up sorted. */
Test(reference, sort_median)
{
    double one[] = {2.5}, odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2};
    cr_expect_eq(sort_median(one, 1), 2.5);
    cr_expect_eq(sort_median(odd, 3), 2.0);
    cr_expect(odd[0] == 1 && odd[2] == 3, "not sorted: %g %g %g", odd[0], odd[1], odd[2]);
    cr_expect_eq(sort_median(even, 4), 2.5);
    cr_expect(even[0] == 1 && even[3] == 4, "not sorted: %g .. %g", even[0], even[3]);
}
