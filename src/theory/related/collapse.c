/* Rank collapse across depth (docs/theory/rank-collapse.md): a seeded random self-attention
 * network with rows as tokens, and the residual X - 1 x^T measured per depth.
 * The layer is documented in include/attnrank/collapse.h. */
#include "attnrank/collapse.h"
#include "attnrank/attention.h"
#include "attnrank/options.h"
#include "attnrank/random.h"
#include "attnrank/spectrum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "attention/attention_internal.h"
#include "core/spectrum_internal.h"
#include "core/random_internal.h"

/* ---- norms and the residual ---- */

/* The norms read the view directly (any strides): no packing needed. */
static double norm_1(ar_cview a)
{
    double best = 0.0;
    for (size_t j = 0; j < a.cols; j++) {
        double sum = 0.0;
        for (size_t i = 0; i < a.rows; i++)
            sum += fabs(AR_VAT(a, i, j));
        if (sum > best || isnan(sum))
            best = sum;
    }
    return best;
}

static double norm_inf(ar_cview a)
{
    double best = 0.0;
    for (size_t i = 0; i < a.rows; i++) {
        double sum = 0.0;
        for (size_t j = 0; j < a.cols; j++)
            sum += fabs(AR_VAT(a, i, j));
        if (sum > best || isnan(sum))
            best = sum;
    }
    return best;
}

double ar_collapse_norm_1(ar_cview a)
{
    return ar_cview_check(a, NULL) == AR_OK ? norm_1(a) : NAN;
}

double ar_collapse_norm_inf(ar_cview a)
{
    return ar_cview_check(a, NULL) == AR_OK ? norm_inf(a) : NAN;
}

double ar_collapse_norm_1inf(ar_cview a)
{
    return ar_cview_check(a, NULL) == AR_OK ? sqrt(norm_1(a) * norm_inf(a)) : NAN;
}

static int residual_check(ar_cview x, ar_view res)
{
    if (ar_cview_check(x, NULL) != AR_OK || ar_view_check(res, NULL) != AR_OK || x.rows == 0)
        return AR_EINVAL;
    if (res.rows != x.rows || res.cols != x.cols)
        return AR_ESIZE;
    if (res.data == x.data && x.cols > 0)
        return AR_EINVAL;
    return AR_OK;
}

static void residual(ar_cview x, ar_view res, double *mean)
{
    size_t n = x.rows;
    for (size_t j = 0; j < x.cols; j++) {
        /* Shift by the first row: exact for constant columns, and the sum
         * of differences cancels less when the mean is large. */
        double base = AR_VAT(x, 0, j), sum = 0.0;
        for (size_t i = 0; i < n; i++)
            sum += AR_VAT(x, i, j) - base;
        double xj = base + sum / (double)n;
        if (mean != NULL)
            mean[j] = xj;
        for (size_t i = 0; i < n; i++)
            AR_VAT(res, i, j) = AR_VAT(x, i, j) - xj;
    }
}

int ar_collapse_residual(ar_cview x, ar_view res, double *mean, ar_error *err)
{
    int rc = residual_check(x, res);
    if (rc == AR_OK)
        residual(x, res, mean);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "residual: %s", ar_strerror(rc));
}

static double ratio_or_zero(double num, double den)
{
    return den > 0.0 ? num / den : 0.0;
}

static void norms_compute(ar_cview x, ar_view work, ar_collapse_norms *out)
{
    residual(x, work, NULL);
    ar_cview w = ar_view_const(work);
    out->norm_fro = ar_matrix_norm_fro(x);
    out->res_fro = ar_matrix_norm_fro(w);
    out->rel_res_fro = ratio_or_zero(out->res_fro, out->norm_fro);
    out->norm_1inf = sqrt(norm_1(x) * norm_inf(x));
    out->res_1inf = sqrt(norm_1(w) * norm_inf(w));
    out->rel_res_1inf = ratio_or_zero(out->res_1inf, out->norm_1inf);
}

int ar_collapse_norms_compute(ar_cview x, ar_view work, ar_collapse_norms *out, ar_error *err)
{
    int rc = out == NULL ? AR_EINVAL : residual_check(x, work);
    if (rc == AR_OK)
        norms_compute(x, work, out);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "norms: %s", ar_strerror(rc));
}

