/* Stage 1's atomic a warp at a time: votes find whole, partial and empty warps, one atomic each.
 * Stage: 01
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: NVIDIA Developer Blog, "CUDA Pro Tip: Optimized Filtering with Warp-Aggregated
 *         Atomics"; CUDA Programming Guide, "Warp Vote Functions", "Warp Reduce Functions"
 * Why: __any_sync lets an empty warp leave whole, __all_sync picks the whole warps, which add with
 *      __activemask as the mask (each group that arrives together is its own reduction, so it is
 *      right whatever the mask), __ballot_sync and __popc count the partial warp's elements,
 *      __ffs elects the leader, printf once when n == 1
 */
#include "check.h"
#include "reduce.h"

#define FULL_MASK 0xffffffffu

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int lane = threadIdx.x % 32;
    if (!__any_sync(FULL_MASK, i < n)) /* the same answer in every lane: the warp leaves whole */
        return;
    if (__all_sync(FULL_MASK, i < n)) {
        unsigned int group = __activemask(); /* converged here: all 32 lanes */
        elem_t x = __reduce_add_sync(group, input[i]);
        if (lane == __ffs(group) - 1)
            atomicAdd(sum, x);
    } else { /* the grid's last warp, partly past n */
        unsigned int valid = __ballot_sync(FULL_MASK, i < n);
        elem_t x = __reduce_add_sync(FULL_MASK, i < n ? input[i] : IDENTITY);
        if (blockIdx.x == 0 && threadIdx.x == 0 && n == 1)
            printf("reduce: %d of warp 0's lanes have an element\n", __popc(valid));
        if (lane == __ffs(valid) - 1) /* the lowest lane with an element */
            atomicAdd(sum, x);
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    unsigned int grid = (unsigned int)((n + block_size - 1) / block_size);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
