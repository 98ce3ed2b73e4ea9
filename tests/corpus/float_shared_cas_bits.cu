/* float32 block totals accumulated in shared memory by atomicCAS on the bits (__int_as_float).
 * Stage: 06
 * Type: float
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: CUDA C++ Programming Guide, "Atomic Functions" (atomicCAS on shared memory) and "Type
 *         Casting Intrinsics"; the shared-memory float add of GPUs before native float atomics
 * Why: the block's total is an int in shared memory holding a float's bits; each warp's lane 0
 *      retries atomicCAS from a guess until its add lands; after the barrier thread 0 turns the
 *      bits back into a float and adds it to the sum with the native atomicAdd
 */
#include "check.h"
#include "reduce.h"

#define FULL_MASK 0xffffffffu

const struct stage_info STAGE = {.on_gpu = true};

/* Adds value to the float whose bits are *bits. The first guess is +0.0f, the total's first value:
 * no plain load of a word other warps are swapping. A wrong guess fails, and atomicCAS returns the
 * word as it is, the next guess. */
__device__ void shared_add(int *bits, float value)
{
    int old = __float_as_int(0.0f), assumed;
    do {
        assumed = old;
        old = atomicCAS(bits, assumed, __float_as_int(__int_as_float(assumed) + value));
    } while (assumed != old);
}

__global__ void reduce_kernel(const float *input, size_t n, float *sum)
{
    __shared__ int total_bits;
    if (threadIdx.x == 0)
        total_bits = __float_as_int(0.0f);
    __syncthreads();
    float x = 0.0f;
    for (size_t i = (size_t)blockIdx.x * 2 * blockDim.x + threadIdx.x; i < n;
         i += (size_t)2 * blockDim.x * gridDim.x) {
        x += input[i];
        if (i + blockDim.x < n)
            x += input[i + blockDim.x];
    }
    for (int offset = 16; offset > 0; offset /= 2)
        x += __shfl_down_sync(FULL_MASK, x, offset);
    if (threadIdx.x % 32 == 0)
        shared_add(&total_bits, x);
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(sum, __int_as_float(total_bits));
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t per_block = 2 * (size_t)block_size;
    size_t blocks = (n + per_block - 1) / per_block;
    unsigned int grid = (unsigned int)(blocks < 1024 ? blocks : 1024);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
