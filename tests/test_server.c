/* build/swa-server driven by clients we did not write: curl (and, through tests/server_client.sh,
   the official openai Python client when python3 can make a venv), and by our load generator
   with faults. Each server listens on 127.0.0.1 on a port the system picks (--port 0), so runs
   side by side do not collide. Expectations come from outside the server: the text swa-generate
   prints for the same greedy request, the same stream alone and beside another, the statuses
   the OpenAI API documents. After each test every slot must be free (/metrics) and the server
   must answer the next request. Skips, saying why, when swa-server was not built (no
   libmicrohttpd-dev/libcjson-dev) or curl is absent. */
#define _POSIX_C_SOURCE 200809L
#define SWA_INTERNALS   /* the library's JSON reader, to take the structured outputs apart */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tests/programs.h"
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/testutil.h"

#define MODEL "examples/models/swa-stories.gguf"

typedef struct server {
    pid_t pid;
    int port;
    char log[128];
} server;

static server main_srv;
static server *extra_srv;   /* a test's own server, stopped by the teardown if the test failed */
static const char *skip_reason;

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (char *)malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (buf) buf[n] = '\0';
    fclose(f);
    return buf;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Start swa-server with these extra arguments; 0 when it did not say "ready" in 20 s. */
static int server_start(server *s, const char *args)
{
    char cmd[1024];
    int i;
    tu_tmp_path(s->log, sizeof s->log, "server_log");
    snprintf(cmd, sizeof cmd, "exec %s -m %s --port 0 -t 2 %s 2>%s", PROGRAM("swa-server"), MODEL, args, s->log);
    s->pid = fork();
    if (s->pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    for (i = 0; i < 200; i++) {
        char *log = read_text(s->log), *p;
        if (log && (p = strstr(log, "ready on http://127.0.0.1:")) != NULL) {
            s->port = atoi(p + strlen("ready on http://127.0.0.1:"));
            free(log);
            return 1;
        }
        free(log);
        if (waitpid(s->pid, NULL, WNOHANG) == s->pid) { s->pid = 0; return 0; }
        sleep_ms(100);
    }
    return 0;
}

/* Stop it with SIGTERM: it must exit 0 (no crash on the way). */
static int server_stop(server *s)
{
    int status = 0, i;
    if (s->pid <= 0) return 1;
    kill(s->pid, SIGTERM);
    for (i = 0; i < 100 && waitpid(s->pid, &status, WNOHANG) != s->pid; i++) sleep_ms(100);
    if (i == 100) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, &status, 0);
        s->pid = 0;
        return 0;
    }
    s->pid = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char *log = read_text(s->log);
        print_message("swa-server exited with status %d; its log:\n%s\n", status, log ? log : "");
        free(log);
        return 0;
    }
    unlink(s->log);
    return 1;
}

/* curl's output for a request: -s, the given options and body, to the given path. */
static char *curl(const server *s, const char *opts, const char *path, const char *body, int *rc)
{
    char *cmd, *out;
    size_t n = strlen(body ? body : "") + strlen(path) + 1024;
    int r;
    cmd = (char *)malloc(n);
    assert_non_null(cmd);
    /* the body through a quoted here-document: no shell quoting of the JSON */
    if (body)
        snprintf(cmd, n, "curl -s %s --data-binary @- http://127.0.0.1:%d%s <<'SWA_EOF'\n%s\nSWA_EOF\n", opts, s->port, path, body);
    else
        snprintf(cmd, n, "curl -s %s http://127.0.0.1:%d%s", opts, s->port, path);
    out = tu_capture(cmd, &r);
    if (rc) *rc = r;
    free(cmd);
    return out;
}

/* The JSON-escaped form of text, as cJSON writes it (", \, and control characters). */
static char *json_escape(const char *t)
{
    char *o = (char *)malloc(6 * strlen(t) + 1), *p = o;
    assert_non_null(o);
    for (; *t; t++) {
        unsigned char c = (unsigned char)*t;
        if (c == '"' || c == '\\') { *p++ = '\\'; *p++ = (char)c; }
        else if (c == '\n') { *p++ = '\\'; *p++ = 'n'; }
        else if (c == '\t') { *p++ = '\\'; *p++ = 't'; }
        else if (c == '\r') { *p++ = '\\'; *p++ = 'r'; }
        else if (c < 0x20) p += sprintf(p, "\\u%04x", c);
        else *p++ = (char)c;
    }
    *p = '\0';
    return o;
}

/* The concatenation of every "key":"..." string value in s (escaped as written): the text of a
   stream's events, or of a response's one choice. */
static char *join_strings(const char *s, const char *key)
{
    char pat[64], *out = (char *)malloc(strlen(s) + 1), *o = out;
    const char *p = s;
    assert_non_null(out);
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    while ((p = strstr(p, pat)) != NULL) {
        p += strlen(pat);
        while (*p && *p != '"') {
            if (*p == '\\' && p[1]) *o++ = *p++;
            *o++ = *p++;
        }
    }
    *o = '\0';
    return out;
}

/* The answer to body at path on the main server (opts: curl's, "-N" for a stream): its `key`
   strings joined are want, and it holds `has` and, unless NULL, `also`. */
static void expect_joined(const char *opts, const char *path, const char *body, const char *key, const char *want,
                          const char *has, const char *also)
{
    char *r = curl(&main_srv, opts, path, body, NULL), *got = join_strings(r, key);
    assert_string_equal(got, want);
    assert_non_null(strstr(r, has));
    if (also) assert_non_null(strstr(r, also));
    free(got);
    free(r);
}

/* s started with these flags as the test's second server, which the teardown stops. */
static void start_extra(server *s, const char *args)
{
    extra_srv = s;
    if (!server_start(s, args)) fail_msg("swa-server %s did not start", args);
}

static long metric(const server *s, const char *name)
{
    char pat[128], *m = curl(s, "", "/metrics", NULL, NULL), *p;
    long v = -1;
    snprintf(pat, sizeof pat, "\n%s ", name);
    if ((p = strstr(m, pat)) != NULL) v = strtol(p + strlen(pat), NULL, 10);
    free(m);
    return v;
}

/* Every slot free (the scheduler frees a slot at its next step: a moment's grace), and a
   well-formed request answered. */
static void assert_server_sound(const server *s)
{
    int i;
    char *r;
    for (i = 0; i < 50 && metric(s, "swa_slots_busy") != 0; i++) sleep_ms(100);
    assert_int_equal(metric(s, "swa_slots_busy"), 0);
    r = curl(s, "", "/v1/completions", "{\"prompt\":\"Once upon a time\",\"max_tokens\":4}", NULL);
    assert_non_null(strstr(r, "\"completion_tokens\":4"));
    free(r);
}

/* What swa-generate prints after the prompt for a greedy run of n tokens. */
static char *generate_greedy(const char *prompt, int n)
{
    char cmd[512], *out, *copy;
    int rc;
    snprintf(cmd, sizeof cmd, "%s -m %s -p '%s' -n %d --temp 0 -t 2 2>/dev/null", PROGRAM("swa-generate"), MODEL, prompt, n);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    assert_memory_equal(out, prompt, strlen(prompt));
    copy = strdup(out + strlen(prompt));
    free(out);
    assert_non_null(copy);
    if (*copy && copy[strlen(copy) - 1] == '\n') copy[strlen(copy) - 1] = '\0';   /* its closing newline */
    return copy;
}

static int setup(void **state)
{
    (void)state;
    if (access(PROGRAM_FILE("swa-server"), X_OK)) {
        skip_reason = "swa-server was not built (apt-get install libmicrohttpd-dev libcjson-dev, then make)";
        return 0;
    }
    if (tu_run("curl --version >/dev/null 2>&1")) {
        skip_reason = "curl is not installed (apt-get install curl)";
        return 0;
    }
    /* 128 positions in the sanitized and emulated builds (SWA_TEST_QUICK), where a token costs
       ~20 times more: the fault that runs a completion to the end of the context stays short */
#ifdef SWA_TEST_QUICK
    if (!server_start(&main_srv, "-np 4 -c 128 --timeout 2")) {
#else
    if (!server_start(&main_srv, "-np 4 -c 512 --timeout 2")) {
#endif
        fail_msg("%s", "swa-server did not start");
    }
    return 0;
}

/* Whether the main server failed to stop cleanly (its exit status under a sanitizer says what it
   found): main's exit status, since cmocka does not count a group teardown's failure. */
static int stop_failed;

static int teardown(void **state)
{
    (void)state;
    if (extra_srv && extra_srv->pid > 0) {
        kill(extra_srv->pid, SIGKILL);
        waitpid(extra_srv->pid, NULL, 0);
    }
    if (main_srv.pid > 0 && !server_stop(&main_srv)) {
        print_message("swa-server did not stop cleanly\n");
        stop_failed = 1;
    }
    return stop_failed ? -1 : 0;
}

#define NEED_SERVER() do { if (skip_reason) { print_message("skipped: %s\n", skip_reason); skip(); } } while (0)

static void test_endpoints(void **state)
{
    char *r;
    int rc;
    (void)state;
    NEED_SERVER();
    r = curl(&main_srv, "", "/health", NULL, &rc);
    assert_string_equal(r, "{\"status\":\"ok\"}");
    free(r);
    r = curl(&main_srv, "", "/v1/models", NULL, NULL);
    assert_non_null(strstr(r, "\"id\":\"swa-stories.gguf\""));
    free(r);
    assert_int_equal(metric(&main_srv, "swa_slots_total"), 4);
    r = curl(&main_srv, "", "/tokenize", "{\"content\":\"Once upon a time\"}", NULL);
    assert_non_null(strstr(r, "\"tokens\":["));
    free(r);
    r = curl(&main_srv, "", "/detokenize", "{\"tokens\":[481,544,260,374]}", NULL);
    assert_string_equal(r, "{\"content\":\" Once upon a time\"}");
    free(r);
}

/* The same greedy request through the server and through swa-generate: the same text, streamed or not. */
static void test_greedy_matches_generate(void **state)
{
    char *want = generate_greedy("Once upon a time", 40), *esc = json_escape(want);
    (void)state;
    NEED_SERVER();
    expect_joined("", "/v1/completions", "{\"prompt\":\"Once upon a time\",\"max_tokens\":40,\"temperature\":0}", "text",
                  esc, "\"finish_reason\":\"length\"", "\"completion_tokens\":40");
    expect_joined("-N", "/v1/completions", "{\"prompt\":\"Once upon a time\",\"max_tokens\":40,\"temperature\":0,\"stream\":true}",
                  "text", esc, "data: [DONE]", NULL);
    free(want);
    free(esc);
    assert_server_sound(&main_srv);
}

/* Two streams at once give each exactly what it gives alone (greedy, different prompts). */
static void test_concurrent_streams(void **state)
{
    const char *b1 = "{\"prompt\":\"Tom had a red ball\",\"max_tokens\":48,\"temperature\":0,\"stream\":true,\"ignore_eos\":true}";
    const char *b2 = "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me about a dog\"}],\"max_tokens\":48,"
                     "\"temperature\":0,\"stream\":true,\"ignore_eos\":true}";
    char *a1, *a2, *t1, *t2, *c1, *c2, cmd[1024], f1[96], f2[96];
    (void)state;
    NEED_SERVER();
    a1 = curl(&main_srv, "-N", "/v1/completions", b1, NULL);
    a2 = curl(&main_srv, "-N", "/v1/chat/completions", b2, NULL);
    t1 = join_strings(a1, "text");
    t2 = join_strings(a2, "content");
    assert_true(strlen(t1) > 20 && strlen(t2) > 20);
    tu_tmp_path(f1, sizeof f1, "stream1");
    tu_tmp_path(f2, sizeof f2, "stream2");
    snprintf(cmd, sizeof cmd,
             "curl -sN --data-binary '%s' http://127.0.0.1:%d/v1/completions > %s & "
             "curl -sN --data-binary '%s' http://127.0.0.1:%d/v1/chat/completions > %s & wait",
             b1, main_srv.port, f1, b2, main_srv.port, f2);
    assert_int_equal(tu_run(cmd), 0);
    free(a1);
    free(a2);
    a1 = read_text(f1);
    a2 = read_text(f2);
    c1 = join_strings(a1, "text");
    c2 = join_strings(a2, "content");
    assert_string_equal(c1, t1);
    assert_string_equal(c2, t2);
    unlink(f1);
    unlink(f2);
    free(a1), free(a2), free(t1), free(t2), free(c1), free(c2);
    assert_server_sound(&main_srv);
}

/* stop strings cut the text before them, streamed or not, also when a stop string spans tokens;
   n choices come back with their own indices. */
static void test_stop_and_n(void **state)
{
    char *want = generate_greedy("Once upon a time", 40), *cut, *stop, body[512], *r, *esc;
    (void)state;
    NEED_SERVER();
    /* a stop string from the middle of the greedy text, 6 bytes that straddle a token boundary or not */
    assert_true(strlen(want) > 30);
    stop = strndup(want + 20, 6);
    cut = strndup(want, (size_t)(strstr(want, stop) - want));
    esc = json_escape(cut);
    {
        char *se = json_escape(stop);
        snprintf(body, sizeof body, "{\"prompt\":\"Once upon a time\",\"max_tokens\":40,\"temperature\":0,\"stop\":[\"zzz\",\"%s\"]%%s}", se);
        free(se);
    }
    {
        char b2[600];
        snprintf(b2, sizeof b2, body, "");
        expect_joined("", "/v1/completions", b2, "text", esc, "\"finish_reason\":\"stop\"", NULL);
        snprintf(b2, sizeof b2, body, ",\"stream\":true");
        expect_joined("-N", "/v1/completions", b2, "text", esc, "\"finish_reason\":\"stop\"", NULL);
    }
    r = curl(&main_srv, "", "/v1/chat/completions",
             "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":8,\"n\":3,\"seed\":7}", NULL);
    assert_non_null(strstr(r, "\"index\":0"));
    assert_non_null(strstr(r, "\"index\":1"));
    assert_non_null(strstr(r, "\"index\":2"));
    free(r);
    r = curl(&main_srv, "", "/v1/chat/completions",
             "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":8,\"n\":5}", NULL);
    assert_non_null(strstr(r, "\"param\":\"n\""));   /* more choices than slots */
    free(r);
    free(want), free(stop), free(cut), free(esc);
    assert_server_sound(&main_srv);
}

/* The next turn of a chat evaluates only what is new: the slot held the first turn. */
static void test_conversation_reuse(void **state)
{
    char *r, *reply, body[2048];
    const char *p;
    long prompt1, cached;
    (void)state;
    NEED_SERVER();
    r = curl(&main_srv, "", "/v1/chat/completions",
             "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story about a cat\"}],\"max_tokens\":30,\"temperature\":0}",
             NULL);
    reply = join_strings(r, "content");
    assert_non_null(p = strstr(r, "\"prompt_tokens\":"));
    prompt1 = strtol(p + 16, NULL, 10);
    free(r);
    snprintf(body, sizeof body,
             "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story about a cat\"},{\"role\":\"assistant\",\"content\":\"%s\"},"
             "{\"role\":\"user\",\"content\":\"And then?\"}],\"max_tokens\":8,\"temperature\":0}", reply);
    r = curl(&main_srv, "", "/v1/chat/completions", body, NULL);
    assert_non_null(p = strstr(r, "\"cached_tokens\":"));
    cached = strtol(p + 16, NULL, 10);
    print_message("turn 1: %ld prompt tokens; turn 2: %ld tokens found in the slot\n", prompt1, cached);
    assert_true(cached >= prompt1);
    free(r);
    free(reply);
    assert_server_sound(&main_srv);
}

static void expect_status(const server *s, const char *opts, const char *path, const char *body, const char *status,
                          const char *needle)
{
    char o[256], *r;
    snprintf(o, sizeof o, "-i %s", opts);
    r = curl(s, o, path, body, NULL);
    if (strncmp(r + 9, status, 3) || (needle && !strstr(r, needle))) {
        char got[640];   /* the reply freed before the failure's jump */
        snprintf(got, sizeof got, "%.600s", r);
        free(r);
        fail_msg("%s %s: wanted %s with \"%s\", got:\n%s", path, body ? body : "", status, needle ? needle : "", got);
    }
    free(r);
}

static void test_request_errors(void **state)
{
    (void)state;
    NEED_SERVER();
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"Once\",\"max_tokens\":\"many\"}", "400",
                  "\"param\":\"max_tokens\"");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"Once\",\"temperature\":-1}", "400", "temperature");
    expect_status(&main_srv, "", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\"}", "400", "not valid JSON");
    expect_status(&main_srv, "", "/v1/chat/completions", "{\"messages\":[{\"role\":\"robot\",\"content\":\"x\"}]}", "400",
                  "messages[0].role");
    expect_status(&main_srv, "", "/v1/chat/completions", "{\"messages\":[]}", "400", "\"param\":\"messages\"");
    expect_status(&main_srv, "", "/v1/completions", "[1,2,3]", "400", "JSON object");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":[99999]}", "400", "prompt[0]");
    expect_status(&main_srv, "", "/v1/nothing", NULL, "404", "\"error\"");
    expect_status(&main_srv, "", "/v1/completions", NULL, "405", "\"error\"");
    expect_status(&main_srv, "-X DELETE", "/v1/models", NULL, "405", "\"error\"");
    {
        char cmd[256], *r;
        int rc;
        snprintf(cmd, sizeof cmd, "head -c 1100000 /dev/zero | tr '\\0' a | curl -s -i --data-binary @- "
                 "http://127.0.0.1:%d/v1/completions", main_srv.port);
        r = tu_capture(cmd, &rc);
        assert_int_equal(strncmp(r + 9, "413", 3), 0);
        free(r);
    }
    assert_server_sound(&main_srv);
}

