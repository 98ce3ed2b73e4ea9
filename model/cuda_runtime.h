/* cuda_runtime.h of the CPU model: CUDA C's names, with CUDA's meaning, for a host compiler.
 *
 * model/cucc includes it first in every .cu file, as nvcc includes the toolkit's, after
 * model/rewrite.py has rewritten the three things C++ cannot say (launches, __shared__ variables,
 * a kernel's entry). What the model does to run each name is in model/model.cc.
 *   __global__, __device__    ordinary functions and globals: the model has one memory
 *   __shared__                rewritten into a slot of the model's shared-memory arena, which each
 *                             block finds filled with 0xff bytes (a GPU leaves it undefined)
 *   threadIdx, blockIdx, ...  the running CUDA thread's coordinates (read-only)
 *   k<<<g, b, bytes, s>>>(a)  rewritten into cudamodel::launch(...)(a)
 *   the _sync intrinsics      points where a thread (a fiber) waits for the lanes of its mask
 *   atomics                   the GPU's relaxed read-modify-writes; __threadfence before one makes
 *                             it a release, as in PTX's memory model
 * The same file is what model/rewrite.py's parse sees (clang's CUDA front end, CUDA_MODEL_PARSE):
 * there the qualifiers are clang's CUDA attributes and every function here is __host__ __device__.
 * A name the model does not run is not declared, and model/rewrite.py says so in one sentence.
 */
#ifndef CUDA_MODEL_RUNTIME_H
#define CUDA_MODEL_RUNTIME_H

#ifndef __cplusplus
#error "the CPU model's cuda_runtime.h is C++: compile .cu files with model/cucc"
#endif

#if defined(__clang__) && defined(__CUDA__)
#define CUDA_MODEL_PARSE 1 /* model/rewrite.py: clang's CUDA front end reads the file */
/* Every function this header declares, the C and C++ libraries' it includes among them (printf,
 * memcpy, sqrtf, ...: nvcc's device runtime has them too), is __host__ __device__ in the parse.
 * <new> comes first: clang declares its operators for the device itself. */
#include <new>
#pragma clang force_cuda_host_device begin
#define __CUDACC_VER_MAJOR__ 13 /* what CCCL's headers ask of the CUDA compiler */
#define __CUDACC_VER_MINOR__ 0
#define __CUDACC_VER_BUILD__ 0
#define CUDA_VERSION 13000
#endif

#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#if !(defined(__has_builtin) && __has_builtin(__builtin_COLUMN))
#include <source_location>
#endif
#include <tuple>
#include <type_traits>
#include <utility>

#define CUDA_MODEL 1
#ifndef __CUDACC__
#define __CUDACC__ 1 /* nvcc's: a .cu file's code may test it */
#endif
#ifdef CUDA_MODEL_PARSE
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#else
/* The GPU the model stands for: an H200, compute capability 9.0 (model.cc). In the parse, clang
 * defines it itself (--cuda-gpu-arch=sm_90). */
#define __CUDA_ARCH__ 900
#define __global__
#define __device__
#define __host__
/* model/rewrite.py rewrites every __shared__ declaration; one it could not see stops here. */
#define __shared__ __shared___declared_where_the_CPU_model_cannot_rewrite_it
#define __constant__
#define __managed__
#define __launch_bounds__(...) /* model/rewrite.py passes the bound to the kernel's entry */
#endif
#define __forceinline__ inline __attribute__((always_inline))
/* __noinline__: clang's keyword in the parse; model/rewrite.py writes it out for the compile, where
 * a macro would break the libraries' __attribute__((__noinline__)). */
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__
#define __cudart_builtin__

/* ---- vector and index types --------------------------------------------------------------- */
/* 16-byte vectors load as one instruction on the GPU; here they are plain structs, aligned the
 * same. In the counters build (model/counters.cc) a copy is one 16-byte access, as the GPU's load
 * is one request, not four. */
#ifdef CUDA_MODEL_COUNTERS
#define CUDA_MODEL_VECTOR4(T, E, A)                                                                \
    typedef E T##_bytes __attribute__((vector_size(A), may_alias));                                \
    struct alignas(A) T {                                                                          \
        E x, y, z, w;                                                                              \
        T() = default;                                                                             \
        constexpr T(E a, E b, E c, E d) : x(a), y(b), z(c), w(d) {}                                \
        T(const T &o) { *(T##_bytes *)this = *(const T##_bytes *)&o; }                             \
        T &operator=(const T &o)                                                                   \
        {                                                                                          \
            *(T##_bytes *)this = *(const T##_bytes *)&o;                                           \
            return *this;                                                                          \
        }                                                                                          \
    };
#else
#define CUDA_MODEL_VECTOR4(T, E, A)                                                                \
    struct alignas(A) T {                                                                          \
        E x, y, z, w;                                                                              \
    };
#endif
#define CUDA_MODEL_VECTORS(T, E, A2, A4)                                                           \
    struct T##1 {                                                                                  \
        E x;                                                                                       \
    };                                                                                             \
    struct alignas(A2) T##2 {                                                                      \
        E x, y;                                                                                    \
    };                                                                                             \
    struct T##3 {                                                                                  \
        E x, y, z;                                                                                 \
    };                                                                                             \
    CUDA_MODEL_VECTOR4(T##4, E, A4)                                                                \
    inline T##1 make_##T##1(E x) { return {x}; }                                                   \
    inline T##2 make_##T##2(E x, E y) { return {x, y}; }                                           \
    inline T##3 make_##T##3(E x, E y, E z) { return {x, y, z}; }                                   \
    inline T##4 make_##T##4(E x, E y, E z, E w) { return {x, y, z, w}; }
CUDA_MODEL_VECTORS(char, signed char, 2, 4)
CUDA_MODEL_VECTORS(uchar, unsigned char, 2, 4)
CUDA_MODEL_VECTORS(short, short, 4, 8)
CUDA_MODEL_VECTORS(ushort, unsigned short, 4, 8)
CUDA_MODEL_VECTORS(int, int, 8, 16)
CUDA_MODEL_VECTORS(uint, unsigned int, 8, 16)
CUDA_MODEL_VECTORS(long, long, 16, 16)
CUDA_MODEL_VECTORS(ulong, unsigned long, 16, 16)
CUDA_MODEL_VECTORS(longlong, long long, 16, 16)
CUDA_MODEL_VECTORS(ulonglong, unsigned long long, 16, 16)
CUDA_MODEL_VECTORS(float, float, 8, 16)
CUDA_MODEL_VECTORS(double, double, 16, 16)
#undef CUDA_MODEL_VECTORS
#undef CUDA_MODEL_VECTOR4
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz)
    {
    }
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return {x, y, z}; }
};
inline dim3 make_dim3(unsigned int x, unsigned int y, unsigned int z)
{
    return dim3(x, y, z);
}

