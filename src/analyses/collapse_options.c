/* The options of collapse (attnrank/option_table.h): what the CLI's flags
 * and Python's keywords of the rank-collapse run are. */
#include "attnrank/collapse.h"
#include "attnrank/option_table.h"

#include <stddef.h>

#define AT(f) offsetof(ar_collapse_opts, f)
#define BOUND AT(have_bound)
#define NO AR_OPTION_UNTRACKED

static const ar_option_spec specs[] = {
    {"layers", AR_OPTION_COUNT, AR_OPTION_REQUIRED, AT(layers), NO, "L",
     "number of layers (depth), 1..100000", {0}},
    {"n", AR_OPTION_COUNT, AR_OPTION_REQUIRED, AT(n), NO, "N", "number of tokens (rows of X), >= 1", {0}},
    {"d", AR_OPTION_COUNT, AR_OPTION_REQUIRED, AT(d), NO, "D", "embedding size (columns of X), >= 1",
     {0}},
    {"heads", AR_OPTION_COUNT, AR_OPTION_REQUIRED, AT(heads), NO, "H",
     "heads per layer (must divide the embedding size)", {0}},
    {"skip", AR_OPTION_SWITCH, 0, AT(skip), NO, NULL, "skip connections around each sublayer",
     {0}},
    {"mlp", AR_OPTION_SWITCH, 0, AT(mlp), NO, NULL, "add a 2-layer ReLU MLP sublayer per layer",
     {0}},
    {"mlp-width", AR_OPTION_COUNT, AR_OPTION_POSITIVE, AT(mlp_width), NO, "M", "MLP hidden width >= 1 (default 4 x the embedding size)",
     {0}},
    {"seed", AR_OPTION_SEED, 0, AT(seed), NO, "S", "random seed in [0, 2^64) (default 0)", {0}},
    {"gamma", AR_OPTION_REAL, 0, AT(gamma), BOUND, "G",
     "the paper's constant gamma > 0 (with {opt:beta}: the bound)", {0}},
    {"beta", AR_OPTION_REAL, 0, AT(beta), BOUND, "B",
     "the paper's weight bound beta > 0 (with {opt:gamma}: the bound)", {0}},
    {"rtol", AR_OPTION_REAL, AR_OPTION_NONNEG, AT(rank.rtol), NO, "R",
     "relative rank tolerance, >= 0 (default max(n, d) * eps)", {0}},
    {"atol", AR_OPTION_REAL, 0, AT(rank.atol), NO, "A", "absolute rank tolerance, >= 0 (default 0)", {0}},
    {"fit-floor", AR_OPTION_REAL, 0, AT(fit_floor), NO, "F",
     "relative residuals this small are roundoff, not fitted; in (0, 1) (1e-12)", {0}},
};

static const ar_option_table table = {
    "collapse",
    "Runs a random self-attention network (rows as tokens: X is n x d, row softmax,\n"
    "H heads of size d/H, seeded Gaussian weights, no biases) on a random N(0,1) input\n"
    "and measures every depth: the residual res(X) = X - 1 x^T with x the column means\n"
    "(the Frobenius minimiser, used for every norm), its Frobenius norm relative to\n"
    "||X||_F, the paper's composite sqrt(||res||_1 ||res||_inf) of induced norms, the\n"
    "numerical rank and singular values of X. A layer is SA(X) [+ X with {flag:skip}],\n"
    "then with {flag:mlp} ReLU(Y W1) W2 [+ Y with {flag:skip}]. The decay is summarised by a\n"
    "geometric fit of log residual against depth and by the order k of\n"
    "r_{l+1} ~ c r_l^k. The paper's bound (pure attention only) is evaluated only\n"
    "when both of its constants {opt:gamma} and {opt:beta} are given.",
    specs,
    sizeof specs / sizeof specs[0],
    {0},
};

const ar_option_table *ar_collapse_option_table(void)
{
    return &table;
}
