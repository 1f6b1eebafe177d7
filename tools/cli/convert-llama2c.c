/* swa-convert-llama2c: turn a llama2.c checkpoint and its tokenizer into a GGUF file that swa.h
   (and llama.cpp) can load.

   swa-convert-llama2c MODEL.bin TOKENIZER.bin OUT.gguf [--type f32|f16|q8_0] [--window W]

   MODEL.bin is llama2.c's legacy (version 0) fp32 checkpoint: seven little-endian int32
   (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len), then the weights in
   the order of run.c's memory_map_weights. A negative vocab_size means the classifier is not
   shared with the token embedding and follows at the very end. TOKENIZER.bin is llama2.c's
   tokenizer.bin: an int32 max_token_length, then per token a float32 score, an int32 length
   and that many bytes.

   --type sets the type of the 2-D matrices (default f32); the norm vectors stay F32. Q8_0
   packs rows in blocks of 32, so a matrix whose rows are not a multiple of 32 long is written
   as F16 instead, with a note on stderr. --window W adds llama.attention.sliding_window = W.

   Every size in the header is checked, and the file must be exactly as long as the header
   says; any problem is named on stderr and the exit status is 1. A freq_cis table that does
   not match RoPE base 10000 only gets a warning. The whole output is built in memory (the GGUF
   writer works that way, and copies it once more to write it); the input is read one tensor
   at a time. */
#define _POSIX_C_SOURCE 200809L    /* safe_write.h: the output replaced only when complete */
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"
#include "swa.h"                   /* the version macros only */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "swa-convert-llama2c"
#include "tools/common/tool.h"
#define HEADER_BYTES 28    /* seven int32 */

/* ==== errors and checked arithmetic ==== */

/* The header's numbers are int32, but products of three of them overflow 64 bits easily
   enough for a hostile file, so every size goes through these. */
static uint64_t mul_checked(uint64_t a, uint64_t b, const char *what)
{
    if (a && b > UINT64_MAX / a) fail("%s: its size overflows 64 bits", what);
    return a * b;
}

static uint64_t add_checked(uint64_t a, uint64_t b, const char *what)
{
    if (b > UINT64_MAX - a) fail("%s: its size overflows 64 bits", what);
    return a + b;
}

static void *xmalloc(uint64_t n, const char *what)
{
    void *p = n <= SIZE_MAX ? malloc(n ? (size_t)n : 1) : NULL;
    if (!p) fail("out of memory allocating %llu bytes for %s", (unsigned long long)n, what);
    return p;
}

/* Both input formats are little-endian and we fread them straight into int32/float, and the
   GGUF writer stores host order too, so a big-endian host would produce garbage. */
static void require_little_endian(void)
{
    const uint32_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    if (first != 1) fail("this tool runs on little-endian hosts only");
}

static uint64_t file_size(FILE *f, const char *path)
{
    long n;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        fail("%s: cannot find the file size", path);
    return (uint64_t)n;
}

/* ==== the checkpoint ==== */

typedef struct config {
    int64_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, n_vocab, seq_len;
    int64_t head_size, kv_dim;
    int shared;               /* the classifier is the token embedding (vocab_size > 0) */
} config;

/* Offsets, in floats from the end of the header, of each block of the checkpoint, in file
   order. Per-layer blocks hold n_layers tensors of `per_layer` floats back to back. */
enum { S_EMBD, S_RMS_ATT, S_WQ, S_WK, S_WV, S_WO, S_RMS_FFN, S_W1, S_W2, S_W3, S_RMS_FINAL,
       S_FREQ, S_WCLS, S_END, S_COUNT };

typedef struct layout {
    uint64_t start[S_COUNT];
    uint64_t per_layer[S_COUNT];   /* floats per layer, or the whole block for global ones */
} layout;

/* llama2.c's export.py writes versions 1 and 2 (int8) with the magic "ak42" first; read as
   version 0 they would only fail later with a nonsensical dim, so name them. */
static void reject_new_versions(const uint8_t *h, const char *path)
{
    int32_t version;
    if (memcmp(h, "24ka", 4)) return;   /* the uint32 0x616b3432 ("ak42"), little-endian */
    memcpy(&version, h + 4, 4);
    fail("%s: a llama2.c version-%d checkpoint (magic \"ak42\"); only the legacy version-0 "
         "fp32 format is read: export with `export.py --version 0`", path, (int)version);
}

