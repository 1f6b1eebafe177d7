/* build/swa-generate as a user drives it, and nothing else: --dump-logits rows match the
   reference for every prompt position and every generated token, for several -b; saved and
   loaded states; the chat mode's templates, end of turn and prompt file; the context's end;
   --parallel against single runs; --sinks; Ctrl-C, a closed pipe, inputs checked before the
   model loads; usage errors, warnings and the summary line. Run from the project root after
   `make` (the Makefile's test target does both). */
#define _POSIX_C_SOURCE 200809L   /* mkstemp, clock_gettime, kill */
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

#define GENERATE_FILE PROGRAM_FILE("swa-generate")
#define GENERATE PROGRAM("swa-generate")

static float *read_floats(const char *path, size_t *n)
{
    size_t bytes;
    float *f = (float *)tu_read_file(path, &bytes);
    *n = bytes / sizeof(float);
    return f;
}

static char *ids_arg(const int32_t *tok, int n)
{
    char *s = (char *)malloc((size_t)n * 12 + 1), *p = s;
    int i;
    for (i = 0; i < n; i++) p += sprintf(p, i ? ",%d" : "%d", tok[i]);
    return s;
}

/* A random model whose vocabulary is <unk> <s> </s> and the 256 byte tokens only: every
   character is one token per UTF-8 byte, and "\xe2\x96\x81" (the space mark) three. */
static void write_byte_vocab_model(const char *path)
{
    static char bytes[256][8];
    const char *pieces[259];
    float scores[259];
    int32_t types[259];
    gw_writer *w = gw_new(3);
    uint64_t rng = 7;
    tu_spec s;
    int i, d = 32;
    char name[64];
    memset(&s, 0, sizeof s);
    s.n_layer = 1; s.n_embd = d; s.n_head = 2; s.n_kv_head = 1; s.n_ff = 32; s.n_vocab = 259;
    s.n_ctx = 128; s.rope_base = 10000.0f;
    tu_write_hparams(w, &s);
    for (i = 0; i < 259; i++) {
        scores[i] = 0;
        types[i] = i < 3 ? (i ? SWA_TOKEN_CONTROL : SWA_TOKEN_UNKNOWN) : SWA_TOKEN_BYTE;
        if (i >= 3) snprintf(bytes[i - 3], sizeof bytes[i - 3], "<0x%02X>", i - 3);
        pieces[i] = i == 0 ? "<unk>" : i == 1 ? "<s>" : i == 2 ? "</s>" : bytes[i - 3];
    }
    gw_kv_str(w, "tokenizer.ggml.model", "llama");
    gw_kv_array_str(w, "tokenizer.ggml.tokens", 259, pieces);
    gw_kv_array(w, "tokenizer.ggml.scores", GW_F32V, 259, scores);
    gw_kv_array(w, "tokenizer.ggml.token_type", GW_I32, 259, types);
    gw_kv_u32(w, "tokenizer.ggml.bos_token_id", 1);
    gw_kv_u32(w, "tokenizer.ggml.eos_token_id", 2);
    gw_kv_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    gw_kv_bool(w, "tokenizer.ggml.add_bos_token", 1);
    free(tu_matrix(w, &rng, "token_embd.weight", GW_F32, 259, d, 1.0f));
    free(tu_norm(w, &rng, "output_norm.weight", d));
    free(tu_matrix(w, &rng, "output.weight", GW_F32, 259, d, 0.2f));
#define LAYER(x) (snprintf(name, sizeof name, "blk.0." x ".weight"), name)
    free(tu_norm(w, &rng, LAYER("attn_norm"), d));
    free(tu_matrix(w, &rng, LAYER("attn_q"), GW_F32, d, d, 0.2f));
    free(tu_matrix(w, &rng, LAYER("attn_k"), GW_F32, d / 2, d, 0.2f));
    free(tu_matrix(w, &rng, LAYER("attn_v"), GW_F32, d / 2, d, 0.2f));
    free(tu_matrix(w, &rng, LAYER("attn_output"), GW_F32, d, d, 0.2f));
    free(tu_norm(w, &rng, LAYER("ffn_norm"), d));
    free(tu_matrix(w, &rng, LAYER("ffn_gate"), GW_F32, 32, d, 0.2f));
    free(tu_matrix(w, &rng, LAYER("ffn_up"), GW_F32, 32, d, 0.2f));
    free(tu_matrix(w, &rng, LAYER("ffn_down"), GW_F32, d, 32, 0.2f));
#undef LAYER
    if (gw_write_file(w, path) != 0) fail_msg("%s: %s", path, gw_error(w));
    gw_free(w);
}

static size_t dump_rows(const char *path, size_t n_vocab)
{
    size_t n;
    float *f = read_floats(path, &n);
    free(f);
    return n / n_vocab;
}

static void test_dump_logits_matches_reference(void **state)
{
    tu_spec s;
    tu_model tm;
    char model[] = "/tmp/swa_cli_model_XXXXXX", dump[] = "/tmp/swa_cli_dump_XXXXXX", out[] = "/tmp/swa_cli_out_XXXXXX";
    char cmd[4096], *ids;
    int32_t tok[64 + 5];
    const int n_prompt = 64, n_gen = 5, batches[3] = {1, 9, 64};
    int windows[2] = {12, 12}, b, i;
    double *ref = (double *)malloc(sizeof(double) * (size_t)(n_prompt + n_gen) * 60);
    (void)state;
    if (access(GENERATE_FILE, X_OK) != 0) fail_msg(GENERATE_FILE " is missing: run make first");
    memset(&s, 0, sizeof s);
    s.n_layer = 2; s.n_embd = 64; s.n_head = 4; s.n_kv_head = 1; s.n_ff = 96; s.n_vocab = 60;
    s.n_ctx = 32; s.type = GW_F32; s.window = 12; s.seed = 5;
    assert_true(tu_build(&tm, &s));
    close(mkstemp(model)); close(mkstemp(dump)); close(mkstemp(out));
    tu_write_file(model, tm.gguf, tm.gguf_size);
    tu_random_tokens(tok, n_prompt, s.n_vocab, 17);
    ids = ids_arg(tok, n_prompt);
    for (b = 0; b < 3; b++) {
        size_t n;
        float *got;
        FILE *f;
        snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids %s -n %d -b %d --temp 0 --dump-logits %s > %s 2>/dev/null",
                 model, ids, n_gen, batches[b], dump, out);
        assert_int_equal(tu_run(cmd), 0);
        /* the generated ids, then the reference over prompt + generated */
        f = fopen(out, "r");
        for (i = 0; i < n_gen; i++) assert_int_equal(fscanf(f, "%d", &tok[n_prompt + i]), 1);
        fclose(f);
        tu_reference(&tm, tok, n_prompt + n_gen, windows, ref);
        got = read_floats(dump, &n);
        /* every evaluated position: the prompt and each generated token but the last */
        assert_int_equal(n, (size_t)(n_prompt + n_gen - 1) * 60);
        if (tu_rel_error(got, ref, n) > 2e-3) fail_msg("-b %d: error %g", batches[b], tu_rel_error(got, ref, n));
        for (i = 0; i < n_gen; i++) {
            const double *row = ref + (size_t)(n_prompt - 1 + i) * 60;
            int k, best = 0;
            for (k = 1; k < 60; k++) if (row[k] > row[best]) best = k;
            assert_int_equal(tok[n_prompt + i], best);
        }
        free(got);
    }
    /* -n 0: the prompt only, one row per prompt token */
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids %s -n 0 --dump-logits %s > %s 2>/dev/null", model, ids, dump, out);
    assert_int_equal(tu_run(cmd), 0);
    {
        size_t n;
        float *got = read_floats(dump, &n);
        assert_int_equal(n, (size_t)n_prompt * 60);
        free(got);
    }
    remove(model); remove(dump); remove(out);
    free(ids);
    free(ref);
    tu_free(&tm);
}

