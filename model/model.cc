/* model.cc: the CPU model of a CUDA GPU that runs the course's kernels (model/cuda_runtime.h).
 *
 * What it models. One GPU, an NVIDIA H200 (132 multiprocessors, 2048 threads and 32 blocks each,
 * compute capability 9.0), so that a stage's grid formula gives the grid it gives there. A launch
 * runs its blocks one after another, in an order the schedule's seed picks (a GPU runs them in any
 * order); the threads of a block run as fibers (Boost.Context's fcontext), one stack each.
 *
 * Independent thread scheduling, as on every GPU since Volta: nothing orders two threads, lanes
 * of one warp included, but a barrier (__syncthreads), a warp-synchronous intrinsic (__syncwarp,
 * the _sync shuffles and reductions) or an atomic. A thread runs straight through until it reaches
 * one of the first two; there it waits, and the model runs another. When every thread a barrier or
 * intrinsic names has arrived, they go on, in an order the seed picks again. So the model never
 * runs a warp in lockstep: code that needs lockstep (the `volatile` last-warp unroll) sees its
 * lanes in another order and gives another sum, and ThreadSanitizer (below) names the race.
 *
 * What it checks, each as one message that names the block, the threads and the source line:
 *   - a barrier that not every thread of the block reaches, or threads at two different barriers
 *     (a hang on the GPU: PTX's bar.sync must be reached by the whole block);
 *   - a warp-synchronous intrinsic whose mask does not hold the calling lane, names lanes the
 *     warp does not have, or whose lanes do not all make the same call;
 *   - with CUCC_SANITIZE=address (AddressSanitizer, the Makefile's default): a read or write
 * outside an allocation, a shared array or a kernel's stack;
 *   - with CUCC_SANITIZE=thread (ThreadSanitizer, through its fiber API): a data race,
 *     two threads touching one address, one of them writing, with no barrier, _sync intrinsic,
 *     atomic or __threadfence pair between them. Each CUDA thread is a fiber of its own, and the
 *     model tells ThreadSanitizer what a GPU orders: a launch orders the host's work before every
 *     thread, a barrier the block's threads, an intrinsic its lanes, and a __threadfence every
 *     fence before it with this thread's later accesses. Blocks are not ordered with each other, so
 *     a race between two blocks is found too, though the model runs them one after another, unless
 *     they ran on the same set of fibers (tsan_fiber_of: blocks alternate between two sets).
 * Environment: CUDA_MODEL_SEED=S picks the schedule (default 1; 0 runs every thread in index
 * order, and blocks in order): a launch's schedule is a function of S and the launch's number,
 * so a run is reproducible and its repeats still try several orders.
 */
#include "cuda_runtime.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <pthread.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

/* Boost.Context's fcontext (libboost_context; Debian: libboost-context-dev): a fiber switch in a
 * few instructions, without the system call that ucontext's swapcontext makes for the signal
 * mask. Declared here as boost/context/detail/fcontext.hpp declares them (extern "C"), so that
 * building the model needs the library alone. make_fcontext prepares a stack to run fn;
 * jump_fcontext saves the running context and resumes `to`, passing vp; the resumed side gets
 * the context it came from and vp, as a transfer_t. */
typedef void *fcontext_t;
struct transfer_t {
    fcontext_t fctx;
    void *data;
};
extern "C" transfer_t jump_fcontext(fcontext_t const to, void *vp);
extern "C" fcontext_t make_fcontext(void *sp, size_t size, void (*fn)(transfer_t));

/* The sanitizers' fiber and synchronisation interfaces: present only in a program linked with
 * one (weak: null otherwise). model.o itself is never instrumented, so the model's bookkeeping is
 * invisible to them; they see the kernels' accesses. */
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
__attribute__((weak)) void __sanitizer_set_death_callback(void (*callback)(void));
/* The kernels' shared arrays (cuda_runtime.h, __shared__): the linker's bounds of the section. */
extern char __start_cuda_shared[] __attribute__((weak));
extern char __stop_cuda_shared[] __attribute__((weak));
}
static const unsigned NO_SYNC = 1; /* __tsan_switch_to_fiber_no_sync */
extern "C" {
static void asan_died(void); /* below: the model's line after AddressSanitizer's report */
}

