/* The spectrum workflow on a stack (include/attnrank/spectrum_run.h): the
 * singular values of diagonal matrices are their sorted absolute diagonals,
 * each matrix's metrics equal a direct ar_rank_metrics_stored, and every
 * refusal names the matrix (and for NaN/Inf the entry). */
#include "testutil.h"

#include <math.h>
#include <string.h>
#include "attnrank/spectrum_run.h"

/* Field by field: the struct has padding. */
static void assert_metrics_equal(const ar_rank_metrics *a, const ar_rank_metrics *b)
{
    assert_int_equal(a->m, b->m);
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->rank, b->rank);
    assert_int_equal(a->energy_rank, b->energy_rank);
    assert_int_equal(a->certain_rank, b->certain_rank);
    assert_int_equal(a->rule, b->rule);
    assert_int_equal(a->precision, b->precision);
    assert_true(a->threshold == b->threshold && a->rtol == b->rtol && a->atol == b->atol);
    assert_true(a->stable_rank == b->stable_rank);
    assert_true(a->roy_vetterli_rank == b->roy_vetterli_rank);
    assert_true(a->participation_ratio == b->participation_ratio);
    assert_true(a->nuclear_rank == b->nuclear_rank);
    assert_true(a->certain_threshold == b->certain_threshold);
}

/* Three 3 x 4 matrices, diagonal with entries d[t][0..2], in one block. */
static void fill_diagonals(double *block, ar_cview *mats, const double d[3][3])
{
    memset(block, 0, 3 * 12 * sizeof *block);
    for (size_t t = 0; t < 3; t++) {
        for (size_t i = 0; i < 3; i++)
            block[t * 12 + i * 4 + i] = d[t][i];
        assert_int_equal(ar_cview_init(&mats[t], block + t * 12, 3, 4, 4, 1), AR_OK);
    }
}

static void test_diagonal_stack(void **state)
{
    (void)state;
    const double d[3][3] = {{3.0, -1.0, 2.0}, {0.0, 0.0, 5.0}, {1.0, 1.0, 1.0}};
    const double want[3][3] = {{3.0, 2.0, 1.0}, {5.0, 0.0, 0.0}, {1.0, 1.0, 1.0}};
    const size_t ranks[3] = {3, 1, 3};
    double block[36], s[9];
    ar_cview mats[3];
    ar_rank_metrics m[3];
    fill_diagonals(block, mats, d);
    ar_rank_opts opts;
    ar_rank_opts_init(&opts);
    for (size_t threads = 0; threads <= 2; threads++) {
        size_t failed = 99;
        ar_error err;
        assert_int_equal(ar_spectrum_run_stack(mats, 3, &opts, threads, s, m, &failed, &err), AR_OK);
        for (size_t t = 0; t < 3; t++) {
            for (size_t i = 0; i < 3; i++)
                assert_true(fabs(s[t * 3 + i] - want[t][i]) <= 1e-14 * want[t][0]);
            assert_int_equal(m[t].rank, ranks[t]);
            ar_rank_metrics direct;
            assert_int_equal(ar_rank_metrics_stored(mats[t], s + t * 3, 3, &opts, &direct), AR_OK);
            assert_metrics_equal(&direct, &m[t]);
        }
    }
}

/* count 0 does nothing; one matrix is a stack of one. */
static void test_edge_counts(void **state)
{
    (void)state;
    ar_rank_opts opts;
    ar_rank_opts_init(&opts);
    ar_error err;
    size_t failed = 7;
    assert_int_equal(ar_spectrum_run_stack(NULL, 0, &opts, 0, NULL, NULL, &failed, &err), AR_OK);
    assert_int_equal(failed, 0);
    double one = -4.0, s;
    ar_cview v;
    assert_int_equal(ar_cview_init(&v, &one, 1, 1, 1, 1), AR_OK);
    ar_rank_metrics m;
    assert_int_equal(ar_spectrum_run_stack(&v, 1, &opts, 1, &s, &m, NULL, &err), AR_OK);
    assert_true(s == 4.0);
    assert_int_equal(m.rank, 1);
}

static void test_refusals(void **state)
{
    (void)state;
    const double d[3][3] = {{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}};
    double block[36], s[9];
    ar_cview mats[3];
    ar_rank_metrics m[3];
    ar_rank_opts opts;
    ar_rank_opts_init(&opts);
    ar_error err;
    size_t failed = 0;

    fill_diagonals(block, mats, d);
    block[12 + 1 * 4 + 2] = NAN; /* matrix 1, row 1, column 2 */
    assert_int_equal(ar_spectrum_run_stack(mats, 3, &opts, 0, s, m, &failed, &err),
                     AR_ENONFINITE);
    assert_int_equal(failed, 1);
    assert_string_equal(err.msg, "non-finite value nan at row 1, column 2");

    fill_diagonals(block, mats, d);
    block[24] = INFINITY;
    assert_int_equal(ar_spectrum_run_stack(mats, 3, &opts, 0, s, m, &failed, &err),
                     AR_ENONFINITE);
    assert_int_equal(failed, 2);

    fill_diagonals(block, mats, d);
    assert_int_equal(ar_cview_init(&mats[2], block + 24, 4, 3, 3, 1), AR_OK);
    assert_int_equal(ar_spectrum_run_stack(mats, 3, &opts, 0, s, m, &failed, &err), AR_ESIZE);
    assert_int_equal(failed, 2);
    assert_string_equal(err.msg, "matrix 2 is 4 x 3, the first 3 x 4");

    ar_cview empty = {0};
    empty.data = block;
    empty.row_stride = empty.col_stride = 1;
    assert_int_equal(ar_spectrum_run_stack(&empty, 1, &opts, 0, s, m, &failed, &err), AR_EINVAL);
    assert_string_equal(err.msg, "empty matrix");

    fill_diagonals(block, mats, d);
    assert_int_equal(ar_spectrum_run_stack(mats, 3, NULL, 0, s, m, &failed, &err), AR_EINVAL);
    assert_int_equal(ar_spectrum_run_stack(mats, 3, &opts, 0, NULL, m, &failed, &err), AR_EINVAL);
    assert_int_equal(ar_spectrum_run_stack(mats, 3, &opts, 0, s, NULL, &failed, &err), AR_EINVAL);
    assert_int_equal(ar_spectrum_run_stack(NULL, 3, &opts, 0, s, m, &failed, &err), AR_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diagonal_stack),
        cmocka_unit_test(test_edge_counts),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
