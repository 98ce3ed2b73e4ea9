/* npy.c: the .npy reader and writer (see npy.h for the format and the contract).
 *
 * The reader trusts nothing in the file: every length is checked against the file's size before
 * it is used, so a corrupt header can neither overflow a buffer nor make us allocate gigabytes.
 */
#define _POSIX_C_SOURCE 200809L /* fstat and fileno: we need the file size before allocating */
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
#define NPY_ASTYPE "numpy.float32"
#else
#define NPY_DESCR "<i4"
#define NPY_ASTYPE "numpy.int32"
#endif

#define ALIGN 64          /* numpy pads the header so the data starts at a multiple of this */
#define GROWTH_DIGITS 21  /* numpy >= 1.24 leaves room for a 21-digit first dimension */
#define HEADER_MAX 65536u /* numpy writes a 1-D header in < 200 bytes: more is corruption */
#define CHUNK                                                                                      \
    ((size_t)1 << 26) /* 64 MiB per fread/fwrite: some C libraries fail single calls               \
                         of 2 GiB or more */
#define SHOW 40       /* at most this many characters of header text in a message */

/* Writes one sentence into err; returns -1 so that callers can `return fail(...)`. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail(char *err, size_t err_len, const char *fmt, ...)
{
    if (err != NULL && err_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap); /* cuts the sentence to err_len, always NUL-terminated */
        va_end(ap);
        for (char *c = err; *c; ++c) /* a newline in a quoted key or path: still one line */
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                *c = '?';
    }
    return -1;
}

/* The length of header text as a printf precision, capped so that messages stay one line. */
static int show(size_t len)
{
    return len > SHOW ? SHOW : (int)len;
}

/* ---- Header parsing. The header is NUL-terminated and holds no other NUL, so '\0' ends every
 * scan below: no pointer ever runs past the buffer. ---- */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* A Python string literal 'abc' or "abc" (dtype strings and key names need no escapes).
 * Sets *s, *len to the text between the quotes; returns the position after it, or NULL. */
static const char *parse_str(const char *p, const char **s, size_t *len)
{
    if (*p != '\'' && *p != '"')
        return NULL;
    const char *end = strchr(p + 1, *p);
    if (end == NULL)
        return NULL;
    *s = p + 1;
    *len = (size_t)(end - *s);
    return end + 1;
}

/* A shape tuple of non-negative integers: (), (5,), (2, 3), with or without a trailing comma.
 * Sets *ndim, *dim0 (the first dimension) and *overflow (some dimension exceeds SIZE_MAX);
 * returns the position after ')', or NULL when it is not such a tuple. */
