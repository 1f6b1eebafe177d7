/* The tokenizer against llama.cpp's vocabulary test files (ids from the reference SentencePiece
   tokenizer), round trips, the streaming decoder, special tokens and vocabulary errors. */
#define _POSIX_C_SOURCE 200809L   /* opendir */
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#define TESTDATA "../shared/testdata/"

/* Decode ids with the streaming decoder, one at a time, as a CLI would print them. */
static char *decode_all(const swa_vocab *v, const int32_t *ids, size_t n)
{
    swa_decoder d;
    char *out = (char *)malloc(n * 64 + 16);
    size_t len = 0, i;
    swa_decoder_init(&d, v);
    for (i = 0; i < n; i++) len += swa_decoder_push(&d, ids[i], out + len, 64);
    len += swa_decoder_flush(&d, out + len, 16);
    out[len] = '\0';
    return out;
}

/* Every case of a llama.cpp vocabulary test: the ids match exactly (no BOS), and decoding them
   gives the input back. */
static void check_vocab_in(const char *dir, const char *name)
{
    char path[256], *back;
    const char *text;
    tu_vocab_cases vc;
    swa_gguf *g;
    swa_vocab *v;
    swa_error err;
    int32_t want[512], got[512];
    size_t n_want, n_got, i;
    int n_cases = 0;
    snprintf(path, sizeof path, "%s%s", dir, name);
    if (!tu_vocab_cases_open(&vc, path)) skip();   /* ../shared is absent */
    if (swa_gguf_open(path, &g, &err) != SWA_OK) fail_msg("%s", err.msg);
    if (swa_vocab_load(g, &v, &err) != SWA_OK) fail_msg("%s", err.msg);
    for (; (text = tu_vocab_case_next(&vc, want, 512, &n_want)) != NULL; n_cases++) {
        assert_int_equal(swa_tokenize(v, text, strlen(text), 0, got, 512, &n_got, &err), SWA_OK);
        if (n_got != n_want || memcmp(got, want, n_want * sizeof(int32_t)) != 0) {
            fprintf(stderr, "input \"%s\": want", text);
            for (i = 0; i < n_want; i++) fprintf(stderr, " %d", want[i]);
            fprintf(stderr, ", got");
            for (i = 0; i < n_got; i++) fprintf(stderr, " %d", got[i]);
            fprintf(stderr, "\n");
            fail_msg("%s: case %d differs", name, n_cases);
        }
        back = decode_all(v, got, n_got);
        if (strcmp(back, text) != 0) fail_msg("%s: case %d round trip gives \"%s\"", name, n_cases, back);
        free(back);
    }
    assert_true(n_cases >= 40);
    swa_vocab_free(v);
    swa_gguf_close(g);
    tu_vocab_cases_close(&vc);
}

static void check_vocab_file(const char *name) { check_vocab_in(TESTDATA, name); }

/* Every ggml-vocab-*.gguf with its .inp and .out in ../shared/testdata, or in the folder named by
   SWA_VOCAB_DIR (ending in '/'; llama.cpp's models/ folder has a dozen more). */
static void test_every_vocab_file(void **state)
{
    const char *dir = getenv("SWA_VOCAB_DIR") ? getenv("SWA_VOCAB_DIR") : TESTDATA;
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    (void)state;
    if (!d) skip();
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char path[512];
        FILE *f;
        if (strncmp(e->d_name, "ggml-vocab-", 11) != 0 || len < 5 || strcmp(e->d_name + len - 5, ".gguf") != 0) continue;
        snprintf(path, sizeof path, "%s%s.inp", dir, e->d_name);
        if (!(f = fopen(path, "rb"))) continue;
        fclose(f);
        fprintf(stderr, "  %s\n", e->d_name);
        check_vocab_in(dir, e->d_name);
        n++;
    }
    closedir(d);
    assert_true(n >= 1);
}

static void test_llama_spm_vocab(void **state) { (void)state; check_vocab_file("ggml-vocab-llama-spm.gguf"); }
static void test_phi3_vocab(void **state) { (void)state; check_vocab_file("ggml-vocab-phi-3.gguf"); }
static void test_gpt2_vocab(void **state) { (void)state; check_vocab_file("ggml-vocab-gpt-2.gguf"); }
static void test_llama_bpe_vocab(void **state) { (void)state; check_vocab_file("ggml-vocab-llama-bpe.gguf"); }

/* A whole book: the ids are llama.cpp's (c392e50's llama-tokenize --no-bos on the same file gave
   this many ids with this FNV-1a hash of their little-endian 32-bit values), and decoding them
   with the streaming decoder gives the text back byte for byte. */
