/* Structure of a mask pattern for the masked analysis: independent blocks
 * (connected components of queries and keys), the staircase test, and the
 * staircase solve of any sub-pattern (src/theory/masked/masked_blocks.h). */
#include "masked_blocks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- connected components (union-find over queries 0..n-1, keys n..2n-1) ---- */

static size_t find(size_t *parent, size_t a)
{
    while (parent[a] != a) {
        parent[a] = parent[parent[a]];
        a = parent[a];
    }
    return a;
}

int ar_blocks_find(const unsigned char *allowed, size_t n, size_t *block_of_query,
                   size_t *nblocks)
{
    size_t *parent = malloc(2 * n * sizeof *parent);
    size_t *label = malloc(2 * n * sizeof *label);
    if (parent == NULL || label == NULL) {
        free(parent);
        free(label);
        return AR_ENOMEM;
    }
    for (size_t a = 0; a < 2 * n; a++)
        parent[a] = a;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (allowed[i * n + j]) {
                size_t a = find(parent, i), b = find(parent, n + j);
                if (a != b)
                    parent[a] = b;
            }
    size_t count = 0;
    for (size_t a = 0; a < 2 * n; a++)
        label[a] = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t root = find(parent, i);
        if (label[root] == SIZE_MAX)
            label[root] = count++;
        block_of_query[i] = label[root];
    }
    *nblocks = count;
    free(parent);
    free(label);
    return AR_OK;
}

/* ---- sub-patterns ---- */

size_t ar_sub_row_count(const ar_subpattern *s, const unsigned char *allowed, size_t n,
                        size_t a)
{
    size_t count = 0, q = s->queries[a];
    for (size_t b = 0; b < s->nkeys; b++)
        count += allowed[q * n + s->keys[b]] != 0;
    return count;
}

int ar_sub_sort_chain(ar_subpattern *s, const unsigned char *allowed, size_t n)
{
    /* A stable counting sort on the row counts (qsort's comparator would need
     * the pattern through global state). */
    size_t *count = malloc((s->nqueries + 1) * sizeof *count);
    size_t *order = malloc((s->nqueries + 1) * sizeof *order);
    if (count == NULL || order == NULL) {
        free(count);
        free(order);
        return -1;
    }
    for (size_t a = 0; a < s->nqueries; a++)
        count[a] = ar_sub_row_count(s, allowed, n, a);
    size_t most = 0;
    for (size_t a = 0; a < s->nqueries; a++)
        most = count[a] > most ? count[a] : most;
    size_t *bucket = calloc(most + 2, sizeof *bucket);
    if (bucket == NULL) {
        free(count);
        free(order);
        return -1;
    }
    for (size_t a = 0; a < s->nqueries; a++)
        bucket[count[a] + 1]++;
    for (size_t c = 1; c <= most + 1; c++)
        bucket[c] += bucket[c - 1];
    for (size_t a = 0; a < s->nqueries; a++)
        order[bucket[count[a]]++] = s->queries[a];
    memcpy(s->queries, order, s->nqueries * sizeof *order);
    free(bucket);
    free(count);
    free(order);
    /* chain: each row's keys inside the next row's */
    for (size_t a = 0; a + 1 < s->nqueries; a++) {
        size_t q = s->queries[a], next = s->queries[a + 1];
        for (size_t b = 0; b < s->nkeys; b++) {
            size_t key = s->keys[b];
            if (allowed[q * n + key] && !allowed[next * n + key])
                return 0;
        }
    }
    return 1;
}

/* Keys in the order they first appear along the sorted queries; start[c]
 * = the first sorted query that sees key c.  Keys no query sees are
 * dropped.  Returns the number of keys kept. */
static size_t order_keys(ar_subpattern *s, const unsigned char *allowed, size_t n, size_t *start)
{
    size_t kept = 0;
    unsigned char *taken = calloc(s->nkeys, 1);
    size_t *order = malloc(s->nkeys * sizeof *order);
    if (taken == NULL || order == NULL) {
        free(taken);
        free(order);
        return SIZE_MAX;
    }
    for (size_t a = 0; a < s->nqueries; a++) {
        size_t q = s->queries[a];
        for (size_t b = 0; b < s->nkeys; b++)
            if (!taken[b] && allowed[q * n + s->keys[b]]) {
                taken[b] = 1;
                start[kept] = a;
                order[kept++] = s->keys[b];
            }
    }
    memcpy(s->keys, order, kept * sizeof *order);
    s->nkeys = kept;
    free(taken);
    free(order);
    return kept;
}

int ar_sub_staircase(ar_subpattern *s, const unsigned char *allowed, size_t n,
                     const ar_matrix *lrow, double tau, ar_matrix *ufull, ar_matrix *vfull,
                     ar_staircase_result *res)
{
    size_t rows = s->nqueries;
    size_t *start = malloc((s->nkeys + 1) * sizeof *start);
    if (start == NULL)
        return AR_ENOMEM;
    size_t keys = order_keys(s, allowed, n, start);
    if (keys == SIZE_MAX) {
        free(start);
        return AR_ENOMEM;
    }
    res->rank = 0;
    res->tau = tau;
    res->min_innovative = INFINITY;
    res->max_not_innovative = 0.0;
    if (rows == 0 || keys <= 1) { /* one key per query: any shift gives 0 logits */
        free(start);
        return AR_OK;
    }
    /* Shift removal: the first key is seen by every query of the chain, so
     * c_i = -L[i, key0] is an optimal shift; D drops that column. */
    size_t cols = keys - 1, cap = rows < cols ? rows : cols;
    ar_matrix d = ar_matrix_empty(), u = ar_matrix_empty(), v = ar_matrix_empty();
    int rc = ar_matrix_alloc(&d, rows, cols, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&u, rows, cap, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&v, cols, cap, NULL);
    size_t key0 = s->keys[0];
    for (size_t c = 0; rc == AR_OK && c < cols; c++) {
        size_t key = s->keys[c + 1];
        start[c] = start[c + 1];
        for (size_t a = start[c]; a < rows; a++) {
            size_t q = s->queries[a];
            AR_AT(&d, a, c) = AR_AT(lrow, q, key) - AR_AT(lrow, q, key0);
        }
    }
    if (rc == AR_OK)
        rc = ar_staircase_complete(&d, start, tau, &u, &v, NULL, res);
    if (rc == AR_OK && ufull != NULL && vfull != NULL && res->rank > ufull->cols)
        rc = AR_ESIZE;
    for (size_t t = 0; rc == AR_OK && ufull != NULL && vfull != NULL && t < res->rank; t++) {
        for (size_t a = 0; a < rows; a++)
            AR_AT(ufull, s->queries[a], t) = AR_AT(&u, a, t);
        for (size_t c = 0; c < cols; c++)
            AR_AT(vfull, s->keys[c + 1], t) = AR_AT(&v, c, t);
        AR_AT(vfull, key0, t) = 0.0;
    }
    ar_matrix_free(&d);
    ar_matrix_free(&u);
    ar_matrix_free(&v);
    free(start);
    return rc;
}
