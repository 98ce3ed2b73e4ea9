/* test_fuzz_options.c: thousands of hostile command lines against options_parse (common/options.c),
 * CPU only, deterministic (a fixed seed of splitmix64), in well under a second.
 *
 * Two kinds of command line:
 *   - structured: real option names with values that are sometimes right and sometimes wrong in
 *     every way a person or a script gets them wrong (empty, negative, signed, overflowing 2^64 or
 *     10^30, hex, exponents, trailing garbage, unicode digits, control characters, "--n=" with
 *     nothing, a missing value at the end, repeats, stray words, "--"). The line is made piece by
 *     piece, and each piece's fate is known as it is made, from the rules in --help, not from
 *     parsing the line again: an option with a value that the rules take (checked with strtoull,
 *     which shares nothing with parse_unsigned) sets that value, the last one given wins; the
 *     first piece that breaks a rule decides the refusal and the word its sentence must hold;
 *     options end at "--" or at the first word. So the parse must return what was made, and on
 *     success give exactly the values that were put in.
 *   - garbage: tokens from real and abbreviated option names, single-dash options, values and
 *     random bytes, in any order. Nothing is predicted; only the invariants are checked.
 * Invariants, for every line: no crash; the result is 0, 1 (--help, with the usage text written)
 * or EXIT_USAGE with one non-empty line in err, whatever bytes the line holds; argv is not
 * reordered; and on 0 every option is in its documented range (block a power of two in
 * [32, 1024], reps in [1, 100000], n addressable, n <= 2 * block on a single-block stage, the input
 * path one of the arguments) and the result, written back as a plain command line, parses to the
 * same options. NULs cannot occur inside a C argv string. */
#define _GNU_SOURCE /* open_memstream */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test_util.h"

/* Two stages as the harness sees them: one that takes any n, one that works in a single block. */
static const struct stage_info MULTI = {.on_gpu = true, .single_block = false, .in_place = false};
static const struct stage_info SINGLE = {.on_gpu = true, .single_block = true, .in_place = true};

#define MAX_ARGS 24
#define TOKEN_LEN 192

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t below) /* deterministic, so a failure reproduces */
{
    return random_below(&rng, below);
}
static uint64_t rnd64(void)
{
    return splitmix64(&rng);
}

/* Values that have broken option parsers before. Some are valid for some options. */
// clang-format off
static const char *const ODD_VALUES[] = {
    "", "0", "00", "1", "-1", "+1", "-0", "007", "31", "32", "33", "48", "64", "1023", "1024",
    "1025", "2048", "2049", "4096", "99999", "100000", "100001", "4294967295", "4294967296",
    "4611686018427387903",  /* SIZE_MAX / 4 on 64 bits: the largest n of a 4-byte element */
    "4611686018427387904",  /* one more */
    "9223372036854775807", "9223372036854775808", "18446744073709551615",
    "18446744073709551616", /* 2^64 */
    "1000000000000000000000000000000", /* 10^30 */
    "0000000000000000000000000000000000000032", /* leading zeros: still 32 */
    "1e3", "1E3", "1.0", "1.", ".5", "0x20", "0X20", "0b1", "017", "1,000", "1_000", "1 000",
    " 5", "5 ", "5\t", "\t5", "12x", "x12", "abc", "nan", "inf", "-inf", "=", "==5", "5=", "--",
    "-", "--n", "--help", "-5", "--5", "%s%n%s", "\\0", "'5'", "\"5\"",
    "\xef\xbc\x95",     /* FULLWIDTH DIGIT FIVE */
    "\xd9\xa3",         /* ARABIC-INDIC DIGIT THREE */
    "\xe2\x80\x93" "5", /* EN DASH, 5 */
    "\xe2\x88\x9e",     /* INFINITY */
    "5\xcc\xb8",        /* 5 + COMBINING LONG SOLIDUS OVERLAY */
    "\xff\xfe", "\xc3", "\x80", "\x7f", "\x1b[31m5", "data.npy", "/dev/null", "x/y.npy",
};
// clang-format on

/* ---- The generators ---- */

static char tokens[MAX_ARGS][TOKEN_LEN];

