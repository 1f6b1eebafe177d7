/* swa-generate: evaluate a prompt of token ids and continue it greedily with swa.h.

   swa-generate -m MODEL.gguf --ids 1,2,3 [-n N] [-b N] [-w N] [-c N] [--dump-logits FILE]

   The prompt is used exactly as given (no BOS is added). Generated ids go to stdout, one line;
   a model summary and timings go to stderr. */
#define _POSIX_C_SOURCE 200809L
#define SWA_IMPLEMENTATION
#include "swa.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct options {
    const char *model;
    const char *ids;
    const char *dump_logits;
    long n_predict;
    swa_ctx_config cfg;
} options;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: swa-generate -m MODEL.gguf --ids 1,2,3 [options]\n"
            "  -m FILE             GGUF model (architecture llama)\n"
            "  --ids LIST          prompt as comma-separated token ids, used as given\n"
            "  -n N                tokens to generate greedily (default 16; 0 = prompt only)\n"
            "  -b N                prompt tokens per forward pass (default 64)\n"
            "  -w N                sliding window for every layer (default: the model's)\n"
            "  -c N                cache size for layers without a window (default min(trained, 4096))\n"
            "  --dump-logits FILE  write float32 logits, one row of n_vocab per evaluated position\n"
            "  -h                  this help\n");
}

static int parse_long(const char *flag, const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "swa-generate: %s wants a number in %ld..%ld, got \"%s\"\n", flag, lo, hi, s);
        return 0;
    }
    *out = v;
    return 1;
}

static int parse_args(int argc, char **argv, options *o)
{
    int i;
    long v;
    memset(o, 0, sizeof *o);
    o->n_predict = 16;
    for (i = 1; i < argc; i++) {
        static const char *const takes_value[] = {"-m", "--ids", "--dump-logits", "-n", "-b", "-w", "-c"};
        const char *a = argv[i], *val;
        size_t k;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
        for (k = 0; k < sizeof takes_value / sizeof takes_value[0] && strcmp(a, takes_value[k]); k++) {}
        if (k == sizeof takes_value / sizeof takes_value[0]) { fprintf(stderr, "swa-generate: unknown flag %s\n", a); return 0; }
        if (i + 1 >= argc) { fprintf(stderr, "swa-generate: %s needs a value\n", a); return 0; }
        val = argv[++i];
        if (!strcmp(a, "-m")) o->model = val;
        else if (!strcmp(a, "--ids")) o->ids = val;
        else if (!strcmp(a, "--dump-logits")) o->dump_logits = val;
        else if (!strcmp(a, "-n")) { if (!parse_long(a, val, 0, 1L << 40, &o->n_predict)) return 0; }
        else if (!strcmp(a, "-b")) { if (!parse_long(a, val, 1, 1 << 20, &v)) return 0; o->cfg.n_batch = (int32_t)v; }
        else if (!strcmp(a, "-w")) { if (!parse_long(a, val, 1, INT32_MAX, &v)) return 0; o->cfg.window = (int32_t)v; }
        else if (!strcmp(a, "-c")) { if (!parse_long(a, val, 1, INT32_MAX, &v)) return 0; o->cfg.n_ctx = (int32_t)v; }
    }
    if (!o->model || !o->ids) { fprintf(stderr, "swa-generate: -m and --ids are required\n"); return 0; }
    return 1;
}

