/* gguf_writer.h - a small GGUF writer shared by the tests, converters and tools of swa.h.
   Not part of the library: programs include it beside swa.h. MIT licence, see LICENSE.

   Do this in exactly one file:   #define GW_IMPLEMENTATION
                                  #include "gguf_writer.h"

   Usage: w = gw_new(3); gw_kv_str(w, "general.architecture", "llama"); ...
          gw_tensor_f32(w, "token_embd.weight", GW_Q8_0, 2, ne, floats);
          gw_write_file(w, "out.gguf"); gw_free(w);
   Metadata and tensors are written in the order they are added. Tensor data is copied (and
   converted from float when asked), so the caller's arrays may go away at once. Every call
   returns 0 on success and -1 on failure (out of memory, bad argument); a failure is sticky:
   gw_write_file and gw_to_memory refuse to write a half-built file. gw_error tells why.

   Quantizers follow ggml's layouts: Q8_0 blocks {f16 d; i8 q[32]} with d = max|x|/127,
   Q4_0 blocks {f16 d; u8 q[16]} with d = max/-8 (the signed value of largest magnitude),
   low nibbles holding elements 0..15 and high nibbles 16..31. Float to half rounds to nearest
   even. They are written independently of swa.h's dequantizers, so tests can check one
   against the other. */
#ifndef GGUF_WRITER_H
#define GGUF_WRITER_H

#include <stddef.h>
#include <stdint.h>

enum { GW_F32 = 0, GW_F16 = 1, GW_Q4_0 = 2, GW_Q8_0 = 8, GW_BF16 = 30 };     /* ggml type ids */
enum {                                                                        /* GGUF value types */
    GW_U8 = 0, GW_I8, GW_U16, GW_I16, GW_U32, GW_I32, GW_F32V, GW_BOOL, GW_STRING, GW_ARRAY,
    GW_U64, GW_I64, GW_F64
};

typedef struct gw_writer gw_writer;

gw_writer  *gw_new(uint32_t version);                        /* version 2 or 3; NULL on OOM */
void        gw_free(gw_writer *w);
const char *gw_error(const gw_writer *w);                    /* "" when all is well */
int  gw_set_alignment(gw_writer *w, uint32_t alignment);     /* also writes general.alignment */

int  gw_kv_u32(gw_writer *w, const char *key, uint32_t v);
int  gw_kv_i32(gw_writer *w, const char *key, int32_t v);
int  gw_kv_u64(gw_writer *w, const char *key, uint64_t v);
int  gw_kv_f32(gw_writer *w, const char *key, float v);
int  gw_kv_bool(gw_writer *w, const char *key, int v);
int  gw_kv_str(gw_writer *w, const char *key, const char *v);
/* Any scalar type: `value` points at the little-endian bytes of one value of `type`. */
int  gw_kv_scalar(gw_writer *w, const char *key, uint32_t type, const void *value);
/* An array of a fixed-size type: n elements packed at data. */
int  gw_kv_array(gw_writer *w, const char *key, uint32_t elem_type, uint64_t n, const void *data);
int  gw_kv_array_str(gw_writer *w, const char *key, uint64_t n, const char *const *strs);
/* A value already encoded as GGUF bytes (for nested arrays, or deliberately broken files). */
int  gw_kv_raw(gw_writer *w, const char *key, uint32_t type, const void *bytes, size_t n);

/* A tensor from bytes already in `type` (nbytes must match the shape). ne[0] is the row. */
int  gw_tensor(gw_writer *w, const char *name, uint32_t type, uint32_t n_dims, const int64_t *ne,
               const void *data, size_t nbytes);
/* A tensor from floats, converted to F32, F16, BF16, Q8_0 or Q4_0. */
int  gw_tensor_f32(gw_writer *w, const char *name, uint32_t type, uint32_t n_dims, const int64_t *ne,
                   const float *data);

int  gw_write_file(gw_writer *w, const char *path);
uint8_t *gw_to_memory(gw_writer *w, size_t *size);          /* free() the result */

/* Converters, usable on their own. n must be a multiple of 32 for the block types. */
uint16_t gw_f32_to_f16(float f);
uint16_t gw_f32_to_bf16(float f);
size_t   gw_row_bytes(uint32_t type, int64_t n);             /* 0 for types it cannot write */
void     gw_convert_row(uint32_t type, const float *x, void *out, int64_t n);

