/* test_options.c: the command line of every stage program (common/options.c), CPU only.
 *
 * options_parse starts from the stage's defaults, takes each option in both the "--n 5" and the
 * "--n=5" form, and refuses everything else with EXIT_USAGE and one sentence that names the
 * option. Single-block stages (02-04) refuse n > 2 * block and point to step05_segmented.
 * options_parse resets getopt, so a test may parse several command lines. */
#define _GNU_SOURCE /* open_memstream */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Two stages as the harness sees them: one that takes any n, one that works in a single block. */
static const struct stage_info MULTI = {.on_gpu = true};
static const struct stage_info SINGLE = {.on_gpu = true, .single_block = true, .in_place = true};
#define MULTI_NAME "step05_segmented"
#define SINGLE_NAME "step02_blocked"

static char err[512];

static const char *name_of(const struct stage_info *stage)
{
    return stage == &SINGLE ? SINGLE_NAME : MULTI_NAME;
}

/* Parses argv (NULL-terminated, argv[0] = "prog") for `stage`; --help goes to stdout. */
static int parse_argv(const struct stage_info *stage, struct options *opt, char **argv)
{
    int argc = 0;
    while (argv[argc] != NULL)
        ++argc;
    memset(opt, 0xA5, sizeof *opt); /* garbage: every field must be set by the parse */
    err[0] = '\0';
    return options_parse(argc, argv, name_of(stage), stage, opt, stdout, err, sizeof err);
}

/* PARSE(&MULTI, &opt, "--n", "100"): the command line "prog --n 100". */
#define PARSE(stage, opt, ...) parse_argv((stage), (opt), (char *[]){"prog", __VA_ARGS__, NULL})

/* err holds one sentence: not empty, not cut off, one line, ending with a full stop. */
static void expect_one_sentence(const char *what)
{
    size_t len = strlen(err);
    cr_expect_gt(len, 0, "%s: empty error message", what);
    cr_expect_lt(len, sizeof err - 1, "%s: error message cut off: %s", what, err);
    cr_expect_null(strchr(err, '\n'), "%s: error message has a line break: %s", what, err);
    if (len > 0)
        cr_expect_eq(err[len - 1], '.', "%s: error message is not a sentence: %s", what, err);
}

