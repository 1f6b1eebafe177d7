/* swa-kbench: what each matrix-product kernel costs, per instruction set, with the rows in L2;
   with --peak, what the instructions they are built on give and what share of it a prompt gets.

   swa-kbench [--type TYPE] [--kernels K] [-n COLUMNS] [--ms 300]
   swa-kbench --peak [-t THREADS] [--tokens 512] [--reps 3] [--type TYPE] [--kernels K] [--ms 300]

   For each weight type and each instruction set this CPU runs (or the ones named), times the
   kernels a context calls on about 96 KB of rows that stay in the core's L2 cache, so what is
   measured is the kernel's arithmetic and not the memory system: generation's tiles of one
   token (every row once), a prompt's whole tiles (3 rows x 4 tokens; 32 x 6 for AVX-512's
   float rows), either one through the set's batch product where a context calls that for so
   few tokens (the amx set's Q4_0), and where the set has them its batch products (gemm: AMX)
   of 8 and of 64 tokens. Prints GB/s of weights per core for each (times
   the tokens each row meets), the best of 60 short runs making up about --ms
   milliseconds: on a shared machine, the least disturbed. A generation figure above the DRAM
   bandwidth one core gets means the kernel can keep up with memory. One thread; the
   activations are quantized once, untimed.

   --peak first measures the multiply-adds per second of each instruction a kernel family is
   built on (AMX's tdpbssd, vpdpbusd zmm and ymm, AVX-VNNI's ymm form, AVX2's vpmaddubsw +
   vpmaddwd, FMA zmm and ymm, vdpbf16ps, NEON sdot and fmla: those this CPU runs) on one thread and on -t
   threads, the best of 20 runs each; then, for every type and every SIMD set this CPU runs
   (the reference only when named), a chunk of --tokens tokens through one layer of the 1.1B
   shape as a context computes a prompt (see layer_rate), as multiply-adds per second and as
   a share of the set's peak for that type: the int8 instruction for quantized rows (the tile
   product where the set takes the chunk through its batch product, packing included), FMA for
   float rows (BF16's too: the kernels widen it to f32 exactly and use FMA, which has twice
   vdpbf16ps's rate where both were measured; vdpbf16ps is listed for reference). The best of
   --reps passes. Both count each thread's CPU time, not the wall clock's: on a machine shared
   with other processes a long pass is always held up somewhere, and a thread's CPU time leaves
   out the slices it waited. */
#define _POSIX_C_SOURCE 200809L
#define SWA_INTERNALS   /* the internals it tests: swa.h, "internal declarations" */
#include "swa.h"
#define PROG "swa-kbench"
#include "tools/common/tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

#define MAX_THREADS 64

/* Every buffer starts on a 64-byte line, as a context's do (and a model's rows, at the usual
   alignments): a zmm load across two lines costs two, and malloc's 16-byte alignment would
   measure that. */
#if defined(_WIN32)
#include <malloc.h>
static void *line_alloc(size_t bytes) { return _aligned_malloc(bytes ? bytes : 1, 64); }
static void line_free(void *p) { _aligned_free(p); }
#else
static void *line_alloc(size_t bytes)
{
    void *p;
    return posix_memalign(&p, 64, bytes ? bytes : 1) ? NULL : p;
}
static void line_free(void *p) { free(p); }
#endif

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_u32(void) { return (uint32_t)(rng_next(&rng) >> 32); }

/* Random rows of a type whose scales are small finite halves: the kernels' speed does not
   depend on the values, but NaNs or infinities could slow float units. */
static void random_rows(uint32_t type, uint8_t *w, size_t bytes, int64_t n_rows, int64_t n)
{
    size_t i, block = (size_t)swa_type_block_bytes(type);
    int64_t b, blocks = n_rows * (n / swa_type_block_size(type));
    float x;
    for (i = 0; i < bytes; i++) w[i] = (uint8_t)next_u32();
    if (type == SWA_TYPE_F32)
        for (i = 0; i < bytes / 4; i++) { x = (float)(next_u32() % 2001) / 1000.0f - 1.0f; memcpy(w + 4 * i, &x, 4); }
    else if (type == SWA_TYPE_F16 || type == SWA_TYPE_BF16)
        for (i = 0; i < bytes / 2; i++) w[2 * i + 1] = (uint8_t)(0x30 + next_u32() % 8);   /* exponent bits of a small number */
    else
        for (b = 0; b < blocks; b++) {
            uint8_t *blk = w + (size_t)b * block;
            size_t at[4] = {0, 2, block - 4, block - 2};   /* d (and dmin) first, or last (Q6_K, Q3_K, Q2_K) */
            int k;
            for (k = 0; k < 4; k++) blk[at[k] + 1] = (uint8_t)(0x10 + next_u32() % 8);
            if (type == SWA_TYPE_MXFP4) blk[0] = (uint8_t)(120 + next_u32() % 8);   /* E8M0: 2^-8 .. 2^-1 */
        }
}

/* GB/s of weights of one kernel over the rows, times the tokens each row meets: the type's
   tiles of nt tokens, or with pack its batch product of them (the tokens packed, and scratch),
   the best of 60 short runs (on a shared machine, those no other process held up). */
static double best_rate(const swa__kernels *k, uint32_t type, const uint8_t *w, size_t row_bytes, int64_t n_rows,
                        const uint8_t *x, size_t x_stride, int nt, int64_t n, float *y, double ms, const void *pack,
                        void *scratch)
{
    double best = 0;
    int rep;
    for (rep = 0; rep < 60; rep++) {
        double t0 = now(), t;
        int64_t passes = 0;
        do {
            if (pack) k->type[type].gemm(w, row_bytes, n_rows, pack, nt, n, y, n_rows, scratch);
            else swa__dot_pass(&k->type[type], w, row_bytes, n_rows, x, x_stride, nt, n, y, n_rows);
            passes++;
        } while ((t = now() - t0) < ms / 60000.0);
        if ((double)passes * (double)nt * (double)n_rows * (double)row_bytes / t / 1e9 > best)
            best = (double)passes * (double)nt * (double)n_rows * (double)row_bytes / t / 1e9;
    }
    return best;
}