/* A decimal number: a random width of random digits, a power of two, or a random uint64. */
static void random_number(char *out, size_t len)
{
    switch (rnd(4)) {
    case 0: {
        size_t digits = 1 + rnd(40);
        for (size_t i = 0; i < digits && i + 1 < len; ++i)
            out[i] = (char)('0' + rnd(10)), out[i + 1] = '\0';
        break;
    }
    case 1: /* 2^k, k up to 70: exact in decimal by doubling a digit string */
    {
        char d[32] = "1"; /* little-endian digits */
        for (uint32_t k = rnd(71); k > 0; --k) {
            int carry = 0;
            size_t i;
            for (i = 0; d[i]; ++i) {
                int v = (d[i] - '0') * 2 + carry;
                d[i] = (char)('0' + v % 10), carry = v / 10;
            }
            if (carry)
                d[i] = (char)('0' + carry), d[i + 1] = '\0';
        }
        size_t m = strlen(d);
        for (size_t i = 0; i < m; ++i)
            out[i] = d[m - 1 - i];
        out[m] = '\0';
        break;
    }
    case 2:
        snprintf(out, len, "%" PRIu64, rnd64());
        break;
    default:
        snprintf(out, len, "%u", rnd(5000));
        break;
    }
}

/* Random bytes 1..255, '\n' and the other control characters among them. */
static void random_bytes(char *out, size_t len)
{
    size_t n = 1 + rnd(12);
    for (size_t i = 0; i < n && i + 1 < len; ++i)
        out[i] = (char)(1 + rnd(255)), out[i + 1] = '\0';
}

static const char *const NAMES[] = {"n", "seed", "reps", "block", "input"};
static const char *const FLAGS[] = {"--n", "--seed", "--reps", "--block", "--input"};

/* A number at an edge of what option `name` takes: its least or its greatest, or one past. */
static void edge_value(const char *name, char *out, size_t len)
{
    uint64_t lo = 0, hi = UINT64_MAX; /* --seed */
    if (strcmp(name, "n") == 0)
        hi = SIZE_MAX / sizeof(elem_t);
    else if (strcmp(name, "reps") == 0)
        lo = 1, hi = MAX_REPS;
    else if (strcmp(name, "block") == 0)
        lo = BLOCK_MIN, hi = BLOCK_MAX;
    switch (rnd(4)) {
    case 0:
        snprintf(out, len, "%" PRIu64, lo);
        break;
    case 1:
        snprintf(out, len, "%" PRIu64, hi);
        break;
    case 2:
        snprintf(out, len, lo > 0 ? "%" PRIu64 : "-1", lo - 1);
        break;
    default:
        snprintf(out, len, hi < UINT64_MAX ? "%" PRIu64 : "18446744073709551616", hi + 1);
        break;
    }
}

/* A value for option `name`: half the time one it takes, else anything. */
static void random_value(const char *name, char *out, size_t len)
{
    if (rnd(2) == 0) {
        if (strcmp(name, "block") == 0)
            snprintf(out, len, "%u", 32u << rnd(6));
        else if (strcmp(name, "reps") == 0)
            snprintf(out, len, "%u", 1 + rnd(MAX_REPS));
        else if (strcmp(name, "n") == 0)
            snprintf(out, len, "%u", rnd(2) ? rnd(4097) : rnd(1u << 30));
        else if (strcmp(name, "seed") == 0)
            snprintf(out, len, "%" PRIu64, rnd64());
        else
            snprintf(out, len, "%s", rnd(2) ? "data.npy" : "/tmp/x y\xc3\xa9.npy");
        return;
    }
    switch (rnd(4)) {
    case 0:
        snprintf(out, len, "%s", ODD_VALUES[rnd(COUNT(ODD_VALUES))]);
        break;
    case 1:
        random_number(out, len);
        break;
    case 2:
        if (strcmp(name, "input") == 0)
            random_bytes(out, len); /* a path has no edge */
        else
            edge_value(name, out, len);
        break;
    default:
        random_bytes(out, len);
        break;
    }
}

/* What a structured line must give, known from how it was made. */
struct expect {
    int rc;             /* 0, 1 (--help) or EXIT_USAGE */
    const char *word;   /* EXIT_USAGE: the sentence holds it */
    struct options opt; /* 0: the values, input_path pointing into the line */
};

