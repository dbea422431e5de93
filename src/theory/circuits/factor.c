/* Factored circuits M = A B^T (A, B: d x r) with the triangular factors of
 * thin QRs of A and B computed once: ||M||_F = ||R_A R_B^T||_F and the
 * singular values of M are those of the k x k core R_A R_B^T, because
 * M = Q_A (R_A R_B^T) Q_B^T with Q_A, Q_B having orthonormal columns. */
#include "circuits_internal.h"
#include "attnrank/spectrum.h"
#include "core/lapack_internal.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void ar_circuit_copy_cm(ar_cview v, double *dst)
{
    for (size_t j = 0; j < v.cols; j++)
        for (size_t i = 0; i < v.rows; i++)
            dst[i + j * v.rows] = AR_VAT(v, i, j);
}

int ar_circuit_qr_r(double *a, size_t m, size_t n, double *r, ar_error *err)
{
    if (m > INT_MAX || n > INT_MAX)
        return ar_error_set(err, AR_EUNSUPPORTED, "circuit QR: %zu x %zu exceeds LAPACK's integers",
                            m, n);
    size_t k = m < n ? m : n;
    double *tau = malloc((k > 0 ? k : 1) * sizeof *tau);
    if (tau == NULL)
        return ar_error_set(err, AR_ENOMEM, "circuit QR: out of memory");
    lapack_int info = ar_lapack_dgeqrf((lapack_int)m, (lapack_int)n, a, (lapack_int)m, tau);
    free(tau);
    int st = ar_lapack_status(info);
    if (st != AR_OK)
        return ar_error_set(err, st, "circuit QR: dgeqrf info %d", (int)info);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < k; i++)
            r[i + j * k] = i <= j ? a[i + j * m] : 0.0;
    return AR_OK;
}

int ar_circuit_mul(ar_trans ta, ar_trans tb, const double *a, size_t ar, size_t ac, const double *b,
               size_t br, size_t bc, double *c, size_t cr, size_t cc)
{
    ar_cview av, bv;
    ar_view cv;
    int st = ar_cview_init_ld(&av, a, ar, ac, ar, AR_COL_MAJOR, NULL);
    if (st == AR_OK)
        st = ar_cview_init_ld(&bv, b, br, bc, br, AR_COL_MAJOR, NULL);
    if (st == AR_OK)
        st = ar_view_init_ld(&cv, c, cr, cc, cr, AR_COL_MAJOR, NULL);
    if (st == AR_OK)
        st = ar_matrix_gemm(ta, tb, 1.0, av, bv, 0.0, cv, NULL);
    return st;
}

ar_circuit_factor ar_circuit_factor_empty(void)
{
    ar_circuit_factor f = {.a = NULL, .b = NULL, .ra = NULL, .rb = NULL};
    return f;
}

void ar_circuit_factor_free(ar_circuit_factor *f)
{
    if (f == NULL)
        return;
    free(f->a);
    free(f->b);
    free(f->ra);
    free(f->rb);
    *f = ar_circuit_factor_empty();
}

static int check_finite(ar_cview v, const char *name, ar_error *err)
{
    size_t bi = 0, bj = 0;
    if (ar_matrix_check_finite(v, &bi, &bj, err) != AR_OK)
        return ar_error_set(err, AR_ENONFINITE, "circuit factor: %s(%zu, %zu) is not finite", name,
                            bi, bj);
    return AR_OK;
}

/* The k x k core R_A R_B^T into core (column-major). */
static int core_of(const ar_circuit_factor *f, double *core)
{
    ar_cview ra, rb;
    ar_view c;
    int st = ar_cview_init_ld(&ra, f->ra, f->k, f->r, f->k, AR_COL_MAJOR, NULL);
    if (st == AR_OK)
        st = ar_cview_init_ld(&rb, f->rb, f->k, f->r, f->k, AR_COL_MAJOR, NULL);
    if (st == AR_OK)
        st = ar_view_init_ld(&c, core, f->k, f->k, f->k, AR_COL_MAJOR, NULL);
    if (st == AR_OK)
        st = ar_matrix_gemm(AR_NO_TRANS, AR_TRANS, 1.0, ra, rb, 0.0, c, NULL);
    return st;
}

