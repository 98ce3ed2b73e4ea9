/* PMPP's coarsened kernel with its shared array sized at launch (extern __shared__).
 * Stage: 06
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: PMPP 4th ed., chapter 10, the coarsened kernel (Fig. 10.15), with dynamic shared memory
 * Why: extern __shared__ sized by the launch's third parameter, a launch over several lines,
 *      #pragma unroll over the coarse factor
 */
#include "check.h"
#include "reduce.h"

#define COARSE_FACTOR 4

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    extern __shared__ elem_t input_s[];
    unsigned int t = threadIdx.x;
    size_t segment = (size_t)COARSE_FACTOR * 2 * blockDim.x * blockIdx.x;
    size_t i = segment + t;
    elem_t x = IDENTITY;
#pragma unroll
    for (unsigned int tile = 0; tile < COARSE_FACTOR * 2; ++tile)
        if (i + (size_t)tile * blockDim.x < n)
            x += input[i + (size_t)tile * blockDim.x];
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
    size_t segment = (size_t)COARSE_FACTOR * 2 * block_size;
    unsigned int grid = (unsigned int)((n + segment - 1) / segment);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid,
                    block_size,
                    block_size * sizeof(elem_t)>>>(input,
                                                   n, sum);
    CUDA_CHECK_LAUNCH();
}
