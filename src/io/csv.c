/* CSV matrices: reader and writer.
 *
 * One row per line; fields separated by commas (with optional whitespace
 * around them) or by runs of whitespace, decided once per file from the first
 * data line.  '#' starts a comment that runs to the end of the line; blank
 * lines are skipped; CRLF is fine.  The first non-blank line may be a header.
 *
 * The text is scanned twice with the same code: once to validate and count
 * rows and columns (so errors come out in file order and nothing is allocated
 * for a bad file), once to store.  Lines and fields are (pointer, length)
 * pairs, never NUL-terminated, since the text may come from a fuzzer. */
#include "attnrank/io.h"
#include "attnrank/status.h"
#include "writer_internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Longer fields are reported as non-numeric: no double needs this many
 * characters, and a fixed buffer keeps strtod away from the unterminated
 * text. */
#define CSV_FIELD_MAX 512
#define FRAGMENT_LEN 40
#define READ_CHUNK 65536

typedef struct csv_line {
    const char *text;
    size_t len;
    size_t number; /* 1-based */
} csv_line;

typedef struct line_reader {
    const char *text;
    size_t len;
    size_t pos;
    size_t number;
} line_reader;

typedef struct field_cursor {
    const char *p;
    const char *end;
    int comma;
    int done;
} field_cursor;

/* What the first scan learns about the file. */
typedef struct csv_doc {
    const char *text;
    size_t len;
    const char *name;
    size_t header_line; /* 0: no header */
    int comma;
    size_t rows, cols;
    size_t cols_line; /* the line that fixed the column count */
} csv_doc;

/* Locale-independent, and never '\n' (lines are already split). */
static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int next_line(line_reader *r, csv_line *line)
{
    if (r->pos >= r->len)
        return 0;
    const char *start = r->text + r->pos;
    size_t rest = r->len - r->pos;
    const char *nl = memchr(start, '\n', rest);
    size_t raw = nl != NULL ? (size_t)(nl - start) : rest;
    r->pos += nl != NULL ? raw + 1 : raw;
    r->number++;
    const char *hash = memchr(start, '#', raw);
    size_t len = hash != NULL ? (size_t)(hash - start) : raw;
    while (len > 0 && is_space(start[len - 1]))
        len--;
    line->text = start;
    line->len = len;
    line->number = r->number;
    return 1;
}

static int is_blank(const csv_line *line)
{
    for (size_t i = 0; i < line->len; i++)
        if (!is_space(line->text[i]))
            return 0;
    return 1;
}

/* Next non-blank line; 0 at end of text. */
static int next_content_line(line_reader *r, csv_line *line)
{
    while (next_line(r, line))
        if (!is_blank(line))
            return 1;
    return 0;
}

static field_cursor fields_begin(const csv_line *line, int comma)
{
    field_cursor c = {line->text, line->text + line->len, comma, 0};
    return c;
}

static int next_field(field_cursor *c, const char **field, size_t *len)
{
    if (c->done)
        return 0;
    if (c->comma) {
        const char *sep = memchr(c->p, ',', (size_t)(c->end - c->p));
        const char *start = c->p, *stop = sep != NULL ? sep : c->end;
        while (start < stop && is_space(*start))
            start++;
        while (stop > start && is_space(stop[-1]))
            stop--;
        *field = start;
        *len = (size_t)(stop - start);
        if (sep != NULL)
            c->p = sep + 1;
        else
            c->done = 1;
        return 1;
    }
    while (c->p < c->end && is_space(*c->p))
        c->p++;
    if (c->p == c->end) {
        c->done = 1;
        return 0;
    }
    *field = c->p;
    while (c->p < c->end && !is_space(*c->p))
        c->p++;
    *len = (size_t)(c->p - *field);
    return 1;
}

static size_t count_fields(const csv_line *line, int comma)
{
    field_cursor c = fields_begin(line, comma);
    const char *f;
    size_t n = 0, len;
    while (next_field(&c, &f, &len))
        n++;
    return n;
}

static int has_comma(const csv_line *line)
{
    return memchr(line->text, ',', line->len) != NULL;
}

/* strtod on a copy, requiring the whole field to be consumed. */
static int parse_number(const char *field, size_t len, double *value)
{
    char buf[CSV_FIELD_MAX];
    if (len == 0 || len >= sizeof buf)
        return 0;
    memcpy(buf, field, len);
    buf[len] = '\0';
    char *end = NULL;
    errno = 0;
    *value = strtod(buf, &end);
    /* A finite literal that overflows (1e999) is refused here, where its
     * text is known; an explicit "inf" or "nan" parses and is left to the
     * caller's non-finite check. */
    if (errno == ERANGE && isinf(*value))
        return 0;
    return end == buf + len;
}

static void make_fragment(const char *text, size_t len, char *out, size_t out_len)
{
    size_t n = len < out_len - 1 ? len : out_len - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    out[n] = '\0';
}

