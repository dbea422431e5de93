/* Internal to src/io: what the matrix writers share. */
#ifndef ATTNRANK_IO_WRITER_INTERNAL_H
#define ATTNRANK_IO_WRITER_INTERNAL_H

#include "attnrank/io.h"

/* The start of ar_npy_write and ar_csv_write_matrix: the one argument
 * check (a path, a valid view, not empty), then the atomic file *af that
 * the writer fills and commits (or aborts). */
int ar_io_open_writer(const char *path, ar_cview m, ar_atomic_file **af, ar_error *err);

#endif
