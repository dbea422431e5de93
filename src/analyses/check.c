/* The verdicts of `attnrank check` for one configuration: whether each
 * required theorem condition holds, why, and what the value it rests on is.
 * Front ends (the CLI, the Python package) only gather configurations and
 * render these verdicts, so they cannot disagree about one. */
#include "attnrank/check.h"

#include <stdio.h>
#include <string.h>

#include "attnrank/bottleneck.h"

static const char *const condition_names[AR_CHECK_NCONDITIONS] = {
    "no-bottleneck", "depth-efficient", "near-optimal-allocation"};

const char *ar_check_condition_name(ar_check_condition cond)
{
    return (unsigned)cond < AR_CHECK_NCONDITIONS ? condition_names[cond] : "unknown";
}

const char *ar_check_status_name(ar_check_status status)
{
    static const char *const names[] = {"proved", "verified", "conjectural", "empirical"};
    return (unsigned)status < sizeof names / sizeof names[0] ? names[status] : "unknown";
}

int ar_check_require_parse(const char *text, unsigned *require, ar_error *err)
{
    if (text == NULL || require == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    unsigned bits = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, ",;");
        int found = 0;
        for (unsigned c = 0; c < AR_CHECK_NCONDITIONS && !found; c++)
            if (strlen(condition_names[c]) == len && strncmp(condition_names[c], p, len) == 0) {
                bits |= AR_CHECK_REQUIRE(c);
                found = 1;
            }
        if (!found && len > 0)
            return ar_error_set(err, AR_EINVAL, "unknown condition '%.*s'",
                                (int)(len > 63 ? 63 : len), p);
        p += len;
        if (*p)
            p++;
    }
    *require |= bits;
    return AR_OK;
}

void ar_check_opts_init(ar_check_opts *opts)
{
    if (opts == NULL)
        return;
    memset(opts, 0, sizeof *opts);
}

static ar_check_status status_of(ar_generic_status s)
{
    return s == AR_GENERIC_VERIFIED      ? AR_CHECK_VERIFIED
           : s == AR_GENERIC_CONJECTURAL ? AR_CHECK_CONJECTURAL
                                         : AR_CHECK_PROVED;
}

/* The reason of a no-bottleneck verdict, from the head-size report. */
static void bottleneck_why(const ar_bottleneck_heads_report *rep, const ar_head_config *h,
                           const char *mask_text, int strict_failed, char *why, size_t len)
{
    char need[320];
    if (rep->masked)
        snprintf(need, sizeof need, "the generic value %zu = %s under mask %s (%s)",
                 rep->needed_head_size, rep->generic.formula, mask_text,
                 ar_generic_status_name(h->status));
    else
        snprintf(need, sizeof need, "n - 1 = %zu", rep->n - 1);
    if (strict_failed)
        snprintf(why, len, "head size %zu >= %s, but that value is conjectural ({flag:strict})", h->dp,
                 need);
    else if (!h->bottleneck)
        snprintf(why, len,
                 "head size %zu >= %s and d = %zu >= n: one head reaches every %sattention "
                 "pattern",
                 h->dp, need, rep->d, rep->masked ? "generic " : "");
    else if (h->dp >= rep->needed_head_size) /* only the width fails */
        snprintf(why, len,
                 "d = %zu < n = %zu: X cannot have full column rank, some patterns are "
                 "unreachable at any head size",
                 rep->d, rep->n);
    else
        snprintf(why, len,
                 "head size %zu < %s: deficit %zu; longest sequence without bottleneck %zu; "
                 "largest head count without it %zu%s",
                 h->dp, need, h->rank_deficit, h->max_seq_len, rep->max_heads_exact,
                 rep->d < rep->n ? "; also d < n: no input of full column rank" : "");
}

static int no_bottleneck(size_t d, size_t heads, size_t n, const ar_check_opts *o,
                         ar_check_verdict *out, ar_error *err)
{
    if (heads == 0 || n == 0)
        return ar_error_set(err, AR_EINVAL,
                            "no-bottleneck needs d, heads and n (all >= 1; got d=%zu heads=%zu "
                            "n=%zu)",
                            d, heads, n);
    if (o->head_size == 0 && d % heads != 0)
        return ar_error_set(err, AR_EINVAL,
                            "heads %zu does not divide d %zu; give the head size", heads, d);
    ar_mask none = ar_mask_none();
    const ar_mask *mask = o->mask != NULL ? o->mask : &none;
    if (mask->kind == AR_MASK_PATTERN)
        return ar_error_set(err, AR_EINVAL,
                            "no-bottleneck takes a named mask kind, not an explicit pattern");
    int rc = ar_mask_check_size(mask, n, err);
    if (rc != AR_OK)
        return rc;
    ar_bottleneck_heads_opts ho;
    ar_bottleneck_heads_opts_init(&ho);
    ho.errors = AR_HEADS_ERRORS_SKIP; /* the verdict needs the thresholds only */
    ho.head_size = o->head_size;
    ho.mask = mask;
    ar_bottleneck_heads_report rep;
    rc = ar_bottleneck_heads_analyze(d, heads, n, &ho, &rep, err);
    if (rc != AR_OK)
        return rc;
    const ar_head_config *h = o->head_size ? &rep.fixed : &rep.standard;
    char text[128];
    if (o->mask_text == NULL)
        ar_mask_format(mask, text, sizeof text);
    int strict_failed = !h->bottleneck && o->strict && h->status == AR_GENERIC_CONJECTURAL;
    out->holds = !h->bottleneck && !strict_failed;
    out->status = status_of(h->status);
    bottleneck_why(&rep, h, o->mask_text != NULL ? o->mask_text : text, strict_failed, out->why,
                   sizeof out->why);
    return AR_OK;
}

