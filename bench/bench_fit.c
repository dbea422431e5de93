/* The probability-space fit below the minimal head size (ar_fit_lowrank,
 * what `attnrank represent --head-size K` runs) against one thin SVD of an
 * n x n matrix (a copy of the column-centred log of the same target, then
 * LAPACKE_dgesdd with jobz 'S'), interleaved in one process.
 *
 * Two fits of each target, both from the same jittered truncated-SVD start
 * (seed 0, the defaults of ar_fit_opts_init):
 *   - lbfgs: the default method (L-BFGS, More-Thuente line search), at most
 *     --max-iter iterations (default 400, the library's default);
 *   - gsl:   GSL's vector_bfgs2 with its default 400 iterations, the method
 *     the fit used before (no longer public: the internal reference of
 *     theory/bottleneck/bottleneck_fit_gsl.h, line tolerance 0.1); it is deterministic
 *     and slow, so it runs --gsl-reps times (default 1; 0 skips it) and its
 *     median is reported.
 * Each timed fit includes the workspace allocation and the fit's own SVD
 * (ar_fit_workspace_alloc, ar_fit_lowrank or ar_fit_lowrank_gsl_bfgs2,
 * ar_fit_workspace_free; GSL's minimiser state is allocated per fit).  The
 * L-BFGS run also records, through the progress callback, the first
 * iteration whose objective (the mean KL) is at or below GSL's final KL.
 *
 * usage: bench_fit [n ...] [--k K] [--family dirichlet|lowrank|all]
 *                  [--rank R] [--reps R] [--gsl-reps G] [--threads T]
 *                  [--max-iter N] [--f-tol F] [--memory M] [--seed S]
 *                  [--scale-ridge R] [--goal KL] [--json]
 *   n           sizes (default 1024)
 *   --k         head size of the fit (default 64)
 *   --family    target family of ar_target_generate (default all: both)
 *   --rank      planted logit rank of the lowrank family (default 2k, so
 *               that the minimal head size exceeds k)
 *   --threads   BLAS threads (openblas_set_num_threads; default 1)
 *   --memory    L-BFGS correction pairs (default: the library's, 8)
 *   --f-tol     the L-BFGS option f_tol (default 0, the library's: off)
 *   --scale-ridge  the fit option scale_ridge (default: the library's, 0:
 *               off; e.g. 1e-2 for the per-column scaling of H0)
 *   --goal      with --gsl-reps 0: the KL whose first crossing is reported
 *               (a GSL KL from an earlier run; one family at a time)
 *
 * Target (docs/performance.md, "Probability-space fit"): at n = 1024,
 * k = 64, the lbfgs fit within 10x the SVD and its KL no worse than gsl's. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/attnrank.h"
#include "attnrank/bottleneck.h"
#include "bench_common.h"
#include "theory/bottleneck/bottleneck_fit_gsl.h"

typedef struct bench_cfg {
    size_t k, rank, max_iter, memory;
    double f_tol;
    double scale_ridge; /* --scale-ridge (negative: the library's default) */
    double goal; /* --goal: the KL to reach when GSL does not run (0: none) */
    int reps, gsl_reps; /* gsl_reps 0: no GSL fit (--gsl-reps 0) */
    unsigned long seed;
} bench_cfg;

typedef struct fit_run {
    double wall, cpu;
    ar_fit_result res;
} fit_run;

/* Progress callback state: the first iteration at or below a given KL. */
typedef struct reach {
    double goal, t0;
    size_t iteration;
    double seconds;
} reach;

static int on_progress(const ar_fit_progress *p, void *ctx)
{
    reach *r = ctx;
    if (r->iteration == 0 && p->objective <= r->goal) {
        r->iteration = p->iteration;
        r->seconds = bench_now() - r->t0;
    }
    return 0;
}

/* gsl: the GSL reference instead of the library's fit. */
static int time_fit(const ar_matrix *p, const ar_fit_opts *o, int gsl, fit_run *out)
{
    ar_fit_workspace *ws = NULL;
    ar_error err = {{0}};
    double c0 = bench_cpu_now(), t0 = bench_now();
    int rc = ar_fit_workspace_alloc(&ws, p->rows, NULL);
    if (rc == AR_OK)
        rc = gsl ? ar_fit_lowrank_gsl_bfgs2(ws, ar_matrix_cview(p), out->res.k, o,
                                            AR_FIT_GSL_LINE_TOL, &out->res, &err)
                 : ar_fit_lowrank(ws, ar_matrix_cview(p), out->res.k, o, &out->res, &err);
    ar_fit_workspace_free(ws);
    out->wall = bench_now() - t0;
    out->cpu = bench_cpu_now() - c0;
    if (rc != AR_OK)
        fprintf(stderr, "bench_fit: fit failed: %s\n", err.msg[0] ? err.msg : ar_strerror(rc));
    return rc;
}

