/* Warp-aggregated atomics: inside `if (i < n)` the live lanes are found with a full-mask ballot.
 * Stage: 01
 * Type: int
 * Verdict: wrong
 * Model: barrier
 * GPU: latent
 * Source: NVIDIA's "CUDA Pro Tip: Optimized Filtering with Warp-Aggregated Atomics", its
 *         __activemask() replaced by __ballot_sync(0xffffffff, 1)
 * Why: __ballot_sync's mask must name only lanes that call it: in the last warp with elements the
 *      lanes past n never reach this ballot (__activemask() asks which lanes are here); on an H200
 *      those lanes have exited, the ballot returns the live ones, every sum is right and synccheck
 *      is silent
 */
#include "check.h"
#include "reduce.h"

#define FULL_MASK 0xffffffffu

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int lane = threadIdx.x % 32;
    if (i < n) {
        /* WRONG: FULL_MASK names the lanes with i >= n, which never call this ballot */
        unsigned int active = __ballot_sync(FULL_MASK, 1);
        elem_t warp_total = __reduce_add_sync(active, input[i]);
        if (lane == __ffs(active) - 1) /* the lowest live lane: one atomic a warp */
            atomicAdd(sum, warp_total);
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    unsigned int grid = (unsigned int)((n + block_size - 1) / block_size);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
