/* test_options.c: the command line of every stage program (common/options.c), CPU only.
 *
 * One table, COMMAND_LINES: a command line, the stage it is given to, and what options_parse must
 * make of it. options_parse starts from the stage's defaults, takes each option in both the
 * "--n 5" and the "--n=5" form, and refuses everything else with EXIT_USAGE and one sentence that
 * names the option. Single-block stages (02-04) refuse n > 2 * block and point to
 * step05_segmented. Each row is a test case of its own (a Criterion parameterized test), and a
 * failure prints its command line. After the table, what a row cannot say: that parses are
 * independent, the largest n (it depends on the machine), options_check_n; then parse_unsigned,
 * in a table of its own. tests/test_fuzz_options.c throws generated command lines at the same
 * parser. */
#define _GNU_SOURCE /* open_memstream */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test_util.h"

/* Two stages as the harness sees them: one that takes any n, one that works in a single block. */
static const struct stage_info multi_stage = {.on_gpu = true};
static const struct stage_info single_stage = {
    .on_gpu = true, .single_block = true, .in_place = true};
#define MULTI_NAME "step05_segmented"
#define SINGLE_NAME "step02_blocked"

#define MAX_ARGS 8
#define ARG_LEN 40
#define MAX_WORDS 8

/* A row: plain data (Criterion copies each row into the process that runs it). */
struct command_line {
    bool single;                    /* given to SINGLE_NAME, else to MULTI_NAME */
    int argc;                       /* the arguments after the program's name */
    char argv[MAX_ARGS][ARG_LEN];   /* those arguments */
    int status;                     /* what options_parse returns: 0, 1 (--help) or EXIT_USAGE */
    char values[80];                /* 0: "n=5 seed=1 reps=20 block=256", then " input=PATH" */
    char words[MAX_WORDS][ARG_LEN]; /* 1: in the usage text; EXIT_USAGE: in the one sentence */
};

#define MULTI .single = false
#define SINGLE .single = true
#define NO_ARGS .argc = 0
#define ARGS(...) .argc = (int)COUNT(((const char *[]){__VA_ARGS__})), .argv = {__VA_ARGS__}
#define GIVES(values_) .status = 0, .values = values_
#define HELP(...) .status = 1, .words = {__VA_ARGS__}
#define REFUSED(...) .status = EXIT_USAGE, .words = {__VA_ARGS__}

/* Every accepted row spells out every value, the defaults too: n = 2^24 (a single-block stage:
 * 2 * block), seed 1, 20 repeats, block 256 (a single-block stage: 1024), no input file. */
