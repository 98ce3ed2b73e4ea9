/* model.cc: the CPU model of a CUDA GPU (model/cuda_runtime.h), which runs a .cu file's kernels.
 *
 * What it models. One GPU, an NVIDIA H200 (132 multiprocessors, 2048 threads and 32 blocks each,
 * compute capability 9.0), so that a grid formula gives the grid it gives there. A launch runs its
 * blocks one after another, in an order the schedule's seed picks; the threads of a block run as
 * fibers (Boost.Context's fcontext), one stack each.
 *
 * Independent thread scheduling, as on every GPU since Volta: nothing orders two threads, lanes
 * of one warp included, but a barrier, a warp-synchronous call (__syncwarp, the _sync shuffles,
 * votes and reductions, matched by kind and mask as PTX matches them) or, through memory, an
 * atomic after a fence. A thread runs straight through until it waits; then the model runs
 * another, in an order the seed picks. Lockstep code (the `volatile` last-warp unroll) sees its
 * lanes in another order, and ThreadSanitizer names the race.
 *
 * What it checks, each as one message that names the block, the thread and the source line:
 *   - a barrier not every thread of the block reaches, threads at two different barriers, a
 *     _sync call whose mask lacks the caller or names lanes that never come;
 *   - the host reading or writing device memory (cudaMalloc's pages are inaccessible while host
 *     code runs), and resources a GPU refuses: __launch_bounds__, registers (where cucc had
 *     ptxas's count), shared memory past 48 KiB without the opt-in;
 *   - with CUCC_SANITIZE=address (AddressSanitizer): a read or write outside an allocation, a
 *     shared variable or a stack;
 *   - with CUCC_SANITIZE=thread (ThreadSanitizer, through its fiber API): a data race, with what a
 *     GPU orders told to it: a launch, a barrier, a _sync call, and PTX's release and acquire
 *     patterns (a fence then an atomic; an atomic read-modify-write), each at its scope.
 * Work on a cudaStreamNonBlocking stream runs as late as a GPU may: at the first call that waits.
 * Environment: CUDA_MODEL_SEED=S picks the schedule (default 1; 0 runs threads and blocks in index
 * order); a launch's schedule is a function of S and the launch's number.
 */
#include "cuda_runtime.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <numeric>
#include <pthread.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

/* Boost.Context's fcontext (libboost_context; Debian: libboost-context-dev), declared as
 * boost/context/detail/fcontext.hpp declares it: make_fcontext prepares a stack to run fn;
 * jump_fcontext saves the running context and resumes `to`, passing vp. */
typedef void *fcontext_t;
struct transfer_t {
    fcontext_t fctx;
    void *data;
};
extern "C" transfer_t jump_fcontext(fcontext_t const to, void *vp);
extern "C" fcontext_t make_fcontext(void *sp, size_t size, void (*fn)(transfer_t));

/* The sanitizers' interfaces: present only in a program linked with one (weak: null otherwise).
 * model.o itself is never instrumented: they see the kernels' accesses, not the model's. */
extern "C" {
__attribute__((weak)) void *__tsan_get_current_fiber(void);
__attribute__((weak)) void *__tsan_create_fiber(unsigned flags);
__attribute__((weak)) void __tsan_switch_to_fiber(void *fiber, unsigned flags);
__attribute__((weak)) void __tsan_set_fiber_name(void *fiber, const char *name);
__attribute__((weak)) void __tsan_acquire(void *addr);
__attribute__((weak)) void __tsan_release(void *addr);
__attribute__((weak)) void __sanitizer_start_switch_fiber(void **fake_stack_save,
                                                          const void *bottom, size_t size);
__attribute__((weak)) void
__sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
__attribute__((weak)) void __asan_poison_memory_region(void const volatile *addr, size_t size);
__attribute__((weak)) void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
__attribute__((weak)) void __sanitizer_set_death_callback(void (*callback)(void));
__attribute__((weak)) void __sanitizer_print_stack_trace(void);
__attribute__((weak)) void __sanitizer_symbolize_global(void *data, const char *fmt, char *out,
                                                        size_t out_size);
}
static const unsigned NO_SYNC = 1; /* __tsan_switch_to_fiber_no_sync */
using cudamodel::Here;
extern "C" {
static void sanitizer_died(void); /* below: the model's line after a sanitizer's report */
}

namespace
{

/* ---- the modelled GPU ----------------------------------------------------------------------- */
const char DEVICE_NAME[] = "CPU model of an NVIDIA H200";
const int SM_COUNT = 132, THREADS_PER_SM = 2048, BLOCKS_PER_SM = 32, WARP = 32;
const int MAX_BLOCK = 1024;
const int MEMORY_CLOCK_KHZ = 3134000, BUS_BITS = 6144; /* 4814 GB/s, as the H200 reports */
const int L2_BYTES = 62914560;
/* Shared memory: 48 KiB a block unless the kernel opts in (cudaFuncSetAttribute), then up to
 * 227 KiB; 228 KiB a multiprocessor. Registers: 64 Ki a block and a multiprocessor, allocated 256
 * a warp at a time. */
const int SHARED_PER_BLOCK = 49152, SHARED_OPTIN = 232448, SHARED_PER_SM = 233472;
const int REGS_PER_SM = 65536, REGS_PER_BLOCK = 65536, REG_UNIT = 256;

cudaError_t last_error = cudaSuccess;
cudaError_t fail(cudaError_t e)
{
    last_error = e;
    return e;
}

/* Where kernel errors go: one message, then the process ends as a GPU fault ends it (exit 3). */
[[noreturn]] void die(const std::string &what)
{
    fflush(stdout);
    fprintf(stderr, "CPU model: %s\n", what.c_str());
    exit(3);
}
/* A note beside CUDA's own error, for what a GPU reports only as an error code. */
void note(const std::string &what)
{
    fflush(stdout);
    fprintf(stderr, "CPU model: %s\n", what.c_str());
}

std::string where_text(Here w)
{
    std::string file = w.file_name();
    return file + ":" + std::to_string(w.line());
}

/* "0-15, 17, 20-31": a set of thread (or lane) numbers, in ranges. */
std::string ranges(const std::vector<unsigned> &ids)
{
    std::string s;
    for (size_t i = 0; i < ids.size();) {
        size_t j = i;
        while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1)
            ++j;
        s += (s.empty() ? "" : ", ") + std::to_string(ids[i]) +
             (j > i ? "-" + std::to_string(ids[j]) : "");
        i = j + 1;
    }
    return s;
}

std::string hex(unsigned int mask)
{
    char s[16];
    snprintf(s, sizeof s, "0x%08x", mask);
    return s;
}

const size_t PAGE = 4096;
size_t round_up(size_t x, size_t to)
{
    return (x + to - 1) / to * to;
}

/* ---- device memory: pages of its own, inaccessible while host code runs -------------------- */
/* An allocation: its data ends close to the end of its pages, between two guard pages, so that a
 * read past its end reaches AddressSanitizer's poison, then a guard. */
struct Allocation {
    size_t bytes;
    char *map;        /* the mapping: guard page, data pages, guard page */
    size_t map_bytes; /* all of it */
    bool device;      /* cudaMalloc's (the host may not touch it), not cudaMallocManaged's */
};
std::map<char *, Allocation> allocations; /* data start -> allocation */
bool device_open = false; /* whether device memory is accessible now: only while the model runs */

char *data_pages(const Allocation &a)
{
    return a.map + PAGE;
}
size_t data_bytes(const Allocation &a)
{
    return a.map_bytes - 2 * PAGE;
}

/* The allocation that holds p (its data or its slack), or nullptr. */
const std::pair<char *const, Allocation> *allocation_of(const void *p)
{
    auto hi = allocations.upper_bound((char *)p); /* the first that starts after p */
    if (hi != allocations.end() && (char *)p >= hi->second.map)
        return &*hi; /* in its slack, before its data */
    if (hi != allocations.begin()) {
        auto lo = std::prev(hi);
        if ((char *)p < lo->second.map + lo->second.map_bytes)
            return &*lo;
    }
    return nullptr;
}

void protect(const Allocation &a, bool open)
{
    if (a.device && mprotect(data_pages(a), data_bytes(a), open ? PROT_READ | PROT_WRITE : PROT_NONE))
        die("mprotect failed on device memory.");
}

/* Device memory opens while a kernel or a model call (a copy, a set) runs, and closes after. */
void open_device(bool open)
{
    if (open == device_open)
        return;
    for (auto &[start, a] : allocations)
        protect(a, open);
    device_open = open;
}

struct DeviceOpen {
    bool was = device_open;
    DeviceOpen() { open_device(true); }
    ~DeviceOpen() { open_device(was); }
};

void install_segv_handler();

bool cudamodel_running(); /* a CUDA thread runs now (below) */

