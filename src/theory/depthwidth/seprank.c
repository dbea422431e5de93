/* Separation rank by grid tensors: partitions, bounds, the floating-point
 * network and its grid.  The modular and rational evaluations live in
 * seprank_exact.c; the orchestration of one measurement in seprank_run.c. */
#include "attnrank/seprank.h"
#include "attnrank/random.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "core/random_internal.h"
#include "seprank_internal.h"

/* ------------------------------------------------------------------ */
/* partitions                                                          */

int ar_partition_half(size_t n, ar_partition *p, ar_error *err)
{
    if (p == NULL || n < 2 || n > AR_SEPRANK_MAX_POSITIONS)
        return ar_error_set(err, AR_EINVAL, "partition: NULL argument or n = %zu outside 2 .. %d",
                            n, AR_SEPRANK_MAX_POSITIONS);
    memset(p, 0, sizeof *p);
    p->n = n;
    p->na = n / 2;
    p->nb = n - p->na;
    for (size_t i = 0; i < p->na; i++)
        p->a[i] = i;
    for (size_t i = 0; i < p->nb; i++)
        p->b[i] = p->na + i;
    return AR_OK;
}

/* Parse one side ("0,1") into out (sorted later); *count positions. */
static int parse_side(const char *s, const char *end, size_t n, size_t *out, size_t *count,
                      int *used, ar_error *err)
{
    size_t k = 0;
    while (s < end) {
        if (!isdigit((unsigned char)*s))
            return ar_error_set(err, AR_EINVAL, "partition: expected a position at '%.*s'",
                                (int)(end - s), s);
        size_t v = 0;
        while (s < end && isdigit((unsigned char)*s)) {
            v = v * 10 + (size_t)(*s - '0');
            if (v > 1000000)
                return ar_error_set(err, AR_EINVAL, "partition: position too large");
            s++;
        }
        if (v >= n)
            return ar_error_set(err, AR_EINVAL,
                                "partition: position %zu out of range (n = %zu)", v, n);
        if (used[v])
            return ar_error_set(err, AR_EINVAL, "partition: position %zu given twice", v);
        used[v] = 1;
        out[k++] = v;
        if (s < end) {
            if (*s != ',')
                return ar_error_set(err, AR_EINVAL, "partition: expected ',' at '%.*s'",
                                    (int)(end - s), s);
            s++;
            if (s == end)
                return ar_error_set(err, AR_EINVAL, "partition: trailing ','");
        }
    }
    *count = k;
    return AR_OK;
}

static int cmp_size(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return (a > b) - (a < b);
}

int ar_partition_parse(const char *text, size_t n, ar_partition *p, ar_error *err)
{
    if (text == NULL || p == NULL)
        return ar_error_set(err, AR_EINVAL, "partition: NULL argument");
    if (n < 2 || n > AR_SEPRANK_MAX_POSITIONS)
        return ar_error_set(err, AR_EINVAL, "partition: n must be in 2..%d, got %zu",
                            AR_SEPRANK_MAX_POSITIONS, n);
    const char *slash = strchr(text, '/');
    if (slash == NULL || strchr(slash + 1, '/') != NULL)
        return ar_error_set(err, AR_EINVAL,
                            "partition '%s': expected exactly one '/' between A and B "
                            "(e.g. 0,1/2,3)", text);
    ar_partition q;
    memset(&q, 0, sizeof q);
    int used[AR_SEPRANK_MAX_POSITIONS] = {0};
    int rc = parse_side(text, slash, n, q.a, &q.na, used, err);
    if (rc == AR_OK)
        rc = parse_side(slash + 1, slash + strlen(slash), n, q.b, &q.nb, used, err);
    if (rc != AR_OK)
        return rc;
    if (q.na == 0 || q.nb == 0)
        return ar_error_set(err, AR_EINVAL, "partition '%s': both sides must be non-empty",
                            text);
    for (size_t i = 0; i < n; i++)
        if (!used[i])
            return ar_error_set(err, AR_EINVAL, "partition '%s': position %zu missing", text, i);
    qsort(q.a, q.na, sizeof q.a[0], cmp_size);
    qsort(q.b, q.nb, sizeof q.b[0], cmp_size);
    q.n = n;
    *p = q;
    return AR_OK;
}

