/* Every SIMD kernel against its scalar reference on awkward sizes (tails, single elements,
   thousands), unaligned inputs and fixed-seed random data, with each kernel's tolerance from
   the comment above its SIMD code. The largest error seen is printed per kernel. */
#define SWA_INTERNALS   /* the internals it tests: swa.h, "internal declarations" */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/testutil.h"

static const int64_t float_sizes[] = {1, 7, 8, 9, 31, 32, 33, 255, 256, 257, 1039, 4099};
static const int64_t block32_counts[] = {1, 2, 7, 8, 9, 31, 32, 33, 129};    /* n = 32 * count */
static const int64_t block256_counts[] = {1, 2, 3, 7, 16, 17};               /* n = 256 * count */

static uint64_t rng = 88172645463325252ull;
static uint32_t next_u32(void) { return (uint32_t)(tu_xorshift64(&rng) >> 16); }
static float next_float(void) { return (float)(next_u32() % 2000001) / 1000000.0f - 1.0f; }

/* The reference table, and one table for each instruction set this CPU and build run: every
   test runs each of them against the reference. */
static swa__kernels ref_kernels, simd_kernels[SWA_KERNELS_AMX + 1];
static int n_simd;
static const char *level_name = "";   /* of the table under test, for the error report */

static int setup_tables(void **state)
{
    int32_t level;
    (void)state;
    swa__kernels_setup(&ref_kernels, SWA_KERNELS_REF);
    for (level = SWA_KERNELS_AVX2; level <= SWA_KERNELS_AMX; level++)
        if (swa__kernels_resolve(level) == level) swa__kernels_setup(&simd_kernels[n_simd++], level);
    return 0;
}

static const swa__kernels *simd(int i)
{
    if (n_simd == 0) {
        fprintf(stderr, "test_kernels: this build has no SIMD kernels for this CPU; nothing to compare\n");
        skip();
    }
    level_name = simd_kernels[i].name;
    return &simd_kernels[i];
}

/* A random finite half in [2^-10, 2^-4), the range real scales live in. */
static uint16_t random_scale(void)
{
    return swa__f32_to_f16(ldexpf(1.0f + (float)(next_u32() % 1000) / 1000.0f, -(int)(4 + next_u32() % 6)));
}

/* A row of `type` with random quants and sane scales. */
static void random_row(uint32_t type, uint8_t *row, int64_t n)
{
    size_t bytes = (size_t)(n / swa_type_block_size(type) * swa_type_block_bytes(type)), i;
    int64_t b;
    for (i = 0; i < bytes; i++) row[i] = (uint8_t)next_u32();
    for (b = 0; b < n / swa_type_block_size(type); b++) {
        uint8_t *blk = row + b * swa_type_block_bytes(type);
        uint16_t d = random_scale(), dmin = random_scale();
        switch (type) {
        case SWA_TYPE_Q8_0: case SWA_TYPE_Q4_0: case SWA_TYPE_Q5_0: case SWA_TYPE_IQ4_NL: case SWA_TYPE_IQ4_XS:
            memcpy(blk, &d, 2); break;
        case SWA_TYPE_Q4_K: case SWA_TYPE_Q5_K: case SWA_TYPE_Q4_1: case SWA_TYPE_Q5_1:
            memcpy(blk, &d, 2); memcpy(blk + 2, &dmin, 2); break;
        case SWA_TYPE_Q6_K: memcpy(blk + 208, &d, 2); break;
        case SWA_TYPE_Q2_K: memcpy(blk + 80, &d, 2); memcpy(blk + 82, &dmin, 2); break;
        case SWA_TYPE_Q3_K: memcpy(blk + 108, &d, 2); break;
        /* MXFP4's E8M0 scale 2^(e - 128): 2^-12 .. 2^1, and now and then e = 0, 1 or 2, the
           subnormal and smallest normal scales */
        case SWA_TYPE_MXFP4: blk[0] = (uint8_t)(next_u32() % 16 ? 116 + next_u32() % 14 : next_u32() % 3); break;
        default: break;
        }
    }
}

static double worst[128];
static const char *worst_name[128], *worst_level[128];
static int n_worst;

static void note(const char *name, double err)
{
    int i;
    for (i = 0; i < n_worst && (strcmp(worst_name[i], name) || strcmp(worst_level[i], level_name)); i++) {}
    if (i == n_worst) { worst_name[n_worst] = name; worst_level[n_worst++] = level_name; worst[i] = 0; }
    if (err > worst[i]) worst[i] = err;
}

static void check_close(const char *name, double got, double want, double magnitude, double tol, int64_t n)
{
    double err = fabs(got - want) / (magnitude > 1e-30 ? magnitude : 1e-30);
    note(name, err);
    if (err > tol) fail_msg("%s %s, n = %lld: simd %.9g, ref %.9g, error %.3g > %.3g", level_name, name, (long long)n, got, want, err, tol);
}

/* |w| . |x| over the dequantized values: the scale of a dot product's rounding error. */
static double magnitude(uint32_t type, const uint8_t *row, const float *x, int64_t n)
{
    float *w = (float *)malloc(sizeof(float) * (size_t)n);
    double m = 0;
    int64_t i;
    swa__dequant_row_ref(type, row, w, n);
    for (i = 0; i < n; i++) m += fabs((double)w[i] * x[i]);
    free(w);
    return m;
}

/* The largest tile there is, rows x tokens: test buffers hold one. */
#define MAX_ROWS SWA__TILE_MAX_ROWS
#define MAX_TOKENS SWA__TILE_MAX_TOKENS

/* Tiles of every shape up to the type's (3 x 4, or AVX-512's float 4 x 6): every (row, token)
   pair gets exactly the bits of its 1 x 1 tile, whatever the tile around it. `w` holds MAX_ROWS
   rows w_stride bytes apart and `x` MAX_TOKENS tokens x_stride bytes apart; each pair's 1 x 1
   result is returned in alone[t * MAX_ROWS + r]. */
static void check_tiles(const swa__kernels *k, uint32_t type, const uint8_t *w, size_t w_stride,
                        const uint8_t *x, size_t x_stride, int64_t n, float *alone)
{
    const swa__type_kernels *kt = &k->type[type];   /* tile NULL: the products go dot by dot */
    float y[MAX_TOKENS * MAX_ROWS];
    int nr, nt, r, t;
    assert_true(kt->tile_rows <= MAX_ROWS && kt->tile_tokens <= MAX_TOKENS);
    for (r = 0; r < MAX_ROWS; r++)
        for (t = 0; t < MAX_TOKENS; t++)
            swa__dot_pass(kt, w + r * w_stride, w_stride, 1, x + t * x_stride, x_stride, 1, n, &alone[t * MAX_ROWS + r], 1);
    for (nr = 1; nr <= MAX_ROWS; nr++) {   /* past tile_rows, tiles of the rest follow */
        for (nt = 1; nt <= kt->tile_tokens; nt++) {
            memset(y, 0xff, sizeof y);
            swa__dot_pass(kt, w, w_stride, nr, x, x_stride, nt, n, y, MAX_ROWS);
            for (r = 0; r < nr; r++)
                for (t = 0; t < nt; t++)
                    assert_memory_equal(&y[t * MAX_ROWS + r], &alone[t * MAX_ROWS + r], sizeof(float));
        }
    }
}