/* Whether `value` is one that option `name` takes, by the rules in --help; a number's value in
 * *v. Decimal digits only, checked with strtoull, so it shares nothing with parse_unsigned. */
static bool value_ok(const char *name, const char *value, uint64_t *v)
{
    if (strcmp(name, "input") == 0)
        return *value != '\0';
    if (*value == '\0' || strspn(value, "0123456789") != strlen(value))
        return false;
    errno = 0;
    *v = strtoull(value, NULL, 10);
    if (errno == ERANGE)
        return false;
    if (strcmp(name, "n") == 0)
        return *v <= SIZE_MAX / sizeof(elem_t);
    if (strcmp(name, "reps") == 0)
        return *v >= 1 && *v <= MAX_REPS;
    if (strcmp(name, "block") == 0)
        return *v >= BLOCK_MIN && *v <= BLOCK_MAX && (*v & (*v - 1)) == 0;
    return true; /* seed: any uint64 */
}

/* Options no stage has, each with what it must give: getopt_long takes exact names or
 * unambiguous prefixes, and none of these is either; -h is --help's one short form. */
static const struct {
    const char *arg;
    int rc;
    const char *word;
} UNKNOWN[] = {
    {"--frobnicate", EXIT_USAGE, "unknown option"},
    {"--N", EXIT_USAGE, "unknown option"},
    {"--nn", EXIT_USAGE, "unknown option"},
    {"--seeds", EXIT_USAGE, "unknown option"},
    {"--blocks", EXIT_USAGE, "unknown option"},
    {"--size", EXIT_USAGE, "unknown option"},
    {"--inputs", EXIT_USAGE, "unknown option"},
    {"--x=1", EXIT_USAGE, "unknown option"},
    {"-n", EXIT_USAGE, "unknown option '-n'"},
    {"-x", EXIT_USAGE, "unknown option '-x'"},
    {"-xy", EXIT_USAGE, "unknown option '-x'"},
    {"-5", EXIT_USAGE, "unknown option '-5'"},
    {"-:", EXIT_USAGE, "unknown option"},
    {"--help=1", EXIT_USAGE, "--help takes no value"},
    {"-h", 1, NULL},
};

/* A command line of real option names, right or wrong values, for `stage`; in *e what it must
 * give. Returns argc. */
