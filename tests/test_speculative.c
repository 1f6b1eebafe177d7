#define _POSIX_C_SOURCE 200809L   /* mkstemp, popen */
/* Speculative decoding: drafts verified in one call, what is not accepted rewound within the
   rings' slack. At temperature 0 the tokens must be those of plain generation (and, on the
   shipped model, PyTorch's greedy continuation of its reference file, with prompt lookup and
   with the shipped draft model) for any draft source, thread count, chunk size, window,
   penalty and architecture (windowed, full attention, experts: models written by
   swa-mkmodel); drafts that are all right and all wrong; rewinds at the ring's limit and a
   draft one token too long; prompt lookup on histories made by hand; the sampler's
   distribution against one computed here; and above temperature 0 the rejection rule's output
   distribution against the target's by a chi-square test over many draws. */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/programs.h"
#include "tests/testutil.h"

#define MODELS "examples/models/"
#define STORIES MODELS "swa-stories.gguf"
#define REF MODELS "swa-stories.ref.json"
#define DRAFT MODELS "swa-stories-draft.gguf"
#define DRAFT_REF MODELS "swa-stories-draft.ref.json"
#define MAX_GEN 512

/* ---- plain and speculative generation ---- */

enum { DRAFT_LOOKUP, DRAFT_MODEL, DRAFT_RIGHT, DRAFT_WRONG };

typedef struct run {
    const swa_model *model;
    swa_ctx_config cfg;           /* n_rewind is set from k for the speculative run */
    swa_sampler_config sc;
    const int32_t *prompt;
    int n_prompt, n_gen;
    int mode, k;                  /* draft source and longest draft */
    const swa_model *draft;       /* DRAFT_MODEL */
    const int32_t *ref;           /* DRAFT_RIGHT, DRAFT_WRONG: the plain run's tokens */
    const swa_grammar *grammar;   /* NULL: none; else the sampler's, which sees the output only */
    float p_min;                  /* DRAFT_MODEL: swa_drafter_set_p_min */
    long drafted, accepted;       /* out */
} run;

/* "Once upon a time" in the stories model's vocabulary, BOS first. */
static const int32_t story_prompt[] = {1, 481, 544, 260, 374};

/* A run on model from n_prompt tokens of prompt, n_gen generated, drafts from mode of at most k
   tokens, with the context's and the sampler's defaults at temperature 0: the caller sets what
   else differs. */
static run run_of(const swa_model *model, const int32_t *prompt, int n_prompt, int n_gen, int mode, int k)
{
    run r;
    memset(&r, 0, sizeof r);
    r.model = model;
    r.cfg = swa_ctx_config_default(model);
    r.sc = swa_sampler_config_default();
    r.sc.temperature = 0;
    r.prompt = prompt;
    r.n_prompt = n_prompt;
    r.n_gen = n_gen;
    r.mode = mode;
    r.k = k;
    return r;
}

static swa_sampler *make_sampler(const run *r)
{
    swa_sampler *s = NULL;
    swa_error err;
    int i;
    if (swa_sampler_create(&r->sc, swa_model_hparams(r->model)->n_vocab, &s, &err) != SWA_OK) fail_msg("%s", err.msg);
    if (r->grammar) {
        const swa_vocab *v;
        if (swa_model_vocab(r->model, &v, &err) != SWA_OK || swa_sampler_set_grammar(s, r->grammar, v, &err) != SWA_OK)
            fail_msg("%s", err.msg);
        return s;
    }
    for (i = 0; i < r->n_prompt; i++) swa_sampler_accept(s, r->prompt[i]);   /* as swa-generate does */
    return s;
}

static swa_ctx *make_ctx(const run *r, int n_rewind, const float **logits)
{
    swa_ctx_config cfg = r->cfg;
    swa_ctx *c = NULL;
    swa_error err;
    cfg.n_rewind = n_rewind;
    if (swa_ctx_create(r->model, &cfg, &c, &err) != SWA_OK) fail_msg("%s", err.msg);
    if (swa_ctx_eval(c, r->prompt, (size_t)r->n_prompt, logits, &err) != SWA_OK) fail_msg("%s", err.msg);
    return c;
}

/* Token by token: sample, evaluate. */
static void plain(const run *r, int32_t *out)
{
    const float *logits;
    swa_ctx *c = make_ctx(r, 0, &logits);
    swa_sampler *s = make_sampler(r);
    swa_error err;
    int i;
    for (i = 0; i < r->n_gen; i++) {
        out[i] = swa_sampler_sample(s, logits);
        if (i + 1 < r->n_gen && swa_ctx_eval(c, &out[i], 1, &logits, &err) != SWA_OK) fail_msg("%s", err.msg);
    }
    swa_sampler_free(s);
    swa_ctx_free(c);
}

/* The draft for position `done` of the output (out[done - 1] is `last`): k tokens at most. */
static void draft_for(run *r, swa_drafter *dr, const int32_t *hist, size_t n_hist, int done, int k, int32_t *buf,
                      swa_draft *d)
{
    swa_error err;
    int i;
    memset(d, 0, sizeof *d);
    d->token = buf;
    if (r->mode == DRAFT_LOOKUP) {
        if (swa_spec_lookup(hist, n_hist, 1, 3, buf, k, &d->n, &err) != SWA_OK) fail_msg("%s", err.msg);
    } else if (r->mode == DRAFT_MODEL) {
        if (swa_drafter_draft(dr, hist, n_hist, k, d, &err) != SWA_OK) fail_msg("%s", err.msg);
    } else {
        int32_t n_vocab = swa_model_hparams(r->model)->n_vocab;
        for (i = 0; i < k; i++) buf[i] = r->mode == DRAFT_RIGHT ? r->ref[done + i] : (r->ref[done + i] + 1) % n_vocab;
        d->n = k;
    }
}