/* ---- the runtime API: errors, devices, memory, streams, events ----------------------------- */
enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidSymbol = 13,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInsufficientDriver = 35,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchFailure = 719,
    cudaErrorNotSupported = 801,
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
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrClockRate = 13,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrMemoryClockRate = 36,
    cudaDevAttrGlobalMemoryBusWidth = 37,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxRegistersPerMultiprocessor = 82,
    cudaDevAttrCooperativeLaunch = 95,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
    cudaDevAttrMaxBlocksPerMultiprocessor = 106,
};
struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem, sharedMemPerBlock, sharedMemPerBlockOptin, sharedMemPerMultiprocessor;
    size_t totalConstMem;
    int regsPerBlock, regsPerMultiprocessor, warpSize, maxThreadsPerBlock, maxThreadsDim[3];
    int maxGridSize[3], multiProcessorCount, maxThreadsPerMultiProcessor, maxBlocksPerMultiProcessor;
    int major, minor, l2CacheSize, memoryBusWidth, concurrentKernels, cooperativeLaunch;
};
enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};
struct cudaFuncAttributes {
    size_t sharedSizeBytes, constSizeBytes, localSizeBytes;
    int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion, cacheModeCA;
    int maxDynamicSharedSizeBytes, preferredShmemCarveout;
};
typedef struct cudaModelEvent *cudaEvent_t;
typedef struct cudaModelStream *cudaStream_t;
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
enum { cudaStreamDefault = 0, cudaStreamNonBlocking = 1 };
enum { cudaEventDefault = 0, cudaEventBlockingSync = 1, cudaEventDisableTiming = 2 };
enum { cudaHostAllocDefault = 0, cudaMemAttachGlobal = 1 };

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
cudaError_t cudaDeviceReset(void);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);
/* Device memory: the host cannot read or write it (model.cc keeps it inaccessible while host code
 * runs); cudaMallocManaged and cudaMallocHost memory it can. */
cudaError_t cudaMalloc(void **ptr, size_t bytes);
cudaError_t cudaMallocManaged(void **ptr, size_t bytes, unsigned int flags = cudaMemAttachGlobal);
cudaError_t cudaMallocHost(void **ptr, size_t bytes);
cudaError_t cudaHostAlloc(void **ptr, size_t bytes, unsigned int flags);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t stream);
cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream);
cudaError_t cudaMemset(void *ptr, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes, cudaStream_t stream = 0);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = 0);
/* Streams: the legacy default stream (0) runs each call in program order. A stream created with
 * cudaStreamNonBlocking is not ordered with it: the model runs its work as late as a GPU may, at
 * the first call that waits for it (model.cc). */
cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0);
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t stop);
template <class T> cudaError_t cudaMalloc(T **ptr, size_t bytes)
{
    return cudaMalloc(reinterpret_cast<void **>(ptr), bytes);
}
template <class T>
cudaError_t cudaMallocManaged(T **ptr, size_t bytes, unsigned int flags = cudaMemAttachGlobal)
{
    return cudaMallocManaged(reinterpret_cast<void **>(ptr), bytes, flags);
}
template <class T> cudaError_t cudaMallocHost(T **ptr, size_t bytes)
{
    return cudaMallocHost(reinterpret_cast<void **>(ptr), bytes);
}
template <class T> cudaError_t cudaMallocAsync(T **ptr, size_t bytes, cudaStream_t stream)
{
    return cudaMallocAsync(reinterpret_cast<void **>(ptr), bytes, stream);
}
/* A __device__ variable is an ordinary global here: its symbol is its address. */
template <class T>
cudaError_t cudaMemcpyToSymbol(T &symbol, const void *src, size_t bytes, size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice)
{
    if (offset + bytes > sizeof(T))
        return cudaErrorInvalidValue;
    std::memcpy(reinterpret_cast<char *>(&symbol) + offset, src, bytes);
    return kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDefault ? cudaSuccess
                                                                        : cudaErrorInvalidValue;
}
template <class T>
cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t bytes, size_t offset = 0,
                                 cudaMemcpyKind kind = cudaMemcpyDeviceToHost)
{
    if (offset + bytes > sizeof(T))
        return cudaErrorInvalidValue;
    std::memcpy(dst, reinterpret_cast<const char *>(&symbol) + offset, bytes);
    return kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDefault ? cudaSuccess
                                                                        : cudaErrorInvalidValue;
}
template <class T> cudaError_t cudaGetSymbolAddress(void **ptr, const T &symbol)
{
    *ptr = const_cast<void *>(static_cast<const void *>(&symbol));
    return cudaSuccess;
}

