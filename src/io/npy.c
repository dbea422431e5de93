/* NumPy .npy reader (the writer is npy_write.c).
 *
 * Format: numpy.lib.format (magic "\x93NUMPY", version, little-endian header
 * length, a Python dict literal, raw data).  Files are untrusted and this code
 * is fuzzed, so every length is checked against what is actually there before
 * anything is allocated or read, and the header is parsed by hand with an
 * explicit length (it is not NUL-terminated).  The data is streamed through a
 * small buffer straight into the column-major result, so a large file is never
 * held in memory twice. */
#include "attnrank/io.h"
#include "attnrank/safetensors.h"
#include "attnrank/status.h"
#include "npy_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "io/array_internal.h"

/* numpy refuses headers above 10000 bytes by default; ours only ever hold a
 * dtype, a flag and at most 16 dimensions, so this is generous. */
#define NPY_MAX_HEADER_LEN 65536
/* A multiple of both item sizes, so a chunk never splits an element. */
#define NPY_CHUNK_BYTES 65536
#define SHAPE_TEXT_LEN 400
#define FRAGMENT_LEN 32

/* What the header says about the data. */
typedef struct npy_header {
    size_t data_offset;
    size_t itemsize; /* 2, 4 or 8 */
    int big_endian;
    int fortran;
    size_t ndim;
    size_t shape[AR_ARRAY_MAX_DIMS];
} npy_header;

/* Where the bytes come from: a memory image or an open file.  size is the
 * total length when known (memory, regular files); pipes only learn it by
 * reading to the end. */
typedef struct npy_source {
    const char *name;
    FILE *fp;
    const unsigned char *buf;
    size_t len;
    size_t pos;
    int size_known;
    size_t size;
} npy_source;

/* ---- small helpers --------------------------------------------------- */

/* Printable excerpt of untrusted bytes for an error message. */
static void make_fragment(const char *text, size_t len, char *out, size_t out_len)
{
    size_t n = len < out_len - 1 ? len : out_len - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    out[n] = '\0';
}

/* Python spelling of a shape: (), (3,), (2, 3). */
static void format_shape(const size_t *shape, size_t ndim, char *out, size_t out_len)
{
    size_t used = 0;
    int n = snprintf(out, out_len, "(");
    used = n > 0 ? (size_t)n : 0;
    for (size_t a = 0; a < ndim && used < out_len; a++) {
        n = snprintf(out + used, out_len - used, a == 0 ? "%zu" : ", %zu", shape[a]);
        used += n > 0 ? (size_t)n : 0;
    }
    if (used < out_len)
        snprintf(out + used, out_len - used, ndim == 1 ? ",)" : ")");
}

static int mul_overflows(size_t a, size_t b, size_t *product)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 1;
    *product = a * b;
    return 0;
}

static int source_read(npy_source *src, void *dst, size_t n, size_t *got, ar_error *err)
{
    size_t k;
    if (src->fp == NULL) {
        size_t left = src->len - src->pos;
        k = n < left ? n : left;
        if (k > 0)
            memcpy(dst, src->buf + src->pos, k);
    } else {
        k = fread(dst, 1, n, src->fp);
        if (k < n && ferror(src->fp))
            return ar_error_set(err, AR_EIO, "%s: read error at byte %zu: %s", src->name,
                                src->pos + k, strerror(errno));
    }
    src->pos += k;
    *got = k;
    return AR_OK;
}

/* ---- header dictionary ------------------------------------------------ */

typedef struct dict_parser {
    const char *text;
    size_t len;
    size_t pos;
    size_t base; /* file offset of text[0], for messages */
    const char *name;
    ar_error *err;
} dict_parser;

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

static int dict_fail(dict_parser *p, int status, const char *what)
{
    char frag[FRAGMENT_LEN];
    make_fragment(p->text + p->pos, p->len - p->pos, frag, sizeof frag);
    return ar_error_set(p->err, status, "%s: malformed header at byte %zu: %s near '%s'", p->name,
                        p->base + p->pos, what, frag);
}

