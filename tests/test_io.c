/* Tests for the io module: .npy and CSV readers and writers.
 *
 * .npy images are built here byte by byte (build_npy) rather than by numpy, so
 * every variant (dtype, byte order, memory order, header version, rank) and
 * every malformation is under the test's control. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attnrank/io.h"
#include "core/matrix_internal.h"
#include "io/array_internal.h"
#include "io/npy_internal.h"

static char g_dir[64];

/* ---- helpers ------------------------------------------------------------ */

static void tmp_path(char *out, size_t n, const char *name)
{
    int k = snprintf(out, n, "%s/%s", g_dir, name);
    assert_true(k > 0 && (size_t)k < n);
}

static void write_bytes(const char *path, const void *buf, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    if (len > 0)
        assert_int_equal(fwrite(buf, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    unsigned char *buf = malloc(1 << 20);
    assert_non_null(buf);
    *len = fread(buf, 1, 1 << 20, fp);
    fclose(fp);
    return buf;
}

/* Deterministic, distinct, sign-alternating values. */
static double value_at(size_t e)
{
    double v = 2.385 + 0.0917 * (double)e - 0.00131 * (double)(e * e % 97);
    return e % 3 == 1 ? -v : v;
}

typedef struct byte_buf {
    unsigned char *p;
    size_t len, cap;
} byte_buf;

static void bb_put(byte_buf *b, const void *src, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap == 0 ? 256 : b->cap;
        while (cap < b->len + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        assert_non_null(b->p);
        b->cap = cap;
    }
    if (n > 0)
        memcpy(b->p + b->len, src, n);
    b->len += n;
}

/* A .npy image with the given dict text, padded like numpy (data aligned to
 * 64 bytes, header ending in '\n'). */
static byte_buf build_npy_raw(int version, const char *dict, const void *data, size_t data_len)
{
    byte_buf b = {NULL, 0, 0};
    size_t pre = version == 1 ? 10 : 12;
    size_t text = strlen(dict) + 1;
    size_t header_len = (pre + text + 63) / 64 * 64 - pre;
    unsigned char head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)version, 0};
    for (size_t i = 0; i < pre - 8; i++)
        head[8 + i] = (unsigned char)(header_len >> (8 * i));
    bb_put(&b, head, pre);
    bb_put(&b, dict, strlen(dict));
    for (size_t i = text; i < header_len; i++)
        bb_put(&b, " ", 1);
    bb_put(&b, "\n", 1);
    bb_put(&b, data, data_len);
    return b;
}

typedef struct npy_spec {
    int version;
    const char *descr;
    int fortran;
    size_t ndim;
    size_t shape[AR_ARRAY_MAX_DIMS];
} npy_spec;

static size_t spec_elements(const npy_spec *s)
{
    size_t n = 1;
    for (size_t a = 0; a < s->ndim; a++)
        n *= s->shape[a];
    return n;
}

static void format_shape(const npy_spec *s, char *out, size_t n)
{
    size_t used = (size_t)snprintf(out, n, "(");
    for (size_t a = 0; a < s->ndim; a++)
        used += (size_t)snprintf(out + used, n - used, a ? ", %zu" : "%zu", s->shape[a]);
    snprintf(out + used, n - used, s->ndim == 1 ? ",)" : ")");
}

static void encode(double v, const char *descr, unsigned char *out)
{
    int big = descr[0] == '>';
    size_t size = descr[2] == '8' ? 8 : 4;
    uint64_t u;
    if (size == 8) {
        memcpy(&u, &v, 8);
    } else {
        float f = (float)v;
        uint32_t u32;
        memcpy(&u32, &f, 4);
        u = u32;
    }
    for (size_t i = 0; i < size; i++)
        out[big ? size - 1 - i : i] = (unsigned char)(u >> (8 * i));
}

/* C-order index of the element stored at Fortran-order position f. */
static size_t fortran_to_c(const npy_spec *s, size_t f)
{
    size_t idx[AR_ARRAY_MAX_DIMS];
    for (size_t a = 0; a < s->ndim; a++) {
        idx[a] = f % s->shape[a];
        f /= s->shape[a];
    }
    size_t c = 0;
    for (size_t a = 0; a < s->ndim; a++)
        c = c * s->shape[a] + idx[a];
    return c;
}

/* values are in logical C order; they are laid out as the spec says. */
static byte_buf build_npy(const npy_spec *s, const double *values)
{
    char shape[256], dict[512];
    format_shape(s, shape, sizeof shape);
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", s->descr,
             s->fortran ? "True" : "False", shape);
    size_t n = spec_elements(s), size = s->descr[2] == '8' ? 8 : 4;
    unsigned char *data = malloc(n * size + 1);
    assert_non_null(data);
    for (size_t e = 0; e < n; e++)
        encode(values[s->fortran ? fortran_to_c(s, e) : e], s->descr, data + e * size);
    byte_buf b = build_npy_raw(s->version, dict, data, n * size);
    free(data);
    return b;
}

static double *make_values(size_t n)
{
    double *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t e = 0; e < n; e++)
        v[e] = value_at(e);
    return v;
}

