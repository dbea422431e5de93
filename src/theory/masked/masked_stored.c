/* The storage rule of the masked analysis: the minimal head size of a map
 * stored in float16 or bfloat16 (src/theory/masked/masked_analysis.h;
 * docs/theory/masked-attention.md, "Maps stored in low precision").
 *
 * The stored map P~ is the rounding of an unknown map P with
 * |P - P~| <= h(P~) entrywise (storage.h), so |log P - log P~| <= eta =
 * -log(1 - h / P~) on the mask (about u nats; log 2 on the smallest
 * subnormal).  What is certain is an interval for the smallest head size of
 * any map that rounds to P~:
 *   - lower: every fully specified block A of log P (rows centred) keeps
 *     the singular values of the stored block above ||eta_A||_F (Weyl: the
 *     centring is a projection, |dA| <= eta_A entrywise), so their count
 *     bounds the head size of every such P from below;
 *   - upper: the size of a certificate whose masked softmax lies within
 *     h(P~) of P~ entrywise, i.e. rounds to the stored map.  It starts from
 *     the default estimate's completion and is moved into the rounding box
 *     (masked_box.c); failing that, one size more, up to extra_rank more;
 *     failing that, the completion of the stored map itself at float64
 *     accuracy (its rank is the noise's, generic);
 *   - the default estimate: the analysis at tau = 3 sqrt(2/3) eta_rms
 *     sqrt(n), the typical size of a column residual made of rounding noise
 *     (independent errors uniform in [-eta, eta], a difference of two per
 *     entry after the shift removal) times 3, eta_rms over the mask with each
 *     eta capped at 2u (subnormal entries have eta up to log 2); clamped
 *     into [lower, upper].
 * status exact exactly when lower = upper. */
#include "masked_analysis.h"
#include "attnrank/storage.h"
#include "attnrank/random.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"

#define DEFAULT_NOISE_FACTOR 3.0 /* times the typical noise residual of a column */
#define BOX_THETA 0.9
#define BOX_MAX_ITER 400
#define BOX_FLOP_BUDGET 5e9      /* per head size tried: a few seconds on one core */

typedef struct eta_stats {
    double max, rms, half_max;
} eta_stats;

/* half = h(P~), eta = -log(1 - h / P~) on the mask (h / P~ <= 1/2 for every
 * stored nonzero value; a smoothed value below that is capped there). */
static int rounding_bounds(ar_masked_workspace *ws, ar_precision prec, eta_stats *st)
{
    size_t n = ws->n, count = 0;
    int rc = ar_matrix_alloc(&ws->half, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&ws->eta, n, n, NULL);
    if (rc != AR_OK)
        return rc;
    double sum = 0.0;
    memset(st, 0, sizeof *st);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++) {
            if (!ws->allowed[i * n + j]) {
                AR_AT(&ws->half, i, j) = 1.0; /* unused: off the mask the check wants 0 */
                AR_AT(&ws->eta, i, j) = 0.0;
                continue;
            }
            double p = AR_AT(&ws->prow, i, j), h = ar_storage_half_width(p, prec);
            double rel = h / p < 0.5 ? h / p : 0.5;
            double e = -log1p(-rel);
            AR_AT(&ws->half, i, j) = h;
            AR_AT(&ws->eta, i, j) = e;
            st->max = e > st->max ? e : st->max;
            st->half_max = h > st->half_max ? h : st->half_max;
            /* the typical level of the default tau: a few subnormal entries
             * (eta up to log 2) must not set it for all the others */
            double typical = e < 2.0 * ar_storage_unit_roundoff(prec) ? e
                                                                       : 2.0 * ar_storage_unit_roundoff(prec);
            sum += typical * typical;
            count++;
        }
    st->rms = count > 0 ? sqrt(sum / (double)count) : 0.0;
    return AR_OK;
}