void ar_partition_format(const ar_partition *p, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return;
    buf[0] = '\0';
    if (p == NULL)
        return;
    size_t used = 0;
    for (size_t side = 0; side < 2; side++) {
        const size_t *v = side == 0 ? p->a : p->b;
        size_t k = side == 0 ? p->na : p->nb;
        for (size_t i = 0; i < k && used < len; i++) {
            int w = snprintf(buf + used, len - used, "%s%zu", i ? "," : "", v[i]);
            if (w < 0)
                return;
            used += (size_t)w;
        }
        if (side == 0 && used < len) {
            int w = snprintf(buf + used, len - used, "/");
            if (w < 0)
                return;
            used += (size_t)w;
        }
    }
}

/* ------------------------------------------------------------------ */
/* bounds and regimes                                                  */

double ar_seprank_lnchoose(double n, double k)
{
    if (!(k >= 0.0) || !(n >= k))
        return NAN;
    if (k == 0.0 || k == n)
        return 0.0;
    return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
}

static double pow3(size_t layers)
{
    return pow(3.0, (double)layers);
}

double ar_seprank_bound_log_monomial(size_t d, size_t layers, size_t na, size_t nb)
{
    double deg = pow3(layers);
    double vars = (double)(na < nb ? na : nb) * (double)d;
    return ar_seprank_lnchoose(vars + deg, deg);
}

/* log(exp(a) + exp(b)) without overflow. */
static double log_add(double a, double b)
{
    if (a == -INFINITY)
        return b;
    if (b == -INFINITY)
        return a;
    double hi = a > b ? a : b, lo = a > b ? b : a;
    return hi + log1p(exp(lo - hi));
}

double ar_seprank_bound_log_split(size_t d, size_t layers, size_t na, size_t nb, int residual)
{
    double deg = pow3(layers);
    if (deg > (double)AR_SEPRANK_SPLIT_MAX_DEGREE || d == 0 || na == 0 || nb == 0)
        return NAN;
    size_t dd = (size_t)deg;
    double va = (double)na * (double)d, vb = (double)nb * (double)d;
    double total = -INFINITY;
    for (size_t k = 0; k <= dd; k++) {
        /* A side: monomials of degree exactly k; B side: exactly D - k (homogeneous)
         * or at most D - k (residual: lower degrees are present too). */
        double la = ar_seprank_lnchoose(va + (double)k - 1.0, (double)k);
        double rest = (double)(dd - k);
        double lb = residual ? ar_seprank_lnchoose(vb + rest, rest) : ar_seprank_lnchoose(vb + rest - 1.0, rest);
        total = log_add(total, la < lb ? la : lb);
    }
    return total;
}

/* ln of the number of admissible monomials of each degree 0..deg in the
 * variables of the positions `pos` (k of them): a convolution over positions
 * of "degree e in d variables, e of the required parity". */
static int parity_counts(size_t d, size_t deg, const size_t *pos, size_t k, size_t position,
                         double *out, double *tmp)
{
    for (size_t e = 0; e <= deg; e++)
        out[e] = e == 0 ? 0.0 : -INFINITY;
    for (size_t t = 0; t < k; t++) {
        size_t parity = pos[t] == position ? 1 : 0;
        for (size_t e = 0; e <= deg; e++) {
            double acc = -INFINITY;
            for (size_t f = parity; f <= e; f += 2) {
                if (out[e - f] == -INFINITY)
                    continue;
                double c = ar_seprank_lnchoose((double)d + (double)f - 1.0, (double)f);
                acc = log_add(acc, out[e - f] + c);
            }
            tmp[e] = acc;
        }
        memcpy(out, tmp, (deg + 1) * sizeof(double));
    }
    return AR_OK;
}

