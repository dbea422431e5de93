/* spectrum workflows (docs/theory/spectra.md): the singular spectrum and
 * rank metrics of every matrix of a stack, and of every head of a random
 * attention layer (ar_spectrum_run_random, below).
 *
 * The stack's workflow the CLI (`attnrank spectrum FILE`) and the Python face
 * (`attnrank.spectrum`) share: refuse empty matrices and non-finite
 * entries (naming the first), the singular values of all matrices in
 * parallel, then the metrics of each under the rank rule of its storage
 * precision.  The faces read or view the matrices, name them, and format
 * the results. */
#ifndef ATTNRANK_SPECTRUM_RUN_H
#define ATTNRANK_SPECTRUM_RUN_H

#include <stddef.h>
#include <stdint.h>
#include "attention.h"
#include "export.h"
#include "matrix.h"
#include "rank.h"
#include "spectrum_dist.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The spectra of mats[0..count) (all of the same shape m x n): the
 * singular values of mats[t], descending, at s + t * min(m, n), and its
 * metrics (ar_rank_metrics_stored with opts) at metrics[t].  The rank
 * options are checked first (ar_rank_opts_check).  nthreads
 * threads over the matrices (0: one per CPU); BLAS inside each should run
 * single-threaded, a process setting the caller owns.  count 0 is AR_OK
 * with nothing done.  AR_EINVAL for NULL pointers or an empty matrix
 * (m or n 0), AR_ESIZE for matrices of different shapes, AR_ENONFINITE
 * for NaN or Inf (err names the value and its row and column), the
 * spectra's and metrics' codes otherwise; on any failure *failed (may be
 * NULL) is the index of the matrix concerned. */
AR_API int ar_spectrum_run_stack(const ar_cview *mats, size_t count, const ar_rank_opts *opts,
                                 size_t nthreads, double *s, ar_rank_metrics *metrics,
                                 size_t *failed, ar_error *err);

/* spectrum of a random attention layer (`attnrank spectrum
 * --random-attention`): the logits (or softmax scores) of each head of a
 * random layer on a random input X (d x n, tokens as columns), their
 * singular values and rank metrics, and for logits the rank they must have,
 * min(d_p, d, n) (docs/theory/spectra.md).  Logit spectra come from the
 * factors (W_k X)^T (W_q X), never the n x n matrix. */
typedef enum ar_spectrum_of {
    AR_SPECTRUM_OF_LOGITS = 0, /* X^T W_q^T W_k X per head */
    AR_SPECTRUM_OF_SCORES = 1  /* its softmax along axis */
} ar_spectrum_of;

typedef struct ar_spectrum_random_opts {
    size_t n, d, heads;      /* sequence length, embedding size, heads: all >= 1 */
    size_t head_size;        /* d_p of a FixedMultiHead layer; 0: d / heads (MultiHead,
                                heads must divide d) */
    int one_head;            /* nonzero: only head `head` (0-based, < heads) */
    size_t head;
    ar_spectrum_of of;
    ar_axis axis;            /* softmax axis of scores (col: the paper's) */
    uint64_t seed;           /* of the weights and X (the rank rule's draws take
                                ar_rank_opts.seed) */
    double max_bytes;        /* refuse sizes whose estimate (weights, X and one n x n
                                matrix) exceeds this (AR_ENOMEM); 0: no limit */
    const ar_spectrum_dist_opts *distributed; /* non-NULL: logits by ScaLAPACK, collective
                                over MPI (spectrum_dist.h); NULL: serial */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_spectrum_random_opts;

/* Zero everything: logits, all heads, axis col, seed 0, no memory limit,
 * serial; the sizes must be set. */
AR_API void ar_spectrum_random_opts_init(ar_spectrum_random_opts *opts);

/* One head's matrix (n x n). */
typedef struct ar_spectrum_random_head {
    char label[128];         /* "head K logits (d=.., h=.., d_p=.., n=.., seed=..)" */
    size_t head;             /* its number */
    size_t rows, cols;       /* n, n */
    size_t k;                /* values in s: n */
    double *s;               /* singular values, descending (owned) */
    ar_rank_metrics metrics;
    long expected_rank;      /* min(d_p, d, n) for logits; -1 for scores (no closed form) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_spectrum_random_head;

typedef struct ar_spectrum_random_result {
    char source[32];         /* "random attention logits" or "... scores" */
    size_t head_size;        /* the d_p used */
    double bytes;            /* the memory estimate, 8 (2 h d_p d + d n + n^2) bytes */
    size_t count;            /* heads analysed: 1 or opts->heads */
    ar_spectrum_random_head *heads; /* count of them (owned) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_spectrum_random_result;

/* The argument rules of ar_spectrum_run_random, in the order it applies
 * them: n, d, heads >= 1; heads divides d unless head_size is given; head
 * in range; of and axis known; distributed only for logits; the estimate
 * within max_bytes (AR_ENOMEM).  AR_EINVAL otherwise; err's message names
 * the options as tokens (status.h).  out (may be NULL) receives the head
 * size and the estimate even when the limit refuses them. */
AR_API int ar_spectrum_random_check(const ar_spectrum_random_opts *opts,
                                    ar_spectrum_random_result *out, ar_error *err);

/* The layer's weights are drawn first, then X, both from opts->seed, so a
 * head's weights do not depend on n; then every head (or the one asked
 * for) in turn, metrics under rank (checked by ar_rank_opts_check after
 * ar_spectrum_random_check; ar_rank_metrics_compute for logits,
 * ar_rank_metrics_stored for scores).  Distributed, every process calls it
 * and gets the same result; a ScaLAPACK failure's message starts
 * "distributed logits: ".  *out is allocated (release with
 * ar_spectrum_random_result_free, also after a failure). */
AR_API int ar_spectrum_run_random(const ar_spectrum_random_opts *opts, const ar_rank_opts *rank,
                                  ar_spectrum_random_result *out, ar_error *err);

AR_API void ar_spectrum_random_result_free(ar_spectrum_random_result *r);

#ifdef __cplusplus
}
#endif

#endif
