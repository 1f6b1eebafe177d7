#define _POSIX_C_SOURCE 200809L   /* mkstemp, popen */
/* The architectures beyond plain llama against the Hugging Face transformers implementation of
   each, on the same random weights: gemma2, gemma3, phi3 (plain and with long RoPE factors),
   qwen2, qwen3, Mixtral (llama with experts), qwen3moe, gpt-oss (MXFP4 experts, attention sinks,
   YaRN), mistral3 (YaRN, attention temperature), olmo2, OLMo 3 (olmo2 with a window; YaRN and
   linear RoPE scaling), cohere2, llama4 (chunked attention), exaone4, afmoe, Llama 3.1's RoPE
   scaling (rope_freqs.weight, on llama and llama4) and gemma-embedding's
   embeddings (smallthinker, which transformers lacks, against a numpy forward pass of
   tools/reference/smallthinker_reference.py); where llama.cpp computes the architecture, against
   its logits too (tests/data/llamacpp/). swa-mkmodel writes the model in llama.cpp's layout from
   the arguments stored in tests/data/arch-*.ref, which also holds the tokens and transformers'
   logits (tools/reference/arch_reference.py, float64, eager attention). Every
   position is compared, most of them past the window, for prefill chunks of 1 (every earlier
   key from the ring), W - 1, W, W + 1 and the whole sequence (every key from the chunk itself:
   plain attention with the window as a mask), so the ring agrees with full attention with a
   mask. The windowed layers and their memory are checked against the architecture's rule.
   Also: swa-inspect's per-layer windows and patterns, windows beyond the trained context,
   attention sinks, and broken files of the new architectures. */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include <cmocka.h>

#include "tests/programs.h"
#include "tests/testutil.h"

#define DATA_DIR "tests/data/"
#define TOLERANCE 2e-5   /* F32 weights and cache: float rounding only (test_window's tolerance) */
/* MXFP4 experts against transformers on the same weights dequantized: the MXFP4 kernels meet
   activations quantized to Q8 blocks, as every 4-bit type's do */
#define TOLERANCE_MXFP4 3e-2

typedef struct ref {
    int n, n_vocab;
    char args[512];
    int32_t *tokens;
    float *logits;
} ref;

/* tests/data/arch-NAME.ref (transformers' logits), or with from_llamacpp
   tests/data/llamacpp/arch-NAME.ref (llama.cpp's, where it computes the architecture as
   transformers does): 0 when that one is absent. */
static int read_ref_from(const char *name, int from_llamacpp, ref *r)
{
    char path[256], line[640];
    FILE *f;
    size_t nl;
    snprintf(path, sizeof path, DATA_DIR "%sarch-%s.ref", from_llamacpp ? "llamacpp/" : "", name);
    f = fopen(path, "rb");
    if (!f && from_llamacpp) return 0;
    if (!f) fail_msg("%s: cannot open (run from the repository root)", path);
    if (!fgets(line, sizeof line, f) || sscanf(line, "swa-ref 1 %d %d", &r->n, &r->n_vocab) != 2 || r->n <= 0 ||
        r->n > 4096 || r->n_vocab <= 0 || r->n_vocab > 65536)
        fail_msg("%s: bad header", path);
    nl = strcspn(line, "\n");
    line[nl] = '\0';
    {
        const char *args = line;
        int k;
        for (k = 0; k < 4 && args; k++) {   /* past "swa-ref 1 n V " */
            args = strchr(args, ' ');
            if (args) args++;
        }
        if (!args || strlen(args) >= sizeof r->args) fail_msg("%s: no model arguments, or too long", path);
        memcpy(r->args, args, strlen(args) + 1);
    }
    r->tokens = (int32_t *)malloc((size_t)r->n * sizeof(int32_t));
    r->logits = (float *)malloc((size_t)r->n * (size_t)r->n_vocab * sizeof(float));
    assert_non_null(r->tokens);
    assert_non_null(r->logits);
    if (fread(r->tokens, sizeof(int32_t), (size_t)r->n, f) != (size_t)r->n ||
        fread(r->logits, sizeof(float), (size_t)r->n * (size_t)r->n_vocab, f) != (size_t)r->n * (size_t)r->n_vocab)
        fail_msg("%s: truncated", path);
    fclose(f);
    return 1;
}

static void read_ref(const char *name, ref *r) { read_ref_from(name, 0, r); }

/* The model of a reference file, written by swa-mkmodel into a temporary file. */
static swa_model *make_model(const ref *r)
{
    char path[64], cmd[1024];
    swa_model *m = NULL;
    swa_error err;
    tu_tmp_path(path, sizeof path, "arch");
    snprintf(cmd, sizeof cmd, "%s %s %s 2>/dev/null", PROGRAM("swa-mkmodel"), r->args, path);
    if (system(cmd) != 0) fail_msg("failed: %s", cmd);
    if (swa_model_load(path, &m, &err) != SWA_OK) fail_msg("%s: %s", r->args, err.msg);
    remove(path);   /* the mapping stays valid */
    return m;
}

/* Largest |ours - theirs| over all logits, relative to the largest |theirs|. */
static double rel_error(const float *a, const float *b, size_t n)
{
    double err = 0.0, scale = 1e-30;
    size_t i;
    for (i = 0; i < n; i++) {
        if (fabs((double)a[i] - b[i]) > err) err = fabs((double)a[i] - b[i]);
        if (fabs((double)b[i]) > scale) scale = fabs((double)b[i]);
    }
    return err / scale;
}

/* Logits of the whole sequence, fed in chunks of `chunk` tokens (n_batch = chunk). */
static void run_chunks(swa_model *m, const ref *r, int chunk, int kernels, float *out)
{
    swa_ctx *c = tu_ctx(m, (swa_ctx_config){.kv_type = SWA_KV_F32, .n_batch = chunk, .kernels = kernels, .n_threads = 2});
    swa_error err;
    int i;
    for (i = 0; i < r->n; i += chunk) {
        int len = r->n - i < chunk ? r->n - i : chunk;
        if (swa_ctx_eval_all(c, r->tokens + i, (size_t)len, out + (size_t)i * r->n_vocab, &err) != SWA_OK)
            fail_msg("eval at %d: %s", i, err.msg);
    }
    swa_ctx_free(c);
}

/* Which layers llama.cpp's rules window: Gemma 2 every other one from the first, Gemma 3 five of
   six (or the file's period), OLMo 3 and Command R7B three of four, the others all of them when
   the file has a window. */
static int expect_windowed(const char *arch, const char *args, int l)
{
    const char *p = strstr(args, "--pattern ");
    int period = p ? atoi(p + 10) : !strcmp(arch, "gemma2") || !strcmp(arch, "gpt-oss") ? 2 : !strcmp(arch, "gemma3") ? 6
               : !strcmp(arch, "olmo2") || !strcmp(arch, "cohere2") || !strcmp(arch, "llama4") || !strcmp(arch, "exaone4") ||
                 !strcmp(arch, "afmoe") ? 4
               : 0;
    if (!strcmp(arch, "smallthinker")) return l % 4 != 0;   /* the global layer first */
    return period <= 1 || l % period < period - 1;
}

static int arg_int(const char *args, const char *flag, int def)
{
    const char *p = strstr(args, flag);
    return p ? atoi(p + strlen(flag)) : def;
}