static void check_array(const ar_array *a, const npy_spec *s, const double *values)
{
    size_t rows = s->ndim >= 2 ? s->shape[s->ndim - 2] : 1;
    size_t cols = s->ndim >= 1 ? s->shape[s->ndim - 1] : 1;
    size_t count = spec_elements(s) / (rows * cols);
    int f4 = s->descr[2] == '4';
    assert_int_equal(a->ndim, s->ndim);
    for (size_t d = 0; d < s->ndim; d++)
        assert_int_equal(a->shape[d], s->shape[d]);
    assert_int_equal(a->rows, rows);
    assert_int_equal(a->cols, cols);
    assert_int_equal(a->count, count);
    assert_int_equal(a->precision, f4 ? AR_PREC_F32 : AR_PREC_F64);
    for (size_t k = 0; k < count; k++) {
        ar_matrix m = ar_array_slice_cm(a, k);
        assert_int_equal(m.rows, rows);
        assert_int_equal(m.cols, cols);
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < cols; j++) {
                double want = values[(k * rows + i) * cols + j];
                if (f4)
                    want = (double)(float)want;
                assert_true(AR_AT(&m, i, j) == want);
            }
    }
}

static void expect_npy_error(const byte_buf *b, size_t max_bytes, int status, const char *frag)
{
    ar_array a;
    ar_error err = {{0}};
    int rc = ar_npy_parse(b->p, b->len, &a, max_bytes, &err);
    if (rc != status || strstr(err.msg, frag) == NULL)
        print_error("status %d (want %d), message: %s (want '%s')\n", rc, status, err.msg, frag);
    assert_int_equal(rc, status);
    assert_non_null(strstr(err.msg, frag));
    assert_true(strncmp(err.msg, "<buffer>: ", 10) == 0);
    assert_null(a.data);
}

static void expect_dict_error(const char *dict, int status, const char *frag)
{
    double data[6] = {2.385, -0.0917, 1.5, 3.25, -7.125, 0.3};
    byte_buf b = build_npy_raw(1, dict, data, sizeof data);
    expect_npy_error(&b, 0, status, frag);
    free(b.p);
}

static void expect_csv_error(const char *text, size_t len, int status, const char *frag)
{
    ar_array a;
    ar_error err = {{0}};
    int rc = ar_csv_parse(text, len, "in.csv", &a, &err);
    if (rc != status || strstr(err.msg, frag) == NULL)
        print_error("status %d (want %d), message: %s (want '%s')\n", rc, status, err.msg, frag);
    assert_int_equal(rc, status);
    assert_non_null(strstr(err.msg, frag));
    assert_true(strncmp(err.msg, "in.csv: ", 8) == 0);
    assert_null(a.data);
}

static int no_temp_files_left(void)
{
    DIR *d = opendir(g_dir);
    assert_non_null(d);
    int clean = 1;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        if (strstr(e->d_name, ".tmp.") != NULL)
            clean = 0;
    closedir(d);
    return clean;
}

/* ---- .npy: good files --------------------------------------------------- */

static const char *const descrs[] = {"<f8", ">f8", "<f4", ">f4"};

static const npy_spec shapes[] = {
    {0, NULL, 0, 0, {0}},           {0, NULL, 0, 1, {7}},
    {0, NULL, 0, 2, {3, 4}},        {0, NULL, 0, 2, {1, 5}},
    {0, NULL, 0, 3, {2, 3, 4}},     {0, NULL, 0, 4, {2, 3, 4, 5}},
};

static void test_npy_all_variants(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "variant.npy");
    for (size_t d = 0; d < 4; d++)
        for (int fortran = 0; fortran <= 1; fortran++)
            for (int version = 1; version <= 3; version++)
                for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                    npy_spec spec = shapes[s];
                    spec.version = version;
                    spec.descr = descrs[d];
                    spec.fortran = fortran;
                    double *values = make_values(spec_elements(&spec));
                    byte_buf b = build_npy(&spec, values);
                    ar_array a;
                    ar_error err = {{0}};
                    assert_int_equal(ar_npy_parse(b.p, b.len, &a, 0, &err), AR_OK);
                    check_array(&a, &spec, values);
                    ar_array_free(&a);
                    write_bytes(path, b.p, b.len);
                    assert_int_equal(ar_matrix_file_read(path, &a, 0, &err), AR_OK);
                    check_array(&a, &spec, values);
                    ar_array_free(&a);
                    free(b.p);
                    free(values);
                }
    remove(path);
}

/* Bigger than the reader's 64 KiB chunk, so elements cross chunk edges. */
static void test_npy_large_chunks(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "large.npy");
    for (size_t d = 0; d < 4; d++) {
        npy_spec spec = {2, descrs[d], (int)(d % 2), 3, {3, 301, 207}};
        double *values = make_values(spec_elements(&spec));
        byte_buf b = build_npy(&spec, values);
        write_bytes(path, b.p, b.len);
        ar_array a;
        ar_error err = {{0}};
        assert_int_equal(ar_npy_read(path, &a, 0, &err), AR_OK);
        check_array(&a, &spec, values);
        ar_array_free(&a);
        free(b.p);
        free(values);
    }
    remove(path);
}

static void test_npy_stack_slices(void **state)
{
    (void)state;
    for (int fortran = 0; fortran <= 1; fortran++) {
        npy_spec spec = {1, fortran ? ">f4" : "<f8", fortran, 4, {2, 3, 4, 5}};
        double *values = make_values(120);
        byte_buf b = build_npy(&spec, values);
        ar_array a;
        assert_int_equal(ar_npy_parse(b.p, b.len, &a, 0, NULL), AR_OK);
        assert_int_equal(a.count, 6);
        for (size_t k = 0; k < a.count; k++) {
            size_t idx[2] = {99, 99};
            ar_array_slice_index(&a, k, idx);
            assert_int_equal(idx[0], k / 3);
            assert_int_equal(idx[1], k % 3);
            ar_matrix m = ar_array_slice_cm(&a, k);
            assert_int_equal(m.ld, 4);
            /* element [idx0, idx1, 2, 3] */
            double want = values[((idx[0] * 3 + idx[1]) * 4 + 2) * 5 + 3];
            if (fortran)
                want = (double)(float)want;
            assert_true(AR_AT(&m, 2, 3) == want);
        }
        ar_matrix none = ar_array_slice_cm(&a, a.count);
        assert_null(none.data);
        assert_int_equal(none.rows, 0);
        ar_array_free(&a);
        assert_null(a.data);
        ar_array_free(&a); /* twice is harmless */
        ar_array_free(NULL);
        free(b.p);
        free(values);
    }
}

