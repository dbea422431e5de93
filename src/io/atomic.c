#include "attnrank/io.h"
#include "attnrank/status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dup_string(const char *s)
{
    size_t len = strlen(s) + 1;
    char *copy = malloc(len);
    if (copy != NULL)
        memcpy(copy, s, len);
    return copy;
}

int ar_atomic_open(ar_atomic_file *af, const char *path, ar_error *err)
{
    if (af == NULL || path == NULL || path[0] == '\0')
        return ar_error_set(err, AR_EINVAL, "empty output path");
    af->fp = NULL;
    af->path = dup_string(path);
    size_t len = strlen(path) + 32;
    af->tmp_path = malloc(len);
    if (af->path == NULL || af->tmp_path == NULL) {
        ar_atomic_abort(af);
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    }
    snprintf(af->tmp_path, len, "%s.tmp.%ld", path, (long)getpid());
    af->fp = fopen(af->tmp_path, "wb");
    if (af->fp == NULL) {
        int e = errno;
        ar_atomic_abort(af);
        return ar_error_set(err, AR_EIO, "%s: cannot create: %s", path, strerror(e));
    }
    return AR_OK;
}

int ar_atomic_commit(ar_atomic_file *af, ar_error *err)
{
    if (af == NULL || af->fp == NULL)
        return ar_error_set(err, AR_EINVAL, "output file is not open");
    int bad = ferror(af->fp);
    int e = errno;
    if (fclose(af->fp) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    af->fp = NULL;
    if (bad) {
        ar_atomic_abort(af);
        return ar_error_set(err, AR_EIO, "write failed: %s", strerror(e));
    }
    if (rename(af->tmp_path, af->path) != 0) {
        e = errno;
        int rc = ar_error_set(err, AR_EIO, "%s: cannot rename into place: %s", af->path,
                              strerror(e));
        ar_atomic_abort(af);
        return rc;
    }
    free(af->path);
    free(af->tmp_path);
    af->path = af->tmp_path = NULL;
    return AR_OK;
}

void ar_atomic_abort(ar_atomic_file *af)
{
    if (af == NULL)
        return;
    if (af->fp != NULL)
        fclose(af->fp);
    if (af->tmp_path != NULL)
        remove(af->tmp_path);
    free(af->path);
    free(af->tmp_path);
    af->fp = NULL;
    af->path = af->tmp_path = NULL;
}

int ar_mkdir_p(const char *path, ar_error *err)
{
    if (path == NULL || path[0] == '\0')
        return ar_error_set(err, AR_EINVAL, "empty directory path");
    char *buf = dup_string(path);
    if (buf == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    int rc = AR_OK;
    for (char *p = buf + 1;; p++) {
        int end = *p == '\0';
        if (*p == '/' || end) {
            char saved = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                rc = ar_error_set(err, AR_EIO, "%s: cannot create directory: %s", buf,
                                  strerror(errno));
                break;
            }
            struct stat st;
            if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
                rc = ar_error_set(err, AR_EIO, "%s: exists and is not a directory", buf);
                break;
            }
            *p = saved;
        }
        if (end)
            break;
    }
    free(buf);
    return rc;
}