// clang-format off
static const struct command_line COMMAND_LINES[] = {
    /* The defaults */
    {MULTI,  NO_ARGS,                       GIVES("n=16777216 seed=1 reps=20 block=256")},
    {SINGLE, NO_ARGS,                       GIVES("n=2048 seed=1 reps=20 block=1024")},

    /* --n, in both forms */
    {MULTI,  ARGS("--n", "5"),              GIVES("n=5 seed=1 reps=20 block=256")},
    {MULTI,  ARGS("--n=5"),                 GIVES("n=5 seed=1 reps=20 block=256")},
    {MULTI,  ARGS("--n", "100"),            GIVES("n=100 seed=1 reps=20 block=256")},
    /* the identity */
    {MULTI,  ARGS("--n", "0"),              GIVES("n=0 seed=1 reps=20 block=256")},
    {MULTI,  ARGS("--n", "1"),              GIVES("n=1 seed=1 reps=20 block=256")},
    {MULTI,  ARGS("--n", "007"),            GIVES("n=7 seed=1 reps=20 block=256")},
    {MULTI,  ARGS("--n", "16777216"),       GIVES("n=16777216 seed=1 reps=20 block=256")},
    {MULTI,  ARGS("--n", "4294967295"),     GIVES("n=4294967295 seed=1 reps=20 block=256")},
#if SIZE_MAX > UINT32_MAX
    {MULTI,  ARGS("--n", "5000000000"),     GIVES("n=5000000000 seed=1 reps=20 block=256")},
    {MULTI,  ARGS("--n=4294967296"),        GIVES("n=4294967296 seed=1 reps=20 block=256")},
    {MULTI,  ARGS("--n", "8589934592"),     GIVES("n=8589934592 seed=1 reps=20 block=256")},
#endif

    /* --seed, --reps, --input */
    {MULTI,  ARGS("--seed", "0"),           GIVES("n=16777216 seed=0 reps=20 block=256")},
    {MULTI,  ARGS("--seed=42"),             GIVES("n=16777216 seed=42 reps=20 block=256")},
    {MULTI,  ARGS("--seed", "4294967296"),  GIVES("n=16777216 seed=4294967296 reps=20 block=256")},
    {MULTI,  ARGS("--seed", "18446744073709551615"),
        GIVES("n=16777216 seed=18446744073709551615 reps=20 block=256")},
    {MULTI,  ARGS("--reps", "1"),           GIVES("n=16777216 seed=1 reps=1 block=256")},
    {MULTI,  ARGS("--reps=7"),              GIVES("n=16777216 seed=1 reps=7 block=256")},
    {MULTI,  ARGS("--reps", "100000"),      GIVES("n=16777216 seed=1 reps=100000 block=256")},
    {MULTI,  ARGS("--input", "data.npy"),
        GIVES("n=16777216 seed=1 reps=20 block=256 input=data.npy")},
    {MULTI,  ARGS("--input=x/y.npy", "--seed", "3"),
        GIVES("n=16777216 seed=3 reps=20 block=256 input=x/y.npy")},

    /* --block. A single-block stage's n follows it (2 * block); the other's stays 2^24. */
    {MULTI,  ARGS("--block", "32"),         GIVES("n=16777216 seed=1 reps=20 block=32")},
    {MULTI,  ARGS("--block", "64"),         GIVES("n=16777216 seed=1 reps=20 block=64")},
    {MULTI,  ARGS("--block", "128"),        GIVES("n=16777216 seed=1 reps=20 block=128")},
    {MULTI,  ARGS("--block", "256"),        GIVES("n=16777216 seed=1 reps=20 block=256")},
    {MULTI,  ARGS("--block", "512"),        GIVES("n=16777216 seed=1 reps=20 block=512")},
    {MULTI,  ARGS("--block", "1024"),       GIVES("n=16777216 seed=1 reps=20 block=1024")},
    {MULTI,  ARGS("--block=128"),           GIVES("n=16777216 seed=1 reps=20 block=128")},
    {SINGLE, ARGS("--block", "32"),         GIVES("n=64 seed=1 reps=20 block=32")},
    {SINGLE, ARGS("--block", "64"),         GIVES("n=128 seed=1 reps=20 block=64")},
    {SINGLE, ARGS("--block", "128"),        GIVES("n=256 seed=1 reps=20 block=128")},
    {SINGLE, ARGS("--block", "256"),        GIVES("n=512 seed=1 reps=20 block=256")},
    {SINGLE, ARGS("--block", "512"),        GIVES("n=1024 seed=1 reps=20 block=512")},
    {SINGLE, ARGS("--block", "1024"),       GIVES("n=2048 seed=1 reps=20 block=1024")},
    {SINGLE, ARGS("--block=32"),            GIVES("n=64 seed=1 reps=20 block=32")},

    /* All of them, in any order */
    {MULTI,  ARGS("--block", "512", "--reps=3", "--seed", "77", "--n", "1000"),
        GIVES("n=1000 seed=77 reps=3 block=512")},

    /* --help stops the parse: what follows it is not looked at. */
    {MULTI,  ARGS("--help"),
        HELP("usage:", "--n", "--input", "--seed", "--reps", "--block", MULTI_NAME,
             "(default: 16777216)")},
    {SINGLE, ARGS("--help"),
        HELP("usage:", "--n", "--input", "--seed", "--reps", "--block", SINGLE_NAME,
             "(default: 2048)")},
    {MULTI,  ARGS("--seed", "4", "--help", "--fast"), HELP("usage:", "--block")},

    /* Refused: one sentence that names the option, and quotes the value. */
    {MULTI,  ARGS("--n", ""),               REFUSED("--n")},
    {MULTI,  ARGS("--n="),                  REFUSED("--n")},
    {MULTI,  ARGS("--n", "-1"),             REFUSED("--n", "'-1'")},
    {MULTI,  ARGS("--n=-1"),                REFUSED("--n", "'-1'")},
    {MULTI,  ARGS("--n", "+5"),             REFUSED("--n", "'+5'")},
    {MULTI,  ARGS("--n=+5"),                REFUSED("--n", "'+5'")},
    {MULTI,  ARGS("--n", " 5"),             REFUSED("--n", "' 5'")},
    {MULTI,  ARGS("--n= 5"),                REFUSED("--n", "' 5'")},
    {MULTI,  ARGS("--n", "5 "),             REFUSED("--n", "'5 '")},
    {MULTI,  ARGS("--n=5 "),                REFUSED("--n", "'5 '")},
    {MULTI,  ARGS("--n", "abc"),            REFUSED("--n", "'abc'")},
    {MULTI,  ARGS("--n=abc"),               REFUSED("--n", "'abc'")},
    {MULTI,  ARGS("--n", "12x"),            REFUSED("--n", "'12x'", "whole number")},
    {MULTI,  ARGS("--n=12x"),               REFUSED("--n", "'12x'", "whole number")},
    {MULTI,  ARGS("--n", "1e6"),            REFUSED("--n", "'1e6'")},
    {MULTI,  ARGS("--n=1e6"),               REFUSED("--n", "'1e6'")},
    {MULTI,  ARGS("--n", "0x10"),           REFUSED("--n", "'0x10'")},
    {MULTI,  ARGS("--n=0x10"),              REFUSED("--n", "'0x10'")},
    {MULTI,  ARGS("--n", "1.5"),            REFUSED("--n", "'1.5'")},
    {MULTI,  ARGS("--n=1.5"),               REFUSED("--n", "'1.5'")},
    /* FULLWIDTH DIGIT FIVE */
    {MULTI,  ARGS("--n", "\xef\xbc\x95"),   REFUSED("--n", "\xef\xbc\x95")},
    /* ARABIC-INDIC DIGIT THREE */
    {MULTI,  ARGS("--n", "\xd9\xa3"),       REFUSED("--n", "\xd9\xa3")},
    {MULTI,  ARGS("--n", "\xff\xfe"),       REFUSED("--n", "\xff\xfe")}, /* not UTF-8 at all */
    /* a control character quoted in the sentence becomes '?': it stays on one line */
    {MULTI,  ARGS("--n", "1\n2"),           REFUSED("--n", "'1?2'")},
    {MULTI,  ARGS("--input", "a.npy", "x\ty"), REFUSED("unexpected argument", "'x?y'")},
    {MULTI,  ARGS("--n=5", "--n=x"),        REFUSED("--n", "'x'")}, /* the last of two is wrong */
    /* too large: says why */
    {MULTI,  ARGS("--n", "99999999999999999999999"),
        REFUSED("--n", "99999999999999999999999", "too large")},
    {MULTI,  ARGS("--n=99999999999999999999999"),
        REFUSED("--n", "99999999999999999999999", "too large")},
    {MULTI,  ARGS("--n", "18446744073709551616"),
        REFUSED("--n", "18446744073709551616", "too large")},
    /* 2^62 int32s */
    {MULTI,  ARGS("--n", "4611686018427387904"),
        REFUSED("--n", "4611686018427387904", "too large")},
    /* 2^64 */
    {MULTI,  ARGS("--seed", "18446744073709551616"), REFUSED("--seed", "'18446744073709551616'")},
    {MULTI,  ARGS("--seed", "99999999999999999999"), REFUSED("--seed", "'99999999999999999999'")},
    {MULTI,  ARGS("--seed", "-1"),          REFUSED("--seed", "'-1'")},
    {MULTI,  ARGS("--seed", "-0"),          REFUSED("--seed", "'-0'")},
    {MULTI,  ARGS("--seed", ""),            REFUSED("--seed", "''")},
    {MULTI,  ARGS("--seed", "seven"),       REFUSED("--seed", "'seven'")},
    {MULTI,  ARGS("--seed=0x1"),            REFUSED("--seed", "'0x1'")},
    /* names the limit */
    {MULTI,  ARGS("--reps", "0"),           REFUSED("--reps", "'0'", "100000")},
    {MULTI,  ARGS("--reps", "100001"),      REFUSED("--reps", "'100001'")},
    {MULTI,  ARGS("--reps", "-3"),          REFUSED("--reps", "'-3'")},
    {MULTI,  ARGS("--reps", ""),            REFUSED("--reps", "''")},
    {MULTI,  ARGS("--reps="),               REFUSED("--reps", "''")},
    {MULTI,  ARGS("--reps", "2.5"),         REFUSED("--reps", "'2.5'")},
    {MULTI,  ARGS("--reps", "many"),        REFUSED("--reps", "'many'")},
    {MULTI,  ARGS("--block", "48"),         REFUSED("--block", "'48'")},
    {MULTI,  ARGS("--block", "16"),         REFUSED("--block", "'16'")},
    {MULTI,  ARGS("--block", "2048"),       REFUSED("--block", "'2048'")},
    {MULTI,  ARGS("--block", "0"),          REFUSED("--block", "'0'")},
    {MULTI,  ARGS("--block", "256k"),       REFUSED("--block", "'256k'")},
    {MULTI,  ARGS("--block", ""),           REFUSED("--block", "''")},
    {MULTI,  ARGS("--block", "-256"),       REFUSED("--block", "'-256'")},
    {MULTI,  ARGS("--block", "1"),          REFUSED("--block", "'1'")},
    {MULTI,  ARGS("--block", "31"),         REFUSED("--block", "'31'")},
    {MULTI,  ARGS("--block", "33"),         REFUSED("--block", "'33'")},
    {MULTI,  ARGS("--block", "1023"),       REFUSED("--block", "'1023'")},
    {MULTI,  ARGS("--block", "4096"),       REFUSED("--block", "'4096'")},
    {SINGLE, ARGS("--block", "48"),         REFUSED("--block", "'48'")},
    {SINGLE, ARGS("--block", "16"),         REFUSED("--block", "'16'")},
    {SINGLE, ARGS("--block", "2048"),       REFUSED("--block", "'2048'")},
    {SINGLE, ARGS("--block", "0"),          REFUSED("--block", "'0'")},
    {SINGLE, ARGS("--block", "256k"),       REFUSED("--block", "'256k'")},
    {SINGLE, ARGS("--block", ""),           REFUSED("--block", "''")},
    {SINGLE, ARGS("--block", "-256"),       REFUSED("--block", "'-256'")},
    {SINGLE, ARGS("--block", "1"),          REFUSED("--block", "'1'")},
    {SINGLE, ARGS("--block", "31"),         REFUSED("--block", "'31'")},
    {SINGLE, ARGS("--block", "33"),         REFUSED("--block", "'33'")},
    {SINGLE, ARGS("--block", "1023"),       REFUSED("--block", "'1023'")},
    {SINGLE, ARGS("--block", "4096"),       REFUSED("--block", "'4096'")},
    {MULTI,  ARGS("--input", ""),           REFUSED("--input")},
    {MULTI,  ARGS("--input="),              REFUSED("--input")},

    /* --n and --input together */
    {MULTI,  ARGS("--n", "100", "--input", "a.npy"), REFUSED("--n", "--input", "not both")},
    {MULTI,  ARGS("--input", "a.npy", "--n", "100"), REFUSED("--n", "--input", "not both")},
    {SINGLE, ARGS("--n=10", "--input=a.npy"), REFUSED("--n", "--input", "not both")},

    /* Unknown options, a missing value, stray arguments */
    {MULTI,  ARGS("--fast"),                REFUSED("unknown option", "--fast")},
    {MULTI,  ARGS("--n", "5", "--fast"),    REFUSED("unknown option", "--fast")},
    {MULTI,  ARGS("--size", "5"),           REFUSED("unknown option", "--size")},
    {MULTI,  ARGS("-n", "5"),               REFUSED("unknown option", "-n")},
    {MULTI,  ARGS("-xy"),                   REFUSED("unknown option", "'-x'")},
    {MULTI,  ARGS("--help=1"),              REFUSED("--help takes no value")},
    {MULTI,  ARGS("--n"),                   REFUSED("--n", "needs a value")},
    {MULTI,  ARGS("--n", "5", "--seed"),    REFUSED("--seed", "needs a value")},
    {MULTI,  ARGS("--n", "5", "--n"),       REFUSED("--n", "needs a value")},
    {MULTI,  ARGS("--reps"),                REFUSED("--reps", "needs a value")},
    {MULTI,  ARGS("--block"),               REFUSED("--block", "needs a value")},
    {MULTI,  ARGS("--input"),               REFUSED("--input", "needs a value")},
    {MULTI,  ARGS("stray"),                 REFUSED("unexpected argument", "'stray'")},
    {MULTI,  ARGS("--n", "5", "stray"),     REFUSED("unexpected argument", "'stray'")},
    {MULTI,  ARGS("stray", "--n", "5"),     REFUSED("unexpected argument", "'stray'")},
    {MULTI,  ARGS("--seed", "1", "1000"),   REFUSED("unexpected argument", "'1000'")},
    {MULTI,  ARGS(""),                      REFUSED("unexpected argument", "''")},
    /* the options end at "--" or at the first argument that is not one; the rest are arguments */
    {MULTI,  ARGS("--", "--n", "5"),        REFUSED("unexpected argument", "'--n'")},
    {MULTI,  ARGS("stray", "--fast"),       REFUSED("unexpected argument", "'stray'")},

    /* The single-block limit n <= 2 * block: a refusal names the stage, the limit, the n given
     * and the stage to use instead; the multi-block stage takes the same command lines. */
    {SINGLE, ARGS("--n", "2048"),           GIVES("n=2048 seed=1 reps=20 block=1024")},
    {SINGLE, ARGS("--n", "1"),              GIVES("n=1 seed=1 reps=20 block=1024")},
    {SINGLE, ARGS("--n", "0"),              GIVES("n=0 seed=1 reps=20 block=1024")},
    {SINGLE, ARGS("--n", "2049"),
        REFUSED("2048", "step05_segmented", SINGLE_NAME, "2049")},
    {SINGLE, ARGS("--block", "64", "--n", "129"),
        REFUSED("128", "step05_segmented", SINGLE_NAME, "129")},
    {SINGLE, ARGS("--n", "129", "--block", "64"), REFUSED("128", "step05_segmented")},
    {SINGLE, ARGS("--n", "128", "--block", "64"), GIVES("n=128 seed=1 reps=20 block=64")},
    {SINGLE, ARGS("--block=64", "--n=128"), GIVES("n=128 seed=1 reps=20 block=64")},
    {MULTI,  ARGS("--n", "2049"),           GIVES("n=2049 seed=1 reps=20 block=256")},
    {MULTI,  ARGS("--block", "64", "--n", "129"), GIVES("n=129 seed=1 reps=20 block=64")},
};
// clang-format on