/* Float rows (F32, F16, BF16) in tiles, rows and tokens one element off alignment: the tile
   property, and each pair within 1e-5 of the reference dot. */
static void check_float_tiles(const swa__kernels *k, uint32_t type, int64_t n)
{
    swa__dot_fn ref = ref_kernels.type[type].dot;
    size_t elt = type == SWA_TYPE_F32 ? sizeof(float) : sizeof(uint16_t);
    size_t w_stride = elt * (size_t)(n + 1), x_stride = sizeof(float) * (size_t)(n + 3);
    uint8_t *wbuf = (uint8_t *)malloc(MAX_ROWS * w_stride + elt), *w = wbuf + elt;
    uint8_t *xbuf = (uint8_t *)malloc(MAX_TOKENS * x_stride + sizeof(float)), *x = xbuf + sizeof(float);
    float alone[MAX_TOKENS * MAX_ROWS], v;
    int r, t;
    int64_t i;
    for (r = 0; r < MAX_ROWS; r++) {
        for (i = 0; i < n; i++) {
            uint16_t h = swa__f32_to_f16(v = next_float());      /* as bf16 bits too: small values */
            if (type == SWA_TYPE_F32) memcpy(w + r * w_stride + (size_t)i * elt, &v, sizeof v);
            else memcpy(w + r * w_stride + (size_t)i * elt, &h, sizeof h);
        }
    }
    for (t = 0; t < MAX_TOKENS; t++)
        for (i = 0; i < n; i++) { v = next_float(); memcpy(x + t * x_stride + (size_t)i * sizeof v, &v, sizeof v); }
    check_tiles(k, type, w, w_stride, x, x_stride, n, alone);
    for (r = 0; r < MAX_ROWS; r++) {
        for (t = 0; t < MAX_TOKENS; t++) {
            const uint8_t *row = w + r * w_stride;
            const float *xt = (const float *)(x + t * x_stride);
            check_close("tile (float)", alone[t * MAX_ROWS + r], ref(row, xt, n), magnitude(type, row, xt, n), 1e-5, n);
        }
    }
    free(wbuf); free(xbuf);
}

/* A block of F16 or BF16 rows through more than one pass of tokens, which a set that widens
   them on this CPU takes through its F32 tiles and the others through the type's own: every
   (row, token) gets the bits of the type's own 1-token dot, and a widened row is the
   reference's dequantized row. Odd row counts (a partial tile, the slack the tiles prefetch)
   and token counts (a partial pass). */
static void check_float_block(const swa__kernels *k, uint32_t type, int64_t n)
{
    enum { ROWS = 7, TOKENS = 2 * MAX_TOKENS + 1 };
    const swa__type_kernels *kt = &k->type[type];
    size_t w_stride = sizeof(uint16_t) * (size_t)(n + 1), x_stride = sizeof(float) * (size_t)(n + 3);
    uint8_t *w = (uint8_t *)malloc(ROWS * w_stride), *x = (uint8_t *)malloc(TOKENS * x_stride);
    float *wide = (float *)malloc(sizeof(float) * (size_t)n), *want = (float *)malloc(sizeof(float) * (size_t)n);
    float y[TOKENS * ROWS], v;
    void *scratch = malloc((size_t)swa__widen_bytes(kt, n) + 1);
    int nr, nt, r, t;
    int64_t i;
    for (r = 0; r < ROWS; r++)
        for (i = 0; i < n; i++) { uint16_t h = swa__f32_to_f16(next_float()); memcpy(w + r * w_stride + (size_t)i * 2, &h, 2); }
    for (t = 0; t < TOKENS; t++)
        for (i = 0; i < n; i++) { v = next_float(); memcpy(x + t * x_stride + (size_t)i * sizeof v, &v, sizeof v); }
    if (kt->widen) {
        kt->widen(w, wide, n);
        swa__dequant_row_ref(type, w, want, n);
        assert_memory_equal(wide, want, sizeof(float) * (size_t)n);
    }
    for (nr = 1; nr <= ROWS; nr += 2) {
        for (nt = kt->tile_tokens + 1; nt <= TOKENS; nt += kt->tile_tokens - 1) {
            memset(y, 0xff, sizeof y);
            swa__dot_block(k, type, w, w_stride, nr, x, x_stride, nt, n, y, ROWS, scratch);
            for (r = 0; r < nr; r++) {
                for (t = 0; t < nt; t++) {
                    float alone = kt->dot(w + r * w_stride, x + t * x_stride, n);
                    assert_memory_equal(&y[t * ROWS + r], &alone, sizeof(float));
                }
            }
        }
    }
    free(w); free(x); free(wide); free(want); free(scratch);
}

/* Float rows (F32, F16, BF16) against float x; x and the row start one element off alignment.
   The 1-token dots (the attention's) against the reference, then the matrix products' tiles. */
static void run_float_dots(const swa__kernels *k)
{
    static float x[4099 + 1], wf[4099 + 1];
    static uint16_t wh[4099 + 1];
    size_t s;
    int64_t i;
    for (s = 0; s < sizeof float_sizes / sizeof float_sizes[0]; s++) {
        int64_t n = float_sizes[s];
        double mag32 = 0, mag16 = 0, magb = 0;
        float *xs = x + 1, *w32 = wf + 1;
        uint16_t *w16 = wh + 1;
        for (i = 0; i < n; i++) {
            xs[i] = next_float();
            w32[i] = next_float();
            w16[i] = swa__f32_to_f16(next_float());
        }
        for (i = 0; i < n; i++) {
            mag32 += fabs(w32[i] * xs[i]);
            mag16 += fabs(swa__f16_to_f32(w16[i]) * xs[i]);
            magb += fabs(swa__bf16_to_f32(w16[i]) * xs[i]);
        }
        check_close("dot_f32", k->type[SWA_TYPE_F32].dot(w32, xs, n), swa__dot_f32_ref(w32, xs, n), mag32, 1e-5, n);
        check_close("dot_f16", k->type[SWA_TYPE_F16].dot(w16, xs, n), swa__dot_f16_ref(w16, xs, n), mag16, 1e-5, n);
        check_close("dot_bf16", k->type[SWA_TYPE_BF16].dot(w16, xs, n), swa__dot_bf16_ref(w16, xs, n), magb, 1e-5, n);
        check_float_tiles(k, SWA_TYPE_F32, n);
        check_float_tiles(k, SWA_TYPE_F16, n);
        check_float_tiles(k, SWA_TYPE_BF16, n);
        check_float_block(k, SWA_TYPE_F16, n);
        check_float_block(k, SWA_TYPE_BF16, n);
    }
}

