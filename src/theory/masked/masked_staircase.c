/* Minimal-rank completion of a staircase pattern by the column-innovation
 * greedy (src/theory/masked/masked_internal.h; docs/theory/masked-attention.md).
 *
 * Column c of D is specified on the rows start[c]..rows-1.  The greedy
 * keeps a completion U V^T of the columns seen so far and, for column c,
 * projects D[start[c]:, c] on the span of U[start[c]:, :]; a residual above
 * tau adds one column to U (an "innovation").  The count of innovations is
 * Woerdeman's minimal rank of a triangular completion problem (1987), and
 * no completion of smaller rank exists.
 *
 * The fast pass keeps the active rows of U orthonormal, so each projection
 * is two matrix-vector products instead of a least-squares solve: when a
 * row leaves the active set, one Householder reflection (applied to U and V
 * alike, which leaves U V^T unchanged) concentrates that row in one column,
 * whose remaining part is then renormalised, or retired when it vanished.
 * Cost O((rows + cols) r) per row and column instead of O(rows r^2).
 *
 * Alongside U the pass carries T (rank x rank) with U = D[:, innovations] T
 * on the active rows, changed by the same reflections, rescalings, swaps
 * and retirements as U's columns: a column's coefficients on the
 * orthonormal basis, x, become its coefficients on the innovative data
 * columns, a = T x, whose size sets the column's tolerance
 * (ar_staircase_column_tau). */
#include "masked_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/lapack_internal.h"
#include "core/matrix_internal.h"

/* Below this norm (on the still active rows) a column of U is retired
 * instead of renormalised: its coefficient in later columns would be the
 * data divided by this norm, and renormalising amplifies rounding by its
 * inverse. */
#define RETIRE_NORM 1e-8

typedef struct stair {
    ar_matrix *u, *v;
    size_t rows, cap;
    size_t rank;    /* columns of U in use: [0, active) orthonormal on the active rows, then
                       retired ones */
    size_t active;
    size_t vrows;   /* rows of V written so far (columns of D done) */
    size_t big;     /* max(rows, cols): the longest temporary vector */
    double *work;   /* big + 2 cap + 2 doubles */
    double *t;      /* T: rank rows used, leading dimension tcap (grown by doubling) */
    size_t tcap;
} stair;

/* Room in T for rank + 1 rows and columns (new entries zero). */
static int grow_t(stair *s)
{
    if (s->rank + 1 <= s->tcap)
        return AR_OK;
    size_t cap = s->tcap > 0 ? 2 * s->tcap : 16;
    if (cap > s->cap)
        cap = s->cap;
    if (cap < s->rank + 1)
        return AR_ESIZE;
    double *t = calloc(cap * cap, sizeof *t);
    if (t == NULL)
        return AR_ENOMEM;
    for (size_t j = 0; j < s->rank; j++)
        memcpy(t + j * cap, s->t + j * s->tcap, s->rank * sizeof *t);
    free(s->t);
    s->t = t;
    s->tcap = cap;
    return AR_OK;
}

static void swap_columns(stair *s, size_t a, size_t b)
{
    if (a == b)
        return;
    cblas_dswap((int)s->rows, &AR_AT(s->u, 0, a), 1, &AR_AT(s->u, 0, b), 1);
    cblas_dswap((int)s->v->rows, &AR_AT(s->v, 0, a), 1, &AR_AT(s->v, 0, b), 1);
    if (s->rank > 0)
        cblas_dswap((int)s->rank, s->t + a * s->tcap, 1, s->t + b * s->tcap, 1);
}

/* M[:, 0:k] <- M[:, 0:k] (I - beta h h^T) for the first rows rows (leading
 * dimension ld). */
static void reflect(double *m, size_t ld, size_t rows, size_t k, const double *h, double beta,
                    double *tmp)
{
    if (rows == 0)
        return;
    cblas_dgemv(CblasColMajor, CblasNoTrans, (int)rows, (int)k, 1.0, m, (int)ld, h, 1, 0.0, tmp,
                1);
    cblas_dger(CblasColMajor, (int)rows, (int)k, -beta, tmp, 1, h, 1, m, (int)ld);
}

/* Column a of U restricted to rows [from, rows) made orthogonal to the other
 * active columns there (U and V changed together so U V^T stays). */
