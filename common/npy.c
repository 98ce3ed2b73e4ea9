/* npy.c: the .npy reader and writer (see npy.h for the format and the contract).
 *
 * The reader trusts nothing in the file: every length is checked against the file's size before
 * it is used, so a corrupt header can neither overflow a buffer nor make us allocate gigabytes.
 */
#define _POSIX_C_SOURCE 200809L /* stat: we need the file size before allocating */
#define _FILE_OFFSET_BITS 64    /* a 64-bit off_t even on 32-bit hosts, for files over 2 GiB */

#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The file's little-endian bytes are copied straight into elem_t, with no byte swapping. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c needs a little-endian host"
#endif

#ifdef REDUCE_FLOAT
#define NPY_DESCR "<f4"
#else
#define NPY_DESCR "<i4"
#endif
#define NPY_ASTYPE "numpy." ELEM_NAME /* numpy.int32 or numpy.float32 */

#define HEADER_MAX 65536u /* numpy writes a 1-D header in < 200 bytes: more is corruption */
#define SHOW(len) ((len) > 40 ? 40 : (int)(len)) /* header text in a message: one short line */

/* Writes one sentence, "path: " and the message, into err; returns -1 so that callers can
 * `return FAIL(...)`. */
__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t err_len, const char *path,
                                                      const char *fmt, ...)
{
    if (err != NULL && err_len > 0) {
        size_t len = (size_t)snprintf(err, err_len, "%s: ", path);
        va_list ap;
        va_start(ap, fmt);
        if (len < err_len) /* vsnprintf cuts the sentence to err_len, always NUL-terminated */
            vsnprintf(err + len, err_len - len, fmt, ap);
        va_end(ap);
        for (char *c = err; *c; ++c) /* a newline in a quoted key or path: still one line */
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                *c = '?';
    }
    return -1;
}
#define FAIL(...) fail(err, err_len, path, __VA_ARGS__)

/* ---- Header parsing. The header is NUL-terminated and holds no other NUL, so '\0' ends every
 * scan below: no pointer ever runs past the buffer. ---- */

static const char *skip_ws(const char *p)
{
    return p + strspn(p, " \t\r\n");
}

/* A Python string literal 'abc' or "abc" (dtype strings and key names need no escapes).
 * Sets *s, *len to the text between the quotes; returns the position after it, or NULL. */
static const char *parse_str(const char *p, const char **s, size_t *len)
{
    const char *end = *p == '\'' || *p == '"' ? strchr(p + 1, *p) : NULL;
    if (end == NULL)
        return NULL;
    *s = p + 1;
    *len = (size_t)(end - *s);
    return end + 1;
}

/* A shape tuple of non-negative integers: (), (5,), (2, 3), with or without a trailing comma.
 * Sets *ndim and *dim0, the first dimension (ULLONG_MAX if it overflows); returns the position
 * after ')', or NULL when it is not such a tuple. */
static const char *parse_shape(const char *p, size_t *ndim, unsigned long long *dim0)
{
    *ndim = 0;
    *dim0 = 0;
    if (*p++ != '(')
        return NULL;
    for (p = skip_ws(p); *p != ')'; p = skip_ws(p)) {
        if (*p < '0' || *p > '9') /* strtoull would take a sign or blanks */
            return NULL;
        char *end;
        unsigned long long v = strtoull(p, &end, 10); /* saturates at ULLONG_MAX */
        if ((*ndim)++ == 0)
            *dim0 = v;
        p = skip_ws(end);
        if (*p == ',')
            p++;
        else if (*p != ')')
            return NULL;
    }
    return p + 1;
}

static int key_is(const char *key, size_t len, const char *name)
{
    return len == strlen(name) && memcmp(key, name, len) == 0;
}

/* Parses the header dict {'descr': ..., 'fortran_order': ..., 'shape': ...} (keys in any order)
 * and checks it describes a 1-D C-order array of elem_t; sets *n to its element count. */
