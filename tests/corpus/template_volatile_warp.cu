/* Harris's kernel 6 as published: template <blockSize>, its warpReduce on volatile shared memory.
 * Stage: 06
 * Type: int
 * Verdict: wrong
 * Model: race
 * GPU: racecheck
 * Source: Harris 2007, "Optimizing Parallel Reduction in CUDA", kernel 6 (warpReduce<blockSize>)
 * Why: since Volta the lanes of a warp are not in lockstep: lane t may read sdata[t + 16] before
 *      lane t + 16 has written it; volatile keeps the values in memory, it orders nothing
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

template <unsigned int blockSize>
__device__ void warpReduce(volatile elem_t *sdata, unsigned int tid)
{
    /* WRONG: no __syncwarp() between the steps: "a warp executes in lockstep" is pre-Volta */
    if (blockSize >= 64) sdata[tid] = sdata[tid] + sdata[tid + 32];
    if (blockSize >= 32) sdata[tid] = sdata[tid] + sdata[tid + 16];
    if (blockSize >= 16) sdata[tid] = sdata[tid] + sdata[tid + 8];
    if (blockSize >= 8) sdata[tid] = sdata[tid] + sdata[tid + 4];
    if (blockSize >= 4) sdata[tid] = sdata[tid] + sdata[tid + 2];
    if (blockSize >= 2) sdata[tid] = sdata[tid] + sdata[tid + 1];
}

template <unsigned int blockSize>
__global__ void reduce6(const elem_t *g_idata, elem_t *g_odata, size_t n)
{
    __shared__ elem_t sdata[blockSize + 32]; /* + 32: lanes past 16 read up to sdata[47] */
    unsigned int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (blockSize * 2) + tid;
    size_t gridSize = (size_t)blockSize * 2 * gridDim.x;
    sdata[tid] = IDENTITY;
    if (blockSize == 32) sdata[tid + 32] = IDENTITY;
    while (i < n) {
        sdata[tid] += g_idata[i];
        if (i + blockSize < n) sdata[tid] += g_idata[i + blockSize];
        i += gridSize;
    }
    __syncthreads();
    if (blockSize >= 1024) { if (tid < 512) { sdata[tid] += sdata[tid + 512]; } __syncthreads(); }
    if (blockSize >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
    if (tid < 32) warpReduce<blockSize>(sdata, tid);
    if (tid == 0) atomicAdd(g_odata, sdata[0]);
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t blocks = (n + 2 * block_size - 1) / (2 * block_size);
    unsigned int grid = (unsigned int)(blocks < 1024 ? blocks : 1024);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    switch (block_size) {
    case 1024: reduce6<1024><<<grid, 1024>>>(input, sum, n); break;
    case 512: reduce6<512><<<grid, 512>>>(input, sum, n); break;
    case 256: reduce6<256><<<grid, 256>>>(input, sum, n); break;
    case 128: reduce6<128><<<grid, 128>>>(input, sum, n); break;
    case 64: reduce6<64><<<grid, 64>>>(input, sum, n); break;
    default: reduce6<32><<<grid, 32>>>(input, sum, n); break;
    }
    CUDA_CHECK_LAUNCH();
}
