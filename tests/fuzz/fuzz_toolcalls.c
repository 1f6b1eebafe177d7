/* libFuzzer harness: any bytes as a model's answer, read in every tool-call format with tools and
   without, each reasoning format, the reasoning opened by the prompt or not: whole, and streamed
   in pieces whose sizes the first byte seeds. The stream's deltas, put together, must be the
   whole answer's message (content, reasoning, and each call's id, name and arguments, an
   object's JSON text; with stream_arguments too, each call's pieces put together), and the
   forced-call grammar of each format must
   be produced or refused with an error, never a crash. */
#include "swa.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOLS "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"," \
              " \"properties\": {\"location\": {\"type\": \"string\"}}}}}, {\"type\": \"function\", \"function\":"         \
              " {\"name\": \"python\"}}]"

typedef struct text { char *p; size_t n; } text;

static void append(text *t, const char *s, size_t n)
{
    t->p = (char *)realloc(t->p, t->n + n + 1);
    if (!t->p) abort();
    memcpy(t->p + t->n, s, n);
    t->n += n;
}

/* A delta's pieces of calls added to heads (each call's id and name) and args (its arguments). */
static void add_pieces(const swa_chat_msg *d, text **heads, text **args, size_t *n)
{
    size_t k;
    for (k = 0; k < d->n_pieces; k++) {
        const swa_tool_call_piece *pc = &d->pieces[k];
        if (pc->index > *n || (pc->index == *n) != (pc->id != NULL && pc->name != NULL)) abort();
        if (pc->index == *n) {
            *heads = (text *)realloc(*heads, (*n + 1) * sizeof **heads);
            *args = (text *)realloc(*args, (*n + 1) * sizeof **args);
            if (!*heads || !*args) abort();
            memset(&(*heads)[*n], 0, sizeof **heads), memset(&(*args)[*n], 0, sizeof **args);
            append(&(*heads)[*n], pc->id, strlen(pc->id) + 1);
            append(&(*heads)[*n], pc->name, strlen(pc->name) + 1);
            (*n)++;
        }
        append(&(*args)[pc->index], pc->arguments, pc->arguments_len);
    }
}

/* The answer streamed in pieces; abort unless the deltas add up to the whole parse. */
static void stream_equals_whole(const swa_chat_parse_config *cfg, const uint8_t *data, size_t size)
{
    swa_chat_parser *whole = NULL, *p = NULL;
    swa_chat_msg m, d;
    text content = {NULL, 0}, reasoning = {NULL, 0}, *heads = NULL, *args = NULL;
    size_t at = 0, n_calls = 0, n_pieced = 0, k;
    unsigned seed = size ? data[0] : 1;
    if (swa_chat_parse(cfg, (const char *)data, size, &whole, NULL) != SWA_OK) abort();
    if (swa_chat_parser_create(cfg, &p, NULL) != SWA_OK) abort();
    for (;;) {
        size_t piece = 1 + (seed = seed * 1103515245u + 12345u) % 9, end = at >= size;
        if (piece > size - at) piece = size - at;
        if ((end ? swa_chat_parser_finish(p, &d, NULL) : swa_chat_parser_feed(p, (const char *)data + at, piece, &d, NULL)) != SWA_OK)
            abort();
        append(&content, d.content, d.content_len);
        append(&reasoning, d.reasoning, d.reasoning_len);
        if (d.first_call != n_calls) abort();
        n_calls += d.n_calls;
        add_pieces(&d, &heads, &args, &n_pieced);
        at += piece;
        if (end) break;
    }
    swa_chat_parser_message(whole, &m);
    if (m.content_len != content.n || memcmp(m.content, content.p, content.n) || m.reasoning_len != reasoning.n ||
        memcmp(m.reasoning, reasoning.p, reasoning.n) || m.n_calls != n_calls || n_pieced != n_calls)
        abort();
    swa_chat_parser_message(p, &d);
    for (k = 0; k < n_calls; k++)
        if (strcmp(m.calls[k].id, d.calls[k].id) || strcmp(m.calls[k].name, d.calls[k].name) ||
            strcmp(m.calls[k].arguments, d.calls[k].arguments) || m.calls[k].arguments[0] != '{')
            abort();
    for (k = 0; k < n_calls; k++) {
        size_t id_n = strlen(m.calls[k].id) + 1;
        if (strcmp(heads[k].p, m.calls[k].id) || strcmp(heads[k].p + id_n, m.calls[k].name) ||
            args[k].n != strlen(m.calls[k].arguments) || memcmp(args[k].p, m.calls[k].arguments, args[k].n))
            abort();
        free(heads[k].p), free(args[k].p);
    }
    free(heads), free(args);
    free(content.p);
    free(reasoning.p);
    swa_chat_parser_free(p);
    swa_chat_parser_free(whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int f, tools, reasoning;
    for (f = 0; f < SWA_TOOL_FORMAT_COUNT; f++)
        for (tools = 0; tools <= 2; tools++)   /* 2: tools, and arguments streamed */
            for (reasoning = 0; reasoning <= 2; reasoning++) {
                swa_chat_parse_config cfg = swa_chat_parse_config_default();
                cfg.format = (swa_tool_format)f;
                cfg.reasoning = reasoning ? SWA_REASONING_DEEPSEEK : SWA_REASONING_NONE;
                cfg.reasoning_open = reasoning == 2;
                if (tools) cfg.tools = TOOLS, cfg.tools_len = strlen(TOOLS);
                cfg.stream_arguments = tools == 2;
                cfg.id_seed = size;
                stream_equals_whole(&cfg, data, size);
                if (tools == 1 && reasoning == 0) {
                    char *g = NULL;
                    swa_status s = swa_tool_call_grammar(&cfg, size & 1 ? "python" : NULL, (int)(size & 2), &g, NULL);
                    if ((s == SWA_OK) != (g != NULL)) abort();
                    free(g);
                }
            }
    return 0;
}