/* In the shared arrays' section, after them (the Makefile links model.o last): an access up to
 * 256 KiB past the last array lands here, and AddressSanitizer reports it (poisoned at the first
 * launch). 256 KiB: more than a multiprocessor's whole shared memory. */
__attribute__((section("cuda_shared"), aligned(64))) char shared_guard[256 << 10];

namespace
{

/* ---- the modelled GPU ----------------------------------------------------------------------- */
const char DEVICE_NAME[] = "CPU model of an NVIDIA H200";
const int SM_COUNT = 132, THREADS_PER_SM = 2048, BLOCKS_PER_SM = 32, WARP = 32;
const int MAX_BLOCK = 1024;
const int MEMORY_CLOCK_KHZ = 3134000, BUS_BITS = 6144; /* 4814 GB/s, as the H200 reports */
const int L2_BYTES = 62914560, SHARED_PER_BLOCK = 49152;

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

std::string where_text(std::source_location w)
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

/* ---- device memory: host memory, 256-byte aligned as cudaMalloc's ------------------------- */
std::map<char *, size_t> allocations; /* start -> bytes */

} // namespace

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
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
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
        *value = MAX_BLOCK;
        break;
    case cudaDevAttrMaxBlockDimX:
        *value = MAX_BLOCK;
        break;
    case cudaDevAttrMaxGridDimX:
        *value = 2147483647;
        break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
        *value = SHARED_PER_BLOCK;
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
    prop->warpSize = WARP;
    prop->maxThreadsPerBlock = MAX_BLOCK;
    prop->multiProcessorCount = SM_COUNT;
    prop->maxThreadsPerMultiProcessor = THREADS_PER_SM;
    prop->major = 9;
    prop->l2CacheSize = L2_BYTES;
    prop->memoryBusWidth = BUS_BITS;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    return cudaSuccess;
} /* every launch has finished */

/* The model's device memory is the host's: what the host has available is what is free. */
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = (size_t)host_bytes(_SC_AVPHYS_PAGES);
    *total_bytes = (size_t)host_bytes(_SC_PHYS_PAGES);
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **ptr, size_t bytes)
{
    void *p = nullptr;
    if (bytes > (size_t)host_bytes(_SC_PHYS_PAGES) || posix_memalign(&p, 256, bytes ? bytes : 1))
        return *ptr = nullptr, fail(cudaErrorMemoryAllocation);
    allocations[(char *)p] = bytes;
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaFree(void *ptr)
{
    if (ptr == nullptr)
        return cudaSuccess;
    auto a = allocations.find((char *)ptr);
    if (a == allocations.end())
        return fail(cudaErrorInvalidDevicePointer);
    allocations.erase(a);
    free(ptr);
    return cudaSuccess;
}

namespace
{
/* A host call's device range must lie inside one allocation: else one sentence and exit 3, as
 * compute-sanitizer's memcheck reports a bad cudaMemcpy. */
void check_range(const void *p, size_t bytes, const char *call)
{
    auto a = allocations.upper_bound((char *)p);
    if (a != allocations.begin()) {
        --a;
        if ((char *)p >= a->first && (size_t)((char *)p - a->first) + bytes <= a->second)
            return;
    }
    die(std::string(call) + " of " + std::to_string(bytes) +
        " bytes at a device address that is not inside one cudaMalloc allocation.");
}
} // namespace

cudaError_t cudaMemset(void *ptr, int value, size_t bytes)
{
    check_range(ptr, bytes, "cudaMemset");
    memset(ptr, value, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes, cudaStream_t)
{
    return cudaMemset(ptr, value, bytes);
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice)
        check_range(dst, bytes, "cudaMemcpy");
    if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice)
        check_range(src, bytes, "cudaMemcpy");
    memmove(dst, src, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t)
{
    return cudaMemcpy(dst, src, bytes, kind);
}

/* One stream: every call has run when it returns, so a stream only needs to be told apart from
 * no stream (a distinct non-null handle) and to be freed. */
struct cudaModelStream {
    unsigned int flags;
};
cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    if (flags > cudaStreamNonBlocking)
        return fail(cudaErrorInvalidValue);
    *stream = new cudaModelStream{flags};
    return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    delete stream;
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t)
{
    return cudaSuccess;
}

