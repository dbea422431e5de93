/* attnrank spectrum: singular spectrum, numerical rank and every rank metric
 * of matrices from a file (.npy stacks, .npz, CSV) or of generated attention
 * heads. */
#include "cli.h"
#include "mpi_session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct spectrum_args {
    const char *file;
    const char *key;       /* --key: array of an .npz */
    int random_attention;
    size_t n, d, heads, head_size, head;
    int head_size_seen, head_seen;
    const char *axis_text;
    const char *of;
    const char *precision;
    uint64_t seed;
    double rtol, atol, energy;
    int rtol_seen;
    int json;
    const char *csv;
    size_t max_print;
    size_t threads;
    int distributed;       /* --distributed: ScaLAPACK under mpirun */
    size_t block;          /* its block size (0: default) */
    const char *grid;      /* its process grid "RxC" (NULL: chosen) */
    ar_spectrum_dist_opts dist; /* parsed from block and grid */
    int mpi_rank;          /* 0 unless distributed; only rank 0 prints */
} spectrum_args;

/* One analysed matrix: its label, spectrum and metrics. */
typedef struct spectrum_item {
    char label[128];
    size_t index[AR_ARRAY_MAX_DIMS]; /* slice indices, or the head number */
    size_t nindex;
    int s_borrowed;       /* s points into a block owned elsewhere (stacks) */
    size_t rows, cols;
    double *s;            /* min(rows, cols) values */
    size_t k;
    ar_rank_metrics metrics;
    long expected_rank;   /* -1 when there is no theoretical value */
} spectrum_item;

static const cli_command_doc spectrum_doc = {
    "spectrum",
    "attnrank spectrum FILE [options]\n"
    "       attnrank spectrum --random-attention --n N --d D --heads H [options]",
    "Singular values, numerical rank (with the threshold used) and the rank metrics\n"
    "of docs/theory/spectra.md: stable rank, Roy-Vetterli rank, participation ratio,\n"
    "energy rank and nuclear rank. FILE is .npy (float64/float32/float16; arrays of\n"
    "rank > 2 are stacks of matrices, analysed per slice; rank 0 or 1 is not a\n"
    "matrix and is refused), .npz (one array, or --key NAME) or CSV (one row is a\n"
    "1 x n matrix). With --random-attention the matrices are the logits (or\n"
    "scores) of each head of a random layer on a random input X (d x n, tokens as\n"
    "columns); logit spectra come from the factors (W_k X)^T (W_q X), whose rank\n"
    "must equal min(d_p, d, n).",
};

static int print_item_text(const spectrum_item *it, size_t max_print)
{
    const ar_rank_metrics *m = &it->metrics;
    printf("%s: %zu x %zu (%s)\n", it->label, it->rows, it->cols,
           ar_precision_name(m->precision));
    if (m->rule == AR_RANK_RULE_STORAGE) {
        printf("  rank                 %zu  (threshold %.3e: %s rounding noise, %zu draws, seed "
               "%llu)\n",
               m->rank, m->threshold, ar_precision_name(m->precision), m->draws,
               (unsigned long long)m->seed);
        printf("  certain rank         %zu  (threshold %.3e: bound of the rounding error)\n",
               m->certain_rank, m->certain_threshold);
    } else {
        printf("  rank                 %zu  (threshold %.3e = max(atol %.3g, rtol %.3e * "
               "sigma_1))\n",
               m->rank, m->threshold, m->atol, m->rtol);
    }
    if (it->expected_rank >= 0)
        printf("  expected rank        %ld  (min(d_p, d, n))  %s\n", it->expected_rank,
               (long)m->rank == it->expected_rank ? "ok" : "MISMATCH");
    printf("  stable rank          %.6g\n", m->stable_rank);
    printf("  Roy-Vetterli rank    %.6g\n", m->roy_vetterli_rank);
    printf("  participation ratio  %.6g\n", m->participation_ratio);
    printf("  energy rank (%.4g)   %zu\n", m->energy_fraction, m->energy_rank);
    printf("  nuclear rank         %.6g\n", m->nuclear_rank);
    printf("  singular values     ");
    size_t shown = it->k < max_print ? it->k : max_print;
    for (size_t i = 0; i < shown; i++)
        printf(" %.6g", it->s[i]);
    if (shown < it->k)
        printf(" ... (%zu more; --json or --csv for all)", it->k - shown);
    printf("\n");
    return 0;
}

