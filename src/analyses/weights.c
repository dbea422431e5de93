/* QK circuits of trained models (see include/attnrank/weights.h):
 * locate q/k projections by naming convention, resolve the head layout from
 * config.json and the shapes, and analyse W_q^h^T W_k^h head by head from
 * the factors. */
#include "attnrank/weights.h"
#include "attnrank/mask.h"
#include "attnrank/random.h"
#include "attnrank/spectrum.h"
#include "attnrank/status.h"
#include "attnrank/storage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "weights_internal.h"


/* ------------------------------------------------------------------ */
/* tolerances                                                           */
/* ------------------------------------------------------------------ */

double ar_weights_unit_roundoff(ar_precision p)
{
    return ar_storage_unit_roundoff(p);
}

double ar_weights_default_rtol(ar_precision p, size_t m, size_t n)
{
    size_t big = m > n ? m : n;
    return sqrt((double)big) * ar_weights_unit_roundoff(p);
}

void ar_weights_opts_init(ar_weights_opts *o)
{
    if (o == NULL)
        return;
    memset(o, 0, sizeof *o);
    o->rule = AR_WRULE_NOISE;
    o->rtol = 0.0;
    o->atol = 0.0;
    o->seed = 0;
    o->noise_draws = AR_WEIGHTS_NOISE_DRAWS;
    o->noise_factor = AR_WEIGHTS_NOISE_FACTOR;
    o->energy_fraction = 0.99;
    o->mask = NULL;
}

void ar_weights_opts_tolerance(ar_weights_opts *o, int rtol_given, double rtol, double atol)
{
    if (o == NULL)
        return;
    if (!(rtol_given || atol > 0.0)) {
        o->atol = atol; /* 0, or a value the checks refuse */
        return;
    }
    o->rule = AR_WRULE_GIVEN;
    o->rtol = rtol_given ? rtol : 0.0;
    o->atol = atol;
}

/* A copy of the options, the defaults when NULL. */
static ar_weights_opts opts_or_defaults(const ar_weights_opts *opts)
{
    ar_weights_opts o;
    if (opts != NULL)
        o = *opts;
    else
        ar_weights_opts_init(&o);
    return o;
}

/* ------------------------------------------------------------------ */
/* shapes and head layout                                               */
/* ------------------------------------------------------------------ */

typedef struct layer_shape {
    size_t d;        /* input width */
    size_t q_out;    /* heads * d_head */
    size_t k_out;    /* kv_heads * d_head */
} layer_shape;

static const char *tensor_file(const ar_safetensors *st, const ar_st_tensor *t)
{
    return ar_safetensors_file_path(st, t->file);
}

static int shape_2d(const ar_safetensors *st, const ar_st_tensor *t, size_t *rows, size_t *cols,
                    ar_error *err)
{
    if (!ar_st_dtype_is_float(t->dtype))
        return ar_error_set(err, AR_EUNSUPPORTED,
                            "%s: tensor '%s': dtype %s is not a floating-point weight type (F64, "
                            "F32, F16, BF16)",
                            tensor_file(st, t), t->name, ar_st_dtype_name(t->dtype));
    if (t->ndim != 2 || t->shape[0] == 0 || t->shape[1] == 0)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: tensor '%s': expected a non-empty 2-D weight, found %zu "
                            "dimensions",
                            tensor_file(st, t), t->name, t->ndim);
    *rows = t->shape[0];
    *cols = t->shape[1];
    return AR_OK;
}

static int layer_shapes(const ar_safetensors *st, int fused, const ar_st_tensor *q,
                        const ar_st_tensor *k, layer_shape *sh, ar_error *err)
{
    size_t qr = 0, qc = 0, kr = 0, kc = 0;
    int rc = shape_2d(st, q, &qr, &qc, err);
    if (rc != AR_OK)
        return rc;
    if (fused) {
        /* Conv1D: [in, out] = [d, 3 d], q | k | v side by side. */
        if (qc % 3 != 0)
            return ar_error_set(err, AR_EFORMAT,
                                "%s: tensor '%s': fused c_attn has %zu output columns, not a "
                                "multiple of 3 (q | k | v)",
                                tensor_file(st, q), q->name, qc);
        sh->d = qr;
        sh->q_out = sh->k_out = qc / 3;
        return AR_OK;
    }
    rc = shape_2d(st, k, &kr, &kc, err);
    if (rc != AR_OK)
        return rc;
    if (kc != qc)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: key '%s' has %zu input columns, query '%s' has %zu",
                            tensor_file(st, k), k->name, kc, q->name, qc);
    sh->d = qc;
    sh->q_out = qr;
    sh->k_out = kr;
    return AR_OK;
}

