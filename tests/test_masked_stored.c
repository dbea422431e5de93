/* The storage rule of the masked analysis (docs/theory/masked-attention.md,
 * sec. 4, "Maps stored in low precision"): causal maps of planted heads of
 * size k rounded to bfloat16 and float16 get an interval that holds k, an
 * exact answer only with a certificate whose map rounds to the stored one
 * (checked here by an independent forward softmax of the certificate's
 * weights, entry by entry against the rounding half-width), and the rule
 * applies only where it should (float16/bfloat16, no tau/accuracy given,
 * no smoothing). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/attnrank.h"
#include "attnrank/storage.h"
#include "core/matrix_internal.h"
#include "core/random_internal.h"

/* x rounded to nearest (ties to even) with p significant bits, smallest
 * normal exponent emin: float16 (11, -14) and bfloat16 (8, -126). */
static double round_sig(double x, int p, int emin)
{
    if (x == 0.0)
        return 0.0;
    int e;
    frexp(x, &e);
    e -= 1;
    if (e < emin)
        e = emin;
    double q = ldexp(1.0, e - p + 1);
    return nearbyint(x / q) * q;
}

static double store(double x, ar_precision prec)
{
    switch (prec) {
    case AR_PREC_F16: return round_sig(x, 11, -14);
    case AR_PREC_BF16: return round_sig((double)(float)x, 8, -126);
    default: return (double)(float)x;
    }
}

/* Rows-as-queries causal softmax of S = A B^T / sqrt(k), A, B n x k
 * Gaussian, rounded to prec. */
static ar_matrix planted(size_t n, size_t k, uint64_t seed, ar_precision prec)
{
    ar_matrix a = ar_matrix_empty(), b = ar_matrix_empty(), s = ar_matrix_empty(),
              p = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&a, n, k, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&b, n, k, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&s, n, n, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&p, n, n, NULL), AR_OK);
    ar_rng *rng = ar_rng_alloc(seed);
    ar_cm_fill_gaussian(&a, rng, 1.0);
    ar_cm_fill_gaussian(&b, rng, 1.0);
    ar_rng_free(rng);
    assert_int_equal(ar_cm_gemm(0, 1, 1.0 / sqrt((double)k), &a, &b, 0.0, &s), AR_OK);
    for (size_t i = 0; i < n; i++) {
        double top = -INFINITY, z = 0.0;
        for (size_t j = 0; j <= i; j++)
            top = fmax(top, AR_AT(&s, i, j));
        for (size_t j = 0; j <= i; j++)
            z += exp(AR_AT(&s, i, j) - top);
        for (size_t j = 0; j < n; j++)
            AR_AT(&p, i, j) = j <= i ? store(exp(AR_AT(&s, i, j) - top) / z, prec) : 0.0;
    }
    ar_matrix_free(&a);
    ar_matrix_free(&b);
    ar_matrix_free(&s);
    return p;
}

/* The certificate's map, recomputed from its weights (X = I, rows as
 * queries: S = W_q^T W_k / sqrt(h)), against the stored map: the largest
 * error in units of the entry's half-width, and exact zeros off the mask. */
static double forward_ratio(const ar_certificate *c, const ar_matrix *p, ar_precision prec)
{
    size_t n = p->rows, h = c->head_size;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double *row = malloc((i + 1) * sizeof *row), top = -INFINITY, z = 0.0;
        for (size_t j = 0; j <= i; j++) {
            double v = 0.0;
            for (size_t t = 0; t < h; t++)
                v += AR_AT(&c->wq, t, i) * AR_AT(&c->wk, t, j);
            row[j] = v / sqrt((double)h);
            top = fmax(top, row[j]);
        }
        for (size_t j = 0; j <= i; j++)
            z += exp(row[j] - top);
        for (size_t j = 0; j <= i; j++) {
            double q = exp(row[j] - top) / z, stored = AR_AT(p, i, j);
            double r = fabs(q - stored) / ar_storage_half_width(stored, prec);
            worst = r > worst ? r : worst;
        }
        free(row);
    }
    return worst;
}

typedef struct outcome {
    ar_masked_result res;
    double cert_ratio;   /* recomputed here; -1 without a certificate */
    double lib_ratio;    /* the library's rounding_ratio */
} outcome;

