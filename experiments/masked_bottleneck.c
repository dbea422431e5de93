/* Experiment masked_bottleneck (docs/theory/masked-attention.md): the
 * minimal head size h* of one attention head under an attention mask.
 *
 * Part 1, generic maps.  For Gaussian row-query logits S (S_ij ~ N(0, 1))
 * and the masked row softmax P, ar_masked_analyze gives h*(P, M) against n
 * under the masks
 *   none (bidirectional), causal, window:4, window:16, band:4, band:16,
 *   prefix:8.
 * Staircase masks (none, causal, prefix; windows at n <= w) are exact at
 * every n, with a certificate checked by a masked forward pass.  Windows
 * and bands (n > w) give a proved lower bound on the map and the smallest
 * certificate the forward check confirmed, computed up to n = --cert-max;
 * beyond it the analysis runs without certificates (extra_rank = 0,
 * polish_iter = 0: only the lower bound and the F_p status are recorded,
 * upper stays empty).  Each row also has the generic value with its status
 * (proved / verified over F_p / conjectural) from the analysis and the
 * closed form computed here independently:
 *   none n - 1, causal floor(n/2), window floor(min(n, w)/2),
 *   band min(n, w) - 1, prefix max(p - 1, floor(n/2)) (n - 1 when n <= p).
 *
 * Part 2, structured causal heads at n = 32 (beta = 3, ALiBi slope 0.5):
 *   uniform   S = 0                         expected h* 0
 *   alibi     S_ij = -0.5 (i - j)           1
 *   toeplitz  S_ij = t[i - j], t Gaussian   16 (generic Toeplitz: floor(n/2))
 *   local4    S_ij = 3 [i - j < 4]          28
 *   previous  S_ij = 3 [j = i - 1]          30
 *   self      S = 3 I                       31
 * h* under the causal mask beside the bidirectional minimal head size of
 * the same logits: the formula taken on every (i, j), unmasked row softmax,
 * rank of its centred log (ar_represent_analyze, rows as queries).
 *
 *   masked_bottleneck [--quick | --full] [--seed S] [--cert-max N] [--out DIR]
 *                     [--figures DIR|none] [--plots DIR] [--quiet]
 *                     [--resume | --shard I/K | --merge]
 *
 * quick: n on a coarse grid 2..64, certificates for windows and bands up
 *   to n = 32 (seconds);
 * full:  every n up to 17, then a grid to 256, certificates for windows and
 *   bands up to n = 64 (about a minute, dominated by band:16 at n = 48..64).
 * Outputs in DIR: masked_bottleneck.csv (one line per mask and n),
 * masked_bottleneck_heads.csv (the structured heads) and the figure
 * masked_bottleneck.{png,svg} (h* against n per mask, lower..upper as error
 * bars, the generic formulas dashed).
 * One configuration of the sweep engine (sweep.h) = one (mask, n), or one
 * structured head. */
#include "common.h"
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP_NAME "masked_bottleneck"
#define HEADS_N 32
#define HEADS_BETA 3.0
#define HEADS_SLOPE 0.5

/* The masks of part 1, in the order of the CSV rows. */
static const char *const mask_texts[] = {"none",     "causal", "window:4", "window:16",
                                         "band:4",   "band:16", "prefix:8"};
#define NMASKS (sizeof mask_texts / sizeof mask_texts[0])

/* The structured heads of part 2. */
typedef enum head_kind {
    HEAD_UNIFORM,
    HEAD_ALIBI,
    HEAD_TOEPLITZ,
    HEAD_LOCAL4,
    HEAD_PREVIOUS,
    HEAD_SELF,
    NHEADS
} head_kind;

static const struct {
    const char *name;
    size_t expected; /* causal h* at n = 32 */
} heads[NHEADS] = {{"uniform", 0},  {"alibi", 1},     {"toeplitz", 16},
                   {"local4", 28},  {"previous", 30}, {"self", 31}};

typedef struct experiment {
    exp_ctx ctx;
    const size_t *ns;
    size_t nn;
    size_t cert_max;   /* certificates for non-staircase masks up to this n */
    size_t ngeneric;   /* part-1 configurations: NMASKS * nn */
    ar_mask masks[NMASKS];
} experiment;

