/* testutil.h - files, random llama models for the tests, and an independent reference forward pass.

   tu_read_text, tu_read_file and tu_write_file read and write whole files; tu_int_list reads a
   reference file's list of integers; tu_vocab_case_next walks llama.cpp's vocabulary test
   cases. tu_small_vocab writes a SentencePiece vocabulary of byte tokens and a few pieces,
   tu_vocab_load loads it. tu_build writes a GGUF model with random weights through
   tools/common/gguf_writer.h and keeps the weights as the file stores them (dequantized here, by
   code that shares nothing with swa.h); tu_build_load loads it too, tu_ctx makes a context on
   it. tu_reference computes logits for a whole sequence at once in double precision, with plain
   full attention and an explicit sliding-window (or chunk) mask: no ring, no chunks of
   evaluation, no cache. Include after swa.h and gguf_writer.h (with their implementations) and
   cmocka. */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- files ---- */

/* The whole file, NUL-terminated, its length in *size when size is not NULL. NULL (and size 0)
   when it cannot be opened: a test whose data is optional skips then. Empty when it cannot be read. */
static inline char *tu_read_text(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (size) *size = 0;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n < 0) n = 0;
    buf = (char *)malloc((size_t)n + 1);
    assert_non_null(buf);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
    buf[n] = '\0';
    fclose(f);
    if (size) *size = (size_t)n;
    return buf;
}

/* The whole file, NUL-terminated, its length in *n: the test fails when it cannot be read. */
static inline uint8_t *tu_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long bytes;
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    assert_true(bytes >= 0);
    buf = (uint8_t *)malloc((size_t)bytes + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)bytes, f), (size_t)bytes);
    buf[bytes] = 0;
    fclose(f);
    *n = (size_t)bytes;
    return buf;
}

static inline void tu_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) fail_msg("cannot create %s", path);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* The integers of the JSON list at p (its '['), in out: the test fails past cap of them. The
   reference files are ours and flat, so anything that does not start a number is passed over. */
static inline int tu_int_list(const char *p, int32_t *out, int cap)
{
    int n = 0;
    assert_true(*p == '[');
    for (p++; *p && *p != ']';) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p) { p++; continue; }
        assert_true(n < cap);
        out[n++] = (int32_t)v;
        p = end;
    }
    return n;
}

/* llama.cpp's vocabulary tests: VOCAB.inp holds the cases, each followed by a line
   "__ggml_vocab_test__", and VOCAB.out a line of ids per case. tu_vocab_cases_open reads both
   for the vocabulary file at path: 0 when VOCAB.inp is absent (a test skips then); the test fails
   when VOCAB.out is. tu_vocab_case_next gives the next case's text (NUL-terminated in place) and
   its ids in want[0..*n_want), at most cap of them, or NULL after the last case. */
typedef struct tu_vocab_cases { char *inp, *out, *at, *line; } tu_vocab_cases;

static inline int tu_vocab_cases_open(tu_vocab_cases *c, const char *path)
{
    char name[512];
    memset(c, 0, sizeof *c);
    snprintf(name, sizeof name, "%s.inp", path);
    if (!(c->inp = tu_read_text(name, NULL))) return 0;
    snprintf(name, sizeof name, "%s.out", path);
    if (!(c->out = tu_read_text(name, NULL))) fail_msg("cannot open %s", name);
    c->at = c->inp;
    c->line = c->out;
    return 1;
}

static inline const char *tu_vocab_case_next(tu_vocab_cases *c, int32_t *want, size_t cap, size_t *n_want)
{
    static const char sep_line[] = "\n__ggml_vocab_test__\n";
    char *text = c->at, *sep = strstr(c->at, sep_line), *eol, *p, *end;
    if (!sep) return NULL;
    if (!(eol = strchr(c->line, '\n'))) fail_msg("%s", "fewer lines of ids than cases");
    *sep = *eol = '\0';
    *n_want = 0;
    for (p = c->line; *n_want < cap && (want[*n_want] = (int32_t)strtol(p, &end, 10), end != p); p = end) (*n_want)++;
    c->at = sep + strlen(sep_line);
    c->line = eol + 1;
    return text;
}

