/* swa-server's request parsing: an OpenAI request body (JSON) to the tokens to evaluate and the
   parameters to generate with, without HTTP, so that a fuzzer can drive it (tests/fuzz/fuzz_server.c).
   Bad input is an srv_error with the HTTP status, OpenAI's error type, the field at fault and a
   message naming it; never a crash. Uses swa.h and cJSON (Debian's libcjson-dev). */
#ifndef SWA_SERVER_REQUEST_H
#define SWA_SERVER_REQUEST_H
#include <stddef.h>
#include <stdint.h>
#include "swa.h"

/* The request kinds: OpenAI's chat and completions, llama-server's native /completion, ollama's
   /api/chat and /api/generate, llama-server's /infill. Each has its own fields (server_request.c's
   table). */
enum { SRV_CHAT = 0, SRV_COMPLETION = 1, SRV_NATIVE = 2, SRV_OLLAMA_CHAT = 3, SRV_OLLAMA_GENERATE = 4, SRV_INFILL = 5 };
enum { SRV_MAX_STOP = 16, SRV_MAX_STOP_LEN = 256, SRV_MAX_TOP_LOGPROBS = 20, SRV_MAX_PROMPTS = 64,
       SRV_MAX_BIAS = 1024 };

/* What a request is checked against. */
typedef struct srv_limits {
    const swa_vocab *vocab;
    const swa_chat_template *tmpl;     /* chat requests are formatted with it */
    int32_t n_ctx;                     /* positions a slot holds: prompt + completion */
    int32_t n_slots;                   /* the most choices (prompts x best_of) one request may ask for */
    int32_t fim_pre, fim_suf, fim_mid; /* fill-in-the-middle tokens (tokenizer.ggml.fim_*_token_id), -1: none */
    int32_t fim_rep, fim_sep;          /* /infill's repository and file separators (fim_rep, fim_sep), -1: none */
    const swa_jinja *jinja;            /* the model's Jinja template: chats with tools, tool messages or
                                          template variables are rendered with it. NULL: with the
                                          family above, tools described in a system message */
    const char *bos_text, *eos_text;   /* bos_token and eos_token, as the template sees them */
    int tool_format;                   /* swa_tool_format of jinja's source (GENERIC without one) */
    int reasoning;                     /* swa_reasoning_format when a request names none */
    int thinking;                      /* jinja's source speaks of thinking (think, reasoning): ollama's
                                          think may turn it on */
    int32_t draft_max;                 /* speculative decoding's longest draft (--draft-max); 0: off */
    int draft_model;                   /* drafts come from a draft model (-md), where p_min acts */
    double draft_p_min;                /* speculative.p_min's default (--draft-p-min) */
} srv_limits;

typedef struct srv_request {
    int kind;                          /* SRV_* */
    int n_prompts;                     /* prompts (a completion's list of prompts; else 1) */
    int32_t *prompt[SRV_MAX_PROMPTS];  /* the tokens to evaluate (BOS included) */
    size_t n_prompt[SRV_MAX_PROMPTS];
    size_t n_head;                     /* chat: the tokens of prompt 0 that hold the messages before the
                                          last (a system prompt, a conversation's past); else 0 */
    char *echo[SRV_MAX_PROMPTS];       /* echo: the prompt's text, put before its choices' text */
    size_t echo_len[SRV_MAX_PROMPTS];
    int64_t max_tokens;                /* -1: until the context is full; 0: evaluate the prompt only */
    swa_sampler_config sampling;
    int32_t *bias_id;                  /* logit_bias, for swa_sampler_set_logit_bias */
    float *bias;
    size_t n_bias;
    int n_choices;                     /* n: choices returned per prompt */
    int best_of;                       /* candidates generated per prompt (>= n_choices); the best n kept */
    int stream, include_usage;
    int ignore_eos;                    /* llama-server's extension: generate max_tokens whatever */
    int cache_prompt;                  /* llama-server's: reuse what a slot holds (default 1) */
    int32_t spec_n_max, spec_n_min;    /* speculative.n_max, .n_min: the draft's longest and shortest
                                          (n_min at most n_max); -1: the server's --draft-max, --draft-min */
    double spec_p_min;                 /* speculative.p_min, 0..1 (lim's draft_p_min when absent): a
                                          draft model's draft ends after a token it finds less likely */
    int32_t id_slot;                   /* llama-server's id_slot: the slot to run on; -1: any */
    char *stop[SRV_MAX_STOP];
    int n_stop;
    int logprobs;                      /* 0 off, 1 on */
    int top_logprobs;                  /* 0..SRV_MAX_TOP_LOGPROBS alternatives per token */
    char *prompt_text;                 /* chat: the conversation as the template wrote it (/apply-template) */
    swa_grammar *grammar;              /* grammar, json_schema, response_format or format, or the
                                          call tool_choice required or named forces: what every
                                          choice's sampler follows; NULL: free text */
    const char *grammar_trigger;       /* set: the grammar is lazy (strict tools under tool_choice
                                          auto), free text until a call opens with this marker */
    /* chat: the answer read into content, reasoning and tool calls (swa_chat_parser) */
    int tool_format;                   /* swa_tool_format */
    int reasoning;                     /* swa_reasoning_format */
    int reasoning_open;                /* the prompt ends inside a reasoning block */
    char *tools;                       /* the tools calls are read against (JSON text); NULL: none */
} srv_request;


