/* test_npy.c: Criterion tests of common/npy.c.
 *
 *   gcc -std=c11 -Wall -Wextra -Werror -fwrapv -Icommon -Itests tests/test_npy.c common/npy.c \
 *       common/input.c -lcriterion
 *   (add -DREDUCE_FLOAT for the float32 build; the tests adapt to elem_t)
 *
 * Every test file is built byte by byte here, without numpy, so the tests pin down the format
 * itself: what numpy.save writes, and every way a file can be wrong.
 */
#define _XOPEN_SOURCE 700 /* mkdtemp */

#include <criterion/criterion.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"
#include "test_util.h"

#ifdef REDUCE_FLOAT
#define DESCR "<f4" /* the dtype this build reads */
#define OTHER "<i4" /* the other build's dtype, which this one must reject */
#else
#define DESCR "<i4"
#define OTHER "<f4"
#endif

/* The dict numpy.save writes for a 1-D array of 3 elements of this build's dtype. */
#define DICT3 "{'descr': '" DESCR "', 'fortran_order': False, 'shape': (3,), }"

/* ---- Fixture: a fresh temporary directory per test (Criterion runs each test in its own
 * process, so these globals are private to one test). ---- */

static char dir[64], path[96];
static unsigned char file[1 << 17]; /* bytes of the file a test builds; larger than any header */

static void setup(void)
{
    strcpy(dir, "/tmp/test_npy.XXXXXX");
    cr_assert_not_null(mkdtemp(dir), "mkdtemp failed");
    snprintf(path, sizeof path, "%s/a.npy", dir);
}

static void teardown(void)
{
    remove(path);
    rmdir(dir);
}

TestSuite(npy, .init = setup, .fini = teardown);

/* ---- Helpers ---- */

