/* build/swa-tokenize, build/swa-perplexity and build/swa-inspect --set-window as a user runs
   them, checked against the library API on files the tests write (a small random llama model
   with a vocabulary) and against llama.cpp's vocabulary test data in ../shared when present.
   Run from the project root after `make` (the Makefile's test target does both). */
#define _POSIX_C_SOURCE 200809L   /* mkstemp, popen, clock_gettime, kill */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tests/programs.h"
#include <unistd.h>
#include <sys/stat.h>

#include "tests/testutil.h"

#define TOKENIZE_FILE PROGRAM_FILE("swa-tokenize")
#define TOKENIZE PROGRAM("swa-tokenize")
#define PERPLEXITY_FILE PROGRAM_FILE("swa-perplexity")
#define PERPLEXITY PROGRAM("swa-perplexity")
#define INSPECT_FILE PROGRAM_FILE("swa-inspect")
#define INSPECT PROGRAM("swa-inspect")
#define GENERATE_FILE PROGRAM_FILE("swa-generate")
#define GENERATE PROGRAM("swa-generate")
#define SPM_VOCAB  "../shared/testdata/ggml-vocab-llama-spm.gguf"
#define BPE_VOCAB  "../shared/testdata/ggml-vocab-llama-bpe.gguf"

#define N_PIECES 41
#define VOCAB_N  (3 + 256 + N_PIECES)   /* <unk> <s> </s>, 256 bytes, the pieces below */

/* ---- helpers: files, commands ---- */

static void need_programs(void)
{
    const char *progs[] = {TOKENIZE_FILE, PERPLEXITY_FILE, INSPECT_FILE, GENERATE_FILE};
    size_t i;
    for (i = 0; i < sizeof progs / sizeof progs[0]; i++)
        if (access(progs[i], X_OK) != 0) fail_msg("%s is missing: run make first", progs[i]);
}

/* One of llama.cpp's vocabulary files from ../shared, or the test skips. */
static void need_vocab(const char *path)
{
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "skipped: %s is absent\n", path);
        skip();
    }
}

/* cmd exits 0 and prints exactly want on stdout. */
static void expect_stdout(const char *cmd, const char *want)
{
    int rc;
    char *out = tu_capture(cmd, &rc);
    if (rc != 0 || strcmp(out, want)) fail_msg("%s: exit %d, printed \"%s\", not \"%s\"", cmd, rc, out, want);
    free(out);
}

/* cmd (without redirections) says `message` on stderr and ends with `status`. */
static void expect_exit(const char *cmd, int status, const char *message)
{
    char line[1024];
    snprintf(line, sizeof line, "%s 2>&1 | grep -q -- '%s'", cmd, message);
    if (tu_run(line) != 0) fail_msg("expected output missing: %s", line);
    snprintf(line, sizeof line, "%s 2>/dev/null", cmd);
    assert_int_equal(tu_run(line), status);
}

/* Each of cmds[0..n) (with its redirections and grep) succeeds: the program said what it should. */
static void expect_messages(const char *const *cmds, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (tu_run(cmds[i]) != 0) fail_msg("expected output missing: %s", cmds[i]);
}

/* ---- the test vocabulary and model files ---- */

/* Specials, the 256 byte tokens, then "▁", a..z and a few merges (▁ is e2 96 81). */
static void add_vocab(gw_writer *w, int add_bos)
{
    static const char *merges[14] = {"\xe2\x96\x81t", "th", "he", "\xe2\x96\x81the", "in", "an", "er", "on",
                                     "\xe2\x96\x81\x61", "at", "en", "nd", "\xe2\x96\x81w", "ou"};
    static char bytes[256][8], letters[26][2];
    const char *pieces[VOCAB_N];
    float scores[VOCAB_N];
    int32_t types[VOCAB_N];
    int i, n = 0;
    pieces[n] = "<unk>"; types[n] = SWA_TOKEN_UNKNOWN; scores[n++] = 0;
    pieces[n] = "<s>"; types[n] = SWA_TOKEN_CONTROL; scores[n++] = 0;
    pieces[n] = "</s>"; types[n] = SWA_TOKEN_CONTROL; scores[n++] = 0;
    for (i = 0; i < 256; i++) {
        snprintf(bytes[i], sizeof bytes[i], "<0x%02X>", i);
        pieces[n] = bytes[i]; types[n] = SWA_TOKEN_BYTE; scores[n++] = 0;
    }
    pieces[n] = "\xe2\x96\x81"; types[n] = SWA_TOKEN_NORMAL; scores[n++] = -1000;
    for (i = 0; i < 26; i++) {
        letters[i][0] = (char)('a' + i);
        pieces[n] = letters[i]; types[n] = SWA_TOKEN_NORMAL; scores[n++] = -1000;
    }
    for (i = 0; i < 14; i++) {
        pieces[n] = merges[i]; types[n] = SWA_TOKEN_NORMAL; scores[n++] = (float)-i;
    }
    assert_int_equal(n, VOCAB_N);
    tu_spm_keys(w, n, pieces, scores, types);
    gw_kv_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    gw_kv_bool(w, "tokenizer.ggml.add_bos_token", add_bos);
}

/* The raw bytes of metadata entry i (key length, key, type, value): from its key to the next
   key, or to the first tensor info for the last one. Every file here has tensors. */
static void kv_span(const swa_gguf *g, int64_t i, const uint8_t **p, size_t *n)
{
    const char *end = i + 1 < swa_gguf_kv_count(g) ? swa_gguf_kv_key(g, i + 1).ptr : swa_gguf_tensor_at(g, 0)->name.ptr;
    *p = (const uint8_t *)swa_gguf_kv_key(g, i).ptr - 8;
    *n = (size_t)((const uint8_t *)end - 8 - *p);
}

typedef struct model_opts {
    uint32_t version;     /* GGUF 2 or 3 */
    uint32_t alignment;   /* 0: the writer's 32 and no key; else general.alignment among the other keys */
    int vocab;            /* add the test vocabulary (spec n_vocab must be VOCAB_N) */
} model_opts;

/* A random model from tu_build, rewritten with the version, alignment and vocabulary asked. */
static void write_model(const char *path, const tu_spec *spec, const model_opts *o)
{
    tu_model tm;
    swa_gguf *g;
    swa_error err;
    gw_writer *w = gw_new(o->version);
    int64_t i;
    assert_true(tu_build(&tm, spec));
    assert_int_equal(swa_gguf_open_memory(tm.gguf, tm.gguf_size, &g, &err), SWA_OK);
    for (i = 0; i < swa_gguf_kv_count(g); i++) {
        swa_str key = swa_gguf_kv_key(g, i);
        const uint8_t *p;
        size_t n;
        char name[128];
        uint32_t type;
        if (i == 3 && o->alignment) gw_set_alignment(w, o->alignment);
        kv_span(g, i, &p, &n);
        snprintf(name, sizeof name, "%.*s", (int)key.len, key.ptr);
        memcpy(&type, p + 8 + key.len, 4);
        gw_kv_raw(w, name, type, p + 12 + key.len, n - 12 - key.len);
    }
    if (o->vocab) add_vocab(w, 1);
    for (i = 0; i < swa_gguf_tensor_count(g); i++) {
        const swa_gguf_tensor *t = swa_gguf_tensor_at(g, i);
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)t->name.len, t->name.ptr);
        gw_tensor(w, name, t->type, t->n_dims, t->ne, t->data, (size_t)t->nbytes);
    }
    if (gw_write_file(w, path) != 0) fail_msg("writing %s: %s", path, gw_error(w));
    gw_free(w);
    swa_gguf_close(g);
    tu_free(&tm);
}

static tu_spec small_spec(int window, const int *windows, int n_ctx)
{
    tu_spec s;
    memset(&s, 0, sizeof s);
    s.n_layer = 2; s.n_embd = 32; s.n_head = 4; s.n_kv_head = 2; s.n_ff = 64; s.n_vocab = VOCAB_N;
    s.n_ctx = n_ctx; s.type = GW_F32; s.window = window; s.windows = windows; s.seed = 11;
    return s;
}

/* Words of random letters, common ones more often, so that merges and byte tokens both occur. */
static char *random_text(size_t n_chars, uint64_t seed)
{
    static const char letters[] = "etaoinshrdlucmfwypvbgkjqxzeeettaaoonnhh";
    static const char *words[] = {"the", "and", "on", "at", "in", "when", "out"};
    char *s = (char *)malloc(n_chars + 64);
    size_t n = 0;
    while (n < n_chars) {
        uint64_t r = tu_rng_next(&seed);
        if (r % 3 == 0) {
            const char *wd = words[(r >> 8) % 7];
            memcpy(s + n, wd, strlen(wd));
            n += strlen(wd);
        } else {
            int len = 1 + (int)((r >> 8) % 7), k;
            for (k = 0; k < len; k++) s[n++] = letters[tu_rng_next(&seed) % (sizeof letters - 1)];
        }
        s[n++] = (r >> 20) % 17 == 0 ? '\n' : ' ';
    }
    s[n] = '\0';
    return s;
}

/* ---- swa-tokenize ---- */

/* llama.cpp's ids (its ggml-vocab-llama-spm.gguf.out and ggml-vocab-llama-bpe.gguf.out) for
   "Hello world" without BOS and for a text with the BOS each vocabulary asks for by default
   (llama-bpe asks for it too), and the report on stderr: the count, or the time with --timing. */
static void test_tokenize_llama_ids(void **state)
{
    static const struct { const char *vocab, *no_bos, *text, *with_bos, *flag, *report[2]; } cases[] = {
        {SPM_VOCAB, "15043 3186\n", "Hello world", "1 15043 3186\n", "", {"3 tokens", ""}},
        {BPE_VOCAB, "9906 1917\n", " Hello world", "128000 22691 1917\n", "--timing",
         {"11 bytes tokenized in ", "s of CPU time"}},
    };
    char cmd[512], *out;
    int rc;
    size_t i;
    (void)state;
    need_programs();
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        need_vocab(cases[i].vocab);
        snprintf(cmd, sizeof cmd, TOKENIZE " -m %s -p 'Hello world' --no-bos 2>/dev/null", cases[i].vocab);
        expect_stdout(cmd, cases[i].no_bos);
        snprintf(cmd, sizeof cmd, TOKENIZE " -m %s -p '%s' 2>/dev/null", cases[i].vocab, cases[i].text);
        expect_stdout(cmd, cases[i].with_bos);
        snprintf(cmd, sizeof cmd, TOKENIZE " -m %s -p 'Hello world' %s 2>&1 >/dev/null", cases[i].vocab, cases[i].flag);
        out = tu_capture(cmd, &rc);
        assert_int_equal(rc, 0);
        if (!strstr(out, cases[i].report[0]) || !strstr(out, cases[i].report[1])) fail_msg("%s:\n%s", cmd, out);
        free(out);
    }
}

/* --pieces shows each id with its piece; control text: "</s>" is one token with --special,
   plain characters without. */
