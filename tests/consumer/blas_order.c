/* Link-order independence of the library's BLAS (docs/building.md).
 *
 * run.sh links this program with -lgslcblas BEFORE libattnrank and the
 * system BLAS, so in the process's global scope cblas_dgemm is GSL's
 * reference CBLAS.  The program checks that this hostile order is really in
 * effect, then multiplies through the library; run.sh reads the loader's
 * bindings (LD_DEBUG=bindings) to see which library served the library's
 * BLAS calls: it must not be libgslcblas.
 *
 * Uses the matrix views and ar_matrix_gemm of 0.9 (one place, below). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <attnrank/attnrank.h>

int main(void)
{
    void *sym = dlsym(RTLD_DEFAULT, "cblas_dgemm");
    Dl_info info;
    const char *owner = sym != NULL && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "?";
    printf("global cblas_dgemm: %s\n", owner);
    if (strstr(owner, "gslcblas") == NULL) {
        printf("FAIL: the test's link order did not put libgslcblas first\n");
        return 1;
    }

    /* C = A B with A = [1 2; 3 4], B = [5 6; 7 8] (column-major storage):
     * C = [19 22; 43 50]. */
    double a[4] = {1, 3, 2, 4}, b[4] = {5, 7, 6, 8}, c[4] = {0, 0, 0, 0};
    ar_cview va, vb;
    ar_view vc;
    int rc = ar_cview_init_ld(&va, a, 2, 2, 2, AR_COL_MAJOR, NULL);
    if (rc == AR_OK)
        rc = ar_cview_init_ld(&vb, b, 2, 2, 2, AR_COL_MAJOR, NULL);
    if (rc == AR_OK)
        rc = ar_view_init_ld(&vc, c, 2, 2, 2, AR_COL_MAJOR, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_gemm(AR_NO_TRANS, AR_NO_TRANS, 1.0, va, vb, 0.0, vc, NULL);
    const double want[4] = {19, 43, 22, 50};
    int ok = rc == AR_OK;
    for (int i = 0; i < 4; i++)
        ok = ok && fabs(c[i] - want[i]) == 0.0;
    printf("%s: ar_matrix_gemm through the library (rc %d)\n", ok ? "ok" : "FAIL", rc);
    return ok ? 0 : 1;
}
