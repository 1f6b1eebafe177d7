/* With SWA_NO_TOKENIZER the tokenizer compiles out: a model loads without its vocabulary (and
   says why), evaluates ids and picks the next one; the tokenize calls are not even declared
   (this file's own static swa_tokenize would clash with the library's declaration). */
#define SWA_NO_TOKENIZER
#define SWA_IMPLEMENTATION
#include "swa.h"
#include <stdio.h>
#include <string.h>

static int swa_tokenize(void) { return 0; }

int main(void)
{
    const int32_t tokens[] = {1, 10, 20, 30, 40};
    const swa_vocab *v = NULL;
    const float *logits;
    swa_model *m = NULL;
    swa_ctx *c = NULL;
    swa_error err;
    int32_t next;
    if (swa_model_load("examples/models/swa-stories.gguf", &m, &err) != SWA_OK) {
        printf("compile_no_tokenizer: %s\n", err.msg);
        return 1;
    }
    if (swa_model_vocab(m, &v, &err) == SWA_OK || !strstr(err.msg, "SWA_NO_TOKENIZER")) {
        printf("compile_no_tokenizer: the model has a vocabulary, or does not say why not\n");
        return 1;
    }
    if (swa_ctx_create(m, NULL, &c, &err) != SWA_OK || swa_ctx_eval(c, tokens, 5, &logits, &err) != SWA_OK) {
        printf("compile_no_tokenizer: %s\n", err.msg);
        return 1;
    }
    next = swa_argmax(logits, swa_model_hparams(m)->n_vocab);
    swa_ctx_free(c);
    swa_model_free(m);
    if (next < 0) return 1;
    printf("compile_no_tokenizer: ok (next id %d)\n", (int)next + swa_tokenize());
    return 0;
}