/* heads, d_head, kv_heads from overrides, config.json and the shapes. */
static int resolve_layout(const ar_safetensors *st, const ar_st_tensor *q, const layer_shape *sh,
                          const ar_model_config *cfg, const ar_weights_opts *o,
                          ar_weights_report *rep, ar_error *err)
{
    const char *file = tensor_file(st, q);
    if (cfg->hidden_size != 0 && cfg->hidden_size != sh->d)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: config.json hidden size %zu, but tensor '%s' has input width %zu",
                            file, cfg->hidden_size, q->name, sh->d);
    size_t heads = o->heads ? o->heads : cfg->heads;
    if (heads == 0)
        return ar_error_set(err, AR_EINVAL,
                            "%s: number of heads unknown (no num_attention_heads/n_head in a "
                            "config.json beside the model): give {opt:heads}",
                            file);
    size_t dh = o->head_dim ? o->head_dim : cfg->head_dim;
    if (dh == 0) {
        if (sh->q_out % heads != 0)
            return ar_error_set(err, AR_EFORMAT,
                                "%s: tensor '%s': %zu query rows do not split into %zu heads",
                                file, q->name, sh->q_out, heads);
        dh = sh->q_out / heads;
    }
    if (heads * dh != sh->q_out)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: tensor '%s': %zu query rows, but %zu heads x head size %zu = "
                            "%zu",
                            file, q->name, sh->q_out, heads, dh, heads * dh);
    size_t kv = o->kv_heads ? o->kv_heads : cfg->kv_heads;
    if (kv == 0) {
        if (sh->k_out % dh != 0)
            return ar_error_set(err, AR_EFORMAT,
                                "%s: %zu key rows are not a multiple of the head size %zu", file,
                                sh->k_out, dh);
        kv = sh->k_out / dh;
    }
    if (kv * dh != sh->k_out)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: %zu key rows, but %zu key heads x head size %zu = %zu", file,
                            sh->k_out, kv, dh, kv * dh);
    if (kv == 0 || heads % kv != 0)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: %zu key heads do not divide %zu query heads (grouped-query "
                            "attention needs heads = r x key heads)",
                            file, kv, heads);
    rep->d = sh->d;
    rep->heads = heads;
    rep->head_dim = dh;
    rep->kv_heads = kv;
    return AR_OK;
}

/* ------------------------------------------------------------------ */
/* report bookkeeping                                                   */
/* ------------------------------------------------------------------ */

char *ar_weights_strdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *c = malloc(len);
    if (c != NULL)
        memcpy(c, s, len);
    return c;
}

void ar_weights_report_free(ar_weights_report *rep)
{
    if (rep == NULL)
        return;
    for (size_t l = 0; l < rep->nlayers; l++) {
        if (rep->q_names)
            free(rep->q_names[l]);
        if (rep->k_names)
            free(rep->k_names[l]);
    }
    free(rep->q_names);
    free(rep->k_names);
    free(rep->layer_index);
    if (rep->qk != NULL)
        free(rep->qk[0].singular_values); /* one block for all heads */
    free(rep->qk);
    free(rep->q_pattern);
    free(rep->k_pattern);
    ar_weights_embedding_free(&rep->embedding);
    ar_model_bias_report_free(&rep->bias);
    memset(rep, 0, sizeof *rep);
}

const ar_qk_head *ar_weights_head(const ar_weights_report *rep, size_t l, size_t k)
{
    if (rep == NULL || rep->qk == NULL || l >= rep->nlayers || k >= rep->heads)
        return NULL;
    return &rep->qk[l * rep->heads + k];
}