/* One matrix's record (the library's) with its label first. */
static json_t *item_json(const spectrum_item *it, int *code)
{
    char *text = NULL;
    ar_error err = {{0}};
    int rc = ar_spectrum_matrix_json(&it->metrics, it->index, it->nindex, it->s, it->k,
                                     it->expected_rank, 0, &text, &err);
    json_t *o = cli_json_record("spectrum", rc, text, &err, code);
    return o != NULL ? cli_json_prepend("label", json_string(it->label), o) : NULL;
}

/* Names of the stack-index columns: one per leading axis, so a plot can
 * group by any of them.  A 4-D stack is PyTorch's batch x heads ("b,h"),
 * random attention has one head axis ("head"), anything else i0, i1, ... */
static void index_column_name(size_t nindex, int heads, size_t axis, char *out, size_t len)
{
    if (heads && nindex == 1)
        snprintf(out, len, "head");
    else if (nindex == 2)
        snprintf(out, len, "%s", axis == 0 ? "b" : "h");
    else
        snprintf(out, len, "i%zu", axis);
}

/* CSV plot data: the stack indices, then index (1-based position of the
 * value), sigma, sigma / sigma_1, cumulative energy. */
static int write_csv(const char *path, const spectrum_item *items, size_t count, int heads)
{
    ar_atomic_file *af;
    ar_error err = {{0}};
    int rc = ar_atomic_open(&af, path, &err);
    if (rc != AR_OK)
        return cli_status_error("spectrum", rc, &err, NULL);
    size_t nindex = count > 0 ? items[0].nindex : 0;
    for (size_t a = 0; a < nindex; a++) {
        char name[32];
        index_column_name(nindex, heads, a, name, sizeof name);
        ar_atomic_printf(af, "%s,", name);
    }
    ar_atomic_printf(af, "index,sigma,sigma_normalised,cumulative_energy\n");
    for (size_t t = 0; t < count; t++) {
        const spectrum_item *it = &items[t];
        double total = 0.0, acc = 0.0;
        for (size_t i = 0; i < it->k; i++)
            total += it->s[i] * it->s[i];
        for (size_t i = 0; i < it->k; i++) {
            acc += it->s[i] * it->s[i];
            double top = it->s[0] > 0.0 ? it->s[0] : 1.0;
            for (size_t a = 0; a < it->nindex; a++)
                ar_atomic_printf(af, "%zu,", it->index[a]);
            ar_atomic_printf(af, "%zu,%.17g,%.17g,%.17g\n", i + 1, it->s[i], it->s[i] / top,
                    total > 0.0 ? acc / total : 0.0);
        }
    }
    rc = ar_atomic_commit(af, &err);
    return rc == AR_OK ? 0 : cli_status_error("spectrum", rc, &err, NULL);
}

static void free_items_one(spectrum_item *it)
{
    if (!it->s_borrowed)
        free(it->s);
    it->s = NULL;
}

static void free_items(spectrum_item *items, size_t count)
{
    for (size_t t = 0; t < count; t++)
        free_items_one(&items[t]);
    free(items);
}

static int report(const spectrum_args *args, const char *source, spectrum_item *items,
                  size_t count)
{
    if (args->csv != NULL) {
        int rc = write_csv(args->csv, items, count, args->random_attention);
        if (rc != 0)
            return rc;
    }
    if (args->json) {
        json_t *list = json_array();
        for (size_t t = 0; list != NULL && t < count; t++) {
            int code = 0;
            json_t *o = item_json(&items[t], &code);
            if (o == NULL) {
                json_decref(list);
                return code != 0 ? code : cli_json_print(NULL);
            }
            json_array_append_new(list, o);
        }
        return cli_json_print(json_pack("{s:s, s:o}", "source", source, "matrices", list));
    }
    for (size_t t = 0; t < count; t++)
        print_item_text(&items[t], args->max_print);
    return 0;
}

