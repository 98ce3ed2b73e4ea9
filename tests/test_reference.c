/* test_reference.c: the CPU reference every stage is checked with (step00_cpu/reduce.c), the input
 * patterns (common/input.c) and the median (common/median.c), CPU only.
 *
 * reduce_cpu is the plain left-to-right sum from the identity. In the int32 build it wraps modulo
 * 2^32 (-fwrapv), as the GPU's adds do, so every input has one exact sum; in the float build
 * (-DREDUCE_FLOAT) it is exact on small integers and rounds after each addition otherwise. */
#include <math.h>

#include "test_util.h"

/* Sums whose value is known: the first n of a row's elements. */
static const struct {
    elem_t x[6];
    size_t n;
    elem_t sum;
} SUMS[] = {
    {{7}, 0, 0}, /* n = 0: the identity, and the array is not read */
    {{5}, 1, 5},
    {{-3}, 1, -3},
    {{1, 2, 3, 100}, 3, 6}, /* only the first n count */
    {{1, 2, 3, 100}, 4, 106},
#ifndef REDUCE_FLOAT /* int32 wraps modulo 2^32, as the GPU's adds do, and comes back exactly */
    {{INT32_MAX, 1}, 2, INT32_MIN},
    {{INT32_MIN, -1}, 2, INT32_MAX},
    {{INT32_MAX, INT32_MAX, 5, -INT32_MAX, -INT32_MAX}, 5, 5},
    {{INT32_MIN, INT32_MIN}, 2, 0}, /* 2^32 = 0 (mod 2^32) */
#else /* float: exact on small integers and on sums of powers of two */
    {{1, -2, 3, 4, -5, 6}, 6, 7},
    {{0.5f, 0.25f}, 2, 0.75f},
    {{0.5f, 0.25f, 0.125f, -1}, 4, -0.125f},
    /* rounded after each addition, left to right: 2^24 + 1 rounds back to 2^24 (a tie, to even),
     * so ones after 2^24 are lost; summed first, they survive. The order matters in float. */
    {{0x1p24f, 1, 1}, 3, 0x1p24f},
    {{1, 1, 0x1p24f}, 3, 0x1p24f + 2},
#endif
};

/* Those, and longer sums built here: 1 + 2 + ... + n = n (n + 1) / 2, exact in both builds at
 * n = 1000 (every partial sum is below 2^24), and in int32 5000050000 - 2^32 at n = 100000; +k,
 * -k pairs that cancel; padding with the identity, which changes no sum (the harness relies on
 * it for single-block stages); int32 full-range input against a wrapping sum over uint32. */
Test(reference, sums)
{
    static elem_t a[100000];
    elem_t sum = reduce_cpu(NULL, 0); /* n = 0 reads nothing */
    cr_expect(sum == IDENTITY && sum == 0, "sum of nothing = %.17g", (double)sum);
    for (size_t i = 0; i < COUNT(SUMS); ++i) {
        sum = reduce_cpu(SUMS[i].x, SUMS[i].n);
        cr_expect(sum == SUMS[i].sum, "row %zu: sum %.17g, not %.17g", i, (double)sum,
                  (double)SUMS[i].sum);
    }
    for (size_t i = 0; i < COUNT(a); ++i)
        a[i] = (elem_t)(i + 1);
    cr_expect(reduce_cpu(a, 1000) == 500500, "sum = %.17g", (double)reduce_cpu(a, 1000));
#ifndef REDUCE_FLOAT
    cr_expect_eq(reduce_cpu(a, 100000), 705082704);
    input_fill(a, 10007, PATTERN_FULL_RANGE, 99);
    uint32_t want = 0;
    for (size_t i = 0; i < 10007; ++i)
        want += (uint32_t)a[i];
    cr_expect_eq(reduce_cpu(a, 10007), (int32_t)want);
#endif
    for (int k = 0; k < 1000; ++k) {
        a[2 * k] = (elem_t)(k + 1);
        a[2 * k + 1] = (elem_t) - (k + 1);
    }
    cr_expect(reduce_cpu(a, 2000) == 0, "sum = %.17g", (double)reduce_cpu(a, 2000));
    cr_expect(reduce_cpu(a, 1999) == 1000); /* the last -1000 dropped */
    for (int i = 0; i < 64; ++i)
        a[i] = i < 37 ? (elem_t)(i % 7 - 3) : IDENTITY;
    cr_expect(reduce_cpu(a, 64) == reduce_cpu(a, 37));
}

