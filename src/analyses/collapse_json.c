/* The JSON record of a collapse result (ar_collapse_result_json): the
 * object `attnrank collapse --json` prints and attnrank.Collapse is built
 * from. */
#include "attnrank/json.h"

#include "json_build.h"

static json_t *depth_json(jb *b, const ar_collapse_result *r, const ar_collapse_depth *dp)
{
    const ar_collapse_norms *nm = &dp->norms;
    json_t *o = json_object();
    jb_set(b, o, "depth", jb_size(dp->depth));
    jb_set(b, o, "norm_fro", jb_real(b, nm->norm_fro));
    jb_set(b, o, "res_fro", jb_real(b, nm->res_fro));
    jb_set(b, o, "rel_res_fro", jb_real(b, nm->rel_res_fro));
    jb_set(b, o, "norm_1inf", jb_real(b, nm->norm_1inf));
    jb_set(b, o, "res_1inf", jb_real(b, nm->res_1inf));
    jb_set(b, o, "rel_res_1inf", jb_real(b, nm->rel_res_1inf));
    jb_set(b, o, "ratio", jb_real(b, dp->ratio));
    jb_rank_metrics_into(b, o, &dp->rank);
    jb_set(b, o, "singular_values", jb_doubles(b, dp->singular_values, r->nsv));
    if (r->opts.have_bound)
        jb_set(b, o, "bound_log", jb_real(b, dp->bound_log));
    return o;
}

static json_t *decay_fit_json(jb *b, const ar_collapse_result *r)
{
    json_t *o = json_object();
    jb_set(b, o, "floor", jb_real(b, r->opts.fit_floor));
    jb_set(b, o, "last_depth", jb_size(r->fit_last));
    jb_set(b, o, "geometric_slope", jb_real(b, r->geometric_slope));
    jb_set(b, o, "geometric_factor", jb_real(b, r->geometric_factor));
    jb_set(b, o, "order", jb_real(b, r->order));
    jb_set(b, o, "order_log_c", jb_real(b, r->order_log_c));
    jb_set(b, o, "order_pairs", jb_size(r->order_pairs));
    return o;
}

int ar_collapse_result_json(const ar_collapse_result *r, unsigned flags, char **text,
                            ar_error *err)
{
    if (r == NULL || (r->count > 0 && r->depths == NULL))
        return ar_error_set(err, AR_EINVAL, "ar_collapse_result_json: NULL result");
    const ar_collapse_opts *c = &r->opts;
    jb b;
    jb_init(&b, flags);
    json_t *o = json_object();
    jb_set(&b, o, "variant", json_string(ar_collapse_variant_name(c)));
    jb_set(&b, o, "layers", jb_size(c->layers));
    jb_set(&b, o, "n", jb_size(c->n));
    jb_set(&b, o, "d", jb_size(c->d));
    jb_set(&b, o, "heads", jb_size(c->heads));
    jb_set(&b, o, "head_size", jb_size(r->head_size));
    jb_set(&b, o, "skip", jb_bool(c->skip));
    jb_set(&b, o, "mlp", jb_bool(c->mlp));
    jb_set(&b, o, "mlp_width", jb_size(c->mlp ? c->mlp_width : 0));
    jb_set(&b, o, "seed", jb_u64(c->seed));
    jb_set(&b, o, "axis", json_string("row"));
    jb_set(&b, o, "residual", json_string("X - 1 x^T, x = column means (Frobenius minimiser)"));
    jb_set(&b, o, "decay_fit", decay_fit_json(&b, r));
    if (c->have_bound) {
        json_t *bound = json_object();
        jb_set(&b, bound, "gamma", jb_real(&b, c->gamma));
        jb_set(&b, bound, "beta", jb_real(&b, c->beta));
        jb_set(&b, bound, "worst_margin_log", jb_real(&b, r->worst_bound_margin));
        jb_set(&b, o, "bound", bound);
    }
    json_t *depths = json_array();
    for (size_t l = 0; l < r->count; l++)
        jb_append(&b, depths, depth_json(&b, r, &r->depths[l]));
    jb_set(&b, o, "depths", depths);
    return jb_dump(&b, o, "ar_collapse_result_json", text, err);
}
