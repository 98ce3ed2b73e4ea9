/* test_hostile.c: hostile input through the real programs (build/stepNN), as a user would give it.
 *
 *   - Command lines and .npy files that must be refused: exit status 2, nothing on stdout, one
 *     line on stderr that names the stage, and no CUDA call first. The programs run with
 *     CUDA_VISIBLE_DEVICES=-1, which hides every GPU: a program that touched CUDA before checking
 *     its input would exit 3 ("no CUDA device") instead of 2. So this part runs, and proves the
 *     order, with or without a GPU.
 *   - An n larger than the device's memory: every multi-block GPU stage must check cudaMemGetInfo
 *     before it allocates anything or fills its input (gpu_check_memory), and exit 3 with one
 *     sentence that says "not enough device memory". Skipped without a CUDA device.
 *
 * Each program runs under a 30-second alarm (stages.h: run): one that hangs fails the test. */
#define _GNU_SOURCE /* mkstemps, setenv */
#include <signal.h>
#include <sys/stat.h>

#include "stages.h" /* test_util.h: Criterion, harness.h */

enum which { EVERY_STAGE, SINGLE_BLOCK, MULTI_BLOCK_GPU };

/* Runs each stage of `which` with args, GPUs hidden or not, and expects: exit status `want`
 * (EXIT_USAGE, EXIT_NO_GPU, or -1 for either), nothing on stdout, exactly one line on stderr that
 * holds each of `needles` (NULL-terminated; NULL: none). For a usage error (2) that line starts
 * with the stage's name, as main.c writes it; gpu.cu's sentences (exit 3) have no such prefix. */