static int parse_header(const char *path, const char *p, size_t *n, char *err, size_t err_len)
{
    const char *descr = NULL, *shape = NULL, *key;
    size_t descr_len = 0, shape_len = 0, key_len, ndim = 0;
    unsigned long long dim0 = 0;
    int fortran = -1; /* -1 until the key is seen */

    p = skip_ws(p);
    if (*p++ != '{')
        goto not_dict;
    for (p = skip_ws(p); *p != '}'; p = skip_ws(p)) {
        if ((p = parse_str(p, &key, &key_len)) == NULL || *(p = skip_ws(p)) != ':')
            goto not_dict;
        p = skip_ws(p + 1);
        if (key_is(key, key_len, "descr")) {
            if ((p = parse_str(p, &descr, &descr_len)) == NULL)
                return FAIL(
                    "dtype is not a simple type string (structured arrays are not "
                    "supported); save a plain 1-D array (numpy.save(path, a.astype(" NPY_ASTYPE
                    ")))");
        } else if (key_is(key, key_len, "fortran_order")) {
            fortran = strncmp(p, "True", 4) == 0 ? 1 : strncmp(p, "False", 5) == 0 ? 0 : -1;
            if (fortran < 0)
                goto not_dict;
            p += fortran ? 4 : 5;
        } else if (key_is(key, key_len, "shape")) {
            if ((p = parse_shape(shape = p, &ndim, &dim0)) == NULL) {
                size_t k = strcspn(shape, ")}"); /* show the bad value up to its ')' */
                k += shape[k] == ')';
                while (k > 0 && strchr(", \t\r\n", shape[k - 1]))
                    k--;
                return FAIL("shape %.*s is not a tuple of non-negative integers; expected a "
                            "1-D shape such as (5,)",
                            SHOW(k), shape);
            }
            shape_len = (size_t)(p - shape);
        } else {
            return FAIL("unexpected header key '%.*s'; expected only 'descr', 'fortran_order' "
                        "and 'shape'",
                        SHOW(key_len), key);
        }
        if (*(p = skip_ws(p)) == ',')
            p++;
        else if (*p != '}')
            goto not_dict;
    }
    if (*skip_ws(p + 1) != '\0')
        goto not_dict;

    const char *lacks = !descr ? "descr" : fortran < 0 ? "fortran_order" : !shape ? "shape" : NULL;
    if (lacks)
        return FAIL("the header lacks '%s'; expected 'descr', 'fortran_order' and 'shape' as "
                    "numpy.save writes them",
                    lacks);
    if (!key_is(descr, descr_len, NPY_DESCR))
        return FAIL("dtype '%.*s' is not supported; save the array as " ELEM_NAME
                    " (numpy.save(path, a.astype(" NPY_ASTYPE ")))",
                    SHOW(descr_len), descr);
    if (fortran)
        return FAIL("fortran_order True is not supported; save a C-order 1-D array "
                    "(numpy.save(path, numpy.ascontiguousarray(a).ravel()))");
    if (ndim != 1)
        return FAIL("shape %.*s is %zu-D; expected a 1-D array (numpy.save(path, a.ravel()))",
                    SHOW(shape_len), shape, ndim);
    if (dim0 > SIZE_MAX / sizeof(elem_t))
        return FAIL("shape %.*s is too large: its size in bytes overflows size_t; expected a "
                    "1-D array that fits in memory",
                    SHOW(shape_len), shape);
    *n = (size_t)dim0;
    return 0;

not_dict:
    return FAIL(
        "the header is not a valid dict like {'descr': '" NPY_DESCR
        "', 'fortran_order': False, 'shape': (5,), }; expected a file written by numpy.save");
}

