/* check.h: CUDA error checking (exit status 3, as every stage's --help says).
 *
 * CUDA_CHECK(call) prints the failing expression, file:line and CUDA's name and text for the error,
 * then exits with status 3. Kernel launches return nothing: check them with
 * CUDA_CHECK(cudaGetLastError()) right after the launch. Build with -DSYNC_CHECK to also
 * synchronise after each launch, so that a fault inside a kernel is reported at the launch that
 * caused it rather than at the next synchronising call. */
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

#ifdef SYNC_CHECK
#define CUDA_CHECK_LAUNCH()                                                                        \
    do {                                                                                           \
        CUDA_CHECK(cudaGetLastError());                                                            \
        CUDA_CHECK(cudaDeviceSynchronize());                                                       \
    } while (0)
#else
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
#endif

#endif
