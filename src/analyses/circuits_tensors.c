/* The tensors of the circuits workflow (include/attnrank/circuits_model.h):
 * names of the value and output projections beside the query tensors that
 * weights.h's conventions find, the head layout, and one head's factors. */
#include "circuits_internal.h"

#include <stdlib.h>
#include <string.h>

static const struct {
    const char *v, *o;
} vo_patterns[AR_WF_NFAMILIES] = {
    [AR_WF_BERT] = {"layer.{layer}.attention.self.value.weight",
                    "layer.{layer}.attention.output.dense.weight"},
    [AR_WF_GPT2] = {"h.{layer}.attn.c_attn.weight", "h.{layer}.attn.c_proj.weight"},
    [AR_WF_LLAMA] = {"layers.{layer}.self_attn.v_proj.weight",
                     "layers.{layer}.self_attn.o_proj.weight"},
    [AR_WF_CUSTOM] = {NULL, NULL},
};

static const char *file_of(const ar_safetensors *st, const ar_st_tensor *t)
{
    return ar_safetensors_file_path(st, t->file);
}

static int find_beside(const ar_safetensors *st, const layer_match *m, const char *pattern,
                       const ar_st_tensor **out, ar_error *err)
{
    char *name = ar_weights_expand_pattern(m->q->name, m->prefix_len, pattern, m->layer);
    if (name == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    *out = ar_safetensors_find(st, name);
    int rc = *out != NULL ? AR_OK
                          : ar_error_set(err, AR_EFORMAT,
                                         "%s: query '%s' of layer %zu has no tensor '%s'",
                                         file_of(st, m->q), m->q->name, m->layer, name);
    free(name);
    return rc;
}

int circ_find_tensors(const ar_safetensors *st, ar_weights_family family, const layer_match *m,
                      circ_tensors *t, ar_error *err)
{
    if ((unsigned)family >= AR_WF_NFAMILIES || vo_patterns[family].v == NULL)
        return ar_error_set(err, AR_EUNSUPPORTED,
                            "circuits: the %s naming convention has no value/output patterns",
                            ar_weights_family_name(family));
    t->q = m->q;
    int rc = find_beside(st, m, ar_weights_family_k_pattern(family), &t->k, err);
    if (rc == AR_OK)
        rc = find_beside(st, m, vo_patterns[family].v, &t->v, err);
    if (rc == AR_OK)
        rc = find_beside(st, m, vo_patterns[family].o, &t->o, err);
    return rc;
}

static int shape_of(const ar_safetensors *st, const ar_st_tensor *t, size_t *rows, size_t *cols,
                    ar_error *err)
{
    if (!ar_st_dtype_is_float(t->dtype))
        return ar_error_set(err, AR_EUNSUPPORTED,
                            "%s: tensor '%s': dtype %s is not a floating-point weight type",
                            file_of(st, t), t->name, ar_st_dtype_name(t->dtype));
    if (t->ndim != 2 || t->shape[0] == 0 || t->shape[1] == 0)
        return ar_error_set(err, AR_EFORMAT, "%s: tensor '%s': expected a non-empty 2-D weight",
                            file_of(st, t), t->name);
    *rows = t->shape[0];
    *cols = t->shape[1];
    return AR_OK;
}

static int expect(const ar_safetensors *st, const ar_st_tensor *t, size_t rows, size_t cols,
                  const char *layout, ar_error *err)
{
    size_t r = 0, c = 0;
    int rc = shape_of(st, t, &r, &c, err);
    if (rc == AR_OK && (r != rows || c != cols))
        rc = ar_error_set(err, AR_EFORMAT, "%s: tensor '%s' is %zu x %zu, expected %zu x %zu (%s)",
                          file_of(st, t), t->name, r, c, rows, cols, layout);
    return rc;
}

int circ_resolve_layout(const ar_safetensors *st, const circ_tensors *t,
                        const ar_model_config *cfg, const ar_circuits_opts *o, circ_layout *lay,
                        ar_error *err)
{
    size_t qr = 0, qc = 0, vr = 0, vc = 0;
    int rc = shape_of(st, t->q, &qr, &qc, err);
    if (rc == AR_OK)
        rc = shape_of(st, t->v, &vr, &vc, err);
    if (rc != AR_OK)
        return rc;
    const char *file = file_of(st, t->q);
    size_t d = lay->fused ? qr : qc, q_out = lay->fused ? qc / 3 : qr;
    size_t v_out = lay->fused ? qc / 3 : vr;
    if (lay->fused && qc % 3 != 0)
        return ar_error_set(err, AR_EFORMAT, "%s: fused '%s' has %zu columns, not q | k | v", file,
                            t->q->name, qc);
    if (cfg->hidden_size != 0 && cfg->hidden_size != d)
        return ar_error_set(err, AR_EFORMAT, "%s: config.json hidden size %zu, tensor '%s' width %zu",
                            file, cfg->hidden_size, t->q->name, d);
    size_t heads = o->heads ? o->heads : cfg->heads;
    if (heads == 0)
        return ar_error_set(err, AR_EINVAL,
                            "%s: number of heads unknown (no config.json with "
                            "num_attention_heads/n_head): give {opt:heads}",
                            file);
    size_t dh = o->head_dim ? o->head_dim : cfg->head_dim;
    if (dh == 0)
        dh = q_out % heads == 0 ? q_out / heads : 0;
    if (dh == 0 || heads * dh != q_out)
        return ar_error_set(err, AR_EFORMAT, "%s: '%s' has %zu query rows, not %zu heads of a size",
                            file, t->q->name, q_out, heads);
    size_t kv = o->kv_heads ? o->kv_heads : cfg->kv_heads;
    if (kv == 0)
        kv = v_out / dh;
    if (kv == 0 || kv * dh != v_out || heads % kv != 0)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: '%s' has %zu value rows: not %zu key/value heads of size %zu "
                            "dividing %zu heads",
                            file, t->v->name, v_out, kv, dh, heads);
    lay->d = d;
    lay->heads = heads;
    lay->head_dim = dh;
    lay->kv_heads = kv;
    return circ_check_shapes(st, t, lay, err);
}

