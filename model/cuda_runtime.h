/* cuda_runtime.h of the CPU model: the subset of CUDA C that the course's kernels use, for g++.
 *
 * model/cucc compiles a .cu file with g++ and this folder first on the include path, so that a
 * stage's own `#include <cuda_runtime.h>` (check.h) lands here instead of the toolkit's. Every
 * name below is CUDA's, with CUDA's meaning; what the model does to run it is in model/model.cc
 * and the README's "The CPU model". A name not declared here (an intrinsic, a runtime call) fails
 * to compile with g++'s "was not declared in this scope", naming it; inline PTX (`asm`) is refused
 * by model/cucc before g++ sees it.
 *
 * How the pieces map:
 *   __global__ / __device__     ordinary C++ functions and globals: the model has one memory
 *   __shared__                  a static in the section "cuda_shared": one copy, which the block
 *                               running now owns (blocks run one after another); the model poisons
 *                               it before each block, as a GPU leaves it undefined
 *   threadIdx, blockIdx, ...    the running CUDA thread's coordinates (read-only)
 *   k<<<grid, block>>>(args)    model/cucc rewrites it into cudamodel::launch(k, grid,
 * block)(args): the kernel runs to its end before the launch returns
 *   __syncthreads, the _sync    points where a CUDA thread (a fiber) waits for the others it names
 *   intrinsics                  and the model checks that they all made the same call
 *   atomics                     relaxed atomic read-modify-writes of the GPU, as __atomic builtins
 */
#ifndef CUDA_MODEL_RUNTIME_H
#define CUDA_MODEL_RUNTIME_H

#ifndef __cplusplus
#error "the CPU model's cuda_runtime.h is C++: compile .cu files with model/cucc"
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <source_location>
#include <tuple>
#include <type_traits>

#define CUDA_MODEL 1
/* The GPU the model stands for: an H200, compute capability 9.0 (model.cc, device_attribute). */
#define __CUDA_ARCH__ 900
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __shared__ static __attribute__((section("cuda_shared")))

/* ---- vector and index types --------------------------------------------------------------- */
struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz)
    {
    }
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
/* 16-byte vectors load as one instruction on the GPU; here they are plain structs, aligned the
 * same. In the counters build (model/counters.cc) a copy is one 16-byte access, as the GPU's load
 * is one request, not four. */
#ifdef CUDA_MODEL_COUNTERS
#define CUDA_MODEL_VECTOR(T, E)                                                                    \
    typedef E T##_bytes __attribute__((vector_size(16), may_alias));                               \
    struct alignas(16) T {                                                                         \
        E x, y, z, w;                                                                              \
        T() = default;                                                                             \
        T(E a, E b, E c, E d) : x(a), y(b), z(c), w(d) {}                                          \
        T(const T &o)                                                                              \
        {                                                                                          \
            *(T##_bytes *)this = *(const T##_bytes *)&o;                                           \
        }                                                                                          \
        T &operator=(const T &o)                                                                   \
        {                                                                                          \
            *(T##_bytes *)this = *(const T##_bytes *)&o;                                           \
            return *this;                                                                          \
        }                                                                                          \
    };
#else
#define CUDA_MODEL_VECTOR(T, E)                                                                    \
    struct alignas(16) T {                                                                         \
        E x, y, z, w;                                                                              \
    };
#endif
CUDA_MODEL_VECTOR(int4, int)
CUDA_MODEL_VECTOR(uint4, unsigned int)
CUDA_MODEL_VECTOR(float4, float)
#undef CUDA_MODEL_VECTOR
struct alignas(8) int2 {
    int x, y;
};
struct alignas(8) float2 {
    float x, y;
};
inline int4 make_int4(int x, int y, int z, int w)
{
    return {x, y, z, w};
}
inline float4 make_float4(float x, float y, float z, float w)
{
    return {x, y, z, w};
}

/* ---- the runtime API: errors, devices, memory, streams, events ----------------------------- */
enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorLaunchFailure = 719,
};
typedef enum cudaError cudaError_t;
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};
enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrClockRate = 13,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrMemoryClockRate = 36,
    cudaDevAttrGlobalMemoryBusWidth = 37,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxBlocksPerMultiprocessor = 106,
};
struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem, sharedMemPerBlock;
    int warpSize, maxThreadsPerBlock, multiProcessorCount, maxThreadsPerMultiProcessor;
    int major, minor, l2CacheSize, memoryBusWidth;
};
typedef struct cudaModelEvent *cudaEvent_t;
typedef struct cudaModelStream *cudaStream_t;

