/* gguf_writer.h - a small GGUF writer shared by the tests, converters and tools of swa.h.
   Not part of the library: programs include it beside swa.h. MIT licence, see LICENSE.

   Do this in exactly one file:   #define GW_IMPLEMENTATION
                                  #include "gguf_writer.h"

   In memory: w = gw_new(3); gw_kv_str(w, "general.architecture", "llama"); ...
              gw_tensor_f32(w, "token_embd.weight", GW_Q8_0, 2, ne, floats);
              gw_write_file(w, "out.gguf"); gw_free(w);
   Streamed, for files larger than memory: add the metadata, then gw_declare_tensor for every
   tensor (name, type, shape), then gw_stream_open(w, path) writes the header and tensor table,
   gw_stream_rows / gw_stream_write append each tensor's data in declaration order (alignment
   padding goes in by itself), and gw_stream_close checks that every byte arrived. A writer
   builds either way, not both.

   Metadata and tensors are written in the order they are added. In memory, tensor data is
   copied (and converted from float when asked), so the caller's arrays may go away at once.
   Every call returns 0 on success and -1 on failure (out of memory, bad argument, I/O); a
   failure is sticky: nothing more is written, and gw_write_file / gw_to_memory refuse to
   produce a half-built file. gw_error tells why.

   Types and quantizers, with ggml's block layouts:
     F32, F16, BF16   float to half / bfloat16 rounds to nearest even
     Q8_0   32 per block {f16 d; i8 q[32]}, d = max|x|/127                             34 bytes
     Q4_0   32 per block {f16 d; u8 q[16]}, d = max/-8 (the signed value of largest
            magnitude); low nibbles hold elements 0..15, high nibbles 16..31            18 bytes
     Q4_K   256 per block {f16 d, dmin; u8 scales[12]; u8 qs[128]}: 8 sub-blocks of 32, each
            x = d*sc*q - dmin*m with 6-bit sc, m packed as ggml's get_scale_min_k4 reads them
            and q in 0..15; qs[32g+l] holds element 64g+l (low nibble) and 64g+32+l (high)  144
     Q5_K   256 per block {f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: Q4_K with q in
            0..31, its fifth bit for element l of sub-block s in bit s of qh[l]             176
     Q6_K   256 per block {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}: 16 sub-blocks of 16,
            x = d*scales[s]*(q-32) with q in 0..63 split into ql (4 bits) and qh (2 bits) with
            ggml's interleave (see gw__dequant_q6_k)                                    210
     MXFP4  32 per block {u8 e; u8 qs[16]}: x = fp4 * 2^(e - 127), fp4 an E2M1 code (sign,
            2 exponent bits, 1 mantissa bit: 0, 0.5, 1, 1.5, 2, 3, 4, 6) in nibbles as Q4_0's;
            ggml's quantize_row_mxfp4_ref, bit for bit (e from the largest |x|, each value the
            nearest code, the first on a tie)                                          17 bytes
   The K-quant scales come from a weighted least-squares search per sub-block in the manner of
   ggml's make_qkx2_quants (Q4_K, Q5_K) and make_qx_quants (Q6_K), written anew: the files are
   valid for ggml, but not byte-identical to llama-quantize's. gw_dequant_row turns every type
   back into floats; it is written independently of swa.h, so tests can check one against the
   other. */
#ifndef GGUF_WRITER_H
#define GGUF_WRITER_H

#include <stddef.h>
#include <stdint.h>

enum {                                                                        /* ggml type ids */
    GW_F32 = 0, GW_F16 = 1, GW_Q4_0 = 2, GW_Q4_1 = 3, GW_Q5_0 = 6, GW_Q5_1 = 7, GW_Q8_0 = 8,
    GW_Q2_K = 10, GW_Q3_K = 11, GW_Q4_K = 12, GW_Q5_K = 13, GW_Q6_K = 14, GW_IQ4_NL = 20, GW_IQ4_XS = 23,
    GW_BF16 = 30, GW_MXFP4 = 39
};
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
/* A tensor from floats, converted to any of the types above. */
int  gw_tensor_f32(gw_writer *w, const char *name, uint32_t type, uint32_t n_dims, const int64_t *ne,
                   const float *data);

int  gw_write_file(gw_writer *w, const char *path);
/* Files the output must not be (the program's inputs): gw_write_file and gw_stream_open refuse
   a path that is one of them, by any name or link. The array must outlive the writes. */
void gw_set_inputs(gw_writer *w, const char *const *inputs, int n_inputs);
uint8_t *gw_to_memory(gw_writer *w, size_t *size);          /* free() the result */

/* Streaming. Declare every tensor (a type above; rows must be whole blocks), then open: the
   header, metadata and tensor table go out at once. Then the data, tensor after tensor in
   declaration order: gw_stream_write appends raw bytes (it may cross tensor boundaries),
   gw_stream_rows converts n_rows whole rows of floats to the type of the tensor being written
   (they must not run past its end). gw_stream_close fails unless every declared byte was
   written.
   Files are written through safe_write.h when the program is built for POSIX.1-2008
   (_POSIX_C_SOURCE >= 200809L) or Windows: into a temporary file beside the destination,
   synced to the disk and renamed over it only when complete, so that on any failure the
   destination is as it was and nothing is left behind. Otherwise (a strict C11 build) they
   are written directly. gw_free abandons an open stream. */
int  gw_declare_tensor(gw_writer *w, const char *name, uint32_t type, uint32_t n_dims, const int64_t *ne);
int  gw_stream_open(gw_writer *w, const char *path);
int  gw_stream_write(gw_writer *w, const void *data, size_t n);
int  gw_stream_rows(gw_writer *w, const float *rows, int64_t n_rows);
int  gw_stream_close(gw_writer *w);
uint64_t gw_data_size(const gw_writer *w);   /* bytes of tensor data declared or added so far */

/* Converters, usable on their own. n must be a multiple of the block: 32 for Q8_0, Q4_0, Q4_1,
   Q5_0, Q5_1, IQ4_NL and MXFP4, 256 for the K-quants and IQ4_XS. gw_dequant_row decodes F32, F16,
   BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K and MXFP4 (the library's swa_dequantize_row decodes every
   type). */
uint16_t gw_f32_to_f16(float f);
uint16_t gw_f32_to_bf16(float f);
float    gw_f16_to_f32(uint16_t h);
float    gw_bf16_to_f32(uint16_t h);
size_t   gw_row_bytes(uint32_t type, int64_t n);             /* 0: not a type above, or n not whole blocks */
void     gw_convert_row(uint32_t type, const float *x, void *out, int64_t n);
/* The reference dequantizer: n values of a row of `type` back to floats. -1 if gw_row_bytes
   would be 0. For the K-quants it computes d*sc*q - dmin*m (Q4_K, Q5_K) and d*sc*q (Q6_K) in
   ggml's order, products first and one rounding per operation, so a correct dequantizer that
   follows ggml's dequantize_row_* gives the same bits. */
int      gw_dequant_row(uint32_t type, const void *src, float *dst, int64_t n);

#endif /* GGUF_WRITER_H */

