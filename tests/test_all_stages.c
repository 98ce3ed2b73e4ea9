/* test_all_stages.c: the nine programs (build/stepNN) side by side.
 *
 * Every stage must print the identical sum for the same input file. In the float32 build the
 * stages add in different orders, so their sums may differ in the last bits: each must lie within
 * the bound any order of n additions keeps to (tolerance.c) of the double-precision reference, and
 * only stages that add in the same order must agree bit for bit. What every program must refuse,
 * before any CUDA call, is test_hostile.c's. */
#define _GNU_SOURCE /* mkstemps, setenv */
#include <math.h>

#include "npy.h"
#include "stages.h" /* test_util.h: Criterion, harness.h */

/* A .npy file of n full-range elements (seed 42), and what the programs must print about them. */
struct input {
    char *path; /* a fresh file (static buffer); the test unlinks it */
    size_t n;
    elem_t loop;       /* step00's loop over them */
    double ref, scale; /* float32: their double sum and sum |x_i| */
};

static struct input write_input(size_t n)
{
    struct input in = {.path = write_file("", 0), .n = n};
    elem_t *x = new_input(n, PATTERN_FULL_RANGE, 42);
    in.loop = reduce_cpu(x, n);
    in.ref = reduce_double(x, n);
    in.scale = sum_abs(x, n);
    char err[256];
    cr_assert_eq(npy_write(in.path, x, n, err, sizeof err), 0, "%s", err);
    free(x);
    return in;
}

/* The number after `key` in a program's line of results. */
static double parse(const struct result *r, const char *key)
{
    const char *at = strstr(r->out, key);
    cr_assert_not_null(at, "no '%s' in: %s%s", key, r->out, r->err);
    return strtod(at + strlen(key), NULL);
}

/* Runs `prog` with args, which give it the file `in`, and checks its line of results: exit status
 * 0, n and result=ok; int32: the loop's sum and reference; float32: the double reference, a sum
 * within any order's bound of it (step00: the loop's bits), and the exact check (quarters,
 * main.c). Returns the sum. */
static elem_t expect_sum(const char *prog, char *const *args, const struct input *in)
{
    struct result r = run(prog, args, false);
    cr_expect_eq(r.status, 0, "%s exited %d: %s%s", prog, r.status, r.out, r.err);
    char n_is[32];
    snprintf(n_is, sizeof n_is, " n=%zu ", in->n);
    cr_expect(strstr(r.out, n_is) && strstr(r.out, " result=ok"), "%s: %s", prog, r.out);
    elem_t sum = (elem_t)parse(&r, " sum=");
#ifdef REDUCE_FLOAT
    cr_expect(parse(&r, " ref=") == in->ref, "%s: reference not %.17g: %s", prog, in->ref, r.out);
    double bound = float_sum_bound(in->n, in->n - 1, in->scale);
    cr_expect(fabs((double)sum - in->ref) <= bound,
              "%s: sum %.9g is more than the bound %.3g from %.17g: %s", prog, (double)sum, bound,
              in->ref, r.out);
    cr_expect(strstr(r.out, " exact_check=ok") != NULL, "%s: %s", prog, r.out);
    cr_expect(strcmp(prog, "step00") || sum == in->loop, "step00: sum %.9g, its loop gives %.9g",
              (double)sum, (double)in->loop);
#else
    cr_expect_eq(sum, in->loop, "%s: %s", prog, r.out);
    cr_expect_eq((elem_t)parse(&r, " ref="), in->loop, "%s: %s", prog, r.out);
#endif
    return sum;
}

/* Every program gets 2047 elements, which every stage takes, the single-block ones too, with
 * --block 1024 (or the one block it takes). As their lessons say, steps 03, 04 and 05 then add in
 * the same order (step05 runs one block, and its one atomicAdd lands on 0), so even in float32
 * they must print the same bits; the others may not. */
Test(all_stages, every_sum_from_the_same_npy_file)
{
    require_gpu();
    struct input in = write_input(2047);
    elem_t same[3]; /* steps 03, 04 and 05's sums */
    int found = 0;
    stages_load();
    for (int s = 0; s < n_stages; ++s) {
        char block[16];
        snprintf(block, sizeof block, "%u", stages[s].fixed_block ? stages[s].fixed_block : 1024);
        elem_t sum = expect_sum(stages[s].program,
                                LINE("--input", in.path, "--reps", "3", "--block", block), &in);
        if (strstr("step03 step04 step05", stages[s].program) && found < 3)
            same[found++] = sum;
    }
    cr_assert_eq(found, 3, "STAGE_LIST lacks one of steps 03, 04 and 05: %s", STAGE_LIST);
    cr_expect(same[0] == same[1] && same[1] == same[2],
              "steps 03, 04, 05 add in one order here, yet print %.9g, %.9g, %.9g", (double)same[0],
              (double)same[1], (double)same[2]);
    unlink(in.path);
}

/* step00 reads and sums a file on a machine without a GPU: its loop's bits, and the reference. */
Test(all_stages, step00_sums_an_npy_file_without_a_gpu)
{
    struct input in = write_input(100003);
    expect_sum("step00", LINE("--input", in.path, "--reps", "3"), &in);
    unlink(in.path);
}

/* --help needs no GPU: exit status 0, and the options listed. */
Test(all_stages, help_lists_the_options)
{
    stages_load();
    for (int s = 0; s < n_stages; ++s) {
        struct result r = run(stages[s].program, LINE("--help"), true);
        cr_expect_eq(r.status, 0, "%s --help: %s", stages[s].program, r.err);
        cr_expect(strstr(r.out, "--block") != NULL, "%s --help: %s", stages[s].program, r.out);
    }
}
