/* Theorem conditions on a model configuration: the verdicts of
 * `attnrank check` (a CI gate) for one configuration, each with the reason it
 * holds or fails and the status of the value it rests on.
 *
 * Conditions (docs/cli.md, "attnrank check"):
 *   no-bottleneck            head size d_p >= the generic minimal head size
 *                            (n - 1 bidirectional, e.g. floor(n/2) causal;
 *                            docs/theory/masked-attention.md) and d >= n: one
 *                            head reaches every (generic) attention pattern.
 *                            Exact for full-column-rank inputs
 *                            (ar_bottleneck_heads_analyze).
 *   depth-efficient          layers <= the transition depth of the width under
 *                            the depth-width law (ar_dw_verdict_of).
 *   near-optimal-allocation  layers within the tolerance (15%) of the optimal
 *                            depth for the size c L d^2.
 * The allocation verdicts rest on an empirical law (the paper's fit, or the
 * caller's refit): their status is AR_CHECK_EMPIRICAL.  No file I/O here: a
 * model's config.json is read with ar_model_config_read (model_config.h), a
 * law refit with ar_dw_fit_table from points the caller read. */
#ifndef ATTNRANK_CHECK_H
#define ATTNRANK_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "status.h"
#include "mask.h"
#include "depthwidth.h"
#include "model_config.h"
#include "bias.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ar_check_condition {
    AR_CHECK_NO_BOTTLENECK = 0,
    AR_CHECK_DEPTH_EFFICIENT = 1,
    AR_CHECK_NEAR_OPTIMAL = 2,
    AR_CHECK_NCONDITIONS = 3
} ar_check_condition;

/* The bit of a condition in ar_check_opts.require. */
#define AR_CHECK_REQUIRE(cond) (1u << (unsigned)(cond))
#define AR_CHECK_REQUIRE_ALL ((1u << AR_CHECK_NCONDITIONS) - 1u)

/* What the value a verdict rests on is. */
typedef enum ar_check_status {
    AR_CHECK_PROVED = 0,      /* a theorem (the unmasked n - 1, staircase masks, a bottleneck's
                                 proved lower bound, d < n) */
    AR_CHECK_VERIFIED = 1,    /* the generic value checked over F_p for these sizes */
    AR_CHECK_CONJECTURAL = 2, /* only a lower bound is proved: the verdict may be wrong */
    AR_CHECK_EMPIRICAL = 3    /* a fitted depth-width law */
} ar_check_status;

/* "no-bottleneck", "depth-efficient", "near-optimal-allocation"; "unknown"
 * out of range. */
AR_API const char *ar_check_condition_name(ar_check_condition cond);
/* "proved", "verified", "conjectural", "empirical"; "unknown" out of range. */
AR_API const char *ar_check_status_name(ar_check_status status);
/* Add the conditions named in text ("a,b" or "a;b"; empty names are
 * skipped) to *require.  AR_EINVAL "unknown condition 'NAME'" on a name
 * that is none of the above (then *require is unchanged). */
AR_API int ar_check_require_parse(const char *text, unsigned *require, ar_error *err);

