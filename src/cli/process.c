/* Process-wide settings of the dependencies.  Only the CLI (and benchmarks)
 * change them; the library keeps no mutable global state. */
#include "cli.h"

#include <dlfcn.h>
#include <gsl/gsl_errno.h>

void cli_setup_process(void)
{
    /* The library reports GSL failures through return codes; GSL's default
     * handler would abort the process instead. */
    gsl_set_error_handler_off();
}

int cli_set_blas_threads(int threads)
{
    /* Looked up at run time: the alternatives system may point libblas.so.3
     * at a BLAS without this entry point. */
    void (*set_threads)(int) = NULL;
    int (*get_threads)(void) = NULL;
    *(void **)&set_threads = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    *(void **)&get_threads = dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
    if (set_threads == NULL || get_threads == NULL)
        return 0;
    if (threads > 0)
        set_threads(threads);
    return get_threads();
}
