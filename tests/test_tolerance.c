/* test_tolerance.c: the float32 error bound of common/tolerance.c, on the CPU (both builds).
 *
 * The GPU tests hold every stage's float sum to float_sum_bound(n, n - 1, sum |x_i|), the bound of
 * any order; make accuracy to float_sum_bound(n, d, sum |x_i|) with the d of the stage's own order
 * (measure_depth; the counting type's tests: test_depth.cc). Here the bound itself: never too
 * small, for sums in orders built here with no reference to any stage (chains, balanced and random
 * binary trees), each counting d as it goes; and sharp enough to mean something: a loop that loses
 * every addition sits right at it, and it adds next to nothing to Higham's gamma_d * sum |x_i|. */
#include <math.h>

#include "test_util.h"

static uint64_t rng = 12345;

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

/* The two halves' sums, added: a balanced tree. */
static struct node pairwise(const float *x, size_t n)
{
    return n == 1 ? (struct node){x[0], 0}
                  : add(pairwise(x, n / 2), pairwise(x + n / 2, n - n / 2));
}

/* Adds two partial sums until one is left: any two with `random` (a random binary tree: some
 * element may pass through few additions, another through many), else the running sum and one
 * more element (a chain, as the sequential loop adds, the elements in another order). */
static struct node pool_sum(const float *x, size_t n, bool random)
{
    struct node *pool = malloc(n * sizeof *pool);
    cr_assert_not_null(pool);
    for (size_t i = 0; i < n; ++i)
        pool[i] = (struct node){x[i], 0};
    for (size_t left = n; left > 1; --left) {
        size_t i = random ? splitmix64(&rng) % left : 0;
        size_t j = random ? splitmix64(&rng) % (left - 1) : 0;
        j += j >= i; /* j != i */
        struct node sum = add(pool[i], pool[j]);
        pool[i < j ? i : j] = sum;
        pool[i < j ? j : i] = pool[left - 1];
    }
    struct node sum = pool[0];
    free(pool);
    return sum;
}

/* reduce_double and sum_abs for floats, in both builds: a double loop, left to right. */
static double ref_sum(const float *x, size_t n, bool absolute)
{
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
        sum += absolute ? fabs((double)x[i]) : (double)x[i];
    return sum;
}

static const char *VALUES[] = {"uniform", "wide", "one big"};

/* The sum's error against the double reference is within the bound of the depth it counted. */
static void check_order(const char *order, struct node s, const float *x, size_t n, int kind)
{
    double ref = ref_sum(x, n, false), bound = float_sum_bound(n, s.depth, ref_sum(x, n, true));
    cr_expect(fabs((double)s.v - ref) <= bound,
              "%s, n = %zu, %s values: sum %.9g, reference %.17g, off by %.3g, more than the "
              "bound %.3g of depth %zu",
              order, n, VALUES[kind], (double)s.v, ref, fabs((double)s.v - ref), bound, s.depth);
}

/* n values of each kind: uniform in [0, 1), 24 bits each; wide: both signs, magnitudes from 2^-20
 * to 2^20; one big: 2^24 somewhere among ones, so that a sum holding it rounds every one away.
 * Each n is a case of its own, from the same seed (its own process starts afresh). */
ParameterizedTestParameters(tolerance, the_bound_holds_in_any_order)
{
    static size_t N[] = {1, 2, 3, 17, 1000, 4097, 100003};
    return cr_make_param_array(size_t, N, COUNT(N));
}

ParameterizedTest(size_t *np, tolerance, the_bound_holds_in_any_order)
{
    size_t n = *np, log2_n = 0;
    while (((size_t)1 << log2_n) < n)
        ++log2_n;
    float *x = malloc(n * sizeof *x);
    cr_assert_not_null(x);
    for (int kind = 0; kind < 3; ++kind) {
        for (size_t i = 0; i < n; ++i) {
            uint64_t r = splitmix64(&rng);
            float uniform = (float)(r >> 40) * 0x1p-24f;
            x[i] = kind == 0   ? uniform
                   : kind == 1 ? ldexpf(uniform, (int)(r % 41) - 20) * (r & (1u << 20) ? -1 : 1)
                               : 1.0f;
        }
        if (kind == 2)
            x[splitmix64(&rng) % n] = 0x1p24f;
        struct node s = pool_sum(x, n, false);
        cr_expect_eq(s.depth, n - 1, "a chain of %zu: depth %zu", n, s.depth);
        check_order("a chain", s, x, n, kind);
        s = pairwise(x, n);
        cr_expect_eq(s.depth, log2_n, "a balanced tree of %zu: depth %zu", n, s.depth);
        check_order("a balanced tree", s, x, n, kind);
        for (int t = 0; t < 5; ++t) {
            s = pool_sum(x, n, true);
            cr_expect(log2_n <= s.depth && s.depth <= n - 1, "a random tree of %zu: depth %zu", n,
                      s.depth);
            check_order("a random tree", s, x, n, kind);
        }
    }
    free(x);
}

/* The bound is sharp where every addition loses all it can: `big`, then m elements `small` of half
 * its last bit, so that each big + small is a tie that rounds back to big (to even). The error is
 * m small, and the bound about m u sum |x| is barely more: for 2^24 and 1000 ones
 * m 2^-24 (2^24 + m) = m + m^2 2^-24; for 1 + 2^-24, one addition, u times the sum. */
Test(tolerance, the_bound_is_sharp)
{
    static const struct {
        float big, small;
        size_t m;
        double slack;
    } CASES[] = {{0x1p24f, 1.0f, 1000, 1.001}, {1.0f, 0x1p-24f, 1, 1.0001}};
    for (size_t c = 0; c < COUNT(CASES); ++c) {
        size_t n = CASES[c].m + 1;
        float *x = malloc(n * sizeof *x);
        cr_assert_not_null(x);
        for (size_t i = 0; i < n; ++i)
            x[i] = i ? CASES[c].small : CASES[c].big;
        struct node s = pool_sum(x, n, false);
        double error = (double)CASES[c].m * CASES[c].small;
        double bound = float_sum_bound(n, s.depth, ref_sum(x, n, true));
        cr_expect_eq(s.v, CASES[c].big, "the small ones were not lost: %.9g", (double)s.v);
        cr_expect(error <= bound && bound < CASES[c].slack * error, "error %.9g, bound %.9g", error,
                  bound);
        free(x);
    }
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