static void test_bad_flags(void **state)
{
    static const char *bad[] = {
        GENERATE " --frobnicate 2>&1 | grep -q 'unknown flag --frobnicate'",
        GENERATE " -p hello 2>&1 | grep -q -- '-m MODEL is required'",
        GENERATE " -m x.gguf -n 2>&1 | grep -q -- '-n needs a value'",
        GENERATE " -m x.gguf --top-p 2 2>&1 | grep -q -- '--top-p wants a number in 0..1, got \"2\"'",
        GENERATE " -m x.gguf --temp -1 2>&1 | grep -q -- '--temp wants a number in 0..100'",
        GENERATE " -m x.gguf -t 257 2>&1 | grep -q -- '-t wants a number in 0..256'",
        GENERATE " -m x.gguf -p a --ids 1 2>&1 | grep -q 'one of -p, -f and --ids'",
        GENERATE " -m x.gguf --ids 1,two 2>&1 | grep -q 'bad token id'",
        GENERATE " -m x.gguf --ids 1 -b 0 2>&1 | grep -q -- '-b wants a number'",
        GENERATE " -m /nonexistent.gguf --ids 1 2>&1 | grep -q '/nonexistent.gguf: cannot open'",
        GENERATE " -m x.gguf --ids 1 --kv q4 2>&1 | grep -q -- '--kv wants f16, f32 or q8_0'",
        GENERATE " -h | grep -q -- '--dump-logits'",
        GENERATE " -h | grep -q -- '--kv TYPE'",
        GENERATE " -h | grep -q -- '--version'",
        GENERATE " -h | grep -q -- '--ids LIST'",
        GENERATE " -h | grep -q -- '130'",
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tu_run(bad[i]) != 0) fail_msg("expected output missing: %s", bad[i]);
    assert_int_not_equal(tu_run(GENERATE " --frobnicate 2>/dev/null"), 0);
}

/* A story saved and continued later: the rows --dump-logits writes after --load-state are the
   reference's for the whole sequence, from the token held pending at the save on. A generation
   split in two by a saved state prints what one run prints. */
static void test_save_and_load_state(void **state)
{
    tu_spec s;
    tu_model tm, other;
    char model[] = "/tmp/swa_cli_model_XXXXXX", model2[] = "/tmp/swa_cli_model2_XXXXXX";
    char dump[] = "/tmp/swa_cli_dump_XXXXXX", st[] = "/tmp/swa_cli_state_XXXXXX", cmd[4096], *ids1, *ids2;
    int32_t tok[30];
    int windows[2] = {6, 6};
    double ref[30 * 60];
    float *got;
    size_t n;
    (void)state;
    memset(&s, 0, sizeof s);
    s.n_layer = 2; s.n_embd = 32; s.n_head = 4; s.n_kv_head = 2; s.n_ff = 48; s.n_vocab = 60;
    s.n_ctx = 32; s.type = GW_F32; s.window = 6; s.seed = 8;
    assert_true(tu_build(&tm, &s));
    s.seed = 9;
    assert_true(tu_build(&other, &s));
    close(mkstemp(model)); close(mkstemp(model2)); close(mkstemp(dump)); close(mkstemp(st));
    tu_write_file(model, tm.gguf, tm.gguf_size);
    tu_write_file(model2, other.gguf, other.gguf_size);
    tu_random_tokens(tok, 30, s.n_vocab, 23);
    ids1 = ids_arg(tok, 20);
    ids2 = ids_arg(tok + 20, 10);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids %s -n 0 --kv f32 --save-state %s >/dev/null 2>&1", model, ids1, st);
    assert_int_equal(tu_run(cmd), 0);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids %s -n 0 --kv f32 --load-state %s --dump-logits %s >/dev/null 2>&1",
             model, ids2, st, dump);
    assert_int_equal(tu_run(cmd), 0);
    tu_reference(&tm, tok, 30, windows, ref);
    got = read_floats(dump, &n);
    assert_int_equal(n, 11 * 60);   /* the pending 20th token and the 10 new ones */
    if (tu_rel_error(got, ref + 19 * 60, n) > 2e-5) fail_msg("error %g", tu_rel_error(got, ref + 19 * 60, n));
    free(got);
    /* refusals */
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids 1 --kv f32 --load-state %s 2>&1 | grep -q 'another model'", model2, st);
    assert_int_equal(tu_run(cmd), 0);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids 1 --load-state %s 2>&1 | grep -q 'cache type is f32'", model, st);
    assert_int_equal(tu_run(cmd), 0);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids 1 --load-state %s 2>&1 | grep -q 'not a saved state'", model, model);
    assert_int_equal(tu_run(cmd), 0);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s -i --save-state %s 2>&1 | grep -q 'not -i'", model, st);
    assert_int_equal(tu_run(cmd), 0);
    /* the shipped model, greedy: 12 + 12 tokens through a state print the 24 of one run */
    if (access("examples/models/swa-stories.gguf", R_OK) == 0) {
        char one[] = "/tmp/swa_cli_one_XXXXXX", two[] = "/tmp/swa_cli_two_XXXXXX";
        close(mkstemp(one)); close(mkstemp(two));
        snprintf(cmd, sizeof cmd,
                 GENERATE " -m examples/models/swa-stories.gguf -p 'Once upon a time' -n 24 --temp 0 2>/dev/null | tr -d '\\n' > %s && "
                 GENERATE " -m examples/models/swa-stories.gguf -p 'Once upon a time' -n 12 --temp 0 --save-state %s 2>/dev/null | tr -d '\\n' > %s && "
                 GENERATE " -m examples/models/swa-stories.gguf -n 12 --temp 0 --load-state %s 2>/dev/null | tr -d '\\n' >> %s && cmp -s %s %s",
                 one, st, two, st, two, one, two);
        assert_int_equal(tu_run(cmd), 0);
        remove(one); remove(two);
    }
    remove(model); remove(model2); remove(dump); remove(st);
    free(ids1); free(ids2);
    tu_free(&tm); tu_free(&other);
}