/* Verified drafts of up to r->k tokens, on a context whose rings keep exactly k - 1 more slots,
   so that a draft refused whole is rewound at the ring's limit. */
static void speculative(run *r, int32_t *out)
{
    const float *logits;
    swa_ctx *c = make_ctx(r, r->k - 1, &logits);
    swa_sampler *s = make_sampler(r);
    swa_spec *sp = NULL;
    swa_drafter *dr = NULL;
    swa_error err;
    int32_t *hist = (int32_t *)malloc(sizeof(int32_t) * (size_t)(r->n_prompt + r->n_gen + r->k + 1));
    int32_t buf[64], got[65], n_got;
    size_t n_hist = (size_t)r->n_prompt;
    int done = 0, i;
    if (swa_spec_create(swa_model_hparams(r->model)->n_vocab, r->k, &sp, &err) != SWA_OK) fail_msg("%s", err.msg);
    if (r->mode == DRAFT_MODEL && (swa_drafter_create(r->draft, r->model, &r->cfg, NULL, r->k, &dr, &err) != SWA_OK ||
                                   swa_drafter_set_p_min(dr, r->p_min, &err) != SWA_OK))
        fail_msg("%s", err.msg);
    memcpy(hist, r->prompt, sizeof(int32_t) * (size_t)r->n_prompt);
    hist[n_hist++] = out[done++] = swa_sampler_sample(s, logits);
    r->drafted = r->accepted = 0;
    while (done < r->n_gen) {
        int k = r->n_gen - done - 1 < r->k ? r->n_gen - done - 1 : r->k;
        swa_draft d;
        draft_for(r, dr, hist, n_hist, done, k, buf, &d);
        if (swa_spec_verify(sp, c, 0, s, out[done - 1], &d, got, &n_got, &err) != SWA_OK) fail_msg("%s", err.msg);
        assert_true(n_got >= 1 && n_got <= d.n + 1);
        assert_int_equal(swa_seq_pos(c, 0), r->n_prompt + done + n_got - 1);
        r->drafted += d.n;
        r->accepted += n_got - 1;
        for (i = 0; i < n_got; i++) hist[n_hist++] = out[done++] = got[i];
    }
    free(hist);
    swa_drafter_free(dr);
    swa_spec_free(sp);
    swa_sampler_free(s);
    swa_ctx_free(c);
}

static void assert_same_tokens(const int32_t *want, const int32_t *got, int n, const char *what)
{
    int i;
    for (i = 0; i < n; i++)
        if (want[i] != got[i]) fail_msg("%s: token %d is %d, plain generation has %d", what, i, got[i], want[i]);
}

/* Plain against speculative, for one run description; returns the acceptance. */
static double check_run(run *r, const char *what)
{
    int32_t want[MAX_GEN], got[MAX_GEN];
    assert_true(r->n_gen <= MAX_GEN);
    plain(r, want);
    r->ref = want;
    speculative(r, got);
    assert_same_tokens(want, got, r->n_gen, what);
    return r->drafted ? (double)r->accepted / (double)r->drafted : 0.0;
}

/* ---- the shipped model ---- */

static swa_model *stories;

static int load_stories(void **state)
{
    swa_error err;
    (void)state;
    if (swa_model_load(STORIES, &stories, &err) != SWA_OK) fail_msg("%s", err.msg);
    return 0;
}

static int free_stories(void **state)
{
    (void)state;
    swa_model_free(stories);
    return 0;
}

/* The ints of "key": [...] in the reference file (which we wrote: flat enough for strstr). */
static int json_ints(const char *json, const char *key, int32_t *out, int cap)
{
    char pattern[64];
    const char *p;
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    p = strstr(json, pattern);
    assert_non_null(p);
    p = strchr(p, '[');
    assert_non_null(p);
    return tu_int_list(p, out, cap);
}

/* Prompt lookup at temperature 0 gives PyTorch's greedy continuation (320 tokens, five windows
   long), with 1 and 2 threads and prompt chunks of 1, 3 and 64. */
static void test_stories_matches_pytorch(void **state)
{
    static int32_t prompt[64], want[MAX_GEN], got[MAX_GEN];
    static const int threads[] = {1, 2, 2}, batches[] = {1, 3, 64}, ks[] = {4, 8, 2};
    char *ref = tu_read_text(REF, NULL);
    int n_prompt, n_want, t;
    (void)state;
    assert_non_null(ref);
    n_prompt = json_ints(ref, "prompt_ids", prompt, 64);
    n_want = json_ints(ref, "generated_ids", want, MAX_GEN);
    for (t = 0; t < 3; t++) {
        run r = run_of(stories, prompt, n_prompt, n_want, DRAFT_LOOKUP, ks[t]);
        r.cfg.kv_type = SWA_KV_F32;   /* as the reference computes */
        r.cfg.n_threads = threads[t];
        r.cfg.n_batch = batches[t];
        speculative(&r, got);
        assert_same_tokens(want, got, n_want, "lookup against PyTorch");
        fprintf(stderr, "test_speculative: stories, lookup k %d: %ld drafted, %ld accepted\n", r.k, r.drafted, r.accepted);
        assert_true(r.accepted > 0);
    }
    free(ref);
}

/* The floats of "key": [...] in the reference file. */
static int json_floats(const char *json, const char *key, double *out, int cap)
{
    char pattern[64], *end;
    const char *p;
    int n = 0;
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    p = strstr(json, pattern);
    assert_non_null(p);
    p = strchr(p, '[');
    assert_non_null(p);
    for (p++; n < cap; p = end + (*end == ',')) {
        double x = strtod(p, &end);
        if (end == p) break;
        out[n++] = x;
    }
    return n;
}

