/* Blocks take chunks from a global queue (atomicAdd), the last one out resets it (atomicExch).
 * Stage: 06
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: CUDA C++ Programming Guide, "Atomic Functions" (atomicAdd, atomicInc, atomicExch) and
 *         "Memory Fence Functions"; the persistent-blocks work queue of dynamic load balancing
 * Why: thread 0 takes the next chunk and shares it through __shared__, barriers on both sides;
 *      every thread adds into a shared accumulator with atomicAdd, thread 0 adds it to the sum;
 *      atomicInc counts finished blocks, fences order each block's last take before its count
 */
#include "check.h"
#include "reduce.h"

#define CHUNK 4 /* elements a thread a chunk */

const struct stage_info STAGE = {.on_gpu = true};

__device__ unsigned int next_chunk = 0;  /* chunks handed out in this launch */
__device__ unsigned int blocks_done = 0; /* blocks that found the queue empty */

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ unsigned int chunk;
    __shared__ elem_t block_total;
    size_t chunk_size = (size_t)CHUNK * blockDim.x;
    size_t chunks = (n + chunk_size - 1) / chunk_size;
    if (threadIdx.x == 0)
        block_total = IDENTITY;
    elem_t x = IDENTITY;
    for (;;) {
        if (threadIdx.x == 0)
            chunk = atomicAdd(&next_chunk, 1u);
        __syncthreads(); /* the chunk is written before anyone reads it */
        size_t c = chunk;
        __syncthreads(); /* and read by all before thread 0 takes the next */
        if (c >= chunks)
            break; /* the same c for every thread */
        for (unsigned int k = 0; k < CHUNK; ++k) {
            size_t i = c * chunk_size + (size_t)k * blockDim.x + threadIdx.x;
            if (i < n)
                x += input[i];
        }
    }
    atomicAdd(&block_total, x); /* shared memory: one address, every thread */
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(sum, block_total);
        __threadfence(); /* this block's last take from the queue comes before its count */
        if (atomicInc(&blocks_done, gridDim.x - 1) == gridDim.x - 1) { /* wraps to 0 */
            __threadfence(); /* every other block's count, and so its last take, seen first */
            atomicExch(&next_chunk, 0u); /* the next launch starts at chunk 0 */
        }
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t chunk_size = (size_t)CHUNK * block_size;
    size_t chunks = (n + chunk_size - 1) / chunk_size;
    unsigned int grid = (unsigned int)(chunks < 264 ? chunks : 264); /* 2 a multiprocessor */
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