/* --api-key: 401 without it or with a wrong one; /health stays open. A full queue: 503 with Retry-After. */
static void test_auth_and_busy(void **state)
{
    static server s;   /* static: the teardown reaches it after a failed assertion */
    char cmd[512];
    (void)state;
    NEED_SERVER();
    int i;
    start_extra(&s, "-np 1 -c 8192 --queue 0 --api-key sekrit");
    expect_status(&s, "", "/v1/models", NULL, "401", "authentication_error");
    expect_status(&s, "-H 'Authorization: Bearer wrong'", "/v1/models", NULL, "401", "\"error\"");
    expect_status(&s, "-H 'Authorization: Bearer sekrit'", "/v1/models", NULL, "200", "swa-stories");
    expect_status(&s, "", "/health", NULL, "200", "ok");
    /* one long stream holds the only slot; the next request finds no room */
    snprintf(cmd, sizeof cmd, "curl -sN -H 'Authorization: Bearer sekrit' --data-binary "
             "'{\"prompt\":\"Once\",\"max_tokens\":8000,\"ignore_eos\":true,\"stream\":true}' "
             "http://127.0.0.1:%d/v1/completions > /dev/null &", s.port);
    assert_int_equal(tu_run(cmd), 0);
    for (i = 0; i < 100; i++) {   /* until the stream holds the slot */
        char *m = curl(&s, "-H 'Authorization: Bearer sekrit'", "/metrics", NULL, NULL);
        int busy = strstr(m, "\nswa_slots_busy 1") != NULL;
        free(m);
        if (busy) break;
        sleep_ms(20);
    }
    expect_status(&s, "-H 'Authorization: Bearer sekrit'", "/v1/completions", "{\"prompt\":\"Once\",\"max_tokens\":4}", "503",
                  "Retry-After: 1");
    assert_true(server_stop(&s));
    extra_srv = NULL;
}

/* Our load generator with every fault mixed in: no crash, no slot left busy, each fault its answer. */
static void test_load_and_faults(void **state)
{
    char cmd[512], *out;
    int rc;
    /* the sanitized builds are ~20 times slower: there, fewer requests, still every fault */
#ifdef SWA_TEST_QUICK
    const int requests = 8;
#else
    const int requests = 25;
#endif
    snprintf(cmd, sizeof cmd, "%s --port %d -c 4 -r %d -n 24 --faults 40 --slow-limit 8 --check-slots 2>&1",
             PROGRAM("swa-loadgen"), main_srv.port, requests);
    (void)state;
    NEED_SERVER();
    out = tu_capture(cmd, &rc);
    print_message("%s", out);
    assert_int_equal(rc, 0);
    free(out);
    assert_server_sound(&main_srv);
}

/* Every field acts or is a 400 naming it: other features' fields, unknown ones, other samplers
   away from their "off"; a NUL in text and JSON syntax errors say what and where. */
static void test_fields_refused(void **state)
{
    /* a chat request's field that acts elsewhere, refused with the field named */
    static const char *const chat_fields[][2] = {
        {"tools", "[{\"type\":\"retrieval\"}]"}, {"tool_choice", "\"required\""}, {"reasoning_format", "\"loud\""},
        {"chat_template_kwargs", "{\"a\":1}"},   /* the stories model has no Jinja template to take them */
        {"functions", "[{\"name\":\"f\"}]"},
    };
    char body[256], param[64];
    size_t i;
    (void)state;
    NEED_SERVER();
    for (i = 0; i < sizeof chat_fields / sizeof chat_fields[0]; i++) {
        snprintf(body, sizeof body, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"%s\":%s}", chat_fields[i][0],
                 chat_fields[i][1]);
        snprintf(param, sizeof param, "\"param\":\"%s\"", chat_fields[i][0]);
        expect_status(&main_srv, "", "/v1/chat/completions", body, "400", param);
    }
    expect_status(&main_srv, "", "/v1/chat/completions",
                  "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"tool\",\"tool_call_id\":\"a\",\"content\":\"1\"}],"
                  "\"max_tokens\":2}", "200", NULL);
    expect_status(&main_srv, "", "/api/chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[],\"format\":null,"
                  "\"stream\":false,\"options\":{\"num_predict\":1}}", "200", NULL);   /* left out, as ollama's client writes it */
    /* the stories model's template (llama.cpp's llama2 format, no Jinja) has no thinking to turn on, nor off */
    expect_status(&main_srv, "", "/api/chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"think\":true}", "400",
                  "does not support thinking");
    expect_status(&main_srv, "", "/api/chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"think\":false,"
                  "\"stream\":false,\"options\":{\"num_predict\":1}}", "200", NULL);
    expect_status(&main_srv, "", "/api/generate", "{\"prompt\":\"x\",\"think\":true}", "400", "think reaches");
    expect_status(&main_srv, "", "/api/generate", "{\"prompt\":\"x\",\"think\":false,\"stream\":false,\"options\":"
                  "{\"num_predict\":1}}", "200", NULL);
    expect_status(&main_srv, "", "/api/chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":{}}", "400",
                  "tools must be a list");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"x\",\"frobnicate\":1}", "400", "unknown field");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"x\",\"typical_p\":0.5}", "400", "\"param\":\"typical_p\"");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"x\",\"typical_p\":1,\"user\":\"u\",\"max_tokens\":2}", "200", NULL);
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"x\",\"suffix\":\"y\"}", "400", "\"param\":\"suffix\"");
    /* newlines are penalized as any token: false (spare them) only while no penalty acts */
    expect_status(&main_srv, "", "/completion", "{\"prompt\":\"x\",\"n_predict\":1,\"penalize_nl\":true,\"repeat_penalty\":1.2}",
                  "200", NULL);
    expect_status(&main_srv, "", "/completion", "{\"prompt\":\"x\",\"n_predict\":1,\"penalize_nl\":false}", "200", NULL);
    expect_status(&main_srv, "", "/completion", "{\"prompt\":\"x\",\"penalize_nl\":false,\"frequency_penalty\":0.5}", "400",
                  "\"param\":\"penalize_nl\"");
    expect_status(&main_srv, "", "/api/generate", "{\"prompt\":\"x\",\"options\":{\"penalize_newline\":false,"
                  "\"repeat_penalty\":1.1}}", "400", "penalize_newline false");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"x\",\"stream\":true,\"stream_options\":"
                  "{\"include_usage\":true,\"continuous_usage_stats\":true}}", "400", "stream_options.continuous_usage_stats");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"x\",\"stream\":true,\"stream_options\":"
                  "{\"include_obfuscation\":true}}", "400", "\"param\":\"stream_options.include_obfuscation\"");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":1,\"stream\":true,\"stream_options\":"
                  "{\"include_obfuscation\":false}}", "200", "[DONE]");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"x\",\"echo\":true,\"logprobs\":1}", "400", "\"param\":\"echo\"");
    expect_status(&main_srv, "", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"a\\u0000b\"}]}", "400",
                  "NUL");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"x\",\n \"max_tokens\" 3}", "400", "line 2, column 15");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"x\"", "400", "ends early");
    assert_server_sound(&main_srv);
}

/* The text of choice `index` of a non-streamed completion (escaped as written). */
static char *choice_text(const char *r, int index)
{
    char pat[32], *part, *t;
    const char *p, *next;
    snprintf(pat, sizeof pat, "{\"index\":%d,", index);
    p = strstr(r, pat);
    assert_non_null(p);
    next = strstr(p + 1, "{\"index\":");   /* this choice's part only */
    part = strndup(p, next ? (size_t)(next - p) : strlen(p));
    t = join_strings(part, "text");
    free(part);
    return t;
}

