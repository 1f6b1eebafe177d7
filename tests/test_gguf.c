/* test_gguf.c - the GGUF reader of swa.h: metadata values of every type, arrays (nested too),
   versions, alignment, tensor infos, and the rejection of truncated or hostile files.

   Files are built in memory with tools/common/gguf_writer.h, or byte by byte where the writer cannot
   (or will not) produce what we need. Every expected value is one the test itself wrote, never
   one the reader returned on an earlier run. Hand-written bytes assume a little-endian host,
   which is also all the reader accepts. */
#define _POSIX_C_SOURCE 200809L
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== helpers: hand-written bytes ==== */

typedef struct tbuf {           /* big enough for every hand-written file below */
    uint8_t p[2048];
    size_t len;
} tbuf;

static void tb_put(tbuf *b, const void *p, size_t n)
{
    assert_true(b->len + n <= sizeof b->p);
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void tb_u8(tbuf *b, uint8_t v) { tb_put(b, &v, 1); }
static void tb_u32(tbuf *b, uint32_t v) { tb_put(b, &v, 4); }
static void tb_u64(tbuf *b, uint64_t v) { tb_put(b, &v, 8); }

static void tb_str(tbuf *b, const char *s)
{
    tb_u64(b, strlen(s));
    tb_put(b, s, strlen(s));
}

static void tb_header(tbuf *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
    b->len = 0;
    tb_put(b, "GGUF", 4);
    tb_u32(b, version);
    tb_u64(b, n_tensors);
    tb_u64(b, n_kv);
}

/* A file holding one metadata entry whose value the caller writes next. */
static void tb_one_kv(tbuf *b, const char *key, uint32_t type)
{
    tb_header(b, 3, 0, 1);
    tb_str(b, key);
    tb_u32(b, type);
}

static void tb_array_header(tbuf *b, uint32_t elem_type, uint64_t n)
{
    tb_u32(b, elem_type);
    tb_u64(b, n);
}

/* ==== helpers: opening and checking ==== */

typedef struct opened {
    uint8_t *buf;               /* the file from gw_to_memory; outlives g */
    size_t size;
    swa_gguf *g;
} opened;

/* Assemble the writer's file and free the writer; a writer error fails the test. */
static uint8_t *build(gw_writer *w, size_t *size)
{
    uint8_t *buf;
    assert_non_null(w);
    buf = gw_to_memory(w, size);
    if (!buf) fail_msg("gguf_writer: %s", gw_error(w));
    gw_free(w);
    return buf;
}

static opened open_writer(gw_writer *w)
{
    opened o = {NULL, 0, NULL};
    swa_error err;
    o.buf = build(w, &o.size);
    if (swa_gguf_open_memory(o.buf, o.size, &o.g, &err) != SWA_OK) fail_msg("open: %s", err.msg);
    assert_int_equal(err.code, SWA_OK);
    return o;
}

static void close_opened(opened *o)
{
    swa_gguf_close(o->g);
    free(o->buf);
}

/* Open a copy of p[0..n) that sits in a heap block of exactly n bytes, so that a read past
   the end is a real overrun under valgrind or ASan. A failed open must leave the handle NULL. */
static swa_status open_copy(const void *p, size_t n, swa_error *err)
{
    uint8_t *copy = (uint8_t *)malloc(n ? n : 1);
    swa_gguf *g = NULL;
    swa_status s;
    assert_non_null(copy);
    if (n) memcpy(copy, p, n);
    memset(err, 0, sizeof *err);
    s = swa_gguf_open_memory(copy, n, &g, err);
    if (s == SWA_OK) swa_gguf_close(g);
    else assert_null(g);
    free(copy);
    return s;
}

/* Opening p[0..n) must fail with `want`, and the message must hold each word of the
   NULL-terminated list that follows. */
static void expect_reject(swa_status want, const void *p, size_t n, ...)
{
    swa_error err;
    swa_status s = open_copy(p, n, &err);
    const char *word;
    va_list ap;
    if (s != want)
        fail_msg("status %s, want %s (message: %s)", swa_status_str(s), swa_status_str(want), err.msg);
    assert_int_equal(err.code, want);
    assert_true(err.msg[0] != '\0');
    va_start(ap, n);
    while ((word = va_arg(ap, const char *)) != NULL) {
        if (!strstr(err.msg, word)) {
            va_end(ap);
            fail_msg("message \"%s\" lacks \"%s\"", err.msg, word);
        }
    }
    va_end(ap);
}

/* The file w writes (w freed), which must be refused with want and a message naming a and b. */
static void expect_written_reject(gw_writer *w, swa_status want, const char *a, const char *b)
{
    size_t size;
    uint8_t *buf = build(w, &size);
    expect_reject(want, buf, size, a, b, (const char *)NULL);
    free(buf);
}

static int str_is(swa_str s, const char *z)
{
    return s.len == strlen(z) && memcmp(s.ptr, z, s.len) == 0;
}

static swa_gguf_value find_value(const swa_gguf *g, const char *key, swa_gguf_type type)
{
    int64_t i = swa_gguf_kv_find(g, key);
    swa_gguf_value v;
    if (i < 0) fail_msg("key %s not found", key);
    assert_true(str_is(swa_gguf_kv_key(g, i), key));
    v = swa_gguf_kv_value(g, i);
    if (v.type != type)
        fail_msg("key %s: type %s, want %s", key, swa_gguf_type_name(v.type), swa_gguf_type_name(type));
    return v;
}

/* An integer (or bool) value: exact as int64, the same number as a double (bools are not
   numbers there), and neither a string nor an array. */
static void check_int_value(const swa_gguf_value *v, int64_t want)
{
    int64_t x = 0;
    double d = 0.0;
    swa_str s;
    swa_gguf_value e;
    assert_int_equal(swa_gguf_value_int(v, &x), SWA_OK);
    if (x != want) fail_msg("value %lld, want %lld", (long long)x, (long long)want);
    if (v->type == SWA_GGUF_BOOL) {
        assert_int_equal(swa_gguf_value_float(v, &d), SWA_ERR_INVALID_ARG);
    } else {
        assert_int_equal(swa_gguf_value_float(v, &d), SWA_OK);
        assert_true(d == (double)want);
    }
    assert_int_equal(swa_gguf_value_str(v, &s), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_gguf_value_at(v, 0, &e), SWA_ERR_INVALID_ARG);
}

static void check_float_value(const swa_gguf_value *v, double want)
{
    int64_t x;
    double d = 0.0;
    assert_int_equal(swa_gguf_value_float(v, &d), SWA_OK);
    if (d != want) fail_msg("value %.17g, want %.17g", d, want);
    assert_int_equal(swa_gguf_value_int(v, &x), SWA_ERR_INVALID_ARG);
}

static void check_str_value(const swa_gguf_value *v, const char *want)
{
    swa_str s;
    int64_t x;
    double d;
    assert_int_equal(swa_gguf_value_str(v, &s), SWA_OK);
    assert_int_equal(v->n, strlen(want));
    if (!str_is(s, want)) fail_msg("string \"%.*s\", want \"%s\"", (int)s.len, s.ptr, want);
    assert_int_equal(swa_gguf_value_int(v, &x), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_gguf_value_float(v, &d), SWA_ERR_INVALID_ARG);
}

static void check_int(const swa_gguf *g, const char *key, swa_gguf_type type, int64_t want)
{
    swa_gguf_value v = find_value(g, key, type);
    check_int_value(&v, want);
}

static void check_float(const swa_gguf *g, const char *key, swa_gguf_type type, double want)
{
    swa_gguf_value v = find_value(g, key, type);
    check_float_value(&v, want);
}

static void check_str(const swa_gguf *g, const char *key, const char *want)
{
    swa_gguf_value v = find_value(g, key, SWA_GGUF_STRING);
    check_str_value(&v, want);
}

static swa_gguf_value elem_at(const swa_gguf_value *arr, uint64_t j)
{
    swa_gguf_value e;
    swa_status s = swa_gguf_value_at(arr, j, &e);
    if (s != SWA_OK) fail_msg("element %llu: %s", (unsigned long long)j, swa_status_str(s));
    return e;
}

static void check_str_at(const swa_gguf_value *arr, uint64_t j, const char *want)
{
    swa_gguf_value e = elem_at(arr, j);
    check_str_value(&e, want);
}

static void expect_past_end(const swa_gguf_value *arr)
{
    swa_gguf_value e;
    assert_int_equal(swa_gguf_value_at(arr, arr->n, &e), SWA_ERR_NOT_FOUND);
    assert_int_equal(swa_gguf_value_at(arr, arr->n + 1, &e), SWA_ERR_NOT_FOUND);
    assert_int_equal(swa_gguf_value_at(arr, UINT64_MAX, &e), SWA_ERR_NOT_FOUND);
}

/* ==== type table ==== */

static void test_type_table(void **state)
{
    /* Every type ggml defines (ggml.h's enum ggml_type, ggml.c's type_traits), with its block
       layout spelled out from ggml-common.h: d, dmin and scales are f16 unless said, q the
       packed quants. Written here independently of swa.h's table. */
    static const struct { uint32_t id; const char *name; int64_t block_size, block_bytes; } known[] = {
        {0, "F32", 1, 4},
        {1, "F16", 1, 2},
        {2, "Q4_0", 32, 2 + 16},               /* d, 32 nibbles */
        {3, "Q4_1", 32, 2 + 2 + 16},           /* d, m, 32 nibbles */
        {6, "Q5_0", 32, 2 + 4 + 16},           /* d, qh[4], 32 nibbles */
        {7, "Q5_1", 32, 2 + 2 + 4 + 16},       /* d, m, qh[4], 32 nibbles */
        {8, "Q8_0", 32, 2 + 32},               /* d, int8 q[32] */
        {9, "Q8_1", 32, 2 + 2 + 32},           /* d, s, int8 q[32] */
        {10, "Q2_K", 256, 16 + 64 + 2 + 2},    /* scales[16], qs[64], d, dmin */
        {11, "Q3_K", 256, 32 + 64 + 12 + 2},   /* hmask[32], qs[64], scales[12], d */
        {12, "Q4_K", 256, 2 + 2 + 12 + 128},   /* d, dmin, scales[12], qs[128] */
        {13, "Q5_K", 256, 2 + 2 + 12 + 32 + 128}, /* d, dmin, scales[12], qh[32], qs[128] */
        {14, "Q6_K", 256, 128 + 64 + 16 + 2},  /* ql[128], qh[64], int8 scales[16], d */
        {15, "Q8_K", 256, 4 + 256 + 32},       /* float d, int8 qs[256], int16 bsums[16] */
        {16, "IQ2_XXS", 256, 2 + 64},          /* d, uint16 qs[32] */
        {17, "IQ2_XS", 256, 2 + 64 + 8},       /* d, uint16 qs[32], scales[8] */
        {18, "IQ3_XXS", 256, 2 + 96},          /* d, qs[3 * 256 / 8] */
        {19, "IQ1_S", 256, 2 + 32 + 16},       /* d, qs[32], uint16 qh[8] */
        {20, "IQ4_NL", 32, 2 + 16},            /* d, 32 nibbles */
        {21, "IQ3_S", 256, 2 + 64 + 8 + 32 + 4}, /* d, qs[64], qh[8], signs[32], scales[4] */
        {22, "IQ2_S", 256, 2 + 64 + 8 + 8},    /* d, qs[64], qh[8], scales[8] */
        {23, "IQ4_XS", 256, 2 + 2 + 4 + 128},  /* d, uint16 scales_h, scales_l[4], qs[128] */
        {24, "I8", 1, 1},
        {25, "I16", 1, 2},
        {26, "I32", 1, 4},
        {27, "I64", 1, 8},
        {28, "F64", 1, 8},
        {29, "IQ1_M", 256, 32 + 16 + 8},       /* qs[32], qh[16], scales[8] (no d) */
        {30, "BF16", 1, 2},
        {34, "TQ1_0", 256, 48 + 4 + 2},        /* qs[48], qh[4], d */
        {35, "TQ2_0", 256, 64 + 2},            /* qs[64], d */
        {39, "MXFP4", 32, 1 + 16},             /* e8m0 exponent, 32 fp4 nibbles */
    };
    /* the public enum names the ids it has, with ggml's names */
    static const struct { uint32_t id; const char *name; } named[] = {
        {SWA_TYPE_F32, "F32"},   {SWA_TYPE_F16, "F16"},   {SWA_TYPE_Q4_0, "Q4_0"},     {SWA_TYPE_Q4_1, "Q4_1"},
        {SWA_TYPE_Q5_0, "Q5_0"}, {SWA_TYPE_Q5_1, "Q5_1"}, {SWA_TYPE_Q8_0, "Q8_0"},     {SWA_TYPE_Q2_K, "Q2_K"},
        {SWA_TYPE_Q3_K, "Q3_K"}, {SWA_TYPE_Q4_K, "Q4_K"}, {SWA_TYPE_Q5_K, "Q5_K"},     {SWA_TYPE_Q6_K, "Q6_K"},
        {SWA_TYPE_IQ4_NL, "IQ4_NL"}, {SWA_TYPE_IQ4_XS, "IQ4_XS"}, {SWA_TYPE_BF16, "BF16"}, {SWA_TYPE_MXFP4, "MXFP4"},
    };
    static const uint32_t unknown[] = {4, 5, 31, 32, 33, 36, 37, 38, 40, 1000, UINT32_MAX};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof known / sizeof known[0]; i++) {
        assert_non_null(swa_type_name(known[i].id));
        assert_string_equal(swa_type_name(known[i].id), known[i].name);
        assert_int_equal(swa_type_block_size(known[i].id), known[i].block_size);
        assert_int_equal(swa_type_block_bytes(known[i].id), known[i].block_bytes);
    }
    for (i = 0; i < sizeof named / sizeof named[0]; i++) {
        assert_non_null(swa_type_name(named[i].id));
        assert_string_equal(swa_type_name(named[i].id), named[i].name);
    }
    for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        assert_null(swa_type_name(unknown[i]));
        assert_int_equal(swa_type_block_size(unknown[i]), 0);
        assert_int_equal(swa_type_block_bytes(unknown[i]), 0);
    }
    assert_string_equal(swa_gguf_type_name(SWA_GGUF_U32), "u32");
    assert_string_equal(swa_gguf_type_name(SWA_GGUF_ARRAY), "array");
    assert_string_equal(swa_gguf_type_name((swa_gguf_type)13), "?");
}