namespace cudamodel
{
/* Where a call was made: clang's builtins, or g++'s std::source_location (clang 14 has no
 * std::source_location, g++ no __builtin_COLUMN). As a default argument, at any depth, each
 * gives the place of the outermost call. */
struct Here {
    const char *file;
    unsigned int at_line, at_column;
#if defined(__has_builtin) && __has_builtin(__builtin_COLUMN)
    static constexpr Here current(const char *file = __builtin_FILE(),
                                  unsigned int line = __builtin_LINE(),
                                  unsigned int column = __builtin_COLUMN())
    {
        return Here{file, line, column};
    }
#else
    static constexpr Here current(std::source_location s = std::source_location::current())
    {
        return Here{s.file_name(), s.line(), s.column()};
    }
#endif
    constexpr const char *file_name() const { return file; }
    constexpr unsigned int line() const { return at_line; }
    constexpr unsigned int column() const { return at_column; }
};
} // namespace cudamodel

#ifdef CUDA_MODEL_PARSE
#define CUDA_MODEL_VAR __attribute__((device)) /* read by device code: a __device__ variable */
/* What clang's CUDA front end looks up for a launch (host code; device code's). */
extern "C" unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared = 0,
                                                cudaStream_t stream = 0);
extern "C" cudaError_t cudaConfigureCall(dim3 grid, dim3 block, size_t shared = 0,
                                         cudaStream_t stream = 0);
#else
#define CUDA_MODEL_VAR
#endif