static int structured_line(char **argv, const struct stage_info *stage, struct expect *e)
{
    static const char *const STRAY[] = {"stray", "5", "-", "", "data.npy", "\xc3\xa9"};
    bool decided = false, n_given = false, ended = false;
    *e = (struct expect){.rc = 0};
    e->opt = (struct options){
        .seed = 1, .reps = DEFAULT_REPS, .block = default_block(stage), .input_path = NULL};
/* The first piece that decides the outcome wins; later ones change nothing. */
#define DECIDE(rc_, word_)                                                                         \
    (decided ? (void)0 : (void)(decided = true, e->rc = (rc_), e->word = (word_)))
    int argc = 1;
    argv[0] = "prog";
    for (uint32_t k = rnd(7); k > 0 && argc + 2 < MAX_ARGS; --k) {
        if (ended) /* after "--" every piece is an argument: the first one is refused */
            DECIDE(EXIT_USAGE, "unexpected argument");
        uint32_t r = rnd(100);
        char *tok = tokens[argc];
        if (r < 70) { /* an option and its value, in one of the two forms */
            size_t i = rnd(COUNT(NAMES));
            const char *name = NAMES[i];
            char value[TOKEN_LEN - 16];
            random_value(name, value, sizeof value);
            const char *at; /* where the value lies in the line */
            if (rnd(2)) {
                snprintf(tok, TOKEN_LEN, "--%s=%s", name, value);
                argv[argc++] = tok;
                at = tok + strlen(name) + 3;
            } else {
                snprintf(tok, TOKEN_LEN, "--%s", name);
                argv[argc++] = tok;
                snprintf(tokens[argc], TOKEN_LEN, "%s", value);
                at = argv[argc] = tokens[argc];
                argc++;
            }
            uint64_t v = 0;
            if (!value_ok(name, value, &v)) {
                DECIDE(EXIT_USAGE, FLAGS[i]);
            } else if (!decided) { /* taken: the last value given wins */
                if (strcmp(name, "n") == 0)
                    e->opt.n = (size_t)v, n_given = true;
                else if (strcmp(name, "seed") == 0)
                    e->opt.seed = v;
                else if (strcmp(name, "reps") == 0)
                    e->opt.reps = (int)v;
                else if (strcmp(name, "block") == 0)
                    e->opt.block = (unsigned int)v;
                else
                    e->opt.input_path = at;
            }
        } else if (r < 76) {
            argv[argc++] = "--help";
            DECIDE(1, NULL);
        } else if (r < 82) {
            size_t u = rnd(COUNT(UNKNOWN));
            argv[argc++] = (char *)UNKNOWN[u].arg;
            DECIDE(UNKNOWN[u].rc, UNKNOWN[u].word);
        } else if (r < 87) { /* a word: the options end, and it is refused */
            argv[argc++] = (char *)STRAY[rnd(COUNT(STRAY))];
            DECIDE(EXIT_USAGE, "unexpected argument");
        } else if (r < 92) {
            argv[argc++] = "--";
            ended = true;
        } else { /* an option with its value missing: the end of the line */
            snprintf(tok, TOKEN_LEN, "--%s", NAMES[rnd(COUNT(NAMES))]);
            argv[argc++] = tok;
            DECIDE(EXIT_USAGE, "needs a value");
            break;
        }
    }
#undef DECIDE
    argv[argc] = NULL;
    if (decided)
        return argc;
    if (n_given && e->opt.input_path)
        *e = (struct expect){.rc = EXIT_USAGE, .word = "not both"};
    else if (!n_given)
        e->opt.n = stage->single_block ? 2 * (size_t)e->opt.block : DEFAULT_N;
    if (e->rc == 0 && stage->single_block && e->opt.n > 2 * (size_t)e->opt.block)
        *e = (struct expect){.rc = EXIT_USAGE, .word = "step05_segmented"};
    return argc;
}

/* A command line of anything at all. Returns argc. */
static int garbage_line(char **argv)
{
    static const char *const SPELLINGS[] = {
        "--n",   "--seed", "--reps",  "--block", "--input",  "--help",   "--s",
        "--se",  "--r",    "--b",     "--blo",   "--i",      "--inp",    "--h",
        "--he",  "--",     "-",       "---n",    "--N",      "--nn",     "-n",
        "-s",    "-b",     "-h",      "-xy",     "-:",       "-?",       "--=",
        "--=5",  "--n=",   "--seed=", "--reps=", "--block=", "--input=", "--help=",
        "--n==", "--b=64", "--s=1",   "--r=3",   "--i=a",    "-nn",      "--\xc3\xa9"};
    int argc = 1;
    argv[0] = "prog";
    for (uint32_t k = rnd(9); k > 0 && argc < MAX_ARGS - 1; --k) {
        char *tok = tokens[argc];
        switch (rnd(6)) {
        case 0:
        case 1:
            snprintf(tok, TOKEN_LEN, "%s", SPELLINGS[rnd(COUNT(SPELLINGS))]);
            break;
        case 2: { /* a spelling glued to a value */
            char value[TOKEN_LEN - 16];
            random_value(NAMES[rnd(COUNT(NAMES))], value, sizeof value);
            snprintf(tok, TOKEN_LEN, "%s%s", SPELLINGS[rnd(COUNT(SPELLINGS))], value);
            break;
        }
        case 3:
            random_value(NAMES[rnd(COUNT(NAMES))], tok, TOKEN_LEN);
            break;
        case 4:
            random_bytes(tok, TOKEN_LEN);
            break;
        default:
            random_number(tok, TOKEN_LEN);
            break;
        }
        argv[argc++] = tok;
    }
    argv[argc] = NULL;
    return argc;
}

/* ---- One parse, and what must hold whatever the line ---- */

static char err[512];

/* The options an accepted line gave, written back as a plain command line ("--seed S --reps R
 * --block B" and "--n N" or "--input PATH"), must parse to the same options. */
