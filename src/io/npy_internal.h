/* Internal to the library (src/io, and the distributed spectra of src/dist,
 * which place .npy data themselves): not installed, not exported. */
#ifndef ATTNRANK_NPY_INTERNAL_H
#define ATTNRANK_NPY_INTERNAL_H

#include <stddef.h>
#include "attnrank/io.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6

/* The .npy parser with a caller-chosen name for its messages (an .npz
 * member is named "archive.npz[member.npy]"). */
int ar_npy_parse_named(const unsigned char *buf, size_t len, const char *name, ar_array *out,
                       size_t max_bytes, ar_error *err);

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

int ar_npy_read_info(const char *path, ar_npy_info *info, ar_error *err);

/* Decode count stored elements of itemsize bytes (2, 4 or 8, IEEE binary16/
 * 32/64 in the byte order big_endian says) into doubles, whatever the
 * host's byte order.  The one overlap allowed: raw bytes read into the top
 * of the count-double buffer, src == (unsigned char *)dst + count *
 * (8 - itemsize), widen in place. */
void ar_npy_decode(const unsigned char *src, size_t count, size_t itemsize, int big_endian,
                   double *dst);

#endif