static double time_kernel(const swa__kernels *k, uint32_t type, const uint8_t *w, size_t row_bytes, int64_t n_rows,
                          const uint8_t *x, size_t x_stride, int nt, int64_t n, float *y, double ms)
{
    return best_rate(k, type, w, row_bytes, n_rows, x, x_stride, nt, n, y, ms, NULL, NULL);
}

/* The same for the set's batch product of nt tokens (packed once, untimed); 0 without one. */
static double time_gemm(const swa__kernels *k, uint32_t type, const uint8_t *w, size_t row_bytes, int64_t n_rows,
                        const uint8_t *x, size_t x_stride, int nt, int64_t n, float *y, double ms)
{
    uint64_t pack_bytes, scratch_bytes;
    void *pack, *scratch;
    double best;
    if (!k->type[type].gemm) return 0;
    k->gemm_memory(nt, n, &pack_bytes, &scratch_bytes);
    pack = line_alloc((size_t)pack_bytes);
    scratch = line_alloc((size_t)scratch_bytes);
    if (!pack || !scratch) fail("out of memory");
    k->type[type].pack(x, x_stride, nt, n, pack);
    best = best_rate(k, type, w, row_bytes, n_rows, x, x_stride, nt, n, y, ms, pack, scratch);
    line_free(pack);
    line_free(scratch);
    return best;
}

/* What a context calls for nt tokens: the batch product from the type's gemm_from on, else
   the tiles. */
static double time_tokens(const swa__kernels *k, uint32_t type, const uint8_t *w, size_t row_bytes, int64_t n_rows,
                          const uint8_t *x, size_t x_stride, int nt, int64_t n, float *y, double ms)
{
    if (k->type[type].gemm && nt >= k->type[type].gemm_from)
        return time_gemm(k, type, w, row_bytes, n_rows, x, x_stride, nt, n, y, ms);
    return time_kernel(k, type, w, row_bytes, n_rows, x, x_stride, nt, n, y, ms);
}

/* A figure, or a dash where the set has no such kernel. */
static void print_figure(double gbs)
{
    if (gbs > 0) printf(" %.1f |", gbs);
    else printf(" - |");
}

/* A type's name against what the user typed, in either case. */
static int type_matches(const char *name, const char *asked)
{
    size_t c;
    for (c = 0; name[c] && asked[c]; c++) {
        char a = asked[c] >= 'a' && asked[c] <= 'z' ? (char)(asked[c] - 32) : asked[c];
        char b = name[c] >= 'a' && name[c] <= 'z' ? (char)(name[c] - 32) : name[c];
        if (a != b) return 0;
    }
    return !name[c] && !asked[c];
}

/* ---- --peak: what the instructions the kernels are built on give on this machine ----

   Each peak loop keeps PEAK_CHAINS independent accumulators, more than any of these
   instructions' latency times its issue rate on current cores, so the loop runs at the
   instruction's throughput. The operands are read from memory the compiler cannot see into;
   vpdpbusd, vdpbf16ps, sdot and FMA carry their accumulator and cannot be hoisted or folded.
   The AVX2 pair (vpmaddubsw, then vpmaddwd by ones and vpaddd into the accumulator) has no
   accumulator of its own: its bytes are loaded from L1 each step through a pointer the loop
   re-reads (volatile), so it cannot be hoisted either, as in a real kernel that loads its
   weights. */
#define PEAK_CHAINS 16
#define PEAK_CHAINS_YMM 12   /* AVX2's 16 registers: 12 accumulators and the two operands */
typedef void (*peak_loop)(int64_t iters, const uint8_t *in, uint8_t *out);

static uint8_t peak_in[4096];
static const uint8_t *volatile peak_src = peak_in;

/* A peak loop: `chains` accumulators of vector type V, acc[j] starting at SET1 (of j); each
   iteration steps every accumulator through STEP (of acc[j], a and b: the operands, of type
   T, loaded from in by LOAD_A and LOAD_B), its inner loop unrolled UNROLL times; then the
   accumulators are summed with ADD into acc[0], which STORE writes to out. */
#define PEAK_LOOP(NAME, TARGET, V, T, LOAD_A, LOAD_B, CHAINS, UNROLL, SET1, STEP, ADD, STORE) \
    TARGET static void NAME(int64_t iters, const uint8_t *in, uint8_t *out) \
    { \
        V acc[CHAINS]; \
        T a = LOAD_A, b = LOAD_B; \
        int64_t i; \
        int j; \
        SWA__UNROLL(16) \
        for (j = 0; j < CHAINS; j++) acc[j] = SET1; \
        for (i = 0; i < iters; i++) \
            SWA__UNROLL(UNROLL) \
            for (j = 0; j < CHAINS; j++) acc[j] = STEP; \
        SWA__UNROLL(16) \
        for (j = 1; j < CHAINS; j++) acc[0] = ADD(acc[0], acc[j]); \
        STORE; \
    }

#if defined(SWA__HAVE_AVX512)
PEAK_LOOP(peak_vpdpbusd_zmm, SWA__AVX512, __m512i, __m512i, _mm512_loadu_si512(in), _mm512_loadu_si512(in + 64), PEAK_CHAINS, 16,
          _mm512_set1_epi32(j), _mm512_dpbusd_epi32(acc[j], a, b), _mm512_add_epi32, _mm512_storeu_si512(out, acc[0]))

PEAK_LOOP(peak_vpdpbusd_ymm, SWA__AVX512, __m256i, __m256i, _mm256_loadu_si256((const __m256i *)in),
          _mm256_loadu_si256((const __m256i *)(in + 32)), PEAK_CHAINS, 16, _mm256_set1_epi32(j),
          _mm256_dpbusd_epi32(acc[j], a, b), _mm256_add_epi32, _mm256_storeu_si256((__m256i *)out, acc[0]))