int circ_check_shapes(const ar_safetensors *st, const circ_tensors *t, const circ_layout *lay,
                      ar_error *err)
{
    size_t d = lay->d, q_out = lay->heads * lay->head_dim, kv_out = lay->kv_heads * lay->head_dim;
    if (lay->fused) {
        int rc = expect(st, t->q, d, 3 * d, "GPT-2 c_attn, Conv1D [d, 3 d]", err);
        if (rc == AR_OK && q_out != d)
            rc = ar_error_set(err, AR_EFORMAT, "%s: %zu heads x %zu is not the width %zu",
                              file_of(st, t->q), lay->heads, lay->head_dim, d);
        if (rc == AR_OK)
            rc = expect(st, t->o, q_out, d, "GPT-2 c_proj, Conv1D [heads d_head, d]", err);
        return rc;
    }
    int rc = expect(st, t->q, q_out, d, "nn.Linear [heads d_head, d]", err);
    if (rc == AR_OK)
        rc = expect(st, t->k, kv_out, d, "nn.Linear [kv_heads d_head, d]", err);
    if (rc == AR_OK)
        rc = expect(st, t->v, kv_out, d, "nn.Linear [kv_heads d_head, d]", err);
    if (rc == AR_OK)
        rc = expect(st, t->o, d, q_out, "nn.Linear [d, heads d_head]", err);
    return rc;
}

/* d_head rows of a Linear weight starting at row0, or the same columns of
 * the fused Conv1D weight read transposed. */
static int read_rows(const ar_safetensors *st, const ar_st_tensor *t, const circ_layout *lay,
                     size_t fused_col0, size_t row0, ar_matrix *w, ar_error *err)
{
    if (lay->fused)
        return ar_safetensors_read_block(st, t, 0, fused_col0, AR_TRANS, ar_matrix_view(w), err);
    return ar_safetensors_read_block(st, t, row0, 0, AR_NO_TRANS, ar_matrix_view(w), err);
}

int circ_read_q(const ar_safetensors *st, const circ_tensors *t, const circ_layout *lay, size_t h,
                ar_matrix *w, ar_error *err)
{
    size_t off = h * lay->head_dim;
    return read_rows(st, t->q, lay, off, off, w, err);
}

int circ_read_k(const ar_safetensors *st, const circ_tensors *t, const circ_layout *lay, size_t g,
                ar_matrix *w, ar_error *err)
{
    size_t off = g * lay->head_dim;
    return read_rows(st, t->k, lay, lay->d + off, off, w, err);
}

int circ_read_v(const ar_safetensors *st, const circ_tensors *t, const circ_layout *lay, size_t g,
                ar_matrix *w, ar_error *err)
{
    size_t off = g * lay->head_dim;
    return read_rows(st, t->v, lay, 2 * lay->d + off, off, w, err);
}

int circ_read_o(const ar_safetensors *st, const circ_tensors *t, const circ_layout *lay, size_t h,
                ar_matrix *w, ar_error *err)
{
    size_t off = h * lay->head_dim;
    if (lay->fused) /* Conv1D [in, out]: W_O is the transpose of the head's rows */
        return ar_safetensors_read_block(st, t->o, off, 0, AR_TRANS, ar_matrix_view(w), err);
    return ar_safetensors_read_block(st, t->o, 0, off, AR_NO_TRANS, ar_matrix_view(w), err);
}
