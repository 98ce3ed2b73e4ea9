/* PMPP's shared-memory kernel with its additions written as lambdas inside the kernel.
 * Stage: 04
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: PMPP 4th ed., chapter 10, SharedMemorySumReductionKernel (Fig. 10.11)
 * Why: a lambda defined in device code (no __device__ annotation needed there), and one that
 *      captures the thread's index and the __shared__ array by reference
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true, .single_block = true};

__global__ void SharedMemorySumReductionKernel(const elem_t *input, elem_t *output)
{
    __shared__ elem_t input_s[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    auto add = [](elem_t a, elem_t b) { return a + b; };
    /* one round of the tree: the upper `stride` partial sums onto the lower ones */
    auto fold = [&](unsigned int stride) {
        if (t < stride)
            input_s[t] = add(input_s[t], input_s[t + stride]);
    };
    input_s[t] = add(input[t], input[t + blockDim.x]); /* padded to 2 * blockDim.x */
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        __syncthreads(); /* this round reads what the last one wrote */
        fold(stride);
    }
    if (t == 0)
        *output = input_s[0];
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    (void)n;
    SharedMemorySumReductionKernel<<<1, block_size>>>(input, sum);
    CUDA_CHECK_LAUNCH();
}