static void check_book(const char *vocab, size_t want_n, uint64_t want_hash)
{
    char path[256], *text, *back;
    size_t len, n, i;
    int32_t *ids;
    uint64_t h = 0xcbf29ce484222325ull;
    swa_gguf *g;
    swa_vocab *v;
    swa_error err;
    if (!(text = tu_read_text(TESTDATA "war-and-peace.txt", &len))) skip();
    snprintf(path, sizeof path, TESTDATA "%s", vocab);
    if (swa_gguf_open(path, &g, &err) != SWA_OK) fail_msg("%s", err.msg);
    if (swa_vocab_load(g, &v, &err) != SWA_OK) fail_msg("%s", err.msg);
    ids = (int32_t *)malloc((len + 16) * sizeof *ids);
    assert_int_equal(swa_tokenize(v, text, len, 0, ids, len + 16, &n, &err), SWA_OK);
    for (i = 0; i < n; i++) {
        int b;
        for (b = 0; b < 4; b++) {
            h ^= (uint8_t)((uint32_t)ids[i] >> (8 * b));
            h *= 0x100000001b3ull;
        }
    }
    assert_int_equal(n, want_n);
    if (h != want_hash) fail_msg("%s: the ids differ from llama.cpp's (hash %016llx)", vocab, (unsigned long long)h);
    back = decode_all(v, ids, n);
    assert_int_equal(strlen(back), len);
    assert_memory_equal(back, text, len);
    free(back);
    free(ids);
    swa_vocab_free(v);
    swa_gguf_close(g);
    free(text);
}

static void test_book_llama_bpe(void **state)
{
    (void)state;
    check_book("ggml-vocab-llama-bpe.gguf", 760377, 0x7a384023b268f188ull);
}

static void test_book_gpt2(void **state)
{
    (void)state;
    check_book("ggml-vocab-gpt-2.gguf", 792623, 0xe853470671379cb1ull);
}

/* 8000 characters of every script and kind of whitespace (tests/data/mixed_text.txt): the ids
   llama.cpp's llama-tokenize gave for them (tools/reference/gen_tokenize_ref.py). */
static void check_mixed_text(const char *name)
{
    char path[256], *text, *ids_text, *p, *back;
    size_t len, n, n_want = 0;
    int32_t *ids, *want;
    swa_gguf *g;
    swa_vocab *v;
    swa_error err;
    snprintf(path, sizeof path, TESTDATA "ggml-vocab-%s.gguf", name);
    if (swa_gguf_open(path, &g, &err) != SWA_OK) skip();      /* ../shared is absent */
    if (swa_vocab_load(g, &v, &err) != SWA_OK) fail_msg("%s", err.msg);
    text = tu_read_text("tests/data/mixed_text.txt", &len);
    snprintf(path, sizeof path, "tests/data/mixed_text.%s.ids", name);
    ids_text = tu_read_text(path, NULL);
    assert_non_null(text);
    assert_non_null(ids_text);
    want = (int32_t *)malloc((len + 1) * sizeof *want);
    ids = (int32_t *)malloc((len + 1) * sizeof *ids);
    for (p = ids_text; n_want <= len;) {
        char *end;
        long id = strtol(p, &end, 10);
        if (end == p) break;
        want[n_want++] = (int32_t)id;
        p = end;
    }
    assert_int_equal(swa_tokenize(v, text, len, 0, ids, len + 1, &n, &err), SWA_OK);
    if (n != n_want || memcmp(ids, want, n * sizeof *ids) != 0) {
        size_t i;
        for (i = 0; i < n && i < n_want && ids[i] == want[i]; i++) {}
        fail_msg("%s: %zu ids, llama.cpp %zu; the first difference is at %zu", name, n, n_want, i);
    }
    back = decode_all(v, ids, n);
    assert_string_equal(back, text);
    free(back);
    free(ids);
    free(want);
    free(ids_text);
    free(text);
    swa_vocab_free(v);
    swa_gguf_close(g);
}

static void test_mixed_text_gpt2(void **state) { (void)state; check_mixed_text("gpt-2"); }
static void test_mixed_text_llama_bpe(void **state) { (void)state; check_mixed_text("llama-bpe"); }

/* ---- pre-tokenizers against splits made by Python's regex module (tools/reference/gen_pretok_ref.py) ---- */

#define PRETOK_REF "tests/data/pretok_splits.txt"

/* Hex to bytes in place; returns the length. */
static size_t unhex(char *s)
{
    size_t n = 0, i;
    for (i = 0; s[i] && s[i + 1]; i += 2) {
        unsigned b;
        if (sscanf(s + i, "%2x", &b) != 1) break;
        s[n++] = (char)b;
    }
    return n;
}

/* The next space-separated field of *p, NUL-terminated, or NULL at the end. */
static char *next_field(char **p)
{
    char *s = *p, *e;
    while (*s == ' ') s++;
    if (!*s) return NULL;
    for (e = s; *e && *e != ' '; e++) {}
    *p = *e ? e + 1 : e;
    *e = '\0';
    return s;
}