static void parse_header(const uint8_t *h, config *c, const char *path)
{
    static const char *const names[7] = {"dim", "hidden_dim", "n_layers", "n_heads",
                                         "n_kv_heads", "vocab_size", "seq_len"};
    int64_t v[7];
    int i;
    for (i = 0; i < 7; i++) {
        int32_t x;
        memcpy(&x, h + 4 * i, 4);
        v[i] = x;
        /* vocab_size carries the shared flag in its sign; every other field must be > 0. */
        if (i == 5 ? x == 0 : x <= 0)
            fail("%s: header field %s is %d, want a positive number (is this a llama2.c "
                 "version-0 checkpoint?)", path, names[i], (int)x);
    }
    c->dim = v[0];
    c->hidden_dim = v[1];
    c->n_layers = v[2];
    c->n_heads = v[3];
    c->n_kv_heads = v[4];
    c->shared = v[5] > 0;
    c->n_vocab = v[5] > 0 ? v[5] : -v[5];    /* int64, so -INT32_MIN is fine */
    c->seq_len = v[6];
    if (c->dim % c->n_heads)
        fail("%s: dim %lld is not a multiple of n_heads %lld", path, (long long)c->dim, (long long)c->n_heads);
    if (c->n_heads % c->n_kv_heads)
        fail("%s: n_heads %lld is not a multiple of n_kv_heads %lld", path, (long long)c->n_heads,
             (long long)c->n_kv_heads);
    c->head_size = c->dim / c->n_heads;
    if (c->head_size % 2)
        fail("%s: head size %lld is odd; RoPE rotates pairs of dimensions", path, (long long)c->head_size);
    c->kv_dim = c->head_size * c->n_kv_heads;
}

/* Where every block sits, and how many floats the file must hold in all. The freq_cis tables
   (seq_len x head_size/2 floats, real then imaginary) are not converted: the library computes
   RoPE itself, as run.c has done since it stopped reading them. */
static uint64_t plan_layout(const config *c, layout *lay)
{
    const uint64_t L = (uint64_t)c->n_layers, d = (uint64_t)c->dim, hd = (uint64_t)c->hidden_dim;
    const uint64_t kv = (uint64_t)c->kv_dim, V = (uint64_t)c->n_vocab;
    uint64_t pos = 0;
    int s;
    lay->per_layer[S_EMBD] = mul_checked(V, d, "token_embedding");
    lay->per_layer[S_RMS_ATT] = d;
    lay->per_layer[S_WQ] = mul_checked(d, d, "wq");
    lay->per_layer[S_WK] = mul_checked(kv, d, "wk");
    lay->per_layer[S_WV] = lay->per_layer[S_WK];
    lay->per_layer[S_WO] = lay->per_layer[S_WQ];
    lay->per_layer[S_RMS_FFN] = d;
    lay->per_layer[S_W1] = mul_checked(hd, d, "w1");
    lay->per_layer[S_W2] = lay->per_layer[S_W1];
    lay->per_layer[S_W3] = lay->per_layer[S_W1];
    lay->per_layer[S_RMS_FINAL] = d;
    lay->per_layer[S_FREQ] = mul_checked((uint64_t)c->seq_len, (uint64_t)c->head_size, "freq_cis");
    lay->per_layer[S_WCLS] = c->shared ? 0 : lay->per_layer[S_EMBD];
    lay->per_layer[S_END] = 0;
    for (s = 0; s < S_COUNT; s++) {
        int layered = s >= S_RMS_ATT && s <= S_W3;
        lay->start[s] = pos;
        pos = add_checked(pos, layered ? mul_checked(L, lay->per_layer[s], "the header's n_layers x matrix")
                                       : lay->per_layer[s], "the header's checkpoint");
    }
    return pos;
}

/* The exact-size check catches truncated files, trailing data and a vocab_size whose sign
   does not match the presence of wcls; the last two get their own hint. */