/* ---- options ---- */

void ar_collapse_opts_init(ar_collapse_opts *o)
{
    if (o == NULL)
        return;
    memset(o, 0, sizeof *o);
    o->n = 32;
    o->d = 64;
    o->heads = 4;
    o->layers = 12;
    ar_rank_opts_init(&o->rank);
    o->fit_floor = 1e-12;
    o->gamma = o->beta = NAN; /* not given: a face that sets one sets have_bound */
    o->max_bytes = AR_COLLAPSE_DEFAULT_MAX_BYTES;
}

/* A size option >= 1. */
static int check_count(const char *name, size_t value, ar_error *err)
{
    return value >= 1 ? AR_OK
                      : ar_error_set(err, AR_EINVAL, "{opt:%s}: must be >= 1, got %zu", name, value);
}

int ar_collapse_check(const ar_collapse_opts *o, ar_error *err)
{
    ar_collapse_opts defaults;
    if (o == NULL) {
        ar_collapse_opts_init(&defaults);
        o = &defaults;
    }
    int rc = check_count("layers", o->layers, err);
    if (rc == AR_OK)
        rc = check_count("n", o->n, err);
    if (rc == AR_OK)
        rc = check_count("d", o->d, err);
    if (rc == AR_OK)
        rc = check_count("heads", o->heads, err);
    if (rc != AR_OK)
        return rc;
    if (o->layers > AR_COLLAPSE_MAX_LAYERS)
        return ar_error_set(err, AR_EINVAL, "{opt:layers}: at most %d, got %zu",
                            AR_COLLAPSE_MAX_LAYERS, o->layers);
    if (o->d % o->heads != 0)
        return ar_error_set(err, AR_EINVAL, "{opt:heads=%zu} does not divide {opt:d=%zu}",
                            o->heads, o->d);
    if (o->have_bound) {
        if (isnan(o->gamma) || isnan(o->beta))
            return ar_error_set(err, AR_EINVAL, "the bound needs both {opt:gamma} and {opt:beta}");
        rc = ar_option_check_positive("gamma", o->gamma, err);
        if (rc == AR_OK)
            rc = ar_option_check_positive("beta", o->beta, err);
        if (rc != AR_OK)
            return rc;
        if (o->skip || o->mlp)
            return ar_error_set(err, AR_EINVAL,
                                "the paper's bound covers pure attention only (drop "
                                "{flag:skip}/{flag:mlp})");
    }
    /* rtol < 0 is the default (AR_TOL_DEFAULT): a face checks a given one. */
    if (!isfinite(o->rank.rtol))
        return ar_error_set(err, AR_EINVAL, "{opt:rtol}: must be finite, got %g", o->rank.rtol);
    rc = ar_option_check_nonneg("atol", o->rank.atol, err);
    if (rc == AR_OK)
        rc = ar_option_check_interval("fit-floor", o->fit_floor, 0.0, 1, 1.0, 1, err);
    if (rc != AR_OK)
        return rc;
    if (!(o->max_bytes >= 0.0))
        return ar_error_set(err, AR_EINVAL, "collapse: max_bytes must be >= 0, got %g",
                            o->max_bytes);
    /* Largest buffers: n x n scores, n x m hidden, d x m weights. */
    size_t m = o->mlp_width ? o->mlp_width : 4 * o->d;
    double elems = (double)o->n * (double)o->n + (double)(o->n + o->d) * (double)m +
                   8.0 * (double)o->n * (double)o->d + 5.0 * (double)o->d * (double)o->d;
    if (o->max_bytes > 0.0 && elems * 8.0 > o->max_bytes)
        return ar_error_set(err, AR_ENOMEM, "collapse: sizes need about %.3g GB (limit %.3g GB)",
                            elems * 8.0 / 1e9, o->max_bytes / 1e9);
    return AR_OK;
}

/* ---- the bound and the fits ---- */

