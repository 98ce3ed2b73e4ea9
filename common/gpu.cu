/* gpu.cu: device memory, timing and the device's limits, shared by every GPU stage. */
#include "check.h"
#include "harness.h"

#include <cuda_profiler_api.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

int gpu_available(char *why, size_t why_len)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    /* No driver at all (no libcuda) reads as an "insufficient" driver: that is a machine with no
     * GPU, not a broken one. */
    int no_driver = err == cudaErrorInsufficientDriver && dlopen("libcuda.so.1", RTLD_LAZY) == NULL;
    if (err == cudaErrorNoDevice || no_driver || (err == cudaSuccess && count == 0)) {
        snprintf(why, why_len, "no CUDA device (%s)",
                 no_driver ? "no NVIDIA driver is installed" : "the driver sees no GPU");
        return 0;
    }
    if (err != cudaSuccess) {
        snprintf(why, why_len, "the CUDA device is not usable (cudaGetDeviceCount: %s: %s)",
                 cudaGetErrorName(err), cudaGetErrorString(err));
        return -1;
    }
    return 1;
}

bool gpu_is_model(void)
{
#ifdef CUDA_MODEL
    return true;
#else
    return false;
#endif
}

void gpu_describe(char *name, size_t name_len, double *peak_gbps, size_t *l2_bytes)
{
    int device, clock_khz, bus_bits, l2;
    CUDA_CHECK(cudaGetDevice(&device));
    if (name) {
        cudaDeviceProp prop;
        CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
        snprintf(name, name_len, "%s", prop.name);
    }
    /* CUDA 13 dropped cudaDeviceProp::memoryClockRate: ask for the attribute instead. */
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    if (peak_gbps) /* double data rate: two transfers a clock, bus_bits / 8 bytes each */
        *peak_gbps = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    if (l2_bytes)
        *l2_bytes = (size_t)l2;
}

/* Exits with EXIT_NO_GPU and one sentence when `what` (`bytes` of device memory) does not fit in
 * what the GPU has free: the one place that turns "too large" into a message, never a crash. */
static void require_free(size_t bytes, const char *what)
{
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (bytes > free_bytes) {
        fprintf(stderr,
                "not enough device memory: %s needs %.2f GiB but the GPU has %.2f GiB free of "
                "%.2f GiB; try a smaller --n.\n",
                what, bytes / 1073741824.0, free_bytes / 1073741824.0, total_bytes / 1073741824.0);
        exit(EXIT_NO_GPU);
    }
}

void *gpu_alloc(size_t bytes, const char *what)
{
    require_free(bytes, what);
    void *p;
    CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}

size_t gpu_free_memory(void)
{
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    return free_bytes;
}

void gpu_check_memory(size_t n, unsigned int block)
{
    /* The input (padded for a single-block stage; twice for an in-place one, its pristine copy),
     * the sum and the L2 flush buffer; more than any device has is refused, never wrapped. */
    size_t l2_bytes, copies = STAGE.in_place ? 2 : 1, padded = padded_count(&STAGE, n, block);
    gpu_describe(NULL, 0, NULL, &l2_bytes);
    size_t extra = 2 * l2_bytes + ((size_t)1 << 20);
    bool fits = padded <= (SIZE_MAX - extra) / sizeof(elem_t) / copies;
    char what[64];
    snprintf(what, sizeof what, "n = %zu elements", n);
    require_free(fits ? padded * sizeof(elem_t) * copies + extra : SIZE_MAX, what);
#ifdef CUDA_MODEL
    /* The model runs a GPU's threads as fibers on one core, in host memory: past 2^31 elements a
     * sum takes minutes and more memory than most hosts have. Refused before the input exists. */
    if (n >= ((size_t)1 << 31)) {
        fprintf(stderr, "the CPU model runs n < 2^31 elements: n = %zu needs a GPU (MODEL=gpu on "
                "a machine with one); try a smaller --n.\n", n);
        exit(EXIT_NO_GPU);
    }
#endif
}

static enum l2_flush flush_method = L2_FLUSH_READ;

void gpu_set_l2_flush(enum l2_flush how)
{
    flush_method = how;
}

/* Reads n4 16-byte words and keeps something that depends on every one, so that no load can be
 * left out; the store that keeps it is never made (the buffer holds zeros), so the flush writes
 * nothing and leaves only clean lines in the L2. */
static __global__ void l2_flush_kernel(const int4 *buffer, size_t n4, int *sink)
{
    int x = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (size_t)gridDim.x * blockDim.x) {
        int4 v = buffer[i];
        x |= v.x | v.y | v.z | v.w;
    }
    if (x != 0)
        *sink = x;
}