#ifdef GW_IMPLEMENTATION
#ifndef GW__IMPLEMENTED
#define GW__IMPLEMENTED
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32) || (defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 200809L)
#include "safe_write.h"
#define GW__SAFE_WRITE 1
#else
/* The same calls over a plain FILE, for builds without POSIX.1-2008. */
typedef struct sw_file { FILE *f; char error[256]; } sw_file;
static int sw_open(sw_file *s, const char *dest, const char *const *inputs, int n_inputs)
{
    (void)inputs; (void)n_inputs;
    s->error[0] = 0;
    if ((s->f = fopen(dest, "wb"))) return 0;
    snprintf(s->error, sizeof s->error, "cannot open %s", dest);
    return -1;
}
static int sw_commit(sw_file *s)
{
    int ok = !ferror(s->f);
    ok = (fclose(s->f) == 0) && ok;
    s->f = NULL;
    if (!ok) snprintf(s->error, sizeof s->error, "cannot write the output file");
    return ok ? 0 : -1;
}
static void sw_abort(sw_file *s)
{
    if (s->f) fclose(s->f);
    s->f = NULL;
}
#endif

typedef struct gw__buf { uint8_t *p; size_t len, cap; } gw__buf;

typedef struct gw__tensor {
    char *name;
    uint32_t type, n_dims;
    int64_t ne[4];
    uint64_t offset, nbytes;     /* offset within the data section */
} gw__tensor;

enum { GW__EMPTY = 0, GW__IN_MEMORY, GW__DECLARED, GW__STREAMING, GW__CLOSED };

struct gw_writer {
    uint32_t version, alignment;
    uint64_t n_kv;
    gw__buf kv;                  /* encoded metadata entries */
    gw__buf data;                /* in memory: tensor data, each tensor padded to the alignment */
    uint64_t data_size;          /* end of the last tensor in the data section */
    gw__tensor *tensors;
    size_t n_tensors, cap_tensors;
    int mode;                    /* GW__*: in memory, or declared and then streamed */
    sw_file out;                 /* streaming: the open file */
    FILE *f;                     /* streaming: out.f while the stream is open */
    const char *const *inputs;   /* gw_set_inputs */
    int n_inputs;
    const char *path;            /* streaming: the destination, for messages */
    size_t cur;                  /* streaming: the tensor being written */
    uint64_t cur_done;           /* streaming: bytes of it written so far */
    uint64_t pos;                /* streaming: bytes of the data section written so far */
    uint8_t *scratch;            /* streaming: converted rows */
    size_t scratch_cap;
    char error[600];
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
    if (w->f) sw_abort(&w->out);
    for (i = 0; i < w->n_tensors; i++) free(w->tensors[i].name);
    free(w->tensors);
    free(w->kv.p);
    free(w->data.p);
    free(w->scratch);
    free(w);
}

const char *gw_error(const gw_writer *w) { return w->error; }

uint64_t gw_data_size(const gw_writer *w) { return w->data_size; }

static int gw__key(gw_writer *w, const char *key, uint32_t type)
{
    if (w->mode >= GW__STREAMING) return gw__fail(w, "metadata added after the stream was opened");
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

/* ==== half and bfloat16 ==== */

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
        /* round to nearest even without a branch: the carry out of rem + 0xfff + lsb is 1
           exactly when rem > half, or rem == half and the kept part is odd. A carry into the
           exponent is right too (up to infinity). */
        uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13), rem = mant & 0x1fffu;
        return (uint16_t)(h + ((rem + 0xfffu + (h & 1)) >> 13));
    }
}

uint16_t gw_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);   /* quiet NaN */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

/* Finite halves are (1024 + mantissa) * 2^(exponent - 25), or mantissa * 2^-24 when the
   exponent field is 0; both are exact in float, so ldexpf gives the one right answer.
   Infinities and NaNs keep their payload in the top mantissa bits, as every converter does. */
float gw_f16_to_f32(uint16_t h)
{
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    float v;
    if (e == 0x1f) {
        uint32_t bits = ((uint32_t)(h & 0x8000u) << 16) | 0x7f800000u | (m << 13);
        memcpy(&v, &bits, 4);
        return v;
    }
    v = e ? ldexpf((float)(m | 0x400u), (int)e - 25) : ldexpf((float)m, -24);
    return (h & 0x8000u) ? -v : v;
}

float gw_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float v;
    memcpy(&v, &bits, 4);
    return v;
}

static float gw__half_round(float f) { return gw_f16_to_f32(gw_f32_to_f16(f)); }

static void gw__store_f16(uint8_t *p, float f)
{
    uint16_t h = gw_f32_to_f16(f);
    memcpy(p, &h, 2);
}

static float gw__load_f16(const uint8_t *p)
{
    uint16_t h;
    memcpy(&h, p, 2);
    return gw_f16_to_f32(h);
}

/* v rounded to the nearest integer (halves away from lo) and clamped to lo..hi; NaN gives lo.
   Shifting by lo first keeps the truncating cast a floor, and the comparisons keep it in range. */
static int gw__quant(float v, int lo, int hi)
{
    if (v >= (float)hi) return hi;
    if (!(v > (float)lo)) return lo;
    return lo + (int)(v - (float)lo + 0.5f);
}

/* ==== Q8_0 and Q4_0 ==== */

static void gw__quantize_q8_0(const float *x, uint8_t *o, int64_t n)
{
    int64_t i;
    int j;
    for (i = 0; i < n; i += 32, x += 32, o += 34) {
        float amax = 0.0f, d, id;
        for (j = 0; j < 32; j++)
            if (fabsf(x[j]) > amax) amax = fabsf(x[j]);
        d = amax / 127.0f;
        id = d ? 1.0f / d : 0.0f;
        gw__store_f16(o, d);
        for (j = 0; j < 32; j++) o[2 + j] = (uint8_t)(int8_t)lroundf(x[j] * id);
    }
}

static void gw__quantize_q4_0(const float *x, uint8_t *o, int64_t n)
{
    int64_t i;
    int j;
    for (i = 0; i < n; i += 32, x += 32, o += 18) {
        float amax = 0.0f, max = 0.0f, d, id;
        for (j = 0; j < 32; j++)
            if (fabsf(x[j]) > amax) { amax = fabsf(x[j]); max = x[j]; }
        d = max / -8.0f;
        id = d ? 1.0f / d : 0.0f;
        gw__store_f16(o, d);
        for (j = 0; j < 16; j++) {
            /* ggml's min(15, trunc(x/d + 8.5)), clamped before the cast so NaN cannot reach it */
            float lo = x[j] * id + 8.5f, hi = x[j + 16] * id + 8.5f;
            lo = lo > 0.0f ? (lo < 15.0f ? lo : 15.0f) : 0.0f;
            hi = hi > 0.0f ? (hi < 15.0f ? hi : 15.0f) : 0.0f;
            o[2 + j] = (uint8_t)((int)lo | ((int)hi << 4));
        }
    }
}

/* ==== Q4_K and Q5_K ==== */

/* Fit the n values x (a multiple of 8) of one sub-block as scale * l + min, l in 0..nmax, min <= 0, minimising
   the weighted squared error sum w (scale*l + min - x)^2. As in ggml's make_qkx2_quants: spread
   [min(x, 0), max x] over a grid of nmax + rmin + k*rdelta steps for k = 0..nstep, round each
   value to its grid point, and for those levels solve the 2x2 least-squares problem for
   (scale, min) exactly; keep the best. Like ggml, each grid starts at the best minimum found so
   far rather than at min(x, 0), which is what gives llama-quantize's (lower) errors. Unlike
   ggml we get each candidate's error from the sums in closed form instead of a second pass
   over x. Returns scale; *neg_min = -min >= 0. */
