/* Harris's kernel 7 on a grid sized by cudaOccupancyMaxPotentialBlockSize, the harness's block.
 * Stage: 06
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: Harris 2007, "Optimizing Parallel Reduction in CUDA", kernel 7 (multiple adds a
 *         thread); CUDA Runtime API, cudaOccupancyMaxPotentialBlockSize
 * Why: the occupancy API's minGridSize (blocks of its own suggested size that fill the GPU)
 *      turned into a grid of the same thread count for the launch's block_size; a grid-stride
 *      loop, __restrict__, #pragma unroll on the warp's shuffles
 */
#include "check.h"
#include "reduce.h"

#define FULL_MASK 0xffffffffu

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce7(const elem_t *__restrict__ g_idata, elem_t *__restrict__ g_odata,
                        size_t n)
{
    __shared__ elem_t sdata[BLOCK_MAX];
    unsigned int tid = threadIdx.x;
    size_t gridSize = (size_t)blockDim.x * 2 * gridDim.x;
    elem_t x = IDENTITY;
    for (size_t i = (size_t)blockIdx.x * blockDim.x * 2 + tid; i < n; i += gridSize) {
        x += g_idata[i];
        if (i + blockDim.x < n)
            x += g_idata[i + blockDim.x];
    }
    sdata[tid] = x;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] = x = x + sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        if (blockDim.x >= 64)
            x += sdata[tid + 32];
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1)
            x += __shfl_down_sync(FULL_MASK, x, offset);
        if (tid == 0)
            atomicAdd(g_odata, x);
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    int min_grid, best_block;
    CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &best_block, reduce7, 0, 0));
    /* min_grid blocks of best_block threads fill the GPU once: as many threads in our blocks */
    size_t fill = (size_t)min_grid * (size_t)best_block / block_size;
    size_t per_block = 2 * (size_t)block_size;
    size_t needed = (n + per_block - 1) / per_block;
    size_t grid = needed < fill ? needed : fill;
    if (grid == 0)
        grid = 1;
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce7<<<(unsigned int)grid, block_size>>>(input, sum, n);
    CUDA_CHECK_LAUNCH();
}
