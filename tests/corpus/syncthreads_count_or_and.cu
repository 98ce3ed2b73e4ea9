/* Barriers that also vote: __syncthreads_or, __syncthreads_and and __syncthreads_count.
 * Stage: 06
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: CUDA C++ Programming Guide, "Synchronization Functions" (__syncthreads_count, _and,
 *         _or); Harris 2007, kernel 3 (sequential addressing)
 * Why: a block past the end leaves when no thread has an element (or), a block of zeros skips its
 *      atomic (and), the tree starts at the power of two above the threads with data (count,
 *      __clz): each vote is the same for every thread, so each exit is the whole block's
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t sdata[BLOCK_MAX];
    unsigned int tid = threadIdx.x;
    size_t first = (size_t)blockIdx.x * 2 * blockDim.x + tid; /* this thread's first element */
    /* The grid fills the GPU whatever n: for a small n its last blocks have nothing to add. */
    if (!__syncthreads_or(first < n))
        return;
    elem_t x = IDENTITY;
    for (size_t i = first; i < n; i += (size_t)2 * blockDim.x * gridDim.x) {
        x += input[i];
        if (i + blockDim.x < n)
            x += input[i + blockDim.x];
    }
    if (__syncthreads_and(x == IDENTITY)) /* nothing to add: sparse input costs no atomic */
        return;
    sdata[tid] = x;
    /* Threads 0 .. active - 1 have elements (those past the end are a suffix): the tree over the
     * next power of two covers them. The vote is also the barrier after the stores above. */
    unsigned int active = __syncthreads_count(first < n);
    unsigned int width = active == 1 ? 1 : 1u << (32 - __clz(active - 1));
    for (unsigned int s = width / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        atomicAdd(sum, sdata[0]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    int device, sm_count;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    unsigned int grid = 4 * (unsigned int)sm_count; /* a function of the GPU, not of n */
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
