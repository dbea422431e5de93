/* Internal to the library and its tests: not installed, not exported.
 *
 * An ar_rng is a gsl_rng of the library's own type (random.c), so library
 * code can hand it to GSL's distributions (gsl_ran_*). */
#ifndef ATTNRANK_CORE_RANDOM_INTERNAL_H
#define ATTNRANK_CORE_RANDOM_INTERNAL_H

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "attnrank/random.h"

static inline gsl_rng *ar_rng_gsl(ar_rng *rng)
{
    return (gsl_rng *)(void *)rng;
}

/* Column-major convenience for library code holding ar_matrix values. */
void ar_cm_fill_gaussian(ar_matrix *m, ar_rng *rng, double sigma);

#endif
