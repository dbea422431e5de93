/* An attention map against a mask: inference of the mask from the exact
 * zero pattern, and the check that a map respects a stated mask
 * (include/attnrank/mask.h). */
#include "attnrank/mask.h"
#include "masked_internal.h"
#include "theory/mask_internal.h"
#include "core/matrix_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Entry (query, key) of a map stored in the layout of axis. */
static double entry(const ar_matrix *p, ar_axis axis, size_t query, size_t key)
{
    return axis == AR_AXIS_ROW ? AR_AT(p, query, key) : AR_AT(p, key, query);
}

/* Matrix (row, column) of (query, key) in the layout of axis. */
static void position(ar_axis axis, size_t query, size_t key, size_t *row, size_t *col)
{
    *row = axis == AR_AXIS_ROW ? query : key;
    *col = axis == AR_AXIS_ROW ? key : query;
}

static const char *line_word(ar_axis axis)
{
    return axis == AR_AXIS_ROW ? "row" : "column";
}

static int check_shape(const ar_matrix *p, ar_axis axis, ar_error *err)
{
    if (p == NULL || p->data == NULL || p->rows == 0)
        return ar_error_set(err, AR_EINVAL, "NULL or empty map");
    if (p->rows != p->cols)
        return ar_error_set(err, AR_ESIZE, "map must be square, got %zu x %zu", p->rows, p->cols);
    if (axis != AR_AXIS_ROW && axis != AR_AXIS_COL)
        return ar_error_set(err, AR_EINVAL, "bad axis");
    return AR_OK;
}

/* Queries whose every entry is 0 or NaN: padding, which no mask explains. */
static int check_padding(const ar_matrix *p, ar_axis axis, ar_error *err)
{
    size_t n = p->rows, count = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        int live = 0;
        for (size_t j = 0; j < n && !live; j++) {
            double v = entry(p, axis, i, j);
            live = v != 0.0 && !isnan(v);
        }
        if (!live && count++ == 0)
            first = i;
    }
    if (count == 0)
        return AR_OK;
    return ar_error_set(err, AR_EDOMAIN,
                        "%zu %s%s (first: %s %zu) all zero or NaN: padding queries attend to "
                        "nothing; drop them before the analysis",
                        count, line_word(axis), count == 1 ? " is" : "s are", line_word(axis),
                        first);
}

/* Negative and non-finite entries, named by matrix position (smoothing,
 * which lifts zeros, must not hide them). */
int ar_mask_check_values(const ar_matrix *p, ar_error *err)
{
    size_t n = p->rows;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++) {
            double v = AR_AT(p, i, j);
            if (!isfinite(v))
                return ar_error_set(err, AR_ENONFINITE, "entry (%zu, %zu) is %s", i, j,
                                    isnan(v) ? "NaN" : "infinite");
            if (v < 0.0)
                return ar_error_set(err, AR_EDOMAIN,
                                    "entry (%zu, %zu) = %.6g is negative: not a probability "
                                    "(--smooth only lifts zeros)",
                                    i, j, v);
        }
    return AR_OK;
}

int ar_cm_mask_check_map(const ar_matrix *p, ar_axis axis, const ar_mask *mask, ar_error *err)
{
    int rc = check_shape(p, axis, err);
    if (rc == AR_OK)
        rc = ar_mask_check_size(mask, p->rows, err);
    if (rc == AR_OK)
        rc = check_padding(p, axis, err);
    if (rc == AR_OK)
        rc = ar_mask_check_values(p, err);
    if (rc != AR_OK)
        return rc;
    size_t n = p->rows;
    char name[64];
    ar_mask_format(mask, name, sizeof name);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double v = entry(p, axis, i, j);
            int in = ar_mask_allows(mask, n, i, j);
            size_t r, c;
            position(axis, i, j, &r, &c);
            if (in && v == 0.0)
                return ar_error_set(err, AR_EDOMAIN,
                                    "entry (%zu, %zu) = 0 lies inside the %s mask (query %zu, "
                                    "key %zu): a probability that underflowed (float16?); "
                                    "smoothing inside the mask (represent --smooth EPS) lifts it",
                                    r, c, name, i, j);
            if (!in && v != 0.0)
                return ar_error_set(err, AR_EDOMAIN,
                                    "entry (%zu, %zu) = %.6g lies outside the %s mask (query "
                                    "%zu, key %zu), where attention must be exactly 0 (wrong "
                                    "mask or --axis?)",
                                    r, c, v, name, i, j);
        }
    return AR_OK;
}

