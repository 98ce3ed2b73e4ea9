/* bob: stage 5 with the stride halved by a shift and the two loads of a segment in a loop. */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t partial[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    size_t base = (size_t)blockIdx.x * 2 * blockDim.x + t;
    elem_t x = IDENTITY;
    for (int k = 0; k < 2; ++k)
        if (base + k * (size_t)blockDim.x < n)
            x += input[base + k * (size_t)blockDim.x];
    partial[t] = x;
    for (unsigned int stride = blockDim.x >> 1; stride > 0; stride >>= 1) {
        __syncthreads();
        if (t < stride)
            partial[t] += partial[t + stride];
    }
    if (t == 0)
        atomicAdd(sum, partial[0]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    unsigned int blocks = (unsigned int)((n + 2 * (size_t)block_size - 1) / (2 * (size_t)block_size));
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<blocks, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
