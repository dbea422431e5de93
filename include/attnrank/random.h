/* Seeded randomness on GSL generators, and per-configuration seeds.
 *
 * A sweep derives the seed of each configuration from the base seed and the
 * configuration's integers (ar_seed_derive), so it can be sharded, resumed or
 * reordered and still give the same numbers. */
#ifndef ATTNRANK_RANDOM_H
#define ATTNRANK_RANDOM_H

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "export.h"
#include "matrix.h"

/* A mt19937 generator seeded with seed; NULL when out of memory. */
AR_API gsl_rng *ar_rng_alloc(uint64_t seed);
AR_API void ar_rng_free(gsl_rng *rng);

/* Hash of the base seed and a configuration (splitmix64 chain). */
AR_API uint64_t ar_seed_derive(uint64_t base, const uint64_t *config, size_t nconfig);

/* Fill m with independent N(0, sigma^2) entries. */
AR_API void ar_matrix_fill_gaussian(ar_matrix *m, gsl_rng *rng, double sigma);
/* Fill m with uniform entries in [lo, hi). */
AR_API void ar_matrix_fill_uniform(ar_matrix *m, gsl_rng *rng, double lo, double hi);

#endif