static void expect_round_trip(const struct options *opt, const char *stage_name,
                              const struct stage_info *stage, const char *line)
{
    char n[32], seed[32], reps[16], block[16], msg[512] = "", *usage = NULL;
    snprintf(n, sizeof n, "%zu", opt->n);
    snprintf(seed, sizeof seed, "%" PRIu64, opt->seed);
    snprintf(reps, sizeof reps, "%d", opt->reps);
    snprintf(block, sizeof block, "%u", opt->block);
    char *argv[] = {"prog",
                    "--seed",
                    seed,
                    "--reps",
                    reps,
                    "--block",
                    block,
                    opt->input_path ? "--input" : "--n",
                    opt->input_path ? (char *)opt->input_path : n,
                    NULL};
    size_t usage_len = 0;
    FILE *out = open_memstream(&usage, &usage_len);
    cr_assert_not_null(out);
    struct options again;
    int rc =
        options_parse((int)COUNT(argv) - 1, argv, stage_name, stage, &again, out, msg, sizeof msg);
    fclose(out);
    free(usage);
    char first[4096], back[4096]; /* show_args reuses its buffer */
    snprintf(first, sizeof first, "%s", line);
    snprintf(back, sizeof back, "%s", show_args(argv + 1));
    cr_assert_eq(rc, 0, "%s: %s was accepted, %s was not (%d): %s", stage_name, first, back, rc,
                 msg);
    cr_assert(again.n == opt->n && again.seed == opt->seed && again.reps == opt->reps &&
                  again.block == opt->block &&
                  (opt->input_path ? again.input_path && !strcmp(again.input_path, opt->input_path)
                                   : !again.input_path),
              "%s: %s and %s gave different options", stage_name, first, back);
}

static int parse_checked(int argc, char **argv, const char *stage_name,
                         const struct stage_info *stage, struct options *opt)
{
    char *before[MAX_ARGS + 1];
    memcpy(before, argv, (size_t)(argc + 1) * sizeof *argv);
    char *help = NULL;
    size_t help_len = 0;
    FILE *out = open_memstream(&help, &help_len);
    cr_assert_not_null(out);
    memset(opt, 0xA5, sizeof *opt); /* garbage: a successful parse must set every field */
    memset(err, 'Z', sizeof err);   /* garbage: a refusal must write a terminated message */
    int rc = options_parse(argc, argv, stage_name, stage, opt, out, err, sizeof err);
    fclose(out);
    const char *line = show_args(argv + 1);

    cr_assert(rc == 0 || rc == 1 || rc == EXIT_USAGE, "%s: returned %d for %s", stage_name, rc,
              line);
    cr_assert_eq(memcmp(before, argv, (size_t)(argc + 1) * sizeof *argv), 0,
                 "argv was reordered for %s", line);
    if (rc == EXIT_USAGE) {
        size_t len = strnlen(err, sizeof err);
        cr_assert_lt(len, sizeof err, "err is not NUL-terminated for %s", line);
        cr_assert_gt(len, 0, "empty error message for %s", line);
        cr_assert_null(strchr(err, '\n'), "error message is not one line for %s: %s", line, err);
    } else if (rc == 1) {
        cr_assert(help_len > 0 && strstr(help, "usage:"), "--help printed no usage for %s", line);
    } else {
        cr_assert(opt->block >= BLOCK_MIN && opt->block <= BLOCK_MAX &&
                      (opt->block & (opt->block - 1)) == 0,
                  "accepted block %u for %s", opt->block, line);
        cr_assert(opt->reps >= 1 && opt->reps <= MAX_REPS, "accepted reps %d for %s", opt->reps,
                  line);
        cr_assert_leq(opt->n, SIZE_MAX / sizeof(elem_t), "accepted n %zu for %s", opt->n, line);
        if (stage->single_block)
            cr_assert_leq(opt->n, 2 * (size_t)opt->block, "%s accepted n %zu > 2 * %u for %s",
                          stage_name, opt->n, opt->block, line);
        if (opt->input_path != NULL) { /* a pointer into one of the arguments, not empty */
            bool inside = false;
            for (int i = 1; i < argc; ++i)
                inside |=
                    opt->input_path >= argv[i] && opt->input_path <= argv[i] + strlen(argv[i]);
            cr_assert(inside && *opt->input_path, "input_path is not an argument for %s", line);
        }
        expect_round_trip(opt, stage_name, stage, line);
    }
    free(help);
    return rc;
}

