/* test_multi_gpu.c: stage 9 (build/test_step09, linked with step09_multi_gpu/multi_gpu.cu, stage
 * 8's kernel and NCCL). Without a GPU only the CPU-side cases run (the shards, the bandwidth
 * formulas); the GPU cases skip and say so. With GPUs, every case runs for every G from 1 to the
 * number of GPUs the process sees, and a failure names n (or the vector's length) and G. */
#include <math.h>

#include "multi_gpu.h"
#include "test_util.h" /* Criterion, harness.h */

/* ---- The shards: every element in exactly one, in order, sizes within one of each other. ---- */
Test(multi_gpu, shards_cover_the_input_once)
{
    const size_t ns[] = {0, 1, 2, 3, 7, 8, 9, 1000003, ((size_t)1 << 33) + 5};
    for (size_t k = 0; k < COUNT(ns); ++k)
        for (int gpus = 1; gpus <= 8; ++gpus) {
            size_t n = ns[k], smallest = SIZE_MAX, largest = 0;
            cr_assert_eq(shard_start(n, gpus, 0), 0, "n = %zu, G = %d", n, gpus);
            cr_assert_eq(shard_start(n, gpus, gpus), n, "n = %zu, G = %d", n, gpus);
            for (int g = 0; g < gpus; ++g) {
                size_t lo = shard_start(n, gpus, g), hi = shard_start(n, gpus, g + 1);
                cr_assert_leq(lo, hi, "n = %zu, G = %d, shard %d", n, gpus, g);
                smallest = hi - lo < smallest ? hi - lo : smallest;
                largest = hi - lo > largest ? hi - lo : largest;
            }
            cr_assert_leq(largest - smallest, 1, "n = %zu, G = %d: shards of %zu and %zu", n, gpus,
                          smallest, largest);
        }
}

Test(multi_gpu, bus_bandwidth_is_nccl_tests_definition)
{
    /* 1 GB in 1 ms is 1000 GB/s; busbw = algbw * 2 (G - 1) / G. */
    cr_assert_float_eq(algbw_gbps(1000000000, 1.0), 1000.0, 1e-9);
    cr_assert_float_eq(busbw_gbps(1000000000, 1.0, 1), 0.0, 1e-9); /* one GPU sends nothing */
    cr_assert_float_eq(busbw_gbps(1000000000, 1.0, 2), 1000.0, 1e-9);
    cr_assert_float_eq(busbw_gbps(1000000000, 1.0, 4), 1500.0, 1e-9);
    cr_assert_float_eq(busbw_gbps(1000000000, 2.0, 8), 875.0, 1e-9);
}

/* ---- One array over G GPUs: the exact int32 sum on every GPU, of small values and of any bit
 * patterns (the sum wraps). n = 0, n < G, n not divisible by G, a partial vector, several blocks, a
 * grid-stride loop. ---- */
ParameterizedTestParameters(multi_gpu, every_gpu_holds_the_exact_sum)
{
    static size_t ns[] = {0, 1, 2, 3, 5, 7, 9, 1000003, ((size_t)1 << 24) + 3};
    return cr_make_param_array(size_t, ns, COUNT(ns));
}

ParameterizedTest(size_t *n, multi_gpu, every_gpu_holds_the_exact_sum)
{
    require_gpu();
    static const enum pattern PATTERNS[] = {PATTERN_SMALL, PATTERN_FULL_RANGE};
    for (int p = 0; p < 2; ++p) {
        elem_t *x = new_input(*n, PATTERNS[p], 7 + *n);
        elem_t ref = reduce_cpu(x, *n), sums[MAX_GPUS];
        for (int gpus = 1; gpus <= team_visible() && gpus <= 8; ++gpus) {
            struct team *team = team_open(gpus);
            multi_gpu_sum(team, x, *n, 0, sums, NULL);
            for (int g = 0; g < gpus; ++g)
                cr_assert_eq(sums[g], ref, "n = %zu, pattern %d, G = %d: GPU %d holds %d, not %d",
                             *n, (int)PATTERNS[p], gpus, g, sums[g], ref);
            team_close(team);
        }
        free(x);
    }
}

/* ---- The all-reduce of a vector, int32 and float32: every element on every GPU, bit for bit. */
ParameterizedTestParameters(multi_gpu, allreduce_gives_every_gpu_the_sum)
{
    static size_t counts[] = {1, 255, 256, 1000003};
    return cr_make_param_array(size_t, counts, COUNT(counts));
}

ParameterizedTest(size_t *count, multi_gpu, allreduce_gives_every_gpu_the_sum)
{
    require_gpu();
    for (int is_float = 0; is_float < 2; ++is_float)
        for (int gpus = 1; gpus <= team_visible() && gpus <= 8; ++gpus) {
            struct team *team = team_open(gpus);
            double ms, latency_ms;
            size_t wrong;
            multi_gpu_allreduce(team, *count, is_float, 3, 1, &ms, &latency_ms, &wrong);
            cr_assert_eq(wrong, 0, "%s, %zu elements, G = %d: %zu elements wrong",
                         is_float ? "float32" : "int32", *count, gpus, wrong);
            /* Both times measured something: 0, NaN or infinity is a bug in the timing. */
            cr_assert(ms > 0.0 && isfinite(ms), "%zu elements, G = %d: time_ms %g", *count, gpus,
                      ms);
            cr_assert(latency_ms > 0.0 && isfinite(latency_ms),
                      "%zu elements, G = %d: latency_ms %g", *count, gpus, latency_ms);
            team_close(team);
        }
}
