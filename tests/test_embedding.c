#define _POSIX_C_SOURCE 200809L   /* mkstemp, popen */
/* Embeddings against llama.cpp, and build/swa-embedding as a user runs it.
   tests/data/embed-gemma-embedding-llamacpp.ref holds what the December 2025 llama.cpp computes
   (tools/reference/llamacpp_embed.cpp) for a text on a random-weight EmbeddingGemma file with
   dense projections: its token ids and the mean-, last- and cls-pooled unit vectors. swa-mkmodel
   writes the same file from the arguments stored there; the library (swa_tokenize,
   swa_ctx_embed, both kernel sets) and swa-embedding must give the same ids and vectors within
   float rounding (llama.cpp's GELU goes through an F16 table). On the shipped model:
   --embd-normalize's scalings against arithmetic done here on the unscaled output, the output
   formats parsed, several prompts and separators, and bad flags refused with a message. */
#define SWA_INTERNALS   /* swa__json_parse reads the program's JSON */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"   /* testutil.h's model builder needs it */

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

#define REF "tests/data/embed-gemma-embedding-llamacpp.ref"
#define SHIPPED "examples/models/swa-stories.gguf"
#define EMBED PROGRAM("swa-embedding")
#define MIN_COSINE 0.9999
#define MAX_ABS 5e-4   /* llama.cpp's GELU is read from an F16 table: errors of ~1e-4 on unit vectors */

/* The poolings the reference holds, in its order. */
static const struct { const char *name, *tag; int32_t id; } POOLS[3] = {
    {"mean", "\nmean: ", SWA_POOL_MEAN}, {"last", "\nlast: ", SWA_POOL_LAST}, {"cls", "\ncls: ", SWA_POOL_CLS}};

typedef struct ref {
    char args[512], text[256];
    int n, d;
    int32_t tokens[256];
    float want[3][256];   /* mean, last, cls: the order of POOLS */
} ref;

/* The numbers after "tag: COUNT" on its line of s, at most cap of them; the count. */
static int read_numbers(const char *s, const char *tag, double *out, int cap)
{
    const char *p = strstr(s, tag);
    char *end;
    long count;
    int i;
    if (!p) fail_msg(REF ": no \"%s\" line", tag);
    count = strtol(p + strlen(tag), &end, 10);
    if (count <= 0 || count > cap) fail_msg(REF ": %s count %ld out of 1..%d", tag, count, cap);
    for (i = 0; i < count; i++) {
        p = end;
        out[i] = strtod(p, &end);
        if (end == p) fail_msg(REF ": %s: value %d missing", tag, i);
    }
    return (int)count;
}

/* A line "tag: rest" of s, copied whole. */
static void read_line(const char *s, const char *tag, char *out, size_t cap)
{
    const char *p = strstr(s, tag);
    size_t len;
    if (!p) fail_msg(REF ": no \"%s\" line", tag);
    p += strlen(tag);
    len = strcspn(p, "\n");
    if (len >= cap) fail_msg(REF ": %s line too long", tag);
    memcpy(out, p, len);
    out[len] = '\0';
}

static void read_ref(ref *r)
{
    size_t size;
    char *s = tu_read_text(REF, &size);
    double v[256];
    int i, k;
    if (!s || strncmp(s, "swa-embed-ref 1\n", 16) != 0) fail_msg(REF ": cannot read it, or a bad header (run from the repository root)");
    read_line(s, "\nmkmodel: ", r->args, sizeof r->args);
    read_line(s, "\ntext: ", r->text, sizeof r->text);
    r->n = read_numbers(s, "\ntokens: ", v, 256);
    for (i = 0; i < r->n; i++) r->tokens[i] = (int32_t)v[i];
    for (k = 0; k < 3; k++) {
        r->d = read_numbers(s, POOLS[k].tag, v, 256);
        for (i = 0; i < r->d; i++) r->want[k][i] = (float)v[i];
    }
    free(s);
}

/* The file of the reference, written by swa-mkmodel into path. */
static void make_file(const ref *r, char *path, size_t cap)
{
    char cmd[1024];
    tu_tmp_path(path, cap, "embed");
    snprintf(cmd, sizeof cmd, "%s %s %s 2>/dev/null", PROGRAM("swa-mkmodel"), r->args, path);
    if (system(cmd) != 0) fail_msg("failed: %s", cmd);
}

static double dot(const float *a, const float *b, int d)
{
    double s = 0;
    int i;
    for (i = 0; i < d; i++) s += (double)a[i] * b[i];
    return s;
}

