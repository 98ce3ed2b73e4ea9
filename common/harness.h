/* harness.h: everything a stage needs around it, so that its own file holds only its lesson; each
 * section names its file. main.c is the program every stage builds into: one line of results,
 * exit status 0/1/2/3.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include "reduce.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit statuses of every stage program. */
enum { EXIT_OK = 0, EXIT_MISMATCH = 1, EXIT_USAGE = 2, EXIT_NO_GPU = 3 };

#define DEFAULT_N ((size_t)1 << 24)
#define DEFAULT_REPS 20
#define MAX_REPS 100000

/* ---- options.c: the command line (getopt_long) and the stage's limits; no CUDA call --------- */
struct options {
    size_t n;               /* elements to sum */
    uint64_t seed;          /* seed of the generated input */
    int reps;               /* timed repeats; the median is reported */
    unsigned int block;     /* threads per block */
    const char *input_path; /* .npy file to sum instead of generated input, or NULL */
};

/* Parses argv into *opt, starting from the defaults for this stage (n = 2^24, or the stage's
 * limit 2 * block when that is smaller). Returns 0 to go on, 1 when --help (or --stage-info: one
 * line, "stage=NAME on_gpu=0|1 single_block=0|1 in_place=0|1 fixed_block=B default_block=B",
 * the stage_info that tests and scripts read) was printed to `out`,
 * and EXIT_USAGE after writing one sentence that says what is wrong into err (err_len bytes).
 * Calls no CUDA function. Resets getopt, so it may be called more than once. */
int options_parse(int argc, char **argv, const char *stage_name, const struct stage_info *stage,
                  struct options *opt, FILE *out, char *err, size_t err_len);

/* Checks that this stage can sum n elements with this block size. Single-block stages (02-04)
 * take n <= 2 * block (one thread block, two elements a thread). Returns 0, or EXIT_USAGE with one
 * sentence in err that names the limit and the stage to use instead. */
int options_check_n(size_t n, unsigned int block, const char *stage_name,
                    const struct stage_info *stage, char *err, size_t err_len);

/* Parses a whole decimal string into *value (no sign, no spaces, no trailing characters, no
 * overflow past max). Returns 0, or -1. Shared by every numeric option. */
int parse_unsigned(const char *text, uint64_t max, uint64_t *value);

/* ---- input.c: seeded input patterns; median.c: the median of a run's times (CPU only) ------- */
enum pattern {
    PATTERN_SMALL,      /* uniform in [-16, 16]: the default, never all ones */
    PATTERN_FULL_RANGE, /* any int32 bit pattern: the sum wraps, identically on CPU and GPU */
    PATTERN_ALTERNATING, /* +v, -w, +x, ...: cancellation, catches a dropped or doubled element */
    PATTERN_QUARTERS /* float32: +-1/4 on every k-th element (k = ceil(n / 2^24)), 0 between */
};

/* The next 64 random bits from *state, which it advances: splitmix64 (Steele, Lea, Flood 2014), a
 * tiny, well-mixed generator; the same seed gives the same sequence on every machine. */
uint64_t splitmix64(uint64_t *state);

/* The median of ms[0..reps), reps >= 1, which it sorts in place: ms[0] is then the least,
 * ms[reps - 1] the most (median.c). Every reported time is one. */
double sort_median(double *ms, int reps);

/* Fills input[0..n) with `pattern`, reproducibly from `seed` (splitmix64).
 * PATTERN_QUARTERS is the float32 build's exact check: at most 2^24 quarters of either sign, so
 * every partial sum, in any order, is a multiple of 1/4 of at most 2^22 in magnitude, which float
 * holds exactly. Every correct order then gives the exact sum, and a dropped or doubled quarter
 * changes it (FLOAT.md). In the int32 build the quarters are +-1. */
void input_fill(elem_t *input, size_t n, enum pattern pattern, uint64_t seed);

/* ---- gpu.cu: device memory, padding, timing (CUDA events, L2 flush), peak bandwidth ----------
 * Every CUDA error exits with EXIT_NO_GPU (check.h) after naming the call. */
struct timing {
    double median_ms, min_ms, max_ms; /* of the timed repeats, CUDA events, milliseconds */
    int unstable;                     /* repeats whose sum differed from the first run's */
    elem_t lo, hi; /* the smallest and largest sum of all the runs, the warm-up's included */
};

/* Widens [*lo, *hi] to take in sum. A NaN sum stays in, so that no check of lo and hi passes. */
static inline void widen_range(elem_t sum, elem_t *lo, elem_t *hi)
{
#ifdef REDUCE_FLOAT
    if (sum != sum || *lo != *lo) {
        *lo = *hi = sum != sum ? sum : *lo;
        return;
    }
#endif
    if (sum < *lo)
        *lo = sum;
    if (sum > *hi)
        *hi = sum;
}

/* Returns 1 when a usable CUDA device exists; 0 when there is none (no GPU, or no NVIDIA driver at
 * all: tests skip), -1 when there is one but CUDA fails on it (tests fail); with one sentence in
 * why for 0 and -1. */
int gpu_available(char *why, size_t why_len);

/* True when this program's GPU is the CPU model (model/: built with MODEL=cpu): its sums, races
 * and barriers are a GPU's, its times are not, and no output shows them. */
bool gpu_is_model(void);

/* The device's name, theoretical peak bandwidth in GB/s (2 x memory clock x bus width / 8, from
 * cudaDeviceGetAttribute) and L2 size in bytes. */
void gpu_describe(char *name, size_t name_len, double *peak_gbps, size_t *l2_bytes);

/* The device memory free now, in bytes. */
size_t gpu_free_memory(void);

