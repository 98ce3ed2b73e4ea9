/* Harris's kernel 6: the block size a template parameter, the launch picked by a switch.
 * Stage: 06
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: Harris 2007, "Optimizing Parallel Reduction in CUDA", kernel 6 (template <blockSize>)
 * Why: kernel<256><<<g, b, bytes>>> over several lines, __shared__ sized by a template
 *      parameter, if-constexpr rounds the compiler removes, the last warp with __syncwarp
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

template <unsigned int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_kernel(const elem_t *__restrict__ input, size_t n,
                                                       elem_t *__restrict__ sum)
{
    __shared__ elem_t sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (BLOCK * 2) + tid;
    size_t grid = (size_t)BLOCK * 2 * gridDim.x;
    elem_t x = IDENTITY;
    while (i < n) {
        x += input[i];
        if (i + BLOCK < n)
            x += input[i + BLOCK];
        i += grid;
    }
    sdata[tid] = x;
    __syncthreads();
#pragma unroll
    for (unsigned int s = BLOCK / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] = x = x + sdata[tid + s];
        __syncthreads();
    }
    /* the last 64 partial sums: one warp, its lanes ordered by __syncwarp, not by luck */
    if (tid < 32) {
        if constexpr (BLOCK >= 64)
            x += sdata[tid + 32];
        for (unsigned int s = 16; s > 0; s >>= 1) {
            __syncwarp();
            sdata[tid] = x;
            __syncwarp();
            if (tid < s)
                x += sdata[tid + s];
        }
        if (tid == 0)
            atomicAdd(sum, x);
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t per_block = 2 * (size_t)block_size;
    size_t blocks = (n + per_block - 1) / per_block;
    unsigned int grid = (unsigned int)(blocks < 2048 ? blocks : 2048);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    switch (block_size) {
    case 1024: reduce_kernel<1024><<<grid, 1024>>>(input, n, sum); break;
    case 512:
        reduce_kernel<512>
            <<<grid,
               512>>>(input, n, sum);
        break;
    case 256: reduce_kernel<256><<<grid, 256>>>(input, n, sum); break;
    case 128: reduce_kernel<128><<<grid, 128>>>(input, n, sum); break;
    case 64: reduce_kernel<64><<<grid, 64>>>(input, n, sum); break;
    default: reduce_kernel<32><<<grid, 32>>>(input, n, sum); break;
    }
    CUDA_CHECK_LAUNCH();
}
