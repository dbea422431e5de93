/* Internal to src/io: the .npy parser with a caller-chosen name for its
 * messages (an .npz member is named "archive.npz[member.npy]"). */
#ifndef ATTNRANK_NPY_INTERNAL_H
#define ATTNRANK_NPY_INTERNAL_H

#include <stddef.h>
#include "attnrank/io.h"

int ar_npy_parse_named(const unsigned char *buf, size_t len, const char *name, ar_array *out,
                       size_t max_bytes, ar_error *err);

#endif
