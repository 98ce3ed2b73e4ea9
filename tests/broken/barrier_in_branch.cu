/* barrier_in_branch.cu: a DELIBERATELY WRONG reduction, kept out of the stages and `make all`.
 *
 * What is wrong: stage 4's shared-memory tree with the barrier moved inside `if (t < stride)`,
 * where it looks as if it belongs ("sync after my add"), and one more barrier after the loop "so
 * that thread 0 sees the last round". __syncthreads() compiles to an *aligned* barrier (bar.sync):
 * every thread of the block must reach the same one, or the behaviour is undefined (PTX ISA).
 * Here the threads with t >= stride leave the loop and wait at the barrier after it, while the
 * others wait at the one inside it; from stride 16 on, the two groups are lanes of one warp.
 * Measured on an H200 (CUDA 13.0): the kernel hangs, and the watchdog below ends the program
 * after WATCHDOG_S seconds with exit status 4. On another GPU or compiler it may give a wrong
 * sum, or the right one: none of these is a promise.
 *
 * Who catches it: compute-sanitizer --tool synccheck. On the H200 it reports, within a second,
 *     Barrier error detected. Divergent thread(s) in block.
 *         at reduce_kernel(const int *, int *)+0x220 in barrier_in_branch.cu:<the barrier after
 *         the loop>   by thread (224,0,0) in block (0,0,0)
 * (one report per thread that waits at the wrong barrier: 32 to 96 in our runs), then ends the
 * kernel (the program's next CUDA call fails, exit status 3). `make sanitize` requires the
 * report. racecheck assumes the barriers are sound and memcheck sees no bad address: neither is
 * the tool for this.
 * Without the barrier after the loop the same mistake goes unseen: the threads that skip the
 * barrier run to the end of the kernel and exit, the barrier then waits only for the threads that
 * have not exited, and both the GPU and synccheck are content (measured too). It is still
 * undefined; it just waits for the next barrier someone adds.
 *
 * The fix: what stages 2 to 7 do, the barrier outside every branch that depends on the thread:
 *     for (stride = blockDim.x / 2; stride >= 1; stride /= 2) {
 *         __syncthreads();
 *         if (t < stride)
 *             input_s[t] += input_s[t + stride];
 *     }
 * The same goes for bounds checks: step06 checks each load on its own instead of putting the
 * whole body, barriers included, under `if (i < n)`.
 *
 * Without the sanitizer the program gives up after WATCHDOG_S seconds if the kernel hangs.
 *
 * On its own (`make sanitize` builds it into build/broken/ and runs it under the tool):
 *   nvcc -arch=sm_90 -lineinfo -Icommon tests/broken/barrier_in_branch.cu      (writes a.out)
 *   compute-sanitizer --tool synccheck ./a.out
 */
#include "check.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#define BLOCK 256 /* one block of 8 warps: n = 2 * BLOCK elements, as stage 4 takes them */
#define N (2 * BLOCK)
#define WATCHDOG_S 60

__global__ void reduce_kernel(const int *input, int *sum)
{
    __shared__ int input_s[BLOCK];
    unsigned int t = threadIdx.x;
    input_s[t] = input[t] + input[t + blockDim.x];
    __syncthreads(); /* correct: every thread */
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        if (t < stride) {
            input_s[t] += input_s[t + stride];
            __syncthreads(); /* WRONG: only the threads with t < stride get here */
        }
    }
    __syncthreads(); /* "so that thread 0 sees the last round": every thread gets here, but the
                      * threads that left the loop early wait here while the others wait above */
    if (t == 0)
        *sum = input_s[0];
}

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "barrier_in_branch: the kernel hung: threads wait at a barrier that "
                              "others never reach; giving up.\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(4);
}

int main(void)
{
    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_S);
    static int input[N];
    long long ref = 0;
    for (int i = 0; i < N; ++i) { /* never all ones: a lost or doubled element changes the sum */
        input[i] = (int)((i * 37u) % 101u) - 50;
        ref += input[i];
    }
    int *d_input, *d_sum, sum = 0;
    CUDA_CHECK(cudaMalloc(&d_input, sizeof input));
    CUDA_CHECK(cudaMalloc(&d_sum, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_input, input, sizeof input, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_sum, 0, sizeof(int)));
    reduce_kernel<<<1, BLOCK>>>(d_input, d_sum);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(&sum, d_sum, sizeof sum, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_input));
    CUDA_CHECK(cudaFree(d_sum));
    printf("barrier_in_branch: sum=%d ref=%lld (%s); run it under compute-sanitizer --tool "
           "synccheck to see why\n",
           sum, ref, sum == ref ? "right this time" : "WRONG");
    return sum == ref ? 0 : 1;
}
