/* Interval completion (masked_internal.h): a rank-r completion U V^T of a
 * matrix D specified on row intervals [lo_i, hi_i], by the oldest-columns
 * recursion (docs/theory/masked-attention.md), in float64 with an optional
 * Levenberg-Marquardt polish, and the same recursion over F_p as a proof
 * that a generic matrix of the pattern has a rank-r completion.
 *
 * The recursion at rank r.  Row i is long when it has more than r entries
 * (lo_i + r <= hi_i): its r oldest columns lo_i .. lo_i + r - 1 fix u_i and
 * each later column j constrains v_j.  With R_j = {i : lo_i + r <= j <= hi_i}
 * (only long rows qualify), columns are visited j = 0, 1, ...:
 *   1. every i in R_j not fixed yet (that is, j = lo_i + r) gets u_i from the
 *      r x r system  V[lo_i + t] . u_i = D[i, lo_i + t], t < r: those columns
 *      are all < j, so their v's are fixed;
 *   2. v_j comes from  u_i . v_j = D[i, j], i in R_j.
 * A long row that specifies column j is either in R_j (it was fixed at
 * lo_i + r <= j and sees j in step 2) or has j among its oldest columns
 * (step 1 of a later column takes care of it), so every entry of a long row
 * is matched once every system had a solution.  Short rows (at most r
 * entries) never constrain a v; they are solved last, from all their
 * entries.  Empty rows get u_i = 0 and columns no row specifies v_j = 0.
 * The recursion itself does not need lo and hi to be monotone; they are
 * checked because the interface promises them.
 *
 * Underdetermined systems (fewer independent equations than r unknowns, e.g.
 * every v_j with R_j empty) must not take the minimum-norm
 * solution alone: v_j = 0 there would make every later oldest-columns system
 * singular.  float64: x = z + A^+ (b - A z) with z ~ N(0, sigma^2 I) (dgelsd),
 * which is the minimum-norm least-squares solution plus the projection of z
 * onto the null space of A; sigma = sqrt(rms(D) / sqrt(r)), so that u . v has
 * the scale of the data (computed on D scaled exactly by a power of 4 near
 * max|D|, as is the polish, so that data near either end of the float64
 * range behave like data near 1).  F_p: the k < r equations are completed by r - k
 * random equations (random rows, random right-hand side) to a square system;
 * its solution solves the original system, and invertibility of the square
 * matrix certifies that the k rows were independent.
 *
 * Why the F_p run is a proof.  Every step solves a square r x r system
 * (oldest columns; or real equations completed by random ones), so every
 * computed quantity is a rational function of the data and of the random
 * completion entries, with denominators the products of the determinants
 * met so far.  If each of these determinants is non-zero at the random point
 * mod p, each is a non-zero polynomial over Q, so for generic real data (and
 * generic completion entries) the same recursion goes through, and by
 * construction its U V^T matches D on every specified entry: a rank-r
 * completion exists.  A system with more than r equations (|R_j| > r) is not
 * square and counts as singular (the recursion cannot handle it).  The end
 * check that U V^T = D mod p on every entry is then implied; it is run anyway
 * as a check of this implementation, and verified = 1 needs both.  Note that
 * the end check alone would not be a proof: a residual that is a non-zero
 * rational function may vanish at one point.  verified = 0 only says the
 * recursion failed, not that no rank-r completion exists.  For
 * r >= min(rows, cols) every completion has rank <= r: verified without a run.
 *
 * Polish.  Levenberg-Marquardt (Marquardt's diagonal scaling, Nielsen's
 * damping update) on f(U, V) = sum over the pattern (u_i . v_j - D_ij)^2,
 * first from the recursion's factors; while trial steps of the polish_iter
 * budget remain and the residual is above round-off (about 32 eps max|D|), again
 * from seeded Gaussian starts.  A start is abandoned when 40 steps do not
 * halve its cost or the damping exceeds 1e16.  Why restarts: the exact
 * completion the recursion finds is badly conditioned for long patterns
 * (factors up to 1e10 at n = 64) and LM crawls from it, while from a random
 * start it often converges in a few dozen steps (measured with n <= 64: at
 * r = h* + 1 for every window and band tried but the band n = 64, w = 16,
 * which needed h* + 2).  If the float64 recursion overflows, zero factors
 * (residual max|D|) replace its result and only random starts are polished.
 * The Gauss-Newton matrix has block-diagonal U-U and V-V parts, so U is
 * eliminated row by row (r x r Cholesky each) and the Schur complement in V,
 * block-banded with block half-bandwidth max(hi_i - lo_i), is factored by
 * LAPACK's banded Cholesky: cost per iteration about
 *     cols r (kd + 1)^2,   kd = (max_i (hi_i - lo_i) + 1) r - 1,
 * plus rows (max length)^2 r^2 to form it.  The polish is skipped (the
 * recursion's factors are returned as they are) when (rows + cols) r exceeds
 * 20000 parameters, the banded factorisation would exceed 2e9 flops, or the
 * r x r blocks would exceed 2^24 doubles.  The factors with the smaller
 * maximum residual (before or after the polish) are returned; polish_iter
 * counts trial steps, accepted or not. */
#include "theory/masked/masked_internal.h"
#include "attnrank/random.h"
#include "attnrank/seprank.h"

#include <float.h>
#include <flint/flint.h>
#include <flint/nmod_mat.h>
#include <flint/nmod_vec.h>
#include <gsl/gsl_randist.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/lapack_internal.h"
#include "core/matrix_internal.h"
#include "core/random_internal.h"
#include "theory/depthwidth/seprank_internal.h"

#define FP_PRIME UINT64_C(2147483647) /* 2^31 - 1 */
#define POLISH_MAX_PARAMS 20000u
#define POLISH_MAX_FLOPS 2e9
#define POLISH_MAX_BLOCKS ((size_t)1 << 24)

/* ------------------------------------------------------------------ */
/* pattern                                                             */

static size_t row_len(const ar_interval_pattern *pat, size_t i)
{
    return pat->lo[i] <= pat->hi[i] ? pat->hi[i] - pat->lo[i] + 1 : 0;
}

