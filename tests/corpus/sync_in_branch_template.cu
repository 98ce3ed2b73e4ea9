/* A template kernel whose __syncthreads() sits inside `if (tid < s)`, after the add it guards.
 * Stage: 06
 * Type: int
 * Verdict: wrong
 * Model: barrier
 * GPU: synccheck
 * Source: Harris 2007, "Optimizing Parallel Reduction in CUDA" (template <blockSize>), its barrier
 *         moved into the branch: "only the threads that added need to wait"
 * Why: __syncthreads() must be reached by every thread of the block; here only those below s
 *      reach it, in the last rounds part of a warp (synccheck: "Divergent thread(s) in warp");
 *      an H200 does not hang (threads that leave count as arrived) and the sums come out right
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

template <unsigned int BLOCK>
__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    elem_t x = IDENTITY;
    for (size_t i = (size_t)blockIdx.x * BLOCK + tid; i < n; i += (size_t)BLOCK * gridDim.x)
        x += input[i];
    sdata[tid] = x;
    __syncthreads();
#pragma unroll
    for (unsigned int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
            __syncthreads(); /* WRONG: the threads at or above s never reach this barrier */
        }
    }
    if (tid == 0)
        atomicAdd(sum, sdata[0]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t blocks = (n + block_size - 1) / block_size;
    unsigned int grid = (unsigned int)(blocks < 1024 ? blocks : 1024);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    switch (block_size) {
    case 1024: reduce_kernel<1024><<<grid, 1024>>>(input, n, sum); break;
    case 512: reduce_kernel<512><<<grid, 512>>>(input, n, sum); break;
    case 256: reduce_kernel<256><<<grid, 256>>>(input, n, sum); break;
    case 128: reduce_kernel<128><<<grid, 128>>>(input, n, sum); break;
    case 64: reduce_kernel<64><<<grid, 64>>>(input, n, sum); break;
    default: reduce_kernel<32><<<grid, 32>>>(input, n, sum); break;
    }
    CUDA_CHECK_LAUNCH();
}