/* ==== scalar metadata ==== */

static void test_scalar_values(void **state)
{
    uint8_t u8 = 255;
    int8_t i8 = -128;
    uint16_t u16 = 65535;
    int16_t i16 = -32768;
    uint64_t u64_max = UINT64_MAX, u64_top = (uint64_t)INT64_MAX;
    int64_t i64_min = INT64_MIN, i64_max = INT64_MAX;
    float f32_tiny = 0x1p-149f;
    double f64 = 0.1, f64_neg = -DBL_MAX;
    swa_gguf_value v;
    int64_t x;
    gw_writer *w = gw_new(3);
    opened o;
    (void)state;
    gw_kv_scalar(w, "s.u8", GW_U8, &u8);
    gw_kv_scalar(w, "s.i8", GW_I8, &i8);
    gw_kv_scalar(w, "s.u16", GW_U16, &u16);
    gw_kv_scalar(w, "s.i16", GW_I16, &i16);
    gw_kv_u32(w, "s.u32", UINT32_MAX);
    gw_kv_i32(w, "s.i32", INT32_MIN);
    gw_kv_f32(w, "s.f32", -FLT_MAX);
    gw_kv_scalar(w, "s.f32.tiny", GW_F32V, &f32_tiny);
    gw_kv_bool(w, "s.true", 1);
    gw_kv_bool(w, "s.false", 0);
    gw_kv_str(w, "s.str", "caf\xc3\xa9\tbar \"quoted\"");
    gw_kv_str(w, "s.empty", "");
    gw_kv_scalar(w, "s.u64.max", GW_U64, &u64_max);
    gw_kv_scalar(w, "s.u64.top", GW_U64, &u64_top);
    gw_kv_scalar(w, "s.i64.min", GW_I64, &i64_min);
    gw_kv_scalar(w, "s.i64.max", GW_I64, &i64_max);
    gw_kv_scalar(w, "s.f64", GW_F64, &f64);
    gw_kv_scalar(w, "s.f64.neg", GW_F64, &f64_neg);
    o = open_writer(w);

    assert_int_equal(swa_gguf_kv_count(o.g), 18);
    assert_true(str_is(swa_gguf_kv_key(o.g, 0), "s.u8"));
    assert_true(str_is(swa_gguf_kv_key(o.g, 17), "s.f64.neg"));
    check_int(o.g, "s.u8", SWA_GGUF_U8, 255);
    check_int(o.g, "s.i8", SWA_GGUF_I8, -128);
    check_int(o.g, "s.u16", SWA_GGUF_U16, 65535);
    check_int(o.g, "s.i16", SWA_GGUF_I16, -32768);
    check_int(o.g, "s.u32", SWA_GGUF_U32, 4294967295);
    check_int(o.g, "s.i32", SWA_GGUF_I32, -2147483647 - 1);
    check_float(o.g, "s.f32", SWA_GGUF_F32, -FLT_MAX);
    check_float(o.g, "s.f32.tiny", SWA_GGUF_F32, 0x1p-149);
    check_int(o.g, "s.true", SWA_GGUF_BOOL, 1);
    check_int(o.g, "s.false", SWA_GGUF_BOOL, 0);
    check_str(o.g, "s.str", "caf\xc3\xa9\tbar \"quoted\"");
    check_str(o.g, "s.empty", "");
    check_int(o.g, "s.u64.top", SWA_GGUF_U64, INT64_MAX);
    check_int(o.g, "s.i64.min", SWA_GGUF_I64, INT64_MIN);
    check_int(o.g, "s.i64.max", SWA_GGUF_I64, INT64_MAX);
    check_float(o.g, "s.f64", SWA_GGUF_F64, 0.1);
    check_float(o.g, "s.f64.neg", SWA_GGUF_F64, -DBL_MAX);

    /* 2^64 - 1 has no int64 value */
    v = find_value(o.g, "s.u64.max", SWA_GGUF_U64);
    assert_int_equal(swa_gguf_value_int(&v, &x), SWA_ERR_INVALID_ARG);

    assert_int_equal(swa_gguf_kv_find(o.g, "s.u6"), -1);
    assert_int_equal(swa_gguf_kv_find(o.g, "s.u8 "), -1);
    assert_int_equal(swa_gguf_kv_find(o.g, ""), -1);
    assert_int_equal(swa_gguf_kv_key(o.g, 18).len, 0);
    assert_int_equal(swa_gguf_kv_key(o.g, -1).len, 0);
    close_opened(&o);
}