static void test_npy_header_spellings(void **state)
{
    (void)state;
    static const char *const dicts[] = {
        "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
        "{\"shape\":(2,3),\"fortran_order\":False,\"descr\":\"<f8\"}",
        "{ 'fortran_order' : False , 'descr' : '=f8' , 'shape' : ( 2 , 3 , ) }",
        "{'descr': '|f8', 'fortran_order': False, 'shape': (2, 3)}\t\r",
    };
    double data[6] = {2.385, -0.0917, 1.5, 3.25, -7.125, 0.3};
    for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++) {
        byte_buf b = build_npy_raw(1, dicts[i], data, sizeof data);
        ar_array a;
        ar_error err = {{0}};
        int rc = ar_npy_parse(b.p, b.len, &a, 0, &err);
        if (rc != AR_OK)
            print_error("%s\n", err.msg);
        assert_int_equal(rc, AR_OK);
        assert_int_equal(a.rows, 2);
        assert_int_equal(a.cols, 3);
        assert_true(a.data[0] == 2.385 && a.data[1] == 3.25 && a.data[2] == -0.0917);
        ar_array_free(&a);
        free(b.p);
    }
}

static void test_npy_write_round_trip(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "written.npy");
    double buf[5 * 4];
    for (size_t e = 0; e < 20; e++)
        buf[e] = value_at(e);
    buf[1] = -0.0;
    ar_matrix m = ar_matrix_alias(buf, 3, 4, 5); /* ld > rows: padding skipped */
    ar_error err = {{0}};
    assert_int_equal(ar_npy_write(path, ar_matrix_cview(&m), &err), AR_OK);
    assert_true(no_temp_files_left());

    size_t len;
    unsigned char *bytes = slurp(path, &len);
    assert_memory_equal(bytes, "\x93NUMPY\x01\x00", 8);
    size_t header_len = bytes[8] | (size_t)bytes[9] << 8;
    assert_int_equal((10 + header_len) % 64, 0);
    assert_int_equal(bytes[10 + header_len - 1], '\n');
    assert_int_equal(len, 10 + header_len + 12 * 8);
    char header[256] = {0};
    memcpy(header, bytes + 10, header_len < 255 ? header_len : 255);
    assert_non_null(strstr(header, "'descr': '<f8'"));
    assert_non_null(strstr(header, "'fortran_order': True"));
    assert_non_null(strstr(header, "'shape': (3, 4)"));
    free(bytes);

    ar_array a;
    assert_int_equal(ar_npy_read(path, &a, 0, &err), AR_OK);
    assert_int_equal(a.ndim, 2);
    assert_int_equal(a.count, 1);
    assert_int_equal(a.precision, AR_PREC_F64);
    ar_matrix r = ar_array_slice_cm(&a, 0);
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 4; j++)
            assert_memory_equal(&AR_AT(&r, i, j), &AR_AT(&m, i, j), sizeof(double));
    assert_true(signbit(AR_AT(&r, 1, 0)));
    ar_array_free(&a);
    remove(path);
}

static void test_npy_write_errors(void **state)
{
    (void)state;
    double buf[4] = {2.385, -0.0917, 1.5, 3.25};
    ar_matrix m = ar_matrix_alias(buf, 2, 2, 2);
    ar_error err = {{0}};
    char path[128];
    tmp_path(path, sizeof path, "no/such/dir/out.npy");
    assert_int_equal(ar_npy_write(path, ar_matrix_cview(&m), &err), AR_EIO);
    assert_int_equal(ar_csv_write_matrix(path, ar_matrix_cview(&m), &err), AR_EIO);
    ar_matrix empty = ar_matrix_alias(buf, 0, 2, 1);
    tmp_path(path, sizeof path, "empty.npy");
    assert_int_equal(ar_npy_write(path, ar_matrix_cview(&empty), &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "empty matrix"));
    assert_int_equal(ar_csv_write_matrix(path, ar_matrix_cview(&empty), &err), AR_EINVAL);
    assert_int_equal(ar_npy_write(NULL, ar_matrix_cview(&m), NULL), AR_EINVAL);
    /* A view assembled by hand with col_stride < rows overlaps: refused. */
    ar_cview bad = {buf, 2, 2, 1, 1};
    assert_int_equal(ar_npy_write(path, bad, &err), AR_EINVAL);
    assert_int_equal(ar_csv_write_matrix(path, bad, &err), AR_EINVAL);
    ar_cview null_data = {NULL, 2, 2, 1, 2};
    assert_int_equal(ar_npy_write(path, null_data, NULL), AR_EINVAL);
    assert_int_equal(access(path, F_OK), -1);
    assert_true(no_temp_files_left());
}

/* Both writers give the same bytes for a row-major, a padded column-major
 * and a strided (every other column of a wider buffer) view of one matrix. */
