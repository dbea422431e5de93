/* Process-wide settings of the dependencies.  Only the CLI (and benchmarks)
 * change them; the library keeps no mutable global state. */
#include "app/app.h"

#include <dlfcn.h>
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_setup_process(void)
{
    /* The library reports GSL failures through return codes; GSL's default
     * handler would abort the process instead. */
    gsl_set_error_handler_off();
}

double cli_memory_limit(void)
{
    const char *env = getenv("ATTNRANK_MAX_MEMORY");
    if (env != NULL && env[0] != '\0') {
        char *end = NULL;
        double v = strtod(env, &end);
        if (end != env && *end == '\0' && v > 0.0)
            return v;
    }
    FILE *fp = fopen("/proc/meminfo", "r");
    double kib = 0.0;
    if (fp != NULL) {
        char line[256];
        while (fgets(line, sizeof line, fp) != NULL)
            if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1)
                break;
        fclose(fp);
    }
    return kib > 0.0 ? kib * 1024.0 : 16e9;
}

int cli_memory_guard(const char *cmd, const char *what, double need_bytes)
{
    double limit = cli_memory_limit();
    if (need_bytes <= limit)
        return -1;
    return cli_usage_error(cmd,
                           "%s needs about %.3g GB of memory, more than the %.3g GB available "
                           "(set ATTNRANK_MAX_MEMORY to change the limit)",
                           what, need_bytes / 1e9, limit / 1e9);
}

int cli_have_program(const char *name)
{
    const char *path = getenv("PATH");
    char buf[4096];
    for (const char *p = path; p != NULL && *p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(buf, sizeof buf, "%.*s/%s", (int)len, p, name);
        if (access(buf, X_OK) == 0)
            return 1;
        p = colon ? colon + 1 : NULL;
    }
    return 0;
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
