/* test_stage.c: one test source, linked against every stage (build/test_stepNN).
 *
 * The stage's sum must equal step00's sequential loop exactly, for every n it accepts: 0 (the
 * identity, no launch), 1, around warp and block boundaries, non-powers of two, and on the
 * multi-block stages past one block, 2^20, 2^24, 2^31 and 2^32; for several block sizes; on three
 * input patterns. int32 wraps identically on both sides, so even full-range input has one exact
 * sum. A float sum depends on the order of its additions, and every stage has its own
 * (FLOAT.md): in the float32 build (make TYPE=float test) each sum must lie within the
 * bound that holds for any order of n additions (float_sum_bound with d = n - 1) of a
 * double-precision reference, and a sum of quarters (PATTERN_QUARTERS), which every order gets
 * exactly, must be exact, so that a dropped or doubled element fails as in the int32 build.
 * Nothing here knows the stage's order, so a stage may use any CUDA C it likes. */
#define _DEFAULT_SOURCE /* sysconf(_SC_AVPHYS_PAGES) */
#include <math.h>
#include <unistd.h>

#include "huge.h"      /* the huge inputs, made and summed on the device */
#include "test_util.h" /* Criterion, harness.h */
#ifdef CPU_MODEL
#include "stages.h" /* run(): a program's exit status, stdout and stderr */
#endif

/* The sizes (seed 1000 + i for SIZES[i]); a single-block stage takes those up to 2 x block only. */
static const size_t SIZES[] = {
    0, 1, 2, 31, 32, 33, 1023, 1024, 1025, 2047, 2048, 2049, (1u << 20) + 1, (1u << 24) + 3};
static const unsigned int BLOCKS[] = {32, 64, 128, 256, 512, 1024};

#ifdef REDUCE_FLOAT
#define FULL_RANGE_NAME "wide-range" /* input.c: a random int32 times 2^-8, up to 2^23, rounded */
#define EXACT PATTERN_QUARTERS       /* the input whose sum every order gets exactly */
#else
#define FULL_RANGE_NAME "full-range"
#define EXACT PATTERN_FULL_RANGE /* int32 sums every input exactly; this one wraps */
#endif

/* enum pattern's names, for failure messages. */
static const char *const PATTERN_NAME[] = {"small", FULL_RANGE_NAME, "alternating", "quarters"};

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

/* test_util.h's announce_case, with the pattern's name. */
static void announce(size_t n, unsigned int block, enum pattern pattern, uint64_t seed)
{
    announce_case(n, block, PATTERN_NAME[pattern], seed);
}

/* The stage's sum of n elements of `pattern`, made from `seed`, with `block` threads a block, must
 * be right. int32: exact. float32: within the bound, and then, on quarters from the same seed,
 * which every order sums exactly, exact too. A wrong sum is reported (cr_expect) and the caller
 * goes on to its next size; the message names the stage, n, block, pattern and seed. */
static void check_sum(enum pattern pattern, size_t n, unsigned int block, uint64_t seed)
{
    elem_t *input = new_input(n, pattern, seed);
    announce(n, block, pattern, seed);
    elem_t sum = stage_sum(input, n, block);
#ifdef REDUCE_FLOAT
    double ref = reduce_double(input, n), bound = float_sum_bound(n, n - 1, sum_abs(input, n));
    cr_expect(fabs((double)sum - ref) <= bound,
              "%s: n = %zu, block = %u, %s input (seed %llu): sum %.9g, double reference %.17g: "
              "off by %.3g, more than any order's bound %.3g",
              STAGE_NAME, n, block, PATTERN_NAME[pattern], (unsigned long long)seed, (double)sum,
              ref, fabs((double)sum - ref), bound);
    pattern = PATTERN_QUARTERS;
    input_fill(input, n, pattern, seed);
    announce(n, block, pattern, seed);
    sum = stage_sum(input, n, block);
#endif
    elem_t exact = reduce_cpu(input, n);
    cr_expect(sum == exact,
              "%s: n = %zu, block = %u, %s input (seed %llu): sum %.17g, expected %.17g "
              "(an element dropped or added twice?)",
              STAGE_NAME, n, block, PATTERN_NAME[pattern], (unsigned long long)seed, (double)sum,
              (double)exact);
    free(input);
}

/* The block sizes the stage takes, each the parameter of one test per pattern: all of BLOCKS, or
 * step08's one (STAGE.fixed_block). Made when the tests start, from the stage under test. */