static void write_file(const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

/* Builds a .npy file in file[] as numpy does (npy_build, test_util.h). Returns its length. */
static size_t build(int major, int minor, const char *dict, const void *data, size_t data_len)
{
    return npy_build(file, sizeof file, major, minor, dict, strlen(dict), data, data_len);
}

/* Writes a version-1.0 file with this dict and data_len bytes of data (the 1..3 pattern). */
static void write_npy(const char *dict, size_t data_len)
{
    static const elem_t three[4] = {1, -2, 3, 4};
    cr_assert_leq(data_len, sizeof three);
    write_file(file, build(1, 0, dict, three, data_len));
}

/* npy_read must fail on the file at p: -1, NULL data, n 0, and a sentence containing word. */
static void expect_fail_at(const char *p, const char *word)
{
    elem_t *data = (elem_t *)&data; /* not NULL, to see that npy_read clears it */
    size_t n = 12345;
    char err[256] = "";
    int rc = npy_read(p, &data, &n, err, sizeof err);
    cr_log_info("%s", err);
    cr_assert_eq(rc, -1, "expected failure (%s)", word);
    cr_assert_null(data);
    cr_assert_eq(n, 0);
    cr_assert_gt(strlen(err), 0, "no message");
    cr_assert_null(strchr(err, '\n'), "not one line: %s", err);
    cr_assert_not_null(strstr(err, word), "error '%s' lacks '%s'", err, word);
    cr_assert_not_null(strstr(err, p), "error '%s' does not name the file", err);
}

static void expect_fail(const char *word)
{
    expect_fail_at(path, word);
}

/* npy_read must succeed and return exactly n elements equal to want[]. */
static void expect_read(const elem_t *want, size_t want_n)
{
    elem_t *data = NULL;
    size_t n = 0;
    char err[256] = "";
    cr_assert_eq(npy_read(path, &data, &n, err, sizeof err), 0, "npy_read: %s", err);
    cr_assert_eq(n, want_n);
    if (n == 0)
        cr_assert_null(data);
    else /* memcmp: bit-exact, so -0.0f and NaN payloads count too */
        cr_assert_eq(memcmp(data, want, n * sizeof(elem_t)), 0);
    free(data);
}

/* ---- Round trips ---- */

static void round_trip(size_t n)
{
    elem_t *a = calloc(n + 1, sizeof *a); /* + 1: never malloc(0) */
    uint64_t state = 2463534242u;
    for (size_t i = 0; i < n; i++) { /* random bits: every int32 / float32 pattern is fair */
        uint32_t x = (uint32_t)splitmix64(&state);
        memcpy(&a[i], &x, sizeof x);
    }
#ifdef REDUCE_FLOAT
    const elem_t edge[] = {-FLT_MAX, FLT_MAX, FLT_MIN, -0.0f, 1.5f, -2.25f};
#else
    const elem_t edge[] = {INT32_MIN, INT32_MAX, 0, -1, 1, 123456789};
#endif
    for (size_t i = 0; i < n && i < sizeof edge / sizeof *edge; i++)
        a[i] = edge[i];
    char err[256] = "";
    cr_assert_eq(npy_write(path, a, n, err, sizeof err), 0, "npy_write: %s", err);
    expect_read(a, n);
    free(a);
}

Test(npy, round_trip_0)
{
    round_trip(0);
}
Test(npy, round_trip_1)
{
    round_trip(1);
}
Test(npy, round_trip_1000)
{
    round_trip(1000);
}

Test(npy, write_null_data_when_empty)
{
    char err[256] = "";
    cr_assert_eq(npy_write(path, NULL, 0, err, sizeof err), 0, "%s", err);
    expect_read(NULL, 0);
}

/* ---- Files exactly as numpy writes them ---- */

/* np.save(p, np.array([1, -2, 3], dtype=np.int32)), numpy 1.x and 2.x alike: 10-byte preamble,
 * header_len 118 (0x76), dict, 59 spaces, '\n', then the data at offset 128. */
Test(npy, reads_numpy_bytes)
{
    const elem_t want[3] = {1, -2, 3};
    unsigned char npy[128 + sizeof want];
    memcpy(npy, "\x93NUMPY\x01\x00\x76\x00", 10);
    memcpy(npy + 10, DICT3, strlen(DICT3));
    memset(npy + 10 + strlen(DICT3), ' ', 127 - 10 - strlen(DICT3));
    npy[127] = '\n';
    memcpy(npy + 128, want, sizeof want);
#ifndef REDUCE_FLOAT /* the int32 data bytes, spelled out: little-endian two's complement */
    cr_assert_eq(memcmp(npy + 128, "\x01\0\0\0\xfe\xff\xff\xff\x03\0\0\0", 12), 0);
#endif
    write_file(npy, sizeof npy);
    expect_read(want, 3);

    /* npy_write must produce the very same bytes. */
    char err[256] = "";
    cr_assert_eq(npy_write(path, want, 3, err, sizeof err), 0, "%s", err);
    FILE *f = fopen(path, "rb");
    unsigned char got[sizeof npy + 1];
    size_t len = fread(got, 1, sizeof got, f);
    fclose(f);
    cr_assert_eq(len, sizeof npy);
    cr_assert_eq(memcmp(got, npy, sizeof npy), 0);
}

/* numpy >= 1.24 adds 21 - digits(n) spaces after the dict; the data must still start at a
 * multiple of 64 and the header end in '\n', whatever the width of n. */
ParameterizedTestParameters(npy, write_header_alignment)
{
    static size_t sizes[] = {0, 9, 10, 99999, 100000}; /* 1 to 6 digits */
    return cr_make_param_array(size_t, sizes, COUNT(sizes));
}
ParameterizedTest(size_t *n, npy, write_header_alignment)
{
    elem_t *a = calloc(*n + 1, sizeof *a);
    char err[256] = "";
    cr_assert_eq(npy_write(path, a, *n, err, sizeof err), 0, "%s", err);
    FILE *f = fopen(path, "rb");
    size_t len = fread(file, 1, sizeof file, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    size_t header_len = file[8] | (size_t)file[9] << 8;
    cr_assert_geq(len, 10 + header_len, "n = %zu: a %zu-byte file, header_len %zu", *n, len,
                  header_len);
    cr_assert_eq((10 + header_len) % 64, 0, "n = %zu: the data starts at %zu", *n, 10 + header_len);
    cr_assert_eq(file[10 + header_len - 1], '\n', "n = %zu: the header does not end in '\\n'", *n);
    cr_assert_eq((size_t)size, 10 + header_len + *n * sizeof(elem_t),
                 "n = %zu: %ld bytes, header_len %zu", *n, size, header_len);
    expect_read(a, *n);
    free(a);
}

Test(npy, version_2_and_3)
{
    const elem_t want[3] = {1, -2, 3};
    write_file(file, build(2, 0, DICT3, want, sizeof want));
    cr_assert_eq(file[8] | file[9] << 8, 128 - 12); /* 4-byte header_len: 116 */
    expect_read(want, 3);
    write_file(file, build(3, 0, DICT3, want, sizeof want));
    expect_read(want, 3);
}

Test(npy, tolerant_header)
{
    const elem_t want[3] = {1, -2, 3};
    /* keys in any order, double quotes, odd whitespace, no trailing commas */
    write_npy("{ \"shape\" :( 3 , ) ,'fortran_order':False,\t'descr':'" DESCR "'}", 12);
    expect_read(want, 3);
    write_npy("{'shape': (3,), 'descr': '" DESCR "', 'fortran_order': False}", 12);
    expect_read(want, 3);
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (0,), }", 0);
    expect_read(NULL, 0);
}

/* ---- Malformed files: one test per way of being wrong ---- */

Test(npy, missing_file)
{
    char missing[128];
    snprintf(missing, sizeof missing, "%s/missing.npy", dir);
    expect_fail_at(missing, "cannot open");
}

Test(npy, directory)
{
    expect_fail_at(dir, "regular file");
}

Test(npy, bad_magic)
{
    static const char zip[] = "PK\x03\x04 this is a zip";
    write_file(zip, sizeof zip - 1);
    expect_fail("not a .npy file");
    write_file("", 0);
    expect_fail("not a .npy file");
}

Test(npy, unsupported_version)
{
    write_file(file, build(4, 0, DICT3, NULL, 0));
    expect_fail("version 4.0");
    write_file(file, build(1, 1, DICT3, NULL, 0));
    expect_fail("version 1.1");
}

Test(npy, truncated_header)
{
    size_t len = build(1, 0, DICT3, NULL, 0);
    write_file(file, 9); /* inside header_len */
    expect_fail("truncated");
    write_file(file, len - 1); /* header_len says more than the file has */
    expect_fail("truncated");
}

Test(npy, header_len_too_large)
{
    build(2, 0, DICT3, NULL, 0);
    file[8] = 0x01, file[9] = 0x00, file[10] = 0x01, file[11] = 0x00; /* 65537 bytes */
    write_file(file, 12 + 65537);
    expect_fail("64 KiB");
}

Test(npy, header_with_nul)
{
    size_t len = build(1, 0, DICT3, NULL, 0);
    file[20] = '\0';
    write_file(file, len);
    expect_fail("NUL");
}

Test(npy, wrong_dtype)
{
    const char *bad[] = {">i4", "<i8", "<f8", OTHER, "|O", "<u4", "|i4"};
    char dict[128];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }",
                 bad[i]);
        write_npy(dict, 12);
        expect_fail("dtype");
    }
    write_npy("{'descr': [('a', '" DESCR "')], 'fortran_order': False, 'shape': (3,), }", 12);
    expect_fail("dtype"); /* a structured array */
}