/* llama.cpp's converter drops Mistral v0.1's window: the CLI says how to put it back. */
static void test_mistral_window_hint(void **state)
{
    tu_spec s;
    tu_model tm;
    char model[] = "/tmp/swa_cli_mistral_XXXXXX", cmd[512];
    (void)state;
    memset(&s, 0, sizeof s);
    s.n_layer = 1; s.n_embd = 32; s.n_head = 2; s.n_kv_head = 1; s.n_ff = 32; s.n_vocab = 20;
    s.n_ctx = 64; s.type = GW_F32; s.seed = 3; s.name = "Mistral-7B-Instruct-v0.1";
    assert_true(tu_build(&tm, &s));
    close(mkstemp(model));
    tu_write_file(model, tm.gguf, tm.gguf_size);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids 1 -n 1 2>&1 >/dev/null | grep -q -- '--set-window 4096'", model);
    assert_int_equal(tu_run(cmd), 0);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids 1 -n 1 -w 4096 2>&1 >/dev/null | grep -q 'hint'", model);
    assert_int_not_equal(tu_run(cmd), 0);             /* a window given: no hint */
    remove(model);
    tu_free(&tm);
}

static char *read_text(const char *path)
{
    size_t n;
    return (char *)tu_read_file(path, &n);
}

/* swa-generate -m model FLAGS, its standard input from `in` and its standard error into `err`:
   that log, after it ended with status 0 (ok) or another (not ok). */
static char *chat_log(const char *model, const char *flags, const char *in, const char *err, int ok)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, GENERATE " -m %s %s < %s > /dev/null 2> %s", model, flags, in, err);
    if ((tu_run(cmd) == 0) != ok) fail_msg("%s: %s", cmd, ok ? "failed" : "did not fail");
    return read_text(err);
}

/* The shipped model has no chat template: -i with --chat-template chatml formats each turn as
   ChatML does (<|im_start|>role\n...<|im_end|>\n, llama.cpp's tests/test-chat-template.cpp and
   the OpenHermes template), and evaluates only what is new: the second turn starts with the
   <|im_end|> that closes the answer. Without the flag it says so and uses llama2's [INST]. */
static void test_chat_template_on_shipped_model(void **state)
{
    const char *model = "examples/models/swa-stories.gguf";
    char in[] = "/tmp/swa_cli_chat_in_XXXXXX", err[] = "/tmp/swa_cli_chat_err_XXXXXX", *text;
    (void)state;
    close(mkstemp(in)); close(mkstemp(err));
    tu_write_file(in, "Who are you?\n", 13);
    text = chat_log(model, "-i --chat-template chatml --system 'Be brief.' -p Hello -n 4 --temp 0 -t 1 --verbose-prompt",
                    in, err, 1);
    /* the shipped vocabulary has no <|im_end|>: a warning, and no claim that turns end there */
    if (!strstr(text, "warning: chat template chatml, but the vocabulary has no <|im_end|> token") ||
        strstr(text, "turns end at") ||
        !strstr(text, "[turn: \"<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
                      "<|im_start|>assistant\n\"") ||
        !strstr(text, "[turn: \"<|im_end|>\n<|im_start|>user\nWho are you?<|im_end|>\n<|im_start|>assistant\n\""))
        fail_msg("unexpected chat log:\n%s", text);
    free(text);
    text = chat_log(model, "-i -p Hello -n 2 --temp 0 -t 1 --verbose-prompt", in, err, 1);
    if (!strstr(text, "the model has no chat template; using llama2") || !strstr(text, "[turn: \"[INST] Hello [/INST]\"") ||
        !strstr(text, "[turn: \"</s>[INST] Who are you? [/INST]\""))
        fail_msg("unexpected chat log:\n%s", text);
    free(text);
    /* chatglm4 writes no end of turn after an answer (its <|user|> opens the next turn): the
       second turn starts right after the answer */
    text = chat_log(model, "-i --chat-template chatglm4 -p Hello -n 4 --temp 0 -t 1 --verbose-prompt", in, err, 1);
    if (!strstr(text, "[turn: \"[gMASK]<sop><|user|>\nHello<|assistant|>\n\"") ||
        !strstr(text, "[turn: \"<|user|>\nWho are you?<|assistant|>\n\""))
        fail_msg("unexpected chat log:\n%s", text);
    free(text);
    assert_int_equal(tu_run(GENERATE " -m x.gguf -i --chat-template nope 2>&1 | grep -q 'chat-template wants a family'"), 0);
    assert_int_equal(tu_run(GENERATE " -m x.gguf --chat-template chatml 2>&1 | grep -q 'need -i'"), 0);
    assert_int_equal(tu_run(GENERATE " -h | grep -q 'families: chatml llama2'"), 0);
    remove(in); remove(err);
}

/* A SentencePiece vocabulary of BOS/EOS, the 256 byte tokens and fillers, with one control
   token of the caller's choice at a given id, and optionally a chat template. */
typedef struct chat_vocab {
    int n, special_id;
    const char *special, *chat_template;
} chat_vocab;

static void write_chat_vocab(gw_writer *w, const void *arg)
{
    const chat_vocab *cv = (const chat_vocab *)arg;
    char **pieces = (char **)calloc((size_t)cv->n, sizeof(char *));
    int32_t *types = (int32_t *)calloc((size_t)cv->n, sizeof(int32_t));
    float *scores = (float *)calloc((size_t)cv->n, sizeof(float));
    int i;
    for (i = 0; i < cv->n; i++) {
        pieces[i] = (char *)malloc(24);
        types[i] = 1;
        if (i == 0) strcpy(pieces[i], "<unk>"), types[i] = 2;
        else if (i == 1) strcpy(pieces[i], "<s>"), types[i] = 3;
        else if (i == 2) strcpy(pieces[i], "</s>"), types[i] = 3;
        else if (i < 3 + 256) snprintf(pieces[i], 24, "<0x%02X>", i - 3), types[i] = 6;
        else if (i == cv->special_id) strcpy(pieces[i], cv->special), types[i] = 3;
        else snprintf(pieces[i], 24, "filler%d", i);
    }
    gw_kv_str(w, "tokenizer.ggml.model", "llama");
    gw_kv_array_str(w, "tokenizer.ggml.tokens", (uint64_t)cv->n, (const char *const *)pieces);
    gw_kv_array(w, "tokenizer.ggml.scores", GW_F32, (uint64_t)cv->n, scores);
    gw_kv_array(w, "tokenizer.ggml.token_type", GW_I32, (uint64_t)cv->n, types);
    if (cv->chat_template) gw_kv_str(w, "tokenizer.chat_template", cv->chat_template);
    for (i = 0; i < cv->n; i++) free(pieces[i]);
    free(pieces); free(types); free(scores);
}

/* Generation stops at the template's end-of-turn token. The model is random; its greedy first
   answer token, from the reference forward pass, is made the vocabulary's <|EOT|> (DeepSeek
   Coder's end of turn, which its first turn does not contain), so the first answer is empty
   and the second turn starts by evaluating <|EOT|>. */
