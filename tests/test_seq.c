/* Many sequences in one context and the control around them: a batch of several sequences in one
   forward pass, forks, rewind, snapshots, abort, thread changes and embeddings. Every logit is
   checked against the double-precision reference of testutil.h run on that sequence alone. */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/testutil.h"
#include <unistd.h>

#ifdef SWA_TEST_QUICK   /* under an emulator */
#define LONG_RUN 20000
#else
#define LONG_RUN 100000
#endif

#define V 40
#define TOL 2e-5   /* F32 weights and cache: float rounding only */

static tu_spec seq_spec(const int *windows, uint64_t seed)
{
    tu_spec s;
    memset(&s, 0, sizeof s);
    s.n_layer = 2;
    s.n_embd = 32;
    s.n_head = 4;
    s.n_kv_head = 2;
    s.n_ff = 48;
    s.n_vocab = V;
    s.n_ctx = 512;
    s.type = GW_F32;
    s.windows = windows;
    s.seed = seed;
    return s;
}

typedef struct fixture {
    tu_model tm;
    swa_model *model;
    int windows[2];
} fixture;

static void fixture_open(fixture *f, int w0, int w1, uint64_t seed)
{
    tu_spec s;
    f->windows[0] = w0;
    f->windows[1] = w1;
    s = seq_spec(f->windows, seed);
    f->model = tu_build_load(&f->tm, &s);
}

static void fixture_close(fixture *f)
{
    swa_model_free(f->model);
    tu_free(&f->tm);
}

static swa_ctx *make_ctx(const fixture *f, int n_seq, int n_rewind, int n_batch, int n_threads)
{
    return tu_ctx(f->model, (swa_ctx_config){.kv_type = SWA_KV_F32, .n_seq = n_seq, .n_rewind = n_rewind,
                                             .n_batch = n_batch, .n_threads = n_threads});
}

/* The logits of token `at` of tok[0..n) against the reference run of the whole sequence. */
static void check_logits(const fixture *f, const int32_t *tok, int n, int at, const float *got)
{
    double *ref = (double *)malloc(sizeof(double) * (size_t)n * V);
    double e;
    tu_reference(&f->tm, tok, n, f->windows, ref);
    e = tu_rel_error(got, ref + (size_t)at * V, V);
    free(ref);
    if (e > TOL) fail_msg("token %d of %d: error %g", at, n, e);
}

/* tok[from..to) evaluated on c, which holds tok[0..from) in sequence 0: the last logits against
   the reference run of tok[0..to). */
static void eval_check(const fixture *f, swa_ctx *c, const int32_t *tok, int from, int to)
{
    const float *logits;
    swa_error err;
    assert_int_equal(swa_ctx_eval(c, tok + from, to - from, &logits, &err), SWA_OK);
    check_logits(f, tok, to, to - 1, logits);
}

/* Three sequences of different lengths, their prompts interleaved in one batch and split over
   chunks of 5, then generated a token each per batch in a changing order, past both windows. */