/* The command line is refused with EXIT_USAGE and one sentence that contains `word`. */
#define EXPECT_USAGE(stage, word, ...)                                                             \
    do {                                                                                           \
        struct options o_;                                                                         \
        int rc_ = PARSE(stage, &o_, __VA_ARGS__);                                                  \
        cr_expect_eq(rc_, EXIT_USAGE, "%s was accepted (returned %d)", #__VA_ARGS__, rc_);         \
        expect_one_sentence(#__VA_ARGS__);                                                         \
        cr_expect_not_null(strstr(err, (word)), "%s: message does not name '%s': %s",              \
                           #__VA_ARGS__, (word), err);                                             \
    } while (0)

/* The command line is accepted. */
#define EXPECT_OK(stage, opt, ...)                                                                 \
    do {                                                                                           \
        int rc_ = PARSE(stage, opt, __VA_ARGS__);                                                  \
        cr_assert_eq(rc_, 0, "%s was refused (%d): %s", #__VA_ARGS__, rc_, err);                   \
    } while (0)

/* ------------------------------------------------------------------------------------------ */
/* Defaults                                                                                   */

Test(options, defaults_multi_block)
{
    struct options opt;
    char *argv[] = {"prog", NULL};
    int rc = parse_argv(&MULTI, &opt, argv);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect_eq(opt.n, DEFAULT_N);
    cr_expect_eq(opt.n, (size_t)1 << 24);
    cr_expect_eq(opt.seed, 1);
    cr_expect_eq(opt.reps, DEFAULT_REPS);
    cr_expect_eq(opt.reps, 20);
    cr_expect_eq(opt.block, 256u);
    cr_expect_null(opt.input_path);
}

Test(options, defaults_single_block)
{
    struct options opt;
    char *argv[] = {"prog", NULL};
    int rc = parse_argv(&SINGLE, &opt, argv);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect_eq(opt.n, 2048, "n = %zu: a single-block stage defaults to 2 * block", opt.n);
    cr_expect_eq(opt.seed, 1);
    cr_expect_eq(opt.reps, DEFAULT_REPS);
    cr_expect_eq(opt.block, 1024u);
    cr_expect_null(opt.input_path);

    /* The default n follows --block, not the stage's default block. */
    EXPECT_OK(&SINGLE, &opt, "--block", "256");
    cr_expect_eq(opt.block, 256u);
    cr_expect_eq(opt.n, 512, "n = %zu with --block 256", opt.n);
    EXPECT_OK(&SINGLE, &opt, "--block=32");
    cr_expect_eq(opt.n, 64, "n = %zu with --block 32", opt.n);
}

/* --block changes nothing else on a multi-block stage: n stays 2^24. */
Test(options, block_does_not_change_default_n_multi_block)
{
    struct options opt;
    EXPECT_OK(&MULTI, &opt, "--block", "32");
    cr_expect_eq(opt.block, 32u);
    cr_expect_eq(opt.n, DEFAULT_N);
}

/* Each parse starts afresh: nothing carries over from the previous command line. */
Test(options, parses_are_independent)
{
    struct options opt;
    EXPECT_OK(&MULTI, &opt, "--n", "5", "--seed", "9", "--reps", "3", "--block", "64");
    cr_expect_eq(opt.n, 5);
    EXPECT_USAGE(&MULTI, "--fast", "--fast");
    char *argv[] = {"prog", NULL};
    cr_assert_eq(parse_argv(&MULTI, &opt, argv), 0, "%s", err);
    cr_expect_eq(opt.n, DEFAULT_N);
    cr_expect_eq(opt.seed, 1);
    cr_expect_eq(opt.reps, DEFAULT_REPS);
    cr_expect_eq(opt.block, 256u);
    cr_expect_null(opt.input_path);
}

/* ------------------------------------------------------------------------------------------ */
/* Valid values                                                                               */

Test(options, n_both_forms)
{
    struct options opt;
    EXPECT_OK(&MULTI, &opt, "--n", "5");
    cr_expect_eq(opt.n, 5);
    EXPECT_OK(&MULTI, &opt, "--n=5");
    cr_expect_eq(opt.n, 5);
    EXPECT_OK(&MULTI, &opt, "--n", "100");
    cr_expect_eq(opt.n, 100);
    EXPECT_OK(&MULTI, &opt, "--n", "0"); /* the identity: allowed */
    cr_expect_eq(opt.n, 0);
    EXPECT_OK(&MULTI, &opt, "--n", "1");
    cr_expect_eq(opt.n, 1);
    EXPECT_OK(&MULTI, &opt, "--n", "007");
    cr_expect_eq(opt.n, 7);
    EXPECT_OK(&MULTI, &opt, "--n", "16777216");
    cr_expect_eq(opt.n, (size_t)1 << 24);
    EXPECT_OK(&MULTI, &opt, "--n", "4294967295");
    cr_expect_eq(opt.n, (size_t)UINT32_MAX);
    /* The other options keep their defaults. */
    cr_expect_eq(opt.seed, 1);
    cr_expect_eq(opt.reps, DEFAULT_REPS);
    cr_expect_eq(opt.block, 256u);
}

#if SIZE_MAX > UINT32_MAX
Test(options, n_past_32_bits)
{
    struct options opt;
    EXPECT_OK(&MULTI, &opt, "--n", "5000000000");
    cr_expect_eq(opt.n, (size_t)5000000000ull);
    EXPECT_OK(&MULTI, &opt, "--n=4294967296");
    cr_expect_eq(opt.n, (size_t)1 << 32);
    EXPECT_OK(&MULTI, &opt, "--n", "8589934592");
    cr_expect_eq(opt.n, (size_t)1 << 33);
}
#endif

/* The largest n whose bytes the machine can address is taken; one more is refused. */
Test(options, n_at_the_address_limit)
{
    struct options opt;
    char max[32], over[32];
    size_t limit = SIZE_MAX / sizeof(elem_t);
    snprintf(max, sizeof max, "%zu", limit);
    snprintf(over, sizeof over, "%llu", (unsigned long long)limit + 1);
    EXPECT_OK(&MULTI, &opt, "--n", max);
    cr_expect_eq(opt.n, limit);
    EXPECT_USAGE(&MULTI, "--n", "--n", over);
}

Test(options, seed)
{
    struct options opt;
    EXPECT_OK(&MULTI, &opt, "--seed", "0");
    cr_expect_eq(opt.seed, 0);
    EXPECT_OK(&MULTI, &opt, "--seed=42");
    cr_expect_eq(opt.seed, 42);
    EXPECT_OK(&MULTI, &opt, "--seed", "4294967296");
    cr_expect_eq(opt.seed, (uint64_t)1 << 32);
    EXPECT_OK(&MULTI, &opt, "--seed", "18446744073709551615");
    cr_expect_eq(opt.seed, UINT64_MAX);
    cr_expect_eq(opt.n, DEFAULT_N);
}

Test(options, reps)
{
    struct options opt;
    EXPECT_OK(&MULTI, &opt, "--reps", "1");
    cr_expect_eq(opt.reps, 1);
    EXPECT_OK(&MULTI, &opt, "--reps=7");
    cr_expect_eq(opt.reps, 7);
    EXPECT_OK(&MULTI, &opt, "--reps", "100000");
    cr_expect_eq(opt.reps, MAX_REPS);
}

Test(options, block)
{
    static const char *const ok[] = {"32", "64", "128", "256", "512", "1024"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i) {
        struct options opt;
        EXPECT_OK(&MULTI, &opt, "--block", (char *)ok[i]);
        cr_expect_eq(opt.block, (unsigned)atoi(ok[i]));
        EXPECT_OK(&SINGLE, &opt, "--block", (char *)ok[i]);
        cr_expect_eq(opt.block, (unsigned)atoi(ok[i]));
        cr_expect_eq(opt.n, 2 * (size_t)opt.block);
    }
    struct options opt;
    EXPECT_OK(&MULTI, &opt, "--block=128");
    cr_expect_eq(opt.block, 128u);
}

Test(options, input_path)
{
    struct options opt;
    EXPECT_OK(&MULTI, &opt, "--input", "data.npy");
    cr_expect_str_eq(opt.input_path, "data.npy");
    EXPECT_OK(&MULTI, &opt, "--input=x/y.npy", "--seed", "3");
    cr_expect_str_eq(opt.input_path, "x/y.npy");
    cr_expect_eq(opt.seed, 3);
}

Test(options, all_together_any_order)
{
    struct options opt;
    EXPECT_OK(&MULTI, &opt, "--block", "512", "--reps=3", "--seed", "77", "--n", "1000");
    cr_expect_eq(opt.n, 1000);
    cr_expect_eq(opt.seed, 77);
    cr_expect_eq(opt.reps, 3);
    cr_expect_eq(opt.block, 512u);
    cr_expect_null(opt.input_path);
}

/* ------------------------------------------------------------------------------------------ */
/* --help                                                                                     */

static void check_help(const struct stage_info *stage, const char *default_n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    char *argv[] = {"prog", "--help", NULL};
    struct options opt;
    err[0] = '\0';
    int rc = options_parse(2, argv, name_of(stage), stage, &opt, out, err, sizeof err);
    fclose(out);
    cr_expect_eq(rc, 1, "--help returned %d", rc);
    cr_expect_str_empty(err, "--help wrote an error: %s", err);
    cr_assert_not_null(text);
    for (const char *const *w =
             (const char *const[]){"usage:", "--n", "--input", "--seed", "--reps", "--block", NULL};
         *w; ++w)
        cr_expect_not_null(strstr(text, *w), "usage lacks '%s':\n%s", *w, text);
    cr_expect_not_null(strstr(text, name_of(stage)), "usage lacks the stage name:\n%s", text);
    cr_expect_not_null(strstr(text, default_n), "usage lacks the default n %s:\n%s", default_n,
                       text);
    free(text);
}

Test(options, help_multi_block)
{
    check_help(&MULTI, "16777216");
}
Test(options, help_single_block)
{
    check_help(&SINGLE, "2048");
}

/* --help stops the parse: what follows it is not looked at. */
Test(options, help_wins_over_later_errors)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    char *argv[] = {"prog", "--seed", "4", "--help", "--fast", NULL};
    struct options opt;
    int rc = options_parse(5, argv, MULTI_NAME, &MULTI, &opt, out, err, sizeof err);
    fclose(out);
    cr_expect_eq(rc, 1);
    cr_expect_not_null(strstr(text, "--block"));
    free(text);
}

/* ------------------------------------------------------------------------------------------ */
/* Errors: EXIT_USAGE and one sentence that names the option                                  */

Test(options, bad_n)
{
    static const char *const bad[] = {
        "", "-1", "+5", " 5", "5 ", "abc", "12x", "1e6", "0x10", "1.5", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        EXPECT_USAGE(&MULTI, "--n", "--n", (char *)bad[i]);
        cr_expect_not_null(strstr(err, bad[i]), "message does not quote '%s': %s", bad[i], err);
        char eq[64];
        snprintf(eq, sizeof eq, "--n=%s", bad[i]);
        EXPECT_USAGE(&MULTI, "--n", eq);
    }
    EXPECT_USAGE(&MULTI, "too large", "--n", "99999999999999999999999"); /* says why */
    EXPECT_USAGE(&MULTI, "too large", "--n", "4611686018427387904");     /* 2^62 int32s */
    EXPECT_USAGE(&MULTI, "whole number", "--n", "12x");
}

Test(options, bad_seed)
{
    EXPECT_USAGE(&MULTI, "--seed", "--seed", "18446744073709551616"); /* 2^64 */
    EXPECT_USAGE(&MULTI, "--seed", "--seed", "99999999999999999999");
    EXPECT_USAGE(&MULTI, "--seed", "--seed", "-1");
    EXPECT_USAGE(&MULTI, "--seed", "--seed", "");
    EXPECT_USAGE(&MULTI, "--seed", "--seed", "seven");
    EXPECT_USAGE(&MULTI, "--seed", "--seed=0x1");
}

Test(options, bad_reps)
{
    static const char *const bad[] = {"0", "100001", "-3", "", "2.5", "many"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        EXPECT_USAGE(&MULTI, "--reps", "--reps", (char *)bad[i]);
    EXPECT_USAGE(&MULTI, "100000", "--reps", "0"); /* names the limit */
}

Test(options, bad_block)
{
    static const char *const bad[] = {"48",   "16", "2048", "0",  "256k", "",
                                      "-256", "1",  "31",   "33", "1023", "4096"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        EXPECT_USAGE(&MULTI, "--block", "--block", (char *)bad[i]);
        EXPECT_USAGE(&SINGLE, "--block", "--block", (char *)bad[i]);
    }
}

Test(options, n_with_input)
{
    EXPECT_USAGE(&MULTI, "--n", "--n", "100", "--input", "a.npy");
    EXPECT_USAGE(&MULTI, "--input", "--input", "a.npy", "--n", "100");
    EXPECT_USAGE(&SINGLE, "--n", "--n=10", "--input=a.npy");
}

Test(options, empty_input_path)
{
    EXPECT_USAGE(&MULTI, "--input", "--input", "");
    EXPECT_USAGE(&MULTI, "--input", "--input=");
}

Test(options, unknown_option)
{
    EXPECT_USAGE(&MULTI, "--fast", "--fast");
    EXPECT_USAGE(&MULTI, "--fast", "--n", "5", "--fast");
    EXPECT_USAGE(&MULTI, "--size", "--size", "5");
    EXPECT_USAGE(&MULTI, "-n", "-n", "5");
}

Test(options, missing_value)
{
    EXPECT_USAGE(&MULTI, "--n", "--n");
    EXPECT_USAGE(&MULTI, "--seed", "--n", "5", "--seed");
    EXPECT_USAGE(&MULTI, "--reps", "--reps");
    EXPECT_USAGE(&MULTI, "--block", "--block");
    EXPECT_USAGE(&MULTI, "--input", "--input");
}

Test(options, stray_argument)
{
    EXPECT_USAGE(&MULTI, "stray", "stray");
    EXPECT_USAGE(&MULTI, "stray", "--n", "5", "stray");
    EXPECT_USAGE(&MULTI, "stray", "stray", "--n", "5");
    EXPECT_USAGE(&MULTI, "1000", "--seed", "1", "1000");
}

/* ------------------------------------------------------------------------------------------ */
/* The single-block limit n <= 2 * block                                                      */

Test(options, single_block_limit)
{
    struct options opt;
    EXPECT_OK(&SINGLE, &opt, "--n", "2048");
    cr_expect_eq(opt.n, 2048);
    EXPECT_OK(&SINGLE, &opt, "--n", "1");
    cr_expect_eq(opt.n, 1);
    EXPECT_OK(&SINGLE, &opt, "--n", "0");
    cr_expect_eq(opt.n, 0);

    EXPECT_USAGE(&SINGLE, "2048", "--n", "2049");
    cr_expect_not_null(strstr(err, "step05_segmented"), "no way out named: %s", err);
    cr_expect_not_null(strstr(err, SINGLE_NAME), "the stage is not named: %s", err);
    cr_expect_not_null(strstr(err, "2049"), "the n given is not named: %s", err);

    EXPECT_USAGE(&SINGLE, "128", "--block", "64", "--n", "129");
    cr_expect_not_null(strstr(err, "step05_segmented"), "%s", err);
    EXPECT_USAGE(&SINGLE, "128", "--n", "129", "--block", "64");

    EXPECT_OK(&SINGLE, &opt, "--n", "128", "--block", "64");
    cr_expect_eq(opt.n, 128);
    cr_expect_eq(opt.block, 64u);
    EXPECT_OK(&SINGLE, &opt, "--block=64", "--n=128");
    cr_expect_eq(opt.n, 128);

    /* The multi-block stage takes the same command lines. */
    EXPECT_OK(&MULTI, &opt, "--n", "2049");
    EXPECT_OK(&MULTI, &opt, "--block", "64", "--n", "129");
}

Test(options, check_n)
{
    char msg[512];
    cr_expect_eq(options_check_n(0, 256, MULTI_NAME, &MULTI, msg, sizeof msg), 0);
    cr_expect_eq(options_check_n(DEFAULT_N, 32, MULTI_NAME, &MULTI, msg, sizeof msg), 0);
#if SIZE_MAX > UINT32_MAX
    cr_expect_eq(options_check_n((size_t)1 << 33, 256, MULTI_NAME, &MULTI, msg, sizeof msg), 0,
                 "%s", msg);
#endif
    cr_expect_eq(
        options_check_n(SIZE_MAX / sizeof(elem_t), 256, MULTI_NAME, &MULTI, msg, sizeof msg), 0);
    msg[0] = '\0';
    cr_expect_eq(options_check_n(SIZE_MAX, 256, MULTI_NAME, &MULTI, msg, sizeof msg), EXIT_USAGE);
    cr_expect_gt(strlen(msg), 0);

    for (unsigned int block = BLOCK_MIN; block <= BLOCK_MAX; block *= 2) {
        cr_expect_eq(
            options_check_n(2 * (size_t)block, block, SINGLE_NAME, &SINGLE, msg, sizeof msg), 0,
            "%s", msg);
        msg[0] = '\0';
        cr_expect_eq(
            options_check_n(2 * (size_t)block + 1, block, SINGLE_NAME, &SINGLE, msg, sizeof msg),
            EXIT_USAGE, "block %u took n = 2 * block + 1", block);
        cr_expect_not_null(strstr(msg, "step05_segmented"), "%s", msg);
        cr_expect_not_null(strstr(msg, SINGLE_NAME), "%s", msg);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* parse_unsigned                                                                             */

static int parse_u(const char *text, uint64_t max, uint64_t *v)
{
    *v = 12345; /* so that a success must write the value */
    return parse_unsigned(text, max, v);
}

Test(options, parse_unsigned_valid)
{
    uint64_t v;
    cr_expect_eq(parse_u("0", 0, &v), 0);
    cr_expect_eq(v, 0);
    cr_expect_eq(parse_u("0", UINT64_MAX, &v), 0);
    cr_expect_eq(v, 0);
    cr_expect_eq(parse_u("000", 10, &v), 0);
    cr_expect_eq(v, 0);
    cr_expect_eq(parse_u("1000", 1000, &v), 0); /* max exactly */
    cr_expect_eq(v, 1000);
    cr_expect_eq(parse_u("999", 1000, &v), 0);
    cr_expect_eq(v, 999);
    cr_expect_eq(parse_u("10", 10, &v), 0);
    cr_expect_eq(v, 10);
    cr_expect_eq(parse_u("18446744073709551615", UINT64_MAX, &v), 0);
    cr_expect_eq(v, UINT64_MAX);
    cr_expect_eq(parse_u("18446744073709551610", UINT64_MAX, &v), 0);
    cr_expect_eq(v, UINT64_MAX - 5);
    cr_expect_eq(parse_u("4294967295", UINT32_MAX, &v), 0);
    cr_expect_eq(v, UINT32_MAX);
}

Test(options, parse_unsigned_refused)
{
    uint64_t v;
    cr_expect_eq(parse_u("1001", 1000, &v), -1); /* max + 1 */
    cr_expect_eq(parse_u("10000", 1000, &v), -1);
    cr_expect_eq(parse_u("11", 10, &v), -1);
    cr_expect_eq(parse_u("18446744073709551616", UINT64_MAX, &v), -1); /* 2^64 */
    cr_expect_eq(parse_u("18446744073709551620", UINT64_MAX, &v), -1);
    cr_expect_eq(parse_u("99999999999999999999999", UINT64_MAX, &v), -1);
    cr_expect_eq(parse_u("4294967296", UINT32_MAX, &v), -1);
    cr_expect_eq(parse_u("", UINT64_MAX, &v), -1);
    cr_expect_eq(parse_u(NULL, UINT64_MAX, &v), -1);
    static const char *const bad[] = {"-1",  "+5",   " 5",  "5 ",    "abc", "12x",
                                      "1e6", "0x10", "1.0", "1,000", "5\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        cr_expect_eq(parse_u(bad[i], UINT64_MAX, &v), -1, "'%s' was taken as %llu", bad[i],
                     (unsigned long long)v);
}
