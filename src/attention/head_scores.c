/* Head-type scores of one attention map (include/attnrank/head_scores.h,
 * docs/theory/head-scores.md). */
#include "attnrank/head_scores.h"

#include <math.h>
#include <stdint.h>

const char *ar_head_score_name(ar_head_score score)
{
    switch (score) {
    case AR_HEAD_SCORE_PREVIOUS_TOKEN: return "previous_token";
    case AR_HEAD_SCORE_FIRST_TOKEN: return "first_token";
    case AR_HEAD_SCORE_DIAGONAL: return "diagonal";
    case AR_HEAD_SCORE_INDUCTION: return "induction";
    case AR_HEAD_SCORE_DUPLICATE_TOKEN: return "duplicate_token";
    default: return "unknown";
    }
}

const char *ar_head_targets_name(ar_head_targets targets)
{
    switch (targets) {
    case AR_HEAD_TARGETS_NONE: return "none";
    case AR_HEAD_TARGETS_TOKENS: return "tokens";
    case AR_HEAD_TARGETS_PERIOD: return "period";
    default: return "unknown";
    }
}

void ar_head_scores_opts_init(ar_head_scores_opts *opts)
{
    if (opts == NULL)
        return;
    *opts = (ar_head_scores_opts){0}; /* the reserved tail too */
    opts->targets = AR_HEAD_TARGETS_NONE;
    opts->tokens = NULL;
    opts->n_tokens = 0;
    opts->period = 0;
}

/* The weight query q gives key k, whatever axis the queries lie along. */
static double weight(ar_cview p, ar_axis axis, size_t q, size_t k)
{
    return axis == AR_AXIS_ROW ? AR_VAT(p, q, k) : AR_VAT(p, k, q);
}

static int check_map(ar_cview p, ar_axis axis, ar_error *err)
{
    if (ar_cview_check(p, err) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "invalid view of the map (strides contradict the shape)");
    if (axis != AR_AXIS_ROW && axis != AR_AXIS_COL)
        return ar_error_set(err, AR_EINVAL, "axis must be AR_AXIS_ROW or AR_AXIS_COL, got %d",
                            (int)axis);
    if (p.rows == 0 || p.cols == 0)
        return ar_error_set(err, AR_EINVAL, "empty map (%zu x %zu): no query to score", p.rows,
                            p.cols);
    if (p.rows != p.cols)
        return ar_error_set(err, AR_ESIZE,
                            "head scores need a square map (queries and keys at the same "
                            "positions), got %zu x %zu",
                            p.rows, p.cols);
    return AR_OK;
}

/* Every entry finite and >= 0: a weight outside that is not attention, and
 * a NaN would otherwise turn a mean into NaN without saying where. */
static int check_entries(ar_cview p, ar_error *err)
{
    for (size_t i = 0; i < p.rows; i++) {
        for (size_t j = 0; j < p.cols; j++) {
            double x = AR_VAT(p, i, j);
            if (!isfinite(x))
                return ar_error_set(err, AR_ENONFINITE, "P[%zu, %zu] = %g is not finite", i, j,
                                    x);
            if (x < 0.0)
                return ar_error_set(err, AR_EDOMAIN,
                                    "P[%zu, %zu] = %g is negative (attention weights are >= 0)",
                                    i, j, x);
        }
    }
    return AR_OK;
}

/* The options against the map's n positions: each targets value uses its
 * own fields and leaves the others at their defaults, so a field set by
 * mistake (tokens with targets left at NONE) is refused, not ignored. */
static int check_opts(const ar_head_scores_opts *o, size_t n, ar_error *err)
{
    if (o->targets != AR_HEAD_TARGETS_NONE && o->targets != AR_HEAD_TARGETS_TOKENS &&
        o->targets != AR_HEAD_TARGETS_PERIOD)
        return ar_error_set(err, AR_EINVAL, "unknown targets value %d", (int)o->targets);
    int uses_tokens = o->targets == AR_HEAD_TARGETS_TOKENS;
    int uses_period = o->targets == AR_HEAD_TARGETS_PERIOD;
    if (!uses_tokens && (o->tokens != NULL || o->n_tokens != 0))
        return ar_error_set(err, AR_EINVAL, "tokens given but targets is '%s', not 'tokens'",
                            ar_head_targets_name(o->targets));
    if (!uses_period && o->period != 0)
        return ar_error_set(err, AR_EINVAL, "period %zu given but targets is '%s', not 'period'",
                            o->period, ar_head_targets_name(o->targets));
    if (uses_tokens && o->tokens == NULL)
        return ar_error_set(err, AR_EINVAL, "targets 'tokens' needs the token ids (tokens is NULL)");
    if (uses_tokens && o->n_tokens != n)
        return ar_error_set(err, AR_ESIZE, "%zu tokens for a map of %zu positions", o->n_tokens,
                            n);
    if (uses_period && (o->period == 0 || o->period >= n))
        return ar_error_set(err, AR_EINVAL,
                            "period %zu must be in [1, n - 1] = [1, %zu] for a map of %zu "
                            "positions",
                            o->period, n - 1, n);
    return AR_OK;
}

