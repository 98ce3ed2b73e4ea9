/* PMPP's coarsened kernel writing one slot a block into cudaMallocAsync memory, a second kernel.
 * Stage: 06
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: PMPP 4th ed., chapter 10, CoarsenedSumReductionKernel (Fig. 10.15); CUDA Runtime API,
 *         stream-ordered allocation (cudaMallocAsync, cudaFreeAsync)
 * Why: the partial sums live in scratch allocated and freed in stream order around the two
 *      launches; two kernels in one file, each with its own __shared__ array
 */
#include "check.h"
#include "reduce.h"

#define COARSE_FACTOR 4
#define WARP_SIZE 32
#define FULL_MASK 0xffffffffu

const struct stage_info STAGE = {.on_gpu = true};

__global__ void CoarsenedSumReductionKernel(const elem_t *input, size_t n, elem_t *partials)
{
    __shared__ elem_t input_s[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    size_t segment = COARSE_FACTOR * 2 * (size_t)blockDim.x * blockIdx.x;
    size_t i = segment + t;
    elem_t sum = IDENTITY;
    for (unsigned int tile = 0; tile < COARSE_FACTOR * 2; ++tile)
        if (i + (size_t)tile * blockDim.x < n)
            sum += input[i + (size_t)tile * blockDim.x];
    input_s[t] = sum;
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (t < stride)
            input_s[t] += input_s[t + stride];
    }
    if (t == 0)
        partials[blockIdx.x] = input_s[0]; /* a slot a block: no atomic */
}

/* One block sums the slots: a loop over them, warp shuffles, the warps' sums in shared memory. */
__global__ void sum_partials(const elem_t *partials, unsigned int count, elem_t *sum)
{
    __shared__ elem_t warp_sums[BLOCK_MAX / WARP_SIZE];
    unsigned int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    elem_t x = IDENTITY;
    for (unsigned int b = threadIdx.x; b < count; b += blockDim.x)
        x += partials[b];
    for (unsigned int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
        x += __shfl_down_sync(FULL_MASK, x, offset);
    if (lane == 0)
        warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        x = lane < blockDim.x / WARP_SIZE ? warp_sums[lane] : IDENTITY;
        for (unsigned int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
            x += __shfl_down_sync(FULL_MASK, x, offset);
        if (lane == 0)
            *sum = x;
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment = COARSE_FACTOR * 2 * (size_t)block_size;
    unsigned int grid = (unsigned int)((n + segment - 1) / segment);
    elem_t *partials;
    CUDA_CHECK(cudaMallocAsync(&partials, grid * sizeof(elem_t), 0));
    CoarsenedSumReductionKernel<<<grid, block_size>>>(input, n, partials);
    CUDA_CHECK_LAUNCH();
    sum_partials<<<1, block_size>>>(partials, grid, sum);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaFreeAsync(partials, 0)); /* after both kernels, in stream order */
}
