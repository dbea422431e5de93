/* gnuplot heat maps of the CLI (weights --heatmap, circuits --heatmap and
 * --heatmap-composition): the driver (gnuplot on a pipe, the PNG written
 * atomically, a warning when gnuplot is missing) and the layer x head image
 * script shared by the commands.  Formatting only. */
#ifndef ATTNRANK_CLI_HEATMAP_H
#define ATTNRANK_CLI_HEATMAP_H

#include <stddef.h>
#include <stdio.h>

/* Writes the gnuplot script for the PNG `out` (a path without a single
 * quote) on fp. */
typedef void (*cli_plot_script)(FILE *fp, const char *out, const void *ctx);

/* Render path with gnuplot running script(ctx).  -1 when written, or when
 * gnuplot is missing (a warning naming cmd and path on stderr, nothing
 * written); else an exit code after one line on stderr. */
int cli_gnuplot_png(const char *cmd, const char *path, cli_plot_script script, const void *ctx);

/* A layer x head image: row r is layer row_at[r], column c head
 * col_first + c; value values[r * ncols + c] (NaN: undefined, left blank). */
typedef struct cli_heat_grid {
    const char *title;     /* written noenhanced */
    const char *cblabel;
    size_t nrows, ncols;
    const size_t *row_at;
    size_t col_first;
    const double *values;
    double cbmin, cbmax;
    const char *palette;   /* the gnuplot palette spec after "set palette " */
} cli_heat_grid;

/* The terminal and output lines of a heat map of nrows layers. */
void cli_heat_terminal(FILE *fp, const char *out, size_t width, size_t nrows);
/* One image: datablock name, data, title, axes, colour box and the plot. */
void cli_heat_grid_plot(FILE *fp, const cli_heat_grid *g, const char *block);
/* A cli_plot_script of one cli_heat_grid (ctx). */
void cli_heat_grid_script(FILE *fp, const char *out, const void *ctx);

#endif
