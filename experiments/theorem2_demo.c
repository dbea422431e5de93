/* Experiment theorem2_demo: a numerical test of the paper's Theorem 2
 * (docs/theory/low-rank-bottleneck.md) that could fail.
 *
 * Model.  An attention layer with h heads of size p on tokens X (d x n,
 * tokens are columns, column softmax) computes
 *     f(X) = sum_i O_i V_i X P_i,   P_i = softmax((K_i X)^T (Q_i X) / sqrt(p)),
 * with Q_i, K_i, V_i in R^{p x d} and O_i in R^{d x p} (the output
 * projection W_o = [O_1 ... O_h]); no biases.  The standard MultiHead has
 * p = d / h, the FixedMultiHead p = d_p.  The "output" compared below is
 * this d x n matrix f(X): each head's attention scores P_i carried through
 * its value and output projections and summed.
 *
 * Target.  g_V is a FixedMultiHead meeting the theorem's assumptions:
 * d_p > d / h, every head has K_i^T Q_i = U with rank(U) = d_p (head 1 has
 * random K, Q; head i > 1 uses G_i K, G_i Q with an orthogonal G_i), and
 * V_o [V_1; ...; V_h] has full rank d.  On inputs X of rank d its head
 * logits have rank d_p, which no head of size d / h can produce.
 *
 * Test.  Fit, by L-BFGS and a Levenberg-Marquardt polish (the library's
 * ar_mh_fitter) from several random starts, the parameters of
 *   A. a standard MultiHead (h heads of size d / h)  -- the theorem's subject,
 *   B. a FixedMultiHead (h heads of size d_p)        -- control: contains g_V,
 *   C. a standard MultiHead with ONE head of size d  -- control with the same
 *      number of parameters as A (4 d^2), which also contains g_V,
 * to g_V on m inputs X_1..X_m at once, minimising
 *     E = sum_m ||f(X_m) - g_V(X_m)||_F^2 / sum_m ||g_V(X_m)||_F^2,
 * and report the relative error sqrt(E) per start.  The theorem predicts
 * that A stays away from zero while B and C reach zero; it could fail if
 * A also reached zero.  On a single input (m = 1) A can match g_V exactly
 * (the d x n output has too few entries to expose the rank of the scores:
 * the theorem is a statement about functions, which differ on SOME input),
 * so the sweep over m shows where the separation appears.
 *
 *   theorem2_demo [--quick | --full] [--seed S] [--out DIR]
 *
 * quick: d = 4, h = 2, n = 6, d_p = 4; m in {1, 2, 4}; 4 starts (seconds).
 * full:  the same layer, m in {1, 2, 3, 4, 6, 8}, 12 starts (a few minutes).
 *        The table also holds d = 6, h = 3, n = 8, d_p = 4 (configs[1]; raise
 *        nconfigs to run it): there the FixedMultiHead control needed more
 *        than 5000 iterations of GSL's BFGS (the minimiser before 0.9) plus
 *        the polish to reach zero from m = 4 on, and the run took over half
 *        an hour.
 * Outputs in DIR: theorem2.csv (every fit), theorem2_summary.csv (best and
 * median over starts), theorem2_target.csv (ranks that certify the
 * assumptions on each input), and the figure theorem2.{png,svg}.
 * theorem2.csv's bfgs_status and lm_status are ar_mh_phase_status values
 * (multihead.h: why L-BFGS and the polish ended).
 *
 * The layer, g_V's construction and the fits are the library's
 * (include/attnrank/multihead.h: ar_theorem2_target_build, ar_mh_fitter);
 * this program chooses the sizes, seeds every start and writes the tables.
 * Sweep engine (sweep.h) configurations: one per fit (model, m, start), one for the checks. */
#include "common.h"
#include "sweep.h"


#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP_NAME "theorem2_demo"
#define NARMS 3

typedef struct config {
    size_t d, h, n, dp;
} config;

/* What one fit leaves for the summary (its configuration's state). */
typedef struct fit_state {
    double rel_error;
    uint64_t heads, head_size, params;
} fit_state;

