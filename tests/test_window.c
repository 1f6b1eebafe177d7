/* The heart of the suite: the rolling buffer gives the logits of full attention with a window
   mask, for every window, head layout, chunk size and weight type; the mask edge sits exactly
   at distance W; the cache never grows past W slots per layer. */
#define SWA_INTERNALS   /* the internals it tests: swa.h, "internal declarations" */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/testutil.h"
#include <pthread.h>

/* Under an emulator or a sanitizer (make test-aarch64 and the sanitized builds pass SWA_TEST_QUICK)
   floating point runs twenty to a hundred times slower: the same properties are checked on fewer
   windows and shorter runs. */
/* Under the sanitizers and the emulator (make test SANITIZE=1, TSAN=1 and make test-aarch64
   pass SWA_TEST_SLOW) the tests that only check arithmetic over more types, head layouts, cache types
   and kernel sets are skipped: they run the same ring and threaded code as the F32 one and the
   thread tests below, which stay, at twenty to a hundred times the cost; each set's kernels are
   held to the scalar reference on awkward sizes by test_kernels, which runs there too. */
#ifdef SWA_TEST_SLOW
#define ARITHMETIC_ONLY() do { skip(); } while (0)
#else
#define ARITHMETIC_ONLY() do { } while (0)
#endif

#ifdef SWA_TEST_QUICK
#define N_WINDOWS 2
#define LONG_RUN 2000
#else
#define N_WINDOWS 4
#define LONG_RUN 10000
#endif

/* Run `tok` through a fresh context in chunks of `chunk` and return all logits. */
static float *run_chunked(const swa_model *model, const swa_ctx_config *cfg, const int32_t *tok, int n, int chunk)
{
    const swa_hparams *hp = swa_model_hparams(model);
    float *out = (float *)malloc(sizeof(float) * (size_t)n * (size_t)hp->n_vocab);
    swa_ctx *ctx;
    swa_error err;
    int i;
    assert_int_equal(swa_ctx_create(model, cfg, &ctx, &err), SWA_OK);
    for (i = 0; i < n; i += chunk) {
        int len = n - i < chunk ? n - i : chunk;
        if (swa_ctx_eval_all(ctx, tok + i, (size_t)len, out + (size_t)i * hp->n_vocab, &err) != SWA_OK)
            fail_msg("eval at %d: %s", i, err.msg);
    }
    assert_int_equal(swa_ctx_pos(ctx), n);
    swa_ctx_free(ctx);
    return out;
}

/* Error against the double-precision reference, relative to the largest logit. Float weights
   with an F32 cache differ by float rounding only; an F16 cache rounds keys and values to 11
   bits; quantized weights meet activations quantized to 8 bits, as in llama.cpp; a Q8_0 cache
   rounds keys and values to 8 bits per block of 32 and meets queries quantized likewise. */
static double tolerance(uint32_t type, int kv_type)
{
    double t = type == GW_Q8_0 || type == GW_Q4_0 || type == GW_Q4_K || type == GW_Q5_K || type == GW_Q6_K || type == GW_MXFP4
                   ? 3e-2 : 2e-5;
    return kv_type == SWA_KV_F16 ? t + 2e-3 : kv_type == SWA_KV_Q8_0 ? t + 2e-2 : t;
}

static int argmax_d(const double *x, int n)
{
    int i, best = 0;
    for (i = 1; i < n; i++) if (x[i] > x[best]) best = i;
    return best;
}

/* One model and window, for every cache type (Q8_0 where the head size is a multiple of 32) and
   both kernel sets (or, with n_batch below the chunk sizes, which splits runs inside the
   library, the default ones only, to keep emulated runs short): chunks of 1 token (every key from the ring) match the reference within the
   tolerance, and every other chunk size gives exactly the same bits as chunks of 1. */