Test(npy, fortran_order)
{
    write_npy("{'descr': '" DESCR "', 'fortran_order': True, 'shape': (3,), }", 12);
    expect_fail("fortran_order True");
}

Test(npy, not_1d)
{
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (1, 3), }", 12);
    expect_fail("1-D");
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (), }", 4); /* 0-d scalar */
    expect_fail("1-D");
}

Test(npy, shape_overflow)
{
    write_npy("{'descr': '" DESCR
              "', 'fortran_order': False, 'shape': (99999999999999999999999,), }",
              12);
    expect_fail("overflows");
    /* 2^62 elements fit in size_t, their 2^64 bytes do not */
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (4611686018427387904,), }",
              12);
    expect_fail("overflows");
}

Test(npy, shape_not_numeric)
{
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': ('3',), }", 12);
    expect_fail("integers");
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (-3,), }", 12);
    expect_fail("integers");
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': 3, }", 12);
    expect_fail("integers");
}

Test(npy, truncated_data)
{
    write_npy(DICT3, 8);
    expect_fail("truncated");
    /* more than 2^31 elements and 4 GiB: the sizes must be computed in 64 bits, before any
     * allocation */
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (2147483649,), }", 12);
    expect_fail("needs 8589934596 bytes");
}

Test(npy, trailing_bytes)
{
    write_npy(DICT3, 13);
    expect_fail("1 trailing byte after");
    write_npy(DICT3, 16);
    expect_fail("4 trailing bytes");
}