static void dict_skip_ws(dict_parser *p)
{
    while (p->pos < p->len) {
        char c = p->text[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->pos++;
    }
}

static int dict_peek(const dict_parser *p, char c)
{
    return p->pos < p->len && p->text[p->pos] == c;
}

static int dict_expect(dict_parser *p, char c, const char *what)
{
    dict_skip_ws(p);
    if (!dict_peek(p, c))
        return dict_fail(p, AR_EFORMAT, what);
    p->pos++;
    return AR_OK;
}

/* A quoted Python string without escapes (no dtype or key needs one). */
static int dict_string(dict_parser *p, const char **s, size_t *n)
{
    dict_skip_ws(p);
    if (!dict_peek(p, '\'') && !dict_peek(p, '"'))
        return dict_fail(p, AR_EFORMAT, "expected a quoted string");
    char quote = p->text[p->pos];
    size_t start = p->pos + 1;
    const char *close = memchr(p->text + start, quote, p->len - start);
    if (close == NULL)
        return dict_fail(p, AR_EFORMAT, "unterminated string");
    *s = p->text + start;
    *n = (size_t)(close - *s);
    p->pos = start + *n + 1;
    return AR_OK;
}

static int dict_word(dict_parser *p, const char *word)
{
    size_t n = strlen(word);
    return p->len - p->pos >= n && memcmp(p->text + p->pos, word, n) == 0;
}

static int parse_descr(dict_parser *p, npy_header *h)
{
    dict_skip_ws(p);
    if (dict_peek(p, '['))
        return dict_fail(p, AR_EUNSUPPORTED, "structured dtype is not supported");
    const char *s;
    size_t n;
    int rc = dict_string(p, &s, &n);
    if (rc != AR_OK)
        return rc;
    /* '=' and '|' mean native or not applicable; numpy never writes them for
     * floats, so treat them as the format's default, little-endian. */
    int valid = n == 3 && (s[0] == '<' || s[0] == '>' || s[0] == '=' || s[0] == '|') &&
                s[1] == 'f' && (s[2] == '2' || s[2] == '4' || s[2] == '8');
    if (!valid) {
        char frag[FRAGMENT_LEN];
        make_fragment(s, n, frag, sizeof frag);
        return ar_error_set(p->err, AR_EUNSUPPORTED,
                            "%s: unsupported dtype '%s' at byte %zu (only float64, float32 and "
                            "float16: '<f8', '>f8', '<f4', '>f4', '<f2', '>f2')",
                            p->name, frag, p->base + (size_t)(s - p->text));
    }
    h->big_endian = s[0] == '>';
    h->itemsize = (size_t)(s[2] - '0');
    return AR_OK;
}

static int parse_fortran_order(dict_parser *p, npy_header *h)
{
    dict_skip_ws(p);
    if (dict_word(p, "True")) {
        h->fortran = 1;
        p->pos += 4;
    } else if (dict_word(p, "False")) {
        h->fortran = 0;
        p->pos += 5;
    } else {
        return dict_fail(p, AR_EFORMAT, "fortran_order must be True or False");
    }
    return AR_OK;
}

static int parse_dimension(dict_parser *p, size_t *value)
{
    dict_skip_ws(p);
    if (dict_peek(p, '-'))
        return dict_fail(p, AR_EFORMAT, "negative dimension in shape");
    if (p->pos >= p->len || p->text[p->pos] < '0' || p->text[p->pos] > '9')
        return dict_fail(p, AR_EFORMAT, "expected a dimension in shape");
    size_t v = 0;
    while (p->pos < p->len && p->text[p->pos] >= '0' && p->text[p->pos] <= '9') {
        size_t digit = (size_t)(p->text[p->pos] - '0');
        if (v > (SIZE_MAX - digit) / 10)
            return dict_fail(p, AR_EFORMAT, "dimension too large");
        v = v * 10 + digit;
        p->pos++;
    }
    *value = v;
    return AR_OK;
}

/* A tuple of non-negative ints: (), (3,), (2, 3), (2, 3,). */
static int parse_shape(dict_parser *p, npy_header *h)
{
    int rc = dict_expect(p, '(', "shape must be a tuple");
    if (rc != AR_OK)
        return rc;
    h->ndim = 0;
    dict_skip_ws(p);
    if (dict_peek(p, ')')) {
        p->pos++;
        return AR_OK;
    }
    for (;;) {
        if (h->ndim == AR_ARRAY_MAX_DIMS)
            return dict_fail(p, AR_EUNSUPPORTED, "more than 16 dimensions");
        rc = parse_dimension(p, &h->shape[h->ndim]);
        if (rc != AR_OK)
            return rc;
        h->ndim++;
        dict_skip_ws(p);
        if (dict_peek(p, ',')) {
            p->pos++;
            dict_skip_ws(p);
            if (dict_peek(p, ')')) {
                p->pos++;
                return AR_OK;
            }
        } else if (dict_peek(p, ')')) {
            /* Python reads "(3)" as the int 3, and numpy rejects it. */
            if (h->ndim == 1)
                return dict_fail(p, AR_EFORMAT, "shape (N) is not a tuple; 1-D needs (N,)");
            p->pos++;
            return AR_OK;
        } else {
            return dict_fail(p, AR_EFORMAT, "expected ',' or ')' in shape");
        }
    }
}

static int dict_key(dict_parser *p, unsigned *seen, unsigned *key)
{
    size_t key_pos = p->pos;
    const char *s;
    size_t n;
    int rc = dict_string(p, &s, &n);
    if (rc != AR_OK)
        return rc;
    if (n == 5 && memcmp(s, "descr", 5) == 0)
        *key = KEY_DESCR;
    else if (n == 13 && memcmp(s, "fortran_order", 13) == 0)
        *key = KEY_FORTRAN;
    else if (n == 5 && memcmp(s, "shape", 5) == 0)
        *key = KEY_SHAPE;
    else {
        p->pos = key_pos;
        dict_skip_ws(p);
        return dict_fail(p, AR_EFORMAT, "unexpected key");
    }
    if (*seen & *key) {
        p->pos = key_pos;
        dict_skip_ws(p);
        return dict_fail(p, AR_EFORMAT, "duplicate key");
    }
    *seen |= *key;
    return AR_OK;
}

static int dict_value(dict_parser *p, unsigned key, npy_header *h)
{
    if (key == KEY_DESCR)
        return parse_descr(p, h);
    if (key == KEY_FORTRAN)
        return parse_fortran_order(p, h);
    return parse_shape(p, h);
}

static int dict_check_keys(dict_parser *p, unsigned seen)
{
    const char *missing = !(seen & KEY_DESCR)     ? "descr"
                          : !(seen & KEY_FORTRAN) ? "fortran_order"
                          : !(seen & KEY_SHAPE)   ? "shape"
                                                  : NULL;
    if (missing == NULL)
        return AR_OK;
    return ar_error_set(p->err, AR_EFORMAT, "%s: malformed header at byte %zu: no '%s' key",
                        p->name, p->base, missing);
}

/* {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), } and padding. */
static int parse_dict(dict_parser *p, npy_header *h)
{
    int rc = dict_expect(p, '{', "expected '{'");
    unsigned seen = 0;
    while (rc == AR_OK) {
        dict_skip_ws(p);
        if (dict_peek(p, '}'))
            break;
        unsigned key = 0;
        rc = dict_key(p, &seen, &key);
        if (rc == AR_OK)
            rc = dict_expect(p, ':', "expected ':' after key");
        if (rc == AR_OK)
            rc = dict_value(p, key, h);
        if (rc != AR_OK)
            return rc;
        dict_skip_ws(p);
        if (dict_peek(p, ','))
            p->pos++;
        else if (!dict_peek(p, '}'))
            return dict_fail(p, AR_EFORMAT, "expected ',' or '}'");
    }
    if (rc != AR_OK)
        return rc;
    p->pos++; /* the '}' */
    dict_skip_ws(p);
    if (p->pos != p->len)
        return dict_fail(p, AR_EFORMAT, "unexpected text after the dictionary");
    return dict_check_keys(p, seen);
}

/* ---- preamble and header ---------------------------------------------- */

static size_t read_le(const unsigned char *b, size_t n)
{
    size_t v = 0;
    for (size_t i = n; i > 0; i--)
        v = (v << 8) | b[i - 1];
    return v;
}

/* Magic, version and header length; sets *header_start and *header_len. */
static int read_preamble(npy_source *src, size_t *header_start, size_t *header_len,
                         ar_error *err)
{
    unsigned char pre[12];
    size_t got = 0;
    int rc = source_read(src, pre, 8, &got, err);
    if (rc != AR_OK)
        return rc;
    if (got == 0)
        return ar_error_set(err, AR_EFORMAT, "%s: empty file, not a .npy file", src->name);
    size_t cmp = got < NPY_MAGIC_LEN ? got : NPY_MAGIC_LEN;
    if (memcmp(pre, NPY_MAGIC, cmp) != 0)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: not a .npy file: bad magic at byte 0 (expected \\x93NUMPY)%s",
                            src->name,
                            got >= 2 && pre[0] == 'P' && pre[1] == 'K'
                                ? "; it starts like a zip archive (an .npz from numpy.savez?)"
                                : "");
    if (got < 8)
        return ar_error_set(err, AR_EFORMAT, "%s: truncated header: file ends at byte %zu",
                            src->name, got);
    unsigned major = pre[6], minor = pre[7];
    if (major < 1 || major > 3 || minor != 0)
        return ar_error_set(err, AR_EUNSUPPORTED,
                            "%s: unsupported .npy format version %u.%u at byte 6", src->name,
                            major, minor);
    size_t len_bytes = major == 1 ? 2 : 4;
    rc = source_read(src, pre + 8, len_bytes, &got, err);
    if (rc != AR_OK)
        return rc;
    if (got < len_bytes)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: truncated header: file ends at byte %zu inside the header "
                            "length field",
                            src->name, 8 + got);
    *header_start = 8 + len_bytes;
    *header_len = read_le(pre + 8, len_bytes);
    return AR_OK;
}

