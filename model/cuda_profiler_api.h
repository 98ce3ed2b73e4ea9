/* cuda_profiler_api.h of the CPU model: there is no profiler to start (model/cuda_runtime.h). */
#ifndef CUDA_MODEL_PROFILER_API_H
#define CUDA_MODEL_PROFILER_API_H
#include "cuda_runtime.h"
inline cudaError_t cudaProfilerStart(void)
{
    return cudaSuccess;
}
inline cudaError_t cudaProfilerStop(void)
{
    return cudaSuccess;
}
#endif