/* Names and layout of the layers to analyse; allocates the per-head arrays. */
static int plan_layers(const ar_safetensors *st, const layer_match *m, size_t found,
                       const ar_weights_opts *o, ar_weights_report *rep, ar_error *err)
{
    size_t first = 0, count = 0;
    for (size_t i = 0; i < found; i++) {
        int keep = !o->layer_range || (m[i].layer >= o->layer_first && m[i].layer <= o->layer_last);
        if (keep && count++ == 0)
            first = i;
    }
    if (count == 0)
        return ar_error_set(err, AR_EINVAL,
                            "%s: layer range %zu-%zu selects none of the %zu layers (%zu-%zu)",
                            ar_safetensors_file_path(st, 0), o->layer_first, o->layer_last, found,
                            m[0].layer, m[found - 1].layer);
    rep->layer_index = calloc(count, sizeof *rep->layer_index);
    rep->q_names = calloc(count, sizeof *rep->q_names);
    rep->k_names = calloc(count, sizeof *rep->k_names);
    if (!rep->layer_index || !rep->q_names || !rep->k_names)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    for (size_t i = first; i < found && rep->nlayers < count; i++) {
        if (o->layer_range && (m[i].layer < o->layer_first || m[i].layer > o->layer_last))
            continue;
        size_t l = rep->nlayers++;
        rep->layer_index[l] = m[i].layer;
        rep->q_names[l] = ar_weights_strdup(m[i].q->name);
        rep->k_names[l] = rep->fused ? ar_weights_strdup(m[i].q->name)
                                     : ar_weights_expand_pattern(m[i].q->name, m[i].prefix_len,
                                                      rep->k_pattern, m[i].layer);
        if (rep->q_names[l] == NULL || rep->k_names[l] == NULL)
            return ar_error_set(err, AR_ENOMEM, "out of memory");
        if (ar_safetensors_find(st, rep->k_names[l]) == NULL)
            return ar_error_set(err, AR_EFORMAT,
                                "%s: query '%s' of layer %zu has no key tensor '%s'",
                                ar_safetensors_file_path(st, m[i].q->file), m[i].q->name,
                                m[i].layer, rep->k_names[l]);
    }
    return AR_OK;
}

/* ".weight" -> ".bias" present beside a projection? */
static int has_bias(const ar_safetensors *st, const char *weight_name)
{
    size_t len = strlen(weight_name);
    if (len < 7 || strcmp(weight_name + len - 7, ".weight") != 0)
        return 0;
    char *b = malloc(len + 1);
    if (b == NULL)
        return 0;
    memcpy(b, weight_name, len - 7);
    strcpy(b + len - 7, ".bias");
    int found = ar_safetensors_find(st, b) != NULL;
    free(b);
    return found;
}

/* ------------------------------------------------------------------ */
/* per-head analysis                                                    */
/* ------------------------------------------------------------------ */

static ar_precision coarser(ar_precision a, ar_precision b)
{
    return ar_weights_unit_roundoff(a) >= ar_weights_unit_roundoff(b) ? a : b;
}

typedef struct head_work {
    ar_matrix wq, wk;    /* d_head x d */
} head_work;

/* W_q^h (d_head x d): rows of a Linear weight, or columns of the fused
 * Conv1D weight read transposed. */
static int read_head(const ar_safetensors *st, const ar_st_tensor *t, int fused,
                     size_t col_offset, size_t head, size_t dh, ar_matrix *w, ar_error *err)
{
    if (fused)
        return ar_safetensors_read_block(st, t, 0, col_offset + head * dh, AR_TRANS,
                                         ar_matrix_view(w), err);
    return ar_safetensors_read_block(st, t, head * dh, 0, AR_NO_TRANS, ar_matrix_view(w), err);
}

static void head_verdict(size_t rank, size_t n, size_t *reach, int *bottleneck)
{
    if (n == 0) {
        *reach = 0;
        *bottleneck = 0;
        return;
    }
    *reach = rank < n - 1 ? rank : n - 1;
    *bottleneck = *reach < n - 1;
}

static int given_rule(const ar_weights_opts *o)
{
    return o->rule == AR_WRULE_GIVEN;
}

