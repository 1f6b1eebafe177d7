/* A real model end to end: convert llama2.c's stories260K with our converter, then its greedy
   text must equal what llama2.c's own run.c prints, and a window of 32 must change the story
   after position 32 while leaving the first 32 positions' logits exactly as they were.
   Needs ../shared (skipped with a message without it) and build/swa-convert-llama2c. */
#define _POSIX_C_SOURCE 200809L   /* mkstemp */
#include "swa.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tests/programs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHARED "../shared/"
#define CONVERT_FILE PROGRAM_FILE("swa-convert-llama2c")
#define CONVERT PROGRAM("swa-convert-llama2c")
/* run.c -n 256 calls forward at positions 0..255 and prints each token it predicts (the prompt's
   own tokens while it lasts): the text is 256 tokens after BOS, 257 with it. */
#define STEPS 256
#define N_TOKENS (STEPS + 1)

typedef struct fixture {
    char path[64], path_w32[64];
    swa_model *model;
    const swa_vocab *vocab;
} fixture;

static int convert(const char *out, const char *extra)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, CONVERT " " SHARED "models/stories260K.bin " SHARED "models/tok512.bin %s %s > /dev/null 2>&1",
             out, extra);
    return system(cmd);
}

static int setup(void **state)
{
    static fixture f;
    int fd;
    memset(&f, 0, sizeof f);
    *state = &f;
    if (access(SHARED "models/stories260K.bin", R_OK) != 0) return 0;   /* tests skip */
    strcpy(f.path, "/tmp/swa_stories_XXXXXX");
    strcpy(f.path_w32, "/tmp/swa_stories_w32_XXXXXX");
    if ((fd = mkstemp(f.path)) < 0) return -1;
    close(fd);
    if ((fd = mkstemp(f.path_w32)) < 0) return -1;
    close(fd);
    if (convert(f.path, "") != 0 || convert(f.path_w32, "--window 32") != 0) return -1;
    if (swa_model_load(f.path, &f.model, NULL) != SWA_OK) return -1;
    return swa_model_vocab(f.model, &f.vocab, NULL) == SWA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = (fixture *)*state;
    swa_model_free(f->model);
    if (f->path[0]) remove(f->path);
    if (f->path_w32[0]) remove(f->path_w32);
    return 0;
}

/* run.c's loop: the prompt, then greedy tokens up to N_TOKENS; run.c also stops at BOS, which
   stop_at_bos copies. Returns the token count (prompt included) and fills tok. */
static int greedy(const swa_model *m, const swa_ctx_config *cfg, const int32_t *prompt, int n_prompt, int32_t *tok,
                  int stop_at_bos)
{
    swa_ctx *c;
    const float *logits;
    int n = n_prompt;
    memcpy(tok, prompt, sizeof(int32_t) * (size_t)n_prompt);
    assert_int_equal(swa_ctx_create(m, cfg, &c, NULL), SWA_OK);
    assert_int_equal(swa_ctx_eval(c, tok, (size_t)n, &logits, NULL), SWA_OK);
    while (n < N_TOKENS) {
        tok[n] = swa_argmax(logits, swa_model_hparams(m)->n_vocab);
        if (stop_at_bos && tok[n] == 1) break;
        n++;
        if (n < N_TOKENS) assert_int_equal(swa_ctx_eval(c, &tok[n - 1], 1, &logits, NULL), SWA_OK);
    }
    swa_ctx_free(c);
    return n;
}

static char *decode(const swa_vocab *v, const int32_t *tok, int n)
{
    swa_decoder d;
    char *out = (char *)malloc((size_t)n * 64 + 1);
    size_t len = 0;
    int i;
    swa_decoder_init(&d, v);
    for (i = 0; i < n; i++) len += swa_decoder_push(&d, tok[i], out + len, 64);
    out[len] = '\0';
    return out;
}

static int prompt_tokens(const fixture *f, int32_t *out)
{
    size_t n;
    assert_int_equal(swa_tokenize(f->vocab, "Once upon a time", 16, SWA_TOKENIZE_ADD_BOS, out, 16, &n, NULL), SWA_OK);
    return (int)n;
}

static void test_greedy_text_equals_llama2c(void **state)
{
    fixture *f = (fixture *)*state;
    int32_t prompt[16], tok[N_TOKENS];
    FILE *file;
    char want[4096], *got;
    size_t n_want;
    int n;
    if (!f->model) skip();
    file = fopen(SHARED "testdata/stories260K-greedy.txt", "rb");
    assert_non_null(file);
    n_want = fread(want, 1, sizeof want - 1, file);
    fclose(file);
    while (n_want && want[n_want - 1] == '\n') n_want--;   /* the file ends with run.c's newline */
    want[n_want] = '\0';
    n = greedy(f->model, NULL, prompt, prompt_tokens(f, prompt), tok, 1);
    got = decode(f->vocab, tok, n);
    assert_string_equal(got, want);
    free(got);
}

static void test_window_32(void **state)
{
    fixture *f = (fixture *)*state;
    swa_ctx_config cfg;
    swa_model *w32;
    swa_ctx *c;
    int32_t prompt[16], full[N_TOKENS], windowed[N_TOKENS], from_file[N_TOKENS];
    const int V = 512;
    float *a = (float *)malloc(sizeof(float) * N_TOKENS * V), *b = (float *)malloc(sizeof(float) * N_TOKENS * V);
    int n_prompt, n, i, first_diff = -1;
    if (!f->model) skip();
    n_prompt = prompt_tokens(f, prompt);
    memset(&cfg, 0, sizeof cfg);
    n = greedy(f->model, NULL, prompt, n_prompt, full, 0);
    assert_int_equal(n, N_TOKENS);
    cfg.window = 32;
    assert_int_equal(greedy(f->model, &cfg, prompt, n_prompt, windowed, 0), N_TOKENS);
    for (i = 0; i < N_TOKENS && first_diff < 0; i++) if (full[i] != windowed[i]) first_diff = i;
    /* the token at position i comes from the logits at i - 1: up to position 32 nothing changes */
    assert_true(first_diff > 32);
    /* the same tokens through both: positions 0..31 see the same keys, bit for bit, later ones not */
    assert_int_equal(swa_ctx_create(f->model, NULL, &c, NULL), SWA_OK);
    assert_int_equal(swa_ctx_eval_all(c, full, N_TOKENS, a, NULL), SWA_OK);
    swa_ctx_free(c);
    assert_int_equal(swa_ctx_create(f->model, &cfg, &c, NULL), SWA_OK);
    assert_int_equal(swa_ctx_eval_all(c, full, N_TOKENS, b, NULL), SWA_OK);
    swa_ctx_free(c);
    assert_memory_equal(a, b, sizeof(float) * 32 * V);
    assert_memory_not_equal(a + 32 * V, b + 32 * V, sizeof(float) * V);
    /* the converter's --window 32 stores the same window in the file */
    assert_int_equal(swa_model_load(f->path_w32, &w32, NULL), SWA_OK);
    assert_int_equal(swa_model_hparams(w32)->window, 32);
    assert_int_equal(greedy(w32, NULL, prompt, n_prompt, from_file, 0), N_TOKENS);
    assert_memory_equal(from_file, windowed, sizeof windowed);
    swa_model_free(w32);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_greedy_text_equals_llama2c),
        cmocka_unit_test(test_window_32),
    };
    if (access(SHARED "models/stories260K.bin", R_OK) != 0)
        fprintf(stderr, "test_real: " SHARED "models is absent, the real-model tests are skipped\n");
    return cmocka_run_group_tests(tests, setup, teardown);
}
