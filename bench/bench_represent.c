/* Representability of one n x n target with the default full-rank X
 * (X = I): ar_represent_analyze (minimal head size) plus
 * ar_represent_certificate at that size (W_q, W_k and the forward softmax
 * check), against one thin SVD of an n x n matrix (ar_spectrum_svd), the
 * cost the theory says dominates.  Interleaved, medians.
 *
 * usage: bench_represent [--n N] [--threads T] [--reps R] [--seed S] [--json]
 * Each phase is also timed on its own (workspace, analysis, certificate).
 *
 * A third, bench-only path ("lean") prototypes the cheaper pipeline proposed
 * for the core: the same minimal head size and verified certificate from ONE
 * thin SVD of Pi log P, with ||log P||_2 (which only sets the tolerance) from
 * the arrowhead matrix of that SVD and the column means in O(n^2), and the
 * certificate W = k^(1/4) S^(1/2) U^T (X = I) by scaling instead of a triple
 * loop, and the forward logits W_k^T W_q / sqrt(k) as one GEMM (X = I).  Its minimal head size and threshold must equal the library's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/attnrank.h"
#include "attnrank/bottleneck.h"
#include "bench_common.h"

typedef struct phases {
    double alloc, analyze, certificate, total;
    size_t min_head_size;
    double max_abs;
} phases;

static int time_represent(const ar_matrix *p, phases *ph)
{
    size_t n = p->rows;
    ar_represent_workspace *ws = NULL;
    ar_represent_result res;
    ar_certificate cert;
    ar_error err = {{0}};
    double t0 = bench_now();
    int rc = ar_represent_workspace_alloc(&ws, n, NULL);
    double t1 = bench_now();
    if (rc == AR_OK)
        rc = ar_represent_analyze(ws, ar_matrix_cview(p), NULL, NULL, &res, &err);
    double t2 = bench_now();
    if (rc == AR_OK)
        rc = ar_represent_certificate(ws, 0, &cert, &err);
    double t3 = bench_now();
    if (rc != AR_OK) {
        fprintf(stderr, "bench_represent: %s\n", err.msg[0] ? err.msg : ar_strerror(rc));
        ar_represent_workspace_free(ws);
        return rc;
    }
    ph->alloc = t1 - t0;
    ph->analyze = t2 - t1;
    ph->certificate = t3 - t2;
    ph->total = t3 - t0;
    ph->min_head_size = res.min_head_size;
    ph->max_abs = cert.max_abs;
    ar_certificate_free(&cert);
    ar_represent_workspace_free(ws);
    return AR_OK;
}

/* Largest singular value of L0 = C + e r^T, where C = U S V^T is centred
 * (1^T C = 0, so U is orthogonal to e = 1/sqrt(n)) and r = L0^T e: the
 * singular values of L0 are those of B = [S V^T; r^T], i.e. the square roots
 * of the eigenvalues of the arrowhead [[S^2, w], [w^T, c]], w = S V^T r,
 * c = r^T r.  The largest one is the root above s_1^2 of
 * f(x) = c - x + sum w_i^2 / (x - s_i^2), decreasing there: bisection. */
static double arrowhead_sigma1(const double *s, const ar_matrix *vt, const double *r, double *w,
                               size_t n)
{
    double c = 0.0, total = 0.0;
    for (size_t j = 0; j < n; j++)
        c += r[j] * r[j];
    for (size_t i = 0; i < n; i++) {
        double acc = 0.0;
        for (size_t j = 0; j < n; j++)
            acc += AR_AT(vt, i, j) * r[j];
        w[i] = s[i] * acc;
        total += s[i] * s[i];
    }
    double lo = s[0] * s[0] > c ? s[0] * s[0] : c, hi = total + c;
    for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; it++) {
        double x = 0.5 * (lo + hi), f = c - x;
        for (size_t i = 0; i < n; i++)
            f += w[i] * w[i] / (x - s[i] * s[i]);
        if (f > 0.0)
            lo = x;
        else
            hi = x;
    }
    return sqrt(0.5 * (lo + hi));
}

typedef struct lean_result {
    size_t min_head_size;
    double threshold, max_abs;
} lean_result;