/* ---- shared helpers ---- */

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* P = the masked row softmax of S (rows as queries), exact zeros outside. */
static void masked_softmax(const ar_matrix *s, const ar_mask *m, ar_matrix *p)
{
    size_t n = s->rows;
    for (size_t i = 0; i < n; i++) {
        double top = -INFINITY, z = 0.0;
        for (size_t j = 0; j < n; j++)
            if (ar_mask_allows(m, n, i, j) && AR_AT(s, i, j) > top)
                top = AR_AT(s, i, j);
        for (size_t j = 0; j < n; j++)
            if (ar_mask_allows(m, n, i, j))
                z += exp(AR_AT(s, i, j) - top);
        for (size_t j = 0; j < n; j++)
            AR_AT(p, i, j) = ar_mask_allows(m, n, i, j) ? exp(AR_AT(s, i, j) - top) / z : 0.0;
    }
}

/* The generic minimal head size from its closed form, independently of
 * the library's ar_mask_generic_value. */
static size_t formula_value(const ar_mask *m, size_t n)
{
    switch (m->kind) {
    case AR_MASK_NONE:
        return n - 1;
    case AR_MASK_CAUSAL:
        return n / 2;
    case AR_MASK_WINDOW:
        return min_size(n, m->w) / 2;
    case AR_MASK_BAND:
        return min_size(n, m->w) - 1;
    case AR_MASK_PREFIX:
        return n <= m->p ? n - 1 : max_size(m->p - 1, n / 2);
    default:
        return 0;
    }
}

static int is_staircase_kind(const ar_mask *m)
{
    return m->kind == AR_MASK_NONE || m->kind == AR_MASK_CAUSAL || m->kind == AR_MASK_PREFIX ||
           m->kind == AR_MASK_DOCUMENTS;
}

static size_t mask_param(const ar_mask *m)
{
    if (m->kind == AR_MASK_WINDOW || m->kind == AR_MASK_BAND)
        return m->w;
    return m->kind == AR_MASK_PREFIX ? m->p : 0;
}

/* A formula text for a CSV cell: the library's, commas as ';'. */
static void print_formula(FILE *fp, const char *formula)
{
    for (const char *c = formula; c != NULL && *c; c++)
        fputc(*c == ',' ? ';' : *c, fp);
}

static void print_real_or_empty(FILE *fp, int have, double x)
{
    fputc(',', fp);
    if (have)
        exp_csv_real(fp, x);
}

/* ---- part 1: generic maps under a mask ---- */

