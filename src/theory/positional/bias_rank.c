/* What a fixed bias does to the minimal head size: its own shifted rank,
 * the reach of a head with it, and the map with it removed
 * (include/attnrank/bias.h, docs/theory/positional-bias.md). */
#include "attnrank/bias.h"
#include "attnrank/bottleneck.h"
#include "attnrank/masked.h"

#include <math.h>
#include <stdlib.h>

/* Logit range the bias is scaled to before exponentiating: exp(-32) is far
 * from underflow and the ranks are scale invariant. */
#define BIAS_RANGE_NATS 32.0

static int allowed(const ar_mask *mask, size_t n, size_t q, size_t k)
{
    return mask == NULL || ar_mask_allows(mask, n, q, k);
}

/* Row-query entry (q, k) of a view with queries along axis. */
static double entry(ar_cview v, ar_axis axis, size_t q, size_t k)
{
    return axis == AR_AXIS_ROW ? AR_VAT(v, q, k) : AR_VAT(v, k, q);
}

/* The largest spread max - min of one query's allowed bias entries. */
static int bias_range(ar_cview b, const ar_mask *mask, ar_axis axis, double *range, ar_error *err)
{
    size_t n = b.rows;
    *range = 0.0;
    for (size_t q = 0; q < n; q++) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t k = 0; k < n; k++) {
            if (!allowed(mask, n, q, k))
                continue;
            double v = entry(b, axis, q, k);
            if (!isfinite(v))
                return ar_error_set(err, AR_ENONFINITE,
                                    "bias entry (query %zu, key %zu) is not finite (%g)", q, k, v);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        if (hi > lo && hi - lo > *range)
            *range = hi - lo;
    }
    return AR_OK;
}

/* p = softmax(scale * B) along axis, under the mask when there is one. */
static int scaled_map(ar_cview b, const ar_mask *mask, ar_axis axis, double scale, ar_matrix *p)
{
    size_t n = b.rows;
    ar_matrix s = ar_matrix_empty();
    int st = ar_matrix_alloc(&s, n, n, NULL);
    if (st == AR_OK)
        st = ar_matrix_alloc(p, n, n, NULL);
    if (st != AR_OK) {
        ar_matrix_free(&s);
        return st;
    }
    for (size_t q = 0; q < n; q++)
        for (size_t k = 0; k < n; k++)
            AR_AT(&s, q, k) = allowed(mask, n, q, k) ? scale * entry(b, axis, q, k) : 0.0;
    ar_mask none = ar_mask_none();
    st = ar_mask_softmax(ar_matrix_cview(&s), mask != NULL ? mask : &none, axis,
                         ar_matrix_view(p), NULL);
    ar_matrix_free(&s);
    return st;
}

static int unmasked_rank(ar_cview p, ar_axis axis, ar_bias_rank_result *out, ar_error *err)
{
    ar_represent_workspace *ws = NULL;
    int st = ar_represent_workspace_alloc(&ws, p.rows, err);
    if (st != AR_OK)
        return ar_error_set(err, st, "bias rank: cannot allocate the workspace for n = %zu", p.rows);
    ar_represent_opts opts;
    ar_represent_opts_init(&opts);
    opts.axis = axis;
    ar_represent_result res;
    st = ar_represent_analyze(ws, p, NULL, &opts, &res, err);
    if (st == AR_OK) {
        out->exact = 1;
        out->lower = out->upper = res.centred_rank;
        out->threshold = res.threshold / out->scale;
    }
    ar_represent_workspace_free(ws);
    return st;
}

static int masked_rank(ar_cview p, const ar_mask *mask, ar_axis axis, ar_bias_rank_result *out,
                       ar_error *err)
{
    ar_masked_workspace *ws = NULL;
    int st = ar_masked_workspace_alloc(&ws, p.rows, err);
    if (st != AR_OK)
        return ar_error_set(err, st, "bias rank: cannot allocate the workspace for n = %zu", p.rows);
    ar_masked_opts opts;
    ar_masked_opts_init(&opts);
    opts.axis = axis;
    opts.verify_seconds = 0.0; /* the generic value of the mask is not asked for */
    ar_masked_result res;
    st = ar_masked_analyze(ws, p, NULL, mask, &opts, &res, err);
    if (st == AR_OK) {
        out->exact = res.exact;
        out->lower = res.lower;
        out->upper = res.exact ? res.lower : res.upper;
        out->threshold = res.tau / out->scale;
    }
    ar_masked_workspace_free(ws);
    return st;
}