static void check_against_reference(const tu_spec *spec, int W, int n_batch)
{
    static const int kv_types[3] = {SWA_KV_F16, SWA_KV_F32, SWA_KV_Q8_0};
    int variants = n_batch < 64 ? 1 : (spec->n_embd / spec->n_head) % 32 == 0 ? 6 : 4;
    tu_model tm;
    swa_model *model;
    swa_ctx_config cfg;
    int n = 5 * W + 7 > 24 ? 5 * W + 7 : 24, V = spec->n_vocab, windows[16], l, c, kv, kern, t;
    int chunks[6] = {3, W - 1, W, W + 1, 2 * W + 3, 0};
    int32_t *tok = (int32_t *)malloc(sizeof(int32_t) * (size_t)n);
    double *ref;
    chunks[5] = n;
    model = tu_build_load(&tm, spec);
    for (l = 0; l < spec->n_layer; l++) windows[l] = spec->chunk ? -spec->chunk : spec->windows ? spec->windows[l] : W;
    tu_random_tokens(tok, n, V, 1234 + (uint64_t)W);
    ref = (double *)malloc(sizeof(double) * (size_t)n * (size_t)V);
    tu_reference(&tm, tok, n, windows, ref);
    memset(&cfg, 0, sizeof cfg);
    cfg.n_batch = n_batch;
    for (kv = 0; kv < 3; kv++)
        for (kern = 0; kern < 2; kern++) {
            if (2 * kv + kern >= variants) continue;
            float *base;
            double e, tol = tolerance(spec->type, kv_types[kv]);
            int agree = 0;
            cfg.kv_type = kv_types[kv];
            cfg.kernels = kern ? SWA_KERNELS_REF : SWA_KERNELS_BEST;
            base = run_chunked(model, &cfg, tok, n, 1);
            e = tu_rel_error(base, ref, (size_t)n * (size_t)V);
            for (t = 0; t < n; t++) agree += swa_argmax(base + (size_t)t * V, V) == argmax_d(ref + (size_t)t * V, V);
            if (e > tol || agree < n - n / 10)
                fail_msg("type %s, W %d, heads %d/%d, kv %s, kernels %s: error %.3g (tolerance %.3g), argmax %d/%d",
                         swa_type_name(spec->type), W, spec->n_head, spec->n_kv_head, swa_kv_type_name(kv_types[kv]),
                         kern ? "ref" : "best", e, tol, agree, n);
            if (getenv("SWA_TEST_VERBOSE"))
                fprintf(stderr, "test_window: %s weights, kv %s, kernels %s, W %d: error %.3g (tolerance %.3g)\n",
                        swa_type_name(spec->type), swa_kv_type_name(kv_types[kv]), kern ? "ref" : "best", W, e, tol);
            for (c = 0; c < 6; c++) {
                float *got;
                if (chunks[c] < 2) continue;
                got = run_chunked(model, &cfg, tok, n, chunks[c]);
                if (memcmp(got, base, sizeof(float) * (size_t)n * (size_t)V) != 0)
                    fail_msg("type %s, W %d, chunk %d, n_batch %d, kv %s, kernels %s: logits differ from chunks of 1",
                             swa_type_name(spec->type), W, chunks[c], n_batch, swa_kv_type_name(kv_types[kv]),
                             kern ? "ref" : "best");
                free(got);
            }
            free(base);
        }
    free(ref);
    free(tok);
    swa_model_free(model);
    tu_free(&tm);
}

static tu_spec small_spec(int n_head, int n_kv_head, uint32_t type, int W)
{
    tu_spec s;
    memset(&s, 0, sizeof s);
    s.n_layer = 2;
    s.n_embd = 64;
    s.n_head = n_head;
    s.n_kv_head = n_kv_head;
    s.n_ff = 96;
    s.n_vocab = 40;
    s.n_ctx = 512;
    s.type = type;
    s.window = W;
    s.seed = 77 + (uint64_t)(W * 131 + n_kv_head);
    return s;
}

/* F32: MHA, GQA and MQA, W in {1, 2, 7, 16}; n_batch both larger and smaller than the chunks,
   so runs are split inside the library too. */
static void test_ring_equals_mask_f32(void **state)
{
    static const int windows[4] = {1, 7, 2, 16};
    static const int heads[3][2] = {{4, 4}, {4, 2}, {4, 1}};
    int wi, hi;
    (void)state;
    for (wi = 0; wi < N_WINDOWS; wi++)
        for (hi = 0; hi < 3; hi++) {
            tu_spec s = small_spec(heads[hi][0], heads[hi][1], GW_F32, windows[wi]);
            check_against_reference(&s, windows[wi], 64);
            check_against_reference(&s, windows[wi], 5);
        }
}

/* Chunked attention (Llama 4's layers): a query at i sees the keys of its own chunk of C up to
   i, so the ring of C slots is exact at every chunk boundary: chunks of evaluation of 1 match
   the reference with the chunk mask, and 3, C - 1, C, C + 1, 2C + 3 and the whole sequence
   give the same bits; with n_batch below them too. Then rewinding (the ring of C + n_rewind
   slots keeps what the rewound position's chunk needs) and a snapshot round trip give the bits
   of the straight run. */
