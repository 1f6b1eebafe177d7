/* swa-chat: one turn of a chat. A system and a user message are written in the model's chat
   template (chatml when the file has none we know), tokenized as the file asks, and answered
   greedily until the template's end-of-turn token or EOS; first, the file's own Jinja template
   renders a message (to stderr). docs/architectures.md, docs/tokenizer.md and docs/chat.md
   quote it.

   swa-chat [MODEL.gguf [QUESTION]]    (default examples/models/swa-stories.gguf) */
#define SWA_IMPLEMENTATION
#include "swa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call) do { if ((call) != SWA_OK) goto done; } while (0)

/* The file's chat template rendered by the Jinja engine, as transformers renders it. */
static void render_jinja(const swa_model *model)
{
    /* jinja: begin */
    swa_jinja *t;
    swa_jinja_chat chat = {0};
    char *text;
    size_t len;
    swa_error err;
    if (swa_jinja_of(swa_model_gguf(model), &t, &err) != SWA_OK) return;   /* or swa_jinja_parse(src, n, &t, &err) */
    chat.messages = "[{\"role\": \"user\", \"content\": \"Hello!\"}]";
    chat.tools = NULL;                      /* a JSON array of tools, or NULL for None */
    chat.add_generation_prompt = 1;
    chat.bos_token = "<s>";                 /* the vocabulary's pieces; NULL: undefined */
    chat.eos_token = "</s>";
    chat.kwargs = "{\"enable_thinking\": false}";   /* further variables, or NULL */
    if (swa_jinja_apply(t, &chat, &text, &len, &err) != SWA_OK) fprintf(stderr, "%s\n", err.msg);
    else { fwrite(text, 1, len, stderr); swa_jinja_text_free(text); }
    swa_jinja_free(t);
    /* jinja: end */
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "examples/models/swa-stories.gguf";
    const char *question = argc > 2 ? argv[2] : "Tell me a story about a cat.";
    swa_model *model = NULL;
    swa_ctx *ctx = NULL;
    const swa_vocab *vocab;
    swa_decoder dec;
    swa_error err;
    const float *logits;
    char *text = NULL, piece[256];
    int32_t *tok = NULL;
    size_t len, n, cap, i;
    int ok = 0;

    err.msg[0] = '\0';
    CHECK(swa_model_load(path, &model, &err));
    CHECK(swa_model_vocab(model, &vocab, &err));
    CHECK(swa_ctx_create(model, NULL, &ctx, &err));
    render_jinja(model);

    /* chat: begin */
    const swa_chat_template *t;
    swa_chat_message msgs[] = {{"system", "You are brief."}, {"user", question}};
    if (swa_model_chat_template(model, &t, &err) != SWA_OK)      /* none, or not a family we know */
        t = swa_chat_template_by_name("chatml");
    swa_chat_format(t, msgs, 2, 1, NULL, 0, &len, &err);         /* the length, to allocate */
    text = malloc(len + 1);
    if (!text) goto done;
    CHECK(swa_chat_format(t, msgs, 2, 1, text, len + 1, &len, &err));
    /* chat: end */

    /* tokenize: begin */
    int flags = SWA_TOKENIZE_SPECIAL;                            /* the template's markers are tokens */
    flags |= swa_vocab_add_bos(vocab) ? SWA_TOKENIZE_ADD_BOS : 0;   /* BOS or EOS as the file asks */
    flags |= swa_vocab_add_eos(vocab) ? SWA_TOKENIZE_ADD_EOS : 0;
    swa_tokenize(vocab, text, len, flags, NULL, 0, &cap, &err);  /* the count, to allocate */
    tok = malloc((cap + 1) * sizeof *tok);
    if (!tok) goto done;
    CHECK(swa_tokenize(vocab, text, len, flags, tok, cap, &n, &err));
    /* tokenize: end */

    int32_t eot = swa_chat_template_eot_token(t, vocab);         /* -1: the vocabulary lacks it */
    fprintf(stderr, "template %s, %llu prompt tokens, the turn ends at %s\n", swa_chat_template_name(t),
            (unsigned long long)n, eot >= 0 ? swa_chat_template_eot(t) : "EOS only");
    swa_decoder_init(&dec, vocab);
    for (i = 0; i < 40; i++, n = 1) {
        CHECK(swa_ctx_eval(ctx, tok, n, &logits, &err));
        tok[0] = swa_argmax(logits, swa_vocab_size(vocab));
        if (tok[0] == eot || tok[0] == swa_vocab_eos(vocab)) break;
        fwrite(piece, 1, swa_decoder_push(&dec, tok[0], piece, sizeof piece), stdout);
    }
    fwrite(piece, 1, swa_decoder_flush(&dec, piece, sizeof piece), stdout);
    putchar('\n');
    ok = 1;
done:
    if (!ok && err.msg[0]) fprintf(stderr, "swa-chat: %s\n", err.msg);
    free(tok);
    free(text);
    swa_ctx_free(ctx);
    swa_model_free(model);
    return ok ? 0 : 1;
}
