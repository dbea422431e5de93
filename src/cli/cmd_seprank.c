/* attnrank seprank: separation rank of the simplified self-attention network
 * (docs/theory/depth-width.md) by the rank of a matricised grid tensor, in floating point
 * and exactly (modulo word-size primes, over Q on small cases), beside the
 * monomial-count bounds and the paper's regime. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_command_doc seprank_doc = {
    "seprank",
    "attnrank seprank --layers L --d D [--heads H] [--n N] [--partition 0,1/2,3]\n"
    "       [--templates M] [--residual] [--exact] [--seed S] [--csv FILE] [--json]\n"
    "       [--embed-rank R [--vocab V] [--positions]]",
    "Grid-tensor rank of f(X) = r^T y^L_position for the simplified self-attention\n"
    "network (no softmax, LayerNorm or ReLU; heads of size d/H; optional residual),\n"
    "a lower bound on its separation rank w.r.t. the partition (A, B) of positions\n"
    "(default: first half / second half). M templates per position give an\n"
    "M^|A| x M^|B| matrix. Default M: the least with min(M^|A|, M^|B|) > bound,\n"
    "capped so that rows and columns stay <= --max-dim (default 1024). Float rank\n"
    "uses the singular values (threshold reported); --exact adds the rank over\n"
    "F_p with weights and templates uniform over the field (1 prime up to 64 x 64,\n"
    "else 2 independent primes) and over Q (fmpz_mat_rank) up to 64 x 64, L <= 3.\n"
    "Bounds are natural logs (bound_log). Reported as 'saturated' when the rank\n"
    "fills the matrix (then it is only a lower bound: raise --templates).\n"
    "--embed-rank R: inputs x_i = E z_i with E of size d x r (seeded; uniform over\n"
    "F_p under --exact): bounds with m = min(d, r) (proved); --vocab V: the templates\n"
    "are the first M of V tokens (default all V: the grid is then the function\n"
    "itself and its rank the exact separation rank, exact_function_rank); --positions\n"
    "adds generic absolute positions. The closed form at two positions is labelled\n"
    "verified or conjectured (docs/theory/embedding-rank.md).",
};

typedef struct seprank_args {
    size_t layers, d, heads, n, templates, max_dim, position, entry, primes, threads;
    int entry_seen, residual, exact, rational, no_float, json, rtol_seen;
    size_t embed_rank, vocab;
    int embed_seen, vocab_seen, positions;
    const char *partition, *csv;
    uint64_t seed;
    double rtol, atol;
    double max_memory; /* --max-memory: ar_seprank_config.max_bytes */
} seprank_args;

static int write_csv(const char *path, const ar_seprank_result *r)
{
    ar_atomic_file *af;
    ar_error err = {{0}};
    int rc = ar_atomic_open(&af, path, &err);
    if (rc != AR_OK)
        return cli_status_error("seprank", rc, &err, NULL);
    ar_atomic_printf(af, "index,sigma,sigma_normalised,above_threshold\n");
    for (size_t i = 0; i < r->nsv; i++) {
        double top = r->singular_values[0] > 0.0 ? r->singular_values[0] : 1.0;
        ar_atomic_printf(af, "%zu,%.17g,%.17g,%d\n", i + 1, r->singular_values[i],
                r->singular_values[i] / top, r->singular_values[i] > r->threshold);
    }
    rc = ar_atomic_commit(af, &err);
    return rc == AR_OK ? 0 : cli_status_error("seprank", rc, &err, NULL);
}

static void print_embedding(const ar_seprank_result *r)
{
    const ar_seprank_embedding *e = &r->config.embedding;
    printf("embedding            rank r = %zu, m = min(d, r) = %zu", e->rank, r->embed_m);
    if (e->vocab)
        printf(", vocabulary %zu tokens", e->vocab);
    printf("%s\n", e->positions ? ", generic positions" : "");
    printf("bounds               with m coordinates per position (proved)\n");
    if (e->vocab)
        printf("function rank        %s\n",
               r->exact_function_rank
                   ? "the grid is the whole vocabulary: its rank is the separation rank"
                   : "a part of the vocabulary: a lower bound only");
    if (r->expected.claim != AR_SEPRANK_CLAIM_NONE)
        printf("expected             %.0f = %s (%s)%s\n", r->expected.value, r->expected.formula,
               ar_seprank_claim_name(r->expected.claim),
               ar_seprank_attains_expected(r) ? ", attained" : ", not attained by this grid");
    else
        printf("expected             no closed form for this configuration\n");
}