/* A list of prompts: one choice set each, index prompt * n + choice, each prompt's text what
   swa-generate writes for it alone; echo puts the prompt first; max_tokens 0 evaluates only;
   the penalties and the bias act as swa-generate's flags do. */
static void test_fields_acting(void **state)
{
    char *a = generate_greedy("Once upon a time", 12), *b = generate_greedy("Tom had a red ball", 12), *ea, *eb, *r, *t;
    char cmd[512], *want;
    int rc;
    (void)state;
    NEED_SERVER();
    ea = json_escape(a);
    eb = json_escape(b);
    r = curl(&main_srv, "", "/v1/completions",
             "{\"prompt\":[\"Once upon a time\",\"Tom had a red ball\"],\"max_tokens\":12,\"temperature\":0,\"n\":2}", NULL);
    t = choice_text(r, 1);
    assert_string_equal(t, ea);
    free(t);
    t = choice_text(r, 2);
    assert_string_equal(t, eb);
    free(t);
    free(r);
    r = curl(&main_srv, "", "/v1/completions", "{\"prompt\":\"Once upon a time\",\"max_tokens\":12,\"temperature\":0,\"echo\":true}", NULL);
    t = choice_text(r, 0);
    assert_memory_equal(t, "Once upon a time", 16);
    assert_string_equal(t + 16, ea);
    free(t), free(r);
    r = curl(&main_srv, "", "/v1/completions", "{\"prompt\":\"Once upon a time\",\"max_tokens\":0}", NULL);
    assert_non_null(strstr(r, "\"completion_tokens\":0"));
    free(r);
    r = curl(&main_srv, "", "/v1/completions", "{\"prompt\":\"Once upon a time\",\"max_tokens\":4,\"best_of\":3}", NULL);
    assert_non_null(strstr(r, "\"index\":0"));
    assert_null(strstr(r, "\"index\":1"));
    free(r);
    /* penalties and a ban: the text swa-generate writes with the same flags */
    snprintf(cmd, sizeof cmd, "%s -m %s -p 'Once upon a time' -n 16 --temp 0 -t 2 --presence-penalty 1.5 --frequency-penalty 0.5 "
             "--logit-bias 260-inf --logit-bias 481+2 2>/dev/null", PROGRAM("swa-generate"), MODEL);
    want = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    if (want[strlen(want) - 1] == '\n') want[strlen(want) - 1] = '\0';
    t = json_escape(want + 16);
    r = curl(&main_srv, "", "/v1/completions",
             "{\"prompt\":\"Once upon a time\",\"max_tokens\":16,\"temperature\":0,\"presence_penalty\":1.5,\"frequency_penalty\":0.5,"
             "\"logit_bias\":{\"260\":-100,\"481\":2}}", NULL);
    free(want);
    want = join_strings(r, "text");
    assert_string_equal(want, t);
    free(r), free(t), free(want);
    r = curl(&main_srv, "", "/v1/completions",
             "{\"prompt\":\"Once upon a time\",\"max_tokens\":16,\"temperature\":0,\"presence_penalty\":1.5,\"frequency_penalty\":0.5,"
             "\"logit_bias\":[[260,false],[481,2]]}", NULL);
    t = join_strings(r, "text");
    free(r);
    r = curl(&main_srv, "", "/v1/completions",
             "{\"prompt\":\"Once upon a time\",\"max_tokens\":16,\"temperature\":0,\"presence_penalty\":1.5,\"frequency_penalty\":0.5,"
             "\"logit_bias\":{\"260\":-100,\"481\":2}}", NULL);
    want = join_strings(r, "text");
    assert_string_equal(t, want);   /* the list form as the object form */
    free(t), free(want), free(r);
    free(a), free(b), free(ea), free(eb);
    assert_server_sound(&main_srv);
}

/* Reads the reference vector tests/data/embed_stories_mean.txt (llama-embedding's). */
static int read_vector(const char *path, double *v, int cap)
{
    char line[128];
    int n = 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    while (n < cap && fgets(line, sizeof line, f)) if (line[0] != '#') v[n++] = strtod(line, NULL);
    fclose(f);
    return n;
}

/* The floats of the first "embedding":[...] in r. */
static int parse_vector(const char *r, double *v, int cap)
{
    const char *p = strstr(r, "\"embedding\":[");
    int n = 0;
    char *end;
    if (!p) return 0;
    p += 13;
    while (n < cap && *p != ']') {
        v[n++] = strtod(p, &end);
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* llama-server's, OpenAI's and ollama's other endpoints: their shapes, and the embedding against
   llama-embedding's vector for the same text (cosine >= 0.9999). */
/* The string value of the first "key":"..." in s, unescaped as JSON (the library's reader, on
   the literal as the server wrote it); NULL when there is none. */
static char *json_string_at(const char *s, const char *key)
{
    char pat[64];
    const char *p, *q;
    swa__json *j = NULL;
    char *out = NULL;
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    if (!(p = strstr(s, pat))) return NULL;
    p += strlen(pat) - 1;
    for (q = p + 1; *q && *q != '"'; q++) if (*q == '\\' && q[1]) q++;
    if (swa__json_parse(p, (size_t)(q + 1 - p), &j, NULL) == SWA_OK) out = strdup(j->str);
    free(j);
    return out;
}

/* Each of the n choices' "content" of a chat reply: an object with exactly a name (a string of
   at most 12 characters) and an age (an integer from 0 to 120), checked here by hand. */
static void check_person(const char *reply, int n)
{
    const char *p = reply;
    int k;
    for (k = 0; k < n; k++) {
        char *text;
        swa__json *j = NULL;
        const swa__json *name, *age;
        assert_non_null(p = strstr(p, "\"content\":\""));
        text = json_string_at(p, "content");
        p++;
        assert_non_null(text);
        if (swa__json_parse(text, strlen(text), &j, NULL) != SWA_OK) fail_msg("not JSON: %s", text);
        name = swa__json_get(j, "name");
        age = swa__json_get(j, "age");
        if (j->kind != SWA__JSON_OBJECT || j->n != 2 || !name || name->kind != SWA__JSON_STRING || name->len > 12 ||
            !age || age->kind != SWA__JSON_INT || age->i < 0 || age->i > 120)
            fail_msg("does not meet the schema: %s", text);
        free(j);
        free(text);
    }
}

/* Structured output: every sampled choice, at temperature 1 over many seeds, is what the grammar
   or schema asks for, in each of the fields that ask for one; a bad grammar or schema is a 400
   naming the field and where. */
static void test_structured_output(void **state)
{
    static const char schema[] = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":12},"
                                 "\"age\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":120}},\"required\":[\"name\",\"age\"]}";
    char body[1024], *r, *t;
    int seed;
    (void)state;
#ifdef SWA_TEST_TSAN
    /* ThreadSanitizer: the grammar runs on the scheduler thread like all of a request's work; test_grammar
       checks its shared trie under threads */
    skip();
#endif
    NEED_SERVER();
    for (seed = 1; seed <= 10; seed++) {
        snprintf(body, sizeof body, "{\"messages\":[{\"role\":\"user\",\"content\":\"Who are you?\"}],\"temperature\":1,"
                 "\"seed\":%d,\"n\":3,\"max_tokens\":200,\"response_format\":{\"type\":\"json_schema\",\"json_schema\":"
                 "{\"name\":\"person\",\"strict\":true,\"schema\":%s}}}", seed, schema);
        r = curl(&main_srv, "", "/v1/chat/completions", body, NULL);
        check_person(r, 3);
        free(r);
    }
    snprintf(body, sizeof body, "{\"messages\":[{\"role\":\"user\",\"content\":\"Who?\"}],\"stream\":false,\"format\":%s,"
             "\"options\":{\"temperature\":1,\"seed\":5,\"num_predict\":200}}", schema);
    r = curl(&main_srv, "", "/api/chat", body, NULL);
    check_person(r, 1);
    free(r);
    r = curl(&main_srv, "", "/v1/completions", "{\"prompt\":\"The cat said\",\"temperature\":1,\"seed\":3,\"n\":3,"
             "\"max_tokens\":40,\"grammar\":\"root ::= (\\\"yes\\\" | \\\"no\\\") \\\", \\\" [a-z]{1,8} \\\".\\\"\"}", NULL);
    for (t = r; (t = strstr(t, "\"text\":\"")) != NULL; t++) {
        char *v = json_string_at(t, "text");
        size_t i = !strncmp(v, "yes, ", 5) ? 5 : !strncmp(v, "no, ", 4) ? 4 : 0, k = i;
        while (v[k] >= 'a' && v[k] <= 'z') k++;
        if (!i || k == i || k - i > 8 || strcmp(v + k, ".")) fail_msg("does not match the grammar: \"%s\"", v);
        free(v);
    }
    free(r);
    r = curl(&main_srv, "", "/completion", "{\"prompt\":\"x\",\"n_predict\":60,\"temperature\":1,\"seed\":9,"
             "\"json_schema\":{\"type\":\"array\",\"items\":{\"enum\":[\"red\",\"blue\"]},\"minItems\":1,\"maxItems\":3}}", NULL);
    t = json_string_at(r, "content");
    {
        swa__json *j = NULL;
        size_t i;
        if (!t || swa__json_parse(t, strlen(t), &j, NULL) != SWA_OK || j->kind != SWA__JSON_ARRAY || j->n < 1 || j->n > 3)
            fail_msg("not an array of 1 to 3 colours: %s", t ? t : r);
        for (i = 0; i < j->n; i++)
            assert_true(swa__json_is_str(&j->items[i], "red") || swa__json_is_str(&j->items[i], "blue"));
        free(j);
    }
    free(t);
    free(r);
    r = curl(&main_srv, "", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":120,"
             "\"temperature\":1,\"seed\":2,\"response_format\":{\"type\":\"json_object\"}}", NULL);
    if (strstr(r, "\"finish_reason\":\"stop\"")) {
        swa__json *j = NULL;
        t = json_string_at(r, "content");
        if (swa__json_parse(t, strlen(t), &j, NULL) != SWA_OK || j->kind != SWA__JSON_OBJECT) fail_msg("not an object: %s", t);
        free(j);
        free(t);
    }
    free(r);
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"x\",\"grammar\":\"root ::= \\\"a\\\" |\\n  ( b\"}", "400",
                  "\"param\":\"grammar\"");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"x\",\"grammar\":\"root ::= \\\"a\\\" |\\n  ( b\"}", "400",
                  "line 2");
    expect_status(&main_srv, "", "/completion", "{\"prompt\":\"x\",\"json_schema\":{\"type\":\"object\",\"$ref\":\"#/$defs/nope\"}}",
                  "400", "\"param\":\"json_schema\"");
    expect_status(&main_srv, "", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
                  "\"response_format\":{\"type\":\"xml\"}}", "400", "\"param\":\"response_format\"");
    /* llama-server's /apply-template: the chat as the template writes it (this file: llama.cpp's llama2 format) */
    expect_status(&main_srv, "", "/apply-template", "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                  "{\"role\":\"user\",\"content\":\"Hi\"}]}", "200", "{\"prompt\":\"[INST] Be brief.\\nHi [/INST]\"}");
    /* without a Jinja template a tool's answer is written as JSON, with the tool's name (OpenAI's name, ollama's tool_name) */
    expect_status(&main_srv, "", "/apply-template", "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"},"
                  "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"name\":\"ping\",\"content\":\"pong\"}],\"tools\":[{\"type\":"
                  "\"function\",\"function\":{\"name\":\"ping\",\"parameters\":{\"type\":\"object\"}}}]}", "200",
                  "{\\\"tool_response\\\":{\\\"tool_call_id\\\":\\\"c1\\\",\\\"name\\\":\\\"ping\\\",\\\"content\\\":\\\"pong\\\"}}");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"x\",\"grammar\":\"root ::= \\\"a\\\"\",\"json_schema\":{}}",
                  "400", "give one of");
    assert_server_sound(&main_srv);
}