static int header_length_error(const npy_source *src, size_t header_start, size_t header_len,
                               size_t file_size, ar_error *err)
{
    return ar_error_set(err, AR_EFORMAT,
                        "%s: header length %zu (at byte 8) runs past the end of the file: "
                        "header would end at byte %zu, file has %zu bytes",
                        src->name, header_len, header_start + header_len, file_size);
}

static int read_header(npy_source *src, npy_header *h, ar_error *err)
{
    size_t start = 0, len = 0;
    int rc = read_preamble(src, &start, &len, err);
    if (rc != AR_OK)
        return rc;
    if (src->size_known && len > src->size - start)
        return header_length_error(src, start, len, src->size, err);
    if (len == 0)
        return ar_error_set(err, AR_EFORMAT, "%s: empty header at byte %zu", src->name, start);
    if (len > NPY_MAX_HEADER_LEN)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: header length %zu (at byte 8) exceeds the limit of %d bytes",
                            src->name, len, NPY_MAX_HEADER_LEN);
    char *text = malloc(len);
    if (text == NULL)
        return ar_error_set(err, AR_ENOMEM, "%s: out of memory for a %zu-byte header",
                            src->name, len);
    size_t got;
    rc = source_read(src, text, len, &got, err);
    if (rc == AR_OK && got < len)
        rc = header_length_error(src, start, len, start + got, err);
    if (rc == AR_OK) {
        dict_parser p = {text, len, 0, start, src->name, err};
        rc = parse_dict(&p, h);
    }
    free(text);
    h->data_offset = start + len;
    return rc;
}

