/* test_util.h: what several test programs need alike, written once: the length of an array, a
 * command line made printable for a failure message, a .npy file built byte by byte, random
 * numbers from the harness's own generator (splitmix64, common/input.c), a test's input, and how a
 * test asks for the GPU. A parameterized test's cases may be a static array filled at run time:
 * Criterion copies each case into the process that runs it. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The arguments args[0], args[1], ... up to a NULL, each quoted, bytes outside printable ASCII
 * as \xNN: for failure messages. The text lives in a static buffer that the next call reuses. */
static inline const char *show_args(char *const *args)
{
    static char text[4096];
    size_t len = 0;
    for (; *args && len + 8 < sizeof text; ++args) {
        if (len > 0)
            text[len++] = ' ';
        text[len++] = '\'';
        for (const unsigned char *c = (const unsigned char *)*args; *c && len + 8 < sizeof text;
             ++c)
            len += (size_t)snprintf(text + len, 5, *c >= 32 && *c < 127 ? "%c" : "\\x%02x", *c);
        text[len++] = '\'';
    }
    text[len] = '\0';
    return text;
}

/* Builds a .npy file in file[0..cap) as numpy.save does: the magic, version major.minor,
 * header_len (2 bytes in version 1, 4 otherwise), the dict's dict_len bytes (a NUL among them
 * too) padded with spaces and a '\n' to a multiple of 64 bytes, then data_len bytes of data
 * (zeros when data is NULL). Returns the file's length. */
static inline size_t npy_build(unsigned char *file, size_t cap, int major, int minor,
                               const char *dict, size_t dict_len, const void *data, size_t data_len)
{
    size_t len_size = major == 1 ? 2 : 4, pre = 8 + len_size;
    size_t header_len = dict_len + 1 + (64 - (pre + dict_len + 1) % 64) % 64;
    cr_assert_leq(pre + header_len + data_len, cap, "a .npy file of %zu bytes in a %zu-byte buffer",
                  pre + header_len + data_len, cap);
    memcpy(file, "\x93NUMPY", 6);
    file[6] = (unsigned char)major;
    file[7] = (unsigned char)minor;
    for (size_t i = 0; i < len_size; i++)
        file[8 + i] = (unsigned char)(header_len >> (8 * i));
    memset(file + pre, ' ', header_len);
    memcpy(file + pre, dict, dict_len);
    file[pre + header_len - 1] = '\n';
    if (data != NULL)
        memcpy(file + pre + header_len, data, data_len);
    else
        memset(file + pre + header_len, 0, data_len);
    return pre + header_len + data_len;
}

/* A random number in [0, below) from *state, which it advances: splitmix64, so that a seed gives
 * the same numbers on every machine and a failure reproduces. */
static inline uint32_t random_below(uint64_t *state, uint32_t below)
{
    return (uint32_t)((splitmix64(state) >> 32) % below);
}

/* n elements of `pattern` made from `seed` (input_fill), in memory the caller frees. */
static inline elem_t *new_input(size_t n, enum pattern pattern, uint64_t seed)
{
    elem_t *input = malloc(n ? n * sizeof *input : 1);
    cr_assert_not_null(input, "no memory for %zu elements", n);
    input_fill(input, n, pattern, seed);
    return input;
}

/* Says on stderr which sum comes next, in one line of a fixed format, e.g.
 *     case: n = 1025, block = 256, full-range input (seed 1008)
 * so that a case that kills its test before Criterion can say anything (a CUDA error exits, a
 * fault crashes) is the last such line of its test's output: tests/run.sh keeps them in
 * build/test-results/NAME.cases, and make grade names that case (tests/grade.py, case_line). */
static inline void announce_case(size_t n, unsigned int block, const char *input, uint64_t seed)
{
    fprintf(stderr, "case: n = %zu, block = %u, %s input (seed %llu)\n", n, block, input,
            (unsigned long long)seed);
}

/* Criterion runs every test in its own process: CUDA is initialised inside the test, never before
 * the runner forks. A test skips only when the machine has no CUDA device, and says so; any other
 * CUDA failure fails it. */
static inline void require_gpu(void)
{
    char why[256];
    int usable = gpu_available(why, sizeof why);
    if (usable == 0)
        cr_skip_test("GPU test skipped: %s.", why);
    cr_assert_eq(usable, 1, "%s", why);
}

#endif