const char *cudaGetErrorName(cudaError_t error);
const char *cudaGetErrorString(cudaError_t error);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);
cudaError_t cudaMalloc(void **ptr, size_t bytes);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaMemset(void *ptr, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes, cudaStream_t stream = 0);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = 0);
/* Streams: one in the model, where every call runs in program order; a stream a stage creates is
 * a name for it (stream injection, step07's mutants/work_outside_timing, runs here as written). */
enum { cudaStreamDefault = 0, cudaStreamNonBlocking = 1 };
cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t stop);
template <class T> cudaError_t cudaMalloc(T **ptr, size_t bytes)
{
    return cudaMalloc(reinterpret_cast<void **>(ptr), bytes);
}

namespace cudamodel
{

/* ---- the running CUDA thread (model.cc) --------------------------------------------------- */
struct Lane; /* one CUDA thread: its fiber, its coordinates, what it waits for */
extern const uint3 *thread_idx_now; /* the running thread's threadIdx */
extern uint3 block_idx;
extern dim3 block_dim, grid_dim;

/* The occupancy calculator's answer for `block` threads (model.cc: the modelled GPU's limits). */
int blocks_per_sm(unsigned int block, size_t dynamic_shared);

/* ---- launching a grid ---------------------------------------------------------------------- */
/* Runs entry(arg) as every thread of a grid of `grid` blocks of `block` threads; returns when the
 * grid is done. An invalid configuration is recorded as CUDA's last error and runs nothing. */
void run_grid(void (*entry)(void *), void *arg, dim3 grid, dim3 block, const char *kernel,
              std::source_location where);

template <class... P> struct Launch {
    void (*kernel)(P...);
    const char *name;
    dim3 grid, block;
    std::source_location where;
    /* Each thread gets its own copy of the arguments, converted to the kernel's parameter types
     * once, as a launch copies them into the GPU's parameter space. */
    template <class... A> void operator()(A &&...args)
    {
        std::tuple<std::decay_t<P>...> params(static_cast<std::decay_t<P>>(args)...);
        struct Call {
            void (*kernel)(P...);
            std::tuple<std::decay_t<P>...> *params;
            static void run(void *p)
            {
                Call *c = static_cast<Call *>(p);
                std::tuple<std::decay_t<P>...> copy = *c->params;
                std::apply(c->kernel, copy);
            }
        } call{kernel, &params};
        run_grid(&Call::run, &call, grid, block, name, where);
    }
};
/* What model/cucc turns `kernel<<<grid, block[, shared, stream]>>>` into. */
template <class... P>
Launch<P...> launch(void (*kernel)(P...), const char *name, dim3 grid, dim3 block,
                    size_t dynamic_shared = 0, cudaStream_t stream = 0,
                    std::source_location where = std::source_location::current())
{
    (void)stream; /* one stream: every launch runs in program order */
    (void)dynamic_shared;
    return Launch<P...>{kernel, name, grid, block, where};
}

/* ---- barriers and warp-synchronous intrinsics (model.cc) ----------------------------------- */
enum class WarpOp {
    syncwarp,
    shfl,
    shfl_up,
    shfl_down,
    shfl_xor,
    reduce_add,
    reduce_min,
    reduce_max,
    ballot,
    any,
    all
};
void syncthreads(std::source_location where);
/* One lane's part in a warp-synchronous call: waits until every lane of `mask` made the same
 * call, then returns this lane's result (the 64-bit pattern of the value it receives). */
uint64_t warp_sync(WarpOp op, unsigned int mask, uint64_t value, int arg, int width,
                   std::source_location where);
void threadfence(); /* orders this thread's memory operations for every other thread */

template <class T> uint64_t bits(T v)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>,
                  "a shuffle moves 8 bytes at most");
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof v);
    return b;
}
template <class T> T from_bits(uint64_t b)
{
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}
template <class T>
T shuffle(WarpOp op, unsigned int mask, T var, int arg, int width, std::source_location where)
{
    return from_bits<T>(warp_sync(op, mask, bits(var), arg, width, where));
}
float flush_subnormal(float x); /* float atomicAdd flushes subnormals to zero, as the GPU does */

} // namespace cudamodel

/* The coordinates, read-only as on the GPU. */
#define threadIdx (*::cudamodel::thread_idx_now)
#define blockIdx (static_cast<const uint3 &>(::cudamodel::block_idx))
#define blockDim (static_cast<const dim3 &>(::cudamodel::block_dim))
#define gridDim (static_cast<const dim3 &>(::cudamodel::grid_dim))
static constexpr int warpSize = 32;