static void check_close(const char *what, const float *got, const float *want, int d)
{
    double cos = dot(got, want, d) / sqrt(dot(got, got, d) * dot(want, want, d)), e = 0;
    int i;
    for (i = 0; i < d; i++) e = fabs((double)got[i] - want[i]) > e ? fabs((double)got[i] - want[i]) : e;
    if (cos < MIN_COSINE || e > MAX_ABS) fail_msg("%s: cosine %.7f, max |diff| %.3g against llama.cpp", what, cos, e);
    print_message("%s: cosine %.9f, max |diff| %.3g\n", what, cos, e);
}

/* ---- the library ---- */

static void test_library_vs_llamacpp(void **state)
{
    ref r;
    char path[64];
    swa_model *m;
    const swa_vocab *v;
    swa_error err;
    int32_t ids[256];
    size_t n;
    float got[256];
    int kern, pool;
    (void)state;
    read_ref(&r);
    make_file(&r, path, sizeof path);
    if (swa_model_load(path, &m, &err) != SWA_OK) fail_msg("%s: %s", r.args, err.msg);
    remove(path);
    assert_int_equal(swa_model_hparams(m)->n_embd, r.d);
    assert_int_equal(swa_model_vocab(m, &v, &err), SWA_OK);
    /* llama-embedding's tokenization: BOS as the vocabulary asks, control tokens parsed */
    assert_int_equal(swa_tokenize(v, r.text, strlen(r.text), SWA_TOKENIZE_ADD_BOS | SWA_TOKENIZE_SPECIAL, ids, 256, &n, &err),
                     SWA_OK);
    assert_int_equal(n, r.n);
    assert_memory_equal(ids, r.tokens, n * sizeof(int32_t));
    for (kern = 0; kern < 2; kern++) {
        swa_ctx_config cfg = swa_ctx_config_default(m);
        swa_ctx *c;
        cfg.kv_type = SWA_KV_F32;
        cfg.n_batch = r.n;
        cfg.kernels = kern ? SWA_KERNELS_REF : SWA_KERNELS_BEST;
        if (swa_ctx_create(m, &cfg, &c, &err) != SWA_OK) fail_msg("ctx: %s", err.msg);
        for (pool = 0; pool < 3; pool++) {
            char what[64];
            if (swa_ctx_embed(c, 0, r.tokens, (size_t)r.n, POOLS[pool].id, 1, got, &err) != SWA_OK)
                fail_msg("embed: %s", err.msg);
            snprintf(what, sizeof what, "swa_ctx_embed, %s pooling, %s kernels", POOLS[pool].name, kern ? "ref" : "best");
            check_close(what, got, r.want[pool], r.d);
        }
        swa_ctx_free(c);
    }
    swa_model_free(m);
}

/* ---- swa-embedding ---- */

static void need_program(void)
{
    if (access(PROGRAM_FILE("swa-embedding"), X_OK) != 0) fail_msg("%s", "build/swa-embedding is missing (make build/swa-embedding)");
}

/* The vectors of `swa-embedding ARGS --embd-output-format array`: *n rows of *d, malloc'd. */
static float *run_array(const char *args, int *n, int *d)
{
    char cmd[2048], *out;
    swa__json *j = NULL;
    swa_error err;
    float *v;
    size_t i, k;
    int rc;
    snprintf(cmd, sizeof cmd, "%s %s --embd-output-format array 2>/dev/null", EMBED, args);
    out = tu_capture(cmd, &rc);
    if (rc != 0) fail_msg("exit %d: %s", rc, cmd);
    if (swa__json_parse(out, strlen(out), &j, &err) != SWA_OK) fail_msg("%s: not JSON: %s", cmd, err.msg);
    if (j->kind != SWA__JSON_ARRAY || j->n == 0 || j->items[0].kind != SWA__JSON_ARRAY) fail_msg("%s: not an array of arrays", cmd);
    *n = (int)j->n;
    *d = (int)j->items[0].n;
    v = (float *)malloc(j->n * j->items[0].n * sizeof(float));
    assert_non_null(v);
    for (i = 0; i < j->n; i++) {
        if (j->items[i].kind != SWA__JSON_ARRAY || j->items[i].n != (size_t)*d) fail_msg("%s: row %zu is not %d numbers", cmd, i, *d);
        for (k = 0; k < (size_t)*d; k++) v[i * (size_t)*d + k] = (float)j->items[i].items[k].num;
    }
    free(j);
    free(out);
    return v;
}