static void test_tokenize_pieces_and_special(void **state)
{
    char *out;
    int rc;
    (void)state;
    need_programs();
    need_vocab(SPM_VOCAB);
    out = tu_capture(TOKENIZE " -m " SPM_VOCAB " -p 'Hello world' --pieces 2>/dev/null", &rc);
    assert_int_equal(rc, 0);
    if (!strstr(out, "15043  \xe2\x96\x81Hello ") || !strstr(out, "\" Hello\"") || !strstr(out, "\" world\""))
        fail_msg("--pieces output:\n%s", out);
    free(out);
    expect_stdout(TOKENIZE " -m " SPM_VOCAB " -p 'Hello</s>' --no-bos --special 2>/dev/null", "15043 2\n");
    out = tu_capture(TOKENIZE " -m " SPM_VOCAB " -p 'Hello</s>' --no-bos 2>/dev/null", &rc);
    assert_null(strstr(out, " 2\n"));
    assert_true(strlen(out) > strlen("15043 2\n"));
    free(out);
}

/* A vocabulary written here: ids equal the library's for a long file (past the tool's first
   buffer of 256), BOS follows add_bos_token, and --pieces escapes what is not printable. */
static void test_tokenize_own_vocab(void **state)
{
    char vocab[64], vocab_nobos[64], text_path[64], cmd[512], *text, *out, *p;
    int32_t want[4096];
    size_t n_want, i, size = 0;
    uint8_t *bytes;
    swa_gguf *g;
    swa_vocab *v;
    swa_error err;
    gw_writer *w;
    int rc, n_got = 0;
    tu_spec s = small_spec(16, NULL, 512);
    model_opts o = {3, 0, 1};
    (void)state;
    need_programs();
    tu_tmp_path(vocab, sizeof vocab, "model");
    tu_tmp_path(vocab_nobos, sizeof vocab_nobos, "vocab");
    tu_tmp_path(text_path, sizeof text_path, "text");
    write_model(vocab, &s, &o);
    w = gw_new(3);                    /* vocabulary only, add_bos_token false */
    add_vocab(w, 0);
    bytes = gw_to_memory(w, &size);
    tu_write_file(vocab_nobos, bytes, size);
    free(bytes);
    gw_free(w);
    text = random_text(1500, 3);
    tu_write_file(text_path, text, strlen(text));
    /* the library's ids for the same text */
    assert_int_equal(swa_gguf_open(vocab, &g, &err), SWA_OK);
    assert_int_equal(swa_vocab_load(g, &v, &err), SWA_OK);
    assert_int_equal(swa_tokenize(v, text, strlen(text), SWA_TOKENIZE_ADD_BOS, want, 4096, &n_want, &err), SWA_OK);
    assert_true(n_want > 256);
    snprintf(cmd, sizeof cmd, TOKENIZE " -m %s -f %s 2>/dev/null", vocab, text_path);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    for (p = out; *p && *p != '\n';) {
        char *end;
        long id = strtol(p, &end, 10);
        assert_true(end != p);
        assert_true((size_t)n_got < n_want);
        assert_int_equal(id, want[n_got]);
        n_got++;
        p = end;
    }
    assert_int_equal(n_got, n_want);
    free(out);
    /* add_bos_token false: no BOS by default */
    assert_int_equal(swa_tokenize(v, "the", 3, 0, want, 4096, &n_want, &err), SWA_OK);
    assert_int_not_equal(want[0], 1);
    for (p = cmd, i = 0; i < n_want; i++) p += sprintf(p, i ? " %d" : "%d", want[i]);
    strcpy(p, "\n");
    text[0] = '\0';
    strcat(text, cmd);
    snprintf(cmd, sizeof cmd, TOKENIZE " -m %s -p 'the' 2>/dev/null", vocab_nobos);
    expect_stdout(cmd, text);
    /* --pieces: byte tokens show as stored, their text escaped; quotes and backslashes too */
    tu_write_file(text_path, "a\n\"\\\001", 5);
    snprintf(cmd, sizeof cmd, TOKENIZE " -m %s -f %s --no-bos --pieces 2>/dev/null", vocab_nobos, text_path);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    if (!strstr(out, "<0x0A>") || !strstr(out, "\"\\x0a\"") || !strstr(out, "\"\\\"\"") ||
        !strstr(out, "\"\\\\\"") || !strstr(out, "\"\\x01\""))
        fail_msg("--pieces output:\n%s", out);
    for (i = 0; out[i]; i++) assert_true(out[i] == '\n' || (out[i] >= 0x20 && out[i] != 0x7f) || (out[i] & 0x80));
    free(out);
    swa_vocab_free(v);
    swa_gguf_close(g);
    free(text);
    remove(vocab); remove(vocab_nobos); remove(text_path);
}

static void test_tokenize_errors(void **state)
{
    char model[64], cmd[512];
    tu_spec s = small_spec(0, NULL, 64);
    model_opts o = {3, 0, 0};     /* weights, no vocabulary */
    static const char *const says[] = {
        TOKENIZE " -m x.gguf 2>&1 | grep -q 'give one of -p TEXT and -f FILE'",
        TOKENIZE " -m x.gguf -p a -f b 2>&1 | grep -q 'give one of -p TEXT and -f FILE'",
        TOKENIZE " -m x.gguf --frobnicate 2>&1 | grep -q 'unknown flag --frobnicate'",
        TOKENIZE " -m 2>&1 | grep -q -- '-m needs a value'",
        TOKENIZE " -m " SPM_VOCAB " -f /nonexistent.txt 2>&1 | grep -q 'cannot open /nonexistent.txt'",
        TOKENIZE " -h | grep -q -- '--special'",
    };
    (void)state;
    need_programs();
    expect_messages(says, sizeof says / sizeof says[0]);
    expect_exit(TOKENIZE " -p hi", 2, "-m MODEL is required");
    assert_int_equal(tu_run(TOKENIZE " -m x.gguf -q 2>/dev/null"), 2);
    expect_exit(TOKENIZE " -m /nonexistent.gguf -p a", 1, "/nonexistent.gguf: cannot open");
    tu_tmp_path(model, sizeof model, "novocab");
    write_model(model, &s, &o);
    snprintf(cmd, sizeof cmd, TOKENIZE " -m %s -p hi", model);
    expect_exit(cmd, 1, "no tokenizer");
    remove(model);
}

/* ---- swa-perplexity ---- */

typedef struct ppl_result {
    double ppl, se;
    long long count;
    char mode[160];
} ppl_result;

static ppl_result run_perplexity(const char *args, char **err_out)
{
    char cmd[1024], errf[64], *out, *line;
    ppl_result r;
    size_t n;
    int rc;
    memset(&r, 0, sizeof r);
    tu_tmp_path(errf, sizeof errf, "stderr");
    snprintf(cmd, sizeof cmd, PERPLEXITY " %s 2>%s", args, errf);
    out = tu_capture(cmd, &rc);
    if (rc != 0) fail_msg("%s: exit %d\n%s", cmd, rc, (char *)tu_read_file(errf, &n));
    line = strstr(out, "perplexity: ");
    if (!line || sscanf(line, "perplexity: %lf +/- %lf over %lld tokens (%159[^)])", &r.ppl, &r.se, &r.count, r.mode) != 4)
        fail_msg("%s: no result line in\n%s", cmd, out);
    free(out);
    if (err_out) *err_out = (char *)tu_read_file(errf, &n);
    remove(errf);
    return r;
}

/* The definition, computed here from the library's logits: segments of seg_len tokens (0 = one
   pass), each evaluated from a reset context with one swa_ctx_eval_all, every token but a
   segment's first scored against the row before it. Standard error with a two-pass variance. */
static ppl_result expected_ppl(const char *model_path, const swa_ctx_config *cfg, const int32_t *tok, size_t n,
                               size_t seg_len)
{
    swa_model *m;
    swa_ctx *c;
    swa_error err;
    ppl_result r;
    int64_t V, k;
    size_t s, j, count = 0;
    double *nll = (double *)malloc(n * sizeof(double)), sum = 0.0, var = 0.0, mean;
    float *logits;
    memset(&r, 0, sizeof r);
    if (swa_model_load(model_path, &m, &err) != SWA_OK) fail_msg("%s", err.msg);
    if (swa_ctx_create(m, cfg, &c, &err) != SWA_OK) fail_msg("%s", err.msg);
    V = swa_model_hparams(m)->n_vocab;
    if (!seg_len) seg_len = n;
    logits = (float *)malloc(seg_len * (size_t)V * sizeof(float));
    for (s = 0; s < n; s += seg_len) {
        size_t len = n - s < seg_len ? n - s : seg_len;
        swa_ctx_reset(c);
        if (swa_ctx_eval_all(c, tok + s, len, logits, &err) != SWA_OK) fail_msg("%s", err.msg);
        for (j = 1; j < len; j++) {
            const float *row = logits + (j - 1) * (size_t)V;
            double mx = row[0], z = 0.0;
            for (k = 0; k < V; k++) mx = row[k] > mx ? row[k] : mx;
            for (k = 0; k < V; k++) z += exp(row[k] - mx);
            nll[count++] = log(z) + mx - row[tok[s + j]];
        }
    }
    for (j = 0; j < count; j++) sum += nll[j];
    mean = sum / (double)count;
    for (j = 0; j < count; j++) var += (nll[j] - mean) * (nll[j] - mean);
    var /= (double)(count - 1);
    r.ppl = exp(mean);
    r.se = r.ppl * sqrt(var / (double)count);
    r.count = (long long)count;
    free(nll);
    free(logits);
    swa_ctx_free(c);
    swa_model_free(m);
    return r;
}

static int32_t *tokens_of(const char *model_path, const char *text, int flags, size_t *n)
{
    swa_model *m;
    const swa_vocab *v;
    swa_error err;
    size_t cap = strlen(text) + 16;
    int32_t *tok = (int32_t *)malloc(cap * sizeof(int32_t));
    if (swa_model_load(model_path, &m, &err) != SWA_OK || swa_model_vocab(m, &v, &err) != SWA_OK) fail_msg("%s", err.msg);
    assert_int_equal(swa_tokenize(v, text, strlen(text), flags, tok, cap, n, &err), SWA_OK);
    swa_model_free(m);
    return tok;
}

static void check_close(const char *what, ppl_result got, ppl_result want)
{
    if (got.count != want.count) fail_msg("%s: %lld tokens scored, want %lld", what, got.count, want.count);
    if (fabs(got.ppl - want.ppl) > 1e-4 * want.ppl) fail_msg("%s: ppl %.6f, want %.6f", what, got.ppl, want.ppl);
    /* printed with 4 decimals */
    if (fabs(got.se - want.se) > 1e-4 * want.se + 1e-4) fail_msg("%s: +/- %.6f, want %.6f", what, got.se, want.se);
}

/* The files of a perplexity test: a model of spec s and a random text of n_chars characters
   (seed); returns the text, and its tokens with BOS in *tok (*n of them). */
static char *write_ppl_files(char model[64], char text_path[64], const tu_spec *s, size_t n_chars, uint64_t seed,
                             int32_t **tok, size_t *n)
{
    model_opts o = {3, 0, 1};
    char *text = random_text(n_chars, seed);
    tu_tmp_path(model, 64, "model");
    tu_tmp_path(text_path, 64, "text");
    write_model(model, s, &o);
    tu_write_file(text_path, text, strlen(text));
    *tok = tokens_of(model, text, SWA_TOKENIZE_ADD_BOS, n);
    return text;
}