/* The rigorous lower bound over the fully specified blocks examined. */
static size_t certain_lower(const ar_masked_workspace *ws)
{
    size_t best = 0;
    for (size_t b = 0; b < ws->nspec; b++) {
        const ar_block_spectrum *s = &ws->spec[b];
        if (s->count == 0)
            continue;
        /* float64's own SVD error of the block on top of the rounding */
        double cut = s->eta_fro + (double)(s->p + s->q) * 0x1p-52 * s->sv[0];
        size_t c = ar_rank_count_above(s->sv, s->count, cut);
        best = c > best ? c : best;
    }
    return best;
}

/* The first k columns of the kept completion, later columns small random
 * ones (a direction the box fit may use). */
static void start_factors(const ar_masked_workspace *ws, size_t k, ar_rng *rng, ar_matrix *u,
                          ar_matrix *v)
{
    size_t n = ws->n, have = ws->have_completion ? ws->rank : 0;
    for (size_t j = 0; j < k; j++)
        for (size_t i = 0; i < n; i++) {
            AR_AT(u, i, j) = j < have ? AR_AT(&ws->u, i, j) : 1e-3 * ar_rng_gaussian(rng, 1.0);
            AR_AT(v, i, j) = j < have ? AR_AT(&ws->v, i, j) : 1e-3 * ar_rng_gaussian(rng, 1.0);
        }
}

static void keep_completion(ar_masked_workspace *ws, const ar_matrix *u, const ar_matrix *v,
                            size_t k)
{
    ar_cm_fill(&ws->u, 0.0);
    ar_cm_fill(&ws->v, 0.0);
    for (size_t j = 0; j < k; j++)
        for (size_t i = 0; i < ws->n; i++) {
            AR_AT(&ws->u, i, j) = AR_AT(u, i, j);
            AR_AT(&ws->v, i, j) = AR_AT(v, i, j);
        }
    ws->rank = k;
    ws->have_completion = 1;
}

/* Sweeps of the box fit at size k: BOX_MAX_ITER, fewer when a sweep
 * (about 2 |M| (k + 1)^2 flops) would take the size past the budget. */
static size_t box_iterations(const ar_masked_workspace *ws, size_t k)
{
    size_t entries = 0;
    for (size_t t = 0; t < ws->n * ws->n; t++)
        entries += ws->allowed[t];
    double sweep = 2.0 * (double)entries * (double)(k + 1) * (double)(k + 1);
    double fit = BOX_FLOP_BUDGET / (sweep > 1.0 ? sweep : 1.0);
    return fit < 10.0 ? 10 : fit > BOX_MAX_ITER ? BOX_MAX_ITER : (size_t)fit;
}

/* Sizes from the kept completion's up: the first whose box fit passes the
 * forward check within rounding.  *found = 0 when none did. */
static int box_search(ar_masked_workspace *ws, const ar_masked_opts *o, ar_masked_result *r,
                      size_t from, int *found)
{
    size_t n = ws->n, last = from + o->extra_rank;
    if (last > n)
        last = n;
    *found = 0;
    ar_matrix u = ar_matrix_empty(), v = ar_matrix_empty();
    ar_rng *rng = ar_rng_alloc(o->seed);
    int rc = rng ? ar_matrix_alloc(&u, n, n, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&v, n, n, NULL);
    if (rc == AR_OK && from == 0) { /* size 0: uniform rows, nothing to move */
        int confirmed = 0;
        double max_abs;
        ar_cm_fill(&u, 0.0);
        ar_cm_fill(&v, 0.0);
        rc = ar_masked_confirm(ws, &u, &v, 0, r, &confirmed, &max_abs);
        if (rc == AR_OK && confirmed) {
            keep_completion(ws, &u, &v, 0);
            *found = 1;
        }
    }
    for (size_t k = from > 0 ? from : 1; rc == AR_OK && k <= last && !*found; k++) {
        int inside = 0, confirmed = 0;
        double max_abs;
        start_factors(ws, k, rng, &u, &v);
        rc = ar_masked_box_fit(ws, &u, &v, k, BOX_THETA, box_iterations(ws, k), &inside);
        if (rc == AR_OK && inside)
            rc = ar_masked_confirm(ws, &u, &v, k, r, &confirmed, &max_abs);
        if (rc == AR_OK && confirmed) {
            keep_completion(ws, &u, &v, k);
            *found = 1;
        }
    }
    ar_matrix_free(&u);
    ar_matrix_free(&v);
    ar_rng_free(rng);
    return rc;
}