/* ---- sizes ------------------------------------------------------------ */

static int has_zero_dim(const npy_header *h)
{
    for (size_t a = 0; a < h->ndim; a++)
        if (h->shape[a] == 0)
            return 1;
    return 0;
}

/* Element count, bytes on disk and bytes in memory, all overflow-checked. */
static int header_sizes(const npy_source *src, const npy_header *h, size_t *elements,
                        size_t *data_bytes, size_t *alloc_bytes, ar_error *err)
{
    size_t n = 1;
    int overflow = 0;
    if (has_zero_dim(h))
        n = 0;
    for (size_t a = 0; a < h->ndim && n != 0 && !overflow; a++)
        overflow = mul_overflows(n, h->shape[a], &n);
    if (!overflow)
        overflow = mul_overflows(n, h->itemsize, data_bytes) ||
                   mul_overflows(n, sizeof(double), alloc_bytes);
    if (overflow) {
        char shape[SHAPE_TEXT_LEN];
        format_shape(h->shape, h->ndim, shape, sizeof shape);
        return ar_error_set(err, AR_EFORMAT, "%s: shape %s overflows the addressable size",
                            src->name, shape);
    }
    *elements = n;
    return AR_OK;
}

/* The checks that need no data: cap, size on disk (when known), emptiness. */
static int check_sizes(const npy_source *src, const npy_header *h, size_t data_bytes,
                       size_t alloc_bytes, size_t max_bytes, ar_error *err)
{
    char shape[SHAPE_TEXT_LEN];
    format_shape(h->shape, h->ndim, shape, sizeof shape);
    if (max_bytes != 0 && alloc_bytes > max_bytes)
        return ar_error_set(err, AR_ENOMEM,
                            "%s: array of shape %s needs %zu bytes, over the limit of %zu bytes",
                            src->name, shape, alloc_bytes, max_bytes);
    if (src->size_known) {
        size_t present = src->size - h->data_offset;
        if (present < data_bytes)
            return ar_error_set(err, AR_EFORMAT,
                                "%s: truncated data: header declares %zu bytes, file has %zu "
                                "(data starts at byte %zu)",
                                src->name, data_bytes, present, h->data_offset);
        if (present > data_bytes)
            return ar_error_set(err, AR_EFORMAT,
                                "%s: %zu extra bytes after the data: header declares %zu "
                                "bytes, file has %zu (data starts at byte %zu)",
                                src->name, present - data_bytes, data_bytes, present,
                                h->data_offset);
    }
    if (data_bytes == 0)
        return ar_error_set(err, AR_EINVAL, "%s: empty matrix (shape %s)", src->name, shape);
    return AR_OK;
}

