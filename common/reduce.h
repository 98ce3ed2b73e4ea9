/* reduce.h: what every stage and the harness share.
 *
 * Element type: int32 with identity 0. int32 sums wrap modulo 2^32 (two's complement) on the GPU;
 * the host code is built with -fwrapv so the CPU reference wraps identically, and the exact sum is
 * defined even for full-range random input. Build with -DREDUCE_FLOAT for float32 (identity 0.0f),
 * and, for make accuracy only, -DREDUCE_DEPTH (below).
 *
 * A stage is one file, stepNN_name/reduce.cu, that defines STAGE and reduce() (step00: its loop
 * reduce_cpu() in step00_cpu/reduce.c; common/cpu_stage.c makes it a stage).
 * The harness (common/) allocates, fills, times and checks; the stage holds only its lesson.
 */
#ifndef REDUCE_H
#define REDUCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(REDUCE_DEPTH)
/* The stage's own code, run on a counting type to measure its depth (depth.h, depth.cu). */
#include "depth.h"
typedef depth elem_t;
typedef depth4 elem4_t;
#define ELEM_NAME "depth"
/* Linked beside the stage's float code, so its C names change: reduce() becomes
 * reduce_depth(), STAGE STAGE_depth (step00: reduce_cpu() reduce_cpu_depth()). The kernels are C++
 * functions of elem_t, whose names differ already. */
#define reduce reduce_depth
#define reduce_cpu reduce_cpu_depth
#define STAGE STAGE_depth
#elif defined(REDUCE_FLOAT)
typedef float elem_t;
#define ELEM_NAME "float32"
#if defined(__CUDACC__) || defined(CUDA_MODEL) /* nvcc, or the CPU model (model/) */
typedef float4 elem4_t; /* four elements, 16 bytes: one load instruction (step07) */
#endif
#else
typedef int elem_t;   /* int32_t is int on every CUDA host; atomicAdd is declared for int */
#define ELEM_NAME "int32"
#if defined(__CUDACC__) || defined(CUDA_MODEL) /* nvcc, or the CPU model (model/) */
typedef int4 elem4_t; /* four elements, 16 bytes: one load instruction (step07) */
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What a stage can take; the harness reads it before any CUDA call. A stage names only what is
 * true of it (`{.on_gpu = true}`): the rest is false. */
struct stage_info {
    bool on_gpu;       /* false for step00: reduce() gets host pointers */
    bool single_block; /* one thread block: n <= 2 * block_size (steps 02-04) */
    bool in_place;     /* overwrites its input: the harness restores it before each repeat */
    unsigned int fixed_block; /* not 0: the only block size it takes (step08: its order of
                               * additions must not depend on it) */
};
extern const struct stage_info STAGE;

/* reduce: *sum = input[0] + ... + input[n-1].
 * input: n elements (device memory for GPU stages). A single-block stage gets its input padded with
 * the identity to 2 * block_size elements by the harness. sum: one element, same memory as input.
 * block_size: threads per block, a power of two in [BLOCK_MIN, BLOCK_MAX]. n >= 1: the harness
 * handles n = 0 (the identity, no launch). Asynchronous on the default stream; errors of the launch
 * are checked, a fault inside the kernel shows at the harness's next synchronisation. */
void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum);

/* The sequential sum from the identity (step00_cpu/reduce.c): the reference every stage is checked
 * with. O(n), one dependence chain. */
elem_t reduce_cpu(const elem_t *input, size_t n);

/* The identity of +: reduce(empty) = IDENTITY, and padding with it changes no sum. */
#define IDENTITY ((elem_t)0)

#define BLOCK_MIN 32u   /* one warp */
#define BLOCK_MAX 1024u /* the most threads a block can have since compute capability 2.0 */

/* Threads per block when --block is not given: the stage's fixed block if it has one, the largest
 * block for a single-block stage (its n is capped at 2 * block), else 256, small enough that
 * several blocks share a multiprocessor. */
static inline unsigned int default_block(const struct stage_info *stage)
{
    return stage->fixed_block ? stage->fixed_block : stage->single_block ? BLOCK_MAX : 256u;
}

/* The elements a stage's kernels read for n: 2 * block for a single-block stage, whose input the
 * harness pads past n with the identity (so n <= 2 * block: options_check_n), else n. */
static inline size_t padded_count(const struct stage_info *stage, size_t n, unsigned int block)
{
    return stage->single_block ? 2 * (size_t)block : n;
}

#ifdef __cplusplus
}
#endif

#endif
