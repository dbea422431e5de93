/* ar_array: the owning stack of column-major matrices every reader fills
 * (io.h), and the helpers the readers share to build one. */
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE) */
#include "attnrank/io.h"
#include "io/array_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "core/matrix_internal.h"

void ar_array_reset(ar_array *a)
{
    memset(a, 0, sizeof *a);
    a->precision = AR_PREC_F64;
}

/* Large arrays on 2 MB boundaries, with transparent huge pages asked for
 * (Linux, THP in "madvise" mode as on Debian): filling a 327 MB stack then
 * takes ~160 page faults instead of ~80,000, which on a virtual machine was
 * most of the read time (1.55 s vs 0.38 s for numpy.load + transpose, which
 * does the same).  Freed with free(). */
void *ar_array_alloc_data(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    if (bytes < 2 * huge)
        return malloc(bytes);
    void *p = NULL;
    if (posix_memalign(&p, huge, bytes) != 0)
        return NULL;
#if defined(MADV_HUGEPAGE)
    (void)madvise(p, bytes - bytes % huge, MADV_HUGEPAGE); /* advice only: ignore failure */
#endif
    return p;
}

ar_matrix ar_array_slice_cm(const ar_array *a, size_t k)
{
    if (a == NULL || a->data == NULL || k >= a->count)
        return ar_matrix_empty();
    size_t per_slice = a->rows * a->cols;
    return ar_matrix_alias(a->data + k * per_slice, a->rows, a->cols, a->rows);
}

ar_cview ar_array_slice(const ar_array *a, size_t k)
{
    ar_matrix m = ar_array_slice_cm(a, k);
    return ar_matrix_cview(&m);
}

int ar_array_require_matrix(const ar_array *a, const char *name, ar_error *err)
{
    if (a == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_array_require_matrix: NULL array");
    return ar_require_matrix_shape(a->ndim, a->shape, name, err);
}

int ar_require_matrix_shape(size_t ndim, const size_t *shape, const char *name, ar_error *err)
{
    if (ndim >= 2)
        return AR_OK;
    const char *what = name != NULL ? name : "input";
    if (ndim == 0)
        return ar_error_set(err, AR_ESIZE,
                            "%s: shape () is a scalar (0 dimensions); a matrix needs 2 dimensions",
                            what);
    return ar_error_set(err, AR_ESIZE,
                        "%s: shape (%zu,) has 1 dimension; a matrix needs 2 dimensions (save a "
                        "single row as shape (1, %zu))",
                        what, shape[0], shape[0]);
}

void ar_array_slice_index(const ar_array *a, size_t k, size_t *idx)
{
    if (a == NULL || idx == NULL || a->ndim <= 2)
        return;
    /* Slices are numbered in C order over the leading axes. */
    for (size_t ax = a->ndim - 2; ax > 0; ax--) {
        size_t dim = a->shape[ax - 1];
        idx[ax - 1] = dim == 0 ? 0 : k % dim;
        k = dim == 0 ? 0 : k / dim;
    }
}

void ar_array_free(ar_array *a)
{
    if (a == NULL)
        return;
    free(a->data);
    ar_array_reset(a);
}