/* ---- data ------------------------------------------------------------- */

/* Walks the elements in file order and tracks where each one goes in the
 * stack of column-major slices: an odometer over the axes (last axis fastest
 * for C order, first fastest for Fortran order) with a destination stride per
 * axis, so no division per element and any rank works. */
typedef struct npy_layout {
    size_t ndim;
    const size_t *shape;
    size_t dst_stride[AR_ARRAY_MAX_DIMS];
    size_t idx[AR_ARRAY_MAX_DIMS];
    int fortran;
    size_t offset;
} npy_layout;

static void layout_init(npy_layout *l, const npy_header *h, size_t rows, size_t cols)
{
    memset(l, 0, sizeof *l);
    l->ndim = h->ndim;
    l->shape = h->shape;
    l->fortran = h->fortran;
    if (h->ndim == 1) {
        l->dst_stride[0] = 1;
        return;
    }
    if (h->ndim < 2)
        return;
    size_t n = h->ndim;
    l->dst_stride[n - 2] = 1;
    l->dst_stride[n - 1] = rows;
    size_t stride = rows * cols;
    for (size_t a = n - 2; a > 0; a--) {
        l->dst_stride[a - 1] = stride;
        stride *= h->shape[a - 1];
    }
}

static void layout_advance(npy_layout *l)
{
    for (size_t step = 0; step < l->ndim; step++) {
        size_t a = l->fortran ? step : l->ndim - 1 - step;
        if (++l->idx[a] < l->shape[a]) {
            l->offset += l->dst_stride[a];
            return;
        }
        l->offset -= (l->shape[a] - 1) * l->dst_stride[a];
        l->idx[a] = 0;
    }
}