void gpu_flush_l2(void)
{
    if (gpu_is_model())
        return; /* the model has no cache to empty, and reading 2 x its L2 would take seconds */
    /* One buffer per device, twice its L2, zeroed once when first used: written only then. */
    enum { MAX_DEVICES = 64 };
    static void *buffer[MAX_DEVICES];
    static size_t bytes[MAX_DEVICES];
    int device, sm_count;
    CUDA_CHECK(cudaGetDevice(&device));
    if (device >= MAX_DEVICES) {
        fprintf(stderr, "gpu_flush_l2: device %d: at most %d devices.\n", device, MAX_DEVICES);
        exit(EXIT_NO_GPU);
    }
    if (buffer[device] == NULL) {
        gpu_describe(NULL, 0, NULL, &bytes[device]);
        bytes[device] = 2 * bytes[device] + sizeof(int4); /* the last int4 is the sink */
        buffer[device] = gpu_alloc(bytes[device], "the L2 flush buffer");
        CUDA_CHECK(cudaMemset(buffer[device], 0, bytes[device]));
        CUDA_CHECK(cudaDeviceSynchronize()); /* its dirty lines go now, not in the first timing */
    }
    size_t n4 = bytes[device] / sizeof(int4) - 1;
    if (flush_method == L2_FLUSH_MEMSET) {
        CUDA_CHECK(cudaMemsetAsync(buffer[device], 0, n4 * sizeof(int4)));
        return;
    }
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    int4 *words = (int4 *)buffer[device];
    l2_flush_kernel<<<4 * sm_count, 512>>>(words, n4, (int *)(words + n4));
    CUDA_CHECK_LAUNCH();
}

void gpu_time(void (*prepare)(void *), void (*work)(void *), void *ctx, int reps, struct timing *t)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    double *ms = (double *)malloc(reps * sizeof *ms);
    gpu_flush_l2(); /* its buffer is allocated now, outside the timing */
    work(ctx); /* warm-up: module load and first-touch costs stay out of the numbers */
    for (int r = 0; r < reps; ++r) {
        if (prepare)
            prepare(ctx);
        gpu_flush_l2(); /* each repeat reads its input from device memory, as a first use would */
        CUDA_CHECK(cudaEventRecord(start));
        work(ctx);
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float elapsed;
        CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
        ms[r] = elapsed;
    }
    t->median_ms = sort_median(ms, reps);
    t->min_ms = ms[0];
    t->max_ms = ms[reps - 1];
    free(ms);
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
}

/* What one repeat of a stage needs. */
struct stage_run {
    elem_t *d_input, *d_pristine, *d_sum;
    size_t n;
    unsigned int block;
    elem_t first_sum;
    int runs;
    struct timing t; /* lo, hi and unstable from check_sum, the times from gpu_time */
};

static void run_once(void *ctx)
{
    struct stage_run *s = (struct stage_run *)ctx;
    /* The first run is the one a profiler sees: `ncu --profile-from-start off` (make grade, make
     * metrics) measures every kernel this reduce() launches, whatever their names, and no other. */
    if (s->runs == 0)
        CUDA_CHECK(cudaProfilerStart());
    reduce(s->d_input, s->n, s->block, s->d_sum);
    if (s->runs == 0)
        CUDA_CHECK(cudaProfilerStop());
}

static void check_sum(struct stage_run *s)
{
    elem_t sum;
    CUDA_CHECK(cudaMemcpy(&sum, s->d_sum, sizeof sum, cudaMemcpyDeviceToHost));
    if (s->runs++ == 0)
        s->first_sum = s->t.lo = s->t.hi = sum;
    else if (memcmp(&sum, &s->first_sum, sizeof sum) != 0)
        s->t.unstable++;
    widen_range(sum, &s->t.lo, &s->t.hi);
}

/* Before each timed repeat, outside the timed region: the last run's sum, and for an in-place
 * stage, whose last run overwrote its input, a fresh copy of it. */
static void prepare(void *ctx)
{
    struct stage_run *s = (struct stage_run *)ctx;
    check_sum(s);
    if (STAGE.in_place)
        CUDA_CHECK(cudaMemcpyAsync(s->d_input, s->d_pristine,
                                   padded_count(&STAGE, s->n, s->block) * sizeof(elem_t),
                                   cudaMemcpyDeviceToDevice));
}

void gpu_run_stage(const elem_t *h_input, size_t n, unsigned int block, int reps, elem_t *sum,
                   struct timing *t)
{
    struct stage_run s = {};
    if (n == 0) { /* the sum of nothing is the identity; a grid of 0 blocks is an error */
        *sum = IDENTITY;
        if (t)
            *t = s.t;
        return;
    }
    s.n = n;
    s.block = block;
    size_t bytes = padded_count(&STAGE, n, block) * sizeof(elem_t); /* past n: the identity */
    s.d_input = (elem_t *)gpu_alloc(bytes, "the input");
    s.d_sum = (elem_t *)gpu_alloc(sizeof(elem_t), "the sum");
    CUDA_CHECK(cudaMemset(s.d_input, 0, bytes)); /* all-zero bits are the identity, int or float */
    CUDA_CHECK(cudaMemcpy(s.d_input, h_input, n * sizeof(elem_t), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(s.d_sum, 0xff, sizeof(elem_t))); /* poison: a stage must write it */
    if (STAGE.in_place) {
        s.d_pristine = (elem_t *)gpu_alloc(bytes, "the input's pristine copy");
        CUDA_CHECK(cudaMemcpy(s.d_pristine, s.d_input, bytes, cudaMemcpyDeviceToDevice));
    }
    if (t)
        gpu_time(prepare, run_once, &s, reps, &s.t);
    else
        run_once(&s);
    check_sum(&s);
    *sum = s.first_sum;
    if (t)
        *t = s.t;
    CUDA_CHECK(cudaFree(s.d_input));
    CUDA_CHECK(cudaFree(s.d_sum));
    if (s.d_pristine)
        CUDA_CHECK(cudaFree(s.d_pristine));
}