static void check_case(const char *name)
{
    ref r;
    swa_model *m;
    const swa_hparams *hp;
    float *got;
    int W, chunks[5], k, l, kern;
    double tol;
    size_t n_all, windowed = 0, global = 0, want_w = 0, want_g = 0, row;
    swa_ctx_config cfg;
    read_ref(name, &r);
    tol = strstr(r.args, "--expert-type mxfp4") ? TOLERANCE_MXFP4 : TOLERANCE;
    m = make_model(&r);
    hp = swa_model_hparams(m);
    assert_int_equal(hp->n_vocab, r.n_vocab);
    W = arg_int(r.args, "--window ", 0);
    if (!W) W = arg_int(r.args, "--chunk ", !strcmp(hp->arch, "llama4") ? 8192 : 0);   /* Llama 4's chunk (llama.cpp's 8192) */
    cfg = swa_ctx_config_default(m);
    cfg.kv_type = SWA_KV_F32;
    /* the layers: windows as the rule says, memory W slots or n_ctx slots each */
    row = (size_t)hp->n_kv_head * (size_t)hp->head_dim * sizeof(float);
    for (l = 0; l < hp->n_layer; l++) {
        int w = W > 0 && expect_windowed(hp->arch, r.args, l) ? W : 0;
        if (swa_model_layer_window(m, l) != w) fail_msg("%s: layer %d has window %d, want %d", name, l, swa_model_layer_window(m, l), w);
        if (w) want_w += 2 * row * (size_t)w;
        else want_g += 2 * row * (size_t)cfg.n_ctx;
    }
    assert_int_equal(swa_ctx_cache_split(m, &cfg, &windowed, &global), want_w + want_g);
    assert_int_equal(windowed, want_w);
    assert_int_equal(global, want_g);
    /* logits against transformers for each chunk size */
    n_all = (size_t)r.n * (size_t)r.n_vocab;
    got = (float *)malloc(n_all * sizeof(float));
    assert_non_null(got);
    if (W < 3) W = 8;
    chunks[0] = 1; chunks[1] = W - 1; chunks[2] = W; chunks[3] = W + 1; chunks[4] = r.n;
    for (kern = 0; kern < 2; kern++)
        for (k = 0; k < 5; k++) {
            double e;
            if (kern && k != 0 && k != 4) continue;   /* the reference kernels: chunks of 1 and whole */
            run_chunks(m, &r, chunks[k], kern ? SWA_KERNELS_REF : SWA_KERNELS_BEST, got);
            e = rel_error(got, r.logits, n_all);
            if (e > tol)
                fail_msg("%s (%s), chunks of %d, %s kernels: error %.3g (tolerance %.3g)", name, r.args, chunks[k],
                         kern ? "ref" : "best", e, tol);
            if (k == 4 && !kern) fprintf(stderr, "test_arch: %-14s error %.3g\n", name, e);
        }
    /* and against llama.cpp's logits on the same file, where they are committed */
    {
        ref lr;
        if (read_ref_from(name, 1, &lr)) {
            double e;
            if (lr.n != r.n || lr.n_vocab != r.n_vocab || strcmp(lr.args, r.args) || memcmp(lr.tokens, r.tokens, (size_t)r.n * 4))
                fail_msg("%s: llama.cpp's reference is of another model or prompt", name);
            run_chunks(m, &r, r.n, SWA_KERNELS_BEST, got);
            e = rel_error(got, lr.logits, n_all);
            if (e > tol) fail_msg("%s: against llama.cpp, error %.3g (tolerance %.3g)", name, e, tol);
            fprintf(stderr, "test_arch: %-14s llama.cpp error %.3g\n", name, e);
            free(lr.tokens);
            free(lr.logits);
        }
    }
    /* past n_ctx: refused with global layers, fine when every layer has a window */
    {
        swa_ctx *c;
        swa_error err;
        const float *last;
        cfg.n_ctx = r.n - 1;
        cfg.n_threads = 1;
        assert_int_equal(swa_ctx_create(m, &cfg, &c, &err), SWA_OK);
        assert_int_equal(swa_ctx_eval(c, r.tokens, (size_t)r.n, &last, &err), want_g ? SWA_ERR_CONTEXT_FULL : SWA_OK);
        swa_ctx_free(c);
    }
    free(got);
    free(r.tokens);
    free(r.logits);
    swa_model_free(m);
}

/* Each test of an architecture: its cases in tests/data/arch-*.ref, each through check_case. The
   first entry of a row is the test's name; the rest, up to a NULL, are the cases. SmallThinker is
   against a float64 numpy forward pass of its own (transformers has no class for it;
   tools/reference/smallthinker_reference.py, from llama.cpp's graph): the router reading the
   layer's input, ReLU-gated experts, softmax and sigmoid gating, NoPE global layers first. AFMoE
   is against transformers' AfmoeForCausalLM: the attention gate, leading dense layers, two shared
   experts, the selection bias, route scale; with a window and without (the fourth layer turning no
   RoPE either way). rope_freqs.weight (Llama 3.1's llama3 RoPE scaling) divides the frequencies of
   every layer that turns RoPE: transformers computes its own from the same factor, low, high and
   original context. */
static const char *const arch_tests[][5] = {
    {"test_gemma2", "gemma2-w5", "gemma2-w12", NULL},
    {"test_gemma3", "gemma3-w8", "gemma3-p3", NULL},
    {"test_phi3", "phi3-w7", "phi3-long-w10", NULL},
    {"test_qwen2", "qwen2-w6", "qwen2-full", NULL},
    {"test_qwen3", "qwen3-w9", NULL},
    {"test_mixtral", "mixtral-w7", "mixtral-full", NULL},
    {"test_qwen3moe", "qwen3moe-full", "qwen3moe-w6", NULL},
    {"test_gpt_oss", "gpt-oss-w6", "gpt-oss-w9", "gpt-oss-mxfp4", NULL},
    {"test_mistral3", "mistral3-temp", "mistral3-beta", NULL},
    {"test_llama4", "llama4-c7", "llama4-c6-top2", "llama4-default", NULL},
    {"test_exaone4", "exaone4-w5", "exaone4-w8-p3", "exaone4-full", NULL},
    {"test_rope_freqs", "llama-rope-llama3", "llama4-rope-llama3", NULL},
    {"test_smallthinker", "smallthinker-w6", "smallthinker-w5-sigmoid", "smallthinker-full", NULL},
    {"test_afmoe", "afmoe-w6", "afmoe-full", NULL},
    {"test_olmo2", "olmo2-full", "olmo3-w6", "olmo3-w7-linear", "olmo3-w5-yarn"},
    {"test_cohere2", "cohere2-w5", "cohere2-w8", NULL},
};

/* The cases of one row of arch_tests, its state. */
static void check_cases(void **state)
{
    const char *const *row = (const char *const *)*state;
    int i;
    for (i = 1; i < 5 && row[i]; i++) check_case(row[i]);
}
/* EmbeddingGemma against transformers' Gemma3TextModel with bidirectional attention: the mean
   and the last token's embeddings (through the dense projections when the file has them),
   normalized, for both kernel sets, 1 and 3 threads, on either sequence of a context; the
   text is read whole (its keys on both sides), so a context whose n_batch is shorter, or a
   sequence past position 0, is refused, changing nothing. */
