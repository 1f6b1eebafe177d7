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
static swa_jinja *jinja;

/* A ChatML template with tools and reasoning, so that the Jinja path is fuzzed too */
static const char jinja_src[] =
    "{{ bos_token }}{% if tools %}<|im_start|>system\nTools: {{ tools | tojson }}<|im_end|>\n{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}"
    "{% if m.content is string %}{{ m.content }}{% elif m.content %}{% for p in m.content %}{{ p.text }}{% endfor %}{% endif %}"
    "{% for c in m.tool_calls or [] %}<tool_call>{{ c.function | tojson }}</tool_call>{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

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
    if (swa_jinja_parse(jinja_src, sizeof jinja_src - 1, &jinja, NULL) != SWA_OK) {
        fprintf(stderr, "fuzz_server: the harness's template does not parse\n");
        exit(1);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    srv_limits lim;
    int kind;
    memset(&lim, 0, sizeof lim);
    lim.vocab = v;
    lim.n_ctx = 256;
    lim.n_slots = 4;
    lim.fim_pre = 1;   /* any ids: the FIM path is reached */
    lim.fim_suf = 2;
    lim.fim_mid = 3;
    lim.fim_rep = size && (data[0] & 2) ? 4 : -1;   /* /infill's repository pattern, or its snippet lines */
    lim.fim_sep = size && (data[0] & 2) ? 5 : -1;
    lim.draft_max = size & 1 ? 16 : 0;   /* speculative decoding on or off, with a draft model or by lookup */
    lim.draft_model = lim.draft_max && (size & 2);
    lim.draft_p_min = 0.75;
    for (kind = SRV_CHAT; kind <= SRV_INFILL; kind++) {
        srv_request r;
        srv_embed_request er;
        srv_error err;
        size_t i;
        int g;
        lim.tmpl = size && (data[0] & 1) ? tmpl : swa_chat_template_by_name("llama2");
        lim.jinja = size && (data[size - 1] & 1) ? jinja : NULL;   /* '}' is odd: most objects take it */
        lim.bos_text = lim.jinja ? "<s>" : NULL;
        lim.eos_text = lim.jinja ? "</s>" : NULL;
        lim.tool_format = lim.jinja ? SWA_TOOL_FORMAT_HERMES : SWA_TOOL_FORMAT_CONTENT;   /* calls forced or strict */
        if (srv_parse_request((const char *)data, size, kind, &lim, &r, &err)) {
            if (err.status < 400 || err.status > 599 || !err.message[0] || strlen(err.message) >= sizeof err.message) abort();
        } else {
            if (r.n_prompts < 1 || r.n_choices < 1 || r.best_of < r.n_choices || r.n_prompts * r.best_of > lim.n_slots ||
                r.n_stop > SRV_MAX_STOP || r.top_logprobs < 0 || r.top_logprobs > SRV_MAX_TOP_LOGPROBS || r.n_bias > SRV_MAX_BIAS ||
                r.id_slot < -1 || r.id_slot >= lim.n_slots || (r.id_slot >= 0 && r.n_prompts * r.best_of != 1) ||
                !(r.spec_p_min >= 0 && r.spec_p_min <= 1) || (!lim.draft_model && r.spec_p_min != lim.draft_p_min) ||
                (!lim.draft_max && (r.spec_n_max > 0 || r.spec_n_min > 0)))
                abort();
            for (g = 0; g < r.n_prompts; g++) {
                if (r.n_prompt[g] == 0 || r.n_prompt[g] >= (size_t)lim.n_ctx) abort();
                for (i = 0; i < r.n_prompt[g]; i++)
                    if (r.prompt[g][i] < 0 || r.prompt[g][i] >= swa_vocab_size(v)) abort();
            }
            for (i = 0; i < r.n_bias; i++) if (r.bias_id[i] < 0 || r.bias_id[i] >= swa_vocab_size(v)) abort();
            srv_request_free(&r);
        }
        if (kind <= 1 && !srv_parse_embed((const char *)data, size, kind, &lim, &er, &err)) {
            if (er.n < 1 || er.n > SRV_MAX_PROMPTS) abort();
            srv_embed_free(&er);
        }
    }
    for (kind = SRV_SLOT_SAVE; kind <= SRV_SLOT_ERASE; kind++) {   /* a slot action's body: a plain file name or nothing */
        char name[256];
        srv_error err;
        if (srv_parse_slot_action((const char *)data, size, kind, name, sizeof name, &err) == 0 &&
            kind != SRV_SLOT_ERASE && (!srv_filename_valid(name) || strchr(name, '/') || strstr(name, "..")))
            abort();
    }
    {   /* the UTF-8 helpers on the raw bytes */
        size_t k = srv_utf8_complete((const char *)data, size);
        if (k > size) abort();
        (void)srv_utf8_valid((const char *)data, size);
    }
    return 0;
}
