/* attnrank heads: head-size bound of a MultiHead layer and its
 * FixedMultiHead alternative, with the severity of the low-rank bottleneck
 * (docs/theory/low-rank-bottleneck.md). */
#include "cli.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct heads_args {
    size_t d, heads, n, head_size, samples;
    int d_seen, heads_seen, n_seen, head_size_seen;
    uint64_t seed;
    const char *mask_text, *config;
    int json;
} heads_args;

static const cli_command_doc heads_doc = {
    "heads",
    "attnrank heads --d D --heads H --n N [--mask MASK] [--head-size P] [--samples S]\n"
    "       [--seed S] [--json]\n"
    "       attnrank heads --config config.json [--n N] [--mask MASK] [--json]",
    "Head-size bound of an attention layer with width d, h heads and sequence\n"
    "length n. With full-column-rank inputs (needs d >= n) a head reaches every\n"
    "positive attention pattern exactly when d_p >= n - 1; the paper's Theorem 1\n"
    "takes d_p = d >= n, and its informal multi-head form is h > d/n, i.e. d_p < n\n"
    "(docs/theory/low-rank-bottleneck.md). Reports, for the standard\n"
    "MultiHead (d_p = d/h) and the FixedMultiHead (d_p = P, default the paper's n):\n"
    "the per-head logit rank bound min(d_p, d, n), both bottleneck verdicts, the\n"
    "rank deficit, the longest sequence without a bottleneck, attention parameters\n"
    "per layer, and the expected error of one head on random Dirichlet, banded and\n"
    "near-permutation targets at that head size: logit-space (Eckart-Young, exact)\n"
    "and probability-space (L-BFGS fit, an upper bound on the best). Estimates\n"
    "use S seeded targets per family (default 2; 0 skips them); fits run for\n"
    "n <= 128 and logit errors for n <= 1024.\n"
    "--mask (causal, window:W, band:W, prefix:P, sink:S+window:W, docs:N1/N2/...):\n"
    "the threshold becomes the generic minimal head size under the mask (causal\n"
    "floor(n/2), window floor(min(n, w)/2), band min(n, w) - 1, prefix\n"
    "max(p - 1, floor(n/2)), sink + window ceil(w/2), documents max_k floor(n_k/2);\n"
    "docs/theory/masked-attention.md), with its status (proved, verified over F_p,\n"
    "or conjectural), the worst case, and the longest context without a bottleneck\n"
    "(causal 2 d_p + 1); a bottleneck verdict rests on a proved lower bound, its\n"
    "absence on the generic value's status. The error estimates (bidirectional\n"
    "targets) are skipped under a mask.\n"
    "--config config.json (a Hugging Face model config) gives d (hidden_size,\n"
    "n_embd, d_model), h (num_attention_heads, n_head), the head size (head_dim,\n"
    "else d/h), n (max_position_embeddings, n_positions, n_ctx) and the mask of the\n"
    "family: bidirectional for encoders, causal for decoders, a window where\n"
    "sliding_window is set and enabled, one table per layer kind where layers\n"
    "alternate (Gemma-2/3) or for encoder-decoders; the output says which mask was\n"
    "assumed and why. Flags override the file; an unknown family needs --mask.",
};

static const char *yes_no(int b)
{
    return b ? "yes" : "no";
}

static json_t *family_json(const ar_family_error *e)
{
    json_t *o = json_pack("{s:s, s:I, s:I, s:o}", "family", ar_target_family_name(e->family),
                          "samples", (json_int_t)e->samples, "head_size",
                          (json_int_t)e->head_size, "min_head_size_mean",
                          cli_json_real(e->min_head_size_mean));
    json_object_set_new(o, "logit_error",
                        e->logit_computed ? cli_json_real(e->logit_error) : json_null());
    json_object_set_new(o, "logit_error_rel",
                        e->logit_computed ? cli_json_real(e->logit_error_rel) : json_null());
    json_object_set_new(o, "kl_mean", e->fit_computed ? cli_json_real(e->kl_mean) : json_null());
    json_object_set_new(o, "kl_max", e->fit_computed ? cli_json_real(e->kl_max) : json_null());
    json_object_set_new(o, "max_abs_error",
                        e->fit_computed ? cli_json_real(e->max_abs_error) : json_null());
    return o;
}