#endif /* GGUF_WRITER_H */

#ifdef GW_IMPLEMENTATION
#ifndef GW__IMPLEMENTED
#define GW__IMPLEMENTED
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gw__buf { uint8_t *p; size_t len, cap; } gw__buf;

typedef struct gw__tensor {
    char *name;
    uint32_t type, n_dims;
    int64_t ne[4];
    size_t offset, nbytes;       /* offset within the data section */
} gw__tensor;

struct gw_writer {
    uint32_t version, alignment;
    uint64_t n_kv;
    gw__buf kv;                  /* encoded metadata entries */
    gw__buf data;                /* tensor data, each tensor padded to the alignment */
    gw__tensor *tensors;
    size_t n_tensors, cap_tensors;
    char error[128];
};

static int gw__fail(gw_writer *w, const char *msg)
{
    if (!w->error[0]) snprintf(w->error, sizeof w->error, "%s", msg);
    return -1;
}

static int gw__put(gw_writer *w, gw__buf *b, const void *p, size_t n)
{
    if (w->error[0]) return -1;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        uint8_t *q;
        while (cap < b->len + n) cap *= 2;
        if (!(q = (uint8_t *)realloc(b->p, cap))) return gw__fail(w, "out of memory");
        b->p = q;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

static int gw__put_u32(gw_writer *w, gw__buf *b, uint32_t v) { return gw__put(w, b, &v, 4); }
static int gw__put_u64(gw_writer *w, gw__buf *b, uint64_t v) { return gw__put(w, b, &v, 8); }

static int gw__put_str(gw_writer *w, gw__buf *b, const char *s)
{
    size_t n = strlen(s);
    return gw__put_u64(w, b, n) || gw__put(w, b, s, n) ? -1 : 0;
}

static size_t gw__scalar_size(uint32_t type)
{
    static const uint8_t sizes[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return type < 13 ? sizes[type] : 0;
}

gw_writer *gw_new(uint32_t version)
{
    gw_writer *w = (gw_writer *)calloc(1, sizeof *w);
    if (!w) return NULL;
    w->version = version;
    w->alignment = 32;
    return w;
}

void gw_free(gw_writer *w)
{
    size_t i;
    if (!w) return;
    for (i = 0; i < w->n_tensors; i++) free(w->tensors[i].name);
    free(w->tensors);
    free(w->kv.p);
    free(w->data.p);
    free(w);
}

const char *gw_error(const gw_writer *w) { return w->error; }

static int gw__key(gw_writer *w, const char *key, uint32_t type)
{
    if (gw__put_str(w, &w->kv, key) || gw__put_u32(w, &w->kv, type)) return -1;
    w->n_kv++;
    return 0;
}

int gw_kv_raw(gw_writer *w, const char *key, uint32_t type, const void *bytes, size_t n)
{
    return gw__key(w, key, type) || gw__put(w, &w->kv, bytes, n) ? -1 : 0;
}

int gw_kv_scalar(gw_writer *w, const char *key, uint32_t type, const void *value)
{
    if (!gw__scalar_size(type)) return gw__fail(w, "gw_kv_scalar: not a fixed-size type");
    return gw_kv_raw(w, key, type, value, gw__scalar_size(type));
}

int gw_kv_u32(gw_writer *w, const char *key, uint32_t v) { return gw_kv_scalar(w, key, GW_U32, &v); }
int gw_kv_i32(gw_writer *w, const char *key, int32_t v) { return gw_kv_scalar(w, key, GW_I32, &v); }
int gw_kv_u64(gw_writer *w, const char *key, uint64_t v) { return gw_kv_scalar(w, key, GW_U64, &v); }
int gw_kv_f32(gw_writer *w, const char *key, float v) { return gw_kv_scalar(w, key, GW_F32V, &v); }

int gw_kv_bool(gw_writer *w, const char *key, int v)
{
    uint8_t b = v ? 1 : 0;
    return gw_kv_scalar(w, key, GW_BOOL, &b);
}

int gw_kv_str(gw_writer *w, const char *key, const char *v)
{
    return gw__key(w, key, GW_STRING) || gw__put_str(w, &w->kv, v) ? -1 : 0;
}

int gw_kv_array(gw_writer *w, const char *key, uint32_t elem_type, uint64_t n, const void *data)
{
    size_t size = gw__scalar_size(elem_type);
    if (!size) return gw__fail(w, "gw_kv_array: not a fixed-size type");
    if (gw__key(w, key, GW_ARRAY) || gw__put_u32(w, &w->kv, elem_type) || gw__put_u64(w, &w->kv, n)) return -1;
    return gw__put(w, &w->kv, data, (size_t)n * size);
}

int gw_kv_array_str(gw_writer *w, const char *key, uint64_t n, const char *const *strs)
{
    uint64_t i;
    if (gw__key(w, key, GW_ARRAY) || gw__put_u32(w, &w->kv, GW_STRING) || gw__put_u64(w, &w->kv, n)) return -1;
    for (i = 0; i < n; i++)
        if (gw__put_str(w, &w->kv, strs[i])) return -1;
    return 0;
}

int gw_set_alignment(gw_writer *w, uint32_t alignment)
{
    if (alignment == 0 || (alignment & (alignment - 1))) return gw__fail(w, "alignment must be a power of two");
    if (w->n_tensors) return gw__fail(w, "set the alignment before adding tensors");
    w->alignment = alignment;
    return gw_kv_u32(w, "general.alignment", alignment);
}

/* ---- converters ---- */

uint16_t gw_f32_to_f16(float f)
{
    uint32_t x, sign, mant;
    int32_t exp;
    memcpy(&x, &f, 4);
    sign = (x >> 16) & 0x8000u;
    exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    mant = x & 0x7fffffu;
    if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    if (exp >= 31) return (uint16_t)(sign | 0x7c00u);                 /* overflow: infinity */
    if (exp <= 0) {                                                  /* subnormal or zero */
        uint32_t shift, half, rem, q;
        if (exp < -10) return (uint16_t)sign;
        mant |= 0x800000u;
        shift = (uint32_t)(14 - exp);
        q = mant >> shift;
        rem = mant & ((1u << shift) - 1);
        half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1))) q++;
        return (uint16_t)(sign | q);
    }
    {
        uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13), rem = mant & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;        /* may carry into exp: fine */
        return (uint16_t)h;
    }
}

