/* attnrank represent: can one attention head produce this attention matrix?
 * Exact criterion of docs/theory/low-rank-bottleneck.md (feasibility on X, minimal head size
 * rank(Pi log P)), a certificate W_q, W_k checked by a forward softmax, and
 * the best error when the head is too small. */
#include "represent.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_command_doc represent_doc = {
    "represent",
    "attnrank represent P.npy [--mask MASK] [--bias BIAS] [--X X.npy] [--head-size K]\n"
    "       [--axis col|row|auto] [--smooth EPS] [--rtol R] [--atol A] [--sum-tol T]\n"
    "       [--tau T] [--accuracy A] [--extra-rank R] [--verify-seconds S]\n"
    "       [--weights-out PREFIX] [--seed S] [--no-fit] [--max-iter N] [--json]",
    "Decide whether one attention head reproduces the stochastic n x n matrix P\n"
    "(softmax over columns by default; --axis row for PyTorch's layout, rows as\n"
    "queries; --axis auto reads the axis from which sums are 1 and refuses a map\n"
    "whose rows and columns both are, such as a symmetric one). Unmasked\n"
    "(docs/theory/low-rank-bottleneck.md): with any full-column-rank input\n"
    "(default; needs d >= n) the minimal head size is rank(Pi log P) <=\n"
    "n - 1, Pi centring each column; with a given input X (d x n, tokens as columns)\n"
    "P may be unreachable for every head size, and the failing constraint is named.\n"
    "With --mask (docs/theory/masked-attention.md): causal, window:W (W keys including\n"
    "the query's own), band:W (|i - j| < W), prefix:P, sink:S+window:W, docs:N1/N2/...,\n"
    "auto (from the exact zeros of P; the output names the mask found) or file:PATH\n"
    "(a 0/1 matrix in P's layout). Zeros outside the mask are the mask; zeros inside\n"
    "and positive entries outside are refused. Staircase masks (causal, prefix,\n"
    "documents, sinks with causal attention) give the EXACT minimal head size (shift\n"
    "removal and a column-innovation count at tolerance tau, --tau T in nats; default\n"
    "max(1e-9, 10 sqrt(n) u) max(1, max|log P|)); windows and bands give a proved lower\n"
    "bound and the smallest certificate the masked forward check confirmed (tried\n"
    "at the lower bound and up to --extra-rank R more, default 4; a certificate\n"
    "passes at max-abs error <= --accuracy A), with the generic value of the mask\n"
    "and its status (proved, verified over F_p within --verify-seconds S, default 1,\n"
    "or conjectural). A masked X must have full column rank.\n"
    "With --bias (docs/theory/positional-bias.md) the logits are S + B for a fixed\n"
    "positional bias B: alibi:M (-M |i - j|), alibi-causal:M (-M (i - j) on keys\n"
    "j <= i), t5:FILE (T5 bucket values, a vector: bidirectional buckets, max\n"
    "distance 128) or file:PATH (the n x n bias in P's layout). P is analysed as\n"
    "normalize(P exp(-B)) (under a mask on its support), the certificate is checked\n"
    "by softmax(S + B) against P, and the output adds the bias rank (the shifted\n"
    "rank of B) and the reach min(n - 1, K + bias rank); no fit runs with a bias.\n"
    "When representable, W_q and W_k are built and checked by a forward softmax\n"
    "(max-abs and KL residuals); --weights-out writes PREFIX_wq.npy and PREFIX_wk.npy\n"
    "(head size K if given, else the minimal one; X = identity when --X is absent).\n"
    "Layout: K x d each, W_q always the query projection; columns as queries\n"
    "S = (W_k X)^T (W_q X) / sqrt(K); rows as queries S = (W_q X)^T (W_k X) / sqrt(K),\n"
    "i.e. PyTorch's q and k blocks of nn.MultiheadAttention.in_proj_weight.\n"
    "With --head-size K below the minimum: the best logit-space error (Eckart-Young;\n"
    "under a mask a lower bound from fully specified blocks) and a probability-space\n"
    "fit (L-BFGS from the truncated SVD, seeded jitter; under a mask over the\n"
    "allowed keys only, from the mean-filled log): at most --max-iter N iterations\n"
    "(default 400), progress on stderr once it runs longer than 2 s; --no-fit skips it.\n"
    "Tolerances default to the stored precision (float32 files get float32's eps):\n"
    "rank cut rtol * ||log P||_2 with rtol = n eps; sums within 2 max(n,4) eps\n"
    "(float64) or 2u + n t + 2 max(n,4) 2^-24 (u, t: storage roundoff, subnormal).\n"
    "Zero entries are refused unless --smooth EPS replaces P by (P + EPS) renormalised\n"
    "(inside the mask only, with --mask). With --mask auto, zeros inside the best-\n"
    "fitting named mask, in queries that also hold entries below the stored type's\n"
    "smallest normal (float16: 6.1e-5), are underflow: refused, naming the mask to\n"
    "state with --smooth EPS; zeros no named mask explains make an irregular pattern.\n"
    "Exit status: 0 representable, 1 not representable (or undecided between the\n"
    "bounds), 2 bad input, 3 internal error.",
};