namespace cudamodel
{

/* ---- the running CUDA thread (model.cc) --------------------------------------------------- */
extern CUDA_MODEL_VAR const uint3 *thread_idx_now; /* the running thread's threadIdx */
extern CUDA_MODEL_VAR uint3 block_idx;
extern CUDA_MODEL_VAR dim3 block_dim, grid_dim;
extern CUDA_MODEL_VAR bool tsan_on; /* ThreadSanitizer is linked in: the memory-order hooks run */
extern CUDA_MODEL_VAR bool kernel_checked; /* the running launch's kernel_entry has run */

/* The occupancy calculator's answer for `block` threads (model.cc: the modelled GPU's limits,
 * and the kernel's registers where ptxas gave them). */
int blocks_per_sm(const void *kernel, unsigned int block, size_t dynamic_shared);
cudaError_t set_attribute(const void *kernel, cudaFuncAttribute attr, int value);
cudaError_t get_attributes(cudaFuncAttributes *attr, const void *kernel);

/* ---- launching a grid ---------------------------------------------------------------------- */
/* Work on a stream: a launch, a copy, a set or a free, which model.cc runs now or later. */
struct Work {
    virtual void run() = 0;
    virtual ~Work() {}
};
/* Runs or queues `work` on `stream` (model.cc owns it from here). */
void submit(Work *work, cudaStream_t stream);
/* Whether a launch's configuration is one a GPU takes; if not, records CUDA's error (which
 * cudaGetLastError returns) and the launch runs nothing. */
bool launch_ok(dim3 grid, dim3 block, size_t dynamic_shared, const char *kernel,
               cudamodel::Here where);
/* Runs entry(arg) as every thread of a grid of `grid` blocks of `block` threads, each block with
 * `dynamic_shared` bytes of extern __shared__ memory; returns when the grid is done. */
void run_grid(void (*entry)(void *), void *arg, dim3 grid, dim3 block, size_t dynamic_shared,
              const char *kernel, cudamodel::Here where);

template <class F> struct Launch {
    F call; /* [=](auto &&...a) { kernel(a...); }: the kernel, as written at the launch */
    const char *name;
    dim3 grid, block;
    size_t dynamic_shared;
    cudaStream_t stream;
    cudamodel::Here where;
    /* Each thread gets its own copy of the arguments, as a launch copies them once into the GPU's
     * parameter space; each thread's call converts them to the kernel's parameter types. */
    template <class... A> void operator()(A &&...args)
    {
        using Args = std::tuple<std::decay_t<A>...>;
        struct Grid final : Work {
            Launch launch;
            Args args;
            Grid(const Launch &l, Args a) : launch(l), args(std::move(a)) {}
            struct Params { /* on the host's stack while the grid runs: a GPU's parameter space */
                Launch launch;
                Args args;
            };
            static void thread(void *p)
            {
                Params *params = static_cast<Params *>(p);
                Args copy = params->args;
                std::apply(params->launch.call, copy);
            }
            void run() override
            {
                Params params{launch, args};
                run_grid(&thread, &params, launch.grid, launch.block, launch.dynamic_shared,
                         launch.name, launch.where);
            }
        };
        if (launch_ok(grid, block, dynamic_shared, name, where))
            submit(new Grid(*this, Args(std::forward<A>(args)...)), stream);
    }
};
/* What model/rewrite.py turns `kernel<<<grid, block[, bytes[, stream]]>>>(args)` into. */
template <class F>
Launch<F> launch(F call, const char *name, dim3 grid, dim3 block, size_t dynamic_shared = 0,
                 cudaStream_t stream = 0,
                 cudamodel::Here where = cudamodel::Here::current())
{
    return Launch<F>{call, name, grid, block, dynamic_shared, stream, where};
}

/* What model/rewrite.py puts first in every kernel's body: the kernel itself and its
 * __launch_bounds__ (0: none). The launch's first thread checks what a GPU checks before it
 * runs a block: the bound, the registers (ptxas's count, where cucc had nvcc) and the dynamic
 * shared memory's opt-in. */
void kernel_first_entry(const void *kernel, int max_threads, int min_blocks);
inline void kernel_entry(const void *kernel, int max_threads = 0, int min_blocks = 0)
{
    if (!__atomic_load_n(&kernel_checked, __ATOMIC_RELAXED)) /* (an atomic: no counter sees it) */
        kernel_first_entry(kernel, max_threads, min_blocks);
}

/* ---- shared memory: the model's arena (model.cc) ------------------------------------------- */
/* A __shared__ variable's slot in this launch's arena: `holder` (model/rewrite.py's static
 * pointer, one for each declaration and template instance) is null until the launch's first
 * thread reaches the declaration; model.cc clears it when the launch ends. */
void *shared_allocate(void **holder, size_t bytes, size_t align, const char *name,
                      cudamodel::Here where);
template <class T>
T &shared_var(T *&holder, const char *name,
              cudamodel::Here where = cudamodel::Here::current())
{
    if (__atomic_load_n(&holder, __ATOMIC_RELAXED) == nullptr) /* the model's, not the kernel's */
        shared_allocate(reinterpret_cast<void **>(&holder), sizeof(T), alignof(T), name, where);
    return *__atomic_load_n(&holder, __ATOMIC_RELAXED);
}
/* `extern __shared__ T name[]`: the launch's dynamic shared memory, sized by its third
 * parameter; every extern __shared__ array starts there. */
extern CUDA_MODEL_VAR char *dynamic_shared_base;
template <class T> T &dynamic_shared(T *&holder)
{
    (void)holder; /* only its type: T[] */
    return *reinterpret_cast<T *>(__atomic_load_n(&dynamic_shared_base, __ATOMIC_RELAXED));
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
    reduce_and,
    reduce_or,
    reduce_xor,
    ballot,
    any,
    all,
    match_any,
    match_all,
};
/* __syncthreads and its counting forms: what each thread gets back (0 for plain). */
enum class BarrierOp { plain, count, all, any };
int syncthreads(BarrierOp op, int predicate, cudamodel::Here where);
/* One lane's part in a warp-synchronous call: waits until every lane of `mask` made a call of
 * the same kind with the same mask, then returns this lane's result (a 64-bit pattern). */
uint64_t warp_sync(WarpOp op, unsigned int mask, uint64_t value, int arg, int width,
                   cudamodel::Here where);
/* __activemask: the lanes of the warp that reach this call together (model.cc). */
unsigned int activemask(cudamodel::Here where);
/* Memory order (PTX): a fence makes this thread's later atomics release what it did before the
 * fence, to every thread (scope 1) or to its block (scope 0); an atomic read-modify-write acquires
 * what earlier releases on its address published, to threads of its scope. */
enum Scope { scope_block = 0, scope_device = 1, scope_system = 2 };
void threadfence(Scope scope);
void atomic_sync(const void *address, Scope scope);

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
T shuffle(WarpOp op, unsigned int mask, T var, int arg, int width, cudamodel::Here where)
{
    return from_bits<T>(warp_sync(op, mask, bits(var), arg, width, where));
}
float flush_subnormal(float x); /* float atomicAdd flushes subnormals to zero, as the GPU does */
bool is_shared(uintptr_t address);                    /* in the shared-memory arena */
inline bool in_shared(const void *p)
{
    return is_shared(reinterpret_cast<uintptr_t>(p));
}
[[noreturn]] void trap(const char *what, cudamodel::Here where);
long long clock_now();

#ifdef CUDA_MODEL_PARSE
inline const uint3 &thread_idx() { return *thread_idx_now; }
#endif
} // namespace cudamodel

/* The coordinates, read-only as on the GPU. */
#ifdef CUDA_MODEL_PARSE
#define threadIdx (::cudamodel::thread_idx())
#else
#define threadIdx (*::cudamodel::thread_idx_now)
#endif
#define blockIdx (static_cast<const uint3 &>(::cudamodel::block_idx))
#define blockDim (static_cast<const dim3 &>(::cudamodel::block_dim))
#define gridDim (static_cast<const dim3 &>(::cudamodel::grid_dim))
static constexpr int warpSize = 32;

#define CUDA_MODEL_HERE cudamodel::Here where = cudamodel::Here::current()
inline void __syncthreads(CUDA_MODEL_HERE)
{
    cudamodel::syncthreads(cudamodel::BarrierOp::plain, 0, where);
}
inline int __syncthreads_count(int predicate, CUDA_MODEL_HERE)
{
    return cudamodel::syncthreads(cudamodel::BarrierOp::count, predicate != 0, where);
}
inline int __syncthreads_and(int predicate, CUDA_MODEL_HERE)
{
    return cudamodel::syncthreads(cudamodel::BarrierOp::all, predicate != 0, where);
}
inline int __syncthreads_or(int predicate, CUDA_MODEL_HERE)
{
    return cudamodel::syncthreads(cudamodel::BarrierOp::any, predicate != 0, where);
}
inline void __syncwarp(unsigned int mask = 0xffffffffu, CUDA_MODEL_HERE)
{
    cudamodel::warp_sync(cudamodel::WarpOp::syncwarp, mask, 0, 0, 32, where);
}
inline unsigned int __activemask(CUDA_MODEL_HERE)
{
    return cudamodel::activemask(where);
}
#define CUDA_MODEL_SHUFFLE(name, op)                                                               \
    template <class T> T name(unsigned int mask, T var, int arg, int width = 32, CUDA_MODEL_HERE)  \
    {                                                                                              \
        return cudamodel::shuffle(cudamodel::WarpOp::op, mask, var, arg, width, where);            \
    }