static void print_text(const ar_seprank_result *r)
{
    const ar_seprank_config *c = &r->config;
    char part[256];
    ar_partition_format(&c->partition, part, sizeof part);
    printf("network: L=%zu d=%zu H=%zu (head size %zu) N=%zu %s, read-out ", c->layers, c->d,
           c->heads, c->d / c->heads, c->n, c->residual ? "with residual" : "no residual");
    if (c->readout == AR_SEPRANK_READOUT_ENTRY)
        printf("entry %zu", c->entry);
    else
        printf("seeded vector");
    printf(" at position %zu, seed %llu\n", c->position, (unsigned long long)r->seed);
    printf("grid: partition %s, %zu templates -> %zu x %zu\n", part, c->templates, r->rows,
           r->cols);
    if (r->have_float)
        printf("float rank           %zu  (threshold %.3e = max(atol %.3g, rtol %.3e * sigma_1))\n",
               r->float_rank, r->threshold, r->atol, r->rtol);
    if (r->have_exact) {
        printf("exact rank           %zu  (", r->exact_rank);
        for (size_t k = 0; k < r->nprimes; k++)
            printf("%smod %llu: %zu", k ? ", " : "", (unsigned long long)r->primes[k],
                   r->prime_ranks[k]);
        if (r->have_rational)
            printf(", over Q: %zu", r->rational_rank);
        printf(")%s\n", r->primes_agree ? "" : "  PRIMES DISAGREE");
    }
    if (r->have_float && r->have_exact && r->float_undercounts)
        printf("float under-counts   by %zu\n", r->exact_rank - r->float_rank);
    if (r->saturated)
        printf("saturated            rank = min(rows, cols): a lower bound only; raise --templates\n");
    printf("bound_log            %.6g  (ln of the least bound: monomial %.6g, split %.6g, "
           "parity %.6g)\n",
           r->bound_log, r->bound_log_monomial, r->bound_log_split, r->bound_log_parity);
    if (r->bound_log < 40.0)
        printf("bound                %.0f%s\n", exp(r->bound_log),
               r->have_exact && fabs(exp(r->bound_log) - (double)r->exact_rank) < 0.5
                   ? "  (attained by the exact rank)"
                   : "");
    printf("L_th = log_3(d)      %.4g  (regime: %s%s)\n", r->l_th,
           ar_seprank_regime_name(r->regime),
           r->regime == AR_REGIME_LINEAR ? "; beyond L_th the paper gives an upper bound only"
                                         : "");
    if (c->embedding.enabled)
        print_embedding(r);
}

/* The configuration of the arguments.  The CLI's own rule: --layers and --d
 * have no defaults here; the rules on the values are ar_seprank_run's. */
static int check_args(const seprank_args *a, ar_seprank_config *cfg)
{
    if (a->layers == 0 || a->d == 0)
        return cli_usage_error("seprank", "needs --layers L and --d D (both >= 1)");
    ar_seprank_config_init(cfg);
    cfg->layers = a->layers;
    cfg->d = a->d;
    cfg->heads = a->heads;
    cfg->n = a->n;
    cfg->residual = a->residual;
    cfg->position = a->position;
    cfg->readout = a->entry_seen ? AR_SEPRANK_READOUT_ENTRY : AR_SEPRANK_READOUT_RANDOM;
    cfg->entry = a->entry_seen ? a->entry : 0;
    cfg->templates = a->templates;
    cfg->max_dim = a->max_dim;
    cfg->seed = a->seed;
    cfg->do_float = !a->no_float;
    cfg->do_exact = a->exact;
    cfg->nprimes = a->primes;
    cfg->rational = a->rational ? AR_SEPRANK_RATIONAL_ON : AR_SEPRANK_RATIONAL_AUTO;
    cfg->rtol = a->rtol_seen ? a->rtol : -1.0;
    cfg->atol = a->atol;
    cfg->threads = a->threads;
    cfg->max_bytes = a->max_memory;
    cfg->embedding.enabled = a->embed_seen;
    cfg->embedding.rank = a->embed_rank;
    cfg->embedding.vocab = a->vocab_seen ? a->vocab : 0;
    cfg->embedding.positions = a->positions;
    ar_error err = {{0}};
    if (a->rtol_seen && ar_option_check_nonneg("rtol", a->rtol, &err) != AR_OK)
        return cli_status_error("seprank", AR_EINVAL, &err, NULL);
    if (a->partition != NULL &&
        ar_partition_parse(a->partition, a->n, &cfg->partition, &err) != AR_OK)
        return cli_usage_error("seprank", "--partition: %s", err.msg);
    return -1;
}