/* Read one matrix; stacks are refused (represent takes one attention map). */
static int read_single(const char *path, const char *what, int stacks, ar_array *arr)
{
    ar_error err = {{0}};
    int rc = ar_matrix_file_read(path, arr, (size_t)(cli_memory_limit() / 8), &err);
    if (rc == AR_OK && (rc = ar_array_require_matrix(arr, path, &err)) != AR_OK)
        ar_array_free(arr);
    if (rc != AR_OK)
        return cli_status_error("represent", rc, &err, NULL);
    if (arr->count != 1 && !stacks) {
        size_t count = arr->count;
        ar_array_free(arr);
        return cli_usage_error("represent",
                               "%s: holds a stack of %zu matrices; %s must be a single matrix",
                               path, count, what);
    }
    if (arr->rows == 0 || arr->cols == 0) {
        ar_array_free(arr);
        return cli_usage_error("represent", "%s: empty matrix", path);
    }
    return -1;
}

/* ---- text output ---- */

static void print_svals(const ar_represent_result *r)
{
    size_t n = r->n, m = r->centred_rank;
    printf("  singular values of Pi log P:");
    if (n <= 8) {
        for (size_t i = 0; i < n; i++)
            printf(" %.4g", r->centred_svals[i]);
    } else {
        printf(" largest %.4g", r->centred_svals[0]);
        if (m > 0)
            printf(", sigma_%zu = %.4g (last kept)", m, r->centred_svals[m - 1]);
        if (m < n)
            printf(", sigma_%zu = %.4g (first cut)", m + 1, r->centred_svals[m]);
        printf(" (--json lists all %zu)", n);
    }
    printf("\n");
}

static void print_input(const ar_represent_result *r, const represent_args *a)
{
    const char *line = r->axis == AR_AXIS_COL ? "column" : "row";
    printf("P: %s, %zu x %zu, %s-stochastic (--axis %s), %s %s\n", a->p_file, r->n, r->n,
           line, ar_axis_name(r->axis), a->precision ? "tolerances of" : "stored as",
           ar_precision_name(r->precision));
    printf("  largest |%s sum - 1| = %.3g (tolerance %.3g)\n", line, r->max_sum_defect,
           r->sum_tol);
    if (r->smoothed)
        printf("  smoothed with eps = %g: %zu zero entries; smallest entry %.3g -> %.3g; "
               "largest change %.3g\n",
               r->smooth.eps, r->smooth.zeros, r->smooth.min_before, r->smooth.min_after,
               r->smooth.max_change);
    if (r->x_given) {
        printf("X: %s, %zu x %zu, rank %zu (threshold %.3g)", a->x_file, r->d, r->n, r->x_rank,
               r->x_threshold);
        if (r->shift_forced)
            printf("; 1 is not in the row space of X (||(I - R) 1|| = %.3g), so the column "
                   "shift of log P is forced\n",
                   r->ones_residual);
        else
            printf("; 1 lies in the row space of X, so log P is centred\n");
    } else {
        printf("X: not given: any input of full column rank (certificate for X = I_%zu)\n", r->n);
    }
    print_svals(r);
    printf("  rank threshold %.3g = max(atol %.3g, rtol %.3g x ||log P||_2 %.4g)\n", r->threshold,
           r->atol, r->rtol, r->log_norm2);
}