cudaError_t allocate(void **ptr, size_t bytes, bool device)
{
    size_t data = round_up(bytes ? bytes : 1, 256), pages = round_up(data, PAGE);
    size_t map_bytes = pages + 2 * PAGE;
    long long host = (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
    if (bytes > (size_t)host)
        return *ptr = nullptr, fail(cudaErrorMemoryAllocation);
    char *map = (char *)mmap(nullptr, map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                             -1, 0);
    if (map == MAP_FAILED)
        return *ptr = nullptr, fail(cudaErrorMemoryAllocation);
    Allocation a{bytes, map, map_bytes, device};
    /* 256-byte aligned, as cudaMalloc's; the data pages open, then closed again if device */
    char *start = map + PAGE + pages - data;
    if (mprotect(map + PAGE, pages, PROT_READ | PROT_WRITE))
        return munmap(map, map_bytes), *ptr = nullptr, fail(cudaErrorMemoryAllocation);
    if (__asan_poison_memory_region) { /* the slack before and after the data */
        __asan_poison_memory_region(map + PAGE, (size_t)(start - (map + PAGE)));
        __asan_poison_memory_region(start + bytes, (size_t)(map + PAGE + pages - (start + bytes)));
    }
    allocations[start] = a;
    if (device && !device_open)
        protect(a, false);
    install_segv_handler();
    *ptr = start;
    return cudaSuccess;
}

cudaError_t release(void *ptr)
{
    auto a = allocations.find((char *)ptr);
    if (a == allocations.end())
        return fail(cudaErrorInvalidDevicePointer);
    if (__asan_unpoison_memory_region)
        __asan_unpoison_memory_region(a->second.map + PAGE, data_bytes(a->second));
    munmap(a->second.map, a->second.map_bytes);
    allocations.erase(a);
    return cudaSuccess;
}

/* A host call's device range must lie inside one allocation: else one sentence and exit 3, as
 * compute-sanitizer's memcheck reports a bad cudaMemcpy. */
void check_range(const void *p, size_t bytes, const char *call)
{
    auto a = allocations.upper_bound((char *)p);
    if (a != allocations.begin()) {
        --a;
        if ((char *)p >= a->first && (size_t)((char *)p - a->first) + bytes <= a->second.bytes)
            return;
    }
    die(std::string(call) + " of " + std::to_string(bytes) +
        " bytes at a device address that is not inside one cudaMalloc allocation.");
}
bool is_device(const void *p)
{
    auto a = allocation_of(p);
    return a && a->second.device;
}

std::string running_thread();
std::string what_is(const char *p);

/* SIGSEGV: the host touching device memory, a kernel past the end of an allocation (its guard
 * page), or anything else, for the handler before ours. */
struct sigaction previous_segv;
void on_segv(int sig, siginfo_t *info, void *context)
{
    auto a = allocation_of(info->si_addr);
    if (a && device_open && cudamodel_running()) {
        std::string msg = "CPU model: " + running_thread() + " touched " +
                          what_is((const char *)info->si_addr) +
                          ", outside every array it may touch (compute-sanitizer's memcheck "
                          "reports it on a GPU): the stack below gives the source line.\n";
        ssize_t w = write(2, msg.data(), msg.size());
        (void)w;
        if (__sanitizer_print_stack_trace)
            __sanitizer_print_stack_trace();
        _exit(3);
    }
    if (a && a->second.device && !device_open) {
        size_t off = (size_t)((char *)info->si_addr - a->first);
        char msg[512];
        snprintf(msg, sizeof msg,
                 "CPU model: the host code touched device memory: byte %zd of a cudaMalloc "
                 "allocation of %zu bytes. Host code cannot dereference a cudaMalloc pointer (on a "
                 "GPU: a crash, or garbage): copy the data with cudaMemcpy, or allocate it with "
                 "cudaMallocManaged.\n",
                 (ssize_t)off, a->second.bytes);
        ssize_t w = write(2, msg, strlen(msg));
        (void)w;
        if (__sanitizer_print_stack_trace)
            __sanitizer_print_stack_trace(); /* the host code's line, symbolized */
        _exit(3);
    }
    if (previous_segv.sa_flags & SA_SIGINFO && previous_segv.sa_sigaction)
        previous_segv.sa_sigaction(sig, info, context);
    else if (previous_segv.sa_handler != SIG_DFL && previous_segv.sa_handler != SIG_IGN &&
             previous_segv.sa_handler)
        previous_segv.sa_handler(sig);
    else {
        signal(sig, SIG_DFL);
        raise(sig);
    }
}
void install_segv_handler()
{
    static bool done;
    if (done)
        return;
    done = true;
    struct sigaction sa{};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &previous_segv);
}

/* ---- kernels: what a GPU knows of each before it runs a block -------------------------------- */
struct KernelInfo {
    int registers = -1; /* ptxas's count (model/cucc, where it had nvcc), or -1: not known */
    int max_dynamic_shared = 0; /* cudaFuncAttributeMaxDynamicSharedMemorySize: the opt-in */
    int static_shared = -1;     /* seen at its last launch, or -1 */
    int max_threads = 0;        /* __launch_bounds__, or 0 */
};
std::unordered_map<const void *, KernelInfo> &kernels()
{
    static std::unordered_map<const void *, KernelInfo> k;
    return k;
}

/* The threads a block of `block` threads asks for from a multiprocessor's registers. */
int registers_of_block(int registers, unsigned block)
{
    int per_warp = (int)round_up((size_t)registers * WARP, REG_UNIT);
    return per_warp * (int)((block + WARP - 1) / WARP);
}

} // namespace

/* cucc's resource table (model/cucc, from ptxas): kernel -> registers a thread. */
extern "C" void cuda_model_kernel_registers(const void *kernel, int registers)
{
    if (kernel)
        kernels()[kernel].registers = registers;
}

/* ---- the runtime API ---------------------------------------------------------------------- */
namespace
{
/* CUDA's name and text of each error the model returns. */
struct ErrorText {
    cudaError_t error;
    const char *name, *text;
};
const ErrorText ERRORS[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress",
     "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources",
     "too many resources requested for launch"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
};
const ErrorText &error_text(cudaError_t e)
{
    for (const ErrorText &t : ERRORS)
        if (t.error == e)
            return t;
    return ERRORS[sizeof ERRORS / sizeof ERRORS[0] - 1];
}
} // namespace

const char *cudaGetErrorName(cudaError_t e)
{
    return error_text(e).name;
}
const char *cudaGetErrorString(cudaError_t e)
{
    return error_text(e).text;
}
cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}
cudaError_t cudaPeekAtLastError(void)
{
    return last_error;
}
/* One GPU, device 0; CUDA_VISIBLE_DEVICES hides it as it hides a GPU (-1, or a list without 0). */
cudaError_t cudaGetDeviceCount(int *count)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    *count = v == nullptr || (v[0] == '0' && (v[1] == '\0' || v[1] == ',')) ? 1 : 0;
    return *count ? cudaSuccess : fail(cudaErrorNoDevice);
}
cudaError_t cudaGetDevice(int *device)
{
    *device = 0;
    return cudaSuccess;
}
cudaError_t cudaSetDevice(int device)
{
    return device == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice);
}

static long long host_bytes(int name)
{
    return (long long)sysconf(name) * sysconf(_SC_PAGESIZE);
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device)
{
    if (device != 0)
        return fail(cudaErrorInvalidDevice);
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
    case cudaDevAttrMaxBlockDimX:
    case cudaDevAttrMaxBlockDimY:
        *value = MAX_BLOCK;
        break;
    case cudaDevAttrMaxBlockDimZ:
        *value = 64;
        break;
    case cudaDevAttrMaxGridDimX:
        *value = 2147483647;
        break;
    case cudaDevAttrMaxGridDimY:
    case cudaDevAttrMaxGridDimZ:
        *value = 65535;
        break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
        *value = SHARED_PER_BLOCK;
        break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
        *value = SHARED_OPTIN;
        break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
        *value = SHARED_PER_SM;
        break;
    case cudaDevAttrMaxRegistersPerBlock:
        *value = REGS_PER_BLOCK;
        break;
    case cudaDevAttrMaxRegistersPerMultiprocessor:
        *value = REGS_PER_SM;
        break;
    case cudaDevAttrWarpSize:
        *value = WARP;
        break;
    case cudaDevAttrClockRate:
        *value = 1980000;
        break;
    case cudaDevAttrMultiProcessorCount:
        *value = SM_COUNT;
        break;
    case cudaDevAttrMemoryClockRate:
        *value = MEMORY_CLOCK_KHZ;
        break;
    case cudaDevAttrGlobalMemoryBusWidth:
        *value = BUS_BITS;
        break;
    case cudaDevAttrL2CacheSize:
        *value = L2_BYTES;
        break;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
        *value = THREADS_PER_SM;
        break;
    case cudaDevAttrComputeCapabilityMajor:
        *value = 9;
        break;
    case cudaDevAttrComputeCapabilityMinor:
        *value = 0;
        break;
    case cudaDevAttrCooperativeLaunch:
        *value = 0; /* the model does not run cooperative launches */
        break;
    case cudaDevAttrMaxBlocksPerMultiprocessor:
        *value = BLOCKS_PER_SM;
        break;
    default:
        return fail(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device)
{
    if (device != 0)
        return fail(cudaErrorInvalidDevice);
    *prop = cudaDeviceProp{};
    snprintf(prop->name, sizeof prop->name, "%s", DEVICE_NAME);
    prop->totalGlobalMem = (size_t)host_bytes(_SC_PHYS_PAGES);
    prop->sharedMemPerBlock = SHARED_PER_BLOCK;
    prop->sharedMemPerBlockOptin = SHARED_OPTIN;
    prop->sharedMemPerMultiprocessor = SHARED_PER_SM;
    prop->totalConstMem = 65536;
    prop->regsPerBlock = REGS_PER_BLOCK;
    prop->regsPerMultiprocessor = REGS_PER_SM;
    prop->warpSize = WARP;
    prop->maxThreadsPerBlock = MAX_BLOCK;
    prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = MAX_BLOCK;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 2147483647;
    prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
    prop->multiProcessorCount = SM_COUNT;
    prop->maxThreadsPerMultiProcessor = THREADS_PER_SM;
    prop->maxBlocksPerMultiProcessor = BLOCKS_PER_SM;
    prop->major = 9;
    prop->l2CacheSize = L2_BYTES;
    prop->memoryBusWidth = BUS_BITS;
    prop->concurrentKernels = 1;
    return cudaSuccess;
}

/* The model's device memory is the host's: what the host has available is what is free. */
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = (size_t)host_bytes(_SC_AVPHYS_PAGES);
    *total_bytes = (size_t)host_bytes(_SC_PHYS_PAGES);
    return cudaSuccess;
}

