/* test_tolerance.c: the float32 error bound of common/tolerance.c, on the CPU (both builds).
 *
 * The GPU tests hold every stage's float sum to float_sum_bound(n, n - 1, sum |x_i|), the bound of
 * any order; make accuracy to float_sum_bound(n, d, sum |x_i|) with the d of the stage's own order
 * (measure_depth; the counting type has its own tests in test_depth.cc).
 * Here the bound itself: never too small, for sums in orders built here with no reference to any
 * stage (a left-to-right chain, a balanced pairwise tree, random binary trees), each counting d
 * as it goes; and sharp enough to mean something: a loop that loses every addition sits right
 * at it, and it adds next to nothing to Higham's gamma_d * sum |x_i|. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test_util.h"

static uint64_t rng_state = 12345;
static uint64_t next_random(void)
{
    return splitmix64(&rng_state);
}

/* A partial sum: its float value and the most rounded additions any of its elements has passed
 * through (an element: 0). */
struct node {
    float v;
    size_t depth;
};

static struct node add(struct node a, struct node b)
{
    return (struct node){a.v + b.v, 1 + (a.depth > b.depth ? a.depth : b.depth)};
}

static struct node leaf(float x)
{
    return (struct node){x, 0};
}

/* ((x0 + x1) + x2) + ...: the sequential loop's order. */
static struct node chain(const float *x, size_t n)
{
    struct node sum = leaf(x[0]);
    for (size_t i = 1; i < n; ++i)
        sum = add(sum, leaf(x[i]));
    return sum;
}

/* The two halves' sums, added: a balanced tree. */
static struct node pairwise(const float *x, size_t n)
{
    if (n == 1)
        return leaf(x[0]);
    return add(pairwise(x, n / 2), pairwise(x + n / 2, n - n / 2));
}

/* Any two partial sums, added, until one is left: a random binary tree (some element may pass
 * through few additions, another through many). */
static struct node random_tree(const float *x, size_t n)
{
    struct node *pool = malloc(n * sizeof *pool);
    cr_assert_not_null(pool);
    for (size_t i = 0; i < n; ++i)
        pool[i] = leaf(x[i]);
    for (size_t left = n; left > 1; --left) {
        size_t i = next_random() % left, j = next_random() % (left - 1);
        j += j >= i; /* j != i */
        struct node sum = add(pool[i], pool[j]);
        size_t lo = i < j ? i : j, hi = i < j ? j : i;
        pool[lo] = sum;
        pool[hi] = pool[left - 1];
    }
    struct node sum = pool[0];
    free(pool);
    return sum;
}

static size_t ceil_log2(size_t n)
{
    size_t k = 0;
    while (((size_t)1 << k) < n)
        ++k;
    return k;
}

enum values { UNIFORM, WIDE, ONE_BIG };
static const char *VALUES[] = {"uniform", "wide", "one big"};

/* n floats: UNIFORM in [0, 1), 24 bits each; WIDE: both signs, magnitudes from 2^-20 to 2^20;
 * ONE_BIG: 2^24 somewhere among ones, so that a sum holding it rounds every one away. */
static float *make(enum values kind, size_t n)
{
    float *x = malloc(n * sizeof *x);
    cr_assert_not_null(x);
    for (size_t i = 0; i < n; ++i) {
        uint64_t r = next_random();
        if (kind == UNIFORM)
            x[i] = (float)(r >> 40) * 0x1p-24f;
        else if (kind == WIDE)
            x[i] =
                ldexpf((float)(r >> 40) * 0x1p-24f, (int)(r % 41) - 20) * (r & (1u << 20) ? -1 : 1);
        else
            x[i] = 1.0f;
    }
    if (kind == ONE_BIG)
        x[next_random() % n] = 0x1p24f;
    return x;
}

/* reduce_double and sum_abs for floats, in both builds: a double loop, left to right. */
static double ref_sum(const float *x, size_t n, bool absolute)
{
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
        sum += absolute ? fabs((double)x[i]) : (double)x[i];
    return sum;
}

/* The sum's error against the double reference is within the bound of the depth it counted. */
static void check_order(const char *order, struct node s, const float *x, size_t n,
                        enum values kind)
{
    double ref = ref_sum(x, n, false), bound = float_sum_bound(n, s.depth, ref_sum(x, n, true));
    cr_expect(fabs((double)s.v - ref) <= bound,
              "%s, n = %zu, %s values: sum %.9g, reference %.17g, off by %.3g, more than the "
              "bound %.3g of depth %zu",
              order, n, VALUES[kind], (double)s.v, ref, fabs((double)s.v - ref), bound, s.depth);
}

