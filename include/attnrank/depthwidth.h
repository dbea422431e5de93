/* Depth-to-width allocation (Levine et al. 2020, docs/theory/depth-width.md).
 *
 * The paper's empirical law for the width at which depth stops paying off:
 *     ln(d_x) = 5.039 + 0.0555 L      (transition width for depth L)
 * and the size of a network:  N_params ~ 12 L d_x^2.
 * A network of size N is optimally allocated when it sits on the transition
 * line: the depth L* solving 12 L exp(2 (a + b L)) = N, width exp(a + b L*).
 * A network (L, d_x) with L above the transition depth of its width is
 * "depth-inefficient" (too deep for its size: the extra layers would have
 * paid more as width); below it "depth-efficient" (still shallower than the
 * transition, deepening pays).  Beside the fitted line the theory's own
 * threshold L_th = log_3(d_x) is reported (asymptotic; it is far shallower).
 *
 * All results carry the law used.  Refit the law from measured transition
 * points with ar_dw_fit_points or ar_dw_fit_table (weighted least squares of
 * ln(width) on depth with GSL).  Every function taking a law reads NULL as
 * the paper's.  The module does no file I/O: the caller reads the points. */
#ifndef ATTNRANK_DEPTHWIDTH_H
#define ATTNRANK_DEPTHWIDTH_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "matrix.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AR_DW_PAPER_INTERCEPT 5.039
#define AR_DW_PAPER_SLOPE 0.0555
#define AR_DW_PAPER_PARAMS_COEFF 12.0
/* "Within 15% of the optimal depth for its size". */
#define AR_DW_DEFAULT_TOLERANCE 0.15

