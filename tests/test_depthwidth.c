/* Tests of the depthwidth module: the allocation numbers the law implies
 * (docs/theory/depth-width.md; within 2%), inverse consistency, verdicts, the GSL refit against closed
 * forms, CSV parsing and every error path. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attnrank/attnrank.h"

static int within(double x, double want, double rel)
{
    return fabs(x - want) <= rel * fabs(want);
}

static void test_transition_widths(void **state)
{
    (void)state;
    ar_dw_law law = ar_dw_law_paper();
    const double depth[] = {6, 12, 24, 48, 95};
    const double width[] = {215, 300, 585, 2215, 30000};
    for (size_t i = 0; i < 5; i++) {
        double d = 0.0, l = 0.0;
        assert_int_equal(ar_dw_transition_d(&law, depth[i], &d, NULL), AR_OK);
        assert_true(within(d, width[i], 0.02));
        /* and back */
        assert_int_equal(ar_dw_transition_layers(&law, d, &l, NULL), AR_OK);
        assert_true(fabs(l - depth[i]) < 1e-9);
    }
    /* L = 95 is ~1.0T parameters */
    double d95;
    ar_dw_transition_d(&law, 95, &d95, NULL);
    assert_true(within(ar_dw_params(&law, 95, d95), 1.0e12, 0.05));
    /* narrow widths lie past the transition at every depth */
    double l = 0.0;
    assert_int_equal(ar_dw_transition_layers(&law, 100.0, &l, NULL), AR_OK);
    assert_true(l < 0.0);
}

static void test_optimal_allocation(void **state)
{
    (void)state;
    ar_dw_law law = ar_dw_law_paper();
    ar_dw_optimum o;
    assert_int_equal(ar_dw_optimal(&law, 175e9, &o, NULL), AR_OK);
    assert_true(within(o.layers, 80.0, 0.02));
    assert_true(within(o.d, 13500.0, 0.02));
    /* the optimum sits on the law and spends the budget */
    assert_true(within(ar_dw_params(&law, o.layers, o.d), 175e9, 1e-10));
    assert_true(fabs(log(o.d) - (law.intercept + law.slope * o.layers)) < 1e-12);
    assert_true(fabs(o.l_th - log(o.d) / log(3.0)) < 1e-12);
    assert_int_equal(ar_dw_optimal(&law, 1e12, &o, NULL), AR_OK);
    assert_true(within(o.d, 30000.0, 0.02));
    assert_true(within(o.layers, 95.0, 0.02));
    /* monotone in the budget */
    ar_dw_optimum small, big;
    ar_dw_optimal(&law, 1e9, &small, NULL);
    ar_dw_optimal(&law, 1e10, &big, NULL);
    assert_true(small.layers < big.layers && small.d < big.d);
    assert_true(o.params == 1e12);
}

static void test_verdicts(void **state)
{
    (void)state;
    ar_dw_law law = ar_dw_law_paper();
    ar_dw_verdict v;
    /* GPT-3: too deep for its size, and not within 15% of the optimal depth */
    assert_int_equal(ar_dw_verdict_of(&law, 96, 12288, -1, &v, NULL), AR_OK);
    assert_false(v.depth_efficient);
    assert_false(v.near_optimal);
    assert_string_equal(ar_dw_verdict_name(&v), "depth-inefficient");
    assert_true(within(v.transition_layers, 78.9, 0.01));
    assert_true(within(v.optimal_layers, 80.0, 0.02));
    assert_true(v.depth_ratio > 1.15);
    assert_true(v.tolerance == AR_DW_DEFAULT_TOLERANCE);
    assert_true(within(v.params, 12.0 * 96 * 12288.0 * 12288.0, 1e-12));
    /* the 1T optimum, rounded to integers: depth-efficient or on the line, near optimal */
    ar_dw_optimum o;
    ar_dw_optimal(&law, 1e12, &o, NULL);
    assert_int_equal(ar_dw_verdict_of(&law, 95, 30000, -1, &v, NULL), AR_OK);
    assert_true(v.near_optimal);
    /* shallow and wide: depth-efficient but far from optimal */
    assert_int_equal(ar_dw_verdict_of(&law, 12, 4096, 0.15, &v, NULL), AR_OK);
    assert_true(v.depth_efficient);
    assert_false(v.near_optimal);
    assert_string_equal(ar_dw_verdict_name(&v), "depth-efficient");
    /* a looser tolerance accepts GPT-3 */
    assert_int_equal(ar_dw_verdict_of(&law, 96, 12288, 0.25, &v, NULL), AR_OK);
    assert_true(v.near_optimal);
    assert_string_equal(ar_dw_verdict_name(NULL), "unknown");
}

