/* main.cu: build/step09, stage 9's program (its own main: the harness's drives one GPU).
 *
 *   build/step09 [--gpus G] [--n N] [--seed S] [--reps R]     one array over G GPUs
 *   build/step09 --bench [--gpus G] [--csv FILE]              the all-reduce, 1 KiB .. 1 GiB
 *
 * The first prints one line like every stage's (sum, ref, result, median_ms, GB/s); the second
 * adds a table: for int32 and float32 and each size, the time as nccl-tests take it (the average of
 * R all-reduces launched back to back), the algorithm and bus bandwidth from it (nccl-tests'
 * definitions), one call's latency (the median of R single calls, L2s flushed before each) and
 * one GPU's device-to-device copy bandwidth, measured in the same run, and appends each row to
 * FILE as CSV (bytes a GPU, ms, GB/s):
 *   gpu,gpus,type,bytes,time_ms,algbw_gbps,busbw_gbps,latency_ms,copy_gbps,wrong
 * Exit status: 0 ok, 1 a wrong sum, 2 bad usage, 3 no CUDA device, fewer GPUs than --gpus, too
 * little device memory, or a CUDA or NCCL error. */
#include <getopt.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "multi_gpu.h"

static const char usage_text[] =
    "usage: step09 [--gpus G] [--n N] [--seed S] [--reps R] [--bench [--csv FILE]]\n"
    "Sums N int32 elements over G GPUs (stage 8's kernel on each GPU's shard, then\n"
    "ncclAllReduce of the G partial sums) and checks the sum against step00's loop, exactly.\n"
    "  --gpus G   GPUs to use, devices 0 .. G-1 (default: every visible GPU)\n"
    "  --n N      elements to sum (default: 16777216)\n"
    "  --seed S   seed of the random input (default: 1)\n"
    "  --reps R   timed repeats: the sum's median_ms is the median of R runs (default: 20)\n"
    "  --bench    then time ncclAllReduce of 1 KiB .. 1 GiB a GPU, int32 and float32, for each\n"
    "             size: time ms, the average of R calls back to back after 5 (nccl-tests' time;\n"
    "             algbw and busbw in GB/s from it), and latency ms, the median of R single calls\n"
    "  --csv FILE with --bench: append one CSV row per size to FILE\n"
    "Prints: stage device gpus n sum ref result median_ms GB/s\n"
    "Exit status: 0 ok, 1 wrong sum, 2 bad usage, 3 no CUDA device, too few GPUs or memory, or a\n"
    "CUDA or NCCL error.\n";

static int usage_error(const char *what, const char *value)
{
    fprintf(stderr, "step09: %s '%s'; see step09 --help.\n", what, value);
    return EXIT_USAGE;
}

/* One GPU's device-to-device copy, GB/s counting bytes read and written: its memory's rate, timed
 * as make bench times its copy (gpu_time: the median, the L2 flushed before each repeat). On the
 * legacy default stream, named: gpu_time records its events there (common/gpu.cu is compiled
 * without --default-stream per-thread, this file with it). */
struct copy {
    void *from, *to;
    size_t bytes;
};

static void run_copy(void *ctx)
{
    struct copy *c = (struct copy *)ctx;
    CUDA_CHECK(
        cudaMemcpyAsync(c->to, c->from, c->bytes, cudaMemcpyDeviceToDevice, cudaStreamLegacy));
}

static double copy_gbps(size_t bytes, int reps)
{
    CUDA_CHECK(cudaSetDevice(0));
    struct copy c = {gpu_alloc(bytes, "the copy's source"),
                     gpu_alloc(bytes, "the copy's destination"), bytes};
    struct timing t;
    gpu_time(NULL, run_copy, &c, reps, &t);
    CUDA_CHECK(cudaFree(c.from));
    CUDA_CHECK(cudaFree(c.to));
    return 2.0 * bytes / (t.median_ms * 1e6);
}

