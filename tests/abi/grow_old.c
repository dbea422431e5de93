/* An "old" program: compiled from ar_rank_metrics as it stood before
 * rank_margin took the first slot of its reserved tail (the 0.10 record of
 * abi/attnrank.layout), declaring what it uses itself instead of including
 * today's rank.h, and linked against today's library.  It must see every old
 * field as before and nothing written beyond its struct (docs/api.md,
 * "Structs that can grow").  The new field lands in its tail. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct old_rank_opts {
    double rtol, atol;
    int precision; /* ar_precision */
    double energy_fraction;
    uint64_t seed;
    uint64_t reserved[8];
} old_rank_opts;

typedef struct old_rank_metrics {
    size_t m, n;
    size_t rank;
    double threshold;
    double rtol, atol;
    int precision;
    double stable_rank;
    double roy_vetterli_rank;
    double participation_ratio;
    size_t energy_rank;
    double energy_fraction;
    double nuclear_rank;
    int rule;
    size_t certain_rank;
    double certain_threshold;
    uint64_t seed;
    size_t draws;
    uint64_t reserved[8]; /* the whole tail: no rank_margin yet */
} old_rank_metrics;

void ar_rank_opts_init(old_rank_opts *opts);
int ar_rank_metrics_compute(const double *s, size_t k, size_t m, size_t n,
                            const old_rank_opts *opts, old_rank_metrics *out,
                            void *err); /* ar_error *, passed NULL */

#define GUARD 0xA5
enum { GUARD_BYTES = 64 };

static int guard_intact(const unsigned char *g)
{
    for (int i = 0; i < GUARD_BYTES; i++)
        if (g[i] != GUARD)
            return 0;
    return 1;
}

static int check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    return ok ? 0 : 1;
}

int main(void)
{
    int failed = 0;
    struct {
        old_rank_opts opts;
        unsigned char guard[GUARD_BYTES];
    } o;
    memset(&o, GUARD, sizeof o);
    ar_rank_opts_init(&o.opts);
    failed += check(guard_intact(o.guard), "ar_rank_opts_init wrote nothing past the old struct");
    failed += check(o.opts.rtol == -1.0 && o.opts.atol == 0.0 && o.opts.energy_fraction == 0.99,
                    "the old options' defaults");
    o.opts.atol = 1e-2;

    /* s = (4, 2, 1e-3) at t = 1e-2: rank 2, margin min(2/1e-2, 1e-2/1e-3) = 10 */
    const double s[] = {4.0, 2.0, 1e-3};
    struct {
        old_rank_metrics m;
        unsigned char guard[GUARD_BYTES];
    } r;
    memset(&r, GUARD, sizeof r);
    int rc = ar_rank_metrics_compute(s, 3, 3, 3, &o.opts, &r.m, NULL);
    failed += check(rc == 0, "ar_rank_metrics_compute returned AR_OK");
    failed += check(guard_intact(r.guard), "nothing written past the old struct");
    failed += check(r.m.m == 3 && r.m.n == 3 && r.m.rank == 2 && r.m.threshold == 1e-2 &&
                        r.m.atol == 1e-2 && r.m.energy_fraction == 0.99 && r.m.draws == 0,
                    "the old fields: shape, rank, threshold, tolerances");
    double energy = 16.0 + 4.0 + 1e-6;
    failed += check(fabs(r.m.stable_rank - energy / 16.0) <= 1e-15 * energy / 16.0 &&
                        fabs(r.m.nuclear_rank - (6.001 * 6.001) / energy) <= 1e-14,
                    "the old effective ranks");
    double slot0;
    memcpy(&slot0, &r.m.reserved[0], sizeof slot0);
    failed += check(fabs(slot0 - 10.0) <= 1e-14, "the new library's rank_margin is in the tail");
    printf("old consumer: %d failed\n", failed);
    return failed != 0;
}
