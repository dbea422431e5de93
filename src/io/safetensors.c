/* safetensors reader: header validation with jansson, data through mmap,
 * exact conversion of F64/F32/F16/BF16 blocks to column-major doubles. */
#include "attnrank/safetensors.h"
#include "attnrank/status.h"
#include "io/safetensors_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct st_file {
    char *path;
    const unsigned char *base; /* the whole file image */
    size_t size;
    int mapped;                /* 1: munmap on close; 0: borrowed buffer */
} st_file;

struct ar_safetensors {
    st_file *files;
    size_t nfiles, files_cap;
    ar_st_tensor *tensors;     /* sorted by name once loading is done */
    size_t ntensors, tensors_cap;
    char *dir;
};


/* ------------------------------------------------------------------ */
/* dtypes and exact conversions                                         */
/* ------------------------------------------------------------------ */

static const struct {
    const char *name;
    size_t size;
} dtype_table[AR_ST_NDTYPES] = {
    [AR_ST_F64] = {"F64", 8},         [AR_ST_F32] = {"F32", 4},
    [AR_ST_F16] = {"F16", 2},         [AR_ST_BF16] = {"BF16", 2},
    [AR_ST_BOOL] = {"BOOL", 1},       [AR_ST_U8] = {"U8", 1},
    [AR_ST_I8] = {"I8", 1},           [AR_ST_F8_E4M3] = {"F8_E4M3", 1},
    [AR_ST_F8_E5M2] = {"F8_E5M2", 1}, [AR_ST_I16] = {"I16", 2},
    [AR_ST_U16] = {"U16", 2},         [AR_ST_I32] = {"I32", 4},
    [AR_ST_U32] = {"U32", 4},         [AR_ST_I64] = {"I64", 8},
    [AR_ST_U64] = {"U64", 8},
};

const char *ar_st_dtype_name(ar_st_dtype dtype)
{
    return (unsigned)dtype < AR_ST_NDTYPES ? dtype_table[dtype].name : "?";
}

int ar_st_dtype_parse(const char *text, ar_st_dtype *dtype, ar_error *err)
{
    if (text == NULL || dtype == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    for (int i = 0; i < AR_ST_NDTYPES; i++)
        if (strcmp(text, dtype_table[i].name) == 0) {
            *dtype = (ar_st_dtype)i;
            return AR_OK;
        }
    return ar_error_set(err, AR_EUNSUPPORTED, "unknown dtype '%.40s'", text);
}

size_t ar_st_dtype_size(ar_st_dtype dtype)
{
    return (unsigned)dtype < AR_ST_NDTYPES ? dtype_table[dtype].size : 0;
}

int ar_st_dtype_is_float(ar_st_dtype dtype)
{
    return dtype == AR_ST_F64 || dtype == AR_ST_F32 || dtype == AR_ST_F16 || dtype == AR_ST_BF16;
}

ar_precision ar_st_dtype_precision(ar_st_dtype dtype)
{
    switch (dtype) {
    case AR_ST_F32: return AR_PREC_F32;
    case AR_ST_F16: return AR_PREC_F16;
    case AR_ST_BF16: return AR_PREC_BF16;
    default: return AR_PREC_F64;
    }
}

static double bits_to_double(uint64_t bits)
{
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits.  Normal values
 * are rebuilt as float64 bit patterns (exponent rebias 15 -> 1023, fraction
 * shifted into the top of the 52-bit field); subnormals are frac * 2^-24,
 * exact in double. */
double ar_half_to_double(uint16_t bits)
{
    uint64_t sign = (uint64_t)(bits >> 15) << 63;
    unsigned exp = (bits >> 10) & 0x1fu;
    uint64_t frac = bits & 0x3ffu;
    if (exp == 0x1f)
        return bits_to_double(sign | (0x7ffull << 52) | (frac << 42)); /* inf, NaN */
    if (exp == 0) {
        double v = (double)frac * 0x1p-24;
        return sign ? -v : v;
    }
    return bits_to_double(sign | ((uint64_t)(exp - 15 + 1023) << 52) | (frac << 42));
}

/* bfloat16 is the top half of a binary32. */
double ar_bfloat16_to_double(uint16_t bits)
{
    uint32_t w = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &w, sizeof f);
    return (double)f;
}

static uint16_t le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | ((uint64_t)le32(p + 4) << 32);
}

