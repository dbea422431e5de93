/* attnrank represent --mask: the minimal head size of a masked attention map
 * (exact for staircase masks, bounds otherwise), its certificate, and the
 * generic value of the mask; below the lower bound the logit-space error
 * bound and a probability-space fit under the mask
 * (docs/theory/masked-attention.md). */
#include "represent.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A run's result and the mask as text, for the text output. */
typedef struct masked_outcome {
    ar_represent_run_result run;
    char mask_text[256];
} masked_outcome;

static const char *axis_line(ar_axis axis)
{
    return axis == AR_AXIS_ROW ? "row" : "column";
}

/* ---- text ---- */

static void print_mask_and_input(const represent_args *a, const masked_outcome *o)
{
    const ar_masked_result *r = &o->run.masked_res;
    printf("P: %s, %zu x %zu, %s-stochastic on the mask (--axis %s: %ss are queries), %s %s\n",
           a->p_file, r->n, r->n, axis_line(r->axis), ar_axis_name(r->axis), axis_line(r->axis),
           a->precision ? "tolerances of" : "stored as", ar_precision_name(r->precision));
    printf("mask: %s (%s)\n", o->mask_text,
           !r->mask_inferred ? "given"
           : r->mask->kind == AR_MASK_PATTERN
               ? "inferred from the exact zeros of P: an irregular pattern, no named mask"
               : "inferred from the exact zeros of P");
    printf("  largest |%s sum - 1| = %.3g (tolerance %.3g)\n", axis_line(r->axis),
           r->max_sum_defect, r->sum_tol);
    if (r->smoothed)
        printf("  smoothed inside the mask with eps = %g: %zu zero entries; smallest entry %.3g "
               "-> %.3g; largest change %.3g\n",
               r->smooth.eps, r->smooth.zeros, r->smooth.min_before, r->smooth.min_after,
               r->smooth.max_change);
    if (r->x_given)
        printf("X: %s, %zu x %zu, full column rank (threshold %.3g)\n", a->x_file, r->d, r->n,
               r->x_threshold);
    else
        printf("X: not given: any input of full column rank (certificate for X = I_%zu)\n", r->n);
}

/* The storage rule's answer: an interval for every map that rounds to the
 * stored one, and the default estimate inside it. */
static void print_stored_answer(const ar_masked_result *r)
{
    const char *prec = ar_precision_name(r->precision);
    if (r->exact)
        printf("minimal head size: %zu (exact at %s storage: no map that rounds to P needs "
               "less, and a certificate's map rounds to P)\n",
               r->min_head_size, prec);
    else if (r->certified)
        printf("minimal head size: between %zu and %zu for the maps that round to P in %s, "
               "estimate %zu\n",
               r->lower, r->upper, prec, r->min_head_size);
    else
        printf("minimal head size: at least %zu for every map that rounds to P in %s, estimate "
               "%zu; no certificate within the rounding was found\n",
               r->lower, prec, r->min_head_size);
    printf("  storage rule: log P rounded by up to %.3g nats; lower bound from fully specified "
           "blocks (Weyl), certificate checked entry by entry within the map's rounding; "
           "estimate at tau = %.3g nats\n",
           r->log_rounding, r->tau);
}

static void print_answer(const masked_outcome *o)
{
    const ar_masked_result *r = &o->run.masked_res;
    if (r->storage_rule)
        print_stored_answer(r);
    else if (r->exact)
        printf("minimal head size: %zu (exact: %s)\n", r->min_head_size,
               r->method == AR_MASKED_STAIRCASE
                   ? "staircase mask, shift removed on a key every query sees, column "
                     "innovations counted"
                   : "proved lower bound met by a confirmed certificate");
    else if (r->certified)
        printf("minimal head size: between %zu (proved lower bound) and %zu (the smallest "
               "certificate the forward check confirmed)\n",
               r->lower, r->upper);
    else
        printf("minimal head size: at least %zu (proved lower bound); no certificate passed "
               "the forward check\n",
               r->lower);
    if (!r->storage_rule) { /* the storage rule states its tolerances above */
        printf("  tolerance tau = %.3g nats on column residuals", r->tau);
        if (r->method == AR_MASKED_STAIRCASE)
            printf("; innovation gap: smallest counted %.3g, largest not counted %.3g",
                   r->min_innovative, r->max_not_innovative);
        printf("\n  tau-robust lower bound from fully specified blocks: %zu\n", r->block_lower);
    }
    if (r->blocks > 1)
        printf("  %zu independent blocks (documents): the maximum over them\n", r->blocks);
    if (!r->generic_known)
        return;
    const ar_mask_generic *g = &r->generic;
    printf("  generic value for this mask at n = %zu: %zu = %s (%s); worst case ", r->n, g->value,
           g->formula, ar_generic_status_name(g->status));
    if (g->worst_lower == g->worst_upper)
        printf("%zu\n", g->worst_lower);
    else
        printf("between %zu and %zu\n", g->worst_lower, g->worst_upper);
}