static void test_write_views(void **state)
{
    (void)state;
    enum { R = 3, C = 4 };
    double cm[R * C], rm[R * C], padded[6 * C], strided[R * 2 * C];
    for (size_t i = 0; i < R; i++)
        for (size_t j = 0; j < C; j++) {
            double x = value_at(i * C + j) * (j % 2 ? -1.0 : 1.0);
            cm[i + j * R] = x;
            rm[i * C + j] = x;
            padded[i + j * 6] = x;
            strided[i * 2 * C + 2 * j] = x;
        }
    ar_cview views[4];
    assert_int_equal(ar_cview_init_ld(&views[0], cm, R, C, R, AR_COL_MAJOR, NULL), AR_OK);
    assert_int_equal(ar_cview_init_ld(&views[1], rm, R, C, C, AR_ROW_MAJOR, NULL), AR_OK);
    assert_int_equal(ar_cview_init_ld(&views[2], padded, R, C, 6, AR_COL_MAJOR, NULL), AR_OK);
    assert_int_equal(ar_cview_init(&views[3], strided, R, C, 2 * C, 2, NULL), AR_OK);
    ar_error err = {{0}};
    char path[128];
    for (int csv = 0; csv < 2; csv++) {
        unsigned char *first = NULL;
        size_t first_len = 0;
        for (size_t v = 0; v < 4; v++) {
            tmp_path(path, sizeof path, csv ? "view.csv" : "view.npy");
            int rc = csv ? ar_csv_write_matrix(path, views[v], &err)
                         : ar_npy_write(path, views[v], &err);
            assert_int_equal(rc, AR_OK);
            size_t len;
            unsigned char *bytes = slurp(path, &len);
            if (first == NULL) {
                first = bytes;
                first_len = len;
            } else {
                assert_int_equal(len, first_len);
                assert_memory_equal(bytes, first, len);
                free(bytes);
            }
        }
        ar_array a;
        assert_int_equal(ar_matrix_file_read(path, &a, 0, &err), AR_OK);
        ar_matrix r = ar_array_slice_cm(&a, 0);
        for (size_t e = 0; e < R * C; e++)
            assert_memory_equal(&r.data[e], &cm[e], sizeof(double));
        ar_array_free(&a);
        free(first);
        remove(path);
    }
    assert_true(no_temp_files_left());
}

/* The opaque atomic file: text and bytes land only on commit; abort leaves
 * nothing; a failed open leaves the handle NULL. */
static void test_atomic_file(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "atomic.txt");
    ar_error err = {{0}};
    ar_atomic_file *af = NULL;
    assert_int_equal(ar_atomic_open(&af, path, &err), AR_OK);
    assert_non_null(af);
    assert_non_null(ar_atomic_tmp_path(af));
    assert_int_equal(access(ar_atomic_tmp_path(af), F_OK), 0);
    assert_int_equal(ar_atomic_printf(af, "%d,%.3f\n", 7, 2.385), AR_OK);
    assert_int_equal(ar_atomic_write(af, "end\n", 4, NULL), AR_OK);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(ar_atomic_commit(af, &err), AR_OK);
    size_t len;
    unsigned char *bytes = slurp(path, &len);
    assert_int_equal(len, strlen("7,2.385\nend\n"));
    assert_memory_equal(bytes, "7,2.385\nend\n", len);
    free(bytes);
    remove(path);

    assert_int_equal(ar_atomic_open(&af, path, &err), AR_OK);
    assert_int_equal(ar_atomic_printf(af, "x"), AR_OK);
    ar_atomic_abort(af);
    assert_int_equal(access(path, F_OK), -1);
    assert_true(no_temp_files_left());
    ar_atomic_abort(NULL);

    tmp_path(path, sizeof path, "no/such/dir/atomic.txt");
    af = (ar_atomic_file *)1;
    assert_int_equal(ar_atomic_open(&af, path, &err), AR_EIO);
    assert_null(af);
    assert_int_equal(ar_atomic_open(NULL, path, &err), AR_EINVAL);
    assert_int_equal(ar_atomic_open(&af, "", &err), AR_EINVAL);
    assert_int_equal(ar_atomic_write(NULL, "x", 1, NULL), AR_EINVAL);
    assert_int_equal(ar_atomic_printf(NULL, "x"), AR_EINVAL);
    assert_int_equal(ar_atomic_commit(NULL, &err), AR_EINVAL);
}

/* ar_npy_decode: every stored type in both byte orders, assembled by hand
 * so the host's order never matters, also widened in place as the
 * distributed reader does. */
static void test_npy_decode(void **state)
{
    (void)state;
    /* 2.385 as float64, -0.0917 rounded to float32, 1.5 and -0.25 as float16 */
    const uint64_t f8 = 0x4003147AE147AE14ULL; /* 2.385 */
    float f = -0.0917f;
    uint32_t f4;
    memcpy(&f4, &f, sizeof f4);
    const uint16_t f2[2] = {0x3E00, 0xB400}; /* 1.5, -0.25 */
    double want8;
    memcpy(&want8, &f8, sizeof want8);
    for (int big = 0; big < 2; big++) {
        unsigned char b[8];
        for (size_t i = 0; i < 8; i++)
            b[big ? 7 - i : i] = (unsigned char)(f8 >> (8 * i));
        double d;
        ar_npy_decode(b, 1, 8, big, &d);
        assert_memory_equal(&d, &want8, sizeof d);
        for (size_t i = 0; i < 4; i++)
            b[big ? 3 - i : i] = (unsigned char)(f4 >> (8 * i));
        ar_npy_decode(b, 1, 4, big, &d);
        assert_true(d == (double)f);
        /* in place: 3 float16 values at the top of a 3-double buffer */
        double buf[3];
        unsigned char *raw = (unsigned char *)buf + 3 * (8 - 2);
        const uint16_t h[3] = {f2[0], f2[1], f2[0]};
        for (size_t k = 0; k < 3; k++)
            for (size_t i = 0; i < 2; i++)
                raw[2 * k + (big ? 1 - i : i)] = (unsigned char)(h[k] >> (8 * i));
        ar_npy_decode(raw, 3, 2, big, buf);
        assert_true(buf[0] == 1.5 && buf[1] == -0.25 && buf[2] == 1.5);
    }
}

