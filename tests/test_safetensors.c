/* Tests for the safetensors reader: exact F16/BF16 conversion (every bit
 * pattern), each dtype, block reads (offsets, transposes), non-finite
 * weights, every malformation with its status and message, and opening
 * files, directories and sharded indexes.  Images are built in memory by
 * st_testutil.h. */
#include "st_testutil.h"

#include "attnrank/safetensors.h"
#include "core/matrix_internal.h"
#include "strided_testutil.h"

/* ---- helpers ------------------------------------------------------------ */

/* Parse an image and expect failure with status and a message fragment; the
 * message must also name the file. */
static void expect_parse_error(const st_builder *b, const unsigned char *raw, size_t raw_len,
                               int status, const char *fragment)
{
    size_t len = raw_len;
    unsigned char *img = raw ? NULL : stb_image(b, &len);
    const unsigned char *buf = raw ? raw : img;
    ar_safetensors *st = (ar_safetensors *)0x1;
    ar_error err = {{0}};
    int rc = ar_safetensors_parse(&st, buf, len, "bad.safetensors", &err);
    if (rc != status || strstr(err.msg, fragment) == NULL || strstr(err.msg, "bad.safetensors") == NULL)
        fail_msg("status %d (want %d), message '%s' (want '%s')", rc, status, err.msg, fragment);
    assert_null(st);
    free(img);
}

static ar_safetensors *parse_ok(const st_builder *b, unsigned char **img)
{
    size_t len = 0;
    *img = stb_image(b, &len);
    ar_safetensors *st = NULL;
    ar_error err = {{0}};
    int rc = ar_safetensors_parse(&st, *img, len, "good.safetensors", &err);
    if (rc != AR_OK)
        fail_msg("parse failed: %s", err.msg);
    return st;
}

/* ---- conversions --------------------------------------------------------- */

/* Reference by the textbook formula (independent of the bit rebuilding). */
static double half_reference(uint16_t b)
{
    int sign = b >> 15, exp = (b >> 10) & 31, frac = b & 1023;
    double v = exp == 0 ? ldexp((double)frac, -24) : ldexp(1.0 + frac / 1024.0, exp - 15);
    return sign ? -v : v;
}

static double bf16_reference(uint16_t b)
{
    int sign = b >> 15, exp = (b >> 7) & 255, frac = b & 127;
    double v = exp == 0 ? ldexp((double)frac, -133) : ldexp(1.0 + frac / 128.0, exp - 127);
    return sign ? -v : v;
}

static void test_half_every_pattern(void **state)
{
    (void)state;
    for (uint32_t b = 0; b < 65536; b++) {
        double x = ar_half_to_double((uint16_t)b);
        int exp = (b >> 10) & 31, frac = b & 1023;
        if (exp == 31) {
            if (frac == 0)
                assert_true(isinf(x) && (signbit(x) != 0) == ((b >> 15) != 0));
            else
                assert_true(isnan(x));
            continue;
        }
        double r = half_reference((uint16_t)b);
        if (x != r || (signbit(x) != 0) != ((b >> 15) != 0))
            fail_msg("half 0x%04x: %.17g, want %.17g", b, x, r);
        /* round trip through the test's encoder */
        assert_int_equal(tu_double_to_half(x), b);
    }
    assert_true(ar_half_to_double(0x0001) == 0x1p-24);  /* smallest subnormal */
    assert_true(ar_half_to_double(0x03ff) == 1023 * 0x1p-24); /* largest subnormal */
    assert_true(ar_half_to_double(0x0400) == 0x1p-14);  /* smallest normal */
    assert_true(ar_half_to_double(0x7bff) == 65504.0);
    assert_true(ar_half_to_double(0x3c00) == 1.0);
    assert_true(ar_half_to_double(0xc000) == -2.0);
    assert_true(ar_half_to_double(0x3555) == 0x1.554p-2); /* 0.333251953125 */
}