static void quantize_ref(int kind, const float *x, void *act, int64_t n)
{
    if (kind == SWA__ACT_Q8) swa__quantize_q8x8(swa__quantize_q8_ref, x, act, n);
    else swa__quantize_q8k_ref(x, act, n);
}

static void check_block_dot(const swa__kernels *k, uint32_t type, int64_t n, int offset)
{
    const int kind = swa__act_kind(type);
    uint8_t *row_buf = (uint8_t *)malloc((size_t)(n / swa_type_block_size(type) * swa_type_block_bytes(type)) + 1);
    uint8_t *row = row_buf + offset;                      /* rows at odd addresses too */
    float *x = (float *)malloc(sizeof(float) * (size_t)n), *xd = (float *)calloc((size_t)n, sizeof(float));
    void *act = malloc(swa__act_bytes(kind, n));
    swa__dot_fn simd_dot = k->type[type].dot, ref_dot = ref_kernels.type[type].dot;
    int64_t i;
    double mag;
    for (i = 0; i < n; i++) x[i] = next_float();
    random_row(type, row, n);
    quantize_ref(kind, x, act, n);
    /* the activations as quantized, to size the error */
    for (i = 0; i < n; i++) {
        const swa__q8x8 *g = (const swa__q8x8 *)act;
        if (kind == SWA__ACT_Q8) xd[i] = g[i / 256].d[i / 32 % 8] * swa__q8x8_half(g, i / 32, i % 32 / 16)[i % 16];
        else xd[i] = ((swa__q8k *)act)[i / 256].d * ((swa__q8k *)act)[i / 256].q[i % 256];
    }
    mag = magnitude(type, row, xd, n);
    check_close(swa_type_name(type), simd_dot(row, act, n), ref_dot(row, act, n), mag,
                kind == SWA__ACT_Q8K ? 1e-6 : 1e-5, n);
    /* and the reference dot is the dot of the dequantized row with the dequantized x, which
       ties the integer kernels to the block layouts */
    {
        float *w = (float *)malloc(sizeof(float) * (size_t)n);
        double exact = 0;
        swa__dequant_row_ref(type, row, w, n);
        for (i = 0; i < n; i++) exact += (double)w[i] * xd[i];
        check_close("ref vs dequant", ref_dot(row, act, n), exact, mag, 1e-5, n);
        free(w);
    }
    free(row_buf); free(x); free(xd); free(act);
}

/* Quantized rows in tiles: the tile property, and each pair's 1 x 1 tile is the 1-token dot,
   bit for bit (both run one row at a time). */
static void check_quantized_tiles(const swa__kernels *k, uint32_t type, int64_t n)
{
    swa__dot_fn dot = k->type[type].dot;
    size_t w_stride = (size_t)(n / swa_type_block_size(type) * swa_type_block_bytes(type));
    size_t x_stride = swa__act_bytes(swa__act_kind(type), n);
    uint8_t *w = (uint8_t *)malloc(MAX_ROWS * w_stride), *act = (uint8_t *)malloc(MAX_TOKENS * x_stride);
    float *x = (float *)malloc(sizeof(float) * (size_t)n), alone[MAX_TOKENS * MAX_ROWS];
    int r, t;
    int64_t i;
    for (r = 0; r < MAX_ROWS; r++) random_row(type, w + r * w_stride, n);
    for (t = 0; t < MAX_TOKENS; t++) {
        for (i = 0; i < n; i++) x[i] = next_float();
        quantize_ref(swa__act_kind(type), x, act + t * x_stride, n);
    }
    check_tiles(k, type, w, w_stride, act, x_stride, n, alone);
    for (r = 0; r < MAX_ROWS; r++) {
        for (t = 0; t < MAX_TOKENS; t++) {
            float d = dot(w + r * w_stride, act + t * x_stride, n);
            assert_memory_equal(&d, &alone[t * MAX_ROWS + r], sizeof d);
        }
    }
    free(w); free(act); free(x);
}

static const uint32_t block32_types[] = {SWA_TYPE_Q8_0, SWA_TYPE_Q4_0, SWA_TYPE_Q4_1, SWA_TYPE_Q5_0, SWA_TYPE_Q5_1,
                                         SWA_TYPE_IQ4_NL, SWA_TYPE_MXFP4};
static const uint32_t block256_types[] = {SWA_TYPE_Q2_K, SWA_TYPE_Q3_K, SWA_TYPE_Q4_K, SWA_TYPE_Q5_K, SWA_TYPE_Q6_K,
                                          SWA_TYPE_IQ4_XS};

/* The largest products there are: every quant bit set (Q4_1's 15, Q5_0's and Q5_1's 31 as the
   kernels see them) against activations all at 127, so that an int16 sum that overflowed or a
   pack that saturated would show; a partial last group too. */
static void check_extreme_dot(const swa__kernels *k, uint32_t type, int64_t n)
{
    const size_t bb = swa_type_block_bytes(type);
    const size_t at = type == SWA_TYPE_MXFP4 ? 1 : type == SWA_TYPE_Q4_1 || type == SWA_TYPE_Q5_1 ? 4 : 2;   /* scales */
    uint8_t *row = (uint8_t *)malloc((size_t)(n / 32) * bb);
    float *x = (float *)malloc(sizeof(float) * (size_t)n);
    void *act = malloc(swa__act_bytes(SWA__ACT_Q8, n));
    int64_t i, b;
    double want;
    random_row(type, row, n);
    for (b = 0; b < n / 32; b++) memset(row + b * bb + at, 0xff, bb - at);
    for (i = 0; i < n; i++) x[i] = 1.0f;
    quantize_ref(SWA__ACT_Q8, x, act, n);
    want = ref_kernels.type[type].dot(row, act, n);
    check_close(swa_type_name(type), k->type[type].dot(row, act, n), want, fabs(want), 1e-5, n);
    free(row); free(x); free(act);
}

