#define _POSIX_C_SOURCE 200809L   /* mkstemp, fdopen */
#define _DEFAULT_SOURCE           /* the resident loader's anonymous mapping */
/* Loading models: a real file made by llama.cpp's converter, file versus memory, contexts that
   share a model, and clear errors for models that do not fit the hyperparameters. */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/testutil.h"

#define STORIES_GGUF "../shared/models/stories260K-llamacpp-f32.gguf"
#define STORIES_TEXT "../shared/testdata/stories260K-greedy.txt"

/* Append the text of one vocabulary piece: "▁" is a space, "<0x0A>" a byte. */
static void append_piece(char *out, size_t cap, swa_str piece)
{
    size_t len = strlen(out), i;
    unsigned byte;
    if (piece.len == 6 && sscanf(piece.ptr, "<0x%2X>", &byte) == 1) {
        if (len + 1 < cap) { out[len] = (char)byte; out[len + 1] = '\0'; }
        return;
    }
    for (i = 0; i < piece.len && len + 1 < cap; i++) {
        if (i + 2 < piece.len && !memcmp(piece.ptr + i, "\xe2\x96\x81", 3)) {
            out[len++] = ' ';
            i += 2;
        } else {
            out[len++] = piece.ptr[i];
        }
    }
    out[len] = '\0';
}

/* llama.cpp's own conversion of stories260K: its hyperparameters, and greedy text from BOS that
   equals what llama2.c's run.c prints for the original checkpoint. */
static void test_real_file_greedy_text(void **state)
{
    swa_model *model;
    swa_ctx *ctx;
    swa_error err;
    const swa_hparams *hp;
    const float *logits;
    swa_gguf_value tokens, piece;
    swa_str s = {NULL, 0};
    char *want, text[4096] = "";
    int32_t tok = 1;
    int i;
    (void)state;
    if (!(want = tu_read_text(STORIES_TEXT, NULL))) skip();   /* ../shared is absent: nothing to compare */
    if (swa_model_load(STORIES_GGUF, &model, &err) != SWA_OK) fail_msg("%s", err.msg);
    hp = swa_model_hparams(model);
    assert_int_equal(hp->n_layer, 5);
    assert_int_equal(hp->n_embd, 64);
    assert_int_equal(hp->n_head, 8);
    assert_int_equal(hp->n_kv_head, 4);
    assert_int_equal(hp->head_dim, 8);
    assert_int_equal(hp->n_ff, 172);
    assert_int_equal(hp->n_vocab, 512);
    assert_int_equal(hp->n_ctx_train, 128);   /* the converter's default, not the model's 512 */
    assert_int_equal(hp->n_rot, 8);
    assert_true(hp->rope_base == 10000.0f);
    assert_int_equal(hp->window, 0);
    assert_int_equal(hp->weight_type, SWA_TYPE_F32);
    tokens = swa_gguf_kv_value(swa_model_gguf(model), swa_gguf_kv_find(swa_model_gguf(model), "tokenizer.ggml.tokens"));
    assert_int_equal(tokens.n, 512);
    assert_int_equal(swa_ctx_create(model, NULL, &ctx, &err), SWA_OK);
    for (i = 0; i < 127; i++) {
        assert_int_equal(swa_ctx_eval(ctx, &tok, 1, &logits, &err), SWA_OK);
        tok = swa_argmax(logits, hp->n_vocab);
        assert_int_equal(swa_gguf_value_at(&tokens, (uint64_t)tok, &piece), SWA_OK);
        assert_int_equal(swa_gguf_value_str(&piece, &s), SWA_OK);
        append_piece(text, sizeof text, s);
    }
    /* the text starts with the space SentencePiece puts before the first word */
    assert_true(strlen(text) > 300);
    assert_int_equal(strncmp(text + 1, want, strlen(text + 1)), 0);
    free(want);
    swa_ctx_free(ctx);
    swa_model_free(model);
}