/* Spectrum, both thresholds (docs/weights.md, "Rank of stored weights") and
 * the metrics under the rule in force. */
static int analyse_factors(const ar_matrix *wq, const ar_matrix *wk, ar_precision storage,
                           size_t layer, size_t head, const ar_weights_opts *o, double *s,
                           ar_qk_head *h)
{
    size_t d = wq->cols, k = wq->rows < d ? wq->rows : d;
    uint64_t cfg[2] = {(uint64_t)layer, (uint64_t)head};
    int rc = ar_weights_head_factored_cm(wq, wk, storage, ar_seed_derive(o->seed, cfg, 2),
                                      o->noise_draws, o->noise_factor, s, &h->noise);
    if (rc != AR_OK)
        return rc;
    h->singular_values = s;
    ar_rank_opts ro;
    ar_rank_opts_init(&ro);
    ro.precision = storage;
    ro.energy_fraction = o->energy_fraction;
    int given = given_rule(o);
    if (given) {
        ro.rtol = o->rtol;
        ro.atol = o->atol;
    } else {
        ro.rtol = s[0] > 0.0 ? h->noise.tau_noise / s[0] : 0.0;
        ro.atol = 0.0;
    }
    rc = ar_rank_metrics_compute(s, k, d, d, &ro, &h->metrics, NULL);
    if (rc != AR_OK)
        return rc;
    if (!given) { /* exactly the default cut, not rtol x sigma_1 re-rounded */
        h->metrics.threshold = h->noise.tau_noise;
        h->metrics.rank = h->noise.default_rank;
    }
    head_verdict(h->metrics.rank, o->n, &h->reach_n, &h->bottleneck_n);
    return AR_OK;
}

static int analyse_head(head_work *w, const ar_weights_opts *o, ar_weights_report *rep,
                        ar_qk_head *h)
{
    int rc = analyse_factors(&w->wq, &w->wk, h->precision, h->layer, h->head, o,
                             h->singular_values, h);
    if (rc != AR_OK)
        return rc;
    head_verdict(h->metrics.rank, rep->context, &h->reach_context, &h->bottleneck_context);
    return AR_OK;
}

static int analyse_layer(const ar_safetensors *st, size_t l, head_work *w,
                         const ar_weights_opts *o, ar_weights_report *rep, ar_error *err)
{
    const ar_st_tensor *q = ar_safetensors_find(st, rep->q_names[l]);
    const ar_st_tensor *k = ar_safetensors_find(st, rep->k_names[l]);
    layer_shape sh;
    int rc = layer_shapes(st, rep->fused, q, k, &sh, err);
    if (rc != AR_OK)
        return rc;
    if (sh.d != rep->d || sh.q_out != rep->heads * rep->head_dim ||
        sh.k_out != rep->kv_heads * rep->head_dim)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: layer %zu ('%s') has another shape than layer %zu",
                            tensor_file(st, q), rep->layer_index[l], q->name,
                            rep->layer_index[0]);
    ar_precision prec = coarser(ar_st_dtype_precision(q->dtype), ar_st_dtype_precision(k->dtype));
    if (o->precision_given) /* e.g. BF16 training exported as F32 */
        prec = o->precision;
    rep->precision = coarser(rep->precision, prec);
    size_t group = rep->heads / rep->kv_heads, dh = rep->head_dim;
    size_t k_offset = rep->fused ? rep->d : 0; /* k follows q in c_attn */
    for (size_t g = 0; g < rep->kv_heads; g++) {
        rc = read_head(st, k, rep->fused, k_offset, g, dh, &w->wk, err);
        for (size_t t = 0; rc == AR_OK && t < group; t++) {
            size_t hh = g * group + t;
            ar_qk_head *h = &rep->qk[l * rep->heads + hh];
            h->layer = rep->layer_index[l];
            h->head = hh;
            h->kv_head = g;
            h->precision = prec;
            rc = read_head(st, q, rep->fused, 0, hh, dh, &w->wq, err);
            if (rc == AR_OK && (rc = analyse_head(w, o, rep, h)) != AR_OK)
                ar_error_set(err, rc, "%s: layer %zu head %zu: spectrum failed: %s",
                             tensor_file(st, q), h->layer, hh, ar_strerror(rc));
        }
        if (rc != AR_OK)
            return rc;
    }
    return AR_OK;
}

