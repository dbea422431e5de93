/* Where the default innovation tolerance of the causal analysis sits between
 * the two populations of column residuals of the staircase greedy.
 *
 * usage: bench_masked_tolerance [--n N ...] [--seeds K] [--scale S] [--quick]
 *                               [--structured-n N] [--only MAP] [--prec f64|f32]
 *                               [--threads T] [--json]
 *   --only   generic, planted5, planted32 or structured (default: all)
 *   --seeds-large K  maps per size >= 4096 (default 1: a generic one takes a minute)
 *   --prec   one storage precision only (default: both)
 *   --residuals DIR  also write every column's residual (column, rows
 *            specified, residual, counted) per map to DIR/MAP-rR-PREC-nN-sS.txt
 *
 * For each causal map P (rows as queries) the public analysis
 * (ar_masked_analyze, mask "causal", default options but the storage
 * precision) gives tau, the largest residual NOT counted as innovative
 * (max_not_innovative) and the smallest counted (min_innovative).  The same
 * greedy is rerun on the same D (shift removal on key 0, as the analysis
 * does) with the per-column residuals kept, so the whole populations are
 * seen: how many residuals lie within a factor 100 of tau, and the median
 * of each side.  Margins printed: min_innovative / tau and
 * tau / max_not_innovative (a margin below 1 means a misclassification at
 * the default; 'inf' when a side is empty or exactly 0).
 *
 * Maps (logits S, P = causal row softmax of S):
 *   generic      S ~ N(0, scale^2) i.i.d.; expected head size floor(n/2)
 *   planted r    S = scale A B^T / sqrt(r), A, B n x r N(0, 1); expected r
 *                (when r <= n/2)
 *   self         S = 3 I (attend to oneself); expected n - 1
 *   prev         S = 3 [j = i - 1] (previous token); expected n - 2
 * each in float64 (AR_PREC_F64) and rounded to float32 and back
 * (P.astype(float32), AR_PREC_F32).  Default sizes 64, 256, 1024, 4096
 * (--quick: up to 1024), --seeds maps per size below 4096 (default 3; one
 * at 4096), the structured heads at --structured-n (default 1024). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CBLAS declarations from GSL's header: <cblas.h> clashes with the GSL headers
 * attnrank.h includes; the symbols bind to OpenBLAS (linked before GSL). */
#include <gsl/gsl_cblas.h>

#include "attnrank/attnrank.h"
#include "bench_common.h"
/* reruns the staircase greedy, which has no public entry */
#include "theory/masked/masked_internal.h"

typedef enum map_kind { MAP_GENERIC, MAP_PLANTED, MAP_SELF, MAP_PREV } map_kind;

static const char *kind_name(map_kind k)
{
    return k == MAP_GENERIC ? "generic" : k == MAP_PLANTED ? "planted" : k == MAP_SELF ? "self"
                                                                                       : "prev";
}