/* Byte order is assembled explicitly, so the host's own order never matters. */
static double decode_element(const unsigned char *b, size_t itemsize, int big_endian)
{
    uint64_t u = 0;
    for (size_t i = 0; i < itemsize; i++) {
        size_t shift = 8 * (big_endian ? itemsize - 1 - i : i);
        u |= (uint64_t)b[i] << shift;
    }
    if (itemsize == 8) {
        double d;
        memcpy(&d, &u, sizeof d);
        return d;
    }
    if (itemsize == 2) /* what model.half() exports; every value exact in double */
        return ar_half_to_double((uint16_t)u);
    uint32_t u32 = (uint32_t)u;
    float f;
    memcpy(&f, &u32, sizeof f);
    return (double)f;
}

void ar_npy_decode(const unsigned char *src, size_t count, size_t itemsize, int big_endian,
                   double *dst)
{
    /* Forward order: element i is read before dst[i] is written, so the
     * in-place use npy_internal.h describes never overwrites unread bytes. */
    for (size_t i = 0; i < count; i++)
        dst[i] = decode_element(src + i * itemsize, itemsize, big_endian);
}

static int truncated_stream(const npy_source *src, const npy_header *h, size_t declared,
                            size_t present, ar_error *err)
{
    return ar_error_set(err, AR_EFORMAT,
                        "%s: truncated data: header declares %zu bytes, file has %zu (data "
                        "starts at byte %zu)",
                        src->name, declared, present, h->data_offset);
}

/* Anything left after the data is an error; needed for pipes, whose size
 * was unknown up front. */
static int check_trailing(npy_source *src, const npy_header *h, size_t declared,
                          unsigned char *chunk, ar_error *err)
{
    size_t extra = 0, got;
    do {
        int rc = source_read(src, chunk, NPY_CHUNK_BYTES, &got, err);
        if (rc != AR_OK)
            return rc;
        extra += got;
    } while (got == NPY_CHUNK_BYTES);
    if (extra == 0)
        return AR_OK;
    return ar_error_set(err, AR_EFORMAT,
                        "%s: %zu extra bytes after the data: header declares %zu bytes, file "
                        "has %zu (data starts at byte %zu)",
                        src->name, extra, declared, declared + extra, h->data_offset);
}

/* ---- fast path: native little-endian float64 ---- */

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* The common export ('<f8' on a little-endian host) needs no decoding: the
 * bytes of each slice go straight into place and C-order slices are
 * transposed to column-major in cache-sized blocks.  Element-by-element
 * decoding with strided stores is ~40x slower on large stacks. */
static int fast_path_applies(const npy_header *h)
{
    return h->itemsize == 8 && !h->big_endian && host_is_little_endian() &&
           (!h->fortran || h->ndim <= 2);
}

#define NPY_BLOCK 32

/* dst (rows x cols, column-major) = src (rows x cols, row-major). */
static void transpose_blocked(const double *src, double *dst, size_t rows, size_t cols)
{
    for (size_t i0 = 0; i0 < rows; i0 += NPY_BLOCK)
        for (size_t j0 = 0; j0 < cols; j0 += NPY_BLOCK) {
            size_t i1 = i0 + NPY_BLOCK < rows ? i0 + NPY_BLOCK : rows;
            size_t j1 = j0 + NPY_BLOCK < cols ? j0 + NPY_BLOCK : cols;
            for (size_t i = i0; i < i1; i++)
                for (size_t j = j0; j < j1; j++)
                    dst[i + j * rows] = src[i * cols + j];
        }
}

/* In-place transpose of a square n x n block, swapping across the diagonal. */
static void transpose_square_inplace(double *a, size_t n)
{
    for (size_t i0 = 0; i0 < n; i0 += NPY_BLOCK)
        for (size_t j0 = i0; j0 < n; j0 += NPY_BLOCK) {
            size_t i1 = i0 + NPY_BLOCK < n ? i0 + NPY_BLOCK : n;
            size_t j1 = j0 + NPY_BLOCK < n ? j0 + NPY_BLOCK : n;
            for (size_t i = i0; i < i1; i++)
                for (size_t j = (j0 == i0 ? i + 1 : j0); j < j1; j++) {
                    double t = a[i * n + j];
                    a[i * n + j] = a[j * n + i];
                    a[j * n + i] = t;
                }
        }
}

