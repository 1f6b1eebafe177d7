/* The Jinja engine against jinja2 and transformers, whose outputs tools/reference/chat_templates.py
   wrote to tests/data/jinja/:
   - cases.json: small templates over every statement, filter, test and method, with jinja2's
     output or its error message (a syntax error need only be refused, in the engine's words);
   - chat_templates_txt.json: the 42 real templates of tests/data/chat_templates.txt (those of
     llama.cpp's tests: Phi-4, Mistral v7, Command R, Granite, ChatGLM...) x five conversations;
   - expected/: 28 real chat templates (templates/) x the conversations in conversations/
     (plain, system prompt, several turns, tools with calls and results, reasoning, Unicode,
     content parts, null content), with the generation prompt and, for two, without, as
     transformers' apply_chat_template(..., tokenize=False) renders them, or its error (.err);
   and the sandbox's limits, the API's arguments and swa-template. */
#define _POSIX_C_SOURCE 200809L
#define SWA_INTERNALS
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tests/testutil.h"
#include "tests/programs.h"

#define DATA "tests/data/jinja/"
#define CLOCK 1721995200   /* the reference's strftime_now: 2024-07-26 12:00 UTC */

static swa__json *read_json(const char *path, char **text)
{
    size_t n;
    swa__json *j = NULL;
    swa_error err;
    *text = tu_read_text(path, &n);
    if (!*text) fail_msg("%s: cannot read", path);
    if (swa__json_parse(*text, n, &j, &err) != SWA_OK) fail_msg("%s: %s", path, err.msg);
    return j;
}

/* s with its control characters escaped, cut to fit a message */
static const char *shown(const char *s, size_t n, char *buf, size_t cap)
{
    size_t i, k = 0;
    for (i = 0; i < n && k + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        k += (size_t)(c < 0x20 ? snprintf(buf + k, cap - k, "\\x%02x", c) : snprintf(buf + k, cap - k, "%c", c));
    }
    buf[k] = '\0';
    return buf;
}

static void test_cases_as_jinja2(void **state)
{
    char *text, a[400], b[400];
    swa__json *cases = read_json(DATA "cases.json", &text);
    size_t i;
    (void)state;
    for (i = 0; i < cases->n; i++) {
        const swa__json *c = &cases->items[i], *tmpl = swa__json_get(c, "template"), *vars = swa__json_get(c, "vars");
        const swa__json *want = swa__json_get(c, "output"), *error = swa__json_get(c, "error");
        swa_jinja *t = NULL;
        char *out = NULL;
        size_t n = 0;
        swa_error err;
        swa_status st = swa_jinja_parse(tmpl->str, tmpl->len, &t, &err);
        if (swa__json_get(c, "syntax_error")) {
            if (st != SWA_ERR_FORMAT) fail_msg("case %zu (%s): parsed, jinja2 refuses it", i, tmpl->str);
            continue;
        }
        if (st != SWA_OK) fail_msg("case %zu (%s): %s", i, tmpl->str, err.msg);
        st = swa_jinja_render(t, vars->str, vars->len, &out, &n, &err);
        if (want && st != SWA_OK) fail_msg("case %zu (%s): %s", i, tmpl->str, err.msg);
        if (want && (n != want->len || memcmp(out, want->str, n)))
            fail_msg("case %zu (%s):\n  got  %s\n  want %s", i, tmpl->str, shown(out, n, a, sizeof a), shown(want->str, want->len, b, sizeof b));
        if (error && st == SWA_OK) fail_msg("case %zu (%s): rendered, jinja2 fails with %s", i, tmpl->str, error->str);
        if (error && !strstr(err.msg, error->str)) fail_msg("case %zu (%s): failed with %s, jinja2 with %s", i, tmpl->str, err.msg, error->str);
        swa_jinja_text_free(out);
        swa_jinja_free(t);
    }
    SWA_FREE(cases);
    free(text);
}

