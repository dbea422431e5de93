/* Matrix I/O: NumPy .npy, .npz and CSV in; .npy, CSV and atomic files out.
 *
 * Readers fill an ar_array, which OWNS its data (release it with
 * ar_array_free): arrays of rank above 2 are stacks of matrices over their
 * leading axes (batch x heads x n x n as PyTorch returns with
 * output_attentions), each slice stored column-major.  Readers validate
 * everything before allocating and report the problem (file, offset or
 * line, value) in an ar_error.  Writers take any read-only view (ar_cview:
 * column-major, row-major or strided) and write atomically. */
#ifndef ATTNRANK_IO_H
#define ATTNRANK_IO_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "matrix.h"
#include "rank.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AR_ARRAY_MAX_DIMS 16

/* A stack of equally sized matrices read from a file. */
typedef struct ar_array {
    size_t ndim;                     /* dimensions as stored (0..AR_ARRAY_MAX_DIMS) */
    size_t shape[AR_ARRAY_MAX_DIMS]; /* as stored */
    size_t count;                    /* number of matrices (product of leading axes) */
    size_t rows, cols;               /* size of each matrix (1-D: 1 x len; 0-D: 1 x 1) */
    double *data;                    /* count * rows * cols doubles, column-major per slice */
    ar_precision precision;          /* precision the data was stored in */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_array;

/* Matrix k of the stack: a read-only view of the array's buffer (empty when
 * k is out of range). */
AR_API ar_cview ar_array_slice(const ar_array *a, size_t k);
/* Leading-axis indices of slice k (ndim - 2 of them) into idx. */
AR_API void ar_array_slice_index(const ar_array *a, size_t k, size_t *idx);
AR_API void ar_array_free(ar_array *a);
/* AR_OK when a holds matrices (ndim >= 2); else AR_ESIZE with a message
 * naming name (the file) and the stored shape: a 0-d or 1-d array is not a
 * matrix, although the readers store it as 1 x 1 or 1 x len.  CSV files are
 * always 2-D (one row is a 1 x n matrix). */
AR_API int ar_array_require_matrix(const ar_array *a, const char *name, ar_error *err);

/* A count as text: plain decimal digits (any size up to UINT64_MAX), or an
 * integral value in decimal or exponent form ("1e3", "4.096e3", "4096.0")
 * up to 2^53, above which a double would round.  No sign, no hex, no
 * inf/nan.  AR_EINVAL "expected a non-negative integer, got 'TEXT'"
 * otherwise.  The CLI's sizes and check's configurations file read counts
 * by this rule. */
AR_API int ar_count_parse(const char *text, uint64_t *out, ar_error *err);

/* Read a .npy file (v1.0/2.0/3.0 headers, '<f8' '>f8' '<f4' '>f4' '<f2' '>f2',
 * C or Fortran order; precision records the stored type).  max_bytes caps
 * the allocation (0: no cap). */
AR_API int ar_npy_read(const char *path, ar_array *out, size_t max_bytes, ar_error *err);
/* Parse a .npy image already in memory (for fuzzing and tests). */
AR_API int ar_npy_parse(const unsigned char *buf, size_t len, ar_array *out, size_t max_bytes,
                        ar_error *err);
/* Write one matrix as a little-endian float64 .npy in Fortran order (atomic). */
AR_API int ar_npy_write(const char *path, ar_cview m, ar_error *err);

/* Read a CSV matrix: comma- or whitespace-separated numbers, one row per line,
 * an optional header line of non-numeric fields, '#' comment lines. */
AR_API int ar_csv_read(const char *path, ar_array *out, ar_error *err);
/* As ar_csv_read; max_bytes caps the file size and the matrix allocation,
 * each (0: no cap; over the cap: AR_ENOMEM). */
AR_API int ar_csv_read_ex(const char *path, ar_array *out, size_t max_bytes, ar_error *err);
AR_API int ar_csv_parse(const char *text, size_t len, const char *name, ar_array *out,
                        ar_error *err);
/* Write one matrix as CSV (%.17g, comma separated, one line per row,
 * atomic).  Both writers: AR_EINVAL for a NULL path, an invalid view or an
 * empty matrix; AR_EIO when the file cannot be written. */
AR_API int ar_csv_write_matrix(const char *path, ar_cview m, ar_error *err);

/* Read one array of a NumPy .npz archive (numpy.savez): the member named
 * key ("name" or "name.npy"), or, with key NULL, the only array (an archive
 * with several is refused, listing their names). */
AR_API int ar_npz_read(const char *path, const char *key, ar_array *out, size_t max_bytes,
                       ar_error *err);

/* Read a matrix file by its content, then its extension: .npy (magic
 * "\x93NUMPY"), .npz (a zip), else CSV. */
AR_API int ar_matrix_file_read(const char *path, ar_array *out, size_t max_bytes, ar_error *err);
/* The same; key selects the array of an .npz (NULL: the only one) and is
 * refused for any other file. */
AR_API int ar_matrix_file_read_key(const char *path, const char *key, ar_array *out,
                                   size_t max_bytes, ar_error *err);

/* Atomic output: write to "<path>.tmp.<pid>", then rename onto path on
 * commit; abort (or a failed commit) removes the temporary file, so no
 * half-written file ever stands under the final name.  The handle is opaque
 * (no FILE * crosses the API): ar_atomic_open allocates it, and
 * ar_atomic_commit or ar_atomic_abort, exactly one of them, releases it. */
typedef struct ar_atomic_file ar_atomic_file;

/* *af = a new handle, or NULL on failure (AR_EINVAL, AR_ENOMEM, AR_EIO). */
AR_API int ar_atomic_open(ar_atomic_file **af, const char *path, ar_error *err);
/* Append len bytes / printf-formatted text.  A failure (AR_EIO) is also
 * remembered, so a writer may check only the commit's status.
 * err: may be NULL; filled on failure. */
AR_API int ar_atomic_write(ar_atomic_file *af, const void *data, size_t len, ar_error *err);
AR_API int ar_atomic_printf(ar_atomic_file *af, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The temporary file's name, for a program that writes the file itself
 * (gnuplot); valid until commit or abort. */
AR_API const char *ar_atomic_tmp_path(const ar_atomic_file *af);
/* Close and rename into place (AR_EIO with errno's text when any write
 * failed); releases af whatever the outcome. */
AR_API int ar_atomic_commit(ar_atomic_file *af, ar_error *err);
/* Remove the temporary file and release af (NULL: nothing). */
AR_API void ar_atomic_abort(ar_atomic_file *af);
/* Create a directory and its parents (like mkdir -p). */
AR_API int ar_mkdir_p(const char *path, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