static json_t *config_json(const ar_head_config *c, int with_errors, int masked)
{
    if (!c->defined)
        return json_pack("{s:b}", "defined", 0);
    json_t *o = json_pack("{s:b, s:I, s:I, s:b, s:b, s:I, s:I, s:I}", "defined", 1, "head_size",
                          (json_int_t)c->dp, "logit_rank_bound", (json_int_t)c->logit_rank_bound,
                          "bottleneck", c->bottleneck, "bottleneck_paper", c->bottleneck_paper,
                          "rank_deficit", (json_int_t)c->rank_deficit, "max_seq_len",
                          (json_int_t)c->max_seq_len, "attention_params",
                          (json_int_t)c->attention_params);
    if (masked) {
        json_object_set_new(o, "unbounded", json_boolean(c->unbounded));
        json_object_set_new(o, "status", json_string(ar_generic_status_name(c->status)));
    }
    json_t *errs = json_array();
    for (size_t f = 0; with_errors && f < AR_HEADS_NFAMILIES; f++)
        json_array_append_new(errs, family_json(&c->errors[f]));
    json_object_set_new(o, "errors", errs);
    return o;
}

static void print_errors(const char *title, const ar_head_config *c, size_t n)
{
    if (!c->defined)
        return;
    printf("\nexpected error of one %s head (d_p = %zu, logit rank <= %zu) at n = %zu:\n", title,
           c->dp, c->logit_rank_bound, n);
    printf("  %-17s %10s %24s %11s %11s %11s\n", "family", "needs d_p", "logit error (relative)",
           "KL mean", "KL max", "max-abs");
    for (size_t f = 0; f < AR_HEADS_NFAMILIES; f++) {
        const ar_family_error *e = &c->errors[f];
        char logit[48] = "skipped (n > cap)", kl[16] = "-", klx[16] = "-", mab[16] = "-";
        if (e->logit_computed)
            snprintf(logit, sizeof logit, "%.4g (%.3g)", e->logit_error, e->logit_error_rel);
        if (e->fit_computed) {
            snprintf(kl, sizeof kl, "%.3g", e->kl_mean);
            snprintf(klx, sizeof klx, "%.3g", e->kl_max);
            snprintf(mab, sizeof mab, "%.3g", e->max_abs_error);
        }
        printf("  %-17s %10.1f %24s %11s %11s %11s\n", ar_target_family_name(e->family),
               e->min_head_size_mean, logit, kl, klx, mab);
    }
}

static void print_mask(const ar_bottleneck_heads_report *r, const char *mask_text)
{
    const ar_mask_generic *g = &r->generic;
    printf("mask %s: a generic attention pattern needs head size %zu = %s (%s), and an input "
           "of rank n (d >= n)\n",
           mask_text, g->value, g->formula, ar_generic_status_name(g->status));
    if (g->worst_lower == g->worst_upper)
        printf("  worst case over all patterns: %zu\n\n", g->worst_lower);
    else
        printf("  worst case over all patterns: between %zu and %zu\n\n", g->worst_lower,
               g->worst_upper);
}