static tu_spec tiny_spec(void)
{
    tu_spec s;
    memset(&s, 0, sizeof s);
    s.n_layer = 2; s.n_embd = 32; s.n_head = 4; s.n_kv_head = 2; s.n_ff = 64;
    s.n_vocab = 50; s.n_ctx = 256; s.type = GW_Q8_0; s.window = 6; s.seed = 11; s.tied = 1;
    return s;
}

/* The tiny model, built and loaded from memory: the state of the tests set up with tiny_open. */
typedef struct tiny {
    tu_model tm;
    swa_model *m;
} tiny;

static int tiny_open(void **state)
{
    tiny *t = (tiny *)calloc(1, sizeof *t);
    tu_spec s = tiny_spec();
    assert_non_null(t);
    t->m = tu_build_load(&t->tm, &s);
    *state = t;
    return 0;
}

static int tiny_close(void **state)
{
    tiny *t = (tiny *)*state;
    swa_model_free(t->m);
    tu_free(&t->tm);
    free(t);
    return 0;
}

/* The same file through a path and through memory gives the same logits; so do two contexts
   sharing one model, interleaved, and a context after reset. */
static void test_file_memory_shared_reset(void **state)
{
    tu_spec s = tiny_spec();
    tu_model tm;
    swa_model *a, *b, *r;
    swa_ctx *c1, *c2, *c3, *c5;
    char path[] = "/tmp/swa_test_model_XXXXXX";
    int32_t tok[40];
    float all[40 * 50], first[50];
    const float *l1, *l2, *l3;
    FILE *f;
    int fd, i;
    (void)state;
    assert_true(tu_build(&tm, &s));
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "wb");
    assert_int_equal(fwrite(tm.gguf, 1, tm.gguf_size, f), tm.gguf_size);
    fclose(f);
    assert_int_equal(swa_model_load(path, &a, NULL), SWA_OK);
    assert_int_equal(swa_model_load_memory(tm.gguf, tm.gguf_size, &b, NULL), SWA_OK);
    assert_int_equal(swa_model_load_resident(path, &r, NULL), SWA_OK);
    remove(path);
    assert_int_equal(swa_ctx_create(r, NULL, &c5, NULL), SWA_OK);
    assert_int_equal(swa_ctx_create(a, NULL, &c1, NULL), SWA_OK);
    assert_int_equal(swa_ctx_create(b, NULL, &c2, NULL), SWA_OK);
    assert_int_equal(swa_ctx_create(b, NULL, &c3, NULL), SWA_OK);
    tu_random_tokens(tok, 40, 50, 8);
    for (i = 0; i < 40; i++) {
        assert_int_equal(swa_ctx_eval(c1, &tok[i], 1, &l1, NULL), SWA_OK);
        assert_int_equal(swa_ctx_eval(c2, &tok[i], 1, &l2, NULL), SWA_OK);
        assert_int_equal(swa_ctx_eval(c3, &tok[(i * 7) % 40], 1, &l3, NULL), SWA_OK);   /* other text */
        assert_memory_equal(l1, l2, sizeof(float) * 50);
        assert_int_equal(swa_ctx_eval(c5, &tok[i], 1, &l2, NULL), SWA_OK);           /* read, not mapped */
        assert_memory_equal(l1, l2, sizeof(float) * 50);
        if (i == 0) memcpy(first, l1, sizeof first);
    }
    swa_ctx_reset(c1);
    assert_int_equal(swa_ctx_pos(c1), 0);
    assert_int_equal(swa_ctx_eval(c1, tok, 1, &l1, NULL), SWA_OK);
    assert_memory_equal(l1, first, sizeof first);
    /* eval_all's last row is eval's logits, also when the run is longer than n_batch */
    {
        swa_ctx_config small;
        swa_ctx *c4;
        memset(&small, 0, sizeof small);
        small.n_batch = 7;
        assert_int_equal(swa_ctx_create(b, &small, &c4, NULL), SWA_OK);
        assert_int_equal(swa_ctx_eval(c4, tok, 40, &l3, NULL), SWA_OK);
        swa_ctx_reset(c2);
        assert_int_equal(swa_ctx_eval_all(c2, tok, 40, all, NULL), SWA_OK);
        assert_memory_equal(all + 39 * 50, l3, sizeof(float) * 50);
        swa_ctx_free(c4);
    }
    swa_ctx_reset(c2);
    assert_int_equal(swa_ctx_eval_all(c2, tok, 40, all, NULL), SWA_OK);
    swa_ctx_reset(c2);
    assert_int_equal(swa_ctx_eval(c2, tok, 40, &l2, NULL), SWA_OK);
    assert_memory_equal(all + 39 * 50, l2, sizeof(float) * 50);
    swa_ctx_free(c1); swa_ctx_free(c2); swa_ctx_free(c3); swa_ctx_free(c5);
    swa_model_free(a); swa_model_free(b); swa_model_free(r);
    tu_free(&tm);
}

