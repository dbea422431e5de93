#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE) */
#include "attnrank/spectrum.h"
#include "attnrank/status.h"
#include "core/lapack_internal.h"
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"

#include <lapacke.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct ar_svd_workspace {
    size_t m, n;
    ar_svd_job job;
    void *block;        /* a, work and iwork in one allocation, or NULL */
    double *a;          /* copy of the input: gesdd/gesvd destroy it */
    double *work;
    lapack_int lwork;
    lapack_int *iwork;  /* 8 min(m, n), for gesdd */
    int fallback_ready; /* work is big enough for gesvd too */
    double *fallback_work; /* one-shot workspaces: gesvd's, allocated on first need */
    lapack_int fallback_lwork;
    int force_fallback;
    size_t fallbacks;
};

static int fits_lapack_int(size_t x)
{
    return x <= (size_t)INT_MAX;
}

/* Optimal lwork of one LAPACK routine for this shape, from its query call. */
static int query_lwork(ar_svd_workspace *ws, int use_gesvd, lapack_int *lwork)
{
    lapack_int m = (lapack_int)ws->m, n = (lapack_int)ws->n;
    lapack_int k = m < n ? m : n;
    int thin = ws->job == AR_SVD_THIN;
    double opt = 0.0, dummy = 0.0;
    lapack_int idummy = 0, info;
    if (use_gesvd)
        info = LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, thin ? 'S' : 'N', thin ? 'S' : 'N', m, n,
                                   &dummy, m, &dummy, &dummy, m, &dummy, thin ? k : 1, &opt, -1);
    else
        info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, thin ? 'S' : 'N', m, n, &dummy, m, &dummy,
                                   &dummy, m, &dummy, thin ? k : 1, &opt, -1, &idummy);
    if (info != 0)
        return AR_ELAPACK;
    if (!(opt >= 1.0) || opt > (double)INT_MAX)
        return AR_ENOMEM;
    *lwork = (lapack_int)opt;
    return AR_OK;
}

/* glibc serves a request above its largest dynamic mmap threshold (32 MB
 * on 64-bit) with a fresh mmap every time, which the kernel then
 * page-faults in: on this virtual machine that cost 1.2x LAPACKE for a
 * one-shot thin SVD of 1024 x 1024 (33 MB as one block; 0.99x as three
 * buffers, each recycled by the heap).  Below it, one block for the copy
 * of A, work and iwork is the cheaper layout (256 x 256 values with two
 * BLAS threads: 1.01-1.02x LAPACKE as one block, 1.24-1.32x as three). */
#define ONE_BLOCK_LIMIT ((size_t)32 << 20)

/* Above the limit the copy of A is mmapped anew on every call anyway:
 * 2 MB-aligned with transparent huge pages asked for, it costs 512x fewer
 * page faults (2048 x 2048 values, two threads: 1.03-1.06x LAPACKE as a
 * plain malloc, 0.95-0.98x like this). */
static void *huge_alloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    void *p = NULL;
    if (posix_memalign(&p, huge, bytes) != 0)
        return NULL;
#if defined(MADV_HUGEPAGE)
    (void)madvise(p, bytes - bytes % huge, MADV_HUGEPAGE);
#endif
    return p;
}

static int workspace_buffers(ar_svd_workspace *ws)
{
    size_t k = ws->m < ws->n ? ws->m : ws->n;
    size_t a_bytes = ws->m * ws->n * sizeof(double);
    size_t work_bytes = (size_t)ws->lwork * sizeof(double);
    size_t iwork_bytes = 8 * k * sizeof(lapack_int);
    if (a_bytes + work_bytes + iwork_bytes < ONE_BLOCK_LIMIT) {
        ws->block = malloc(a_bytes + work_bytes + iwork_bytes);
        if (ws->block == NULL)
            return AR_ENOMEM;
        ws->a = ws->block;
        ws->work = ws->a + ws->m * ws->n;
        ws->iwork = (lapack_int *)(ws->work + ws->lwork);
        return AR_OK;
    }
    ws->a = huge_alloc(a_bytes);
    ws->work = malloc(work_bytes);
    ws->iwork = malloc(iwork_bytes);
    return ws->a && ws->work && ws->iwork ? AR_OK : AR_ENOMEM;
}

/* fallback_ready: size the work array for gesvd as well, so a workspace
 * reused in a loop never allocates, even when gesdd fails to converge.  A
 * one-shot call skips gesvd's query and allocates its workspace only if the
 * fallback actually runs (it almost never does). */