inline void __syncthreads(std::source_location where = std::source_location::current())
{
    cudamodel::syncthreads(where);
}
inline void __syncwarp(unsigned int mask = 0xffffffffu,
                       std::source_location where = std::source_location::current())
{
    cudamodel::warp_sync(cudamodel::WarpOp::syncwarp, mask, 0, 0, 32, where);
}
#define CUDA_MODEL_SHUFFLE(name, op)                                                               \
    template <class T>                                                                             \
    T name(unsigned int mask, T var, int arg, int width = 32,                                      \
           std::source_location where = std::source_location::current())                           \
    {                                                                                              \
        return cudamodel::shuffle(cudamodel::WarpOp::op, mask, var, arg, width, where);            \
    }
CUDA_MODEL_SHUFFLE(__shfl_sync, shfl)
CUDA_MODEL_SHUFFLE(__shfl_up_sync, shfl_up)
CUDA_MODEL_SHUFFLE(__shfl_down_sync, shfl_down)
CUDA_MODEL_SHUFFLE(__shfl_xor_sync, shfl_xor)
#undef CUDA_MODEL_SHUFFLE
#define CUDA_MODEL_WARP_REDUCE(name, op, T)                                                        \
    inline T name(unsigned int mask, T value,                                                      \
                  std::source_location where = std::source_location::current())                    \
    {                                                                                              \
        return cudamodel::shuffle(cudamodel::WarpOp::op, mask, value, std::is_signed_v<T>, 32,     \
                                  where);                                                          \
    }
CUDA_MODEL_WARP_REDUCE(__reduce_add_sync, reduce_add, int)
CUDA_MODEL_WARP_REDUCE(__reduce_add_sync, reduce_add, unsigned int)
CUDA_MODEL_WARP_REDUCE(__reduce_min_sync, reduce_min, int)
CUDA_MODEL_WARP_REDUCE(__reduce_min_sync, reduce_min, unsigned int)
CUDA_MODEL_WARP_REDUCE(__reduce_max_sync, reduce_max, int)
CUDA_MODEL_WARP_REDUCE(__reduce_max_sync, reduce_max, unsigned int)
#undef CUDA_MODEL_WARP_REDUCE
inline unsigned int __ballot_sync(unsigned int mask, int predicate,
                                  std::source_location where = std::source_location::current())
{
    return (unsigned int)cudamodel::warp_sync(cudamodel::WarpOp::ballot, mask, predicate != 0, 0,
                                              32, where);
}
inline int __any_sync(unsigned int mask, int predicate,
                      std::source_location where = std::source_location::current())
{
    return (int)cudamodel::warp_sync(cudamodel::WarpOp::any, mask, predicate != 0, 0, 32, where);
}
inline int __all_sync(unsigned int mask, int predicate,
                      std::source_location where = std::source_location::current())
{
    return (int)cudamodel::warp_sync(cudamodel::WarpOp::all, mask, predicate != 0, 0, 32, where);
}

/* ---- memory: fences, cache-hinted loads, atomics ------------------------------------------- */
inline void __threadfence()
{
    cudamodel::threadfence();
}
inline void __threadfence_block()
{
    cudamodel::threadfence();
}
/* Loads through the read-only (ldg) or L2-only (ldcg) path: on a CPU, plain loads. */
template <class T> T __ldg(const T *p)
{
    return *p;
}
template <class T> T __ldcg(const T *p)
{
    return *p;
}

/* The GPU's atomics are relaxed read-modify-writes: they order nothing else (__threadfence does).
 */
#define CUDA_MODEL_ATOMIC(name, builtin, T)                                                        \
    inline T name(T *address, T value)                                                             \
    {                                                                                              \
        return builtin(address, value, __ATOMIC_RELAXED);                                          \
    }