/* Convert n consecutive little-endian elements to dst[0], dst[stride], ... */
static void convert_run(ar_st_dtype dtype, const unsigned char *src, size_t n, double *dst,
                        size_t stride)
{
    switch (dtype) {
    case AR_ST_F64:
        for (size_t j = 0; j < n; j++)
            dst[j * stride] = bits_to_double(le64(src + 8 * j));
        break;
    case AR_ST_F32:
        for (size_t j = 0; j < n; j++) {
            uint32_t w = le32(src + 4 * j);
            float f;
            memcpy(&f, &w, sizeof f);
            dst[j * stride] = (double)f;
        }
        break;
    case AR_ST_F16:
        for (size_t j = 0; j < n; j++)
            dst[j * stride] = ar_half_to_double(le16(src + 2 * j));
        break;
    case AR_ST_BF16:
        for (size_t j = 0; j < n; j++)
            dst[j * stride] = ar_bfloat16_to_double(le16(src + 2 * j));
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------------ */
/* handle bookkeeping                                                    */
/* ------------------------------------------------------------------ */

static char *dup_string(const char *s)
{
    size_t len = strlen(s) + 1;
    char *c = malloc(len);
    if (c != NULL)
        memcpy(c, s, len);
    return c;
}

ar_safetensors *ar_st_handle_new(const char *dir)
{
    ar_safetensors *st = calloc(1, sizeof *st);
    if (st == NULL)
        return NULL;
    st->dir = dup_string(dir);
    if (st->dir == NULL) {
        free(st);
        return NULL;
    }
    return st;
}

void ar_safetensors_close(ar_safetensors *st)
{
    if (st == NULL)
        return;
    for (size_t i = 0; i < st->ntensors; i++)
        free((char *)st->tensors[i].name);
    for (size_t i = 0; i < st->nfiles; i++) {
        if (st->files[i].mapped && st->files[i].size > 0)
            munmap((void *)st->files[i].base, st->files[i].size);
        free(st->files[i].path);
    }
    free(st->tensors);
    free(st->files);
    free(st->dir);
    free(st);
}

int ar_st_add_file(ar_safetensors *st, const char *path, const unsigned char *base, size_t size,
                   int mapped, ar_error *err)
{
    if (st->nfiles == st->files_cap) {
        size_t cap = st->files_cap ? 2 * st->files_cap : 4;
        st_file *f = realloc(st->files, cap * sizeof *f);
        if (f == NULL)
            return ar_error_set(err, AR_ENOMEM, "%s: out of memory", path);
        st->files = f;
        st->files_cap = cap;
    }
    st_file *f = &st->files[st->nfiles];
    f->path = dup_string(path);
    if (f->path == NULL)
        return ar_error_set(err, AR_ENOMEM, "%s: out of memory", path);
    f->base = base;
    f->size = size;
    f->mapped = mapped;
    st->nfiles++;
    return AR_OK;
}

ar_st_tensor *ar_st_add_tensor(ar_safetensors *st, const char *name)
{
    if (st->ntensors == st->tensors_cap) {
        size_t cap = st->tensors_cap ? 2 * st->tensors_cap : 64;
        ar_st_tensor *t = realloc(st->tensors, cap * sizeof *t);
        if (t == NULL)
            return NULL;
        st->tensors = t;
        st->tensors_cap = cap;
    }
    ar_st_tensor *t = &st->tensors[st->ntensors];
    memset(t, 0, sizeof *t);
    t->name = dup_string(name);
    if (t->name == NULL)
        return NULL;
    st->ntensors++;
    return t;
}

/* ------------------------------------------------------------------ */
/* header validation                                                    */
/* ------------------------------------------------------------------ */

/* A JSON integer in [0, limit], else -1 (jansson integers are signed). */
static int json_size(const json_t *v, uint64_t limit, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    uint64_t x = (uint64_t)json_integer_value(v);
    if (x > limit)
        return -1;
    *out = x;
    return 0;
}

int ar_st_count_elements(ar_st_tensor *t)
{
    /* A zero dimension makes the count 0 whatever the other dimensions. */
    for (size_t i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0) {
            t->count = 0;
            return 0;
        }
    size_t count = 1;
    for (size_t i = 0; i < t->ndim; i++) {
        if (count > SIZE_MAX / t->shape[i])
            return -1;
        count *= t->shape[i];
    }
    size_t es = ar_st_dtype_size(t->dtype);
    if (es == 0 || count > SIZE_MAX / es)
        return -1;
    t->count = count;
    return 0;
}

/* t->dtype is already set: the byte count is checked with the elements. */
static int parse_shape(const char *file, const char *name, const json_t *shape, ar_st_tensor *t,
                       ar_error *err)
{
    if (!json_is_array(shape))
        return ar_error_set(err, AR_EFORMAT, "%s: tensor '%s': \"shape\" is not an array", file,
                            name);
    size_t nd = json_array_size(shape);
    if (nd > AR_ST_MAX_DIMS)
        return ar_error_set(err, AR_EUNSUPPORTED, "%s: tensor '%s': %zu dimensions (at most %d)",
                            file, name, nd, AR_ST_MAX_DIMS);
    t->ndim = nd;
    int overflow = 0;
    for (size_t i = 0; i < nd; i++) {
        uint64_t dim = 0;
        if (json_size(json_array_get(shape, i), INT64_MAX, &dim) != 0)
            return ar_error_set(err, AR_EFORMAT,
                                "%s: tensor '%s': shape entry %zu is not a non-negative integer",
                                file, name, i);
        if (dim > SIZE_MAX)
            overflow = 1;
        t->shape[i] = (size_t)dim;
    }
    if (overflow || ar_st_count_elements(t) != 0)
        return ar_error_set(err, AR_EFORMAT, "%s: tensor '%s': shape overflows the address space",
                            file, name);
    return AR_OK;
}

static void format_shape(const ar_st_tensor *t, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "[");
    for (size_t i = 0; i < t->ndim && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%zu", i ? ", " : "", t->shape[i]);
    if (off < len)
        snprintf(buf + off, len - off, "]");
}

/* Offsets: ordered, consistent with shape x dtype, inside the data region. */
static int check_offsets(const char *file, const char *name, const json_t *offs, uint64_t data_len,
                         ar_st_tensor *t, ar_error *err)
{
    if (!json_is_array(offs) || json_array_size(offs) != 2 ||
        json_size(json_array_get(offs, 0), INT64_MAX, &t->begin) != 0 ||
        json_size(json_array_get(offs, 1), INT64_MAX, &t->end) != 0)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: tensor '%s': \"data_offsets\" must be two non-negative integers",
                            file, name);
    if (t->end < t->begin)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: tensor '%s': data_offsets [%llu, %llu) are reversed", file, name,
                            (unsigned long long)t->begin, (unsigned long long)t->end);
    uint64_t es = ar_st_dtype_size(t->dtype);
    char shape[160];
    format_shape(t, shape, sizeof shape);
    if (t->count > UINT64_MAX / es || (uint64_t)t->count * es != t->end - t->begin)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: tensor '%s': shape %s of %s needs %llu bytes, data_offsets "
                            "[%llu, %llu) hold %llu",
                            file, name, shape, ar_st_dtype_name(t->dtype),
                            (unsigned long long)((uint64_t)t->count * es),
                            (unsigned long long)t->begin, (unsigned long long)t->end,
                            (unsigned long long)(t->end - t->begin));
    if (t->end > data_len) {
        if (t->begin <= data_len)
            return ar_error_set(err, AR_EFORMAT,
                                "%s: truncated data: tensor '%s' ends at byte %llu of the data "
                                "region, which holds only %llu bytes",
                                file, name, (unsigned long long)t->end,
                                (unsigned long long)data_len);
        return ar_error_set(err, AR_EFORMAT,
                            "%s: tensor '%s': data_offsets [%llu, %llu) lie outside the data "
                            "region (%llu bytes)",
                            file, name, (unsigned long long)t->begin,
                            (unsigned long long)t->end, (unsigned long long)data_len);
    }
    return AR_OK;
}

