/* The minimal head size under a mask: the exact staircase count, or lower
 * and upper bounds (src/theory/masked/masked_analysis.h;
 * docs/theory/masked-attention.md). */
#include "masked_analysis.h"
#include "masked_blocks.h"
#include "attnrank/spectrum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"

/* Sub-patterns examined for lower bounds are capped at this many entries,
 * so the bounds cost a few SVDs of at most this size. */
#define LOWER_MAX_ENTRIES ((size_t)1 << 20)

int ar_masked_confirm(ar_masked_workspace *ws, const ar_matrix *u, const ar_matrix *v,
                      size_t rank, const ar_masked_result *r, int *confirmed, double *max_abs)
{
    ar_certificate c;
    memset(&c, 0, sizeof c);
    size_t k = rank > 0 ? rank : 1;
    int rc = ar_masked_weights(u, v, rank, k, ws->x_given ? &ws->pinv : NULL, &c.wq, &c.wk);
    if (rc == AR_OK)
        rc = ar_masked_forward_check(&c.wq, &c.wk, ws->x_given ? &ws->x : NULL, &ws->prow,
                                     &ws->lrow, ws->allowed, ws->half.data ? &ws->half : NULL,
                                     &c);
    ar_certificate_free(&c);
    *max_abs = rc == AR_OK ? c.max_abs : INFINITY;
    /* The storage rule confirms what rounds to the stored map, entry by entry. */
    *confirmed = rc == AR_OK && (r->storage_rule ? c.rounding_ratio <= 1.0
                                                 : c.max_abs <= r->accuracy);
    return rc;
}

/* ---- fully specified blocks: spectra of A Pi ---- */

/* Singular values of the block rows x keys of L with each row centred. */
static int block_spectrum(ar_masked_workspace *ws, const size_t *rows, size_t p,
                          const size_t *keys, size_t q, ar_block_spectrum *out)
{
    ar_matrix a = ar_matrix_empty();
    size_t k = p < q ? p : q;
    out->sv = malloc((k > 0 ? k : 1) * sizeof *out->sv);
    int rc = out->sv == NULL ? AR_ENOMEM : ar_matrix_alloc(&a, p, q, NULL);
    for (size_t t = 0; rc == AR_OK && t < p; t++) {
        double mean = 0.0;
        for (size_t b = 0; b < q; b++)
            mean += AR_AT(&ws->lrow, rows[t], keys[b]);
        mean /= (double)q;
        for (size_t b = 0; b < q; b++)
            AR_AT(&a, t, b) = AR_AT(&ws->lrow, rows[t], keys[b]) - mean;
    }
    if (rc == AR_OK)
        rc = ar_cm_svals(&a, out->sv);
    out->eta_fro = 0.0;
    if (rc == AR_OK && ws->eta.data != NULL) {
        double sum = 0.0;
        for (size_t t = 0; t < p; t++)
            for (size_t b = 0; b < q; b++)
                sum += AR_AT(&ws->eta, rows[t], keys[b]) * AR_AT(&ws->eta, rows[t], keys[b]);
        out->eta_fro = sqrt(sum);
    }
    ar_matrix_free(&a);
    if (rc != AR_OK) {
        free(out->sv);
        out->sv = NULL;
        return rc;
    }
    out->p = p;
    out->q = q;
    out->count = k;
    return AR_OK;
}

/* Keep the spectrum of a fully specified block and raise the tau-robust
 * lower bound #{sigma > tau sqrt(p q)}.  When the slots are full, the block
 * with the smallest side gives way to a larger one: the larger blocks carry
 * the bounds. */
static int add_block(ar_masked_workspace *ws, const size_t *rows, size_t p, const size_t *keys,
                     size_t q, ar_masked_result *r)
{
    if (p == 0 || q < 2 || p * q > LOWER_MAX_ENTRIES)
        return AR_OK;
    size_t side = p < q ? p : q, slot = ws->nspec;
    if (slot == AR_MASKED_MAX_SPECTRA) {
        size_t smallest = 0;
        for (size_t b = 1; b < ws->nspec; b++)
            if (ws->spec[b].count < ws->spec[smallest].count)
                smallest = b;
        if (ws->spec[smallest].count >= side)
            return AR_OK;
        slot = smallest;
        free(ws->spec[slot].sv);
        ws->spec[slot].sv = NULL;
    }
    ar_block_spectrum *s = &ws->spec[slot];
    int rc = block_spectrum(ws, rows, p, keys, q, s);
    if (rc != AR_OK) {
        if (slot < ws->nspec) /* the replaced slot is empty now: drop it */
            ws->spec[slot] = ws->spec[--ws->nspec];
        return rc;
    }
    if (slot == ws->nspec)
        ws->nspec++;
    size_t robust = ar_rank_count_above(s->sv, s->count, r->tau * sqrt((double)(p * q)));
    if (robust > r->block_lower)
        r->block_lower = robust;
    return AR_OK;
}