static void test_chat_stops_at_end_of_turn(void **state)
{
    const char *turn = "### Instruction:\nHello\n### Response:\n";
    char model[] = "/tmp/swa_cli_eot_XXXXXX", in[] = "/tmp/swa_cli_eot_in_XXXXXX", err[] = "/tmp/swa_cli_eot_err_XXXXXX";
    char *text;
    chat_vocab cv = {300, 299, "<|EOT|>", NULL};
    tu_spec s;
    tu_model tm;
    double *ref = (double *)malloc(sizeof(double) * 300 * 64);
    int32_t tok[64];
    size_t n;
    int seed, best = -1, k, full[2] = {0, 0};
    (void)state;
    close(mkstemp(model)); close(mkstemp(in)); close(mkstemp(err));
    memset(&s, 0, sizeof s);
    s.n_layer = 2; s.n_embd = 32; s.n_head = 2; s.n_kv_head = 1; s.n_ff = 48; s.n_vocab = cv.n;
    s.n_ctx = 256; s.type = GW_F32; s.extra_keys = write_chat_vocab; s.extra_arg = &cv;
    for (seed = 1; seed < 200 && best < 0; seed++) {
        swa_gguf *g;
        swa_vocab *v;
        s.seed = (uint64_t)seed;
        assert_true(tu_build(&tm, &s));
        assert_int_equal(swa_gguf_open_memory(tm.gguf, tm.gguf_size, &g, NULL), SWA_OK);
        assert_int_equal(swa_vocab_load(g, &v, NULL), SWA_OK);
        assert_int_equal(swa_tokenize(v, turn, strlen(turn), SWA_TOKENIZE_ADD_BOS | SWA_TOKENIZE_SPECIAL, tok, 64, &n, NULL), SWA_OK);
        tu_reference(&tm, tok, (int)n, full, ref);
        {
            const double *row = ref + (n - 1) * 300;
            double second = -1e300;
            for (best = 0, k = 1; k < cv.n; k++) if (row[k] > row[best]) best = k;
            for (k = 0; k < cv.n; k++) if (k != best && row[k] > second) second = row[k];
            if (best < 3 + 256 || row[best] - second < 0.01) best = -1;   /* a filler's id, and no near tie */
        }
        swa_vocab_free(v);
        swa_gguf_close(g);
        if (best < 0) tu_free(&tm);
    }
    assert_true(best >= 0);
    tu_free(&tm);
    cv.special_id = best;                               /* the same weights, <|EOT|> at that id */
    assert_true(tu_build(&tm, &s));
    tu_write_file(model, tm.gguf, tm.gguf_size);
    tu_write_file(in, "Hello\nBye\n", 10);
    text = chat_log(model, "-i --chat-template deepseek -n 5 --temp 0 --kv f32 -t 1 --verbose-prompt", in, err, 1);
    /* the first answer stopped at once: at most the second turn's 5 tokens were generated */
    if (!strstr(text, "chat template deepseek, turns end at <|EOT|>") ||
        !strstr(text, "[turn: \"### Instruction:\nHello\n### Response:\n\"") ||
        !strstr(text, "[turn: \"<|EOT|>\n### Instruction:\nBye\n### Response:\n\"") ||
        (!strstr(text, "generation: 0 tokens") && !strstr(text, "generation: 1 tokens") &&
         !strstr(text, "generation: 2 tokens") && !strstr(text, "generation: 3 tokens") &&
         !strstr(text, "generation: 4 tokens") && !strstr(text, "generation: 5 tokens")))
        fail_msg("unexpected chat log (end of turn at id %d):\n%s", best, text);
    free(text);
    /* the same file with a template of no family: the Jinja engine renders it, and turns end at
       EOS (a warning says so); with --no-jinja, a clear error that quotes it */
    tu_free(&tm);
    cv.chat_template = "{% for m in messages %}<<{{ m.role }}>>{% endfor %}";
    assert_true(tu_build(&tm, &s));
    tu_write_file(model, tm.gguf, tm.gguf_size);
    text = chat_log(model, "-i -n 2 --temp 0 -t 1 --verbose-prompt", in, err, 1);
    if (!strstr(text, "[turn: \"<<user>>\"") || !strstr(text, "answers end at end-of-sequence"))
        fail_msg("unexpected chat log:\n%s", text);
    free(text);
    text = chat_log(model, "-i --no-jinja", in, err, 0);
    if (!strstr(text, "chat template \"{% for m in messages %}<<{{ m.role }}>>") || !strstr(text, "--chat-template"))
        fail_msg("unexpected error:\n%s", text);
    free(text);
    remove(model); remove(in); remove(err);
    free(ref);
    tu_free(&tm);
}

/* "hi" is 6 tokens with BOS on a byte-only vocabulary (<s>, e2 96 81, 'h', 'i'): more tokens
   than bytes, so the prompt buffer must grow to the size the library asks for. */
static void test_prompt_with_more_tokens_than_bytes(void **state)
{
    char model[] = "/tmp/swa_cli_bytes_XXXXXX", dump[] = "/tmp/swa_cli_dump_XXXXXX", cmd[1024];
    (void)state;
    if (access(GENERATE_FILE, X_OK) != 0) fail_msg(GENERATE_FILE " is missing: run make first");
    close(mkstemp(model)); close(mkstemp(dump));
    write_byte_vocab_model(model);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s -p hi -n 0 --dump-logits %s >/dev/null 2>&1", model, dump);
    assert_int_equal(tu_run(cmd), 0);
    assert_int_equal(dump_rows(dump, 259), 6);
    remove(model); remove(dump);
}

/* Whether t is exactly `turns` answers, each one of the two values, then what a schema's grammar
   lets follow a value (nothing, a space, or a newline and spaces or tabs), then the newline the
   chat prints. */
static int chat_answers(const char *t, const char *a, const char *b, int turns)
{
    size_t n = !strncmp(t, a, strlen(a)) ? strlen(a) : !strncmp(t, b, strlen(b)) ? strlen(b) : 0, k;
    if (turns == 0) return *t == '\0';
    if (!n) return 0;
    if (t[n] == '\n' && chat_answers(t + n + 1, a, b, turns - 1)) return 1;
    if (t[n] == ' ') return t[n + 1] == '\n' && chat_answers(t + n + 2, a, b, turns - 1);
    for (k = n + 1; t[n] == '\n' && (t[k] == ' ' || t[k] == '\t'); k++) {}
    return t[n] == '\n' && t[k] == '\n' && chat_answers(t + k + 1, a, b, turns - 1);
}

/* -i with --grammar or --json-schema: every answer is a whole match, the second as the first
   (the grammar starts again each turn; left where the first answer ended, it would allow only
   the end at once), checked against the grammar by hand. */
static void test_chat_grammar_each_turn(void **state)
{
    static const char *const runs[][3] = {
        {"--grammar 'root ::= (\"yes\" | \"no\") \"!\"'", "yes!", "no!"},
        {"-j '{\"enum\": [\"red\", \"blue\"]}'", "\"red\"", "\"blue\""},
    };
    char in[] = "/tmp/swa_cli_chat_in_XXXXXX", out[] = "/tmp/swa_cli_chat_out_XXXXXX", cmd[1024], *text;
    size_t r;
    int seed;
    (void)state;
    if (access(GENERATE_FILE, X_OK) != 0) fail_msg(GENERATE_FILE " is missing: run make first");
    close(mkstemp(in)); close(mkstemp(out));
    tu_write_file(in, "Hello\nWho are you?\n", 20);
    for (r = 0; r < sizeof runs / sizeof runs[0]; r++)
        for (seed = 1; seed <= 3; seed++) {
            snprintf(cmd, sizeof cmd, GENERATE " -m examples/models/swa-stories.gguf -i %s -n 30 --temp 1 -s %d -t 1 "
                     "< %s > %s 2>/dev/null", runs[r][0], seed, in, out);
            assert_int_equal(tu_run(cmd), 0);
            text = read_text(out);
            if (!chat_answers(text, runs[r][1], runs[r][2], 2))
                fail_msg("%s, seed %d: not two answers that match: \"%s\"", runs[r][0], seed, text);
            free(text);
        }
    remove(in); remove(out);
}

