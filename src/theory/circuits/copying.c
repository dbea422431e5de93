/* Copying scores of one head's OV circuit (include/attnrank/circuits.h).
 *
 * The nonzero eigenvalues of W_O W_V (d x d) are those of W_V W_O
 * (d_head x d_head), with multiplicities, so the eigenvalues come from that
 * core.  Which are zero: the computed core is the exact core of a
 * perturbation of norm <= eta, eta bounding the float64 product
 * (gamma_d ||W_V||_F ||W_O||_F, |fl(AB) - AB| <= gamma_d |A||B|) and the
 * backward error of the eigensolver (taken as d_head u ||C||_F); to first
 * order an eigenvalue moves by at most eta / rcond (rcond = |y^H x| of its
 * unit left and right eigenvectors, LAPACK's rconde).  An eigenvalue within
 * zero_factor times that of 0 is not distinguishable from 0.  The storage
 * rounding is deliberately not in eta: it decides the sign of the trace
 * (the certified part) but would call every eigenvalue of a bfloat16 head
 * zero under a worst-case bound. */
#include "circuits_internal.h"
#include "core/lapack_internal.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void ar_circuit_opts_init(ar_circuit_opts *opts)
{
    if (opts == NULL)
        return;
    *opts = (ar_circuit_opts){0}; /* the reserved tail too */
    opts->storage = AR_PREC_F64;
    opts->zero_factor = 0.0;
    opts->rcond_warn = -1.0;
}

int ar_circuit_check_head(ar_cview w_v, ar_cview w_o, const char *what, ar_error *err)
{
    if (ar_cview_check(w_v, err) != AR_OK || ar_cview_check(w_o, err) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "%s: invalid view of W_V or W_O", what);
    if (w_v.rows == 0 || w_v.cols == 0)
        return ar_error_set(err, AR_EINVAL, "%s: W_V is empty (%zu x %zu)", what, w_v.rows,
                            w_v.cols);
    if (w_o.rows != w_v.cols || w_o.cols != w_v.rows)
        return ar_error_set(err, AR_ESIZE,
                            "%s: W_V is %zu x %zu (d_head x d), so W_O must be %zu x %zu, got "
                            "%zu x %zu",
                            what, w_v.rows, w_v.cols, w_v.cols, w_v.rows, w_o.rows, w_o.cols);
    if (w_v.rows > INT_MAX / 4 || w_v.cols > INT_MAX / 4)
        return ar_error_set(err, AR_EUNSUPPORTED, "%s: sizes exceed LAPACK's integers", what);
    size_t bi = 0, bj = 0;
    if (ar_matrix_check_finite(w_v, &bi, &bj, err) != AR_OK)
        return ar_error_set(err, AR_ENONFINITE, "%s: W_V(%zu, %zu) is not finite", what, bi, bj);
    if (ar_matrix_check_finite(w_o, &bi, &bj, err) != AR_OK)
        return ar_error_set(err, AR_ENONFINITE, "%s: W_O(%zu, %zu) is not finite", what, bi, bj);
    return AR_OK;
}

static void resolve(const ar_circuit_opts *given, size_t h, ar_circuit_opts *o)
{
    ar_circuit_opts_init(o);
    if (given != NULL)
        *o = *given;
    if (!(o->zero_factor > 0.0))
        o->zero_factor = AR_CIRCUIT_ZERO_FACTOR_PER_DIM * (double)h;
    if (!(o->rcond_warn >= 0.0))
        o->rcond_warn = AR_CIRCUIT_RCOND_WARN;
}

int ar_circuit_eig_core(double *c, size_t h, double *wr, double *wi, double *rconde,
                        ar_error *err)
{
    double *vl = malloc(h * h * sizeof(double));
    double *vr = malloc(h * h * sizeof(double));
    double *scale = malloc(h * sizeof(double));
    double *rcondv = malloc(h * sizeof(double));
    int st = vl && vr && scale && rcondv ? AR_OK : AR_ENOMEM;
    if (st != AR_OK) {
        ar_error_set(err, st, "copying scores: out of memory for the %zu x %zu core", h, h);
    } else {
        lapack_int ilo = 0, ihi = 0, n = (lapack_int)h;
        double abnrm = 0.0;
        lapack_int info = ar_lapack_dgeevx('N', 'V', 'V', 'E', n, c, n, wr, wi, vl, n, vr, n, &ilo,
                                           &ihi, scale, &abnrm, rconde, rcondv);
        st = ar_lapack_status(info);
        if (st != AR_OK)
            ar_error_set(err, st, "copying scores: dgeevx info %d on the %zu x %zu core", (int)info,
                         h, h);
    }
    free(vl);
    free(vr);
    free(scale);
    free(rcondv);
    return st;
}

/* Eigenvalues of the core C = W_V W_O, their reciprocal conditions, and eta. */
static int core_eigen(ar_cview w_v, ar_cview w_o, double *wr, double *wi, double *rconde,
                      double *eta, ar_error *err)
{
    size_t h = w_v.rows, d = w_v.cols;
    double *c = malloc(h * h * sizeof(double));
    int st = c != NULL ? AR_OK : AR_ENOMEM;
    ar_view cv;
    if (st == AR_OK)
        st = ar_view_init_ld(&cv, c, h, h, h, AR_COL_MAJOR, err);
    if (st == AR_OK)
        st = ar_matrix_gemm(AR_NO_TRANS, AR_NO_TRANS, 1.0, w_v, w_o, 0.0, cv, err);
    if (st != AR_OK) {
        ar_error_set(err, st, "copying scores: cannot form the %zu x %zu core", h, h);
    } else {
        double u = DBL_EPSILON / 2.0, nd = (double)d;
        double gamma = nd * u / (1.0 - nd * u);
        *eta = gamma * ar_matrix_norm_fro(w_v) * ar_matrix_norm_fro(w_o) +
               (double)h * u * ar_matrix_norm_fro(ar_view_const(cv));
        st = ar_circuit_eig_core(c, h, wr, wi, rconde, err);
    }
    free(c);
    return st;
}

