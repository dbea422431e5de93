/* Matrix I/O: NumPy .npy and CSV in; .npy, CSV and atomic files out.
 *
 * Arrays of rank above 2 are stacks of matrices over their leading axes
 * (batch x heads x n x n as PyTorch returns with output_attentions); each
 * slice is a column-major ar_matrix.  Readers validate everything before
 * allocating and report the problem (file, offset or line, value) in an
 * ar_error. */
#ifndef ATTNRANK_IO_H
#define ATTNRANK_IO_H

#include <stddef.h>
#include <stdio.h>
#include "export.h"
#include "matrix.h"
#include "rank.h"
#include "status.h"

#define AR_ARRAY_MAX_DIMS 16

/* A stack of equally sized matrices read from a file. */
typedef struct ar_array {
    size_t ndim;                     /* dimensions as stored (0..AR_ARRAY_MAX_DIMS) */
    size_t shape[AR_ARRAY_MAX_DIMS]; /* as stored */
    size_t count;                    /* number of matrices (product of leading axes) */
    size_t rows, cols;               /* size of each matrix (1-D: 1 x len; 0-D: 1 x 1) */
    double *data;                    /* count * rows * cols doubles, column-major per slice */
    ar_precision precision;          /* precision the data was stored in */
} ar_array;

/* Matrix k of the stack: a read-only view of the array's buffer (empty when
 * k is out of range). */
AR_API ar_cview ar_array_slice(const ar_array *a, size_t k);
/* Leading-axis indices of slice k (ndim - 2 of them) into idx. */
AR_API void ar_array_slice_index(const ar_array *a, size_t k, size_t *idx);
AR_API void ar_array_free(ar_array *a);

/* Read a .npy file (v1.0/2.0/3.0 headers, '<f8' '>f8' '<f4' '>f4' '<f2' '>f2',
 * C or Fortran order; precision records the stored type).  max_bytes caps
 * the allocation (0: no cap). */
AR_API int ar_npy_read(const char *path, ar_array *out, size_t max_bytes, ar_error *err);
/* Parse a .npy image already in memory (for fuzzing and tests). */
AR_API int ar_npy_parse(const unsigned char *buf, size_t len, ar_array *out, size_t max_bytes,
                        ar_error *err);
/* What a .npy header says, checked against the file (size on disk equals
 * the data the header declares), without reading the data: for readers
 * that place the data themselves (MPI-IO).  rows, cols, count as in ar_array. */
typedef struct ar_npy_info {
    size_t data_offset;              /* first data byte */
    size_t itemsize;                 /* 2 (float16), 4 (float32) or 8 (float64) */
    int big_endian;
    int fortran;                     /* 1: column-major on disk */
    size_t ndim;
    size_t shape[AR_ARRAY_MAX_DIMS];
    size_t rows, cols, count;
} ar_npy_info;

AR_API int ar_npy_read_info(const char *path, ar_npy_info *info, ar_error *err);
/* Write one matrix as a little-endian float64 .npy in Fortran order (atomic). */
AR_API int ar_npy_write(const char *path, const ar_matrix *m, ar_error *err);

/* Read a CSV matrix: comma- or whitespace-separated numbers, one row per line,
 * an optional header line of non-numeric fields, '#' comment lines. */
AR_API int ar_csv_read(const char *path, ar_array *out, ar_error *err);
/* As ar_csv_read; max_bytes caps the file size and the matrix allocation,
 * each (0: no cap; over the cap: AR_ENOMEM). */
AR_API int ar_csv_read_ex(const char *path, ar_array *out, size_t max_bytes, ar_error *err);
AR_API int ar_csv_parse(const char *text, size_t len, const char *name, ar_array *out,
                        ar_error *err);
/* Write one matrix as CSV (%.17g, comma separated, atomic). */
AR_API int ar_csv_write_matrix(const char *path, const ar_matrix *m, ar_error *err);

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
 * half-written file ever stands under the final name. */
typedef struct ar_atomic_file {
    FILE *fp;
    char *path;
    char *tmp_path;
} ar_atomic_file;

AR_API int ar_atomic_open(ar_atomic_file *af, const char *path, ar_error *err);
AR_API int ar_atomic_commit(ar_atomic_file *af, ar_error *err);
AR_API void ar_atomic_abort(ar_atomic_file *af);
/* Create a directory and its parents (like mkdir -p). */
AR_API int ar_mkdir_p(const char *path, ar_error *err);

#endif