static void test_law_errors(void **state)
{
    (void)state;
    ar_dw_law law = ar_dw_law_paper();
    double x;
    ar_dw_optimum o;
    ar_dw_verdict v;
    assert_int_equal(ar_dw_transition_d(&law, 6, NULL, NULL), AR_EINVAL);
    assert_int_equal(ar_dw_transition_d(&law, -1, &x, NULL), AR_EINVAL);
    assert_int_equal(ar_dw_transition_layers(&law, 0, &x, NULL), AR_EINVAL);
    assert_int_equal(ar_dw_optimal(&law, 0, &o, NULL), AR_EINVAL);
    assert_int_equal(ar_dw_optimal(&law, NAN, &o, NULL), AR_EINVAL);
    assert_int_equal(ar_dw_verdict_of(&law, 0, 100, -1, &v, NULL), AR_EINVAL);
    assert_int_equal(ar_dw_verdict_of(&law, 10, -3, -1, &v, NULL), AR_EINVAL);
    ar_dw_law flat = law;
    flat.slope = 0.0;
    assert_int_equal(ar_dw_transition_layers(&flat, 100, &x, NULL), AR_EDOMAIN);
    assert_int_equal(ar_dw_optimal(&flat, 1e9, &o, NULL), AR_EDOMAIN);
    ar_dw_law bad = law;
    bad.params_coeff = -1;
    assert_int_equal(ar_dw_transition_d(&bad, 6, &x, NULL), AR_EINVAL);
    assert_true(isnan(ar_dw_params(&bad, 1, 1)));
    /* a budget too small for any depth >= 1e-9 */
    assert_int_equal(ar_dw_optimal(&law, 1e-8, &o, NULL), AR_EDOMAIN);
    assert_true(isnan(ar_dw_l_th(0)));
}

/* Exact data on a line: the fit recovers it. */
static void test_fit_exact_line(void **state)
{
    (void)state;
    double dep[6] = {6, 12, 18, 24, 36, 48}, wid[6], err[6];
    for (int i = 0; i < 6; i++) {
        wid[i] = exp(5.039 + 0.0555 * dep[i]);
        err[i] = 0.05 * wid[i];
    }
    ar_dw_fit f;
    assert_int_equal(ar_dw_fit_points(dep, wid, NULL, 6, &f, NULL), AR_OK);
    assert_true(fabs(f.slope - 0.0555) < 1e-12 && fabs(f.intercept - 5.039) < 1e-10);
    assert_true(fabs(f.r2 - 1.0) < 1e-12 && f.chi2 < 1e-20);
    assert_false(f.weighted);
    assert_int_equal(ar_dw_fit_points(dep, wid, err, 6, &f, NULL), AR_OK);
    assert_true(f.weighted);
    assert_true(fabs(f.slope - 0.0555) < 1e-12);
    /* absolute errors: sigma(ln w) = 0.05 everywhere -> slope error =
     * 0.05 / sqrt(sum (x - xbar)^2) */
    double xbar = 0, sxx = 0;
    for (int i = 0; i < 6; i++)
        xbar += dep[i] / 6;
    for (int i = 0; i < 6; i++)
        sxx += (dep[i] - xbar) * (dep[i] - xbar);
    assert_true(fabs(f.slope_err - 0.05 / sqrt(sxx)) < 1e-12);
}