void ar_circuit_eig_score(const double *wr, const double *wi, const double *rconde, size_t h,
                          ar_copying_scores *out)
{
    double re = 0.0, abs_sum = 0.0, min_rc = 1.0;
    size_t kept = 0;
    for (size_t i = 0; i < h; i++) {
        double mag = hypot(wr[i], wi[i]);
        double rc = rconde[i] > DBL_MIN ? rconde[i] : DBL_MIN;
        if (!(mag > out->opts.zero_factor * out->eig_eta / rc))
            continue;
        kept++;
        re += wr[i];
        abs_sum += mag;
        min_rc = rc < min_rc ? rc : min_rc;
    }
    out->nonzero_eigs = kept;
    out->eig_abs_sum = abs_sum;
    out->min_rcond = min_rc;
    out->ill_conditioned = kept > 0 && min_rc < out->opts.rcond_warn;
    out->eig_defined = kept > 0;
    out->s_eig = kept > 0 ? re / abs_sum : NAN;
}

/* Below this, ||W_OV||_* or sum |eig S| is round-off of a zero circuit: the
 * QRs and small products are backward stable with errors of order
 * (d + d_head) u ||W_V||_F ||W_O||_F per value. */
static double zero_level(ar_cview w_v, ar_cview w_o)
{
    double h = (double)w_v.rows, d = (double)w_v.cols;
    return 8.0 * h * (d + h) * (DBL_EPSILON / 2.0) * ar_matrix_norm_fro(w_v) *
           ar_matrix_norm_fro(w_o);
}

static int nuc_and_sym(ar_cview w_v, ar_cview w_o, ar_copying_scores *out, ar_error *err)
{
    ar_circuit_factor f = ar_circuit_factor_empty();
    int st = ar_circuit_factor_ov(&f, w_v, w_o, err);
    double *s = st == AR_OK ? malloc(f.k * sizeof(double)) : NULL;
    if (st == AR_OK && s == NULL)
        st = ar_error_set(err, AR_ENOMEM, "copying scores: out of memory");
    if (st == AR_OK)
        st = ar_circuit_factor_svals(&f, s, err);
    if (st == AR_OK) {
        double nuc = 0.0;
        for (size_t i = 0; i < f.k; i++)
            nuc += s[i];
        out->nuclear_norm = nuc;
    }
    free(s);
    ar_circuit_factor_free(&f);
    if (st == AR_OK)
        st = ar_circuit_sym_abs_sum(w_v, w_o, &out->sym_abs_sum, err);
    if (st != AR_OK)
        return st;
    double zero = zero_level(w_v, w_o), t = out->trace.trace;
    out->nuc_defined = out->nuclear_norm > zero;
    out->s_nuc = out->nuc_defined ? t / out->nuclear_norm : NAN;
    out->sym_defined = out->sym_abs_sum > zero;
    out->s_sym = out->sym_defined ? t / out->sym_abs_sum : NAN;
    return AR_OK;
}

int ar_circuit_copying(ar_cview w_v, ar_cview w_o, const ar_circuit_opts *opts,
                       ar_copying_scores *out, double *eig_re, double *eig_im, ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "copying scores: NULL result");
    memset(out, 0, sizeof *out);
    if (opts != NULL && !(opts->zero_factor >= 0.0 || opts->zero_factor < 0.0))
        return ar_error_set(err, AR_EINVAL, "copying scores: zero_factor is NaN");
    int st = ar_circuit_trace_certified(w_v, w_o, opts != NULL ? opts->storage : AR_PREC_F64,
                                        &out->trace, err);
    if (st != AR_OK)
        return st;
    size_t h = w_v.rows, d = w_v.cols;
    out->d = d;
    out->d_head = h;
    resolve(opts, h, &out->opts);
    double *buf = malloc(3 * h * sizeof(double));
    if (buf == NULL)
        return ar_error_set(err, AR_ENOMEM, "copying scores: out of memory");
    double *wr = buf, *wi = buf + h, *rc = buf + 2 * h;
    st = core_eigen(w_v, w_o, wr, wi, rc, &out->eig_eta, err);
    if (st == AR_OK) {
        ar_circuit_eig_score(wr, wi, rc, h, out);
        if (eig_re != NULL)
            memcpy(eig_re, wr, h * sizeof(double));
        if (eig_im != NULL)
            memcpy(eig_im, wi, h * sizeof(double));
        st = nuc_and_sym(w_v, w_o, out, err);
    }
    free(buf);
    if (st != AR_OK)
        return st;
    out->null_sd_eig = ar_copying_null_sd_eig(h);
    out->null_sd_nuc = ar_copying_null_sd_nuc(d, h);
    out->z_eig = out->eig_defined ? out->s_eig / out->null_sd_eig : NAN;
    out->z_nuc = out->nuc_defined ? out->s_nuc / out->null_sd_nuc : NAN;
    out->z_sym = out->sym_defined ? out->s_sym / out->null_sd_nuc : NAN;
    return AR_OK;
}