PEAK_LOOP(peak_fma_zmm, SWA__AVX512, __m512, __m512, _mm512_loadu_ps(in), _mm512_loadu_ps(in + 64), PEAK_CHAINS, 16,
          _mm512_set1_ps((float)j), _mm512_fmadd_ps(a, b, acc[j]), _mm512_add_ps, _mm512_storeu_ps(out, acc[0]))

/* vdpbf16ps: GCC 10 / clang 9 have its intrinsics, as they have the AVX-512 VNNI ones. */
#define PEAK_TARGET_BF16 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,avx512bf16")))
PEAK_LOOP(peak_vdpbf16ps_zmm, PEAK_TARGET_BF16, __m512, __m512bh, (__m512bh)_mm512_loadu_si512(in),
          (__m512bh)_mm512_loadu_si512(in + 64), PEAK_CHAINS, 16, _mm512_set1_ps((float)j), _mm512_dpbf16_ps(acc[j], a, b),
          _mm512_add_ps, _mm512_storeu_ps(out, acc[0]))

/* AVX512-BF16: cpuid leaf 7 subleaf 1, EAX bit 5, on a CPU whose AVX-512 set runs. */
static int peak_cpu_bf16(void)
{
    unsigned a, b, c, d;
    if (swa__kernels_resolve(SWA_KERNELS_AVX512) != SWA_KERNELS_AVX512) return 0;
    if (!__get_cpuid_count(7, 1, &a, &b, &c, &d)) return 0;
    return (a >> 5) & 1u;
}
#endif

#if defined(SWA__HAVE_AVX_VNNI)
#if defined(SWA__HAVE_AMX)
/* tdpbssd: tile C (16 x 16 int32) += A (16 rows x 64 bytes) times B (16 rows of 4-byte groups
   x 16 columns), 16 x 16 x 64 multiply-adds. Four accumulator tiles (0-3) over two A (4, 5) and
   two B (6, 7), loaded once from peak_in: the products depend only on their accumulator. */
typedef struct peak_tile_config {   /* ldtilecfg's 64 bytes, palette 1 */
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} peak_tile_config;

SWA__AMX static void peak_tdpbssd(int64_t iters, const uint8_t *in, uint8_t *out)
{
    peak_tile_config cfg;
    int32_t c[16 * 16];
    int64_t i;
    int t;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (t = 0; t < 8; t++) {
        cfg.rows[t] = 16;
        cfg.colsb[t] = 64;
    }
    _tile_loadconfig(&cfg);
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    _tile_loadd(4, in, 64);
    _tile_loadd(5, in + 1024, 64);
    _tile_loadd(6, in + 2048, 64);
    _tile_loadd(7, in + 3072, 64);
    for (i = 0; i < iters; i++) {
        _tile_dpbssd(0, 4, 6);
        _tile_dpbssd(1, 4, 7);
        _tile_dpbssd(2, 5, 6);
        _tile_dpbssd(3, 5, 7);
    }
    _tile_stored(0, c, 64);
    _tile_release();
    memcpy(out, c, 64);
}

/* One block of a Q8_0 or Q4_0 batch product as swa.h's tiles run it: a 16 x 16 x 32 product
   (a block's 32 columns), C stored, and its 16 rows converted and scaled into float
   accumulators, each with the row's scale times the tokens' (swa__group_amx). The operands
   stay in L1, so this is the bound of that chain, not of the memory behind it. */
SWA__AMX static void peak_tile_block(int64_t iters, const uint8_t *in, uint8_t *out)
{
    peak_tile_config cfg;
    int32_t c[16 * 16];
    float ds[32];   /* 16 scales of the rows, then the tokens' */
    __m512 acc[16], d;
    int64_t i;
    int m;
    memcpy(ds, in + 2048, sizeof ds);
    d = _mm512_loadu_ps(ds + 16);
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    cfg.rows[0] = cfg.rows[1] = 16;
    cfg.colsb[0] = 64;   /* C */
    cfg.colsb[1] = 32;   /* A: 16 rows of a block */
    cfg.rows[2] = 8;     /* B: 16 tokens' block, 4 bytes by 4 */
    cfg.colsb[2] = 64;
    _tile_loadconfig(&cfg);
    SWA__UNROLL(16)
    for (m = 0; m < 16; m++) acc[m] = _mm512_setzero_ps();
    for (i = 0; i < iters; i++) {
        _tile_zero(0);
        _tile_loadd(1, in, 32);
        _tile_loadd(2, in + 1024, 64);
        _tile_dpbssd(0, 1, 2);
        _tile_stored(0, c, 64);
        SWA__UNROLL(16)
        for (m = 0; m < 16; m++)
            acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(c + 16 * m)), _mm512_mul_ps(_mm512_set1_ps(ds[m]), d), acc[m]);
    }
    _tile_release();
    SWA__UNROLL(16)
    for (m = 1; m < 16; m++) acc[0] = _mm512_add_ps(acc[0], acc[m]);
    _mm512_storeu_ps(out, acc[0]);
}
#endif

PEAK_LOOP(peak_vpdpbusd_vex, SWA__AVX_VNNI, __m256i, __m256i, _mm256_loadu_si256((const __m256i *)in),
          _mm256_loadu_si256((const __m256i *)(in + 32)), PEAK_CHAINS, 16, _mm256_set1_epi32(j),
          _mm256_dpbusd_avx_epi32(acc[j], a, b), _mm256_add_epi32, _mm256_storeu_si256((__m256i *)out, acc[0]))
#endif

