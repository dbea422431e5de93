/* An attention map against a mask: inference of the mask from the exact
 * zero pattern, and the check that a map respects a stated mask
 * (include/attnrank/mask.h). */
#include "attnrank/mask.h"
#include "masked_internal.h"
#include "theory/masked/mask_internal.h"
#include "core/matrix_internal.h"

#include <float.h>
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
                                    "({opt:smooth} only lifts zeros)",
                                    i, j, v);
        }
    return AR_OK;
}

/* Entries inside the mask that are exactly 0. */
static size_t zeros_inside(const ar_matrix *p, ar_axis axis, const ar_mask *mask)
{
    size_t n = p->rows, count = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            count += entry(p, axis, i, j) == 0.0 && ar_mask_allows(mask, n, i, j);
    return count;
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
            if (in && v == 0.0) {
                size_t zeros = zeros_inside(p, axis, mask);
                return ar_error_set(err, AR_EDOMAIN,
                                    "entry (%zu, %zu) = 0 lies inside the %s mask (query %zu, "
                                    "key %zu; %zu zero%s inside it in all): a probability that "
                                    "underflowed (float16?); smoothing inside the mask lifts it "
                                    "({opt:smooth=EPS})",
                                    r, c, name, i, j, zeros, zeros == 1 ? "" : "s");
            }
            if (!in && v != 0.0)
                return ar_error_set(err, AR_EDOMAIN,
                                    "entry (%zu, %zu) = %.6g lies outside the %s mask (query "
                                    "%zu, key %zu), where attention must be exactly 0 (wrong "
                                    "mask or {opt:axis}?)",
                                    r, c, v, name, i, j);
        }
    return AR_OK;
}

/* ---- zeros inside a named kind: underflow or an irregular mask ----
 *
 * When the positive entries form no named kind exactly, the candidates are
 * the named kinds that hold every positive entry, each with its smallest
 * parameters (window: the longest reach back; prefix: the furthest key
 * after a query; sink + window: the best sink count; documents: the finest
 * split).  Each is scored by the likelihood of its zeros as independent
 * holes (a Bernoulli rate estimated inside it) less STRUCTURE_NATS per
 * parameter, so a window that leaves out only a corner of a causal map
 * loses to the causal mask, while a real window, whose outside is far more
 * often zero than its inside, wins.  The holes of the best candidate are
 * then read as underflow when at least half of them lie in queries whose
 * smallest positive entry is below the smallest normal number of the
 * storage precision (the values near a zero are at the underflow
 * threshold), or when they are few (at most a tenth of the kind). */

#define STRUCTURE_NATS 14.0 /* the evidence a parameter must buy: e^14 ~ 1.2e6 */

typedef struct structure {
    ar_mask kind;  /* parametric; documents own their lengths */
    size_t size;   /* allowed entries */
    size_t params; /* parameters of the kind */
    double score;
} structure;

/* Bernoulli log-likelihood of holes zeros among size entries, less the
 * cost of the parameters. */
static double structure_score(size_t size, size_t holes, size_t params)
{
    double ll = 0.0;
    if (holes > 0 && holes < size) {
        double q = (double)holes / (double)size;
        ll = (double)holes * log(q) + (double)(size - holes) * log1p(-q);
    }
    return ll - STRUCTURE_NATS * (double)params;
}

/* Keep kind in best when it scores higher (ties keep the earlier one);
 * the loser is freed. */
static void offer(structure *best, ar_mask kind, size_t size, size_t params, size_t positives)
{
    double score = structure_score(size, size - positives, params);
    if (best->size == 0 || score > best->score) {
        ar_mask_free(&best->kind);
        best->kind = kind;
        best->size = size;
        best->params = params;
        best->score = score;
    } else {
        ar_mask_free(&kind);
    }
}

static size_t triangle(size_t m)
{
    return m * (m + 1) / 2;
}

/* Allowed entries of window w at length n. */
static size_t window_size(size_t n, size_t w)
{
    return w >= n ? triangle(n) : triangle(w) + (n - w) * w;
}

/* The best named kind holding every positive entry of pos (n x n,
 * query-major).  AR_ENOMEM only (documents). */
