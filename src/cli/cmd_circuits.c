/* attnrank circuits: OV copying scores, QK spectra and composition scores of
 * a model's heads (include/attnrank/circuits_model.h).  Parsing and
 * formatting only: the analysis is ar_circuits_analyze_model. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct circuits_args {
    const char *model, *composition, *layer_range, *head_range, *csv, *precision;
    size_t heads, head_size, kv_heads, top;
    int ov, qk, full, json, no_config;
} circuits_args;

static const cli_command_doc circuits_doc = {
    "circuits",
    "attnrank circuits MODEL_DIR_OR_FILE [--ov] [--qk] [--full] [--composition q,k,v]\n"
    "       [--layer-range A-B] [--head-range A-B] [--json] [--csv FILE]",
    "Circuits of every head of a trained model (safetensors, the naming conventions\n"
    "of `attnrank weights`: GPT-2, LLaMA with grouped-query attention, BERT), from\n"
    "the factors, never the d x d products (docs/theory/circuits.md). --ov (the\n"
    "default): copying scores of the OV circuit W_O W_V: s_eig = Re(sum lambda) /\n"
    "sum |lambda| over the nonzero eigenvalues (from the d_head x d_head core W_V W_O;\n"
    "undefined when every eigenvalue is zero to its first-order error bound, flagged\n"
    "when ill-conditioned), s_nuc = tr / nuclear norm and s_sym = tr(S) / sum |eig S|\n"
    "(S the symmetric part), z = score / its Gaussian-head spread, and whether the\n"
    "sign of tr(W_V W_O) is certain under one rounding per stored weight. --qk: the QK\n"
    "circuit's spectrum and ranks as `weights` computes them. --full: the same\n"
    "scores of the full OV circuit W_U W_O W_V W_E^T (V x V, never formed; needs the\n"
    "token embedding; the unembedding is lm_head.weight, else tied to it; not\n"
    "certified). --composition q,k,v:\n"
    "||M_2 M_1||_F / (||M_2||_F ||M_1||_F) for every head of an earlier layer (M_1 its\n"
    "OV) into a head of a later layer (M_2 its QK^T, QK or OV, TransformerLens's\n"
    "scores), printed as CS sqrt(d), whose null root mean square is 1. Raw stored\n"
    "weights: no LayerNorm folding or centring.",
};

static int parse_index(const char *s, const char **end, size_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    size_t v = 0;
    while (*s >= '0' && *s <= '9') {
        if (v > (SIZE_MAX - 9) / 10)
            return -1;
        v = 10 * v + (size_t)(*s++ - '0');
    }
    *end = s;
    *out = v;
    return 0;
}

/* "A-B" or "A". */
static int parse_range(const char *text, size_t *a, size_t *b)
{
    const char *p = NULL;
    if (parse_index(text, &p, a) != 0)
        return -1;
    if (*p == '\0') {
        *b = *a;
        return 0;
    }
    if (*p != '-' || parse_index(p + 1, &p, b) != 0 || *p != '\0' || *b < *a)
        return -1;
    return 0;
}

/* "q,k,v" or a subset, in any order, no repeats. */
static int parse_composition(const char *text, unsigned *bits)
{
    *bits = 0;
    for (const char *p = text; *p != '\0'; p++) {
        unsigned b = *p == 'q' ? AR_CIRCUITS_COMP_Q
                     : *p == 'k' ? AR_CIRCUITS_COMP_K
                     : *p == 'v' ? AR_CIRCUITS_COMP_V
                                 : 0;
        if (b == 0 || (*bits & b) || (p[1] != '\0' && p[1] != ','))
            return -1;
        *bits |= b;
        if (p[1] == ',')
            p++;
    }
    return *bits != 0 ? 0 : -1;
}

static int build_opts(const circuits_args *a, ar_circuits_opts *o)
{
    ar_circuits_opts_init(o);
    o->heads = a->heads;
    o->head_dim = a->head_size;
    o->kv_heads = a->kv_heads;
    o->qk = a->qk;
    o->full = a->full;
    if (a->composition != NULL && parse_composition(a->composition, &o->composition) != 0)
        return cli_usage_error("circuits", "--composition: expected a list of q, k, v such as "
                               "q,k,v, got '%s'", a->composition);
    o->ov = a->ov || (!a->qk && o->composition == 0);
    if (a->layer_range != NULL) {
        if (parse_range(a->layer_range, &o->layer_first, &o->layer_last) != 0)
            return cli_usage_error("circuits", "--layer-range: expected A-B with A <= B, got '%s'",
                                   a->layer_range);
        o->layer_range = 1;
    }
    if (a->head_range != NULL) {
        if (parse_range(a->head_range, &o->head_first, &o->head_last) != 0)
            return cli_usage_error("circuits", "--head-range: expected A-B with A <= B, got '%s'",
                                   a->head_range);
        o->head_range = 1;
    }
    if (a->precision != NULL) {
        if (cli_parse_precision(a->precision, &o->precision) != 0)
            return cli_usage_error("circuits", "--precision: expected float64, float32, float16 "
                                   "or bfloat16, got '%s'", a->precision);
        o->precision_given = 1;
    }
    return -1;
}

