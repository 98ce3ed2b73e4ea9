/* Stage 5 with each block's partial sum added into the result by a plain +=, not atomicAdd.
 * Stage: 05
 * Type: int
 * Verdict: wrong
 * Model: race
 * GPU: tests
 * Source: PMPP 4th ed., chapter 10 (the segmented kernel) with its atomicAdd "simplified" away
 * Why: *sum += x is a load, an add and a store: two blocks that load the same old value both
 *      store old + their own, and one partial sum is lost; racecheck sees only shared memory
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
        *sum += input_s[0]; /* WRONG: blocks run at once: a read-modify-write of one address */
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment_size = 2 * (size_t)block_size;
    unsigned int grid_size = (unsigned int)((n + segment_size - 1) / segment_size);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid_size, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
