/* The float64 hazard of windows and bands: how far the exact minimal-rank
 * completion drifts from its data in double precision.
 *
 * usage: bench_masked_hazard [--seeds K] [--polish N] [--extra E]
 *
 * For each pattern (window:16 and band:4 at n = 32 and 64, band:16 at
 * n = 64, window:16 at n = 128) and seeds 0 .. K-1 (default 5): Gaussian
 * logits S (n x n, N(0, 1), rows as queries), their masked row log-softmax
 * L, the reduced interval data D of L (differences along each query's
 * keys, as the masked analysis takes them), then the oldest-columns
 * recursion plus N Levenberg-Marquardt polish iterations (default 200, the
 * analysis' default) at ranks h* .. h* + E (E default 2; h* the mask's
 * generic minimal head size), printing max |U V^T - D| on the pattern: the
 * median and the largest over the seeds.  A residual near round-off means
 * the certificate of that rank reaches the forward check's accuracy; a
 * large one at h* is the hazard docs/theory/masked-attention.md describes
 * (represent then reports the proved lower bound and the smallest confirmed
 * certificate).  Timing is not measured: this is an accuracy table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/attnrank.h"
/* the interval completion has no public entry */
#include "theory/masked/masked_internal.h"

typedef struct pattern_case {
    const char *mask;
    size_t n;
} pattern_case;

static const pattern_case cases[] = {
    {"window:16", 32}, {"window:16", 64}, {"window:16", 128},
    {"band:4", 32},    {"band:4", 64},    {"band:16", 64},
};
#define NCASES (sizeof cases / sizeof cases[0])
#define MAX_SEEDS 64
#define MAX_EXTRA 4

/* L = masked row log-softmax of Gaussian logits (0 outside the mask). */
static int masked_log_map(const unsigned char *allowed, size_t n, uint64_t seed, ar_matrix *l)
{
    int rc = ar_matrix_alloc(l, n, n, NULL);
    ar_rng *rng = rc == AR_OK ? ar_rng_alloc(seed) : NULL;
    if (rc == AR_OK && rng == NULL)
        rc = AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_fill_gaussian(ar_matrix_view(l), rng, 1.0, NULL);
    ar_rng_free(rng);
    for (size_t i = 0; rc == AR_OK && i < n; i++) {
        double top = -INFINITY, z = 0.0;
        for (size_t j = 0; j < n; j++)
            if (allowed[i * n + j])
                top = fmax(top, AR_AT(l, i, j));
        for (size_t j = 0; j < n; j++)
            if (allowed[i * n + j])
                z += exp(AR_AT(l, i, j) - top);
        for (size_t j = 0; j < n; j++)
            AR_AT(l, i, j) = allowed[i * n + j] ? AR_AT(l, i, j) - top - log(z) : 0.0;
    }
    return rc;
}