/* A model with a window of 16 runs through a text of ~90 windows (past several 512-token
   blocks) in one pass; the tool's figure equals exp(mean NLL) from swa_ctx_eval_all. */
static void test_perplexity_windowed(void **state)
{
    char model[64], text_path[64], args[512], *text, *errs;
    tu_spec s = small_spec(16, NULL, 64);
    swa_ctx_config cfg;
    int32_t *tok;
    size_t n;
    ppl_result got, want;
    (void)state;
    need_programs();
    text = write_ppl_files(model, text_path, &s, 1400, 5, &tok, &n);
    assert_true(n > 2 * 512);
    assert_int_equal(tok[0], 1);
    memset(&cfg, 0, sizeof cfg);
    want = expected_ppl(model, &cfg, tok, n, 0);
    snprintf(args, sizeof args, "-m %s -f %s", model, text_path);
    got = run_perplexity(args, &errs);
    check_close("window 16", got, want);
    assert_string_equal(got.mode, "window 16");
    assert_true(want.ppl > 10.0);                 /* a random model: far from certain */
    assert_non_null(strstr(errs, "[256/"));
    assert_non_null(strstr(errs, "[1024/"));
    assert_non_null(strstr(errs, "tokens/s"));
    free(errs);
    /* another forward-pass size gives the same figure */
    snprintf(args, sizeof args, "-m %s -f %s -b 7 -t 1", model, text_path);
    check_close("-b 7", run_perplexity(args, NULL), want);
    /* -w overrides the window */
    cfg.window = 5;
    snprintf(args, sizeof args, "-m %s -f %s -w 5", model, text_path);
    got = run_perplexity(args, NULL);
    check_close("-w 5", got, expected_ppl(model, &cfg, tok, n, 0));
    assert_string_equal(got.mode, "window 5");
    /* --no-bos: the text alone, one token fewer scored */
    cfg.window = 0;
    free(tok);
    tok = tokens_of(model, text, 0, &n);
    assert_int_not_equal(tok[0], 1);
    snprintf(args, sizeof args, "-m %s -f %s --no-bos", model, text_path);
    check_close("--no-bos", run_perplexity(args, NULL), expected_ppl(model, &cfg, tok, n, 0));
    free(tok);
    free(text);
    remove(model); remove(text_path);
}

/* Without a window a text longer than n_ctx is scored in independent segments of n_ctx tokens;
   a text that fits is one pass. */
static void test_perplexity_full_attention(void **state)
{
    char model[64], text_path[64], args[512], *text;
    tu_spec s = small_spec(0, NULL, 512);
    int windows[2] = {8, 0};
    model_opts o = {3, 0, 1};
    swa_ctx_config cfg;
    int32_t *tok;
    size_t n;
    ppl_result got;
    (void)state;
    need_programs();
    text = write_ppl_files(model, text_path, &s, 700, 9, &tok, &n);
    assert_true(n > 512);
    memset(&cfg, 0, sizeof cfg);
    /* -c 100: segments of 100 tokens */
    cfg.n_ctx = 100;
    snprintf(args, sizeof args, "-m %s -f %s -c 100", model, text_path);
    got = run_perplexity(args, NULL);
    check_close("-c 100", got, expected_ppl(model, &cfg, tok, n, 100));
    assert_int_equal(got.count, (long long)(n - (n + 99) / 100));
    assert_non_null(strstr(got.mode, "full attention"));
    assert_non_null(strstr(got.mode, "segments of 100 tokens"));
    /* the default n_ctx is the trained 512, shorter than the text */
    cfg.n_ctx = 0;
    snprintf(args, sizeof args, "-m %s -f %s", model, text_path);
    check_close("default n_ctx", run_perplexity(args, NULL), expected_ppl(model, &cfg, tok, n, 512));
    /* -c 2000 holds the whole text: one pass */
    cfg.n_ctx = 2000;
    snprintf(args, sizeof args, "-m %s -f %s -c 2000", model, text_path);
    got = run_perplexity(args, NULL);
    check_close("-c 2000", got, expected_ppl(model, &cfg, tok, n, 0));
    assert_string_equal(got.mode, "full attention");
    /* one windowed and one full layer: the full layer decides */
    s = small_spec(0, windows, 512);
    write_model(model, &s, &o);
    cfg.n_ctx = 128;
    snprintf(args, sizeof args, "-m %s -f %s -c 128", model, text_path);
    got = run_perplexity(args, NULL);
    check_close("windows 8,0", got, expected_ppl(model, &cfg, tok, n, 128));
    assert_non_null(strstr(got.mode, "windows 8,0, "));
    free(tok);
    free(text);
    remove(model); remove(text_path);
}

static void test_perplexity_errors(void **state)
{
    char model[64], text_path[64], cmd[512];
    tu_spec s = small_spec(4, NULL, 64);
    model_opts o = {3, 0, 1};
    static const char *const says[] = {
        PERPLEXITY " -f x.txt 2>&1 | grep -q -- '-m MODEL is required'",
        PERPLEXITY " -m x.gguf 2>&1 | grep -q -- '-f TEXT is required'",
        PERPLEXITY " -m x.gguf -f x.txt -c -3 2>&1 | grep -q -- '-c wants a number'",
        PERPLEXITY " -m x.gguf -f x.txt --frobnicate 2>&1 | grep -q 'unknown flag --frobnicate'",
        PERPLEXITY " -m x.gguf -f 2>&1 | grep -q -- '-f needs a value'",
        PERPLEXITY " -h | grep -q 'independent segments'",
    };
    (void)state;
    need_programs();
    expect_messages(says, sizeof says / sizeof says[0]);
    expect_exit(PERPLEXITY " -m x.gguf -f x.txt -w 0", 2, "-w wants a number");
    expect_exit(PERPLEXITY " -m x.gguf -f /nonexistent.txt", 1, "cannot open /nonexistent.txt");
    tu_tmp_path(model, sizeof model, "model");
    tu_tmp_path(text_path, sizeof text_path, "text");
    write_model(model, &s, &o);
    tu_write_file(text_path, "", 0);     /* BOS alone: nothing to score */
    snprintf(cmd, sizeof cmd, PERPLEXITY " -m %s -f %s", model, text_path);
    expect_exit(cmd, 1, "at least 2 are needed");
    snprintf(cmd, sizeof cmd, PERPLEXITY " -m /nonexistent.gguf -f %s 2>&1 | grep -q '/nonexistent.gguf: cannot open'",
             text_path);
    assert_int_equal(tu_run(cmd), 0);
    remove(model); remove(text_path);
}

/* ---- swa-inspect --set-window ---- */

/* The copy of `in` with window W: same version and alignment, every other entry byte for byte
   in its place, the window key replaced where it stood or added last, the same tensor table
   and tensor bytes, loadable with window W; and swa-generate gives the same ids and logits
   from the copy as from the original run with -w W. */
static void check_set_window(const char *in, int W)
{
    char out[64], cmd[1024], dump_a[64], dump_b[64], ids[512], *gen_a, *gen_b, *text;
    swa_gguf *a, *b;
    swa_model *m;
    swa_error err;
    int64_t i, wa, n_kv;
    int32_t tok[40], l;
    uint8_t *da, *db;
    size_t na, nb, k;
    int rc;
    swa_gguf_value v;
    int64_t w;
    tu_tmp_path(out, sizeof out, "copy");
    snprintf(cmd, sizeof cmd, INSPECT " %s --set-window %d %s", in, W, out);
    text = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(text, "llama.attention.sliding_window = "));
    free(text);
    assert_int_equal(swa_gguf_open(in, &a, &err), SWA_OK);
    if (swa_gguf_open(out, &b, &err) != SWA_OK) fail_msg("%s", err.msg);
    assert_int_equal(swa_gguf_version(b), swa_gguf_version(a));
    assert_int_equal(swa_gguf_alignment(b), swa_gguf_alignment(a));
    n_kv = swa_gguf_kv_count(a);
    wa = swa_gguf_kv_find(a, "llama.attention.sliding_window");
    assert_int_equal(swa_gguf_kv_count(b), n_kv + (wa < 0));
    assert_int_equal(swa_gguf_kv_find(b, "llama.attention.sliding_window"), wa < 0 ? n_kv : wa);
    v = swa_gguf_kv_value(b, wa < 0 ? n_kv : wa);
    assert_int_equal(v.type, SWA_GGUF_U32);
    assert_int_equal(swa_gguf_value_int(&v, &w), SWA_OK);
    assert_int_equal(w, W);
    for (i = 0; i < n_kv; i++) {
        const uint8_t *pa, *pb;
        if (i == wa) continue;
        kv_span(a, i, &pa, &na);
        kv_span(b, i, &pb, &nb);
        if (na != nb || memcmp(pa, pb, na) != 0)
            fail_msg("key %.*s differs in the copy", (int)swa_gguf_kv_key(a, i).len, swa_gguf_kv_key(a, i).ptr);
    }
    assert_int_equal(swa_gguf_tensor_count(b), swa_gguf_tensor_count(a));
    for (i = 0; i < swa_gguf_tensor_count(a); i++) {
        const swa_gguf_tensor *ta = swa_gguf_tensor_at(a, i), *tb = swa_gguf_tensor_at(b, i);
        assert_int_equal(tb->name.len, ta->name.len);
        assert_memory_equal(tb->name.ptr, ta->name.ptr, ta->name.len);
        assert_int_equal(tb->type, ta->type);
        assert_int_equal(tb->n_dims, ta->n_dims);
        assert_memory_equal(tb->ne, ta->ne, sizeof ta->ne);
        assert_int_equal(tb->nbytes, ta->nbytes);
        assert_int_equal((swa_gguf_data_offset(b) + tb->offset) % swa_gguf_alignment(a), 0);
        if (memcmp(tb->data, ta->data, (size_t)ta->nbytes) != 0) fail_msg("tensor %lld: bytes differ", (long long)i);
    }
    swa_gguf_close(a);
    swa_gguf_close(b);
    /* it loads with the new window on every layer */
    if (swa_model_load(out, &m, &err) != SWA_OK) fail_msg("%s", err.msg);
    assert_int_equal(swa_model_hparams(m)->window, W);
    for (l = 0; l < swa_model_hparams(m)->n_layer; l++) assert_int_equal(swa_model_layer_window(m, l), W);
    swa_model_free(m);
    /* the inspect listing of the copy shows it */
    snprintf(cmd, sizeof cmd, INSPECT " %s", out);
    text = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    snprintf(ids, sizeof ids, "window %d, weights", W);
    assert_non_null(strstr(text, ids));
    free(text);
    /* the same greedy ids and bit-identical logits as the original with -w W */
    tu_random_tokens(tok, 40, VOCAB_N, (uint64_t)W);
    for (k = 0, i = 0; i < 40; i++) k += (size_t)sprintf(ids + k, i ? ",%d" : "%d", tok[i]);
    tu_tmp_path(dump_a, sizeof dump_a, "dump");
    tu_tmp_path(dump_b, sizeof dump_b, "dump");
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids %s -n 8 --temp 0 -w %d --dump-logits %s 2>/dev/null", in, ids, W, dump_a);
    gen_a = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids %s -n 8 --temp 0 --dump-logits %s 2>/dev/null", out, ids, dump_b);
    gen_b = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    assert_true(strlen(gen_a) > 8);
    assert_string_equal(gen_a, gen_b);
    da = tu_read_file(dump_a, &na);
    db = tu_read_file(dump_b, &nb);
    assert_int_equal(na, (size_t)(40 + 7) * VOCAB_N * sizeof(float));
    assert_int_equal(nb, na);
    assert_memory_equal(da, db, na);
    free(da); free(db); free(gen_a); free(gen_b);
    remove(out); remove(dump_a); remove(dump_b);
}

