/* The options of seprank (attnrank/seprank.h): what the CLI's flags and
 * Python's keywords of the separation-rank run are, and the conversion of
 * the switches and the partition text into a configuration. */
#include "attnrank/seprank.h"
#include "attnrank/option_table.h"

#include <stddef.h>
#include <string.h>

#define AT(f) offsetof(ar_seprank_opts, f)
#define CFG(f) offsetof(ar_seprank_opts, config.f)
#define NO AR_OPTION_UNTRACKED

static const ar_option_spec specs[] = {
    {"layers", AR_OPTION_COUNT, AR_OPTION_REQUIRED, CFG(layers), NO, "L", "depth, 1..64", {0}},
    {"d", AR_OPTION_COUNT, AR_OPTION_REQUIRED, CFG(d), NO, "D", "width d_x >= 1", {0}},
    {"heads", AR_OPTION_COUNT, 0, CFG(heads), NO, "H", "heads per layer, dividing D (default 1)",
     {0}},
    {"n", AR_OPTION_COUNT, 0, CFG(n), NO, "N", "number of positions, 2..32 (default 2)", {0}},
    {"partition", AR_OPTION_TEXT, 0, AT(partition), NO, "A/B",
     "positions of A and B, e.g. 0,1/2,3: each position once, both sides non-empty "
     "(default: halves)",
     {0}},
    {"templates", AR_OPTION_COUNT, AR_OPTION_POSITIVE, CFG(templates), NO, "M",
     "templates per position >= 1 (default: auto)", {0}},
    {"max-dim", AR_OPTION_COUNT, AR_OPTION_POSITIVE, CFG(max_dim), NO, "K",
     "size budget of the auto template count: rows, cols <= K (default 1024)", {0}},
    {"residual", AR_OPTION_SWITCH, 0, CFG(residual), NO, NULL, "add the residual connection",
     {0}},
    {"position", AR_OPTION_COUNT, 0, CFG(position), NO, "I", "read-out position < N (default 0)",
     {0}},
    {"entry", AR_OPTION_COUNT, 0, CFG(entry), AT(entry_given), "K",
     "read out output entry K < D (default: a seeded random linear read-out)", {0}},
    {"exact", AR_OPTION_SWITCH, 0, CFG(do_exact), NO, NULL,
     "also the exact rank (mod p, and over Q if small)", {0}},
    {"primes", AR_OPTION_COUNT, AR_OPTION_POSITIVE, CFG(nprimes), NO, "K",
     "number of primes for {flag:exact}, 1..3 (default auto)", {0}},
    {"max-memory", AR_OPTION_REAL, 0, CFG(max_bytes), NO, "B",
     "bytes one exact rank may ask FLINT for, by an upper estimate (default 16e9; 0: no "
     "cap); a larger estimate, or one malloc cannot provide, stops the run",
     {0}},
    {"rational", AR_OPTION_SWITCH, 0, AT(rational), NO, NULL,
     "force the rank over Q (fmpz_mat_rank; slow on large grids)", {0}},
    {"no-float", AR_OPTION_SWITCH, 0, AT(no_float), NO, NULL,
     "skip the floating-point spectrum (needs {flag:exact})", {0}},
    {"seed", AR_OPTION_SEED, 0, CFG(seed), NO, "S", "base seed in [0, 2^64) (default 0)", {0}},
    {"rtol", AR_OPTION_REAL, AR_OPTION_NONNEG, CFG(rtol), NO, "R",
     "relative rank tolerance, >= 0 (default max(m,n) eps)", {0}},
    {"atol", AR_OPTION_REAL, 0, CFG(atol), NO, "A", "absolute rank tolerance, >= 0 (default 0)",
     {0}},
    {"threads", AR_OPTION_COUNT, AR_OPTION_POSITIVE, CFG(threads), NO, "T",
     "threads for the grid evaluation >= 1 (default 1)", {0}},
    {"embed-rank", AR_OPTION_COUNT, AR_OPTION_POSITIVE, CFG(embedding.rank),
     CFG(embedding.enabled), "R", "token embeddings of rank R >= 1: inputs E z with E of size d x R",
     {0}},
    {"vocab", AR_OPTION_COUNT, AR_OPTION_POSITIVE, CFG(embedding.vocab), NO, "V",
     "a vocabulary of V >= 1 tokens E z_1..E z_V (needs {opt:embed-rank})", {0}},
    {"positions", AR_OPTION_SWITCH, 0, CFG(embedding.positions), NO, NULL,
     "add generic absolute positions (needs {opt:embed-rank})", {0}},
};

static const ar_option_table table = {
    "seprank",
    "Grid-tensor rank of f(X) = r^T y^L_position for the simplified self-attention\n"
    "network (no softmax, LayerNorm or ReLU; heads of size d/H; optional residual),\n"
    "a lower bound on its separation rank w.r.t. the partition (A, B) of positions\n"
    "(default: first half / second half). M templates per position give an\n"
    "M^|A| x M^|B| matrix. Default M: the least with min(M^|A|, M^|B|) > bound,\n"
    "capped so that rows and columns stay <= {opt:max-dim} (default 1024). Float rank\n"
    "uses the singular values (threshold reported); {flag:exact} adds the rank over\n"
    "F_p with weights and templates uniform over the field (1 prime up to 64 x 64,\n"
    "else 2 independent primes) and over Q (fmpz_mat_rank) up to 64 x 64, L <= 3.\n"
    "Bounds are natural logs (bound_log). Reported as 'saturated' when the rank\n"
    "fills the matrix (then it is only a lower bound: raise {opt:templates}).\n"
    "{opt:embed-rank} R: inputs x_i = E z_i with E of size d x r (seeded; uniform over\n"
    "F_p under {flag:exact}): bounds with m = min(d, r) (proved); {opt:vocab} V: the templates\n"
    "are the first M of V tokens (default all V: the grid is then the function\n"
    "itself and its rank the exact separation rank, exact_function_rank); {flag:positions}\n"
    "adds generic absolute positions. The closed form at two positions is labelled\n"
    "verified or conjectured (docs/theory/embedding-rank.md).",
    specs,
    sizeof specs / sizeof specs[0],
    {0},
};

const ar_option_table *ar_seprank_option_table(void)
{
    return &table;
}

void ar_seprank_opts_init(ar_seprank_opts *opts)
{
    if (opts == NULL)
        return;
    memset(opts, 0, sizeof *opts);
    ar_seprank_config_init(&opts->config);
    opts->config.layers = 0;
    opts->config.d = 0;
}

int ar_seprank_config_of(const ar_seprank_opts *opts, ar_seprank_config *cfg, ar_error *err)
{
    if (opts == NULL || cfg == NULL)
        return ar_error_set(err, AR_EINVAL, "seprank: NULL argument");
    *cfg = opts->config;
    cfg->readout = opts->entry_given ? AR_SEPRANK_READOUT_ENTRY : AR_SEPRANK_READOUT_RANDOM;
    if (!opts->entry_given)
        cfg->entry = 0;
    cfg->do_float = !opts->no_float;
    cfg->rational = opts->rational ? AR_SEPRANK_RATIONAL_ON : AR_SEPRANK_RATIONAL_AUTO;
    if (opts->partition == NULL)
        return AR_OK;
    ar_error why = {{0}};
    if (ar_partition_parse(opts->partition, cfg->n, &cfg->partition, &why) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "{opt:partition}: %s", why.msg);
    return AR_OK;
}
