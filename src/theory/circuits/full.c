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

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* sum |eig(G^(1/2) J G^(1/2))| for the 2h x 2h Gram matrix g (destroyed). */
int ar_circuit_sym_gram(double *g, size_t h, double *sum, ar_error *err)
{
    size_t n = 2 * h;
    double *w = malloc(n * sizeof(double));
    double *root = malloc(n * n * sizeof(double));
    double *t = malloc(n * n * sizeof(double));
    int st = w && root && t ? AR_OK : ar_error_set(err, AR_ENOMEM, "full circuit: out of memory");
    if (st == AR_OK && (st = ar_lapack_status(ar_lapack_dsyev('V', 'U', (lapack_int)n, g,
                                                              (lapack_int)n, w))) != AR_OK)
        ar_error_set(err, st, "full circuit: dsyev of the Gram matrix failed");
    if (st == AR_OK) {
        /* root = V diag(sqrt(max(w, 0))) V^T; a Gram matrix is PSD, negative
         * eigenvalues are round-off */
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++) {
                double s = 0.0;
                for (size_t l = 0; l < n; l++)
                    s += g[i + l * n] * sqrt(fmax(w[l], 0.0)) * g[j + l * n];
                root[i + j * n] = s;
            }
        /* t = root J root, J = [[0, I/2], [I/2, 0]]: (root J)_{il} = root_{i, l +- h} / 2 */
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++) {
                double s = 0.0;
                for (size_t l = 0; l < n; l++)
                    s += root[i + (l < h ? l + h : l - h) * n] * root[l + j * n];
                t[i + j * n] = 0.5 * s;
            }
        if ((st = ar_lapack_status(ar_lapack_dsyev('N', 'U', (lapack_int)n, t, (lapack_int)n,
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
    free(root);
    free(t);
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

/* The products: P, Q, C W_O, the core, and the Gram matrix (core copied
 * before the eigensolver destroys it). */
static int products(const ar_circuit_embed *e, full_work *w, size_t h)
{
    size_t d = e->d, k = e->k, n = 2 * h;
    int st = ar_circuit_mul(AR_NO_TRANS, AR_NO_TRANS, e->r_u, k, d, w->wo, d, h, w->p, k, h);
    if (st == AR_OK)
        st = ar_circuit_mul(AR_NO_TRANS, AR_NO_TRANS, e->r_e, k, d, w->wvt, d, h, w->q, k, h);
    if (st == AR_OK)
        st = ar_circuit_mul(AR_NO_TRANS, AR_NO_TRANS, e->c, d, d, w->wo, d, h, w->cwo, d, h);
    if (st == AR_OK) /* core = W_V (C W_O) = (W_V^T)^T (C W_O) */
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
        ar_cview_init_ld(&pv, w.p, e->k, h, e->k, AR_COL_MAJOR);
        ar_cview_init_ld(&qv, w.q, e->k, h, e->k, AR_COL_MAJOR);
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
