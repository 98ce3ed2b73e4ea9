/* cuda-samples' reduce1 in one block: contiguous threads, strided index, log2 found with __ffs.
 * Stage: 02
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: NVIDIA cuda-samples, Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu
 *         (reduce1; Harris 2007, kernel 2: interleaved addressing with bank conflicts)
 * Why: the 2 * blockDim.x padded elements copied to shared memory, then index = 2 * s * tid
 *      written as shifts, the number of rounds from __ffs of a power of two
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true, .single_block = true};

__global__ void reduce1(const elem_t *input, elem_t *sum)
{
    __shared__ elem_t sdata[2 * BLOCK_MAX];
    unsigned int tid = threadIdx.x;
    unsigned int size = 2 * blockDim.x;      /* the harness padded the input to this */
    unsigned int levels = __ffs(size) - 1;   /* size = 2^levels: its only set bit */
    sdata[tid] = input[tid];
    sdata[tid + blockDim.x] = input[tid + blockDim.x];
    __syncthreads();
    for (unsigned int level = 0; level < levels; ++level) {
        /* s = 2^level; thread tid adds the pair at index 2 * s * tid: threads 0, 1, 2, ... are
         * the active ones (no divergence), their addresses 2s apart (bank conflicts) */
        unsigned int index = tid << (level + 1);
        if (index < size)
            sdata[index] += sdata[index + (1u << level)];
        __syncthreads();
    }
    if (tid == 0)
        *sum = sdata[0];
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    (void)n; /* n <= 2 * block_size, the rest is the identity */
    reduce1<<<1, block_size>>>(input, sum);
    CUDA_CHECK_LAUNCH();
}