/* config.json beside the model, when there is one: the file I/O is the
 * CLI's (the library reads only the tensors' mapping). */
static int analyze_path(const char *path, int read_config, const ar_circuits_opts *o,
                        ar_circuits_report *rep, ar_error *err)
{
    memset(rep, 0, sizeof *rep);
    ar_safetensors *st = NULL;
    int rc = ar_safetensors_open(&st, path, err);
    if (rc != AR_OK)
        return rc;
    ar_model_config cfg;
    memset(&cfg, 0, sizeof cfg);
    int found = 0;
    if (read_config) {
        char cpath[4096];
        snprintf(cpath, sizeof cpath, "%s/config.json", ar_safetensors_dir(st));
        FILE *fp = fopen(cpath, "rb");
        found = fp != NULL;
        if (fp != NULL) {
            fclose(fp);
            rc = ar_model_config_read(cpath, &cfg, err);
        }
    }
    if (rc == AR_OK)
        rc = ar_circuits_analyze_model(st, found ? &cfg : NULL, o, rep, err);
    ar_safetensors_close(st);
    return ar_error_printable(err, rc);
}

/* ---- JSON ---- */

/* The same keys for the full circuits, whose z figures and trace bound are
 * null (not certified). */
static json_t *copying_json(const ar_copying_scores *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "s_eig", cli_json_real(s->s_eig));
    json_object_set_new(o, "s_nuc", cli_json_real(s->s_nuc));
    json_object_set_new(o, "s_sym", cli_json_real(s->s_sym));
    json_object_set_new(o, "z_eig", cli_json_real(s->z_eig));
    json_object_set_new(o, "z_nuc", cli_json_real(s->z_nuc));
    json_object_set_new(o, "z_sym", cli_json_real(s->z_sym));
    json_object_set_new(o, "s_eig_defined", json_boolean(s->eig_defined));
    json_object_set_new(o, "nonzero_eigenvalues", json_integer((json_int_t)s->nonzero_eigs));
    json_object_set_new(o, "eigenvalue_eta", cli_json_real(s->eig_eta));
    json_object_set_new(o, "min_rcond", cli_json_real(s->min_rcond));
    json_object_set_new(o, "ill_conditioned", json_boolean(s->ill_conditioned));
    json_object_set_new(o, "nuclear_norm", cli_json_real(s->nuclear_norm));
    json_object_set_new(o, "trace", cli_json_real(s->trace.trace));
    json_object_set_new(o, "trace_bound", cli_json_real(s->trace.bound));
    json_object_set_new(o, "sign_certain", json_boolean(s->trace.sign_certain));
    return o;
}

static json_t *head_json(const ar_circuits_report *r, const ar_circuits_head *h)
{
    size_t k = r->head_dim < r->d ? r->head_dim : r->d;
    json_t *o = json_pack("{s:I, s:I, s:I, s:s}", "layer", (json_int_t)h->layer, "head",
                          (json_int_t)h->head, "kv_head", (json_int_t)h->kv_head, "precision",
                          ar_precision_name(h->precision));
    if (r->ov) {
        json_object_set_new(o, "copying", copying_json(&h->copying));
        json_object_set_new(o, "ov_singular_values",
                            cli_json_array_doubles(h->ov_singular_values, k));
    }
    if (r->qk)
        json_object_set_new(o, "qk",
                            json_pack("{s:o, s:I, s:I, s:I}", "singular_values",
                                      cli_json_array_doubles(h->qk.singular_values, k), "rank",
                                      (json_int_t)h->qk.metrics.rank, "certain_rank",
                                      (json_int_t)h->qk.noise.certain_rank, "default_rank",
                                      (json_int_t)h->qk.noise.default_rank));
    if (r->full)
        json_object_set_new(o, "full_copying", copying_json(&h->full));
    return o;
}