/* One rendering of expected/INDEX's line name: TEMPLATE.CONVERSATION.gen|nogen[.err] */
static void check_rendering(const char *name, const swa__json *tokens)
{
    char path[512], stem[256], conv[64], *tmpl, *want, *messages, *tools, *kwargs, *out = NULL, a[400], b[400];
    const char *dot_err = strstr(name, ".err"), *gen_at;
    size_t tlen, wlen, n = 0;
    swa_jinja *t = NULL;
    swa_jinja_chat chat;
    swa_error err;
    swa_status st;
    const swa__json *tok;
    int is_err = dot_err && !dot_err[4];
    gen_at = strstr(name, is_err ? (strstr(name, ".nogen.err") ? ".nogen" : ".gen") : (strstr(name, ".nogen") ? ".nogen" : ".gen"));
    assert_non_null(gen_at);
    {   /* TEMPLATE is everything before .CONVERSATION */
        const char *c = gen_at;
        while (c > name && c[-1] != '.') c--;
        snprintf(stem, sizeof stem, "%.*s", (int)(c - 1 - name), name);
        snprintf(conv, sizeof conv, "%.*s", (int)(gen_at - c), c);
    }
    snprintf(path, sizeof path, DATA "templates/%s.jinja", stem);
    assert_non_null(tmpl = tu_read_text(path, &tlen));
    snprintf(path, sizeof path, DATA "expected/%s", name);
    assert_non_null(want = tu_read_text(path, &wlen));
    snprintf(path, sizeof path, DATA "conversations/%s.messages.json", conv);
    assert_non_null(messages = tu_read_text(path, NULL));
    snprintf(path, sizeof path, DATA "conversations/%s.tools.json", conv);
    tools = tu_read_text(path, NULL);
    snprintf(path, sizeof path, DATA "conversations/%s.kwargs.json", conv);
    assert_non_null(kwargs = tu_read_text(path, NULL));
    memset(&chat, 0, sizeof chat);
    chat.messages = messages;
    chat.tools = tools;
    chat.kwargs = kwargs;
    chat.add_generation_prompt = strncmp(gen_at, ".gen", 4) == 0;
    tok = swa__json_get(tokens, stem);
    if (tok && swa__json_get(tok, "bos_token")->kind == SWA__JSON_STRING) chat.bos_token = swa__json_get(tok, "bos_token")->str;
    if (tok && swa__json_get(tok, "eos_token")->kind == SWA__JSON_STRING) chat.eos_token = swa__json_get(tok, "eos_token")->str;
    if (swa_jinja_parse(tmpl, tlen, &t, &err) != SWA_OK) fail_msg("%s: %s", stem, err.msg);
    st = swa_jinja_apply(t, &chat, &out, &n, &err);
    if (is_err) {
        if (wlen > 200) want[200] = '\0';   /* the message may be cut to fit swa_error */
        if (st == SWA_OK) fail_msg("%s: rendered, transformers fails with %s", name, want);
        if (!strstr(err.msg, want)) fail_msg("%s: failed with \"%s\", transformers with \"%s\"", name, err.msg, want);
    } else {
        size_t i = 0;
        if (st != SWA_OK) fail_msg("%s: %s", name, err.msg);
        while (i < n && i < wlen && out[i] == want[i]) i++;
        if (n != wlen || i < n) {
            size_t from = i > 60 ? i - 60 : 0;
            fail_msg("%s: differs at byte %zu:\n  got  ...%s\n  want ...%s", name, i, shown(out + from, (n > from ? n - from : 0) < 120 ? n - from : 120, a, sizeof a),
                     shown(want + from, (wlen > from ? wlen - from : 0) < 120 ? wlen - from : 120, b, sizeof b));
        }
    }
    swa_jinja_text_free(out);
    swa_jinja_free(t);
    free(tmpl);
    free(want);
    free(messages);
    free(tools);
    free(kwargs);
}

static void test_real_templates_as_transformers(void **state)
{
    char *index = tu_read_text(DATA "expected/INDEX", NULL), *line, *text;
    swa__json *tokens = read_json(DATA "tokens.json", &text);
    int count = 0;
    (void)state;
    assert_non_null(index);
    swa__jinja_set_clock(CLOCK);
    for (line = strtok(index, "\n"); line; line = strtok(NULL, "\n")) {
        check_rendering(line, tokens);
        count++;
    }
    swa__jinja_set_clock(0);
    assert_true(count >= 280);
    SWA_FREE(tokens);
    free(text);
    free(index);
}

