/* tolerance.c: the float32 build's reference sum and how far each stage's float sum may lie from
 * it (CPU only). Why float sums differ at all, and the measured numbers: common/FLOAT.md.
 *
 * Higham's bound for summation in any order (Accuracy and Stability of Numerical Algorithms,
 * 2nd ed., 2002, section 4.2): each addition rounds, fl(a + b) = (a + b)(1 + delta) with
 * |delta| <= u, so an element that passes through k rounded additions reaches the sum multiplied
 * by k factors (1 + delta), which differ from 1 by at most gamma_k = k*u / (1 - k*u). With d the
 * largest k over all elements (the depth of the stage's order),
 *
 *     |s - exact| <= gamma_d * sum |x_i|.
 *
 * An addition of the identity 0 is exact, so the zeros a stage pads with never count.
 */
#include "harness.h"

#include <math.h>
#include <string.h>

#define U_FLOAT 0x1p-24  /* float's unit roundoff: half the gap between 1 and the next float */
#define U_DOUBLE 0x1p-53 /* double's */

double reduce_double(const elem_t *x, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
        sum += (double)x[i];
    return sum;
}

double sum_abs(const elem_t *x, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
        sum += fabs((double)x[i]);
    return sum;
}

/* 0 for "step00..." up to 7 for "step07..."; -1 for a name that is none of them. */
static int stage_number(const char *name)
{
    if (strncmp(name, "step", 4) != 0 || name[4] < '0' || name[4] > '9' || name[5] < '0' ||
        name[5] > '9')
        return -1;
    return (name[4] - '0') * 10 + (name[5] - '0');
}

static size_t log2_of(size_t power_of_two)
{
    size_t k = 0;
    while (((size_t)1 << k) < power_of_two)
        ++k;
    return k;
}

static size_t ceil_div(size_t a, size_t b)
{
    return (a + b - 1) / b;
}

/* COARSE_FACTOR of step06 and step07 (their reduce.cu): the depths below count its tiles. */
#define COARSE_FACTOR 2

size_t stage_depth(const char *stage_name, size_t n, unsigned int block, size_t resident_blocks)
{
    if (n <= 1)
        return 0;                   /* 0 + x is exact */
    size_t levels = log2_of(block); /* one tree level a halving of the block's partial sums */
    size_t d, blocks;
    switch (stage_number(stage_name)) {
    case 0:  /* sum = 0; sum += x[i]: x[0] passes through the n - 1 additions after its own */
    case 1:  /* every thread's atomicAdd onto one accumulator: a chain of n additions in some
              * order, the first onto 0 (exact); the first element through the other n - 1 */
    default: /* unknown: any order of n elements has n - 1 additions, so no path has more */
        d = n - 1;
        break;
    case 2: /* one block, 2 * block elements (padded with 0): a tree of log2(2 * block) rounds */
    case 3: /* the same tree, strided: log2(2 * block) rounds */
    case 4: /* the first round on the way into shared memory, then log2(block): the same count */
        d = 1 + levels;
        break;
    case 5: /* first + second (1), the shared-memory tree (log2 block), then the G block partial
             * sums added one after another by atomicAdd: G - 1 more after the first onto 0 */
        blocks = ceil_div(n, 2 * (size_t)block);
        d = 1 + levels + (blocks - 1);
        break;
    case 6: /* partial = 0 then COARSE_FACTOR * 2 serial additions: the first tile's element
             * passes through the other COARSE_FACTOR * 2 - 1; then the tree and the atomic chain */
        blocks = ceil_div(n, COARSE_FACTOR * 2 * (size_t)block);
        d = (COARSE_FACTOR * 2 - 1) + levels + (blocks - 1);
        break;
    case 7: {
        /* The grid: min(segments, resident blocks) (step07's reduce()); each block walks
         * ceil(segments / grid) segments, COARSE_FACTOR * 2 vectors of 4 elements a thread each,
         * so a thread adds up to K vectors. `partial += v.x + v.y + v.z + v.w` is
         * partial + (((v.x + v.y) + v.z) + v.w): v.x passes through 3 additions inside its
         * vector, then the one into partial (exact for the first vector: partial is 0), then the
         * K - 1 later vectors' additions, then one more for the last n % 4 elements (block 0).
         * After the loop: warp_reduce over 32 lanes (5 shuffle rounds), warp 0's warp_reduce of
         * the block / 32 warp sums (log2(block / 32) rounds: the other lanes add exact zeros),
         * and the G - 1 atomicAdds after the first. */
        size_t segments = ceil_div(n, COARSE_FACTOR * 2 * (size_t)block * 4);
        blocks = segments < resident_blocks ? segments : resident_blocks;
        if (resident_blocks == 0)
            blocks = 1; /* unknown: the worst, one block walking every segment */
        size_t vectors = COARSE_FACTOR * 2 * ceil_div(segments, blocks); /* K */
        d = (3 + (vectors - 1) + (n % 4 != 0)) + 5 + (levels - 5) + (blocks - 1);
        break;
    }
    }
    return d < n - 1 ? d : n - 1;
}

bool stage_order_varies(const char *stage_name)
{
    int s = stage_number(stage_name);
    return !(s == 0 || s == 2 || s == 3 || s == 4); /* unknown stages: assume the worst */
}

/* gamma_k = k u / (1 - k u), or infinity where k u >= 1 and the bound says nothing. */
static double gamma_of(double k, double u)
{
    return k * u < 1 ? k * u / (1 - k * u) : INFINITY;
}

double float_sum_bound(size_t n, size_t d, double sum_abs)
{
    if (n == 0)
        return 0;
    /* Float's rounding. gamma_d needs d u < 1, so it is undefined for a chain of 2^24 or more
     * additions (step00 and step01 past 2^24 elements); the bound (n - 1) u, proven for any order
     * and any n (Jeannerod and Rump, SIAM J. Matrix Anal. Appl. 34(2), 2013), covers that case. */
    double g = fmin(gamma_of((double)d, U_FLOAT), (double)(n - 1) * U_FLOAT);
    /* The reference is a double loop, off by up to gamma_{n-1} in double (Higham again), and
     * sum_abs as much; the subtraction and this arithmetic round a few times more: n + 8 covers
     * them. At most (n + 8) 2^-53 relative: 2^-21 at n = 2^32, under 1% of float's term for
     * every stage's d. */
    double g_ref = gamma_of((double)n + 8, U_DOUBLE);
    /* Float atomicAdd flushes subnormal inputs and results to zero (PTX ISA, atom; on sm_90 it
     * compiles to REDG.E.ADD.F32.FTZ.RN): up to 2^-126 each, twice for each of at most n atomic
     * additions. Only a sum near 0 notices. */
    double flushed = (double)n * 0x1p-125 * (1 + g);
    return (g + g_ref) * sum_abs * (1 + 2 * g_ref) + flushed;
}
