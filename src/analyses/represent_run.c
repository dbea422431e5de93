/* represent on one map: the unmasked or masked analysis, the verdict for
 * the tested head size, the certificate or the errors and the fit below
 * the minimum (attnrank/represent_run.h). */
#include "attnrank/represent_run.h"
#include "represent_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ar_represent_run_opts_init(ar_represent_run_opts *opts)
{
    if (opts == NULL)
        return;
    memset(opts, 0, sizeof *opts);
    ar_represent_opts_init(&opts->represent);
    ar_masked_opts_init(&opts->masked);
    ar_fit_opts_init(&opts->fit_opts);
    opts->fit = 1;
}

ar_represent_side ar_represent_failed_side(const ar_represent_result *res)
{
    if (res == NULL || res->feasible)
        return AR_REPRESENT_SIDE_NONE;
    /* Half the tolerance each: the relative residual is their sum. */
    double cut = res->feasibility_tol * res->log_norm_fro / 2.0;
    int key = res->residual_key > cut, query = res->residual_query > cut;
    if (key && query)
        return AR_REPRESENT_SIDE_BOTH;
    return key ? AR_REPRESENT_SIDE_KEY : AR_REPRESENT_SIDE_QUERY;
}

const char *ar_represent_side_name(ar_represent_side side)
{
    switch (side) {
    case AR_REPRESENT_SIDE_KEY:
        return "key";
    case AR_REPRESENT_SIDE_QUERY:
        return "query";
    case AR_REPRESENT_SIDE_BOTH:
        return "both";
    default:
        return NULL;
    }
}

static void progress(const ar_represent_run_opts *o, ar_represent_step step, size_t n,
                     size_t head_size)
{
    if (o->progress != NULL)
        o->progress(o->progress_ctx, step, n, head_size);
}

static int fail(ar_represent_run_result *out, ar_represent_step step, int rc)
{
    out->failed_step = step;
    return rc;
}

/* ---- unmasked ---- */

/* The fit on P (smoothed as the analysis smoothed it), with the analysis's
 * axis, precision and sum tolerance. */
static int plain_fit(ar_cview p, const ar_represent_run_opts *o, ar_represent_run_result *out,
                     ar_error *err)
{
    const ar_represent_opts *ro = &o->represent;
    ar_fit_opts fo = o->fit_opts;
    fo.axis = ro->axis;
    fo.precision = ro->precision;
    fo.sum_tol = ro->sum_tol;
    ar_fit_workspace *fw = NULL;
    ar_matrix smoothed = ar_matrix_empty();
    ar_cview target = p;
    int rc = ar_fit_workspace_alloc(&fw, p.rows, err);
    if (rc == AR_OK && ro->smooth > 0.0) {
        rc = ar_matrix_clone(&smoothed, p, err);
        if (rc == AR_OK)
            rc = ar_bottleneck_smooth(ar_matrix_view(&smoothed), ro->axis, ro->smooth, NULL, err);
        target = ar_matrix_cview(&smoothed);
    }
    progress(o, AR_REPRESENT_STEP_FIT, p.rows, out->head_size);
    if (rc == AR_OK)
        rc = ar_fit_lowrank(fw, target, out->head_size, &fo, &out->fit, err);
    ar_fit_workspace_free(fw);
    ar_matrix_free(&smoothed);
    out->have_fit = rc == AR_OK;
    return rc == AR_OK ? AR_OK : fail(out, AR_REPRESENT_STEP_FIT, rc);
}

/* The fit matches softmax(A) to the map it is given; with a bias that is
 * P with the bias removed, not P, so it is not run. */
static const char no_fit_with_bias[] = "a bias is given (the fit takes none)";

/* Below the minimum on a feasible X: Eckart-Young (log P - B: a logit
 * error is the same with and without the bias), then the fit unless X is
 * rank deficient (the fit assumes a full-column-rank input), a bias is
 * given or it is switched off. */
static int plain_too_small(ar_cview p, const ar_represent_run_opts *o,
                           ar_represent_run_result *out, ar_error *err)
{
    const ar_represent_result *r = &out->plain;
    out->have_logit_error = 1;
    out->logit_error = ar_represent_logit_error(r, out->head_size);
    out->logit_error_rel = ar_represent_logit_error_rel(r, out->head_size);
    if (r->x_given && r->x_rank < r->n)
        snprintf(out->fit_skipped, sizeof out->fit_skipped,
                 "X is rank deficient (the fit assumes a full-column-rank input)");
    else if (o->bias != NULL)
        snprintf(out->fit_skipped, sizeof out->fit_skipped, "%s", no_fit_with_bias);
    else if (!o->fit)
        snprintf(out->fit_skipped, sizeof out->fit_skipped, "{flag:no-fit}");
    else
        return plain_fit(p, o, out, err);
    return AR_OK;
}