CUDA_MODEL_SHUFFLE(__shfl_sync, shfl)
CUDA_MODEL_SHUFFLE(__shfl_xor_sync, shfl_xor)
#undef CUDA_MODEL_SHUFFLE
/* up and down take an unsigned offset, as CUDA's */
template <class T>
T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = 32, CUDA_MODEL_HERE)
{
    return cudamodel::shuffle(cudamodel::WarpOp::shfl_up, mask, var, (int)delta, width, where);
}
template <class T>
T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = 32, CUDA_MODEL_HERE)
{
    return cudamodel::shuffle(cudamodel::WarpOp::shfl_down, mask, var, (int)delta, width, where);
}
#define CUDA_MODEL_WARP_REDUCE(name, op, T)                                                        \
    inline T name(unsigned int mask, T value, CUDA_MODEL_HERE)                                     \
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
CUDA_MODEL_WARP_REDUCE(__reduce_and_sync, reduce_and, unsigned int)
CUDA_MODEL_WARP_REDUCE(__reduce_or_sync, reduce_or, unsigned int)
CUDA_MODEL_WARP_REDUCE(__reduce_xor_sync, reduce_xor, unsigned int)
#undef CUDA_MODEL_WARP_REDUCE
inline unsigned int __ballot_sync(unsigned int mask, int predicate, CUDA_MODEL_HERE)
{
    return (unsigned int)cudamodel::warp_sync(cudamodel::WarpOp::ballot, mask, predicate != 0, 0,
                                              32, where);
}
inline int __any_sync(unsigned int mask, int predicate, CUDA_MODEL_HERE)
{
    return (int)cudamodel::warp_sync(cudamodel::WarpOp::any, mask, predicate != 0, 0, 32, where);
}
inline int __all_sync(unsigned int mask, int predicate, CUDA_MODEL_HERE)
{
    return (int)cudamodel::warp_sync(cudamodel::WarpOp::all, mask, predicate != 0, 0, 32, where);
}
inline unsigned int __uni_sync(unsigned int mask, int predicate, CUDA_MODEL_HERE)
{
    uint64_t b = cudamodel::warp_sync(cudamodel::WarpOp::ballot, mask, predicate != 0, 0, 32, where);
    return b == 0 || b == mask;
}
/* __match_any_sync: the lanes of mask whose value equals this lane's; __match_all_sync: mask if
 * every lane's value is the same (and *pred = 1), else 0. */
template <class T> unsigned int __match_any_sync(unsigned int mask, T value, CUDA_MODEL_HERE)
{
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "__match_any_sync takes 32- or 64-bit values");
    return (unsigned int)cudamodel::warp_sync(cudamodel::WarpOp::match_any, mask,
                                              cudamodel::bits(value), 0, 32, where);
}
template <class T>
unsigned int __match_all_sync(unsigned int mask, T value, int *pred, CUDA_MODEL_HERE)
{
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "__match_all_sync takes 32- or 64-bit values");
    unsigned int r = (unsigned int)cudamodel::warp_sync(cudamodel::WarpOp::match_all, mask,
                                                        cudamodel::bits(value), 0, 32, where);
    *pred = r != 0;
    return r;
}
#undef CUDA_MODEL_HERE

/* ---- integer and bit intrinsics ------------------------------------------------------------- */
inline int __popc(unsigned int x)
{
    return __builtin_popcount(x);
}
inline int __popcll(unsigned long long x)
{
    return __builtin_popcountll(x);
}
inline int __clz(int x)
{
    return x == 0 ? 32 : __builtin_clz((unsigned int)x);
}
inline int __clzll(long long x)
{
    return x == 0 ? 64 : __builtin_clzll((unsigned long long)x);
}
inline int __ffs(int x)
{
    return __builtin_ffs(x);
}
inline int __ffsll(long long x)
{
    return __builtin_ffsll(x);
}
inline unsigned int __brev(unsigned int x)
{
    x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
    x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
    x = (x >> 4 & 0x0f0f0f0fu) | (x & 0x0f0f0f0fu) << 4;
    return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x)
{
    return (unsigned long long)__brev((unsigned int)x) << 32 | __brev((unsigned int)(x >> 32));
}
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s)
{
    unsigned long long both = (unsigned long long)y << 32 | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; ++i)
        r |= (unsigned int)(both >> (8 * (s >> (4 * i) & 7)) & 0xff) << (8 * i);
    return r;
}
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift)
{
    unsigned long long both = (unsigned long long)hi << 32 | lo;
    return (unsigned int)(both << (shift & 31) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift)
{
    unsigned long long both = (unsigned long long)hi << 32 | lo;
    return (unsigned int)(both >> (shift & 31));
}
inline int __mul24(int x, int y)
{
    return (int)((long long)(x << 8 >> 8) * (y << 8 >> 8));
}
inline unsigned int __umul24(unsigned int x, unsigned int y)
{
    return (x & 0xffffffu) * (y & 0xffffffu);
}
inline int __mulhi(int x, int y)
{
    return (int)((long long)x * y >> 32);
}
inline unsigned int __umulhi(unsigned int x, unsigned int y)
{
    return (unsigned int)((unsigned long long)x * y >> 32);
}
inline long long __mul64hi(long long x, long long y)
{
    return (long long)((__int128)x * y >> 64);
}
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y)
{
    return (unsigned long long)((unsigned __int128)x * y >> 64);
}
inline unsigned int __sad(int x, int y, unsigned int z)
{
    return z + (unsigned int)(x > y ? x - y : y - x);
}

