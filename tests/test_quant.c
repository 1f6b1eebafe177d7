/* Quantization: the GGUF writer's K-quant blocks decode to hand-computed values; every type
   survives quantize -> dequantize within a stated error; the library's dequantizer gives the
   same bits as the writer's independent one, and llama.cpp's values on a file llama.cpp
   quantized (when ../shared is there); the streaming writer writes the same bytes as the
   in-memory one. */
#define _POSIX_C_SOURCE 200809L   /* mkstemp */
#define SWA_INTERNALS   /* the internals it tests: swa.h, "internal declarations" */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tests/programs.h"
#include "tests/testutil.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ==== helpers ==== */

static double rng_uniform(uint64_t *s) { return ((double)(tu_xorshift64(s) >> 11) + 0.5) / 9007199254740992.0; }

static void gaussian(float *x, int64_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    int64_t i;
    for (i = 0; i < n; i++) {
        double u = rng_uniform(&s), v = rng_uniform(&s);
        x[i] = (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
    }
}

static void random_bytes(uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 7;
    size_t i;
    for (i = 0; i < n; i++) p[i] = (uint8_t)(tu_xorshift64(&s) >> 32);
}

static void put_f16(uint8_t *p, uint16_t h) { memcpy(p, &h, 2); }

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* Rows back to floats: the writer's own dequantizer where it has one, else the library's (which
   test_llama_cpp_rows ties to llama.cpp's). */
static int decode_row(uint32_t type, const void *q, float *y, int64_t n)
{
    if (gw_dequant_row(type, q, y, n) == 0) return 0;
    return swa_dequantize_row(type, q, y, n) == SWA_OK ? 0 : -1;
}

static const char *type_name(uint32_t t)
{
    if (swa_type_name(t)) return swa_type_name(t);
    switch (t) {
    case GW_F32: return "F32";
    case GW_F16: return "F16";
    case GW_BF16: return "BF16";
    case GW_Q8_0: return "Q8_0";
    case GW_Q4_0: return "Q4_0";
    case GW_Q4_K: return "Q4_K";
    case GW_Q5_K: return "Q5_K";
    case GW_Q6_K: return "Q6_K";
    default: return "?";
    }
}

/* ==== (a) hand-built blocks ==== */

/* One Q4_K block. d = 0.5, dmin = 0.25; sub-block scales and mins (6 bits each):
       sc = {1, 17, 33, 63,  5, 20, 47, 62}     m = {0, 9, 40, 63,  3, 16, 31, 50}
   packed as ggml's get_scale_min_k4 reads them:
       bytes 0-3:  sc[j] | (sc[j+4] >> 4) << 6    =   1,  81, 161, 255
       bytes 4-7:  m[j]  | (m[j+4]  >> 4) << 6    =   0,  73, 104, 255
       bytes 8-11: (sc[j+4] & 15) | (m[j+4] & 15) << 4  =  53,  4, 255,  46
   qs[i] = (7i + 3) mod 256. Element e lies in 64-group g = e / 64 at k = e % 64: sub-block
   2g + (k >= 32), quant = low nibble of qs[32g + k] for k < 32, else high nibble of
   qs[32g + k - 32]; value = d*sc*q - dmin*m. */
static const int k_sc[8] = {1, 17, 33, 63, 5, 20, 47, 62}, k_mn[8] = {0, 9, 40, 63, 3, 16, 31, 50};

/* The 16 bytes this Q4_K block and the Q5_K block below start with: d, dmin, the packed scales
   and mins. */
static void put_k_head(uint8_t *b)
{
    static const uint8_t packed[12] = {1, 81, 161, 255, 0, 73, 104, 255, 53, 4, 255, 46};
    put_f16(b, 0x3800);            /* 0.5 */
    put_f16(b + 2, 0x3400);        /* 0.25 */
    memcpy(b + 4, packed, 12);
}

/* The Q4_K block above, and one Q5_K block: Q4_K's d, dmin, scales, mins and qs, and
   qh[l] = (29l + 11) mod 256 between the scales and qs. Element e = 64g + k (k < 64) is element
   l = k % 32 of sub-block s = 2g + (k >= 32): its nibble as in Q4_K, plus (Q5_K) 16 when bit s
   of qh[l] is set. Every element is checked, and a few worked out in full:
     Q4_K e = 0:   qs[0]   =   3, low  3, sub-block 0: 0.5*1*3   - 0.25*0  =   1.5
          e = 70:  qs[38]  =  13, low 13, sub-block 2: 0.5*33*13 - 0.25*40 = 204.5
          e = 100: qs[36]  = 255, high 15, sub-block 3: 0.5*63*15 - 0.25*63 = 456.75
          e = 200: qs[104] = 219, low 11, sub-block 6: 0.5*47*11 - 0.25*31 = 250.75
          e = 255: qs[127] = 124, high 7, sub-block 7: 0.5*62*7  - 0.25*50 = 204.5
     Q5_K e = 0:   qs[0]   =   3 low   3, qh[0]  =  11 bit 0 = 1: q = 19, 0.5*1*19  - 0.25*0  =   9.5
          e = 45:  qs[13]  =  94 high  5, qh[13] = 132 bit 1 = 0: q =  5, 0.5*17*5  - 0.25*9  =  40.25
          e = 100: qs[36]  = 255 high 15, qh[4]  = 127 bit 3 = 1: q = 31, 0.5*63*31 - 0.25*63 = 960.75
          e = 200: qs[104] = 219 low  11, qh[8]  = 243 bit 6 = 1: q = 27, 0.5*47*27 - 0.25*31 = 626.75
          e = 255: qs[127] = 124 high  7, qh[31] = 142 bit 7 = 1: q = 23, 0.5*62*23 - 0.25*50 = 700.5
   The library reads the Q5_K block the same way. */
static void test_k_hand_blocks(void **state)
{
    static const struct { const char *name; uint32_t type; int with_qh, at[5]; float worked[5]; } blocks[] = {
        {"Q4_K", GW_Q4_K, 0, {0, 70, 100, 200, 255}, {1.5f, 204.5f, 456.75f, 250.75f, 204.5f}},
        {"Q5_K", GW_Q5_K, 1, {0, 45, 100, 200, 255}, {9.5f, 40.25f, 960.75f, 626.75f, 700.5f}},
    };
    size_t t;
    (void)state;
    for (t = 0; t < sizeof blocks / sizeof blocks[0]; t++) {
        int with_qh = blocks[t].with_qh, e, i;
        uint8_t b[176], *qs = b + (with_qh ? 48 : 16);
        float y[256];
        assert_int_equal(gw_row_bytes(blocks[t].type, 256), with_qh ? 176 : 144);
        put_k_head(b);
        for (i = 0; i < 32 && with_qh; i++) b[16 + i] = (uint8_t)(29 * i + 11);
        for (i = 0; i < 128; i++) qs[i] = (uint8_t)(7 * i + 3);
        assert_int_equal(gw_dequant_row(blocks[t].type, b, y, 256), 0);
        for (e = 0; e < 256; e++) {
            int g = e / 64, k = e % 64, s = 2 * g + (k >= 32), l = k % 32;
            int q = (k < 32 ? qs[32 * g + l] & 15 : qs[32 * g + l] >> 4) + (with_qh ? 16 * ((b[16 + l] >> s) & 1) : 0);
            float want = 0.5f * (float)k_sc[s] * (float)q - 0.25f * (float)k_mn[s];
            if (y[e] != want)
                fail_msg("%s element %d: got %g, want %g (sub-block %d, q %d)", blocks[t].name, e, y[e], want, s, q);
        }
        for (i = 0; i < 5; i++) assert_true(y[blocks[t].at[i]] == blocks[t].worked[i]);
        if (with_qh) {
            float z[256];
            assert_int_equal(swa_dequantize_row(SWA_TYPE_Q5_K, b, z, 256), SWA_OK);
            assert_memory_equal(y, z, sizeof y);
        }
    }
}

/* One Q6_K block: ql[i] = (11i + 5) mod 256, qh[i] = (37i + 1) mod 256, d = 0.25, scales
   {1, -2, 3, -4, 5, -6, 7, -8, 127, -128, 10, -10, 20, -20, 64, -64}. Element e lies in half
   h = e / 128; there k = e % 128 is c = k / 32 (0..3), l = k % 32; its low 4 bits are nibble
   (c >= 2) of ql[64h + 32(c%2) + l], its high 2 bits are bits 2c, 2c+1 of qh[32h + l], and its
   scale is scales[8h + 2c + l/16]; value = d * scale * (q - 32). */
static void test_q6_k_hand_block(void **state)
{
    static const int8_t sc[16] = {1, -2, 3, -4, 5, -6, 7, -8, 127, -128, 10, -10, 20, -20, 64, -64};
    uint8_t b[210];
    float y[256];
    int e, i;
    (void)state;
    assert_int_equal(gw_row_bytes(GW_Q6_K, 256), 210);
    for (i = 0; i < 128; i++) b[i] = (uint8_t)(11 * i + 5);
    for (i = 0; i < 64; i++) b[128 + i] = (uint8_t)(37 * i + 1);
    memcpy(b + 192, sc, 16);
    put_f16(b + 208, 0x3400);      /* 0.25 */
    assert_int_equal(gw_dequant_row(GW_Q6_K, b, y, 256), 0);

    for (e = 0; e < 256; e++) {
        int h = e / 128, k = e % 128, c = k / 32, l = k % 32;
        int lo = (b[64 * h + 32 * (c % 2) + l] >> (c >= 2 ? 4 : 0)) & 15;
        int hi = (b[128 + 32 * h + l] >> (2 * c)) & 3;
        int s = sc[8 * h + 2 * c + l / 16];
        float want = 0.25f * (float)s * (float)((lo | hi << 4) - 32);
        if (y[e] != want) fail_msg("Q6_K element %d: got %g, want %g", e, y[e], want);
    }
    /* worked out in full:
       e = 0:   ql[0]  =   5 low  5, qh[0]  =   1 bits 0-1 = 1: q = 21-32 = -11, scale 1:    -2.75
       e = 70:  ql[6]  =  71 high 4, qh[6]  = 223 bits 4-5 = 1: q = 20-32 = -12, scale 5:   -15
       e = 150: ql[86] = 183 low  7, qh[54] = 207 bits 0-1 = 3: q = 55-32 =  23, scale -128: -736
       e = 200: ql[72] =  29 high 1, qh[40] = 201 bits 4-5 = 0: q =  1-32 = -31, scale 20:  -155
       e = 255: ql[127]= 122 high 7, qh[63] =  28 bits 6-7 = 0: q =  7-32 = -25, scale -64:  400 */
    assert_true(y[0] == -2.75f);
    assert_true(y[70] == -15.0f);
    assert_true(y[150] == -736.0f);
    assert_true(y[200] == -155.0f);
    assert_true(y[255] == 400.0f);
}

/* ==== (b) round trips ==== */

/* Bounds on the RMS error for unit Gaussian data, per type. Measured over 2^22 values:
   F16 2.1e-4, BF16 1.7e-3, Q8_0 5.4e-3, Q6_K 1.77e-2, Q5_K 3.6e-2, Q4_K 7.1e-2, Q4_0 8.6e-2.
   Each bound leaves room for the spread of a single row of 256. */
static const struct { uint32_t type; double bound; } round_trip[] = {
    {GW_F32, 0.0}, {GW_F16, 3e-4}, {GW_BF16, 2.5e-3}, {GW_Q8_0, 7e-3},
    {GW_Q6_K, 0.023}, {GW_Q5_K, 0.047}, {GW_Q4_K, 0.09}, {GW_Q4_0, 0.11},
    /* the types the writer quantizes but does not decode itself, by bits per value */
    {GW_Q5_1, 0.05}, {GW_Q5_0, 0.06}, {GW_IQ4_NL, 0.1}, {GW_IQ4_XS, 0.1}, {GW_Q4_1, 0.11},
    {GW_Q3_K, 0.2}, {GW_Q2_K, 0.35},
    /* MXFP4 (outside the ordering below: 4 bits like IQ4_NL, with a power-of-two scale) */
    {GW_MXFP4, 0.15},
};
#define N_ORDERED 15   /* the rows above MXFP4's */

static double rms_error(uint32_t type, const float *x, int64_t n, float *y, uint8_t *q)
{
    double e = 0;
    int64_t i;
    gw_convert_row(type, x, q, n);
    assert_int_equal(decode_row(type, q, y, n), 0);
    for (i = 0; i < n; i++) {
        double d = (double)y[i] - x[i];
        if (!isfinite(y[i])) fail_msg("%s: element %lld decodes to %g", type_name(type), (long long)i, y[i]);
        e += d * d;
    }
    return sqrt(e / (double)n);
}

static void test_round_trips(void **state)
{
    static const int64_t lengths[3] = {256, 512, 4096};
    float *x = (float *)malloc(4096 * sizeof *x), *y = (float *)malloc(4096 * sizeof *y);
    uint8_t *q = (uint8_t *)malloc(4096 * 4);
    double at4096[sizeof round_trip / sizeof round_trip[0]];
    size_t t;
    int li, seed;
    (void)state;
    for (t = 0; t < sizeof round_trip / sizeof round_trip[0]; t++) {
        uint32_t type = round_trip[t].type;
        for (li = 0; li < 3; li++) {
            double worst = 0;
            int64_t n = lengths[li];
            assert_true(gw_row_bytes(type, n) > 0);
            for (seed = 1; seed <= 8; seed++) {
                double e;
                gaussian(x, n, (uint64_t)(seed * 1000 + li));
                e = rms_error(type, x, n, y, q);
                if (e > worst) worst = e;
            }
            if (worst > round_trip[t].bound)
                fail_msg("%s, n = %lld: RMS error %.5f above the bound %.5f", type_name(type), (long long)n,
                         worst, round_trip[t].bound);
            if (n == 4096) at4096[t] = worst;
        }
        print_message("%-5s worst RMS error over 8 rows of 4096 unit Gaussians: %.5f (bound %.5f)\n",
                      type_name(type), at4096[t], round_trip[t].bound);
    }
    /* more bits, less error: F32 < F16 < BF16 < Q8_0 < Q6_K < Q5_K < Q4_K < Q4_0 */
    for (t = 1; t < 8; t++) assert_true(at4096[t - 1] < at4096[t]);
    /* and Q5_1 < Q5_0 < IQ4_NL < IQ4_XS < Q4_1 < Q3_K < Q2_K */
    for (t = 9; t < N_ORDERED; t++) assert_true(at4096[t - 1] < at4096[t]);
    /* MXFP4's codes are spaced as floats and its scale is a power of two, so a block's largest
       value can lie up to a quarter of it beyond the top code: more error than the other 4-bit
       types (Q4_1 the most of them), less than Q3_K */
    assert_true(at4096[N_ORDERED] > at4096[12] && at4096[N_ORDERED] < at4096[13]);
    free(x);
    free(y);
    free(q);
}

static const uint32_t types[] = {GW_F16, GW_BF16, GW_Q8_0, GW_Q4_0, GW_Q4_K, GW_Q5_K, GW_Q6_K, GW_Q4_1,
                                  GW_Q5_0, GW_Q5_1, GW_Q2_K, GW_Q3_K, GW_IQ4_NL, GW_IQ4_XS, GW_MXFP4};
#define N_ALL_TYPES (int)(sizeof types / sizeof types[0])

/* Rows that trip up quantizers: all zero, constant, all negative, one outlier, small values.
   ("Small" stops at 1e-4: every block type keeps its scale in f16, so below about 1e-5 the
   scale itself is a subnormal half and the error grows; that is the format, not the code.) */
static void test_awkward_rows(void **state)
{
    float x[512], y[512];
    uint8_t q[512 * 4];
    int t, i, kind;
    (void)state;
    for (t = 0; t < N_ALL_TYPES; t++) {
        for (kind = 0; kind < 5; kind++) {
            double amax = 0, e;
            for (i = 0; i < 512; i++) {
                switch (kind) {
                case 0: x[i] = 0.0f; break;
                case 1: x[i] = 0.375f; break;
                case 2: x[i] = -1.0f - (float)(i % 17) / 16.0f; break;
                case 3: x[i] = i == 300 ? 100.0f : (float)((i * 37) % 11 - 5) / 10.0f; break;
                default: x[i] = (float)((i * 37) % 11 - 5) * 1e-4f; break;
                }
                if (fabs(x[i]) > amax) amax = fabs(x[i]);
            }
            gw_convert_row(types[t], x, q, 512);
            assert_int_equal(decode_row(types[t], q, y, 512), 0);
            for (e = 0, i = 0; i < 512; i++) {
                if (!isfinite(y[i])) fail_msg("%s, row kind %d: element %d is %g", type_name(types[t]), kind, i, y[i]);
                if (fabs(y[i] - x[i]) > e) e = fabs(y[i] - x[i]);
            }
            if (kind == 0 && e != 0) fail_msg("%s: a zero row does not come back as zeros", type_name(types[t]));
            /* no element may be off by more than a fifth of the row's largest magnitude (a 4-bit
               step is at most 1/8 of a block's range, except where an outlier stretches it);
               Q2_K's four levels put 11 distinct values up to a third of their range off, and
               MXFP4's largest code, 1.5 * 2^floor(log2 max), leaves values up to a quarter of
               the largest off (ggml's choice of the exponent) */
            if (e > (types[t] == GW_Q2_K ? 0.34 : types[t] == GW_MXFP4 ? 0.25 : 0.2) * amax + 1e-9) fail_msg("%s, row kind %d: max error %g, largest value %g",
                                                 type_name(types[t]), kind, e, amax);
        }
    }
}

/* NaN and infinity in a row: what comes out is undefined, but quantizing must not crash, and the
   other blocks of the row must come back as usual. */
static void test_non_finite_rows(void **state)
{
    float x[512], y[512];
    uint8_t q[512 * 4];
    int t, i;
    (void)state;
    for (t = 0; t < N_ALL_TYPES; t++) {
        gaussian(x, 512, 99);
        x[3] = NAN;
        x[100] = INFINITY;
        x[200] = -INFINITY;
        /* a sub-block of zeros and one denormal: its range is too small for a finite grid */
        for (i = 32; i < 64; i++) x[i] = i == 40 ? 1e-45f : 0.0f;
        gw_convert_row(types[t], x, q, 512);
        assert_int_equal(decode_row(types[t], q, y, 512), 0);
        for (i = 256; i < 512; i++)       /* the second 256 values hold no bad value */
            /* 0.5 of a unit Gaussian; Q2_K's and Q3_K's 4 and 8 levels per 16 values allow 1,
               and so does MXFP4's top code (a quarter of a block's largest, up to 4, off) */
            if (fabsf(y[i] - x[i]) > (types[t] == GW_Q2_K || types[t] == GW_Q3_K || types[t] == GW_MXFP4 ? 1.0f : 0.5f)) fail_msg("%s: element %d is %g, want about %g", type_name(types[t]), i, y[i], x[i]);
    }
}

/* The library quantizes a Q8_0 key/value cache itself: the same bytes as the writer's Q8_0
   quantizer (ggml's layout and rounding), on Gaussians, zeros, values that round at .5 and
   numbers of every magnitude. */
static void test_cache_q8_0_matches_writer(void **state)
{
    float x[32 * 64];
    uint8_t a[34 * 64], b[34 * 64];
    int i;
    (void)state;
    gaussian(x, 32 * 64, 5);
    for (i = 0; i < 32; i++) x[32 + i] = 0.0f;                           /* an all-zero block */
    for (i = 0; i < 32; i++) x[64 + i] = i == 0 ? 127.0f : (float)i + 0.5f; /* d = 1: halves */
    for (i = 0; i < 32 * 64; i++) x[i] *= i >= 1024 ? 1e-3f * (float)(i % 7 + 1) : 1.0f;
    swa__store_q8_0_ref(x, a, 32 * 64);
    gw_convert_row(GW_Q8_0, x, b, 32 * 64);
    assert_memory_equal(a, b, sizeof a);
}

static void test_bad_lengths(void **state)
{
    float y[512];
    uint8_t q[1024] = {0};
    (void)state;
    assert_int_equal(gw_row_bytes(GW_Q4_K, 255), 0);
    assert_int_equal(gw_row_bytes(GW_Q6_K, 288), 0);
    assert_int_equal(gw_row_bytes(GW_Q4_K, 512), 288);
    assert_int_equal(gw_row_bytes(GW_Q5_K, 512), 352);
    assert_int_equal(gw_row_bytes(GW_Q5_K, 320), 0);
    assert_int_equal(gw_row_bytes(GW_Q6_K, 512), 420);
    assert_int_equal(gw_row_bytes(7, 256), 192);   /* Q5_1 */
    assert_int_equal(gw_row_bytes(9, 256), 0);     /* Q8_1: not written */
    assert_int_equal(gw_dequant_row(GW_Q4_K, q, y, 288), -1);
    assert_int_equal(gw_dequant_row(GW_Q4_0, q, y, 33), -1);
    assert_int_equal(gw_dequant_row(9, q, y, 32), -1);
    assert_int_equal(gw_dequant_row(GW_Q8_0, q, y, 0), 0);
}

/* ==== (c) the library's dequantizer against the writer's ==== */

/* Compare bit for bit; a mismatch names the type, the element and both values. */
static void same_bits(uint32_t type, const void *row, int64_t n, const char *what)
{
    float *a = (float *)malloc((size_t)n * sizeof *a), *b = (float *)malloc((size_t)n * sizeof *b);
    swa_status st = swa_dequantize_row(type, row, a, n);
    int64_t i;
    if (st != SWA_OK)
        fail_msg("swa_dequantize_row(%s) returned %s: swa.h lacks %s", type_name(type), swa_status_str(st),
                 type_name(type));
    assert_int_equal(gw_dequant_row(type, row, b, n), 0);
    for (i = 0; i < n; i++)
        if (bits(a[i]) != bits(b[i]))
            fail_msg("%s (%s): element %lld: library %g (0x%08x), writer %g (0x%08x)", type_name(type), what,
                     (long long)i, a[i], bits(a[i]), b[i], bits(b[i]));
    free(a);
    free(b);
}

/* Random bytes are fine for the scale-free types and for Q8_0/Q4_0 (every byte pattern is a
   block); for the K-quants we also keep d and dmin finite, so that NaN payload rules stay out
   of it. Quantized Gaussian rows come on top, as the data real files hold. */
static void compare_type(uint32_t type, int seeds)
{
    static float x[4096];
    static uint8_t row[4096 * 4];
    size_t rb = gw_row_bytes(type, 4096), i;
    size_t blk = type == GW_Q4_K ? 144 : type == GW_Q5_K ? 176 : type == GW_Q6_K ? 210 : 0;
    int seed;
    for (seed = 0; seed < seeds; seed++) {
        random_bytes(row, rb, (uint64_t)seed + 11);
        for (i = 0; blk && i < rb; i += blk) {
            uint16_t h;
            size_t at = type == GW_Q6_K ? 208 : 0;
            memcpy(&h, row + i + at, 2);
            h &= 0xbbff;                             /* clear an exponent bit: finite */
            memcpy(row + i + at, &h, 2);
            if (type != GW_Q6_K) {                     /* dmin */
                memcpy(&h, row + i + 2, 2);
                h &= 0xbbff;
                memcpy(row + i + 2, &h, 2);
            }
        }
        same_bits(type, row, 4096, "random bytes");
        gaussian(x, 4096, (uint64_t)seed + 500);
        gw_convert_row(type, x, row, 4096);
        same_bits(type, row, 4096, "quantized Gaussian data");
    }
}

static void test_library_agrees(void **state)
{
    static uint16_t all[65536];
    uint32_t i;
    (void)state;
    for (i = 0; i < 65536; i++) all[i] = (uint16_t)i;
    same_bits(GW_F16, all, 65536, "every half");
    same_bits(GW_BF16, all, 65536, "every bfloat16");
    compare_type(GW_F32, 4);
    compare_type(GW_Q8_0, 16);
    compare_type(GW_Q4_0, 16);
    compare_type(GW_MXFP4, 16);   /* every byte a block, e = 255's infinities included */
}

/* Fails until swa.h dequantizes K-quants: swa_dequantize_row must return SWA_OK for them. */
static void test_library_agrees_k_quants(void **state)
{
    (void)state;
    compare_type(GW_Q4_K, 16);
    compare_type(GW_Q5_K, 16);
    compare_type(GW_Q6_K, 16);
}

/* ==== (d) llama.cpp's own data ==== */

/* The files in ../shared/models/quant were quantized by llama.cpp's llama-quantize (the Q5_K_M,
   Q3_K_M, Q2_K, Q4_1, Q5_0, IQ4_NL and IQ4_XS mixes); tests/data/quant_ref.txt holds rows of
   them as llama.cpp's Python package dequantizes them (tools/reference/ref_dequant.py wrote it): each
   row's sum, sum of squares and first and last 8 values, and whole rows of a Q5_1 file (raw
   bytes and values, as ../shared has no Q5_1 file). swa_dequantize_row must give the same: 1e-6
   relative per value (both compute each value with the same operations in the same order, so
   they should be equal), and the sums within 1e-6 of sum |v|. */
#define QUANT_DIR "../shared/models/quant/"
#define PEER_Q5_K_M QUANT_DIR "peer-Q5_K_M.gguf"
#define QUANT_REF "tests/data/quant_ref.txt"

typedef struct ref_counts { int files, tensors, rows, values, exact, quantized; } ref_counts;

static void check_value(const char *type, long long r, int k, float v, float want, ref_counts *c)
{
    if (fabsf(v - want) > 1e-6f * fabsf(want)) fail_msg("%s row %lld value %d: %.9g, llama.cpp's %.9g", type, r, k, v, want);
    c->exact += v == want;
    c->values++;
}

/* "row INDEX SUM SUMSQ F0..F7 L0..L7" against row r of t. */
static void check_row(const swa_gguf_tensor *t, const char *line, float *y, ref_counts *c)
{
    long long r;
    double sum, sumsq, got_sum = 0, got_sumsq = 0, abs_sum = 0;
    const char *p;
    char *end;
    int64_t i;
    int k;
    if (sscanf(line, "row %lld %lf %lf", &r, &sum, &sumsq) != 3) fail_msg("%s: cannot read \"%s\"", QUANT_REF, line);
    assert_true(r >= 0 && r < t->ne[1]);
    assert_int_equal(swa_dequantize_row(t->type, (const uint8_t *)t->data + (size_t)r * (t->nbytes / (uint64_t)t->ne[1]),
                                        y, t->ne[0]), SWA_OK);
    for (i = 0; i < t->ne[0]; i++) {
        got_sum += y[i];
        got_sumsq += (double)y[i] * y[i];
        abs_sum += fabs(y[i]);
    }
    if (fabs(got_sum - sum) > 1e-6 * abs_sum || fabs(got_sumsq - sumsq) > 1e-6 * sumsq)
        fail_msg("%s row %lld: sum %.9g, sum of squares %.9g; llama.cpp's %.9g, %.9g", swa_type_name(t->type), r,
                 got_sum, got_sumsq, sum, sumsq);
    p = line;
    for (k = 0; k < 4; k++) p = strchr(p, ' ') + 1;     /* past "row", the index and the two sums */
    for (k = 0; k < 16; k++, p = end) {
        float want = strtof(p, &end);
        if (end == p) fail_msg("%s: row %lld has fewer than 16 values", QUANT_REF, r);
        check_value(swa_type_name(t->type), r, k, y[k < 8 ? k : t->ne[0] - 16 + k], want, c);
    }
    c->rows++;
}

/* A line "KIND TYPE NE0 HEX" of the reference (KIND "block" or "quantize"): TYPE's name in type
   and its id in *id, NE0 (1..1024) in *ne0, and the bytes in raw (at most cap); returns how many. */
static int read_hex_line(const char *line, char type[16], uint32_t *id, long long *ne0, uint8_t *raw, int cap)
{
    char kind[16];
    const char *p;
    int at, n;
    if (sscanf(line, "%15s %15s %lld %n", kind, type, ne0, &at) != 3 || *ne0 <= 0 || *ne0 > 1024)
        fail_msg("%s: cannot read \"%.60s\"", QUANT_REF, line);
    for (*id = 0; *id < 64 && !(swa_type_name(*id) && !strcmp(swa_type_name(*id), type)); (*id)++) {}
    assert_true(*id < 64);
    for (n = 0, p = line + at; p[0] && p[1] && p[0] != '\n' && n < cap; n++, p += 2) {
        unsigned v;
        if (sscanf(p, "%2x", &v) != 1) fail_msg("%s: bad hex in a %s %s line", QUANT_REF, type, kind);
        raw[n] = (uint8_t)v;
    }
    return n;
}

/* The next line of f, "WORD X0 X1 ..": its first n numbers in x (of a TYPE row, for the messages). */
static void read_numbers(FILE *f, const char *word, const char *type, long long n, float *x)
{
    static char text[65536];
    size_t len = strlen(word);
    const char *p;
    char *end;
    long long k;
    if (!fgets(text, sizeof text, f) || strncmp(text, word, len) || text[len] != ' ')
        fail_msg("%s: a %s line without its \"%s\" line", QUANT_REF, type, word);
    for (k = 0, p = text + len + 1; k < n; k++, p = end) {
        x[k] = strtof(p, &end);
        if (end == p) fail_msg("%s: a %s row has fewer than %lld %s", QUANT_REF, type, n, word);
    }
}

/* "block TYPE NE0 HEX" and the next line's "values V0 .." */
static void check_block(const char *line, FILE *f, ref_counts *c)
{
    char type[16];
    long long ne0;
    int k;
    uint32_t id;
    uint8_t raw[2048];
    float y[1024], want[1024];
    k = read_hex_line(line, type, &id, &ne0, raw, (int)sizeof raw);
    assert_int_equal(k, ne0 / swa_type_block_size(id) * swa_type_block_bytes(id));
    assert_int_equal(swa_dequantize_row(id, raw, y, ne0), SWA_OK);
    read_numbers(f, "values", type, ne0, want);
    for (k = 0; k < ne0; k++) check_value(type, 0, k, y[k], want[k], c);
    c->rows++;
}

/* "quantize TYPE NE0 HEX" and the next line's "floats V0 ..": the GGUF writer (swa-quantize's
   quantizer) turns the floats into the same bytes as gguf's quantizer. */
static void check_quantize(const char *line, FILE *f, ref_counts *c)
{
    char type[16];
    long long ne0;
    int k, n;
    uint32_t id;
    uint8_t want[1024], got[1024];
    float x[1024];
    n = read_hex_line(line, type, &id, &ne0, want, (int)sizeof want);
    assert_int_equal(n, gw_row_bytes(id, ne0));
    read_numbers(f, "floats", type, ne0, x);
    gw_convert_row(id, x, got, ne0);
    for (k = 0; k < n; k++)
        if (got[k] != want[k])
            fail_msg("%s row of %lld (first float %.9g): byte %d is 0x%02x, gguf's quantizer wrote 0x%02x", type, ne0,
                     x[0], k, got[k], want[k]);
    c->quantized++;
}

static void test_llama_cpp_rows(void **state)
{
    swa_gguf *g = NULL;
    swa_error err;
    const swa_gguf_tensor *t = NULL;
    FILE *f;
    char line[4096], types_seen[256] = "";
    float *y = NULL;
    ref_counts c = {0, 0, 0, 0, 0, 0};
    int skipping = 0;
    (void)state;
    f = fopen(QUANT_REF, "r");
    if (!f) fail_msg("%s: cannot open (run the tests from the repository's top folder)", QUANT_REF);
    while (fgets(line, sizeof line, f)) {
        char name[128], type[16], path[256];
        long long ne0, ne1;
        if (line[0] == '#') continue;
        if (sscanf(line, "file %127s", name) == 1) {
            if (g) swa_gguf_close(g);
            g = NULL;
            t = NULL;
            snprintf(path, sizeof path, QUANT_DIR "%s", name);
            skipping = access(path, R_OK) != 0;
            if (skipping) print_message("%s is absent: skipping its rows\n", path);
            else if (swa_gguf_open(path, &g, &err) != SWA_OK) fail_msg("%s", err.msg);
            c.files += !skipping;
            continue;
        }
        if (!strncmp(line, "block ", 6)) {
            check_block(line, f, &c);
            continue;
        }
        if (!strncmp(line, "quantize ", 9)) {
            check_quantize(line, f, &c);
            continue;
        }
        if (skipping) continue;
        if (sscanf(line, "tensor %127s %15s %lld %lld", name, type, &ne0, &ne1) == 4) {
            int64_t at = swa_gguf_tensor_find(g, name);
            if (at < 0) fail_msg("no tensor %s", name);
            t = swa_gguf_tensor_at(g, at);
            assert_string_equal(swa_type_name(t->type), type);
            assert_true(t->ne[0] == ne0 && t->ne[1] == ne1);
            free(y);
            y = (float *)malloc(sizeof(float) * (size_t)ne0);
            if (!strstr(types_seen, type) && strlen(types_seen) + strlen(type) + 2 < sizeof types_seen)
                strcat(strcat(types_seen, " "), type);
            c.tensors++;
            continue;
        }
        assert_non_null(t);
        check_row(t, line, y, &c);
    }
    fclose(f);
    free(y);
    if (g) swa_gguf_close(g);
    assert_true(c.rows >= 3);
    print_message("%d rows of %d tensors in %d files (types%s) and whole rows of Q5_1 and MXFP4 agree with llama.cpp's "
                  "dequantization; %d of %d values bit for bit; %d rows quantized to the same bytes\n", c.rows, c.tensors,
                  c.files, types_seen, c.exact, c.values, c.quantized);
    assert_true(c.quantized >= 10);
}

/* Every file of ../shared/models/quant loads and runs, and its logits are within twice llama.cpp's
   own error of the exact answer: the same model with every tensor dequantized to F32 (by
   swa_dequantize_row, which test_llama_cpp_rows ties to llama.cpp's values), written over a
   copy of base-f32.gguf, which has the same metadata, names and shapes. The bound is twice
   llama.cpp's own error on each file: llama.cpp c392e50 (through libllama, F32 cache, these
   six tokens, 4 then 1 then 1, logits after the sixth) is 1.50-3.17% of the largest logit from
   the same exact answer (it computes that answer to 1.5e-6 of ours), figures in peer_files;
   it holds for the best kernels and for the reference. The cache holds F32 (as
   `--kv f32`). The two are not compared bit for bit: their float kernels (RMSNorm sums in 8
   lanes) differ in the last bit, which can flip the rounding of an 8-bit activation and move a
   logit by one activation step times a weight (test_kernels compares the kernels themselves). */
static const char *const peer_files[] = {"peer-Q5_K_M.gguf", "peer-Q3_K_M.gguf", "peer-Q2_K.gguf", "peer-Q4_1.gguf",
                                         "peer-Q5_0.gguf", "peer-IQ4_NL.gguf", "peer-IQ4_XS.gguf"};
static const double llama_cpp_error[] = {0.0209, 0.0244, 0.0317, 0.0172, 0.0168, 0.0150, 0.0223};   /* of the largest logit */

/* A copy of base-f32.gguf with the tensors of `path` dequantized into it. */
static void write_dequantized(const char *path, const char *out)
{
    swa_gguf *q, *base;
    swa_error err;
    size_t size;
    uint8_t *bytes = tu_read_file(QUANT_DIR "base-f32.gguf", &size);
    int64_t i, r;
    if (swa_gguf_open(path, &q, &err) != SWA_OK || swa_gguf_open(QUANT_DIR "base-f32.gguf", &base, &err) != SWA_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(swa_gguf_tensor_count(q), swa_gguf_tensor_count(base));
    for (i = 0; i < swa_gguf_tensor_count(q); i++) {
        const swa_gguf_tensor *t = swa_gguf_tensor_at(q, i), *b;
        const int64_t rows = t->ne[1] * t->ne[2] * t->ne[3];
        char name[128];
        float *dst;
        assert_true(t->name.len < sizeof name);
        memcpy(name, t->name.ptr, t->name.len);
        name[t->name.len] = '\0';
        assert_true(swa_gguf_tensor_find(base, name) >= 0);
        b = swa_gguf_tensor_at(base, swa_gguf_tensor_find(base, name));
        dst = (float *)(bytes + swa_gguf_data_offset(base) + b->offset);
        assert_true(b->type == SWA_TYPE_F32 && b->nbytes == (uint64_t)(t->ne[0] * rows) * 4 && t->ne[0] == b->ne[0]);
        for (r = 0; r < rows; r++)
            assert_int_equal(swa_dequantize_row(t->type, (const uint8_t *)t->data + (size_t)r * (t->nbytes / (uint64_t)rows),
                                                dst + r * t->ne[0], t->ne[0]), SWA_OK);
    }
    tu_write_file(out, bytes, size);
    free(bytes);
    swa_gguf_close(q);
    swa_gguf_close(base);
}

/* The logits after 4 tokens at once (the tile kernels) and 2 more one at a time. */
static void last_logits(const char *path, int32_t kernels, float *out)
{
    static const int32_t tok[6] = {1, 300, 301, 72, 105, 33};
    swa_ctx_config cfg;
    swa_model *m;
    swa_ctx *c;
    swa_error err;
    const float *logits;
    if (swa_model_load(path, &m, &err) != SWA_OK) fail_msg("%s: %s", path, err.msg);
    memset(&cfg, 0, sizeof cfg);
    cfg.kernels = kernels;
    cfg.kv_type = SWA_KV_F32;
    cfg.n_threads = 2;
    if (swa_ctx_create(m, &cfg, &c, &err) != SWA_OK) fail_msg("%s", err.msg);
    if (swa_ctx_eval(c, tok, 4, &logits, &err) != SWA_OK || swa_ctx_eval(c, tok + 4, 1, &logits, &err) != SWA_OK ||
        swa_ctx_eval(c, tok + 5, 1, &logits, &err) != SWA_OK)
        fail_msg("%s", err.msg);
    memcpy(out, logits, 512 * sizeof(float));
    swa_ctx_free(c);
    swa_model_free(m);
}

static void test_llama_cpp_models_run(void **state)
{
    float exact[512], best[512], ref[512];
    char path[256], deq[64];
    size_t k;
    int i, n_files = 0;
    (void)state;
    for (k = 0; k < sizeof peer_files / sizeof peer_files[0]; k++) {
        double max_abs = 0, err_best = 0, err_ref = 0, best_ref = 0;
        snprintf(path, sizeof path, QUANT_DIR "%s", peer_files[k]);
        if (access(path, R_OK) != 0 || access(QUANT_DIR "base-f32.gguf", R_OK) != 0) {
            print_message("%s or base-f32.gguf is absent: skipping\n", path);
            continue;
        }
        tu_tmp_path(deq, sizeof deq, "deq");
        write_dequantized(path, deq);
        last_logits(deq, SWA_KERNELS_REF, exact);
        last_logits(path, SWA_KERNELS_BEST, best);
        last_logits(path, SWA_KERNELS_REF, ref);
        remove(deq);
        for (i = 0; i < 512; i++) {
            if (!isfinite(best[i]) || !isfinite(ref[i])) fail_msg("%s: logit %d is %g / %g", peer_files[k], i, best[i], ref[i]);
            if (fabs(exact[i]) > max_abs) max_abs = fabs(exact[i]);
            if (fabs(best[i] - exact[i]) > err_best) err_best = fabs(best[i] - exact[i]);
            if (fabs(ref[i] - exact[i]) > err_ref) err_ref = fabs(ref[i] - exact[i]);
            if (fabs(best[i] - ref[i]) > best_ref) best_ref = fabs(best[i] - ref[i]);
        }
        print_message("%-17s logits from the dequantized model's: %.2f%% of the largest (ref kernels %.2f%%; llama.cpp %.2f%%, "
                      "bound twice that); best and ref differ by %.2g\n", peer_files[k], 100 * err_best / max_abs,
                      100 * err_ref / max_abs, 100 * llama_cpp_error[k], best_ref);
        if (err_best > 2 * llama_cpp_error[k] * max_abs || err_ref > 2 * llama_cpp_error[k] * max_abs)
            fail_msg("%s: logits %g (ref %g) from the exact answer (largest %g)", peer_files[k], err_best, err_ref, max_abs);
        n_files++;
    }
    if (!n_files) skip();
}

/* The GGUF writer's quantizers against llama-quantize's: each tensor of each peer file, quantized
   by gw_convert_row from base-f32.gguf in the type llama.cpp chose for it, must come back (through
   swa_dequantize_row) with a squared error no more than 15% above llama.cpp's own over that type's
   tensors (ours fits some blocks differently; more error than that would be a worse quantizer). */
static void test_quantizers_match_llama_cpp(void **state)
{
    double ours[64] = {0}, theirs[64] = {0};
    swa_gguf *base;
    swa_error err;
    size_t k;
    int type, n_types = 0;
    (void)state;
    if (access(QUANT_DIR "base-f32.gguf", R_OK) != 0) {
        print_message(QUANT_DIR "base-f32.gguf is absent: skipping\n");
        skip();
    }
    if (swa_gguf_open(QUANT_DIR "base-f32.gguf", &base, &err) != SWA_OK) fail_msg("%s", err.msg);
    for (k = 0; k < sizeof peer_files / sizeof peer_files[0]; k++) {
        char path[256];
        swa_gguf *q;
        int64_t i, r, j;
        snprintf(path, sizeof path, QUANT_DIR "%s", peer_files[k]);
        if (access(path, R_OK) != 0) continue;
        if (swa_gguf_open(path, &q, &err) != SWA_OK) fail_msg("%s", err.msg);
        for (i = 0; i < swa_gguf_tensor_count(q); i++) {
            const swa_gguf_tensor *t = swa_gguf_tensor_at(q, i), *b;
            const int64_t n = t->ne[0], rows = t->ne[1];
            const size_t row_bytes = gw_row_bytes(t->type, n);
            uint8_t *row;
            float *mine, *llama;
            char name[128];
            if (t->type == SWA_TYPE_F32 || t->type >= 64) continue;
            memcpy(name, t->name.ptr, t->name.len);
            name[t->name.len] = '\0';
            b = swa_gguf_tensor_at(base, swa_gguf_tensor_find(base, name));
            assert_true(row_bytes > 0);
            row = (uint8_t *)malloc(row_bytes);
            mine = (float *)malloc(sizeof(float) * (size_t)n);
            llama = (float *)malloc(sizeof(float) * (size_t)n);
            for (r = 0; r < rows; r++) {
                const float *x = (const float *)b->data + r * n;
                gw_convert_row(t->type, x, row, n);
                assert_int_equal(swa_dequantize_row(t->type, row, mine, n), SWA_OK);
                assert_int_equal(swa_dequantize_row(t->type, (const uint8_t *)t->data + (size_t)r * row_bytes, llama, n), SWA_OK);
                for (j = 0; j < n; j++) {
                    ours[t->type] += ((double)mine[j] - x[j]) * ((double)mine[j] - x[j]);
                    theirs[t->type] += ((double)llama[j] - x[j]) * ((double)llama[j] - x[j]);
                }
            }
            free(row); free(mine); free(llama);
        }
        swa_gguf_close(q);
    }
    swa_gguf_close(base);
    for (type = 0; type < 64; type++) {
        if (theirs[type] == 0) continue;
        print_message("%-7s squared error %.4g, llama-quantize's %.4g (ratio %.3f)\n", swa_type_name((uint32_t)type),
                      ours[type], theirs[type], ours[type] / theirs[type]);
        if (ours[type] > 1.15 * theirs[type]) fail_msg("%s: the writer's error is %.3f times llama.cpp's", swa_type_name((uint32_t)type), ours[type] / theirs[type]);
        n_types++;
    }
    assert_true(n_types >= 5);
}

/* swa-quantize's mixes against llama-quantize's choices: tests/data/mix_types.txt (written by
   tools/reference/ref_mixes.py) has the type llama.cpp gives each matrix of two models in each named mix:
   base-f32.gguf (2 layers) and a 16-layer model from swa-mkmodel (4 query heads per key/value
   head, FFN rows that are not whole K-quant blocks). swa-quantize must choose the same type for
   every matrix. */
#define MIX_TYPES "tests/data/mix_types.txt"

static int run_quiet(const char *cmd)
{
    char full[2048];
    snprintf(full, sizeof full, "%s >/dev/null 2>&1", cmd);
    return system(full);
}

static void check_mix(const char *src, char *line, int *n_checked)
{
    char mix[32], lower[32], out[64], cmd[1024], *p, *save = NULL;
    swa_gguf *g;
    swa_error err;
    int k, bad = 0;
    if (sscanf(line, "mix %31s", mix) != 1) fail_msg("%s: cannot read \"%.40s\"", MIX_TYPES, line);
    for (k = 0; mix[k]; k++) lower[k] = (char)(mix[k] >= 'A' && mix[k] <= 'Z' ? mix[k] - 'A' + 'a' : mix[k]);
    lower[k] = '\0';
    tu_tmp_path(out, sizeof out, "mix");
    snprintf(cmd, sizeof cmd, "%s -t 2 %s %s %s", PROGRAM("swa-quantize"), src, out, lower);
    if (run_quiet(cmd) != 0) fail_msg("%s failed", cmd);
    if (swa_gguf_open(out, &g, &err) != SWA_OK) fail_msg("%s", err.msg);
    for (p = strtok_r(line + 5 + strlen(mix), " \n", &save); p; p = strtok_r(NULL, " \n", &save)) {
        char *eq = strchr(p, '=');
        int64_t at;
        assert_non_null(eq);
        *eq = '\0';
        at = swa_gguf_tensor_find(g, p);
        if (at < 0) fail_msg("%s: swa-quantize wrote no %s", mix, p);
        if (strcmp(swa_type_name(swa_gguf_tensor_at(g, at)->type), eq + 1)) {
            print_message("%s: %s is %s, llama-quantize makes it %s\n", mix, p, swa_type_name(swa_gguf_tensor_at(g, at)->type), eq + 1);
            bad++;
        }
        (*n_checked)++;
    }
    swa_gguf_close(g);
    remove(out);
    if (bad) fail_msg("%s: %d matrices differ from llama-quantize's choice", mix, bad);
}

static void test_mixes_match_llama_cpp(void **state)
{
    static char line[65536];
    char src[256] = "", made[64] = "";
    int n_checked = 0, n_models = 0, skipping = 1;
    FILE *f;
    (void)state;
#ifdef _WIN32
    print_message("skipped on Windows: the programs are driven through a POSIX shell\n");
    skip();
#endif
    if (access(PROGRAM_FILE("swa-quantize"), X_OK) != 0 || access(PROGRAM_FILE("swa-mkmodel"), X_OK) != 0) {
        print_message("build swa-quantize and swa-mkmodel first (make programs): skipping\n");
        skip();
    }
    f = fopen(MIX_TYPES, "r");
    if (!f) fail_msg("%s: cannot open (run the tests from the repository's top folder)", MIX_TYPES);
    while (fgets(line, sizeof line, f)) {
        char name[64], args[512], cmd[1024];
        if (line[0] == '#') continue;
        if (sscanf(line, "model %63s file %255s", name, src) == 2) {
            skipping = access(src, R_OK) != 0;
            if (skipping) print_message("%s is absent: skipping its mixes\n", src);
            n_models += !skipping;
            continue;
        }
        if (sscanf(line, "model %63s mkmodel %511[^\n]", name, args) == 2) {
#ifdef SWA_TEST_QUICK
            print_message("quick run: skipping the mixes of the %s model\n", name);
            skipping = 1;
            continue;
#endif
            tu_tmp_path(made, sizeof made, "mk");
            snprintf(cmd, sizeof cmd, "%s %s %s", PROGRAM("swa-mkmodel"), args, made);
            if (run_quiet(cmd) != 0) fail_msg("%s failed", cmd);
            snprintf(src, sizeof src, "%s", made);
            skipping = 0;
            n_models++;
            continue;
        }
        if (!skipping) check_mix(src, line, &n_checked);
    }
    fclose(f);
    if (made[0]) remove(made);
    if (!n_models) skip();
    print_message("%d matrices of %d models in 16 mixes: swa-quantize chooses llama-quantize's type for each\n",
                  n_checked, n_models);
}

/* A quantized input is not quantized again unless asked: swa-quantize fails, names the reason
   and the flag, and writes nothing; with --allow-requantize it converts; to F16 it just
   dequantizes. */
static void test_requantize_refused(void **state)
{
    char out[64], log[64], cmd[1024], *msg;
    (void)state;
#ifdef _WIN32
    print_message("skipped on Windows: swa-quantize is driven through a POSIX shell\n");
    skip();
#endif
    if (access(PROGRAM_FILE("swa-quantize"), X_OK) != 0 || access(QUANT_DIR "peer-Q4_1.gguf", R_OK) != 0) {
        print_message("swa-quantize or " QUANT_DIR "peer-Q4_1.gguf is absent: skipping\n");
        skip();
    }
    tu_tmp_path(out, sizeof out, "rq");
    tu_tmp_path(log, sizeof log, "rqlog");
    remove(out);
    snprintf(cmd, sizeof cmd, "%s " QUANT_DIR "peer-Q4_1.gguf %s q4_k_m 2>%s", PROGRAM("swa-quantize"), out, log);
    assert_int_not_equal(system(cmd), 0);
    assert_int_not_equal(access(out, F_OK), 0);
    msg = tu_read_text(log, NULL);
    assert_non_null(msg);
    if (!strstr(msg, "already quantized (Q4_1)") || !strstr(msg, "--allow-requantize")) fail_msg("the refusal says: %s", msg);
    snprintf(cmd, sizeof cmd, "%s " QUANT_DIR "peer-Q4_1.gguf %s q4_k_m --allow-requantize", PROGRAM("swa-quantize"), out);
    assert_int_equal(run_quiet(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s " QUANT_DIR "peer-Q4_1.gguf %s f16", PROGRAM("swa-quantize"), out);
    assert_int_equal(run_quiet(cmd), 0);
    free(msg);
    remove(out);
    remove(log);
}

/* ==== the streaming writer ==== */

static void add_metadata(gw_writer *w)
{
    static const char *const strs[3] = {"a", "bb", "ccc"};
    gw_set_alignment(w, 64);
    gw_kv_str(w, "general.architecture", "llama");
    gw_kv_u32(w, "llama.block_count", 1);
    gw_kv_array_str(w, "x.strings", 3, strs);
}

/* Tensors of every type, some shapes with more than two dimensions; the streamed file takes
   its data in uneven pieces: rows in twos and threes, raw bytes across tensor boundaries. */
static const struct { const char *name; uint32_t type, n_dims; int64_t ne[3]; } stream_tensors[] = {
    {"norm", GW_F32, 1, {96, 1, 1}},         {"a.f16", GW_F16, 2, {64, 5, 1}},
    {"a.bf16", GW_BF16, 2, {32, 3, 1}},      {"a.q8_0", GW_Q8_0, 2, {96, 7, 1}},
    {"a.q4_0", GW_Q4_0, 3, {64, 2, 3}},      {"a.q4_k", GW_Q4_K, 2, {512, 5, 1}},
    {"a.q6_k", GW_Q6_K, 2, {256, 4, 1}},     {"b.q4_k", GW_Q4_K, 2, {256, 1, 1}},
    {"a.q5_k", GW_Q5_K, 2, {768, 3, 1}},
};
#define N_STREAM (sizeof stream_tensors / sizeof stream_tensors[0])

static void test_stream_matches_memory(void **state)
{
    gw_writer *mem = gw_new(3), *st = gw_new(3);
    float *data[N_STREAM];
    size_t i, mem_size, file_size;
    uint8_t *mem_bytes, *file_bytes;
    char path[64];
    swa_gguf *g;
    swa_error err;
    (void)state;
    add_metadata(mem);
    add_metadata(st);
    for (i = 0; i < N_STREAM; i++) {
        int64_t n = stream_tensors[i].ne[0] * stream_tensors[i].ne[1] * stream_tensors[i].ne[2];
        data[i] = (float *)malloc((size_t)n * sizeof(float));
        gaussian(data[i], n, 40 + i);
        assert_int_equal(gw_tensor_f32(mem, stream_tensors[i].name, stream_tensors[i].type, stream_tensors[i].n_dims,
                                       stream_tensors[i].ne, data[i]), 0);
        assert_int_equal(gw_declare_tensor(st, stream_tensors[i].name, stream_tensors[i].type,
                                           stream_tensors[i].n_dims, stream_tensors[i].ne), 0);
    }
    assert_true(gw_data_size(st) == gw_data_size(mem));
    mem_bytes = gw_to_memory(mem, &mem_size);
    assert_non_null(mem_bytes);

    tu_tmp_path(path, sizeof path, "stream");
    assert_int_equal(gw_stream_open(st, path), 0);
    for (i = 0; i < N_STREAM; i++) {
        int64_t row = stream_tensors[i].ne[0], rows = stream_tensors[i].ne[1] * stream_tensors[i].ne[2], r = 0;
        if (i == 2) {           /* this one as raw bytes, split unevenly */
            size_t rb = gw_row_bytes(stream_tensors[i].type, row) * (size_t)rows;
            uint8_t *raw = (uint8_t *)malloc(rb);
            gw_convert_row(stream_tensors[i].type, data[i], raw, row * rows);
            assert_int_equal(gw_stream_write(st, raw, 5), 0);
            assert_int_equal(gw_stream_write(st, raw + 5, rb - 5), 0);
            free(raw);
            continue;
        }
        while (r < rows) {
            int64_t k = rows - r < 2 + (r % 2) ? rows - r : 2 + (r % 2);
            assert_int_equal(gw_stream_rows(st, data[i] + r * row, k), 0);
            r += k;
        }
    }
    if (gw_stream_close(st)) fail_msg("gw_stream_close: %s", gw_error(st));
    file_bytes = tu_read_file(path, &file_size);
    assert_int_equal(file_size, mem_size);
    assert_memory_equal(file_bytes, mem_bytes, mem_size);

    /* and the library reads it back: types, shapes, and the data decode as the writer's */
    assert_int_equal(swa_gguf_open(path, &g, &err), SWA_OK);
    assert_int_equal(swa_gguf_alignment(g), 64);
    assert_int_equal(swa_gguf_tensor_count(g), (int64_t)N_STREAM);
    for (i = 0; i < N_STREAM; i++) {
        const swa_gguf_tensor *t = swa_gguf_tensor_at(g, (int64_t)i);
        assert_int_equal(t->type, stream_tensors[i].type);
        assert_int_equal(t->ne[0], stream_tensors[i].ne[0]);
        assert_int_equal(t->nbytes, gw_row_bytes(t->type, t->ne[0]) * (size_t)(t->ne[1] * t->ne[2]));
        assert_int_equal(t->offset % 64, 0);
    }
    swa_gguf_close(g);
    remove(path);
    free(mem_bytes);
    free(file_bytes);
    for (i = 0; i < N_STREAM; i++) free(data[i]);
    gw_free(mem);
    gw_free(st);
}

static void test_stream_errors(void **state)
{
    const int64_t ne[2] = {256, 2}, bad[2] = {288, 2};
    float x[512] = {0};
    char path[64];
    gw_writer *w;
    (void)state;
    tu_tmp_path(path, sizeof path, "errors");

    /* too few bytes: close names the tensor */
    w = gw_new(3);
    assert_int_equal(gw_declare_tensor(w, "t", GW_Q4_K, 2, ne), 0);
    assert_int_equal(gw_stream_open(w, path), 0);
    assert_int_equal(gw_stream_rows(w, x, 1), 0);
    assert_int_equal(gw_stream_close(w), -1);
    assert_non_null(strstr(gw_error(w), "tensor t: 144 of 288 bytes"));
    gw_free(w);

    /* too many rows, then too many bytes */
    w = gw_new(3);
    assert_int_equal(gw_declare_tensor(w, "t", GW_Q6_K, 2, ne), 0);
    assert_int_equal(gw_stream_open(w, path), 0);
    assert_int_equal(gw_stream_rows(w, x, 3), -1);
    gw_free(w);
    w = gw_new(3);
    assert_int_equal(gw_declare_tensor(w, "t", GW_F32, 1, ne), 0);
    assert_int_equal(gw_stream_open(w, path), 0);
    assert_int_equal(gw_stream_write(w, x, 256 * 4), 0);
    assert_int_equal(gw_stream_write(w, x, 1), -1);
    gw_free(w);

    /* rows that are not whole blocks; mixing the two ways; metadata after open */
    w = gw_new(3);
    assert_int_equal(gw_declare_tensor(w, "t", GW_Q4_K, 2, bad), -1);
    gw_free(w);
    w = gw_new(3);
    assert_int_equal(gw_tensor_f32(w, "t", GW_F32, 2, ne, x), 0);
    assert_int_equal(gw_declare_tensor(w, "u", GW_F32, 2, ne), -1);
    gw_free(w);
    w = gw_new(3);
    assert_int_equal(gw_declare_tensor(w, "u", GW_F32, 2, ne), 0);
    assert_int_equal(gw_tensor_f32(w, "t", GW_F32, 2, ne, x), -1);
    assert_null(gw_to_memory(w, &(size_t){0}));
    gw_free(w);
    w = gw_new(3);
    assert_int_equal(gw_declare_tensor(w, "u", GW_F32, 1, ne), 0);
    assert_int_equal(gw_stream_open(w, path), 0);
    assert_int_equal(gw_kv_u32(w, "late", 1), -1);
    gw_free(w);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k_hand_blocks),
        cmocka_unit_test(test_q6_k_hand_block),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_awkward_rows),
        cmocka_unit_test(test_non_finite_rows),
        cmocka_unit_test(test_bad_lengths),
        cmocka_unit_test(test_library_agrees),
        cmocka_unit_test(test_library_agrees_k_quants),
        cmocka_unit_test(test_stream_matches_memory),
        cmocka_unit_test(test_stream_errors),
        cmocka_unit_test(test_cache_q8_0_matches_writer),
        cmocka_unit_test(test_llama_cpp_rows),
        cmocka_unit_test(test_llama_cpp_models_run),
        cmocka_unit_test(test_quantizers_match_llama_cpp),
        cmocka_unit_test(test_mixes_match_llama_cpp),
        cmocka_unit_test(test_requantize_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
