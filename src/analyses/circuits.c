/* Circuits of a checkpoint (include/attnrank/circuits_model.h): reads each
 * selected head's factors once, computes its copying scores (and QK
 * spectrum), keeps its factored circuits, then scores every pair of heads
 * in earlier and later layers. */
#include "circuits_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ar_circuits_opts_init(ar_circuits_opts *o)
{
    if (o == NULL)
        return;
    memset(o, 0, sizeof *o);
    o->ov = 1;
    o->precision = AR_PREC_F64;
    ar_circuit_opts_init(&o->circuit);
}

static int check_opts(const ar_circuits_opts *o, ar_error *err)
{
    if (o->composition > (AR_CIRCUITS_COMP_Q | AR_CIRCUITS_COMP_K | AR_CIRCUITS_COMP_V))
        return ar_error_set(err, AR_EINVAL, "circuits: unknown composition bits 0x%x",
                            o->composition);
    if (!o->ov && !o->qk && !o->full && o->composition == 0)
        return ar_error_set(err, AR_EINVAL, "circuits: nothing to compute (no OV, QK or composition)");
    if (o->layer_range && o->layer_first > o->layer_last)
        return ar_error_set(err, AR_EINVAL, "layer range %zu-%zu is empty", o->layer_first,
                            o->layer_last);
    if (o->head_range && o->head_first > o->head_last)
        return ar_error_set(err, AR_EINVAL, "head range %zu-%zu is empty", o->head_first,
                            o->head_last);
    return AR_OK;
}

/* Per-run scratch and the kept factors. */
typedef struct circ_work {
    ar_matrix wq, wk, wv, wo;
    ar_circuit_factor *ov, *qk; /* nheads each (NULL when not needed) */
    circ_tensors *tensors;      /* nlayers */
    ar_circuit_embed emb;       /* when opts.full */
    double *gamma;              /* d: the layer's norm gain (opts.tl) */
    circ_layout lay;
} circ_work;

static void work_free(circ_work *w, size_t nheads)
{
    ar_matrix_free(&w->wq);
    ar_matrix_free(&w->wk);
    ar_matrix_free(&w->wv);
    ar_matrix_free(&w->wo);
    for (size_t i = 0; i < nheads; i++) {
        if (w->ov)
            ar_circuit_factor_free(&w->ov[i]);
        if (w->qk)
            ar_circuit_factor_free(&w->qk[i]);
    }
    free(w->ov);
    free(w->qk);
    free(w->tensors);
    free(w->gamma);
    ar_circuit_embed_free(&w->emb);
}

void ar_circuits_report_free(ar_circuits_report *rep)
{
    if (rep == NULL)
        return;
    if (rep->head != NULL) {
        free(rep->head[0].ov_singular_values); /* one block each */
        free(rep->head[0].qk.singular_values);
    }
    free(rep->head);
    free(rep->layer_index);
    free(rep->pairs);
    free(rep->embedding_tensor);
    free(rep->unembedding_tensor);
    memset(rep, 0, sizeof *rep);
}

static ar_precision coarser(ar_precision a, ar_precision b)
{
    return ar_precision_eps(a) >= ar_precision_eps(b) ? a : b;
}

static ar_precision tensors_precision(const circ_tensors *t, const ar_circuits_opts *o, int qk)
{
    if (o->precision_given)
        return o->precision;
    ar_precision p = coarser(ar_st_dtype_precision(t->v->dtype), ar_st_dtype_precision(t->o->dtype));
    if (qk)
        p = coarser(p, coarser(ar_st_dtype_precision(t->q->dtype), ar_st_dtype_precision(t->k->dtype)));
    return p;
}

