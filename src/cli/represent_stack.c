/* attnrank represent on a stack of maps (batch x heads x n x n from
 * output_attentions, or any leading axes): the minimal head size of every
 * slice, with its indices, and a summary. */
#include "represent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct slice_answer {
    size_t lower, upper;   /* equal when exact */
    int exact, certified;
    char mask[64];
    int inferred;
} slice_answer;

typedef struct stack_state {
    const represent_args *a;
    const ar_array *arr;
    ar_axis axis;
    ar_precision prec;
    int masked, is_auto;
    ar_mask mask;
    ar_masked_workspace *mws;
    ar_represent_workspace *rws;
} stack_state;

static int analyse_masked(stack_state *st, ar_cview p, slice_answer *ans, ar_error *err)
{
    ar_masked_opts o;
    ar_masked_opts_init(&o);
    o.axis = st->axis;
    o.precision = st->prec;
    o.smooth = st->a->smooth;
    o.seed = st->a->seed;
    o.extra_rank = st->a->extra_rank;
    if (st->a->tau_seen)
        o.tau = st->a->tau;
    if (st->a->accuracy_seen)
        o.accuracy = st->a->accuracy;
    if (st->a->sum_tol_seen)
        o.sum_tol = st->a->sum_tol;
    if (st->a->verify_seen)
        o.verify_seconds = st->a->verify_seconds;
    ar_masked_result r;
    int rc = ar_masked_analyze(st->mws, p, NULL, st->is_auto ? NULL : &st->mask,
                               &o, &r, err);
    if (rc != AR_OK)
        return rc;
    ans->exact = r.exact;
    ans->certified = r.certified;
    ans->lower = r.lower;
    ans->upper = r.certified ? r.upper : r.n;
    ans->inferred = r.mask_inferred;
    ar_mask_format(r.mask, ans->mask, sizeof ans->mask);
    return AR_OK;
}

static int analyse_plain(stack_state *st, ar_cview p, slice_answer *ans, ar_error *err)
{
    ar_represent_opts o;
    ar_represent_opts_init(&o);
    o.axis = st->axis;
    o.precision = st->prec;
    o.smooth = st->a->smooth;
    o.atol = st->a->atol;
    if (st->a->rtol_seen)
        o.rtol = st->a->rtol;
    if (st->a->sum_tol_seen)
        o.sum_tol = st->a->sum_tol;
    ar_represent_result r;
    int rc = ar_represent_analyze(st->rws, p, NULL, &o, &r, err);
    if (rc != AR_OK)
        return rc;
    ans->exact = ans->certified = 1;
    ans->lower = ans->upper = r.min_head_size;
    snprintf(ans->mask, sizeof ans->mask, "none");
    return AR_OK;
}

static void format_index(const ar_array *arr, size_t k, char *buf, size_t len)
{
    size_t idx[AR_ARRAY_MAX_DIMS], used = 0, lead = arr->ndim > 2 ? arr->ndim - 2 : 0;
    ar_array_slice_index(arr, k, idx);
    buf[0] = '\0';
    for (size_t t = 0; t < lead && used < len; t++)
        used += (size_t)snprintf(buf + used, len - used, t ? ", %zu" : "(%zu", idx[t]);
    if (used < len)
        snprintf(buf + used, len - used, ")");
}