/* tools/bench/sidebyside.sh with stand-ins for llama-bench (its -o jsonl lines) and swa-bench (its
   --markdown row): the medians, the ratios and the share of the limit land in the right cells,
   and a failing program stops the script with an error. */
static void write_script(const char *path, const char *body)
{
    tu_write_file(path, body, strlen(body));
    assert_int_equal(chmod(path, 0755), 0);
}

/* The script run as cmd fails, saying message. */
static void expect_failure(const char *cmd, const char *message)
{
    int rc;
    char *out = tu_capture(cmd, &rc);
    assert_int_not_equal(rc, 0);
    if (!strstr(out, message)) fail_msg("no \"%s\" in:\n%s", message, out);
    free(out);
}

/* A fresh directory dir for the script: a build directory with bin/LLAMA (llama_body), the
   stand-in SWA beside it (swa_body) and a model.gguf. */
static void stand_ins(char dir[64], const char *llama, const char *llama_body, const char *swa, const char *swa_body)
{
    char path[160];
    snprintf(dir, 64, "/tmp/swa_sbs_XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/bin", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/bin/%s", dir, llama);
    write_script(path, llama_body);
    snprintf(path, sizeof path, "%s/%s", dir, swa);
    write_script(path, swa_body);
    snprintf(path, sizeof path, "%s/model.gguf", dir);
    tu_write_file(path, "x", 1);
}

static void test_sidebyside(void **state)
{
    char dir[64], path[160], cmd[768], *out;
    int rc;
    (void)state;
    stand_ins(dir, "llama-bench",
              "#!/bin/sh\n"
              "echo '{\"build_commit\": \"abc1234\", \"n_prompt\": 128, \"n_gen\": 0, \"samples_ts\": [ 100.0, 130.0, 120.0 ]}'\n"
              "echo '{\"build_commit\": \"abc1234\", \"n_prompt\": 0, \"n_gen\": 32, \"samples_ts\": [ 10.0, 14.0 ]}'\n",
              "swa-bench", "#!/bin/sh\necho '| m | Q4_0 | mmap | 2 | avx512 | 240.0 ± 1.0 | 36.00 ± 0.10 | 0 | 20.0 | 500.0 | 90% |'\n");
    snprintf(path, sizeof path, "%s/model.gguf", dir);
    snprintf(cmd, sizeof cmd, "sh tools/bench/sidebyside.sh %s --rounds 2 -r 1 --swa-bench %s/swa-bench --log /dev/null %s 2>&1",
             dir, dir, path);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    /* llama.cpp: pp the median of 100, 130, 120; tg of 10 and 14 */
    if (!strstr(out, "| model.gguf | 120.0 (120.0-120.0) | 240.0 (240.0-240.0) | 2.00 | 12.00 (12.00-12.00) | "
                     "36.00 (36.00-36.00) | 3.00 | 90% |"))
        fail_msg("unexpected table:\n%s", out);
    assert_non_null(strstr(out, "abc1234"));
    free(out);
    snprintf(path, sizeof path, "%s/swa-bench", dir);
    write_script(path, "#!/bin/sh\necho 'cannot load' >&2\nexit 1\n");
    expect_failure(cmd, "swa-bench failed");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(tu_run(cmd), 0);
}

/* tools/bench/sidebyside.sh --batched with stand-ins for the two batched benches, which print the
   same table: a round's S_PP and S_TG per B, the medians over rounds (the stand-ins answer
   differently in each round, by a counter file), the ratios, and each B's S_TG over B = 1's. */
static void test_sidebyside_batched(void **state)
{
    char dir[64], path[160], cmd[768], *out;
    int rc;
    (void)state;
    stand_ins(dir, "llama-batched-bench",
              "#!/bin/sh\n"   /* a context for 2 x (64 + 32) cells, in 256s */
              "case \"$*\" in *'-c 256 '*'-npp 64 -ntg 32 -npl 1,2 '*) ;; *) echo \"bad arguments: $*\" >&2; exit 1 ;; esac\n"
              "echo '|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |'\n"
              "echo '|-------|--------|------|--------|----------|----------|----------|----------|----------|----------|'\n"
              "echo '|    64 |     32 |    1 |     96 |    1.000 |    50.00 |    1.000 |    10.00 |    2.000 |    48.00 |'\n"
              "echo '|    64 |     32 |    2 |    192 |    1.000 |    80.00 |    1.000 |    16.00 |    2.000 |    96.00 |'\n",
              "swa-batched-bench",
              "#!/bin/sh\n"
              "d=$(dirname \"$0\"); n=$(cat \"$d/count\" 2>/dev/null || echo 0); echo $((n + 1)) > \"$d/count\"\n"
              "echo 'model m.gguf, 2 threads, kernels avx2, kv f16'\n"
              "echo '|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |'\n"
              "if [ $n = 0 ]; then tg1=20.00 tg2=30.00; elif [ $n = 1 ]; then tg1=24.00 tg2=60.00; else tg1=22.00 tg2=48.00; fi\n"
              "echo \"|    64 |     32 |    1 |     96 |    1.000 |   100.00 |    1.000 |    $tg1 |    2.000 |    48.00 |\"\n"
              "echo \"|    64 |     32 |    2 |    192 |    1.000 |   120.00 |    1.000 |    $tg2 |    2.000 |    96.00 |\"\n");
    snprintf(path, sizeof path, "%s/model.gguf", dir);
    snprintf(cmd, sizeof cmd, "sh tools/bench/sidebyside.sh %s --batched 1,2 --rounds 3 --swa-bench %s/swa-batched-bench --log /dev/null %s 2>&1",
             dir, dir, path);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    /* swa.h's tg medians: 22 at B = 1 (20, 24, 22) and 48 at B = 2 (30, 60, 48): 2.20x and
       3.00x llama.cpp's 10 and 16, and 48 / 22 = 2.18x its own B = 1 */
    if (!strstr(out, "| model.gguf | 1 | 50.0 (50.0-50.0) | 100.0 (100.0-100.0) | 2.00 | 10.00 (10.00-10.00) | "
                     "22.00 (20.00-24.00) | 2.20 | 1.00 |") ||
        !strstr(out, "| model.gguf | 2 | 80.0 (80.0-80.0) | 120.0 (120.0-120.0) | 1.50 | 16.00 (16.00-16.00) | "
                     "48.00 (30.00-60.00) | 3.00 | 2.18 |"))
        fail_msg("unexpected table:\n%s", out);
    assert_non_null(strstr(out, "used: avx2"));
    free(out);
    snprintf(cmd, sizeof cmd, "sh tools/bench/sidebyside.sh %s --batched 1,x --swa-bench %s/swa-batched-bench %s/model.gguf 2>&1",
             dir, dir, dir);
    expect_failure(cmd, "--batched wants sizes like 1,2,4,8");
    snprintf(path, sizeof path, "%s/swa-batched-bench", dir);
    write_script(path, "#!/bin/sh\necho 'cannot load' >&2\nexit 1\n");
    snprintf(cmd, sizeof cmd, "sh tools/bench/sidebyside.sh %s --batched 1,2 --swa-bench %s/swa-batched-bench --log /dev/null %s/model.gguf 2>&1",
             dir, dir, dir);
    expect_failure(cmd, "swa-batched-bench failed");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(tu_run(cmd), 0);
}

static void test_set_window(void **state)
{
    char model[64];
    int windows[2] = {8, 0};
    tu_spec s;
    model_opts o;
    (void)state;
    need_programs();
    tu_tmp_path(model, sizeof model, "model");
    /* no window key, alignment 64 among the keys, v3: the key is added last */
    s = small_spec(0, NULL, 64);
    o.version = 3; o.alignment = 64; o.vocab = 1;
    write_model(model, &s, &o);
    check_set_window(model, 8);
    /* a u32 window in a v2 file: replaced in place */
    s = small_spec(32, NULL, 64);
    o.version = 2; o.alignment = 0; o.vocab = 0;
    write_model(model, &s, &o);
    check_set_window(model, 4);
    /* per-layer windows with a full layer: one u32 for every layer now */
    s = small_spec(0, windows, 64);
    o.version = 3; o.alignment = 128; o.vocab = 1;
    write_model(model, &s, &o);
    check_set_window(model, 6);
    remove(model);
}

static void test_set_window_errors(void **state)
{
    char model[64], cmd[512];
    uint8_t *before, *after;
    size_t nb, na;
    tu_spec s = small_spec(0, NULL, 64);
    model_opts o = {3, 0, 0};
    (void)state;
    need_programs();
    tu_tmp_path(model, sizeof model, "model");
    write_model(model, &s, &o);
    before = tu_read_file(model, &nb);
    snprintf(cmd, sizeof cmd, INSPECT " %s --set-window 0 /tmp/x.gguf", model);
    expect_exit(cmd, 2, "--set-window wants a number in 1..");
    snprintf(cmd, sizeof cmd, INSPECT " %s --set-window 4 2>&1 | grep -q 'needs IN.gguf and OUT.gguf'", model);
    assert_int_equal(tu_run(cmd), 0);
    snprintf(cmd, sizeof cmd, INSPECT " %s --set-window 2>&1 | grep -q 'needs a value'", model);
    assert_int_equal(tu_run(cmd), 0);
    snprintf(cmd, sizeof cmd, INSPECT " %s /tmp/x.gguf 2>&1 | grep -q 'unexpected argument /tmp/x.gguf'", model);
    assert_int_equal(tu_run(cmd), 0);
    snprintf(cmd, sizeof cmd, INSPECT " %s --set-window 4 %s", model, model);
    expect_exit(cmd, 2, "is the input file");
    snprintf(cmd, sizeof cmd, INSPECT " /nonexistent.gguf --set-window 4 /tmp/swa_tools_never.gguf 2>/dev/null");
    assert_int_equal(tu_run(cmd), 1);
    assert_int_not_equal(access("/tmp/swa_tools_never.gguf", F_OK), 0);
    snprintf(cmd, sizeof cmd, INSPECT " %s --set-window 4 /nonexistent/dir/x.gguf 2>&1 | grep -q 'cannot create'", model);
    assert_int_equal(tu_run(cmd), 0);
    assert_int_equal(tu_run(INSPECT " -h | grep -q -- '--set-window W'"), 0);
    /* the plain listing still works */
    snprintf(cmd, sizeof cmd, INSPECT " %s | grep -q 'GGUF v3'", model);
    assert_int_equal(tu_run(cmd), 0);
    after = tu_read_file(model, &na);
    assert_int_equal(na, nb);
    assert_memory_equal(before, after, nb);
    free(before); free(after);
    remove(model);
}


/* swa-mkmodel --type takes every name swa-quantize takes. Expected, from ggml.h and llama.h:
   the ggml type id of a matrix with rows of 256, the one llama.cpp falls back to for rows of
   320 (not whole 256-blocks: llama_tensor_get_type), output.weight's (Q6_K for the Q4_K and
   Q5_K mixes) and general.file_type (LLAMA_FTYPE_*). The weights read back through the
   library have the documented spread (uniform, standard deviation 1/sqrt(row length)), and
   the model evaluates. */
static void check_mkmodel_type(const char *name, uint32_t type, uint32_t type_320, uint32_t output, int64_t ftype)
{
    char path[64], cmd[512];
    swa_gguf *g;
    swa_model *m;
    swa_ctx *c;
    swa_error err;
    swa_gguf_value v;
    const swa_gguf_tensor *t;
    const float *logits;
    float *row;
    double ss = 0.0, sd;
    int64_t i, r, got;
    int32_t tok = 3;
    tu_tmp_path(path, sizeof path, "mk");
    snprintf(cmd, sizeof cmd, PROGRAM("swa-mkmodel") " --shape custom --layers 1 --dim 256 --heads 4 --ff 320 --vocab 260 "
             "--ctx 64 --type %s %s 2>/dev/null", name, path);
    if (tu_run(cmd) != 0) fail_msg("%s failed", cmd);
    if (swa_gguf_open(path, &g, &err) != SWA_OK) fail_msg("--type %s: %s", name, err.msg);
    t = swa_gguf_tensor_at(g, swa_gguf_tensor_find(g, "blk.0.attn_q.weight"));
    assert_non_null(t);
    if (t->type != type) fail_msg("--type %s: attn_q is type %u, not %u", name, t->type, type);
    row = (float *)malloc(256 * sizeof *row);
    for (r = 0; r < t->ne[1]; r++) {
        assert_int_equal(swa_dequantize_row(t->type, (const uint8_t *)t->data + r * (int64_t)(t->nbytes / (uint64_t)t->ne[1]),
                                            row, 256), SWA_OK);
        for (i = 0; i < 256; i++) ss += (double)row[i] * row[i];
    }
    sd = sqrt(ss / (256.0 * (double)t->ne[1]));
    if (fabs(sd * 16.0 - 1.0) > 0.05)   /* every type measured within 1% */
        fail_msg("--type %s: weights' deviation %.4f, not 1/16", name, sd);
    free(row);
    t = swa_gguf_tensor_at(g, swa_gguf_tensor_find(g, "blk.0.ffn_down.weight"));
    if (t->type != type_320) fail_msg("--type %s: ffn_down (rows of 320) is type %u, not %u", name, t->type, type_320);
    t = swa_gguf_tensor_at(g, swa_gguf_tensor_find(g, "output.weight"));
    if (t->type != output) fail_msg("--type %s: output is type %u, not %u", name, t->type, output);
    v = swa_gguf_kv_value(g, swa_gguf_kv_find(g, "general.file_type"));
    assert_int_equal(swa_gguf_value_int(&v, &got), SWA_OK);
    if (got != ftype) fail_msg("--type %s: general.file_type %lld, not %lld", name, (long long)got, (long long)ftype);
    assert_int_equal(swa_gguf_kv_find(g, "general.quantization_version") >= 0, type != 0 && type != 1 && type != 30);
    swa_gguf_close(g);
    if (swa_model_load(path, &m, &err) != SWA_OK) fail_msg("--type %s: %s", name, err.msg);
    assert_int_equal(swa_ctx_create(m, NULL, &c, &err), SWA_OK);
    assert_int_equal(swa_ctx_eval(c, &tok, 1, &logits, &err), SWA_OK);
    for (i = 0; i < 260; i++) assert_true(isfinite(logits[i]));
    swa_ctx_free(c);
    swa_model_free(m);
    remove(path);
}

static void test_mkmodel_types(void **state)
{
    enum { F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q2_K = 10, Q3_K = 11, Q4_K = 12,
           Q5_K = 13, Q6_K = 14, IQ4_NL = 20, IQ4_XS = 23, BF16 = 30, MXFP4 = 39 };   /* ggml.h's ids */
    static const struct { const char *name; uint32_t type, type_320, output; int64_t ftype; } cases[] = {
        {"f32", F32, F32, F32, 0},           {"f16", F16, F16, F16, 1},           {"bf16", BF16, BF16, BF16, 32},
        {"q4_0", Q4_0, Q4_0, Q4_0, 2},       {"q4_1", Q4_1, Q4_1, Q4_1, 3},       {"q5_0", Q5_0, Q5_0, Q5_0, 8},
        {"q5_1", Q5_1, Q5_1, Q5_1, 9},       {"q8_0", Q8_0, Q8_0, Q8_0, 7},       {"q2_k", Q2_K, IQ4_NL, Q2_K, 10},
        {"q3_k_s", Q3_K, IQ4_NL, Q3_K, 11},  {"q3_k_m", Q3_K, IQ4_NL, Q3_K, 12},  {"q3_k", Q3_K, IQ4_NL, Q3_K, 12},
        {"q3_k_l", Q3_K, IQ4_NL, Q3_K, 13},  {"q4_k_s", Q4_K, Q5_0, Q6_K, 14},    {"q4_k_m", Q4_K, Q5_0, Q6_K, 15},
        {"q4_k", Q4_K, Q5_0, Q6_K, 15},      {"q5_k_s", Q5_K, Q5_1, Q6_K, 16},    {"q5_k_m", Q5_K, Q5_1, Q6_K, 17},
        {"q5_k", Q5_K, Q5_1, Q6_K, 17},      {"q6_k", Q6_K, Q8_0, Q6_K, 18},      {"iq4_nl", IQ4_NL, IQ4_NL, IQ4_NL, 25},
        {"iq4_xs", IQ4_XS, IQ4_NL, IQ4_XS, 30},      {"mxfp4", MXFP4, MXFP4, MXFP4, 38},  {"mxfp4_moe", MXFP4, MXFP4, MXFP4, 38},
    };
    size_t i;
    char *usage;
    int rc;
    (void)state;
    if (access(PROGRAM_FILE("swa-mkmodel"), X_OK) != 0) fail_msg("%s", "swa-mkmodel is missing: run make first");
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_mkmodel_type(cases[i].name, cases[i].type, cases[i].type_320, cases[i].output, cases[i].ftype);
    /* the same names as swa-quantize's */
    usage = tu_capture(PROGRAM("swa-mkmodel") " --help", &rc);
    assert_int_equal(rc, 0);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!strstr(usage, cases[i].name)) fail_msg("swa-mkmodel --help does not name %s:\n%s", cases[i].name, usage);
    free(usage);
    assert_int_equal(tu_run(PROGRAM("swa-mkmodel") " --shape custom --layers 1 --dim 256 --heads 4 --ff 320 --type q9_k "
                            "/tmp/swa_test_never.gguf 2>/dev/null"), 2);
}

