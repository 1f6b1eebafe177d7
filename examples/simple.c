/* swa-simple: the smallest whole program on swa.h's API. Loads a model, continues "Once upon a time"
   by up to 100 sampled tokens, streams the text to stdout and stops at the end-of-sequence token.

   swa-simple [MODEL.gguf]       (default examples/models/swa-stories.gguf) */
#define SWA_IMPLEMENTATION
#include "swa.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "examples/models/swa-stories.gguf";
    swa_model *model = NULL;
    swa_ctx *ctx = NULL;
    swa_sampler *sampler = NULL;
    const swa_vocab *vocab;
    swa_sampler_config sc = swa_sampler_config_default();
    swa_decoder dec;
    swa_error err;
    const float *logits;
    int32_t tok[64];
    size_t n, i;
    char text[256];
    int ok = 0;

    sc.seed = 1234;   /* the same seed tells the same story */
    if (swa_model_load(path, &model, &err) != SWA_OK || swa_model_vocab(model, &vocab, &err) != SWA_OK ||
        swa_ctx_create(model, NULL, &ctx, &err) != SWA_OK ||
        swa_sampler_create(&sc, swa_vocab_size(vocab), &sampler, &err) != SWA_OK ||
        swa_tokenize(vocab, "Once upon a time", 16, SWA_TOKENIZE_ADD_BOS, tok, 64, &n, &err) != SWA_OK)
        goto done;
    swa_decoder_init(&dec, vocab);
    for (i = 0; i < n; i++)   /* the prompt through the decoder too, so the story's first space stays */
        fwrite(text, 1, swa_decoder_push(&dec, tok[i], text, sizeof text), stdout);
    for (i = 0; i < 100; i++, n = 1) {
        if (swa_ctx_eval(ctx, tok, n, &logits, &err) != SWA_OK) goto done;
        tok[0] = swa_sampler_sample(sampler, logits);
        if (tok[0] == swa_vocab_eos(vocab)) break;
        fwrite(text, 1, swa_decoder_push(&dec, tok[0], text, sizeof text), stdout);
    }
    fwrite(text, 1, swa_decoder_flush(&dec, text, sizeof text), stdout);
    putchar('\n');
    ok = 1;
done:
    if (!ok) fprintf(stderr, "swa-simple: %s\n", err.msg);
    swa_sampler_free(sampler);
    swa_ctx_free(ctx);
    swa_model_free(model);
    return ok ? 0 : 1;
}
