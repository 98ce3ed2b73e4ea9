/* Stage 1 with its atomicAdd written as the Programming Guide's compare-and-swap loop.
 * Stage: 01
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: CUDA C++ Programming Guide, "Atomic Functions" (atomicAdd for double from atomicCAS)
 * Why: the loop reads the old value with a plain load, then retries atomicCAS until no other
 *      thread changed it in between: the plain read is a guess, not a data race
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__device__ int add_by_cas(int *address, int value)
{
    unsigned int *word = (unsigned int *)address;
    unsigned int old = *word, assumed;
    do {
        assumed = old;
        old = atomicCAS(word, assumed, (unsigned int)((int)assumed + value));
    } while (assumed != old);
    return (int)old;
}

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        add_by_cas(sum, input[i]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    unsigned int grid = (unsigned int)((n + block_size - 1) / block_size);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