static void test_more_endpoints(void **state)
{
    char *r, *want = generate_greedy("Once upon a time", 10), *esc = json_escape(want);
    double ref[512], got[512], dot = 0, na = 0, nb = 0;
    int n_ref, n_got, i;
    (void)state;
    NEED_SERVER();
    expect_joined("", "/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":10,\"temperature\":0}", "content", esc,
                  "\"tokens_predicted\":10", "\"stop_type\":\"limit\"");
    expect_joined("-N", "/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":10,\"temperature\":0,\"stream\":true}",
                  "content", esc, "\"stop\":true", NULL);
    r = curl(&main_srv, "", "/props", NULL, NULL);
    assert_non_null(strstr(r, "\"total_slots\":4"));
    free(r);
    r = curl(&main_srv, "", "/slots", NULL, NULL);
    assert_non_null(strstr(r, "{\"id\":3,"));
    assert_null(strstr(r, "{\"id\":4,"));
    free(r);
    expect_status(&main_srv, "", "/v1/models/swa-stories.gguf", NULL, "200", "\"id\":\"swa-stories.gguf\"");
    expect_status(&main_srv, "", "/v1/models/other", NULL, "404", "\"error\"");
    expect_joined("", "/api/generate", "{\"prompt\":\"Once upon a time\",\"raw\":true,\"stream\":false,"
                  "\"options\":{\"num_predict\":10,\"temperature\":0}}", "response", esc, "\"done\":true", NULL);
    r = curl(&main_srv, "-N", "/api/chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"options\":{\"num_predict\":4}}", NULL);
    assert_non_null(strstr(r, "\"done\":false}\n"));
    assert_non_null(strstr(r, "\"done\":true,\"done_reason\":\"length\""));
    free(r);
    expect_status(&main_srv, "", "/api/chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"options\":{\"num_ctx\":99999}}",
                  "400", "num_ctx");
    r = curl(&main_srv, "", "/api/tags", NULL, NULL);
    assert_non_null(strstr(r, "\"name\":\"swa-stories.gguf\""));
    free(r);
    r = curl(&main_srv, "", "/api/version", NULL, NULL);
    assert_non_null(strstr(r, "\"version\""));
    free(r);
    r = curl(&main_srv, "", "/v1/embeddings", "{\"input\":\"Once upon a time there was a cat\"}", NULL);
    n_ref = read_vector("tests/data/embed_stories_mean.txt", ref, 512);
    n_got = parse_vector(r, got, 512);
    assert_int_equal(n_ref, 256);
    assert_int_equal(n_got, 256);
    for (i = 0; i < n_ref; i++) dot += ref[i] * got[i], na += ref[i] * ref[i], nb += got[i] * got[i];
    print_message("cosine against llama-embedding: %.7f (|ours| %.6f)\n", dot / sqrt(na * nb), sqrt(nb));
    assert_true(dot / sqrt(na * nb) >= 0.9999);
    assert_true(fabs(sqrt(nb) - 1) < 1e-4);
    free(r);
    r = curl(&main_srv, "", "/v1/embeddings", "{\"input\":[\"a\",[1,2,3]],\"encoding_format\":\"base64\"}", NULL);
    assert_non_null(strstr(r, "\"index\":1"));
    assert_non_null(strstr(r, "\"embedding\":\""));
    free(r);
    r = curl(&main_srv, "", "/api/embed", "{\"input\":[\"a\",\"b\"]}", NULL);
    assert_non_null(strstr(r, "\"embeddings\":[["));
    free(r);
    {   /* a URI past our limit: JSON, not libmicrohttpd's HTML */
        char path[9100];
        memset(path, 'a', sizeof path - 1);
        path[0] = '/';
        path[sizeof path - 1] = '\0';
        expect_status(&main_srv, "", path, NULL, "414", "\"error\"");
    }
    free(want), free(esc);
    assert_server_sound(&main_srv);
}

/* SIGTERM at a random moment while streams and non-streamed requests run and wait: every client
   gets a well-formed ending (a stream's last event [DONE]; a response 200 or 503 JSON) and the
   server exits 0 within its --shutdown-timeout. SWA_STOP_RUNS=100 for the full race. */
static void test_stop_race(void **state)
{
    static server s;
    const char *env = getenv("SWA_STOP_RUNS");
    int runs = env ? atoi(env) : 4, run, k;
    uint64_t seed = (uint64_t)time(NULL);
    (void)state;
    NEED_SERVER();
    for (run = 0; run < runs; run++) {
        char cmd[2048], f[4][96], *out;
        int status, i;
        start_extra(&s, "-np 2 -c 512 --queue 8 --shutdown-timeout 5 --log-disable");
        for (k = 0; k < 4; k++) {
            char tag[16];
            snprintf(tag, sizeof tag, "stop%d", k);
            tu_tmp_path(f[k], sizeof f[k], tag);
        }
        /* two streams and two answers wanted whole, for 3 slots' worth of work on 2 slots */
        snprintf(cmd, sizeof cmd,
                 "for k in 0 1; do curl -sN --data-binary '{\"prompt\":\"Once\",\"max_tokens\":400,\"ignore_eos\":true,\"stream\":true}' "
                 "http://127.0.0.1:%d/v1/completions > %s.$k & done; "
                 "curl -s -w '\\n%%{http_code}' --data-binary '{\"prompt\":\"Tom\",\"max_tokens\":400,\"ignore_eos\":true}' "
                 "http://127.0.0.1:%d/v1/completions > %s & "
                 "curl -s -w '\\n%%{http_code}' --data-binary '{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":400,"
                 "\"ignore_eos\":true}' http://127.0.0.1:%d/v1/chat/completions > %s & "
                 "sleep 0.%03d; kill -TERM %d; wait",
                 s.port, f[0], s.port, f[2], s.port, f[3], 300 + (int)((seed = seed * 6364136223846793005ull + 1) >> 33) % 600,
                 (int)s.pid);
        assert_int_equal(tu_run(cmd), 0);
        for (i = 0; i < 100 && waitpid(s.pid, &status, WNOHANG) != s.pid; i++) sleep_ms(100);
        assert_true(i < 100);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        s.pid = 0;
        for (k = 0; k < 2; k++) {
            char p[128];
            size_t n;
            snprintf(p, sizeof p, "%s.%d", f[0], k);
            out = read_text(p);
            n = out ? strlen(out) : 0;
            if (n < 14 || strcmp(out + n - 14, "data: [DONE]\n\n"))
                fail_msg("run %d: stream %d ended without [DONE]: ...%s", run, k, out && n > 200 ? out + n - 200 : out ? out : "");
            free(out);
            unlink(p);
        }
        for (k = 2; k < 4; k++) {
            out = read_text(f[k]);
            assert_non_null(out);
            if (!((strstr(out, "\"choices\"") && strstr(out, "\n200")) || (strstr(out, "\"error\"") && strstr(out, "\n503"))))
                fail_msg("run %d: response %d: %s", run, k, out);
            free(out);
            unlink(f[k]);
        }
        unlink(s.log);
    }
    extra_srv = NULL;
}

/* An official Python client (tests/server_client.sh makes a venv and installs it) runs its
   checks, tests/server_CLIENT.py: skipped, saying so, without python3's venv or without PyPI. */
static void run_client(const char *client)
{
    char cmd[256], *out;
    int rc;
    NEED_SERVER();
    snprintf(cmd, sizeof cmd, "sh tests/server_client.sh %s %d 2>&1", client, main_srv.port);
    out = tu_capture(cmd, &rc);
    print_message("%s", out);
    free(out);
    if (rc == 77) skip();
    assert_int_equal(rc, 0);
    assert_server_sound(&main_srv);
}

static void test_openai_client(void **state) { (void)state; run_client("openai"); }
static void test_ollama_client(void **state) { (void)state; run_client("ollama"); }
/* ---- the snapshot cache (--cache-ram) ---- */

/* A test's own server is stopped when the test fails, before the next starts its own. */
static int stop_extra(void **state)
{
    (void)state;
    if (extra_srv && extra_srv->pid > 0) {
        kill(extra_srv->pid, SIGKILL);
        waitpid(extra_srv->pid, NULL, 0);
    }
    extra_srv = NULL;
    return 0;
}

static long field_after(const char *r, const char *key)
{
    const char *p = strstr(r, key);
    if (!p) fail_msg("no %s in:\n%.600s", key, r);
    return strtol(p + strlen(key), NULL, 10);
}

/* A chat request: user message u1, then (when a1 is given) its answer a1 and user message u2. */
static char *chat(const server *s, const char *sys, const char *u1, const char *a1, const char *u2, int n)
{
    char body[4096], head[1024] = "";
    if (sys) snprintf(head, sizeof head, "{\"role\":\"system\",\"content\":\"%s\"},", sys);
    if (a1)
        snprintf(body, sizeof body, "{\"messages\":[%s{\"role\":\"user\",\"content\":\"%s\"},{\"role\":\"assistant\",\"content\":"
                 "\"%s\"},{\"role\":\"user\",\"content\":\"%s\"}],\"max_tokens\":%d,\"temperature\":0}", head, u1, a1, u2, n);
    else
        snprintf(body, sizeof body, "{\"messages\":[%s{\"role\":\"user\",\"content\":\"%s\"}],\"max_tokens\":%d,\"temperature\":0}",
                 head, u1, n);
    return curl(s, "", "/v1/chat/completions", body, NULL);
}

/* Chat A's first turn, then B's in the one slot, then A's second turn: its answer and cached tokens. */
static char *conversation_pushed_out(const char *args, long *cached)
{
    static const char *ua = "Tell me a story about a cat and a red ball in the garden, with a little girl who helps her "
                            "look for it under the trees and behind the flowers, and a bird who sees where it went.",
                      *ub = "Tell me a story about a dog who lost his bone at the park, and a boy who finds it.";
    server s;
    char *r, *a1, *a2;
    start_extra(&s, args);
    r = chat(&s, NULL, ua, NULL, NULL, 40);
    a1 = join_strings(r, "content");
    free(r);
    free(chat(&s, NULL, ub, NULL, NULL, 24));
    r = chat(&s, NULL, ua, a1, "What did the cat do then?", 16);
    a2 = join_strings(r, "content");
    *cached = field_after(r, "\"cached_tokens\":");
    free(r);
    free(a1);
    assert_true(server_stop(&s));
    extra_srv = NULL;
    return a2;
}

/* A conversation whose slot another took comes back to its cache: the same greedy answer as
   with the cache off, most of its prompt restored rather than evaluated. */
static void test_cache_conversation_returns(void **state)
{
    char *ref, *got;
    long cached_ref, cached;
    (void)state;
    NEED_SERVER();
    ref = conversation_pushed_out("-np 1 -c 512 --cache-ram 0", &cached_ref);
    got = conversation_pushed_out("-np 1 -c 512 --cache-ram 64", &cached);
    print_message("turn 2 after another chat took the slot: %ld tokens cached (%ld without the cache)\n", cached, cached_ref);
    assert_true(cached > cached_ref + 40);
    assert_string_equal(got, ref);
    free(ref);
    free(got);
}

/* Under a budget of a few snapshots the least recently used go: the chat before last gets its
   prefix back, the first one, five chats ago, only the words every chat starts with. */
static void test_cache_lru(void **state)
{
    static const char *subjects[] = {"a cat", "a dog", "a bird", "a fish", "a frog", "a bear"};
    char u[256], *a[6], *r;
    long first, last, limit, bytes;
    server s;
    int i;
    (void)state;
    NEED_SERVER();
    start_extra(&s, "-np 1 -c 512 --cache-ram 1");
    for (i = 0; i < 6; i++) {
        snprintf(u, sizeof u, "Once there was %s who lived near a big river with tall trees and many flowers, and "
                 "every morning it went out to play in the sun with its friends from the town.", subjects[i]);
        r = chat(&s, NULL, u, NULL, NULL, 48);
        a[i] = join_strings(r, "content");
        free(r);
    }
    snprintf(u, sizeof u, "Once there was %s who lived near a big river with tall trees and many flowers, and "
             "every morning it went out to play in the sun with its friends from the town.", subjects[4]);
    r = chat(&s, NULL, u, a[4], "And then?", 4);
    last = field_after(r, "\"cached_tokens\":");
    free(r);
    snprintf(u, sizeof u, "Once there was %s who lived near a big river with tall trees and many flowers, and "
             "every morning it went out to play in the sun with its friends from the town.", subjects[0]);
    r = chat(&s, NULL, u, a[0], "And then?", 4);
    first = field_after(r, "\"cached_tokens\":");
    free(r);
    limit = metric(&s, "swa_cache_limit_bytes");
    bytes = metric(&s, "swa_cache_bytes");
    print_message("1 MiB: %ld evictions, %ld bytes held; chat 5 back with %ld tokens cached, chat 1 with %ld\n",
                  metric(&s, "swa_cache_evictions_total"), bytes, last, first);
    assert_int_equal(limit, 1 << 20);
    assert_true(bytes > 0 && bytes <= limit);
    assert_true(metric(&s, "swa_cache_evictions_total") > 0);
    assert_true(last > 40);
    assert_true(first < 16);   /* what every chat's prompt starts with: the template's opening, "Once there was" */
    for (i = 0; i < 6; i++) free(a[i]);
    assert_true(server_stop(&s));
    extra_srv = NULL;
}