static int workspace_create(ar_svd_workspace **out, size_t m, size_t n, ar_svd_job job,
                            int fallback_ready)
{
    if (out == NULL || m == 0 || n == 0 || (job != AR_SVD_VALUES && job != AR_SVD_THIN))
        return AR_EINVAL;
    *out = NULL;
    if (!fits_lapack_int(m) || !fits_lapack_int(n))
        return AR_EUNSUPPORTED; /* LAPACK's integers cannot address it */
    if (m > SIZE_MAX / sizeof(double) / n)
        return AR_ENOMEM;
    ar_svd_workspace *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return AR_ENOMEM;
    ws->m = m;
    ws->n = n;
    ws->job = job;
    ws->fallback_ready = fallback_ready;
    lapack_int lw_sdd = 0, lw_svd = 0;
    int rc = query_lwork(ws, 0, &lw_sdd);
    if (rc == AR_OK && fallback_ready)
        rc = query_lwork(ws, 1, &lw_svd);
    ws->lwork = lw_sdd > lw_svd ? lw_sdd : lw_svd;
    if (rc == AR_OK)
        rc = workspace_buffers(ws);
    if (rc != AR_OK) {
        ar_svd_workspace_free(ws);
        return rc;
    }
    *out = ws;
    return AR_OK;
}

int ar_svd_workspace_alloc(ar_svd_workspace **out, size_t m, size_t n, ar_svd_job job,
                           ar_error *err)
{
    int rc = workspace_create(out, m, n, job, 1);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK
                       : ar_error_set(err, rc, "SVD workspace for %zu x %zu: %s", m, n,
                                      ar_strerror(rc));
}

int ar_svd_workspace_alloc_oneshot(ar_svd_workspace **out, size_t m, size_t n, ar_svd_job job)
{
    return workspace_create(out, m, n, job, 0);
}

void ar_svd_workspace_free(ar_svd_workspace *ws)
{
    if (ws == NULL)
        return;
    if (ws->block != NULL) {
        free(ws->block);
    } else {
        free(ws->a);
        free(ws->work);
        free(ws->iwork);
    }
    free(ws->fallback_work);
    free(ws);
}

void ar_svd_workspace_force_fallback(ar_svd_workspace *ws, int force)
{
    if (ws != NULL)
        ws->force_fallback = force;
}

size_t ar_svd_workspace_fallbacks(const ar_svd_workspace *ws)
{
    return ws != NULL ? ws->fallbacks : 0;
}

/* Copy the view into the workspace, column-major (gesdd destroys its
 * argument, so this copy is needed anyway and serves every layout). */
static int load_input(ar_svd_workspace *ws, ar_cview a, ar_error *err)
{
    for (size_t j = 0; j < a.cols; j++) {
        double *dst = ws->a + j * ws->m;
        for (size_t i = 0; i < a.rows; i++) {
            double v = AR_VAT(a, i, j);
            /* NaN and Inf make LAPACK loop or return garbage: refuse them. */
            if (v - v != 0.0)
                return ar_error_set(err, AR_ENONFINITE, "non-finite entry at (%zu, %zu)", i, j);
            dst[i] = v;
        }
    }
    return AR_OK;
}

/* gesvd's workspace of a one-shot workspace, queried and allocated on the
 * first fallback. */
static int fallback_workspace(ar_svd_workspace *ws, double **work, lapack_int *lwork)
{
    if (ws->fallback_work == NULL) {
        lapack_int lw = 0;
        int rc = query_lwork(ws, 1, &lw);
        if (rc != AR_OK)
            return rc;
        if (lw <= ws->lwork)
            return AR_OK; /* gesdd's is big enough */
        ws->fallback_work = malloc((size_t)lw * sizeof(double));
        if (ws->fallback_work == NULL)
            return AR_ENOMEM;
        ws->fallback_lwork = lw;
    }
    *work = ws->fallback_work;
    *lwork = ws->fallback_lwork;
    return AR_OK;
}

/* Run gesdd on the loaded copy; on non-convergence (info > 0) reload the
 * input and run gesvd, whose QR iteration converges where divide and conquer
 * occasionally fails. */
static int run_svd(ar_svd_workspace *ws, ar_cview a, double *s, double *u,
                   lapack_int ldu, double *vt, lapack_int ldvt)
{
    lapack_int m = (lapack_int)ws->m, n = (lapack_int)ws->n;
    int thin = ws->job == AR_SVD_THIN;
    lapack_int info = 1;
    if (!ws->force_fallback)
        info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, thin ? 'S' : 'N', m, n, ws->a, m, s, u, ldu,
                                   vt, ldvt, ws->work, ws->lwork, ws->iwork);
    if (info < 0)
        return AR_ELAPACK;
    if (info == 0)
        return AR_OK;
    ws->fallbacks++;
    int rc = load_input(ws, a, NULL); /* loaded once already: finite */
    double *work = ws->work;
    lapack_int lwork = ws->lwork;
    if (rc == AR_OK && !ws->fallback_ready)
        rc = fallback_workspace(ws, &work, &lwork);
    if (rc != AR_OK)
        return rc;
    info = LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, thin ? 'S' : 'N', thin ? 'S' : 'N', m, n, ws->a,
                               m, s, u, ldu, vt, ldvt, work, lwork);
    if (info < 0)
        return AR_ELAPACK;
    return info == 0 ? AR_OK : AR_ENOCONV;
}