/* ==== arrays ==== */

static const uint8_t a_u8[3] = {0, 1, 255};
static const int8_t a_i8[3] = {-128, -1, 127};
static const uint16_t a_u16[3] = {0, 4660, 65535};
static const int16_t a_i16[3] = {-32768, -2, 32767};
static const uint32_t a_u32[3] = {0, 123456789, UINT32_MAX};
static const int32_t a_i32[3] = {INT32_MIN, -7, INT32_MAX};
static const uint8_t a_bool[3] = {1, 0, 1};
static const uint64_t a_u64[3] = {0, INT64_MAX, UINT64_MAX};
static const int64_t a_i64[3] = {INT64_MIN, -1, INT64_MAX};
static const float a_f32[3] = {-1.5f, FLT_MAX, 0x1p-149f};
static const double a_f64[3] = {0.1, -DBL_MAX, DBL_MIN};

typedef struct number_array_case {
    const char *key;
    uint32_t type;
    const void *data;           /* three packed elements of `type` */
    int is_float;
    int64_t want_int[3];
    int n_int;                  /* elements past this one have no int64 value */
    double want_float[3];
} number_array_case;

static const number_array_case number_arrays[] = {
    {"a.u8", GW_U8, a_u8, 0, {0, 1, 255}, 3, {0}},
    {"a.i8", GW_I8, a_i8, 0, {-128, -1, 127}, 3, {0}},
    {"a.u16", GW_U16, a_u16, 0, {0, 4660, 65535}, 3, {0}},
    {"a.i16", GW_I16, a_i16, 0, {-32768, -2, 32767}, 3, {0}},
    {"a.u32", GW_U32, a_u32, 0, {0, 123456789, 4294967295}, 3, {0}},
    {"a.i32", GW_I32, a_i32, 0, {-2147483647 - 1, -7, 2147483647}, 3, {0}},
    {"a.bool", GW_BOOL, a_bool, 0, {1, 0, 1}, 3, {0}},
    {"a.u64", GW_U64, a_u64, 0, {0, INT64_MAX, 0}, 2, {0}},
    {"a.i64", GW_I64, a_i64, 0, {INT64_MIN, -1, INT64_MAX}, 3, {0}},
    {"a.f32", GW_F32V, a_f32, 1, {0}, 0, {-1.5, FLT_MAX, 0x1p-149}},
    {"a.f64", GW_F64, a_f64, 1, {0}, 0, {0.1, -DBL_MAX, DBL_MIN}},
};