static float gw__fit_scale_min(const float *x, const float *w, int n, int nmax, float rmin, float rdelta, int nstep,
                               float *neg_min)
{
    float lo = x[0], hi = x[0], best_scale, best_min;
    double sw = 0, swx = 0, swxx = 0, best_err;
    int i, k;
    for (i = 0; i < n; i++) {
        if (x[i] < lo) lo = x[i];
        if (x[i] > hi) hi = x[i];
        sw += w[i];
        swx += (double)w[i] * x[i];
        swxx += (double)w[i] * x[i] * x[i];
    }
    if (!(swxx < 1e300)) {     /* NaN or infinity somewhere: no fit means anything */
        *neg_min = 0;
        return 0.0f;
    }
    if (lo > 0) lo = 0;
    if (!(hi - lo > 1e-30f) || !(hi - lo < 1e38f)) {
        /* every value equal and <= 0, or a range so small (or large) that the grid would not
           be finite: the minimum says it all */
        *neg_min = -lo;
        return 0.0f;
    }
    best_scale = (hi - lo) / (float)nmax;
    best_min = lo;
    best_err = -1;
    for (k = -1; k <= nstep && hi - best_min > 1e-30f; k++) {
        /* k = -1 is the plain grid with (scale, min) left as they are; the others are refitted */
        float iscale = k < 0 ? (float)nmax / (hi - lo) : ((float)nmax + rmin + rdelta * (float)k) / (hi - best_min);
        /* eight independent partial sums: vectorizable without reassociating float adds */
        float fl[8] = {0}, fll[8] = {0}, flx[8] = {0};
        double sl = 0, sll = 0, slx = 0, det, s, m, err;
        int j;
        for (i = 0; i < n; i += 8)
            for (j = 0; j < 8; j++) {
                /* v <= nmax + rmin + rdelta*nstep, and v >= 0 but where the grid starts above
                   min(x, 0): truncation rounds what is not clamped to 0, and the clamps are
                   arithmetic, not branches, so that they vectorize */
                float v = iscale * (x[i + j] - best_min), l, wl;
                l = (float)(int)(v + 0.5f);
                l -= (float)(l > (float)nmax) * (l - (float)nmax);
                l -= (float)(l < 0.0f) * l;
                wl = w[i + j] * l;
                fl[j] += wl;
                fll[j] += wl * l;
                flx[j] += wl * x[i + j];
            }
        for (j = 0; j < 8; j++) {
            sl += fl[j];
            sll += fll[j];
            slx += flx[j];
        }
        if (k < 0) {
            s = best_scale;
            m = best_min;
        } else {
            det = sw * sll - sl * sl;
            if (!(det > 0)) continue;
            s = (sw * slx - swx * sl) / det;
            m = (sll * swx - sl * slx) / det;
            if (m > 0) {       /* the fit wants a positive minimum: pin it at 0 and refit the scale */
                m = 0;
                s = slx / sll;
            }
        }
        err = s * s * sll + 2 * s * m * sl - 2 * s * slx + m * m * sw - 2 * m * swx + swxx;
        if (best_err < 0 || err < best_err) {
            best_err = err;
            best_scale = (float)s;
            best_min = (float)m;
        }
    }
    *neg_min = -best_min;
    return best_scale;
}

/* Q4_K and Q5_K, 256 values: 8 sub-blocks of 32, each fitted with its own scale and minimum
   (levels 0..nmax; rmin and nstep as ggml sets them for the type); those 16 numbers are then
   quantized to 6 bits against the block's largest scale (d) and minimum (dmin), and the values
   are quantized once more, to L[256], against the scales as stored. o gets d, dmin and the 12
   bytes of 6-bit numbers, packed the way ggml's get_scale_min_k4 unpacks them: bytes 0-3 hold
   sc[0..3] in their low 6 bits, bytes 4-7 m[0..3]; bytes 8-11 hold the low nibbles of sc[4..7]
   (bits 0-3) and of m[4..7] (bits 4-7), and the top 2 bits of sc[4+j] and m[4+j] sit in bits
   6-7 of bytes j and 4+j. */
static void gw__quantize_k_levels(const float *x, int nmax, float rmin, int nstep, uint8_t *o, uint8_t *L)
{
    float scale[8], neg_min[8], w[32], max_scale = 0, max_min = 0, d, dmin;
    uint8_t sc[8], mn[8], *sb = o + 4;
    int j, l;
    for (j = 0; j < 8; j++) {
        const float *xs = x + 32 * j;
        float ss = 0, rms;
        for (l = 0; l < 32; l++) ss += xs[l] * xs[l];
        rms = sqrtf(ss / 32);
        /* ggml's weights: every value counts, large ones more */
        for (l = 0; l < 32; l++) w[l] = rms + fabsf(xs[l]);
        scale[j] = gw__fit_scale_min(xs, w, 32, nmax, rmin, 0.1f, nstep, &neg_min[j]);
        if (scale[j] > max_scale) max_scale = scale[j];
        if (neg_min[j] > max_min) max_min = neg_min[j];
    }
    d = gw__half_round(max_scale / 63);
    dmin = gw__half_round(max_min / 63);
    gw__store_f16(o, max_scale / 63);
    gw__store_f16(o + 2, max_min / 63);
    for (j = 0; j < 8; j++) {
        sc[j] = (uint8_t)(d > 0 ? gw__quant(scale[j] / d, 0, 63) : 0);
        mn[j] = (uint8_t)(dmin > 0 ? gw__quant(neg_min[j] / dmin, 0, 63) : 0);
    }
    for (j = 0; j < 4; j++) {
        sb[j] = (uint8_t)(sc[j] | ((sc[j + 4] >> 4) << 6));
        sb[j + 4] = (uint8_t)(mn[j] | ((mn[j + 4] >> 4) << 6));
        sb[j + 8] = (uint8_t)((sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4));
    }
    for (j = 0; j < 8; j++) {
        float step = d * (float)sc[j], off = dmin * (float)mn[j], inv = step > 0 ? 1.0f / step : 0.0f;
        for (l = 0; l < 32; l++) L[32 * j + l] = (uint8_t)gw__quant((x[32 * j + l] + off) * inv, 0, nmax);
    }
}

/* Sub-block j is the low (j even) or high (j odd) nibbles of qs[32*(j/2) ..]. */
static void gw__quantize_q4_k(const float *x, uint8_t *o, int64_t n)
{
    int64_t b;
    for (b = 0; b < n; b += 256, x += 256, o += 144) {
        uint8_t L[256], *qs = o + 16;
        int j, l;
        gw__quantize_k_levels(x, 15, -1.0f, 20, o, L);
        memset(qs, 0, 128);
        for (j = 0; j < 8; j++)
            for (l = 0; l < 32; l++) qs[32 * (j / 2) + l] |= (uint8_t)(L[32 * j + l] << (4 * (j % 2)));
    }
}

/* Q4_K's nibbles from the low 4 bits of each level; the fifth bit of element l of sub-block j
   is bit j of qh[l]. */