int ar_circuit_factor_init(ar_circuit_factor *f, ar_cview a, ar_cview b, ar_error *err)
{
    if (f == NULL)
        return ar_error_set(err, AR_EINVAL, "circuit factor: NULL result");
    *f = ar_circuit_factor_empty();
    if (ar_cview_check(a, err) != AR_OK || ar_cview_check(b, err) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "circuit factor: invalid view");
    if (a.rows != b.rows || a.cols != b.cols)
        return ar_error_set(err, AR_ESIZE, "circuit factor: A is %zu x %zu but B is %zu x %zu",
                            a.rows, a.cols, b.rows, b.cols);
    if (a.rows == 0 || a.cols == 0)
        return ar_error_set(err, AR_EINVAL, "circuit factor: empty factors (%zu x %zu)", a.rows,
                            a.cols);
    int st = check_finite(a, "A", err);
    if (st == AR_OK)
        st = check_finite(b, "B", err);
    if (st != AR_OK)
        return st;
    size_t d = a.rows, r = a.cols, k = d < r ? d : r;
    f->d = d;
    f->r = r;
    f->k = k;
    f->a = malloc(d * r * sizeof(double));
    f->b = malloc(d * r * sizeof(double));
    f->ra = malloc(k * r * sizeof(double));
    f->rb = malloc(k * r * sizeof(double));
    double *scratch = malloc(d * r * sizeof(double));
    double *core = malloc(k * k * sizeof(double));
    if (f->a == NULL || f->b == NULL || f->ra == NULL || f->rb == NULL || scratch == NULL ||
        core == NULL)
        st = ar_error_set(err, AR_ENOMEM, "circuit factor: out of memory for d %zu, r %zu", d, r);
    if (st == AR_OK) {
        ar_circuit_copy_cm(a, f->a);
        ar_circuit_copy_cm(b, f->b);
        memcpy(scratch, f->a, d * r * sizeof(double));
        st = ar_circuit_qr_r(scratch, d, r, f->ra, err);
    }
    if (st == AR_OK) {
        memcpy(scratch, f->b, d * r * sizeof(double));
        st = ar_circuit_qr_r(scratch, d, r, f->rb, err);
    }
    if (st == AR_OK)
        st = core_of(f, core);
    if (st == AR_OK) {
        ar_cview cv;
        ar_cview_init_ld(&cv, core, k, k, k, AR_COL_MAJOR, err);
        f->fro = ar_matrix_norm_fro(cv);
    }
    free(scratch);
    free(core);
    if (st != AR_OK)
        ar_circuit_factor_free(f);
    return st;
}

int ar_circuit_factor_ov(ar_circuit_factor *f, ar_cview w_v, ar_cview w_o, ar_error *err)
{
    return ar_circuit_factor_init(f, w_o, ar_cview_transpose(w_v), err);
}

int ar_circuit_factor_qk(ar_circuit_factor *f, ar_cview w_q, ar_cview w_k, ar_error *err)
{
    return ar_circuit_factor_init(f, ar_cview_transpose(w_q), ar_cview_transpose(w_k), err);
}

int ar_circuit_factor_svals(const ar_circuit_factor *f, double *s, ar_error *err)
{
    if (f == NULL || s == NULL || f->ra == NULL || f->rb == NULL)
        return ar_error_set(err, AR_EINVAL, "circuit spectrum: NULL or empty factor");
    double *core = malloc(f->k * f->k * sizeof(double));
    if (core == NULL)
        return ar_error_set(err, AR_ENOMEM, "circuit spectrum: out of memory");
    int st = core_of(f, core);
    if (st == AR_OK) {
        ar_cview cv;
        ar_cview_init_ld(&cv, core, f->k, f->k, f->k, AR_COL_MAJOR, err);
        st = ar_spectrum_svals(cv, s, err);
        if (st != AR_OK)
            ar_error_set(err, st, "circuit spectrum: SVD of the %zu x %zu core failed", f->k, f->k);
    }
    free(core);
    return st;
}
