/* test_tolerance.c: the float32 error bound of common/tolerance.c, on the CPU (both builds).
 *
 * The GPU tests hold every stage's float sum to float_sum_bound(n, stage_depth(...), sum |x_i|).
 * Here, without a GPU: the bound is sharp enough to mean something and never too small, and
 * stage_depth agrees with each stage's order, replayed on the CPU addition by addition (the same
 * loops as the kernels, threads run one after another, atomicAdds in a shuffled order), counting
 * the rounded additions each element passes through. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static uint64_t rng_state = 12345;
static uint64_t next_random(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A partial sum as the replay sees it: its float value, the most rounded additions any of its
 * elements has passed through, and whether it holds any element at all (padding and a thread
 * with no elements start from the identity: adding it is exact, so it does not count). */
struct node {
    float v;
    size_t depth;
    bool real;
};
static const struct node IDENT = {0.0f, 0, false};

static struct node add(struct node a, struct node b)
{
    struct node r = {a.v + b.v, 0, a.real || b.real};
    if (a.real && b.real)
        r.depth = 1 + (a.depth > b.depth ? a.depth : b.depth);
    else
        r.depth = a.real ? a.depth : b.depth;
    return r;
}

struct input {
    const float *x;
    size_t n;
};
static struct node elem(struct input in, size_t i)
{
    return i < in.n ? (struct node){in.x[i], 0, true} : IDENT;
}

/* The atomicAdd chain: partials added onto the identity in a random order. */
static struct node atomic_chain(struct node *partials, size_t count)
{
    for (size_t i = count; i > 1; --i) { /* Fisher-Yates */
        size_t j = next_random() % i;
        struct node tmp = partials[i - 1];
        partials[i - 1] = partials[j];
        partials[j] = tmp;
    }
    struct node sum = IDENT;
    for (size_t i = 0; i < count; ++i)
        sum = add(sum, partials[i]);
    return sum;
}

/* The shared-memory tree of steps 04-06 over s[0..block). */
static struct node block_tree(struct node *s, unsigned int block)
{
    for (unsigned int stride = block / 2; stride >= 1; stride /= 2)
        for (unsigned int t = 0; t < stride; ++t)
            s[t] = add(s[t], s[t + stride]);
    return s[0];
}

/* warp_reduce of step07: lane l adds lane l + offset's value, all lanes at once (a lane past 31
 * reads its own: only lane 0's result is used). */
static struct node warp_reduce(struct node *lanes)
{
    struct node old[32];
    for (unsigned int offset = 16; offset >= 1; offset /= 2) {
        memcpy(old, lanes, sizeof old);
        for (unsigned int l = 0; l < 32; ++l)
            lanes[l] = add(old[l], old[l + offset < 32 ? l + offset : l]);
    }
    return lanes[0];
}

#define COARSE_FACTOR 2

/* Replays stage `stage` (2..7) on in with `block` threads a block (step07: a grid of at most
 * `resident` blocks). */
static struct node replay(int stage, struct input in, unsigned int block, size_t resident)
{
    size_t n = in.n;
    struct node *s = malloc(2 * (size_t)block * sizeof *s), result = IDENT;
    cr_assert_not_null(s);
    if (stage == 2 || stage == 3) { /* in place over 2 * block elements */
        for (size_t i = 0; i < 2 * (size_t)block; ++i)
            s[i] = elem(in, i);
        if (stage == 2)
            for (unsigned int stride = 1; stride <= block; stride *= 2)
                for (unsigned int t = 0; t < block; ++t) {
                    if (t % stride == 0)
                        s[2 * t] = add(s[2 * t], s[2 * t + stride]);
                }
        else
            for (unsigned int stride = block; stride >= 1; stride /= 2)
                for (unsigned int t = 0; t < stride; ++t)
                    s[t] = add(s[t], s[t + stride]);
        result = s[0];
    } else if (stage == 4) {
        for (unsigned int t = 0; t < block; ++t)
            s[t] = add(elem(in, t), elem(in, t + block));
        result = block_tree(s, block);
    } else if (stage == 5 || stage == 6) {
        size_t tiles = stage == 5 ? 2 : COARSE_FACTOR * 2, segment_size = tiles * block;
        size_t blocks = (n + segment_size - 1) / segment_size;
        struct node *partials = malloc(blocks * sizeof *partials);
        for (size_t b = 0; b < blocks; ++b) {
            for (unsigned int t = 0; t < block; ++t) {
                size_t i = b * segment_size + t;
                if (stage == 5) {
                    s[t] = add(elem(in, i), elem(in, i + block));
                } else {
                    s[t] = IDENT;
                    for (size_t tile = 0; tile < tiles; ++tile)
                        s[t] = add(s[t], elem(in, i + tile * block));
                }
            }
            partials[b] = block_tree(s, block);
        }
        result = atomic_chain(partials, blocks);
        free(partials);
    } else if (stage == 7) {
        size_t n4 = n / 4, step = COARSE_FACTOR * 2 * (size_t)block;
        size_t segments = (n + step * 4 - 1) / (step * 4);
        size_t grid = segments < resident ? segments : resident;
        struct node *partials = malloc(grid * sizeof *partials),
                    *threads = malloc(block * sizeof *threads);
        for (size_t b = 0; b < grid; ++b) {
            for (unsigned int t = 0; t < block; ++t) {
                struct node partial = IDENT;
                for (size_t segment = step * b; segment < n4; segment += step * grid)
                    for (unsigned int tile = 0; tile < COARSE_FACTOR * 2; ++tile) {
                        size_t v = segment + t + tile * block;
                        if (v < n4) /* partial += v.x + v.y + v.z + v.w */
                            partial =
                                add(partial, add(add(add(elem(in, 4 * v), elem(in, 4 * v + 1)),
                                                     elem(in, 4 * v + 2)),
                                                 elem(in, 4 * v + 3)));
                    }
                if (b == 0 && t < n % 4)
                    partial = add(partial, elem(in, 4 * n4 + t));
                threads[t] = partial;
            }
            struct node warp_sums[32], lanes[32];
            for (unsigned int w = 0; w < block / 32; ++w)
                warp_sums[w] = warp_reduce(threads + 32 * w);
            for (unsigned int l = 0; l < 32; ++l)
                lanes[l] = l < block / 32 ? warp_sums[l] : IDENT;
            partials[b] = warp_reduce(lanes);
        }
        result = atomic_chain(partials, grid);
        free(partials);
        free(threads);
    }
    free(s);
    return result;
}