/* Layers in range, their tensors and the layout (from the first). */
static int plan(const ar_safetensors *st, const ar_model_config *cfg, const ar_circuits_opts *o,
                ar_circuits_report *rep, circ_work *w, ar_error *err)
{
    int rc = ar_weights_detect_family(st, &rep->family, err);
    layer_match *m = NULL;
    size_t found = 0;
    if (rc == AR_OK && o->tl)
        rc = circ_tl_family(rep->family, &rep->tl_centred, err);
    if (rc == AR_OK)
        rc = ar_weights_find_layers(st, ar_weights_family_q_pattern(rep->family), &m, &found, err);
    if (rc != AR_OK)
        return rc;
    rep->layer_index = calloc(found > 0 ? found : 1, sizeof *rep->layer_index);
    w->tensors = calloc(found > 0 ? found : 1, sizeof *w->tensors);
    if (rep->layer_index == NULL || w->tensors == NULL)
        rc = ar_error_set(err, AR_ENOMEM, "out of memory");
    w->lay.family = rep->family;
    w->lay.fused = rep->family == AR_WF_GPT2;
    for (size_t i = 0; rc == AR_OK && i < found; i++) {
        if (o->layer_range && (m[i].layer < o->layer_first || m[i].layer > o->layer_last))
            continue;
        size_t l = rep->nlayers;
        rc = circ_find_tensors(st, rep->family, &m[i], &w->tensors[l], err);
        if (rc == AR_OK && o->tl)
            rc = circ_tl_find_gain(st, rep->family, &m[i], &w->tensors[l], err);
        if (rc == AR_OK)
            rc = l == 0 ? circ_resolve_layout(st, &w->tensors[0], cfg, o, &w->lay, err)
                        : circ_check_shapes(st, &w->tensors[l], &w->lay, err);
        if (rc == AR_OK) {
            rep->layer_index[l] = m[i].layer;
            rep->nlayers++;
        }
    }
    if (rc == AR_OK && rep->nlayers == 0)
        rc = ar_error_set(err, AR_EINVAL, "%s: no layer of the %zu found is in the range %zu-%zu",
                          ar_safetensors_file_path(st, 0), found, o->layer_first, o->layer_last);
    free(m);
    return rc;
}

static int alloc_run(const ar_circuits_opts *o, ar_circuits_report *rep, circ_work *w,
                     ar_error *err)
{
    circ_layout *lay = &w->lay;
    rep->d = lay->d;
    rep->heads = lay->heads;
    rep->kv_heads = lay->kv_heads;
    rep->head_dim = lay->head_dim;
    size_t first = o->head_range ? o->head_first : 0;
    size_t last = o->head_range ? o->head_last : lay->heads - 1;
    if (first >= lay->heads)
        return ar_error_set(err, AR_EINVAL, "head range %zu-%zu: the model has heads 0-%zu", first,
                            last, lay->heads - 1);
    if (last >= lay->heads)
        last = lay->heads - 1;
    rep->head_first = first;
    rep->nsel = last - first + 1;
    rep->nheads = rep->nlayers * rep->nsel;
    size_t k = lay->head_dim < lay->d ? lay->head_dim : lay->d, n = rep->nheads;
    rep->head = calloc(n, sizeof *rep->head);
    double *ov_s = o->ov ? calloc(n * k, sizeof(double)) : NULL;
    double *qk_s = o->qk ? calloc(n * k, sizeof(double)) : NULL;
    int need_qk = (o->composition & (AR_CIRCUITS_COMP_Q | AR_CIRCUITS_COMP_K)) != 0;
    w->ov = o->composition ? calloc(n, sizeof *w->ov) : NULL;
    w->qk = need_qk ? calloc(n, sizeof *w->qk) : NULL;
    int ok = rep->head && (!o->ov || ov_s) && (!o->qk || qk_s) && (!o->composition || w->ov) &&
             (!need_qk || w->qk);
    if (ok)
        ok = ar_matrix_alloc(&w->wq, lay->head_dim, lay->d, err) == AR_OK &&
             ar_matrix_alloc(&w->wk, lay->head_dim, lay->d, err) == AR_OK &&
             ar_matrix_alloc(&w->wv, lay->head_dim, lay->d, err) == AR_OK &&
             ar_matrix_alloc(&w->wo, lay->d, lay->head_dim, err) == AR_OK;
    if (ok && o->tl)
        ok = (w->gamma = malloc(lay->d * sizeof(double))) != NULL;
    if (!ok) {
        free(ov_s);
        free(qk_s);
        return ar_error_set(err, AR_ENOMEM, "out of memory for %zu heads", n);
    }
    for (size_t i = 0; i < n; i++) {
        rep->head[i].ov_singular_values = ov_s ? ov_s + i * k : NULL;
        rep->head[i].qk.singular_values = qk_s ? qk_s + i * k : NULL;
    }
    return AR_OK;
}

