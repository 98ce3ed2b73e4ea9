/* check.h: CUDA error checking (exit status 3, as every stage's --help says).
 *
 * CUDA_CHECK(call) prints the failing expression, file:line and CUDA's name and text for the error,
 * then exits with status 3. Kernel launches return nothing: check them with CUDA_CHECK_LAUNCH()
 * right after the launch. A fault inside a kernel shows only at the next synchronising call; run
 * with CUDA_LAUNCH_BLOCKING=1 (CUDA's own switch: every launch waits for its kernel) to have it
 * reported at the launch that caused it. */
#ifndef CHECK_H
#define CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define EXIT_CUDA_ERROR 3

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "CUDA error: %s failed at %s:%d: %s (%s)\n", #call, __FILE__,          \
                    __LINE__, cudaGetErrorName(err_), cudaGetErrorString(err_));                   \
            exit(EXIT_CUDA_ERROR);                                                                 \
        }                                                                                          \
    } while (0)

#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#endif
