/* cuda_runtime_api.h of the CPU model: the runtime API is in its cuda_runtime.h. */
#include "cuda_runtime.h"