/* One condition, one code: an invalid view or a workspace made for the
 * other job is a bad argument (AR_EINVAL), a shape other than the
 * workspace's is AR_ESIZE. */
static int check_shape(ar_cview a, const ar_svd_workspace *ws, ar_svd_job job, ar_error *err)
{
    if (ws == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL workspace");
    if (ar_cview_check(a, err) != AR_OK)
        return AR_EINVAL;
    if (ws->job != job)
        return ar_error_set(err, AR_EINVAL, "the workspace was made for the other SVD job");
    if (a.rows == 0 || a.cols == 0)
        return ar_error_set(err, AR_EINVAL, "SVD of an empty %zu x %zu matrix", a.rows, a.cols);
    if (a.rows != ws->m || a.cols != ws->n)
        return ar_error_set(err, AR_ESIZE, "the matrix is %zu x %zu, the workspace %zu x %zu",
                            a.rows, a.cols, ws->m, ws->n);
    return AR_OK;
}

int ar_spectrum_svals_ws(ar_cview a, double *s, ar_svd_workspace *ws, ar_error *err)
{
    int rc = check_shape(a, ws, AR_SVD_VALUES, err);
    if (rc != AR_OK)
        return rc;
    if (s == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    rc = load_input(ws, a, err);
    if (rc != AR_OK)
        return rc;
    double dummy = 0.0;
    rc = run_svd(ws, a, s, &dummy, 1, &dummy, 1);
    return rc == AR_OK ? AR_OK
                       : ar_error_set(err, rc, "SVD of a %zu x %zu matrix: %s", a.rows, a.cols,
                                      ar_strerror(rc));
}

static int check_factors(ar_cview a, ar_view u, ar_view vt)
{
    if (ar_view_check(u, NULL) != AR_OK || ar_view_check(vt, NULL) != AR_OK)
        return AR_EINVAL;
    size_t k = a.rows < a.cols ? a.rows : a.cols;
    if (u.rows != a.rows || u.cols != k || vt.rows != k || vt.cols != a.cols)
        return AR_ESIZE;
    return AR_OK;
}

int ar_spectrum_svd_ws(ar_cview a, ar_view u, double *s, ar_view vt, ar_svd_workspace *ws,
                       ar_error *err)
{
    int rc = check_shape(a, ws, AR_SVD_THIN, err);
    if (rc != AR_OK)
        return rc;
    if (s == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    rc = check_factors(a, u, vt);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "U and VT must be valid views of %zu x %zu and %zu x %zu",
                            a.rows, a.rows < a.cols ? a.rows : a.cols,
                            a.rows < a.cols ? a.rows : a.cols, a.cols);
    rc = load_input(ws, a, err);
    if (rc != AR_OK)
        return rc;
    /* LAPACK writes column-major factors: into the caller's memory when the
     * views are column-major, else into scratch stored back afterwards. */
    ar_colmajor_out cu, cvt;
    rc = ar_colmajor_out_get(&cu, u);
    int rc_vt = ar_colmajor_out_get(&cvt, vt);
    if (rc == AR_OK)
        rc = rc_vt;
    if (rc == AR_OK && (cu.m.ld > INT_MAX || cvt.m.ld > INT_MAX))
        rc = AR_EUNSUPPORTED;
    if (rc == AR_OK)
        rc = run_svd(ws, a, s, cu.m.data, (lapack_int)cu.m.ld, cvt.m.data, (lapack_int)cvt.m.ld);
    rc = ar_colmajor_out_put(&cu, rc);
    rc = ar_colmajor_out_put(&cvt, rc);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK
                       : ar_error_set(err, rc, "SVD of a %zu x %zu matrix: %s", a.rows, a.cols,
                                      ar_strerror(rc));
}

int ar_spectrum_svals(ar_cview a, double *s, ar_error *err)
{
    if (ar_cview_check(a, err) != AR_OK)
        return AR_EINVAL; /* the view check filled err */
    ar_svd_workspace *ws = NULL;
    int rc = ar_svd_workspace_alloc_oneshot(&ws, a.rows, a.cols, AR_SVD_VALUES);
    if (rc != AR_OK)
        rc = ar_error_set(err, rc, "%s", rc == AR_ENOMEM ? "out of memory" : ar_strerror(rc));
    else
        rc = ar_spectrum_svals_ws(a, s, ws, err);
    ar_svd_workspace_free(ws);
    return rc;
}

int ar_spectrum_svd(ar_cview a, ar_view u, double *s, ar_view vt, ar_error *err)
{
    if (ar_cview_check(a, err) != AR_OK)
        return AR_EINVAL; /* the view check filled err */
    ar_svd_workspace *ws = NULL;
    int rc = ar_svd_workspace_alloc_oneshot(&ws, a.rows, a.cols, AR_SVD_THIN);
    if (rc != AR_OK)
        rc = ar_error_set(err, rc, "%s", rc == AR_ENOMEM ? "out of memory" : ar_strerror(rc));
    else
        rc = ar_spectrum_svd_ws(a, u, s, vt, ws, err);
    ar_svd_workspace_free(ws);
    return rc;
}

/* R factor (min(rows, r) x r, upper trapezoidal) of the thin QR of F^T,
 * where F is r x rows.  Returned in a new matrix. */
static int qr_r_of_transpose(const ar_matrix *f, ar_matrix *r_out)
{
    ar_matrix ft = ar_matrix_empty();
    int rc = ar_cm_transpose(&ft, f); /* rows x r */
    if (rc != AR_OK)
        return rc;
    size_t rows = ft.rows, r = ft.cols, k = rows < r ? rows : r;
    double *tau = malloc((k > 0 ? k : 1) * sizeof(double));
    if (tau == NULL) {
        ar_matrix_free(&ft);
        return AR_ENOMEM;
    }
    lapack_int info =
        ar_lapack_dgeqrf((lapack_int)rows, (lapack_int)r, ft.data, (lapack_int)ft.ld, tau);
    free(tau);
    if (info != 0) {
        ar_matrix_free(&ft);
        return ar_lapack_status(info);
    }
    rc = ar_matrix_alloc(r_out, k, r, NULL);
    if (rc == AR_OK)
        for (size_t j = 0; j < r; j++)
            for (size_t i = 0; i <= j && i < k; i++)
                AR_AT(r_out, i, j) = AR_AT(&ft, i, j);
    ar_matrix_free(&ft);
    return rc;
}

static int svals_factored(const ar_matrix *f, const ar_matrix *g, double *s)
{
    if (f->rows != g->rows)
        return AR_ESIZE;
    size_t n = f->cols, p = g->cols, r = f->rows;
    if (n == 0 || p == 0 || r == 0)
        return AR_EINVAL;
    if (!fits_lapack_int(n) || !fits_lapack_int(p) || !fits_lapack_int(r))
        return AR_EUNSUPPORTED;
    int rc = ar_cm_check_finite(f, NULL, NULL);
    if (rc == AR_OK)
        rc = ar_cm_check_finite(g, NULL, NULL);
    if (rc != AR_OK)
        return rc;
    size_t kout = n < p ? n : p;
    memset(s, 0, kout * sizeof(double));
    ar_matrix rf = ar_matrix_empty(), rg = ar_matrix_empty(), core = ar_matrix_empty();
    rc = qr_r_of_transpose(f, &rf);
    if (rc == AR_OK)
        rc = qr_r_of_transpose(g, &rg);
    /* F^T G = Q_F (R_F R_G^T) Q_G^T: the core has the same singular values. */
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&core, rf.rows, rg.rows, NULL);
    if (rc == AR_OK)
        rc = ar_cm_gemm(0, 1, 1.0, &rf, &rg, 0.0, &core);
    if (rc == AR_OK)
        rc = ar_spectrum_svals(ar_matrix_cview(&core), s,
                               NULL); /* writes min(kF, kG) <= kout values */
    ar_matrix_free(&rf);
    ar_matrix_free(&rg);
    ar_matrix_free(&core);
    return rc;
}

int ar_spectrum_svals_factored(ar_cview f, ar_cview g, double *s, ar_error *err)
{
    if (s == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    ar_colmajor cf, cg;
    int rc = ar_colmajor_get(&cf, f);
    int rc_g = ar_colmajor_get(&cg, g);
    if (rc == AR_OK)
        rc = rc_g;
    if (rc == AR_OK)
        rc = svals_factored(&cf.m, &cg.m, s);
    ar_colmajor_release(&cf);
    ar_colmajor_release(&cg);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK
                       : ar_error_set(err, rc, "factored spectrum of %zu x %zu and %zu x %zu: %s",
                                      f.rows, f.cols, g.rows, g.cols, ar_strerror(rc));
}