static void check_size(const config *c, uint64_t n_floats, uint64_t actual, const char *path)
{
    uint64_t want = add_checked(HEADER_BYTES, mul_checked(n_floats, 4, "the header's checkpoint"), "the header's checkpoint");
    uint64_t cls = mul_checked(mul_checked((uint64_t)c->n_vocab, (uint64_t)c->dim, "wcls"), 4, "wcls");
    if (actual == want) return;
    fprintf(stderr, PROG ": %s: the header (dim %lld, hidden_dim %lld, n_layers %lld, n_heads %lld, "
            "n_kv_heads %lld, vocab_size %s%lld, seq_len %lld) implies %llu bytes, the file has %llu\n",
            path, (long long)c->dim, (long long)c->hidden_dim, (long long)c->n_layers,
            (long long)c->n_heads, (long long)c->n_kv_heads, c->shared ? "" : "-",
            (long long)c->n_vocab, (long long)c->seq_len, (unsigned long long)want,
            (unsigned long long)actual);
    if (c->shared && actual == want + cls)
        fail("%s: that is one extra classifier: vocab_size should be negative (unshared wcls)", path);
    if (!c->shared && actual + cls == want)
        fail("%s: that is one classifier short: vocab_size should be positive (shared wcls)", path);
    fail("%s: truncated, has extra data, or is not a llama2.c version-0 checkpoint", path);
}

/* Reads n floats starting `offset` floats after the header into buf. */
static void read_floats(FILE *f, const char *path, uint64_t offset, uint64_t n, float *buf)
{
    uint64_t byte = HEADER_BYTES + offset * 4;     /* < the checked file size */
    if (byte > (uint64_t)LONG_MAX) fail("%s: offset %llu is beyond fseek's range", path, (unsigned long long)byte);
    if (fseek(f, (long)byte, SEEK_SET) != 0 || fread(buf, 4, (size_t)n, f) != (size_t)n)
        fail("%s: read error at byte %llu", path, (unsigned long long)byte);
}

/* The file still carries the cos/sin table its exporter computed. We write base 10000, as
   run.c hard-codes, so say so if the table disagrees: the model was then trained with another
   base and neither run.c nor this file will run it right. Only the first positions are
   compared, where the exporter's float32 angles are still accurate to ~1e-5. */
static void check_rope_table(FILE *f, const char *path, const config *c, const layout *lay)
{
    const int64_t half = c->head_size / 2, n_pos = c->seq_len < 64 ? c->seq_len : 64;
    float *t = (float *)xmalloc((uint64_t)(n_pos * half) * 4, "the freq_cis table");
    double worst = 0.0;
    int64_t p, i;
    int k;
    for (k = 0; k < 2; k++) {    /* real parts (cos), then imaginary parts (sin) */
        read_floats(f, path, lay->start[S_FREQ] + (uint64_t)(k * c->seq_len * half), (uint64_t)(n_pos * half), t);
        for (p = 0; p < n_pos; p++)
            for (i = 0; i < half; i++) {
                double angle = (double)p * pow(10000.0, -2.0 * (double)i / (double)c->head_size);
                double err = fabs(t[p * half + i] - (k ? sin(angle) : cos(angle)));
                if (!(err <= worst)) worst = err;    /* NaN counts as the worst */
            }
    }
    free(t);
    if (!(worst < 1e-4))
        fprintf(stderr, PROG ": warning: %s: its freq_cis table does not match RoPE base 10000 (error %g); "
                "the GGUF says 10000, as run.c assumes\n", path, worst);
}

/* ==== the tokenizer ==== */

typedef struct vocab {
    char **pieces;      /* [n] NUL-terminated, in SentencePiece form */
    float *scores;      /* [n] */
    int32_t *types;     /* [n] llama.cpp token types */
} vocab;

enum { TOK_NORMAL = 1, TOK_UNKNOWN = 2, TOK_CONTROL = 3, TOK_BYTE = 6 };

static int is_hex(int ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'F') || (ch >= 'a' && ch <= 'f');
}

/* SentencePiece's byte-fallback pieces are spelled "<0xXX>". */
static int is_byte_piece(const char *p)
{
    return strlen(p) == 6 && !strncmp(p, "<0x", 3) && is_hex(p[3]) && is_hex(p[4]) && p[5] == '>';
}

/* llama2.c's tokenizer.py stores SentencePiece pieces with U+2581 ("▁", the word-boundary
   mark) replaced by a plain space, because run.c prints pieces as they are. GGUF vocabularies
   keep the SentencePiece spelling, which the llama tokenizer relies on, so put it back. */
