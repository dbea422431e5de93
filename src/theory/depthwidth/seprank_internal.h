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

/* ---- FLINT's memory (seprank_memory.c) ----
 * Upper bounds of what FLINT allocates for an exact rank, computed before
 * any FLINT call (FLINT aborts when an allocation fails); AR_ENOMEM when the
 * count overflows size_t. */
/* The rank modulo p of a rows x cols matrix (nmod_mat_init + nmod_mat_lu). */
int ar_seprank_nmod_bytes(size_t rows, size_t cols, size_t *bytes);
/* ar_seprank_rational_rank of the rows x cols grid with m templates and
 * integers in [-range, range] (the network over Z and fmpz_mat_rank). */
int ar_seprank_rational_bytes(const ar_seprank_config *cfg, size_t rows, size_t cols, size_t m,
                              long range, size_t *bytes);
/* AR_OK when FLINT may be asked for `bytes`: max_bytes = 0 (no cap) or
 * bytes <= max_bytes, and a probe malloc(bytes) succeeds (freed at once).
 * Else AR_ENOMEM (AR_EINVAL for a negative or NaN max_bytes) with a message
 * naming `what` in err (may be NULL). */
int ar_seprank_flint_admit(size_t bytes, double max_bytes, const char *what, ar_error *err);

/* cfg, or the defaults written to *defaults when cfg is NULL. */
const ar_seprank_config *ar_seprank_config_or_default(const ar_seprank_config *cfg,
                                                      ar_seprank_config *defaults);

#endif
