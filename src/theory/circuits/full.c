/* Copying scores of a full OV circuit U W_O W_V E from d-sized factors
 * (include/attnrank/circuits.h, docs/theory/circuits.md, "Full circuits").
 *
 * With B_1 = U W_O and B_2 = E^T W_V^T (V x d_head) the full circuit is
 * B_1 B_2^T.  Its nonzero eigenvalues are those of B_2^T B_1 = W_V C W_O
 * (C = E U); its singular values those of P Q^T with P = R_U W_O and
 * Q = R_E W_V^T (B_1 = Q_U P, B_2 = Q_E Q); its symmetric part is
 * B J B^T with B = [B_1, B_2], whose nonzero eigenvalues are those of J G
 * with G = B^T B = [[P^T P, core^T], [core, Q^T Q]], that is of the
 * symmetric G^(1/2) J G^(1/2).  The Gram route loses nothing that matters
 * here: the eigenvalues of S come out with absolute error of order
 * u ||B||^2, the size of the backward error of any eigensolver on S. */
#include "circuits_internal.h"
#include "core/lapack_internal.h"

#include <cblas.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* sum |eig(G^(1/2) J G^(1/2))| for the 2h x 2h Gram matrix g (destroyed).
 * With G = V diag(w) V^T and X = V diag(sqrt w), G^(1/2) J G^(1/2) =
 * V (X^T J X) V^T has the eigenvalues of the symmetric X^T J X
 * = (A + A^T) / 2, A = X_1^T X_2 with X_1, X_2 the top and bottom h rows of
 * X: one product instead of forming the square root. */
int ar_circuit_sym_gram(double *g, size_t h, double *sum, ar_error *err)
{
    size_t n = 2 * h;
    double *w = malloc(n * sizeof(double));
    double *a = malloc(n * n * sizeof(double));
    int st = w && a ? AR_OK : ar_error_set(err, AR_ENOMEM, "full circuit: out of memory");
    if (st == AR_OK && (st = ar_lapack_status(ar_lapack_dsyev('V', 'U', (lapack_int)n, g,
                                                              (lapack_int)n, w))) != AR_OK)
        ar_error_set(err, st, "full circuit: dsyev of the Gram matrix failed");
    if (st == AR_OK) {
        /* X = V diag(sqrt(max(w, 0))) in place: a Gram matrix is PSD, negative
         * eigenvalues are round-off */
        for (size_t l = 0; l < n; l++) {
            double r = sqrt(fmax(w[l], 0.0));
            for (size_t i = 0; i < n; i++)
                g[i + l * n] *= r;
        }
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)n, (int)n, (int)h, 1.0, g,
                    (int)n, g + h, (int)n, 0.0, a, (int)n);
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i <= j; i++)
                a[i + j * n] = 0.5 * (a[i + j * n] + a[j + i * n]); /* the upper triangle */
        if ((st = ar_lapack_status(ar_lapack_dsyev('N', 'U', (lapack_int)n, a, (lapack_int)n,
                                                   w))) != AR_OK)
            ar_error_set(err, st, "full circuit: dsyev of the symmetric core failed");
    }
    if (st == AR_OK) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += fabs(w[i]);
        *sum = s;
    }
    free(w);
    free(a);
    return st;
}

typedef struct full_work {
    double *wo, *wvt; /* d x h copies of W_O and W_V^T */
    double *p, *q;    /* k x h: R_U W_O, R_E W_V^T */
    double *cwo;      /* d x h: C W_O */
    double *core;     /* h x h: W_V C W_O */
    double *g;        /* 2h x 2h Gram matrix */
    double *eig;      /* 3h: wr, wi, rconde */
} full_work;

static void work_free(full_work *w)
{
    free(w->wo);
    free(w->wvt);
    free(w->p);
    free(w->q);
    free(w->cwo);
    free(w->core);
    free(w->g);
    free(w->eig);
}

static int work_alloc(full_work *w, size_t d, size_t k, size_t h)
{
    memset(w, 0, sizeof *w);
    w->wo = malloc(d * h * sizeof(double));
    w->wvt = malloc(d * h * sizeof(double));
    w->p = malloc(k * h * sizeof(double));
    w->q = malloc(k * h * sizeof(double));
    w->cwo = malloc(d * h * sizeof(double));
    w->core = malloc(h * h * sizeof(double));
    w->g = malloc(4 * h * h * sizeof(double));
    w->eig = malloc(3 * h * sizeof(double));
    return w->wo && w->wvt && w->p && w->q && w->cwo && w->core && w->g && w->eig ? AR_OK
                                                                                  : AR_ENOMEM;
}