static void print_certificate(const ar_certificate *c, const represent_args *a)
{
    printf("certificate: W_q, W_k are %zu x %zu; forward softmax reproduces P with max-abs "
           "error %.3g,\n  KL(P || softmax) mean %.3g, max %.3g over %ss; max logit error %.3g\n",
           c->head_size, c->d, c->max_abs, c->kl_mean, c->kl_max,
           c->axis == AR_AXIS_COL ? "column" : "row", c->logit_max_abs);
    if (a->weights_out != NULL)
        printf("  wrote %s_wq.npy and %s_wk.npy\n", a->weights_out, a->weights_out);
}

/* ---- the run ---- */

int represent_write_weights(const char *prefix, const ar_certificate *c)
{
    size_t len = strlen(prefix) + 16;
    char *path = malloc(len);
    if (path == NULL)
        return cli_status_error("represent", AR_ENOMEM, NULL, NULL);
    ar_error err = {{0}};
    snprintf(path, len, "%s_wq.npy", prefix);
    int rc = ar_npy_write(path, ar_matrix_cview(&c->wq), &err);
    if (rc == AR_OK) {
        snprintf(path, len, "%s_wk.npy", prefix);
        rc = ar_npy_write(path, ar_matrix_cview(&c->wk), &err);
    }
    free(path);
    return rc == AR_OK ? -1 : cli_status_error("represent", rc, &err, "--weights-out");
}

const char *represent_fit_method(const ar_fit_result *f)
{
    /* the library's one method; any other value prints as its name */
    return f->method == AR_FIT_LBFGS ? "L-BFGS" : ar_fit_method_name(f->method);
}

/* The fit's clock starts when the fit does; large masked maps say what
 * takes the time. */
static void on_step(void *ctx, ar_represent_step step, size_t n, size_t head_size)
{
    represent_progress *rp = ctx;
    int masked = rp->a->mask_text != NULL && strcmp(rp->a->mask_text, "none") != 0;
    if (step == AR_REPRESENT_STEP_ANALYSE && masked && n >= 1024)
        fprintf(stderr, "attnrank represent: analysing a %zu x %zu map under a mask...\n", n, n);
    if (step != AR_REPRESENT_STEP_FIT)
        return;
    cli_fit_progress_start(&rp->st, "represent");
    if (masked && n >= 512)
        fprintf(stderr, "attnrank represent: fitting a head of size %zu under the mask (at "
                        "most %zu L-BFGS iterations)...\n",
                head_size, rp->max_iter);
}

void represent_run_opts(const represent_args *a, ar_represent_run_opts *ro,
                        represent_progress *rp)
{
    ro->head_size_given = a->head_size_seen;
    ro->head_size = a->head_size;
    ro->fit = !a->no_fit;
    ro->fit_opts.seed = a->seed;
    if (a->max_iter_seen)
        ro->fit_opts.max_iter = a->max_iter;
    rp->a = a;
    rp->max_iter = ro->fit_opts.max_iter;
    ro->fit_opts.progress = cli_fit_progress;
    ro->fit_opts.progress_ctx = &rp->st;
    ro->progress = on_step;
    ro->progress_ctx = rp;
    ro->bias = a->bias;
}

void represent_print_bias(const represent_args *a, const ar_represent_run_result *o)
{
    const ar_bias_spec *s = &a->bias_spec;
    const ar_bias_rank_result *b = &o->bias_rank;
    printf("positional bias: %s", ar_bias_kind_name(s->kind));
    if (s->kind == AR_BIAS_ALIBI || s->kind == AR_BIAS_ALIBI_CAUSAL)
        printf(" (slope %g)", s->slope);
    else
        printf(" (%s)", s->path);
    if (b->exact)
        printf(": bias rank %zu", b->lower);
    else
        printf(": bias rank between %zu and %zu", b->lower, b->upper);
    printf("; a head of size %zu with it reaches shifted logit rank at most %zu\n", o->head_size,
           o->bias_reach);
}

