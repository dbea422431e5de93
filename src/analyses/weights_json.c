/* The JSON record of a weights report (ar_weights_report_json): the object
 * `attnrank weights --json` prints and attnrank.Weights is built from.  The
 * given rule's tolerance "note" is not written here: its text names the
 * faces' options, so each face adds it. */
#include "attnrank/json.h"

#include "json_build.h"

#include <stdio.h>

/* A count that 0 marks as unknown: null then. */
static json_t *size_or_null(size_t v)
{
    return v ? jb_size(v) : json_null();
}

static size_t circuit_size(const ar_weights_report *r)
{
    return r->head_dim < r->d ? r->head_dim : r->d;
}

static json_t *config_json(jb *b, const ar_weights_report *r)
{
    if (!r->config_found)
        return json_null();
    const ar_model_config *c = &r->config;
    json_t *o = json_object();
    jb_set(b, o, "hidden_size", size_or_null(c->hidden_size));
    jb_set(b, o, "num_attention_heads", size_or_null(c->heads));
    jb_set(b, o, "num_key_value_heads", size_or_null(c->kv_heads));
    jb_set(b, o, "head_dim", size_or_null(c->head_dim));
    jb_set(b, o, "num_hidden_layers", size_or_null(c->layers));
    jb_set(b, o, "max_position_embeddings", size_or_null(c->max_positions));
    jb_set(b, o, "rotary", jb_bool(c->rotary));
    jb_set(b, o, "model_type", json_string(c->model_type));
    return o;
}

/* The rule in force, the storage type's constants, the seeds and the
 * formulas of both thresholds (docs/weights.md). */
static json_t *tolerance_json(jb *b, const ar_weights_report *r)
{
    json_t *o = json_object();
    jb_set(b, o, "rule", json_string(ar_weights_rule_name(r->rule)));
    jb_set(b, o, "default_rule", json_string(ar_weights_rule_name(AR_WRULE_NOISE)));
    jb_set(b, o, "rtol", r->rtol_given ? jb_real(b, r->rtol) : json_null());
    jb_set(b, o, "atol", jb_real(b, r->atol));
    jb_set(b, o, "precision", json_string(ar_precision_name(r->precision)));
    jb_set(b, o, "unit_roundoff", jb_real(b, ar_weights_unit_roundoff(r->precision)));
    jb_set(b, o, "subnormal_abs", jb_real(b, ar_weights_subnormal_abs(r->precision)));
    jb_set(b, o, "seed", jb_u64(r->seed));
    jb_set(b, o, "seed_derivation", json_string("ar_seed_derive(seed, [layer, head])"));
    jb_set(b, o, "draws", jb_size(r->noise_draws));
    jb_set(b, o, "factor", jb_real(b, r->noise_factor));
    jb_set(b, o, "certain",
           json_string("tau_cert = e_A ||B||_2 + ||A||_2 e_B + e_A e_B + arith_floor, e_A = u "
                       "||A||_F + subnormal_abs sqrt(entries)"));
    jb_set(b, o, "default",
           json_string("tau_default = min(max(factor x max over draws of ||dA^T B + A^T "
                       "dB||_2, arith_floor), tau_cert), dA_ij uniform in [-h_ij, h_ij], h_ij "
                       "= max(u |a_ij|, subnormal_abs)"));
    return o;
}

