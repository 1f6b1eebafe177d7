/* With SWA_NO_THREADS the thread pool compiles out: a context asked for several threads
   computes on the caller's thread, with the logits one thread gives. */
#define SWA_NO_THREADS
#define SWA_IMPLEMENTATION
#include "swa.h"
#include <stdio.h>
#include <string.h>

static int eval_logits(const swa_model *m, int n_threads, float *out)
{
    const int32_t tokens[] = {1, 10, 20, 30, 40};
    swa_ctx_config cfg = swa_ctx_config_default(m);
    swa_ctx *c = NULL;
    const float *logits;
    cfg.n_threads = n_threads;
    if (swa_ctx_create(m, &cfg, &c, NULL) != SWA_OK) return 0;
    if (swa_ctx_eval(c, tokens, 5, &logits, NULL) != SWA_OK) { swa_ctx_free(c); return 0; }
    memcpy(out, logits, (size_t)swa_model_hparams(m)->n_vocab * sizeof(float));
    swa_ctx_free(c);
    return 1;
}

int main(void)
{
    static float one[32000], three[32000];
    swa_model *m = NULL;
    swa_error err;
    if (swa_model_load("examples/models/swa-stories.gguf", &m, &err) != SWA_OK) {
        printf("compile_no_threads: %s\n", err.msg);
        return 1;
    }
    if (swa_model_hparams(m)->n_vocab > 32000 || !eval_logits(m, 1, one) || !eval_logits(m, 3, three) ||
        memcmp(one, three, (size_t)swa_model_hparams(m)->n_vocab * sizeof(float)) != 0) {
        printf("compile_no_threads: 3 threads without a pool did not give 1 thread's logits\n");
        swa_model_free(m);
        return 1;
    }
    swa_model_free(m);
    printf("compile_no_threads: ok\n");
    return 0;
}
