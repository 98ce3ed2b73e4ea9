/* 128 independent accumulators a thread, "to break the dependence chain", fully unrolled.
 * Stage: 06
 * Type: int
 * Verdict: wrong
 * Model: resources
 * GPU: launch
 * Source: the several-accumulators idiom of CPU SIMD code (and PMPP 4th ed., chapter 10's thread
 *         coarsening), pushed to 128 accumulators
 * Why: the 128 accumulators live across the loop: ptxas -v says 161 registers a thread; a
 *      multiprocessor has 65536, so a block of 512 or 1024 threads is refused at the launch
 *      ("too many resources requested for launch"); 256 and below launch
 * Needs: nvcc
 */
#include "check.h"
#include "reduce.h"

#define ACC 128

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t input_s[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    elem_t acc[ACC]; /* WRONG: 128 values live at once: more than 128 registers a thread */
#pragma unroll
    for (unsigned int k = 0; k < ACC; ++k)
        acc[k] = IDENTITY;
    size_t stride = (size_t)ACC * blockDim.x * gridDim.x;
    for (size_t base = (size_t)ACC * blockDim.x * blockIdx.x + t; base < n; base += stride) {
#pragma unroll
        for (unsigned int k = 0; k < ACC; ++k) { /* 128 independent adds, 128 loads in flight */
            size_t i = base + (size_t)k * blockDim.x;
            if (i < n)
                acc[k] += input[i];
        }
    }
    elem_t x = IDENTITY;
#pragma unroll
    for (unsigned int k = 0; k < ACC; ++k)
        x += acc[k];
    input_s[t] = x;
    for (unsigned int s = blockDim.x / 2; s >= 1; s /= 2) {
        __syncthreads();
        if (t < s)
            input_s[t] += input_s[t + s];
    }
    if (t == 0)
        atomicAdd(sum, input_s[0]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment = (size_t)ACC * block_size;
    size_t blocks = (n + segment - 1) / segment;
    unsigned int grid = (unsigned int)(blocks < 1024 ? blocks : 1024);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