/* Staircase blocks: sorted query s and every later one see the keys of
 * query s (the chain), a fully specified block.  Examine the most square
 * one and a few others along the staircase. */
static int staircase_blocks(ar_masked_workspace *ws, const ar_subpattern *sub,
                            ar_masked_result *r)
{
    size_t rows = sub->nqueries, n = ws->n, best = 0, best_s = 0;
    size_t *keys = malloc(n * sizeof *keys);
    if (keys == NULL)
        return AR_ENOMEM;
    for (size_t s = 0; s < rows; s++) {
        size_t q = ar_sub_row_count(sub, ws->allowed, n, s);
        size_t side = rows - s < q ? rows - s : q;
        if (side > best) {
            best = side;
            best_s = s;
        }
    }
    size_t picks[4] = {best_s, rows / 4, rows / 2, (3 * rows) / 4};
    int rc = AR_OK;
    for (size_t t = 0; t < 4 && rc == AR_OK; t++) {
        if (t > 0 && picks[t] == best_s)
            continue;
        size_t s = picks[t], q = 0, query = sub->queries[s];
        for (size_t j = 0; j < n; j++)
            if (ws->allowed[query * n + j])
                keys[q++] = j;
        rc = add_block(ws, sub->queries + s, rows - s, keys, q, r);
    }
    free(keys);
    return rc;
}

/* ---- blocks of the pattern ---- */

typedef struct pattern_blocks {
    size_t count;
    ar_subpattern *sub;     /* one per block */
    size_t *qstore, *kstore;
    int all_staircase;
} pattern_blocks;

static void free_blocks(pattern_blocks *pb)
{
    free(pb->sub);
    free(pb->qstore);
    free(pb->kstore);
    memset(pb, 0, sizeof *pb);
}

static int split_blocks(const ar_masked_workspace *ws, pattern_blocks *pb)
{
    size_t n = ws->n;
    memset(pb, 0, sizeof *pb);
    size_t *block = malloc(n * sizeof *block);
    pb->qstore = malloc(n * sizeof *pb->qstore);
    pb->kstore = malloc(n * sizeof *pb->kstore);
    int rc = block && pb->qstore && pb->kstore ? AR_OK : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_blocks_find(ws->allowed, n, block, &pb->count);
    if (rc == AR_OK && (pb->sub = calloc(pb->count, sizeof *pb->sub)) == NULL)
        rc = AR_ENOMEM;
    if (rc == AR_OK) {
        /* queries grouped by block, in index order; keys by the block of
         * the first query that sees them (keys no query sees are free) */
        size_t *key_block = malloc(n * sizeof *key_block);
        rc = key_block ? AR_OK : AR_ENOMEM;
        for (size_t j = 0; rc == AR_OK && j < n; j++) {
            key_block[j] = SIZE_MAX;
            for (size_t i = 0; i < n && key_block[j] == SIZE_MAX; i++)
                if (ws->allowed[i * n + j])
                    key_block[j] = block[i];
        }
        size_t qpos = 0, kpos = 0;
        for (size_t b = 0; rc == AR_OK && b < pb->count; b++) {
            pb->sub[b].queries = pb->qstore + qpos;
            for (size_t i = 0; i < n; i++)
                if (block[i] == b)
                    pb->qstore[qpos++] = i;
            pb->sub[b].nqueries = (size_t)(pb->qstore + qpos - pb->sub[b].queries);
            pb->sub[b].keys = pb->kstore + kpos;
            for (size_t j = 0; j < n; j++)
                if (key_block[j] == b)
                    pb->kstore[kpos++] = j;
            pb->sub[b].nkeys = (size_t)(pb->kstore + kpos - pb->sub[b].keys);
        }
        free(key_block);
    }
    pb->all_staircase = 1;
    for (size_t b = 0; rc == AR_OK && b < pb->count; b++) {
        int chain = ar_sub_sort_chain(&pb->sub[b], ws->allowed, n);
        if (chain < 0)
            rc = AR_ENOMEM;
        pb->all_staircase &= chain == 1;
    }
    free(block);
    if (rc != AR_OK)
        free_blocks(pb);
    return rc;
}

