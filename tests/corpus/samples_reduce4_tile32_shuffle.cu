/* cuda-samples' reduce4: the tree in shared memory down to 64 sums, then a warp tile's shfl_down.
 * Stage: 07
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: NVIDIA cuda-samples, Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu
 *         (reduce4; Harris 2007, kernel 5, its last warp as the sample now writes it)
 * Why: the loop stops at s > 32, warp 0 folds sdata[tid + 32] into its register and finishes
 *      with thread_block_tile<32>::shfl_down: no volatile, no lockstep assumption
 */
#include <cooperative_groups.h>

#include "check.h"
#include "reduce.h"

namespace cg = cooperative_groups;

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce4(const elem_t *g_idata, elem_t *g_odata, size_t n)
{
    __shared__ elem_t sdata[BLOCK_MAX];
    cg::thread_block cta = cg::this_thread_block();
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (blockDim.x * 2) + tid;
    elem_t mySum = i < n ? g_idata[i] : IDENTITY;
    if (i + blockDim.x < n)
        mySum += g_idata[i + blockDim.x];
    sdata[tid] = mySum;
    cg::sync(cta);
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] = mySum = mySum + sdata[tid + s];
        cg::sync(cta);
    }
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);
    if (cta.thread_rank() < 32) { /* warp 0, all 32 of its lanes */
        if (blockDim.x >= 64)
            mySum += sdata[tid + 32]; /* the second warp's partial sum */
        for (int offset = tile32.size() / 2; offset > 0; offset /= 2)
            mySum += tile32.shfl_down(mySum, offset);
    }
    if (cta.thread_rank() == 0)
        atomicAdd(g_odata, mySum);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t per_block = 2 * (size_t)block_size;
    unsigned int grid = (unsigned int)((n + per_block - 1) / per_block);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce4<<<grid, block_size>>>(input, sum, n);
    CUDA_CHECK_LAUNCH();
}