static int compare_size(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

static json_t *slice_json(const stack_state *st, size_t k, const slice_answer *s)
{
    size_t idx[AR_ARRAY_MAX_DIMS], lead = st->arr->ndim > 2 ? st->arr->ndim - 2 : 0;
    ar_array_slice_index(st->arr, k, idx);
    json_t *index = json_array();
    for (size_t t = 0; t < lead; t++)
        json_array_append_new(index, json_integer((json_int_t)idx[t]));
    json_t *o = json_pack("{s:o, s:s, s:s, s:s, s:I}", "index", index, "mask", s->mask,
                          "mask_source", s->inferred ? "inferred" : "given", "status",
                          s->exact ? "exact" : "bounds", "min_head_size_lower",
                          (json_int_t)s->lower);
    json_object_set_new(o, "min_head_size",
                        s->exact ? json_integer((json_int_t)s->lower) : json_null());
    json_object_set_new(o, "min_head_size_upper",
                        s->certified ? json_integer((json_int_t)s->upper) : json_null());
    if (st->a->head_size_seen)
        json_object_set_new(o, "representable",
                            s->certified && st->a->head_size >= s->upper ? json_true()
                            : st->a->head_size < s->lower                ? json_false()
                                                                         : json_null());
    return o;
}

/* Summary over the slices: the upper value of each (the exact one when
 * exact), its maximum and median. */
static json_t *summary(const slice_answer *s, size_t count, size_t *max, size_t *median,
                       size_t *exact)
{
    size_t *v = malloc(count * sizeof *v);
    *exact = 0;
    *max = 0;
    for (size_t k = 0; k < count; k++) {
        size_t u = s[k].exact ? s[k].lower : s[k].upper;
        if (v != NULL)
            v[k] = u;
        *max = u > *max ? u : *max;
        *exact += (size_t)s[k].exact;
    }
    if (v != NULL)
        qsort(v, count, sizeof *v, compare_size);
    *median = v != NULL ? v[(count - 1) / 2] : 0;
    free(v);
    return json_pack("{s:I, s:I, s:I, s:I}", "slices", (json_int_t)count, "exact",
                     (json_int_t)*exact, "max_min_head_size", (json_int_t)*max,
                     "median_min_head_size", (json_int_t)*median);
}

static int emit(const stack_state *st, const slice_answer *s)
{
    const ar_array *arr = st->arr;
    size_t max, median, exact;
    json_t *sum = summary(s, arr->count, &max, &median, &exact);
    int fails = 0;
    for (size_t k = 0; k < arr->count && st->a->head_size_seen; k++)
        fails += !(s[k].certified && st->a->head_size >= s[k].upper);
    if (st->a->json) {
        json_t *slices = json_array();
        for (size_t k = 0; k < arr->count; k++)
            json_array_append_new(slices, slice_json(st, k, &s[k]));
        int code = cli_json_print(json_pack("{s:s, s:I, s:s, s:o, s:o}", "source",
                                            st->a->p_file, "n", (json_int_t)arr->rows, "axis",
                                            ar_axis_name(st->axis), "slices", slices, "summary",
                                            sum));
        return code != CLI_EXIT_OK ? code : fails ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    }
    json_decref(sum);
    printf("P: %s, a stack of %zu maps of %zu x %zu (--axis %s)\n", st->a->p_file, arr->count,
           arr->rows, arr->cols, ar_axis_name(st->axis));
    for (size_t k = 0; k < arr->count; k++) {
        char idx[128];
        format_index(arr, k, idx, sizeof idx);
        if (s[k].exact)
            printf("  slice %s: mask %s%s: minimal head size %zu (exact)\n", idx, s[k].mask,
                   s[k].inferred ? " (inferred)" : "", s[k].lower);
        else
            printf("  slice %s: mask %s%s: minimal head size between %zu and %s%zu\n", idx,
                   s[k].mask, s[k].inferred ? " (inferred)" : "", s[k].lower,
                   s[k].certified ? "" : "(no certificate) ", s[k].upper);
    }
    printf("summary: %zu slices (%zu exact): largest minimal head size %zu, median %zu\n",
           arr->count, exact, max, median);
    if (st->a->head_size_seen)
        printf("verdict: %d of %zu slices not shown representable with head size %zu\n", fails,
               arr->count, st->a->head_size);
    return fails ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

int represent_stack(const represent_args *a, const ar_array *arr, ar_axis axis,
                    ar_precision prec)
{
    if (a->weights_out != NULL || a->x_file != NULL)
        return cli_usage_error("represent", "%s: a stack of %zu maps: --weights-out and --X take "
                               "a single map",
                               a->p_file, arr->count);
    if (arr->rows != arr->cols || arr->rows == 0)
        return cli_usage_error("represent", "%s: maps must be square n x n, got %zu x %zu",
                               a->p_file, arr->rows, arr->cols);
    stack_state st = {a, arr, axis, prec, 0, 0, ar_mask_none(), NULL, NULL};
    st.masked = a->mask_text != NULL && strcmp(a->mask_text, "none") != 0;
    int code = st.masked ? cli_mask_from_text("represent", a->mask_text, axis, arr->rows, 1,
                                              &st.mask, &st.is_auto)
                         : -1;
    if (code >= 0)
        return code;
    slice_answer *ans = calloc(arr->count, sizeof *ans);
    int rc = ans == NULL ? AR_ENOMEM
             : st.masked ? ar_masked_workspace_alloc(&st.mws, arr->rows)
                         : ar_represent_workspace_alloc(&st.rws, arr->rows);
    if (rc != AR_OK)
        code = cli_status_error("represent", rc, NULL, NULL);
    if (arr->rows < 512)
        cli_set_blas_threads(1);
    int progress = arr->count >= 8 && arr->rows >= 256;
    for (size_t k = 0; code < 0 && k < arr->count; k++) {
        ar_cview p = ar_array_slice(arr, k);
        ar_error err = {{0}};
        cli_progress(progress, "slice %zu of %zu", k + 1, arr->count);
        rc = st.masked ? analyse_masked(&st, p, &ans[k], &err)
                       : analyse_plain(&st, p, &ans[k], &err);
        if (rc != AR_OK) {
            char idx[128], where[192];
            format_index(arr, k, idx, sizeof idx);
            snprintf(where, sizeof where, "%s, slice %s", a->p_file, idx);
            code = cli_status_error("represent", rc, &err, where);
        }
    }
    if (code < 0)
        code = emit(&st, ans);
    free(ans);
    ar_mask_free(&st.mask);
    ar_masked_workspace_free(st.mws);
    ar_represent_workspace_free(st.rws);
    return code;
}