static void print_certificate(const represent_args *a, const ar_certificate *c, ar_axis axis)
{
    printf("certificate: W_q, W_k are %zu x %zu; masked forward softmax reproduces P with "
           "max-abs error %.3g,\n  KL(P || softmax) mean %.3g, max %.3g over queries; logit "
           "error after the best shift %.3g\n",
           c->head_size, c->d, c->max_abs, c->kl_mean, c->kl_max, c->logit_max_abs);
    if (c->rounding_ratio > 0.0)
        printf("  largest error / the entry's rounding half-width: %.3g (<= 1: the certificate's "
               "map rounds to P)\n",
               c->rounding_ratio);
    printf("  layout: W_q is the query projection; %s\n",
           axis == AR_AXIS_ROW
               ? "rows as queries: S = (W_q X)^T (W_k X) / sqrt(k) (PyTorch's q and k blocks "
                 "of in_proj_weight)"
               : "columns as queries: S = (W_k X)^T (W_q X) / sqrt(k)");
    if (a->weights_out != NULL)
        printf("  wrote %s_wq.npy and %s_wk.npy\n", a->weights_out, a->weights_out);
}

static void print_outcome(const represent_args *a, const masked_outcome *o)
{
    print_mask_and_input(a, o);
    print_answer(o);
    const ar_masked_result *r = &o->run.masked_res;
    const ar_represent_run_result *run = &o->run;
    if (run->representable == 1) {
        printf("verdict: representable with head size %zu\n", run->head_size);
        print_certificate(a, &run->certificate, r->axis);
    } else if (run->representable == 0) {
        printf("verdict: NOT representable with head size %zu < %zu (proved lower bound)\n",
               run->head_size, r->lower);
        printf("  logit-space error of any head of size %zu >= %.4g (fully specified blocks)\n",
               run->head_size, run->logit_error_lower);
        if (run->have_fit) {
            const ar_fit_result *f = &run->fit;
            printf("  best probability-space fit found under the mask (%s, seed %llu, %zu "
                   "iterations%s):\n"
                   "    KL(P || P_hat) mean %.4g, max %.4g over queries; Frobenius %.4g; max-abs "
                   "%.4g\n"
                   "    (the start, the truncated SVD of log P filled off the mask by each "
                   "query's mean, gives KL mean %.4g)\n",
                   represent_fit_method(f), (unsigned long long)f->seed, f->iterations,
                   f->converged ? ", converged" : "", f->kl_mean, f->kl_max, f->fro_error,
                   f->max_abs_error, f->start_kl_mean);
        } else if (run->fit_skipped[0] != '\0') {
            printf("  probability-space fit skipped: %s\n", run->fit_skipped);
        }
    } else if (r->certified) {
        printf("verdict: undecided for head size %zu: at least the proved lower bound %zu, "
               "below the smallest confirmed certificate %zu\n",
               run->head_size, r->lower, r->upper);
    } else {
        printf("verdict: undecided for head size %zu: at least the proved lower bound %zu, and "
               "no certificate passed the forward check\n",
               run->head_size, r->lower);
    }
}

/* ---- the run ---- */

void represent_masked_opts(const represent_args *a, ar_precision prec, ar_axis axis,
                           ar_masked_opts *o)
{
    ar_masked_opts_init(o);
    o->axis = axis;
    o->precision = prec;
    if (a->tau_seen)
        o->tau = a->tau;
    if (a->accuracy_seen)
        o->accuracy = a->accuracy;
    if (a->sum_tol_seen)
        o->sum_tol = a->sum_tol;
    if (a->verify_seen)
        o->verify_seconds = a->verify_seconds;
    o->smooth = a->smooth;
    o->seed = a->seed;
    o->extra_rank = a->extra_rank;
}

int represent_masked(const represent_args *a, ar_cview p, ar_precision prec, const ar_cview *x,
                     ar_axis axis)
{
    ar_mask mask;
    int is_auto = 0;
    int code = cli_mask_from_text("represent", a->mask_text, axis, p.rows, 1, &mask, &is_auto);
    if (code >= 0)
        return code;
    masked_outcome o;
    memset(&o, 0, sizeof o);
    if (p.rows < 512)
        cli_set_blas_threads(1);
    ar_represent_run_opts ro;
    ar_represent_run_opts_init(&ro);
    represent_masked_opts(a, prec, axis, &ro.masked);
    ro.mask = &mask;
    ro.infer_mask = is_auto;
    represent_progress rp;
    represent_run_opts(a, &ro, &rp);
    code = represent_run_map(a, p, x, &ro, &o.run);
    ar_mask_free(&mask);
    const ar_represent_run_result *run = &o.run;
    if (code < 0) {
        ar_mask_format(run->masked_res.mask, o.mask_text, sizeof o.mask_text);
        if (a->json)
            code = represent_print_json(a, run);
        else {
            print_outcome(a, &o);
            if (run->biased)
                represent_print_bias(a, run);
            code = CLI_EXIT_OK;
        }
        if (code == CLI_EXIT_OK && run->representable != 1)
            code = CLI_EXIT_FAIL;
        if (run->representable != 1 && a->weights_out != NULL)
            fprintf(stderr, "attnrank represent: no weights written: no confirmed certificate of "
                            "head size %zu\n",
                    run->head_size);
    }
    ar_represent_run_result_free(&o.run);
    return code;
}
