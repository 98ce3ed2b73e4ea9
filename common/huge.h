/* huge.h: the inputs past 2^31 and 2^32 elements of the stage tests (tests/test_stage.c), made and
 * summed on the device, so that no host buffer of 8 or 16 GiB is filled, summed and copied
 * (huge.cu). Linked into the test programs only. Every CUDA error exits with EXIT_NO_GPU after
 * naming the call (check.h), as in gpu.cu. */
#ifndef HUGE_H
#define HUGE_H

#include "harness.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes into d_input[0..n) (device memory) the very numbers that input_fill(input, n, pattern,
 * seed) writes on the host, bit for bit: splitmix64 is counter-based, its state after i + 1 steps
 * is seed + (i + 1) * 0x9e3779b97f4a7c15, so element i is made from its own index alone, by one
 * thread of a grid-stride loop. Asynchronous on the default stream; n = 0 launches nothing. */
void gpu_input_fill(elem_t *d_input, size_t n, enum pattern pattern, uint64_t seed);

/* Whether gpu_reference_sum can run here: false on the CPU model (no CUB there). */
bool gpu_has_reference(void);

/* The bytes of device memory that gpu_huge_sum needs for n elements: the input, and CUB's
 * temporary storage (none on the CPU model) with the two sums in one allocation, each rounded up
 * to a multiple of 2 MiB, the page in which device memory is mapped, so that a check of the free
 * memory against it does not fall a page short. No host memory. */
size_t gpu_huge_bytes(size_t n);

/* The reference sum of d_input[0..n) (device memory, n >= 1), by cub::DeviceReduce::Sum, into
 * *ref; it waits for the sum. It equals step00's loop (reduce_cpu) on every input the tests give
 * it: int32 adds modulo 2^32 on the GPU as reduce_cpu does (-fwrapv), and that addition is
 * associative and commutative, so every order gets the same sum; a float32 sum of quarters
 * (PATTERN_QUARTERS) is exact in every order. Exits with one sentence and EXIT_NO_GPU on the
 * CPU model (gpu_has_reference). */
void gpu_reference_sum(const elem_t *d_input, size_t n, elem_t *ref);

/* The check of one huge n: makes n elements of `pattern` from `seed` on the device
 * (gpu_input_fill), takes their reference sum (gpu_reference_sum) into *ref, then the stage's
 * reduce() of them with `block` threads a block into *sum (its sum poisoned with all-one bits
 * before, as gpu_run_stage does). For multi-block GPU stages: no padding, and the reference is
 * taken before an in-place stage could overwrite the input. Needs gpu_huge_bytes(n) of device
 * memory (gpu_alloc's sentence and EXIT_NO_GPU otherwise); no host memory. n >= 1. */
void gpu_huge_sum(size_t n, enum pattern pattern, uint64_t seed, unsigned int block, elem_t *sum,
                  elem_t *ref);

/* For checking the two above at a small n against input_fill and reduce_cpu: the device's n
 * elements of `pattern` from `seed` copied into host[0..n), and, where gpu_has_reference, their
 * reference sum into *ref (left as it is on the CPU model). n >= 1. */
void gpu_input_fill_to_host(elem_t *host, size_t n, enum pattern pattern, uint64_t seed,
                            elem_t *ref);

#ifdef __cplusplus
}
#endif

#endif