/* Bounds and monotonicity over the non-empty rows (an empty row has no
 * position in the staircase, so its lo and hi are not compared), and the
 * entry count, which must fit the arrays indexed by it. */
static int check_pattern(const ar_interval_pattern *pat, size_t *nnz, ar_error *err)
{
    if (pat == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL pattern");
    if (pat->rows > 0 && (pat->lo == NULL || pat->hi == NULL))
        return ar_error_set(err, AR_EINVAL, "pattern with %zu rows but no lo/hi", pat->rows);
    size_t total = 0, prev = SIZE_MAX;
    for (size_t i = 0; i < pat->rows; i++) {
        size_t len = row_len(pat, i);
        if (len == 0)
            continue;
        if (pat->hi[i] >= pat->cols)
            return ar_error_set(err, AR_EINVAL, "row %zu ends at column %zu of %zu", i,
                                pat->hi[i], pat->cols);
        if (prev != SIZE_MAX && (pat->lo[i] < pat->lo[prev] || pat->hi[i] < pat->hi[prev]))
            return ar_error_set(err, AR_EINVAL,
                                "row %zu [%zu, %zu] after row %zu [%zu, %zu]: lo and hi must be "
                                "non-decreasing",
                                i, pat->lo[i], pat->hi[i], prev, pat->lo[prev], pat->hi[prev]);
        if (total > SIZE_MAX / 16 - len)
            return ar_error_set(err, AR_ENOMEM, "pattern too large");
        total += len;
        prev = i;
    }
    *nnz = total;
    return AR_OK;
}

/* CSR offsets of the rows' entries (rows + 1). */
static size_t *row_offsets(const ar_interval_pattern *pat)
{
    size_t *off = malloc((pat->rows + 1) * sizeof *off);
    if (off == NULL)
        return NULL;
    off[0] = 0;
    for (size_t i = 0; i < pat->rows; i++)
        off[i + 1] = off[i] + row_len(pat, i);
    return off;
}

/* The sets R_j as lists of rows in increasing order: rows of R_j are
 * lists[start[j] .. start[j + 1]).  *kmax receives max_j |R_j|. */
typedef struct col_sets {
    size_t *start, *rows;
    size_t kmax;
    unsigned char *covered; /* some row specifies the column */
} col_sets;

static void col_sets_free(col_sets *cs)
{
    free(cs->start);
    free(cs->rows);
    free(cs->covered);
    memset(cs, 0, sizeof *cs);
}

static int col_sets_build(const ar_interval_pattern *pat, size_t r, col_sets *cs)
{
    memset(cs, 0, sizeof *cs);
    size_t m = pat->cols;
    cs->start = calloc(m + 1, sizeof *cs->start);
    cs->covered = calloc(m > 0 ? m : 1, 1);
    if (cs->start == NULL || cs->covered == NULL) {
        col_sets_free(cs);
        return AR_ENOMEM;
    }
    for (size_t i = 0; i < pat->rows; i++) {
        size_t len = row_len(pat, i);
        for (size_t j = pat->lo[i]; len > 0 && j <= pat->hi[i]; j++)
            cs->covered[j] = 1;
        if (len > r)
            for (size_t j = pat->lo[i] + r; j <= pat->hi[i]; j++)
                cs->start[j + 1]++;
    }
    for (size_t j = 0; j < m; j++) {
        if (cs->start[j + 1] > cs->kmax)
            cs->kmax = cs->start[j + 1];
        cs->start[j + 1] += cs->start[j];
    }
    cs->rows = malloc((cs->start[m] > 0 ? cs->start[m] : 1) * sizeof *cs->rows);
    size_t *fill = malloc((m > 0 ? m : 1) * sizeof *fill);
    if (cs->rows == NULL || fill == NULL) {
        free(fill);
        col_sets_free(cs);
        return AR_ENOMEM;
    }
    memcpy(fill, cs->start, m * sizeof *fill);
    for (size_t i = 0; i < pat->rows; i++)
        if (row_len(pat, i) > r)
            for (size_t j = pat->lo[i] + r; j <= pat->hi[i]; j++)
                cs->rows[fill[j]++] = i;
    free(fill);
    return AR_OK;
}

/* ------------------------------------------------------------------ */
/* float64 recursion                                                   */

typedef struct f64_rec {
    const ar_interval_pattern *pat;
    const ar_matrix *d;
    ar_matrix *u, *v;
    size_t r;
    double *a, *b, *x; /* one system: k x r (lda = k), rhs max(k, r), solution r */
    double *s;         /* singular values for dgelsd */
    double sigma;
    double inv_scale;  /* the systems see D / scale (see unit_scale) */
    ar_rng *rng;
} f64_rec;

static int lapack_rc(lapack_int info)
{
    if (info == 0)
        return AR_OK;
    if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR)
        return AR_ENOMEM;
    return info < 0 ? AR_ELAPACK : AR_ENOCONV;
}

/* x = z + A^+ (b - A z) for the k x r system in rec->a, rec->b; see the top
 * of the file for why the random z.  AR_ENONFINITE: float64 overflowed (the
 * recursion's growth is exponential in n / w; LAPACKE would refuse the
 * input as an illegal argument). */
static int f64_solve(f64_rec *rec, size_t k)
{
    size_t r = rec->r;
    for (size_t c = 0; c < r; c++)
        rec->x[c] = rec->sigma * ar_rng_gaussian(rec->rng, 1.0);
    if (k == 0)
        return AR_OK;
    for (size_t t = 0; t < k; t++) {
        double az = 0.0;
        for (size_t c = 0; c < r; c++)
            az += rec->a[t + c * k] * rec->x[c];
        rec->b[t] -= az;
        if (!isfinite(rec->b[t]))
            return AR_ENONFINITE;
    }
    lapack_int rank;
    size_t ldb = k > r ? k : r;
    lapack_int info = ar_lapack_dgelsd((lapack_int)k, (lapack_int)r, 1, rec->a, (lapack_int)k,
                                       rec->b, (lapack_int)ldb, rec->s, -1.0, &rank);
    if (info != 0)
        return lapack_rc(info);
    for (size_t c = 0; c < r; c++) {
        rec->x[c] += rec->b[c];
        if (!isfinite(rec->x[c]))
            return AR_ENONFINITE;
    }
    return AR_OK;
}