/* A header field must fail to parse and must not even start like a number,
 * so that a first data row with a typo ("1.2.3") is reported, not silently
 * dropped as a header. */
static int is_header_field(const char *f, size_t len)
{
    double ignored;
    if (len > 0 && f[0] != '\0' && strchr("0123456789+-.", f[0]) != NULL)
        return 0;
    return !parse_number(f, len, &ignored);
}

static int is_header_line(const csv_line *line)
{
    field_cursor c = fields_begin(line, has_comma(line));
    const char *f;
    size_t len;
    while (next_field(&c, &f, &len))
        if (!is_header_field(f, len))
            return 0;
    return 1;
}

static void find_header(csv_doc *doc)
{
    line_reader r = {doc->text, doc->len, 0, 0};
    csv_line line;
    doc->header_line = 0;
    if (next_content_line(&r, &line) && is_header_line(&line))
        doc->header_line = line.number;
}

static int ragged_error(const csv_doc *doc, const csv_line *line, size_t found, ar_error *err)
{
    return ar_error_set(err, AR_EFORMAT,
                        "%s: line %zu: expected %zu fields (as on line %zu), found %zu",
                        doc->name, line->number, doc->cols, doc->cols_line, found);
}

static int number_error(const csv_doc *doc, const csv_line *line, size_t field_index,
                        const char *f, size_t len, ar_error *err)
{
    char frag[FRAGMENT_LEN];
    make_fragment(f, len, frag, sizeof frag);
    return ar_error_set(err, AR_EFORMAT, "%s: line %zu, field %zu: '%s%s' is not a number",
                        doc->name, line->number, field_index, frag,
                        len >= sizeof frag ? "..." : "");
}

/* Parse one data row; store it as row `row` of dst when dst is not NULL. */
static int scan_row(const csv_doc *doc, const csv_line *line, size_t row, double *dst,
                    ar_error *err)
{
    field_cursor c = fields_begin(line, doc->comma);
    const char *f;
    size_t len, j = 0;
    while (next_field(&c, &f, &len)) {
        double v;
        if (!parse_number(f, len, &v))
            return number_error(doc, line, j + 1, f, len, err);
        if (dst != NULL)
            dst[row + j * doc->rows] = v;
        j++;
    }
    return AR_OK;
}

/* First pass (dst NULL): fixes separator and column count, validates every
 * row and counts them.  Second pass: stores into the column-major dst. */
static int scan_data(csv_doc *doc, double *dst, ar_error *err)
{
    line_reader r = {doc->text, doc->len, 0, 0};
    csv_line line;
    size_t row = 0;
    while (next_content_line(&r, &line)) {
        if (line.number == doc->header_line)
            continue;
        if (row == 0 && dst == NULL) {
            doc->comma = has_comma(&line);
            doc->cols = count_fields(&line, doc->comma);
            doc->cols_line = line.number;
        }
        size_t found = count_fields(&line, doc->comma);
        if (found != doc->cols)
            return ragged_error(doc, &line, found, err);
        int rc = scan_row(doc, &line, row, dst, err);
        if (rc != AR_OK)
            return rc;
        row++;
    }
    if (dst == NULL)
        doc->rows = row;
    return AR_OK;
}

static int csv_parse_capped(const char *text, size_t len, const char *name, ar_array *out,
                            size_t max_bytes, ar_error *err)
{
    if (name == NULL)
        name = "<csv>";
    if (out == NULL || (text == NULL && len > 0))
        return ar_error_set(err, AR_EINVAL, "%s: NULL argument", name);
    memset(out, 0, sizeof *out);
    out->precision = AR_PREC_F64;
    csv_doc doc = {text, text == NULL ? 0 : len, name, 0, 0, 0, 0, 0};
    find_header(&doc);
    int rc = scan_data(&doc, NULL, err);
    if (rc != AR_OK)
        return rc;
    if (doc.rows == 0)
        return ar_error_set(err, AR_EINVAL, "%s: no data rows%s", name,
                            doc.header_line != 0 ? " (only a header)" : "");
    size_t elements = doc.rows * doc.cols; /* each field has a byte of text: no overflow */
    if (elements > SIZE_MAX / sizeof(double))
        return ar_error_set(err, AR_ENOMEM, "%s: %zu x %zu matrix is too large", name,
                            doc.rows, doc.cols);
    size_t bytes = elements * sizeof(double);
    if (max_bytes != 0 && bytes > max_bytes)
        return ar_error_set(err, AR_ENOMEM,
                            "%s: %zu x %zu matrix needs %zu bytes, over the limit of %zu bytes",
                            name, doc.rows, doc.cols, bytes, max_bytes);
    double *data = malloc(bytes);
    if (data == NULL)
        return ar_error_set(err, AR_ENOMEM, "%s: out of memory for %zu bytes", name, bytes);
    rc = scan_data(&doc, data, err);
    if (rc != AR_OK) {
        free(data);
        return rc;
    }
    out->ndim = 2;
    out->shape[0] = doc.rows;
    out->shape[1] = doc.cols;
    out->count = 1;
    out->rows = doc.rows;
    out->cols = doc.cols;
    out->data = data;
    return AR_OK;
}