static char *to_sentencepiece(const uint8_t *bytes, size_t len)
{
    char *out = (char *)xmalloc((uint64_t)len * 3 + 1, "a token");
    size_t i, o = 0;
    for (i = 0; i < len; i++) {
        if (bytes[i] == ' ') {
            memcpy(out + o, "\xe2\x96\x81", 3);
            o += 3;
        } else {
            out[o++] = (char)bytes[i];
        }
    }
    out[o] = '\0';
    return out;
}

/* Ids 0-2 are SentencePiece's <unk>, <s> and </s> in every llama2.c vocabulary; tokenizer.py
   stores the last two as "\n<s>\n" and "\n</s>\n" for printing, so their names are restored. */
static void set_token(vocab *v, int64_t id, const uint8_t *bytes, size_t len, float score)
{
    static const char *const special[3] = {"<unk>", "<s>", "</s>"};
    v->scores[id] = score;
    if (id < 3) {
        v->pieces[id] = to_sentencepiece((const uint8_t *)special[id], strlen(special[id]));
        v->types[id] = id == 0 ? TOK_UNKNOWN : TOK_CONTROL;
        return;
    }
    v->pieces[id] = to_sentencepiece(bytes, len);
    v->types[id] = is_byte_piece(v->pieces[id]) ? TOK_BYTE : TOK_NORMAL;
}

/* The tokenizer file has no count of its own: it must hold exactly the model's n_vocab
   records, each no longer than its max_token_length, and nothing after them. */
static void read_vocab(const char *path, int64_t n_vocab, vocab *v)
{
    FILE *f = fopen(path, "rb");
    uint64_t size, at = 4;
    uint8_t *buf;
    int32_t max_len;
    int64_t id;
    if (!f) fail("%s: cannot open: %s", path, strerror(errno));
    size = file_size(f, path);
    buf = (uint8_t *)xmalloc(size, "the tokenizer");
    if (fread(buf, 1, (size_t)size, f) != (size_t)size) fail("%s: read error", path);
    fclose(f);
    if (size < 4) fail("%s: %llu bytes, too short for a llama2.c tokenizer", path, (unsigned long long)size);
    memcpy(&max_len, buf, 4);
    if (max_len <= 0) fail("%s: max_token_length is %d, want a positive number", path, (int)max_len);
    /* Also bounds the allocations below by the file size. */
    if ((size - 4) / 8 < (uint64_t)n_vocab)
        fail("%s: %llu bytes hold at most %llu tokens, the model has vocab_size %lld", path,
             (unsigned long long)size, (unsigned long long)((size - 4) / 8), (long long)n_vocab);
    if (n_vocab < 3)
        fail("%s: vocab_size %lld, but ids 0-2 must be <unk>, <s> and </s>", path, (long long)n_vocab);
    v->pieces = (char **)xmalloc((uint64_t)n_vocab * sizeof *v->pieces, "the vocabulary");
    v->scores = (float *)xmalloc((uint64_t)n_vocab * sizeof *v->scores, "the vocabulary");
    v->types = (int32_t *)xmalloc((uint64_t)n_vocab * sizeof *v->types, "the vocabulary");
    for (id = 0; id < n_vocab; id++) {
        float score;
        int32_t len;
        if (size - at < 8)
            fail("%s: ends after %lld tokens, the model has vocab_size %lld", path, (long long)id, (long long)n_vocab);
        memcpy(&score, buf + at, 4);
        memcpy(&len, buf + at + 4, 4);
        at += 8;
        if (len < 0 || len > max_len)
            fail("%s: token %lld has length %d, want 0..%d (max_token_length)", path, (long long)id, (int)len, (int)max_len);
        if ((uint64_t)len > size - at)
            fail("%s: token %lld (%d bytes) runs past the end of the file", path, (long long)id, (int)len);
        if (memchr(buf + at, 0, (size_t)len))
            fail("%s: token %lld contains a NUL byte, which GGUF strings here cannot hold", path, (long long)id);
        if (!isfinite(score)) fail("%s: token %lld has a non-finite score", path, (long long)id);
        set_token(v, id, buf + at, (size_t)len, score);
        at += (uint64_t)len;
    }
    if (at != size)
        fail("%s: %llu more byte%s after token %lld: the tokenizer holds more than the model's "
             "vocab_size %lld tokens", path, (unsigned long long)(size - at), size - at == 1 ? "" : "s",
             (long long)(n_vocab - 1), (long long)n_vocab);
    free(buf);
}

