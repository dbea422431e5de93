/* attnrank weights: QK-circuit spectra and head-size verdicts of a trained
 * model read from safetensors (include/attnrank/weights.h). */
#include "cli.h"
#include "heatmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct weights_args {
    const char *model;
    size_t n, heads, head_size, kv_heads, context;
    const char *layer_range, *q_pattern, *k_pattern;
    double rtol, atol, energy;
    uint64_t seed;
    int rtol_seen;
    int no_config, json;
    const char *csv, *heatmap, *heatmap_metric, *mask_text, *precision;
} weights_args;

static const cli_command_doc weights_doc = {
    "weights",
    "attnrank weights MODEL_DIR_OR_FILE [--n N] [--layer-range A-B] [--q-pattern P --k-pattern P]\n"
    "       [--seed S] [--rtol R] [--json] [--csv FILE] [--heatmap FILE.png]",
    "Per layer and head of a trained model (safetensors: one file, a directory, or a\n"
    "sharded model.safetensors.index.json), the QK circuit W_q^h^T W_k^h (d x d,\n"
    "rank <= d_head): its singular values from the two factors (never the dense\n"
    "d x d SVD), numerical rank and the rank metrics of docs/theory/spectra.md, and\n"
    "the head-size verdict of the low-rank bottleneck at the model's context length\n"
    "(max_position_embeddings of config.json) and at --n N: the largest attention\n"
    "pattern rank a head reaches (min(rank, n - 1)), whether d_head < n - 1, and the\n"
    "FixedMultiHead alternative (d_p = n) with its parameter cost. Query and key\n"
    "projections are found by the BERT (attention.self.query/key), GPT-2 (fused\n"
    "c_attn, Conv1D layout) and LLaMA (self_attn.q_proj/k_proj, grouped-query)\n"
    "conventions, or by --q-pattern/--k-pattern with a {layer} placeholder (Linear\n"
    "[out, in] layout). Rank of the stored weights (docs/weights.md), per head, with\n"
    "u the unit roundoff of the storage type (F16 2^-11, BF16 2^-8, F32 2^-24):\n"
    "certain rank above tau_cert (Weyl bound of the worst-case rounding error) and\n"
    "default rank (rule uniform-rounding-mc) above 4 x the largest of 4 seeded\n"
    "Monte Carlo draws of ||dA^T B + A^T dB||_2, dA_ij uniform in [-u|a_ij|, u|a_ij|]\n"
    "(capped at tau_cert); --rtol/--atol replace the default rule. Q/K biases do not\n"
    "enter the circuit; rotary embeddings are not applied (reported). The heat map\n"
    "(gnuplot, PNG) shows layer x head of --heatmap-metric (default roy-vetterli).",
};

/* ------------------------------------------------------------------ */
/* argument handling                                                    */
/* ------------------------------------------------------------------ */

typedef enum heat_metric { HEAT_RANK, HEAT_RV, HEAT_STABLE, HEAT_PR, HEAT_ENERGY, HEAT_NUCLEAR } heat_metric;

static const char *const heat_names[] = {"rank", "roy-vetterli", "stable", "participation",
                                         "energy", "nuclear"};
static const char *const heat_titles[] = {
    "numerical rank", "effective rank (Roy-Vetterli)", "stable rank",
    "participation ratio", "energy rank", "nuclear rank"};

static int parse_metric(const char *text, heat_metric *m)
{
    for (size_t i = 0; i < sizeof heat_names / sizeof heat_names[0]; i++)
        if (strcmp(text, heat_names[i]) == 0) {
            *m = (heat_metric)i;
            return 0;
        }
    return -1;
}

static double heat_value(const ar_rank_metrics *m, heat_metric h)
{
    switch (h) {
    case HEAT_RANK: return (double)m->rank;
    case HEAT_STABLE: return m->stable_rank;
    case HEAT_PR: return m->participation_ratio;
    case HEAT_ENERGY: return (double)m->energy_rank;
    case HEAT_NUCLEAR: return m->nuclear_rank;
    case HEAT_RV:
    default: return m->roy_vetterli_rank;
    }
}

