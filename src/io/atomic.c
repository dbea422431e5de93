/* Atomic output files (io.h): the stream lives here, so the public header
 * needs no <stdio.h> and a binding never sees a FILE *. */
#include "attnrank/io.h"
#include "attnrank/status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct ar_atomic_file {
    FILE *fp;
    char *path;
    char *tmp_path;
    int error; /* first write error (errno), reported by commit */
};

static char *dup_string(const char *s)
{
    size_t len = strlen(s) + 1;
    char *copy = malloc(len);
    if (copy != NULL)
        memcpy(copy, s, len);
    return copy;
}

int ar_atomic_open(ar_atomic_file **out, const char *path, ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_atomic_open: NULL argument");
    *out = NULL;
    if (path == NULL || path[0] == '\0')
        return ar_error_set(err, AR_EINVAL, "empty output path");
    ar_atomic_file *af = calloc(1, sizeof *af);
    if (af == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
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
        free(af->tmp_path); /* nothing was created: nothing to remove */
        af->tmp_path = NULL;
        ar_atomic_abort(af);
        return ar_error_set(err, AR_EIO, "%s: cannot create: %s", path, strerror(e));
    }
    *out = af;
    return AR_OK;
}

const char *ar_atomic_tmp_path(const ar_atomic_file *af)
{
    return af != NULL ? af->tmp_path : NULL;
}

static int note_error(ar_atomic_file *af)
{
    if (af->error == 0)
        af->error = errno != 0 ? errno : EIO;
    return AR_EIO;
}

int ar_atomic_write(ar_atomic_file *af, const void *data, size_t len, ar_error *err)
{
    if (af == NULL || af->fp == NULL || (data == NULL && len > 0))
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (len > 0 && fwrite(data, 1, len, af->fp) != len) {
        int rc = note_error(af); /* sets af->error: before the message reads it */
        return ar_error_set(err, rc, "%s: write failed: %s", af->path, strerror(af->error));
    }
    return AR_OK;
}

int ar_atomic_printf(ar_atomic_file *af, const char *fmt, ...)
{
    if (af == NULL || af->fp == NULL || fmt == NULL)
        return AR_EINVAL;
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(af->fp, fmt, ap);
    va_end(ap);
    return n < 0 ? note_error(af) : AR_OK;
}

int ar_atomic_commit(ar_atomic_file *af, ar_error *err)
{
    if (af == NULL || af->fp == NULL) {
        ar_atomic_abort(af);
        return ar_error_set(err, AR_EINVAL, "output file is not open");
    }
    int bad = af->error != 0 || ferror(af->fp);
    int e = af->error != 0 ? af->error : errno;
    if (fclose(af->fp) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    af->fp = NULL;
    if (bad) {
        int rc = ar_error_set(err, AR_EIO, "%s: write failed: %s", af->path, strerror(e));
        ar_atomic_abort(af);
        return rc;
    }
    if (rename(af->tmp_path, af->path) != 0) {
        e = errno;
        int rc = ar_error_set(err, AR_EIO, "%s: cannot rename into place: %s", af->path,
                              strerror(e));
        ar_atomic_abort(af);
        return rc;
    }
    free(af->tmp_path);
    af->tmp_path = NULL; /* renamed: nothing left to remove */
    ar_atomic_abort(af);
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
    free(af);
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