static void gw__quantize_q5_k(const float *x, uint8_t *o, int64_t n)
{
    int64_t b;
    for (b = 0; b < n; b += 256, x += 256, o += 176) {
        uint8_t L[256], *qh = o + 16, *qs = o + 48;
        int j, l;
        gw__quantize_k_levels(x, 31, -0.5f, 15, o, L);
        memset(qh, 0, 32 + 128);
        for (j = 0; j < 8; j++)
            for (l = 0; l < 32; l++) {
                qs[32 * (j / 2) + l] |= (uint8_t)((L[32 * j + l] & 15) << (4 * (j % 2)));
                qh[l] |= (uint8_t)((L[32 * j + l] >> 4) << j);
            }
    }
}

/* ==== Q6_K ==== */

/* Symmetric fit of 16 values as scale * l, l in -nmax..nmax-1 (32 for Q6_K, 4 for Q3_K),
   weighted by x^2 (ggml's make_qx_quants with rmse_type 1): the value of largest magnitude goes
   to -nmax (so the asymmetric range is used in full), the grid is stretched by 0.1 steps from
   -0.9 to +0.9, and for each rounding the best scale is sum(w x l) / sum(w l^2); keep the one
   that explains the most. */
static float gw__fit_scale_sym(const float *x, int nmax)
{
    enum { n = 16 };
    float amax = 0, max = 0, best_scale = 0;
    double best = -1;
    int i, k;
    for (i = 0; i < n; i++) {
        if (!(fabsf(x[i]) <= 3e38f)) return 0.0f;       /* NaN or infinity: no fit means anything */
        if (fabsf(x[i]) > amax) { amax = fabsf(x[i]); max = x[i]; }
    }
    if (amax < 1e-15f) return 0.0f;
    for (k = -9; k <= 9; k++) {
        float iscale = -((float)nmax + 0.1f * (float)k) / max, top = (float)(nmax - 1);
        float fx[8] = {0}, fl[8] = {0};           /* lanes, as in gw__fit_scale_min */
        double slx = 0, sll = 0;
        int j;
        for (i = 0; i < n; i += 8)
            for (j = 0; j < 8; j++) {
                /* |v| <= nmax + 0.9: shifted by nmax + 0.5, truncation rounds (and values
                   between -1 and 0 truncate to 0, which is the clamp at -nmax); the clamp at
                   nmax - 1 is arithmetic */
                float v = iscale * x[i + j], l, wl;
                l = (float)((int)(v + (float)nmax + 0.5f) - nmax);
                l -= (float)(l > top) * (l - top);
                wl = x[i + j] * x[i + j] * l;
                fx[j] += wl * x[i + j];
                fl[j] += wl * l;
            }
        for (j = 0; j < 8; j++) {
            slx += fx[j];
            sll += fl[j];
        }
        if (sll > 0 && slx * slx / sll > best) {
            best = slx * slx / sll;
            best_scale = (float)(slx / sll);
        }
    }
    return best_scale;
}

/* 256 values: 16 sub-blocks of 16 with a signed 8-bit scale each against one f16 d (the largest
   scale maps to -128). q = l + 32 in 0..63: the low 4 bits go to ql, the high 2 to qh. In each
   half of 128 values, value 32c + l (c = 0..3, l = 0..31) has its low bits in ql[l + 32*(c%2)]
   (low nibble for c < 2, high for c >= 2) and its high bits in qh[l] bits 2c, 2c+1. */
static void gw__quantize_q6_k(const float *x, uint8_t *o, int64_t n)
{
    int64_t b;
    for (b = 0; b < n; b += 256, x += 256, o += 210) {
        float scale[16], max_scale = 0, iscale, d;
        uint8_t L[256], *ql = o, *qh = o + 128;
        int8_t sc[16];
        int j, l, h, c;
        for (j = 0; j < 16; j++) {
            scale[j] = gw__fit_scale_sym(x + 16 * j, 32);
            if (fabsf(scale[j]) > fabsf(max_scale)) max_scale = scale[j];
        }
        memset(o, 0, 210);
        if (fabsf(max_scale) < 1e-15f) continue;        /* all zero: d = 0 */
        iscale = -128.0f / max_scale;
        gw__store_f16(o + 208, 1 / iscale);
        d = gw__half_round(1 / iscale);
        for (j = 0; j < 16; j++) {
            float step;
            sc[j] = (int8_t)gw__quant(iscale * scale[j], -128, 127);
            step = d * (float)sc[j];
            for (l = 0; l < 16; l++)
                L[16 * j + l] = (uint8_t)(32 + (step != 0 ? gw__quant(x[16 * j + l] / step, -32, 31) : 0));
        }
        memcpy(o + 192, sc, 16);
        for (h = 0; h < 2; h++)
            for (c = 0; c < 4; c++)
                for (l = 0; l < 32; l++) {
                    int q = L[128 * h + 32 * c + l];
                    ql[64 * h + 32 * (c % 2) + l] |= (uint8_t)((q & 15) << (c < 2 ? 0 : 4));
                    qh[32 * h + l] |= (uint8_t)((q >> 4) << (2 * c));
                }
    }
}

/* ==== Q4_1, Q5_0 and Q5_1 ==== */

/* ggml's reference rounding. Q4_1 and Q5_1 (levels 0..nmax, nmax 15 or 31): each block is
   min + d * q with d = (max - min) / nmax and q = trunc((x - min) / d + 0.5); Q5_0: d = max / -16
   where max is the value of largest magnitude, q = trunc(x / d + 16.5) clamped to 31. Layout: f16
   d, f16 min (Q4_1, Q5_1), 32 bits of fifth bits (Q5_0, Q5_1: bit e for element e), 16 bytes of
   nibbles (element j < 16 low, j + 16 high). */
static void gw__quantize_b32(const float *x, uint8_t *o, int64_t n, int nmax, int has_min)
{
    const int qs_at = 2 + 2 * has_min + (nmax == 31 ? 4 : 0);
    int64_t i;
    int j;
    for (i = 0; i < n; i += 32, x += 32, o += qs_at + 16) {
        float lo = x[0], hi = x[0], max = 0.0f, d, id, off;
        uint32_t qh = 0;
        uint8_t q[32];
        for (j = 0; j < 32; j++) {
            if (x[j] < lo) lo = x[j];
            if (x[j] > hi) hi = x[j];
            if (fabsf(x[j]) > fabsf(max)) max = x[j];
        }
        d = has_min ? (hi - lo) / (float)nmax : max / -16.0f;
        id = d != 0.0f ? 1.0f / d : 0.0f;
        off = has_min ? 0.5f : 16.5f;
        gw__store_f16(o, d);
        if (has_min) gw__store_f16(o + 2, lo);
        for (j = 0; j < 32; j++) {
            float v = (has_min ? x[j] - lo : x[j]) * id + off;
            v = v > 0.0f ? (v < (float)nmax ? v : (float)nmax) : 0.0f;    /* NaN goes to 0 */
            q[j] = (uint8_t)(int)v;
            qh |= (uint32_t)(q[j] >> 4) << j;
        }
        if (nmax == 31) memcpy(o + qs_at - 4, &qh, 4);
        for (j = 0; j < 16; j++) o[qs_at + j] = (uint8_t)((q[j] & 15) | (q[j + 16] & 15) << 4);
    }
}

/* ==== IQ4_NL and IQ4_XS ==== */

static const int8_t gw__iq4_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