#if defined(SWA__HAVE_AVX2)
SWA__AVX2 static void peak_maddubs_ymm(int64_t iters, const uint8_t *in, uint8_t *out)
{
    __m256i acc[PEAK_CHAINS / 2], b = _mm256_loadu_si256((const __m256i *)in), ones = _mm256_set1_epi16(1);
    int64_t i;
    int j;
    SWA__UNROLL(16)
    for (j = 0; j < PEAK_CHAINS / 2; j++) acc[j] = _mm256_set1_epi32(j);
    for (i = 0; i < iters; i++) {
        const uint8_t *s = peak_src + 64;
        SWA__UNROLL(8)
        for (j = 0; j < PEAK_CHAINS / 2; j++) {
            __m256i p = _mm256_maddubs_epi16(_mm256_loadu_si256((const __m256i *)(s + 32 * j)), b);
            acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(p, ones));
        }
    }
    SWA__UNROLL(16)
    for (j = 1; j < PEAK_CHAINS / 2; j++) acc[0] = _mm256_add_epi32(acc[0], acc[j]);
    _mm256_storeu_si256((__m256i *)out, acc[0]);
}

PEAK_LOOP(peak_fma_ymm, SWA__AVX2, __m256, __m256, _mm256_loadu_ps((const float *)in), _mm256_loadu_ps((const float *)(in + 32)),
          PEAK_CHAINS_YMM, 12, _mm256_set1_ps((float)j), _mm256_fmadd_ps(a, b, acc[j]), _mm256_add_ps,
          _mm256_storeu_ps((float *)out, acc[0]))
#endif

#if defined(SWA__HAVE_NEON)
#if defined(__ARM_FEATURE_DOTPROD)
PEAK_LOOP(peak_sdot, , int32x4_t, int8x16_t, vld1q_s8((const int8_t *)in), vld1q_s8((const int8_t *)in + 16), PEAK_CHAINS, 16,
          vdupq_n_s32(j), vdotq_s32(acc[j], a, b), vaddq_s32, vst1q_s32((int32_t *)out, acc[0]))
#endif

PEAK_LOOP(peak_fmla, , float32x4_t, float32x4_t, vld1q_f32((const float *)in), vld1q_f32((const float *)in + 4), PEAK_CHAINS, 16,
          vdupq_n_f32((float)j), vfmaq_f32(acc[j], a, b), vaddq_f32, vst1q_f32((float *)out, acc[0]))
#endif

/* What a peak loop does per accumulator step: multiply-adds (bytes, or bf16 or float pairs). */
typedef struct peak_kind {
    const char *name;      /* the instruction, as the table prints it */
    int32_t set;           /* the kernel set of the CPUs that have it */
    int chains, macs;      /* accumulators per iteration; multiply-adds per instruction */
    peak_loop loop;        /* NULL: not in this build (BF16: nor on this CPU) */
    int runs;              /* this CPU runs it */
} peak_kind;

enum { PEAK_AMX_INT8, PEAK_AMX_BLOCK, PEAK_VNNI_ZMM, PEAK_VNNI_YMM, PEAK_VNNI_VEX, PEAK_MADDUBS, PEAK_FMA_ZMM, PEAK_FMA_YMM,
       PEAK_BF16, PEAK_SDOT, PEAK_FMLA, PEAK_N };

static peak_kind peaks[PEAK_N] = {
    {"tdpbssd (AMX-INT8)", SWA_KERNELS_AMX, 4, 16 * 16 * 64, NULL, 0},
    {"tdpbssd 16x16x32, C stored and scaled (a Q8_0 block)", SWA_KERNELS_AMX, 1, 16 * 16 * 32, NULL, 0},
    {"vpdpbusd zmm (AVX-512 VNNI)", SWA_KERNELS_AVX512, PEAK_CHAINS, 64, NULL, 0},
    {"vpdpbusd ymm (AVX-512 VNNI)", SWA_KERNELS_AVX512, PEAK_CHAINS, 32, NULL, 0},
    {"vpdpbusd ymm (AVX-VNNI)", SWA_KERNELS_AVX_VNNI, PEAK_CHAINS, 32, NULL, 0},
    {"vpmaddubsw + vpmaddwd ymm (AVX2)", SWA_KERNELS_AVX2, PEAK_CHAINS / 2, 32, NULL, 0},
    {"FMA zmm (f32)", SWA_KERNELS_AVX512, PEAK_CHAINS, 16, NULL, 0},
    {"FMA ymm (f32)", SWA_KERNELS_AVX2, PEAK_CHAINS_YMM, 8, NULL, 0},
    {"vdpbf16ps zmm (AVX512-BF16)", SWA_KERNELS_AVX512, PEAK_CHAINS, 32, NULL, 0},
    {"sdot (NEON dot product)", SWA_KERNELS_NEON, PEAK_CHAINS, 16, NULL, 0},
    {"fmla (NEON f32)", SWA_KERNELS_NEON, PEAK_CHAINS, 4, NULL, 0},
};

static void peak_init(void)
{
    const float half = 0.5f;
    size_t i;
    for (i = 0; i < sizeof peak_in; i++) peak_in[i] = (uint8_t)(1 + i % 7);   /* small finite floats too */
    for (i = 0; i < 32; i++) memcpy(peak_in + 2048 + 4 * i, &half, sizeof half);   /* peak_tile_block's scales */
#if defined(SWA__HAVE_AVX2)
    peaks[PEAK_MADDUBS].loop = peak_maddubs_ymm;
    peaks[PEAK_FMA_YMM].loop = peak_fma_ymm;
#endif
#if defined(SWA__HAVE_AVX_VNNI)
    peaks[PEAK_VNNI_VEX].loop = peak_vpdpbusd_vex;
#endif
#if defined(SWA__HAVE_AVX512)
    peaks[PEAK_VNNI_ZMM].loop = peak_vpdpbusd_zmm;
    peaks[PEAK_VNNI_YMM].loop = peak_vpdpbusd_ymm;
    peaks[PEAK_FMA_ZMM].loop = peak_fma_zmm;
    if (peak_cpu_bf16()) peaks[PEAK_BF16].loop = peak_vdpbf16ps_zmm;
#endif
#if defined(SWA__HAVE_AMX)
    peaks[PEAK_AMX_INT8].loop = peak_tdpbssd;
    peaks[PEAK_AMX_BLOCK].loop = peak_tile_block;
#endif
#if defined(SWA__HAVE_NEON)
#if defined(__ARM_FEATURE_DOTPROD)
    peaks[PEAK_SDOT].loop = peak_sdot;
#endif
    peaks[PEAK_FMLA].loop = peak_fmla;
#endif
    for (i = 0; i < PEAK_N; i++) peaks[i].runs = peaks[i].loop && swa__kernels_resolve(peaks[i].set) == peaks[i].set;
}

