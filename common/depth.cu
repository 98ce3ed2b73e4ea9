/* depth.cu: measure_depth (harness.h), the depth d behind each stage's float32 error bound: it runs
 * the stage's twin on depths (depth.h), reduce_depth(), as gpu_run_stage runs the float stage. Its
 * "sum" is the depth. */
#include "check.h"
#include "depth.h"
#include "harness.h"

#include <stdlib.h>

/* x[0..n) are elements, x[n..padded) the identity (a single-block stage's padding). */
__global__ void fill_depths(depth *x, size_t n, size_t padded)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < padded;
         i += (size_t)blockDim.x * gridDim.x)
        x[i] = depth(i < n);
}

size_t measure_depth(size_t n, unsigned int block, bool *order_varies)
{
    if (order_varies)
        *order_varies = false;
    if (n == 0) /* like gpu_run_stage: the identity, no launch */
        return 0;
    size_t padded = padded_count(&STAGE, n, block); /* the tail past n holds the identity */
    size_t bytes = padded <= SIZE_MAX / sizeof(depth) ? padded * sizeof(depth) : SIZE_MAX;
    char what[96];
    snprintf(what, sizeof what, "measuring the depth of n = %zu elements", n);
    depth sum;
    if (STAGE.on_gpu) {
        depth *d_x = (depth *)gpu_alloc(bytes, what);
        depth *d_sum = (depth *)gpu_alloc(sizeof(depth), what);
        CUDA_CHECK(cudaMemset(d_sum, 0, sizeof(depth)));
        fill_depths<<<1024, 256>>>(d_x, n, padded);
        CUDA_CHECK_LAUNCH();
        reduce_depth(d_x, n, block, d_sum);
        CUDA_CHECK(cudaMemcpy(&sum, d_sum, sizeof sum, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaFree(d_x));
        CUDA_CHECK(cudaFree(d_sum));
    } else { /* step00: reduce() takes host memory */
        depth *x = bytes < SIZE_MAX ? (depth *)malloc(bytes) : NULL;
        if (x == NULL) {
            fprintf(stderr, "not enough host memory: %s needs %.2f GiB; try a smaller --n.\n", what,
                    padded * (double)sizeof(depth) / 1073741824.0);
            exit(EXIT_USAGE);
        }
        for (size_t i = 0; i < padded; ++i)
            x[i] = depth(i < n);
        reduce_depth(x, n, block, &sum);
        free(x);
    }
    if (order_varies) /* several float atomicAdds: their order, and the last bits, may change */
        *order_varies = sum.atomics > 1;
    size_t d = depth_of(sum);
    /* Saturated past 2^32 - 2: no path is longer than the n - 1 additions of n elements, and from
     * d = 2^24 on the bound is the same for every d. */
    return d == DEPTH_UNCOUNTED ? n - 1 : d;
}