static void test_bf16_every_pattern(void **state)
{
    (void)state;
    for (uint32_t b = 0; b < 65536; b++) {
        double x = ar_bfloat16_to_double((uint16_t)b);
        int exp = (b >> 7) & 255, frac = b & 127;
        if (exp == 255) {
            assert_true(frac == 0 ? isinf(x) : isnan(x));
            continue;
        }
        double r = bf16_reference((uint16_t)b);
        if (x != r || (signbit(x) != 0) != ((b >> 15) != 0))
            fail_msg("bf16 0x%04x: %.17g, want %.17g", b, x, r);
    }
    assert_true(ar_bfloat16_to_double(0x0001) == 0x1p-133);
    assert_true(ar_bfloat16_to_double(0x3f80) == 1.0);
    assert_true(ar_bfloat16_to_double(0x7f7f) == 0x1.fep127);
}

static void test_dtype_table(void **state)
{
    (void)state;
    const char *names[] = {"F64", "F32", "F16", "BF16", "BOOL", "U8", "I8", "F8_E4M3",
                           "F8_E5M2", "I16", "U16", "I32", "U32", "I64", "U64"};
    const size_t sizes[] = {8, 4, 2, 2, 1, 1, 1, 1, 1, 2, 2, 4, 4, 8, 8};
    for (int i = 0; i < AR_ST_NDTYPES; i++) {
        ar_st_dtype d;
        assert_ok(ar_st_dtype_parse(names[i], &d, NULL));
        assert_int_equal(d, i);
        assert_string_equal(ar_st_dtype_name(d), names[i]);
        assert_int_equal(ar_st_dtype_size(d), sizes[i]);
        assert_int_equal(ar_st_dtype_is_float(d), i <= AR_ST_BF16);
    }
    ar_st_dtype d;
    assert_int_equal(ar_st_dtype_parse("f32", &d, NULL), AR_EUNSUPPORTED);
    assert_int_equal(ar_st_dtype_parse("F12", &d, NULL), AR_EUNSUPPORTED);
    assert_int_equal(ar_st_dtype_precision(AR_ST_F16), AR_PREC_F16);
    assert_int_equal(ar_st_dtype_precision(AR_ST_BF16), AR_PREC_BF16);
    assert_int_equal(ar_st_dtype_precision(AR_ST_F32), AR_PREC_F32);
    assert_int_equal(ar_st_dtype_precision(AR_ST_F64), AR_PREC_F64);
}

/* ---- reading each dtype ---------------------------------------------------- */

/* One tensor per dtype holding the same exactly representable values, plus
 * subnormals of each format. */
static void test_each_dtype(void **state)
{
    (void)state;
    ar_matrix m = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&m, 2, 3, NULL));
    const double vals[6] = {2.375, -0.5, 1.25, 0.0, -3.0, 96.0};
    for (size_t i = 0; i < 6; i++)
        AR_AT(&m, i / 3, i % 3) = vals[i];
    st_builder b;
    stb_init(&b);
    const char *dtypes[4] = {"F64", "F32", "F16", "BF16"};
    for (int k = 0; k < 4; k++)
        stb_add_matrix(&b, dtypes[k], dtypes[k], &m, 0);
    /* subnormals: F32 2^-149, F16 2^-24 and 1023 * 2^-24, BF16 2^-133 */
    const unsigned char f32sub[4] = {1, 0, 0, 0};
    const unsigned char f16sub[4] = {1, 0, 0xff, 0x03};
    const unsigned char bfsub[2] = {1, 0};
    size_t one = 1, two = 2;
    stb_add_raw(&b, "f32sub", "F32", &one, 1, f32sub, 4);
    stb_add_raw(&b, "f16sub", "F16", &two, 1, f16sub, 4);
    stb_add_raw(&b, "bfsub", "BF16", &one, 1, bfsub, 2);
    unsigned char *img;
    ar_safetensors *st = parse_ok(&b, &img);
    assert_int_equal(ar_safetensors_count(st), 7);
    for (int k = 0; k < 4; k++) {
        const ar_st_tensor *t = ar_safetensors_find(st, dtypes[k]);
        assert_non_null(t);
        assert_int_equal(t->ndim, 2);
        assert_int_equal(t->shape[0], 2);
        assert_int_equal(t->shape[1], 3);
        ar_matrix out = ar_matrix_empty();
        ar_error err = {{0}};
        assert_ok(ar_safetensors_read(st, t, &out, &err));
        for (size_t i = 0; i < 6; i++)
            assert_true(AR_AT(&out, i / 3, i % 3) == vals[i]);
        ar_matrix_free(&out);
    }
    ar_matrix out = ar_matrix_empty();
    assert_ok(ar_safetensors_read(st, ar_safetensors_find(st, "f32sub"), &out, NULL));
    assert_true(AR_AT(&out, 0, 0) == 0x1p-149);
    ar_matrix_free(&out);
    assert_ok(ar_safetensors_read(st, ar_safetensors_find(st, "f16sub"), &out, NULL));
    assert_int_equal(out.rows, 1);
    assert_int_equal(out.cols, 2);
    assert_true(AR_AT(&out, 0, 0) == 0x1p-24 && AR_AT(&out, 0, 1) == 1023 * 0x1p-24);
    ar_matrix_free(&out);
    assert_ok(ar_safetensors_read(st, ar_safetensors_find(st, "bfsub"), &out, NULL));
    assert_true(AR_AT(&out, 0, 0) == 0x1p-133);
    ar_matrix_free(&out);
    ar_safetensors_close(st);
    free(img);
    stb_free(&b);
    ar_matrix_free(&m);
}

