/* A warp tile's tree in shared memory with tile.sync() inside `if (lane < offset)`.
 * Stage: 07
 * Type: int
 * Verdict: wrong
 * Model: barrier
 * GPU: latent
 * Source: CUDA Programming Guide, "Cooperative Groups" (thread_block_tile::sync), put where
 *         the add is, as __syncthreads() often is in `if (t < stride)`
 * Why: tile.sync() is __syncwarp() with the tile's mask: every lane of the tile must reach it, and
 *      in round offset only lanes below offset do; on an H200 the others have left the loop and
 *      exited, count as arrived: every sum is right and synccheck is silent
 */
#include <cooperative_groups.h>

#include "check.h"
#include "reduce.h"

namespace cg = cooperative_groups;

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t sdata[BLOCK_MAX];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    unsigned int t = block.thread_rank(), lane = tile.thread_rank();
    elem_t x = IDENTITY;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + t; i < n; i += (size_t)gridDim.x * blockDim.x)
        x += input[i];
    sdata[t] = x;
    tile.sync();
    for (unsigned int offset = 16; offset > 0; offset /= 2) {
        if (lane < offset) {
            sdata[t] += sdata[t + offset];
            tile.sync(); /* WRONG: the lanes at or above offset never reach this tile.sync() */
        }
    }
    if (lane == 0)
        atomicAdd(sum, sdata[t]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t blocks = (n + block_size - 1) / block_size;
    unsigned int grid = (unsigned int)(blocks < 1024 ? blocks : 1024);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
