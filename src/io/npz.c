/* NumPy .npz archives (numpy.savez / savez_compressed): a zip file whose
 * members are .npy files named after the arrays ("arr_0.npy", or the
 * keyword given to savez).  libzip opens and inflates the member; the .npy
 * inside is parsed by the same checked reader as a plain file, so every
 * rule of npy.c (dtypes, shapes, sizes against what is there) applies. */
#include "attnrank/io.h"
#include "attnrank/status.h"
#include "npy_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#define NPZ_NAMES_SHOWN 8

static int is_array_member(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".npy") == 0;
}

/* "a, b, c" (the first few array names, without .npy) for messages. */
static void list_arrays(zip_t *z, char *out, size_t len)
{
    size_t used = 0, shown = 0;
    zip_int64_t count = zip_get_num_entries(z, 0);
    out[0] = '\0';
    for (zip_int64_t i = 0; i < count && used < len; i++) {
        const char *name = zip_get_name(z, (zip_uint64_t)i, 0);
        if (name == NULL || !is_array_member(name))
            continue;
        int k = shown < NPZ_NAMES_SHOWN
                    ? snprintf(out + used, len - used, "%s%.*s", shown ? ", " : "",
                               (int)(strlen(name) - 4), name)
                    : snprintf(out + used, len - used, ", ...");
        used += k > 0 ? (size_t)k : 0;
        if (++shown > NPZ_NAMES_SHOWN)
            break;
    }
}

/* Index of the member to read: the one named key (with or without .npy),
 * or the only array when key is NULL. */
static int find_member(zip_t *z, const char *path, const char *key, zip_uint64_t *index,
                       ar_error *err)
{
    char names[256];
    zip_int64_t count = zip_get_num_entries(z, 0), arrays = 0, found = -1;
    for (zip_int64_t i = 0; i < count; i++) {
        const char *name = zip_get_name(z, (zip_uint64_t)i, 0);
        if (name == NULL || !is_array_member(name))
            continue;
        arrays++;
        size_t klen = key ? strlen(key) : 0;
        if (key == NULL ? found < 0
                        : (strcmp(name, key) == 0 ||
                           (strlen(name) == klen + 4 && strncmp(name, key, klen) == 0)))
            found = i;
    }
    list_arrays(z, names, sizeof names);
    if (arrays == 0)
        return ar_error_set(err, AR_EFORMAT, "%s: a zip archive without any .npy member (not "
                                             "an .npz written by numpy.savez)",
                            path);
    if (key == NULL && arrays > 1)
        return ar_error_set(err, AR_EINVAL,
                            "%s: .npz archive holds %lld arrays (%s): choose one with {opt:key=NAME}",
                            path, (long long)arrays, names);
    if (found < 0)
        return ar_error_set(err, AR_EINVAL, "%s: .npz archive has no array '%s' (arrays: %s)",
                            path, key, names);
    *index = (zip_uint64_t)found;
    return AR_OK;
}

/* Inflate member index into a malloc'ed buffer, refusing more than cap. */
static int read_member(zip_t *z, zip_uint64_t index, const char *label, size_t cap,
                       unsigned char **buf, size_t *len, ar_error *err)
{
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z, index, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
        return ar_error_set(err, AR_EFORMAT, "%s: cannot read the member's size: %s", label,
                            zip_strerror(z));
    if (st.size > (zip_uint64_t)SIZE_MAX - 1 || (cap > 0 && st.size > cap))
        return ar_error_set(err, AR_ENOMEM, "%s: %llu bytes uncompressed, above the limit %zu",
                            label, (unsigned long long)st.size, cap);
    *len = (size_t)st.size;
    *buf = malloc(*len > 0 ? *len : 1);
    if (*buf == NULL)
        return ar_error_set(err, AR_ENOMEM, "%s: out of memory for %zu bytes", label, *len);
    zip_file_t *f = zip_fopen_index(z, index, 0);
    zip_int64_t got = f ? zip_fread(f, *buf, *len) : -1;
    int rc = AR_OK;
    if (got < 0 || (size_t)got != *len)
        rc = ar_error_set(err, AR_EFORMAT, "%s: cannot inflate the member: %s", label,
                          f ? zip_file_strerror(f) : zip_strerror(z));
    if (f != NULL)
        zip_fclose(f);
    if (rc != AR_OK) {
        free(*buf);
        *buf = NULL;
    }
    return rc;
}

int ar_npz_read(const char *path, const char *key, ar_array *out, size_t max_bytes,
                ar_error *err)
{
    if (path == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_npz_read: NULL argument");
    memset(out, 0, sizeof *out);
    int zerr = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY, &zerr);
    if (z == NULL) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        int rc = ar_error_set(err, zerr == ZIP_ER_OPEN || zerr == ZIP_ER_NOENT ? AR_EIO
                                                                               : AR_EFORMAT,
                              "%s: not a readable .npz (zip) archive: %s", path,
                              zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return rc;
    }
    zip_uint64_t index = 0;
    unsigned char *buf = NULL;
    size_t len = 0;
    int rc = find_member(z, path, key, &index, err);
    char label[512];
    if (rc == AR_OK) {
        const char *member = zip_get_name(z, index, 0);
        snprintf(label, sizeof label, "%s[%s]", path, member ? member : "?");
        rc = read_member(z, index, label, max_bytes, &buf, &len, err);
    }
    zip_discard(z); /* read-only: nothing to write back */
    if (rc == AR_OK)
        rc = ar_npy_parse_named(buf, len, label, out, max_bytes, err);
    free(buf);
    return rc;
}
