/* Internal to src/io: what the matrix writers share. */
#ifndef ATTNRANK_IO_WRITER_INTERNAL_H
#define ATTNRANK_IO_WRITER_INTERNAL_H

#include "attnrank/io.h"

/* The one argument check of ar_npy_write and ar_csv_write_matrix: a path,
 * a valid view, not empty. */
int ar_io_check_writable(const char *path, ar_cview m, ar_error *err);

#endif
