/* Stage 0: the sequential loop.
 *
 * Concept: a reduction folds n elements into one with an associative operator (+) starting from
 * its identity (0). Goal: the reference every GPU stage is checked with, exactly.
 *
 * As written, each addition needs the previous one's result: one dependence chain of n - 1
 * additions, one after another. Regrouping them (gcc -O3 does, into vector lanes; the GPU stages
 * do, into a tree) is allowed only because + is associative (and commutative, once threads pick
 * their own order).
 */
#include "reduce.h"

elem_t reduce_cpu(const elem_t *input, size_t n)
{
    elem_t sum = IDENTITY;
    for (size_t i = 0; i < n; ++i)
        sum += input[i]; /* int32 wraps modulo 2^32 (-fwrapv), as the GPU's adds do */
    return sum;
}
