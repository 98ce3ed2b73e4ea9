/* Stage 3: strided addressing (PMPP 10.4-10.5; Harris 2007 kernel 3, "sequential addressing").
 *
 * Concept: control divergence and memory coalescing. Goal: the same tree with fewer divergent
 * warps.
 *
 * Thread t owns element t and the stride starts at blockDim.x and halves each round: thread t
 * adds the partial sum `stride` elements to its right while t < stride. The threads still working
 * are the lowest-numbered ones, packed into the fewest warps, so whole warps fall idle instead of
 * idling a few lanes each, and neighbouring threads read neighbouring elements (coalesced).
 * Cost: the partial sums still go to and from global memory every round. Stage 4 keeps them on
 * chip.
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true, .single_block = true, .in_place = true};

__global__ void reduce_kernel(elem_t *input, elem_t *sum)
{
    unsigned int t = threadIdx.x;
    unsigned int i = t;
    for (unsigned int stride = blockDim.x; stride >= 1; stride /= 2) {
        if (t < stride)
            input[i] += input[i + stride];
        __syncthreads(); /* all threads, every round: never inside the if */
    }
    if (t == 0)
        *sum = input[0];
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    /* One block: the harness checked n <= 2 * block_size and padded the input with the
     * identity to 2 * block_size elements, so every thread has both its elements. */
    (void)n;
    reduce_kernel<<<1, block_size>>>(input, sum);
    CUDA_CHECK_LAUNCH();
}
