/* With SWA_NO_SAMPLER the sampler compiles out (this file's own static swa_sampler_create would
   clash with its declaration): the tokenizer still turns text into ids and back, and
   swa_argmax picks greedily. */
#define SWA_NO_SAMPLER
#define SWA_IMPLEMENTATION
#include "swa.h"
#include <stdio.h>
#include <string.h>

static int swa_sampler_create(void) { return 0; }

int main(void)
{
    const swa_vocab *v;
    const float *logits;
    swa_model *m = NULL;
    swa_ctx *c = NULL;
    swa_error err;
    int32_t ids[64];
    size_t n = 0, i, len = 0;
    char text[256];
    if (swa_model_load("examples/models/swa-stories.gguf", &m, &err) != SWA_OK || swa_model_vocab(m, &v, &err) != SWA_OK ||
        swa_tokenize(v, "Once upon a time", 16, SWA_TOKENIZE_ADD_BOS, ids, 64, &n, &err) != SWA_OK) {
        printf("compile_no_sampler: %s\n", err.msg);
        return 1;
    }
    for (i = 1; i < n; i++) len += swa_token_to_text(v, ids[i], text + len, sizeof text - len);
    if (len != 17 || memcmp(text, " Once upon a time", 17) != 0) {
        printf("compile_no_sampler: the text does not come back\n");
        return 1;
    }
    if (swa_ctx_create(m, NULL, &c, &err) != SWA_OK || swa_ctx_eval(c, ids, n, &logits, &err) != SWA_OK) {
        printf("compile_no_sampler: %s\n", err.msg);
        return 1;
    }
    printf("compile_no_sampler: ok (next id %d)\n", (int)swa_argmax(logits, swa_model_hparams(m)->n_vocab) + swa_sampler_create());
    swa_ctx_free(c);
    swa_model_free(m);
    return 0;
}
