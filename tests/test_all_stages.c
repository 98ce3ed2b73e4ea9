/* test_all_stages.c: the nine programs (build/stepNN) side by side.
 *
 * Every stage must print the identical sum for the same input file, and every program must turn
 * bad usage into one sentence and exit status 2 before touching CUDA (so this part runs on a
 * machine without a GPU too).
 * In the float32 build the stages add in different orders, so their sums may differ in the last
 * bits: each must lie within the bound any order of n additions keeps to (tolerance.c) of the
 * double-precision reference, and only stages that add in the same order must agree bit for bit. */
#define _GNU_SOURCE /* mkstemps */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_test.h"
#include "harness.h"
#include "npy.h"
#include "stages.h"

#ifndef BUILD_DIR
#define BUILD_DIR "build"
#endif

/* Runs `BUILD_DIR/stage args` with stderr joined to stdout; returns the exit status and the
 * output (first 4 KiB) in out. */
static int run(const char *stage, const char *args, char *out, size_t out_len)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/%s %s 2>&1", BUILD_DIR, stage, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "cannot run %s", cmd);
    size_t len = fread(out, 1, out_len - 1, p);
    out[len] = '\0';
    int status = pclose(p);
    cr_assert(WIFEXITED(status), "%s did not exit normally: %s", cmd, out);
    return WEXITSTATUS(status);
}

/* Writes n full-range elements to a fresh .npy file; returns its path (static buffer). *loop gets
 * step00's loop over them; ref and scale, where not NULL, their double sum and sum |x_i|. */
static const char *write_input(size_t n, elem_t *loop, double *ref, double *scale)
{
    static char path[] = "/tmp/reduction-test-XXXXXX.npy";
    strcpy(path, "/tmp/reduction-test-XXXXXX.npy");
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0, "mkstemps failed");
    close(fd);
    elem_t *input = malloc(n * sizeof *input);
    input_fill(input, n, PATTERN_FULL_RANGE, 42);
    *loop = reduce_cpu(input, n);
    if (ref)
        *ref = reduce_double(input, n);
    if (scale)
        *scale = sum_abs(input, n);
    char err[256];
    cr_assert_eq(npy_write(path, input, n, err, sizeof err), 0, "%s", err);
    free(input);
    return path;
}

static elem_t parse_sum(const char *out, const char *key)
{
    const char *at = strstr(out, key);
    cr_assert_not_null(at, "no '%s' in: %s", key, out);
    return (elem_t)strtod(at + strlen(key), NULL);
}

#ifdef REDUCE_FLOAT
static double parse_double(const char *out, const char *key)
{
    const char *at = strstr(out, key);
    cr_assert_not_null(at, "no '%s' in: %s", key, out);
    return strtod(at + strlen(key), NULL);
}

/* Every program gets --block 1024 (or the one block it takes): its sum must lie within any order's
 * bound, and its exact check (quarters, main.c) must pass. And as their lessons say, steps 03, 04 and 05 then add in the same order (2047 elements: step05
 * runs one block, and its one atomicAdd lands on 0), so they must print the same bits; the others
 * may not. */
Test(all_stages, each_sum_within_its_bound_from_the_same_npy_file)
{
    require_gpu();
    const size_t n = 2047; /* every stage takes it, single-block ones too */
    double ref, scale;
    elem_t loop, sums[MAX_STAGES];
    const char *path = write_input(n, &loop, &ref, &scale);
    char args[256], out[4096];
    stages_load();
    for (int s = 0; s < n_stages; ++s) {
        snprintf(args, sizeof args, "--input %s --reps 3 --block %u", path,
                 stages[s].fixed_block ? stages[s].fixed_block : 1024);
        int status = run(stages[s].program, args, out, sizeof out);
        cr_expect_eq(status, 0, "%s exited %d: %s", stages[s].program, status, out);
        cr_expect(strstr(out, "result=ok") != NULL, "%s: %s", stages[s].program, out);
        cr_expect(parse_double(out, " ref=") == ref, "%s: reference not %.17g: %s",
                  stages[s].program, ref, out);
        sums[s] = parse_sum(out, " sum=");
        double bound = float_sum_bound(n, n - 1, scale);
        cr_expect(fabs((double)sums[s] - ref) <= bound,
                  "%s: sum %.9g is more than the bound %.3g from %.17g: %s", stages[s].program,
                  (double)sums[s], bound, ref, out);
        cr_expect(strstr(out, " exact_check=ok") != NULL, "%s: %s", stages[s].program, out);
    }
    cr_expect(sums[stage_index("step00")] == loop, "step00: sum %.9g, its loop gives %.9g",
              (double)sums[stage_index("step00")], (double)loop);
    int s3 = stage_index("step03"), s4 = stage_index("step04"), s5 = stage_index("step05");
    cr_expect(sums[s3] == sums[s4] && sums[s4] == sums[s5],
              "steps 03, 04, 05 add in one order here, yet print %.9g, %.9g, %.9g",
              (double)sums[s3], (double)sums[s4], (double)sums[s5]);
    unlink(path);
}

