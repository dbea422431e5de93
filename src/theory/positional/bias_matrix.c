/* The n x n bias a spec names (include/attnrank/bias.h): the matrix the
 * faces' `--bias` and `bias=` strings stand for. */
#include "attnrank/bias.h"
#include "attnrank/io.h"

#include <string.h>

/* T5: the bucket count is the file's length; its max distance is T5's 128. */
#define T5_MAX_DISTANCE 128

static int read_file(const ar_bias_spec *spec, size_t max_bytes, ar_array *arr, ar_error *err)
{
    ar_error inner = {{0}};
    int rc = ar_matrix_file_read(spec->path, arr, max_bytes, &inner);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "bias file %s: %s", spec->path, inner.msg);
    if (arr->count != 1) {
        size_t count = arr->count;
        ar_array_free(arr);
        return ar_error_set(err, AR_ESIZE, "bias file %s: holds a stack of %zu matrices, not one",
                            spec->path, count);
    }
    return AR_OK;
}

static int t5_bias(const ar_bias_spec *spec, ar_axis axis, size_t max_bytes, ar_view out,
                   ar_error *err)
{
    ar_array arr;
    memset(&arr, 0, sizeof arr);
    int rc = read_file(spec, max_bytes, &arr, err);
    if (rc != AR_OK)
        return rc;
    if (arr.rows != 1 && arr.cols != 1) {
        rc = ar_error_set(err, AR_ESIZE,
                          "bias file %s: T5 bucket values must be a vector, got %zu x %zu",
                          spec->path, arr.rows, arr.cols);
        ar_array_free(&arr);
        return rc;
    }
    /* A vector's entries are contiguous whichever way it is stored. */
    ar_error inner = {{0}};
    rc = ar_bias_t5(arr.data, arr.rows * arr.cols, T5_MAX_DISTANCE, 1, axis, out, &inner);
    ar_array_free(&arr);
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "bias file %s: %s", spec->path, inner.msg);
}

static int file_bias(const ar_bias_spec *spec, size_t n, size_t max_bytes, ar_view out,
                     ar_error *err)
{
    ar_array arr;
    memset(&arr, 0, sizeof arr);
    int rc = read_file(spec, max_bytes, &arr, err);
    if (rc != AR_OK)
        return rc;
    if (arr.rows != n || arr.cols != n) {
        rc = ar_error_set(err, AR_ESIZE, "bias file %s: must be n x n = %zu x %zu, got %zu x %zu",
                          spec->path, n, n, arr.rows, arr.cols);
        ar_array_free(&arr);
        return rc;
    }
    rc = ar_matrix_copy(out, ar_array_slice(&arr, 0), err);
    ar_array_free(&arr);
    return rc;
}

int ar_bias_matrix(const ar_bias_spec *spec, size_t n, ar_axis axis, size_t max_bytes,
                   ar_matrix *out, ar_error *err)
{
    if (spec == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "bias: NULL spec or output");
    *out = ar_matrix_empty();
    if (spec->kind == AR_BIAS_NONE || n == 0)
        return ar_error_set(err, AR_EINVAL, "bias: no bias to build (kind none or n = 0)");
    int rc = ar_matrix_alloc(out, n, n, err);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "bias: cannot allocate %zu x %zu", n, n);
    ar_view v = ar_matrix_view(out);
    switch (spec->kind) {
    case AR_BIAS_ALIBI:
    case AR_BIAS_ALIBI_CAUSAL:
        rc = ar_bias_alibi(spec->slope, spec->kind == AR_BIAS_ALIBI_CAUSAL, axis, v, err);
        break;
    case AR_BIAS_T5:
        rc = t5_bias(spec, axis, max_bytes, v, err);
        break;
    case AR_BIAS_FILE:
        rc = file_bias(spec, n, max_bytes, v, err);
        break;
    default:
        rc = ar_error_set(err, AR_EINVAL, "bias: unknown kind %d", (int)spec->kind);
    }
    if (rc != AR_OK)
        ar_matrix_free(out);
    return rc;
}
