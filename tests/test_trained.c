/* The model this project trained (examples/models/swa-stories.gguf) against the training code's
   own reference outputs, stored beside it in swa-stories.ref.json: the C perplexity of the
   held-out sample within 0.5% of PyTorch's, and the greedy continuation of the prompt, several
   windows long, token for token, through build/swa-generate. Uses only committed files. */
#define _POSIX_C_SOURCE 200809L   /* popen */
#include "swa.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tests/programs.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"
#include "tests/testutil.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODELS "examples/models/"
#define MODEL MODELS "swa-stories.gguf"
#define REF MODELS "swa-stories.ref.json"

/* The value after "key": in a JSON text we wrote ourselves (flat enough for strstr). */
static const char *json_value(const char *json, const char *key)
{
    char pattern[64];
    const char *p;
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    p = strstr(json, pattern);
    assert_non_null(p);
    p += strlen(pattern);
    while (*p == ' ' || *p == '\n') p++;
    return p;
}

static int json_ints(const char *json, const char *key, int32_t *out, int cap)
{
    return tu_int_list(json_value(json, key), out, cap);
}

static void test_perplexity_matches_pytorch(void **state)
{
    char *ref = tu_read_text(REF, NULL), *out;
    double want, got;
    const char *p;
    int rc;
    (void)state;
    assert_non_null(ref);
    want = strtod(json_value(json_value(ref, "heldout"), "perplexity"), NULL);
    out = tu_capture(PROGRAM("swa-perplexity") " -m " MODEL " -f " MODELS "heldout.txt --kv-f32 2>/dev/null", &rc);
    assert_int_equal(rc, 0);
    p = strstr(out, "perplexity: ");
    assert_non_null(p);
    got = strtod(p + 12, NULL);
    fprintf(stderr, "test_trained: perplexity C %.4f, PyTorch %.4f (%+.3f%%)\n", got, want, 100.0 * (got / want - 1.0));
    assert_true(fabs(got / want - 1.0) < 0.005);
    free(ref);
    free(out);
}

static void test_greedy_matches_pytorch(void **state)
{
    static int32_t prompt[256], want[4096], got[4096];
    char *ref = tu_read_text(REF, NULL), *out, *cmd, *p;
    int n_prompt, n_want, n_got = 0, i, window, rc;
    size_t len = 0;
    (void)state;
    assert_non_null(ref);
    p = (char *)json_value(ref, "greedy");
    n_prompt = json_ints(p, "prompt_ids", prompt, 256);
    n_want = json_ints(p, "generated_ids", want, 4096);
    window = atoi(json_value(ref, "window"));
    assert_true(n_want >= 3 * window);                     /* several windows long */
    cmd = (char *)malloc(64 + 12 * (size_t)n_prompt + 256);
    len = (size_t)sprintf(cmd, PROGRAM("swa-generate") " -m " MODEL " --kv-f32 --temp 0 -n %d --ids ", n_want);
    for (i = 0; i < n_prompt; i++) len += (size_t)sprintf(cmd + len, i ? ",%d" : "%d", prompt[i]);
    sprintf(cmd + len, " 2>/dev/null");
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    for (p = out; n_got < 4096; ) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p) break;
        got[n_got++] = (int32_t)v;
        p = end;
    }
    assert_int_equal(n_got, n_want);
    for (i = 0; i < n_want; i++)
        if (got[i] != want[i]) fail_msg("generated token %d: C %d, PyTorch %d", i, got[i], want[i]);
    free(cmd);
    free(out);
    free(ref);
}

/* The argmax after the repetition penalty, computed here from the rule (llama.cpp's): each
   distinct token among the last n of hist has its logit divided by p when positive, multiplied
   by p otherwise. */
static int32_t penalised_argmax(const float *logits, int32_t n_vocab, const int32_t *hist, int n_hist, int last_n,
                                float p)
{
    float *x = (float *)malloc(sizeof(float) * (size_t)n_vocab);
    char *seen = (char *)calloc((size_t)n_vocab, 1);
    int32_t i, best;
    memcpy(x, logits, sizeof(float) * (size_t)n_vocab);
    for (i = n_hist > last_n ? n_hist - last_n : 0; i < n_hist; i++) {
        int32_t t = hist[i];
        if (seen[t]) continue;
        seen[t] = 1;
        x[t] = x[t] > 0.0f ? x[t] / p : x[t] * p;
    }
    best = swa_argmax(x, n_vocab);
    free(seen);
    free(x);
    return best;
}

/* A repetition penalty works without any call but swa_sampler_sample for the generated tokens
   (the prompt's tokens go through swa_sampler_accept): greedy text with penalty 1.5 follows the
   rule above at every step, and differs from the text without it. */
static void test_penalty_changes_greedy_text(void **state)
{
    enum { N_GEN = 80, LAST_N = 16 };
    swa_model *m;
    const swa_vocab *v;
    swa_ctx *c;
    swa_sampler *s;
    swa_sampler_config sc;
    const float *logits;
    int32_t hist[256], plain[N_GEN], n_vocab;
    size_t n_prompt;
    int run, i, differ = 0;
    (void)state;
    assert_int_equal(swa_model_load(MODEL, &m, NULL), SWA_OK);
    assert_int_equal(swa_model_vocab(m, &v, NULL), SWA_OK);
    n_vocab = swa_vocab_size(v);
    for (run = 0; run < 2; run++) {
        const char *text = "Once upon a time, there was a little girl";
        assert_int_equal(swa_tokenize(v, text, strlen(text), SWA_TOKENIZE_ADD_BOS, hist, 64, &n_prompt, NULL), SWA_OK);
        sc = swa_sampler_config_default();
        sc.temperature = 0.0f;
        sc.repeat_penalty = run ? 1.5f : 1.0f;
        sc.repeat_last_n = LAST_N;
        assert_int_equal(swa_sampler_create(&sc, n_vocab, &s, NULL), SWA_OK);
        assert_int_equal(swa_ctx_create(m, NULL, &c, NULL), SWA_OK);
        for (i = 0; i < (int)n_prompt; i++) swa_sampler_accept(s, hist[i]);
        assert_int_equal(swa_ctx_eval(c, hist, n_prompt, &logits, NULL), SWA_OK);
        for (i = 0; i < N_GEN; i++) {
            int32_t t = swa_sampler_sample(s, logits);
            int n_hist = (int)n_prompt + i;
            if (run) {
                int32_t want = penalised_argmax(logits, n_vocab, hist, n_hist, LAST_N, 1.5f);
                if (t != want) fail_msg("token %d: sampled %d, the rule gives %d", i, t, want);
                differ |= t != plain[i];
            } else {
                plain[i] = t;
            }
            hist[n_hist] = t;
            assert_int_equal(swa_ctx_eval(c, &t, 1, &logits, NULL), SWA_OK);
        }
        swa_ctx_free(c);
        swa_sampler_free(s);
    }
    assert_true(differ);
    swa_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_perplexity_matches_pytorch),
        cmocka_unit_test(test_greedy_matches_pytorch),
        cmocka_unit_test(test_penalty_changes_greedy_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