static void fuzz_structured(const char *stage_name, const struct stage_info *stage, int lines)
{
    int seen[3] = {0, 0, 0};
    for (int l = 0; l < lines; ++l) {
        char *argv[MAX_ARGS + 1];
        struct expect e;
        int argc = structured_line(argv, stage, &e);
        struct options opt;
        int rc = parse_checked(argc, argv, stage_name, stage, &opt);
        const char *line = show_args(argv + 1);
        cr_assert_eq(rc, e.rc, "%s: %s returned %d, expected %d (err: %s)", stage_name, line, rc,
                     e.rc, rc == EXIT_USAGE ? err : "");
        seen[rc == EXIT_USAGE ? 2 : rc]++;
        if (rc == EXIT_USAGE)
            cr_assert_not_null(strstr(err, e.word), "%s: %s: the message does not say '%s': %s",
                               stage_name, line, e.word, err);
        if (rc == 0) {
            cr_assert_eq(opt.n, e.opt.n, "%s: n for %s", stage_name, line);
            cr_assert_eq(opt.seed, e.opt.seed, "%s: seed for %s", stage_name, line);
            cr_assert_eq(opt.reps, e.opt.reps, "%s: reps for %s", stage_name, line);
            cr_assert_eq(opt.block, e.opt.block, "%s: block for %s", stage_name, line);
            cr_assert_eq(opt.input_path, e.opt.input_path, "%s: input for %s", stage_name, line);
        }
    }
    /* The generator must reach every outcome, or the fuzz proves little. */
    cr_expect_gt(seen[0], lines / 20, "%s: only %d of %d lines accepted", stage_name, seen[0],
                 lines);
    cr_expect_gt(seen[1], lines / 50, "%s: only %d --help", stage_name, seen[1]);
    cr_expect_gt(seen[2], lines / 4, "%s: only %d refusals", stage_name, seen[2]);
}

Test(fuzz, structured_multi_block)
{
    fuzz_structured("step05_segmented", &MULTI, 6000);
}

Test(fuzz, structured_single_block)
{
    fuzz_structured("step02_blocked", &SINGLE, 6000);
}

Test(fuzz, garbage)
{
    for (int l = 0; l < 6000; ++l) {
        char *argv[MAX_ARGS + 1];
        int argc = garbage_line(argv);
        struct options opt;
        parse_checked(argc, argv, "step05_segmented", &MULTI, &opt);
        parse_checked(argc, argv, "step02_blocked", &SINGLE, &opt);
    }
}

/* A value far longer than the message buffer: cut, still terminated, still one line. */
Test(fuzz, huge_value)
{
    static char value[20000];
    memset(value, '7', sizeof value - 1);
    char *argv[] = {"prog", "--n", value, NULL};
    struct options opt;
    cr_expect_eq(parse_checked(3, argv, "step05_segmented", &MULTI, &opt), EXIT_USAGE);
    memset(value, 'x', sizeof value - 1);
    char *argv2[] = {"prog", "--input", value, NULL}; /* a long path is the file system's problem */
    cr_expect_eq(parse_checked(3, argv2, "step05_segmented", &MULTI, &opt), 0);
}

/* Many repeats of the same options: the last one wins, nothing overflows. */
Test(fuzz, many_repeats)
{
    char *argv[MAX_ARGS + 1];
    argv[0] = "prog";
    for (int i = 1; i + 1 < MAX_ARGS; i += 2)
        argv[i] = "--block", argv[i + 1] = i % 4 == 1 ? "512" : "64"; /* the last, i = 21: 512 */
    argv[MAX_ARGS - 1] = "--reps=9";
    argv[MAX_ARGS] = NULL;
    struct options opt;
    cr_assert_eq(parse_checked(MAX_ARGS, argv, "step02_blocked", &SINGLE, &opt), 0, "%s", err);
    cr_expect_eq(opt.block, 512u);
    cr_expect_eq(opt.n, 1024);
    cr_expect_eq(opt.reps, 9);
}