static int head_scores(const ar_safetensors *st, size_t l, size_t hh, const ar_circuits_opts *o,
                       ar_circuits_report *rep, circ_work *w, ar_error *err)
{
    const circ_tensors *t = &w->tensors[l];
    size_t idx = l * rep->nsel + (hh - rep->head_first);
    ar_circuits_head *h = &rep->head[idx];
    size_t g = hh / (w->lay.heads / w->lay.kv_heads);
    int need_qk = o->qk || w->qk != NULL;
    h->layer = rep->layer_index[l];
    h->head = hh;
    h->kv_head = g;
    h->precision = tensors_precision(t, o, need_qk);
    rep->precision = coarser(rep->precision, h->precision);
    int rc = circ_read_v(st, t, &w->lay, g, &w->wv, err);
    if (rc == AR_OK)
        rc = circ_read_o(st, t, &w->lay, hh, &w->wo, err);
    if (rc == AR_OK && need_qk)
        rc = circ_read_q(st, t, &w->lay, hh, &w->wq, err);
    if (rc == AR_OK && need_qk)
        rc = circ_read_k(st, t, &w->lay, g, &w->wk, err);
    if (rc != AR_OK)
        return rc;
    if (o->tl) { /* w->gamma holds this layer's gain */
        circ_tl_reading(&w->wv, w->gamma, rep->tl_centred);
        if (need_qk) {
            circ_tl_reading(&w->wq, w->gamma, rep->tl_centred);
            circ_tl_reading(&w->wk, w->gamma, rep->tl_centred);
        }
        if (rep->tl_centred)
            circ_tl_writing(&w->wo);
    }
    ar_cview wv = ar_matrix_cview(&w->wv), wo = ar_matrix_cview(&w->wo);
    ar_cview wq = ar_matrix_cview(&w->wq), wk = ar_matrix_cview(&w->wk);
    if (o->ov) {
        ar_circuit_opts co = rep->circuit;
        co.storage = h->precision;
        rc = ar_circuit_copying(wv, wo, &co, &h->copying, NULL, NULL, err);
        if (rc == AR_OK && o->tl) { /* processed factors are not stored values */
            ar_circuit_trace *tr = &h->copying.trace;
            tr->bound = tr->storage_part = tr->arith_part = NAN;
            tr->sign_certain = 0;
        }
        ar_circuit_factor f = ar_circuit_factor_empty();
        if (rc == AR_OK)
            rc = ar_circuit_factor_ov(&f, wv, wo, err);
        if (rc == AR_OK)
            rc = ar_circuit_factor_svals(&f, h->ov_singular_values, err);
        ar_circuit_factor_free(&f);
    }
    if (rc == AR_OK && o->full)
        rc = ar_circuit_full_ov(&w->emb, wv, wo, &rep->circuit, &h->full, NULL, err);
    if (rc == AR_OK && o->qk)
        rc = ar_weights_analyze_factors(wq, wk, h->precision, h->layer, hh, NULL,
                                        h->qk.singular_values, &h->qk, err);
    if (rc == AR_OK && w->ov != NULL)
        rc = ar_circuit_factor_ov(&w->ov[idx], wv, wo, err);
    if (rc == AR_OK && w->qk != NULL)
        rc = ar_circuit_factor_qk(&w->qk[idx], wq, wk, err);
    if (rc != AR_OK) { /* prefix the place; the message is copied out of err first */
        char msg[AR_ERROR_MSG_LEN];
        snprintf(msg, sizeof msg, "%s", err != NULL ? err->msg : ar_strerror(rc));
        return ar_error_set(err, rc, "%s: layer %zu head %zu: %s",
                            ar_safetensors_file_path(st, t->o->file), h->layer, hh, msg);
    }
    return AR_OK;
}

