/* The Programming Guide's last-block sum, a launch per chunk, its count never set back to 0.
 * Stage: 08
 * Type: int
 * Verdict: wrong
 * Model: sum
 * GPU: tests
 * Source: CUDA C++ Programming Guide, "Memory Fence Functions" (atomicInc(&count, gridDim.x)),
 *         without the `count = 0` its last block ends with
 * Why: atomicInc with limit gridDim.x leaves count at gridDim.x after a launch; the next launch
 *      (the second chunk for n > 65536) starts from it, no block sees gridDim.x - 1, and that
 *      chunk's sum is never added
 */
#include "check.h"
#include "reduce.h"

#define BLOCK 256
#define MAX_GRID 256                    /* slots of partials: one launch, one chunk */
#define CHUNK ((size_t)MAX_GRID * BLOCK) /* elements a launch sums */

const struct stage_info STAGE = {.on_gpu = true, .fixed_block = BLOCK};

__device__ unsigned int count = 0;
__device__ elem_t partials[MAX_GRID];

__device__ elem_t block_sum(elem_t x)
{
    __shared__ elem_t s[BLOCK];
    s[threadIdx.x] = x;
    for (unsigned int stride = BLOCK / 2; stride > 0; stride /= 2) {
        __syncthreads();
        if (threadIdx.x < stride)
            s[threadIdx.x] += s[threadIdx.x + stride];
    }
    __syncthreads();
    return s[0];
}

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ bool is_last_block_done;
    size_t i = (size_t)blockIdx.x * BLOCK + threadIdx.x;
    elem_t partial = block_sum(i < n ? input[i] : IDENTITY);
    if (threadIdx.x == 0) {
        ((volatile elem_t *)partials)[blockIdx.x] = partial;
        __threadfence();
        unsigned int value = atomicInc(&count, gridDim.x);
        is_last_block_done = value == gridDim.x - 1;
    }
    __syncthreads();
    if (is_last_block_done) {
        elem_t x = threadIdx.x < gridDim.x ? ((volatile elem_t *)partials)[threadIdx.x] : IDENTITY;
        x = block_sum(x);
        if (threadIdx.x == 0)
            atomicAdd(sum, x); /* WRONG: and count = 0 for the next launch is missing */
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    (void)block_size;
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    for (size_t start = 0; start < n; start += CHUNK) {
        size_t len = n - start < CHUNK ? n - start : CHUNK;
        unsigned int grid = (unsigned int)((len + BLOCK - 1) / BLOCK);
        reduce_kernel<<<grid, BLOCK>>>(input + start, len, sum);
        CUDA_CHECK_LAUNCH();
    }
}
