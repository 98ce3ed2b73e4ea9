/* Each warp adds its sum into one __shared__ accumulator, which nobody sets to the identity.
 * Stage: 07
 * Type: int
 * Verdict: wrong
 * Model: sum
 * GPU: tests
 * Source: shared-memory atomics for a block's sum (NVIDIA's "GPU Pro Tip: Fast Histograms Using
 *         Shared Atomics" zeroes its shared bins first; this file does not)
 * Why: __shared__ memory starts undefined, on a GPU usually what the last block on that
 *      multiprocessor left there (its own block sum): each block's sum carries that with it
 */
#include "check.h"
#include "reduce.h"

#define WARP_SIZE 32
#define FULL_MASK 0xffffffffu

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t block_sum; /* WRONG: never set to IDENTITY before the warps add to it */
    unsigned int t = threadIdx.x;
    elem_t x = IDENTITY;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + t; i < n; i += (size_t)gridDim.x * blockDim.x)
        x += input[i];
    for (unsigned int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
        x += __shfl_down_sync(FULL_MASK, x, offset);
    if (t % WARP_SIZE == 0)
        atomicAdd(&block_sum, x); /* a shared-memory atomic: cheap, warps may collide */
    __syncthreads();
    if (t == 0)
        atomicAdd(sum, block_sum);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t blocks = (n + block_size - 1) / block_size;
    unsigned int grid = (unsigned int)(blocks < 2048 ? blocks : 2048);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