/* -i -f FILE: the file is the first turn, exactly as the same text given with -p. */
static void test_chat_reads_the_prompt_file(void **state)
{
    char model[] = "/tmp/swa_cli_bytes_XXXXXX", dump[] = "/tmp/swa_cli_dump_XXXXXX", text[] = "/tmp/swa_cli_text_XXXXXX";
    char cmd[1024];
    size_t from_file, from_arg;
    (void)state;
    if (access(GENERATE_FILE, X_OK) != 0) fail_msg(GENERATE_FILE " is missing: run make first");
    close(mkstemp(model)); close(mkstemp(dump)); close(mkstemp(text));
    write_byte_vocab_model(model);
    tu_write_file(text, "tell me a story\n", 16);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s -i -f %s -n 0 --dump-logits %s </dev/null >/dev/null 2>&1", model, text, dump);
    assert_int_equal(tu_run(cmd), 0);
    from_file = dump_rows(dump, 259);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s -i -p 'tell me a story' -n 0 --dump-logits %s </dev/null >/dev/null 2>&1",
             model, dump);
    assert_int_equal(tu_run(cmd), 0);
    from_arg = dump_rows(dump, 259);
    assert_true(from_arg > 15);              /* the 15 bytes of the text at least */
    assert_int_equal(from_file, from_arg);
    remove(model); remove(dump); remove(text);
}

/* A random model of full attention over 32 positions, 50 tokens and n_layer layers, written to
   a new file made from the mkstemp template path. */
static void write_full_model(char *path, int n_layer, uint64_t seed)
{
    tu_spec s;
    tu_model tm;
    memset(&s, 0, sizeof s);
    s.n_layer = n_layer; s.n_embd = 32; s.n_head = 2; s.n_kv_head = 1; s.n_ff = 32; s.n_vocab = 50;
    s.n_ctx = 32; s.type = GW_F32; s.seed = seed;
    assert_true(tu_build(&tm, &s));
    close(mkstemp(path));
    tu_write_file(path, tm.gguf, tm.gguf_size);
    tu_free(&tm);
}

/* A full-attention model of 32 positions: generation that reaches the end stops there with a
   message and exit 0, having printed the 32 - 5 + 1 tokens that fit (the last one sampled
   from position 31's logits, never evaluated); a prompt longer than the context is refused
   before any of it is evaluated (no statistics line), with the -c that fits it. */
static void test_context_end(void **state)
{
    char model[] = "/tmp/swa_cli_full_XXXXXX", cmd[1024], *out, *p;
    int32_t tok[40];
    char *ids;
    int rc, n = 0;
    (void)state;
    if (access(GENERATE_FILE, X_OK) != 0) fail_msg(GENERATE_FILE " is missing: run make first");
    write_full_model(model, 1, 9);
    tu_random_tokens(tok, 40, 50, 3);
    ids = ids_arg(tok, 5);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids %s -n 100 --temp 0 2>/dev/null", model, ids);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    for (p = strtok(out, " \n"); p; p = strtok(NULL, " \n")) n++;
    assert_int_equal(n, 32 - 5 + 1);
    free(out);
    free(ids);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids 1,2,3,4,5 -n 100 2>&1 >/dev/null | grep -q 'context is full'", model);
    assert_int_equal(tu_run(cmd), 0);
    /* a prompt of 40 tokens is refused before it is evaluated, naming the flags that fit it */
    ids = ids_arg(tok, 40);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids %s -b 8 -n 1 2>&1 >/dev/null", model, ids);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 1);
    if (!strstr(out, "the prompt is 40 tokens, and the context holds 32 positions (-c 32): give -c 40 or more, or -w N") ||
        strstr(out, "prompt: "))
        fail_msg("a prompt longer than the context:\n%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids %s -c 40 -n 1 >/dev/null 2>&1", model, ids);
    assert_int_equal(tu_run(cmd), 0);                 /* what the message says fits */
    free(ids);
    remove(model);
}

/* What --parallel N with seed S must print, built from N single runs: for each i, the header
   line, then the stdout of a run with seed S + i. */
static void write_single_runs(const char *args, int n, unsigned seed, const char *path)
{
    char cmd[4096];
    int i;
    tu_write_file(path, "", 0);
    for (i = 0; i < n; i++) {
        snprintf(cmd, sizeof cmd, "printf -- '--- continuation %d of %d, seed %u ---\\n' >> %s && "
                 GENERATE " %s -s %u 2>/dev/null >> %s", i + 1, n, seed + (unsigned)i, path, args, seed + (unsigned)i, path);
        assert_int_equal(tu_run(cmd), 0);
    }
}

/* swa-generate ARGS --parallel N -s SEED prints what N single runs print (write_single_runs);
   returns its stderr. */
static char *check_parallel(const char *args, int n, unsigned seed)
{
    char got[] = "/tmp/swa_cli_par_XXXXXX", want[] = "/tmp/swa_cli_single_XXXXXX", err[] = "/tmp/swa_cli_par_err_XXXXXX";
    char cmd[4096], *text;
    int rc;
    close(mkstemp(got)); close(mkstemp(want)); close(mkstemp(err));
    write_single_runs(args, n, seed, want);
    snprintf(cmd, sizeof cmd, GENERATE " %s --parallel %d -s %u > %s 2> %s", args, n, seed, got, err);
    assert_int_equal(tu_run(cmd), 0);
    snprintf(cmd, sizeof cmd, "diff %s %s", want, got);
    text = tu_capture(cmd, &rc);
    if (rc != 0) fail_msg("%s --parallel %d -s %u differs from the single runs:\n%s", args, n, seed, text);
    free(text);
    text = read_text(err);
    remove(got); remove(want); remove(err);
    return text;
}

/* --parallel: each continuation equals the single run with its seed. Sampled (with and without
   the repetition penalty, which sees the prompt) past the window of the shipped model, greedy
   (N copies of one story), with token ids on a model of full attention whose context fills
   (every continuation stops there, exit 0), and on a byte vocabulary where end-of-sequence
   ends some continuations early while the others go on. */