/* One pre-tokenizer on one input: the pieces must be exactly the expected ones. */
static void check_split(const char *name, const char *text, size_t len, char *expect)
{
    size_t ends[4096], n, i, start = 0;
    swa_error err;
    char *tok;
    if (swa__pretok_pieces(name, text, len, ends, 4096, &n, &err) != SWA_OK) fail_msg("%s: %s", name, err.msg);
    for (i = 0; i < n; start = ends[i++]) {
        size_t want;
        if (!(tok = next_field(&expect)))
            fail_msg("%s on \"%.*s\": a piece more than expected at byte %zu", name, (int)len, text, start);
        want = unhex(tok);
        if (want != ends[i] - start || memcmp(tok, text + start, want) != 0)
            fail_msg("%s on \"%.*s\": piece \"%.*s\", want \"%.*s\"", name, (int)len, text,
                     (int)(ends[i] - start), text + start, (int)want, tok);
    }
    if (next_field(&expect)) fail_msg("%s on \"%.*s\": fewer pieces than expected", name, (int)len, text);
}

static void test_pretokenizer_splits(void **state)
{
    char *ref = tu_read_text(PRETOK_REF, NULL), *line, *next, *inputs[64];
    size_t input_len[64];
    int n_inputs = 0, n_checked = 0;
    (void)state;
    assert_non_null(ref);
    for (line = ref; *line; line = next) {
        next = line + strcspn(line, "\n");
        if (*next) *next++ = '\0';
        if (strncmp(line, "input ", 6) == 0) {
            assert_true(n_inputs < 64);
            inputs[n_inputs] = line + 6;
            input_len[n_inputs] = unhex(line + 6);
            n_inputs++;
        } else if (strncmp(line, "pre ", 4) == 0) {
            char name[64];
            int idx, used;
            if (sscanf(line + 4, "%63s %d %n", name, &idx, &used) != 2 || idx < 0 || idx >= n_inputs)
                fail_msg("bad line in " PRETOK_REF ": %s", line);
            check_split(name, inputs[idx], input_len[idx], line + 4 + used);
            n_checked++;
        }
    }
    assert_true(n_checked >= 14 * 30);
    free(ref);
}

/* Every name llama.cpp gives tokenizer.ggml.pre maps to a pre-tokenizer whose expressions compile. */
static void test_pretokenizer_names(void **state)
{
    static const char *names[] = {"default", "llama3", "llama-v3", "llama-bpe", "falcon3", "deepseek-llm",
        "deepseek-coder", "deepseek-v3", "falcon", "mpt", "starcoder", "gpt-2", "phi-2", "jina-es", "jina-de",
        "gigachat", "jina-v1-en", "jina-v2-es", "jina-v2-de", "jina-v2-code", "roberta-bpe", "refact",
        "command-r", "qwen2", "deepseek-r1-qwen", "stablelm2", "olmo", "dbrx", "smaug-bpe", "poro-chat",
        "viking", "jais", "tekken", "smollm", "codeshell", "bloom", "gpt3-finnish", "exaone", "chameleon",
        "minerva-7b", "megrez", "gpt-4o", "llama4"};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t ends[8], n;
        swa_error err;
        if (swa__pretok_pieces(names[i], "Hello, world 123", 16, ends, 8, &n, &err) != SWA_OK)
            fail_msg("%s: %s", names[i], err.msg);
    }
}

/* ---- a small vocabulary written here, to test rules one at a time ---- */