/* The template of entry `index` (from 0) of tests/data/chat_templates.txt: its text after the
   header line up to the next entry, without its last newline */
static char *chat_templates_txt_entry(char *all, int64_t index, size_t *len)
{
    char *p = all, *body, *end;
    int64_t k = -1;
    while ((p = strstr(p, "#### ")) != NULL) {
        if ((p == all || p[-1] == '\n') && ++k == index) break;
        p += 5;
    }
    if (!p || !(body = strchr(p, '\n'))) return NULL;
    body++;
    if (!(end = strstr(body, "\n#### "))) end = body + strlen(body) - (body[0] && body[strlen(body) - 1] == '\n');
    *len = (size_t)(end - body);
    return body;
}

/* The real templates of tests/data/chat_templates.txt (llama.cpp's tests) x five conversations */
static void test_chat_templates_txt_as_transformers(void **state)
{
    char *text, *all = tu_read_text("tests/data/chat_templates.txt", NULL), path[256];
    swa__json *records = read_json(DATA "chat_templates_txt.json", &text);
    size_t i;
    (void)state;
    assert_non_null(all);
    for (i = 0; i < records->n; i++) {
        const swa__json *r = &records->items[i], *head = swa__json_get(r, "entry"), *conv = swa__json_get(r, "conversation");
        const swa__json *want = swa__json_get(r, "output"), *error = swa__json_get(r, "error");
        char *copy = (char *)malloc(strlen(all) + 1), *src, *messages, *tools, *kwargs, *out = NULL;
        size_t len = 0, n = 0;
        swa_jinja *t = NULL;
        swa_jinja_chat chat;
        swa_error err;
        swa_status st;
        assert_non_null(copy);
        strcpy(copy, all);
        if (!(src = chat_templates_txt_entry(copy, swa__json_get(r, "index")->i, &len))) fail_msg("no entry %s", head->str);
        snprintf(path, sizeof path, DATA "conversations/%s.messages.json", conv->str);
        assert_non_null(messages = tu_read_text(path, NULL));
        snprintf(path, sizeof path, DATA "conversations/%s.tools.json", conv->str);
        tools = tu_read_text(path, NULL);
        snprintf(path, sizeof path, DATA "conversations/%s.kwargs.json", conv->str);
        assert_non_null(kwargs = tu_read_text(path, NULL));
        memset(&chat, 0, sizeof chat);
        chat.messages = messages;
        chat.tools = tools;
        chat.kwargs = kwargs;
        chat.add_generation_prompt = 1;
        chat.bos_token = "<s>";
        chat.eos_token = "</s>";
        if (swa_jinja_parse(src, len, &t, &err) != SWA_OK) fail_msg("%s: %s", head->str, err.msg);
        st = swa_jinja_apply(t, &chat, &out, &n, &err);
        if (want && (st != SWA_OK || n != want->len || memcmp(out, want->str, n)))
            fail_msg("%s, %s: %s", head->str, conv->str, st != SWA_OK ? err.msg : "differs from transformers");
        if (error && (st == SWA_OK || strncmp(err.msg, error->str, strlen(err.msg) < error->len ? strlen(err.msg) : error->len)))
            fail_msg("%s, %s: want the error %s, got %s", head->str, conv->str, error->str, st == SWA_OK ? "a text" : err.msg);
        swa_jinja_text_free(out);
        swa_jinja_free(t);
        free(copy);
        free(messages);
        free(tools);
        free(kwargs);
    }
    assert_true(records->n >= 200);
    SWA_FREE(records);
    free(text);
    free(all);
}

static swa_status render(const char *src, const char *vars, char **out, swa_error *err)
{
    swa_jinja *t = NULL;
    size_t n;
    swa_status st = swa_jinja_parse(src, strlen(src), &t, err);
    *out = NULL;
    if (st != SWA_OK) return st;
    st = swa_jinja_render(t, vars, vars ? strlen(vars) : 0, out, &n, err);
    swa_jinja_free(t);
    return st;
}