Test(npy, bad_dict)
{
    write_npy("{'descr': '" DESCR "', 'shape': (3,), }", 12);
    expect_fail("lacks 'fortran_order'");
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (3,), 'x': 1}", 12);
    expect_fail("unexpected header key 'x'");
    /* a key holding a newline: the message quotes it, still on one line */
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (3,), 'x\ny': 1}", 12);
    expect_fail("unexpected header key 'x?y'");
    write_npy("hello", 12);
    expect_fail("not a valid dict");
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (3,), } junk", 12);
    expect_fail("not a valid dict");
    write_npy("{'descr': '" DESCR "', 'fortran_order': Nope, 'shape': (3,), }", 12);
    expect_fail("not a valid dict");
}

Test(npy, small_error_buffer)
{
    elem_t *data;
    size_t n;
    char err[8];
    memset(err, 'x', sizeof err);
    cr_assert_eq(npy_read("/nonexistent/a.npy", &data, &n, err, sizeof err), -1);
    cr_assert_eq(strlen(err), sizeof err - 1); /* cut, but NUL-terminated */
    cr_assert_eq(npy_read("/nonexistent/a.npy", &data, &n, NULL, 0), -1);
}

Test(npy, write_fails)
{
    char bad[128], err[256] = "";
    const elem_t one = 1;
    snprintf(bad, sizeof bad, "%s/no/such/dir.npy", dir);
    cr_assert_eq(npy_write(bad, &one, 1, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "cannot create"), "%s", err);
    if (access("/dev/full", W_OK) == 0) { /* every write fails with ENOSPC */
        cr_assert_eq(npy_write("/dev/full", &one, 1, err, sizeof err), -1);
        cr_assert_not_null(strstr(err, "write failed"), "%s", err);
    }
}

/* ---- Fuzzing: thousands of deterministic mutations of a valid file. npy_read must never crash,
 * and must either succeed consistently with the bytes, or fail with a sentence and NULL data. ----
 */

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t below) /* deterministic, so a failure reproduces */
{
    return random_below(&rng, below);
}

static void check_any(size_t len)
{
    elem_t *data = (elem_t *)&data;
    size_t n = 777;
    char err[256] = "";
    write_file(file, len);
    int rc = npy_read(path, &data, &n, err, sizeof err);
    if (rc != 0) {
        cr_assert_eq(rc, -1);
        cr_assert_null(data);
        cr_assert_eq(n, 0);
        cr_assert_neq(err[0], '\0');
        return;
    }
    /* Success: the header's own length field and n must account for every byte of the file. */
    size_t pre = file[6] == 1 ? 10 : 12;
    size_t header_len = file[8] | (size_t)file[9] << 8;
    if (pre == 12)
        header_len |= (size_t)file[10] << 16 | (size_t)file[11] << 24;
    cr_assert_eq(pre + header_len + n * sizeof(elem_t), len);
    cr_assert((n == 0) == (data == NULL));
    if (n > 0)
        cr_assert_eq(memcmp(data, file + pre + header_len, n * sizeof(elem_t)), 0);
    free(data);
}

