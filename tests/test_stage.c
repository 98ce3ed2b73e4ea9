/* test_stage.c: one test source, linked against every stage (build/test_stepNN).
 *
 * The stage's sum must equal step00's sequential loop exactly, for every n it accepts: 0 (the
 * identity, no launch), 1, around warp and block boundaries, non-powers of two, and on the
 * multi-block stages past one block, past 2^20 and past 2^24; for several block sizes; on three
 * input patterns. int32 wraps identically on both sides, so even full-range input has one exact
 * sum. */
#define _DEFAULT_SOURCE /* sysconf(_SC_AVPHYS_PAGES) */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_test.h"
#include "harness.h"

static const size_t SIZES[] = {0, 1, 2, 31, 32, 33, 1023, 1024, 1025, 2047, 2048};
static const size_t LARGE_SIZES[] = {2049, (1u << 20) + 1, (1u << 24) + 3}; /* multi-block only */
static const unsigned int BLOCKS[] = {32, 128, 256, 1024};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *pattern_name(enum pattern p)
{
    return p == PATTERN_SMALL ? "small" : p == PATTERN_FULL_RANGE ? "full-range" : "alternating";
}

/* The stage's sum of input[0..n): on the GPU through the harness, or step00's loop. */
static elem_t stage_sum(elem_t *input, size_t n, unsigned int block)
{
    elem_t sum;
    if (STAGE.on_gpu)
        gpu_run_stage(input, n, block, 0, &sum, NULL);
    else
        reduce(input, n, block, &sum);
    return sum;
}

/* Sums one input of n elements with each block size the stage takes for it. */
static void check_sums(size_t n, enum pattern pattern, uint64_t seed)
{
    elem_t *input = malloc(n ? n * sizeof *input : 1);
    cr_assert_not_null(input);
    input_fill(input, n, pattern, seed);
    elem_t ref = reduce_cpu(input, n);
    for (size_t b = 0; b < COUNT(BLOCKS); ++b) {
        if (STAGE.single_block && n > 2 * (size_t)BLOCKS[b])
            continue; /* refused by the stage: see limit_on_n */
        elem_t sum = stage_sum(input, n, BLOCKS[b]);
        cr_expect(memcmp(&sum, &ref, sizeof sum) == 0,
                  "%s: n = %zu, block = %u, %s input: sum %.17g, expected %.17g", STAGE_NAME, n,
                  BLOCKS[b], pattern_name(pattern), (double)sum, (double)ref);
    }
    free(input);
}

static void check_pattern(enum pattern pattern)
{
    if (STAGE.on_gpu)
        require_gpu();
    for (size_t i = 0; i < COUNT(SIZES); ++i)
        check_sums(SIZES[i], pattern, 1000 + i);
    if (!STAGE.single_block)
        for (size_t i = 0; i < COUNT(LARGE_SIZES); ++i)
            check_sums(LARGE_SIZES[i], pattern, 2000 + i);
}

Test(stage, small_random_values)
{
    check_pattern(PATTERN_SMALL);
}
Test(stage, full_range_int32_wraps)
{
    check_pattern(PATTERN_FULL_RANGE);
}
Test(stage, alternating_signs)
{
    check_pattern(PATTERN_ALTERNATING);
}

/* The same input gives the same bits every time: int32 addition is associative, so even the
 * stages whose atomics land in a different order each run must agree. The GPU repeats go through
 * the timed path, which checks the sum of every repeat against the first run's. */
Test(stage, repeats_are_bit_identical)
{
    if (STAGE.on_gpu)
        require_gpu();
    size_t n = STAGE.single_block ? 2048 : ((size_t)1 << 22) + 7;
    elem_t *input = malloc(n * sizeof *input);
    cr_assert_not_null(input);
    input_fill(input, n, PATTERN_FULL_RANGE, 7);
    elem_t ref = reduce_cpu(input, n), sum = stage_sum(input, n, 1024);
    cr_expect(memcmp(&sum, &ref, sizeof sum) == 0, "wrong sum");
    if (STAGE.on_gpu) {
        struct timing t;
        gpu_run_stage(input, n, 1024, 5, &sum, &t); /* 1 warm-up + 5 timed repeats */
        cr_expect_eq(t.unstable, 0, "%d of 5 repeats differed from the first run", t.unstable);
    } else {
        for (int r = 0; r < 5; ++r)
            sum = stage_sum(input, n, 1024);
    }
    cr_expect(memcmp(&sum, &ref, sizeof sum) == 0, "a repeat gave a different sum");
    free(input);
}

/* The stage's limits are checked before any CUDA call: no GPU needed. */
Test(stage, limit_on_n)
{
    char err[512] = "";
    for (size_t b = 0; b < COUNT(BLOCKS); ++b) {
        size_t limit = 2 * (size_t)BLOCKS[b];
        cr_expect_eq(options_check_n(limit, BLOCKS[b], STAGE_NAME, &STAGE, err, sizeof err), 0,
                     "%s", err);
        int status = options_check_n(limit + 1, BLOCKS[b], STAGE_NAME, &STAGE, err, sizeof err);
        if (STAGE.single_block) {
            cr_expect_eq(status, EXIT_USAGE, "%s took n = %zu with block %u", STAGE_NAME, limit + 1,
                         BLOCKS[b]);
            cr_expect(strstr(err, "step05_segmented") != NULL, "message: %s", err);
        } else {
            cr_expect_eq(status, 0, "%s", err);
        }
    }
}

/* Past 2^31 and 2^32 elements every index and size must be 64-bit: a 32-bit one wraps and sums
 * the wrong elements. Multi-block stages must give the exact sum; single-block ones refuse. Runs
 * only where the GPU has the memory (17 GiB for 2^32 + 5), and says so when it skips. */
static void check_huge(size_t n)
{
    char err[512];
    if (STAGE.single_block) {
        cr_expect_eq(options_check_n(n, BLOCK_MAX, STAGE_NAME, &STAGE, err, sizeof err), EXIT_USAGE,
                     "%s took n = %zu", STAGE_NAME, n);
        return;
    }
    if (STAGE.on_gpu) {
        require_gpu();
        size_t need = n * sizeof(elem_t) + ((size_t)1 << 30);
        size_t free_bytes = gpu_free_memory();
        if (free_bytes < need)
            cr_skip_test("not enough GPU memory for n = %zu: %.1f GiB free, %.1f GiB needed.", n,
                         free_bytes / 1073741824.0, need / 1073741824.0);
    }
    /* The host holds the input too; other tests run beside this one, so ask for twice as much. */
    double need_gib = n * sizeof(elem_t) / 1073741824.0;
    double avail_gib = (double)sysconf(_SC_AVPHYS_PAGES) * sysconf(_SC_PAGESIZE) / 1073741824.0;
    elem_t *input = avail_gib > 2 * need_gib ? malloc(n * sizeof *input) : NULL;
    if (input == NULL)
        cr_skip_test("not enough host memory for n = %zu: %.1f GiB available, %.1f GiB needed.",
                     n, avail_gib, 2 * need_gib);
    input_fill(input, n, PATTERN_SMALL, 31);
    elem_t ref = reduce_cpu(input, n), sum = stage_sum(input, n, 256);
    cr_expect(memcmp(&sum, &ref, sizeof sum) == 0, "%s: n = %zu: sum %.17g, expected %.17g",
              STAGE_NAME, n, (double)sum, (double)ref);
    free(input);
}

Test(stage, n_above_2_to_the_31)
{
    check_huge(((size_t)1 << 31) + 5);
}
Test(stage, n_above_2_to_the_32)
{
    check_huge(((size_t)1 << 32) + 5);
}
