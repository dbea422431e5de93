/* heads: the head-size bound of one attention layer, or of every layer
 * kind of a model's config.json (docs/theory/low-rank-bottleneck.md,
 * docs/theory/masked-attention.md, docs/theory/positional-bias.md).
 *
 * The workflow the CLI (`attnrank heads`) and the Python face
 * (`attnrank.heads`) share: the sizes from the caller or the config, their
 * limits, the masks (the caller's, the config's layer kinds, or none), one
 * ar_bottleneck_heads_analyze per kind with the error estimates where they
 * apply, and the config's positional bias per kind.  The faces parse their
 * arguments and format the result. */
#ifndef ATTNRANK_HEADS_RUN_H
#define ATTNRANK_HEADS_RUN_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "status.h"
#include "bias.h"
#include "bottleneck.h"
#include "mask.h"
#include "model_config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ar_heads_run_opts {
    size_t d, heads, n;    /* 0: not given (from the config; required without one) */
    size_t head_size;      /* FixedMultiHead head size; 0: the config's head_dim where it
                              departs from d / heads, else the paper's d_p = n */
    const ar_mask *mask;   /* NULL: the config's layer kinds, or bidirectional without a config;
                              else one kind with this mask (not modified) */
    const ar_model_config *config; /* NULL: none */
    const char *config_name;       /* the config's name in messages (NULL: "config.json") */
    size_t samples;        /* targets per family for the error estimates (default 2; 0: none) */
    uint64_t seed;         /* base seed (default 0) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_heads_run_opts;

/* The defaults above. */
AR_API void ar_heads_run_opts_init(ar_heads_run_opts *opts);

typedef struct ar_heads_run {
    size_t d, heads, n;    /* as analysed */
    size_t head_size;      /* the FixedMultiHead size given or read (0: the paper's n) */
    int from_config;       /* a config was given */
    ar_model_masks masks;  /* the kinds analysed (the caller's mask is shared, not copied),
                              with the reason: "{opt:mask}", "no mask given" or the config's */
    ar_bottleneck_heads_report kind[AR_MODEL_MAX_KINDS]; /* masks.count reports */
    int with_errors[AR_MODEL_MAX_KINDS]; /* the error estimates ran (samples > 0, no mask) */
    ar_model_bias_report bias; /* with a config: its positional bias per kind at n and the
                                  model's head size (count 0 without a bias) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_heads_run;

/* Run heads.  AR_EINVAL (err naming the size) for a size missing without a
 * config, missing from the config, or above AR_HEADS_MAX_SIZE (bottleneck.h), or heads not
 * dividing d without a head size; ar_mask_check_size's code for a mask that
 * does not fit n (AR_ESIZE: documents summing to another length); the
 * config's mask errors (AR_EUNSUPPORTED for an unknown family: give a
 * mask); the analyses' errors.  Free with ar_heads_run_free (also after a
 * failure). */
AR_API int ar_heads_run_analyze(const ar_heads_run_opts *opts, ar_heads_run *out, ar_error *err);
AR_API void ar_heads_run_free(ar_heads_run *r);

#ifdef __cplusplus
}
#endif

#endif
