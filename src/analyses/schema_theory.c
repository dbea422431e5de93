/* The record schema of separation rank, depth-width allocation and rank
 * collapse (seprank, depthwidth, collapse): each record's name, base,
 * description and keys in JSON order (schema_internal.h). */
#include "schema_internal.h"

static const ar_schema_field f_primerank_fields[] = {
    {.key = "prime", .kind = AR_SCHEMA_INT},
    {.key = "rank", .kind = AR_SCHEMA_INT},
};

static const ar_schema_field f_seprankembedding_fields[] = {
    {.key = "rank", .kind = AR_SCHEMA_INT},
    {.key = "m", .kind = AR_SCHEMA_INT},
    {.key = "k", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "vocab", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE,
     .doc = "the vocabulary size V (null without {opt:vocab})"},
    {.key = "positions", .kind = AR_SCHEMA_BOOL},
    {.key = "exact_function_rank", .kind = AR_SCHEMA_BOOL},
    {.key = "rank_meaning", .kind = AR_SCHEMA_TEXT},
    {.key = "bounds_claim", .kind = AR_SCHEMA_TEXT},
    {.key = "bound_log_vocab", .kind = AR_SCHEMA_REAL},
    {.key = "expected_rank", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "expected_rank_log", .kind = AR_SCHEMA_REAL},
    {.key = "expected_claim", .kind = AR_SCHEMA_TEXT},
    {.key = "expected_formula", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "attains_expected", .kind = AR_SCHEMA_BOOL, .flags = AR_SCHEMA_NULLABLE},
};