static int read_data_native_f8(npy_source *src, const npy_header *h, size_t data_bytes,
                               ar_array *out, ar_error *err)
{
    size_t slice = out->rows * out->cols, slice_bytes = slice * sizeof(double);
    int c_order = !h->fortran && out->rows > 1 && out->cols > 1;
    double *tmp = NULL;
    if (c_order && out->rows != out->cols) {
        tmp = malloc(slice_bytes);
        if (tmp == NULL)
            return ar_error_set(err, AR_ENOMEM, "%s: out of memory", src->name);
    }
    int rc = AR_OK;
    for (size_t k = 0, done = 0; rc == AR_OK && k < out->count; k++, done += slice_bytes) {
        double *dst = out->data + k * slice;
        size_t got = 0;
        rc = source_read(src, tmp != NULL ? (void *)tmp : (void *)dst, slice_bytes, &got, err);
        if (rc == AR_OK && got < slice_bytes)
            rc = truncated_stream(src, h, data_bytes, done + got, err);
        if (rc != AR_OK || !c_order)
            continue;
        if (tmp != NULL)
            transpose_blocked(tmp, dst, out->rows, out->cols);
        else
            transpose_square_inplace(dst, out->rows);
    }
    free(tmp);
    unsigned char *chunk = rc == AR_OK ? malloc(NPY_CHUNK_BYTES) : NULL;
    if (rc == AR_OK && chunk == NULL)
        rc = ar_error_set(err, AR_ENOMEM, "%s: out of memory", src->name);
    if (rc == AR_OK)
        rc = check_trailing(src, h, data_bytes, chunk, err);
    free(chunk);
    return rc;
}

static int read_data(npy_source *src, const npy_header *h, size_t data_bytes, ar_array *out,
                     ar_error *err)
{
    if (fast_path_applies(h))
        return read_data_native_f8(src, h, data_bytes, out, err);
    unsigned char *chunk = malloc(NPY_CHUNK_BYTES);
    if (chunk == NULL)
        return ar_error_set(err, AR_ENOMEM, "%s: out of memory", src->name);
    npy_layout layout;
    layout_init(&layout, h, out->rows, out->cols);
    size_t done = 0;
    int rc = AR_OK;
    while (rc == AR_OK && done < data_bytes) {
        size_t want = data_bytes - done < NPY_CHUNK_BYTES ? data_bytes - done : NPY_CHUNK_BYTES;
        size_t got;
        rc = source_read(src, chunk, want, &got, err);
        if (rc == AR_OK && got < want)
            rc = truncated_stream(src, h, data_bytes, done + got, err);
        for (size_t i = 0; rc == AR_OK && i < want; i += h->itemsize) {
            out->data[layout.offset] = decode_element(chunk + i, h->itemsize, h->big_endian);
            layout_advance(&layout);
        }
        done += want;
    }
    if (rc == AR_OK)
        rc = check_trailing(src, h, data_bytes, chunk, err);
    free(chunk);
    return rc;
}

static void fill_dims(ar_array *out, const npy_header *h)
{
    out->ndim = h->ndim;
    memcpy(out->shape, h->shape, h->ndim * sizeof h->shape[0]);
    out->count = 1;
    out->rows = 1;
    out->cols = 1;
    if (h->ndim >= 1)
        out->cols = h->shape[h->ndim - 1];
    if (h->ndim >= 2)
        out->rows = h->shape[h->ndim - 2];
    for (size_t a = 0; a + 2 < h->ndim; a++)
        out->count *= h->shape[a];
    out->precision = h->itemsize == 2   ? AR_PREC_F16
                     : h->itemsize == 4 ? AR_PREC_F32
                                        : AR_PREC_F64;
}


static int npy_load(npy_source *src, ar_array *out, size_t max_bytes, ar_error *err)
{
    npy_header h;
    memset(&h, 0, sizeof h);
    size_t elements = 0, data_bytes = 0, alloc_bytes = 0;
    int rc = read_header(src, &h, err);
    if (rc == AR_OK)
        rc = header_sizes(src, &h, &elements, &data_bytes, &alloc_bytes, err);
    if (rc == AR_OK)
        rc = check_sizes(src, &h, data_bytes, alloc_bytes, max_bytes, err);
    if (rc != AR_OK)
        return rc;
    fill_dims(out, &h);
    out->data = ar_array_alloc_data(alloc_bytes);
    if (out->data == NULL)
        rc = ar_error_set(err, AR_ENOMEM, "%s: out of memory for %zu bytes", src->name,
                          alloc_bytes);
    else
        rc = read_data(src, &h, data_bytes, out, err);
    if (rc != AR_OK)
        ar_array_free(out);
    return rc;
}

