/* Reading tool calls and reasoning out of a model's answer (swa.h, "tool calls and reasoning").
   The answers are written by hand from each format's public description (the model cards and
   chat templates of Hermes, Qwen, Mistral, Llama 3.1, gpt-oss's harmony guide, Command R7B,
   DeepSeek R1 and V3.1, Functionary, Firefunction) and from llama.cpp's common/chat.cpp; the
   expected calls are written beside them, arguments in the compact form Python's
   json.dumps(separators=(",", ":")) gives. Every case is also streamed in pieces of random
   sizes: the deltas, concatenated, must give the same message. Template detection is checked
   on real templates (tests/data/chat_templates.txt and tool_templates.txt) against the handler
   llama.cpp's common_chat_templates_apply_jinja picks for them. */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

#define TOOLS                                                                                                   \
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Weather now\","   \
    " \"parameters\": {\"type\": \"object\", \"properties\": {\"location\": {\"type\": \"string\"}},"        \
    " \"required\": [\"location\"]}}},"                                                                      \
    " {\"type\": \"function\", \"function\": {\"name\": \"python\", \"parameters\": {\"type\": \"object\","  \
    " \"properties\": {\"code\": {\"type\": \"string\"}}}}},"                                                \
    " {\"type\": \"function\", \"function\": {\"name\": \"brave_search\", \"parameters\": {\"type\":"         \
    " \"object\", \"properties\": {\"query\": {\"type\": \"string\"}}}}}]"

#define DS(x) "<\xef\xbd\x9c" x "\xef\xbd\x9c>"
#define LB "\xe2\x96\x81"
#define PARIS "{\"location\":\"Paris\"}"

typedef struct call_want {
    const char *name, *args, *id;   /* id NULL: one the parser made (9 letters and digits) */
} call_want;

typedef struct parse_case {
    const char *what;
    swa_tool_format format;
    int reasoning;                  /* 1: DEEPSEEK, 0: NONE */
    int open;                       /* the prompt opened the reasoning block */
    int tools;                      /* 0: no tools given */
    const char *text;
    const char *content;            /* NULL: the text, as written */
    const char *reasoning_text;
    call_want calls[3];
} parse_case;

