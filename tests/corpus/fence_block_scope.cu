/* Stage 8 with a block-scope fence: it orders the slot for its own block, not the last one.
 * Stage: 08
 * Type: int
 * Verdict: wrong
 * Model: race
 * GPU: latent
 * Source: CUDA samples' threadFenceReduction, __threadfence_block() for __threadfence()
 * Why: __threadfence_block() orders memory for the threads of its block only: the last block,
 *      another one, may read the slot before the store reaches it
 */
#include "check.h"
#include "reduce.h"

#define WARP_SIZE 32
#define FULL_MASK 0xffffffffu
#define BLOCK 256
#define MAX_GRID 1024

const struct stage_info STAGE = {.on_gpu = true, .fixed_block = BLOCK};

static __device__ elem_t partials[MAX_GRID];
static __device__ unsigned int ticket;

__device__ elem_t block_reduce(elem_t x)
{
    __shared__ elem_t warp_sums[BLOCK / WARP_SIZE];
    unsigned int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    for (unsigned int offset = WARP_SIZE / 2; offset >= 1; offset /= 2)
        x += __shfl_down_sync(FULL_MASK, x, offset);
    if (lane == 0)
        warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        x = lane < BLOCK / WARP_SIZE ? warp_sums[lane] : IDENTITY;
        for (unsigned int offset = WARP_SIZE / 2; offset >= 1; offset /= 2)
            x += __shfl_down_sync(FULL_MASK, x, offset);
    }
    return x;
}

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    unsigned int t = threadIdx.x;
    elem_t partial = IDENTITY;
    for (size_t i = (size_t)blockIdx.x * BLOCK + t; i < n; i += (size_t)BLOCK * gridDim.x)
        partial += input[i];
    partial = block_reduce(partial);
    __shared__ bool last;
    if (t == 0) {
        partials[blockIdx.x] = partial;
        __threadfence_block(); /* WRONG: the last block is another block */
        last = atomicInc(&ticket, gridDim.x - 1) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    elem_t x = IDENTITY;
    for (unsigned int b = t; b < gridDim.x; b += BLOCK)
        x += __ldcg(&partials[b]);
    x = block_reduce(x);
    if (t == 0)
        *sum = x;
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    (void)block_size;
    size_t blocks = (n + BLOCK - 1) / BLOCK;
    unsigned int grid_size = (unsigned int)(blocks < MAX_GRID ? blocks : MAX_GRID);
    reduce_kernel<<<grid_size, BLOCK>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
