/* cooperative_groups/reduce.h of the CPU model: cg::reduce over a tile or a coalesced group, with
 * CUDA's function objects (plus, less, greater, bit_and, bit_or, bit_xor). Every thread of the
 * group gets the result, as CUDA's reduce gives it. */
#ifndef CUDA_MODEL_COOPERATIVE_GROUPS_REDUCE_H
#define CUDA_MODEL_COOPERATIVE_GROUPS_REDUCE_H
#include "../cooperative_groups.h"
#ifdef CUDA_MODEL_PARSE
#pragma clang force_cuda_host_device begin
#endif

namespace cooperative_groups
{
template <class T> struct plus {
    T operator()(const T &a, const T &b) const { return a + b; }
};
template <class T> struct less { /* reduce with less: the minimum */
    T operator()(const T &a, const T &b) const { return b < a ? b : a; }
};
template <class T> struct greater { /* reduce with greater: the maximum */
    T operator()(const T &a, const T &b) const { return a < b ? b : a; }
};
template <class T> struct bit_and {
    T operator()(const T &a, const T &b) const { return a & b; }
};
template <class T> struct bit_or {
    T operator()(const T &a, const T &b) const { return a | b; }
};
template <class T> struct bit_xor {
    T operator()(const T &a, const T &b) const { return a ^ b; }
};

/* A tile of N lanes: log2(N) butterfly rounds, each lane combining its value with its partner's
 * (shfl_xor), so that every lane ends with the whole tile's result. */
template <unsigned int N, class P, class T, class Op>
std::decay_t<T> reduce(const thread_block_tile<N, P> &group, T &&value, Op &&op)
{
    std::decay_t<T> x = value;
    for (unsigned int offset = N / 2; offset >= 1; offset /= 2)
        x = op(x, group.shfl_xor(x, offset));
    return x;
}
/* A coalesced group: its lanes' values in rank order, combined in that order. */
template <class T, class Op>
std::decay_t<T> reduce(const coalesced_group &group, T &&value, Op &&op)
{
    std::decay_t<T> x = group.shfl(value, 0u);
    for (unsigned int r = 1; r < group.num_threads(); ++r)
        x = op(x, group.shfl(value, r));
    return x;
}
} // namespace cooperative_groups

#ifdef CUDA_MODEL_PARSE
#pragma clang force_cuda_host_device end
#endif
#endif