static void test_batch_of_sequences(void **state)
{
    fixture f;
    swa_ctx *c;
    swa_error err;
    int32_t text[3][64];
    int len[3] = {7, 3, 12}, s, i, step;
    int32_t tok[32], seq[32];
    int8_t want[32];
    float *logits = (float *)malloc(sizeof(float) * 32 * V);
    swa_batch b;
    (void)state;
    fixture_open(&f, 6, 0, 11);
    for (s = 0; s < 3; s++) tu_random_tokens(text[s], 64, V, 100 + (uint64_t)s);
    c = make_ctx(&f, 3, 0, 5, 2);
    /* prompts: seq 2's tokens first and last, the others in between, every token's logits */
    {
        int next[3] = {0, 0, 0}, n = 0, order[22] = {2, 2, 0, 1, 0, 2, 2, 0, 1, 0, 2, 2, 0, 2, 1, 2, 0, 2, 2, 2, 0, 2};
        for (i = 0; i < 22; i++) {
            s = order[i];
            tok[n] = text[s][next[s]++];
            seq[n] = s;
            want[n++] = 1;
        }
        assert_int_equal(next[0], len[0]);
        assert_int_equal(next[1], len[1]);
        assert_int_equal(next[2], len[2]);
        b.n = (size_t)n;
        b.token = tok;
        b.seq = seq;
        b.logits = want;
        if (swa_ctx_decode(c, &b, logits, &err) != SWA_OK) fail_msg("%s", err.msg);
        memset(next, 0, sizeof next);
        for (i = 0; i < n; i++) {
            s = seq[i];
            check_logits(&f, text[s], next[s] + 1, next[s], logits + (size_t)i * V);
            next[s]++;
        }
    }
    for (s = 0; s < 3; s++) assert_int_equal(swa_seq_pos(c, s), len[s]);
    /* generation: one token per sequence per batch, logits of the last of each (the default) */
    for (step = 0; step < 20; step++) {
        for (i = 0; i < 3; i++) {
            s = (i + step) % 3;
            seq[i] = s;
            tok[i] = text[s][len[s]];
        }
        b.n = 3;
        b.logits = NULL;
        if (swa_ctx_decode(c, &b, logits, &err) != SWA_OK) fail_msg("%s", err.msg);
        for (i = 0; i < 3; i++) {
            s = seq[i];
            len[s]++;
            check_logits(&f, text[s], len[s], len[s] - 1, logits + (size_t)i * V);
        }
    }
    for (s = 0; s < 3; s++) assert_int_equal(swa_seq_pos(c, s), len[s]);
    assert_int_equal(swa_ctx_pos(c), len[0]);
    free(logits);
    swa_ctx_free(c);
    fixture_close(&f);
}