typedef struct ar_check_opts {
    unsigned require;      /* AR_CHECK_REQUIRE bits (default 0: none, refused) */
    size_t head_size;      /* 0 (default): d / heads, the standard MultiHead */
    size_t layers;         /* depth; 0 (default): not given (allocation conditions need it) */
    const ar_mask *mask;   /* NULL or none (default): bidirectional; a pattern mask is refused */
    const char *mask_text; /* the mask's name in the reasons; NULL: ar_mask_format's text */
    int strict;            /* 1: a verdict resting on a conjectural value fails (default 0) */
    const ar_dw_law *law;  /* NULL (default): the paper's depth-width law */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_check_opts;

/* Set *opts to the defaults listed above (NULL is ignored). */
AR_API void ar_check_opts_init(ar_check_opts *opts);

#define AR_CHECK_WHY_LEN 768
/* Largest d, heads, n and head size accepted (2^48). */
#define AR_CHECK_MAX_SIZE ((size_t)1 << 48)

typedef struct ar_check_verdict {
    ar_check_condition condition;
    int holds;
    ar_check_status status;     /* of the value the verdict rests on */
    char why[AR_CHECK_WHY_LEN]; /* the reason, one line (the CLI's "why") */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_check_verdict;

typedef struct ar_check_result {
    size_t d, heads, n, layers;  /* as given (0: not given) */
    size_t head_size;            /* used: given, or d / heads; 0 when neither is known */
    size_t count;                /* verdicts, in the order of ar_check_condition */
    ar_check_verdict verdicts[AR_CHECK_NCONDITIONS];
    size_t failed;               /* verdicts that do not hold */
    int uses_law;                /* an allocation condition was evaluated */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_check_result;

/* The verdict of one condition for width d, heads heads and sequence length
 * n (opts NULL: defaults; opts->require is not consulted).  Needs d >= 1;
 * no-bottleneck needs heads, n >= 1 and heads dividing d unless a head size
 * is given, and a mask valid at n; the allocation conditions need
 * opts->layers >= 1 (heads and n may be 0); no size above AR_CHECK_MAX_SIZE.
 * AR_EINVAL naming the problem;
 * a law the verdict cannot be computed under gives ar_dw_verdict_of's
 * status (AR_EINVAL, AR_EDOMAIN). */
AR_API int ar_check_verdict_of(ar_check_condition cond, size_t d, size_t heads, size_t n,
                               const ar_check_opts *opts, ar_check_verdict *out, ar_error *err);

/* Every condition of opts->require (at least one; opts must not be NULL),
 * in condition order.
 * Errors as ar_check_verdict_of, and AR_EINVAL for no condition or an
 * unknown bit; *out is complete only on AR_OK. */
AR_API int ar_check_evaluate(size_t d, size_t heads, size_t n, const ar_check_opts *opts,
                             ar_check_result *out, ar_error *err);

/* ---- a configuration with a model's config.json ---------------------- */

/* One layer kind a model is judged under. */
typedef struct ar_check_kind {
    ar_mask mask;        /* the kind's mask (parametric) */
    char mask_text[64];  /* its text (ar_mask_format), the mask the verdicts name */
    char suffix[128];    /* appended to the configuration's label: " [LABEL: MASK]" for the
                            config's kinds, "" for the caller's mask */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_check_kind;

typedef struct ar_check_model {
    size_t count;        /* kinds: 1 with the caller's mask, else the config's (1 or 2) */
    ar_check_kind kind[AR_MODEL_MAX_KINDS];
    ar_model_bias_report bias; /* the config's positional bias per kind at n and the head size
                                  (given, or d / heads): kind[k] of the report is kind k here;
                                  count 0 without a bias, or without heads and n */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_check_model;

/* The sizes a configuration did not give (each of *d, *heads, *n, *head_size
 * that is 0), from the config as ar_model_config_layer_sizes fills them, the
 * layer kinds it is judged under, and the config's positional bias per
 * kind.  mask NULL: one kind per layer kind of the config's masks
 * (windowed and global layers, encoder and decoder), each with the label
 * suffix " [LABEL: MASK]"; otherwise one kind under the caller's mask
 * (shared, not copied), without suffix or mask text (the caller's text
 * names it).  config_name names the config in messages (NULL:
 * "config.json").  AR_EINVAL "NAME: no KEY (or its aliases); give {opt:X}"
 * for a size the config lacks; the config's mask errors prefixed with its
 * name (AR_EUNSUPPORTED: an unknown family, give a mask); the bias
 * report's errors.  Free with ar_check_model_free (also after a failure). */
AR_API int ar_check_model_kinds(const ar_model_config *cfg, const char *config_name,
                                const ar_mask *mask, size_t *d, size_t *heads, size_t *n,
                                size_t *head_size, ar_check_model *out, ar_error *err);
AR_API void ar_check_model_free(ar_check_model *m);

/* ---- a run: configurations judged against one law -------------------- */

/* The workflow `attnrank check` and `attnrank.check` share: each
 * configuration (its sizes, or a model's config.json with one entry per
 * layer kind), its mask read where no-bottleneck needs it, its verdicts,
 * its positional bias, and the count of failures over all of them.  The
 * record is written as JSON by ar_check_run_json (json.h); the faces read
 * their inputs (a CSV, a list), label the configurations and print. */

#define AR_CHECK_LABEL_LEN 256
#define AR_CHECK_MASK_LEN 128

/* One configuration as the caller gave it. */
typedef struct ar_check_config {
    const char *label;     /* its name in the record and in messages; NULL or "": the
                              config's path (its first 250 bytes), else the sizes and mask
                              given, "d=768, heads=12, n=512, mask=causal, layers=12" */
    size_t d, heads, n, head_size, layers; /* 0: not given (with a config: read from it) */
    unsigned require;      /* AR_CHECK_REQUIRE bits (0 is refused) */
    const char *mask;      /* the mask as written (NULL or "": bidirectional, or the config's
                              layer kinds); parsed only when no-bottleneck is required, so a
                              mask the allocation conditions ignore is kept as written */
    const char *config;    /* a model's config.json path (NULL or "": none) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_check_config;

typedef struct ar_check_run_opts {
    int strict;            /* a verdict resting on a conjectural value fails (default 0) */
    ar_dw_law law;         /* of the allocation conditions (default the paper's) */
    const char *law_source;/* "paper" (default), "given", "fit" or a law file; borrowed */
    const ar_dw_fit *fit;  /* the refit the law came from (NULL, default: none); copied */
    ar_option_style style; /* the spelling of options in the reasons (default the CLI's) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_check_run_opts;

/* Set *opts to the defaults listed above (NULL is ignored). */
AR_API void ar_check_run_opts_init(ar_check_run_opts *opts);

/* One configuration, or one layer kind of a model's. */
typedef struct ar_check_entry {
    char label[AR_CHECK_LABEL_LEN]; /* the caller's, with " [LABEL: MASK]" per config kind */
    char mask[AR_CHECK_MASK_LEN];   /* the mask judged, as written; "none" without one */
    ar_check_result result;
    const ar_model_bias_report *bias; /* the config's positional bias (NULL: none); this
                                         entry's kind is bias->kind[bias_kind] */
    size_t bias_kind;
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_check_entry;

typedef struct ar_check_held ar_check_held; /* a config's kinds and mask (internal) */

typedef struct ar_check_run {
    ar_check_run_opts opts;  /* as given; opts.fit points at fit below */
    int have_fit;
    ar_dw_fit fit;
    size_t count;            /* entries */
    ar_check_entry *entry;
    size_t failed;           /* verdicts that do not hold, over every entry */
    int uses_law;            /* an allocation condition was evaluated */
    size_t nheld, cap, heldcap;
    ar_check_held **held;
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_check_run;

/* An empty run under opts (NULL: defaults).  Free with ar_check_run_free. */
AR_API void ar_check_run_init(ar_check_run *run, const ar_check_run_opts *opts);
/* Judge one configuration and append its entries (one, or one per layer
 * kind of its config).  err's message is whole, for the face to print as
 * it is: "LABEL: ..." for the configuration's faults (no condition, a size
 * a condition needs, a law no verdict exists under, an unreadable config),
 * the config's own message for its sizes and masks, "{opt:mask}: ..." for
 * a mask that does not parse or fit n.  On failure the run keeps the
 * entries added before. */
AR_API int ar_check_run_add(ar_check_run *run, const ar_check_config *c, ar_error *err);
/* Judge every configuration of a CSV file into run: a header naming the
 * columns (any order, any subset with d or config; a "--d" spelling is the
 * same column) d, heads, n, head-size, layers, require (conditions
 * separated by ';'), name, mask, config (a config.json path, relative to
 * the CSV's folder unless absolute); then one configuration per row (blank
 * and '#' lines skipped; lines of at most 1022 characters, at most 16
 * fields).  A row's empty cell is not given; an empty require or mask cell
 * takes defaults' (NULL: none); its label is the name, else "PATH line N
 * (d=.., heads=.., n=..)" or "PATH line N (CONFIG)".  Counts read as
 * ar_count_parse reads them.  Stops at the first error: AR_EIO when the
 * file cannot be read, AR_EFORMAT naming the line for a malformed header
 * or row (and for a file without rows), AR_EINVAL for an unknown
 * condition, and the error of ar_check_run_add for a row it refuses.
 * *rows (may be NULL): the configuration rows read, the failing one
 * included. */
AR_API int ar_check_run_add_csv(ar_check_run *run, const char *path,
                                const ar_check_config *defaults, size_t *rows, ar_error *err);
AR_API void ar_check_run_free(ar_check_run *run);

#ifdef __cplusplus
}
#endif

#endif