/* The model at path analysed by the library (the options checked first);
 * the mask reason rendered for the CLI (it may name --mask). */
static int analyze_path(const char *path, int read_config, const ar_weights_opts *o,
                        ar_weights_report *rep, ar_error *err)
{
    int rc = ar_weights_analyze_path(path, read_config, o, rep, err);
    if (rc == AR_OK)
        ar_option_render(rep->masks.reason, AR_OPTION_STYLE_CLI);
    return rc;
}

static int build_opts(const weights_args *a, ar_weights_opts *o, heat_metric *metric)
{
    ar_weights_opts_init(o);
    o->n = a->n;
    o->heads = a->heads;
    o->head_dim = a->head_size;
    o->kv_heads = a->kv_heads;
    o->context = a->context;
    if (a->precision != NULL) {
        if (cli_parse_precision(a->precision, &o->precision) != 0)
            return cli_usage_error("weights",
                                   "--precision: expected float64, float32, float16 or "
                                   "bfloat16, got '%s'",
                                   a->precision);
        o->precision_given = 1;
    }
    if (a->layer_range != NULL) {
        if (cli_parse_range(a->layer_range, &o->layer_first, &o->layer_last) != 0)
            return cli_usage_error("weights", "--layer-range: expected A-B with A <= B, got '%s'",
                                   a->layer_range);
        o->layer_range = 1;
    }
    o->q_pattern = a->q_pattern;
    o->k_pattern = a->k_pattern;
    ar_weights_opts_tolerance(o, a->rtol_seen, a->rtol, a->atol);
    o->seed = a->seed;
    o->energy_fraction = a->energy;
    if (parse_metric(a->heatmap_metric, metric) != 0)
        return cli_usage_error("weights",
                               "--heatmap-metric: expected rank, roy-vetterli, stable, "
                               "participation, energy or nuclear, got '%s'",
                               a->heatmap_metric);
    if (a->heatmap != NULL && strchr(a->heatmap, '\'') != NULL)
        return cli_usage_error("weights", "--heatmap: a path with a single quote is not supported");
    return -1;
}

/* ------------------------------------------------------------------ */
/* progress                                                             */
/* ------------------------------------------------------------------ */

typedef struct progress_state {
    struct timespec start;
    int shown;
} progress_state;

static double seconds_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + 1e-9 * (double)(now.tv_nsec - t0->tv_nsec);
}

/* Quiet for models analysed within a second; per layer after that. */
static void on_progress(void *ctx, size_t done, size_t total, size_t layer)
{
    progress_state *p = ctx;
    double t = seconds_since(&p->start);
    if (!p->shown && t < 1.0)
        return;
    p->shown = 1;
    cli_progress(1, "weights: layer %zu done (%zu/%zu, %.1f s)", layer, done, total, t);
}

/* ------------------------------------------------------------------ */
/* text output                                                          */
/* ------------------------------------------------------------------ */

static const char *yes_no(int b)
{
    return b ? "yes" : "no";
}

static const char *roundoff_text(ar_precision p)
{
    switch (p) {
    case AR_PREC_F16: return "2^-11";
    case AR_PREC_BF16: return "2^-8";
    case AR_PREC_F32: return "2^-24";
    default: return "2^-53";
    }
}

static const char *subnormal_text(ar_precision p)
{
    switch (p) {
    case AR_PREC_F16: return "2^-25";
    case AR_PREC_BF16: return "2^-134";
    case AR_PREC_F32: return "2^-150";
    default: return "2^-1074";
    }
}