static void test_program_vs_llamacpp(void **state)
{
    ref r;
    char path[64], args[1024], cmd[1200], *log;
    int pool, n, d, rc;
    float *v;
    (void)state;
    need_program();
    read_ref(&r);
    make_file(&r, path, sizeof path);
    for (pool = 0; pool < 3; pool++) {   /* mean: the file's pooling_type */
        char what[64];
        snprintf(args, sizeof args, "-m %s -p '%s' -t 1%s%s", path, r.text, pool ? " --pooling " : "", pool ? POOLS[pool].name : "");
        v = run_array(args, &n, &d);
        assert_int_equal(n, 1);
        assert_int_equal(d, r.d);
        snprintf(what, sizeof what, "swa-embedding, %s pooling", POOLS[pool].name);
        check_close(what, v, r.want[pool], d);
        free(v);
    }
    /* the tokens it lists are llama.cpp's */
    snprintf(cmd, sizeof cmd, "%s -m %s -p '%s' --verbose-prompt 2>&1 >/dev/null", EMBED, path, r.text);
    log = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    snprintf(args, sizeof args, "number of tokens in prompt = %d\n", r.n);
    if (!strstr(log, args)) fail_msg("--verbose-prompt: no \"%s\" in %s", args, log);
    for (n = 0; n < r.n; n++) {
        snprintf(args, sizeof args, "\n%6d -> '", r.tokens[n]);
        if (!strstr(log, args)) fail_msg("--verbose-prompt: token %d (%d) not listed: %s", n, r.tokens[n], log);
    }
    free(log);
    /* its global layer keeps -c positions: a longer prompt (the first fits) is an error naming it */
    snprintf(cmd, sizeof cmd, "%s -m %s -p 'one|||two words and more' --embd-separator '|||' -c 6 2>&1", EMBED, path);
    log = tu_capture(cmd, &rc);
    if (rc != 1 || !strstr(log, "swa-embedding: prompt 1 (")) fail_msg("-c 6: exit %d, %s", rc, log);
    free(log);
    remove(path);
}

#define TWO_PROMPTS "-m " SHIPPED " -p 'Once upon a time|||The little cat sat on the mat.' --embd-separator '|||' -t 1"

/* common_embd_normalize on the unscaled vectors, in double. */
static void scale_like_llamacpp(const float *raw, double *out, int d, int how)
{
    double sum = 0;
    int i;
    for (i = 0; i < d; i++) {
        if (how == 0) sum = fabs((double)raw[i]) > sum ? fabs((double)raw[i]) : sum;
        else sum += pow(fabs((double)raw[i]), how);
    }
    sum = how == 0 ? sum / 32760.0 : pow(sum, 1.0 / how);
    for (i = 0; i < d; i++) out[i] = raw[i] / sum;
}

static void test_normalize(void **state)
{
    static const int hows[] = {0, 1, 2, 3, 7};
    char args[512];
    int n, d, n2, d2, k, i;
    float *raw, *got;
    double want[4096];
    (void)state;
    need_program();
    if (access(SHIPPED, R_OK) != 0) { print_message("skipped: the shipped model is absent\n"); return; }
    raw = run_array(TWO_PROMPTS " --embd-normalize -1", &n, &d);
    assert_int_equal(n, 2);
    assert_true(d <= 4096);
    for (k = 0; k < (int)(sizeof hows / sizeof hows[0]); k++) {
        snprintf(args, sizeof args, TWO_PROMPTS " --embd-normalize %d", hows[k]);
        got = run_array(args, &n2, &d2);
        assert_int_equal(n2, 2);
        assert_int_equal(d2, d);
        for (i = 0; i < n * d; i++) {
            /* printed with 7 decimals (integers for 0): the rounding of both prints */
            double tol = hows[k] == 0 ? 1.0 : 2e-6;
            if (i % d == 0) scale_like_llamacpp(raw + i, want + 0, d, hows[k]);
            if (fabs(got[i] - want[i % d]) > tol)
                fail_msg("--embd-normalize %d: prompt %d value %d: %.7f, want %.7f", hows[k], i / d, i % d, got[i], want[i % d]);
        }
        free(got);
    }
    /* the default is euclidean: unit vectors */
    got = run_array(TWO_PROMPTS, &n2, &d2);
    for (k = 0; k < n2; k++) {
        double s = 0;
        for (i = 0; i < d2; i++) s += (double)got[k * d2 + i] * got[k * d2 + i];
        assert_true(fabs(s - 1.0) < 1e-5);
    }
    free(got);
    free(raw);
}

