/* Reading model weights from safetensors files.
 *
 * The format: an 8-byte little-endian header length N, N bytes of JSON
 * (an object mapping tensor names to {"dtype", "shape", "data_offsets"},
 * plus an optional "__metadata__" object of strings), then the data region.
 * data_offsets [begin, end) are byte offsets into the data region; tensors
 * are stored little-endian in row-major (C) order.
 *
 * Files are mapped read-only (mmap), never copied whole: a tensor, or a block
 * of rows or columns of it, is converted to double only when asked for.
 * F64, F32, F16 and BF16 convert exactly; other dtypes of the format (BOOL,
 * integers, 8-bit floats) may appear in a file (BERT checkpoints carry int64
 * position ids) but reading them gives AR_EUNSUPPORTED.
 *
 * Validation happens when a file is opened: header length beyond the file,
 * invalid or non-object JSON, duplicate keys, unknown dtypes, malformed
 * shapes or offsets, offsets outside the data region, overlapping tensors,
 * truncated data and shape/size mismatches are refused with AR_EFORMAT
 * (AR_EUNSUPPORTED for an unknown dtype) and a message naming the file and
 * the tensor.  Non-finite values are found when a block is read
 * (AR_ENONFINITE, naming the tensor and the element).
 *
 * A model may be one file, or shards listed by a model.safetensors.index.json
 * ("weight_map": tensor name -> shard file); ar_safetensors_open accepts a
 * file, an index, or a directory holding either.  Tensors already in memory
 * (a state dict) make a handle too, without a copy: ar_safetensors_from_tensors. */
#ifndef ATTNRANK_SAFETENSORS_H
#define ATTNRANK_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "matrix.h"
#include "rank.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AR_ST_MAX_DIMS 8
/* Largest JSON header accepted (the reference implementation's limit). */
#define AR_ST_MAX_HEADER 100000000u

typedef enum ar_st_dtype {
    AR_ST_F64 = 0,
    AR_ST_F32,
    AR_ST_F16,
    AR_ST_BF16,
    /* Known to the format, not convertible to weights here. */
    AR_ST_BOOL,
    AR_ST_U8,
    AR_ST_I8,
    AR_ST_F8_E4M3,
    AR_ST_F8_E5M2,
    AR_ST_I16,
    AR_ST_U16,
    AR_ST_I32,
    AR_ST_U32,
    AR_ST_I64,
    AR_ST_U64,
    AR_ST_NDTYPES
} ar_st_dtype;

/* "F64", "BF16", ... (never NULL). */
AR_API const char *ar_st_dtype_name(ar_st_dtype dtype);
/* AR_EUNSUPPORTED for a string that names no dtype of the format.
 * err: may be NULL; filled on failure. */
AR_API int ar_st_dtype_parse(const char *text, ar_st_dtype *dtype, ar_error *err);
/* Bytes per element. */
AR_API size_t ar_st_dtype_size(ar_st_dtype dtype);
/* 1 for F64, F32, F16, BF16 (the dtypes that convert to double). */
AR_API int ar_st_dtype_is_float(ar_st_dtype dtype);
/* Storage precision of a float dtype (F64 for the others). */
AR_API ar_precision ar_st_dtype_precision(ar_st_dtype dtype);

/* Exact conversions of IEEE binary16 and bfloat16 bit patterns (subnormals,
 * signed zeros, infinities and NaN included). */
AR_API double ar_half_to_double(uint16_t bits);
AR_API double ar_bfloat16_to_double(uint16_t bits);