/* The lean pipeline on X = I (column axis, default tolerances). */
static int lean_represent(const ar_matrix *p, lean_result *out)
{
    size_t n = p->rows;
    ar_matrix l0 = ar_matrix_empty(), c = ar_matrix_empty(), u = ar_matrix_empty(),
              vt = ar_matrix_empty(), wq = ar_matrix_empty(), wk = ar_matrix_empty(),
              sc = ar_matrix_empty();
    double *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r), *w = malloc(n * sizeof *w);
    int rc = (s && r && w) ? ar_matrix_alloc(&l0, n, n, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&c, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&u, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&vt, n, n, NULL);
    for (size_t j = 0; rc == AR_OK && j < n; j++) { /* L0 = log P, C = Pi L0, r = L0^T e */
        double mean = 0.0;
        for (size_t i = 0; i < n; i++)
            mean += (AR_AT(&l0, i, j) = log(AR_AT(p, i, j)));
        mean /= (double)n;
        r[j] = mean * sqrt((double)n);
        for (size_t i = 0; i < n; i++)
            AR_AT(&c, i, j) = AR_AT(&l0, i, j) - mean;
    }
    if (rc == AR_OK)
        rc = ar_spectrum_svd(ar_matrix_cview(&c), ar_matrix_view(&u), s, ar_matrix_view(&vt), NULL);
    size_t m = 0;
    if (rc == AR_OK) {
        double rtol = ar_rank_resolve_rtol(NULL, n, n);
        out->threshold = rtol * arrowhead_sigma1(s, &vt, r, w, n);
        while (m < n && s[m] > out->threshold)
            m++;
        out->min_head_size = m;
    }
    size_t k = m > 0 ? m : 1;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&wq, k, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&wk, k, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&sc, n, n, NULL);
    if (rc == AR_OK) {
        double scale = sqrt(sqrt((double)k));
        for (size_t j = 0; j < n; j++)
            for (size_t t = 0; t < m; t++) {
                double st = scale * sqrt(s[t]);
                AR_AT(&wk, t, j) = st * AR_AT(&u, j, t);
                AR_AT(&wq, t, j) = st * AR_AT(&vt, t, j);
            }
        /* Forward check: logits (W_k X)^T (W_q X) / sqrt(k), softmax, compare.
         * With X = I the logits are W_k^T W_q / sqrt(k): one GEMM instead of
         * the three ar_attention_logits runs with a dense identity. */
        rc = ar_matrix_gemm(AR_TRANS, AR_NO_TRANS, 1.0 / sqrt((double)k), ar_matrix_cview(&wk),
                            ar_matrix_cview(&wq), 0.0, ar_matrix_view(&sc), NULL);
    }
    if (rc == AR_OK)
        rc = ar_attention_softmax(ar_matrix_view(&sc), AR_AXIS_COL, NULL);
    if (rc == AR_OK)
        out->max_abs = ar_matrix_max_abs_diff(ar_matrix_cview(&sc), ar_matrix_cview(p));
    free(s);
    free(r);
    free(w);
    ar_matrix_free(&l0);
    ar_matrix_free(&c);
    ar_matrix_free(&u);
    ar_matrix_free(&vt);
    ar_matrix_free(&wq);
    ar_matrix_free(&wk);
    ar_matrix_free(&sc);
    return rc;
}

static double time_lean(const ar_matrix *p, lean_result *lr)
{
    double t0 = bench_now();
    int rc = lean_represent(p, lr);
    double t = bench_now() - t0;
    return rc == AR_OK ? t : -1.0;
}

static double time_svd(const ar_matrix *a, ar_matrix *u, double *s, ar_matrix *vt)
{
    double t0 = bench_now();
    int rc = ar_spectrum_svd(ar_matrix_cview(a), ar_matrix_view(u), s, ar_matrix_view(vt), NULL);
    double t = bench_now() - t0;
    return rc == AR_OK ? t : -1.0;
}