/* A hostile template meets a limit and an error, never a hang or a crash */
static void test_sandbox_limits(void **state)
{
    static const struct { const char *src; swa_status want; } cases[] = {
        {"{% for i in range(100000) %}{% for j in range(200) %}{% endfor %}{% endfor %}", SWA_ERR_UNSUPPORTED},
        {"{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", SWA_ERR_UNSUPPORTED},
        {"{{ range(1000000)|list }}", SWA_ERR_UNSUPPORTED},
        {"{{ 'x' * 4000000000 }}", SWA_ERR_NOMEM},
        {"{% set ns = namespace(s='xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx') %}{% for i in range(40) %}"
         "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}", SWA_ERR_UNSUPPORTED},
        {"{{ 9223372036854775807 + 1 }}", SWA_ERR_UNSUPPORTED},
        {"{{ [].append(1) }}", SWA_ERR_INVALID_ARG},
        {"{{ raise_exception('no') }}", SWA_ERR_INVALID_ARG},
        {"{% include 'x' %}", SWA_ERR_FORMAT},
        {"{% for x in y recursive %}{% endfor %}", SWA_ERR_UNSUPPORTED},
    };
    char deep[4096], *out;
    swa_error err;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        swa_status st = render(cases[i].src, NULL, &out, &err);
        if (st != cases[i].want) fail_msg("%s: status %s (%s), want %s", cases[i].src, swa_status_str(st), err.msg, swa_status_str(cases[i].want));
        assert_null(out);
    }
    for (i = 0; i < 1500; i++) {   /* nesting past the parser's depth */
        deep[2 + i] = '(';
        deep[1503 + i] = ')';
    }
    memcpy(deep, "{{", 2);
    deep[1502] = '1';
    memcpy(deep + 3003, "}}", 3);
    assert_int_equal(render(deep, NULL, &out, &err), SWA_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "nested deeper"));
    assert_int_equal(render("{{ x }}", "[1]", &out, &err), SWA_ERR_INVALID_ARG);   /* variables are an object */
    assert_int_equal(render("{{ x }}", "{\"x\": ", &out, &err), SWA_ERR_FORMAT);
    assert_int_equal(render("{{ raise_exception('Only user and assistant roles are supported!') }}", NULL, &out, &err), SWA_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "Only user and assistant roles are supported!");
}

