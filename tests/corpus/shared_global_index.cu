/* A block's shared array indexed by the thread's global index instead of threadIdx.x.
 * Stage: 05
 * Type: int
 * Verdict: wrong
 * Model: memory
 * GPU: crash
 * Source: a mistake of students moving from a one-block kernel to many blocks (the index i was
 *         the thread's index while there was one block)
 * Why: shared memory is the block's own: input_s[i] with i up to n runs past its 1024 elements
 *      from the third block of 256 on, outside the block's shared window: an H200 stops the kernel
 *      (an illegal address, at the next synchronisation); at n = 1000, block 32, i stays below
 *      1024 and nothing shows
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
    input_s[i] = first + second; /* WRONG: the block's shared array, the grid's index */
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (t < stride)
            input_s[i] += input_s[i + stride];
    }
    if (t == 0)
        atomicAdd(sum, input_s[i]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment_size = 2 * (size_t)block_size;
    unsigned int grid_size = (unsigned int)((n + segment_size - 1) / segment_size);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid_size, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
