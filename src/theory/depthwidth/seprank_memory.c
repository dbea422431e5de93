/* What FLINT allocates for the exact ranks of seprank_exact.c, computed
 * before FLINT is called.  FLINT (and GMP under its fmpz) aborts the process
 * when an allocation fails, which the library may not do, so every exact
 * rank first passes ar_seprank_flint_admit: refused above the caller's cap
 * (ar_seprank_config.max_bytes), and refused when a probe allocation of the
 * whole estimate fails.  The estimates are upper bounds (FLINT allocates in
 * pieces, each smaller than the probe); they assume FLINT 2.9's algorithms
 * (nmod_mat_lu, fmpz_mat_rank), named below. */
#include "seprank_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* *out = a * b + c; 0 when that overflows size_t. */
static int mul_add(size_t a, size_t b, size_t c, size_t *out)
{
    if (b != 0 && a > (SIZE_MAX - c) / b)
        return 0;
    *out = a * b + c;
    return 1;
}

int ar_seprank_nmod_bytes(size_t rows, size_t cols, size_t *bytes)
{
    if (bytes == NULL)
        return AR_EINVAL;
    /* nmod_mat_init: rows x cols limbs and rows row pointers.  nmod_mat_lu:
     * per level of its column recursion (at most 64) a permutation and four
     * windows of at most rows pointers, and the Schur complement update
     * (nmod_mat_submul's product and nmod_mat_mul's transposed or Strassen
     * scratch), at most twice the matrix. */
    size_t entries, words, limbs;
    if (!mul_add(rows, cols, 0, &entries) || !mul_add(rows, 1 + 5 * 64, 0, &words) ||
        !mul_add(entries, 3, words, &limbs) || !mul_add(limbs, sizeof(uint64_t), 0, bytes))
        return AR_ENOMEM;
    return AR_OK;
}

/* Bits of a bound on |entry| of the integer grid: weights, read-out and
 * templates in [-range, range].  A layer maps |y| <= Y to
 * |W_O u| <= d R n dp (d R Y)^3 (q, k, v = W y <= d R Y; s = <q, k> <= dp
 * (d R Y)^2; u = sum_j s v_j), plus Y with the residual; the read-out adds
 * d R. */
static double grid_bits(const ar_seprank_config *cfg, long range)
{
    double lr = log2((double)range), ld = log2((double)cfg->d);
    double ln = log2((double)cfg->n), ldp = log2((double)(cfg->d / cfg->heads));
    double b = lr;
    for (size_t l = 0; l < cfg->layers; l++)
        b = 3.0 * (b + ld + lr) + ldp + ln + ld + lr + (cfg->residual ? 1.0 : 0.0);
    return b + ld + lr;
}

/* Bytes of one fmpz holding at most `bits` bits: the fmpz itself, and above
 * 62 bits its mpz (struct and allocation header) with the limbs. */
static double fmpz_bytes(double bits)
{
    return 8.0 + (bits > 62.0 ? 32.0 + 8.0 * ceil(bits / 64.0) : 0.0);
}

int ar_seprank_rational_bytes(const ar_seprank_config *cfg, size_t rows, size_t cols, size_t m,
                              long range, size_t *bytes)
{
    if (cfg == NULL || bytes == NULL || rows == 0 || cols == 0 || m == 0 || range <= 0 ||
        cfg->d == 0 || cfg->heads == 0 || cfg->n == 0)
        return AR_EINVAL;
    double d = (double)cfg->d, n = (double)cfg->n, r = (double)(rows < cols ? rows : cols);
    double b_out = grid_bits(cfg, range);
    /* fmpz_mat_rank works on a copy by fraction-free elimination (or, from
     * 25 x 25, rref with its own working matrices): every entry is then a
     * minor of the grid, of at most r b_out + (r / 2) log2 r bits (Hadamard);
     * three matrices of such entries bound the copy, rref's work and result. */
    double b_minor = r * b_out + 0.5 * r * log2(r) + 1.0;
    double cells = (double)rows * (double)cols;
    /* the network's vector: scratch (6 d n, intermediates up to b_out + 2
     * bits), weights, read-out and templates (small) */
    double vec = (6.0 * d * n + 1.0) * fmpz_bytes(b_out + 2.0) +
                 8.0 * ((double)cfg->layers * 4.0 * d * d + d + (double)m * d);
    double grid = 8.0 * (double)rows + cells * fmpz_bytes(b_out);
    double rank = 3.0 * (8.0 * (double)rows + cells * fmpz_bytes(b_minor));
    double total = vec + grid + rank;
    if (!(total < 0.5 * (double)SIZE_MAX))
        return AR_ENOMEM;
    *bytes = (size_t)ceil(total);
    return AR_OK;
}

int ar_seprank_flint_admit(size_t bytes, double max_bytes, const char *what, ar_error *err)
{
    if (!(max_bytes >= 0.0))
        return ar_error_set(err, AR_EINVAL, "max_bytes must be >= 0, got %g", max_bytes);
    if (max_bytes > 0.0 && (double)bytes > max_bytes)
        return ar_error_set(err, AR_ENOMEM,
                            "%s needs up to %.3g GB in FLINT, above max_bytes %.3g GB", what,
                            (double)bytes / 1e9, max_bytes / 1e9);
    if (bytes == 0)
        return AR_OK;
    /* FLINT aborts where malloc would return NULL: ask malloc first (not
     * touched, so it costs no memory; a later failure of FLINT's own, smaller
     * pieces is not excluded, but what the machine cannot provide at all is
     * refused here) */
    void *probe = malloc(bytes);
    if (probe == NULL)
        return ar_error_set(err, AR_ENOMEM, "%s needs up to %.3g GB in FLINT: out of memory",
                            what, (double)bytes / 1e9);
    free(probe);
    return AR_OK;
}
