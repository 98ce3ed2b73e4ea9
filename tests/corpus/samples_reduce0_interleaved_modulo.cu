/* cuda-samples' reduce0: interleaved pairs picked with %, its shared array behind SharedMemory<T>.
 * Stage: 05
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: NVIDIA cuda-samples, Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu
 *         (reduce0; Harris 2007, kernel 1: interleaved addressing, divergent branching)
 * Why: extern __shared__ reached through a templated struct's conversion operator, cg::sync(cta)
 *      between rounds, a kernel that zeroes the sum and the reduce kernel launched on one line
 */
#include <cooperative_groups.h>

#include "check.h"
#include "reduce.h"

namespace cg = cooperative_groups;

const struct stage_info STAGE = {.on_gpu = true};

/* The sample's helper: one extern array, cast to T. Each instantiation of a templated kernel
 * that declared `extern __shared__ T sdata[]` would redeclare one symbol with another type. */
template <class T> struct SharedMemory {
    __device__ inline operator T *()
    {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
};

__global__ void zero(elem_t *sum) { *sum = IDENTITY; }

template <class T> __global__ void reduce0(const T *g_idata, T *g_odata, size_t n)
{
    cg::thread_block cta = cg::this_thread_block();
    T *sdata = SharedMemory<T>();
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? g_idata[i] : IDENTITY; /* the partial last block: the identity */
    cg::sync(cta);
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        /* modulo: the active threads are spread over every warp (the lesson's slow start) */
        if (tid % (2 * s) == 0)
            sdata[tid] += sdata[tid + s];
        cg::sync(cta); /* every thread, every round */
    }
    if (tid == 0)
        atomicAdd(g_odata, sdata[0]); /* one partial sum per block */
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    unsigned int grid = (unsigned int)((n + block_size - 1) / block_size);
    size_t bytes = block_size * sizeof(elem_t);
    /* Both on the default stream, in order: the sum is zero before any block adds to it. */
    zero<<<1, 1>>>(sum); reduce0<elem_t><<<grid, block_size, bytes>>>(input, sum, n);
    CUDA_CHECK_LAUNCH();
}
