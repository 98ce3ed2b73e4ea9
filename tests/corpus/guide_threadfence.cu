/* The CUDA Programming Guide's one-pass sum: the last block to finish adds the partial sums.
 * Stage: 08
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: CUDA C++ Programming Guide, "Memory Fence Functions" (the sum kernel with a count)
 * Why: each block's thread 0 stores its partial sum (volatile), __threadfence(), then takes a
 *      ticket with atomicInc; the last block reads every partial sum, with no fence of its own
 */
#include "check.h"
#include "reduce.h"

#define BLOCK 256
#define MAX_GRID 1024

const struct stage_info STAGE = {.on_gpu = true, .fixed_block = BLOCK};

__device__ unsigned int count = 0;
__device__ elem_t partials[MAX_GRID];

__device__ elem_t block_sum(elem_t x)
{
    __shared__ elem_t s[BLOCK];
    s[threadIdx.x] = x;
    __syncthreads();
    for (unsigned int stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride)
            s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    return s[0];
}

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ bool is_last_block_done;
    elem_t x = IDENTITY;
    for (size_t i = (size_t)blockIdx.x * BLOCK + threadIdx.x; i < n; i += (size_t)BLOCK * gridDim.x)
        x += input[i];
    elem_t partial = block_sum(x);
    volatile elem_t *result = partials;
    if (threadIdx.x == 0) {
        result[blockIdx.x] = partial;
        __threadfence(); /* the partial sum is visible before the count says so */
        unsigned int value = atomicInc(&count, gridDim.x);
        is_last_block_done = value == gridDim.x - 1;
    }
    __syncthreads();
    if (is_last_block_done) {
        elem_t total = IDENTITY;
        for (unsigned int b = threadIdx.x; b < gridDim.x; b += BLOCK)
            total += result[b];
        total = block_sum(total);
        if (threadIdx.x == 0) {
            *sum = total;
            count = 0;
        }
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    (void)block_size;
    size_t blocks = (n + BLOCK - 1) / BLOCK;
    unsigned int grid = (unsigned int)(blocks < MAX_GRID ? blocks : MAX_GRID);
    reduce_kernel<<<grid, BLOCK>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
