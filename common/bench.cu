/* bench.cu: the benchmark behind `make bench` (build/bench_stepNN, one per GPU stage).
 *
 * In one process, on the same input, for n = 2^10, 2^12, ... up to 2^30 (or the stage's limit, or
 * what the device's memory holds), it times the stage's reduce() as build/stepNN runs it, CUB's
 * cub::DeviceReduce::Sum (what a user would call instead) and a device-to-device copy of the same
 * bytes (the bandwidth a kernel can reach): CUDA events, a warm-up, the L2 flushed before every
 * repeat, the median, min and max of --reps repeats, every repeat's sum checked. One CSV row per
 * (stage, n), (cub, n) and (copy, n):
 *   gpu,stage,n,bytes,median_ms,min_ms,max_ms,gbps,peak_gbps,peak_pct,ratio_to_cub,sum_ok
 * gbps counts bytes read once (copy's: read and written); ratio_to_cub is measured in this run.
 *
 *   build/bench_stepNN --csv FILE [--reps R >= 20] [--min-n N] [--max-n N] [--guard]
 * Exit status: 0 done; 1 (--guard only) a call summed something else than its input, or left a
 * host thread running (one sentence with ": --guard: "); 2 bad usage; 3 no usable GPU, or a CUDA
 * error.
 *
 * --guard: make grade's timing, which a submission cannot fool (docs/grading.md, "Guarded
 * timing", names the exploits and where each defence comes from). Each call of reduce() sums
 * another window of a larger buffer with one element negated (so no sum can be remembered), is
 * timed by raw clock_gettime system calls around reduce() and cudaDeviceSynchronize() (every
 * stream's work counts, and no function of the program can replace the clock), has its sum read
 * back and checked at once, and must leave no more host threads than before. Its times include
 * the host's side of the call, which events do not see: compare a --guard time only with another.
 * Not guarded: code in the same process can still write the harness's memory. */
#include <cub/device/device_reduce.cuh>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "harness.h"

/* CUB's and the copy's buffers: the input's first n elements are summed and copied. */
struct bench {
    elem_t *d_input, *d_copy, *d_sum;
    void *d_temp;
    size_t temp_bytes, n;
    elem_t ref;          /* int32: the exact sum */
    double ref_d, bound; /* float32: a double-precision sum, and how far a float sum may be off */
    int bad_sums;
};

static bool sum_ok(const struct bench *b, elem_t sum)
{
#ifdef REDUCE_FLOAT
    return fabs((double)sum - b->ref_d) <= b->bound;
#else
    return sum == b->ref;
#endif
}

/* Before each of CUB's repeats, and after the last: the last repeat's sum. */
static void check(void *ctx)
{
    struct bench *b = (struct bench *)ctx;
    elem_t sum;
    CUDA_CHECK(cudaMemcpy(&sum, b->d_sum, sizeof sum, cudaMemcpyDeviceToHost));
    b->bad_sums += !sum_ok(b, sum);
}

static void run_cub(void *ctx)
{
    struct bench *b = (struct bench *)ctx;
    CUDA_CHECK(cub::DeviceReduce::Sum(b->d_temp, b->temp_bytes, b->d_input, b->d_sum, b->n));
}

static void run_copy(void *ctx)
{
    struct bench *b = (struct bench *)ctx;
    CUDA_CHECK(
        cudaMemcpyAsync(b->d_copy, b->d_input, b->n * sizeof(elem_t), cudaMemcpyDeviceToDevice));
}

static void row(FILE *csv, const char *gpu, const char *stage, size_t n, const struct timing *t,
                double bytes_moved, double peak, double cub_ms, int ok)
{
    double gbps = bytes_moved / (t->median_ms * 1e6);
    fprintf(csv, "%s,%s,%zu,%zu,%.5f,%.5f,%.5f,%.1f,%.1f,%.2f,", gpu, stage, n, n * sizeof(elem_t),
            t->median_ms, t->min_ms, t->max_ms, gbps, peak, 100 * gbps / peak);
    if (cub_ms > 0)
        fprintf(csv, "%.4f", t->median_ms / cub_ms);
    fprintf(csv, ",%d\n", ok);
    fflush(csv);
}

/* ---- --guard: the stage timed so that it cannot fool the clock (the header says what and why) */

/* A system call made directly, not through the C library's wrapper, which a stage file could
 * replace by defining a function of the same name: the `syscall` instruction on x86-64 and `svc
 * #0` on aarch64, with Linux's calling convention for each (syscall(2)'s NOTES); syscall(2) itself
 * elsewhere. Up to four arguments. Returns what the kernel returns: a negative errno on failure. */