/* Noisy points: compare with the closed-form weighted least squares. */
static void test_fit_weighted_closed_form(void **state)
{
    (void)state;
    double dep[5] = {4, 9, 17, 30, 41};
    double wid[5] = {190, 260, 420, 1010, 1900};
    double err[5] = {12, 30, 25, 90, 300};
    double S = 0, Sx = 0, Sy = 0, Sxx = 0, Sxy = 0;
    for (int i = 0; i < 5; i++) {
        double s = err[i] / wid[i], w = 1 / (s * s), y = log(wid[i]);
        S += w;
        Sx += w * dep[i];
        Sy += w * y;
        Sxx += w * dep[i] * dep[i];
        Sxy += w * dep[i] * y;
    }
    double D = S * Sxx - Sx * Sx;
    double b = (S * Sxy - Sx * Sy) / D, a = (Sxx * Sy - Sx * Sxy) / D;
    double chi2 = 0;
    for (int i = 0; i < 5; i++) {
        double s = err[i] / wid[i], r = (log(wid[i]) - a - b * dep[i]) / s;
        chi2 += r * r;
    }
    ar_dw_fit f;
    assert_int_equal(ar_dw_fit_points(dep, wid, err, 5, &f, NULL), AR_OK);
    assert_true(fabs(f.slope - b) < 1e-10 * fabs(b));
    assert_true(fabs(f.intercept - a) < 1e-10 * fabs(a));
    assert_true(fabs(f.slope_err - sqrt(S / D)) < 1e-10 * sqrt(S / D));
    assert_true(fabs(f.intercept_err - sqrt(Sxx / D)) < 1e-10 * sqrt(Sxx / D));
    assert_true(fabs(f.chi2 - chi2) < 1e-9 * chi2);
    assert_true(fabs(f.chi2_red - chi2 / 3) < 1e-9 * chi2);
    assert_true(f.r2 > 0.9 && f.r2 < 1.0);
    /* two points: a line through both, chi2_red undefined */
    assert_int_equal(ar_dw_fit_points(dep, wid, NULL, 2, &f, NULL), AR_OK);
    assert_true(isnan(f.chi2_red));
}

static void test_fit_errors(void **state)
{
    (void)state;
    double dep[3] = {6, 6, 6}, wid[3] = {200, 300, 400}, err[3] = {1, 0, 1};
    ar_dw_fit f;
    ar_error e = {{0}};
    assert_int_equal(ar_dw_fit_points(dep, wid, NULL, 3, &f, &e), AR_EDOMAIN);
    assert_non_null(strstr(e.msg, "depths"));
    double dep2[3] = {6, 12, 24};
    assert_int_equal(ar_dw_fit_points(dep2, wid, err, 3, &f, &e), AR_EDOMAIN);
    assert_non_null(strstr(e.msg, "error"));
    double wneg[3] = {200, -1, 300};
    assert_int_equal(ar_dw_fit_points(dep2, wneg, NULL, 3, &f, &e), AR_EDOMAIN);
    assert_int_equal(ar_dw_fit_points(dep2, wid, NULL, 1, &f, &e), AR_EINVAL);
    assert_int_equal(ar_dw_fit_points(NULL, wid, NULL, 3, &f, &e), AR_EINVAL);
}

/* Points come as a table (the caller reads the CSV): 2 or 3 columns, any
 * layout; the CSV reader refuses malformed text before the fit sees it. */
