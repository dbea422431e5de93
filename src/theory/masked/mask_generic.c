/* Generic minimal head sizes under a mask, as functions of (mask, n), and
 * the longest context a head size covers (include/attnrank/mask.h).
 *
 * The values and their proofs are in docs/theory/masked-attention.md.  In
 * short: a staircase mask (causal, prefix, documents) has an exact
 * innovation count whose generic value is closed-form; windows, bands and
 * sink + window contain causal blocks or fully specified blocks that prove
 * a lower bound, and an upper-bound recursion matches it, checked over F_p
 * per size by ar_mask_generic_verify (in the masked analysis, which runs
 * the recursion: masked_upper.c).  The kind table in mask.c points at the
 * per-kind functions here. */
#include "attnrank/mask.h"
#include "theory/masked/mask_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *ar_generic_status_name(ar_generic_status status)
{
    switch (status) {
    case AR_GENERIC_PROVED:
        return "proved";
    case AR_GENERIC_VERIFIED:
        return "verified";
    case AR_GENERIC_CONJECTURAL:
        return "conjectural";
    }
    return "unknown";
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

static void set(ar_mask_generic *g, size_t value, ar_generic_status status, size_t lower,
                size_t worst_lower, size_t worst_upper, const char *formula)
{
    g->value = value;
    g->status = status;
    g->lower = lower;
    g->worst_lower = worst_lower;
    g->worst_upper = worst_upper;
    g->formula = formula;
}

/* Sink + window at n > w: the sink columns plus a causal block of w
 * queries (after the shift removal on key 0: S - 1 full columns and a w x w
 * triangle) give S - 1 + ceil((w - S + 1) / 2) innovations generically. */
static size_t sink_window_lower(size_t sinks, size_t w)
{
    size_t full = min_size(sinks - 1, w);
    size_t rest = w > sinks - 1 ? w - (sinks - 1) : 0;
    return full + (rest + 1) / 2;
}

void ar_generic_sink_window(const ar_mask *m, size_t n, ar_mask_generic *g)
{
    if (n <= m->w) { /* the window covers every earlier key: causal */
        set(g, n / 2, AR_GENERIC_PROVED, n / 2, n - 1, n - 1, "floor(n/2) (n <= w: causal)");
        return;
    }
    size_t lower = n >= m->sinks + m->w ? sink_window_lower(m->sinks, m->w) : m->w / 2;
    set(g, lower, AR_GENERIC_CONJECTURAL, lower, m->w - 1, n - 1,
        m->sinks == 1 ? "ceil(w/2)" : "S - 1 + ceil((w - S + 1)/2)");
}

void ar_generic_none(const ar_mask *mask, size_t n, ar_mask_generic *g)
{
    (void)mask;
    set(g, n - 1, AR_GENERIC_PROVED, n - 1, n - 1, n - 1, "n - 1");
}

void ar_generic_causal(const ar_mask *mask, size_t n, ar_mask_generic *g)
{
    (void)mask;
    set(g, n / 2, AR_GENERIC_PROVED, n / 2, n - 1, n - 1, "floor(n/2)");
}

void ar_generic_window(const ar_mask *mask, size_t n, ar_mask_generic *g)
{
    size_t w = mask->w;
    if (n <= w)
        set(g, n / 2, AR_GENERIC_PROVED, n / 2, n - 1, n - 1, "floor(n/2) (n <= w: causal)");
    else
        set(g, w / 2, AR_GENERIC_CONJECTURAL, w / 2, w - 1, n - 1, "floor(min(n, w)/2)");
}

void ar_generic_band(const ar_mask *mask, size_t n, ar_mask_generic *g)
{
    size_t w = mask->w, cw = min_size(n, mask->w);
    if (n <= w)
        set(g, n - 1, AR_GENERIC_PROVED, n - 1, n - 1, n - 1, "n - 1 (n <= w: no mask)");
    else
        set(g, cw - 1, AR_GENERIC_CONJECTURAL, cw - 1, cw - 1, n - 1, "min(n, w) - 1");
}

void ar_generic_prefix(const ar_mask *mask, size_t n, ar_mask_generic *g)
{
    if (n <= mask->p)
        set(g, n - 1, AR_GENERIC_PROVED, n - 1, n - 1, n - 1, "n - 1 (n <= p: no mask)");
    else
        set(g, max_size(mask->p - 1, n / 2), AR_GENERIC_PROVED, max_size(mask->p - 1, n / 2),
            n - 1, n - 1, "max(p - 1, floor(n/2))");
}

void ar_generic_documents(const ar_mask *mask, size_t n, ar_mask_generic *g)
{
    (void)n;
    size_t longest = 0;
    for (size_t k = 0; k < mask->ndocs; k++)
        longest = max_size(longest, mask->lengths[k]);
    set(g, longest / 2, AR_GENERIC_PROVED, longest / 2, longest - 1, longest - 1,
        "max_k floor(n_k/2)");
}

int ar_mask_generic_value(const ar_mask *mask, size_t n, ar_mask_generic *out, ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    int rc = ar_mask_check_size(mask, n, err);
    if (rc != AR_OK)
        return rc;
    ar_mask_generic_fn generic = ar_mask_generic_of(mask->kind);
    if (generic == NULL)
        return ar_error_set(err, AR_EUNSUPPORTED,
                            "no generic formula for an explicit mask pattern: analyse a map");
    out->n = n;
    generic(mask, n, out);
    return AR_OK;
}

/* ---- the longest context per kind (head_size <= SIZE_MAX / 4) ---- */

int ar_longest_none(const ar_mask *mask, size_t dp, size_t *n_max, int *unbounded,
                    ar_generic_status *status, ar_error *err)
{
    (void)mask;
    (void)unbounded;
    (void)status;
    (void)err;
    *n_max = dp + 1;
    return AR_OK;
}

int ar_longest_causal(const ar_mask *mask, size_t dp, size_t *n_max, int *unbounded,
                      ar_generic_status *status, ar_error *err)
{
    (void)mask;
    (void)unbounded;
    (void)status;
    (void)err;
    *n_max = 2 * dp + 1;
    return AR_OK;
}

int ar_longest_window(const ar_mask *mask, size_t dp, size_t *n_max, int *unbounded,
                      ar_generic_status *status, ar_error *err)
{
    if (mask->w == 0)
        return ar_error_set(err, AR_EINVAL, "mask width 0");
    /* Beyond n = w the generic value stays floor(w/2). */
    if (mask->w / 2 <= dp) {
        *unbounded = 1;
        *status = AR_GENERIC_CONJECTURAL;
    } else {
        *n_max = 2 * dp + 1;
    }
    return AR_OK;
}

int ar_longest_band(const ar_mask *mask, size_t dp, size_t *n_max, int *unbounded,
                    ar_generic_status *status, ar_error *err)
{
    if (mask->w == 0)
        return ar_error_set(err, AR_EINVAL, "mask width 0");
    if (mask->w - 1 <= dp) {
        *unbounded = 1;
        *status = AR_GENERIC_CONJECTURAL;
    } else {
        *n_max = dp + 1;
    }
    return AR_OK;
}

int ar_longest_prefix(const ar_mask *mask, size_t dp, size_t *n_max, int *unbounded,
                      ar_generic_status *status, ar_error *err)
{
    (void)unbounded;
    (void)status;
    if (mask->p == 0)
        return ar_error_set(err, AR_EINVAL, "mask with a zero prefix or sink count");
    *n_max = mask->p - 1 > dp ? dp + 1 : 2 * dp + 1;
    return AR_OK;
}

int ar_longest_sink_window(const ar_mask *mask, size_t dp, size_t *n_max, int *unbounded,
                           ar_generic_status *status, ar_error *err)
{
    size_t w = mask->w;
    if (w == 0)
        return ar_error_set(err, AR_EINVAL, "mask width 0");
    if (mask->sinks == 0)
        return ar_error_set(err, AR_EINVAL, "mask with a zero prefix or sink count");
    if (sink_window_lower(mask->sinks, w) <= dp) {
        *unbounded = 1;
        *status = AR_GENERIC_CONJECTURAL;
    } else if (2 * dp + 1 < w) {
        *n_max = 2 * dp + 1;
    } else {
        *n_max = w; /* n = w + 1 already contains the sink block */
        if (mask->sinks > 1)
            *status = AR_GENERIC_CONJECTURAL;
    }
    return AR_OK;
}

int ar_mask_longest_context(const ar_mask *mask, size_t head_size, size_t *n_max,
                            int *unbounded, ar_generic_status *status, ar_error *err)
{
    if (mask == NULL || n_max == NULL || unbounded == NULL || status == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (head_size > SIZE_MAX / 4)
        return ar_error_set(err, AR_EINVAL, "head size %zu too large", head_size);
    ar_mask_longest_fn longest = ar_mask_longest_of(mask->kind);
    if (longest == NULL)
        return ar_error_set(err, AR_EUNSUPPORTED,
                            "the %s mask fixes n: no longest context to compute",
                            ar_mask_kind_name(mask->kind));
    *unbounded = 0;
    *n_max = 0;
    *status = AR_GENERIC_PROVED;
    return longest(mask, head_size, n_max, unbounded, status, err);
}