/* ---- .npy: bad files ---------------------------------------------------- */

static byte_buf good_2x3(void)
{
    npy_spec spec = {1, "<f8", 0, 2, {2, 3}};
    double values[6] = {2.385, -0.0917, 1.5, 3.25, -7.125, 0.3};
    return build_npy(&spec, values);
}

static void test_npy_bad_preamble(void **state)
{
    (void)state;
    byte_buf b = good_2x3();
    byte_buf cut = b;
    cut.len = 0;
    expect_npy_error(&cut, 0, AR_EFORMAT, "empty file");
    cut.len = 4;
    expect_npy_error(&cut, 0, AR_EFORMAT, "truncated header");
    cut.len = 7;
    expect_npy_error(&cut, 0, AR_EFORMAT, "truncated header");
    cut.len = 9;
    expect_npy_error(&cut, 0, AR_EFORMAT, "truncated header");
    cut.len = 30;
    expect_npy_error(&cut, 0, AR_EFORMAT, "runs past the end of the file");

    b.p[5] = 'Z';
    expect_npy_error(&b, 0, AR_EFORMAT, "bad magic");
    b.p[5] = 'Y';
    b.p[6] = 4;
    expect_npy_error(&b, 0, AR_EUNSUPPORTED, "version 4.0");
    b.p[6] = 1;
    b.p[7] = 1;
    expect_npy_error(&b, 0, AR_EUNSUPPORTED, "version 1.1");
    b.p[7] = 0;

    /* Header length lies: past the end, zero, and short of the real dict. */
    b.p[8] = 0x88;
    b.p[9] = 0x13;
    expect_npy_error(&b, 0, AR_EFORMAT, "header length 5000 (at byte 8) runs past the end");
    b.p[8] = 0;
    b.p[9] = 0;
    expect_npy_error(&b, 0, AR_EFORMAT, "empty header at byte 10");
    b.p[8] = 20;
    expect_npy_error(&b, 0, AR_EFORMAT, "malformed header");
    free(b.p);

    /* A v2 header whose 4-byte length claims 4 GiB. */
    byte_buf v2 = build_npy_raw(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                                "\0\0\0\0\0\0\0\0", 8);
    v2.p[11] = 0xff;
    expect_npy_error(&v2, 0, AR_EFORMAT, "runs past the end of the file");
    free(v2.p);
}

static void test_npy_bad_sizes(void **state)
{
    (void)state;
    byte_buf b = good_2x3();
    byte_buf cut = b;
    cut.len -= 3;
    expect_npy_error(&cut, 0, AR_EFORMAT, "truncated data: header declares 48 bytes, file has 45");
    bb_put(&b, "\1\2\3\4\5", 5);
    expect_npy_error(&b, 0, AR_EFORMAT, "5 extra bytes after the data");
    free(b.p);

    const char *huge = "{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000), }";
    byte_buf h = build_npy_raw(1, huge, "12345678", 8);
    expect_npy_error(&h, 1 << 20, AR_ENOMEM, "needs 80000000000 bytes, over the limit of 1048576");
    expect_npy_error(&h, 0, AR_EFORMAT, "truncated data");
    free(h.p);

    expect_dict_error("{'descr': '<f8', 'fortran_order': False, "
                      "'shape': (4294967296, 4294967296, 4294967296), }",
                      AR_EFORMAT, "overflows");
    expect_dict_error("{'descr': '<f8', 'fortran_order': False, "
                      "'shape': (99999999999999999999999, 2), }",
                      AR_EFORMAT, "dimension too large");
    byte_buf e = build_npy_raw(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }",
                               NULL, 0);
    expect_npy_error(&e, 0, AR_EINVAL, "empty matrix (shape (0, 3))");
    free(e.p);
    e = build_npy_raw(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (0,), }", NULL, 0);
    expect_npy_error(&e, 0, AR_EINVAL, "empty matrix (shape (0,))");
    free(e.p);
}

static void test_npy_unsupported_dtypes(void **state)
{
    (void)state;
    expect_dict_error("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
                      AR_EUNSUPPORTED, "unsupported dtype '<i4'");
    expect_dict_error("{'descr': '|O', 'fortran_order': False, 'shape': (2, 3), }",
                      AR_EUNSUPPORTED, "unsupported dtype '|O'");
    expect_dict_error("{'descr': '<c16', 'fortran_order': False, 'shape': (2, 3), }",
                      AR_EUNSUPPORTED, "'<c16'");
    expect_dict_error("{'descr': '<f16', 'fortran_order': False, 'shape': (2, 3), }",
                      AR_EUNSUPPORTED, "'<f16'");
    expect_dict_error("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }",
                      AR_EUNSUPPORTED, "structured dtype");
    expect_dict_error("{'descr': '<f8', 'fortran_order': False, "
                      "'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 6), }",
                      AR_EUNSUPPORTED, "more than 16 dimensions");
}

/* float16 (what model.half() exports): every binary16 value is exact in
 * double, so decoding is checked bit for bit, including the largest finite
 * value, a subnormal and negative zero, in both byte orders. */