static json_t *noise_json(jb *b, const ar_weights_noise *z, double sigma_1)
{
    json_t *o = json_object();
    jb_set(b, o, "rule", json_string(ar_weights_rule_name(AR_WRULE_NOISE)));
    jb_set(b, o, "seed", jb_u64(z->seed));
    jb_set(b, o, "draws", jb_size(z->draws));
    jb_set(b, o, "factor", jb_real(b, z->factor));
    jb_set(b, o, "draw_max", jb_real(b, z->draw_max));
    jb_set(b, o, "draw_min", jb_real(b, z->draw_min));
    /* the largest draw in units of u sigma_1: undefined for a zero circuit */
    jb_set(b, o, "tail",
           sigma_1 > 0.0 ? jb_real(b, z->draw_max / (z->unit_roundoff * sigma_1)) : json_null());
    jb_set(b, o, "capped", jb_bool(z->capped));
    jb_set(b, o, "norm_a", jb_real(b, z->norm_a));
    jb_set(b, o, "norm_b", jb_real(b, z->norm_b));
    jb_set(b, o, "err_a", jb_real(b, z->err_a));
    jb_set(b, o, "err_b", jb_real(b, z->err_b));
    jb_set(b, o, "arith_floor", jb_real(b, z->arith_floor));
    return o;
}

/* One head; its layer is the enclosing layer's. */
static json_t *head_json(jb *b, const ar_weights_report *r, const ar_qk_head *h)
{
    const ar_weights_noise *z = &h->noise;
    json_t *o = json_object();
    jb_set(b, o, "head", jb_size(h->head));
    jb_set(b, o, "kv_head", jb_size(h->kv_head));
    jb_rank_metrics_into(b, o, &h->metrics);
    jb_set(b, o, "rule", json_string(ar_weights_rule_name(r->rule)));
    jb_set(b, o, "certain_rank", jb_size(z->certain_rank));
    jb_set(b, o, "tau_cert", jb_real(b, z->tau_cert));
    jb_set(b, o, "default_rank", jb_size(z->default_rank));
    jb_set(b, o, "tau_default", jb_real(b, z->tau_noise));
    jb_set(b, o, "noise", noise_json(b, z, h->singular_values[0]));
    jb_set(b, o, "singular_values", jb_doubles(b, h->singular_values, circuit_size(r)));
    if (r->at_context.defined) {
        jb_set(b, o, "reach_context", jb_size(h->reach_context));
        jb_set(b, o, "bottleneck_context", jb_bool(h->bottleneck_context));
    }
    if (r->at_n.defined) {
        jb_set(b, o, "reach_n", jb_size(h->reach_n));
        jb_set(b, o, "bottleneck_n", jb_bool(h->bottleneck_n));
    }
    return o;
}

static json_t *layers_json(jb *b, const ar_weights_report *r)
{
    json_t *layers = json_array();
    for (size_t l = 0; l < r->nlayers; l++) {
        json_t *heads = json_array();
        for (size_t k = 0; k < r->heads; k++)
            jb_append(b, heads, head_json(b, r, ar_weights_head(r, l, k)));
        json_t *o = json_object();
        jb_set(b, o, "layer", jb_size(r->layer_index[l]));
        jb_set(b, o, "q_tensor", json_string(r->q_names[l]));
        jb_set(b, o, "k_tensor", json_string(r->k_names[l]));
        jb_set(b, o, "heads", heads);
        jb_append(b, layers, o);
    }
    return layers;
}

static json_t *fixed_json(jb *b, const ar_head_config *m, const ar_head_config *f)
{
    json_t *o = json_object();
    jb_set(b, o, "head_size", jb_size(f->dp));
    jb_set(b, o, "attention_params", jb_u64(f->attention_params));
    jb_set(b, o, "bottleneck", jb_bool(f->bottleneck));
    jb_set(b, o, "params_ratio",
           jb_real(b, m->attention_params
                          ? (double)f->attention_params / (double)m->attention_params
                          : 0.0));
    return o;
}

