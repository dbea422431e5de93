/* attnrank heads: head-size bound of a MultiHead layer and its
 * FixedMultiHead alternative, with the severity of the low-rank bottleneck
 * (docs/theory/low-rank-bottleneck.md). */
#include "cli.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct heads_args {
    size_t d, heads, n, head_size, samples;
    int d_seen, heads_seen, n_seen, head_size_seen; /* the option table's; 0 is "not given" */
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
    "n_embd, d_model), h (num_attention_heads, n_head, n_heads), the head size\n"
    "(head_dim, else d/h), n (max_position_embeddings, n_positions, n_ctx,\n"
    "max_seq_len, seq_length) and the mask of the family: bidirectional for\n"
    "encoders, causal for decoders, a window where sliding_window is set and\n"
    "enabled, one table per layer kind where layers alternate (Gemma-2/3) or for\n"
    "encoder-decoders; the output says which mask was assumed and why. Flags\n"
    "override the file; an unknown family needs --mask. A config with a positional\n"
    "bias (ALiBi: BLOOM, MPT, alibi true; T5 relative buckets) adds per head the\n"
    "bias rank and the reach min(n - 1, d_p + bias rank), an upper bound of the\n"
    "logit rank (docs/theory/positional-bias.md).",
};

static const char *yes_no(int b)
{
    return b ? "yes" : "no";
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

static void print_model(const heads_args *a, const ar_model_config *cfg, const ar_heads_run *r)
{
    printf("model: %s (model_type %s): mask assumed from %s\n\n", a->config,
           cfg->model_type[0] ? cfg->model_type : "absent", r->masks.reason);
    for (size_t k = 0; k < r->masks.count; k++) {
        const ar_model_mask_kind *mk = &r->masks.kind[k];
        char text[64];
        ar_mask_format(&mk->mask, text, sizeof text);
        printf("%slayer kind: %s", k ? "\n" : "", mk->label);
        if (mk->layers > 0)
            printf(" (%zu layers)", mk->layers);
        printf(", mask %s\n", text);
        print_text(&r->kind[k], r->with_errors[k], text);
    }
    cli_print_model_bias(&r->bias);
}

/* The library's record; with a config, the file's name first in "config". */
static int print_json(const heads_args *a, const ar_model_config *cfg, const ar_heads_run *r)
{
    char *text = NULL;
    ar_error err = {{0}};
    int rc = ar_heads_run_json(r, a->config != NULL ? cfg : NULL, 0, &text, &err);
    int code = 0;
    json_t *o = cli_json_record("heads", rc, text, &err, &code);
    if (o == NULL)
        return code;
    if (a->config != NULL) {
        json_t *c = cli_json_prepend("source", json_string(a->config),
                                     json_incref(json_object_get(o, "config")));
        if (c == NULL || json_object_set_new(o, "config", c) != 0) {
            json_decref(o);
            o = NULL;
        }
    }
    return cli_json_print(o);
}

static int print_result(const heads_args *a, const ar_model_config *cfg, ar_heads_run *r)
{
    ar_option_render(r->masks.reason, AR_OPTION_STYLE_CLI);
    if (a->json)
        return print_json(a, cfg, r);
    if (a->config != NULL) {
        print_model(a, cfg, r);
        return CLI_EXIT_OK;
    }
    char text[256];
    ar_mask_format(&r->masks.kind[0].mask, text, sizeof text);
    print_text(&r->kind[0], r->with_errors[0], text);
    return CLI_EXIT_OK;
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
    ar_error err = {{0}};
    ar_model_config cfg;
    int rc = a.config != NULL ? ar_model_config_read(a.config, &cfg, &err) : AR_OK;
    if (rc != AR_OK)
        return cli_status_error("heads", rc, &err, "--config");
    ar_mask mask = ar_mask_none();
    if (a.mask_text != NULL &&
        (code = cli_mask_from_text("heads", a.mask_text, AR_AXIS_ROW, 0, 0, &mask, NULL)) >= 0)
        return code;
    ar_heads_run_opts o;
    ar_heads_run_opts_init(&o);
    o.d = a.d;
    o.heads = a.heads;
    o.n = a.n;
    o.head_size = a.head_size;
    o.mask = a.mask_text != NULL ? &mask : NULL;
    o.config = a.config != NULL ? &cfg : NULL;
    o.config_name = a.config;
    o.samples = a.samples;
    o.seed = a.seed;
    if (a.n < 512)
        cli_set_blas_threads(1); /* small matrices: one BLAS thread is faster */
    ar_heads_run r;
    rc = ar_heads_run_analyze(&o, &r, &err);
    code = rc == AR_OK ? print_result(&a, &cfg, &r) : cli_status_error("heads", rc, &err, NULL);
    ar_heads_run_free(&r);
    ar_mask_free(&mask);
    return code;
}