/* ==== writing the GGUF ==== */

typedef struct options {
    const char *model, *tokenizer, *out;
    uint32_t type;       /* GW_F32, GW_F16 or GW_Q8_0, for the matrices */
    uint32_t window;     /* 0 = none */
} options;

static void check_gw(gw_writer *w, const char *what)
{
    if (gw_error(w)[0]) fail("writing %s: %s", what, gw_error(w));
}

/* A weight matrix of `rows` rows of `row_len`: llama2.c stores every matrix as out x in,
   row-major, which is ggml's layout with ne = {in, out}, so rows are copied as they are. */
static void put_matrix(gw_writer *w, const options *o, const char *name, int64_t row_len, int64_t rows,
                       const float *data)
{
    const int64_t ne[2] = {row_len, rows};
    uint32_t type = o->type;
    if (!gw_row_bytes(type, row_len)) {
        fprintf(stderr, PROG ": note: %s has rows of %lld, not a multiple of 32: written as F16, not Q8_0\n",
                name, (long long)row_len);
        type = GW_F16;
    }
    gw_tensor_f32(w, name, type, 2, ne, data);
    check_gw(w, name);
}

static void put_vector(gw_writer *w, const char *name, int64_t n, const float *data)
{
    gw_tensor_f32(w, name, GW_F32, 1, &n, data);
    check_gw(w, name);
}

/* "dir/stories260K.bin" -> "stories260K" */
static void model_name(const char *path, char *out, size_t cap)
{
    const char *base = path, *p, *dot;
    size_t n;
    for (p = path; *p; p++)
        if (*p == '/' || *p == '\\') base = p + 1;
    dot = strrchr(base, '.');
    n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    if (n >= cap) n = cap - 1;
    memcpy(out, base, n);
    out[n] = '\0';
}

static void put_hparams(gw_writer *w, const options *o, const config *c)
{
    char name[256];
    model_name(o->model, name, sizeof name);
    gw_kv_str(w, "general.architecture", "llama");
    gw_kv_str(w, "general.name", name);
    gw_kv_u32(w, "llama.context_length", (uint32_t)c->seq_len);
    gw_kv_u32(w, "llama.embedding_length", (uint32_t)c->dim);
    gw_kv_u32(w, "llama.block_count", (uint32_t)c->n_layers);
    gw_kv_u32(w, "llama.feed_forward_length", (uint32_t)c->hidden_dim);
    gw_kv_u32(w, "llama.attention.head_count", (uint32_t)c->n_heads);
    gw_kv_u32(w, "llama.attention.head_count_kv", (uint32_t)c->n_kv_heads);
    gw_kv_u32(w, "llama.rope.dimension_count", (uint32_t)c->head_size);
    /* run.c hard-codes both: theta 10000 in its RoPE loop, 1e-5 in rmsnorm. */
    gw_kv_f32(w, "llama.rope.freq_base", 10000.0f);
    gw_kv_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    gw_kv_u32(w, "llama.vocab_size", (uint32_t)c->n_vocab);
    if (o->window) gw_kv_u32(w, "llama.attention.sliding_window", o->window);
    check_gw(w, "the hyperparameters");
}

static void put_vocab(gw_writer *w, const vocab *v, int64_t n)
{
    gw_kv_str(w, "tokenizer.ggml.model", "llama");
    gw_kv_array_str(w, "tokenizer.ggml.tokens", (uint64_t)n, (const char *const *)v->pieces);
    gw_kv_array(w, "tokenizer.ggml.scores", GW_F32V, (uint64_t)n, v->scores);
    gw_kv_array(w, "tokenizer.ggml.token_type", GW_I32, (uint64_t)n, v->types);
    gw_kv_u32(w, "tokenizer.ggml.bos_token_id", 1);
    gw_kv_u32(w, "tokenizer.ggml.eos_token_id", 2);
    gw_kv_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    /* run.c starts every prompt with BOS and a leading space (SentencePiece's dummy prefix). */
    gw_kv_bool(w, "tokenizer.ggml.add_bos_token", 1);
    gw_kv_bool(w, "tokenizer.ggml.add_space_prefix", 1);
    check_gw(w, "the vocabulary");
}

