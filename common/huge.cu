/* huge.cu: the huge inputs of the stage tests, made and summed on the device (huge.h).
 *
 * On an H200 the two tests past 2^31 and 2^32 elements took 9.5 s and 19 s when the host made
 * the input (input_fill, 8 and 16 GiB), summed it (reduce_cpu) and copied it over; made and summed
 * here they took 0.9 s each on an H200 (2026-11-27), their CUDA context included. On the CPU model
 * (model/: g++, no CUB) this file builds and gpu_input_fill runs; gpu_reference_sum does not (the
 * tests skip those sizes there). */
#include "check.h"
#include "huge.h"

#ifndef CUDA_MODEL
#include <cub/device/device_reduce.cuh>
#endif

/* splitmix64's step (Steele, Lea, Flood 2014) as input.c's splitmix64 writes it: the state after
 * i + 1 steps from `seed` is seed + (i + 1) * GOLDEN (mod 2^64), and this is its output. A copy of
 * input.c's constants: the stage tests check that the two agree, element for element, on every
 * pattern (tests/test_stage.c, check_device_input). */
#define GOLDEN 0x9e3779b97f4a7c15ull

static __host__ __device__ inline uint64_t splitmix64_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Element i of `pattern` from its random bits r, as input_fill makes it; every: PATTERN_QUARTERS's
 * k, ceil(n / 2^24) (a quarter on every k-th element, 0 between). */
static __device__ inline elem_t pattern_element(enum pattern pattern, size_t i, uint64_t r,
                                                size_t every)
{
    switch (pattern) {
    case PATTERN_SMALL:
        return (elem_t)((int)(r % 33) - 16);
    case PATTERN_FULL_RANGE:
#ifdef REDUCE_FLOAT
        return (elem_t)((double)(int32_t)(uint32_t)r * 0x1p-8); /* wide, not inf */
#else
        return (elem_t)(int32_t)(uint32_t)r; /* two's complement: any int32 */
#endif
    case PATTERN_ALTERNATING:
        return (elem_t)((i % 2 ? -1 : 1) * (int)(1 + r % 1000));
    case PATTERN_QUARTERS:
#ifdef REDUCE_FLOAT
        return i % every ? 0.0f : r % 2 ? 0.25f : -0.25f;
#else
        return i % every ? 0 : r % 2 ? 1 : -1;
#endif
    }
    return IDENTITY; /* not reached: every pattern is above */
}

static __global__ void fill_kernel(elem_t *input, size_t n, enum pattern pattern, uint64_t seed,
                                   size_t every)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        input[i] =
            pattern_element(pattern, i, splitmix64_mix(seed + (uint64_t)(i + 1) * GOLDEN), every);
}

void gpu_input_fill(elem_t *d_input, size_t n, enum pattern pattern, uint64_t seed)
{
    if (n == 0)
        return;
    size_t every = n > (1u << 24) ? (n - 1) / (1u << 24) + 1 : 1; /* as input.c */
    int device, sm_count;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    const unsigned int block = 256;
    size_t blocks = (n + block - 1) / block, most = 8 * (size_t)sm_count; /* a full device */
    fill_kernel<<<(unsigned int)(blocks < most ? blocks : most), block>>>(d_input, n, pattern, seed,
                                                                          every);
    CUDA_CHECK_LAUNCH();
}

bool gpu_has_reference(void)
{
#ifdef CUDA_MODEL
    return false;
#else
    return true;
#endif
}

/* CUB's temporary storage for n elements, in bytes (its size query: no work, no allocation). */
static size_t cub_temp_bytes(size_t n)
{
    size_t bytes = 0;
#ifndef CUDA_MODEL
    CUDA_CHECK(cub::DeviceReduce::Sum(NULL, bytes, (const elem_t *)NULL, (elem_t *)NULL, n));
#else
    (void)n;
#endif
    return bytes;
}

/* Where the two sums start in the scratch allocation: past CUB's storage, 256-byte aligned. */
static size_t sums_offset(size_t n)
{
    return (cub_temp_bytes(n) + 255) / 256 * 256;
}

/* bytes rounded up to a multiple of 2 MiB. */
static size_t pages(size_t bytes)
{
    const size_t page = (size_t)2 << 20;
    return (bytes + page - 1) / page * page;
}

/* The scratch allocation's size: CUB's storage, then the two sums. */
static size_t scratch_bytes(size_t n)
{
    return sums_offset(n) + 2 * sizeof(elem_t);
}

size_t gpu_huge_bytes(size_t n)
{
    return pages(n * sizeof(elem_t)) + pages(scratch_bytes(n));
}

/* The reference into d_ref (device memory), with `temp` (cub_temp_bytes(n) bytes) for CUB. */
static void reference_into(const elem_t *d_input, size_t n, void *temp, elem_t *d_ref)
{
#ifdef CUDA_MODEL
    (void)d_input, (void)n, (void)temp, (void)d_ref;
    fprintf(stderr, "gpu_reference_sum: the CPU model has no CUB: a GPU takes the reference.\n");
    exit(EXIT_NO_GPU);
#else
    size_t bytes = cub_temp_bytes(n);
    /* size_t items: CUB's 64-bit offsets, the same code at every n, small or huge */
    CUDA_CHECK(cub::DeviceReduce::Sum(temp, bytes, d_input, d_ref, n));
    CUDA_CHECK_LAUNCH();
#endif
}

/* One allocation for CUB's storage and two sums (the reference, then the stage's), which it
 * returns; the sums' address in *d_sums. */
static void *alloc_scratch(size_t n, elem_t **d_sums)
{
    char *scratch = (char *)gpu_alloc(scratch_bytes(n), "the reference's scratch");
    *d_sums = (elem_t *)(scratch + sums_offset(n));
    return scratch;
}

void gpu_reference_sum(const elem_t *d_input, size_t n, elem_t *ref)
{
    elem_t *d_sums;
    void *scratch = alloc_scratch(n, &d_sums);
    reference_into(d_input, n, scratch, d_sums);
    CUDA_CHECK(cudaMemcpy(ref, d_sums, sizeof *ref, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(scratch));
}

void gpu_huge_sum(size_t n, enum pattern pattern, uint64_t seed, unsigned int block, elem_t *sum,
                  elem_t *ref)
{
    elem_t *d_input = (elem_t *)gpu_alloc(n * sizeof(elem_t), "the input"), *d_sums;
    void *scratch = alloc_scratch(n, &d_sums);
    gpu_input_fill(d_input, n, pattern, seed);
    reference_into(d_input, n, scratch, d_sums);
    /* The reference comes home before the stage runs: a stage that writes past its sum or its
     * input cannot change it. */
    CUDA_CHECK(cudaMemcpy(ref, d_sums, sizeof *ref, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemset(d_sums + 1, 0xff, sizeof(elem_t))); /* poison: a stage must write it */
    reduce(d_input, n, block, d_sums + 1);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(sum, d_sums + 1, sizeof *sum, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_input));
    CUDA_CHECK(cudaFree(scratch));
}

void gpu_input_fill_to_host(elem_t *host, size_t n, enum pattern pattern, uint64_t seed,
                            elem_t *ref)
{
    elem_t *d_input = (elem_t *)gpu_alloc(n * sizeof(elem_t), "the input");
    gpu_input_fill(d_input, n, pattern, seed);
    CUDA_CHECK(cudaMemcpy(host, d_input, n * sizeof(elem_t), cudaMemcpyDeviceToHost));
    if (gpu_has_reference())
        gpu_reference_sum(d_input, n, ref);
    CUDA_CHECK(cudaFree(d_input));
}