/* Exits with one sentence and EXIT_NO_GPU when the device has not the free memory that
 * gpu_run_stage needs for n elements, or, on the CPU model, when n >= 2^31 (minutes on one core,
 * and host memory); checked before the host spends time making the input. */
void gpu_check_memory(size_t n, unsigned int block);

/* cudaMalloc after checking the device has `bytes` free; otherwise one sentence naming `what`
 * and exit EXIT_NO_GPU (never a crash or a wrong sum). */
void *gpu_alloc(size_t bytes, const char *what);

/* How gpu_flush_l2 empties the L2. READ, the default: a kernel reads twice the L2's size of a
 * buffer written once, so the L2 ends full of clean lines that the next kernel simply drops.
 * MEMSET: a cudaMemsetAsync of that buffer, the way NVBench and llm.c flush (they memset exactly
 * the L2's size); it leaves the L2 full of dirty lines, whose write-back the next kernel pays (a
 * quarter of CUB's time at 2^24 int32 on an H200). Kept only to measure that cost
 * (tools/bench/flush.cu, docs/benchmarks.md). */
enum l2_flush { L2_FLUSH_READ, L2_FLUSH_MEMSET };
void gpu_set_l2_flush(enum l2_flush how);

/* Empties the current device's L2 cache of what earlier work left there, asynchronously on the
 * default stream, by the method above; its buffer (2 x the L2, per device) is allocated the first
 * time, with gpu_alloc's message and EXIT_NO_GPU when it does not fit. Every timing in the
 * repository calls it before each timed repeat (gpu_time, step09). */
void gpu_flush_l2(void);

/* Times `work(ctx)` with CUDA events: one warm-up on the input as it is, then `reps` repeats,
 * each after `prepare(ctx)` (may be NULL) and gpu_flush_l2(), both untimed. Fills median/min/max
 * in ms. */
void gpu_time(void (*prepare)(void *), void (*work)(void *), void *ctx, int reps, struct timing *t);

/* Sums h_input[0..n) with the stage's reduce() on the GPU and returns the sum of the first
 * (warm-up) run in *sum. Copies the input to the device, padding it with the identity to
 * 2 * block elements for a single-block stage; n = 0 gives the identity without a launch.
 * With t != NULL, then times `reps` repeats: before each, an in-place stage gets a fresh copy of
 * its input and the L2 cache is flushed (gpu_flush_l2), both outside the timed region. The first
 * run is bracketed by cudaProfilerStart/Stop, so that `ncu --profile-from-start off` profiles
 * exactly what one reduce() launches. Exits with EXIT_NO_GPU when the device lacks the memory or a
 * CUDA call fails. */
void gpu_run_stage(const elem_t *h_input, size_t n, unsigned int block, int reps, elem_t *sum,
                   struct timing *t);

/* ---- tolerance.c: the float32 build's reference and bound; depth.cu: make accuracy's depth -----
 * FLOAT.md tells the story.
 *
 * A float sum depends on the order of its additions, and each stage adds in its own order, so no
 * stage can be held to another's bits. Higham's bound holds for any order (Accuracy and
 * Stability of Numerical Algorithms, 2nd ed., section 4.2):
 *
 *     |s - exact| <= gamma_d * sum |x_i|,   gamma_d = d*u / (1 - d*u),   u = 2^-24
 *
 * where d is the most rounded additions any one element passes through on its way to the sum:
 * n - 1 in a loop, about log2(n) in a tree. Why: each addition rounds, fl(a + b) =
 * (a + b)(1 + delta) with |delta| <= u, so an element that passes through k of them reaches the
 * sum multiplied by k factors (1 + delta), which differ from 1 by at most gamma_k. The programs
 * and tests know nothing of a stage's order, so they use d = n - 1, true of every order, and add
 * an exact check (PATTERN_QUARTERS). make accuracy measures each stage's own d (measure_depth) to
 * show what its order buys. Adding the identity 0 is exact: the zeros of padding never count.
 */

/* The sum of x[0..n) in double, left to right: the float build's reference. Every float is exact
 * in double, and each addition rounds at 2^-53, 2^29 times finer than float's 2^-24. */
double reduce_double(const elem_t *x, size_t n);

/* sum |x_i| in double: the scale of the bound. */
double sum_abs(const elem_t *x, size_t n);

/* The tolerance on |s - reference| for a float sum s of n elements by an order of depth d, where
 * reference = reduce_double and sum_abs = sum_abs of the same elements:
 *     min(gamma_d, (n - 1) u) * sum_abs
 * plus the double reference's own error and what float atomicAdd's flush of subnormals can lose,
 * both far below float's rounding. Compare in double: the reference is never rounded to float. */
double float_sum_bound(size_t n, size_t d, double sum_abs);

/* The depth d of this stage's order of additions for n elements and `block` threads a block, for
 * float_sum_bound (a count of additions), measured: the stage's own code, compiled on a counting
 * type (depth.h), is run on n elements with this block size, on the device and grid the float stage
 * uses (step00: on the host), padded like gpu_run_stage pads; where atomicAdds land in an unknown
 * order, the worst order counts. For any correct stage ceil(log2 n) <= d <= n - 1; a count too
 * large for 32 bits is reported as n - 1. n = 0 gives 0 without a launch.
 * *order_varies (may be NULL) is set when the sum came through more than one atomicAdd: in float
 * their arrival order, and so the last bits, may change from run to run; otherwise the stage adds
 * in one fixed order and must repeat its bits.
 * Holds n (or the padded count) 8-byte depths while it runs. Exits with one sentence and
 * EXIT_NO_GPU when the device lacks them or a CUDA call fails (EXIT_USAGE when the host lacks
 * them, for step00). make accuracy only: it links the stage's twin (depth.h). */
size_t measure_depth(size_t n, unsigned int block, bool *order_varies);

#ifdef __cplusplus
}
#endif

#endif
