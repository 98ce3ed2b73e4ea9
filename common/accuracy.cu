/* accuracy.cu: the measurements behind FLOAT.md (make accuracy; build/float/accuracy_stepNN,
 * one per stage, float32 build only).
 *
 * Sums one input --reps times with the stage and prints one row of FLOAT.md's Markdown table:
 *   | stage | order | d | lowest sum | highest sum | spread | distinct | worst rel. error | bound |
 * order ("fixed", or "varies" where float atomicAdds land in any order) and d come from
 * measure_depth; the bound is gamma_d * sum |x_i| / |ref| of the stage's own order (the tests use
 * d = n - 1, any order's). --header prints the table's title and column heads instead
 * (tools/accuracy.sh prints a whole table). A single-block stage given more than 2 * block
 * elements prints a row saying so.
 * The input, from --seed: --values uniform (the default): n values uniform in [0, 1), 24 random
 * bits each (so each is an exact float). All positive, so sum |x_i| = ref and nothing cancels:
 * what is left is the rounding of each addition, piling up along each element's path to the sum.
 * --values wide: +-m 2^e, m uniform in [0, 1) and e in [-20, 20]: both signs and 40 binary orders
 * of magnitude, so that even a short tree rounds differently in each order.
 * Exit status: 0, 1 when a sum lies outside its bound, 2 bad usage, 3 no CUDA device. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#ifndef REDUCE_FLOAT
#error "accuracy.cu measures float32 sums: build it with make accuracy (TYPE=float)"
#endif

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"n", required_argument, NULL, 'n'},
                                             {"reps", required_argument, NULL, 'r'},
                                             {"block", required_argument, NULL, 'b'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"values", required_argument, NULL, 'v'},
                                             {"header", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    uint64_t n = (uint64_t)1 << 26, reps = 20, block = default_block(&STAGE), seed = 1;
    int header = 0, wide = 0;
    for (int c; (c = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        if (c == 'n' && parse_unsigned(optarg, (uint64_t)1 << 40, &n) == 0 && n)
            continue;
        else if (c == 'r' && parse_unsigned(optarg, 10000, &reps) == 0 && reps)
            continue;
        else if (c == 'b' && parse_unsigned(optarg, BLOCK_MAX, &block) == 0 && block >= BLOCK_MIN &&
                 (block & (block - 1)) == 0)
            continue;
        else if (c == 's' && parse_unsigned(optarg, UINT64_MAX, &seed) == 0)
            continue;
        else if (c == 'v' && (strcmp(optarg, "uniform") == 0 || strcmp(optarg, "wide") == 0))
            wide = strcmp(optarg, "wide") == 0;
        else if (c == 'h')
            header = 1;
        else {
            fprintf(stderr,
                    "usage: %s [--n N >= 1] [--reps R >= 1] [--block B, a power of two in "
                    "[%u, %u]] [--seed S] [--values uniform|wide] [--header]\n",
                    argv[0], BLOCK_MIN, BLOCK_MAX);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'; see %s --help.\n", STAGE_NAME, argv[optind],
                argv[0]);
        return EXIT_USAGE;
    }
    char size[32]; /* "2^26" for a power of two (n >= 1), else the number */
    if ((n & (n - 1)) == 0)
        snprintf(size, sizeof size, "2^%d", __builtin_ctzll(n));
    else
        snprintf(size, sizeof size, "%zu", (size_t)n);
    if (!header && STAGE.single_block && n > 2 * block) {
        printf("| %s | | | one block takes n <= %zu, not %s | | | | | |\n", STAGE_NAME,
               2 * (size_t)block, size);
        return EXIT_OK;
    }
    if (!header && STAGE.on_gpu) {
        char why[256];
        if (gpu_available(why, sizeof why) != 1) {
            fprintf(stderr, "%s: %s; this stage needs an NVIDIA GPU.\n", STAGE_NAME, why);
            return EXIT_NO_GPU;
        }
        gpu_check_memory(n, (unsigned int)block);
    }

    elem_t *input = (elem_t *)malloc(n * sizeof *input);
    if (input == NULL) {
        fprintf(stderr, "%s: not enough host memory for n = %s elements.\n", STAGE_NAME, size);
        return EXIT_USAGE;
    }
    uint64_t state = seed;
    for (size_t i = 0; i < n; ++i) {
        uint64_t r = splitmix64(&state);
        input[i] = (elem_t)(r >> 40) * 0x1p-24f; /* k / 2^24, k < 2^24 */
        if (wide) /* times +-2^e: the low bits pick e, bit 20 the sign */
            input[i] = ldexpf(input[i], (int)(r % 41) - 20) * ((r >> 20) & 1 ? -1.0f : 1.0f);
    }
    double ref = reduce_double(input, n), scale = sum_abs(input, n);

    if (header) {
        printf("float32 sums of n = %s values %s (seed %llu), %llu runs of each stage; the "
               "double-precision reference is %.17g%s.\n\n",
               size, wide ? "±m·2^e, m uniform in [0, 1), e in [-20, 20]" : "uniform in [0, 1)",
               (unsigned long long)seed, (unsigned long long)reps, ref,
               wide ? " (the values cancel: Σ|x| is larger)" : "");
        printf("| stage | order | d | lowest sum | highest sum | spread | distinct sums | worst "
               "rel. error | bound γ_d·Σ\\|x\\|/ref |\n");
        printf("|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
        free(input);
        return EXIT_OK;
    }

    double *sums = (double *)malloc(reps * sizeof *sums); /* every float is exact in double */
    for (uint64_t r = 0; r < reps; ++r) {
        elem_t sum;
        if (STAGE.on_gpu)
            gpu_run_stage(input, n, (unsigned int)block, 0, &sum, NULL);
        else
            reduce(input, n, (unsigned int)block, &sum);
        sums[r] = sum;
    }
    free(input);

    sort_median(sums, (int)reps); /* sorted: the lowest sum first, the highest last */
    double worst = fmax(fabs(sums[0] - ref), fabs(sums[reps - 1] - ref));
    int distinct = 1;
    for (uint64_t r = 1; r < reps; ++r)
        distinct += memcmp(&sums[r], &sums[r - 1], sizeof *sums) != 0;
    bool varies;
    size_t depth = measure_depth(n, (unsigned int)block, &varies); /* the stage's own order */
    double bound = float_sum_bound(n, depth, scale);
    printf("| %s | %s | %zu | %.9g | %.9g | %.9g | %d of %llu | %.2e | %.2e |\n", STAGE_NAME,
           !varies ? "fixed" : "varies", depth, sums[0], sums[reps - 1], sums[reps - 1] - sums[0],
           distinct, (unsigned long long)reps, worst / fabs(ref), bound / fabs(ref));
    free(sums);
    if (!(worst <= bound)) {
        fprintf(stderr,
                "%s: a sum lies %.3g from the double reference, more than the bound %.3g.\n",
                STAGE_NAME, worst, bound);
        return EXIT_MISMATCH;
    }
    return EXIT_OK;
}