/* ---- streams and events: the legacy stream in program order, non-blocking streams late ------ */
struct cudaModelStream {
    unsigned int flags;
    std::deque<cudamodel::Work *> queue; /* submitted, not yet run */
    uint64_t submitted = 0, done = 0;    /* how many works ever, how many have run */
};
struct cudaModelEvent {
    std::chrono::steady_clock::time_point at;
    cudaModelStream *stream = nullptr; /* where it was recorded, if on a deferred stream */
    uint64_t after = 0;                /* it completes once the stream has done this many */
    bool recorded = false, completed = false;
};
namespace
{
std::vector<cudaModelStream *> streams; /* every stream created, destroyed ones too */

bool deferred(cudaStream_t s)
{
    return s != nullptr && s != cudaStreamLegacy && s != cudaStreamPerThread &&
           (s->flags & cudaStreamNonBlocking);
}
/* Runs s's queued work until it has done `upto` works. */
void flush(cudaModelStream *s, uint64_t upto)
{
    while (s->done < upto && !s->queue.empty()) {
        cudamodel::Work *w = s->queue.front();
        s->queue.pop_front();
        w->run();
        delete w;
        ++s->done;
    }
}
void flush_all()
{
    for (cudaModelStream *s : streams)
        flush(s, s->submitted);
}

/* A host call on a stream, as work: runs when its stream gets to it. */
template <class F> struct Call final : cudamodel::Work {
    F f;
    explicit Call(F fn) : f(fn) {}
    void run() override { f(); }
};
template <class F> void on_stream(cudaStream_t stream, F f)
{
    cudamodel::submit(new Call<F>(f), stream);
}
} // namespace

void cudamodel::submit(Work *work, cudaStream_t stream)
{
    if (!deferred(stream)) { /* the legacy stream, or a blocking stream: in program order */
        work->run();
        delete work;
        return;
    }
    stream->queue.push_back(work);
    ++stream->submitted;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    if (flags > cudaStreamNonBlocking)
        return fail(cudaErrorInvalidValue);
    *stream = new cudaModelStream{flags, {}, 0, 0};
    streams.push_back(*stream);
    return cudaSuccess;
}
/* As on a GPU, a destroyed stream's work still runs, when something waits for the device. */
cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    return stream == nullptr ? fail(cudaErrorInvalidResourceHandle) : cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    if (deferred(stream))
        flush(stream, stream->submitted);
    return cudaSuccess;
}
/* A poll waits as a GPU's would end up waiting: the stream's work runs, so a loop on it ends. */
cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    return cudaStreamSynchronize(stream);
}
cudaError_t cudaDeviceSynchronize(void)
{
    flush_all();
    return cudaSuccess;
}
cudaError_t cudaDeviceReset(void)
{
    flush_all();
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    *event = new cudaModelEvent{};
    return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    (void)flags;
    return cudaEventCreate(event);
}
cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    delete event;
    return cudaSuccess;
}
/* Events keep the host's clock: a model's time says nothing of a GPU's, and no output shows it. */
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    event->recorded = true;
    event->completed = false;
    event->stream = deferred(stream) ? stream : nullptr;
    event->after = deferred(stream) ? stream->submitted + 1 : 0;
    on_stream(stream, [event] {
        event->at = std::chrono::steady_clock::now();
        event->completed = true;
    });
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    if (event->stream)
        flush(event->stream, event->after);
    return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t event)
{
    return cudaEventSynchronize(event);
}
/* Work on `stream` after this waits for the event: the model runs the event's work now. */
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    (void)stream, (void)flags;
    return cudaEventSynchronize(event);
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t stop)
{
    if (!start->recorded || !stop->recorded)
        return fail(cudaErrorInvalidResourceHandle);
    if (!start->completed || !stop->completed)
        return fail(cudaErrorNotReady);
    *ms = std::chrono::duration<float, std::milli>(stop->at - start->at).count();
    return cudaSuccess;
}

/* ---- memory -------------------------------------------------------------------------------- */
cudaError_t cudaMalloc(void **ptr, size_t bytes)
{
    return allocate(ptr, bytes, true);
}
cudaError_t cudaMallocManaged(void **ptr, size_t bytes, unsigned int flags)
{
    (void)flags;
    return allocate(ptr, bytes, false);
}
cudaError_t cudaMallocHost(void **ptr, size_t bytes)
{
    return allocate(ptr, bytes, false);
}
cudaError_t cudaHostAlloc(void **ptr, size_t bytes, unsigned int flags)
{
    (void)flags;
    return allocate(ptr, bytes, false);
}
/* cudaFree waits for the device, as CUDA's does. */
cudaError_t cudaFree(void *ptr)
{
    if (ptr == nullptr)
        return cudaSuccess;
    flush_all();
    return release(ptr);
}
cudaError_t cudaFreeHost(void *ptr)
{
    return cudaFree(ptr);
}
cudaError_t cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t stream)
{
    (void)stream;
    return allocate(ptr, bytes, true);
}
cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
    if (ptr != nullptr && allocations.find((char *)ptr) == allocations.end())
        return fail(cudaErrorInvalidDevicePointer);
    on_stream(stream, [ptr] {
        if (ptr)
            release(ptr);
    });
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes, cudaStream_t stream)
{
    check_range(ptr, bytes, "cudaMemset");
    on_stream(stream, [=] {
        DeviceOpen open;
        memset(ptr, value, bytes);
    });
    return cudaSuccess;
}
cudaError_t cudaMemset(void *ptr, int value, size_t bytes)
{
    return cudaMemsetAsync(ptr, value, bytes, nullptr);
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    if (kind == cudaMemcpyDefault) /* unified addressing: the pointers say which memory */
        kind = is_device(dst) ? (is_device(src) ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                              : (is_device(src) ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    if (kind > cudaMemcpyDefault)
        return fail(cudaErrorInvalidMemcpyDirection);
    if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice)
        check_range(dst, bytes, "cudaMemcpy");
    if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice)
        check_range(src, bytes, "cudaMemcpy");
    if ((kind == cudaMemcpyHostToDevice && is_device(src)) ||
        (kind == cudaMemcpyDeviceToHost && is_device(dst)))
        die(std::string("cudaMemcpy with kind ") +
            (kind == cudaMemcpyHostToDevice ? "cudaMemcpyHostToDevice from" : "cudaMemcpyDeviceToHost to") +
            " a device address: the kind names the wrong direction.");
    on_stream(stream, [=] {
        DeviceOpen open;
        memmove(dst, src, bytes);
    });
    return cudaSuccess;
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    return cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
}