static int resolve_opts(const spectrum_args *args, ar_precision stored, ar_rank_opts *opts)
{
    ar_rank_opts_init(opts);
    opts->precision = stored;
    if (args->precision != NULL && cli_parse_precision(args->precision, &opts->precision) != 0)
        return cli_usage_error("spectrum",
                               "--precision: expected float64, float32, float16 or bfloat16, got '%s'",
                               args->precision);
    ar_error err = {{0}};
    /* a negative rtol is the library's default: a given one is checked here */
    int rc = args->rtol_seen ? ar_option_check_nonneg("rtol", args->rtol, &err) : AR_OK;
    if (args->rtol_seen)
        opts->rtol = args->rtol;
    opts->atol = args->atol;
    opts->energy_fraction = args->energy;
    opts->seed = args->seed;
    if (rc == AR_OK)
        rc = ar_rank_opts_check(opts, &err);
    return rc == AR_OK ? -1 : cli_status_error("spectrum", rc, &err, NULL);
}

static void label_slice(const ar_array *arr, size_t t, spectrum_item *it, const char *file)
{
    size_t idx[AR_ARRAY_MAX_DIMS];
    size_t lead = arr->ndim > 2 ? arr->ndim - 2 : 0;
    ar_array_slice_index(arr, t, idx);
    it->nindex = lead;
    int off = snprintf(it->label, sizeof it->label, "%s", file);
    if (lead > 0 && off > 0 && (size_t)off < sizeof it->label)
        off += snprintf(it->label + off, sizeof it->label - (size_t)off, " [");
    for (size_t i = 0; i < lead; i++) {
        it->index[i] = idx[i];
        if (off > 0 && (size_t)off < sizeof it->label)
            off += snprintf(it->label + off, sizeof it->label - (size_t)off, "%s%zu",
                            i ? "," : "", idx[i]);
    }
    if (lead > 0 && off > 0 && (size_t)off < sizeof it->label)
        snprintf(it->label + off, sizeof it->label - (size_t)off, "]");
    it->expected_rank = -1;
}

/* Spectra and metrics of every slice (parallel over slices, in the
 * library).  The items' singular values point into one block, *svals (the
 * caller frees it after the report): no allocation per matrix. */
static int analyse_stack(const spectrum_args *args, const ar_array *arr, const ar_rank_opts *opts,
                         spectrum_item *items, double **svals)
{
    size_t k = arr->rows < arr->cols ? arr->rows : arr->cols;
    ar_cview *mats = calloc(arr->count, sizeof *mats);
    ar_rank_metrics *metrics = calloc(arr->count, sizeof *metrics);
    double *s = malloc(arr->count * k * sizeof *s);
    *svals = s;
    if (mats == NULL || metrics == NULL || s == NULL) {
        free(mats);
        free(metrics);
        return cli_status_error("spectrum", AR_ENOMEM, NULL, args->file);
    }
    for (size_t t = 0; t < arr->count; t++)
        mats[t] = ar_array_slice(arr, t);
    if (arr->count > 1 && args->threads != 1)
        cli_set_blas_threads(1); /* one BLAS thread per matrix, matrices in parallel */
    size_t failed = 0;
    ar_error err = {{0}};
    int rc = ar_spectrum_run_stack(mats, arr->count, opts, args->threads, s, metrics, &failed,
                                   &err);
    for (size_t t = 0; rc == AR_OK && t < arr->count; t++) {
        items[t].rows = arr->rows;
        items[t].cols = arr->cols;
        items[t].k = k;
        items[t].s = s + t * k;
        items[t].s_borrowed = 1;
        items[t].metrics = metrics[t];
    }
    free(mats);
    free(metrics);
    if (rc == AR_ENONFINITE)
        return cli_usage_error("spectrum", "%s: %s", items[failed].label, err.msg);
    return rc == AR_OK ? -1 : cli_status_error("spectrum", rc, NULL, items[failed].label);
}

