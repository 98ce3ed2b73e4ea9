/* test_npy.c: Criterion tests of common/npy.c (add -DREDUCE_FLOAT for the float32 build; the tests
 * adapt to elem_t).
 *
 * Every test file is built byte by byte here, without numpy, so the tests pin down the format
 * itself: what numpy.save writes (round trips in numpy's own bytes, FILES that must be read), and
 * every way a file can be wrong (FILES that must be refused, one case per row, then a fuzz test).
 */
#define _XOPEN_SOURCE 700 /* mkstemp */

#include <float.h>
#include <unistd.h>

#include "npy.h"
#include "test_util.h" /* Criterion, npy_build */

#ifdef REDUCE_FLOAT
#define DESCR "<f4" /* the dtype this build reads */
#define OTHER "<i4" /* the other build's dtype, which this one must reject */
#else
#define DESCR "<i4"
#define OTHER "<f4"
#endif

/* Header dicts: numpy.save's for 3 elements of this build's dtype, and with one value replaced. */
#define HEAD "{'descr': '" DESCR "', 'fortran_order': False, "
#define SHAPE(s) HEAD "'shape': " s ", }"
#define DTYPE(d) "{'descr': " d ", 'fortran_order': False, 'shape': (3,), }"
#define DICT3 SHAPE("(3,)")

static const elem_t data4[4] = {1, -2, 3, 4}; /* the data of the files built here */

/* ---- Fixture: a fresh file per test (Criterion runs each test in its own process, so these
 * globals are private to one test). ---- */

static char path[] = "/tmp/test_npy.XXXXXX";
static unsigned char file[1 << 19]; /* bytes of a file a test builds or reads back */

static void setup(void)
{
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0, "mkstemp failed");
    close(fd);
}

static void teardown(void)
{
    remove(path);
}

TestSuite(npy, .init = setup, .fini = teardown);