static char err[512];

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

/* Parses the row's command line as its stage and checks what the row says. */
static void check(const struct command_line *c)
{
    const struct stage_info *stage = c->single ? &single_stage : &multi_stage;
    char what[4200], *argv[MAX_ARGS + 2] = {"prog"};
    for (int i = 0; i < c->argc; ++i)
        argv[i + 1] = (char *)c->argv[i];
    argv[c->argc + 1] = NULL;
    snprintf(what, sizeof what, "%s %s", c->single ? SINGLE_NAME : MULTI_NAME, show_args(argv + 1));

    char *usage = NULL;
    size_t usage_len = 0;
    FILE *out = open_memstream(&usage, &usage_len);
    cr_assert_not_null(out);
    struct options opt;
    memset(&opt, 0xA5, sizeof opt); /* garbage: every field must be set by the parse */
    err[0] = '\0';
    int status = options_parse(c->argc + 1, argv, c->single ? SINGLE_NAME : MULTI_NAME, stage, &opt,
                               out, err, sizeof err);
    fclose(out);
    cr_assert_eq(status, c->status, "%s: returned %d, expected %d (%s)", what, status, c->status,
                 err);
    if (status == 0) {
        cr_assert(c->values[0], "%s: the row gives no values", what);
        char got[sizeof c->values + 64];
        int len = snprintf(got, sizeof got, "n=%zu seed=%" PRIu64 " reps=%d block=%u", opt.n,
                           opt.seed, opt.reps, opt.block);
        if (opt.input_path != NULL)
            snprintf(got + len, sizeof got - (size_t)len, " input=%s", opt.input_path);
        cr_expect_str_eq(got, c->values, "%s: gave %s, expected %s", what, got, c->values);
        cr_expect_str_empty(err, "%s: accepted, yet wrote an error: %s", what, err);
    } else {
        cr_assert(c->words[0][0], "%s: the row names no word to look for", what);
        const char *text = status == 1 ? usage : err;
        if (status == 1)
            cr_expect_str_empty(err, "%s: --help wrote an error: %s", what, err);
        else
            expect_one_sentence(what);
        for (int w = 0; w < MAX_WORDS && c->words[w][0]; ++w)
            cr_expect_not_null(strstr(text, c->words[w]), "%s: '%s' is not in: %s", what,
                               c->words[w], text);
    }
    cr_expect_eq(usage_len > 0, status == 1, "%s: returned %d, and %s the usage", what, status,
                 usage_len > 0 ? "printed" : "did not print");
    free(usage);
}

