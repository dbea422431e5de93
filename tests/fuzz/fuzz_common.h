/* Helpers shared by the libFuzzer harnesses (header-only, static functions).
 *
 * Besides "does not crash", the harnesses check that the readers do not lie:
 * the same bytes read from memory, from a regular file (size known up front)
 * and from a pipe (size learnt only at EOF) must give the same verdict and
 * the same numbers.  A violated check calls abort(), which libFuzzer reports
 * as a crash and saves the input. */
#ifndef AR_FUZZ_COMMON_H
#define AR_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attnrank/attnrank.h"

/* Cap on what a reader may allocate for one input; inputs are at most a few
 * hundred kB, so a correct reader never comes near it (libFuzzer's own
 * malloc limit is 2 GB). */
#define FUZZ_MAX_BYTES ((size_t)1 << 28)
/* A pipe holds 64 kB; larger inputs skip the pipe comparison. */
#define FUZZ_PIPE_MAX 65536

static inline void fuzz_fail(const char *what, const char *detail)
{
    fprintf(stderr, "FUZZ CHECK FAILED: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

/* An in-memory file with a path (/proc/self/fd/N) the readers can open. */
typedef struct fuzz_file {
    int fd;
    char path[64];
} fuzz_file;

static inline int fuzz_memfd_open(fuzz_file *f, const char *name)
{
    f->fd = memfd_create(name, 0);
    if (f->fd < 0)
        return -1;
    snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
    return 0;
}

static inline void fuzz_memfd_fill(fuzz_file *f, const uint8_t *data, size_t size)
{
    if (ftruncate(f->fd, 0) != 0)
        fuzz_fail("ftruncate", strerror(errno));
    size_t done = 0;
    while (done < size) {
        ssize_t k = pwrite(f->fd, data + done, size - done, (off_t)done);
        if (k <= 0)
            fuzz_fail("pwrite", strerror(errno));
        done += (size_t)k;
    }
}

/* A pipe already filled with data and closed for writing; the caller reads
 * it through path and closes fd. */
static inline int fuzz_pipe_open(fuzz_file *f, const uint8_t *data, size_t size)
{
    int p[2];
    if (size > FUZZ_PIPE_MAX || pipe(p) != 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t k = write(p[1], data + done, size - done);
        if (k <= 0) {
            close(p[0]);
            close(p[1]);
            return -1;
        }
        done += (size_t)k;
    }
    close(p[1]);
    f->fd = p[0];
    snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
    return 0;
}

/* Everything a reader promised about a successful result. */
static inline void fuzz_check_array(const ar_array *a, const char *who)
{
    if (a->data == NULL || a->count == 0 || a->rows == 0 || a->cols == 0)
        fuzz_fail("success with an empty array", who);
    if (a->ndim > AR_ARRAY_MAX_DIMS)
        fuzz_fail("ndim out of range", who);
    if (a->precision != AR_PREC_F64 && a->precision != AR_PREC_F32 &&
        a->precision != AR_PREC_F16 && a->precision != AR_PREC_BF16)
        fuzz_fail("unknown precision", who);
    /* Touch every element: ASan catches a short buffer, MSan-like garbage
     * shows up as a mismatch between the three readers. */
    volatile double sink = 0.0;
    size_t n = a->count * a->rows * a->cols;
    for (size_t i = 0; i < n; i++)
        sink += a->data[i];
    (void)sink;
    for (size_t k = 0; k < a->count; k++) {
        ar_cview m = ar_array_slice(a, k);
        if (m.rows != a->rows || m.cols != a->cols || m.data == NULL)
            fuzz_fail("slice has the wrong size", who);
    }
}

/* Failure must come with a message, success must not leave one behind. */
static inline void fuzz_check_status(int rc, const ar_error *err, const char *who)
{
    if (rc < 0 || rc >= AR_NSTATUS)
        fuzz_fail("status out of range", who);
    if (rc != AR_OK && err->msg[0] == '\0')
        fuzz_fail("failure without a message", who);
    if (rc != AR_OK && memchr(err->msg, '\n', sizeof err->msg) != NULL)
        fuzz_fail("error message has a newline", err->msg);
}

/* Two reads of the same bytes: same verdict, bit-identical data. */
static inline void fuzz_compare(int rc_a, const ar_array *a, int rc_b, const ar_array *b,
                         const char *who)
{
    if ((rc_a == AR_OK) != (rc_b == AR_OK)) {
        char detail[96];
        snprintf(detail, sizeof detail, "%s: status %d vs %d", who, rc_a, rc_b);
        fuzz_fail("readers disagree on success", detail);
    }
    if (rc_a != AR_OK)
        return;
    if (a->ndim != b->ndim || a->count != b->count || a->rows != b->rows ||
        a->cols != b->cols || a->precision != b->precision ||
        memcmp(a->shape, b->shape, a->ndim * sizeof a->shape[0]) != 0)
        fuzz_fail("readers disagree on the shape", who);
    size_t n = a->count * a->rows * a->cols;
    if (memcmp(a->data, b->data, n * sizeof(double)) != 0)
        fuzz_fail("readers disagree on the data", who);
}

#endif
