/* Worked example of the softmax bottleneck (docs/theory/softmax-bottleneck.md):
 * a generated language-model-like distribution and its errors against the
 * output-layer width d, with and without a per-word bias.
 *
 * The distribution (N contexts x V words), all from one seed:
 *     logits_ij = zipf_j + (H0 W0^T)_ij + noise_ij,   P = rowsoftmax(logits)
 *   - zipf_j = -s log(j + 1), s = 1.1: the shared Zipfian marginal;
 *   - H0 (N x r0), W0 (V x r0) Gaussian, scaled so the context term has
 *     standard deviation 2 per entry: low-rank context structure;
 *   - noise N(0, 0.25^2) per entry: everything a small model does not share.
 * The noise makes P generic: the exact required width is min(N, V - 1)
 * (min(N - 1, V - 1) with bias), while the error drops steeply at r0
 * (r0 + 1 without bias, which must also carry the Zipf term).
 *
 *   softmax_bottleneck_example [--quick | --full] [--seed S] [--out DIR]
 *                              [--figures DIR|none] [--plots DIR] [--quiet]
 *
 * quick: N = 48, V = 240, r0 = 6 (about 10 s); full: N = 96, V = 600, r0 = 10
 * (about a minute).  Writes DIR/softmax_bottleneck_P.npy (the matrix, for
 * `attnrank softmax-bottleneck`), DIR/softmax_bottleneck.csv (one row per
 * width and bias setting) and DIR/softmax_bottleneck_summary.csv (default
 * DIR: out/softmax_bottleneck), then renders
 * experiments/plots/softmax_bottleneck.gp into the figure directory
 * (softmax_bottleneck.{png,svg}; default the --out DIR, 'none' skips).
 * One configuration of the sweep engine (sweep.h) = one fit (width, bias). */
#include "common.h"
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct example {
    exp_ctx ctx;
    size_t n, v, r0;
    /* Set up by every process before the sweep (seconds at most): */
    ar_matrix p;           /* the distribution */
    ar_sbn_workspace *ws;  /* P as the fits' target */
    ar_sbn_result an[2];   /* the analysis without and with bias */
    size_t ds[128], nd;    /* the widths */
} example;

static int generate(const example *e, ar_matrix *p)
{
    uint64_t cfg[3] = {e->n, e->v, e->r0};
    ar_rng *rng = ar_rng_alloc(ar_seed_derive(e->ctx.seed, cfg, 3));
    ar_matrix h0 = ar_matrix_empty(), w0 = ar_matrix_empty();
    int rc = rng ? ar_matrix_alloc(p, e->n, e->v, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&h0, e->n, e->r0, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&w0, e->v, e->r0, NULL);
    if (rc == AR_OK) {
        /* each entry of H0 W0^T is a sum of r0 products: variance r0 s^2 */
        double s = sqrt(2.0 / sqrt((double)e->r0));
        rc = ar_matrix_fill_gaussian(ar_matrix_view(&h0), rng, s, NULL);
        if (rc == AR_OK)
            rc = ar_matrix_fill_gaussian(ar_matrix_view(&w0), rng, s, NULL);
        if (rc == AR_OK)
            rc = ar_matrix_gemm(AR_NO_TRANS, AR_TRANS, 1.0, ar_matrix_cview(&h0),
                                ar_matrix_cview(&w0), 0.0, ar_matrix_view(p), NULL);
    }
    for (size_t j = 0; rc == AR_OK && j < e->v; j++)
        for (size_t i = 0; i < e->n; i++)
            AR_AT(p, i, j) += -1.1 * log((double)j + 1.0) + ar_rng_gaussian(rng, 0.25);
    if (rc == AR_OK)
        rc = ar_attention_softmax(ar_matrix_view(p), AR_AXIS_ROW, NULL);
    ar_matrix_free(&h0);
    ar_matrix_free(&w0);
    ar_rng_free(rng);
    return rc;
}

/* Widths: 0..2 r0 densely, then a geometric tail, then the generic
 * required widths min(N - 1, V - 1) (bias) and min(N, V - 1) (no bias). */
static size_t widths(const example *e, size_t *d, size_t cap)
{
    size_t k = 0, top = e->n < e->v - 1 ? e->n : e->v - 1;
    for (size_t x = 0; x <= 2 * e->r0 + 2 && x + 1 < top && k < cap; x++)
        d[k++] = x;
    for (size_t x = 2 * e->r0 + 4; x + 1 < top && k < cap; x = x * 3 / 2)
        d[k++] = x;
    if (k + 2 <= cap && top >= 1) {
        d[k++] = top - 1;
        d[k++] = top;
    }
    return k;
}

/* The analysis and fit options of one bias setting. */
static ar_sbn_opts sbn_opts(const example *e, int bias)
{
    ar_sbn_opts o;
    ar_sbn_opts_init(&o);
    o.bias = bias;
    o.fit = 0;
    o.max_iter = 200;
    o.grad_tol = 1e-8;
    o.seed = e->ctx.seed;
    return o;
}

/* P, the workspace, both analyses and the widths.  A fit depends only on P,
 * the width and the bias setting (the workspace recomputes the start when the
 * bias changes), so the fits can run in any order and on any process. */
