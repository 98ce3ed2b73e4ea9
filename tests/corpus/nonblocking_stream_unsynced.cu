/* Stage 5 on a stream of its own, created non-blocking, never waited for.
 * Stage: 05
 * Type: int
 * Verdict: wrong
 * Model: sum
 * GPU: tests
 * Source: CUDA Runtime API, cudaStreamCreateWithFlags(cudaStreamNonBlocking)
 * Why: work on a non-blocking stream is not ordered with the legacy default stream, where the
 *      harness copies the sum back: the copy may run before the kernel has written the sum
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
    static cudaStream_t stream;
    if (stream == nullptr)
        CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    size_t segment_size = 2 * (size_t)block_size;
    unsigned int grid_size = (unsigned int)((n + segment_size - 1) / segment_size);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t), stream));
    reduce_kernel<<<grid_size, block_size, 0, stream>>>(input, n, sum);
    CUDA_CHECK_LAUNCH(); /* WRONG: nothing waits for `stream` before the harness reads the sum */
}