static void run_quantized_dots(const swa__kernels *k)
{
    size_t s, ti;
    int off;
    for (ti = 0; ti < sizeof block32_types / sizeof block32_types[0]; ti++) check_extreme_dot(k, block32_types[ti], 32 * 9);
    for (off = 0; off < 2; off++) {
        for (ti = 0; ti < sizeof block32_types / sizeof block32_types[0]; ti++) {
            for (s = 0; s < sizeof block32_counts / sizeof block32_counts[0]; s++) {
                check_block_dot(k, block32_types[ti], 32 * block32_counts[s], off);
                check_quantized_tiles(k, block32_types[ti], 32 * block32_counts[s]);
            }
        }
        for (ti = 0; ti < sizeof block256_types / sizeof block256_types[0]; ti++) {
            for (s = 0; s < sizeof block256_counts / sizeof block256_counts[0]; s++) {
                check_block_dot(k, block256_types[ti], 256 * block256_counts[s], off);
                check_quantized_tiles(k, block256_types[ti], 256 * block256_counts[s]);
            }
        }
    }
}

/* Activation quantization and the F16 conversion round as the reference does: same bytes. */
static void run_quantize_and_convert(const swa__kernels *k)
{
    static float x[256 * 17 + 1];
    static uint8_t a[sizeof(swa__q8) * 129 + sizeof(swa__q8k) * 17], b[sizeof a];   /* the largest counts */
    static uint16_t h1[4099], h2[4099];
    const float special[] = {0.0f, -0.0f, 65504.0f, 65520.0f, 1e9f, -1e9f, 6.1e-5f, 5.96e-8f, 2.98e-8f,
                             2.99e-8f, 1e-10f, INFINITY, -INFINITY, 0.5f + 1.0f / 4096.0f, 1.0009765625f};
    size_t s;
    int64_t i;
    for (s = 0; s < sizeof block32_counts / sizeof block32_counts[0]; s++) {
        int64_t n = 32 * block32_counts[s];
        for (i = 0; i < n; i++) x[i + 1] = next_float() * (i % 5 == 0 ? 100.0f : 1.0f);
        if (s == 0) for (i = 0; i < 32; i++) x[i + 1] = 0.0f;          /* an all-zero block */
        swa__quantize_q8_ref(x + 1, a, n);
        k->quantize_q8(x + 1, b, n);
        assert_memory_equal(a, b, (size_t)(n / 32) * sizeof(swa__q8));
    }
    for (s = 0; s < sizeof block256_counts / sizeof block256_counts[0]; s++) {
        int64_t n = 256 * block256_counts[s];
        for (i = 0; i < n; i++) x[i + 1] = next_float() * (i % 7 == 0 ? 30.0f : 1.0f);
        swa__quantize_q8k_ref(x + 1, a, n);
        k->quantize_q8k(x + 1, b, n);
        assert_memory_equal(a, b, (size_t)(n / 256) * sizeof(swa__q8k));
    }
    for (s = 0; s < sizeof float_sizes / sizeof float_sizes[0]; s++) {
        int64_t n = float_sizes[s];
        for (i = 0; i < n; i++) x[i + 1] = i < (int64_t)(sizeof special / sizeof special[0]) ? special[i] : next_float() * 70000.0f;
        swa__store_f16_ref(x + 1, h1, n);
        k->type[SWA_TYPE_F16].store(x + 1, h2, n);
        assert_memory_equal(h1, h2, (size_t)n * 2);
    }
    /* and the reference conversion round-trips every finite half exactly */
    for (i = 0; i < 65536; i++) {
        uint16_t h = (uint16_t)i;
        if (((h >> 10) & 31) == 31) continue;
        assert_int_equal(swa__f32_to_f16(swa__f16_to_f32(h)), h);
    }
}

/* The weighted sum of values for 1-4 heads over 1-17 keys against the reference (one axpy per
   head and key), value rows one element off alignment and a row stride wider than a head (other
   heads' values between rows, as in the cache), out starting
   from random sums as it does after a first run of keys. Within 1e-6 of sum |p v| per output. */
static void check_wsum(const char *name, swa__wsum_fn simd_wsum, swa__wsum_fn ref_wsum, uint32_t type, int64_t hd)
{
    enum { MAX_KEYS = 17, HEADS = 4 };
    static const int64_t key_counts[] = {1, 2, 3, 17};
    size_t head_bytes = swa_type_block_bytes(type) * (size_t)(hd / swa_type_block_size(type));
    size_t elt = type == SWA_TYPE_F32 ? sizeof(float) : type == SWA_TYPE_F16 ? sizeof(uint16_t) : 1;
    size_t stride = head_bytes + 3 * elt;
    uint8_t *buf = (uint8_t *)malloc(stride * MAX_KEYS + elt), *v = buf + elt;
    float *vf = (float *)malloc(sizeof(float) * (size_t)hd), *deq = (float *)malloc(sizeof(float) * (size_t)(MAX_KEYS * hd));
    float *want = (float *)malloc(sizeof(float) * (size_t)(HEADS * hd)), *got = (float *)malloc(sizeof(float) * (size_t)(HEADS * hd));
    float p[HEADS * MAX_KEYS];
    size_t s;
    int64_t i, j;
    int nh, h;
    for (j = 0; j < MAX_KEYS; j++) {
        uint8_t *row = v + (size_t)j * stride;
        for (i = 0; i < hd; i++) vf[i] = next_float();
        if (type == SWA_TYPE_Q8_0) swa__store_q8_0_ref(vf, row, hd);
        else if (type == SWA_TYPE_F16) for (i = 0; i < hd; i++) { uint16_t x = swa__f32_to_f16(vf[i]); memcpy(row + 2 * i, &x, 2); }
        else memcpy(row, vf, sizeof(float) * (size_t)hd);
        swa__dequant_row_ref(type, row, deq + j * hd, hd);
    }
    for (i = 0; i < HEADS * MAX_KEYS; i++) p[i] = (next_float() + 1.0f) / 2.0f;   /* probabilities are >= 0 */
    for (s = 0; s < sizeof key_counts / sizeof key_counts[0]; s++) {
        int64_t nk = key_counts[s];
        for (nh = 1; nh <= HEADS; nh++) {
            for (i = 0; i < HEADS * hd; i++) want[i] = got[i] = next_float();
            ref_wsum(want, hd, nh, p, MAX_KEYS, v, stride, nk, hd);
            simd_wsum(got, hd, nh, p, MAX_KEYS, v, stride, nk, hd);
            for (h = 0; h < HEADS; h++) {
                for (i = 0; i < hd; i++) {
                    double mag = fabs(got[h * hd + i]);
                    if (h >= nh) {                        /* heads past nh are not touched */
                        assert_memory_equal(&got[h * hd + i], &want[h * hd + i], sizeof(float));
                        continue;
                    }
                    for (j = 0; j < nk; j++) mag += fabs(p[h * MAX_KEYS + j] * deq[j * hd + i]);
                    check_close(name, got[h * hd + i], want[h * hd + i], mag, 1e-6, hd);
                }
            }
        }
    }
    free(buf); free(vf); free(deq); free(want); free(got);
}

