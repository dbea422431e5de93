/* Reading a matrix file of any supported type: the type is decided by the
 * file's first bytes, then by its extension (io.h). */
#include "attnrank/io.h"
#include "attnrank/status.h"
#include "npy_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int has_extension(const char *path, const char *ext)
{
    size_t n = strlen(path), k = strlen(ext);
    return n >= k && strcasecmp(path + n - k, ext) == 0;
}

/* What the first bytes say: 'n' for .npy, 'z' for a zip (.npz), 0 for
 * anything else (CSV) or an unreadable file (the reader then reports it). */
static int sniff_format(const char *path)
{
    unsigned char head[NPY_MAGIC_LEN] = {0};
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return 0;
    size_t got = fread(head, 1, sizeof head, fp);
    fclose(fp);
    if (got >= NPY_MAGIC_LEN && memcmp(head, NPY_MAGIC, NPY_MAGIC_LEN) == 0)
        return 'n';
    if (got >= 4 && memcmp(head, "PK\x03\x04", 4) == 0)
        return 'z';
    return 0;
}

int ar_matrix_file_read_key(const char *path, const char *key, ar_array *out, size_t max_bytes,
                            ar_error *err)
{
    if (path == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_matrix_file_read: NULL argument");
    /* Content first: an .npz saved under another name, or an .npy named
     * .csv, is still read for what it is (a zip once read as CSV gave
     * "'PK...' is not a number"). */
    int format = sniff_format(path);
    if (format == 'z' || (format == 0 && has_extension(path, ".npz")))
        return ar_npz_read(path, key, out, max_bytes, err);
    if (key != NULL)
        return ar_error_set(err, AR_EINVAL, "%s: {opt:key=NAME} selects an array of an .npz archive; "
                                            "this file is not one",
                            path);
    if (format == 'n' || has_extension(path, ".npy"))
        return ar_npy_read(path, out, max_bytes, err);
    return ar_csv_read_ex(path, out, max_bytes, err);
}

int ar_matrix_file_read(const char *path, ar_array *out, size_t max_bytes, ar_error *err)
{
    return ar_matrix_file_read_key(path, NULL, out, max_bytes, err);
}
