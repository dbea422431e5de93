/* attnrank circuits: OV copying scores, QK spectra and composition scores of
 * a model's heads (include/attnrank/circuits_model.h).  Parsing and
 * formatting only: the analysis is ar_circuits_analyze_model. */
#include "cli.h"
#include "heatmap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct circuits_args {
    const char *model, *composition, *layer_range, *head_range, *csv, *precision;
    const char *heatmap, *heatmap_score, *heatmap_composition;
    size_t heads, head_size, kv_heads, top;
    int ov, qk, full, tl, json, no_config;
} circuits_args;

static const cli_command_doc circuits_doc = {
    "circuits",
    "attnrank circuits MODEL_DIR_OR_FILE [--ov] [--qk] [--full] [--composition q,k,v]\n"
    "       [--tl] [--layer-range A-B] [--head-range A-B] [--json] [--csv FILE]\n"
    "       [--heatmap FILE.png [--heatmap-score S]] [--heatmap-composition FILE.png]",
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
    "weights by default: no LayerNorm folding or centring; --tl applies\n"
    "TransformerLens's default preprocessing (fold the pre-attention norm's gain into\n"
    "W_Q, W_K, W_V and the final one into the unembedding; with LayerNorm (GPT-2)\n"
    "also centre the reading weights, W_O, W_E and the unembedding over d; centre\n"
    "the unembedding over the vocabulary; refused for post-LN BERT; the trace is\n"
    "then not certified). --heatmap (gnuplot, PNG): layer x\n"
    "head of a copying score (--heatmap-score, default eig); --heatmap-composition:\n"
    "per mode, CS sqrt(d) of every later head (rows) reading every earlier head\n"
    "(columns), heads in layer-major order, blank where not a pair.",
};

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

/* The copying score of the --heatmap. */
typedef enum heat_score { HEAT_EIG, HEAT_NUC, HEAT_SYM, HEAT_FULL_EIG, HEAT_FULL_NUC,
                          HEAT_FULL_SYM, HEAT_NSCORES } heat_score;
static const char *const heat_names[HEAT_NSCORES] = {"eig", "nuc", "sym", "full-eig", "full-nuc",
                                                     "full-sym"};

static int parse_heat_score(const char *text, heat_score *out)
{
    for (int i = 0; i < HEAT_NSCORES; i++)
        if (strcmp(text, heat_names[i]) == 0) {
            *out = (heat_score)i;
            return 0;
        }
    return -1;
}

static double heat_value(const ar_circuits_head *h, heat_score k)
{
    const ar_copying_scores *s = k >= HEAT_FULL_EIG ? &h->full : &h->copying;
    switch (k % 3) {
    case 0:
        return s->eig_defined ? s->s_eig : NAN;
    case 1:
        return s->nuc_defined ? s->s_nuc : NAN;
    default:
        return s->sym_defined ? s->s_sym : NAN;
    }
}

static int check_plot_path(const char *opt, const char *path)
{
    if (path != NULL && strchr(path, '\'') != NULL)
        return cli_usage_error("circuits", "%s: a path with a single quote is not supported", opt);
    return -1;
}

