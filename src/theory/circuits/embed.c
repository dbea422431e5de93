/* The embedding side of full circuits (include/attnrank/circuits.h): the
 * triangular factors R_U, R_E with R^T R = U^T U, E E^T and the d x d core
 * C = E U, computed once per model so that a head costs O(d^2 d_head).
 *
 * Every score of a full circuit depends on U and E only through U^T U,
 * E E^T and C (the factors enter as R W_O and R W_V^T, and any two R with
 * the same R^T R differ by an orthogonal factor on the left, which the
 * eigenvalues, singular values and Gram matrices of full.c ignore).  So R
 * comes from the Cholesky factor of the Gram matrix (dsyrk, V d^2 flops, on
 * the caller's buffer without a copy) rather than a thin QR (2 V d^2 and a
 * V x d copy); both perturb U^T U by O(u ||U||^2).  Tied embeddings then need
 * no product at all: C = E E^T is that Gram matrix.  The QR remains for
 * V < d and for Gram matrices that are not numerically positive definite. */
#include "circuits_internal.h"
#include "core/lapack_internal.h"

#include <cblas.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

ar_circuit_embed ar_circuit_embed_empty(void)
{
    ar_circuit_embed e;
    memset(&e, 0, sizeof e);
    return e;
}

void ar_circuit_embed_free(ar_circuit_embed *e)
{
    if (e == NULL)
        return;
    if (e->r_e != e->r_u)
        free(e->r_e);
    free(e->r_u);
    free(e->c);
    *e = ar_circuit_embed_empty();
}

/* R (k x d) of the thin QR of the V x d view v (named `name`, reported as
 * name(j, i) when transposed), through one column-major copy, which is also
 * checked for finiteness and gives ||v||_F. */
static int r_factor(ar_cview v, const char *name, int transposed, double *r, double *fro,
                    ar_error *err)
{
    size_t rows = v.rows, cols = v.cols;
    double *a = malloc(rows * cols * sizeof(double));
    if (a == NULL)
        return ar_error_set(err, AR_ENOMEM, "embedding: out of memory for a %zu x %zu copy",
                            rows, cols);
    ar_circuit_copy_cm(v, a);
    ar_cview c;
    ar_cview_init_ld(&c, a, rows, cols, rows, AR_COL_MAJOR, err);
    size_t bi = 0, bj = 0;
    int st = AR_OK;
    if (ar_matrix_check_finite(c, &bi, &bj, err) != AR_OK)
        st = ar_error_set(err, AR_ENONFINITE, "embedding: %s(%zu, %zu) is not finite", name,
                          transposed ? bj : bi, transposed ? bi : bj);
    if (st == AR_OK) {
        *fro = ar_matrix_norm_fro(c);
        st = ar_circuit_qr_r(a, rows, cols, r, err);
    }
    free(a);
    return st;
}

/* g (d x d, both triangles) = A^T A for the V x d view a, by dsyrk on the
 * view itself when it has a BLAS layout (no copy), else on a copy. */
static int gram(ar_cview a, double *g, ar_error *err)
{
    size_t v = a.rows, d = a.cols;
    if (v > INT_MAX || d > INT_MAX || a.row_stride > INT_MAX || a.col_stride > INT_MAX)
        return ar_error_set(err, AR_EUNSUPPORTED, "embedding: %zu x %zu exceeds BLAS's integers",
                            v, d);
    double *copy = NULL;
    const double *p = a.data;
    int trans = 1, ld = (int)a.col_stride; /* column-major V x d: G = A^T A */
    if (a.col_stride == 1 && a.row_stride >= d) {
        trans = 0; /* row-major: the column-major d x V A^T, G = A^T (A^T)^T */
        ld = (int)a.row_stride;
    } else if (!(a.row_stride == 1 && a.col_stride >= v)) {
        copy = malloc(v * d * sizeof(double));
        if (copy == NULL)
            return ar_error_set(err, AR_ENOMEM, "embedding: out of memory for a %zu x %zu copy",
                                v, d);
        ar_circuit_copy_cm(a, copy);
        p = copy;
        ld = (int)v;
    }
    cblas_dsyrk(CblasColMajor, CblasUpper, trans ? CblasTrans : CblasNoTrans, (int)d,
                (int)v, 1.0, p, ld, 0.0, g, (int)d);
    free(copy);
    for (size_t j = 0; j < d; j++) /* mirror the upper triangle */
        for (size_t i = j + 1; i < d; i++)
            g[i + j * d] = g[j + i * d];
    return AR_OK;
}

/* R (d x d upper) with R^T R = G by Cholesky of a copy of g.  *ok = 0 when G
 * is not numerically positive definite: dpotrf fails, or a pivot r_ii^2
 * falls below 4 d u max_j G_jj (rank-deficient to working precision); the
 * caller then takes the QR. */
static int cholesky(const double *g, size_t d, double *r, int *ok, ar_error *err)
{
    memcpy(r, g, d * d * sizeof(double));
    lapack_int info = ar_lapack_dpotrf('U', (lapack_int)d, r, (lapack_int)d);
    if (info < 0 || info == LAPACK_WORK_MEMORY_ERROR)
        return ar_error_set(err, ar_lapack_status(info), "embedding: dpotrf info %d", (int)info);
    double gmax = 0.0, pmin = INFINITY;
    for (size_t j = 0; j < d; j++) {
        gmax = fmax(gmax, g[j + j * d]);
        pmin = fmin(pmin, r[j + j * d] * r[j + j * d]);
        for (size_t i = j + 1; i < d; i++)
            r[i + j * d] = 0.0;
    }
    *ok = info == 0 && pmin > 4.0 * (double)d * (DBL_EPSILON / 2.0) * gmax;
    return AR_OK;
}

