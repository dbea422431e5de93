/* The JSON record of a seprank result (ar_seprank_result_json): the object
 * `attnrank seprank --json` prints and attnrank.Seprank is built from. */
#include "attnrank/json.h"

#include <math.h>

#include "json_build.h"

/* The "embedding" block (only with an embedding). */
static json_t *embedding_json(jb *b, const ar_seprank_result *r)
{
    const ar_seprank_embedding *e = &r->config.embedding;
    const ar_seprank_expected *x = &r->expected;
    int known = x->claim != AR_SEPRANK_CLAIM_NONE;
    json_t *o = json_object();
    jb_set(b, o, "rank", jb_size(e->rank));
    jb_set(b, o, "m", jb_size(r->embed_m));
    /* K = (3^L - 1) / 2 while it fits a JSON integer. */
    json_int_t k = 0;
    for (size_t l = 0; l < r->config.layers && l < 39; l++)
        k = 3 * k + 1;
    jb_set(b, o, "k", r->config.layers <= 39 ? json_integer(k) : json_null());
    jb_set(b, o, "vocab", e->vocab ? jb_size(e->vocab) : json_null());
    jb_set(b, o, "positions", jb_bool(e->positions));
    jb_set(b, o, "exact_function_rank", jb_bool(r->exact_function_rank));
    jb_set(b, o, "rank_meaning",
           json_string(r->exact_function_rank ? "separation_rank" : "lower_bound"));
    jb_set(b, o, "bounds_claim", json_string("proved"));
    jb_set(b, o, "bound_log_vocab", jb_real(b, r->bound_log_vocab));
    jb_set(b, o, "expected_rank",
           known && x->value_log < 40.0 ? json_integer((json_int_t)x->value) : json_null());
    jb_set(b, o, "expected_rank_log", jb_real(b, x->value_log));
    jb_set(b, o, "expected_claim", json_string(ar_seprank_claim_name(x->claim)));
    jb_set(b, o, "expected_formula", known ? json_string(x->formula) : json_null());
    jb_set(b, o, "attains_expected",
           known ? jb_bool(ar_seprank_attains_expected(r)) : json_null());
    return o;
}

static void float_block(jb *b, json_t *o, const ar_seprank_result *r)
{
    jb_set(b, o, "float_rank", jb_size(r->float_rank));
    jb_set(b, o, "tolerance", jb_tolerance_f64(b, r->threshold, r->rtol, r->atol));
    jb_set(b, o, "singular_values", jb_doubles(b, r->singular_values, r->nsv));
}

static void exact_block(jb *b, json_t *o, const ar_seprank_result *r)
{
    jb_set(b, o, "exact_rank", jb_size(r->exact_rank));
    json_t *pr = json_array();
    for (size_t k = 0; k < r->nprimes; k++) {
        json_t *p = json_object();
        jb_set(b, p, "prime", jb_u64(r->primes[k]));
        jb_set(b, p, "rank", jb_size(r->prime_ranks[k]));
        jb_append(b, pr, p);
    }
    jb_set(b, o, "primes", pr);
    jb_set(b, o, "primes_agree", jb_bool(r->primes_agree));
    jb_set(b, o, "rational_rank", r->have_rational ? jb_size(r->rational_rank) : json_null());
}

int ar_seprank_result_json(const ar_seprank_result *r, unsigned flags, char **text,
                           ar_error *err)
{
    if (r == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_seprank_result_json: NULL result");
    const ar_seprank_config *c = &r->config;
    char part[256];
    ar_partition_format(&c->partition, part, sizeof part);
    jb b;
    jb_init(&b, flags);
    json_t *o = json_object();
    jb_set(&b, o, "layers", jb_size(c->layers));
    jb_set(&b, o, "d", jb_size(c->d));
    jb_set(&b, o, "heads", jb_size(c->heads));
    jb_set(&b, o, "head_size", jb_size(c->heads ? c->d / c->heads : 0));
    jb_set(&b, o, "n", jb_size(c->n));
    jb_set(&b, o, "residual", jb_bool(c->residual));
    jb_set(&b, o, "position", jb_size(c->position));
    jb_set(&b, o, "readout", c->readout == AR_SEPRANK_READOUT_ENTRY ? jb_size(c->entry)
                                                                    : json_string("seeded"));
    jb_set(&b, o, "partition", json_string(part));
    jb_set(&b, o, "templates", jb_size(c->templates));
    jb_set(&b, o, "rows", jb_size(r->rows));
    jb_set(&b, o, "cols", jb_size(r->cols));
    jb_set(&b, o, "seed", jb_u64(r->seed)); /* all 64 bits */
    if (r->have_float)
        float_block(&b, o, r);
    if (r->have_exact)
        exact_block(&b, o, r);
    if (r->have_float && r->have_exact)
        jb_set(&b, o, "float_undercounts", jb_bool(r->float_undercounts));
    jb_set(&b, o, "saturated", jb_bool(r->saturated));
    jb_set(&b, o, "bound_log", jb_real(&b, r->bound_log));
    jb_set(&b, o, "bound_log_monomial", jb_real(&b, r->bound_log_monomial));
    jb_set(&b, o, "bound_log_split", jb_real(&b, r->bound_log_split));
    jb_set(&b, o, "bound_log_parity", jb_real(&b, r->bound_log_parity));
    /* the nearest integer of exp(bound_log) while it is exact */
    jb_set(&b, o, "bound", r->bound_log < 40.0
                               ? json_integer((json_int_t)floor(exp(r->bound_log) + 0.5))
                               : json_null());
    jb_set(&b, o, "l_th", jb_real(&b, r->l_th));
    jb_set(&b, o, "regime", json_string(ar_seprank_regime_name(r->regime)));
    if (c->embedding.enabled)
        jb_set(&b, o, "embedding", embedding_json(&b, r));
    return jb_dump(&b, o, "ar_seprank_result_json", text, err);
}