static void test_fit_table(void **state)
{
    (void)state;
    ar_array arr = {0};
    ar_error e = {{0}};
    ar_dw_fit f, g;
    const char *t1 = "# measured\ndepth,width\n6,215\n12, 300\n\n24,585\r\n";
    assert_int_equal(ar_csv_parse(t1, strlen(t1), "t1", &arr, &e), AR_OK);
    assert_int_equal(ar_dw_fit_table(ar_array_slice(&arr, 0), &f, &e), AR_OK);
    assert_int_equal(f.npoints, 3);
    assert_false(f.weighted);
    double dep[3] = {6, 12, 24}, wid[3] = {215, 300, 585};
    assert_int_equal(ar_dw_fit_points(dep, wid, NULL, 3, &g, &e), AR_OK);
    assert_memory_equal(&f, &g, sizeof f);
    ar_array_free(&arr);
    /* the same points row-major with padding, and column-major with padding */
    double rm[3 * 5] = {6, 215, 10, -1, -1, 12, 300, 12, -1, -1, 24, 585, 20, -1, -1};
    double cm[7 * 3] = {6, 12, 24, -1, -1, -1, -1, 215, 300, 585, -1, -1, -1, -1,
                        10, 12, 20, -1, -1, -1, -1};
    double err3[3] = {10, 12, 20};
    ar_cview v;
    assert_int_equal(ar_dw_fit_points(dep, wid, err3, 3, &g, &e), AR_OK);
    assert_int_equal(ar_cview_init_ld(&v, rm, 3, 3, 5, AR_ROW_MAJOR, NULL), AR_OK);
    assert_int_equal(ar_dw_fit_table(v, &f, &e), AR_OK);
    assert_true(f.weighted);
    assert_memory_equal(&f, &g, sizeof f);
    assert_int_equal(ar_cview_init_ld(&v, cm, 3, 3, 7, AR_COL_MAJOR, NULL), AR_OK);
    assert_int_equal(ar_dw_fit_table(v, &f, &e), AR_OK);
    assert_memory_equal(&f, &g, sizeof f);
    /* 2 columns of the same table: unweighted */
    assert_int_equal(ar_cview_init_ld(&v, cm, 3, 2, 7, AR_COL_MAJOR, NULL), AR_OK);
    assert_int_equal(ar_dw_fit_table(v, &f, &e), AR_OK);
    assert_false(f.weighted);
    /* an invalid view (column stride below the rows) and wrong column counts */
    ar_cview bad = {cm, 3, 3, 1, 2};
    assert_int_equal(ar_dw_fit_table(bad, &f, &e), AR_EINVAL);
    assert_int_equal(ar_dw_fit_table(v, NULL, &e), AR_EINVAL);
    assert_int_equal(ar_cview_init_ld(&v, cm, 3, 1, 7, AR_COL_MAJOR, NULL), AR_OK);
    assert_int_equal(ar_dw_fit_table(v, &f, &e), AR_ESIZE);
    assert_non_null(strstr(e.msg, "expected columns"));
    /* malformed text: refused by the reader or, for a column count, by the fit */
    const char *bad_text[] = {"6,215\n12,300,5\n", "6,215\n12,abc\n", "6\n", "",
                              "# only comments\n", "1,2,3,4\n", "depth,width\nx,y\n"};
    for (size_t i = 0; i < sizeof bad_text / sizeof bad_text[0]; i++) {
        e.msg[0] = '\0';
        int rc = ar_csv_parse(bad_text[i], strlen(bad_text[i]), "bad", &arr, &e);
        if (rc == AR_OK)
            rc = ar_dw_fit_table(ar_array_slice(&arr, 0), &f, &e);
        else
            assert_non_null(strstr(e.msg, "bad"));
        assert_int_not_equal(rc, AR_OK);
        ar_array_free(&arr);
    }
    /* a file round trip through the CSV reader */
    char path[] = "/tmp/test_depthwidth_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    fputs("depth,width,error\n6,215,5\n12,300,5\n24,585,10\n48,2215,40\n", fp);
    fclose(fp);
    assert_int_equal(ar_csv_read(path, &arr, &e), AR_OK);
    assert_int_equal(ar_dw_fit_table(ar_array_slice(&arr, 0), &f, &e), AR_OK);
    assert_int_equal(f.npoints, 4);
    /* these are the law's own values (rounded): the refit finds it again */
    assert_true(fabs(f.slope - 0.0555) < 0.001 && fabs(f.intercept - 5.039) < 0.01);
    ar_array_free(&arr);
    remove(path);
}

static void test_null_law_is_paper(void **state)
{
    (void)state;
    ar_dw_law paper = ar_dw_law_paper();
    double a, b;
    assert_int_equal(ar_dw_transition_d(NULL, 24.0, &a, NULL), AR_OK);
    assert_int_equal(ar_dw_transition_d(&paper, 24.0, &b, NULL), AR_OK);
    assert_true(a == b);
    assert_int_equal(ar_dw_transition_layers(NULL, 768.0, &a, NULL), AR_OK);
    assert_int_equal(ar_dw_transition_layers(&paper, 768.0, &b, NULL), AR_OK);
    assert_true(a == b);
    assert_true(ar_dw_params(NULL, 12.0, 768.0) == ar_dw_params(&paper, 12.0, 768.0));
    ar_dw_optimum o1, o2;
    assert_int_equal(ar_dw_optimal(NULL, 175e9, &o1, NULL), AR_OK);
    assert_int_equal(ar_dw_optimal(&paper, 175e9, &o2, NULL), AR_OK);
    assert_true(o1.layers == o2.layers && o1.law.slope == paper.slope);
    ar_dw_verdict v1, v2;
    assert_int_equal(ar_dw_verdict_of(NULL, 96, 12288, -1, &v1, NULL), AR_OK);
    assert_int_equal(ar_dw_verdict_of(&paper, 96, 12288, -1, &v2, NULL), AR_OK);
    assert_memory_equal(&v1, &v2, sizeof v1);
}

