/* Attention masks: which keys each query may attend to.
 *
 * A mask is a set M of allowed (query, key) pairs of an n-token sequence.
 * The kinds below are the masks of today's models; an arbitrary pattern
 * (AR_MASK_PATTERN) covers the rest.  Queries and keys are token positions
 * 0..n-1 whatever the matrix layout:
 *   none       every pair (bidirectional, encoders);
 *   causal     key <= query (decoders);
 *   window W   query - W < key <= query: W keys including the query's own;
 *   band W     |query - key| < W (bidirectional local attention);
 *   prefix P   key < P, or key <= query (prefix-LM);
 *   sink S + window W   key < S, or query - W < key <= query;
 *   dilated W/D  key <= query, query - key < W D and a multiple of D: W
 *              keys D apart including the query's own (Longformer's
 *              dilated sliding window; D = 1 is window W);
 *   documents  causal inside each of consecutive documents of the given
 *              lengths (summing to n), nothing across documents;
 *   pattern    an explicit n x n boolean matrix.
 * A matrix stores the pattern in the caller's convention: rows as queries
 * (PyTorch, AR_AXIS_ROW: a causal map is lower triangular) or columns as
 * queries (the paper, AR_AXIS_COL: a causal map is upper triangular).
 * Textual syntax (no commas, so it fits CSV cells): none, causal, window:W,
 * band:W, prefix:P, sink:S+window:W, sink:S+causal (= causal),
 * dilated:W/D, docs:N1/N2/...; "auto" and "file:PATH" are resolved by the caller
 * (ar_mask_infer, and a pattern read from a file). */
#ifndef ATTNRANK_MASK_H
#define ATTNRANK_MASK_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "matrix.h"
#include "status.h"
#include "attention.h"
#include "model_config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ar_mask_kind {
    AR_MASK_NONE = 0,
    AR_MASK_CAUSAL,
    AR_MASK_WINDOW,
    AR_MASK_BAND,
    AR_MASK_PREFIX,
    AR_MASK_SINK_WINDOW,
    AR_MASK_DOCUMENTS,
    AR_MASK_PATTERN,
    AR_MASK_DILATED,      /* appended: the values above stay */
    AR_MASK_NKINDS
} ar_mask_kind;