/* max |U V^T - D| at rank k for one seed. */
static int residual_at(const ar_interval_form *f, const ar_matrix *d, size_t k, uint64_t seed,
                       size_t polish, double *resid)
{
    ar_matrix u = ar_matrix_empty(), v = ar_matrix_empty();
    int rc = ar_matrix_alloc(&u, f->pat.rows, k, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&v, f->pat.cols, k, NULL);
    if (rc == AR_OK)
        rc = ar_interval_complete(&f->pat, d, k, seed, polish, &u, &v, resid, NULL);
    ar_matrix_free(&u);
    ar_matrix_free(&v);
    return rc;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Residuals of one pattern at ranks h* .. h* + extra over the seeds. */
static int run_case(const pattern_case *c, size_t seeds, size_t polish, size_t extra,
                    double out[MAX_EXTRA + 1][MAX_SEEDS], size_t *hstar)
{
    ar_mask mask;
    ar_mask_generic g;
    int rc = ar_mask_parse(c->mask, &mask, NULL);
    if (rc != AR_OK)
        return rc;
    size_t n = c->n;
    unsigned char *allowed = malloc(n * n);
    rc = allowed != NULL ? ar_mask_generic_value(&mask, n, &g, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_mask_fill_pattern(&mask, n, allowed, NULL);
    ar_interval_form f;
    memset(&f, 0, sizeof f);
    if (rc == AR_OK)
        rc = ar_interval_form_build(allowed, n, &f);
    if (rc == AR_OK && f.kind == AR_REDUCE_NONE)
        rc = AR_EUNSUPPORTED;
    *hstar = rc == AR_OK ? g.value : 0;
    for (size_t s = 0; rc == AR_OK && s < seeds; s++) {
        ar_matrix l = ar_matrix_empty(), d = ar_matrix_empty();
        rc = masked_log_map(allowed, n, s, &l);
        if (rc == AR_OK)
            rc = ar_matrix_alloc(&d, n, n - 1, NULL);
        if (rc == AR_OK)
            ar_interval_form_data(&f, &l, &d);
        for (size_t e = 0; rc == AR_OK && e <= extra; e++)
            rc = residual_at(&f, &d, g.value + e, s, polish, &out[e][s]);
        ar_matrix_free(&l);
        ar_matrix_free(&d);
    }
    ar_interval_form_free(&f);
    free(allowed);
    ar_mask_free(&mask);
    return rc;
}

static size_t parse_count(const char *flag, const char *text, size_t max)
{
    char *end;
    unsigned long v = strtoul(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v > max) {
        fprintf(stderr, "bench_masked_hazard: %s must be an integer in [0, %zu], got '%s'\n",
                flag, max, text);
        exit(2);
    }
    return (size_t)v;
}

int main(int argc, char **argv)
{
    size_t seeds = 5, polish = 200, extra = 2;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--seeds") == 0)
            seeds = parse_count("--seeds", argv[++i], MAX_SEEDS);
        else if (i + 1 < argc && strcmp(argv[i], "--polish") == 0)
            polish = parse_count("--polish", argv[++i], 100000);
        else if (i + 1 < argc && strcmp(argv[i], "--extra") == 0)
            extra = parse_count("--extra", argv[++i], MAX_EXTRA);
        else {
            fprintf(stderr, "usage: bench_masked_hazard [--seeds K] [--polish N] [--extra E]\n");
            return 2;
        }
    }
    if (seeds == 0)
        seeds = 1;
    printf("# max |U V^T - D| after %zu polish iterations, Gaussian logits N(0, 1), "
           "seeds 0..%zu: median (largest)\n", polish, seeds - 1);
    printf("| pattern (n / w) | h* |");
    for (size_t e = 0; e <= extra; e++)
        printf(e == 0 ? " at h* |" : " h* + %zu |", e);
    printf("\n|---|---|");
    for (size_t e = 0; e <= extra; e++)
        printf("---|");
    printf("\n");
    for (size_t c = 0; c < NCASES; c++) {
        static double res[MAX_EXTRA + 1][MAX_SEEDS];
        size_t hstar;
        int rc = run_case(&cases[c], seeds, polish, extra, res, &hstar);
        if (rc != AR_OK) {
            fprintf(stderr, "bench_masked_hazard: %s at n = %zu: %s\n", cases[c].mask,
                    cases[c].n, ar_strerror(rc));
            return 3;
        }
        const char *w = strchr(cases[c].mask, ':') + 1;
        printf("| %.*s %zu/%s | %zu |", (int)(w - 1 - cases[c].mask), cases[c].mask, cases[c].n,
               w, hstar);
        for (size_t e = 0; e <= extra; e++) {
            qsort(res[e], seeds, sizeof res[e][0], compare_doubles);
            printf(" %.1e (%.1e) |", res[e][seeds / 2], res[e][seeds - 1]);
        }
        printf("\n");
        fflush(stdout);
    }
    return 0;
}