static long raw_syscall(long nr, long a, long b, long c, long d)
{
#if defined(__x86_64__)
    long ret;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return ret;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = nr;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
    return x0;
#else
    long ret = syscall(nr, a, b, c, d);
    return ret == -1 ? -errno : ret;
#endif
}

/* CLOCK_MONOTONIC in milliseconds, from the kernel itself (raw_syscall: no vDSO, no wrapper).
 * Exits with EXIT_NO_GPU and one sentence if the kernel refuses (it never has). */
static double guard_clock_ms(void)
{
    struct timespec ts;
    long err = raw_syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0, 0);
    if (err != 0) {
        fprintf(stderr, "%s: --guard: clock_gettime(CLOCK_MONOTONIC) failed: %s.\n", STAGE_NAME,
                strerror((int)-err));
        exit(EXIT_NO_GPU);
    }
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* The exact sum the stage must give, kept as the GPU's sum can be compared with it: int32 wraps
 * modulo 2^32 (uint32_t: defined wrap-around), float32 sums quarters exactly (double). */
#ifdef REDUCE_FLOAT
typedef double exact_t;
#define GUARD_PATTERN PATTERN_QUARTERS
#define SUM_FORMAT "%.17g"
static double shown(exact_t s)
{
    return s;
}
static bool exact_equal(elem_t sum, exact_t s)
{
    return (double)sum == s;
}
#else
typedef uint32_t exact_t;
#define GUARD_PATTERN PATTERN_SMALL
#define SUM_FORMAT "%.10g"
static double shown(exact_t s)
{
    return (double)(int32_t)s;
}
static bool exact_equal(elem_t sum, exact_t s)
{
    return (uint32_t)sum == s;
}
#endif

/* The exact sum of x[0..n). */
static exact_t exact_sum(const elem_t *x, size_t n)
{
    exact_t s = 0;
    for (size_t i = 0; i < n; ++i)
        s += (exact_t)x[i];
    return s;
}

struct guard {
    elem_t *h;        /* the buffer on the host, from which every window's sum is worked out */
    elem_t *d_src;    /* the same buffer on the device: len elements */
    elem_t *d_window; /* an in-place or one-block stage's copy of its window (else NULL) */
    elem_t *d_sum;
    size_t len;   /* n + 4 reps */
    uint64_t rng; /* splitmix64's state: the negated elements' places */
    int stat_fd;  /* /proc/self/stat, for the number of threads; -1 where unreadable */
};

/* The number of threads of this process: field 20 of /proc/self/stat (proc(5)), read again from
 * its start through raw_syscall; -1 where it cannot be read. */
static int guard_threads(const struct guard *g)
{
    char text[1024];
    long got = -1;
    if (g->stat_fd >= 0)
        got = raw_syscall(SYS_pread64, g->stat_fd, (long)text, sizeof text - 1, 0);
    if (got <= 0)
        return -1;
    text[got] = 0;
    const char *p = strrchr(text, ')'); /* field 2, the command's name, may hold anything */
    int field = 2;
    for (; p && *p && field < 20; ++p) /* past 18 spaces: the start of field 20 */
        field += *p == ' ';
    if (p == NULL || field != 20 || *p < '0' || *p > '9')
        return -1;
    int threads = 0;
    for (; *p >= '0' && *p <= '9'; ++p)
        threads = 10 * threads + (*p - '0');
    return threads;
}

/* Sets element p of the buffer to `value`, on the host and on the device (outside the timing). */
static void guard_set(struct guard *g, size_t p, elem_t value)
{
    g->h[p] = value;
    CUDA_CHECK(cudaMemcpy(g->d_src + p, &value, sizeof value, cudaMemcpyHostToDevice));
}

/* Negates the first nonzero element at or after a random place of window [off, off + n), wrapping
 * around inside it, in the host's buffer and the device's, and returns its change to the
 * window's sum; a window of zeros gets a 1 instead (the patterns never make one). */
static exact_t guard_negate(struct guard *g, size_t off, size_t n)
{
    size_t start = splitmix64(&g->rng) % n;
    for (size_t k = 0; k < n; ++k) {
        size_t p = off + (start + k) % n;
        elem_t x = g->h[p];
        if (x != IDENTITY) {
            guard_set(g, p, (elem_t)-x);
            return (exact_t)0 - (exact_t)x - (exact_t)x;
        }
    }
    guard_set(g, off + start, (elem_t)1);
    return (exact_t)1;
}