static int best_structure(const unsigned char *pos, size_t n, structure *best)
{
    size_t positives = 0, back = 1, reach = 1, after = 0;
    size_t *colback = calloc(n, sizeof *colback); /* per key: longest reach back to it */
    size_t *minkey = malloc(n * sizeof *minkey);  /* per query: first positive key */
    if (colback == NULL || minkey == NULL) {
        free(colback);
        free(minkey);
        return AR_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        minkey[i] = n;
        for (size_t j = 0; j < n; j++) {
            if (!pos[i * n + j])
                continue;
            positives++;
            if (minkey[i] == n)
                minkey[i] = j;
            if (j <= i) {
                if (i - j + 1 > back)
                    back = i - j + 1;
                if (i - j + 1 > colback[j])
                    colback[j] = i - j + 1;
            } else {
                if (j - i + 1 > reach)
                    reach = j - i + 1;
                if (j + 1 > after)
                    after = j + 1;
            }
        }
    }
    best->kind = ar_mask_none();
    best->size = 0;
    ar_mask m = ar_mask_none();
    if (after == 0) { /* every positive entry is causal */
        m.kind = AR_MASK_CAUSAL;
        offer(best, m, triangle(n), 0, positives);
        m.kind = AR_MASK_WINDOW;
        m.w = back;
        offer(best, m, window_size(n, back), 1, positives);
    }
    m = ar_mask_none();
    offer(best, m, n * n, 0, positives);
    m.kind = AR_MASK_BAND;
    m.w = back > reach ? back : reach;
    size_t bw = m.w < n ? m.w : n;
    offer(best, m, n * n - 2 * triangle(n - bw), 1, positives);
    if (after > 0 && after < n) {
        m = ar_mask_none();
        m.kind = AR_MASK_PREFIX;
        m.p = after;
        offer(best, m, triangle(n) + triangle(after - 1), 1, positives);
    }
    /* sink S + window W: keys < S for every query, the window for keys >= S */
    size_t suffix = 0;
    for (size_t s = n - 1; s >= 1; s--) {
        if (colback[s] > suffix)
            suffix = colback[s];
        if (s < after)
            break;
        size_t w = suffix ? suffix : 1, size = 0;
        for (size_t i = 0; i < n; i++) {
            size_t lo = i + 1 >= w ? i + 1 - w : 0;
            size += s + (i >= s ? i - (lo > s ? lo : s) + 1 : 0);
        }
        m = ar_mask_none();
        m.kind = AR_MASK_SINK_WINDOW;
        m.sinks = s;
        m.w = w;
        offer(best, m, size, 2, positives);
    }
    /* documents: a new one may start at b when no query from b on sees a key before b */
    if (after == 0) {
        size_t *lengths = malloc(n * sizeof *lengths), count = 0, start = n, low = n;
        if (lengths == NULL) {
            free(colback);
            free(minkey);
            return AR_ENOMEM;
        }
        for (size_t b = n; b-- > 1;) {
            if (minkey[b] < low)
                low = minkey[b];
            if (low >= b) {
                lengths[count++] = start - b;
                start = b;
            }
        }
        lengths[count++] = start;
        size_t size = 0;
        for (size_t k = 0; k < count / 2; k++) { /* first document first */
            size_t t = lengths[k];
            lengths[k] = lengths[count - 1 - k];
            lengths[count - 1 - k] = t;
        }
        for (size_t k = 0; k < count; k++)
            size += triangle(lengths[k]);
        m = ar_mask_none();
        m.kind = AR_MASK_DOCUMENTS;
        m.ndocs = count;
        m.lengths = lengths;
        if (count > 1)
            offer(best, m, size, count - 1, positives);
        else
            ar_mask_free(&m);
    }
    free(colback);
    free(minkey);
    return AR_OK;
}

/* 1 when v is a float16 number (binary16: 11 significant bits, normal from
 * 2^-14, subnormal steps of 2^-24, at most 65504). */
static int is_half(double v)
{
    if (v == 0.0)
        return 1;
    if (!(fabs(v) <= 65504.0))
        return 0;
    int e;
    double m = frexp(fabs(v), &e);
    double scaled = fabs(v) >= 0x1p-14 ? ldexp(m, 11) : ldexp(fabs(v), 24);
    return scaled == floor(scaled);
}

/* The storage precision whose underflow explains zeros: the declared one,
 * or float16 / float32 when every entry is a number of that type (a map
 * converted from float16 to float64 keeps float16's underflow). */
static ar_precision storage_precision(const ar_matrix *p, ar_precision declared)
{
    if (declared == AR_PREC_F16)
        return declared;
    int half = 1, single = 1;
    for (size_t j = 0; j < p->cols && (half || single); j++)
        for (size_t i = 0; i < p->rows && (half || single); i++) {
            double v = AR_AT(p, i, j);
            half = half && is_half(v);
            single = single && (double)(float)v == v;
        }
    if (half)
        return AR_PREC_F16;
    if (declared != AR_PREC_F64)
        return declared;
    return single ? AR_PREC_F32 : AR_PREC_F64;
}