static void test_blocks_and_transpose(void **state)
{
    (void)state;
    ar_matrix m = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&m, 3, 5, NULL));
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 5; j++)
            AR_AT(&m, i, j) = 10.0 * (double)i + (double)j + 0.125;
    st_builder b;
    stb_init(&b);
    stb_add_matrix(&b, "w", "F64", &m, 0);
    unsigned char *img;
    ar_safetensors *st = parse_ok(&b, &img);
    const ar_st_tensor *t = ar_safetensors_find(st, "w");
    ar_matrix blk = ar_matrix_empty(), blkt = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&blk, 2, 3, NULL));
    assert_ok(ar_matrix_alloc(&blkt, 3, 2, NULL));
    ar_error err = {{0}};
    assert_ok(ar_safetensors_read_block(st, t, 1, 2, AR_NO_TRANS, ar_matrix_view(&blk), &err));
    assert_ok(ar_safetensors_read_block(st, t, 1, 2, AR_TRANS, ar_matrix_view(&blkt), &err));
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 3; j++) {
            assert_true(AR_AT(&blk, i, j) == AR_AT(&m, 1 + i, 2 + j));
            assert_true(AR_AT(&blkt, j, i) == AR_AT(&m, 1 + i, 2 + j));
        }
    /* a block that does not fit, from both ends */
    assert_int_equal(ar_safetensors_read_block(st, t, 2, 0, AR_NO_TRANS, ar_matrix_view(&blk), &err),
                     AR_ESIZE);
    assert_non_null(strstr(err.msg, "outside its 3 x 5 shape"));
    assert_int_equal(ar_safetensors_read_block(st, t, 0, 3, AR_NO_TRANS, ar_matrix_view(&blk), &err),
                     AR_ESIZE);
    assert_int_equal(ar_safetensors_read_block(st, t, 0, 3, AR_TRANS, ar_matrix_view(&blkt), &err),
                     AR_ESIZE);
    ar_matrix empty = ar_matrix_empty();
    assert_int_equal(ar_safetensors_read_block(st, t, 0, 0, AR_NO_TRANS, ar_matrix_view(&empty), &err),
                     AR_EINVAL);
    assert_int_equal(ar_safetensors_read_block(NULL, t, 0, 0, AR_NO_TRANS, ar_matrix_view(&blk), &err),
                     AR_EINVAL);
    /* row-major and padded outputs receive the same values; invalid views and
     * transpose flags are refused */
    for (int lay = 0; lay < 2; lay++) {
        ar_view v, vt;
        double *vb = tu_strided_out(2, 3, (ar_layout)lay, 2, &v);
        double *vtb = tu_strided_out(3, 2, (ar_layout)(1 - lay), 1, &vt);
        assert_non_null(vb);
        assert_non_null(vtb);
        assert_ok(ar_safetensors_read_block(st, t, 1, 2, AR_NO_TRANS, v, &err));
        assert_ok(ar_safetensors_read_block(st, t, 1, 2, AR_TRANS, vt, &err));
        assert_true(ar_matrix_max_abs_diff(ar_view_const(v), ar_matrix_cview(&blk)) == 0.0);
        assert_true(ar_matrix_max_abs_diff(ar_view_const(vt), ar_matrix_cview(&blkt)) == 0.0);
        free(vb);
        free(vtb);
    }
    assert_int_equal(ar_safetensors_read_block(st, t, 1, 2, AR_NO_TRANS, tu_bad_view(&blk), &err),
                     AR_EINVAL);
    assert_int_equal(ar_safetensors_read_block(st, t, 1, 2, (ar_trans)2, ar_matrix_view(&blk),
                                               &err),
                     AR_EINVAL);
    ar_matrix_free(&blk);
    ar_matrix_free(&blkt);
    ar_safetensors_close(st);
    free(img);
    stb_free(&b);
    ar_matrix_free(&m);
}

