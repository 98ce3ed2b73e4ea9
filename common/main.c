/* main.c: the program every stage builds into (build/stepNN). The stage's name comes from the
 * Makefile (-DSTAGE_NAME); its kernels and reduce() from stepNN_name/reduce.cu.
 *
 * Prints one line a person can read and a script can parse, for example
 *   stage=step05_segmented device="NVIDIA H200" n=16777216 sum=-84039 ref=-84039 result=ok
 *   median_ms=0.0457 GB/s=1469.6 peak%=30.5
 * and exits 0 ok, 1 wrong sum, 2 bad usage or input, 3 no CUDA device or a CUDA error.
 * On the CPU model (model/, MODEL=cpu) the stage runs once, untimed: the line says which device
 * ran it, and prints median_ms=- GB/s=- peak%=-, since a model's time says nothing of a GPU's.
 * The int32 build demands the reference's exact bits from every run. The float32 build cannot (a
 * float sum depends on the order of its additions): it demands every run within the bound of any
 * order (d = n - 1) and, first, the exact sum of quarters (PATTERN_QUARTERS), and adds to the line
 *   err=0.25 rel_err=2.98e-08 bound=1.68e+08 spread=0.5 repeats_differ=7 exact_check=ok
 * (FLOAT.md, "The programs do the same"). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "npy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef STAGE_NAME
#error "build with -DSTAGE_NAME=\"stepNN_name\" (the Makefile does)"
#endif

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* step00 runs on the CPU: the median of `reps` runs of the sequential loop, timed by the clock. */
static void cpu_run_stage(elem_t *input, size_t n, int reps, elem_t *sum, struct timing *t)
{
    double *ms = malloc(reps * sizeof *ms);
    *t = (struct timing){0, 0, 0, 0, IDENTITY, IDENTITY};
    for (int r = 0; r < reps; ++r) {
        elem_t s;
        double start = now_ms();
        reduce(input, n, 0, &s);
        ms[r] = now_ms() - start;
        if (r == 0)
            *sum = t->lo = t->hi = s;
        else if (memcmp(&s, sum, sizeof s) != 0)
            t->unstable++;
        widen_range(s, &t->lo, &t->hi);
    }
    t->median_ms = sort_median(ms, reps);
    free(ms);
}

#ifdef REDUCE_FLOAT
#define SUM_FORMAT "%.9g" /* enough digits to tell every float apart */
#else
#define SUM_FORMAT "%.10g" /* every int32 in full, as %d prints it */
#endif

/* n elements of `pattern` from `seed`, or one sentence and EXIT_USAGE when the host lacks them. */
static elem_t *new_input(size_t n, enum pattern pattern, uint64_t seed)
{
    elem_t *x = malloc(n ? n * sizeof *x : 1);
    if (x == NULL) {
        fprintf(stderr, "%s: not enough host memory for n = %zu elements; try a smaller --n.\n",
                STAGE_NAME, n);
        exit(EXIT_USAGE);
    }
    input_fill(x, n, pattern, seed);
    return x;
}

#ifdef REDUCE_FLOAT
/* The float32 build's exact check: the stage's sum of n quarters (PATTERN_QUARTERS), with this
 * block size, must be their exact sum, which every correct order of additions gets. Holds the n
 * elements only while it runs. Returns 1 when exact, else says so on stderr and returns 0. */
static int exact_check(size_t n, unsigned int block)
{
    elem_t *x = new_input(n, PATTERN_QUARTERS, 1), sum;
    if (STAGE.on_gpu)
        gpu_run_stage(x, n, block, 0, &sum, NULL);
    else
        reduce(x, n, block, &sum);
    double exact = reduce_double(x, n);
    free(x);
    if ((double)sum == exact)
        return 1;
    fprintf(stderr, "%s: %zu quarters summed to %.9g, not %.17g: an element was dropped or added "
            "twice.\n", STAGE_NAME, n, (double)sum, exact);
    return 0;
}
#endif

