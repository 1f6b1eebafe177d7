/* swa-grammar-bench: what a grammar adds to sampling a token, on real vocabularies.

   swa-grammar-bench [--grammar FILE | --json-schema FILE] [--write-grammar FILE] [--doc FILE] [--reps N]
                     [--decode [-t N]] [VOCAB.gguf ...]

   For each vocabulary (default: the tokenizer test vocabularies in ../shared/testdata and
   build/grammar-bench-200k.gguf, which tools/bench/make-o200k-vocab.py writes), the document
   (default: tools/bench/grammar/document.json) is cut into the vocabulary's pieces, longest
   first (as a model writes it: SentencePiece's tokenizer would put a space in front), and each
   of those tokens is sampled in turn from random logits (normal, sigma 2) in which that token's is raised by 30, so that
   the output follows the document: once by a sampler alone and once by one with the grammar
   (default: tests/data/grammar/json.gbnf) attached, with the default settings (temperature
   0.8, top-k 40, top-p 0.95, min-p 0.05). Prints, per token, the sampler's time without and
   with the grammar and the difference (the grammar's stage: the filter over the vocabulary and
   moving the grammar on), as the mean, the median and the worst over the document, the best of
   --reps passes (default 3) each; and the time to attach the grammar (the trie of the pieces).
   --json-schema takes the grammar of a JSON Schema (swa_json_schema_to_grammar) instead, and
   --write-grammar writes the grammar's text to FILE, for another program (llama.cpp's sampler,
   tools/bench/llamacpp_grammar.cpp) to be given the same.
   --decode (the files are then models) first times generating a token on each: after an
   8-token prompt, 32 tokens evaluated one at a time (swa_ctx_eval of 1 token, on -t N threads,
   default the online CPUs) and each sampled by the plain sampler, the median of the 32; and
   adds two columns: that time in ms and the grammar's stage (mean / median) as a percentage
   of it. */
#define _POSIX_C_SOURCE 200809L
#define PROG "swa-grammar-bench"
#include "swa.h"
#include "tools/common/tool.h"
#include <math.h>