static const parse_case cases[] = {
    /* Hermes 2/3 Pro and Qwen 2.5: content, then calls, each in <tool_call> tags */
    {"hermes", SWA_TOOL_FORMAT_HERMES, 1, 0, 1,
     "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}\n</tool_call>",
     "Let me check.\n", "", {{"get_weather", PARIS, NULL}}},
    {"hermes parallel", SWA_TOOL_FORMAT_HERMES, 1, 0, 1,
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}\n</tool_call>\n"
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Tokyo\", \"days\": 2.5e0}}\n</tool_call>",
     "", "", {{"get_weather", PARIS, NULL}, {"get_weather", "{\"location\":\"Tokyo\",\"days\":2.5}", NULL}}},
    {"qwen3 thinking", SWA_TOOL_FORMAT_HERMES, 1, 0, 1,
     "<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
     "{\"location\": \"Paris\"}}\n</tool_call>",
     "", "The user wants the weather.", {{"get_weather", PARIS, NULL}}},
    {"qwen3 thinking kept", SWA_TOOL_FORMAT_HERMES, 0, 0, 1, "<think>\nHmm.\n</think>\n\nHello!",
     NULL, "", {{NULL, NULL, NULL}}},
    {"hermes without tools", SWA_TOOL_FORMAT_HERMES, 1, 0, 0,
     "<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>", NULL, "", {{NULL, NULL, NULL}}},
    /* DeepSeek R1: the template opens <think>, the answer closes it */
    {"deepseek r1 open", SWA_TOOL_FORMAT_DEEPSEEK, 1, 1, 0, "Two plus two.\nIt is 4.\n</think>\n\nThe answer is 4.",
     "The answer is 4.", "Two plus two.\nIt is 4.", {{NULL, NULL, NULL}}},
    {"deepseek r1 call", SWA_TOOL_FORMAT_DEEPSEEK, 1, 0, 1,
     "<think>\nI need the weather.\n</think>\n\n" DS("tool" LB "calls" LB "begin") DS("tool" LB "call" LB "begin")
     "function" DS("tool" LB "sep") "get_weather\n```json\n{\"location\": \"Paris\"}\n```" DS("tool" LB "call" LB "end")
     DS("tool" LB "calls" LB "end"),
     "", "I need the weather.", {{"get_weather", PARIS, NULL}}},
    {"deepseek v3.1 calls", SWA_TOOL_FORMAT_DEEPSEEK, 1, 0, 1,
     DS("tool" LB "calls" LB "begin") DS("tool" LB "call" LB "begin") "get_weather" DS("tool" LB "sep")
     "{\"location\": \"Paris\"}" DS("tool" LB "call" LB "end") DS("tool" LB "call" LB "begin") "brave_search"
     DS("tool" LB "sep") "{\"query\": \"caf\xc3\xa9\"}" DS("tool" LB "call" LB "end") DS("tool" LB "calls" LB "end"),
     "", "", {{"get_weather", PARIS, NULL}, {"brave_search", "{\"query\":\"caf\xc3\xa9\"}", NULL}}},
    /* Mistral: v7's array with ids, tekken's name[ARGS], Magistral's [CALL_ID] and [THINK] */
    {"mistral v7", SWA_TOOL_FORMAT_MISTRAL, 1, 0, 1,
     "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}, \"id\": \"abc123DEF\"}]",
     "", "", {{"get_weather", PARIS, "abc123DEF"}}},
    {"mistral tekken", SWA_TOOL_FORMAT_MISTRAL, 1, 0, 1,
     "[TOOL_CALLS]get_weather[ARGS]{\"location\": \"Paris\"}[TOOL_CALLS]python[ARGS]{\"code\": \"print(1)\"}",
     "", "", {{"get_weather", PARIS, NULL}, {"python", "{\"code\":\"print(1)\"}", NULL}}},
    {"magistral", SWA_TOOL_FORMAT_MISTRAL, 1, 0, 1,
     "[THINK]Weather, so a call.[/THINK][TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{\"location\": \"Paris\"}",
     "", "Weather, so a call.", {{"get_weather", PARIS, "a1b2c3d4e"}}},
    {"mistral string arguments", SWA_TOOL_FORMAT_MISTRAL, 1, 0, 1,
     "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": \"{\\\"location\\\": \\\"Paris\\\"}\"}]",
     "", "", {{"get_weather", PARIS, NULL}}},
    /* Llama 3.1-3.3: a JSON object, or a built-in tool after <|python_tag|> */
    {"llama3 json", SWA_TOOL_FORMAT_LLAMA3, 1, 0, 1,
     "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}", "", "", {{"get_weather", PARIS, NULL}}},
    {"llama3 typed", SWA_TOOL_FORMAT_LLAMA3, 1, 0, 1,
     "{\"type\": \"function\", \"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}", "", "",
     {{"get_weather", PARIS, NULL}}},
    {"llama3 builtin", SWA_TOOL_FORMAT_LLAMA3, 1, 0, 1, "<|python_tag|>brave_search.call(query=\"Paris weather\")", "",
     "", {{"brave_search", "{\"query\":\"Paris weather\"}", NULL}}},
    {"llama3 plain", SWA_TOOL_FORMAT_LLAMA3, 1, 0, 1, "It is sunny in Paris.", NULL, "",
     {{NULL, NULL, NULL}}},
    /* gpt-oss (harmony): analysis is reasoning, commentary to=functions.X a call, final content */
    {"gpt-oss call", SWA_TOOL_FORMAT_GPT_OSS, 1, 0, 1,
     "<|channel|>analysis<|message|>Need to use get_weather.<|end|><|start|>assistant<|channel|>commentary "
     "to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"Paris\"}<|call|>",
     "", "Need to use get_weather.", {{"get_weather", PARIS, NULL}}},
    {"gpt-oss final", SWA_TOOL_FORMAT_GPT_OSS, 1, 0, 1,
     "<|channel|>analysis<|message|>Greet back.<|end|><|start|>assistant<|channel|>final<|message|>Hello!",
     "Hello!", "Greet back.", {{NULL, NULL, NULL}}},
    {"gpt-oss recipient in role", SWA_TOOL_FORMAT_GPT_OSS, 1, 0, 1,
     "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"location\": \"Paris\"}",
     "", "", {{"get_weather", PARIS, NULL}}},
    {"gpt-oss reasoning kept", SWA_TOOL_FORMAT_GPT_OSS, 0, 0, 1,
     "<|channel|>analysis<|message|>Greet back.<|end|><|start|>assistant<|channel|>final<|message|>Hello!",
     "<|channel|>analysis<|message|>Greet back.<|end|>Hello!", "", {{NULL, NULL, NULL}}},
    /* Command R7B */
    {"command r7b call", SWA_TOOL_FORMAT_COMMAND_R7B, 1, 0, 1,
     "<|START_THINKING|>I will look up the weather.<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", "
     "\"tool_name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}\n]<|END_ACTION|>",
     "", "I will look up the weather.", {{"get_weather", PARIS, "0"}}},
    {"command r7b response", SWA_TOOL_FORMAT_COMMAND_R7B, 1, 0, 0, "<|START_RESPONSE|>Hi there!<|END_RESPONSE|>",
     "Hi there!", "", {{NULL, NULL, NULL}}},
    /* Functionary v3.1 and v3.2 */
    {"functionary v3.1", SWA_TOOL_FORMAT_FUNCTIONARY_V3_1, 1, 0, 1,
     "<function=get_weather>{\"location\": \"Paris\"}</function>", "", "", {{"get_weather", PARIS, NULL}}},
    {"functionary v3.1 python", SWA_TOOL_FORMAT_FUNCTIONARY_V3_1, 1, 0, 1, "<|python_tag|>print(\"hi\")\n", "", "",
     {{"python", "{\"code\":\"print(\\\"hi\\\")\\n\"}", NULL}}},
    {"functionary v3.2 content", SWA_TOOL_FORMAT_FUNCTIONARY_V3_2, 1, 0, 0, "all\nHello there", "Hello there", "",
     {{NULL, NULL, NULL}}},
    {"functionary v3.2 calls", SWA_TOOL_FORMAT_FUNCTIONARY_V3_2, 1, 0, 1,
     "all\nLet me check.>>>get_weather\n{\"location\": \"Paris\"}>>>brave_search\n{\"query\": \"rain\"}",
     "Let me check.", "", {{"get_weather", PARIS, NULL}, {"brave_search", "{\"query\":\"rain\"}", NULL}}},
    {"functionary v3.2 first call", SWA_TOOL_FORMAT_FUNCTIONARY_V3_2, 1, 0, 1, "get_weather\n{\"location\": \"Paris\"}",
     "", "", {{"get_weather", PARIS, NULL}}},
    /* Firefunction v2 */
    {"firefunction v2", SWA_TOOL_FORMAT_FIREFUNCTION_V2, 1, 0, 1,
     " functools[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}]", "", "",
     {{"get_weather", PARIS, NULL}}},
    /* the generic form */
    {"generic calls", SWA_TOOL_FORMAT_GENERIC, 1, 0, 1,
     "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}, \"id\": \"call_1\"}]}",
     "", "", {{"get_weather", PARIS, "call_1"}}},
    {"generic call", SWA_TOOL_FORMAT_GENERIC, 1, 0, 1,
     "{\"tool_call\": {\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}}", "", "",
     {{"get_weather", PARIS, NULL}}},
    {"generic response", SWA_TOOL_FORMAT_GENERIC, 1, 0, 1, "{\"response\": \"Hello \\u00e9\"}", "Hello \xc3\xa9", "",
     {{NULL, NULL, NULL}}},
    /* malformed: content, exactly as written */
    {"bad json", SWA_TOOL_FORMAT_HERMES, 1, 0, 1,
     "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"location\": }}</tool_call>",
     NULL, "", {{NULL, NULL, NULL}}},
    {"unknown function", SWA_TOOL_FORMAT_HERMES, 1, 0, 1,
     "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>", NULL, "", {{NULL, NULL, NULL}}},
    {"half a call", SWA_TOOL_FORMAT_HERMES, 1, 0, 1, "Sure <tool_call>{\"name\": \"get_weather\", \"argu",
     NULL, "", {{NULL, NULL, NULL}}},
    {"arguments not an object", SWA_TOOL_FORMAT_MISTRAL, 1, 0, 1, "[TOOL_CALLS]get_weather[ARGS][1, 2]",
     NULL, "", {{NULL, NULL, NULL}}},
    {"gpt-oss bad call", SWA_TOOL_FORMAT_GPT_OSS, 1, 0, 1,
     "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":<|call|>", NULL, "",
     {{NULL, NULL, NULL}}},
    {"generic not json", SWA_TOOL_FORMAT_GENERIC, 1, 0, 1, "{\"tool_calls\": oops", NULL, "",
     {{NULL, NULL, NULL}}},
    {"a marker's prefix at the end", SWA_TOOL_FORMAT_HERMES, 1, 0, 1, "a < b <tool_", NULL, "",
     {{NULL, NULL, NULL}}},
};

static swa_chat_parse_config config_of(const parse_case *c, int tools)
{
    swa_chat_parse_config cfg = swa_chat_parse_config_default();
    cfg.format = c->format;
    cfg.reasoning = c->reasoning ? SWA_REASONING_DEEPSEEK : SWA_REASONING_NONE;
    cfg.reasoning_open = c->open;
    if (tools) cfg.tools = TOOLS, cfg.tools_len = strlen(TOOLS);
    cfg.id_seed = 7;
    return cfg;
}

static int made_id(const char *id)
{
    size_t i;
    for (i = 0; id[i]; i++)
        if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') || (id[i] >= '0' && id[i] <= '9'))) return 0;
    return i == 9;
}