static int parse_entry(const char *file, const char *name, const json_t *entry, uint64_t data_len,
                       ar_st_tensor *t, ar_error *err)
{
    if (!json_is_object(entry))
        return ar_error_set(err, AR_EFORMAT, "%s: tensor '%s': entry is not a JSON object", file,
                            name);
    const json_t *dtype = json_object_get(entry, "dtype");
    const json_t *shape = json_object_get(entry, "shape");
    const json_t *offs = json_object_get(entry, "data_offsets");
    const char *missing = dtype == NULL ? "dtype" : shape == NULL ? "shape"
                          : offs == NULL ? "data_offsets" : NULL;
    if (missing != NULL)
        return ar_error_set(err, AR_EFORMAT, "%s: tensor '%s': no \"%s\" key", file, name,
                            missing);
    if (!json_is_string(dtype))
        return ar_error_set(err, AR_EFORMAT, "%s: tensor '%s': \"dtype\" is not a string", file,
                            name);
    if (ar_st_dtype_parse(json_string_value(dtype), &t->dtype, err) != AR_OK)
        return ar_error_set(err, AR_EUNSUPPORTED, "%s: tensor '%s': unknown dtype '%.40s'", file,
                            name, json_string_value(dtype));
    int rc = parse_shape(file, name, shape, t, err);
    return rc != AR_OK ? rc : check_offsets(file, name, offs, data_len, t, err);
}