/* The system of row i on its first k columns, in the fixed v's. */
static void f64_row_system(f64_rec *rec, size_t i, size_t k)
{
    size_t lo = rec->pat->lo[i];
    for (size_t t = 0; t < k; t++) {
        for (size_t c = 0; c < rec->r; c++)
            rec->a[t + c * k] = AR_AT(rec->v, lo + t, c);
        rec->b[t] = AR_AT(rec->d, i, lo + t) * rec->inv_scale;
    }
}

/* The system of column j over the rows of R_j, in the fixed u's. */
static void f64_col_system(f64_rec *rec, const size_t *rows, size_t k, size_t j)
{
    for (size_t t = 0; t < k; t++) {
        for (size_t c = 0; c < rec->r; c++)
            rec->a[t + c * k] = AR_AT(rec->u, rows[t], c);
        rec->b[t] = AR_AT(rec->d, rows[t], j) * rec->inv_scale;
    }
}

static int f64_fix_row(f64_rec *rec, size_t i, size_t k)
{
    f64_row_system(rec, i, k);
    int rc = f64_solve(rec, k);
    for (size_t c = 0; rc == AR_OK && c < rec->r; c++)
        AR_AT(rec->u, i, c) = rec->x[c];
    return rc;
}

static int f64_recursion(f64_rec *rec, const col_sets *cs, unsigned char *fixed)
{
    const ar_interval_pattern *pat = rec->pat;
    size_t r = rec->r;
    for (size_t j = 0; j < pat->cols; j++) {
        const size_t *rows = cs->rows + cs->start[j];
        size_t k = cs->start[j + 1] - cs->start[j];
        for (size_t t = 0; t < k; t++) {
            if (fixed[rows[t]])
                continue;
            int rc = f64_fix_row(rec, rows[t], r);
            if (rc != AR_OK)
                return rc;
            fixed[rows[t]] = 1;
        }
        if (!cs->covered[j])
            continue; /* v_j stays 0 */
        f64_col_system(rec, rows, k, j);
        int rc = f64_solve(rec, k);
        if (rc != AR_OK)
            return rc;
        for (size_t c = 0; c < r; c++)
            AR_AT(rec->v, j, c) = rec->x[c];
    }
    for (size_t i = 0; i < pat->rows; i++) {
        size_t len = row_len(pat, i);
        if (fixed[i] || len == 0)
            continue; /* an empty row keeps u_i = 0 */
        int rc = f64_fix_row(rec, i, len);
        if (rc != AR_OK)
            return rc;
    }
    return AR_OK;
}

static double max_residual_of(const ar_interval_pattern *pat, const ar_matrix *d,
                              const ar_matrix *u, const ar_matrix *v, size_t r)
{
    double worst = 0.0;
    for (size_t i = 0; i < pat->rows; i++) {
        size_t len = row_len(pat, i);
        for (size_t t = 0; t < len; t++) {
            size_t j = pat->lo[i] + t;
            double s = 0.0;
            for (size_t c = 0; c < r; c++)
                s += AR_AT(u, i, c) * AR_AT(v, j, c);
            double e = fabs(s - AR_AT(d, i, j));
            if (!(e <= worst))
                worst = e; /* NaN sticks */
        }
    }
    return worst;
}

/* max |D| and RMS of D on the pattern, and a finiteness check. */
static int data_scale(const ar_interval_pattern *pat, const ar_matrix *d, size_t nnz,
                      double *dmax, double *rms, ar_error *err)
{
    double maxabs = 0.0, ss = 0.0;
    for (size_t i = 0; i < pat->rows; i++) {
        size_t len = row_len(pat, i);
        for (size_t t = 0; t < len; t++) {
            double x = AR_AT(d, i, pat->lo[i] + t);
            if (!isfinite(x))
                return ar_error_set(err, AR_ENONFINITE, "D[%zu, %zu] = %g is not finite", i,
                                    pat->lo[i] + t, x);
            if (fabs(x) > maxabs)
                maxabs = fabs(x);
        }
    }
    /* Scaled sum of squares: no overflow near DBL_MAX. */
    for (size_t i = 0; maxabs > 0.0 && i < pat->rows; i++)
        for (size_t t = 0; t < row_len(pat, i); t++) {
            double x = AR_AT(d, i, pat->lo[i] + t) / maxabs;
            ss += x * x;
        }
    *rms = nnz > 0 ? maxabs * sqrt(ss / (double)nnz) : 0.0;
    *dmax = maxabs;
    return AR_OK;
}

/* root, a power of 2, with root^2 within a factor 4 of x (1 for x = 0):
 * both engines work on D / root^2 and factors / root, an exact scaling that
 * keeps products, sums of squares and Gauss-Newton blocks of data near
 * DBL_MAX or DBL_MIN finite and normal. */
static double unit_root(double x)
{
    int ex = 0;
    frexp(x > 0.0 ? x : 1.0, &ex);
    return ldexp(1.0, ex / 2);
}

/* ------------------------------------------------------------------ */
/* Levenberg-Marquardt polish                                          */

typedef struct lm_state {
    const ar_interval_pattern *pat;
    size_t n, m, r, nnz, kd, ldab, maxlen;
    const size_t *off;
    double *dat;        /* D on the pattern, CSR */
    double *pu, *pv;    /* current U, V: row-major vectors of r */
    double *tu, *tv;    /* trial point */
    double *e;          /* residuals at the current point */
    double *hu, *gu;    /* per row: sum v v^T (r x r), sum e v */
    double *hv, *gv;    /* per column: sum u u^T, sum e u */
    double *au, *yu;    /* per row: damped factor, A_i^{-1} g_u */
    double *ab, *rhs;   /* banded Schur complement, its right-hand side / dv */
    double *w;          /* per-row scratch: A_i^{-1} [v ...] (r x maxlen) */
    double dfloor;      /* smallest diagonal used by the scaling */
} lm_state;

