/* The run of `attnrank check` (include/attnrank/check.h): every
 * configuration's entries, verdicts and failures, so the CLI and the
 * Python face only gather configurations and print. */
#include "attnrank/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A config's layer kinds and the stated mask their bias tables share:
 * kept until the run is freed, because the record is written after. */
struct ar_check_held {
    ar_check_model kinds;
    ar_mask stated;
};

void ar_check_run_opts_init(ar_check_run_opts *opts)
{
    if (opts == NULL)
        return;
    memset(opts, 0, sizeof *opts);
    opts->law = ar_dw_law_paper();
    opts->law_source = "paper";
    opts->style = AR_OPTION_STYLE_CLI;
}

void ar_check_run_init(ar_check_run *run, const ar_check_run_opts *opts)
{
    if (run == NULL)
        return;
    memset(run, 0, sizeof *run);
    if (opts != NULL)
        run->opts = *opts;
    else
        ar_check_run_opts_init(&run->opts);
    if (run->opts.law_source == NULL)
        run->opts.law_source = "paper";
    if (run->opts.fit != NULL) {
        run->fit = *run->opts.fit;
        run->have_fit = 1;
    }
    run->opts.fit = NULL; /* the copy is run->fit: a run may outlive the caller's */
}

void ar_check_run_free(ar_check_run *run)
{
    if (run == NULL)
        return;
    for (size_t i = 0; i < run->nheld; i++) {
        ar_check_model_free(&run->held[i]->kinds);
        ar_mask_free(&run->held[i]->stated);
        free(run->held[i]);
    }
    free(run->held);
    free(run->entry);
    memset(run, 0, sizeof *run);
}

/* items (count used of *cap, each size bytes) with room for one more: items
 * itself or its reallocation; NULL when out of memory (items unchanged). */
static void *grow(void *items, size_t *cap, size_t count, size_t size)
{
    if (count < *cap)
        return items;
    size_t more = *cap ? 2 * *cap : 8;
    void *q = realloc(items, more * size);
    if (q != NULL)
        *cap = more;
    return q;
}

/* A cleared new entry; NULL when out of memory. */
static ar_check_entry *new_entry(ar_check_run *run)
{
    ar_check_entry *e = grow(run->entry, &run->cap, run->count, sizeof *e);
    if (e == NULL)
        return NULL;
    run->entry = e;
    memset(&e[run->count], 0, sizeof *e);
    return &e[run->count];
}

/* err's message behind a prefix (the configuration's label). */
static int labelled(ar_error *err, int rc, const char *label)
{
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg[0] ? err->msg : ar_strerror(rc));
    return ar_error_set(err, rc, "%s: %s", label, msg);
}

/* The label of a configuration the caller did not name: its config's
 * path, or the sizes and mask given, in the order d, heads, n, mask, layers. */
static void default_label(const ar_check_config *c, char *label, size_t len)
{
    if (c->config != NULL && c->config[0] != '\0') {
        snprintf(label, len, "%.250s", c->config);
        return;
    }
    const struct { const char *name; size_t v; } parts[] = {
        {"d", c->d}, {"heads", c->heads}, {"n", c->n}, {"mask", 0}, {"layers", c->layers}};
    size_t used = 0;
    label[0] = '\0';
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        int is_mask = i == 3;
        if ((is_mask ? c->mask == NULL || c->mask[0] == '\0' : parts[i].v == 0) || used >= len)
            continue;
        int k = is_mask ? snprintf(label + used, len - used, "%smask=%s", used ? ", " : "",
                                   c->mask)
                        : snprintf(label + used, len - used, "%s%s=%zu", used ? ", " : "",
                                   parts[i].name, parts[i].v);
        used += k > 0 ? (size_t)k : 0;
    }
}