/* Events keep the host's clock: a model's time says nothing of a GPU's, and no output shows it. */
struct cudaModelEvent {
    std::chrono::steady_clock::time_point at;
};
cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    *event = new cudaModelEvent{};
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    delete event;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t)
{
    event->at = std::chrono::steady_clock::now();
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t)
{
    return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t stop)
{
    *ms = std::chrono::duration<float, std::milli>(stop->at - start->at).count();
    return cudaSuccess;
}

/* ---- the scheduler ------------------------------------------------------------------------ */
namespace cudamodel
{

enum class State : unsigned char { ready, barrier, warp, done };

struct Lane {
    uint3 idx;      /* threadIdx: first, where thread_idx_now points */
    unsigned int t; /* its number in the block: x + y * blockDim.x + ... */
    State state;
    fcontext_t ctx;             /* where it resumes */
    std::source_location where; /* the barrier or intrinsic it waits at */
    WarpOp op;
    unsigned int mask;
    uint64_t value, result;
    int arg, width;
    const void *stack; /* its lowest address, and its size: for AddressSanitizer */
    size_t stack_bytes;
    void *tsan_fiber, *asan_fake_stack;
};

Lane *current;
const uint3 *thread_idx_now;
uint3 block_idx;
dim3 block_dim, grid_dim;

/* counters.cc, in the counters build only: what a GPU counts per launch and per warp instruction */
__attribute__((weak)) void counters_block_done();
__attribute__((weak)) void counters_launch(uint64_t blocks, unsigned threads);
__attribute__((weak)) void counters_barrier(unsigned warps);
__attribute__((weak)) void counters_shuffle();

int blocks_per_sm(unsigned int block, size_t dynamic_shared)
{
    (void)dynamic_shared;
    /* Registers and shared memory never bind for the course's kernels on an H200 (measured: stage
     * 6's grid is 132 x 8 = 1056 blocks of 256): threads and blocks do. */
    return (int)std::min<unsigned>(THREADS_PER_SM / block, BLOCKS_PER_SM);
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
};

/* One launch: the grid, the threads of the block running now, and the schedule. */
struct Grid {
    void (*entry)(void *);
    void *arg;
    const char *kernel;
    unsigned int threads;    /* per block */
    std::vector<Lane> lanes; /* the block's threads */
    std::vector<Warp> warps;
    std::vector<Lane *> queue; /* ready to run, in the order they run */
    size_t head;               /* queue[head] runs next */
    std::vector<Lane *> batch; /* lanes made ready together */
    unsigned int at_barrier;
    uint64_t rng;
    char *sync; /* ThreadSanitizer's sync addresses, fresh every block */
    char fence_sync, launch_sync, end_sync, fresh;
};

Grid *grid;
void poison_shared();
Lane host;    /* the host's context while a CUDA thread runs */
char *stacks; /* MAX_BLOCK stacks */
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

/* Queues g.batch's lanes to run, in an order the schedule picks (as they are for seed 0). */
void make_ready(Grid &g)
{
    Lane **first = g.batch.data();
    size_t count = g.batch.size();
    if (seed() != 0)
        for (size_t i = count; i > 1; --i) /* Fisher-Yates; Lemire's multiply for the bound */
            std::swap(first[i - 1], first[(unsigned __int128)next_random(g.rng) * i >> 64]);
    for (size_t i = 0; i < count; ++i) {
        first[i]->state = State::ready;
        g.queue.push_back(first[i]);
    }
    g.batch.clear();
}

std::string block_text()
{
    return "block (" + std::to_string(block_idx.x) + "," + std::to_string(block_idx.y) + "," +
           std::to_string(block_idx.z) + ") of " + grid->kernel;
}

/* The lane (or the host) that runs next: the queue's next lane, or the host when it is empty. */
Lane *next()
{
    Grid &g = *grid;
    return g.head < g.queue.size() ? g.queue[g.head++] : &host;
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
        __tsan_acquire(&grid->fresh);       /* this block's shared arrays, mapped afresh */
    }
    grid->entry(grid->arg);
    current->state = State::done;
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
                                               : "a warp-synchronous "
                                                 "call at ") +
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

/* ThreadSanitizer: the block's shared arrays start with no history. They held the last block's
 * data at the same addresses, where a GPU gives each block its own: their pages (model/shared.ld)
 * are mapped afresh, which ThreadSanitizer sees as the host writing them, and the block's threads
 * acquire that (g.fresh) when they start. */