double ar_seprank_bound_log_parity(size_t d, size_t layers, const ar_partition *part,
                                   size_t position, int residual)
{
    double degf = pow3(layers);
    if (part == NULL || d == 0 || part->na == 0 || part->nb == 0 ||
        degf > (double)AR_SEPRANK_PARITY_MAX_DEGREE || position >= part->n)
        return NAN;
    size_t deg = (size_t)degf;
    double *buf = malloc(4 * (deg + 1) * sizeof(double));
    if (buf == NULL)
        return NAN;
    double *ga = buf, *gb = buf + (deg + 1), *tmp = buf + 2 * (deg + 1);
    parity_counts(d, deg, part->a, part->na, position, ga, tmp);
    parity_counts(d, deg, part->b, part->nb, position, gb, tmp);
    if (residual) /* B side: every degree up to D - k */
        for (size_t e = 1; e <= deg; e++)
            gb[e] = log_add(gb[e], gb[e - 1]);
    double total = -INFINITY;
    for (size_t k = 0; k <= deg; k++) {
        double la = ga[k], lb = gb[deg - k];
        total = log_add(total, la < lb ? la : lb);
    }
    free(buf);
    return total;
}

double ar_seprank_l_th(size_t d)
{
    return d == 0 ? NAN : log((double)d) / log(3.0);
}

ar_seprank_regime ar_seprank_regime_of(size_t layers, size_t d)
{
    return (double)layers < ar_seprank_l_th(d) ? AR_REGIME_DOUBLE_EXPONENTIAL : AR_REGIME_LINEAR;
}

const char *ar_seprank_regime_name(ar_seprank_regime r)
{
    return r == AR_REGIME_DOUBLE_EXPONENTIAL ? "double_exponential" : "linear";
}

/* ------------------------------------------------------------------ */
/* floating-point network                                              */

static int san_check_shape(size_t layers, size_t d, size_t heads, size_t n)
{
    if (layers == 0 || d == 0 || heads == 0 || d % heads != 0 || n == 0 ||
        n > AR_SEPRANK_MAX_POSITIONS || layers > AR_SEPRANK_MAX_LAYERS ||
        d > AR_SEPRANK_MAX_WIDTH)
        return AR_EINVAL;
    return AR_OK;
}

