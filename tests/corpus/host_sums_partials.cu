/* Two passes: a kernel writes one partial sum a block, the host adds the partial sums in a loop.
 * Stage: 05
 * Type: int
 * Verdict: wrong
 * Model: host
 * GPU: crash
 * Source: PMPP's and Harris 2007's "second pass on the CPU" for the blocks' sums, the copy back
 *         to the host left out
 * Why: partials is cudaMalloc'd: the host loop reads device memory through a device pointer, which
 *      a GPU's host code cannot (a segmentation fault); cudaMemcpy the partials first
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__global__ void partial_kernel(const elem_t *input, size_t n, elem_t *partials)
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
        partials[blockIdx.x] = input_s[0];
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment_size = 2 * (size_t)block_size;
    unsigned int grid_size = (unsigned int)((n + segment_size - 1) / segment_size);
    elem_t *partials;
    CUDA_CHECK(cudaMalloc(&partials, grid_size * sizeof(elem_t)));
    partial_kernel<<<grid_size, block_size>>>(input, n, partials);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    elem_t total = IDENTITY;
    for (unsigned int b = 0; b < grid_size; ++b)
        total += partials[b]; /* WRONG: device memory: cudaMemcpy it to the host first */
    CUDA_CHECK(cudaMemcpy(sum, &total, sizeof(elem_t), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaFree(partials));
}