static json_t *verdict_json(jb *b, const ar_weights_verdict *v, const ar_weights_report *r)
{
    if (!v->defined)
        return json_null();
    const ar_head_config *m = &v->model;
    json_t *o = json_object();
    jb_set(b, o, "n", jb_size(v->n));
    jb_set(b, o, "head_size", jb_size(m->dp));
    jb_set(b, o, "logit_rank_bound", jb_size(m->logit_rank_bound));
    jb_set(b, o, "bottleneck", jb_bool(m->bottleneck));
    jb_set(b, o, "bottleneck_paper", jb_bool(m->bottleneck_paper));
    jb_set(b, o, "rank_deficit", jb_size(m->rank_deficit));
    jb_set(b, o, "max_seq_len", jb_size(m->max_seq_len));
    jb_set(b, o, "attention_params", jb_u64(m->attention_params));
    jb_set(b, o, "needed_head_size", jb_size(v->needed));
    jb_set(b, o, "mask", jb_mask(b, &r->masks.kind[v->kind].mask));
    jb_set(b, o, "generic_status", json_string(ar_generic_status_name(v->generic.status)));
    jb_set(b, o, "formula", json_string(v->generic.formula));
    jb_set(b, o, "heads_bottlenecked", jb_size(v->heads_bottlenecked));
    jb_set(b, o, "heads_total", jb_size(r->nlayers * r->heads));
    jb_set(b, o, "max_heads_exact", jb_size(v->max_heads_exact));
    jb_set(b, o, "fixed_multihead", fixed_json(b, m, &v->fixed));
    return o;
}

static json_t *masks_json(jb *b, const ar_model_masks *m)
{
    json_t *kinds = json_array();
    for (size_t k = 0; k < m->count; k++) {
        json_t *one = json_object();
        jb_set(b, one, "label", json_string(m->kind[k].label));
        jb_set(b, one, "layers", jb_size(m->kind[k].layers));
        jb_set(b, one, "mask", jb_mask(b, &m->kind[k].mask));
        jb_append(b, kinds, one);
    }
    json_t *o = json_object();
    jb_set(b, o, "mask_reason", json_string(m->reason));
    jb_set(b, o, "layer_kinds", kinds);
    return o;
}

/* min, mean and max of a rank over the heads, with prefix "<what>_rank_". */
static void rank_range_into(jb *b, json_t *o, const char *what, size_t min, double mean,
                            size_t max)
{
    char key[48];
    snprintf(key, sizeof key, "%s_rank_min", what);
    jb_set(b, o, key, jb_size(min));
    snprintf(key, sizeof key, "%s_rank_mean", what);
    jb_set(b, o, key, jb_real(b, mean));
    snprintf(key, sizeof key, "%s_rank_max", what);
    jb_set(b, o, key, jb_size(max));
}

static json_t *summary_json(jb *b, const ar_weights_report *r)
{
    json_t *o = json_object();
    jb_set(b, o, "heads_total", jb_size(r->nlayers * r->heads));
    jb_set(b, o, "rank_min", jb_size(r->rank_min));
    jb_set(b, o, "rank_mean", jb_real(b, r->rank_mean));
    jb_set(b, o, "rank_max", jb_size(r->rank_max));
    jb_set(b, o, "rank_deficient", jb_size(r->rank_deficient));
    jb_set(b, o, "roy_vetterli_rank_mean", jb_real(b, r->roy_vetterli_mean));
    jb_set(b, o, "stable_rank_mean", jb_real(b, r->stable_rank_mean));
    rank_range_into(b, o, "certain", r->certain_rank_min, r->certain_rank_mean,
                    r->certain_rank_max);
    rank_range_into(b, o, "default", r->default_rank_min, r->default_rank_mean,
                    r->default_rank_max);
    return o;
}

/* One ranked embedding matrix. */
static json_t *embedding_part_json(jb *b, const ar_weights_embedding_part *p)
{
    const ar_rank_metrics *m = &p->metrics;
    json_t *o = json_object();
    jb_set(b, o, "rows", jb_size(p->rows));
    jb_set(b, o, "cols", jb_size(p->cols));
    jb_set(b, o, "precision", json_string(ar_precision_name(p->precision)));
    jb_set(b, o, "rule", json_string(ar_rank_rule_name(m->rule)));
    jb_set(b, o, "rank", jb_size(m->rank));
    jb_set(b, o, "threshold", jb_real(b, m->threshold));
    jb_set(b, o, "certain_rank", jb_size(m->certain_rank));
    jb_set(b, o, "certain_threshold", jb_real(b, m->certain_threshold));
    jb_set(b, o, "seed", jb_u64(m->seed));
    jb_set(b, o, "draws", jb_size(m->draws));
    jb_set(b, o, "sigma_1", jb_real(b, p->sigma_1));
    jb_set(b, o, "sigma_last", jb_real(b, p->sigma_last));
    return o;
}