int main(int argc, char **argv)
{
    char err[512];
    struct options opt;
    int status = options_parse(argc, argv, STAGE_NAME, &STAGE, &opt, stdout, err, sizeof err);
    if (status == 1)
        return EXIT_OK; /* --help */
    if (status != 0) {
        fprintf(stderr, "%s: %s\n", STAGE_NAME, err);
        return status;
    }

    /* The input's size: a usage or input error is reported before any CUDA call. */
    elem_t *input = NULL;
    if (opt.input_path &&
        (npy_shape(opt.input_path, &opt.n, err, sizeof err) != 0 ||
         options_check_n(opt.n, opt.block, STAGE_NAME, &STAGE, err, sizeof err) != 0)) {
        fprintf(stderr, "%s: %s\n", STAGE_NAME, err);
        return EXIT_USAGE;
    }
    /* Then the GPU, before minutes are spent generating an input it could not hold. */
    char device[256] = "CPU";
    double peak_gbps = 0;
    if (STAGE.on_gpu) {
        if (gpu_available(err, sizeof err) != 1) {
            fprintf(stderr, "%s: %s; this stage needs an NVIDIA GPU (step00_cpu runs without).\n",
                    STAGE_NAME, err);
            return EXIT_NO_GPU;
        }
        gpu_describe(device, sizeof device, &peak_gbps, NULL);
        gpu_check_memory(opt.n, opt.block);
    }
#ifdef REDUCE_FLOAT
    int exact = exact_check(opt.n, opt.block); /* before the input exists: then it is freed */
#endif
    /* Only now the data: a file too large for the GPU, or with no GPU at all, is never read. */
    if (!opt.input_path) {
        input = new_input(opt.n, PATTERN_SMALL, opt.seed);
    } else if (npy_read(opt.input_path, &input, &opt.n, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", STAGE_NAME, err);
        return EXIT_USAGE;
    }
    /* The reference, and how far every run, its lowest and its highest sum, may lie from it: not
     * at all in int32 (step00's loop), within any order's bound (d = n - 1) in float32. */
#ifdef REDUCE_FLOAT
    double ref = reduce_double(input, opt.n);
    double bound = float_sum_bound(opt.n, opt.n - 1, sum_abs(input, opt.n));
#else
    double ref = reduce_cpu(input, opt.n), bound = 0;
    int exact = 1; /* the quarters are float32's check */
#endif
    elem_t sum;
    struct timing t;
    bool model = STAGE.on_gpu && gpu_is_model();
    if (model) {
        gpu_run_stage(input, opt.n, opt.block, 0, &sum, NULL);
        t = (struct timing){0, 0, 0, 0, sum, sum};
    } else if (STAGE.on_gpu)
        gpu_run_stage(input, opt.n, opt.block, opt.reps, &sum, &t);
    else
        cpu_run_stage(input, opt.n, opt.reps, &sum, &t);
    free(input);

    int within = fabs((double)t.lo - ref) <= bound && fabs((double)t.hi - ref) <= bound;
    int ok = within && exact;
    double gbps = t.median_ms > 0 ? opt.n * sizeof(elem_t) / (t.median_ms * 1e6) : 0;
    /* ref: the double itself, never rounded to float */
    printf("stage=%s device=\"%s\" n=%zu sum=" SUM_FORMAT " ref=%.17g result=%s", STAGE_NAME,
           device, opt.n, (double)sum, ref, ok ? "ok" : "MISMATCH");
    if (model)
        printf(" median_ms=- GB/s=- peak%%=-");
    else if (peak_gbps > 0)
        printf(" median_ms=%.4f GB/s=%.1f peak%%=%.1f", t.median_ms, gbps, 100 * gbps / peak_gbps);
    else
        printf(" median_ms=%.4f GB/s=%.1f peak%%=-", t.median_ms, gbps);
#ifdef REDUCE_FLOAT
    double off = fabs((double)sum - ref);
    printf(" err=%.3g", off);
    if (ref != 0)
        printf(" rel_err=%.3g", off / fabs(ref));
    else
        printf(" rel_err=-");
    printf(" bound=%.3g spread=%.9g repeats_differ=%d exact_check=%s\n", bound,
           (double)t.hi - (double)t.lo, t.unstable, exact ? "ok" : "MISMATCH");
    if (!within)
        fprintf(stderr,
                "%s: a float sum in [%.9g, %.9g] lies more than the bound %.3g from the double "
                "reference %.17g.\n",
                STAGE_NAME, (double)t.lo, (double)t.hi, bound, ref);
#else
    printf("\n");
    if (t.unstable)
        fprintf(stderr, "%s: %d of %d repeats gave a different sum from the first run.\n",
                STAGE_NAME, t.unstable, opt.reps);
#endif
    return ok ? EXIT_OK : EXIT_MISMATCH;
}