/* Four chats with one system prompt: the first evaluates it, the others restore it. */
static void test_cache_shared_system_prompt(void **state)
{
    static const char *sys = "You tell short stories to small children. Every story has a child and an animal in it, a "
                             "dog, a cat or a bird, and something that goes wrong and is put right. Use short words and "
                             "short sentences, and end every story well.";
    static const char *asks[] = {"A story about Lily.", "A story about Tom and his kite.", "One about Sam.",
                                 "Tell me about Mia and the big tree."};
    char *r, body[1024];
    const char *p;
    long prompt[4], cached[4], before, after, expect = 0, sys_tokens;
    server s;
    int i;
    (void)state;
    NEED_SERVER();
    start_extra(&s, "-np 1 -c 512");
    snprintf(body, sizeof body, "{\"content\":\"%s\"}", sys);
    r = curl(&s, "", "/tokenize", body, NULL);
    for (sys_tokens = 1, p = r; (p = strchr(p, ',')) != NULL; p++) sys_tokens++;   /* {"tokens":[a,b,...]} */
    free(r);
    before = metric(&s, "swa_prompt_tokens_total");
    for (i = 0; i < 4; i++) {
        r = chat(&s, sys, asks[i], NULL, NULL, 8);
        prompt[i] = field_after(r, "\"prompt_tokens\":");
        cached[i] = field_after(r, "\"cached_tokens\":");
        expect += prompt[i] - cached[i];
        free(r);
    }
    after = metric(&s, "swa_prompt_tokens_total");
    print_message("system prompt %ld tokens alone; prompts %ld %ld %ld %ld, cached %ld %ld %ld %ld; evaluated %ld\n",
                  sys_tokens, prompt[0], prompt[1], prompt[2], prompt[3], cached[0], cached[1], cached[2], cached[3],
                  after - before);
    assert_int_equal(after - before, expect);
    assert_int_equal(cached[0], 0);
    for (i = 1; i < 4; i++) {
        assert_true(cached[i] >= sys_tokens - 2);
        assert_int_equal(cached[i], cached[1]);
    }
    assert_true(server_stop(&s));
    extra_srv = NULL;
}

/* ---- slot actions (--slot-save-path) and /infill ---- */

/* A slot action's reply: POST /slots/{id}?action=..., with curl -i when opts says so. */
static char *slot_action(const server *s, const char *opts, int id, const char *action, const char *body)
{
    char path[128];
    snprintf(path, sizeof path, "/slots/%d?action=%s", id, action);
    return curl(s, opts, path, body ? body : "", NULL);
}

/* n_past of slot i, as /slots shows it. */
static long slot_past(const server *s, int i)
{
    char *r = curl(s, "", "/slots", NULL, NULL), key[32];
    const char *at;
    long n;
    snprintf(key, sizeof key, "{\"id\":%d,", i);
    if (!(at = strstr(r, key))) fail_msg("no slot %d in /slots:\n%.600s", i, r);
    n = field_after(at, "\"n_past\":");
    free(r);
    return n;
}

static long slot0_past(const server *s) { return slot_past(s, 0); }

/* The text of a greedy /completion of "Once upon a time" (8 tokens), and its cached tokens. */
static char *once_upon(const server *s, long *cached)
{
    char *r = curl(s, "", "/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":8,\"temperature\":0}", NULL), *t;
    *cached = field_after(r, "\"tokens_cached\":");
    t = join_strings(r, "content");
    free(r);
    return t;
}

/* A copy of file `from` in the save directory, one byte flipped (at `flip`) or cut to `keep` bytes. */
static void damaged_copy(const char *dir, const char *from, const char *to, long flip, long keep)
{
    char path[256];
    FILE *f;
    long n;
    char *data;
    snprintf(path, sizeof path, "%s/%s", dir, from);
    data = read_text(path);
    assert_non_null(data);
    f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fclose(f);
    if (flip >= 0 && flip < n) data[flip] ^= 0x10;
    if (keep >= 0 && keep < n) n = keep;
    snprintf(path, sizeof path, "%s/%s", dir, to);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    free(data);
}

/* Bad names, fields, actions and slots: 400 before anything reaches the disk. */
static void slot_requests_refused(const server *s)
{
    static const char *bad_names[] = {"../s.bin", "a/b.bin", "", "..", ".", "a\\\\b", "x.", " x", "a:b", "a\\u0001b"};
    char body[512], *name;
    size_t k;
    for (k = 0; k < sizeof bad_names / sizeof bad_names[0]; k++) {
        snprintf(body, sizeof body, "{\"filename\":\"%s\"}", bad_names[k]);
        expect_status(s, "", "/slots/0?action=save", body, "400", "Invalid filename");
    }
    name = (char *)malloc(300);
    assert_non_null(name);
    memset(name, 'a', 299);
    name[299] = '\0';
    snprintf(body, sizeof body, "{\"filename\":\"%s\"}", name);
    expect_status(s, "", "/slots/0?action=save", body, "400", "Invalid filename");
    free(name);
    expect_status(s, "", "/slots/0?action=save", "{}", "400", "\"param\":\"filename\"");
    expect_status(s, "", "/slots/0?action=save", "{\"filename\":\"s.bin\",\"x\":1}", "400", "\"param\":\"x\"");
    expect_status(s, "", "/slots/0?action=erase", "{\"filename\":\"s.bin\"}", "400", "\"param\":\"filename\"");
    expect_status(s, "", "/slots/0?action=load", "{\"filename\":\"s.bin\"}", "400", "Invalid action");
    expect_status(s, "", "/slots/0", "{\"filename\":\"s.bin\"}", "400", "Invalid action");
    expect_status(s, "", "/slots/1?action=save", "{\"filename\":\"s.bin\"}", "400", "Invalid slot ID");
    expect_status(s, "", "/slots/x?action=save", "{\"filename\":\"s.bin\"}", "400", "Invalid slot ID");
    expect_status(s, "", "/slots/0?action=save", NULL, "405", "\"error\"");
}

/* Save, erase, fill the slot with another prompt, restore: the next request finds its prompt in
   the slot (cache off, one slot: nothing else could hold it) and answers as before. Damaged,
   truncated and foreign files are refused with the slot untouched; bad names never reach the disk. */
static void test_slot_save_restore(void **state)
{
    static server s;
    char dir[] = "/tmp/swa_test_slots_XXXXXX", args[256], *r, *t1, *t;
    long cached, saved, written, past;
    (void)state;
    NEED_SERVER();
    assert_non_null(mkdtemp(dir));
    snprintf(args, sizeof args, "-np 1 -c 512 --cache-ram 0 --slot-save-path %s", dir);
    start_extra(&s, args);
    t1 = once_upon(&s, &cached);
    assert_int_equal(cached, 0);
    r = slot_action(&s, "", 0, "save", "{\"filename\":\"s.bin\"}");
    saved = field_after(r, "\"n_saved\":");
    written = field_after(r, "\"n_written\":");
    assert_non_null(strstr(r, "\"id_slot\":0,\"filename\":\"s.bin\""));
    assert_non_null(strstr(r, "\"timings\":{\"save_ms\":"));
    free(r);
    assert_int_equal(saved, 5 + 8 - 1);   /* 5 prompt tokens, 8 sampled of which the last is not evaluated */
    assert_int_equal(saved, slot0_past(&s));
    r = slot_action(&s, "", 0, "erase", NULL);
    assert_int_equal(field_after(r, "\"n_erased\":"), saved);
    free(r);
    assert_int_equal(slot0_past(&s), 0);
    free(curl(&s, "", "/completion", "{\"prompt\":\"Tom had a red ball\",\"n_predict\":4,\"temperature\":0}", NULL));
    r = slot_action(&s, "", 0, "restore", "{\"filename\":\"s.bin\"}");
    assert_int_equal(field_after(r, "\"n_restored\":"), saved);
    assert_int_equal(field_after(r, "\"n_read\":"), written);
    assert_non_null(strstr(r, "\"restore_ms\":"));
    free(r);
    t = once_upon(&s, &cached);
    print_message("slot saved with %ld tokens in %ld bytes; after the restore %ld prompt tokens cached\n", saved, written, cached);
    assert_int_equal(cached, 4);   /* the prompt but its last token, which is evaluated for its logits */
    assert_string_equal(t, t1);
    free(t);
    /* refused files: the slot keeps what it holds */
    past = slot0_past(&s);
    damaged_copy(dir, "s.bin", "flipped.bin", written / 2, -1);
    damaged_copy(dir, "s.bin", "cut.bin", -1, written - 100);
    damaged_copy(dir, "s.bin", "head.bin", 45, -1);   /* a token */
    damaged_copy(dir, "s.bin", "other.bin", 0, -1);   /* not our magic */
    expect_status(&s, "", "/slots/0?action=restore", "{\"filename\":\"flipped.bin\"}", "400", "damaged");
    expect_status(&s, "", "/slots/0?action=restore", "{\"filename\":\"head.bin\"}", "400", "damaged");
    expect_status(&s, "", "/slots/0?action=restore", "{\"filename\":\"cut.bin\"}", "400", "truncated");
    expect_status(&s, "", "/slots/0?action=restore", "{\"filename\":\"other.bin\"}", "400", "not a swa-server slot file");
    expect_status(&s, "", "/slots/0?action=restore", "{\"filename\":\"absent.bin\"}", "400", "absent.bin");
    assert_int_equal(slot0_past(&s), past);
    t = once_upon(&s, &cached);
    assert_int_equal(cached, 4);
    assert_string_equal(t, t1);
    free(t);
    slot_requests_refused(&s);
    {   /* a busy slot: the action waits for the generation to end, as llama-server defers it */
        char cmd[1024];
        int rc;
#ifdef SWA_TEST_QUICK
        const int n_gen = 100;   /* ThreadSanitizer: each token costs ~20 times more */
#else
        const int n_gen = 500;
#endif
        snprintf(cmd, sizeof cmd, "curl -s -o /dev/null http://127.0.0.1:%d/completion -d '{\"prompt\":\"Once upon a time\","
                 "\"n_predict\":%d,\"temperature\":0,\"ignore_eos\":true}' & sleep 0.1; curl -s -X POST "
                 "'http://127.0.0.1:%d/slots/0?action=save' -d '{\"filename\":\"busy.bin\"}'; wait", s.port, n_gen, s.port);
        r = tu_capture(cmd, &rc);
        assert_int_equal(field_after(r, "\"n_saved\":"), 5 + n_gen - 1);
        free(r);
        /* only the files saved and copied here: no bad name reached the disk */
        snprintf(cmd, sizeof cmd, "ls %s | tr '\\n' ' '", dir);
        r = tu_capture(cmd, &rc);
        assert_string_equal(r, "busy.bin cut.bin flipped.bin head.bin other.bin s.bin ");
        free(r);
    }
    free(t1);
    assert_true(server_stop(&s));
    /* another ring layout (--rewind 2): the library's own check refuses the snapshot */
    snprintf(args, sizeof args, "-np 1 -c 512 --rewind 2 --slot-save-path %s", dir);
    if (!server_start(&s, args)) fail_msg("swa-server %s did not start", args);
    expect_status(&s, "", "/slots/0?action=restore", "{\"filename\":\"s.bin\"}", "400", "differ");
    assert_int_equal(slot0_past(&s), 0);
    assert_true(server_stop(&s));
    extra_srv = NULL;
    snprintf(args, sizeof args, "rm -r %s", dir);
    assert_int_equal(tu_run(args), 0);
}

/* Without --slot-save-path, llama-server's 501. */
static void test_slot_actions_off(void **state)
{
    (void)state;
    NEED_SERVER();
    expect_status(&main_srv, "", "/slots/0?action=save", "{\"filename\":\"a.bin\"}", "501", "Start it with `--slot-save-path`");
    expect_status(&main_srv, "-X POST", "/slots/0?action=erase", NULL, "501", "\"type\":\"not_supported_error\"");
    assert_server_sound(&main_srv);
}