static void lm_free(lm_state *s)
{
    double *bufs[] = {s->dat, s->pu, s->pv, s->tu, s->tv, s->e,  s->hu, s->gu,
                      s->hv,  s->gv, s->au, s->yu, s->ab, s->rhs, s->w};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    memset(s, 0, sizeof *s);
}

/* Whether the polish fits the caps of the top comment; fills the band. */
static int lm_affordable(const ar_interval_pattern *pat, size_t r, size_t *kd, size_t *maxlen)
{
    size_t n = pat->rows, m = pat->cols, span = 0;
    if (r == 0 || m == 0 || n + m > POLISH_MAX_PARAMS / r)
        return 0;
    if ((n + m) * r > POLISH_MAX_BLOCKS / r)
        return 0;
    *maxlen = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = row_len(pat, i);
        if (len > *maxlen)
            *maxlen = len;
        if (len > 0 && len - 1 > span)
            span = len - 1;
    }
    size_t nv = m * r, band = (span + 1) * r - 1;
    *kd = band < nv ? band : nv - 1;
    double flops = (double)nv * (double)(*kd + 1) * (double)(*kd + 1);
    return *maxlen > 0 && flops <= POLISH_MAX_FLOPS;
}

static int lm_alloc(lm_state *s, const ar_interval_pattern *pat, const size_t *off, size_t nnz,
                    size_t r, size_t kd, size_t maxlen)
{
    memset(s, 0, sizeof *s);
    s->pat = pat;
    s->n = pat->rows;
    s->m = pat->cols;
    s->r = r;
    s->nnz = nnz;
    s->kd = kd;
    s->ldab = kd + 1;
    s->maxlen = maxlen;
    s->off = off;
    size_t nu = s->n * r, nv = s->m * r;
    s->dat = malloc(nnz * sizeof(double));
    s->e = malloc(nnz * sizeof(double));
    s->pu = calloc(nu + 1, sizeof(double));
    s->tu = calloc(nu + 1, sizeof(double));
    s->gu = calloc(nu + 1, sizeof(double));
    s->yu = calloc(nu + 1, sizeof(double));
    s->hu = calloc(nu * r + 1, sizeof(double));
    s->au = calloc(nu * r + 1, sizeof(double));
    s->pv = calloc(nv, sizeof(double));
    s->tv = calloc(nv, sizeof(double));
    s->gv = calloc(nv, sizeof(double));
    s->rhs = calloc(nv, sizeof(double));
    s->hv = calloc(nv * r, sizeof(double));
    s->ab = calloc(s->ldab * nv, sizeof(double));
    s->w = calloc(maxlen * r, sizeof(double));
    double *bufs[] = {s->dat, s->pu, s->pv, s->tu, s->tv, s->e,  s->hu, s->gu,
                      s->hv,  s->gv, s->au, s->yu, s->ab, s->rhs, s->w};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i] == NULL) {
            lm_free(s);
            return AR_ENOMEM;
        }
    return AR_OK;
}

static double dot(const double *x, const double *y, size_t r)
{
    double s = 0.0;
    for (size_t c = 0; c < r; c++)
        s += x[c] * y[c];
    return s;
}

/* Residuals at (pu, pv) into e (may be NULL) and their sum of squares. */
static double lm_cost(const lm_state *s, const double *pu, const double *pv, double *e)
{
    double sum = 0.0;
    for (size_t i = 0; i < s->n; i++) {
        size_t len = row_len(s->pat, i), lo = s->pat->lo[i];
        for (size_t t = 0; t < len; t++) {
            double ei = dot(pu + i * s->r, pv + (lo + t) * s->r, s->r) - s->dat[s->off[i] + t];
            if (e != NULL)
                e[s->off[i] + t] = ei;
            sum += ei * ei;
        }
    }
    return sum;
}

static void rank1_add(double *h, const double *x, double alpha, size_t r)
{
    for (size_t b = 0; b < r; b++)
        for (size_t a = 0; a < r; a++)
            h[a + b * r] += alpha * x[a] * x[b];
}

/* Gauss-Newton blocks and gradient at the current point (e is current);
 * 0 when they overflowed (LAPACKE would reject them). */
static int lm_linearise(lm_state *s)
{
    size_t r = s->r;
    memset(s->hu, 0, s->n * r * r * sizeof(double));
    memset(s->gu, 0, s->n * r * sizeof(double));
    memset(s->hv, 0, s->m * r * r * sizeof(double));
    memset(s->gv, 0, s->m * r * sizeof(double));
    double dmax = 0.0;
    for (size_t i = 0; i < s->n; i++) {
        size_t len = row_len(s->pat, i), lo = s->pat->lo[i];
        const double *ui = s->pu + i * r;
        for (size_t t = 0; t < len; t++) {
            size_t j = lo + t;
            const double *vj = s->pv + j * r;
            double ei = s->e[s->off[i] + t];
            rank1_add(s->hu + i * r * r, vj, 1.0, r);
            rank1_add(s->hv + j * r * r, ui, 1.0, r);
            for (size_t a = 0; a < r; a++) {
                s->gu[i * r + a] += ei * vj[a];
                s->gv[j * r + a] += ei * ui[a];
            }
        }
    }
    for (size_t k = 0; k < (s->n + s->m) * r; k++) {
        double h = k < s->n * r ? s->hu[(k / r) * r * r + (k % r) * (r + 1)]
                                : s->hv[(k / r - s->n) * r * r + (k % r) * (r + 1)];
        double g = k < s->n * r ? s->gu[k] : s->gv[k - s->n * r];
        if (!isfinite(h) || !isfinite(g))
            return 0;
        if (h > dmax)
            dmax = h;
    }
    /* Directions with no curvature (the gauge U G, V G^-T, empty rows) still
     * get some damping. */
    s->dfloor = dmax > 0.0 ? 1e-12 * dmax : 1.0;
    return 1;
}

static double damped(double h, double lambda, double dfloor)
{
    return h + lambda * (h > dfloor ? h : dfloor);
}

/* Row i's damped block: factor into au_i, yu_i = A_i^{-1} gu_i, and the
 * Schur contribution to the band and the right-hand side. */
