/* flush.cu: what the L2 flush before each timed repeat costs the kernel after it (make flush): the
 * memset flush (L2_FLUSH_MEMSET, harness.h) against gpu_flush_l2's read flush, why:
 * docs/benchmarks.md, "Benchmark and profile". It times the same kernels after each flush, in one
 * process, on the same buffers, for
 * n = 2^20, 2^22, ..., 2^28: CUB's cub::DeviceReduce::Sum, the stage it is linked with (step07),
 * and a device-to-device copy. Writes one CSV row per (kernel, n, flush):
 * gpu,kernel,n,flush,median_ms,gbps,peak_pct (gbps: bytes read once; the copy's counts bytes read
 * and written), and prints a Markdown table. */
#include <cub/device/device_reduce.cuh>
#include <getopt.h>
#include <string.h>

#include "check.h"
#include "harness.h"

struct buffers {
    elem_t *input, *copy, *sum;
    void *temp;
    size_t temp_bytes, n;
};

static void run_stage(void *ctx)
{
    struct buffers *b = (struct buffers *)ctx;
    reduce(b->input, b->n, default_block(&STAGE), b->sum);
}

static void run_cub(void *ctx)
{
    struct buffers *b = (struct buffers *)ctx;
    CUDA_CHECK(cub::DeviceReduce::Sum(b->temp, b->temp_bytes, b->input, b->sum, b->n));
}

static void run_copy(void *ctx)
{
    struct buffers *b = (struct buffers *)ctx;
    CUDA_CHECK(cudaMemcpyAsync(b->copy, b->input, b->n * sizeof(elem_t), cudaMemcpyDeviceToDevice));
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"csv", required_argument, NULL, 'c'},
                                             {NULL, 0, NULL, 0}};
    const char *csv_path = NULL;
    for (int c; (c = getopt_long(argc, argv, "", longopts, NULL)) != -1;)
        csv_path = c == 'c' ? optarg : NULL;
    if (csv_path == NULL || STAGE.single_block || STAGE.in_place || sizeof(elem_t) != 4 ||
        (elem_t)0.5 != 0) {
        fprintf(stderr, "usage: %s --csv FILE (int32 build, linked with a multi-block stage that "
                        "keeps its input)\n", argv[0]);
        return EXIT_USAGE;
    }
    char why[256], gpu[256];
    if (gpu_available(why, sizeof why) != 1) {
        fprintf(stderr, "%s: %s; it needs an NVIDIA GPU.\n", argv[0], why);
        return EXIT_NO_GPU;
    }
    double peak;
    gpu_describe(gpu, sizeof gpu, &peak, NULL);
    const size_t max_n = (size_t)1 << 28;
    struct buffers b = {};
    elem_t *h_input = (elem_t *)malloc(max_n * sizeof(elem_t));
    input_fill(h_input, max_n, PATTERN_SMALL, 1);
    b.input = (elem_t *)gpu_alloc(max_n * sizeof(elem_t), "the input");
    b.copy = (elem_t *)gpu_alloc(max_n * sizeof(elem_t), "the copy's destination");
    b.sum = (elem_t *)gpu_alloc(sizeof(elem_t), "the sum");
    CUDA_CHECK(cudaMemcpy(b.input, h_input, max_n * sizeof(elem_t), cudaMemcpyHostToDevice));
    CUDA_CHECK(cub::DeviceReduce::Sum(NULL, b.temp_bytes, b.input, b.sum, max_n));
    b.temp = gpu_alloc(b.temp_bytes, "CUB's temporary storage");
    FILE *csv = fopen(csv_path, "a");
    if (csv == NULL) {
        fprintf(stderr, "%s: cannot append to %s.\n", argv[0], csv_path);
        return EXIT_USAGE;
    }
    if (ftell(csv) == 0)
        fprintf(csv, "gpu,kernel,n,flush,median_ms,gbps,peak_pct\n");
    printf("%s, medians of 30, the same process. Time in us (%% of the %.0f GB/s peak), after a\n"
           "flush that writes twice the L2 (memset) or reads it (read); the copy in GB/s, bytes"
           " read and written.\n\n"
           "| n | cub, memset | cub, read | %s, memset | %s, read | copy GB/s, memset / read |\n"
           "|---|--:|--:|--:|--:|--:|\n", gpu, peak, STAGE_NAME, STAGE_NAME);
    static const char *method[] = {"memset", "read"};
    struct {
        const char *name;
        void (*work)(void *);
        double bytes_per_element;
    } kernels[] = {{"cub", run_cub, sizeof(elem_t)},
                   {STAGE_NAME, run_stage, sizeof(elem_t)},
                   {"copy", run_copy, 2.0 * sizeof(elem_t)}};
    for (size_t n = (size_t)1 << 20; n <= max_n; n *= 4) {
        b.n = n;
        elem_t ref = reduce_cpu(h_input, n), sum;
        double gbps[3][2], us[3][2];
        for (int k = 0; k < 3; ++k)
            for (int m = 0; m < 2; ++m) {
                struct timing t;
                gpu_set_l2_flush(m == 0 ? L2_FLUSH_MEMSET : L2_FLUSH_READ);
                gpu_time(NULL, kernels[k].work, &b, 30, &t);
                us[k][m] = 1e3 * t.median_ms;
                gbps[k][m] = kernels[k].bytes_per_element * n / (t.median_ms * 1e6);
                fprintf(csv, "%s,%s,%zu,%s,%.5f,%.1f,%.2f\n", gpu, kernels[k].name, n, method[m],
                        t.median_ms, gbps[k][m], 100 * gbps[k][m] / peak);
                CUDA_CHECK(cudaMemcpy(&sum, b.sum, sizeof sum, cudaMemcpyDeviceToHost));
                if (k < 2 && memcmp(&sum, &ref, sizeof sum) != 0) {
                    fprintf(stderr, "%s: %s gave a wrong sum at n = %zu.\n", argv[0],
                            kernels[k].name, n);
                    return EXIT_MISMATCH;
                }
            }
        printf("| 2^%d |", __builtin_ctzll(n));
        for (int k = 0; k < 2; ++k)
            for (int m = 0; m < 2; ++m)
                printf(" %.2f (%.1f%%) |", us[k][m], 100 * gbps[k][m] / peak);
        printf(" %.0f / %.0f |\n", gbps[2][0], gbps[2][1]);
    }
    fclose(csv);
    return EXIT_OK;
}
