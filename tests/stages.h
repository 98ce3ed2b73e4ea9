/* stages.h: the stages under test, for test programs that run every stage's program.
 *
 * The list comes from the Makefile (-DSTAGE_LIST="step00_cpu step01_atomic_naive ..."), which
 * takes it from the folders: it is written nowhere else. What each stage can take comes from its
 * own program's --stage-info (its struct stage_info, one line of key=value), so no test restates
 * it. */
#ifndef STAGES_H
#define STAGES_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef STAGE_LIST
#error "build with -DSTAGE_LIST=\"step00_cpu step01_...\" (the Makefile does)"
#endif
#ifndef BUILD_DIR
#define BUILD_DIR "build"
#endif

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
        char cmd[256], info[512] = "";
        snprintf(cmd, sizeof cmd, "%s/%s --stage-info 2>&1", BUILD_DIR, s->program);
        FILE *p = popen(cmd, "r");
        cr_assert_not_null(p, "cannot run %s", cmd);
        info[fread(info, 1, sizeof info - 1, p)] = '\0';
        cr_assert_eq(pclose(p), 0, "%s failed: %s", cmd, info);
        int on_gpu, single_block, in_place; /* in_place: the harness's business, not the tests' */
        cr_assert_eq(sscanf(info, "stage=%*s on_gpu=%d single_block=%d in_place=%d fixed_block=%u",
                            &on_gpu, &single_block, &in_place, &s->fixed_block), 4,
                     "%s printed: %s", cmd, info);
        s->on_gpu = on_gpu, s->single_block = single_block;
    }
    cr_assert(n_stages > 0, "STAGE_LIST is empty");
}

/* The index of the stage whose program is `program` ("step05"); fails the test if there is none. */
static inline int stage_index(const char *program)
{
    stages_load();
    for (int s = 0; s < n_stages; ++s)
        if (strcmp(stages[s].program, program) == 0)
            return s;
    cr_assert_fail("no stage %s in STAGE_LIST", program);
    return -1;
}

#endif