static inline void tu_vocab_cases_close(tu_vocab_cases *c)
{
    free(c->inp);
    free(c->out);
}

/* ---- random numbers ----
   Fixed generators, so that a test's data are the same on every machine and every run. Models,
   tokens and texts come from xorshift64* (tu_rng_next); the kernel and quantizer tests' inputs
   from Marsaglia's xorshift64 and the sampler tests' logits from a 64-bit LCG, the generators
   those inputs were drawn with when the tests were written. Each state must not start at 0,
   except the LCG's. */

static inline uint64_t tu_rng_next(uint64_t *s)   /* xorshift64* */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static inline uint64_t tu_xorshift64(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static inline uint64_t tu_lcg_next(uint64_t *s)   /* Knuth's MMIX constants; the high bits are the good ones */
{
    return *s = *s * 6364136223846793005ull + 1442695040888963407ull;
}

/* ---- small SentencePiece vocabularies ----
   Token types are GGUF's: 1 normal, 2 unknown, 3 control, 6 byte. */

/* The SentencePiece keys of a vocabulary of n pieces, with <s> = 1 and </s> = 2. */
static inline void tu_spm_keys(gw_writer *w, int n, const char *const *pieces, const float *scores,
                               const int32_t *types)
{
    gw_kv_str(w, "tokenizer.ggml.model", "llama");
    gw_kv_array_str(w, "tokenizer.ggml.tokens", (uint64_t)n, pieces);
    gw_kv_array(w, "tokenizer.ggml.scores", GW_F32V, (uint64_t)n, scores);
    gw_kv_array(w, "tokenizer.ggml.token_type", GW_I32, (uint64_t)n, types);
    gw_kv_u32(w, "tokenizer.ggml.bos_token_id", 1);
    gw_kv_u32(w, "tokenizer.ggml.eos_token_id", 2);
}

/* A vocabulary of <unk> <s> </s>, the 256 byte tokens <0x00>..<0xFF> (so that any text can be
   written), then the n_extra pieces of extra: normal tokens but for the last n_control, which are
   control tokens. Token i scores -i. Its first extra piece is token TU_SMALL_VOCAB_EXTRA. */
enum { TU_SMALL_VOCAB_EXTRA = 3 + 256, TU_SMALL_VOCAB_MAX_EXTRA = 32 };

static inline void tu_small_vocab(gw_writer *w, const char *const *extra, int n_extra, int n_control)
{
    const char *pieces[TU_SMALL_VOCAB_EXTRA + TU_SMALL_VOCAB_MAX_EXTRA];
    char byte_names[256][8];
    float scores[TU_SMALL_VOCAB_EXTRA + TU_SMALL_VOCAB_MAX_EXTRA];
    int32_t types[TU_SMALL_VOCAB_EXTRA + TU_SMALL_VOCAB_MAX_EXTRA];
    int i, n = 0;
    assert_true(n_extra <= TU_SMALL_VOCAB_MAX_EXTRA && n_control <= n_extra);
    pieces[n] = "<unk>"; types[n++] = 2;
    pieces[n] = "<s>"; types[n++] = 3;
    pieces[n] = "</s>"; types[n++] = 3;
    for (i = 0; i < 256; i++) {
        snprintf(byte_names[i], sizeof byte_names[i], "<0x%02X>", i);
        pieces[n] = byte_names[i]; types[n++] = 6;
    }
    for (i = 0; i < n_extra; i++) { pieces[n] = extra[i]; types[n++] = i >= n_extra - n_control ? 3 : 1; }
    for (i = 0; i < n; i++) scores[i] = -(float)i;
    tu_spm_keys(w, n, pieces, scores, types);
}

/* The vocabulary written into w (w freed), loaded from memory: the test fails, with the
   library's message, when it cannot be. The caller frees the vocabulary, then *g, then *bytes. */
static inline swa_vocab *tu_vocab_load(gw_writer *w, swa_gguf **g, uint8_t **bytes)
{
    size_t size = 0;
    swa_vocab *v = NULL;
    swa_error err;
    *bytes = gw_to_memory(w, &size);
    gw_free(w);
    assert_non_null(*bytes);
    if (swa_gguf_open_memory(*bytes, size, g, &err) != SWA_OK || swa_vocab_load(*g, &v, &err) != SWA_OK)
        fail_msg("%s", err.msg);
    return v;
}

/* ---- random models ---- */

/* Whether the model written into w loads (from memory): the loader's status and message; w is
   freed. */
static inline swa_status tu_load_status(gw_writer *w, swa_error *err)
{
    size_t size = 0;
    uint8_t *bytes = gw_to_memory(w, &size);
    swa_model *m = NULL;
    swa_status s;
    gw_free(w);
    assert_non_null(bytes);
    s = swa_model_load_memory(bytes, size, &m, err);
    swa_model_free(m);
    free(bytes);
    return s;
}

typedef struct tu_spec {
    int n_layer, n_embd, n_head, n_kv_head, n_ff, n_vocab, n_ctx, n_rot;   /* n_rot 0 = head_dim */
    float rope_base;
    int window;              /* llama.attention.sliding_window as one number; 0 = no key */
    const int *windows;      /* or one entry per layer (0 = full attention), when not NULL */
    int chunk;               /* > 0: a "llama4" file whose layers (at most 3, so all of them, with
                                RoPE) attend within chunks of this many positions, its other
                                features off (no QK norm, no experts): llama with a chunk mask */
    uint32_t type;           /* type of the matrices (GW_F32, GW_F16, GW_BF16, GW_Q8_0, GW_Q4_0, GW_Q4_K, GW_Q5_K, GW_Q6_K, GW_MXFP4) */
    int mixed;               /* attn_v and ffn_up in Q8_0 whatever type is, as files mix types */
    uint64_t seed;
    int tied;                /* no output.weight: the embedding is reused */
    const char *name;        /* general.name, when not NULL */
    void (*extra_keys)(gw_writer *w, const void *arg);   /* more metadata (a vocabulary...), or NULL */
    const void *extra_arg;
} tu_spec;

typedef struct tu_layer {
    float *attn_norm, *ffn_norm;          /* [d] */
    float *wq, *wk, *wv, *wo;             /* [out][in] */
    float *wg, *wu, *wd;
} tu_layer;

typedef struct tu_model {
    tu_spec s;
    int head_dim;
    float *embd, *output, *out_norm;      /* [V][d], [V][d], [d] */
    tu_layer *layers;
    uint8_t *gguf;                        /* the file, in memory */
    size_t gguf_size;
} tu_model;

static inline float tu_uniform(uint64_t *s, float a)   /* in [-a, a) */
{
    return a * (2.0f * (float)(tu_rng_next(s) >> 40) / (float)(1 << 24) - 1.0f);
}

static inline float tu_half(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v = e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* The values a reader of this encoded row gets back: ggml's layouts, decoded by hand. */
static inline void tu_decode_row(uint32_t type, const uint8_t *p, float *out, int n)
{
    int i, j;
    for (i = 0; i < n; i++) {
        uint16_t h;
        uint32_t b;
        switch (type) {
        case GW_F32: memcpy(&out[i], p + 4 * i, 4); break;
        case GW_F16: memcpy(&h, p + 2 * i, 2); out[i] = tu_half(h); break;
        case GW_BF16: memcpy(&h, p + 2 * i, 2); b = (uint32_t)h << 16; memcpy(&out[i], &b, 4); break;
        default: break;
        }
    }
    if (type == GW_Q4_K || type == GW_Q5_K || type == GW_Q6_K || type == GW_MXFP4)
        gw_dequant_row(type, p, out, n);   /* the writer's own decoder */
    if (type == GW_Q8_0)
        for (i = 0; i < n; i += 32, p += 34) {
            uint16_t h;
            memcpy(&h, p, 2);
            for (j = 0; j < 32; j++) out[i + j] = tu_half(h) * (float)(int8_t)p[2 + j];
        }
    if (type == GW_Q4_0)
        for (i = 0; i < n; i += 32, p += 18) {
            uint16_t h;
            memcpy(&h, p, 2);
            for (j = 0; j < 16; j++) {
                out[i + j] = tu_half(h) * (float)((p[2 + j] & 15) - 8);
                out[i + j + 16] = tu_half(h) * (float)((p[2 + j] >> 4) - 8);
            }
        }
}

/* A random [rows][cols] matrix, stored as `type` and replaced by what the file holds. */
static inline float *tu_matrix(gw_writer *w, uint64_t *rng, const char *name, uint32_t type, int rows, int cols,
                        float scale)
{
    float *m = (float *)malloc(sizeof(float) * (size_t)rows * (size_t)cols);
    size_t rb = gw_row_bytes(type, cols);
    uint8_t *row = (uint8_t *)malloc(rb);
    int64_t ne[2];
    int r, i;
    ne[0] = cols;
    ne[1] = rows;
    for (i = 0; i < rows * cols; i++) m[i] = tu_uniform(rng, scale);
    gw_tensor_f32(w, name, type, 2, ne, m);
    for (r = 0; r < rows; r++) {
        gw_convert_row(type, m + (size_t)r * cols, row, cols);
        tu_decode_row(type, row, m + (size_t)r * cols, cols);
    }
    free(row);
    return m;
}

static inline float *tu_norm(gw_writer *w, uint64_t *rng, const char *name, int n)
{
    float *v = (float *)malloc(sizeof(float) * (size_t)n);
    int64_t ne = n;
    int i;
    for (i = 0; i < n; i++) v[i] = 1.0f + tu_uniform(rng, 0.2f);
    gw_tensor_f32(w, name, GW_F32, 1, &ne, v);
    return v;
}

static inline void tu_write_hparams(gw_writer *w, const tu_spec *s)
{
    char key[96];
    const char *arch = s->chunk > 0 ? "llama4" : "llama";
#define TU_KEY(suffix) (snprintf(key, sizeof key, "%s." suffix, arch), key)
    gw_kv_str(w, "general.architecture", arch);
    if (s->name) gw_kv_str(w, "general.name", s->name);
    gw_kv_u32(w, TU_KEY("block_count"), (uint32_t)s->n_layer);
    gw_kv_u32(w, TU_KEY("embedding_length"), (uint32_t)s->n_embd);
    gw_kv_u32(w, TU_KEY("feed_forward_length"), (uint32_t)s->n_ff);
    gw_kv_u32(w, TU_KEY("attention.head_count"), (uint32_t)s->n_head);
    gw_kv_u32(w, TU_KEY("attention.head_count_kv"), (uint32_t)s->n_kv_head);
    gw_kv_u32(w, TU_KEY("context_length"), (uint32_t)s->n_ctx);
    gw_kv_f32(w, TU_KEY("attention.layer_norm_rms_epsilon"), 1e-5f);
    gw_kv_f32(w, TU_KEY("rope.freq_base"), s->rope_base);
    if (s->n_rot) gw_kv_u32(w, TU_KEY("rope.dimension_count"), (uint32_t)s->n_rot);
    if (s->chunk > 0) {
        gw_kv_u32(w, TU_KEY("attention.chunk_size"), (uint32_t)s->chunk);
        gw_kv_u32(w, TU_KEY("interleave_moe_layer_step"), 1);
        gw_kv_bool(w, TU_KEY("use_qk_norm"), 0);
    }
#undef TU_KEY
    if (s->windows) {
        int32_t ws[64];
        int l;
        for (l = 0; l < s->n_layer; l++) ws[l] = s->windows[l];
        gw_kv_array(w, "llama.attention.sliding_window", GW_I32, (uint64_t)s->n_layer, ws);
    } else if (s->window) {
        gw_kv_u32(w, "llama.attention.sliding_window", (uint32_t)s->window);
    }
    if (s->extra_keys) s->extra_keys(w, s->extra_arg);
}

static inline int tu_build(tu_model *m, const tu_spec *spec)
{
    gw_writer *w = gw_new(3);
    uint64_t rng = spec->seed ? spec->seed : 0x9e3779b97f4a7c15ull;
    int d, hd, l, qd, kvd;
    char name[64];
    memset(m, 0, sizeof *m);
    m->s = *spec;
    if (!m->s.rope_base) m->s.rope_base = 10000.0f;
    d = spec->n_embd;
    hd = m->head_dim = d / spec->n_head;
    qd = hd * spec->n_head;
    kvd = hd * spec->n_kv_head;
    tu_write_hparams(w, &m->s);
    m->embd = tu_matrix(w, &rng, "token_embd.weight", spec->type, spec->n_vocab, d, 1.0f);
    m->out_norm = tu_norm(w, &rng, "output_norm.weight", d);
    m->output = spec->tied ? m->embd
                           : tu_matrix(w, &rng, "output.weight", spec->type, spec->n_vocab, d, 1.0f / sqrtf((float)d));
    m->layers = (tu_layer *)calloc((size_t)spec->n_layer, sizeof(tu_layer));
    for (l = 0; l < spec->n_layer; l++) {
        tu_layer *L = &m->layers[l];
        float a = 1.0f / sqrtf((float)d);
#define TU_NAME(x) (snprintf(name, sizeof name, "blk.%d." x ".weight", l), name)
        L->attn_norm = tu_norm(w, &rng, TU_NAME("attn_norm"), d);
        L->wq = tu_matrix(w, &rng, TU_NAME("attn_q"), spec->type, qd, d, 2.0f * a);
        L->wk = tu_matrix(w, &rng, TU_NAME("attn_k"), spec->type, kvd, d, 2.0f * a);
        L->wv = tu_matrix(w, &rng, TU_NAME("attn_v"), spec->mixed ? GW_Q8_0 : spec->type, kvd, d, a);
        L->wo = tu_matrix(w, &rng, TU_NAME("attn_output"), spec->type, d, qd, a);
        L->ffn_norm = tu_norm(w, &rng, TU_NAME("ffn_norm"), d);
        L->wg = tu_matrix(w, &rng, TU_NAME("ffn_gate"), spec->type, spec->n_ff, d, a);
        L->wu = tu_matrix(w, &rng, TU_NAME("ffn_up"), spec->mixed ? GW_Q8_0 : spec->type, spec->n_ff, d, a);
        L->wd = tu_matrix(w, &rng, TU_NAME("ffn_down"), spec->type, d, spec->n_ff, 1.0f / sqrtf((float)spec->n_ff));
#undef TU_NAME
    }
    m->gguf = gw_to_memory(w, &m->gguf_size);
    gw_free(w);
    return m->gguf != NULL;
}

static inline void tu_free(tu_model *m)
{
    int l;
    for (l = 0; l < m->s.n_layer; l++) {
        tu_layer *L = &m->layers[l];
        free(L->attn_norm); free(L->ffn_norm); free(L->wq); free(L->wk); free(L->wv);
        free(L->wo); free(L->wg); free(L->wu); free(L->wd);
    }
    free(m->layers);
    if (m->output != m->embd) free(m->output);
    free(m->embd);
    free(m->out_norm);
    free(m->gguf);
}

/* spec's model built into *m (tu_free it) and loaded from that memory: the test fails, with
   the library's message, when either cannot be done. */
static inline swa_model *tu_build_load(tu_model *m, const tu_spec *spec)
{
    swa_model *model = NULL;
    swa_error err;
    assert_true(tu_build(m, spec));
    if (swa_model_load_memory(m->gguf, m->gguf_size, &model, &err) != SWA_OK) fail_msg("%s", err.msg);
    return model;
}

/* A context on m with cfg, written (swa_ctx_config){.n_batch = 4, ...}: the fields left out are 0,
   the library's defaults. The test fails with the library's message when it cannot be made. */
static inline swa_ctx *tu_ctx(const swa_model *m, swa_ctx_config cfg)
{
    swa_ctx *c = NULL;
    swa_error err;
    if (swa_ctx_create(m, &cfg, &c, &err) != SWA_OK) fail_msg("%s", err.msg);
    return c;
}

/* ---- the reference: whole sequence, double precision, explicit mask ---- */

static inline void tu_matvec(const float *w, const double *x, double *y, int rows, int cols)
{
    int r, c;
    for (r = 0; r < rows; r++) {
        double s = 0.0;
        for (c = 0; c < cols; c++) s += (double)w[(size_t)r * cols + c] * x[c];
        y[r] = s;
    }
}

static inline void tu_rmsnorm(const double *x, const float *w, double *y, int n)
{
    double ss = 0.0;
    int i;
    for (i = 0; i < n; i++) ss += x[i] * x[i];
    ss = 1.0 / sqrt(ss / n + 1e-5);
    for (i = 0; i < n; i++) y[i] = x[i] * ss * w[i];
}

static inline void tu_rope(double *v, int n_heads, int hd, int n_rot, double base, long long pos)
{
    int h, i;
    for (h = 0; h < n_heads; h++)
        for (i = 0; i < n_rot; i += 2) {
            double th = (double)pos * pow(base, -(double)i / n_rot), *p = v + h * hd + i;
            double a = p[0], b = p[1];
            p[0] = a * cos(th) - b * sin(th);
            p[1] = a * sin(th) + b * cos(th);
        }
}

/* The key at j is visible to the query at i when j <= i and i - j < W (W = 0: no limit); with
   W < 0, a chunk of -W positions: when j <= i in the same chunk, floor(j / -W) == floor(i / -W). */
static inline int tu_visible(long long i, long long j, int W)
{
    if (W < 0) return j <= i && j / -W == i / -W;
    return j <= i && (W == 0 || i - j < W);
}

/* Logits [n][V] for tokens at positions 0..n-1; windows[l] per layer (0 = full, < 0 a chunk). */
static inline void tu_reference_at(const tu_model *m, const int32_t *tok, int n, const int *windows, long long pos0,
                                   double *logits);

static inline void tu_reference(const tu_model *m, const int32_t *tok, int n, const int *windows, double *logits)
{
    tu_reference_at(m, tok, n, windows, 0, logits);
}

/* The same with the first token at position pos0 (RoPE angles in double: pos * base^(-i/d)). */
static inline void tu_reference_at(const tu_model *m, const int32_t *tok, int n, const int *windows, long long pos0,
                                   double *logits)
{
    const tu_spec *s = &m->s;
    int d = s->n_embd, hd = m->head_dim, qd = hd * s->n_head, kvd = hd * s->n_kv_head, ff = s->n_ff;
    int n_rot = s->n_rot ? s->n_rot : hd, group = s->n_head / s->n_kv_head, l, i, j, h, k;
    double *x = (double *)calloc((size_t)n * d, sizeof(double)), *xb = (double *)calloc((size_t)d, sizeof(double));
    double *q = (double *)calloc((size_t)n * qd, sizeof(double)), *K = (double *)calloc((size_t)n * kvd, sizeof(double));
    double *Vv = (double *)calloc((size_t)n * kvd, sizeof(double)), *att = (double *)calloc((size_t)qd, sizeof(double));
    double *o = (double *)calloc((size_t)(d > ff ? d : ff), sizeof(double)), *g = (double *)calloc((size_t)ff, sizeof(double));
    double *u = (double *)calloc((size_t)ff, sizeof(double)), *sc = (double *)calloc((size_t)n, sizeof(double));
    for (i = 0; i < n; i++)
        for (k = 0; k < d; k++) x[(size_t)i * d + k] = m->embd[(size_t)tok[i] * d + k];
    for (l = 0; l < s->n_layer; l++) {
        const tu_layer *L = &m->layers[l];
        for (i = 0; i < n; i++) {
            tu_rmsnorm(x + (size_t)i * d, L->attn_norm, xb, d);
            tu_matvec(L->wq, xb, q + (size_t)i * qd, qd, d);
            tu_matvec(L->wk, xb, K + (size_t)i * kvd, kvd, d);
            tu_matvec(L->wv, xb, Vv + (size_t)i * kvd, kvd, d);
            tu_rope(q + (size_t)i * qd, s->n_head, hd, n_rot, s->rope_base, pos0 + i);
            tu_rope(K + (size_t)i * kvd, s->n_kv_head, hd, n_rot, s->rope_base, pos0 + i);
        }
        for (i = 0; i < n; i++) {
            for (h = 0; h < s->n_head; h++) {
                const double *qi = q + (size_t)i * qd + h * hd;
                int kh = h / group;
                double mx = -INFINITY, sum = 0.0;
                for (j = 0; j < n; j++) {
                    double dot = 0.0;
                    for (k = 0; k < hd; k++) dot += qi[k] * K[(size_t)j * kvd + kh * hd + k];
                    sc[j] = tu_visible(i, j, windows[l]) ? dot / sqrt((double)hd) : -INFINITY;
                    if (sc[j] > mx) mx = sc[j];
                }
                for (j = 0; j < n; j++) sum += (sc[j] = exp(sc[j] - mx));
                for (k = 0; k < hd; k++) {
                    double a = 0.0;
                    for (j = 0; j < n; j++) a += sc[j] / sum * Vv[(size_t)j * kvd + kh * hd + k];
                    att[h * hd + k] = a;
                }
            }
            tu_matvec(L->wo, att, o, d, qd);
            for (k = 0; k < d; k++) x[(size_t)i * d + k] += o[k];
        }
        for (i = 0; i < n; i++) {
            tu_rmsnorm(x + (size_t)i * d, L->ffn_norm, xb, d);
            tu_matvec(L->wg, xb, g, ff, d);
            tu_matvec(L->wu, xb, u, ff, d);
            for (k = 0; k < ff; k++) g[k] = g[k] / (1.0 + exp(-g[k])) * u[k];
            tu_matvec(L->wd, g, o, d, ff);
            for (k = 0; k < d; k++) x[(size_t)i * d + k] += o[k];
        }
    }
    for (i = 0; i < n; i++) {
        tu_rmsnorm(x + (size_t)i * d, m->out_norm, xb, d);
        tu_matvec(m->output, xb, logits + (size_t)i * s->n_vocab, s->n_vocab, d);
    }
    free(x); free(xb); free(q); free(K); free(Vv); free(att); free(o); free(g); free(u); free(sc);
}

/* Largest |a - b| over n values, divided by the largest |b|. */
static inline double tu_rel_error(const float *a, const double *b, size_t n)
{
    double err = 0.0, scale = 1e-30;
    size_t i;
    for (i = 0; i < n; i++) {
        if (fabs(a[i] - b[i]) > err) err = fabs(a[i] - b[i]);
        if (fabs(b[i]) > scale) scale = fabs(b[i]);
    }
    return err / scale;
}

static inline void tu_random_tokens(int32_t *tok, int n, int vocab, uint64_t seed)
{
    int i;
    for (i = 0; i < n; i++) tok[i] = (int32_t)(tu_rng_next(&seed) % (uint64_t)vocab);
}

#endif /* TESTUTIL_H */