/* One sentence for a call that failed the guard, and exit status 1 (EXIT_MISMATCH). */
static void guard_fail(int r, int reps, size_t n, const char *what)
{
    char call[64];
    if (r == 0)
        snprintf(call, sizeof call, "the warm-up call");
    else
        snprintf(call, sizeof call, "timed repeat %d of %d", r, reps);
    fprintf(stderr, "%s: --guard: %s at n = %zu %s.\n", STAGE_NAME, call, n, what);
    exit(EXIT_MISMATCH);
}

/* --guard's timing of the stage at n with `block` threads a block: a warm-up and `reps` timed
 * calls of reduce(), each on its own window, timed by the host around reduce() and
 * cudaDeviceSynchronize(), its sum read back at once and checked against the window's exact sum,
 * the threads counted (the header says why). Fills t's median, min and max in milliseconds and
 * lo = hi = the last sum; exits with EXIT_MISMATCH and one sentence on the first call that fails.
 * g->h holds n + 4 reps elements, g->d_src too, g->d_window (where the stage needs it) that plus
 * what padding adds. */
static void guard_stage(struct guard *g, size_t n, unsigned int block, int reps, struct timing *t)
{
    g->len = n + 4 * (size_t)reps;
    input_fill(g->h, g->len, GUARD_PATTERN, 1);
    CUDA_CHECK(cudaMemcpy(g->d_src, g->h, g->len * sizeof(elem_t), cudaMemcpyHostToDevice));
    size_t padded = padded_count(&STAGE, n, block);
    exact_t s = exact_sum(g->h, n), last = s;
    double *ms = (double *)malloc(reps * sizeof *ms);
    elem_t sum = IDENTITY;
    gpu_flush_l2(); /* its buffer is allocated now, outside the timing */
    CUDA_CHECK(cudaDeviceSynchronize());
    int before = guard_threads(g);
    for (int r = 0; r <= reps; ++r) { /* r = 0: the warm-up */
        size_t off = 4 * (size_t)r;
        if (r > 0) { /* the window moves on: 4 elements leave it, 4 come in; then a negation */
            for (size_t i = off - 4; i < off; ++i)
                s += (exact_t)g->h[i + n] - (exact_t)g->h[i];
            s += guard_negate(g, off, n);
            if (s == last) /* then a second: it changes the sum by -2x, x != 0 */
                s += guard_negate(g, off, n);
            last = s;
        }
        elem_t *input = g->d_src + off;
        if (g->d_window) { /* a fresh copy, padded with the identity past n */
            input = g->d_window + off;
            CUDA_CHECK(cudaMemcpyAsync(input, g->d_src + off, n * sizeof(elem_t),
                                       cudaMemcpyDeviceToDevice));
            if (padded > n)
                CUDA_CHECK(cudaMemsetAsync(input + n, 0, (padded - n) * sizeof(elem_t)));
        }
        CUDA_CHECK(cudaMemsetAsync(g->d_sum, 0xff, sizeof(elem_t))); /* poison: reduce() writes */
        gpu_flush_l2();
        CUDA_CHECK(cudaDeviceSynchronize()); /* nothing of ours runs in the timed region */
        double start = guard_clock_ms();
        reduce(input, n, block, g->d_sum);
        int threads = guard_threads(g);
        CUDA_CHECK(cudaDeviceSynchronize()); /* every stream's work */
        double stop = guard_clock_ms();
        CUDA_CHECK(cudaMemcpy(&sum, g->d_sum, sizeof sum, cudaMemcpyDeviceToHost));
        char what[256];
        if (before >= 0 && threads > before) {
            snprintf(what, sizeof what,
                     "returned with %d more host thread%s running than before "
                     "the warm-up: work a thread does after reduce() returns escapes any timing",
                     threads - before, threads - before > 1 ? "s" : "");
            guard_fail(r, reps, n, what);
        }
        if (!exact_equal(sum, s)) {
            snprintf(what, sizeof what,
                     "summed to " SUM_FORMAT ", not " SUM_FORMAT ", the exact "
                     "sum of the window it was given: reduce() did not sum the input of this call",
                     (double)sum, shown(s));
            guard_fail(r, reps, n, what);
        }
        if (r > 0)
            ms[r - 1] = stop - start;
    }
    /* The running sum against the last window summed afresh: a difference is this file's bug. */
    if (exact_sum(g->h + 4 * (size_t)reps, n) != s) {
        fprintf(stderr, "%s: --guard: internal error: the last window's running sum is wrong.\n",
                STAGE_NAME);
        exit(EXIT_NO_GPU);
    }
    t->median_ms = sort_median(ms, reps);
    t->min_ms = ms[0];
    t->max_ms = ms[reps - 1];
    t->unstable = 0;
    t->lo = t->hi = sum;
    free(ms);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"csv", required_argument, NULL, 'c'},
                                             {"reps", required_argument, NULL, 'r'},
                                             {"min-n", required_argument, NULL, 'l'},
                                             {"max-n", required_argument, NULL, 'm'},
                                             {"guard", no_argument, NULL, 'g'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *csv_path = NULL;
    uint64_t reps = 30, min_n = 1024, max_n = (uint64_t)1 << 30;
    bool guard = false;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (c == 'c')
            csv_path = optarg;
        else if (c == 'r' && parse_unsigned(optarg, MAX_REPS, &reps) == 0 && reps >= 20)
            continue;
        else if (c == 'l' && parse_unsigned(optarg, (uint64_t)1 << 40, &min_n) == 0 && min_n)
            continue;
        else if (c == 'm' && parse_unsigned(optarg, (uint64_t)1 << 40, &max_n) == 0 && max_n)
            continue;
        else if (c == 'g')
            guard = true;
        else
            break;
    }
    static const char usage[] =
        "usage: %s --csv FILE [--reps R >= 20] [--min-n N] [--max-n N] [--guard]\n";
    if (c == 'h') {
        printf(usage, argv[0]);
        printf(
            "Times the stage's reduce(), CUB's DeviceReduce::Sum and a copy for n = 2^10 .. "
            "2^30\n(--min-n, --max-n: the range), each the median of R repeats (default 30) "
            "with the L2\nflushed before each, and appends a row per n and each to the CSV "
            "FILE.\n"
            "--guard: time the stage as make grade does, so that it cannot fool the timing: "
            "each call sums\nanother window of a larger input, with an element at a random place "
            "negated, and is timed by\nthe host (raw clock_gettime system calls) around "
            "reduce() and cudaDeviceSynchronize(); its sum\nis read back at once and must be "
            "that window's exact sum, and it must leave no host thread\nrunning. A call that "
            "fails: one sentence with \": --guard: \" on stderr, and exit status 1.\n"
            "Exit status: 0 done, 1 --guard caught a call, 2 bad usage, 3 no usable GPU or a "
            "CUDA error.\n");
        return EXIT_OK;
    }
    if (c != -1 || csv_path == NULL) {
        fprintf(stderr, usage, argv[0]);
        return EXIT_USAGE;
    }
    char why[256], gpu[256];
    if (gpu_available(why, sizeof why) != 1) {
        fprintf(stderr, "%s: %s; the benchmark needs an NVIDIA GPU.\n", STAGE_NAME, why);
        return EXIT_NO_GPU;
    }
    double peak;
    size_t l2;
    gpu_describe(gpu, sizeof gpu, &peak, &l2);
    for (char *p = gpu; *p; ++p) /* a CSV field */
        if (*p == ',')
            *p = ' ';

    /* The largest n: 2^30, the stage's limit, and what fits: CUB's input and the copy's
     * destination here, the stage's input in gpu_run_stage (and its pristine copy, in place). */
    unsigned int block = default_block(&STAGE);
    if (STAGE.single_block && max_n > 2 * (uint64_t)block)
        max_n = 2 * (uint64_t)block;
    size_t bytes_per_n = (3 + STAGE.in_place) * sizeof(elem_t);
    /* --guard: the stage's buffer is 4 reps elements longer, its window's copy 2 blocks more. */
    size_t guard_extra = guard ? 2 * (4 * reps + 2 * (size_t)BLOCK_MAX) * sizeof(elem_t) : 0;
    while (max_n > 1024 &&
           max_n * bytes_per_n + guard_extra + 4 * l2 + ((size_t)1 << 28) > gpu_free_memory())
        max_n /= 2;
    elem_t *h_input = (elem_t *)malloc(max_n * sizeof(elem_t));
    input_fill(h_input, max_n, PATTERN_SMALL, 1);
    struct bench b = {};
    b.d_input = (elem_t *)gpu_alloc(max_n * sizeof(elem_t), "the input");
    b.d_copy = (elem_t *)gpu_alloc(max_n * sizeof(elem_t), "the copy's destination");
    b.d_sum = (elem_t *)gpu_alloc(sizeof(elem_t), "the sum");
    CUDA_CHECK(cudaMemcpy(b.d_input, h_input, max_n * sizeof(elem_t), cudaMemcpyHostToDevice));
    CUDA_CHECK(cub::DeviceReduce::Sum(NULL, b.temp_bytes, b.d_input, b.d_sum, (size_t)max_n));
    b.d_temp = gpu_alloc(b.temp_bytes, "CUB's temporary storage");

    struct guard g = {};
    g.stat_fd = -1;
    if (guard) { /* the stage's buffers, for every n; the negations' seed and the thread count */
        size_t len = max_n + 4 * reps;
        g.h = (elem_t *)malloc(len * sizeof(elem_t));
        if (g.h == NULL) {
            fprintf(stderr,
                    "%s: not enough host memory for --guard's %zu elements; try a "
                    "smaller --max-n.\n",
                    STAGE_NAME, len);
            return EXIT_USAGE;
        }
        g.d_src = (elem_t *)gpu_alloc(len * sizeof(elem_t), "--guard's input");
        if (STAGE.in_place || STAGE.single_block)
            g.d_window = (elem_t *)gpu_alloc((len + 2 * (size_t)block) * sizeof(elem_t),
                                             "--guard's copy of each window");
        g.d_sum = (elem_t *)gpu_alloc(sizeof(elem_t), "--guard's sum");
        if (raw_syscall(SYS_getrandom, (long)&g.rng, sizeof g.rng, 0, 0) != sizeof g.rng)
            g.rng = (uint64_t)(guard_clock_ms() * 1e6); /* no getrandom: the clock's nanoseconds */
        long fd =
            raw_syscall(SYS_openat, AT_FDCWD, (long)"/proc/self/stat", O_RDONLY | O_CLOEXEC, 0);
        g.stat_fd = fd < 0 ? -1 : (int)fd;
        if (guard_threads(&g) < 0)
            fprintf(stderr,
                    "%s: --guard: /proc/self/stat cannot be read: the host threads a "
                    "reduce() call leaves running are not counted.\n",
                    STAGE_NAME);
    }

    FILE *csv = fopen(csv_path, "a");
    if (csv == NULL) {
        fprintf(stderr, "%s: cannot append to %s.\n", STAGE_NAME, csv_path);
        return EXIT_USAGE;
    }
    if (ftell(csv) == 0)
        fprintf(csv, "gpu,stage,n,bytes,median_ms,min_ms,max_ms,gbps,peak_gbps,peak_pct,"
                     "ratio_to_cub,sum_ok\n");

    size_t done = 0;
    elem_t prefix = IDENTITY; /* reference sums of growing prefixes of one input */
    double prefix_d = 0, prefix_abs = 0;
    for (size_t n = 1024; n <= max_n; n *= 2) {
        prefix += reduce_cpu(h_input + done, n - done);
        prefix_d += reduce_double(h_input + done, n - done);
        prefix_abs += sum_abs(h_input + done, n - done);
        done = n;
        if (n < min_n)
            continue;
        b.n = n;
        b.ref = prefix;
        b.ref_d = prefix_d;
        b.bound = float_sum_bound(n, n - 1, prefix_abs); /* float: any order's bound */
        struct timing stage, cub, copy;
        double bytes = (double)n * sizeof(elem_t);
        elem_t first;

        int stage_ok = 1; /* --guard: every call's sum was right, or it exited */
        if (guard)
            guard_stage(&g, n, block, (int)reps, &stage);
        else { /* every repeat's sum lies in [lo, hi]: right when both ends are */
            gpu_run_stage(h_input, n, block, (int)reps, &first, &stage);
            stage_ok = sum_ok(&b, stage.lo) && sum_ok(&b, stage.hi);
        }
        b.bad_sums = 0;
        gpu_time(check, run_cub, &b, (int)reps, &cub);
        check(&b);
        int cub_ok = b.bad_sums == 0;
        gpu_time(NULL, run_copy, &b, (int)reps, &copy);

        row(csv, gpu, STAGE_NAME, n, &stage, bytes, peak, cub.median_ms, stage_ok);
        row(csv, gpu, "cub", n, &cub, bytes, peak, 0, cub_ok);
        row(csv, gpu, "copy", n, &copy, 2 * bytes, peak, 0, 1);
        fprintf(stderr, "%-20s n = 2^%-2d  %9.4f ms  %7.1f GB/s  %5.1f%% of peak  %.3f x CUB%s%s\n",
                STAGE_NAME, __builtin_ctzll(n), stage.median_ms, bytes / (stage.median_ms * 1e6),
                100 * bytes / (stage.median_ms * 1e6) / peak, stage.median_ms / cub.median_ms,
                stage_ok && cub_ok ? "" : "  WRONG SUM", guard ? "  (--guard)" : "");
    }
    fclose(csv);
    free(h_input);
    free(g.h);
    return EXIT_OK;
}