static void print_text(const ar_bottleneck_heads_report *r, int with_errors, const char *mask_text)
{
    const ar_head_config *s = &r->standard, *f = &r->fixed;
    printf("attention layer: d = %zu, h = %zu heads, sequence length n = %zu\n", r->d, r->h,
           r->n);
    if (r->masked)
        print_mask(r, mask_text);
    else
        printf("every positive attention pattern needs head size n - 1 = %zu and an input of "
               "rank n (d >= n)\n\n",
               r->needed_head_size);
    char sdp[40] = "undefined (h does not divide d)";
    if (s->defined)
        snprintf(sdp, sizeof sdp, "%zu (= d/h)", s->dp);
    char fdp[40];
    snprintf(fdp, sizeof fdp, "%zu (%s)", f->dp, r->head_size_given ? "given" : "paper: d_p = n");
    printf("  %-40s %-33s %s\n", "", "standard MultiHead", "FixedMultiHead");
    printf("  %-40s %-33s %s\n", "head size d_p", sdp, fdp);
#define ROW_SIZE(label, field)                                                                  \
    do {                                                                                        \
        char a_[32] = "-";                                                                      \
        if (s->defined)                                                                         \
            snprintf(a_, sizeof a_, "%llu", (unsigned long long)s->field);                      \
        printf("  %-40s %-33s %llu\n", label, a_, (unsigned long long)f->field);                \
    } while (0)
#define ROW_BOOL(label, field)                                                                  \
    printf("  %-40s %-33s %s\n", label, s->defined ? yes_no(s->field) : "-", yes_no(f->field))
    ROW_SIZE("logit rank bound min(d_p, d, n)", logit_rank_bound);
    if (r->masked) {
        ROW_BOOL("bottleneck (d_p < generic value or d<n)", bottleneck);
        printf("  %-40s %-33s %s\n", "  status of that verdict",
               s->defined ? ar_generic_status_name(s->status) : "-",
               ar_generic_status_name(f->status));
        ROW_SIZE("rank deficit (generic value - d_p)", rank_deficit);
        ROW_SIZE("longest n without bottleneck (<= d)", max_seq_len);
    } else {
        ROW_BOOL("bottleneck (exact: d_p < n-1 or d<n)", bottleneck);
        ROW_BOOL("bottleneck (paper: d_p < n)", bottleneck_paper);
        ROW_SIZE("rank deficit (n-1) - min(d_p, d, n-1)", rank_deficit);
        ROW_SIZE("longest n without bottleneck", max_seq_len);
    }
    ROW_SIZE("attention params per layer", attention_params);
#undef ROW_SIZE
#undef ROW_BOOL
    if (r->masked)
        printf("\nlargest head count dividing d without bottleneck: %zu (d/h >= %zu)%s\n",
               r->max_heads_exact, r->needed_head_size,
               r->max_heads_exact == 0 ? "; none: d < n, no input has full column rank" : "");
    else
        printf("\nlargest head count dividing d without bottleneck: %zu exact (d/h >= n - 1), "
               "%zu paper (d/h >= n)%s\n",
               r->max_heads_exact, r->max_heads_paper,
               r->max_heads_exact == 0 ? "; none: d < n, no input has full column rank" : "");
    if (r->masked) {
        if (s->defined && s->unbounded)
            printf("the standard head covers every generic context under this mask as far as "
                   "the head size goes (%s); only d limits n\n",
                   ar_generic_status_name(s->status));
        printf("error estimates skipped: they draw bidirectional targets\n");
        return;
    }
    if (!with_errors)
        return;
    print_errors("standard", s, r->n);
    print_errors("fixed", f, r->n);
    printf("\n%zu seeded targets per family (base seed %llu). Logit error: Eckart-Young on the "
           "centred log, exact.\nKL / max-abs: best softmax of rank-d_p logits found by the fit "
           "(an upper bound on the optimum).\n",
           r->samples, (unsigned long long)r->seed);
    if (r->errors_capped)
        printf("n = %zu exceeds a cap (fits: n <= %zu, logit errors: n <= %zu): those estimates "
               "were skipped.\n",
               r->n, r->fit_cap, r->logit_cap);
}