static int allocation(ar_check_condition cond, size_t d, const ar_check_opts *o,
                      ar_check_verdict *out, ar_error *err)
{
    if (o->layers == 0)
        return ar_error_set(err, AR_EINVAL, "%s needs the depth (layers >= 1)",
                            condition_names[cond]);
    ar_dw_verdict v;
    int rc = ar_dw_verdict_of(o->law, (double)o->layers, (double)d, -1.0, &v, err);
    if (rc != AR_OK) {
        ar_dw_law law = o->law != NULL ? *o->law : ar_dw_law_paper();
        return ar_error_set(err, rc,
                            "%s: no verdict under the law ln d = %g + %g L, N = %g L d^2 (%s)",
                            condition_names[cond], law.intercept, law.slope, law.params_coeff,
                            ar_strerror(rc));
    }
    out->status = AR_CHECK_EMPIRICAL;
    if (cond == AR_CHECK_DEPTH_EFFICIENT) {
        out->holds = v.depth_efficient;
        snprintf(out->why, sizeof out->why,
                 "L = %zu %s transition depth %.1f of width %zu (transition width of L: "
                 "%.0f; theory's L_th = log_3 d = %.2f)",
                 o->layers, out->holds ? "<=" : ">", v.transition_layers, d, v.transition_d,
                 v.l_th);
    } else {
        out->holds = v.near_optimal;
        snprintf(out->why, sizeof out->why,
                 "L = %zu vs optimal depth %.1f (width %.0f) for %.3g parameters: ratio %.3f, "
                 "tolerance %.0f%%",
                 o->layers, v.optimal_layers, v.optimal_d, v.params, v.depth_ratio,
                 100 * v.tolerance);
    }
    return AR_OK;
}

int ar_check_verdict_of(ar_check_condition cond, size_t d, size_t heads, size_t n,
                        const ar_check_opts *opts, ar_check_verdict *out, ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if ((unsigned)cond >= AR_CHECK_NCONDITIONS)
        return ar_error_set(err, AR_EINVAL, "unknown condition %d", (int)cond);
    if (d == 0)
        return ar_error_set(err, AR_EINVAL, "needs d (>= 1)");
    ar_check_opts defaults;
    ar_check_opts_init(&defaults);
    const ar_check_opts *o = opts != NULL ? opts : &defaults;
    /* the head-size bounds count divisors of d in O(sqrt d) and add 1 to
     * sizes: the limit is far above any model, far below where that takes
     * seconds or wraps */
    if (d > AR_CHECK_MAX_SIZE || heads > AR_CHECK_MAX_SIZE || n > AR_CHECK_MAX_SIZE ||
        o->head_size > AR_CHECK_MAX_SIZE)
        return ar_error_set(err, AR_EINVAL,
                            "sizes above 2^48 are not supported (d=%zu heads=%zu n=%zu head "
                            "size %zu)",
                            d, heads, n, o->head_size);
    memset(out, 0, sizeof *out);
    out->condition = cond;
    return cond == AR_CHECK_NO_BOTTLENECK ? no_bottleneck(d, heads, n, o, out, err)
                                          : allocation(cond, d, o, out, err);
}

int ar_check_evaluate(size_t d, size_t heads, size_t n, const ar_check_opts *opts,
                      ar_check_result *out, ar_error *err)
{
    if (out == NULL || opts == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (opts->require == 0)
        return ar_error_set(err, AR_EINVAL, "no condition required");
    if (opts->require & ~AR_CHECK_REQUIRE_ALL)
        return ar_error_set(err, AR_EINVAL, "unknown condition bits 0x%x in require",
                            opts->require & ~AR_CHECK_REQUIRE_ALL);
    memset(out, 0, sizeof *out);
    out->d = d;
    out->heads = heads;
    out->n = n;
    out->layers = opts->layers;
    /* the size the verdict used, as the report names it */
    out->head_size = opts->head_size ? opts->head_size
                     : heads != 0 && d % heads == 0 ? d / heads
                                                    : 0;
    for (unsigned c = 0; c < AR_CHECK_NCONDITIONS; c++) {
        if (!(opts->require & AR_CHECK_REQUIRE(c)))
            continue;
        ar_check_verdict *v = &out->verdicts[out->count];
        int rc = ar_check_verdict_of((ar_check_condition)c, d, heads, n, opts, v, err);
        if (rc != AR_OK)
            return rc;
        out->count++;
        out->failed += !v->holds;
        out->uses_law |= c != AR_CHECK_NO_BOTTLENECK;
    }
    return AR_OK;
}