/* The rank rule in force, and both thresholds (docs/weights.md). */
static void print_rule(const ar_weights_report *r)
{
    const char *noise = ar_weights_rule_name(AR_WRULE_NOISE);
    if (r->rtol_given)
        printf("  rank rule      given: rtol = %.4g, atol = %.3g, cut = max(atol, rtol x sigma_1) "
               "(--rtol/--atol replace the default rule %s; storage %s)\n",
               r->rtol, r->atol, noise, ar_precision_name(r->precision));
    else
        printf("  rank rule      %s (default): cut tau_dflt = min(%g x the largest of %zu draws "
               "of ||dA^T B + A^T dB||_2, tau_cert), dA_ij uniform in [-u|a_ij|, u|a_ij|] "
               "(a_sub for subnormals), u = %s (%s)\n",
               noise, r->noise_factor, r->noise_draws, roundoff_text(r->precision),
               ar_precision_name(r->precision));
    printf("  certain        tau_cert = e_A ||B||_2 + ||A||_2 e_B + e_A e_B, e_A = u ||A||_F + "
           "a_sub sqrt(#entries), a_sub = %s: singular values above it are certainly not "
           "storage rounding\n",
           subnormal_text(r->precision));
    printf("  seeds          per head ar_seed_derive(%llu, layer, head) (--seed); %s: %zu draws, "
           "factor %g%s\n",
           (unsigned long long)r->seed, noise, r->noise_draws, r->noise_factor,
           r->rtol_given ? " (reported beside the given rule)" : "");
}

static void print_config(const ar_weights_report *r)
{
    const ar_model_config *c = &r->config;
    if (!r->config_found) {
        printf("  config         none (layout from the tensor shapes and flags)\n");
        return;
    }
    printf("  config         config.json%s%s%s: hidden %zu, heads %zu, kv heads %zu, head_dim "
           "%zu, layers %zu, positions %zu (0 = absent)\n",
           c->model_type[0] ? " (" : "", c->model_type, c->model_type[0] ? ")" : "",
           c->hidden_size, c->heads, c->kv_heads, c->head_dim, c->layers, c->max_positions);
}

static void print_header(const char *source, const ar_weights_report *r)
{
    printf("model %s\n", source);
    printf("  convention     %s: q '%s', k '%s'%s\n", ar_weights_family_name(r->family),
           r->q_pattern, r->k_pattern,
           r->fused ? " (fused Conv1D [d, 3d]: q | k | v columns)" : " (Linear [out, in])");
    printf("  files          %zu file%s, %zu tensors\n", r->nfiles, r->nfiles == 1 ? "" : "s",
           r->ntensors);
    print_config(r);
    printf("  layout         d = %zu, %zu heads of size %zu, %zu key head%s", r->d, r->heads,
           r->head_dim, r->kv_heads, r->kv_heads == 1 ? "" : "s");
    if (r->kv_heads < r->heads)
        printf(" (grouped-query: each serves %zu query heads)", r->heads / r->kv_heads);
    printf("\n  layers         %zu found, %zu analysed (%zu-%zu)\n", r->layers_found, r->nlayers,
           r->layer_index[0], r->layer_index[r->nlayers - 1]);
    if (r->config.layers != 0 && r->config.layers != r->layers_found)
        printf("  warning        config.json says %zu layers, the weights hold %zu\n",
               r->config.layers, r->layers_found);
    printf("  circuit        W_q^h^T W_k^h, %zu x %zu, rank <= %zu, spectrum from the factors\n",
           r->d, r->d, r->head_dim < r->d ? r->head_dim : r->d);
    print_rule(r);
    if (r->q_bias || r->k_bias)
        printf("  note           Q/K biases present: they do not enter the QK circuit\n");
    if (r->rotary)
        printf("  note           rotary position embeddings: analysed without rotation (the "
               "circuit at relative position 0)\n");
    printf("  context        %s", r->context ? "" : "unknown (no max_position_embeddings)");
    if (r->context)
        printf("%zu", r->context);
    printf("\n\n");
}

