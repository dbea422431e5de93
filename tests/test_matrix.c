/* Matrices and views: the checking constructors, the rules every function
 * re-checks on entry, and equal answers for every layout (column-major with
 * padding, row-major, strided, transposed views). */
#include "testutil.h"

#include <limits.h>

#include "core/spectrum_internal.h"

enum { M = 7, N = 5 };

/* A with entries of no special structure, stored four ways in buf: col-major
 * with ld = M + 2, row-major with ld = N + 3, every other element of a
 * col-major array (row stride 2), and as the transpose of a row-major N x M. */
typedef struct layouts {
    double colmajor[(M + 2) * N];
    double rowmajor[M * (N + 3)];
    double strided[2 * M * N * 2];
    ar_cview v[4];
} layouts;

static double entry(size_t i, size_t j)
{
    return sin(2.385 * (double)(i + 1) + 0.917 * (double)(j * j + 1)) + 0.1 * (double)(i == j);
}

static void make_layouts(layouts *l)
{
    memset(l, 0, sizeof *l);
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            l->colmajor[i + j * (M + 2)] = entry(i, j);
            l->rowmajor[i * (N + 3) + j] = entry(i, j);
            l->strided[2 * i + j * 2 * M * 2] = entry(i, j);
        }
    assert_ok(ar_cview_init_ld(&l->v[0], l->colmajor, M, N, M + 2, AR_COL_MAJOR, NULL));
    assert_ok(ar_cview_init_ld(&l->v[1], l->rowmajor, M, N, N + 3, AR_ROW_MAJOR, NULL));
    assert_ok(ar_cview_init(&l->v[2], l->strided, M, N, 2, 2 * M * 2, NULL));
    /* the row-major array read as N x M column-major is A^T; transposed back */
    ar_cview t;
    assert_ok(ar_cview_init_ld(&t, l->rowmajor, N, M, N + 3, AR_COL_MAJOR, NULL));
    l->v[3] = ar_cview_transpose(t);
}