/* Seconds of CPU time the calling thread has run: on a machine shared with other processes a
   thread's wall time counts the slices it waited for a core, its CPU time only the ones it ran
   (its caches may still have been disturbed in between, which best-of-runs catches). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct peak_job {
    peak_loop loop;
    int64_t iters;
    double cpu;   /* out: the thread's CPU seconds */
    uint8_t out[64];
} peak_job;

static void *peak_thread(void *arg)
{
    peak_job *j = (peak_job *)arg;
    double t0 = cpu_now();
    j->loop(j->iters, peak_in, j->out);
    j->cpu = cpu_now() - t0;
    return NULL;
}

/* fn on `threads` threads at once, jobs[i] (job_size bytes apart) the argument of thread i,
   the calling thread being thread 0. */
static void run_threads(void *(*fn)(void *), void *jobs, size_t job_size, int threads)
{
    pthread_t tid[MAX_THREADS];
    int i;
    for (i = 1; i < threads; i++)
        if (pthread_create(&tid[i], NULL, fn, (uint8_t *)jobs + (size_t)i * job_size)) fail("cannot start a thread");
    fn(jobs);
    for (i = 1; i < threads; i++) pthread_join(tid[i], NULL);
}

/* Multiply-adds per second of one peak loop on `threads` threads, each thread's work over its
   own CPU time, summed: iterations calibrated to about ms / reps milliseconds a run, the best
   of reps runs. */
static double peak_rate(const peak_kind *pk, int threads, double ms, int reps)
{
    peak_job jobs[MAX_THREADS];
    int64_t iters = 1024;
    double best = 0;
    int i, r;
    jobs[0].loop = pk->loop;
    for (;;) {   /* one thread's time for iters */
        jobs[0].iters = iters;
        run_threads(peak_thread, jobs, sizeof jobs[0], 1);
        if (jobs[0].cpu > 2e-3) break;
        iters *= 4;
    }
    iters = (int64_t)((double)iters * (ms / reps / 1000.0) / jobs[0].cpu) + 1;
    for (i = 0; i < threads; i++) { jobs[i].loop = pk->loop; jobs[i].iters = iters; }
    for (r = 0; r < reps; r++) {
        double rate = 0;
        run_threads(peak_thread, jobs, sizeof jobs[0], threads);
        for (i = 0; i < threads; i++) rate += (double)iters * pk->chains * pk->macs / jobs[i].cpu;
        if (rate > best) best = rate;
    }
    return best;
}

/* ---- --peak: a prompt chunk through one layer of the 1.1B shape ----

   TinyLlama's layer (2048 wide, 5632 in the MLP, 4 key/value heads of 64): q, k and v as one
   product of 2560 rows (the context splits them as one list), the output projection, gate and
   up as one of 11264 rows, down. A chunk of tokens goes through each as a context's prompt
   does: its activations quantized on the calling thread (timed), then the threads take chunks
   of rows from a shared counter, each chunk in row blocks of about 64 KB (256 KB for float
   rows) that the tokens pass in the type's tiles (swa__dot_block: rows the set widens, widened
   in the thread's scratch first). Enough copies of the layer are allocated
   that the rows come from memory, not a cache that holds them all. */
typedef struct layer_matrix {
    const char *name;
    int64_t rows, cols;
} layer_matrix;

static const layer_matrix layer[] = {{"q,k,v", 2560, 2048}, {"o", 2048, 2048}, {"gate,up", 11264, 2048}, {"down", 2048, 5632}};
#define LAYER_N (sizeof layer / sizeof layer[0])
#define LAYER_MAX_COLS 5632
#define LAYER_MAX_ROWS 11264
#define LAYER_STREAM_BYTES (96u << 20)   /* rows allocated per type, over copies of the layer */

typedef struct chunk_task {
    const swa__kernels *ks;
    uint32_t type;
    const swa__type_kernels *k;
    const uint8_t *w;
    size_t row_bytes;
    int64_t rows, cols, n, chunk;
    const uint8_t *x;
    size_t x_stride;
    const void *xpack;   /* the tokens packed for the set's batch product (gemm), or NULL */
    float *y;
    int64_t next;   /* the next chunk of rows (atomic) */
} chunk_task;

static void chunk_rows(const chunk_task *t, int64_t r0, int64_t r1, void *scratch)
{
    if (t->xpack) {
        t->k->gemm(t->w + (size_t)r0 * t->row_bytes, t->row_bytes, r1 - r0, t->xpack, t->n, t->cols, t->y + r0, t->rows,
                   scratch);
        return;
    }
    swa__dot_block(t->ks, t->type, t->w + (size_t)r0 * t->row_bytes, t->row_bytes, r1 - r0, t->x, t->x_stride, t->n,
                   t->cols, t->y + r0, t->rows, scratch);
}

typedef struct chunk_job {
    chunk_task *t;
    void *scratch;   /* the thread's, for rows the kernels widen */
    double cpu;      /* out: the thread's CPU seconds */
} chunk_job;

