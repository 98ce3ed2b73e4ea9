/* The accumulator cleared on one non-blocking stream, the kernel run on another, no event between.
 * Stage: 05
 * Type: int
 * Verdict: wrong
 * Model: sum
 * GPU: latent
 * Source: CUDA Programming Guide, "Streams" (work in different streams may run in any order;
 *         cudaEventRecord and cudaStreamWaitEvent order it)
 * Why: nothing orders the memset before the kernel: if it runs late it wipes the blocks' sums.
 *      On an H200 one run of make corpus saw a repeat's sum differ, the next saw nothing: no
 *      tool of a GPU checks the order of two streams
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t input_s[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    size_t i = 2 * (size_t)blockDim.x * blockIdx.x + t;
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
    static cudaStream_t clear, compute;
    if (clear == nullptr) {
        CUDA_CHECK(cudaStreamCreateWithFlags(&clear, cudaStreamNonBlocking));
        CUDA_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    }
    size_t segment_size = 2 * (size_t)block_size;
    unsigned int grid_size = (unsigned int)((n + segment_size - 1) / segment_size);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t), clear));
    /* WRONG: an event recorded on `clear` and waited for on `compute` must come here */
    reduce_kernel<<<grid_size, block_size, 0, compute>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(compute)); /* the sum is complete before reduce() returns */
}