/* ---- the scheduler ------------------------------------------------------------------------ */
namespace cudamodel
{

enum class State : unsigned char { ready, barrier, warp, active, done };

struct Lane {
    uint3 idx;      /* threadIdx: first, where thread_idx_now points */
    unsigned int t; /* its number in the block: x + y * blockDim.x + ... */
    State state;
    fcontext_t ctx;             /* where it resumes */
    Here where; /* the barrier or intrinsic it waits at */
    WarpOp op;
    BarrierOp barrier_op;
    unsigned int mask;
    uint64_t value, result;
    int arg, width;
    const void *stack; /* its lowest address, and its size: for AddressSanitizer */
    size_t stack_bytes;
    void *tsan_fiber, *asan_fake_stack;
    int slot;                          /* its fiber set's thread slot: set * MAX_BLOCK + t */
    bool fenced_device, fenced_block;  /* a fence since the block started */
};

Lane *current;
const uint3 *thread_idx_now;
uint3 block_idx;
dim3 block_dim, grid_dim;
bool tsan_on;
bool kernel_checked;
char *dynamic_shared_base;

/* counters.cc, in the counters build only: what a GPU counts per launch and per warp instruction */
__attribute__((weak)) void counters_block_done();
__attribute__((weak)) void counters_launch(uint64_t blocks, unsigned threads);
__attribute__((weak)) void counters_barrier(unsigned warps);
__attribute__((weak)) void counters_shuffle();

int blocks_per_sm(const void *kernel, unsigned int block, size_t dynamic_shared)
{
    int by_threads = (int)std::min<unsigned>(THREADS_PER_SM / block, BLOCKS_PER_SM);
    int best = by_threads;
    auto k = kernels().find(kernel);
    if (k != kernels().end()) {
        if (k->second.registers > 0)
            best = std::min(best, REGS_PER_SM / registers_of_block(k->second.registers, block));
        if (k->second.max_threads > 0 && block > (unsigned)k->second.max_threads)
            best = 0;
        size_t shared = dynamic_shared + (size_t)std::max(k->second.static_shared, 0);
        if (shared > 0)
            best = std::min(best, (int)(SHARED_PER_SM / round_up(shared + 1024, 128)));
    } else if (dynamic_shared > 0) {
        best = std::min(best, (int)(SHARED_PER_SM / round_up(dynamic_shared + 1024, 128)));
    }
    return best;
}

cudaError_t set_attribute(const void *kernel, cudaFuncAttribute attr, int value)
{
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || value > SHARED_OPTIN)
            return fail(cudaErrorInvalidValue);
        kernels()[kernel].max_dynamic_shared = value;
    }
    return cudaSuccess;
}
cudaError_t get_attributes(cudaFuncAttributes *attr, const void *kernel)
{
    *attr = cudaFuncAttributes{};
    KernelInfo &k = kernels()[kernel];
    attr->maxThreadsPerBlock = k.max_threads > 0 ? k.max_threads : MAX_BLOCK;
    if (k.registers > 0)
        attr->maxThreadsPerBlock = std::min(
            attr->maxThreadsPerBlock, REGS_PER_BLOCK / (int)round_up((size_t)k.registers * WARP, REG_UNIT) * WARP);
    attr->numRegs = std::max(k.registers, 0);
    attr->sharedSizeBytes = (size_t)std::max(k.static_shared, 0);
    attr->maxDynamicSharedSizeBytes = k.max_dynamic_shared ? k.max_dynamic_shared : SHARED_PER_BLOCK;
    attr->ptxVersion = attr->binaryVersion = 90;
    return cudaSuccess;
}

namespace
{

/* Each thread's stack, with a guard page below it: 64 KiB, 256 KiB under a sanitizer. */
const size_t GUARD_BYTES = 4096;
size_t stack_bytes()
{
    return __sanitizer_start_switch_fiber ? 256 << 10 : 64 << 10;
}

struct Warp {
    unsigned int arrived; /* lanes waiting in a warp-synchronous call */
    unsigned int running; /* lanes ready or running */
    unsigned int active;  /* lanes waiting in __activemask */
};

/* One launch: the grid, the threads of the block running now, and the schedule. */
struct Grid {
    void (*entry)(void *);
    void *arg;
    const char *kernel;
    Here where; /* the launch */
    const void *kernel_ptr;     /* from its kernel_entry */
    unsigned int threads;       /* per block */
    std::vector<Lane> lanes;    /* the block's threads */
    std::vector<Warp> warps;
    /* ready to run, in the order they run: a ring of one slot a thread (a thread is queued once
     * at most), never grown while a CUDA thread runs (ThreadSanitizer would see the move) */
    std::vector<Lane *> queue; /* a power of two long */
    size_t head, queued;       /* queue[head] runs next; `queued` are waiting */
    std::vector<Lane *> batch; /* lanes made ready together */
    unsigned int at_barrier;
    uint64_t rng;
    uint64_t block_number; /* the running block, linear */
    bool aborted;          /* a check refused the launch: no more blocks */
    char *sync; /* ThreadSanitizer's sync addresses, fresh every block */
    char launch_sync, end_sync, fresh;
};

Grid *grid;
Lane host;    /* the host's context while a CUDA thread runs */
char *stacks; /* MAX_BLOCK stacks a set */
uint64_t launches;

uint64_t next_random(uint64_t &s)
{
    uint64_t z = (s += 0x9e3779b97f4a7c15ull); /* splitmix64, as the harness's input */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t seed()
{
    static uint64_t s = [] {
        const char *e = getenv("CUDA_MODEL_SEED");
        return e ? strtoull(e, nullptr, 10) : 1;
    }();
    return s;
}

void check_activemask(Grid &g, unsigned w);

/* A lane leaves the ready state (it waits or has finished). */
inline __attribute__((always_inline)) void stop_running(Grid &g, Lane *l, State s)
{
    l->state = s;
    Warp &w = g.warps[l->t / WARP];
    --w.running;
    if (__builtin_expect(w.active != 0, 0))
        check_activemask(g, l->t / WARP);
}

/* Queues g.batch's lanes to run, in an order the schedule picks (as they are for seed 0). */
void make_ready(Grid &g)
{
    Lane **first = g.batch.data();
    size_t count = g.batch.size();
    if (seed() != 0)
        for (size_t i = count; i > 1; --i) /* Fisher-Yates; Lemire's multiply for the bound */
            std::swap(first[i - 1], first[(unsigned __int128)next_random(g.rng) * i >> 64]);
    for (size_t i = 0; i < count; ++i) {
        if (first[i]->state != State::ready) {
            first[i]->state = State::ready;
            ++g.warps[first[i]->t / WARP].running;
        }
        g.queue[(g.head + g.queued++) & (g.queue.size() - 1)] = first[i];
    }
    g.batch.clear();
}

std::string block_text()
{
    return "block (" + std::to_string(block_idx.x) + "," + std::to_string(block_idx.y) + "," +
           std::to_string(block_idx.z) + ") of " + grid->kernel;
}

std::string lane_text(const Lane &l)
{
    return block_text() + ", warp " + std::to_string(l.t / WARP) + ", lane " +
           std::to_string(l.t % WARP) + " (thread " + std::to_string(l.t) + ")";
}

/* The lane (or the host) that runs next: the queue's next lane, or the host when it is empty. */
inline __attribute__((always_inline)) Lane *next()
{
    Grid &g = *grid;
    if (g.queued == 0)
        return &host;
    Lane *l = g.queue[g.head];
    g.head = (g.head + 1) & (g.queue.size() - 1);
    --g.queued;
    return l;
}

/* Whoever resumed passes itself as the jump's data: its context is where it goes on later (a
 * thread that finished passes nullptr). */
void keep(transfer_t from)
{
    if (from.data != nullptr)
        static_cast<Lane *>(from.data)->ctx = from.fctx;
}

/* Switches from `self` (the host or the running thread; nullptr when it has finished) to `to`,
 * telling the sanitizers; returns when something switches back to `self`. */
void switch_to(Lane *self, Lane *to)
{
    if (to == self)
        return; /* it was next in the queue itself: it goes on */
    current = to;
    thread_idx_now = &to->idx;
    if (__tsan_switch_to_fiber)
        __tsan_switch_to_fiber(to->tsan_fiber, NO_SYNC);
    if (__sanitizer_start_switch_fiber)
        __sanitizer_start_switch_fiber(self ? &self->asan_fake_stack : nullptr, to->stack,
                                       to->stack_bytes);
    keep(jump_fcontext(to->ctx, self)); /* self is nullptr only for a thread that finished */
    if (__sanitizer_finish_switch_fiber && self)
        __sanitizer_finish_switch_fiber(self->asan_fake_stack, nullptr, nullptr);
}

void lane_main(transfer_t from)
{
    keep(from);
    if (__sanitizer_finish_switch_fiber)
        __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
    if (__tsan_acquire) {
        __tsan_acquire(&grid->launch_sync); /* the host's work before the launch */
        __tsan_acquire(&grid->fresh);       /* this block's shared memory, mapped afresh */
    }
    grid->entry(grid->arg);
    stop_running(*grid, current, State::done);
    if (__tsan_release)
        __tsan_release(&grid->end_sync); /* for the host's work after the launch */
    switch_to(nullptr, next());
    abort(); /* a finished thread is never resumed */
}

/* Why the threads still waiting cannot go on, in one message. */
[[noreturn]] void deadlock()
{
    Grid &g = *grid;
    std::map<std::string, std::vector<unsigned>> waiting; /* what they wait at -> threads */
    std::vector<unsigned> exited;
    for (Lane &l : g.lanes) {
        if (l.state == State::done)
            exited.push_back(l.t);
        else if (l.state != State::ready)
            waiting[(l.state == State::barrier ? "the __syncthreads() at "
                                               : "a warp-synchronous call at ") +
                    where_text(l.where)]
                .push_back(l.t);
    }
    std::string msg = block_text() + " (" + std::to_string(g.threads) + " threads) cannot go on:";
    for (auto &[what, ids] : waiting)
        msg += " threads " + ranges(ids) + " wait at " + what + ";";
    if (!exited.empty())
        msg += " threads " + ranges(exited) + " have exited;";
    msg += " every thread of a block must reach the same barriers, and every lane a warp-"
           "synchronous call names must make it (on a GPU: a hang, or undefined behaviour).";
    die(msg);
}

/* ---- shared memory: the arena ------------------------------------------------------------- */
/* One arena for the block that runs: the launch's dynamic shared memory at offset 0, then each
 * __shared__ variable in the order the launch's threads first reach it, 128-byte aligned (a
 * GPU's bank lines) with a poisoned gap after each, then a poisoned guard to the arena's end. */
const size_t ARENA_BYTES = 1 << 20;
char *arena;
size_t dynamic_bytes;  /* this launch's */
size_t static_start;   /* where the variables start */
size_t static_end;     /* where the next one goes */
size_t static_bytes;   /* the variables' sizes, summed: what nvcc counts */
struct SharedVar {
    const char *name;
    size_t offset, bytes;
};
std::vector<SharedVar> shared_vars;   /* this launch's */
std::vector<void **> shared_holders;  /* cleared when the launch ends */

void open_shared(size_t offset, size_t bytes)
{
    if (__asan_unpoison_memory_region)
        __asan_unpoison_memory_region(arena + offset, bytes);
    /* 0xff bytes (int -1, float NaN): a GPU leaves shared memory undefined, and a kernel that reads
     * a slot it did not write this block should find neither the last block's value nor zeros */
    for (size_t i = 0; i < bytes; i += 8)
        *(volatile uint64_t *)(arena + offset + i) = ~0ull;
}

void start_shared(size_t dynamic)
{
    dynamic_bytes = dynamic;
    static_start = round_up(dynamic, 128) + 128;
    static_end = static_start;
    static_bytes = 0;
    dynamic_shared_base = arena;
    /* room enough that no push_back moves them while a CUDA thread runs: a move is a memmove,
     * which ThreadSanitizer sees as the running thread's access to what another thread wrote */
    shared_vars.reserve(1024);
    shared_holders.reserve(1024);
    if (dynamic)
        open_shared(0, round_up(dynamic, 8));
}

void end_shared()
{
    for (void **h : shared_holders)
        *h = nullptr;
    shared_holders.clear();
    shared_vars.clear();
    if (__asan_poison_memory_region)
        __asan_poison_memory_region(arena, ARENA_BYTES);
}

/* ThreadSanitizer: the block's shared memory starts with no history, as a GPU gives each block
 * its own: the arena's used pages are mapped afresh, which ThreadSanitizer sees as new memory,
 * and the block's threads acquire that (g.fresh) when they start. Then every byte is 0xff again. */
void fresh_shared(Grid &g)
{
    if (__tsan_release) {
        size_t bytes = round_up(static_end, PAGE);
        if (mmap(arena, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
                 0) == MAP_FAILED)
            die("cannot map the shared memory afresh.");
        __tsan_release(&g.fresh);
    }
    if (dynamic_bytes)
        open_shared(0, round_up(dynamic_bytes, 8));
    for (const SharedVar &v : shared_vars)
        open_shared(v.offset, round_up(v.bytes, 8));
}

/* ---- memory order: PTX's release and acquire patterns, told to ThreadSanitizer --------------- */
/* A fence publishes what its thread did before it into the thread's fence object; a later
 * atomic of that thread releases the fence object's contents, not the thread's whole history,
 * through a helper fiber of its own (ThreadSanitizer has no other way to release an earlier
 * point of a thread). Device scope: on the atomic's address; block scope: on an address of the
 * atomic's address and the block. */
struct FenceSlot {
    char device, block;   /* the fence objects */
    void *helper;         /* made at the first release */
};
FenceSlot fence_slots[2 * MAX_BLOCK];
std::map<std::pair<const void *, uint64_t>, char *> block_syncs; /* (address, block) -> sync */

char *block_sync(const void *address)
{
    char *&s = block_syncs[{address, grid->block_number}];
    if (s == nullptr)
        s = new char;
    return s;
}

void release_from(Lane *l, char *fence_object, void *to)
{
    FenceSlot &f = fence_slots[l->slot];
    if (f.helper == nullptr)
        f.helper = __tsan_create_fiber(0);
    __tsan_switch_to_fiber(f.helper, NO_SYNC);
    __tsan_acquire(fence_object);
    __tsan_release(to);
    __tsan_switch_to_fiber(l->tsan_fiber, NO_SYNC);
}

} // namespace

void threadfence(Scope scope)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    Lane *l = current;
    if (!tsan_on || grid == nullptr || l == nullptr || l == &host)
        return;
    FenceSlot &f = fence_slots[l->slot];
    __tsan_release(&f.block); /* a device fence orders for the block too */
    l->fenced_block = true;
    if (scope >= scope_device) {
        __tsan_release(&f.device);
        l->fenced_device = true;
    }
}