/* ------------------------------------------------------------------ */
/* verdicts and summary                                                 */
/* ------------------------------------------------------------------ */

/* The layer kind with the largest generic head size at n: the verdict of
 * the whole model rests on its most demanding layers. */
static int demanding_kind(const ar_weights_report *rep, size_t n, ar_weights_verdict *v,
                          ar_error *err)
{
    for (size_t k = 0; k < rep->masks.count; k++) {
        ar_mask_generic g;
        int rc = ar_mask_generic_value(&rep->masks.kind[k].mask, n, &g, err);
        if (rc != AR_OK)
            return rc;
        if (k == 0 || g.value > v->generic.value) {
            v->generic = g;
            v->kind = k;
        }
    }
    v->needed = v->generic.value;
    return AR_OK;
}

static int make_verdict(ar_weights_report *rep, size_t n, int use_context, ar_weights_verdict *v,
                        ar_error *err)
{
    memset(v, 0, sizeof *v);
    if (n == 0)
        return AR_OK;
    int rc = demanding_kind(rep, n, v, err);
    if (rc != AR_OK)
        return rc;
    ar_bottleneck_heads_opts ho;
    ar_bottleneck_heads_opts_init(&ho);
    ho.errors = AR_HEADS_ERRORS_SKIP;
    ho.head_size = rep->head_dim;
    ho.mask = &rep->masks.kind[v->kind].mask;
    ar_bottleneck_heads_report hr;
    rc = ar_bottleneck_heads_analyze(rep->d, rep->heads, n, &ho, &hr, err);
    if (rc != AR_OK)
        return rc;
    v->model = hr.fixed;
    v->max_heads_exact = hr.max_heads_exact;
    v->generic = hr.generic; /* with the F_p status when it was affordable */
    ho.head_size = n; /* the paper's FixedMultiHead d_p = n */
    rc = ar_bottleneck_heads_analyze(rep->d, rep->heads, n, &ho, &hr, err);
    if (rc != AR_OK)
        return rc;
    v->fixed = hr.fixed;
    v->defined = 1;
    v->n = n;
    size_t total = rep->nlayers * rep->heads;
    for (size_t i = 0; i < total; i++) {
        ar_qk_head *h = &rep->qk[i];
        size_t reach = h->metrics.rank < v->needed ? h->metrics.rank : v->needed;
        int bottleneck = reach < v->needed;
        if (use_context) {
            h->reach_context = reach;
            h->bottleneck_context = bottleneck;
        } else {
            h->reach_n = reach;
            h->bottleneck_n = bottleneck;
        }
        v->heads_bottlenecked += (size_t)bottleneck;
    }
    return AR_OK;
}

/* The verdicts' masks: the caller's, the family's, or none (with why). */
static void choose_masks(ar_weights_report *rep, const ar_weights_opts *o)
{
    ar_model_masks *m = &rep->masks;
    memset(m, 0, sizeof *m);
    ar_error err = {{0}};
    if (o->mask == NULL && rep->config_found &&
        ar_model_masks_from_config(&rep->config, m, &err) == AR_OK)
        return;
    memset(m, 0, sizeof *m);
    m->count = 1;
    m->kind[0].mask = o->mask != NULL ? *o->mask : ar_mask_none();
    m->kind[0].mask.lengths = NULL; /* parametric kinds only here */
    m->kind[0].mask.allowed = NULL;
    snprintf(m->kind[0].label, sizeof m->kind[0].label, "all layers");
    snprintf(m->reason, sizeof m->reason, "%s",
             o->mask != NULL      ? "{opt:mask}"
             : rep->config_found ? "unknown model family in config.json: bidirectional assumed "
                                   "({opt:mask} states the mask)"
                                 : "no config.json: bidirectional assumed ({opt:mask} states the "
                                   "mask)");
}

