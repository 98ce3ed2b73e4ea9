/* stages.h: the stages under test, for test programs that run every stage's program, and how they
 * run one. Include it after defining _GNU_SOURCE (mkstemps, setenv).
 *
 * The list comes from the Makefile (-DSTAGE_LIST="step00_cpu step01_atomic_naive ..."), which
 * takes it from the folders: it is written nowhere else. What each stage can take comes from its
 * own program's --stage-info (its struct stage_info, one line of key=value), so no test restates
 * it. A program runs by fork and exec (no shell, so arguments can hold any byte), its stdout and
 * stderr captured apart, under a 30-second alarm that survives exec: a program that hangs on an
 * input fails the test instead of hanging it. */
#ifndef STAGES_H
#define STAGES_H

#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#ifndef STAGE_LIST
#error "build with -DSTAGE_LIST=\"step00_cpu step01_...\" (the Makefile does)"
#endif
#ifndef BUILD_DIR
#define BUILD_DIR "build"
#endif

/* A command line's arguments, NULL-terminated as run() takes them: LINE("--n", "5"). */
#define LINE(...) ((char *[]){__VA_ARGS__, NULL})

struct result {
    int status; /* the exit status, or -1 when killed by a signal */
    int signal;
    char out[16384], err[16384]; /* the first 16383 bytes of stdout and of stderr (a sanitizer
                                  * report is long) */
};

/* The first len - 1 bytes of a file, NUL-terminated; closes it. */
static inline void slurp(FILE *f, char *buf, size_t len)
{
    rewind(f);
    buf[fread(buf, 1, len - 1, f)] = '\0';
    fclose(f);
}

/* Runs BUILD_DIR/program with args (NULL-terminated); hide_gpus sets CUDA_VISIBLE_DEVICES=-1,
 * which hides every GPU. */
static inline struct result run(const char *program, char *const *args, bool hide_gpus)
{
    char prog[256];
    snprintf(prog, sizeof prog, "%s/%s", BUILD_DIR, program);
    cr_assert(access(prog, X_OK) == 0, "%s is not built", prog);
    char *argv[32] = {prog};
    for (size_t i = 0; args[i] != NULL && i + 2 < COUNT(argv); ++i)
        argv[i + 1] = args[i];
    FILE *out = tmpfile(), *err = tmpfile();
    cr_assert(out != NULL && err != NULL, "tmpfile failed");
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork failed");
    if (pid == 0) {
        dup2(fileno(out), STDOUT_FILENO);
        dup2(fileno(err), STDERR_FILENO);
        if (hide_gpus)
            setenv("CUDA_VISIBLE_DEVICES", "-1", 1);
        alarm(30); /* a pending alarm survives exec: a hang ends in SIGALRM */
        execv(prog, argv);
        _exit(127);
    }
    int status;
    cr_assert(waitpid(pid, &status, 0) == pid);
    struct result r = {.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                       .signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0};
    slurp(out, r.out, sizeof r.out);
    slurp(err, r.err, sizeof r.err);
    return r;
}

/* A fresh file /tmp/reduction-XXXXXX.npy that holds bytes[0..len); returns its path, in a static
 * buffer that the next call reuses. The test unlinks it. */
static inline char *write_file(const void *bytes, size_t len)
{
    static char path[64];
    strcpy(path, "/tmp/reduction-XXXXXX.npy");
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0, "mkstemps failed");
    cr_assert_eq(write(fd, bytes, len), (ssize_t)len);
    close(fd);
    return path;
}

struct stage {
    char name[64];            /* step05_segmented */
    char program[8];          /* step05: BUILD_DIR/step05 */
    bool single_block;        /* takes n <= 2 x block */
    bool on_gpu;              /* needs a CUDA device */
    unsigned int fixed_block; /* not 0: the only --block it takes (its default), as step08 */
};

#define MAX_STAGES 32
static struct stage stages[MAX_STAGES];
static int n_stages;

/* Fills stages[0..n_stages) once: the names from STAGE_LIST, the rest from each --stage-info. */
static inline void stages_load(void)
{
    if (n_stages > 0)
        return;
    char list[] = STAGE_LIST;
    for (char *name = strtok(list, " "); name != NULL; name = strtok(NULL, " ")) {
        cr_assert(n_stages < MAX_STAGES, "more than %d stages", MAX_STAGES);
        struct stage *s = &stages[n_stages++];
        snprintf(s->name, sizeof s->name, "%s", name);
        snprintf(s->program, sizeof s->program, "%.6s", name);
        struct result r = run(s->program, LINE("--stage-info"), false);
        cr_assert_eq(r.status, 0, "%s --stage-info failed: %s", s->program, r.err);
        int on_gpu, single_block, in_place; /* in_place: the harness's business, not the tests' */
        cr_assert_eq(sscanf(r.out, "stage=%*s on_gpu=%d single_block=%d in_place=%d fixed_block=%u",
                            &on_gpu, &single_block, &in_place, &s->fixed_block),
                     4, "%s --stage-info printed: %s", s->program, r.out);
        s->on_gpu = on_gpu, s->single_block = single_block;
    }
    cr_assert(n_stages > 0, "STAGE_LIST is empty");
}

#endif