/* The shipped draft model alone gives PyTorch's greedy continuation of its reference file until
   it parts at a near-tie (a top-2 gap under 0.05, which the Q8_0 rounding of this narrow
   model's activations can flip); as the draft of the shipped model, with drafts of 4 and 8,
   the model's own reference continuation, every token. */
static void test_stories_draft_model(void **state)
{
    static int32_t prompt[64], want[MAX_GEN], got[MAX_GEN];
    static double gap[MAX_GEN];
    static const int ks[] = {4, 8};
    char *ref = tu_read_text(DRAFT_REF, NULL);
    swa_model *draft = NULL;
    swa_error err;
    int n_prompt, n_want, t, i;
    run r;
    (void)state;
    assert_non_null(ref);
    if (swa_model_load(DRAFT, &draft, &err) != SWA_OK) fail_msg("%s", err.msg);
    n_prompt = json_ints(ref, "prompt_ids", prompt, 64);
    n_want = json_ints(ref, "generated_ids", want, MAX_GEN);
    assert_int_equal(json_floats(ref, "top2_logit_gaps", gap, MAX_GEN), n_want);
    free(ref);
    r = run_of(draft, prompt, n_prompt, n_want, DRAFT_LOOKUP, 1);
    r.cfg.kv_type = SWA_KV_F32;
    plain(&r, got);
    for (i = 0; i < n_want && got[i] == want[i]; i++) {}
    fprintf(stderr, "test_speculative: the draft model alone: %d of %d tokens as PyTorch's\n", i, n_want);
    if (i < n_want && gap[i] >= 0.05)
        fail_msg("the draft model: token %d is %d, PyTorch's %d by a gap of %.4f", i, got[i], want[i], gap[i]);
    ref = tu_read_text(REF, NULL);
    assert_non_null(ref);
    n_prompt = json_ints(ref, "prompt_ids", prompt, 64);
    n_want = json_ints(ref, "generated_ids", want, MAX_GEN);
    for (t = 0; t < 2; t++) {
        r = run_of(stories, prompt, n_prompt, n_want, DRAFT_MODEL, ks[t]);
        r.cfg.kv_type = SWA_KV_F32;
        r.draft = draft;
        speculative(&r, got);
        assert_same_tokens(want, got, n_want, "drafts of the draft model against PyTorch");
        fprintf(stderr, "test_speculative: stories, draft model k %d: %ld drafted, %ld accepted\n", r.k, r.drafted, r.accepted);
        assert_true(r.accepted > 0);
    }
    free(ref);
    swa_model_free(draft);
}

/* Drafts all right (every one accepted, k + 1 tokens a call) and all wrong (one token a call,
   each draft rewound whole at the ring's limit), a window of 8 over 96 tokens, a repetition
   penalty whose history must see the emitted tokens only. */
static void test_stories_right_and_wrong(void **state)
{
    int mode, t;
    (void)state;
    for (t = 0; t < 2; t++)
        for (mode = DRAFT_RIGHT; mode <= DRAFT_WRONG; mode++) {
            run r = run_of(stories, story_prompt, 5, 96, mode, 5);
            double rate;
            r.cfg.window = 8;
            r.cfg.n_threads = t + 1;
            r.cfg.n_batch = t ? 5 : 2;
            r.sc.repeat_penalty = 1.3f;
            r.sc.repeat_last_n = 16;
            rate = check_run(&r, mode == DRAFT_RIGHT ? "right drafts" : "wrong drafts");
            assert_true(mode == DRAFT_RIGHT ? rate == 1.0 : rate == 0.0);
        }
}

/* Above temperature 0 with top-k 1 the choice is certain again: the rule's path (the
   distribution of each row) gives plain generation's tokens; with presence and frequency
   penalties. */
static void test_stories_top_k_one(void **state)
{
    run r = run_of(stories, story_prompt, 5, 120, DRAFT_LOOKUP, 6);
    (void)state;
    r.sc.temperature = 0.9f;
    r.sc.top_k = 1;
    r.sc.presence_penalty = 0.5f;
    r.sc.frequency_penalty = 0.3f;
    check_run(&r, "top-k 1");
}

/* With a grammar, drafts it refuses have probability 0 and are replaced: still the tokens of
   plain generation, whose grammar state advanced by the emitted tokens only. */
static void test_stories_grammar(void **state)
{
    static const char gbnf[] = "root ::= (word \" \")+ \".\"\nword ::= [a-zA-Z]+\n";
    swa_grammar *g = NULL;
    swa_error err;
    run r = run_of(stories, story_prompt, 5, 80, DRAFT_LOOKUP, 4);
    (void)state;
    if (swa_grammar_parse(gbnf, sizeof gbnf - 1, NULL, &g, &err) != SWA_OK) fail_msg("%s", err.msg);
    r.cfg.window = 12;
    r.sc.repeat_penalty = 1.2f;
    r.grammar = g;
    check_run(&r, "grammar");
    swa_grammar_free(g);
}

/* The verifier refuses what it cannot rewind, before anything changes: a draft one token past
   n_rewind + 1, a context with attention sinks, a verifier for another vocabulary. */
