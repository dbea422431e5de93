/* Distributed spectra with MPI-IO and ScaLAPACK (attnrank/spectrum_dist.h);
 * compiled only with -Dmpi=enabled. */
#include "attnrank/spectrum_dist.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"
#include "io/array_internal.h"
#include "io/npy_internal.h"


/* BLACS and ScaLAPACK (Fortran symbols; character arguments are followed by
 * their hidden lengths, as gfortran passes them). */
void Cblacs_get(int context, int what, int *val);
void Cblacs_gridinit(int *context, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int context);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc,
            const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);
void pdgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, double *a,
              const int *ia, const int *ja, const int *desca, double *s, double *u, const int *iu,
              const int *ju, const int *descu, double *vt, const int *ivt, const int *jvt,
              const int *descvt, double *work, const int *lwork, int *info, size_t ljobu,
              size_t ljobvt);
void pdgeqrf_(const int *m, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, double *tau, double *work, const int *lwork, int *info);

int ar_spectrum_dist_available(void)
{
    return 1;
}

/* The library never starts MPI: that is process-wide state, the caller's. */
static int mpi_running(ar_error *err)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return ar_error_set(err, AR_EINVAL,
                            "distributed spectrum: MPI is not running (call MPI_Init first)");
    return AR_OK;
}

/* Every rank's status agreed on: the first failing rank's status (by rank
 * order) wins, and its message reaches every rank. */
static int agree(int rc, ar_error *err)
{
    int me, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int mine = rc != AR_OK ? me : size, first = size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == size)
        return AR_OK;
    int status = rc;
    MPI_Bcast(&status, 1, MPI_INT, first, MPI_COMM_WORLD);
    if (err != NULL)
        MPI_Bcast(err->msg, (int)sizeof err->msg, MPI_CHAR, first, MPI_COMM_WORLD);
    return status;
}

/* ---- process grid ---- */

typedef struct grid {
    int ctxt, nprow, npcol, myrow, mycol, nb;
} grid;

/* The most square pr x pc = size with pr <= pc (pdgesvd prefers square
 * grids), unless the user fixed it. */
static int grid_shape(const ar_spectrum_dist_opts *o, int size, int *pr, int *pc, ar_error *err)
{
    if (o->grid_rows != 0 || o->grid_cols != 0) {
        if ((size_t)size != o->grid_rows * o->grid_cols)
            return ar_error_set(err, AR_EINVAL,
                                "process grid %zux%zu needs %zu processes, MPI_COMM_WORLD has %d",
                                o->grid_rows, o->grid_cols, o->grid_rows * o->grid_cols, size);
        *pr = (int)o->grid_rows;
        *pc = (int)o->grid_cols;
        return AR_OK;
    }
    int r = (int)sqrt((double)size);
    while (r > 1 && size % r != 0)
        r--;
    *pr = r;
    *pc = size / r;
    return AR_OK;
}

static int grid_open(grid *g, int pr, int pc, int nb)
{
    Cblacs_get(-1, 0, &g->ctxt);
    Cblacs_gridinit(&g->ctxt, "Row", pr, pc);
    Cblacs_gridinfo(g->ctxt, &g->nprow, &g->npcol, &g->myrow, &g->mycol);
    g->nb = nb;
    return g->myrow >= 0 ? AR_OK : AR_EINVAL;
}

static void grid_close(grid *g)
{
    if (g->myrow >= 0)
        Cblacs_gridexit(g->ctxt);
}

/* Local rows/columns and the descriptor of an m x n matrix on the grid. */
static int local_layout(const grid *g, int m, int n, int *lr, int *lc, int desc[9])
{
    const int zero = 0;
    *lr = numroc_(&m, &g->nb, &g->myrow, &zero, &g->nprow);
    *lc = numroc_(&n, &g->nb, &g->mycol, &zero, &g->npcol);
    int lld = *lr > 1 ? *lr : 1, info = 0;
    descinit_(desc, &m, &n, &g->nb, &g->nb, &zero, &zero, &g->ctxt, &lld, &info);
    return info == 0 ? AR_OK : AR_EINVAL;
}

