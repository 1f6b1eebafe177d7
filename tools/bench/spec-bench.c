/* swa-spec-bench: what speculative decoding costs and gains.

   swa-spec-bench -m MODEL.gguf [-t THREADS] [-r 5] [--ks 1,2,4,8,16] [--depth 128]
   swa-spec-bench -m MODEL.gguf -f PROMPT.txt [-n 200] [--draft-max 8] [-t THREADS] [-r 5]

   The first form measures verification: the time of one swa_ctx_decode of k tokens of one
   sequence, every row's logits asked (as swa_spec_verify does), after --depth tokens of random
   prompt, then rewound; each repetition goes over the ks in turn, forwards and backwards
   alternately, so that a noisy machine spreads its noise over all of them. The second form
   generates -n tokens greedily after the prompt file, without drafts and with prompt lookup
   (n-grams of 1..4, drafts of up to --draft-max), alternating which goes first; it checks that
   both give the same tokens and prints tokens/s and the acceptance. Medians over -r
   repetitions, with the smallest and the largest. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE            /* MAP_ANONYMOUS, MADV_HUGEPAGE for swa_model_load_resident */
#include "swa.h"
#define PROG "swa-spec-bench"
#include "tools/common/tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_K 64
#define MAX_REPS 64

typedef struct options {
    const char *model, *prompt_file;
    int32_t reps, depth, n_gen, draft_max, n_k, k[16];
    int32_t n_threads;
} options;

static void usage(FILE *f)
{
    fprintf(f, "usage: " PROG " -m MODEL.gguf [-t THREADS] [-r 5] [--ks 1,2,4,8,16] [--depth 128]\n"
               "       " PROG " -m MODEL.gguf -f PROMPT.txt [-n 200] [--draft-max 8] [-t THREADS] [-r 5]\n");
}

static void parse_args(int argc, char **argv, options *o)
{
    static const options defaults = {.reps = 5, .depth = 128, .n_gen = 200, .draft_max = 8};
    int i;
    *o = defaults;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        help_or_version(a, usage);
        if (!v) usage_fail("unknown flag %s, or it needs a value", a);
        i++;
        if (!strcmp(a, "-m")) o->model = v;
        else if (!strcmp(a, "-f")) o->prompt_file = v;
        else if (!strcmp(a, "-t")) parse_int(a, v, 0, 256, &o->n_threads);
        else if (!strcmp(a, "-r")) parse_int(a, v, 1, MAX_REPS, &o->reps);
        else if (!strcmp(a, "--depth")) parse_int(a, v, 1, 1 << 16, &o->depth);
        else if (!strcmp(a, "-n")) parse_int(a, v, 1, 1 << 16, &o->n_gen);
        else if (!strcmp(a, "--draft-max")) parse_int(a, v, 1, MAX_K, &o->draft_max);
        else if (!strcmp(a, "--ks")) o->n_k = parse_int_list(a, v, 1, MAX_K, o->k, 16);
        else usage_fail("unknown flag %s", a);
    }
    if (!o->model) usage_fail("-m MODEL is required");
    if (!o->n_k) {
        static const int32_t ks[] = {1, 2, 4, 8, 16};
        memcpy(o->k, ks, sizeof ks);
        o->n_k = 5;
    }
}

/* Median, smallest and largest of v[0..n), as "median (min-max)" with the unit's scale. */
static void print_spread(double *v, int n, double scale)
{
    double m = median(v, n);
    printf("%.2f (%.2f-%.2f)", m * scale, v[0] * scale, v[n - 1] * scale);
}

static swa_ctx *make_ctx(const swa_model *m, const options *o, int n_rewind)
{
    swa_ctx_config cfg;
    swa_ctx *c = NULL;
    swa_error err;
    memset(&cfg, 0, sizeof cfg);
    cfg.n_threads = o->n_threads;
    cfg.n_rewind = n_rewind;
    if (swa_ctx_create(m, &cfg, &c, &err) != SWA_OK) fail("%s", err.msg);
    swa_ctx_set_abort(c, interrupt_abort, NULL);
    return c;
}