static void check_chunked_rewind(const swa_model *model, const int32_t *tok, int n, int C, const float *want)
{
    const swa_hparams *hp = swa_model_hparams(model);
    swa_ctx_config cfg;
    swa_ctx *c, *d;
    swa_error err;
    size_t row = (size_t)hp->n_vocab * sizeof(float), size, written;
    void *buf;
    int p;
    memset(&cfg, 0, sizeof cfg);
    cfg.n_rewind = 3;
    cfg.n_batch = 64;
    assert_int_equal(swa_ctx_create(model, &cfg, &c, &err), SWA_OK);
    assert_int_equal(swa_ctx_create(model, &cfg, &d, &err), SWA_OK);
    for (p = 0; p < n; p++) {   /* each token, then back 3 (or as far as allowed) and forward again */
        const float *lg;
        int64_t back = swa_seq_max_rewind(c, 0) < 3 ? swa_seq_max_rewind(c, 0) : 3, k;
        if (swa_ctx_eval(c, tok + p, 1, &lg, &err) != SWA_OK) fail_msg("eval at %d: %s", p, err.msg);
        assert_int_equal(swa_seq_rewind(c, 0, back, &err), SWA_OK);
        for (k = p + 1 - back; k <= p; k++)
            if (swa_ctx_eval(c, tok + k, 1, &lg, &err) != SWA_OK) fail_msg("re-eval at %d: %s", (int)k, err.msg);
        if (memcmp(lg, want + (size_t)p * hp->n_vocab, row) != 0) fail_msg("C %d: position %d after a rewind of %d differs", C, p, (int)back);
        if (p == n / 2) {   /* a snapshot into another context, which goes on from there */
            size = swa_state_size(c, 0);
            buf = malloc(size);
            assert_int_equal(swa_state_save(c, 0, buf, size, &written, &err), SWA_OK);
            assert_int_equal(swa_state_load(d, 0, buf, written, &err), SWA_OK);
            free(buf);
        }
        if (p > n / 2) {
            if (swa_ctx_eval(d, tok + p, 1, &lg, &err) != SWA_OK) fail_msg("eval at %d: %s", p, err.msg);
            if (memcmp(lg, want + (size_t)p * hp->n_vocab, row) != 0) fail_msg("C %d: position %d after a snapshot differs", C, p);
        }
    }
    swa_ctx_free(c);
    swa_ctx_free(d);
}

static void test_chunked_attention(void **state)
{
    static const int chunk_sizes[4] = {1, 5, 8, 2};
    static const int heads[2][2] = {{4, 2}, {4, 1}};
    int ci, hi;
    (void)state;
    for (ci = 0; ci < N_WINDOWS; ci++)
        for (hi = 0; hi < 2; hi++) {
            tu_spec s = small_spec(heads[hi][0], heads[hi][1], GW_F32, 0);
            int C = chunk_sizes[ci], n = 5 * C + 7 > 24 ? 5 * C + 7 : 24;
            tu_model tm;
            swa_model *model;
            swa_ctx_config cfg;
            int32_t *tok = (int32_t *)malloc(sizeof(int32_t) * (size_t)n);
            float *want;
            s.chunk = C;
            check_against_reference(&s, C, 64);
            check_against_reference(&s, C, 5);
            model = tu_build_load(&tm, &s);
            assert_int_equal(swa_model_layer_window(model, 0), C);
            assert_int_equal(swa_model_layer_window(model, 1), C);
            memset(&cfg, 0, sizeof cfg);
            cfg.kv_type = SWA_KV_F32;
            assert_int_equal(swa_ctx_cache_split(model, &cfg, NULL, NULL),
                             2 * 2 * (size_t)C * (size_t)(s.n_kv_head * (s.n_embd / s.n_head)) * sizeof(float));
            tu_random_tokens(tok, n, s.n_vocab, 1234 + (uint64_t)C);
            memset(&cfg, 0, sizeof cfg);
            want = run_chunked(model, &cfg, tok, n, 1);
            check_chunked_rewind(model, tok, n, C, want);
            /* the chunk mask is not the window's: the same file read with a sliding window differs */
            if (C > 1) {
                float *slide;
                cfg.window = C;
                slide = run_chunked(model, &cfg, tok, n, 1);
                if (!memcmp(slide, want, sizeof(float) * (size_t)n * (size_t)s.n_vocab)) fail_msg("C %d: chunks and window agree", C);
                free(slide);
            }
            free(want);
            free(tok);
            swa_model_free(model);
            tu_free(&tm);
        }
}

