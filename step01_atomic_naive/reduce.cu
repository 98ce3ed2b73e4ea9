/* Stage 1: one atomicAdd per element.
 *
 * Concept: data parallelism, and the cost of a shared accumulator. Goal: the simplest correct GPU
 * reduction, for any n.
 *
 * Thread i adds element i into one global accumulator. The additions may happen in any order (+ is
 * associative and commutative) but never at the same time: atomicAdd makes each read-modify-write
 * indivisible, so the n additions still form one chain, now run at the speed of the one L2 slice
 * that owns the accumulator (atomic contention). The next stages build a reduction tree instead.
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    /* 64-bit: blockIdx.x * blockDim.x is 32-bit and wraps past 2^32 elements. */
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) /* the last block may run past the end */
        atomicAdd(sum, input[i]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    unsigned int grid_size = (unsigned int)((n + block_size - 1) / block_size);
    /* The accumulator starts at the identity; each thread adds its element. */
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid_size, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
