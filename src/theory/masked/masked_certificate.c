/* Certificates of masked attention: query and key weights from a completion
 * S = U V^T (rows as queries), and the forward check that runs them through
 * a masked softmax exactly as a model would (docs/theory/masked-attention.md). */
#include "masked_internal.h"
#include "attnrank/spectrum.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/lapack_internal.h"
#include "core/matrix_internal.h"
#include "attention/attention_internal.h"
#include "core/spectrum_internal.h"

/* Q (n x r, orthonormal columns) and R (r x r) with A = Q R; A is n x r. */
static int thin_qr(const ar_matrix *a, size_t r, ar_matrix *q, ar_matrix *rr)
{
    size_t n = a->rows;
    double *tau = malloc((r > 0 ? r : 1) * sizeof *tau);
    if (tau == NULL)
        return AR_ENOMEM;
    int rc = ar_matrix_alloc(q, n, r, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(rr, r, r, NULL);
    if (rc == AR_OK) {
        for (size_t j = 0; j < r; j++)
            memcpy(&AR_AT(q, 0, j), &AR_AT(a, 0, j), n * sizeof(double));
        lapack_int info =
            ar_lapack_dgeqrf((lapack_int)n, (lapack_int)r, q->data, (lapack_int)q->ld, tau);
        for (size_t j = 0; info == 0 && j < r; j++)
            for (size_t i = 0; i <= j; i++)
                AR_AT(rr, i, j) = AR_AT(q, i, j);
        if (info == 0)
            info = ar_lapack_dorgqr((lapack_int)n, (lapack_int)r, (lapack_int)r, q->data,
                                    (lapack_int)q->ld, tau);
        rc = info == 0                          ? AR_OK
             : info == LAPACK_WORK_MEMORY_ERROR ? AR_ENOMEM
                                                : AR_ELAPACK;
    }
    free(tau);
    return rc;
}

/* W = k^{1/4} diag(sqrt s) F^T Q^T pinv(X): rows 0..r-1 of the k x d w. */
static int balanced_factor(const ar_matrix *qf, const ar_matrix *f, const double *s, size_t r,
                           size_t k, const ar_matrix *pinv, ar_matrix *w)
{
    size_t n = qf->rows;
    ar_matrix t = ar_matrix_empty(); /* r x n: F^T Q^T */
    int rc = ar_matrix_alloc(&t, r, n, NULL);
    if (rc == AR_OK)
        rc = ar_cm_gemm(1, 1, 1.0, f, qf, 0.0, &t);
    double scale = sqrt(sqrt((double)k));
    for (size_t j = 0; rc == AR_OK && j < n; j++)
        for (size_t i = 0; i < r; i++)
            AR_AT(&t, i, j) *= scale * sqrt(s[i]);
    ar_matrix wr = ar_matrix_alias(w->data, r, w->cols, w->ld);
    if (rc == AR_OK && pinv != NULL)
        rc = ar_cm_gemm(0, 0, 1.0, &t, pinv, 0.0, &wr);
    else if (rc == AR_OK)
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < r; i++)
                AR_AT(&wr, i, j) = AR_AT(&t, i, j);
    ar_matrix_free(&t);
    return rc;
}

int ar_masked_weights(const ar_matrix *u, const ar_matrix *v, size_t r, size_t k,
                      const ar_matrix *pinv, ar_matrix *wq, ar_matrix *wk)
{
    if (u == NULL || v == NULL || wq == NULL || wk == NULL || k < r || k == 0 ||
        r > u->cols || r > v->cols || u->rows != v->rows)
        return AR_EINVAL;
    size_t n = u->rows, d = pinv != NULL ? pinv->cols : n;
    *wq = ar_matrix_empty();
    *wk = ar_matrix_empty();
    int rc = ar_matrix_alloc(wq, k, d, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(wk, k, d, NULL);
    if (rc != AR_OK || r == 0) /* r = 0: zero weights give uniform attention */
        return rc;
    /* U V^T = Qu (Ru Rv^T) Qv^T = Qu W diag(s) Z^T Qv^T: splitting diag(s)
     * evenly keeps both weights as well conditioned as the product allows. */
    ar_matrix qu = ar_matrix_empty(), ru = ar_matrix_empty(), qv = ar_matrix_empty(),
              rv = ar_matrix_empty(), m = ar_matrix_empty(), w = ar_matrix_empty(),
              zt = ar_matrix_empty();
    double *s = malloc(r * sizeof *s);
    rc = s == NULL ? AR_ENOMEM : AR_OK;
    if (rc == AR_OK)
        rc = thin_qr(u, r, &qu, &ru);
    if (rc == AR_OK)
        rc = thin_qr(v, r, &qv, &rv);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&m, r, r, NULL);
    if (rc == AR_OK)
        rc = ar_cm_gemm(0, 1, 1.0, &ru, &rv, 0.0, &m);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&w, r, r, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&zt, r, r, NULL);
    if (rc == AR_OK)
        rc = ar_cm_svd(&m, &w, s, &zt);
    if (rc == AR_OK)
        rc = balanced_factor(&qu, &w, s, r, k, pinv, wq);
    if (rc == AR_OK) {
        ar_matrix z = ar_matrix_empty();
        rc = ar_cm_transpose(&z, &zt);
        if (rc == AR_OK)
            rc = balanced_factor(&qv, &z, s, r, k, pinv, wk);
        ar_matrix_free(&z);
    }
    free(s);
    ar_matrix_free(&qu);
    ar_matrix_free(&ru);
    ar_matrix_free(&qv);
    ar_matrix_free(&rv);
    ar_matrix_free(&m);
    ar_matrix_free(&w);
    ar_matrix_free(&zt);
    if (rc != AR_OK) {
        ar_matrix_free(wq);
        ar_matrix_free(wk);
    }
    return rc;
}