static int run_file(const spectrum_args *args)
{
    ar_array arr;
    ar_error err = {{0}};
    /* The array plus the SVD workspaces of the threads stay within the
     * memory limit; the reader refuses larger declared sizes up front. */
    int rc = ar_matrix_file_read_key(args->file, args->key, &arr,
                                     (size_t)(cli_memory_limit() / 2), &err);
    if (rc == AR_OK && (rc = ar_array_require_matrix(&arr, args->file, &err)) != AR_OK)
        ar_array_free(&arr);
    if (rc != AR_OK)
        return cli_status_error("spectrum", rc, &err, NULL);
    ar_rank_opts opts;
    int code = resolve_opts(args, arr.precision, &opts);
    spectrum_item *items = NULL;
    if (code < 0 && (arr.rows == 0 || arr.cols == 0 || arr.count == 0))
        code = cli_usage_error("spectrum", "%s: empty matrix", args->file);
    if (code < 0) {
        items = calloc(arr.count, sizeof *items);
        if (items == NULL)
            code = cli_status_error("spectrum", AR_ENOMEM, NULL, args->file);
    }
    for (size_t t = 0; code < 0 && t < arr.count; t++)
        label_slice(&arr, t, &items[t], args->file);
    double *svals = NULL;
    if (code < 0)
        code = analyse_stack(args, &arr, &opts, items, &svals);
    if (code < 0)
        code = report(args, args->file, items, arr.count);
    if (items != NULL)
        free_items(items, arr.count);
    free(svals);
    ar_array_free(&arr);
    return code;
}

static int run_random(const spectrum_args *args);

/* --distributed FILE: one matrix, ScaLAPACK over the MPI processes; rank 0
 * reports exactly as for a serial run. */
static int run_file_distributed(const spectrum_args *args)
{
    ar_spectrum_dist_result res;
    ar_error err = {{0}};
    int rc = ar_spectrum_dist_svals_npy(args->file, &args->dist, &res, &err);
    if (rc != AR_OK) {
        ar_spectrum_dist_result_free(&res);
        return args->mpi_rank == 0 ? cli_status_error("spectrum", rc, &err, NULL)
                                   : cli_exit_code(rc);
    }
    spectrum_item item;
    memset(&item, 0, sizeof item);
    snprintf(item.label, sizeof item.label, "%s (ScaLAPACK, %zu x %zu processes, block %zu)",
             args->file, res.grid_rows, res.grid_cols, res.block);
    item.rows = res.rows;
    item.cols = res.cols;
    item.k = res.k;
    item.s = res.s;
    item.expected_rank = -1;
    ar_rank_opts opts;
    int code = resolve_opts(args, res.precision, &opts);
    if (code < 0) {
        rc = ar_rank_metrics_compute(item.s, item.k, item.rows, item.cols, &opts, &item.metrics,
                                     NULL);
        code = rc != AR_OK ? cli_status_error("spectrum", rc, NULL, args->file)
               : args->mpi_rank == 0 ? report(args, args->file, &item, 1)
                                     : 0;
    }
    free_items_one(&item);
    return code;
}

/* Options of --distributed: --block NB, --grid RxC. */
static int parse_dist_opts(spectrum_args *args, int size)
{
    ar_spectrum_dist_opts_init(&args->dist);
    if (args->block != 0)
        args->dist.block = args->block;
    if (args->grid == NULL)
        return -1;
    char tail = 0;
    unsigned long r = 0, c = 0;
    if (sscanf(args->grid, "%lux%lu%c", &r, &c, &tail) != 2 || r == 0 || c == 0 ||
        r > 65536 || c > 65536)
        return cli_usage_error("spectrum", "--grid: expected RxC with R, C >= 1, got '%s'",
                               args->grid);
    if ((unsigned long)size != r * c)
        return cli_usage_error("spectrum", "--grid %lux%lu needs %lu processes, mpirun gave %d", r,
                               c, r * c, size);
    args->dist.grid_rows = r;
    args->dist.grid_cols = c;
    return -1;
}

static int run_distributed(spectrum_args *args)
{
    ar_error err = {{0}};
    int size = 1;
    int rc = cli_dist_begin(&args->mpi_rank, &size, &err);
    if (rc != AR_OK)
        return cli_status_error("spectrum", rc, &err, NULL);
    /* Every rank finds the same usage errors and results: rank 0 speaks
     * for all, so a message appears once however many processes run. */
    if (args->mpi_rank != 0) {
        /* If this fails, messages merely appear more than once. */
        FILE *out = freopen("/dev/null", "w", stdout), *errs = freopen("/dev/null", "w", stderr);
        (void)out, (void)errs;
    }
    int code = parse_dist_opts(args, size);
    if (code < 0 && args->random_attention && strcmp(args->of, "logits") != 0)
        code = cli_usage_error("spectrum",
                               "--distributed with --random-attention takes --of logits (write "
                               "scores to a .npy and pass the file)");
    if (code >= 0) {
        /* usage error, reported */
    } else if (args->random_attention)
        code = run_random(args);
    else if (args->file == NULL)
        code = cli_usage_error("spectrum", "missing FILE (or --random-attention; see --help)");
    else
        code = run_file_distributed(args);
    cli_dist_end();
    return code;
}

