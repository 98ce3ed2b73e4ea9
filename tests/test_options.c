/* test_options.c: the command line of every stage program (common/options.c), CPU only.
 *
 * COMMAND_LINES: command lines, each a test case of its own (Criterion's parameterized tests),
 * with every value options_parse must give, or the words its --help or its one-sentence refusal
 * must hold. Then options_check_n, parse_unsigned, and a fuzz loop of thousands of lines made from
 * a fixed seed, each predicted as it is made. check() holds every line to what is true of any: 0,
 * 1 (--help, the usage printed) or EXIT_USAGE (one sentence, on one line); argv not reordered;
 * accepted values in their documented ranges, the input path one of the arguments. */
#define _GNU_SOURCE /* fmemopen */
#include <errno.h>
#include <inttypes.h>

#include "test_util.h" /* Criterion, harness.h, show_args */

/* Two stages as the harness sees them: 'm' takes any n, 's' works in a single block. */
static const struct stage_info MULTI = {.on_gpu = true};
static const struct stage_info SINGLE = {.on_gpu = true, .single_block = true, .in_place = true};
#define MULTI_NAME "step05_segmented"
#define SINGLE_NAME "step02_blocked"
#define MAX_ARGS 24

/* A command line and what it must give: plain data, as Criterion copies each row into the
 * process that runs it. The fuzz loop's lines keep their arguments elsewhere. */
struct command_line {
    char stages[3];     /* "m", "s" or "ms" (both) */
    int argc;           /* the arguments after the program's name */
    char argv[8][40];   /* those arguments */
    int status;         /* 0, 1 (--help), EXIT_USAGE, or -1: not predicted */
    char words[8][128]; /* 0: every value; else the words the usage or the sentence holds */
};

static char err[512], help[4096], line[4200]; /* what the last parse wrote, and its line */

/* Parses argv[0..argc) as stage s ('m' or 's') into *opt, checks what holds for any line and
 * what `want` predicts, and returns the status. */