static void test_hparams_and_config(void **state)
{
    swa_model *m = ((tiny *)*state)->m;
    swa_ctx *c;
    swa_ctx_config cfg, got;
    swa_error err;
    assert_int_equal(swa_model_hparams(m)->window, 6);
    assert_int_equal(swa_model_layer_window(m, 1), 6);
    assert_int_equal(swa_model_layer_window(m, 2), -1);
    assert_int_equal(swa_model_hparams(m)->weight_type, SWA_TYPE_Q8_0);
    got = swa_ctx_config_default(m);
    assert_int_equal(got.n_batch, 64);
    assert_int_equal(got.n_ctx, 256);
    memset(&cfg, 0, sizeof cfg);
    cfg.n_batch = -1;
    assert_int_equal(swa_ctx_create(m, &cfg, &c, &err), SWA_ERR_INVALID_ARG);
    assert_null(c);
    assert_int_equal(swa_ctx_memory_size(m, &cfg), 0);
    cfg.n_batch = 3;
    cfg.window = 9;
    assert_int_equal(swa_ctx_create(m, &cfg, &c, &err), SWA_OK);
    assert_int_equal(swa_ctx_window(c, 0), 9);
    assert_true(swa_ctx_memory_size(m, &cfg) > swa_ctx_cache_bytes(c));
    got = swa_ctx_config_get(c);
    assert_int_equal(got.n_batch, 3);
    swa_ctx_free(c);
}

/* ---- broken models: each must fail with the right code and a message that names the culprit ---- */

typedef struct variant {
    const char *omit;          /* leave this tensor out */
    const char *reshape;       /* write this tensor with one row too many */
    const char *retype;        /* write this tensor as IQ2_XXS, a type we do not run */
    const char *arch;          /* general.architecture, default "llama" */
    int n_head, n_kv_head;     /* 0: 4 and 2 */
    int window;                /* -1: write sliding_window = 0 */
    int window_array_len;      /* > 0: an array of this length */
    const char *omit_key;
    int norms_f16;             /* write the 1-D norm weights as F16 */
    int n_rot;                 /* > 0: llama.rope.dimension_count */
    int negative_window;       /* a per-layer window array with a -1 in it */
} variant;

static void put_tensor(gw_writer *w, const variant *v, const char *name, int64_t cols, int64_t rows)
{
    int64_t ne[2];
    float *data;
    int64_t i;
    int is_vector = rows == 0;
    if (v->omit && !strcmp(v->omit, name)) return;
    if (v->reshape && !strcmp(v->reshape, name)) rows++;
    ne[0] = cols;
    ne[1] = is_vector ? 1 : rows;
    data = (float *)malloc(sizeof(float) * (size_t)(cols * ne[1]));
    for (i = 0; i < cols * ne[1]; i++) data[i] = 0.01f * (float)(i % 7);
    if (v->retype && !strcmp(v->retype, name)) {
        size_t bytes = (size_t)(cols / 256 * 66 * ne[1]);    /* IQ2_XXS: 66 bytes per 256 */
        uint8_t *raw = (uint8_t *)calloc(bytes, 1);
        gw_tensor(w, name, 16, is_vector ? 1 : 2, ne, raw, bytes);
        free(raw);
    } else {
        gw_tensor_f32(w, name, is_vector && v->norms_f16 ? GW_F16 : GW_F32, is_vector ? 1 : 2, ne, data);
    }
    free(data);
}