/* The triangular factor of the V x d view a: by the Gram matrix when V >= d
 * and it is numerically positive definite (then g holds A^T A), else by the
 * thin QR (k x d).  *by_gram says which; *fro = ||a||_F.  A finite diagonal
 * of the Gram matrix proves every entry finite (a NaN or an infinity makes
 * its column's sum of squares one), so the entries are checked one by one
 * only on the QR route. */
static int factor(ar_cview a, const char *name, int transposed, size_t k, double *r, double *g,
                  int *by_gram, double *fro, ar_error *err)
{
    *by_gram = 0;
    size_t d = a.cols;
    if (k == d) {
        int st = gram(a, g, err);
        double tr = 0.0;
        for (size_t j = 0; st == AR_OK && j < d; j++)
            tr += g[j + j * d];
        if (st != AR_OK || !isfinite(tr))
            return st != AR_OK ? st : r_factor(a, name, transposed, r, fro, err);
        *fro = sqrt(tr);
        st = cholesky(g, d, r, by_gram, err);
        if (st != AR_OK || *by_gram)
            return st;
    }
    return r_factor(a, name, transposed, r, fro, err);
}

/* The sizes of e and its buffers: R_U, R_E (k x d, one when tied), C. */
static int alloc_factors(ar_circuit_embed *e, size_t d, size_t vocab, size_t k, int tied,
                         ar_error *err)
{
    e->d = d;
    e->vocab = vocab;
    e->k = k;
    e->tied = tied;
    e->r_u = malloc(k * d * sizeof(double));
    e->r_e = tied ? e->r_u : malloc(k * d * sizeof(double));
    e->c = malloc(d * d * sizeof(double));
    return e->r_u && e->r_e && e->c ? AR_OK : ar_error_set(err, AR_ENOMEM, "embedding: out of memory");
}

int ar_circuit_embed_from_gram(ar_circuit_embed *e, size_t d, size_t vocab, const double *g_u,
                               const double *g_e, const double *c, int *ok, ar_error *err)
{
    *ok = 0;
    *e = ar_circuit_embed_empty();
    if (d == 0 || vocab < d)
        return AR_OK;
    double tu = 0.0, te = 0.0;
    for (size_t j = 0; j < d; j++) {
        tu += g_u[j + j * d];
        te += (g_e != NULL ? g_e : g_u)[j + j * d];
    }
    if (!isfinite(tu) || !isfinite(te))
        return AR_OK; /* the caller's entry-by-entry route names the culprit */
    int st = alloc_factors(e, d, vocab, d, g_e == NULL, err);
    int ok_u = 0, ok_e = 1;
    if (st == AR_OK)
        st = cholesky(g_u, d, e->r_u, &ok_u, err);
    if (st == AR_OK && !e->tied)
        st = cholesky(g_e, d, e->r_e, &ok_e, err);
    if (st == AR_OK)
        memcpy(e->c, c != NULL ? c : g_u, d * d * sizeof(double));
    e->fro_u = sqrt(tu);
    e->fro_e = sqrt(te);
    e->gram = 1;
    *ok = st == AR_OK && ok_u && ok_e;
    if (!*ok)
        ar_circuit_embed_free(e);
    return st;
}

int ar_circuit_embed_init(ar_circuit_embed *e, ar_cview emb, ar_cview unemb, ar_error *err)
{
    if (e == NULL)
        return ar_error_set(err, AR_EINVAL, "embedding: NULL result");
    *e = ar_circuit_embed_empty();
    if (ar_cview_check(emb, err) != AR_OK || ar_cview_check(unemb, err) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "embedding: invalid view");
    if (emb.rows == 0 || emb.cols == 0)
        return ar_error_set(err, AR_EINVAL, "embedding: E is empty (%zu x %zu)", emb.rows,
                            emb.cols);
    if (unemb.rows != emb.cols || unemb.cols != emb.rows)
        return ar_error_set(err, AR_ESIZE, "embedding: E is %zu x %zu (d x V), so U must be %zu x "
                            "%zu, got %zu x %zu", emb.rows, emb.cols, emb.cols, emb.rows,
                            unemb.rows, unemb.cols);
    size_t d = emb.rows, v = emb.cols, k = v < d ? v : d;
    /* tied: U is E^T on the same memory (U(i, j) = E(j, i)) */
    int tied = unemb.data == emb.data && unemb.row_stride == emb.col_stride &&
               unemb.col_stride == emb.row_stride;
    int st = alloc_factors(e, d, v, k, tied, err);
    /* tied: C = E E^T is the Gram matrix of U = E^T, a by-product of its factor */
    int by_gram = 0, e_gram = 0;
    if (st == AR_OK)
        st = factor(unemb, "U", 0, k, e->r_u, e->c, &by_gram, &e->fro_u, err);
    e->fro_e = e->fro_u;
    if (st == AR_OK && !e->tied)
        st = factor(ar_cview_transpose(emb), "E", 1, k, e->r_e, e->c, &e_gram, &e->fro_e, err);
    e->gram = by_gram && (e->tied || e_gram);
    ar_view cv;
    if (st == AR_OK)
        st = ar_view_init_ld(&cv, e->c, d, d, d, AR_COL_MAJOR, err);
    if (st == AR_OK && !(e->tied && by_gram) &&
        (st = ar_matrix_gemm(AR_NO_TRANS, AR_NO_TRANS, 1.0, emb, unemb, 0.0, cv, err)) != AR_OK)
        ar_error_set(err, st, "embedding: E U failed: %s", ar_strerror(st));
    if (st != AR_OK)
        ar_circuit_embed_free(e);
    return st;
}
