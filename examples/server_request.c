/* swa-server's request parsing (see server_request.h). */
#include "server_request.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(srv_error *err, int status, const char *param, const char *fmt, ...)
{
    va_list ap;
    err->status = status;
    err->type = status == 400 ? "invalid_request_error" : status == 413 ? "invalid_request_error" : "server_error";
    snprintf(err->param, sizeof err->param, "%s", param ? param : "");
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}

int srv_utf8_valid(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k, len;
        uint32_t cp;
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
        else return 0;
        if (n - i < len) return 0;
        for (k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        i += len;
    }
    return 1;
}

size_t srv_utf8_complete(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = n, back = 0;
    /* at most 3 continuation bytes and a lead byte at the end can be an unfinished character */
    while (i > 0 && back < 4) {
        unsigned c = s[i - 1];
        size_t need;
        back++;
        i--;
        if ((c & 0xC0) == 0x80) continue;
        need = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        return back < need ? i : n;
    }
    return n;
}

int srv_tokenize(const swa_vocab *v, const char *text, size_t len, int flags, int32_t **out, size_t *n_out)
{
    size_t cap = len + 8, n = 0;
    int32_t *tok = (int32_t *)malloc(cap * sizeof *tok);
    swa_status st;
    *out = NULL;
    *n_out = 0;
    if (!tok) return -1;
    st = swa_tokenize(v, text, len, flags, tok, cap, &n, NULL);
    if (st == SWA_ERR_BUFFER_TOO_SMALL) {
        int32_t *t2 = (int32_t *)realloc(tok, (n + 1) * sizeof *tok);
        if (!t2) { free(tok); return -1; }
        tok = t2;
        st = swa_tokenize(v, text, len, flags, tok, n + 1, &n, NULL);
    }
    if (st != SWA_OK) { free(tok); return -1; }
    *out = tok;
    *n_out = n;
    return 0;
}

/* ---- fields ---- */

/* A number field in [lo, hi], or absent/null (then *out is untouched). */
static int get_number(const cJSON *o, const char *name, double lo, double hi, double *out, srv_error *err)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!f || cJSON_IsNull(f)) return 0;
    if (!cJSON_IsNumber(f) || !isfinite(f->valuedouble))
        return fail(err, 400, name, "%s must be a number", name);
    if (f->valuedouble < lo || f->valuedouble > hi)
        return fail(err, 400, name, "%s must be between %g and %g, not %g", name, lo, hi, f->valuedouble);
    *out = f->valuedouble;
    return 0;
}

static int get_int(const cJSON *o, const char *name, double lo, double hi, int64_t *out, srv_error *err)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!f || cJSON_IsNull(f)) return 0;
    if (!cJSON_IsNumber(f) || !isfinite(f->valuedouble) || f->valuedouble != floor(f->valuedouble))
        return fail(err, 400, name, "%s must be an integer", name);
    if (f->valuedouble < lo || f->valuedouble > hi)
        return fail(err, 400, name, "%s must be between %.0f and %.0f, not %.0f", name, lo, hi, f->valuedouble);
    *out = (int64_t)f->valuedouble;
    return 0;
}

static int get_bool(const cJSON *o, const char *name, int *out, srv_error *err)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!f || cJSON_IsNull(f)) return 0;
    if (!cJSON_IsBool(f)) return fail(err, 400, name, "%s must be true or false", name);
    *out = cJSON_IsTrue(f) ? 1 : 0;
    return 0;
}

static int add_stop(srv_request *r, const cJSON *s, srv_error *err)
{
    size_t n;
    if (!cJSON_IsString(s)) return fail(err, 400, "stop", "stop must be a string or a list of strings");
    n = strlen(s->valuestring);
    if (n == 0) return 0;   /* an empty stop string stops nothing */
    if (n > SRV_MAX_STOP_LEN) return fail(err, 400, "stop", "a stop string is longer than %d bytes", SRV_MAX_STOP_LEN);
    if (r->n_stop == SRV_MAX_STOP) return fail(err, 400, "stop", "stop has more than %d strings", SRV_MAX_STOP);
    if (!(r->stop[r->n_stop] = (char *)malloc(n + 1))) return fail(err, 500, "stop", "out of memory");
    memcpy(r->stop[r->n_stop++], s->valuestring, n + 1);
    return 0;
}

static int parse_stop(const cJSON *o, srv_request *r, srv_error *err)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "stop"), *s;
    if (!f || cJSON_IsNull(f)) return 0;
    if (cJSON_IsString(f)) return add_stop(r, f, err);
    if (!cJSON_IsArray(f)) return fail(err, 400, "stop", "stop must be a string or a list of strings");
    cJSON_ArrayForEach(s, f) if (add_stop(r, s, err)) return -1;
    return 0;
}