/* Quantized and 16-bit weights: the reference uses the values the file stores. */
static void test_ring_equals_mask_other_types(void **state)
{
    static const uint32_t types[5] = {GW_Q8_0, GW_Q4_0, GW_MXFP4, GW_F16, GW_BF16};
    int t;
    (void)state;
    ARITHMETIC_ONLY();
    for (t = 0; t < 5; t++) {
        tu_spec gqa = small_spec(4, 2, types[t], 7), mqa = small_spec(8, 1, types[t], 16);
        check_against_reference(&gqa, 7, 64);
        check_against_reference(&mqa, 16, 4);
    }
}

/* Q4_K, Q5_K and Q6_K weights (rows of 256): chunks of 16 tokens and more take the avx512 or
   amx set's matrix products where the CPU has them, chunks of 1 their dots, and the two give
   the same bits. */
static void test_ring_equals_mask_k_quants(void **state)
{
    static const uint32_t types[3] = {GW_Q4_K, GW_Q5_K, GW_Q6_K};
    int t;
    (void)state;
    ARITHMETIC_ONLY();
    for (t = 0; t < 3; t++) {
        tu_spec s = small_spec(4, 2, types[t], 7);
        s.n_embd = 256;
        s.n_ff = 256;
        check_against_reference(&s, 7, 64);
    }
}

/* Every instruction set the CPU runs, not only the widest one the test above takes: chunks of
   17 and 42 tokens (batches that the sets with matrix products give to them) equal chunks of 1
   bit for bit, for every type some set has products for. */
static void test_chunks_every_set(void **state)
{
    static const uint32_t types[] = {GW_Q4_0, GW_Q8_0, GW_Q4_1, GW_Q5_0, GW_Q5_1, GW_IQ4_NL, GW_MXFP4,
                                     GW_Q2_K, GW_Q3_K, GW_Q4_K, GW_Q5_K, GW_Q6_K, GW_IQ4_XS};
    static const int32_t sets[] = {SWA_KERNELS_AVX2, SWA_KERNELS_AVX_VNNI, SWA_KERNELS_AVX512, SWA_KERNELS_AMX, SWA_KERNELS_NEON};
    static const int chunks[2] = {17, 42};
    int32_t tok[48];
    size_t ti, si;
    int c;
    (void)state;
    ARITHMETIC_ONLY();
    for (ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        tu_spec s = small_spec(4, 2, types[ti], 7);
        tu_model tm;
        swa_model *model;
        swa_error err;
        s.n_embd = 256;
        s.n_ff = 256;
        s.mixed = types[ti] == GW_Q4_0;   /* with Q8_0 v and up: products of two types in one task */
        tu_random_tokens(tok, 48, s.n_vocab, 99 + ti);
        model = tu_build_load(&tm, &s);
        for (si = 0; si < sizeof sets / sizeof sets[0]; si++) {
            swa_ctx_config cfg;
            swa_ctx *probe;
            float *base;
            memset(&cfg, 0, sizeof cfg);
            cfg.kernels = sets[si];
            if (swa_ctx_create(model, &cfg, &probe, &err) != SWA_OK) continue;   /* a set this CPU does not run */
            swa_ctx_free(probe);
            base = run_chunked(model, &cfg, tok, 48, 1);
            for (c = 0; c < 2; c++) {
                float *got = run_chunked(model, &cfg, tok, 48, chunks[c]);
                if (memcmp(got, base, sizeof(float) * 48 * (size_t)s.n_vocab) != 0)
                    fail_msg("type %s, kernels %s, chunk %d: logits differ from chunks of 1", swa_type_name(types[ti]),
                             swa_kernels_name(sets[si]), chunks[c]);
                free(got);
            }
            free(base);
        }
        swa_model_free(model);
        tu_free(&tm);
    }
}

/* Layers with their own windows, including a full-attention layer, and partial RoPE with a
   larger base. */
static void test_per_layer_windows(void **state)
{
    static const int windows[3] = {3, 0, 9};
    tu_spec s = small_spec(4, 2, GW_F32, 0);
    (void)state;
    s.n_layer = 3;
    s.windows = windows;
    s.n_rot = 8;
    s.rope_base = 1e6f;
    check_against_reference(&s, 9, 64);
    check_against_reference(&s, 9, 2);
}

/* Head sizes 16 and 128, RoPE base 1e6, windows that are not powers of two; and a file that
   mixes types among the products that share an input (Q4_0 q and k with a Q8_0 v, Q4_0 gate
   with a Q8_0 up), rows long enough for the Q4_0 kernel's 8-block groups and its tail. */
