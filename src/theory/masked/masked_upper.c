/* Upper bounds for windows, bands and sink + window: completions by the
 * oldest-columns recursion on the reduced interval pattern (masked_reduce.c),
 * confirmed by the forward check; and the F_p check of the generic value
 * (src/theory/masked/masked_analysis.h; docs/theory/masked-attention.md). */
#include "masked_analysis.h"
#include "theory/masked/mask_internal.h"
#include "attnrank/random.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/matrix_internal.h"

/* Keep a confirmed completion in ws when it beats the current one. */
static int offer(ar_masked_workspace *ws, const ar_matrix *u, const ar_matrix *v, size_t rank,
                 const ar_masked_result *r, int *confirmed)
{
    double max_abs;
    int rc = ar_masked_confirm(ws, u, v, rank, r, confirmed, &max_abs);
    if (rc != AR_OK || !*confirmed)
        return rc;
    for (size_t t = 0; t < ws->n; t++)
        for (size_t i = 0; i < ws->n; i++) {
            AR_AT(&ws->u, i, t) = t < rank ? AR_AT(u, i, t) : 0.0;
            AR_AT(&ws->v, i, t) = t < rank ? AR_AT(v, i, t) : 0.0;
        }
    ws->rank = rank;
    ws->have_completion = 1;
    return AR_OK;
}

int ar_masked_offer(ar_masked_workspace *ws, const ar_matrix *u, const ar_matrix *v, size_t rank,
                    const ar_masked_result *r)
{
    if (ws->have_completion && rank >= ws->rank)
        return AR_OK;
    int confirmed = 0;
    return offer(ws, u, v, rank, r, &confirmed);
}

int ar_masked_interval_upper(ar_masked_workspace *ws, const ar_masked_opts *o,
                             ar_masked_result *r, ar_matrix *u, ar_matrix *v)
{
    ar_interval_form f;
    int rc = ar_interval_form_build(ws->allowed, ws->n, &f);
    if (rc != AR_OK || f.kind == AR_REDUCE_NONE)
        return rc;
    size_t n = ws->n;
    ar_matrix d = ar_matrix_empty(), ur = ar_matrix_empty(), vr = ar_matrix_empty();
    rc = ar_matrix_alloc(&d, n, n - 1, NULL);
    if (rc == AR_OK)
        ar_interval_form_data(&f, &ws->lrow, &d);
    /* r = lower, lower + 1, ...: the first certificate the forward check
     * confirms; float64 may need a little more than the minimum. */
    for (size_t k = r->lower; rc == AR_OK && k <= r->lower + o->extra_rank && k < n; k++) {
        ar_matrix_free(&ur);
        ar_matrix_free(&vr);
        rc = ar_matrix_alloc(&ur, n, k, NULL);
        if (rc == AR_OK)
            rc = ar_matrix_alloc(&vr, n - 1, k, NULL);
        double resid = 0.0;
        uint64_t cfg[2] = {0x6d61736b, k};
        if (rc == AR_OK)
            rc = ar_interval_complete(&f.pat, &d, k, ar_seed_derive(o->seed, cfg, 2),
                                      o->polish_iter, &ur, &vr, &resid, NULL);
        if (rc != AR_OK)
            break;
        ar_cm_fill(u, 0.0);
        ar_cm_fill(v, 0.0);
        for (size_t t = 0; t < k; t++)
            for (size_t i = 0; i < n; i++)
                AR_AT(u, i, t) = AR_AT(&ur, i, t);
        ar_interval_form_keys(&f, &vr, k, v);
        int confirmed = 0;
        rc = offer(ws, u, v, k, r, &confirmed);
        if (confirmed)
            break;
    }
    ar_matrix_free(&d);
    ar_matrix_free(&ur);
    ar_matrix_free(&vr);
    ar_interval_form_free(&f);
    return rc;
}

/* ---- the generic value over F_p ---- */

int ar_masked_generic_for(ar_masked_workspace *ws, const ar_masked_opts *o, ar_masked_result *r,
                          ar_error *err)
{
    r->generic_known = 0;
    if (ws->mask.kind == AR_MASK_PATTERN)
        return AR_OK;
    int rc = ar_mask_generic_value(&ws->mask, ws->n, &r->generic, err);
    if (rc != AR_OK)
        return rc;
    r->generic_known = 1;
    if (r->generic.status != AR_GENERIC_CONJECTURAL)
        return AR_OK;
    return ar_mask_generic_verify(&ws->mask, ws->n, o->seed, o->verify_seconds, &r->generic,
                                  err);
}

/* ---- ar_mask_generic_verify (mask.h): the recursion runs here, in the
 * analysis, so the mask module calls no analysis ---- */

/* Measured time of ar_interval_verify_fp (FLINT nmod solves, one per row and
 * column of the reduced n x (n - 1) pattern), in seconds:
 *     2 n (2.6e-10 r^3 + 1.5e-8 r^2 + 1e-6)
 * (docs/performance.md: e.g. n = 4096, w = 128, r = 64 took 1.0 s). */
static double fp_seconds(size_t n, size_t r)
{
    double rr = (double)r;
    return 2.0 * (double)n * (2.6e-10 * rr * rr * rr + 1.5e-8 * rr * rr + 1e-6);
}

int ar_mask_generic_verify(const ar_mask *mask, size_t n, uint64_t seed, double seconds,
                           ar_mask_generic *g, ar_error *err)
{
    if (mask == NULL || g == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (g->status != AR_GENERIC_CONJECTURAL)
        return AR_OK;
    /* A kind whose generic value is another mask's at another length
     * (its reduction) is verified on that mask's dense pattern. */
    ar_mask target;
    size_t m = n;
    ar_mask_generic_equivalent(mask, n, &target, &m);
    if (!(seconds > 0.0) || fp_seconds(m, g->value) > seconds)
        return AR_OK; /* not affordable: stays conjectural */
    unsigned char *allowed = malloc(m * m);
    if (allowed == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    int rc = ar_mask_fill_pattern(&target, m, allowed, err);
    ar_interval_form f;
    memset(&f, 0, sizeof f);
    if (rc == AR_OK)
        rc = ar_interval_form_build(allowed, m, &f);
    int verified = 0;
    if (rc == AR_OK && f.kind != AR_REDUCE_NONE)
        rc = ar_interval_verify_fp(&f.pat, g->value, seed, &verified, err);
    if (rc == AR_ENOMEM) { /* no memory for the F_p run: unaffordable, g stays conjectural */
        rc = AR_OK;
        if (err != NULL)
            err->msg[0] = '\0';
    }
    if (rc == AR_OK && verified)
        g->status = AR_GENERIC_VERIFIED;
    ar_interval_form_free(&f);
    free(allowed);
    return rc;
}
