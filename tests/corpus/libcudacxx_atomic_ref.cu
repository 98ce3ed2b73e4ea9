/* libcu++: cuda::atomic_ref at block and device scope, cuda::std::plus, cuda::ceil_div.
 * Stage: 06
 * Type: int
 * Verdict: right
 * Model: pass
 * GPU: pass
 * Source: libcu++ (CCCL) documentation, cuda::atomic_ref and cuda::thread_scope; <cuda/std/...>
 * Why: the block's total in shared memory through atomic_ref<elem_t, thread_scope_block>, the sum
 *      through atomic_ref<elem_t, thread_scope_device>, both relaxed (the barrier orders them);
 *      cuda::std::uint64_t indices, cuda::std::plus as the operation, cuda::ceil_div on the host
 */
#include <cuda/atomic>
#include <cuda/cmath>
#include <cuda/std/cstdint>
#include <cuda/std/functional>

#include "check.h"
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = true};

__global__ void reduce_kernel(const elem_t *input, cuda::std::uint64_t n, elem_t *sum)
{
    __shared__ elem_t block_total;
    cuda::atomic_ref<elem_t, cuda::thread_scope_block> total(block_total);
    cuda::std::plus<elem_t> add;
    if (threadIdx.x == 0)
        total.store(IDENTITY, cuda::std::memory_order_relaxed);
    __syncthreads();
    elem_t x = IDENTITY;
    for (cuda::std::uint64_t i = (cuda::std::uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (cuda::std::uint64_t)blockDim.x * gridDim.x)
        x = add(x, input[i]);
    for (int offset = 16; offset > 0; offset /= 2)
        x = add(x, __shfl_down_sync(0xffffffffu, x, offset));
    if (threadIdx.x % 32 == 0)
        total.fetch_add(x, cuda::std::memory_order_relaxed);
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::atomic_ref<elem_t, cuda::thread_scope_device> result(*sum);
        result.fetch_add(total.load(cuda::std::memory_order_relaxed),
                         cuda::std::memory_order_relaxed);
    }
}

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    size_t blocks = cuda::ceil_div(n, (size_t)block_size);
    unsigned int grid = (unsigned int)(blocks < 1024 ? blocks : 1024);
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(elem_t)));
    reduce_kernel<<<grid, block_size>>>(input, n, sum);
    CUDA_CHECK_LAUNCH();
}