static const struct {
    unsigned bit;
    ar_composition kind;
} kinds[3] = {{AR_CIRCUITS_COMP_Q, AR_COMPOSITION_Q},
              {AR_CIRCUITS_COMP_K, AR_COMPOSITION_K},
              {AR_CIRCUITS_COMP_V, AR_COMPOSITION_V}};

/* Every (earlier, later) pair of analysed heads in distinct layers, per kind. */
static int compositions(ar_circuits_report *rep, const circ_work *w, ar_error *err)
{
    size_t n = rep->nheads, per_kind = 0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++)
            per_kind += rep->head[i].layer < rep->head[j].layer;
    size_t nk = 0;
    for (int c = 0; c < 3; c++)
        nk += (rep->composition & kinds[c].bit) != 0;
    rep->pairs = calloc(per_kind * nk > 0 ? per_kind * nk : 1, sizeof *rep->pairs);
    if (rep->pairs == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory for %zu pairs", per_kind * nk);
    double root_d = sqrt((double)rep->d);
    for (int c = 0; c < 3; c++) {
        if (!(rep->composition & kinds[c].bit))
            continue;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                if (!(rep->head[i].layer < rep->head[j].layer))
                    continue;
                ar_circuits_pair *p = &rep->pairs[rep->npairs++];
                p->earlier = i;
                p->later = j;
                p->kind = kinds[c].kind;
                const ar_circuit_factor *later =
                    kinds[c].kind == AR_COMPOSITION_V ? &w->ov[j] : &w->qk[j];
                int rc = ar_circuit_composition(later, p->kind, &w->ov[i], &p->score, &p->defined,
                                                err);
                if (rc != AR_OK)
                    return rc;
                p->scaled = p->score * root_d;
            }
    }
    return AR_OK;
}

int ar_circuits_analyze_model(const ar_safetensors *st, const ar_model_config *cfg_in,
                              const ar_circuits_opts *opts, ar_circuits_report *rep,
                              ar_error *err)
{
    if (st == NULL || rep == NULL)
        return ar_error_set(err, AR_EINVAL, "circuits: NULL argument");
    memset(rep, 0, sizeof *rep);
    ar_circuits_opts o;
    ar_circuits_opts_init(&o);
    if (opts != NULL)
        o = *opts;
    ar_model_config none;
    memset(&none, 0, sizeof none);
    const ar_model_config *cfg = cfg_in ? cfg_in : &none;
    int rc = check_opts(&o, err);
    if (rc != AR_OK)
        return rc;
    rep->ov = o.ov;
    rep->qk = o.qk;
    rep->full = o.full;
    rep->tl = o.tl;
    rep->composition = o.composition;
    rep->precision = AR_PREC_F64;
    rep->circuit = o.circuit;
    circ_work w;
    memset(&w, 0, sizeof w);
    rc = plan(st, cfg, &o, rep, &w, err);
    if (rc == AR_OK)
        rc = alloc_run(&o, rep, &w, err);
    if (rc == AR_OK && o.full)
        rc = circ_embed_load(st, rep->d, rep, &w.emb, err);
    rep->composition_null_rms = ar_composition_null_rms(rep->d);
    for (size_t l = 0; rc == AR_OK && l < rep->nlayers; l++) {
        if (o.tl)
            rc = circ_tl_read_gain(st, w.tensors[l].ln, rep->d, w.gamma, err);
        for (size_t k = 0; rc == AR_OK && k < rep->nsel; k++)
            rc = head_scores(st, l, rep->head_first + k, &o, rep, &w, err);
    }
    if (rc == AR_OK && o.composition)
        rc = compositions(rep, &w, err);
    if (rc == AR_OK && rep->nheads > 0 && (o.ov || o.full))
        rep->circuit = o.ov ? rep->head[0].copying.opts : rep->head[0].full.opts; /* resolved */
    work_free(&w, rep->nheads);
    if (rc != AR_OK)
        ar_circuits_report_free(rep);
    return ar_error_printable(err, rc);
}