static outcome analyse(const ar_matrix *p, ar_precision prec, double tau, double smooth)
{
    ar_masked_workspace *ws = NULL;
    assert_int_equal(ar_masked_workspace_alloc(&ws, p->rows, NULL), AR_OK);
    ar_masked_opts o;
    ar_masked_opts_init(&o);
    o.precision = prec;
    o.tau = tau;
    o.smooth = smooth;
    ar_mask m;
    ar_error err = {{0}};
    assert_int_equal(ar_mask_parse("causal", &m, &err), AR_OK);
    outcome out;
    memset(&out, 0, sizeof out);
    int rc = ar_masked_analyze(ws, ar_matrix_cview(p), NULL, &m, &o, &out.res, &err);
    if (rc != AR_OK)
        fail_msg("%s", err.msg);
    out.cert_ratio = -1.0;
    if (out.res.certified) {
        ar_certificate c;
        assert_int_equal(ar_masked_certificate(ws, AR_HEAD_SIZE_MIN, &c, &err), AR_OK);
        out.cert_ratio = forward_ratio(&c, p, prec);
        out.lib_ratio = c.rounding_ratio;
        ar_certificate_free(&c);
    }
    out.res.mask = NULL;
    ar_mask_free(&m);
    ar_masked_workspace_free(ws);
    return out;
}

/* Planted heads at n = 64 in both types: the interval holds k, the
 * certificate's map rounds to the stored one (ratio <= 1, recomputed
 * independently), and "exact" only with both. */
static void test_planted_interval(void **state)
{
    (void)state;
    const size_t n = 64, ks[] = {8, 16};
    const ar_precision ps[] = {AR_PREC_BF16, AR_PREC_F16};
    size_t exact = 0, cases = 0;
    for (size_t a = 0; a < 2; a++)
        for (size_t b = 0; b < 2; b++)
            for (uint64_t seed = 1; seed <= 3; seed++) {
                ar_matrix p = planted(n, ks[a], seed, ps[b]);
                outcome o = analyse(&p, ps[b], -1.0, 0.0);
                const ar_masked_result *r = &o.res;
                assert_true(r->storage_rule);
                assert_true(r->lower <= ks[a]);
                assert_true(r->certified);
                assert_true(ks[a] <= r->upper);
                assert_true(r->lower <= r->min_head_size && r->min_head_size <= r->upper);
                assert_true(o.cert_ratio <= 1.0);
                assert_true(fabs(o.cert_ratio - o.lib_ratio) <= 1e-6 * (1.0 + o.lib_ratio));
                assert_true(r->rounding_ratio <= 1.0);
                assert_true(r->log_rounding > 0.0 && r->log_rounding <= log(2.0));
                assert_int_equal(r->exact, r->lower == r->upper);
                if (r->exact) {
                    assert_int_equal(r->min_head_size, ks[a]);
                    exact++;
                }
                cases++;
                ar_matrix_free(&p);
            }
    /* the default estimate and the certificate meet on most of them */
    assert_true(exact * 4 >= cases * 3);
}

/* The reported failure: a size-16 head at n = 64 in bfloat16 read "exact 13"
 * under the tolerance rule (tau of several nats); the storage rule may not
 * call anything below 16 certain, and its tau is a noise level, not nats. */
static void test_no_exact_below_the_head(void **state)
{
    (void)state;
    ar_matrix p = planted(64, 16, 7, AR_PREC_BF16);
    outcome o = analyse(&p, AR_PREC_BF16, -1.0, 0.0);
    assert_true(o.res.storage_rule);
    assert_true(o.res.upper >= 16);
    assert_true(o.res.tau < 0.5);
    assert_true(!o.res.exact || o.res.min_head_size == 16);
    ar_matrix_free(&p);
}

/* Where the rule does not apply: float32, a given tau, smoothing. */
static void test_rule_scope(void **state)
{
    (void)state;
    ar_matrix p32 = planted(32, 4, 2, AR_PREC_F32);
    assert_false(analyse(&p32, AR_PREC_F32, -1.0, 0.0).res.storage_rule);
    ar_matrix_free(&p32);
    ar_matrix p = planted(32, 4, 2, AR_PREC_F16);
    assert_false(analyse(&p, AR_PREC_F16, 1e-3, 0.0).res.storage_rule);
    assert_false(analyse(&p, AR_PREC_F16, -1.0, 1e-9).res.storage_rule);
    outcome o = analyse(&p, AR_PREC_F16, -1.0, 0.0);
    assert_true(o.res.storage_rule);
    assert_true(o.res.lower <= 4 && 4 <= o.res.upper);
    ar_matrix_free(&p);
}

/* Edge sizes: n = 1 (one key: head size 0), n = 2 and 3. */
static void test_edge_sizes(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 3; n++) {
        ar_matrix p = planted(n, 1, 5, AR_PREC_BF16);
        outcome o = analyse(&p, AR_PREC_BF16, -1.0, 0.0);
        assert_true(o.res.storage_rule);
        assert_true(o.res.lower <= o.res.upper && o.res.upper <= n);
        if (n == 1)
            assert_int_equal(o.res.upper, 0);
        ar_matrix_free(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted_interval),
        cmocka_unit_test(test_no_exact_below_the_head),
        cmocka_unit_test(test_rule_scope),
        cmocka_unit_test(test_edge_sizes),
    };
    return cmocka_run_group_tests_name("masked_stored", tests, NULL, NULL);
}
