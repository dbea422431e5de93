/* attnrank represent on a stack of maps (batch x heads x n x n from
 * output_attentions, or any leading axes): the minimal head size of every
 * slice, with its indices, and a summary. */
#include "represent.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct stack_state {
    const represent_args *a;
    const ar_array *arr;
    ar_axis axis;
} stack_state;

/* The per-slice options: the unmasked analysis's as run() resolved them,
 * the masked one's as for a single map. */
static void stack_opts(const represent_args *a, const ar_represent_opts *ro,
                       ar_represent_stack_opts *o)
{
    ar_represent_stack_opts_init(o);
    o->represent = *ro;
    represent_masked_opts(a, ro->precision, ro->axis, &o->masked);
    o->head_size_given = a->head_size_seen;
    o->head_size = a->head_size;
}

/* Progress on stderr for long stacks only (ctx: nonzero to show it). */
static void stack_progress(void *ctx, size_t done, size_t total)
{
    cli_progress(*(const int *)ctx, "slice %zu of %zu", done + 1, total);
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

static int emit(const stack_state *st, const ar_represent_stack_result *r)
{
    const ar_array *arr = st->arr;
    const ar_represent_stack_slice *s = r->slices;
    int fails = (int)r->failed;
    if (st->a->json) {
        /* the leading axes as stored: the record's slice indices */
        char *text = NULL;
        ar_error err = {{0}};
        int rc = ar_represent_stack_json(r, arr->shape, arr->ndim > 2 ? arr->ndim - 2 : 0, 0,
                                         &text, &err);
        int code = cli_json_print_sourced("represent", st->a->p_file, rc, text, &err);
        return code != CLI_EXIT_OK ? code : fails ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    }
    printf("P: %s, a stack of %zu maps of %zu x %zu (--axis %s)\n", st->a->p_file, arr->count,
           arr->rows, arr->cols, ar_axis_name(st->axis));
    for (size_t k = 0; k < arr->count; k++) {
        char idx[128];
        format_index(arr, k, idx, sizeof idx);
        if (s[k].exact)
            printf("  slice %s: mask %s%s: minimal head size %zu (exact)\n", idx, s[k].mask,
                   s[k].mask_inferred ? " (inferred)" : "", s[k].lower);
        else
            printf("  slice %s: mask %s%s: minimal head size between %zu and %s%zu\n", idx,
                   s[k].mask, s[k].mask_inferred ? " (inferred)" : "", s[k].lower,
                   s[k].certified ? "" : "(no certificate) ", s[k].upper);
    }
    printf("summary: %zu slices (%zu exact): largest minimal head size %zu, median %zu\n",
           arr->count, r->exact, r->max, r->median);
    if (st->a->head_size_seen)
        printf("verdict: %d of %zu slices not shown representable with head size %zu\n", fails,
               arr->count, st->a->head_size);
    return fails ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* The library's failure as today's message: a slice's is prefixed with the
 * file and the slice's multi-index, a workspace's has no context. */
static int stack_error(const stack_state *st, int rc, const ar_error *err, size_t failed)
{
    if (failed == SIZE_MAX)
        return cli_status_error("represent", rc, err, NULL);
    char idx[128], where[192];
    format_index(st->arr, failed, idx, sizeof idx);
    snprintf(where, sizeof where, "%s, slice %s", st->a->p_file, idx);
    return cli_status_error("represent", rc, err, where);
}

int represent_stack(const represent_args *a, const ar_array *arr, const ar_represent_opts *ro)
{
    ar_axis axis = ro->axis;
    if (a->weights_out != NULL || a->x_file != NULL)
        return cli_usage_error("represent", "%s: a stack of %zu maps: --weights-out and --X take "
                               "a single map",
                               a->p_file, arr->count);
    if (a->bias_text != NULL)
        return cli_usage_error("represent", "%s: a stack of %zu maps: --bias takes a single map",
                               a->p_file, arr->count);
    if (arr->rows != arr->cols || arr->rows == 0)
        return cli_usage_error("represent", "%s: maps must be square n x n, got %zu x %zu",
                               a->p_file, arr->rows, arr->cols);
    stack_state st = {a, arr, axis};
    ar_represent_stack_opts o;
    stack_opts(a, ro, &o);
    ar_mask mask = ar_mask_none();
    int is_auto = 0;
    int masked = a->mask_text != NULL && strcmp(a->mask_text, "none") != 0;
    int code = masked ? cli_mask_from_text("represent", a->mask_text, axis, arr->rows, 1, &mask,
                                           &is_auto)
                      : -1;
    if (code >= 0)
        return code;
    o.mask = masked ? &mask : NULL;
    o.infer_mask = masked && is_auto;
    ar_cview *maps = malloc(arr->count * sizeof *maps);
    for (size_t k = 0; maps != NULL && k < arr->count; k++)
        maps[k] = ar_array_slice(arr, k);
    if (arr->rows < 512)
        cli_set_blas_threads(1);
    int show = arr->count >= 8 && arr->rows >= 256;
    o.progress = stack_progress;
    o.progress_ctx = &show;
    ar_represent_stack_result r = {0};
    ar_error err = {{0}};
    int rc = maps == NULL ? AR_ENOMEM : ar_represent_stack_run(maps, arr->count, &o, &r, &err);
    if (rc != AR_OK)
        code = stack_error(&st, rc, &err, maps == NULL ? SIZE_MAX : r.failed_slice);
    else
        code = emit(&st, &r);
    ar_represent_stack_result_free(&r);
    free(maps);
    ar_mask_free(&mask);
    return code;
}
