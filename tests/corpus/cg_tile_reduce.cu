/* Cooperative groups: a warp tile's cg::reduce, then the block's warp sums through shared memory.
 * Stage: 07
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: CUDA Programming Guide, "Cooperative Groups" (thread_block, tiled_partition, reduce)
 * Why: this_thread_block, tiled_partition<32>, cg::reduce with cg::plus, block.sync(): a warp's
 *      sum in registers, no hand-written shuffles
 */
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "check.h"
#include "reduce.h"

namespace cg = cooperative_groups;

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t warp_sums[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    elem_t x = IDENTITY;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x += input[i];
    x = cg::reduce(warp, x, cg::plus<elem_t>());
    if (warp.thread_rank() == 0)
        warp_sums[warp.meta_group_rank()] = x;
    block.sync();
    if (warp.meta_group_rank() == 0) {
        x = warp.thread_rank() < warp.meta_group_size() ? warp_sums[warp.thread_rank()]
                                                          : IDENTITY;
        x = cg::reduce(warp, x, cg::plus<elem_t>());
        if (warp.thread_rank() == 0)
            atomicAdd(sum, x);
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t blocks = (n + block_size - 1) / block_size;
    unsigned int grid_size = (unsigned int)(blocks < 1024 ? blocks : 1024);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid_size, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