/* The embedding crossover: the law's transition depth of min(d, r), width
 * above r capped, the depth judged against the crossover. */
static void test_embedding_crossover(void **state)
{
    (void)state;
    ar_dw_law law = {.intercept = 1.25, .slope = 0.5, .params_coeff = 12.0};
    ar_dw_embedding e;
    /* d = e^3.25 > r = e^2.25: effective r, crossover (2.25 - 1.25) / 0.5 = 2. */
    assert_int_equal(ar_dw_embedding_of(&law, exp(3.25), exp(2.25), 2.0, &e, NULL), AR_OK);
    assert_true(e.width_capped);
    assert_true(fabs(e.effective_d - exp(2.25)) < 1e-12);
    assert_true(fabs(e.crossover_layers - 2.0) < 1e-12);
    assert_true(fabs(e.l_th - 2.25 / log(3.0)) < 1e-12);
    assert_true(e.have_layers && e.depth_efficient); /* 2 <= 2 */
    assert_int_equal(ar_dw_embedding_of(&law, exp(3.25), exp(2.25), 2.5, &e, NULL), AR_OK);
    assert_false(e.depth_efficient);
    /* r >= d: the width's own transition depth, nothing capped. */
    double plain;
    assert_int_equal(ar_dw_transition_layers(&law, 37.0, &plain, NULL), AR_OK);
    assert_int_equal(ar_dw_embedding_of(&law, 37.0, 37.0, NAN, &e, NULL), AR_OK);
    assert_false(e.width_capped);
    assert_false(e.have_layers);
    assert_true(e.crossover_layers == plain);
    assert_int_equal(ar_dw_embedding_of(NULL, 37.0, 1.0, NAN, &e, NULL), AR_OK);
    assert_true(e.effective_d == 1.0);
    assert_int_equal(ar_dw_embedding_of(&law, 37.0, 0.0, NAN, &e, NULL), AR_EINVAL);
    assert_int_equal(ar_dw_embedding_of(&law, 0.0, 4.0, NAN, &e, NULL), AR_EINVAL);
    assert_int_equal(ar_dw_embedding_of(&law, 37.0, INFINITY, NAN, &e, NULL), AR_EINVAL);
    assert_int_equal(ar_dw_embedding_of(&law, 37.0, 4.0, INFINITY, &e, NULL), AR_EINVAL);
    assert_int_equal(ar_dw_embedding_of(&law, 37.0, 4.0, NAN, NULL, NULL), AR_EINVAL);
    ar_dw_law flat = {.intercept = 1.0, .slope = 0.0, .params_coeff = 12.0};
    assert_int_equal(ar_dw_embedding_of(&flat, 37.0, 4.0, NAN, &e, NULL), AR_EDOMAIN);
}

/* What is given picks the mode, and the one source of the law; two modes
 * or two sources are refused.  Set through the option table, as the faces
 * do. */
static void set(ar_dw_opts *o, const char *name, const char *text)
{
    const ar_option_spec *spec = ar_option_find(ar_dw_option_table(), name, strlen(name));
    assert_non_null(spec);
    assert_int_equal(ar_option_set_text(spec, o, text, NULL), AR_OK);
}

static ar_dw_mode mode_given(const char *a, const char *b)
{
    ar_dw_opts o;
    ar_dw_opts_init(&o);
    if (a != NULL)
        set(&o, a, "7");
    if (b != NULL)
        set(&o, b, "9");
    ar_dw_request q;
    assert_int_equal(ar_dw_request_of(&o, &q, NULL), AR_OK);
    assert_string_equal(q.law_source, "paper");
    return q.mode;
}

