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
 * Each program runs by fork and exec (no shell, so arguments can hold any byte), its stdout and
 * stderr captured apart, under a 30-second alarm that survives exec: a program that hangs on
 * an input fails the test instead of hanging it. */
#define _GNU_SOURCE /* mkstemps, setenv */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_test.h"
#include "harness.h"
#include "npy.h"
#include "stages.h"
#include "test_util.h"

#ifndef BUILD_DIR
#define BUILD_DIR "build"
#endif

#define ALARM_S 30

struct result {
    int status; /* the exit status, or -1 when killed by a signal */
    int signal;
    char out[4096], err[4096];
};

/* The first len - 1 bytes of a file, NUL-terminated. */
static void slurp(int fd, char *buf, size_t len)
{
    lseek(fd, 0, SEEK_SET);
    ssize_t got = read(fd, buf, len - 1);
    buf[got > 0 ? got : 0] = '\0';
}

/* Runs BUILD_DIR/stage with args (NULL-terminated); hide_gpus sets CUDA_VISIBLE_DEVICES=-1. */
static void run(const char *stage, char *const *args, int hide_gpus, struct result *r)
{
    char prog[256], out_path[] = "/tmp/hostile-out-XXXXXX", err_path[] = "/tmp/hostile-err-XXXXXX";
    snprintf(prog, sizeof prog, "%s/%s", BUILD_DIR, stage);
    cr_assert(access(prog, X_OK) == 0, "%s is not built", prog);
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    cr_assert(out_fd >= 0 && err_fd >= 0, "mkstemp failed");
    unlink(out_path);
    unlink(err_path);
    char *argv[32];
    size_t argc = 0;
    argv[argc++] = prog;
    for (; args[argc - 1] != NULL && argc < COUNT(argv) - 1; ++argc)
        argv[argc] = args[argc - 1];
    argv[argc] = NULL;

    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork failed");
    if (pid == 0) {
        dup2(out_fd, STDOUT_FILENO);
        dup2(err_fd, STDERR_FILENO);
        if (hide_gpus)
            setenv("CUDA_VISIBLE_DEVICES", "-1", 1);
        alarm(ALARM_S); /* a pending alarm survives exec: a hang ends in SIGALRM */
        execv(prog, argv);
        _exit(127);
    }
    int status;
    cr_assert(waitpid(pid, &status, 0) == pid);
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    slurp(out_fd, r->out, sizeof r->out);
    slurp(err_fd, r->err, sizeof r->err);
    close(out_fd);
    close(err_fd);
}

/* Exit status `want`, nothing on stdout, exactly one line on stderr; for a usage error (2), that
 * line starts with the stage's name, as main.c writes it. (gpu.cu's device-memory sentence, exit
 * 3, has no such prefix.) */
static void expect_one_line(int s, char *const *args, const struct result *r, int want)
{
    const char *line = show_args(args);
    cr_expect_eq(r->signal, 0, "%s %s: killed by signal %d%s", stages[s].program, line, r->signal,
                 r->signal == SIGALRM ? " (hung)" : "");
    cr_expect_eq(r->status, want, "%s %s: exit status %d, expected %d: %s", stages[s].program, line,
                 r->status, want, r->err);
    cr_expect_str_empty(r->out, "%s %s: wrote to stdout: %s", stages[s].program, line, r->out);
    size_t len = strlen(r->err);
    cr_expect(len > 10 && strchr(r->err, '\n') == r->err + len - 1,
              "%s %s: stderr is not one line: '%s'", stages[s].program, line, r->err);
    if (want != EXIT_USAGE)
        return;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s: ", stages[s].name);
    cr_expect(strncmp(r->err, prefix, strlen(prefix)) == 0, "%s %s: does not start with '%s': %s",
              stages[s].program, line, prefix, r->err);
}

/* ------------------------------------------------------------------------------------------ */
/* Refused before any CUDA call                                                               */

#define LINE(...) ((char *[]){__VA_ARGS__, NULL})

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
    struct result r;
    stages_load();
    for (int s = 0; s < n_stages; ++s)
        for (size_t l = 0; l < COUNT(lines); ++l) {
            run(stages[s].program, lines[l], 1, &r);
            expect_one_line((int)s, lines[l], &r, EXIT_USAGE);
        }
}

/* A single-block stage refuses an n beyond one block, and says which stage to use. */
Test(hostile, single_block_limit_exit_2_before_cuda)
{
    char *const *lines[] = {LINE("--n", "40000000000"), LINE("--n", "2049"),
                            LINE("--block", "32", "--n", "65")};
    struct result r;
    stages_load();
    for (int s = 0; s < n_stages; ++s) {
        if (!stages[s].single_block)
            continue;
        for (size_t l = 0; l < COUNT(lines); ++l) {
            run(stages[s].program, lines[l], 1, &r);
            expect_one_line((int)s, lines[l], &r, EXIT_USAGE);
            cr_expect_not_null(strstr(r.err, "step05_segmented"), "%s: %s", stages[s].program,
                               r.err);
        }
    }
}