static int cmp_begin(const void *a, const void *b)
{
    const ar_st_tensor *x = *(const ar_st_tensor *const *)a, *y = *(const ar_st_tensor *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Tensors first..ntensors-1 all come from one file: no two non-empty ones
 * may share a byte. */
static int check_overlaps(ar_safetensors *st, size_t first, const char *file, ar_error *err)
{
    size_t n = st->ntensors - first;
    if (n < 2)
        return AR_OK;
    ar_st_tensor **order = malloc(n * sizeof *order);
    if (order == NULL)
        return ar_error_set(err, AR_ENOMEM, "%s: out of memory", file);
    for (size_t i = 0; i < n; i++)
        order[i] = &st->tensors[first + i];
    qsort(order, n, sizeof *order, cmp_begin);
    int rc = AR_OK;
    const ar_st_tensor *prev = NULL;
    for (size_t i = 0; i < n && rc == AR_OK; i++) {
        const ar_st_tensor *t = order[i];
        if (t->begin == t->end)
            continue;
        if (prev != NULL && t->begin < prev->end)
            rc = ar_error_set(err, AR_EFORMAT,
                              "%s: tensors '%s' [%llu, %llu) and '%s' [%llu, %llu) overlap", file,
                              prev->name, (unsigned long long)prev->begin,
                              (unsigned long long)prev->end, t->name,
                              (unsigned long long)t->begin, (unsigned long long)t->end);
        prev = t;
    }
    free(order);
    return rc;
}

/* Validate one file image and append its tensors (file index fi). */
static int parse_image(ar_safetensors *st, size_t fi, ar_error *err)
{
    const char *file = st->files[fi].path;
    const unsigned char *buf = st->files[fi].base;
    size_t len = st->files[fi].size;
    if (len < 8)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: %zu bytes, too short for the 8-byte header length", file, len);
    uint64_t hlen = le64(buf);
    if (hlen > len - 8)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: header length %llu (bytes 0-7) runs past the end of the file "
                            "(%zu bytes)",
                            file, (unsigned long long)hlen, len);
    if (hlen > AR_ST_MAX_HEADER)
        return ar_error_set(err, AR_EFORMAT, "%s: header length %llu exceeds the limit of %u",
                            file, (unsigned long long)hlen, AR_ST_MAX_HEADER);
    json_error_t jerr;
    json_t *root = json_loadb((const char *)buf + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return ar_error_set(err, AR_EFORMAT, "%s: invalid JSON header: %s (header byte %d)", file,
                            jerr.text, jerr.position);
    int rc = AR_OK;
    if (!json_is_object(root))
        rc = ar_error_set(err, AR_EFORMAT, "%s: JSON header is not an object", file);
    uint64_t data_len = (uint64_t)(len - 8 - hlen);
    const unsigned char *data = buf + 8 + hlen;
    size_t first = st->ntensors;
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        if (rc != AR_OK)
            break;
        if (strcmp(key, "__metadata__") == 0) {
            if (!json_is_object(value))
                rc = ar_error_set(err, AR_EFORMAT, "%s: \"__metadata__\" is not an object",
                                  file);
            continue;
        }
        ar_st_tensor *t = ar_st_add_tensor(st, key);
        if (t == NULL) {
            rc = ar_error_set(err, AR_ENOMEM, "%s: out of memory", file);
            break;
        }
        t->file = fi;
        rc = parse_entry(file, key, value, data_len, t, err);
        if (rc == AR_OK)
            t->data = data + t->begin;
    }
    json_decref(root);
    return rc == AR_OK ? check_overlaps(st, first, file, err) : rc;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const ar_st_tensor *)a)->name, ((const ar_st_tensor *)b)->name);
}