static uint8_t *small_vocab(size_t *size, const char *model, int n_scores, const char *false_key)
{
    /* pieces: 0..2 specials, 3..258 bytes, then merges; ▁ is e2 96 81 */
    static const char *merges[13] = {"\xe2\x96\x81", "h", "e", "l", "o", "he", "ll", "llo", "hello",
                                   "\xe2\x96\x81hello", "[INST]", "<user>", NULL};
    static const float merge_scores[] = {-1, -2, -2, -2, -2, -3, -4, -5, -6, -7, 0, 0, 0};
    char long_piece[400];
    const char *pieces[272];
    char bytes[256][8];
    float scores[272];
    int32_t types[272];
    int i, n = 0;
    gw_writer *w = gw_new(3);
    uint8_t *out;
    pieces[n] = "<unk>"; types[n] = 2; scores[n++] = 0;
    pieces[n] = "<s>"; types[n] = 3; scores[n++] = 0;
    pieces[n] = "</s>"; types[n] = 3; scores[n++] = 0;
    for (i = 0; i < 256; i++) {
        snprintf(bytes[i], sizeof bytes[i], "<0x%02X>", i);
        pieces[n] = bytes[i]; types[n] = 6; scores[n++] = 0;
    }
    /* the last piece: "▁" and 150 "é", 303 bytes, longer than any buffer a decoder might keep */
    memcpy(long_piece, "\xe2\x96\x81", 3);
    for (i = 0; i < 150; i++) memcpy(long_piece + 3 + 2 * i, "\xc3\xa9", 2);
    long_piece[303] = '\0';
    merges[12] = long_piece;
    for (i = 0; i < 13; i++) {
        pieces[n] = merges[i];
        types[n] = i == 10 ? 3 : i == 11 ? 4 : 1;   /* "[INST]" control, "<user>" user-defined */
        scores[n++] = merge_scores[i];
    }
    gw_kv_str(w, "tokenizer.ggml.model", model);
    gw_kv_array_str(w, "tokenizer.ggml.tokens", (uint64_t)n, pieces);
    gw_kv_array(w, "tokenizer.ggml.scores", GW_F32V, (uint64_t)(n_scores ? n_scores : n), scores);
    gw_kv_array(w, "tokenizer.ggml.token_type", GW_I32, (uint64_t)n, types);
    gw_kv_u32(w, "tokenizer.ggml.bos_token_id", 1);
    gw_kv_u32(w, "tokenizer.ggml.eos_token_id", 2);
    if (false_key) gw_kv_bool(w, false_key, 0);
    out = gw_to_memory(w, size);
    gw_free(w);
    return out;
}

static void open_small(swa_gguf **g, swa_vocab **v, uint8_t **bytes)
{
    size_t size;
    swa_error err;
    *bytes = small_vocab(&size, "llama", 0, NULL);
    assert_int_equal(swa_gguf_open_memory(*bytes, size, g, &err), SWA_OK);
    if (swa_vocab_load(*g, v, &err) != SWA_OK) fail_msg("%s", err.msg);
}

static void test_merges_bytes_and_bos(void **state)
{
    swa_gguf *g;
    swa_vocab *v;
    uint8_t *bytes;
    int32_t ids[32];
    size_t n;
    int32_t hello = 259 + 9;     /* "▁hello" */
    (void)state;
    open_small(&g, &v, &bytes);
    /* "hello" -> "▁hello" by merges; "x" has no piece -> byte fallback <0x78> = 3 + 0x78 */
    assert_int_equal(swa_tokenize(v, "hello x", 7, SWA_TOKENIZE_ADD_BOS, ids, 32, &n, NULL), SWA_OK);
    assert_int_equal(n, 4);
    assert_int_equal(ids[0], 1);
    assert_int_equal(ids[1], hello);
    assert_int_equal(ids[2], 259);            /* "▁" */
    assert_int_equal(ids[3], 3 + 'x');
    /* a buffer too small reports the size it needs */
    assert_int_equal(swa_tokenize(v, "hello x", 7, 0, ids, 2, &n, NULL), SWA_ERR_BUFFER_TOO_SMALL);
    assert_int_equal(n, 3);
    /* control text is plain text unless asked: "[INST]" is never produced from characters */
    assert_int_equal(swa_tokenize(v, "[INST]", 6, 0, ids, 32, &n, NULL), SWA_OK);
    assert_int_equal(n, 7);                   /* ▁ and six byte tokens */
    assert_int_equal(swa_tokenize(v, "[INST]hello</s>", 15, SWA_TOKENIZE_SPECIAL, ids, 32, &n, NULL), SWA_OK);
    assert_int_equal(n, 3);
    assert_int_equal(ids[0], 259 + 10);
    assert_int_equal(ids[1], 259 + 9);        /* "▁hello": a run after a special token is prefixed */
    assert_int_equal(ids[2], 2);
    /* a user-defined token is split out even without SWA_TOKENIZE_SPECIAL */
    assert_int_equal(swa_tokenize(v, "hello<user>hello", 16, 0, ids, 32, &n, NULL), SWA_OK);
    assert_int_equal(n, 3);
    assert_int_equal(ids[0], 259 + 9);
    assert_int_equal(ids[1], 259 + 11);
    assert_int_equal(ids[2], 259 + 9);
    {   /* broken UTF-8: a lead byte must not swallow the "▁" after it, so the space survives */
        const char broken[] = "hello\xc8 hello";
        char *back;
        assert_int_equal(swa_tokenize(v, broken, sizeof broken - 1, 0, ids, 32, &n, NULL), SWA_OK);
        back = decode_all(v, ids, n);
        assert_string_equal(back, broken);
        free(back);
    }
    assert_int_equal(swa_vocab_find(v, "hello"), 259 + 8);
    assert_int_equal(swa_vocab_find(v, "nothing"), -1);
    assert_int_equal(swa_vocab_type(v, 3 + 'x'), SWA_TOKEN_BYTE);
    assert_int_equal(swa_vocab_bos(v), 1);
    assert_int_equal(swa_vocab_eos(v), 2);
    swa_vocab_free(v);
    swa_gguf_close(g);
    free(bytes);
}

