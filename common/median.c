/* median.c: the one median behind every time the repository reports (CPU only): the stages'
 * (gpu_time, and main.c's for step00) and stage 9's. */
#include "harness.h"

#include <stdlib.h>

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sort_median(double *ms, int reps)
{
    qsort(ms, reps, sizeof *ms, ascending);
    return reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
}