static int bench(struct team *team, const char *gpu, const char *csv_path, int reps)
{
    FILE *csv = NULL;
    if (csv_path && (csv = fopen(csv_path, "a")) == NULL) {
        fprintf(stderr, "step09: cannot append to %s.\n", csv_path);
        return EXIT_USAGE;
    }
    if (csv && ftell(csv) == 0)
        fprintf(csv, "gpu,gpus,type,bytes,time_ms,algbw_gbps,busbw_gbps,latency_ms,copy_gbps,"
                     "wrong\n");
    size_t most = (size_t)1 << 30;
    CUDA_CHECK(cudaSetDevice(0));
    while (most > 1024 && 2 * most + ((size_t)1 << 28) > gpu_free_memory())
        most /= 2;            /* each GPU holds its vector and the sum it receives */
    team_reserve(team, most); /* once, for every size */
    /* The copy last: freeing its buffers would slow what runs in the next milliseconds (stage 8's
     * lesson). Its rate goes into every row of this run. */
    struct row {
        const char *type;
        size_t bytes, wrong;
        double ms, latency_ms; /* the back-to-back average, and one call's median */
    } rows[2 * 31];
    int n_rows = 0;
    printf("%-8s %12s %11s %12s %12s %11s %10s\n", "type", "bytes", "time ms", "algbw GB/s",
           "busbw GB/s", "latency ms", "wrong");
    int status = EXIT_OK;
    for (int is_float = 0; is_float <= 1; ++is_float)
        for (size_t bytes = 1024; bytes <= most; bytes *= 2) {
            double ms, latency_ms;
            size_t wrong;
            multi_gpu_allreduce(team, bytes / 4, is_float, 1, reps, &ms, &latency_ms, &wrong);
            const char *type = is_float ? "float32" : "int32";
            printf("%-8s %12zu %11.4f %12.1f %12.1f %11.4f %10zu\n", type, bytes, ms,
                   algbw_gbps(bytes, ms), busbw_gbps(bytes, ms, team_size(team)), latency_ms,
                   wrong);
            rows[n_rows++] = (struct row){type, bytes, wrong, ms, latency_ms};
            if (wrong)
                status = EXIT_MISMATCH;
        }
    double copy = copy_gbps(most, reps);
    for (int r = 0; csv && r < n_rows; ++r)
        fprintf(csv, "%s,%d,%s,%zu,%.5f,%.2f,%.2f,%.5f,%.1f,%zu\n", gpu, team_size(team),
                rows[r].type, rows[r].bytes, rows[r].ms, algbw_gbps(rows[r].bytes, rows[r].ms),
                busbw_gbps(rows[r].bytes, rows[r].ms, team_size(team)), rows[r].latency_ms, copy,
                rows[r].wrong);
    printf("one GPU's device-to-device copy: %.1f GB/s (bytes read and written), on %d GPU%s\n",
           copy, team_size(team), team_size(team) > 1 ? "s" : "");
    if (csv)
        fclose(csv);
    return status;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"gpus", required_argument, NULL, 'g'}, {"n", required_argument, NULL, 'n'},
        {"seed", required_argument, NULL, 's'}, {"reps", required_argument, NULL, 'r'},
        {"bench", no_argument, NULL, 'b'},      {"csv", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0}};
    uint64_t gpus = 0, n = DEFAULT_N, seed = 1, reps = DEFAULT_REPS;
    int want_bench = 0;
    const char *csv_path = NULL;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        if (c == 'h') {
            fputs(usage_text, stdout);
            return EXIT_OK;
        } else if (c == 'g' && (parse_unsigned(optarg, MAX_GPUS, &gpus) != 0 || gpus == 0))
            return usage_error("--gpus takes a whole number from 1 to 64, not", optarg);
        else if (c == 'n' && parse_unsigned(optarg, (uint64_t)1 << 48, &n) != 0)
            return usage_error("--n takes a whole number of elements up to 2^48, not", optarg);
        else if (c == 's' && parse_unsigned(optarg, UINT64_MAX, &seed) != 0)
            return usage_error("--seed takes a whole number, not", optarg);
        else if (c == 'r' && (parse_unsigned(optarg, MAX_REPS, &reps) != 0 || reps == 0))
            return usage_error("--reps takes a whole number from 1 to 100000, not", optarg);
        else if (c == 'b')
            want_bench = 1;
        else if (c == 'c')
            csv_path = optarg;
        else if (c == '?')
            return usage_error("unknown option or missing value:", argv[optind - 1]);
    }
    if (optind < argc)
        return usage_error("unexpected argument", argv[optind]);

    char why[256], gpu[256];
    if (gpu_available(why, sizeof why) != 1) {
        fprintf(stderr, "step09: %s; this stage needs at least one NVIDIA GPU.\n", why);
        return EXIT_NO_GPU;
    }
    int visible = team_visible();
    if (gpus == 0)
        gpus = (uint64_t)(visible < MAX_GPUS ? visible : MAX_GPUS);
    if ((int)gpus > visible) {
        fprintf(stderr, "step09: --gpus %llu asks for more GPUs than the %d this process sees.\n",
                (unsigned long long)gpus, visible);
        return EXIT_NO_GPU;
    }
    gpu_describe(gpu, sizeof gpu, NULL, NULL);
    for (char *c = gpu; *c; ++c)
        if (*c == ',')
            *c = ' ';

    elem_t *input = (elem_t *)malloc(n ? n * sizeof *input : 1);
    elem_t sums[MAX_GPUS];
    if (input == NULL) {
        fprintf(stderr,
                "step09: not enough host memory for n = %llu elements; try a smaller --n.\n",
                (unsigned long long)n);
        return EXIT_USAGE;
    }
    input_fill(input, n, PATTERN_SMALL, seed);
    elem_t ref = reduce_cpu(input, n); /* step00's sequential loop */

    struct team *team = team_open((int)gpus);
    double ms;
    multi_gpu_sum(team, input, n, (int)reps, sums, &ms);
    free(input);
    int ok = 1;
    for (int g = 0; g < team_size(team); ++g)
        ok &= sums[g] == ref; /* every GPU holds the whole sum */
    printf("stage=step09_multi_gpu device=\"%s\" gpus=%d n=%llu sum=%d ref=%d result=%s "
           "median_ms=%.4f GB/s=%.1f\n",
           gpu, team_size(team), (unsigned long long)n, sums[0], ref, ok ? "ok" : "MISMATCH", ms,
           n * sizeof(elem_t) / (ms * 1e6));
    int status = ok ? EXIT_OK : EXIT_MISMATCH;
    if (want_bench) {
        int b = bench(team, gpu, csv_path, (int)reps);
        status = status ? status : b;
    }
    team_close(team);
    return status;
}
