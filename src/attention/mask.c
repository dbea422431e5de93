/* Attention masks: the kinds, their textual syntax and their patterns
 * (include/attnrank/mask.h; docs/theory/masked-attention.md). */
#include "attnrank/mask.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ar_mask ar_mask_none(void)
{
    ar_mask m;
    memset(&m, 0, sizeof m);
    m.kind = AR_MASK_NONE;
    return m;
}

void ar_mask_free(ar_mask *mask)
{
    if (mask == NULL)
        return;
    free(mask->lengths);
    free(mask->allowed);
    *mask = ar_mask_none();
}

int ar_mask_copy(ar_mask *dst, const ar_mask *src)
{
    if (dst == NULL || src == NULL)
        return AR_EINVAL;
    *dst = *src;
    dst->lengths = NULL;
    dst->allowed = NULL;
    if (src->ndocs > 0) {
        dst->lengths = malloc(src->ndocs * sizeof *dst->lengths);
        if (dst->lengths == NULL)
            goto oom;
        memcpy(dst->lengths, src->lengths, src->ndocs * sizeof *dst->lengths);
    }
    if (src->allowed != NULL) {
        dst->allowed = malloc(src->n * src->n);
        if (dst->allowed == NULL)
            goto oom;
        memcpy(dst->allowed, src->allowed, src->n * src->n);
    }
    return AR_OK;
oom:
    free(dst->lengths);
    *dst = ar_mask_none();
    return AR_ENOMEM;
}

const char *ar_mask_kind_name(ar_mask_kind kind)
{
    static const char *const names[AR_MASK_NKINDS] = {
        "none", "causal", "window", "band", "prefix", "sink_window", "documents", "file"};
    return (unsigned)kind < AR_MASK_NKINDS ? names[kind] : "unknown";
}

/* ---- parsing ---- */

/* A positive decimal integer filling [s, end); 0 when malformed. */
static size_t parse_count(const char *s, const char *end)
{
    if (s == end || end - s > 18)
        return 0;
    size_t v = 0;
    for (const char *c = s; c < end; c++) {
        if (*c < '0' || *c > '9')
            return 0;
        v = v * 10 + (size_t)(*c - '0');
    }
    return v;
}

/* "name:N" with a positive N: the count, or 0 when text is not of that form. */
static size_t parse_named_count(const char *text, const char *name)
{
    size_t len = strlen(name);
    if (strncmp(text, name, len) != 0 || text[len] != ':')
        return 0;
    const char *s = text + len + 1;
    return parse_count(s, s + strlen(s));
}