static void test_api_arguments(void **state)
{
    swa_jinja *t = NULL;
    swa_jinja_chat chat;
    char *out = (char *)1;
    size_t n = 7;
    swa_error err;
    assert_int_equal(swa_jinja_parse(NULL, 3, &t, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_jinja_parse("x", 1, NULL, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_jinja_parse("{% if x %}", 10, &t, &err), SWA_ERR_FORMAT);
    assert_null(t);
    assert_non_null(strstr(err.msg, "endif"));
    const char *src = "{{ messages|length }}|{{ tools }}|{{ add_generation_prompt }}|{{ bos_token }}{{ eos_token }}";
    (void)state;
    assert_int_equal(swa_jinja_parse(src, strlen(src), &t, &err), SWA_OK);
    assert_int_equal(swa_jinja_render(NULL, NULL, 0, &out, &n, &err), SWA_ERR_INVALID_ARG);
    assert_null(out);
    assert_int_equal(n, 0);
    memset(&chat, 0, sizeof chat);
    assert_int_equal(swa_jinja_apply(t, &chat, &out, &n, &err), SWA_ERR_INVALID_ARG);
    chat.messages = "[{\"role\": \"user\", \"content\": null}]";
    assert_int_equal(swa_jinja_apply(t, &chat, &out, &n, &err), SWA_OK);
    assert_string_equal(out, "1|None|False|");
    assert_int_equal(n, 13);
    swa_jinja_text_free(out);
    chat.tools = "{}";
    assert_int_equal(swa_jinja_apply(t, &chat, &out, &n, &err), SWA_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "tools"));
    chat.tools = "[]";
    chat.add_generation_prompt = 1;
    chat.bos_token = "<s>";
    chat.kwargs = "{\"eos_token\": \"E\", \"tools\": 5}";   /* kwargs override */
    assert_int_equal(swa_jinja_apply(t, &chat, &out, &n, &err), SWA_OK);
    assert_string_equal(out, "1|5|True|<s>E");
    swa_jinja_text_free(out);
    swa_jinja_text_free(NULL);
    swa_jinja_free(t);
    swa_jinja_free(NULL);
    {   /* the shipped model has no template */
        swa_model *m = NULL;
        assert_int_equal(swa_model_jinja_apply(NULL, &chat, &out, &n, &err), SWA_ERR_INVALID_ARG);
        if (swa_model_load("examples/models/swa-stories.gguf", &m, &err) == SWA_OK) {
            assert_int_equal(swa_model_jinja_apply(m, &chat, &out, &n, &err), SWA_ERR_NOT_FOUND);
            assert_null(out);
            swa_model_free(m);
        }
    }
}

/* transformers' message normalisation: null members dropped, reasoning under both names */
static void test_reasoning_aliases(void **state)
{
    swa_jinja *t = NULL;
    swa_jinja_chat chat;
    char *out;
    swa_error err;
    const char *src = "{% for m in messages %}{{ m|tojson }}\n{% endfor %}";
    (void)state;
    assert_int_equal(swa_jinja_parse(src, strlen(src), &t, &err), SWA_OK);
    memset(&chat, 0, sizeof chat);
    chat.messages = "[{\"role\": \"assistant\", \"content\": \"a\", \"reasoning\": \"r\", \"tool_calls\": null},"
                    " {\"role\": \"assistant\", \"reasoning_content\": \"x\", \"content\": \"b\"},"
                    " {\"role\": \"assistant\", \"content\": \"c\", \"thinking\": \"t\", \"reasoning_content\": \"y\"}]";
    assert_int_equal(swa_jinja_apply(t, &chat, &out, NULL, &err), SWA_OK);
    /* as transformers' {"thinking": r, **message, "reasoning_content": r} */
    assert_string_equal(out, "{\"thinking\": \"r\", \"role\": \"assistant\", \"content\": \"a\", \"reasoning\": \"r\", \"reasoning_content\": \"r\"}\n"
                             "{\"thinking\": \"x\", \"role\": \"assistant\", \"reasoning_content\": \"x\", \"content\": \"b\"}\n"
                             "{\"thinking\": \"t\", \"role\": \"assistant\", \"content\": \"c\", \"reasoning_content\": \"y\"}\n");
    swa_jinja_text_free(out);
    swa_jinja_free(t);
}

static void test_swa_template_program(void **state)
{
    char cmd[1024], *out;
    int rc;
    (void)state;
#ifdef _WIN32
    skip();
#endif
    if (access(PROGRAM_FILE("swa-template"), X_OK) != 0) { printf("skipped: %sswa-template is not built\n", SWA_TEST_BIN); skip(); }
    snprintf(cmd, sizeof cmd, PROGRAM("swa-template") " --template-file " DATA "templates/Qwen-Qwen2.5-7B-Instruct.jinja"
             " --messages " DATA "conversations/plain.messages.json --no-generation-prompt");
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
                             "<|im_start|>user\nHello!<|im_end|>\n");
    free(out);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-template") " --template-file " DATA "templates/google-gemma-2-2b-it.jinja"
             " --messages " DATA "conversations/system.messages.json 2>&1");
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "System role not supported"));
    free(out);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-template") " --template-file " DATA "templates/google-gemma-2-2b-it.jinja"
             " --messages " DATA "conversations/plain.messages.json --bos-token B --kwargs '{\"x\": 1}'");
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "B<start_of_turn>user\nHello!<end_of_turn>\n<start_of_turn>model\n");
    free(out);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-template") " --messages x.json 2>/dev/null");
    assert_int_equal(tu_run(cmd), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases_as_jinja2),
        cmocka_unit_test(test_real_templates_as_transformers),
        cmocka_unit_test(test_chat_templates_txt_as_transformers),
        cmocka_unit_test(test_sandbox_limits),
        cmocka_unit_test(test_api_arguments),
        cmocka_unit_test(test_reasoning_aliases),
        cmocka_unit_test(test_swa_template_program),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