static int gw__iq4_index(float v)   /* the table entry nearest v (the lower on a tie) */
{
    int lo = 0, hi = 15;
    if (!(v > (float)gw__iq4_values[0])) return 0;   /* NaN too */
    if (v >= (float)gw__iq4_values[15]) return 15;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (v < (float)gw__iq4_values[mid]) hi = mid;
        else lo = mid;
    }
    return v - (float)gw__iq4_values[lo] <= (float)gw__iq4_values[hi] - v ? lo : hi;
}

/* 32 values as d * table[l], weighted by x^2 (as ggml without an importance matrix): the value
   of largest magnitude goes to the table's -127 end, then to 7 entries either side of it, and
   for each rounding the best d is sum(w x t) / sum(w t^2); keep the one that explains the most. */
static float gw__fit_iq4(const float *x)
{
    float amax = 0.0f, max = 0.0f, best_d = 0.0f;
    double best = -1;
    int j, k;
    for (j = 0; j < 32; j++) {
        if (!(fabsf(x[j]) <= 3e38f)) return 0.0f;
        if (fabsf(x[j]) > amax) { amax = fabsf(x[j]); max = x[j]; }
    }
    if (amax < 1e-15f) return 0.0f;
    for (k = -7; k <= 7; k++) {
        float id = ((float)k + (float)gw__iq4_values[0]) / max;
        double sqt = 0, stt = 0;
        for (j = 0; j < 32; j++) {
            double t = gw__iq4_values[gw__iq4_index(id * x[j])], w = (double)x[j] * x[j];
            sqt += w * t * x[j];
            stt += w * t * t;
        }
        if (stt > 0 && sqt * sqt / stt > best) {
            best = sqt * sqt / stt;
            best_d = (float)(sqt / stt);
        }
    }
    return best_d;
}

/* 32 values against the stored step: nibbles, element j < 16 low and j + 16 high. */
static void gw__pack_iq4(const float *x, float step, uint8_t *qs)
{
    float inv = step != 0.0f ? 1.0f / step : 0.0f;
    int j;
    for (j = 0; j < 16; j++)
        qs[j] = (uint8_t)(gw__iq4_index(x[j] * inv) | gw__iq4_index(x[j + 16] * inv) << 4);
}

static void gw__quantize_iq4_nl(const float *x, uint8_t *o, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i += 32, x += 32, o += 18) {
        gw__store_f16(o, gw__fit_iq4(x));
        gw__pack_iq4(x, gw__load_f16(o), o + 2);
    }
}

/* ==== MXFP4 ==== */

/* E2M1 code c (bit 3 the sign) as a float; ggml's table has +0 for code 8, so zero is +0. */
static float gw__fp4(int c)
{
    int exp = (c >> 1) & 3, man = c & 1;
    float v = exp ? ldexpf(1.0f + 0.5f * (float)man, exp - 1) : 0.5f * (float)man;
    return c & 8 && v != 0.0f ? -v : v;
}

/* ggml's quantize_row_mxfp4_ref: e = floor(log2 max|x|) - 2 + 127, so that the largest value
   falls among the top codes (4 and 6 times 2^(e - 127)), then each value the code nearest it,
   the first in code order on a tie. Where ggml converts a negative float to the byte (a block
   whose largest |x| is below 2^-125, undefined in C), e is 0; NaN and infinities do not count
   toward the largest (ggml's loop skips NaN; an infinity would make e undefined). */
static void gw__quantize_mxfp4(const float *x, uint8_t *o, int64_t n)
{
    int64_t i;
    int j, c;
    for (i = 0; i < n; i += 32, x += 32, o += 17) {
        float amax = 0.0f, d, e;
        for (j = 0; j < 32; j++)
            if (fabsf(x[j]) <= 3.4028235e38f && fabsf(x[j]) > amax) amax = fabsf(x[j]);
        e = amax > 0.0f ? floorf(log2f(amax)) - 2 + 127 : 0.0f;
        o[0] = (uint8_t)(e > 0.0f ? e : 0.0f);
        d = ldexpf(1.0f, (int)o[0] - 128);   /* fp4 * 2^(e - 127) = (2 fp4) * d */
        for (j = 0; j < 32; j++) {
            int best = 0;
            float best_err = fabsf(2.0f * gw__fp4(0) * d - x[j]);
            for (c = 1; c < 16; c++) {
                float err = fabsf(2.0f * gw__fp4(c) * d - x[j]);
                if (err < best_err) { best = c; best_err = err; }
            }
            if (j < 16) o[1 + j] = (uint8_t)best;
            else o[1 + j - 16] |= (uint8_t)(best << 4);
        }
    }
}

/* IQ4_XS: 8 sub-blocks of 32 with IQ4_NL's fit, their scales quantized to 6 bits (-32..31)
   against d = -(the largest) / 32. Layout: f16 d, u16 scales_h (bits 2j..2j+1: the high bits of
   scale j + 32), scales_l[4] (nibble j % 2 of byte j / 2: its low bits), qs[128]. */
static void gw__quantize_iq4_xs(const float *x, uint8_t *o, int64_t n)
{
    int64_t i;
    int j;
    for (i = 0; i < n; i += 256, x += 256, o += 136) {
        float scale[8], max = 0.0f, d, id;
        uint16_t high = 0;
        for (j = 0; j < 8; j++) {
            scale[j] = gw__fit_iq4(x + 32 * j);
            if (fabsf(scale[j]) > fabsf(max)) max = scale[j];
        }
        memset(o, 0, 136);
        d = -max / 32.0f;
        id = d != 0.0f ? 1.0f / d : 0.0f;
        gw__store_f16(o, d);
        d = gw__load_f16(o);
        for (j = 0; j < 8; j++) {
            int l = gw__quant(id * scale[j], -32, 31);
            o[4 + j / 2] |= (uint8_t)(((l + 32) & 15) << (4 * (j % 2)));
            high |= (uint16_t)(((l + 32) >> 4) << (2 * j));
            gw__pack_iq4(x + 32 * j, d * (float)l, o + 8 + 16 * j);
        }
        memcpy(o + 2, &high, 2);
    }
}

/* ==== Q2_K and Q3_K ==== */

/* 256 values of 2-bit levels L into 64 bytes: in each half of 128, value 32c + l goes to bits
   2c..2c+1 of byte 32h + l. */
static void gw__pack_2bit(const uint8_t *L, uint8_t *qs)
{
    int h, c, l;
    memset(qs, 0, 64);
    for (h = 0; h < 2; h++)
        for (c = 0; c < 4; c++)
            for (l = 0; l < 32; l++) qs[32 * h + l] |= (uint8_t)((L[128 * h + 32 * c + l] & 3) << (2 * c));
}

/* Q2_K (84 bytes): 16 sub-blocks of 16, each fitted as scale * l + min with l in 0..3 (ggml's
   weights |x| and grid), the scales and minimums quantized to 4 bits against d = max / 15 and
   dmin = max min / 15. Layout: scales[16] (scale low nibble, min high), qs[64], f16 d, f16 dmin. */
