/* Stage 6: thread coarsening (PMPP 10.8, the notes' "Coarse Solution": variant step06_lecture),
 * on a grid that fills the GPU once (Harris 2007 kernel 7, CUB's grid-stride loop).
 *
 * Concept: the price of parallelism. Goal: as many blocks as the GPU runs at once, no more.
 *
 * Stage 5 launched a block per segment of 2 * blockDim.x elements: n / 512 blocks, far more than
 * the GPU holds, so the hardware ran them in waves, each block paying its tree of barriers and
 * its atomic for 2 elements a thread. "If the hardware serializes the surplus
 * blocks, we are better off serializing them ourselves": here the grid is just what fills every
 * multiprocessor once, and each block walks its segments with a grid-stride loop (segment b,
 * b + gridDim.x, ...), each thread adding COARSE_FACTOR * 2 elements a segment into a register,
 * with no barrier. The coarse factor is then n / (grid x block): as large as the GPU needs.
 * Pitfall: the lecture's version puts the whole body, barriers included, under `if (i < n)`. Here
 * each load is checked on its own and every thread reaches every barrier.
 */
#include "check.h"
#include "reduce.h"

#define COARSE_FACTOR 2 /* loads in flight a thread: COARSE_FACTOR * 2 (variants/) */

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t input_s[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    elem_t partial = IDENTITY;
    /* 64-bit: n may pass 2^32 */
    for (size_t segment = COARSE_FACTOR * 2 * (size_t)blockDim.x * blockIdx.x; segment < n;
         segment += COARSE_FACTOR * 2 * (size_t)blockDim.x * gridDim.x) {
        size_t i = segment + t;
        /* Unrolled: every load is issued before the first add. */
        for (unsigned int tile = 0; tile < COARSE_FACTOR * 2; ++tile)
            partial += i + tile * blockDim.x < n ? input[i + tile * blockDim.x] : IDENTITY;
    }
    input_s[t] = partial;
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        __syncthreads(); /* this round reads the partial sums the last round wrote */
        if (t < stride)
            input_s[t] += input_s[t + stride];
    }
    if (t == 0)
        atomicAdd(sum, input_s[0]); /* blocks finish in any order: + is commutative */
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment_size = COARSE_FACTOR * 2 * (size_t)block_size;
    size_t segments = (n + segment_size - 1) / segment_size;
    /* Just enough blocks to fill every multiprocessor once; more would only queue up. The
     * occupancy calculator counts every limit on the blocks a multiprocessor holds at once:
     * threads, blocks, registers and shared memory. */
    int device, sm_count, blocks_per_sm;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, reduce_kernel,
                                                             block_size, 0));
    size_t resident = (size_t)sm_count * blocks_per_sm;
    unsigned int grid_size = (unsigned int)(segments < resident ? segments : resident);
    /* The accumulator starts at the identity; each block adds its partial sum. */
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid_size, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