static void test_parallel_equals_single_runs(void **state)
{
    const char *shipped = "examples/models/swa-stories.gguf";
    char model[] = "/tmp/swa_cli_par_model_XXXXXX", bytes[] = "/tmp/swa_cli_par_bytes_XXXXXX", args[512], *err, *ids;
    int32_t tok[5];
    long n_gen = 0;
    (void)state;
    if (access(GENERATE_FILE, X_OK) != 0) fail_msg(GENERATE_FILE " is missing: run make first");
    snprintf(args, sizeof args, "-m %s -p 'Once upon a time' -n 90 --temp 0.9 -t 1", shipped);
    err = check_parallel(args, 3, 42);
    if (!strstr(err, "generation: 270 tokens") || !strstr(err, "for 3 sequences")) fail_msg("unexpected log:\n%s", err);
    free(err);
    /* the penalty sees the prompt: forgetting it changes these stories */
    snprintf(args, sizeof args, "-m %s -p 'Once upon a time' -n 40 --temp 0.8 --repeat-penalty 1.5 -t 2", shipped);
    free(check_parallel(args, 2, 7));
    /* greedy: two copies of the greedy story, whatever the seeds */
    snprintf(args, sizeof args, "-m %s -p 'Once upon a time' -n 30 --temp 0", shipped);
    {
        char got[] = "/tmp/swa_cli_greedy_XXXXXX", want[] = "/tmp/swa_cli_greedy1_XXXXXX", cmd[4096];
        close(mkstemp(got)); close(mkstemp(want));
        snprintf(cmd, sizeof cmd, "{ echo '--- continuation 1 of 2, seed 5 ---'; " GENERATE " %s 2>/dev/null; "
                 "echo '--- continuation 2 of 2, seed 6 ---'; " GENERATE " %s -s 99 2>/dev/null; } > %s && "
                 GENERATE " %s --parallel 2 -s 5 2>/dev/null > %s && cmp -s %s %s", args, args, want, args, got, want, got);
        assert_int_equal(tu_run(cmd), 0);
        remove(got); remove(want);
    }
    /* token ids; 32 positions of full attention: 5 prompt tokens, then 28 tokens each */
    write_full_model(model, 2, 4);
    tu_random_tokens(tok, 5, 50, 8);
    ids = ids_arg(tok, 5);
    snprintf(args, sizeof args, "-m %s --ids %s -n 100 --temp 1 --top-k 0 --top-p 1 --min-p 0", model, ids);
    err = check_parallel(args, 4, 1000);
    if (!strstr(err, "generation: 112 tokens") || !strstr(err, "context is full")) fail_msg("unexpected log:\n%s", err);
    free(err);
    /* end-of-sequence (id 2 of 259, nearly uniform draws) ends some continuations before -n */
    close(mkstemp(bytes));
    write_byte_vocab_model(bytes);
    snprintf(args, sizeof args, "-m %s -p hi -n 100 --temp 4 --top-k 0 --top-p 1 --min-p 0", bytes);
    err = check_parallel(args, 4, 3);
    {
        const char *g = strstr(err, "generation: ");
        if (!g || sscanf(g, "generation: %ld", &n_gen) != 1) fail_msg("no timings:\n%s", err);
        if (n_gen >= 400) fail_msg("no continuation ended early; choose another seed:\n%s", err);
    }
    free(err);
    free(ids);
    remove(model); remove(bytes);
}

/* Combinations --parallel refuses, and counts it refuses: exit 2 with a message. */
static void test_parallel_refusals(void **state)
{
    static const char *bad[][2] = {
        {"--parallel 2 -i", "does not go with -i"},
        {"--parallel 2 --save-state /tmp/x", "does not go with --save-state"},
        {"--parallel 2 --load-state /tmp/x", "does not go with --load-state"},
        {"--parallel 2 --dump-logits /tmp/x", "does not go with --dump-logits"},
        {"--parallel 2 -n 0", "does not go with -n 0"},
        {"--parallel 0", "--parallel wants a number in 1..256"},
        {"--parallel -3", "--parallel wants a number in 1..256"},
        {"--parallel 257", "--parallel wants a number in 1..256"},
        {"--parallel 100000000000000000000", "--parallel wants a number in 1..256"},
        {"--parallel two", "--parallel wants a number in 1..256"},
        {"--parallel", "--parallel needs a value"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[512], *out;
        int rc;
        snprintf(cmd, sizeof cmd, GENERATE " -m x.gguf -p hi %s 2>&1", bad[i][0]);
        out = tu_capture(cmd, &rc);
        if (rc != 2 || !strstr(out, bad[i][1])) fail_msg("%s: exit %d, wanted 2 and \"%s\":\n%s", bad[i][0], rc, bad[i][1], out);
        free(out);
    }
    assert_int_equal(tu_run(GENERATE " -h | grep -q -- '--parallel N'"), 0);
}

/* --sinks N reaches the library: on a full-attention model of 32 positions, the logits before
   the context fills are those of a run without sinks, bit for bit (README: exact up to n_ctx),
   and generation goes on past 32 positions instead of stopping. Negative or n_ctx is refused. */
static void test_sinks(void **state)
{
    char model[] = "/tmp/swa_cli_sinks_XXXXXX", d1[] = "/tmp/swa_cli_sinks_d1_XXXXXX", d2[] = "/tmp/swa_cli_sinks_d2_XXXXXX";
    char cmd[2048], *out, *p;
    int rc, n = 0;
    (void)state;
    write_full_model(model, 1, 9);
    close(mkstemp(d1)); close(mkstemp(d2));
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids 1,2,3,4,5 -n 20 --temp 0 --dump-logits %s > %s.out 2>/dev/null && "
             GENERATE " -m %s --ids 1,2,3,4,5 -n 20 --temp 0 --sinks 4 --dump-logits %s > %s.out 2>/dev/null && "
             "cmp -s %s %s && cmp -s %s.out %s.out", model, d1, d1, model, d2, d2, d1, d2, d1, d2);
    assert_int_equal(tu_run(cmd), 0);
    assert_int_equal(dump_rows(d1, 50), 5 + 19);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids 1,2,3,4,5 -n 100 --temp 0 --sinks 4 2>&1 >/dev/null | grep -q 'context is full'",
             model);
    assert_int_not_equal(tu_run(cmd), 0);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids 1,2,3,4,5 -n 100 --temp 0 --sinks 4 2>/dev/null", model);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    for (p = strtok(out, " \n"); p; p = strtok(NULL, " \n")) n++;
    assert_int_equal(n, 100);
    free(out);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids 1 --sinks -1 2>&1", model);
    out = tu_capture(cmd, &rc);
    if (rc != 2 || !strstr(out, "--sinks wants a number in 0..")) fail_msg("--sinks -1: exit %d\n%s", rc, out);
    free(out);
    snprintf(cmd, sizeof cmd, GENERATE " -m %s --ids 1 --sinks 32 2>&1", model);
    out = tu_capture(cmd, &rc);
    if (rc != 1 || !strstr(out, "n_sink 32 must be below n_ctx 32")) fail_msg("--sinks 32: exit %d\n%s", rc, out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s.out", d1); remove(cmd);
    snprintf(cmd, sizeof cmd, "%s.out", d2); remove(cmd);
    remove(model); remove(d1); remove(d2);
}

/* ---- Ctrl-C, closed pipes, inputs checked first, messages ---- */

#define SHIPPED "examples/models/swa-stories.gguf"

static int need_shipped(void)
{
    if (access(SHIPPED, R_OK) == 0) return 1;
    print_message("skipped: " SHIPPED " is absent\n");
    return 0;
}