static void check_message(const parse_case *c, const char *content, size_t content_len, const char *reasoning,
                          size_t reasoning_len, const swa_tool_call *calls, size_t n_calls, const char *how)
{
    const char *want = c->content ? c->content : c->text;
    size_t k, want_calls = 0;
    while (want_calls < 3 && c->calls[want_calls].name) want_calls++;
    if (content_len != strlen(want) || memcmp(content, want, content_len))
        fail_msg("%s (%s): content \"%.*s\", want \"%s\"", c->what, how, (int)content_len, content, want);
    if (reasoning_len != strlen(c->reasoning_text) || memcmp(reasoning, c->reasoning_text, reasoning_len))
        fail_msg("%s (%s): reasoning \"%.*s\", want \"%s\"", c->what, how, (int)reasoning_len, reasoning, c->reasoning_text);
    if (n_calls != want_calls) fail_msg("%s (%s): %zu calls, want %zu", c->what, how, n_calls, want_calls);
    for (k = 0; k < n_calls; k++) {
        if (strcmp(calls[k].name, c->calls[k].name) || strcmp(calls[k].arguments, c->calls[k].args))
            fail_msg("%s (%s): call %zu is %s(%s), want %s(%s)", c->what, how, k, calls[k].name, calls[k].arguments,
                     c->calls[k].name, c->calls[k].args);
        if (c->calls[k].id ? strcmp(calls[k].id, c->calls[k].id) != 0 : !made_id(calls[k].id))
            fail_msg("%s (%s): call %zu has id \"%s\"", c->what, how, k, calls[k].id);
    }
}

static void test_whole_answers(void **state)
{
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const parse_case *c = &cases[i];
        swa_chat_parse_config cfg = config_of(c, c->tools);
        swa_chat_parser *p = NULL;
        swa_chat_msg m;
        swa_error err;
        if (swa_chat_parse(&cfg, c->text, strlen(c->text), &p, &err) != SWA_OK) fail_msg("%s: %s", c->what, err.msg);
        swa_chat_parser_message(p, &m);
        check_message(c, m.content, m.content_len, m.reasoning, m.reasoning_len, m.calls, m.n_calls, "whole");
        assert_int_equal(m.content[m.content_len], '\0');
        swa_chat_parser_free(p);
    }
}

/* The same answers in pieces of 1 to 7 bytes (a marker split anywhere): the deltas, put together,
   are the message; each call comes once, at its index, whole. */
static void test_streamed_answers(void **state)
{
    size_t i;
    uint64_t seed = 12345;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const parse_case *c = &cases[i];
        int round;
        for (round = 0; round < 20; round++) {
            swa_chat_parse_config cfg = config_of(c, c->tools);
            swa_chat_parser *p = NULL;
            swa_chat_msg d, m;
            char content[1024], reasoning[1024];
            swa_tool_call calls[3];
            size_t nc = 0, nr = 0, n_calls = 0, at = 0, len = strlen(c->text), k;
            assert_int_equal(swa_chat_parser_create(&cfg, &p, NULL), SWA_OK);
            for (;;) {
                size_t piece = round == 0 ? 1 : 1 + (size_t)(tu_rng_next(&seed) % 7);
                int end = at >= len;
                if (piece > len - at) piece = len - at;
                if (end) assert_int_equal(swa_chat_parser_finish(p, &d, NULL), SWA_OK);
                else assert_int_equal(swa_chat_parser_feed(p, c->text + at, piece, &d, NULL), SWA_OK);
                at += piece;
                assert_true(nc + d.content_len < sizeof content && nr + d.reasoning_len < sizeof reasoning);
                memcpy(content + nc, d.content, d.content_len), nc += d.content_len;
                memcpy(reasoning + nr, d.reasoning, d.reasoning_len), nr += d.reasoning_len;
                assert_int_equal(d.first_call, n_calls);
                for (k = 0; k < d.n_calls; k++) {
                    assert_true(n_calls < 3);
                    calls[n_calls++] = d.calls[k];   /* the parser keeps them until it is freed */
                }
                if (end) break;
            }
            check_message(c, content, nc, reasoning, nr, calls, n_calls, "streamed");
            swa_chat_parser_message(p, &m);
            assert_int_equal(m.n_calls, n_calls);
            for (k = 0; k < n_calls; k++) assert_string_equal(m.calls[k].id, calls[k].id);
            swa_chat_parser_free(p);
        }
    }
}

/* -- stream_arguments: a call's arguments in pieces -- */

/* A stream's pieces put together: per call, its id and name (from its first piece only) and its
   arguments; and the content and reasoning. */
typedef struct stream_sum {
    char content[1024], reasoning[1024];
    size_t nc, nr, n_calls, pieces[8];
    char id[8][80], name[8][80];                   /* copies: a delta's pointers last until the next feed */
    char args[8][4096];
    size_t args_len[8];
} stream_sum;

static void sum_delta(stream_sum *sum, const swa_chat_msg *d, const char *what)
{
    size_t k;
    assert_true(sum->nc + d->content_len < sizeof sum->content && sum->nr + d->reasoning_len < sizeof sum->reasoning);
    memcpy(sum->content + sum->nc, d->content, d->content_len), sum->nc += d->content_len;
    memcpy(sum->reasoning + sum->nr, d->reasoning, d->reasoning_len), sum->nr += d->reasoning_len;
    for (k = 0; k < d->n_pieces; k++) {
        const swa_tool_call_piece *pc = &d->pieces[k];
        assert_true(pc->index < 8);
        if (pc->index == sum->n_calls) {               /* a call's first piece: its head */
            if (!pc->id || !pc->name) fail_msg("%s: call %zu's first piece has no id or name", what, pc->index);
            snprintf(sum->id[pc->index], sizeof sum->id[0], "%s", pc->id);
            snprintf(sum->name[pc->index], sizeof sum->name[0], "%s", pc->name);
            sum->n_calls++;
        } else if (pc->index > sum->n_calls || pc->id || pc->name) {
            fail_msg("%s: piece of call %zu out of order (%zu calls begun)", what, pc->index, sum->n_calls);
        }
        assert_true(sum->args_len[pc->index] + pc->arguments_len < sizeof sum->args[0]);
        memcpy(sum->args[pc->index] + sum->args_len[pc->index], pc->arguments, pc->arguments_len);
        sum->args_len[pc->index] += pc->arguments_len;
        sum->pieces[pc->index]++;
    }
}

/* Feed text in pieces of 1 to max bytes (max 0: all at once) under cfg; sum the deltas and
   check them against the message the parser ends with. The parser is returned for more checks. */