typedef struct ar_dw_law {
    double intercept;    /* a in ln d = a + b L */
    double slope;        /* b (per layer) */
    double params_coeff; /* c in N = c L d^2 */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_dw_law;

/* The paper's law: a = 5.039, b = 0.0555, c = 12. */
AR_API ar_dw_law ar_dw_law_paper(void);

/* A law from JSON text (len bytes, no terminator needed): finite numbers
 * "intercept" and "slope" at the top level or under "law" (what
 * `depthwidth --fit --json` and every depthwidth mode print), and an
 * optional positive "params_coeff" looked up the same way (default 12).
 * A null is a value, not a number, and hides the key under "law".
 * AR_EFORMAT for text that is not JSON (err: "line L: not a JSON law
 * file: ...") or lacks the numbers; AR_EINVAL for NULL pointers. */
AR_API int ar_dw_law_parse_json(const char *text, size_t len, ar_dw_law *law, ar_error *err);
/* The same from a file: AR_EIO when it cannot be opened, else as
 * ar_dw_law_parse_json; every message starts with the path. */
AR_API int ar_dw_law_read_file(const char *path, ar_dw_law *law, ar_error *err);

/* Transition width for a depth: exp(a + b L) (law NULL: the paper's).  AR_EINVAL on a bad law or L < 0.
 * err: may be NULL; filled on failure. */
AR_API int ar_dw_transition_d(const ar_dw_law *law, double layers, double *d, ar_error *err);
/* Transition depth for a width: (ln d - a) / b (may be negative for narrow
 * widths: every depth is past the transition).  AR_EDOMAIN if b == 0.
 * err: may be NULL; filled on failure. */
AR_API int ar_dw_transition_layers(const ar_dw_law *law, double d, double *layers, ar_error *err);
/* c L d^2. */
AR_API double ar_dw_params(const ar_dw_law *law, double layers, double d);
/* Theory's threshold log_3(d). */
AR_API double ar_dw_l_th(double d);

typedef struct ar_dw_optimum {
    ar_dw_law law;
    double params;       /* the budget */
    double layers;       /* L*, real-valued */
    double d;            /* width at L*: exp(a + b L*) */
    double l_th;         /* log_3 of that width */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_dw_optimum;

/* Optimal depth and width for a parameter budget (> 0).  Needs b > 0 (then
 * c L exp(2(a + b L)) is increasing and the root unique); found by bisection
 * on L to relative 1e-13.  AR_EDOMAIN when b <= 0 or the root is not in
 * (0, 1e7].  err: may be NULL; filled on failure. */
AR_API int ar_dw_optimal(const ar_dw_law *law, double params, ar_dw_optimum *out, ar_error *err);

typedef struct ar_dw_verdict {
    ar_dw_law law;
    double layers, d;            /* the network judged */
    double params;               /* c L d^2 */
    double transition_layers;    /* of its width */
    double transition_d;         /* of its depth */
    double optimal_layers;       /* L* for its size */
    double optimal_d;
    double depth_ratio;          /* L / L* */
    double tolerance;            /* for near_optimal */
    double l_th;                 /* log_3 d */
    int depth_efficient;         /* L <= transition depth of its width */
    int near_optimal;            /* |L - L*| <= tolerance L* */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_dw_verdict;

/* tolerance < 0 means AR_DW_DEFAULT_TOLERANCE.  layers, d > 0.
 * err: may be NULL; filled on failure. */
AR_API int ar_dw_verdict_of(const ar_dw_law *law, double layers, double d, double tolerance,
                            ar_dw_verdict *out, ar_error *err);
AR_API const char *ar_dw_verdict_name(const ar_dw_verdict *v);

/* Width beyond the embedding rank (DERIVED, docs/theory/embedding-rank.md).
 * With token embeddings of rank r the network is a function of m = min(d, r)
 * coordinates per position, so the separation-rank bounds of a width-d
 * network are those of width m: width above r buys no separation rank.
 * Applied to the law, the transition depth of a network is that of its
 * effective width m, and a depth above the crossover
 * transition_layers(min(d, r)) is past the transition at every width.
 * d: the width compared with r (the given width, the optimal width of a
 * budget, or the transition width of a depth; > 0); layers: the depth
 * judged, or NaN for none. */
typedef struct ar_dw_embedding {
    double embed_rank;       /* r */
    double d;                /* the width compared with r */
    double effective_d;      /* min(d, r) */
    double l_th;             /* log_3(effective_d) */
    double crossover_layers; /* the law's transition depth of effective_d */
    int width_capped;        /* d > r: the width above r adds no separation rank */
    int have_layers;         /* a depth was judged */
    int depth_efficient;     /* layers <= crossover_layers (with have_layers) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_dw_embedding;

/* AR_EINVAL for r < 1, d <= 0, a non-finite value or a bad law; AR_EDOMAIN
 * when the law's slope is 0.  err: may be NULL; filled on failure. */
AR_API int ar_dw_embedding_of(const ar_dw_law *law, double d, double embed_rank, double layers,
                              ar_dw_embedding *out, ar_error *err);

typedef struct ar_dw_fit {
    size_t npoints;
    int weighted;        /* 1: errors given, weights 1 / (sigma_w / w)^2 */
    double intercept, slope;             /* ln(width) = intercept + slope depth */
    double intercept_err, slope_err;     /* standard errors */
    double cov;                          /* cov(intercept, slope) */
    double r2;                           /* (weighted) coefficient of determination */
    double chi2, chi2_red;               /* chi2 / (n - 2); NaN when n == 2 */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_dw_fit;

/* Fit ln(width) = intercept + slope * depth.  width_err may be NULL (plain
 * least squares; then chi2 uses unit errors on ln width and the parameter
 * errors are scaled by the residual variance, as gsl_fit_linear does).  With
 * errors, sigma of ln(width) is width_err / width and the errors are the
 * absolute ones of gsl_fit_wlinear.  Needs n >= 2, widths > 0, errors > 0,
 * and two distinct depths. */
AR_API int ar_dw_fit_points(const double *depth, const double *width, const double *width_err,
                            size_t n, ar_dw_fit *out, ar_error *err);

/* The same from a table of transition points: n x 2 (depth, width) or n x 3
 * (depth, width, width error), any layout (e.g. ar_array_slice of a CSV read
 * with ar_csv_read).  AR_ESIZE for another number of columns. */
AR_API int ar_dw_fit_table(ar_cview points, ar_dw_fit *out, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