static void test_head_sizes(void **state)
{
    tu_spec big = small_spec(2, 1, GW_Q4_0, 11), small = small_spec(8, 2, GW_F16, 13), mixed = small_spec(4, 2, GW_Q4_0, 9);
    (void)state;
    ARITHMETIC_ONLY();
    big.n_embd = 256;
    big.n_ff = 128;
    big.rope_base = 1e6f;
    small.n_embd = 128;
    mixed.n_embd = 256;
    mixed.n_ff = 288;
    mixed.mixed = 1;
    check_against_reference(&big, 11, 64);
    check_against_reference(&small, 13, 8);
    check_against_reference(&mixed, 9, 64);
}

/* A Q8_0 cache on head size 64 (GQA, F32 and Q8_0 weights) against the reference through
   check_against_reference; it holds 34 bytes per 32 values (an F32 cache 128); a head size that
   is not a multiple of 32 is refused with a message. */
static void test_kv_q8_0(void **state)
{
    tu_spec s = small_spec(4, 2, GW_F32, 10), q = small_spec(4, 2, GW_Q8_0, 10), odd = small_spec(4, 2, GW_F32, 4);
    tu_model tm;
    swa_model *model;
    swa_ctx_config cfg;
    swa_ctx *c32, *c8;
    swa_error err;
    (void)state;
    ARITHMETIC_ONLY();
    s.n_embd = q.n_embd = 256;
    check_against_reference(&s, 10, 64);
    check_against_reference(&q, 10, 64);
    model = tu_build_load(&tm, &s);
    memset(&cfg, 0, sizeof cfg);
    cfg.kv_type = SWA_KV_F32;
    assert_int_equal(swa_ctx_create(model, &cfg, &c32, NULL), SWA_OK);
    cfg.kv_type = SWA_KV_Q8_0;
    assert_int_equal(swa_ctx_create(model, &cfg, &c8, NULL), SWA_OK);
    /* 2 layers x (keys, values) x 10 slots x 128 values, each buffer 64-byte aligned */
    assert_in_range(swa_ctx_cache_bytes(c32), 4 * 10 * 128 * 4, 4 * 10 * 128 * 4 + 4 * 63);
    assert_in_range(swa_ctx_cache_bytes(c8), 4 * 10 * 128 / 32 * 34, 4 * 10 * 128 / 32 * 34 + 4 * 63);
    swa_ctx_free(c32);
    swa_ctx_free(c8);
    swa_model_free(model);
    tu_free(&tm);
    model = tu_build_load(&tm, &odd);                        /* head size 16 */
    assert_int_equal(swa_ctx_create(model, &cfg, &c8, &err), SWA_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "multiple of 32"));
    assert_null(c8);
    swa_model_free(model);
    tu_free(&tm);
}

/* Threads split rows (of q, k and v as one list, and of gate and up), (token, head) pairs and a
   long chunk's element-wise steps (norms, residual, gate activation, quantization: ranges cut
   at multiples of 64 values, here inside a token's 544), each element computed by one thread
   with the same code: the logits are bit-identical for 1, 2, 3 and 4 threads. Q4_0 weights with
   Q8_0 v and up, so both quantized kernels take part. */
static void threads_bit_identical(int n_embd, int n_ff, int n_tokens, int n_batch, int chunk)
{
    tu_spec s = small_spec(8, 2, GW_Q4_0, 7);
    tu_model tm;
    swa_model *model;
    swa_ctx_config cfg;
    int32_t *tok = (int32_t *)malloc(sizeof(int32_t) * (size_t)n_tokens);
    float *base = NULL;
    int nt;
    assert_non_null(tok);
    s.n_embd = n_embd;
    s.n_ff = n_ff;
    s.mixed = 1;
    model = tu_build_load(&tm, &s);
    tu_random_tokens(tok, n_tokens, s.n_vocab, 321);
    memset(&cfg, 0, sizeof cfg);
    for (nt = 1; nt <= 4; nt++) {
        float *got;
        cfg.n_threads = nt;
        cfg.n_batch = n_batch;
        got = run_chunked(model, &cfg, tok, n_tokens, chunk);
        if (!base) base = got;
        else {
            assert_memory_equal(base, got, sizeof(float) * (size_t)n_tokens * (size_t)s.n_vocab);
            free(got);
        }
    }
    free(base);
    free(tok);
    swa_model_free(model);
    tu_free(&tm);
}

