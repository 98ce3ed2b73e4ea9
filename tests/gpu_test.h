/* gpu_test.h: how a Criterion test asks for the GPU.
 * Criterion runs every test in its own process: CUDA is initialised inside the test, never before
 * the runner forks. A test skips only when the machine has no CUDA device, and says so; any other
 * CUDA failure fails it. */
#ifndef GPU_TEST_H
#define GPU_TEST_H

#include <criterion/criterion.h>

#include "harness.h"

static inline void require_gpu(void)
{
    char why[256];
    int usable = gpu_available(why, sizeof why);
    if (usable == 0)
        cr_skip_test("GPU test skipped: %s.", why);
    cr_assert_eq(usable, 1, "%s", why);
}

#endif