/* Row-query logits of the map. */
static int make_logits(ar_matrix *s, size_t n, map_kind kind, size_t r, double scale,
                       uint64_t seed)
{
    int rc = ar_matrix_alloc(s, n, n, NULL);
    if (rc != AR_OK)
        return rc;
    if (kind == MAP_SELF || kind == MAP_PREV) {
        for (size_t i = 0; i < n; i++)
            if (kind == MAP_SELF)
                AR_AT(s, i, i) = 3.0;
            else if (i > 0)
                AR_AT(s, i, i - 1) = 3.0;
        return AR_OK;
    }
    ar_rng *rng = ar_rng_alloc(seed);
    if (kind == MAP_GENERIC) {
        rc = ar_matrix_fill_gaussian(ar_matrix_view(s), rng, scale, NULL);
        ar_rng_free(rng);
        return rc;
    }
    ar_matrix a = ar_matrix_empty(), b = ar_matrix_empty();
    rc = ar_matrix_alloc(&a, n, r, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&b, n, r, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_fill_gaussian(ar_matrix_view(&a), rng, 1.0, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_fill_gaussian(ar_matrix_view(&b), rng, 1.0, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_gemm(AR_NO_TRANS, AR_TRANS, scale / sqrt((double)r), ar_matrix_cview(&a),
                            ar_matrix_cview(&b), 0.0, ar_matrix_view(s), NULL);
    ar_matrix_free(&a);
    ar_matrix_free(&b);
    ar_rng_free(rng);
    return rc;
}

/* P = causal row softmax of S, optionally rounded to float32. */
static void causal_softmax(const ar_matrix *s, int f32, ar_matrix *p)
{
    size_t n = s->rows;
    for (size_t i = 0; i < n; i++) {
        double top = -INFINITY, z = 0.0;
        for (size_t j = 0; j <= i; j++)
            top = AR_AT(s, i, j) > top ? AR_AT(s, i, j) : top;
        for (size_t j = 0; j <= i; j++)
            z += exp(AR_AT(s, i, j) - top);
        for (size_t j = 0; j < n; j++) {
            double v = j <= i ? exp(AR_AT(s, i, j) - top) / z : 0.0;
            AR_AT(p, i, j) = f32 ? (double)(float)v : v;
        }
    }
}

/* ---- bench-only prototype of a per-column tolerance ----
 *
 * A copy of the fast greedy of src/theory/masked/masked_staircase.c (orthonormal
 * active basis U, Householder row deletion, retirement below RETIRE_NORM)
 * without V, which also tracks T with U = D[:, innovations] T on the
 * active rows, so the coefficients of column c on the innovative DATA
 * columns, a_c = T x_c, are known.  Noise of size delta per entry of D
 * reaches the residual of column c as about
 *     delta sqrt(max(1, len_c - k_c)) sqrt(1 + |a_c|^2)
 * (len_c specified rows, k_c active basis vectors): the column's own noise
 * in the len - k directions the projection keeps, plus the noise carried in
 * by the basis, amplified by the coefficients.  The rule tried here:
 *     tau_c = max(floor, kappa u s sqrt(max(1, len_c - k_c)) sqrt(1 + |a_c|^2)),
 * kappa = 10, u = eps(storage) / 2, s = max(1, max |log P|), floor =
 * 1e-9 s (the default's floor).  It replaces both the plain test against
 * tau and the library's former second look at residuals within 1e4 tau.
 * With per_column = 0 the copy makes the library's decisions
 * (ar_staircase_column_tau: tau raised by the column's amplification) and
 * must reproduce its residuals exactly. */
#define PROTO_RETIRE_NORM 1e-8

typedef struct proto {
    ar_matrix u, t;           /* rows x cap, cap x cap */
    size_t rows, cap, rank, active, sel;
    double *work;             /* rows + 3 cap + 2 */
} proto;

static void proto_reflect(ar_matrix *m, size_t rows, size_t k, const double *h, double beta,
                          double *tmp)
{
    if (rows == 0)
        return;
    cblas_dgemv(CblasColMajor, CblasNoTrans, (int)rows, (int)k, 1.0, m->data, (int)m->ld, h, 1,
                0.0, tmp, 1);
    cblas_dger(CblasColMajor, (int)rows, (int)k, -beta, tmp, 1, h, 1, m->data, (int)m->ld);
}

static void proto_swap(proto *s, size_t a, size_t b)
{
    if (a == b)
        return;
    cblas_dswap((int)s->rows, &AR_AT(&s->u, 0, a), 1, &AR_AT(&s->u, 0, b), 1);
    cblas_dswap((int)s->cap, &AR_AT(&s->t, 0, a), 1, &AR_AT(&s->t, 0, b), 1);
}

static void proto_reorthogonalise(proto *s, size_t a, size_t from)
{
    size_t len = s->rows - from, k = s->active;
    double *alpha = s->work;
    cblas_dgemv(CblasColMajor, CblasTrans, (int)len, (int)k, 1.0, &AR_AT(&s->u, from, 0),
                (int)s->u.ld, &AR_AT(&s->u, from, a), 1, 0.0, alpha, 1);
    alpha[a] = 0.0;
    cblas_dgemv(CblasColMajor, CblasNoTrans, (int)s->rows, (int)k, -1.0, s->u.data,
                (int)s->u.ld, alpha, 1, 1.0, &AR_AT(&s->u, 0, a), 1);
    cblas_dgemv(CblasColMajor, CblasNoTrans, (int)s->sel, (int)k, -1.0, s->t.data,
                (int)s->t.ld, alpha, 1, 1.0, &AR_AT(&s->t, 0, a), 1);
}

static void proto_drop_row(proto *s, size_t t)
{
    size_t k = s->active;
    if (k == 0)
        return;
    double *h = s->work + s->rows, *tmp = s->work;
    for (size_t j = 0; j < k; j++)
        h[j] = AR_AT(&s->u, t, j);
    double norm = cblas_dnrm2((int)k, h, 1);
    if (norm == 0.0)
        return;
    if (k > 1) {
        double alpha = h[0] >= 0.0 ? -norm : norm;
        h[0] -= alpha;
        double beta = 1.0 / (norm * (norm + fabs(AR_AT(&s->u, t, 0))));
        proto_reflect(&s->u, s->rows, k, h, beta, tmp);
        proto_reflect(&s->t, s->sel, k, h, beta, tmp);
    }
    size_t below = s->rows - t - 1;
    double rest = below > 0 ? cblas_dnrm2((int)below, &AR_AT(&s->u, t + 1, 0), 1) : 0.0;
    if (rest > PROTO_RETIRE_NORM) {
        if (rest < 0.5) {
            proto_reorthogonalise(s, 0, t + 1);
            rest = cblas_dnrm2((int)below, &AR_AT(&s->u, t + 1, 0), 1);
        }
        cblas_dscal((int)s->rows, 1.0 / rest, &AR_AT(&s->u, 0, 0), 1);
        cblas_dscal((int)s->sel, 1.0 / rest, &AR_AT(&s->t, 0, 0), 1);
        return;
    }
    proto_swap(s, 0, k - 1);
    s->active--;
}

typedef struct proto_rule {
    int per_column;           /* 0: tau for every column (the default) */
    double tau;               /* the default's tau */
    double kappa_us, floor;   /* kappa u s and the floor of the per-column rule */
} proto_rule;

/* One column: residual, amplification sqrt(1 + |a|^2), threshold, decision. */
static int proto_column(proto *s, const ar_matrix *d, size_t c, size_t k0, const proto_rule *rl,
                        double *resid, double *amp, double *tau_c, int *innov)
{
    size_t len = s->rows - k0, k = s->active;
    double *z = s->work, *x = s->work + s->rows, *x2 = x + s->cap + 1;
    memcpy(z, &AR_AT(d, k0, c), len * sizeof *z);
    memset(x, 0, (k + 1) * sizeof *x);
    for (int pass = 0; pass < 2 && k > 0; pass++) {
        cblas_dgemv(CblasColMajor, CblasTrans, (int)len, (int)k, 1.0, &AR_AT(&s->u, k0, 0),
                    (int)s->u.ld, z, 1, 0.0, x2, 1);
        cblas_dgemv(CblasColMajor, CblasNoTrans, (int)len, (int)k, -1.0, &AR_AT(&s->u, k0, 0),
                    (int)s->u.ld, x2, 1, 1.0, z, 1);
        cblas_daxpy((int)k, 1.0, x2, 1, x, 1);
    }
    double norm = len > 0 ? cblas_dnrm2((int)len, z, 1) : 0.0;
    /* a = T[:, 0:k] x: coefficients on the innovative data columns */
    double *a = x2;
    if (k > 0 && s->sel > 0)
        cblas_dgemv(CblasColMajor, CblasNoTrans, (int)s->sel, (int)k, 1.0, s->t.data,
                    (int)s->t.ld, x, 1, 0.0, a, 1);
    double an = k > 0 && s->sel > 0 ? cblas_dnrm2((int)s->sel, a, 1) : 0.0;
    double dof = len > k ? (double)(len - k) : 1.0;
    *resid = norm;
    *amp = sqrt(1.0 + an * an);
    /* the default: the library's decision (ar_staircase_column_tau); the
     * prototype: its own floor and noise level */
    *tau_c = rl->per_column ? fmax(rl->floor, rl->kappa_us * sqrt(dof) * *amp)
                            : ar_staircase_column_tau(rl->tau, s->rows, len, k, an);
    *innov = norm > *tau_c;
    if (!*innov)
        return AR_OK;
    if (s->rank == s->cap)
        return AR_ESIZE;
    proto_swap(s, k, s->rank);
    for (size_t i = 0; i < s->rows; i++)
        AR_AT(&s->u, i, k) = i < k0 ? 0.0 : z[i - k0] / norm;
    /* new basis vector (d_c - U x) / norm = D_sel [(-T x); 1] / norm */
    for (size_t i = 0; i < s->cap; i++)
        AR_AT(&s->t, i, k) = i < s->sel ? -a[i] / norm : i == s->sel ? 1.0 / norm : 0.0;
    s->sel++;
    s->rank++;
    s->active++;
    return AR_OK;
}

typedef struct proto_out {
    size_t rank;
    double min_ratio_innov;   /* min resid / tau_c over innovative columns (inf: none) */
    double min_ratio_not;     /* min tau_c / resid over the others (inf: none or all 0) */
    double max_amp;
} proto_out;

static int proto_run(const ar_matrix *d, const size_t *start, const proto_rule *rl,
                     proto_out *out, double *resid, double *amp, double *tau_c,
                     unsigned char *flag)
{
    size_t rows = d->rows, cols = d->cols, cap = rows < cols ? rows : cols;
    proto s;
    memset(&s, 0, sizeof s);
    s.rows = rows;
    s.cap = cap;
    int rc = ar_matrix_alloc(&s.u, rows, cap, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&s.t, cap, cap, NULL);
    s.work = malloc((rows + 3 * cap + 2) * sizeof *s.work);
    if (rc == AR_OK && s.work == NULL)
        rc = AR_ENOMEM;
    out->rank = 0;
    out->min_ratio_innov = INFINITY;
    out->min_ratio_not = INFINITY;
    out->max_amp = 0.0;
    size_t dropped = 0;
    for (size_t c = 0; c < cols && rc == AR_OK; c++) {
        for (; dropped < start[c]; dropped++)
            proto_drop_row(&s, dropped);
        int innov;
        rc = proto_column(&s, d, c, start[c], rl, &resid[c], &amp[c], &tau_c[c], &innov);
        flag[c] = (unsigned char)innov;
        out->max_amp = fmax(out->max_amp, amp[c]);
        if (innov)
            out->min_ratio_innov = fmin(out->min_ratio_innov, resid[c] / tau_c[c]);
        else if (resid[c] > 0.0)
            out->min_ratio_not = fmin(out->min_ratio_not, tau_c[c] / resid[c]);
    }
    out->rank = s.rank;
    ar_matrix_free(&s.u);
    ar_matrix_free(&s.t);
    free(s.work);
    return rc;
}

typedef struct tol_row {
    map_kind kind;
    size_t n, r, expected;
    int f32, seed;
    double scale, log_max_abs;
    double tau, max_not, min_innov;    /* from the analysis */
    size_t head, greedy_rank;
    int exact;
    double med_not, med_innov;         /* medians of the two populations (greedy rerun) */
    size_t near_tau;                   /* residuals in [tau / 100, 100 tau] */
    size_t n_not, n_innov;
    int agree;                         /* the rerun's extremes equal the analysis's */
    int proto_agree;                   /* the prototype copy with the default tau: the same */
    proto_out prop;                    /* the prototype with the per-column rule */
    double greedy_s, rule_s;           /* the library's greedy alone, the prototype's rule run */
    double seconds;
} tol_row;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, size_t k)
{
    if (k == 0)
        return NAN;
    qsort(v, k, sizeof *v, cmp_d);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

static const char *residual_dir = NULL;

static void dump_residuals(const tol_row *w, const double *pr, const unsigned char *flag,
                           size_t cols)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-r%zu-%s-n%zu-s%d.txt", residual_dir, kind_name(w->kind),
             w->r, w->f32 ? "f32" : "f64", w->n, w->seed);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "bench_masked_tolerance: cannot write %s\n", path);
        return;
    }
    fprintf(f, "# tau = %.6g; column rows | library: residual counted | rule: residual "
               "amplification tau_c counted\n", w->tau);
    for (size_t c = 0; c < cols; c++)
        fprintf(f, "%zu %zu %.6e %d %.6e %.6e %.6e %d\n", c, w->n - 1 - c, pr[c], flag[c],
                pr[3 * cols + c], pr[4 * cols + c], pr[5 * cols + c], flag[cols + c]);
    fclose(f);
}