/* Which tokens get logits, and the errors of a batch: nothing is evaluated when one fails. */
static void test_batch_logits_and_errors(void **state)
{
    fixture f;
    swa_ctx *c;
    swa_error err;
    int32_t tok[6] = {1, 2, 3, 4, 5, 6}, seq[6] = {1, 0, 1, 0, 1, 2};
    int8_t want[6] = {0, 1, 0, 0, 1, 0};
    float logits[3 * V];
    int32_t s0[3] = {2, 4}, s1[3] = {1, 3, 5}, s2[1] = {6};
    swa_batch b;
    (void)state;
    fixture_open(&f, 4, 4, 12);
    c = make_ctx(&f, 3, 0, 64, 1);
    b.n = 6;
    b.token = tok;
    b.seq = seq;
    b.logits = NULL;   /* the last of each sequence, in batch order: seq 0's, seq 1's, seq 2's */
    assert_int_equal(swa_ctx_decode(c, &b, logits, &err), SWA_OK);
    check_logits(&f, s0, 2, 1, logits);
    check_logits(&f, s1, 3, 2, logits + V);
    check_logits(&f, s2, 1, 0, logits + 2 * V);
    swa_ctx_reset(c);
    b.logits = want;   /* chosen: seq 0's first token, seq 1's last */
    assert_int_equal(swa_ctx_decode(c, &b, logits, &err), SWA_OK);
    check_logits(&f, s0, 2, 0, logits);
    check_logits(&f, s1, 3, 2, logits + V);
    /* errors leave every sequence where it was */
    seq[3] = 3;
    assert_int_equal(swa_ctx_decode(c, &b, logits, &err), SWA_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "sequence 3 (at index 3) is out of range 0..2"));
    seq[3] = 0;
    tok[2] = V;
    assert_int_equal(swa_ctx_decode(c, &b, logits, &err), SWA_ERR_INVALID_ARG);
    tok[2] = 3;
    b.n = 0;
    assert_int_equal(swa_ctx_decode(c, &b, logits, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_ctx_decode(c, NULL, logits, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_seq_pos(c, 0), 2);
    assert_int_equal(swa_seq_pos(c, 1), 3);
    assert_int_equal(swa_seq_pos(c, 2), 1);
    assert_int_equal(swa_seq_pos(c, 3), -1);
    assert_int_equal(swa_seq_reset(c, 5, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_seq_copy(c, 0, -1, &err), SWA_ERR_INVALID_ARG);
    swa_ctx_free(c);
    fixture_close(&f);
}

/* A full-attention layer: each sequence runs out of n_ctx on its own. */
static void test_batch_context_full(void **state)
{
    fixture f;
    swa_ctx *c;
    swa_ctx_config cfg;
    swa_error err;
    int32_t tok[8] = {1, 2, 3, 4, 5, 6, 7, 8}, seq[8] = {0, 0, 0, 1, 1, 1, 1, 1};
    swa_batch b = {8, tok, seq, NULL};
    (void)state;
    fixture_open(&f, 4, 0, 13);
    memset(&cfg, 0, sizeof cfg);
    cfg.n_seq = 2;
    cfg.n_ctx = 4;
    assert_int_equal(swa_ctx_create(f.model, &cfg, &c, NULL), SWA_OK);
    assert_int_equal(swa_ctx_decode(c, &b, NULL, &err), SWA_ERR_CONTEXT_FULL);
    assert_non_null(strstr(err.msg, "5 tokens at position 0 exceed the 4 positions"));
    assert_int_equal(swa_seq_pos(c, 0), 0);
    b.n = 7;
    assert_int_equal(swa_ctx_decode(c, &b, NULL, &err), SWA_OK);
    assert_int_equal(swa_seq_pos(c, 0), 3);
    assert_int_equal(swa_seq_pos(c, 1), 4);
    swa_ctx_free(c);
    fixture_close(&f);
}

/* A shared prompt evaluated once and continued three ways. */
static void test_fork(void **state)
{
    fixture f;
    swa_ctx *c;
    swa_error err;
    int32_t text[3][40];
    int s, i;
    (void)state;
    fixture_open(&f, 5, 3, 14);
    tu_random_tokens(text[0], 40, V, 7);
    for (s = 1; s < 3; s++) memcpy(text[s], text[0], sizeof text[0]);
    for (s = 0; s < 3; s++) tu_random_tokens(text[s] + 9, 31, V, 50 + (uint64_t)s);
    c = make_ctx(&f, 3, 0, 4, 1);
    assert_int_equal(swa_ctx_eval(c, text[0], 9, NULL, &err), SWA_OK);
    assert_int_equal(swa_seq_copy(c, 0, 1, &err), SWA_OK);
    assert_int_equal(swa_seq_copy(c, 0, 2, &err), SWA_OK);
    assert_int_equal(swa_seq_pos(c, 2), 9);
    for (i = 9; i < 40; i++)
        for (s = 0; s < 3; s++) {
            int32_t one = s;
            float out[V];
            swa_batch b = {1, &text[s][i], &one, NULL};
            assert_int_equal(swa_ctx_decode(c, &b, out, &err), SWA_OK);
            check_logits(&f, text[s], i + 1, i, out);
        }
    /* sequence 0 through the one-sequence calls agrees */
    assert_int_equal(swa_seq_reset(c, 0, &err), SWA_OK);
    eval_check(&f, c, text[1], 0, 40);
    swa_ctx_free(c);
    fixture_close(&f);
}

/* Going back: with n_rewind = R a windowed layer of window W keeps W + R slots, and a token needs
   only the W - 1 keys before it, so R + 1 tokens can be taken back after a run; the rewound
   sequence's logits are those of the sequence that never had the dropped tokens. */
static void test_rewind(void **state)
{
    fixture f;
    swa_ctx *c;
    swa_error err;
    int32_t text[60], alt[60];
    int R;
    (void)state;
    fixture_open(&f, 6, 0, 15);
    for (R = 0; R <= 3; R++) {
        int back = R + 1, i;
        tu_random_tokens(text, 60, V, 20 + (uint64_t)R);
        memcpy(alt, text, sizeof text);
        c = make_ctx(&f, 1, R, 8, 1);
        assert_int_equal(swa_ctx_eval(c, text, 30, NULL, &err), SWA_OK);
        assert_int_equal(swa_seq_max_rewind(c, 0), back);
        assert_int_equal(swa_seq_rewind(c, 0, back + 1, &err), SWA_ERR_INVALID_ARG);
        assert_non_null(strstr(err.msg, "can go back"));
        assert_int_equal(swa_seq_pos(c, 0), 30);
        assert_int_equal(swa_seq_rewind(c, 0, back, &err), SWA_OK);
        assert_int_equal(swa_seq_pos(c, 0), 30 - back);
        assert_int_equal(swa_seq_max_rewind(c, 0), 0);   /* already as far back as the rings allow */
        tu_random_tokens(alt + 30 - back, 30 + back, V, 90 + (uint64_t)R);
        for (i = 30 - back; i < 45; i++) {
            eval_check(&f, c, alt, i, i + 1);
        }
        swa_ctx_free(c);
    }
    fixture_close(&f);
    /* full attention only: everything below n_ctx stays, any rewind works */
    fixture_open(&f, 0, 0, 16);
    c = make_ctx(&f, 1, 0, 8, 1);
    tu_random_tokens(text, 60, V, 5);
    assert_int_equal(swa_ctx_eval(c, text, 30, NULL, &err), SWA_OK);
    assert_int_equal(swa_seq_max_rewind(c, 0), 30);
    assert_int_equal(swa_seq_rewind(c, 0, 25, &err), SWA_OK);
    tu_random_tokens(alt, 60, V, 6);
    memcpy(alt, text, 5 * sizeof(int32_t));
    eval_check(&f, c, alt, 5, 15);
    swa_ctx_free(c);
    fixture_close(&f);
}

/* A snapshot restored into a new context (and into another sequence) continues exactly. */
static void test_snapshot_round_trip(void **state)
{
    fixture f;
    swa_ctx *a, *b;
    swa_error err;
    int32_t text[50];
    size_t size, written;
    uint8_t *buf;
    char path[64];
    int i;
    (void)state;
    fixture_open(&f, 6, 0, 17);
    tu_random_tokens(text, 50, V, 31);
    a = make_ctx(&f, 2, 2, 8, 1);
    assert_int_equal(swa_ctx_eval(a, text, 23, NULL, &err), SWA_OK);
    assert_int_equal(swa_seq_rewind(a, 0, 2, &err), SWA_OK);   /* the rewind slack is part of the state */
    size = swa_state_size(a, 0);
    assert_true(size > 0);
    assert_int_equal(swa_state_save(a, 0, NULL, 0, &written, &err), SWA_ERR_BUFFER_TOO_SMALL);
    assert_int_equal(written, size);
    buf = (uint8_t *)malloc(size);
    assert_int_equal(swa_state_save(a, 0, buf, size, &written, &err), SWA_OK);
    swa_ctx_free(a);
    b = make_ctx(&f, 2, 2, 3, 2);
    assert_int_equal(swa_state_load(b, 1, buf, size, &err), SWA_OK);   /* into sequence 1 */
    assert_int_equal(swa_seq_pos(b, 1), 21);
    assert_int_equal(swa_seq_max_rewind(b, 1), 1);
    for (i = 21; i < 40; i++) {
        int32_t one = 1;
        float out[V];
        swa_batch bt = {1, &text[i], &one, NULL};
        assert_int_equal(swa_ctx_decode(b, &bt, out, &err), SWA_OK);
        check_logits(&f, text, i + 1, i, out);
    }
    /* the whole context through a file */
    snprintf(path, sizeof path, "/tmp/swa-test-state-%d", (int)getpid());
    assert_int_equal(swa_ctx_eval(b, text, 5, NULL, &err), SWA_OK);
    assert_int_equal(swa_state_save_file(b, -1, path, &err), SWA_OK);
    a = make_ctx(&f, 2, 2, 8, 1);
    assert_int_equal(swa_state_load_file(a, -1, path, &err), SWA_OK);
    assert_int_equal(swa_seq_pos(a, 0), 5);
    assert_int_equal(swa_seq_pos(a, 1), 40);
    eval_check(&f, a, text, 5, 15);
    remove(path);
    swa_ctx_free(a);
    swa_ctx_free(b);
    free(buf);
    fixture_close(&f);
}

/* What a restore refuses, and says why. */
static void test_snapshot_refusals(void **state)
{
    fixture f, other;
    swa_ctx *a, *b;
    swa_error err;
    int32_t text[20];
    size_t size;
    uint8_t *buf;
    (void)state;
    fixture_open(&f, 6, 0, 18);
    fixture_open(&other, 6, 0, 19);   /* the same shape, other weights: other metadata */
    tu_random_tokens(text, 20, V, 3);
    a = make_ctx(&f, 2, 0, 8, 1);
    assert_int_equal(swa_ctx_eval(a, text, 20, NULL, &err), SWA_OK);
    size = swa_state_size(a, -1);
    buf = (uint8_t *)malloc(size + 1);
    assert_int_equal(swa_state_save(a, -1, buf, size, NULL, &err), SWA_OK);
    /* another model */
    b = make_ctx(&other, 2, 0, 8, 1);
    assert_int_equal(swa_state_load(b, -1, buf, size, &err), SWA_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "another model"));
    swa_ctx_free(b);
    /* another ring layout */
    b = make_ctx(&f, 2, 1, 8, 1);
    assert_int_equal(swa_state_load(b, -1, buf, size, &err), SWA_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "layer 0 keeps 6 positions in the snapshot and 7"));
    swa_ctx_free(b);
    /* two sequences into one, into a context of one */
    b = make_ctx(&f, 1, 0, 8, 1);
    assert_int_equal(swa_state_load(b, 0, buf, size, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_state_load(b, -1, buf, size, &err), SWA_ERR_INVALID_ARG);
    swa_ctx_free(b);
    /* damaged: not a snapshot, truncated, trailing bytes */
    b = make_ctx(&f, 2, 0, 8, 1);
    assert_int_equal(swa_state_load(b, -1, "garbage", 7, &err), SWA_ERR_FORMAT);
    assert_int_equal(swa_state_load(b, -1, buf, size - 1, &err), SWA_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "truncated"));
    assert_int_equal(swa_seq_pos(b, 0), 0);
    assert_int_equal(swa_state_load(b, -1, buf, 30, &err), SWA_ERR_FORMAT);
    assert_int_equal(swa_state_load(b, -1, buf, 6, &err), SWA_ERR_FORMAT);   /* cut inside the version */
    assert_non_null(strstr(err.msg, "truncated"));
    buf[size] = 0;
    assert_int_equal(swa_state_load(b, -1, buf, size + 1, &err), SWA_ERR_FORMAT);
    assert_int_equal(swa_state_load_file(b, -1, "/nonexistent/state", &err), SWA_ERR_IO);
    assert_int_equal(swa_state_load_file(b, -1, ".", &err), SWA_ERR_IO);   /* a directory */
    assert_int_equal(swa_state_save_file(b, -1, "/nonexistent/state", &err), SWA_ERR_IO);
    assert_int_equal(swa_state_size(b, 2), 0);
    swa_ctx_free(b);
    swa_ctx_free(a);
    free(buf);
    fixture_close(&other);
    fixture_close(&f);
}