static int lm_eliminate_row(lm_state *s, size_t i, double lambda)
{
    size_t r = s->r, len = row_len(s->pat, i), lo = s->pat->lo[i];
    double *ai = s->au + i * r * r, *yi = s->yu + i * r;
    const double *ui = s->pu + i * r;
    memcpy(ai, s->hu + i * r * r, r * r * sizeof(double));
    for (size_t a = 0; a < r; a++)
        ai[a * (r + 1)] = damped(ai[a * (r + 1)], lambda, s->dfloor);
    lapack_int info = ar_lapack_dpotrf('L', (lapack_int)r, ai, (lapack_int)r);
    if (info != 0)
        return info > 0 ? AR_ENOCONV : AR_ELAPACK;
    memcpy(yi, s->gu + i * r, r * sizeof(double));
    if (len == 0)
        return AR_OK;
    memcpy(s->w, s->pv + lo * r, len * r * sizeof(double));
    info = ar_lapack_dpotrs('L', (lapack_int)r, 1, ai, (lapack_int)r, yi, (lapack_int)r);
    if (info == 0)
        info = ar_lapack_dpotrs('L', (lapack_int)r, (lapack_int)len, ai, (lapack_int)r, s->w,
                                (lapack_int)r);
    if (info != 0)
        return AR_ELAPACK;
    /* S_{jk} -= (v_j^T A_i^{-1} v_k) u_i u_i^T; rhs_j += u_i (v_j . y_i). */
    for (size_t t = 0; t < len; t++) {
        const double *vj = s->pv + (lo + t) * r;
        double vy = dot(vj, yi, r);
        for (size_t a = 0; a < r; a++)
            s->rhs[(lo + t) * r + a] += ui[a] * vy;
        for (size_t t2 = 0; t2 <= t; t2++) {
            double cjk = dot(vj, s->w + t2 * r, r);
            size_t j = lo + t, k = lo + t2;
            for (size_t b = 0; b < r; b++)
                for (size_t a = (j == k ? b : 0); a < r; a++) {
                    size_t p = j * r + a, q = k * r + b;
                    s->ab[(p - q) + q * s->ldab] -= cjk * ui[a] * ui[b];
                }
        }
    }
    return AR_OK;
}

/* One damped Gauss-Newton step into (tu, tv).  AR_ENOCONV: the damped
 * matrix was not numerically positive definite (more damping helps). */
static int lm_step(lm_state *s, double lambda)
{
    size_t r = s->r, nv = s->m * r;
    memset(s->ab, 0, s->ldab * nv * sizeof(double));
    for (size_t j = 0; j < s->m; j++) {
        const double *h = s->hv + j * r * r;
        for (size_t b = 0; b < r; b++)
            for (size_t a = b; a < r; a++) {
                double x = h[a + b * r];
                s->ab[(a - b) + (j * r + b) * s->ldab] = a == b ? damped(x, lambda, s->dfloor) : x;
            }
    }
    for (size_t q = 0; q < nv; q++)
        s->rhs[q] = -s->gv[q];
    for (size_t i = 0; i < s->n; i++) {
        int rc = lm_eliminate_row(s, i, lambda);
        if (rc != AR_OK)
            return rc;
    }
    lapack_int info =
        ar_lapack_dpbtrf('L', (lapack_int)nv, (lapack_int)s->kd, s->ab, (lapack_int)s->ldab);
    if (info == 0)
        info = ar_lapack_dpbtrs('L', (lapack_int)nv, (lapack_int)s->kd, 1, s->ab,
                                (lapack_int)s->ldab, s->rhs, (lapack_int)nv);
    if (info != 0)
        return info > 0 ? AR_ENOCONV : AR_ELAPACK;
    /* du_i = A_i^{-1} (-g_u_i - sum_j v_j (u_i . dv_j)) */
    for (size_t i = 0; i < s->n; i++) {
        size_t len = row_len(s->pat, i), lo = s->pat->lo[i];
        double *du = s->tu + i * r;
        const double *ui = s->pu + i * r;
        for (size_t a = 0; a < r; a++)
            du[a] = -s->gu[i * r + a];
        for (size_t t = 0; t < len; t++) {
            double ud = dot(ui, s->rhs + (lo + t) * r, r);
            for (size_t a = 0; a < r; a++)
                du[a] -= s->pv[(lo + t) * r + a] * ud;
        }
        info = ar_lapack_dpotrs('L', (lapack_int)r, 1, s->au + i * r * r, (lapack_int)r, du,
                                (lapack_int)r);
        if (info != 0)
            return AR_ELAPACK;
        for (size_t a = 0; a < r; a++)
            du[a] += ui[a];
    }
    for (size_t q = 0; q < nv; q++)
        s->tv[q] = s->pv[q] + s->rhs[q];
    return AR_OK;
}

static double max_abs_of(const double *x, size_t n)
{
    double worst = 0.0;
    for (size_t k = 0; k < n; k++)
        if (fabs(x[k]) > worst)
            worst = fabs(x[k]);
    return worst;
}

/* The LM loop on s->pu, s->pv, for at most iters trial steps (*used gets
 * the count).  It gives up on this start when the damping grows without
 * bound (no descent left at float64 precision) or when STALL_STEPS steps
 * did not halve the cost: a start that crawls along an ill-conditioned
 * valley rarely recovers, and a fresh start is the better use of the
 * budget.  stop: a maximum residual not worth improving. */
#define STALL_STEPS 40
static int lm_run(lm_state *s, size_t iters, double stop, size_t *used)
{
    double cost = lm_cost(s, s->pu, s->pv, s->e), lambda = 1e-3, nu = 2.0;
    double mark = cost;
    size_t mark_it = 0, it = 0;
    int relinearise = 1;
    for (; it < iters && max_abs_of(s->e, s->nnz) > stop; it++) {
        if (it - mark_it >= STALL_STEPS) {
            if (cost > 0.5 * mark)
                break;
            mark = cost;
            mark_it = it;
        }
        if (relinearise && !lm_linearise(s))
            break; /* off-diagonal blocks are bounded by the diagonal ones */
        relinearise = 0;
        int rc = lm_step(s, lambda);
        if (rc != AR_OK && rc != AR_ENOCONV) {
            *used = it + 1;
            return rc;
        }
        double trial = rc == AR_OK ? lm_cost(s, s->tu, s->tv, NULL) : INFINITY;
        if (trial < cost) {
            double *t = s->pu;
            s->pu = s->tu;
            s->tu = t;
            t = s->pv;
            s->pv = s->tv;
            s->tv = t;
            cost = lm_cost(s, s->pu, s->pv, s->e);
            lambda = fmax(lambda / 3.0, 1e-12);
            nu = 2.0;
            relinearise = 1;
        } else {
            lambda *= nu;
            nu *= 2.0;
            if (lambda > 1e16) {
                it++;
                break;
            }
        }
    }
    *used = it > 0 ? it : 1;
    return AR_OK;
}