static void summarise(ar_weights_report *rep)
{
    size_t total = rep->nlayers * rep->heads;
    size_t full = rep->head_dim < rep->d ? rep->head_dim : rep->d;
    rep->rank_min = rep->certain_rank_min = rep->default_rank_min = SIZE_MAX;
    for (size_t i = 0; i < total; i++) {
        const ar_rank_metrics *m = &rep->qk[i].metrics;
        const ar_weights_noise *z = &rep->qk[i].noise;
        if (z->certain_rank < rep->certain_rank_min)
            rep->certain_rank_min = z->certain_rank;
        if (z->certain_rank > rep->certain_rank_max)
            rep->certain_rank_max = z->certain_rank;
        if (z->default_rank < rep->default_rank_min)
            rep->default_rank_min = z->default_rank;
        if (z->default_rank > rep->default_rank_max)
            rep->default_rank_max = z->default_rank;
        rep->certain_rank_mean += (double)z->certain_rank;
        rep->default_rank_mean += (double)z->default_rank;
        if (m->rank < rep->rank_min)
            rep->rank_min = m->rank;
        if (m->rank > rep->rank_max)
            rep->rank_max = m->rank;
        rep->rank_mean += (double)m->rank;
        rep->roy_vetterli_mean += m->roy_vetterli_rank;
        rep->stable_rank_mean += m->stable_rank;
        rep->rank_deficient += m->rank < full;
    }
    if (total > 0) {
        rep->rank_mean /= (double)total;
        rep->roy_vetterli_mean /= (double)total;
        rep->stable_rank_mean /= (double)total;
        rep->certain_rank_mean /= (double)total;
        rep->default_rank_mean /= (double)total;
    } else {
        rep->rank_min = rep->certain_rank_min = rep->default_rank_min = 0;
    }
}

/* ------------------------------------------------------------------ */
/* entry points                                                         */
/* ------------------------------------------------------------------ */

/* A tolerance: finite and >= 0 (name: its option token). */
static int check_tolerance(const char *name, double v, ar_error *err)
{
    if (!(v >= 0.0))
        return ar_error_set(err, AR_EINVAL, "%s: must be >= 0, got %g", name, v);
    if (!isfinite(v))
        return ar_error_set(err, AR_EINVAL, "%s: must be finite, got %g", name, v);
    return AR_OK;
}

/* The rules on the options, in the faces' order; the messages name the
 * options as tokens (status.h). */
static int check_opts(const ar_weights_opts *o, ar_error *err)
{
    if ((o->q_pattern == NULL) != (o->k_pattern == NULL))
        return ar_error_set(err, AR_EINVAL, "{opt:q-pattern} and {opt:k-pattern} go together");
    if (o->q_pattern != NULL &&
        (strstr(o->q_pattern, LAYER_TOKEN) == NULL || strstr(o->k_pattern, LAYER_TOKEN) == NULL))
        return ar_error_set(err, AR_EINVAL,
                            "{opt:q-pattern}/{opt:k-pattern} need the {layer} placeholder "
                            "('%s', '%s')",
                            o->q_pattern, o->k_pattern);
    if (o->layer_range && o->layer_first > o->layer_last)
        return ar_error_set(err, AR_EINVAL, "layer range %zu-%zu is empty", o->layer_first,
                            o->layer_last);
    if (o->rule != AR_WRULE_NOISE && o->rule != AR_WRULE_GIVEN)
        return ar_error_set(err, AR_EINVAL, "unknown rank rule %d", (int)o->rule);
    int rc = check_tolerance("{opt:rtol}", o->rtol, err);
    if (rc == AR_OK)
        rc = check_tolerance("{opt:atol}", o->atol, err);
    if (rc != AR_OK)
        return rc;
    if (!(o->energy_fraction > 0.0 && o->energy_fraction <= 1.0))
        return ar_error_set(err, AR_EINVAL, "{opt:energy}: must be in (0, 1], got %g",
                            o->energy_fraction);
    if (o->noise_draws == 0 || o->noise_draws > AR_WEIGHTS_NOISE_MAX_DRAWS)
        return ar_error_set(err, AR_EINVAL, "noise draws must be in 1..%d, got %zu",
                            AR_WEIGHTS_NOISE_MAX_DRAWS, o->noise_draws);
    if (!(o->noise_factor > 0.0) || !isfinite(o->noise_factor))
        return ar_error_set(err, AR_EINVAL, "noise factor must be finite and > 0");
    if (o->mask != NULL && ar_mask_fixes_length(o->mask)) {
        char text[64];
        ar_mask_format(o->mask, text, sizeof text);
        return ar_error_set(err, AR_EINVAL,
                            "{opt:mask=%s}: documents fix n; the verdicts need a mask for any n",
                            text);
    }
    return AR_OK;
}

