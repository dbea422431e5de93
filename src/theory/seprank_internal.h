/* Internal to the library and its tests: column-major entries of the
 * separation-rank module for library callers holding ar_matrix values, and
 * the configuration defaults shared by its files. */
#ifndef ATTNRANK_THEORY_SEPRANK_INTERNAL_H
#define ATTNRANK_THEORY_SEPRANK_INTERNAL_H

#include "attnrank/seprank.h"

/* ar_grid_float on column-major templates and grid (sizes as documented
 * there, checked). */
int ar_grid_float_cm(const ar_san *net, const ar_matrix *templates, const ar_partition *part,
                     ar_matrix *g, size_t threads);

/* cfg, or the defaults written to *defaults when cfg is NULL. */
const ar_seprank_config *ar_seprank_config_or_default(const ar_seprank_config *cfg,
                                                      ar_seprank_config *defaults);

#endif