static struct criterion_test_params block_sizes(void)
{
    static unsigned int blocks[COUNT(BLOCKS)];
    size_t count = 0;
    for (size_t b = 0; b < COUNT(BLOCKS); ++b)
        if (!STAGE.fixed_block || BLOCKS[b] == STAGE.fixed_block)
            blocks[count++] = BLOCKS[b];
    return cr_make_param_array(unsigned int, blocks, count);
}

/* Every size of SIZES that the stage takes with this block size (a single-block stage refuses
 * n > 2 * block, see limit_on_n), in one process: every process pays for a CUDA context of its own
 * (about 0.2 s on an H200), and the driver makes them one at a time. Each wrong size is reported
 * and the next one still runs. */
static void check_sums(enum pattern pattern, unsigned int block)
{
    if (STAGE.on_gpu)
        require_gpu();
    for (size_t i = 0; i < COUNT(SIZES); ++i) {
        if (STAGE.single_block && SIZES[i] > 2 * (size_t)block)
            continue;
#ifdef CPU_MODEL
        /* On the model, 2^24 + 3 once, small values with the default block (4 s a run on one
         * core): every pattern and block size is summed up to 2^20 + 1, past many blocks and
         * grid-stride rounds. */
        if (SIZES[i] > ((size_t)1 << 21) && (block != default_block(&STAGE) ||
                                             pattern != PATTERN_SMALL))
            continue;
#endif
        check_sum(pattern, SIZES[i], block, 1000 + i);
    }
}

/* One parameterized test per input pattern and block size (block_sizes): its sizes (check_sums). */
#define SUM_TEST(name, pattern)                                                                    \
    ParameterizedTestParameters(stage, name)                                                       \
    {                                                                                              \
        return block_sizes();                                                                      \
    }                                                                                              \
    ParameterizedTest(unsigned int *block, stage, name)                                            \
    {                                                                                              \
        check_sums(pattern, *block);                                                               \
    }
SUM_TEST(small_random_values, PATTERN_SMALL)
/* int32: any bit pattern, and the sum wraps; float32: wide-range values, and the sums round. */
SUM_TEST(full_range_values, PATTERN_FULL_RANGE)
SUM_TEST(alternating_signs, PATTERN_ALTERNATING)

/* The same input gives the same bits every time: int32 addition is associative, so even the
 * stages whose atomics land in a different order each run must agree. The GPU repeats go through
 * the timed path, which checks the sum of every repeat against the first run's.
 * float32 is not associative: where float atomicAdds land in a different order each run the last
 * bits of a sum may change (FLOAT.md). Not those of quarters, which every order sums exactly: on
 * them every run must give the same, exact bits, so a race still shows. */
Test(stage, repeats_are_bit_identical)
{
    if (STAGE.on_gpu)
        require_gpu();
#ifdef CPU_MODEL
    size_t n = STAGE.single_block ? 2048 : ((size_t)1 << 20) + 7; /* 1025 blocks of 1024 */
#else
    size_t n = STAGE.single_block ? 2048 : ((size_t)1 << 22) + 7;
#endif
    unsigned int block = STAGE.fixed_block ? STAGE.fixed_block : 1024;
    elem_t *input = new_input(n, EXACT, 7);
    elem_t ref = reduce_cpu(input, n), sum = stage_sum(input, n, block);
    cr_expect(memcmp(&sum, &ref, sizeof sum) == 0, "wrong sum: %.9g, not %.9g", (double)sum,
              (double)ref);
    if (STAGE.on_gpu) {
        struct timing t;
        gpu_run_stage(input, n, block, 5, &sum, &t); /* 1 warm-up + 5 timed repeats */
        cr_expect_eq(t.unstable, 0, "%d of 5 repeats differed from the first run", t.unstable);
    } else {
        for (int r = 0; r < 5; ++r)
            sum = stage_sum(input, n, block);
    }
    cr_expect(memcmp(&sum, &ref, sizeof sum) == 0, "a repeat gave a different sum");
    free(input);
}

/* The stage's limits, for every block size, are checked before any CUDA call: no GPU needed. A
 * single-block stage's refusal names the stage and the one to use instead. */
