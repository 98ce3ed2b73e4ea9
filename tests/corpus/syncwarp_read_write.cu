/* The last warp's tree in shared memory: one __syncwarp a round, after the write, none before.
 * Stage: 07
 * Type: int
 * Verdict: wrong
 * Model: race
 * GPU: racecheck
 * Source: CUDA Programming Guide, "Warp Synchronous Functions" (__syncwarp), the example's
 *         first __syncwarp(), between the read and the write, left out
 * Why: in a round lane t writes sdata[t] while lane t - offset reads it: without a __syncwarp
 *      between the reads and the writes, the read may see this round's value, not the last one's
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t sdata[BLOCK_MAX + 32]; /* + 32: lanes past 16 read up to sdata[47] */
    unsigned int t = threadIdx.x;
    size_t i = 2 * (size_t)blockDim.x * blockIdx.x + t;
    elem_t v = i < n ? input[i] : IDENTITY;
    if (i + blockDim.x < n)
        v += input[i + blockDim.x];
    sdata[t] = v;
    if (t < 32)
        sdata[t + blockDim.x] = IDENTITY;
    for (unsigned int stride = blockDim.x / 2; stride >= 32; stride /= 2) {
        __syncthreads();
        if (t < stride)
            sdata[t] = v = v + sdata[t + stride];
    }
    __syncthreads();
    if (t < 32) {
        for (unsigned int offset = 16; offset > 0; offset /= 2) {
            v += sdata[t + offset];
            sdata[t] = v; /* WRONG: a __syncwarp() must come between the read above and this */
            __syncwarp();
        }
        if (t == 0)
            atomicAdd(sum, v);
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment = 2 * (size_t)block_size;
    unsigned int grid = (unsigned int)((n + segment - 1) / segment);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
