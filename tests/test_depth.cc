/* test_depth.cc: the counting type of common/depth.h, on the CPU (C++, both builds).
 *
 * The float build measures each stage's depth by running the stage's own code on `depth`
 * elements (measure_depth, common/depth.cu). Here, on orders built by hand: + counts what Higham's
 * bound needs (a chain of k elements has depth k - 1, a balanced tree of 2^k elements k), the
 * identity counts nothing (so padding does not either), and the rule depth_of applies to an
 * atomicAdd chain is its worst order, checked against every order of small chains. The GPU half
 * (atomicAdd, __shfl_down_sync, every stage's measured depth) is make accuracy's (accuracy.cu). */
#include <criterion/criterion.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "depth.h"

static const depth IDENT = depth(0), ELEMENT = depth(1);

/* A partial sum of depth d, as a tree of its own would leave it; d = -1: the identity. */
static depth of_depth(int d)
{
    depth x = d < 0 ? IDENT : ELEMENT;
    x.e += d > 0 ? d : 0;
    return x;
}

Test(depth, is_a_plain_type_whose_zero_bytes_are_the_identity)
{
    /* __shared__ arrays need a trivial type; the stages' cudaMemsetAsync(sum, 0, ...) makes it */
    static_assert(std::is_trivial_v<depth> && std::is_trivially_copyable_v<depth>);
    static_assert(sizeof(depth4) == 4 * sizeof(depth));
    depth zero;
    std::memset(&zero, 0, sizeof zero);
    cr_expect(zero.e == 0 && zero.atomics == 0);
    cr_expect_eq(depth_of(zero), 0u);
    cr_expect_eq((zero + ELEMENT).e, ELEMENT.e, "0 + x is x");
    cr_expect_eq(depth_of(ELEMENT), 0u, "one element: no addition");
}

/* a + b rounds once, on top of the deeper side; the identity (-1) adds nothing and stays itself. */
Test(depth, an_addition_rounds_once_on_top_of_the_deeper_side)
{
    static const int CASES[][3] = {{3, 9, 10}, {9, 3, 10},   {4, 4, 5}, {7, -1, 7},
                                   {-1, 7, 7}, {-1, -1, -1}, {0, 0, 1}};
    for (const int *c : CASES) {
        depth sum = of_depth(c[0]) + of_depth(c[1]);
        cr_expect(sum.e == of_depth(c[2]).e && depth_of(sum) == (size_t)std::max(c[2], 0),
                  "depth %d + depth %d: e %u, depth %zu", c[0], c[1], sum.e, depth_of(sum));
    }
}

Test(depth, a_chain_of_k_elements_has_depth_k_minus_1)
{
    for (unsigned int k = 1; k <= 1000; ++k) {
        depth sum = IDENT; /* like the loop: from the identity, adding each element */
        for (unsigned int i = 0; i < k; ++i)
            sum += ELEMENT;
        cr_expect_eq(depth_of(sum), k - 1u, "k = %u: depth %zu", k, depth_of(sum));
    }
}

/* Round by round, as the trees of the stages add: s[t] += s[t + stride]. m elements padded with
 * the identity to 1024 (2^k elements: a balanced tree, up to 2^16) have the depth of m elements,
 * ceil(log2 m). */
Test(depth, a_balanced_tree_of_m_elements_has_depth_ceil_log2_m)
{
    for (size_t m = 1; m <= (1u << 16); m = m < 1024 ? m + 1 : 2 * m) {
        std::vector<depth> s(std::max<size_t>(m, 1024), IDENT);
        std::fill(s.begin(), s.begin() + m, ELEMENT);
        for (size_t stride = s.size() / 2; stride >= 1; stride /= 2)
            for (size_t t = 0; t < stride; ++t)
                s[t] += s[t + stride];
        size_t log2_m = 0;
        while (((size_t)1 << log2_m) < m)
            ++log2_m;
        cr_expect_eq(depth_of(s[0]), log2_m, "%zu elements: depth %zu", m, depth_of(s[0]));
    }
}

/* What atomicAdd leaves in an accumulator that starts as the identity: the deepest e, and the
 * number of partial sums that held elements (depth.h, atomicAdd). */
static depth accumulate(const std::vector<depth> &partials)
{
    depth acc = IDENT;
    for (depth x : partials)
        if (x.e != 0) {
            acc.e = std::max(acc.e, x.e);
            acc.atomics += 1;
        }
    return acc;
}

/* The largest depth_of over every order of a chain of atomicAdds of these partial sums onto the
 * identity, each order replayed with +. */
static size_t worst_order(std::vector<depth> partials)
{
    auto shallower = [](depth a, depth b) { return a.e < b.e; };
    std::sort(partials.begin(), partials.end(), shallower);
    size_t worst = 0;
    do {
        depth acc = IDENT;
        for (depth x : partials)
            acc = acc + x;
        worst = std::max(worst, depth_of(acc));
    } while (std::next_permutation(partials.begin(), partials.end(), shallower));
    return worst;
}

Test(depth, an_atomic_chain_counts_its_worst_order)
{
    /* max + (count - 1): the deepest partial sum first, then every other one rounds it again */
    cr_expect_eq(depth_of(accumulate({of_depth(5), of_depth(2), of_depth(9)})), 9u + 2u);
    cr_expect_eq(depth_of(accumulate({of_depth(5)})), 5u, "one atomicAdd onto 0 is exact");
    cr_expect_eq(depth_of(accumulate({of_depth(5), IDENT, of_depth(1), IDENT})), 6u,
                 "the identity is not counted");
    std::vector<depth> n_elements(1000, ELEMENT); /* one atomicAdd per element: a chain of n */
    cr_expect_eq(depth_of(accumulate(n_elements)), 999u);
    /* the same as the worst of all orders, replayed addition by addition */
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<depth> partials;
        for (int i = 0; i < 1 + trial % 7; ++i)
            partials.push_back(of_depth((trial * 7 + i * 3) % 5 == 0 ? -1 : (trial + i * i) % 6));
        cr_expect_eq(depth_of(accumulate(partials)), worst_order(partials),
                     "trial %d: the rule says %zu, the worst order %zu", trial,
                     depth_of(accumulate(partials)), worst_order(partials));
    }
}

Test(depth, counts_past_32_bits_saturate)
{
    depth deep = ELEMENT;
    deep.e = DEPTH_SATURATED - 1;
    cr_expect_eq((deep + ELEMENT).e, DEPTH_SATURATED);
    cr_expect_eq((deep + ELEMENT + ELEMENT).e, DEPTH_SATURATED, "stays saturated");
    cr_expect_eq(depth_of(deep + ELEMENT), DEPTH_UNCOUNTED);
}