int ar_san_alloc(ar_san *net, size_t layers, size_t d, size_t heads, size_t n, int residual,
                 ar_error *err)
{
    if (net == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(net, 0, sizeof *net);
    int rc = san_check_shape(layers, d, heads, n);
    if (rc != AR_OK)
        return rc == AR_ENOMEM ? ar_error_set(err, rc, "out of memory")
                               : ar_error_set(err, rc, "network: %s", ar_strerror(rc));
    net->layers = layers;
    net->d = d;
    net->heads = heads;
    net->dp = d / heads;
    net->n = n;
    net->residual = residual ? 1 : 0;
    net->wq = calloc(layers, sizeof(ar_matrix));
    net->wk = calloc(layers, sizeof(ar_matrix));
    net->wv = calloc(layers, sizeof(ar_matrix));
    net->wo = calloc(layers, sizeof(ar_matrix));
    net->readout = calloc(d, sizeof(double));
    if (!net->wq || !net->wk || !net->wv || !net->wo || !net->readout) {
        ar_san_free(net);
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    }
    for (size_t l = 0; l < layers; l++) {
        if (ar_matrix_alloc(&net->wq[l], d, d, err) != AR_OK ||
            ar_matrix_alloc(&net->wk[l], d, d, err) != AR_OK ||
            ar_matrix_alloc(&net->wv[l], d, d, err) != AR_OK ||
            ar_matrix_alloc(&net->wo[l], d, d, err) != AR_OK) {
            ar_san_free(net);
            return ar_error_set(err, AR_ENOMEM, "out of memory");
        }
    }
    net->readout[0] = 1.0;
    return AR_OK;
}

void ar_san_free(ar_san *net)
{
    if (net == NULL)
        return;
    for (size_t l = 0; l < net->layers; l++) {
        if (net->wq)
            ar_matrix_free(&net->wq[l]);
        if (net->wk)
            ar_matrix_free(&net->wk[l]);
        if (net->wv)
            ar_matrix_free(&net->wv[l]);
        if (net->wo)
            ar_matrix_free(&net->wo[l]);
    }
    free(net->wq);
    free(net->wk);
    free(net->wv);
    free(net->wo);
    free(net->readout);
    memset(net, 0, sizeof *net);
}

void ar_san_randomize(ar_san *net, ar_rng *rng)
{
    if (net == NULL || rng == NULL || net->layers == 0)
        return;
    double sigma = 1.0 / sqrt((double)net->d);
    for (size_t l = 0; l < net->layers; l++) {
        ar_cm_fill_gaussian(&net->wq[l], rng, sigma);
        ar_cm_fill_gaussian(&net->wk[l], rng, sigma);
        ar_cm_fill_gaussian(&net->wv[l], rng, sigma);
        ar_cm_fill_gaussian(&net->wo[l], rng, sigma);
    }
    ar_matrix r = ar_matrix_alias(net->readout, net->d, 1, net->d);
    ar_cm_fill_gaussian(&r, rng, sigma);
}

int ar_san_set_entry(ar_san *net, size_t position, size_t entry, ar_error *err)
{
    if (net == NULL || net->layers == 0 || position >= net->n || entry >= net->d)
        return ar_error_set(err, AR_EINVAL,
                            "network: NULL, empty, or position or entry out of range");
    memset(net->readout, 0, net->d * sizeof(double));
    net->readout[entry] = 1.0;
    net->position = position;
    return AR_OK;
}

/* Scratch of one evaluation: q, k, v, u, y, y' each d x n contiguous (ld = d),
 * plus r^T W_O of the last layer.  Allocated once per thread. */
typedef struct san_ws {
    double *q, *k, *v, *u, *y, *y2, *ro;
} san_ws;

static int san_ws_alloc(san_ws *ws, size_t d, size_t n)
{
    double *buf = calloc(6 * d * n + d, sizeof(double));
    if (buf == NULL)
        return AR_ENOMEM;
    ws->q = buf;
    ws->k = buf + d * n;
    ws->v = buf + 2 * d * n;
    ws->u = buf + 3 * d * n;
    ws->y = buf + 4 * d * n;
    ws->y2 = buf + 5 * d * n;
    ws->ro = buf + 6 * d * n;
    return AR_OK;
}

static void san_ws_free(san_ws *ws)
{
    free(ws->q);
    memset(ws, 0, sizeof *ws);
}

/* out (d) = W x, W column-major d x d. */
static void matvec(const ar_matrix *w, const double *x, double *out)
{
    size_t d = w->rows;
    for (size_t r = 0; r < d; r++)
        out[r] = 0.0;
    for (size_t c = 0; c < d; c++) {
        const double *col = w->data + c * w->ld;
        double xc = x[c];
        for (size_t r = 0; r < d; r++)
            out[r] += col[r] * xc;
    }
}

/* u_i = sum_h sum_j <q_i, k_j>_h v_j restricted to head h's coordinates,
 * for the one position i. */
static void attend_float(const ar_san *net, const san_ws *ws, size_t i)
{
    size_t d = net->d, dp = net->dp;
    double *ui = ws->u + i * d;
    for (size_t r = 0; r < d; r++)
        ui[r] = 0.0;
    for (size_t h = 0; h < net->heads; h++) {
        size_t off = h * dp;
        for (size_t j = 0; j < net->n; j++) {
            const double *qi = ws->q + i * d + off, *kj = ws->k + j * d + off;
            double s = 0.0;
            for (size_t t = 0; t < dp; t++)
                s += qi[t] * kj[t];
            const double *vj = ws->v + j * d + off;
            for (size_t t = 0; t < dp; t++)
                ui[off + t] += s * vj[t];
        }
    }
}

/* Run the network on ws->y (d x n); if have_qkv0, ws->q/k/v already hold the
 * first layer's projections.  full != 0: leave every output in ws->y;
 * otherwise return r^T y^L_position only (the last layer is evaluated at
 * that position alone). */
static double san_run(const ar_san *net, san_ws *ws, int have_qkv0, int full)
{
    size_t d = net->d, n = net->n;
    for (size_t l = 0; l < net->layers; l++) {
        int last = (l + 1 == net->layers) && !full;
        if (!(l == 0 && have_qkv0)) {
            for (size_t j = 0; j < n; j++) {
                if (!last || j == net->position)
                    matvec(&net->wq[l], ws->y + j * d, ws->q + j * d);
                matvec(&net->wk[l], ws->y + j * d, ws->k + j * d);
                matvec(&net->wv[l], ws->y + j * d, ws->v + j * d);
            }
        }
        if (last) {
            size_t i = net->position;
            attend_float(net, ws, i);
            const double *ui = ws->u + i * d, *yi = ws->y + i * d;
            double f = 0.0;
            for (size_t r = 0; r < d; r++)
                f += ws->ro[r] * ui[r];
            if (net->residual)
                for (size_t r = 0; r < d; r++)
                    f += net->readout[r] * yi[r];
            return f;
        }
        for (size_t i = 0; i < n; i++) {
            attend_float(net, ws, i);
            matvec(&net->wo[l], ws->u + i * d, ws->y2 + i * d);
            if (net->residual)
                for (size_t r = 0; r < d; r++)
                    ws->y2[i * d + r] += ws->y[i * d + r];
        }
        double *t = ws->y;
        ws->y = ws->y2;
        ws->y2 = t;
    }
    return 0.0;
}

/* ro = W_O^{L-1}^T r, so the last layer needs no d x d product. */
static void san_readout_through_wo(const ar_san *net, double *ro)
{
    const ar_matrix *wo = &net->wo[net->layers - 1];
    for (size_t c = 0; c < net->d; c++) {
        double s = 0.0;
        for (size_t r = 0; r < net->d; r++)
            s += AR_AT(wo, r, c) * net->readout[r];
        ro[c] = s;
    }
}

/* The view checks and the sizes of an input X (d x n). */
static int san_check_input(const ar_san *net, ar_cview x)
{
    if (net == NULL || net->layers == 0 || ar_cview_check(x, NULL) != AR_OK)
        return AR_EINVAL;
    if (x.rows != net->d || x.cols != net->n)
        return AR_ESIZE;
    return AR_OK;
}

/* Load X (any strides) into the contiguous d x n state ws->y. */
static void san_load(const ar_san *net, san_ws *ws, ar_cview x)
{
    for (size_t j = 0; j < net->n; j++)
        for (size_t i = 0; i < net->d; i++)
            ws->y[i + j * net->d] = AR_VAT(x, i, j);
}

int ar_san_forward(const ar_san *net, ar_cview x, ar_view y, ar_error *err)
{
    int rc = san_check_input(net, x);
    if (rc == AR_OK && ar_view_check(y, err) != AR_OK)
        rc = AR_EINVAL;
    if (rc == AR_OK && (y.rows != net->d || y.cols != net->n))
        rc = AR_ESIZE;
    if (rc != AR_OK)
        return rc == AR_ENOMEM ? ar_error_set(err, rc, "out of memory")
                               : ar_error_set(err, rc, "network input: %s", ar_strerror(rc));
    san_ws ws;
    if (san_ws_alloc(&ws, net->d, net->n) != AR_OK)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    san_load(net, &ws, x);
    san_run(net, &ws, 0, 1);
    for (size_t j = 0; j < net->n; j++)
        for (size_t i = 0; i < net->d; i++)
            AR_VAT(y, i, j) = ws.y[i + j * net->d];
    san_ws_free(&ws);
    return AR_OK;
}

int ar_san_eval(const ar_san *net, ar_cview x, double *value, ar_error *err)
{
    int rc = san_check_input(net, x);
    if (rc != AR_OK || value == NULL)
        return rc != AR_OK ? ar_error_set(err, rc, "network input: %s", ar_strerror(rc))
                           : ar_error_set(err, AR_EINVAL, "NULL argument");
    san_ws ws;
    if (san_ws_alloc(&ws, net->d, net->n) != AR_OK)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    san_load(net, &ws, x);
    san_readout_through_wo(net, ws.ro);
    *value = san_run(net, &ws, 0, 0);
    san_ws_free(&ws);
    return AR_OK;
}

/* ------------------------------------------------------------------ */
/* grid shape and the floating-point grid                              */

static int pow_checked(size_t m, size_t e, size_t *out)
{
    size_t r = 1;
    for (size_t i = 0; i < e; i++) {
        if (m != 0 && r > SIZE_MAX / m)
            return AR_ENOMEM;
        r *= m;
    }
    *out = r;
    return AR_OK;
}

int ar_grid_shape(const ar_partition *part, size_t m, size_t max_entries, size_t *rows,
                  size_t *cols, ar_error *err)
{
    if (part == NULL || rows == NULL || cols == NULL || m == 0 || part->na == 0 ||
        part->nb == 0 || part->na + part->nb != part->n)
        return ar_error_set(err, AR_EINVAL,
                            "grid: NULL argument, no templates or an invalid partition");
    size_t r, c;
    if (pow_checked(m, part->na, &r) != AR_OK || pow_checked(m, part->nb, &c) != AR_OK)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    if (r > SIZE_MAX / c || (max_entries != 0 && r * c > max_entries))
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    *rows = r;
    *cols = c;
    return AR_OK;
}

/* Template index of each position for grid row `row` and column `col`:
 * mixed radix m, first position of each side fastest. */
static void grid_assign(const ar_partition *part, size_t m, size_t row, size_t col,
                        size_t *which)
{
    for (size_t i = 0; i < part->na; i++) {
        which[part->a[i]] = row % m;
        row /= m;
    }
    for (size_t i = 0; i < part->nb; i++) {
        which[part->b[i]] = col % m;
        col /= m;
    }
}

typedef struct grid_float_job {
    const ar_san *net;
    size_t m, npos;       /* templates; 1, or n when inputs depend on the position */
    const ar_partition *part;
    ar_matrix *g;
    const double *inputs; /* per (template, position slot): the input vector, d entries */
    const double *qkv0;   /* per (template, position slot): W_Q x, W_K x, W_V x of layer 0 */
    size_t row_begin, row_end;
    int status;
} grid_float_job;

static void *grid_float_worker(void *arg)
{
    grid_float_job *job = arg;
    const ar_san *net = job->net;
    size_t d = net->d, n = net->n, m = job->m;
    san_ws ws;
    if (san_ws_alloc(&ws, d, n) != AR_OK) {
        job->status = AR_ENOMEM;
        return NULL;
    }
    san_readout_through_wo(net, ws.ro);
    size_t which[AR_SEPRANK_MAX_POSITIONS];
    for (size_t row = job->row_begin; row < job->row_end; row++) {
        for (size_t col = 0; col < job->g->cols; col++) {
            grid_assign(job->part, m, row, col, which);
            for (size_t j = 0; j < n; j++) {
                size_t slot = which[j] * job->npos + (job->npos > 1 ? j : 0);
                const double *t = job->qkv0 + slot * 3 * d;
                memcpy(ws.q + j * d, t, d * sizeof(double));
                memcpy(ws.k + j * d, t + d, d * sizeof(double));
                memcpy(ws.v + j * d, t + 2 * d, d * sizeof(double));
                memcpy(ws.y + j * d, job->inputs + slot * d, d * sizeof(double));
            }
            AR_AT(job->g, row, col) = san_run(net, &ws, 1, 0);
        }
    }
    san_ws_free(&ws);
    job->status = AR_OK;
    return NULL;
}

int ar_grid_float(const ar_san *net, ar_cview templates, const ar_partition *part, ar_view g,
                  size_t threads, ar_error *err)
{
    ar_colmajor t;
    int rc = ar_colmajor_get(&t, templates);
    if (rc != AR_OK)
        return rc == AR_ENOMEM ? ar_error_set(err, rc, "out of memory")
                               : ar_error_set(err, rc, "grid: %s", ar_strerror(rc));
    ar_colmajor_out out;
    rc = ar_colmajor_out_get(&out, g);
    if (rc == AR_OK)
        rc = ar_colmajor_out_put(&out, ar_grid_float_cm(net, &t.m, part, &out.m, threads));
    ar_colmajor_release(&t);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "grid: %s", ar_strerror(rc));
}