static void gw__quantize_q2_k(const float *x, uint8_t *o, int64_t n)
{
    int64_t i;
    int j, l;
    for (i = 0; i < n; i += 256, x += 256, o += 84) {
        float scale[16], neg_min[16], w[16], max_scale = 0, max_min = 0, d, dmin;
        uint8_t L[256];
        for (j = 0; j < 16; j++) {
            for (l = 0; l < 16; l++) w[l] = fabsf(x[16 * j + l]);
            scale[j] = gw__fit_scale_min(x + 16 * j, w, 16, 3, -0.5f, 0.1f, 15, &neg_min[j]);
            if (scale[j] > max_scale) max_scale = scale[j];
            if (neg_min[j] > max_min) max_min = neg_min[j];
        }
        gw__store_f16(o + 80, max_scale / 15);
        gw__store_f16(o + 82, max_min / 15);
        d = gw__load_f16(o + 80);
        dmin = gw__load_f16(o + 82);
        for (j = 0; j < 16; j++) {
            int sc = d > 0 ? gw__quant(scale[j] / d, 0, 15) : 0, mn = dmin > 0 ? gw__quant(neg_min[j] / dmin, 0, 15) : 0;
            float step = d * (float)sc, off = dmin * (float)mn, inv = step > 0 ? 1.0f / step : 0.0f;
            o[j] = (uint8_t)(sc | mn << 4);
            for (l = 0; l < 16; l++) L[16 * j + l] = (uint8_t)gw__quant((x[16 * j + l] + off) * inv, 0, 3);
        }
        gw__pack_2bit(L, o + 16);
    }
}

/* Q3_K (110 bytes): 16 sub-blocks of 16 fitted symmetrically with l in -4..3, their scales
   quantized to 6 bits (-32..31) against d = -(the largest) / 32. Layout: hmask[32] (bit c of
   byte l set when value 32c + l has l + 4 >= 4), qs[64] (the low 2 bits as Q2_K's), scales[12]
   (scale i + 32: low nibble in byte i % 8, the low half for i < 8; high 2 bits at 2 (i / 4) of
   byte 8 + i % 4), f16 d. */
static void gw__quantize_q3_k(const float *x, uint8_t *o, int64_t n)
{
    int64_t i;
    int j, l;
    for (i = 0; i < n; i += 256, x += 256, o += 110) {
        float scale[16], max = 0.0f, d, id;
        uint8_t L[256];
        for (j = 0; j < 16; j++) {
            scale[j] = gw__fit_scale_sym(x + 16 * j, 4);
            if (fabsf(scale[j]) > fabsf(max)) max = scale[j];
        }
        memset(o, 0, 110);
        id = max != 0.0f ? -32.0f / max : 0.0f;
        gw__store_f16(o + 108, id != 0.0f ? 1.0f / id : 0.0f);
        d = gw__load_f16(o + 108);
        for (j = 0; j < 16; j++) {
            int sc = gw__quant(id * scale[j], -32, 31);
            float step = d * (float)sc;
            o[96 + j % 8] |= (uint8_t)(((sc + 32) & 15) << (j < 8 ? 0 : 4));
            o[104 + j % 4] |= (uint8_t)(((sc + 32) >> 4) << (2 * (j / 4)));
            for (l = 0; l < 16; l++) L[16 * j + l] = (uint8_t)(4 + (step != 0 ? gw__quant(x[16 * j + l] / step, -4, 3) : 0));
        }
        for (j = 0; j < 256; j++)
            if (L[j] >= 4) o[j % 32] |= (uint8_t)(1 << (j / 32));
        gw__pack_2bit(L, o + 32);
    }
}

/* ==== rows ==== */

/* Each type's block: how many values it holds, in how many bytes. */
static const struct { uint32_t type; int64_t values; size_t bytes; } gw__blocks[] = {
    {GW_F32, 1, 4},      {GW_F16, 1, 2},      {GW_BF16, 1, 2},      {GW_Q8_0, 32, 34},    {GW_Q4_0, 32, 18},
    {GW_Q4_1, 32, 20},   {GW_Q5_0, 32, 22},   {GW_Q5_1, 32, 24},    {GW_IQ4_NL, 32, 18},  {GW_MXFP4, 32, 17},
    {GW_Q2_K, 256, 84},  {GW_Q3_K, 256, 110}, {GW_Q4_K, 256, 144},  {GW_Q5_K, 256, 176},  {GW_Q6_K, 256, 210},
    {GW_IQ4_XS, 256, 136},
};

size_t gw_row_bytes(uint32_t type, int64_t n)
{
    size_t i;
    if (n < 0) return 0;
    for (i = 0; i < sizeof gw__blocks / sizeof gw__blocks[0]; i++)
        if (gw__blocks[i].type == type)
            return n % gw__blocks[i].values ? 0 : (size_t)(n / gw__blocks[i].values) * gw__blocks[i].bytes;
    return 0;
}

void gw_convert_row(uint32_t type, const float *x, void *out, int64_t n)
{
    uint8_t *o = (uint8_t *)out;
    int64_t i;
    switch (type) {
    case GW_F32: memcpy(o, x, (size_t)n * 4); break;
    case GW_F16: case GW_BF16:
        for (i = 0; i < n; i++) {
            uint16_t h = type == GW_F16 ? gw_f32_to_f16(x[i]) : gw_f32_to_bf16(x[i]);
            memcpy(o + 2 * i, &h, 2);
        }
        break;
    case GW_Q8_0: gw__quantize_q8_0(x, o, n); break;
    case GW_Q4_0: gw__quantize_q4_0(x, o, n); break;
    case GW_Q4_K: gw__quantize_q4_k(x, o, n); break;
    case GW_Q5_K: gw__quantize_q5_k(x, o, n); break;
    case GW_Q6_K: gw__quantize_q6_k(x, o, n); break;
    case GW_Q4_1: gw__quantize_b32(x, o, n, 15, 1); break;
    case GW_Q5_0: gw__quantize_b32(x, o, n, 31, 0); break;
    case GW_Q5_1: gw__quantize_b32(x, o, n, 31, 1); break;
    case GW_IQ4_NL: gw__quantize_iq4_nl(x, o, n); break;
    case GW_Q2_K: gw__quantize_q2_k(x, o, n); break;
    case GW_Q3_K: gw__quantize_q3_k(x, o, n); break;
    case GW_IQ4_XS: gw__quantize_iq4_xs(x, o, n); break;
    case GW_MXFP4: gw__quantize_mxfp4(x, o, n); break;
    default: break;
    }
}

/* Q4_K (qh NULL) or Q5_K: sub-block s (0..7) of 32 values is nibble half s%2 of qs[32*(s/2)..],
   plus 16 for Q5_K where bit s of qh[l] is set, with 6-bit scale and minimum unpacked as ggml's
   get_scale_min_k4 does. */
static void gw__dequant_k(const uint8_t *b, const uint8_t *qh, const uint8_t *qs, float *y)
{
    const float d = gw__load_f16(b), dmin = gw__load_f16(b + 2);
    const uint8_t *s = b + 4;
    int sub, l;
    for (sub = 0; sub < 8; sub++) {
        int sc, m;
        float step, off;
        if (sub < 4) {
            sc = s[sub] & 63;
            m = s[sub + 4] & 63;
        } else {
            sc = (s[sub + 4] & 15) | ((s[sub - 4] >> 6) << 4);
            m = (s[sub + 4] >> 4) | ((s[sub] >> 6) << 4);
        }
        step = d * (float)sc;
        off = dmin * (float)m;
        for (l = 0; l < 32; l++) {
            int q = (qs[32 * (sub / 2) + l] >> (4 * (sub % 2))) & 15;
            float v;
            if (qh) q += ((qh[l] >> sub) & 1) * 16;
            v = step * (float)q;           /* own statement: no fused multiply-add */
            y[32 * sub + l] = v - off;
        }
    }
}

