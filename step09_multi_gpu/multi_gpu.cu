/* Stage 9: one sum over several GPUs, and the all-reduce that data-parallel training runs (beyond
 * the lecture: NVIDIA's NCCL, the library real systems use between GPUs).
 *
 * Concept: all-reduce, collective, communicator, ring, algorithm and bus bandwidth.
 * Goal: sum past one GPU's memory, and see what the link between GPUs costs next to the memory.
 *
 * Stages 1 to 8 had one GPU. Here the input is split into G shards, one per GPU (as the data of a
 * large job already is); each GPU sums its shard with stage 8's kernel, all G at once, and one
 * all-reduce adds the G partial sums, so that every GPU ends with the whole sum. The same call
 * on a vector is what data-parallel training does after every step: each GPU holds the gradients
 * of its part of the batch, and ncclAllReduce leaves their element-wise sum on every GPU.
 * One process and one host thread drive every GPU (ncclCommInitAll, and ncclGroupStart/End around
 * the G calls): no MPI, no thread per GPU.
 * Streams: this file, main.cu and a copy of stage 8's reduce.cu are compiled with nvcc's
 * --default-stream per-thread (the Makefile): stage 8's kernel and NCCL's work on GPU g share one
 * stream, cudaStreamPerThread with device g current (struct team below).
 * Pitfall: the G calls of one collective must be grouped. Each ncclAllReduce waits for its G - 1
 * peers; one thread that makes the calls one after another, ungrouped, waits in the first call
 * for calls it has not made yet: a hang.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nccl.h>

#include "check.h"
#include "harness.h"
#include "multi_gpu.h"

#ifdef REDUCE_FLOAT
#error "step09 sums int32 exactly; its all-reduce takes float32 at run time (--bench)"
#endif

/* An NCCL call that fails prints the call, where, and NCCL's reason, then exits with status 3. */
#define NCCL_CHECK(call)                                                                           \
    do {                                                                                           \
        ncclResult_t res_ = (call);                                                                \
        if (res_ != ncclSuccess) {                                                                 \
            fprintf(stderr, "NCCL error: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__,     \
                    ncclGetErrorString(res_));                                                     \
            exit(EXIT_CUDA_ERROR);                                                                 \
        }                                                                                          \
    } while (0)

int team_visible(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count;
}

/* No stream of its own: GPU g's stream is cudaStreamPerThread while device g is current. That is
 * this host thread's default stream on the device, created by the runtime: an ordinary blocking
 * stream, in order, where stage 8's reduce() launches (<<<grid, block>>>, no stream named,
 * compiled per-thread). NCCL given it runs after the kernel; one cudaStreamSynchronize waits for
 * both. Blocking, it still waits for earlier work on the legacy default stream, and that stream
 * for it: the harness's gpu_flush_l2 (common/gpu.cu, compiled without the flag) runs there.
 * The communicators are blocking (NCCL's default), so ncclGroupEnd launches from this thread,
 * whose per-thread stream it is; a non-blocking one launches from a thread of NCCL's
 * (NVIDIA/nccl issue 1976). */
struct team {
    int gpus;
    ncclComm_t comm[MAX_GPUS];
    void *send[MAX_GPUS], *recv[MAX_GPUS]; /* the all-reduce's vectors, kept from size to size */
    size_t capacity;                       /* their bytes */
};

struct team *team_open(int gpus)
{
    /* NVLink multicast (NVLS) stays off unless the user says otherwise: on shared machines a
     * program that uses it can take the host's GPUs out of service for everyone. */
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    struct team *team = (struct team *)calloc(1, sizeof *team);
    int devices[MAX_GPUS];
    for (int g = 0; g < gpus; ++g)
        devices[g] = g;
    team->gpus = gpus;
    NCCL_CHECK(ncclCommInitAll(team->comm, gpus, devices)); /* one communicator per GPU */
    return team;
}

int team_size(const struct team *team)
{
    return team->gpus;
}

/* As NCCL's examples end: ncclCommFinalize, then ncclCommDestroy, then the buffers. Finalizing
 * waits for the communicator's work and meets its peers on this host (a barrier), so one thread
 * finalizing G communicators one by one would wait in the first for the G - 1 it has not reached.
 * Grouped, as one thread's calls for several GPUs must be (the NCCL user guide, "Group Calls"),
 * the G finalizations run together. No stream to destroy: the per-thread ones are the runtime's. */
void team_close(struct team *team)
{
    NCCL_CHECK(ncclGroupStart());
    for (int g = 0; g < team->gpus; ++g)
        NCCL_CHECK(ncclCommFinalize(team->comm[g]));
    NCCL_CHECK(ncclGroupEnd());
    for (int g = 0; g < team->gpus; ++g)
        NCCL_CHECK(ncclCommDestroy(team->comm[g]));
    for (int g = 0; g < team->gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        if (team->capacity) {
            CUDA_CHECK(cudaFree(team->send[g]));
            CUDA_CHECK(cudaFree(team->recv[g]));
        }
    }
    free(team);
}

size_t shard_start(size_t n, int gpus, int g)
{
    size_t q = n / gpus, r = n % gpus, k = (size_t)g;
    return k * q + (k < r ? k : r); /* the first n % G shards have one element more */
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Waits for every GPU's stream: stage 8's kernel and NCCL's work alike, both on it. An all-reduce
 * over one GPU, in place, may put nothing on the stream; the kernel before it is there still. */
static void synchronize_streams(struct team *team)
{
    for (int g = 0; g < team->gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    }
}

/* Runs once(team, ctx) 1 + reps times and returns the median of the last reps, each timed by the
 * host clock from the first launch to the end of every stream. Before each, untimed, every GPU's
 * L2 is flushed by the harness's gpu_flush_l2, as make bench flushes (gpu_time): the input comes
 * from device memory, not from what the last repeat left in the L2 (on an H200, most of 2^24
 * int32). The flush runs on the legacy default stream (common/gpu.cu is compiled without
 * --default-stream per-thread). The per-thread stream is a blocking stream: its next launch waits
 * for the flush, so an unfinished flush would be timed with the run; and synchronising it does not
 * wait for the flush, which is not on it. Hence the one cudaDeviceSynchronize a GPU, before the
 * clock starts, never inside it. */
static double median_ms(struct team *team, void (*once)(struct team *, void *), void *ctx, int reps)
{
    reps = reps > 0 ? reps : 1;
    double *ms = (double *)malloc(reps * sizeof *ms);
    for (int r = -1; r < reps; ++r) { /* r = -1: the warm-up */
        for (int g = 0; g < team->gpus; ++g) {
            CUDA_CHECK(cudaSetDevice(g));
            gpu_flush_l2();
        }
        for (int g = 0; g < team->gpus; ++g) { /* every flush done before the clock starts */
            CUDA_CHECK(cudaSetDevice(g));
            CUDA_CHECK(cudaDeviceSynchronize());
        }
        double start = now_ms();
        once(team, ctx);
        synchronize_streams(team);
        if (r >= 0)
            ms[r] = now_ms() - start;
    }
    double median = sort_median(ms, reps);
    free(ms);
    return median;
}

/* ---- One array over G GPUs ---------------------------------------------------------------- */
struct shards {
    elem_t *x[MAX_GPUS];   /* GPU g's shard of the input */
    size_t len[MAX_GPUS];  /* its length, 0 when n < G leaves it empty */
    elem_t *sum[MAX_GPUS]; /* GPU g's partial sum, then, after the all-reduce, the whole sum */
};

static void sum_once(struct team *team, void *ctx)
{
    struct shards *s = (struct shards *)ctx;
    /* 1. Every GPU sums its shard, on its per-thread stream. A launch returns at once: the G
     * kernels run together. */
    for (int g = 0; g < team->gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        if (s->len[g] > 0)
            reduce(s->x[g], s->len[g], STAGE.fixed_block, s->sum[g]); /* stage 8's kernel */
        else /* an empty shard's sum is the identity */
            CUDA_CHECK(cudaMemsetAsync(s->sum[g], 0, sizeof(elem_t)));
    }
    /* 2. The G partial sums all-reduced in place, each after its kernel on the same stream. */
    NCCL_CHECK(ncclGroupStart());
    for (int g = 0; g < team->gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g)); /* cudaStreamPerThread: the current device's */
        NCCL_CHECK(ncclAllReduce(s->sum[g], s->sum[g], 1, ncclInt32, ncclSum, team->comm[g],
                                 cudaStreamPerThread));
    }
    NCCL_CHECK(ncclGroupEnd());
}

void multi_gpu_sum(struct team *team, const elem_t *x, size_t n, int reps, elem_t *sums, double *ms)
{
    struct shards s;
    for (int g = 0; g < team->gpus; ++g) { /* the data goes to its GPU once, untimed */
        size_t start = shard_start(n, team->gpus, g);
        s.len[g] = shard_start(n, team->gpus, g + 1) - start;
        CUDA_CHECK(cudaSetDevice(g));
        s.x[g] = (elem_t *)gpu_alloc(s.len[g] * sizeof(elem_t), "a GPU's shard of the input");
        s.sum[g] = (elem_t *)gpu_alloc(sizeof(elem_t), "a GPU's sum");
        CUDA_CHECK(
            cudaMemcpy(s.x[g], x + start, s.len[g] * sizeof(elem_t), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(s.sum[g], 0xff, sizeof(elem_t))); /* poison: the run must write it */
    }
    if (ms)
        *ms = median_ms(team, sum_once, &s, reps);
    else {
        sum_once(team, &s);
        synchronize_streams(team);
    }
    for (int g = 0; g < team->gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMemcpy(&sums[g], s.sum[g], sizeof(elem_t), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaFree(s.x[g]));
        CUDA_CHECK(cudaFree(s.sum[g]));
    }
}

/* ---- The all-reduce of a vector ----------------------------------------------------------- */
struct vectors {
    void *send[MAX_GPUS], *recv[MAX_GPUS]; /* GPU g's own vector, and the sum it receives */
    size_t count;
    ncclDataType_t type;
};

static void allreduce_once(struct team *team, void *ctx)
{
    struct vectors *v = (struct vectors *)ctx;
    NCCL_CHECK(ncclGroupStart());
    for (int g = 0; g < team->gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        NCCL_CHECK(ncclAllReduce(v->send[g], v->recv[g], v->count, v->type, ncclSum, team->comm[g],
                                 cudaStreamPerThread));
    }
    NCCL_CHECK(ncclGroupEnd());
}

/* nccl-tests' time (doc/PERFORMANCE.md: "the average operation time"): `iters` grouped all-reduces
 * launched back to back, nothing waited for between them, then every GPU's stream synchronised; the
 * host clock's elapsed time over iters. The host launches each call while the GPUs run the one
 * before, so a call costs what the GPUs take, or the launch where that is longer. No L2 flush:
 * nccl-tests flush nothing, and a flush here would sit between the calls on the stream and be timed
 * with them (to leave it untimed needs a synchronisation per call: the single-call latency, below).
 * A vector that fits in the L2 may stay there from call to call. */
static double back_to_back_ms(struct team *team, struct vectors *v, int iters)
{
    iters = iters > 0 ? iters : 1;
    synchronize_streams(team); /* the clock starts on idle GPUs */
    double start = now_ms();
    for (int i = 0; i < iters; ++i)
        allreduce_once(team, v);
    synchronize_streams(team);
    return (now_ms() - start) / iters;
}

/* GPU g's element i: an integer in [-16, 16], so that every sum of up to 2^19 of them is exact in
 * float32 too. */
static int element(unsigned long long seed, int g, size_t i)
{
    uint64_t state = seed ^ ((uint64_t)g << 48) ^ (uint64_t)i;
    return (int)(splitmix64(&state) % 33) - 16;
}

void team_reserve(struct team *team, size_t bytes)
{
    if (bytes <= team->capacity)
        return;
    for (int g = 0; g < team->gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        if (team->capacity) {
            CUDA_CHECK(cudaFree(team->send[g]));
            CUDA_CHECK(cudaFree(team->recv[g]));
        }
        team->send[g] = gpu_alloc(bytes, "a GPU's vector");
        team->recv[g] = gpu_alloc(bytes, "a GPU's received sum");
    }
    team->capacity = bytes;
}

void multi_gpu_allreduce(struct team *team, size_t count, bool is_float, unsigned long long seed,
                         int reps, double *avg_ms, double *latency_ms, size_t *wrong)
{
    struct vectors v = {.count = count, .type = is_float ? ncclFloat32 : ncclInt32};
    team_reserve(team, count > 0 ? count * 4 : 1);
    size_t bytes = count * 4; /* int32 and float32 alike */
    int *expected = (int *)calloc(count ? count : 1, sizeof(int));
    int32_t *h = (int32_t *)malloc(bytes ? bytes : 1); /* one GPU's vector, then what came back */
    if (expected == NULL || h == NULL) {
        fprintf(stderr, "not enough host memory for two vectors of %zu bytes.\n", bytes);
        exit(EXIT_USAGE);
    }
    for (int g = 0; g < team->gpus; ++g) {
        for (size_t i = 0; i < count; ++i) {
            int e = element(seed, g, i);
            expected[i] += e;
            if (is_float) {
                float f = (float)e;
                memcpy(&h[i], &f, 4);
            } else
                h[i] = e;
        }
        CUDA_CHECK(cudaSetDevice(g));
        v.send[g] = team->send[g];
        v.recv[g] = team->recv[g];
        CUDA_CHECK(cudaMemcpy(v.send[g], h, bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(v.recv[g], 0xff, bytes)); /* poison: NaN, or -1 */
    }
    /* Checked on the first all-reduce, timed after five more (nccl-tests' default warm-up, -w 5:
     * NCCL sets up its channels first). */
    allreduce_once(team, &v);
    synchronize_streams(team);
    *wrong = 0;
    for (int g = 0; g < team->gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMemcpy(h, v.recv[g], bytes, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < count; ++i) {
            int32_t want = expected[i];
            if (is_float) {
                float f = (float)expected[i];
                memcpy(&want, &f, 4);
            }
            *wrong += h[i] != want; /* bit for bit: every sum here is exact */
        }
    }
    for (int r = 0; r < 5; ++r)
        allreduce_once(team, &v);
    *avg_ms = back_to_back_ms(team, &v, reps);
    *latency_ms = median_ms(team, allreduce_once, &v, reps);
    free(expected);
    free(h);
}

double algbw_gbps(size_t bytes, double ms)
{
    return bytes / (ms * 1e6);
}

/* A ring all-reduce sends and receives 2 (G - 1) / G of the data over each GPU's link (a
 * reduce-scatter, then an all-gather, each G - 1 steps of 1/G of it): bus bandwidth scales the
 * algorithm bandwidth by that, so that it reads as the link's speed whatever G is. */
double busbw_gbps(size_t bytes, double ms, int gpus)
{
    return algbw_gbps(bytes, ms) * 2.0 * (gpus - 1) / gpus;
}
