/* Internal to the circuits workflow: the tensors of one layer by the
 * naming conventions of include/attnrank/circuits_model.h, and reading one
 * head's factors from them. */
#ifndef ATTNRANK_ANALYSES_CIRCUITS_INTERNAL_H
#define ATTNRANK_ANALYSES_CIRCUITS_INTERNAL_H

#include "attnrank/circuits_model.h"
#include "weights_internal.h"

typedef struct circ_tensors {
    const ar_st_tensor *q, *k, *v, *o; /* GPT-2: q = k = v = c_attn */
    const ar_st_tensor *ln;            /* the pre-attention LayerNorm gain (opts.tl only) */
} circ_tensors;

typedef struct circ_layout {
    ar_weights_family family;
    int fused;                 /* GPT-2 Conv1D layouts */
    size_t d, heads, kv_heads, head_dim;
} circ_layout;

/* The q, k, v and o tensors of the layer whose query tensor m->q matched. */
int circ_find_tensors(const ar_safetensors *st, ar_weights_family family, const layer_match *m,
                      circ_tensors *t, ar_error *err);
/* heads, d_head, kv heads from overrides, config.json and the shapes of the
 * first layer; every later layer is checked against it by circ_check_shapes. */
int circ_resolve_layout(const ar_safetensors *st, const circ_tensors *t,
                        const ar_model_config *cfg, const ar_circuits_opts *o, circ_layout *lay,
                        ar_error *err);
int circ_check_shapes(const ar_safetensors *st, const circ_tensors *t, const circ_layout *lay,
                      ar_error *err);
/* Head factors: W_Q of head h, W_K and W_V of kv group g (d_head x d), W_O of
 * head h (d x d_head), into caller-allocated matrices of those shapes. */
int circ_read_q(const ar_safetensors *st, const circ_tensors *t, const circ_layout *lay, size_t h,
                ar_matrix *w, ar_error *err);
int circ_read_k(const ar_safetensors *st, const circ_tensors *t, const circ_layout *lay, size_t g,
                ar_matrix *w, ar_error *err);
int circ_read_v(const ar_safetensors *st, const circ_tensors *t, const circ_layout *lay, size_t g,
                ar_matrix *w, ar_error *err);
int circ_read_o(const ar_safetensors *st, const circ_tensors *t, const circ_layout *lay, size_t h,
                ar_matrix *w, ar_error *err);

/* The token embedding and unembedding of a checkpoint of width d, factored
 * into emb (after TransformerLens's preprocessing when rep->tl); their names
 * and V in rep. */
int circ_embed_load(const ar_safetensors *st, size_t d, ar_circuits_report *rep,
                    ar_circuit_embed *emb, ar_error *err);

/* ---- TransformerLens's preprocessing (circuits_tl.c) ---- */

/* AR_OK when the family has a pre-attention norm to fold (GPT-2 LayerNorm:
 * *centred = 1; LLaMA RMSNorm: 0); AR_EUNSUPPORTED naming the reason else. */
int circ_tl_family(ar_weights_family family, int *centred, ar_error *err);
/* t->ln: the layer's pre-attention gain beside the query tensor. */
int circ_tl_find_gain(const ar_safetensors *st, ar_weights_family family, const layer_match *m,
                      circ_tensors *t, ar_error *err);
/* The final norm's gain (ln_f.weight, norm.weight) into gamma (d values). */
int circ_tl_final_gain(const ar_safetensors *st, ar_weights_family family, size_t d,
                       double *gamma, ar_error *err);
/* A 1-D gain of d values into gamma. */
int circ_tl_read_gain(const ar_safetensors *st, const ar_st_tensor *t, size_t d, double *gamma,
                      ar_error *err);
/* Reading weights (rows x d): W <- W diag(gamma) (gamma NULL: no fold), then
 * W <- W P when centre. */
void circ_tl_reading(ar_matrix *w, const double *gamma, int centre);
/* Writing weights (d x cols): W <- P W (each column minus its mean). */
void circ_tl_writing(ar_matrix *w);

#endif