Test(stage, limit_on_n)
{
    char err[512];
    for (unsigned int block = BLOCK_MIN; block <= BLOCK_MAX; block *= 2) {
        size_t limit = 2 * (size_t)block;
        err[0] = '\0';
        int status = options_check_n(limit, block, STAGE_NAME, &STAGE, err, sizeof err);
        if (STAGE.fixed_block && block != STAGE.fixed_block) { /* step08: one block size */
            cr_expect_eq(status, EXIT_USAGE, "%s took block %u", STAGE_NAME, block);
            cr_expect(strstr(err, "depend on n alone") != NULL, "block %u: %s", block, err);
            continue;
        }
        cr_expect_eq(status, 0, "%s", err);
        err[0] = '\0';
        status = options_check_n(limit + 1, block, STAGE_NAME, &STAGE, err, sizeof err);
        if (STAGE.single_block) {
            cr_expect_eq(status, EXIT_USAGE, "%s took n = %zu with block %u", STAGE_NAME, limit + 1,
                         block);
            cr_expect(strstr(err, STAGE_NAME) && strstr(err, "step05_segmented"), "message: %s",
                      err);
        } else {
            cr_expect_eq(status, 0, "%s", err);
        }
    }
}

/* The device's input and reference (huge.cu), which the huge sizes below are checked with, must
 * be input_fill's numbers bit for bit and reduce_cpu's sum, on every pattern: at 4099 elements,
 * and on the quarters also past 2^24 elements (every other element a quarter; not on the CPU
 * model, where it takes too long). The reference is compared only where every order of addition
 * gives one sum: every int32 input (modulo 2^32); in float32 the quarters, and the small values
 * (whole numbers, their partial sums below 2^24 at these sizes). On the CPU model, which has no
 * CUB, the input only. check_device_case checks one n and pattern; both return whether all agreed
 * (each difference is reported). */
static bool check_device_case(size_t n, enum pattern pattern, uint64_t seed)
{
    elem_t *host = new_input(n, pattern, seed), *device = malloc(n * sizeof *device);
    cr_assert_not_null(device, "no memory for %zu elements", n);
    elem_t ref = IDENTITY, exact = reduce_cpu(host, n);
    gpu_input_fill_to_host(device, n, pattern, seed, &ref);
    size_t i = 0;
    while (i < n && memcmp(&host[i], &device[i], sizeof *host) == 0)
        ++i;
    cr_expect(i == n,
              "device input, n = %zu, %s input (seed %llu): element %zu is %.9g, input_fill made "
              "%.9g",
              n, PATTERN_NAME[pattern], (unsigned long long)seed, i,
              i < n ? (double)device[i] : 0.0, i < n ? (double)host[i] : 0.0);
    bool ok = i == n;
#ifdef REDUCE_FLOAT
    bool one_sum = pattern == PATTERN_QUARTERS || pattern == PATTERN_SMALL;
#else
    bool one_sum = true;
#endif
    if (gpu_has_reference() && one_sum) {
        bool same = memcmp(&ref, &exact, sizeof ref) == 0;
        cr_expect(same, "CUB's reference, n = %zu, %s input (seed %llu): %.17g, reduce_cpu %.17g",
                  n, PATTERN_NAME[pattern], (unsigned long long)seed, (double)ref, (double)exact);
        ok = ok && same;
    }
    free(host);
    free(device);
    return ok;
}

static bool check_device_input(void)
{
    bool ok = true;
    for (int p = PATTERN_SMALL; p <= PATTERN_QUARTERS; ++p)
        ok = check_device_case(4096 + 3, (enum pattern)p, 31 + p) && ok;
    if (!gpu_is_model())
        ok = check_device_case(((size_t)1 << 24) + 3, PATTERN_QUARTERS, 31) && ok;
    return ok;
}

/* Past 2^31 and 2^32 elements every index and size must be 64-bit: a 32-bit one wraps and sums
 * the wrong elements. Multi-block stages must give the exact sum (float32: of quarters, which
 * every order sums exactly); single-block ones refuse, before any CUDA call. On a GPU the input is
 * made on the device, and its reference taken there by CUB (gpu_huge_sum), both checked first at
 * small n (check_device_input): no host memory; step00, whose loop takes host memory, still makes
 * and holds it there. Runs only where the GPU has the memory (gpu_huge_bytes: 16 GiB and 2 MiB for
 * 2^32 + 5), and says so when it skips. */