/* swa-mkmodel --vocab-from: the model carries the source file's vocabulary (every piece and its
   type, the merges, BOS and EOS), its embedding and output have a row per token, and it cuts
   llama.cpp's vocabulary test cases (../shared's .inp and .out, made by llama.cpp from the
   source file) into the ids llama.cpp wrote. */
static void check_vocab_from(const char *src)
{
    char path[64], cmd[512];
    const char *text;
    tu_vocab_cases vc;
    size_t n_got, n_want;
    swa_gguf *gs;
    const swa_gguf *gm;
    swa_vocab *vs;
    const swa_vocab *vm;
    swa_model *m;
    swa_error err;
    int32_t id, n, want[1024], got[1024];
    int n_cases = 0;
    tu_tmp_path(path, sizeof path, "vf");
    snprintf(cmd, sizeof cmd, PROGRAM("swa-mkmodel") " --shape custom --layers 1 --dim 64 --heads 2 --ff 64 --ctx 64 "
             "--type q4_0 --vocab-from %s %s 2>/dev/null", src, path);
    if (tu_run(cmd) != 0) fail_msg("%s failed", cmd);
    if (swa_gguf_open(src, &gs, &err) || swa_vocab_load(gs, &vs, &err)) fail_msg("%s: %s", src, err.msg);
    if (swa_model_load(path, &m, &err) || swa_model_vocab(m, &vm, &err)) fail_msg("%s: %s", path, err.msg);
    gm = swa_model_gguf(m);
    n = swa_vocab_size(vs);
    assert_int_equal(swa_vocab_size(vm), n);
    for (id = 0; id < n; id++) {
        swa_str a = swa_vocab_piece(vs, id), b = swa_vocab_piece(vm, id);
        if (a.len != b.len || memcmp(a.ptr, b.ptr, a.len) || swa_vocab_type(vs, id) != swa_vocab_type(vm, id))
            fail_msg("%s: token %d differs", src, (int)id);
    }
    assert_int_equal(swa_vocab_bos(vm), swa_vocab_bos(vs));
    assert_int_equal(swa_vocab_eos(vm), swa_vocab_eos(vs));
    assert_int_equal(swa_vocab_add_bos(vm), swa_vocab_add_bos(vs));
    assert_int_equal(swa_gguf_kv_value(gm, swa_gguf_kv_find(gm, "tokenizer.ggml.merges")).n,
                     swa_gguf_kv_value(gs, swa_gguf_kv_find(gs, "tokenizer.ggml.merges")).n);
    assert_int_equal(swa_gguf_tensor_at(gm, swa_gguf_tensor_find(gm, "token_embd.weight"))->ne[1], n);
    assert_int_equal(swa_gguf_tensor_at(gm, swa_gguf_tensor_find(gm, "output.weight"))->ne[1], n);
    assert_true(tu_vocab_cases_open(&vc, src));
    for (; (text = tu_vocab_case_next(&vc, want, 1024, &n_want)) != NULL; n_cases++) {
        assert_int_equal(swa_tokenize(vm, text, strlen(text), 0, got, 1024, &n_got, &err), SWA_OK);
        if (n_got != n_want || memcmp(got, want, n_got * sizeof *got))
            fail_msg("%s: the model cuts case %d (\"%s\") unlike llama.cpp", src, n_cases, text);
    }
    assert_true(n_cases >= 40);
    tu_vocab_cases_close(&vc);
    swa_model_free(m);
    swa_vocab_free(vs);
    swa_gguf_close(gs);
    remove(path);
}

