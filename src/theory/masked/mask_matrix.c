/* A pattern mask from a 0/1 matrix in a map's layout: what a mask file
 * (the CLI) or a mask array (Python) holds.  The entries are checked and
 * read here once, in the map's axis convention, then the pattern is named
 * by its kind when it has one. */
#include <stdint.h>
#include <stdlib.h>

#include "attnrank/mask.h"

/* The query-major pattern of m (allowed[q * n + k]), checking every entry
 * is 0 or 1. */
static int read_entries(ar_cview m, ar_axis axis, size_t n, unsigned char *allowed,
                        ar_error *err)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double v = AR_VAT(m, i, j);
            if (v != 0.0 && v != 1.0)
                return ar_error_set(err, AR_EINVAL, "entry (%zu, %zu) = %g is not 0 or 1", i, j,
                                    v);
            size_t q = axis == AR_AXIS_ROW ? i : j, k = axis == AR_AXIS_ROW ? j : i;
            allowed[q * n + k] = v == 1.0;
        }
    return AR_OK;
}

int ar_mask_from_matrix(ar_cview m, ar_axis axis, size_t n, ar_mask *mask, ar_error *err)
{
    if (mask == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL mask");
    *mask = ar_mask_none();
    int rc = ar_cview_check(m, err);
    if (rc != AR_OK)
        return rc;
    if (axis != AR_AXIS_ROW && axis != AR_AXIS_COL)
        return ar_error_set(err, AR_EINVAL, "axis must be row or column");
    if (n == 0 || m.rows != n || m.cols != n)
        return ar_error_set(err, AR_ESIZE,
                            "expected one %zu x %zu matrix (the map's shape), got %zu x %zu", n,
                            n, m.rows, m.cols);
    if (n > SIZE_MAX / n)
        return ar_error_set(err, AR_ENOMEM, "pattern %zu x %zu too large", n, n);
    unsigned char *allowed = malloc(n * n);
    if (allowed == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory (%zu x %zu pattern)", n, n);
    rc = read_entries(m, axis, n, allowed, err);
    if (rc == AR_OK)
        rc = ar_mask_from_pattern(mask, allowed, n, err);
    if (rc == AR_OK)
        ar_mask_simplify(mask);
    free(allowed);
    return rc;
}