double ar_collapse_bound_log(double gamma, double beta, size_t heads, size_t head_size,
                             double res0, size_t depth)
{
    double p3 = pow(3.0, (double)depth);
    double base = log(4.0 * gamma * beta * (double)heads / sqrt((double)head_size));
    double lres = log(res0);
    if (res0 == 0.0)
        return -INFINITY;
    /* (3^L - 1)/2 * base + 3^L * lres, arranged so a huge 3^L gives +-inf
     * rather than inf - inf when the two signs differ. */
    double per = 0.5 * base + lres;
    if (isinf(p3))
        return per > 0.0 ? INFINITY : (per < 0.0 ? -INFINITY : -0.5 * base);
    return p3 * per - 0.5 * base;
}

void ar_collapse_fit(const double *r, size_t count, double floor_value, size_t *last,
                     double *geometric_slope, double *order, double *order_log_c,
                     size_t *order_pairs)
{
    /* Valid prefix: r_0 .. r_last all above the floor. */
    size_t k = 0;
    while (k < count && r[k] > floor_value && isfinite(r[k]))
        k++;
    *last = k > 0 ? k - 1 : 0;
    *geometric_slope = NAN;
    *order = NAN;
    *order_log_c = NAN;
    *order_pairs = k > 0 ? k - 1 : 0;
    if (k < 2)
        return;
    double mx = 0.0, my = 0.0;
    for (size_t i = 0; i < k; i++) {
        mx += (double)i;
        my += log(r[i]);
    }
    mx /= (double)k;
    my /= (double)k;
    double sxy = 0.0, sxx = 0.0;
    for (size_t i = 0; i < k; i++) {
        sxy += ((double)i - mx) * (log(r[i]) - my);
        sxx += ((double)i - mx) * ((double)i - mx);
    }
    *geometric_slope = sxy / sxx;
    if (k < 3)
        return;
    double ax = 0.0, ay = 0.0;
    for (size_t i = 0; i + 1 < k; i++) {
        ax += log(r[i]);
        ay += log(r[i + 1]);
    }
    ax /= (double)(k - 1);
    ay /= (double)(k - 1);
    double cxy = 0.0, cxx = 0.0;
    for (size_t i = 0; i + 1 < k; i++) {
        cxy += (log(r[i]) - ax) * (log(r[i + 1]) - ay);
        cxx += (log(r[i]) - ax) * (log(r[i]) - ax);
    }
    if (cxx > 0.0) {
        *order = cxy / cxx;
        *order_log_c = ay - *order * ax;
    }
}

/* ---- the network ---- */

/* Weights of one layer and every buffer a forward pass needs, allocated
 * once per run and refilled layer by layer. */
typedef struct collapse_ws {
    size_t n, d, h, dh, m;
    ar_matrix wq, wk, wv, wo;   /* d x d; head h in columns (rows of wo) h*dh.. */
    ar_matrix w1, w2;           /* d x m, m x d (MLP) */
    ar_matrix q, k, v;          /* n x d */
    ar_matrix s;                /* n x n scores of one head */
    ar_matrix cat;              /* n x d: heads' outputs side by side */
    ar_matrix y;                /* n x d: after the attention sublayer */
    ar_matrix hid;              /* n x m: MLP hidden layer */
    ar_matrix res;              /* n x d: residual scratch */
} collapse_ws;

static void ws_free(collapse_ws *w)
{
    ar_matrix *all[] = {&w->wq, &w->wk, &w->wv, &w->wo, &w->w1, &w->w2, &w->q,
                        &w->k,  &w->v,  &w->s,  &w->cat, &w->y, &w->hid, &w->res};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ar_matrix_free(all[i]);
}

static int ws_alloc(collapse_ws *w, const ar_collapse_opts *o)
{
    memset(w, 0, sizeof *w);
    w->n = o->n;
    w->d = o->d;
    w->h = o->heads;
    w->dh = o->d / o->heads;
    w->m = o->mlp_width ? o->mlp_width : 4 * o->d;
    size_t n = w->n, d = w->d, m = w->m;
    struct { ar_matrix *mat; size_t r, c; } plan[] = {
        {&w->wq, d, d}, {&w->wk, d, d}, {&w->wv, d, d},   {&w->wo, d, d},
        {&w->q, n, d},  {&w->k, n, d},  {&w->v, n, d},    {&w->s, n, n},
        {&w->cat, n, d}, {&w->y, n, d}, {&w->res, n, d},
        {&w->w1, o->mlp ? d : 0, m}, {&w->w2, o->mlp ? m : 0, d},
        {&w->hid, o->mlp ? n : 0, m},
    };
    for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++) {
        int rc = ar_matrix_alloc(plan[i].mat, plan[i].r, plan[i].c, NULL);
        if (rc != AR_OK) {
            ws_free(w);
            return rc;
        }
    }
    return AR_OK;
}

