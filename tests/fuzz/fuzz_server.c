/* libFuzzer harness for swa-server's request path without HTTP: any bytes as the body of a chat
   request and of a completion request, parsed (JSON, fields, messages formatted with the chat
   template, tokenized) against the shipped model's vocabulary (SWA_FUZZ_VOCAB) and limits. A
   parse either fails with a 4xx/5xx status and a message, or gives a prompt that fits the
   context, token ids in the vocabulary, and choices within the slots. */
#include "swa.h"
#include "examples/server_request.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static swa_gguf *g;
static swa_vocab *v;
static const swa_chat_template *tmpl;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *path = getenv("SWA_FUZZ_VOCAB");
    (void)argc;
    (void)argv;
    if (!path || swa_gguf_open(path, &g, NULL) != SWA_OK || swa_vocab_load(g, &v, NULL) != SWA_OK) {
        fprintf(stderr, "fuzz_server: set SWA_FUZZ_VOCAB to a GGUF file with a vocabulary\n");
        exit(1);
    }
    tmpl = swa_chat_template_by_name("chatml");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    srv_limits lim;
    int kind;
    lim.vocab = v;
    lim.n_ctx = 256;
    lim.n_slots = 4;
    for (kind = 0; kind <= 1; kind++) {
        srv_request r;
        srv_error err;
        size_t i;
        lim.tmpl = size && (data[0] & 1) ? tmpl : swa_chat_template_by_name("llama2");
        if (srv_parse_request((const char *)data, size, kind, &lim, &r, &err)) {
            if (err.status < 400 || err.status > 599 || !err.message[0] || strlen(err.message) >= sizeof err.message) abort();
            continue;
        }
        if (r.n_prompt == 0 || r.n_prompt >= (size_t)lim.n_ctx || r.n_choices < 1 || r.n_choices > lim.n_slots ||
            r.n_stop > SRV_MAX_STOP || r.top_logprobs < 0 || r.top_logprobs > SRV_MAX_TOP_LOGPROBS)
            abort();
        for (i = 0; i < r.n_prompt; i++)
            if (r.prompt[i] < 0 || r.prompt[i] >= swa_vocab_size(v)) abort();
        srv_request_free(&r);
    }
    {   /* the UTF-8 helpers on the raw bytes */
        size_t k = srv_utf8_complete((const char *)data, size);
        if (k > size) abort();
        (void)srv_utf8_valid((const char *)data, size);
    }
    return 0;
}
