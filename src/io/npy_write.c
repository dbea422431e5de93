/* NumPy .npy writer: one matrix as little-endian float64 in Fortran order,
 * which any host produces the same bytes for (numpy.lib.format, version
 * 1.0). */
#include "attnrank/io.h"
#include "attnrank/status.h"
#include "writer_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NPY_WRITE_ALIGN 64

static void encode_le64(double v, unsigned char *b)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    for (size_t i = 0; i < 8; i++)
        b[i] = (unsigned char)(u >> (8 * i));
}

/* Version 1.0 header, padded with spaces so the data starts on a 64-byte
 * boundary as numpy does (lets readers mmap aligned data). */
static int write_npy_header(ar_atomic_file *af, size_t rows, size_t cols)
{
    char dict[160];
    int n = snprintf(dict, sizeof dict,
                     "{'descr': '<f8', 'fortran_order': True, 'shape': (%zu, %zu), }", rows,
                     cols);
    if (n < 0 || (size_t)n >= sizeof dict) /* cannot happen: two size_t fit */
        return AR_EINVAL;
    size_t unpadded = 10 + (size_t)n + 1;
    size_t total = (unpadded + NPY_WRITE_ALIGN - 1) / NPY_WRITE_ALIGN * NPY_WRITE_ALIGN;
    size_t header_len = total - 10;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)(header_len & 0xff),
                             (unsigned char)(header_len >> 8)};
    char pad[NPY_WRITE_ALIGN + 1];
    memset(pad, ' ', sizeof pad);
    pad[total - unpadded] = '\n'; /* fewer than NPY_WRITE_ALIGN spaces, then the newline */
    int rc = ar_atomic_write(af, pre, sizeof pre, NULL);
    if (rc == AR_OK)
        rc = ar_atomic_write(af, dict, (size_t)n, NULL);
    if (rc == AR_OK)
        rc = ar_atomic_write(af, pad, total - unpadded + 1, NULL);
    return rc;
}

/* The one argument check of both matrix writers (npy and CSV). */
int ar_io_open_writer(const char *path, ar_cview m, ar_atomic_file **af, ar_error *err)
{
    if (path == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL path for a matrix writer");
    if (ar_cview_check(m, err) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "%s: invalid matrix view", path);
    if (m.rows == 0 || m.cols == 0)
        return ar_error_set(err, AR_EINVAL, "%s: empty matrix (shape (%zu, %zu))", path, m.rows,
                            m.cols);
    return ar_atomic_open(af, path, err);
}

int ar_npy_write(const char *path, ar_cview m, ar_error *err)
{
    ar_atomic_file *af;
    int rc = ar_io_open_writer(path, m, &af, err);
    if (rc != AR_OK)
        return rc;
    rc = write_npy_header(af, m.rows, m.cols);
    if (rc == AR_EINVAL) {
        ar_atomic_abort(af);
        return ar_error_set(err, AR_EINVAL, "%s: cannot format the .npy header", path);
    }
    /* One column at a time through a small buffer: any view's strides. */
    unsigned char col[8 * 64];
    for (size_t j = 0; j < m.cols && rc == AR_OK; j++)
        for (size_t i0 = 0; i0 < m.rows && rc == AR_OK; i0 += 64) {
            size_t i1 = i0 + 64 < m.rows ? i0 + 64 : m.rows;
            for (size_t i = i0; i < i1; i++)
                encode_le64(AR_VAT(m, i, j), col + 8 * (i - i0));
            rc = ar_atomic_write(af, col, 8 * (i1 - i0), err);
        }
    /* A failed write is remembered by af: commit reports it (with errno's
     * text) and removes the temporary file. */
    return ar_atomic_commit(af, err);
}
