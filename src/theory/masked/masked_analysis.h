/* The masked-analysis workspace and the steps of ar_masked_analyze
 * (internal; include/attnrank/masked.h is the public side). */
#ifndef ATTNRANK_MASKED_ANALYSIS_H
#define ATTNRANK_MASKED_ANALYSIS_H

#include "attnrank/masked.h"
#include "masked_internal.h"

/* Singular values of A Pi for one fully specified p x q block A of L. */
typedef struct ar_block_spectrum {
    size_t p, q, count;
    double *sv;
    double eta_fro;          /* storage rule: ||eta||_F over the block, bounding the spectral
                                norm of its rounding perturbation (0 otherwise) */
} ar_block_spectrum;

#define AR_MASKED_MAX_SPECTRA 8

struct ar_masked_workspace {
    size_t n;
    ar_matrix prow;          /* P with rows as queries (smoothed when asked) */
    ar_matrix lrow;          /* log prow on the mask, 0 elsewhere */
    unsigned char *allowed;  /* n * n, query-major */
    ar_mask mask;
    ar_matrix x, pinv;       /* when X is given: a copy and pinv(X) (n x d) */
    int x_given;
    ar_matrix u, v;          /* n x n: the best confirmed completion is u[:, :rank] v[:, :rank]^T */
    size_t rank;
    int have_completion;
    ar_matrix eta;           /* storage rule: bounds of |log P - log P_stored| on the mask
                                (rows as queries); empty otherwise */
    ar_matrix half;          /* storage rule: half-widths h(P) of the stored entries */
    ar_block_spectrum spec[AR_MASKED_MAX_SPECTRA];
    size_t nspec;
    ar_masked_result res;
    int analyzed;
};

/* pinv(X) (n x d) of a d x n input of full column rank; AR_EDOMAIN naming
 * the rank when X is rank deficient (masked problems need d >= n). */
int ar_masked_input_pinv(const ar_matrix *x, size_t n, ar_precision prec, double rtol,
                         ar_matrix *pinv, size_t *rank, double *threshold, ar_error *err);

/* The storage rule (masked_stored.c): lower bound for every map that rounds
 * to the stored one, a certificate within the stored map's rounding, and the
 * default estimate, for P stored in float16 or bfloat16. */
int ar_masked_solve_stored(ar_masked_workspace *ws, const ar_masked_opts *o, ar_masked_result *r,
                           ar_error *err);
/* Rank-k factors u, v (n x n, first k columns used, as start and result)
 * moved until the masked softmax of u v^T is within theta h of the stored map
 * entrywise (masked_box.c); *inside = 1 when it got there. */
int ar_masked_box_fit(const ar_masked_workspace *ws, ar_matrix *u, ar_matrix *v, size_t k,
                      double theta, size_t max_iter, int *inside);

/* Steps 2-3: exact count or bounds, and the confirmed completion in ws. */
int ar_masked_solve(ar_masked_workspace *ws, const ar_masked_opts *o, ar_masked_result *r,
                    ar_error *err);

/* The generic value of the mask at this n (and its F_p status when
 * affordable); nothing for a pattern mask. */
int ar_masked_generic_for(ar_masked_workspace *ws, const ar_masked_opts *o, ar_masked_result *r,
                          ar_error *err);

/* Run a completion through the weights and the forward check; *confirmed
 * when its max-abs error is within r->accuracy; *max_abs receives it. */
int ar_masked_confirm(ar_masked_workspace *ws, const ar_matrix *u, const ar_matrix *v,
                      size_t rank, const ar_masked_result *r, int *confirmed, double *max_abs);

/* Offer a completion: kept in ws when its forward check confirms it and it
 * is smaller than the one kept. */
int ar_masked_offer(ar_masked_workspace *ws, const ar_matrix *u, const ar_matrix *v, size_t rank,
                    const ar_masked_result *r);

/* Windows, bands, sink + window: completions of rank r->lower,
 * r->lower + 1, ... (up to opts->extra_rank more) by the interval recursion,
 * offered until one is confirmed.  u, v: n x n scratch.  Nothing when the
 * pattern reduces to no interval form. */
int ar_masked_interval_upper(ar_masked_workspace *ws, const ar_masked_opts *o,
                             ar_masked_result *r, ar_matrix *u, ar_matrix *v);

#endif