static int check(char s, int argc, char **argv, const struct command_line *want,
                 struct options *opt)
{
    const struct stage_info *stage = s == 's' ? &SINGLE : &MULTI;
    const char *name = s == 's' ? SINGLE_NAME : MULTI_NAME;
    char *before[MAX_ARGS + 1], got[160];
    bool long_arg = false; /* longer than err: the sentence that quotes it is cut */
    for (int i = 1; i < argc; ++i)
        long_arg |= strlen(argv[i]) > 300;
    memcpy(before, argv, (size_t)(argc + 1) * sizeof *argv);
    snprintf(line, sizeof line, "%s %s", name, show_args(argv + 1));
    FILE *out = fmemopen(help, sizeof help, "w+"); /* w+: the buffer starts empty */
    memset(opt, 0xA5, sizeof *opt); /* garbage: an accepted line must set every field */
    memset(err, 'Z', sizeof err);   /* garbage: a refusal must write a terminated sentence */
    int rc = options_parse(argc, argv, name, stage, opt, out, err, sizeof err);
    fclose(out);
    size_t len = strnlen(err, sizeof err);
    cr_assert(rc == 0 || rc == 1 || rc == EXIT_USAGE, "%s: returned %d", line, rc);
    cr_assert(!memcmp(before, argv, (size_t)(argc + 1) * sizeof *argv), "%s: argv moved", line);
    cr_assert(rc == 1 ? strstr(help, "usage:") || !strncmp(help, "stage=", 6) : !help[0],
              "%s: returned %d, usage %.80s", line, rc, help);
    cr_assert_eq(rc == EXIT_USAGE, err[0] != 'Z', "%s: returned %d, error %.80s", line, rc, err);
    if (rc == EXIT_USAGE) { /* one sentence, on one line */
        cr_assert(len > 0 && len < sizeof err, "%s: no message", line);
        for (size_t i = 0; i < len; ++i)
            cr_assert_geq((unsigned char)err[i], ' ', "%s: a control character in: %s", line, err);
        const char *q1 = strchr(err, '\''), *q2 = strrchr(err, '\''); /* the quoted value */
        cr_assert(long_arg || (len < sizeof err - 1 && err[len - 1] == '.'),
                  "%s: not a whole sentence: %s", line, err);
        for (const char *c = strstr(err, ". "); c && !long_arg; c = strstr(c + 1, ". "))
            cr_assert(q1 && c > q1 && c < q2, "%s: more than one sentence: %s", line, err);
    } else {
        err[0] = '\0'; /* nothing written: empty, for the messages that print it */
    }
    cr_assert(want->status == -1 || rc == want->status, "%s: returned %d, not %d (%s)", line, rc,
              want->status, err);
    for (int w = 0; rc != 0 && want->status != -1 && w < 8 && want->words[w][0]; ++w)
        cr_assert_not_null(strstr(rc == 1 ? help : err, want->words[w]), "%s: no '%s' in: %s", line,
                           want->words[w], rc == 1 ? help : err);
    if (rc != 0)
        return rc;
    cr_assert(opt->block >= BLOCK_MIN && opt->block <= BLOCK_MAX &&
                  !(opt->block & (opt->block - 1)) && opt->reps >= 1 && opt->reps <= MAX_REPS &&
                  opt->n <= SIZE_MAX / sizeof(elem_t) &&
                  (!stage->single_block || opt->n <= 2 * (size_t)opt->block),
              "%s: took n=%zu reps=%d block=%u", line, opt->n, opt->reps, opt->block);
    char *in = (char *)opt->input_path;
    bool inside = in == NULL; /* else it points into one of the arguments */
    for (int i = 1; i < argc && !inside; ++i)
        inside = in >= argv[i] && in < argv[i] + strlen(argv[i]);
    cr_assert(inside, "%s: input_path is not an argument", line);
    int n = snprintf(got, sizeof got, "n=%zu seed=%" PRIu64 " reps=%d block=%u", opt->n, opt->seed,
                     opt->reps, opt->block);
    snprintf(got + n, sizeof got - (size_t)n, in ? " input=%s" : "", in);
    cr_assert(want->status == -1 || !strcmp(got, want->words[0]), "%s: gave %s, not %s", line, got,
              want->words[0]);
    return rc;
}

/* ---- The table ---- A row: the stages, the arguments, what they give. A row of just
 * "--opt value" is tried as "--opt=value" too. */
#define ARGS(...) .argc = (int)COUNT(((const char *[]){__VA_ARGS__})), .argv = {__VA_ARGS__}
#define GIVES(values) .status = 0, .words = {values}
#define HELP(...) .status = 1, .words = {__VA_ARGS__}
#define REFUSED(...) .status = EXIT_USAGE, .words = {__VA_ARGS__}
// clang-format off
/* Refused by both stages, with one sentence that names the option and quotes what was wrong */
#define BAD(opt, value) {"ms", ARGS(opt, value), REFUSED(opt, "'" value "'")}
#define TOO_LARGE(n) {"ms", ARGS("--n", n), REFUSED("--n " n " is too large")}
#define MISSING(opt) {"ms", ARGS(opt), REFUSED(opt, "needs a value")}
#define NOT_BOTH(...) {"ms", ARGS(__VA_ARGS__), REFUSED("--n", "--input", "not both")}
#define UNKNOWN(quoted, ...) {"ms", ARGS(__VA_ARGS__), REFUSED("unknown option", quoted)}
#define STRAY(quoted, ...) {"ms", ARGS(__VA_ARGS__), REFUSED("unexpected argument", quoted)}

/* Every accepted row spells out every value, the defaults too: n = 2^24 (a single-block stage:
 * 2 * block), seed 1, 20 repeats, block 256 (a single-block stage: 1024), no input file. */
