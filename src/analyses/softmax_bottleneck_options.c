/* The options of softmax-bottleneck (attnrank/softmax_bottleneck.h): what
 * the CLI's flags and Python's keywords of the output-layer width test are. */
#include "attnrank/option_table.h"
#include "attnrank/softmax_bottleneck.h"

#include <stddef.h>

#define AT(f) offsetof(ar_sbn_opts, f)
#define NO AR_OPTION_UNTRACKED

static const ar_option_spec specs[] = {
    {"d", AR_OPTION_COUNT, AR_OPTION_REQUIRED, AT(d), NO, "D", "output-layer width to test, >= 0",
     {0}},
    {"bias", AR_OPTION_SWITCH, 0, AT(bias), NO, NULL, "allow a per-word output bias", {0}},
    {"rtol", AR_OPTION_REAL, AR_OPTION_NONNEG, AT(rank.rtol), NO, "R",
     "rank tolerance relative to sigma_1(log P), >= 0 (default max(N,V) * eps)", {0}},
    {"atol", AR_OPTION_REAL, 0, AT(rank.atol), NO, "A", "absolute rank tolerance, >= 0 (default 0)",
     {0}},
    {"sum-tol", AR_OPTION_REAL, AR_OPTION_NONNEG, AT(sum_tol), NO, "T",
     "allowed |row sum - 1|, >= 0 (default: as represent, n = V)", {0}},
    {"seed", AR_OPTION_SEED, 0, AT(seed), NO, "S",
     "seed of the fit's start jitter, in [0, 2^64) (default 0)", {0}},
    {"jitter", AR_OPTION_REAL, 0, AT(jitter), NO, "J", "relative start jitter, >= 0 (default 1e-3)",
     {0}},
    {"max-iter", AR_OPTION_COUNT, 0, AT(max_iter), NO, "K", "fit iterations, >= 1 (default 500)",
     {0}},
};

static const ar_option_table table = {
    "softmax-bottleneck",
    "P is a row-stochastic N x V matrix (contexts x vocabulary, entries > 0). An\n"
    "output layer of width d gives logits H W^T (H: N x d, W: V x d), with\n"
    "{flag:bias} also + 1 b^T. Reports the exact required width, rank(L0 Pi_V) with\n"
    "L0 = log P and Pi_V the row centring (with {flag:bias} rank(Pi_N L0 Pi_V)); ranks use\n"
    "a threshold relative to ||L0||_2; whether d suffices; Yang et al.'s condition\n"
    "rank(log P) - 1 > d (sufficient for failure, not necessary) and whether it\n"
    "misses a failure; the best logit-space error at d (Eckart-Young on the centred\n"
    "log, exact); and a probability-space fit (L-BFGS from the truncated SVD, seeded\n"
    "jitter; an upper bound) with KL(P_i || P_hat_i) mean/max over contexts, Frobenius\n"
    "and max-abs errors. Whether or not d suffices is the result's `sufficient`,\n"
    "never an error.",
    specs,
    sizeof specs / sizeof specs[0],
    {0},
};

const ar_option_table *ar_sbn_option_table(void)
{
    return &table;
}