int ar_bias_rank(ar_cview bias, const ar_mask *mask, ar_axis axis, ar_bias_rank_result *out,
                 ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "bias rank: NULL result");
    if (ar_cview_check(bias, err) != AR_OK || bias.rows != bias.cols || bias.rows == 0)
        return ar_error_set(err, AR_EINVAL, "bias rank needs a valid square bias, got %zu x %zu",
                            bias.rows, bias.cols);
    if (axis != AR_AXIS_ROW && axis != AR_AXIS_COL)
        return ar_error_set(err, AR_EINVAL, "axis must be AR_AXIS_ROW or AR_AXIS_COL, got %d",
                            (int)axis);
    if (mask != NULL && mask->kind == AR_MASK_NONE)
        mask = NULL;
    if (mask != NULL) {
        int st = ar_mask_check_size(mask, bias.rows, err);
        if (st != AR_OK)
            return st;
    }
    out->n = bias.rows;
    out->masked = mask != NULL;
    double range;
    int st = bias_range(bias, mask, axis, &range, err);
    if (st != AR_OK)
        return st;
    out->scale = range > BIAS_RANGE_NATS ? BIAS_RANGE_NATS / range : 1.0;
    ar_matrix p = ar_matrix_empty();
    st = scaled_map(bias, mask, axis, out->scale, &p);
    if (st != AR_OK) {
        ar_matrix_free(&p);
        return ar_error_set(err, st, "bias rank: cannot form the map of the bias (n = %zu)",
                            bias.rows);
    }
    st = mask == NULL ? unmasked_rank(ar_matrix_cview(&p), axis, out, err)
                      : masked_rank(ar_matrix_cview(&p), mask, axis, out, err);
    ar_matrix_free(&p);
    return st;
}

size_t ar_bias_reach(size_t head_size, size_t bias_rank, size_t n)
{
    if (n == 0)
        return 0;
    size_t sum = head_size + bias_rank;
    if (sum < head_size) /* overflow */
        sum = SIZE_MAX;
    return sum < n - 1 ? sum : n - 1;
}

/* One query's log-space renormalisation of P exp(-B) over its positive
 * entries; zeros stay zeros. */
static int remove_query(ar_cview p, ar_cview b, ar_axis axis, ar_view out, size_t q, ar_error *err)
{
    size_t n = p.rows;
    double top = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        double pk = entry(p, axis, q, k);
        if (!(pk >= 0.0) || !isfinite(pk))
            return ar_error_set(err, AR_EDOMAIN, "map entry (query %zu, key %zu) is %g, not a "
                                "probability", q, k, pk);
        if (pk == 0.0)
            continue;
        double bk = entry(b, axis, q, k);
        if (!isfinite(bk))
            return ar_error_set(err, AR_ENONFINITE,
                                "bias entry (query %zu, key %zu) is not finite (%g)", q, k, bk);
        double l = log(pk) - bk;
        top = l > top ? l : top;
    }
    if (top == -INFINITY)
        return ar_error_set(err, AR_EDOMAIN, "query %zu has no positive entry", q);
    double sum = 0.0;
    for (size_t k = 0; k < n; k++) {
        double pk = entry(p, axis, q, k);
        sum += pk > 0.0 ? exp(log(pk) - entry(b, axis, q, k) - top) : 0.0;
    }
    for (size_t k = 0; k < n; k++) {
        double pk = entry(p, axis, q, k);
        double v = pk > 0.0 ? exp(log(pk) - entry(b, axis, q, k) - top) / sum : 0.0;
        if (axis == AR_AXIS_ROW)
            AR_VAT(out, q, k) = v;
        else
            AR_VAT(out, k, q) = v;
    }
    return AR_OK;
}

int ar_bias_remove(ar_cview p, ar_cview bias, ar_axis axis, ar_view out, ar_error *err)
{
    if (ar_cview_check(p, err) != AR_OK || ar_cview_check(bias, err) != AR_OK ||
        ar_view_check(out, err) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "bias removal: invalid view");
    if (p.rows != p.cols || bias.rows != p.rows || bias.cols != p.cols || out.rows != p.rows ||
        out.cols != p.cols)
        return ar_error_set(err, AR_EINVAL,
                            "bias removal: the map (%zu x %zu), the bias (%zu x %zu) and the output "
                            "(%zu x %zu) must be the same square size",
                            p.rows, p.cols, bias.rows, bias.cols, out.rows, out.cols);
    if (axis != AR_AXIS_ROW && axis != AR_AXIS_COL)
        return ar_error_set(err, AR_EINVAL, "axis must be AR_AXIS_ROW or AR_AXIS_COL, got %d",
                            (int)axis);
    for (size_t q = 0; q < p.rows; q++) {
        int st = remove_query(p, bias, axis, out, q, err);
        if (st != AR_OK)
            return st;
    }
    return AR_OK;
}