static void test_constructor_rules(void **state)
{
    (void)state;
    double buf[64] = {0};
    ar_cview v;
    ar_view w;
    /* the bug report: a 4 x 3 matrix with ld = 2 is refused, not computed */
    assert_int_equal(ar_cview_init_ld(&v, buf, 4, 3, 2, AR_COL_MAJOR, NULL), AR_EINVAL);
    assert_int_equal(v.rows, 0); /* left empty */
    assert_int_equal(ar_cview_init(&v, buf, 4, 3, 1, 2, NULL), AR_EINVAL);
    assert_int_equal(ar_cview_init_ld(&v, buf, 3, 4, 3, AR_ROW_MAJOR, NULL), AR_EINVAL);
    assert_int_equal(ar_cview_init_ld(&v, buf, 3, 4, 4, (ar_layout)7, NULL), AR_EINVAL);
    /* zero strides (broadcasting) and overlapping strides */
    assert_int_equal(ar_cview_init(&v, buf, 3, 3, 0, 3, NULL), AR_EINVAL);
    assert_int_equal(ar_cview_init(&v, buf, 3, 3, 1, 1, NULL), AR_EINVAL);
    assert_int_equal(ar_cview_init(&v, buf, 3, 3, 2, 3, NULL), AR_EINVAL);
    assert_int_equal(ar_view_init(&w, buf, 3, 3, 2, 3, NULL), AR_EINVAL);
    /* NULL data, unless empty */
    assert_int_equal(ar_cview_init(&v, NULL, 2, 2, 1, 2, NULL), AR_EINVAL);
    assert_ok(ar_cview_init(&v, NULL, 0, 5, 1, 1, NULL));
    assert_ok(ar_cview_init(&v, NULL, 5, 0, 0, 0, NULL));
    /* an extent whose bytes overflow */
    assert_int_equal(ar_cview_init(&v, buf, SIZE_MAX / 4, 2, 1, SIZE_MAX / 4, NULL), AR_EINVAL);
    assert_int_equal(ar_cview_init(&v, buf, 3, (size_t)1 << 62, 3, 1, NULL), AR_EINVAL);
    /* valid layouts: interleaved rows (row stride 2 with col stride 1 is
     * refused: rows overlap columns), vectors with any positive stride */
    assert_ok(ar_cview_init(&v, buf, 3, 4, 8, 2, NULL));
    assert_ok(ar_cview_init(&v, buf, 1, 9, 5, 3, NULL));
    assert_int_equal(v.row_stride, 1); /* normalised */
    assert_ok(ar_cview_init(&v, buf, 9, 1, 3, 0, NULL));
    assert_int_equal(v.col_stride, 27);
    /* a hand-made view is re-checked by every function */
    ar_cview bad = {buf, 4, 3, 1, 2};
    double s[3];
    assert_int_equal(ar_cview_check(bad, NULL), AR_EINVAL);
    assert_int_equal(ar_spectrum_svals(bad, s, NULL), AR_EINVAL);
    assert_true(isnan(ar_matrix_norm_fro(bad)));
    assert_true(isnan(ar_matrix_max_abs(bad)));
    ar_matrix out = ar_matrix_empty();
    assert_int_equal(ar_matrix_clone(&out, bad, NULL), AR_EINVAL);
    assert_null(out.data);
    ar_view badw = {buf, 4, 3, 1, 2};
    assert_int_equal(ar_matrix_fill(badw, 1.0, NULL), AR_EINVAL);
    assert_int_equal(ar_matrix_copy(badw, ar_view_const(badw), NULL), AR_EINVAL);
    assert_int_equal(ar_cview_init(NULL, buf, 1, 1, 1, 1, NULL), AR_EINVAL);
    /* a size LAPACK's integers cannot address is AR_EUNSUPPORTED (one
     * condition, one code), before any allocation is tried */
    ar_svd_workspace *ws = NULL;
    assert_int_equal(ar_svd_workspace_alloc(&ws, (size_t)INT_MAX + 1, 2, AR_SVD_VALUES, NULL),
                     AR_EUNSUPPORTED);
    assert_null(ws);
}

static void test_spectrum_every_layout(void **state)
{
    (void)state;
    layouts l;
    make_layouts(&l);
    double s[4][N];
    for (int k = 0; k < 4; k++)
        assert_ok(ar_spectrum_svals(l.v[k], s[k], NULL));
    /* the workspace copy is the same numbers in the same order: same bits */
    for (int k = 1; k < 4; k++)
        for (size_t i = 0; i < N; i++)
            assert_true(s[k][i] == s[0][i]);
    /* the transposed view has the same spectrum (to rounding) */
    double st[N];
    assert_ok(ar_spectrum_svals(ar_cview_transpose(l.v[1]), st, NULL));
    for (size_t i = 0; i < N; i++)
        assert_close(st[i], s[0][i], 8 * DBL_EPSILON * s[0][0]);
    /* a batch of mixed layouts */
    double sb[4 * N];
    assert_ok(ar_spectrum_svals_batch(l.v, 4, sb, 2, NULL, NULL));
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < N; i++)
            assert_true(sb[k * N + i] == s[0][i]);
    /* the inputs are untouched */
    assert_true(l.rowmajor[1 * (N + 3) + 2] == entry(1, 2));
}

/* U diag(s) VT reproduces A when the factors are written through
 * row-major and strided views. */
