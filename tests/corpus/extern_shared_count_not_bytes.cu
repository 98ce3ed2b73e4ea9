/* Dynamic shared memory sized at the launch by the number of elements, not the number of bytes.
 * Stage: 06
 * Type: int
 * Verdict: wrong
 * Model: memory
 * GPU: crash
 * Source: CUDA Programming Guide, "Execution Configuration" (Ns: the bytes of dynamic shared
 *         memory), given block_size as in many forum questions
 * Why: the third launch parameter is bytes: block_size bytes hold block_size / 4 ints, and the
 *      threads past the first quarter write past input_s[]; an H200 stops the kernel (an illegal
 *      address, at the next synchronisation) at block 256, while at block 32 the writes stay
 *      inside the block's shared window and only memcheck reports them
 */
#include "check.h"
#include "reduce.h"

#define COARSE_FACTOR 4

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    extern __shared__ elem_t input_s[];
    unsigned int t = threadIdx.x;
    elem_t x = IDENTITY;
    for (size_t segment = (size_t)COARSE_FACTOR * blockDim.x * blockIdx.x; segment < n;
         segment += (size_t)COARSE_FACTOR * blockDim.x * gridDim.x) {
#pragma unroll
        for (unsigned int k = 0; k < COARSE_FACTOR; ++k) {
            size_t i = segment + k * blockDim.x + t;
            x += i < n ? input[i] : IDENTITY;
        }
    }
    input_s[t] = x;
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
    size_t segment = (size_t)COARSE_FACTOR * block_size;
    size_t blocks = (n + segment - 1) / segment;
    unsigned int grid = (unsigned int)(blocks < 1024 ? blocks : 1024);
    size_t shared_bytes = block_size; /* WRONG: block_size * sizeof(elem_t) bytes are needed */
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size, shared_bytes>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
