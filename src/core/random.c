#include "attnrank/random.h"

#include <gsl/gsl_randist.h>

gsl_rng *ar_rng_alloc(uint64_t seed)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (rng != NULL)
        gsl_rng_set(rng, (unsigned long)seed);
    return rng;
}

void ar_rng_free(gsl_rng *rng)
{
    if (rng != NULL)
        gsl_rng_free(rng);
}

/* splitmix64 finaliser: a bijective mixer with good avalanche, so nearby
 * configurations get unrelated seeds. */
static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t ar_seed_derive(uint64_t base, const uint64_t *config, size_t nconfig)
{
    uint64_t h = mix64(base);
    for (size_t i = 0; i < nconfig; i++)
        h = mix64(h ^ mix64(config[i] + (uint64_t)i));
    /* mt19937 takes an unsigned long seed; keep 32 bits so results match on
     * every platform where unsigned long is 32 or 64 bits. */
    return h & 0xffffffffULL;
}

void ar_matrix_fill_gaussian(ar_matrix *m, gsl_rng *rng, double sigma)
{
    for (size_t j = 0; j < m->cols; j++)
        for (size_t i = 0; i < m->rows; i++)
            AR_AT(m, i, j) = gsl_ran_gaussian_ziggurat(rng, sigma);
}

void ar_matrix_fill_uniform(ar_matrix *m, gsl_rng *rng, double lo, double hi)
{
    for (size_t j = 0; j < m->cols; j++)
        for (size_t i = 0; i < m->rows; i++)
            AR_AT(m, i, j) = lo + (hi - lo) * gsl_rng_uniform(rng);
}