static void check_embedding(const char *name)
{
    char path[256], line[640];
    ref r;
    FILE *f;
    int n = 0, d = 0, k = 0, pool, kern;
    float *want, got[256];
    swa_model *m;
    swa_error err;
    snprintf(path, sizeof path, DATA_DIR "arch-%s.ref", name);
    if (!(f = fopen(path, "rb"))) fail_msg("%s: cannot open (run from the repository root)", path);
    if (!fgets(line, sizeof line, f) || sscanf(line, "swa-emb 1 %d %d %n", &n, &d, &k) != 2 || n <= 0 || n > 4096 || d <= 0 ||
        d > 256)
        fail_msg("%s: bad header", path);
    memset(&r, 0, sizeof r);
    line[strcspn(line, "\n")] = '\0';
    snprintf(r.args, sizeof r.args, "%s", line + k);
    r.tokens = (int32_t *)malloc((size_t)n * sizeof(int32_t));
    want = (float *)malloc(2 * (size_t)d * sizeof(float));
    if (fread(r.tokens, sizeof(int32_t), (size_t)n, f) != (size_t)n || fread(want, sizeof(float), 2 * (size_t)d, f) != 2 * (size_t)d)
        fail_msg("%s: truncated", path);
    fclose(f);
    m = make_model(&r);
    assert_int_equal(swa_model_hparams(m)->n_embd, d);
    for (k = 0; k < swa_model_hparams(m)->n_layer; k++)
        assert_int_equal(swa_model_layer_window(m, k), k % 6 < 5 ? arg_int(r.args, "--window ", 0) : 0);
    for (kern = 0; kern < 2; kern++)
        for (pool = 0; pool < 2; pool++) {
            swa_ctx_config cfg = swa_ctx_config_default(m);
            swa_ctx *c;
            int seq;
            cfg.kv_type = SWA_KV_F32;
            cfg.kernels = kern ? SWA_KERNELS_REF : SWA_KERNELS_BEST;
            cfg.n_threads = 1 + 2 * kern;
            cfg.n_seq = 2;
            if (swa_ctx_create(m, &cfg, &c, &err) != SWA_OK) fail_msg("ctx: %s", err.msg);
            for (seq = 0; seq < 2; seq++) {
                double e = 0.0;
                int i;
                if (swa_ctx_embed(c, seq, r.tokens, (size_t)n, pool ? SWA_POOL_LAST : SWA_POOL_MEAN, 1, got, &err) != SWA_OK)
                    fail_msg("%s: embed: %s", name, err.msg);
                for (i = 0; i < d; i++) e = fabs((double)got[i] - want[pool * d + i]) > e ? fabs((double)got[i] - want[pool * d + i]) : e;
                if (e > TOLERANCE) fail_msg("%s: %s pooling, %s kernels, sequence %d: error %.3g", name, pool ? "last" : "mean",
                                            kern ? "ref" : "best", seq, e);
                if (!kern && !pool && !seq) fprintf(stderr, "test_arch: %-18s error %.3g\n", name, e);
            }
            /* sequence 1 now holds the text: going on from it would need its later keys */
            assert_int_equal(swa_ctx_eval(c, r.tokens, 1, NULL, &err), SWA_ERR_INVALID_ARG);
            assert_non_null(strstr(err.msg, "reads a text whole"));
            swa_ctx_free(c);
        }
    {   /* a text longer than n_batch cannot be read in chunks */
        swa_ctx_config cfg = swa_ctx_config_default(m);
        swa_ctx *c;
        cfg.n_batch = n - 1;
        if (swa_ctx_create(m, &cfg, &c, &err) != SWA_OK) fail_msg("ctx: %s", err.msg);
        assert_int_equal(swa_ctx_embed(c, 0, r.tokens, (size_t)n, SWA_POOL_MEAN, 1, got, &err), SWA_ERR_INVALID_ARG);
        assert_int_equal(swa_seq_pos(c, 0), 0);
        assert_int_equal(swa_ctx_embed(c, 0, r.tokens, (size_t)n - 1, SWA_POOL_MEAN, 1, got, &err), SWA_OK);
        swa_ctx_free(c);
    }
    swa_model_free(m);
    free(want);
    free(r.tokens);
}

static void test_gemma_embedding(void **state)
{
    (void)state;
    check_embedding("gemma-embedding-w6");
    check_embedding("gemma-embedding-w9");
}

/* gpt-oss's attention sinks and window each matter where they should: the same weights with the
   sinks at -inf (a softmax without them) differ from the first position on, and with a window of
   4096 (nothing masked in 40 tokens) agree up to the window and differ from the first position
   the window masks (W, in the windowed even layers). */
#define OSS_ARGS "--shape custom --type f32 --vocab 272 --arch gpt-oss --layers 2 --dim 64 --heads 4 --kv-heads 2 " \
                 "--head-dim 16 --ff 32 --experts 4 --experts-used 2 --expert-ff 32 --ctx 8192 --yarn 4 --yarn-orig 16"
#define OSS_N 40
#define OSS_W 6

/* Logits of the OSS_N tokens of a gpt-oss file written with `window`, the sinks set to -inf when
   `no_sinks`: the file is read into memory, its sinks overwritten, then loaded from there. */
static float *oss_logits(int window, int no_sinks, const int32_t *tok)
{
    char path[64], cmd[1024], name[64];
    size_t size;
    uint8_t *buf;
    swa_gguf *g;
    swa_model *m;
    swa_ctx *c;
    swa_error err;
    swa_ctx_config cfg;
    float *out = (float *)malloc((size_t)OSS_N * 272 * sizeof(float));
    int l, h;
    assert_non_null(out);
    tu_tmp_path(path, sizeof path, "oss");
    snprintf(cmd, sizeof cmd, "%s " OSS_ARGS " --window %d %s 2>/dev/null", PROGRAM("swa-mkmodel"), window, path);
    assert_int_equal(system(cmd), 0);
    buf = tu_read_file(path, &size);
    assert_non_null(buf);
    remove(path);
    if (swa_gguf_open_memory(buf, size, &g, &err) != SWA_OK) fail_msg("%s", err.msg);
    for (l = 0; no_sinks && l < 2; l++) {
        const swa_gguf_tensor *t;
        snprintf(name, sizeof name, "blk.%d.attn_sinks.weight", l);
        t = swa_gguf_tensor_at(g, swa_gguf_tensor_find(g, name));
        assert_non_null(t);
        for (h = 0; h < 4; h++) ((float *)(uintptr_t)t->data)[h] = -INFINITY;
    }
    swa_gguf_close(g);
    if (swa_model_load_memory(buf, size, &m, &err) != SWA_OK) fail_msg("%s", err.msg);
    memset(&cfg, 0, sizeof cfg);
    cfg.n_ctx = 64;
    cfg.kv_type = SWA_KV_F32;
    cfg.n_threads = 1;
    if (swa_ctx_create(m, &cfg, &c, &err) != SWA_OK) fail_msg("%s", err.msg);
    if (swa_ctx_eval_all(c, tok, OSS_N, out, &err) != SWA_OK) fail_msg("%s", err.msg);
    swa_ctx_free(c);
    swa_model_free(m);
    free(buf);
    return out;
}

/* Largest |a - b| over the logits of position t. */
static double row_diff(const float *a, const float *b, int t)
{
    double e = 0.0;
    int i;
    for (i = 0; i < 272; i++) {   /* a plain comparison: aarch64 gcc 12's vectorizer crashes on an fmax reduction */
        double d = fabs((double)a[t * 272 + i] - b[t * 272 + i]);
        if (d > e) e = d;
    }
    return e;
}