static void run_wsum(const swa__kernels *k)
{
    size_t s;
    for (s = 0; s < sizeof float_sizes / sizeof float_sizes[0]; s++) {
        check_wsum("wsum_f32", k->type[SWA_TYPE_F32].wsum, swa__type(SWA_TYPE_F32)->wsum, SWA_TYPE_F32, float_sizes[s]);
        check_wsum("wsum_f16", k->type[SWA_TYPE_F16].wsum, swa__type(SWA_TYPE_F16)->wsum, SWA_TYPE_F16, float_sizes[s]);
    }
    for (s = 0; s < sizeof block32_counts / sizeof block32_counts[0]; s++)
        check_wsum("wsum_q8_0", k->type[SWA_TYPE_Q8_0].wsum, swa__type(SWA_TYPE_Q8_0)->wsum, SWA_TYPE_Q8_0, 32 * block32_counts[s]);
}

/* RMSNorm, RoPE, softmax, SwiGLU and GEGLU: the SIMD versions use their own exp (Cephes' polynomial,
   within 2e-7 of expf), sum in 8 lanes and multiply by 1/sum where the reference divides:
   within 2e-6 relative, softmax (whose sum runs over all n) within 1e-5. */
static void run_elementwise(const swa__kernels *k)
{
    static float x[8200], w[8200], a[8200], b[8200], up[8200], cs[8200];
    size_t s;
    int64_t i;
    for (s = 0; s < sizeof float_sizes / sizeof float_sizes[0]; s++) {
        int64_t n = float_sizes[s], hd = (n + 1) & ~(int64_t)1;   /* RoPE needs pairs */
        for (i = 0; i < 2 * hd; i++) {
            x[i] = next_float() * 8.0f;
            w[i] = next_float();
            up[i] = next_float();
            cs[i] = next_float();
        }
        swa__rmsnorm_ref(a, x, w, n, 1e-5f);
        k->rmsnorm(b, x, w, n, 1e-5f);
        for (i = 0; i < n; i++) check_close("rmsnorm", b[i], a[i], fabs(a[i]) + 1e-6, 2e-6, n);
        memcpy(a, x, sizeof(float) * (size_t)n);
        memcpy(b, x, sizeof(float) * (size_t)n);
        swa__softmax_ref(a, n);
        k->softmax(b, n);
        for (i = 0; i < n; i++) check_close("softmax", b[i], a[i], fabs(a[i]) + 1e-30, 1e-5, n);
        memcpy(a, x, sizeof(float) * (size_t)n);
        memcpy(b, x, sizeof(float) * (size_t)n);
        swa__swiglu_ref(a, up, n);
        k->swiglu(b, up, n);
        for (i = 0; i < n; i++) check_close("swiglu", b[i], a[i], fabs(a[i]) + 1e-30, 2e-6, n);
        /* GEGLU: the reference against tanh's form in double (where 1 + tanh u cancels, to a
           millionth of |x up|), and the kernel against the reference: exp's argument reaches 50
           at x = -8, where its 2e-7 grows to 1e-5 */
        memcpy(a, x, sizeof(float) * (size_t)n);
        memcpy(b, x, sizeof(float) * (size_t)n);
        swa__geglu_ref(a, up, n);
        k->geglu(b, up, n);
        for (i = 0; i < n; i++) {
            double xi = x[i], u = 0.7978845608028654 * (xi + 0.044715 * xi * xi * xi);
            double want = 0.5 * xi * (1.0 + tanh(u)) * up[i];
            check_close("geglu_ref", a[i], want, fabs(want) + 0.1 * fabs(xi * up[i]), 1e-5, n);
            check_close("geglu", b[i], a[i], fabs(a[i]) + 1e-30, 1e-5, n);
        }
        /* two heads, rotating all but the last pair of each when there is more than one */
        memcpy(a, x, sizeof(float) * (size_t)(2 * hd));
        memcpy(b, x, sizeof(float) * (size_t)(2 * hd));
        swa__rope_ref(a, 2, hd, hd > 2 ? hd - 2 : hd, cs);
        k->rope(b, 2, hd, hd > 2 ? hd - 2 : hd, cs);
        for (i = 0; i < 2 * hd; i++) check_close("rope", b[i], a[i], fabs(x[i]) + 1.0, 1e-6, n);
    }
    /* extremes of the exp: far below and above its range, and zero */
    {
        float e[8] = {-200.0f, -90.0f, -87.0f, 0.0f, 1e-8f, 30.0f, 88.0f, 200.0f}, r[8];
        memcpy(r, e, sizeof e);
        swa__softmax_ref(r, 8);
        k->softmax(e, 8);
        for (i = 0; i < 8; i++) assert_true(fabsf(e[i] - r[i]) <= 1e-6f * (r[i] + 1e-30f) || (e[i] < 1e-30f && r[i] < 1e-30f));
    }
}

/* Each test runs every instruction set's table against the reference. */
static void for_each_simd(void (*run)(const swa__kernels *k))
{
    int i;
    for (i = 0; i == 0 || i < n_simd; i++) run(simd(i));
}

static void test_float_dots(void **state) { (void)state; for_each_simd(run_float_dots); }
static void test_quantized_dots(void **state) { (void)state; for_each_simd(run_quantized_dots); }
static void test_quantize_and_convert(void **state) { (void)state; for_each_simd(run_quantize_and_convert); }
static void test_wsum(void **state) { (void)state; for_each_simd(run_wsum); }
static void test_elementwise(void **state) { (void)state; for_each_simd(run_elementwise); }

#if defined(SWA__HAVE_AVX512) || defined(SWA__HAVE_AVX_VNNI)
/* The sets with matrix products keep one order per type for their dots, their tiles of up to
   4 (or 12) tokens and their products, so that a token's results do not depend on how many
   others share its batch: Q4_K, Q5_K, Q6_K, IQ4_XS, Q2_K and Q3_K in orders of their own
   (avx-vnni, avx512 and amx); the blocks of 32 in the lanes kernels' order (avx512; amx for all
   but Q8_0 and Q4_0), the residue order (amx's Q8_0 and Q4_0; swa.h, swa__block_isum_ref) or
   the grouped order (avx-vnni). Written out here as scalar loops (kmin_order, q6k_order,
   iq4xs_order, k16_order, lanes_order, grouped_order), with their own decoding of the formats.
   Each path must give the order's bits exactly, for rows of whole units and tails, whole tiles of 16 rows and parts, and any number
   of tokens; rows at odd addresses. (The tables' dots are also held to the usual reference by
   test_quantized_dots, like every table's.) */

/* a * b + c rounded once, by the instruction: MinGW's libm fmaf rounds twice. These orders run
   only where the CPU has AVX-VNNI or AVX-512, so FMA. */