/* ---- bit casts and float intrinsics --------------------------------------------------------- */
inline int __float_as_int(float x)
{
    return cudamodel::from_bits<int>(cudamodel::bits(x));
}
inline unsigned int __float_as_uint(float x)
{
    return cudamodel::from_bits<unsigned int>(cudamodel::bits(x));
}
inline float __int_as_float(int x)
{
    return cudamodel::from_bits<float>(cudamodel::bits(x));
}
inline float __uint_as_float(unsigned int x)
{
    return cudamodel::from_bits<float>(cudamodel::bits(x));
}
inline long long __double_as_longlong(double x)
{
    return cudamodel::from_bits<long long>(cudamodel::bits(x));
}
inline double __longlong_as_double(long long x)
{
    return cudamodel::from_bits<double>(cudamodel::bits(x));
}
inline int __double2hiint(double x)
{
    return (int)(__double_as_longlong(x) >> 32);
}
inline int __double2loint(double x)
{
    return (int)__double_as_longlong(x);
}
inline double __hiloint2double(int hi, int lo)
{
    return __longlong_as_double((long long)((unsigned long long)(unsigned int)hi << 32 |
                                            (unsigned int)lo));
}
/* The _rn forms round to nearest even, as the host's default rounding does; the fast ones
 * (__expf, __fdividef, ...) are the exact functions here, which a GPU's approximations are close
 * to, not equal to. */
inline float __fadd_rn(float a, float b)
{
    return a + b;
}
inline float __fsub_rn(float a, float b)
{
    return a - b;
}
inline float __fmul_rn(float a, float b)
{
    return a * b;
}
inline float __fdiv_rn(float a, float b)
{
    return a / b;
}
inline float __fmaf_rn(float a, float b, float c)
{
    return std::fma(a, b, c);
}
inline double __dadd_rn(double a, double b)
{
    return a + b;
}
inline double __dmul_rn(double a, double b)
{
    return a * b;
}
inline double __fma_rn(double a, double b, double c)
{
    return std::fma(a, b, c);
}
inline float __fdividef(float a, float b)
{
    return a / b;
}
inline float __expf(float x)
{
    return std::exp(x);
}
inline float __logf(float x)
{
    return std::log(x);
}
inline float __sinf(float x)
{
    return std::sin(x);
}
inline float __cosf(float x)
{
    return std::cos(x);
}
inline float __powf(float x, float y)
{
    return std::pow(x, y);
}
inline float __saturatef(float x)
{
    return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}
inline float rsqrtf(float x)
{
    return 1.0f / std::sqrt(x);
}
inline double rsqrt(double x)
{
    return 1.0 / std::sqrt(x);
}
inline int __float2int_rn(float x)
{
    return (int)std::nearbyint(x);
}
inline int __float2int_rz(float x)
{
    return (int)x;
}
inline float __int2float_rn(int x)
{
    return (float)x;
}
inline float __uint2float_rn(unsigned int x)
{
    return (float)x;
}
inline double __int2double_rn(int x)
{
    return (double)x;
}

/* ---- time, traps and the rest of the device runtime ------------------------------------------ */
inline long long clock64(void)
{
    return cudamodel::clock_now();
}
inline unsigned long long __globaltimer(void)
{
    return (unsigned long long)cudamodel::clock_now();
}
inline void __nanosleep(unsigned int ns)
{
    (void)ns; /* a thread runs until it waits: sleeping changes nothing here */
}
inline void __trap(cudamodel::Here where = cudamodel::Here::current())
{
    cudamodel::trap("__trap()", where);
}
inline void __brkpt(cudamodel::Here where = cudamodel::Here::current())
{
    cudamodel::trap("__brkpt()", where);
}
inline unsigned int __lanemask_lt(void)
{
    return (1u << (threadIdx.x % 32)) - 1; /* 1-D blocks: lane = threadIdx.x % 32 */
}

/* ---- memory: fences, cache-hinted loads and stores, atomics --------------------------------- */
inline void __threadfence()
{
    cudamodel::threadfence(cudamodel::scope_device);
}
inline void __threadfence_block()
{
    cudamodel::threadfence(cudamodel::scope_block);
}
inline void __threadfence_system()
{
    cudamodel::threadfence(cudamodel::scope_system);
}
/* Loads and stores through one cache path or another (ldg, ldcg, ...): on a CPU, plain ones. The
 * loads are macros, so that the load is the caller's line's (a sanitizer's report names it). */