static void test_nonfinite_weights(void **state)
{
    (void)state;
    struct {
        const char *dtype;
        unsigned char bytes[8];
        size_t es;
        const char *what;
    } cases[] = {
        {"F32", {0, 0, 0x80, 0x7f}, 4, "inf"}, /* +inf */
        {"F32", {0, 0, 0xc0, 0xff}, 4, "nan"}, /* -nan */
        {"F16", {0x00, 0xfc}, 2, "-inf"},
        {"F16", {0x01, 0x7c}, 2, "nan"},
        {"BF16", {0xc0, 0x7f}, 2, "nan"},
        {"F64", {0, 0, 0, 0, 0, 0, 0xf0, 0xff}, 8, "-inf"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        unsigned char data[6 * 8] = {0};
        size_t es = cases[c].es;
        /* element [1, 2] of a 2 x 3 tensor */
        memcpy(data + 5 * es, cases[c].bytes, es);
        st_builder b;
        stb_init(&b);
        size_t shape[2] = {2, 3};
        stb_add_raw(&b, "layer.0.q", cases[c].dtype, shape, 2, data, 6 * es);
        unsigned char *img;
        ar_safetensors *st = parse_ok(&b, &img);
        ar_matrix out = ar_matrix_empty();
        ar_error err = {{0}};
        assert_int_equal(ar_safetensors_read(st, ar_safetensors_find(st, "layer.0.q"), &out, &err),
                         AR_ENONFINITE);
        assert_null(out.data);
        char want[128];
        snprintf(want, sizeof want, "tensor 'layer.0.q': non-finite weight %s at [1, 2]",
                 cases[c].what);
        if (strstr(err.msg, want) == NULL || strstr(err.msg, "good.safetensors") == NULL)
            fail_msg("case %zu: '%s' lacks '%s'", c, err.msg, want);
        /* the transposed read names the same element */
        ar_matrix tb = ar_matrix_empty();
        assert_ok(ar_matrix_alloc(&tb, 3, 2, NULL));
        assert_int_equal(ar_safetensors_read_block(st, ar_safetensors_find(st, "layer.0.q"), 0, 0,
                                                   AR_TRANS, ar_matrix_view(&tb), &err),
                         AR_ENONFINITE);
        assert_non_null(strstr(err.msg, "at [1, 2]"));
        ar_matrix_free(&tb);
        ar_safetensors_close(st);
        free(img);
        stb_free(&b);
    }
}

/* Integer tensors (BERT's position_ids) parse; reading them is refused. */
static void test_non_float_dtype(void **state)
{
    (void)state;
    st_builder b;
    stb_init(&b);
    int64_t ids[4] = {0, 1, 2, 3};
    size_t shape[2] = {1, 4};
    stb_add_raw(&b, "embeddings.position_ids", "I64", shape, 2, ids, sizeof ids);
    json_object_set_new(b.header, "__metadata__", json_pack("{s:s}", "format", "pt"));
    unsigned char *img;
    ar_safetensors *st = parse_ok(&b, &img);
    assert_int_equal(ar_safetensors_count(st), 1); /* metadata is not a tensor */
    const ar_st_tensor *t = ar_safetensors_tensor(st, 0);
    assert_int_equal(t->dtype, AR_ST_I64);
    ar_matrix out = ar_matrix_empty();
    ar_error err = {{0}};
    assert_int_equal(ar_safetensors_read(st, t, &out, &err), AR_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "dtype I64 is not a floating-point weight type"));
    ar_safetensors_close(st);
    free(img);
    stb_free(&b);
}