static void test_formats(void **state)
{
    char cmd[1024], *out;
    const swa__json *data, *cos;
    swa__json *j;
    swa_error err;
    int rc, k, values, d;
    char *p;
    swa_model *m;
    (void)state;
    need_program();
    if (access(SHIPPED, R_OK) != 0) { print_message("skipped: the shipped model is absent\n"); return; }
    assert_int_equal(swa_model_load(SHIPPED, &m, &err), SWA_OK);
    d = swa_model_hparams(m)->n_embd;
    swa_model_free(m);
    for (k = 0; k < 2; k++) {   /* json, json+: OpenAI's list; json+ with the cosine matrix */
        snprintf(cmd, sizeof cmd, "%s " TWO_PROMPTS " --embd-output-format %s 2>/dev/null", EMBED, k ? "json+" : "json");
        out = tu_capture(cmd, &rc);
        assert_int_equal(rc, 0);
        if (swa__json_parse(out, strlen(out), &j, &err) != SWA_OK) fail_msg("%s: not JSON: %s\n%s", cmd, err.msg, out);
        assert_string_equal(swa__json_get(j, "object")->str, "list");
        data = swa__json_get(j, "data");
        assert_non_null(data);
        assert_int_equal(data->n, 2);
        assert_string_equal(swa__json_get(&data->items[1], "object")->str, "embedding");
        assert_int_equal(swa__json_get(&data->items[1], "index")->i, 1);
        assert_int_equal(swa__json_get(&data->items[1], "embedding")->n, d);
        cos = swa__json_get(j, "cosineSimilarity");
        if (!k) assert_null(cos);
        else {
            assert_non_null(cos);
            assert_int_equal(cos->n, 2);
            assert_true(fabs(cos->items[0].items[0].num - 1.0) < 0.01);
            assert_true(fabs(cos->items[0].items[1].num - cos->items[1].items[0].num) < 0.01);
        }
        free(j);
        free(out);
    }
    /* plain: 16 values a prompt when there are several, then the matrix */
    snprintf(cmd, sizeof cmd, "%s " TWO_PROMPTS " 2>/dev/null", EMBED);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "embedding 0: "));
    assert_non_null(p = strstr(out, "embedding 1: "));
    for (values = 0, p += 13; *p && *p != '\n'; values++) { (void)strtod(p, &p); while (*p == ' ') p++; }
    assert_int_equal(values, 16);
    assert_non_null(strstr(out, "cosine similarity matrix:"));
    assert_non_null(strstr(out, "  1.00 "));
    free(out);
    /* one prompt (-f, its final newline dropped): the whole vector, no matrix */
    snprintf(cmd, sizeof cmd, "printf 'Once upon a time\\n' | %s -m " SHIPPED " -f - -t 1 2>/dev/null", EMBED);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    assert_null(strstr(out, "embedding 1:"));
    assert_null(strstr(out, "cosine"));
    for (values = 0, p = strstr(out, "embedding 0: ") + 13; *p && *p != '\n'; values++) { (void)strtod(p, &p); while (*p == ' ') p++; }
    assert_int_equal(values, d);
    free(out);
}

/* Each bad invocation ends with a message and its status: 2 for usage, 1 for what cannot be done. */
static void test_bad_input(void **state)
{
    static const struct { const char *args; int rc; const char *says; } cases[] = {
        {"-m " SHIPPED " -p hi --pooling none", 2, "not supported"},
        {"-m " SHIPPED " -p hi --pooling rank", 2, "not supported"},
        {"-m " SHIPPED " -p hi --pooling median", 2, "mean, cls or last"},
        {"-m " SHIPPED " -p hi --embd-output-format xml", 2, "array, json or json+"},
        {"-m " SHIPPED " -p hi --embd-normalize -2", 2, "--embd-normalize"},
        {"-m " SHIPPED " -p hi --embd-normalize two", 2, "--embd-normalize"},
        {"-m " SHIPPED " -p hi --embd-separator ''", 2, "empty"},
        {"-m " SHIPPED " -p hi -t 999", 2, "-t"},
        {"-m " SHIPPED " -p hi -c", 2, "needs a value"},
        {"-m " SHIPPED " -p hi --frobnicate", 2, "unknown flag"},
        {"-p hi", 2, "-m MODEL"},
        {"-m " SHIPPED, 2, "-p TEXT"},
        {"-m " SHIPPED " -p hi -f /dev/null", 2, "-p TEXT"},
        {"-m " SHIPPED " -f /nonexistent/prompts.txt", 1, "cannot open"},
        {"-m /nonexistent.gguf -p hi", 1, "nonexistent"},
    };
    char cmd[1024], *log;
    size_t k;
    int rc;
    (void)state;
    need_program();
    if (access(SHIPPED, R_OK) != 0) { print_message("skipped: the shipped model is absent\n"); return; }
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(cmd, sizeof cmd, "%s %s 2>&1", EMBED, cases[k].args);
        log = tu_capture(cmd, &rc);
        if (rc != cases[k].rc || !strstr(log, cases[k].says) || !strstr(log, "swa-embedding: "))
            fail_msg("%s: exit %d (want %d), no \"%s\" in: %s", cases[k].args, rc, cases[k].rc, cases[k].says, log);
        free(log);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_vs_llamacpp), cmocka_unit_test(test_program_vs_llamacpp),
        cmocka_unit_test(test_normalize),           cmocka_unit_test(test_formats),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