static void check_number_array(const swa_gguf *g, const number_array_case *c)
{
    swa_gguf_value arr = find_value(g, c->key, SWA_GGUF_ARRAY), e;
    int64_t x;
    uint64_t j;
    assert_int_equal(arr.elem_type, c->type);
    assert_int_equal(arr.n, 3);
    assert_int_equal(swa_gguf_value_int(&arr, &x), SWA_ERR_INVALID_ARG);
    for (j = 0; j < 3; j++) {
        e = elem_at(&arr, j);
        assert_int_equal(e.type, c->type);
        if (c->is_float) check_float_value(&e, c->want_float[j]);
        else if (j < (uint64_t)c->n_int) check_int_value(&e, c->want_int[j]);
        else assert_int_equal(swa_gguf_value_int(&e, &x), SWA_ERR_INVALID_ARG);
    }
    expect_past_end(&arr);
}

static void test_number_arrays(void **state)
{
    gw_writer *w = gw_new(3);
    opened o;
    swa_gguf_value arr;
    size_t i, n = sizeof number_arrays / sizeof number_arrays[0];
    (void)state;
    for (i = 0; i < n; i++)
        gw_kv_array(w, number_arrays[i].key, number_arrays[i].type, 3, number_arrays[i].data);
    gw_kv_array(w, "a.empty", GW_U32, 0, NULL);
    o = open_writer(w);
    for (i = 0; i < n; i++) check_number_array(o.g, &number_arrays[i]);
    arr = find_value(o.g, "a.empty", SWA_GGUF_ARRAY);
    assert_int_equal(arr.elem_type, SWA_GGUF_U32);
    assert_int_equal(arr.n, 0);
    expect_past_end(&arr);
    close_opened(&o);
}

static void test_string_arrays(void **state)
{
    static char long_str[3001];
    const char *strs[5];
    gw_writer *w = gw_new(3);
    opened o;
    swa_gguf_value arr, e;
    uint64_t j;
    (void)state;
    memset(long_str, 'x', sizeof long_str - 1);
    memcpy(long_str + sizeof long_str - 4, "end", 3);
    strs[0] = "<unk>";
    strs[1] = "";
    strs[2] = long_str;
    strs[3] = "\xe2\x96\x81the";
    strs[4] = "tab\there";
    gw_kv_array_str(w, "a.str", 5, strs);
    gw_kv_array_str(w, "a.str.empty", 0, NULL);
    gw_kv_u32(w, "after", 42);
    o = open_writer(w);
    arr = find_value(o.g, "a.str", SWA_GGUF_ARRAY);
    assert_int_equal(arr.elem_type, SWA_GGUF_STRING);
    assert_int_equal(arr.n, 5);
    for (j = 5; j-- > 0;) {         /* backwards: no element may depend on visiting the one before */
        e = elem_at(&arr, j);
        check_str_value(&e, strs[j]);
    }
    expect_past_end(&arr);
    arr = find_value(o.g, "a.str.empty", SWA_GGUF_ARRAY);
    assert_int_equal(arr.elem_type, SWA_GGUF_STRING);
    assert_int_equal(arr.n, 0);
    expect_past_end(&arr);
    check_int(o.g, "after", SWA_GGUF_U32, 42);
    close_opened(&o);
}

/* [ [ ["a", "bc"], [] ], [ ["", "xyz", "tail"] ] ]: arrays of arrays of strings, as GGUF bytes. */
static void put_nested_strings(tbuf *b)
{
    b->len = 0;
    tb_array_header(b, GW_ARRAY, 2);
    tb_array_header(b, GW_ARRAY, 2);
    tb_array_header(b, GW_STRING, 2);
    tb_str(b, "a");
    tb_str(b, "bc");
    tb_array_header(b, GW_STRING, 0);
    tb_array_header(b, GW_ARRAY, 1);
    tb_array_header(b, GW_STRING, 3);
    tb_str(b, "");
    tb_str(b, "xyz");
    tb_str(b, "tail");
}

static void check_nested_strings(const swa_gguf_value *outer)
{
    swa_gguf_value mid, inner;
    assert_int_equal(outer->elem_type, SWA_GGUF_ARRAY);
    assert_int_equal(outer->n, 2);
    expect_past_end(outer);

    mid = elem_at(outer, 1);
    assert_int_equal(mid.type, SWA_GGUF_ARRAY);
    assert_int_equal(mid.elem_type, SWA_GGUF_ARRAY);
    assert_int_equal(mid.n, 1);
    expect_past_end(&mid);
    inner = elem_at(&mid, 0);
    assert_int_equal(inner.elem_type, SWA_GGUF_STRING);
    assert_int_equal(inner.n, 3);
    check_str_at(&inner, 2, "tail");
    check_str_at(&inner, 0, "");
    check_str_at(&inner, 1, "xyz");
    expect_past_end(&inner);

    mid = elem_at(outer, 0);
    assert_int_equal(mid.n, 2);
    inner = elem_at(&mid, 1);
    assert_int_equal(inner.elem_type, SWA_GGUF_STRING);
    assert_int_equal(inner.n, 0);
    expect_past_end(&inner);
    inner = elem_at(&mid, 0);
    assert_int_equal(inner.n, 2);
    check_str_at(&inner, 1, "bc");
    check_str_at(&inner, 0, "a");
}

