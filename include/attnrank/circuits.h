/* Circuits of one head, exactly and from factors (docs/theory/circuits.md):
 * the OV circuit's copying scores with a certified sign, its singular
 * spectrum, and composition scores between heads.
 *
 * Column convention (tokens as columns, x in R^d): head h has W_Q, W_K, W_V
 * (d_head x d) and W_O (d x d_head); its OV circuit is W_OV = W_O W_V
 * (d x d, rank <= d_head) and its QK circuit W_QK = W_Q^T W_K (the logit of
 * query x and key y is x^T W_QK y / sqrt(d_head); its spectrum is
 * ar_weights_head_factored in weights.h).  Nothing d x d is formed here:
 * every quantity comes from d_head x d_head (or 2 d_head x 2 d_head) cores.
 *
 * Copying scores of W_OV (all scale invariant, 1 for the identity):
 *   s_eig = Re(sum lambda) / sum |lambda| over the nonzero eigenvalues
 *           (TransformerLens's score), from the d_head x d_head core
 *           W_V W_O, whose nonzero eigenvalues are those of W_OV.  An
 *           eigenvalue counts as zero when |lambda| <= zero_factor * eta /
 *           rcond, eta a bound of the backward error of the computed core
 *           (its product, LAPACK's eigensolver and the storage rounding)
 *           and rcond LAPACK's reciprocal condition number of that
 *           eigenvalue: the first-order perturbation bound.  When every
 *           eigenvalue is zero (a nilpotent core) s_eig is undefined.
 *   s_nuc = tr(W_OV) / ||W_OV||_*; |s_nuc| <= |s_eig| (the nuclear norm
 *           bounds sum |lambda|), equal iff W_OV is normal on its range.
 *   s_sym = tr(S) / sum |eig(S)|, S = (W_OV + W_OV^T) / 2; s_sym = 1 iff
 *           x^T W_OV x >= 0 for all x.
 * s_nuc and s_sym are undefined only for W_OV = 0.
 *
 * Composition scores CS = ||M_2 M_1||_F / (||M_2||_F ||M_1||_F), M_1 the OV
 * circuit of an earlier head and, in this column convention,
 *   Q-composition  M_2 = W_QK^T  (the earlier head writes what the query reads:
 *                                 x -> W_OV1 x on the query side)
 *   K-composition  M_2 = W_QK    (on the key side)
 *   V-composition  M_2 = W_OV2.
 * These are TransformerLens's scores (its row convention writes them
 * OV_1 QK_2, OV_1 QK_2^T and OV_1 OV_2 with OV = W_V W_O, QK = W_Q W_K^T
 * in its own layouts); the values agree with it. */
#ifndef ATTNRANK_CIRCUITS_H
#define ATTNRANK_CIRCUITS_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "status.h"
#include "matrix.h"
#include "rank.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default multiple of the first-order eigenvalue error bound below which an
 * eigenvalue counts as zero.  Why 8 per unit of d_head (the default is
 * 8 d_head): a k x k Jordan block perturbed by epsilon has eigenvalues
 * epsilon^(1/k) whose first-order bound eta / rcond is about
 * epsilon^(1/k) / k, so the factor must exceed the largest block size. */
#define AR_CIRCUIT_ZERO_FACTOR_PER_DIM 8.0
/* Default warning level of the eigenvalue condition: the flag
 * ill_conditioned is set when some nonzero eigenvalue's rcond is below it
 * (its error can then exceed 1e-8 relative, in float64). */
#define AR_CIRCUIT_RCOND_WARN 1e-8

