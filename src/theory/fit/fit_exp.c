/* Vectorisable exponentials for the fit (fit_exp.h). */
#include "fit_exp.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp(x) for x in [-708, 0]: x = k ln 2 + r with k = round(x / ln 2) (the
 * 1.5 * 2^52 + 1023 trick rounds and leaves k + 1023 in the low bits of t,
 * which shifted into the exponent field give 2^k), exp(r) by Horner. */
#define AR_EXP_BODY(MULADD)                                                                  \
    do {                                                                                     \
        const double magic = 0x1.8p52 + 1023.0;                                              \
        const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;          \
        for (size_t i = 0; i < m; i++) {                                                     \
            double x = s[i] - top;                                                           \
            double t = MULADD(x, 0x1.71547652b82fep0, magic);                                \
            double kd = t - magic;                                                           \
            double r = MULADD(-kd, ln2_lo, MULADD(-kd, ln2_hi, x));                          \
            double p = 1.0 / 6227020800.0;                                                   \
            p = MULADD(p, r, 1.0 / 479001600.0);                                             \
            p = MULADD(p, r, 1.0 / 39916800.0);                                              \
            p = MULADD(p, r, 1.0 / 3628800.0);                                               \
            p = MULADD(p, r, 1.0 / 362880.0);                                                \
            p = MULADD(p, r, 1.0 / 40320.0);                                                 \
            p = MULADD(p, r, 1.0 / 5040.0);                                                  \
            p = MULADD(p, r, 1.0 / 720.0);                                                   \
            p = MULADD(p, r, 1.0 / 120.0);                                                   \
            p = MULADD(p, r, 1.0 / 24.0);                                                    \
            p = MULADD(p, r, 1.0 / 6.0);                                                     \
            p = MULADD(p, r, 0.5);                                                           \
            p = MULADD(p, r, 1.0);                                                           \
            p = MULADD(p, r, 1.0);                                                           \
            uint64_t bits;                                                                   \
            memcpy(&bits, &t, sizeof bits);                                                  \
            bits <<= 52;                                                                     \
            double scale;                                                                    \
            memcpy(&scale, &bits, sizeof scale);                                             \
            e[i] = p * scale;                                                                \
        }                                                                                    \
    } while (0)

#define AR_MULADD_PLAIN(a, b, c) ((a) * (b) + (c))

static void exp_shifted_plain(const double *restrict s, double top, double *restrict e, size_t m)
{
    AR_EXP_BODY(AR_MULADD_PLAIN);
}

static void minmax_plain(const double *s, size_t m, double *top, double *bot)
{
    double hi = s[0], lo = s[0];
    for (size_t i = 1; i < m; i++) {
        hi = s[i] > hi ? s[i] : hi;
        lo = s[i] < lo ? s[i] : lo;
    }
    *top = hi;
    *bot = lo;
}

/* Eight partial sums of p_i s_i combined in a fixed tree, the tail added
 * last: the order every copy of the column's t . s uses. */
static double dot_tail(const double acc[8], const double *p, const double *s, size_t i, size_t m)
{
    double d = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < m; i++)
        d += p[i] * s[i];
    return d;
}

static double minmax_dot_plain(const double *s, const double *p, size_t m, double *top,
                               double *bot)
{
    minmax_plain(s, m, top, bot);
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= m; i += 8)
        for (size_t t = 0; t < 8; t++)
            acc[t] += p[i + t] * s[i + t];
    return dot_tail(acc, p, s, i, m);
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

/* maxpd/minpd return their second operand when either is NaN: with the
 * running value second, NaN entries are skipped (as by minmax_plain, unless
 * s[0] is NaN, where both give NaN or a finite value; either way the
 * objective's exponentials turn the NaN into a non-finite value). */
