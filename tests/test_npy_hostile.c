/* test_npy_hostile.c: .npy inputs that are hostile in ways tests/test_npy.c does not try yet.
 *
 * test_npy.c already refuses an empty file, a header_len over 64 KiB, Fortran order, '>i4', '<i8'
 * and other dtypes, 2-D and 0-d shapes, truncated headers and data, trailing bytes and NULs, and
 * fuzzes mutations of valid files. What is left, each a test below: a header_len of zero, a
 * 4 GiB header_len on a tiny file (refused before any allocation), a file that stops right after
 * the version, something that is not a file (/dev/zero never ends, /dev/null is empty), an empty
 * path, an unterminated string, a header of blanks, a dtype that is not a string, a 2-D shape
 * holding no elements, and UTF-8 in a version 3.0 header. Each must give -1, NULL, n = 0 and one
 * sentence, and must not hang or allocate what the file does not hold. */
#define _XOPEN_SOURCE 700 /* mkdtemp */

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"

#ifdef REDUCE_FLOAT
#define DESCR "<f4" /* the dtype this build reads */
#else
#define DESCR "<i4"
#endif

static char dir[64], path[96];

static void setup(void)
{
    strcpy(dir, "/tmp/test_npy_hostile.XXXXXX");
    cr_assert_not_null(mkdtemp(dir), "mkdtemp failed");
    snprintf(path, sizeof path, "%s/a.npy", dir);
}

static void teardown(void)
{
    remove(path);
    rmdir(dir);
}

TestSuite(npy_hostile, .init = setup, .fini = teardown);

static void write_bytes(const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

/* A version-1.0 file with this header text (padded as numpy pads it) and data_len bytes of data. */
static void write_v1(const char *dict, size_t data_len)
{
    static unsigned char file[4096];
    size_t dict_len = strlen(dict);
    size_t header_len = dict_len + 1 + (64 - (10 + dict_len + 1) % 64) % 64;
    cr_assert_lt(10 + header_len + data_len, sizeof file);
    memcpy(file, "\x93NUMPY\x01\x00", 8);
    file[8] = (unsigned char)header_len, file[9] = (unsigned char)(header_len >> 8);
    memset(file + 10, ' ', header_len);
    memcpy(file + 10, dict, dict_len);
    file[10 + header_len - 1] = '\n';
    memset(file + 10 + header_len, 0x5A, data_len);
    write_bytes(file, 10 + header_len + data_len);
}

/* npy_read(at) must fail cleanly with a sentence containing `word`. */
static void expect_fail_at(const char *at, const char *word)
{
    elem_t *data = (elem_t *)&data; /* garbage: a failure must set NULL */
    size_t n = 12345;
    char err[512] = "";
    cr_assert_eq(npy_read(at, &data, &n, err, sizeof err), -1, "%s was accepted", at);
    cr_expect_null(data);
    cr_expect_eq(n, 0);
    cr_expect_gt(strlen(err), 0, "no message");
    cr_expect_null(strchr(err, '\n'), "not one line: %s", err);
    cr_expect_not_null(strstr(err, word), "the message does not say '%s': %s", word, err);
}

static void expect_fail(const char *word)
{
    expect_fail_at(path, word);
}

Test(npy_hostile, header_len_zero)
{
    write_bytes("\x93NUMPY\x01\x00\x00\x00", 10);
    expect_fail("not a valid dict");
    /* the same with data after it: the bytes must not be taken for a header */
    write_bytes("\x93NUMPY\x01\x00\x00\x00{'descr': '<i4'}", 26);
    expect_fail("not a valid dict");
}

/* header_len = 2^32 - 1 in a 12-byte file: refused from the length alone, before a 4 GiB malloc. */
Test(npy_hostile, header_len_4_gib_on_a_tiny_file)
{
    write_bytes("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12);
    expect_fail("64 KiB");
    write_bytes("\x93NUMPY\x03\x00\xff\xff\xff\xff", 12);
    expect_fail("64 KiB");
    /* the largest 1.0 header_len, 65535, is under the limit but the file does not hold it */
    write_bytes("\x93NUMPY\x01\x00\xff\xff{", 11);
    expect_fail("truncated");
}

Test(npy_hostile, ends_after_the_version)
{
    write_bytes("\x93NUMPY\x01\x00", 8);
    expect_fail("truncated");
    write_bytes("\x93NUMPY\x02\x00\x10\x00", 10); /* 2.0 needs 4 length bytes, has 2 */
    expect_fail("truncated");
    write_bytes("\x93NUMPY\x01", 7);
    expect_fail("not a .npy file");
}

/* Not regular files: /dev/zero would feed zeros forever, /dev/null ends at once. */
Test(npy_hostile, not_a_regular_file)
{
    if (access("/dev/zero", R_OK) == 0)
        expect_fail_at("/dev/zero", "regular file");
    if (access("/dev/null", R_OK) == 0)
        expect_fail_at("/dev/null", "regular file");
}

Test(npy_hostile, empty_path)
{
    expect_fail_at("", "");
}

Test(npy_hostile, unterminated_string)
{
    write_v1("{'descr': '" DESCR ", 'fortran_order': False, 'shape': (3,), }", 12);
    expect_fail("");
    write_v1("{'descr", 12);
    expect_fail("not a valid dict");
    write_v1("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (3,", 12);
    expect_fail("shape");
}

Test(npy_hostile, blank_header)
{
    write_v1("", 0); /* 53 spaces and '\n' */
    expect_fail("not a valid dict");
    write_v1("\t\r", 0);
    expect_fail("not a valid dict");
    write_v1("{}", 0);
    expect_fail("lacks 'descr'");
}

Test(npy_hostile, dtype_not_a_string)
{
    write_v1("{'descr': 5, 'fortran_order': False, 'shape': (3,), }", 12);
    expect_fail("dtype");
    write_v1("{'descr': '', 'fortran_order': False, 'shape': (3,), }", 12);
    expect_fail("dtype");
    write_v1("{'descr': '" DESCR " ', 'fortran_order': False, 'shape': (3,), }", 12);
    expect_fail("dtype"); /* a trailing blank inside the quotes is another dtype string */
}

/* Two dimensions are refused even when they hold nothing or one row: the reader never reshapes. */
Test(npy_hostile, two_d_without_elements)
{
    write_v1("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (0, 3), }", 0);
    expect_fail("1-D");
    write_v1("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (3, 0), }", 0);
    expect_fail("1-D");
    write_v1("{'descr': '" DESCR "', 'fortran_order': False, 'shape': (3, 1), }", 12);
    expect_fail("1-D");
}

/* Version 3.0 allows UTF-8 in the header; a valid header for us is ASCII, anything else is a key
 * or a value we do not know, refused by name. */
Test(npy_hostile, utf8_header)
{
    static unsigned char file[128];
    const char dict[] = "{'d\xc3\xa9scr': '" DESCR "', 'fortran_order': False, 'shape': (0,), }";
    memcpy(file, "\x93NUMPY\x03\x00", 8);
    size_t header_len = 128 - 12;
    file[8] = (unsigned char)header_len, file[9] = 0, file[10] = 0, file[11] = 0;
    memset(file + 12, ' ', header_len);
    memcpy(file + 12, dict, sizeof dict - 1);
    file[127] = '\n';
    write_bytes(file, sizeof file);
    expect_fail("unexpected header key");
}