__attribute__((target("fma"))) static float fused(float a, float b, float c)
{
    return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)));
}

/* ggml's IQ4_NL values (kvalues_iq4nl) and MXFP4's E2M1 values doubled (kvalues_mxfp4). */
static const int8_t iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
static const int8_t mxfp4_values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/* Q4_K/Q5_K quant l of sub-block j of super-block w, 0..15 or 0..31. */
static int kmin_quant(uint32_t type, const uint8_t *w, int j, int l)
{
    const uint8_t *qs = w + (type == SWA_TYPE_Q4_K ? 16 : 48) + 32 * (j / 2);
    int q = (j % 2) ? qs[l] >> 4 : qs[l] & 15;
    return type == SWA_TYPE_Q5_K ? q + 16 * ((w[16 + l] >> j) & 1) : q;
}

/* The Q4_K/Q5_K order: per super-block, two exact integers, S (the scaled sums of
   every sub-block) and M (minus the mins times the activations' sums), FMA'd into a lane each
   (S with d a.d, M with dmin a.d); the result is S's lane plus M's. */
static float kmin_order(uint32_t type, const uint8_t *row, const swa__q8k *a, int64_t n)
{
    float lane_s = 0.0f, lane_m = 0.0f;
    int64_t s;
    for (s = 0; s < n / 256; s++, a++) {
        const uint8_t *w = row + s * swa_type_block_bytes(type);
        float d = swa__f16_to_f32(swa__load_u16(w)) * a->d, dmin = swa__f16_to_f32(swa__load_u16(w + 2)) * a->d;
        int32_t sum = 0, mins = 0;
        uint8_t sc[8], m[8];
        int j, l;
        swa__q4k_scales(w + 4, sc, m);
        for (j = 0; j < 8; j++) {
            for (l = 0; l < 32; l++) sum += sc[j] * kmin_quant(type, w, j, l) * a->q[32 * j + l];
            mins -= m[j] * (a->bsum[2 * j] + a->bsum[2 * j + 1]);
        }
        lane_s = fused(d, (float)sum, lane_s);
        lane_m = fused(dmin, (float)mins, lane_m);
    }
    return lane_s + lane_m;
}

/* Q6_K quant e (0..255) of super-block w, 0..63: ggml's layout, in halves of 128 whose
   quarters of 32 take a nibble of ql and two bits of qh each. */
static int q6k_quant(const uint8_t *w, int e)
{
    int half = e / 128, quarter = e % 128 / 32, l = e % 32;
    const uint8_t *ql = w + 64 * half + 32 * (quarter % 2), *qh = w + 128 + 32 * half;
    int low = quarter < 2 ? ql[l] & 15 : ql[l] >> 4;
    return low | ((qh[l] >> (2 * quarter)) & 3) << 4;
}

/* The Q6_K order: one exact integer a super-block, S = sum_j sc_j sum (q - 32) a,
   FMA'd with d a.d into one lane. */
static float q6k_order(const uint8_t *row, const swa__q8k *a, int64_t n)
{
    float lane = 0.0f;
    int64_t s;
    for (s = 0; s < n / 256; s++, a++) {
        const uint8_t *w = row + s * 210;
        int32_t sum = 0;
        int e;
        for (e = 0; e < 256; e++) sum += (int8_t)w[192 + e / 16] * (q6k_quant(w, e) - 32) * a->q[e];
        lane = fused(swa__f16_to_f32(swa__load_u16(w + 208)) * a->d, (float)sum, lane);
    }
    return lane;
}

/* IQ4_XS's, the same with 8 sub-blocks of 32: S = sum_j (ls_j - 32) sum v a, v the IQ4_NL
   value of each nibble (ggml's kvalues_iq4nl; a sub-block's 16 bytes hold its first 16
   elements in their low nibbles), ls_j the 6-bit scale from scales_l and scales_h. */
static float iq4xs_order(const uint8_t *row, const swa__q8k *a, int64_t n)
{
    float lane = 0.0f;
    int64_t s;
    for (s = 0; s < n / 256; s++, a++) {
        const uint8_t *w = row + s * 136;
        const unsigned high = (unsigned)w[2] | (unsigned)w[3] << 8;
        int32_t sum = 0;
        int e;
        for (e = 0; e < 256; e++) {
            const int j = e / 32, byte = w[8 + 16 * j + e % 16];
            const int ls = (int)(((w[4 + j / 2] >> 4 * (j % 2)) & 15) | ((high >> 2 * j) & 3) << 4) - 32;
            sum += ls * iq4nl_values[e % 32 < 16 ? byte & 15 : byte >> 4] * a->q[e];
        }
        lane = fused(swa__f16_to_f32(swa__load_u16(w)) * a->d, (float)sum, lane);
    }
    return lane;
}

/* Block b's exact sum of q x, its scale d_w d_x rounded, and (Q4_1, Q5_1) m and d_x sum x.
   ggml's layouts: f16 d (MXFP4: an E8M0 byte, 2^(e - 128) with the values doubled), Q4_1's and
   Q5_1's f16 m, Q5_0's and Q5_1's 32-bit word of fifth bits (bit e for element e), then 16 bytes
   of nibbles (element e < 16 in byte e's low nibble, e >= 16 in byte e - 16's high one) or
   Q8_0's 32 bytes; Q4_0's values less 8, Q5_0's less 16. */
static int32_t block32(uint32_t type, const uint8_t *row, const swa__q8x8 *a, int64_t b, float *dd, float *m, float *dsum)
{
    const uint8_t *w = row + (size_t)b * swa_type_block_bytes(type);
    const int has_m = type == SWA_TYPE_Q4_1 || type == SWA_TYPE_Q5_1, fifth = type == SWA_TYPE_Q5_0 || type == SWA_TYPE_Q5_1;
    const int at = (type == SWA_TYPE_MXFP4 ? 1 : 2) + 2 * has_m + 4 * fifth;
    const uint32_t qh = fifth ? (uint32_t)w[at - 4] | (uint32_t)w[at - 3] << 8 | (uint32_t)w[at - 2] << 16 | (uint32_t)w[at - 1] << 24 : 0;
    int32_t sum = 0, sum_x = 0;
    int i;
    for (i = 0; i < 32; i++) {
        const int nibble = i < 16 ? w[at + i] & 15 : w[at + i - 16] >> 4, x = swa__q8x8_half(a, b, i / 16)[i % 16];
        const int v = nibble + 16 * (int)((qh >> i) & 1);
        const int q = type == SWA_TYPE_Q8_0 ? (int8_t)w[2 + i] : type == SWA_TYPE_IQ4_NL ? iq4nl_values[nibble] :
                      type == SWA_TYPE_MXFP4 ? mxfp4_values[nibble] : type == SWA_TYPE_Q4_0 ? nibble - 8 :
                      type == SWA_TYPE_Q5_0 ? v - 16 : v;
        sum += q * x;
        sum_x += x;
    }
    *dd = (type == SWA_TYPE_MXFP4 ? ldexpf(1.0f, w[0] - 128) : swa__f16_to_f32(swa__load_u16(w))) * a[b / 8].d[b % 8];
    *m = has_m ? swa__f16_to_f32(swa__load_u16(w + 2)) : 0.0f;
    *dsum = a[b / 8].d[b % 8] * (float)sum_x;
    return sum;
}

