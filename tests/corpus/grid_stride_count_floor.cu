/* A grid-stride loop that counts its iterations first: n / (threads in the grid), rounded down.
 * Stage: 06
 * Type: int
 * Verdict: wrong
 * Model: sum
 * GPU: tests
 * Source: a grid-stride loop (NVIDIA's "CUDA Pro Tip: Write Flexible Kernels with Grid-Stride
 *         Loops") rewritten as a counted loop "so that the compiler can unroll it"
 * Why: the count is rounded down: the last n % (grid * block) elements are never read, and for
 *      n = 1000 with 1024 threads in the grid no thread reads anything (the sum is 0)
 */
#include "check.h"
#include "reduce.h"

#define MAX_GRID 120 /* "about one block per multiprocessor" */

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t input_s[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + t;
    size_t per_thread = n / stride; /* WRONG: rounded down, the last n % stride are left out */
    elem_t partial = IDENTITY;
#pragma unroll 4
    for (size_t k = 0; k < per_thread; ++k)
        partial += input[i + k * stride];
    input_s[t] = partial;
    for (unsigned int s = blockDim.x / 2; s >= 1; s /= 2) {
        __syncthreads();
        if (t < s)
            input_s[t] += input_s[t + s];
    }
    if (t == 0)
        atomicAdd(sum, input_s[0]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t blocks = (n + block_size - 1) / block_size;
    unsigned int grid = (unsigned int)(blocks < MAX_GRID ? blocks : MAX_GRID);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