static void test_request_of(void **state)
{
    (void)state;
    assert_int_equal(mode_given(NULL, NULL), AR_DW_MODE_FIT);
    assert_int_equal(mode_given("params", NULL), AR_DW_MODE_OPTIMUM);
    assert_int_equal(mode_given("layers", NULL), AR_DW_MODE_TRANSITION_D);
    assert_int_equal(mode_given("d", NULL), AR_DW_MODE_TRANSITION_LAYERS);
    assert_int_equal(mode_given("layers", "d"), AR_DW_MODE_VERDICT);
    ar_dw_opts o;
    ar_dw_request q;
    ar_error err = {{0}};
    ar_dw_opts_init(&o);
    set(&o, "params", "1e9");
    set(&o, "d", "64");
    assert_int_equal(ar_dw_request_of(&o, &q, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:params} and {opt:layers}/{opt:d} are separate modes: "
                                 "give one");
    /* a given coefficient: the other keeps the paper's, the source is "given" */
    ar_dw_opts_init(&o);
    set(&o, "layers", "12");
    set(&o, "slope", "0.07");
    set(&o, "tolerance", "0.3");
    set(&o, "embed-rank", "5");
    assert_int_equal(ar_dw_request_of(&o, &q, NULL), AR_OK);
    assert_true(q.law.slope == 0.07 && q.law.intercept == ar_dw_law_paper().intercept);
    assert_string_equal(q.law_source, "given");
    assert_true(q.layers == 12 && q.tolerance == 0.3 && q.embed_rank == 5 && !q.have_fit);
    /* a saved law: its own coefficients and path; two sources refused */
    o.have_law = 1;
    o.law = (ar_dw_law){.intercept = 1.0, .slope = 2.0, .params_coeff = 10.0};
    assert_int_equal(ar_dw_request_of(&o, &q, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:fit}, {opt:law} and {opt:intercept}/{opt:slope} each set "
                                 "the law: give one");
    o.slope_given = 0;
    assert_int_equal(ar_dw_request_of(&o, &q, NULL), AR_OK);
    assert_true(q.law.slope == 2.0 && q.law.params_coeff == 10.0);
    assert_string_equal(q.law_source, "given");
    o.law_source = "law.json";
    assert_int_equal(ar_dw_request_of(&o, &q, NULL), AR_OK);
    assert_string_equal(q.law_source, "law.json");
    /* a refit: its coefficients, source "fit"; with the saved law refused */
    const double depth[] = {1.0, 2.0, 3.0}, width[] = {10.0, 20.0, 45.0};
    assert_int_equal(ar_dw_fit_points(depth, width, NULL, 3, &o.fit, NULL), AR_OK);
    o.have_fit = 1;
    assert_int_equal(ar_dw_request_of(&o, &q, &err), AR_EINVAL);
    o.have_law = 0;
    assert_int_equal(ar_dw_request_of(&o, &q, NULL), AR_OK);
    assert_true(q.have_fit && q.law.slope == o.fit.slope && q.law.intercept == o.fit.intercept);
    assert_string_equal(q.law_source, "fit");
    assert_int_equal(ar_dw_request_of(NULL, &q, NULL), AR_EINVAL);
    assert_int_equal(ar_dw_request_of(&o, NULL, NULL), AR_EINVAL);
    ar_dw_opts_init(NULL); /* no crash */
}

/* Every rule of ar_dw_run's check refuses with its message, options named
 * as tokens (the faces render them), with the edge values beside it. */
static void dw_refuses(const ar_dw_request *q, const char *message)
{
    ar_dw_result r;
    ar_error err = {{0}};
    assert_int_equal(ar_dw_run(q, &r, &err), AR_EINVAL);
    assert_string_equal(err.msg, message);
}

static void dw_accepts(const ar_dw_request *q)
{
    ar_dw_result r;
    assert_int_equal(ar_dw_run(q, &r, NULL), AR_OK);
}