static void reorthogonalise(stair *s, size_t a, size_t from)
{
    size_t len = s->rows - from, k = s->active;
    double *alpha = s->work;
    cblas_dgemv(CblasColMajor, CblasTrans, (int)len, (int)k, 1.0, &AR_AT(s->u, from, 0),
                (int)s->u->ld, &AR_AT(s->u, from, a), 1, 0.0, alpha, 1);
    alpha[a] = 0.0;
    /* u_a -= U alpha over every row; v_j += alpha_j v_a for the other j. */
    cblas_dgemv(CblasColMajor, CblasNoTrans, (int)s->rows, (int)k, -1.0, s->u->data,
                (int)s->u->ld, alpha, 1, 1.0, &AR_AT(s->u, 0, a), 1);
    if (s->vrows > 0)
        cblas_dger(CblasColMajor, (int)s->vrows, (int)k, 1.0, &AR_AT(s->v, 0, a), 1, alpha, 1,
                   s->v->data, (int)s->v->ld);
    /* t_a -= T alpha, as u_a */
    cblas_dgemv(CblasColMajor, CblasNoTrans, (int)s->rank, (int)k, -1.0, s->t, (int)s->tcap,
                alpha, 1, 1.0, s->t + a * s->tcap, 1);
}

/* Row t leaves the active set: reflect its active part onto column 0, then
 * renormalise or retire what remains of column 0 below row t. */
static void drop_row(stair *s, size_t t)
{
    size_t k = s->active;
    if (k == 0)
        return;
    double *h = s->work + s->big, *tmp = s->work;
    for (size_t j = 0; j < k; j++)
        h[j] = AR_AT(s->u, t, j);
    double norm = cblas_dnrm2((int)k, h, 1);
    if (norm == 0.0)
        return;
    if (k > 1) {
        /* Householder: (I - beta h h^T) q = -sign(q_0) |q| e_0. */
        double alpha = h[0] >= 0.0 ? -norm : norm;
        h[0] -= alpha;
        double beta = 1.0 / (norm * (norm + fabs(AR_AT(s->u, t, 0))));
        reflect(s->u->data, s->u->ld, s->rows, k, h, beta, tmp);
        if (s->vrows > 0)
            reflect(s->v->data, s->v->ld, s->vrows, k, h, beta, tmp);
        reflect(s->t, s->tcap, s->rank, k, h, beta, tmp);
    }
    size_t below = s->rows - t - 1;
    double rest = below > 0 ? cblas_dnrm2((int)below, &AR_AT(s->u, t + 1, 0), 1) : 0.0;
    if (rest > RETIRE_NORM) {
        if (rest < 0.5) { /* rounding was amplified by 1/rest: restore orthogonality */
            reorthogonalise(s, 0, t + 1);
            rest = cblas_dnrm2((int)below, &AR_AT(s->u, t + 1, 0), 1);
        }
        cblas_dscal((int)s->rows, 1.0 / rest, &AR_AT(s->u, 0, 0), 1);
        cblas_dscal((int)s->rank, 1.0 / rest, s->t, 1);
        if (s->vrows > 0)
            cblas_dscal((int)s->vrows, rest, &AR_AT(s->v, 0, 0), 1);
        return;
    }
    /* Retire column 0: move it behind the active block. */
    swap_columns(s, 0, k - 1);
    s->active--;
}

/* Record a column's normalised residual in the gap and return whether it is
 * innovative (residual above tau_c). */
static int decide(double norm, double tau, double tau_c, ar_staircase_result *res)
{
    double scaled = tau_c > 0.0 ? norm * (tau / tau_c) : norm;
    if (!(norm > tau_c)) {
        if (scaled > res->max_not_innovative)
            res->max_not_innovative = scaled;
        return 0;
    }
    if (scaled < res->min_innovative)
        res->min_innovative = scaled;
    return 1;
}

/* Project column c (specified from row k0) on the active columns, record
 * its coefficients in V and innovate when the residual exceeds tau_c. */