typedef struct ar_circuit_opts {
    ar_precision storage; /* precision the weights were stored in (default AR_PREC_F64) */
    double zero_factor;   /* <= 0: AR_CIRCUIT_ZERO_FACTOR_PER_DIM * d_head */
    double rcond_warn;    /* < 0: AR_CIRCUIT_RCOND_WARN */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_circuit_opts;

AR_API void ar_circuit_opts_init(ar_circuit_opts *opts);

/* Certified trace of one head's OV circuit, tr(W_V W_O) = tr(W_OV). */
typedef struct ar_circuit_trace {
    double trace;        /* computed in float64 from the stored values */
    double bound;        /* rigorous: |trace - exact trace of the unrounded weights| <= bound */
    double storage_part; /* the part of bound from one rounding per stored weight */
    double arith_part;   /* the part from the float64 summation */
    int sign_certain;    /* |trace| > bound: the exact trace has the computed sign */
    int sign;            /* -1, 0 or 1: sign of trace */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_circuit_trace;

/* The trace of W_V (d_head x d) times W_O (d x d_head) and its bound, for
 * weights stored in precision storage (rounded to nearest, subnormals as
 * ar_weights_subnormal_abs) and decoded exactly into doubles.  AR_EINVAL
 * for NULL out, invalid views or a bad precision, AR_ESIZE when the shapes
 * do not chain, AR_ENONFINITE for a non-finite weight. */
AR_API int ar_circuit_trace_certified(ar_cview w_v, ar_cview w_o, ar_precision storage,
                                      ar_circuit_trace *out, ar_error *err);

typedef struct ar_copying_scores {
    size_t d, d_head;
    ar_circuit_opts opts;  /* as used (defaults resolved) */
    ar_circuit_trace trace;
    /* eigenvalue score */
    int eig_defined;       /* 0: every eigenvalue is zero to its tolerance */
    double s_eig;          /* NaN when undefined */
    size_t nonzero_eigs;   /* eigenvalues above their tolerance */
    double eig_abs_sum;    /* sum |lambda| over them */
    double eig_eta;        /* backward-error bound eta of the core (absolute) */
    double min_rcond;      /* smallest rcond among the nonzero eigenvalues (1 if none) */
    int ill_conditioned;   /* min_rcond < opts.rcond_warn */
    /* nuclear-norm score */
    int nuc_defined;
    double s_nuc;
    double nuclear_norm;   /* ||W_OV||_* */
    /* symmetric-part score */
    int sym_defined;
    double s_sym;
    double sym_abs_sum;    /* sum |eig(S)| */
    /* null model of a Gaussian head (i.i.d. weights; derived for d >> d_head,
     * docs/theory/circuits.md): standard deviations and z = score / sd */
    double null_sd_eig;    /* 1.5 / d_head */
    double null_sd_nuc;    /* 1 / sqrt(d d_head), also that of s_sym */
    double z_eig, z_nuc, z_sym; /* NaN when the score is undefined */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_copying_scores;

/* The copying scores of the head (W_V: d_head x d, W_O: d x d_head).
 * eig_re, eig_im: NULL or d_head doubles each, overwritten with the
 * eigenvalues of the core W_V W_O (all of them, zeros included).  opts NULL:
 * defaults.  Errors as ar_circuit_trace_certified; AR_ENOCONV when LAPACK's
 * eigensolver does not converge. */
AR_API int ar_circuit_copying(ar_cview w_v, ar_cview w_o, const ar_circuit_opts *opts,
                              ar_copying_scores *out, double *eig_re, double *eig_im,
                              ar_error *err);

/* ---- factored circuits and composition -------------------------------- */

/* A rank-<= r circuit M = A B^T (A, B: d x r) with the triangular factors of
 * thin QRs A = Q_A R_A, B = Q_B R_B, computed once, so that norms, spectra
 * and compositions cost O(d r^2) or O(r^3).  Owns its buffers. */
typedef struct ar_circuit_factor {
    size_t d, r;
    size_t k;        /* min(d, r): rows of R_A, R_B */
    double *a, *b;   /* d x r, column-major copies of A and B */
    double *ra, *rb; /* k x r, column-major, upper triangular */
    double fro;      /* ||M||_F = ||R_A R_B^T||_F */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_circuit_factor;

/* The empty factor (for initialising; ar_circuit_factor_free accepts it). */
AR_API ar_circuit_factor ar_circuit_factor_empty(void);
/* M = A B^T from a, b (d x r each).  *f is overwritten (free it first if it
 * held one).  AR_EINVAL for NULL f or invalid views, AR_ESIZE for shapes
 * that differ, AR_ENONFINITE, AR_ENOMEM. */
AR_API int ar_circuit_factor_init(ar_circuit_factor *f, ar_cview a, ar_cview b, ar_error *err);
/* The OV circuit W_O W_V (A = W_O, B = W_V^T). */
AR_API int ar_circuit_factor_ov(ar_circuit_factor *f, ar_cview w_v, ar_cview w_o, ar_error *err);
/* The QK circuit W_Q^T W_K (A = W_Q^T, B = W_K^T; W_Q, W_K d_head x d). */
AR_API int ar_circuit_factor_qk(ar_circuit_factor *f, ar_cview w_q, ar_cview w_k, ar_error *err);
AR_API void ar_circuit_factor_free(ar_circuit_factor *f);

/* The singular values of M (f->k values, descending) from the core
 * R_A R_B^T; the other d - k are zero. */
AR_API int ar_circuit_factor_svals(const ar_circuit_factor *f, double *s, ar_error *err);

typedef enum ar_composition {
    AR_COMPOSITION_Q = 0,
    AR_COMPOSITION_K = 1,
    AR_COMPOSITION_V = 2
} ar_composition;

/* "q", "k", "v". */
AR_API const char *ar_composition_name(ar_composition kind);

/* The composition score of an earlier head's OV factor `earlier` into a
 * later head: `later` is its QK factor (ar_circuit_factor_qk) for Q- and
 * K-composition and its OV factor for V-composition (the caller says which
 * by kind).  ||M_2 M_1||_F = ||R_2a (B_2^T A_1) R_1b^T||_F (or with the roles
 * of A_2 and B_2 swapped for W_QK^T), O(d r_1 r_2) for B_2^T A_1.  A zero
 * circuit gives *score = NaN and *defined = 0.  defined may be NULL. */
AR_API int ar_circuit_composition(const ar_circuit_factor *later, ar_composition kind,
                                  const ar_circuit_factor *earlier, double *score, int *defined,
                                  ar_error *err);

/* Null models (docs/theory/circuits.md).  The composition score of heads
 * whose circuits are independent and one of them invariant under rotations
 * of the contracted side has E[CS^2] = 1 / d exactly: report CS sqrt(d),
 * whose null root mean square is 1. */
AR_API double ar_composition_null_rms(size_t d);
/* The standard deviations of s_eig (1.5 / d_head) and of s_nuc and s_sym
 * (1 / sqrt(d d_head)) for a head with i.i.d. Gaussian weights, to leading
 * order for d >> d_head >> 1 (derived; tests/test_circuits.c measures
 * them).  NaN for a zero size. */
AR_API double ar_copying_null_sd_eig(size_t d_head);
AR_API double ar_copying_null_sd_nuc(size_t d, size_t d_head);

/* ---- full circuits through the embedding ------------------------------ */

/* The embedding side of full circuits, once per model: E = W_E^T (d x V)
 * and the unembedding U (V x d).  The full OV circuit of a head is
 * U W_O W_V E (V x V, rank <= d_head), never formed: with thin QRs
 * U = Q_U R_U and E^T = Q_E R_E and the d x d core C = E U, its nonzero
 * eigenvalues are those of W_V C W_O (d_head x d_head), its singular values
 * those of (R_U W_O)(R_E W_V^T)^T, and the eigenvalues of its symmetric
 * part follow from the 2 d_head x 2 d_head Gram matrix of
 * [U W_O, E^T W_V^T] (docs/theory/circuits.md).  R_U and R_E are the
 * Cholesky factors of U^T U and E E^T (dsyrk on the caller's buffers, no
 * V x d copy) when V >= d and these are numerically positive definite,
 * else the thin QRs' (any R with the same R^T R gives the same scores).
 * Tied embeddings (U a view of E^T on the same buffer) need one factor, and
 * C is the Gram matrix E E^T. */
typedef struct ar_circuit_embed {
    size_t d, vocab;
    size_t k;        /* min(V, d): rows of R_U and R_E */
    double *r_u;     /* k x d, column-major, upper triangular */
    double *r_e;     /* k x d (equal to r_u when tied) */
    double *c;       /* d x d, E U */
    double fro_e, fro_u;
    int tied;
    int gram;        /* R_U (and R_E) came from the Cholesky factor of the Gram matrix
                        (1), not a thin QR (0: V < d or not numerically definite) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_circuit_embed;

AR_API ar_circuit_embed ar_circuit_embed_empty(void);
/* e from emb = E (d x V) and unemb = U (V x d).  AR_EINVAL for NULL e,
 * invalid or empty views, AR_ESIZE when the shapes do not match,
 * AR_ENONFINITE, AR_ENOMEM.  No V x d copy when the views are row- or
 * column-major (else, and for the QR, one copy at a time). */
AR_API int ar_circuit_embed_init(ar_circuit_embed *e, ar_cview emb, ar_cview unemb,
                                 ar_error *err);
AR_API void ar_circuit_embed_free(ar_circuit_embed *e);

/* Copying scores of the full OV circuit U W_O W_V E of one head (W_V:
 * d_head x d, W_O: d x d_head).  s_eig, s_nuc and s_sym as for the OV
 * circuit; the trace is tr(W_V C W_O).  Not certified: trace.bound is NaN
 * and sign_certain 0 (the bound of ar_circuit_trace_certified covers the
 * stored factors of one head, not the products with the embeddings), and
 * the null-model fields are NaN.  svals: NULL or e->k values (the singular
 * values of the full circuit, descending; those past d_head are zero). */
AR_API int ar_circuit_full_ov(const ar_circuit_embed *e, ar_cview w_v, ar_cview w_o,
                              const ar_circuit_opts *opts, ar_copying_scores *out, double *svals,
                              ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