namespace cudamodel
{
template <class T> T loaded(T value)
{
    return value;
}
} // namespace cudamodel
#define __ldg(p) ::cudamodel::loaded(*(p))
#define __ldcg(p) ::cudamodel::loaded(*(p))
#define __ldca(p) ::cudamodel::loaded(*(p))
#define __ldcs(p) ::cudamodel::loaded(*(p))
#define __ldlu(p) ::cudamodel::loaded(*(p))
#define __ldcv(p) ::cudamodel::loaded(*(p))
#define CUDA_MODEL_STORE(name)                                                                     \
    template <class T> void name(T *p, T value)                                                    \
    {                                                                                              \
        *p = value;                                                                                \
    }
CUDA_MODEL_STORE(__stwb)
CUDA_MODEL_STORE(__stcg)
CUDA_MODEL_STORE(__stcs)
CUDA_MODEL_STORE(__stwt)
#undef CUDA_MODEL_STORE

/* The GPU's atomics are relaxed read-modify-writes: they order nothing else by themselves (a
 * __threadfence before one does: cudamodel::atomic_sync). _block and _system name their scope. */
namespace cudamodel
{
/* A compare-and-swap loop: fn(old) is stored where *address still holds old. The generic
 * builtins take float and double as they are. */
template <class T, class F> T atomic_update(T *address, F fn, Scope scope)
{
    T old, next;
    __atomic_load(address, &old, __ATOMIC_RELAXED);
    do
        next = fn(old);
    while (!__atomic_compare_exchange(address, &old, &next, false, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED));
    if (__atomic_load_n(&tsan_on, __ATOMIC_RELAXED)) /* the model's flag: no counter sees it */
        atomic_sync(address, scope);
    return old;
}
template <class T> T atomic_done(T old, const void *address, Scope scope)
{
    if (__atomic_load_n(&tsan_on, __ATOMIC_RELAXED)) /* the model's flag: no counter sees it */
        atomic_sync(address, scope);
    return old;
}
} // namespace cudamodel
#define CUDA_MODEL_ATOMIC_BUILTIN(name, builtin, T)                                                \
    inline T name(T *address, T value)                                                             \
    {                                                                                              \
        return cudamodel::atomic_done(builtin(address, value, __ATOMIC_RELAXED), address,          \
                                      cudamodel::scope_device);                                    \
    }                                                                                              \
    inline T name##_block(T *address, T value)                                                     \
    {                                                                                              \
        return cudamodel::atomic_done(builtin(address, value, __ATOMIC_RELAXED), address,          \
                                      cudamodel::scope_block);                                     \
    }                                                                                              \
    inline T name##_system(T *address, T value)                                                    \
    {                                                                                              \
        return cudamodel::atomic_done(builtin(address, value, __ATOMIC_RELAXED), address,          \
                                      cudamodel::scope_system);                                    \
    }
#define CUDA_MODEL_ATOMIC_UPDATE(name, T, FN)                                                      \
    inline T name(T *address, T value)                                                             \
    {                                                                                              \
        return cudamodel::atomic_update(address, FN, cudamodel::scope_device);                     \
    }                                                                                              \
    inline T name##_block(T *address, T value)                                                     \
    {                                                                                              \
        return cudamodel::atomic_update(address, FN, cudamodel::scope_block);                      \
    }                                                                                              \
    inline T name##_system(T *address, T value)                                                    \
    {                                                                                              \
        return cudamodel::atomic_update(address, FN, cudamodel::scope_system);                     \
    }
CUDA_MODEL_ATOMIC_BUILTIN(atomicAdd, __atomic_fetch_add, int)
CUDA_MODEL_ATOMIC_BUILTIN(atomicAdd, __atomic_fetch_add, unsigned int)
CUDA_MODEL_ATOMIC_BUILTIN(atomicAdd, __atomic_fetch_add, unsigned long long)
CUDA_MODEL_ATOMIC_BUILTIN(atomicSub, __atomic_fetch_sub, int)
CUDA_MODEL_ATOMIC_BUILTIN(atomicSub, __atomic_fetch_sub, unsigned int)
CUDA_MODEL_ATOMIC_BUILTIN(atomicExch, __atomic_exchange_n, int)
CUDA_MODEL_ATOMIC_BUILTIN(atomicExch, __atomic_exchange_n, unsigned int)
CUDA_MODEL_ATOMIC_BUILTIN(atomicExch, __atomic_exchange_n, unsigned long long)
CUDA_MODEL_ATOMIC_BUILTIN(atomicAnd, __atomic_fetch_and, int)
CUDA_MODEL_ATOMIC_BUILTIN(atomicAnd, __atomic_fetch_and, unsigned int)
CUDA_MODEL_ATOMIC_BUILTIN(atomicAnd, __atomic_fetch_and, unsigned long long)
CUDA_MODEL_ATOMIC_BUILTIN(atomicOr, __atomic_fetch_or, int)
CUDA_MODEL_ATOMIC_BUILTIN(atomicOr, __atomic_fetch_or, unsigned int)
CUDA_MODEL_ATOMIC_BUILTIN(atomicOr, __atomic_fetch_or, unsigned long long)
CUDA_MODEL_ATOMIC_BUILTIN(atomicXor, __atomic_fetch_xor, int)
CUDA_MODEL_ATOMIC_BUILTIN(atomicXor, __atomic_fetch_xor, unsigned int)
CUDA_MODEL_ATOMIC_BUILTIN(atomicXor, __atomic_fetch_xor, unsigned long long)
#define CUDA_MODEL_MIN(T) CUDA_MODEL_ATOMIC_UPDATE(atomicMin, T, [value](T o) { return value < o ? value : o; })
#define CUDA_MODEL_MAX(T) CUDA_MODEL_ATOMIC_UPDATE(atomicMax, T, [value](T o) { return value > o ? value : o; })
CUDA_MODEL_MIN(int)
CUDA_MODEL_MIN(unsigned int)
CUDA_MODEL_MIN(long long)
CUDA_MODEL_MIN(unsigned long long)
CUDA_MODEL_MAX(int)
CUDA_MODEL_MAX(unsigned int)
CUDA_MODEL_MAX(long long)
CUDA_MODEL_MAX(unsigned long long)
#undef CUDA_MODEL_MIN
#undef CUDA_MODEL_MAX
/* atomicInc: ((old >= limit) ? 0 : old + 1), the wrap that lets a ticket reset itself. */
CUDA_MODEL_ATOMIC_UPDATE(atomicInc, unsigned int,
                         [value](unsigned int o) { return o >= value ? 0u : o + 1; })