void atomic_sync(const void *address, Scope scope)
{
    Lane *l = current;
    if (grid == nullptr || l == nullptr || l == &host)
        return;
    FenceSlot &f = fence_slots[l->slot];
    /* release: a fence, then this atomic; the pattern's scope is the narrower of the two */
    if (l->fenced_device && scope >= scope_device)
        release_from(l, &f.device, const_cast<void *>(address));
    if (l->fenced_block)
        release_from(l, &f.block, block_sync(address));
    /* acquire: what earlier release patterns on this address published, at this atomic's scope */
    if (scope >= scope_device)
        __tsan_acquire(const_cast<void *>(address));
    __tsan_acquire(block_sync(address));
}

void *shared_allocate(void **holder, size_t bytes, size_t align, const char *name,
                      Here where)
{
    if (grid == nullptr || current == &host)
        die(std::string("the host code used the __shared__ variable ") + name + " at " +
            where_text(where) + ": shared memory exists only in a running block.");
    Grid &g = *grid;
    size_t offset = round_up(static_end, std::max<size_t>(align, 128));
    static_bytes += bytes;
    if (static_bytes > (size_t)SHARED_PER_BLOCK)
        die(std::string(g.kernel) + " declares " + std::to_string(static_bytes) +
            " bytes of static __shared__ memory (" + name + " at " + where_text(where) +
            " among them): a block may declare at most 48 KiB (49152 bytes), and nvcc refuses "
            "to build it (ptxas: 'uses too much shared data'). Use extern __shared__ memory "
            "and the opt-in (cudaFuncSetAttribute) for more.");
    KernelInfo &k = kernels()[g.kernel_ptr];
    size_t limit = std::max<size_t>(SHARED_PER_BLOCK, (size_t)k.max_dynamic_shared);
    if (static_bytes + dynamic_bytes > limit)
        die(std::string(g.kernel) + " launched at " + where_text(g.where) + " uses " +
            std::to_string(static_bytes) + " bytes of static and " +
            std::to_string(dynamic_bytes) + " of dynamic shared memory, more than the " +
            std::to_string(limit) + " a block may have" +
            (k.max_dynamic_shared ? "" : " without the opt-in (cudaFuncSetAttribute(kernel, "
                                         "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes))") +
            ": a GPU refuses the launch.");
    if (offset + bytes + 64 > ARENA_BYTES)
        die("the shared memory arena is full.");
    static_end = offset + bytes + 64; /* 64 poisoned bytes after each variable */
    k.static_shared = (int)static_bytes;
    open_shared(offset, round_up(bytes, 8));
    if (__asan_poison_memory_region && bytes % 8)
        __asan_poison_memory_region(arena + offset + bytes, 8 - bytes % 8);
    shared_vars.push_back({name, offset, bytes});
    shared_holders.push_back(holder);
    *holder = arena + offset;
    return *holder;
}

void kernel_first_entry(const void *kernel, int max_threads, int min_blocks)
{
    (void)min_blocks;
    Grid &g = *grid;
    kernel_checked = true;
    g.kernel_ptr = kernel;
    KernelInfo &k = kernels()[kernel];
    k.max_threads = max_threads;
    std::string launch = std::string(g.kernel) + " was launched at " + where_text(g.where) +
                         " with " + std::to_string(g.threads) + " threads a block";
    std::string why;
    /* the errors an H200 returns (tests/corpus/: launch_bounds_exceeded, registers_many_...) */
    cudaError_t error = cudaErrorInvalidValue;
    if (max_threads > 0 && g.threads > (unsigned)max_threads)
        why = launch + ", more than its __launch_bounds__(" + std::to_string(max_threads) + ")";
    else if (k.registers > 0 && registers_of_block(k.registers, g.threads) > REGS_PER_BLOCK) {
        error = cudaErrorLaunchOutOfResources;
        why = launch + ", at " + std::to_string(k.registers) + " registers a thread (ptxas): " +
              std::to_string(registers_of_block(k.registers, g.threads)) +
              " registers, more than the 65536 a block may have";
    }
    else if (dynamic_bytes > (size_t)std::max(SHARED_PER_BLOCK, k.max_dynamic_shared)) {
        why = std::string(g.kernel) + " was launched at " + where_text(g.where) + " with " +
              std::to_string(dynamic_bytes) + " bytes of dynamic shared memory, more than the " +
              std::to_string(std::max(SHARED_PER_BLOCK, k.max_dynamic_shared)) +
              " a block may have" +
              (k.max_dynamic_shared ? "" : " without the opt-in (cudaFuncSetAttribute)");
    }
    if (why.empty())
        return;
    note(why + ": a GPU refuses the launch (" + cudaGetErrorName(error) + "), and runs nothing.");
    fail(error);
    g.aborted = true;
    switch_to(nullptr, &host); /* the launch ends here; this thread's stack is dropped */
}