/* One entry: the verdicts of c under mask_text, labelled c's label + suffix. */
static int judge(ar_check_run *run, const ar_check_config *c, const char *mask_text,
                 const char *suffix, ar_error *err)
{
    ar_check_entry *e = new_entry(run);
    if (e == NULL)
        return ar_error_set(err, AR_ENOMEM, "check: out of memory");
    snprintf(e->label, sizeof e->label, "%s%s", c->label, suffix);
    int has_mask = mask_text != NULL && mask_text[0] != '\0';
    snprintf(e->mask, sizeof e->mask, "%s", has_mask ? mask_text : "none");
    ar_check_opts o;
    ar_check_opts_init(&o);
    o.require = c->require;
    o.head_size = c->head_size;
    o.layers = c->layers;
    o.strict = run->opts.strict;
    o.law = &run->opts.law;
    ar_mask mask = ar_mask_none();
    int rc = AR_OK;
    if (c->require == 0)
        return labelled(err, ar_error_set(err, AR_EINVAL, "no condition required (use "
                                                          "{opt:require})"),
                        e->label);
    if (has_mask && (c->require & AR_CHECK_REQUIRE(AR_CHECK_NO_BOTTLENECK))) {
        /* a named kind that fits n: a configuration has no map for auto or file: */
        if ((rc = ar_mask_from_text(mask_text, c->n, 0, &mask, NULL, err)) != AR_OK)
            return rc;
        o.mask = &mask;
        o.mask_text = mask_text; /* the reasons name the mask as written */
    }
    rc = ar_check_evaluate(c->d, c->heads, c->n, &o, &e->result, err);
    ar_mask_free(&mask);
    if (rc != AR_OK)
        return labelled(err, rc, e->label);
    for (size_t v = 0; v < e->result.count; v++) /* a reason may name an option */
        ar_option_render(e->result.verdicts[v].why, run->opts.style);
    run->failed += e->result.failed;
    run->uses_law |= e->result.uses_law;
    run->count++;
    return AR_OK;
}

/* Keep a config's kinds in the run; NULL when out of memory. */
static ar_check_held *hold(ar_check_run *run)
{
    ar_check_held **held = grow(run->held, &run->heldcap, run->nheld, sizeof *held);
    if (held == NULL)
        return NULL;
    run->held = held;
    ar_check_held *h = calloc(1, sizeof *h);
    if (h != NULL) {
        h->stated = ar_mask_none();
        run->held[run->nheld++] = h;
    }
    return h;
}

/* A configuration with a config.json: its sizes fill what c does not give,
 * and each layer kind of the model is judged under its own mask. */
static int judge_model(ar_check_run *run, const ar_check_config *given, ar_error *err)
{
    ar_model_config m;
    int rc = ar_model_config_read(given->config, &m, err);
    if (rc != AR_OK)
        return labelled(err, rc, given->label);
    ar_check_held *h = hold(run);
    if (h == NULL)
        return ar_error_set(err, AR_ENOMEM, "check: out of memory");
    /* The stated mask, for the bias; a mask that does not parse is
     * reported by the condition that reads it, as without a config. */
    int have_mask = given->mask != NULL && given->mask[0] != '\0';
    ar_error ignored = {{0}};
    if (have_mask && ar_mask_parse(given->mask, &h->stated, &ignored) != AR_OK)
        h->stated = ar_mask_none();
    ar_check_config c = *given;
    rc = ar_check_model_kinds(&m, c.config, have_mask ? &h->stated : NULL, &c.d, &c.heads, &c.n,
                              &c.head_size, &h->kinds, err);
    for (size_t k = 0; rc == AR_OK && k < h->kinds.count; k++) {
        const ar_check_kind *kind = &h->kinds.kind[k];
        rc = judge(run, &c, kind->mask_text[0] != '\0' ? kind->mask_text : c.mask, kind->suffix,
                   err);
        if (rc == AR_OK && h->kinds.bias.count > k) {
            run->entry[run->count - 1].bias = &h->kinds.bias;
            run->entry[run->count - 1].bias_kind = k;
        }
    }
    return rc;
}

int ar_check_run_add(ar_check_run *run, const ar_check_config *c, ar_error *err)
{
    if (run == NULL || c == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    char label[AR_CHECK_LABEL_LEN];
    ar_check_config named = *c;
    if (c->label == NULL || c->label[0] == '\0') {
        default_label(c, label, sizeof label);
        named.label = label;
    }
    if (c->config != NULL && c->config[0] != '\0')
        return judge_model(run, &named, err);
    return judge(run, &named, c->mask, "", err);
}