/* The greedy rerun on D with every column's residual. */
static int residual_populations(const ar_matrix *p, double tau, tol_row *out)
{
    size_t n = p->rows, cols = n - 1;
    ar_matrix d = ar_matrix_empty(), u = ar_matrix_empty(), v = ar_matrix_empty();
    size_t *start = malloc(cols * sizeof *start);
    double *resid = malloc(cols * sizeof *resid), *lo = malloc(cols * sizeof *lo),
           *hi = malloc(cols * sizeof *hi), *pr = malloc(6 * cols * sizeof *pr);
    unsigned char *flag = malloc(2 * cols);
    int rc = start && resid && lo && hi && pr && flag ? ar_matrix_alloc(&d, n, cols, NULL)
                                                      : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&u, n, cols, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&v, cols, cols, NULL);
    for (size_t c = 0; rc == AR_OK && c < cols; c++) {
        start[c] = c + 1;
        for (size_t i = c + 1; i < n; i++)
            AR_AT(&d, i, c) = log(AR_AT(p, i, c + 1)) - log(AR_AT(p, i, 0));
    }
    /* the library's greedy on the same D (must match the analysis) */
    ar_staircase_result sr;
    double t0 = bench_now();
    if (rc == AR_OK)
        rc = ar_staircase_complete(&d, start, tau, &u, &v, resid, &sr);
    out->greedy_s = bench_now() - t0;
    if (rc == AR_OK) {
        out->greedy_rank = sr.rank;
        out->agree = sr.rank == out->head && sr.max_not_innovative == out->max_not &&
                     sr.min_innovative == out->min_innov;
    }
    /* the prototype with the library's decisions (must reproduce its
     * residuals; gives each column's decision), then with the rule */
    proto_rule rl = {0, tau, 0.0, 0.0};
    proto_out po;
    if (rc == AR_OK)
        rc = proto_run(&d, start, &rl, &po, pr, pr + cols, pr + 2 * cols, flag);
    if (rc == AR_OK) {
        int same = po.rank == out->greedy_rank;
        for (size_t c = 0; c < cols; c++)
            same &= pr[c] == resid[c];
        out->proto_agree = same;
        size_t a = 0, b = 0;
        out->near_tau = 0;
        for (size_t c = 0; c < cols; c++) {
            if (flag[c])
                hi[b++] = resid[c];
            else
                lo[a++] = resid[c];
            out->near_tau += resid[c] >= tau / 100.0 && resid[c] <= tau * 100.0;
        }
        out->n_not = a;
        out->n_innov = b;
        out->med_not = median_of(lo, a);
        out->med_innov = median_of(hi, b);
        double sc = out->log_max_abs > 1.0 ? out->log_max_abs : 1.0;
        double unit = ar_precision_eps(out->f32 ? AR_PREC_F32 : AR_PREC_F64) / 2.0;
        proto_rule rule = {1, tau, 10.0 * unit * sc, 1e-9 * sc};
        t0 = bench_now();
        rc = proto_run(&d, start, &rule, &out->prop, pr + 3 * cols, pr + 4 * cols, pr + 5 * cols,
                       flag + cols);
        out->rule_s = bench_now() - t0;
    }
    if (rc == AR_OK && residual_dir != NULL)
        dump_residuals(out, pr, flag, cols);
    ar_matrix_free(&d);
    ar_matrix_free(&u);
    ar_matrix_free(&v);
    free(start);
    free(resid);
    free(lo);
    free(hi);
    free(pr);
    free(flag);
    return rc;
}