/* Sort by name (ar_safetensors_find bisects); a name twice is an error.  A
 * file's own header cannot repeat a key (JSON_REJECT_DUPLICATES), so for
 * files the two are in different shards; a table from memory can repeat a
 * name within its one pseudo-file. */
int ar_st_finish_index(ar_safetensors *st, int duplicate_status, ar_error *err)
{
    if (st->ntensors > 1)
        qsort(st->tensors, st->ntensors, sizeof *st->tensors, cmp_name);
    for (size_t i = 1; i < st->ntensors; i++) {
        const ar_st_tensor *a = &st->tensors[i - 1], *b = &st->tensors[i];
        if (strcmp(a->name, b->name) != 0)
            continue;
        if (a->file == b->file)
            return ar_error_set(err, duplicate_status, "%s: tensor '%s' given twice",
                                st->files[a->file].path, b->name);
        return ar_error_set(err, duplicate_status, "tensor '%s' appears in both %s and %s",
                            b->name, st->files[a->file].path, st->files[b->file].path);
    }
    return AR_OK;
}

/* ------------------------------------------------------------------ */
/* opening files, indexes and directories                              */
/* ------------------------------------------------------------------ */

static int map_file(ar_safetensors *st, const char *path, ar_error *err)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return ar_error_set(err, AR_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return ar_error_set(err, AR_EIO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (S_ISDIR(sb.st_mode)) {
        close(fd);
        return ar_error_set(err, AR_EIO, "%s: is a directory", path);
    }
    size_t size = (size_t)sb.st_size;
    void *base = NULL;
    if (size > 0) {
        base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (base == MAP_FAILED) {
            int e = errno;
            close(fd);
            return ar_error_set(err, AR_EIO, "%s: cannot map: %s", path, strerror(e));
        }
    }
    close(fd); /* the mapping keeps the file */
    int rc = ar_st_add_file(st, path, base, size, 1, err);
    if (rc != AR_OK && base != NULL)
        munmap(base, size);
    return rc;
}

static int add_mapped(ar_safetensors *st, const char *path, ar_error *err)
{
    int rc = map_file(st, path, err);
    return rc == AR_OK ? parse_image(st, st->nfiles - 1, err) : rc;
}

static char *join_path(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    if (p != NULL)
        snprintf(p, len, "%s/%s", dir, name);
    return p;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return dup_string(".");
    if (slash == path)
        return dup_string("/");
    size_t len = (size_t)(slash - path);
    char *d = malloc(len + 1);
    if (d != NULL) {
        memcpy(d, path, len);
        d[len] = '\0';
    }
    return d;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* A shard name must stay beside the index: no absolute path, no "..". */
static int safe_shard_name(const char *name)
{
    if (name[0] == '\0' || name[0] == '/')
        return 0;
    for (const char *p = name; *p; p++)
        if (p[0] == '.' && p[1] == '.' && (p == name || p[-1] == '/') &&
            (p[2] == '/' || p[2] == '\0'))
            return 0;
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every (tensor -> shard) pair of the weight map must hold. */
static int check_weight_map(const ar_safetensors *st, const char *index, json_t *map,
                            ar_error *err)
{
    const char *name;
    json_t *v;
    json_object_foreach(map, name, v)
    {
        const ar_st_tensor *t = ar_safetensors_find(st, name);
        const char *shard = json_string_value(v);
        if (t == NULL)
            return ar_error_set(err, AR_EFORMAT, "%s: weight_map names tensor '%s' in %s, which "
                                "does not hold it", index, name, shard);
        const char *path = st->files[t->file].path;
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        const char *sbase = strrchr(shard, '/');
        sbase = sbase ? sbase + 1 : shard;
        if (strcmp(base, sbase) != 0)
            return ar_error_set(err, AR_EFORMAT,
                                "%s: weight_map puts tensor '%s' in %s, but it is in %s", index,
                                name, shard, path);
    }
    return AR_OK;
}

static json_t *load_json_file(const char *path, ar_error *err, int *rc)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        FILE *fp = fopen(path, "rb");
        if (fp == NULL)
            *rc = ar_error_set(err, AR_EIO, "%s: cannot open: %s", path, strerror(errno));
        else {
            fclose(fp);
            *rc = ar_error_set(err, AR_EFORMAT, "%s: invalid JSON: %s (line %d, column %d)",
                               path, jerr.text, jerr.line, jerr.column);
        }
    }
    return root;
}

static int open_index(ar_safetensors *st, const char *index, ar_error *err)
{
    int rc = AR_OK;
    json_t *root = load_json_file(index, err, &rc);
    if (root == NULL)
        return rc;
    json_t *map = json_object_get(root, "weight_map");
    size_t n = json_is_object(map) ? json_object_size(map) : 0;
    if (!json_is_object(map))
        rc = ar_error_set(err, AR_EFORMAT,
                          "%s: not a sharded-model index (no \"weight_map\" object): give the "
                          "model directory or a .safetensors file",
                          index);
    else if (n == 0)
        rc = ar_error_set(err, AR_EFORMAT, "%s: \"weight_map\" is empty", index);
    const char **names = rc == AR_OK ? malloc(n * sizeof *names) : NULL;
    if (rc == AR_OK && names == NULL)
        rc = ar_error_set(err, AR_ENOMEM, "%s: out of memory", index);
    size_t k = 0;
    const char *key;
    json_t *v;
    if (rc == AR_OK)
        json_object_foreach(map, key, v)
        {
            if (!json_is_string(v) || !safe_shard_name(json_string_value(v))) {
                rc = ar_error_set(err, AR_EFORMAT,
                                  "%s: weight_map entry '%s' is not a file name beside the index",
                                  index, key);
                break;
            }
            names[k++] = json_string_value(v);
        }
    if (rc == AR_OK)
        qsort(names, k, sizeof *names, cmp_str);
    for (size_t i = 0; rc == AR_OK && i < k; i++) {
        if (i > 0 && strcmp(names[i], names[i - 1]) == 0)
            continue; /* each shard once */
        char *path = join_path(st->dir, names[i]);
        rc = path ? add_mapped(st, path, err) : ar_error_set(err, AR_ENOMEM, "out of memory");
        free(path);
    }
    if (rc == AR_OK)
        rc = ar_st_finish_index(st, AR_EFORMAT, err);
    if (rc == AR_OK)
        rc = check_weight_map(st, index, map, err);
    free(names);
    json_decref(root);
    return rc;
}

/* No index, no model.safetensors: every *.safetensors file, in name order. */
static int open_all_in_dir(ar_safetensors *st, const char *dir, ar_error *err)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return ar_error_set(err, AR_EIO, "%s: cannot read directory: %s", dir, strerror(errno));
    char **names = NULL;
    size_t k = 0, cap = 0;
    int rc = AR_OK;
    struct dirent *e;
    while (rc == AR_OK && (e = readdir(d)) != NULL) {
        if (!ends_with(e->d_name, ".safetensors") || e->d_name[0] == '.')
            continue;
        if (k == cap) {
            cap = cap ? 2 * cap : 8;
            char **grown = realloc(names, cap * sizeof *names);
            if (grown == NULL) {
                rc = ar_error_set(err, AR_ENOMEM, "out of memory");
                break;
            }
            names = grown;
        }
        if ((names[k] = join_path(dir, e->d_name)) == NULL)
            rc = ar_error_set(err, AR_ENOMEM, "out of memory");
        else
            k++;
    }
    closedir(d);
    if (rc == AR_OK && k == 0)
        rc = ar_error_set(err, AR_EIO, "%s: no model.safetensors.index.json and no .safetensors "
                          "files", dir);
    if (rc == AR_OK)
        qsort(names, k, sizeof *names, cmp_str);
    for (size_t i = 0; rc == AR_OK && i < k; i++)
        rc = add_mapped(st, names[i], err);
    for (size_t i = 0; i < k; i++)
        free(names[i]);
    free(names);
    return rc == AR_OK ? ar_st_finish_index(st, AR_EFORMAT, err) : rc;
}