/* Shapes: 0-d, empty, 3-d tensors; name order; lookups. */
static void test_shapes_and_lookup(void **state)
{
    (void)state;
    st_builder b;
    stb_init(&b);
    double x = 2.385;
    stb_add_raw(&b, "scalar", "F64", NULL, 0, &x, 8);
    size_t empty[2] = {0, 3};
    stb_add_raw(&b, "empty", "F32", empty, 2, NULL, 0);
    stb_add_raw(&b, "empty2", "F32", empty, 2, NULL, 0); /* same offset: no overlap */
    float cube[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    size_t c3[3] = {2, 2, 2};
    stb_add_raw(&b, "cube", "F32", c3, 3, cube, sizeof cube);
    unsigned char *img;
    ar_safetensors *st = parse_ok(&b, &img);
    assert_int_equal(ar_safetensors_count(st), 4);
    assert_string_equal(ar_safetensors_tensor(st, 0)->name, "cube"); /* sorted */
    assert_string_equal(ar_safetensors_tensor(st, 3)->name, "scalar");
    assert_null(ar_safetensors_tensor(st, 4));
    assert_null(ar_safetensors_find(st, "nope"));
    assert_int_equal(ar_safetensors_nfiles(st), 1);
    assert_string_equal(ar_safetensors_file_path(st, 0), "good.safetensors");
    const ar_st_tensor *s = ar_safetensors_find(st, "scalar");
    assert_int_equal(s->count, 1);
    ar_matrix out = ar_matrix_empty();
    ar_error err = {{0}};
    assert_ok(ar_safetensors_read(st, s, &out, &err));
    assert_true(AR_AT(&out, 0, 0) == 2.385);
    ar_matrix_free(&out);
    assert_int_equal(ar_safetensors_find(st, "empty")->count, 0);
    assert_int_equal(ar_safetensors_read(st, ar_safetensors_find(st, "empty"), &out, &err),
                     AR_EINVAL);
    assert_int_equal(ar_safetensors_read(st, ar_safetensors_find(st, "cube"), &out, &err),
                     AR_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "3 dimensions"));
    ar_safetensors_close(st);
    free(img);
    stb_free(&b);
}

/* ---- malformed images ------------------------------------------------------ */

static void test_malformed_framing(void **state)
{
    (void)state;
    const unsigned char short_file[5] = {8, 0, 0, 0, 0};
    expect_parse_error(NULL, short_file, 5, AR_EFORMAT, "5 bytes, too short");
    expect_parse_error(NULL, short_file, 0, AR_EFORMAT, "0 bytes, too short");
    /* header length 1000 in a 12-byte file */
    unsigned char past[12] = {0xe8, 0x03, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' '};
    expect_parse_error(NULL, past, sizeof past, AR_EFORMAT,
                       "header length 1000 (bytes 0-7) runs past the end of the file (12 bytes)");
    /* a huge length must not wrap around */
    unsigned char huge[12] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, '{', '}', ' ', ' '};
    expect_parse_error(NULL, huge, sizeof huge, AR_EFORMAT, "runs past the end of the file");
    unsigned char zero[8] = {0};
    expect_parse_error(NULL, zero, sizeof zero, AR_EFORMAT, "invalid JSON header");
    const char *bad_json[] = {"{\"w\": {\"dtype\": \"F32\",", "[1, 2]", "{\"a\":1} x",
                              "{\"w\":{},\"w\":{}}"};
    const char *frag[] = {"invalid JSON header", "JSON header is not an object",
                          "invalid JSON header", "duplicate"};
    for (size_t i = 0; i < 4; i++) {
        size_t h = strlen(bad_json[i]);
        unsigned char buf[64] = {0};
        buf[0] = (unsigned char)h;
        memcpy(buf + 8, bad_json[i], h);
        expect_parse_error(NULL, buf, 8 + h, AR_EFORMAT, frag[i]);
    }
}