static int run_plain(ar_represent_workspace *ws, ar_cview p, const ar_cview *x,
                     const ar_represent_run_opts *o, ar_represent_run_result *out, ar_error *err)
{
    progress(o, AR_REPRESENT_STEP_ANALYSE, p.rows, 0);
    int rc = ar_represent_analyze(ws, p, x, &o->represent, &out->plain, err);
    if (rc != AR_OK)
        return fail(out, AR_REPRESENT_STEP_ANALYSE, rc);
    const ar_represent_result *r = &out->plain;
    /* The result points into the workspace, which the run frees. */
    out->svals_ = malloc(r->n * sizeof(double));
    if (out->svals_ == NULL)
        return fail(out, AR_REPRESENT_STEP_SETUP, ar_error_set(err, AR_ENOMEM,
                                                               "represent: out of memory"));
    memcpy(out->svals_, r->centred_svals, r->n * sizeof(double));
    out->plain.centred_svals = out->svals_;
    out->failed = ar_represent_failed_side(r);
    out->head_size = o->head_size_given ? o->head_size : r->min_head_size;
    out->representable = r->feasible && r->min_head_size <= out->head_size;
    if (out->representable) {
        progress(o, AR_REPRESENT_STEP_CERTIFICATE, p.rows, out->head_size);
        rc = ar_represent_certificate(ws, out->head_size, &out->certificate, err);
        if (rc != AR_OK)
            return fail(out, AR_REPRESENT_STEP_CERTIFICATE, rc);
        out->have_certificate = 1;
        return AR_OK;
    }
    return r->feasible ? plain_too_small(p, o, out, err) : AR_OK;
}

/* ---- masked ---- */

/* The verdict between the proved lower bound and the certified size. */
static int masked_verdict(const ar_masked_result *r, size_t head_size)
{
    if (r->certified && head_size >= r->upper)
        return 1;
    return head_size < r->lower ? 0 : -1;
}

static int run_masked(ar_masked_workspace *ws, ar_cview p, const ar_cview *x,
                      const ar_represent_run_opts *o, ar_represent_run_result *out, ar_error *err)
{
    progress(o, AR_REPRESENT_STEP_ANALYSE, p.rows, 0);
    const ar_mask *mask = o->infer_mask ? NULL : o->mask;
    ar_masked_result *r = &out->masked_res;
    int rc = ar_masked_analyze(ws, p, x, mask, &o->masked, r, err);
    if (rc != AR_OK)
        return fail(out, AR_REPRESENT_STEP_ANALYSE, rc);
    out->head_size = o->head_size_given ? o->head_size : (r->certified ? r->upper : r->lower);
    out->representable = masked_verdict(r, out->head_size);
    if (out->representable == 1) {
        progress(o, AR_REPRESENT_STEP_CERTIFICATE, p.rows, out->head_size);
        rc = ar_masked_certificate(ws, out->head_size, &out->certificate, err);
        if (rc != AR_OK)
            return fail(out, AR_REPRESENT_STEP_CERTIFICATE, rc);
        out->have_certificate = 1;
    } else if (out->representable == 0) {
        out->have_logit_error_lower =
            ar_masked_logit_error_lower(ws, out->head_size, &out->logit_error_lower, err) == AR_OK;
        if (o->bias != NULL) {
            snprintf(out->fit_skipped, sizeof out->fit_skipped, "%s", no_fit_with_bias);
        } else if (!o->fit) {
            snprintf(out->fit_skipped, sizeof out->fit_skipped, "{flag:no-fit}");
        } else {
            progress(o, AR_REPRESENT_STEP_FIT, p.rows, out->head_size);
            rc = ar_masked_fit(ws, out->head_size, &o->fit_opts, &out->fit, err);
            if (rc != AR_OK)
                return fail(out, AR_REPRESENT_STEP_FIT, rc);
            out->have_fit = 1;
        }
    }
    /* The result's mask lives in the workspace, which the run frees. */
    if (ar_mask_copy(&out->mask, r->mask, err) != AR_OK)
        return fail(out, AR_REPRESENT_STEP_SETUP,
                    ar_error_set(err, AR_ENOMEM, "represent: out of memory copying the mask"));
    r->mask = &out->mask;
    return AR_OK;
}

