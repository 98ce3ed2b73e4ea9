/* PMPP's simple kernel, one segment a block: the interleaved tree in place in global memory.
 * Stage: 05
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: PMPP 4th ed., chapter 10, SimpleSumReductionKernel (Fig. 10.6) made segmented as
 *         Fig. 10.13 does for the shared-memory kernel
 * Why: thread t owns elements 2t and 2t + 1 of its block's segment of the input, which it
 *      overwrites (in_place); the partial last segment skips pairs past n instead of padding
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true, .in_place = true};

__global__ void SimpleSumReductionKernel(elem_t *input, size_t n, elem_t *output)
{
    size_t segment = 2 * (size_t)blockDim.x * blockIdx.x;
    size_t i = segment + 2 * threadIdx.x;
    for (unsigned int stride = 1; stride <= blockDim.x; stride *= 2) {
        /* past n the elements would be the identity: adding nothing is the same */
        if (threadIdx.x % stride == 0 && i + stride < n)
            input[i] += input[i + stride];
        __syncthreads(); /* global memory too: the next round reads this round's sums */
    }
    if (threadIdx.x == 0)
        atomicAdd(output, input[segment]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment = 2 * (size_t)block_size;
    unsigned int grid = (unsigned int)((n + segment - 1) / segment);
    /* The kernel leaves partial sums all over the input: the harness (STAGE.in_place) restores it
     * before each repeat. */
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    SimpleSumReductionKernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
