/* Stage 8: the same float sum, bit for bit, on every run and every GPU, in one launch (beyond the
 * lecture: CUDA samples' threadFenceReduction; CUB's deterministic DeviceReduce::Sum).
 *
 * Concept: a fixed order of additions. Goal: reproducible float sums at CUB's speed.
 *
 * Stage 7's blocks add their partial sums with atomicAdd, in the order they happen to finish:
 * with floats, whose + is not associative, the last bits change from run to run. Here block b
 * writes its partial sum to slot b of an array instead, and the last block to finish sums the
 * slots in index order with the same tree. Which block is last varies; what it computes does not.
 * The grid is a function of n alone (at most MAX_GRID blocks of BLOCK threads, whatever the GPU),
 * so every addition's operands are a function of n: the same bits on every run and every GPU.
 * One launch, no memset: the ticket that finds the last block resets itself.
 * Pitfall: the last block may read a slot before its writer's store is visible to it (the store
 * sits in another multiprocessor's path to memory, the load in this one's L1 cache). The writer's
 * __threadfence() between its store and its ticket, and a load that bypasses L1, close that gap.
 */
#include "check.h"
#include "reduce.h"

#define COARSE_FACTOR 2 /* loads in flight a thread: COARSE_FACTOR * 2 (variants/) */
#define WARP_SIZE 32
#define FULL_MASK 0xffffffffu /* all 32 lanes take part in each shuffle */
#define BLOCK 256             /* fixed, as is the grid below: the order depends on n alone */
#define MAX_GRID 1024         /* about one block per 256 threads an H200 holds at once */

const struct stage_info STAGE = {.on_gpu = true, .fixed_block = BLOCK};

static __device__ elem_t partials[MAX_GRID]; /* block b's partial sum, in slot b */
static __device__ unsigned int ticket;       /* blocks done in this launch; 0 between launches */

/* Sums x over lanes 0 .. lanes - 1 of a warp (lanes: a power of two, at most 32; the other lanes
 * hold the identity) through registers; the sum is valid in lane 0. */
__device__ elem_t warp_reduce(elem_t x, unsigned int lanes)
{
#if !defined(REDUCE_FLOAT) && __CUDA_ARCH__ >= 800
    /* int32: one instruction (redux.sync, sm_80 on) instead of five shuffles. Integer + is
     * associative, so its order, whatever the hardware's, cannot change the sum's bits. */
    (void)lanes;
    return __reduce_add_sync(FULL_MASK, x);
#else
    for (unsigned int offset = lanes / 2; offset >= 1; offset /= 2)
        x += __shfl_down_sync(FULL_MASK, x, offset); /* lane l adds lane l + offset's x */
    return x;
#endif
}

/* Sums x over the block: each warp's sum through a small shared array, then warp 0 sums those.
 * Valid in thread 0. */
__device__ elem_t block_reduce(elem_t x)
{
    __shared__ elem_t warp_sums[BLOCK / WARP_SIZE];
    unsigned int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    x = warp_reduce(x, WARP_SIZE);
    if (lane == 0)
        warp_sums[warp] = x;
    __syncthreads(); /* every warp's sum is written before warp 0 reads them */
    /* 8 warp sums: 3 halvings, not 5. Same bits: the 2 skipped would only add the identity. */
    if (warp == 0)
        x = warp_reduce(lane < BLOCK / WARP_SIZE ? warp_sums[lane] : IDENTITY, BLOCK / WARP_SIZE);
    return x;
}

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    unsigned int t = threadIdx.x;
    const elem4_t *input4 = (const elem4_t *)input; /* cudaMalloc aligns to 256 bytes */
    size_t n4 = n / 4;
    elem_t partial = IDENTITY;
    /* 64-bit: n may pass 2^32 */
    for (size_t segment = COARSE_FACTOR * 2 * (size_t)BLOCK * blockIdx.x; segment < n4;
         segment += COARSE_FACTOR * 2 * (size_t)BLOCK * gridDim.x) {
        size_t i = segment + t;
        /* Unrolled: every load is issued before the first add. */
        for (unsigned int tile = 0; tile < COARSE_FACTOR * 2; ++tile)
            if (i + tile * BLOCK < n4) {
                elem4_t v = input4[i + tile * BLOCK];
                partial += v.x + v.y + v.z + v.w;
            }
    }
    if (blockIdx.x == 0 && t < n % 4) /* the last n % 4 elements, past the last whole vector */
        partial += input[4 * n4 + t];
    partial = block_reduce(partial);
    if (gridDim.x == 1) { /* one block: its sum is the sum, no ticket needed */
        if (t == 0)
            *sum = partial;
        return;
    }
    __shared__ bool last;
    if (t == 0) {
        partials[blockIdx.x] = partial;
        /* release: the slot is visible to every block before the ticket counts this block */
        __threadfence();
        /* atomicInc wraps to 0 after gridDim.x - 1: the last block leaves 0 for the next launch */
        last = atomicInc(&ticket, gridDim.x - 1) == gridDim.x - 1;
        if (last)
            __threadfence(); /* acquire: the loads below come after it saw every count */
    }
    __syncthreads(); /* `last` is written before the block reads it */
    if (!last)
        return;
    /* The last block: slot b to thread b % BLOCK, in index order, then the same tree. */
    elem_t x = IDENTITY;
    for (unsigned int b = t; b < gridDim.x; b += BLOCK)
        x += __ldcg(&partials[b]); /* ld.global.cg: from L2, past this multiprocessor's L1 */
    x = block_reduce(x);
    if (t == 0)
        *sum = x;
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    (void)block_size; /* BLOCK: the harness takes no other (STAGE.fixed_block) */
    size_t segment_size = COARSE_FACTOR * 2 * (size_t)BLOCK * 4;
    size_t segments = (n + segment_size - 1) / segment_size;
    /* A function of n alone: as many blocks as segments, up to MAX_GRID on every GPU. */
    unsigned int grid_size = (unsigned int)(segments < MAX_GRID ? segments : MAX_GRID);
    reduce_kernel<<<grid_size, BLOCK>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
