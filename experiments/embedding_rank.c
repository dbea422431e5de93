/* Experiment embedding_rank (docs/theory/embedding-rank.md): the exact
 * two-position separation rank of the simplified self-attention network
 * with token embeddings of rank r, against the width d at fixed r, and
 * against r at fixed width, beside the plain network (templates free in
 * R^d).  The verified closed form is C(m + K, m), m = min(d, r),
 * K = (3^L - 1)/2: the rank rises with d up to d = r and is flat beyond.
 *
 *   embedding_rank [--quick | --full] [--seed S] [--out DIR] [--figures DIR|none]
 *
 * quick: L = 1, 2; d = 1..4 (r = 2); r = 1..4 (d = 4); one prime (well under a second);
 * full:  L = 1, 2; d = 1..8 (r = 3); r = 1..8 (d = 8); two primes (seconds).
 * Writes DIR/embedding_rank.csv (one row per configuration) and renders
 * experiments/plots/embedding_rank.gp (embedding_rank.{png,svg}).  Exits 1
 * when a measured rank differs from the closed form.
 * One configuration of the sweep engine (sweep.h) = one exact rank. */
#include "common.h"
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP_NAME "embedding_rank"
#define MAX_ITEMS 64

/* sweep: 0 = width at fixed r, 1 = rank r at fixed width, 2 = plain (no embedding). */
typedef struct item {
    int sweep;
    size_t layers, d, r;
} item;

static const char *const sweep_names[3] = {"width", "rank", "plain"};

typedef struct experiment {
    exp_ctx ctx;
    item items[MAX_ITEMS];
    size_t nitems, nprimes;
    size_t mismatches;
} experiment;

static void add(experiment *e, int sweep, size_t layers, size_t d, size_t r)
{
    if (e->nitems < MAX_ITEMS)
        e->items[e->nitems++] = (item){sweep, layers, d, r};
}

static void build_items(experiment *e)
{
    size_t dmax = e->ctx.full ? 8 : 4, rfix = e->ctx.full ? 3 : 2;
    /* Each curve of the figure is one run of consecutive rows. */
    for (size_t layers = 1; layers <= 2; layers++) {
        for (size_t d = 1; d <= dmax; d++)
            add(e, 0, layers, d, rfix);
        for (size_t d = 1; d <= dmax; d++)
            add(e, 2, layers, d, 0);
        for (size_t r = 1; r <= dmax; r++)
            add(e, 1, layers, dmax, r);
    }
}

static ar_seprank_config config_of(const experiment *e, const item *it)
{
    ar_seprank_config c;
    ar_seprank_config_init(&c);
    c.layers = it->layers;
    c.d = it->d;
    c.n = 2;
    c.seed = e->ctx.seed;
    c.do_float = 0;
    c.do_exact = 1;
    c.nprimes = e->nprimes;
    c.rational = AR_SEPRANK_RATIONAL_OFF;
    if (it->sweep != 2) {
        c.embedding.enabled = 1;
        c.embedding.rank = it->r;
    }
    return c;
}

static int run_one(void *user, size_t i, exp_sweep_record *rec)
{
    const experiment *e = user;
    const item *it = &e->items[i];
    ar_seprank_config c = config_of(e, it);
    ar_seprank_result res;
    ar_error err = {{0}};
    int rc = ar_seprank_run(&c, &res, &err);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, &err, "exact separation rank");
    /* The plain network's closed form is its parity bound C(d + K, d). */
    double expected = it->sweep == 2 ? floor(exp(res.bound_log_parity) + 0.5)
                                     : res.expected.value;
    const char *claim = it->sweep == 2 ? "proved_bound_attained"
                                       : ar_seprank_claim_name(res.expected.claim);
    size_t m = it->sweep == 2 ? it->d : res.embed_m;
    int attains = fabs(expected - (double)res.exact_rank) < 0.5;
    fprintf(rec->fp[0], "%s,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%.0f,%s,%d,%d\n", sweep_names[it->sweep],
            it->layers, it->d, it->r, m, res.config.templates, res.nprimes, res.exact_rank,
            expected, claim, attains, res.primes_agree);
    int ok = attains && res.primes_agree;
    ar_seprank_result_free(&res);
    return exp_sweep_state(rec, &ok, sizeof ok) == AR_OK
               ? 0
               : exp_fail(&e->ctx, AR_ENOMEM, NULL, "allocation");
}

static int absorb(void *user, size_t i, const void *state, size_t len)
{
    experiment *e = user;
    int ok;
    if (state == NULL || len != sizeof ok)
        return exp_fail(&e->ctx, AR_EINVAL, NULL, "journal record of the wrong size");
    memcpy(&ok, state, sizeof ok);
    if (!ok) {
        const item *it = &e->items[i];
        fprintf(stderr, EXP_NAME ": %s L=%zu d=%zu r=%zu: the rank differs from the closed "
                        "form\n", sweep_names[it->sweep], it->layers, it->d, it->r);
        e->mismatches++;
    }
    return 0;
}

/* The grid side is about C(m + K, m): its square. */
static double cost(void *user, size_t i)
{
    const experiment *e = user;
    const item *it = &e->items[i];
    size_t m = it->sweep == 2 || it->r > it->d ? it->d : it->r;
    double k = (pow(3.0, (double)it->layers) - 1.0) / 2.0;
    double side = exp(ar_seprank_lnchoose((double)m + k, (double)m)) + 1.0;
    return side * side;
}

static void describe(void *user, size_t i, char *buf, size_t len)
{
    const experiment *e = user;
    const item *it = &e->items[i];
    snprintf(buf, len, "%s L=%zu d=%zu r=%zu", sweep_names[it->sweep], it->layers, it->d, it->r);
}

static int run(experiment *e)
{
    build_items(e);
    static const char *const files[] = {"embedding_rank.csv"};
    static const char *const headers[] = {
        "sweep,layers,d,embed_rank,m,templates,primes,exact_rank,expected_rank,expected_claim,"
        "attains,primes_agree"};
    exp_sweep_spec spec = {e->nitems, 1, files, headers, run_one, absorb, cost, describe};
    int code = exp_sweep_run(&e->ctx, &spec, e);
    if (code != 0)
        return code;
    exp_progress(&e->ctx, "%zu configurations, %zu differ from the closed form", e->nitems,
                 e->mismatches);
    char vars[96];
    snprintf(vars, sizeof vars, "rfix=%d; dfix=%d", e->ctx.full ? 3 : 2, e->ctx.full ? 8 : 4);
    static const char *const figs[] = {"embedding_rank.png", "embedding_rank.svg"};
    code = exp_render(&e->ctx, "embedding_rank", figs, 2, vars);
    if (code == 0 && e->mismatches > 0)
        code = CLI_EXIT_FAIL;
    return code;
}

int main(int argc, char **argv)
{
    experiment e;
    memset(&e, 0, sizeof e);
    static const cli_command_doc doc = {
        EXP_NAME, EXP_NAME " [--quick | --full] [--seed S] [--out DIR] [--figures DIR|none]",
        "Exact two-position separation rank with token embeddings of rank r against the\n"
        "width d (fixed r) and against r (fixed d), beside the plain network; the closed\n"
        "form C(min(d, r) + K, min(d, r)), K = (3^L - 1)/2, is checked on every point.\n"
        "quick: d, r <= 4, one prime; full: d, r <= 8, two primes.",
    };
    int code = exp_parse(&e.ctx, &doc, argc, argv, NULL, 0);
    if (code >= 0)
        return code;
    e.nprimes = e.ctx.full ? 2 : 1;
    return exp_finish(&e.ctx, run(&e));
}