static void test_ring_limit(void **state)
{
    const int32_t *prompt = story_prompt;
    int32_t draft[8] = {300, 301, 302, 303, 304, 305, 306, 307}, out[9], n_out = -1;
    swa_ctx_config cfg = swa_ctx_config_default(stories);
    swa_sampler_config sc = swa_sampler_config_default();
    swa_ctx *c = NULL, *sinks = NULL;
    swa_sampler *s = NULL;
    swa_spec *sp = NULL, *other = NULL;
    swa_draft d;
    swa_error err;
    (void)state;
    cfg.window = 4;
    cfg.n_rewind = 3;
    sc.temperature = 0;
    assert_int_equal(swa_ctx_create(stories, &cfg, &c, &err), SWA_OK);
    assert_int_equal(swa_sampler_create(&sc, 1536, &s, &err), SWA_OK);
    assert_int_equal(swa_spec_create(1536, 8, &sp, &err), SWA_OK);
    assert_int_equal(swa_ctx_eval(c, prompt, 5, NULL, &err), SWA_OK);
    memset(&d, 0, sizeof d);
    d.token = draft;
    d.n = 5;   /* n_rewind + 2 */
    assert_int_equal(swa_spec_verify(sp, c, 0, s, 260, &d, out, &n_out, &err), SWA_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "n_rewind"));
    assert_int_equal(swa_seq_pos(c, 0), 5);
    assert_int_equal(n_out, -1);
    d.n = 4;   /* n_rewind + 1: evaluated, then rewound whole at the limit when all wrong */
    assert_int_equal(swa_spec_verify(sp, c, 0, s, 260, &d, out, &n_out, &err), SWA_OK);
    assert_true(n_out >= 1 && n_out <= 5);
    assert_int_equal(swa_seq_pos(c, 0), 5 + n_out);
    d.n = 9;
    assert_int_equal(swa_spec_verify(sp, c, 0, s, 260, &d, out, &n_out, &err), SWA_ERR_INVALID_ARG);   /* > n_draft_max */
    d.n = 2;
    assert_int_equal(swa_spec_verify(sp, c, 1, s, 260, &d, out, &n_out, &err), SWA_ERR_INVALID_ARG);    /* no sequence 1 */
    assert_int_equal(swa_spec_create(1000, 8, &other, &err), SWA_OK);
    assert_int_equal(swa_spec_verify(other, c, 0, s, 260, &d, out, &n_out, &err), SWA_ERR_INVALID_ARG);
    cfg.window = 0;
    cfg.n_ctx = 64;
    cfg.n_sink = 4;
    assert_int_equal(swa_ctx_create(stories, &cfg, &sinks, &err), SWA_OK);
    assert_int_equal(swa_ctx_eval(sinks, prompt, 5, NULL, &err), SWA_OK);
    assert_int_equal(swa_spec_verify(sp, sinks, 0, s, 260, &d, out, &n_out, &err), SWA_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "sinks"));
    assert_int_equal(swa_seq_pos(sinks, 0), 5);
    swa_spec_free(other);
    swa_ctx_free(sinks);
    swa_spec_free(sp);
    swa_sampler_free(s);
    swa_ctx_free(c);
}

/* An abort in the middle of a verification (after its first chunk of n_batch) leaves the
   sequence and the sampler as they were: the generation then goes on as plain generation. */
static int abort_countdown;
static int abort_after(void *data)
{
    (void)data;
    return --abort_countdown == 0;
}

static void test_abort_leaves_no_trace(void **state)
{
    const int32_t *prompt = story_prompt;
    int32_t want[40], draft[6], out[7], n_out, last, got[40];
    int n = 0, i, aborted = 0;
    swa_ctx_config cfg = swa_ctx_config_default(stories);
    swa_sampler_config sc = swa_sampler_config_default();
    swa_ctx *c = NULL;
    swa_sampler *s = NULL;
    swa_spec *sp = NULL;
    const float *logits;
    swa_draft d;
    swa_error err;
    swa_status st;
    int64_t pos;
    run r = run_of(stories, prompt, 5, 40, DRAFT_LOOKUP, 0);
    (void)state;
    sc.temperature = 0;
    sc.repeat_penalty = 1.2f;
    cfg.window = 6;
    r.cfg = cfg;
    r.sc = sc;
    plain(&r, want);
    cfg.n_rewind = 5;
    cfg.n_batch = 3;   /* a draft of 6 goes in 3 chunks */
    assert_int_equal(swa_ctx_create(stories, &cfg, &c, &err), SWA_OK);
    assert_int_equal(swa_sampler_create(&sc, 1536, &s, &err), SWA_OK);
    for (i = 0; i < 5; i++) swa_sampler_accept(s, prompt[i]);
    assert_int_equal(swa_spec_create(1536, 6, &sp, &err), SWA_OK);
    assert_int_equal(swa_ctx_eval(c, prompt, 5, &logits, &err), SWA_OK);
    got[n++] = last = swa_sampler_sample(s, logits);
    memset(&d, 0, sizeof d);
    d.token = draft;
    while (n < 40) {
        d.n = 40 - n - 1 < 6 ? 40 - n - 1 : 6;
        for (i = 0; i < d.n; i++) draft[i] = want[n + i];
        if (n > 10 && n < 30) draft[d.n / 2] = (draft[d.n / 2] + 7) % 1536;   /* half right */
        abort_countdown = n % 3 == 0 ? 10 : 0;   /* 7 calls a chunk: in the second one */
        swa_ctx_set_abort(c, abort_countdown ? abort_after : NULL, NULL);
        pos = swa_seq_pos(c, 0);
        st = swa_spec_verify(sp, c, 0, s, last, &d, out, &n_out, &err);
        swa_ctx_set_abort(c, NULL, NULL);
        if (st == SWA_ERR_ABORTED) {
            assert_int_equal(swa_seq_pos(c, 0), pos);
            aborted++;
            st = swa_spec_verify(sp, c, 0, s, last, &d, out, &n_out, &err);
        }
        assert_int_equal(st, SWA_OK);
        for (i = 0; i < n_out; i++) got[n++] = out[i];
        last = out[n_out - 1];
    }
    assert_same_tokens(want, got, 40, "after aborts");
    assert_true(aborted > 0);
    swa_spec_free(sp);
    swa_sampler_free(s);
    swa_ctx_free(c);
}

/* swa-generate --lookup, and -md with the model as its own draft model, print PyTorch's greedy
   continuation and the acceptance line. */