static int run_case(map_kind kind, size_t n, size_t r, int f32, int seed, double scale,
                    const ar_mask *mask, tol_row *out)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    out->n = n;
    out->r = r;
    out->f32 = f32;
    out->seed = seed;
    out->scale = scale;
    out->expected = kind == MAP_GENERIC ? n / 2 : kind == MAP_PLANTED ? (r < n / 2 ? r : n / 2)
                    : kind == MAP_SELF  ? n - 1
                                        : n - 2;
    ar_matrix s = ar_matrix_empty(), p = ar_matrix_empty();
    uint64_t sd = 1000003u * (uint64_t)seed + 7919u * n + 31u * r + (uint64_t)kind;
    double t0 = bench_now();
    int rc = make_logits(&s, n, kind, r, scale, sd);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&p, n, n, NULL);
    if (rc == AR_OK)
        causal_softmax(&s, f32, &p);
    ar_masked_workspace *ws = NULL;
    if (rc == AR_OK)
        rc = ar_masked_workspace_alloc(&ws, n, NULL);
    ar_masked_opts o;
    ar_masked_opts_init(&o);
    o.precision = f32 ? AR_PREC_F32 : AR_PREC_F64;
    ar_masked_result res;
    ar_error err = {{0}};
    if (rc == AR_OK) {
        rc = ar_masked_analyze(ws, ar_matrix_cview(&p), NULL, mask, &o, &res, &err);
        if (rc != AR_OK)
            fprintf(stderr, "bench_masked_tolerance: %s n=%zu: %s\n", kind_name(kind), n,
                    err.msg);
    }
    if (rc == AR_OK) {
        out->tau = res.tau;
        out->max_not = res.max_not_innovative;
        out->min_innov = res.min_innovative;
        out->head = res.min_head_size;
        out->exact = res.exact;
        out->log_max_abs = res.log_max_abs;
        rc = residual_populations(&p, res.tau, out);
    }
    out->seconds = bench_now() - t0;
    ar_masked_workspace_free(ws);
    ar_matrix_free(&s);
    ar_matrix_free(&p);
    return rc;
}