typedef struct experiment {
    exp_ctx ctx;
    const config *configs;
    size_t nconfigs;
    const size_t *ms;
    size_t nms;
    size_t starts, max_iter;
    size_t per_config;   /* sweep configurations per layer configuration */
    fit_state *fits;     /* per sweep configuration, from the journal records */
} experiment;

static const ar_theorem2_model arms[NARMS] = {AR_THEOREM2_STANDARD, AR_THEOREM2_FIXED,
                                              AR_THEOREM2_STANDARD_ONE_HEAD};

/* Sweep configuration i: within layer configuration ci = i / per_config,
 * position 0 builds g_V and writes its checks, then one fit per (model,
 * m, start), model-major, the order of the rows in theorem2.csv. */
typedef struct job {
    size_t ci;
    int target;          /* 1: the target checks, no fit */
    int arm;
    size_t mi, start;
} job;

static job job_of(const experiment *e, size_t i)
{
    job j = {i / e->per_config, 0, 0, 0, 0};
    size_t r = i % e->per_config;
    if (r == 0) {
        j.target = 1;
        return j;
    }
    r--;
    j.start = r % e->starts;
    r /= e->starts;
    j.mi = r % e->nms;
    j.arm = (int)(r / e->nms);
    return j;
}

/* One line per input and head: the theorem's assumptions (rank U, rank of
 * V_o [V_1; ...; V_h], rank of the head's logits) and the largest gap
 * between the library's attention scores (ar_heads_scores, from the heads
 * alone) and the layer's forward pass (ar_mh_head_scores, packed weights). */