/* Evaluate n tokens of sequence 0; with logits, every row's (n <= MAX_K). */
static void decode_or_die(swa_ctx *c, const int32_t *tok, size_t n, float *logits)
{
    int8_t all[MAX_K];
    swa_batch b;
    swa_error err;
    memset(&b, 0, sizeof b);
    memset(all, 1, sizeof all);
    b.n = n;
    b.token = tok;
    b.logits = logits ? all : NULL;
    if (swa_ctx_decode(c, &b, logits, &err) != SWA_OK) {
        if (interrupted()) interrupt_exit(NULL);
        fail("%s", err.msg);
    }
}

/* The verification curve: one decode of k tokens, every row's logits, then rewound. */
static void curve(const swa_model *m, const options *o)
{
    int32_t n_vocab = swa_model_hparams(m)->n_vocab, *tok = (int32_t *)malloc(sizeof(int32_t) * (size_t)(o->depth + MAX_K));
    float *logits = (float *)malloc(sizeof(float) * (size_t)n_vocab * (MAX_K + 1));
    static double t[16][MAX_REPS];
    uint64_t rng = rng_seed(7);
    swa_ctx *c = make_ctx(m, o, MAX_K - 1);
    swa_error err;
    double base;
    int r, j, i;
    if (!tok || !logits) fail("out of memory");
    for (i = 0; i < o->depth + MAX_K; i++) tok[i] = (int32_t)(rng_next(&rng) % (uint64_t)n_vocab);
    decode_or_die(c, tok, (size_t)o->depth, NULL);
    for (r = 0; r < o->reps; r++)
        for (j = 0; j < o->n_k; j++) {
            int at = r % 2 ? o->n_k - 1 - j : j, k = o->k[at];
            double t0 = now();
            decode_or_die(c, tok + o->depth, (size_t)k, logits);
            t[at][r] = now() - t0;
            if (swa_seq_rewind(c, 0, k, &err) != SWA_OK) fail("%s", err.msg);
        }
    printf("| k | ms per call | ms per token | call / (k=1 call) |\n| --- | --- | --- | --- |\n");
    base = median(t[0], o->reps);
    for (j = 0; j < o->n_k; j++) {
        double per[MAX_REPS];
        for (r = 0; r < o->reps; r++) per[r] = t[j][r] / o->k[j];
        printf("| %d | ", o->k[j]);
        print_spread(t[j], o->reps, 1e3);
        printf(" | ");
        print_spread(per, o->reps, 1e3);
        printf(" | %.2f |\n", median(t[j], o->reps) / base);
    }
    swa_ctx_free(c);
    free(tok);
    free(logits);
}

/* Greedy generation of n tokens after the prompt, with prompt lookup or without: the time of
   the generation (the prompt excluded), the tokens into out, the acceptance into *drafted and
   *accepted. */