static void fmt_margin(char *buf, size_t len, double num, double den)
{
    if (!(den > 0.0) || isinf(num))
        snprintf(buf, len, "inf");
    else
        snprintf(buf, len, "%.2e", num / den);
}

static void print_head(void)
{
    printf("%-8s %3s %4s %5s %4s %6s %5s %5s %5s %9s %9s %9s %9s %9s %9s %9s %5s %4s | %5s "
           "%9s %9s %9s %4s\n", "map", "r", "prec", "n", "seed", "maxlog", "h*", "want", "exact",
           "tau", "max_not", "med_not", "min_inn", "med_inn", "inn/tau", "tau/not", "near", "ok",
           "h*new", "inn/tc", "tc/not", "max_amp", "ok");
}

static void print_row(const tol_row *w)
{
    char m1[16], m2[16];
    fmt_margin(m1, sizeof m1, w->min_innov, w->tau);
    fmt_margin(m2, sizeof m2, w->tau, w->max_not);
    char m3[16], m4[16];
    fmt_margin(m3, sizeof m3, w->prop.min_ratio_innov, 1.0);
    fmt_margin(m4, sizeof m4, w->prop.min_ratio_not, 1.0);
    printf("%-8s %3zu %4s %5zu %4d %6.2f %5zu %5zu %5d %9.2e %9.2e %9.2e %9.2e %9.2e %9s %9s "
           "%5zu %4s | %5zu %9s %9s %9.2e %4s\n", kind_name(w->kind), w->r, w->f32 ? "f32" : "f64",
           w->n, w->seed, w->log_max_abs, w->head, w->expected, w->exact, w->tau, w->max_not,
           w->med_not, w->min_innov, w->med_innov, m1, m2, w->near_tau,
           w->head == w->expected && w->agree && w->proto_agree ? "yes" : "NO", w->prop.rank, m3,
           m4, w->prop.max_amp, w->prop.rank == w->expected ? "yes" : "NO");
}

