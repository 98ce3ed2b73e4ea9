/* Cooperative groups' smaller tiles: 16-thread tiles sum the elements, 8-thread tiles their sums.
 * Stage: 06
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: CUDA C++ Programming Guide, "Cooperative Groups" (tiled_partition, thread_block_tile
 *         shfl_down, meta_group_rank, cg::sync)
 * Why: thread_block_tile<16> and <8> shuffles stay inside their tile (the hardware's width); the
 *      first level leaves blockDim.x / 16 sums (2 to 64) in shared memory, the first 64 threads
 *      fold them in tiles of 8, and thread 0 adds those; cg::sync(block) between the levels
 */
#include <cooperative_groups.h>

#include "check.h"
#include "reduce.h"

namespace cg = cooperative_groups;

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t tile_sums[BLOCK_MAX / 16];
    __shared__ elem_t octet_sums[8];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile16 = cg::tiled_partition<16>(block);
    cg::thread_block_tile<8> tile8 = cg::tiled_partition<8>(block);
    elem_t x = IDENTITY;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + block.thread_rank(); i < n;
         i += (size_t)blockDim.x * gridDim.x)
        x += input[i];
    for (unsigned int offset = tile16.size() / 2; offset > 0; offset /= 2)
        x += tile16.shfl_down(x, offset);
    if (tile16.thread_rank() == 0)
        tile_sums[tile16.meta_group_rank()] = x;
    cg::sync(block);
    unsigned int tiles = tile16.meta_group_size(); /* blockDim.x / 16 */
    unsigned int rank = block.thread_rank();
    if (rank < 64) { /* whole tiles of 8: 64 is a multiple of 8 */
        x = rank < tiles ? tile_sums[rank] : IDENTITY;
        for (unsigned int offset = tile8.size() / 2; offset > 0; offset /= 2)
            x += tile8.shfl_down(x, offset);
        if (tile8.thread_rank() == 0)
            octet_sums[tile8.meta_group_rank()] = x;
    }
    cg::sync(block);
    if (rank == 0) {
        unsigned int octets = (blockDim.x < 64 ? blockDim.x : 64) / 8; /* those written */
        elem_t total = IDENTITY;
        for (unsigned int k = 0; k < octets; ++k)
            total += octet_sums[k];
        atomicAdd(sum, total);
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
