#include "attnrank/random.h"
#include "attnrank/status.h"
#include "core/random_internal.h"

#include <gsl/gsl_randist.h>
#include <limits.h>
#include <stdlib.h>

/* splitmix64 finaliser: a bijective mixer with good avalanche, so nearby
 * configurations get unrelated seeds. */
static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* xoshiro256** (Blackman and Vigna) as a GSL generator type, the generator
 * of every ar_rng: GSL's mt19937 (the generator before 0.9.0) keeps 32 bits of
 * a seed and maps 0 to 4357, so two of our 64-bit seeds could share a
 * stream.  Here the four state words come from splitmix64 of the full seed
 * (never all zero). */
typedef struct xoshiro_state {
    uint64_t s[4];
} xoshiro_state;

static void xoshiro_seed(xoshiro_state *st, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        st->s[i] = mix64(seed + (uint64_t)i * 0x9e3779b97f4a7c15ULL);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t xoshiro_next(xoshiro_state *st)
{
    uint64_t *s = st->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static void xoshiro_set(void *state, unsigned long seed)
{
    xoshiro_seed(state, (uint64_t)seed);
}

static unsigned long xoshiro_get(void *state)
{
    return (unsigned long)xoshiro_next(state);
}

static double xoshiro_get_double(void *state)
{
    return (double)(xoshiro_next(state) >> 11) * 0x1.0p-53;
}

/* unsigned long is 64 bits on every platform this builds for (LP64); the
 * static assertion keeps a 32-bit port from silently dropping bits. */
_Static_assert(ULONG_MAX >= UINT64_MAX, "ar_rng needs a 64-bit unsigned long");

static const gsl_rng_type xoshiro_type = {
    "xoshiro256starstar", ULONG_MAX, 0, sizeof(xoshiro_state),
    xoshiro_set, xoshiro_get, xoshiro_get_double,
};

/* The gsl_rng and its state are allocated here, not by gsl_rng_alloc: that
 * one reports a failed malloc through GSL's error handler, which aborts by
 * default, and a library must return AR_ENOMEM's NULL instead. */
static gsl_rng *rng_new(const gsl_rng_type *type, uint64_t seed)
{
    gsl_rng *rng = malloc(sizeof *rng);
    void *state = malloc(type->size > 0 ? type->size : 1);
    if (rng == NULL || state == NULL) {
        free(rng);
        free(state);
        return NULL;
    }
    rng->type = type;
    rng->state = state;
    type->set(state, (unsigned long)seed);
    return rng;
}

ar_rng *ar_rng_alloc(uint64_t seed)
{
    return (ar_rng *)(void *)rng_new(&xoshiro_type, seed);
}

void ar_rng_free(ar_rng *rng)
{
    if (rng != NULL) {
        free(ar_rng_gsl(rng)->state);
        free(ar_rng_gsl(rng));
    }
}

void ar_rng_seed(ar_rng *rng, uint64_t seed)
{
    if (rng != NULL)
        gsl_rng_set(ar_rng_gsl(rng), (unsigned long)seed);
}

uint64_t ar_rng_u64(ar_rng *rng)
{
    return rng != NULL ? (uint64_t)gsl_rng_get(ar_rng_gsl(rng)) : 0;
}

double ar_rng_uniform(ar_rng *rng)
{
    return rng != NULL ? gsl_rng_uniform(ar_rng_gsl(rng)) : 0.0;
}

double ar_rng_gaussian(ar_rng *rng, double sigma)
{
    return rng != NULL ? gsl_ran_gaussian_ziggurat(ar_rng_gsl(rng), sigma) : 0.0;
}

uint64_t ar_seed_derive(uint64_t base, const uint64_t *config, size_t nconfig)
{
    uint64_t h = mix64(base);
    for (size_t i = 0; config != NULL && i < nconfig; i++)
        h = mix64(h ^ mix64(config[i] + (uint64_t)i));
    return h; /* all 64 bits: ar_rng keeps every one */
}

void ar_cm_fill_gaussian(ar_matrix *m, ar_rng *rng, double sigma)
{
    for (size_t j = 0; j < m->cols; j++)
        for (size_t i = 0; i < m->rows; i++)
            AR_AT(m, i, j) = gsl_ran_gaussian_ziggurat(ar_rng_gsl(rng), sigma);
}

int ar_matrix_fill_gaussian(ar_view m, ar_rng *rng, double sigma, ar_error *err)
{
    if (rng == NULL || ar_view_check(m, err) != AR_OK)
        return rng == NULL ? ar_error_set(err, AR_EINVAL, "NULL rng") : AR_EINVAL;
    for (size_t j = 0; j < m.cols; j++)
        for (size_t i = 0; i < m.rows; i++)
            AR_VAT(m, i, j) = gsl_ran_gaussian_ziggurat(ar_rng_gsl(rng), sigma);
    return AR_OK;
}

int ar_matrix_fill_uniform(ar_view m, ar_rng *rng, double lo, double hi, ar_error *err)
{
    if (rng == NULL || ar_view_check(m, err) != AR_OK)
        return rng == NULL ? ar_error_set(err, AR_EINVAL, "NULL rng") : AR_EINVAL;
    for (size_t j = 0; j < m.cols; j++)
        for (size_t i = 0; i < m.rows; i++)
            AR_VAT(m, i, j) = lo + (hi - lo) * ar_rng_uniform(rng);
    return AR_OK;
}