/* One tensor of an opened model.  Pointers stay valid until close. */
typedef struct ar_st_tensor {
    const char *name;
    ar_st_dtype dtype;
    size_t ndim;
    size_t shape[AR_ST_MAX_DIMS];
    size_t count;                 /* number of elements (1 for shape []) */
    uint64_t begin, end;          /* data_offsets within the data region (from memory:
                                     0 and the size in bytes) */
    const unsigned char *data;    /* first byte, inside the mapping */
    size_t file;                  /* index of the file holding it */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_st_tensor;

typedef struct ar_safetensors ar_safetensors;

/* Open a model: a .safetensors file, a model.safetensors.index.json (its
 * shards are resolved beside it), or a directory holding an index,
 * model.safetensors, or otherwise every *.safetensors file in it (read as
 * shards of one model; a tensor name found twice is an error). */
AR_API int ar_safetensors_open(ar_safetensors **st, const char *path, ar_error *err);
/* Parse one safetensors image already in memory (tests, fuzzing).  buf is
 * borrowed: it must outlive the handle.  name is used in messages. */
AR_API int ar_safetensors_parse(ar_safetensors **st, const unsigned char *buf, size_t len,
                                const char *name, ar_error *err);
AR_API void ar_safetensors_close(ar_safetensors *st);

/* One tensor already in memory (a framework's state dict): the fields of a
 * header entry, with the data where it lies instead of data_offsets. */
typedef struct ar_st_tensor_desc {
    const char *name;             /* copied */
    ar_st_dtype dtype;
    size_t ndim;                  /* <= AR_ST_MAX_DIMS */
    size_t shape[AR_ST_MAX_DIMS]; /* shape[0 .. ndim) */
    const void *data;             /* borrowed: count x ar_st_dtype_size(dtype) bytes, row-major
                                     (C) order, little-endian as in a file; any alignment;
                                     may be NULL for a tensor with no elements */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_st_tensor_desc;

/* A model from tensors already in memory, without copying them: the data
 * stay the caller's and must outlive the handle (names are copied).  The
 * handle is one pseudo-file whose path is name (NULL: "<memory>"), used in
 * messages, and whose directory is "." (no config.json belongs to it: pass a
 * config parsed with ar_model_config_parse).  Tensors are sorted by name as
 * ar_safetensors_open sorts them, so ar_weights_analyze_model sees the table
 * a file with the same tensors gives.  Each tensor's begin/end are 0 and its
 * size in bytes.  Tensors may share memory (tied weights): only a file's
 * layout forbids overlap.  Errors (the message names the tensor):
 * AR_EINVAL for NULL out, no tensors (count 0 or tensors NULL), a NULL name,
 * a dtype outside ar_st_dtype, NULL data for a non-empty tensor, a size
 * beyond the address space, or a name given twice; AR_EUNSUPPORTED for more
 * than AR_ST_MAX_DIMS dimensions (as in a file). */
AR_API int ar_safetensors_from_tensors(ar_safetensors **st, const ar_st_tensor_desc *tensors,
                                       size_t count, const char *name, ar_error *err);

/* Tensors in name order (byte-wise strcmp). */
AR_API size_t ar_safetensors_count(const ar_safetensors *st);
AR_API const ar_st_tensor *ar_safetensors_tensor(const ar_safetensors *st, size_t i);
/* NULL when no tensor has that name. */
AR_API const ar_st_tensor *ar_safetensors_find(const ar_safetensors *st, const char *name);
/* Files of the model, and the path of file i (for messages). */
AR_API size_t ar_safetensors_nfiles(const ar_safetensors *st);
AR_API const char *ar_safetensors_file_path(const ar_safetensors *st, size_t i);
/* The directory the model was opened from ("." for a bare file name), where
 * config.json is looked for. */
AR_API const char *ar_safetensors_dir(const ar_safetensors *st);

/* View a tensor as a row-major matrix: 2-D as stored, 1-D as 1 x len,
 * 0-D as 1 x 1.  AR_EUNSUPPORTED for more than two dimensions.
 * err: may be NULL; filled on failure. */
AR_API int ar_st_tensor_matrix_shape(const ar_st_tensor *t, size_t *rows, size_t *cols,
                                     ar_error *err);

/* Convert a block of the tensor's matrix view T into out (the caller's, any
 * layout): with AR_NO_TRANS out is nrows x ncols and out(i, j) = T(row0 + i,
 * col0 + j); with AR_TRANS out is ncols x nrows and out(j, i) = T(row0 + i,
 * col0 + j): the sizes of the block are read from out.  Checks that every
 * value is finite.  Errors: AR_EINVAL (NULL, invalid view, empty block),
 * AR_ESIZE (block outside the tensor), AR_EUNSUPPORTED (dtype, rank > 2),
 * AR_ENONFINITE. */
AR_API int ar_safetensors_read_block(const ar_safetensors *st, const ar_st_tensor *t, size_t row0,
                                     size_t col0, ar_trans trans, ar_view out, ar_error *err);
/* The whole tensor as a newly allocated rows x cols matrix (owning: free
 * with ar_matrix_free). */
AR_API int ar_safetensors_read(const ar_safetensors *st, const ar_st_tensor *t, ar_matrix *out,
                               ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
