/* cuda-samples' reduce6: many elements a thread on a small grid, its loop picked by nIsPow2.
 * Stage: 06
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: NVIDIA cuda-samples, Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu
 *         (reduce6 and its 64-block default grid; Harris 2007, kernel 7: multiple adds a thread)
 * Why: template <blockSize, bool nIsPow2> with two grid-stride loops, __restrict__ pointers,
 *      #pragma unroll over a loop whose trip count is a template constant, the launch chosen
 *      by a host function template
 */
#include "check.h"
#include "reduce.h"

#define FULL_MASK 0xffffffffu
#define MAX_BLOCKS 64 /* the sample's default: each thread walks n / (64 * blockSize) elements */

const struct stage_info STAGE = {.on_gpu = true};

template <unsigned int blockSize, bool nIsPow2>
__global__ void reduce6(const elem_t *__restrict__ g_idata, elem_t *__restrict__ g_odata,
                        size_t n)
{
    __shared__ elem_t sdata[blockSize];
    unsigned int tid = threadIdx.x;
    size_t gridSize = (size_t)blockSize * gridDim.x;
    elem_t mySum = IDENTITY;
    if (nIsPow2) { /* the sample's fast path: two loads an iteration */
        size_t i = (size_t)blockIdx.x * blockSize * 2 + tid;
        gridSize <<= 1;
        while (i < n) {
            mySum += g_idata[i];
            if (i + blockSize < n) /* n may still be less than a block's 2 * blockSize */
                mySum += g_idata[i + blockSize];
            i += gridSize;
        }
    } else {
        for (size_t i = (size_t)blockIdx.x * blockSize + tid; i < n; i += gridSize)
            mySum += g_idata[i];
    }
    sdata[tid] = mySum;
    __syncthreads();
#pragma unroll
    for (unsigned int s = blockSize / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        if (blockSize >= 64)
            mySum += sdata[tid + 32];
#pragma unroll
        for (unsigned int offset = 16; offset > 0; offset /= 2)
            mySum += __shfl_down_sync(FULL_MASK, mySum, offset);
        if (tid == 0)
            atomicAdd(g_odata, mySum);
    }
}

template <unsigned int blockSize>
static void launch(const elem_t *input, size_t n, elem_t *sum)
{
    size_t blocks = (n + 2 * blockSize - 1) / (2 * blockSize);
    unsigned int grid = (unsigned int)(blocks < MAX_BLOCKS ? blocks : MAX_BLOCKS);
    if ((n & (n - 1)) == 0)
        reduce6<blockSize, true><<<grid, blockSize>>>(input, sum, n);
    else
        reduce6<blockSize, false><<<grid, blockSize>>>(input, sum, n);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    switch (block_size) {
    case 1024: launch<1024>(input, n, sum); break;
    case 512: launch<512>(input, n, sum); break;
    case 256: launch<256>(input, n, sum); break;
    case 128: launch<128>(input, n, sum); break;
    case 64: launch<64>(input, n, sum); break;
    default: launch<32>(input, n, sum); break;
    }
    CUDA_CHECK_LAUNCH();
}