/* RoPE needs no weight permutation. run.c's forward pass rotates each head's adjacent pairs
   (q[i], q[i+1]), i even, by the angle pos * 10000^(-(i % head_size) / head_size), and so do
   the freq_cis tables its exporter stored. That is exactly the GGUF "llama" layout (ggml's
   normal RoPE mode), so wq and wk are copied as stored and the GGUF computes what run.c does.
   (llama.cpp's Hugging Face converter does permute them, because HF's rotary embedding pairs
   dimension j with j + head_size/2.) Checked: for stories260K every tensor we write is
   byte-identical to the one llama.cpp's own llama2.c converter wrote. */
static void put_weights(gw_writer *w, const options *o, const config *c, const layout *lay, FILE *f)
{
    const int64_t d = c->dim, hd = c->hidden_dim, kv = c->kv_dim, V = c->n_vocab;
    static const struct { int sec; const char *name; } order[9] = {
        {S_RMS_ATT, "attn_norm"}, {S_WQ, "attn_q"}, {S_WK, "attn_k"}, {S_WV, "attn_v"},
        {S_WO, "attn_output"}, {S_RMS_FFN, "ffn_norm"}, {S_W1, "ffn_gate"}, {S_W2, "ffn_down"},
        {S_W3, "ffn_up"}};
    /* {row length, rows} of each layer's tensors: wq/wo dim x dim, wk/wv kv_dim x dim,
       w1/w3 hidden x dim, w2 dim x hidden; 0 rows marks a norm vector. */
    const int64_t shape[S_COUNT][2] = {
        [S_RMS_ATT] = {d, 0}, [S_WQ] = {d, d}, [S_WK] = {d, kv}, [S_WV] = {d, kv},
        [S_WO] = {d, d}, [S_RMS_FFN] = {d, 0}, [S_W1] = {d, hd}, [S_W2] = {hd, d}, [S_W3] = {d, hd}};
    uint64_t largest = 0;
    float *buf;
    int64_t l;
    int s;
    char name[64];
    for (s = 0; s < S_COUNT; s++)
        if (s != S_FREQ && lay->per_layer[s] > largest) largest = lay->per_layer[s];
    buf = (float *)xmalloc(mul_checked(largest, 4, "a tensor"), "a tensor");

    read_floats(f, o->model, lay->start[S_EMBD], lay->per_layer[S_EMBD], buf);
    put_matrix(w, o, "token_embd.weight", d, V, buf);
    read_floats(f, o->model, lay->start[S_RMS_FINAL], (uint64_t)d, buf);
    put_vector(w, "output_norm.weight", d, buf);
    /* With a shared classifier we write no output.weight: loaders then use token_embd. */
    if (!c->shared) {
        read_floats(f, o->model, lay->start[S_WCLS], lay->per_layer[S_WCLS], buf);
        put_matrix(w, o, "output.weight", d, V, buf);
    }
    for (l = 0; l < c->n_layers; l++) {
        int k;
        for (k = 0; k < 9; k++) {
            int sec = order[k].sec;
            read_floats(f, o->model, lay->start[sec] + (uint64_t)l * lay->per_layer[sec], lay->per_layer[sec], buf);
            snprintf(name, sizeof name, "blk.%lld.%s.weight", (long long)l, order[k].name);
            if (shape[sec][1]) put_matrix(w, o, name, shape[sec][0], shape[sec][1], buf);
            else put_vector(w, name, shape[sec][0], buf);
        }
    }
    free(buf);
}

/* ==== command line ==== */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " [-m] MODEL.bin TOKENIZER.bin OUT.gguf [--type f32|f16|q8_0] [--window W]\n"
            "  MODEL.bin      llama2.c legacy fp32 checkpoint (negative vocab_size = unshared classifier)\n"
            "  TOKENIZER.bin  llama2.c tokenizer.bin with the same vocabulary size\n"
            "  --type T       type of the weight matrices (default f32); Q8_0 falls back to F16 for\n"
            "                 matrices whose rows are not a multiple of 32\n"
            "  --window W     write llama.attention.sliding_window = W (W >= 1)\n");
}