/* One case: n values of one kind, each case from the same seed (its own process starts afresh). */
struct bound_case {
    size_t n;
    enum values kind;
};

ParameterizedTestParameters(tolerance, the_bound_holds_in_any_order)
{
    static const size_t N[] = {1, 2, 3, 17, 1000, 4097, 100003};
    struct bound_case *cases = alloc_params(COUNT(N) * COUNT(VALUES), sizeof *cases);
    size_t count = 0;
    for (size_t i = 0; i < COUNT(N); ++i)
        for (enum values kind = UNIFORM; kind <= ONE_BIG; ++kind)
            cases[count++] = (struct bound_case){N[i], kind};
    return cr_make_param_array(struct bound_case, cases, count, free_params);
}

ParameterizedTest(struct bound_case *c, tolerance, the_bound_holds_in_any_order)
{
    size_t n = c->n;
    float *x = make(c->kind, n);
    struct node s = chain(x, n);
    cr_expect_eq(s.depth, n - 1, "a chain of %zu: depth %zu", n, s.depth);
    check_order("a chain", s, x, n, c->kind);
    s = pairwise(x, n);
    cr_expect_eq(s.depth, ceil_log2(n), "a balanced tree of %zu: depth %zu", n, s.depth);
    check_order("a balanced tree", s, x, n, c->kind);
    for (int t = 0; t < 5; ++t) {
        s = random_tree(x, n);
        cr_expect(ceil_log2(n) <= s.depth && s.depth <= n - 1, "a random tree of %zu: depth %zu", n,
                  s.depth);
        check_order("a random tree", s, x, n, c->kind);
    }
    free(x);
}

/* The sequential loop's bound is sharp: 2^24 then m ones. Each 2^24 + 1 rounds back to 2^24
 * (a tie, to even), so all m ones are lost: the error is m, and the bound (n - 1) u sum |x| =
 * m 2^-24 (2^24 + m) = m + m^2 2^-24 is barely more. */
Test(tolerance, the_loop_bound_is_sharp)
{
    const size_t m = 1000, n = m + 1;
    float *x = malloc(n * sizeof *x);
    x[0] = 0x1p24f;
    for (size_t i = 1; i < n; ++i)
        x[i] = 1.0f;
    struct node s = chain(x, n);
    cr_expect_eq(s.v, 0x1p24f, "the ones were not lost: %.9g", (double)s.v);
    double bound = float_sum_bound(n, s.depth, ref_sum(x, n, true));
    double error = 0x1p24 + (double)m - s.v;
    cr_expect(error <= bound && bound < 1.001 * error, "error %.9g, bound %.9g", error, bound);
    free(x);
}

/* One addition is as sharp: 1 + 2^-24 is a tie and rounds to 1, an error of u times the sum. */
Test(tolerance, one_addition_bound_is_sharp)
{
    float x[2] = {1.0f, 0x1p-24f};
    struct node s = pairwise(x, 2);
    cr_expect_eq(s.v, 1.0f);
    double bound = float_sum_bound(2, s.depth, ref_sum(x, 2, true)), error = 0x1p-24;
    cr_expect(error <= bound && bound < 1.0001 * error, "error %.9g, bound %.9g", error, bound);
}

Test(tolerance, bound_values)
{
    cr_expect_eq(float_sum_bound(0, 0, 0), 0);
    /* one element, no addition: only the (tiny) terms for the double reference remain */
    cr_expect(float_sum_bound(1, 0, 1.0) < 1e-14);
    /* 11 levels: gamma_11 = 11 u / (1 - 11 u), and the rest adds next to nothing */
    double g = 11 * 0x1p-24 / (1 - 11 * 0x1p-24);
    double b = float_sum_bound(2048, 11, 1000.0);
    cr_expect(b >= g * 1000 && b < g * 1000 * 1.0001, "bound %.17g, gamma_11 * 1000 = %.17g", b,
              g * 1000);
    /* a deeper order, a larger bound */
    cr_expect(float_sum_bound(2048, 12, 1000.0) > b);
    /* past d u >= 1 gamma is undefined: (n - 1) u takes over */
    size_t n = ((size_t)1 << 25) + 1;
    cr_expect(fabs(float_sum_bound(n, n - 1, 1.0) - 2.0) < 1e-6);
    /* and at once for any d from 2^24 on: the bound then no longer depends on d */
    cr_expect_eq(float_sum_bound(n, (size_t)1 << 24, 1.0), float_sum_bound(n, n - 1, 1.0));
}
