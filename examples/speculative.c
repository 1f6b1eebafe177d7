/* swa-speculative: prompt lookup on a windowed model, the recipe docs/speculative.md quotes.
   The story is generated greedily twice, plainly and with drafts looked up in the text so far
   and verified in one pass each; the program checks that both give the same tokens and prints
   the text and how many drafted tokens the model accepted.

   swa-speculative [MODEL.gguf]    (default examples/models/swa-stories.gguf) */
#define SWA_IMPLEMENTATION
#include "swa.h"

#include <stdio.h>
#include <string.h>

#define K 4          /* the longest draft */
#define N_GEN 96     /* tokens to generate */

/* The plain greedy continuation of the prompt: N_GEN tokens into want. */
static int plain(swa_model *model, const int32_t *prompt, size_t n_prompt, int32_t *want, swa_error *err)
{
    swa_ctx *ctx = NULL;
    const float *logits;
    int32_t tok = -1;
    int i, ok = swa_ctx_create(model, NULL, &ctx, err) == SWA_OK &&
                swa_ctx_eval(ctx, prompt, n_prompt, &logits, err) == SWA_OK;
    for (i = 0; ok && i < N_GEN; i++) {
        tok = want[i] = swa_argmax(logits, swa_model_hparams(model)->n_vocab);
        ok = swa_ctx_eval(ctx, &tok, 1, &logits, err) == SWA_OK;
    }
    swa_ctx_free(ctx);
    return ok;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "examples/models/swa-stories.gguf";
    const char *story = "Once upon a time, Tom had a red ball. Tom loved his red ball.";
    static int32_t prompt[256], hist[512], want[N_GEN];
    swa_model *model = NULL;
    const swa_vocab *vocab;
    swa_ctx *ctx = NULL;
    swa_spec *sp = NULL;
    swa_sampler *sampler = NULL;
    swa_sampler_config sc = swa_sampler_config_default();
    swa_error err;
    const float *logits;
    int32_t buf[K], out[K + 1], n_out, last, i, n_vocab, accepted = 0, drafted = 0;
    size_t n_prompt, n_hist;
    int ok = 0, more;
    char piece[256];
    swa_decoder dec;

    err.msg[0] = '\0';
    sc.temperature = 0;                                     /* greedy: the same text as plain */
    if (swa_model_load(path, &model, &err) != SWA_OK || swa_model_vocab(model, &vocab, &err) != SWA_OK ||
        swa_tokenize(vocab, story, strlen(story), SWA_TOKENIZE_ADD_BOS, prompt, 256, &n_prompt, &err) != SWA_OK ||
        !plain(model, prompt, n_prompt, want, &err))
        goto done;
    n_vocab = swa_vocab_size(vocab);
    memcpy(hist, prompt, n_prompt * sizeof *hist);
    if (swa_sampler_create(&sc, n_vocab, &sampler, &err) != SWA_OK) goto done;

    /* speculative: begin */
    swa_ctx_config cfg = swa_ctx_config_default(model);
    cfg.n_rewind = K - 1;                                   /* rewind room for a draft of K */
    swa_ctx_create(model, &cfg, &ctx, &err);
    swa_spec_create(n_vocab, K, &sp, &err);
    swa_ctx_eval(ctx, prompt, n_prompt, &logits, &err);    /* hist = prompt, n_hist = n_prompt */
    n_hist = n_prompt;
    last = hist[n_hist++] = swa_sampler_sample(sampler, logits);
    more = 1;
    while (more) {
        swa_draft d = {0};
        d.token = buf;
        swa_spec_lookup(hist, n_hist, 1, 4, buf, K, &d.n, &err);   /* or swa_drafter_draft */
        if (swa_spec_verify(sp, ctx, 0, sampler, last, &d, out, &n_out, &err) != SWA_OK) goto done;
        for (i = 0; i < n_out; i++) hist[n_hist++] = out[i];       /* print them; stop at EOS */
        last = out[n_out - 1];
        drafted += d.n, accepted += n_out - 1;
        more = n_hist < n_prompt + N_GEN;
    }
    /* speculative: end */

    for (i = 0; i < N_GEN; i++)
        if (hist[n_prompt + (size_t)i] != want[i]) {
            fprintf(stderr, "swa-speculative: token %d is %d with drafts, %d without\n", i, hist[n_prompt + (size_t)i], want[i]);
            goto done;
        }
    swa_decoder_init(&dec, vocab);
    for (i = 0; i < N_GEN; i++) fwrite(piece, 1, swa_decoder_push(&dec, hist[n_prompt + (size_t)i], piece, sizeof piece), stdout);
    fwrite(piece, 1, swa_decoder_flush(&dec, piece, sizeof piece), stdout);
    printf("\nthe same %d tokens as without drafts; %d of %d drafted tokens accepted\n", N_GEN, accepted, drafted);
    ok = 1;
done:
    if (!ok && err.msg[0]) fprintf(stderr, "swa-speculative: %s\n", err.msg);
    swa_spec_free(sp);
    swa_sampler_free(sampler);
    swa_ctx_free(ctx);
    swa_model_free(model);
    return ok ? 0 : 1;
}