/* `levels` arrays inside each other, one element each, the innermost holding the u8 7. */
static void put_deep_array(tbuf *b, int levels)
{
    int i;
    b->len = 0;
    for (i = 1; i < levels; i++) tb_array_header(b, GW_ARRAY, 1);
    tb_array_header(b, GW_U8, 1);
    tb_u8(b, 7);
}

static void test_nested_arrays(void **state)
{
    tbuf nested, deep;
    gw_writer *w = gw_new(3);
    opened o;
    swa_gguf_value v, e;
    int i;
    (void)state;
    put_nested_strings(&nested);
    put_deep_array(&deep, 8);
    gw_kv_raw(w, "a.nested", GW_ARRAY, nested.p, nested.len);
    gw_kv_raw(w, "a.deep8", GW_ARRAY, deep.p, deep.len);
    gw_kv_u32(w, "after", 42);      /* read only if both arrays were stepped over exactly */
    o = open_writer(w);
    v = find_value(o.g, "a.nested", SWA_GGUF_ARRAY);
    check_nested_strings(&v);
    v = find_value(o.g, "a.deep8", SWA_GGUF_ARRAY);
    for (i = 1; i < 8; i++) {
        assert_int_equal(v.elem_type, SWA_GGUF_ARRAY);
        assert_int_equal(v.n, 1);
        v = elem_at(&v, 0);
    }
    assert_int_equal(v.elem_type, SWA_GGUF_U8);
    e = elem_at(&v, 0);
    check_int_value(&e, 7);
    check_int(o.g, "after", SWA_GGUF_U32, 42);
    close_opened(&o);
}

static void test_reject_deep_arrays(void **state)
{
    tbuf deep;
    gw_writer *w = gw_new(3);
    (void)state;
    put_deep_array(&deep, 9);
    gw_kv_raw(w, "a.deep9", GW_ARRAY, deep.p, deep.len);
    expect_written_reject(w, SWA_ERR_FORMAT, "a.deep9", "nested");
}

/* ==== versions and magic ==== */

static uint8_t *small_file(uint32_t version, size_t *size)
{
    static const float x[4] = {1.0f, -2.0f, 0.5f, 3.0f};
    static const int64_t ne[1] = {4};
    gw_writer *w = gw_new(version);
    gw_kv_str(w, "general.name", "tiny");
    gw_tensor(w, "x", GW_F32, 1, ne, x, sizeof x);
    return build(w, size);
}

static void test_versions(void **state)
{
    static const uint32_t bad[] = {0, 1, 4, UINT32_MAX};
    uint32_t version;
    size_t size, i;
    swa_error err;
    swa_gguf *g = NULL;
    uint8_t *buf;
    char word[32];
    (void)state;
    for (version = 2; version <= 3; version++) {
        buf = small_file(version, &size);
        assert_int_equal(swa_gguf_open_memory(buf, size, &g, &err), SWA_OK);
        assert_int_equal(swa_gguf_version(g), version);
        check_str(g, "general.name", "tiny");
        assert_int_equal(swa_gguf_tensor_count(g), 1);
        swa_gguf_close(g);
        free(buf);
    }
    buf = small_file(3, &size);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memcpy(buf + 4, &bad[i], 4);
        snprintf(word, sizeof word, "version %u", (unsigned)bad[i]);
        expect_reject(SWA_ERR_UNSUPPORTED, buf, size, word, (const char *)NULL);
    }
    memcpy(buf, "GGUG", 4);
    expect_reject(SWA_ERR_FORMAT, buf, size, "magic", (const char *)NULL);
    memcpy(buf, "FUGG", 4);         /* the magic read as a big-endian word */
    expect_reject(SWA_ERR_FORMAT, buf, size, "magic", (const char *)NULL);
    free(buf);
}

/* ==== alignment ==== */

/* Tensors of 12, 10 and 34 bytes: the writer pads each start to the alignment, so the
   data section holds them at 0, A and 2A. `alignment` 0 leaves the default (32). */
static void check_alignment(uint32_t alignment)
{
    static const uint32_t types[3] = {GW_F32, GW_F16, GW_Q8_0};
    static const int64_t ne[3] = {3, 5, 32};
    static const size_t nbytes[3] = {12, 10, 34};
    const uint64_t a = alignment ? alignment : 32;
    uint8_t bytes[3][34];
    gw_writer *w = gw_new(3);
    opened o;
    int k;
    for (k = 0; k < 3; k++) memset(bytes[k], 0x40 + k, sizeof bytes[k]);
    if (alignment) gw_set_alignment(w, alignment);
    gw_kv_str(w, "general.name", "odd");    /* 3 bytes: the header does not end aligned by luck */
    gw_tensor(w, "t0", types[0], 1, &ne[0], bytes[0], nbytes[0]);
    gw_tensor(w, "t1", types[1], 1, &ne[1], bytes[1], nbytes[1]);
    gw_tensor(w, "t2", types[2], 1, &ne[2], bytes[2], nbytes[2]);
    o = open_writer(w);
    assert_int_equal(swa_gguf_alignment(o.g), a);
    assert_int_equal(swa_gguf_data_offset(o.g) % a, 0);
    assert_int_equal(swa_gguf_file_size(o.g), o.size);
    /* the writer ends the file with the last tensor's bytes */
    assert_int_equal(swa_gguf_data_offset(o.g) + 2 * a + 34, o.size);
    for (k = 0; k < 3; k++) {
        const swa_gguf_tensor *t = swa_gguf_tensor_at(o.g, k);
        assert_non_null(t);
        assert_int_equal(t->offset, (uint64_t)k * a);
        assert_int_equal(t->nbytes, nbytes[k]);
        assert_int_equal((const uint8_t *)t->data - o.buf, swa_gguf_data_offset(o.g) + t->offset);
        assert_memory_equal(t->data, bytes[k], nbytes[k]);
    }
    close_opened(&o);
}

static void test_alignment(void **state)
{
    (void)state;
    check_alignment(0);
    check_alignment(64);
    check_alignment(256);
}