static int write_target_checks(FILE *fp, const ar_theorem2_target *t)
{
    ar_theorem2_assumptions a;
    ar_mh_workspace *ws = NULL;
    ar_matrix sc = ar_matrix_empty(), pr = ar_matrix_empty();
    int rc = ar_theorem2_verify(t, &a, NULL);
    if (rc == AR_OK)
        rc = ar_mh_workspace_alloc(&ws, &t->shape, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&sc, t->n, t->n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&pr, t->n, t->n, NULL);
    for (size_t m = 0; rc == AR_OK && m < t->m; m++)
        for (size_t i = 0; rc == AR_OK && i < t->h; i++) {
            size_t rank_s = 0;
            double ks = 0, cs = 0;
            rc = ar_theorem2_logit_rank(t, m, i, &rank_s, &ks, &cs, NULL);
            if (rc == AR_OK)
                rc = ar_mh_head_scores(ws, t->theta, i, ar_matrix_cview(&t->x[m]),
                                       ar_matrix_view(&pr), NULL);
            if (rc == AR_OK)
                rc = ar_heads_scores(&t->heads, i, ar_matrix_cview(&t->x[m]), AR_AXIS_COL,
                                     ar_matrix_view(&sc), NULL);
            if (rc != AR_OK)
                break;
            fprintf(fp, "%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,", t->d, t->h, t->n, t->dp, m, i,
                    a.rank_u, a.rank_vov, rank_s);
            exp_csv_real(fp, ks);
            fputc(',', fp);
            exp_csv_real(fp, cs);
            fputc(',', fp);
            exp_csv_real(fp, ar_matrix_max_abs_diff(ar_matrix_cview(&sc), ar_matrix_cview(&pr)));
            fputc('\n', fp);
        }
    ar_matrix_free(&sc);
    ar_matrix_free(&pr);
    ar_mh_workspace_free(ws);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void write_fit_row(FILE *fp, const ar_theorem2_target *t, int arm, const ar_mh_shape *sh,
                          size_t m, size_t s, uint64_t seed, const ar_mh_fit_outcome *out)
{
    fprintf(fp, "%zu,%zu,%zu,%zu,%s,%zu,%zu,%zu,%zu,%zu,%llu,", t->d, t->h, t->n, t->dp,
            ar_theorem2_model_name(arms[arm]), sh->h, sh->p, ar_mh_nparams(sh), m, s,
            (unsigned long long)seed);
    exp_csv_real(fp, out->rel_error);
    fputc(',', fp);
    exp_csv_real(fp, out->bfgs_rel_error);
    fprintf(fp, ",%zu,%d,%zu,%d,%d\n", out->iterations, out->bfgs_status,
            out->polish_iterations, out->polish_status, out->converged);
}

/* Attach the target's first m inputs and outputs to the fitter (as views of
 * the target's matrices, which outlive the fitter). */
static int set_target_data(ar_mh_fitter *f, const ar_theorem2_target *t, size_t m)
{
    ar_cview *v = malloc(2 * m * sizeof *v);
    if (v == NULL)
        return AR_ENOMEM;
    for (size_t k = 0; k < m; k++) {
        v[k] = ar_matrix_cview(&t->x[k]);
        v[m + k] = ar_matrix_cview(&t->y[k]);
    }
    int rc = ar_mh_fitter_set_data(f, v, v + m, m, NULL);
    free(v);
    return rc;
}

/* One model on the first m inputs from one random start seeded from
 * (config, model, m, start), after checking the analytic gradient against
 * finite differences (every fit would be meaningless otherwise; each fit
 * checks, so any subset of fits computed alone is checked too). */
static int run_fit(const experiment *e, const ar_theorem2_target *t, const job *j, FILE *fp,
                   fit_state *st)
{
    size_t m = e->ms[j->mi];
    ar_mh_shape sh;
    ar_mh_fitter *f = NULL;
    ar_rng *rng = ar_rng_alloc(0);
    int rc = ar_theorem2_model_shape(t, arms[j->arm], &sh, NULL);
    if (rc == AR_OK)
        rc = ar_mh_fitter_alloc(&f, &sh, NULL);
    if (rc == AR_OK)
        rc = set_target_data(f, t, m);
    double *theta0 = rc == AR_OK ? malloc(ar_mh_nparams(&sh) * sizeof *theta0) : NULL;
    if (rc == AR_OK && (rng == NULL || theta0 == NULL))
        rc = AR_ENOMEM;
    int code = rc == AR_OK ? 0 : exp_fail(&e->ctx, rc, NULL, "fitter");
    if (code == 0) {
        uint64_t cfg[4] = {j->ci, (uint64_t)j->arm, m, 7};
        ar_rng_seed(rng, ar_seed_derive(e->ctx.seed, cfg, 4));
        double gerr = INFINITY;
        rc = ar_mh_gradient_defect(f, rng, &gerr, NULL);
        if (rc != AR_OK || !(gerr < 1e-5))
            code = exp_fail(&e->ctx, AR_ENOCONV, NULL,
                            "analytic gradient disagrees with finite differences");
    }
    if (code == 0) {
        ar_mh_fit_opts opts;
        ar_mh_fit_opts_init(&opts);
        opts.max_iter = e->max_iter;
        uint64_t cfg[4] = {j->ci, (uint64_t)j->arm, m, j->start};
        uint64_t seed = ar_seed_derive(e->ctx.seed, cfg, 4);
        ar_rng_seed(rng, seed);
        ar_mh_random_start(&sh, rng, 1.0 / sqrt((double)t->d), theta0);
        ar_mh_fit_outcome out;
        rc = ar_mh_fit_from(f, &opts, theta0, NULL, &out, NULL);
        if (rc != AR_OK)
            code = exp_fail(&e->ctx, rc, NULL, "fit");
        else {
            write_fit_row(fp, t, j->arm, &sh, m, j->start, seed, &out);
            *st = (fit_state){out.rel_error, sh.h, sh.p, ar_mh_nparams(&sh)};
        }
    }
    ar_mh_fitter_free(f);
    ar_rng_free(rng);
    free(theta0);
    return code;
}

/* Every configuration builds g_V from the layer configuration's seed with
 * the inputs of the largest m, so each fit sees the same data whichever
 * process computes it. */
static int run_one(void *user, size_t i, exp_sweep_record *rec)
{
    const experiment *e = user;
    job j = job_of(e, i);
    const config *c = &e->configs[j.ci];
    ar_theorem2_target t;
    uint64_t cfg[5] = {c->d, c->h, c->n, c->dp, 99};
    int rc = ar_theorem2_target_build(&t, c->d, c->h, c->n, c->dp, e->ms[e->nms - 1],
                                      ar_seed_derive(e->ctx.seed, cfg, 5), NULL);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, NULL, "target g_V");
    int code = 0;
    if (j.target) {
        rc = write_target_checks(rec->fp[1], &t);
        code = rc == AR_OK ? 0 : exp_fail(&e->ctx, rc, NULL, "target g_V");
    } else {
        fit_state st;
        code = run_fit(e, &t, &j, rec->fp[0], &st);
        if (code == 0 && (rc = exp_sweep_state(rec, &st, sizeof st)) != AR_OK)
            code = exp_fail(&e->ctx, rc, NULL, "allocation");
    }
    ar_theorem2_target_free(&t);
    return code;
}

