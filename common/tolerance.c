/* tolerance.c: the float32 build's reference sum and how far a float sum may lie from it (CPU
 * only): Higham's bound, gamma_d * sum |x_i|; why it holds: harness.h. */
#include "harness.h"

#include <math.h>

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
     * additions (a loop past 2^24 elements); the bound (n - 1) u, proven for any order
     * and any n (Jeannerod and Rump, SIAM J. Matrix Anal. Appl. 34(2), 2013), covers that case. */
    double g = fmin(gamma_of((double)d, U_FLOAT), (double)(n - 1) * U_FLOAT);
    /* The reference is a double loop, off by up to gamma_{n-1} in double (Higham again), and
     * sum_abs as much; the subtraction and this arithmetic round a few times more: n + 8 covers
     * them. At most (n + 8) 2^-53 relative: 2^-21 at n = 2^32, far below float's term for the
     * stages' depths at that n (FLOAT.md). */
    double g_ref = gamma_of((double)n + 8, U_DOUBLE);
    /* Float atomicAdd flushes subnormal inputs and results to zero (PTX ISA, atom; on sm_90 it
     * compiles to REDG.E.ADD.F32.FTZ.RN): up to 2^-126 each, twice for each of at most n atomic
     * additions. Only a sum near 0 notices. */
    double flushed = (double)n * 0x1p-125 * (1 + g);
    return (g + g_ref) * sum_abs * (1 + 2 * g_ref) + flushed;
}