static void test_cli(void **state)
{
    static const char *const how[] = {"--lookup --draft-max 6", "-md " STORIES " --draft-max 4",
                                      "-md " STORIES " --draft-max 4 --draft-p-min 1"};
    static int32_t prompt[64], want[MAX_GEN];
    char *ref = tu_read_text(REF, NULL), *out, *log, cmd[1024], errors[64], *p;
    int n_prompt, n_want, i, h, rc;
    size_t len;
    (void)state;
    assert_non_null(ref);
    n_prompt = json_ints(ref, "prompt_ids", prompt, 64);
    n_want = json_ints(ref, "generated_ids", want, MAX_GEN);
    for (h = 0; h < 3; h++) {
        len = (size_t)snprintf(cmd, sizeof cmd, PROGRAM("swa-generate") " -m " STORIES " --kv-f32 --temp 0 -t 2 %s -n %d "
                               "--ids ", how[h], n_want);
        for (i = 0; i < n_prompt; i++) len += (size_t)snprintf(cmd + len, sizeof cmd - len, i ? ",%d" : "%d", prompt[i]);
        tu_tmp_path(errors, sizeof errors, "spec_cli");
        snprintf(cmd + len, sizeof cmd - len, " 2>%s", errors);
        out = tu_capture(cmd, &rc);
        log = tu_read_text(errors, NULL);
        remove(errors);
        assert_int_equal(rc, 0);
        assert_non_null(log);
        assert_non_null(strstr(log, "speculative: "));
        if (h > 0) assert_non_null(strstr(log, "accepted (100.0%)"));
        if (h == 2) {   /* p_min 1: each draft ends after its first token, so a verification emits two */
            long d = strtol(strstr(log, "verifications, ") + strlen("verifications, "), NULL, 10);
            assert_true(d > 0 && 2 * d <= n_want);
        }
        for (p = out, i = 0; i < n_want; i++) {
            char *end;
            long v = strtol(p, &end, 10);
            assert_true(end != p);
            if (v != want[i]) fail_msg("swa-generate %s: token %d is %ld, PyTorch's %d", how[h], i, v, want[i]);
            p = end;
        }
        free(log);
        free(out);
    }
    free(ref);
    {   /* flags that would be ignored, and what cannot be rewound, are refused (exit 2) */
        static const char *const bad[] = {"--draft-max 4", "--lookup --model-draft " STORIES, "--lookup --sinks 4",
                                          "--lookup -i", "--model-draft " STORIES " --lookup-ngram-max 3",
                                          "--lookup --draft-p-min 0.5", "--model-draft " STORIES " --draft-p-min 1.5"};
        for (i = 0; i < 7; i++) {
            snprintf(cmd, sizeof cmd, PROGRAM("swa-generate") " -m " STORIES " -p x %s 2>/dev/null </dev/null", bad[i]);
            free(tu_capture(cmd, &rc));
            if (rc != 2) fail_msg("swa-generate %s: exit %d, not 2", bad[i], rc);
        }
    }
}

/* ---- models written by swa-mkmodel: windowed, full attention, experts ---- */

static swa_model *mkmodel(const char *args)
{
    char path[64], cmd[1024];
    swa_model *m = NULL;
    swa_error err;
    tu_tmp_path(path, sizeof path, "spec");
    snprintf(cmd, sizeof cmd, "%s --shape custom --type f32 --vocab 272 --ctx 256 %s %s 2>/dev/null",
             PROGRAM("swa-mkmodel"), args, path);
    if (system(cmd) != 0) fail_msg("failed: %s", cmd);
    if (swa_model_load(path, &m, &err) != SWA_OK) fail_msg("%s: %s", args, err.msg);
    remove(path);   /* the mapping stays valid */
    return m;
}

/* Every architecture shape, each with prompt lookup and with a random draft model of the same
   vocabulary (an adversary: few of its drafts are right), and with itself as the draft model
   (every draft right). The prompt repeats itself, so that lookup finds something. */
static void test_architectures(void **state)
{
    static const char *const shapes[] = {
        "--arch llama --layers 3 --dim 64 --heads 4 --kv-heads 2 --ff 96 --window 5",                     /* windowed */
        "--arch qwen2 --layers 2 --dim 64 --heads 4 --kv-heads 2 --ff 96",                                /* global */
        "--arch llama --layers 3 --dim 64 --heads 4 --kv-heads 2 --ff 48 --experts 4 --experts-used 2 --window 7",
        ("--arch qwen3moe --layers 2 --dim 48 --heads 2 --kv-heads 1 --head-dim 32 --ff 64 --experts 6 --experts-used 2 "
         "--expert-ff 32"),
        "--arch gemma2 --layers 4 --dim 64 --heads 4 --kv-heads 2 --head-dim 32 --ff 96 --window 5",     /* mixed */
    };
    static const int32_t prompt[] = {1, 40, 41, 42, 43, 44, 45, 40, 41, 42, 43, 44, 45, 40, 41};
    swa_model *draft = mkmodel("--arch llama --layers 1 --dim 32 --heads 2 --kv-heads 1 --ff 32 --seed 9");
    size_t i;
    int mode;
    (void)state;
    for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        swa_model *m = mkmodel(shapes[i]);
        for (mode = 0; mode < 3; mode++) {
            run r = run_of(m, prompt, 15, 60, mode == 0 ? DRAFT_LOOKUP : DRAFT_MODEL, mode == 0 ? 4 : 3);
            double rate;
            r.cfg.n_threads = (int32_t)(i % 2) + 1;
            r.cfg.n_batch = mode == 1 ? 3 : 64;
            r.sc.repeat_penalty = mode == 2 ? 1.0f : 1.1f;   /* a draft model sees no penalty */
            r.draft = mode == 2 ? m : draft;
            r.p_min = mode == 1 ? 0.5f : 0.0f;   /* the random draft model's drafts cut short: the same text */
            rate = check_run(&r, shapes[i]);
            if (mode == 2) assert_true(rate == 1.0);
        }
        swa_model_free(m);
    }
    swa_model_free(draft);
}

