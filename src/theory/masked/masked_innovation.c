/* The innovation decision of the staircase greedy (src/theory/masked/masked_internal.h,
 * docs/theory/masked-attention.md section 4).
 *
 * Noise of size delta per entry of D reaches the residual of column c as
 * about delta sqrt(max(1, len_c - k_c)) sqrt(1 + |a_c|^2): the column's own
 * noise in the len_c - k_c directions the projection keeps, plus the noise
 * the basis carries in, amplified by a_c, the column's coefficients on the
 * innovative data columns.  The greedy's single tolerance tau is read as
 * the threshold of an unamplified column with every row free (len - k =
 * rows), so delta = tau / sqrt(rows) and
 *     tau_c = tau max(1, sqrt(max(1, len_c - k_c) / rows) sqrt(1 + |a_c|^2)).
 * The default tau of the analysis is max(1e-9, 10 sqrt(n) u) s: for a
 * reduced-precision storage (10 sqrt(n) u above 1e-9) and the full causal D
 * (rows = n) the noise part is exactly 10 u s sqrt(len_c - k_c)
 * sqrt(1 + |a_c|^2), the floor being tau itself; for float64 the floor
 * 1e-9 s decides unless the amplification exceeds sqrt(rows / (len_c - k_c)).
 * An ill-conditioned basis (a float32 export of a planted head) thus no
 * longer turns storage noise into innovations, without a least-squares
 * solve per column. */
#include "masked_internal.h"

#include <math.h>

double ar_staircase_column_tau(double tau, size_t rows, size_t len, size_t k, double anorm)
{
    if (!(tau > 0.0) || rows == 0)
        return tau > 0.0 ? tau : 0.0;
    double dof = len > k ? (double)(len - k) : 1.0;
    double gain = sqrt(dof / (double)rows) * hypot(1.0, anorm);
    return gain > 1.0 ? tau * gain : tau;
}