/* acc = fma(S, d_w d_x, acc), then where the type has m, acc = fma(m, d_x sum x, acc). */
static float block32_step(uint32_t type, const uint8_t *row, const swa__q8x8 *a, int64_t b, float acc)
{
    float dd, m, dsum;
    const int32_t sum = block32(type, row, a, b, &dd, &m, &dsum);
    acc = fused((float)sum, dd, acc);
    return type == SWA_TYPE_Q4_1 || type == SWA_TYPE_Q5_1 ? fused(m, dsum, acc) : acc;
}

/* The avx512 set's order for blocks of 32 (its rows-in-the-lanes kernels): block after block
   from 0, each by block32_step. */
static float lanes_order(uint32_t type, const uint8_t *row, const swa__q8x8 *a, int64_t n)
{
    float acc = 0.0f;
    int64_t b;
    for (b = 0; b < n / 32; b++) acc = block32_step(type, row, a, b, acc);
    return acc;
}

/* The avx-vnni set's order for blocks of 32: the full groups of 8 blocks into 8 accumulators,
   block j of each into the j-th, the rest in order into a ninth, each step as lanes_order's;
   then ((c0 + c4) + (c2 + c6)) + ((c1 + c5) + (c3 + c7)), plus the ninth. */
static float grouped_order(uint32_t type, const uint8_t *row, const swa__q8x8 *a, int64_t n)
{
    float c[9] = {0};
    int64_t b, full = n / 256 * 8;
    for (b = 0; b < n / 32; b++) c[b < full ? b % 8 : 8] = block32_step(type, row, a, b, c[b < full ? b % 8 : 8]);
    return (((c[0] + c[4]) + (c[2] + c[6])) + ((c[1] + c[5]) + (c[3] + c[7]))) + c[8];
}

/* Q2_K's order, Q4_K's with 16 sub-blocks of 16: S = sum_j sc_j sum q x and M = -sum_j m_j
   bsum_j, lanes of d a.d and dmin a.d. ggml's layout: scales[16] (scale in the low nibble, min
   in the high one), qs[64] (element e: bits 2 ((e % 128) / 32) of qs[32 (e / 128) + e % 32]),
   f16 d, f16 dmin. Q3_K's (q3k set): hmask[32], qs[64] (the low 2 bits as Q2_K's), scales[12],
   f16 d; bit 4 (e / 128) + (e % 128) / 32 of hmask[e % 32] clear subtracts 4; scale i's low 4
   bits from byte i % 8 (low nibble below 8, high from 8), its high 2 from bits 2 (i / 4) of
   byte 8 + i % 4, less 32; S alone, one lane of d a.d. */
static float k16_order(uint32_t type, const uint8_t *row, const swa__q8k *a, int64_t n)
{
    const int q3k = type == SWA_TYPE_Q3_K;
    float lane_s = 0.0f, lane_m = 0.0f;
    int64_t s;
    for (s = 0; s < n / 256; s++, a++) {
        const uint8_t *w = row + s * swa_type_block_bytes(type), *qs = w + (q3k ? 32 : 16);
        int32_t sum = 0, mins = 0;
        int j, e;
        for (j = 0; j < 16; j++) {
            const uint8_t *sc = w + 96;
            const int scale = q3k ? (((j < 8 ? sc[j % 8] : sc[j % 8] >> 4) & 15) | ((sc[8 + j % 4] >> (2 * (j / 4))) & 3) << 4) - 32 : w[j] & 15;
            int32_t part = 0;
            for (e = 16 * j; e < 16 * j + 16; e++) {
                int q = qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32)) & 3;
                if (q3k && !(w[e % 32] >> (4 * (e / 128) + e % 128 / 32) & 1)) q -= 4;
                part += q * a->q[e];
            }
            sum += scale * part;
            if (!q3k) mins -= (w[j] >> 4) * a->bsum[j];
        }
        lane_s = fused(swa__f16_to_f32(swa__load_u16(w + (q3k ? 108 : 80))) * a->d, (float)sum, lane_s);
        if (!q3k) lane_m = fused(swa__f16_to_f32(swa__load_u16(w + 82)) * a->d, (float)mins, lane_m);
    }
    return lane_s + lane_m;
}

/* The type's order in set `set` for one row and one token's activations. */
static float exact_order(int32_t set, uint32_t type, const uint8_t *row, const uint8_t *act, int64_t n)
{
    if (set == SWA_KERNELS_AVX_VNNI && swa__act_kind(type) == SWA__ACT_Q8) return grouped_order(type, row, (const swa__q8x8 *)act, n);
    if (type == SWA_TYPE_Q6_K) return q6k_order(row, (const swa__q8k *)act, n);
    if (type == SWA_TYPE_IQ4_XS) return iq4xs_order(row, (const swa__q8k *)act, n);
    if (type == SWA_TYPE_Q2_K || type == SWA_TYPE_Q3_K) return k16_order(type, row, (const swa__q8k *)act, n);
    if (swa__act_kind(type) == SWA__ACT_Q8K) return kmin_order(type, row, (const swa__q8k *)act, n);
#if defined(SWA__HAVE_AMX)
    if (set == SWA_KERNELS_AMX && (type == SWA_TYPE_Q8_0 || type == SWA_TYPE_Q4_0)) {   /* the other types: avx512's */
        float acc[16] = {0};
        swa__residue_blocks_ref(row, type, (const swa__q8x8 *)act, 0, n / 32, acc);
        return swa__residue_sum_ref(acc);
    }
#endif
    (void)set;
    return lanes_order(type, row, (const swa__q8x8 *)act, n);
}

