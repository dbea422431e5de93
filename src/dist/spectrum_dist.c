/* The part of attnrank/spectrum_dist.h every build has: options, results,
 * and, without MPI, entry points that say so (spectrum_dist_mpi.c has the
 * real ones). */
#include "attnrank/spectrum_dist.h"

#include <stdlib.h>
#include <string.h>

void ar_spectrum_dist_opts_init(ar_spectrum_dist_opts *opts)
{
    if (opts == NULL)
        return;
    memset(opts, 0, sizeof *opts);
    opts->block = 64;
}

void ar_spectrum_dist_result_free(ar_spectrum_dist_result *r)
{
    if (r == NULL)
        return;
    free(r->s);
    memset(r, 0, sizeof *r);
}

#ifndef AR_HAVE_MPI

int ar_spectrum_dist_available(void)
{
    return 0;
}

static int unsupported(ar_spectrum_dist_result *out, ar_error *err)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    return ar_error_set(err, AR_EUNSUPPORTED,
                        "distributed spectra: this build has no MPI support (rebuild with "
                        "meson configure -Dmpi=enabled)");
}

int ar_spectrum_dist_svals_npy(const char *path, const ar_spectrum_dist_opts *opts,
                               ar_spectrum_dist_result *out, ar_error *err)
{
    (void)path, (void)opts;
    return unsupported(out, err);
}

int ar_spectrum_dist_svals_factored(ar_cview f, ar_cview g, const ar_spectrum_dist_opts *opts,
                                    ar_spectrum_dist_result *out, ar_error *err)
{
    (void)f, (void)g, (void)opts;
    return unsupported(out, err);
}

#endif
