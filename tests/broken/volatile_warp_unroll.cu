/* volatile_warp_unroll.cu: a DELIBERATELY WRONG reduction, kept out of the stages and `make all`.
 *
 * What is wrong: the last-warp unroll of Harris's 2007 slides (kernel 5, "unroll the last
 * warp"). Once 32 partial sums or fewer are left, warp 0 finishes the tree in shared memory with no
 * barrier at all, counting on its 32 lanes running in lockstep, with `volatile` only to stop the
 * compiler keeping sdata[] in registers. Since Volta (independent thread scheduling) the lanes of a
 * warp are not guaranteed to run in lockstep: lane t may read sdata[t + 16] before lane t + 16 has
 * written it (a read-after-write hazard), or after lane t + 16 has already overwritten it with its
 * own next sum (write-after-read). `volatile` orders nothing between threads. The sum usually comes
 * out right on today's GPUs, which is exactly why the bug survived so long.
 *
 * Who catches it: compute-sanitizer --tool racecheck. The hazards are between lanes of one warp,
 * which racecheck classes as WARNING (its manual: warp-synchronous code without explicit
 * synchronization "must be fixed" on Volta and later); its default --racecheck-detect-level warn
 * reports them, --racecheck-detect-level error would hide them. Measured on an H200 (CUDA 13.0,
 * compute-sanitizer 2025.3.1), one report per unrolled step, each a read-after-write between the
 * step that writes sdata[t] and the next step that reads it from another lane:
 *     Warning: Race reported between Write access at warp_reduce(volatile int *, unsigned int)
 *         +0x3a0 in volatile_warp_unroll.cu:<step 5> and Read access at ... :<step 6> [496 hazards]
 *     RACECHECK SUMMARY: 5 hazards displayed (0 errors, 5 warnings)
 * and, with --error-exitcode 1, exit status 1, while the program itself prints the right sum.
 * `make sanitize` requires the report.
 *
 * The fix: what step07_warp_shuffle does, __shfl_down_sync(0xffffffff, x, offset) on registers
 * (the _sync names the lanes taking part and orders them). Keeping shared memory, separate each
 * read from the write that follows it with __syncwarp():
 *     int v = sdata[t] + sdata[t + 16]; __syncwarp(); sdata[t] = v; __syncwarp(); ...
 *
 * On its own (`make sanitize` builds it into build/broken/ and runs it under the tool):
 *   nvcc -arch=sm_90 -lineinfo -Icommon tests/broken/volatile_warp_unroll.cu      (writes a.out)
 *   compute-sanitizer --tool racecheck ./a.out
 */
#include "check.h"

#include <stdio.h>

#define BLOCK 256 /* threads per block: the tree runs in shared memory down to 64 sums */
#define GRID 4    /* a few blocks, so the report shows the race is in every block */
#define N (2 * BLOCK * GRID)

/* The 2007 unroll: no __syncwarp() anywhere. Harris's slides wrote `sdata[t] += sdata[t + 32];`,
 * spelled out here because C++20 deprecates += on a volatile; the loads and the store are the
 * same. */
__device__ void warp_reduce(volatile int *sdata, unsigned int t)
{
    sdata[t] = sdata[t] + sdata[t + 32];
    sdata[t] = sdata[t] + sdata[t + 16];
    sdata[t] = sdata[t] + sdata[t + 8];
    sdata[t] = sdata[t] + sdata[t + 4];
    sdata[t] = sdata[t] + sdata[t + 2];
    sdata[t] = sdata[t] + sdata[t + 1];
}

__global__ void reduce_kernel(const int *input, int *partial)
{
    __shared__ int sdata[BLOCK];
    unsigned int t = threadIdx.x;
    size_t i = 2 * (size_t)blockDim.x * blockIdx.x + t;
    sdata[t] = input[i] + input[i + blockDim.x];
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 32; stride /= 2) {
        if (t < stride)
            sdata[t] += sdata[t + stride];
        __syncthreads(); /* correct so far: a barrier between every round */
    }
    if (t < 32)
        warp_reduce(sdata, t); /* WRONG: five rounds between lanes with nothing ordering them */
    if (t == 0)
        partial[blockIdx.x] = sdata[0];
}

int main(void)
{
    static int input[N];
    long long ref = 0;
    for (int i = 0; i < N; ++i) { /* never all ones: a lost or doubled element changes the sum */
        input[i] = (int)((i * 37u) % 101u) - 50;
        ref += input[i];
    }
    int *d_input, *d_partial;
    CUDA_CHECK(cudaMalloc(&d_input, sizeof input));
    CUDA_CHECK(cudaMalloc(&d_partial, GRID * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_input, input, sizeof input, cudaMemcpyHostToDevice));
    reduce_kernel<<<GRID, BLOCK>>>(d_input, d_partial);
    CUDA_CHECK_LAUNCH();
    int partial[GRID];
    CUDA_CHECK(cudaMemcpy(partial, d_partial, sizeof partial, cudaMemcpyDeviceToHost));
    long long sum = 0;
    for (int b = 0; b < GRID; ++b)
        sum += partial[b];
    CUDA_CHECK(cudaFree(d_input));
    CUDA_CHECK(cudaFree(d_partial));
    /* A right sum proves nothing here: the race is real whether or not this run lost it. */
    printf("volatile_warp_unroll: sum=%lld ref=%lld (%s); run it under compute-sanitizer --tool "
           "racecheck to see the race\n",
           sum, ref, sum == ref ? "right this time" : "WRONG");
    return sum == ref ? 0 : 1;
}
