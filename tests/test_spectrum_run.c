/* The spectrum workflow on a stack (include/attnrank/spectrum_run.h): the
 * singular values of diagonal matrices are their sorted absolute diagonals,
 * each matrix's metrics equal a direct ar_rank_metrics_stored, and every
 * refusal names the matrix (and for NaN/Inf the entry).  The random layer
 * (ar_spectrum_run_random): logits have rank min(d_p, d, n), the spectra
 * are those of the layer drawn by hand (weights, then X, from one seed),
 * and every argument rule is a status with a message in option tokens. */
#include "testutil.h"

#include <math.h>
#include <string.h>
#include "attnrank/random.h"
#include "attnrank/spectrum.h"
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
        assert_int_equal(ar_cview_init(&mats[t], block + t * 12, 3, 4, 4, 1, NULL), AR_OK);
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
            assert_int_equal(ar_rank_metrics_stored(mats[t], s + t * 3, 3, &opts, &direct,
                                                    NULL), AR_OK);
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
    assert_int_equal(ar_cview_init(&v, &one, 1, 1, 1, 1, NULL), AR_OK);
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
    assert_int_equal(ar_cview_init(&mats[2], block + 24, 4, 3, 3, 1, NULL), AR_OK);
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

static ar_spectrum_random_opts random_opts(size_t n, size_t d, size_t heads)
{
    ar_spectrum_random_opts o;
    ar_spectrum_random_opts_init(&o);
    o.n = n;
    o.d = d;
    o.heads = heads;
    return o;
}

static void run_random_ok(const ar_spectrum_random_opts *o, ar_spectrum_random_result *r)
{
    ar_rank_opts rank;
    ar_rank_opts_init(&rank);
    ar_error err = {{0}};
    int rc = ar_spectrum_run_random(o, &rank, r, &err);
    if (rc != AR_OK)
        fail_msg("ar_spectrum_run_random: %s", err.msg);
}

/* Generic draws have the rank the sizes allow: min(d_p, d, n), for d_p
 * below and above d and n below and above d_p. */