/* Hostile .npy files through --input: each refused with one line, before any CUDA call. */
static const char *write_file(const void *bytes, size_t len)
{
    static char path[64];
    strcpy(path, "/tmp/hostile-XXXXXX.npy");
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0, "mkstemps failed");
    cr_assert_eq(write(fd, bytes, len), (ssize_t)len);
    close(fd);
    return path;
}

Test(hostile, bad_npy_files_exit_2_before_cuda)
{
#ifdef REDUCE_FLOAT
#define DESCR "<f4"
#else
#define DESCR "<i4"
#endif
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
    struct result r;
    for (size_t f = 0; f < COUNT(files); ++f) {
        size_t len = npy_build(file, sizeof file, 1, 0, files[f].dict, strlen(files[f].dict), NULL,
                               files[f].data_len);
        const char *path = write_file(file, len);
        char *args[] = {"--input", (char *)path, NULL};
        stages_load();
        for (int s = 0; s < n_stages; ++s) {
            run(stages[s].program, args, 1, &r);
            expect_one_line((int)s, args, &r, EXIT_USAGE);
        }
        unlink(path);
    }
    /* an empty file, and a 4 GiB header_len on a 12-byte file */
    const char *tiny[] = {"", "\x93NUMPY\x02\x00\xff\xff\xff\xff"};
    const size_t tiny_len[] = {0, 12};
    for (size_t f = 0; f < COUNT(tiny); ++f) {
        const char *path = write_file(tiny[f], tiny_len[f]);
        char *args[] = {"--input", (char *)path, NULL};
        stages_load();
        for (int s = 0; s < n_stages; ++s) {
            run(stages[s].program, args, 1, &r);
            expect_one_line((int)s, args, &r, EXIT_USAGE);
        }
        unlink(path);
    }
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
    const char *path =
        write_file(file, npy_build(file, sizeof file, 1, 0, dict, strlen(dict), NULL, 0));
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    if (truncate(path, st.st_size + (off_t)(n * sizeof(elem_t))) != 0) {
        unlink(path);
        cr_skip_test("this file system cannot hold a sparse 512 GiB file.");
    }
    char *args[] = {"--input", (char *)path, "--reps", "1", NULL};
    struct result r;
    stages_load();
    for (int s = 0; s < n_stages; ++s) {
        if (!stages[s].on_gpu || stages[s].single_block)
            continue;
        run(stages[s].program, args, 1, &r); /* CUDA_VISIBLE_DEVICES=-1: no GPU */
        expect_one_line(s, args, &r, EXIT_NO_GPU);
        cr_expect_not_null(strstr(r.err, "no CUDA device"), "%s: %s", stages[s].program, r.err);
    }
    unlink(path);
}

/* ------------------------------------------------------------------------------------------ */
/* More elements than the device has memory for                                              */

/* Each multi-block GPU stage with this n: exit 3, one sentence about device memory. */
static void expect_not_enough_device_memory(const char *n)
{
    char *args[] = {"--n", (char *)n, "--reps", "1", NULL};
    struct result r;
    stages_load();
    for (int s = 0; s < n_stages; ++s) {
        if (!stages[s].on_gpu || stages[s].single_block)
            continue;
        run(stages[s].program, args, 0, &r);
        expect_one_line((int)s, args, &r, EXIT_NO_GPU);
        cr_expect_not_null(strstr(r.err, "not enough device memory"), "%s --n %s: %s",
                           stages[s].program, n, r.err);
        cr_expect_not_null(strstr(r.err, "--n"), "%s --n %s: says not what to do: %s",
                           stages[s].program, n, r.err);
    }
}

/* 10^13 elements, 4 * 10^13 bytes (36 TiB): beyond any GPU for years. The check comes before the
 * host fills an input of that size, so the test takes milliseconds, not hours. */
Test(hostile, n_beyond_device_memory_exit_3)
{
    require_gpu();
    expect_not_enough_device_memory("10000000000000");
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
    expect_not_enough_device_memory("40000000000");
}

/* The largest n the options take, SIZE_MAX / 4: its bytes are 2^64 - 4, and adding the L2 flush
 * buffer to them wraps in size_t. Whatever the memory check makes of it, the program must refuse
 * cleanly in one line, with 3 (device memory) or 2 (host memory), and never crash or start. */
Test(hostile, n_at_the_address_limit_is_refused)
{
    require_gpu();
    char n[32];
    snprintf(n, sizeof n, "%zu", SIZE_MAX / sizeof(elem_t));
    char *args[] = {"--n", n, "--reps", "1", NULL};
    struct result r;
    stages_load();
    for (int s = 0; s < n_stages; ++s) {
        if (!stages[s].on_gpu || stages[s].single_block)
            continue;
        run(stages[s].program, args, 0, &r);
        expect_one_line((int)s, args, &r, r.status == EXIT_USAGE ? EXIT_USAGE : EXIT_NO_GPU);
        cr_expect(strstr(r.err, "not enough"), "%s --n %s: %s", stages[s].program, n, r.err);
    }
}