/* The sampling fields, llama-server's defaults where OpenAI gives none (the library's: temperature
   0.8, top_k 40, top_p 0.95, min_p 0.05; no repetition penalty). */
static int parse_sampling(const cJSON *o, srv_request *r, srv_error *err)
{
    swa_sampler_config *s = &r->sampling;
    double t = s->temperature, p = s->top_p, mp = s->min_p, rp = 1;
    int64_t k = s->top_k, seed = -1, rl = 64;
    if (get_number(o, "temperature", 0, 100, &t, err) || get_number(o, "top_p", 0, 1, &p, err) ||
        get_number(o, "min_p", 0, 1, &mp, err) || get_int(o, "top_k", 0, 1e9, &k, err) ||
        get_int(o, "seed", -9.2e18, 9.2e18, &seed, err) || get_number(o, "repeat_penalty", 0, 100, &rp, err) ||
        get_int(o, "repeat_last_n", 0, 1e6, &rl, err))
        return -1;
    s->temperature = (float)t;
    s->top_p = (float)p;
    s->min_p = (float)mp;
    s->top_k = (int32_t)k;
    s->repeat_penalty = (float)rp;
    s->repeat_last_n = (int32_t)rl;
    s->seed = (uint64_t)seed;   /* -1: the server picks one */
    return 0;
}

/* The text of a message's content: a string, null, or a list of {"type":"text","text":...} parts. */
static int content_text(const cJSON *c, size_t i, char **out, srv_error *err)
{
    char field[64];
    const cJSON *part;
    size_t len = 0;
    snprintf(field, sizeof field, "messages[%zu].content", i);
    *out = NULL;
    if (!c || cJSON_IsNull(c)) { *out = (char *)calloc(1, 1); return *out ? 0 : fail(err, 500, field, "out of memory"); }
    if (cJSON_IsString(c)) {
        size_t n = strlen(c->valuestring);
        if (!srv_utf8_valid(c->valuestring, n)) return fail(err, 400, field, "%s is not valid UTF-8", field);
        if (!(*out = (char *)malloc(n + 1))) return fail(err, 500, field, "out of memory");
        memcpy(*out, c->valuestring, n + 1);
        return 0;
    }
    if (!cJSON_IsArray(c)) return fail(err, 400, field, "%s must be a string or a list of text parts", field);
    if (!(*out = (char *)calloc(1, 1))) return fail(err, 500, field, "out of memory");
    cJSON_ArrayForEach(part, c) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
        const cJSON *text = cJSON_GetObjectItemCaseSensitive(part, "text");
        size_t n;
        char *grown;
        if (!cJSON_IsString(type) || strcmp(type->valuestring, "text") || !cJSON_IsString(text)) {
            free(*out);
            *out = NULL;
            return fail(err, 400, field, "%s: only parts of type \"text\" with a string \"text\" are supported", field);
        }
        n = strlen(text->valuestring);
        if (!srv_utf8_valid(text->valuestring, n)) {
            free(*out);
            *out = NULL;
            return fail(err, 400, field, "%s is not valid UTF-8", field);
        }
        if (!(grown = (char *)realloc(*out, len + n + 1))) {
            free(*out);
            *out = NULL;
            return fail(err, 500, field, "out of memory");
        }
        *out = grown;
        memcpy(*out + len, text->valuestring, n + 1);
        len += n;
    }
    return 0;
}

/* The bytes of text that format msgs[0..n-1) (no assistant's prefix after them) when they are a
   prefix of it, else 0: where a conversation's past ends, for the snapshot cache. */
static size_t chat_head(const swa_chat_template *t, const swa_chat_message *msgs, size_t n, const char *text, size_t len)
{
    size_t head = 0;
    char *buf;
    if (n < 2 || swa_chat_format(t, msgs, n - 1, 0, NULL, 0, &head, NULL) != SWA_ERR_BUFFER_TOO_SMALL || head > len ||
        !(buf = (char *)malloc(head + 1)))
        return 0;
    if (swa_chat_format(t, msgs, n - 1, 0, buf, head + 1, &head, NULL) != SWA_OK || memcmp(buf, text, head)) head = 0;
    free(buf);
    return head;
}

/* The messages formatted with the chat template, with the assistant's prefix at the end; *head
   the bytes of it chat_head finds. */