static void parse_args(int argc, char **argv, options *o)
{
    const char *pos[3], *model = NULL;
    int i, n_pos = 0;
    memset(o, 0, sizeof *o);
    o->type = GW_F32;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
        if (!strcmp(a, "--version")) { printf("%s %d.%d.%d\n", "swa-convert-llama2c", SWA_VERSION_MAJOR, SWA_VERSION_MINOR, SWA_VERSION_PATCH); exit(0); }
        if (!strcmp(a, "-m")) {            /* the model may also be given as -m MODEL.bin */
            if (i + 1 >= argc) usage_fail("-m needs a value");
            if (model) usage_fail("one model, please (at -m %s)", argv[i + 1]);
            model = argv[++i];
            continue;
        }
        if (!strcmp(a, "--type") || !strcmp(a, "--window")) {
            const char *val;
            if (i + 1 >= argc) usage_fail("%s needs a value", a);
            val = argv[++i];
            if (!strcmp(a, "--type")) {
                if (!strcmp(val, "f32")) o->type = GW_F32;
                else if (!strcmp(val, "f16")) o->type = GW_F16;
                else if (!strcmp(val, "q8_0")) o->type = GW_Q8_0;
                else usage_fail("--type wants f32, f16 or q8_0, got \"%s\"", val);
            } else {
                char *end;
                long v;
                errno = 0;
                v = strtol(val, &end, 10);
                if (errno || end == val || *end || v < 1 || v > INT32_MAX)
                    usage_fail("--window wants a number in 1..%ld, got \"%s\"", (long)INT32_MAX, val);
                o->window = (uint32_t)v;
            }
        } else if (a[0] == '-' && a[1]) {
            usage(stderr);
            usage_fail("unknown option %s", a);
        } else {
            if (n_pos == 3) { usage(stderr); usage_fail("too many arguments (at \"%s\")", a); }
            pos[n_pos++] = a;
        }
    }
    if (model) {
        if (n_pos == 3) { usage(stderr); usage_fail("too many arguments (at \"%s\")", pos[2]); }
        memmove(pos + 1, pos, (size_t)n_pos * sizeof *pos);
        pos[0] = model;
        n_pos++;
    }
    if (n_pos != 3) { usage(stderr); usage_fail("want MODEL.bin TOKENIZER.bin OUT.gguf"); }
    o->model = pos[0];
    o->tokenizer = pos[1];
    o->out = pos[2];
}

int main(int argc, char **argv)
{
    options o;
    config c;
    layout lay;
    vocab v;
    uint8_t header[HEADER_BYTES];
    gw_writer *w;
    FILE *f;
    uint64_t size;
    int64_t i;
    const char *inputs[2];

    require_little_endian();
    parse_args(argc, argv, &o);
    inputs[0] = o.model;
    inputs[1] = o.tokenizer;
    if (!(f = fopen(o.model, "rb"))) fail("%s: cannot open: %s", o.model, strerror(errno));
    size = file_size(f, o.model);
    if (size < HEADER_BYTES || fread(header, 1, HEADER_BYTES, f) != HEADER_BYTES)
        fail("%s: %llu bytes, too short for a llama2.c header", o.model, (unsigned long long)size);
    reject_new_versions(header, o.model);
    parse_header(header, &c, o.model);
    check_size(&c, plan_layout(&c, &lay), size, o.model);
    check_rope_table(f, o.model, &c, &lay);
    read_vocab(o.tokenizer, c.n_vocab, &v);

    if (!(w = gw_new(3))) fail("out of memory");
    gw_set_inputs(w, inputs, 2);
    put_hparams(w, &o, &c);
    put_vocab(w, &v, c.n_vocab);
    put_weights(w, &o, &c, &lay, f);
    fclose(f);
    if (gw_write_file(w, o.out)) fail("%s", gw_error(w));
    fprintf(stderr, PROG ": wrote %s: %lld layers, dim %lld, %lld heads (%lld KV), vocab %lld, %s classifier\n",
            o.out, (long long)c.n_layers, (long long)c.dim, (long long)c.n_heads, (long long)c.n_kv_heads,
            (long long)c.n_vocab, c.shared ? "shared" : "separate");
    gw_free(w);
    for (i = 0; i < c.n_vocab; i++) free(v.pieces[i]);
    free(v.pieces);
    free(v.scores);
    free(v.types);
    return 0;
}
