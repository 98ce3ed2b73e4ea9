/* A butterfly inside each half-warp (__shfl_xor_sync, width 16), then the two halves combined.
 * Stage: 07
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: CUDA C++ Programming Guide, "Warp Shuffle Functions" (__shfl_xor_sync, the width
 *         argument: a butterfly reduction within segments of the warp)
 * Why: with width 16 lane l exchanges with l ^ m inside its own 16-lane segment, so after four
 *      steps every lane holds its half-warp's sum; one full-width xor by 16 adds the other half,
 *      and every lane has the warp's sum
 */
#include "check.h"
#include "reduce.h"

#define FULL_MASK 0xffffffffu

const struct stage_info STAGE = {.on_gpu = true};

__device__ elem_t warp_sum(elem_t x)
{
    for (int m = 8; m > 0; m >>= 1)
        x += __shfl_xor_sync(FULL_MASK, x, m, 16); /* half-warp butterfly */
    return x + __shfl_xor_sync(FULL_MASK, x, 16);  /* lane l and lane l ^ 16: the two halves */
}

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t warp_sums[BLOCK_MAX / 32];
    unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    elem_t x = IDENTITY;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)blockDim.x * gridDim.x)
        x += input[i];
    x = warp_sum(x);
    if (lane == 31) /* every lane has it: the last one writes */
        warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        x = warp_sum(lane < blockDim.x / 32 ? warp_sums[lane] : IDENTITY);
        if (lane == 0)
            atomicAdd(sum, x);
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t blocks = (n + block_size - 1) / block_size;
    unsigned int grid = (unsigned int)(blocks < 2048 ? blocks : 2048);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