static void check_huge(size_t n)
{
    char err[512];
    if (STAGE.single_block) {
        cr_expect_eq(options_check_n(n, BLOCK_MAX, STAGE_NAME, &STAGE, err, sizeof err), EXIT_USAGE,
                     "%s took n = %zu", STAGE_NAME, n);
        return;
    }
    unsigned int block = STAGE.fixed_block ? STAGE.fixed_block : 256;
    elem_t sum, ref;
    if (STAGE.on_gpu) {
        require_gpu();
        if (!check_device_input())
            return;
        if (gpu_is_model())
            cr_skip_test("the CPU model does not run n past 2^31, minutes on one core: a GPU "
                         "checks 64-bit indexing (make test MODEL=gpu).");
        size_t need = gpu_huge_bytes(n), free_bytes = gpu_free_memory();
        if (free_bytes < need)
            cr_skip_test("not enough GPU memory for n = %zu: %.1f GiB free, %.1f GiB needed.", n,
                         free_bytes / 1073741824.0, need / 1073741824.0);
        announce(n, block, EXACT, 31);
        gpu_huge_sum(n, EXACT, 31, block, &sum, &ref);
    } else {
        /* The host holds the input; other tests run beside this one, so ask for twice as much. */
        size_t held = n * sizeof(elem_t);
        double avail_gib = (double)sysconf(_SC_AVPHYS_PAGES) * sysconf(_SC_PAGESIZE) / 1073741824.0;
        if (avail_gib <= 2 * held / 1073741824.0)
            cr_skip_test("not enough host memory for n = %zu: %.1f GiB available, %.1f GiB needed.",
                         n, avail_gib, 2 * held / 1073741824.0);
        elem_t *input = malloc(held);
        if (input == NULL)
            cr_skip_test("not enough host memory for n = %zu: malloc failed.", n);
        input_fill(input, n, EXACT, 31);
        announce(n, block, EXACT, 31);
        ref = reduce_cpu(input, n);
        sum = stage_sum(input, n, block);
        free(input);
    }
    cr_expect(memcmp(&sum, &ref, sizeof sum) == 0, "%s: n = %zu: sum %.17g, expected %.17g",
              STAGE_NAME, n, (double)sum, (double)ref);
}

Test(stage, n_above_2_to_the_31)
{
    check_huge(((size_t)1 << 31) + 5);
}
Test(stage, n_above_2_to_the_32)
{
    check_huge(((size_t)1 << 32) + 5);
}

#ifdef CPU_MODEL
/* On the CPU model (MODEL=cpu): the stage's own program built with ThreadSanitizer
 * (BUILD_DIR/thread/stepNN, model/model.cc) must sum right with no data race and no barrier or
 * warp-synchronous error, in three schedules of its threads (CUDA_MODEL_SEED), at two sizes with a
 * partial last block: as compute-sanitizer's racecheck and synccheck on a GPU (make sanitize). */
struct race_case {
    size_t n;
    unsigned int block;
    unsigned int seed;
};

ParameterizedTestParameters(stage, data_race_free)
{
    static struct race_case cases[6];
    size_t count = 0;
    for (unsigned int seed = 1; seed <= 3; ++seed) {
        unsigned int small = STAGE.fixed_block ? STAGE.fixed_block : 32;
        unsigned int large = STAGE.fixed_block    ? STAGE.fixed_block
                             : STAGE.single_block ? 1024
                                                  : 256;
        size_t n = STAGE.single_block ? 2 * large - 1 : 65536 + 3;
        cases[count++] = (struct race_case){n, large, seed};
        cases[count++] = (struct race_case){STAGE.single_block ? small + 1 : 1000, small, seed};
    }
#ifdef REDUCE_FLOAT
    /* A race is in the kernel's accesses and barriers, not in its element type: the int32 build
     * runs these (CI's time on the model); make grade's float32 grade asks for them. */
    if (!getenv("TEST_RACES_IN_FLOAT"))
        count = 0;
#endif
    return cr_make_param_array(struct race_case, cases, STAGE.on_gpu ? count : 0);
}

ParameterizedTest(struct race_case *c, stage, data_race_free)
{
    char program[32], n[32], block[32], seed[16];
    snprintf(program, sizeof program, "thread/%.6s", STAGE_NAME);
    snprintf(n, sizeof n, "%zu", c->n);
    snprintf(block, sizeof block, "%u", c->block);
    snprintf(seed, sizeof seed, "%u", c->seed);
    setenv("CUDA_MODEL_SEED", seed, 1); /* this test's own process: run()'s program inherits it */
    struct result r = run(program, LINE("--n", n, "--block", block), false);
    /* What a student reads first: the sanitizer's summary line and the model's own. */
    const char *summary = strstr(r.err, "SUMMARY: "), *model = strstr(r.err, "CPU model: ");
    cr_expect(r.status == 0 && strstr(r.out, "result=ok"),
              "%s/%s --n %s --block %s with CUDA_MODEL_SEED=%s: %s%.300s%s%.600s", BUILD_DIR,
              program, n, block, seed, r.signal ? "killed by a signal; " : "",
              summary ? summary : "", summary ? "\n" : "", model ? model : summary ? "" : r.err);
}
#endif