/* previous_token, first_token and diagonal: one weight per query each. */
static void position_scores(ar_cview p, ar_axis axis, ar_head_scores *out)
{
    size_t n = out->n;
    double previous = 0.0, first = 0.0, diagonal = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (i >= 1)
            previous += weight(p, axis, i, i - 1);
        first += weight(p, axis, i, 0);
        diagonal += weight(p, axis, i, i);
    }
    out->previous_token_queries = n - 1;
    out->previous_token = n >= 2 ? previous / (double)(n - 1) : NAN;
    out->first_token = first / (double)n;
    out->diagonal = diagonal / (double)n;
}

/* Sums over T(i) and D(i) of query i from the tokens: each earlier
 * occurrence j of t[i] contributes w(i, j) to D and w(i, j + 1) to T
 * (j + 1 <= i, so the key exists).  Returns whether D(i) is non-empty. */
static int token_target_sums(ar_cview p, ar_axis axis, const int64_t *t, size_t i,
                             double *induction, double *duplicate)
{
    int found = 0;
    double ind = 0.0, dup = 0.0;
    for (size_t j = 0; j < i; j++) {
        if (t[j] != t[i])
            continue;
        found = 1;
        dup += weight(p, axis, i, j);
        ind += weight(p, axis, i, j + 1);
    }
    *induction = ind;
    *duplicate = dup;
    return found;
}

/* The same for a repeated sequence of period L: T(i) = {i - L + 1},
 * D(i) = {i - L} for i >= L. */
static int period_target_sums(ar_cview p, ar_axis axis, size_t period, size_t i,
                              double *induction, double *duplicate)
{
    if (i < period)
        return 0;
    *induction = weight(p, axis, i, i - period + 1);
    *duplicate = weight(p, axis, i, i - period);
    return 1;
}

static void target_scores(ar_cview p, ar_axis axis, const ar_head_scores_opts *o,
                          ar_head_scores *out)
{
    double induction = 0.0, duplicate = 0.0;
    size_t queries = 0;
    for (size_t i = 0; i < out->n && o->targets != AR_HEAD_TARGETS_NONE; i++) {
        double ind = 0.0, dup = 0.0;
        int has = o->targets == AR_HEAD_TARGETS_TOKENS
                      ? token_target_sums(p, axis, o->tokens, i, &ind, &dup)
                      : period_target_sums(p, axis, o->period, i, &ind, &dup);
        if (!has)
            continue;
        queries++;
        induction += ind;
        duplicate += dup;
    }
    out->induction_queries = queries;
    out->induction = queries > 0 ? induction / (double)queries : NAN;
    out->duplicate_token = queries > 0 ? duplicate / (double)queries : NAN;
}

static unsigned defined_bits(const ar_head_scores *s)
{
    unsigned bits = AR_HEAD_SCORE_BIT(AR_HEAD_SCORE_FIRST_TOKEN) |
                    AR_HEAD_SCORE_BIT(AR_HEAD_SCORE_DIAGONAL);
    if (s->previous_token_queries > 0)
        bits |= AR_HEAD_SCORE_BIT(AR_HEAD_SCORE_PREVIOUS_TOKEN);
    if (s->induction_queries > 0)
        bits |= AR_HEAD_SCORE_BIT(AR_HEAD_SCORE_INDUCTION) |
                AR_HEAD_SCORE_BIT(AR_HEAD_SCORE_DUPLICATE_TOKEN);
    return bits;
}

int ar_head_scores_compute(ar_cview p, ar_axis axis, const ar_head_scores_opts *opts,
                           ar_head_scores *out, ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "out is NULL");
    ar_head_scores_opts defaults;
    ar_head_scores_opts_init(&defaults);
    const ar_head_scores_opts *o = opts != NULL ? opts : &defaults;
    int rc = check_map(p, axis, err);
    if (rc == AR_OK)
        rc = check_opts(o, p.rows, err);
    if (rc == AR_OK)
        rc = check_entries(p, err);
    if (rc != AR_OK)
        return rc;
    ar_head_scores s = {0};
    s.n = p.rows;
    s.targets = o->targets;
    position_scores(p, axis, &s);
    target_scores(p, axis, o, &s);
    s.defined = defined_bits(&s);
    *out = s;
    return AR_OK;
}