/* ---- public readers --------------------------------------------------- */
int ar_npy_parse_named(const unsigned char *buf, size_t len, const char *name, ar_array *out,
                       size_t max_bytes, ar_error *err)
{
    if (out == NULL || (buf == NULL && len > 0))
        return ar_error_set(err, AR_EINVAL, "%s: NULL argument", name ? name : "<buffer>");
    ar_array_reset(out);
    npy_source src = {name ? name : "<buffer>", NULL, buf, len, 0, 1, len};
    return npy_load(&src, out, max_bytes, err);
}

int ar_npy_parse(const unsigned char *buf, size_t len, ar_array *out, size_t max_bytes,
                 ar_error *err)
{
    return ar_npy_parse_named(buf, len, "<buffer>", out, max_bytes, err);
}

/* Open path as an npy_source with its size when it is a regular file. */
static int source_open(const char *path, npy_source *src, ar_error *err)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return ar_error_set(err, AR_EIO, "%s: cannot open: %s", path, strerror(errno));
    npy_source s = {path, fp, NULL, 0, 0, 0, 0};
    struct stat st;
    int rc = AR_OK;
    if (fstat(fileno(fp), &st) != 0)
        rc = ar_error_set(err, AR_EIO, "%s: cannot stat: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        rc = ar_error_set(err, AR_EIO, "%s: is a directory", path);
    else if (S_ISREG(st.st_mode) && st.st_size >= 0 && (uintmax_t)st.st_size <= SIZE_MAX) {
        s.size_known = 1;
        s.size = (size_t)st.st_size;
    }
    if (rc != AR_OK) {
        fclose(fp);
        return rc;
    }
    *src = s;
    return AR_OK;
}

int ar_npy_read_info(const char *path, ar_npy_info *info, ar_error *err)
{
    if (info == NULL || path == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_npy_read_info: NULL argument");
    memset(info, 0, sizeof *info);
    npy_source src;
    int rc = source_open(path, &src, err);
    if (rc != AR_OK)
        return rc;
    npy_header h;
    memset(&h, 0, sizeof h);
    size_t elements = 0, data_bytes = 0, alloc_bytes = 0;
    if (!src.size_known)
        rc = ar_error_set(err, AR_EIO, "%s: not a regular file (its size is needed)", path);
    if (rc == AR_OK)
        rc = read_header(&src, &h, err);
    if (rc == AR_OK)
        rc = header_sizes(&src, &h, &elements, &data_bytes, &alloc_bytes, err);
    if (rc == AR_OK)
        rc = check_sizes(&src, &h, data_bytes, alloc_bytes, 0, err);
    fclose(src.fp);
    if (rc != AR_OK)
        return rc;
    ar_array dims;
    memset(&dims, 0, sizeof dims);
    fill_dims(&dims, &h);
    info->data_offset = h.data_offset;
    info->itemsize = h.itemsize;
    info->big_endian = h.big_endian;
    info->fortran = h.fortran;
    info->ndim = h.ndim;
    memcpy(info->shape, h.shape, sizeof h.shape);
    info->rows = dims.rows;
    info->cols = dims.cols;
    info->count = dims.count;
    return AR_OK;
}

int ar_npy_read(const char *path, ar_array *out, size_t max_bytes, ar_error *err)
{
    if (out == NULL || path == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_npy_read: NULL argument");
    ar_array_reset(out);
    npy_source src;
    memset(&src, 0, sizeof src);
    int rc = source_open(path, &src, err);
    if (rc != AR_OK)
        return rc;
    rc = npy_load(&src, out, max_bytes, err);
    fclose(src.fp);
    return rc;
}