static void print_table(const ar_weights_report *r)
{
    char ctx_col[32] = "", n_col[32] = "";
    if (r->at_context.defined)
        snprintf(ctx_col, sizeof ctx_col, "reach@%zu", r->at_context.n);
    if (r->at_n.defined)
        snprintf(n_col, sizeof n_col, "reach@%zu", r->at_n.n);
    /* seed: 20 columns, the width of a 64-bit derived seed */
    printf("%5s %4s %3s %5s %11s %10s %5s %10s %5s %10s %20s %8s %8s %8s %6s %8s", "layer",
           "head", "kv", "rank", "sigma_1", "threshold", "cert", "tau_cert", "dflt", "tau_dflt",
           "seed", "stable", "roy-vet", "partic", "energy", "nuclear");
    if (ctx_col[0])
        printf(" %12s", ctx_col);
    if (n_col[0])
        printf(" %12s", n_col);
    printf("\n");
    for (size_t l = 0; l < r->nlayers; l++)
        for (size_t k = 0; k < r->heads; k++) {
            const ar_qk_head *h = ar_weights_head(r, l, k);
            const ar_rank_metrics *m = &h->metrics;
            const ar_weights_noise *z = &h->noise;
            printf("%5zu %4zu %3zu %5zu %11.4e %10.3e %5zu %10.3e %5zu %10.3e %20llu %8.3f %8.3f "
                   "%8.3f %6zu %8.3f",
                   h->layer, h->head, h->kv_head, m->rank, h->singular_values[0], m->threshold,
                   z->certain_rank, z->tau_cert, z->default_rank, z->tau_noise,
                   (unsigned long long)z->seed, m->stable_rank, m->roy_vetterli_rank,
                   m->participation_ratio, m->energy_rank, m->nuclear_rank);
            if (ctx_col[0])
                printf(" %10zu %s", h->reach_context, h->bottleneck_context ? "B" : "-");
            if (n_col[0])
                printf(" %10zu %s", h->reach_n, h->bottleneck_n ? "B" : "-");
            printf("\n");
        }
    printf("(rank, threshold: the rule in force; cert, dflt: singular values above tau_cert and\n"
           " tau_dflt; reach = min(rank, n - 1), the largest centred logit rank, i.e. minimal\n"
           " head size, of a pattern the head can produce; B = below n - 1: low-rank bottleneck)\n");
}

static void print_verdict(const char *label, const ar_weights_verdict *v,
                          const ar_weights_report *r)
{
    if (!v->defined)
        return;
    const ar_head_config *m = &v->model, *f = &v->fixed;
    size_t total = r->nlayers * r->heads;
    char mask[64];
    ar_mask_format(&r->masks.kind[v->kind].mask, mask, sizeof mask);
    printf("  at n = %zu (%s), mask %s (%s)\n", v->n, label, mask,
           r->masks.count > 1 ? r->masks.kind[v->kind].label : r->masks.reason);
    printf("    architecture   head size %zu %s needed %zu = %s (%s): bottleneck %s; logit rank "
           "<= %zu, deficit %zu, longest n without bottleneck %zu\n",
           m->dp, m->bottleneck ? "<" : ">=", v->needed, v->generic.formula,
           ar_generic_status_name(v->generic.status), yes_no(m->bottleneck),
           m->logit_rank_bound, m->rank_deficit, m->max_seq_len);
    printf("    trained heads  %zu of %zu have circuit rank below %zu\n", v->heads_bottlenecked,
           total, v->needed);
    double ratio = m->attention_params ? (double)f->attention_params / (double)m->attention_params
                                       : 0.0;
    printf("    FixedMultiHead d_p = %zu: %llu attention parameters per layer vs %llu (x%.3g)%s\n",
           f->dp, (unsigned long long)f->attention_params,
           (unsigned long long)m->attention_params, ratio,
           f->bottleneck ? "; still a bottleneck (d < n)" : "; no bottleneck");
    if (v->max_heads_exact)
        printf("    most heads without bottleneck at this d: %zu (d / h >= n - 1)\n",
               v->max_heads_exact);
    else
        printf("    no head count avoids the bottleneck at this d (needs d >= n)\n");
}