static void test_reject_bad_alignment(void **state)
{
    static const uint32_t bad[] = {48, 0, 3, 1u << 31};
    static const float x[8] = {0};
    static const int64_t ne[1] = {8};
    size_t i;
    gw_writer *w;
    char word[32];
    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        w = gw_new(3);
        gw_kv_u32(w, "general.alignment", bad[i]);
        gw_tensor(w, "x", GW_F32, 1, ne, x, sizeof x);
        snprintf(word, sizeof word, "%u", (unsigned)bad[i]);
        expect_written_reject(w, SWA_ERR_FORMAT, "general.alignment", word);
    }
    w = gw_new(3);
    gw_kv_str(w, "general.alignment", "32");
    expect_written_reject(w, SWA_ERR_FORMAT, "general.alignment", "string");
}

/* ==== tensor infos ==== */

typedef struct tensor_case {
    const char *name;
    uint32_t type, n_dims;
    int64_t ne[4];
    uint64_t nbytes;            /* from ggml's block layouts, worked out by hand */
} tensor_case;

static const tensor_case tensor_cases[] = {
    {"t.f32", GW_F32, 1, {7}, 7 * 4},
    {"t.f16", GW_F16, 2, {8, 3}, 24 * 2},
    {"t.q8_0", GW_Q8_0, 2, {64, 2}, 2 * 68},            /* a row of 64: 2 blocks of 34 bytes */
    {"t.q4_0", GW_Q4_0, 3, {32, 2, 2}, 4 * 18},         /* 4 rows of one 18-byte block */
    {"t.bf16", GW_BF16, 4, {2, 3, 4, 5}, 120 * 2},
    {"t.q4_k", 12, 2, {256, 2}, 2 * 144},               /* Q4_K: a row of 256 is one 144-byte block */
};

static void add_case_tensor(gw_writer *w, const tensor_case *c, const float *x, const uint8_t *raw)
{
    if (c->type == 12) gw_tensor(w, c->name, c->type, c->n_dims, c->ne, raw, (size_t)c->nbytes);
    else gw_tensor_f32(w, c->name, c->type, c->n_dims, c->ne, x);
}

static void check_case_tensor(const swa_gguf *g, int64_t i, const tensor_case *c)
{
    const swa_gguf_tensor *t = swa_gguf_tensor_at(g, i);
    uint32_t d;
    assert_non_null(t);
    assert_true(str_is(t->name, c->name));
    assert_int_equal(swa_gguf_tensor_find(g, c->name), i);
    assert_int_equal(t->type, c->type);
    assert_int_equal(t->n_dims, c->n_dims);
    for (d = 0; d < 4; d++) assert_int_equal(t->ne[d], d < c->n_dims ? c->ne[d] : 1);
    assert_int_equal(t->nbytes, c->nbytes);
    assert_int_equal(t->offset % 32, 0);
}

static void test_tensor_infos(void **state)
{
    static float x[256 * 2];
    static uint8_t raw[2 * 144];
    static const char *const misses[] = {"t.f3", "t.f32.", "T.F32", "", "t.q4_k\n"};
    size_t n = sizeof tensor_cases / sizeof tensor_cases[0], i;
    gw_writer *w = gw_new(3);
    const swa_gguf_tensor *t;
    opened o;
    (void)state;
    for (i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = (float)((int)i % 17 - 8) * 0.25f;
    for (i = 0; i < sizeof raw; i++) raw[i] = (uint8_t)(i * 7 + 1);
    for (i = 0; i < n; i++) add_case_tensor(w, &tensor_cases[i], x, raw);
    o = open_writer(w);
    assert_int_equal(swa_gguf_tensor_count(o.g), n);
    for (i = 0; i < n; i++) check_case_tensor(o.g, (int64_t)i, &tensor_cases[i]);
    for (i = 0; i < sizeof misses / sizeof misses[0]; i++)
        assert_int_equal(swa_gguf_tensor_find(o.g, misses[i]), -1);
    assert_null(swa_gguf_tensor_at(o.g, -1));
    assert_null(swa_gguf_tensor_at(o.g, (int64_t)n));

    t = swa_gguf_tensor_at(o.g, 0);             /* F32 is stored as given */
    assert_memory_equal(t->data, x, 7 * sizeof(float));
    t = swa_gguf_tensor_at(o.g, (int64_t)n - 1);  /* so are the raw Q4_K bytes */
    assert_memory_equal(t->data, raw, sizeof raw);
    close_opened(&o);
}

/* ==== rejection of broken files ==== */

/* A file with metadata of several kinds and two tensors, the last ending the file. */
static uint8_t *varied_file(size_t *size)
{
    static const char *const strs[3] = {"a", "", "bc"};
    static const float x[32] = {1.0f, 2.0f, 3.0f, 4.0f};
    static const int64_t ne4[1] = {4}, ne32[1] = {32};
    gw_writer *w = gw_new(3);
    tbuf nested;
    put_nested_strings(&nested);
    gw_kv_str(w, "general.architecture", "llama");
    gw_kv_u32(w, "llama.block_count", 2);
    gw_kv_f32(w, "llama.rope.freq_base", 10000.0f);
    gw_kv_array_str(w, "tokenizer.ggml.tokens", 3, strs);
    gw_kv_raw(w, "a.nested", GW_ARRAY, nested.p, nested.len);
    gw_tensor_f32(w, "small", GW_F32, 1, ne4, x);
    gw_tensor_f32(w, "block", GW_Q8_0, 1, ne32, x);
    return build(w, size);
}

static void test_reject_truncated(void **state)
{
    size_t size, n;
    uint8_t *buf = varied_file(&size);
    swa_error err;
    swa_status s;
    (void)state;
    assert_int_equal(open_copy(buf, size, &err), SWA_OK);
    for (n = 0; n < size; n++) {
        s = open_copy(buf, n, &err);
        if (s != SWA_ERR_FORMAT || err.code != SWA_ERR_FORMAT || !err.msg[0])
            fail_msg("cut at %zu of %zu bytes: %s (%s)", n, size, swa_status_str(s), err.msg);
    }
    free(buf);
}

static void test_reject_huge_counts(void **state)
{
    static const uint64_t huge[] = {UINT64_MAX, UINT64_MAX - 1, UINT64_MAX / 13 + 1, (uint64_t)1 << 63,
                                    (uint64_t)1 << 40};
    static const uint8_t zeros[64] = {0};
    tbuf b;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        tb_header(&b, 3, huge[i], 0);
        tb_put(&b, zeros, sizeof zeros);
        expect_reject(SWA_ERR_FORMAT, b.p, b.len, "tensor count", (const char *)NULL);
        tb_header(&b, 3, 0, huge[i]);
        tb_put(&b, zeros, sizeof zeros);
        expect_reject(SWA_ERR_FORMAT, b.p, b.len, "metadata count", (const char *)NULL);
    }
}

