/* Attention masks: the kinds, their textual syntax and their patterns
 * (include/attnrank/mask.h; docs/theory/masked-attention.md). */
#include "attnrank/mask.h"
#include "theory/masked/mask_internal.h"

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

int ar_mask_copy(ar_mask *dst, const ar_mask *src, ar_error *err)
{
    if (dst == NULL || src == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
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
    return ar_error_set(err, AR_ENOMEM, "out of memory");
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

/* ---- the kinds, one block each; the table below lists them ----
 *
 * A kind's parse receives the text after "keyword:" (args; "" for a bare
 * keyword) and the whole text for messages, and fills a mask that is none
 * on entry.  Its check validates the parameters at length n (n >= 1), its
 * allows reads the pattern (query, key < n), its guess reads a candidate of
 * the kind off a pattern mask (ar_mask_simplify keeps it when the whole
 * pattern matches), its params lists what the faces report. */

/* What ar_mask_simplify reads off a pattern once for every kind's guess. */
typedef struct pattern_reading {
    size_t back;   /* longest reach back, query - key + 1 */
    size_t reach;  /* longest reach forward, key - query + 1 */
    size_t prefix; /* keys query 0 sees from key 0 on */
    size_t sinks;  /* keys the last query sees from key 0 on */
    size_t w_tail; /* keys the last query sees ending at itself */
} pattern_reading;

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

static size_t one_param(ar_mask_param *out, const char *name, size_t value)
{
    out->name = name;
    out->value = value;
    out->values = NULL;
    out->count = 0;
    return 1;
}

static int parse_bare(const char *args, const char *text, ar_mask *mask, ar_error *err)
{
    (void)args;
    (void)text;
    (void)err;
    (void)mask;
    return AR_OK;
}

static int check_nothing(const ar_mask *mask, size_t n, ar_error *err)
{
    (void)mask;
    (void)n;
    (void)err;
    return AR_OK;
}

static size_t no_params(const ar_mask *mask, ar_mask_param *params)
{
    (void)mask;
    (void)params;
    return 0;
}

static int check_width(const ar_mask *mask, size_t n, ar_error *err)
{
    (void)n;
    return mask->w == 0 ? ar_error_set(err, AR_EINVAL, "mask width 0") : AR_OK;
}

static size_t width_param(const ar_mask *mask, ar_mask_param *params)
{
    return one_param(params, "w", mask->w);
}

/* none: every pair. */
static int allows_none(const ar_mask *mask, size_t n, size_t query, size_t key)
{
    (void)mask;
    (void)n;
    (void)query;
    (void)key;
    return 1;
}

static int guess_none(const ar_mask *pat, const pattern_reading *r, ar_mask *cand)
{
    (void)pat;
    (void)r;
    *cand = parametric(AR_MASK_NONE, 0, 0, 0);
    return 1;
}

/* causal: key <= query. */
static int allows_causal(const ar_mask *mask, size_t n, size_t query, size_t key)
{
    (void)mask;
    (void)n;
    return key <= query;
}

static int guess_causal(const ar_mask *pat, const pattern_reading *r, ar_mask *cand)
{
    (void)pat;
    (void)r;
    *cand = parametric(AR_MASK_CAUSAL, 0, 0, 0);
    return 1;
}

/* A count after "name:" (args), or the message of the counted kinds. */
static int parse_counted(const char *args, const char *text, const char *name, size_t *v,
                         ar_error *err)
{
    *v = parse_count(args, args + strlen(args));
    if (*v == 0)
        return ar_error_set(err, AR_EINVAL, "mask '%s': expected %s:N with a positive "
                            "integer N", text, name);
    return AR_OK;
}

/* window:W: query - W < key <= query, W keys including the query's own. */
static int parse_window(const char *args, const char *text, ar_mask *mask, ar_error *err)
{
    mask->kind = AR_MASK_WINDOW;
    return parse_counted(args, text, "window", &mask->w, err);
}

static void format_window(const ar_mask *mask, char *buf, size_t len)
{
    snprintf(buf, len, "window:%zu", mask->w);
}

static int allows_window(const ar_mask *mask, size_t n, size_t query, size_t key)
{
    (void)n;
    return key <= query && query - key < mask->w;
}

static int guess_window(const ar_mask *pat, const pattern_reading *r, ar_mask *cand)
{
    (void)pat;
    *cand = parametric(AR_MASK_WINDOW, r->back, 0, 0);
    return 1;
}

/* band:W: |query - key| < W. */
static int parse_band(const char *args, const char *text, ar_mask *mask, ar_error *err)
{
    mask->kind = AR_MASK_BAND;
    return parse_counted(args, text, "band", &mask->w, err);
}

static void format_band(const ar_mask *mask, char *buf, size_t len)
{
    snprintf(buf, len, "band:%zu", mask->w);
}

static int allows_band(const ar_mask *mask, size_t n, size_t query, size_t key)
{
    (void)n;
    size_t gap = query > key ? query - key : key - query;
    return gap < mask->w;
}

static int guess_band(const ar_mask *pat, const pattern_reading *r, ar_mask *cand)
{
    (void)pat;
    *cand = parametric(AR_MASK_BAND, r->reach > r->back ? r->reach : r->back, 0, 0);
    return 1;
}

/* prefix:P: key < P, or key <= query. */
static int parse_prefix(const char *args, const char *text, ar_mask *mask, ar_error *err)
{
    mask->kind = AR_MASK_PREFIX;
    return parse_counted(args, text, "prefix", &mask->p, err);
}

static void format_prefix(const ar_mask *mask, char *buf, size_t len)
{
    snprintf(buf, len, "prefix:%zu", mask->p);
}

static int check_prefix(const ar_mask *mask, size_t n, ar_error *err)
{
    (void)n;
    return mask->p == 0 ? ar_error_set(err, AR_EINVAL, "prefix length 0") : AR_OK;
}

static int allows_prefix(const ar_mask *mask, size_t n, size_t query, size_t key)
{
    (void)n;
    return key <= query || key < mask->p;
}

static int guess_prefix(const ar_mask *pat, const pattern_reading *r, ar_mask *cand)
{
    (void)pat;
    *cand = parametric(AR_MASK_PREFIX, 0, r->prefix, 0);
    return 1;
}

static size_t prefix_param(const ar_mask *mask, ar_mask_param *params)
{
    return one_param(params, "p", mask->p);
}

/* sink:S+window:W: key < S, or query - W < key <= query; sink:S+causal is
 * causal. */
static int parse_sink(const char *args, const char *text, ar_mask *mask, ar_error *err)
{
    const char *plus = strchr(args, '+');
    size_t sinks = plus ? parse_count(args, plus) : 0;
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

static void format_sink(const ar_mask *mask, char *buf, size_t len)
{
    snprintf(buf, len, "sink:%zu+window:%zu", mask->sinks, mask->w);
}

static int check_sink(const ar_mask *mask, size_t n, ar_error *err)
{
    int rc = check_width(mask, n, err);
    if (rc == AR_OK && mask->sinks == 0)
        rc = ar_error_set(err, AR_EINVAL, "sink count 0");
    return rc;
}

static int allows_sink(const ar_mask *mask, size_t n, size_t query, size_t key)
{
    return key < mask->sinks || allows_window(mask, n, query, key);
}

static int guess_sink(const ar_mask *pat, const pattern_reading *r, ar_mask *cand)
{
    (void)pat;
    /* the last query sees the sinks, then its window */
    *cand = parametric(AR_MASK_SINK_WINDOW, r->w_tail, 0, r->sinks);
    return 1;
}

static size_t sink_params(const ar_mask *mask, ar_mask_param *params)
{
    one_param(&params[0], "w", mask->w);
    return 1 + one_param(&params[1], "sinks", mask->sinks);
}

/* dilated:W/D: key <= query, query - key < W D and a multiple of D: the W
 * keys query, query - D, ..., query - (W - 1) D (Longformer's dilated
 * sliding window; D = 1 is window:W). */
static int parse_dilated(const char *args, const char *text, ar_mask *mask, ar_error *err)
{
    const char *slash = strchr(args, '/');
    mask->kind = AR_MASK_DILATED;
    mask->w = slash ? parse_count(args, slash) : 0;
    mask->d = slash ? parse_count(slash + 1, slash + 1 + strlen(slash + 1)) : 0;
    if (mask->w == 0 || mask->d == 0)
        return ar_error_set(err, AR_EINVAL, "mask '%s': expected dilated:W/D with positive "
                            "integers W (keys) and D (their spacing)", text);
    return AR_OK;
}

static void format_dilated(const ar_mask *mask, char *buf, size_t len)
{
    snprintf(buf, len, "dilated:%zu/%zu", mask->w, mask->d);
}

static int check_dilated(const ar_mask *mask, size_t n, ar_error *err)
{
    int rc = check_width(mask, n, err);
    if (rc == AR_OK && mask->d == 0)
        rc = ar_error_set(err, AR_EINVAL, "mask dilation 0");
    return rc;
}

static int allows_dilated(const ar_mask *mask, size_t n, size_t query, size_t key)
{
    (void)n;
    size_t gap = query - key; /* used only when key <= query */
    return key <= query && gap % mask->d == 0 && gap / mask->d < mask->w;
}

/* The spacing is the shortest reach back; D = 1 is left to window. */
static int guess_dilated(const ar_mask *pat, const pattern_reading *r, ar_mask *cand)
{
    size_t n = pat->n, d = n;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j-- > 0;)
            if (pat->allowed[i * n + j]) {
                if (i - j < d)
                    d = i - j;
                break;
            }
    if (d < 2 || d >= n)
        return 0;
    *cand = parametric(AR_MASK_DILATED, (r->back - 1) / d + 1, 0, 0);
    cand->d = d;
    return 1;
}

static size_t dilated_params(const ar_mask *mask, ar_mask_param *params)
{
    one_param(&params[0], "w", mask->w);
    return 1 + one_param(&params[1], "d", mask->d);
}

/* Its queries and keys split by position mod D into D windows of W keys,
 * the longest of ceil(n/D) tokens, with no pair across: a completion per
 * class stacks into one of the largest rank, and each class is a
 * submatrix, so the generic value is window:W's at ceil(n/D). */
static void dilated_equivalent(const ar_mask *mask, size_t n, ar_mask *out, size_t *n_out)
{
    *out = ar_mask_none();
    out->kind = AR_MASK_WINDOW;
    out->w = mask->w;
    *n_out = (n + mask->d - 1) / mask->d;
}

static void generic_dilated(const ar_mask *mask, size_t n, ar_mask_generic *g)
{
    ar_mask window;
    size_t m;
    dilated_equivalent(mask, n, &window, &m);
    ar_generic_window(&window, m, g);
    g->formula = m <= mask->w ? "floor(ceil(n/D)/2) (ceil(n/D) <= w: causal classes)"
                              : "floor(min(ceil(n/D), w)/2)";
}

static int longest_dilated(const ar_mask *mask, size_t dp, size_t *n_max, int *unbounded,
                           ar_generic_status *status, ar_error *err)
{
    if (mask->d == 0)
        return ar_error_set(err, AR_EINVAL, "mask dilation 0");
    ar_mask window;
    size_t m;
    dilated_equivalent(mask, 1, &window, &m);
    int rc = ar_longest_window(&window, dp, n_max, unbounded, status, err);
    if (rc == AR_OK && !*unbounded)
        *n_max = *n_max > SIZE_MAX / mask->d ? SIZE_MAX : *n_max * mask->d;
    return rc; /* the longest n with ceil(n/D) <= the window's longest */
}

/* docs:N1/N2/...: causal inside each document, nothing across. */
static int parse_documents(const char *list, const char *text, ar_mask *mask, ar_error *err)
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

static void format_documents(const ar_mask *mask, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "docs:");
    for (size_t k = 0; k < mask->ndocs && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, k ? "/%zu" : "%zu", mask->lengths[k]);
}

static int check_documents(const ar_mask *mask, size_t n, ar_error *err)
{
    size_t total = 0;
    for (size_t k = 0; k < mask->ndocs; k++) {
        if (mask->lengths[k] == 0 || mask->lengths[k] > n)
            return ar_error_set(err, AR_ESIZE, "document %zu has length %zu (n = %zu)", k + 1,
                                mask->lengths[k], n);
        total += mask->lengths[k];
    }
    if (total != n)
        return ar_error_set(err, AR_ESIZE,
                            "document lengths sum to %zu, but the sequence has n = %zu", total, n);
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

static int allows_documents(const ar_mask *mask, size_t n, size_t query, size_t key)
{
    (void)n;
    return key <= query && document_start(mask, query) <= key;
}

/* Documents a pattern would have: a new one starts at query i when i sees
 * itself but not the key before it.  0 when there is no memory, or when the
 * split is a single document (then causal, found earlier, says it). */
static int guess_documents(const ar_mask *pat, const pattern_reading *r, ar_mask *cand)
{
    (void)r;
    size_t n = pat->n, count = 0, start = 0;
    size_t *lengths = malloc(n * sizeof *lengths);
    if (lengths == NULL)
        return 0;
    for (size_t i = 1; i <= n; i++)
        if (i == n || (pat->allowed[i * n + i] && !pat->allowed[i * n + i - 1])) {
            lengths[count++] = i - start;
            start = i;
        }
    if (count <= 1) {
        free(lengths);
        return 0;
    }
    *cand = ar_mask_none();
    cand->kind = AR_MASK_DOCUMENTS;
    cand->ndocs = count;
    cand->lengths = lengths;
    return 1;
}

static size_t documents_params(const ar_mask *mask, ar_mask_param *params)
{
    params->name = "lengths";
    params->value = 0;
    params->values = mask->lengths;
    params->count = mask->ndocs;
    return 1;
}

/* An explicit pattern (file masks, boolean arrays): no syntax of its own. */
static void format_pattern(const ar_mask *mask, char *buf, size_t len)
{
    (void)mask;
    snprintf(buf, len, "file");
}

static int check_pattern(const ar_mask *mask, size_t n, ar_error *err)
{
    if (mask->n != n)
        return ar_error_set(err, AR_ESIZE, "mask pattern is %zu x %zu, the map is %zu x %zu",
                            mask->n, mask->n, n, n);
    return AR_OK;
}

static int allows_pattern(const ar_mask *mask, size_t n, size_t query, size_t key)
{
    return mask->n == n && mask->allowed[query * n + key] != 0;
}

/* ---- the table ----
 *
 * One row per kind; every switch over kinds outside the analysis reads it.
 * Rows in the order of the syntax list and of ar_mask_simplify's guesses
 * (the first kind whose pattern matches names a pattern).  Adding a kind:
 * its enum value in mask.h, its block above and a row here, its generic
 * value (mask_generic.c, or a reduction to another kind), its tests and
 * docs (docs/conventions.md, "Adding a mask kind"). */
typedef struct mask_kind_ops {
    ar_mask_kind kind;
    const char *name;      /* JSON name (ar_mask_kind_name) */
    const char *keyword;   /* text before ':' or the whole bare keyword; NULL: not parsed */
    int bare;              /* the keyword takes no ':' part */
    const char *syntax;    /* for lists and messages */
    int fixes_length;      /* only one n fits (documents, a pattern) */
    int (*parse)(const char *args, const char *text, ar_mask *mask, ar_error *err);
    void (*format)(const ar_mask *mask, char *buf, size_t len); /* NULL: the name */
    int (*check)(const ar_mask *mask, size_t n, ar_error *err);
    int (*allows)(const ar_mask *mask, size_t n, size_t query, size_t key);
    int (*guess)(const ar_mask *pat, const pattern_reading *r, ar_mask *cand); /* NULL: none */
    size_t (*params)(const ar_mask *mask, ar_mask_param *params);
    ar_mask_generic_fn generic;   /* NULL: no generic value (a pattern) */
    ar_mask_longest_fn longest;   /* NULL: no longest context (n is fixed) */
    ar_mask_equivalent_fn equivalent; /* NULL: its own dense pattern is verified */
} mask_kind_ops;

static const mask_kind_ops kinds[] = {
    {AR_MASK_NONE, "none", "none", 1, "none", 0, parse_bare, NULL, check_nothing, allows_none,
     guess_none, no_params, ar_generic_none, ar_longest_none, NULL},
    {AR_MASK_CAUSAL, "causal", "causal", 1, "causal", 0, parse_bare, NULL, check_nothing,
     allows_causal, guess_causal, no_params, ar_generic_causal, ar_longest_causal, NULL},
    {AR_MASK_WINDOW, "window", "window", 0, "window:W", 0, parse_window, format_window,
     check_width, allows_window, guess_window, width_param, ar_generic_window,
     ar_longest_window, NULL},
    {AR_MASK_BAND, "band", "band", 0, "band:W", 0, parse_band, format_band, check_width,
     allows_band, guess_band, width_param, ar_generic_band, ar_longest_band, NULL},
    {AR_MASK_PREFIX, "prefix", "prefix", 0, "prefix:P", 0, parse_prefix, format_prefix,
     check_prefix, allows_prefix, guess_prefix, prefix_param, ar_generic_prefix,
     ar_longest_prefix, NULL},
    {AR_MASK_SINK_WINDOW, "sink_window", "sink", 0, "sink:S+window:W", 0, parse_sink,
     format_sink, check_sink, allows_sink, guess_sink, sink_params, ar_generic_sink_window,
     ar_longest_sink_window, NULL},
    {AR_MASK_DILATED, "dilated", "dilated", 0, "dilated:W/D", 0, parse_dilated,
     format_dilated, check_dilated, allows_dilated, guess_dilated, dilated_params,
     generic_dilated, longest_dilated, dilated_equivalent},
    {AR_MASK_DOCUMENTS, "documents", "docs", 0, "docs:N1/N2/...", 1, parse_documents,
     format_documents, check_documents, allows_documents, guess_documents, documents_params,
     ar_generic_documents, NULL, NULL},
    {AR_MASK_PATTERN, "file", NULL, 0, NULL, 1, NULL, format_pattern, check_pattern,
     allows_pattern, NULL, no_params, NULL, NULL, NULL},
};

#define NKIND_ROWS (sizeof kinds / sizeof kinds[0])

/* The row of a kind; NULL for a value outside the enum. */
static const mask_kind_ops *kind_ops(ar_mask_kind kind)
{
    for (size_t k = 0; k < NKIND_ROWS; k++)
        if (kinds[k].kind == kind)
            return &kinds[k];
    return NULL;
}

const char *ar_mask_kind_name(ar_mask_kind kind)
{
    const mask_kind_ops *ops = kind_ops(kind);
    return ops != NULL ? ops->name : "unknown";
}

void ar_mask_syntax_list(char *buf, size_t len, int any_length_only)
{
    if (buf == NULL || len == 0)
        return;
    buf[0] = '\0';
    size_t used = 0;
    for (size_t k = 0; k < NKIND_ROWS && used < len; k++) {
        if (kinds[k].syntax == NULL || (any_length_only && kinds[k].fixes_length))
            continue;
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                                 kinds[k].syntax);
    }
}

int ar_mask_fixes_length(const ar_mask *mask)
{
    const mask_kind_ops *ops = mask != NULL ? kind_ops(mask->kind) : NULL;
    return ops != NULL && ops->fixes_length;
}

size_t ar_mask_params(const ar_mask *mask, ar_mask_param *params)
{
    const mask_kind_ops *ops = mask != NULL ? kind_ops(mask->kind) : NULL;
    if (ops == NULL || params == NULL)
        return 0;
    return ops->params(mask, params);
}

/* The row whose keyword starts text: "causal" exactly, or "window:...";
 * *args points after the ':'. */
static const mask_kind_ops *parsed_kind(const char *text, const char **args)
{
    for (size_t k = 0; k < NKIND_ROWS; k++) {
        const char *kw = kinds[k].keyword;
        if (kw == NULL)
            continue;
        size_t len = strlen(kw);
        if (kinds[k].bare && strcmp(text, kw) == 0) {
            *args = text + len;
            return &kinds[k];
        }
        if (!kinds[k].bare && strncmp(text, kw, len) == 0 && text[len] == ':') {
            *args = text + len + 1;
            return &kinds[k];
        }
    }
    return NULL;
}

int ar_mask_parse(const char *text, ar_mask *mask, ar_error *err)
{
    if (text == NULL || mask == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    *mask = ar_mask_none();
    if (strcmp(text, "auto") == 0 || strncmp(text, "file:", 5) == 0)
        return ar_error_set(err, AR_EINVAL, "mask '%s' needs a map or a file: resolve it first",
                            text);
    const char *args = NULL;
    const mask_kind_ops *ops = parsed_kind(text, &args);
    if (ops != NULL) {
        int rc = ops->parse(args, text, mask, err);
        if (rc != AR_OK)
            ar_mask_free(mask);
        else if (ops->bare)
            mask->kind = ops->kind;
        return rc;
    }
    char list[256];
    ar_mask_syntax_list(list, sizeof list, 0);
    return ar_error_set(err, AR_EINVAL, "unknown mask '%s' (expected %s, auto or file:PATH)",
                        text, list);
}

void ar_mask_format(const ar_mask *mask, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return;
    buf[0] = '\0';
    if (mask == NULL)
        return;
    const mask_kind_ops *ops = kind_ops(mask->kind);
    if (ops != NULL && ops->format != NULL)
        ops->format(mask, buf, len);
    else
        snprintf(buf, len, "%s", ar_mask_kind_name(mask->kind));
}

/* ---- patterns ---- */

int ar_mask_check_size(const ar_mask *mask, size_t n, ar_error *err)
{
    if (mask == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL mask");
    if (n == 0)
        return ar_error_set(err, AR_EINVAL, "sequence length 0");
    const mask_kind_ops *ops = kind_ops(mask->kind);
    if (ops == NULL)
        return ar_error_set(err, AR_EINVAL, "bad mask kind %d", (int)mask->kind);
    return ops->check(mask, n, err);
}

int ar_mask_allows(const ar_mask *mask, size_t n, size_t query, size_t key)
{
    if (mask == NULL || query >= n || key >= n)
        return 0;
    const mask_kind_ops *ops = kind_ops(mask->kind);
    return ops != NULL && ops->allows(mask, n, query, key);
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

/* 1 when the mask m has exactly the pattern of pat at size n. */
static int pattern_equals(const ar_mask *m, const ar_mask *pat)
{
    size_t n = pat->n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (ar_mask_allows(m, n, i, j) != pat->allowed[i * n + j])
                return 0;
    return 1;
}

static pattern_reading read_pattern(const ar_mask *pat)
{
    size_t n = pat->n;
    const unsigned char *a = pat->allowed;
    pattern_reading r = {0, 0, 0, 0, 0};
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (a[i * n + j]) {
                if (j <= i && i - j + 1 > r.back)
                    r.back = i - j + 1;
                if (j > i && j - i + 1 > r.reach)
                    r.reach = j - i + 1;
            }
    while (r.prefix < n && a[r.prefix] /* query 0 sees key prefix */)
        r.prefix++;
    while (r.sinks < n && a[(n - 1) * n + r.sinks])
        r.sinks++;
    for (size_t j = n; j-- > 0 && a[(n - 1) * n + j];)
        r.w_tail++;
    return r;
}

void ar_mask_simplify(ar_mask *mask)
{
    if (mask == NULL || mask->kind != AR_MASK_PATTERN || mask->allowed == NULL)
        return;
    /* Each kind reads its parameters off the pattern, then the whole
     * pattern is compared, so a candidate is accepted only when exact. */
    pattern_reading r = read_pattern(mask);
    for (size_t k = 0; k < NKIND_ROWS; k++) {
        ar_mask cand;
        if (kinds[k].guess == NULL || !kinds[k].guess(mask, &r, &cand))
            continue;
        if (pattern_equals(&cand, mask)) {
            ar_mask_free(mask);
            *mask = cand;
            return;
        }
        ar_mask_free(&cand);
    }
}

/* ---- the theory entries of the table, for mask_generic.c ---- */

ar_mask_generic_fn ar_mask_generic_of(ar_mask_kind kind)
{
    const mask_kind_ops *ops = kind_ops(kind);
    return ops != NULL ? ops->generic : NULL;
}

ar_mask_longest_fn ar_mask_longest_of(ar_mask_kind kind)
{
    const mask_kind_ops *ops = kind_ops(kind);
    return ops != NULL ? ops->longest : NULL;
}

void ar_mask_generic_equivalent(const ar_mask *mask, size_t n, ar_mask *out, size_t *n_out)
{
    const mask_kind_ops *ops = kind_ops(mask->kind);
    if (ops != NULL && ops->equivalent != NULL) {
        ops->equivalent(mask, n, out, n_out);
        return;
    }
    *out = *mask;
    *n_out = n;
}