static size_t put_le(unsigned char *p, uint64_t v, int bytes)
{
    int i;
    for (i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
    return (size_t)bytes;
}

/* A GGUF key of type u32 (4), or a string (8) of n spaces: its bytes at p. */
static size_t gguf_key(unsigned char *p, const char *key, int string, uint32_t v)
{
    size_t n = put_le(p, strlen(key), 8);
    memcpy(p + n, key, strlen(key));
    n += strlen(key);
    n += put_le(p + n, string ? 8 : 4, 4);
    if (!string) return n + put_le(p + n, v, 4);
    n += put_le(p + n, v, 8);
    memset(p + n, ' ', v);
    return n + v;
}

/* swa-stories with fill-in-the-middle ids (it has none: the byte tokens <0x01>..<0x03>, which no
   text here holds): three keys, and a string that pads them to the file's alignment, put before
   its first key, so every later offset moves by a multiple of the alignment. */
static void write_fim_model(const char *path)
{
    static const char *keys[] = {"tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.fim_suf_token_id",
                                 "tokenizer.ggml.fim_mid_token_id"};
    unsigned char kv[512];
    size_t n = 0, size, k;
    uint64_t align, n_kv = 0;
    swa_gguf *g;
    swa_error err;
    char *model;
    FILE *f;
    assert_int_equal(swa_gguf_open(MODEL, &g, &err), SWA_OK);
    size = (size_t)swa_gguf_file_size(g);
    align = swa_gguf_alignment(g);
    swa_gguf_close(g);
    for (k = 0; k < 3; k++) n += gguf_key(kv + n, keys[k], 0, (uint32_t)(4 + k));
    n += gguf_key(kv + n, "swa.test.pad", 1, (uint32_t)((align - (n + 32) % align) % align));
    assert_int_equal(n % align, 0);
    model = read_text(MODEL);
    assert_non_null(model);
    for (k = 0; k < 8; k++) n_kv |= (uint64_t)(unsigned char)model[16 + k] << (8 * k);
    put_le((unsigned char *)model + 16, n_kv + 4, 8);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(model, 1, 24, f), 24);
    assert_int_equal(fwrite(kv, 1, n, f), n);
    assert_int_equal(fwrite(model + 24, 1, size - 24, f), size - 24);
    assert_int_equal(fclose(f), 0);
    free(model);
}

/* The ids /tokenize gives for text (no BOS), as "a,b,c". */
static char *token_ids(const server *s, const char *text)
{
    char body[512], *r, *open, *close, *ids;
    snprintf(body, sizeof body, "{\"content\":\"%s\"}", text);
    r = curl(s, "", "/tokenize", body, NULL);
    open = strchr(r, '[');
    close = open ? strchr(open, ']') : NULL;
    assert_non_null(close);
    *close = '\0';
    ids = strdup(open + 1);
    free(r);
    return ids;
}

/* /infill against /completion of the token ids it should make: [BOS] extra PRE prefix SUF suffix
   MID prompt, each piece tokenized alone, as llama-server lays them out; streamed and not. A
   vocabulary without FIM ids (the shipped model's) is llama-server's 501. */
static void test_infill(void **state)
{
    static server s;
    char path[128], body[2048], *pre, *suf, *mid, *extra, *snippet, *r, *want, *got;
    (void)state;
    NEED_SERVER();
    expect_status(&main_srv, "", "/infill", "{\"input_prefix\":\"Once\",\"input_suffix\":\"end.\"}", "501",
                  "Infill is not supported by this model");
    tu_tmp_path(path, sizeof path, "fim_model");
    write_fim_model(path);
    snprintf(body, sizeof body, "-m %s -np 1 -c 256 --cache-ram 0", path);
    start_extra(&s, body);
    pre = token_ids(&s, "Once upon a time there was a little cat.");
    suf = token_ids(&s, "And they were friends forever.");
    mid = token_ids(&s, "The cat");
    extra = token_ids(&s, "Tom had a red ball.");
    snippet = token_ids(&s, "\\n\\n--- snippet ---\\n\\n");
    snprintf(body, sizeof body, "{\"prompt\":[1,4,%s,5,%s,6,%s],\"n_predict\":12,\"temperature\":0}", pre, suf, mid);
    r = curl(&s, "", "/completion", body, NULL);
    want = join_strings(r, "content");
    free(r);
    r = curl(&s, "", "/infill", "{\"input_prefix\":\"Once upon a time there was a little cat.\",\"input_suffix\":"
             "\"And they were friends forever.\",\"prompt\":\"The cat\",\"n_predict\":12,\"temperature\":0}", NULL);
    got = join_strings(r, "content");
    print_message("infill: \"%s\"\n", got);
    assert_non_null(strstr(r, "\"tokens_predicted\":12"));
    assert_string_equal(got, want);
    free(got), free(r);
    r = curl(&s, "-N", "/infill", "{\"input_prefix\":\"Once upon a time there was a little cat.\",\"input_suffix\":"
             "\"And they were friends forever.\",\"prompt\":\"The cat\",\"n_predict\":12,\"temperature\":0,\"stream\":true}", NULL);
    got = join_strings(r, "content");
    assert_non_null(strstr(r, "\"stop\":true"));
    assert_string_equal(got, want);
    free(got), free(r), free(want);
    /* input_extra, without FIM_REP and FIM_SEP in the vocabulary: each chunk behind a snippet line */
    snprintf(body, sizeof body, "{\"prompt\":[1,%s,%s,4,%s,5,%s,6],\"n_predict\":8,\"temperature\":0}", snippet, extra, pre, suf);
    r = curl(&s, "", "/completion", body, NULL);
    want = join_strings(r, "content");
    free(r);
    r = curl(&s, "", "/infill", "{\"input_extra\":[{\"filename\":\"a.txt\",\"text\":\"Tom had a red ball.\"}],\"input_prefix\":"
             "\"Once upon a time there was a little cat.\",\"input_suffix\":\"And they were friends forever.\",\"n_predict\":8,"
             "\"temperature\":0}", NULL);
    got = join_strings(r, "content");
    assert_string_equal(got, want);
    free(got), free(r), free(want);
    expect_status(&s, "", "/infill", "{\"input_prefix\":\"Once\"}", "400", "\"param\":\"input_suffix\"");
    expect_status(&s, "", "/infill", "{\"input_prefix\":\"a\",\"input_suffix\":\"b\",\"input_extra\":\"c\"}", "400", "input_extra");
    expect_status(&s, "", "/infill", "{\"input_prefix\":\"a\",\"input_suffix\":\"b\",\"input_extra\":[{\"name\":\"c\"}]}", "400",
                  "input_extra");
    expect_status(&s, "", "/infill", "{\"input_prefix\":\"a\",\"input_suffix\":\"b\",\"suffix\":\"c\"}", "400", "\"param\":\"suffix\"");
    free(pre), free(suf), free(mid), free(extra), free(snippet);
    assert_server_sound(&s);
    assert_true(server_stop(&s));
    extra_srv = NULL;
    unlink(path);
}

/* ---- llama-server's id_slot, and the timings of a stream ---- */

/* Slot i's n_past once the scheduler shows it at most (below) or above n: it updates /slots
   after the step that ended a request, a moment after the answer. */
static long slot_past_when(const server *s, int i, long n, int below)
{
    long v = 0;
    int k;
    for (k = 0; k < 20; k++) {
        v = slot_past(s, i);
        if (below ? v <= n : v > n) break;
        sleep_ms(50);
    }
    return v;
}

/* id_slot (llama-server's; -1: any) runs a request on the slot it names: the native reply says
   which, and /slots shows the text only that slot then holds, for the OpenAI endpoints too; two
   requests naming one slot run one after the other, each with the text it has alone; an id past
   the slots, or one for a request of several choices, is a 400 naming id_slot. */
static void test_id_slot(void **state)
{
    static const char *const paths[] = {"/v1/completions", "/v1/chat/completions", "/completion"};
    static const char *const fmts[] = {
        "{\"prompt\":\"%s\",\"max_tokens\":2,\"temperature\":0,\"id_slot\":%d}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"%s\"}],\"max_tokens\":2,\"temperature\":0,\"id_slot\":%d}",
        "{\"prompt\":\"%s\",\"n_predict\":2,\"temperature\":0,\"id_slot\":%d}"};
    static const char *const story = "Tom had a red ball and a big blue kite and a little green boat in the park by the river on a sunny day";
    char body[512], cmd[2048], f[2][96], *r, *want[2], *got;
    int k, i, pin;
    (void)state;
    NEED_SERVER();
    for (k = 0; k < 3; k++)
        for (pin = 0; pin < 2; pin++) {
            for (i = 0; i < 2; i++) {   /* both slots hold a short text */
                snprintf(body, sizeof body, fmts[2], "a", i);
                r = curl(&main_srv, "", "/completion", body, NULL);
                assert_int_equal(field_after(r, "\"id_slot\":"), i);
                free(r);
                assert_true(slot_past_when(&main_srv, i, 8, 1) <= 8);
            }
            snprintf(body, sizeof body, fmts[k], story, pin);
            r = curl(&main_srv, "", paths[k], body, NULL);
            if (strstr(r, "\"error\"")) fail_msg("%s %s:\n%.600s", paths[k], body, r);
            free(r);
            assert_true(slot_past_when(&main_srv, pin, 20, 0) > 20);
            assert_true(slot_past(&main_srv, 1 - pin) <= 8);
        }
    /* two stories for slot 2 at once: they queue for it; each the text it has alone (on slot 3) */
    for (i = 0; i < 2; i++) {
        snprintf(body, sizeof body, "{\"prompt\":\"%s\",\"n_predict\":24,\"temperature\":0,\"id_slot\":3}",
                 i ? "Once upon a time" : "Tom had a red ball");
        r = curl(&main_srv, "", "/completion", body, NULL);
        want[i] = join_strings(r, "content");
        free(r);
        tu_tmp_path(f[i], sizeof f[i], "id_slot");
    }
    snprintf(cmd, sizeof cmd,
             "curl -s --data-binary '{\"prompt\":\"Tom had a red ball\",\"n_predict\":24,\"temperature\":0,\"id_slot\":2}' "
             "http://127.0.0.1:%d/completion > %s & "
             "curl -s --data-binary '{\"prompt\":\"Once upon a time\",\"n_predict\":24,\"temperature\":0,\"id_slot\":2}' "
             "http://127.0.0.1:%d/completion > %s & wait", main_srv.port, f[0], main_srv.port, f[1]);
    assert_int_equal(tu_run(cmd), 0);
    for (i = 0; i < 2; i++) {
        r = read_text(f[i]);
        assert_non_null(r);
        assert_int_equal(field_after(r, "\"id_slot\":"), 2);
        got = join_strings(r, "content");
        assert_string_equal(got, want[i]);
        free(got), free(r), free(want[i]);
        unlink(f[i]);
    }
    for (k = 0; k < 3; k++) {
        snprintf(body, sizeof body, fmts[k], "a", 99);
        expect_status(&main_srv, "", paths[k], body, "400", "\"param\":\"id_slot\"");
        snprintf(body, sizeof body, fmts[k], "a", 4);   /* -np 4: slots 0..3 */
        expect_status(&main_srv, "", paths[k], body, "400", "\"param\":\"id_slot\"");
        snprintf(body, sizeof body, fmts[k], "a", -1);
        expect_status(&main_srv, "", paths[k], body, "200", NULL);
    }
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"a\",\"n\":2,\"id_slot\":0}", "400",
                  "\"param\":\"id_slot\"");
    expect_status(&main_srv, "", "/completion", "{\"prompt\":\"a\",\"id_slot\":\"0\"}", "400", "\"param\":\"id_slot\"");
    assert_server_sound(&main_srv);
}

/* A number after key in s, as a double; fails the test when key is absent. */
static double number_after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    if (!p) fail_msg("no %s in:\n%.600s", key, s);
    return strtod(p + strlen(key), NULL);
}

/* A streamed OpenAI reply's last chunk, the one with finish_reason, carries llama-server's
   timings (no other chunk does): the tokens streamed, as many as asked for and as the usage
   chunk counts, the prompt's, and rates that agree with them. */