Test(npy, fuzz)
{
    elem_t vals[16];
    for (int i = 0; i < 16; i++)
        vals[i] = (elem_t)(i * 7 - 50);
    static unsigned char valid[2][512];
    size_t valid_len[2];
    valid_len[0] = build(1, 0, "{'descr': '" DESCR "', 'fortran_order': False, 'shape': (16,), }",
                         vals, sizeof vals);
    memcpy(valid[0], file, valid_len[0]);
    valid_len[1] =
        build(2, 0, "{'shape':(16,),'fortran_order':False,'descr':'" DESCR "'}", vals, sizeof vals);
    memcpy(valid[1], file, valid_len[1]);

    /* Every truncation of both files fails cleanly. */
    for (int v = 0; v < 2; v++)
        for (size_t len = 0; len < valid_len[v]; len++) {
            memcpy(file, valid[v], len);
            check_any(len);
        }

    /* Random byte flips in the preamble and header, random header_len values. */
    for (int i = 0; i < 2000; i++) {
        int v = (int)rnd(2);
        memcpy(file, valid[v], valid_len[v]);
        for (uint32_t k = 1 + rnd(3); k > 0; k--) /* both headers end at byte 128 */
            file[rnd(128)] = (unsigned char)rnd(256);
        if (rnd(4) == 0)
            for (int b = 8; b < (v == 0 ? 10 : 12); b++)
                file[b] = (unsigned char)(rnd(3) == 0 ? rnd(256) : file[b] + rnd(3) - 1);
        check_any(valid_len[v] - (rnd(8) == 0 ? rnd(64) : 0));
    }

    /* Random headers built from the tokens a header is made of. */
    static const char *tok[] = {"{",       "}",           "(",
                                ")",       ",",           ":",
                                " ",       "\n",          "'",
                                "\"",      "'descr'",     "'fortran_order'",
                                "'shape'", "'" DESCR "'", "'" OTHER "'",
                                "True",    "False",       "16",
                                "0",       "3",           "18446744073709551616",
                                "-",       "\x93",        "[",
                                "]",       "\0"};
    const size_t ntok = sizeof tok / sizeof *tok;
    for (int i = 0; i < 2000; i++) {
        char dict[400];
        size_t len = 0;
        if (rnd(2) == 0) { /* a valid dict with one part replaced */
            const char *parts[] = {"{",  "'descr'", ":", "'" DESCR "'", ",", "'fortran_order'",
                                   ":",  "False",   ",", "'shape'",     ":", "(",
                                   "16", ",",       ")", ",",           "}"};
            size_t np = sizeof parts / sizeof *parts, hit = rnd((uint32_t)np);
            for (size_t p = 0; p < np; p++) {
                const char *s = p == hit ? tok[rnd((uint32_t)ntok)] : parts[p];
                size_t sl = strlen(s) ? strlen(s) : 1; /* "\0" token: one NUL byte */
                memcpy(dict + len, s, sl);
                len += sl;
            }
        } else {
            for (uint32_t t = rnd(24); t > 0; t--) {
                const char *s = tok[rnd((uint32_t)ntok)];
                size_t sl = strlen(s) ? strlen(s) : 1;
                memcpy(dict + len, s, sl);
                len += sl;
            }
        }
        /* header_len as numpy pads, then a data size that is right for n = 16 or n = 0 */
        check_any(npy_build(file, sizeof file, 1, 0, dict, len, vals, rnd(2) ? sizeof vals : 0));
    }
}