/* Layer l's weights, from a seed that depends only on (seed, l). */
static int fill_layer_weights(collapse_ws *w, uint64_t seed, size_t layer)
{
    uint64_t cfg[2] = {1, (uint64_t)layer};
    ar_rng *rng = ar_rng_alloc(ar_seed_derive(seed, cfg, 2));
    if (rng == NULL)
        return AR_ENOMEM;
    double sd = 1.0 / sqrt((double)w->d);
    ar_cm_fill_gaussian(&w->wq, rng, sd);
    ar_cm_fill_gaussian(&w->wk, rng, sd);
    ar_cm_fill_gaussian(&w->wv, rng, sd);
    ar_cm_fill_gaussian(&w->wo, rng, sd);
    if (w->w1.rows > 0) {
        ar_cm_fill_gaussian(&w->w1, rng, sqrt(2.0 / (double)w->d));
        ar_cm_fill_gaussian(&w->w2, rng, 1.0 / sqrt((double)w->m));
    }
    ar_rng_free(rng);
    return AR_OK;
}

/* Columns [c0, c0 + count) of m, as a view. */
static ar_matrix col_block(const ar_matrix *m, size_t c0, size_t count)
{
    return ar_matrix_alias(m->data + c0 * m->ld, m->rows, count, m->ld);
}

/* cat = [P_1 V_1, ..., P_H V_H] for X (n x d). */
static int attention_heads(collapse_ws *w, const ar_matrix *x)
{
    int rc = ar_cm_gemm(0, 0, 1.0, x, &w->wq, 0.0, &w->q);
    if (rc == AR_OK)
        rc = ar_cm_gemm(0, 0, 1.0, x, &w->wk, 0.0, &w->k);
    if (rc == AR_OK)
        rc = ar_cm_gemm(0, 0, 1.0, x, &w->wv, 0.0, &w->v);
    double scale = 1.0 / sqrt((double)w->dh);
    for (size_t h = 0; rc == AR_OK && h < w->h; h++) {
        ar_matrix qh = col_block(&w->q, h * w->dh, w->dh);
        ar_matrix kh = col_block(&w->k, h * w->dh, w->dh);
        ar_matrix vh = col_block(&w->v, h * w->dh, w->dh);
        ar_matrix oh = col_block(&w->cat, h * w->dh, w->dh);
        rc = ar_cm_gemm(0, 1, scale, &qh, &kh, 0.0, &w->s);
        if (rc == AR_OK)
            rc = ar_cm_attention_softmax(&w->s, AR_AXIS_ROW);
        if (rc == AR_OK)
            rc = ar_cm_gemm(0, 0, 1.0, &w->s, &vh, 0.0, &oh);
    }
    return rc;
}

/* out = layer(x); x and out are distinct n x d matrices. */
static int layer_forward(collapse_ws *w, int skip, int mlp, const ar_matrix *x, ar_matrix *out)
{
    int rc = attention_heads(w, x);
    ar_matrix *y = mlp ? &w->y : out;
    if (rc == AR_OK && skip)
        rc = ar_cm_copy(y, x);
    if (rc == AR_OK)
        rc = ar_cm_gemm(0, 0, 1.0, &w->cat, &w->wo, skip ? 1.0 : 0.0, y);
    if (rc != AR_OK || !mlp)
        return rc;
    rc = ar_cm_gemm(0, 0, 1.0, y, &w->w1, 0.0, &w->hid);
    for (size_t j = 0; rc == AR_OK && j < w->hid.cols; j++)
        for (size_t i = 0; i < w->hid.rows; i++)
            if (!(AR_AT(&w->hid, i, j) > 0.0))
                AR_AT(&w->hid, i, j) = 0.0;
    if (rc == AR_OK && skip)
        rc = ar_cm_copy(out, y);
    if (rc == AR_OK)
        rc = ar_cm_gemm(0, 0, 1.0, &w->hid, &w->w2, skip ? 1.0 : 0.0, out);
    return rc;
}

