/* sum |eig(S)| for the symmetric part S = (W_O W_V + W_V^T W_O^T) / 2 of an
 * OV circuit without forming it: with B = [W_O, W_V^T] (d x 2 d_head) and
 * J = [[0, I/2], [I/2, 0]], S = B J B^T.  A thin QR B = Q R gives
 * S = Q (R J R^T) Q^T, Q with orthonormal columns, so the nonzero
 * eigenvalues of S are those of the small symmetric R J R^T
 * = (R_1 R_2^T + R_2 R_1^T) / 2, R = [R_1, R_2]. */
#include "circuits_internal.h"
#include "core/lapack_internal.h"

#include <math.h>
#include <stdlib.h>

int ar_circuit_sym_abs_sum(ar_cview w_v, ar_cview w_o, double *sum, ar_error *err)
{
    size_t h = w_v.rows, d = w_v.cols, n = 2 * h, k = d < n ? d : n;
    double *b = malloc(d * n * sizeof(double));
    double *r = malloc(k * n * sizeof(double));
    double *t = malloc(k * k * sizeof(double));
    double *w = malloc(k * sizeof(double));
    int st = b && r && t && w ? AR_OK : ar_error_set(err, AR_ENOMEM, "symmetric part: out of memory");
    if (st == AR_OK) {
        ar_circuit_copy_cm(w_o, b);
        ar_circuit_copy_cm(ar_cview_transpose(w_v), b + d * h);
        st = ar_circuit_qr_r(b, d, n, r, err);
    }
    if (st == AR_OK) {
        /* T = (R_1 R_2^T + R_2 R_1^T) / 2, entry (i, j) = sum_l (R1_il R2_jl + R2_il R1_jl) / 2 */
        for (size_t j = 0; j < k; j++)
            for (size_t i = 0; i < k; i++) {
                double s = 0.0;
                for (size_t l = 0; l < h; l++)
                    s += r[i + l * k] * r[j + (h + l) * k] + r[i + (h + l) * k] * r[j + l * k];
                t[i + j * k] = 0.5 * s;
            }
        lapack_int info = ar_lapack_dsyev('N', 'U', (lapack_int)k, t, (lapack_int)k, w);
        st = ar_lapack_status(info);
        if (st != AR_OK)
            ar_error_set(err, st, "symmetric part: dsyev info %d", (int)info);
    }
    if (st == AR_OK) {
        double s = 0.0;
        for (size_t i = 0; i < k; i++)
            s += fabs(w[i]);
        *sum = s;
    }
    free(b);
    free(r);
    free(t);
    free(w);
    return st;
}