CUDA_MODEL_ATOMIC(atomicAdd, __atomic_fetch_add, int)
CUDA_MODEL_ATOMIC(atomicAdd, __atomic_fetch_add, unsigned int)
CUDA_MODEL_ATOMIC(atomicAdd, __atomic_fetch_add, unsigned long long)
CUDA_MODEL_ATOMIC(atomicSub, __atomic_fetch_sub, int)
CUDA_MODEL_ATOMIC(atomicSub, __atomic_fetch_sub, unsigned int)
CUDA_MODEL_ATOMIC(atomicExch, __atomic_exchange_n, int)
CUDA_MODEL_ATOMIC(atomicExch, __atomic_exchange_n, unsigned int)
CUDA_MODEL_ATOMIC(atomicAnd, __atomic_fetch_and, int)
CUDA_MODEL_ATOMIC(atomicOr, __atomic_fetch_or, int)
#undef CUDA_MODEL_ATOMIC
/* A compare-and-swap loop: fn(old) is stored where *address still holds old. */
template <class T, class F> T cuda_model_atomic_update(T *address, F fn)
{
    T old = __atomic_load_n(address, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(address, &old, fn(old), false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
    }
    return old;
}
inline float atomicAdd(float *address, float value)
{
    unsigned int *word = reinterpret_cast<unsigned int *>(address);
    unsigned int old = cuda_model_atomic_update(word, [value](unsigned int bits_old) {
        float sum = cudamodel::flush_subnormal(
            cudamodel::flush_subnormal(cudamodel::from_bits<float>(bits_old)) +
            cudamodel::flush_subnormal(value));
        return (unsigned int)cudamodel::bits(sum);
    });
    return cudamodel::from_bits<float>(old);
}
inline double atomicAdd(double *address, double value)
{
    unsigned long long *word = reinterpret_cast<unsigned long long *>(address);
    unsigned long long old = cuda_model_atomic_update(word, [value](unsigned long long b) {
        return cudamodel::bits(cudamodel::from_bits<double>(b) + value);
    });
    return cudamodel::from_bits<double>(old);
}
/* atomicInc: ((old >= limit) ? 0 : old + 1), the wrap that lets a ticket reset itself. */
inline unsigned int atomicInc(unsigned int *address, unsigned int limit)
{
    return cuda_model_atomic_update(
        address, [limit](unsigned int old) { return old >= limit ? 0u : old + 1; });
}
inline unsigned int atomicDec(unsigned int *address, unsigned int limit)
{
    return cuda_model_atomic_update(
        address, [limit](unsigned int old) { return old == 0 || old > limit ? limit : old - 1; });
}
#define CUDA_MODEL_MINMAX(name, T, better)                                                         \
    inline T name(T *address, T value)                                                             \
    {                                                                                              \
        return cuda_model_atomic_update(                                                           \
            address, [value](T old) { return value better old ? value : old; });                   \
    }
CUDA_MODEL_MINMAX(atomicMax, int, >)
CUDA_MODEL_MINMAX(atomicMax, unsigned int, >)
CUDA_MODEL_MINMAX(atomicMax, unsigned long long, >)
CUDA_MODEL_MINMAX(atomicMin, int, <)
CUDA_MODEL_MINMAX(atomicMin, unsigned int, <)
CUDA_MODEL_MINMAX(atomicMin, unsigned long long, <)
#undef CUDA_MODEL_MINMAX
#define CUDA_MODEL_CAS(T)                                                                          \
    inline T atomicCAS(T *address, T compare, T value)                                             \
    {                                                                                              \
        __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_RELAXED,             \
                                    __ATOMIC_RELAXED);                                             \
        return compare; /* the old value, whether or not it was swapped */                         \
    }
CUDA_MODEL_CAS(int)
CUDA_MODEL_CAS(unsigned int)
CUDA_MODEL_CAS(unsigned long long)
#undef CUDA_MODEL_CAS

/* ---- CUDA's min and max, for every integer and floating type ------------------------------ */
#define CUDA_MODEL_MINMAX_FN(T)                                                                    \
    inline T min(T a, T b)                                                                         \
    {                                                                                              \
        return b < a ? b : a;                                                                      \
    }                                                                                              \
    inline T max(T a, T b)                                                                         \
    {                                                                                              \
        return a < b ? b : a;                                                                      \
    }
CUDA_MODEL_MINMAX_FN(int)
CUDA_MODEL_MINMAX_FN(unsigned int)
CUDA_MODEL_MINMAX_FN(long long)
CUDA_MODEL_MINMAX_FN(unsigned long long)
#undef CUDA_MODEL_MINMAX_FN
inline float min(float a, float b)
{
    return __builtin_fminf(a, b);
}
inline float max(float a, float b)
{
    return __builtin_fmaxf(a, b);
}
inline double min(double a, double b)
{
    return __builtin_fmin(a, b);
}
inline double max(double a, double b)
{
    return __builtin_fmax(a, b);
}

/* ---- occupancy ------------------------------------------------------------------------------ */
template <class K>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, K kernel, int block,
                                                          size_t dynamic_shared)
{
    (void)kernel; /* the model's kernels use no registers' worth of limit: threads and blocks do */
    if (block <= 0 || block > 1024)
        return *blocks = 0, cudaErrorInvalidValue;
    *blocks = cudamodel::blocks_per_sm((unsigned int)block, dynamic_shared);
    return cudaSuccess;
}

#endif