typedef struct ar_mask {
    ar_mask_kind kind;
    size_t w;             /* window / band width (>= 1) */
    size_t p;             /* prefix length (>= 1) */
    size_t sinks;         /* sink keys (>= 1) */
    size_t ndocs;         /* documents: count and lengths (owned) */
    size_t *lengths;
    size_t n;             /* pattern: size; 0 for the parametric kinds */
    unsigned char *allowed; /* pattern: n * n, allowed[query * n + key] (owned) */
    size_t d;             /* dilation (>= 1): keys D apart */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_mask;

/* The bidirectional mask (kind none, nothing owned). */
AR_API ar_mask ar_mask_none(void);
/* Release what the mask owns and reset it to none.  NULL is fine. */
AR_API void ar_mask_free(ar_mask *mask);
/* dst = an independent copy of src (dst is overwritten, not freed).
 * err: may be NULL; filled on failure. */
AR_API int ar_mask_copy(ar_mask *dst, const ar_mask *src, ar_error *err);

/* JSON name of a kind: none, causal, window, band, prefix, sink_window,
 * dilated, documents, file (a pattern). */
AR_API const char *ar_mask_kind_name(ar_mask_kind kind);
/* The textual syntaxes of the kinds, from the kind table in table order
 * joined by ", ": "none, causal, window:W, ..., docs:N1/N2/...".  With
 * any_length_only the kinds that fix n (documents) are left out.  "auto"
 * and "file:PATH" are not kinds and are not listed.  Truncated to len - 1
 * characters (256 always suffice today). */
AR_API void ar_mask_syntax_list(char *buf, size_t len, int any_length_only);
/* 1 when the mask fixes the sequence length (documents, a pattern). */
AR_API int ar_mask_fixes_length(const ar_mask *mask);

/* A parameter of a mask's kind as the faces report it (the JSON keys):
 * a count (values NULL) or a list (documents' lengths: values[0..count)). */
#define AR_MASK_MAX_PARAMS 4
typedef struct ar_mask_param {
    const char *name;      /* "w", "p", "sinks", "d", "lengths" */
    size_t value;          /* a count; 0 for a list */
    const size_t *values;  /* a list (borrowed from the mask), or NULL */
    size_t count;          /* entries of values */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_mask_param;
/* Fill params (room for AR_MASK_MAX_PARAMS) with the parameters of the
 * mask's kind in their reporting order; returns how many (0 for none,
 * causal and a pattern). */
AR_API size_t ar_mask_params(const ar_mask *mask, ar_mask_param *params);

/* Parse the textual syntax above.  AR_EINVAL with a message naming the
 * offending part ("auto" and "file:" are refused here: the caller resolves
 * them). */
AR_API int ar_mask_parse(const char *text, ar_mask *mask, ar_error *err);
/* What a mask's text names (ar_mask_from_text). */
typedef enum ar_mask_text_kind {
    AR_MASK_TEXT_NAMED = 0, /* a kind of the syntax above, parsed */
    AR_MASK_TEXT_AUTO = 1,  /* "auto": to infer from a map's exact zeros (ar_mask_infer) */
    AR_MASK_TEXT_FILE = 2   /* "file:PATH": a 0/1 pattern the caller reads from PATH (text
                               + 5; ar_mask_from_matrix) */
} ar_mask_text_kind;

/* A mask as an option gives it: text is a kind of the syntax (parsed, and
 * checked at size n when n > 0), or, when for_map (the text is about an
 * attention map), "auto" or "file:PATH", which *kind names and the caller
 * resolves (*mask stays none).  The refusals name the option as a token
 * (status.h): "{opt:mask=auto} needs an attention map; here give a kind
 * (...)" without for_map, "{opt:mask=file:} needs a path (file:PATH)",
 * "{opt:mask}: " + ar_mask_parse's message, "{opt:mask=TEXT}: " +
 * ar_mask_check_size's.  kind may be NULL. */
AR_API int ar_mask_from_text(const char *text, size_t n, int for_map, ar_mask *mask,
                             ar_mask_text_kind *kind, ar_error *err);
/* Canonical text of a mask ("window:16", "docs:3/5", "file" for a pattern);
 * truncated to len - 1 characters. */
AR_API void ar_mask_format(const ar_mask *mask, char *buf, size_t len);

/* AR_OK when the mask can be used at sequence length n: documents must sum
 * to n, a pattern must be n x n; n >= 1.  AR_ESIZE / AR_EINVAL otherwise. */
AR_API int ar_mask_check_size(const ar_mask *mask, size_t n, ar_error *err);
/* 1 when query may attend to key (both < n; the mask fits n). */
AR_API int ar_mask_allows(const ar_mask *mask, size_t n, size_t query, size_t key);
/* Fill allowed[query * n + key] (n * n bytes) with 0/1. */
AR_API int ar_mask_fill_pattern(const ar_mask *mask, size_t n, unsigned char *allowed,
                                ar_error *err);
/* A pattern mask owning a copy of allowed (n * n, query-major).  Refuses a
 * query with no allowed key (AR_EDOMAIN, naming it). */
AR_API int ar_mask_from_pattern(ar_mask *mask, const unsigned char *allowed, size_t n,
                                ar_error *err);
/* The pattern mask of a 0/1 matrix m in the layout of axis (row axis:
 * m[i][j] = 1 lets query i attend key j; column axis: key i, query j), as
 * a mask file or array holds it, then named by its kind when it has one
 * (ar_mask_simplify).  m must be n x n, n >= 1 (AR_ESIZE: "expected one n
 * x n matrix (the map's shape), got r x c"); an entry other than 0 or 1 is
 * AR_EINVAL naming it; a query with no key AR_EDOMAIN (ar_mask_from_pattern). */
AR_API int ar_mask_from_matrix(ar_cview m, ar_axis axis, size_t n, ar_mask *mask,
                               ar_error *err);
/* Replace a pattern mask by the parametric kind it equals, when one does
 * (so an inferred causal map says "causal", not "file"); otherwise leave it.
 * Checks none, causal, window, band, prefix, sink + window, documents. */
AR_API void ar_mask_simplify(ar_mask *mask);

/* The mask of a map from its exact zero pattern: allowed = positive
 * entries, simplified to a named kind when it equals one.  p is n x n (any
 * memory layout) with queries along axis (rows for AR_AXIS_ROW).  Refuses negative or
 * non-finite entries and queries with no positive entry (padding: the count
 * and the first such query are named).  A pattern that is no named kind is
 * compared with the named kind that best explains its zeros (every kind
 * holding all positive entries, scored by the likelihood of its zeros as
 * holes less a cost per parameter; docs/theory/masked-attention.md, "Zeros:
 * a mask or underflow").  Its zeros inside that kind are refused
 * (AR_EDOMAIN) as underflow when at least half of them lie in queries that
 * also hold entries below the smallest normal number of the storage type
 * (float16 when every entry is a float16 number, float32 likewise, else
 * float64), or as holes when they are at most a tenth of the kind; the
 * message names the kind, the count, the first zero (row, column) and says
 * to state the mask and smooth, or to pass the pattern explicitly.  Other
 * patterns stay AR_MASK_PATTERN (an irregular mask).  ar_masked_analyze
 * infers with its precision as the storage type (the coarser of it and the
 * values' own). */
AR_API int ar_mask_infer(ar_cview p, ar_axis axis, ar_mask *mask, ar_error *err);

/* Check a map (n x n, any memory layout, queries along axis) against a
 * mask (AR_EINVAL for an invalid view): every allowed entry positive (a zero inside
 * the mask is named with row, column and value, with the hint that float16
 * probabilities underflow and --smooth helps), every other entry exactly 0
 * (a positive entry outside is named), no negative or non-finite entry, no
 * query without an allowed key. */
AR_API int ar_mask_check_map(ar_cview p, ar_axis axis, const ar_mask *mask, ar_error *err);

/* The map a head produces under the mask: P_ij = exp(S_ij) / sum over the
 * allowed keys of query i, 0 outside the mask.  s: n x n row-query logits
 * (query i = row i); p (n x n, caller-sized, not overlapping s) receives P
 * with queries along axis (the transpose for AR_AXIS_COL); any memory
 * layout for both.  AR_EINVAL for an invalid view, AR_EDOMAIN when a query
 * has no allowed key, AR_ENONFINITE on a non-finite allowed logit.
 * err: may be NULL; filled on failure. */
AR_API int ar_mask_softmax(ar_cview s, const ar_mask *mask, ar_axis axis, ar_view p, ar_error *err);

/* ------------------------------------------------------------------ */
/* Generic thresholds: the minimal head size of a generic map under a    */
/* mask, as a function of (mask, n), for models without a matrix.        */
/* ------------------------------------------------------------------ */

typedef enum ar_generic_status {
    AR_GENERIC_PROVED = 0,     /* a theorem (staircase masks, band lower = upper) */
    AR_GENERIC_VERIFIED = 1,   /* the upper-bound recursion ran over F_p for these sizes
                                  with no singular system: exact for generic maps */
    AR_GENERIC_CONJECTURAL = 2 /* only the lower bound is proved here */
} ar_generic_status;

AR_API const char *ar_generic_status_name(ar_generic_status status);

typedef struct ar_mask_generic {
    size_t n;
    size_t value;              /* generic minimal head size (full-column-rank input) */
    ar_generic_status status;
    size_t lower;              /* proved lower bound for generic maps (= value unless
                                  conjectural) */
    size_t worst_lower;        /* the largest minimal head size over all maps: bounds */
    size_t worst_upper;        /* (equal when known exactly, e.g. n - 1 for causal) */
    const char *formula;       /* e.g. "floor(n/2)", "floor(min(n, w)/2)" */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_mask_generic;

/* The generic minimal head size of the mask at length n, with the status
 * given by theory alone: staircase masks (none, causal, prefix, documents)
 * are proved; windows, bands and sink + window are proved when n <= w
 * (causal or unmasked there) and otherwise rest on a proved lower bound
 * (value = lower, status conjectural) until ar_mask_generic_verify runs the
 * upper-bound recursion over F_p for this n.  A pattern: AR_EUNSUPPORTED. */
AR_API int ar_mask_generic_value(const ar_mask *mask, size_t n, ar_mask_generic *out,
                                 ar_error *err);

/* Raise g (from ar_mask_generic at length n) from conjectural to verified
 * by running the upper-bound recursion over F_p on random data at rank
 * g->value, when its estimated time is within seconds (0: never): verified
 * only when no system was singular, a proof for generic maps of this n.
 * Unaffordable runs (above the time, or memory malloc cannot provide: the
 * run is refused before FLINT, which aborts on a failed allocation) and
 * failed runs leave g conjectural.  Implemented by the masked analysis,
 * which owns the recursion (the mask module calls no analysis). */
AR_API int ar_mask_generic_verify(const ar_mask *mask, size_t n, uint64_t seed, double seconds,
                                  ar_mask_generic *g, ar_error *err);

/* The longest n at which a head of size head_size represents every generic
 * map under the mask.  *unbounded = 1 when every n fits (a window or band
 * whose generic value never exceeds head_size); else *n_max is that n.
 * *status is the status of the generic value the answer rests on.
 * Documents and patterns have a fixed n: AR_EUNSUPPORTED. */
AR_API int ar_mask_longest_context(const ar_mask *mask, size_t head_size, size_t *n_max,
                                   int *unbounded, ar_generic_status *status, ar_error *err);

/* ------------------------------------------------------------------ */
/* The masks of a model family                                          */
/* ------------------------------------------------------------------ */

#define AR_MODEL_MAX_KINDS 2
/* One kind of layer of a model (named, so that bindings can declare it). */
typedef struct ar_model_mask_kind {
    ar_mask mask;                 /* parametric: nothing to free */
    size_t layers;                /* layers of this kind; 0 when the config does not say */
    char label[40];               /* "all layers", "windowed layers", "global layers", ... */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_model_mask_kind;

typedef struct ar_model_masks {
    size_t count;                 /* layer kinds: 1, or 2 (alternating, encoder-decoder) */
    ar_model_mask_kind kind[AR_MODEL_MAX_KINDS];
    char reason[320];             /* which keys decided, e.g. "model_type mistral: causal with
                                     sliding_window 4096" */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_model_masks;

/* The self-attention masks a config implies: bidirectional for encoders
 * (BERT, RoBERTa, DeBERTa, ELECTRA, ...), causal for decoders (GPT-2,
 * GPT-J, GPT-NeoX, LLaMA, Mistral, Qwen2, Gemma, Phi, Falcon, OPT, ...), a
 * window where sliding_window is set and not disabled by
 * use_sliding_window: false, Gemma-2/3's alternating windowed and global
 * layers, both kinds for encoder-decoders.  Decided by is_encoder_decoder,
 * is_decoder, model_type and architectures[0], in that order; an unknown
 * family is AR_EUNSUPPORTED with a message asking for the mask. */
AR_API int ar_model_masks_from_config(const ar_model_config *cfg, ar_model_masks *masks,
                                      ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