/* The reference: copy, then LAPACKE_dgesdd 'S' (it allocates its workspace
 * per call, as the fit's SVD does). */
static int time_svd(const ar_matrix *a, double *copy, double *s, double *u, double *vt,
                    double *wall, double *cpu)
{
    lapack_int n = (lapack_int)a->rows;
    double c0 = bench_cpu_now(), t0 = bench_now();
    memcpy(copy, a->data, (size_t)n * (size_t)n * sizeof *copy);
    lapack_int info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'S', n, n, copy, n, s, u, n, vt, n);
    *wall = bench_now() - t0;
    *cpu = bench_cpu_now() - c0;
    return info == 0 ? 0 : 1;
}

static void centred_log(const ar_matrix *p, ar_matrix *l)
{
    for (size_t j = 0; j < p->cols; j++) {
        double mean = 0.0;
        for (size_t i = 0; i < p->rows; i++)
            mean += log(AR_AT(p, i, j)) / (double)p->rows;
        for (size_t i = 0; i < p->rows; i++)
            AR_AT(l, i, j) = log(AR_AT(p, i, j)) - mean;
    }
}

/* A JSON number, or null when not finite (no GSL run, never reached). */
static const char *json_num(char *buf, double v)
{
    if (!isfinite(v))
        return "null";
    snprintf(buf, 32, "%.17g", v);
    return buf;
}

static double med(double *v, size_t n)
{
    return bench_median(v, n);
}

