/* represent on a stack of maps: each slice through the unmasked or the
 * masked analysis, its verdict for a tested head size, and the summary the
 * faces print (attnrank/represent_stack.h). */
#include "attnrank/represent_stack.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ar_represent_stack_opts_init(ar_represent_stack_opts *opts)
{
    if (opts == NULL)
        return;
    memset(opts, 0, sizeof *opts);
    ar_represent_opts_init(&opts->represent);
    ar_masked_opts_init(&opts->masked);
}

/* Both analyses' workspaces are sized by n; only the one in use is held. */
typedef struct stack_ws {
    int masked;
    const ar_mask *mask; /* NULL with masked: inferred per slice */
    ar_masked_workspace *mws;
    ar_represent_workspace *rws;
} stack_ws;

static int analyse_masked(const stack_ws *w, const ar_represent_stack_opts *o, ar_cview p,
                          ar_represent_stack_slice *s, ar_error *err)
{
    ar_masked_result r;
    int rc = ar_masked_analyze(w->mws, p, NULL, w->mask, &o->masked, &r, err);
    if (rc != AR_OK)
        return rc;
    s->exact = r.exact;
    s->certified = r.certified;
    s->lower = r.lower;
    /* Without a certificate the only upper bound is n itself. */
    s->upper = r.certified ? r.upper : r.n;
    s->mask_inferred = r.mask_inferred;
    ar_mask_format(r.mask, s->mask, sizeof s->mask);
    return AR_OK;
}

static int analyse_plain(const stack_ws *w, const ar_represent_stack_opts *o, ar_cview p,
                         ar_represent_stack_slice *s, ar_error *err)
{
    ar_represent_result r;
    int rc = ar_represent_analyze(w->rws, p, NULL, &o->represent, &r, err);
    if (rc != AR_OK)
        return rc;
    s->exact = s->certified = 1;
    s->lower = s->upper = r.min_head_size;
    s->mask_inferred = 0;
    snprintf(s->mask, sizeof s->mask, "none");
    return AR_OK;
}

/* The tested head size against the bounds: certified and large enough is
 * representable, below the lower bound is not, in between unknown. */
static int verdict(const ar_represent_stack_opts *o, const ar_represent_stack_slice *s)
{
    if (!o->head_size_given)
        return -1;
    if (s->certified && o->head_size >= s->upper)
        return 1;
    return o->head_size < s->lower ? 0 : -1;
}

static int compare_size(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

/* Summary over the slices: the value of each (lower when exact, else the
 * upper bound), its maximum and (lower) median, the exact and failed
 * counts. */
static int summarise(ar_represent_stack_result *out, const ar_represent_stack_opts *o)
{
    size_t *v = malloc(out->count * sizeof *v);
    if (v == NULL)
        return AR_ENOMEM;
    for (size_t k = 0; k < out->count; k++) {
        const ar_represent_stack_slice *s = &out->slices[k];
        v[k] = s->exact ? s->lower : s->upper;
        out->max = v[k] > out->max ? v[k] : out->max;
        out->exact += (size_t)s->exact;
        out->failed += (size_t)(o->head_size_given && s->representable != 1);
    }
    qsort(v, out->count, sizeof *v, compare_size);
    out->median = v[(out->count - 1) / 2];
    free(v);
    return AR_OK;
}

static int run_slices(const ar_cview *maps, const stack_ws *w,
                      const ar_represent_stack_opts *o, ar_represent_stack_result *out,
                      ar_error *err)
{
    for (size_t k = 0; k < out->count; k++) {
        if (o->progress != NULL)
            o->progress(o->progress_ctx, k, out->count);
        ar_represent_stack_slice *s = &out->slices[k];
        int rc = w->masked ? analyse_masked(w, o, maps[k], s, err)
                           : analyse_plain(w, o, maps[k], s, err);
        if (rc != AR_OK) {
            out->failed_slice = k;
            return rc;
        }
        s->representable = verdict(o, s);
    }
    return AR_OK;
}

int ar_represent_stack_run(const ar_cview *maps, size_t count,
                           const ar_represent_stack_opts *opts,
                           ar_represent_stack_result *out, ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "represent stack: NULL result");
    memset(out, 0, sizeof *out);
    out->failed_slice = SIZE_MAX;
    if (maps == NULL || opts == NULL)
        return ar_error_set(err, AR_EINVAL, "represent stack: NULL maps or options");
    if (count == 0)
        return ar_error_set(err, AR_EINVAL, "represent stack: no maps");
    stack_ws w = {opts->mask != NULL || opts->infer_mask,
                  opts->infer_mask ? NULL : opts->mask, NULL, NULL};
    /* Sized by the first slice's key count; a slice of another shape is
     * refused by its own analysis, which names the shapes. */
    size_t n = maps[0].cols;
    out->slices = calloc(count, sizeof *out->slices);
    int rc = out->slices == NULL ? AR_ENOMEM
             : w.masked          ? ar_masked_workspace_alloc(&w.mws, n, err)
                                 : ar_represent_workspace_alloc(&w.rws, n, err);
    if (rc == AR_OK) {
        out->count = count;
        out->n = n;
        out->axis = w.masked ? opts->masked.axis : opts->represent.axis;
        out->head_size_given = opts->head_size_given;
        out->head_size = opts->head_size;
        rc = run_slices(maps, &w, opts, out, err);
    }
    if (rc == AR_OK)
        rc = summarise(out, opts);
    ar_masked_workspace_free(w.mws);
    ar_represent_workspace_free(w.rws);
    if (rc != AR_OK) {
        size_t failed = out->failed_slice;
        ar_represent_stack_result_free(out);
        out->failed_slice = failed;
    }
    return rc;
}

void ar_represent_stack_result_free(ar_represent_stack_result *out)
{
    if (out == NULL)
        return;
    free(out->slices);
    memset(out, 0, sizeof *out);
    out->failed_slice = SIZE_MAX;
}
