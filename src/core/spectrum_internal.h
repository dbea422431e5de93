/* Internal to the library and its tests: not installed, not exported. */
#ifndef ATTNRANK_CORE_SPECTRUM_INTERNAL_H
#define ATTNRANK_CORE_SPECTRUM_INTERNAL_H

#include "attnrank/spectrum.h"

/* The workspace of the one-shot entries: gesdd's query only, gesvd's
 * workspace queried and allocated when the fallback first runs.  Tests use
 * it with ar_svd_workspace_force_fallback to reach that path. */
int ar_svd_workspace_alloc_oneshot(ar_svd_workspace **ws, size_t m, size_t n, ar_svd_job job);

#endif