static void test_svd_into_views(void **state)
{
    (void)state;
    layouts l;
    make_layouts(&l);
    double ubuf[M * (N + 1)], vtbuf[2 * N * N * 2], s[N];
    ar_view u, vt;
    assert_ok(ar_view_init_ld(&u, ubuf, M, N, N + 1, AR_ROW_MAJOR, NULL));
    assert_ok(ar_view_init(&vt, vtbuf, N, N, 2, 2 * N * 2, NULL));
    assert_ok(ar_spectrum_svd(l.v[2], u, s, vt, NULL));
    double worst = 0.0;
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double acc = 0.0;
            for (size_t k = 0; k < N; k++)
                acc += AR_VAT(u, i, k) * s[k] * AR_VAT(vt, k, j);
            worst = fmax(worst, fabs(acc - entry(i, j)));
        }
    assert_true(worst < 64 * DBL_EPSILON * s[0]);
    /* wrong factor shapes; invalid factor views */
    ar_view small;
    assert_ok(ar_view_init_ld(&small, ubuf, M, N - 1, N, AR_ROW_MAJOR, NULL));
    assert_int_equal(ar_spectrum_svd(l.v[0], small, s, vt, NULL), AR_ESIZE);
    ar_view bad = {ubuf, M, N, 1, 2};
    assert_int_equal(ar_spectrum_svd(l.v[0], bad, s, vt, NULL), AR_EINVAL);
}

static void test_gemm_every_layout(void **state)
{
    (void)state;
    layouts l;
    make_layouts(&l);
    /* C = A^T A (N x N) for every layout of A, into col-major and strided C */
    ar_matrix want = ar_matrix_empty(), a0 = ar_matrix_empty();
    assert_ok(ar_matrix_clone(&a0, l.v[0], NULL));
    assert_ok(ar_matrix_alloc(&want, N, N, NULL));
    assert_ok(ar_cm_gemm(1, 0, 1.0, &a0, &a0, 0.0, &want));
    double cbuf[3 * N * N * 3];
    for (int ka = 0; ka < 4; ka++)
        for (int kb = 0; kb < 4; kb++) {
            ar_view c;
            assert_ok(ar_view_init(&c, cbuf, N, N, 3, 3 * N * 3, NULL));
            assert_ok(ar_matrix_fill(c, 2.0, NULL));
            /* beta = 1 adds the old content: C = A^T B + 2 */
            assert_ok(ar_matrix_gemm(AR_TRANS, AR_NO_TRANS, 1.0, l.v[ka], l.v[kb], 1.0, c, NULL));
            for (size_t i = 0; i < N; i++)
                for (size_t j = 0; j < N; j++)
                    assert_close(AR_VAT(c, i, j), AR_AT(&want, i, j) + 2.0, 1e-13);
        }
    /* a row-major C */
    double crow[N * N];
    ar_view c;
    assert_ok(ar_view_init_ld(&c, crow, N, N, N, AR_ROW_MAJOR, NULL));
    assert_ok(ar_matrix_gemm(AR_TRANS, AR_NO_TRANS, 1.0, l.v[1], l.v[0], 0.0, c, NULL));
    assert_close(ar_matrix_max_abs_diff(ar_view_const(c), ar_matrix_cview(&want)), 0.0, 1e-13);
    /* errors: shapes, bad views, bad flags, an ld below the rows */
    assert_int_equal(ar_matrix_gemm(AR_NO_TRANS, AR_NO_TRANS, 1.0, l.v[0], l.v[0], 0.0, c, NULL),
                     AR_ESIZE);
    ar_cview bad = {l.colmajor, M, N, 1, 2};
    assert_int_equal(ar_matrix_gemm(AR_TRANS, AR_NO_TRANS, 1.0, bad, l.v[0], 0.0, c,
                                    NULL), AR_EINVAL);
    assert_int_equal(ar_matrix_gemm((ar_trans)2, AR_NO_TRANS, 1.0, l.v[0], l.v[0], 0.0, c, NULL),
                     AR_EINVAL);
    ar_matrix short_ld = ar_matrix_alias(a0.data, M, N, 2);
    assert_int_equal(ar_cm_gemm(1, 0, 1.0, &short_ld, &a0, 0.0, &want), AR_EINVAL);
    ar_matrix_free(&want);
    ar_matrix_free(&a0);
}