int cmd_seprank(int argc, char **argv)
{
    seprank_args a = {0};
    a.heads = 1;
    a.n = 2;
    a.max_dim = AR_SEPRANK_DEFAULT_MAX_DIM;
    a.threads = 1;
    a.max_memory = AR_SEPRANK_DEFAULT_MAX_BYTES;
    const cli_option opts[] = {
        {"--layers", CLI_SIZE, &a.layers, "L", "depth (>= 1)", 1, NULL},
        {"--d", CLI_SIZE, &a.d, "D", "width d_x", 1, NULL},
        {"--heads", CLI_SIZE, &a.heads, "H", "heads per layer, dividing D (default 1)", 1, NULL},
        {"--n", CLI_SIZE, &a.n, "N", "number of positions (default 2)", 2, NULL},
        {"--partition", CLI_STRING, &a.partition, "A/B",
         "positions of A and B, e.g. 0,1/2,3 (default: halves)", 0, NULL},
        {"--templates", CLI_SIZE, &a.templates, "M", "templates per position (default: auto)", 1,
         NULL},
        {"--max-dim", CLI_SIZE, &a.max_dim, "K",
         "size budget of the auto template count: rows, cols <= K (default 1024)", 1, NULL},
        {"--residual", CLI_SWITCH, &a.residual, NULL, "add the residual connection", 0, NULL},
        {"--position", CLI_SIZE, &a.position, "I", "read-out position (default 0)", 0, NULL},
        {"--entry", CLI_SIZE, &a.entry, "K",
         "read out output entry K (default: a seeded random linear read-out)", 0, &a.entry_seen},
        {"--exact", CLI_SWITCH, &a.exact, NULL, "also the exact rank (mod p, and over Q if small)",
         0, NULL},
        {"--primes", CLI_SIZE, &a.primes, "K", "number of primes for --exact (default auto)", 1,
         NULL},
        {"--max-memory", CLI_DOUBLE, &a.max_memory, "B",
         "bytes one exact rank may ask FLINT for, by an upper estimate (default 16e9; 0: no "
         "cap); a larger estimate, or one malloc cannot provide, stops the run",
         0, NULL},
        {"--rational", CLI_SWITCH, &a.rational, NULL,
         "force the rank over Q (fmpz_mat_rank; slow on large grids)", 0, NULL},
        {"--no-float", CLI_SWITCH, &a.no_float, NULL, "skip the floating-point spectrum", 0, NULL},
        {"--seed", CLI_U64, &a.seed, "S", "base seed (default 0)", 0, NULL},
        {"--rtol", CLI_DOUBLE, &a.rtol, "R", "relative rank tolerance (default max(m,n) eps)", 0,
         &a.rtol_seen},
        {"--atol", CLI_DOUBLE, &a.atol, "A", "absolute rank tolerance (default 0)", 0, NULL},
        {"--threads", CLI_SIZE, &a.threads, "T", "threads for the grid evaluation (default 1)", 1,
         NULL},
        {"--embed-rank", CLI_SIZE, &a.embed_rank, "R",
         "token embeddings of rank R: inputs E z with E of size d x R", 1, &a.embed_seen},
        {"--vocab", CLI_SIZE, &a.vocab, "V",
         "a vocabulary of V tokens E z_1..E z_V (needs --embed-rank)", 1, &a.vocab_seen},
        {"--positions", CLI_SWITCH, &a.positions, NULL,
         "add generic absolute positions (needs --embed-rank)", 0, NULL},
        {"--csv", CLI_STRING, &a.csv, "FILE", "write the float singular values as CSV", 0, NULL},
        {"--json", CLI_SWITCH, &a.json, NULL, "print the result as JSON", 0, NULL},
    };
    int code = cli_parse(&seprank_doc, argc, argv, opts, sizeof opts / sizeof opts[0], NULL, 0,
                         NULL);
    if (code >= 0)
        return code;
    ar_seprank_config cfg;
    code = check_args(&a, &cfg);
    if (code >= 0)
        return code;
    if (a.csv != NULL && a.no_float)
        return cli_usage_error("seprank", "--csv writes the float spectrum: drop --no-float");
    ar_seprank_result res;
    ar_error err = {{0}};
    int rc = ar_seprank_run(&cfg, &res, &err);
    if (rc != AR_OK)
        return cli_status_error("seprank", rc, &err, NULL);
    code = 0;
    char *text = NULL;
    if (a.csv != NULL)
        code = write_csv(a.csv, &res);
    if (code == 0) {
        if (a.json) {
            rc = ar_seprank_result_json(&res, 0, &text, &err);
            code = cli_json_print_text("seprank", rc, text, &err);
        }
        else
            print_text(&res);
    }
    ar_seprank_result_free(&res);
    return code;
}