/* ---- reading ---- */

/* Read this rank's blocks of the column-major m x n view of the file into
 * local (count doubles).  The raw elements are read as bytes into the top
 * of the buffer and widened in place by the .npy reader's own decoder, so
 * every stored type and byte order works on any host. */
static int read_blocks(const char *path, const ar_npy_info *info, const grid *g, int m, int n,
                       double *local, size_t count, ar_error *err)
{
    int gsizes[2] = {m, n}, distribs[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {g->nb, g->nb}, psizes[2] = {g->nprow, g->npcol}, me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Datatype etype, filetype;
    MPI_Type_contiguous((int)info->itemsize, MPI_BYTE, &etype);
    MPI_Type_commit(&etype);
    MPI_Type_create_darray(g->nprow * g->npcol, me, 2, gsizes, distribs, dargs, psizes,
                           MPI_ORDER_FORTRAN, etype, &filetype);
    MPI_Type_commit(&filetype);
    MPI_File fh;
    int rc = AR_OK;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        rc = ar_error_set(err, AR_EIO, "%s: MPI_File_open failed", path);
    unsigned char *raw = (unsigned char *)local + count * (sizeof(double) - info->itemsize);
    if (rc == AR_OK) {
        MPI_Status st;
        int got = 0;
        if (MPI_File_set_view(fh, (MPI_Offset)info->data_offset, etype, filetype, "native",
                              MPI_INFO_NULL) != MPI_SUCCESS ||
            MPI_File_read_all(fh, raw, (int)count, etype, &st) != MPI_SUCCESS ||
            MPI_Get_count(&st, etype, &got) != MPI_SUCCESS || (size_t)got != count)
            rc = ar_error_set(err, AR_EIO, "%s: MPI-IO read of %zu values failed", path, count);
        MPI_File_close(&fh);
    }
    MPI_Type_free(&filetype);
    MPI_Type_free(&etype);
    if (rc == AR_OK)
        ar_npy_decode(raw, count, info->itemsize, info->big_endian, local);
    return rc;
}

/* Global (row, column) of local element (i, j) in the block-cyclic layout. */
static size_t global_index(size_t local, int nb, int me, int nprocs)
{
    size_t b = local / (size_t)nb;
    return (b * (size_t)nprocs + (size_t)me) * (size_t)nb + local % (size_t)nb;
}

/* First non-finite element over all ranks (column-major order of the
 * file's view); AR_OK when there is none. */
static int check_finite(const grid *g, const double *a, int lr, int lc, int m, int fortran,
                        const char *path, ar_error *err)
{
    double first = INFINITY, value = 0.0;
    for (int j = 0; j < lc; j++)
        for (int i = 0; i < lr; i++) {
            double x = a[(size_t)j * (size_t)(lr > 1 ? lr : 1) + (size_t)i];
            if (isfinite(x))
                continue;
            size_t gi = global_index((size_t)i, g->nb, g->myrow, g->nprow);
            size_t gj = global_index((size_t)j, g->nb, g->mycol, g->npcol);
            double lin = (double)gj * (double)m + (double)gi;
            if (lin < first) {
                first = lin;
                value = x;
            }
        }
    struct {
        double lin;
        int rank;
    } mine = {first, 0}, best;
    MPI_Comm_rank(MPI_COMM_WORLD, &mine.rank);
    MPI_Allreduce(&mine, &best, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    if (isinf(best.lin))
        return AR_OK;
    MPI_Bcast(&value, 1, MPI_DOUBLE, best.rank, MPI_COMM_WORLD);
    size_t r = (size_t)fmod(best.lin, (double)m), c = (size_t)(best.lin / (double)m);
    if (!fortran) { /* the view is the transpose of the file's C-order matrix */
        size_t t = r;
        r = c;
        c = t;
    }
    return ar_error_set(err, AR_ENONFINITE, "%s: non-finite value %g at row %zu, column %zu", path,
                        value, r, c);
}

/* ---- singular values ---- */

static int run_pdgesvd(double *a, const int desc[9], int m, int n, double *s, ar_error *err)
{
    const int one = 1;
    int lwork = -1, info = 0;
    double query = 0.0, dummy = 0.0;
    pdgesvd_("N", "N", &m, &n, a, &one, &one, desc, s, &dummy, &one, &one, desc, &dummy, &one,
             &one, desc, &query, &lwork, &info, 1, 1);
    if (info != 0)
        return ar_error_set(err, AR_EINVAL, "pdgesvd workspace query: info = %d", info);
    lwork = (int)query + 1;
    double *work = malloc((size_t)lwork * sizeof *work);
    if (work == NULL)
        return ar_error_set(err, AR_ENOMEM, "pdgesvd: no memory for %d workspace doubles", lwork);
    pdgesvd_("N", "N", &m, &n, a, &one, &one, desc, s, &dummy, &one, &one, desc, &dummy, &one,
             &one, desc, work, &lwork, &info, 1, 1);
    free(work);
    if (info < 0)
        return ar_error_set(err, AR_EINVAL, "pdgesvd: argument %d invalid", -info);
    if (info > 0)
        return ar_error_set(err, AR_ENOCONV, "pdgesvd did not converge (info = %d)", info);
    return AR_OK;
}

static int result_init(ar_spectrum_dist_result *out, const grid *g, size_t rows, size_t cols)
{
    memset(out, 0, sizeof *out);
    MPI_Comm_rank(MPI_COMM_WORLD, &out->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &out->size);
    out->rows = rows;
    out->cols = cols;
    out->k = rows < cols ? rows : cols;
    out->grid_rows = (size_t)g->nprow;
    out->grid_cols = (size_t)g->npcol;
    out->block = (size_t)g->nb;
    out->precision = AR_PREC_F64;
    out->s = calloc(out->k > 0 ? out->k : 1, sizeof *out->s);
    return out->s != NULL ? AR_OK : AR_ENOMEM;
}

static int check_sizes(const ar_npy_info *info, const char *path, ar_error *err)
{
    int rc = ar_require_matrix_shape(info->ndim, info->shape, path, err);
    if (rc != AR_OK)
        return rc;
    if (info->count != 1)
        return ar_error_set(err, AR_EINVAL,
                            "%s: the distributed SVD takes one matrix; the file holds a stack of "
                            "%zu", path, info->count);
    if (info->rows > INT32_MAX || info->cols > INT32_MAX)
        return ar_error_set(err, AR_EINVAL, "%s: %zu x %zu exceeds ScaLAPACK's int sizes", path,
                            info->rows, info->cols);
    return AR_OK;
}

int ar_spectrum_dist_svals_npy(const char *path, const ar_spectrum_dist_opts *opts,
                               ar_spectrum_dist_result *out, ar_error *err)
{
    if (path == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_spectrum_dist_svals_npy: NULL argument");
    memset(out, 0, sizeof *out);
    ar_spectrum_dist_opts defaults;
    ar_spectrum_dist_opts_init(&defaults);
    if (opts == NULL)
        opts = &defaults;
    int rc = mpi_running(err);
    if (rc != AR_OK)
        return rc;
    int size, pr = 1, pc = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ar_npy_info info;
    rc = ar_npy_read_info(path, &info, err); /* every rank reads the header itself */
    if (rc == AR_OK)
        rc = check_sizes(&info, path, err);
    if (rc == AR_OK)
        rc = grid_shape(opts, size, &pr, &pc, err);
    rc = agree(rc, err);
    if (rc != AR_OK)
        return rc;
    int m = (int)(info.fortran ? info.rows : info.cols), n = (int)(info.fortran ? info.cols : info.rows);
    grid g;
    rc = grid_open(&g, pr, pc, (int)(opts->block ? opts->block : 64));
    int lr = 0, lc = 0, desc[9];
    if (rc == AR_OK)
        rc = local_layout(&g, m, n, &lr, &lc, desc);
    size_t count = (size_t)lr * (size_t)lc;
    double *a = NULL;
    if (rc == AR_OK && (a = malloc((count > 0 ? count : 1) * sizeof *a)) == NULL)
        rc = ar_error_set(err, AR_ENOMEM, "%s: no memory for the local %d x %d block", path, lr, lc);
    rc = agree(rc, err);
    if (rc == AR_OK)
        rc = agree(read_blocks(path, &info, &g, m, n, a, count, err), err);
    if (rc == AR_OK)
        rc = check_finite(&g, a, lr, lc, m, info.fortran, path, err);
    if (rc == AR_OK)
        rc = result_init(out, &g, info.rows, info.cols);
    if (rc == AR_OK)
        rc = agree(run_pdgesvd(a, desc, m, n, out->s, err), err);
    if (rc == AR_OK)
        out->precision = info.itemsize == 2   ? AR_PREC_F16
                         : info.itemsize == 4 ? AR_PREC_F32
                                              : AR_PREC_F64;
    free(a);
    grid_close(&g);
    return rc;
}

/* ---- factored logits ---- */

/* This rank's rows of the n x d_p matrix f^T in a P x 1 block-row layout. */
static void local_rows_of_transpose(const grid *g, const ar_matrix *f, int lr, double *a)
{
    size_t dp = f->rows;
    for (int i = 0; i < lr; i++) {
        size_t gi = global_index((size_t)i, g->nb, g->myrow, g->nprow);
        for (size_t j = 0; j < dp; j++)
            a[j * (size_t)lr + (size_t)i] = AR_AT(f, j, gi);
    }
}

/* Thin QR of the distributed f^T; R (d_p x d_p, upper) lands on rank 0,
 * which owns the first block of rows (the block size is at least d_p). */
static int distributed_r(const grid *g, const ar_matrix *f, ar_matrix *r, ar_error *err)
{
    int n = (int)f->cols, dp = (int)f->rows, lr, lc, desc[9], one = 1, info = 0;
    int rc = local_layout(g, n, dp, &lr, &lc, desc);
    double *a = malloc(((size_t)(lr > 1 ? lr : 1) * (size_t)dp) * sizeof *a);
    double *tau = malloc((size_t)dp * sizeof *tau);
    if (rc != AR_OK || a == NULL || tau == NULL) {
        free(a);
        free(tau);
        return ar_error_set(err, AR_ENOMEM, "distributed QR: no memory");
    }
    local_rows_of_transpose(g, f, lr, a);
    double query = 0.0;
    int lwork = -1;
    pdgeqrf_(&n, &dp, a, &one, &one, desc, tau, &query, &lwork, &info);
    lwork = (int)query + 1;
    double *work = info == 0 ? malloc((size_t)lwork * sizeof *work) : NULL;
    if (work == NULL)
        rc = ar_error_set(err, AR_ENOMEM, "pdgeqrf: workspace query failed (info = %d)", info);
    else
        pdgeqrf_(&n, &dp, a, &one, &one, desc, tau, work, &lwork, &info);
    if (rc == AR_OK && info != 0)
        rc = ar_error_set(err, AR_EINVAL, "pdgeqrf: info = %d", info);
    if (rc == AR_OK && g->myrow == 0)
        for (int j = 0; j < dp; j++)
            for (int i = 0; i < dp; i++)
                AR_AT(r, (size_t)i, (size_t)j) = i <= j ? a[(size_t)j * (size_t)lr + (size_t)i] : 0.0;
    free(work);
    free(a);
    free(tau);
    return rc;
}

/* The computation on column-major factors (checked by the caller). */
static int svals_factored_cm(const ar_matrix *f, const ar_matrix *g_,
                             const ar_spectrum_dist_opts *opts, ar_spectrum_dist_result *out,
                             ar_error *err)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t n = f->cols, dp = f->rows;
    int rc = AR_OK;
    size_t nb = opts->block ? opts->block : 64;
    grid g;
    rc = grid_open(&g, size, 1, (int)(nb > dp ? nb : dp));
    ar_matrix rf = ar_matrix_empty(), rg = ar_matrix_empty(), core = ar_matrix_empty();
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&rf, dp, dp, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&rg, dp, dp, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&core, dp, dp, err);
    if (rc == AR_OK)
        rc = result_init(out, &g, n, n);
    rc = agree(rc, err);
    if (rc == AR_OK)
        rc = agree(distributed_r(&g, f, &rf, err), err);
    if (rc == AR_OK)
        rc = agree(distributed_r(&g, g_, &rg, err), err);
    /* f^T g = Q_f R_f R_g^T Q_g^T: the spectrum is that of R_f R_g^T. */
    if (rc == AR_OK && out->rank == 0) {
        for (size_t i = 0; i < dp; i++)
            for (size_t j = 0; j < dp; j++) {
                double acc = 0.0;
                for (size_t l = (i > j ? i : j); l < dp; l++)
                    acc += AR_AT(&rf, i, l) * AR_AT(&rg, j, l);
                AR_AT(&core, i, j) = acc;
            }
        rc = ar_cm_svals(&core, out->s);
    }
    rc = agree(rc, err);
    if (rc == AR_OK)
        MPI_Bcast(out->s, (int)dp, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    ar_matrix_free(&rf);
    ar_matrix_free(&rg);
    ar_matrix_free(&core);
    grid_close(&g);
    return rc;
}

int ar_spectrum_dist_svals_factored(ar_cview f, ar_cview g, const ar_spectrum_dist_opts *opts,
                                    ar_spectrum_dist_result *out, ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_spectrum_dist_svals_factored: NULL argument");
    memset(out, 0, sizeof *out);
    ar_spectrum_dist_opts defaults;
    ar_spectrum_dist_opts_init(&defaults);
    if (opts == NULL)
        opts = &defaults;
    int rc = mpi_running(err);
    if (rc == AR_OK && (ar_cview_check(f, err) != AR_OK || ar_cview_check(g, err) != AR_OK))
        rc = ar_error_set(err, AR_EINVAL, "distributed logits: invalid factor view");
    if (rc == AR_OK && (f.rows != g.rows || f.cols != g.cols || f.rows == 0))
        rc = ar_error_set(err, AR_EINVAL,
                          "distributed logits: factors %zu x %zu and %zu x %zu differ or are empty",
                          f.rows, f.cols, g.rows, g.cols);
    if (rc == AR_OK && (f.cols < f.rows || f.cols > INT32_MAX))
        rc = ar_error_set(err, AR_EINVAL,
                          "distributed logits need n >= d_p (n = %zu, d_p = %zu)", f.cols, f.rows);
    if (rc != AR_OK)
        return rc;
    ar_colmajor cf, cg;
    rc = ar_colmajor_get(&cf, f);
    int rc2 = ar_colmajor_get(&cg, g);
    /* A copy can fail on one rank only (memory differs): agree on it. */
    rc = agree(rc != AR_OK ? ar_error_set(err, rc, "distributed logits: no memory")
               : rc2 != AR_OK ? ar_error_set(err, rc2, "distributed logits: no memory")
                              : AR_OK,
               err);
    if (rc == AR_OK)
        rc = svals_factored_cm(&cf.m, &cg.m, opts, out, err);
    ar_colmajor_release(&cf);
    ar_colmajor_release(&cg);
    return rc;
}