Test(all_stages, step00_sums_an_npy_file_without_a_gpu)
{
    const size_t n = 100003;
    double ref, scale;
    elem_t loop;
    const char *path = write_input(n, &loop, &ref, &scale);
    char args[256], out[4096];
    snprintf(args, sizeof args, "--input %s --reps 3", path);
    cr_expect_eq(run("step00", args, out, sizeof out), 0, "%s", out);
    cr_expect_eq(parse_sum(out, " sum="), loop, "%s", out); /* the same loop, the same bits */
    cr_expect(parse_double(out, " ref=") == ref, "reference not %.17g: %s", ref, out);
    double bound = float_sum_bound(n, n - 1, scale);
    cr_expect(fabs((double)loop - ref) <= bound, "sum %.9g, reference %.17g, bound %.3g",
              (double)loop, ref, bound);
    cr_expect(strstr(out, "n=100003 ") != NULL, "%s", out);
    unlink(path);
}
#else
Test(all_stages, identical_sum_from_the_same_npy_file)
{
    require_gpu();
    elem_t ref;
    /* 2047 elements: every stage takes them, the single-block ones too. */
    const char *path = write_input(2047, &ref, NULL, NULL);
    char args[256], out[4096];
    snprintf(args, sizeof args, "--input %s --reps 3", path);
    stages_load();
    for (int s = 0; s < n_stages; ++s) {
        int status = run(stages[s].program, args, out, sizeof out);
        cr_expect_eq(status, 0, "%s exited %d: %s", stages[s].program, status, out);
        cr_expect(strstr(out, "result=ok") != NULL, "%s: %s", stages[s].program, out);
        cr_expect_eq(parse_sum(out, " sum="), ref, "%s: %s", stages[s].program, out);
    }
    unlink(path);
}

Test(all_stages, step00_sums_an_npy_file_without_a_gpu)
{
    elem_t ref;
    const char *path = write_input(100003, &ref, NULL, NULL);
    char args[256], out[4096];
    snprintf(args, sizeof args, "--input %s --reps 3", path);
    cr_expect_eq(run("step00", args, out, sizeof out), 0, "%s", out);
    cr_expect_eq(parse_sum(out, " sum="), ref, "%s", out);
    cr_expect_eq(parse_sum(out, " ref="), ref, "%s", out);
    cr_expect(strstr(out, "n=100003 ") != NULL, "%s", out);
    unlink(path);
}
#endif

/* Checked before any CUDA call: the same answers with or without a GPU. */
Test(all_stages, bad_usage_is_one_sentence_and_exit_status_2)
{
    static const char *bad[] = {"--block 48",
                                "--n -5",
                                "--n 12x",
                                "--reps 0",
                                "--frobnicate",
                                "--input /nonexistent/input.npy",
                                "--n 5 --input x.npy",
                                "extra"};
    char out[4096];
    stages_load();
    for (int s = 0; s < n_stages; ++s) {
        cr_expect_eq(run(stages[s].program, "--help", out, sizeof out), 0, "%s --help: %s",
                     stages[s].program, out);
        cr_expect(strstr(out, "--block") != NULL, "%s --help: %s", stages[s].program, out);
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
            int status = run(stages[s].program, bad[b], out, sizeof out);
            cr_expect_eq(status, 2, "%s %s exited %d: %s", stages[s].program, bad[b], status, out);
            size_t len = strlen(out);
            cr_expect(len > 10 && strchr(out, '\n') == out + len - 1, "%s %s: not one line: '%s'",
                      stages[s].program, bad[b], out);
        }
        int status = run(stages[s].program, "--n 2049", out, sizeof out);
        if (stages[s].single_block) {
            cr_expect_eq(status, 2, "%s --n 2049 exited %d: %s", stages[s].program, status, out);
            cr_expect(strstr(out, "n <= 2048") && strstr(out, "step05_segmented"), "%s", out);
        }
    }
}

Test(all_stages, malformed_npy_file_is_refused)
{
    char path[] = "/tmp/reduction-bad-XXXXXX.npy", out[4096], args[256];
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, "\x93NUMPY\x01\x00garbage", 15), 15);
    close(fd);
    snprintf(args, sizeof args, "--input %s", path);
    stages_load();
    for (int s = 0; s < n_stages; ++s)
        cr_expect_eq(run(stages[s].program, args, out, sizeof out), 2, "%s: %s", stages[s].program,
                     out);
    unlink(path);
}