static void print_summary(const ar_weights_report *r)
{
    size_t total = r->nlayers * r->heads;
    printf("\nsummary (%zu heads = %zu layers x %zu)\n", total, r->nlayers, r->heads);
    printf("  rank           min %zu, mean %.3f, max %zu (of %zu); %zu head%s rank-deficient\n",
           r->rank_min, r->rank_mean, r->rank_max, r->head_dim < r->d ? r->head_dim : r->d,
           r->rank_deficient, r->rank_deficient == 1 ? "" : "s");
    printf("  certain/dflt   certain rank min %zu, mean %.3f, max %zu; default rank (%s) min %zu, "
           "mean %.3f, max %zu\n",
           r->certain_rank_min, r->certain_rank_mean, r->certain_rank_max,
           ar_weights_rule_name(AR_WRULE_NOISE), r->default_rank_min, r->default_rank_mean,
           r->default_rank_max);
    printf("  effective      mean Roy-Vetterli rank %.3f, mean stable rank %.3f\n",
           r->roy_vetterli_mean, r->stable_rank_mean);
    print_verdict("context length", &r->at_context, r);
    print_verdict("--n", &r->at_n, r);
    if (!r->at_context.defined && !r->at_n.defined)
        printf("  verdict        no context length known: give --n N\n");
}