/* Checks the file f (of file_size bytes) and, unless data is NULL (npy_shape), reads its data. */
static int read_npy(FILE *f, unsigned long long file_size, const char *path, elem_t **data,
                    size_t *n, char *err, size_t err_len)
{
    unsigned char pre[12]; /* magic (6), version (2), header_len (2 in 1.0, 4 in 2.0 and 3.0) */
    char header[HEADER_MAX + 1]; /* + 1 for the terminating NUL the parser relies on */

    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0)
        return FAIL("not a .npy file (it does not start with \\x93NUMPY); expected a file "
                    "written by numpy.save");
    /* 3.0 differs from 2.0 only in allowing UTF-8 in the header, which a valid header for us
     * never contains. */
    int major = pre[6], minor = pre[7];
    if (!((major == 1 || major == 2 || major == 3) && minor == 0))
        return FAIL(".npy format version %d.%d is not supported; expected 1.0, 2.0 or 3.0", major,
                    minor);
    size_t len_size = major == 1 ? 2 : 4;
    if (fread(pre + 8, 1, len_size, f) != len_size)
        return FAIL("the header is truncated: the file ends inside the header length; the file "
                    "is incomplete");
    unsigned long long header_len = 0;
    memcpy(&header_len, pre + 8, len_size); /* little-endian, as the host */
    if (header_len > HEADER_MAX)
        return FAIL("header_len is %llu bytes, more than the 64 KiB limit; the file is corrupt "
                    "(numpy.save writes about 128 bytes)",
                    header_len);
    unsigned long long data_start = 8 + len_size + header_len;
    if (data_start > file_size)
        return FAIL("the header is truncated: header_len says %llu bytes but only %llu follow; "
                    "the file is incomplete",
                    header_len, file_size - 8 - len_size);
    if (fread(header, 1, (size_t)header_len, f) != header_len)
        return FAIL("cannot read the header (%s)", strerror(errno));
    header[header_len] = '\0';
    if (memchr(header, '\0', (size_t)header_len) != NULL)
        return FAIL("the header contains a NUL byte; expected ASCII text");
    if (parse_header(path, header, n, err, err_len) != 0)
        return -1;

    /* Compare the data size with what the file holds before allocating anything (parse_header
     * checked that the size fits in size_t). */
    unsigned long long bytes = (unsigned long long)*n * sizeof(elem_t);
    unsigned long long have = file_size - data_start;
    if (have < bytes)
        return FAIL("the data is truncated: shape (%zu,) needs %llu bytes but only %llu follow "
                    "the header; the file is incomplete",
                    *n, bytes, have);
    if (have > bytes)
        return FAIL("%llu trailing byte%s after the %zu elements that shape (%zu,) says; "
                    "expected the file to end with the data",
                    have - bytes, have - bytes == 1 ? "" : "s", *n, *n);
    if (data == NULL || *n == 0) /* npy_shape, or nothing to read: *data stays NULL */
        return 0;

    *data = malloc((size_t)bytes);
    if (*data == NULL)
        return FAIL("out of memory: %zu elements need %llu bytes", *n, bytes);
    size_t got = fread(*data, 1, (size_t)bytes, f); /* glibc retries the kernel's short reads */
    if (got != bytes) {
        FAIL("read failed after %zu of %llu data bytes (%s)", got, bytes,
             ferror(f) ? strerror(errno) : "the file shrank while being read");
        free(*data);
        *data = NULL;
        return -1;
    }
    return 0;
}

/* npy_read with data == NULL is npy_shape: the header and the file's size, no data. */
int npy_read(const char *path, elem_t **data, size_t *n, char *err, size_t err_len)
{
    if (data)
        *data = NULL;
    *n = 0;
    /* Only a regular file: opening a named pipe or a device could block forever. */
    struct stat st;
    int found = stat(path, &st) == 0;
    if (found && !S_ISREG(st.st_mode))
        return FAIL("not a regular file; expected a .npy file written by numpy.save");
    FILE *f = found ? fopen(path, "rb") : NULL; /* errno: why stat or fopen failed */
    if (f == NULL)
        return FAIL("cannot open (%s); expected a .npy file written by numpy.save",
                    strerror(errno));
    int rc = read_npy(f, (unsigned long long)st.st_size, path, data, n, err, err_len);
    fclose(f); /* read-only: nothing to lose if closing fails */
    if (rc != 0)
        *n = 0;
    return rc;
}

int npy_shape(const char *path, size_t *n, char *err, size_t err_len)
{
    return npy_read(path, NULL, n, err, err_len);
}

int npy_write(const char *path, const elem_t *data, size_t n, char *err, size_t err_len)
{
    /* The header exactly as numpy.save writes it: the dict with sorted keys, then spaces and a '\n'
     * up to a multiple of 64 bytes. The dict is 56 + digits(n) <= 76 characters (numpy >= 1.24
     * pads it to 77 so that the shape can grow to 21 digits in place): with the 10-byte preamble,
     * the header ends at byte 128 for any n, in the same bytes for any numpy version. */
    char dict[80], pre[129]; /* + 1: snprintf's NUL */
    snprintf(dict, sizeof dict,
             "{'descr': '" NPY_DESCR "', 'fortran_order': False, 'shape': (%zu,), }", n);
    /* version 1.0 and header_len 118 (0x76), little-endian: each %c is a zero byte */
    snprintf(pre, sizeof pre, "\x93NUMPY\x01%c\x76%c%-117s\n", 0, 0, dict);

    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return FAIL("cannot create (%s); expected a writable path", strerror(errno));
    size_t total = n * sizeof(elem_t); /* data holds n elements, so this cannot overflow */
    int ok = fwrite(pre, 1, 128, f) == 128 && (n == 0 || fwrite(data, 1, total, f) == total);
    int saved = errno;
    if (fclose(f) != 0 && ok) /* fclose flushes: a full disk may show only here */
        ok = 0, saved = errno;
    if (!ok) {
        remove(path); /* a partial file would fail to load later with a more confusing message */
        return FAIL("write failed (%s); check the disk space and permissions", strerror(saved));
    }
    return 0;
}