/* --axis and --of: text to the library's values.  auto is no axis here:
 * the map is drawn, not read. */
static int parse_random_text(const spectrum_args *args, ar_spectrum_random_opts *o)
{
    if (strcmp(args->axis_text, "auto") == 0)
        return cli_usage_error("spectrum", "--axis auto reads the axis from a map's sums, and "
                               "--random-attention draws the map: give --axis col or row");
    if (ar_axis_parse(args->axis_text, &o->axis, NULL) != AR_OK)
        return cli_usage_error("spectrum", "--axis: expected col or row, got '%s'",
                               args->axis_text);
    if (strcmp(args->of, "logits") == 0)
        o->of = AR_SPECTRUM_OF_LOGITS;
    else if (strcmp(args->of, "scores") == 0)
        o->of = AR_SPECTRUM_OF_SCORES;
    else
        return cli_usage_error("spectrum", "--of: expected logits or scores, got '%s'", args->of);
    return -1;
}

static void random_opts(const spectrum_args *args, ar_spectrum_random_opts *o)
{
    ar_spectrum_random_opts_init(o);
    o->n = args->n;
    o->d = args->d;
    o->heads = args->heads;
    o->head_size = args->head_size_seen ? args->head_size : 0;
    o->one_head = args->head_seen;
    o->head = args->head;
    o->seed = args->seed;
    o->max_bytes = cli_memory_limit();
    o->distributed = args->distributed ? &args->dist : NULL;
}

/* The library's heads as report items; the values stay the result's. */
static int report_random(const spectrum_args *args, const ar_spectrum_random_result *r)
{
    spectrum_item *items = calloc(r->count, sizeof *items);
    if (items == NULL)
        return cli_status_error("spectrum", AR_ENOMEM, NULL, "random attention");
    for (size_t t = 0; t < r->count; t++) {
        const ar_spectrum_random_head *h = &r->heads[t];
        spectrum_item *it = &items[t];
        snprintf(it->label, sizeof it->label, "%s", h->label);
        it->index[0] = h->head;
        it->nindex = 1;
        it->s_borrowed = 1;
        it->rows = h->rows;
        it->cols = h->cols;
        it->s = h->s;
        it->k = h->k;
        it->metrics = h->metrics;
        it->expected_rank = h->expected_rank;
    }
    int code = report(args, r->source, items, r->count);
    free_items(items, r->count);
    return code;
}

/* --random-attention: the library checks the sizes (before the rank
 * options, as it always has) and runs the layer; here only the text
 * options and the output. */
static int run_random(const spectrum_args *args)
{
    if (args->file != NULL)
        return cli_usage_error("spectrum", "give either FILE or --random-attention, not both");
    ar_spectrum_random_opts o;
    random_opts(args, &o);
    ar_error err = {{0}};
    /* Missing sizes are reported before malformed text options, the rest
     * of the library's rules after them: a probe with those rules disarmed
     * (a head size, all heads, no limit) meets only the first. */
    ar_spectrum_random_opts probe = o;
    probe.head_size = 1;
    probe.one_head = 0;
    probe.max_bytes = 0.0;
    int rc = ar_spectrum_random_check(&probe, NULL, &err);
    int code = rc == AR_OK ? parse_random_text(args, &o) : -1;
    if (code >= 0)
        return code;
    if (rc == AR_OK)
        rc = ar_spectrum_random_check(&o, NULL, &err);
    if (rc == AR_ENOMEM) /* the limit is the CLI's: say how to move it */
        return cli_usage_error("spectrum", "%s (set ATTNRANK_MAX_MEMORY to change the limit)",
                               err.msg);
    if (rc != AR_OK)
        return cli_status_error("spectrum", rc, &err, NULL);
    ar_rank_opts opts;
    code = resolve_opts(args, AR_PREC_F64, &opts);
    if (code >= 0)
        return code;
    ar_spectrum_random_result res;
    rc = ar_spectrum_run_random(&o, &opts, &res, &err);
    if (rc == AR_OK)
        code = args->mpi_rank == 0 ? report_random(args, &res) : 0;
    else /* distributed, every process has the same message; rank 0's is seen */
        code = cli_status_error("spectrum", rc, &err, args->distributed ? NULL : "random attention");
    ar_spectrum_random_result_free(&res);
    return code;
}