namespace
{

/* ThreadSanitizer's fibers: creating one costs about a millisecond, so thread t of a block runs
 * on fiber (set, t), made once, with its own stack. Blocks alternate between two sets: a fiber
 * orders everything it runs, so two blocks on one set would be ordered, and a race between them
 * hidden; with two sets, a race between a block and the next ones of the other set is found.
 * Without ThreadSanitizer, one set. */
int sets()
{
    return __tsan_acquire ? 2 : 1;
}
char *stack_of(int set, unsigned t)
{
    return stacks + ((size_t)set * MAX_BLOCK + t) * (stack_bytes() + GUARD_BYTES) + GUARD_BYTES;
}
void *tsan_fiber_of(int set, unsigned t)
{
    static void *fibers[2][MAX_BLOCK];
    if (fibers[set][t] == nullptr) {
        fibers[set][t] = __tsan_create_fiber(0);
        char name[64];
        snprintf(name, sizeof name, "thread %u of a block", t);
        __tsan_set_fiber_name(fibers[set][t], name);
    }
    return fibers[set][t];
}

/* Runs block number b (blockIdx in x-major order) to its end. */
void run_block(Grid &g, uint64_t b)
{
    block_idx = {(unsigned)(b % grid_dim.x), (unsigned)(b / grid_dim.x % grid_dim.y),
                 (unsigned)(b / grid_dim.x / grid_dim.y)};
    g.block_number = b;
    static uint64_t blocks_run;
    int set = (int)(blocks_run++ % sets());
    if (__tsan_acquire)
        g.sync = (char *)malloc(1 + g.warps.size()); /* freed: ThreadSanitizer forgets its clocks */
    fresh_shared(g);
    g.head = g.queued = 0;
    g.at_barrier = 0;
    for (Warp &w : g.warps)
        w = Warp{};
    for (Lane &l : g.lanes) {
        l.state = State::done; /* make_ready counts it in */
        l.stack = stack_of(set, l.t);
        l.slot = set * MAX_BLOCK + (int)l.t;
        l.fenced_device = l.fenced_block = false;
        l.ctx = make_fcontext((char *)l.stack + l.stack_bytes, l.stack_bytes, lane_main);
        if (__tsan_create_fiber)
            l.tsan_fiber = tsan_fiber_of(set, l.t);
        g.batch.push_back(&l);
    }
    make_ready(g);
    switch_to(&host, next()); /* back when no thread can run, or the launch was refused */
    if (!g.aborted) {
        for (Lane &l : g.lanes)
            if (l.state != State::done)
                deadlock();
        if (&counters_block_done != nullptr)
            counters_block_done();
    }
    free(g.sync);
}

/* The first launch: the stacks, the arena, the host's own record, the sanitizers' view. */
void start_model()
{
    size_t bytes = (size_t)sets() * MAX_BLOCK * (stack_bytes() + GUARD_BYTES);
    stacks = (char *)mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    arena = (char *)mmap(nullptr, ARENA_BYTES + PAGE, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stacks == MAP_FAILED || arena == MAP_FAILED)
        die("cannot map the threads' stacks and shared memory.");
    mprotect(arena + ARENA_BYTES, PAGE, PROT_NONE);
    if (__asan_poison_memory_region)
        __asan_poison_memory_region(arena, ARENA_BYTES);
    tsan_on = __tsan_create_fiber != nullptr && __tsan_acquire != nullptr;
    if (__tsan_get_current_fiber)
        host.tsan_fiber = __tsan_get_current_fiber();
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(::sanitizer_died);
    pthread_attr_t attr;
    void *bottom;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &bottom, &host.stack_bytes);
        host.stack = bottom;
        pthread_attr_destroy(&attr);
    }
}

} // namespace

/* counters.cc: the running CUDA thread's number in its block, or -1 for the host (and for an
 * address on a thread's stack, whose accesses are its registers' on a GPU). */
int running_thread_number(uintptr_t address)
{
    if (grid == nullptr || current == nullptr || current == &host)
        return -1;
    size_t all = (size_t)sets() * MAX_BLOCK * (stack_bytes() + GUARD_BYTES);
    if ((address >= (uintptr_t)stacks && address < (uintptr_t)stacks + all) ||
        (address >= (uintptr_t)host.stack && address < (uintptr_t)host.stack + host.stack_bytes))
        return -1; /* a thread's stack (its registers), or the host's (the launch's arguments) */
    auto inside = [address](const void *p, size_t bytes) {
        return address >= (uintptr_t)p && address < (uintptr_t)p + bytes;
    };
    /* threadIdx, blockIdx, blockDim, gridDim: special registers on a GPU */
    if (inside(grid->lanes.data(), grid->lanes.size() * sizeof(Lane)) ||
        inside(&thread_idx_now, sizeof thread_idx_now) || inside(&block_idx, sizeof block_idx) ||
        inside(&block_dim, sizeof block_dim) || inside(&grid_dim, sizeof grid_dim))
        return -1;
    return (int)current->t;
}
/* counters.cc: whether an address is shared memory. */
bool is_shared(uintptr_t address)
{
    return address >= (uintptr_t)arena && address < (uintptr_t)arena + ARENA_BYTES;
}

bool launch_ok(dim3 grid_size, dim3 block_size, size_t dynamic_shared, const char *kernel,
               Here where)
{
    uint64_t threads = (uint64_t)block_size.x * block_size.y * block_size.z;
    uint64_t blocks = (uint64_t)grid_size.x * grid_size.y * grid_size.z;
    if (threads == 0 || threads > MAX_BLOCK || block_size.z > 64 || blocks == 0 ||
        grid_size.x > 2147483647u || grid_size.y > 65535 || grid_size.z > 65535) {
        fail(cudaErrorInvalidConfiguration); /* runs nothing, as the GPU: cudaGetLastError says */
        return false;
    }
    if (dynamic_shared > (size_t)SHARED_OPTIN) {
        note(std::string(kernel) + " was launched at " + where_text(where) + " with " +
             std::to_string(dynamic_shared) + " bytes of dynamic shared memory, more than the " +
             std::to_string(SHARED_OPTIN) + " a block of an H200 may have: a GPU refuses the "
             "launch (cudaErrorInvalidValue), and runs nothing.");
        fail(cudaErrorInvalidValue);
        return false;
    }
    if (grid != nullptr && current != &host)
        die(std::string("a kernel launched ") + kernel + " at " + where_text(where) +
            ": the CPU model does not run launches from device code (dynamic parallelism).");
    return true;
}

void run_grid(void (*entry)(void *), void *arg, dim3 grid_size, dim3 block_size,
              size_t dynamic_shared, const char *kernel, Here where)
{
    uint64_t threads = (uint64_t)block_size.x * block_size.y * block_size.z;
    uint64_t blocks = (uint64_t)grid_size.x * grid_size.y * grid_size.z;
    if (stacks == nullptr)
        start_model();
    if (&counters_launch != nullptr)
        counters_launch(blocks, (unsigned)threads);
    DeviceOpen open; /* device memory, for the kernel's threads */
    Grid g{};
    g.entry = entry;
    g.arg = arg;
    g.kernel = kernel;
    g.where = where;
    g.threads = (unsigned)threads;
    g.lanes.resize(threads);
    g.warps.resize((threads + WARP - 1) / WARP);
    for (unsigned t = 0; t < threads; ++t) {
        Lane &l = g.lanes[t];
        l.t = t;
        l.idx = {t % block_size.x, t / block_size.x % block_size.y,
                 t / block_size.x / block_size.y};
        l.stack_bytes = stack_bytes();
    }
    g.queue.resize(std::bit_ceil(threads));
    g.batch.reserve(threads);
    g.rng = seed() * 0x100000001b3ull + ++launches;
    grid = &g;
    grid_dim = grid_size;
    block_dim = block_size;
    kernel_checked = false;
    start_shared(dynamic_shared);
    if (__tsan_release)
        __tsan_release(&g.launch_sync);
    /* The blocks in an order the schedule picks: i -> (a * i + c) mod blocks, a coprime with
     * blocks, which visits each block once. */
    uint64_t a = 1, c = 0;
    if (seed() != 0 && blocks > 1) {
        c = next_random(g.rng) % blocks;
        do
            a = next_random(g.rng) % blocks;
        while (std::gcd(a, blocks) != 1);
    }
    for (uint64_t i = 0; i < blocks && !g.aborted; ++i)
        run_block(g, (uint64_t)(((unsigned __int128)a * i + c) % blocks));
    if (__tsan_acquire)
        __tsan_acquire(&g.end_sync);
    end_shared();
    block_syncs.clear();
    grid = nullptr;
    current = nullptr;
}

namespace
{
/* One copy of each file name: a call site's name may come as several copies (one per inlined
 * copy of the call), and comparing them with strcmp at every barrier would cost more than the
 * call. A table from each copy to the first copy seen with the same text. */
const char *canonical(const char *file)
{
    enum { SIZE = 1024 };
    static const char *copy[SIZE], *first[SIZE];
    size_t h = ((uintptr_t)file >> 4) % SIZE;
    for (size_t probe = 0; probe < SIZE; ++probe, h = (h + 1) % SIZE) {
        if (copy[h] == file)
            return first[h];
        if (copy[h] == nullptr) {
            const char *f = file;
            for (size_t j = 0; j < SIZE; ++j)
                if (copy[j] != nullptr && strcmp(copy[j], file) == 0) {
                    f = first[j];
                    break;
                }
            copy[h] = file, first[h] = f;
            return f;
        }
    }
    die("more than 1024 copies of source file names: the model cannot tell its call sites apart.");
}

bool same_place(Here a, Here b)
{
    return a.line() == b.line() && a.column() == b.column() &&
           (a.file_name() == b.file_name() || canonical(a.file_name()) == canonical(b.file_name()));
}

const char *barrier_name(BarrierOp op)
{
    static const char *const names[] = {"__syncthreads()", "__syncthreads_count()",
                                        "__syncthreads_and()", "__syncthreads_or()"};
    return names[(int)op];
}
} // namespace