static void test_mkmodel_vocab_from(void **state)
{
    char path[64], cmd[512];
    gw_writer *w;
    (void)state;
    need_vocab(SPM_VOCAB);
    need_vocab(BPE_VOCAB);
    check_vocab_from(SPM_VOCAB);
    check_vocab_from(BPE_VOCAB);
    /* usage errors: two vocabularies, a file without a token list */
    assert_int_equal(tu_run(PROGRAM("swa-mkmodel") " --shape custom --layers 1 --dim 64 --heads 2 --ff 64 --type q4_0 "
                            "--vocab 300 --vocab-from " SPM_VOCAB " /tmp/swa_test_never.gguf 2>/dev/null"), 2);
    tu_tmp_path(path, sizeof path, "nv");
    assert_non_null(w = gw_new(3));
    gw_kv_str(w, "general.architecture", "llama");
    assert_int_equal(gw_write_file(w, path), 0);
    gw_free(w);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-mkmodel") " --shape custom --layers 1 --dim 64 --heads 2 --ff 64 --type q4_0 "
             "--vocab-from %s /tmp/swa_test_never.gguf 2>/dev/null", path);
    assert_int_equal(tu_run(cmd), 2);
    assert_int_equal(access("/tmp/swa_test_never.gguf", F_OK), -1);
    remove(path);
}

/* swa-quantize's MXFP4 targets: MXFP4_MOE (llama-quantize's spelling, upper case) as llama.cpp's
   llama_tensor_get_type has it, expert tensors (3-D) MXFP4 and every other matrix Q8_0, the
   classifier too; mxfp4 every matrix MXFP4 under q4_0's rules (the classifier Q6_K). Both with
   general.file_type 38 (llama.h's LLAMA_FTYPE_MOSTLY_MXFP4_MOE). */
static void test_quantize_mxfp4(void **state)
{
    static const struct { const char *name; int64_t ne[3]; uint32_t dims, moe, plain; } tensors[] = {
        {"token_embd.weight", {256, 64, 1}, 2, 8, 39},        {"blk.0.attn_norm.weight", {256, 1, 1}, 1, 0, 0},
        {"blk.0.attn_q.weight", {256, 256, 1}, 2, 8, 39},     {"blk.0.ffn_up_exps.weight", {256, 64, 4}, 3, 39, 39},
        {"blk.0.ffn_down_exps.weight", {64, 256, 4}, 3, 39, 39}, {"output.weight", {256, 64, 1}, 2, 8, 14},
    };
    static const char *const targets[2] = {"MXFP4_MOE", "mxfp4"};
    char in[64], out[64], cmd[512];
    float *x = (float *)malloc(256 * 256 * 4 * sizeof *x);
    gw_writer *w = gw_new(3);
    swa_gguf *g;
    swa_error err;
    swa_gguf_value v;
    uint8_t *bytes;
    size_t size, i;
    int64_t got;
    int k;
    (void)state;
    if (access(PROGRAM_FILE("swa-quantize"), X_OK) != 0) fail_msg("%s", "swa-quantize is missing: run make first");
    tu_tmp_path(in, sizeof in, "mxin");
    tu_tmp_path(out, sizeof out, "mxout");
    for (i = 0; i < 256 * 256 * 4; i++) x[i] = (float)((int)(i * 2654435761u % 2001) - 1000) / 1000.0f;
    gw_kv_str(w, "general.architecture", "llama");
    for (i = 0; i < sizeof tensors / sizeof tensors[0]; i++)
        assert_int_equal(gw_tensor_f32(w, tensors[i].name, GW_F32, tensors[i].dims, tensors[i].ne, x), 0);
    bytes = gw_to_memory(w, &size);
    assert_non_null(bytes);
    tu_write_file(in, bytes, size);
    free(bytes);
    gw_free(w);
    for (k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " %s %s %s 2>/dev/null", in, out, targets[k]);
        if (tu_run(cmd) != 0) fail_msg("%s failed", cmd);
        if (swa_gguf_open(out, &g, &err) != SWA_OK) fail_msg("%s: %s", targets[k], err.msg);
        for (i = 0; i < sizeof tensors / sizeof tensors[0]; i++) {
            const swa_gguf_tensor *t = swa_gguf_tensor_at(g, swa_gguf_tensor_find(g, tensors[i].name));
            uint32_t want = k == 0 ? tensors[i].moe : tensors[i].plain;
            assert_non_null(t);
            if (t->type != want) fail_msg("%s: %s is %s, not %s", targets[k], tensors[i].name, swa_type_name(t->type), swa_type_name(want));
        }
        v = swa_gguf_kv_value(g, swa_gguf_kv_find(g, "general.file_type"));
        assert_int_equal(swa_gguf_value_int(&v, &got), SWA_OK);
        assert_int_equal(got, 38);
        swa_gguf_close(g);
    }
    remove(in);
    remove(out);
    free(x);
}

/* What every program shares: --version prints its name and the version the macros make, exit
   0; an unknown flag and a missing argument are usage errors, exit 2; a model given as -m
   where a program reads one; an error names a file once. */
static void test_program_conventions(void **state)
{
    static const char *names[] = {"swa-generate", "swa-inspect", "swa-convert-llama2c", "swa-tokenize",
                                  "swa-perplexity", "swa-quantize", "swa-mkmodel", "swa-bench", "swa-span",
                                  "swa-kbench", "swa-gbnf-validator", "swa-grammar-bench", "swa-spec-bench", "swa-embedding"};
    char cmd[1024], want[128], model[64], out[64], *got;
    size_t i, n;
    int rc;
    uint8_t *bytes;
    (void)state;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(cmd, sizeof cmd, "%s%s%s --version", SWA_TEST_RUN, SWA_TEST_BIN, names[i]);
        got = tu_capture(cmd, &rc);
        snprintf(want, sizeof want, "%s %d.%d.%d\n", names[i], SWA_VERSION_MAJOR, SWA_VERSION_MINOR, SWA_VERSION_PATCH);
        if (rc != 0 || strcmp(got, want)) fail_msg("%s --version: \"%s\", exit %d", names[i], got, rc);
        free(got);
        snprintf(cmd, sizeof cmd, "%s%s%s --frobnicate >/dev/null 2>&1", SWA_TEST_RUN, SWA_TEST_BIN, names[i]);
        if ((rc = tu_run(cmd)) != 2) fail_msg("%s --frobnicate: exit %d, not 2", names[i], rc);
        if (!strcmp(names[i], "swa-kbench") || !strcmp(names[i], "swa-grammar-bench")) continue;   /* run without arguments */
        snprintf(cmd, sizeof cmd, "%s%s%s >/dev/null 2>&1", SWA_TEST_RUN, SWA_TEST_BIN, names[i]);
        if ((rc = tu_run(cmd)) != 2) fail_msg("%s without arguments: exit %d, not 2", names[i], rc);
    }
    /* -m for the input of swa-quantize and swa-inspect */
    {
        tu_spec sp = small_spec(8, NULL, 64);
        model_opts mo;
        mo.version = 3; mo.alignment = 0; mo.vocab = 0;
        tu_tmp_path(model, sizeof model, "m_in");
        write_model(model, &sp, &mo);
    }
    tu_tmp_path(out, sizeof out, "m_out");
    snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " -m %s %s q8_0 2>/dev/null", model, out);
    assert_int_equal(tu_run(cmd), 0);
    bytes = tu_read_file(out, &n);
    assert_true(n > 4 && !memcmp(bytes, "GGUF", 4));
    free(bytes);
    snprintf(cmd, sizeof cmd, INSPECT " -m %s | grep -q 'GGUF v3'", out);
    assert_int_equal(tu_run(cmd), 0);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " -m %s %s %s q8_0 >/dev/null 2>&1", model, out, out);
    assert_int_equal(tu_run(cmd), 2);                     /* -m and three positionals */
    /* a missing input named once */
    got = tu_capture(PROGRAM("swa-quantize") " /nonexistent/in.gguf /tmp/never.gguf q8_0 2>&1", &rc);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(got, "/nonexistent/in.gguf"));
    if (strstr(strstr(got, "/nonexistent/in.gguf") + 1, "/nonexistent/in.gguf")) fail_msg("the path twice: %s", got);
    free(got);
    remove(model);
    remove(out);
}

/* ---- Ctrl-C, directories, llama-quantize's names ---- */

#define SHIPPED "examples/models/swa-stories.gguf"

/* The programs, and the shipped model (with its held-out text when heldout): 0, after a message
   that the test is skipped, when those files are absent. */
static int need_shipped(int heldout)
{
    need_programs();
    if (access(SHIPPED, R_OK) != 0 || (heldout && access("examples/models/heldout.txt", R_OK) != 0)) {
        print_message("skipped: the shipped model%s is absent\n", heldout ? " or its held-out text" : "");
        return 0;
    }
    return 1;
}

/* swa-batched-bench takes llama-batched-bench's -npp, -ntg and -npl for its -p, -n and -b: the
   same table rows (PP, TG, B and N_KV), and a list where it takes one length is a usage error. */
static void test_batched_bench_spellings(void **state)
{
    char *ours, *theirs;
    int rc;
    (void)state;
    if (!need_shipped(0)) return;
    ours = tu_capture(PROGRAM("swa-batched-bench") " -m " SHIPPED " -p 16 -n 4 -b 1,2 -r 1 -t 1 2>/dev/null | cut -c1-37", &rc);
    assert_int_equal(rc, 0);
    theirs = tu_capture(PROGRAM("swa-batched-bench") " -m " SHIPPED " -npp 16 -ntg 4 -npl 1,2 -r 1 -t 1 2>/dev/null | cut -c1-37",
                        &rc);
    assert_int_equal(rc, 0);
    if (!strstr(ours, "|    16 |      4 |    2 |     40 |")) fail_msg("no row for 2 sequences in:\n%s", ours);
    assert_string_equal(ours, theirs);
    free(ours);
    free(theirs);
    assert_int_equal(tu_run(PROGRAM("swa-batched-bench") " -m " SHIPPED " -npp 16,32 >/dev/null 2>&1"), 2);
}

/* Ctrl-C while swa-perplexity evaluates a long text stops it within a layer (the abort
   callback): exit 130, no result on stdout, within tu_stop_limit(). The text is the shipped
   held-out text 12 times, seconds of evaluation; the signal goes once the summary line says the
   evaluation starts. */
static void test_perplexity_interrupt(void **state)
{
    char text[64], err[64], out[64], cmd[1024], *log, *body;
    size_t n, k;
    uint8_t *held;
    pid_t pid;
    double t0, latency;
    int rc;
    (void)state;
    if (!need_shipped(1)) return;
    held = tu_read_file("examples/models/heldout.txt", &n);
    body = (char *)malloc(12 * n);
    assert_non_null(body);
    for (k = 0; k < 12; k++) memcpy(body + k * n, held, n);
    tu_tmp_path(text, sizeof text, "ppl_text");
    tu_tmp_path(err, sizeof err, "ppl_err");
    tu_tmp_path(out, sizeof out, "ppl_out");
    tu_write_file(text, body, 12 * n);
    snprintf(cmd, sizeof cmd, "exec " PERPLEXITY " -m " SHIPPED " -f %s > %s 2> %s", text, out, err);
    pid = tu_spawn(cmd, -1);
    if (!tu_wait_for_text(err, "to score", 60)) {
        kill(pid, SIGKILL);
        tu_wait(pid, 10);
        fail_msg("%s", "swa-perplexity never started scoring");
    }
    tu_sleep(0.2);
    t0 = tu_seconds();
    kill(pid, SIGINT);
    rc = tu_wait(pid, 30);
    latency = tu_seconds() - t0;
    log = tu_read_text(err, NULL);
    print_message("swa-perplexity: SIGINT to exit %.1f ms\n", latency * 1e3);
    if (rc != 130 || !strstr(log, "swa-perplexity: interrupted after")) fail_msg("exit %d; stderr:\n%s", rc, log);
    free(log);
    log = tu_read_text(out, NULL);
    if (strstr(log, "perplexity:")) fail_msg("an interrupted run printed a result: %s", log);
    free(log);
    if (latency > tu_stop_limit()) fail_msg("SIGINT took %.3f s to end swa-perplexity", latency);
    free(held); free(body);
    remove(text); remove(err); remove(out);
}