/* ---- the run ---- */

int ar_represent_run_check(ar_cview p, const ar_represent_run_opts *opts, ar_error *err)
{
    if (opts == NULL)
        return ar_error_set(err, AR_EINVAL, "represent: NULL options");
    /* A mask says where the zeros are; smoothing lifts them. */
    if (opts->mask != NULL || opts->infer_mask || opts->represent.smooth > 0.0)
        return AR_OK;
    for (size_t j = 0; j < p.cols; j++)
        for (size_t i = 0; i < p.rows; i++)
            if (AR_VAT(p, i, j) == 0.0)
                return ar_error_set(err, AR_EDOMAIN,
                                    "entry (%zu, %zu) = 0 is not positive: log P is undefined; "
                                    "a masked map (causal, window...)? give {opt:mask=auto} or "
                                    "the mask; zeros that are underflow need {opt:smooth=EPS}",
                                    i, j);
    return AR_OK;
}

static void clear(ar_represent_run_result *out)
{
    memset(out, 0, sizeof *out);
    out->mask = ar_mask_none();
    out->masked_res.mask = NULL;
}

/* The analysis of P; with a bias, of P with it removed, and the checks
 * that need P and B themselves after it. */
static int run_target(ar_masked_workspace *mws, ar_represent_workspace *rws, ar_cview p,
                      const ar_cview *x, const ar_represent_run_opts *opts,
                      ar_represent_run_result *out, ar_error *err)
{
    if (opts->bias == NULL)
        return out->masked ? run_masked(mws, p, x, opts, out, err)
                           : run_plain(rws, p, x, opts, out, err);
    ar_axis axis = out->masked ? opts->masked.axis : opts->represent.axis;
    ar_matrix unbiased = ar_matrix_empty();
    int rc = represent_bias_remove(p, *opts->bias, axis, &unbiased, err);
    if (rc != AR_OK)
        return fail(out, AR_REPRESENT_STEP_BIAS, rc);
    ar_cview target = ar_matrix_cview(&unbiased);
    rc = out->masked ? run_masked(mws, target, x, opts, out, err)
                     : run_plain(rws, target, x, opts, out, err);
    if (rc == AR_OK) {
        progress(opts, AR_REPRESENT_STEP_BIAS, p.rows, out->head_size);
        rc = represent_bias_finish(p, x, *opts->bias, out, err);
        rc = rc == AR_OK ? rc : fail(out, AR_REPRESENT_STEP_BIAS, rc);
    }
    ar_matrix_free(&unbiased);
    return rc;
}

int ar_represent_run(ar_cview p, const ar_cview *x, const ar_represent_run_opts *opts,
                     ar_represent_run_result *out, ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "represent: NULL result");
    clear(out);
    if (opts == NULL)
        return fail(out, AR_REPRESENT_STEP_SETUP,
                    ar_error_set(err, AR_EINVAL, "represent: NULL options"));
    if (p.rows == 0 || p.cols == 0)
        return fail(out, AR_REPRESENT_STEP_SETUP,
                    ar_error_set(err, AR_EINVAL, "represent: empty map"));
    int checked = ar_represent_run_check(p, opts, err);
    if (checked != AR_OK)
        return fail(out, AR_REPRESENT_STEP_SETUP, checked);
    out->masked = opts->mask != NULL || opts->infer_mask;
    ar_masked_workspace *mws = NULL;
    ar_represent_workspace *rws = NULL;
    int rc = out->masked ? ar_masked_workspace_alloc(&mws, p.rows, err)
                         : ar_represent_workspace_alloc(&rws, p.rows, err);
    if (rc != AR_OK)
        rc = fail(out, AR_REPRESENT_STEP_SETUP,
                  ar_error_set(err, rc, "represent: cannot allocate the workspace"));
    if (rc == AR_OK)
        rc = run_target(mws, rws, p, x, opts, out, err);
    ar_masked_workspace_free(mws);
    ar_represent_workspace_free(rws);
    if (rc != AR_OK) {
        ar_represent_step step = out->failed_step;
        ar_represent_run_result_free(out);
        out->failed_step = step;
    }
    return rc;
}

void ar_represent_run_result_free(ar_represent_run_result *out)
{
    if (out == NULL)
        return;
    if (out->have_certificate)
        ar_certificate_free(&out->certificate);
    ar_mask_free(&out->mask);
    free(out->svals_);
    clear(out);
}