int represent_run_map(const represent_args *a, ar_cview p, const ar_cview *x,
                      const ar_represent_run_opts *ro, ar_represent_run_result *out)
{
    ar_error err = {{0}};
    int rc = ar_represent_run(p, x, ro, out, &err);
    if (rc != AR_OK) {
        const char *context = out->failed_step == AR_REPRESENT_STEP_ANALYSE       ? a->p_file
                              : out->failed_step == AR_REPRESENT_STEP_CERTIFICATE ? "certificate"
                              : out->failed_step == AR_REPRESENT_STEP_FIT
                                  ? "probability-space fit"
                                  : NULL;
        return cli_status_error("represent", rc, &err, context);
    }
    ar_option_render(out->fit_skipped, AR_OPTION_STYLE_CLI);
    if (out->have_certificate && a->weights_out != NULL)
        return represent_write_weights(a->weights_out, &out->certificate);
    return -1;
}

int represent_print_json(const represent_args *a, const ar_represent_run_result *out)
{
    char *text = NULL;
    ar_error err = {{0}};
    int rc = ar_represent_run_json(out, a->bias_text != NULL ? &a->bias_spec : NULL, 0, &text,
                                   &err);
    int code = 0;
    json_t *rec = cli_json_record("represent", rc, text, &err, &code);
    if (rec == NULL)
        return code;
    json_t *x = json_object_get(rec, "x");
    if (a->x_file != NULL && x != NULL) {
        /* the file after "given": prepended before it, then "given" again,
         * which keeps its place at the front */
        json_t *named = cli_json_prepend("source", json_string(a->x_file), json_incref(x));
        json_object_set_new(rec, "x", cli_json_prepend("given", json_true(), named));
    }
    json_t *cert = json_object_get(rec, "certificate");
    if (a->weights_out != NULL && cert != NULL)
        json_object_set_new(cert, "weights_prefix", json_string(a->weights_out));
    return cli_json_print(cli_json_prepend("source", json_string(a->p_file), rec));
}

static void print_outcome(const represent_args *a, const ar_represent_run_result *o)
{
    const ar_represent_result *r = &o->plain;
    print_input(r, a);
    if (!r->feasible) {
        const char *side = ar_represent_side_name(o->failed);
        printf("constraint failed: %s side: ||(I - R) L*||_F = %.4g (keys), ||L* (I - R)||_F = "
               "%.4g (queries);\n  relative residual %.3g > tolerance %.3g (R projects onto the "
               "row space of X)\n",
               side, r->residual_key, r->residual_query, r->residual_rel, r->feasibility_tol);
        printf("verdict: NOT representable on this X by any head size (rank(Pi log P) = %zu)\n",
               r->centred_rank);
        return;
    }
    printf("minimal head size: %zu = rank(Pi log P) (n - 1 = %zu; the paper's sufficient d_p = "
           "n = %zu)\n",
           r->min_head_size, r->n - 1, r->n);
    if (r->storage_rule)
        printf("  %s storage: an estimate, cut at the rounding noise of log P (threshold "
               "%.3g); at least %zu for every map that rounds to P (certain threshold %.3g)\n",
               ar_precision_name(r->precision), r->threshold, r->certain_rank,
               r->certain_threshold);
    if (o->representable) {
        printf("verdict: representable with head size %zu\n", o->head_size);
        if (o->have_certificate)
            print_certificate(&o->certificate, a);
        return;
    }
    printf("verdict: NOT representable with head size %zu < %zu\n", o->head_size,
           r->min_head_size);
    printf("  best logit-space error (Eckart-Young, rank %zu): %.4g, %.3g of ||Pi log P||_F\n",
           o->head_size, o->logit_error, o->logit_error_rel);
    if (o->have_fit) {
        const ar_fit_result *f = &o->fit;
        printf("  best probability-space fit found (%s, seed %llu, %zu iterations%s):\n"
               "    KL(P || P_hat) mean %.4g, max %.4g; Frobenius %.4g; max-abs %.4g\n"
               "    (the Eckart-Young logits alone give KL mean %.4g)\n",
               represent_fit_method(f), (unsigned long long)f->seed, f->iterations,
               f->converged ? ", converged" : "",
               f->kl_mean, f->kl_max, f->fro_error, f->max_abs_error, f->start_kl_mean);
    } else if (o->fit_skipped[0] != '\0') {
        printf("  probability-space fit skipped: %s\n", o->fit_skipped);
    }
}

