/* options.c: the command line of every stage program, checked before any CUDA call. */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int parse_unsigned(const char *text, uint64_t max, uint64_t *value)
{
    /* Digits only: strtoull alone would take leading spaces and a sign, and wrap "-1". */
    if (text == NULL || *text == '\0' || text[strspn(text, "0123456789")] != '\0')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(text, NULL, 10);
    if (errno == ERANGE || v > max)
        return -1;
    *value = v;
    return 0;
}

static int fail(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    for (char *c = err; *c; ++c) /* a quoted value must not break the message's one line */
        if ((unsigned char)*c < ' ')
            *c = '?';
    return EXIT_USAGE;
}

static void usage(FILE *out, const char *stage_name, const struct stage_info *stage)
{
    fprintf(out,
            "usage: %s [--n N | --input FILE.npy] [--seed S] [--reps R] [--block B]\n"
            "Sums N " ELEM_NAME " elements with stage %s and checks the sum against step00's\n"
#ifdef REDUCE_FLOAT
            "loop in double precision, within the error bound of the stage's order of additions.\n"
#else
            "sequential loop, exactly.\n"
#endif
            "  --n N         elements to sum (default: %zu)\n"
            "  --input FILE  sum a 1-D " ELEM_NAME " array saved by numpy.save instead\n"
            "  --seed S      seed of the random input (default: 1)\n"
            "  --reps R      timed repeats, the median is reported (default: %d)\n"
            "  --block B     threads per block, a power of two in [%u, %u] (default: %u)\n"
            "  --stage-info  print what this stage takes, as one line of key=value, and exit\n"
            "%s"
            "Prints: stage device n sum ref result median_ms GB/s peak%%\n"
            "Exit status: 0 ok, 1 wrong sum, 2 bad usage or input, 3 no CUDA device or CUDA "
            "error.\n",
            stage_name, stage_name,
            stage->single_block ? 2 * (size_t)default_block(stage) : DEFAULT_N, DEFAULT_REPS,
            BLOCK_MIN, BLOCK_MAX, default_block(stage),
            !stage->on_gpu        ? "This stage runs on the CPU.\n"
            : stage->single_block ? "This stage runs one thread block: it takes n <= 2 x block.\n"
            : stage->fixed_block  ? "This stage runs blocks of one size only, the default: its\n"
                                    "order of additions depends on n alone.\n"
                                  : "");
}

int options_check_n(size_t n, unsigned int block, const char *stage_name,
                    const struct stage_info *stage, char *err, size_t err_len)
{
    if (stage->fixed_block && block != stage->fixed_block)
        return fail(err, err_len,
                    "this stage runs blocks of %u threads only, on every GPU, so that its order of "
                    "additions, and so a float sum's bits, depend on n alone (got --block %u).",
                    stage->fixed_block, block);
    if (stage->single_block && n > 2 * (size_t)block)
        return fail(err, err_len,
                    "%s reduces in one thread block of %u threads, two elements each, so it takes "
                    "n <= %zu (got n = %zu); use step05_segmented or later for larger inputs.",
                    stage_name, block, 2 * (size_t)block, n);
    if (n > SIZE_MAX / sizeof(elem_t))
        return fail(err, err_len, "n = %zu elements is more bytes than this machine can address.",
                    n);
    return 0;
}

int options_parse(int argc, char **argv, const char *stage_name, const struct stage_info *stage,
                  struct options *opt, FILE *out, char *err, size_t err_len)
{
    static const struct option longopts[] = {
        {"n", required_argument, NULL, 'n'},
        {"seed", required_argument, NULL, 's'},
        {"reps", required_argument, NULL, 'r'},
        {"block", required_argument, NULL, 'b'},
        {"input", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {"stage-info", no_argument, NULL, 'I'},
        {NULL, 0, NULL, 0},
    };
    *opt = (struct options){.seed = 1, .reps = DEFAULT_REPS, .block = default_block(stage)};
    int n_given = 0;
    uint64_t v;

    optind = 0; /* GNU getopt: 0 re-initialises, so tests can parse several command lines */
    opterr = 0; /* we print our own one-sentence errors */
    int c;
    while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_unsigned(optarg, SIZE_MAX / sizeof(elem_t), &v) != 0) {
                if (*optarg && optarg[strspn(optarg, "0123456789")] == '\0') /* digits only */
                    return fail(err, err_len,
                                "--n %s is too large: this machine addresses at most %zu "
                                "elements.",
                                optarg, SIZE_MAX / sizeof(elem_t));
                return fail(err, err_len,
                            "--n wants a whole number of elements, such as 1000000 (got '%s').",
                            optarg);
            }
            opt->n = (size_t)v;
            n_given = 1;
            break;
        case 's':
            if (parse_unsigned(optarg, UINT64_MAX, &v))
                return fail(err, err_len,
                            "--seed wants a whole number from 0 to 2^64 - 1 (got '%s').", optarg);
            opt->seed = v;
            break;
        case 'r':
            if (parse_unsigned(optarg, MAX_REPS, &v) || v == 0)
                return fail(err, err_len, "--reps wants a whole number from 1 to %d (got '%s').",
                            MAX_REPS, optarg);
            opt->reps = (int)v;
            break;
        case 'b':
            if (parse_unsigned(optarg, BLOCK_MAX, &v) || v < BLOCK_MIN || (v & (v - 1)) != 0)
                return fail(err, err_len,
                            "--block wants a power of two from %u to %u threads (got '%s').",
                            BLOCK_MIN, BLOCK_MAX, optarg);
            opt->block = (unsigned int)v;
            break;
        case 'i':
            if (*optarg == '\0')
                return fail(err, err_len, "--input wants the path of a .npy file.");
            opt->input_path = optarg;
            break;
        case 'h':
            usage(out, stage_name, stage);
            return 1;
        case 'I': /* the stage_info, for scripts and tests: they read it, never --help's words */
            fprintf(out, "stage=%s on_gpu=%d single_block=%d in_place=%d fixed_block=%u "
                         "default_block=%u\n",
                    stage_name, stage->on_gpu, stage->single_block, stage->in_place,
                    stage->fixed_block, default_block(stage));
            return 1;
        case ':':
            return fail(err, err_len, "%s needs a value; see --help.", argv[optind - 1]);
        default:
            /* --help=VALUE or --stage-info=VALUE; -I is not an option (--stage-info has no
             * short form), but getopt names it in optopt all the same */
            if ((optopt == 'h' || optopt == 'I') && argv[optind - 1][1] == '-')
                return fail(err, err_len, "--%s takes no value; see --help.",
                            optopt == 'h' ? "help" : "stage-info");
            if (optopt > 0) /* a short option such as -x: getopt names it in optopt */
                return fail(err, err_len, "unknown option '-%c'; see --help.", optopt);
            return fail(err, err_len, "unknown option '%s'; see --help.", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return fail(err, err_len, "unexpected argument '%s'; options start with --, see --help.",
                    argv[optind]);
    if (n_given && opt->input_path)
        return fail(err, err_len, "give either --n or --input, not both.");
    if (!n_given)
        opt->n = stage->single_block ? 2 * (size_t)opt->block : DEFAULT_N;
    return options_check_n(opt->n, opt->block, stage_name, stage, err, err_len);
}