static void test_malformed_entries(void **state)
{
    (void)state;
    float six[6] = {1, 2, 3, 4, 5, 6};
    size_t s23[2] = {2, 3}, s22[2] = {2, 2}, s9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    st_builder b;
#define CASE(setup, status, fragment)                   \
    do {                                                \
        stb_init(&b);                                   \
        setup;                                          \
        expect_parse_error(&b, NULL, 0, status, fragment); \
        stb_free(&b);                                   \
    } while (0)
    CASE((stb_entry(&b, "w", "F12", s23, 2, 0, 24), stb_append(&b, six, 24)), AR_EUNSUPPORTED,
         "tensor 'w': unknown dtype 'F12'");
    CASE((stb_entry(&b, "w", "F32", s22, 2, 0, 24), stb_append(&b, six, 24)), AR_EFORMAT,
         "tensor 'w': shape [2, 2] of F32 needs 16 bytes, data_offsets [0, 24) hold 24");
    CASE((stb_entry(&b, "w", "F32", s23, 2, 32, 56), stb_append(&b, six, 24)), AR_EFORMAT,
         "tensor 'w': data_offsets [32, 56) lie outside the data region (24 bytes)");
    CASE((stb_entry(&b, "w", "F32", s23, 2, 0, 24), stb_append(&b, six, 20)), AR_EFORMAT,
         "truncated data: tensor 'w' ends at byte 24 of the data region, which holds only 20");
    CASE((stb_entry(&b, "w", "F32", s23, 2, 24, 0), stb_append(&b, six, 24)), AR_EFORMAT,
         "tensor 'w': data_offsets [24, 0) are reversed");
    CASE((stb_entry(&b, "a", "F32", s22, 2, 0, 16), stb_entry(&b, "b", "F32", s22, 2, 8, 24),
          stb_append(&b, six, 24)),
         AR_EFORMAT, "tensors 'a' [0, 16) and 'b' [8, 24) overlap");
    CASE((stb_entry(&b, "w", "F32", s9, 9, 0, 4), stb_append(&b, six, 4)), AR_EUNSUPPORTED,
         "tensor 'w': 9 dimensions (at most 8)");
    CASE((json_object_set_new(b.header, "w", json_pack("{s:s, s:[i,i], s:[i,i]}", "dtype", "F32",
                                                       "shape", -2, 3, "data_offsets", 0, 24)),
          stb_append(&b, six, 24)),
         AR_EFORMAT, "tensor 'w': shape entry 0 is not a non-negative integer");
    CASE((json_object_set_new(b.header, "w", json_pack("{s:s, s:i, s:[i,i]}", "dtype", "F32",
                                                       "shape", 6, "data_offsets", 0, 24)),
          stb_append(&b, six, 24)),
         AR_EFORMAT, "tensor 'w': \"shape\" is not an array");
    CASE((json_object_set_new(b.header, "w", json_pack("{s:s, s:[i,i]}", "dtype", "F32", "shape",
                                                       2, 3)),
          stb_append(&b, six, 24)),
         AR_EFORMAT, "tensor 'w': no \"data_offsets\" key");
    CASE((json_object_set_new(b.header, "w", json_pack("{s:i, s:[i,i], s:[i,i]}", "dtype", 3,
                                                       "shape", 2, 3, "data_offsets", 0, 24)),
          stb_append(&b, six, 24)),
         AR_EFORMAT, "tensor 'w': \"dtype\" is not a string");
    CASE((json_object_set_new(b.header, "w", json_pack("{s:s, s:[i,i], s:[i]}", "dtype", "F32",
                                                       "shape", 2, 3, "data_offsets", 0)),
          stb_append(&b, six, 24)),
         AR_EFORMAT, "\"data_offsets\" must be two non-negative integers");
    CASE((json_object_set_new(b.header, "w", json_string("x"))), AR_EFORMAT,
         "tensor 'w': entry is not a JSON object");
    CASE((json_object_set_new(b.header, "__metadata__", json_integer(3))), AR_EFORMAT,
         "\"__metadata__\" is not an object");
    /* a shape whose byte count overflows 64 bits */
    size_t big[3] = {(size_t)1 << 31, (size_t)1 << 31, (size_t)1 << 31};
    CASE((stb_entry(&b, "w", "F32", big, 3, 0, 24), stb_append(&b, six, 24)), AR_EFORMAT,
         "tensor 'w'");
#undef CASE
}