static void test_gpt_oss_sinks_window(void **state)
{
    int32_t tok[OSS_N];
    float *base, *no_sinks, *wide;
    int t;
    (void)state;
    for (t = 0; t < OSS_N; t++) tok[t] = 3 + (t * 53 + 11) % 269;
    base = oss_logits(OSS_W, 0, tok);
    no_sinks = oss_logits(OSS_W, 1, tok);
    wide = oss_logits(4096, 0, tok);
    for (t = 0; t < OSS_N; t++) {
        if (row_diff(base, no_sinks, t) < 1e-3) fail_msg("position %d: the sinks change nothing", t);
        if (t < OSS_W && row_diff(base, wide, t) > 1e-5)
            fail_msg("position %d, inside the window: window %d and 4096 differ by %g", t, OSS_W, row_diff(base, wide, t));
        if (t >= OSS_W && row_diff(base, wide, t) < 1e-3)
            fail_msg("position %d, past the window: window %d and 4096 agree", t, OSS_W);
    }
    free(base);
    free(no_sinks);
    free(wide);
}

/* Mixtures of experts group a chunk's tokens by expert: the logits must still be those of one
   token at a time, bit for bit, for any chunking, thread count (1, 2, 3), batch of sequences and
   across a snapshot. Quantized weights (Q4_0 and Q8_0: their gemm and tile kernels) and a window
   the 48 tokens run well past. */
#define MOE_N 48
#define MOE_SEQS 3

static swa_ctx *moe_ctx(swa_model *m, int n_batch, int threads, int n_seq)
{
    return tu_ctx(m, (swa_ctx_config){.n_ctx = 128, .n_batch = n_batch, .n_threads = threads, .n_seq = n_seq});
}

/* Logits of tokens [from, to) of a sequence, in chunks of `chunk`, into out (one row per token). */
static void moe_eval(swa_ctx *c, const int32_t *tok, int from, int to, int chunk, float *out, int V)
{
    swa_error err;
    int i;
    for (i = from; i < to; i += chunk) {
        int len = to - i < chunk ? to - i : chunk;
        if (swa_ctx_eval_all(c, tok + i, (size_t)len, out + (size_t)(i - from) * (size_t)V, &err) != SWA_OK)
            fail_msg("eval at %d: %s", i, err.msg);
    }
}

static void check_moe_deterministic(const char *args)
{
    ref r;
    swa_model *m;
    int32_t tok[MOE_SEQS][MOE_N], bt[MOE_SEQS * MOE_N], bs[MOE_SEQS * MOE_N];
    float *want[MOE_SEQS], *got;
    int V, s, i, th, k, n = 0;
    static const int chunks[3] = {MOE_N, 7, 16};
    size_t row, all;
    swa_ctx *c;
    swa_error err;
    memset(&r, 0, sizeof r);
    snprintf(r.args, sizeof r.args, "%s", args);
    m = make_model(&r);
    V = swa_model_hparams(m)->n_vocab;
    row = (size_t)V * sizeof(float);
    all = (size_t)MOE_N * row;
    for (s = 0; s < MOE_SEQS; s++)
        for (i = 0; i < MOE_N; i++) tok[s][i] = 3 + (i * 37 + s * 101 + i * i * 7) % (V - 3);
    for (s = 0; s < MOE_SEQS; s++) {   /* one token at a time, one thread */
        want[s] = (float *)malloc(all);
        assert_non_null(want[s]);
        c = moe_ctx(m, 1, 1, 1);
        moe_eval(c, tok[s], 0, MOE_N, 1, want[s], V);
        swa_ctx_free(c);
    }
    got = (float *)malloc((size_t)MOE_SEQS * all);
    assert_non_null(got);
    for (th = 1; th <= 3; th++)
        for (k = 0; k < 3; k++) {
            c = moe_ctx(m, chunks[k], th, 1);
            moe_eval(c, tok[0], 0, MOE_N, chunks[k], got, V);
            swa_ctx_free(c);
            if (memcmp(got, want[0], all) != 0) fail_msg("%s: chunks of %d, %d threads differ from one token at a time", args, chunks[k], th);
        }
    /* the sequences interleaved in one batch of every token, logits for all */
    for (i = 0; i < MOE_N; i++)
        for (s = 0; s < MOE_SEQS; s++) bt[n] = tok[s][i], bs[n++] = s;
    for (th = 1; th <= 3; th += 2) {
        swa_batch b;
        memset(&b, 0, sizeof b);
        b.n = (size_t)n;
        b.token = bt;
        b.seq = bs;
        b.logits = NULL;
        c = moe_ctx(m, 64, th, MOE_SEQS);
        {
            int8_t wants[MOE_SEQS * MOE_N];
            memset(wants, 1, sizeof wants);
            b.logits = wants;
            if (swa_ctx_decode(c, &b, got, &err) != SWA_OK) fail_msg("decode: %s", err.msg);
        }
        swa_ctx_free(c);
        for (i = 0; i < n; i++)
            if (memcmp(got + (size_t)i * (size_t)V, want[bs[i]] + (size_t)(i / MOE_SEQS) * (size_t)V, row) != 0)
                fail_msg("%s: batch of %d sequences, %d threads: token %d of sequence %d differs", args, MOE_SEQS, th,
                         i / MOE_SEQS, bs[i]);
    }
    /* a snapshot after 30 tokens, restored into a new context, then the rest */
    {
        size_t size, written;
        void *buf;
        c = moe_ctx(m, 16, 2, 1);
        moe_eval(c, tok[1], 0, 30, 16, got, V);
        size = swa_state_size(c, 0);
        buf = malloc(size);
        assert_non_null(buf);
        if (swa_state_save(c, 0, buf, size, &written, &err) != SWA_OK) fail_msg("save: %s", err.msg);
        swa_ctx_free(c);
        c = moe_ctx(m, 16, 3, 1);
        if (swa_state_load(c, 0, buf, written, &err) != SWA_OK) fail_msg("load: %s", err.msg);
        moe_eval(c, tok[1], 30, MOE_N, 5, got, V);
        swa_ctx_free(c);
        free(buf);
        assert_memory_equal(got, want[1] + (size_t)30 * (size_t)V, (size_t)(MOE_N - 30) * row);
    }
    for (s = 0; s < MOE_SEQS; s++) free(want[s]);
    free(got);
    swa_model_free(m);
}

static void test_moe_deterministic(void **state)
{
    (void)state;
    check_moe_deterministic("--shape custom --type q4_0 --vocab 272 --arch qwen3moe --layers 2 --dim 128 --heads 4 "
                            "--kv-heads 2 --head-dim 32 --ff 256 --experts 8 --experts-used 3 --expert-ff 64 --ctx 128 --window 6");
    check_moe_deterministic("--shape custom --type q8_0 --vocab 272 --layers 2 --dim 64 --heads 4 --kv-heads 2 --ff 96 "
                            "--experts 4 --experts-used 2 --ctx 128 --window 9");
    /* gpt-oss: MXFP4 experts with their biases, sinks, the window on even layers, YaRN */
    check_moe_deterministic("--shape custom --type q8_0 --expert-type mxfp4 --vocab 272 --arch gpt-oss --layers 2 --dim 64 "
                            "--heads 4 --kv-heads 2 --head-dim 16 --ff 64 --experts 4 --experts-used 2 --expert-ff 64 "
                            "--ctx 128 --window 6 --yarn 4 --yarn-orig 16");
    /* mistral3 (dense): the temperature grows with the position, which batching must keep */
    check_moe_deterministic("--shape custom --type q4_0 --vocab 272 --arch mistral3 --layers 2 --dim 64 --heads 4 "
                            "--kv-heads 2 --head-dim 32 --ff 96 --ctx 128 --yarn 4 --yarn-orig 8 --attn-temp 0.3");
    /* llama4: chunks of 6 (the 48 tokens cross 8 chunk boundaries), a global NoPE layer with the
       temperature, two experts a token whose weights scale their inputs, the shared expert */
    check_moe_deterministic("--shape custom --type q8_0 --vocab 272 --arch llama4 --layers 4 --dim 64 --heads 4 "
                            "--kv-heads 2 --head-dim 32 --ff 96 --experts 4 --experts-used 2 --expert-ff 64 --moe-step 2 "
                            "--ctx 128 --chunk 6 --attn-temp 0.2 --temp-len 7");
}