/* One analysis under one mask: the text table, or a JSON object in *out. */
static int run_one(const heads_args *a, const ar_mask *mask, json_t **out)
{
    ar_bottleneck_heads_opts o;
    ar_bottleneck_heads_opts_init(&o);
    o.head_size = a->head_size_seen ? a->head_size : 0;
    o.samples = a->samples;
    o.seed = a->seed;
    o.errors = a->samples > 0 && mask->kind == AR_MASK_NONE;
    o.mask = mask;
    if (a->n < 512)
        cli_set_blas_threads(1); /* small matrices: one BLAS thread is faster */
    ar_bottleneck_heads_report r;
    ar_error err = {{0}};
    int rc = ar_bottleneck_heads_analyze(a->d, a->heads, a->n, &o, &r, &err);
    if (rc != AR_OK)
        return cli_status_error("heads", rc, &err, NULL);
    char mask_text[256];
    ar_mask_format(mask, mask_text, sizeof mask_text);
    if (out == NULL) {
        print_text(&r, o.errors, mask_text);
        return -1;
    }
    *out = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:b}", "d",
                     (json_int_t)r.d, "heads", (json_int_t)r.h, "n", (json_int_t)r.n,
                     "needed_head_size", (json_int_t)r.needed_head_size, "max_heads_exact",
                     (json_int_t)r.max_heads_exact, "max_heads_paper",
                     (json_int_t)r.max_heads_paper, "standard",
                     config_json(&r.standard, o.errors, r.masked), "fixed",
                     config_json(&r.fixed, o.errors, r.masked), "seed", cli_json_u64(r.seed),
                     "samples", (json_int_t)r.samples, "errors_capped", r.errors_capped);
    json_object_set_new(*out, "mask", cli_json_mask(mask));
    json_t *g = cli_json_generic(&r.generic);
    json_object_update(*out, g);
    json_decref(g);
    return -1;
}

/* --config: sizes the flags did not give, and the masks of the family. */
static int apply_config(heads_args *a, ar_model_config *cfg, ar_model_masks *masks)
{
    ar_error err = {{0}};
    int rc = ar_model_config_read(a->config, cfg, &err);
    if (rc != AR_OK)
        return cli_status_error("heads", rc, &err, "--config");
    /* the option table refuses 0, so 0 means "not given" here */
    size_t head_size = a->head_size_seen ? a->head_size : 0;
    rc = ar_model_config_layer_sizes(cfg, a->config, &a->d, &a->heads, &a->n, &head_size, &err);
    if (rc != AR_OK)
        return cli_usage_error("heads", "%s; give the flag", err.msg);
    a->d_seen = a->heads_seen = a->n_seen = 1;
    if (head_size != 0) {
        a->head_size = head_size;
        a->head_size_seen = 1;
    }
    if (a->mask_text != NULL)
        return -1;
    rc = ar_model_masks_from_config(cfg, masks, &err);
    if (rc != AR_OK)
        return cli_usage_error("heads", "%s: %s", a->config, err.msg);
    return -1;
}

static json_t *model_config_json(const char *path, const ar_model_config *c)
{
    return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "source", path,
                     "model_type", c->model_type, "architecture", c->architecture,
                     "hidden_size", (json_int_t)c->hidden_size, "num_attention_heads",
                     (json_int_t)c->heads, "num_key_value_heads", (json_int_t)c->kv_heads,
                     "head_dim", (json_int_t)c->head_dim, "max_position_embeddings",
                     (json_int_t)c->max_positions, "sliding_window",
                     (json_int_t)c->sliding_window);
}

/* Every layer kind of the model (one when --mask is given or the model has
 * one kind), as text or as a "layer_kinds" array. */
static int run_kinds(const heads_args *a, const ar_model_config *cfg, ar_model_masks *masks)
{
    json_t *kinds = json_array();
    int code = -1;
    if (!a->json)
        printf("model: %s (model_type %s): mask assumed from %s\n\n", a->config,
               cfg->model_type[0] ? cfg->model_type : "absent", masks->reason);
    for (size_t k = 0; code < 0 && k < masks->count; k++) {
        if (!a->json) {
            char text[64];
            ar_mask_format(&masks->kind[k].mask, text, sizeof text);
            printf("%slayer kind: %s", k ? "\n" : "", masks->kind[k].label);
            if (masks->kind[k].layers > 0)
                printf(" (%zu layers)", masks->kind[k].layers);
            printf(", mask %s\n", text);
        }
        json_t *one = NULL;
        code = run_one(a, &masks->kind[k].mask, a->json ? &one : NULL);
        if (one != NULL) {
            json_object_set_new(one, "label", json_string(masks->kind[k].label));
            json_object_set_new(one, "layers", json_integer((json_int_t)masks->kind[k].layers));
            json_array_append_new(kinds, one);
        }
    }
    if (code >= 0 || !a->json) {
        json_decref(kinds);
        return code >= 0 ? code : CLI_EXIT_OK;
    }
    return cli_json_print(json_pack("{s:o, s:s, s:o}", "config",
                                    model_config_json(a->config, cfg), "mask_reason",
                                    masks->reason, "layer_kinds", kinds));
}