static void test_npy_float16(void **state)
{
    (void)state;
    const uint16_t bits[6] = {0x3C00, 0xC100, 0x7BFF, 0x0001, 0x2E66, 0x8000};
    const double want[6] = {1.0, -2.5, 65504.0, 5.9604644775390625e-8, 0.0999755859375, -0.0};
    for (int big = 0; big <= 1; big++) {
        unsigned char data[12];
        for (int i = 0; i < 6; i++) {
            data[2 * i + big] = (unsigned char)(bits[i] & 0xFF);
            data[2 * i + 1 - big] = (unsigned char)(bits[i] >> 8);
        }
        byte_buf b = build_npy_raw(1, big ? "{'descr': '>f2', 'fortran_order': False, 'shape': (2, 3), }"
                                          : "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }",
                                   data, sizeof data);
        ar_array a;
        ar_error err = {{0}};
        assert_int_equal(ar_npy_parse(b.p, b.len, &a, 0, &err), AR_OK);
        assert_int_equal(a.precision, AR_PREC_F16);
        assert_int_equal(a.rows, 2);
        assert_int_equal(a.cols, 3);
        for (int i = 0; i < 6; i++) {
            double v = a.data[(i % 3) * 2 + i / 3]; /* C order in, column-major out */
            assert_true(v == want[i] && signbit(v) == signbit(want[i]));
        }
        ar_array_free(&a);
        free(b.p);
    }
    /* a truncated float16 payload is still named by its byte count */
    unsigned char short_data[5] = {0};
    byte_buf b = build_npy_raw(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }",
                               short_data, sizeof short_data);
    ar_array a;
    ar_error err = {{0}};
    assert_int_not_equal(ar_npy_parse(b.p, b.len, &a, 0, &err), AR_OK);
    assert_non_null(strstr(err.msg, "12 bytes"));
    free(b.p);
}