/* --axis auto: the axis every map of the file sums to 1 along (the library
 * decides, and refuses a doubly stochastic map); -1 to continue.  A
 * non-square P is left to the size check of run(). */
static int infer_axis(const represent_args *a, const ar_array *parr, ar_represent_opts *ro)
{
    if (parr->rows != parr->cols || parr->count == 0)
        return -1;
    ar_cview *maps = malloc(parr->count * sizeof *maps);
    if (maps == NULL)
        return cli_status_error("represent", AR_ENOMEM, NULL, a->p_file);
    for (size_t k = 0; k < parr->count; k++)
        maps[k] = ar_array_slice(parr, k);
    ar_error err = {{0}};
    int rc = ar_axis_infer_stack(maps, parr->count, ro->precision,
                                 a->sum_tol_seen ? a->sum_tol : AR_TOL_DEFAULT, &ro->axis, NULL,
                                 &err);
    free(maps);
    return rc == AR_OK ? -1 : cli_status_error("represent", rc, &err, a->p_file);
}

static int resolve_options(const represent_args *a, const ar_array *parr, const ar_array *xarr,
                           ar_represent_opts *ro)
{
    ar_represent_opts_init(ro);
    int axis_auto = strcmp(a->axis_text, "auto") == 0;
    if (!axis_auto && ar_axis_parse(a->axis_text, &ro->axis, NULL) != AR_OK)
        return cli_usage_error("represent", "--axis: expected col, row or auto, got '%s'",
                               a->axis_text);
    /* the values given, by the library's rules (a negative tolerance is
     * its default, so the given ones are checked here) */
    const struct {
        const char *name;
        int seen;
        double value;
    } nonneg[] = {{"rtol", a->rtol_seen, a->rtol},         {"atol", 1, a->atol},
                  {"sum-tol", a->sum_tol_seen, a->sum_tol}, {"tau", a->tau_seen, a->tau},
                  {"accuracy", a->accuracy_seen, a->accuracy},
                  {"verify-seconds", a->verify_seen, a->verify_seconds}};
    ar_error err = {{0}};
    int rc = AR_OK;
    for (size_t k = 0; rc == AR_OK && k < sizeof nonneg / sizeof nonneg[0]; k++)
        if (nonneg[k].seen)
            rc = ar_option_check_nonneg(nonneg[k].name, nonneg[k].value, &err);
    if (rc == AR_OK)
        rc = ar_option_check_interval("smooth", a->smooth, 0.0, 0, 1.0, 1, &err);
    if (rc != AR_OK)
        return cli_status_error("represent", rc, &err, NULL);
    int masked = a->mask_text != NULL && strcmp(a->mask_text, "none") != 0;
    if (!masked && (a->tau_seen || a->accuracy_seen || a->verify_seen))
        return cli_usage_error("represent", "--tau, --accuracy and --verify-seconds apply "
                               "with --mask only");
    ro->precision = parr->precision;
    if (a->precision != NULL && cli_parse_precision(a->precision, &ro->precision) != 0)
        return cli_usage_error("represent",
                               "--precision: expected float64, float32, float16 or bfloat16, "
                               "got '%s'",
                               a->precision);
    ro->x_precision = xarr != NULL ? xarr->precision : AR_PREC_F64;
    if (a->rtol_seen)
        ro->rtol = a->rtol;
    ro->atol = a->atol;
    if (a->sum_tol_seen)
        ro->sum_tol = a->sum_tol;
    ro->smooth = a->smooth;
    return axis_auto ? infer_axis(a, parr, ro) : -1;
}

