/* MPI start and stop for `spectrum --distributed` (see mpi_session.h). */
#include "mpi_session.h"

#ifndef AR_HAVE_MPI

int cli_dist_begin(int *rank, int *size, ar_error *err)
{
    *rank = 0;
    *size = 1;
    return ar_error_set(err, AR_EUNSUPPORTED,
                        "--distributed: this build has no MPI support (rebuild with "
                        "meson configure -Dmpi=enabled)");
}

void cli_dist_end(void)
{
}

#else

#include <mpi.h>

static int mpi_started;

int cli_dist_begin(int *rank, int *size, ar_error *err)
{
    int init = 0;
    MPI_Initialized(&init);
    if (!init) {
        if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
            return ar_error_set(err, AR_EINVAL, "--distributed: MPI_Init failed");
        mpi_started = 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return AR_OK;
}

void cli_dist_end(void)
{
    int fin = 0;
    if (mpi_started && MPI_Finalized(&fin) == MPI_SUCCESS && !fin)
        MPI_Finalize();
    mpi_started = 0;
}

#endif
