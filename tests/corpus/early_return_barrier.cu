/* Stage 5 with the threads past the end of the input sent home first: `if (i >= n) return;`.
 * Stage: 05
 * Type: int
 * Verdict: wrong
 * Model: barrier
 * GPU: tests
 * Source: the guard `if (idx >= n) return;` of element-wise kernels (CUDA samples' vectorAdd
 *         uses `if (i < n)`), copied into a kernel with barriers
 * Why: in the last, partial block the threads past n leave before the __syncthreads() the others
 *      wait at, and their input_s slots are never written: the tree adds what shared memory held;
 *      an H200 counts exited threads as arrived (no hang, synccheck silent), and the stale slots
 *      gave wrong sums at n = 2^24 + 3, right ones up to 100003
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t input_s[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    size_t i = 2 * (size_t)blockDim.x * blockIdx.x + t;
    if (i >= n)
        return; /* WRONG: these threads skip the barriers below, their slots stay unwritten */
    elem_t second = i + blockDim.x < n ? input[i + blockDim.x] : IDENTITY;
    input_s[t] = input[i] + second;
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