static void print_embedding(const ar_weights_embedding *e)
{
    if (!e->found)
        return;
    printf("\ntoken embedding      %s: %zu x %zu, rank %zu (certain %zu; threshold %.3e, %s, %s)\n",
           e->token.tensor, e->token.rows, e->token.cols, e->token.metrics.rank,
           e->token.metrics.certain_rank, e->token.metrics.threshold,
           ar_rank_rule_name(e->token.metrics.rule), ar_precision_name(e->token.precision));
    if (e->have_positions)
        printf("with positions       [W_E; %s]: %zu x %zu, rank %zu (certain %zu)\n",
               e->combined.tensor, e->combined.rows, e->combined.cols,
               e->combined.metrics.rank, e->combined.metrics.certain_rank);
    if (e->embedding_size)
        printf("embedding_size       %zu (config.json: factorised embeddings)\n",
               e->embedding_size);
    printf("embedding rank       %zu at width %zu%s\n", e->embedding_rank, e->width,
           e->width_exceeds_rank
               ? ": the width exceeds the embedding rank; width above it buys no separation "
                 "rank (docs/theory/embedding-rank.md)"
               : "");
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */
/* ------------------------------------------------------------------ */

/* The library's record with the CLI's keys: "source" first and, under the
 * given rule, the tolerance note that names the options. */
static int print_json(const char *source, const ar_weights_report *r)
{
    char *text = NULL;
    ar_error err = {{0}};
    int code = 0;
    int rc = ar_weights_report_json(r, 0, &text, &err);
    json_t *v = cli_json_record("weights", rc, text, &err, &code);
    if (v == NULL)
        return code;
    if (r->rtol_given)
        json_object_set_new(json_object_get(v, "tolerance"), "note",
                            json_string("--rtol/--atol replace the default rule: rank = "
                                        "#{sigma_i > max(atol, rtol sigma_1)}; certain_rank "
                                        "and default_rank are still reported"));
    return cli_json_print(cli_json_prepend("source", json_string(source), v));
}

/* ------------------------------------------------------------------ */
/* CSV and heat map                                                     */
/* ------------------------------------------------------------------ */

static int write_csv(const char *path, const ar_weights_report *r)
{
    ar_atomic_file *af;
    ar_error err = {{0}};
    int rc = ar_atomic_open(&af, path, &err);
    if (rc != AR_OK)
        return cli_status_error("weights", rc, &err, NULL);
    ar_atomic_printf(af, "layer,head,kv_head,d,head_size,precision,rank,threshold,rtol,atol,sigma_1,"
                   "sigma_last,stable_rank,roy_vetterli_rank,participation_ratio,energy_rank,"
                   "nuclear_rank,reach_context,bottleneck_context,reach_n,bottleneck_n\n");
    size_t k = r->head_dim < r->d ? r->head_dim : r->d;
    for (size_t l = 0; l < r->nlayers; l++)
        for (size_t j = 0; j < r->heads; j++) {
            const ar_qk_head *h = ar_weights_head(r, l, j);
            const ar_rank_metrics *m = &h->metrics;
            ar_atomic_printf(af, "%zu,%zu,%zu,%zu,%zu,%s,%zu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,"
                           "%.17g,%zu,%.17g,",
                    h->layer, h->head, h->kv_head, r->d, r->head_dim,
                    ar_precision_name(h->precision), m->rank, m->threshold, m->rtol, m->atol,
                    h->singular_values[0], h->singular_values[k - 1], m->stable_rank,
                    m->roy_vetterli_rank, m->participation_ratio, m->energy_rank,
                    m->nuclear_rank);
            if (r->at_context.defined)
                ar_atomic_printf(af, "%zu,%d,", h->reach_context, h->bottleneck_context);
            else
                ar_atomic_printf(af, ",,");
            if (r->at_n.defined)
                ar_atomic_printf(af, "%zu,%d\n", h->reach_n, h->bottleneck_n);
            else
                ar_atomic_printf(af, ",\n");
        }
    rc = ar_atomic_commit(af, &err);
    return rc == AR_OK ? -1 : cli_status_error("weights", rc, &err, NULL);
}

/* The layer x head image of one metric (heatmap.h). */
static int write_heatmap(const char *path, const ar_weights_report *r, heat_metric metric)
{
    size_t n = r->nlayers * r->heads;
    double *v = malloc((n > 0 ? n : 1) * sizeof(double));
    size_t *rows = malloc((r->nlayers > 0 ? r->nlayers : 1) * sizeof(size_t));
    if (v == NULL || rows == NULL) {
        free(v);
        free(rows);
        fprintf(stderr, "attnrank weights: out of memory for the heat map\n");
        return CLI_EXIT_INTERNAL;
    }
    for (size_t l = 0; l < r->nlayers; l++) {
        rows[l] = r->layer_index[l];
        for (size_t k = 0; k < r->heads; k++)
            v[l * r->heads + k] = heat_value(&ar_weights_head(r, l, k)->metrics, metric);
    }
    char title[256];
    snprintf(title, sizeof title, "QK circuit W_q^T W_k: %s per head (d = %zu, head size %zu, %s)",
             heat_titles[metric], r->d, r->head_dim, ar_precision_name(r->precision));
    /* every metric lies in [0, min(d_head, d)]: one colour scale for all */
    cli_heat_grid g = {title, heat_titles[metric], r->nlayers, r->heads, rows, 0, v, 0.0,
                       (double)(r->head_dim < r->d ? r->head_dim : r->d),
                       "rgbformulae 33,13,10"};
    int code = cli_gnuplot_png("weights", path, cli_heat_grid_script, &g);
    free(v);
    free(rows);
    return code;
}

/* ------------------------------------------------------------------ */
/* entry                                                                */
/* ------------------------------------------------------------------ */

int cmd_weights(int argc, char **argv)
{
    weights_args a;
    memset(&a, 0, sizeof a);
    a.energy = 0.99;
    a.heatmap_metric = "roy-vetterli";
    char mask_help[320];
    const cli_option opts[] = {
        {"--n", CLI_SIZE, &a.n, "N", "also judge the heads at sequence length N", 1, NULL},
        {"--precision", CLI_STRING, &a.precision, "float64|float32|float16|bfloat16",
         "judge rounding as if the weights were stored in this type (default: as stored)", 0,
         NULL},
        {"--mask", CLI_STRING, &a.mask_text, "MASK",
         cli_mask_help(mask_help, sizeof mask_help,
                       "the verdicts' mask (default: the family's, from config.json): ", "", 1),
         0, NULL},
        {"--layer-range", CLI_STRING, &a.layer_range, "A-B", "analyse layers A..B only", 0, NULL},
        {"--q-pattern", CLI_STRING, &a.q_pattern, "P",
         "query tensor name (or suffix) with {layer}, Linear layout", 0, NULL},
        {"--k-pattern", CLI_STRING, &a.k_pattern, "P", "key tensor name (or suffix) with {layer}",
         0, NULL},
        {"--heads", CLI_SIZE, &a.heads, "H", "query heads (default: config.json)", 1, NULL},
        {"--head-size", CLI_SIZE, &a.head_size, "P",
         "head size (default: config head_dim, else rows / heads)", 1, NULL},
        {"--kv-heads", CLI_SIZE, &a.kv_heads, "K",
         "key heads (default: config, else key rows / head size)", 1, NULL},
        {"--context", CLI_SIZE, &a.context, "N",
         "context length (default: max_position_embeddings)", 1, NULL},
        {"--no-config", CLI_SWITCH, &a.no_config, NULL, "ignore config.json beside the model", 0,
         NULL},
        {"--rtol", CLI_DOUBLE, &a.rtol, "R",
         "relative rank tolerance: replaces the default rule (uniform-rounding-mc)", 0,
         &a.rtol_seen},
        {"--atol", CLI_DOUBLE, &a.atol, "A",
         "absolute rank tolerance (> 0: replaces the default rule; default 0)", 0, NULL},
        {"--seed", CLI_U64, &a.seed, "S", "base seed of the default rule's draws (default 0)", 0,
         NULL},
        {"--energy", CLI_DOUBLE, &a.energy, "F", "energy-rank fraction (default 0.99)", 0, NULL},
        {"--json", CLI_SWITCH, &a.json, NULL, "print the full report as JSON", 0, NULL},
        {"--csv", CLI_STRING, &a.csv, "FILE", "write one row per head", 0, NULL},
        {"--heatmap", CLI_STRING, &a.heatmap, "FILE.png",
         "gnuplot heat map of layer x head (PNG)", 0, NULL},
        {"--heatmap-metric", CLI_STRING, &a.heatmap_metric, "M",
         "rank, roy-vetterli (default), stable, participation, energy, nuclear", 0, NULL},
    };
    const char *pos[1] = {NULL};
    size_t npos = 0;
    int code = cli_parse(&weights_doc, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1,
                         &npos);
    if (code >= 0)
        return code;
    if (npos == 0)
        return cli_usage_error("weights", "missing MODEL_DIR_OR_FILE (see --help)");
    a.model = pos[0];
    ar_weights_opts o;
    heat_metric metric = HEAT_RV;
    code = build_opts(&a, &o, &metric);
    if (code >= 0)
        return code;
    ar_mask mask = ar_mask_none();
    if (a.mask_text != NULL) {
        code = cli_mask_from_text("weights", a.mask_text, AR_AXIS_ROW, 0, 0, &mask, NULL);
        if (code >= 0)
            return code;
        o.mask = &mask;
    }
    /* Many small factorisations (d_head x d): one BLAS thread each is
     * faster than two (docs/building.md). */
    cli_set_blas_threads(1);
    progress_state ps = {{0, 0}, 0};
    clock_gettime(CLOCK_MONOTONIC, &ps.start);
    o.progress = on_progress;
    o.progress_ctx = &ps;
    ar_weights_report r;
    ar_error err = {{0}};
    int rc = analyze_path(a.model, !a.no_config, &o, &r, &err);
    ar_mask_free(&mask);
    if (rc != AR_OK)
        return cli_status_error("weights", rc, &err, NULL);
    code = -1;
    if (a.csv != NULL)
        code = write_csv(a.csv, &r);
    if (code < 0 && a.heatmap != NULL)
        code = write_heatmap(a.heatmap, &r, metric);
    if (code < 0) {
        if (a.json) {
            code = print_json(a.model, &r);
        } else {
            print_header(a.model, &r);
            print_table(&r);
            print_summary(&r);
            print_embedding(&r.embedding);
            if (r.bias.count > 0) {
                printf("\n");
                cli_print_model_bias(&r.bias);
            }
            code = CLI_EXIT_OK;
        }
    }
    ar_weights_report_free(&r);
    return code;
}