static void test_npy_malformed_dict(void **state)
{
    (void)state;
    static const struct {
        const char *dict;
        const char *frag;
    } cases[] = {
        {"['descr', '<f8']", "expected '{'"},
        {"{'descr' '<f8', 'fortran_order': False, 'shape': (2, 3), }", "expected ':' after key"},
        {"{'descr': '<f8', 'fortran_order': False, }", "no 'shape' key"},
        {"{'descr': '<f8', 'shape': (2, 3), }", "no 'fortran_order' key"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", "unexpected key"},
        {"{'descr': '<f8', 'descr': '<f8', 'shape': (2, 3), }", "duplicate key"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (6), }", "is not a tuple"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (-6,), }", "negative dimension"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': [2, 3], }", "shape must be a tuple"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2 3), }", "expected ',' or ')'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,, 3), }", "expected a dimension"},
        {"{'descr': '<f8', 'fortran_order': yes, 'shape': (2, 3), }", "True or False"},
        {"{'descr': '<f8', 'fortran_order': False 'shape': (2, 3), }", "expected ',' or '}'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), } x", "after the dictionary"},
        {"{'descr': '<f8", "unterminated string"},
        {"{descr: '<f8', 'fortran_order': False, 'shape': (2, 3), }", "expected a quoted string"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), ", "expected a quoted string"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3", "expected ',' or ')'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_dict_error(cases[i].dict, AR_EFORMAT, cases[i].frag);
}

static void test_npy_file_errors(void **state)
{
    (void)state;
    char path[128];
    ar_array a;
    ar_error err = {{0}};
    tmp_path(path, sizeof path, "missing.npy");
    assert_int_equal(ar_npy_read(path, &a, 0, &err), AR_EIO);
    assert_true(strncmp(err.msg, path, strlen(path)) == 0);
    assert_int_equal(ar_matrix_file_read(path, &a, 0, &err), AR_EIO);
    assert_int_equal(ar_npy_read(g_dir, &a, 0, &err), AR_EIO);
    assert_non_null(strstr(err.msg, "directory"));

    /* Errors from a file name the file. */
    tmp_path(path, sizeof path, "truncated.npy");
    byte_buf b = good_2x3();
    write_bytes(path, b.p, b.len - 8);
    assert_int_equal(ar_npy_read(path, &a, 0, &err), AR_EFORMAT);
    assert_true(strncmp(err.msg, path, strlen(path)) == 0);
    assert_non_null(strstr(err.msg, "truncated data: header declares 48 bytes, file has 40"));
    assert_null(a.data);
    remove(path);
    free(b.p);

    assert_int_equal(ar_npy_read(NULL, &a, 0, &err), AR_EINVAL);
    assert_int_equal(ar_npy_parse(NULL, 5, &a, 0, &err), AR_EINVAL);
    assert_int_equal(ar_npy_parse((const unsigned char *)"x", 1, NULL, 0, NULL), AR_EINVAL);
}

/* A FIFO has no size up front, so truncation and extra data are found while
 * streaming rather than by fstat. */
static int read_via_fifo(const byte_buf *b, size_t len, ar_array *a, ar_error *err)
{
    char path[128];
    tmp_path(path, sizeof path, "fifo.npy");
    assert_int_equal(mkfifo(path, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *fp = fopen(path, "wb");
        if (fp != NULL) {
            fwrite(b->p, 1, len, fp);
            fclose(fp);
        }
        _exit(0);
    }
    int rc = ar_npy_read(path, a, 0, err);
    int wstatus;
    waitpid(pid, &wstatus, 0);
    remove(path);
    return rc;
}

static void test_npy_fifo(void **state)
{
    (void)state;
    byte_buf b = good_2x3();
    ar_array a;
    ar_error err = {{0}};
    assert_int_equal(read_via_fifo(&b, b.len, &a, &err), AR_OK);
    assert_true(a.data[0] == 2.385 && a.data[5] == 0.3);
    ar_array_free(&a);
    assert_int_equal(read_via_fifo(&b, b.len - 1, &a, &err), AR_EFORMAT);
    assert_non_null(strstr(err.msg, "truncated data: header declares 48 bytes, file has 47"));
    assert_null(a.data);
    bb_put(&b, "xyz", 3);
    assert_int_equal(read_via_fifo(&b, b.len, &a, &err), AR_EFORMAT);
    assert_non_null(strstr(err.msg, "3 extra bytes"));
    assert_null(a.data);
    free(b.p);
}

/* ---- CSV ---------------------------------------------------------------- */

static void check_csv(const char *text, size_t rows, size_t cols, const double *row_major)
{
    ar_array a;
    ar_error err = {{0}};
    int rc = ar_csv_parse(text, strlen(text), "in.csv", &a, &err);
    if (rc != AR_OK)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, AR_OK);
    assert_int_equal(a.ndim, 2);
    assert_int_equal(a.count, 1);
    assert_int_equal(a.rows, rows);
    assert_int_equal(a.cols, cols);
    assert_int_equal(a.shape[0], rows);
    assert_int_equal(a.shape[1], cols);
    assert_int_equal(a.precision, AR_PREC_F64);
    ar_matrix m = ar_array_slice_cm(&a, 0);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            assert_true(AR_AT(&m, i, j) == row_major[i * cols + j]);
    ar_array_free(&a);
}

static void test_csv_parse_layouts(void **state)
{
    (void)state;
    const double v23[6] = {2.385, -0.0917, 3.5, -1e-3, 4, 5};
    check_csv("2.385,-0.0917,3.5\n-1e-3,4,5\n", 2, 3, v23);
    check_csv("2.385 , -0.0917,\t3.5 \n -1e-3,4 ,5", 2, 3, v23);
    check_csv("  2.385 -0.0917\t3.5\n-1e-3   4 5   \n", 2, 3, v23);
    check_csv("a,b,c\n2.385,-0.0917,3.5\n-1e-3,4,5\n", 2, 3, v23);
    check_csv("x y  z\n2.385 -0.0917 3.5\n-1e-3 4 5\n", 2, 3, v23);
    check_csv("\"a\",\"b\",\"c\"\r\n2.385,-0.0917,3.5\r\n-1e-3,4,5\r\n", 2, 3, v23);
    check_csv("# written by a test\n\n2.385,-0.0917,3.5 # trailing\n  # indented\n"
              "\r\n-1e-3,4,5\n\n",
              2, 3, v23);
    check_csv("# comment first\nc1,c2,c3\n2.385,-0.0917,3.5\n-1e-3,4,5", 2, 3, v23);
    const double col[3] = {2.385, -0.0917, 7};
    check_csv("value\n2.385\n-0.0917\n7\n", 3, 1, col);
    check_csv("2.385\n-0.0917\n7", 3, 1, col);

    ar_array a;
    assert_int_equal(ar_csv_parse("nan,inf,-inf,1\n", 15, "in.csv", &a, NULL), AR_OK);
    assert_true(isnan(a.data[0]) && isinf(a.data[1]) && a.data[2] < 0 && a.data[3] == 1.0);
    ar_array_free(&a);
    /* A finite literal that overflows is refused with its text. */
    ar_error ovf = {{0}};
    assert_int_equal(ar_csv_parse("1,1e999\n", 8, "in.csv", &a, &ovf), AR_EFORMAT);
    assert_non_null(strstr(ovf.msg, "'1e999'"));
    /* Only len bytes are read: the rest of the string is not part of the text. */
    assert_int_equal(ar_csv_parse("1.25,2\n3,4x", 6, NULL, &a, NULL), AR_OK);
    assert_int_equal(a.cols, 2);
    assert_true(a.data[0] == 1.25 && a.data[1] == 2);
    ar_array_free(&a);
}

static void test_csv_errors(void **state)
{
    (void)state;
    expect_csv_error("2.385,-0.0917,3\n4,5\n", 20, AR_EFORMAT,
                     "line 2: expected 3 fields (as on line 1), found 2");
    expect_csv_error("# c\n1 2\n\n3 4 5\n", 15, AR_EFORMAT,
                     "line 4: expected 2 fields (as on line 2), found 3");
    expect_csv_error("1,2\n3,abc\n", 10, AR_EFORMAT, "line 2, field 2: 'abc'");
    expect_csv_error("1.2.3,4\n5,6\n", 12, AR_EFORMAT, "line 1, field 1: '1.2.3'");
    expect_csv_error("1,2,\n", 5, AR_EFORMAT, "line 1, field 3: ''");
    expect_csv_error("1 2,3\n", 6, AR_EFORMAT, "line 1, field 1: '1 2'");
    expect_csv_error("a,b\n1,2\nc,d\n", 12, AR_EFORMAT, "line 3, field 1: 'c'");
    expect_csv_error("1,\0,2\n", 6, AR_EFORMAT, "line 1, field 2: '?'");
    expect_csv_error("", 0, AR_EINVAL, "no data rows");
    expect_csv_error("a,b\n", 4, AR_EINVAL, "no data rows (only a header)");
    expect_csv_error("# only\n\n  \r\n", 12, AR_EINVAL, "no data rows");

    char long_field[700];
    memset(long_field, '1', sizeof long_field);
    expect_csv_error(long_field, sizeof long_field, AR_EFORMAT, "line 1, field 1: '1111");

    ar_array a;
    assert_int_equal(ar_csv_parse(NULL, 3, "x", &a, NULL), AR_EINVAL);
    assert_int_equal(ar_csv_parse("1", 1, "x", NULL, NULL), AR_EINVAL);
}

static void test_csv_files(void **state)
{
    (void)state;
    char path[128];
    ar_array a;
    ar_error err = {{0}};
    tmp_path(path, sizeof path, "missing.csv");
    assert_int_equal(ar_csv_read(path, &a, &err), AR_EIO);
    assert_true(strncmp(err.msg, path, strlen(path)) == 0);
    assert_int_equal(ar_matrix_file_read(path, &a, 0, &err), AR_EIO);
    assert_int_equal(ar_csv_read(g_dir, &a, &err), AR_EIO);

    tmp_path(path, sizeof path, "bad.txt");
    write_bytes(path, "1,2\n3,x\n", 8);
    assert_int_equal(ar_matrix_file_read(path, &a, 0, &err), AR_EFORMAT);
    assert_true(strncmp(err.msg, path, strlen(path)) == 0);
    assert_non_null(strstr(err.msg, "line 2, field 2: 'x'"));

    write_bytes(path, "2.385,-0.0917\n1,2\n", 18);
    assert_int_equal(ar_matrix_file_read(path, &a, 0, &err), AR_OK);
    assert_int_equal(a.rows, 2);
    assert_true(a.data[2] == -0.0917);
    ar_array_free(&a);
    assert_int_equal(ar_csv_read_ex(path, &a, 10, &err), AR_ENOMEM);
    assert_non_null(strstr(err.msg, "limit of 10 bytes"));
    assert_int_equal(ar_csv_read_ex(path, &a, 20, &err), AR_ENOMEM);
    assert_non_null(strstr(err.msg, "needs 32 bytes"));

    write_bytes(path, "", 0);
    assert_int_equal(ar_csv_read(path, &a, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "no data rows"));
    remove(path);
}

static void test_csv_write_round_trip(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "written.csv");
    double buf[4 * 3] = {2.385, -0.0917, 0.1, 0,
                         -0.0, 1e-300, 2.385 / 3, 0,
                         -7.125e200, 4.9406564584124654e-324, 123456789.123456789, 0};
    ar_matrix m = ar_matrix_alias(buf, 3, 3, 4);
    ar_error err = {{0}};
    assert_int_equal(ar_csv_write_matrix(path, ar_matrix_cview(&m), &err), AR_OK);
    assert_true(no_temp_files_left());
    ar_array a;
    assert_int_equal(ar_matrix_file_read(path, &a, 0, &err), AR_OK);
    assert_int_equal(a.rows, 3);
    assert_int_equal(a.cols, 3);
    ar_matrix r = ar_array_slice_cm(&a, 0);
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++)
            assert_memory_equal(&AR_AT(&r, i, j), &AR_AT(&m, i, j), sizeof(double));
    ar_array_free(&a);
    remove(path);
}

