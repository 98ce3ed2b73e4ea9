/* Stage 5: segmented reduction across thread blocks (PMPP 10.7).
 *
 * Concept: blocks cannot wait for each other inside a launch, so each reduces its own segment.
 * Goal: use every multiprocessor, for any n.
 *
 * Block b reduces its segment of 2 * blockDim.x elements with stage 4's shared-memory tree, and
 * thread 0 adds the block's partial sum into the result with one atomicAdd: one atomic per
 * segment instead of one per warp (stage 1: nvcc merges a warp's 32 atomicAdds into one). The
 * last segment may be partial: past the end an element is the identity, with no memory access.
 * Cost: half the threads go idle after the first round of the tree, every block pays its
 * log2(blockDim.x) barriers for only 2 elements a thread. Stage 6 gives each thread more work.
 */
#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, size_t n, elem_t *sum)
{
    __shared__ elem_t input_s[BLOCK_MAX];
    unsigned int t = threadIdx.x;
    /* 64-bit: n may pass 2^32 */
    size_t segment = 2 * (size_t)blockDim.x * blockIdx.x;
    size_t i = segment + t;
    elem_t first = i < n ? input[i] : IDENTITY;
    elem_t second = i + blockDim.x < n ? input[i + blockDim.x] : IDENTITY;
    input_s[t] = first + second;
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        __syncthreads(); /* this round reads the partial sums the last round wrote */
        if (t < stride)
            input_s[t] += input_s[t + stride];
    }
    if (t == 0)
        atomicAdd(sum, input_s[0]); /* blocks finish in any order: + is commutative */
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t segment_size = 2 * (size_t)block_size;
    unsigned int grid_size = (unsigned int)((n + segment_size - 1) / segment_size);
    /* The accumulator starts at the identity; each block adds its partial sum. */
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid_size, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