static int add_column(stair *s, const ar_matrix *d, size_t c, size_t k0, double tau,
                      double *resid, ar_staircase_result *res)
{
    size_t len = s->rows - k0, k = s->active;
    double *z = s->work, *x = s->work + s->big, *x2 = x + s->cap + 1;
    memcpy(z, &AR_AT(d, k0, c), len * sizeof *z);
    memset(x, 0, (k + 1) * sizeof *x);
    /* Classical Gram-Schmidt twice: the second pass removes what rounding
     * left of the span, so a residual is a residual. */
    for (int pass = 0; pass < 2 && k > 0; pass++) {
        cblas_dgemv(CblasColMajor, CblasTrans, (int)len, (int)k, 1.0, &AR_AT(s->u, k0, 0),
                    (int)s->u->ld, z, 1, 0.0, x2, 1);
        cblas_dgemv(CblasColMajor, CblasNoTrans, (int)len, (int)k, -1.0, &AR_AT(s->u, k0, 0),
                    (int)s->u->ld, x2, 1, 1.0, z, 1);
        cblas_daxpy((int)k, 1.0, x2, 1, x, 1);
    }
    double norm = len > 0 ? cblas_dnrm2((int)len, z, 1) : 0.0;
    if (resid != NULL)
        resid[c] = norm;
    s->vrows = c + 1;
    for (size_t j = 0; j < s->rank; j++)
        AR_AT(s->v, c, j) = j < k ? x[j] : 0.0;
    /* a = T[:, 0:k] x: the coefficients on the innovative data columns */
    double *a = x2, anorm = 0.0;
    if (k > 0) {
        cblas_dgemv(CblasColMajor, CblasNoTrans, (int)s->rank, (int)k, 1.0, s->t, (int)s->tcap,
                    x, 1, 0.0, a, 1);
        anorm = cblas_dnrm2((int)s->rank, a, 1);
    }
    double tau_c = ar_staircase_column_tau(tau, s->rows, len, k, anorm);
    if (!decide(norm, tau, tau_c, res))
        return AR_OK;
    if (s->rank == s->cap)
        return AR_ESIZE;
    int rc = grow_t(s);
    if (rc != AR_OK)
        return rc;
    /* The new column enters at position k; a retired column there moves to
     * the end. */
    swap_columns(s, k, s->rank);
    for (size_t i = 0; i < s->rows; i++)
        AR_AT(s->u, i, k) = i < k0 ? 0.0 : z[i - k0] / norm;
    for (size_t j = 0; j <= c; j++)
        AR_AT(s->v, j, k) = j == c ? norm : 0.0;
    /* (d_c - U x) / norm = D[:, innovations + c] [-a; 1] / norm */
    double *tk = s->t + k * s->tcap;
    for (size_t i = 0; i <= s->rank; i++)
        tk[i] = i < s->rank ? (k > 0 ? -a[i] / norm : 0.0) : 1.0 / norm;
    s->rank++;
    s->active++;
    return AR_OK;
}

static int check_args(const ar_matrix *d, const size_t *start, const ar_matrix *u,
                      const ar_matrix *v, const ar_staircase_result *res)
{
    if (d == NULL || start == NULL || u == NULL || v == NULL || res == NULL)
        return AR_EINVAL;
    if (u->rows != d->rows || v->rows != d->cols || u->cols != v->cols)
        return AR_ESIZE;
    for (size_t c = 0; c < d->cols; c++)
        if (start[c] > d->rows || (c > 0 && start[c] < start[c - 1]))
            return AR_EINVAL;
    if (d->rows > 0 && d->cols > 0 && (d->rows > (size_t)INT32_MAX || d->cols > (size_t)INT32_MAX))
        return AR_EINVAL;
    return AR_OK;
}

static void init_result(ar_staircase_result *res, double tau)
{
    res->rank = 0;
    res->tau = tau;
    res->min_innovative = INFINITY;
    res->max_not_innovative = 0.0;
}

int ar_staircase_complete(const ar_matrix *d, const size_t *start, double tau, ar_matrix *u,
                          ar_matrix *v, double *resid, ar_staircase_result *res)
{
    int rc = check_args(d, start, u, v, res);
    if (rc != AR_OK)
        return rc;
    init_result(res, tau);
    ar_cm_fill(u, 0.0);
    ar_cm_fill(v, 0.0);
    size_t big = d->rows > d->cols ? d->rows : d->cols;
    stair s = {u, v, d->rows, u->cols, 0, 0, 0, big, NULL, NULL, 0};
    s.work = malloc((big + 2 * s.cap + 2) * sizeof *s.work);
    if (s.work == NULL)
        return AR_ENOMEM;
    size_t dropped = 0;
    for (size_t c = 0; c < d->cols && rc == AR_OK; c++) {
        for (; dropped < start[c]; dropped++)
            drop_row(&s, dropped);
        rc = add_column(&s, d, c, start[c], tau, resid, res);
    }
    free(s.work);
    free(s.t);
    res->rank = s.rank;
    return rc;
}

