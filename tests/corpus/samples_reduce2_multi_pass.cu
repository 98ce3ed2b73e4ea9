/* cuda-samples' reduce2 driven as the sample drives it: pass after pass over the partial sums.
 * Stage: 05
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: NVIDIA cuda-samples, Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu
 *         (reduce2; Harris 2007, kernel 3: sequential addressing) and reduction.cpp's pass loop
 * Why: each block writes its sum to slot blockIdx.x, the host launches again on the slots until
 *      one block is left, which stores the sum; two scratch buffers, so no pass reads what it
 *      writes
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce2(const elem_t *g_idata, elem_t *g_odata, size_t n)
{
    extern __shared__ elem_t sdata[];
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? g_idata[i] : IDENTITY;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        g_odata[blockIdx.x] = sdata[0];
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    static elem_t *scratch;
    static size_t capacity;
    size_t first = (n + block_size - 1) / block_size; /* slots the first pass writes */
    size_t second = (first + block_size - 1) / block_size;
    if (capacity < first + second) {
        CUDA_CHECK(cudaFree(scratch)); /* waits for the work that used it */
        CUDA_CHECK(cudaMalloc(&scratch, (first + second) * sizeof(elem_t)));
        capacity = first + second;
    }
    elem_t *slots[2] = {scratch, scratch + first}; /* pass k writes slots[k % 2] */
    const elem_t *in = input;
    size_t count = n;
    for (int pass = 0;; ++pass) {
        size_t blocks = (count + block_size - 1) / block_size;
        elem_t *out = blocks == 1 ? sum : slots[pass % 2]; /* the last pass stores the sum */
        reduce2<<<(unsigned int)blocks, block_size, block_size * sizeof(elem_t)>>>(in, out, count);
        CUDA_CHECK_LAUNCH();
        if (blocks == 1)
            break;
        in = out;
        count = blocks;
    }
}