int ar_weights_opts_check(const ar_weights_opts *opts, ar_error *err)
{
    ar_weights_opts o = opts_or_defaults(opts);
    return check_opts(&o, err);
}

static int setup_report(const ar_safetensors *st, const ar_model_config *cfg,
                        const ar_weights_opts *o, ar_weights_report *rep, layer_match **m,
                        size_t *found, ar_error *err)
{
    int rc = AR_OK;
    if (o->q_pattern != NULL)
        rep->family = AR_WF_CUSTOM;
    else
        rc = ar_weights_detect_family(st, &rep->family, err);
    if (rc != AR_OK)
        return rc;
    const char *qp = o->q_pattern ? o->q_pattern : ar_weights_family_q_pattern(rep->family);
    const char *kp = o->k_pattern ? o->k_pattern : ar_weights_family_k_pattern(rep->family);
    rep->q_pattern = ar_weights_strdup(qp);
    rep->k_pattern = ar_weights_strdup(kp);
    if (rep->q_pattern == NULL || rep->k_pattern == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    rep->fused = rep->family == AR_WF_GPT2;
    rc = ar_weights_find_layers(st, qp, m, found, err);
    if (rc == AR_OK && *found == 0)
        rc = ar_error_set(err, AR_EFORMAT, "%s: no tensor matches the query pattern '%s'",
                          ar_safetensors_file_path(st, 0), qp);
    if (rc != AR_OK)
        return rc;
    rep->layers_found = *found;
    rc = plan_layers(st, *m, *found, o, rep, err);
    if (rc != AR_OK)
        return rc;
    const ar_st_tensor *q = ar_safetensors_find(st, rep->q_names[0]);
    const ar_st_tensor *k = ar_safetensors_find(st, rep->k_names[0]);
    layer_shape sh;
    rc = layer_shapes(st, rep->fused, q, k, &sh, err);
    if (rc == AR_OK)
        rc = resolve_layout(st, q, &sh, cfg, o, rep, err);
    if (rc != AR_OK)
        return rc;
    rep->context = o->context ? o->context : cfg->max_positions;
    rep->rotary = cfg->rotary || rep->family == AR_WF_LLAMA;
    rep->q_bias = has_bias(st, rep->q_names[0]);
    rep->k_bias = rep->fused ? rep->q_bias : has_bias(st, rep->k_names[0]);
    rep->rule = given_rule(o) ? AR_WRULE_GIVEN : AR_WRULE_NOISE;
    rep->rtol_given = rep->rule == AR_WRULE_GIVEN;
    rep->rtol = rep->rtol_given ? o->rtol : -1.0;
    rep->atol = o->atol;
    rep->seed = o->seed;
    rep->noise_draws = o->noise_draws;
    rep->noise_factor = o->noise_factor;
    rep->energy_fraction = o->energy_fraction;
    rep->precision = AR_PREC_F64;
    return AR_OK;
}

static int alloc_heads(ar_weights_report *rep, head_work *w, ar_error *err)
{
    size_t total = rep->nlayers * rep->heads;
    size_t k = rep->head_dim < rep->d ? rep->head_dim : rep->d;
    rep->qk = calloc(total, sizeof *rep->qk);
    double *block = calloc(total * k, sizeof *block);
    int rc = rep->qk && block ? AR_OK : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&w->wq, rep->head_dim, rep->d, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&w->wk, rep->head_dim, rep->d, err);
    if (rc != AR_OK) {
        free(block);
        free(rep->qk);
        rep->qk = NULL;
        return ar_error_set(err, AR_ENOMEM, "out of memory for %zu heads", total);
    }
    for (size_t i = 0; i < total; i++)
        rep->qk[i].singular_values = block + i * k;
    return AR_OK;
}