/* OLMo 3 and Command R7B, dense, through the same checks: bit-identical logits for any chunking,
   thread count, batch of sequences and across a snapshot, on quantized weights (their gemm and
   tile kernels) with the window well behind the 48 tokens. */
static void test_olmo2_cohere2_batches(void **state)
{
    (void)state;
    check_moe_deterministic("--shape custom --type q8_0 --vocab 272 --arch olmo2 --layers 4 --dim 64 --heads 4 "
                            "--kv-heads 2 --ff 96 --ctx 128 --window 7");
    check_moe_deterministic("--shape custom --type q4_0 --vocab 272 --arch cohere2 --layers 5 --dim 64 --heads 4 "
                            "--kv-heads 1 --ff 128 --ctx 128 --window 6");
    check_moe_deterministic("--shape custom --type q8_0 --vocab 272 --arch exaone4 --layers 4 --dim 64 --heads 4 "
                            "--kv-heads 2 --ff 96 --ctx 128 --window 7");
    check_moe_deterministic("--shape custom --type q4_0 --vocab 272 --arch smallthinker --layers 4 --dim 64 --heads 4 "
                            "--kv-heads 2 --ff 96 --experts 4 --experts-used 2 --expert-ff 64 --ctx 128 --window 6");
    check_moe_deterministic("--shape custom --type q8_0 --vocab 272 --arch afmoe --layers 4 --dim 64 --heads 4 --kv-heads 2 "
                            "--head-dim 32 --ff 96 --experts 4 --experts-used 2 --expert-ff 64 --dense-lead 1 --shared 2 "
                            "--route-scale 2.5 --ctx 128 --window 6");
}

/* The window matters: two files alike but for their window (OLMo 3's against OLMo 2 without
   one; Command R7B's against a window longer than the sequence, the same layers turning RoPE)
   give the same logits while every key is inside the window, and different ones at every
   position past it. */
static void check_window_matters(const char *args, int W, const char *wide)
{
    ref r;
    swa_model *m;
    float *a, *b;
    int i, p;
    memset(&r, 0, sizeof r);
    r.n = 40;
    r.n_vocab = 272;
    r.tokens = (int32_t *)malloc((size_t)r.n * sizeof(int32_t));
    a = (float *)malloc((size_t)r.n * (size_t)r.n_vocab * sizeof(float));
    b = (float *)malloc((size_t)r.n * (size_t)r.n_vocab * sizeof(float));
    assert_true(r.tokens && a && b);
    for (i = 0; i < r.n; i++) r.tokens[i] = 3 + (i * 53 + 11) % 269;
    snprintf(r.args, sizeof r.args, "%s --window %d", args, W);
    m = make_model(&r);
    run_chunks(m, &r, r.n, SWA_KERNELS_BEST, a);
    swa_model_free(m);
    snprintf(r.args, sizeof r.args, "%s %s", args, wide);
    m = make_model(&r);
    run_chunks(m, &r, r.n, SWA_KERNELS_BEST, b);
    swa_model_free(m);
    for (p = 0; p < r.n; p++) {
        double e = rel_error(a + (size_t)p * r.n_vocab, b + (size_t)p * r.n_vocab, (size_t)r.n_vocab);
        if (p < W ? e > TOLERANCE : e < 1e-3)
            fail_msg("%s, window %d against %s: position %d differs by %.3g", args, W, wide, p, e);
    }
    free(a);
    free(b);
    free(r.tokens);
}

static void test_window_matters(void **state)
{
    (void)state;
    check_window_matters("--shape custom --type f32 --vocab 272 --arch olmo2 --layers 4 --dim 64 --heads 4 --kv-heads 2 "
                         "--ff 96 --ctx 128", 6, "");
    check_window_matters("--shape custom --type f32 --vocab 272 --arch cohere2 --layers 4 --dim 64 --heads 4 --kv-heads 2 "
                         "--ff 96 --ctx 128", 5, "--window 64");
}

/* swa-inspect --set-window with a pattern writes one window per layer, the pattern repeated,
   under the file's architecture; swa-inspect then prints each layer's window and cache. */
static void test_inspect_pattern(void **state)
{
    static const struct { const char *mk, *pattern; int want[4]; } cases[] = {
        {"--arch gemma2 --window 8", "0,16", {0, 16, 0, 16}},
        {"--window 8", "0,32,32,32", {0, 32, 32, 32}},        /* llama: Ministral's layout */
        {"--arch qwen3 --head-dim 16 --window 8", "5", {5, 5, 5, 5}},
    };
    char in[64], out[64], cmd[1024], line[256];
    size_t k;
    int l;
    (void)state;
    tu_tmp_path(in, sizeof in, "arch_in");
    tu_tmp_path(out, sizeof out, "arch_out");
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        swa_model *m;
        swa_error err;
        FILE *p;
        int seen = 0;
        snprintf(cmd, sizeof cmd, "%s --shape custom --type f32 --layers 4 --dim 32 --heads 2 --ff 32 --vocab 260 --ctx 64 %s %s 2>/dev/null",
                 PROGRAM("swa-mkmodel"), cases[k].mk, in);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "%s %s --set-window %s %s >/dev/null 2>&1", PROGRAM("swa-inspect"), in, cases[k].pattern, out);
        assert_int_equal(system(cmd), 0);
        if (swa_model_load(out, &m, &err) != SWA_OK) fail_msg("%s", err.msg);
        for (l = 0; l < 4; l++) assert_int_equal(swa_model_layer_window(m, l), cases[k].want[l]);
        swa_model_free(m);
        snprintf(cmd, sizeof cmd, "%s %s", PROGRAM("swa-inspect"), out);
        p = popen(cmd, "r");
        assert_non_null(p);
        while (fgets(line, sizeof line, p)) {
            int layer, w;
            if (sscanf(line, " layer %d: window %d", &layer, &w) == 2) {
                assert_int_equal(w, cases[k].want[layer]);
                seen++;
            } else if (sscanf(line, " layer %d: full attention", &layer) == 1) {
                assert_int_equal(0, cases[k].want[layer]);
                seen++;
            }
        }
        assert_int_equal(pclose(p), 0);
        assert_int_equal(seen, 4);
    }
    /* a list of zeros only, or a negative entry, is refused */
    snprintf(cmd, sizeof cmd, "%s %s --set-window 0,0 %s 2>/dev/null", PROGRAM("swa-inspect"), in, out);
    assert_int_not_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s %s --set-window 4,-1 %s 2>/dev/null", PROGRAM("swa-inspect"), in, out);
    assert_int_not_equal(system(cmd), 0);
    remove(in);
    remove(out);
}

