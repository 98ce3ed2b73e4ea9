/* Harris's kernel 5, its unrolled last warp made correct for Volta: __syncwarp at two call sites.
 * Stage: 06
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: Harris 2007, "Optimizing Parallel Reduction in CUDA", kernel 5 (warpReduce on volatile
 *         shared memory); CUDA Programming Guide, "Warp Synchronization Functions" (__syncwarp)
 * Why: the lanes that add call __syncwarp(FULL_MASK) inside the if, the others in the else: two
 *      call sites, one mask, the same barrier since sm_70; each round reads what the last wrote
 */
#include "check.h"
#include "reduce.h"

#define FULL_MASK 0xffffffffu

const struct stage_info STAGE = {.on_gpu = true};

/* The last 64 (or, in a block of 32, 32) partial sums, by warp 0: its 32 lanes all call this. */
__device__ void warpReduce(volatile elem_t *sdata, unsigned int tid, unsigned int first)
{
    for (unsigned int s = first; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] = sdata[tid] + sdata[tid + s]; /* reads [s, 2s), writes [0, s) */
            __syncwarp(FULL_MASK);       /* this round's sums, before the next round reads */
        } else {
            __syncwarp(FULL_MASK); /* the idle lanes still take part: the mask names them */
        }
    }
}

__global__ void reduce5(const elem_t *g_idata, elem_t *g_odata, size_t n)
{
    __shared__ elem_t sdata[BLOCK_MAX];
    unsigned int tid = threadIdx.x;
    size_t gridSize = (size_t)blockDim.x * 2 * gridDim.x;
    elem_t x = IDENTITY;
    for (size_t i = (size_t)blockIdx.x * (blockDim.x * 2) + tid; i < n; i += gridSize) {
        x += g_idata[i];
        if (i + blockDim.x < n)
            x += g_idata[i + blockDim.x];
    }
    sdata[tid] = x;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        warpReduce(sdata, tid, blockDim.x >= 64 ? 32 : 16);
        if (tid == 0)
            atomicAdd(g_odata, sdata[0]);
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t per_block = 2 * (size_t)block_size;
    size_t blocks = (n + per_block - 1) / per_block;
    unsigned int grid = (unsigned int)(blocks < 2048 ? blocks : 2048);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce5<<<grid, block_size>>>(input, sum, n);
    CUDA_CHECK_LAUNCH();
}