/* ---- measuring ---- */

void ar_collapse_result_free(ar_collapse_result *r)
{
    if (r == NULL)
        return;
    if (r->depths != NULL)
        for (size_t i = 0; i < r->count; i++)
            free(r->depths[i].singular_values);
    free(r->depths);
    memset(r, 0, sizeof *r);
}

static int result_alloc(ar_collapse_result *r, const ar_collapse_opts *o)
{
    memset(r, 0, sizeof *r);
    r->opts = *o;
    if (r->opts.mlp_width == 0)
        r->opts.mlp_width = 4 * o->d;
    r->head_size = o->d / o->heads;
    r->nsv = o->n < o->d ? o->n : o->d;
    r->count = o->layers + 1;
    r->depths = calloc(r->count, sizeof *r->depths);
    if (r->depths == NULL)
        return AR_ENOMEM;
    for (size_t i = 0; i < r->count; i++) {
        r->depths[i].singular_values = malloc(r->nsv * sizeof(double));
        if (r->depths[i].singular_values == NULL)
            return AR_ENOMEM;
    }
    return AR_OK;
}

static int measure_depth(ar_collapse_result *r, size_t l, const ar_matrix *x, collapse_ws *w,
                         ar_svd_workspace *svd)
{
    ar_collapse_depth *dp = &r->depths[l];
    dp->depth = l;
    if (ar_cm_check_finite(x, NULL, NULL) != AR_OK)
        return AR_ENONFINITE;
    norms_compute(ar_matrix_cview(x), ar_matrix_view(&w->res), &dp->norms);
    int rc = ar_cm_svals_ws(x, dp->singular_values, svd);
    if (rc == AR_OK)
        rc = ar_rank_metrics_compute(dp->singular_values, r->nsv, x->rows, x->cols,
                                     &r->opts.rank, &dp->rank, NULL);
    double prev = l == 0 ? 0.0 : r->depths[l - 1].norms.rel_res_fro;
    dp->ratio = prev > 0.0 ? dp->norms.rel_res_fro / prev : NAN;
    dp->bound_log = NAN;
    if (r->opts.have_bound)
        dp->bound_log = ar_collapse_bound_log(r->opts.gamma, r->opts.beta, r->opts.heads,
                                              r->head_size, r->depths[0].norms.res_1inf, l);
    return rc;
}

static void summarise(ar_collapse_result *r)
{
    double *rel = malloc(r->count * sizeof(double));
    r->geometric_slope = r->geometric_factor = r->order = r->order_log_c = NAN;
    r->worst_bound_margin = NAN;
    if (rel != NULL) {
        for (size_t i = 0; i < r->count; i++)
            rel[i] = r->depths[i].norms.rel_res_fro;
        ar_collapse_fit(rel, r->count, r->opts.fit_floor, &r->fit_last, &r->geometric_slope,
                        &r->order, &r->order_log_c, &r->order_pairs);
        r->geometric_factor = exp(r->geometric_slope);
        free(rel);
    }
    if (r->opts.have_bound) {
        /* Depth 0 is the identity res_0 <= res_0: left out, it only adds
         * a rounding-level margin. */
        double worst = -INFINITY;
        for (size_t i = 1; i < r->count; i++) {
            double lm = log(r->depths[i].norms.res_1inf);
            double margin = lm - r->depths[i].bound_log;
            if (!isnan(margin) && margin > worst)
                worst = margin;
        }
        r->worst_bound_margin = worst;
    }
}

static int fill_input(ar_matrix *x, uint64_t seed)
{
    uint64_t cfg[1] = {0};
    ar_rng *rng = ar_rng_alloc(ar_seed_derive(seed, cfg, 1));
    if (rng == NULL)
        return AR_ENOMEM;
    ar_cm_fill_gaussian(x, rng, 1.0);
    ar_rng_free(rng);
    return AR_OK;
}