/* Row-query logits S = (W_q X)^T (W_k X) / sqrt(k) (X NULL: identity). */
static int forward_logits(const ar_matrix *wq, const ar_matrix *wk, const ar_matrix *x,
                          ar_matrix *s)
{
    size_t k = wq->rows;
    if (x == NULL)
        return ar_cm_gemm(1, 0, 1.0 / sqrt((double)k), wq, wk, 0.0, s);
    /* ar_attention_logits computes (B X)^T (A X) / sqrt(k) for (A, B) =
     * (its wq, its wk): rows as queries is that with the roles exchanged. */
    return ar_cm_attention_logits(x, wk, wq, s);
}

/* Softmax of query i over its allowed keys against P's row: max-abs error,
 * KL(p || q), and the spread of S - L (the logit error up to the shift). */
static void check_row(const ar_matrix *s, const ar_matrix *prow, const ar_matrix *lrow,
                      const unsigned char *allowed, const ar_matrix *half, size_t i,
                      double *max_abs, double *kl, double *logit_err, double *ratio)
{
    double worst_ratio = 0.0;
    size_t n = s->cols;
    const unsigned char *a = allowed + i * n;
    double top = -INFINITY, z = 0.0, lo = INFINITY, hi = -INFINITY;
    for (size_t j = 0; j < n; j++)
        if (a[j] && AR_AT(s, i, j) > top)
            top = AR_AT(s, i, j);
    for (size_t j = 0; j < n; j++)
        if (a[j])
            z += exp(AR_AT(s, i, j) - top);
    double lse = top + log(z), acc = 0.0, worst = 0.0;
    for (size_t j = 0; j < n; j++) {
        double p = AR_AT(prow, i, j);
        if (!a[j]) { /* masked: the model gives exactly 0 */
            if (fabs(p) > worst)
                worst = fabs(p);
            continue;
        }
        double logq = AR_AT(s, i, j) - lse;
        double e = fabs(exp(logq) - p);
        if (e > worst || isnan(e))
            worst = e;
        if (half != NULL) {
            double t = e / AR_AT(half, i, j);
            if (t > worst_ratio || isnan(t))
                worst_ratio = t;
        }
        acc += p * (AR_AT(lrow, i, j) - logq);
        double diff = AR_AT(s, i, j) - AR_AT(lrow, i, j);
        lo = diff < lo ? diff : lo;
        hi = diff > hi ? diff : hi;
    }
    *max_abs = worst;
    *kl = acc > 0.0 ? acc : 0.0; /* rounding of an exact certificate; KL itself is >= 0 */
    *logit_err = (hi - lo) / 2.0; /* the best shift c_i puts S - L - c_i in [-err, err] */
    *ratio = worst_ratio;
}

int ar_masked_forward_check(const ar_matrix *wq, const ar_matrix *wk, const ar_matrix *x,
                            const ar_matrix *prow, const ar_matrix *lrow,
                            const unsigned char *allowed, const ar_matrix *half,
                            ar_certificate *c)
{
    size_t n = prow->rows;
    ar_matrix s = ar_matrix_empty();
    int rc = ar_matrix_alloc(&s, n, n, NULL);
    if (rc == AR_OK)
        rc = forward_logits(wq, wk, x, &s);
    if (rc != AR_OK) {
        ar_matrix_free(&s);
        return rc;
    }
    double worst = 0.0, kl_sum = 0.0, kl_max = 0.0, logit = 0.0, ratio = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e, kl, le, t;
        check_row(&s, prow, lrow, allowed, half, i, &e, &kl, &le, &t);
        ratio = t > ratio || isnan(t) ? t : ratio;
        worst = e > worst || isnan(e) ? e : worst;
        kl_max = kl > kl_max || isnan(kl) ? kl : kl_max;
        logit = le > logit || isnan(le) ? le : logit;
        kl_sum += kl;
    }
    c->max_abs = worst;
    c->kl_mean = kl_sum / (double)n;
    c->kl_max = kl_max;
    c->logit_max_abs = logit;
    c->rounding_ratio = ratio;
    ar_matrix_free(&s);
    return AR_OK;
}
