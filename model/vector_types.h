/* vector_types.h of the CPU model: int4, float2, dim3, ... are in its cuda_runtime.h. */
#include "cuda_runtime.h"
