/* represent on a stack of maps (batch x heads x n x n from
 * output_attentions, or any leading axes): the minimal head size of every
 * slice, the verdict for a tested head size, and a summary over the slices.
 *
 * The loop the CLI (`attnrank represent` on a stack) and the Python face
 * (`attnrank.represent` on a stack) share: each slice goes through
 * ar_represent_analyze (unmasked) or ar_masked_analyze (masked, the mask
 * given or inferred per slice), one workspace for all slices.  The faces
 * keep their text of the slice indices and the formatting; the record
 * is ar_represent_stack_json (json.h). */
#ifndef ATTNRANK_REPRESENT_STACK_H
#define ATTNRANK_REPRESENT_STACK_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "status.h"
#include "matrix.h"
#include "bottleneck.h"
#include "mask.h"
#include "masked.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Progress: called before each slice with the slices done so far. */
typedef void (*ar_represent_stack_progress_fn)(void *ctx, size_t done, size_t total);

typedef struct ar_represent_stack_opts {
    ar_represent_opts represent; /* the unmasked analysis of each slice */
    ar_masked_opts masked;       /* the masked analysis of each slice */
    const ar_mask *mask;         /* NULL: unmasked (uses represent); else the mask of every
                                    slice (uses masked); not modified */
    int infer_mask;              /* nonzero: masked, each slice's mask inferred from its
                                    zeros (ar_masked_analyze with mask NULL); mask ignored */
    int head_size_given;         /* nonzero: test head_size on every slice (0 is a size) */
    size_t head_size;            /* the tested head size */
    ar_represent_stack_progress_fn progress; /* NULL: none */
    void *progress_ctx;                      /* passed to progress */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_represent_stack_opts;

/* Defaults: both analyses' defaults (ar_represent_opts_init,
 * ar_masked_opts_init), unmasked, no head size, no progress. */
AR_API void ar_represent_stack_opts_init(ar_represent_stack_opts *opts);

typedef struct ar_represent_stack_slice {
    size_t lower, upper; /* the minimal head size's bounds; equal when exact; upper is n
                            when not certified */
    int exact, certified;
    char mask[64];       /* ar_mask_format of the slice's mask; "none" unmasked */
    int mask_inferred;   /* 1: inferred from the slice's zeros */
    int representable;   /* with a head size: 1 certified and head_size >= upper, 0
                            head_size < lower, -1 unknown (also without a head size) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_represent_stack_slice;

typedef struct ar_represent_stack_result {
    size_t count;                     /* slices */
    ar_represent_stack_slice *slices; /* count answers, owned */
    size_t exact;                     /* slices whose size is exact */
    size_t max;                       /* largest per-slice value (lower when exact, else upper) */
    size_t median;                    /* sorted values[(count - 1) / 2] */
    size_t failed;                    /* with a head size: slices not shown representable
                                         (representable != 1); 0 without */
    size_t failed_slice;              /* on a slice's failure its index k, else SIZE_MAX */
    /* what the run used, for the record (ar_represent_stack_json) */
    size_t n;                         /* each slice is n x n (the first slice's columns) */
    ar_axis axis;                     /* the analyses' axis */
    int head_size_given;              /* a head size was tested: each slice has a verdict */
    size_t head_size;
    uint64_t reserved[5]; /* room to grow: zero (docs/api.md) */
} ar_represent_stack_result;

/* Run every slice maps[0..count-1] (square n x n, all the same n) and
 * summarise.  On success out owns the slices (ar_represent_stack_result_free).
 * On a slice's failure returns its status with err holding that analysis's
 * message unchanged and out->failed_slice = k (the face prefixes its own
 * name of slice k); out holds no slices then.  The workspaces are sized by
 * the first slice's column count: a slice of another shape fails in its own
 * analysis, which names the shapes.  AR_EINVAL for NULL maps, opts or out,
 * count 0, or an empty first slice; AR_ENOMEM when a workspace cannot be
 * allocated (failed_slice SIZE_MAX for these). */
AR_API int ar_represent_stack_run(const ar_cview *maps, size_t count,
                                  const ar_represent_stack_opts *opts,
                                  ar_represent_stack_result *out, ar_error *err);

/* Free the slices of out (NULL or a failed result is fine) and clear it. */
AR_API void ar_represent_stack_result_free(ar_represent_stack_result *out);

#ifdef __cplusplus
}
#endif

#endif