static void gw__dequant_q4_k(const uint8_t *b, float *y) { gw__dequant_k(b, NULL, b + 16, y); }
static void gw__dequant_q5_k(const uint8_t *b, float *y) { gw__dequant_k(b, b + 16, b + 48, y); }

/* Q6_K, one 210-byte block: see gw__quantize_q6_k for where each value's bits are. */
static void gw__dequant_q6_k(const uint8_t *b, float *y)
{
    const uint8_t *ql = b, *qh = b + 128;
    const int8_t *sc = (const int8_t *)(b + 192);
    const float d = gw__load_f16(b + 208);
    int h, c, l;
    for (h = 0; h < 2; h++)
        for (c = 0; c < 4; c++)
            for (l = 0; l < 32; l++) {
                int lo = (ql[64 * h + 32 * (c % 2) + l] >> (c < 2 ? 0 : 4)) & 15;
                int hi = (qh[32 * h + l] >> (2 * c)) & 3;
                /* 16 values per scale: value 32c + l of half h uses scale 8h + 2c + l/16 */
                float step = d * (float)sc[8 * h + 2 * c + l / 16];
                y[128 * h + 32 * c + l] = step * (float)((lo | (hi << 4)) - 32);
            }
}

int gw_dequant_row(uint32_t type, const void *src, float *dst, int64_t n)
{
    const uint8_t *b = (const uint8_t *)src;
    int64_t i;
    int j;
    if (n == 0) return 0;
    if (!gw_row_bytes(type, n)) return -1;
    switch (type) {
    case GW_F32: memcpy(dst, src, (size_t)n * 4); break;
    case GW_F16: case GW_BF16:
        for (i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, b + 2 * i, 2);
            dst[i] = type == GW_F16 ? gw_f16_to_f32(h) : gw_bf16_to_f32(h);
        }
        break;
    case GW_Q8_0:
        for (i = 0; i < n; i += 32, b += 34) {
            float d = gw__load_f16(b);
            for (j = 0; j < 32; j++) dst[i + j] = (float)(int8_t)b[2 + j] * d;
        }
        break;
    case GW_Q4_0:
        for (i = 0; i < n; i += 32, b += 18) {
            float d = gw__load_f16(b);
            for (j = 0; j < 32; j++) {
                int q = j < 16 ? (b[2 + j] & 15) : (b[2 + j - 16] >> 4);
                dst[i + j] = (float)(q - 8) * d;
            }
        }
        break;
    case GW_Q4_K: for (i = 0; i < n; i += 256, b += 144) gw__dequant_q4_k(b, dst + i); break;
    case GW_Q5_K: for (i = 0; i < n; i += 256, b += 176) gw__dequant_q5_k(b, dst + i); break;
    case GW_Q6_K: for (i = 0; i < n; i += 256, b += 210) gw__dequant_q6_k(b, dst + i); break;
    case GW_MXFP4:
        for (i = 0; i < n; i += 32, b += 17)
            for (j = 0; j < 32; j++) dst[i + j] = ldexpf(gw__fp4(j < 16 ? b[1 + j] & 15 : b[1 + j - 16] >> 4), b[0] - 127);
        break;
    default: return -1;   /* the newer types: swa_dequantize_row decodes them */
    }
    return 0;
}

/* ==== tensors ==== */

static gw__tensor *gw__add_tensor(gw_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                                  const int64_t *ne, uint64_t nbytes)
{
    gw__tensor *t;
    uint32_t d;
    if (w->error[0]) return NULL;
    if (n_dims < 1 || n_dims > 4) { gw__fail(w, "tensor: 1 to 4 dimensions"); return NULL; }
    if (w->n_tensors == w->cap_tensors) {
        size_t cap = w->cap_tensors ? 2 * w->cap_tensors : 16;
        gw__tensor *p = (gw__tensor *)realloc(w->tensors, cap * sizeof *p);
        if (!p) { gw__fail(w, "out of memory"); return NULL; }
        w->tensors = p;
        w->cap_tensors = cap;
    }
    t = &w->tensors[w->n_tensors];
    memset(t, 0, sizeof *t);
    if (!(t->name = (char *)malloc(strlen(name) + 1))) { gw__fail(w, "out of memory"); return NULL; }
    strcpy(t->name, name);
    w->n_tensors++;
    t->type = type;
    t->n_dims = n_dims;
    for (d = 0; d < 4; d++) t->ne[d] = d < n_dims ? ne[d] : 1;
    t->offset = (w->data_size + w->alignment - 1) / w->alignment * w->alignment;
    t->nbytes = nbytes;
    w->data_size = t->offset + nbytes;
    return t;
}

int gw_tensor(gw_writer *w, const char *name, uint32_t type, uint32_t n_dims, const int64_t *ne,
              const void *data, size_t nbytes)
{
    static const uint8_t zeros[64] = {0};
    if (w->mode != GW__EMPTY && w->mode != GW__IN_MEMORY)
        return gw__fail(w, "gw_tensor: this writer streams; use gw_declare_tensor");
    w->mode = GW__IN_MEMORY;
    if (!gw__add_tensor(w, name, type, n_dims, ne, nbytes)) return -1;
    while (w->data.len % w->alignment)
        if (gw__put(w, &w->data, zeros, 1)) return -1;
    return gw__put(w, &w->data, data, nbytes);
}

/* The number of rows of a shape (every dimension after the first); -1 if a dimension is
   negative or the count overflows. */
static int gw__rows(uint32_t n_dims, const int64_t *ne, uint64_t *rows)
{
    uint32_t d;
    *rows = 1;
    for (d = 0; d < n_dims; d++)
        if (ne[d] < 0) return -1;
    for (d = 1; d < n_dims; d++) {
        if (ne[d] && *rows > UINT64_MAX / (uint64_t)ne[d]) return -1;
        *rows *= (uint64_t)ne[d];
    }
    return 0;
}

int gw_tensor_f32(gw_writer *w, const char *name, uint32_t type, uint32_t n_dims, const int64_t *ne,
                  const float *data)
{
    size_t row, r;
    uint64_t rows;
    uint8_t *buf;
    int rc;
    if (n_dims < 1 || n_dims > 4) return gw__fail(w, "gw_tensor_f32: 1 to 4 dimensions");
    row = gw_row_bytes(type, ne[0]);
    if (!row) return gw__fail(w, "gw_tensor_f32: type not writable, or row not a multiple of the block");
    if (gw__rows(n_dims, ne, &rows) || rows > (SIZE_MAX - 1) / row) return gw__fail(w, "gw_tensor_f32: bad shape");
    if (!(buf = (uint8_t *)malloc(row * rows + 1))) return gw__fail(w, "out of memory");
    for (r = 0; r < rows; r++) gw_convert_row(type, data + r * (size_t)ne[0], buf + r * row, ne[0]);
    rc = gw_tensor(w, name, type, n_dims, ne, buf, row * rows);
    free(buf);
    return rc;
}

/* Header, metadata and tensor table, padded to the alignment when tensors follow. */
static int gw__header(gw_writer *w, gw__buf *out)
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
    if (w->n_tensors)
        while (out->len % w->alignment)
            if (gw__put(w, out, zeros, 1)) return -1;
    return 0;
}