static void test_run_rules(void **state)
{
    (void)state;
    ar_dw_request q;
    ar_dw_request_init(&q);
    dw_refuses(&q, "give one of {opt:params}, {opt:layers}, {opt:d} or {opt:fit}");
    q.have_fit = 1;
    dw_accepts(&q);
    q.embed_rank = 4;
    dw_refuses(&q, "{opt:embed-rank} needs a mode: {opt:params}, {opt:layers} or {opt:d}");
    q.embed_rank = 0;
    q.tolerance = -1.0;
    dw_refuses(&q, "{opt:tolerance}: must be >= 0, got -1");
    q.tolerance = NAN;
    dw_refuses(&q, "{opt:tolerance}: must be >= 0, got nan");
    q.tolerance = INFINITY;
    dw_refuses(&q, "{opt:tolerance}: must be finite, got inf");
    ar_dw_request_init(&q);
    q.mode = AR_DW_MODE_OPTIMUM;
    q.params = 0.0;
    dw_refuses(&q, "{opt:params}: must be > 0, got 0");
    q.params = -5.0;
    dw_refuses(&q, "{opt:params}: must be > 0, got -5");
    q.params = 1e9;
    q.tolerance = 0.0;
    dw_accepts(&q);
    q.layers = 3; /* a field the mode does not read */
    dw_accepts(&q);
    ar_dw_request_init(&q);
    q.mode = AR_DW_MODE_TRANSITION_D;
    dw_refuses(&q, "{opt:layers}: must be >= 1, got 0");
    q.layers = 1;
    dw_accepts(&q);
    q.mode = AR_DW_MODE_VERDICT;
    dw_refuses(&q, "{opt:d}: must be >= 1, got 0");
    q.d = 1;
    dw_accepts(&q);
    q.mode = AR_DW_MODE_TRANSITION_LAYERS;
    q.d = 0;
    dw_refuses(&q, "{opt:d}: must be >= 1, got 0");
    q.d = 768;
    dw_accepts(&q);
}

/* The workflow (depthwidth_run.h): each mode as its own function computes it,
 * the embedding crossover of the mode's width, the refusals; its JSON
 * record (json.h). */
static void test_run_modes(void **state)
{
    (void)state;
    ar_dw_law law = ar_dw_law_paper();
    ar_dw_request q;
    ar_dw_result r;
    ar_error err = {{0}};
    ar_dw_request_init(&q);
    assert_int_equal(ar_dw_run(&q, &r, &err), AR_EINVAL); /* the fit mode needs a fit */
    q.mode = AR_DW_MODE_OPTIMUM;
    q.params = 1e9;
    q.embed_rank = 64;
    assert_int_equal(ar_dw_run(&q, &r, &err), AR_OK);
    ar_dw_optimum o;
    assert_int_equal(ar_dw_optimal(&law, 1e9, &o, NULL), AR_OK);
    assert_true(r.optimum.layers == o.layers && r.l_th == o.l_th && r.have_embedding);
    assert_true(r.embedding.d == o.d && r.embedding.effective_d == 64.0);
    q.mode = AR_DW_MODE_TRANSITION_LAYERS;
    q.d = 768;
    q.embed_rank = 0;
    assert_int_equal(ar_dw_run(&q, &r, &err), AR_OK);
    double l = 0.0;
    assert_int_equal(ar_dw_transition_layers(&law, 768.0, &l, NULL), AR_OK);
    assert_true(r.transition_layers == l && !r.have_embedding);
    char *text = NULL;
    assert_int_equal(ar_dw_result_json(&r, 0, &text, &err), AR_OK);
    assert_non_null(strstr(text, "{\"mode\":\"transition_layers\",\"law\":{\"intercept\":"));
    assert_non_null(strstr(text, "\"source\":\"paper\"},\"d\":768,"));
    ar_json_free(text);
    q.mode = AR_DW_MODE_VERDICT;
    q.layers = 0;
    assert_int_equal(ar_dw_run(&q, &r, &err), AR_EINVAL);
    q.layers = 12;
    q.law.slope = 0.0;
    assert_int_equal(ar_dw_run(&q, &r, &err), AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "no verdict under this law"));
    q.mode = (ar_dw_mode)99;
    assert_int_equal(ar_dw_run(&q, &r, &err), AR_EINVAL);
    assert_int_equal(ar_dw_run(NULL, &r, &err), AR_EINVAL);
    assert_int_equal(ar_dw_result_json(NULL, 0, &text, &err), AR_EINVAL);
}

/* The law reader behind --law and law=: top level or under "law",
 * params_coeff looked up the same way, a null hides the nested key, and
 * each refusal says what a law needs. */