/* About 27,000 tokens on the shipped model: seconds of prompt evaluation. */
static void write_long_prompt(const char *path)
{
    static const char line[] = "Once upon a time there was a dog. ";
    size_t n = sizeof line - 1, k;
    char *text = (char *)malloc(3000 * n + 1);
    assert_non_null(text);
    for (k = 0; k < 3000; k++) memcpy(text + k * n, line, n);
    tu_write_file(path, text, 3000 * n);
    free(text);
}

/* The count N of the "prompt: N tokens" statistics line, -1 without one. */
static long prompt_count(const char *log)
{
    const char *p = strstr(log, "prompt: ");
    return p ? strtol(p + 8, NULL, 10) : -1;
}

/* SIGINT to a running swa-generate once `ready` appears on its stderr (and `delay` seconds
   more): it must end with status 130 within `limit` seconds, saying so. The delay from the
   signal to the exit is returned; the log of stderr in *log. */
static double interrupt_after(const char *cmd, const char *err, const char *ready, double delay, double limit, int stdin_fd,
                              char **log)
{
    pid_t pid = tu_spawn(cmd, stdin_fd);
    double t0, latency;
    int rc;
    if (!tu_wait_for_text(err, ready, 60)) {
        kill(pid, SIGKILL);
        tu_wait(pid, 10);
        fail_msg("\"%s\" never appeared on stderr: %s", ready, cmd);
    }
    tu_sleep(delay);
    t0 = tu_seconds();
    kill(pid, SIGINT);
    rc = tu_wait(pid, 30);
    latency = tu_seconds() - t0;
    *log = read_text(err);
    if (rc != 130 || !strstr(*log, "swa-generate: interrupted"))
        fail_msg("after SIGINT: exit %d (want 130), %.3f s; stderr:\n%s", rc, latency, *log);
    if (latency > limit) fail_msg("SIGINT took %.3f s to end the program (limit %.1f s): %s", latency, limit, cmd);
    return latency;
}

/* Ctrl-C stops swa-generate within a layer, through the library's abort callback, in each
   phase: a long prompt (whose evaluation takes seconds: the statistics show it was cut short;
   on a loaded machine the signal may come while it is still tokenized, before any of it),
   generation without end (-n -1 on a windowed model), and a chat waiting at its prompt. Exit
   130, the timings of what was evaluated, within tu_stop_limit() (half a second in a plain
   build; one layer of this model takes microseconds). */
static void test_interrupt(void **state)
{
    char text[64], err[64], out[64], cmd[1024], *log;
    double latency;
    int fds[2];
    (void)state;
    if (!need_shipped()) return;
    tu_tmp_path(text, sizeof text, "long");
    tu_tmp_path(err, sizeof err, "err");
    tu_tmp_path(out, sizeof out, "out");
    write_long_prompt(text);
    snprintf(cmd, sizeof cmd, "exec " GENERATE " -m " SHIPPED " -f %s -n 4 > /dev/null 2> %s", text, err);
    latency = interrupt_after(cmd, err, "swa-generate: llama", 0.2, tu_stop_limit(), -1, &log);
    print_message("SIGINT to exit while a prompt of 27,000 tokens is evaluated: %.1f ms\n", latency * 1e3);
    if (prompt_count(log) < 0 || prompt_count(log) >= 27000 || !strstr(log, "generation: 0 tokens"))
        fail_msg("the prompt was not cut short:\n%s", log);
    free(log);
    snprintf(cmd, sizeof cmd, "exec " GENERATE " -m " SHIPPED " -p 'Once upon a time' -n -1 > %s 2> %s", out, err);
    latency = interrupt_after(cmd, err, "swa-generate: llama", 0.3, tu_stop_limit(), -1, &log);
    print_message("SIGINT to exit during generation: %.1f ms\n", latency * 1e3);
    if (!strstr(log, "generation: ")) fail_msg("no timings after an interrupted generation:\n%s", log);
    free(log);
    assert_int_equal(pipe(fds), 0);   /* a chat's stdin that stays open and silent */
    snprintf(cmd, sizeof cmd, "exec " GENERATE " -m " SHIPPED " -i -n 4 > /dev/null 2> %s", err);
    interrupt_after(cmd, err, "> ", 0.05, tu_stop_limit(), fds[0], &log);
    close(fds[0]);
    close(fds[1]);
    free(log);
    remove(text); remove(err); remove(out);
}

/* A second Ctrl-C ends swa-generate at once, by the signal, and removes the unfinished output.
   The first comes while a 3 MB prompt is tokenized (the one step without a callback, a second
   of work), the second 20 ms later: the program dies of SIGINT, and no temporary file of its
   --dump-logits is left beside the destination, which is not created. */
static void test_second_interrupt(void **state)
{
    char text[64], err[64], dump[128], dir[80], cmd[1024];
    static const char line[] = "Once upon a time there was a dog. ";
    size_t n = sizeof line - 1, k, reps = 90000;
    char *body;
    pid_t pid;
    int status = 0;
    double end;
    (void)state;
    if (!need_shipped()) return;
#if defined(TU_SANITIZED)
    print_message("skipped: sanitizers run a signal handler late, so the two signals cannot be spaced\n");
    return;
#endif
    if (strlen(SWA_TEST_RUN) > 1) {   /* an emulator stands between the signals and the program */
        print_message("skipped: the programs run under %s\n", SWA_TEST_RUN);
        return;
    }
    body = (char *)malloc(reps * n);
    assert_non_null(body);
    for (k = 0; k < reps; k++) memcpy(body + k * n, line, n);
    tu_tmp_path(text, sizeof text, "huge");
    tu_tmp_path(err, sizeof err, "err");
    snprintf(dir, sizeof dir, "/tmp/swa_test_dump_%ld", (long)getpid());
    mkdir(dir, 0700);
    snprintf(dump, sizeof dump, "%s/d.f32", dir);
    tu_write_file(text, body, reps * n);
    free(body);
    snprintf(cmd, sizeof cmd, "exec " GENERATE " -m " SHIPPED " -f %s -n 1 --dump-logits %s > /dev/null 2> %s", text, dump, err);
    pid = tu_spawn(cmd, -1);
    assert_true(tu_wait_for_text(err, "swa-generate: llama", 60));
    kill(pid, SIGINT);
    tu_sleep(0.02);
    kill(pid, SIGINT);
    for (end = tu_seconds() + 30; waitpid(pid, &status, WNOHANG) != pid; tu_sleep(0.001))
        if (tu_seconds() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("%s", "two SIGINTs did not end the program");
        }
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGINT)
        fail_msg("after two SIGINTs: %s %d (the first may have ended it: was the prompt tokenized already?)",
                 WIFSIGNALED(status) ? "signal" : "exit", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", dir);
    if (tu_run(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "ls -l %s >&2", dir);
        tu_run(cmd);
        fail_msg("files were left in %s", dir);
    }
    rmdir(dir);
    remove(text); remove(err);
}

/* With SIGPIPE ignored, a reader that goes away is a write error: the run ends at once with
   status 1 and says why, without a statistics line, whether it had a limit or not. */