/* The whole state of a context, as bytes: its snapshot of every sequence. */
static uint8_t *state_of(const swa_ctx *c, size_t *size)
{
    uint8_t *buf;
    *size = swa_state_size(c, -1);
    buf = (uint8_t *)malloc(*size);
    assert_int_equal(swa_state_save(c, -1, buf, *size, NULL, NULL), SWA_OK);
    return buf;
}

/* Load `snap` (damaged) into sequence seq of c: refused as damaged, and c exactly as before. */
static void refused_unchanged(swa_ctx *c, int32_t seq, const uint8_t *snap, size_t size, const uint8_t *before,
                              size_t before_size, const char *what, size_t at)
{
    swa_error err;
    size_t now_size;
    uint8_t *now;
    if (swa_state_load(c, seq, snap, size, &err) != SWA_ERR_FORMAT)
        fail_msg("%s at %llu (sequence %d): not refused as damaged: %s", what, (unsigned long long)at, seq, err.msg);
    now = state_of(c, &now_size);
    if (now_size != before_size || memcmp(now, before, now_size) != 0)
        fail_msg("%s at %llu (sequence %d): the refused load changed the context", what, (unsigned long long)at, seq);
    free(now);
}

/* Every byte of a snapshot flipped in turn, every truncation and appended garbage: each load is
   refused as damaged, into one sequence or all, and the context keeps its positions, its rings
   and the logits its next token gets (against the reference run of the same tokens). */