/* A window longer than the trained context is full attention: n_ctx slots, not W (Phi-3.5-mini's
   262144 over 131072); one that fits stays a window. */
static void test_window_beyond_context(void **state)
{
    char path[64], cmd[512];
    static const int windows[2] = {65, 64};
    int k, l;
    (void)state;
    tu_tmp_path(path, sizeof path, "arch_long");
    for (k = 0; k < 2; k++) {
        swa_model *m;
        swa_error err;
        snprintf(cmd, sizeof cmd, "%s --shape custom --arch phi3 --type f32 --layers 2 --dim 32 --heads 2 --ff 32 "
                 "--vocab 260 --ctx 64 --window %d %s 2>/dev/null", PROGRAM("swa-mkmodel"), windows[k], path);
        assert_int_equal(system(cmd), 0);
        if (swa_model_load(path, &m, &err) != SWA_OK) fail_msg("%s", err.msg);
        for (l = 0; l < 2; l++) assert_int_equal(swa_model_layer_window(m, l), windows[k] > 64 ? 0 : windows[k]);
        assert_int_equal(swa_model_hparams(m)->n_windowed, windows[k] > 64 ? 0 : 2);
        swa_model_free(m);
    }
    remove(path);
}

/* Attention sinks (swa_ctx_config.n_sink): up to n_ctx the logits are those without sinks, bit
   for bit; past it evaluation goes on, the same for every chunk size, and a query at position i
   of a one-layer model sees exactly the sinks 0..n_sink-1 and positions i-(n_ctx-n_sink)+1..i:
   changing a token outside them leaves its logits bit-identical, inside them changes them. */
static float *sink_logits(swa_model *m, const int32_t *tok, int n, int n_sink, int chunk)
{
    swa_ctx *c = tu_ctx(m, (swa_ctx_config){.n_ctx = 16, .n_sink = n_sink, .n_batch = chunk, .kv_type = SWA_KV_F32,
                                            .n_threads = 1});
    swa_error err;
    float *out = (float *)malloc((size_t)n * (size_t)swa_model_hparams(m)->n_vocab * sizeof(float));
    int i;
    for (i = 0; i < n; i += chunk) {
        int len = n - i < chunk ? n - i : chunk;
        if (swa_ctx_eval_all(c, tok + i, (size_t)len, out + (size_t)i * swa_model_hparams(m)->n_vocab, &err) != SWA_OK)
            fail_msg("eval at %d: %s", i, err.msg);
    }
    swa_ctx_free(c);
    return out;
}

static void test_attention_sinks(void **state)
{
    ref r;
    swa_model *m;
    int32_t tok[40];
    int V, k, i, n = 40;
    float *plain, *a, *b;
    swa_ctx_config cfg;
    swa_ctx *c;
    swa_error err;
    static const struct { int pos, changes; } edits[] = {{3, 1}, {4, 0}, {27, 0}, {28, 1}};
    (void)state;
    memset(&r, 0, sizeof r);
    snprintf(r.args, sizeof r.args, "--shape custom --type f32 --vocab 272 --arch gemma2 --layers 2 --dim 32 --heads 2 "
             "--kv-heads 1 --head-dim 16 --ff 32 --ctx 128 --window 5");
    m = make_model(&r);
    V = swa_model_hparams(m)->n_vocab;
    for (i = 0; i < n; i++) tok[i] = 3 + (i * 37) % 250;
    /* before n_ctx: the sinks change nothing */
    plain = sink_logits(m, tok, 16, 0, 16);
    a = sink_logits(m, tok, 16, 4, 16);
    assert_memory_equal(plain, a, 16 * (size_t)V * sizeof(float));
    free(plain);
    free(a);
    /* past n_ctx: every chunk size gives the same bits */
    a = sink_logits(m, tok, n, 4, 1);
    for (k = 0; k < 3; k++) {
        static const int chunks[3] = {11, 12, 40};
        b = sink_logits(m, tok, n, 4, chunks[k]);
        assert_memory_equal(a, b, (size_t)n * (size_t)V * sizeof(float));
        free(b);
    }
    for (i = 0; i < n * V; i++) assert_true(isfinite(a[i]));
    free(a);
    /* invalid: n_sink not below n_ctx, or negative */
    memset(&cfg, 0, sizeof cfg);
    cfg.n_ctx = 16;
    cfg.n_sink = 16;
    assert_int_equal(swa_ctx_create(m, &cfg, &c, &err), SWA_ERR_INVALID_ARG);
    cfg.n_sink = -1;
    assert_int_equal(swa_ctx_create(m, &cfg, &c, &err), SWA_ERR_INVALID_ARG);
    swa_model_free(m);
    /* the mask, on one global layer: query 39 sees 0..3 and 28..39 (n_ctx 16, 4 sinks) */
    snprintf(r.args, sizeof r.args, "--shape custom --type f32 --vocab 272 --arch qwen2 --layers 1 --dim 32 --heads 2 "
             "--kv-heads 1 --ff 32 --ctx 128");
    m = make_model(&r);
    a = sink_logits(m, tok, n, 4, 40);
    for (k = 0; k < 4; k++) {
        int32_t t2[40];
        int same;
        memcpy(t2, tok, sizeof t2);
        t2[edits[k].pos] = tok[edits[k].pos] == 5 ? 6 : 5;
        b = sink_logits(m, t2, n, 4, 40);
        same = !memcmp(a + 39 * (size_t)V, b + 39 * (size_t)V, (size_t)V * sizeof(float));
        if (same == edits[k].changes) fail_msg("token %d: logits at 39 %s", edits[k].pos, same ? "unchanged" : "changed");
        free(b);
    }
    free(a);
    swa_model_free(m);
}

/* ---- broken files of the new architectures: a clear error naming the key or tensor ---- */

typedef struct variant {
    const char *arch;          /* qwen3 (Q/K norms) or phi3 (fused, RoPE factors) */
    const char *pattern_kind;  /* "short" array, "ints" array of 2, "bool" scalar, NULL */
    const char *scaling;       /* rope.scaling.type, or NULL */
    int bad_factor;            /* a rope factor of 0 */
    int omit_k_norm;
    int experts, used;         /* expert_count and expert_used_count keys (0: none) */
    int omit_count;            /* no expert_count key, though the tensors have experts */
    int moe, moe_tensor_experts;   /* router and experts' tensors instead of the MLP, with this many experts */
    const char *omit_key;      /* a key of {arch}. to leave out (olmo2, cohere2) */
    int head_qk_norms;         /* olmo2: attn_q_norm/attn_k_norm a head wide, not the projection */
    float temperature;         /* attention.temperature_scale (0: none); the file has no context length */
    int omit_shexp;            /* llama4: no ffn_gate_shexp */
    int rope_freqs;            /* entries of a rope_freqs.weight (0: none), each rope_freqs_value */
    float rope_freqs_value;
} variant;

static void vec(gw_writer *w, const char *name, int64_t n, float value)
{
    float *x = (float *)malloc((size_t)n * sizeof(float));
    int64_t i;
    for (i = 0; i < n; i++) x[i] = value;
    gw_tensor_f32(w, name, GW_F32, 1, &n, x);
    free(x);
}