typedef struct srv_error {
    int status;                        /* HTTP status: 400, 413, ... */
    const char *type;                  /* "invalid_request_error", ... */
    char param[64];                    /* the field at fault, "" for none */
    char message[320];
} srv_error;

/* Parse a request body of len bytes (not NUL-terminated). 0 on success, with *out filled (free
   it with srv_request_free); -1 with *err filled and *out empty. Every field either acts or is
   refused with a 400 naming it; only fields that change nothing of the output are let pass. */
int  srv_parse_request(const char *body, size_t len, int kind, const srv_limits *lim, srv_request *out,
                       srv_error *err);
void srv_request_free(srv_request *r);

/* The body of len bytes as a JSON object: NULL with *err filled (a syntax error says what and at
   which line and column; a NUL character is refused). Free with cJSON_Delete. */
struct cJSON *srv_parse_json(const char *body, size_t len, srv_error *err);

/* An embeddings request's inputs (OpenAI's input, llama-server's content, ollama's input): a
   string, a list of strings, a list of token ids or a list of such lists, each tokenized with
   BOS as the model wants. 0 with prompts filled; -1 with *err. */
typedef struct srv_embed_request {
    int n;
    int32_t *prompt[SRV_MAX_PROMPTS];
    size_t n_prompt[SRV_MAX_PROMPTS];
    int base64;                        /* encoding_format "base64" */
} srv_embed_request;
int  srv_parse_embed(const char *body, size_t len, int ollama, const srv_limits *lim, srv_embed_request *out,
                     srv_error *err);
void srv_embed_free(srv_embed_request *r);

/* A slot action's body (POST /slots/{id}?action=save|restore|erase): save and restore need
   {"filename": NAME}, a plain file name (srv_filename_valid), copied into name (cap bytes); erase
   takes an empty body or {}. Any other field is refused. 0, or -1 with *err (400). */
enum { SRV_SLOT_SAVE = 0, SRV_SLOT_RESTORE = 1, SRV_SLOT_ERASE = 2 };
int  srv_parse_slot_action(const char *body, size_t len, int action, char *name, size_t cap, srv_error *err);
/* 1 when name is a file name that stays in its directory on any system: 1..255 bytes of valid
   UTF-8, no control characters, none of / \ : * ? " < > |, no "..", not "." and no space at
   either end or '.' at the end (which Windows strips). llama-server's rules. */
int  srv_filename_valid(const char *name);

/* p, an array with room for *cap elements of `size` bytes (NULL and 0 at first), with room for
   `need` (at least 1): p itself when it has it, else p reallocated to twice need (*cap
   updated). NULL when that fails, p then left as it was. */
void *srv_grow(void *p, size_t *cap, size_t need, size_t size);

/* Tokenize text (whole, or until *n_out); the ids in *out (malloc'd; free it). -1 on error. */
int  srv_tokenize(const swa_vocab *v, const char *text, size_t len, int flags, int32_t **out, size_t *n_out);

/* 1 when n bytes are well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF). */
int  srv_utf8_valid(const char *s, size_t n);
/* The length of the longest prefix of s[0..n) that ends on a character boundary of valid UTF-8
   bytes: what can be sent now when the rest may still be completed. */
size_t srv_utf8_complete(const char *s, size_t n);
#endif