static void test_snapshot_damage_changes_nothing(void **state)
{
    fixture f;
    swa_ctx *a, *b;
    int32_t text[30], other[30];
    uint8_t *one, *all, *before, *bad;
    size_t n_one, n_all, n_before, i, k;
    float logits[V];
    (void)state;
    fixture_open(&f, 6, 0, 21);
    tu_random_tokens(text, 30, V, 4);
    tu_random_tokens(other, 30, V, 5);
    a = make_ctx(&f, 2, 1, 8, 1);
    b = make_ctx(&f, 2, 1, 8, 1);
    assert_int_equal(swa_ctx_eval(a, text, 20, NULL, NULL), SWA_OK);
    one = (uint8_t *)malloc(n_one = swa_state_size(a, 0));
    all = (uint8_t *)malloc(n_all = swa_state_size(a, -1));
    assert_int_equal(swa_state_save(a, 0, one, n_one, NULL, NULL), SWA_OK);
    assert_int_equal(swa_state_save(a, -1, all, n_all, NULL, NULL), SWA_OK);
    {   /* b: sequence 0 at 13 tokens of `other`, sequence 1 at 7 */
        int32_t seqs[20];
        swa_batch batch;
        for (i = 0; i < 20; i++) seqs[i] = i < 13 ? 0 : 1;
        memset(&batch, 0, sizeof batch);
        batch.n = 20;
        batch.token = other;
        batch.seq = seqs;
        assert_int_equal(swa_ctx_decode(b, &batch, NULL, NULL), SWA_OK);
    }
    before = state_of(b, &n_before);
    bad = (uint8_t *)malloc(n_all + 16);
    for (k = 0; k < 2; k++) {
        const uint8_t *snap = k ? all : one;
        size_t n = k ? n_all : n_one;
        int32_t seq = k ? -1 : 1;
        for (i = 0; i < n; i++) {
            memcpy(bad, snap, n);
            bad[i] ^= (uint8_t)(1u << (i % 8));
            refused_unchanged(b, seq, bad, n, before, n_before, "a flipped bit", i);
        }
        for (i = 0; i < n; i++) refused_unchanged(b, seq, snap, i, before, n_before, "truncated", i);
        memcpy(bad, snap, n);
        for (i = 1; i <= 16; i++) {
            bad[n + i - 1] = (uint8_t)(i * 37);
            refused_unchanged(b, seq, bad, n + i, before, n_before, "garbage appended", i);
        }
    }
    assert_int_equal(swa_seq_pos(b, 0), 13);
    assert_int_equal(swa_seq_pos(b, 1), 7);
    {   /* sequence 0 goes on as if nothing had been tried */
        const float *l;
        other[13] = 3;
        assert_int_equal(swa_ctx_eval(b, other + 13, 1, &l, NULL), SWA_OK);
        memcpy(logits, l, sizeof logits);
        check_logits(&f, other, 14, 13, logits);
    }
    /* the undamaged snapshots still load */
    assert_int_equal(swa_state_load(b, 1, one, n_one, NULL), SWA_OK);
    assert_int_equal(swa_seq_pos(b, 1), 20);
    assert_int_equal(swa_state_load(b, -1, all, n_all, NULL), SWA_OK);
    free(bad);
    free(before);
    free(all);
    free(one);
    swa_ctx_free(b);
    swa_ctx_free(a);
    fixture_close(&f);
}