static int parse_documents(const char *list, ar_mask *mask, const char *text, ar_error *err)
{
    size_t count = 1;
    for (const char *c = list; *c; c++)
        count += *c == '/';
    size_t *lengths = malloc(count * sizeof *lengths);
    if (lengths == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    const char *s = list;
    for (size_t k = 0; k < count; k++) {
        const char *end = strchr(s, '/');
        if (end == NULL)
            end = s + strlen(s);
        lengths[k] = parse_count(s, end);
        if (lengths[k] == 0) {
            free(lengths);
            return ar_error_set(err, AR_EINVAL,
                                "mask '%s': document %zu: expected a positive length, got '%.*s'",
                                text, k + 1, (int)(end - s), s);
        }
        s = end + 1;
    }
    mask->kind = AR_MASK_DOCUMENTS;
    mask->ndocs = count;
    mask->lengths = lengths;
    return AR_OK;
}

static int parse_sink(const char *text, ar_mask *mask, ar_error *err)
{
    const char *plus = strchr(text, '+');
    size_t sinks = plus ? parse_count(text + 5, plus) : 0;
    if (plus == NULL || sinks == 0)
        return ar_error_set(err, AR_EINVAL,
                            "mask '%s': expected sink:S+window:W or sink:S+causal with S >= 1",
                            text);
    if (strcmp(plus + 1, "causal") == 0) {
        /* The first keys are visible to every query of a causal mask anyway. */
        mask->kind = AR_MASK_CAUSAL;
        return AR_OK;
    }
    size_t w = parse_named_count(plus + 1, "window");
    if (w == 0)
        return ar_error_set(err, AR_EINVAL, "mask '%s': after '+' expected window:W (W >= 1) "
                            "or causal", text);
    mask->kind = AR_MASK_SINK_WINDOW;
    mask->sinks = sinks;
    mask->w = w;
    return AR_OK;
}

int ar_mask_parse(const char *text, ar_mask *mask, ar_error *err)
{
    if (text == NULL || mask == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    *mask = ar_mask_none();
    if (strcmp(text, "none") == 0)
        return AR_OK;
    if (strcmp(text, "causal") == 0) {
        mask->kind = AR_MASK_CAUSAL;
        return AR_OK;
    }
    if (strcmp(text, "auto") == 0 || strncmp(text, "file:", 5) == 0)
        return ar_error_set(err, AR_EINVAL, "mask '%s' needs a map or a file: resolve it first",
                            text);
    if (strncmp(text, "docs:", 5) == 0)
        return parse_documents(text + 5, mask, text, err);
    if (strncmp(text, "sink:", 5) == 0)
        return parse_sink(text, mask, err);
    static const struct {
        const char *name;
        ar_mask_kind kind;
    } counted[] = {{"window", AR_MASK_WINDOW}, {"band", AR_MASK_BAND}, {"prefix", AR_MASK_PREFIX}};
    for (size_t k = 0; k < sizeof counted / sizeof counted[0]; k++) {
        size_t len = strlen(counted[k].name);
        if (strncmp(text, counted[k].name, len) != 0 || text[len] != ':')
            continue;
        size_t v = parse_named_count(text, counted[k].name);
        if (v == 0)
            return ar_error_set(err, AR_EINVAL, "mask '%s': expected %s:N with a positive "
                                "integer N", text, counted[k].name);
        mask->kind = counted[k].kind;
        if (mask->kind == AR_MASK_PREFIX)
            mask->p = v;
        else
            mask->w = v;
        return AR_OK;
    }
    return ar_error_set(err, AR_EINVAL,
                        "unknown mask '%s' (expected none, causal, window:W, band:W, prefix:P, "
                        "sink:S+window:W, docs:N1/N2/..., auto or file:PATH)",
                        text);
}

void ar_mask_format(const ar_mask *mask, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return;
    buf[0] = '\0';
    if (mask == NULL)
        return;
    switch (mask->kind) {
    case AR_MASK_WINDOW:
        snprintf(buf, len, "window:%zu", mask->w);
        break;
    case AR_MASK_BAND:
        snprintf(buf, len, "band:%zu", mask->w);
        break;
    case AR_MASK_PREFIX:
        snprintf(buf, len, "prefix:%zu", mask->p);
        break;
    case AR_MASK_SINK_WINDOW:
        snprintf(buf, len, "sink:%zu+window:%zu", mask->sinks, mask->w);
        break;
    case AR_MASK_DOCUMENTS: {
        size_t used = (size_t)snprintf(buf, len, "docs:");
        for (size_t k = 0; k < mask->ndocs && used < len; k++)
            used += (size_t)snprintf(buf + used, len - used, k ? "/%zu" : "%zu",
                                     mask->lengths[k]);
        break;
    }
    case AR_MASK_PATTERN:
        snprintf(buf, len, "file");
        break;
    default:
        snprintf(buf, len, "%s", ar_mask_kind_name(mask->kind));
    }
}

/* ---- patterns ---- */

int ar_mask_check_size(const ar_mask *mask, size_t n, ar_error *err)
{
    if (mask == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL mask");
    if (n == 0)
        return ar_error_set(err, AR_EINVAL, "sequence length 0");
    if ((unsigned)mask->kind >= AR_MASK_NKINDS)
        return ar_error_set(err, AR_EINVAL, "bad mask kind %d", (int)mask->kind);
    if (mask->kind == AR_MASK_DOCUMENTS) {
        size_t total = 0;
        for (size_t k = 0; k < mask->ndocs; k++) {
            if (mask->lengths[k] == 0 || mask->lengths[k] > n)
                return ar_error_set(err, AR_ESIZE, "document %zu has length %zu (n = %zu)", k + 1,
                                    mask->lengths[k], n);
            total += mask->lengths[k];
        }
        if (total != n)
            return ar_error_set(err, AR_ESIZE,
                                "document lengths sum to %zu, but the sequence has n = %zu", total,
                                n);
    }
    if (mask->kind == AR_MASK_PATTERN && mask->n != n)
        return ar_error_set(err, AR_ESIZE, "mask pattern is %zu x %zu, the map is %zu x %zu",
                            mask->n, mask->n, n, n);
    if ((mask->kind == AR_MASK_WINDOW || mask->kind == AR_MASK_BAND ||
         mask->kind == AR_MASK_SINK_WINDOW) && mask->w == 0)
        return ar_error_set(err, AR_EINVAL, "mask width 0");
    if (mask->kind == AR_MASK_PREFIX && mask->p == 0)
        return ar_error_set(err, AR_EINVAL, "prefix length 0");
    if (mask->kind == AR_MASK_SINK_WINDOW && mask->sinks == 0)
        return ar_error_set(err, AR_EINVAL, "sink count 0");
    return AR_OK;
}

/* Start of the document holding token t. */
static size_t document_start(const ar_mask *mask, size_t t)
{
    size_t start = 0;
    for (size_t k = 0; k < mask->ndocs; k++) {
        if (t < start + mask->lengths[k])
            return start;
        start += mask->lengths[k];
    }
    return start;
}

int ar_mask_allows(const ar_mask *mask, size_t n, size_t query, size_t key)
{
    if (mask == NULL || query >= n || key >= n)
        return 0;
    int causal = key <= query;
    size_t gap = query > key ? query - key : key - query;
    switch (mask->kind) {
    case AR_MASK_NONE:
        return 1;
    case AR_MASK_CAUSAL:
        return causal;
    case AR_MASK_WINDOW:
        return causal && gap < mask->w;
    case AR_MASK_BAND:
        return gap < mask->w;
    case AR_MASK_PREFIX:
        return causal || key < mask->p;
    case AR_MASK_SINK_WINDOW:
        return key < mask->sinks || (causal && gap < mask->w);
    case AR_MASK_DOCUMENTS:
        return causal && document_start(mask, query) <= key;
    case AR_MASK_PATTERN:
        return mask->n == n && mask->allowed[query * n + key] != 0;
    default:
        return 0;
    }
}

int ar_mask_fill_pattern(const ar_mask *mask, size_t n, unsigned char *allowed, ar_error *err)
{
    if (allowed == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    int rc = ar_mask_check_size(mask, n, err);
    if (rc != AR_OK)
        return rc;
    if (mask->kind == AR_MASK_PATTERN) {
        memcpy(allowed, mask->allowed, n * n);
        return AR_OK;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            allowed[i * n + j] = (unsigned char)ar_mask_allows(mask, n, i, j);
    return AR_OK;
}

int ar_mask_from_pattern(ar_mask *mask, const unsigned char *allowed, size_t n, ar_error *err)
{
    if (mask == NULL || allowed == NULL || n == 0)
        return ar_error_set(err, AR_EINVAL, "NULL or empty pattern");
    if (n > SIZE_MAX / n)
        return ar_error_set(err, AR_ENOMEM, "pattern %zu x %zu too large", n, n);
    for (size_t i = 0; i < n; i++) {
        size_t seen = 0;
        for (size_t j = 0; j < n; j++)
            seen += allowed[i * n + j] != 0;
        if (seen == 0)
            return ar_error_set(err, AR_EDOMAIN, "mask: query %zu attends to no key", i);
    }
    unsigned char *copy = malloc(n * n);
    if (copy == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    for (size_t k = 0; k < n * n; k++)
        copy[k] = allowed[k] != 0;
    *mask = ar_mask_none();
    mask->kind = AR_MASK_PATTERN;
    mask->n = n;
    mask->allowed = copy;
    return AR_OK;
}

/* A mask of a parametric kind; zero parameters become 1 (a candidate that
 * then fails the comparison). */
static ar_mask parametric(ar_mask_kind kind, size_t w, size_t p, size_t sinks)
{
    ar_mask m = ar_mask_none();
    m.kind = kind;
    m.w = w ? w : 1;
    m.p = p ? p : 1;
    m.sinks = sinks ? sinks : 1;
    return m;
}

/* 1 when the parametric mask m has exactly the pattern of pat at size n. */
static int pattern_equals(const ar_mask *m, const ar_mask *pat)
{
    size_t n = pat->n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (ar_mask_allows(m, n, i, j) != pat->allowed[i * n + j])
                return 0;
    return 1;
}

/* Lengths of the documents a pattern would have: a new document starts at
 * query i when i sees no key before itself.  Returns the count (0: no
 * memory). */
static size_t guess_documents(const ar_mask *pat, size_t *lengths)
{
    size_t n = pat->n, count = 0, start = 0;
    for (size_t i = 1; i <= n; i++)
        if (i == n || (pat->allowed[i * n + i] && (i == 0 || !pat->allowed[i * n + i - 1]))) {
            lengths[count++] = i - start;
            start = i;
        }
    return count;
}

void ar_mask_simplify(ar_mask *mask)
{
    if (mask == NULL || mask->kind != AR_MASK_PATTERN || mask->allowed == NULL)
        return;
    size_t n = mask->n;
    const unsigned char *a = mask->allowed;
    /* The parameters are read off the pattern, then the whole pattern is
     * compared, so a candidate is accepted only when it is exact. */
    size_t reach = 0, back = 0, prefix = 0, sinks = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (a[i * n + j]) {
                if (j <= i && i - j + 1 > back)
                    back = i - j + 1;
                if (j > i && j - i + 1 > reach)
                    reach = j - i + 1;
            }
    while (prefix < n && a[prefix] /* query 0 sees key prefix */)
        prefix++;
    while (sinks < n && a[(n - 1) * n + sinks])
        sinks++;
    /* sink + window: the last query sees the sinks, then its window. */
    size_t w_tail = 0;
    for (size_t j = n; j-- > 0 && a[(n - 1) * n + j];)
        w_tail++;
    const ar_mask cand[] = {
        parametric(AR_MASK_NONE, 0, 0, 0),
        parametric(AR_MASK_CAUSAL, 0, 0, 0),
        parametric(AR_MASK_WINDOW, back, 0, 0),
        parametric(AR_MASK_BAND, reach > back ? reach : back, 0, 0),
        parametric(AR_MASK_PREFIX, 0, prefix, 0),
        parametric(AR_MASK_SINK_WINDOW, w_tail, 0, sinks),
    };
    size_t nc = sizeof cand / sizeof cand[0];
    for (size_t k = 0; k < nc; k++)
        if (pattern_equals(&cand[k], mask)) {
            ar_mask_free(mask);
            *mask = cand[k];
            return;
        }
    size_t *lengths = malloc(n * sizeof *lengths);
    if (lengths == NULL)
        return;
    ar_mask docs = ar_mask_none();
    docs.kind = AR_MASK_DOCUMENTS;
    docs.ndocs = guess_documents(mask, lengths);
    docs.lengths = lengths;
    if (docs.ndocs > 1 && pattern_equals(&docs, mask)) {
        ar_mask_free(mask);
        *mask = docs;
        return;
    }
    free(lengths);
}
