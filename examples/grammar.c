/* swa-grammar: a GBNF grammar checks a text, then constrains a story (docs/grammar.md).

   swa-grammar [MODEL.gguf]

   Parses a grammar of short sentences, checks two texts against it, then samples a sentence
   from the model that the grammar allows, and checks it too. */
#define SWA_IMPLEMENTATION
#include "swa.h"
#include <stdio.h>
#include <string.h>

static const char grammar_text[] = "root ::= \" \" word (\" \" word){2,6} \".\"\nword ::= [a-z]{1,10}\n";

/* Whether input matches g, said on stdout. */
static int check(const swa_grammar *g, const char *input, size_t n)
{
    swa_error err;
    size_t where;
    if (swa_grammar_match(g, input, n, &where, &err) == SWA_ERR_NO_MATCH) {
        printf("stops matching at byte %zu\n", where);                               /* n: ended too early */
        return 0;
    }
    printf("\"%.*s\" matches\n", (int)n, input);
    return 1;
}

/* A sentence the grammar allows, sampled after the prompt; its text in out. */
static size_t story(swa_ctx *ctx, const swa_vocab *vocab, swa_sampler *sampler, const swa_grammar *g, char *out,
                    size_t cap)
{
    swa_error err;
    int32_t tok[64];
    size_t n, len = 0;
    const float *logits;
    swa_sampler_set_grammar(sampler, g, vocab, &err);   /* NULL g detaches */
    if (swa_tokenize(vocab, "Once upon a time", 16, SWA_TOKENIZE_ADD_BOS, tok, 64, &n, &err) != SWA_OK) return 0;
    for (;;) {
        if (swa_ctx_eval(ctx, tok, n, &logits, &err) != SWA_OK) break;
        n = 1;
        tok[0] = swa_sampler_sample(sampler, logits);
        if (tok[0] == swa_vocab_eos(vocab)) break;        /* the grammar is complete, or EOS came where it could end */
        len += swa_token_to_text(vocab, tok[0], out + len, cap - len);
    }
    if (swa_sampler_status(sampler, &err) != SWA_OK) puts(err.msg);   /* why it stopped, if not complete */
    return len < cap ? len : cap;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "examples/models/swa-stories.gguf", *text = grammar_text;
    size_t len = strlen(grammar_text), n;
    swa_grammar *g;
    swa_error err;
    swa_model *model = NULL;
    const swa_vocab *vocab;
    swa_ctx *ctx = NULL;
    swa_sampler *sampler = NULL;
    swa_sampler_config sc = swa_sampler_config_default();
    char out[1024];
    int ok;
    if (swa_grammar_parse(text, len, NULL, &g, &err) != SWA_OK) puts(err.msg);      /* NULL: start at root */
    if (err.code != SWA_OK) return 1;
    ok = check(g, " the cat sat.", 13) && !check(g, " the cat", 8);
    sc.seed = 7;
    if (swa_model_load(path, &model, &err) || swa_model_vocab(model, &vocab, &err) ||
        swa_ctx_create(model, NULL, &ctx, &err) || swa_sampler_create(&sc, swa_vocab_size(vocab), &sampler, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    n = story(ctx, vocab, sampler, g, out, sizeof out);
    ok = ok && check(g, out, n);
    swa_sampler_free(sampler);
    swa_ctx_free(ctx);
    swa_model_free(model);
    swa_grammar_free(g);
    return ok ? 0 : 1;
}