/* One (n, family): returns 0 on success. */
static int bench_one(size_t n, ar_target_family fam, const bench_cfg *cfg, int json, int first)
{
    ar_target_opts to;
    ar_target_opts_init(&to);
    to.rank = cfg->rank;
    ar_matrix p = ar_matrix_empty(), l = ar_matrix_empty();
    size_t nn = n * n;
    double *copy = malloc(nn * sizeof(double)), *u = malloc(nn * sizeof(double));
    double *vt = malloc(nn * sizeof(double)), *s = malloc(n * sizeof(double));
    size_t r = (size_t)cfg->reps, g = (size_t)cfg->gsl_reps;
    double *t[8];
    for (size_t i = 0; i < 8; i++)
        t[i] = calloc(r > g ? r : g, sizeof(double));
    double *svd_w = t[0], *svd_c = t[1], *lb_w = t[2], *lb_c = t[3], *gs_w = t[4], *gs_c = t[5];
    int bad = copy == NULL || u == NULL || vt == NULL || s == NULL ||
              ar_matrix_alloc(&p, n, n, NULL) != AR_OK || ar_matrix_alloc(&l, n, n, NULL) != AR_OK;
    for (size_t i = 0; i < 8; i++)
        bad |= t[i] == NULL;
    ar_rng *rng = bad ? NULL : ar_rng_alloc(cfg->seed + n + 1000u * (unsigned)fam);
    if (rng == NULL || ar_target_generate(fam, &to, rng, ar_matrix_view(&p), NULL) != AR_OK) {
        fprintf(stderr, "bench_fit: cannot set up n = %zu\n", n);
        bad = 1;
    }
    if (!bad)
        centred_log(&p, &l);
    ar_fit_opts lo, go;
    ar_fit_opts_init(&lo);
    ar_fit_opts_init(&go);
    lo.max_iter = cfg->max_iter;
    if (cfg->memory > 0)
        lo.lbfgs_memory = cfg->memory;
    lo.f_tol = cfg->f_tol;
    if (cfg->scale_ridge >= 0.0)
        lo.scale_ridge = cfg->scale_ridge;
    /* go: the GSL reference with the default 400 iterations */
    fit_run lb = {0}, gs = {0};
    lb.res.k = gs.res.k = cfg->k;
    /* GSL first: its KL is the goal the L-BFGS progress is compared with */
    for (size_t i = 0; !bad && i < g; i++) {
        gs.res.k = cfg->k;
        bad |= time_fit(&p, &go, 1, &gs) != AR_OK;
        gs_w[i] = gs.wall;
        gs_c[i] = gs.cpu;
    }
    reach rc = {g > 0 ? gs.res.kl_mean : cfg->goal > 0.0 ? cfg->goal : -1.0, 0.0, 0, 0.0};
    lo.progress = on_progress;
    lo.progress_ctx = &rc;
    for (size_t i = 0; !bad && i < r; i++) { /* interleaved: the machine is shared */
        bad |= time_svd(&l, copy, s, u, vt, &svd_w[i], &svd_c[i]);
        rc.iteration = 0;
        rc.seconds = 0.0;
        rc.t0 = bench_now();
        lb.res.k = cfg->k;
        bad |= time_fit(&p, &lo, 0, &lb) != AR_OK;
        lb_w[i] = lb.wall;
        lb_c[i] = lb.cpu;
    }
    if (!bad) {
        const char *fname = ar_target_family_name(fam);
        double sw = med(svd_w, r), sc = med(svd_c, r), lw = med(lb_w, r), lc = med(lb_c, r);
        double gw = g > 0 ? med(gs_w, g) : NAN, gc = g > 0 ? med(gs_c, g) : NAN;
        const ar_fit_result *a = &lb.res, *b = &gs.res;
        int met = g > 0 && lw / sw <= 10.0 && a->kl_mean <= b->kl_mean;
        double gkl = g > 0 ? b->kl_mean : NAN;
        double reach_ratio = rc.iteration > 0 ? rc.seconds / sw : NAN;
        int met_reach = rc.iteration > 0 && reach_ratio <= 10.0;
        if (json) {
            char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32];
            printf("%s  {\"n\": %zu, \"family\": \"%s\", \"k\": %zu, \"rank\": %zu, \"threads\": "
                   "%d, \"reps\": %d, \"gsl_reps\": %d, \"max_iter\": %zu, \"f_tol\": %g, \"scale_ridge\": %g, "
                   "\"svd_s\": %.6g, \"svd_cpu_s\": %.6g, \"lbfgs_s\": %.6g, \"lbfgs_cpu_s\": "
                   "%.6g, \"gsl_s\": %s, \"gsl_cpu_s\": %s, \"ratio\": %.5g, \"cpu_ratio\": %.5g, "
                   "\"gsl_ratio\": %s, \"speedup\": %s, \"lbfgs_kl\": %.17g, \"gsl_kl\": %s, "
                   "\"start_kl\": %.17g, \"lbfgs_iterations\": %zu, \"lbfgs_evaluations\": %zu, "
                   "\"lbfgs_stop\": \"%s\", \"gsl_iterations\": %zu, \"gsl_evaluations\": %zu, "
                   "\"reach_iteration\": %zu, \"reach_s\": %s, \"reach_ratio\": %s, "
                   "\"target_met\": %d, \"reach_target_met\": %d}",
                   first ? "" : ",\n", n, fname, cfg->k,
                   fam == AR_TARGET_LOWRANK_LOGITS ? cfg->rank : 0, bench_blas_threads(),
                   cfg->reps, cfg->gsl_reps, cfg->max_iter, cfg->f_tol, lo.scale_ridge, sw, sc, lw, lc,
                   json_num(b1, gw), json_num(b2, gc), lw / sw, lc / sc, json_num(b3, gw / sw),
                   json_num(b4, gw / lw), a->kl_mean, json_num(b5, gkl), a->start_kl_mean,
                   a->iterations, a->evaluations, ar_fit_stop_name(a->stop), b->iterations,
                   b->evaluations, rc.iteration,
                   json_num(b6, rc.iteration > 0 ? rc.seconds : NAN), json_num(b7, reach_ratio),
                   met, met_reach);
        } else {
            printf("%5zu %-9s %3zu %7.3f %8.3f %6.2f %6.2f %8.2f %6.1f %14.10f %14.10f %4zu/%-4zu "
                   "%4zu/%-5zu %5zu %7.3f %6.2f %-6s %s\n",
                   n, fname, cfg->k, sw, lw, lw / sw, lc / sc, gw, gw / sw, a->kl_mean, gkl,
                   a->iterations, a->evaluations, b->iterations, b->evaluations, rc.iteration,
                   rc.seconds, reach_ratio, met ? "met" : "MISSED", met_reach ? "met" : "MISSED");
        }
        fflush(stdout);
    }
    ar_rng_free(rng);
    ar_matrix_free(&p);
    ar_matrix_free(&l);
    free(copy);
    free(u);
    free(vt);
    free(s);
    for (size_t i = 0; i < 8; i++)
        free(t[i]);
    return bad;
}

