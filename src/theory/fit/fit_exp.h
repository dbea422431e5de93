/* Exponentials of a column of logits for the probability-space fit
 * (internal; fit_exp.c).
 *
 * e[i] = exp(s[i] - top) for m values with -708 <= s[i] - top <= 0 (the
 * caller checks the range: below it the result would not be a normal
 * double).  Range reduction by ln 2 (Cody-Waite) and the degree-13 Taylor
 * polynomial on |r| <= ln(2)/2, whose truncation error (< 5e-18) is far
 * below rounding: at most 2 ulp from the exact value.  Written so that the
 * compiler vectorises it; on x86-64 a second copy compiled for AVX2 with
 * FMA is chosen at run time when the CPU has both.  Each copy is a fixed
 * sequence of operations, so the results depend on the input and the CPU
 * only.  The range of a column (its largest and smallest logit) comes from
 * ar_fit_minmax. */
#ifndef ATTNRANK_FIT_EXP_H
#define ATTNRANK_FIT_EXP_H

#include <stddef.h>

/* s and e must not overlap. */
void ar_fit_exp_shifted(const double *s, double top, double *e, size_t m);

/* The largest and smallest of s[0..m-1] (m >= 1), NaN entries skipped (they
 * reach the objective through the exponentials anyway); vectorised the
 * same way. */
void ar_fit_minmax(const double *s, size_t m, double *top, double *bot);

/* ar_fit_minmax and, from the same pass, returns sum_i p[i] s[i] summed in
 * eight partial sums (i mod 8) combined in a fixed tree, then the tail: the
 * same value on every CPU. */
double ar_fit_minmax_dot(const double *s, const double *p, size_t m, double *top, double *bot);

#endif