/* A snapshot's size is set by the window: the same after 100 tokens as after 100 000. */
static void test_snapshot_size_is_window(void **state)
{
    fixture f;
    swa_ctx *c;
    swa_error err;
    int32_t *text = (int32_t *)malloc(sizeof(int32_t) * LONG_RUN);
    size_t after_100, after_long;
    (void)state;
    fixture_open(&f, 16, 32, 20);
    tu_random_tokens(text, LONG_RUN, V, 9);
    c = make_ctx(&f, 1, 0, 64, 0);
    assert_int_equal(swa_ctx_eval(c, text, 100, NULL, &err), SWA_OK);
    after_100 = swa_state_size(c, 0);
    assert_int_equal(swa_ctx_eval(c, text + 100, LONG_RUN - 100, NULL, &err), SWA_OK);
    after_long = swa_state_size(c, 0);
    assert_int_equal(after_100, after_long);
    /* header, then per layer its W slots of keys and values: (16 + 32) * 2 rows of 2 * 8 floats */
    assert_true(after_long > (16 + 32) * 2 * 16 * sizeof(float));
    assert_true(after_long < (16 + 32) * 2 * 16 * sizeof(float) + 256);
    swa_ctx_free(c);
    free(text);
    fixture_close(&f);
}

static int calls_left;
static int abort_after(void *data)
{
    (void)data;
    return calls_left-- <= 0;
}

