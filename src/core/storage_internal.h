/* The storage noise of a matrix from its entrywise half-widths (internal;
 * src/core/storage.c, include/attnrank/storage.h). */
#ifndef ATTNRANK_STORAGE_INTERNAL_H
#define ATTNRANK_STORAGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* h: m x n column-major half-widths (>= 0; m, n >= 1 within BLAS's int).
 * certain: a rigorous bound of ||E||_2 over every |E| <= h; typical and
 * typical_min: the largest and smallest ||E||_2 of draws E uniform in
 * [-h, h] (seeded, draws >= 1).  AR_ENOMEM. */
int ar_cm_storage_noise_widths(const double *h, size_t m, size_t n, uint64_t seed, size_t draws,
                               double *certain, double *typical, double *typical_min);

#endif
