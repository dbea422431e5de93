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
    NULL, /* the library's (ar_seprank_option_table) */
};

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

int cmd_seprank(int argc, char **argv)
{
    ar_seprank_opts o;
    ar_seprank_opts_init(&o);
    const char *csv = NULL;
    int json = 0;
    const cli_option opts[] = {
        {"--csv", CLI_STRING, &csv, "FILE", "write the float singular values as CSV", 0, NULL},
        {"--json", CLI_SWITCH, &json, NULL, "print the result as JSON", 0, NULL},
    };
    cli_table lib = {ar_seprank_option_table(), &o};
    int code = cli_parse_analysis(&seprank_doc, lib, argc, argv, opts,
                                  sizeof opts / sizeof opts[0], NULL, 0, NULL);
    if (code >= 0)
        return code;
    if (csv != NULL && o.no_float)
        return cli_usage_error("seprank", "--csv writes the float spectrum: drop --no-float");
    ar_seprank_config cfg;
    ar_seprank_result res;
    ar_error err = {{0}};
    int rc = ar_seprank_config_of(&o, &cfg, &err);
    if (rc == AR_OK)
        rc = ar_seprank_run(&cfg, &res, &err);
    if (rc != AR_OK)
        return cli_status_error("seprank", rc, &err, NULL);
    code = csv != NULL ? write_csv(csv, &res) : 0;
    if (code == 0 && json) {
        char *text = NULL;
        rc = ar_seprank_result_json(&res, 0, &text, &err);
        code = cli_json_print_text("seprank", rc, text, &err);
    } else if (code == 0) {
        print_text(&res);
    }
    ar_seprank_result_free(&res);
    return code;
}
