/* The embedding side of full circuits (include/attnrank/circuits.h): the
 * triangular factors of thin QRs of U and E^T and the d x d core C = E U,
 * computed once per model so that a head costs O(d^2 d_head). */
#include "circuits_internal.h"

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

/* R (k x d) of the thin QR of the V x d view v, through one column-major copy. */
static int r_factor(ar_cview v, double *r, ar_error *err)
{
    double *a = malloc(v.rows * v.cols * sizeof(double));
    if (a == NULL)
        return ar_error_set(err, AR_ENOMEM, "embedding: out of memory for a %zu x %zu copy",
                            v.rows, v.cols);
    ar_circuit_copy_cm(v, a);
    int st = ar_circuit_qr_r(a, v.rows, v.cols, r, err);
    free(a);
    return st;
}

int ar_circuit_embed_init(ar_circuit_embed *e, ar_cview emb, ar_cview unemb, ar_error *err)
{
    if (e == NULL)
        return ar_error_set(err, AR_EINVAL, "embedding: NULL result");
    *e = ar_circuit_embed_empty();
    if (ar_cview_check(emb) != AR_OK || ar_cview_check(unemb) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "embedding: invalid view");
    if (emb.rows == 0 || emb.cols == 0)
        return ar_error_set(err, AR_EINVAL, "embedding: E is empty (%zu x %zu)", emb.rows,
                            emb.cols);
    if (unemb.rows != emb.cols || unemb.cols != emb.rows)
        return ar_error_set(err, AR_ESIZE, "embedding: E is %zu x %zu (d x V), so U must be %zu x "
                            "%zu, got %zu x %zu", emb.rows, emb.cols, emb.cols, emb.rows,
                            unemb.rows, unemb.cols);
    size_t bi = 0, bj = 0;
    if (ar_matrix_check_finite(emb, &bi, &bj) != AR_OK)
        return ar_error_set(err, AR_ENONFINITE, "embedding: E(%zu, %zu) is not finite", bi, bj);
    if (ar_matrix_check_finite(unemb, &bi, &bj) != AR_OK)
        return ar_error_set(err, AR_ENONFINITE, "embedding: U(%zu, %zu) is not finite", bi, bj);
    size_t d = emb.rows, v = emb.cols, k = v < d ? v : d;
    e->d = d;
    e->vocab = v;
    e->k = k;
    /* tied: U is E^T on the same memory (U(i, j) = E(j, i)) */
    e->tied = unemb.data == emb.data && unemb.row_stride == emb.col_stride &&
              unemb.col_stride == emb.row_stride;
    e->r_u = malloc(k * d * sizeof(double));
    e->r_e = e->tied ? e->r_u : malloc(k * d * sizeof(double));
    e->c = malloc(d * d * sizeof(double));
    int st = e->r_u && e->r_e && e->c ? AR_OK : ar_error_set(err, AR_ENOMEM, "embedding: out of memory");
    if (st == AR_OK)
        st = r_factor(unemb, e->r_u, err);
    if (st == AR_OK && !e->tied)
        st = r_factor(ar_cview_transpose(emb), e->r_e, err);
    ar_view cv;
    if (st == AR_OK)
        st = ar_view_init_ld(&cv, e->c, d, d, d, AR_COL_MAJOR);
    if (st == AR_OK && (st = ar_matrix_gemm(AR_NO_TRANS, AR_NO_TRANS, 1.0, emb, unemb, 0.0, cv)) !=
                           AR_OK)
        ar_error_set(err, st, "embedding: E U failed: %s", ar_strerror(st));
    if (st == AR_OK) {
        e->fro_e = ar_matrix_norm_fro(emb);
        e->fro_u = ar_matrix_norm_fro(unemb);
    } else {
        ar_circuit_embed_free(e);
    }
    return st;
}