/* ---- files, directories and shards ------------------------------------------ */

static void path_in(char *out, size_t n, const char *dir, const char *name)
{
    int k = snprintf(out, n, "%s/%s", dir, name);
    assert_true(k > 0 && (size_t)k < n);
}

static void write_shard(const char *dir, const char *file, const char *tensor, double value)
{
    st_builder b;
    stb_init(&b);
    ar_matrix m = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&m, 2, 2, NULL));
    ar_cm_fill(&m, value);
    stb_add_matrix(&b, tensor, "F32", &m, 0);
    char path[512];
    path_in(path, sizeof path, dir, file);
    stb_write(&b, path);
    ar_matrix_free(&m);
    stb_free(&b);
}

static void write_text(const char *dir, const char *file, const char *text)
{
    char path[512];
    path_in(path, sizeof path, dir, file);
    tu_write_file(path, text, strlen(text));
}

static void expect_open_error(const char *path, int status, const char *fragment)
{
    ar_safetensors *st = NULL;
    ar_error err = {{0}};
    int rc = ar_safetensors_open(&st, path, &err);
    if (rc != status || strstr(err.msg, fragment) == NULL)
        fail_msg("open %s: status %d (want %d), '%s' (want '%s')", path, rc, status, err.msg,
                 fragment);
    assert_null(st);
}

static double read_value(const ar_safetensors *st, const char *name)
{
    const ar_st_tensor *t = ar_safetensors_find(st, name);
    assert_non_null(t);
    ar_matrix out = ar_matrix_empty();
    assert_ok(ar_safetensors_read(st, t, &out, NULL));
    double v = AR_AT(&out, 1, 1);
    ar_matrix_free(&out);
    return v;
}