static double gauss(uint64_t *rng)
{
    double u = ((double)(rng_next(rng) >> 11) + 0.5) / 9007199254740992.0;
    double v = ((double)(rng_next(rng) >> 11) + 0.5) / 9007199254740992.0;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

typedef struct stats { double mean, med, worst; } stats;

static stats summarise(double *t, size_t n)
{
    stats s = {0, 0, 0};
    size_t i;
    for (i = 0; i < n; i++) {
        s.mean += t[i] / (double)n;
        if (t[i] > s.worst) s.worst = t[i];
    }
    s.med = median(t, (int)n);
    return s;
}

/* One pass: per token, the time of a plain and of a constrained sample, into plain[] and gram[]. */
static void pass(const swa_vocab *v, const swa_grammar *g, const int32_t *ids, size_t n, float *logits,
                 double *plain, double *gram, double *attach)
{
    swa_sampler_config sc = swa_sampler_config_default();
    swa_sampler *a, *b;
    swa_error err;
    int32_t nv = swa_vocab_size(v), j;
    uint64_t rng = rng_seed(7);
    size_t i;
    double t0;
    if (swa_sampler_create(&sc, nv, &a, &err) || swa_sampler_create(&sc, nv, &b, &err)) fail("%s", err.msg);
    t0 = now();
    if (swa_sampler_set_grammar(b, g, v, &err)) fail("%s", err.msg);
    *attach = now() - t0;
    for (i = 0; i < n; i++) {
        int32_t x, y;
        for (j = 0; j < nv; j++) logits[j] = (float)(2.0 * gauss(&rng));
        logits[ids[i]] += 30.0f;
        t0 = now();
        x = swa_sampler_sample(a, logits);
        plain[i] = now() - t0;
        t0 = now();
        y = swa_sampler_sample(b, logits);
        gram[i] = now() - t0;
        if (x != ids[i] || y != ids[i]) {
            swa_sampler_status(b, &err);
            fail("token %zu: the samplers chose %d and %d, not %d (%s)", i, (int)x, (int)y, (int)ids[i], err.msg);
        }
    }
    swa_sampler_free(a);
    swa_sampler_free(b);
}

/* The document as tokens: at each place the longest piece that matches there. */
static int32_t *pieces(const swa_vocab *v, const char *doc, size_t len, size_t *n)
{
    int32_t nv = swa_vocab_size(v), id, *ids = (int32_t *)malloc((len + 1) * sizeof *ids);
    char buf[256];
    size_t at = 0;
    if (!ids) fail("out of memory");
    *n = 0;
    while (at < len) {
        int32_t best = -1;
        size_t best_len = 0;
        for (id = 0; id < nv; id++) {
            size_t k = swa_token_to_text(v, id, buf, sizeof buf);
            swa_token_type t = swa_vocab_type(v, id);
            if (k == 0 || k > sizeof buf || k <= best_len || k > len - at || t == SWA_TOKEN_CONTROL ||
                t == SWA_TOKEN_UNKNOWN || memcmp(buf, doc + at, k) != 0) continue;
            best = id;
            best_len = k;
        }
        if (best < 0) fail("no piece of the vocabulary matches the document at byte %zu", at);
        ids[(*n)++] = best;
        at += best_len;
    }
    return ids;
}

/* The median time of generating a token with the model at path: an 8-token prompt of the
   document's tokens, then 32 tokens evaluated one at a time (each the document's next, so the
   text is plausible) and sampled by the default sampler; 0 when the file does not load. */
static double token_time(const char *path, const int32_t *ids, size_t n_ids, int threads)
{
    enum { PROMPT = 8, GEN = 32 };
    swa_model *m;
    swa_ctx *c;
    swa_sampler *s;
    swa_ctx_config cc;
    swa_sampler_config sc = swa_sampler_config_default();
    swa_error err;
    const float *logits;
    int32_t tok[PROMPT];
    double t[GEN], t0;
    int i;
    if (swa_model_load(path, &m, &err)) {
        fprintf(stderr, PROG ": %s: %s (no token time)\n", path, err.msg);
        return 0.0;
    }
    cc = swa_ctx_config_default(m);
    cc.n_threads = threads;
    cc.n_ctx = PROMPT + GEN;
    if (swa_ctx_create(m, &cc, &c, &err) || swa_sampler_create(&sc, swa_model_hparams(m)->n_vocab, &s, &err))
        fail("%s: %s", path, err.msg);
    for (i = 0; i < PROMPT; i++) tok[i] = ids[(size_t)i % n_ids];
    if (swa_ctx_eval(c, tok, PROMPT, &logits, &err)) fail("%s: %s", path, err.msg);
    for (i = 0; i < GEN; i++) {
        int32_t next = ids[(size_t)(PROMPT + i) % n_ids];
        t0 = now();
        if (swa_ctx_eval(c, &next, 1, &logits, &err)) fail("%s: %s", path, err.msg);
        swa_sampler_sample(s, logits);
        t[i] = now() - t0;
    }
    swa_sampler_free(s);
    swa_ctx_free(c);
    swa_model_free(m);
    return median(t, GEN);
}

static void bench(const char *path, const swa_grammar *g, const char *doc, size_t doc_len, int reps, int threads)
{
    swa_gguf *f;
    swa_vocab *v;
    swa_error err;
    size_t n, i;
    int32_t *ids;
    float *logits;
    double *plain, *gram, *diff, *best_p, *best_g, attach, best_attach = 1e30, token = 0.0;
    int r;
    stats sp, sg, sd;
    if (swa_gguf_open(path, &f, &err) || swa_vocab_load(f, &v, &err)) {
        fprintf(stderr, PROG ": %s: %s (skipped)\n", path, err.msg);
        return;
    }
    ids = pieces(v, doc, doc_len, &n);
    if (threads >= 0 && (token = token_time(path, ids, n, threads)) <= 0.0) {
        free(ids);
        swa_vocab_free(v);
        swa_gguf_close(f);
        return;
    }
    logits = (float *)malloc((size_t)swa_vocab_size(v) * sizeof *logits);
    plain = (double *)malloc(n * sizeof *plain); gram = (double *)malloc(n * sizeof *gram);
    diff = (double *)malloc(n * sizeof *diff);
    best_p = (double *)malloc(n * sizeof *best_p); best_g = (double *)malloc(n * sizeof *best_g);
    if (!logits || !plain || !gram || !diff || !best_p || !best_g) fail("out of memory");
    for (i = 0; i < n; i++) best_p[i] = best_g[i] = 1e30;
    for (r = 0; r < reps; r++) {
        pass(v, g, ids, n, logits, plain, gram, &attach);
        for (i = 0; i < n; i++) {
            if (plain[i] < best_p[i]) best_p[i] = plain[i];
            if (gram[i] < best_g[i]) best_g[i] = gram[i];
        }
        if (attach < best_attach) best_attach = attach;
    }
    for (i = 0; i < n; i++) diff[i] = best_g[i] - best_p[i] > 0 ? best_g[i] - best_p[i] : 0;
    sp = summarise(best_p, n); sg = summarise(best_g, n); sd = summarise(diff, n);
    printf("| %s | %d | %zu | %.2f | %.1f / %.1f / %.1f | %.1f / %.1f / %.1f | %.1f / %.1f / %.1f |", path,
           (int)swa_vocab_size(v), n, best_attach * 1e3, sp.mean * 1e6, sp.med * 1e6, sp.worst * 1e6, sg.mean * 1e6,
           sg.med * 1e6, sg.worst * 1e6, sd.mean * 1e6, sd.med * 1e6, sd.worst * 1e6);
    if (threads >= 0) printf(" %.2f | %.2f / %.2f |", token * 1e3, 100.0 * sd.mean / token, 100.0 * sd.med / token);
    printf("\n");
    stdout_flush();
    free(ids); free(logits); free(plain); free(gram); free(diff); free(best_p); free(best_g);
    swa_vocab_free(v);
    swa_gguf_close(f);
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) fail("cannot write %s", path);
}