/* A directory as the text: exit 1, named; a usage error: one line that points at --help. */
static void test_tools_input_and_usage(void **state)
{
    char *log;
    int rc;
    (void)state;
    need_programs();
    log = tu_capture(TOKENIZE " -m x.gguf -f /tmp 2>&1", &rc);
    if (rc != 1 || !strstr(log, "cannot read /tmp")) fail_msg("swa-tokenize -f /tmp: exit %d, %s", rc, log);
    free(log);
    log = tu_capture(PERPLEXITY " -m x.gguf -f /tmp 2>&1", &rc);
    if (rc != 1 || !strstr(log, "cannot read /tmp")) fail_msg("swa-perplexity -f /tmp: exit %d, %s", rc, log);
    free(log);
    log = tu_capture(PERPLEXITY " --frobnicate 2>&1", &rc);
    if (rc != 2 || strcmp(log, "swa-perplexity: unknown flag --frobnicate (see swa-perplexity --help)\n"))
        fail_msg("a usage error: exit %d, \"%s\"", rc, log);
    free(log);
    log = tu_capture(PROGRAM("swa-quantize") " a.gguf 2>&1", &rc);
    if (rc != 2 || strcmp(log, "swa-quantize: want IN.gguf [OUT.gguf] TYPE [NTHREADS] (see swa-quantize --help)\n"))
        fail_msg("a usage error: exit %d, \"%s\"", rc, log);
    free(log);
}

/* swa-kbench --peak: a table of the instructions' peaks (every row a positive rate), then a row
   of Q4_0's prompt kernels for each SIMD set; a bad value is a usage error. A 4-token chunk
   and short peaks keep it to a second or two. */
static void test_kbench_peak(void **state)
{
    char *log, *at;
    int rc, peaks = 0, rows = 0;
    (void)state;
    need_programs();
    log = tu_capture(PROGRAM("swa-kbench") " --peak --type q4_0 --tokens 4 --reps 1 --ms 10 -t 2 2>&1", &rc);
    if (rc != 0 || !strstr(log, "| instruction | multiply-adds per instruction |")) fail_msg("swa-kbench --peak: exit %d, %s", rc, log);
    for (at = strchr(log, '\n'); at; at = strchr(at + 1, '\n')) {
        double one = 0, two = 0;
        int macs = 0;
        char name[64];
        if (sscanf(at + 1, "| %63[^|]| %d | %lf | %lf |", name, &macs, &one, &two) == 4) {
            if (macs <= 0 || one <= 0 || two <= 0) fail_msg("a peak row without a rate: %.80s", at + 1);
            peaks++;
        }
        if (!strncmp(at + 1, "| Q4_0 | ", 9)) rows++;
    }
#if defined(__x86_64__) || defined(__aarch64__)
    if (peaks == 0 || rows == 0) fail_msg("swa-kbench --peak: %d peaks, %d Q4_0 rows: %s", peaks, rows, log);
#endif
    free(log);
    log = tu_capture(PROGRAM("swa-kbench") " --peak --tokens 0 2>&1", &rc);
    if (rc != 2) fail_msg("swa-kbench --peak --tokens 0: exit %d, %s", rc, log);
    free(log);
}

/* llama-quantize's type names as it prints them (Q4_K_M) and its file type numbers (15 for
   LLAMA_FTYPE_MOSTLY_Q4_K_M, 16 for Q5_K_S, 7 for Q8_0: llama.h) give the file the lower-case
   name gives, byte for byte. */
static void test_quantize_llama_names(void **state)
{
    static const char *names[][3] = {{"q4_k_m", "Q4_K_M", "15"}, {"q5_k_s", "Q5_K_S", "16"}, {"q8_0", "Q8_0", "7"}};
    char model[64], a[64], b[64], cmd[1024];
    tu_spec sp = small_spec(8, NULL, 64);
    model_opts mo;
    size_t i, k;
    (void)state;
    mo.version = 3; mo.alignment = 0; mo.vocab = 0;
    tu_tmp_path(model, sizeof model, "q_in");
    tu_tmp_path(a, sizeof a, "q_a");
    tu_tmp_path(b, sizeof b, "q_b");
    write_model(model, &sp, &mo);
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " %s %s %s 2>/dev/null", model, a, names[i][0]);
        assert_int_equal(tu_run(cmd), 0);
        for (k = 1; k < 3; k++) {
            snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " %s %s %s 2>/dev/null && cmp -s %s %s", model, b,
                     names[i][k], a, b);
            if (tu_run(cmd) != 0) fail_msg("swa-quantize %s does not write what %s writes", names[i][k], names[i][0]);
        }
    }
    assert_int_equal(tu_run(PROGRAM("swa-quantize") " x.gguf y.gguf Q9_K 2>/dev/null"), 2);
    assert_int_equal(tu_run(PROGRAM("swa-quantize") " x.gguf y.gguf 99 2>/dev/null"), 2);
    remove(model); remove(a); remove(b);
}

/* ---- llama.cpp's spellings, and the progress line ---- */

/* llama-tokenize's flags: --ids prints [1, 2, 3] as it does (ids of "Hello world" from
   llama.cpp's ggml-vocab-llama-spm.gguf.out), --show-count its "Total number of tokens" line,
   --stdin, --model, --prompt and --file read what -f -, -m, -p and -f read, --log-disable leaves
   stderr empty, --no-escape and --no-parse-special change nothing (they ask for our default),
   and flags that ask for opposite things are a usage error. */
static void test_tokenize_llama_spellings(void **state)
{
    char text[64], cmd[1024], *out;
    int rc;
    (void)state;
    need_programs();
    need_vocab(SPM_VOCAB);
    expect_stdout(TOKENIZE " -m " SPM_VOCAB " -p 'Hello world' --ids 2>/dev/null", "[1, 15043, 3186]\n");
    expect_stdout(TOKENIZE " -m " SPM_VOCAB " -p 'Hello world' --show-count 2>/dev/null",
                  "1 15043 3186\nTotal number of tokens: 3\n");
    expect_stdout("printf 'Hello world' | " TOKENIZE " -m " SPM_VOCAB " --stdin 2>/dev/null", "1 15043 3186\n");
    expect_stdout(TOKENIZE " --model " SPM_VOCAB " --prompt 'Hello world' --no-escape --no-parse-special 2>/dev/null",
                  "1 15043 3186\n");
    tu_tmp_path(text, sizeof text, "tok_text");
    tu_write_file(text, "Hello world", 11);
    snprintf(cmd, sizeof cmd, TOKENIZE " -m " SPM_VOCAB " --file %s --no-bos 2>/dev/null", text);
    expect_stdout(cmd, "15043 3186\n");
    remove(text);
    expect_stdout(TOKENIZE " -m " SPM_VOCAB " -p 'Hello world' --log-disable 2>&1", "1 15043 3186\n");
    /* "\n" stays two characters, as llama-tokenize --no-escape leaves it ([263, 29905, 9877]
       there), and "</s>" plain text as with its --no-parse-special ([15043, 829, 29879, 29958]) */
    expect_stdout(TOKENIZE " -m " SPM_VOCAB " -p 'a\\nb' --no-bos --no-escape 2>/dev/null", "263 29905 9877\n");
    expect_stdout(TOKENIZE " -m " SPM_VOCAB " -p 'Hello</s>' --no-bos --no-parse-special --ids 2>/dev/null",
                  "[15043, 829, 29879, 29958]\n");
    out = tu_capture(TOKENIZE " -m " SPM_VOCAB " -p x --special --no-parse-special 2>&1", &rc);
    if (rc != 2 || !strstr(out, "--special and --no-parse-special")) fail_msg("exit %d, %s", rc, out);
    free(out);
    assert_int_equal(tu_run(TOKENIZE " -m " SPM_VOCAB " -p x --ids --pieces 2>/dev/null"), 2);
    assert_int_equal(tu_run(TOKENIZE " -m " SPM_VOCAB " -p x --stdin 2>/dev/null </dev/null"), 2);
}

/* llama-perplexity's spellings: --model, --file, --ctx-size, --threads and --batch-size give
   what -m, -f, -c, -t and -b give; --chunks 2 with -c 256 scores the first 2 x 256 tokens (511
   predictions); --log-disable leaves only the result; its other tasks are refused, by name. */