/* Gemma's files say tokenizer.ggml.add_space_prefix = false: no "▁" before the text or after a
   special token, and the decoder keeps a leading space that is really there. */
static void test_spm_without_space_prefix(void **state)
{
    size_t size, n;
    uint8_t *bytes = small_vocab(&size, "llama", 0, "tokenizer.ggml.add_space_prefix");
    swa_gguf *g;
    swa_vocab *v;
    swa_error err;
    int32_t ids[32];
    char *back;
    (void)state;
    assert_int_equal(swa_gguf_open_memory(bytes, size, &g, &err), SWA_OK);
    if (swa_vocab_load(g, &v, &err) != SWA_OK) fail_msg("%s", err.msg);
    assert_int_equal(swa_tokenize(v, "hello hello", 11, 0, ids, 32, &n, NULL), SWA_OK);
    assert_int_equal(n, 2);
    assert_int_equal(ids[0], 259 + 8);        /* "hello" */
    assert_int_equal(ids[1], 259 + 9);        /* "▁hello" */
    assert_int_equal(swa_tokenize(v, " hello<user>hello", 17, 0, ids, 32, &n, NULL), SWA_OK);
    assert_int_equal(n, 3);
    assert_int_equal(ids[0], 259 + 9);
    assert_int_equal(ids[2], 259 + 8);        /* no "▁" after the special token either */
    back = decode_all(v, ids, n);
    assert_string_equal(back, " hello<user>hello");
    free(back);
    swa_vocab_free(v);
    swa_gguf_close(g);
    free(bytes);
}

/* A Gemma-sized SentencePiece vocabulary (262144 pieces, 6000 "<unusedN>" user-defined tokens,
   no space prefix): lookups and special-token matching still find the right pieces. */
#define BIG_N 262144
#define BIG_UNUSED 6000
static void test_spm_big_vocab(void **state)
{
    static char names[BIG_N][24];   /* "<unused%d>" of any int32_t */
    const char **pieces = (const char **)malloc(BIG_N * sizeof *pieces);
    float *scores = (float *)malloc(BIG_N * sizeof *scores);
    int32_t *types = (int32_t *)malloc(BIG_N * sizeof *types), ids[64];
    int32_t first_word, first_sword, i, k = 0;
    size_t size, n;
    gw_writer *w = gw_new(3);
    uint8_t *bytes;
    swa_gguf *g;
    swa_vocab *v;
    swa_error err;
    (void)state;
    pieces[k] = "<pad>"; types[k] = 3; scores[k++] = 0;
    pieces[k] = "<eos>"; types[k] = 3; scores[k++] = 0;
    pieces[k] = "<bos>"; types[k] = 3; scores[k++] = 0;
    pieces[k] = "<unk>"; types[k] = 2; scores[k++] = 0;
    for (i = 0; i < 256; i++, k++) {
        snprintf(names[k], sizeof names[k], "<0x%02X>", i);
        pieces[k] = names[k]; types[k] = 6; scores[k] = 0;
    }
    for (i = 0; i < BIG_UNUSED; i++, k++) {
        snprintf(names[k], sizeof names[k], "<unused%d>", i);
        pieces[k] = names[k]; types[k] = 4; scores[k] = 0;
    }
    pieces[k] = "\xe2\x96\x81"; types[k] = 1; scores[k++] = 1;
    pieces[k] = "w"; types[k] = 1; scores[k++] = 1;
    for (i = 0; i < 10; i++, k++) { snprintf(names[k], sizeof names[k], "%d", i); pieces[k] = names[k]; types[k] = 1; scores[k] = 1; }
    /* "w0".."wN" and "▁w0".."▁wN": longer pieces score higher, "▁w..." above "w..." */
    first_word = k;
    first_sword = k + (BIG_N - k) / 2;
    for (i = 0; k < first_sword; i++, k++) {
        snprintf(names[k], sizeof names[k], "w%d", i);
        pieces[k] = names[k]; types[k] = 1; scores[k] = (float)strlen(names[k]) - 0.5f;
    }
    pieces[k] = "\xe2\x96\x81w"; types[k] = 1; scores[k++] = 2;
    for (i = 0; k < BIG_N; i++, k++) {
        snprintf(names[k], sizeof names[k], "\xe2\x96\x81w%d", i);
        pieces[k] = names[k]; types[k] = 1; scores[k] = (float)strlen(names[k]) - 2;
    }
    gw_kv_str(w, "tokenizer.ggml.model", "llama");
    gw_kv_array_str(w, "tokenizer.ggml.tokens", BIG_N, pieces);
    gw_kv_array(w, "tokenizer.ggml.scores", GW_F32V, BIG_N, scores);
    gw_kv_array(w, "tokenizer.ggml.token_type", GW_I32, BIG_N, types);
    gw_kv_u32(w, "tokenizer.ggml.bos_token_id", 2);
    gw_kv_u32(w, "tokenizer.ggml.eos_token_id", 1);
    gw_kv_bool(w, "tokenizer.ggml.add_space_prefix", 0);
    bytes = gw_to_memory(w, &size);
    gw_free(w);
    assert_int_equal(swa_gguf_open_memory(bytes, size, &g, &err), SWA_OK);
    if (swa_vocab_load(g, &v, &err) != SWA_OK) fail_msg("%s", err.msg);
    assert_int_equal(swa_vocab_size(v), BIG_N);
    assert_int_equal(swa_tokenize(v, "w5 w123456<unused5999><unused12>w7", 34, 0, ids, 64, &n, &err), SWA_OK);
    assert_int_equal(n, 5);
    assert_int_equal(ids[0], first_word + 5);
    assert_int_equal(ids[1], first_sword + 1 + 123456);
    assert_int_equal(ids[2], 4 + 256 + 5999);
    assert_int_equal(ids[3], 4 + 256 + 12);
    assert_int_equal(ids[4], first_word + 7);
    assert_int_equal(swa_vocab_find(v, "w100000"), first_word + 100000);
    swa_vocab_free(v);
    swa_gguf_close(g);
    free(bytes);
    free(pieces);
    free(scores);
    free(types);
}