int ar_grid_float_cm(const ar_san *net, const ar_matrix *templates, const ar_partition *part,
                     ar_matrix *g, size_t threads)
{
    return ar_grid_float_offsets_cm(net, templates, NULL, part, g, threads);
}

int ar_grid_float_offsets_cm(const ar_san *net, const ar_matrix *templates,
                             const ar_matrix *offsets, const ar_partition *part, ar_matrix *g,
                             size_t threads)
{
    if (net == NULL || templates == NULL || part == NULL || g == NULL || net->layers == 0 ||
        templates->rows != net->d || templates->cols == 0 || part->n != net->n ||
        (offsets != NULL && (offsets->rows != net->d || offsets->cols != net->n)))
        return AR_EINVAL;
    size_t rows, cols;
    int rc = ar_grid_shape(part, templates->cols, 0, &rows, &cols, NULL);
    if (rc != AR_OK)
        return rc;
    if (g->rows != rows || g->cols != cols)
        return AR_ESIZE;
    size_t d = net->d, m = templates->cols, npos = offsets != NULL ? net->n : 1;
    /* One input per (template, position slot): the template, plus the
     * position's offset when there are offsets. */
    double *inputs = malloc(m * npos * 4 * d * sizeof(double));
    if (inputs == NULL)
        return AR_ENOMEM;
    double *qkv0 = inputs + m * npos * d;
    for (size_t t = 0; t < m; t++)
        for (size_t j = 0; j < npos; j++) {
            double *x = inputs + (t * npos + j) * d, *out = qkv0 + (t * npos + j) * 3 * d;
            for (size_t i = 0; i < d; i++)
                x[i] = offsets != NULL ? AR_AT(templates, i, t) + AR_AT(offsets, i, j)
                                       : AR_AT(templates, i, t);
            matvec(&net->wq[0], x, out);
            matvec(&net->wk[0], x, out + d);
            matvec(&net->wv[0], x, out + 2 * d);
        }
    if (threads == 0)
        threads = 1;
    if (threads > rows)
        threads = rows;
    if (threads > 64)
        threads = 64;
    grid_float_job jobs[64];
    pthread_t tid[64];
    int started[64] = {0};
    for (size_t k = 0; k < threads; k++) {
        jobs[k] = (grid_float_job){net, m, npos, part, g, inputs, qkv0, rows * k / threads,
                                   rows * (k + 1) / threads, AR_OK};
        if (k > 0 && pthread_create(&tid[k], NULL, grid_float_worker, &jobs[k]) == 0)
            started[k] = 1;
        else if (k > 0)
            grid_float_worker(&jobs[k]); /* no thread: do it here */
    }
    grid_float_worker(&jobs[0]);
    rc = jobs[0].status;
    for (size_t k = 1; k < threads; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        if (jobs[k].status != AR_OK)
            rc = jobs[k].status;
    }
    free(inputs);
    return rc;
}