int ar_csv_parse(const char *text, size_t len, const char *name, ar_array *out, ar_error *err)
{
    return csv_parse_capped(text, len, name, out, 0, err);
}

/* ---- file reading ----------------------------------------------------- */

static int grow(char **buf, size_t *cap, size_t need, const char *path, ar_error *err)
{
    if (need <= *cap)
        return AR_OK;
    size_t new_cap = *cap == 0 ? READ_CHUNK : *cap;
    while (new_cap < need) {
        if (new_cap > SIZE_MAX / 2)
            return ar_error_set(err, AR_ENOMEM, "%s: file too large", path);
        new_cap *= 2;
    }
    char *p = realloc(*buf, new_cap);
    if (p == NULL)
        return ar_error_set(err, AR_ENOMEM, "%s: out of memory reading the file", path);
    *buf = p;
    *cap = new_cap;
    return AR_OK;
}

/* Read to EOF (works for pipes too), refusing to go over max_bytes. */
static int read_stream(FILE *fp, const char *path, size_t max_bytes, char **text, size_t *len,
                       ar_error *err)
{
    char *buf = NULL;
    size_t cap = 0, used = 0;
    int rc = AR_OK;
    for (;;) {
        if (used > SIZE_MAX - READ_CHUNK) {
            rc = ar_error_set(err, AR_ENOMEM, "%s: file too large", path);
            break;
        }
        rc = grow(&buf, &cap, used + READ_CHUNK, path, err);
        if (rc != AR_OK)
            break;
        size_t got = fread(buf + used, 1, READ_CHUNK, fp);
        used += got;
        if (max_bytes != 0 && used > max_bytes) {
            rc = ar_error_set(err, AR_ENOMEM, "%s: file is larger than the limit of %zu bytes",
                              path, max_bytes);
            break;
        }
        if (got < READ_CHUNK) {
            if (ferror(fp))
                rc = ar_error_set(err, AR_EIO, "%s: read error: %s", path, strerror(errno));
            break;
        }
    }
    if (rc != AR_OK) {
        free(buf);
        return rc;
    }
    *text = buf;
    *len = used;
    return AR_OK;
}

static int read_text_file(const char *path, size_t max_bytes, char **text, size_t *len,
                          ar_error *err)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return ar_error_set(err, AR_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int rc = AR_OK;
    if (fstat(fileno(fp), &st) != 0)
        rc = ar_error_set(err, AR_EIO, "%s: cannot stat: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        rc = ar_error_set(err, AR_EIO, "%s: is a directory", path);
    else if (max_bytes != 0 && S_ISREG(st.st_mode) && (uintmax_t)st.st_size > max_bytes)
        rc = ar_error_set(err, AR_ENOMEM, "%s: file has %jd bytes, over the limit of %zu bytes",
                          path, (intmax_t)st.st_size, max_bytes);
    if (rc == AR_OK)
        rc = read_stream(fp, path, max_bytes, text, len, err);
    fclose(fp);
    return rc;
}

int ar_csv_read_ex(const char *path, ar_array *out, size_t max_bytes, ar_error *err)
{
    if (path == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_csv_read: NULL argument");
    memset(out, 0, sizeof *out);
    out->precision = AR_PREC_F64;
    char *text = NULL;
    size_t len = 0;
    int rc = read_text_file(path, max_bytes, &text, &len, err);
    if (rc != AR_OK)
        return rc;
    rc = csv_parse_capped(text, len, path, out, max_bytes, err);
    free(text);
    return rc;
}

int ar_csv_read(const char *path, ar_array *out, ar_error *err)
{
    return ar_csv_read_ex(path, out, 0, err);
}

/* ---- writer ----------------------------------------------------------- */

int ar_csv_write_matrix(const char *path, ar_cview m, ar_error *err)
{
    ar_atomic_file *af;
    int rc = ar_io_open_writer(path, m, &af, err);
    if (rc != AR_OK)
        return rc;
    for (size_t i = 0; i < m.rows && rc == AR_OK; i++) {
        for (size_t j = 0; j < m.cols && rc == AR_OK; j++)
            rc = ar_atomic_printf(af, j == 0 ? "%.17g" : ",%.17g", AR_VAT(m, i, j));
        if (rc == AR_OK)
            rc = ar_atomic_write(af, "\n", 1, err);
    }
    /* A failed write is remembered by af: commit reports it and removes the
     * temporary file. */
    return ar_atomic_commit(af, err);
}
