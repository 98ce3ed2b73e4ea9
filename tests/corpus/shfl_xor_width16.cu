/* A butterfly in two half-warps (width 16), then one more xor step "across the halves".
 * Stage: 07
 * Type: int
 * Verdict: wrong
 * Model: sum
 * GPU: tests
 * Source: CUDA Programming Guide, "Warp Shuffle Functions" (__shfl_xor_sync, its width
 *         parameter: a warp split into segments of width lanes)
 * Why: with width 16 each half-warp is a segment of its own: lane ^ 16 lies outside the lane's
 *      segment, so the lane gets its own value back and each warp's sum is twice its lower half
 */
#include "check.h"
#include "reduce.h"

#define WARP_SIZE 32
#define HALF 16
#define FULL_MASK 0xffffffffu

const struct stage_info STAGE = {.on_gpu = true};

__device__ elem_t warp_sum(elem_t x)
{
    /* each half-warp first: 4 butterfly steps inside segments of 16 lanes */
    for (int mask = HALF / 2; mask > 0; mask /= 2)
        x += __shfl_xor_sync(FULL_MASK, x, mask, HALF);
    /* WRONG: the other half-warp is outside a width-16 segment: width must be WARP_SIZE here */
    x += __shfl_xor_sync(FULL_MASK, x, HALF, HALF);
    return x;
}

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t warp_sums[BLOCK_MAX / WARP_SIZE];
    unsigned int t = threadIdx.x, lane = t % WARP_SIZE, warp = t / WARP_SIZE;
    size_t i = 2 * (size_t)blockDim.x * blockIdx.x + t;
    elem_t x = i < n ? input[i] : IDENTITY;
    if (i + blockDim.x < n)
        x += input[i + blockDim.x];
    x = warp_sum(x);
    if (lane == 0)
        warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        x = warp_sum(lane < blockDim.x / WARP_SIZE ? warp_sums[lane] : IDENTITY);
        if (lane == 0)
            atomicAdd(sum, x);
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment = 2 * (size_t)block_size;
    unsigned int grid = (unsigned int)((n + segment - 1) / segment);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