static const ar_schema_field f_seprank_fields[] = {
    {.key = "layers", .kind = AR_SCHEMA_INT},
    {.key = "d", .kind = AR_SCHEMA_INT},
    {.key = "heads", .kind = AR_SCHEMA_INT},
    {.key = "head_size", .kind = AR_SCHEMA_INT},
    {.key = "n", .kind = AR_SCHEMA_INT},
    {.key = "residual", .kind = AR_SCHEMA_BOOL},
    {.key = "position", .kind = AR_SCHEMA_INT},
    {.key = "readout", .kind = AR_SCHEMA_ANY},
    {.key = "partition", .kind = AR_SCHEMA_TEXT},
    {.key = "templates", .kind = AR_SCHEMA_INT},
    {.key = "rows", .kind = AR_SCHEMA_INT},
    {.key = "cols", .kind = AR_SCHEMA_INT},
    {.key = "seed", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_U64},
    {.key = "float_rank", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "tolerance", .kind = AR_SCHEMA_RECORD, .record = "Tolerance",
     .flags = AR_SCHEMA_NULLABLE},
    {.key = "singular_values", .kind = AR_SCHEMA_REALS, .flags = AR_SCHEMA_NULLABLE,
     .doc = "all singular values, descending"},
    {.key = "exact_rank", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "primes", .kind = AR_SCHEMA_RECORDS, .record = "PrimeRank",
     .flags = AR_SCHEMA_NULLABLE},
    {.key = "primes_agree", .kind = AR_SCHEMA_BOOL, .flags = AR_SCHEMA_NULLABLE},
    {.key = "rational_rank", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "float_undercounts", .kind = AR_SCHEMA_BOOL, .flags = AR_SCHEMA_NULLABLE},
    {.key = "saturated", .kind = AR_SCHEMA_BOOL},
    {.key = "bound_log", .kind = AR_SCHEMA_REAL},
    {.key = "bound_log_monomial", .kind = AR_SCHEMA_REAL,
     .doc = "natural logs of the three upper bounds"},
    {.key = "bound_log_split", .kind = AR_SCHEMA_REAL,
     .doc = "natural logs of the three upper bounds"},
    {.key = "bound_log_parity", .kind = AR_SCHEMA_REAL,
     .doc = "natural logs of the three upper bounds"},
    {.key = "bound", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "l_th", .kind = AR_SCHEMA_REAL},
    {.key = "regime", .kind = AR_SCHEMA_TEXT},
    {.key = "embedding", .kind = AR_SCHEMA_RECORD, .record = "SeprankEmbedding",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
};

static const ar_schema_field f_depthwidthlaw_fields[] = {
    {.key = "intercept", .kind = AR_SCHEMA_REAL},
    {.key = "slope", .kind = AR_SCHEMA_REAL},
    {.key = "params_coeff", .kind = AR_SCHEMA_REAL},
    {.key = "source", .kind = AR_SCHEMA_TEXT,
     .doc = "the input file (or what was generated, e.g. \"random attention logits\"); in "
         "`weights` the model path"},
};

static const ar_schema_field f_depthwidthfit_fields[] = {
    {.key = "points", .kind = AR_SCHEMA_INT},
    {.key = "weighted", .kind = AR_SCHEMA_BOOL},
    {.key = "intercept", .kind = AR_SCHEMA_REAL},
    {.key = "slope", .kind = AR_SCHEMA_REAL},
    {.key = "intercept_err", .kind = AR_SCHEMA_REAL,
     .doc = "standard errors"},
    {.key = "slope_err", .kind = AR_SCHEMA_REAL,
     .doc = "standard errors"},
    {.key = "covariance", .kind = AR_SCHEMA_REAL},
    {.key = "r2", .kind = AR_SCHEMA_REAL,
     .doc = "R^2 of the fit"},
    {.key = "chi2", .kind = AR_SCHEMA_REAL},
    {.key = "chi2_red", .kind = AR_SCHEMA_REAL},
    {.key = "mode", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
};

static const ar_schema_field f_depthwidthembedding_fields[] = {
    {.key = "embed_rank", .kind = AR_SCHEMA_INT},
    {.key = "compared_d", .kind = AR_SCHEMA_REAL},
    {.key = "effective_d", .kind = AR_SCHEMA_REAL,
     .doc = "min(compared_d, R)"},
    {.key = "width_capped", .kind = AR_SCHEMA_BOOL},
    {.key = "crossover_layers", .kind = AR_SCHEMA_REAL},
    {.key = "l_th", .kind = AR_SCHEMA_REAL},
    {.key = "depth_efficient", .kind = AR_SCHEMA_BOOL, .flags = AR_SCHEMA_NULLABLE},
    {.key = "claim", .kind = AR_SCHEMA_TEXT},
};

static const ar_schema_field f_depthwidthmode_fields[] = {
    {.key = "mode", .kind = AR_SCHEMA_TEXT},
    {.key = "law", .kind = AR_SCHEMA_RECORD, .record = "DepthWidthLaw"},
    {.key = "fit", .kind = AR_SCHEMA_RECORD, .record = "DepthWidthFit",
     .flags = AR_SCHEMA_OPTIONAL,
     .doc = "with {opt:fit} and a mode: the refit (the keys below), the law applied being in "
         "`law`"},
};

static const ar_schema_field f_depthwidthoptimum_fields[] = {
    {.key = "total_params", .kind = AR_SCHEMA_REAL},
    {.key = "optimal_layers", .kind = AR_SCHEMA_REAL,
     .doc = "the optimal depth and width for the size"},
    {.key = "optimal_d", .kind = AR_SCHEMA_REAL},
    {.key = "l_th", .kind = AR_SCHEMA_REAL},
    {.key = "embedding", .kind = AR_SCHEMA_RECORD, .record = "DepthWidthEmbedding",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "the token embeddings: the keys below"},
};

static const ar_schema_field f_depthwidthtransitionwidth_fields[] = {
    {.key = "layers", .kind = AR_SCHEMA_INT,
     .doc = "depth; in `weights` the list of analysed layers"},
    {.key = "transition_d", .kind = AR_SCHEMA_REAL},
    {.key = "l_th", .kind = AR_SCHEMA_REAL,
     .doc = "log_3(d): the theory's asymptotic depth threshold"},
    {.key = "embedding", .kind = AR_SCHEMA_RECORD, .record = "DepthWidthEmbedding",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "the token embeddings: the keys below"},
};

static const ar_schema_field f_depthwidthtransitiondepth_fields[] = {
    {.key = "d", .kind = AR_SCHEMA_INT},
    {.key = "transition_layers", .kind = AR_SCHEMA_REAL},
    {.key = "l_th", .kind = AR_SCHEMA_REAL,
     .doc = "log_3(d): the theory's asymptotic depth threshold"},
    {.key = "embedding", .kind = AR_SCHEMA_RECORD, .record = "DepthWidthEmbedding",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "the token embeddings: the keys below"},
};

static const ar_schema_field f_depthwidthverdict_fields[] = {
    {.key = "layers", .kind = AR_SCHEMA_INT,
     .doc = "depth; in `weights` the list of analysed layers"},
    {.key = "d", .kind = AR_SCHEMA_INT},
    {.key = "total_params", .kind = AR_SCHEMA_REAL,
     .doc = "parameter count (or budget)"},
    {.key = "transition_layers", .kind = AR_SCHEMA_REAL,
     .doc = "transition depth of the width"},
    {.key = "transition_d", .kind = AR_SCHEMA_REAL,
     .doc = "transition width of the depth"},
    {.key = "optimal_layers", .kind = AR_SCHEMA_REAL,
     .doc = "the optimal depth and width for the size"},
    {.key = "optimal_d", .kind = AR_SCHEMA_REAL,
     .doc = "the optimal depth and width for the size"},
    {.key = "depth_ratio", .kind = AR_SCHEMA_REAL},
    {.key = "verdict", .kind = AR_SCHEMA_TEXT},
    {.key = "depth_efficient", .kind = AR_SCHEMA_BOOL,
     .doc = "L <= the transition depth of its width"},
    {.key = "near_optimal", .kind = AR_SCHEMA_BOOL},
    {.key = "tolerance", .kind = AR_SCHEMA_REAL},
    {.key = "l_th", .kind = AR_SCHEMA_REAL,
     .doc = "log_3(d): the theory's asymptotic depth threshold"},
    {.key = "embedding", .kind = AR_SCHEMA_RECORD, .record = "DepthWidthEmbedding",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "the token embeddings: the keys below"},
};

static const ar_schema_field f_collapsedecayfit_fields[] = {
    {.key = "floor", .kind = AR_SCHEMA_REAL},
    {.key = "last_depth", .kind = AR_SCHEMA_INT},
    {.key = "geometric_slope", .kind = AR_SCHEMA_REAL,
     .doc = "slope of log r_l against l, and exp(slope) per layer"},
    {.key = "geometric_factor", .kind = AR_SCHEMA_REAL,
     .doc = "slope of log r_l against l, and exp(slope) per layer"},
    {.key = "order", .kind = AR_SCHEMA_REAL},
    {.key = "order_log_c", .kind = AR_SCHEMA_REAL,
     .doc = "k and log c of r_{l+1} ~ c r_l^k, and the pairs fitted"},
    {.key = "order_pairs", .kind = AR_SCHEMA_INT,
     .doc = "k and log c of r_{l+1} ~ c r_l^k, and the pairs fitted"},
};

static const ar_schema_field f_collapsebound_fields[] = {
    {.key = "gamma", .kind = AR_SCHEMA_REAL,
     .doc = "the paper's constants given by the user (`bound` block, only then)"},
    {.key = "beta", .kind = AR_SCHEMA_REAL,
     .doc = "the paper's constants given by the user (`bound` block, only then)"},
    {.key = "worst_margin_log", .kind = AR_SCHEMA_REAL,
     .doc = "worst log ||res||_{1,inf} - `bound_log` over depths"},
};

static const ar_schema_field f_collapsedepth_fields[] = {
    {.key = "depth", .kind = AR_SCHEMA_INT},
    {.key = "norm_fro", .kind = AR_SCHEMA_REAL,
     .doc = "||X_l||_F, ||res(X_l)||_F and their ratio"},
    {.key = "res_fro", .kind = AR_SCHEMA_REAL,
     .doc = "||X_l||_F, ||res(X_l)||_F and their ratio"},
    {.key = "rel_res_fro", .kind = AR_SCHEMA_REAL,
     .doc = "||X_l||_F, ||res(X_l)||_F and their ratio"},
    {.key = "norm_1inf", .kind = AR_SCHEMA_REAL,
     .doc = "the same in the (1, inf) composite"},
    {.key = "res_1inf", .kind = AR_SCHEMA_REAL,
     .doc = "the same in the (1, inf) composite"},
    {.key = "rel_res_1inf", .kind = AR_SCHEMA_REAL,
     .doc = "the same in the (1, inf) composite"},
    {.key = "ratio", .kind = AR_SCHEMA_REAL},
    AR_SCHEMA_RANK_METRICS_FIELDS,
    {.key = "singular_values", .kind = AR_SCHEMA_REALS,
     .doc = "all singular values, descending"},
    {.key = "bound_log", .kind = AR_SCHEMA_REAL, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "natural log of an upper bound that may overflow a double"},
};

static const ar_schema_field f_collapse_fields[] = {
    {.key = "variant", .kind = AR_SCHEMA_TEXT},
    {.key = "layers", .kind = AR_SCHEMA_INT},
    {.key = "n", .kind = AR_SCHEMA_INT,
     .doc = "sequence length"},
    {.key = "d", .kind = AR_SCHEMA_INT,
     .doc = "model width / embedding size; in `represent` the rows of X"},
    {.key = "heads", .kind = AR_SCHEMA_INT,
     .doc = "heads per layer"},
    {.key = "head_size", .kind = AR_SCHEMA_INT,
     .doc = "head size d_p actually used (resolved from defaults when not given)"},
    {.key = "skip", .kind = AR_SCHEMA_BOOL},
    {.key = "mlp", .kind = AR_SCHEMA_BOOL},
    {.key = "mlp_width", .kind = AR_SCHEMA_INT},
    {.key = "seed", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_U64},
    {.key = "axis", .kind = AR_SCHEMA_TEXT},
    {.key = "residual", .kind = AR_SCHEMA_TEXT},
    {.key = "decay_fit", .kind = AR_SCHEMA_RECORD, .record = "CollapseDecayFit",
     .doc = "the measured decay: `floor`, `last_depth`, `geometric_slope`, "
         "`geometric_factor`, `order`, `order_log_c`, `order_pairs`"},
    {.key = "bound", .kind = AR_SCHEMA_RECORD, .record = "CollapseBound",
     .flags = AR_SCHEMA_OPTIONAL},
    {.key = "depths", .kind = AR_SCHEMA_RECORDS, .record = "CollapseDepth",
     .doc = "one entry per depth"},
};

const ar_schema_record ar_schema_theory[] = {
    {.name = "PrimeRank", .base = NULL,
     .doc =
         "The rank of the grid tensor over F_p for one prime p (a certificate:\n"
         "the generic rank over Q is at least this).",
     .fields = f_primerank_fields,
     .nfields = AR_SCHEMA_N(f_primerank_fields)},
    {.name = "SeprankEmbedding", .base = NULL,
     .doc =
         "The token-embedding block of a Seprank (only with\n"
         "`embed_rank=`; docs/theory/embedding-rank.md): the embedding rank r,\n"
         "m = min(d, r), k = (3^L - 1)/2, the vocabulary V (None without one),\n"
         "positions, exact_function_rank (the grid is the whole vocabulary, so its\n"
         "rank is the separation rank of the function, rank_meaning\n"
         "\"separation_rank\"; else \"lower_bound\"), bounds_claim (\"proved\": the\n"
         "bounds of the record are those of m coordinates), bound_log_vocab\n"
         "(min(|A|, |B|) ln V, None without a vocabulary), the closed form\n"
         "expected_rank (None when unknown or above e^40), expected_rank_log,\n"
         "expected_claim (\"verified\", \"conjectured\" or \"none\"), expected_formula\n"
         "and attains_expected (None without a closed form).",
     .fields = f_seprankembedding_fields,
     .nfields = AR_SCHEMA_N(f_seprankembedding_fields)},
    {.name = "Seprank", .base = NULL,
     .doc =
         "Grid-tensor rank of the simplified self-attention network, as\n"
         "the JSON of `seprank`: a LOWER bound on the separation rank of\n"
         "f(X) = r^T y^L_position w.r.t. the partition.\n"
         "\n"
         "The network (layers, d, heads, head_size, n, residual, read-out\n"
         "position, readout: the output entry read or \"seeded\" for a random\n"
         "linear read-out), the grid (partition \"A/B\", templates M, rows M^|A|,\n"
         "cols M^|B|), the base seed.  With the float evaluation: float_rank, its\n"
         "tolerance (threshold, rtol, atol, precision) and the singular values\n"
         "(None otherwise).  With exact=True: exact_rank (the largest rank modulo\n"
         "the primes, each a certificate), primes (one PrimeRank each),\n"
         "primes_agree, rational_rank (the rank over Q of an integer instance, or\n"
         "None when not computed) and, with both, float_undercounts.  saturated:\n"
         "the rank fills the matrix (only a lower bound then).  Bounds are natural\n"
         "logs: bound_log the least of the monomial, split and parity bounds\n"
         "(proved upper bounds on the separation rank); bound = round(exp(bound_log))\n"
         "when bound_log < 40, else None.  l_th = log_3(d) and the paper's regime.\n"
         "With `embed_rank=`: embedding, a SeprankEmbedding (the bounds\n"
         "are then those of m = min(d, r) coordinates); None (and no JSON key)\n"
         "otherwise.",
     .fields = f_seprank_fields,
     .nfields = AR_SCHEMA_N(f_seprank_fields)},
    {.name = "DepthWidthLaw", .base = NULL,
     .doc =
         "The transition law applied: ln d_x = intercept + slope L with\n"
         "N_params = params_coeff L d_x^2, and where it came from (\"paper\",\n"
         "\"fit\" for a refit from points, \"given\" for intercept/slope or a\n"
         "mapping, or the path of a JSON law file).",
     .fields = f_depthwidthlaw_fields,
     .nfields = AR_SCHEMA_N(f_depthwidthlaw_fields)},
    {.name = "DepthWidthFit", .base = NULL,
     .doc =
         "Least-squares refit ln(width) = intercept + slope depth from\n"
         "transition points (the JSON of `depthwidth` with {opt:fit=FILE} without\n"
         "`file`): points used, weighted (errors given: weights 1 / (sigma_w /\n"
         "w)^2), the coefficients with standard errors and covariance, the\n"
         "(weighted) R^2, chi2 and chi2_red = chi2 / (n - 2) (None when n = 2).\n"
         "mode is \"fit\" for the refit alone (None, left out, inside a mode's\n"
         "record).",
     .fields = f_depthwidthfit_fields,
     .nfields = AR_SCHEMA_N(f_depthwidthfit_fields)},
    {.name = "DepthWidthEmbedding", .base = NULL,
     .doc =
         "The embedding crossover of a depthwidth mode (only with\n"
         "`embed_rank=`; derived, docs/theory/embedding-rank.md): the embedding\n"
         "rank, the width compared with it (compared_d: the given width, the\n"
         "optimal width of the budget or the transition width of the depth), the\n"
         "effective width min(compared_d, embed_rank), width_capped (the width\n"
         "exceeds the embedding rank: the excess buys no separation rank),\n"
         "crossover_layers (the law's transition depth of the effective width),\n"
         "l_th = log_3 of the effective width, depth_efficient (the depth judged\n"
         "is at most the crossover; None when no depth is judged) and claim\n"
         "(\"derived\").",
     .fields = f_depthwidthembedding_fields,
     .nfields = AR_SCHEMA_N(f_depthwidthembedding_fields)},
    {.name = "_DepthWidthMode", .base = NULL,
     .doc =
         "What every mode's record starts with, in the CLI's key order: the\n"
         "mode, the law applied and, when the law was refit from points, the\n"
         "refit (None otherwise, left out of to_dict).",
     .fields = f_depthwidthmode_fields,
     .nfields = AR_SCHEMA_N(f_depthwidthmode_fields)},
    {.name = "DepthWidthOptimum", .base = "_DepthWidthMode",
     .doc =
         "Optimal depth L* and width for a parameter budget (mode \"optimum\"):\n"
         "the root of params_coeff L exp(2 (a + b L)) = total_params; l_th =\n"
         "log_3(optimal_d).",
     .fields = f_depthwidthoptimum_fields,
     .nfields = AR_SCHEMA_N(f_depthwidthoptimum_fields)},
    {.name = "DepthWidthTransitionWidth", .base = "_DepthWidthMode",
     .doc =
         "Transition width exp(a + b L) for a depth (mode \"transition_d\").",
     .fields = f_depthwidthtransitionwidth_fields,
     .nfields = AR_SCHEMA_N(f_depthwidthtransitionwidth_fields)},
    {.name = "DepthWidthTransitionDepth", .base = "_DepthWidthMode",
     .doc =
         "Transition depth (ln d - a) / b for a width (mode\n"
         "\"transition_layers\"; negative: past the transition at every depth).",
     .fields = f_depthwidthtransitiondepth_fields,
     .nfields = AR_SCHEMA_N(f_depthwidthtransitiondepth_fields)},
    {.name = "DepthWidthVerdict", .base = "_DepthWidthMode",
     .doc =
         "Verdict on a network (L, d) (mode \"verdict\"): its size, the\n"
         "transition depth of its width and width of its depth, the optimal\n"
         "depth and width for its size, depth_ratio = L / L*, \"depth-efficient\"\n"
         "(L <= transition depth of d) or \"depth-inefficient\", near_optimal\n"
         "(|L - L*| <= tolerance L*).",
     .fields = f_depthwidthverdict_fields,
     .nfields = AR_SCHEMA_N(f_depthwidthverdict_fields)},
    {.name = "CollapseDecayFit", .base = NULL,
     .doc =
         "Decay of the relative Frobenius residual over depths 0..last_depth\n"
         "(before it first falls to floor): geometric fit (slope of log r_l per\n"
         "layer, factor exp(slope)) and order k of r_{l+1} ~ c r_l^k (None with\n"
         "fewer than 2 points / pairs).",
     .fields = f_collapsedecayfit_fields,
     .nfields = AR_SCHEMA_N(f_collapsedecayfit_fields)},
    {.name = "CollapseBound", .base = NULL,
     .doc =
         "The paper's constants and the worst log margin log(res_1inf) -\n"
         "bound_log over depths >= 1 (<= 0: the bound holds at every depth).",
     .fields = f_collapsebound_fields,
     .nfields = AR_SCHEMA_N(f_collapsebound_fields)},
    {.name = "CollapseDepth", .base = NULL,
     .doc =
         "One depth (0 = the input): norms of X_l and of its residual\n"
         "res(X) = X - 1 x^T (Frobenius and the paper's composite sqrt(||.||_1\n"
         "||.||_inf), absolute and relative), ratio of relative residuals to the\n"
         "previous depth (None at depth 0), the numerical rank of X_l with its\n"
         "tolerance and the effective ranks, the singular values, and the log of\n"
         "the paper's bound (only when gamma and beta were given).",
     .fields = f_collapsedepth_fields,
     .nfields = AR_SCHEMA_N(f_collapsedepth_fields)},
    {.name = "Collapse", .base = NULL,
     .doc =
         "Rank collapse across depth, as the JSON of `collapse`: the\n"
         "variant (\"pure attention\", \"attention, skip\", \"attention+mlp, no skip\",\n"
         "\"attention+mlp, skip\"), the sizes, mlp_width (0 without the MLP), the\n"
         "seed, axis \"row\" (rows are tokens), the residual's definition, the\n"
         "decay fit, the bound (None without gamma and beta) and one\n"
         "CollapseDepth per depth 0..layers.",
     .fields = f_collapse_fields,
     .nfields = AR_SCHEMA_N(f_collapse_fields)},
};
const size_t ar_schema_theory_count = AR_SCHEMA_N(ar_schema_theory);