static int absorb(void *user, size_t i, const void *state, size_t len)
{
    experiment *e = user;
    job j = job_of(e, i);
    size_t want = j.target ? 0 : sizeof(fit_state); /* the checks keep no state */
    if (len != want || (want > 0 && state == NULL))
        return exp_fail(&e->ctx, AR_EINVAL, NULL, "journal record of the wrong size");
    if (j.target)
        return 0;
    memcpy(&e->fits[i], state, sizeof(fit_state));
    return 0;
}

/* Work per BFGS iteration: m inputs through all the heads' dimensions
 * (d x total head width x n^2); the target checks are cheap. */
static double cost(void *user, size_t i)
{
    const experiment *e = user;
    job j = job_of(e, i);
    const config *c = &e->configs[j.ci];
    double width = arms[j.arm] == AR_THEOREM2_FIXED ? (double)(c->h * c->dp) : (double)c->d;
    double per_input = (double)c->d * (double)c->n * (double)c->n;
    return j.target ? per_input : (double)e->ms[j.mi] * width * per_input;
}

static void describe(void *user, size_t i, char *buf, size_t len)
{
    const experiment *e = user;
    job j = job_of(e, i);
    const config *c = &e->configs[j.ci];
    int at = snprintf(buf, len, "d=%zu h=%zu n=%zu d_p=%zu ", c->d, c->h, c->n, c->dp);
    if (at < 0 || (size_t)at >= len)
        return;
    if (j.target)
        snprintf(buf + at, len - (size_t)at, "target checks");
    else
        snprintf(buf + at, len - (size_t)at, "%s m=%zu start %zu/%zu",
                 ar_theorem2_model_name(arms[j.arm]), e->ms[j.mi], j.start + 1, e->starts);
}

/* theorem2_summary.csv: best, median and worst over the starts of each
 * (config, model, m), in the order of theorem2.csv. */
static int write_summary(const experiment *e)
{
    size_t S = e->starts;
    double *errs = malloc(S * sizeof *errs);
    if (errs == NULL)
        return exp_fail(&e->ctx, AR_ENOMEM, NULL, "allocation");
    exp_csv csv;
    int code = exp_csv_open(&e->ctx, &csv, "theorem2_summary.csv",
                            "d,h,n,d_p,model,heads,head_size,params,inputs,starts,"
                            "rel_error_best,rel_error_median,rel_error_worst");
    for (size_t ci = 0; code == 0 && ci < e->nconfigs; ci++)
        for (int arm = 0; arm < NARMS; arm++)
            for (size_t mi = 0; mi < e->nms; mi++) {
                const config *c = &e->configs[ci];
                size_t first = ci * e->per_config + 1 + ((size_t)arm * e->nms + mi) * S;
                const fit_state *st = &e->fits[first];
                for (size_t s = 0; s < S; s++)
                    errs[s] = st[s].rel_error;
                qsort(errs, S, sizeof *errs, cmp_double);
                double med = S % 2 ? errs[S / 2] : 0.5 * (errs[S / 2 - 1] + errs[S / 2]);
                fprintf(csv.fp, "%zu,%zu,%zu,%zu,%s,%llu,%llu,%llu,%zu,%zu,", c->d, c->h, c->n,
                        c->dp, ar_theorem2_model_name(arms[arm]),
                        (unsigned long long)st->heads, (unsigned long long)st->head_size,
                        (unsigned long long)st->params, e->ms[mi], S);
                exp_csv_real(csv.fp, errs[0]);
                fputc(',', csv.fp);
                exp_csv_real(csv.fp, med);
                fputc(',', csv.fp);
                exp_csv_real(csv.fp, errs[S - 1]);
                fputc('\n', csv.fp);
                exp_progress(&e->ctx, "d=%zu h=%zu n=%zu d_p=%zu %-14s m=%zu: best rel. error %.3g",
                             c->d, c->h, c->n, c->dp, ar_theorem2_model_name(arms[arm]),
                             e->ms[mi], errs[0]);
            }
    if (code == 0)
        code = exp_csv_commit(&e->ctx, &csv);
    exp_csv_abort(&csv);
    free(errs);
    return code;
}

