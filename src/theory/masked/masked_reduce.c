/* Reductions of window, band and sink + window patterns to interval
 * completions without a shift (src/theory/masked/masked_internal.h;
 * docs/theory/masked-attention.md).
 *   - Every query's keys an interval [a_i, b_i] with a and b non-decreasing
 *     (windows, bands): the differences Delta_ij = L_{i,j+1} - L_ij
 *     (j, j + 1 allowed) do not see the shift; a completion T = U V^T of
 *     Delta gives S = U W^T with W_0 = 0 and W_j = v_0 + ... + v_{j-1}.
 *   - Key 0 seen by every query and the other keys intervals (one sink plus
 *     a window): D_ij = L_ij - L_i0 on the other keys, S = U [0; V]^T. */
#include "masked_internal.h"

#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"

void ar_interval_form_free(ar_interval_form *f)
{
    free(f->lo);
    free(f->hi);
    memset(f, 0, sizeof *f);
}

/* The allowed keys of a query from key `from` on: one interval [*a, *b]?
 * An empty set counts as an interval with *a > *b. */
static int row_interval(const unsigned char *row, size_t n, size_t from, size_t *a, size_t *b)
{
    size_t first = SIZE_MAX, last = 0, count = 0;
    for (size_t j = from; j < n; j++)
        if (row[j]) {
            first = first == SIZE_MAX ? j : first;
            last = j;
            count++;
        }
    *a = count ? first : 1;
    *b = count ? last : 0;
    return count == 0 || count == last - first + 1;
}

/* Rows of the reduced pattern for one reduction; 0 when it does not apply. */
static int reduce_rows(const unsigned char *allowed, size_t n, ar_reduction kind, size_t *lo,
                       size_t *hi)
{
    size_t from = kind == AR_REDUCE_SINK ? 1 : 0, prev = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *row = allowed + i * n;
        size_t a, b;
        if (!row_interval(row, n, from, &a, &b) || (kind == AR_REDUCE_SINK && !row[0]))
            return 0;
        /* differences: columns a .. b - 1; sink: key j is column j - 1 */
        lo[i] = kind == AR_REDUCE_SINK ? a - 1 : a;
        hi[i] = b - 1;
        if (a > b || lo[i] > hi[i] || (kind == AR_REDUCE_DIFFERENCES && a == b)) {
            lo[i] = 1; /* empty: constrains nothing, takes no place in the order */
            hi[i] = 0;
            continue;
        }
        if (prev != SIZE_MAX && (lo[i] < lo[prev] || hi[i] < hi[prev]))
            return 0;
        prev = i;
    }
    return 1;
}

int ar_interval_form_build(const unsigned char *allowed, size_t n, ar_interval_form *f)
{
    memset(f, 0, sizeof *f);
    if (n < 2)
        return AR_OK;
    f->lo = malloc(n * sizeof *f->lo);
    f->hi = malloc(n * sizeof *f->hi);
    if (f->lo == NULL || f->hi == NULL) {
        ar_interval_form_free(f);
        return AR_ENOMEM;
    }
    const ar_reduction kinds[2] = {AR_REDUCE_DIFFERENCES, AR_REDUCE_SINK};
    for (size_t t = 0; t < 2; t++)
        if (reduce_rows(allowed, n, kinds[t], f->lo, f->hi)) {
            f->kind = kinds[t];
            f->pat.rows = n;
            f->pat.cols = n - 1;
            f->pat.lo = f->lo;
            f->pat.hi = f->hi;
            return AR_OK;
        }
    ar_interval_form_free(f);
    return AR_OK;
}

void ar_interval_form_data(const ar_interval_form *f, const ar_matrix *lrow, ar_matrix *d)
{
    ar_cm_fill(d, 0.0);
    for (size_t i = 0; i < f->pat.rows; i++)
        for (size_t j = f->lo[i]; f->lo[i] <= f->hi[i] && j <= f->hi[i]; j++)
            AR_AT(d, i, j) = f->kind == AR_REDUCE_DIFFERENCES
                                 ? AR_AT(lrow, i, j + 1) - AR_AT(lrow, i, j)
                                 : AR_AT(lrow, i, j + 1) - AR_AT(lrow, i, 0);
}

void ar_interval_form_keys(const ar_interval_form *f, const ar_matrix *vr, size_t r,
                           ar_matrix *v)
{
    size_t n = vr->rows + 1;
    for (size_t t = 0; t < r; t++) {
        double acc = 0.0;
        AR_AT(v, 0, t) = 0.0;
        for (size_t j = 1; j < n; j++) {
            acc = f->kind == AR_REDUCE_DIFFERENCES ? acc + AR_AT(vr, j - 1, t)
                                                   : AR_AT(vr, j - 1, t);
            AR_AT(v, j, t) = acc;
        }
    }
}
