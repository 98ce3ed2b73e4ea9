/* Stage 5 with its accumulator set to the identity by the host code, through a device pointer.
 * Stage: 05
 * Type: int
 * Verdict: wrong
 * Model: host
 * GPU: crash
 * Source: a mistake of students new to CUDA: host and device memory taken for one
 * Why: `*sum = IDENTITY` on the host writes through a cudaMalloc pointer: a GPU's host code
 *      crashes; the model keeps device memory out of the host's reach while host code runs
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t input_s[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    size_t i = 2 * (size_t)blockDim.x * blockIdx.x + t;
    elem_t first = i < n ? input[i] : IDENTITY;
    elem_t second = i + blockDim.x < n ? input[i + blockDim.x] : IDENTITY;
    input_s[t] = first + second;
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
    size_t segment_size = 2 * (size_t)block_size;
    unsigned int grid_size = (unsigned int)((n + segment_size - 1) / segment_size);
    *sum = IDENTITY; /* WRONG: the host cannot write device memory: cudaMemset does */
    reduce_kernel<<<grid_size, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
