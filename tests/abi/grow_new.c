/* The "new" program of the pair (grow_old.c): today's header, the field
 * rank_margin by name (that the size stayed is the test abi_layout's). */
#include <math.h>
#include <stdio.h>

#include <attnrank/rank.h>
#include <attnrank/status.h>

int main(void)
{
    const double s[] = {4.0, 2.0, 1e-3};
    ar_rank_opts o;
    ar_rank_opts_init(&o);
    o.atol = 1e-2;
    ar_rank_metrics m;
    int rc = ar_rank_metrics_compute(s, 3, 3, 3, &o, &m, NULL);
    int ok = rc == AR_OK && m.rank == 2 && fabs(m.rank_margin - 10.0) <= 1e-14;
    printf("%s: rank %zu, rank_margin %.17g (rc %d)\n", ok ? "ok" : "FAIL", m.rank, m.rank_margin,
           rc);
    return ok ? 0 : 1;
}