uint16_t gw_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);   /* quiet NaN */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

size_t gw_row_bytes(uint32_t type, int64_t n)
{
    switch (type) {
    case GW_F32: return (size_t)n * 4;
    case GW_F16: case GW_BF16: return (size_t)n * 2;
    case GW_Q8_0: return n % 32 ? 0 : (size_t)(n / 32) * 34;
    case GW_Q4_0: return n % 32 ? 0 : (size_t)(n / 32) * 18;
    default: return 0;
    }
}

void gw_convert_row(uint32_t type, const float *x, void *out, int64_t n)
{
    uint8_t *o = (uint8_t *)out;
    int64_t i, j;
    if (type == GW_F32) { memcpy(o, x, (size_t)n * 4); return; }
    if (type == GW_F16 || type == GW_BF16) {
        for (i = 0; i < n; i++) {
            uint16_t h = type == GW_F16 ? gw_f32_to_f16(x[i]) : gw_f32_to_bf16(x[i]);
            memcpy(o + 2 * i, &h, 2);
        }
        return;
    }
    for (i = 0; i < n; i += 32, x += 32) {
        float amax = 0.0f, max = 0.0f, d, id;
        uint16_t dh;
        for (j = 0; j < 32; j++)
            if (fabsf(x[j]) > amax) { amax = fabsf(x[j]); max = x[j]; }
        if (type == GW_Q8_0) {
            d = amax / 127.0f;
            dh = gw_f32_to_f16(d);
            id = d ? 1.0f / d : 0.0f;
            memcpy(o, &dh, 2);
            for (j = 0; j < 32; j++) o[2 + j] = (uint8_t)(int8_t)lroundf(x[j] * id);
            o += 34;
        } else {
            d = max / -8.0f;
            dh = gw_f32_to_f16(d);
            id = d ? 1.0f / d : 0.0f;
            memcpy(o, &dh, 2);
            for (j = 0; j < 16; j++) {
                int lo = (int)(x[j] * id + 8.5f), hi = (int)(x[j + 16] * id + 8.5f);
                lo = lo < 0 ? 0 : lo > 15 ? 15 : lo;
                hi = hi < 0 ? 0 : hi > 15 ? 15 : hi;
                o[2 + j] = (uint8_t)(lo | (hi << 4));
            }
            o += 18;
        }
    }
}

