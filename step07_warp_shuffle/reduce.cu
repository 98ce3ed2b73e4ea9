/* Stage 7: warp shuffles and 16-byte loads (CUB's WarpReduce; its ancestor: Harris 2007 kernel 5).
 *
 * Concept: the warp, 32 lanes that can read each other's registers. Goal: as fast as NVIDIA's CUB.
 *
 * The last five rounds of stage 6's tree ran inside one warp yet paid two shared-memory loads,
 * a store and a block barrier each. __shfl_down_sync lets lane l read lane l + offset's register
 * directly: a warp sums its 32 partial sums in 5 shuffles, no shared memory, no barrier. Each
 * warp's sum goes through a small shared array (one slot a warp), and warp 0 sums those.
 * And each load is 16 bytes (elem4_t, four elements): a quarter of the load instructions for the
 * same bytes, COARSE_FACTOR * 2 of them in flight before the first add.
 * Pitfall: the 2007 version unrolled the last warp with `volatile` shared memory and no
 * synchronisation. Since Volta the lanes of a warp are scheduled independently: that is a data
 * race. The _sync shuffle, with the mask of lanes taking part, is correct by construction.
 */
#include "check.h"
#include "reduce.h"

#define COARSE_FACTOR 2 /* loads in flight a thread: COARSE_FACTOR * 2 (variants/) */
#define WARP_SIZE 32
#define FULL_MASK 0xffffffffu /* all 32 lanes take part in each shuffle */

const struct stage_info STAGE = {.on_gpu = true};

/* Sums x over the 32 lanes of a warp through registers; the warp's sum is valid in lane 0. */
__device__ elem_t warp_reduce(elem_t x)
{
    for (unsigned int offset = WARP_SIZE / 2; offset >= 1; offset /= 2)
        x += __shfl_down_sync(FULL_MASK, x, offset); /* lane l adds lane l + offset's x */
    return x;
}

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t warp_sums[BLOCK_MAX / WARP_SIZE];
    unsigned int t = threadIdx.x;
    const elem4_t *input4 = (const elem4_t *)input; /* cudaMalloc aligns to 256 bytes */
    size_t n4 = n / 4;
    elem_t partial = IDENTITY;
    /* 64-bit: n may pass 2^32 */
    for (size_t segment = COARSE_FACTOR * 2 * (size_t)blockDim.x * blockIdx.x; segment < n4;
         segment += COARSE_FACTOR * 2 * (size_t)blockDim.x * gridDim.x) {
        size_t i = segment + t;
        /* Unrolled: every load is issued before the first add. */
        for (unsigned int tile = 0; tile < COARSE_FACTOR * 2; ++tile)
            if (i + tile * blockDim.x < n4) {
                elem4_t v = input4[i + tile * blockDim.x];
                partial += v.x + v.y + v.z + v.w;
            }
    }
    if (blockIdx.x == 0 && t < n % 4) /* the last n % 4 elements, past the last whole vector */
        partial += input[4 * n4 + t];
    partial = warp_reduce(partial);
    unsigned int lane = t % WARP_SIZE, warp = t / WARP_SIZE;
    if (lane == 0)
        warp_sums[warp] = partial;
    __syncthreads(); /* every warp's sum is written before warp 0 reads them */
    if (warp == 0) {
        partial = warp_reduce(lane < blockDim.x / WARP_SIZE ? warp_sums[lane] : IDENTITY);
        if (lane == 0)
            atomicAdd(sum, partial); /* blocks finish in any order: + is commutative */
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment_size = COARSE_FACTOR * 2 * (size_t)block_size * 4;
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