void tsan_fresh_shared(Grid &g)
{
    char *start = (char *)((uintptr_t)__start_cuda_shared & ~(uintptr_t)4095);
    size_t bytes = (size_t)(__stop_cuda_shared - start + 4095) & ~(size_t)4095;
    if (mmap(start, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
             0) == MAP_FAILED)
        die("cannot map the shared arrays afresh.");
    __tsan_release(&g.fresh);
}

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
    static uint64_t blocks_run;
    int set = (int)(blocks_run++ % sets());
    if (__tsan_acquire) {
        tsan_fresh_shared(g);
        g.sync = (char *)malloc(1 + g.warps.size()); /* freed: ThreadSanitizer forgets its clocks */
    }
    poison_shared();
    g.queue.clear();
    g.head = 0;
    g.at_barrier = 0;
    for (Warp &w : g.warps)
        w.arrived = 0;
    for (Lane &l : g.lanes) {
        l.stack = stack_of(set, l.t);
        l.ctx = make_fcontext((char *)l.stack + l.stack_bytes, l.stack_bytes, lane_main);
        if (__tsan_create_fiber)
            l.tsan_fiber = tsan_fiber_of(set, l.t);
        g.batch.push_back(&l);
    }
    make_ready(g);
    switch_to(&host, next()); /* back when no thread can run */
    for (Lane &l : g.lanes)
        if (l.state != State::done)
            deadlock();
    if (&counters_block_done != nullptr)
        counters_block_done();
    free(g.sync);
}

/* Fills the shared arrays with 0xff bytes before each block (int -1, float NaN): a GPU leaves
 * them undefined, and a kernel that reads a slot it did not write this block should not find
 * the last block's value there, nor zeros. Byte stores that no sanitizer sees (model.o is not
 * instrumented, and memset would be): the redzones between the arrays are AddressSanitizer's
 * shadow's business, not their bytes'. */
void poison_shared()
{
    /* As integers: the compiler may assume two arrays' addresses never meet, and they do here. */
    uintptr_t start = (uintptr_t)__start_cuda_shared, stop = (uintptr_t)__stop_cuda_shared;
    uintptr_t guard = (uintptr_t)shared_guard, guard_end = guard + sizeof shared_guard;
    uintptr_t parts[2][2] = {{start, std::min(stop, guard)}, {std::max(start, guard_end), stop}};
    for (auto &part : parts)
        for (uintptr_t p = part[0]; p < part[1]; p += 8) /* the section is page-aligned */
            *(volatile uint64_t *)p = ~0ull;
}

/* The first launch: the stacks, the host's own record, the sanitizers' view of both. */
void start_model()
{
    size_t bytes = (size_t)sets() * MAX_BLOCK * (stack_bytes() + GUARD_BYTES);
    stacks = (char *)mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stacks == MAP_FAILED)
        die("cannot map the threads' stacks.");
    if (__asan_poison_memory_region)
        __asan_poison_memory_region(shared_guard, sizeof shared_guard);
    if (__tsan_get_current_fiber)
        host.tsan_fiber = __tsan_get_current_fiber();
    if (__sanitizer_set_death_callback && __sanitizer_start_switch_fiber)
        __sanitizer_set_death_callback(::asan_died);
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

void run_grid(void (*entry)(void *), void *arg, dim3 grid_size, dim3 block_size, const char *kernel,
              std::source_location where)
{
    uint64_t threads = (uint64_t)block_size.x * block_size.y * block_size.z;
    uint64_t blocks = (uint64_t)grid_size.x * grid_size.y * grid_size.z;
    if (threads == 0 || threads > MAX_BLOCK || block_size.z > 64 || blocks == 0 ||
        grid_size.x > 2147483647u || grid_size.y > 65535 || grid_size.z > 65535) {
        fail(cudaErrorInvalidConfiguration); /* runs nothing, as the GPU: cudaGetLastError says */
        return;
    }
    if (grid != nullptr)
        die(std::string("a kernel launched ") + kernel + " at " + where_text(where) +
            ": dynamic parallelism is not modelled.");
    if (stacks == nullptr)
        start_model();
    if (&counters_launch != nullptr)
        counters_launch(blocks, (unsigned)threads);
    Grid g{};
    g.entry = entry;
    g.arg = arg;
    g.kernel = kernel;
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
    g.queue.reserve(4 * threads);
    g.batch.reserve(threads);
    g.rng = seed() * 0x100000001b3ull + ++launches;
    grid = &g;
    grid_dim = grid_size;
    block_dim = block_size;
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
    for (uint64_t i = 0; i < blocks; ++i)
        run_block(g, (uint64_t)(((unsigned __int128)a * i + c) % blocks));
    if (__tsan_acquire)
        __tsan_acquire(&g.end_sync);
    grid = nullptr;
    current = nullptr;
}