static const struct command_line COMMAND_LINES[] = {
    {"m", .argc = 0,                        GIVES("n=16777216 seed=1 reps=20 block=256")},
    {"s", .argc = 0,                        GIVES("n=2048 seed=1 reps=20 block=1024")},
    {"m", ARGS("--n", "0"),                 GIVES("n=0 seed=1 reps=20 block=256")}, /* identity */
    {"m", ARGS("--n", "007"),               GIVES("n=7 seed=1 reps=20 block=256")},
    {"m", ARGS("--n", "4294967296"),        GIVES("n=4294967296 seed=1 reps=20 block=256")},
    {"m", ARGS("--n", "4611686018427387903"), /* the most int32s that 64 bits address */
        GIVES("n=4611686018427387903 seed=1 reps=20 block=256")},
    {"m", ARGS("--n", "5", "--n", "7"),     GIVES("n=7 seed=1 reps=20 block=256")}, /* the last */
    {"m", ARGS("--seed", "0"),              GIVES("n=16777216 seed=0 reps=20 block=256")},
    {"m", ARGS("--seed", "18446744073709551615"),
        GIVES("n=16777216 seed=18446744073709551615 reps=20 block=256")},
    {"m", ARGS("--reps", "1"),              GIVES("n=16777216 seed=1 reps=1 block=256")},
    {"m", ARGS("--reps", "100000"),         GIVES("n=16777216 seed=1 reps=100000 block=256")},
    {"m", ARGS("--input", "data.npy"), GIVES("n=16777216 seed=1 reps=20 block=256 input=data.npy")},
    {"m", ARGS("--input=a", "--seed", "3"), GIVES("n=16777216 seed=3 reps=20 block=256 input=a")},
    {"m", ARGS("--block", "512", "--reps=3", "--seed", "77", "--n", "1000"),
        GIVES("n=1000 seed=77 reps=3 block=512")},
    /* --block: a single-block stage's n follows it (2 * block), the last one given */
    {"m", ARGS("--block", "32"),            GIVES("n=16777216 seed=1 reps=20 block=32")},
    {"s", ARGS("--block", "32"),            GIVES("n=64 seed=1 reps=20 block=32")},
    {"s", ARGS("--block", "1024"),          GIVES("n=2048 seed=1 reps=20 block=1024")},
    {"s", ARGS("--block", "512", "--block", "64", "--block", "512", "--reps=9"),
        GIVES("n=1024 seed=1 reps=9 block=512")},
    /* --help stops the parse: what follows it is not looked at */
    {"m", ARGS("--help"),
        HELP("--n", "--input", "--seed", "--reps", "--block", MULTI_NAME, "(default: 16777216)")},
    {"s", ARGS("--help"),
        HELP("--n", "--input", "--seed", "--reps", "--block", SINGLE_NAME, "(default: 2048)")},
    {"m", ARGS("--seed", "4", "--help", "--fast"), HELP("--block")},
    /* --stage-info: the stage_info in one line, as tests/stages.h and sanitize.sh read it */
    {"m", ARGS("--stage-info"), HELP("stage=step05_segmented on_gpu=1 single_block=0 in_place=0 "
                                     "fixed_block=0 default_block=256\n")},
    {"s", ARGS("--n", "9", "--stage-info"), HELP("single_block=1 in_place=1 fixed_block=0 defa")},
    BAD("--n", ""), BAD("--n", "-1"), BAD("--n", "+5"), BAD("--n", " 5"), BAD("--n", "5 "),
    BAD("--n", "abc"), BAD("--n", "1e6"), BAD("--n", "0x10"), BAD("--n", "1.5"),
    BAD("--n", "\xff\xfe"), /* not UTF-8 */ BAD("--n", "\xef\xbc\x95"), /* FULLWIDTH DIGIT FIVE */
    BAD("--n", "\xd9\xa3"), /* ARABIC-INDIC DIGIT THREE */ BAD("--seed", "18446744073709551616"),
    BAD("--seed", "99999999999999999999"), BAD("--seed", "-1"), BAD("--seed", "-0"),
    BAD("--seed", ""), BAD("--seed", "seven"), BAD("--seed", "0x1"), BAD("--reps", "100001"),
    BAD("--reps", "-3"), BAD("--reps", ""), BAD("--reps", "2.5"), BAD("--reps", "many"),
    BAD("--block", "48"), BAD("--block", "16"), BAD("--block", "2048"), BAD("--block", "0"),
    BAD("--block", "256k"), BAD("--block", ""), BAD("--block", "-256"), BAD("--block", "1"),
    BAD("--block", "31"), BAD("--block", "33"), BAD("--block", "1023"), BAD("--block", "4096"),
    {"ms", ARGS("--n", "1\n2"),             REFUSED("--n", "'1?2'")}, /* a control character: '?' */
    {"ms", ARGS("--n", "12x"),              REFUSED("--n", "'12x'", "whole number")},
    {"ms", ARGS("--reps", "0"),             REFUSED("--reps", "'0'", "100000")}, /* the limit */
    {"ms", ARGS("--n=5", "--n=x"),          REFUSED("--n", "'x'")}, /* the last of two is wrong */
    {"ms", ARGS("--input", ""),             REFUSED("--input")},
    /* too large: says why (2^64; 2^62 int32s, one past the largest n on 64 bits) */
    TOO_LARGE("999999999999999999999"), TOO_LARGE("18446744073709551616"),
    TOO_LARGE("4611686018427387904"),
    NOT_BOTH("--n", "100", "--input", "a.npy"), NOT_BOTH("--input", "a.npy", "--n", "100"),
    NOT_BOTH("--n=10", "--input=a.npy"),
    /* Unknown options, a missing value, stray arguments */
    UNKNOWN("'--fast'", "--fast"), UNKNOWN("'--fast'", "--n", "5", "--fast"),
    UNKNOWN("--size", "--size", "5"), UNKNOWN("'-n'", "-n", "5"), UNKNOWN("'-x'", "-xy"),
    UNKNOWN("'-I'", "-I"),
    {"ms", ARGS("--help=1"),                REFUSED("--help takes no value")},
    {"ms", ARGS("--stage-info=1"),          REFUSED("--stage-info takes no value")},
    MISSING("--n"), MISSING("--reps"), MISSING("--block"), MISSING("--input"),
    {"ms", ARGS("--n", "5", "--seed"),      REFUSED("--seed", "needs a value")},
    {"ms", ARGS("--n", "5", "--n"),         REFUSED("--n", "needs a value")},
    STRAY("'stray'", "stray"), STRAY("'stray'", "--n", "5", "stray"),
    STRAY("'stray'", "stray", "--n", "5"), STRAY("'1000'", "--seed", "1", "1000"), STRAY("''", ""),
    STRAY("'x?y'", "--input", "a.npy", "x\ty"),
    /* the options end at "--" or at the first argument that is not one; the rest are arguments */
    STRAY("'--n'", "--", "--n", "5"), STRAY("'stray'", "stray", "--fast"),
    /* The single-block limit n <= 2 * block: the refusal names the stage, the limit, the n given
     * and the stage to use instead; the multi-block stage takes the same lines */
    {"s", ARGS("--n", "2048"),              GIVES("n=2048 seed=1 reps=20 block=1024")},
    {"s", ARGS("--n", "2049"),              REFUSED("2048", MULTI_NAME, SINGLE_NAME, "2049")},
    {"s", ARGS("--block", "64", "--n", "129"), REFUSED("128", MULTI_NAME, SINGLE_NAME, "129")},
    {"s", ARGS("--n", "129", "--block", "64"), REFUSED("128", MULTI_NAME, SINGLE_NAME, "129")},
    {"s", ARGS("--n", "128", "--block", "64"), GIVES("n=128 seed=1 reps=20 block=64")},
    {"m", ARGS("--block", "64", "--n", "129"), GIVES("n=129 seed=1 reps=20 block=64")},
};
// clang-format on