int main(int argc, char **argv)
{
    size_t n = 1024;
    int threads = 0, reps = 5, json = 0;
    unsigned long seed = 3;
    const char *v;
    for (int i = 1; i < argc; i++) {
        if ((v = bench_opt(argc, argv, &i, "--n")))
            n = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--threads")))
            threads = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--reps")))
            reps = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--seed")))
            seed = strtoul(v, NULL, 10);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else {
            fprintf(stderr, "bench_represent: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (reps < 1 || reps > 100 || n < 2) {
        fprintf(stderr, "bench_represent: need --reps in 1..100 and --n >= 2\n");
        return 2;
    }
    if (threads > 0)
        bench_set_blas_threads(threads);
    bench_print_environment(stderr);
    ar_matrix p = ar_matrix_empty(), a = ar_matrix_empty(), u = ar_matrix_empty(),
              vt = ar_matrix_empty();
    double *s = malloc(n * sizeof *s);
    ar_rng *rng = ar_rng_alloc(seed);
    int rc = (s && rng) ? ar_matrix_alloc(&p, n, n, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&a, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&u, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&vt, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_target_generate(AR_TARGET_DIRICHLET, NULL, rng, ar_matrix_view(&p), NULL);
    if (rc != AR_OK) {
        fprintf(stderr, "bench_represent: setup failed: %s\n", ar_strerror(rc));
        return 1;
    }
    if (ar_matrix_fill_gaussian(ar_matrix_view(&a), rng, 1.0, NULL) != AR_OK)
        return 1;
    phases *ph = calloc((size_t)reps, sizeof *ph);
    double *tsvd = calloc((size_t)reps, sizeof *tsvd), *col = calloc((size_t)reps, sizeof *col);
    double *tlean = calloc((size_t)reps, sizeof *tlean);
    lean_result lr = {0, 0.0, 0.0};
    if (!ph || !tsvd || !col || !tlean)
        return 1;
    for (int r = 0; r < reps; r++) { /* interleaved */
        if ((tsvd[r] = time_svd(&a, &u, s, &vt)) < 0.0 || time_represent(&p, &ph[r]) != AR_OK ||
            (tlean[r] = time_lean(&p, &lr)) < 0.0)
            return 1;
    }
    double mlean = bench_median(tlean, (size_t)reps);
    /* The prototype must reach the library's verdict. */
    int lean_agrees = lr.min_head_size == ph[0].min_head_size;
    double med[4];
    for (int k = 0; k < 4; k++) {
        for (int r = 0; r < reps; r++)
            col[r] = k == 0 ? ph[r].alloc : k == 1 ? ph[r].analyze
                                          : k == 2 ? ph[r].certificate : ph[r].total;
        med[k] = bench_median(col, (size_t)reps);
    }
    double msvd = bench_median(tsvd, (size_t)reps);
    if (json) {
        printf("{\"environment\": ");
        bench_print_environment_json(stdout);
        printf(", \"n\": %zu, \"svd_s\": %.6g, \"represent_s\": %.6g, \"ratio\": %.5g, "
               "\"workspace_s\": %.6g, \"analyze_s\": %.6g, \"certificate_s\": %.6g, "
               "\"min_head_size\": %zu, \"certificate_max_abs\": %.3g, \"lean_s\": %.6g, "
               "\"lean_ratio\": %.5g, \"lean_min_head_size\": %zu, \"lean_agrees\": %d, "
               "\"lean_max_abs\": %.3g}\n",
               n, msvd, med[3], med[3] / msvd, med[0], med[1], med[2], ph[0].min_head_size,
               ph[0].max_abs, mlean, mlean / msvd, lr.min_head_size, lean_agrees, lr.max_abs);
    } else {
        printf("n=%zu: represent %.4f s (workspace %.4f, analyze %.4f, certificate %.4f), "
               "one thin SVD %.4f s, ratio %.3f\n",
               n, med[3], med[0], med[1], med[2], msvd, med[3] / msvd);
        printf("  minimal head size %zu, certificate max |softmax(S) - P| = %.2e\n",
               ph[0].min_head_size, ph[0].max_abs);
        printf("  lean prototype: %.4f s, ratio %.3f, minimal head size %zu (%s), max |err| %.2e\n",
               mlean, mlean / msvd, lr.min_head_size, lean_agrees ? "agrees" : "DIFFERS",
               lr.max_abs);
    }
    free(ph);
    free(tsvd);
    free(col);
    free(tlean);
    free(s);
    ar_rng_free(rng);
    ar_matrix_free(&p);
    ar_matrix_free(&a);
    ar_matrix_free(&u);
    ar_matrix_free(&vt);
    return 0;
}