/* ---- tensors and output ---- */

int gw_tensor(gw_writer *w, const char *name, uint32_t type, uint32_t n_dims, const int64_t *ne,
              const void *data, size_t nbytes)
{
    gw__tensor *t;
    uint32_t d;
    static const uint8_t zeros[64] = {0};
    if (w->error[0]) return -1;
    if (n_dims < 1 || n_dims > 4) return gw__fail(w, "gw_tensor: 1 to 4 dimensions");
    if (w->n_tensors == w->cap_tensors) {
        size_t cap = w->cap_tensors ? 2 * w->cap_tensors : 16;
        gw__tensor *p = (gw__tensor *)realloc(w->tensors, cap * sizeof *p);
        if (!p) return gw__fail(w, "out of memory");
        w->tensors = p;
        w->cap_tensors = cap;
    }
    while (w->data.len % w->alignment)
        if (gw__put(w, &w->data, zeros, 1)) return -1;
    t = &w->tensors[w->n_tensors];
    memset(t, 0, sizeof *t);
    if (!(t->name = (char *)malloc(strlen(name) + 1))) return gw__fail(w, "out of memory");
    strcpy(t->name, name);
    w->n_tensors++;
    t->type = type;
    t->n_dims = n_dims;
    for (d = 0; d < 4; d++) t->ne[d] = d < n_dims ? ne[d] : 1;
    t->offset = w->data.len;
    t->nbytes = nbytes;
    return gw__put(w, &w->data, data, nbytes);
}

int gw_tensor_f32(gw_writer *w, const char *name, uint32_t type, uint32_t n_dims, const int64_t *ne,
                  const float *data)
{
    size_t row = gw_row_bytes(type, ne[0]), rows = 1, r;
    uint32_t d;
    uint8_t *buf;
    int rc;
    if (!row) return gw__fail(w, "gw_tensor_f32: type not writable, or row not a multiple of the block");
    for (d = 1; d < n_dims; d++) rows *= (size_t)ne[d];
    if (!(buf = (uint8_t *)malloc(row * rows + 1))) return gw__fail(w, "out of memory");
    for (r = 0; r < rows; r++) gw_convert_row(type, data + r * (size_t)ne[0], buf + r * row, ne[0]);
    rc = gw_tensor(w, name, type, n_dims, ne, buf, row * rows);
    free(buf);
    return rc;
}

static int gw__assemble(gw_writer *w, gw__buf *out)
{
    size_t i;
    uint32_t d;
    static const uint8_t zeros[64] = {0};
    if (w->error[0]) return -1;
    if (gw__put(w, out, "GGUF", 4) || gw__put_u32(w, out, w->version) ||
        gw__put_u64(w, out, w->n_tensors) || gw__put_u64(w, out, w->n_kv) ||
        gw__put(w, out, w->kv.p, w->kv.len))
        return -1;
    for (i = 0; i < w->n_tensors; i++) {
        const gw__tensor *t = &w->tensors[i];
        if (gw__put_str(w, out, t->name) || gw__put_u32(w, out, t->n_dims)) return -1;
        for (d = 0; d < t->n_dims; d++)
            if (gw__put_u64(w, out, (uint64_t)t->ne[d])) return -1;
        if (gw__put_u32(w, out, t->type) || gw__put_u64(w, out, t->offset)) return -1;
    }
    if (w->n_tensors) {
        while (out->len % w->alignment)
            if (gw__put(w, out, zeros, 1)) return -1;
        if (gw__put(w, out, w->data.p, w->data.len)) return -1;
    }
    return 0;
}

uint8_t *gw_to_memory(gw_writer *w, size_t *size)
{
    gw__buf out = {NULL, 0, 0};
    if (gw__assemble(w, &out)) {
        free(out.p);
        return NULL;
    }
    *size = out.len;
    return out.p;
}

int gw_write_file(gw_writer *w, const char *path)
{
    size_t size;
    uint8_t *p = gw_to_memory(w, &size);
    FILE *f;
    int ok;
    if (!p) return -1;
    if (!(f = fopen(path, "wb"))) {
        free(p);
        return gw__fail(w, "cannot open the output file");
    }
    ok = fwrite(p, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    free(p);
    return ok ? 0 : gw__fail(w, "cannot write the output file");
}

#endif /* GW__IMPLEMENTED */
#endif /* GW_IMPLEMENTATION */