static int run_generic(const experiment *e, size_t mi, size_t n, FILE *fp)
{
    const ar_mask *m = &e->masks[mi];
    uint64_t cfg[4] = {0x6d62, (uint64_t)m->kind, mask_param(m), n};
    uint64_t seed = ar_seed_derive(e->ctx.seed, cfg, 4);
    ar_matrix s = ar_matrix_empty(), p = ar_matrix_empty();
    ar_masked_workspace *ws = NULL;
    ar_rng *rng = ar_rng_alloc(seed);
    int rc = rng != NULL ? ar_matrix_alloc(&s, n, n, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&p, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_masked_workspace_alloc(&ws, n, NULL);
    int code = rc == AR_OK ? 0 : exp_fail(&e->ctx, rc, NULL, "allocation");
    if (code == 0) {
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++)
                AR_AT(&s, i, j) = ar_rng_gaussian(rng, 1.0);
        masked_softmax(&s, m, &p);
    }
    /* Windows and bands beyond --cert-max: the lower bound and the generic
     * status only; no completion is polished or searched beyond r = lower. */
    int certify = is_staircase_kind(m) || n <= e->cert_max;
    ar_masked_opts o;
    ar_masked_opts_init(&o);
    o.axis = AR_AXIS_ROW;
    o.seed = seed;
    if (!certify) {
        o.extra_rank = 0;
        o.polish_iter = 0;
    }
    ar_masked_result r;
    memset(&r, 0, sizeof r);
    ar_error err = {{0}};
    if (code == 0 &&
        (rc = ar_masked_analyze(ws, ar_matrix_cview(&p), NULL, m, &o, &r, &err)) != AR_OK)
        code = exp_fail(&e->ctx, rc, &err, "masked analysis");
    int certified = certify && r.certified;
    double max_abs = NAN;
    if (code == 0 && certified) {
        ar_certificate cert;
        rc = ar_masked_certificate(ws, 0, &cert, &err);
        if (rc != AR_OK)
            code = exp_fail(&e->ctx, rc, &err, "certificate");
        else
            max_abs = cert.max_abs;
        ar_certificate_free(&cert);
    }
    if (code == 0) {
        int exact = certify && r.exact;
        size_t lower = exact ? r.min_head_size : r.lower;
        fprintf(fp, "%s,%s,%zu,%zu,%llu,%s,%s,%zu,", mask_texts[mi], ar_mask_kind_name(m->kind),
                mask_param(m), n, (unsigned long long)seed,
                r.method == AR_MASKED_STAIRCASE ? "staircase" : "bounds",
                exact ? "exact" : "bounds", lower);
        if (certified)
            fprintf(fp, "%zu", r.upper);
        fprintf(fp, ",%d,%d", certify, certified);
        print_real_or_empty(fp, certified, max_abs);
        print_real_or_empty(fp, 1, r.accuracy);
        fprintf(fp, ",%zu,", r.block_lower);
        if (r.generic_known)
            fprintf(fp, "%zu,%s,", r.generic.value, ar_generic_status_name(r.generic.status));
        else
            fputs(",,", fp);
        if (r.generic_known)
            print_formula(fp, r.generic.formula);
        fprintf(fp, ",%zu\n", formula_value(m, n));
    }
    ar_masked_workspace_free(ws);
    ar_matrix_free(&s);
    ar_matrix_free(&p);
    ar_rng_free(rng);
    return code;
}

/* ---- part 2: structured causal heads ---- */

/* The head's logits on every (i, j): the causal analysis reads j <= i, the
 * bidirectional one all of them. */
static int head_logits(head_kind h, uint64_t seed, ar_matrix *s)
{
    size_t n = s->rows;
    double *t = NULL; /* toeplitz: t[k + n - 1] for k = i - j in -(n-1)..n-1 */
    if (h == HEAD_TOEPLITZ) {
        ar_rng *rng = ar_rng_alloc(seed);
        t = malloc((2 * n - 1) * sizeof *t);
        if (rng == NULL || t == NULL) {
            ar_rng_free(rng);
            free(t);
            return AR_ENOMEM;
        }
        for (size_t k = 0; k < 2 * n - 1; k++)
            t[k] = ar_rng_gaussian(rng, 1.0);
        ar_rng_free(rng);
    }
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++) {
            double d = (double)i - (double)j, v = 0.0;
            switch (h) {
            case HEAD_ALIBI:
                v = -HEADS_SLOPE * d;
                break;
            case HEAD_TOEPLITZ:
                v = t[i + n - 1 - j];
                break;
            case HEAD_LOCAL4:
                v = HEADS_BETA * (d < 4.0);
                break;
            case HEAD_PREVIOUS:
                v = HEADS_BETA * (j + 1 == i);
                break;
            case HEAD_SELF:
                v = HEADS_BETA * (i == j);
                break;
            default:
                break;
            }
            AR_AT(s, i, j) = v;
        }
    free(t);
    return AR_OK;
}