/* A JSON number, or null when x is not finite (an empty population). */
static const char *jnum(double x)
{
    static char buf[8][32];
    static int slot = 0;
    char *b = buf[slot++ % 8];
    if (isfinite(x))
        snprintf(b, sizeof buf[0], "%.6g", x);
    else
        snprintf(b, sizeof buf[0], "null");
    return b;
}

static void print_json(const tol_row *w, int first)
{
    printf("%s  {\"map\": \"%s\", \"r\": %zu, \"precision\": \"%s\", \"n\": %zu, \"seed\": %d, "
           "\"scale\": %g, \"log_max_abs\": %.6g, \"min_head_size\": %zu, \"expected\": %zu, "
           "\"exact\": %d, \"tau\": %.6g, \"max_not_innovative\": %.6g, ",
           first ? "" : ",\n", kind_name(w->kind), w->r, w->f32 ? "f32" : "f64", w->n, w->seed,
           w->scale, w->log_max_abs, w->head, w->expected, w->exact, w->tau, w->max_not);
    printf("\"median_not\": %s, \"min_innovative\": %s, \"median_innovative\": %s, ",
           jnum(w->med_not), jnum(w->min_innov), jnum(w->med_innov));
    printf("\"near_tau\": %zu, \"not_innovative\": %zu, \"innovative\": %zu, "
           "\"rerun_agrees\": %d, \"prototype_agrees\": %d, \"rule_min_head_size\": %zu, ",
           w->near_tau, w->n_not, w->n_innov, w->agree, w->proto_agree, w->prop.rank);
    printf("\"rule_min_innovative_over_tau\": %s, \"rule_min_tau_over_not\": %s, ",
           jnum(w->prop.min_ratio_innov), jnum(w->prop.min_ratio_not));
    printf("\"rule_max_amplification\": %.6g, \"greedy_s\": %.4g, \"rule_s\": %.4g, "
           "\"seconds\": %.4g}",
           w->prop.max_amp, w->greedy_s, w->rule_s, w->seconds);
}