static int build_opts(const circuits_args *a, ar_circuits_opts *o, heat_score *score)
{
    ar_circuits_opts_init(o);
    o->heads = a->heads;
    o->head_dim = a->head_size;
    o->kv_heads = a->kv_heads;
    o->qk = a->qk;
    o->full = a->full;
    o->tl = a->tl;
    if (a->composition != NULL && parse_composition(a->composition, &o->composition) != 0)
        return cli_usage_error("circuits", "--composition: expected a list of q, k, v such as "
                               "q,k,v, got '%s'", a->composition);
    o->ov = a->ov || (!a->qk && o->composition == 0);
    if (parse_heat_score(a->heatmap_score, score) != 0)
        return cli_usage_error("circuits", "--heatmap-score: expected eig, nuc, sym, full-eig, "
                               "full-nuc or full-sym, got '%s'", a->heatmap_score);
    if (*score >= HEAT_FULL_EIG && !a->full && a->heatmap != NULL)
        return cli_usage_error("circuits", "--heatmap-score %s needs --full", a->heatmap_score);
    if (a->heatmap != NULL && *score < HEAT_FULL_EIG)
        o->ov = 1; /* the map's scores */
    if (a->heatmap_composition != NULL && o->composition == 0)
        return cli_usage_error("circuits", "--heatmap-composition needs --composition");
    int code = check_plot_path("--heatmap", a->heatmap);
    if (code < 0)
        code = check_plot_path("--heatmap-composition", a->heatmap_composition);
    if (code >= 0)
        return code;
    if (a->layer_range != NULL) {
        if (cli_parse_range(a->layer_range, &o->layer_first, &o->layer_last) != 0)
            return cli_usage_error("circuits", "--layer-range: expected A-B with A <= B, got '%s'",
                                   a->layer_range);
        o->layer_range = 1;
    }
    if (a->head_range != NULL) {
        if (cli_parse_range(a->head_range, &o->head_first, &o->head_last) != 0)
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

static const char *preprocessing(const ar_circuits_report *r)
{
    return r->tl ? "tl" : "raw";
}

/* ---- JSON: the library's record (ar_circuits_report_json) after the model ---- */

static int print_json(const char *model, const ar_circuits_report *r)
{
    char *text = NULL;
    ar_error err = {{0}};
    int rc = ar_circuits_report_json(r, 0, &text, &err);
    return cli_json_print_sourced("circuits", model, rc, text, &err);
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
    if (!r->tl)
        printf("raw stored weights (no LayerNorm folding, no centring)\n");
    else if (r->tl_centred)
        printf("TransformerLens preprocessing (--tl): LayerNorm gains folded into W_Q, W_K, W_V "
               "and the unembedding; reading and writing weights centred over d; unembedding "
               "centred over the vocabulary; signs not certified\n");
    else
        printf("TransformerLens preprocessing (--tl): RMSNorm gains folded into W_Q, W_K, W_V "
               "and the unembedding, no centring over d; unembedding centred over the "
               "vocabulary; signs not certified\n");
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

/* ---- heat maps (heatmap.h) ---- */

static int write_copying_heatmap(const char *path, const ar_circuits_report *r, heat_score k)
{
    double *v = malloc((r->nheads > 0 ? r->nheads : 1) * sizeof(double));
    if (v == NULL) {
        fprintf(stderr, "attnrank circuits: out of memory for the heat map\n");
        return CLI_EXIT_INTERNAL;
    }
    for (size_t i = 0; i < r->nheads; i++)
        v[i] = heat_value(&r->head[i], k);
    char title[256], label[64];
    snprintf(title, sizeof title, "%s copying score s_%s per head (d = %zu, head size %zu, %s "
             "weights; blank: undefined)", k >= HEAT_FULL_EIG ? "full OV circuit" : "OV circuit",
             heat_names[k % 3], r->d, r->head_dim, preprocessing(r));
    snprintf(label, sizeof label, "s_%s", heat_names[k % 3]);
    cli_heat_grid g = {title, label, r->nlayers, r->nsel, r->layer_index, r->head_first, v,
                       -1.0, 1.0, "defined (-1 '#2166ac', 0 '#f7f7f7', 1 '#b2182b')"};
    int code = cli_gnuplot_png("circuits", path, cli_heat_grid_script, &g);
    free(v);
    return code;
}

typedef struct composition_plot {
    const ar_circuits_report *r;
    double *grid; /* nheads^2 scratch */
} composition_plot;

/* One panel per mode: later head (y) x earlier head (x), flat layer-major. */
static void composition_script(FILE *fp, const char *out, const void *ctx)
{
    const ar_circuits_report *r = ((const composition_plot *)ctx)->r;
    double *grid = ((const composition_plot *)ctx)->grid;
    size_t n = r->nheads, nk = 0;
    double top = 0.0;
    for (size_t p = 0; p < r->npairs; p++)
        if (isfinite(r->pairs[p].scaled) && r->pairs[p].scaled > top)
            top = r->pairs[p].scaled;
    for (int c = 0; c < 3; c++)
        nk += (r->composition >> c) & 1u;
    fprintf(fp, "set terminal pngcairo size %zu,%zu font ',10'\n", 80 + 560 * nk,
                (size_t)560);
    fprintf(fp, "set output '%s'\n", out);
    fprintf(fp, "set multiplot layout 1,%zu title \"composition scores CS sqrt(d) (null root mean "
                "square 1; d = %zu, %s weights; blank: not a pair)\" noenhanced\n", nk, r->d,
                preprocessing(r));
    size_t step = (r->nlayers + 15) / 16; /* at most 16 layer tics */
    for (const char *axis = "x"; axis != NULL; axis = axis[0] == 'x' ? "y" : NULL) {
        fprintf(fp, "set %stics (", axis);
        for (size_t l = 0; l < r->nlayers; l += step)
            fprintf(fp, "%s\"L%zu\" %g", l > 0 ? ", " : "", r->layer_index[l],
                    (double)(l * r->nsel) - 0.5); /* at the first head's edge */
        fprintf(fp, ")\n");
    }
    fprintf(fp, "set xrange [-0.5:%g]\nset yrange [%g:-0.5]\n", (double)n - 0.5, (double)n - 0.5);
    fprintf(fp, "set xlabel 'earlier head (writes)'\nset ylabel 'later head (reads)'\n");
    fprintf(fp, "set cbrange [0:%g]\nset palette rgbformulae 33,13,10\nunset key\nset tics out\n",
            top > 0.0 ? top : 1.0);
    fprintf(fp, "set size square\nset grid xtics ytics front lc rgb 'gray40'\n");
    for (int c = 0; c < 3; c++) {
        if (!(r->composition & (1u << c)))
            continue;
        /* the whole n x n grid (an image needs one), NaN where no pair */
        for (size_t i = 0; i < n * n; i++)
            grid[i] = NAN;
        for (size_t p = 0; p < r->npairs; p++)
            if (r->pairs[p].kind == (ar_composition)c)
                grid[r->pairs[p].later * n + r->pairs[p].earlier] = r->pairs[p].scaled;
        fprintf(fp, "$%s << EOD\n", ar_composition_name((ar_composition)c));
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++) {
                if (isfinite(grid[j * n + i]))
                    fprintf(fp, "%zu %zu %.9g\n", i, j, grid[j * n + i]);
                else
                    fprintf(fp, "%zu %zu NaN\n", i, j);
            }
        fprintf(fp, "EOD\n");
        fprintf(fp, "set title '%s-composition'\n", ar_composition_name((ar_composition)c));
        fprintf(fp, "plot $%s using 1:2:3 with image\n", ar_composition_name((ar_composition)c));
    }
    fprintf(fp, "unset multiplot\n");
}

static int write_composition_heatmap(const char *path, const ar_circuits_report *r)
{
    composition_plot c = {r, malloc((r->nheads * r->nheads > 0 ? r->nheads * r->nheads : 1) *
                                    sizeof(double))};
    if (c.grid == NULL) {
        fprintf(stderr, "attnrank circuits: out of memory for the heat map\n");
        return CLI_EXIT_INTERNAL;
    }
    int code = cli_gnuplot_png("circuits", path, composition_script, &c);
    free(c.grid);
    return code;
}

int cmd_circuits(int argc, char **argv)
{
    circuits_args a;
    memset(&a, 0, sizeof a);
    a.top = 10;
    a.heatmap_score = "eig";
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
        {"--tl", CLI_SWITCH, &a.tl, NULL,
         "TransformerLens's default preprocessing (fold norms, centre; default: raw weights)", 0,
         NULL},
        {"--no-config", CLI_SWITCH, &a.no_config, NULL, "ignore config.json beside the model", 0,
         NULL},
        {"--json", CLI_SWITCH, &a.json, NULL, "print the full report as JSON", 0, NULL},
        {"--csv", CLI_STRING, &a.csv, "FILE", "write one row per head", 0, NULL},
        {"--heatmap", CLI_STRING, &a.heatmap, "FILE.png",
         "gnuplot heat map of a copying score, layer x head (PNG; implies --ov)", 0, NULL},
        {"--heatmap-score", CLI_STRING, &a.heatmap_score, "S",
         "the score of --heatmap: eig (default), nuc, sym, or full-eig, full-nuc, full-sym "
         "(with --full)", 0, NULL},
        {"--heatmap-composition", CLI_STRING, &a.heatmap_composition, "FILE.png",
         "gnuplot heat maps of the composition scores, later x earlier head per mode (PNG)", 0,
         NULL},
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
    heat_score score = HEAT_EIG;
    code = build_opts(&a, &o, &score);
    if (code >= 0)
        return code;
    cli_set_blas_threads(1); /* many small factorisations: one BLAS thread each */
    ar_circuits_report r;
    ar_error err = {{0}};
    int rc = ar_circuits_analyze_path(a.model, !a.no_config, &o, &r, &err);
    if (rc != AR_OK)
        return cli_status_error("circuits", rc, &err, NULL);
    code = a.csv != NULL ? write_csv(a.csv, &r) : -1;
    if (code < 0 && a.heatmap != NULL)
        code = write_copying_heatmap(a.heatmap, &r, score);
    if (code < 0 && a.heatmap_composition != NULL)
        code = write_composition_heatmap(a.heatmap_composition, &r);
    if (code < 0)
        code = a.json ? print_json(a.model, &r) : print_text(a.model, &r, a.top);
    ar_circuits_report_free(&r);
    return code;
}