static void *chunk_thread(void *arg)
{
    chunk_job *j = (chunk_job *)arg;
    chunk_task *t = j->t;
    double t0 = cpu_now();
    int64_t c, r0;
    while ((c = __atomic_fetch_add(&t->next, 1, __ATOMIC_RELAXED)) * t->chunk < t->rows) {
        r0 = c * t->chunk;
        chunk_rows(t, r0, r0 + t->chunk < t->rows ? r0 + t->chunk : t->rows, j->scratch);
    }
    j->cpu = cpu_now() - t0;
    return NULL;
}

/* Rows per chunk: about 4 a thread per matrix, at most a block, whole tiles; a batch product's
   in whole 16s, without blocks (swa__chunk_rows). */
static int64_t chunk_size(const swa__type_kernels *k, size_t row_bytes, int64_t rows, int64_t cols,
                          int threads, int gemm)
{
    int64_t unit = gemm ? 16 : k->tile_rows, block = swa__block_rows(k, row_bytes, cols, unit);
    int64_t share = rows / (4 * threads) / unit * unit;
    if (threads == 1) return gemm ? rows : block;
    if (share < unit) share = unit;
    return gemm || share < block ? share : block;
}

/* Seconds for n tokens through one matrix of the layer at w: the calling thread's CPU time for
   the quantization, then the busiest thread's for the products (its critical path, were the
   machine its own). */
static double chunk_product(const swa__kernels *k, uint32_t type, const uint8_t *w, const layer_matrix *m,
                            const float *xf, uint8_t *xq, int64_t n, float *y, int threads)
{
    chunk_task t;
    chunk_job jobs[MAX_THREADS];
    int kind = swa__act_kind(type), i, gemm = k->type[type].gemm && n >= k->type[type].gemm_from;
    double t0 = cpu_now(), quantize, busiest = 0;
    uint64_t pack_bytes = 0, scratch_bytes = 0;
    void *xpack = NULL;
    int64_t j;
    memset(&t, 0, sizeof t);
    t.ks = k;
    t.type = type;
    t.k = &k->type[type];
    t.w = w;
    t.row_bytes = (size_t)(m->cols / swa__type(type)->block_size * swa__type(type)->block_bytes);
    t.rows = m->rows;
    t.cols = m->cols;
    t.n = n;
    t.y = y;
    t.chunk = chunk_size(t.k, t.row_bytes, t.rows, t.cols, threads, gemm);
    if (kind == SWA__ACT_F32) {
        t.x = (const uint8_t *)xf;
        t.x_stride = LAYER_MAX_COLS * sizeof(float);
    } else {
        t.x = xq;
        t.x_stride = swa__act_bytes(kind, m->cols);
        for (j = 0; j < n; j++) {
            if (kind == SWA__ACT_Q8) swa__quantize_q8x8(k->quantize_q8, xf + j * LAYER_MAX_COLS, xq + (size_t)j * t.x_stride, m->cols);
            else k->quantize_q8k(xf + j * LAYER_MAX_COLS, xq + (size_t)j * t.x_stride, m->cols);
        }
    }
    if (gemm) {   /* and packed for the batch product, as a context's chunk is */
        k->gemm_memory(n, m->cols, &pack_bytes, &scratch_bytes);
        if (!(xpack = line_alloc((size_t)pack_bytes))) fail("out of memory");
        t.k->pack(xq, t.x_stride, n, m->cols, xpack);
        t.xpack = xpack;
    } else {
        scratch_bytes = swa__widen_bytes(t.k, m->cols);
    }
    quantize = cpu_now() - t0;
    for (i = 0; i < threads; i++) {
        jobs[i].t = &t;
        jobs[i].scratch = scratch_bytes ? line_alloc((size_t)scratch_bytes) : NULL;
        if (scratch_bytes && !jobs[i].scratch) fail("out of memory");
        if (jobs[i].scratch) memset(jobs[i].scratch, 0, (size_t)scratch_bytes);   /* as swa_ctx_create does */
    }
    run_threads(chunk_thread, jobs, sizeof jobs[0], threads);
    for (i = 0; i < threads; i++) {
        busiest = jobs[i].cpu > busiest ? jobs[i].cpu : busiest;
        line_free(jobs[i].scratch);
    }
    line_free(xpack);
    return quantize + busiest;
}

/* The peak a set's kernels for a type are measured against: the int8 instruction the set's
   quantized kernels are built on (AMX's tiles where the set takes n tokens through its batch
   product), FMA for float rows; -1: none (the reference). */
static int peak_of(const swa__kernels *k, int32_t level, uint32_t type, int64_t n)
{
    int kind = swa__act_kind(type);
    int wide = level == SWA_KERNELS_AVX512 || level == SWA_KERNELS_AMX;
    if (level == SWA_KERNELS_REF) return -1;
    if (level == SWA_KERNELS_AMX && k->type[type].gemm && n >= k->type[type].gemm_from) {   /* tiles, unless avx512's product */
        swa__kernels below;
        swa__kernels_setup(&below, SWA_KERNELS_AVX512);
        if (below.type[type].gemm != k->type[type].gemm) return PEAK_AMX_INT8;
    }
    if (kind != SWA__ACT_F32) {
        if (wide) return PEAK_VNNI_ZMM;
        if (level == SWA_KERNELS_AVX_VNNI) return PEAK_VNNI_VEX;
        if (level == SWA_KERNELS_AVX2) return PEAK_MADDUBS;
        return peaks[PEAK_SDOT].runs ? PEAK_SDOT : -1;
    }
    if (wide) return PEAK_FMA_ZMM;
    return level == SWA_KERNELS_NEON ? PEAK_FMLA : PEAK_FMA_YMM;
}

/* Multiply-adds per second of n tokens through the layer, the best of reps passes (each on
   the next copy of the rows). */