/* An abort between layers or before the output layer: the aborted chunk leaves no trace,
   earlier chunks stay. */
static void test_abort(void **state)
{
    fixture f;
    swa_ctx *c;
    swa_error err;
    int32_t text[40];
    const float *logits;
    (void)state;
    fixture_open(&f, 5, 0, 21);
    tu_random_tokens(text, 40, V, 44);
    c = make_ctx(&f, 1, 0, 8, 1);
    assert_int_equal(swa_ctx_eval(c, text, 10, NULL, &err), SWA_OK);
    calls_left = 1;   /* the first layer runs, the second is stopped */
    swa_ctx_set_abort(c, abort_after, NULL);
    assert_int_equal(swa_ctx_eval(c, text + 10, 5, &logits, &err), SWA_ERR_ABORTED);
    assert_null(logits);
    assert_int_equal(swa_ctx_pos(c), 10);
    calls_left = 2;       /* both layers run, the output layer is stopped: still no trace */
    assert_int_equal(swa_ctx_eval(c, text + 10, 5, &logits, &err), SWA_ERR_ABORTED);
    assert_non_null(strstr(err.msg, "before the output"));
    assert_int_equal(swa_ctx_pos(c), 10);
    calls_left = 2 + 1;   /* chunks of 8: the first (two layers, the output) is through, the second stops */
    assert_int_equal(swa_ctx_eval(c, text + 10, 20, NULL, &err), SWA_ERR_ABORTED);
    assert_string_equal(swa_status_str(err.code), "SWA_ERR_ABORTED");
    assert_int_equal(swa_ctx_pos(c), 18);
    swa_ctx_set_abort(c, NULL, NULL);
    eval_check(&f, c, text, 18, 30);
    swa_ctx_free(c);
    fixture_close(&f);
}