/* Smallest normal number of a precision. */
static double smallest_normal(ar_precision prec)
{
    switch (prec) {
    case AR_PREC_F16:
        return 0x1p-14;
    case AR_PREC_F32:
    case AR_PREC_BF16:
        return (double)FLT_MIN;
    default:
        return DBL_MIN;
    }
}

/* The zero pattern of p (the pattern mask found) is no named kind: refuse
 * it when the zeros inside the best named kind look like underflow or are
 * few; take the kind when it has no zero inside; otherwise leave the
 * pattern (an irregular mask). */
static int refuse_holes(const ar_matrix *p, ar_axis axis, ar_precision declared,
                        ar_mask *found, ar_error *err)
{
    size_t n = p->rows;
    structure best;
    if (best_structure(found->allowed, n, &best) != AR_OK)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    ar_precision prec = storage_precision(p, declared);
    double tiny = smallest_normal(prec);
    size_t holes = 0, near_underflow = 0, fq = 0, fk = 0;
    for (size_t i = 0; i < n; i++) {
        double low = INFINITY;
        size_t here = 0;
        for (size_t j = 0; j < n; j++) {
            if (!ar_mask_allows(&best.kind, n, i, j))
                continue;
            double v = entry(p, axis, i, j);
            if (v > 0.0 && v < low)
                low = v;
            if (v == 0.0 && here++ == 0 && holes == 0) {
                fq = i;
                fk = j;
            }
        }
        holes += here;
        if (low < tiny)
            near_underflow += here;
    }
    if (holes == 0) { /* exactly the kind (ar_mask_simplify reads fewer candidates) */
        ar_mask_free(found);
        *found = best.kind;
        return AR_OK;
    }
    int underflow = 2 * near_underflow >= holes;
    int few = holes * 10 <= best.size;
    if (!underflow && !few) {
        ar_mask_free(&best.kind);
        return AR_OK;
    }
    char name[64];
    ar_mask_format(&best.kind, name, sizeof name);
    ar_mask_free(&best.kind);
    size_t r, c;
    position(axis, fq, fk, &r, &c);
    if (underflow)
        return ar_error_set(err, AR_EDOMAIN,
                            "mask auto: the zeros look like the %s mask with %zu underflowed "
                            "entries inside it (first: entry (%zu, %zu) = 0), in %ss that also "
                            "hold entries below %s's smallest normal %.2g; state the mask "
                            "({opt:mask=%s}) and smooth the zeros ({opt:smooth=EPS}), or pass "
                            "the pattern ({opt:mask=file:PATH}, or a boolean array) if it is "
                            "intended",
                            name, holes, r, c, line_word(axis), ar_precision_name(prec), tiny,
                            name);
    return ar_error_set(err, AR_EDOMAIN,
                        "mask auto: the zeros look like the %s mask with holes: %zu zero%s "
                        "inside it (first: entry (%zu, %zu) = 0), most likely underflow "
                        "(float16?); state the mask ({opt:mask=%s}) and smooth the zeros "
                        "({opt:smooth=EPS}), or pass the pattern ({opt:mask=file:PATH}, or a "
                        "boolean array) if it is intended",
                        name, holes, holes == 1 ? "" : "s", r, c, name);
}

int ar_cm_mask_infer(const ar_matrix *p, ar_axis axis, ar_precision prec, ar_mask *mask,
                     ar_error *err)
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
    if (mask->kind == AR_MASK_PATTERN && (rc = refuse_holes(p, axis, prec, mask, err)) != AR_OK)
        ar_mask_free(mask);
    return rc;
}

/* ---- public entry points on views ---- */

int ar_mask_check_map(ar_cview p, ar_axis axis, const ar_mask *mask, ar_error *err)
{
    if (ar_cview_check(p, err) != AR_OK)
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
    if (ar_cview_check(p, err) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "invalid matrix view");
    ar_colmajor c;
    int rc = ar_colmajor_get(&c, p);
    if (rc == AR_OK)
        rc = ar_cm_mask_infer(&c.m, axis, AR_PREC_F64, mask, err);
    else
        ar_error_set(err, rc, "out of memory");
    ar_colmajor_release(&c);
    return rc;
}
