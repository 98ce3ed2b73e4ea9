/* bench.c: the CPU model's own benchmark (make bench-model; model/bench.sh runs it), one program a
 * stage: BUILD/model_bench_stepNN. Not a GPU's time: how long the model takes to run a stage's
 * kernels on this CPU, so that the course can say the model is fast enough to be used.
 *
 *   model_bench_stepNN N BLOCK REPS
 * sums N elements (the stages' default input, seed 1) REPS times with the stage's reduce() on the
 * model, timed by the host's clock, and step00's sequential loop REPS times on the same input;
 * prints one CSV row:
 *   stage,n,block,sanitizer,model_ms,step00_ms,ratio,sum_ok
 * model_ms and step00_ms are medians (ms), ratio = model_ms / step00_ms, sum_ok 1 when every
 * model sum was the loop's. Exit status 0, or 1 on a wrong sum. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <stdlib.h>
#include <time.h>

#ifndef STAGE_NAME
#error "build with -DSTAGE_NAME=\"stepNN_name\" (the Makefile does)"
#endif
#ifndef SANITIZER
#define SANITIZER "none"
#endif

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s N BLOCK REPS\n", argv[0]);
        return EXIT_USAGE;
    }
    size_t n = strtoull(argv[1], NULL, 10);
    unsigned int block = (unsigned int)strtoul(argv[2], NULL, 10);
    int reps = atoi(argv[3]);
    elem_t *input = malloc(n * sizeof *input);
    double *model_ms = malloc(reps * sizeof *model_ms), *loop_ms = malloc(reps * sizeof *loop_ms);
    if (input == NULL || model_ms == NULL || loop_ms == NULL || reps < 1)
        return EXIT_USAGE;
    input_fill(input, n, PATTERN_SMALL, 1);
    int ok = 1;
    for (int r = 0; r < reps; ++r) {
        double start = now_ms();
        elem_t ref = reduce_cpu(input, n);
        loop_ms[r] = now_ms() - start;
        elem_t sum;
        start = now_ms();
        gpu_run_stage(input, n, block, 0, &sum, NULL); /* copies in, runs, copies the sum out */
        model_ms[r] = now_ms() - start;
        ok &= sum == ref;
    }
    double m = sort_median(model_ms, reps), l = sort_median(loop_ms, reps);
    printf("%s,%zu,%u,%s,%.3f,%.4f,%.1f,%d\n", STAGE_NAME, n, block, SANITIZER, m, l, m / l, ok);
    free(input);
    return ok ? EXIT_OK : EXIT_MISMATCH;
}