/* --bias: the spec parsed (none is no bias at all, so the output stays
 * the bias-free one); -1 to continue. */
static int parse_bias(represent_args *a)
{
    if (a->bias_text == NULL)
        return -1;
    ar_error err = {{0}};
    int rc = ar_bias_parse(a->bias_text, &a->bias_spec, &err);
    if (rc != AR_OK)
        return cli_status_error("represent", rc, &err, "--bias");
    if (a->bias_spec.kind == AR_BIAS_NONE)
        a->bias_text = NULL;
    return -1;
}

/* The bias of P's size and layout (files through the usual readers). */
static int build_bias(represent_args *a, size_t n, ar_axis axis, ar_matrix *bias,
                      ar_cview *view)
{
    if (a->bias_text == NULL)
        return -1;
    ar_error err = {{0}};
    int rc = ar_bias_matrix(&a->bias_spec, n, axis, (size_t)(cli_memory_limit() / 8), bias, &err);
    if (rc != AR_OK)
        return cli_status_error("represent", rc, &err, "--bias");
    *view = ar_matrix_cview(bias);
    a->bias = view;
    return -1;
}

/* One map, masked or not; returns the exit status. */
static int run_one(const represent_args *a, ar_cview p, const ar_cview *x,
                   const ar_represent_opts *ro)
{
    if (a->mask_text != NULL && strcmp(a->mask_text, "none") != 0)
        return represent_masked(a, p, ro->precision, x, ro->axis);
    ar_represent_run_opts rro;
    ar_represent_run_opts_init(&rro);
    rro.represent = *ro;
    ar_error err = {{0}};
    int rc = ar_represent_run_check(p, &rro, &err);
    if (rc != AR_OK) /* exact zeros without a mask */
        return cli_status_error("represent", rc, &err, a->p_file);
    if (p.rows < 512)
        cli_set_blas_threads(1); /* small matrices: one BLAS thread is faster */
    ar_represent_run_result out;
    memset(&out, 0, sizeof out);
    represent_progress rp;
    represent_run_opts(a, &rro, &rp);
    int code = represent_run_map(a, p, x, &rro, &out);
    if (code < 0) {
        if (a->json)
            code = represent_print_json(a, &out);
        else {
            print_outcome(a, &out);
            if (out.biased)
                represent_print_bias(a, &out);
            code = CLI_EXIT_OK;
        }
        if (code == CLI_EXIT_OK && !out.representable)
            code = CLI_EXIT_FAIL;
        if (!out.representable && a->weights_out != NULL)
            fprintf(stderr, "attnrank represent: no weights written: P is not representable%s\n",
                    out.plain.feasible ? " with this head size" : " on this X");
    }
    ar_represent_run_result_free(&out);
    return code;
}

static int run(represent_args *a)
{
    ar_array parr, xarr;
    memset(&parr, 0, sizeof parr);
    memset(&xarr, 0, sizeof xarr);
    int code = read_single(a->p_file, "P", 1, &parr);
    if (code >= 0)
        return code;
    if (a->x_file != NULL && (code = read_single(a->x_file, "X", 0, &xarr)) >= 0) {
        ar_array_free(&parr);
        return code;
    }
    ar_represent_opts ro;
    code = resolve_options(a, &parr, a->x_file ? &xarr : NULL, &ro);
    if (code < 0)
        code = parse_bias(a);
    if (code < 0 && parr.count > 1) {
        code = represent_stack(a, &parr, &ro);
        ar_array_free(&parr);
        ar_array_free(&xarr);
        return code;
    }
    ar_cview p = ar_array_slice(&parr, 0);
    ar_cview x = ar_array_slice(&xarr, 0); /* empty without --X */
    if (code < 0 && p.rows != p.cols)
        code = cli_usage_error("represent",
                               "%s: P must be a square n x n attention matrix, got %zu x %zu "
                               "(output-layer matrices belong to the softmax-bottleneck command)",
                               a->p_file, p.rows, p.cols);
    if (code < 0 && a->x_file != NULL && x.cols != p.cols)
        code = cli_usage_error("represent",
                               "%s: X must be d x n with n = %zu columns (tokens), got %zu x %zu",
                               a->x_file, p.cols, x.rows, x.cols);
    ar_matrix bias = ar_matrix_empty();
    ar_cview bias_view;
    if (code < 0)
        code = build_bias(a, p.rows, ro.axis, &bias, &bias_view);
    if (code < 0)
        code = run_one(a, p, a->x_file ? &x : NULL, &ro);
    ar_matrix_free(&bias);
    ar_array_free(&parr);
    ar_array_free(&xarr);
    return code;
}