static int chat_prompt(const cJSON *o, const srv_limits *lim, char **text, size_t *len, size_t *head, srv_error *err)
{
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(o, "messages"), *m;
    swa_chat_message *cm;
    char **contents;
    size_t n, i = 0;
    int rc = -1;
    swa_error e;
    *text = NULL;
    if (!msgs) return fail(err, 400, "messages", "messages is required");
    if (!cJSON_IsArray(msgs)) return fail(err, 400, "messages", "messages must be a list of messages");
    n = (size_t)cJSON_GetArraySize(msgs);
    if (n == 0) return fail(err, 400, "messages", "messages is empty");
    cm = (swa_chat_message *)calloc(n, sizeof *cm);
    contents = (char **)calloc(n, sizeof *contents);
    if (!cm || !contents) { fail(err, 500, "messages", "out of memory"); goto out; }
    cJSON_ArrayForEach(m, msgs) {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
        char field[48];
        snprintf(field, sizeof field, "messages[%zu].role", i);
        if (!cJSON_IsObject(m)) { fail(err, 400, "messages", "messages[%zu] must be an object", i); goto out; }
        if (!cJSON_IsString(role)) { fail(err, 400, field, "%s must be a string", field); goto out; }
        cm[i].role = strcmp(role->valuestring, "developer") ? role->valuestring : "system";
        if (strcmp(cm[i].role, "system") && strcmp(cm[i].role, "user") && strcmp(cm[i].role, "assistant")) {
            fail(err, 400, field, "%s must be system, developer, user or assistant, not \"%.40s\"", field, role->valuestring);
            goto out;
        }
        if (content_text(cJSON_GetObjectItemCaseSensitive(m, "content"), i, &contents[i], err)) goto out;
        cm[i].content = contents[i];
        i++;
    }
    if (swa_chat_format(lim->tmpl, cm, n, 1, NULL, 0, len, &e) != SWA_ERR_BUFFER_TOO_SMALL) {
        fail(err, 400, "messages", "messages: %s", e.msg);
        goto out;
    }
    if (!(*text = (char *)malloc(*len + 1))) { fail(err, 500, "messages", "out of memory"); goto out; }
    if (swa_chat_format(lim->tmpl, cm, n, 1, *text, *len + 1, len, &e) != SWA_OK) {
        free(*text);
        *text = NULL;
        fail(err, 400, "messages", "messages: %s", e.msg);
        goto out;
    }
    *head = chat_head(lim->tmpl, cm, n, *text, *len);
    rc = 0;
out:
    for (i = 0; contents && i < n; i++) free(contents[i]);
    free(contents);
    free(cm);
    return rc;
}

/* A completion's prompt: a string, a list of token ids, or a list holding one of those. */
static int completion_prompt(const cJSON *o, const srv_limits *lim, srv_request *r, srv_error *err)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "prompt"), *t;
    int32_t n_vocab = swa_vocab_size(lim->vocab);
    if (!p) return fail(err, 400, "prompt", "prompt is required");
    if (cJSON_IsArray(p) && cJSON_GetArraySize(p) == 1 && !cJSON_IsNumber(cJSON_GetArrayItem(p, 0)))
        p = cJSON_GetArrayItem(p, 0);
    if (cJSON_IsString(p)) {
        size_t n = strlen(p->valuestring);
        int flags = swa_vocab_add_bos(lim->vocab) ? SWA_TOKENIZE_ADD_BOS : 0;
        if (!srv_utf8_valid(p->valuestring, n)) return fail(err, 400, "prompt", "prompt is not valid UTF-8");
        if (srv_tokenize(lim->vocab, p->valuestring, n, flags, &r->prompt, &r->n_prompt))
            return fail(err, 500, "prompt", "the prompt could not be tokenized");
        return 0;
    }
    if (!cJSON_IsArray(p))
        return fail(err, 400, "prompt", "prompt must be a string or a list of token ids (one prompt per request)");
    r->prompt = (int32_t *)malloc(((size_t)cJSON_GetArraySize(p) + 1) * sizeof(int32_t));
    if (!r->prompt) return fail(err, 500, "prompt", "out of memory");
    cJSON_ArrayForEach(t, p) {
        if (!cJSON_IsNumber(t) || t->valuedouble != floor(t->valuedouble) || t->valuedouble < 0 || t->valuedouble >= n_vocab)
            return fail(err, 400, "prompt", "prompt[%zu] is not a token id (an integer from 0 to %d)", r->n_prompt, n_vocab - 1);
        r->prompt[r->n_prompt++] = (int32_t)t->valuedouble;
    }
    return 0;
}