/* ---- exact: every block a staircase ---- */

static void merge_gap(ar_masked_result *r, const ar_staircase_result *s)
{
    if (s->min_innovative < r->min_innovative)
        r->min_innovative = s->min_innovative;
    if (s->max_not_innovative > r->max_not_innovative)
        r->max_not_innovative = s->max_not_innovative;
}

static int solve_staircase(ar_masked_workspace *ws, pattern_blocks *pb, ar_masked_result *r,
                           ar_error *err)
{
    ar_cm_fill(&ws->u, 0.0);
    ar_cm_fill(&ws->v, 0.0);
    size_t rank = 0, largest = 0;
    int rc = AR_OK;
    for (size_t b = 0; b < pb->count && rc == AR_OK; b++) {
        ar_staircase_result s;
        rc = ar_sub_staircase(&pb->sub[b], ws->allowed, ws->n, &ws->lrow, r->tau, &ws->u, &ws->v,
                              &s);
        if (rc != AR_OK)
            break;
        merge_gap(r, &s);
        rank = s.rank > rank ? s.rank : rank;
        if (pb->sub[b].nqueries > pb->sub[largest].nqueries)
            largest = b;
    }
    if (rc == AR_OK)
        rc = staircase_blocks(ws, &pb->sub[largest], r);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "staircase completion failed: %s", ar_strerror(rc));
    int confirmed = 0;
    double max_abs;
    rc = ar_masked_confirm(ws, &ws->u, &ws->v, rank, r, &confirmed, &max_abs);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "certificate failed: %s", ar_strerror(rc));
    r->method = AR_MASKED_STAIRCASE;
    ws->rank = rank;
    ws->have_completion = confirmed;
    r->certified = confirmed;
    r->exact = confirmed;
    r->min_head_size = rank;
    r->lower = confirmed ? rank : r->block_lower;
    r->upper = confirmed ? rank : r->n;
    return AR_OK;
}

/* ---- bounds: lower from staircase sub-patterns, upper from completions ---- */

/* Contiguous queries [a, a + len) with the keys of their last query (or the
 * keys all of them share): a staircase there gives an exact count that is a
 * lower bound for the whole mask. */
static int try_sub(ar_masked_workspace *ws, size_t a, size_t len, int shared, size_t *qbuf,
                   size_t *kbuf, ar_masked_result *r)
{
    size_t n = ws->n, last = a + len - 1, nk = 0;
    for (size_t j = 0; j < n; j++) {
        int in = ws->allowed[last * n + j];
        for (size_t i = a; shared && in && i < last; i++)
            in = ws->allowed[i * n + j];
        if (in)
            kbuf[nk++] = j;
    }
    if (nk < 2 || len * nk > LOWER_MAX_ENTRIES)
        return AR_OK;
    for (size_t t = 0; t < len; t++)
        qbuf[t] = a + t;
    if (shared) /* fully specified: also a spectrum for the robust bound */
        add_block(ws, qbuf, len, kbuf, nk, r);
    ar_subpattern sub = {qbuf, len, kbuf, nk};
    int chain = ar_sub_sort_chain(&sub, ws->allowed, n);
    if (chain < 0)
        return AR_ENOMEM;
    if (chain == 0)
        return AR_OK;
    ar_staircase_result s;
    int rc = ar_sub_staircase(&sub, ws->allowed, n, &ws->lrow, r->tau, NULL, NULL, &s);
    if (rc == AR_OK && s.rank > r->lower)
        r->lower = s.rank;
    return rc;
}