/* The last resort: the stored map's own completion at float64 accuracy. */
static int exact_completion(ar_masked_workspace *ws, const ar_masked_opts *o, ar_masked_result *r,
                            double floor64, int *found, ar_error *err)
{
    ar_masked_result t = *r;
    t.storage_rule = 0;
    t.tau = floor64;
    t.accuracy = INFINITY;
    int rc = ar_masked_solve(ws, o, &t, err);
    *found = 0;
    if (rc != AR_OK || !ws->have_completion)
        return rc;
    int confirmed = 0;
    double max_abs;
    rc = ar_masked_confirm(ws, &ws->u, &ws->v, ws->rank, r, &confirmed, &max_abs);
    ws->have_completion = confirmed;
    *found = confirmed;
    return rc;
}

int ar_masked_solve_stored(ar_masked_workspace *ws, const ar_masked_opts *o, ar_masked_result *r,
                           ar_error *err)
{
    eta_stats st;
    int rc = rounding_bounds(ws, o->precision, &st);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "out of memory");
    double scale = r->log_max_abs > 1.0 ? r->log_max_abs : 1.0, floor64 = 1e-9 * scale;
    /* 1. the default estimate (any completion accepted: the box decides later) */
    double tau = DEFAULT_NOISE_FACTOR * sqrt(2.0 / 3.0) * st.rms * sqrt((double)ws->n);
    r->storage_rule = 0;
    r->tau = tau > floor64 ? tau : floor64;
    r->accuracy = INFINITY;
    rc = ar_masked_solve(ws, o, r, err);
    if (rc != AR_OK)
        return rc;
    size_t estimate = r->method == AR_MASKED_STAIRCASE ? r->min_head_size
                      : r->certified                   ? r->upper
                                                       : r->lower;
    ar_masked_result keep = *r;
    /* 2. the certain lower bound */
    size_t lower = certain_lower(ws);
    /* 3. a certificate within rounding */
    r->storage_rule = 1;
    int found = 0;
    rc = box_search(ws, o, r, ws->have_completion ? ws->rank : estimate, &found);
    if (rc == AR_OK && !found)
        rc = exact_completion(ws, o, r, floor64, &found, err);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "certificate within rounding failed: %s", ar_strerror(rc));
    double ratio = 0.0;
    if (found) {
        ar_certificate c;
        memset(&c, 0, sizeof c);
        size_t k = ws->rank > 0 ? ws->rank : 1;
        rc = ar_masked_weights(&ws->u, &ws->v, ws->rank, k, ws->x_given ? &ws->pinv : NULL,
                               &c.wq, &c.wk);
        if (rc == AR_OK)
            rc = ar_masked_forward_check(&c.wq, &c.wk, ws->x_given ? &ws->x : NULL, &ws->prow,
                                         &ws->lrow, ws->allowed, &ws->half, &c);
        ratio = c.rounding_ratio;
        ar_certificate_free(&c);
        if (rc != AR_OK)
            return ar_error_set(err, rc, "certificate failed: %s", ar_strerror(rc));
    }
    /* 4. the interval */
    *r = keep;
    r->storage_rule = 1;
    r->log_rounding = st.max;
    r->rounding_ratio = ratio;
    r->accuracy = st.half_max;
    r->certified = found;
    r->upper = found ? ws->rank : ws->n;
    r->lower = lower < r->upper ? lower : r->upper;
    r->block_lower = r->lower;
    r->min_head_size = estimate < r->lower ? r->lower : estimate > r->upper ? r->upper : estimate;
    r->exact = found && r->lower == r->upper;
    return AR_OK;
}