static void test_perplexity_llama_spellings(void **state)
{
    char *ours, *theirs, *log;
    int rc;
    (void)state;
    if (!need_shipped(1)) return;
    ours = tu_capture(PERPLEXITY " -m " SHIPPED " -f examples/models/heldout.txt -c 256 -t 1 -b 32 --chunks 2 2>/dev/null", &rc);
    assert_int_equal(rc, 0);
    if (!strstr(ours, "over 511 tokens")) fail_msg("--chunks 2 -c 256: %s", ours);
    theirs = tu_capture(PERPLEXITY " --model " SHIPPED " --file examples/models/heldout.txt --ctx-size 256 --threads 1 "
                        "--batch-size 32 --chunks 2 --log-disable 2>&1", &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(ours, theirs);
    free(ours);
    free(theirs);
    log = tu_capture(PERPLEXITY " -m x.gguf -f y.txt --hellaswag 2>&1", &rc);
    if (rc != 2 || !strstr(log, "--hellaswag: swa-perplexity does not do HellaSwag")) fail_msg("exit %d, %s", rc, log);
    free(log);
    assert_int_equal(tu_run(PERPLEXITY " -m x.gguf -f y.txt --chunks 0 2>/dev/null"), 2);
}

/* The type of tensor `name` in a GGUF file. */
static uint32_t tensor_type(const char *path, const char *name)
{
    swa_gguf *g;
    swa_error err;
    int64_t i;
    uint32_t type;
    if (swa_gguf_open(path, &g, &err) != SWA_OK) fail_msg("%s: %s", path, err.msg);
    i = swa_gguf_tensor_find(g, name);
    assert_true(i >= 0);
    type = swa_gguf_tensor_at(g, i)->type;
    swa_gguf_close(g);
    return type;
}

/* llama-quantize's command line: IN TYPE writes ggml-model-TYPE.gguf beside IN, and IN OUT
   TYPE NTHREADS the same bytes as -t; --output-tensor-type and --token-embedding-type set those
   two matrices, --leave-output-tensor copies output.weight, --pure drops the mix's classifier
   rule (rows of 32: Q4_K falls back to Q5_0, Q6_K to Q8_0); importance matrices are refused. */
static void test_quantize_llama_spellings(void **state)
{
    char dir[64] = "/tmp/swa_test_qdir_XXXXXX", model[128], a[128], b[128], cmd[1024], *log;
    tu_spec sp = small_spec(8, NULL, 64);
    model_opts mo;
    int rc;
    (void)state;
    need_programs();
    mo.version = 3; mo.alignment = 0; mo.vocab = 0;
    assert_non_null(mkdtemp(dir));
    snprintf(model, sizeof model, "%s/in.gguf", dir);
    snprintf(a, sizeof a, "%s/a.gguf", dir);
    snprintf(b, sizeof b, "%s/ggml-model-Q8_0.gguf", dir);
    write_model(model, &sp, &mo);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " %s %s q8_0 -t 2 2>/dev/null", model, a);
    assert_int_equal(tu_run(cmd), 0);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " %s Q8_0 2>/dev/null && cmp -s %s %s", model, a, b);
    if (tu_run(cmd) != 0) fail_msg("swa-quantize IN Q8_0 did not write %s as IN OUT q8_0 does", b);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " %s %s q8_0 2 2>/dev/null && cmp -s %s %s", model, b, a, b);
    if (tu_run(cmd) != 0) fail_msg("%s", "swa-quantize IN OUT q8_0 2 differs from -t 2");
    assert_int_equal(tensor_type(a, "output.weight"), GW_Q8_0);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " --output-tensor-type f16 --token-embedding-type Q4_0 %s %s q8_0 2>/dev/null",
             model, a);
    assert_int_equal(tu_run(cmd), 0);
    assert_int_equal(tensor_type(a, "output.weight"), GW_F16);
    assert_int_equal(tensor_type(a, "token_embd.weight"), GW_Q4_0);
    assert_int_equal(tensor_type(a, "blk.0.attn_q.weight"), GW_Q8_0);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " --leave-output-tensor %s %s q8_0 2>/dev/null", model, a);
    assert_int_equal(tu_run(cmd), 0);
    assert_int_equal(tensor_type(a, "output.weight"), GW_F32);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " %s %s q4_k_m 2>/dev/null", model, a);
    assert_int_equal(tu_run(cmd), 0);
    assert_int_equal(tensor_type(a, "output.weight"), GW_Q8_0);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " --pure %s %s q4_k_m 2>/dev/null", model, a);
    assert_int_equal(tu_run(cmd), 0);
    assert_int_equal(tensor_type(a, "output.weight"), GW_Q5_0);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " --imatrix x.dat %s %s q4_0 2>&1", model, a);
    log = tu_capture(cmd, &rc);
    if (rc != 2 || !strstr(log, "--imatrix: swa-quantize does not do importance matrices")) fail_msg("exit %d, %s", rc, log);
    free(log);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " --output-tensor-type q9_9 %s %s q4_0 >/dev/null 2>&1", model, a);
    assert_int_equal(tu_run(cmd), 2);
    remove(model); remove(a); remove(b); rmdir(dir);
}

/* llama-bench's spellings: -o csv writes a header and a row, -o json an array, --model,
   --n-prompt, --n-gen, --repetitions and -mmp 0 are taken; its lists and GPU flags are refused. */
static void test_bench_llama_spellings(void **state)
{
    char *out;
    int rc;
    (void)state;
    if (!need_shipped(0)) return;
    out = tu_capture(PROGRAM("swa-bench") " --model " SHIPPED " --n-prompt 8 --n-gen 2 --repetitions 1 -t 1 -mmp 0 -o csv 2>/dev/null",
                     &rc);
    if (rc != 0 || strncmp(out, "model,type,load,threads,kernels,n_prompt,pp_ts,", 47) ||
        !strstr(out, "\n\"swa-stories.gguf\",Q8_0,read,1,"))
        fail_msg("-o csv: exit %d, %s", rc, out);
    free(out);
    out = tu_capture(PROGRAM("swa-bench") " -m " SHIPPED " -p 8 -n 0 -r 1 -t 1 -o json 2>/dev/null", &rc);
    if (rc != 0 || !strstr(out, "[\n  {\"model\": \"swa-stories.gguf\", \"type\": \"Q8_0\", \"load\": \"mmap\"") || *out != '[' ||
        strcmp(out + strlen(out) - 3, "\n]\n"))
        fail_msg("-o json: exit %d, %s", rc, out);
    free(out);
    out = tu_capture(PROGRAM("swa-bench") " -m x.gguf -p 128,512 2>&1", &rc);
    if (rc != 2 || !strstr(out, "takes one value")) fail_msg("a list: exit %d, %s", rc, out);
    free(out);
    out = tu_capture(PROGRAM("swa-bench") " -m x.gguf -ngl 99 2>&1", &rc);
    if (rc != 2 || !strstr(out, "-ngl: swa-bench does not do GPU offload")) fail_msg("-ngl: exit %d, %s", rc, out);
    free(out);
    assert_int_equal(tu_run(PROGRAM("swa-bench") " -m x.gguf -o xml 2>/dev/null"), 2);
}

/* The progress line: with stderr a file, none of it (not a '\r' in stderr), even when it would
   be drawn at once (SWA_PROGRESS_DELAY=0); under a pseudo-terminal (util-linux script) it is
   drawn for the prompt ("\rprompt: 64/N tokens, ... left"), for scoring and for quantizing, and
   wiped at the end ('\r', spaces, '\r'); --no-progress draws none. */
static void test_progress_line(void **state)
{
    char text[64], err[64], model[64], out[64], cmd[1024], *log;
    size_t n;
    uint8_t *held;
    int rc;
    (void)state;
    if (!need_shipped(1)) return;
    held = tu_read_file("examples/models/heldout.txt", &n);
    tu_tmp_path(text, sizeof text, "prog_text");
    tu_tmp_path(err, sizeof err, "prog_err");
    tu_write_file(text, held, n < 3000 ? n : 3000);   /* ~800 tokens: several lines of each kind */
    snprintf(cmd, sizeof cmd, "SWA_PROGRESS_DELAY=0 " GENERATE " -m " SHIPPED " -f %s -n 2 -s 1 >/dev/null 2>%s", text, err);
    assert_int_equal(tu_run(cmd), 0);
    log = tu_read_text(err, NULL);
    if (strchr(log, '\r') || strstr(log, " left")) fail_msg("a progress line in a file:\n%s", log);
    free(log);
    snprintf(cmd, sizeof cmd, "SWA_PROGRESS_DELAY=0 " PERPLEXITY " -m " SHIPPED " -f %s >/dev/null 2>%s", text, err);
    assert_int_equal(tu_run(cmd), 0);
    log = tu_read_text(err, NULL);
    if (strchr(log, '\r') || !strstr(log, "[256/")) fail_msg("swa-perplexity's stderr in a file:\n%s", log);
    free(log);
    if (tu_run("script -qc true /dev/null >/dev/null 2>&1") != 0) {
        print_message("skipped: no util-linux script for a pseudo-terminal: the drawn line was not checked\n");
        free(held); remove(text); remove(err);
        return;
    }
    snprintf(cmd, sizeof cmd, "SWA_PROGRESS_DELAY=0 script -qc '" GENERATE " -m " SHIPPED " -f %s -n 2 -s 1 >/dev/null' /dev/null",
             text);
    log = tu_capture(cmd, &rc);
    if (rc != 0 || !strstr(log, "\rprompt: 64/") || !strstr(log, " tokens/s, ") || !strstr(log, " left") ||
        !strstr(log, "\r          "))
        fail_msg("no progress line under a terminal: exit %d\n%s", rc, log);
    /* wiped before the timings */
    if (!strstr(log, "\r\rprompt: ") && !strstr(strstr(log, "          \r"), "prompt: "))
        fail_msg("the line was not wiped:\n%s", log);
    free(log);
    snprintf(cmd, sizeof cmd, "SWA_PROGRESS_DELAY=0 script -qc '" GENERATE " -m " SHIPPED " -f %s -n 2 -s 1 --no-progress >/dev/null' "
             "/dev/null", text);
    log = tu_capture(cmd, &rc);
    if (rc != 0 || strstr(log, " left")) fail_msg("--no-progress drew a line:\n%s", log);
    free(log);
    snprintf(cmd, sizeof cmd, "SWA_PROGRESS_DELAY=0 script -qc '" PERPLEXITY " -m " SHIPPED " -f %s' /dev/null", text);
    log = tu_capture(cmd, &rc);
    if (rc != 0 || !strstr(log, "\rscoring (ppl ") || strstr(log, "[256/") || !strstr(log, "perplexity: "))
        fail_msg("swa-perplexity under a terminal: exit %d\n%s", rc, log);
    free(log);
    tu_tmp_path(model, sizeof model, "prog_in");
    tu_tmp_path(out, sizeof out, "prog_out");
    {
        tu_spec sp = small_spec(8, NULL, 64);
        model_opts mo;
        mo.version = 3; mo.alignment = 0; mo.vocab = 0;
        write_model(model, &sp, &mo);
    }
    snprintf(cmd, sizeof cmd, "SWA_PROGRESS_DELAY=0 script -qc '" PROGRAM("swa-quantize") " %s %s q4_0' /dev/null", model, out);
    log = tu_capture(cmd, &rc);
    if (rc != 0 || !strstr(log, "\rquantizing: ") || !strstr(log, " MB/s, ")) fail_msg("swa-quantize under a terminal:\n%s", log);
    free(log);
    free(held);
    remove(text); remove(err); remove(model); remove(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokenize_llama_ids),
        cmocka_unit_test(test_tokenize_pieces_and_special),
        cmocka_unit_test(test_tokenize_own_vocab),
        cmocka_unit_test(test_tokenize_errors),
        cmocka_unit_test(test_perplexity_windowed),
        cmocka_unit_test(test_perplexity_full_attention),
        cmocka_unit_test(test_perplexity_errors),
        cmocka_unit_test(test_set_window),
        cmocka_unit_test(test_set_window_errors),
        cmocka_unit_test(test_sidebyside),
        cmocka_unit_test(test_sidebyside_batched),
        cmocka_unit_test(test_mkmodel_types),
        cmocka_unit_test(test_mkmodel_vocab_from),
        cmocka_unit_test(test_quantize_mxfp4),
        cmocka_unit_test(test_program_conventions),
        cmocka_unit_test(test_batched_bench_spellings),
        cmocka_unit_test(test_perplexity_interrupt),
        cmocka_unit_test(test_tools_input_and_usage),
        cmocka_unit_test(test_quantize_llama_names),
        cmocka_unit_test(test_kbench_peak),
        cmocka_unit_test(test_tokenize_llama_spellings),
        cmocka_unit_test(test_perplexity_llama_spellings),
        cmocka_unit_test(test_quantize_llama_spellings),
        cmocka_unit_test(test_bench_llama_spellings),
        cmocka_unit_test(test_progress_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