ParameterizedTestParameters(options, command_line)
{
    return cr_make_param_array(struct command_line, COMMAND_LINES, COUNT(COMMAND_LINES));
}

ParameterizedTest(struct command_line *c, options, command_line)
{
    char eq[96];
    bool pair = c->argc == 2 && !strncmp(c->argv[0], "--", 2) && !strchr(c->argv[0], '=');
    for (const char *s = c->stages; *s; ++s)
        for (int joined = 0; joined <= pair; ++joined) { /* "--opt value", then "--opt=value" */
            char *argv[10] = {"prog"};
            for (int i = 0; i < c->argc; ++i)
                argv[i + 1] = c->argv[i];
            if (joined) {
                snprintf(eq, sizeof eq, "%s=%s", argv[1], argv[2]);
                argv[1] = eq;
                argv[2] = NULL;
            }
            struct options opt;
            check(*s, c->argc + 1 - joined, argv, c, &opt);
        }
}

/* What options_parse cannot be given: n past what this machine addresses (from a .npy file's
 * shape). A single-block stage's limit, for every block size, is test_stage.c's limit_on_n. */
Test(options, check_n)
{
    char msg[512] = "";
    cr_expect(options_check_n(SIZE_MAX, 256, MULTI_NAME, &MULTI, msg, sizeof msg) == EXIT_USAGE &&
                  msg[0],
              "more bytes than addressable");
}