/* ---- a small byte-level BPE vocabulary ---- */

/* GPT-2's bytes_to_unicode, as published with its encoder: printable Latin-1 bytes keep their
   code point, the others get 256, 257, ... in byte order. */
static void gpt2_byte_chars(char out[256][4])
{
    int b, extra = 0;
    for (b = 0; b < 256; b++) {
        int keep = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
        unsigned cp = keep ? (unsigned)b : 256u + (unsigned)extra++;
        if (cp < 0x80) { out[b][0] = (char)cp; out[b][1] = 0; }
        else { out[b][0] = (char)(0xC0 | (cp >> 6)); out[b][1] = (char)(0x80 | (cp & 0x3F)); out[b][2] = 0; }
    }
}

/* Ids 0..255 the byte characters, then the pieces below; merges by rank "l l", "h e", "he ll",
   "hell o", "Ġ h" ("hel" is a token no merge makes). */
enum { BPE_HE = 256, BPE_LL, BPE_HELL, BPE_HELLO, BPE_SPACE_H, BPE_HEL, BPE_USER, BPE_EOT, BPE_N };

static uint8_t *bpe_vocab(size_t *size, const char *pre)
{
    static char chars[256][4];
    static const char *extra[] = {"he", "ll", "hell", "hello", "\xc4\xa0h", "hel", "<user>", "<|eot|>"};
    static const char *merges[] = {"l l", "h e", "he ll", "hell o", "\xc4\xa0 h"};
    const char *pieces[BPE_N];
    int32_t types[BPE_N];
    int i;
    gw_writer *w = gw_new(3);
    uint8_t *out;
    gpt2_byte_chars(chars);
    for (i = 0; i < 256; i++) { pieces[i] = chars[i]; types[i] = 1; }
    for (i = 256; i < BPE_N; i++) { pieces[i] = extra[i - 256]; types[i] = i == BPE_USER ? 4 : i == BPE_EOT ? 3 : 1; }
    gw_kv_str(w, "tokenizer.ggml.model", "gpt2");
    if (pre) gw_kv_str(w, "tokenizer.ggml.pre", pre);
    gw_kv_array_str(w, "tokenizer.ggml.tokens", BPE_N, pieces);
    gw_kv_array(w, "tokenizer.ggml.token_type", GW_I32, BPE_N, types);
    gw_kv_array_str(w, "tokenizer.ggml.merges", 5, merges);
    out = gw_to_memory(w, size);
    gw_free(w);
    return out;
}

static swa_vocab *open_bpe(const char *pre, swa_gguf **g, uint8_t **bytes)
{
    size_t size;
    swa_vocab *v;
    swa_error err;
    *bytes = bpe_vocab(&size, pre);
    assert_int_equal(swa_gguf_open_memory(*bytes, size, g, &err), SWA_OK);
    if (swa_vocab_load(*g, &v, &err) != SWA_OK) fail_msg("%s", err.msg);
    return v;
}

static void close_bpe(swa_vocab *v, swa_gguf *g, uint8_t *bytes)
{
    swa_vocab_free(v);
    swa_gguf_close(g);
    free(bytes);
}

