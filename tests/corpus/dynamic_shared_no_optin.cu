/* Each block stages its whole segment, 16 elements a thread, in dynamic shared memory first.
 * Stage: 06
 * Type: int
 * Verdict: wrong
 * Model: resources
 * GPU: launch
 * Source: CUDA Programming Guide, "Shared Memory" (more than 48 KB of dynamic shared memory needs
 *         cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...))
 * Why: 16 * 1024 * 4 bytes = 64 KiB for a block of 1024: above 48 KiB a launch is refused
 *      (invalid argument) unless the kernel opted in with cudaFuncSetAttribute; 512 and below fit
 */
#include "check.h"
#include "reduce.h"

#define PER_THREAD 16

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    extern __shared__ elem_t tile[]; /* PER_THREAD * blockDim.x elements */
    unsigned int t = threadIdx.x, threads = blockDim.x;
    size_t start = (size_t)PER_THREAD * threads * blockIdx.x;
    /* coalesced: consecutive threads load consecutive elements */
    for (unsigned int k = t; k < PER_THREAD * threads; k += threads)
        tile[k] = start + k < n ? input[start + k] : IDENTITY;
    __syncthreads();
    elem_t x = IDENTITY;
    for (unsigned int k = 0; k < PER_THREAD; ++k) /* rotated: no two threads on one bank */
        x += tile[t * PER_THREAD + (k + t) % PER_THREAD];
    __syncthreads();
    tile[t] = x;
    for (unsigned int stride = threads / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (t < stride)
            tile[t] += tile[t + stride];
    }
    if (t == 0)
        atomicAdd(sum, tile[0]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment = (size_t)PER_THREAD * block_size;
    unsigned int grid = (unsigned int)((n + segment - 1) / segment);
    size_t bytes = segment * sizeof(elem_t);
    /* WRONG: above 48 KiB, cudaFuncSetAttribute(reduce_kernel,
     * cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) must come before the launch */
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size, bytes>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
