/* Internal to the library and its tests: the column-major entry of the
 * softmax-bottleneck analysis, for library callers holding ar_matrix values
 * (the public ar_sbn_analyze checks its view and calls it). */
#ifndef ATTNRANK_THEORY_SOFTMAX_BOTTLENECK_INTERNAL_H
#define ATTNRANK_THEORY_SOFTMAX_BOTTLENECK_INTERNAL_H

#include "attnrank/softmax_bottleneck.h"

/* As ar_sbn_analyze on a column-major P; o must not be NULL. */
int ar_sbn_analyze_cm(ar_sbn_workspace *ws, const ar_matrix *p, ar_precision prec,
                      const ar_sbn_opts *o, ar_sbn_result *r, ar_error *err);

#endif