static int setup(example *e)
{
    int rc = generate(e, &e->p);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, NULL, "generating P");
    rc = ar_sbn_workspace_alloc(&e->ws, e->n, e->v, NULL);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, NULL, "allocation");
    for (int bias = 0; bias <= 1; bias++) {
        ar_sbn_opts o = sbn_opts(e, bias);
        ar_error err = {{0}};
        rc = ar_sbn_analyze(e->ws, ar_matrix_cview(&e->p), AR_PREC_F64, &o, &e->an[bias], &err);
        if (rc != AR_OK)
            return exp_fail(&e->ctx, rc, &err, "analysis");
    }
    e->nd = widths(e, e->ds, sizeof e->ds / sizeof e->ds[0]);
    return 0;
}

/* Configuration i: bias i / nd, width ds[i % nd]. */
static void describe(void *user, size_t i, char *buf, size_t len)
{
    const example *e = user;
    snprintf(buf, len, "bias %d, d = %zu", (int)(i / e->nd), e->ds[i % e->nd]);
}

/* The fit's variables, (N + V) d plus V biases: what one BFGS step costs. */
static double cost(void *user, size_t i)
{
    const example *e = user;
    return (double)((e->n + e->v) * e->ds[i % e->nd] + (i / e->nd ? e->v : 0));
}

/* One fit: its row of softmax_bottleneck.csv. */
static int run_one(void *user, size_t i, exp_sweep_record *rec)
{
    example *e = user;
    int bias = (int)(i / e->nd);
    size_t d = e->ds[i % e->nd];
    const ar_sbn_result *r = &e->an[bias];
    ar_sbn_opts o = sbn_opts(e, bias);
    ar_sbn_fit f;
    ar_error err = {{0}};
    int rc = ar_sbn_fit_run(e->ws, d, &o, &f, &err);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, &err, "fit");
    double le = ar_sbn_logit_error(r, d);
    fprintf(rec->fp[0], "%d,%zu,%zu,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%zu,%d\n", bias,
            d, r->required_d, d >= r->required_d, le,
            r->centred_norm > 0.0 ? le / r->centred_norm : 0.0, f.kl_mean, f.kl_max,
            f.fro_error, f.max_abs_error, f.start_kl_mean, f.iterations, f.converged);
    return 0;
}

/* After the sweep: P for `attnrank softmax-bottleneck`, the rank summary per
 * bias setting. */
static int write_summaries(const example *e)
{
    char path[4096];
    ar_error err = {{0}};
    snprintf(path, sizeof path, "%s/softmax_bottleneck_P.npy", e->ctx.out);
    int rc = ar_npy_write(path, ar_matrix_cview(&e->p), &err);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, &err, "writing P");
    exp_csv csv;
    int code = exp_csv_open(&e->ctx, &csv, "softmax_bottleneck_summary.csv",
                            "contexts,vocab,planted_rank,bias,rank_log,rank_centred,"
                            "rank_double_centred,required_d,threshold");
    if (code != 0)
        return code;
    for (int bias = 0; bias <= 1; bias++) {
        const ar_sbn_result *r = &e->an[bias];
        fprintf(csv.fp, "%zu,%zu,%zu,%d,%zu,%zu,%zu,%zu,%.17g\n", e->n, e->v, e->r0, bias,
                r->rank_log, r->rank_centred, r->rank_double_centred, r->required_d,
                r->threshold);
    }
    code = exp_csv_commit(&e->ctx, &csv);
    exp_csv_abort(&csv);
    return code;
}

static int run(example *e)
{
    static const char *const files[] = {"softmax_bottleneck.csv"};
    static const char *const headers[] = {
        "bias,d,required_d,expressible,logit_error,logit_error_rel,kl_mean,"
        "kl_max,fro_error,max_abs_error,start_kl_mean,iterations,converged"};
    int code = setup(e);
    if (code == 0) {
        exp_sweep_spec spec = {2 * e->nd, 1, files, headers, run_one, NULL, cost, describe};
        code = exp_sweep_run(&e->ctx, &spec, e);
    }
    if (code == 0)
        code = write_summaries(e);
    ar_sbn_result_free(&e->an[0]);
    ar_sbn_result_free(&e->an[1]);
    ar_sbn_workspace_free(e->ws);
    ar_matrix_free(&e->p);
    if (code != 0)
        return code;
    static const char *const figs[] = {"softmax_bottleneck.png", "softmax_bottleneck.svg"};
    return exp_render(&e->ctx, "softmax_bottleneck", figs, 2, NULL);
}

int main(int argc, char **argv)
{
    example e;
    memset(&e, 0, sizeof e);
    e.p = ar_matrix_empty();
    static const cli_command_doc doc = {
        "softmax_bottleneck_example",
        "softmax_bottleneck_example [--quick | --full] [--seed S] [--out DIR] "
        "[--figures DIR|none]",
        "Errors of an output layer of width d on a generated language-model-like\n"
        "distribution (Zipfian marginals, low-rank context structure plus noise).\n"
        "quick: N=48 contexts, V=240 words, planted rank 6; full: N=96, V=600, rank 10.",
    };
    static const exp_defaults defaults = {"out/softmax_bottleneck", NULL, NULL};
    int code = exp_parse_ex(&e.ctx, &doc, &defaults, argc, argv, NULL, 0);
    if (code >= 0)
        return code;
    if (e.ctx.full) {
        e.n = 96, e.v = 600, e.r0 = 10;
    } else {
        e.n = 48, e.v = 240, e.r0 = 6;
    }
    return exp_finish(&e.ctx, run(&e));
}