namespace
{
/* One copy of each file name: a call site's name may come as several copies (one per inlined
 * copy of the call), and comparing them with strcmp at every warp-synchronous call would cost more
 * than the call. A table from each copy to the first copy seen with the same text. */
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

bool same_place(std::source_location a, std::source_location b)
{
    return a.line() == b.line() && a.column() == b.column() &&
           (a.file_name() == b.file_name() || canonical(a.file_name()) == canonical(b.file_name()));
}
} // namespace

void syncthreads(std::source_location where)
{
    Grid &g = *grid;
    Lane *self = current;
    self->state = State::barrier;
    self->where = where;
    if (__tsan_release)
        __tsan_release(g.sync); /* everything before the barrier ... */
    if (++g.at_barrier == g.threads) {
        for (Lane &l : g.lanes) {
            if (!same_place(l.where, where))
                deadlock(); /* two barriers: the message lists who waits where */
            g.batch.push_back(&l);
        }
        g.at_barrier = 0;
        make_ready(g);
        if (&counters_barrier != nullptr)
            counters_barrier((unsigned)g.warps.size()); /* one BAR instruction a warp */
    }
    switch_to(self, next());
    if (__tsan_acquire)
        __tsan_acquire(g.sync); /* ... happens before everything after it, in every thread */
}