ParameterizedTestParameters(options, command_line)
{
    return cr_make_param_array(struct command_line, COMMAND_LINES, COUNT(COMMAND_LINES));
}

ParameterizedTest(struct command_line *c, options, command_line)
{
    check(c);
}

/* The defaults the table spells out are the harness's named constants. */
Test(options, defaults_are_the_named_constants)
{
    cr_expect_eq(DEFAULT_N, (size_t)1 << 24);
    cr_expect_eq(DEFAULT_REPS, 20);
    cr_expect_eq(MAX_REPS, 100000);
    cr_expect_eq(default_block(&multi_stage), 256u);
    cr_expect_eq(default_block(&single_stage), 1024u);
}

/* Each parse starts afresh: nothing carries over from the previous command line. */
Test(options, parses_are_independent)
{
    static const struct command_line lines[] = {
        {MULTI, ARGS("--n", "5", "--seed", "9", "--reps", "3", "--block", "64"),
         GIVES("n=5 seed=9 reps=3 block=64")},
        {MULTI, ARGS("--fast"), REFUSED("--fast")},
        {MULTI, ARGS("--input", "a.npy", "--block", "32"),
         GIVES("n=16777216 seed=1 reps=20 block=32 input=a.npy")},
        {MULTI, NO_ARGS, GIVES("n=16777216 seed=1 reps=20 block=256")},
    };
    for (size_t i = 0; i < COUNT(lines); ++i)
        check(&lines[i]);
}