static swa_status load_variant(const variant *v, swa_error *err)
{
    gw_writer *w = gw_new(3);
    int n_head = v->n_head ? v->n_head : 4, n_kv = v->n_kv_head ? v->n_kv_head : 2, l;
    const int d = 256, hd = d / 4, ff = 256, V = 10;
    char name[64];
#define KEY(k) (!v->omit_key || strcmp(v->omit_key, k))
    gw_kv_str(w, "general.architecture", v->arch ? v->arch : "llama");
    if (KEY("llama.block_count")) gw_kv_u32(w, "llama.block_count", 2);
    gw_kv_u32(w, "llama.embedding_length", d);
    gw_kv_u32(w, "llama.feed_forward_length", ff);
    gw_kv_u32(w, "llama.attention.head_count", (uint32_t)n_head);
    gw_kv_u32(w, "llama.attention.head_count_kv", (uint32_t)n_kv);
    gw_kv_u32(w, "llama.context_length", 64);
#undef KEY
    if (v->window < 0) gw_kv_u32(w, "llama.attention.sliding_window", 0);
    if (v->window_array_len || v->negative_window) {
        int32_t ws[8] = {4, 4, 4, 4, 4, 4, 4, 4};
        if (v->negative_window) ws[1] = -1;
        gw_kv_array(w, "llama.attention.sliding_window", GW_I32, (uint64_t)(v->window_array_len ? v->window_array_len : 2), ws);
    }
    if (v->n_rot) gw_kv_u32(w, "llama.rope.dimension_count", (uint32_t)v->n_rot);
    put_tensor(w, v, "token_embd.weight", d, V);
    put_tensor(w, v, "output_norm.weight", d, 0);
    for (l = 0; l < 2; l++) {
#define T(x, cols, rows) (snprintf(name, sizeof name, "blk.%d." x ".weight", l), put_tensor(w, v, name, cols, rows))
        T("attn_norm", d, 0); T("ffn_norm", d, 0);
        T("attn_q", d, hd * 4); T("attn_k", d, hd * 2); T("attn_v", d, hd * 2); T("attn_output", hd * 4, d);
        T("ffn_gate", d, ff); T("ffn_up", d, ff); T("ffn_down", ff, d);
#undef T
    }
    return tu_load_status(w, err);
}

static void expect_error(const variant *v, swa_status code, const char *needle)
{
    swa_error err;
    swa_status s = load_variant(v, &err);
    if (s != code || err.code != code || !strstr(err.msg, needle))
        fail_msg("got %s \"%s\", want %s mentioning \"%s\"", swa_status_str(s), err.msg, swa_status_str(code), needle);
}

/* The version string is the macros'; instruction sets by name, and one this CPU cannot run is
   refused with its name. */
static void test_version_and_kernels(void **state)
{
    swa_model *m = ((tiny *)*state)->m;
    swa_ctx *c;
    swa_ctx_config cfg;
    swa_error err;
    char want[32];
    int32_t k;
    snprintf(want, sizeof want, "%d.%d.%d", SWA_VERSION_MAJOR, SWA_VERSION_MINOR, SWA_VERSION_PATCH);
    assert_string_equal(swa_version(), want);
    for (k = SWA_KERNELS_BEST; k <= SWA_KERNELS_AMX; k++) assert_int_equal(swa_kernels_from_name(swa_kernels_name(k)), k);
    assert_int_equal(swa_kernels_from_name("sse9"), -1);
    assert_int_equal(swa_kernels_from_name(NULL), -1);
    assert_null(swa_kernels_name(SWA_KERNELS_AMX + 1));
    memset(&cfg, 0, sizeof cfg);
    cfg.kernels = SWA_KERNELS_REF;
    assert_int_equal(swa_ctx_create(m, &cfg, &c, &err), SWA_OK);
    assert_string_equal(swa_ctx_kernels(c), "ref");
    swa_ctx_free(c);
#if defined(__aarch64__)
    cfg.kernels = SWA_KERNELS_AVX2;
#else
    cfg.kernels = SWA_KERNELS_NEON;
#endif
    assert_int_equal(swa_ctx_create(m, &cfg, &c, &err), SWA_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, swa_kernels_name(cfg.kernels)));
    cfg.kernels = SWA_KERNELS_AMX + 1;
    assert_int_equal(swa_ctx_create(m, &cfg, &c, &err), SWA_ERR_INVALID_ARG);
}