int syncthreads(BarrierOp op, int predicate, Here where)
{
    Grid &g = *grid;
    Lane *self = current;
    if (grid == nullptr || self == &host)
        die(std::string(barrier_name(op)) + " called by the host code at " + where_text(where) +
            ": a barrier is for the threads of a block.");
    self->where = where;
    self->barrier_op = op;
    self->value = (uint64_t)predicate;
    if (__tsan_release)
        __tsan_release(g.sync); /* everything before the barrier ... */
    stop_running(g, self, State::barrier);
    if (++g.at_barrier == g.threads) {
        int count = 0;
        for (Lane &l : g.lanes) {
            if (!same_place(l.where, where) || l.barrier_op != op)
                deadlock(); /* two barriers: the message lists who waits where */
            count += (int)l.value;
            g.batch.push_back(&l);
        }
        if (op != BarrierOp::plain) {
            int result = op == BarrierOp::count ? count
                         : op == BarrierOp::all ? count == (int)g.threads
                                                : count > 0;
            for (Lane &l : g.lanes)
                l.result = (uint64_t)result;
        }
        g.at_barrier = 0;
        make_ready(g);
        if (&counters_barrier != nullptr)
            counters_barrier((unsigned)g.warps.size()); /* one BAR instruction a warp */
    }
    switch_to(self, next());
    if (__tsan_acquire)
        __tsan_acquire(g.sync); /* ... happens before everything after it, in every thread */
    return (int)self->result;
}

namespace
{

const char *op_name(WarpOp op)
{
    static const char *const names[] = {
        "__syncwarp",        "__shfl_sync",       "__shfl_up_sync",    "__shfl_down_sync",
        "__shfl_xor_sync",   "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
        "__reduce_and_sync", "__reduce_or_sync",  "__reduce_xor_sync", "__ballot_sync",
        "__any_sync",        "__all_sync",        "__match_any_sync",  "__match_all_sync"};
    return names[(int)op]; /* WarpOp's order */
}

/* The lane a shuffle reads, as PTX's shfl.sync computes it: c = ((32 - width) << 8) | clamp,
 * segmask = c[12:8], and a lane whose source lies past its segment's end (or, shifting up, before
 * its start) reads its own value. Each group of `width` lanes may read from an earlier group with
 * shfl_xor, never from a later one. */
unsigned shuffle_source(WarpOp op, unsigned lane, int b, int width)
{
    unsigned segmask = (unsigned)(32 - width) & 31, bval = (unsigned)b & 31;
    unsigned cval = op == WarpOp::shfl_up ? 0 : 31;
    int max_lane = (int)((lane & segmask) | (cval & ~segmask)), min_lane = (int)(lane & segmask);
    int j;
    bool ok;
    switch (op) {
    case WarpOp::shfl_up:
        j = (int)lane - (int)bval, ok = j >= max_lane;
        break;
    case WarpOp::shfl_down:
        j = (int)(lane + bval), ok = j <= max_lane;
        break;
    case WarpOp::shfl_xor:
        j = (int)(lane ^ bval), ok = j <= max_lane;
        break;
    default: /* shfl: idx */
        j = min_lane | (int)(bval & ~segmask), ok = j <= max_lane;
        break;
    }
    return ok ? (unsigned)j : lane;
}

/* The lanes of `mask` have all made the call: each gets its result. */
void complete(Grid &g, Lane *first, unsigned int mask)
{
    Lane *lane0 = first - first->t % WARP; /* lane 0 of this warp */
    /* The reductions work on 32-bit values, signed or not (arg), as __reduce_*_sync's overloads. */
    bool is_signed = first->arg != 0;
    int64_t total = 0, lo = INT64_MAX, hi = INT64_MIN;
    uint32_t all_and = ~0u, all_or = 0, all_xor = 0;
    unsigned int ballot = 0;
    bool same = true;
    for (unsigned m = 0; m < WARP; ++m)
        if (mask >> m & 1) {
            uint64_t v = lane0[m].value;
            int64_t key = is_signed ? (int64_t)(int32_t)(uint32_t)v : (int64_t)(uint32_t)v;
            total += key;
            lo = std::min(lo, key);
            hi = std::max(hi, key);
            all_and &= (uint32_t)v, all_or |= (uint32_t)v, all_xor ^= (uint32_t)v;
            ballot |= (unsigned)(v != 0) << m;
            same = same && v == first->value;
        }
    for (unsigned m = 0; m < WARP; ++m) {
        if (!(mask >> m & 1))
            continue;
        Lane &l = lane0[m];
        int src = -1;
        switch (l.op) {
        case WarpOp::shfl:
        case WarpOp::shfl_up:
        case WarpOp::shfl_down:
        case WarpOp::shfl_xor:
            src = (int)shuffle_source(l.op, m, l.arg, l.width);
            break;
        case WarpOp::reduce_add:
            l.result = (uint32_t)total;
            break; /* wraps, as the GPU's */
        case WarpOp::reduce_min:
            l.result = (uint32_t)lo;
            break;
        case WarpOp::reduce_max:
            l.result = (uint32_t)hi;
            break;
        case WarpOp::reduce_and:
            l.result = all_and;
            break;
        case WarpOp::reduce_or:
            l.result = all_or;
            break;
        case WarpOp::reduce_xor:
            l.result = all_xor;
            break;
        case WarpOp::ballot:
            l.result = ballot;
            break;
        case WarpOp::any:
            l.result = ballot != 0;
            break;
        case WarpOp::all:
            l.result = ballot == mask;
            break;
        case WarpOp::match_any: {
            unsigned int r = 0;
            for (unsigned o = 0; o < WARP; ++o)
                if (mask >> o & 1 && lane0[o].value == l.value)
                    r |= 1u << o;
            l.result = r;
            break;
        }
        case WarpOp::match_all:
            l.result = same ? mask : 0;
            break;
        case WarpOp::syncwarp:
            break;
        }
        if (src >= 0) {
            if (!(mask >> src & 1))
                die(lane_text(l) + ": " + op_name(l.op) + " at " + where_text(l.where) +
                    " reads lane " + std::to_string(src) + ", which is not in the mask " +
                    hex(mask) + ": its value is undefined.");
            l.result = lane0[src].value;
        }
        if (&l != current)
            g.batch.push_back(&l);
    }
    g.warps[first->t / WARP].arrived &= ~mask;
    make_ready(g);
    bool shuffle = first->op >= WarpOp::shfl && first->op <= WarpOp::shfl_xor;
    if (shuffle && &counters_shuffle != nullptr)
        counters_shuffle(); /* one SHFL instruction of this warp */
}

/* The lanes waiting in __activemask, once none of their warp can run: those at one call site
 * are the lanes that reach it together, and each group gets its own mask. */
void check_activemask(Grid &g, unsigned w)
{
    Warp &warp = g.warps[w];
    if (warp.running != 0 || warp.active == 0)
        return;
    Lane *lane0 = &g.lanes[w * WARP];
    unsigned int left = warp.active;
    while (left) {
        Lane &first = lane0[__builtin_ctz(left)];
        unsigned int group = 0;
        for (unsigned m = 0; m < WARP; ++m)
            if (left >> m & 1 && same_place(lane0[m].where, first.where))
                group |= 1u << m;
        for (unsigned m = 0; m < WARP; ++m)
            if (group >> m & 1) {
                lane0[m].result = group;
                g.batch.push_back(&lane0[m]);
            }
        left &= ~group;
    }
    warp.active = 0;
    make_ready(g);
}

} // namespace

unsigned int activemask(Here where)
{
    Grid &g = *grid;
    Lane *self = current;
    if (grid == nullptr || self == &host)
        die("__activemask() called by the host code at " + where_text(where) + ".");
    self->where = where;
    g.warps[self->t / WARP].active |= 1u << (self->t % WARP);
    stop_running(g, self, State::active);
    switch_to(self, next());
    return (unsigned int)self->result;
}