/* A draft model must speak the target's vocabulary. */
static void test_drafter_vocabulary(void **state)
{
    swa_model *small = mkmodel("--arch llama --layers 1 --dim 32 --heads 2 --kv-heads 1 --ff 32");
    swa_drafter *dr = NULL;
    swa_sampler_config sc = swa_sampler_config_default();
    swa_error err;
    (void)state;
    assert_int_equal(swa_drafter_create(small, stories, NULL, NULL, 4, &dr, &err), SWA_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "vocabulary"));
    assert_null(dr);
    sc.repeat_penalty = 1.2f;
    assert_int_equal(swa_drafter_create(small, small, NULL, &sc, 4, &dr, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_drafter_create(small, small, NULL, NULL, 0, &dr, &err), SWA_ERR_INVALID_ARG);
    swa_model_free(small);
}

/* The greedy continuation of story_prompt on the stories model, k tokens, and the probability
   of each under the softmax of the logits it was chosen from, from a context of its own. */
static void greedy_probs(int k, int32_t *tok, double *p)
{
    int32_t n_vocab = swa_model_hparams(stories)->n_vocab, i, j;
    const float *logits;
    swa_ctx *c = NULL;
    swa_error err;
    if (swa_ctx_create(stories, NULL, &c, &err) != SWA_OK ||
        swa_ctx_eval(c, story_prompt, sizeof story_prompt / sizeof *story_prompt, &logits, &err) != SWA_OK)
        fail_msg("%s", err.msg);
    for (i = 0; i < k; i++) {
        double sum = 0;
        tok[i] = 0;
        for (j = 1; j < n_vocab; j++)
            if (logits[j] > logits[tok[i]]) tok[i] = j;
        for (j = 0; j < n_vocab; j++) sum += exp((double)logits[j] - (double)logits[tok[i]]);
        p[i] = 1.0 / sum;
        if (swa_ctx_eval(c, &tok[i], 1, &logits, &err) != SWA_OK) fail_msg("%s", err.msg);
    }
    swa_ctx_free(c);
}

/* p_min ends a greedy draft after its first token less likely than p_min under the draft
   model's softmax (the probabilities computed here): at 0 a draft is as long as asked, at 1 one
   token (none here is certain), between them as the probabilities say. Out of 0..1 is refused. */