static double layer_rate(const swa__kernels *k, uint32_t type, uint8_t *const *copy, int copies, const float *xf,
                         uint8_t *xq, int64_t n, float *y, int threads, int reps)
{
    double best = 0, macs = 0, t;
    size_t m;
    int r;
    for (m = 0; m < LAYER_N; m++) macs += (double)n * (double)layer[m].rows * (double)layer[m].cols;
    for (r = 0; r < reps; r++) {
        const uint8_t *w = copy[r % copies];
        for (t = 0, m = 0; m < LAYER_N; m++) {
            t += chunk_product(k, type, w, &layer[m], xf, xq, n, y, threads);
            w += (size_t)(layer[m].rows * (layer[m].cols / swa__type(type)->block_size) * swa__type(type)->block_bytes);
        }
        if (macs / t > best) best = macs / t;
    }
    return best;
}

static void print_share(double rate, int pk, const double *peak)
{
    if (rate <= 0) printf(" - | - |");
    else if (pk < 0 || peak[pk] <= 0) printf(" %.1f | - |", rate / 1e9);
    else printf(" %.1f | %.0f%% |", rate / 1e9, 100.0 * rate / peak[pk]);
}

/* swa-kbench --peak: the instructions' peaks on 1 and on `threads` threads, then each type's
   prompt kernels through the layer as a share of the peak of their set. */
static int peak_main(const char *only_type, int32_t only_kernels, int threads, int64_t tokens, double ms, int reps)
{
    double peak1[PEAK_N], peakn[PEAK_N];
    float *xf, *y;
    uint8_t *xq;
    uint32_t type;
    int i;
    int32_t level;
    peak_init();
    printf("| instruction | multiply-adds per instruction | G multiply-adds/s, 1 thread | G multiply-adds/s, %d threads |\n"
           "| --- | --- | --- | --- |\n", threads);
    for (i = 0; i < PEAK_N; i++) {
        peak1[i] = peakn[i] = 0;
        if (!peaks[i].runs) continue;
        peak1[i] = peak_rate(&peaks[i], 1, ms, 20);
        peakn[i] = threads > 1 ? peak_rate(&peaks[i], threads, ms, 20) : peak1[i];
        printf("| %s | %d | %.1f | %.1f |\n", peaks[i].name, peaks[i].macs, peak1[i] / 1e9, peakn[i] / 1e9);
        fflush(stdout);
    }
    xf = (float *)line_alloc(sizeof(float) * LAYER_MAX_COLS * (size_t)tokens);
    xq = (uint8_t *)line_alloc(swa__act_bytes(SWA__ACT_Q8K, LAYER_MAX_COLS) * (size_t)tokens +
                           swa__act_bytes(SWA__ACT_Q8, LAYER_MAX_COLS) * (size_t)tokens);
    y = (float *)line_alloc(sizeof(float) * LAYER_MAX_ROWS * (size_t)tokens);
    if (!xf || !xq || !y) fail("out of memory");
    for (i = 0; i < LAYER_MAX_COLS * tokens; i++) xf[i] = (float)(next_u32() % 2001) / 1000.0f - 1.0f;
    printf("\n%lld-token chunk through a 1.1B layer (q,k,v 2560 x 2048, o 2048 x 2048, gate,up 11264 x 2048, down 2048 x 5632),"
           " activation quantization included:\n\n"
           "| type | kernels | peak | G multiply-adds/s, 1 thread | of peak | G multiply-adds/s, %d threads | of peak |\n"
           "| --- | --- | --- | --- | --- | --- | --- |\n", (long long)tokens, threads);
    for (type = 0; type < SWA__N_TYPES; type++) {
        const swa__type_info *ti = swa__type(type);
        uint8_t *copy[8];
        size_t layer_bytes = 0, m;
        int copies, c;
        if (!ti || !ti->dequant || (only_type && !type_matches(ti->name, only_type))) continue;
        for (m = 0; m < LAYER_N; m++) layer_bytes += (size_t)(layer[m].rows * (layer[m].cols / ti->block_size) * ti->block_bytes);
        copies = (int)(LAYER_STREAM_BYTES / layer_bytes);
        copies = copies < 1 ? 1 : copies > 8 ? 8 : copies;
        for (c = 0; c < copies; c++) {
            if (!(copy[c] = (uint8_t *)line_alloc(layer_bytes))) fail("out of memory");
            if (c > 0) { memcpy(copy[c], copy[0], layer_bytes); continue; }
            for (layer_bytes = 0, m = 0; m < LAYER_N; m++) {
                size_t bytes = (size_t)(layer[m].rows * (layer[m].cols / ti->block_size) * ti->block_bytes);
                random_rows(type, copy[0] + layer_bytes, bytes, layer[m].rows, layer[m].cols);
                layer_bytes += bytes;
            }
        }
        for (level = SWA_KERNELS_REF; level <= SWA__KERNELS_LAST; level++) {
            swa__kernels k;
            int pk;
            if (swa__kernels_resolve(level) != level) continue;
            if (only_kernels > 0 ? level != only_kernels : level == SWA_KERNELS_REF) continue;   /* ref: only when asked */
            swa__kernels_setup(&k, level);
            pk = peak_of(&k, level, type, tokens);
            printf("| %s | %s | %s |", ti->name, k.name, pk < 0 ? "-" : peaks[pk].name);
            fflush(stdout);
            print_share(layer_rate(&k, type, copy, copies, xf, xq, tokens, y, 1, reps), pk, peak1);
            if (threads > 1) print_share(layer_rate(&k, type, copy, copies, xf, xq, tokens, y, threads, reps), pk, peakn);
            else printf(" - | - |");
            printf("\n");
            fflush(stdout);
        }
        for (c = 0; c < copies; c++) line_free(copy[c]);
    }
    line_free(xf); line_free(xq); line_free(y);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: swa-kbench [--type f32|f16|bf16|q8_0|q4_0|iq4_nl|mxfp4|q4_k|...] [--kernels ref|avx2|avx-vnni|avx512|amx|neon]\n"
               "                  [-n COLUMNS] [--ms MILLISECONDS]\n"
               "       swa-kbench --peak [-t THREADS] [--tokens N] [--reps N] [--type T] [--kernels K] [--ms MILLISECONDS]\n"
               "  --type T      one weight type (default: every type the library computes with)\n"
               "  --kernels K   one instruction set (default: every one this CPU runs, the reference included;\n"
               "                with --peak, every SIMD one)\n"
               "  -n N          row length (default 2048, a multiple of 256)\n"
               "  --ms M        time per measurement (default 300)\n"
               "  --peak        the instructions' peaks, then each type's prompt kernels through a 1.1B layer\n"
               "                as multiply-adds/s and as a share of the peak\n"
               "  -t N          --peak: threads besides one (default 2)\n"
               "  --tokens N    --peak: tokens in the chunk (default 512)\n"
               "  --reps N      --peak: passes through the layer, the best counted (default 3)\n");
}

