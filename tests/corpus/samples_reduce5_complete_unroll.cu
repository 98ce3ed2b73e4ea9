/* cuda-samples' reduce5: every step of the tree unrolled by the block size, a template parameter.
 * Stage: 06
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: NVIDIA cuda-samples, Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu
 *         (reduce5, warpReduceSum; Harris 2007, kernel 6: completely unrolled)
 * Why: `if ((blockSize >= 512) && (tid < 256))` steps each followed by cg::sync(cta) outside the
 *      if, a warpReduceSum template specialised for int with __reduce_add_sync on sm_80 and up,
 *      the kernel picked from a table of instantiations and launched through a pointer
 */
#include <cooperative_groups.h>

#include "check.h"
#include "reduce.h"

namespace cg = cooperative_groups;

const struct stage_info STAGE = {.on_gpu = true};

template <class T> __device__ __forceinline__ T warpReduceSum(unsigned int mask, T mySum)
{
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        mySum += __shfl_down_sync(mask, mySum, offset);
    return mySum;
}

#if __CUDA_ARCH__ >= 800
template <> __device__ __forceinline__ int warpReduceSum<int>(unsigned int mask, int mySum)
{
    return __reduce_add_sync(mask, mySum); /* one instruction: redux.sync */
}
#endif

template <unsigned int blockSize>
__global__ void reduce5(const elem_t *g_idata, elem_t *g_odata, size_t n)
{
    __shared__ elem_t sdata[blockSize];
    cg::thread_block cta = cg::this_thread_block();
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (blockSize * 2) + tid;
    elem_t mySum = i < n ? g_idata[i] : IDENTITY;
    if (i + blockSize < n)
        mySum += g_idata[i + blockSize];
    sdata[tid] = mySum;
    cg::sync(cta);
    /* blockSize is a constant: the steps it does not need compile to nothing but their barrier */
    if ((blockSize >= 1024) && (tid < 512))
        sdata[tid] = mySum = mySum + sdata[tid + 512];
    cg::sync(cta);
    if ((blockSize >= 512) && (tid < 256))
        sdata[tid] = mySum = mySum + sdata[tid + 256];
    cg::sync(cta);
    if ((blockSize >= 256) && (tid < 128))
        sdata[tid] = mySum = mySum + sdata[tid + 128];
    cg::sync(cta);
    if ((blockSize >= 128) && (tid < 64))
        sdata[tid] = mySum = mySum + sdata[tid + 64];
    cg::sync(cta);
    if (tid < 32) { /* warp 0, whole */
        if (blockSize >= 64)
            mySum += sdata[tid + 32];
        mySum = warpReduceSum<elem_t>(0xffffffffu, mySum);
    }
    if (tid == 0)
        atomicAdd(g_odata, mySum);
}

typedef void (*kernel_t)(const elem_t *, elem_t *, size_t);
static const kernel_t kernels[] = {reduce5<32>,  reduce5<64>,  reduce5<128>,
                                   reduce5<256>, reduce5<512>, reduce5<1024>};

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    unsigned int k = 0;
    while ((32u << k) < block_size) /* block_size = 32 << k */
        ++k;
    kernel_t kernel = kernels[k];
    size_t per_block = 2 * (size_t)block_size;
    unsigned int grid = (unsigned int)((n + per_block - 1) / per_block);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    kernel<<<grid, block_size>>>(input, sum, n);
    CUDA_CHECK_LAUNCH();
}