static void mat(gw_writer *w, const char *name, int64_t cols, int64_t rows)
{
    float *x = (float *)calloc((size_t)(cols * rows), sizeof(float));
    int64_t ne[2] = {cols, rows};
    gw_tensor_f32(w, name, GW_F32, 2, ne, x);
    free(x);
}

static void mat3(gw_writer *w, const char *name, int64_t cols, int64_t rows, int64_t n)
{
    float *x = (float *)calloc((size_t)(cols * rows * n), sizeof(float));
    int64_t ne[3] = {cols, rows, n};
    gw_tensor_f32(w, name, GW_F32, 3, ne, x);
    free(x);
}

static int omitted(const variant *v, const char *suffix) { return v->omit_key && !strcmp(v->omit_key, suffix); }

static swa_status load_variant(const variant *v, swa_error *err)
{
    gw_writer *w = gw_new(3);
    const int d = 32, hd = 16, ff = 32, V = 8, L = 2;
    char key[96], name[64];
    int l, phi = !strcmp(v->arch, "phi3"), olmo = !strcmp(v->arch, "olmo2"), cohere = !strcmp(v->arch, "cohere2");
    int llama4 = !strcmp(v->arch, "llama4");
#define K(suffix) (snprintf(key, sizeof key, "%s.%s", v->arch, suffix), key)
    gw_kv_str(w, "general.architecture", v->arch);
    gw_kv_u32(w, K("block_count"), L);
    gw_kv_u32(w, K("embedding_length"), d);
    gw_kv_u32(w, K("feed_forward_length"), ff);
    gw_kv_u32(w, K("attention.head_count"), 2);
    gw_kv_u32(w, K("attention.head_count_kv"), 1);
    if (!omitted(v, "attention.sliding_window")) gw_kv_u32(w, K("attention.sliding_window"), 4);
    if (cohere && !omitted(v, "attention.layer_norm_epsilon")) gw_kv_f32(w, K("attention.layer_norm_epsilon"), 1e-5f);
    if (cohere && !omitted(v, "logit_scale")) gw_kv_f32(w, K("logit_scale"), 0.25f);
    if (v->pattern_kind && !strcmp(v->pattern_kind, "short")) {
        uint8_t b[1] = {1};
        gw_kv_array(w, K("attention.sliding_window_pattern"), GW_BOOL, 1, b);
    } else if (v->pattern_kind && !strcmp(v->pattern_kind, "ints")) {
        int32_t b[2] = {1, 2};
        gw_kv_array(w, K("attention.sliding_window_pattern"), GW_I32, 2, b);
    } else if (v->pattern_kind) {
        gw_kv_bool(w, K("attention.sliding_window_pattern"), 1);
    }
    if (v->scaling) gw_kv_str(w, K("rope.scaling.type"), v->scaling);
    if (v->experts && !v->omit_count) gw_kv_u32(w, K("expert_count"), (uint32_t)v->experts);
    if (v->used) gw_kv_u32(w, K("expert_used_count"), (uint32_t)v->used);
    if (v->moe) gw_kv_u32(w, K("expert_feed_forward_length"), ff / 2);
    if (v->temperature != 0.0f) gw_kv_f32(w, K("attention.temperature_scale"), v->temperature);
    if (llama4 && !omitted(v, "interleave_moe_layer_step")) gw_kv_u32(w, K("interleave_moe_layer_step"), 1);
#undef K
    mat(w, "token_embd.weight", d, V);
    vec(w, "output_norm.weight", d, 1.0f);
    if (phi) {
        vec(w, "rope_factors_long.weight", hd / 2, 1.0f);
        vec(w, "rope_factors_short.weight", hd / 2, v->bad_factor ? 0.0f : 1.0f);
    }
    if (v->rope_freqs) vec(w, "rope_freqs.weight", v->rope_freqs, v->rope_freqs_value);
    for (l = 0; l < L; l++) {
#define N(suffix) (snprintf(name, sizeof name, "blk.%d." suffix, l), name)
        if (!olmo) vec(w, N("attn_norm.weight"), d, 1.0f);
        if (!olmo && !cohere) vec(w, N("ffn_norm.weight"), d, 1.0f);
        if (olmo) {
            vec(w, N("post_attention_norm.weight"), d, 1.0f);
            vec(w, N("post_ffw_norm.weight"), d, 1.0f);
        }
        if (phi) {
            mat(w, N("attn_qkv.weight"), d, d + 2 * hd);
            mat(w, N("ffn_up.weight"), d, 2 * ff);
        } else {
            mat(w, N("attn_q.weight"), d, d);
            mat(w, N("attn_k.weight"), d, hd);
            mat(w, N("attn_v.weight"), d, hd);
            if (v->moe) {
                mat(w, N("ffn_gate_inp.weight"), d, v->experts);
                mat3(w, N("ffn_gate_exps.weight"), d, ff / 2, v->moe_tensor_experts);
                mat3(w, N("ffn_up_exps.weight"), d, ff / 2, v->experts);
                mat3(w, N("ffn_down_exps.weight"), ff / 2, d, v->experts);
                if (llama4 && !v->omit_shexp) mat(w, N("ffn_gate_shexp.weight"), d, ff / 2);
                if (llama4) mat(w, N("ffn_up_shexp.weight"), d, ff / 2);
                if (llama4) mat(w, N("ffn_down_shexp.weight"), ff / 2, d);
            } else {
                mat(w, N("ffn_gate.weight"), d, ff);
                mat(w, N("ffn_up.weight"), d, ff);
            }
            if (!cohere && !llama4) vec(w, N("attn_q_norm.weight"), olmo && !v->head_qk_norms ? d : hd, 1.0f);
            if (!cohere && !llama4 && !v->omit_k_norm) vec(w, N("attn_k_norm.weight"), hd, 1.0f);
        }
        mat(w, N("attn_output.weight"), d, d);
        if (!v->moe) mat(w, N("ffn_down.weight"), ff, d);
#undef N
    }
    return tu_load_status(w, err);
}

static void expect_error(const variant *v, swa_status code, const char *needle)
{
    swa_error err;
    swa_status s = load_variant(v, &err);
    if (s != code || !strstr(err.msg, needle))
        fail_msg("got %s \"%s\", want %s mentioning \"%s\"", swa_status_str(s), s ? err.msg : "", swa_status_str(code), needle);
}

/* Each file: arch's plain file (every other option off) with one thing changed, and the status
   and message of its load (NULL: it loads). MOE(used) gives every layer a mixture of 4 experts,
   `used` of them for each token. */
