/* Softmax under a mask: the attention map a head with row-query logits S
 * produces (include/attnrank/mask.h). */
#include "attnrank/mask.h"
#include "theory/masked/mask_internal.h"
#include "core/matrix_internal.h"

#include <math.h>

int ar_cm_mask_softmax(const ar_matrix *s, const ar_mask *mask, ar_axis axis, ar_matrix *p)
{
    if (s == NULL || p == NULL || s->data == NULL || p->data == NULL)
        return AR_EINVAL;
    size_t n = s->rows;
    if (s->cols != n || p->rows != n || p->cols != n)
        return AR_ESIZE;
    if (ar_mask_check_size(mask, n, NULL) != AR_OK || (axis != AR_AXIS_ROW && axis != AR_AXIS_COL))
        return AR_EINVAL;
    for (size_t i = 0; i < n; i++) {
        double top = -INFINITY, z = 0.0;
        for (size_t j = 0; j < n; j++)
            if (ar_mask_allows(mask, n, i, j)) {
                if (!isfinite(AR_AT(s, i, j)))
                    return AR_ENONFINITE;
                top = AR_AT(s, i, j) > top ? AR_AT(s, i, j) : top;
            }
        if (top == -INFINITY)
            return AR_EDOMAIN; /* a query with no key */
        for (size_t j = 0; j < n; j++)
            if (ar_mask_allows(mask, n, i, j))
                z += exp(AR_AT(s, i, j) - top);
        for (size_t j = 0; j < n; j++) {
            double v = ar_mask_allows(mask, n, i, j) ? exp(AR_AT(s, i, j) - top) / z : 0.0;
            if (axis == AR_AXIS_ROW)
                AR_AT(p, i, j) = v;
            else
                AR_AT(p, j, i) = v;
        }
    }
    return AR_OK;
}

int ar_mask_softmax(ar_cview s, const ar_mask *mask, ar_axis axis, ar_view p, ar_error *err)
{
    if (ar_cview_check(s, err) != AR_OK || ar_view_check(p, err) != AR_OK)
        return AR_EINVAL; /* the view check filled err */
    ar_colmajor sc;
    ar_colmajor_out pc;
    int rc = ar_colmajor_get(&sc, s);
    int rp = ar_colmajor_out_get(&pc, p);
    if (rc == AR_OK)
        rc = rp;
    if (rc == AR_OK)
        rc = ar_cm_mask_softmax(&sc.m, mask, axis, &pc.m);
    rc = ar_colmajor_out_put(&pc, rc);
    ar_colmajor_release(&sc);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "masked softmax: %s", ar_strerror(rc));
}
