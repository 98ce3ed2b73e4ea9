/* multi_gpu.h: stage 9's two uses of NCCL, one process driving every GPU (multi_gpu.cu).
 * main.cu is the program (build/step09); step09_multi_gpu/test_multi_gpu.c calls these functions
 * directly. */
#ifndef MULTI_GPU_H
#define MULTI_GPU_H

#include <stdbool.h>
#include <stddef.h>

#include "reduce.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MAX_GPUS 64

/* G GPUs (devices 0 .. G-1) and an NCCL communicator on each: what both uses share. GPU g's work
 * goes to its per-thread default stream (cudaStreamPerThread, device g current: multi_gpu.cu).
 * Opaque, so that C code (the tests) includes this without CUDA's or NCCL's headers. */
struct team;

/* The GPUs this process sees (0 when none, or no driver). */
int team_visible(void);

/* Opens a team of `gpus` GPUs, 1 <= gpus <= team_visible(): ncclCommInitAll.
 * NCCL's NVLink multicast (NVLS) stays off unless NCCL_NVLS_ENABLE says otherwise: see README.
 * A CUDA or NCCL error prints the failing call and exits with status 3. */
struct team *team_open(int gpus);
int team_size(const struct team *team);
/* ncclCommFinalize on every communicator, grouped (one thread, several GPUs: the NCCL user guide,
 * "Group Calls"), then ncclCommDestroy on each, then the buffers freed. Errors: exit status 3. */
void team_close(struct team *team);

/* The shard of n elements that GPU g of G holds: [shard_start(n, G, g), shard_start(n, G, g + 1)).
 * Sizes differ by at most one element; n < G leaves some shards empty. */
size_t shard_start(size_t n, int gpus, int g);

/* One array over G GPUs. GPU g sums its shard of x[0..n) with stage 8's reduce(), then
 * ncclAllReduce adds the G partial sums: afterwards every GPU holds the whole sum, and sums[g] is
 * GPU g's copy of it. ms, when not NULL, gets the median time in ms of `reps` runs (host clock from
 * the G launches to every GPU's stream synchronised; the data is on the GPUs already, and every
 * GPU's L2 is flushed before each run, untimed).
 * int32: the exact sum modulo 2^32, as the CPU loop gives it. Errors: exit status 3, as above. */
void multi_gpu_sum(struct team *team, const elem_t *x, size_t n, int reps, elem_t *sums,
                   double *ms);

/* The all-reduce of data-parallel training. Every GPU g holds `count` elements of 4 bytes (int32,
 * or float32 when is_float), v_g[i] an integer in [-16, 16] drawn from (seed, g, i): their sums are
 * exact in float32 too. After ncclAllReduce (out of place, ncclSum) every GPU must hold
 * sum_g v_g[i] for every i: *wrong counts the elements, over all GPUs, that do not (checked on the
 * first call). It uses the team's buffers (team_reserve, grown when too small). Two times, in ms,
 * by the host clock (reps < 1 counts as 1):
 * - *avg_ms, as NVIDIA's nccl-tests time (doc/PERFORMANCE.md): after 5 untimed all-reduces, `reps`
 *   launched back to back, nothing waited for between them, then every GPU's stream synchronised;
 *   the elapsed time / reps. No L2 flush (nccl-tests flush nothing). algbw_gbps and busbw_gbps
 *   take this time.
 * - *latency_ms, one call's latency: the median of `reps` single all-reduces, each from
 *   ncclGroupStart to every GPU's stream synchronised, every GPU's L2 flushed before each, untimed.
 * Errors: exit status 3. */
void multi_gpu_allreduce(struct team *team, size_t count, bool is_float, unsigned long long seed,
                         int reps, double *avg_ms, double *latency_ms, size_t *wrong);

/* Keeps two device buffers of `bytes` on every GPU for multi_gpu_allreduce, until team_close:
 * reserve the largest size first, so that no buffer is freed between timings (a large cudaFree
 * slows what runs in the next milliseconds: stage 8's lesson). Errors: exit status 3. */
void team_reserve(struct team *team, size_t bytes);

/* nccl-tests' two bandwidths (doc/PERFORMANCE.md) for an all-reduce of `bytes` per GPU taking
 * `ms` (the back-to-back average, *avg_ms above), in GB/s (10^9 bytes a second): algorithm
 * bandwidth bytes / time, and bus bandwidth algbw * 2 (G - 1) / G, the rate each link must carry
 * in a ring all-reduce, comparable across G. */
double algbw_gbps(size_t bytes, double ms);
double busbw_gbps(size_t bytes, double ms, int gpus);

#ifdef __cplusplus
}
#endif

#endif
