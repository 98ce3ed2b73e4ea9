/* bench.cu: the benchmark behind `make bench` (build/bench_stepNN, one per GPU stage).
 *
 * In one process, on the same input, for n = 2^10, 2^12, ... up to 2^30 (or the stage's
 * limit, or what the device's memory holds), it times:
 *   - the stage's reduce(), exactly as build/stepNN runs it (gpu_run_stage),
 *   - CUB's cub::DeviceReduce::Sum, what a user would call instead (temporary storage allocated
 *     once, outside the timing),
 *   - a device-to-device cudaMemcpyAsync of the same bytes: the bandwidth a kernel can reach,
 * each with CUDA events, a warm-up, the L2 flushed before every repeat, and the median, min and max
 * of --reps repeats (gpu_time in gpu.cu). Every repeat's sum is checked against the CPU.
 * Writes one CSV row per (stage, n) and per (cub, n), (copy, n):
 *   gpu,stage,n,bytes,median_ms,min_ms,max_ms,gbps,peak_gbps,peak_pct,ratio_to_cub,sum_ok
 * gbps counts bytes read once (bytes / median); copy's counts bytes read and written.
 * ratio_to_cub = stage median / CUB median at the same n, measured in this run. */
#include <cub/device/device_reduce.cuh>
#include <getopt.h>
#include <math.h>

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

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"csv", required_argument, NULL, 'c'},
                                             {"reps", required_argument, NULL, 'r'},
                                             {"min-n", required_argument, NULL, 'l'},
                                             {"max-n", required_argument, NULL, 'm'},
                                             {NULL, 0, NULL, 0}};
    const char *csv_path = NULL;
    uint64_t reps = 30, min_n = 1024, max_n = (uint64_t)1 << 30;
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
        else
            break;
    }
    if (c != -1 || csv_path == NULL) {
        fprintf(stderr, "usage: %s --csv FILE [--reps R >= 20] [--min-n N] [--max-n N]\n", argv[0]);
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
    while (max_n > 1024 && max_n * bytes_per_n + 4 * l2 + ((size_t)1 << 28) > gpu_free_memory())
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

        /* Every repeat's sum lies in [lo, hi]: right when both ends are. */
        gpu_run_stage(h_input, n, block, (int)reps, &first, &stage);
        int stage_ok = sum_ok(&b, stage.lo) && sum_ok(&b, stage.hi);
        b.bad_sums = 0;
        gpu_time(check, run_cub, &b, (int)reps, &cub);
        check(&b);
        int cub_ok = b.bad_sums == 0;
        gpu_time(NULL, run_copy, &b, (int)reps, &copy);

        row(csv, gpu, STAGE_NAME, n, &stage, bytes, peak, cub.median_ms, stage_ok);
        row(csv, gpu, "cub", n, &cub, bytes, peak, 0, cub_ok);
        row(csv, gpu, "copy", n, &copy, 2 * bytes, peak, 0, 1);
        fprintf(stderr, "%-20s n = 2^%-2d  %9.4f ms  %7.1f GB/s  %5.1f%% of peak  %.3f x CUB%s\n",
                STAGE_NAME, __builtin_ctzll(n), stage.median_ms, bytes / (stage.median_ms * 1e6),
                100 * bytes / (stage.median_ms * 1e6) / peak, stage.median_ms / cub.median_ms,
                stage_ok && cub_ok ? "" : "  WRONG SUM");
    }
    fclose(csv);
    free(h_input);
    return EXIT_OK;
}