/* out (k x h) = R x for the k x d upper-triangular r and x (d x h): dtrmm
 * in place when R is square (half the flops of a product), else a product. */
static int tri_mul(const double *r, size_t k, size_t d, const double *x, size_t h, double *out)
{
    if (k != d || d > INT_MAX || h > INT_MAX)
        return ar_circuit_mul(AR_NO_TRANS, AR_NO_TRANS, r, k, d, x, d, h, out, k, h);
    memcpy(out, x, d * h * sizeof(double));
    cblas_dtrmm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, (int)d, (int)h,
                1.0, r, (int)d, out, (int)d);
    return AR_OK;
}

/* The products: P, Q, the core, and the Gram matrix (core copied before the
 * eigensolver destroys it).  Tied, R_U = R_E = R with R^T R = E E^T = C, so
 * the core W_V C W_O is Q^T P (h x h from k x h) and C W_O is not needed. */
static int products(const ar_circuit_embed *e, full_work *w, size_t h)
{
    size_t d = e->d, k = e->k, n = 2 * h;
    int st = tri_mul(e->r_u, k, d, w->wo, h, w->p);
    if (st == AR_OK)
        st = tri_mul(e->r_e, k, d, w->wvt, h, w->q);
    if (st == AR_OK && e->tied)
        st = ar_circuit_mul(AR_TRANS, AR_NO_TRANS, w->q, k, h, w->p, k, h, w->core, h, h);
    if (st == AR_OK && !e->tied)
        st = ar_circuit_mul(AR_NO_TRANS, AR_NO_TRANS, e->c, d, d, w->wo, d, h, w->cwo, d, h);
    if (st == AR_OK && !e->tied) /* core = W_V (C W_O) = (W_V^T)^T (C W_O) */
        st = ar_circuit_mul(AR_TRANS, AR_NO_TRANS, w->wvt, d, h, w->cwo, d, h, w->core, h, h);
    double *ptp = malloc(h * h * sizeof(double)), *qtq = malloc(h * h * sizeof(double));
    if (st == AR_OK && (ptp == NULL || qtq == NULL))
        st = AR_ENOMEM;
    if (st == AR_OK)
        st = ar_circuit_mul(AR_TRANS, AR_NO_TRANS, w->p, k, h, w->p, k, h, ptp, h, h);
    if (st == AR_OK)
        st = ar_circuit_mul(AR_TRANS, AR_NO_TRANS, w->q, k, h, w->q, k, h, qtq, h, h);
    if (st == AR_OK)
        for (size_t j = 0; j < h; j++)
            for (size_t i = 0; i < h; i++) {
                w->g[i + j * n] = ptp[i + j * h];
                w->g[(h + i) + (h + j) * n] = qtq[i + j * h];
                w->g[(h + i) + j * n] = w->core[i + j * h]; /* B_2^T B_1 */
                w->g[j + (h + i) * n] = w->core[i + j * h]; /* its transpose */
            }
    free(ptp);
    free(qtq);
    return st;
}

