/* The depthwidth workflow (attnrank/depthwidth_run.h): one mode of the law,
 * with the embedding crossover. */
#include "attnrank/depthwidth_run.h"
#include "attnrank/options.h"

#include <math.h>
#include <string.h>

void ar_dw_request_init(ar_dw_request *req)
{
    if (req == NULL)
        return;
    memset(req, 0, sizeof *req);
    req->mode = AR_DW_MODE_FIT;
    req->law = ar_dw_law_paper();
    req->law_source = "paper";
    req->tolerance = AR_DW_DEFAULT_TOLERANCE;
}

/* The mode's values; *width and *layers the width compared with an
 * embedding rank and the depth judged (NaN: none). */
static int run_mode(const ar_dw_request *q, ar_dw_result *out, double *width, double *layers,
                    ar_error *err)
{
    const ar_dw_law *law = &q->law;
    int rc;
    switch (q->mode) {
    case AR_DW_MODE_OPTIMUM:
        rc = ar_dw_optimal(law, q->params, &out->optimum, err);
        if (rc != AR_OK)
            return ar_error_set(err, rc, "{opt:params=%g}: no optimum under this law (%s)",
                                q->params, ar_strerror(rc));
        out->l_th = out->optimum.l_th;
        *width = out->optimum.d;
        *layers = out->optimum.layers;
        return AR_OK;
    case AR_DW_MODE_TRANSITION_D:
        rc = ar_dw_transition_d(law, (double)q->layers, &out->transition_d, err);
        if (rc != AR_OK)
            return ar_error_set(err, rc, "transition width: %s", ar_strerror(rc));
        out->l_th = ar_dw_l_th(out->transition_d);
        *width = out->transition_d;
        *layers = (double)q->layers;
        return AR_OK;
    case AR_DW_MODE_TRANSITION_LAYERS:
        rc = ar_dw_transition_layers(law, (double)q->d, &out->transition_layers, err);
        if (rc != AR_OK)
            return ar_error_set(err, rc, "transition depth undefined (slope %g)", law->slope);
        out->l_th = ar_dw_l_th((double)q->d);
        *width = (double)q->d;
        *layers = NAN;
        return AR_OK;
    case AR_DW_MODE_VERDICT:
        rc = ar_dw_verdict_of(law, (double)q->layers, (double)q->d, q->tolerance, &out->verdict,
                              err);
        if (rc != AR_OK)
            return ar_error_set(err, rc, "no verdict under this law (%s)", ar_strerror(rc));
        out->l_th = out->verdict.l_th;
        *width = (double)q->d;
        *layers = (double)q->layers;
        return AR_OK;
    default:
        return ar_error_set(err, AR_EINVAL, "depthwidth: unknown mode %d", (int)q->mode);
    }
}

/* The one place of the rules on a request (the faces only convert their
 * arguments and map them onto a mode: which options select it, and that
 * --params and --layers/--d are separate modes, are theirs), options named
 * as tokens. */
static int check_request(const ar_dw_request *req, ar_error *err)
{
    int rc = ar_option_check_nonneg("tolerance", req->tolerance, err);
    if (rc != AR_OK)
        return rc;
    if (req->mode == AR_DW_MODE_FIT) {
        if (!req->have_fit)
            return ar_error_set(err, AR_EINVAL,
                                "give one of {opt:params}, {opt:layers}, {opt:d} or {opt:fit}");
        if (req->embed_rank != 0)
            return ar_error_set(err, AR_EINVAL,
                                "{opt:embed-rank} needs a mode: {opt:params}, {opt:layers} or "
                                "{opt:d}");
        return AR_OK;
    }
    if (req->mode == AR_DW_MODE_OPTIMUM)
        return ar_option_check_positive("params", req->params, err);
    if ((req->mode == AR_DW_MODE_TRANSITION_D || req->mode == AR_DW_MODE_VERDICT) &&
        req->layers == 0)
        return ar_error_set(err, AR_EINVAL, "{opt:layers}: must be >= 1, got 0");
    if ((req->mode == AR_DW_MODE_TRANSITION_LAYERS || req->mode == AR_DW_MODE_VERDICT) &&
        req->d == 0)
        return ar_error_set(err, AR_EINVAL, "{opt:d}: must be >= 1, got 0");
    return AR_OK;
}

int ar_dw_run(const ar_dw_request *req, ar_dw_result *out, ar_error *err)
{
    if (req == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "depthwidth: NULL argument");
    memset(out, 0, sizeof *out);
    out->req = *req;
    if (out->req.law_source == NULL)
        out->req.law_source = req->have_fit ? "fit" : "paper";
    int rc = check_request(req, err);
    if (rc != AR_OK || req->mode == AR_DW_MODE_FIT)
        return rc;
    double width = NAN, layers = NAN;
    rc = run_mode(req, out, &width, &layers, err);
    if (rc != AR_OK || req->embed_rank == 0)
        return rc;
    rc = ar_dw_embedding_of(&req->law, width, (double)req->embed_rank, layers, &out->embedding,
                            err);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "embedding crossover: %s", ar_strerror(rc));
    out->have_embedding = 1;
    return AR_OK;
}