/* x0 NULL: the seeded random input. */
static int run(const ar_collapse_opts *opts, const ar_matrix *x0, ar_collapse_result *r,
               ar_error *err)
{
    int rc;
    collapse_ws w;
    ar_matrix cur = ar_matrix_empty(), next = ar_matrix_empty();
    ar_svd_workspace *svd = NULL;
    rc = ws_alloc(&w, opts);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "collapse: out of memory");
    rc = result_alloc(r, opts);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&cur, opts->n, opts->d, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&next, opts->n, opts->d, err);
    if (rc == AR_OK)
        rc = ar_svd_workspace_alloc(&svd, opts->n, opts->d, AR_SVD_VALUES, err);
    if (rc == AR_OK)
        rc = x0 != NULL ? ar_cm_copy(&cur, x0) : fill_input(&cur, opts->seed);
    if (rc == AR_OK)
        rc = measure_depth(r, 0, &cur, &w, svd);
    for (size_t l = 1; rc == AR_OK && l <= opts->layers; l++) {
        rc = fill_layer_weights(&w, opts->seed, l - 1);
        if (rc == AR_OK)
            rc = layer_forward(&w, opts->skip, opts->mlp, &cur, &next);
        if (rc == AR_OK) {
            ar_matrix t = cur;
            cur = next;
            next = t;
            rc = measure_depth(r, l, &cur, &w, svd);
        }
        if (rc != AR_OK)
            ar_error_set(err, rc, "collapse: layer %zu: %s", l, ar_strerror(rc));
    }
    if (rc == AR_OK)
        summarise(r);
    else if (err != NULL && err->msg[0] == '\0')
        ar_error_set(err, rc, "collapse: %s", ar_strerror(rc));
    ar_svd_workspace_free(svd);
    ar_matrix_free(&cur);
    ar_matrix_free(&next);
    ws_free(&w);
    if (rc != AR_OK)
        ar_collapse_result_free(r);
    return rc;
}

static int run_begin(const ar_collapse_opts **opts, ar_collapse_opts *defaults,
                     ar_collapse_result *r, ar_error *err)
{
    if (r == NULL)
        return ar_error_set(err, AR_EINVAL, "collapse: NULL result");
    memset(r, 0, sizeof *r);
    if (*opts == NULL) {
        ar_collapse_opts_init(defaults);
        *opts = defaults;
    }
    return ar_collapse_check(*opts, err);
}

int ar_collapse_run(const ar_collapse_opts *opts, ar_collapse_result *r, ar_error *err)
{
    ar_collapse_opts defaults;
    int rc = run_begin(&opts, &defaults, r, err);
    return rc != AR_OK ? rc : run(opts, NULL, r, err);
}

int ar_collapse_run_from(const ar_collapse_opts *opts, ar_cview x0, ar_collapse_result *r,
                         ar_error *err)
{
    ar_collapse_opts defaults;
    int rc = run_begin(&opts, &defaults, r, err);
    if (rc != AR_OK)
        return rc;
    if (ar_cview_check(x0, err) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "collapse: invalid input view");
    if (x0.rows != opts->n || x0.cols != opts->d)
        return ar_error_set(err, AR_ESIZE, "collapse: input is %zu x %zu, expected n x d = %zu x %zu",
                            x0.rows, x0.cols, opts->n, opts->d);
    if (ar_matrix_check_finite(x0, NULL, NULL, err) != AR_OK)
        return ar_error_set(err, AR_ENONFINITE, "collapse: non-finite value in the input");
    ar_colmajor c;
    rc = ar_colmajor_get(&c, x0);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "collapse: %s", ar_strerror(rc));
    rc = run(opts, &c.m, r, err);
    ar_colmajor_release(&c);
    return rc;
}

const char *ar_collapse_variant_name(const ar_collapse_opts *o)
{
    if (o->skip)
        return o->mlp ? "attention+mlp, skip" : "attention, skip";
    return o->mlp ? "attention+mlp, no skip" : "pure attention";
}