/* "1,2,3" -> array; returns the count, 0 on a malformed list. */
static size_t parse_ids(const char *s, int32_t **out)
{
    size_t n = 1, k = 0;
    const char *p;
    for (p = s; *p; p++) n += *p == ',';
    *out = (int32_t *)malloc(n * sizeof(int32_t));
    if (!*out) return 0;
    for (p = s; k < n; k++) {
        char *end;
        long v;
        errno = 0;
        v = strtol(p, &end, 10);
        if (errno || end == p || v < INT32_MIN || v > INT32_MAX || (*end != ',' && *end != '\0')) {
            fprintf(stderr, "swa-generate: --ids: bad token id at \"%s\"\n", p);
            return 0;
        }
        (*out)[k] = (int32_t)v;
        p = end + (*end == ',');
    }
    return n;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_summary(const swa_model *m, const swa_ctx *c)
{
    const swa_hparams *hp = swa_model_hparams(m);
    swa_ctx_config cfg = swa_ctx_config_get(c);
    fprintf(stderr, "model: %d layers, %d heads (%d kv), embd %d, ff %d, vocab %d, %s; window %d%s; cache %.2f MiB\n",
            hp->n_layer, hp->n_head, hp->n_kv_head, hp->n_embd, hp->n_ff, hp->n_vocab,
            swa_type_name(hp->weight_type), swa_ctx_window(c, 0) ? swa_ctx_window(c, 0) : cfg.n_ctx,
            swa_ctx_window(c, 0) ? "" : " (full attention)", (double)swa_ctx_cache_bytes(c) / (1024.0 * 1024.0));
}

int main(int argc, char **argv)
{
    options o;
    swa_model *model = NULL;
    swa_ctx *ctx = NULL;
    swa_error err;
    int32_t *prompt = NULL, tok;
    float *logits_all = NULL;
    const float *logits;
    size_t n_prompt, V;
    FILE *dump = NULL;
    double t0, t1, t2;
    long i;
    int rc = 1;

    if (!parse_args(argc, argv, &o)) { usage(stderr); return 2; }
    if (!(n_prompt = parse_ids(o.ids, &prompt))) { usage(stderr); free(prompt); return 2; }
    if (swa_model_load(o.model, &model, &err) != SWA_OK ||
        swa_ctx_create(model, &o.cfg, &ctx, &err) != SWA_OK) {
        fprintf(stderr, "swa-generate: %s\n", err.msg);
        goto done;
    }
    print_summary(model, ctx);
    V = (size_t)swa_model_hparams(model)->n_vocab;
    if (o.dump_logits && !(dump = fopen(o.dump_logits, "wb"))) {
        fprintf(stderr, "swa-generate: cannot open %s: %s\n", o.dump_logits, strerror(errno));
        goto done;
    }
    t0 = now_seconds();
    if (dump) {
        if (!(logits_all = (float *)malloc(n_prompt * V * sizeof(float)))) { fprintf(stderr, "swa-generate: out of memory\n"); goto done; }
        if (swa_ctx_eval_all(ctx, prompt, n_prompt, logits_all, &err) != SWA_OK) goto eval_failed;
        fwrite(logits_all, sizeof(float), n_prompt * V, dump);
        logits = logits_all + (n_prompt - 1) * V;
    } else if (swa_ctx_eval(ctx, prompt, n_prompt, &logits, &err) != SWA_OK) {
        goto eval_failed;
    }
    t1 = now_seconds();
    for (i = 0; i < o.n_predict; i++) {
        tok = swa_argmax(logits, (int64_t)V);
        printf("%s%d", i ? " " : "", tok);
        fflush(stdout);
        if (i + 1 == o.n_predict) break;     /* the last token needs no evaluation */
        if (swa_ctx_eval(ctx, &tok, 1, &logits, &err) != SWA_OK) goto eval_failed;
        if (dump) fwrite(logits, sizeof(float), V, dump);
    }
    if (o.n_predict) printf("\n");
    t2 = now_seconds();
    fprintf(stderr, "prompt: %zu tokens, %.1f tokens/s; generation: %ld tokens, %.1f tokens/s\n", n_prompt,
            (double)n_prompt / (t1 - t0), o.n_predict, o.n_predict > 1 ? (double)(o.n_predict - 1) / (t2 - t1) : 0.0);
    rc = 0;
    goto done;
eval_failed:
    fprintf(stderr, "swa-generate: %s\n", err.msg);
done:
    if (dump && fclose(dump) != 0 && rc == 0) { fprintf(stderr, "swa-generate: writing logits failed\n"); rc = 1; }
    free(logits_all);
    free(prompt);
    swa_ctx_free(ctx);
    swa_model_free(model);
    return rc;
}