static json_t *composition_json(const ar_circuits_report *r)
{
    json_t *kinds = json_array(), *pairs = json_array();
    const unsigned bits[3] = {AR_CIRCUITS_COMP_Q, AR_CIRCUITS_COMP_K, AR_CIRCUITS_COMP_V};
    for (int c = 0; c < 3; c++)
        if (r->composition & bits[c])
            json_array_append_new(kinds, json_string(ar_composition_name((ar_composition)c)));
    for (size_t p = 0; p < r->npairs; p++) {
        const ar_circuits_pair *x = &r->pairs[p];
        const ar_circuits_head *a = &r->head[x->earlier], *b = &r->head[x->later];
        json_array_append_new(pairs, json_pack("{s:s, s:I, s:I, s:I, s:I, s:o, s:o}", "mode",
                                               ar_composition_name(x->kind), "from_layer",
                                               (json_int_t)a->layer, "from_head",
                                               (json_int_t)a->head, "to_layer",
                                               (json_int_t)b->layer, "to_head",
                                               (json_int_t)b->head, "score",
                                               cli_json_real(x->score), "scaled",
                                               cli_json_real(x->scaled)));
    }
    return json_pack("{s:o, s:o, s:o}", "modes", kinds, "null_rms",
                     cli_json_real(r->composition_null_rms), "pairs", pairs);
}

static json_t *report_json(const char *model, const ar_circuits_report *r)
{
    json_t *layers = json_array(), *heads = json_array();
    for (size_t l = 0; l < r->nlayers; l++)
        json_array_append_new(layers, json_integer((json_int_t)r->layer_index[l]));
    for (size_t i = 0; i < r->nheads; i++)
        json_array_append_new(heads, head_json(r, &r->head[i]));
    json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:s}", "source", model,
                          "family", ar_weights_family_name(r->family), "weight_preprocessing", "raw",
                          "d", (json_int_t)r->d, "heads", (json_int_t)r->heads, "kv_heads",
                          (json_int_t)r->kv_heads, "head_size", (json_int_t)r->head_dim, "layers",
                          layers, "precision", ar_precision_name(r->precision));
    if (r->ov)
        json_object_set_new(o, "copying_tolerance",
                            json_pack("{s:o, s:o, s:o, s:o}", "zero_factor",
                                      cli_json_real(r->circuit.zero_factor), "rcond_warn",
                                      cli_json_real(r->circuit.rcond_warn), "null_sd_eig",
                                      cli_json_real(ar_copying_null_sd_eig(r->head_dim)),
                                      "null_sd_nuc",
                                      cli_json_real(ar_copying_null_sd_nuc(r->d, r->head_dim))));
    if (r->full)
        json_object_set_new(o, "full_circuits",
                            json_pack("{s:s, s:s, s:I}", "embedding", r->embedding_tensor,
                                      "unembedding",
                                      r->unembedding_tensor ? r->unembedding_tensor : "tied",
                                      "vocab", (json_int_t)r->vocab));
    json_object_set_new(o, "circuit_heads", heads);
    if (r->composition)
        json_object_set_new(o, "composition", composition_json(r));
    return o;
}

/* ---- text ---- */

static void print_score(double v, int defined)
{
    if (defined)
        printf(" %7.4f", v);
    else
        printf(" %7s", "undef");
}

static void print_heads(const ar_circuits_report *r)
{
    printf("%5s %4s", "layer", "head");
    if (r->ov)
        printf(" %7s %7s %7s %7s %7s  %s", "s_eig", "s_nuc", "s_sym", "z_eig", "z_nuc", "sign");
    if (r->qk)
        printf("  %7s %7s", "qk_rank", "certain");
    if (r->full)
        printf("  %7s %7s %7s", "f_eig", "f_nuc", "f_sym");
    printf("\n");
    for (size_t i = 0; i < r->nheads; i++) {
        const ar_circuits_head *h = &r->head[i];
        printf("%5zu %4zu", h->layer, h->head);
        if (r->ov) {
            const ar_copying_scores *s = &h->copying;
            print_score(s->s_eig, s->eig_defined);
            print_score(s->s_nuc, s->nuc_defined);
            print_score(s->s_sym, s->sym_defined);
            print_score(s->z_eig, s->eig_defined);
            print_score(s->z_nuc, s->nuc_defined);
            printf("  %s%s%s", s->trace.sign > 0 ? "+" : s->trace.sign < 0 ? "-" : "0",
                   s->trace.sign_certain ? " certain" : " uncertain",
                   s->ill_conditioned ? " (eigenvalues ill-conditioned)" : "");
        }
        if (r->qk)
            printf("  %7zu %7zu", h->qk.metrics.rank, h->qk.noise.certain_rank);
        if (r->full) {
            const ar_copying_scores *f = &h->full;
            printf(" ");
            print_score(f->s_eig, f->eig_defined);
            print_score(f->s_nuc, f->nuc_defined);
            print_score(f->s_sym, f->sym_defined);
            if (f->ill_conditioned)
                printf(" (full eigenvalues ill-conditioned)");
        }
        printf("\n");
    }
}

