/* The CBLAS routines the library calls, defined here with hidden visibility
 * on top of the Fortran BLAS interface (dgemm_, ...).
 *
 * Why: the loader binds an undefined cblas_dgemm in libattnrank.so to the
 * first library in the process that defines it.  A program that links
 * -lgslcblas before OpenBLAS (or links only -lgsl, whose libgsl.so needs
 * libgslcblas.so.0) would otherwise run the library's products on GSL's
 * reference CBLAS.  Hidden definitions bind inside libattnrank at link time,
 * and libgslcblas defines no Fortran symbols, so every call below reaches
 * the system BLAS (libblas.so.3, OpenBLAS through Debian's alternatives)
 * whatever the program's link order (docs/building.md).
 *
 * Adding a cblas_* call elsewhere in the library: add it here too; the test
 * `abi` fails while libattnrank.so has an undefined cblas_ symbol.
 *
 * The prototypes match both <cblas.h> and <gsl/gsl_cblas.h> in ABI (enums
 * are ints, row-major 101, no-transpose 111, transpose 112, conj-transpose
 * 113).  Row-major calls are column-major calls on the transposes. */
#include <stddef.h>

#define AR_LOCAL __attribute__((visibility("hidden")))

enum { ROW_MAJOR = 101, COL_MAJOR = 102, NO_TRANS = 111 };

/* Fortran BLAS (gfortran ABI: scalars by pointer, a hidden length after the
 * arguments per character argument; OpenBLAS ignores the lengths). */
extern double ddot_(const int *n, const double *x, const int *incx, const double *y,
                    const int *incy);
extern double dnrm2_(const int *n, const double *x, const int *incx);
extern void daxpy_(const int *n, const double *alpha, const double *x, const int *incx,
                   double *y, const int *incy);
extern void dscal_(const int *n, const double *alpha, double *x, const int *incx);
extern void dswap_(const int *n, double *x, const int *incx, double *y, const int *incy);
extern void dger_(const int *m, const int *n, const double *alpha, const double *x,
                  const int *incx, const double *y, const int *incy, double *a,
                  const int *lda);
extern void dgemv_(const char *trans, const int *m, const int *n, const double *alpha,
                   const double *a, const int *lda, const double *x, const int *incx,
                   const double *beta, double *y, const int *incy, size_t trans_len);
extern void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
                   const int *k, const double *alpha, const double *a, const int *lda,
                   const double *b, const int *ldb, const double *beta, double *c,
                   const int *ldc, size_t transa_len, size_t transb_len);

extern void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k,
                   const double *alpha, const double *a, const int *lda, const double *beta,
                   double *c, const int *ldc, size_t uplo_len, size_t trans_len);
extern void dtrmm_(const char *side, const char *uplo, const char *transa, const char *diag,
                   const int *m, const int *n, const double *alpha, const double *a,
                   const int *lda, double *b, const int *ldb, size_t side_len, size_t uplo_len,
                   size_t transa_len, size_t diag_len);

AR_LOCAL double cblas_ddot(const int n, const double *x, const int incx, const double *y,
                           const int incy);
AR_LOCAL double cblas_dnrm2(const int n, const double *x, const int incx);
AR_LOCAL void cblas_daxpy(const int n, const double alpha, const double *x, const int incx,
                          double *y, const int incy);
AR_LOCAL void cblas_dscal(const int n, const double alpha, double *x, const int incx);
AR_LOCAL void cblas_dswap(const int n, double *x, const int incx, double *y, const int incy);
AR_LOCAL void cblas_dger(const int order, const int m, const int n, const double alpha,
                         const double *x, const int incx, const double *y, const int incy,
                         double *a, const int lda);
AR_LOCAL void cblas_dgemv(const int order, const int trans, const int m, const int n,
                          const double alpha, const double *a, const int lda, const double *x,
                          const int incx, const double beta, double *y, const int incy);
AR_LOCAL void cblas_dgemm(const int order, const int transa, const int transb, const int m,
                          const int n, const int k, const double alpha, const double *a,
                          const int lda, const double *b, const int ldb, const double beta,
                          double *c, const int ldc);

AR_LOCAL void cblas_dsyrk(const int order, const int uplo, const int trans, const int n,
                          const int k, const double alpha, const double *a, const int lda,
                          const double beta, double *c, const int ldc);
