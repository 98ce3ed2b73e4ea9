/* Stage 5 with its grid size from a ceiling division helper that forgot its + 1.
 * Stage: 05
 * Type: int
 * Verdict: wrong
 * Model: sum
 * GPU: tests
 * Source: the ceiling division (n + d - 1) / d written as (n - 1) / d, an off-by-one seen in
 *         many forum threads on grid sizes
 * Why: ceil(n / d) is (n - 1) / d + 1: one block too few, so the last segment (all of it when
 *      n is a multiple of the segment, the partial one otherwise) is never summed
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

static inline unsigned int div_up(size_t n, size_t d)
{
    return (unsigned int)((n - 1) / d); /* WRONG: ceil(n / d) is (n - 1) / d + 1 */
}

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
    unsigned int grid_size = div_up(n, 2 * (size_t)block_size);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid_size, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