static void test_model_errors(void **state)
{
    static const struct { variant v; swa_status code; const char *says; } bad[] = {
        {{.omit = "blk.1.ffn_up.weight"}, SWA_ERR_MODEL, "blk.1.ffn_up.weight is missing"},
        {{.reshape = "blk.0.attn_k.weight"}, SWA_ERR_MODEL, "blk.0.attn_k.weight: shape 256x129"},
        {{.retype = "blk.1.ffn_down.weight"}, SWA_ERR_UNSUPPORTED, "blk.1.ffn_down.weight: type IQ2_XXS"},
        {{.retype = "blk.0.attn_norm.weight"}, SWA_ERR_UNSUPPORTED, "blk.0.attn_norm.weight: type IQ2_XXS is not supported"},
        {{.arch = "mamba"}, SWA_ERR_UNSUPPORTED, "mamba"},
        {{.n_head = 3}, SWA_ERR_MODEL, "head count 3 does not divide"},
        {{.n_kv_head = 3}, SWA_ERR_MODEL, "KV head count 3"},
        {{.window = -1}, SWA_ERR_MODEL, "sliding_window: 0 is out of range"},
        {{.window_array_len = 3}, SWA_ERR_MODEL, "3 entries, want one per layer"},
        {{.omit_key = "llama.block_count"}, SWA_ERR_MODEL, "llama.block_count is missing"},
        {{.n_rot = 63}, SWA_ERR_MODEL, "dimension_count: 63 is odd"},            /* RoPE rotates pairs */
        {{.n_rot = 66}, SWA_ERR_MODEL, "dimension_count: 66 is out of range"},   /* more than the head size 64 */
        {{.negative_window = 1}, SWA_ERR_MODEL, "entry 1 is not a window size"},
    };
    static const variant fine[] = {
        {0},                          /* the base */
        {.norms_f16 = 1},             /* other writers store norms as F16 */
        {.omit = "output.weight"},    /* absent output: tied */
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof fine / sizeof fine[0]; i++) assert_int_equal(load_variant(&fine[i], NULL), SWA_OK);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_error(&bad[i].v, bad[i].code, bad[i].says);
}

/* A cache that cannot be allocated is an error with the size in it, not a crash. */
static void test_too_big(void **state)
{
    tu_spec s = tiny_spec();
    tu_model tm;
    swa_model *m;
    swa_ctx *c;
    swa_ctx_config cfg;
    swa_error err;
    (void)state;
    s.window = 0;
    m = tu_build_load(&tm, &s);
    memset(&cfg, 0, sizeof cfg);
    cfg.n_ctx = INT32_MAX;                 /* 2^31 positions x 2 layers x 16 values x 2 x 2 bytes */
    cfg.n_batch = 1 << 20;
    assert_int_equal(swa_ctx_create(m, &cfg, &c, &err), SWA_ERR_NOMEM);
    assert_null(c);
    assert_non_null(strstr(err.msg, "cannot allocate a context of"));
    swa_model_free(m);
    tu_free(&tm);
}

