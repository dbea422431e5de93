/* Internal to the library and its tests: not installed, not exported.
 *
 * The handle bookkeeping of the safetensors reader (safetensors.c), shared
 * with the handle made from tensors already in memory (safetensors_memory.c)
 * so that both routes build the same sorted, duplicate-free table. */
#ifndef ATTNRANK_IO_SAFETENSORS_INTERNAL_H
#define ATTNRANK_IO_SAFETENSORS_INTERNAL_H

#include "attnrank/safetensors.h"

/* An empty handle whose directory (ar_safetensors_dir) is dir; NULL when out
 * of memory.  Released by ar_safetensors_close. */
ar_safetensors *ar_st_handle_new(const char *dir);

/* Append a file of the model: path (copied) names it in messages, base/size
 * is its image (NULL/0 when the tensors live elsewhere), mapped = 1 has
 * close munmap it. */
int ar_st_add_file(ar_safetensors *st, const char *path, const unsigned char *base, size_t size,
                   int mapped, ar_error *err);

/* Append a zeroed tensor with a copy of name; NULL when out of memory. */
ar_st_tensor *ar_st_add_tensor(ar_safetensors *st, const char *name);

/* t->count from t->shape[0 .. t->ndim): 0 on success, -1 when the element
 * count or its size in bytes (t->dtype) exceeds the address space. */
int ar_st_count_elements(ar_st_tensor *t);

/* Sort the tensors by name and refuse a name given twice (status
 * duplicate_status, the message naming the tensor and its files). */
int ar_st_finish_index(ar_safetensors *st, int duplicate_status, ar_error *err);

#endif
