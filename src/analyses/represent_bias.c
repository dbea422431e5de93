/* represent with a fixed positional bias B (docs/theory/positional-bias.md):
 * softmax(S + B) = P iff S = log P - B up to a shift per query, so the run
 * analyses P' = normalize(P exp(-B)) without a bias; here the parts that
 * need P and B themselves: P's sums, the bias rank and reach, and the
 * certificate's forward check on S + B. */
#include "represent_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int represent_bias_remove(ar_cview p, ar_cview bias, ar_axis axis, ar_matrix *out,
                          ar_error *err)
{
    *out = ar_matrix_empty();
    int rc = ar_matrix_alloc(out, p.rows, p.cols, err);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "represent: cannot allocate the map without the bias");
    rc = ar_bias_remove(p, bias, axis, ar_matrix_view(out), err);
    if (rc != AR_OK)
        ar_matrix_free(out);
    return rc;
}

/* KL(P || Q) of each query (a column for AR_AXIS_COL, a row otherwise):
 * its mean and maximum; entries with P = 0 add nothing, Q = 0 under P > 0
 * gives inf. */
static void kl_per_query(ar_cview p, ar_cview q, ar_axis axis, double *mean, double *max)
{
    size_t n = p.rows;
    double sum = 0.0, top = 0.0;
    for (size_t a = 0; a < n; a++) {
        double kl = 0.0;
        for (size_t b = 0; b < n; b++) {
            size_t i = axis == AR_AXIS_COL ? b : a, j = axis == AR_AXIS_COL ? a : b;
            double pv = AR_VAT(p, i, j), qv = AR_VAT(q, i, j);
            if (pv > 0.0)
                kl += qv > 0.0 ? pv * log(pv / qv) : INFINITY;
        }
        sum += kl;
        top = kl > top ? kl : top;
    }
    *mean = sum / (double)n;
    *max = top;
}

/* softmax(S + B) under the mask against P, S the certificate's logits on X
 * (X = I when not given) with queries as rows, as ar_mask_softmax takes
 * them. */
static int forward_check(ar_cview p, const ar_cview *x, ar_cview bias, const ar_mask *mask,
                         ar_axis axis, ar_certificate *cert, ar_error *err)
{
    size_t n = p.rows;
    ar_matrix eye = ar_matrix_empty(), s = ar_matrix_empty(), q = ar_matrix_empty();
    int rc = ar_matrix_alloc(&s, n, n, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&q, n, n, err);
    if (rc == AR_OK && x == NULL && (rc = ar_matrix_alloc(&eye, n, n, err)) == AR_OK)
        rc = ar_matrix_identity(ar_matrix_view(&eye), err);
    ar_cview xv = x != NULL ? *x : ar_matrix_cview(&eye);
    /* (W_q X)^T (W_k X) / sqrt(K): row i is query i */
    if (rc == AR_OK)
        rc = ar_attention_logits(xv, ar_matrix_cview(&cert->wk), ar_matrix_cview(&cert->wq),
                                 ar_matrix_view(&s), err);
    for (size_t j = 0; rc == AR_OK && j < n; j++)
        for (size_t i = 0; i < n; i++)
            s.data[i + j * s.ld] += axis == AR_AXIS_ROW ? AR_VAT(bias, i, j) : AR_VAT(bias, j, i);
    if (rc == AR_OK)
        rc = ar_mask_softmax(ar_matrix_cview(&s), mask, axis, ar_matrix_view(&q), err);
    if (rc == AR_OK) {
        cert->max_abs = ar_matrix_max_abs_diff(ar_matrix_cview(&q), p);
        kl_per_query(p, ar_matrix_cview(&q), axis, &cert->kl_mean, &cert->kl_max);
    } else {
        rc = ar_error_set(err, rc, "represent: the forward check with the bias failed (%s)",
                          ar_strerror(rc));
    }
    ar_matrix_free(&eye);
    ar_matrix_free(&s);
    ar_matrix_free(&q);
    return rc;
}

int represent_bias_finish(ar_cview p, const ar_cview *x, ar_cview bias,
                          ar_represent_run_result *out, ar_error *err)
{
    ar_axis axis = out->masked ? out->masked_res.axis : out->plain.axis;
    double sum_tol = out->masked ? out->masked_res.sum_tol : out->plain.sum_tol;
    /* P' sums to 1 by construction: the check that P is a map is on P. */
    double defect = ar_attention_stochastic_defect(p, axis);
    if (!(defect <= sum_tol))
        return ar_error_set(err, AR_EDOMAIN,
                            "P is not %s-stochastic: largest |sum - 1| = %.3g > tolerance %.3g",
                            axis == AR_AXIS_COL ? "column" : "row", defect, sum_tol);
    if (out->masked)
        out->masked_res.max_sum_defect = defect;
    else
        out->plain.max_sum_defect = defect;
    const ar_mask none = ar_mask_none();
    const ar_mask *mask = out->masked ? &out->mask : &none;
    int rc = ar_bias_rank(bias, out->masked ? mask : NULL, axis, &out->bias_rank, err);
    if (rc != AR_OK)
        return rc;
    out->biased = 1;
    out->bias_reach = ar_bias_reach(out->head_size, out->bias_rank.upper, p.rows);
    if (!out->have_certificate)
        return AR_OK;
    return forward_check(p, x, bias, mask, axis, &out->certificate, err);
}
