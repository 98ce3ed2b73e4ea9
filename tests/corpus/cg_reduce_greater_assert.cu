/* cg::reduce three ways (plus, greater, less): the sum, and the range an assert checks it by.
 * Stage: 05
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: CUDA C++ Programming Guide, "Cooperative Groups" (cg::reduce with cg::plus,
 *         cg::greater, cg::less) and "Assertion"; atomicMax, atomicMin on shared memory
 * Why: each warp's sum, max and min with cg::reduce, folded into shared accumulators with
 *      atomicAdd, atomicMax and atomicMin; after cg::sync(block) every thread asserts that its
 *      element lies in the block's range (always true), then thread 0 adds the block's sum
 */
#include <cassert>
#include <climits>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "check.h"
#include "reduce.h"

namespace cg = cooperative_groups;

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t block_sum;
    __shared__ int block_max, block_min;
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    if (block.thread_rank() == 0) {
        block_sum = IDENTITY;
        block_max = INT_MIN;
        block_min = INT_MAX;
    }
    cg::sync(block);
    size_t i = (size_t)blockIdx.x * blockDim.x + block.thread_rank();
    bool has = i < n;
    elem_t x = has ? input[i] : IDENTITY;
    /* a lane past n: the identity of each operation */
    elem_t warp_sum = cg::reduce(warp, x, cg::plus<elem_t>());
    int warp_max = cg::reduce(warp, has ? x : INT_MIN, cg::greater<int>());
    int warp_min = cg::reduce(warp, has ? x : INT_MAX, cg::less<int>());
    if (warp.thread_rank() == 0) {
        atomicAdd(&block_sum, warp_sum);
        atomicMax(&block_max, warp_max);
        atomicMin(&block_min, warp_min);
    }
    cg::sync(block);
    if (has)
        assert(block_min <= x && x <= block_max);
    if (block.thread_rank() == 0)
        atomicAdd(sum, block_sum);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    unsigned int grid = (unsigned int)((n + block_size - 1) / block_size);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