static swa_chat_parser *stream_text(const swa_chat_parse_config *cfg, const char *text, size_t len, size_t max,
                                    uint64_t *seed, stream_sum *sum, const char *what)
{
    swa_chat_parser *p = NULL;
    swa_chat_msg d, m;
    size_t at = 0, k;
    memset(sum, 0, sizeof *sum);
    assert_int_equal(swa_chat_parser_create(cfg, &p, NULL), SWA_OK);
    while (at < len) {
        size_t piece = max ? 1 + (size_t)(tu_rng_next(seed) % max) : len;
        if (piece > len - at) piece = len - at;
        assert_int_equal(swa_chat_parser_feed(p, text + at, piece, &d, NULL), SWA_OK);
        sum_delta(sum, &d, what);
        at += piece;
    }
    assert_int_equal(swa_chat_parser_finish(p, &d, NULL), SWA_OK);
    sum_delta(sum, &d, what);
    swa_chat_parser_message(p, &m);
    if (m.n_calls != sum->n_calls) fail_msg("%s: %zu calls streamed, %zu in the message", what, sum->n_calls, m.n_calls);
    if (sum->nc != m.content_len || memcmp(sum->content, m.content, sum->nc))
        fail_msg("%s: content streamed \"%.*s\", message \"%s\"", what, (int)sum->nc, sum->content, m.content);
    assert_int_equal(sum->nr, m.reasoning_len);
    for (k = 0; k < m.n_calls; k++) {
        if (sum->args_len[k] != strlen(m.calls[k].arguments) || memcmp(sum->args[k], m.calls[k].arguments, sum->args_len[k]))
            fail_msg("%s: call %zu streamed %.*s, message %s", what, k, (int)sum->args_len[k], sum->args[k], m.calls[k].arguments);
        if (strcmp(sum->id[k], m.calls[k].id) || strcmp(sum->name[k], m.calls[k].name))
            fail_msg("%s: call %zu streamed %s %s, message %s %s", what, k, sum->id[k], sum->name[k], m.calls[k].id,
                     m.calls[k].name);
    }
    return p;
}

/* The formats whose calls stream their arguments */
static int streams_arguments(const parse_case *c)
{
    if (strstr(c->text, "\"arguments\": \"")) return 0;   /* arguments in a string come whole */
    return c->format == SWA_TOOL_FORMAT_HERMES || c->format == SWA_TOOL_FORMAT_GENERIC ||
           c->format == SWA_TOOL_FORMAT_MISTRAL || (c->format == SWA_TOOL_FORMAT_LLAMA3 && !strstr(c->text, "python_tag"));
}

/* Every case with stream_arguments, fed whole, byte by byte and in random pieces: the pieces put
   together are the message, and a valid call's arguments are what the parse without
   stream_arguments reads (its id too, unless the model wrote it after the arguments). */
static void test_streamed_arguments(void **state)
{
    size_t i;
    uint64_t seed = 99;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const parse_case *c = &cases[i];
        swa_chat_parse_config cfg = config_of(c, c->tools);
        swa_chat_parser *p, *plain = NULL;
        swa_chat_msg m, want;
        stream_sum sum;
        size_t len = strlen(c->text), k;
        const char *args_at = strstr(c->text, "\"arguments\""), *id_at = strstr(c->text, "\"id\"");
        int round;
        assert_int_equal(swa_chat_parse(&cfg, c->text, len, &plain, NULL), SWA_OK);
        swa_chat_parser_message(plain, &want);
        cfg.stream_arguments = 1;
        for (round = 0; round < 12; round++) {
            p = stream_text(&cfg, c->text, len, round == 0 ? 0 : round == 1 ? 1 : 7, &seed, &sum, c->what);
            swa_chat_parser_message(p, &m);
            if (want.n_calls) {                         /* a valid answer reads the same */
                parse_case same = *c;
                for (k = 0; k < 3 && id_at && args_at && id_at > args_at; k++) same.calls[k].id = NULL;
                check_message(&same, m.content, m.content_len, m.reasoning, m.reasoning_len, m.calls, m.n_calls, "stream_arguments");
                for (k = 0; k < m.n_calls; k++)
                    if (!(id_at && args_at && id_at > args_at)) assert_string_equal(m.calls[k].id, want.calls[k].id);
                if (round == 1 && streams_arguments(c) && sum.pieces[0] < 3)
                    fail_msg("%s: call 0 came in %zu pieces fed byte by byte", c->what, sum.pieces[0]);
            }
            swa_chat_parser_free(p);
        }
        swa_chat_parser_free(plain);
    }
}

/* What a stream shows of a call as it is written, and of one that goes wrong after it began. */
static void test_argument_pieces(void **state)
{
    swa_chat_parse_config cfg = swa_chat_parse_config_default();
    swa_chat_parser *p;
    swa_chat_msg d, m;
    static const char bad[] = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"location\": }}</tool_call>";
    (void)state;
    cfg.format = SWA_TOOL_FORMAT_HERMES;
    cfg.tools = TOOLS;
    cfg.tools_len = strlen(TOOLS);
    cfg.stream_arguments = 1;
    assert_int_equal(swa_chat_parser_create(&cfg, &p, NULL), SWA_OK);
#define FEED(text) assert_int_equal(swa_chat_parser_feed(p, text, strlen(text), &d, NULL), SWA_OK)
    FEED("<tool_call>\n{\"name\": \"get_weather\", \"arguments\"");
    assert_int_equal(d.n_pieces, 0);                     /* not begun until its arguments open */
    FEED(": {\"location\": \"Pa");
    assert_int_equal(d.n_pieces, 1);
    assert_int_equal(d.pieces[0].index, 0);
    assert_string_equal(d.pieces[0].name, "get_weather");
    assert_true(made_id(d.pieces[0].id));
    assert_int_equal(d.pieces[0].arguments_len, 15);
    assert_memory_equal(d.pieces[0].arguments, "{\"location\":\"Pa", 15);
    FEED("ri\\u00e9");                                    /* an escape is written as its character */
    assert_int_equal(d.n_pieces, 1);
    assert_null(d.pieces[0].id);
    assert_int_equal(d.pieces[0].arguments_len, 4);
    assert_memory_equal(d.pieces[0].arguments, "ri\xc3\xa9", 4);
    FEED("\", \"days\": 1");                              /* a number waits for its end */
    assert_int_equal(d.pieces[0].arguments_len, 9);
    assert_memory_equal(d.pieces[0].arguments, "\",\"days\":", 9);
    assert_int_equal(d.n_calls, 0);
    FEED("0}}\n</tool_call>");
    assert_int_equal(d.n_calls, 1);                      /* whole now */
    assert_int_equal(d.n_pieces, 1);
    assert_int_equal(d.pieces[0].arguments_len, 3);
    assert_memory_equal(d.pieces[0].arguments, "10}", 3);
    assert_string_equal(d.calls[0].arguments, "{\"location\":\"Pari\xc3\xa9\",\"days\":10}");
    swa_chat_parser_free(p);
#undef FEED
    /* invalid JSON after the call began: the call stays as far as it went, its text is content */
    assert_int_equal(swa_chat_parse(&cfg, bad, strlen(bad), &p, NULL), SWA_OK);
    swa_chat_parser_message(p, &m);
    assert_int_equal(m.n_calls, 1);
    assert_string_equal(m.calls[0].name, "get_weather");
    assert_string_equal(m.calls[0].arguments, "{\"location\":");
    assert_string_equal(m.content, bad);
    swa_chat_parser_free(p);
    /* the text ends inside the arguments (a stop word, the token limit) */
    assert_int_equal(swa_chat_parse(&cfg, bad, 53, &p, NULL), SWA_OK);
    swa_chat_parser_message(p, &m);
    assert_int_equal(m.n_calls, 1);
    assert_string_equal(m.calls[0].arguments, "{\"loc");
    swa_chat_parser_free(p);
}

