/* A safetensors handle over tensors already in memory (a state dict): the
 * same table the file reader builds, each tensor pointing at the caller's
 * bytes.  Validation mirrors the file route's (dtype, rank, size, names); the
 * sorting and the duplicate check are the reader's own (safetensors_internal.h). */
#include "attnrank/safetensors.h"
#include "attnrank/status.h"
#include "io/safetensors_internal.h"

#include <stdint.h>

/* The checks a header entry gets, for one descriptor; fills t on success. */
static int describe_tensor(const char *source, const ar_st_tensor_desc *d, ar_st_tensor *t,
                           ar_error *err)
{
    const char *name = t->name;
    if ((unsigned)d->dtype >= AR_ST_NDTYPES)
        return ar_error_set(err, AR_EINVAL, "%s: tensor '%s': unknown dtype %d", source, name,
                            (int)d->dtype);
    if (d->ndim > AR_ST_MAX_DIMS)
        return ar_error_set(err, AR_EUNSUPPORTED, "%s: tensor '%s': %zu dimensions (at most %d)",
                            source, name, d->ndim, AR_ST_MAX_DIMS);
    t->dtype = d->dtype;
    t->ndim = d->ndim;
    for (size_t i = 0; i < d->ndim; i++)
        t->shape[i] = d->shape[i];
    if (ar_st_count_elements(t) != 0)
        return ar_error_set(err, AR_EINVAL, "%s: tensor '%s': shape overflows the address space",
                            source, name);
    size_t bytes = t->count * ar_st_dtype_size(t->dtype);
    if (d->data == NULL && bytes > 0)
        return ar_error_set(err, AR_EINVAL, "%s: tensor '%s': NULL data (%zu bytes expected)",
                            source, name, bytes);
    t->begin = 0;
    t->end = (uint64_t)bytes;
    t->data = d->data;
    t->file = 0;
    return AR_OK;
}

static int add_tensors(ar_safetensors *st, const char *source, const ar_st_tensor_desc *tensors,
                       size_t count, ar_error *err)
{
    for (size_t i = 0; i < count; i++) {
        if (tensors[i].name == NULL)
            return ar_error_set(err, AR_EINVAL, "%s: tensor %zu has no name (NULL)", source, i);
        ar_st_tensor *t = ar_st_add_tensor(st, tensors[i].name);
        if (t == NULL)
            return ar_error_set(err, AR_ENOMEM, "%s: out of memory", source);
        int rc = describe_tensor(source, &tensors[i], t, err);
        if (rc != AR_OK)
            return rc;
    }
    return AR_OK;
}

static int from_tensors(ar_safetensors *st, const ar_st_tensor_desc *tensors, size_t count,
                        const char *source, ar_error *err)
{
    if (tensors == NULL || count == 0)
        return ar_error_set(err, AR_EINVAL, "%s: no tensors given", source);
    /* One pseudo-file without an image: messages name it, close frees only
     * its name. */
    int rc = ar_st_add_file(st, source, NULL, 0, 0, err);
    if (rc == AR_OK)
        rc = add_tensors(st, source, tensors, count, err);
    if (rc == AR_OK)
        rc = ar_st_finish_index(st, AR_EINVAL, err);
    return rc;
}

int ar_safetensors_from_tensors(ar_safetensors **out, const ar_st_tensor_desc *tensors,
                                size_t count, const char *name, ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    *out = NULL;
    const char *source = name != NULL ? name : "<memory>";
    ar_safetensors *st = ar_st_handle_new(".");
    if (st == NULL)
        return ar_error_set(err, AR_ENOMEM, "%s: out of memory", source);
    int rc = from_tensors(st, tensors, count, source, err);
    if (rc != AR_OK) {
        ar_safetensors_close(st);
        return ar_error_printable(err, rc);
    }
    *out = st;
    return AR_OK;
}