/* parse_unsigned, which every numeric option goes through, at limits no option has; the spellings
 * it refuses are in COMMAND_LINES. Status 0: taken, with that value; -1: refused. */
Test(options, parse_unsigned)
{
    const uint64_t M64 = UINT64_MAX;
    // clang-format off
    static const struct { const char *text; uint64_t max; int status; uint64_t value; } CASES[] = {
        {"0", 0, 0, 0}, {"000", 10, 0, 0}, {"10", 10, 0, 10}, {"11", 10, -1, 0},
        {"999", 1000, 0, 999}, {"1000", 1000, 0, 1000}, {"1001", 1000, -1, 0},
        {"10000", 1000, -1, 0}, {"4294967295", UINT32_MAX, 0, UINT32_MAX},
        {"4294967296", UINT32_MAX, -1, 0}, {"18446744073709551610", M64, 0, M64 - 5},
        {"18446744073709551620", M64, -1, 0}, {"99999999999999999999999", M64, -1, 0},
        {NULL, M64, -1, 0}, {"1.0", M64, -1, 0}, {"1,000", M64, -1, 0}, {"5\n", M64, -1, 0}};
    // clang-format on
    for (size_t i = 0; i < COUNT(CASES); ++i) {
        uint64_t v = 12345; /* so that a success must write the value */
        int status = parse_unsigned(CASES[i].text, CASES[i].max, &v);
        cr_expect(status == CASES[i].status && (status || v == CASES[i].value),
                  "'%s' with max %" PRIu64 ": returned %d, value %" PRIu64, CASES[i].text,
                  CASES[i].max, status, v);
    }
}

/* ---- The fuzz loop ---- A line is made piece by piece, each piece's fate known from --help's
 * rules as it is made (numbers checked with strtoull): a value taken sets its option, the last one
 * given wins; the first piece that breaks a rule decides the refusal and a word of it; the options
 * end at "--" or at the first word. After a garbage piece (anything at all) nothing is predicted,
 * and check()'s rules for any line alone hold. */
static uint64_t rng = 0x9E3779B97F4A7C15ull; /* a fixed seed: a failure reproduces */
static char tokens[MAX_ARGS][192];
static const char *want_path; /* where the input path a made line gives lies in it */
static const char *const FLAGS[] = {"--n", "--seed", "--reps", "--block", "--input"};
static const uint64_t LO[] = {0, 0, 1, BLOCK_MIN}, /* the range of --n, --seed, --reps, --block */
    HI[] = {SIZE_MAX / sizeof(elem_t), UINT64_MAX, MAX_REPS, BLOCK_MAX};