static void test_reject_bad_strings(void **state)
{
    tbuf b;
    (void)state;
    tb_one_kv(&b, "s.short", GW_STRING);        /* claims 1000 bytes, has 5 */
    tb_u64(&b, 1000);
    tb_put(&b, "hello", 5);
    expect_reject(SWA_ERR_FORMAT, b.p, b.len, "s.short", "past the end", (const char *)NULL);

    tb_one_kv(&b, "s.max", GW_STRING);
    tb_u64(&b, UINT64_MAX);
    tb_put(&b, "hello", 5);
    expect_reject(SWA_ERR_FORMAT, b.p, b.len, "s.max", (const char *)NULL);

    tb_one_kv(&b, "a.str", GW_ARRAY);           /* the second element runs off the end */
    tb_array_header(&b, GW_STRING, 2);
    tb_str(&b, "ok");
    tb_u64(&b, 500);
    tb_put(&b, "x", 1);
    expect_reject(SWA_ERR_FORMAT, b.p, b.len, "a.str", (const char *)NULL);

    tb_header(&b, 3, 0, 1);                     /* a key that runs off the end */
    tb_u64(&b, 1000);
    tb_put(&b, "abcdefgh", 8);
    expect_reject(SWA_ERR_FORMAT, b.p, b.len, "metadata key", (const char *)NULL);

    tb_header(&b, 3, 0, 1);                     /* a key longer than the spec's 65535 */
    tb_u64(&b, UINT64_MAX);
    tb_put(&b, "abcdefgh", 8);
    expect_reject(SWA_ERR_FORMAT, b.p, b.len, "metadata key", (const char *)NULL);
}

static void test_reject_bad_values(void **state)
{
    tbuf b;
    (void)state;
    tb_one_kv(&b, "a.huge", GW_ARRAY);
    tb_array_header(&b, GW_U32, UINT64_MAX);
    tb_u64(&b, 0);
    expect_reject(SWA_ERR_FORMAT, b.p, b.len, "a.huge", (const char *)NULL);

    tb_one_kv(&b, "a.many", GW_ARRAY);          /* 2^62 arrays cannot fit */
    tb_array_header(&b, GW_ARRAY, (uint64_t)1 << 62);
    tb_array_header(&b, GW_U8, 0);
    expect_reject(SWA_ERR_FORMAT, b.p, b.len, "a.many", (const char *)NULL);

    tb_one_kv(&b, "v.type", 13);
    tb_u64(&b, 0);
    expect_reject(SWA_ERR_FORMAT, b.p, b.len, "v.type", "13", (const char *)NULL);

    tb_one_kv(&b, "a.type", GW_ARRAY);
    tb_array_header(&b, 13, 1);
    tb_u64(&b, 0);
    expect_reject(SWA_ERR_FORMAT, b.p, b.len, "a.type", "13", (const char *)NULL);

    tb_one_kv(&b, "s.u64", GW_U64);             /* half a u64 */
    tb_u32(&b, 1);
    expect_reject(SWA_ERR_FORMAT, b.p, b.len, "s.u64", (const char *)NULL);
}

static void test_reject_duplicate_key(void **state)
{
    gw_writer *w = gw_new(3);
    (void)state;
    gw_kv_u32(w, "dup.key", 1);
    gw_kv_str(w, "other", "x");
    gw_kv_str(w, "dup.key", "again");
    expect_written_reject(w, SWA_ERR_FORMAT, "dup.key", "twice");
}

/* Tensor tables written by hand, where the writer would refuse or could not say it. */
typedef struct tinfo {
    const char *name;
    uint32_t n_dims;            /* written as given, even out of range */
    uint64_t ne[5];
    uint32_t type;
    uint64_t offset;
} tinfo;

/* A version 3 file with no metadata, the given tensor infos, zeros up to the next multiple
   of 32 (the default alignment), then data_bytes bytes numbered 0, 1, 2, ... */
static void craft_tensors(tbuf *b, const tinfo *t, size_t n, size_t data_bytes)
{
    size_t i;
    uint32_t d;
    tb_header(b, 3, n, 0);
    for (i = 0; i < n; i++) {
        tb_str(b, t[i].name);
        tb_u32(b, t[i].n_dims);
        for (d = 0; d < t[i].n_dims && d < 5; d++) tb_u64(b, t[i].ne[d]);
        tb_u32(b, t[i].type);
        tb_u64(b, t[i].offset);
    }
    while (b->len % 32) tb_u8(b, 0);
    for (i = 0; i < data_bytes; i++) tb_u8(b, (uint8_t)i);
}

/* The control for the cases below: a well-formed table made by craft_tensors opens. */
static void test_crafted_tensors(void **state)
{
    static const tinfo t[2] = {
        {"w.rows", 2, {8, 2}, GW_F32, 0},
        {"w.block", 1, {32}, GW_Q8_0, 64},
    };
    tbuf b;
    swa_gguf *g = NULL;
    swa_error err;
    const swa_gguf_tensor *q;
    uint8_t want[34];
    size_t i;
    (void)state;
    craft_tensors(&b, t, 2, 98);
    assert_int_equal(swa_gguf_open_memory(b.p, b.len, &g, &err), SWA_OK);
    assert_int_equal(swa_gguf_data_offset(g), b.len - 98);
    q = swa_gguf_tensor_at(g, 1);
    assert_true(str_is(q->name, "w.block"));
    assert_int_equal(q->nbytes, 34);
    assert_int_equal((const uint8_t *)q->data - b.p, b.len - 98 + 64);
    for (i = 0; i < sizeof want; i++) want[i] = (uint8_t)(64 + i);
    assert_memory_equal(q->data, want, sizeof want);
    swa_gguf_close(g);
}

typedef struct bad_tensor_case {
    tinfo t[2];
    size_t n_tensors, data_bytes;
    const char *words[3];       /* the message must hold each */
} bad_tensor_case;

