/* float32 warp sums that shuffle the float's bits as an int, first within 8-lane groups.
 * Stage: 07
 * Type: float
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: CUDA C++ Programming Guide, "Warp Shuffle Functions" (__shfl_sync and its width) and
 *         "Type Casting Intrinsics" (__float_as_int, __int_as_float)
 * Why: __shfl_sync(mask, bits, src, 8) reads lane src of the caller's own 8-lane group, so a
 *      butterfly over src = (lane ^ m) % 8 sums each group; two full-width exchanges (lane ^ 8,
 *      lane ^ 16) add the groups; the bits travel unchanged, the adds are float adds
 */
#include "check.h"
#include "reduce.h"

#define FULL_MASK 0xffffffffu

const struct stage_info STAGE = {.on_gpu = true};

__device__ __forceinline__ float shfl_bits(float x, int src, int width)
{
    return __int_as_float(__shfl_sync(FULL_MASK, __float_as_int(x), src, width));
}

__device__ float warp_sum(float x)
{
    int lane = threadIdx.x % 32;
    for (int m = 4; m > 0; m >>= 1)
        x += shfl_bits(x, (lane ^ m) % 8, 8); /* within the group of 8 */
    x += shfl_bits(x, lane ^ 8, 32);          /* the neighbouring group */
    x += shfl_bits(x, lane ^ 16, 32);         /* the other half-warp */
    return x;                                 /* in every lane */
}

__global__ void reduce_kernel(const float *input, size_t n, float *sum)
{
    __shared__ float warp_sums[BLOCK_MAX / 32];
    unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float x = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)blockDim.x * gridDim.x)
        x += input[i];
    x = warp_sum(x);
    if (lane == 0)
        warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        x = warp_sum(lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f);
        if (lane == 0)
            atomicAdd(sum, x); /* float atomicAdd: blocks in any order */
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t blocks = (n + block_size - 1) / block_size;
    unsigned int grid = (unsigned int)(blocks < 1024 ? blocks : 1024);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
