/* cuda-samples' reduce3, a function template launched with its type deduced from the arguments.
 * Stage: 05
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: NVIDIA cuda-samples, Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu
 *         (reduce3; Harris 2007, kernel 4: first add during global load)
 * Why: reduce3<<<g, b>>>(input, sum, n) with `template <class T>`: T deduced as elem_t; the
 *      running sum kept in a register (sdata[tid] = mySum = mySum + ...), a static __shared__
 *      array of the template's type
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

template <class T> __global__ void reduce3(const T *g_idata, T *g_odata, size_t n)
{
    __shared__ T sdata[BLOCK_MAX];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (blockDim.x * 2) + tid;
    /* the first level of the tree, on the way in: two elements a thread */
    T mySum = i < n ? g_idata[i] : T(0);
    if (i + blockDim.x < n)
        mySum += g_idata[i + blockDim.x];
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        atomicAdd(g_odata, mySum); /* thread 0's register holds the block's sum */
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t per_block = 2 * (size_t)block_size;
    unsigned int grid = (unsigned int)((n + per_block - 1) / per_block);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce3<<<grid, block_size>>>(input, sum, n); /* T = elem_t, from `input` and `sum` */
    CUDA_CHECK_LAUNCH();
}