/* ---- group -------------------------------------------------------------- */

static int group_setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/attnrank_test_io_XXXXXX");
    return mkdtemp(g_dir) != NULL ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    DIR *d = opendir(g_dir);
    if (d == NULL)
        return -1;
    char path[512];
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", g_dir, e->d_name);
        remove(path);
    }
    closedir(d);
    return rmdir(g_dir);
}

/* A 0-d or 1-d array is stored as 1 x 1 or 1 x len, but it is not a matrix:
 * ar_array_require_matrix names the file and the shape.  CSV is always 2-D. */
static void test_require_matrix(void **state)
{
    (void)state;
    double data[6] = {0.5, 0.25, 0.25, 1.0, 2.0, 3.0};
    struct {
        const char *dict, *frag;
        size_t len;
    } cases[] = {
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
         "p.npy: shape () is a scalar (0 dimensions); a matrix needs 2 dimensions", 8},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
         "p.npy: shape (3,) has 1 dimension; a matrix needs 2 dimensions (save a single row as "
         "shape (1, 3))",
         24},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", NULL, 48},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3), }", NULL, 48},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 3), }", NULL, 24},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        byte_buf b = build_npy_raw(1, cases[k].dict, data, cases[k].len);
        ar_array a;
        ar_error err = {{0}};
        assert_int_equal(ar_npy_parse(b.p, b.len, &a, 0, &err), AR_OK);
        int rc = ar_array_require_matrix(&a, "p.npy", &err);
        if (cases[k].frag == NULL) {
            assert_int_equal(rc, AR_OK);
        } else {
            assert_int_equal(rc, AR_ESIZE);
            assert_string_equal(err.msg, cases[k].frag);
            assert_true(a.rows == 1); /* what the reader stores */
        }
        ar_array_free(&a);
        free(b.p);
    }
    /* one CSV row is a 1 x n matrix */
    ar_array a;
    ar_error err = {{0}};
    assert_int_equal(ar_csv_parse("3,4\n", 4, "row.csv", &a, &err), AR_OK);
    assert_int_equal(ar_array_require_matrix(&a, "row.csv", &err), AR_OK);
    assert_true(a.ndim == 2 && a.rows == 1 && a.cols == 2);
    ar_array_free(&a);
    assert_int_equal(ar_array_require_matrix(NULL, "x", &err), AR_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_npy_all_variants),
        cmocka_unit_test(test_npy_large_chunks),
        cmocka_unit_test(test_npy_stack_slices),
        cmocka_unit_test(test_npy_header_spellings),
        cmocka_unit_test(test_npy_write_round_trip),
        cmocka_unit_test(test_npy_write_errors),
        cmocka_unit_test(test_npy_bad_preamble),
        cmocka_unit_test(test_npy_bad_sizes),
        cmocka_unit_test(test_npy_unsupported_dtypes),
        cmocka_unit_test(test_npy_float16),
        cmocka_unit_test(test_require_matrix),
        cmocka_unit_test(test_npy_malformed_dict),
        cmocka_unit_test(test_npy_file_errors),
        cmocka_unit_test(test_npy_fifo),
        cmocka_unit_test(test_csv_parse_layouts),
        cmocka_unit_test(test_csv_errors),
        cmocka_unit_test(test_csv_files),
        cmocka_unit_test(test_csv_write_round_trip),
        cmocka_unit_test(test_write_views),
        cmocka_unit_test(test_atomic_file),
        cmocka_unit_test(test_npy_decode),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