/* ---- Hostile files beyond the malformed ones above: a header_len of zero, a 4 GiB header_len on
 * a tiny file (refused before any allocation), a file that stops right after the version,
 * something that is not a regular file (/dev/zero never ends, /dev/null is empty), an empty path,
 * an unterminated string, a header of blanks, a dtype that is not a string, a 2-D shape holding no
 * elements, and UTF-8 in a version 3.0 header. None may hang or allocate what the file does not
 * hold. ---- */

Test(npy, header_len_zero)
{
    write_file("\x93NUMPY\x01\x00\x00\x00", 10);
    expect_fail("not a valid dict");
    /* the same with data after it: the bytes must not be taken for a header */
    write_file("\x93NUMPY\x01\x00\x00\x00{'descr': '<i4'}", 26);
    expect_fail("not a valid dict");
}

/* header_len = 2^32 - 1 in a 12-byte file: refused from the length alone, before a 4 GiB malloc. */
Test(npy, header_len_4_gib_on_a_tiny_file)
{
    write_file("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12);
    expect_fail("64 KiB");
    write_file("\x93NUMPY\x03\x00\xff\xff\xff\xff", 12);
    expect_fail("64 KiB");
    /* the largest 1.0 header_len, 65535, is under the limit but the file does not hold it */
    write_file("\x93NUMPY\x01\x00\xff\xff{", 11);
    expect_fail("truncated");
}

Test(npy, ends_after_the_version)
{
    write_file("\x93NUMPY\x01\x00", 8);
    expect_fail("truncated");
    write_file("\x93NUMPY\x02\x00\x10\x00", 10); /* 2.0 needs 4 length bytes, has 2 */
    expect_fail("truncated");
    write_file("\x93NUMPY\x01", 7);
    expect_fail("not a .npy file");
}

/* Not regular files: /dev/zero would feed zeros forever, /dev/null ends at once. */
Test(npy, not_a_regular_file)
{
    if (access("/dev/zero", R_OK) == 0)
        expect_fail_at("/dev/zero", "regular file");
    if (access("/dev/null", R_OK) == 0)
        expect_fail_at("/dev/null", "regular file");
}

Test(npy, empty_path)
{
    expect_fail_at("", "");
}

Test(npy, unterminated_string)
{
    write_npy("{'descr': '" DESCR ", 'fortran_order': False, 'shape': (3,), }", 12);
    expect_fail("");
    write_npy("{'descr", 12);
    expect_fail("not a valid dict");
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (3,", 12);
    expect_fail("shape");
}

Test(npy, blank_header)
{
    write_npy("", 0); /* 53 spaces and '\n' */
    expect_fail("not a valid dict");
    write_npy("\t\r", 0);
    expect_fail("not a valid dict");
    write_npy("{}", 0);
    expect_fail("lacks 'descr'");
}

Test(npy, dtype_not_a_string)
{
    write_npy("{'descr': 5, 'fortran_order': False, 'shape': (3,), }", 12);
    expect_fail("dtype");
    write_npy("{'descr': '', 'fortran_order': False, 'shape': (3,), }", 12);
    expect_fail("dtype");
    write_npy("{'descr': '" DESCR " ', 'fortran_order': False, 'shape': (3,), }", 12);
    expect_fail("dtype"); /* a trailing blank inside the quotes is another dtype string */
}

/* Two dimensions are refused even when they hold nothing or one row: the reader never reshapes. */
Test(npy, two_d_without_elements)
{
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (0, 3), }", 0);
    expect_fail("1-D");
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (3, 0), }", 0);
    expect_fail("1-D");
    write_npy("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (3, 1), }", 12);
    expect_fail("1-D");
}

/* Version 3.0 allows UTF-8 in the header; a valid header for us is ASCII, anything else is a key
 * or a value we do not know, refused by name. */
Test(npy, utf8_header)
{
    const char dict[] = "{'d\xc3\xa9scr': '" DESCR "', 'fortran_order': False, 'shape': (0,), }";
    write_file(file, build(3, 0, dict, NULL, 0));
    expect_fail("unexpected header key");
}