static void test_drafter_p_min(void **state)
{
    enum { K = 8 };
    int32_t tok[K];
    double p[K];
    float p_min[4] = {0.0f, 1.0f, 0.5f, 0.0f};
    swa_drafter *dr = NULL;
    swa_draft d;
    swa_error err;
    int t, i, want;
    (void)state;
    greedy_probs(K, tok, p);
    for (i = 0; i < K; i++) print_message("token %d: p %.4f\n", tok[i], p[i]);
    assert_true(p[0] < 1.0);
    p_min[3] = (float)(0.99 * fmin(p[0], fmin(p[1], p[2])));   /* under the first three: four tokens at least */
    if (swa_drafter_create(stories, stories, NULL, NULL, K, &dr, &err) != SWA_OK) fail_msg("%s", err.msg);
    assert_int_equal(swa_drafter_set_p_min(dr, -0.1f, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_drafter_set_p_min(dr, 1.5f, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_drafter_set_p_min(dr, (float)NAN, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_drafter_set_p_min(NULL, 0.5f, &err), SWA_ERR_INVALID_ARG);
    for (t = 0; t < 4; t++) {
        for (want = 1; want < K && p[want - 1] >= (double)p_min[t]; want++) {}
        swa_drafter_reset(dr);
        if (swa_drafter_set_p_min(dr, p_min[t], &err) != SWA_OK ||
            swa_drafter_draft(dr, story_prompt, sizeof story_prompt / sizeof *story_prompt, K, &d, &err) != SWA_OK)
            fail_msg("%s", err.msg);
        print_message("p_min %.4f: %d tokens drafted, %d expected\n", (double)p_min[t], d.n, want);
        assert_int_equal(d.n, want);
        if (t == 3) assert_true(d.n >= 4);
        for (i = 0; i < d.n; i++) assert_int_equal(d.token[i], tok[i]);
    }
    swa_drafter_free(dr);
}

/* ---- prompt lookup ---- */

static int lookup(const int32_t *t, size_t n, int lo, int hi, int cap, int32_t *draft)
{
    int32_t nd = -1;
    swa_error err;
    if (swa_spec_lookup(t, n, lo, hi, draft, cap, &nd, &err) != SWA_OK) fail_msg("%s", err.msg);
    return nd;
}

static void expect_draft(const int32_t *t, size_t n, int lo, int hi, int cap, const int32_t *want, int n_want)
{
    int32_t d[8];
    int i;
    assert_int_equal(lookup(t, n, lo, hi, cap, d), n_want);
    for (i = 0; i < n_want; i++) assert_int_equal(d[i], want[i]);
}

/* The drafts worked out by hand from the rule llama-lookup follows for its text's n-grams: a
   token is drafted where it followed the longest n-gram at the end (of the text and the draft so
   far) at least twice for 1 and 2 tokens, once for longer ones, and more than half of the times
   the n-gram occurred (two thirds for 1 token). */
static void test_lookup(void **state)
{
    static const int32_t a[] = {1, 2, 3, 4, 1, 2, 3}, b[] = {5, 9, 5, 7, 5}, c[] = {1, 2, 1}, e[] = {7, 7, 7, 7};
    static const int32_t g[] = {5, 9, 5, 9, 5}, h[] = {1, 2, 7, 1, 2, 7, 8, 1, 2}, i2[] = {1, 2, 7, 1, 2};
    static const int32_t tie[] = {1, 2, 5, 1, 2, 6, 1, 2}, most[] = {1, 2, 5, 1, 2, 6, 1, 2, 5, 1, 2};
    static const int32_t few[] = {2, 5, 2, 6, 2, 5, 2, 5, 2, 6, 2}, fall[] = {3, 2, 5, 4, 2, 5, 3, 2};
    static const int32_t cycle[] = {4, 1, 2, 3, 4, 1, 2, 3}, sevens[] = {7, 7, 7, 7, 7, 7, 7, 7}, nine[] = {9, 5, 9};
    static const int32_t seven[] = {7}, five[] = {5};
    int32_t d[8], nd;
    swa_error err;
    (void)state;
    expect_draft(a, 7, 1, 4, 8, cycle, 8);   /* "1 2 3" once before: 4; then "1 2 3 4", ... through the draft */
    expect_draft(a, 7, 1, 4, 2, cycle, 2);   /* cap */
    expect_draft(b, 5, 1, 1, 8, NULL, 0);    /* "5" followed by 9 and by 7: neither more than two thirds */
    expect_draft(g, 5, 1, 1, 3, nine, 3);    /* "5" twice by 9, then "9" twice by 5 */
    expect_draft(c, 3, 1, 3, 8, NULL, 0);    /* "1" once before: too few for one token */
    expect_draft(e, 4, 1, 4, 8, sevens, 8);  /* "7 7 7" once before, followed by 7 */
    expect_draft(h, 9, 2, 2, 1, seven, 1);   /* "1 2" twice before, both times 7 */
    expect_draft(i2, 5, 1, 4, 8, NULL, 0);   /* "1 2" and "2" once before: too few */
    expect_draft(tie, 8, 2, 2, 8, NULL, 0);  /* "1 2" by 5 and by 6: half is not more than half */
    expect_draft(most, 11, 2, 2, 1, five, 1);   /* by 5, 6, 5: two of three */
    expect_draft(most, 11, 1, 1, 1, five, 1);   /* "2" by 5, 6, 5: two thirds pass for one token */
    expect_draft(few, 11, 1, 1, 1, NULL, 0);    /* "2" by 5 three times of five: below two thirds */
    expect_draft(few, 11, 1, 3, 1, five, 1);    /* "2 6 2" once before, then 5: the longest n-gram first */
    expect_draft(fall, 8, 1, 2, 1, five, 1);    /* "3 2" once before, too few; then "2", twice by 5 */
    assert_int_equal(lookup(a, 0, 1, 4, 8, d), 0);
    assert_int_equal(lookup(a, 1, 1, 4, 8, d), 0);
    assert_int_equal(lookup(a, 7, 1, 4, 0, d), 0);
    assert_int_equal(swa_spec_lookup(a, 7, 0, 4, d, 8, &nd, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_spec_lookup(a, 7, 3, 2, d, 8, &nd, &err), SWA_ERR_INVALID_ARG);
}

/* ---- the sampler's distribution and the rejection rule ---- */

/* swa_sampler_dist against the stages computed here: top-k 3 of 6 logits at temperature 0.5
   after a repetition penalty of 2 on token 0, then a logit bias banning token 4. */
static void test_sampler_dist(void **state)
{
    static const float logits[6] = {4.0f, 1.0f, 3.0f, -1.0f, 2.5f, 0.0f};
    swa_sampler_config sc = swa_sampler_config_default();
    swa_sampler *s = NULL;
    swa_token_prob p[6];
    int32_t n, i, ban = 4;
    float ban_bias = -100.0f;
    double w[3], sum = 0.0;
    const int32_t ids[3] = {2, 4, 0};   /* after the penalty: 3, 2.5, 2 */
    swa_error err;
    (void)state;
    sc.temperature = 0.5f;
    sc.top_k = 3;
    sc.top_p = 1.0f;
    sc.min_p = 0.0f;
    sc.repeat_penalty = 2.0f;
    assert_int_equal(swa_sampler_create(&sc, 6, &s, &err), SWA_OK);
    swa_sampler_accept(s, 0);
    assert_int_equal(swa_sampler_dist(s, logits, p, 6, &n, &err), SWA_OK);
    assert_int_equal(n, 3);
    for (i = 0; i < 3; i++) sum += (w[i] = exp(((double)(i == 0 ? 3.0 : i == 1 ? 2.5 : 2.0) - 3.0) / 0.5));
    for (i = 0; i < 3; i++) {
        assert_int_equal(p[i].id, ids[i]);
        assert_true(fabs(p[i].p - w[i] / sum) < 1e-6);
    }
    assert_int_equal(swa_sampler_dist(s, logits, p, 2, &n, &err), SWA_ERR_BUFFER_TOO_SMALL);
    assert_int_equal(n, 3);
    assert_int_equal(swa_sampler_set_logit_bias(s, &ban, &ban_bias, 1, &err), SWA_OK);
    assert_int_equal(swa_sampler_dist(s, logits, p, 6, &n, &err), SWA_OK);
    assert_int_equal(n, 3);
    assert_int_equal(p[1].id, 0);   /* 4 banned: 2, 0, 1 */
    assert_int_equal(p[2].id, 1);
    swa_sampler_free(s);
    sc.temperature = 0;   /* greedy: one token, certain */
    assert_int_equal(swa_sampler_create(&sc, 6, &s, &err), SWA_OK);
    assert_int_equal(swa_sampler_dist(s, logits, p, 6, &n, &err), SWA_OK);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].id, 0);
    assert_true(p[0].p == 1.0f);
    swa_sampler_free(s);
}

/* The test's own generator, for drafts drawn from q: independent of the sampler's. */
static uint64_t test_rng = 0x2545f4914f6cdd1dull;
static double test_uniform(void)
{
    test_rng ^= test_rng << 13;
    test_rng ^= test_rng >> 7;
    test_rng ^= test_rng << 17;
    return (double)(test_rng >> 11) * (1.0 / 9007199254740992.0);
}

static int32_t draw_from(const swa_token_prob *q, int n)
{
    double u = test_uniform();
    int i;
    for (i = 0; i < n - 1; i++) if ((u -= q[i].p) < 0) return q[i].id;
    return q[n - 1].id;
}

/* Pearson's chi-square of counts against probabilities p (by id), over n_vocab ids. */
static double chi_square(const long *count, const double *p, int n_vocab, long total)
{
    double x2 = 0.0;
    int i;
    for (i = 0; i < n_vocab; i++) {
        double e = p[i] * (double)total;
        if (e > 0) x2 += ((double)count[i] - e) * ((double)count[i] - e) / e;
        else assert_int_equal(count[i], 0);   /* never a token the target rules out */
    }
    return x2;
}

/* Drafts x ~ q through swa_spec_resolve: the tokens out are distributed as p, not q, and x is
   kept with probability sum min(p, q); for a certain draft (prompt lookup's) with probability
   p(x). 60000 draws per case with fixed seeds; 6 categories, 5 degrees of freedom: chi-square
   below 20.5 (p = 0.001). */
static void test_rejection_rule(void **state)
{
    static const swa_token_prob p[] = {{0, 0.40f}, {1, 0.25f}, {2, 0.15f}, {3, 0.10f}, {5, 0.10f}};   /* none on 4 */
    static const swa_token_prob q[] = {{0, 0.10f}, {1, 0.30f}, {3, 0.05f}, {4, 0.35f}, {5, 0.20f}};   /* none on 2 */
    const double pd[6] = {0.40, 0.25, 0.15, 0.10, 0.0, 0.10};
    const long n_draws = 60000;
    swa_sampler_config sc = swa_sampler_config_default();
    swa_sampler *s = NULL;
    swa_spec *sp = NULL;
    swa_error err;
    int pass;
    (void)state;
    sc.seed = 7;
    assert_int_equal(swa_sampler_create(&sc, 6, &s, &err), SWA_OK);
    assert_int_equal(swa_spec_create(6, 4, &sp, &err), SWA_OK);
    for (pass = 0; pass < 2; pass++) {   /* drafts from q; then the certain draft 1 */
        long count[6] = {0}, kept_n = 0, k;
        double x2, rate, want_rate = pass == 0 ? 0.10 + 0.25 + 0.05 + 0.10 : 0.25;
        for (k = 0; k < n_draws; k++) {
            int32_t x = pass == 0 ? draw_from(q, 5) : 1, t = -1;
            int kept = -1;
            assert_int_equal(swa_spec_resolve(sp, s, p, 5, x, pass == 0 ? q : NULL, pass == 0 ? 5 : 0, &t, &kept, &err),
                             SWA_OK);
            assert_true(t >= 0 && t < 6);
            assert_true(kept ? t == x : 1);
            count[t]++;
            kept_n += kept;
        }
        x2 = chi_square(count, pd, 6, n_draws);
        rate = (double)kept_n / (double)n_draws;
        fprintf(stderr, "test_speculative: rejection rule %s: chi-square %.2f, kept %.4f (want %.4f)\n",
                pass == 0 ? "q" : "point mass", x2, rate, want_rate);
        assert_true(x2 < 20.5);
        assert_true(fabs(rate - want_rate) < 0.01);   /* 5 standard errors */
    }
    {   /* a certain target keeps a right draft without a draw, replaces a wrong one by its token */
        static const swa_token_prob one[] = {{3, 1.0f}};
        int32_t t;
        int kept;
        assert_int_equal(swa_spec_resolve(sp, s, one, 1, 3, q, 5, &t, &kept, &err), SWA_OK);
        assert_true(kept && t == 3);
        assert_int_equal(swa_spec_resolve(sp, s, one, 1, 4, q, 5, &t, &kept, &err), SWA_OK);
        assert_true(!kept && t == 3);
        assert_int_equal(swa_spec_resolve(sp, s, one, 1, 2, q, 5, &t, &kept, &err), SWA_ERR_INVALID_ARG);   /* q(2) = 0 */
        assert_int_equal(swa_spec_resolve(sp, s, one, 1, 6, NULL, 0, &t, &kept, &err), SWA_ERR_INVALID_ARG);
    }
    swa_spec_free(sp);
    swa_sampler_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_sampler_dist),
        cmocka_unit_test(test_rejection_rule),
        cmocka_unit_test(test_stories_matches_pytorch),
        cmocka_unit_test(test_stories_draft_model),
        cmocka_unit_test(test_stories_right_and_wrong),
        cmocka_unit_test(test_stories_top_k_one),
        cmocka_unit_test(test_stories_grammar),
        cmocka_unit_test(test_ring_limit),
        cmocka_unit_test(test_abort_leaves_no_trace),
        cmocka_unit_test(test_drafter_vocabulary),
        cmocka_unit_test(test_drafter_p_min),
        cmocka_unit_test(test_architectures),
        cmocka_unit_test(test_cli),
    };
#ifdef SWA_TEST_TSAN
    /* ThreadSanitizer: one test with a pool of 2 behind the verifier and its rewinds; the drafter
       adds no thread of its own, and the rest is the same arithmetic at 50 times the cost */
    cmocka_set_test_filter("test_stories_right_and_wrong");
#endif
    return cmocka_run_group_tests(tests, load_stories, free_stories);
}