/* Start k of the polish: 0 is the recursion's (u, v) times scale, later
 * ones seeded Gaussian factors of standard deviation sigma. */
static int lm_load_start(lm_state *s, const ar_matrix *u, const ar_matrix *v, size_t k,
                         uint64_t seed, double sigma, double scale)
{
    size_t r = s->r;
    if (k == 0) {
        for (size_t c = 0; c < r; c++) {
            for (size_t i = 0; i < s->n; i++)
                s->pu[i * r + c] = AR_AT(u, i, c) * scale;
            for (size_t j = 0; j < s->m; j++)
                s->pv[j * r + c] = AR_AT(v, j, c) * scale;
        }
        return AR_OK;
    }
    uint64_t cfg[2] = {3, (uint64_t)k};
    ar_rng *rng = ar_rng_alloc(ar_seed_derive(seed, cfg, 2));
    if (rng == NULL)
        return AR_ENOMEM;
    for (size_t q = 0; q < s->n * r; q++)
        s->pu[q] = sigma * ar_rng_gaussian(rng, 1.0);
    for (size_t q = 0; q < s->m * r; q++)
        s->pv[q] = sigma * ar_rng_gaussian(rng, 1.0);
    ar_rng_free(rng);
    return AR_OK;
}

static void lm_store(const lm_state *s, ar_matrix *u, ar_matrix *v, double scale)
{
    for (size_t c = 0; c < s->r; c++) {
        for (size_t i = 0; i < s->n; i++)
            AR_AT(u, i, c) = s->pu[i * s->r + c] * scale;
        for (size_t j = 0; j < s->m; j++)
            AR_AT(v, j, c) = s->pv[j * s->r + c] * scale;
    }
}

/* Polish (u, v) in place when affordable, within iters trial steps in all:
 * from the recursion's factors first, then, while steps remain and the
 * residual is above round-off, from seeded random starts (an ill-conditioned
 * exact completion is often a poor start, a random one a good one).  The
 * factors with the smallest maximum residual are kept. */
static int polish(const ar_interval_pattern *pat, const ar_matrix *d, size_t nnz, size_t r,
                  size_t iters, uint64_t seed, double sigma, double root, int from_uv,
                  ar_matrix *u, ar_matrix *v, double *resid)
{
    size_t kd, maxlen;
    if (iters == 0 || nnz == 0 || *resid == 0.0 || !lm_affordable(pat, r, &kd, &maxlen))
        return AR_OK;
    size_t *off = row_offsets(pat);
    if (off == NULL)
        return AR_ENOMEM;
    lm_state s;
    int rc = lm_alloc(&s, pat, off, nnz, r, kd, maxlen);
    if (rc != AR_OK) {
        free(off);
        return rc;
    }
    double scale = root * root;
    for (size_t i = 0; i < pat->rows; i++)
        for (size_t t = 0; t < row_len(pat, i); t++)
            s.dat[off[i] + t] = AR_AT(d, i, pat->lo[i] + t) / scale;
    double stop = 32.0 * DBL_EPSILON;
    for (size_t k = from_uv ? 0 : 1; rc == AR_OK && iters > 0 && *resid > stop * scale; k++) {
        size_t used = 0;
        rc = lm_load_start(&s, u, v, k, seed, sigma, 1.0 / root);
        if (rc == AR_OK)
            rc = lm_run(&s, iters, stop, &used);
        iters -= used < iters ? used : iters;
        if (rc != AR_OK)
            break;
        lm_cost(&s, s.pu, s.pv, s.e);
        double after = max_abs_of(s.e, nnz) * scale;
        if (after < *resid) {
            *resid = after;
            lm_store(&s, u, v, root);
        }
    }
    lm_free(&s);
    free(off);
    return rc;
}

/* ------------------------------------------------------------------ */
/* float64 entry                                                       */