static int run(experiment *e)
{
    e->per_config = 1 + NARMS * e->nms * e->starts;
    size_t nconfigs = e->nconfigs * e->per_config;
    e->fits = calloc(nconfigs, sizeof *e->fits);
    static const char *const files[] = {"theorem2.csv", "theorem2_target.csv"};
    static const char *const headers[] = {
        "d,h,n,d_p,model,heads,head_size,params,inputs,start,seed,rel_error,bfgs_rel_error,"
        "bfgs_iterations,bfgs_status,lm_iterations,lm_status,converged",
        "d,h,n,d_p,input,head,rank_U,rank_VoVv,logit_rank,logit_sigma_last_kept,"
        "logit_sigma_first_cut,library_scores_max_abs_diff"};
    exp_sweep_spec spec = {nconfigs, 2, files, headers, run_one, absorb, cost, describe};
    int code = e->fits != NULL ? exp_sweep_run(&e->ctx, &spec, e)
                               : exp_fail(&e->ctx, AR_ENOMEM, NULL, "allocation");
    if (code == 0)
        code = write_summary(e);
    free(e->fits);
    if (code != 0)
        return code;
    /* gnuplot gets one word list per size: cd='4 6'; ch='2 3'; ... */
    char vars[256], lists[4][48] = {"", "", "", ""};
    for (size_t ci = 0; ci < e->nconfigs; ci++) {
        const config *c = &e->configs[ci];
        size_t v[4] = {c->d, c->h, c->n, c->dp};
        for (int k = 0; k < 4; k++)
            snprintf(lists[k] + strlen(lists[k]), sizeof lists[k] - strlen(lists[k]), "%s%zu",
                     ci ? " " : "", v[k]);
    }
    snprintf(vars, sizeof vars, "cd='%s'; ch='%s'; cn='%s'; cdp='%s'", lists[0], lists[1],
             lists[2], lists[3]);
    static const char *const figs[] = {"theorem2.png", "theorem2.svg"};
    return exp_render(&e->ctx, "theorem2", figs, 2, vars);
}

int main(int argc, char **argv)
{
    static const config configs[] = {{4, 2, 6, 4}, {6, 3, 8, 4}};
    static const size_t quick_ms[] = {1, 2, 4};
    static const size_t full_ms[] = {1, 2, 3, 4, 6, 8};
    experiment e;
    memset(&e, 0, sizeof e);
    static const cli_command_doc doc = {
        EXP_NAME, EXP_NAME " [--quick | --full] [--seed S] [--out DIR] [--figures DIR|none]",
        "Theorem 2 of Bhojanapalli et al. (docs/theory/low-rank-bottleneck.md, sec.\n"
        "3.3) tested numerically: fit a\n"
        "standard MultiHead, a FixedMultiHead and a one-head standard layer to a\n"
        "FixedMultiHead g_V with shared rank-d_p U on m inputs; the standard model's\n"
        "error must stay away from zero while both controls reach it.\n"
        "quick: d=4 h=2 n=6 d_p=4, m in {1,2,4}, 4 starts; full: the same layer,\n"
        "m in {1,2,3,4,6,8}, 12 starts.",
    };
    int code = exp_parse(&e.ctx, &doc, argc, argv, NULL, 0);
    if (code >= 0)
        return code;
    e.configs = configs;
    if (e.ctx.full) {
        e.nconfigs = 1, e.ms = full_ms, e.nms = 6, e.starts = 12, e.max_iter = 5000;
    } else {
        e.nconfigs = 1, e.ms = quick_ms, e.nms = 3, e.starts = 4, e.max_iter = 5000;
    }
    return exp_finish(&e.ctx, run(&e));
}
