/* gnuplot heat maps of the CLI (heatmap.h). */
#include "heatmap.h"
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void cli_heat_terminal(FILE *fp, const char *out, size_t width, size_t nrows)
{
    fprintf(fp, "set terminal pngcairo size %zu,%zu font ',10'\n", width,
            (size_t)(300 + 18 * (nrows < 60 ? nrows : 60)));
    fprintf(fp, "set output '%s'\n", out);
}

void cli_heat_grid_plot(FILE *fp, const cli_heat_grid *g, const char *block)
{
    fprintf(fp, "$%s << EOD\n", block);
    for (size_t r = 0; r < g->nrows; r++)
        for (size_t c = 0; c < g->ncols; c++) {
            double v = g->values[r * g->ncols + c];
            if (isfinite(v))
                fprintf(fp, "%zu %zu %.9g\n", g->col_first + c, g->row_at[r], v);
            else
                fprintf(fp, "%zu %zu NaN\n", g->col_first + c, g->row_at[r]);
        }
    fprintf(fp, "EOD\n");
    fprintf(fp, "set title \"%s\" noenhanced\n", g->title);
    fprintf(fp, "set xlabel 'head'\nset ylabel 'layer'\n");
    fprintf(fp, "set xrange [%g:%g]\n", (double)g->col_first - 0.5,
            (double)(g->col_first + g->ncols) - 0.5);
    /* layer 0 on top, as in a matrix; integer tics while they fit */
    fprintf(fp, "set yrange [%g:%g]\n", (double)g->row_at[g->nrows - 1] + 0.5,
            (double)g->row_at[0] - 0.5);
    if (g->ncols <= 32)
        fprintf(fp, "set xtics 1\n");
    if (g->nrows <= 48)
        fprintf(fp, "set ytics 1\n");
    fprintf(fp, "set cbrange [%g:%g]\nset cblabel \"%s\" noenhanced\n", g->cbmin, g->cbmax,
            g->cblabel);
    fprintf(fp, "set palette %s\nunset key\nset tics out\n", g->palette);
    fprintf(fp, "plot $%s using 1:2:3 with image\n", block);
}

void cli_heat_grid_script(FILE *fp, const char *out, const void *ctx)
{
    const cli_heat_grid *g = ctx;
    cli_heat_terminal(fp, out, 900, g->nrows);
    cli_heat_grid_plot(fp, g, "grid");
}

/* gnuplot reads the script on stdin; its stdout goes to our stderr. */
static int run_gnuplot(cli_plot_script script, const void *ctx, const char *out)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fds[0], 0);
        dup2(2, 1);
        close(fds[0]);
        close(fds[1]);
        execlp("gnuplot", "gnuplot", (char *)NULL);
        _exit(127);
    }
    close(fds[0]);
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old); /* a dying gnuplot must not kill us */
    FILE *fp = fdopen(fds[1], "w");
    int bad = fp == NULL;
    if (fp != NULL) {
        script(fp, out, ctx);
        bad = fclose(fp) != 0;
    } else {
        close(fds[1]);
    }
    sigaction(SIGPIPE, &old, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return !bad && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int cli_gnuplot_png(const char *cmd, const char *path, cli_plot_script script, const void *ctx)
{
    if (!cli_have_program("gnuplot")) {
        fprintf(stderr, "attnrank %s: warning: gnuplot not found, heat map %s skipped\n", cmd,
                path);
        return -1;
    }
    ar_atomic_file *af;
    ar_error err = {{0}};
    int rc = ar_atomic_open(&af, path, &err);
    if (rc != AR_OK)
        return cli_status_error(cmd, rc, &err, NULL);
    const char *tmp = ar_atomic_tmp_path(af);
    if (strchr(tmp, '\'') != NULL || run_gnuplot(script, ctx, tmp) != 0) {
        ar_atomic_abort(af);
        fprintf(stderr, "attnrank %s: gnuplot failed to render the heat map %s\n", cmd, path);
        return CLI_EXIT_INTERNAL;
    }
    rc = ar_atomic_commit(af, &err); /* gnuplot wrote the file; commit renames it */
    return rc == AR_OK ? -1 : cli_status_error(cmd, rc, &err, NULL);
}