/* The prompt tokens the first `head` bytes of its text give (the tokens both share). */
static size_t head_tokens(const swa_vocab *v, const char *text, size_t head, int flags, const srv_request *r)
{
    int32_t *t;
    size_t n, i = 0;
    if (!head || srv_tokenize(v, text, head, flags, &t, &n)) return 0;
    while (i < n && i < r->n_prompt && t[i] == r->prompt[i]) i++;
    free(t);
    return i;
}

static int parse_object(const cJSON *o, int kind, const srv_limits *lim, srv_request *r, srv_error *err)
{
    const cJSON *so = cJSON_GetObjectItemCaseSensitive(o, "stream_options"), *lp;
    int64_t max = -1, n = 1, top = 0;
    if (!cJSON_IsObject(o)) return fail(err, 400, "", "the request body must be a JSON object");
    if (kind == SRV_CHAT) {
        char *text;
        size_t len, head = 0;
        int flags = SWA_TOKENIZE_SPECIAL | (swa_vocab_add_bos(lim->vocab) ? SWA_TOKENIZE_ADD_BOS : 0);
        if (chat_prompt(o, lim, &text, &len, &head, err)) return -1;
        if (srv_tokenize(lim->vocab, text, len, flags, &r->prompt, &r->n_prompt)) {
            free(text);
            return fail(err, 500, "messages", "the messages could not be tokenized");
        }
        r->n_head = head_tokens(lim->vocab, text, head, flags, r);
        free(text);
    } else if (completion_prompt(o, lim, r, err)) {
        return -1;
    }
    if (r->n_prompt == 0) return fail(err, 400, kind == SRV_CHAT ? "messages" : "prompt", "the prompt is empty");
    if (r->n_prompt >= (size_t)lim->n_ctx)
        return fail(err, 400, kind == SRV_CHAT ? "messages" : "prompt",
                    "the prompt is %zu tokens, and the context holds %d (prompt and completion): shorten it",
                    r->n_prompt, lim->n_ctx);
    if (get_int(o, "max_tokens", 1, 1e9, &max, err) || get_int(o, "max_completion_tokens", 1, 1e9, &max, err) ||
        get_int(o, "n_predict", -1, 1e9, &max, err) || get_int(o, "n", 1, lim->n_slots, &n, err) ||
        get_bool(o, "stream", &r->stream, err) || get_bool(o, "ignore_eos", &r->ignore_eos, err) || get_bool(o, "cache_prompt", &r->cache_prompt, err) ||
        parse_sampling(o, r, err) || parse_stop(o, r, err))
        return -1;
    r->max_tokens = max;
    r->n_choices = (int)n;
    if (so && !cJSON_IsNull(so)) {
        if (!cJSON_IsObject(so)) return fail(err, 400, "stream_options", "stream_options must be an object");
        if (get_bool(so, "include_usage", &r->include_usage, err)) return -1;
    }
    lp = cJSON_GetObjectItemCaseSensitive(o, "logprobs");
    if (kind == SRV_CHAT) {
        if (get_bool(o, "logprobs", &r->logprobs, err) ||
            get_int(o, "top_logprobs", 0, SRV_MAX_TOP_LOGPROBS, &top, err))
            return -1;
        if (top > 0 && !r->logprobs) return fail(err, 400, "top_logprobs", "top_logprobs needs logprobs: true");
    } else if (lp && !cJSON_IsNull(lp)) {   /* completions: logprobs is the number of alternatives */
        if (cJSON_IsBool(lp)) { r->logprobs = cJSON_IsTrue(lp); }
        else if (get_int(o, "logprobs", 0, 5, &top, err)) return -1;
        else r->logprobs = 1;
    }
    r->top_logprobs = (int)top;
    return 0;
}

int srv_parse_request(const char *body, size_t len, int kind, const srv_limits *lim, srv_request *r, srv_error *err)
{
    cJSON *o;
    const char *at = NULL;
    int rc;
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->cache_prompt = 1;
    r->sampling = swa_sampler_config_default();
    /* with its own end pointer: cJSON_GetErrorPtr is one global for every thread */
    if (!(o = cJSON_ParseWithLengthOpts(body, len, &at, 0))) {
        size_t off = at && at >= body && at <= body + len ? (size_t)(at - body) : len;
        return fail(err, 400, "", "the body is not valid JSON (at byte %zu of %zu; nesting deeper than %d is refused)",
                    off, len, CJSON_NESTING_LIMIT);
    }
    rc = parse_object(o, kind, lim, r, err);
    cJSON_Delete(o);
    if (rc) srv_request_free(r);
    return rc;
}

void srv_request_free(srv_request *r)
{
    int i;
    free(r->prompt);
    for (i = 0; i < r->n_stop; i++) free(r->stop[i]);
    memset(r, 0, sizeof *r);
}