static void write_file(const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

static char err[256]; /* the last message of npy_read */
static elem_t *data;  /* the data it read, to free() */

/* npy_read on the file at p, checking what holds for any file: success with data NULL exactly
 * when there are no elements, or -1, NULL data, n 0 and one line in err that names the file, cut
 * (still NUL-terminated) when err is short, and none when err is NULL. Returns the number of
 * elements read, or -1. */
static long try_read(const char *p)
{
    size_t n = 12345;
    data = (elem_t *)&data; /* not NULL, to see that npy_read sets it */
    int rc = npy_read(p, &data, &n, err, sizeof err);
    if (rc == 0) {
        cr_assert((n == 0) == (data == NULL));
        return (long)n;
    }
    cr_log_info("%s", err);
    cr_assert_eq(rc, -1);
    cr_assert_null(data);
    cr_assert_eq(n, 0);
    cr_assert_gt(strlen(err), 0, "no message");
    cr_assert_null(strchr(err, '\n'), "not one line: %s", err);
    cr_assert_not_null(strstr(err, p), "error '%s' does not name the file", err);
    char cut[8];
    memset(cut, 'x', sizeof cut);
    cr_assert_eq(npy_read(p, &data, &n, cut, sizeof cut), -1);
    cr_assert_eq(strnlen(cut, sizeof cut), sizeof cut - 1, "not cut to 7 characters: %s", err);
    cr_assert_eq(npy_read(p, &data, &n, NULL, 0), -1);
    return -1;
}

/* npy_read must succeed and return exactly n elements equal to want[]. */
static void expect_read(const elem_t *want, size_t n)
{
    cr_assert_eq(try_read(path), (long)n, "npy_read: %s", err);
    if (n > 0) /* memcmp: bit-exact, so -0.0f and NaN payloads count too */
        cr_assert_eq(memcmp(data, want, n * sizeof(elem_t)), 0);
    free(data);
}

/* ---- Round trips: npy_write must write numpy.save's very bytes, which npy_read reads back. For a
 * 1-D array, numpy 1.x and 2.x alike write the 10-byte preamble with header_len 118 (0x76), the
 * dict, spaces (numpy >= 1.24: 21 - digits(n) of them are room for the shape to grow), '\n', then
 * the data at byte 128, whatever the width of n: npy_build's bytes. n = 3 is
 * np.save(p, np.array([1, -2, 3], dtype=np.int32)). ---- */

ParameterizedTestParameters(npy, round_trip)
{
    static size_t sizes[] = {0, 1, 3, 9, 10, 1000, 99999, 100000}; /* 1 to 6 digits */
    return cr_make_param_array(size_t, sizes, COUNT(sizes));
}
ParameterizedTest(size_t *n, npy, round_trip)
{
    elem_t *a = calloc(*n + 1, sizeof *a); /* + 1: never malloc(0) */
    uint64_t state = 2463534242u;
    for (size_t i = 0; i < *n; i++) { /* random bits: every int32 / float32 pattern is fair */
        uint32_t x = (uint32_t)splitmix64(&state);
        memcpy(&a[i], &x, sizeof x);
    }
#ifdef REDUCE_FLOAT
    const elem_t edge[] = {1, -2, 3, -FLT_MAX, FLT_MAX, FLT_MIN, -0.0f, 1.5f, -2.25f};
#else
    const elem_t edge[] = {1, -2, 3, INT32_MIN, INT32_MAX, 0, -1, 123456789};
#endif
    for (size_t i = 0; i < *n && i < COUNT(edge); i++)
        a[i] = edge[i];
    static unsigned char want[sizeof file];
    char dict[80];
    snprintf(dict, sizeof dict, SHAPE("(%zu,)"), *n);
    size_t len = npy_build(want, sizeof want, 1, 0, dict, strlen(dict), a, *n * sizeof *a);
    cr_assert(memcmp(want, "\x93NUMPY\x01\x00\x76\x00", 10) == 0 && want[127] == '\n');
#ifndef REDUCE_FLOAT /* the int32 data bytes, spelled out: little-endian two's complement */
    cr_assert(*n < 3 || memcmp(want + 128, "\x01\0\0\0\xfe\xff\xff\xff\x03\0\0\0", 12) == 0);
#endif
    cr_assert_eq(npy_write(path, a, *n, err, sizeof err), 0, "npy_write: %s", err);
    FILE *f = fopen(path, "rb");
    cr_assert_eq(fread(file, 1, sizeof file, f), len, "n = %zu: not %zu bytes", *n, len);
    fclose(f);
    cr_assert_eq(memcmp(file, want, len), 0, "n = %zu: not numpy.save's bytes", *n);
    expect_read(a, *n);
    free(a);
    if (*n == 0) { /* data may be NULL when n == 0 */
        cr_assert_eq(npy_write(path, NULL, 0, err, sizeof err), 0, "%s", err);
        expect_read(NULL, 0);
    }
}

/* ---- FILES: files read, and files refused, one row each. A refusal is one sentence that names the
 * file; none may hang or allocate what the file does not hold. ---- */

struct file {         /* plain data: Criterion copies each row into the process that runs it */
    int major, minor; /* the version of a file built around the dict in bytes, as numpy.save does;
                       * 0: bytes are the whole file; -1: bytes are a path (%s: the test's file) */
    char bytes[96];   /* NUL bytes too: len counts them */
    size_t len;       /* bytes' length */
    size_t data_len;  /* bytes of data4 after the header */
    size_t size;      /* if not 0: the file cut or zero-extended to this length */
    int n;            /* the elements npy_read must return, or -1: it must refuse the file... */
    char word[32];    /* ...with a sentence that says this */
};
// clang-format off
#define AT(p, word) {-1, 0, p, 0, 0, 0, -1, word}
#define RAW(s, size, word) {0, 0, s, sizeof s - 1, 0, size, -1, word}
#define NPY(major, minor, s, data_len, word) {major, minor, s, sizeof s - 1, data_len, 0, -1, word}
#define V1(s, data_len, word) NPY(1, 0, s, data_len, word)
#define OK(major, s, n) {major, 0, s, sizeof s - 1, n * sizeof(elem_t), 0, n, ""}
static const struct file FILES[] = {
    /* Versions 2.0 and 3.0 (a 4-byte header_len), and headers numpy does not write but Python
     * reads alike: keys in any order, double quotes, odd whitespace, no trailing commas */
    OK(2, DICT3, 3),
    OK(3, DICT3, 3),
    OK(1, "{ \"shape\" :( 3 , ) ,'fortran_order':False,\t'descr':'" DESCR "'}", 3),
    OK(1, "{'shape': (3,), 'descr': '" DESCR "', 'fortran_order': False}", 3),
    /* No .npy file at all */
    AT("%s.missing", "cannot open"),
    AT("/tmp", "regular file"),      /* a directory */
    AT("/dev/zero", "regular file"), /* would feed zeros forever */
    AT("/dev/null", "regular file"), /* ends at once */
    AT("", ""),                      /* the empty path */
    RAW("PK\x03\x04 this is a zip", 0, "not a .npy file"),
    RAW("", 0, "not a .npy file"),
    RAW("\x93NUMPY\x01", 0, "not a .npy file"),
    /* The preamble */
    RAW("\x93NUMPY\x01\x00", 0, "truncated"),          /* ends after the version */
    RAW("\x93NUMPY\x02\x00\x10\x00", 0, "truncated"),  /* 2.0 needs 4 length bytes, has 2 */
    RAW("\x93NUMPY\x01\x00\x76", 0, "truncated"),      /* ends inside header_len */
    {1, 0, DICT3, sizeof DICT3 - 1, 0, 127, -1, "truncated"}, /* the header's last byte cut */
    RAW("\x93NUMPY\x01\x00\xff\xff{", 0, "truncated"), /* 65535: under the limit, not in the file */
    RAW("\x93NUMPY\x02\x00\x01\x00\x01\x00", 12 + 65537, "64 KiB"), /* over it, in the file */
    RAW("\x93NUMPY\x02\x00\xff\xff\xff\xff", 0, "64 KiB"), /* 4 GiB, refused before any malloc */
    RAW("\x93NUMPY\x03\x00\xff\xff\xff\xff", 0, "64 KiB"),
    NPY(4, 0, DICT3, 0, "version 4.0"),
    NPY(1, 1, DICT3, 0, "version 1.1"),
    RAW("\x93NUMPY\x01\x00\x00\x00", 0, "not a valid dict"), /* header_len 0 */
    /* header_len 0 with bytes after it, which must not be taken for a header */
    RAW("\x93NUMPY\x01\x00\x00\x00{'descr': '<i4'}", 0, "not a valid dict"),
    V1("{'descr': \0" DESCR "', 'fortran_order': False, 'shape': (3,), }", 0, "NUL"),
    /* Version 3.0 allows UTF-8; in a valid header for us it can only be an unknown key */
    NPY(3, 0, "{'d\xc3\xa9scr': '" DESCR "', 'fortran_order': False, 'shape': (0,), }", 0,
        "unexpected header key"),
    /* The dtype */
    V1(DTYPE("'>i4'"), 12, "dtype"),
    V1(DTYPE("'<i8'"), 12, "dtype"),
    V1(DTYPE("'<f8'"), 12, "dtype"),
    V1(DTYPE("'" OTHER "'"), 12, "dtype"),
    V1(DTYPE("'|O'"), 12, "dtype"),
    V1(DTYPE("'<u4'"), 12, "dtype"),
    V1(DTYPE("'|i4'"), 12, "dtype"),
    V1(DTYPE("[('a', '" DESCR "')]"), 12, "dtype"), /* a structured array */
    V1(DTYPE("5"), 12, "dtype"),
    V1(DTYPE("''"), 12, "dtype"),
    V1(DTYPE("'" DESCR " '"), 12, "dtype"), /* a blank inside the quotes: another dtype string */
    V1("{'descr': '" DESCR "', 'fortran_order': True, 'shape': (3,), }", 12, "fortran_order True"),
    /* The shape: the reader never reshapes, not even no elements or one row */
    V1(SHAPE("(1, 3)"), 12, "1-D"),
    V1(SHAPE("()"), 4, "1-D"), /* a 0-d scalar */
    V1(SHAPE("(0, 3)"), 0, "1-D"),
    V1(SHAPE("(3, 0)"), 0, "1-D"),
    V1(SHAPE("(3, 1)"), 12, "1-D"),
    V1(SHAPE("(99999999999999999999999,)"), 12, "overflows"),
    V1(SHAPE("(4611686018427387904,)"), 12, "overflows"), /* 2^62 elements, 2^64 bytes */
    V1(SHAPE("('3',)"), 12, "integers"),
    V1(SHAPE("(-3,)"), 12, "integers"),
    V1(SHAPE("3"), 12, "integers"),
    /* The data: more than 2^31 elements and 4 GiB, so 64-bit sizes, checked before allocating */
    V1(DICT3, 8, "truncated"),
    V1(SHAPE("(2147483649,)"), 12, "needs 8589934596 bytes"),
    V1(DICT3, 13, "1 trailing byte after"),
    V1(DICT3, 16, "4 trailing bytes"),
    /* The dict */
    V1("{'descr': '" DESCR "', 'shape': (3,), }", 12, "lacks 'fortran_order'"),
    V1("", 0, "not a valid dict"), /* blanks and '\n' */
    V1("\t\r", 0, "not a valid dict"),
    V1("{}", 0, "lacks 'descr'"),
    V1(HEAD "'shape': (3,), 'x': 1}", 12, "unexpected header key 'x'"),
    V1(HEAD "'shape': (3,), 'x\ny': 1}", 12, "unexpected header key 'x?y'"), /* still one line */
    V1("hello", 12, "not a valid dict"),
    V1(DICT3 " junk", 12, "not a valid dict"),
    V1("{'descr': '" DESCR "', 'fortran_order': Nope, 'shape': (3,), }", 12, "not a valid dict"),
    V1("{'descr': '" DESCR ", 'fortran_order': False, 'shape': (3,), }", 12, ""), /* no ' */
    V1("{'descr", 12, "not a valid dict"),
    V1(HEAD "'shape': (3,", 12, "shape"),
};
// clang-format on

ParameterizedTestParameters(npy, files)
{
    return cr_make_param_array(struct file, FILES, COUNT(FILES));
}
ParameterizedTest(struct file *t, npy, files)
{
    char at[128]; /* the file's path */
    size_t len = t->len;
    snprintf(at, sizeof at, t->major < 0 ? t->bytes : "%s", path);
    if (strncmp(at, "/dev/", 5) == 0 && access(at, R_OK) != 0)
        return; /* no such device here */
    if (t->major > 0) {
        len = npy_build(file, sizeof file, t->major, t->minor, t->bytes, len, data4, t->data_len);
        /* a file read has its data at 128: header_len 118 after 10 bytes, 116 after 12 */
        cr_assert(t->n < 0 || (file[8] | file[9] << 8) == (t->major == 1 ? 118 : 116));
    } else if (t->major == 0) {
        memcpy(file, t->bytes, len);
    }
    if (t->major >= 0)
        write_file(file, t->size ? t->size : len);
    if (t->n >= 0) {
        expect_read(data4, (size_t)t->n);
    } else {
        cr_assert_eq(try_read(at), -1, "expected failure (%s)", t->word);
        cr_assert_not_null(strstr(err, t->word), "error '%s' lacks '%s'", err, t->word);
    }
}

/* ---- Writes that fail ---- */

Test(npy, write_fails)
{
    const elem_t one = 1;
    cr_assert_eq(npy_write("/nonexistent/no/such/dir.npy", &one, 1, err, sizeof err), -1);
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
    write_file(file, len);
    long n = try_read(path);
    if (n < 0)
        return;
    /* Success: the header's own length field and n must account for every byte of the file. */
    size_t pre = file[6] == 1 ? 10 : 12;
    size_t header_len = file[8] | (size_t)file[9] << 8;
    if (pre == 12)
        header_len |= (size_t)file[10] << 16 | (size_t)file[11] << 24;
    cr_assert_eq(pre + header_len + (size_t)n * sizeof(elem_t), len);
    if (n > 0)
        cr_assert_eq(memcmp(data, file + pre + header_len, (size_t)n * sizeof(elem_t)), 0);
    free(data);
}

Test(npy, fuzz)
{
    elem_t vals[16];
    for (int i = 0; i < 16; i++)
        vals[i] = (elem_t)(i * 7 - 50);
    static const char *dicts[2] = {SHAPE("(16,)"),
                                   "{'shape':(16,),'fortran_order':False,'descr':'" DESCR "'}"};
    static unsigned char valid[2][512];
    size_t valid_len[2];
    for (int v = 0; v < 2; v++) { /* version 1.0 and 2.0 */
        valid_len[v] = npy_build(valid[v], sizeof valid[v], v + 1, 0, dicts[v], strlen(dicts[v]),
                                 vals, sizeof vals);
        /* Every truncation of both files fails cleanly. */
        for (size_t len = 0; len < valid_len[v]; len++) {
            memcpy(file, valid[v], len);
            check_any(len);
        }
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

    /* Random headers built from the tokens a header is made of: a valid dict with one part
     * replaced, or a random string of tokens. */
    // clang-format off
    static const char *tok[] = {"{", "}", "(", ")", ",", ":", " ", "\n", "'", "\"", "'descr'",
        "'fortran_order'", "'shape'", "'" DESCR "'", "'" OTHER "'", "True", "False", "16", "0",
        "3", "18446744073709551616", "-", "\x93", "[", "]", "\0"};
    static const char *parts[] = {"{", "'descr'", ":", "'" DESCR "'", ",", "'fortran_order'", ":",
        "False", ",", "'shape'", ":", "(", "16", ",", ")", ",", "}"};
    // clang-format on
    for (int i = 0; i < 2000; i++) {
        char dict[400];
        size_t len = 0;
        int one_part = rnd(2) == 0;
        size_t hit = one_part ? rnd((uint32_t)COUNT(parts)) : 0;
        size_t count = one_part ? COUNT(parts) : rnd(24);
        for (size_t p = 0; p < count; p++) {
            const char *s = one_part && p != hit ? parts[p] : tok[rnd((uint32_t)COUNT(tok))];
            size_t sl = strlen(s) ? strlen(s) : 1; /* "\0" token: one NUL byte */
            memcpy(dict + len, s, sl);
            len += sl;
        }
        /* header_len as numpy pads, then a data size that is right for n = 16 or n = 0 */
        check_any(npy_build(file, sizeof file, 1, 0, dict, len, vals, rnd(2) ? sizeof vals : 0));
    }
}