static void test_stream_timings(void **state)
{
    static const char *const paths[] = {"/v1/completions", "/v1/chat/completions"};
    static const char *const bodies[] = {
        "{\"prompt\":\"Once upon a time\",\"max_tokens\":12,\"ignore_eos\":true,\"stream\":true,"
        "\"stream_options\":{\"include_usage\":true}}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me about a dog\"}],\"max_tokens\":12,"
        "\"ignore_eos\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true}}"};
    int k;
    (void)state;
    NEED_SERVER();
    for (k = 0; k < 2; k++) {
        char *r = curl(&main_srv, "-N", paths[k], bodies[k], NULL), *line, *last = NULL, *save = NULL;
        long chunks = 0, usage = field_after(r, "\"completion_tokens\":");
        double ms;
        for (line = strtok_r(r, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (!strstr(line, "\"index\":0")) continue;   /* the usage chunk's choices are [] */
            chunks++;
            if (last && strstr(last, "\"timings\"")) fail_msg("%s: timings before the last chunk:\n%s", paths[k], last);
            last = line;
        }
        assert_non_null(last);
        assert_non_null(strstr(last, "\"finish_reason\":\"length\""));
        assert_int_equal((long)number_after(last, "\"predicted_n\":"), 12);
        assert_int_equal(chunks, 12);   /* a token a chunk: the text is ASCII, no stop string holds any back */
        assert_int_equal(usage, 12);
        assert_true(number_after(last, "\"prompt_n\":") >= 0);
        ms = number_after(last, "\"predicted_ms\":");
        assert_true(ms > 0);
        assert_true(fabs(number_after(last, "\"predicted_per_token_ms\":") - ms / 12) < 1e-6 * ms + 1e-9);
        assert_true(fabs(number_after(last, "\"predicted_per_second\":") - 12e3 / ms) < 1e-6 * 12e3 / ms);
        assert_true(number_after(last, "\"prompt_ms\":") >= 0);
        assert_null(strstr(last, "\"draft_n\""));   /* no speculative decoding on this server */
        free(r);
    }
    assert_server_sound(&main_srv);
}

/* ---- speculative decoding (--lookup, -md) ---- */

/* The answer's text (completion "content" or chat "content") for body on s, and its timings'
   draft_n and draft_n_accepted (-1 when absent). */
static char *spec_text(const server *s, const char *path, const char *body, long *drafted, long *accepted)
{
    char *r = curl(s, "", path, body, NULL), *t = join_strings(r, "content");
    const char *d = strstr(r, "\"draft_n\":"), *a = strstr(r, "\"draft_n_accepted\":");
    if (!strstr(r, "\"content\":")) fail_msg("%s %s:\n%.600s", path, body, r);
    *drafted = d ? strtol(d + strlen("\"draft_n\":"), NULL, 10) : -1;
    *accepted = a ? strtol(a + strlen("\"draft_n_accepted\":"), NULL, 10) : -1;
    free(r);
    return t;
}

/* speculative.p_min on a server whose draft model is the target itself (every draft accepted):
   the same greedy text at any p_min; at 0 every draft is as long as it may be, at 1 each draft
   ends after its first token (no token is certain), so each verification emits two tokens and
   there are fewer drafted tokens; 0.75 (the default) lies between. */
static void spec_p_min(const server *s, const char *fmt, const char *want)
{
    static const char *const p_min[] = {"0", "1", "0.75"};
    long d[3], a;
    int i;
    for (i = 0; i < 3; i++) {
        char body[512], field[64], *got;
        snprintf(field, sizeof field, ",\"speculative.p_min\":%s", p_min[i]);
        snprintf(body, sizeof body, fmt, field);
        got = spec_text(s, "/completion", body, &d[i], &a);
        print_message("p_min %s: %ld drafted, %ld accepted\n", p_min[i], d[i], a);
        assert_string_equal(got, want);
        assert_int_equal(a, d[i]);
        free(got);
    }
    assert_true(d[1] > 0 && d[1] < d[0]);
    assert_true(d[1] <= 48 / 2);   /* 48 tokens: the prompt's one, then two per verification at most */
    assert_true(d[2] >= d[1] && d[2] <= d[0]);
}

/* A server that must refuse to start with these arguments, saying `why` on stderr. */
static void refused_at_start(const char *args, const char *why)
{
    server s;
    char *log;
    if (server_start(&s, args)) {
        server_stop(&s);
        fail_msg("swa-server %s started", args);
    }
    if (s.pid > 0) { kill(s.pid, SIGKILL); waitpid(s.pid, NULL, 0); }
    log = read_text(s.log);
    if (!log || !strstr(log, why)) fail_msg("swa-server %s: no \"%s\" in its log:\n%s", args, why, log ? log : "");
    free(log);
    unlink(s.log);
}

/* Greedy text with drafts (prompt lookup; the shipped model as its own draft model) is the text
   without them, for /completion and chat; the counts are there and sane (a model drafting for
   itself at temperature 0 has every draft accepted); sampled runs complete; the request fields
   are checked; a draft model of another vocabulary is refused at start. */
static void test_speculative(void **state)
{
    static server s;
    static const char *const bodies[][2] = {
        {"/completion", "{\"prompt\":\"Tom had a red ball. Tom loved his red ball. Tom had a red ball. Tom\","
                        "\"n_predict\":48,\"temperature\":0%s}"},
        {"/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me about a dog and a red ball\"}],"
                                 "\"max_tokens\":32,\"temperature\":0%s}"},
        {"/completion", "{\"prompt\":\"Tom had a red ball. Tom loved his red ball. Tom had a red ball. Tom\","
                        "\"n_predict\":48,\"temperature\":0,\"stop\":[\"jumped\"]%s}"},   /* a stop string: what followed it rewound */
    };
    static const char *const modes[] = {"--lookup --draft-max 4", "-md " MODEL " --draft-max 3"};
    char body[512], cmd[512], *want[3], *got, *log;
    long d, a;
    int m, k;
    (void)state;
#ifdef SWA_TEST_TSAN
    /* ThreadSanitizer: the drafts run on the scheduler thread like all of a request's work; test_speculative
       checks the verifier's rewinds on a pool of 2 */
    skip();
#endif
    NEED_SERVER();
    for (k = 0; k < 3; k++) {   /* the reference, without drafts; there the fields take only what changes nothing */
        snprintf(body, sizeof body, bodies[k][1], ",\"speculative.n_max\":0,\"speculative.n_min\":0,\"speculative.p_min\":0.75");
        want[k] = spec_text(&main_srv, bodies[k][0], body, &d, &a);
        assert_int_equal(d, -1);
    }
    extra_srv = &s;
    for (m = 0; m < 2; m++) {
        snprintf(cmd, sizeof cmd, "-np 2 -c 256 %s", modes[m]);
        if (!server_start(&s, cmd)) fail_msg("swa-server %s did not start", cmd);
        for (k = 0; k < 3; k++) {
            snprintf(body, sizeof body, bodies[k][1], "");
            got = spec_text(&s, bodies[k][0], body, &d, &a);
            print_message("%s %s: %ld drafted, %ld accepted\n", modes[m], bodies[k][0], d, a);
            assert_string_equal(got, want[k]);
            if (k == 0 || m == 1) assert_true(d > 0);   /* the completion's prompt repeats itself */
            assert_true(d == -1 ? a == -1 : a >= 0 && a <= d);
            if (m == 1) assert_int_equal(a, d);
            free(got);
        }
        /* two slots drafting in the same steps: each choice the text alone */
        {
            char *r, *two = (char *)malloc(2 * strlen(want[0]) + 1);
            assert_non_null(two);
            strcpy(two, want[0]);
            strcat(two, want[0]);
            r = curl(&s, "", "/v1/completions", "{\"prompt\":\"Tom had a red ball. Tom loved his red ball. Tom had a red "
                     "ball. Tom\",\"max_tokens\":48,\"temperature\":0,\"n\":2}", NULL);
            got = join_strings(r, "text");
            assert_string_equal(got, two);
            assert_non_null(strstr(r, "\"draft_n\":"));
            free(got), free(r), free(two);
        }
        /* per request caps: none (n_max 0), n_min above what is drafted; both leave the text as it is */
        snprintf(body, sizeof body, bodies[0][1], ",\"speculative.n_max\":0");
        got = spec_text(&s, bodies[0][0], body, &d, &a);
        assert_string_equal(got, want[0]);
        assert_int_equal(d, -1);
        free(got);
        snprintf(body, sizeof body, bodies[0][1], ",\"speculative.n_max\":2,\"speculative.n_min\":1");
        got = spec_text(&s, bodies[0][0], body, &d, &a);
        assert_string_equal(got, want[0]);
        free(got);
        /* sampled: drafts accepted by the rejection rule, a complete answer */
        got = spec_text(&s, "/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":40,\"temperature\":0.9,"
                        "\"seed\":7,\"ignore_eos\":true}", &d, &a);
        assert_true(strlen(got) > 40);
        assert_true(a <= d);
        free(got);
        expect_status(&s, "", "/completion", "{\"prompt\":\"a\",\"speculative.n_max\":5}", "400", "\"param\":\"speculative.n_max\"");
        expect_status(&s, "", "/completion", "{\"prompt\":\"a\",\"speculative.n_min\":-1}", "400", "\"param\":\"speculative.n_min\"");
        expect_status(&s, "", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],"
                      "\"speculative.p_min\":2}", "400", "\"param\":\"speculative.p_min\"");
        if (m == 0) {   /* prompt lookup has no probabilities: p_min only at its default */
            expect_status(&s, "", "/completion", "{\"prompt\":\"a\",\"speculative.p_min\":0.5}", "400",
                          "\"param\":\"speculative.p_min\"");
            snprintf(body, sizeof body, bodies[0][1], ",\"speculative.p_min\":0.75");
            got = spec_text(&s, bodies[0][0], body, &d, &a);
            assert_string_equal(got, want[0]);
            free(got);
        } else {
            spec_p_min(&s, bodies[0][1], want[0]);
        }
        assert_server_sound(&s);
        log = read_text(s.log);
        assert_non_null(log);
        assert_non_null(strstr(log, " draft_n_accepted="));
        free(log);
        assert_true(server_stop(&s));
    }
    extra_srv = NULL;
    free(want[0]), free(want[1]), free(want[2]);
}

/* The speculation fields on a server without it, and the flags a server refuses at its start. */
static void test_speculative_fields(void **state)
{
    char path[128], cmd[512];
    (void)state;
    NEED_SERVER();
    expect_status(&main_srv, "", "/completion", "{\"prompt\":\"a\",\"speculative.n_max\":8}", "400",
                  "\"param\":\"speculative.n_max\"");
    expect_status(&main_srv, "", "/v1/completions", "{\"prompt\":\"a\",\"speculative.n_min\":2}", "400",
                  "\"param\":\"speculative.n_min\"");
    expect_status(&main_srv, "", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],"
                  "\"speculative.p_min\":0.5}", "400", "needs a draft model (-md)");
    expect_status(&main_srv, "", "/completion", "{\"prompt\":\"a\",\"speculative.n_max\":300}", "400", "speculative.n_max");
    tu_tmp_path(path, sizeof path, "draft_model");   /* 272 tokens, the shipped model has more */
    snprintf(cmd, sizeof cmd, "%s --shape custom --type f32 --vocab 272 --ctx 256 --arch llama --layers 1 --dim 32 --heads 2 "
             "--kv-heads 1 --ff 32 %s 2>/dev/null", PROGRAM("swa-mkmodel"), path);
    assert_int_equal(tu_run(cmd), 0);
    snprintf(cmd, sizeof cmd, "-md %s", path);
    refused_at_start(cmd, "the target's vocabulary");
    unlink(path);
    refused_at_start("--lookup --draft-p-min 0.5", "--draft-p-min needs --model-draft");
    refused_at_start("-md " MODEL " --draft-p-min 1.5", "--draft-p-min needs a number from 0 to 1");
    refused_at_start("--lookup -md " MODEL, "give one of --lookup and --model-draft");
    refused_at_start("--draft-max 4", "need --lookup or --model-draft");
}

/* ---- a format's markers held as control tokens ----
   A random model whose SentencePiece vocabulary holds Mistral's [TOOL_CALLS] as a control token
   (after <unk> <s> </s> and the 256 byte tokens), with a template the server reads as Mistral's. */
enum { MK_TOOL_CALLS = 3 + 256, MK_VOCAB = MK_TOOL_CALLS + 3 };

static void write_marker_vocab(gw_writer *w, const void *arg)
{
    static const char *const extra[] = {"[TOOL_CALLS]", "[INST]", "[/INST]"};
    (void)arg;
    tu_small_vocab(w, extra, 3, 3);
    gw_kv_str(w, "tokenizer.chat_template",
              "{{ bos_token }}{% for m in messages %}[INST]{{ m['content'] }}[/INST]{% endfor %}"
              "{% if false %}[TOOL_CALLS]{% endif %}");
}

/* A one-layer random model (F32, width 32) with the vocabulary `vocab` writes, saved under a
   temporary path made from name (written to path, for the caller to remove) and served alone on s
   (one slot of n_ctx positions, no snapshot cache) as the extra server. */
static void serve_small_model(server *s, void (*vocab)(gw_writer *, const void *), int64_t n_vocab, int n_ctx,
                              uint64_t seed, const char *name, char *path, size_t path_size)
{
    tu_spec spec;
    tu_model tm;
    char args[256];
    memset(&spec, 0, sizeof spec);
    spec.n_layer = 1; spec.n_embd = 32; spec.n_head = 2; spec.n_kv_head = 1; spec.n_ff = 48;
    spec.n_vocab = n_vocab; spec.n_ctx = n_ctx; spec.type = GW_F32; spec.seed = seed;
    spec.extra_keys = vocab;
    assert_true(tu_build(&tm, &spec));
    tu_tmp_path(path, path_size, name);
    tu_write_file(path, tm.gguf, tm.gguf_size);
    tu_free(&tm);
    snprintf(args, sizeof args, "-m %s -np 1 -c %d --cache-ram 0", path, n_ctx);
    start_extra(s, args);
}