static int run_head(const experiment *e, head_kind h, FILE *fp)
{
    size_t n = HEADS_N;
    uint64_t cfg[3] = {0x6d6268, (uint64_t)h, n};
    uint64_t seed = ar_seed_derive(e->ctx.seed, cfg, 3);
    ar_matrix s = ar_matrix_empty(), p = ar_matrix_empty(), pfull = ar_matrix_empty();
    ar_masked_workspace *ws = NULL;
    ar_represent_workspace *rws = NULL;
    ar_mask causal;
    ar_error err = {{0}};
    int rc = ar_mask_parse("causal", &causal, &err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&s, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&p, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&pfull, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_masked_workspace_alloc(&ws, n, NULL);
    if (rc == AR_OK)
        rc = ar_represent_workspace_alloc(&rws, n, NULL);
    if (rc == AR_OK)
        rc = head_logits(h, seed, &s);
    int code = rc == AR_OK ? 0 : exp_fail(&e->ctx, rc, &err, "allocation");
    ar_masked_result r;
    memset(&r, 0, sizeof r);
    double max_abs = NAN;
    if (code == 0) {
        masked_softmax(&s, &causal, &p);
        ar_mask none = ar_mask_none();
        masked_softmax(&s, &none, &pfull);
        ar_masked_opts o;
        ar_masked_opts_init(&o);
        o.axis = AR_AXIS_ROW;
        o.seed = seed;
        if ((rc = ar_masked_analyze(ws, ar_matrix_cview(&p), NULL, &causal, &o, &r, &err)) != AR_OK)
            code = exp_fail(&e->ctx, rc, &err, "masked analysis");
    }
    if (code == 0 && r.certified) {
        ar_certificate cert;
        rc = ar_masked_certificate(ws, 0, &cert, &err);
        if (rc != AR_OK)
            code = exp_fail(&e->ctx, rc, &err, "certificate");
        else
            max_abs = cert.max_abs;
        ar_certificate_free(&cert);
    }
    ar_represent_result rr;
    memset(&rr, 0, sizeof rr);
    if (code == 0) {
        ar_represent_opts ro;
        ar_represent_opts_init(&ro);
        ro.axis = AR_AXIS_ROW;
        if ((rc = ar_represent_analyze(rws, ar_matrix_cview(&pfull), NULL, &ro, &rr, &err)) !=
            AR_OK)
            code = exp_fail(&e->ctx, rc, &err, "bidirectional analysis");
    }
    if (code == 0) {
        fprintf(fp, "%s,%zu,", heads[h].name, n);
        exp_csv_real(fp, HEADS_BETA);
        fputc(',', fp);
        exp_csv_real(fp, HEADS_SLOPE);
        fprintf(fp, ",%llu,%zu,%s,", (unsigned long long)seed, heads[h].expected,
                r.exact ? "exact" : "bounds");
        if (r.exact)
            fprintf(fp, "%zu", r.min_head_size);
        fprintf(fp, ",%zu,", r.lower);
        if (r.certified)
            fprintf(fp, "%zu", r.upper);
        fprintf(fp, ",%d", r.certified);
        print_real_or_empty(fp, r.certified, max_abs);
        print_real_or_empty(fp, 1, r.accuracy);
        fprintf(fp, ",%zu,%zu,%zu\n", r.generic_known ? r.generic.value : n / 2,
                rr.centred_rank, rr.min_head_size);
    }
    ar_represent_workspace_free(rws);
    ar_masked_workspace_free(ws);
    ar_matrix_free(&s);
    ar_matrix_free(&p);
    ar_matrix_free(&pfull);
    ar_mask_free(&causal);
    return code;
}

/* ---- the sweep ---- */

/* Configuration i < ngeneric: mask i / nn at n = ns[i % nn] (each mask's
 * rows consecutive, one line per mask in gnuplot); then the heads. */
static int run_one(void *user, size_t i, exp_sweep_record *rec)
{
    const experiment *e = user;
    if (i < e->ngeneric)
        return run_generic(e, i / e->nn, e->ns[i % e->nn], rec->fp[0]);
    return run_head(e, (head_kind)(i - e->ngeneric), rec->fp[1]);
}

/* Polished certificates of windows and bands dominate: the LM iterations
 * grow with n and with the rank tried (about w). */
static double cost(void *user, size_t i)
{
    const experiment *e = user;
    if (i >= e->ngeneric)
        return (double)HEADS_N * HEADS_N;
    const ar_mask *m = &e->masks[i / e->nn];
    double n = (double)e->ns[i % e->nn];
    if (is_staircase_kind(m) || e->ns[i % e->nn] > e->cert_max || e->ns[i % e->nn] <= m->w)
        return n * n;
    return n * n * (double)m->w * (double)m->w * (double)m->w;
}

static void describe(void *user, size_t i, char *buf, size_t len)
{
    const experiment *e = user;
    if (i < e->ngeneric)
        snprintf(buf, len, "%s, n = %zu", mask_texts[i / e->nn], e->ns[i % e->nn]);
    else
        snprintf(buf, len, "structured head %s, n = %d", heads[i - e->ngeneric].name, HEADS_N);
}

static int run(experiment *e)
{
    for (size_t k = 0; k < NMASKS; k++) {
        ar_error err = {{0}};
        int rc = ar_mask_parse(mask_texts[k], &e->masks[k], &err);
        if (rc != AR_OK)
            return exp_fail(&e->ctx, rc, &err, "mask");
    }
    e->ngeneric = NMASKS * e->nn;
    static const char *const files[] = {"masked_bottleneck.csv", "masked_bottleneck_heads.csv"};
    static const char *const headers[] = {
        "mask,kind,param,n,seed,method,status,lower,upper,certify,certified,cert_max_abs,"
        "accuracy,block_lower,generic,generic_status,generic_formula,formula_value",
        "head,n,beta,slope,seed,expected,status,causal_h,lower,upper,certified,cert_max_abs,"
        "accuracy,generic_causal,bidirectional_rank,bidirectional_h"};
    exp_sweep_spec spec = {e->ngeneric + NHEADS, 2, files, headers, run_one, NULL, cost,
                           describe};
    int code = exp_sweep_run(&e->ctx, &spec, e);
    for (size_t k = 0; k < NMASKS; k++)
        ar_mask_free(&e->masks[k]);
    if (code != 0)
        return code;
    char vars[64];
    snprintf(vars, sizeof vars, "certmax=%zu", e->cert_max);
    static const char *const figs[] = {"masked_bottleneck.png", "masked_bottleneck.svg"};
    return exp_render(&e->ctx, EXP_NAME, figs, 2, vars);
}

int main(int argc, char **argv)
{
    static const size_t quick_ns[] = {2, 3, 4, 5, 8, 9, 12, 16, 17, 24, 32, 48, 64};
    static const size_t full_ns[] = {2,  3,  4,  5,  6,  7,  8,  9,  10,  11,  12,  13,
                                     14, 15, 16, 17, 20, 24, 28, 32, 33,  40,  48,  56,
                                     64, 80, 96, 128, 160, 192, 224, 256};
    experiment e;
    memset(&e, 0, sizeof e);
    size_t cert_max = 0;
    static const cli_command_doc doc = {
        EXP_NAME,
        EXP_NAME " [--quick | --full] [--seed S] [--cert-max N] [--out DIR] [--figures DIR|none]",
        "Minimal head size of one attention head under a mask (docs/theory/masked-attention.md):\n"
        "generic maps (Gaussian logits, masked row softmax) under none, causal, window:4/16,\n"
        "band:4/16 and prefix:8 against n, exact for staircase masks and bounds with confirmed\n"
        "certificates for windows and bands, beside the generic formulas; and structured causal\n"
        "heads at n = 32 beside their bidirectional rank. quick: n = 2..64, seconds; full:\n"
        "n = 2..256, about a minute.",
    };
    const cli_option extra[] = {
        {"--cert-max", CLI_SIZE, &cert_max, "N",
         "certificates for windows and bands up to this n (default 32 quick, 64 full); above "
         "it the lower bound and the F_p status only",
         1, NULL},
    };
    int code = exp_parse(&e.ctx, &doc, argc, argv, extra, 1);
    if (code >= 0)
        return code;
    if (e.ctx.full) {
        e.ns = full_ns, e.nn = sizeof full_ns / sizeof full_ns[0];
        e.cert_max = cert_max ? cert_max : 64;
    } else {
        e.ns = quick_ns, e.nn = sizeof quick_ns / sizeof quick_ns[0];
        e.cert_max = cert_max ? cert_max : 32;
    }
    return exp_finish(&e.ctx, run(&e));
}
