/* The --mask option shared by represent, heads and check: parsing, files
 * and JSON (docs/theory/masked-attention.md for the kinds). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A pattern file: an n x n matrix of 0/1 in the layout of axis. */
static int read_pattern(const char *cmd, const char *path, ar_axis axis, size_t n,
                        ar_mask *mask)
{
    ar_array arr;
    memset(&arr, 0, sizeof arr);
    ar_error err = {{0}};
    int rc = ar_matrix_file_read(path, &arr, (size_t)(cli_memory_limit() / 8), &err);
    if (rc == AR_OK && (rc = ar_array_require_matrix(&arr, path, &err)) != AR_OK)
        ar_array_free(&arr);
    if (rc != AR_OK)
        return cli_status_error(cmd, rc, &err, "--mask file");
    int code = -1;
    char where[AR_ERROR_MSG_LEN];
    snprintf(where, sizeof where, "--mask file:%s", path);
    if (arr.count != 1)
        code = cli_usage_error(cmd, "%s: expected one %zu x %zu matrix (the map's shape), got a "
                               "stack of %zu",
                               where, n, n, arr.count);
    if (code < 0 && (rc = ar_mask_from_matrix(ar_array_slice(&arr, 0), axis, n, mask, &err)))
        code = cli_status_error(cmd, rc, &err, where);
    ar_array_free(&arr);
    return code;
}

int cli_mask_from_text(const char *cmd, const char *text, ar_axis axis, size_t n, int for_map,
                       ar_mask *mask, int *is_auto)
{
    if (is_auto != NULL)
        *is_auto = 0;
    ar_mask_text_kind kind;
    ar_error err = {{0}};
    int rc = ar_mask_from_text(text, n, for_map, mask, &kind, &err);
    if (rc != AR_OK)
        return cli_status_error(cmd, rc, &err, NULL);
    if (kind == AR_MASK_TEXT_AUTO && is_auto != NULL)
        *is_auto = 1;
    return kind == AR_MASK_TEXT_FILE ? read_pattern(cmd, text + 5, axis, n, mask) : -1;
}

const char *cli_mask_help(char *buf, size_t len, const char *before, const char *after,
                          int any_length_only)
{
    char kinds[256];
    ar_mask_syntax_list(kinds, sizeof kinds, any_length_only);
    snprintf(buf, len, "%s%s%s", before, kinds, after);
    return buf;
}
