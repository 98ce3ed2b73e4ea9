/* A template kernel that clears its shared array with a strided loop whose bound is <=, not <.
 * Stage: 06
 * Type: int
 * Verdict: wrong
 * Model: memory
 * GPU: crash
 * Source: Harris 2007's template <blockSize> kernel, with the shared-histogram habit of clearing
 *         shared memory first (NVIDIA's "GPU Pro Tip: Fast Histograms Using Shared Atomics")
 * Why: k <= BLOCK runs one step too far: thread 0 writes sdata[BLOCK], one element past the array
 *      and past the block's shared window: an H200 stops the kernel (an illegal address, at the
 *      next synchronisation) at every block size; memcheck names the write
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

template <unsigned int BLOCK>
__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    for (unsigned int k = tid; k <= BLOCK; k += BLOCK) /* WRONG: <= writes sdata[BLOCK] */
        sdata[k] = IDENTITY;
    __syncthreads();
    for (size_t i = (size_t)blockIdx.x * BLOCK + tid; i < n; i += (size_t)BLOCK * gridDim.x)
        sdata[tid] += input[i];
#pragma unroll
    for (unsigned int s = BLOCK / 2; s > 0; s >>= 1) {
        __syncthreads();
        if (tid < s)
            sdata[tid] += sdata[tid + s];
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