// clang-format off
static const char *const ODD[] = { /* values and spellings that have broken option parsers */
    "", "00", "-1", "+1", "-0", "007", "31", "33", "1023", "1025", "2049", "100001", "4294967296",
    "18446744073709551616", "1000000000000000000000000000000", "1e3", "1.0", ".5", "0x20", "1,000",
    "0000000000000000000000000000000000000032", "1_000", "1 000", " 5", "5 ", "5\t", "12x", "nan",
    "-inf", "=", "==5", "--", "-", "%s%n%s", "'5'", "\xef\xbc\x95", "\xd9\xa3", "\xe2\x80\x93" "5",
    "5\xcc\xb8", "\xff\xfe", "\xc3", "\x80", "\x7f", "\x1b[31m5", "/tmp/x y\xc3\xa9.npy", "--help",
    "--n", "--s", "--se", "--r", "--b", "--blo", "--i", "--inp", "--h", "--he", "---n", "--N",
    "-nn", "-s", "-h", "-xy", "-:", "-?", "--=", "--=5", "--n=", "--help=", "--n==", "--b=64",
    "--\xc3\xa9"};
static const char *const PIECES[][2] = { /* an argument, a word of its refusal; --help: none */
    {"--help", NULL}, {"-h", NULL}, {"--", NULL}, {"--frobnicate", "unknown option"},
    {"--nn", "unknown option"}, {"--x=1", "unknown option"}, {"-n", "unknown option '-n'"},
    {"-xy", "unknown option '-x'"}, {"--help=1", "--help takes no value"}, {"-5", "'-5'"},
    {"stray", "unexpected argument"}, {"", "unexpected argument"}, {"-", "unexpected argument"}};
// clang-format on

/* A value for FLAGS[i]: half the time one it takes; else an odd one, an edge of its range (its
 * least or greatest value, or one past), up to 40 random digits or random bytes 1..255. */
static void random_value(uint32_t i, char *out, size_t len)
{
    uint32_t kind = random_below(&rng, 8), d = 1 + random_below(&rng, 40);
    uint64_t r = splitmix64(&rng), edge = r % 2 ? HI[i % 4] : LO[i % 4];
    uint64_t taken[] = {r % (r >> 63 ? 4097 : 1u << 30), r, 1 + r % MAX_REPS, 32u << r % 6, r};
    if (kind < 4)
        snprintf(out, len, "%" PRIu64 "%s", taken[i], i == 4 ? ".npy" : "");
    else if (kind == 4)
        snprintf(out, len, "%s", ODD[r % COUNT(ODD)]);
    else if (kind == 5 && i < 4) /* past 0 and 2^64 - 1 it wraps: ODD has "-1" and 2^64 */
        snprintf(out, len, "%" PRIu64, r % 4 < 2 ? edge : r % 2 ? edge + 1 : edge - 1);
    else
        for (out[d] = '\0'; d-- > 0;)
            out[d] = (char)(kind == 6 ? '0' + random_below(&rng, 10) : 1 + random_below(&rng, 255));
}