static int check_factors(const ar_interval_pattern *pat, const ar_matrix *d, size_t r,
                         const ar_matrix *u, const ar_matrix *v, ar_error *err)
{
    if (d == NULL || u == NULL || v == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL matrix");
    if (d->rows != pat->rows || d->cols != pat->cols)
        return ar_error_set(err, AR_EINVAL, "D is %zu x %zu, the pattern %zu x %zu", d->rows,
                            d->cols, pat->rows, pat->cols);
    if (u->rows != pat->rows || v->rows != pat->cols || u->cols < r || v->cols < r)
        return ar_error_set(err, AR_EINVAL,
                            "U is %zu x %zu and V %zu x %zu; rank %zu needs %zu x %zu and %zu x %zu",
                            u->rows, u->cols, v->rows, v->cols, r, pat->rows, r, pat->cols, r);
    if ((pat->rows > 0 && pat->cols > 0 && d->data == NULL) ||
        (pat->rows > 0 && r > 0 && u->data == NULL) || (pat->cols > 0 && r > 0 && v->data == NULL))
        return ar_error_set(err, AR_EINVAL, "matrix without data");
    if (r > (size_t)INT_MAX / 4)
        return ar_error_set(err, AR_EUNSUPPORTED, "rank %zu too large for LAPACK", r);
    return AR_OK;
}

/* The recursion on D / root^2; the factors are multiplied back by root. */
static int f64_complete(const ar_interval_pattern *pat, const ar_matrix *d, size_t r,
                        double sigma, double root, uint64_t seed, ar_matrix *u, ar_matrix *v)
{
    col_sets cs;
    int rc = col_sets_build(pat, r, &cs);
    if (rc != AR_OK)
        return rc;
    size_t kmax = cs.kmax > r ? cs.kmax : r;
    if (kmax > (size_t)INT_MAX / 4 || kmax > SIZE_MAX / sizeof(double) / r) {
        col_sets_free(&cs);
        return AR_ENOMEM;
    }
    f64_rec rec = {pat, d, u, v, r, NULL, NULL, NULL, NULL, sigma, 1.0 / (root * root), NULL};
    rec.a = malloc(kmax * r * sizeof(double));
    rec.b = malloc(kmax * sizeof(double));
    rec.x = malloc(r * sizeof(double));
    rec.s = malloc(kmax * sizeof(double));
    /* Derived (role 1), not raw: the LM starts derive theirs from the same
     * seed with other configurations, so the two do not share a stream. */
    uint64_t role = 1;
    rec.rng = ar_rng_alloc(ar_seed_derive(seed, &role, 1));
    unsigned char *fixed = calloc(pat->rows > 0 ? pat->rows : 1, 1);
    if (rec.a == NULL || rec.b == NULL || rec.x == NULL || rec.s == NULL || rec.rng == NULL ||
        fixed == NULL)
        rc = AR_ENOMEM;
    if (rc == AR_OK)
        rc = f64_recursion(&rec, &cs, fixed);
    for (size_t c = 0; rc == AR_OK && c < r; c++) {
        for (size_t i = 0; i < pat->rows; i++)
            AR_AT(u, i, c) *= root;
        for (size_t j = 0; j < pat->cols; j++)
            AR_AT(v, j, c) *= root;
    }
    free(rec.a);
    free(rec.b);
    free(rec.x);
    free(rec.s);
    free(fixed);
    ar_rng_free(rec.rng);
    col_sets_free(&cs);
    return rc;
}

int ar_interval_complete(const ar_interval_pattern *pat, const ar_matrix *d, size_t r,
                         uint64_t seed, size_t polish_iter, ar_matrix *u, ar_matrix *v,
                         double *max_residual, ar_error *err)
{
    size_t nnz;
    int rc = check_pattern(pat, &nnz, err);
    if (rc != AR_OK)
        return rc;
    if (max_residual == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL max_residual");
    rc = check_factors(pat, d, r, u, v, err);
    double dmax = 0.0, rms = 0.0;
    if (rc == AR_OK)
        rc = data_scale(pat, d, nnz, &dmax, &rms, err);
    if (rc != AR_OK)
        return rc;
    /* Columns beyond r (a caller's capacity) are left zero. */
    if (pat->rows > 0 && u->cols > 0)
        ar_cm_fill(u, 0.0);
    if (pat->cols > 0 && v->cols > 0)
        ar_cm_fill(v, 0.0);
    /* The scale of the random parts, in units of root: u . v of the size of
     * the data. */
    double root = unit_root(dmax), rel = rms / (root * root);
    double sigma = r > 0 && rel > 0.0 ? sqrt(rel / sqrt((double)r)) : 1.0;
    int from_uv = 1;
    if (r > 0 && pat->rows > 0 && pat->cols > 0) {
        rc = f64_complete(pat, d, r, sigma, root, seed, u, v);
        if (rc == AR_ENONFINITE) {
            /* Overflow: no usable exact completion; return zero factors (their
             * residual is max|D|) unless a random start of the polish does
             * better. */
            ar_cm_fill(u, 0.0);
            ar_cm_fill(v, 0.0);
            from_uv = 0;
            rc = AR_OK;
        }
        if (rc != AR_OK)
            return ar_error_set(err, rc, "oldest-columns recursion at rank %zu: %s", r,
                                ar_strerror(rc));
    }
    *max_residual = max_residual_of(pat, d, u, v, r);
    rc = polish(pat, d, nnz, r, polish_iter, seed, sigma, root, from_uv, u, v, max_residual);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "Levenberg-Marquardt polish at rank %zu: %s", r,
                            ar_strerror(rc));
    return AR_OK;
}

/* ------------------------------------------------------------------ */
/* F_p recursion                                                       */

typedef struct fp_rec {
    const ar_interval_pattern *pat;
    size_t r;
    nmod_t mod;
    int limbs;
    mp_limb_t *u, *v;   /* row-major vectors of r residues */
    mp_limb_t *dat;     /* the random data on the pattern, CSR */
    const size_t *off;
    nmod_mat_t a;       /* one square system */
    mp_limb_t *b, *x;
    ar_rng *aux;       /* the random completing equations */
} fp_rec;

static mp_limb_t fp_random(fp_rec *rec)
{
    return (mp_limb_t)ar_seprank_field_uniform(rec->aux, FP_PRIME);
}

/* Solve the k x r system in rec->a, rec->b (first k rows), completed to a
 * square one by random equations; 0 when it is singular or k > r. */
static int fp_solve(fp_rec *rec, size_t k)
{
    size_t r = rec->r;
    if (k > r)
        return 0;
    if (k == 0) {
        for (size_t c = 0; c < r; c++)
            rec->x[c] = fp_random(rec);
        return 1;
    }
    for (size_t t = k; t < r; t++) {
        for (size_t c = 0; c < r; c++)
            nmod_mat_entry(rec->a, t, c) = fp_random(rec);
        rec->b[t] = fp_random(rec);
    }
    return nmod_mat_solve_vec(rec->x, rec->a, rec->b);
}

static int fp_fix_row(fp_rec *rec, size_t i, size_t k)
{
    size_t r = rec->r, lo = rec->pat->lo[i];
    if (k > r)
        return 0;
    for (size_t t = 0; t < k; t++) {
        memcpy(&nmod_mat_entry(rec->a, t, 0), rec->v + (lo + t) * r, r * sizeof(mp_limb_t));
        rec->b[t] = rec->dat[rec->off[i] + t];
    }
    if (!fp_solve(rec, k))
        return 0;
    memcpy(rec->u + i * r, rec->x, r * sizeof(mp_limb_t));
    return 1;
}

static int fp_fix_col(fp_rec *rec, const size_t *rows, size_t k, size_t j)
{
    size_t r = rec->r;
    if (k > r)
        return 0;
    for (size_t t = 0; t < k; t++) {
        size_t i = rows[t];
        memcpy(&nmod_mat_entry(rec->a, t, 0), rec->u + i * r, r * sizeof(mp_limb_t));
        rec->b[t] = rec->dat[rec->off[i] + (j - rec->pat->lo[i])];
    }
    if (!fp_solve(rec, k))
        return 0;
    memcpy(rec->v + j * r, rec->x, r * sizeof(mp_limb_t));
    return 1;
}

/* 1 when every system was square and invertible. */
static int fp_recursion(fp_rec *rec, const col_sets *cs, unsigned char *fixed)
{
    const ar_interval_pattern *pat = rec->pat;
    for (size_t j = 0; j < pat->cols; j++) {
        const size_t *rows = cs->rows + cs->start[j];
        size_t k = cs->start[j + 1] - cs->start[j];
        for (size_t t = 0; t < k; t++) {
            if (fixed[rows[t]])
                continue;
            if (!fp_fix_row(rec, rows[t], rec->r))
                return 0;
            fixed[rows[t]] = 1;
        }
        if (cs->covered[j] && !fp_fix_col(rec, rows, k, j))
            return 0;
    }
    for (size_t i = 0; i < pat->rows; i++) {
        size_t len = row_len(pat, i);
        if (!fixed[i] && len > 0 && !fp_fix_row(rec, i, len))
            return 0;
    }
    return 1;
}

/* U V^T = D mod p on every specified entry. */
static int fp_end_check(const fp_rec *rec)
{
    const ar_interval_pattern *pat = rec->pat;
    size_t r = rec->r;
    for (size_t i = 0; i < pat->rows; i++) {
        size_t len = row_len(pat, i);
        for (size_t t = 0; t < len; t++) {
            mp_limb_t s = _nmod_vec_dot(rec->u + i * r, rec->v + (pat->lo[i] + t) * r,
                                        (slong)r, rec->mod, rec->limbs);
            if (s != rec->dat[rec->off[i] + t])
                return 0;
        }
    }
    return 1;
}

/* FLINT aborts when an allocation fails: before the r x r system and its
 * solves (nmod_mat_solve_vec factors a copy), a probe of what they take
 * (AR_ENOMEM when malloc cannot provide it). */
static int fp_admit(size_t r)
{
    size_t solve;
    int rc = ar_seprank_nmod_bytes(r, r, &solve);
    if (rc != AR_OK || solve > SIZE_MAX - r * r * sizeof(mp_limb_t))
        return AR_ENOMEM;
    return ar_seprank_flint_admit(solve + r * r * sizeof(mp_limb_t), 0.0, "the F_p system", NULL);
}

static int fp_run(const ar_interval_pattern *pat, size_t r, size_t nnz, uint64_t seed,
                  int *verified)
{
    if (pat->rows > SIZE_MAX / sizeof(mp_limb_t) / r || pat->cols > SIZE_MAX / sizeof(mp_limb_t) / r)
        return AR_ENOMEM;
    col_sets cs;
    int rc = col_sets_build(pat, r, &cs);
    if (rc != AR_OK)
        return rc;
    fp_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.pat = pat;
    rec.r = r;
    nmod_init(&rec.mod, FP_PRIME);
    rec.limbs = _nmod_vec_dot_bound_limbs((slong)r, rec.mod);
    size_t *off = row_offsets(pat);
    rec.off = off;
    rec.u = calloc(pat->rows * r, sizeof(mp_limb_t));
    rec.v = calloc(pat->cols * r, sizeof(mp_limb_t));
    rec.dat = malloc((nnz > 0 ? nnz : 1) * sizeof(mp_limb_t));
    rec.b = malloc(r * sizeof(mp_limb_t));
    rec.x = malloc(r * sizeof(mp_limb_t));
    unsigned char *fixed = calloc(pat->rows, 1);
    /* Data and completing equations from separate streams, so that the data
     * do not depend on how many random equations the recursion drew. */
    uint64_t role_data = 4, role_aux = 5;
    ar_rng *rd = ar_rng_alloc(ar_seed_derive(seed, &role_data, 1));
    rec.aux = ar_rng_alloc(ar_seed_derive(seed, &role_aux, 1));
    if (off == NULL || rec.u == NULL || rec.v == NULL || rec.dat == NULL || rec.b == NULL ||
        rec.x == NULL || fixed == NULL || rd == NULL || rec.aux == NULL)
        rc = AR_ENOMEM;
    if (rc == AR_OK) {
        for (size_t k = 0; k < nnz; k++)
            rec.dat[k] = (mp_limb_t)ar_seprank_field_uniform(rd, FP_PRIME);
        rc = fp_admit(r);
    }
    if (rc == AR_OK) {
        nmod_mat_init(rec.a, (slong)r, (slong)r, FP_PRIME);
        *verified = fp_recursion(&rec, &cs, fixed) && fp_end_check(&rec);
        nmod_mat_clear(rec.a);
    }
    ar_rng_free(rd);
    ar_rng_free(rec.aux);
    free(fixed);
    free(rec.u);
    free(rec.v);
    free(rec.dat);
    free(rec.b);
    free(rec.x);
    free(off);
    col_sets_free(&cs);
    return rc;
}

int ar_interval_verify_fp(const ar_interval_pattern *pat, size_t r, uint64_t seed,
                          int *verified, ar_error *err)
{
    size_t nnz;
    int rc = check_pattern(pat, &nnz, err);
    if (rc != AR_OK)
        return rc;
    if (verified == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL verified");
    *verified = 0;
    size_t small = pat->rows < pat->cols ? pat->rows : pat->cols;
    if (r >= small) {
        *verified = 1; /* every completion has rank <= min(rows, cols) <= r */
        return AR_OK;
    }
    if (r == 0) {
        *verified = nnz == 0; /* generic data are non-zero */
        return AR_OK;
    }
    rc = fp_run(pat, r, nnz, seed, verified);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "F_p recursion at rank %zu: %s", r, ar_strerror(rc));
    return AR_OK;
}
