/* libFuzzer harness: any bytes as a Jinja template, parsed, then rendered twice: with a small
   conversation (messages with tools, tool calls and reasoning, tools, the generation prompt)
   and, when the input holds a NUL, with the bytes after it as the variables' JSON. A template
   may fail, never crash, hang or leak (the sandbox's limits bound its steps, depth, memory and
   output), and a rendered text must be NUL-terminated at its length. */
#include "swa.h"
#include <stdlib.h>
#include <string.h>

static const char messages[] =
    "[{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"Hi \\u00e9\"},"
    " {\"role\": \"assistant\", \"content\": \"\", \"reasoning_content\": \"r\", \"tool_calls\": [{\"id\": \"c1\","
    " \"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": {\"a\": 1}}}]},"
    " {\"role\": \"tool\", \"tool_call_id\": \"c1\", \"content\": \"2\"},"
    " {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"t\"}]}]";
static const char tools[] = "[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"type\": \"object\"}}}]";

static void check(swa_status st, const char *out, size_t n)
{
    if (st == SWA_OK && (!out || out[n] != '\0')) abort();
    if (st != SWA_OK && out) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *nul = (const char *)memchr(data, 0, size);
    size_t tlen = nul ? (size_t)(nul - (const char *)data) : size, n = 0;
    swa_jinja *t = NULL;
    swa_jinja_chat chat;
    char *out = NULL;
    swa_status st;
    if (swa_jinja_parse((const char *)data, tlen, &t, NULL) != SWA_OK) return 0;
    memset(&chat, 0, sizeof chat);
    chat.messages = messages;
    chat.tools = tools;
    chat.add_generation_prompt = 1;
    chat.bos_token = "<s>";
    chat.eos_token = "</s>";
    st = swa_jinja_apply(t, &chat, &out, &n, NULL);
    check(st, out, n);
    swa_jinja_text_free(out);
    if (nul) {
        out = NULL;
        st = swa_jinja_render(t, nul + 1, size - tlen - 1, &out, &n, NULL);
        check(st, out, n);
        swa_jinja_text_free(out);
    }
    swa_jinja_free(t);
    return 0;
}
