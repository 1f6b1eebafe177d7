/* swa-sequences: several sequences in one context. A prompt is evaluated once on sequence 0 and
   forked to sequence 1; then both are continued greedily, a token each per batch, in one pass
   over the weights; last, sequence 1 is saved to a snapshot and restored over sequence 0, and
   the two give the same logits. Everything is sized from the model. docs/api.md quotes it.

   swa-sequences [MODEL.gguf]       (default examples/models/swa-stories.gguf) */
#define SWA_IMPLEMENTATION
#include "swa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call) do { if ((call) != SWA_OK) goto done; } while (0)

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "examples/models/swa-stories.gguf";
    swa_model *model = NULL;
    swa_ctx *ctx = NULL;
    const swa_vocab *vocab;
    swa_error err;
    float *logits = NULL, *after = NULL;
    void *snap = NULL;
    char text[2][1024] = {"", ""};
    int ok = 0, i, s;

    err.msg[0] = '\0';
    CHECK(swa_model_load(path, &model, &err));
    CHECK(swa_model_vocab(model, &vocab, &err));

    /* sequences: begin */
    swa_ctx_config cfg = swa_ctx_config_default(model);
    cfg.n_seq = 2;
    size_t windowed, global;                                /* what the context will cost */
    swa_ctx_cache_split(model, &cfg, &windowed, &global);
    printf("cache: %zu windowed + %zu global bytes\n", windowed, global);
    CHECK(swa_ctx_create(model, &cfg, &ctx, &err));        /* cfg.n_seq = 2, as above */
    int32_t n_vocab = swa_vocab_size(vocab);
    logits = malloc(2 * (size_t)n_vocab * sizeof *logits);   /* [2][n_vocab]: one row each */
    if (!logits) goto done;

    int32_t prompt[64];
    size_t n;
    CHECK(swa_tokenize(vocab, "Once upon a time", 16, SWA_TOKENIZE_ADD_BOS, prompt, 64, &n, &err));
    const float *first;
    CHECK(swa_ctx_eval(ctx, prompt, n, &first, &err));      /* the shared prompt, once */
    CHECK(swa_seq_copy(ctx, 0, 1, &err));                   /* sequence 1 starts from it too */

    int32_t tok[2], seq[2] = {0, 1};                        /* the two likeliest next tokens */
    tok[0] = swa_argmax(first, n_vocab);
    for (tok[1] = tok[0] ? 0 : 1, i = 0; i < n_vocab; i++)
        if (i != tok[0] && first[i] > first[tok[1]]) tok[1] = i;
    swa_batch batch = {2, tok, seq, NULL};                  /* NULL: each sequence's last logits */
    for (i = 0; i < 24; i++) {
        CHECK(swa_ctx_decode(ctx, &batch, logits, &err));       /* both in one pass over the weights */
        for (s = 0; s < 2; s++) {
            size_t len = strlen(text[s]);
            swa_token_to_text(vocab, tok[s], text[s] + len, sizeof text[s] - len - 1);
            tok[s] = swa_argmax(logits + (size_t)s * n_vocab, n_vocab);
        }
    }

    size_t size = swa_state_size(ctx, 1);                   /* fixed by the window, not the length */
    snap = malloc(size);
    if (!snap) goto done;
    CHECK(swa_state_save(ctx, 1, snap, size, NULL, &err));  /* or swa_state_save_file(ctx, 1, path, &err) */
    CHECK(swa_state_load(ctx, 0, snap, size, &err));        /* sequence 0 is now a copy of 1 */
    /* sequences: end */

    tok[0] = tok[1];                                        /* the same token on both */
    after = malloc(2 * (size_t)n_vocab * sizeof *after);
    if (!after) goto done;
    CHECK(swa_ctx_decode(ctx, &batch, after, &err));
    for (s = 0; s < 2; s++) printf("sequence %d: Once upon a time%s\n", s, text[s]);
    if (memcmp(after, after + n_vocab, (size_t)n_vocab * sizeof *after) != 0) {
        fprintf(stderr, "swa-sequences: the restored sequence differs from the one saved\n");
        goto done;
    }
    printf("snapshot of %llu bytes restored: both sequences give the same logits\n", (unsigned long long)size);
    ok = 1;
done:
    if (!ok && err.msg[0]) fprintf(stderr, "swa-sequences: %s\n", err.msg);
    free(after);
    free(snap);
    free(logits);
    swa_ctx_free(ctx);
    swa_model_free(model);
    return ok ? 0 : 1;
}