static void check_order(int32_t set, const swa__kernels *k, uint32_t type, int64_t n, int64_t nr, int64_t nt)
{
    const int kind = swa__act_kind(type);
    size_t w_stride = (size_t)(n / swa_type_block_size(type) * swa_type_block_bytes(type)), x_stride = swa__act_bytes(kind, n);
    uint8_t *w_buf = (uint8_t *)malloc((size_t)nr * w_stride + 1), *w = w_buf + 1;
    uint8_t *act = (uint8_t *)malloc((size_t)nt * x_stride);
    float *x = (float *)malloc(sizeof(float) * (size_t)n);
    float *want = (float *)malloc(sizeof(float) * (size_t)(nr * nt)), *got = (float *)malloc(sizeof(float) * (size_t)(nr * nt));
    uint64_t pack_bytes, scratch_bytes;
    void *pack, *scratch;
    int64_t r, t, i;
    k->gemm_memory(nt, n, &pack_bytes, &scratch_bytes);
    pack = malloc((size_t)pack_bytes);
    scratch = malloc((size_t)scratch_bytes);
    for (r = 0; r < nr; r++) random_row(type, w + r * w_stride, n);
    for (t = 0; t < nt; t++) {
        for (i = 0; i < n; i++) x[i] = next_float();
        quantize_ref(kind, x, act + t * x_stride, n);
    }
    for (t = 0; t < nt; t++)
        for (r = 0; r < nr; r++) {
            want[t * nr + r] = exact_order(set, type, w + r * w_stride, act + t * x_stride, n);
            got[t * nr + r] = k->type[type].dot(w + r * w_stride, act + t * x_stride, n);
        }
    assert_memory_equal(got, want, sizeof(float) * (size_t)(nr * nt));
    memset(got, 0xff, sizeof(float) * (size_t)(nr * nt));
    for (t = 0; t < nt; t += k->type[type].tile_tokens)
        swa__dot_pass(&k->type[type], w, w_stride, nr, act + t * x_stride, x_stride,
                      nt - t < k->type[type].tile_tokens ? (int)(nt - t) : k->type[type].tile_tokens, n, got + t * nr, nr);
    assert_memory_equal(got, want, sizeof(float) * (size_t)(nr * nt));
    memset(got, 0xff, sizeof(float) * (size_t)(nr * nt));
    if (!k->type[type].gemm || nt < k->type[type].gemm_from) goto done;   /* the products' contract: gemm_from tokens or more */
    k->type[type].pack(act, x_stride, nt, n, pack);
    k->type[type].gemm(w, w_stride, nr, pack, nt, n, got, nr, scratch);
    for (t = 0; t < nt; t++)
        for (r = 0; r < nr; r++)
            if (memcmp(&got[t * nr + r], &want[t * nr + r], sizeof(float)))
                fail_msg("%s %s product, n = %lld, %lld rows x %lld tokens: row %lld token %lld gives %.9g, the order %.9g",
                         k->name, swa_type_name(type), (long long)n, (long long)nr, (long long)nt, (long long)r, (long long)t,
                         got[t * nr + r], want[t * nr + r]);
done:
    free(w_buf); free(act); free(x); free(want); free(got); free(pack); free(scratch);
}

static void test_exact_order(void **state)
{
    static const int64_t blocks[] = {1, 15, 16, 17, 33, 64, 129}, super_blocks[] = {1, 2, 3, 7, 17};
    static const int64_t rows[] = {1, 8, 16, 21, 70}, tokens[] = {1, 2, 7, 8, 9, 16, 17, 37};   /* 70: past the 4 row groups a product unpacks at once */
    static const uint32_t types[] = {SWA_TYPE_Q4_K, SWA_TYPE_Q5_K, SWA_TYPE_Q6_K, SWA_TYPE_IQ4_XS, SWA_TYPE_Q2_K,
                                     SWA_TYPE_Q3_K, SWA_TYPE_Q8_0, SWA_TYPE_Q4_0, SWA_TYPE_Q4_1, SWA_TYPE_Q5_0,
                                     SWA_TYPE_Q5_1, SWA_TYPE_IQ4_NL, SWA_TYPE_MXFP4};
    static const int32_t sets[] = {SWA_KERNELS_AVX_VNNI, SWA_KERNELS_AVX512, SWA_KERNELS_AMX};
    swa__kernels k;
    size_t si, ti, b, r, t;
    int ran = 0;
    (void)state;
    for (si = 0; si < sizeof sets / sizeof sets[0]; si++) {
        if (swa__kernels_resolve(sets[si]) != sets[si]) {
            fprintf(stderr, "test_kernels: this CPU does not run the %s set%s: its products' orders not checked\n",
                    swa_kernels_name(sets[si]), sets[si] == SWA_KERNELS_AMX ? " (or Linux did not grant the tile state)" : "");
            continue;
        }
        swa__kernels_setup(&k, sets[si]);
        level_name = k.name;
        ran = 1;
        for (ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
            int kquant = swa__act_kind(types[ti]) == SWA__ACT_Q8K;
            size_t n_sizes = kquant ? sizeof super_blocks / sizeof super_blocks[0] : sizeof blocks / sizeof blocks[0];
            for (b = 0; b < n_sizes; b++)
                for (r = 0; r < sizeof rows / sizeof rows[0]; r++)
                    for (t = 0; t < sizeof tokens / sizeof tokens[0]; t++)
                        check_order(sets[si], &k, types[ti], kquant ? 256 * super_blocks[b] : 32 * blocks[b], rows[r], tokens[t]);
        }
    }
    if (!ran) skip();
}
#endif

static int report(void **state)
{
    int i;
    (void)state;
    fprintf(stderr, "test_kernels: instruction sets compared with the reference:");
    for (i = 0; i < n_simd; i++) fprintf(stderr, " %s", simd_kernels[i].name);
    fprintf(stderr, "%s\n", n_simd ? "" : " none (this CPU or build has no SIMD kernels)");
    for (i = 0; i < n_worst; i++) fprintf(stderr, "test_kernels: %-8s %-14s largest relative error %.2e\n", worst_level[i], worst_name[i], worst[i]);
    return 0;
}

/* The type table is indexed by ggml id, by position (C++11 has no designated initializers):
   each row's stated id must be its index, and a row the library computes with has both
   reference kernels. tests/test_gguf.c checks names and sizes against ggml's list. */
static void test_type_rows(void **state)
{
    uint32_t t;
    (void)state;
    for (t = 0; t < SWA__N_TYPES; t++) {
        const swa__type_info *row = swa__type_row(t);
        assert_int_equal(row->id, t);
        assert_true(!row->dequant == !row->dot);
        assert_true(!row->wsum == !row->store);
        if (!row->name) assert_int_equal(row->block_bytes, 0);
    }
    assert_null(swa__type_row(SWA__N_TYPES));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_rows),
        cmocka_unit_test(test_float_dots),
        cmocka_unit_test(test_quantized_dots),
        cmocka_unit_test(test_quantize_and_convert),
        cmocka_unit_test(test_wsum),
        cmocka_unit_test(test_elementwise),
#if defined(SWA__HAVE_AVX512) || defined(SWA__HAVE_AVX_VNNI)
        cmocka_unit_test(test_exact_order),
#endif
    };
    return cmocka_run_group_tests(tests, setup_tables, report);
}
