/* npy.h: read and write NumPy .npy files holding one 1-D array of elem_t.
 *
 * The .npy format (numpy.lib.format) is a 10- or 12-byte preamble, an ASCII header that is a Python
 * dict literal, then the raw array bytes:
 *
 *   "\x93NUMPY" major minor header_len   header_len: uint16 LE (1.0) or uint32 LE (2.0, 3.0)
 *   "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }   ...spaces...\n"
 *   element 0, element 1, ...            little-endian, C order
 *
 * Only the one dtype of this build is read and written ('<i4' for int32, '<f4' with
 * -DREDUCE_FLOAT): the reader never converts, so a file's bytes are exactly what the kernels sum.
 * Sizes are 64-bit throughout, so arrays of more than 2^31 elements (more than 4 GiB) work. Each
 * function returns 0, or -1 and writes into err one sentence: the path, what is wrong and what is
 * expected (NUL-terminated, cut to err_len bytes; err may be NULL if err_len is 0).
 */
#ifndef NPY_H
#define NPY_H

#include <stddef.h>

#include "reduce.h" /* elem_t */

/* npy_read: loads the 1-D array in the .npy file at path: versions 1.0, 2.0 and 3.0 as numpy.save
 * writes them, this build's dtype, fortran_order False, shape (n,) with n >= 0, header keys in any
 * order. *n is a count of elements; *data points to n * sizeof(elem_t) bytes from malloc, which
 * the caller free()s, or is NULL when *n == 0.
 *
 * Fails (*data NULL, *n 0, nothing allocated) on a file missing or unreadable, not a .npy file, an
 * unsupported version, a malformed or oversized header (more than 64 KiB), another dtype, Fortran
 * order, a shape that is not 1-D, data shorter or longer than the shape says, a read error, or
 * out of memory. */
int npy_read(const char *path, elem_t **data, size_t *n, char *err, size_t err_len);

/* npy_shape: the same checks as npy_read (the header, and that the file holds exactly the data the
 * shape says), without reading or allocating the data: *n elements. Cheap for any size: a program
 * learns n before it reads gigabytes. */
int npy_shape(const char *path, size_t *n, char *err, size_t err_len);

/* npy_write: writes data[0..n) (n elements; data may be NULL when n == 0) to path as a version-1.0
 * .npy file, byte for byte what numpy.save writes for the same 1-D array: the header padded with
 * spaces and ended with '\n' so the data starts at byte 128. An existing file is replaced. Fails
 * when the file cannot be created or a write fails (disk full, I/O error); a partly written file
 * is then removed. */
int npy_write(const char *path, const elem_t *data, size_t n, char *err, size_t err_len);

#endif