static void expect_ids(const swa_vocab *v, const char *text, size_t len, int flags, const int32_t *want, size_t n_want)
{
    int32_t ids[64];
    size_t n, i;
    assert_int_equal(swa_tokenize(v, text, len, flags, ids, 64, &n, NULL), SWA_OK);
    if (n != n_want || memcmp(ids, want, n * sizeof *ids) != 0) {
        fprintf(stderr, "\"%.*s\": got", (int)len, text);
        for (i = 0; i < n; i++) fprintf(stderr, " %d", ids[i]);
        fail_msg("%s", "ids differ");
    }
}

/* Merges apply by rank, lowest first, whatever their position; special tokens come first. */
static void test_bpe_rules(void **state)
{
    static const int32_t hello[] = {BPE_HELLO}, sp_hello[] = {' ', BPE_HELLO};
    static const int32_t hel[] = {BPE_HE, 'l'}, user[] = {BPE_HELLO, BPE_USER, ' ', BPE_HELLO};
    static const int32_t eot_text[] = {'<', '|', 'e', 'o', 't', '|', '>'}, eot[] = {BPE_EOT};
    static const int32_t bos_eos[] = {11, BPE_HE, 11};
    const char broken[] = "a\xff\xc3(\xe2\x96";
    uint8_t *bytes;
    swa_gguf *g;
    swa_vocab *v = open_bpe("gpt-2", &g, &bytes);
    int32_t ids[16];
    size_t n;
    char buf[8], *back;
    (void)state;
    expect_ids(v, "hello", 5, 0, hello, 1);
    /* " hello": (l l) 0, (h e) 1, (he ll) 2, (hell o) 3 all come before (Ġ h) 4 */
    expect_ids(v, " hello", 6, 0, sp_hello, 2);
    expect_ids(v, "hel", 3, 0, hel, 2);                     /* no merge makes "hel" */
    expect_ids(v, "hello<user> hello", 17, 0, user, 4);     /* user-defined: always */
    expect_ids(v, "<|eot|>", 7, 0, eot_text, 7);           /* control: only when asked */
    expect_ids(v, "<|eot|>", 7, SWA_TOKENIZE_SPECIAL, eot, 1);
    /* no bos key: GPT-NeoX's 11, as llama.cpp assumes; gpt-2 does not add it by default */
    assert_int_equal(swa_vocab_bos(v), 11);
    assert_int_equal(swa_vocab_add_bos(v), 0);
    expect_ids(v, "he", 2, SWA_TOKENIZE_ADD_BOS | SWA_TOKENIZE_ADD_EOS, bos_eos, 3);
    /* each character decodes to its byte; "Ġh" is " h" */
    assert_int_equal(swa_token_to_text(v, BPE_SPACE_H, buf, sizeof buf), 2);
    assert_memory_equal(buf, " h", 2);
    assert_int_equal(swa_token_to_text(v, 0xAD, buf, sizeof buf), 1);
    assert_int_equal((unsigned char)buf[0], 0xAD);
    assert_int_equal(swa_token_to_text(v, BPE_EOT, buf, sizeof buf), 0);
    /* broken UTF-8 keeps its bytes: one token each, and the text comes back */
    assert_int_equal(swa_tokenize(v, broken, sizeof broken - 1, 0, ids, 16, &n, NULL), SWA_OK);
    assert_int_equal(n, 6);
    assert_int_equal(ids[1], 0xFF);
    back = decode_all(v, ids, n);
    assert_memory_equal(back, broken, sizeof broken);
    free(back);
    close_bpe(v, g, bytes);
}

/* Llama 3's ignore_merges: a word that is a token is that token, though no merge makes it. */
static void test_bpe_ignore_merges(void **state)
{
    static const int32_t hel[] = {BPE_HEL}, hel_lo[] = {BPE_HE, 'l', ' ', 'l', ' ', 'o'};
    uint8_t *bytes;
    swa_gguf *g;
    swa_vocab *v = open_bpe("llama-bpe", &g, &bytes);
    (void)state;
    expect_ids(v, "hel", 3, 0, hel, 1);
    assert_int_equal(swa_vocab_add_bos(v), 1);               /* llama-bpe adds BOS by default */
    close_bpe(v, g, bytes);
    v = open_bpe("qwen2", &g, &bytes);
    expect_ids(v, "hel l o", 7, 0, hel_lo, 6);     /* qwen2: merges only */
    close_bpe(v, g, bytes);
}

/* A file (bytes, which this frees) that opens, but whose vocabulary is refused with code and a
   message naming needle, and no vocabulary. */
