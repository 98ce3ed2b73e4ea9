/* test_deterministic.c: step08_deterministic gives the bits its order of additions says, on every
 * run (build/test_deterministic, linked with step08's reduce.cu).
 *
 * replay() below is step08's order written again on the CPU, from the lesson rather than the
 * kernel: the grid (a function of n alone), each thread's loads in order, the shuffle tree of
 * each warp with its out-of-range lanes, the tree over the warps, and the last block's pass over
 * the blocks' partial sums. In the float build every addition rounds, so a sum from any other
 * order, or with one element dropped or added twice, differs in its bits from the replay for all
 * but rare inputs: the GPU must give the replay's bits exactly, for n at every boundary of the
 * order. In the int32 build the replay is one more exact sum to agree with.
 * The 69 sizes run in 8 tests, a size in 8 each (a process and a CUDA context a test, not a
 * size: make grade replays this file for every stage-8 submission); each failure names its n, and
 * announce_case's line on stderr before each sum names the one that killed its test. */
#include "test_util.h" /* Criterion, harness.h */

/* step08's constants, as its lesson states them. */
enum { BLOCK = 256, MAX_GRID = 1024, COARSE_FACTOR = 2, WARP = 32 };

/* __shfl_down_sync's tree over lanes 0 .. width - 1 of a warp: every lane at once adds lane
 * l + offset's value, or its own where l + offset is past the warp (the shuffle returns the
 * caller's value there). Lane 0's result depends on lanes 0 .. width - 1 alone. */
static elem_t warp_tree(const elem_t lanes[WARP], int width)
{
    elem_t x[WARP], next[WARP];
    memcpy(x, lanes, sizeof x);
    for (int offset = width / 2; offset >= 1; offset /= 2) {
        for (int l = 0; l < WARP; ++l)
            next[l] = x[l] + (l + offset < WARP ? x[l + offset] : x[l]);
        memcpy(x, next, sizeof x);
    }
    return x[0];
}

/* block_reduce: each warp's tree over its 32 lanes, then warp 0's tree over the 8 warp sums. */
static elem_t block_tree(const elem_t threads[BLOCK])
{
    elem_t warp_sums[WARP];
    for (int l = 0; l < WARP; ++l)
        warp_sums[l] = l < BLOCK / WARP ? warp_tree(threads + WARP * l, WARP) : IDENTITY;
    return warp_tree(warp_sums, BLOCK / WARP);
}

/* step08's sum of x[0..n), addition by addition. */
static elem_t replay(const elem_t *x, size_t n)
{
    if (n == 0)
        return IDENTITY;
    size_t n4 = n / 4, step = (size_t)COARSE_FACTOR * 2 * BLOCK;
    size_t segments = (n + step * 4 - 1) / (step * 4);
    size_t grid = segments < MAX_GRID ? segments : MAX_GRID;
    elem_t *block_sums = calloc(grid, sizeof *block_sums), threads[BLOCK];
    cr_assert_not_null(block_sums);
    for (size_t b = 0; b < grid; ++b) {
        for (size_t t = 0; t < BLOCK; ++t) {
            elem_t partial = IDENTITY;
            for (size_t segment = step * b; segment < n4; segment += step * grid)
                for (size_t tile = 0; tile < COARSE_FACTOR * 2; ++tile) {
                    size_t v = segment + t + tile * BLOCK; /* the vector x[4v .. 4v + 3] */
                    if (v < n4)
                        partial += x[4 * v] + x[4 * v + 1] + x[4 * v + 2] + x[4 * v + 3];
                }
            if (b == 0 && t < n % 4)
                partial += x[4 * n4 + t];
            threads[t] = partial;
        }
        block_sums[b] = block_tree(threads);
    }
    elem_t sum = block_sums[0];
    if (grid > 1) { /* the last block: slot b to thread b % BLOCK, in index order */
        for (size_t t = 0; t < BLOCK; ++t) {
            threads[t] = IDENTITY;
            for (size_t b = t; b < grid; b += BLOCK)
                threads[t] += block_sums[b];
        }
        sum = block_tree(threads);
    }
    free(block_sums);
    return sum;
}

/* Case i's n, at every boundary of the order (FIRST: one vector, one warp, one block, one segment,
 * the largest grid, a grid-stride loop of several rounds: 2^24 + 3, 2^28 + 5), then 2^k - 1 and
 * 2^k + 1 for every k to 27. */