/* A zero pattern close to a named kind: count the zeros the kind would
 * have inside it and find the first one.  Returns 1 when the support lies
 * inside the kind and at most a tenth of the kind's entries are missing. */
static int near_kind(const ar_matrix *p, ar_axis axis, const ar_mask *kind, size_t *query,
                     size_t *key)
{
    size_t n = p->rows, inside = 0, missing = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int pos = entry(p, axis, i, j) > 0.0;
            int in = ar_mask_allows(kind, n, i, j);
            if (pos && !in)
                return 0;
            inside += in;
            if (in && !pos && missing++ == 0) {
                *query = i;
                *key = j;
            }
        }
    return missing > 0 && missing * 10 <= inside;
}

/* Refuse a pattern that is a causal mask, window or band with a few holes. */
static int refuse_holes(const ar_matrix *p, ar_axis axis, const ar_mask *found, ar_error *err)
{
    size_t n = p->rows, back = 1, reach = 1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (found->allowed[i * n + j]) {
                if (j <= i && i - j + 1 > back)
                    back = i - j + 1;
                if (j > i && j - i + 1 > reach)
                    reach = j - i + 1;
            }
    ar_mask kinds[3] = {ar_mask_none(), ar_mask_none(), ar_mask_none()};
    kinds[0].kind = AR_MASK_CAUSAL;
    kinds[1].kind = AR_MASK_WINDOW;
    kinds[1].w = back;
    kinds[2].kind = AR_MASK_BAND;
    kinds[2].w = back > reach ? back : reach;
    for (size_t k = 0; k < 3; k++) {
        size_t q = 0, key = 0, r, c;
        if (!near_kind(p, axis, &kinds[k], &q, &key))
            continue;
        char name[64];
        ar_mask_format(&kinds[k], name, sizeof name);
        position(axis, q, key, &r, &c);
        return ar_error_set(err, AR_EDOMAIN,
                            "mask auto: the zeros look like the %s mask with holes: entry (%zu, "
                            "%zu) = 0 lies inside it (underflow, e.g. float16?); state the mask "
                            "(--mask %s) and smooth inside it, or pass the pattern as "
                            "--mask file:PATH if it is intended",
                            name, r, c, name);
    }
    return AR_OK;
}

int ar_cm_mask_infer(const ar_matrix *p, ar_axis axis, ar_mask *mask, ar_error *err)
{
    if (mask == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    *mask = ar_mask_none();
    int rc = check_shape(p, axis, err);
    if (rc == AR_OK)
        rc = check_padding(p, axis, err);
    if (rc == AR_OK)
        rc = ar_mask_check_values(p, err);
    if (rc != AR_OK)
        return rc;
    size_t n = p->rows;
    unsigned char *allowed = malloc(n * n);
    if (allowed == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            allowed[i * n + j] = entry(p, axis, i, j) > 0.0;
    rc = ar_mask_from_pattern(mask, allowed, n, err);
    free(allowed);
    if (rc != AR_OK)
        return rc;
    ar_mask_simplify(mask);
    if (mask->kind == AR_MASK_PATTERN && (rc = refuse_holes(p, axis, mask, err)) != AR_OK)
        ar_mask_free(mask);
    return rc;
}

/* ---- public entry points on views ---- */

int ar_mask_check_map(ar_cview p, ar_axis axis, const ar_mask *mask, ar_error *err)
{
    if (ar_cview_check(p) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "invalid matrix view");
    ar_colmajor c;
    int rc = ar_colmajor_get(&c, p);
    if (rc == AR_OK)
        rc = ar_cm_mask_check_map(&c.m, axis, mask, err);
    else
        ar_error_set(err, rc, "out of memory");
    ar_colmajor_release(&c);
    return rc;
}

int ar_mask_infer(ar_cview p, ar_axis axis, ar_mask *mask, ar_error *err)
{
    if (ar_cview_check(p) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "invalid matrix view");
    ar_colmajor c;
    int rc = ar_colmajor_get(&c, p);
    if (rc == AR_OK)
        rc = ar_cm_mask_infer(&c.m, axis, mask, err);
    else
        ar_error_set(err, rc, "out of memory");
    ar_colmajor_release(&c);
    return rc;
}