static const bad_tensor_case bad_tensor_cases[] = {
    /* 8 floats = 32 bytes, but only 16 bytes of data follow */
    {{{"w.past", 1, {8}, GW_F32, 0}}, 1, 16, {"w.past", "past the end"}},
    /* offset + size wraps around 2^64 */
    {{{"w.wrap", 1, {8}, GW_F32, UINT64_MAX - 31}}, 1, 64, {"w.wrap", "past the end"}},
    {{{"w.first", 1, {16}, GW_F32, 0}, {"w.second", 1, {8}, GW_F32, 32}}, 2, 96,
     {"w.first", "w.second", "overlap"}},
    {{{"w.unaligned", 1, {4}, GW_F32, 4}}, 1, 64, {"w.unaligned", "alignment"}},
    {{{"w.fivedim", 5, {1, 1, 1, 1, 1}, GW_F32, 0}}, 1, 32, {"w.fivedim", "5 dimensions"}},
    {{{"w.nodim", 0, {0}, GW_F32, 0}}, 1, 32, {"w.nodim", "0 dimensions"}},
    {{{"w.zero", 2, {4, 0}, GW_F32, 0}}, 1, 32, {"w.zero", "dimension 1 is 0"}},
    /* 2^32 x 2^32 elements */
    {{{"w.wide", 2, {(uint64_t)1 << 32, (uint64_t)1 << 32}, GW_F32, 0}}, 1, 32, {"w.wide", "overflow"}},
    /* a dimension that is negative as int64 */
    {{{"w.huge", 1, {(uint64_t)1 << 63}, GW_F32, 0}}, 1, 32, {"w.huge", "dimension 0"}},
    /* 2^62 elements fit in int64, their 2^64 bytes do not fit in uint64 */
    {{{"w.bytes", 1, {(uint64_t)1 << 62}, GW_F32, 0}}, 1, 32, {"w.bytes", "overflow"}},
    {{{"w.unknown", 1, {32}, 99, 0}}, 1, 32, {"w.unknown", "99"}},
    {{{"w.removed", 1, {32}, 4, 0}}, 1, 32, {"w.removed", "type id 4"}},
    {{{"w.rows", 2, {33, 2}, GW_Q8_0, 0}}, 1, 96, {"w.rows", "33", "Q8_0"}},
    {{{"w.same", 1, {8}, GW_F32, 0}, {"w.same", 1, {8}, GW_F32, 32}}, 2, 64, {"w.same", "twice"}},
};

static void test_reject_bad_tensors(void **state)
{
    size_t i, n = sizeof bad_tensor_cases / sizeof bad_tensor_cases[0];
    tbuf b;
    (void)state;
    for (i = 0; i < n; i++) {
        const bad_tensor_case *c = &bad_tensor_cases[i];
        craft_tensors(&b, c->t, c->n_tensors, c->data_bytes);
        expect_reject(SWA_ERR_FORMAT, b.p, b.len, c->words[0], c->words[1], c->words[2],
                      (const char *)NULL);
    }
}

static void test_empty_file(void **state)
{
    tbuf b;
    swa_gguf *g = NULL;
    swa_error err;
    (void)state;
    tb_header(&b, 3, 0, 0);
    assert_int_equal(swa_gguf_open_memory(b.p, b.len, &g, &err), SWA_OK);
    assert_int_equal(swa_gguf_kv_count(g), 0);
    assert_int_equal(swa_gguf_tensor_count(g), 0);
    assert_int_equal(swa_gguf_kv_find(g, "general.name"), -1);
    assert_int_equal(swa_gguf_tensor_find(g, "x"), -1);
    assert_int_equal(swa_gguf_alignment(g), 32);
    swa_gguf_close(g);
    assert_int_equal(swa_gguf_open_memory(NULL, 0, &g, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_gguf_open_memory(b.p, b.len, NULL, &err), SWA_ERR_INVALID_ARG);
}

/* ==== a real file ==== */

/* Write buf to a new file under /tmp, open it with swa_gguf_open and remove it at once (the
   mapping outlives the name), so that no failed assertion leaves the file behind. */
static swa_status open_temp_file(const uint8_t *buf, size_t size, swa_gguf **g, swa_error *err,
                                 char *path, size_t path_cap)
{
    swa_status s;
    FILE *f;
    int fd, written;
    snprintf(path, path_cap, "/tmp/swa-test-gguf-XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "wb");
    assert_non_null(f);
    written = fwrite(buf, 1, size, f) == size;
    written = fclose(f) == 0 && written;
    s = written ? swa_gguf_open(path, g, err) : SWA_ERR_IO;
    assert_int_equal(remove(path), 0);
    assert_true(written);
    return s;
}

static void test_open_file(void **state)
{
    char path[64];
    size_t size;
    uint8_t *buf = varied_file(&size);
    const swa_gguf_tensor *t;
    swa_gguf *g = NULL;
    swa_error err;
    uint32_t bad_version = 7;
    (void)state;
    if (open_temp_file(buf, size, &g, &err, path, sizeof path) != SWA_OK) fail_msg("open: %s", err.msg);
    assert_int_equal(swa_gguf_file_size(g), size);
    check_str(g, "general.architecture", "llama");
    check_int(g, "llama.block_count", SWA_GGUF_U32, 2);
    t = swa_gguf_tensor_at(g, swa_gguf_tensor_find(g, "block"));
    assert_non_null(t);
    assert_memory_equal(t->data, buf + swa_gguf_data_offset(g) + t->offset, (size_t)t->nbytes);
    swa_gguf_close(g);

    /* a broken file on disk: the message starts with its path */
    memcpy(buf + 4, &bad_version, 4);
    assert_int_equal(open_temp_file(buf, size, &g, &err, path, sizeof path), SWA_ERR_UNSUPPORTED);
    assert_null(g);
    assert_int_equal(err.code, SWA_ERR_UNSUPPORTED);
    assert_int_equal(strncmp(err.msg, path, strlen(path)), 0);
    assert_non_null(strstr(err.msg, "version 7"));
    free(buf);

    /* the name is gone now */
    assert_int_equal(swa_gguf_open(path, &g, &err), SWA_ERR_IO);
    assert_null(g);
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(swa_gguf_open("/tmp", &g, &err), SWA_ERR_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_table),
        cmocka_unit_test(test_scalar_values),
        cmocka_unit_test(test_number_arrays),
        cmocka_unit_test(test_string_arrays),
        cmocka_unit_test(test_nested_arrays),
        cmocka_unit_test(test_reject_deep_arrays),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_alignment),
        cmocka_unit_test(test_reject_bad_alignment),
        cmocka_unit_test(test_tensor_infos),
        cmocka_unit_test(test_reject_truncated),
        cmocka_unit_test(test_reject_huge_counts),
        cmocka_unit_test(test_reject_bad_strings),
        cmocka_unit_test(test_reject_bad_values),
        cmocka_unit_test(test_reject_duplicate_key),
        cmocka_unit_test(test_crafted_tensors),
        cmocka_unit_test(test_reject_bad_tensors),
        cmocka_unit_test(test_empty_file),
        cmocka_unit_test(test_open_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