static const char *parse_shape(const char *p, size_t *ndim, size_t *dim0, int *overflow)
{
    *ndim = 0;
    *dim0 = 0;
    *overflow = 0;
    if (*p++ != '(')
        return NULL;
    for (p = skip_ws(p); *p != ')'; p = skip_ws(p)) {
        if (*p < '0' || *p > '9')
            return NULL;
        size_t v = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
            unsigned d = (unsigned)(*p - '0');
            if (v > (SIZE_MAX - d) / 10)
                *overflow = 1; /* keep scanning the digits; v is meaningless from here */
            v = v * 10 + d;
        }
        if ((*ndim)++ == 0)
            *dim0 = v;
        p = skip_ws(p);
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
static int parse_header(const char *path, const char *h, size_t *n, char *err, size_t err_len)
{
    const char *descr = NULL, *shape = NULL;
    size_t descr_len = 0, shape_len = 0, ndim = 0;
    int fortran = -1, overflow = 0; /* fortran: -1 until the key is seen */
    const char *p = skip_ws(h);

    if (*p++ != '{')
        goto not_dict;
    for (;;) {
        const char *key;
        size_t key_len;
        p = skip_ws(p);
        if (*p == '}')
            break;
        if ((p = parse_str(p, &key, &key_len)) == NULL)
            goto not_dict;
        p = skip_ws(p);
        if (*p++ != ':')
            goto not_dict;
        p = skip_ws(p);
        if (key_is(key, key_len, "descr")) {
            if ((p = parse_str(p, &descr, &descr_len)) == NULL)
                return fail(
                    err, err_len,
                    "%s: dtype is not a simple type string (structured arrays are not "
                    "supported); save a plain 1-D array (numpy.save(path, a.astype(" NPY_ASTYPE
                    ")))",
                    path);
        } else if (key_is(key, key_len, "fortran_order")) {
            fortran = strncmp(p, "True", 4) == 0 ? 1 : strncmp(p, "False", 5) == 0 ? 0 : -1;
            if (fortran < 0)
                goto not_dict;
            p += fortran ? 4 : 5;
        } else if (key_is(key, key_len, "shape")) {
            shape = p;
            if ((p = parse_shape(p, &ndim, n, &overflow)) == NULL) {
                size_t k = strcspn(shape, ")}"); /* show the bad value up to its ')' */
                if (shape[k] == ')')
                    k++;
                while (k > 0 && strchr(", \t\r\n", shape[k - 1]))
                    k--;
                return fail(err, err_len,
                            "%s: shape %.*s is not a tuple of non-negative integers; expected a "
                            "1-D shape such as (5,)",
                            path, show(k), shape);
            }
            shape_len = (size_t)(p - shape);
        } else {
            return fail(err, err_len,
                        "%s: unexpected header key '%.*s'; expected only 'descr', 'fortran_order' "
                        "and 'shape'",
                        path, show(key_len), key);
        }
        p = skip_ws(p);
        if (*p == ',')
            p++;
        else if (*p != '}')
            goto not_dict;
    }
    if (*skip_ws(p + 1) != '\0')
        goto not_dict;

    if (descr == NULL || fortran < 0 || shape == NULL)
        return fail(err, err_len,
                    "%s: the header lacks '%s'; expected 'descr', 'fortran_order' and 'shape' as "
                    "numpy.save writes them",
                    path,
                    descr == NULL ? "descr"
                    : fortran < 0 ? "fortran_order"
                                  : "shape");
    if (!key_is(descr, descr_len, NPY_DESCR))
        return fail(err, err_len,
                    "%s: dtype '%.*s' is not supported; save the array as " ELEM_NAME
                    " (numpy.save(path, a.astype(" NPY_ASTYPE ")))",
                    path, show(descr_len), descr);
    if (fortran)
        return fail(err, err_len,
                    "%s: fortran_order True is not supported; save a C-order 1-D array "
                    "(numpy.save(path, numpy.ascontiguousarray(a).ravel()))",
                    path);
    if (ndim != 1)
        return fail(err, err_len,
                    "%s: shape %.*s is %zu-D; expected a 1-D array (numpy.save(path, a.ravel()))",
                    path, show(shape_len), shape, ndim);
    if (overflow || *n > SIZE_MAX / sizeof(elem_t))
        return fail(err, err_len,
                    "%s: shape %.*s is too large: its size in bytes overflows size_t; expected a "
                    "1-D array that fits in memory",
                    path, show(shape_len), shape);
    return 0;

not_dict:
    return fail(
        err, err_len,
        "%s: the header is not a valid dict like {'descr': '" NPY_DESCR
        "', 'fortran_order': False, 'shape': (5,), }; expected a file written by numpy.save",
        path);
}

/* ---- Reading ---- */

/* Reads the whole file; npy_read() only opens and cleans up. On success *data is set. */
static int read_npy(FILE *f, const char *path, elem_t **data, size_t *n, char *err, size_t err_len)
{
    unsigned char pre[12]; /* magic (6), version (2), header_len (2 in 1.0, 4 in 2.0 and 3.0) */
    struct stat st;
    char *header = NULL;
    int rc = -1;

    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
        return fail(err, err_len, "%s: not a regular file; expected a .npy file", path);
    uint64_t file_size = (uint64_t)st.st_size;

    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0)
        return fail(err, err_len,
                    "%s: not a .npy file (it does not start with \\x93NUMPY); expected a file "
                    "written by numpy.save",
                    path);
    /* 3.0 differs from 2.0 only in allowing UTF-8 in the header, which a valid header for us
     * never contains. */
    int major = pre[6], minor = pre[7];
    if (!((major == 1 || major == 2 || major == 3) && minor == 0))
        return fail(err, err_len,
                    "%s: .npy format version %d.%d is not supported; expected 1.0, 2.0 or 3.0",
                    path, major, minor);
    size_t len_size = major == 1 ? 2 : 4;
    if (fread(pre + 8, 1, len_size, f) != len_size)
        return fail(err, err_len,
                    "%s: the header is truncated: the file ends inside the header length; the file "
                    "is incomplete",
                    path);
    uint64_t header_len = pre[8] | (uint64_t)pre[9] << 8;
    if (len_size == 4)
        header_len |= (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
    uint64_t data_start = 8 + len_size + header_len;

    if (header_len > HEADER_MAX)
        return fail(err, err_len,
                    "%s: header_len is %llu bytes, more than the 64 KiB limit; the file is corrupt "
                    "(numpy.save writes about 128 bytes)",
                    path, (unsigned long long)header_len);
    if (data_start > file_size)
        return fail(err, err_len,
                    "%s: the header is truncated: header_len says %llu bytes but only %llu follow; "
                    "the file is incomplete",
                    path, (unsigned long long)header_len,
                    (unsigned long long)(file_size - 8 - len_size));

    /* + 1 for the terminating NUL the parser relies on; header_len <= 64 KiB, so no overflow. */
    if ((header = malloc((size_t)header_len + 1)) == NULL) {
        fail(err, err_len, "%s: out of memory reading the header", path);
        goto out;
    }
    if (fread(header, 1, (size_t)header_len, f) != header_len) {
        fail(err, err_len, "%s: cannot read the header (%s)", path, strerror(errno));
        goto out;
    }
    header[header_len] = '\0';
    if (memchr(header, '\0', (size_t)header_len) != NULL) {
        fail(err, err_len, "%s: the header contains a NUL byte; expected ASCII text", path);
        goto out;
    }
    if (parse_header(path, header, n, err, err_len) != 0)
        goto out;

    /* Compare the data size with what the file holds before allocating anything. */
    uint64_t bytes = (uint64_t)*n * sizeof(elem_t); /* parse_header checked it fits in size_t */
    uint64_t have = file_size - data_start;
    if (have < bytes) {
        fail(err, err_len,
             "%s: the data is truncated: shape (%zu,) needs %llu bytes but only %llu follow the "
             "header; the file is incomplete",
             path, *n, (unsigned long long)bytes, (unsigned long long)have);
        goto out;
    }
    if (have > bytes) {
        fail(err, err_len,
             "%s: %llu trailing byte%s after the %zu elements that shape (%zu,) says; expected "
             "the file to end with the data",
             path, (unsigned long long)(have - bytes), have - bytes == 1 ? "" : "s", *n, *n);
        goto out;
    }
    if (data == NULL || *n == 0) { /* npy_shape, or nothing to read: *data stays NULL */
        rc = 0;
        goto out;
    }

    char *buf = malloc((size_t)bytes);
    if (buf == NULL) {
        fail(err, err_len, "%s: out of memory: %zu elements need %llu bytes", path, *n,
             (unsigned long long)bytes);
        goto out;
    }
    for (size_t done = 0; done < bytes;) {
        size_t want = bytes - done < CHUNK ? (size_t)(bytes - done) : CHUNK;
        if (fread(buf + done, 1, want, f) != want) {
            fail(err, err_len, "%s: read failed after %zu of %llu data bytes (%s)", path, done,
                 (unsigned long long)bytes,
                 ferror(f) ? strerror(errno) : "the file shrank while being read");
            free(buf);
            goto out;
        }
        done += want;
    }
    *data = (elem_t *)buf;
    rc = 0;
out:
    free(header);
    return rc;
}

/* npy_read with data == NULL: the header and the file's size, no data (npy_shape). */
static int open_npy(const char *path, elem_t **data, size_t *n, char *err, size_t err_len)
{
    if (data)
        *data = NULL;
    *n = 0;
    /* Only a regular file: opening a named pipe or a device could block forever. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return fail(err, err_len,
                    "%s: not a regular file; expected a .npy file written by numpy.save", path);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return fail(err, err_len,
                    "%s: cannot open (%s); expected a .npy file written by numpy.save", path,
                    strerror(errno));
    int rc = read_npy(f, path, data, n, err, err_len);
    fclose(f); /* read-only: nothing to lose if closing fails */
    if (rc != 0)
        *n = 0;
    return rc;
}

int npy_read(const char *path, elem_t **data, size_t *n, char *err, size_t err_len)
{
    return open_npy(path, data, n, err, err_len);
}

int npy_shape(const char *path, size_t *n, char *err, size_t err_len)
{
    return open_npy(path, NULL, n, err, err_len);
}

/* ---- Writing ---- */

int npy_write(const char *path, const elem_t *data, size_t n, char *err, size_t err_len)
{
    /* The header exactly as numpy >= 1.24 writes it: the dict with sorted keys, spare spaces so
     * the shape can grow to 21 digits in place, then spaces and a '\n' up to a 64-byte boundary
     * (numpy pads a full 64 rather than none). The spare spaces make the dict 78 characters for
     * any n, so the header always ends at byte 128; older numpy omits them, which changes the
     * padding, not the layout. */
    char pre[10 + 160];
    int dict = snprintf(pre + 10, sizeof pre - 10,
                        "{'descr': '" NPY_DESCR "', 'fortran_order': False, 'shape': (%zu,), }", n);
    int digits = snprintf(NULL, 0, "%zu", n);
    size_t len = (size_t)dict + (size_t)(GROWTH_DIGITS - digits); /* digits <= 20 */
    size_t pad = ALIGN - (10 + len + 1) % ALIGN;
    size_t header_len = len + pad + 1;
    memcpy(pre, "\x93NUMPY\x01\x00", 8);
    pre[8] = (char)(header_len & 0xff);
    pre[9] = (char)(header_len >> 8);
    memset(pre + 10 + dict, ' ', header_len - 1 - (size_t)dict);
    pre[10 + header_len - 1] = '\n';

    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return fail(err, err_len, "%s: cannot create (%s); expected a writable path", path,
                    strerror(errno));
    int ok = fwrite(pre, 1, 10 + header_len, f) == 10 + header_len;
    const char *bytes = (const char *)data;
    size_t total = n * sizeof(elem_t); /* data holds n elements, so this cannot overflow */
    for (size_t done = 0; ok && done < total;) {
        size_t want = total - done < CHUNK ? total - done : CHUNK;
        ok = fwrite(bytes + done, 1, want, f) == want;
        done += want;
    }
    int saved = errno;
    if (fclose(f) != 0 && ok) /* fclose flushes: a full disk may show only here */
        ok = 0, saved = errno;
    if (!ok) {
        remove(path); /* a partial file would fail to load later with a more confusing message */
        return fail(err, err_len, "%s: write failed (%s); check the disk space and permissions",
                    path, strerror(saved));
    }
    return 0;
}