int cmd_heads(int argc, char **argv)
{
    heads_args a;
    memset(&a, 0, sizeof a);
    a.samples = 2;
    char mask_help[320];
    const cli_option opts[] = {
        {"--config", CLI_STRING, &a.config, "FILE",
         "a model's config.json: width, heads, head size, context and the family's mask", 0,
         NULL},
        {"--d", CLI_SIZE, &a.d, "D", "model width d", 1, &a.d_seen},
        {"--heads", CLI_SIZE, &a.heads, "H", "heads per layer", 1, &a.heads_seen},
        {"--n", CLI_SIZE, &a.n, "N", "sequence length", 1, &a.n_seen},
        {"--head-size", CLI_SIZE, &a.head_size, "P",
         "FixedMultiHead head size (default the paper's d_p = n)", 1, &a.head_size_seen},
        {"--mask", CLI_STRING, &a.mask_text, "MASK",
         cli_mask_help(mask_help, sizeof mask_help, "attention mask: ", "", 0),
         0, NULL},
        {"--samples", CLI_SIZE, &a.samples, "S", "targets per family for the error estimates",
         0, NULL},
        {"--seed", CLI_U64, &a.seed, "S", "base seed (default 0)", 0, NULL},
        {"--json", CLI_SWITCH, &a.json, NULL, "print JSON on stdout", 0, NULL},
    };
    int code = cli_parse(&heads_doc, argc, argv, opts, sizeof opts / sizeof opts[0], NULL, 0,
                         NULL);
    if (code >= 0)
        return code;
    ar_model_config cfg;
    ar_model_masks masks;
    memset(&masks, 0, sizeof masks);
    if (a.config != NULL && (code = apply_config(&a, &cfg, &masks)) >= 0)
        return code;
    if (!a.d_seen || !a.heads_seen || !a.n_seen)
        return cli_usage_error("heads", "needs --d D, --heads H and --n N (or --config FILE)");
    if (!a.head_size_seen && a.d % a.heads != 0)
        return cli_usage_error("heads",
                               "--heads %zu does not divide --d %zu: the standard head size d/h "
                               "is undefined (give --head-size P)",
                               a.heads, a.d);
    ar_error err = {{0}};
    int rc = ar_bottleneck_heads_check(a.d, a.heads, a.n, &err);
    if (rc != AR_OK)
        return cli_status_error("heads", rc, &err, NULL);
    if (a.mask_text != NULL || a.config == NULL) {
        masks.count = 1;
        masks.kind[0].mask = ar_mask_none();
        snprintf(masks.kind[0].label, sizeof masks.kind[0].label, "all layers");
        snprintf(masks.reason, sizeof masks.reason, a.mask_text ? "--mask" : "no mask given");
        if (a.mask_text != NULL &&
            (code = cli_mask_from_text("heads", a.mask_text, AR_AXIS_ROW, a.n, 0,
                                       &masks.kind[0].mask, NULL)) >= 0)
            return code;
    }
    if (a.config != NULL)
        code = run_kinds(&a, &cfg, &masks);
    else if (a.json) {
        json_t *out = NULL;
        code = run_one(&a, &masks.kind[0].mask, &out);
        if (code < 0)
            code = cli_json_print(out);
    } else {
        code = run_one(&a, &masks.kind[0].mask, NULL);
        code = code < 0 ? CLI_EXIT_OK : code;
    }
    for (size_t k = 0; k < masks.count; k++)
        ar_mask_free(&masks.kind[k].mask);
    return code;
}
