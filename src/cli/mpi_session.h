/* MPI start and stop for `attnrank spectrum --distributed` (the computation
 * is the library's, attnrank/spectrum_dist.h).  Starting MPI is process-wide
 * state, so the CLI does it, never the library. */
#ifndef ATTNRANK_CLI_MPI_SESSION_H
#define ATTNRANK_CLI_MPI_SESSION_H

#include "attnrank/attnrank.h"
#include "attnrank/spectrum_dist.h"

/* Start MPI (once per process); *rank, *size of MPI_COMM_WORLD.  Returns
 * AR_OK, or AR_EUNSUPPORTED when the build has no MPI. */
int cli_dist_begin(int *rank, int *size, ar_error *err);
/* Finish MPI if cli_dist_begin started it. */
void cli_dist_end(void);

#endif