static void test_closed_pipe(void **state)
{
    char err[64], status[64], cmd[1024], *log, *code;
    const char *n[2] = {"-1", "2000"};
    int i, rc;
    (void)state;
    if (!need_shipped()) return;
    tu_tmp_path(err, sizeof err, "err");
    tu_tmp_path(status, sizeof status, "status");
    for (i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "trap '' PIPE; { " GENERATE " -m " SHIPPED " -p 'Once upon a time' -n %s 2> %s; "
                 "echo $? > %s; } | head -c 10 > /dev/null", n[i], err, status);
        rc = tu_wait(tu_spawn(cmd, -1), 60);
        code = read_text(status);
        log = read_text(err);
        if (rc != 0 || strcmp(code, "1\n") || !strstr(log, "cannot write to standard output: Broken pipe") ||
            strstr(log, "prompt: "))
            fail_msg("-n %s into a closed pipe: shell %d, exit %s; stderr:\n%s", n[i], rc, code, log);
        free(code);
        free(log);
    }
    remove(err); remove(status);
}

/* Inputs are read and checked before the model is loaded (a model that does not exist is not
   reached, the summary line is not printed), outputs opened before anything runs; an error
   means exit 1 and no statistics. A NUL byte in a -f file is a byte of the prompt, as
   swa-tokenize takes it; a chat refuses it, naming its offset. */
static void test_inputs_checked_first(void **state)
{
    char text[64], err[64], cmd[1024], *log;
    static const char nul_text[] = "Once upon\0a time there was";
    struct {
        const char *args, *want;
    } cases[] = {
        {"-m /nonexistent.gguf -f /tmp", "cannot read /tmp"},
        {"-m /nonexistent.gguf -i -f %s", "a NUL byte at offset 9; a chat message is text"},
        {"-m /nonexistent.gguf --load-state %s", "is not a saved state"},
        {"-m " SHIPPED " --ids 1,5000", "--ids: token 5000 (the 2nd) is not below the vocabulary's 1536"},
        {"-m " SHIPPED " -p hi --save-state /nonexistent/folder/s.state", "cannot write /nonexistent/folder/s.state"},
        {"-m " SHIPPED " -p hi --dump-logits /nonexistent/folder/d.f32", "cannot write /nonexistent/folder/d.f32"},
    };
    size_t i;
    long a, b, alone;
    int rc;
    (void)state;
    if (!need_shipped()) return;
    tu_tmp_path(text, sizeof text, "nul");
    tu_tmp_path(err, sizeof err, "err");
    tu_write_file(text, nul_text, sizeof nul_text - 1);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, cases[i].args, text);
        snprintf(cmd, sizeof cmd, GENERATE " %s -n 1 > /dev/null 2> %s", args, err);
        rc = tu_run(cmd);
        log = read_text(err);
        if (rc != 1 || !strstr(log, cases[i].want) || strstr(log, "swa-generate: llama") || strstr(log, "prompt: ") ||
            strstr(log, "nonexistent.gguf"))
            fail_msg("%s: exit %d; stderr:\n%s", args, rc, log);
        free(log);
    }
    /* the NUL byte and what follows it are tokenized, as swa-tokenize does */
    snprintf(cmd, sizeof cmd, GENERATE " -m " SHIPPED " -f %s -n 0 > /dev/null 2> %s", text, err);
    assert_int_equal(tu_run(cmd), 0);
    log = read_text(err);
    a = prompt_count(log);
    free(log);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-tokenize") " -m " SHIPPED " -f %s 2>&1 >/dev/null", text);
    log = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    b = strstr(log, "swa-tokenize: ") ? strtol(strstr(log, "swa-tokenize: ") + 14, NULL, 10) : -2;
    free(log);
    snprintf(cmd, sizeof cmd, GENERATE " -m " SHIPPED " -p 'Once upon' -n 0 2>&1 >/dev/null");
    log = tu_capture(cmd, &rc);
    alone = prompt_count(log);
    free(log);
    if (a != b || a <= alone + 3) fail_msg("a NUL byte in -f: swa-generate %ld tokens, swa-tokenize %ld, the text before it %ld", a, b, alone);
    remove(text); remove(err);
}

/* Usage errors are one line that points at --help (exit 2); -t 0 is every CPU and more threads
   than CPUs is a warning; a window wider than the trained one is a warning; the summary gives
   the cache in KiB when it is that small: 6 layers x 64 positions x 4 kv heads x 32 values x
   2 (keys, values) x 2 bytes (f16) = 192 KiB for the shipped model. */
static void test_usage_warnings_summary(void **state)
{
    char cmd[1024], *log;
    int rc;
    (void)state;
    log = tu_capture(GENERATE " --frobnicate 2>&1", &rc);
    if (rc != 2 || strcmp(log, "swa-generate: unknown flag --frobnicate (see swa-generate --help)\n"))
        fail_msg("a usage error: exit %d, \"%s\"", rc, log);
    free(log);
    if (!need_shipped()) return;
    log = tu_capture(GENERATE " -m " SHIPPED " -p hi -n 1 -t 0 2>&1 >/dev/null", &rc);
    if (rc != 0 || strstr(log, "warning") || !strstr(log, "cache 192.0 KiB f16"))
        fail_msg("-t 0: exit %d\n%s", rc, log);
    free(log);
    snprintf(cmd, sizeof cmd, GENERATE " -m " SHIPPED " -p hi -n 1 -t %d 2>&1 >/dev/null", (int)swa_cpu_count() + 1);
    log = tu_capture(cmd, &rc);
    if (rc != 0 || !strstr(log, "warning: -t") || !strstr(log, "more threads than the"))
        fail_msg("-t above the CPUs: exit %d\n%s", rc, log);
    free(log);
    log = tu_capture(GENERATE " -m " SHIPPED " -p hi -n 1 -w 100000 2>&1 >/dev/null", &rc);
    if (rc != 0 || !strstr(log, "warning: -w 100000 is wider than the window of 64 the model was trained with"))
        fail_msg("-w 100000: exit %d\n%s", rc, log);
    free(log);
    log = tu_capture(GENERATE " -m " SHIPPED " -p hi -n 1 -w 64 2>&1 >/dev/null", &rc);
    if (rc != 0 || strstr(log, "warning")) fail_msg("-w 64: exit %d\n%s", rc, log);
    free(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump_logits_matches_reference),
        cmocka_unit_test(test_bad_flags),
        cmocka_unit_test(test_mistral_window_hint),
        cmocka_unit_test(test_chat_template_on_shipped_model),
        cmocka_unit_test(test_chat_stops_at_end_of_turn),
        cmocka_unit_test(test_save_and_load_state),
        cmocka_unit_test(test_prompt_with_more_tokens_than_bytes),
        cmocka_unit_test(test_chat_reads_the_prompt_file),
        cmocka_unit_test(test_chat_grammar_each_turn),
        cmocka_unit_test(test_context_end),
        cmocka_unit_test(test_parallel_equals_single_runs),
        cmocka_unit_test(test_parallel_refusals),
        cmocka_unit_test(test_sinks),
        cmocka_unit_test(test_interrupt),
        cmocka_unit_test(test_second_interrupt),
        cmocka_unit_test(test_closed_pipe),
        cmocka_unit_test(test_inputs_checked_first),
        cmocka_unit_test(test_usage_warnings_summary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