int ar_circuit_full_ov(const ar_circuit_embed *e, ar_cview w_v, ar_cview w_o,
                       const ar_circuit_opts *opts, ar_copying_scores *out, double *svals,
                       ar_error *err)
{
    if (e == NULL || out == NULL || e->c == NULL)
        return ar_error_set(err, AR_EINVAL, "full circuit: NULL or empty argument");
    memset(out, 0, sizeof *out);
    int st = ar_circuit_check_head(w_v, w_o, "full circuit", err);
    if (st != AR_OK)
        return st;
    size_t h = w_v.rows, d = w_v.cols;
    if (d != e->d)
        return ar_error_set(err, AR_ESIZE, "full circuit: the head has width %zu, the embedding %zu",
                            d, e->d);
    ar_circuit_opts_init(&out->opts);
    if (opts != NULL)
        out->opts = *opts;
    if (!(out->opts.zero_factor > 0.0))
        out->opts.zero_factor = AR_CIRCUIT_ZERO_FACTOR_PER_DIM * (double)h;
    if (!(out->opts.rcond_warn >= 0.0))
        out->opts.rcond_warn = AR_CIRCUIT_RCOND_WARN;
    out->d = d;
    out->d_head = h;
    full_work w;
    st = work_alloc(&w, d, e->k, h);
    if (st != AR_OK) {
        work_free(&w);
        return ar_error_set(err, st, "full circuit: out of memory");
    }
    ar_circuit_copy_cm(w_o, w.wo);
    ar_circuit_copy_cm(ar_cview_transpose(w_v), w.wvt);
    st = products(e, &w, h);
    if (st != AR_OK)
        ar_error_set(err, st, "full circuit: products failed: %s", ar_strerror(st));
    double u = DBL_EPSILON / 2.0, fv = ar_matrix_norm_fro(w_v), fo = ar_matrix_norm_fro(w_o);
    double t = 0.0, core_fro = 0.0;
    for (size_t i = 0; st == AR_OK && i < h; i++)
        t += w.core[i + i * h];
    for (size_t i = 0; st == AR_OK && i < h * h; i++)
        core_fro = hypot(core_fro, w.core[i]);
    /* eta: |fl(E U) - E U| <= gamma_V |E||U|, then two products of d terms */
    double nv = (double)e->vocab, nd = (double)d;
    double gam = nv * u / (1.0 - nv * u) + 2.0 * nd * u / (1.0 - nd * u);
    out->eig_eta = gam * e->fro_e * e->fro_u * fv * fo + (double)h * u * core_fro;
    if (st == AR_OK)
        st = ar_circuit_eig_core(w.core, h, w.eig, w.eig + h, w.eig + 2 * h, err);
    if (st == AR_OK)
        ar_circuit_eig_score(w.eig, w.eig + h, w.eig + 2 * h, h, out);
    double *s = st == AR_OK ? malloc(e->k * sizeof(double)) : NULL;
    if (st == AR_OK && s == NULL)
        st = ar_error_set(err, AR_ENOMEM, "full circuit: out of memory");
    if (st == AR_OK) {
        ar_circuit_factor f = ar_circuit_factor_empty();
        ar_cview pv, qv;
        ar_cview_init_ld(&pv, w.p, e->k, h, e->k, AR_COL_MAJOR, err);
        ar_cview_init_ld(&qv, w.q, e->k, h, e->k, AR_COL_MAJOR, err);
        st = ar_circuit_factor_init(&f, pv, qv, err);
        memset(s, 0, e->k * sizeof(double));
        if (st == AR_OK)
            st = ar_circuit_factor_svals(&f, s, err);
        for (size_t i = 0; st == AR_OK && i < f.k; i++)
            out->nuclear_norm += s[i];
        if (st == AR_OK && svals != NULL)
            memcpy(svals, s, e->k * sizeof(double));
        ar_circuit_factor_free(&f);
    }
    free(s);
    if (st == AR_OK)
        st = ar_circuit_sym_gram(w.g, h, &out->sym_abs_sum, err);
    work_free(&w);
    if (st != AR_OK)
        return st;
    /* below these the nuclear norm or sum |eig S| is round-off of a zero circuit */
    double scale_p = e->fro_u * fo, scale_q = e->fro_e * fv;
    double zl = 8.0 * (double)h * (nd + (double)h) * u;
    out->nuc_defined = out->nuclear_norm > zl * scale_p * scale_q;
    out->sym_defined = out->sym_abs_sum > zl * fmax(scale_p, scale_q) * fmax(scale_p, scale_q);
    out->s_nuc = out->nuc_defined ? t / out->nuclear_norm : NAN;
    out->s_sym = out->sym_defined ? t / out->sym_abs_sum : NAN;
    out->trace.trace = t;
    out->trace.sign = t > 0.0 ? 1 : (t < 0.0 ? -1 : 0);
    out->trace.bound = out->trace.storage_part = out->trace.arith_part = NAN;
    out->trace.sign_certain = 0;
    out->null_sd_eig = out->null_sd_nuc = NAN;
    out->z_eig = out->z_nuc = out->z_sym = NAN;
    return AR_OK;
}
