/* Stage 5 whose threads load their segment in bit-reversed order (__brev), an FFT's permutation.
 * Stage: 05
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: CUDA Math API, integer intrinsics (__brev, __ffs); the bit-reversal of radix-2 FFTs
 * Why: __brev(t) >> (32 - log2(blockDim.x)) is a permutation of 0..blockDim.x-1: each element is
 *      still loaded once, so the sum is stage 5's; log2 of the block from __ffs
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t input_s[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    unsigned int bits = __ffs((int)blockDim.x) - 1;     /* blockDim.x = 2^bits */
    unsigned int r = __brev(t) >> (32 - bits);          /* t's bits, reversed */
    size_t i = 2 * (size_t)blockDim.x * blockIdx.x + r; /* element r of this segment's halves */
    elem_t first = i < n ? input[i] : IDENTITY;
    elem_t second = i + blockDim.x < n ? input[i + blockDim.x] : IDENTITY;
    input_s[t] = first + second;
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (t < stride)
            input_s[t] += input_s[t + stride];
    }
    if (t == 0)
        atomicAdd(sum, input_s[0]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment_size = 2 * (size_t)block_size;
    unsigned int grid_size = (unsigned int)((n + segment_size - 1) / segment_size);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid_size, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