int main(int argc, char **argv)
{
    bench_cfg cfg = {64, 0, 400, 0, 0.0, -1.0, 0.0, 3, 1, 1};
    size_t sizes[16], nsizes = 0;
    int threads = 1, json = 0, fams = 3; /* bit 0 dirichlet, bit 1 lowrank */
    const char *v;
    for (int i = 1; i < argc; i++) {
        if ((v = bench_opt(argc, argv, &i, "--k")))
            cfg.k = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--rank")))
            cfg.rank = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--reps")))
            cfg.reps = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--gsl-reps")))
            cfg.gsl_reps = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--threads")))
            threads = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--max-iter")))
            cfg.max_iter = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--f-tol")))
            cfg.f_tol = strtod(v, NULL);
        else if ((v = bench_opt(argc, argv, &i, "--scale-ridge")))
            cfg.scale_ridge = strtod(v, NULL);
        else if ((v = bench_opt(argc, argv, &i, "--goal")))
            cfg.goal = strtod(v, NULL);
        else if ((v = bench_opt(argc, argv, &i, "--memory")))
            cfg.memory = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--seed")))
            cfg.seed = strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--family")))
            fams = strcmp(v, "dirichlet") == 0 ? 1 : strcmp(v, "lowrank") == 0 ? 2 : 3;
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (argv[i][0] != '-' && nsizes < 16)
            sizes[nsizes++] = (size_t)strtoul(argv[i], NULL, 10);
        else {
            fprintf(stderr, "bench_fit: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (nsizes == 0)
        sizes[nsizes++] = 1024;
    if (cfg.rank == 0)
        cfg.rank = 2 * cfg.k;
    if (cfg.reps < 1 || cfg.reps > 1000 || cfg.gsl_reps < 0 || cfg.gsl_reps > 1000 ||
        cfg.k == 0 || threads < 1) {
        fprintf(stderr, "bench_fit: --reps in 1..1000, --gsl-reps in 0..1000, --k and --threads "
                        ">= 1\n");
        return 2;
    }
    for (size_t t = 0; t < nsizes; t++)
        if (sizes[t] <= cfg.k + 1) {
            fprintf(stderr, "bench_fit: n = %zu must exceed k + 1 = %zu\n", sizes[t], cfg.k + 1);
            return 2;
        }
    bench_set_blas_threads(threads);
    bench_print_environment(stderr);
    if (json) {
        printf("{\"environment\": ");
        bench_print_environment_json(stdout);
        printf(",\n\"results\": [\n");
    } else {
        printf("# times: medians in seconds (svd and lbfgs over --reps %d interleaved runs, gsl "
               "over --gsl-reps %d); ratio = lbfgs / svd (wall), cpu = the same in CPU time;\n"
               "# reach: first L-BFGS iteration at or below gsl's KL, reach_s its time from the "
               "start of the fit, reach_x = reach_s / svd;\n# target: lbfgs <= 10 svd with a KL <= "
               "gsl's (default run), and reach_x <= 10\n",
               cfg.reps, cfg.gsl_reps);
        printf("%5s %-9s %3s %7s %8s %6s %6s %8s %6s %14s %14s %9s %10s %5s %7s %6s %-6s %s\n",
               "n", "family", "k", "svd_s", "lbfgs_s", "ratio", "cpu", "gsl_s", "gsl_x",
               "kl_lbfgs", "kl_gsl", "it/ev", "gsl it/ev", "reach", "reach_s", "reach_x",
               "target", "reach");
    }
    int failed = 0, first = 1;
    for (size_t t = 0; t < nsizes; t++)
        for (int f = 0; f < 2; f++) {
            if (!(fams & (1 << f)))
                continue;
            ar_target_family fam = f == 0 ? AR_TARGET_DIRICHLET : AR_TARGET_LOWRANK_LOGITS;
            failed |= bench_one(sizes[t], fam, &cfg, json, first);
            first = 0;
        }
    if (json)
        printf("\n]}\n");
    return failed;
}