static void test_view_operations(void **state)
{
    (void)state;
    layouts l;
    make_layouts(&l);
    /* clone of a strided view is the owning column-major matrix */
    ar_matrix a = ar_matrix_empty(), t = ar_matrix_empty();
    assert_ok(ar_matrix_clone(&a, l.v[2], NULL));
    assert_int_equal(a.ld, M);
    assert_true(AR_AT(&a, 3, 4) == entry(3, 4));
    assert_ok(ar_matrix_transpose(&t, l.v[1], NULL));
    assert_true(AR_AT(&t, 4, 3) == entry(3, 4));
    /* blocks */
    ar_cview b;
    assert_ok(ar_cview_block(l.v[1], 2, 1, 3, 2, &b, NULL));
    assert_true(AR_VAT(b, 2, 1) == entry(4, 2));
    assert_int_equal(ar_cview_block(l.v[1], 5, 0, 3, 1, &b, NULL), AR_EINVAL);
    assert_int_equal(ar_cview_block(l.v[1], 0, 4, 1, 2, &b, NULL), AR_EINVAL);
    assert_ok(ar_cview_block(l.v[1], M, N, 0, 0, &b, NULL));
    /* copy into a strided view, identity, check_finite positions */
    double buf[2 * M * N * 2] = {0};
    ar_view w, wb;
    assert_ok(ar_view_init(&w, buf, M, N, 2, 2 * M * 2, NULL));
    assert_ok(ar_matrix_copy(w, l.v[1], NULL));
    assert_close(ar_matrix_max_abs_diff(ar_view_const(w), l.v[0]), 0.0, 0.0);
    assert_ok(ar_view_block(w, 1, 1, 3, 3, &wb, NULL));
    assert_ok(ar_matrix_identity(wb, NULL));
    assert_true(AR_VAT(w, 2, 2) == 1.0 && AR_VAT(w, 1, 2) == 0.0 && AR_VAT(w, 0, 0) == entry(0, 0));
    AR_VAT(w, 5, 3) = INFINITY;
    size_t bi = 0, bj = 0;
    assert_int_equal(ar_matrix_check_finite(ar_view_const(w), &bi, &bj, NULL), AR_ENONFINITE);
    assert_int_equal(bi, 5);
    assert_int_equal(bj, 3);
    double s[N];
    assert_int_equal(ar_spectrum_svals(ar_view_const(w), s, NULL), AR_ENONFINITE);
    assert_int_equal(ar_matrix_copy(wb, l.v[0], NULL), AR_ESIZE);
    assert_true(isnan(ar_matrix_max_abs_diff(l.v[0], ar_cview_transpose(l.v[0]))));
    /* norms agree across layouts */
    assert_close(ar_matrix_norm_fro(l.v[1]), ar_matrix_norm_fro(l.v[3]), 0.0);
    assert_close(ar_matrix_max_abs(l.v[2]), ar_cm_max_abs(&a), 0.0);
    ar_matrix_free(&a);
    ar_matrix_free(&t);
    ar_matrix_free(&t); /* a freed matrix is empty: freeing again is harmless */
    ar_matrix_free(NULL);
}

static void test_factored_every_layout(void **state)
{
    (void)state;
    layouts l;
    make_layouts(&l);
    /* F = A (M x N, so F^T G is N x N with G = A) */
    double s0[N], s1[N];
    assert_ok(ar_spectrum_svals_factored(l.v[0], l.v[0], s0, NULL));
    assert_ok(ar_spectrum_svals_factored(l.v[1], l.v[2], s1, NULL));
    for (size_t i = 0; i < N; i++)
        assert_close(s1[i], s0[i], 0.0);
    ar_cview bad = {l.colmajor, M, N, 1, 2};
    assert_int_equal(ar_spectrum_svals_factored(bad, l.v[0], s0, NULL), AR_EINVAL);
    assert_int_equal(ar_spectrum_svals_factored(l.v[0], l.v[0], NULL, NULL), AR_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constructor_rules),   cmocka_unit_test(test_spectrum_every_layout),
        cmocka_unit_test(test_svd_into_views),      cmocka_unit_test(test_gemm_every_layout),
        cmocka_unit_test(test_view_operations),     cmocka_unit_test(test_factored_every_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