int cmd_spectrum(int argc, char **argv)
{
    spectrum_args a = {0};
    a.axis_text = "col";
    a.of = "logits";
    a.energy = 0.99;
    a.max_print = 10;
    const cli_option opts[] = {
        {"--random-attention", CLI_SWITCH, &a.random_attention, NULL,
         "analyse the heads of a random attention layer instead of a file", 0, NULL},
        {"--n", CLI_SIZE, &a.n, "N", "sequence length (random attention)", 1, NULL},
        {"--d", CLI_SIZE, &a.d, "D", "embedding size (random attention)", 1, NULL},
        {"--heads", CLI_SIZE, &a.heads, "H", "number of heads (random attention)", 1, NULL},
        {"--head-size", CLI_SIZE, &a.head_size, "P",
         "head size d_p (FixedMultiHead); default d/h (MultiHead)", 1, &a.head_size_seen},
        {"--head", CLI_SIZE, &a.head, "K", "analyse only head K (0-based)", 0, &a.head_seen},
        {"--of", CLI_STRING, &a.of, "logits|scores", "logits (default) or softmax scores", 0,
         NULL},
        {"--axis", CLI_STRING, &a.axis_text, "col|row",
         "softmax axis for scores (col = the paper's)", 0, NULL},
        {"--seed", CLI_U64, &a.seed, "S",
         "random seed of the random layer and of the storage rule's draws (default 0)", 0, NULL},
        {"--rtol", CLI_DOUBLE, &a.rtol, "R",
         "relative rank tolerance (default: float64 data, and --distributed, max(m,n) * eps; "
         "float32/float16/bfloat16 data the storage rule, cut at the matrix's own rounding "
         "noise)",
         0, &a.rtol_seen},
        {"--atol", CLI_DOUBLE, &a.atol, "A", "absolute rank tolerance (default 0)", 0, NULL},
        {"--precision", CLI_STRING, &a.precision, "float64|float32|float16|bfloat16",
         "storage precision of the data, which sets the rank rule (default: as stored)", 0, NULL},
        {"--energy", CLI_DOUBLE, &a.energy, "F", "energy fraction for the energy rank (0.99)", 0,
         NULL},
        {"--show", CLI_SIZE, &a.max_print, "K", "singular values shown in text output (10)", 0,
         NULL},
        {"--threads", CLI_SIZE, &a.threads, "T",
         "threads over the matrices of a stack (0 = all CPUs; BLAS then runs 1 thread each)", 0,
         NULL},
        {"--distributed", CLI_SWITCH, &a.distributed, NULL,
         "under mpirun: ScaLAPACK over all processes (one .npy matrix read with MPI-IO, or "
         "--random-attention logits from their factors); needs a -Dmpi=enabled build", 0, NULL},
        {"--block", CLI_SIZE, &a.block, "NB", "block size of the distributed layout (64)", 1,
         NULL},
        {"--grid", CLI_STRING, &a.grid, "RxC",
         "process grid of --distributed (default: as square as the process count allows)", 0,
         NULL},
        {"--json", CLI_SWITCH, &a.json, NULL, "print the result as JSON on stdout", 0, NULL},
        {"--csv", CLI_STRING, &a.csv, "FILE",
         "write plot data: one column per stack axis (b,h for batch x heads, else i0,i1,...; "
         "head for --random-attention), then index,sigma,sigma_normalised,cumulative_energy",
         0, NULL},
        {"--key", CLI_STRING, &a.key, "NAME", "the array of an .npz archive (default: its only one)",
         0, NULL},
    };
    const char *pos[1] = {NULL};
    size_t npos = 0;
    int code = cli_parse(&spectrum_doc, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1,
                         &npos);
    if (code >= 0)
        return code;
    a.file = npos > 0 ? pos[0] : NULL;
    if ((a.block != 0 || a.grid != NULL) && !a.distributed)
        return cli_usage_error("spectrum", "--block and --grid belong to --distributed");
    if (a.distributed)
        return run_distributed(&a);
    if (a.random_attention)
        return run_random(&a);
    if (a.file == NULL)
        return cli_usage_error("spectrum", "missing FILE (or --random-attention; see --help)");
    return run_file(&a);
}
