/* Stage 5 declared for blocks of at most 128 threads (__launch_bounds__), launched with more.
 * Stage: 05
 * Type: int
 * Verdict: wrong
 * Model: resources
 * GPU: launch
 * Source: a kernel tuned for one block size, then run with the harness's others
 * Why: __launch_bounds__(128) promises ptxas at most 128 threads a block: a launch with 256
 *      is refused (an H200: cudaErrorInvalidValue), and its sum never written
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__global__ void __launch_bounds__(128) reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
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
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid_size, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
