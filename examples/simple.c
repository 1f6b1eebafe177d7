/* swa-simple: the smallest whole program on swa.h's API, and the README's example, line for
   line. Loads a model, continues "Once upon a time" by up to 100 sampled tokens, streams the
   text to stdout and stops at the end-of-sequence token.

   swa-simple [MODEL.gguf]       (default examples/models/swa-stories.gguf) */
#define SWA_IMPLEMENTATION          /* in exactly one .c file */
#include "swa.h"
#include <stdio.h>

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "examples/models/swa-stories.gguf";
    swa_model *model = NULL; const swa_vocab *vocab; swa_ctx *ctx = NULL; swa_sampler *sampler = NULL;
    swa_error err; swa_decoder dec; const float *logits; int32_t tok[64]; size_t n;
    swa_sampler_config sc = swa_sampler_config_default();  /* temperature 0.8, top-k 40, ... */
    char text[64];
    sc.seed = 1234;                                        /* any field, by name */
    if (swa_model_load(path, &model, &err) || swa_model_vocab(model, &vocab, &err) ||
        swa_ctx_create(model, NULL, &ctx, &err) ||
        swa_sampler_create(&sc, swa_vocab_size(vocab), &sampler, &err) ||
        swa_tokenize(vocab, "Once upon a time", 16, SWA_TOKENIZE_ADD_BOS, tok, 64, &n, &err)) {
        fprintf(stderr, "%s\n", err.msg);                  /* what failed, and why */
        return 1;
    }
    swa_decoder_init(&dec, vocab);
    for (size_t i = 0; i < n; i++)                         /* the prompt, through the decoder too */
        fwrite(text, 1, swa_decoder_push(&dec, tok[i], text, sizeof text), stdout);
    for (int i = 0; i < 100 && swa_ctx_eval(ctx, tok, n, &logits, &err) == SWA_OK; i++, n = 1) {
        tok[0] = swa_sampler_sample(sampler, logits);      /* and remembered for the penalty */
        if (tok[0] == swa_vocab_eos(vocab)) break;
        fwrite(text, 1, swa_decoder_push(&dec, tok[0], text, sizeof text), stdout);
    }
    fwrite(text, 1, swa_decoder_flush(&dec, text, sizeof text), stdout);
    putchar('\n');
    swa_sampler_free(sampler); swa_ctx_free(ctx); swa_model_free(model);
    return 0;
}
