/* Null models of the scores (docs/theory/circuits.md, "Null models").
 *
 * Composition: if M_1 -> U M_1 with U Haar-distributed on O(d) and
 * independent of M_2, E[U^T A U] = tr(A) I / d gives
 * E||M_2 U M_1||_F^2 = tr(M_1^T E[U^T M_2^T M_2 U] M_1) = ||M_2||_F^2 ||M_1||_F^2 / d:
 * E[CS^2] = 1 / d exactly, whatever the spectra.
 *
 * Copying, i.i.d. N(0, s^2) weights, d >> d_head = h >> 1: the trace is a
 * sum of d h products, mean 0, standard deviation sqrt(d h) s^2.  The core
 * W_V W_O is close to sqrt(d) s^2 times an h x h Ginibre matrix, whose
 * eigenvalues fill the disc of radius sqrt(h) uniformly (circular law), so
 * sum |lambda| ~ (2/3) h^(3/2) sqrt(d) s^2 and sd(s_eig) ~ 1.5 / h.  W_O
 * and W_V^T are close to sqrt(d) s times matrices with orthonormal columns
 * that are nearly orthogonal to each other, so all h singular values of
 * W_OV and the 2h eigenvalues of S are about d s^2 (resp. +-d s^2 / 2):
 * ||W_OV||_* ~ sum |eig S| ~ h d s^2 and sd(s_nuc) ~ sd(s_sym) ~ 1/sqrt(d h). */
#include "attnrank/circuits.h"

#include <math.h>

double ar_composition_null_rms(size_t d)
{
    return d == 0 ? NAN : 1.0 / sqrt((double)d);
}

double ar_copying_null_sd_eig(size_t d_head)
{
    return d_head == 0 ? NAN : 1.5 / (double)d_head;
}

double ar_copying_null_sd_nuc(size_t d, size_t d_head)
{
    return d == 0 || d_head == 0 ? NAN : 1.0 / sqrt((double)d * (double)d_head);
}