static const char *NAMES[] = {"step00", "step01", "step02", "step03",
                              "step04", "step05", "step06", "step07"};

/* The replay's sum within the bound that stage_depth gives, and its depth no more than that. */
static void check_replay(int stage, const float *x, size_t n, unsigned int block, size_t resident,
                         bool exact_depth)
{
    double ref = 0, scale = 0;
    for (size_t i = 0; i < n; ++i) {
        ref += x[i];
        scale += fabs((double)x[i]);
    }
    struct node r = replay(stage, (struct input){x, n}, block, resident);
    size_t d = stage_depth(NAMES[stage], n, block, resident);
    cr_expect(r.depth <= d,
              "%s, n = %zu, block %u: an element passes through %zu additions, "
              "stage_depth says %zu",
              NAMES[stage], n, block, r.depth, d);
    if (exact_depth)
        cr_expect_eq(r.depth, d, "%s, n = %zu, block %u: depth %zu, stage_depth says %zu",
                     NAMES[stage], n, block, r.depth, d);
    double bound = float_sum_bound(n, d, scale);
    cr_expect(fabs((double)r.v - ref) <= bound,
              "%s, n = %zu, block %u: sum %.9g, exact %.17g, "
              "bound %.3g",
              NAMES[stage], n, block, (double)r.v, ref, bound);
}

static float *uniform(size_t n) /* uniform in [0, 1), 24 bits each */
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; ++i)
        x[i] = (float)(next_random() >> 40) * 0x1p-24f;
    return x;
}

static float *wide(size_t n) /* both signs, magnitudes from 2^-20 to 2^20 */
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; ++i) {
        uint64_t r = next_random();
        x[i] = ldexpf((float)(r >> 40) * 0x1p-24f, (int)(r % 41) - 20) * (r & (1u << 20) ? -1 : 1);
    }
    return x;
}

static const unsigned int BLOCKS[] = {32, 64, 256, 1024};

Test(tolerance, single_block_stages_match_their_depth)
{
    for (size_t b = 0; b < 4; ++b) {
        unsigned int block = BLOCKS[b];
        float *x = uniform(2 * block), *y = wide(2 * block);
        for (int stage = 2; stage <= 4; ++stage) {
            check_replay(stage, x, 2 * block, block, 0, true); /* full: exactly log2(2 block) */
            check_replay(stage, y, 2 * block, block, 0, true);
            check_replay(stage, x, block + 3, block, 0, false);
            check_replay(stage, y, 5, block, 0, false);
        }
        /* steps 03 and 04 add in one order: the same bits */
        struct node r3 = replay(3, (struct input){y, 2 * block - 1}, block, 0);
        struct node r4 = replay(4, (struct input){y, 2 * block - 1}, block, 0);
        cr_expect(memcmp(&r3.v, &r4.v, sizeof r3.v) == 0, "block %u: %.9g vs %.9g", block,
                  (double)r3.v, (double)r4.v);
        free(x);
        free(y);
    }
}

