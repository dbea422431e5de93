/* Internal to the library and its tests: not installed, not exported. */
#ifndef ATTNRANK_IO_ARRAY_INTERNAL_H
#define ATTNRANK_IO_ARRAY_INTERNAL_H

#include "attnrank/io.h"

/* Matrix k of the stack as a column-major alias of the array's buffer
 * (never freed; empty when k is out of range). */
ar_matrix ar_array_slice_cm(const ar_array *a, size_t k);

/* An empty array (no data, float64): what every reader starts from. */
void ar_array_reset(ar_array *a);
/* The buffer for an array's data, of bytes bytes; released by free()
 * (ar_array_free). */
void *ar_array_alloc_data(size_t bytes);
/* AR_ESIZE naming `name` and the shape when ndim < 2 (a scalar or one
 * row is not a matrix): ar_array_require_matrix, for readers that hold a
 * shape but no ar_array (the distributed spectrum's .npy header). */
int ar_require_matrix_shape(size_t ndim, const size_t *shape, const char *name, ar_error *err);

#endif