uint8_t *gw_to_memory(gw_writer *w, size_t *size)
{
    gw__buf out = {NULL, 0, 0};
    if (w->mode == GW__DECLARED || w->mode == GW__STREAMING || w->mode == GW__CLOSED) {
        gw__fail(w, "declared tensors have no data in memory: use gw_stream_open");
        return NULL;
    }
    if (gw__header(w, &out) || gw__put(w, &out, w->data.p, w->data.len)) {
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
    sw_file out;
    int ok;
    if (!p) return -1;
    if (sw_open(&out, path, w->inputs, w->n_inputs)) {
        free(p);
        return gw__fail(w, out.error);
    }
    ok = fwrite(p, 1, size, out.f) == size;
    free(p);
    if (!ok) {
        sw_abort(&out);
        snprintf(out.error, sizeof out.error, "cannot write %s", path);
        return gw__fail(w, out.error);
    }
    return sw_commit(&out) ? gw__fail(w, out.error) : 0;
}

void gw_set_inputs(gw_writer *w, const char *const *inputs, int n_inputs)
{
    w->inputs = inputs;
    w->n_inputs = n_inputs;
}

/* ==== streaming ==== */

int gw_declare_tensor(gw_writer *w, const char *name, uint32_t type, uint32_t n_dims, const int64_t *ne)
{
    size_t row;
    uint64_t rows;
    if (w->mode != GW__EMPTY && w->mode != GW__DECLARED)
        return gw__fail(w, w->mode == GW__IN_MEMORY ? "gw_declare_tensor: this writer holds tensors in memory"
                                                    : "gw_declare_tensor: the stream is already open");
    if (n_dims < 1 || n_dims > 4) return gw__fail(w, "gw_declare_tensor: 1 to 4 dimensions");
    if (!(row = gw_row_bytes(type, ne[0])))
        return gw__fail(w, "gw_declare_tensor: type not writable, or row not a multiple of the block");
    if (gw__rows(n_dims, ne, &rows) || (rows && row > UINT64_MAX / rows))
        return gw__fail(w, "gw_declare_tensor: negative dimension, or the size overflows");
    w->mode = GW__DECLARED;
    return gw__add_tensor(w, name, type, n_dims, ne, (uint64_t)row * rows) ? 0 : -1;
}

static int gw__stream_fail(gw_writer *w, const char *msg)
{
    if (w->f) {
        sw_abort(&w->out);
        w->f = NULL;
    }
    return gw__fail(w, msg);
}

static int gw__write_failed(gw_writer *w)
{
    char msg[600];
    snprintf(msg, sizeof msg, "cannot write %s: %s", w->path, strerror(errno));
    return gw__stream_fail(w, msg);
}

int gw_stream_open(gw_writer *w, const char *path)
{
    gw__buf head = {NULL, 0, 0};
    int ok;
    if (w->error[0]) return -1;
    if (w->mode == GW__IN_MEMORY) return gw__fail(w, "gw_stream_open: this writer holds tensors in memory");
    if (w->mode >= GW__STREAMING) return gw__fail(w, "gw_stream_open: already opened");
    if (gw__header(w, &head)) {
        free(head.p);
        return -1;
    }
    if (sw_open(&w->out, path, w->inputs, w->n_inputs)) {
        free(head.p);
        return gw__fail(w, w->out.error);
    }
    w->f = w->out.f;
    w->path = path;
    setvbuf(w->f, NULL, _IOFBF, 1 << 20);
    ok = fwrite(head.p, 1, head.len, w->f) == head.len;
    free(head.p);
    w->mode = GW__STREAMING;
    w->cur = 0;
    w->cur_done = 0;
    w->pos = 0;
    return ok ? 0 : gw__write_failed(w);
}

/* Move to the next tensor when the current one is complete, and pad up to where the current
   one starts if nothing of it is written yet. -1 past the last tensor. */
static int gw__stream_seek(gw_writer *w)
{
    static const uint8_t zeros[64] = {0};
    const gw__tensor *t;
    while (w->cur < w->n_tensors && w->cur_done == w->tensors[w->cur].nbytes) {
        w->cur++;
        w->cur_done = 0;
    }
    if (w->cur >= w->n_tensors) return gw__stream_fail(w, "more data than the declared tensors hold");
    t = &w->tensors[w->cur];
    while (w->pos < t->offset) {
        size_t n = (size_t)(t->offset - w->pos < sizeof zeros ? t->offset - w->pos : sizeof zeros);
        if (fwrite(zeros, 1, n, w->f) != n) return gw__write_failed(w);
        w->pos += n;
    }
    return 0;
}

int gw_stream_write(gw_writer *w, const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    if (w->error[0]) return -1;
    if (w->mode != GW__STREAMING) return gw__fail(w, "gw_stream_write: the stream is not open");
    while (n) {
        uint64_t room;
        size_t k;
        if (gw__stream_seek(w)) return -1;
        room = w->tensors[w->cur].nbytes - w->cur_done;
        k = room < n ? (size_t)room : n;
        if (fwrite(p, 1, k, w->f) != k) return gw__write_failed(w);
        p += k;
        n -= k;
        w->cur_done += k;
        w->pos += k;
    }
    return 0;
}

int gw_stream_rows(gw_writer *w, const float *rows, int64_t n_rows)
{
    const gw__tensor *t;
    size_t row, need;
    int64_t r;
    if (w->error[0]) return -1;
    if (w->mode != GW__STREAMING) return gw__fail(w, "gw_stream_rows: the stream is not open");
    if (n_rows <= 0) return n_rows == 0 ? 0 : gw__fail(w, "gw_stream_rows: negative row count");
    if (gw__stream_seek(w)) return -1;
    t = &w->tensors[w->cur];
    row = gw_row_bytes(t->type, t->ne[0]);
    if (w->cur_done % row) return gw__stream_fail(w, "gw_stream_rows: the tensor has a partial row");
    if ((uint64_t)n_rows > (t->nbytes - w->cur_done) / row)
        return gw__stream_fail(w, "gw_stream_rows: more rows than the tensor has left");
    need = row * (size_t)n_rows;
    if (need > w->scratch_cap) {
        uint8_t *p = (uint8_t *)realloc(w->scratch, need);
        if (!p) return gw__stream_fail(w, "out of memory");
        w->scratch = p;
        w->scratch_cap = need;
    }
    for (r = 0; r < n_rows; r++) gw_convert_row(t->type, rows + r * t->ne[0], w->scratch + (size_t)r * row, t->ne[0]);
    return gw_stream_write(w, w->scratch, need);
}

int gw_stream_close(gw_writer *w)
{
    int ok;
    char msg[128];
    if (w->error[0]) return -1;
    if (w->mode != GW__STREAMING) return gw__fail(w, "gw_stream_close: the stream is not open");
    while (w->cur < w->n_tensors && w->cur_done == w->tensors[w->cur].nbytes) {
        w->cur++;
        w->cur_done = 0;
    }
    if (w->cur < w->n_tensors) {
        snprintf(msg, sizeof msg, "tensor %.60s: %llu of %llu bytes written", w->tensors[w->cur].name,
                 (unsigned long long)w->cur_done, (unsigned long long)w->tensors[w->cur].nbytes);
        return gw__stream_fail(w, msg);
    }
    ok = sw_commit(&w->out) == 0;
    w->f = NULL;
    w->mode = GW__CLOSED;
    return ok ? 0 : gw__fail(w, w->out.error);
}

#endif /* GW__IMPLEMENTED */
#endif /* GW_IMPLEMENTATION */