static int lower_bounds(ar_masked_workspace *ws, ar_masked_result *r)
{
    size_t n = ws->n, lens[64], nl = 0;
    for (size_t len = 2; len <= n && nl < 40; len *= 2)
        lens[nl++] = len;
    /* the row lengths of the mask itself (a window's w, a band's 2w - 1) */
    size_t widest = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = 0;
        for (size_t j = 0; j < n; j++)
            c += ws->allowed[i * n + j];
        widest = c > widest ? c : widest;
        if (i == n / 2 || i == n - 1)
            lens[nl++] = c;
    }
    lens[nl++] = widest;
    lens[nl++] = (widest + 1) / 2;
    size_t *qbuf = malloc(n * sizeof *qbuf), *kbuf = malloc(n * sizeof *kbuf);
    int rc = qbuf && kbuf ? AR_OK : AR_ENOMEM;
    for (size_t t = 0; t < nl && rc == AR_OK; t++) {
        size_t len = lens[t];
        if (len == 0 || len > n)
            continue;
        size_t starts[3] = {0, (n - len) / 2, n - len};
        for (size_t s = 0; s < 3 && rc == AR_OK; s++)
            for (int shared = 0; shared < 2 && rc == AR_OK; shared++)
                rc = try_sub(ws, starts[s], len, shared, qbuf, kbuf, r);
    }
    free(qbuf);
    free(kbuf);
    return rc;
}

/* Upper bound for any pattern: the greedy on L with each query's first
 * allowed key as its shift (not the optimal shift, so only a bound). */
static int greedy_any_pattern(ar_masked_workspace *ws, ar_matrix *u, ar_matrix *v,
                              ar_masked_result *r, size_t *rank)
{
    size_t n = ws->n;
    ar_matrix d = ar_matrix_empty();
    size_t *count = calloc(n, sizeof *count), *store = malloc(n * n * sizeof *store);
    size_t **rows_of = malloc(n * sizeof *rows_of), *pivot = malloc(n * sizeof *pivot);
    int rc = count && store && rows_of && pivot ? ar_matrix_alloc(&d, n, n, NULL) : AR_ENOMEM;
    for (size_t i = 0; rc == AR_OK && i < n; i++)
        for (pivot[i] = 0; !ws->allowed[i * n + pivot[i]]; pivot[i]++)
            ;
    for (size_t j = 0; rc == AR_OK && j < n; j++) {
        rows_of[j] = store + j * n;
        for (size_t i = 0; i < n; i++)
            if (ws->allowed[i * n + j]) {
                rows_of[j][count[j]++] = i;
                AR_AT(&d, i, j) = AR_AT(&ws->lrow, i, j) - AR_AT(&ws->lrow, i, pivot[i]);
            }
    }
    ar_staircase_result s;
    if (rc == AR_OK)
        rc = ar_pattern_complete(&d, (const size_t *const *)rows_of, count, r->tau, u, v, &s);
    if (rc == AR_OK)
        *rank = s.rank;
    ar_matrix_free(&d);
    free(count);
    free(store);
    free(rows_of);
    free(pivot);
    return rc;
}

static int solve_bounds(ar_masked_workspace *ws, const ar_masked_opts *o, ar_masked_result *r,
                        ar_error *err)
{
    size_t n = ws->n;
    r->method = AR_MASKED_BOUNDS;
    int rc = lower_bounds(ws, r);
    if (rc == AR_OK && r->block_lower > r->lower)
        r->lower = r->block_lower;
    ar_matrix u = ar_matrix_empty(), v = ar_matrix_empty();
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&u, n, n, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&v, n, n, err);
    if (rc == AR_OK)
        rc = ar_masked_interval_upper(ws, o, r, &u, &v);
    size_t rank = 0;
    if (rc == AR_OK && (!ws->have_completion || ws->rank > r->lower)) {
        rc = greedy_any_pattern(ws, &u, &v, r, &rank);
        if (rc == AR_OK)
            rc = ar_masked_offer(ws, &u, &v, rank, r);
    }
    ar_matrix_free(&u);
    ar_matrix_free(&v);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "bounds failed: %s", ar_strerror(rc));
    r->certified = ws->have_completion;
    r->upper = ws->have_completion ? ws->rank : n;
    if (r->upper < r->lower) /* a confirmed certificate is a proof: tau misjudged a block */
        r->lower = r->upper;
    r->exact = r->certified && r->lower == r->upper;
    r->min_head_size = r->exact ? r->upper : 0;
    return AR_OK;
}

int ar_masked_solve(ar_masked_workspace *ws, const ar_masked_opts *o, ar_masked_result *r,
                    ar_error *err)
{
    pattern_blocks pb;
    int rc = split_blocks(ws, &pb);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "out of memory");
    r->blocks = pb.count;
    r->min_innovative = INFINITY;
    r->max_not_innovative = 0.0;
    rc = pb.all_staircase ? solve_staircase(ws, &pb, r, err) : solve_bounds(ws, o, r, err);
    free_blocks(&pb);
    return rc;
}