/* Random JSON for arguments, written with random white space and escapes. */
static void random_ws(char *out, size_t *n, uint64_t *seed)
{
    static const char ws[] = " \n\t\r";
    while (tu_rng_next(seed) % 3 == 0) out[(*n)++] = ws[tu_rng_next(seed) % 4];
}

static void random_json(char *out, size_t *n, uint64_t *seed, int depth, int object)
{
    static const char *const strs[] = {"Paris", "caf\xc3\xa9", "\\u00e9t\\u00e9", "\\ud83d\\ude00!", "\xf0\x9f\x91\x8b",
                                       "a\\\"b\\\\c\\/d", "line\\nbreak\\t", "\\u0001", "", "\xe6\x97\xa5\xe6\x9c\xac"};
    static const char *const scalars[] = {"0", "-12", "3.25", "1e3", "2.5E-2", "true", "false", "null",
                                          "12345678901234567890", "-0.0"};
    int k, count = (int)(tu_rng_next(seed) % 4);
    if (object || (depth < 3 && tu_rng_next(seed) % 3 == 0)) {
        int obj = object || tu_rng_next(seed) % 2;
        out[(*n)++] = obj ? '{' : '[';
        for (k = 0; k < count; k++) {
            random_ws(out, n, seed);
            if (obj) {
                *n += (size_t)sprintf(out + *n, "\"%s%d\"", strs[tu_rng_next(seed) % 10], k);
                random_ws(out, n, seed);
                out[(*n)++] = ':';
                random_ws(out, n, seed);
            }
            random_json(out, n, seed, depth + 1, 0);
            random_ws(out, n, seed);
            if (k + 1 < count) out[(*n)++] = ',';
        }
        out[(*n)++] = obj ? '}' : ']';
    } else if (tu_rng_next(seed) % 2) {
        *n += (size_t)sprintf(out + *n, "\"%s\"", strs[tu_rng_next(seed) % 10]);
    } else {
        *n += (size_t)sprintf(out + *n, "%s", scalars[tu_rng_next(seed) % 10]);
    }
}

/* Random arguments in each streaming format, in random pieces: each call's pieces put together
   are the arguments the parse without stream_arguments reads from the whole text. */
static void test_random_arguments(void **state)
{
    static const struct { swa_tool_format format; const char *head, *tail; } forms[] = {
        {SWA_TOOL_FORMAT_HERMES, "Sure.<tool_call>\n{\"name\": \"python\", \"arguments\": ", "}\n</tool_call>"},
        {SWA_TOOL_FORMAT_MISTRAL, "[TOOL_CALLS]python[ARGS]", ""},
        {SWA_TOOL_FORMAT_MISTRAL, "[TOOL_CALLS][{\"name\": \"python\", \"arguments\": ", ", \"id\": \"a1\"}]"},
        {SWA_TOOL_FORMAT_LLAMA3, "{\"type\": \"function\", \"name\": \"python\", \"parameters\": ", "}"},
        {SWA_TOOL_FORMAT_GENERIC, "{\"tool_calls\": [{\"id\": 5, \"name\": \"python\", \"arguments\": ", "}]}"},
    };
    uint64_t seed = 2024;
    int round;
    (void)state;
    for (round = 0; round < 400; round++) {
        size_t f = (size_t)round % (sizeof forms / sizeof forms[0]), n = 0, k;
        char text[8192];
        swa_chat_parse_config cfg = swa_chat_parse_config_default();
        swa_chat_parser *p, *plain = NULL;
        swa_chat_msg want;
        stream_sum sum;
        n += (size_t)sprintf(text, "%s", forms[f].head);
        random_json(text, &n, &seed, 0, 1);
        n += (size_t)sprintf(text + n, "%s", forms[f].tail);
        if (forms[f].format == SWA_TOOL_FORMAT_MISTRAL && round % 3 == 0)   /* a second call after the first */
            n += (size_t)sprintf(text + n, "%s", f == 1 ? "[TOOL_CALLS]get_weather[ARGS]{\"location\": \"Oslo\"}" : "");
        cfg.format = forms[f].format;
        cfg.tools = TOOLS;
        cfg.tools_len = strlen(TOOLS);
        cfg.id_seed = 3;
        assert_int_equal(swa_chat_parse(&cfg, text, n, &plain, NULL), SWA_OK);
        swa_chat_parser_message(plain, &want);
        if (want.n_calls == 0) fail_msg("not a call: %.*s", (int)n, text);
        cfg.stream_arguments = 1;
        p = stream_text(&cfg, text, n, round % 2 ? 1 : 9, &seed, &sum, forms[f].head);
        assert_int_equal(sum.n_calls, want.n_calls);
        for (k = 0; k < want.n_calls; k++)
            if (sum.args_len[k] != strlen(want.calls[k].arguments) || memcmp(sum.args[k], want.calls[k].arguments, sum.args_len[k]))
                fail_msg("%.*s\nstreamed %.*s\nwant     %s", (int)n, text, (int)sum.args_len[k], sum.args[k], want.calls[k].arguments);
        swa_chat_parser_free(p);
        swa_chat_parser_free(plain);
    }
}

/* What a stream holds back: the start of a marker, until it is one or is not. */
static void test_held_back(void **state)
{
    swa_chat_parse_config cfg = swa_chat_parse_config_default();
    swa_chat_parser *p;
    swa_chat_msg d;
    (void)state;
    cfg.format = SWA_TOOL_FORMAT_HERMES;
    cfg.tools = TOOLS;
    cfg.tools_len = strlen(TOOLS);
    assert_int_equal(swa_chat_parser_create(&cfg, &p, NULL), SWA_OK);
#define FEED(text) assert_int_equal(swa_chat_parser_feed(p, text, strlen(text), &d, NULL), SWA_OK)
    FEED("Hi <tool_");
    assert_int_equal(d.content_len, 3);                   /* "Hi " */
    FEED("call>{\"name\": \"get_weather\", ");
    assert_int_equal(d.content_len, 0);
    assert_int_equal(d.n_calls, 0);                      /* a call comes out whole */
    FEED("\"arguments\": {}}</tool_call> ok");
    assert_int_equal(d.n_calls, 1);
    assert_string_equal(d.calls[0].name, "get_weather");
    assert_string_equal(d.calls[0].arguments, "{}");
    assert_int_equal(d.content_len, 2);
    assert_memory_equal(d.content, "ok", 2);
    assert_int_equal(swa_chat_parser_finish(p, &d, NULL), SWA_OK);
    assert_int_equal(swa_chat_parser_feed(p, "x", 1, &d, NULL), SWA_ERR_INVALID_ARG);
    swa_chat_parser_free(p);

    cfg = swa_chat_parse_config_default();               /* reasoning: white space at its end waits */
    cfg.format = SWA_TOOL_FORMAT_HERMES;
    assert_int_equal(swa_chat_parser_create(&cfg, &p, NULL), SWA_OK);
    FEED("<think>\nstep one\n");
    assert_int_equal(d.reasoning_len, 8);
    assert_memory_equal(d.reasoning, "step one", 8);
    FEED("step two</think>Yes");
    assert_int_equal(d.reasoning_len, 9);
    assert_memory_equal(d.reasoning, "\nstep two", 9);
    assert_int_equal(d.content_len, 3);
    assert_int_equal(swa_chat_parser_feed(p, " and no", 7, NULL, NULL), SWA_OK);   /* no delta asked: it waits */
    assert_int_equal(swa_chat_parser_finish(p, &d, NULL), SWA_OK);
    assert_int_equal(d.content_len, 7);
    assert_memory_equal(d.content, " and no", 7);
    swa_chat_parser_free(p);
#undef FEED
}

