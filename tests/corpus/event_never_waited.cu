/* The kernel on a non-blocking stream, an event recorded after it, and nothing that waits for it.
 * Stage: 06
 * Type: int
 * Verdict: wrong
 * Model: sum
 * GPU: tests
 * Source: CUDA Runtime API, cudaEventRecord and cudaStreamWaitEvent: recording an event marks a
 *         point in a stream, it does not wait for it
 * Why: the harness copies the sum on the legacy default stream, which a non-blocking stream is not
 *      ordered with: without cudaStreamWaitEvent(0, done) or cudaEventSynchronize(done) the copy
 *      may run before the kernel's sums are in (on an H200: at n = 2^24 + 3 always, at 100003 at
 *      times)
 */
#include "check.h"
#include "reduce.h"

#define COARSE_FACTOR 4

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t input_s[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    size_t i = (size_t)COARSE_FACTOR * blockDim.x * blockIdx.x + t;
    elem_t x = IDENTITY;
#pragma unroll
    for (unsigned int k = 0; k < COARSE_FACTOR; ++k)
        if (i + k * blockDim.x < n)
            x += input[i + k * blockDim.x];
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
    static cudaStream_t stream;
    static cudaEvent_t done;
    if (stream == nullptr) {
        CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    }
    size_t segment = (size_t)COARSE_FACTOR * block_size;
    unsigned int grid = (unsigned int)((n + segment - 1) / segment);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t), stream));
    reduce_kernel<<<grid, block_size, 0, stream>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(done, stream)); /* WRONG: recorded, never waited for */
}
