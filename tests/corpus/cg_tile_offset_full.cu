/* Cooperative groups: a warp tile's shuffle tree whose first offset is the tile's size.
 * Stage: 07
 * Type: int
 * Verdict: wrong
 * Model: sum
 * GPU: tests
 * Source: CUDA Programming Guide, "Cooperative Groups" (thread_block_tile::shfl_down), its loop
 *         started at tile.num_threads() instead of half of it
 * Why: shfl_down by 32 in a tile of 32 reaches past the tile: every lane gets its own x back, so
 *      the first round doubles each value: each warp's sum is twice what it should be, and the
 *      block's, summed by the same function, four times
 */
#include <cooperative_groups.h>

#include "check.h"
#include "reduce.h"

namespace cg = cooperative_groups;

const struct stage_info STAGE = {.on_gpu = true};

template <unsigned int SIZE> __device__ elem_t tile_sum(cg::thread_block_tile<SIZE> tile, elem_t x)
{
    /* WRONG: the first offset must be num_threads() / 2: lane + 32 is outside the tile */
    for (unsigned int offset = tile.num_threads(); offset > 0; offset /= 2)
        x += tile.shfl_down(x, offset);
    return x;
}

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t warp_sums[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    elem_t x = IDENTITY;
    for (size_t i = block.group_index().x * block.num_threads() + block.thread_rank(); i < n;
         i += (size_t)gridDim.x * block.num_threads())
        x += input[i];
    x = tile_sum(warp, x);
    if (warp.thread_rank() == 0)
        warp_sums[warp.meta_group_rank()] = x;
    block.sync();
    if (warp.meta_group_rank() == 0) {
        x = warp.thread_rank() < warp.meta_group_size() ? warp_sums[warp.thread_rank()] : IDENTITY;
        x = tile_sum(warp, x);
        if (warp.thread_rank() == 0)
            atomicAdd(sum, x);
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t blocks = (n + block_size - 1) / block_size;
    unsigned int grid = (unsigned int)(blocks < 1024 ? blocks : 1024);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