static void expect_vocab_error(uint8_t *bytes, size_t size, swa_status code, const char *needle)
{
    swa_gguf *g;
    swa_vocab *v;
    swa_error err;
    assert_int_equal(swa_gguf_open_memory(bytes, size, &g, &err), SWA_OK);
    assert_int_equal(swa_vocab_load(g, &v, &err), code);
    assert_non_null(strstr(err.msg, needle));
    assert_null(v);
    swa_gguf_close(g);
    free(bytes);
}

static void test_bpe_errors(void **state)
{
    size_t size;
    uint8_t *bytes = bpe_vocab(&size, "no-such-pre");
    (void)state;
    expect_vocab_error(bytes, size, SWA_ERR_UNSUPPORTED, "\"no-such-pre\"");
}

/* Byte tokens of a two-byte character come out only when the character is complete. */
static void test_streaming_decoder(void **state)
{
    swa_gguf *g;
    swa_vocab *v;
    uint8_t *bytes;
    swa_decoder d;
    char out[64];
    (void)state;
    open_small(&g, &v, &bytes);
    swa_decoder_init(&d, v);
    assert_int_equal(swa_decoder_push(&d, 259 + 9, out, sizeof out), 5);   /* "▁hello": space dropped */
    assert_memory_equal(out, "hello", 5);
    assert_int_equal(swa_decoder_push(&d, 1, out, sizeof out), 0);         /* control: nothing */
    assert_int_equal(swa_decoder_push(&d, 3 + 0xC3, out, sizeof out), 0);  /* first half of "é" */
    assert_int_equal(swa_decoder_push(&d, 3 + 0xA9, out, sizeof out), 2);
    assert_memory_equal(out, "\xc3\xa9", 2);
    assert_int_equal(swa_decoder_push(&d, 3 + 0xE2, out, sizeof out), 0);  /* an unfinished "▁" */
    assert_int_equal(swa_decoder_push(&d, 3 + 0x96, out, sizeof out), 0);
    assert_int_equal(swa_decoder_flush(&d, out, sizeof out), 2);           /* what is left, as is */
    assert_int_equal(swa_decoder_push(&d, 259 + 9, out, sizeof out), 6);   /* later pieces keep their space */
    assert_memory_equal(out, " hello", 6);
    assert_int_equal(swa_token_to_text(v, 0, out, sizeof out), 5);         /* unknown: " ⁇ " */
    {   /* a 303-byte piece (301 bytes of text) comes out whole when cap allows, cut at a character when not */
        char big[512];
        assert_int_equal(swa_decoder_push(&d, 259 + 12, big, sizeof big), 301);
        assert_memory_equal(big + 1, "\xc3\xa9", 2);
        assert_int_equal(swa_decoder_push(&d, 259 + 12, big, 100), 99);        /* " " + 49 whole "é" */
        assert_int_equal(swa_decoder_push(&d, 259 + 1, big, sizeof big), 1);   /* nothing half left over */
        assert_memory_equal(big, "h", 1);
    }
    swa_vocab_free(v);
    swa_gguf_close(g);
    free(bytes);
}

static void test_vocab_errors(void **state)
{
    size_t size;
    uint8_t *bytes;
    (void)state;
    bytes = small_vocab(&size, "bert", 0, NULL);
    expect_vocab_error(bytes, size, SWA_ERR_UNSUPPORTED, "\"bert\" is not supported");
    bytes = small_vocab(&size, "gpt2", 0, NULL);      /* byte-level BPE needs its merges */
    expect_vocab_error(bytes, size, SWA_ERR_FORMAT, "tokenizer.ggml.merges");
    bytes = small_vocab(&size, "llama", 100, NULL);   /* 100 scores for 270 tokens */
    expect_vocab_error(bytes, size, SWA_ERR_FORMAT, "tokenizer.ggml.scores has 100 entries");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama_spm_vocab),
        cmocka_unit_test(test_phi3_vocab),
        cmocka_unit_test(test_gpt2_vocab),
        cmocka_unit_test(test_llama_bpe_vocab),
        cmocka_unit_test(test_every_vocab_file),
        cmocka_unit_test(test_book_llama_bpe),
        cmocka_unit_test(test_book_gpt2),
        cmocka_unit_test(test_mixed_text_gpt2),
        cmocka_unit_test(test_mixed_text_llama_bpe),
        cmocka_unit_test(test_pretokenizer_splits),
        cmocka_unit_test(test_pretokenizer_names),
        cmocka_unit_test(test_merges_bytes_and_bos),
        cmocka_unit_test(test_streaming_decoder),
        cmocka_unit_test(test_spm_without_space_prefix),
        cmocka_unit_test(test_spm_big_vocab),
        cmocka_unit_test(test_bpe_rules),
        cmocka_unit_test(test_bpe_ignore_merges),
        cmocka_unit_test(test_bpe_errors),
        cmocka_unit_test(test_vocab_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