static void test_eval_errors(void **state)
{
    const tiny *t = (const tiny *)*state;
    swa_model *m;
    swa_ctx *c;
    swa_error err;
    const float *logits = (const float *)&err;
    int32_t tok[3] = {1, 50, 2};
    assert_int_equal(swa_ctx_create(t->m, NULL, &c, NULL), SWA_OK);
    assert_int_equal(swa_ctx_eval(c, tok, 3, &logits, &err), SWA_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "token 50 (at index 1) is out of range 0..49"));
    assert_null(logits);
    assert_int_equal(swa_ctx_pos(c), 0);
    tok[1] = -1;
    assert_int_equal(swa_ctx_eval(c, tok, 3, NULL, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_ctx_eval(c, tok, 0, NULL, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_ctx_eval_all(c, tok, 1, NULL, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_ctx_pos(c), 0);
    swa_ctx_free(c);
    assert_int_equal(swa_model_load("/nonexistent/model.gguf", &m, &err), SWA_ERR_IO);
    assert_non_null(strstr(err.msg, "/nonexistent/model.gguf"));
    assert_null(m);
    assert_int_equal(swa_model_load_resident("/nonexistent/model.gguf", &m, &err), SWA_ERR_IO);
    assert_non_null(strstr(err.msg, "/nonexistent/model.gguf"));
    assert_null(m);
    swa_model_free(NULL);
    swa_ctx_free(NULL);
    {   /* weights are read in place: a misaligned buffer is the caller's error, not the file's */
        uint8_t *shifted = (uint8_t *)malloc(t->tm.gguf_size + 1);
        memcpy(shifted + 1, t->tm.gguf, t->tm.gguf_size);
        assert_int_equal(swa_model_load_memory(shifted + 1, t->tm.gguf_size, &m, &err), SWA_ERR_INVALID_ARG);
        assert_non_null(strstr(err.msg, "aligned"));
        free(shifted);
    }
}

/* A load's progress: how often it was called, its last fraction, and the call that cancels. */
typedef struct progress_log {
    int calls, cancel_at;
    float last;
} progress_log;

static int on_progress(float fraction, void *data)
{
    progress_log *log = (progress_log *)data;
    log->last = fraction;
    return ++log->calls == log->cancel_at;
}

/* swa_model_load_with is the one loader: from the caller's memory through params.data (the
   progress callback then called once, with 1), cancelled from memory and from a file with *out
   left NULL, and the combinations of path and params it refuses, each with a message. */
static void test_load_with(void **state)
{
    tu_spec s = tiny_spec();
    tu_model tm;
    swa_model_params params = swa_model_params_default(), zero;
    progress_log log = {0, 0, 0.0f};
    swa_model *m = NULL, *b = NULL, *sentinel = (swa_model *)&log;
    swa_ctx *c1, *c2;
    swa_error err;
    const float *l1, *l2;
    int32_t tok[3] = {1, 2, 3};
    char path[] = "/tmp/swa_test_model_XXXXXX";
    FILE *f;
    int fd;
    (void)state;
    memset(&zero, 0, sizeof zero);
    assert_memory_equal(&params, &zero, sizeof zero);   /* the default is all zero */
    assert_true(tu_build(&tm, &s));

    params.data = tm.gguf;
    params.size = tm.gguf_size;
    params.progress = on_progress;
    params.progress_data = &log;
    assert_int_equal(swa_model_load_with(NULL, &params, &m, &err), SWA_OK);
    assert_int_equal(err.code, SWA_OK);
    assert_int_equal(swa_model_load_path(m), SWA_LOAD_MEMORY);
    assert_int_equal(log.calls, 1);   /* nothing to read: only the model built */
    assert_true(log.last == 1.0f);
    assert_int_equal(swa_model_load_memory(tm.gguf, tm.gguf_size, &b, NULL), SWA_OK);
    assert_int_equal(swa_ctx_create(m, NULL, &c1, NULL), SWA_OK);
    assert_int_equal(swa_ctx_create(b, NULL, &c2, NULL), SWA_OK);
    assert_int_equal(swa_ctx_eval(c1, tok, 3, &l1, NULL), SWA_OK);
    assert_int_equal(swa_ctx_eval(c2, tok, 3, &l2, NULL), SWA_OK);
    assert_memory_equal(l1, l2, sizeof(float) * 50);
    swa_ctx_free(c1); swa_ctx_free(c2);
    swa_model_free(m); swa_model_free(b);

    /* cancelled once the model is built: nothing is returned, nothing stays allocated */
    memset(&log, 0, sizeof log);
    log.cancel_at = 1;
    m = sentinel;
    assert_int_equal(swa_model_load_with(NULL, &params, &m, &err), SWA_ERR_ABORTED);
    assert_int_equal(err.code, SWA_ERR_ABORTED);
    assert_null(m);
    assert_non_null(strstr(err.msg, "loading cancelled"));

    /* the same from a file, mapped and read, cancelled at the first call */
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "wb");
    assert_int_equal(fwrite(tm.gguf, 1, tm.gguf_size, f), tm.gguf_size);
    fclose(f);
    params.data = NULL;
    params.size = 0;
    for (params.resident = 0; params.resident < 2; params.resident++) {
        memset(&log, 0, sizeof log);
        log.cancel_at = 1;
        m = sentinel;
        assert_int_equal(swa_model_load_with(path, &params, &m, &err), SWA_ERR_ABORTED);
        assert_null(m);
        assert_non_null(strstr(err.msg, "loading cancelled"));
        assert_non_null(strstr(err.msg, path));
        log.cancel_at = 0;
        assert_int_equal(swa_model_load_with(path, &params, &m, &err), SWA_OK);
        assert_true(params.resident ? swa_model_load_path(m) == SWA_LOAD_READ : swa_model_load_path(m) >= SWA_LOAD_MAPPED);
        swa_model_free(m);
    }

    /* what the loader refuses, before it touches anything */
    params = swa_model_params_default();
    params.data = tm.gguf;
    params.size = tm.gguf_size;
    m = sentinel;
    assert_int_equal(swa_model_load_with(path, &params, &m, &err), SWA_ERR_INVALID_ARG);   /* both */
    assert_int_equal(err.code, SWA_ERR_INVALID_ARG);
    assert_null(m);
    assert_non_null(strstr(err.msg, "both a path and params->data"));
    m = sentinel;
    assert_int_equal(swa_model_load_with(NULL, NULL, &m, &err), SWA_ERR_INVALID_ARG);      /* neither */
    assert_null(m);
    assert_non_null(strstr(err.msg, "no path and no params->data"));
    params.resident = 1;
    assert_int_equal(swa_model_load_with(NULL, &params, &m, &err), SWA_ERR_INVALID_ARG);   /* resident with data */
    assert_non_null(strstr(err.msg, "params->resident"));
    params = swa_model_params_default();
    params.size = tm.gguf_size;
    assert_int_equal(swa_model_load_with(path, &params, &m, &err), SWA_ERR_INVALID_ARG);   /* size without data */
    assert_non_null(strstr(err.msg, "params->size without params->data"));
    params.data = (const uint8_t *)tm.gguf + 1;
    assert_int_equal(swa_model_load_with(NULL, &params, &m, &err), SWA_ERR_INVALID_ARG);   /* misaligned */
    assert_non_null(strstr(err.msg, "aligned"));
    assert_int_equal(swa_model_load_with(path, NULL, NULL, &err), SWA_ERR_INVALID_ARG);    /* no out */
    assert_non_null(strstr(err.msg, "out is NULL"));
    assert_int_equal(swa_model_load_memory(NULL, 0, &m, &err), SWA_ERR_INVALID_ARG);
    assert_null(m);
    remove(path);
    tu_free(&tm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_file_greedy_text),
        cmocka_unit_test(test_file_memory_shared_reset),
        cmocka_unit_test_setup_teardown(test_hparams_and_config, tiny_open, tiny_close),
        cmocka_unit_test_setup_teardown(test_version_and_kernels, tiny_open, tiny_close),
        cmocka_unit_test(test_model_errors),
        cmocka_unit_test_setup_teardown(test_eval_errors, tiny_open, tiny_close),
        cmocka_unit_test(test_too_big),
        cmocka_unit_test(test_load_with),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