int ar_weights_analyze_model(const ar_safetensors *st, const ar_model_config *cfg_in,
                             const ar_weights_opts *opts, ar_weights_report *rep, ar_error *err)
{
    if (st == NULL || rep == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(rep, 0, sizeof *rep);
    ar_weights_opts o = opts_or_defaults(opts);
    ar_model_config none;
    memset(&none, 0, sizeof none);
    const ar_model_config *cfg = cfg_in ? cfg_in : &none;
    int rc = check_opts(&o, err);
    if (rc != AR_OK)
        return rc;
    rep->config_found = cfg_in != NULL;
    rep->config = *cfg;
    rep->nfiles = ar_safetensors_nfiles(st);
    rep->ntensors = ar_safetensors_count(st);
    layer_match *m = NULL;
    size_t found = 0;
    head_work w = {ar_matrix_empty(), ar_matrix_empty()};
    rc = setup_report(st, cfg, &o, rep, &m, &found, err);
    free(m);
    if (rc == AR_OK)
        rc = alloc_heads(rep, &w, err);
    for (size_t l = 0; rc == AR_OK && l < rep->nlayers; l++) {
        rc = analyse_layer(st, l, &w, &o, rep, err);
        if (rc == AR_OK && o.progress != NULL)
            o.progress(o.progress_ctx, l + 1, rep->nlayers, rep->layer_index[l]);
    }
    ar_matrix_free(&w.wq);
    ar_matrix_free(&w.wk);
    if (rc == AR_OK) {
        summarise(rep);
        choose_masks(rep, &o);
        rc = make_verdict(rep, rep->context, 1, &rep->at_context, err);
    }
    if (rc == AR_OK)
        rc = make_verdict(rep, o.n, 0, &rep->at_n, err);
    if (rc == AR_OK)
        rc = ar_weights_embedding_analyze(st, cfg, &o, rep->d, &rep->embedding, err);
    size_t bias_n = rep->context ? rep->context : o.n;
    if (rc == AR_OK && bias_n > 0)
        rc = ar_weights_bias_analyze(st, cfg, &rep->masks, rep->heads, bias_n, rep->head_dim,
                                     &rep->bias, err);
    if (rc != AR_OK)
        ar_weights_report_free(rep);
    return ar_error_printable(err, rc);
}

static int analyze_factors_cm(const ar_matrix *wq, const ar_matrix *wk, ar_precision storage,
                              size_t layer, size_t head, const ar_weights_opts *opts,
                              double *singular_values, ar_qk_head *out, ar_error *err)
{
    ar_weights_opts o = opts_or_defaults(opts);
    int rc = check_opts(&o, err);
    if (rc != AR_OK)
        return rc;
    if (wq->rows != wk->rows || wq->cols != wk->cols || wq->rows == 0 || wq->cols == 0)
        return ar_error_set(err, AR_ESIZE, "factors of %zu x %zu and %zu x %zu: expected two "
                            "non-empty d_head x d blocks", wq->rows, wq->cols, wk->rows,
                            wk->cols);
    memset(out, 0, sizeof *out);
    out->layer = layer;
    out->head = head;
    out->precision = storage;
    rc = analyse_factors(wq, wk, storage, layer, head, &o, singular_values, out);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "layer %zu head %zu: spectrum failed: %s", layer, head,
                            ar_strerror(rc));
    return AR_OK;
}

int ar_weights_analyze_factors(ar_cview wq, ar_cview wk, ar_precision storage, size_t layer,
                               size_t head, const ar_weights_opts *opts, double *singular_values,
                               ar_qk_head *out, ar_error *err)
{
    if (singular_values == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    ar_colmajor cq, ck;
    int rc = ar_colmajor_get(&cq, wq);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "invalid view of the query factor");
    rc = ar_colmajor_get(&ck, wk);
    if (rc != AR_OK) {
        ar_colmajor_release(&cq);
        return ar_error_set(err, rc, "invalid view of the key factor");
    }
    rc = analyze_factors_cm(&cq.m, &ck.m, storage, layer, head, opts, singular_values, out, err);
    ar_colmajor_release(&cq);
    ar_colmajor_release(&ck);
    return rc;
}
