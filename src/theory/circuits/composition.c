/* Composition scores from factors (include/attnrank/circuits.h).
 *
 * With M_1 = A_1 B_1^T and M_2 = A_2 B_2^T,
 *   M_2 M_1 = Q_A2 R_A2 (B_2^T A_1) R_B1^T Q_B1^T,
 * and multiplying by matrices with orthonormal columns (on the left) or
 * rows (on the right) keeps the Frobenius norm, so
 *   ||M_2 M_1||_F = ||R_A2 (B_2^T A_1) R_B1^T||_F,
 * exact in exact arithmetic; B_2^T A_1 costs d r_2 r_1.  Q-composition uses
 * M_2 = W_QK^T = B_2 A_2^T: the roles of A_2 and B_2 swap. */
#include "circuits_internal.h"

#include <math.h>
#include <stdlib.h>

const char *ar_composition_name(ar_composition kind)
{
    switch (kind) {
    case AR_COMPOSITION_Q: return "q";
    case AR_COMPOSITION_K: return "k";
    case AR_COMPOSITION_V: return "v";
    default: return "unknown";
    }
}

int ar_circuit_composition(const ar_circuit_factor *later, ar_composition kind,
                           const ar_circuit_factor *earlier, double *score, int *defined,
                           ar_error *err)
{
    if (later == NULL || earlier == NULL || score == NULL || later->a == NULL ||
        earlier->a == NULL)
        return ar_error_set(err, AR_EINVAL, "composition: NULL or empty factor");
    if (kind != AR_COMPOSITION_Q && kind != AR_COMPOSITION_K && kind != AR_COMPOSITION_V)
        return ar_error_set(err, AR_EINVAL, "composition: unknown kind %d", (int)kind);
    if (later->d != earlier->d)
        return ar_error_set(err, AR_ESIZE, "composition: widths differ (%zu and %zu)", later->d,
                            earlier->d);
    size_t d = later->d, r2 = later->r, k2 = later->k, r1 = earlier->r, k1 = earlier->k;
    const double *outer = kind == AR_COMPOSITION_Q ? later->a : later->b; /* B_2 */
    const double *r_left = kind == AR_COMPOSITION_Q ? later->rb : later->ra; /* R_A2 */
    double *x = malloc(r2 * r1 * sizeof(double));
    double *y = malloc(k2 * r1 * sizeof(double));
    double *z = malloc(k2 * k1 * sizeof(double));
    int st = x && y && z ? AR_OK : AR_ENOMEM;
    if (st == AR_OK)
        st = ar_circuit_mul(AR_TRANS, AR_NO_TRANS, outer, d, r2, earlier->a, d, r1, x, r2, r1);
    if (st == AR_OK)
        st = ar_circuit_mul(AR_NO_TRANS, AR_NO_TRANS, r_left, k2, r2, x, r2, r1, y, k2, r1);
    if (st == AR_OK)
        st = ar_circuit_mul(AR_NO_TRANS, AR_TRANS, y, k2, r1, earlier->rb, k1, r1, z, k2, k1);
    double num = 0.0;
    if (st == AR_OK) {
        ar_cview zv;
        ar_cview_init_ld(&zv, z, k2, k1, k2, AR_COL_MAJOR, err);
        num = ar_matrix_norm_fro(zv);
    }
    free(x);
    free(y);
    free(z);
    if (st != AR_OK)
        return ar_error_set(err, st, "composition: %s", ar_strerror(st));
    double den = later->fro * earlier->fro;
    int ok = den > 0.0;
    *score = ok ? num / den : NAN;
    if (defined != NULL)
        *defined = ok;
    return AR_OK;
}
