/* swa-batched-bench: decoding several sequences at once, as llama.cpp's llama-batched-bench measures.

   swa-batched-bench -m MODEL.gguf [-p 128] [-n 32] [-b 1,2,4,8] [-t THREADS] [-r 3] [--kv f16|f32|q8_0]
                     [--kernels K] [--no-mmap]

   For each batch size B: B sequences each get a prompt of -p tokens (all B prompts in batches of
   up to 512 tokens, as llama-batched-bench's default), then -n tokens are generated for every
   sequence, one batch of B tokens (one per sequence) per step, greedy. Prints one table row per
   B, with the columns of llama-batched-bench (PP, TG, B, N_KV, T_PP s, S_PP t/s, T_TG s,
   S_TG t/s, T s, S t/s), the medians over -r repetitions. S_TG is the aggregate generation
   speed: B * TG tokens over the generation time. Random prompt tokens: speed does not depend
   on what they say. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE            /* MAP_ANONYMOUS, MADV_HUGEPAGE for swa_model_load_resident */
#include "swa.h"
#define PROG "swa-batched-bench"
#include "tools/common/tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_B 64

typedef struct options {
    const char *model;
    int n_prompt, n_gen, reps, no_mmap, n_b;
    int32_t b[MAX_B];
    swa_ctx_config cfg;
} options;

static uint64_t rng = 88172645463325252ull;
static int32_t random_token(int32_t n_vocab) { return (int32_t)(rng_next(&rng) % (uint64_t)n_vocab); }

/* One repetition at batch size B: the prompt and generation times, in seconds. */
/* Ctrl-C stops a decode within a layer (the abort callback) and the program, status 130. */
static void decode_or_die(swa_ctx *c, const swa_batch *batch, float *logits)
{
    swa_error err;
    if (swa_ctx_decode(c, batch, logits, &err) != SWA_OK) {
        if (interrupted()) interrupt_exit(NULL);
        fail("%s", err.msg);
    }
}

static void run_once(swa_ctx *c, const options *o, int B, int32_t n_vocab, double *t_pp, double *t_tg)
{
    size_t n = (size_t)B * (size_t)o->n_prompt, i;
    int32_t *tok = (int32_t *)malloc(sizeof(int32_t) * (n > (size_t)B ? n : (size_t)B));
    int32_t *seq = (int32_t *)malloc(sizeof(int32_t) * (n > (size_t)B ? n : (size_t)B));
    float *logits = (float *)malloc(sizeof(float) * (size_t)B * (size_t)n_vocab);
    swa_batch batch;
    double t0;
    int step, s;
    if (!tok || !seq || !logits) fail("out of memory");
    swa_ctx_reset(c);
    for (i = 0; i < n; i++) {
        tok[i] = random_token(n_vocab);
        seq[i] = (int32_t)(i / (size_t)o->n_prompt);
    }
    batch.token = tok;
    batch.seq = seq;
    batch.logits = NULL;                     /* the last token of each sequence */
    batch.n = n;
    t0 = now();
    if (n > 0) decode_or_die(c, &batch, logits);
    *t_pp = now() - t0;
    for (s = 0; s < B; s++) {
        seq[s] = s;
        tok[s] = n > 0 ? swa_argmax(logits + (size_t)s * (size_t)n_vocab, n_vocab) : random_token(n_vocab);
    }
    batch.n = (size_t)B;
    t0 = now();
    for (step = 0; step < o->n_gen; step++) {
        decode_or_die(c, &batch, logits);
        for (s = 0; s < B; s++) tok[s] = swa_argmax(logits + (size_t)s * (size_t)n_vocab, n_vocab);
    }
    *t_tg = now() - t0;
    free(tok);
    free(seq);
    free(logits);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: swa-batched-bench -m MODEL.gguf [-p 128] [-n 32] [-b 1,2,4,8] [-t THREADS] [-r 3] [--kv f16|f32|q8_0]\n"
               "                         [--kernels best|ref|avx2|avx-vnni|avx512|amx|neon] [--no-mmap]\n"
               "  -p N          prompt tokens per sequence (default 128; -npp as llama-batched-bench)\n"
               "  -n N          tokens generated per sequence (default 32; -ntg)\n"
               "  -b LIST       batch sizes: sequences decoded together (default 1,2,4,8; at most 64 each; -npl)\n"
               "  -t N          threads (default: online CPUs)\n"
               "  -r N          repetitions; medians are reported (default 3)\n"
               "  --kv T        key/value cache type (default f16)\n"
               "  --kernels K   instruction set (default best)\n"
               "  --no-mmap     read the model into memory instead of mapping it\n"
               "  --version     the program's name and version\n"
               "  Exit status: 0 complete, 1 error, 2 bad usage, 130 stopped by Ctrl-C.\n");
}