int main(int argc, char **argv)
{
    const char *only_type = NULL;
    int32_t only_kernels = -1, level;
    int64_t n = 2048, tokens = 512;
    double ms = 300;
    uint32_t type;
    int i, peak = 0, threads = 2, reps = 3;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!strcmp(a, "--version")) { printf("swa-kbench %s\n", swa_version()); return 0; }
        if (!strcmp(a, "--peak")) { peak = 1; continue; }
        if (!v) { fprintf(stderr, "swa-kbench: %s needs a value or is unknown\n", a); usage(stderr); return 2; }
        i++;
        if (!strcmp(a, "--type")) only_type = v;
        else if (!strcmp(a, "--kernels") && swa_kernels_from_name(v) > 0) only_kernels = swa_kernels_from_name(v);
        else if (!strcmp(a, "-n") && atoll(v) > 0 && atoll(v) % 256 == 0) n = atoll(v);
        else if (!strcmp(a, "--ms") && atof(v) > 0) ms = atof(v);
        else if (!strcmp(a, "-t") && atoi(v) > 0 && atoi(v) <= MAX_THREADS) threads = atoi(v);
        else if (!strcmp(a, "--tokens") && atoll(v) > 0 && atoll(v) <= 4096) tokens = atoll(v);
        else if (!strcmp(a, "--reps") && atoi(v) > 0 && atoi(v) <= 1000) reps = atoi(v);
        else { fprintf(stderr, "swa-kbench: bad flag or value: %s %s\n", a, v); usage(stderr); return 2; }
    }
    if (only_type) {
        for (type = 0; type < SWA__N_TYPES; type++)
            if (swa__type(type) && swa__type(type)->dequant && type_matches(swa_type_name(type), only_type)) break;
        if (type == SWA__N_TYPES) { fprintf(stderr, "swa-kbench: no kernels for type \"%s\"\n", only_type); return 2; }
    }
    if (peak) return peak_main(only_type, only_kernels, threads, tokens, ms, reps);
    printf("| type | kernels | generation GB/s | prompt GB/s x tokens (whole tiles) |"
           " batch of 8, GB/s x tokens (gemm) | batch of 64, GB/s x tokens (gemm) |\n| --- | --- | --- | --- | --- | --- |\n");
    for (type = 0; type < SWA__N_TYPES; type++) {
        const swa__type_info *ti = swa__type(type);
        size_t row_bytes;
        int64_t n_rows;
        uint8_t *w, *x;
        float *xf, *y;
        if (!ti || !ti->dequant || (only_type && !type_matches(ti->name, only_type))) continue;
        row_bytes = (size_t)(n / ti->block_size * ti->block_bytes);
        n_rows = (int64_t)(96 * 1024 / row_bytes / 12 * 12);   /* whole tiles of 3 and of 4 rows */
        if (n_rows < 12) n_rows = 12;
        w = (uint8_t *)line_alloc(row_bytes * (size_t)n_rows);
        x = (uint8_t *)line_alloc(64 * swa__act_bytes(ti->act, n + 255));
        xf = (float *)line_alloc(sizeof(float) * (size_t)n);
        y = (float *)line_alloc(sizeof(float) * 64 * (size_t)n_rows);
        if (!w || !x || !xf || !y) { fprintf(stderr, "swa-kbench: out of memory\n"); return 1; }
        random_rows(type, w, row_bytes * (size_t)n_rows, n_rows, n);
        for (level = SWA_KERNELS_REF; level <= SWA__KERNELS_LAST; level++) {
            swa__kernels k;
            size_t x_stride = swa__act_bytes(ti->act, n + 255);
            int t;
            int64_t j;
            if (swa__kernels_resolve(level) != level || (only_kernels > 0 && level != only_kernels)) continue;
            swa__kernels_setup(&k, level);
            for (t = 0; t < 64; t++) {
                for (j = 0; j < n; j++) xf[j] = (float)(next_u32() % 2001) / 1000.0f - 1.0f;
                if (ti->act == SWA__ACT_Q8) swa__quantize_q8x8(k.quantize_q8, xf, x + (size_t)t * x_stride, n);
                else if (ti->act == SWA__ACT_Q8K) k.quantize_q8k(xf, x + (size_t)t * x_stride, n);
                else memcpy(x + (size_t)t * x_stride, xf, sizeof(float) * (size_t)n);
            }
            printf("| %s | %s |", ti->name, k.name);
            print_figure(time_tokens(&k, type, w, row_bytes, n_rows, x, x_stride, 1, n, y, ms));
            print_figure(time_tokens(&k, type, w, row_bytes, n_rows, x, x_stride, k.type[type].tile_tokens, n, y, ms));
            print_figure(time_gemm(&k, type, w, row_bytes, n_rows, x, x_stride, 8, n, y, ms));
            print_figure(time_gemm(&k, type, w, row_bytes, n_rows, x, x_stride, 64, n, y, ms));
            printf("\n");
            fflush(stdout);
        }
        line_free(w); line_free(x); line_free(xf); line_free(y);
    }
    return 0;
}
