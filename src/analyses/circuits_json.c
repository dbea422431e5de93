/* The JSON record of a checkpoint's circuits (ar_circuits_report_json): the
 * object `attnrank circuits --json` prints after its "source" and
 * attnrank.Circuits is built from. */
#include "attnrank/json.h"

#include "json_build.h"

/* The same keys for the full circuits, whose z figures and trace bound are
 * null (not certified). */
static json_t *copying_json(jb *b, const ar_copying_scores *s)
{
    json_t *o = json_object();
    jb_set(b, o, "s_eig", jb_real(b, s->s_eig));
    jb_set(b, o, "s_nuc", jb_real(b, s->s_nuc));
    jb_set(b, o, "s_sym", jb_real(b, s->s_sym));
    jb_set(b, o, "z_eig", jb_real(b, s->z_eig));
    jb_set(b, o, "z_nuc", jb_real(b, s->z_nuc));
    jb_set(b, o, "z_sym", jb_real(b, s->z_sym));
    jb_set(b, o, "s_eig_defined", jb_bool(s->eig_defined));
    jb_set(b, o, "nonzero_eigenvalues", jb_size(s->nonzero_eigs));
    jb_set(b, o, "eigenvalue_eta", jb_real(b, s->eig_eta));
    jb_set(b, o, "min_rcond", jb_real(b, s->min_rcond));
    jb_set(b, o, "ill_conditioned", jb_bool(s->ill_conditioned));
    jb_set(b, o, "nuclear_norm", jb_real(b, s->nuclear_norm));
    jb_set(b, o, "trace", jb_real(b, s->trace.trace));
    jb_set(b, o, "trace_bound", jb_real(b, s->trace.bound));
    jb_set(b, o, "sign_certain", jb_bool(s->trace.sign_certain));
    return o;
}

static json_t *head_json(jb *b, const ar_circuits_report *r, const ar_circuits_head *h)
{
    size_t k = r->head_dim < r->d ? r->head_dim : r->d;
    json_t *o = json_object();
    jb_set(b, o, "layer", jb_size(h->layer));
    jb_set(b, o, "head", jb_size(h->head));
    jb_set(b, o, "kv_head", jb_size(h->kv_head));
    jb_set(b, o, "precision", json_string(ar_precision_name(h->precision)));
    if (r->ov) {
        jb_set(b, o, "copying", copying_json(b, &h->copying));
        jb_set(b, o, "ov_singular_values", jb_doubles(b, h->ov_singular_values, k));
    }
    if (r->qk) {
        json_t *q = json_object();
        jb_set(b, q, "singular_values", jb_doubles(b, h->qk.singular_values, k));
        jb_set(b, q, "rank", jb_size(h->qk.metrics.rank));
        jb_set(b, q, "certain_rank", jb_size(h->qk.noise.certain_rank));
        jb_set(b, q, "default_rank", jb_size(h->qk.noise.default_rank));
        jb_set(b, o, "qk", q);
    }
    if (r->full)
        jb_set(b, o, "full_copying", copying_json(b, &h->full));
    return o;
}

static json_t *composition_json(jb *b, const ar_circuits_report *r)
{
    json_t *modes = json_array(), *pairs = json_array();
    const unsigned bits[3] = {AR_CIRCUITS_COMP_Q, AR_CIRCUITS_COMP_K, AR_CIRCUITS_COMP_V};
    for (int c = 0; c < 3; c++)
        if (r->composition & bits[c])
            jb_append(b, modes, json_string(ar_composition_name((ar_composition)c)));
    for (size_t p = 0; p < r->npairs; p++) {
        const ar_circuits_pair *x = &r->pairs[p];
        const ar_circuits_head *from = &r->head[x->earlier], *to = &r->head[x->later];
        json_t *o = json_object();
        jb_set(b, o, "mode", json_string(ar_composition_name(x->kind)));
        jb_set(b, o, "from_layer", jb_size(from->layer));
        jb_set(b, o, "from_head", jb_size(from->head));
        jb_set(b, o, "to_layer", jb_size(to->layer));
        jb_set(b, o, "to_head", jb_size(to->head));
        jb_set(b, o, "score", jb_real(b, x->score));
        jb_set(b, o, "scaled", jb_real(b, x->scaled));
        jb_append(b, pairs, o);
    }
    json_t *o = json_object();
    jb_set(b, o, "modes", modes);
    jb_set(b, o, "null_rms", jb_real(b, r->composition_null_rms));
    jb_set(b, o, "pairs", pairs);
    return o;
}

int ar_circuits_report_json(const ar_circuits_report *r, unsigned flags, char **text,
                            ar_error *err)
{
    if (r == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_circuits_report_json: NULL report");
    jb b;
    jb_init(&b, flags);
    json_t *o = json_object(), *layers = json_array(), *heads = json_array();
    for (size_t l = 0; l < r->nlayers; l++)
        jb_append(&b, layers, jb_size(r->layer_index[l]));
    for (size_t i = 0; i < r->nheads; i++)
        jb_append(&b, heads, head_json(&b, r, &r->head[i]));
    jb_set(&b, o, "family", json_string(ar_weights_family_name(r->family)));
    jb_set(&b, o, "weight_preprocessing", json_string(r->tl ? "tl" : "raw"));
    jb_set(&b, o, "d", jb_size(r->d));
    jb_set(&b, o, "heads", jb_size(r->heads));
    jb_set(&b, o, "kv_heads", jb_size(r->kv_heads));
    jb_set(&b, o, "head_size", jb_size(r->head_dim));
    jb_set(&b, o, "layers", layers);
    jb_set(&b, o, "precision", json_string(ar_precision_name(r->precision)));
    if (r->tl)
        jb_set(&b, o, "weights_centred", jb_bool(r->tl_centred));
    if (r->ov) {
        json_t *t = json_object();
        jb_set(&b, t, "zero_factor", jb_real(&b, r->circuit.zero_factor));
        jb_set(&b, t, "rcond_warn", jb_real(&b, r->circuit.rcond_warn));
        jb_set(&b, t, "null_sd_eig", jb_real(&b, ar_copying_null_sd_eig(r->head_dim)));
        jb_set(&b, t, "null_sd_nuc", jb_real(&b, ar_copying_null_sd_nuc(r->d, r->head_dim)));
        jb_set(&b, o, "copying_tolerance", t);
    }
    if (r->full) {
        json_t *f = json_object();
        jb_set(&b, f, "embedding", json_string(r->embedding_tensor));
        jb_set(&b, f, "unembedding",
               json_string(r->unembedding_tensor ? r->unembedding_tensor : "tied"));
        jb_set(&b, f, "vocab", jb_size(r->vocab));
        jb_set(&b, o, "full_circuits", f);
    }
    jb_set(&b, o, "circuit_heads", heads);
    if (r->composition)
        jb_set(&b, o, "composition", composition_json(&b, r));
    return jb_dump(&b, o, "ar_circuits_report_json", text, err);
}
