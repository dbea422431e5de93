/* Structure of a mask pattern for the masked analysis (internal). */
#ifndef ATTNRANK_MASKED_BLOCKS_H
#define ATTNRANK_MASKED_BLOCKS_H

#include <stddef.h>
#include "masked_internal.h"

/* Label each query with its independent block: queries and keys linked by
 * allowed pairs (documents are separate blocks).  block_of_query: n. */
int ar_blocks_find(const unsigned char *allowed, size_t n, size_t *block_of_query,
                   size_t *nblocks);

/* A sub-pattern: some queries and keys of an n x n pattern (arrays owned
 * by the caller, reordered in place by the functions below). */
typedef struct ar_subpattern {
    size_t *queries, nqueries;
    size_t *keys, nkeys;
} ar_subpattern;

/* Allowed keys of sorted query a inside the sub-pattern. */
size_t ar_sub_row_count(const ar_subpattern *s, const unsigned char *allowed, size_t n, size_t a);

/* Sort the queries by their number of allowed keys and return 1 when each
 * query's keys lie inside the next one's (a staircase), 0 when not, -1 when
 * out of memory. */
int ar_sub_sort_chain(ar_subpattern *s, const unsigned char *allowed, size_t n);

/* Exact minimal rank (at tolerance tau) of a staircase sub-pattern, sorted
 * by ar_sub_sort_chain, of the row-query logits lrow: shift removal on a
 * key every query sees, then the innovation greedy.  When ufull, vfull
 * (n x cap) are given, the factors are written into the rows of the
 * sub-pattern's queries and keys (the shift key's row of vfull is zero). */
int ar_sub_staircase(ar_subpattern *s, const unsigned char *allowed, size_t n,
                     const ar_matrix *lrow, double tau, ar_matrix *ufull, ar_matrix *vfull,
                     ar_staircase_result *res);

#endif