static int by_scaled_desc(const void *x, const void *y)
{
    const ar_circuits_pair *a = *(const ar_circuits_pair *const *)x;
    const ar_circuits_pair *b = *(const ar_circuits_pair *const *)y;
    double u = isnan(a->scaled) ? -1.0 : a->scaled, v = isnan(b->scaled) ? -1.0 : b->scaled;
    return u < v ? 1 : u > v ? -1 : 0;
}

/* The strongest pairs of each kind (all of them in --json). */
static int print_composition(const ar_circuits_report *r, size_t top)
{
    printf("\ncomposition scores CS sqrt(d) (null root mean square 1; d = %zu):\n", r->d);
    const ar_circuits_pair **sorted = malloc((r->npairs > 0 ? r->npairs : 1) * sizeof *sorted);
    if (sorted == NULL) {
        fprintf(stderr, "attnrank circuits: out of memory\n");
        return CLI_EXIT_INTERNAL;
    }
    for (int c = 0; c < 3; c++) {
        size_t n = 0;
        for (size_t p = 0; p < r->npairs; p++)
            if (r->pairs[p].kind == (ar_composition)c)
                sorted[n++] = &r->pairs[p];
        if (n == 0)
            continue;
        qsort(sorted, n, sizeof *sorted, by_scaled_desc);
        printf("  %s-composition, %zu pairs, strongest:\n", ar_composition_name((ar_composition)c),
               n);
        for (size_t i = 0; i < n && i < top; i++) {
            const ar_circuits_head *a = &r->head[sorted[i]->earlier], *b = &r->head[sorted[i]->later];
            printf("    L%zu.H%zu -> L%zu.H%zu  %8.4f\n", a->layer, a->head, b->layer, b->head,
                   sorted[i]->scaled);
        }
    }
    free(sorted);
    return CLI_EXIT_OK;
}

static int print_text(const char *model, const ar_circuits_report *r, size_t top)
{
    printf("%s: %s, d = %zu, %zu heads (%zu key/value heads) of size %zu, %zu layers, %s\n",
           model, ar_weights_family_name(r->family), r->d, r->heads, r->kv_heads, r->head_dim,
           r->nlayers, ar_precision_name(r->precision));
    printf("raw stored weights (no LayerNorm folding, no centring)\n");
    if (r->ov)
        printf("copying scores of W_O W_V; z = score / Gaussian-head spread (s_eig %.4g, s_nuc "
               "and s_sym %.4g); sign: of tr(W_V W_O), certain at storage precision or not\n",
               ar_copying_null_sd_eig(r->head_dim), ar_copying_null_sd_nuc(r->d, r->head_dim));
    if (r->full)
        printf("full OV circuits W_U W_O W_V W_E^T (f_*; not certified): embedding '%s', "
               "unembedding %s%s%s, V = %zu\n",
               r->embedding_tensor, r->unembedding_tensor ? "'" : "",
               r->unembedding_tensor ? r->unembedding_tensor : "tied", r->unembedding_tensor ? "'" : "",
               r->vocab);
    if (r->ov || r->qk || r->full)
        print_heads(r);
    return r->composition ? print_composition(r, top) : CLI_EXIT_OK;
}

/* ---- CSV: one row per head ---- */

static void csv_value(ar_atomic_file *af, double v, int defined)
{
    if (defined && isfinite(v))
        ar_atomic_printf(af, ",%.17g", v);
    else
        ar_atomic_printf(af, ",");
}

