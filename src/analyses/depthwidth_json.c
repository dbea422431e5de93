/* The JSON record of a depthwidth result (ar_dw_result_json): the object
 * `attnrank depthwidth --json` prints (without the fit's "file") and the
 * attnrank.DepthWidth* records are built from. */
#include "attnrank/json.h"

#include "json_build.h"

static const char *mode_name(ar_dw_mode m)
{
    switch (m) {
    case AR_DW_MODE_OPTIMUM: return "optimum";
    case AR_DW_MODE_TRANSITION_D: return "transition_d";
    case AR_DW_MODE_TRANSITION_LAYERS: return "transition_layers";
    case AR_DW_MODE_VERDICT: return "verdict";
    default: return "fit";
    }
}

json_t *jb_dw_fit(jb *b, const ar_dw_fit *f)
{
    json_t *o = json_object();
    jb_set(b, o, "points", jb_size(f->npoints));
    jb_set(b, o, "weighted", jb_bool(f->weighted));
    jb_set(b, o, "intercept", jb_real(b, f->intercept));
    jb_set(b, o, "slope", jb_real(b, f->slope));
    jb_set(b, o, "intercept_err", jb_real(b, f->intercept_err));
    jb_set(b, o, "slope_err", jb_real(b, f->slope_err));
    jb_set(b, o, "covariance", jb_real(b, f->cov));
    jb_set(b, o, "r2", jb_real(b, f->r2));
    jb_set(b, o, "chi2", jb_real(b, f->chi2));
    jb_set(b, o, "chi2_red", jb_real(b, f->chi2_red));
    return o;
}

json_t *jb_dw_law(jb *b, const ar_dw_law *law, const char *source)
{
    json_t *o = json_object();
    jb_set(b, o, "intercept", jb_real(b, law->intercept));
    jb_set(b, o, "slope", jb_real(b, law->slope));
    jb_set(b, o, "params_coeff", jb_real(b, law->params_coeff));
    jb_set(b, o, "source", json_string(source));
    return o;
}

static json_t *embedding_json(jb *b, const ar_dw_result *r)
{
    const ar_dw_embedding *e = &r->embedding;
    json_t *o = json_object();
    jb_set(b, o, "embed_rank", jb_size(r->req.embed_rank));
    jb_set(b, o, "compared_d", jb_real(b, e->d));
    jb_set(b, o, "effective_d", jb_real(b, e->effective_d));
    jb_set(b, o, "width_capped", jb_bool(e->width_capped));
    jb_set(b, o, "crossover_layers", jb_real(b, e->crossover_layers));
    jb_set(b, o, "l_th", jb_real(b, e->l_th));
    jb_set(b, o, "depth_efficient", e->have_layers ? jb_bool(e->depth_efficient) : json_null());
    jb_set(b, o, "claim", json_string("derived"));
    return o;
}

/* The values of the mode, after mode, law and fit. */
static void mode_values(jb *b, json_t *o, const ar_dw_result *r)
{
    const ar_dw_request *q = &r->req;
    const ar_dw_optimum *p = &r->optimum;
    const ar_dw_verdict *v = &r->verdict;
    switch (q->mode) {
    case AR_DW_MODE_OPTIMUM:
        jb_set(b, o, "total_params", jb_real(b, p->params));
        jb_set(b, o, "optimal_layers", jb_real(b, p->layers));
        jb_set(b, o, "optimal_d", jb_real(b, p->d));
        break;
    case AR_DW_MODE_TRANSITION_D:
        jb_set(b, o, "layers", jb_size(q->layers));
        jb_set(b, o, "transition_d", jb_real(b, r->transition_d));
        break;
    case AR_DW_MODE_TRANSITION_LAYERS:
        jb_set(b, o, "d", jb_size(q->d));
        jb_set(b, o, "transition_layers", jb_real(b, r->transition_layers));
        break;
    default: /* verdict */
        jb_set(b, o, "layers", jb_size(q->layers));
        jb_set(b, o, "d", jb_size(q->d));
        jb_set(b, o, "total_params", jb_real(b, v->params));
        jb_set(b, o, "transition_layers", jb_real(b, v->transition_layers));
        jb_set(b, o, "transition_d", jb_real(b, v->transition_d));
        jb_set(b, o, "optimal_layers", jb_real(b, v->optimal_layers));
        jb_set(b, o, "optimal_d", jb_real(b, v->optimal_d));
        jb_set(b, o, "depth_ratio", jb_real(b, v->depth_ratio));
        jb_set(b, o, "verdict", json_string(ar_dw_verdict_name(v)));
        jb_set(b, o, "depth_efficient", jb_bool(v->depth_efficient));
        jb_set(b, o, "near_optimal", jb_bool(v->near_optimal));
        jb_set(b, o, "tolerance", jb_real(b, v->tolerance));
        break;
    }
    jb_set(b, o, "l_th", jb_real(b, r->l_th));
}

int ar_dw_result_json(const ar_dw_result *r, unsigned flags, char **text, ar_error *err)
{
    if (r == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_dw_result_json: NULL result");
    const ar_dw_request *q = &r->req;
    jb b;
    jb_init(&b, flags);
    json_t *o;
    if (q->mode == AR_DW_MODE_FIT) { /* the refit itself, flat */
        o = jb_dw_fit(&b, &q->fit);
        jb_set(&b, o, "mode", json_string("fit"));
        return jb_dump(&b, o, "ar_dw_result_json", text, err);
    }
    o = json_object();
    jb_set(&b, o, "mode", json_string(mode_name(q->mode)));
    jb_set(&b, o, "law", jb_dw_law(&b, &q->law, q->law_source));
    if (q->have_fit)
        jb_set(&b, o, "fit", jb_dw_fit(&b, &q->fit));
    mode_values(&b, o, r);
    if (r->have_embedding)
        jb_set(&b, o, "embedding", embedding_json(&b, r));
    return jb_dump(&b, o, "ar_dw_result_json", text, err);
}
