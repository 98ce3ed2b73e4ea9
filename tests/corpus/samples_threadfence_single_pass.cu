/* cuda-samples' threadFenceReduction: one pass, the last block to retire sums the blocks' sums.
 * Stage: 06
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: NVIDIA cuda-samples, Samples/2_Concepts_and_Techniques/threadFenceReduction
 *         (threadFenceReduction_kernel.cuh: reduceBlock, reduceSinglePass, retirementCount)
 * Why: every thread fences before thread 0 takes a ticket with atomicInc(&retirementCount,
 *      gridDim.x); reduceBlock sums each warp in shared memory with tile32 barriers, then
 *      thread 0 adds the warp sums; the last block resets the count with a plain store
 */
#include <cooperative_groups.h>

#include "check.h"
#include "reduce.h"

namespace cg = cooperative_groups;

#define MAX_GRID 1024

const struct stage_info STAGE = {.on_gpu = true};

__device__ unsigned int retirementCount = 0;
__device__ elem_t partials[MAX_GRID];

/* The block's sum, in sdata[0] for every thread. */
__device__ void reduceBlock(volatile elem_t *sdata, elem_t mySum, unsigned int tid,
                            cg::thread_block cta)
{
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);
    sdata[tid] = mySum;
    cg::sync(tile32);
    unsigned int lane = tid & 31;
    for (unsigned int i = 16; i > 0; i >>= 1) {
        if (lane < i) /* reads [i, 2i) of the warp's slots, writes [0, i) */
            sdata[tid] = mySum = mySum + sdata[tid + i];
        cg::sync(tile32);
    }
    cg::sync(cta);
    if (cta.thread_rank() == 0) {
        elem_t beta = IDENTITY;
        for (unsigned int w = 0; w < blockDim.x; w += 32)
            beta += sdata[w];
        sdata[0] = beta;
    }
    cg::sync(cta);
}

__global__ void reduceSinglePass(const elem_t *g_idata, elem_t *sum, size_t n)
{
    __shared__ elem_t sdata[BLOCK_MAX];
    __shared__ bool amLast;
    cg::thread_block cta = cg::this_thread_block();
    unsigned int tid = threadIdx.x;
    elem_t mySum = IDENTITY;
    for (size_t i = (size_t)blockIdx.x * blockDim.x * 2 + tid; i < n;
         i += (size_t)blockDim.x * 2 * gridDim.x)
        mySum += g_idata[i] + (i + blockDim.x < n ? g_idata[i + blockDim.x] : IDENTITY);
    reduceBlock(sdata, mySum, tid, cta);
    if (tid == 0)
        partials[blockIdx.x] = sdata[0];
    __threadfence(); /* thread 0's partial sum is visible to every block before its ticket */
    if (tid == 0) {
        unsigned int ticket = atomicInc(&retirementCount, gridDim.x);
        amLast = ticket == gridDim.x - 1;
        if (amLast)
            __threadfence(); /* and this block's loads below come after every ticket it saw */
    }
    cg::sync(cta);
    if (amLast) {
        elem_t x = IDENTITY;
        for (unsigned int b = tid; b < gridDim.x; b += blockDim.x)
            x += ((volatile elem_t *)partials)[b];
        reduceBlock(sdata, x, tid, cta);
        if (tid == 0) {
            *sum = sdata[0];
            retirementCount = 0; /* for the next launch */
        }
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t blocks = (n + 2 * (size_t)block_size - 1) / (2 * (size_t)block_size);
    unsigned int grid = (unsigned int)(blocks < MAX_GRID ? blocks : MAX_GRID);
    reduceSinglePass<<<grid, block_size>>>(input, sum, n);
    CUDA_CHECK_LAUNCH();
}
