/* The rounding model of values stored in a floating-point type
 * (docs/theory/spectra.md, "Matrices stored in low precision").
 *
 * A value x rounded to nearest in a type with unit roundoff u (p significant
 * bits, u = 2^-p) lands on x~ only from within half the spacing of x~'s
 * binade: for 2^e <= |x~| < 2^(e+1) that is u 2^e (<= u |x~|, the
 * textbook bound), known from the stored value itself.  Below the smallest
 * normal number the spacing is fixed and the error is at most half of it,
 * a_sub (float16 2^-25, bfloat16 2^-134, float32 2^-150); a stored zero may
 * be an underflowed value of size up to a_sub.  This half-width h(x~)
 * bounds |x - x~| for every x that rounds to x~.
 *
 * From this model the storage noise of a whole matrix: a rigorous bound on
 * ||A - A~||_2 over every A that rounds to the stored A~ (the certain level)
 * and a seeded Monte Carlo estimate of its typical size (draws of
 * independent errors uniform in [-h, h] per entry). */
#ifndef ATTNRANK_STORAGE_H
#define ATTNRANK_STORAGE_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "matrix.h"
#include "rank.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Unit roundoff u of a storage type: F64 2^-53, F32 2^-24, F16 2^-11,
 * BF16 2^-8 (half of ar_precision_eps). */
AR_API double ar_storage_unit_roundoff(ar_precision p);
/* Half the subnormal spacing a_sub: F16 2^-25, BF16 2^-134, F32 2^-150;
 * F64 2^-1074 (the smallest double, an upper bound of 2^-1075). */
AR_API double ar_storage_subnormal_abs(ar_precision p);
/* h(x): u 2^floor(log2 |x|) in the normal range, a_sub below it (and for 0):
 * the largest |x_true - x| of a value stored as x. */
AR_API double ar_storage_half_width(double stored, ar_precision p);

/* Monte Carlo draws by default, and the largest number accepted. */
#define AR_STORAGE_NOISE_DRAWS 3
#define AR_STORAGE_NOISE_MAX_DRAWS 100

typedef struct ar_storage_noise {
    ar_precision precision;
    double unit_roundoff;     /* u */
    double subnormal_abs;     /* a_sub */
    double certain;           /* rigorous upper bound of ||A - A~||_2 (the entrywise
                                 half-widths H bound |A - A~|, so ||A - A~||_2 <= ||H||_2,
                                 bounded above by Collatz-Wielandt and by ||H||_F) */
    double typical;           /* largest ||E||_2 over the draws (power iteration) */
    double typical_min;       /* smallest */
    uint64_t seed;
    size_t draws;
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_storage_noise;

/* The storage noise of the matrix a (any layout), read as stored in
 * precision p, with draws (1 .. AR_STORAGE_NOISE_MAX_DRAWS; 0: the default)
 * seeded by seed.  For F64 both levels are computed the same way (u =
 * 2^-53).  AR_EINVAL for an invalid view, a NULL out or too many draws;
 * AR_ENONFINITE for NaN/Inf entries; AR_ENOMEM.  Cost: about
 * 2 (40 draws + 30) m n flops.  err: may be NULL; filled on failure. */
AR_API int ar_storage_noise_estimate(ar_cview a, ar_precision p, uint64_t seed, size_t draws,
                                     ar_storage_noise *out, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