__attribute__((target("avx2"))) static void minmax_avx2(const double *s, size_t m, double *top,
                                                        double *bot)
{
    __m256d hi = _mm256_set1_pd(s[0]), lo = hi;
    size_t i = 0;
    for (; i + 4 <= m; i += 4) {
        __m256d x = _mm256_loadu_pd(s + i);
        hi = _mm256_max_pd(x, hi);
        lo = _mm256_min_pd(x, lo);
    }
    double h[4], l[4];
    _mm256_storeu_pd(h, hi);
    _mm256_storeu_pd(l, lo);
    double th = h[0], tl = l[0];
    for (size_t t = 1; t < 4; t++) {
        th = h[t] > th ? h[t] : th;
        tl = l[t] < tl ? l[t] : tl;
    }
    for (; i < m; i++) {
        th = s[i] > th ? s[i] : th;
        tl = s[i] < tl ? s[i] : tl;
    }
    *top = th;
    *bot = tl;
}

/* minmax_avx2 and the products in the same pass (one read of the column
 * instead of two); products and sums rounded separately, as in the plain
 * copy, so both give the same t . s bit for bit. */
__attribute__((target("avx2"))) static double minmax_dot_avx2(const double *s, const double *p,
                                                              size_t m, double *top, double *bot)
{
    __m256d hi = _mm256_set1_pd(s[0]), lo = hi;
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= m; i += 8) {
        __m256d x0 = _mm256_loadu_pd(s + i), x1 = _mm256_loadu_pd(s + i + 4);
        hi = _mm256_max_pd(x1, _mm256_max_pd(x0, hi));
        lo = _mm256_min_pd(x1, _mm256_min_pd(x0, lo));
        a0 = _mm256_add_pd(a0, _mm256_mul_pd(_mm256_loadu_pd(p + i), x0));
        a1 = _mm256_add_pd(a1, _mm256_mul_pd(_mm256_loadu_pd(p + i + 4), x1));
    }
    double h[4], l[4], acc[8];
    _mm256_storeu_pd(h, hi);
    _mm256_storeu_pd(l, lo);
    _mm256_storeu_pd(acc, a0);
    _mm256_storeu_pd(acc + 4, a1);
    double th = h[0], tl = l[0];
    for (size_t t = 1; t < 4; t++) {
        th = h[t] > th ? h[t] : th;
        tl = l[t] < tl ? l[t] : tl;
    }
    for (size_t j = i; j < m; j++) {
        th = s[j] > th ? s[j] : th;
        tl = s[j] < tl ? s[j] : tl;
    }
    *top = th;
    *bot = tl;
    return dot_tail(acc, p, s, i, m);
}

#define AR_MULADD_FMA(a, b, c) __builtin_fma((a), (b), (c))

__attribute__((target("avx2,fma"))) static void
exp_shifted_fma(const double *restrict s, double top, double *restrict e, size_t m)
{
    AR_EXP_BODY(AR_MULADD_FMA);
}

void ar_fit_exp_shifted(const double *s, double top, double *e, size_t m)
{
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        exp_shifted_fma(s, top, e, m);
    else
        exp_shifted_plain(s, top, e, m);
}

void ar_fit_minmax(const double *s, size_t m, double *top, double *bot)
{
    if (__builtin_cpu_supports("avx2"))
        minmax_avx2(s, m, top, bot);
    else
        minmax_plain(s, m, top, bot);
}

double ar_fit_minmax_dot(const double *s, const double *p, size_t m, double *top, double *bot)
{
    if (__builtin_cpu_supports("avx2"))
        return minmax_dot_avx2(s, p, m, top, bot);
    return minmax_dot_plain(s, p, m, top, bot);
}
#else
void ar_fit_exp_shifted(const double *s, double top, double *e, size_t m)
{
    exp_shifted_plain(s, top, e, m);
}

void ar_fit_minmax(const double *s, size_t m, double *top, double *bot)
{
    minmax_plain(s, m, top, bot);
}

double ar_fit_minmax_dot(const double *s, const double *p, size_t m, double *top, double *bot)
{
    return minmax_dot_plain(s, p, m, top, bot);
}
#endif