int main(int argc, char **argv)
{
    static const char *const vocabs[] = {"../shared/testdata/ggml-vocab-llama-spm.gguf",
                                         "../shared/testdata/ggml-vocab-llama-bpe.gguf",
                                         "build/grammar-bench-200k.gguf"};
    const char *grammar_path = "tests/data/grammar/json.gbnf", *doc_path = "tools/bench/grammar/document.json";
    const char *schema_path = NULL, *write_path = NULL;
    char *text, *doc;
    size_t len, doc_len;
    int i, reps = 3, first = 0, threads = -1, decode = 0;
    swa_grammar *g;
    swa_error err;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--grammar") && i + 1 < argc) grammar_path = argv[++i];
        else if (!strcmp(argv[i], "--json-schema") && i + 1 < argc) schema_path = argv[++i];
        else if (!strcmp(argv[i], "--write-grammar") && i + 1 < argc) write_path = argv[++i];
        else if (!strcmp(argv[i], "--doc") && i + 1 < argc) doc_path = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--decode")) decode = 1;
        else if (!strcmp(argv[i], "-t") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--version")) {
            printf(PROG " %s\n", swa_version());
            return 0;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: " PROG " [--grammar FILE | --json-schema FILE] [--write-grammar FILE] [--doc FILE] [--reps N] "
                   "[--decode [-t N]] [VOCAB.gguf ...]\n");
            return 0;
        } else if (argv[i][0] == '-') usage_fail("unknown option %s", argv[i]);
        else break;
    }
    first = i;
    if (reps < 1) usage_fail("--reps must be at least 1");
    if (threads != -1 && (!decode || threads < 1 || threads > 1024)) usage_fail("-t wants 1..1024 threads, with --decode");
    if (decode && threads < 0) threads = 0;   /* the context's default: the online CPUs */
    if (!(text = read_all(schema_path ? schema_path : grammar_path, &len))) return 1;
    if (schema_path) {
        char *gbnf;
        if (swa_json_schema_to_grammar(text, len, &gbnf, &err)) fail("%s: %s", schema_path, err.msg);
        free(text);
        text = gbnf;
        len = strlen(gbnf);
        grammar_path = schema_path;
    }
    if (swa_grammar_parse(text, len, NULL, &g, &err)) fail("%s: %s", grammar_path, err.msg);
    if (write_path) write_text(write_path, text, len);
    if (!(doc = read_all(doc_path, &doc_len))) return 1;
    if (swa_grammar_match(g, doc, doc_len, NULL, &err)) fail("%s does not match: %s", doc_path, err.msg);
    printf("Per token, microseconds (mean / median / worst of the document's tokens; best of %d passes), "
           "grammar %s:\n\n", reps, grammar_path);
    printf("| vocabulary | tokens | document tokens | attach ms | sampler alone | with the grammar | the grammar's stage |%s\n",
           decode ? " token ms (decode) | the grammar's stage, % of a token |" : "");
    printf("| --- | --- | --- | --- | --- | --- | --- |%s\n", decode ? " --- | --- |" : "");
    if (first < argc)
        for (i = first; i < argc; i++) bench(argv[i], g, doc, doc_len, reps, threads);
    else
        for (i = 0; i < 3; i++) bench(vocabs[i], g, doc, doc_len, reps, threads);
    swa_grammar_free(g);
    free(text);
    free(doc);
    return 0;
}