/* Makes a command line for `stage` in argv, and in *want what it must give. Returns argc. */
static int make_line(char **argv, const struct stage_info *stage, struct command_line *want)
{
    uint64_t v[4] = {UINT64_MAX, 1, DEFAULT_REPS, default_block(stage)}; /* n: not given yet */
    bool ended = false;
    const char *word = NULL; /* of the refusal */
    int argc = 1;
    memset(want, 0, sizeof *want);
    want_path = NULL;
    /* The first piece that breaks a rule decides the status (-1: not predicted) and the word. */
#define DECIDE(rc, w) (void)(want->status || (want->status = (rc), word = (w)))
    for (uint32_t k = random_below(&rng, 8); k > 0 && argc + 2 < MAX_ARGS; --k) {
        uint32_t r = random_below(&rng, 100), i = random_below(&rng, 5);
        char value[128], *tok = tokens[argc], *val = tokens[argc + 1];
        if (ended) /* after "--" every piece is an argument */
            DECIDE(EXIT_USAGE, "unexpected argument");
        if (r < 55) { /* --NAME VALUE or --NAME=VALUE */
            random_value(i, value, sizeof value);
            snprintf(tok, sizeof tokens[0], r % 2 ? "%s=%s" : "%s", FLAGS[i], value);
            argv[argc++] = tok;
            if (r % 2 == 0)
                argv[argc++] = strcpy(val, value);
            errno = 0;
            uint64_t x = strtoull(value, NULL, 10);
            if (i == 4 ? !*value
                       : !*value || strspn(value, "0123456789") != strlen(value) ||
                             errno == ERANGE || x < LO[i] || x > HI[i] || (i == 3 && (x & (x - 1))))
                DECIDE(EXIT_USAGE, FLAGS[i]);
            else if (want->status == 0 && i == 4) /* taken: the last one given wins */
                want_path = argv[argc - 1] + (r % 2 ? strlen("--input=") : 0);
            else if (want->status == 0)
                v[i] = x;
        } else if (r < 75) { /* --help, -h, "--", an unknown option, a word */
            const char *const *p = PIECES[random_below(&rng, COUNT(PIECES))];
            argv[argc++] = (char *)p[0];
            ended |= strcmp(p[0], "--") == 0;
            if (strcmp(p[0], "--") != 0)
                DECIDE(p[1] ? EXIT_USAGE : 1, p[1]);
        } else if (r < 93) { /* garbage, glued to a value or not */
            random_value(i, value, sizeof value);
            snprintf(tok, sizeof tokens[0], "%s%s", ODD[random_below(&rng, COUNT(ODD))],
                     r % 2 ? value : "");
            argv[argc++] = tok;
            DECIDE(-1, NULL);
        } else { /* an option without its value, at the end */
            argv[argc++] = (char *)FLAGS[i];
            DECIDE(EXIT_USAGE, "needs a value");
            break;
        }
    }
    argv[argc] = NULL;
    if (v[0] != UINT64_MAX && want_path)
        DECIDE(EXIT_USAGE, "not both");
    if (v[0] == UINT64_MAX) /* more than any n taken */
        v[0] = stage->single_block ? 2 * v[3] : DEFAULT_N;
    if (stage->single_block && v[0] > 2 * v[3])
        DECIDE(EXIT_USAGE, MULTI_NAME);
#undef DECIDE
    if (want->status != 0)
        snprintf(want->words[0], sizeof want->words[0], "%s", word ? word : "");
    else
        snprintf(want->words[0], sizeof want->words[0],
                 "n=%" PRIu64 " seed=%" PRIu64 " reps=%" PRIu64 " block=%" PRIu64 "%s%s", v[0],
                 v[1], v[2], v[3], want_path ? " input=" : "", want_path ? want_path : "");
    return argc;
}

Test(options, fuzz)
{
    int seen[2][3] = {{0}};
    struct options o;
    struct command_line want;
    for (int l = 0; l < 6000; ++l) {
        char *argv[MAX_ARGS + 1], s = "ms"[l % 2];
        int rc = check(s, make_line(argv, s == 's' ? &SINGLE : &MULTI, &want), argv, &want, &o);
        cr_assert(want.status || o.input_path == want_path, "%s: not the last --input", line);
        seen[l % 2][rc == EXIT_USAGE ? 2 : rc] += want.status != -1; /* predicted lines */
    }
    for (int s = 0; s < 2; ++s) /* taken, --help, refused: the lines reach every outcome */
        cr_expect(seen[s][0] > 150 && seen[s][1] > 60 && seen[s][2] > 750, "%c: %d, %d, %d",
                  "ms"[s], seen[s][0], seen[s][1], seen[s][2]);
    static char huge[20000]; /* longer than err: the sentence is cut, terminated, on one line */
    memset(huge, '7', sizeof huge - 1);
    want = (struct command_line){.status = EXIT_USAGE, .words = {"--n"}};
    check('m', 3, (char *[]){"prog", "--n", huge, NULL}, &want, &o);
    memset(huge, 'x', sizeof huge - 1); /* a path that long is the file system's problem */
    want = (struct command_line){.status = -1};
    cr_expect_eq(check('m', 3, (char *[]){"prog", "--input", huge, NULL}, &want, &o), 0);
}