static int parse_law(const char *text, ar_dw_law *law, ar_error *err)
{
    return ar_dw_law_parse_json(text, strlen(text), law, err);
}

static void test_law_json(void **state)
{
    (void)state;
    ar_dw_law law;
    ar_error err;
    assert_int_equal(parse_law("{\"intercept\": 5, \"slope\": 0.25}", &law, &err), AR_OK);
    assert_true(law.intercept == 5.0 && law.slope == 0.25 &&
                law.params_coeff == AR_DW_PAPER_PARAMS_COEFF);
    assert_int_equal(parse_law("{\"mode\": \"optimum\", \"law\": {\"intercept\": 1.5, "
                               "\"slope\": -0.5, \"params_coeff\": 10}}", &law, &err), AR_OK);
    assert_true(law.intercept == 1.5 && law.slope == -0.5 && law.params_coeff == 10.0);
    assert_int_equal(parse_law("{\"law\": {\"intercept\": 1, \"slope\": 2}, \"params_coeff\": 7}",
                               &law, &err), AR_OK);
    assert_true(law.params_coeff == 7.0);
    const char *bad[] = {
        "{\"intercept\": 1}", "{\"intercept\": null, \"slope\": 1, \"law\": {\"intercept\": 5}}",
        "{\"intercept\": 1, \"slope\": true}", "{\"intercept\": 1, \"slope\": \"0.1\"}",
        "{\"intercept\": 1, \"slope\": 1, \"params_coeff\": 0}",
        "{\"intercept\": 1, \"slope\": 1, \"params_coeff\": null}", "[1, 2]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(parse_law(bad[i], &law, &err), AR_EFORMAT);
        assert_non_null(strstr(err.msg, "needs numbers \"intercept\" and \"slope\""));
    }
    assert_int_equal(parse_law("nope", &law, &err), AR_EFORMAT);
    assert_non_null(strstr(err.msg, "line 1: not a JSON law file"));
    assert_int_equal(ar_dw_law_parse_json(NULL, 0, &law, &err), AR_EINVAL);
    assert_int_equal(ar_dw_law_parse_json("{}", 2, NULL, &err), AR_EINVAL);
    /* length-delimited: the text need not end in a NUL */
    assert_int_equal(ar_dw_law_parse_json("{\"intercept\": 2, \"slope\": 3}xyz", 28, &law, &err),
                     AR_OK);
    assert_true(law.intercept == 2.0 && law.slope == 3.0);
}

static void test_law_file(void **state)
{
    (void)state;
    char path[] = "/tmp/attnrank_law_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    fputs("{\"intercept\": 4, \"slope\": 0.5}\n", fp);
    fclose(fp);
    ar_dw_law law;
    ar_error err;
    assert_int_equal(ar_dw_law_read_file(path, &law, &err), AR_OK);
    assert_true(law.intercept == 4.0 && law.slope == 0.5);
    fp = fopen(path, "w");
    fputs("{\"slope\": 0.5}", fp);
    fclose(fp);
    assert_int_equal(ar_dw_law_read_file(path, &law, &err), AR_EFORMAT);
    assert_true(strncmp(err.msg, path, strlen(path)) == 0);
    remove(path);
    assert_int_equal(ar_dw_law_read_file(path, &law, &err), AR_EIO);
    assert_non_null(strstr(err.msg, "cannot open"));
    assert_int_equal(ar_dw_law_read_file(NULL, &law, &err), AR_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transition_widths),  cmocka_unit_test(test_optimal_allocation),
        cmocka_unit_test(test_verdicts),           cmocka_unit_test(test_law_errors),
        cmocka_unit_test(test_fit_exact_line),     cmocka_unit_test(test_fit_weighted_closed_form),
        cmocka_unit_test(test_fit_errors),         cmocka_unit_test(test_fit_table),
        cmocka_unit_test(test_null_law_is_paper),
        cmocka_unit_test(test_embedding_crossover),
        cmocka_unit_test(test_run_modes),
        cmocka_unit_test(test_run_rules),
        cmocka_unit_test(test_request_of),
        cmocka_unit_test(test_law_json),
        cmocka_unit_test(test_law_file),
    };
    return cmocka_run_group_tests_name("depthwidth", tests, NULL, NULL);
}