static double generate(const swa_model *m, const options *o, const int32_t *prompt, size_t n_prompt, int lookup,
                       int32_t *out, long *drafted, long *accepted)
{
    swa_sampler_config sc = swa_sampler_config_default();
    swa_ctx *c = make_ctx(m, o, o->draft_max - 1);
    int32_t n_vocab = swa_model_hparams(m)->n_vocab, *hist = (int32_t *)malloc(sizeof(int32_t) * (n_prompt + (size_t)o->n_gen + MAX_K + 1));
    int32_t draft[MAX_K], got[MAX_K + 1], n_got;
    size_t n_hist = n_prompt;
    swa_sampler *s = NULL;
    swa_spec *sp = NULL;
    const float *logits;
    swa_error err;
    double t0;
    int done = 0, i;
    sc.temperature = 0;
    if (!hist || swa_sampler_create(&sc, n_vocab, &s, &err) != SWA_OK ||
        swa_spec_create(n_vocab, o->draft_max, &sp, &err) != SWA_OK || swa_ctx_eval(c, prompt, n_prompt, &logits, &err) != SWA_OK)
        fail("%s", interrupted() ? "interrupted" : err.msg);
    memcpy(hist, prompt, sizeof(int32_t) * n_prompt);
    *drafted = *accepted = 0;
    t0 = now();
    hist[n_hist++] = out[done++] = swa_sampler_sample(s, logits);
    while (done < o->n_gen) {
        int k = o->n_gen - done - 1 < o->draft_max ? o->n_gen - done - 1 : o->draft_max;
        swa_draft d;
        memset(&d, 0, sizeof d);
        d.token = draft;
        if (lookup && swa_spec_lookup(hist, n_hist, 1, 4, draft, k, &d.n, &err) != SWA_OK) fail("%s", err.msg);
        if (swa_spec_verify(sp, c, 0, s, out[done - 1], &d, got, &n_got, &err) != SWA_OK)
            fail("%s", interrupted() ? "interrupted" : err.msg);
        *drafted += d.n;
        *accepted += n_got - 1;
        for (i = 0; i < n_got; i++) hist[n_hist++] = out[done++] = got[i];
    }
    t0 = now() - t0;
    swa_spec_free(sp);
    swa_sampler_free(s);
    swa_ctx_free(c);
    free(hist);
    return t0;
}

static void end_to_end(const swa_model *m, const options *o)
{
    const swa_vocab *v;
    swa_error err;
    size_t len, n_prompt;
    char *text = read_all(o->prompt_file, &len);
    int32_t *prompt, *plain_out = (int32_t *)malloc(sizeof(int32_t) * (size_t)(o->n_gen + MAX_K + 1));
    int32_t *spec_out = (int32_t *)malloc(sizeof(int32_t) * (size_t)(o->n_gen + MAX_K + 1));
    double tps[2][MAX_REPS];
    long drafted = 0, accepted = 0, d, a;
    int r, w, same = 1;
    if (!text) exit(1);
    if (swa_model_vocab(m, &v, &err) != SWA_OK) fail("%s", err.msg);
    if (!(prompt = tokenize_all(v, text, len, SWA_TOKENIZE_ADD_BOS, 0, &n_prompt))) exit(1);
    if (!plain_out || !spec_out) fail("out of memory");
    for (r = 0; r < o->reps; r++)
        for (w = 0; w < 2; w++) {
            int lookup = (w + r) % 2;   /* alternate which goes first */
            double t = generate(m, o, prompt, n_prompt, lookup, lookup ? spec_out : plain_out, &d, &a);
            tps[lookup][r] = (double)o->n_gen / t;
            if (lookup) drafted += d, accepted += a;
        }
    same = !memcmp(plain_out, spec_out, sizeof(int32_t) * (size_t)o->n_gen);
    printf("| prompt tokens | generated | plain t/s | lookup t/s | speed-up | drafted | accepted | same tokens |\n"
           "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    printf("| %zu | %d | ", n_prompt, o->n_gen);
    print_spread(tps[0], o->reps, 1.0);
    printf(" | ");
    print_spread(tps[1], o->reps, 1.0);
    printf(" | %.2f | %ld | %ld (%.1f%%) | %s |\n", median(tps[1], o->reps) / median(tps[0], o->reps),
           drafted / o->reps, accepted / o->reps, drafted ? 100.0 * (double)accepted / (double)drafted : 0.0,
           same ? "yes" : "NO");
    free(text);
    free(prompt);
    free(plain_out);
    free(spec_out);
    if (!same) fail("prompt lookup changed the tokens");
}

int main(int argc, char **argv)
{
    options o;
    swa_model *m;
    parse_args(argc, argv, &o);
    catch_interrupt();
    m = load_model_or_exit(o.model, 0);
    if (o.prompt_file) end_to_end(m, &o);
    else curve(m, &o);
    stdout_flush();
    swa_model_free(m);
    return 0;
}