namespace
{

const char *op_name(WarpOp op)
{
    static const char *const names[] = {
        "__syncwarp",      "__shfl_sync",       "__shfl_up_sync",    "__shfl_down_sync",
        "__shfl_xor_sync", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
        "__ballot_sync",   "__any_sync",        "__all_sync"}; /* WarpOp's order */
    return names[(int)op];
}

std::string hex(unsigned int mask)
{
    char s[16];
    snprintf(s, sizeof s, "0x%08x", mask);
    return s;
}

std::string lane_text(const Lane &l)
{
    return block_text() + ", warp " + std::to_string(l.t / WARP) + ", lane " +
           std::to_string(l.t % WARP) + " (thread " + std::to_string(l.t) + ")";
}

/* The lanes of `mask` have all made the call: each gets its result. */
void complete(Grid &g, Lane *first, unsigned int mask)
{
    Lane *lane0 = first - first->t % WARP; /* lane 0 of this warp */
    /* The reductions work on 32-bit values, signed or not (arg), as __reduce_*_sync's overloads. */
    bool is_signed = first->arg != 0;
    int64_t total = 0, lo = INT64_MAX, hi = INT64_MIN;
    unsigned int ballot = 0;
    for (unsigned m = 0; m < WARP; ++m)
        if (mask >> m & 1) {
            uint64_t v = lane0[m].value;
            int64_t key = is_signed ? (int64_t)(int32_t)(uint32_t)v : (int64_t)(uint32_t)v;
            total += key;
            lo = std::min(lo, key);
            hi = std::max(hi, key);
            ballot |= (unsigned)(v != 0) << m;
        }
    for (unsigned m = 0; m < WARP; ++m) {
        if (!(mask >> m & 1))
            continue;
        Lane &l = lane0[m];
        int w = l.width, seg = m & ~(unsigned)(w - 1), src = -1;
        switch (l.op) {
        case WarpOp::shfl:
            src = seg + (l.arg & (w - 1));
            break;
        case WarpOp::shfl_up:
            src = (int)(m - seg) >= l.arg ? (int)m - l.arg : (int)m;
            break;
        case WarpOp::shfl_down:
            src = (int)(m - seg) + l.arg < w ? (int)m + l.arg : (int)m;
            break;
        case WarpOp::shfl_xor:
            src = ((m ^ l.arg) & ~(unsigned)(w - 1)) == (unsigned)seg ? (int)(m ^ l.arg) : (int)m;
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
        case WarpOp::ballot:
            l.result = ballot;
            break;
        case WarpOp::any:
            l.result = ballot != 0;
            break;
        case WarpOp::all:
            l.result = ballot == mask;
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

} // namespace

uint64_t warp_sync(WarpOp op, unsigned int mask, uint64_t value, int arg, int width,
                   std::source_location where)
{
    Grid &g = *grid;
    Lane *self = current;
    unsigned lane = self->t % WARP, w = self->t / WARP;
    unsigned present = g.threads - w * WARP >= (unsigned)WARP
                           ? 0xffffffffu
                           : (1u << (g.threads - w * WARP)) - 1; /* the lanes this warp has */
    auto call = [&] {                                            /* only for a message */
                      return std::string(op_name(op)) + "(" + hex(mask) + ", ...) at " +
                             where_text(where);
    };
    if (!(mask >> lane & 1))
        die(lane_text(*self) + " calls " + call() +
            ", whose mask does not hold its own lane: a "
            "lane must name itself in the mask of every _sync call it makes.");
    if (mask & ~present)
        die(lane_text(*self) + " calls " + call() +
            ", whose mask names lanes this warp does not have "
            "(the block has " +
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
    self->state = State::warp;
    Warp &warp = g.warps[w];
    warp.arrived |= 1u << lane;
    Lane *lane0 = self - lane;
    for (unsigned m = 0; m < WARP; ++m) {
        Lane &o = lane0[m];
        if (!(mask >> m & 1) || !(warp.arrived >> m & 1) || &o == self)
            continue;
        if (o.op != op || o.mask != mask || !same_place(o.where, where))
            die(lane_text(*self) + " calls " + call() + " while lane " + std::to_string(m) +
                ", which its mask names, waits at " + op_name(o.op) + "(" + hex(o.mask) +
                ", ...) at " + where_text(o.where) +
                ": every lane of the mask must make the "
                "same call.");
    }
    if (__tsan_release)
        __tsan_release(g.sync + 1 + w);
    if ((warp.arrived & mask) == mask) {
        complete(g, self, mask);
        self->state = State::ready; /* the last to arrive goes on at once */
    } else {
        switch_to(self, next());
    }
    if (__tsan_acquire)
        __tsan_acquire(g.sync + 1 + w);
    return self->result;
}

void threadfence()
{
    /* Every fence releases what its thread did before it, and acquires what every earlier fence
     * released: a fence pair orders a store before the first with a load after the second, which
     * is what the course's last-block pattern needs (CUDA's memory model asks more: an atomic that
     * the second thread observed, in between). */
    if (__tsan_release) {
        __tsan_release(&grid->fence_sync);
        __tsan_acquire(&grid->fence_sync);
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

float flush_subnormal(float x)
{
    return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
}

} // namespace cudamodel

/* ---- what the sanitizers do on a report: one line of the model's own, and exit 3 ------------ */
namespace
{

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
    if (p >= __start_cuda_shared && p < __stop_cuda_shared)
        return "shared memory";
    auto a = allocations.upper_bound((char *)p);
    if (a != allocations.begin()) {
        --a;
        size_t off = (size_t)(p - a->first);
        if (off < a->second)
            return "global memory (byte " + std::to_string(off) +
                   " of a cudaMalloc allocation "
                   "of " +
                   std::to_string(a->second) + " bytes)";
        if (off < a->second + 4096)
            return "global memory, " + std::to_string(off - a->second) +
                   " bytes past the end of "
                   "a cudaMalloc allocation of " +
                   std::to_string(a->second) + " bytes";
    }
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
static void asan_died(void)
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
            "_sync intrinsic of their warp, an atomic, or a __threadfence on each side): the "
            "report above gives both source lines (compute-sanitizer's racecheck sees such races "
            "in shared memory).\n",
            what_is((const char *)addr[0]).c_str(), running_thread().c_str(),
            write[0] ? "wrote" : "read", write[1] ? "wrote" : "read");
}
}
extern "C" const char *__tsan_default_options()
{
    return "halt_on_error=1:exitcode=3:report_signal_unsafe=0";
}
extern "C" const char *__ubsan_default_options()
{
    return "exitcode=3:print_stacktrace=1:halt_on_error=1";
}
extern "C" const char *__asan_default_options()
{
    return "exitcode=3:detect_leaks=0";
}