/* The largest n whose bytes the machine can address is taken; one more is refused. */
Test(options, n_at_the_address_limit)
{
    size_t limit = SIZE_MAX / sizeof(elem_t);
    struct command_line max = {MULTI, ARGS("--n", "")}, over = {MULTI, ARGS("--n", "")};
    snprintf(max.argv[1], ARG_LEN, "%zu", limit);
    snprintf(max.values, sizeof max.values, "n=%zu seed=1 reps=20 block=256", limit);
    check(&max);
    snprintf(over.argv[1], ARG_LEN, "%llu", (unsigned long long)limit + 1);
    over.status = EXIT_USAGE;
    snprintf(over.words[0], sizeof over.words[0], "--n");
    snprintf(over.words[1], sizeof over.words[1], "too large");
    snprintf(over.words[2], sizeof over.words[2], "%s", over.argv[1]);
    check(&over);
}

Test(options, check_n)
{
    char msg[512];
    cr_expect_eq(options_check_n(0, 256, MULTI_NAME, &multi_stage, msg, sizeof msg), 0);
    cr_expect_eq(options_check_n(DEFAULT_N, 32, MULTI_NAME, &multi_stage, msg, sizeof msg), 0);
#if SIZE_MAX > UINT32_MAX
    cr_expect_eq(options_check_n((size_t)1 << 33, 256, MULTI_NAME, &multi_stage, msg, sizeof msg),
                 0, "%s", msg);
#endif
    cr_expect_eq(
        options_check_n(SIZE_MAX / sizeof(elem_t), 256, MULTI_NAME, &multi_stage, msg, sizeof msg),
        0);
    msg[0] = '\0';
    cr_expect_eq(options_check_n(SIZE_MAX, 256, MULTI_NAME, &multi_stage, msg, sizeof msg),
                 EXIT_USAGE);
    cr_expect_gt(strlen(msg), 0);

    for (unsigned int block = BLOCK_MIN; block <= BLOCK_MAX; block *= 2) {
        cr_expect_eq(
            options_check_n(2 * (size_t)block, block, SINGLE_NAME, &single_stage, msg, sizeof msg),
            0, "%s", msg);
        msg[0] = '\0';
        cr_expect_eq(options_check_n(2 * (size_t)block + 1, block, SINGLE_NAME, &single_stage, msg,
                                     sizeof msg),
                     EXIT_USAGE, "block %u took n = 2 * block + 1", block);
        cr_expect_not_null(strstr(msg, "step05_segmented"), "%s", msg);
        cr_expect_not_null(strstr(msg, SINGLE_NAME), "%s", msg);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* parse_unsigned, which every numeric option goes through: a table of its own                */

struct unsigned_case {
    char text[32];
    uint64_t max;
    int status;     /* 0 taken, -1 refused */
    uint64_t value; /* taken: the value */
};

// clang-format off
static const struct unsigned_case UNSIGNED_CASES[] = {
    {"0", 0, 0, 0},
    {"0", UINT64_MAX, 0, 0},
    {"000", 10, 0, 0},
    {"1000", 1000, 0, 1000}, /* max exactly */
    {"999", 1000, 0, 999},
    {"10", 10, 0, 10},
    {"18446744073709551615", UINT64_MAX, 0, UINT64_MAX},
    {"18446744073709551610", UINT64_MAX, 0, UINT64_MAX - 5},
    {"4294967295", UINT32_MAX, 0, UINT32_MAX},
    {"1001", 1000, -1, 0}, /* max + 1 */
    {"10000", 1000, -1, 0},
    {"11", 10, -1, 0},
    {"18446744073709551616", UINT64_MAX, -1, 0}, /* 2^64 */
    {"18446744073709551620", UINT64_MAX, -1, 0},
    {"99999999999999999999999", UINT64_MAX, -1, 0},
    {"4294967296", UINT32_MAX, -1, 0},
    {"", UINT64_MAX, -1, 0},
    {"-1", UINT64_MAX, -1, 0},
    {"+5", UINT64_MAX, -1, 0},
    {" 5", UINT64_MAX, -1, 0},
    {"5 ", UINT64_MAX, -1, 0},
    {"abc", UINT64_MAX, -1, 0},
    {"12x", UINT64_MAX, -1, 0},
    {"1e6", UINT64_MAX, -1, 0},
    {"0x10", UINT64_MAX, -1, 0},
    {"1.0", UINT64_MAX, -1, 0},
    {"1,000", UINT64_MAX, -1, 0},
    {"5\n", UINT64_MAX, -1, 0},
};
// clang-format on

ParameterizedTestParameters(options, parse_unsigned)
{
    return cr_make_param_array(struct unsigned_case, UNSIGNED_CASES, COUNT(UNSIGNED_CASES));
}

ParameterizedTest(struct unsigned_case *c, options, parse_unsigned)
{
    uint64_t v = 12345; /* so that a success must write the value */
    int status = parse_unsigned(c->text, c->max, &v);
    cr_expect_eq(status, c->status, "'%s' with max %" PRIu64 ": returned %d (value %" PRIu64 ")",
                 c->text, c->max, status, v);
    if (c->status == 0)
        cr_expect_eq(v, c->value, "'%s' with max %" PRIu64 ": %" PRIu64 ", expected %" PRIu64,
                     c->text, c->max, v, c->value);
}

Test(options, parse_unsigned_null)
{
    uint64_t v;
    cr_expect_eq(parse_unsigned(NULL, UINT64_MAX, &v), -1);
}