uint64_t warp_sync(WarpOp op, unsigned int mask, uint64_t value, int arg, int width,
                   Here where)
{
    Grid &g = *grid;
    Lane *self = current;
    if (grid == nullptr || self == &host)
        die(std::string(op_name(op)) + " called by the host code at " + where_text(where) +
            ": warp-synchronous calls are for a warp's lanes.");
    unsigned lane = self->t % WARP, w = self->t / WARP;
    unsigned present = g.threads - w * WARP >= (unsigned)WARP
                           ? 0xffffffffu
                           : (1u << (g.threads - w * WARP)) - 1; /* the lanes this warp has */
    auto call = [&] { /* only for a message */
        return std::string(op_name(op)) + "(" + hex(mask) + ", ...) at " + where_text(where);
    };
    if (!(mask >> lane & 1))
        die(lane_text(*self) + " calls " + call() +
            ", whose mask does not hold its own lane: a lane must name itself in the mask of "
            "every _sync call it makes.");
    if (mask & ~present)
        die(lane_text(*self) + " calls " + call() +
            ", whose mask names lanes this warp does not have (the block has " +
            std::to_string(g.threads) + " threads).");
    if (width < 1 || width > WARP || (width & (width - 1)))
        die(lane_text(*self) + " calls " + call() + " with width " + std::to_string(width) +
            ": it must be a power of two from 1 to 32.");
    self->op = op;
    self->mask = mask;
    self->value = value;
    self->arg = arg;
    self->width = width;
    self->where = where;
    Warp &warp = g.warps[w];
    Lane *lane0 = self - lane;
    /* Since compute capability 7.0, lanes may meet from different call sites: a call matches
     * another of the same kind (PTX: the same qualifiers) with the same mask. */
    for (unsigned m = 0; m < WARP; ++m) {
        Lane &o = lane0[m];
        if (!(mask >> m & 1) || &o == self)
            continue;
        if (o.state == State::done)
            die(lane_text(*self) + " calls " + call() + ", whose mask names lane " +
                std::to_string(m) + ", which has exited: it never makes the call (on a GPU, its "
                "value is undefined).");
        if (!(warp.arrived >> m & 1))
            continue;
        if (o.op != op || o.mask != mask)
            die(lane_text(*self) + " calls " + call() + " while lane " + std::to_string(m) +
                ", which its mask names, waits at " + op_name(o.op) + "(" + hex(o.mask) +
                ", ...) at " + where_text(o.where) +
                ": the lanes of a mask must make calls of the same kind, with the same mask.");
    }
    warp.arrived |= 1u << lane;
    if (__tsan_release)
        __tsan_release(g.sync + 1 + w);
    if ((warp.arrived & mask) == mask) {
        complete(g, self, mask); /* the last to arrive goes on at once */
    } else {
        stop_running(g, self, State::warp);
        switch_to(self, next());
    }
    if (__tsan_acquire)
        __tsan_acquire(g.sync + 1 + w);
    return self->result;
}

float flush_subnormal(float x)
{
    return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
}

void trap(const char *what, Here where)
{
    if (grid == nullptr || current == &host)
        die(std::string(what) + " at " + where_text(where) + ".");
    die(std::string(what) + " at " + where_text(where) + " in " + lane_text(*current) +
        ": the kernel stopped (on a GPU: cudaErrorLaunchFailure at the next synchronisation).");
}

long long clock_now()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace cudamodel

/* ---- what the sanitizers do on a report: one line of the model's own, and exit 3 ------------ */
namespace
{
bool cudamodel_running()
{
    using namespace cudamodel;
    return grid != nullptr && current != nullptr && current != &host;
}

/* The thread running now, in CUDA's words, or "the host" between launches. */
std::string running_thread()
{
    using namespace cudamodel;
    if (grid == nullptr || current == nullptr || current == &host)
        return "the host code";
    return "thread (" + std::to_string(current->idx.x) + "," + std::to_string(current->idx.y) +
           "," + std::to_string(current->idx.z) + ") of " + block_text();
}

/* What an address is to the kernel: shared memory, a cudaMalloc allocation, or neither. */
std::string what_is(const char *p)
{
    using namespace cudamodel;
    if (arena && p >= arena && p < arena + ARENA_BYTES) {
        size_t off = (size_t)(p - arena);
        for (const SharedVar &v : shared_vars)
            if (off >= v.offset && off < v.offset + round_up(v.bytes, 128) + 64)
                return off < v.offset + v.bytes
                           ? "shared memory (byte " + std::to_string(off - v.offset) + " of " +
                                 v.name + ", " + std::to_string(v.bytes) + " bytes)"
                           : "shared memory, " + std::to_string(off - v.offset - v.bytes) +
                                 " bytes past the end of " + v.name + " (" +
                                 std::to_string(v.bytes) + " bytes)";
        if (off < round_up(dynamic_bytes, 128) + 128)
            return off < dynamic_bytes
                       ? "shared memory (byte " + std::to_string(off) +
                             " of the launch's dynamic shared memory)"
                       : "shared memory, " + std::to_string(off - dynamic_bytes) +
                             " bytes past the end of the launch's " +
                             std::to_string(dynamic_bytes) + " bytes of dynamic shared memory";
        return "shared memory, past every variable";
    }
    auto a = allocation_of(p);
    if (a) {
        ssize_t off = p - a->first;
        if (off < 0)
            return "global memory, " + std::to_string(-off) +
                   " bytes before the start of a cudaMalloc allocation of " +
                   std::to_string(a->second.bytes) + " bytes";
        if ((size_t)off < a->second.bytes)
            return "global memory (byte " + std::to_string(off) + " of a cudaMalloc allocation of " +
                   std::to_string(a->second.bytes) + " bytes)";
        return "global memory, " + std::to_string((size_t)off - a->second.bytes) +
               " bytes past the end of a cudaMalloc allocation of " +
               std::to_string(a->second.bytes) + " bytes";
    }
    char name[256] = "";
    if (__sanitizer_symbolize_global)
        __sanitizer_symbolize_global((void *)p, "%g", name, sizeof name);
    if (name[0])
        return std::string("global memory (the __device__ variable ") + name + ")";
    return "global memory (a __device__ variable, or host memory)";
}

} // namespace

extern "C" {
__attribute__((weak)) void *__asan_get_report_address(void);
__attribute__((weak)) int __asan_get_report_access_type(void);
__attribute__((weak)) size_t __asan_get_report_access_size(void);
__attribute__((weak)) int __tsan_get_report_data(void *report, const char **description, int *count,
                                                 int *stack_count, int *mop_count, int *loc_count,
                                                 int *mutex_count, int *thread_count,
                                                 int *unique_tid_count, void **sleep_trace,
                                                 unsigned long trace_size);
__attribute__((weak)) int __tsan_get_report_mop(void *report, unsigned long idx, int *tid,
                                                void **addr, int *size, int *write, int *atomic,
                                                void **trace, unsigned long trace_size);

/* AddressSanitizer has printed its report (with the source line) and is about to exit: say, in
 * CUDA's words, who made the bad access and where it went. */
static void sanitizer_died(void)
{
    if (!__asan_get_report_address || __asan_get_report_address() == nullptr)
        return; /* not AddressSanitizer's report: UBSan's alignment check says it all itself */
    const char *p = (const char *)__asan_get_report_address();
    fprintf(stderr,
            "CPU model: %s made a %zu-byte %s of %s, outside every array it may touch "
            "(compute-sanitizer's memcheck reports it on a GPU, where it may also pass unseen): "
            "the report above gives the source line.\n",
            running_thread().c_str(), __asan_get_report_access_size(),
            __asan_get_report_access_type() ? "write" : "read", what_is(p).c_str());
}

/* ThreadSanitizer has printed a data race: say it in CUDA's words. The report's first access is
 * the running thread's. */
void __tsan_on_report(void *report)
{
    const char *description = nullptr;
    int count, stacks, mops = 0, locs, mutexes, threads, tids;
    void *sleep = nullptr;
    if (!__tsan_get_report_data ||
        !__tsan_get_report_data(report, &description, &count, &stacks, &mops, &locs, &mutexes,
                                &threads, &tids, &sleep, 1) ||
        strcmp(description, "data-race") != 0 || mops < 2)
        return;
    int tid[2], size[2], write[2], atomic[2];
    void *addr[2], *trace[1];
    for (int i = 0; i < 2; ++i)
        __tsan_get_report_mop(report, i, &tid[i], &addr[i], &size[i], &write[i], &atomic[i], trace,
                              1);
    fprintf(stderr,
            "CPU model: a data race on %s: %s %s it, and another thread %s it before, "
            "with nothing between the two that orders them (a __syncthreads() of their block, a "
            "_sync intrinsic of their warp, or a __threadfence before the writer's atomic that "
            "the reader's atomic then reads): the report above gives both source lines "
            "(compute-sanitizer's racecheck sees such races in shared memory).\n",
            what_is((const char *)addr[0]).c_str(), running_thread().c_str(),
            write[0] ? "wrote" : "read", write[1] ? "wrote" : "read");
}
}
/* report_atomic_races=0: a plain read that races an atomic, as the CUDA Programming Guide's
 * atomicCAS loop reads its first guess, is no data race of CUDA's; a wrong sum shows the rest. */
extern "C" const char *__tsan_default_options()
{
    return "halt_on_error=1:exitcode=3:report_signal_unsafe=0:report_atomic_races=0";
}
extern "C" const char *__ubsan_default_options()
{
    return "exitcode=3:print_stacktrace=1:halt_on_error=1";
}
/* allocator_may_return_null=1: a host allocation larger than the machine's memory returns NULL,
 * and the harness refuses it in one sentence, not in AddressSanitizer's out-of-memory report. */
extern "C" const char *__asan_default_options()
{
    return "exitcode=3:detect_leaks=0:allow_user_segv_handler=1:allocator_may_return_null=1";
}