static void test_threads_bit_identical(void **state)
{
    (void)state;
    threads_bit_identical(256, 512, 40, 6, 13);
    threads_bit_identical(512, 544, 200, 192, 170);   /* 170 x 544 and 170 x 512 values a step */
}

/* One model shared by 4 contexts driven from 4 threads at once: each gets exactly the logits
   it gets alone (the model is read-only; everything a context writes is its own). */
typedef struct shared_run {
    const swa_model *model;
    const int32_t *tok;
    int n, chunk;
    float *out;
} shared_run;

static void *run_shared(void *arg)
{
    shared_run *r = (shared_run *)arg;
    swa_ctx_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.n_threads = 2;
    r->out = run_chunked(r->model, &cfg, r->tok, r->n, r->chunk);
    return NULL;
}

static void test_contexts_in_threads(void **state)
{
    tu_spec s = small_spec(8, 2, GW_Q4_0, 9);
    tu_model tm;
    swa_model *model;
    swa_ctx_config cfg;
    int32_t tok[4][60];
    shared_run runs[4];
    pthread_t tid[4];
    int i;
    (void)state;
    s.n_embd = 256;
    model = tu_build_load(&tm, &s);
    for (i = 0; i < 4; i++) {
        tu_random_tokens(tok[i], 60, s.n_vocab, 100 + (uint64_t)i);
        runs[i].model = model;
        runs[i].tok = tok[i];
        runs[i].n = 60;
        runs[i].chunk = 1 + 5 * i;
        assert_int_equal(pthread_create(&tid[i], NULL, run_shared, &runs[i]), 0);
    }
    for (i = 0; i < 4; i++) assert_int_equal(pthread_join(tid[i], NULL), 0);
    memset(&cfg, 0, sizeof cfg);
    cfg.n_threads = 2;
    for (i = 0; i < 4; i++) {
        float *alone = run_chunked(model, &cfg, tok[i], 60, runs[i].chunk);
        assert_memory_equal(alone, runs[i].out, sizeof(float) * 60 * (size_t)s.n_vocab);
        free(alone);
        free(runs[i].out);
    }
    swa_model_free(model);
    tu_free(&tm);
}

/* RoPE angles at positions in the millions: pos * base^(-2i/d) is taken in double, so the
   cos/sin the context uses stay within float rounding of the exact ones (the frequencies here
   as the context computes them, in double). */
static void test_rope_far_positions(void **state)
{
    enum { HALF = 32 };
    const int64_t positions[3] = {1000000, 10000000, 123456789};
    double inv_freq[HALF];
    float cs[2 * HALF];
    int p, i;
    (void)state;
    for (i = 0; i < HALF; i++) inv_freq[i] = pow(10000.0, -2.0 * i / (2 * HALF));
    for (p = 0; p < 3; p++) {
        swa__rope_angles(inv_freq, HALF, 1.0, positions[p], cs);
        for (i = 0; i < HALF; i++) {
            long double angle = (long double)positions[p] * powl(10000.0L, -2.0L * i / (2 * HALF));
            assert_true(fabs(cs[2 * i] - (double)cosl(angle)) < 1e-6);
            assert_true(fabs(cs[2 * i + 1] - (double)sinl(angle)) < 1e-6);
        }
    }
}

/* Logits at positions around 10^6 and 10^7 against the double-precision reference placed
   there. One layer with W = 8: the context starts at P - 8 (set directly: nothing before it
   matters), and from position P - 1 on every key a query sees was computed in this chunk. */
static void test_logits_far_positions(void **state)
{
    tu_spec s = small_spec(4, 2, GW_F32, 8);
    tu_model tm;
    swa_model *model;
    const long long starts[2] = {1000000, 10000000};
    int windows[1] = {8}, p, t;
    int32_t tok[16];
    float got[16 * 40];
    double ref[16 * 40];
    (void)state;
    s.n_layer = 1;
    model = tu_build_load(&tm, &s);
    tu_random_tokens(tok, 16, s.n_vocab, 77);
    for (p = 0; p < 2; p++) {
        swa_ctx *c = tu_ctx(model, (swa_ctx_config){.kv_type = SWA_KV_F32});
        swa__seq_jump(c, 0, starts[p] - 8);
        assert_int_equal(swa_ctx_eval_all(c, tok, 16, got, NULL), SWA_OK);
        tu_reference_at(&tm, tok, 16, windows, starts[p] - 8, ref);
        for (t = 7; t < 16; t++)      /* positions P - 1 .. P + 7 */
            if (tu_rel_error(got + t * 40, ref + t * 40, 40) > 1e-4)
                fail_msg("position %lld: error %g", starts[p] - 8 + t, tu_rel_error(got + t * 40, ref + t * 40, 40));
        swa_ctx_free(c);
    }
    swa_model_free(model);
    tu_free(&tm);
}

