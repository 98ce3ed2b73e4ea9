/* Device helpers that declare their own __shared__ arrays, one forced inline, one never inlined.
 * Stage: 07
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: CUDA C++ Programming Guide, "Function Execution Space Specifiers" (__noinline__,
 *         __forceinline__) and "Variable Memory Space Specifiers" (__shared__ in a function)
 * Why: a __shared__ variable declared in a device function is one per block, wherever the
 *      compiler puts the function's body; a real call (__noinline__) still reaches block barriers
 *      with every thread of the block
 */
#include "check.h"
#include "reduce.h"

#define WARP_SIZE 32
#define FULL_MASK 0xffffffffu

const struct stage_info STAGE = {.on_gpu = true};

__device__ __forceinline__ elem_t warp_sum(elem_t x)
{
    for (unsigned int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
        x += __shfl_down_sync(FULL_MASK, x, offset);
    return x; /* in lane 0 */
}

/* The sum of each warp's lane 0 values, in thread 0. */
__device__ __forceinline__ elem_t sum_of_warps(elem_t x)
{
    __shared__ elem_t warp_sums[BLOCK_MAX / WARP_SIZE];
    unsigned int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    if (lane == 0)
        warp_sums[warp] = x;
    __syncthreads();
    x = IDENTITY;
    if (warp == 0)
        x = warp_sum(lane < blockDim.x / WARP_SIZE ? warp_sums[lane] : IDENTITY);
    return x;
}

/* The block's sum, returned to every thread. Called once per thread. */
__device__ __noinline__ elem_t block_sum(elem_t x)
{
    __shared__ elem_t total;
    x = sum_of_warps(warp_sum(x));
    if (threadIdx.x == 0)
        total = x;
    __syncthreads();
    return total;
}

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    elem_t x = IDENTITY;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)blockDim.x * gridDim.x)
        x += input[i];
    elem_t total = block_sum(x);
    if (threadIdx.x == blockDim.x - 1) /* any one thread will do: each has the total */
        atomicAdd(sum, total);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t blocks = (n + block_size - 1) / block_size;
    unsigned int grid = (unsigned int)(blocks < 1024 ? blocks : 1024);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