int cmd_represent(int argc, char **argv)
{
    represent_args a;
    memset(&a, 0, sizeof a);
    a.axis_text = "col";
    a.extra_rank = 4;
    char mask_help[320];
    const cli_option opts[] = {
        {"--mask", CLI_STRING, &a.mask_text, "MASK",
         cli_mask_help(mask_help, sizeof mask_help, "attention mask: ", ", auto, file:PATH", 0),
         0, NULL},
        {"--bias", CLI_STRING, &a.bias_text, "BIAS",
         "positional bias added to the logits: alibi:M, alibi-causal:M, t5:FILE, file:PATH", 0,
         NULL},
        {"--X", CLI_STRING, &a.x_file, "FILE", "input X (d x n, tokens as columns)", 0, NULL},
        {"--head-size", CLI_SIZE, &a.head_size, "K", "head size to test (default: minimal)", 0,
         &a.head_size_seen},
        {"--axis", CLI_STRING, &a.axis_text, "col|row|auto",
         "softmax axis (default col; auto: the axis whose sums are 1, refused when both are)", 0,
         NULL},
        {"--smooth", CLI_DOUBLE, &a.smooth, "EPS", "replace P by (P + EPS) renormalised", 0,
         NULL},
        {"--precision", CLI_STRING, &a.precision, "float64|float32|float16|bfloat16",
         "precision whose epsilon sets the default tolerances (default: as stored)", 0, NULL},
        {"--rtol", CLI_DOUBLE, &a.rtol, "R", "rank tolerance relative to ||log P||_2", 0,
         &a.rtol_seen},
        {"--atol", CLI_DOUBLE, &a.atol, "A", "absolute rank tolerance (default 0)", 0, NULL},
        {"--sum-tol", CLI_DOUBLE, &a.sum_tol, "T", "tolerance on |column sum - 1|", 0,
         &a.sum_tol_seen},
        {"--tau", CLI_DOUBLE, &a.tau, "T", "masked: innovation tolerance in nats", 0,
         &a.tau_seen},
        {"--accuracy", CLI_DOUBLE, &a.accuracy, "A",
         "masked: max-abs error a certificate must reach", 0, &a.accuracy_seen},
        {"--extra-rank", CLI_SIZE, &a.extra_rank, "R",
         "masked windows/bands: certificates tried up to lower bound + R (default 4)", 0, NULL},
        {"--verify-seconds", CLI_DOUBLE, &a.verify_seconds, "S",
         "masked: time allowed for the F_p check of the generic value (default 1)", 0,
         &a.verify_seen},
        {"--weights-out", CLI_STRING, &a.weights_out, "PREFIX",
         "write the certificate to PREFIX_wq.npy, PREFIX_wk.npy", 0, NULL},
        {"--seed", CLI_U64, &a.seed, "S", "seed of the fit's jitter (default 0)", 0, NULL},
        {"--no-fit", CLI_SWITCH, &a.no_fit, NULL,
         "below the minimal head size: skip the probability-space fit", 0, NULL},
        {"--max-iter", CLI_SIZE, &a.max_iter, "N",
         "iterations of the probability-space fit (default 400)", 0, &a.max_iter_seen},
        {"--json", CLI_SWITCH, &a.json, NULL, "print JSON on stdout", 0, NULL},
    };
    const char *pos[1] = {NULL};
    size_t npos = 0;
    int code = cli_parse(&represent_doc, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1,
                         &npos);
    if (code >= 0)
        return code;
    if (npos != 1)
        return cli_usage_error("represent", "needs the matrix file P (see --help)");
    a.p_file = pos[0];
    return run(&a);
}