#define MOE(n_used) .experts = 4, .moe_tensor_experts = 4, .used = (n_used), .moe = 1
static const struct { variant v; swa_status code; const char *says; } broken[] = {
    {{.arch = "qwen3"}, SWA_OK, NULL},
    {{.arch = "phi3"}, SWA_OK, NULL},
    {{.arch = "qwen3", .omit_k_norm = 1}, SWA_ERR_MODEL, "blk.0.attn_k_norm.weight is missing"},
    {{.arch = "qwen3", .pattern_kind = "short"}, SWA_ERR_MODEL, "sliding_window_pattern: 1 entries, want one per layer"},
    {{.arch = "qwen3", .pattern_kind = "ints"}, SWA_ERR_MODEL, "sliding_window_pattern: entry 1 is not a bool"},
    {{.arch = "qwen3", .pattern_kind = "bool"}, SWA_ERR_MODEL, "sliding_window_pattern: want a period"},
    {{.arch = "qwen3", .scaling = "longrope"}, SWA_ERR_UNSUPPORTED,
     "RoPE scaling \"longrope\" is not supported (linear and yarn are)"},
    {{.arch = "phi3", .bad_factor = 1}, SWA_ERR_MODEL,
     "tensor rope_factors_short.weight: entry 0 is 0, not a positive finite number"},
    /* rope_freqs: n_rot/2 positive finite divisors */
    {{.arch = "mistral3", .rope_freqs = 8, .rope_freqs_value = 2.5f}, SWA_OK, NULL},
    {{.arch = "mistral3", .rope_freqs = 8, .rope_freqs_value = 0.0f}, SWA_ERR_MODEL,
     "tensor rope_freqs.weight: entry 0 is 0, not a positive finite number"},
    {{.arch = "mistral3", .rope_freqs = 8, .rope_freqs_value = -4.0f}, SWA_ERR_MODEL,
     "tensor rope_freqs.weight: entry 0 is -4, not a positive finite number"},
    {{.arch = "mistral3", .rope_freqs = 8, .rope_freqs_value = (float)HUGE_VAL}, SWA_ERR_MODEL,
     "tensor rope_freqs.weight: entry 0 is inf, not a positive finite number"},
    {{.arch = "mistral3", .rope_freqs = 9, .rope_freqs_value = 1.0f}, SWA_ERR_MODEL, "tensor rope_freqs.weight: shape 9"},
    /* mixtures of experts: the keys and the experts' 3-D tensors */
    {{.arch = "qwen3moe", MOE(2)}, SWA_OK, NULL},
    {{.arch = "qwen3moe", .experts = 4, .moe_tensor_experts = 3, .used = 2, .moe = 1}, SWA_ERR_MODEL,
     "blk.0.ffn_gate_exps.weight: shape 32x16x3x1, want 32x16x4"},
    {{.arch = "qwen3moe", MOE(5)}, SWA_ERR_MODEL, "key qwen3moe.expert_used_count: 5 is out of range 1..4"},
    {{.arch = "qwen3moe", MOE(0)}, SWA_ERR_MODEL, "key qwen3moe.expert_used_count is missing"},
    {{.arch = "qwen3moe", MOE(2), .omit_count = 1}, SWA_ERR_MODEL, "key qwen3moe.expert_count is missing"},
    /* a llama file with experts is Mixtral, whatever tensors it has */
    {{.arch = "llama", .experts = 4, .used = 2}, SWA_ERR_MODEL, "tensor blk.0.ffn_gate_inp.weight is missing"},
    /* OLMo 2: Q's norm spans the projection, all layers global without the window key;
       Command R7B: the keys llama.cpp requires */
    {{.arch = "olmo2"}, SWA_OK, NULL},
    {{.arch = "olmo2", .omit_key = "attention.sliding_window"}, SWA_OK, NULL},
    {{.arch = "olmo2", .head_qk_norms = 1}, SWA_ERR_MODEL, "tensor blk.0.attn_q_norm.weight: shape 16x1x1x1, want 32x1"},
    {{.arch = "cohere2"}, SWA_OK, NULL},
    {{.arch = "cohere2", .omit_key = "attention.sliding_window"}, SWA_ERR_MODEL,
     "key cohere2.attention.sliding_window is missing"},
    {{.arch = "cohere2", .omit_key = "logit_scale"}, SWA_ERR_MODEL, "key cohere2.logit_scale is missing"},
    {{.arch = "cohere2", .omit_key = "attention.layer_norm_epsilon"}, SWA_ERR_MODEL,
     "key cohere2.attention.layer_norm_epsilon is missing"},
    /* gpt-oss's norm before the experts is post_attention_norm, and its sinks are required;
       mistral3's temperature needs a length */
    {{.arch = "gpt-oss", MOE(2)}, SWA_ERR_MODEL, "tensor blk.0.post_attention_norm.weight is missing"},
    {{.arch = "mistral3"}, SWA_OK, NULL},
    {{.arch = "mistral3", .temperature = 0.1f}, SWA_ERR_MODEL,
     "key mistral3.attention.temperature_scale: a temperature scale needs"},
    /* llama4: the step llama.cpp requires, the shared expert beside the routed ones */
    {{.arch = "llama4", MOE(1)}, SWA_OK, NULL},
    {{.arch = "llama4", MOE(1), .omit_key = "interleave_moe_layer_step"}, SWA_ERR_MODEL,
     "key llama4.interleave_moe_layer_step is missing"},
    {{.arch = "llama4", MOE(1), .omit_shexp = 1}, SWA_ERR_MODEL, "tensor blk.0.ffn_gate_shexp.weight is missing"},
};
#undef MOE

static void test_broken_files(void **state)
{
    size_t i;
    (void)state;
    for (i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        if (broken[i].code != SWA_OK) expect_error(&broken[i].v, broken[i].code, broken[i].says);
        else if (load_variant(&broken[i].v, NULL) != SWA_OK) fail_msg("%s file %d does not load", broken[i].v.arch, (int)i);
    }
}

/* Llama 4's file without chunking (attention.sliding_window 0, as llama.cpp's converter writes
   MobileLLM's): every layer global and turning RoPE, so the NoPE layer's temperature never
   applies; the chunk's default is 8192, as llama.cpp fixes it. */
static void test_llama4_chunking_keys(void **state)
{
    static const struct { const char *extra; int want[4]; } cases[] = {
        {"--chunk 5", {5, 5, 5, 0}},
        {"", {8192, 8192, 8192, 0}},
        {"--window 0", {0, 0, 0, 0}},
    };
    size_t k;
    (void)state;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ref r;
        swa_model *m;
        int l;
        memset(&r, 0, sizeof r);
        snprintf(r.args, sizeof r.args, "--shape custom --type f32 --vocab 272 --arch llama4 --layers 4 --dim 32 --heads 2 "
                 "--head-dim 16 --ff 32 --ctx 16384 %s", cases[k].extra);
        m = make_model(&r);
        for (l = 0; l < 4; l++) assert_int_equal(swa_model_layer_window(m, l), cases[k].want[l]);
        swa_model_free(m);
    }
}

int main(void)
{
    static const struct CMUnitTest others[] = {
        cmocka_unit_test(test_llama4_chunking_keys), cmocka_unit_test(test_gemma_embedding),
        cmocka_unit_test(test_gpt_oss_sinks_window),
        cmocka_unit_test(test_moe_deterministic), cmocka_unit_test(test_olmo2_cohere2_batches),
        cmocka_unit_test(test_window_matters), cmocka_unit_test(test_inspect_pattern),
        cmocka_unit_test(test_broken_files), cmocka_unit_test(test_window_beyond_context),
        cmocka_unit_test(test_attention_sinks),
    };
    enum { N_ARCH = sizeof arch_tests / sizeof arch_tests[0], N_OTHERS = sizeof others / sizeof others[0] };
    struct CMUnitTest tests[N_ARCH + N_OTHERS];
    size_t i;
    for (i = 0; i < N_ARCH; i++) {
        struct CMUnitTest t = {arch_tests[i][0], check_cases, NULL, NULL, (void *)(uintptr_t)arch_tests[i]};
        tests[i] = t;
    }
    for (i = 0; i < N_OTHERS; i++) tests[N_ARCH + i] = others[i];
    return _cmocka_run_group_tests("tests", tests, N_ARCH + N_OTHERS, NULL, NULL);
}
