/* bench.cu: the benchmark behind `make bench` (build/bench_stepNN, one per GPU stage).
 *
 * In one process, on the same device buffers, for n = 2^10, 2^12, ... up to 2^30 (or the stage's
 * limit, or what the device's memory holds), it times:
 *   - the stage's reduce(),
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
#include <string.h>

#include "check.h"
#include "harness.h"

struct bench {
    elem_t *d_input, *d_pristine, *d_copy, *d_sum;
    void *d_temp;
    size_t temp_bytes, n, padded_n;
    unsigned int block;
    elem_t ref;          /* int32: the exact sum */
    double ref_d, bound; /* float32: a double-precision sum, and how far a float sum may be off */
    int bad_sums;
};

static void check(struct bench *b)
{
    elem_t sum;
    CUDA_CHECK(cudaMemcpy(&sum, b->d_sum, sizeof sum, cudaMemcpyDeviceToHost));
#ifdef REDUCE_FLOAT
    if (!(fabs((double)sum - b->ref_d) <= b->bound))
#else
    if (memcmp(&sum, &b->ref, sizeof sum) != 0)
#endif
        b->bad_sums++;
}

/* Before each repeat: check the last repeat's sum, restore an in-place stage's input. */
static void prepare(void *ctx)
{
    struct bench *b = (struct bench *)ctx;
    check(b);
    if (STAGE.in_place)
        CUDA_CHECK(cudaMemcpyAsync(b->d_input, b->d_pristine, b->padded_n * sizeof(elem_t),
                                   cudaMemcpyDeviceToDevice));
}

static void run_stage(void *ctx)
{
    struct bench *b = (struct bench *)ctx;
    reduce(b->d_input, b->n, b->block, b->d_sum);
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
    for (int c; (c = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        if (c == 'c')
            csv_path = optarg;
        else if (c == 'r' && parse_unsigned(optarg, MAX_REPS, &reps) == 0 && reps >= 20)
            continue;
        else if (c == 'l' && parse_unsigned(optarg, (uint64_t)1 << 40, &min_n) == 0 && min_n)
            continue;
        else if (c == 'm' && parse_unsigned(optarg, (uint64_t)1 << 40, &max_n) == 0 && max_n)
            continue;
        else {
            fprintf(stderr, "usage: %s --csv FILE [--reps R >= 20] [--min-n N] [--max-n N]\n",
                    argv[0]);
            return EXIT_USAGE;
        }
    }
    if (csv_path == NULL) {
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
    for (char *c = gpu; *c; ++c)
        if (*c == ',')
            *c = ' ';

    /* The largest n: 2^30, the stage's limit, and what fits next to the copy's destination. */
    struct bench b = {};
    b.block = default_block(&STAGE);
    if (STAGE.single_block && max_n > 2 * (uint64_t)b.block)
        max_n = 2 * (uint64_t)b.block;
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    size_t bytes_per_n = 2 * sizeof(elem_t);
    while (max_n > 1024 && max_n * bytes_per_n + 4 * l2 + ((size_t)1 << 28) > free_bytes)
        max_n /= 2;
    size_t padded_max = padded_count(&STAGE, max_n, b.block);
    elem_t *h_input = (elem_t *)malloc(max_n * sizeof(elem_t));
    input_fill(h_input, max_n, PATTERN_SMALL, 1);
    b.d_input = (elem_t *)gpu_alloc(padded_max * sizeof(elem_t), "the input");
    b.d_copy = (elem_t *)gpu_alloc(max_n * sizeof(elem_t), "the copy's destination");
    b.d_sum = (elem_t *)gpu_alloc(sizeof(elem_t), "the sum");
    if (STAGE.in_place)
        b.d_pristine = (elem_t *)gpu_alloc(padded_max * sizeof(elem_t), "the pristine input");
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
        b.ref_d = prefix_d;
        b.n = n;
        b.ref = prefix;
        b.padded_n = padded_count(&STAGE, n, b.block);
        /* The input is n elements followed by the identity up to the padded length. */
        CUDA_CHECK(cudaMemset(b.d_input, 0, b.padded_n * sizeof(elem_t)));
        CUDA_CHECK(cudaMemcpy(b.d_input, h_input, n * sizeof(elem_t), cudaMemcpyHostToDevice));
        if (STAGE.in_place)
            CUDA_CHECK(cudaMemcpy(b.d_pristine, b.d_input, b.padded_n * sizeof(elem_t),
                                  cudaMemcpyDeviceToDevice));
        if (n < min_n)
            continue;
        struct timing stage, cub, copy;
        double bytes = (double)n * sizeof(elem_t);

        b.bad_sums = 0;
        b.bound = float_sum_bound(n, n - 1, prefix_abs); /* float: any order's bound */
        CUDA_CHECK(cudaMemset(b.d_sum, 0xff, sizeof(elem_t)));
        gpu_time(prepare, run_stage, &b, (int)reps, &stage);
        check(&b);
        int stage_ok = b.bad_sums == 0;
        b.bad_sums = 0;
        if (STAGE.in_place) /* CUB reads the input as it was */
            CUDA_CHECK(cudaMemcpy(b.d_input, b.d_pristine, b.padded_n * sizeof(elem_t),
                                  cudaMemcpyDeviceToDevice));
        gpu_time(prepare, run_cub, &b, (int)reps, &cub);
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