static void expect_refused(enum which which, char *const *args, bool hide_gpus, int want,
                           char *const *needles)
{
    const char *line = show_args(args);
    stages_load();
    for (int s = 0; s < n_stages; ++s) {
        const char *prog = stages[s].program;
        if ((which == SINGLE_BLOCK && !stages[s].single_block) ||
            (which == MULTI_BLOCK_GPU && (!stages[s].on_gpu || stages[s].single_block)))
            continue;
        struct result r = run(prog, args, hide_gpus);
        int status = want >= 0 ? want : r.status == EXIT_USAGE ? EXIT_USAGE : EXIT_NO_GPU;
        cr_expect_eq(r.signal, 0, "%s %s: killed by signal %d%s", prog, line, r.signal,
                     r.signal == SIGALRM ? " (hung)" : "");
        cr_expect_eq(r.status, status, "%s %s: exit status %d, expected %d: %s", prog, line,
                     r.status, status, r.err);
        cr_expect_str_empty(r.out, "%s %s: wrote to stdout: %s", prog, line, r.out);
        size_t len = strlen(r.err);
        cr_expect(len > 10 && strchr(r.err, '\n') == r.err + len - 1,
                  "%s %s: stderr is not one line: '%s'", prog, line, r.err);
        for (char *const *needle = needles; needle && *needle; ++needle)
            cr_expect_not_null(strstr(r.err, *needle), "%s %s: no '%s' in: %s", prog, line, *needle,
                               r.err);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "%s: ", stages[s].name);
        cr_expect(status != EXIT_USAGE || strncmp(r.err, prefix, strlen(prefix)) == 0,
                  "%s %s: does not start with '%s': %s", prog, line, prefix, r.err);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Refused before any CUDA call                                                               */

Test(hostile, bad_command_lines_exit_2_before_cuda)
{
    char *const *lines[] = {
        LINE("--n="),
        LINE("--n"),
        LINE("--n", "18446744073709551616"),            /* 2^64 */
        LINE("--n", "1000000000000000000000000000000"), /* 10^30 */
        LINE("--n", "4611686018427387904"),             /* SIZE_MAX / 4 + 1: bytes overflow */
        LINE("--n", "-1"),
        LINE("--n", "+5"),
        LINE("--n", "1e9"),
        LINE("--n", "0x100"),
        LINE("--n", "12 "),
        LINE("--n", " 12"),
        LINE("--n", "\xef\xbc\x95"), /* FULLWIDTH DIGIT FIVE */
        LINE("--n", "\xd9\xa3"),     /* ARABIC-INDIC DIGIT THREE */
        LINE("--n", "\xff\xfe"),     /* not UTF-8 at all */
        LINE("--n", "5", "--n"),     /* the value missing at the end */
        LINE("--n=5", "--n=x"),      /* the last of repeated options is wrong */
        LINE("--reps", "0"),
        LINE("--reps", "100001"),
        LINE("--reps="),
        LINE("--reps", "1.5"),
        LINE("--block", "0"),
        LINE("--block", "48"),
        LINE("--block", "2048"),
        LINE("--block", "-32"),
        LINE("--block", "32k"),
        LINE("--seed", "18446744073709551616"),
        LINE("--seed", "-0"),
        LINE("--input"),
        LINE("--input="),
        LINE("--input", "/nonexistent/input.npy"),
        LINE("--input", "/"),         /* a directory */
        LINE("--input", "/dev/zero"), /* never ends: refused as not a regular file */
        LINE("--n", "5", "--input", "a.npy"),
        LINE("--frobnicate"),
        LINE("--help=1"),
        LINE("-n", "5"),
        LINE("-xy"),
        LINE("stray"),
        LINE(""),
        LINE("--", "--n", "5"),
    };
    for (size_t l = 0; l < COUNT(lines); ++l)
        expect_refused(EVERY_STAGE, lines[l], true, EXIT_USAGE, NULL);
}

/* A single-block stage refuses an n beyond one block, names its limit (its default block: 1024),
 * and says which stage to use. */
Test(hostile, single_block_limit_exit_2_before_cuda)
{
    char *const *past_2048 = LINE("n <= 2048", "step05_segmented");
    expect_refused(SINGLE_BLOCK, LINE("--n", "40000000000"), true, EXIT_USAGE, past_2048);
    expect_refused(SINGLE_BLOCK, LINE("--n", "2049"), true, EXIT_USAGE, past_2048);
    expect_refused(SINGLE_BLOCK, LINE("--block", "32", "--n", "65"), true, EXIT_USAGE,
                   LINE("n <= 64", "step05_segmented"));
}

#ifdef REDUCE_FLOAT
#define DESCR "<f4"
#else
#define DESCR "<i4"
#endif

/* A file with these bytes through --input: refused with one line, before any CUDA call. */
static void expect_file_refused(const void *bytes, size_t len)
{
    char *path = write_file(bytes, len);
    expect_refused(EVERY_STAGE, LINE("--input", path), true, EXIT_USAGE, NULL);
    unlink(path);
}

Test(hostile, bad_npy_files_exit_2_before_cuda)
{
    static const struct {
        const char *dict;
        size_t data_len;
    } files[] = {
        {"{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }", 12},
        {"{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", 24},
        {"{'descr': '" DESCR "', 'fortran_order': True, 'shape': (3,), }", 12},
        {"{'descr': '" DESCR "', 'fortran_order': False, 'shape': (3, 1), }", 12},
        {"{'descr': '" DESCR "', 'fortran_order': False, 'shape': (3,), }", 11},
        {"{'descr': '" DESCR "', 'fortran_order': False, 'shape': (4611686018427387904,), }", 4},
        {"", 0},
    };
    static unsigned char file[512];
    for (size_t f = 0; f < COUNT(files); ++f)
        expect_file_refused(file, npy_build(file, sizeof file, 1, 0, files[f].dict,
                                            strlen(files[f].dict), NULL, files[f].data_len));
    expect_file_refused("", 0);                                   /* an empty file */
    expect_file_refused("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12); /* a 4 GiB header_len */
    expect_file_refused("\x93NUMPY\x01\x00garbage", 15); /* header_len 24935, in 15 bytes */
}

/* A valid .npy file of 2^37 elements (512 GiB, sparse: no disk is used) given to a GPU stage on a
 * machine without a GPU: the program must say so after reading only the header (exit 3), not
 * first try to read 512 GiB (which ended in "out of memory", exit 2). */
Test(hostile, huge_npy_file_without_a_gpu_is_not_read)
{
    const size_t n = (size_t)1 << 37;
    static unsigned char file[512];
    char dict[128];
    snprintf(dict, sizeof dict, "{'descr': '" DESCR "', 'fortran_order': False, 'shape': (%zu,), }",
             n);
    char *path = write_file(file, npy_build(file, sizeof file, 1, 0, dict, strlen(dict), NULL, 0));
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    if (truncate(path, st.st_size + (off_t)(n * sizeof(elem_t))) != 0) {
        unlink(path);
        cr_skip_test("this file system cannot hold a sparse 512 GiB file.");
    }
    expect_refused(MULTI_BLOCK_GPU, LINE("--input", path, "--reps", "1"), true, EXIT_NO_GPU,
                   LINE("no CUDA device")); /* CUDA_VISIBLE_DEVICES=-1: no GPU */
    unlink(path);
}

/* ------------------------------------------------------------------------------------------ */
/* More elements than the device has memory for                                              */

/* 10^13 elements, 4 * 10^13 bytes (36 TiB): beyond any GPU for years. The check comes before the
 * host fills an input of that size, so the test takes milliseconds, not hours. The sentence says
 * what to do: a smaller --n. */
Test(hostile, n_beyond_device_memory_exit_3)
{
    require_gpu();
    expect_refused(MULTI_BLOCK_GPU, LINE("--n", "10000000000000", "--reps", "1"), false,
                   EXIT_NO_GPU, LINE("not enough device memory", "--n"));
}

/* The example, 4 * 10^10 elements = 1.6 * 10^11 bytes = 149 GiB: more than an H100 or H200
 * holds. Only where the device really has less: on a larger one the stage would rightly go on and
 * sum it. */
Test(hostile, n_40_billion_exit_3)
{
    require_gpu();
    size_t free_bytes = gpu_free_memory(); /* this test's own context is small next to 149 GiB */
    if (free_bytes >= (size_t)40000000000 * sizeof(elem_t))
        cr_skip_test("the device has %.0f GiB free: 40000000000 elements fit.",
                     free_bytes / 1073741824.0);
    expect_refused(MULTI_BLOCK_GPU, LINE("--n", "40000000000", "--reps", "1"), false, EXIT_NO_GPU,
                   LINE("not enough device memory", "--n"));
}

/* The largest n the options take, SIZE_MAX / 4: its bytes are 2^64 - 4, and adding the L2 flush
 * buffer to them wraps in size_t. Whatever the memory check makes of it, the program must refuse
 * cleanly in one line, with 3 (device memory) or 2 (host memory), and never crash or start. */
Test(hostile, n_at_the_address_limit_is_refused)
{
    require_gpu();
    char n[32];
    snprintf(n, sizeof n, "%zu", SIZE_MAX / sizeof(elem_t));
    expect_refused(MULTI_BLOCK_GPU, LINE("--n", n, "--reps", "1"), false, -1, LINE("not enough"));
}