Test(tolerance, multi_block_stages_match_their_depth)
{
    for (size_t b = 0; b < 4; ++b) {
        unsigned int block = BLOCKS[b];
        size_t full = 16 * (size_t)block * 8; /* whole segments for steps 05, 06 and 07 */
        float *x = uniform(full + 7), *y = wide(full + 7);
        for (int stage = 5; stage <= 7; ++stage) {
            /* step07 on a grid of 8 blocks: each walks several segments */
            check_replay(stage, x, full, block, 8, true);
            check_replay(stage, y, full, block, 8, true);
            check_replay(stage, x, full + 7, block, 8, false);
            check_replay(stage, y, full / 3 + 1, block, 5, false);
            check_replay(stage, y, 3, block, 5, false);
        }
        free(x);
        free(y);
    }
}

/* The sequential loop's bound is sharp: 2^24 then m ones. Each 2^24 + 1 rounds back to 2^24
 * (a tie, to even), so all m ones are lost: the error is m, and the bound (n - 1) u sum |x| =
 * m 2^-24 (2^24 + m) = m + m^2 2^-24 is barely more. */
Test(tolerance, the_loop_bound_is_sharp)
{
    const size_t m = 1000, n = m + 1;
    float *x = malloc(n * sizeof *x);
    x[0] = 0x1p24f;
    double scale = 0x1p24;
    for (size_t i = 1; i < n; ++i) {
        x[i] = 1.0f;
        scale += 1;
    }
    float s = 0;
    for (size_t i = 0; i < n; ++i)
        s += x[i];
    cr_expect_eq(s, 0x1p24f, "the ones were not lost: %.9g", (double)s);
    double bound = float_sum_bound(n, stage_depth("step00", n, 256, 0), scale);
    double error = 0x1p24 + (double)m - s;
    cr_expect(error <= bound && bound < 1.001 * error, "error %.9g, bound %.9g", error, bound);
    free(x);
}

Test(tolerance, depth_of_each_stage)
{
    size_t n = (size_t)1 << 24;
    cr_expect_eq(stage_depth("step00_cpu", n, 256, 0), n - 1);
    cr_expect_eq(stage_depth("step01", n, 256, 0), n - 1);
    cr_expect_eq(stage_depth("step02", 2048, 1024, 0), 11);
    cr_expect_eq(stage_depth("step03", 2048, 1024, 0), 11);
    cr_expect_eq(stage_depth("step04_smem", 2048, 1024, 0), 11);
    cr_expect_eq(stage_depth("step05", n, 256, 0), 1 + 8 + (32768 - 1)); /* 2^24 / 512 blocks */
    cr_expect_eq(stage_depth("step06", n, 256, 0), 3 + 8 + (16384 - 1)); /* 2^24 / 1024 blocks */
    /* 132 multiprocessors x 2048 threads / 256 = 1056 blocks over 4096 segments: 4 segments,
     * 16 vectors a thread, (3 + 15) + 5 + log2(256 / 32) + 1055 */
    cr_expect_eq(stage_depth("step07", n, 256, 1056), 18 + 5 + 3 + 1055);
    cr_expect_eq(stage_depth("step07", n, 256, 0), 3 + 4 * 4096 - 1 + 5 + 3); /* unknown: 1 block */
    cr_expect_eq(stage_depth("step05", 1, 256, 0), 0);  /* one element: no addition */
    cr_expect_eq(stage_depth("step04", 3, 1024, 0), 2); /* never past n - 1 */
    cr_expect_eq(stage_depth("nonsense", 100, 256, 0), 99);
    cr_expect(stage_order_varies("step01") && stage_order_varies("step05_segmented") &&
              stage_order_varies("step06") && stage_order_varies("step07"));
    cr_expect(!stage_order_varies("step00") && !stage_order_varies("step02") &&
              !stage_order_varies("step03") && !stage_order_varies("step04_smem"));
}

Test(tolerance, bound_values)
{
    cr_expect_eq(float_sum_bound(0, 0, 0), 0);
    /* one element, no addition: only the (tiny) terms for the double reference remain */
    cr_expect(float_sum_bound(1, 0, 1.0) < 1e-14);
    /* 11 levels: gamma_11 = 11 u / (1 - 11 u) */
    double g = 11 * 0x1p-24 / (1 - 11 * 0x1p-24);
    double b = float_sum_bound(2048, 11, 1000.0);
    cr_expect(b >= g * 1000 && b < g * 1000 * 1.0001, "bound %.17g, gamma_11 * 1000 = %.17g", b,
              g * 1000);
    /* past d u >= 1 gamma is undefined: (n - 1) u takes over */
    size_t n = ((size_t)1 << 25) + 1;
    cr_expect(fabs(float_sum_bound(n, n - 1, 1.0) - 2.0) < 1e-6);
}