static int parse(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->n_prompt = 128;
    o->n_gen = 32;
    o->reps = 3;
    o->n_b = parse_int_list("-b", "1,2,4,8", 1, MAX_B, o->b, MAX_B);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        help_or_version(a, usage);
        if (!strcmp(a, "--no-mmap")) { o->no_mmap = 1; continue; }
        if (!v) usage_fail("%s needs a value or is unknown", a);
        i++;
        if ((!strcmp(a, "-npp") || !strcmp(a, "-ntg")) && strchr(v, ','))
            usage_fail("%s takes one length here (llama-batched-bench's lists of lengths are not supported)", a);
        if (!strcmp(a, "-m")) o->model = v;
        else if (!strcmp(a, "-p") || !strcmp(a, "-npp")) o->n_prompt = atoi(v);   /* llama-batched-bench's spellings */
        else if (!strcmp(a, "-n") || !strcmp(a, "-ntg")) o->n_gen = atoi(v);
        else if (!strcmp(a, "-t")) o->cfg.n_threads = atoi(v);
        else if (!strcmp(a, "-r")) o->reps = atoi(v);
        else if (!strcmp(a, "-b") || !strcmp(a, "-npl")) o->n_b = parse_int_list(a, v, 1, MAX_B, o->b, MAX_B);
        else if (!strcmp(a, "--kernels") && swa_kernels_from_name(v) >= 0) o->cfg.kernels = swa_kernels_from_name(v);
        else if (!strcmp(a, "--kv") && swa_kv_type_from_name(v) >= 0) o->cfg.kv_type = swa_kv_type_from_name(v);
        else usage_fail("bad flag or value: %s %s", a, v);
    }
    if (!o->model) usage_fail("-m MODEL is required");
    if (o->n_prompt < 0 || o->n_gen < 0 || o->n_prompt + o->n_gen == 0 || o->reps < 1 || o->reps > 64 ||
        o->cfg.n_threads < 0 || o->cfg.n_threads > 256)
        usage_fail("-p, -n must be >= 0 and not both 0, -r in 1..64, -t in 0..256");
    return 1;
}

int main(int argc, char **argv)
{
    options o;
    swa_model *m = NULL;
    swa_ctx *c = NULL;
    swa_error err;
    int32_t n_vocab;
    int k, r, max_b = 1;
    parse(argc, argv, &o);
    catch_interrupt();
    m = load_model_or_exit(o.model, o.no_mmap);
    n_vocab = swa_model_hparams(m)->n_vocab;
    for (k = 0; k < o.n_b; k++) max_b = o.b[k] > max_b ? o.b[k] : max_b;
    o.cfg.n_seq = max_b;
    o.cfg.n_batch = 512;
    if (!o.cfg.n_ctx) o.cfg.n_ctx = o.n_prompt + o.n_gen;
    if (swa_ctx_create(m, &o.cfg, &c, &err) != SWA_OK) fail("%s", err.msg);
    swa_ctx_set_abort(c, interrupt_abort, NULL);
    printf("model %s, %d threads, kernels %s, kv %s\n\n", o.model, swa_ctx_config_get(c).n_threads, swa_ctx_kernels(c),
           swa_kv_type_name(swa_ctx_config_get(c).kv_type));
    printf("|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |\n"
           "|-------|--------|------|--------|----------|----------|----------|----------|----------|----------|\n");
    stdout_flush();
    {
        double pp, tg;
        run_once(c, &o, 1, n_vocab, &pp, &tg);   /* warm-up: pages in, threads awake */
    }
    for (k = 0; k < o.n_b; k++) {
        double pp[64], tg[64], t_pp, t_tg;
        int B = o.b[k];
        for (r = 0; r < o.reps; r++) run_once(c, &o, B, n_vocab, &pp[r], &tg[r]);
        t_pp = median(pp, o.reps);
        t_tg = median(tg, o.reps);
        printf("| %5d | %6d | %4d | %6d | %8.3f | %8.2f | %8.3f | %8.2f | %8.3f | %8.2f |\n", o.n_prompt, o.n_gen, B,
               B * (o.n_prompt + o.n_gen), t_pp, t_pp > 0 ? B * o.n_prompt / t_pp : 0.0, t_tg,
               t_tg > 0 ? B * o.n_gen / t_tg : 0.0, t_pp + t_tg, B * (o.n_prompt + o.n_gen) / (t_pp + t_tg));
        stdout_flush();
    }
    swa_ctx_free(c);
    swa_model_free(m);
    return 0;
}
