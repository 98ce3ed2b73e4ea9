/* A histogram kernel's warp aggregation: lanes bound for the same shared counter merge first.
 * Stage: 06
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: CUDA C++ Programming Guide, "Warp Match Functions" (__match_any_sync); NVIDIA
 *         Developer Blog, "Using CUDA Warp-Level Primitives" (aggregating atomics by key)
 * Why: the block keeps two shared accumulators, negative elements and the rest; __match_any_sync
 *      groups the lanes by bucket, each group sums with __reduce_add_sync(peers) and its leader
 *      makes one shared atomicAdd; one global atomicAdd a block
 */
#include "check.h"
#include "reduce.h"

#define FULL_MASK 0xffffffffu

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t bucket[2]; /* [0]: elements >= 0, [1]: elements < 0 */
    if (threadIdx.x < 2)
        bucket[threadIdx.x] = IDENTITY;
    __syncthreads();
    unsigned int lane = threadIdx.x % 32;
    /* base is the same for the whole block: every lane takes every turn of the loop */
    for (size_t base = (size_t)blockIdx.x * blockDim.x; base < n;
         base += (size_t)blockDim.x * gridDim.x) {
        size_t i = base + threadIdx.x;
        elem_t x = i < n ? input[i] : IDENTITY;
        int key = x < 0;
        unsigned int peers = __match_any_sync(FULL_MASK, key); /* lanes with my key */
        elem_t group_sum = __reduce_add_sync(peers, x);
        if (lane == __ffs(peers) - 1)
            atomicAdd(&bucket[key], group_sum); /* shared memory */
    }
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(sum, bucket[0] + bucket[1]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t blocks = (n + block_size - 1) / block_size;
    unsigned int grid = (unsigned int)(blocks < 1024 ? blocks : 1024);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