/* A forced call whose first token is the [TOOL_CALLS] control token (a logit bias makes it the
   choice where the grammar allows it): the chat reply reads the call, and a completion still
   writes the control token as nothing. */
static void test_control_token_markers(void **state)
{
    static server s;
    char path[128], *r;
    (void)state;
    NEED_SERVER();
    serve_small_model(&s, write_marker_vocab, MK_VOCAB, 256, 3, "marker_model", path, sizeof path);
    r = curl(&s, "", "/v1/chat/completions",
             "{\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}],\"tools\":[{\"type\":\"function\",\"function\":"
             "{\"name\":\"ping\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}}],\"tool_choice\":\"required\","
             "\"temperature\":0,\"max_tokens\":80,\"logit_bias\":{\"259\":100}}", NULL);
    if (!strstr(r, "\"finish_reason\":\"tool_calls\"") || !strstr(r, "\"name\":\"ping\"") ||
        !strstr(r, "\"arguments\":\"{}\"") || !strstr(r, "\"content\":null"))
        fail_msg("no call read: %s", r);
    free(r);
    r = curl(&s, "", "/completion", "{\"prompt\":\"ping\",\"n_predict\":3,\"temperature\":0,\"logit_bias\":{\"259\":100}}", NULL);
    if (!strstr(r, "\"content\":\"\"") || !strstr(r, "\"tokens_predicted\":3")) fail_msg("completion: %s", r);
    free(r);
    assert_true(server_stop(&s));
    extra_srv = NULL;
    unlink(path);
}

/* ---- ollama's tools and think, through a model's Jinja template ----
   A random model with a byte vocabulary (each character of the prompt a token) and a template
   that writes the tools, a call, a tool's answer, reasoning_effort and enable_thinking as marked
   text; it has no call markers, so calls are the generic JSON form, which a format schema makes
   the model write. */
#define OT_TEMPLATE                                                                                                       \
    "{{ bos_token }}{% if tools %}[T{% for t in tools %}:{{ t.function.name }}{% endfor %}]{% endif %}"                   \
    "{% for m in messages %}{% if m.role == 'tool' %}[R:{{ m.name }}={{ m.content }}]"                                    \
    "{% elif m.tool_calls %}[C{% for c in m.tool_calls %}:{{ c.function.name }}{{ c.function.arguments | tojson }}"        \
    "{% endfor %}]{% else %}[{{ m.role }}={{ m.content }}]{% endif %}{% endfor %}"                                        \
    "{% if add_generation_prompt %}[assistant=]{% if reasoning_effort is defined %}[E:{{ reasoning_effort }}]{% endif %}"  \
    "{% if enable_thinking is defined %}{% if enable_thinking %}<think>{% else %}<think></think>{% endif %}{% endif %}"     \
    "{% endif %}"
#define OT_PING "{\"type\":\"function\",\"function\":{\"name\":\"ping\",\"description\":\"Ping a host.\",\"parameters\":" \
                "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\"}},\"required\":[\"x\"]}}}"
/* the generic form of a call to ping with x 1, as the only text the model may write */
#define OT_CALL "{\"type\":\"object\",\"required\":[\"tool_call\"],\"additionalProperties\":false,\"properties\":{\"tool_call\":" \
                "{\"type\":\"object\",\"required\":[\"name\",\"arguments\"],\"additionalProperties\":false,\"properties\":"        \
                "{\"name\":{\"const\":\"ping\"},\"arguments\":{\"type\":\"object\",\"properties\":{\"x\":{\"const\":1}},"          \
                "\"required\":[\"x\"],\"additionalProperties\":false}}}}}"

static void write_think_vocab(gw_writer *w, const void *arg)
{
    (void)arg;
    tu_small_vocab(w, NULL, 0, 0);
    gw_kv_str(w, "tokenizer.chat_template", OT_TEMPLATE);
}

/* prompt_eval_count of an /api/chat request on s with messages msgs and `extra` fields */
static long ollama_prompt_count(const server *s, const char *msgs, const char *extra)
{
    char body[2048], *r;
    long n;
    snprintf(body, sizeof body, "{\"messages\":%s,\"stream\":false,\"options\":{\"num_predict\":1}%s}", msgs, extra);
    r = curl(s, "", "/api/chat", body, NULL);
    n = field_after(r, "\"prompt_eval_count\":");
    free(r);
    return n;
}

static void ollama_tool_call(const server *s)
{
    char *r;
    r = curl(s, "", "/api/chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}],\"stream\":false,\"tools\":[" OT_PING "],"
             "\"format\":" OT_CALL ",\"options\":{\"temperature\":0,\"num_predict\":200}}", NULL);
    if (!strstr(r, "\"content\":\"\",\"tool_calls\":[{\"function\":{\"index\":0,\"name\":\"ping\",\"arguments\":{\"x\":1}}}]}") ||
        !strstr(r, "\"done\":true,\"done_reason\":\"stop\""))
        fail_msg("no call read: %s", r);
    free(r);
    /* streamed: one line with the call, whole, then the last with done and no call */
    r = curl(s, "-N", "/api/chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}],\"tools\":[" OT_PING "],"
             "\"format\":" OT_CALL ",\"options\":{\"temperature\":0,\"num_predict\":200}}", NULL);
    {
        const char *a = strstr(r, "\"tool_calls\":[{\"function\":{\"index\":0,\"name\":\"ping\",\"arguments\":{\"x\":1}}}]},\"done\":false}\n");
        const char *last = strstr(r, "\"done\":true");
        if (!a || strstr(a + strlen("\"tool_calls\""), "tool_calls") || !last || last < a || strstr(last, "\n{")) fail_msg("streamed call: %s", r);
    }
    free(r);
}

/* The conversation after a call: ollama's shape (arguments an object, the tool's answer named by
   tool_name) renders as OpenAI's does, which /apply-template shows as transformers would write it. */
static void ollama_tool_turns(const server *s)
{
    long want, got;
    char *r;
    expect_status(s, "", "/apply-template", "{\"messages\":[{\"role\":\"user\",\"content\":\"ping\"},{\"role\":\"assistant\","
                  "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"ping\",\"arguments\":\"{\\\"x\\\":1}\"}}]},"
                  "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"name\":\"ping\",\"content\":\"pong\"}],\"tools\":[" OT_PING "]}",
                  "200", "\"prompt\":\"<s>[T:ping][user=ping][C:ping{\\\"x\\\": 1}][R:ping=pong][assistant=]\"");
    r = curl(s, "", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"ping\"},{\"role\":\"assistant\","
             "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"ping\",\"arguments\":\"{\\\"x\\\":1}\"}}]},"
             "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"name\":\"ping\",\"content\":\"pong\"}],\"tools\":[" OT_PING "],"
             "\"max_tokens\":1}", NULL);
    want = field_after(r, "\"prompt_tokens\":");
    free(r);
    got = ollama_prompt_count(s, "[{\"role\":\"user\",\"content\":\"ping\"},{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":"
                              "[{\"function\":{\"name\":\"ping\",\"arguments\":{\"x\":1}}}]},{\"role\":\"tool\",\"content\":\"pong\","
                              "\"tool_name\":\"ping\"}]", ",\"tools\":[" OT_PING "]");
    assert_int_equal(got, want);
    got = ollama_prompt_count(s, "[{\"role\":\"user\",\"content\":\"ping\"},{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":"
                              "[{\"function\":{\"name\":\"ping\",\"arguments\":{\"x\":1}}}]},{\"role\":\"tool\",\"content\":\"pong\","
                              "\"tool_name\":\"pin\"}]", ",\"tools\":[" OT_PING "]");
    assert_int_equal(got, want - 1);   /* the name is the tool_name given */
}

/* think reaches the template as enable_thinking (and a level as reasoning_effort too): the prompt
   grows by the text the template writes for it, one token a character; with thinking on, the
   prompt opens <think> and the whole answer is thinking. */
static void ollama_think(const server *s)
{
    static const char *const msgs = "[{\"role\":\"user\",\"content\":\"ping\"}]";
    long plain = ollama_prompt_count(s, msgs, "");
    char *r;
    assert_int_equal(ollama_prompt_count(s, msgs, ",\"think\":false"), plain + (long)strlen("<think></think>"));
    assert_int_equal(ollama_prompt_count(s, msgs, ",\"think\":true"), plain + (long)strlen("<think>"));
    assert_int_equal(ollama_prompt_count(s, msgs, ",\"think\":\"high\""), plain + (long)strlen("[E:high]<think>"));
    expect_status(s, "", "/apply-template", "{\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}],"
                  "\"chat_template_kwargs\":{\"enable_thinking\":false}}", "200", "\"prompt\":\"<s>[user=ping][assistant=]<think></think>\"");
    r = curl(s, "", "/api/chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}],\"stream\":false,\"think\":true,"
             "\"options\":{\"num_predict\":8,\"temperature\":0}}", NULL);
    if (!strstr(r, "\"content\":\"\",\"thinking\":\"") || !strstr(r, "\"eval_count\":8")) fail_msg("think true: %s", r);
    free(r);
    r = curl(s, "-N", "/api/chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}],\"think\":true,"
             "\"options\":{\"num_predict\":8,\"temperature\":0}}", NULL);
    if (!strstr(r, "\"thinking\":\"") || strstr(r, "\"content\":\"<") || !strstr(r, "\"done\":true")) fail_msg("think true streamed: %s", r);
    free(r);
    r = curl(s, "", "/api/chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}],\"stream\":false,\"think\":false,"
             "\"options\":{\"num_predict\":8,\"temperature\":0}}", NULL);
    if (strstr(r, "\"thinking\"")) fail_msg("think false: %s", r);
    free(r);
    expect_status(s, "", "/api/chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}],\"think\":\"max\"}", "400", "think");
    /* /api/generate writes its prompt without the template: no think, not even false, on this model */
    expect_status(s, "", "/api/generate", "{\"prompt\":\"ping\",\"think\":false}", "400", "think reaches");
    expect_status(s, "", "/api/show", "{\"model\":\"x\"}", "200", "\"capabilities\":[\"completion\",\"tools\",\"thinking\"]");
}

static void test_ollama_tools_think(void **state)
{
    static server s;
    char path[128];
    (void)state;
    NEED_SERVER();
    serve_small_model(&s, write_think_vocab, 3 + 256, 512, 5, "think_model", path, sizeof path);
    ollama_tool_call(&s);
    ollama_tool_turns(&s);
    ollama_think(&s);
    assert_server_sound(&s);
    assert_true(server_stop(&s));
    extra_srv = NULL;
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endpoints),
        cmocka_unit_test(test_greedy_matches_generate),
        cmocka_unit_test(test_concurrent_streams),
        cmocka_unit_test(test_stop_and_n),
        cmocka_unit_test(test_conversation_reuse),
        cmocka_unit_test(test_request_errors),
        cmocka_unit_test(test_auth_and_busy),
        cmocka_unit_test(test_load_and_faults),
        cmocka_unit_test(test_fields_refused),
        cmocka_unit_test(test_fields_acting),
        cmocka_unit_test(test_more_endpoints),
        cmocka_unit_test(test_structured_output),
        cmocka_unit_test(test_stop_race),
        cmocka_unit_test(test_openai_client),
        cmocka_unit_test(test_ollama_client),
        cmocka_unit_test_teardown(test_cache_conversation_returns, stop_extra),
        cmocka_unit_test_teardown(test_cache_lru, stop_extra),
        cmocka_unit_test_teardown(test_cache_shared_system_prompt, stop_extra),
        cmocka_unit_test_teardown(test_slot_save_restore, stop_extra),
        cmocka_unit_test(test_slot_actions_off),
        cmocka_unit_test_teardown(test_infill, stop_extra),
        cmocka_unit_test(test_id_slot),
        cmocka_unit_test(test_stream_timings),
        cmocka_unit_test_teardown(test_speculative, stop_extra),
        cmocka_unit_test(test_speculative_fields),
        cmocka_unit_test_teardown(test_control_token_markers, stop_extra),
        cmocka_unit_test_teardown(test_ollama_tools_think, stop_extra),
    };
    return cmocka_run_group_tests(tests, setup, teardown) || stop_failed;
}