/* The window override replaces the model's windows on every layer. */
static void test_window_override(void **state)
{
    tu_spec s = small_spec(4, 2, GW_F32, 0);
    tu_model tm;
    swa_model *model;
    swa_ctx_config cfg;
    int windows[2] = {5, 5}, n = 30;
    int32_t tok[30];
    double ref[30 * 40];
    float *got;
    (void)state;
    model = tu_build_load(&tm, &s);
    assert_int_equal(swa_model_layer_window(model, 0), 0);
    tu_random_tokens(tok, n, s.n_vocab, 99);
    tu_reference(&tm, tok, n, windows, ref);
    memset(&cfg, 0, sizeof cfg);
    cfg.window = 5;
    got = run_chunked(model, &cfg, tok, n, 4);
    assert_true(tu_rel_error(got, ref, (size_t)n * 40) < tolerance(GW_F32, SWA_KV_F16));
    free(got);
    swa_model_free(model);
    tu_free(&tm);
}

/* With one layer, the logits at position i depend on tokens i-W+1..i only: the key at distance
   W-1 must change them, the key at distance W must leave them bit for bit. */
static void test_mask_edges(void **state)
{
    tu_spec s = small_spec(4, 2, GW_F32, 5);
    tu_model tm;
    swa_model *model;
    const int W = 5, n = 12, i = 11, V = 40;
    int32_t base[12], near_[12], far_[12];
    float *a, *b, *c;
    (void)state;
    s.n_layer = 1;
    model = tu_build_load(&tm, &s);
    tu_random_tokens(base, n, V, 5);
    memcpy(near_, base, sizeof base);
    memcpy(far_, base, sizeof base);
    near_[i - (W - 1)] = (base[i - (W - 1)] + 1) % V;
    far_[i - W] = (base[i - W] + 1) % V;
    a = run_chunked(model, NULL, base, n, 1);
    b = run_chunked(model, NULL, near_, n, 1);
    c = run_chunked(model, NULL, far_, n, 1);
    assert_memory_not_equal(a + i * V, b + i * V, sizeof(float) * V);
    assert_memory_equal(a + i * V, c + i * V, sizeof(float) * V);
    free(a); free(b); free(c);
    swa_model_free(model);
    tu_free(&tm);
}

/* LONG_RUN tokens with W = 8: the cache stays 8 slots per layer, the logits stay finite, and
   the last position's logits are those of a fresh context fed only the last 40 tokens. Two
   layers of W = 8 see 15 positions back, and RoPE scores depend on distances only, so the two
   differ by the rounding of angles at different positions. */
static void test_cache_size_is_window(void **state)
{
    tu_spec s = small_spec(4, 2, GW_F32, 8);
    tu_model tm;
    swa_model *model;
    swa_ctx *ctx;
    swa_error err;
    const float *logits = NULL;
    int32_t tok[LONG_RUN];
    size_t kvd, before;
    int i, k;
    (void)state;
    model = tu_build_load(&tm, &s);
    assert_int_equal(swa_ctx_create(model, NULL, &ctx, &err), SWA_OK);
    kvd = (size_t)(s.n_embd / s.n_head) * (size_t)s.n_kv_head;
    before = swa_ctx_cache_bytes(ctx);
    /* each layer: K and V rings of 8 slots of F16 values; padding to 64 bytes at most per ring */
    assert_true(before >= (size_t)s.n_layer * 2 * 8 * kvd * 2);
    assert_true(before < (size_t)s.n_layer * 2 * (8 * kvd * 2 + 64));
    tu_random_tokens(tok, LONG_RUN, s.n_vocab, 42);
    for (i = 0; i < LONG_RUN; i++) {
        assert_int_equal(swa_ctx_eval(ctx, &tok[i], 1, &logits, &err), SWA_OK);
        for (k = 0; k < s.n_vocab; k++) assert_true(isfinite(logits[k]));
    }
    assert_int_equal(swa_ctx_pos(ctx), LONG_RUN);
    assert_int_equal(swa_ctx_cache_bytes(ctx), before);
    {
        float last[40];
        const float *fresh;
        swa_ctx *c2;
        double e = 0, scale = 0;
        memcpy(last, logits, sizeof(float) * (size_t)s.n_vocab);
        assert_int_equal(swa_ctx_create(model, NULL, &c2, &err), SWA_OK);
        assert_int_equal(swa_ctx_eval(c2, tok + LONG_RUN - 40, 40, &fresh, &err), SWA_OK);
        for (k = 0; k < s.n_vocab; k++) {
            if (fabs(fresh[k] - last[k]) > e) e = fabs(fresh[k] - last[k]);
            if (fabs(last[k]) > scale) scale = fabs(last[k]);
        }
        assert_true(e / scale < 1e-3);
        swa_ctx_free(c2);
    }
    swa_ctx_free(ctx);
    swa_model_free(model);
    tu_free(&tm);
}

