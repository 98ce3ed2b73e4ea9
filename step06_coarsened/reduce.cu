/* Stage 6: thread coarsening (PMPP 10.9).
 *
 * Concept: the price of parallelism. Goal: fewer blocks, each thread doing more useful work.
 *
 * When n is far larger than what the GPU runs at once, the hardware runs the blocks one wave after
 * another anyway, and each block pays its tree of barriers. Here each thread first sums
 * COARSE_FACTOR * 2 elements of its segment serially, in a register, with no barrier, and only
 * then enters the tree: COARSE_FACTOR times fewer blocks and trees for the same n.
 * Pitfall: the lecture's version puts the whole body, barriers included, under `if (i < n)`. In the
 * last block some threads would skip a __syncthreads() that others wait at (undefined, it can
 * hang), and the threads inside still read up to COARSE_FACTOR * 2 * blockDim.x elements past the
 * end. Here each load is checked on its own and every thread reaches every barrier.
 */
#include "check.h"
#include "reduce.h"

#define COARSE_FACTOR 2

const struct stage_info STAGE = {
    .on_gpu = true,
    .single_block = false,
    .in_place = false,
    .default_block = 256, /* small blocks: several share a multiprocessor */
};

// BEGIN kernel
__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t input_s[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    /* 64-bit: n may pass 2^32 */
    size_t segment = COARSE_FACTOR * 2 * (size_t)blockDim.x * blockIdx.x;
    size_t i = segment + t;
    elem_t partial = IDENTITY;
    /* Unrolled: every load is issued before the first add. */
    for (unsigned int tile = 0; tile < COARSE_FACTOR * 2; ++tile)
        partial += i + tile * blockDim.x < n ? input[i + tile * blockDim.x] : IDENTITY;
    input_s[t] = partial;
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        __syncthreads(); /* this round reads the partial sums the last round wrote */
        if (t < stride)
            input_s[t] += input_s[t + stride];
    }
    if (t == 0)
        atomicAdd(sum, input_s[0]); /* blocks finish in any order: + is commutative */
}
// END kernel

// BEGIN host
void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment_size = COARSE_FACTOR * 2 * (size_t)block_size;
    unsigned int grid_size = (unsigned int)((n + segment_size - 1) / segment_size);
    /* The accumulator starts at the identity; each block adds its partial sum. */
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid_size, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
// END host