static int open_dir(ar_safetensors *st, const char *dir, ar_error *err)
{
    char *index = join_path(dir, "model.safetensors.index.json");
    char *single = join_path(dir, "model.safetensors");
    int rc = AR_OK;
    if (index == NULL || single == NULL)
        rc = ar_error_set(err, AR_ENOMEM, "out of memory");
    else if (access(index, F_OK) == 0)
        rc = open_index(st, index, err);
    else if (access(single, F_OK) == 0) {
        rc = add_mapped(st, single, err);
        if (rc == AR_OK)
            rc = ar_st_finish_index(st, AR_EFORMAT, err);
    } else
        rc = open_all_in_dir(st, dir, err);
    free(index);
    free(single);
    return rc;
}

int ar_safetensors_open(ar_safetensors **out, const char *path, ar_error *err)
{
    if (out == NULL || path == NULL || path[0] == '\0')
        return ar_error_set(err, AR_EINVAL, "empty model path");
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return ar_error_set(err, AR_EIO, "%s: cannot open: %s", path, strerror(errno));
    int is_dir = S_ISDIR(sb.st_mode);
    char *dir = is_dir ? dup_string(path) : dir_of(path);
    ar_safetensors *st = dir ? ar_st_handle_new(dir) : NULL;
    free(dir);
    if (st == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    int rc;
    if (is_dir)
        rc = open_dir(st, path, err);
    else if (ends_with(path, "/config.json") || strcmp(path, "config.json") == 0)
        /* The file users reach for first, and the one that names no tensors. */
        rc = ar_error_set(err, AR_EINVAL,
                          "%s: this is the model's configuration, not its weights: give the "
                          "model directory (%s) or a .safetensors file",
                          path, st->dir);
    else if (ends_with(path, ".json"))
        rc = open_index(st, path, err);
    else {
        rc = add_mapped(st, path, err);
        if (rc == AR_OK)
            rc = ar_st_finish_index(st, AR_EFORMAT, err);
    }
    if (rc != AR_OK) {
        ar_safetensors_close(st);
        return ar_error_printable(err, rc);
    }
    *out = st;
    return AR_OK;
}

int ar_safetensors_parse(ar_safetensors **out, const unsigned char *buf, size_t len,
                         const char *name, ar_error *err)
{
    if (out == NULL || (buf == NULL && len > 0))
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    *out = NULL;
    ar_safetensors *st = ar_st_handle_new(".");
    if (st == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    int rc = ar_st_add_file(st, name ? name : "<memory>", buf, len, 0, err);
    if (rc == AR_OK)
        rc = parse_image(st, 0, err);
    if (rc == AR_OK)
        rc = ar_st_finish_index(st, AR_EFORMAT, err);
    if (rc != AR_OK) {
        ar_safetensors_close(st);
        return ar_error_printable(err, rc);
    }
    *out = st;
    return AR_OK;
}

/* ------------------------------------------------------------------ */
/* queries and reads                                                   */
/* ------------------------------------------------------------------ */

size_t ar_safetensors_count(const ar_safetensors *st)
{
    return st ? st->ntensors : 0;
}

const ar_st_tensor *ar_safetensors_tensor(const ar_safetensors *st, size_t i)
{
    return st && i < st->ntensors ? &st->tensors[i] : NULL;
}

const ar_st_tensor *ar_safetensors_find(const ar_safetensors *st, const char *name)
{
    if (st == NULL || name == NULL || st->ntensors == 0)
        return NULL;
    ar_st_tensor key;
    key.name = name;
    return bsearch(&key, st->tensors, st->ntensors, sizeof key, cmp_name);
}

size_t ar_safetensors_nfiles(const ar_safetensors *st)
{
    return st ? st->nfiles : 0;
}

const char *ar_safetensors_file_path(const ar_safetensors *st, size_t i)
{
    return st && i < st->nfiles ? st->files[i].path : NULL;
}

const char *ar_safetensors_dir(const ar_safetensors *st)
{
    return st ? st->dir : NULL;
}

int ar_st_tensor_matrix_shape(const ar_st_tensor *t, size_t *rows, size_t *cols, ar_error *err)
{
    if (t == NULL || rows == NULL || cols == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    switch (t->ndim) {
    case 0: *rows = 1, *cols = 1; return AR_OK;
    case 1: *rows = 1, *cols = t->shape[0]; return AR_OK;
    case 2: *rows = t->shape[0], *cols = t->shape[1]; return AR_OK;
    default: return ar_error_set(err, AR_EUNSUPPORTED,
                                 "a tensor of %zu dimensions is no matrix", t->ndim);
    }
}

/* First non-finite value of a converted block, in tensor coordinates. */
static int check_block_finite(const ar_safetensors *st, const ar_st_tensor *t, size_t row0,
                              size_t col0, int transpose, ar_view out, ar_error *err)
{
    for (size_t j = 0; j < out.cols; j++)
        for (size_t i = 0; i < out.rows; i++) {
            double v = AR_VAT(out, i, j);
            if (isfinite(v))
                continue;
            size_t r = row0 + (transpose ? j : i), c = col0 + (transpose ? i : j);
            return ar_error_set(err, AR_ENONFINITE,
                                "%s: tensor '%s': non-finite weight %s at [%zu, %zu]",
                                st->files[t->file].path, t->name,
                                isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"), r, c);
        }
    return AR_OK;
}

static int read_block(const ar_safetensors *st, const ar_st_tensor *t, size_t row0, size_t col0,
                      ar_trans trans, ar_view out, ar_error *err)
{
    if (st == NULL || t == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (ar_view_check(out, err) != AR_OK || (trans != AR_NO_TRANS && trans != AR_TRANS))
        return ar_error_set(err, AR_EINVAL, "invalid output view or transpose flag");
    int transpose = trans == AR_TRANS;
    const char *file = t->file < st->nfiles ? st->files[t->file].path : "?";
    if (!ar_st_dtype_is_float(t->dtype))
        return ar_error_set(err, AR_EUNSUPPORTED,
                            "%s: tensor '%s': dtype %s is not a floating-point weight type "
                            "(F64, F32, F16, BF16)",
                            file, t->name, ar_st_dtype_name(t->dtype));
    size_t rows = 0, cols = 0;
    if (ar_st_tensor_matrix_shape(t, &rows, &cols, err) != AR_OK)
        return ar_error_set(err, AR_EUNSUPPORTED, "%s: tensor '%s': %zu dimensions, expected 2",
                            file, t->name, t->ndim);
    size_t nr = transpose ? out.cols : out.rows;
    size_t nc = transpose ? out.rows : out.cols;
    if (nr == 0 || nc == 0)
        return ar_error_set(err, AR_EINVAL, "%s: tensor '%s': empty block", file, t->name);
    if (row0 > rows || nr > rows - row0 || col0 > cols || nc > cols - col0)
        return ar_error_set(err, AR_ESIZE,
                            "%s: tensor '%s': block of %zu x %zu at (%zu, %zu) outside its "
                            "%zu x %zu shape",
                            file, t->name, nr, nc, row0, col0, rows, cols);
    size_t es = ar_st_dtype_size(t->dtype);
    for (size_t i = 0; i < nr; i++) {
        const unsigned char *src = t->data + ((row0 + i) * cols + col0) * es;
        if (transpose) /* tensor row i is column i of out */
            convert_run(t->dtype, src, nc, &AR_VAT(out, 0, i), out.row_stride);
        else
            convert_run(t->dtype, src, nc, &AR_VAT(out, i, 0), out.col_stride);
    }
    return check_block_finite(st, t, row0, col0, transpose, out, err);
}

int ar_safetensors_read_block(const ar_safetensors *st, const ar_st_tensor *t, size_t row0,
                              size_t col0, ar_trans trans, ar_view out, ar_error *err)
{
    return ar_error_printable(err, read_block(st, t, row0, col0, trans, out, err));
}

static int read_whole(const ar_safetensors *st, const ar_st_tensor *t, ar_matrix *out,
                      ar_error *err)
{
    if (st == NULL || t == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    size_t rows = 0, cols = 0;
    if (ar_st_tensor_matrix_shape(t, &rows, &cols, err) != AR_OK)
        return ar_error_set(err, AR_EUNSUPPORTED, "%s: tensor '%s': %zu dimensions, expected 2",
                            st->files[t->file].path, t->name, t->ndim);
    if (rows == 0 || cols == 0)
        return ar_error_set(err, AR_EINVAL, "%s: tensor '%s': empty (%zu x %zu)",
                            st->files[t->file].path, t->name, rows, cols);
    int rc = ar_matrix_alloc(out, rows, cols, err);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "%s: tensor '%s': out of memory for %zu x %zu",
                            st->files[t->file].path, t->name, rows, cols);
    rc = read_block(st, t, 0, 0, AR_NO_TRANS, ar_matrix_view(out), err);
    if (rc != AR_OK)
        ar_matrix_free(out);
    return rc;
}

int ar_safetensors_read(const ar_safetensors *st, const ar_st_tensor *t, ar_matrix *out,
                        ar_error *err)
{
    return ar_error_printable(err, read_whole(st, t, out, err));
}
