/* swa-control: the controls around an evaluation. A load that reports its progress; a long
   prompt stopped from another thread through the abort callback, and what it leaves; the
   thread count changed on a live context; the same text embedded twice beside a conversation.
   docs/api.md quotes it. POSIX threads and C11 atomics.

   swa-control [MODEL.gguf]       (default examples/models/swa-stories.gguf) */
#define _POSIX_C_SOURCE 200809L   /* nanosleep */
#define SWA_IMPLEMENTATION
#include "swa.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call) do { if ((call) != SWA_OK) goto done; } while (0)

/* control: begin */
static int stop_now(void *flag) { return atomic_load((atomic_int *)flag); }   /* set by another thread */
static int show(float fraction, void *data) { (void)data; fprintf(stderr, "\rloading %3.0f%%", 100 * fraction); return 0; }
/* control: end */

static void *stop_soon(void *flag)   /* the other thread: says stop after 0.5 s */
{
    struct timespec t = {0, 500 * 1000 * 1000};
    nanosleep(&t, NULL);
    atomic_store((atomic_int *)flag, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "examples/models/swa-stories.gguf";
    swa_model *model = NULL;
    swa_ctx *ctx = NULL;
    const swa_vocab *vocab;
    swa_error err;
    int32_t *tok = NULL;
    float *emb = NULL, *again = NULL;
    pthread_t stopper;
    atomic_int flag = 0;
    size_t n = 20000, i, n_text;
    int ok = 0;

    err.msg[0] = '\0';
    /* control: begin */
    swa_model_params mp = swa_model_params_default();     /* mapped (mp.resident = 0) */
    mp.progress = show;                                    /* returning nonzero from show cancels */
    CHECK(swa_model_load_with(path, &mp, &model, &err));
    /* control: end */
    fprintf(stderr, "\n");
    CHECK(swa_model_vocab(model, &vocab, &err));
    swa_ctx_config cfg = swa_ctx_config_default(model);
    cfg.n_seq = 2;                                         /* a conversation and embeddings */
    cfg.window = 64;                                       /* so that a long prompt fits */
    CHECK(swa_ctx_create(model, &cfg, &ctx, &err));
    tok = malloc(n * sizeof *tok);
    if (!tok) goto done;
    for (i = 0; i < n; i++) tok[i] = (int32_t)(1 + i % 100);   /* a long prompt */

    /* control: begin */
    swa_ctx_set_abort(ctx, stop_now, &flag);               /* asked before each layer */
    pthread_create(&stopper, NULL, stop_soon, &flag);
    swa_status s = swa_ctx_eval(ctx, tok, n, NULL, &err);
    if (s == SWA_ERR_ABORTED)                              /* whole chunks kept, the rest untouched */
        printf("stopped after %lld of %llu tokens\n", (long long)swa_seq_pos(ctx, 0), (unsigned long long)n);
    /* control: end */
    pthread_join(stopper, NULL);
    if (s != SWA_ERR_ABORTED || swa_seq_pos(ctx, 0) % cfg.n_batch != 0) {
        fprintf(stderr, "swa-control: the evaluation was not stopped at a chunk's end (status %d)\n", (int)s);
        goto done;
    }
    atomic_store(&flag, 0);
    CHECK(swa_ctx_eval(ctx, tok, 10, NULL, &err));         /* and it goes on from there */

    /* control: begin */
    CHECK(swa_ctx_set_threads(ctx, 1, &err));              /* same logits, fewer cores */
    int32_t d = swa_model_hparams(model)->n_embd;
    emb = malloc((size_t)d * sizeof *emb);                 /* n_embd floats */
    again = malloc((size_t)d * sizeof *again);
    if (!emb || !again) goto done;
    int32_t text[64];
    CHECK(swa_tokenize(vocab, "A cat sat on the mat.", 21, SWA_TOKENIZE_ADD_BOS, text, 64, &n_text, &err));
    CHECK(swa_ctx_embed(ctx, 1, text, n_text, SWA_POOL_MEAN, 1, emb, &err));     /* on sequence 1, */
    CHECK(swa_ctx_embed(ctx, 1, text, n_text, SWA_POOL_MEAN, 1, again, &err));   /* from its start */
    /* control: end */
    if (memcmp(emb, again, (size_t)d * sizeof *emb) != 0) {
        fprintf(stderr, "swa-control: the same text embedded twice differs\n");
        goto done;
    }
    printf("embedding of %llu tokens, %d floats, the same twice; the conversation still at %lld\n",
           (unsigned long long)n_text, d, (long long)swa_seq_pos(ctx, 0));
    ok = 1;
done:
    if (!ok && err.msg[0]) fprintf(stderr, "swa-control: %s\n", err.msg);
    free(again);
    free(emb);
    free(tok);
    swa_ctx_free(ctx);
    swa_model_free(model);
    return ok ? 0 : 1;
}