static void test_random_logit_rank(void **state)
{
    (void)state;
    const size_t cases[][4] = {/* n, d, heads, head_size */
                               {40, 48, 4, 0}, {5, 16, 2, 0}, {9, 6, 3, 20}, {1, 1, 1, 0},
                               {30, 6, 2, 20}, {12, 8, 8, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ar_spectrum_random_opts o = random_opts(cases[c][0], cases[c][1], cases[c][2]);
        o.head_size = cases[c][3];
        o.seed = 3 + c;
        ar_spectrum_random_result r;
        run_random_ok(&o, &r);
        size_t dp = o.head_size ? o.head_size : o.d / o.heads;
        size_t want = dp < o.d ? dp : o.d;
        want = want < o.n ? want : o.n;
        assert_int_equal(r.head_size, dp);
        assert_int_equal(r.count, o.heads);
        assert_string_equal(r.source, "random attention logits");
        assert_true(r.bytes == 8.0 * (2.0 * o.heads * dp * o.d + o.d * o.n + o.n * o.n));
        for (size_t t = 0; t < r.count; t++) {
            assert_int_equal(r.heads[t].head, t);
            assert_int_equal(r.heads[t].k, o.n);
            assert_int_equal(r.heads[t].expected_rank, (long)want);
            assert_int_equal(r.heads[t].metrics.rank, want);
        }
        ar_spectrum_random_result_free(&r);
    }
}

/* Head k of the layer drawn by hand: weights first, then X, one stream. */
static void direct_svals(size_t n, size_t d, size_t heads, uint64_t seed, size_t k, int scores,
                         double *s)
{
    ar_rng *rng = ar_rng_alloc(seed);
    ar_heads h = {0};
    ar_matrix x = ar_matrix_empty(), m = ar_matrix_empty();
    assert_ok(ar_heads_alloc(&h, AR_HEADS_MULTI, d, heads, d / heads, NULL));
    assert_ok(ar_heads_randomize(&h, rng, NULL));
    assert_ok(ar_matrix_alloc(&x, d, n, NULL));
    assert_ok(ar_matrix_fill_gaussian(ar_matrix_view(&x), rng, 1.0, NULL));
    assert_ok(ar_matrix_alloc(&m, n, n, NULL));
    if (scores)
        assert_ok(ar_heads_scores(&h, k, ar_matrix_cview(&x), AR_AXIS_ROW, ar_matrix_view(&m),
                                  NULL));
    else
        assert_ok(ar_heads_logits(&h, k, ar_matrix_cview(&x), ar_matrix_view(&m), NULL));
    assert_ok(ar_spectrum_svals(ar_matrix_cview(&m), s, NULL));
    ar_matrix_free(&m);
    ar_matrix_free(&x);
    ar_heads_free(&h);
    ar_rng_free(rng);
}

/* The spectra are the hand-drawn layer's for two lengths n (so the
 * weights, drawn before X, are the same whatever n), the same again for
 * the same seed, and others for another seed; --head K is head K of the
 * whole layer. */
static void test_random_draws(void **state)
{
    (void)state;
    const size_t lengths[] = {3, 17};
    double want[17];
    for (size_t i = 0; i < 2; i++) {
        for (int scores = 0; scores <= 1; scores++) {
            size_t n = lengths[i];
            ar_spectrum_random_opts o = random_opts(n, 8, 2);
            o.seed = 11;
            o.one_head = 1;
            o.head = 1;
            o.of = scores ? AR_SPECTRUM_OF_SCORES : AR_SPECTRUM_OF_LOGITS;
            o.axis = AR_AXIS_ROW;
            ar_spectrum_random_result r;
            run_random_ok(&o, &r);
            assert_int_equal(r.count, 1);
            assert_int_equal(r.heads[0].head, 1);
            assert_int_equal(r.heads[0].expected_rank, scores ? -1 : (long)(n < 4 ? n : 4));
            direct_svals(n, 8, 2, 11, 1, scores, want);
            for (size_t j = 0; j < n; j++)
                assert_close(r.heads[0].s[j], want[j], 1e-12 * (1.0 + want[0]));
            ar_spectrum_random_result_free(&r);
        }
    }
    ar_spectrum_random_opts o = random_opts(12, 8, 2);
    ar_spectrum_random_result a, b, c;
    o.seed = 5;
    run_random_ok(&o, &a);
    run_random_ok(&o, &b);
    o.seed = 6;
    run_random_ok(&o, &c);
    assert_memory_equal(a.heads[1].s, b.heads[1].s, 12 * sizeof(double));
    assert_true(memcmp(a.heads[1].s, c.heads[1].s, 12 * sizeof(double)) != 0);
    assert_string_equal(a.heads[1].label, "head 1 logits (d=8, h=2, d_p=4, n=12, seed=5)");
    ar_spectrum_random_result_free(&a);
    ar_spectrum_random_result_free(&b);
    ar_spectrum_random_result_free(&c);
}

static void expect_refusal(const ar_spectrum_random_opts *o, int status, const char *text)
{
    ar_rank_opts rank;
    ar_rank_opts_init(&rank);
    ar_spectrum_random_result r;
    ar_error err = {{0}};
    assert_int_equal(ar_spectrum_run_random(o, &rank, &r, &err), status);
    if (strstr(err.msg, text) == NULL)
        fail_msg("message '%s' lacks '%s'", err.msg, text);
    assert_null(r.heads);
    ar_spectrum_random_result_free(&r);
    err.msg[0] = '\0';
    assert_int_equal(ar_spectrum_random_check(o, NULL, &err), status);
}

static void test_random_refusals(void **state)
{
    (void)state;
    ar_spectrum_random_opts o = random_opts(0, 4, 1);
    expect_refusal(&o, AR_EINVAL, "needs {opt:n=N}, {opt:d=D} and {opt:heads=H}");
    o = random_opts(4, 0, 1);
    expect_refusal(&o, AR_EINVAL, "(all >= 1)");
    o = random_opts(4, 4, 0);
    expect_refusal(&o, AR_EINVAL, "(all >= 1)");
    o = random_opts(4, 10, 3);
    expect_refusal(&o, AR_EINVAL, "{opt:heads=3} does not divide {opt:d=10}; give {opt:head-size}");
    o.head_size = 4; /* FixedMultiHead: any d_p */
    ar_spectrum_random_result r;
    run_random_ok(&o, &r);
    ar_spectrum_random_result_free(&r);
    o = random_opts(4, 4, 2);
    o.one_head = 1;
    o.head = 2;
    expect_refusal(&o, AR_EINVAL, "{opt:head=2}: heads are numbered 0..1");
    o = random_opts(4, 4, 2);
    o.of = (ar_spectrum_of)7;
    expect_refusal(&o, AR_EINVAL, "{opt:of}");
    o = random_opts(4, 4, 2);
    o.axis = (ar_axis)7;
    expect_refusal(&o, AR_EINVAL, "{opt:axis}");
    ar_spectrum_dist_opts dist;
    ar_spectrum_dist_opts_init(&dist);
    o = random_opts(4, 4, 2);
    o.distributed = &dist;
    o.of = AR_SPECTRUM_OF_SCORES;
    expect_refusal(&o, AR_EINVAL, "{flag:distributed} takes {opt:of=logits}");
    o = random_opts(4, 4, 2);
    o.max_bytes = -1.0;
    expect_refusal(&o, AR_EINVAL, "max_bytes");
    /* The estimate, 8 (2 h d_p d + d n + n^2) = 8 (32 + 16 + 16) = 512 bytes. */
    o = random_opts(4, 4, 1);
    o.max_bytes = 511.0;
    expect_refusal(&o, AR_ENOMEM, "{flag:random-attention} needs about 5.12e-07 GB of memory");
    ar_error err = {{0}};
    ar_spectrum_random_result est;
    memset(&est, 0, sizeof est);
    assert_int_equal(ar_spectrum_random_check(&o, &est, &err), AR_ENOMEM);
    assert_true(est.bytes == 512.0 && est.head_size == 4);
    o.max_bytes = 512.0;
    assert_ok(ar_spectrum_random_check(&o, NULL, NULL));
    /* Without MPI running (or built), the distributed spectrum fails with
     * its message, prefixed as the faces expect. */
    o = random_opts(4, 4, 1);
    o.distributed = &dist;
    ar_rank_opts rank;
    ar_rank_opts_init(&rank);
    err.msg[0] = '\0';
    assert_int_not_equal(ar_spectrum_run_random(&o, &rank, &r, &err), AR_OK);
    assert_true(strncmp(err.msg, "distributed logits: ", 20) == 0);
    ar_spectrum_random_result_free(&r);
    assert_int_equal(ar_spectrum_run_random(NULL, &rank, &r, NULL), AR_EINVAL);
    ar_spectrum_random_result_free(&r);
    assert_int_equal(ar_spectrum_run_random(&o, NULL, &r, NULL), AR_EINVAL);
    ar_spectrum_random_result_free(&r);
    assert_int_equal(ar_spectrum_run_random(&o, &rank, NULL, NULL), AR_EINVAL);
    assert_int_equal(ar_spectrum_random_check(NULL, NULL, NULL), AR_EINVAL);
    ar_spectrum_random_result_free(NULL);
}

/* The rank options' rules (ar_rank_opts_check) refuse a stack and a
 * random layer before any data is read: atol < 0, energy 0 and just above
 * 1, a given rtol infinite; energy 1 and atol 0 accepted. */
static void test_rank_option_refusals(void **state)
{
    (void)state;
    const double d[3][3] = {{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}};
    double block[36], s[9];
    ar_cview mats[3];
    ar_rank_metrics m[3];
    ar_rank_opts opts;
    ar_error err = {{0}};
    fill_diagonals(block, mats, d);
    block[0] = NAN; /* the options are refused first */
    ar_rank_opts_init(&opts);
    opts.atol = -1.0;
    assert_int_equal(ar_spectrum_run_stack(mats, 3, &opts, 0, s, m, NULL, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:atol}: must be >= 0, got -1");
    ar_rank_opts_init(&opts);
    opts.energy_fraction = 0.0;
    assert_int_equal(ar_spectrum_run_stack(mats, 3, &opts, 0, s, m, NULL, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:energy}: must be in (0, 1], got 0");
    opts.energy_fraction = 1.5;
    assert_int_equal(ar_spectrum_run_stack(mats, 3, &opts, 0, s, m, NULL, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:energy}: must be in (0, 1], got 1.5");
    ar_rank_opts_init(&opts);
    opts.rtol = INFINITY;
    assert_int_equal(ar_spectrum_run_stack(mats, 3, &opts, 0, s, m, NULL, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:rtol}: must be finite, got inf");
    fill_diagonals(block, mats, d);
    ar_rank_opts_init(&opts);
    opts.energy_fraction = 1.0;
    opts.atol = 0.0;
    assert_int_equal(ar_spectrum_run_stack(mats, 3, &opts, 0, s, m, NULL, &err), AR_OK);

    ar_spectrum_random_opts o = random_opts(4, 4, 1);
    ar_spectrum_random_result r;
    ar_rank_opts_init(&opts);
    opts.energy_fraction = 1.0 + 1e-9;
    assert_int_equal(ar_spectrum_run_random(&o, &opts, &r, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:energy}: must be in (0, 1], got 1");
    ar_spectrum_random_result_free(&r);
    o.n = 0; /* the sizes' rules come first */
    assert_int_equal(ar_spectrum_run_random(&o, &opts, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "needs {opt:n=N}"));
    ar_spectrum_random_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diagonal_stack),
        cmocka_unit_test(test_edge_counts),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_random_logit_rank),
        cmocka_unit_test(test_random_draws),
        cmocka_unit_test(test_random_refusals),
        cmocka_unit_test(test_rank_option_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