static int write_csv(const char *path, const ar_circuits_report *r)
{
    ar_atomic_file *af;
    ar_error err = {{0}};
    int rc = ar_atomic_open(&af, path, &err);
    if (rc != AR_OK)
        return cli_status_error("circuits", rc, &err, NULL);
    ar_atomic_printf(af, "layer,head,kv_head,precision,s_eig,s_nuc,s_sym,z_eig,z_nuc,z_sym,"
                         "trace,trace_bound,sign_certain,ill_conditioned,qk_rank,full_s_eig,"
                         "full_s_nuc,full_s_sym,full_trace,full_ill_conditioned\n");
    for (size_t i = 0; i < r->nheads; i++) {
        const ar_circuits_head *h = &r->head[i];
        const ar_copying_scores *s = &h->copying;
        ar_atomic_printf(af, "%zu,%zu,%zu,%s", h->layer, h->head, h->kv_head,
                         ar_precision_name(h->precision));
        csv_value(af, s->s_eig, r->ov && s->eig_defined);
        csv_value(af, s->s_nuc, r->ov && s->nuc_defined);
        csv_value(af, s->s_sym, r->ov && s->sym_defined);
        csv_value(af, s->z_eig, r->ov && s->eig_defined);
        csv_value(af, s->z_nuc, r->ov && s->nuc_defined);
        csv_value(af, s->z_sym, r->ov && s->sym_defined);
        csv_value(af, s->trace.trace, r->ov);
        csv_value(af, s->trace.bound, r->ov);
        csv_value(af, s->trace.sign_certain, r->ov);
        csv_value(af, s->ill_conditioned, r->ov);
        csv_value(af, (double)h->qk.metrics.rank, r->qk);
        const ar_copying_scores *f = &h->full;
        csv_value(af, f->s_eig, r->full && f->eig_defined);
        csv_value(af, f->s_nuc, r->full && f->nuc_defined);
        csv_value(af, f->s_sym, r->full && f->sym_defined);
        csv_value(af, f->trace.trace, r->full);
        csv_value(af, f->ill_conditioned, r->full);
        ar_atomic_printf(af, "\n");
    }
    rc = ar_atomic_commit(af, &err);
    return rc == AR_OK ? -1 : cli_status_error("circuits", rc, &err, NULL);
}

int cmd_circuits(int argc, char **argv)
{
    circuits_args a;
    memset(&a, 0, sizeof a);
    a.top = 10;
    const cli_option opts[] = {
        {"--ov", CLI_SWITCH, &a.ov, NULL,
         "copying scores of the OV circuits (the default when neither --qk nor --composition)",
         0, NULL},
        {"--qk", CLI_SWITCH, &a.qk, NULL, "the QK circuit spectra and ranks (as `weights`)", 0, NULL},
        {"--full", CLI_SWITCH, &a.full, NULL,
         "copying scores of the full OV circuits W_U W_O W_V W_E^T (needs the token embedding)",
         0, NULL},
        {"--composition", CLI_STRING, &a.composition, "q,k,v",
         "composition scores of these kinds between heads of earlier and later layers", 0, NULL},
        {"--layer-range", CLI_STRING, &a.layer_range, "A-B", "analyse layers A..B only", 0, NULL},
        {"--head-range", CLI_STRING, &a.head_range, "A-B", "analyse heads A..B of each layer only",
         0, NULL},
        {"--top", CLI_SIZE, &a.top, "N", "composition pairs printed per kind (default 10; "
         "--json has all)", 1, NULL},
        {"--precision", CLI_STRING, &a.precision, "float64|float32|float16|bfloat16",
         "judge rounding as if the weights were stored in this type (default: as stored)", 0,
         NULL},
        {"--heads", CLI_SIZE, &a.heads, "H", "query heads (default: config.json)", 1, NULL},
        {"--head-size", CLI_SIZE, &a.head_size, "P",
         "head size (default: config head_dim, else rows / heads)", 1, NULL},
        {"--kv-heads", CLI_SIZE, &a.kv_heads, "K",
         "key/value heads (default: config, else value rows / head size)", 1, NULL},
        {"--no-config", CLI_SWITCH, &a.no_config, NULL, "ignore config.json beside the model", 0,
         NULL},
        {"--json", CLI_SWITCH, &a.json, NULL, "print the full report as JSON", 0, NULL},
        {"--csv", CLI_STRING, &a.csv, "FILE", "write one row per head", 0, NULL},
    };
    const char *pos[1] = {NULL};
    size_t npos = 0;
    int code = cli_parse(&circuits_doc, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1,
                         &npos);
    if (code >= 0)
        return code;
    if (npos == 0)
        return cli_usage_error("circuits", "missing MODEL_DIR_OR_FILE (see --help)");
    a.model = pos[0];
    ar_circuits_opts o;
    code = build_opts(&a, &o);
    if (code >= 0)
        return code;
    cli_set_blas_threads(1); /* many small factorisations: one BLAS thread each */
    ar_circuits_report r;
    ar_error err = {{0}};
    int rc = analyze_path(a.model, !a.no_config, &o, &r, &err);
    if (rc != AR_OK)
        return cli_status_error("circuits", rc, &err, NULL);
    code = a.csv != NULL ? write_csv(a.csv, &r) : -1;
    if (code < 0)
        code = a.json ? cli_json_print(report_json(a.model, &r)) : print_text(a.model, &r, a.top);
    ar_circuits_report_free(&r);
    return code;
}