/* The snapshots' checksum is XXH64 (seed 0): its values on a byte pattern against those of the
   Python package xxhash 3.x (xxhash.xxh64(data).intdigest()), whole and fed in pieces of every
   size that crosses its 32-byte stripes and 8- and 4-byte tails differently. */
static void test_snapshot_checksum_is_xxh64(void **state)
{
    static const struct { size_t n; uint64_t h; } expect[] = {
        {0, 0xef46db3751d8e999ull},   {1, 0xa96c7f0ce858bbb7ull},  {3, 0xbed43740ee6332bbull},
        {4, 0xfa212ae44b3bb23dull},   {7, 0x2744460dd675d2c0ull},  {8, 0x994b676b71ce94ddull},
        {31, 0x6711d55e306b5d8full},  {32, 0x07f7b8e3bc5d6e25ull}, {33, 0x09f85eeb4e1cbe9full},
        {63, 0xb7c9968c066cb6a5ull},  {64, 0x50d4159a0411632eull}, {100, 0x9ddada11d3dc2d8full},
        {257, 0xe9d3cdd6ff0ddfd3ull}, {300, 0xc68e7ef39b5ca10eull},
    };
    uint8_t data[300];
    size_t i, piece;
    (void)state;
    for (i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 131 + 7);
    for (i = 0; i < sizeof expect / sizeof expect[0]; i++)
        for (piece = 0; piece <= 40; piece++)
            if (swa__xxh64_of(data, expect[i].n, piece) != expect[i].h)
                fail_msg("XXH64 of %llu bytes in pieces of %llu", (unsigned long long)expect[i].n, (unsigned long long)piece);
}

/* A model without a window keeps n_ctx positions and refuses the next one, changing nothing. */
static void test_full_attention_refuses_past_n_ctx(void **state)
{
    tu_spec s = small_spec(4, 4, GW_F32, 0);
    tu_model tm;
    swa_model *model = tu_build_load(&tm, &s);
    swa_ctx *ctx = tu_ctx(model, (swa_ctx_config){.n_ctx = 16});
    swa_error err;
    int32_t tok[20];
    (void)state;
    tu_random_tokens(tok, 20, s.n_vocab, 3);
    assert_int_equal(swa_ctx_eval(ctx, tok, 10, NULL, &err), SWA_OK);
    assert_int_equal(swa_ctx_eval(ctx, tok, 7, NULL, &err), SWA_ERR_CONTEXT_FULL);
    assert_non_null(strstr(err.msg, "16"));
    assert_int_equal(swa_ctx_pos(ctx), 10);
    assert_int_equal(swa_ctx_eval(ctx, tok, 6, NULL, &err), SWA_OK);
    assert_int_equal(swa_ctx_eval(ctx, tok, 1, NULL, &err), SWA_ERR_CONTEXT_FULL);
    swa_ctx_free(ctx);
    swa_model_free(model);
    tu_free(&tm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_equals_mask_f32),
        cmocka_unit_test(test_chunked_attention),
        cmocka_unit_test(test_ring_equals_mask_other_types),
        cmocka_unit_test(test_ring_equals_mask_k_quants),
        cmocka_unit_test(test_chunks_every_set),
        cmocka_unit_test(test_per_layer_windows),
        cmocka_unit_test(test_head_sizes),
        cmocka_unit_test(test_kv_q8_0),
        cmocka_unit_test(test_threads_bit_identical),
        cmocka_unit_test(test_contexts_in_threads),
        cmocka_unit_test(test_rope_far_positions),
        cmocka_unit_test(test_logits_far_positions),
        cmocka_unit_test(test_window_override),
        cmocka_unit_test(test_mask_edges),
        cmocka_unit_test(test_cache_size_is_window),
        cmocka_unit_test(test_full_attention_refuses_past_n_ctx),
        cmocka_unit_test(test_snapshot_checksum_is_xxh64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