/* The handler llama.cpp's common_chat_templates_apply_jinja picks for each real template. */
static void test_detection(void **state)
{
    static const struct { const char *source; swa_tool_format want; } known[] = {
        {"Qwen-Qwen2.5-7B-Instruct", SWA_TOOL_FORMAT_HERMES},
        {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use", SWA_TOOL_FORMAT_HERMES},
        {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B", SWA_TOOL_FORMAT_DEEPSEEK},
        {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", SWA_TOOL_FORMAT_DEEPSEEK},
        {"google-gemma-2-2b-it", SWA_TOOL_FORMAT_GENERIC},
        {"meta-llama-Llama-3.1-8B-Instruct", SWA_TOOL_FORMAT_LLAMA3},
        {"meta-llama-Llama-3.2-3B-Instruct", SWA_TOOL_FORMAT_LLAMA3},
        {"meta-llama-Llama-3.3-70B-Instruct", SWA_TOOL_FORMAT_LLAMA3},
        {"microsoft-Phi-3.5-mini-instruct", SWA_TOOL_FORMAT_GENERIC},
        {"mistralai-Mistral-Nemo-Instruct-2407", SWA_TOOL_FORMAT_MISTRAL},
    };
    static const char *files[] = {"tests/data/chat_templates.txt", "tests/data/tool_templates.txt"};
    int f, found = 0;
    (void)state;
    for (f = 0; f < 2; f++) {
        size_t size = 0, k;
        char *text = tu_read_text(files[f], &size), *p, *next;
        assert_non_null(text);
        for (p = strstr(text, "#### "); p; p = next) {
            char family[64], source[160], *body = strchr(p, '\n'), *end;
            swa_tool_format want = SWA_TOOL_FORMAT_COUNT;
            assert_non_null(body);
            assert_int_equal(sscanf(p + 5, "%63s %159s", family, source), 2);
            body++;
            next = strstr(body, "\n#### ");
            end = next ? next : text + size - 1;
            if (next) next++;
            for (k = 0; f == 0 && k < sizeof known / sizeof known[0]; k++)
                if (!strcmp(source, known[k].source)) want = known[k].want;
            if (f == 1) {
                for (k = 0; k < SWA_TOOL_FORMAT_COUNT; k++)
                    if (!strcmp(family, swa_tool_format_name((swa_tool_format)k))) want = (swa_tool_format)k;
                assert_int_not_equal(want, SWA_TOOL_FORMAT_COUNT);
            }
            if (want == SWA_TOOL_FORMAT_COUNT) continue;
            if (swa_tool_format_detect(body, (size_t)(end - body)) != want)
                fail_msg("%s: detected as %s, want %s", source, swa_tool_format_name(swa_tool_format_detect(body, (size_t)(end - body))),
                         swa_tool_format_name(want));
            found++;
        }
        free(text);
    }
    assert_int_equal(found, 14);
    /* gpt-oss's template (openai/gpt-oss-20b) marks channels; names are accepted too */
    assert_int_equal(swa_tool_format_detect("{{- \"<|start|>assistant<|channel|>final<|message|>\" }}", 52),
                     SWA_TOOL_FORMAT_GPT_OSS);
    assert_int_equal(swa_tool_format_detect("hermes", 6), SWA_TOOL_FORMAT_HERMES);
    assert_null(swa_tool_format_name(SWA_TOOL_FORMAT_COUNT));
}

static void test_reasoning_names_and_prompts(void **state)
{
    swa_reasoning_format r = SWA_REASONING_NONE;
    swa_error err;
    (void)state;
    assert_int_equal(swa_reasoning_format_by_name("auto", &r, NULL), SWA_OK);
    assert_int_equal(r, SWA_REASONING_DEEPSEEK);
    assert_int_equal(swa_reasoning_format_by_name("none", &r, NULL), SWA_OK);
    assert_int_equal(r, SWA_REASONING_NONE);
    assert_int_equal(swa_reasoning_format_by_name("loud", &r, &err), SWA_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "loud"));
    assert_true(swa_chat_prompt_opens_reasoning(SWA_TOOL_FORMAT_DEEPSEEK, "<|Assistant|><think>\n", 21));
    assert_false(swa_chat_prompt_opens_reasoning(SWA_TOOL_FORMAT_DEEPSEEK, "<|Assistant|>", 13));
    assert_false(swa_chat_prompt_opens_reasoning(SWA_TOOL_FORMAT_GPT_OSS, "<think>", 7));
}

static void test_bad_config(void **state)
{
    swa_chat_parse_config cfg = swa_chat_parse_config_default();
    swa_chat_parser *p = (swa_chat_parser *)&cfg;
    swa_error err;
    (void)state;
    cfg.tools = "[{\"type\": \"function\", \"function\": {}}]";
    cfg.tools_len = strlen(cfg.tools);
    assert_int_equal(swa_chat_parser_create(&cfg, &p, &err), SWA_ERR_FORMAT);
    assert_null(p);
    assert_non_null(strstr(err.msg, "element 0"));
    cfg.tools = "[{\"type\": ";
    cfg.tools_len = strlen(cfg.tools);
    assert_int_equal(swa_chat_parser_create(&cfg, &p, &err), SWA_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "JSON"));
    cfg.tools = NULL;
    cfg.tools_len = 0;
    cfg.format = (swa_tool_format)99;
    assert_int_equal(swa_chat_parser_create(&cfg, &p, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_chat_parser_feed(NULL, "x", 1, NULL, NULL), SWA_ERR_INVALID_ARG);
}

/* text[0..n) read under cfg: one call, get_weather with PARIS, and no content. */
static void expect_paris_call(const swa_chat_parse_config *cfg, const char *text, size_t n)
{
    swa_chat_parser *p = NULL;
    swa_chat_msg m;
    assert_int_equal(swa_chat_parse(cfg, text, n, &p, NULL), SWA_OK);
    swa_chat_parser_message(p, &m);
    assert_int_equal(m.n_calls, 1);
    assert_string_equal(m.calls[0].name, "get_weather");
    assert_string_equal(m.calls[0].arguments, PARIS);
    assert_int_equal(m.content_len, 0);
    swa_chat_parser_free(p);
}

/* The grammar that forces a call: a call written as each format writes it matches, reads back
   as that call, and a call to another function or with arguments off the schema does not match. */
static void test_forced_calls(void **state)
{
    static const struct { swa_tool_format format; const char *text; } calls[] = {
        {SWA_TOOL_FORMAT_GENERIC, "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}]}"},
        {SWA_TOOL_FORMAT_HERMES, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}\n</tool_call>"},
        {SWA_TOOL_FORMAT_MISTRAL,
         "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}, \"id\": \"abcDEF123\"}]"},
        {SWA_TOOL_FORMAT_LLAMA3, "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}"},
        {SWA_TOOL_FORMAT_GPT_OSS,
         "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\": \"Paris\"}<|call|>"},
        {SWA_TOOL_FORMAT_COMMAND_R7B, "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", "
                                      "\"parameters\": {\"location\": \"Paris\"}}\n]<|END_ACTION|>"},
        {SWA_TOOL_FORMAT_DEEPSEEK, DS("tool" LB "calls" LB "begin") DS("tool" LB "call" LB "begin") "function"
         DS("tool" LB "sep") "get_weather\n```json\n{\"location\": \"Paris\"}\n```" DS("tool" LB "call" LB "end")
         DS("tool" LB "calls" LB "end")},
        {SWA_TOOL_FORMAT_FUNCTIONARY_V3_1, "<function=get_weather>{\"location\": \"Paris\"}</function>"},
        {SWA_TOOL_FORMAT_FUNCTIONARY_V3_2, "get_weather\n{\"location\": \"Paris\"}"},
        {SWA_TOOL_FORMAT_FIREFUNCTION_V2, " functools[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}]"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        swa_chat_parse_config cfg = swa_chat_parse_config_default();
        swa_grammar *g = NULL, *named = NULL;
        char *text = NULL, *python = NULL, *bad;
        swa_error err;
        size_t len = strlen(calls[i].text);
        cfg.format = calls[i].format;
        cfg.tools = TOOLS;
        cfg.tools_len = strlen(TOOLS);
        if (swa_tool_call_grammar(&cfg, NULL, 1, &text, &err) != SWA_OK) fail_msg("%s: %s", swa_tool_format_name(cfg.format), err.msg);
        if (swa_grammar_parse(text, strlen(text), NULL, &g, &err) != SWA_OK) fail_msg("%s: %s\n%s", swa_tool_format_name(cfg.format), err.msg, text);
        if (swa_grammar_match(g, calls[i].text, len, NULL, &err) != SWA_OK) fail_msg("%s: no match\n%s", swa_tool_format_name(cfg.format), text);
        if (swa_tool_call_trigger(cfg.format)) {             /* a lazy grammar's trigger opens every call */
            const char *trigger = swa_tool_call_trigger(cfg.format);
            if (strncmp(calls[i].text, trigger, strlen(trigger))) fail_msg("%s: trigger %s", swa_tool_format_name(cfg.format), trigger);
        } else if (cfg.format != SWA_TOOL_FORMAT_FUNCTIONARY_V3_2) {
            fail_msg("%s: no trigger", swa_tool_format_name(cfg.format));
        }
        expect_paris_call(&cfg, calls[i].text, len);
        bad = (char *)malloc(len + 1);                      /* arguments off the schema */
        memcpy(bad, calls[i].text, len + 1);
        memcpy(strstr(bad, "\"location\""), "\"locatioN\"", 10);
        assert_int_equal(swa_grammar_match(g, bad, len, NULL, NULL), SWA_ERR_NO_MATCH);
        free(bad);
        assert_int_equal(swa_tool_call_grammar(&cfg, "python", 0, &python, NULL), SWA_OK);   /* a named choice */
        assert_int_equal(swa_grammar_parse(python, strlen(python), NULL, &named, NULL), SWA_OK);
        assert_int_equal(swa_grammar_match(named, calls[i].text, len, NULL, NULL), SWA_ERR_NO_MATCH);
        swa_grammar_free(named);
        swa_grammar_free(g);
        free(python);
        free(text);
    }
    {
        swa_chat_parse_config cfg = swa_chat_parse_config_default();
        char *text = NULL;
        swa_error err;
        cfg.format = SWA_TOOL_FORMAT_HERMES;
        cfg.tools = TOOLS;
        cfg.tools_len = strlen(TOOLS);
        assert_int_equal(swa_tool_call_grammar(&cfg, "rm_rf", 0, &text, &err), SWA_ERR_INVALID_ARG);
        assert_non_null(strstr(err.msg, "rm_rf"));
        cfg.format = SWA_TOOL_FORMAT_CONTENT;
        assert_int_equal(swa_tool_call_grammar(&cfg, NULL, 0, &text, &err), SWA_ERR_INVALID_ARG);
        assert_null(text);
    }
}

/* ---- markers held as control tokens ----
   Mistral's tekken vocabularies hold [TOOL_CALLS], [CALL_ID] and [ARGS] as control tokens, which
   a detokenizer writes as nothing. The vocabulary here: <unk> <s> </s>, the 256 byte tokens (any
   text), then three control tokens. */
enum { MK_BYTES = 3, MK_TOOL_CALLS = 3 + 256, MK_ARGS, MK_INST, MK_N };

static swa_vocab *marker_vocab(swa_gguf **g, uint8_t **bytes)
{
    static const char *const extra[] = {"[TOOL_CALLS]", "[ARGS]", "[INST]"};
    gw_writer *w = gw_new(3);
    tu_small_vocab(w, extra, 3, 3);
    gw_kv_bool(w, "tokenizer.ggml.add_space_prefix", 0);
    return tu_vocab_load(w, g, bytes);
}

/* The tokens of "[TOOL_CALLS]get_weather[ARGS]{...}" with the markers as control tokens, and an
   [INST] among them; then the decoder's text. */
static size_t marker_text(const swa_vocab *v, const char *const *markers, size_t n_markers, char *out, size_t cap)
{
    static const char name[] = "get_weather", args[] = "{\"location\": \"Paris\"}";
    int32_t tok[64];
    size_t n = 0, k, used = 0;
    swa_decoder d;
    tok[n++] = MK_TOOL_CALLS;
    for (k = 0; name[k]; k++) tok[n++] = MK_BYTES + (unsigned char)name[k];
    tok[n++] = MK_INST;                                     /* not a marker: nothing either way */
    tok[n++] = MK_ARGS;
    for (k = 0; args[k]; k++) tok[n++] = MK_BYTES + (unsigned char)args[k];
    swa_decoder_init(&d, v);
    assert_null(d.markers);                                 /* none unless asked */
    d.markers = markers;
    d.n_markers = n_markers;
    for (k = 0; k < n; k++) used += swa_decoder_push(&d, tok[k], out + used, cap - used);
    return used + swa_decoder_flush(&d, out + used, cap - used);
}

static void test_marker_lists(void **state)
{
    static const struct { swa_tool_format f; const char *marker; } has[] = {   /* llama.cpp's preserved tokens */
        {SWA_TOOL_FORMAT_MISTRAL, "[TOOL_CALLS]"}, {SWA_TOOL_FORMAT_MISTRAL, "[ARGS]"},
        {SWA_TOOL_FORMAT_MISTRAL, "[CALL_ID]"}, {SWA_TOOL_FORMAT_GPT_OSS, "<|channel|>"},
        {SWA_TOOL_FORMAT_GPT_OSS, "<|message|>"}, {SWA_TOOL_FORMAT_GPT_OSS, "<|constrain|>"},
        {SWA_TOOL_FORMAT_GPT_OSS, "<|start|>"}, {SWA_TOOL_FORMAT_GPT_OSS, "<|end|>"},
        {SWA_TOOL_FORMAT_HERMES, "<tool_call>"}, {SWA_TOOL_FORMAT_HERMES, "</tool_call>"},
        {SWA_TOOL_FORMAT_HERMES, "<think>"}, {SWA_TOOL_FORMAT_COMMAND_R7B, "<|START_ACTION|>"},
        {SWA_TOOL_FORMAT_COMMAND_R7B, "<|END_THINKING|>"}, {SWA_TOOL_FORMAT_DEEPSEEK, DS("tool" LB "sep")},
        {SWA_TOOL_FORMAT_DEEPSEEK, DS("tool" LB "calls" LB "begin")}, {SWA_TOOL_FORMAT_LLAMA3, "<|python_tag|>"},
        {SWA_TOOL_FORMAT_FUNCTIONARY_V3_1, "<|python_tag|>"}, {SWA_TOOL_FORMAT_FIREFUNCTION_V2, " functools["},
    };
    size_t i, k, n;
    (void)state;
    for (i = 0; i < sizeof has / sizeof has[0]; i++) {
        const char *const *m = swa_tool_format_markers(has[i].f, &n);
        for (k = 0; k < n && strcmp(m[k], has[i].marker); k++) {}
        if (k == n) fail_msg("%s lacks %s", swa_tool_format_name(has[i].f), has[i].marker);
    }
    swa_tool_format_markers(SWA_TOOL_FORMAT_GPT_OSS, &n);
    assert_int_equal(n, 7);
    assert_null(swa_tool_format_markers((swa_tool_format)SWA_TOOL_FORMAT_COUNT, &n));
    assert_int_equal(n, 0);
}

static void test_control_markers(void **state)
{
    static const char expect[] = "[TOOL_CALLS]get_weather[ARGS]{\"location\": \"Paris\"}";
    swa_gguf *g;
    uint8_t *bytes;
    swa_vocab *v = marker_vocab(&g, &bytes);
    swa_chat_parse_config cfg = swa_chat_parse_config_default();
    swa_chat_parser *p = NULL;
    swa_chat_msg m;
    char text[256];
    size_t n, n_markers;
    const char *const *markers = swa_tool_format_markers(SWA_TOOL_FORMAT_MISTRAL, &n_markers);
    (void)state;
    cfg.format = SWA_TOOL_FORMAT_MISTRAL;
    cfg.tools = TOOLS;
    cfg.tools_len = strlen(TOOLS);
    n = marker_text(v, NULL, 0, text, sizeof text);         /* default: control tokens are nothing */
    assert_int_equal(n, strlen("get_weather{\"location\": \"Paris\"}"));
    assert_memory_equal(text, "get_weather{\"location\": \"Paris\"}", n);
    assert_int_equal(swa_chat_parse(&cfg, text, n, &p, NULL), SWA_OK);
    swa_chat_parser_message(p, &m);
    assert_int_equal(m.n_calls, 0);                          /* the call cannot be read */
    swa_chat_parser_free(p);
    n = marker_text(v, markers, n_markers, text, sizeof text);   /* the format's markers: their text */
    assert_int_equal(n, strlen(expect));
    assert_memory_equal(text, expect, n);
    expect_paris_call(&cfg, text, n);
    swa_vocab_free(v);
    swa_gguf_close(g);
    free(bytes);
}

/* The allowed tokens at the next step: those with probability under flat logits. */
static int32_t allowed(swa_sampler *s, int32_t *ids, int32_t cap)
{
    float logits[MK_N];
    swa_token_prob prob[MK_N];
    int32_t n = 0, i;
    memset(logits, 0, sizeof logits);
    assert_int_equal(swa_sampler_dist(s, logits, prob, MK_N, &n, NULL), SWA_OK);
    for (i = 0; i < n && i < cap; i++) ids[i] = prob[i].id;
    return n;
}

static int cmp_id(const void *a, const void *b)
{
    return *(const int32_t *)a < *(const int32_t *)b ? -1 : *(const int32_t *)a > *(const int32_t *)b;
}

/* A forced call in Mistral's form begins with "[TOOL_CALLS]": the control token holding it is
   allowed there (besides the plain "[" byte), no other control token is, and once taken the
   grammar goes on after the marker's text. */
static void test_grammar_control_marker(void **state)
{
    swa_gguf *g;
    uint8_t *bytes;
    swa_vocab *v = marker_vocab(&g, &bytes);
    swa_chat_parse_config cfg = swa_chat_parse_config_default();
    swa_sampler_config sc = swa_sampler_config_default();
    swa_sampler *s;
    swa_grammar *gr;
    char *gbnf = NULL;
    int32_t ids[MK_N], n;
    float logits[MK_N];
    (void)state;
    cfg.format = SWA_TOOL_FORMAT_MISTRAL;
    cfg.tools = TOOLS;
    cfg.tools_len = strlen(TOOLS);
    assert_int_equal(swa_tool_call_grammar(&cfg, "get_weather", 0, &gbnf, NULL), SWA_OK);
    assert_int_equal(swa_grammar_parse(gbnf, strlen(gbnf), NULL, &gr, NULL), SWA_OK);
    sc.temperature = 1.0f, sc.top_k = 0, sc.top_p = 1.0f, sc.min_p = 0.0f;
    assert_int_equal(swa_sampler_create(&sc, MK_N, &s, NULL), SWA_OK);
    assert_int_equal(swa_sampler_set_grammar(s, gr, v, NULL), SWA_OK);
    n = allowed(s, ids, MK_N);
    qsort(ids, (size_t)n, sizeof ids[0], cmp_id);
    assert_int_equal(n, 2);
    assert_int_equal(ids[0], MK_BYTES + '[');
    assert_int_equal(ids[1], MK_TOOL_CALLS);
    swa_sampler_accept(s, MK_TOOL_CALLS);
    assert_int_equal(swa_sampler_status(s, NULL), SWA_OK);
    n = allowed(s, ids, MK_N);                               /* after the marker: its array */
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], MK_BYTES + '[');
    memset(logits, 0, sizeof logits);
    logits[MK_TOOL_CALLS] = 50;                              /* tempting, and refused now */
    assert_int_equal(swa_sampler_sample(s, logits), MK_BYTES + '[');
    swa_sampler_free(s);
    swa_grammar_free(gr);
    free(gbnf);
    swa_vocab_free(v);
    swa_gguf_close(g);
    free(bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_answers),
        cmocka_unit_test(test_streamed_answers),
        cmocka_unit_test(test_held_back),
        cmocka_unit_test(test_streamed_arguments),
        cmocka_unit_test(test_argument_pieces),
        cmocka_unit_test(test_random_arguments),
        cmocka_unit_test(test_detection),
        cmocka_unit_test(test_reasoning_names_and_prompts),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_forced_calls),
        cmocka_unit_test(test_marker_lists),
        cmocka_unit_test(test_control_markers),
        cmocka_unit_test(test_grammar_control_marker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
