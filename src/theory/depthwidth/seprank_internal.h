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

/* ar_grid_float_cm with an input offset per position: position j reads
 * template + column j of offsets (d x n; NULL: no offsets). */
int ar_grid_float_offsets_cm(const ar_san *net, const ar_matrix *templates,
                             const ar_matrix *offsets, const ar_partition *part, ar_matrix *g,
                             size_t threads);
/* ar_grid_mod with an offset per position: position j reads template +
 * offsets[j*d .. j*d + d-1] (NULL: no offsets). */
int ar_grid_mod_offsets(const ar_san_mod *net, const uint64_t *templates, size_t m,
                        const uint64_t *offsets, const ar_partition *part, uint64_t *g,
                        size_t ld, size_t threads);

/* ---- token embeddings (seprank_embed.c, exact/seprank_embed_exact.c) ----
 * Role seeds of E, the token coordinates z and the positions: floating
 * point, and prime k at AR_SEPRANK_ROLE_MOD_EMBED + 3 k (+1, +2). */
#define AR_SEPRANK_ROLE_EMBED 300
#define AR_SEPRANK_ROLE_TOKENS 301
#define AR_SEPRANK_ROLE_POSITIONS 302
#define AR_SEPRANK_ROLE_MOD_EMBED 310
/* min(d, r). */
size_t ar_seprank_embed_m(const ar_seprank_config *cfg);
/* The embedding block: r >= 1, vocabulary and positions only with an
 * embedding, no forced rank over Q, templates <= V. */
int ar_seprank_embed_check(const ar_seprank_config *cfg, ar_error *err);
/* templates (d x m) = E z_1 .. E z_m; offsets (d x n, or NULL) = p_1 .. p_n. */
int ar_seprank_embed_float_inputs(const ar_seprank_config *cfg, size_t m,
                                  ar_matrix *templates, ar_matrix *offsets);
/* The same over F_p for prime k: templates m*d residues (template t at t*d),
 * offsets n*d residues or NULL. */
int ar_seprank_embed_mod_inputs(const ar_seprank_config *cfg, size_t prime_index, size_t m,
                                uint64_t *templates, uint64_t *offsets);

/* cfg, or the defaults written to *defaults when cfg is NULL. */
const ar_seprank_config *ar_seprank_config_or_default(const ar_seprank_config *cfg,
                                                      ar_seprank_config *defaults);

#endif