static void test_open_files_and_shards(void **state)
{
    (void)state;
    char dir[256], sub[300], path[512];
    tu_scratch_dir(dir, sizeof dir);
    /* one file, opened as a file and as its directory */
    path_in(sub, sizeof sub, dir, "single");
    assert_int_equal(mkdir(sub, 0777), 0);
    write_shard(sub, "model.safetensors", "a", 1.5);
    write_text(sub, "config.json", "{}");
    ar_safetensors *st = NULL;
    ar_error err = {{0}};
    assert_ok(ar_safetensors_open(&st, sub, &err));
    assert_true(read_value(st, "a") == 1.5);
    assert_string_equal(ar_safetensors_dir(st), sub);
    ar_safetensors_close(st);
    path_in(path, sizeof path, sub, "model.safetensors");
    assert_ok(ar_safetensors_open(&st, path, &err));
    assert_string_equal(ar_safetensors_dir(st), sub);
    ar_safetensors_close(st);

    /* two shards and an index; the directory finds the index */
    path_in(sub, sizeof sub, dir, "sharded");
    assert_int_equal(mkdir(sub, 0777), 0);
    write_shard(sub, "model-00001-of-00002.safetensors", "a", 2.5);
    write_shard(sub, "model-00002-of-00002.safetensors", "b", -3.25);
    write_text(sub, "model.safetensors.index.json",
               "{\"metadata\": {\"total_size\": 32}, \"weight_map\": {"
               "\"a\": \"model-00001-of-00002.safetensors\","
               "\"b\": \"model-00002-of-00002.safetensors\"}}");
    assert_ok(ar_safetensors_open(&st, sub, &err));
    assert_int_equal(ar_safetensors_nfiles(st), 2);
    assert_int_equal(ar_safetensors_count(st), 2);
    assert_true(read_value(st, "a") == 2.5);
    assert_true(read_value(st, "b") == -3.25);
    ar_safetensors_close(st);
    path_in(path, sizeof path, sub, "model.safetensors.index.json");
    assert_ok(ar_safetensors_open(&st, path, &err));
    ar_safetensors_close(st);

    /* no index: every .safetensors file of the directory */
    path_in(sub, sizeof sub, dir, "loose");
    assert_int_equal(mkdir(sub, 0777), 0);
    write_shard(sub, "part1.safetensors", "a", 1.0);
    write_shard(sub, "part2.safetensors", "b", 2.0);
    assert_ok(ar_safetensors_open(&st, sub, &err));
    assert_int_equal(ar_safetensors_count(st), 2);
    ar_safetensors_close(st);
    write_shard(sub, "part3.safetensors", "a", 3.0); /* a twice */
    expect_open_error(sub, AR_EFORMAT, "tensor 'a' appears in both");

    /* bad indexes */
    path_in(sub, sizeof sub, dir, "badindex");
    assert_int_equal(mkdir(sub, 0777), 0);
    write_shard(sub, "s1.safetensors", "a", 1.0);
    path_in(path, sizeof path, sub, "model.safetensors.index.json");
    write_text(sub, "model.safetensors.index.json", "{\"weight_map\": {\"a\": \"s2.safetensors\"}}");
    expect_open_error(path, AR_EIO, "s2.safetensors: cannot open");
    write_text(sub, "model.safetensors.index.json",
               "{\"weight_map\": {\"a\": \"s1.safetensors\", \"z\": \"s1.safetensors\"}}");
    expect_open_error(path, AR_EFORMAT, "weight_map names tensor 'z' in s1.safetensors");
    write_text(sub, "model.safetensors.index.json", "{\"weight_map\": {\"a\": \"../s1.safetensors\"}}");
    expect_open_error(path, AR_EFORMAT, "is not a file name beside the index");
    write_text(sub, "model.safetensors.index.json", "{\"weight_map\": {}}");
    expect_open_error(path, AR_EFORMAT, "\"weight_map\" is empty");
    write_text(sub, "model.safetensors.index.json", "{\"metadata\": {}}");
    expect_open_error(path, AR_EFORMAT, "no \"weight_map\" object");
    write_text(sub, "model.safetensors.index.json", "{\"weight_map\": ");
    expect_open_error(path, AR_EFORMAT, "invalid JSON");
    write_shard(sub, "s2.safetensors", "b", 1.0);
    write_text(sub, "model.safetensors.index.json",
               "{\"weight_map\": {\"a\": \"s2.safetensors\", \"b\": \"s1.safetensors\"}}");
    expect_open_error(path, AR_EFORMAT, "weight_map puts tensor 'a' in s2.safetensors");

    /* missing, empty directory, directory as a file, truncated file on disk */
    path_in(path, sizeof path, dir, "nope.safetensors");
    expect_open_error(path, AR_EIO, "cannot open");
    path_in(sub, sizeof sub, dir, "emptydir");
    assert_int_equal(mkdir(sub, 0777), 0);
    expect_open_error(sub, AR_EIO, "no model.safetensors.index.json and no .safetensors files");
    path_in(path, sizeof path, dir, "trunc.safetensors");
    tu_write_file(path, "\x10\x00\x00", 3);
    expect_open_error(path, AR_EFORMAT, "trunc.safetensors: 3 bytes, too short");
    path_in(path, sizeof path, dir, "zero.safetensors");
    tu_write_file(path, "", 0);
    expect_open_error(path, AR_EFORMAT, "0 bytes, too short");
    expect_open_error("", AR_EINVAL, "empty model path");
    tu_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_every_pattern),
        cmocka_unit_test(test_bf16_every_pattern),
        cmocka_unit_test(test_dtype_table),
        cmocka_unit_test(test_each_dtype),
        cmocka_unit_test(test_blocks_and_transpose),
        cmocka_unit_test(test_nonfinite_weights),
        cmocka_unit_test(test_non_float_dtype),
        cmocka_unit_test(test_shapes_and_lookup),
        cmocka_unit_test(test_malformed_framing),
        cmocka_unit_test(test_malformed_entries),
        cmocka_unit_test(test_open_files_and_shards),
    };
    return cmocka_run_group_tests_name("safetensors", tests, NULL, NULL);
}