int main(int argc, char **argv)
{
    size_t sizes[16], nsizes = 0, structured_n = 1024;
    int seeds = 3, seeds_large = 1, threads = 1, json = 0, quick = 0;
    double scale = 1.0;
    const char *v, *only = NULL, *prec = NULL;
    for (int i = 1; i < argc; i++) {
        if ((v = bench_opt(argc, argv, &i, "--n")) && nsizes < 16)
            sizes[nsizes++] = (size_t)strtoul(v, NULL, 10);
        else if (v != NULL)
            continue;
        else if ((v = bench_opt(argc, argv, &i, "--seeds")))
            seeds = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--seeds-large")))
            seeds_large = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--scale")))
            scale = atof(v);
        else if ((v = bench_opt(argc, argv, &i, "--structured-n")))
            structured_n = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--only")))
            only = v;
        else if ((v = bench_opt(argc, argv, &i, "--prec")))
            prec = v;
        else if ((v = bench_opt(argc, argv, &i, "--residuals")))
            residual_dir = v;
        else if ((v = bench_opt(argc, argv, &i, "--threads")))
            threads = atoi(v);
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else {
            fprintf(stderr, "bench_masked_tolerance: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (nsizes == 0) {
        size_t def[4] = {64, 256, 1024, 4096};
        for (size_t k = 0; k < (quick ? 3u : 4u); k++)
            sizes[nsizes++] = def[k];
    }
    for (size_t k = 0; k < nsizes; k++)
        if (sizes[k] < 4) {
            fprintf(stderr, "bench_masked_tolerance: n must be >= 4\n");
            return 2;
        }
    if (seeds < 1 || seeds_large < 1 || threads < 1 || !(scale > 0.0) || structured_n < 4) {
        fprintf(stderr, "bench_masked_tolerance: bad --seeds, --threads, --scale or "
                        "--structured-n\n");
        return 2;
    }
    bench_set_blas_threads(threads);
    bench_print_environment(stderr);
    ar_mask mask;
    ar_error err = {{0}};
    if (ar_mask_parse("causal", &mask, &err) != AR_OK)
        return 2;
    if (json) {
        printf("{\"environment\": ");
        bench_print_environment_json(stdout);
        printf(",\n\"results\": [\n");
    } else
        print_head();
    struct { map_kind kind; size_t r; const char *name; } families[] = {
        {MAP_GENERIC, 0, "generic"}, {MAP_PLANTED, 5, "planted5"}, {MAP_PLANTED, 32, "planted32"}};
    int failed = 0, first = 1, misjudged = 0;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (int f32 = 0; f32 < 2; f32++)
            for (size_t k = 0; k < nsizes; k++) {
                if ((only && strcmp(only, families[f].name) != 0) ||
                    (prec && strcmp(prec, f32 ? "f32" : "f64") != 0))
                    continue;
                int count = sizes[k] >= 4096 ? seeds_large : seeds;
                for (int sd = 0; sd < count; sd++) {
                    tol_row w;
                    int rc = run_case(families[f].kind, sizes[k], families[f].r, f32, sd, scale,
                                      &mask, &w);
                    failed |= rc != AR_OK;
                    if (rc != AR_OK)
                        continue;
                    if (json)
                        print_json(&w, first);
                    else
                        print_row(&w);
                    fflush(stdout);
                    first = 0;
                    misjudged += w.head != w.expected || !w.agree || !w.proto_agree;
                }
            }
    map_kind structured[2] = {MAP_SELF, MAP_PREV};
    for (int t = 0; t < 2; t++)
        for (int f32 = 0; f32 < 2; f32++) {
            if ((only && strcmp(only, "structured") != 0) ||
                (prec && strcmp(prec, f32 ? "f32" : "f64") != 0))
                continue;
            tol_row w;
            int rc = run_case(structured[t], structured_n, 0, f32, 0, 1.0, &mask, &w);
            failed |= rc != AR_OK;
            if (rc != AR_OK)
                continue;
            if (json)
                print_json(&w, first);
            else
                print_row(&w);
            fflush(stdout);
            first = 0;
            misjudged += w.head != w.expected || !w.agree;
        }
    if (json)
        printf("\n]}\n");
    if (misjudged)
        fprintf(stderr, "bench_masked_tolerance: %d map(s) with a head size other than the "
                        "expected one (or a rerun that disagrees)\n", misjudged);
    ar_mask_free(&mask);
    return failed;
}
