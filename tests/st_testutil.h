/* Test helper: build safetensors images in memory (header JSON by jansson,
 * little-endian row-major data) and write them to a scratch directory.
 * Header-only, static functions, for test_safetensors.c and test_weights.c. */
#ifndef ATTNRANK_ST_TESTUTIL_H
#define ATTNRANK_ST_TESTUTIL_H

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

typedef struct st_builder {
    json_t *header;
    unsigned char *data;
    size_t len, cap;
} st_builder;

static inline void stb_init(st_builder *b)
{
    b->header = json_object();
    b->data = NULL;
    b->len = b->cap = 0;
}

static inline void stb_free(st_builder *b)
{
    json_decref(b->header);
    free(b->data);
    b->header = NULL;
    b->data = NULL;
}

static inline void stb_append(st_builder *b, const void *bytes, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->data = realloc(b->data, cap);
        assert_non_null(b->data);
        b->cap = cap;
    }
    if (n > 0)
        memcpy(b->data + b->len, bytes, n);
    b->len += n;
}

/* A header entry with explicit offsets (for malformed files). */
static inline void stb_entry(st_builder *b, const char *name, const char *dtype,
                             const size_t *shape, size_t ndim, uint64_t begin, uint64_t end)
{
    json_t *sh = json_array();
    for (size_t i = 0; i < ndim; i++)
        json_array_append_new(sh, json_integer((json_int_t)shape[i]));
    json_object_set_new(b->header, name,
                        json_pack("{s:s, s:o, s:[I, I]}", "dtype", dtype, "shape", sh,
                                  "data_offsets", (json_int_t)begin, (json_int_t)end));
}

/* Raw bytes appended after the previous tensor. */
static inline void stb_add_raw(st_builder *b, const char *name, const char *dtype,
                               const size_t *shape, size_t ndim, const void *bytes, size_t n)
{
    stb_entry(b, name, dtype, shape, ndim, b->len, b->len + n);
    stb_append(b, bytes, n);
}

/* Nearest binary16 (ties to even), by bisection over the ordered positive
 * bit patterns; saturates to inf beyond 65520. */
static inline uint16_t tu_double_to_half(double x)
{
    if (isnan(x))
        return 0x7e00;
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs(x);
    if (a >= 65520.0)
        return sign | 0x7c00;
    uint16_t lo = 0, hi = 0x7bff;
    while (lo < hi) { /* largest pattern with value <= a */
        uint16_t mid = (uint16_t)((lo + hi + 1) / 2);
        if (ar_half_to_double(mid) <= a)
            lo = mid;
        else
            hi = (uint16_t)(mid - 1);
    }
    uint16_t best = lo;
    if (lo < 0x7bff) {
        double d0 = a - ar_half_to_double(lo), d1 = ar_half_to_double((uint16_t)(lo + 1)) - a;
        if (d1 < d0 || (d1 == d0 && (lo & 1)))
            best = (uint16_t)(lo + 1);
    }
    return sign | best;
}

/* Nearest bfloat16 of (float)x, ties to even. */
static inline uint16_t tu_double_to_bf16(double x)
{
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (isnan(f))
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* Append a matrix as a 2-D tensor of the given dtype.  transpose = 0 stores
 * m as [rows, cols] (row-major); transpose = 1 stores m^T. */
static inline void stb_add_matrix(st_builder *b, const char *name, const char *dtype,
                                  const ar_matrix *m, int transpose)
{
    size_t rows = transpose ? m->cols : m->rows, cols = transpose ? m->rows : m->cols;
    size_t es = strcmp(dtype, "F64") == 0 ? 8 : strcmp(dtype, "F32") == 0 ? 4 : 2;
    unsigned char *buf = malloc(rows * cols * es + 1);
    assert_non_null(buf);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            double v = transpose ? AR_AT(m, j, i) : AR_AT(m, i, j);
            unsigned char *p = buf + (i * cols + j) * es;
            uint64_t bits = 0;
            if (es == 8) {
                memcpy(&bits, &v, 8);
            } else if (es == 4) {
                float f = (float)v;
                uint32_t w;
                memcpy(&w, &f, 4);
                bits = w;
            } else {
                bits = strcmp(dtype, "F16") == 0 ? tu_double_to_half(v) : tu_double_to_bf16(v);
            }
            for (size_t k = 0; k < es; k++)
                p[k] = (unsigned char)(bits >> (8 * k));
        }
    size_t shape[2] = {rows, cols};
    stb_add_raw(b, name, dtype, shape, 2, buf, rows * cols * es);
    free(buf);
}

/* The file image: 8-byte length, header (padded to 8 bytes), data. */
static inline unsigned char *stb_image(const st_builder *b, size_t *len)
{
    char *text = json_dumps(b->header, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(text);
    size_t h = strlen(text);
    size_t padded = (h + 7) / 8 * 8;
    *len = 8 + padded + b->len;
    unsigned char *img = malloc(*len);
    assert_non_null(img);
    for (int k = 0; k < 8; k++)
        img[k] = (unsigned char)((uint64_t)padded >> (8 * k));
    memcpy(img + 8, text, h);
    memset(img + 8 + h, ' ', padded - h);
    if (b->len > 0)
        memcpy(img + 8 + padded, b->data, b->len);
    free(text);
    return img;
}

static inline void tu_write_file(const char *path, const void *bytes, size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    if (n > 0)
        assert_int_equal(fwrite(bytes, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

static inline void stb_write(const st_builder *b, const char *path)
{
    size_t len = 0;
    unsigned char *img = stb_image(b, &len);
    tu_write_file(path, img, len);
    free(img);
}

/* A fresh scratch directory under TMPDIR (or /tmp). */
static inline void tu_scratch_dir(char *buf, size_t len)
{
    const char *base = getenv("TMPDIR");
    snprintf(buf, len, "%s/attnrank_st_XXXXXX", base && base[0] ? base : "/tmp");
    assert_non_null(mkdtemp(buf));
}

/* rm -r of a scratch directory that holds only plain files (one level of
 * subdirectories). */
static inline void tu_remove_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

#endif