AR_LOCAL void cblas_dtrmm(const int order, const int side, const int uplo, const int transa,
                          const int diag, const int m, const int n, const double alpha,
                          const double *a, const int lda, double *b, const int ldb);

static char trans_char(int t)
{
    return t == NO_TRANS ? 'N' : (t == 113 ? 'C' : 'T');
}

double cblas_ddot(const int n, const double *x, const int incx, const double *y, const int incy)
{
    return ddot_(&n, x, &incx, y, &incy);
}

double cblas_dnrm2(const int n, const double *x, const int incx)
{
    return dnrm2_(&n, x, &incx);
}

void cblas_daxpy(const int n, const double alpha, const double *x, const int incx, double *y,
                 const int incy)
{
    daxpy_(&n, &alpha, x, &incx, y, &incy);
}

void cblas_dscal(const int n, const double alpha, double *x, const int incx)
{
    dscal_(&n, &alpha, x, &incx);
}

void cblas_dswap(const int n, double *x, const int incx, double *y, const int incy)
{
    dswap_(&n, x, &incx, y, &incy);
}

void cblas_dger(const int order, const int m, const int n, const double alpha, const double *x,
                const int incx, const double *y, const int incy, double *a, const int lda)
{
    if (order == ROW_MAJOR) /* A^T (n x m, column-major) += alpha y x^T */
        dger_(&n, &m, &alpha, y, &incy, x, &incx, a, &lda);
    else
        dger_(&m, &n, &alpha, x, &incx, y, &incy, a, &lda);
}

void cblas_dgemv(const int order, const int trans, const int m, const int n, const double alpha,
                 const double *a, const int lda, const double *x, const int incx,
                 const double beta, double *y, const int incy)
{
    if (order == ROW_MAJOR) { /* the row-major m x n A is the column-major n x m A^T */
        const char t = trans == NO_TRANS ? 'T' : 'N';
        dgemv_(&t, &n, &m, &alpha, a, &lda, x, &incx, &beta, y, &incy, 1);
    } else {
        const char t = trans_char(trans);
        dgemv_(&t, &m, &n, &alpha, a, &lda, x, &incx, &beta, y, &incy, 1);
    }
}

void cblas_dgemm(const int order, const int transa, const int transb, const int m, const int n,
                 const int k, const double alpha, const double *a, const int lda,
                 const double *b, const int ldb, const double beta, double *c, const int ldc)
{
    const char ta = trans_char(transa), tb = trans_char(transb);
    if (order == ROW_MAJOR) /* C^T = op(B)^T op(A)^T, column-major */
        dgemm_(&tb, &ta, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc, 1, 1);
    else
        dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
}

/* CblasUpper 121, CblasLower 122; CblasLeft 141, CblasRight 142; CblasUnit 132. */
void cblas_dsyrk(const int order, const int uplo, const int trans, const int n, const int k,
                 const double alpha, const double *a, const int lda, const double beta, double *c,
                 const int ldc)
{
    /* row-major: C^T = C is column-major with the other triangle, and the
     * row-major A is the column-major A^T */
    const int up = (uplo == 121) == (order != ROW_MAJOR);
    const int nt = (trans == NO_TRANS) == (order != ROW_MAJOR);
    const char u = up ? 'U' : 'L', t = nt ? 'N' : 'T';
    dsyrk_(&u, &t, &n, &k, &alpha, a, &lda, &beta, c, &ldc, 1, 1);
}

void cblas_dtrmm(const int order, const int side, const int uplo, const int transa,
                 const int diag, const int m, const int n, const double alpha, const double *a,
                 const int lda, double *b, const int ldb)
{
    /* row-major: B^T := B^T op(A)^T on the other side, with the column-major
     * A^T of the other triangle */
    const int row = order == ROW_MAJOR;
    const char s = (side == 141) != row ? 'L' : 'R';
    const char u = (uplo == 121) != row ? 'U' : 'L';
    const char t = trans_char(transa), dg = diag == 132 ? 'U' : 'N';
    if (row)
        dtrmm_(&s, &u, &t, &dg, &n, &m, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
    else
        dtrmm_(&s, &u, &t, &dg, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
}