static json_t *embedding_json(jb *b, const ar_weights_embedding *e)
{
    json_t *o = json_object();
    jb_set(b, o, "token_tensor", json_string(e->token.tensor));
    jb_set(b, o, "token", embedding_part_json(b, &e->token));
    jb_set(b, o, "position_tensor",
           e->have_positions ? json_string(e->combined.tensor) : json_null());
    jb_set(b, o, "token_and_position",
           e->have_positions ? embedding_part_json(b, &e->combined) : json_null());
    jb_set(b, o, "embedding_size", size_or_null(e->embedding_size));
    jb_set(b, o, "width", jb_size(e->width));
    jb_set(b, o, "embedding_rank", jb_size(e->embedding_rank));
    jb_set(b, o, "width_exceeds_rank", jb_bool(e->width_exceeds_rank));
    return o;
}

int ar_weights_report_json(const ar_weights_report *r, unsigned flags, char **text,
                           ar_error *err)
{
    if (r == NULL || r->nlayers == 0 || r->heads == 0)
        return ar_error_set(err, AR_EINVAL, "ar_weights_report_json: NULL or empty report");
    jb b;
    jb_init(&b, flags);
    json_t *o = json_object();
    jb_set(&b, o, "family", json_string(ar_weights_family_name(r->family)));
    jb_set(&b, o, "q_pattern", json_string(r->q_pattern));
    jb_set(&b, o, "k_pattern", json_string(r->k_pattern));
    jb_set(&b, o, "fused", jb_bool(r->fused));
    jb_set(&b, o, "files", jb_size(r->nfiles));
    jb_set(&b, o, "tensors", jb_size(r->ntensors));
    jb_set(&b, o, "config", config_json(&b, r));
    jb_set(&b, o, "d", jb_size(r->d));
    jb_set(&b, o, "heads", jb_size(r->heads));
    jb_set(&b, o, "kv_heads", jb_size(r->kv_heads));
    jb_set(&b, o, "head_size", jb_size(r->head_dim));
    jb_set(&b, o, "context", size_or_null(r->context));
    jb_set(&b, o, "rotary", jb_bool(r->rotary));
    if (r->rotary)
        jb_set(&b, o, "rotary_note",
               json_string("rotary position embeddings not applied: the circuit is analysed "
                           "at relative position 0"));
    jb_set(&b, o, "qk_biases_ignored", jb_bool(r->q_bias || r->k_bias));
    jb_set(&b, o, "tolerance", tolerance_json(&b, r));
    jb_set(&b, o, "layers_found", jb_size(r->layers_found));
    jb_set(&b, o, "layers", layers_json(&b, r));
    json_t *verdicts = json_object();
    jb_set(&b, verdicts, "context", verdict_json(&b, &r->at_context, r));
    jb_set(&b, verdicts, "n", verdict_json(&b, &r->at_n, r));
    jb_set(&b, o, "verdicts", verdicts);
    jb_set(&b, o, "masks", masks_json(&b, &r->masks));
    jb_set(&b, o, "summary", summary_json(&b, r));
    if (r->embedding.found)
        jb_set(&b, o, "embedding", embedding_json(&b, &r->embedding));
    if (r->bias.count > 0)
        jb_set(&b, o, "positional_bias", jb_model_bias(&b, &r->bias));
    return jb_dump(&b, o, "ar_weights_report_json", text, err);
}