/* Thread counts changed on a live context give the same logits. */
static void test_set_threads(void **state)
{
    fixture f;
    swa_ctx *c;
    swa_error err;
    int32_t text[30];
    int i, counts[5] = {2, 1, 3, 0, 2};
    (void)state;
    fixture_open(&f, 5, 0, 22);
    tu_random_tokens(text, 30, V, 45);
    c = make_ctx(&f, 1, 0, 8, 1);
    for (i = 0; i < 5; i++) {
        assert_int_equal(swa_ctx_set_threads(c, counts[i], &err), SWA_OK);
        assert_true(swa_ctx_config_get(c).n_threads >= 1);
        eval_check(&f, c, text, 6 * i, 6 * i + 6);   /* n 6, at 6 * i + 5 */
    }
    assert_int_equal(swa_ctx_set_threads(c, -1, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_ctx_set_threads(c, 257, &err), SWA_ERR_INVALID_ARG);
    swa_ctx_free(c);
    fixture_close(&f);
}

/* An embedding, times the output matrix, gives the logits: the last token's for SWA_POOL_LAST,
   their mean over the tokens for SWA_POOL_MEAN (the output is linear). */
static void test_embeddings(void **state)
{
    fixture f;
    swa_ctx *c;
    swa_error err;
    int32_t text[12], talk[9];
    float e[32], again[32], norm_e[32], via[V];
    double ref[12 * V], talk_ref[9 * V], mean[V], len = 0;
    int i, j, d = 32;
    (void)state;
    fixture_open(&f, 5, 0, 23);
    tu_random_tokens(text, 12, V, 46);
    tu_random_tokens(talk, 9, V, 47);
    tu_reference(&f.tm, text, 12, f.windows, ref);
    tu_reference(&f.tm, talk, 9, f.windows, talk_ref);
    c = make_ctx(&f, 2, 0, 5, 1);
    assert_int_equal(swa_ctx_eval(c, talk, 8, NULL, &err), SWA_OK);   /* a conversation on sequence 0 */
    assert_int_equal(swa_ctx_embed(c, 1, text, 12, SWA_POOL_LAST, 0, e, &err), SWA_OK);
    assert_int_equal(swa_seq_pos(c, 1), 12);
    for (i = 0; i < V; i++)
        for (via[i] = 0, j = 0; j < d; j++) via[i] += f.tm.output[i * d + j] * e[j];
    assert_true(tu_rel_error(via, ref + 11 * V, V) < TOL);
    /* the same text again gives the same vector, whatever the sequence held */
    assert_int_equal(swa_ctx_embed(c, 1, text, 12, SWA_POOL_LAST, 0, again, &err), SWA_OK);
    assert_memory_equal(again, e, sizeof e);
    /* the conversation did not notice */
    assert_int_equal(swa_seq_pos(c, 0), 8);
    eval_check(&f, c, talk, 8, 9);
    assert_int_equal(swa_ctx_embed(c, 1, text, 12, SWA_POOL_MEAN, 0, e, &err), SWA_OK);
    for (i = 0; i < V; i++) {
        for (mean[i] = 0, j = 0; j < 12; j++) mean[i] += ref[j * V + i] / 12;
        for (via[i] = 0, j = 0; j < d; j++) via[i] += f.tm.output[i * d + j] * e[j];
    }
    assert_true(tu_rel_error(via, mean, V) < 1e-4);
    assert_int_equal(swa_ctx_embed(c, 0, text, 12, SWA_POOL_MEAN, 1, norm_e, &err), SWA_OK);
    for (j = 0; j < d; j++) len += (double)e[j] * e[j];
    for (j = 0; j < d; j++) assert_float_equal(norm_e[j], e[j] / sqrt(len), 1e-5);
    /* refusals leave the sequence as it was */
    assert_int_equal(swa_ctx_embed(c, 0, text, 12, 7, 0, e, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_ctx_embed(c, 0, text, 12, SWA_POOL_LAST, 0, NULL, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_ctx_embed(c, 2, text, 12, SWA_POOL_LAST, 0, e, &err), SWA_ERR_INVALID_ARG);
    text[3] = V;   /* out of the vocabulary */
    assert_int_equal(swa_ctx_embed(c, 0, text, 12, SWA_POOL_LAST, 0, e, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_seq_pos(c, 0), 12);
    (void)talk_ref;
    swa_ctx_free(c);
    fixture_close(&f);
}

/* Memory: each sequence has its own rings; n_rewind adds slots to windowed layers only. */
static void test_memory_per_sequence(void **state)
{
    fixture f;
    swa_ctx *c;
    size_t one, three, rewind;
    size_t row = 2 * 8 * sizeof(float);   /* n_kv_head * head_dim floats */
    (void)state;
    fixture_open(&f, 6, 0, 24);
    c = make_ctx(&f, 1, 0, 8, 1);
    one = swa_ctx_cache_bytes(c);
    assert_int_equal(one, 2 * (6 + 512) * row);
    swa_ctx_free(c);
    c = make_ctx(&f, 3, 0, 8, 1);
    three = swa_ctx_cache_bytes(c);
    assert_int_equal(three, 3 * one);
    swa_ctx_free(c);
    c = make_ctx(&f, 1, 4, 8, 1);
    rewind = swa_ctx_cache_bytes(c);
    assert_int_equal(rewind, 2 * (6 + 4 + 512) * row);
    swa_ctx_free(c);
    fixture_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_of_sequences),
        cmocka_unit_test(test_batch_logits_and_errors),
        cmocka_unit_test(test_batch_context_full),
        cmocka_unit_test(test_fork),
        cmocka_unit_test(test_rewind),
        cmocka_unit_test(test_snapshot_round_trip),
        cmocka_unit_test(test_snapshot_refusals),
        cmocka_unit_test(test_snapshot_damage_changes_nothing),
        cmocka_unit_test(test_snapshot_size_is_window),
        cmocka_unit_test(test_abort),
        cmocka_unit_test(test_set_threads),
        cmocka_unit_test(test_embeddings),
        cmocka_unit_test(test_memory_per_sequence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
