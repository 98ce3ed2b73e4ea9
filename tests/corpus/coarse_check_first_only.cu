/* A coarsened kernel that checks the bounds once, for the first of each thread's elements.
 * Stage: 06
 * Type: int
 * Verdict: wrong
 * Model: memory
 * GPU: memcheck
 * Source: PMPP 4th ed., chapter 10, the coarsened kernel (Fig. 10.15), with one bounds check
 *         hoisted out of its unrolled loop
 * Why: i < n says nothing about i + k * blockDim.x: in the last, partial segment the threads
 *      read up to 3 * blockDim.x elements past the end of the input (at n = 1000, block 32, 24)
 */
#include "check.h"
#include "reduce.h"

#define COARSE_FACTOR 4

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t input_s[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    size_t i = (size_t)COARSE_FACTOR * blockDim.x * blockIdx.x + t;
    elem_t x = IDENTITY;
    if (i < n) { /* WRONG: checks the first element only, not i + k * blockDim.x */
#pragma unroll
        for (unsigned int k = 0; k < COARSE_FACTOR; ++k)
            x += input[i + k * blockDim.x];
    }
    input_s[t] = x;
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (t < stride)
            input_s[t] += input_s[t + stride];
    }
    if (t == 0)
        atomicAdd(sum, input_s[0]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment = (size_t)COARSE_FACTOR * block_size;
    unsigned int grid = (unsigned int)((n + segment - 1) / segment);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