/* ---- the textbook greedy, for tests and benchmarks ---- */

/* Least squares M[k0:, cols] x = z (minimum norm; cols = 0..r-1 when idx is
 * NULL, else idx[0..r-1]), z replaced by the residual; *rank receives the
 * numerical rank (relative 1e-13). */
static int least_squares(const ar_matrix *u, const size_t *idx, size_t k0, size_t r, double *z,
                         double *x, double *a, double *b, size_t *rank_out)
{
    size_t len = u->rows - k0;
    for (size_t j = 0; j < r; j++)
        memcpy(a + j * len, &AR_AT(u, k0, idx != NULL ? idx[j] : j), len * sizeof *a);
    size_t ldb = len > r ? len : r;
    memset(b, 0, ldb * sizeof *b);
    memcpy(b, z, len * sizeof *b);
    lapack_int rank;
    double *sv = x + r;
    lapack_int info = ar_lapack_dgelsd((lapack_int)len, (lapack_int)r, 1, a,
                                       (lapack_int)(len > 0 ? len : 1), b, (lapack_int)ldb, sv,
                                       1e-13, &rank);
    if (info != 0)
        return ar_lapack_status(info);
    memcpy(x, b, r * sizeof *x);
    *rank_out = (size_t)rank;
    /* residual recomputed from the solution, not from LAPACK's sums */
    for (size_t j = 0; j < r; j++)
        cblas_daxpy((int)len, -x[j], &AR_AT(u, k0, idx != NULL ? idx[j] : j), 1, z, 1);
    return AR_OK;
}

int ar_staircase_complete_reference(const ar_matrix *d, const size_t *start, double tau,
                                    ar_matrix *u, ar_matrix *v, double *resid,
                                    ar_staircase_result *res)
{
    int rc = check_args(d, start, u, v, res);
    if (rc != AR_OK)
        return rc;
    init_result(res, tau);
    ar_cm_fill(u, 0.0);
    ar_cm_fill(v, 0.0);
    size_t rows = d->rows, cap = u->cols, r = 0;
    double *work = malloc((2 * rows * (cap + 3) + 3 * cap + 2) * sizeof *work);
    size_t *sel = malloc((cap + 1) * sizeof *sel);
    if (work == NULL || sel == NULL) {
        free(work);
        free(sel);
        return AR_ENOMEM;
    }
    double *z = work, *b = z + rows, *x = b + rows + cap, *a = x + 2 * cap + 2,
           *z2 = a + rows * cap, *xa = z2 + rows;
    for (size_t c = 0; c < d->cols && rc == AR_OK; c++) {
        size_t k0 = start[c], len = rows - k0, k = 0;
        memcpy(z, &AR_AT(d, k0, c), len * sizeof *z);
        double anorm = 0.0;
        if (r > 0 && len > 0) {
            rc = least_squares(u, NULL, k0, r, z, x, a, b, &k);
            /* a_c: the same column against the innovative data columns */
            size_t ka;
            memcpy(z2, &AR_AT(d, k0, c), len * sizeof *z2);
            if (rc == AR_OK)
                rc = least_squares(d, sel, k0, r, z2, xa, a, b, &ka);
            if (rc == AR_OK)
                anorm = cblas_dnrm2((int)r, xa, 1);
        }
        if (rc != AR_OK)
            break;
        double norm = len > 0 ? cblas_dnrm2((int)len, z, 1) : 0.0;
        if (resid != NULL)
            resid[c] = norm;
        for (size_t j = 0; j < r; j++)
            AR_AT(v, c, j) = len > 0 ? x[j] : 0.0;
        if (!decide(norm, tau, ar_staircase_column_tau(tau, rows, len, k, anorm), res))
            continue;
        if (r == cap) {
            rc = AR_ESIZE;
            break;
        }
        for (size_t i = k0; i < rows; i++)
            AR_AT(u, i, r) = z[i - k0];
        AR_AT(v, c, r) = 1.0;
        sel[r] = c;
        r++;
    }
    free(work);
    free(sel);
    res->rank = r;
    return rc;
}