static const enum pattern PATTERNS[] = {PATTERN_SMALL, PATTERN_FULL_RANGE, PATTERN_ALTERNATING,
                                        PATTERN_QUARTERS};
#define N_FILL 10000

/* input_fill: the same array for the same seed, another for another seed; n = 0 writes nothing. */
Test(reference, fill_follows_the_seed)
{
    static elem_t a[N_FILL], b[N_FILL];
    for (size_t p = 0; p < COUNT(PATTERNS); ++p) {
        memset(a, 0x11, sizeof a);
        memset(b, 0x22, sizeof b);
        input_fill(a, N_FILL, PATTERNS[p], 1);
        input_fill(b, N_FILL, PATTERNS[p], 1);
        input_fill(NULL, 0, PATTERNS[p], 1);
        input_fill(b, 0, PATTERNS[p], 2);
        cr_expect(!memcmp(a, b, sizeof a), "pattern %d: same seed, different arrays", PATTERNS[p]);
        input_fill(b, N_FILL, PATTERNS[p], 2);
        cr_expect(memcmp(a, b, sizeof a), "pattern %d: seeds 1 and 2 agree", PATTERNS[p]);
        input_fill(b, N_FILL, PATTERNS[p], UINT64_MAX);
        cr_expect(memcmp(a, b, sizeof a), "pattern %d: seeds 1 and 2^64-1 agree", PATTERNS[p]);
    }
}

/* What each pattern promises. PATTERN_SMALL: whole numbers in [-16, 16], each about N_FILL / 33 =
 * 303 times (so both signs, and never all ones). PATTERN_FULL_RANGE: a quarter or more each of
 * negative, positive and large values (int32: past 2^30; float: past 2^20, finite).
 * PATTERN_ALTERNATING: +v, -w, +x, ..., never 0, magnitudes that vary. */
Test(reference, fill_patterns)
{
    static elem_t a[N_FILL];
    int seen[33] = {0}, neg = 0, pos = 0, big = 0, distinct_magnitudes = 0;
    input_fill(a, N_FILL, PATTERN_SMALL, 1);
    for (size_t i = 0; i < N_FILL; ++i) {
        cr_assert(a[i] >= -16 && a[i] <= 16 && a[i] == (elem_t)(int)a[i], "a[%zu] = %.17g", i,
                  (double)a[i]);
        seen[(int)a[i] + 16]++;
    }
    for (int v = 0; v < 33; ++v)
        cr_expect(seen[v] > 150 && seen[v] < 500, "%d appears %d times", v - 16, seen[v]);
    input_fill(a, N_FILL, PATTERN_FULL_RANGE, 1);
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
    cr_expect(neg > N_FILL / 4 && pos > N_FILL / 4 && big > N_FILL / 4,
              "full range: %d negative, %d positive, %d of large magnitude", neg, pos, big);
    input_fill(a, N_FILL, PATTERN_ALTERNATING, 1);
    for (size_t i = 0; i < N_FILL; ++i) {
        cr_assert(i % 2 ? a[i] < 0 : a[i] > 0, "a[%zu] = %.17g", i, (double)a[i]);
        distinct_magnitudes += i > 0 && fabs((double)a[i]) != fabs((double)a[i - 1]);
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
        elem_t *a = malloc(n * sizeof *a), backwards = IDENTITY;
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
        for (size_t i = n; i-- > 0;)
            backwards += a[i];
        double exact = reduce_double(a, n);
        cr_expect((double)reduce_cpu(a, n) == exact && (double)backwards == exact,
                  "n = %zu: loop %.9g, backwards %.9g, double %.17g", n, (double)reduce_cpu(a, n),
                  (double)backwards, exact);
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