static const size_t FIRST[] = {0,   1,   2,    3,    4,      5,        7,        33,
                               255, 257, 1000, 4097, 100003, 16777219, 268435461};
#define CASES (COUNT(FIRST) + 2 * 27)

static size_t case_n(size_t i)
{
    if (i < COUNT(FIRST))
        return FIRST[i];
    i -= COUNT(FIRST);
    return ((size_t)1 << (1 + i / 2)) + (i % 2 ? 1 : -1); /* k = 1 .. 27 */
}

#define GROUPS 8 /* tests; size i runs in test i % GROUPS, so that the large ones spread */

ParameterizedTestParameters(deterministic, gpu_bits_are_the_replays)
{
    static size_t group[GROUPS];
    for (size_t g = 0; g < GROUPS; ++g)
        group[g] = g;
    return cr_make_param_array(size_t, group, GROUPS);
}

/* Two inputs a size: wide-range values (float: rounds at almost every addition) and alternating
 * signs (cancellation). */
ParameterizedTest(size_t *g, deterministic, gpu_bits_are_the_replays)
{
    require_gpu();
    static const enum pattern PATTERNS[] = {PATTERN_FULL_RANGE, PATTERN_ALTERNATING};
    for (size_t i = *g; i < CASES; i += GROUPS) {
        size_t n = case_n(i);
        for (int p = 0; p < 2; ++p) {
            const char *name = p ? "alternating" : "wide-range";
            elem_t *x = new_input(n, PATTERNS[p], 808 + i);
            announce_case(n, BLOCK, name, 808 + i);
            elem_t want = replay(x, n), got;
            gpu_run_stage(x, n, BLOCK, 0, &got, NULL);
            cr_expect(memcmp(&got, &want, sizeof got) == 0,
                      "n = %zu, %s input: the GPU gave %.9g (%a), the replay of step08's order "
                      "%.9g (%a)",
                      n, name, (double)got, (double)got, (double)want, (double)want);
#ifndef REDUCE_FLOAT
            cr_expect_eq(want, reduce_cpu(x, n), "n = %zu: the replay is not the exact sum", n);
#endif
            free(x);
        }
    }
}

/* The same bits on 100 runs: the timed path checks every repeat against the first run's sum. On
 * the CPU model, whose runs follow one schedule a seed, 10 (0.3 s each on one core). */
#ifdef CPU_MODEL
#define RUNS 10
#else
#define RUNS 100
#endif
Test(deterministic, one_hundred_runs_same_bits)
{
    require_gpu();
    size_t n = ((size_t)1 << 24) + 3;
    elem_t *x = new_input(n, PATTERN_FULL_RANGE, 100);
    struct timing t;
    elem_t sum, want = replay(x, n);
    gpu_run_stage(x, n, BLOCK, RUNS, &sum, &t); /* 1 warm-up + RUNS timed runs */
    cr_expect_eq(t.unstable, 0, "%d of %d runs differed from the first", t.unstable, RUNS);
    cr_expect(memcmp(&sum, &want, sizeof sum) == 0, "the runs gave %.9g, the replay %.9g",
              (double)sum, (double)want);
    free(x);
}

/* The ticket resets itself: launches of every kind in a row, in one process, each right. A
 * ticket left at anything but 0 would make the wrong block the last one, or none. */
Test(deterministic, ticket_resets_between_launches)
{
    require_gpu();
    static const size_t N[] = {100003, 5, (size_t)1 << 22, 4096, 4097, 1, 3000000};
    size_t max = (size_t)1 << 22;
    elem_t *x = new_input(max, PATTERN_FULL_RANGE, 5);
    for (size_t k = 0; k < COUNT(N); ++k)
        for (int again = 0; again < 2; ++again) {
            elem_t got, want = replay(x, N[k]);
            gpu_run_stage(x, N[k], BLOCK, 2, &got, NULL);
            cr_expect(memcmp(&got, &want, sizeof got) == 0,
                      "launch %zu (n = %zu): %.9g, the replay %.9g", 2 * k + again, N[k],
                      (double)got, (double)want);
        }
    free(x);
}

/* The replay's block size is step08's, the only one it takes (test_step08's limit_on_n refuses
 * every other, in one sentence, before any CUDA call): no GPU needed. */
Test(deterministic, takes_its_block_size_only)
{
    cr_expect_eq(STAGE.fixed_block, BLOCK, "step08's block is %u, the replay's %d",
                 STAGE.fixed_block, BLOCK);
}
