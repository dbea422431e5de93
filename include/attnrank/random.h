/* Seeded randomness, and per-configuration seeds.
 *
 * ar_rng is the library's generator (xoshiro256**, seeded through
 * splitmix64 from all 64 bits of the seed: every seed, 0 included, gives its
 * own stream).  A sweep derives the seed of each configuration from the base
 * seed and the configuration's integers (ar_seed_derive), so it can be
 * sharded, resumed or reordered and still give the same numbers. */
#ifndef ATTNRANK_RANDOM_H
#define ATTNRANK_RANDOM_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ar_rng ar_rng;

/* A generator seeded with seed; NULL when out of memory. */
AR_API ar_rng *ar_rng_alloc(uint64_t seed);
AR_API void ar_rng_free(ar_rng *rng);
/* Restart rng's stream as ar_rng_alloc(seed) would. */
AR_API void ar_rng_seed(ar_rng *rng, uint64_t seed);
/* The next 64 random bits / a uniform double in [0, 1) / N(0, sigma^2). */
AR_API uint64_t ar_rng_u64(ar_rng *rng);
AR_API double ar_rng_uniform(ar_rng *rng);
AR_API double ar_rng_gaussian(ar_rng *rng, double sigma);

/* Hash of the base seed and a configuration (splitmix64 chain, 64 bits). */
AR_API uint64_t ar_seed_derive(uint64_t base, const uint64_t *config, size_t nconfig);

/* Fill m with independent N(0, sigma^2) entries / uniform entries in
 * [lo, hi), column by column.  AR_EINVAL for an invalid view or NULL rng.
 * err: may be NULL; filled on failure. */
AR_API int ar_matrix_fill_gaussian(ar_view m, ar_rng *rng, double sigma, ar_error *err);
AR_API int ar_matrix_fill_uniform(ar_view m, ar_rng *rng, double lo, double hi, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