CUDA_MODEL_ATOMIC_UPDATE(atomicDec, unsigned int,
                         [value](unsigned int o) { return o == 0 || o > value ? value : o - 1; })
/* float and double add as a compare-and-swap loop on their bits: float's flushes subnormals to
 * zero in global memory, as the GPU's (red.global.add.f32) does, not in shared memory. */
CUDA_MODEL_ATOMIC_UPDATE(atomicAdd, float, ([value, address](float o) {
    if (cudamodel::in_shared(address))
        return o + value;
    return cudamodel::flush_subnormal(cudamodel::flush_subnormal(o) +
                                      cudamodel::flush_subnormal(value));
}))
CUDA_MODEL_ATOMIC_UPDATE(atomicAdd, double, [value](double o) { return o + value; })
CUDA_MODEL_ATOMIC_UPDATE(atomicExch, float, [value](float) { return value; })
#undef CUDA_MODEL_ATOMIC_BUILTIN
#undef CUDA_MODEL_ATOMIC_UPDATE
#define CUDA_MODEL_CAS(T)                                                                          \
    inline T atomicCAS(T *address, T compare, T value)                                             \
    {                                                                                              \
        __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_RELAXED,             \
                                    __ATOMIC_RELAXED);                                             \
        return cudamodel::atomic_done(compare, address, cudamodel::scope_device);                  \
    }                                                                                              \
    inline T atomicCAS_block(T *address, T compare, T value)                                       \
    {                                                                                              \
        __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_RELAXED,             \
                                    __ATOMIC_RELAXED);                                             \
        return cudamodel::atomic_done(compare, address, cudamodel::scope_block);                   \
    }                                                                                              \
    inline T atomicCAS_system(T *address, T compare, T value)                                      \
    {                                                                                              \
        __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_RELAXED,             \
                                    __ATOMIC_RELAXED);                                             \
        return cudamodel::atomic_done(compare, address, cudamodel::scope_system);                  \
    }
CUDA_MODEL_CAS(int)
CUDA_MODEL_CAS(unsigned int)
CUDA_MODEL_CAS(unsigned long long)
CUDA_MODEL_CAS(unsigned short)
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
CUDA_MODEL_MINMAX_FN(long)
CUDA_MODEL_MINMAX_FN(unsigned long)
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
inline unsigned int umin(unsigned int a, unsigned int b)
{
    return min(a, b);
}
inline unsigned int umax(unsigned int a, unsigned int b)
{
    return max(a, b);
}
inline long long llmin(long long a, long long b)
{
    return min(a, b);
}
inline long long llmax(long long a, long long b)
{
    return max(a, b);
}
inline unsigned long long ullmin(unsigned long long a, unsigned long long b)
{
    return min(a, b);
}
inline unsigned long long ullmax(unsigned long long a, unsigned long long b)
{
    return max(a, b);
}

/* ---- kernels' attributes and occupancy ------------------------------------------------------ */
template <class K> cudaError_t cudaFuncSetAttribute(K *kernel, cudaFuncAttribute attr, int value)
{
    return cudamodel::set_attribute(reinterpret_cast<const void *>(kernel), attr, value);
}
template <class K> cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, K *kernel)
{
    return cudamodel::get_attributes(attr, reinterpret_cast<const void *>(kernel));
}
template <class K>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, K *kernel, int block,
                                                          size_t dynamic_shared)
{
    if (block <= 0 || block > 1024)
        return *blocks = 0, cudaErrorInvalidValue;
    *blocks = cudamodel::blocks_per_sm(reinterpret_cast<const void *>(kernel),
                                       (unsigned int)block, dynamic_shared);
    return cudaSuccess;
}
/* The block size with the most threads resident on a multiprocessor (the largest such, as CUDA's
 * calculator picks), and the grid that fills the GPU with it. */
template <class K>
cudaError_t cudaOccupancyMaxPotentialBlockSize(int *min_grid, int *block_size, K *kernel,
                                               size_t dynamic_shared = 0, int block_limit = 0)
{
    int best = 0, best_block = 0, limit = block_limit > 0 && block_limit < 1024 ? block_limit : 1024;
    for (int b = 32; b <= limit; b += 32) {
        int resident = cudamodel::blocks_per_sm(reinterpret_cast<const void *>(kernel),
                                                (unsigned int)b, dynamic_shared);
        if (resident * b >= best)
            best = resident * b, best_block = b;
    }
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    *block_size = best_block;
    *min_grid = best_block ? sms * (best / best_block) : 0;
    return cudaSuccess;
}

#ifdef CUDA_MODEL_PARSE
#pragma clang force_cuda_host_device end
#endif
#endif
