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
    err->type = status == 400 || status == 413 ? "invalid_request_error" : status == 501 ? "not_supported_error" : "server_error";
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

void *srv_grow(void *p, size_t *cap, size_t need, size_t size)
{
    void *q;
    if (need <= *cap) return p;
    if (need > SIZE_MAX / 2 / size) return NULL;
    q = realloc(p, 2 * need * size);
    if (q) *cap = 2 * need;
    return q;
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

/* ---- which fields act ---- */

/* Each field a request may hold, per kind, and what it does here (docs/server.md has this table):
   ACT it acts; META it changes nothing of the output (metadata, or a setting inert while another
   is off); NEUTRAL accepted only at the value that leaves sampling as it is (llama-server's and
   ollama's other samplers), else 400; LATER a feature still to come (OpenAI's legacy
   functions), 400 until then; NO not supported, 400. Any other field is a 400 too, as OpenAI answers
   "Unrecognized request argument". */
enum { ACT, META, NEUTRAL, LATER, NO };
enum { K_CHAT = 1, K_COMPL = 2, K_NATIVE = 4, K_OCHAT = 8, K_OGEN = 16, K_OPT = 32, K_INFILL = 64 };
#define K_OAI (K_CHAT | K_COMPL)
#define K_LLAMA (K_CHAT | K_COMPL | K_NATIVE | K_INFILL)   /* llama-server takes its extensions everywhere */
#define K_OLL (K_OCHAT | K_OGEN)
#define K_SAMPLE (K_LLAMA | K_OPT)

typedef struct field_rule {
    const char *name;
    int kinds, what;
    double neutral;
} field_rule;

static const field_rule rules[] = {
    {"model", K_LLAMA | K_OLL, META, 0}, {"messages", K_CHAT | K_OCHAT, ACT, 0},
    {"prompt", K_COMPL | K_NATIVE | K_OGEN | K_INFILL, ACT, 0}, {"suffix", K_COMPL | K_OGEN, ACT, 0},
    {"input_prefix", K_INFILL, ACT, 0}, {"input_suffix", K_INFILL, ACT, 0}, {"input_extra", K_INFILL, ACT, 0},
    {"echo", K_COMPL, ACT, 0}, {"best_of", K_COMPL, ACT, 0},
    {"max_tokens", K_OAI, ACT, 0}, {"max_completion_tokens", K_CHAT, ACT, 0}, {"n_predict", K_LLAMA, ACT, 0},
    {"n", K_OAI, ACT, 0}, {"stream", K_LLAMA | K_OLL, ACT, 0}, {"stream_options", K_OAI, ACT, 0},
    {"temperature", K_SAMPLE, ACT, 0}, {"top_p", K_SAMPLE, ACT, 0}, {"top_k", K_SAMPLE, ACT, 0},
    {"min_p", K_SAMPLE, ACT, 0}, {"seed", K_SAMPLE, ACT, 0}, {"stop", K_SAMPLE, ACT, 0},
    {"repeat_penalty", K_SAMPLE, ACT, 0}, {"repeat_last_n", K_SAMPLE, ACT, 0},
    {"presence_penalty", K_SAMPLE, ACT, 0}, {"frequency_penalty", K_SAMPLE, ACT, 0},
    {"logit_bias", K_LLAMA, ACT, 0}, {"logprobs", K_OAI, ACT, 0}, {"top_logprobs", K_CHAT, ACT, 0},
    {"ignore_eos", K_LLAMA, ACT, 0}, {"cache_prompt", K_LLAMA, ACT, 0},
    {"speculative.n_max", K_LLAMA, ACT, 0}, {"speculative.n_min", K_LLAMA, ACT, 0},
    {"speculative.p_min", K_LLAMA, ACT, 0}, {"id_slot", K_LLAMA, ACT, 0},
    {"system", K_OGEN, ACT, 0}, {"raw", K_OGEN, ACT, 0}, {"options", K_OLL, ACT, 0},
    {"num_predict", K_OPT, ACT, 0}, {"num_ctx", K_OPT, ACT, 0},
    /* metadata, or runtime settings that change no output */
    {"user", K_OAI, META, 0}, {"store", K_CHAT, META, 0}, {"metadata", K_CHAT, META, 0},
    {"service_tier", K_OAI, META, 0}, {"keep_alive", K_OLL, META, 0},
    {"n_keep", K_LLAMA, META, 0}, {"num_keep", K_OPT, META, 0}, {"num_batch", K_OPT, META, 0},
    {"num_gpu", K_OPT, META, 0}, {"main_gpu", K_OPT, META, 0}, {"num_thread", K_OPT, META, 0},
    {"use_mmap", K_OPT, META, 0}, {"use_mlock", K_OPT, META, 0}, {"numa", K_OPT, META, 0},
    {"low_vram", K_OPT, META, 0}, {"vocab_only", K_OPT, META, 0},
    /* inert while the sampler they tune is off (which NEUTRAL below makes sure of) */
    {"mirostat_tau", K_SAMPLE, META, 0}, {"mirostat_eta", K_SAMPLE, META, 0}, {"dynatemp_exponent", K_LLAMA, META, 0},
    {"xtc_threshold", K_LLAMA, META, 0}, {"dry_base", K_LLAMA, META, 0}, {"dry_allowed_length", K_LLAMA, META, 0},
    {"dry_penalty_last_n", K_LLAMA, META, 0}, {"dry_sequence_breakers", K_LLAMA, META, 0},
    /* other samplers and outputs: only their "off" */
    {"typical_p", K_SAMPLE, NEUTRAL, 1}, {"tfs_z", K_SAMPLE, NEUTRAL, 1}, {"mirostat", K_SAMPLE, NEUTRAL, 0},
    {"dynatemp_range", K_LLAMA, NEUTRAL, 0}, {"xtc_probability", K_LLAMA, NEUTRAL, 0},
    {"dry_multiplier", K_LLAMA, NEUTRAL, 0}, {"min_keep", K_LLAMA, NEUTRAL, 0}, {"n_probs", K_LLAMA, NEUTRAL, 0},
    {"t_max_predict_ms", K_LLAMA, NEUTRAL, 0}, {"n_indent", K_LLAMA, NEUTRAL, 0},
    {"penalize_nl", K_LLAMA, ACT, 0}, {"penalize_newline", K_OPT, ACT, 0},   /* penalize_newlines */
    {"return_tokens", K_LLAMA, NEUTRAL, 0}, {"post_sampling_probs", K_LLAMA, NEUTRAL, 0},
    {"timings_per_token", K_LLAMA, NEUTRAL, 0},
    /* structured output: a grammar the sampler follows (parse_structured) */
    {"response_format", K_LLAMA, ACT, 0}, {"grammar", K_LLAMA, ACT, 0}, {"json_schema", K_LLAMA, ACT, 0},
    {"format", K_OLL, ACT, 0},
    /* tool calls and reasoning (parse_chat_tools, parse_ollama_tools) */
    {"tools", K_CHAT | K_OCHAT, ACT, 0}, {"tool_choice", K_CHAT, ACT, 0}, {"parallel_tool_calls", K_CHAT, ACT, 0},
    {"think", K_OLL, ACT, 0},   /* /api/generate: only false where the model has no thinking (ollama_prompt) */
    {"reasoning_format", K_CHAT, ACT, 0}, {"reasoning_effort", K_CHAT, ACT, 0}, {"chat_template_kwargs", K_CHAT, ACT, 0},
    /* features other parts of swa-server will bring: refused until they do */
    {"functions", K_CHAT, LATER, 0}, {"function_call", K_CHAT, LATER, 0},
    /* not supported */
    {"modalities", K_CHAT, NO, 0}, {"audio", K_CHAT, NO, 0}, {"prediction", K_CHAT, NO, 0},
    {"web_search_options", K_CHAT, NO, 0}, {"samplers", K_LLAMA, NO, 0},
    {"lora", K_LLAMA, NO, 0}, {"image_data", K_LLAMA, NO, 0}, {"response_fields", K_LLAMA, NO, 0},
    {"images", K_OLL, NO, 0}, {"template", K_OGEN, NO, 0}, {"context", K_OGEN, NO, 0}};

/* One place for the fields whose features are still to come. */
static int refuse_later(const char *name, srv_error *err)
{
    return fail(err, 400, name, "%s is not supported by this server yet", name);
}

static int is_empty(const cJSON *f)
{
    return cJSON_IsNull(f) || (cJSON_IsArray(f) && !f->child) || (cJSON_IsString(f) && !f->valuestring[0]);
}

/* Every member of o against the table for kinds k. */
static int check_fields(const cJSON *o, int k, srv_error *err)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, o) {
        size_t i;
        const field_rule *r = NULL;
        for (i = 0; i < sizeof rules / sizeof rules[0]; i++)
            if ((rules[i].kinds & k) && !strcmp(rules[i].name, f->string)) { r = &rules[i]; break; }
        if (!r) return fail(err, 400, f->string, "unknown field \"%.60s\"", f->string);
        if (is_empty(f)) continue;   /* null, [] or "": how clients (ollama's) write a field they leave out */
        if (r->what == LATER) return refuse_later(r->name, err);
        if (r->what == NO) return fail(err, 400, r->name, "%s is not supported by this server", r->name);
        if (r->what == NEUTRAL && !cJSON_IsNull(f) &&
            !(cJSON_IsNumber(f) && f->valuedouble == r->neutral) && !(cJSON_IsBool(f) && cJSON_IsTrue(f) == (r->neutral != 0)))
            return fail(err, 400, r->name, "%s is supported only at %g (off)", r->name, r->neutral);
    }
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

/* logit_bias: OpenAI's {"id": bias}, or llama-server's [[id, bias], ["text", bias]] (each token of
   the text's), a bias of false banning the token; biases in [-100, 100]. */
static int add_bias(srv_request *r, const srv_limits *lim, const cJSON *key, const cJSON *val, srv_error *err)
{
    double b, id = -1;
    int32_t *ids = NULL, one;
    size_t n = 1, i;
    char *end = NULL;
    if (cJSON_IsFalse(val)) b = -100;
    else if (cJSON_IsNumber(val) && val->valuedouble >= -100 && val->valuedouble <= 100) b = val->valuedouble;
    else return fail(err, 400, "logit_bias", "logit_bias: a bias must be a number from -100 to 100 (or false)");
    if (!key) {   /* the object form: the member's name is the id */
        id = strtod(val->string, &end);
        if (*end || end == val->string) id = -1;
    } else if (cJSON_IsNumber(key)) {
        id = key->valuedouble;
    } else {      /* the list form's text: each of its tokens */
        if (srv_tokenize(lim->vocab, key->valuestring, strlen(key->valuestring), 0, &ids, &n))
            return fail(err, 500, "logit_bias", "logit_bias: the text could not be tokenized");
    }
    if (!ids) {
        if (id != floor(id) || id < 0 || id >= swa_vocab_size(lim->vocab))
            return fail(err, 400, "logit_bias", "logit_bias: \"%.40s\" is not a token id (0 to %d)",
                        key ? "" : val->string, swa_vocab_size(lim->vocab) - 1);
        one = (int32_t)id;
        ids = &one;
    }
    for (i = 0; i < n && r->n_bias < SRV_MAX_BIAS; i++) {
        r->bias_id[r->n_bias] = ids[i];
        r->bias[r->n_bias++] = (float)b;
    }
    if (ids != &one) free(ids);
    if (i < n) return fail(err, 400, "logit_bias", "logit_bias biases more than %d tokens", SRV_MAX_BIAS);
    return 0;
}

static int parse_bias(const cJSON *o, const srv_limits *lim, srv_request *r, srv_error *err)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "logit_bias"), *e;
    if (!f || cJSON_IsNull(f)) return 0;
    if (!cJSON_IsObject(f) && !cJSON_IsArray(f))
        return fail(err, 400, "logit_bias", "logit_bias must be an object of token ids to biases, or a list of [id, bias]");
    r->bias_id = (int32_t *)malloc(SRV_MAX_BIAS * sizeof *r->bias_id);
    r->bias = (float *)malloc(SRV_MAX_BIAS * sizeof *r->bias);
    if (!r->bias_id || !r->bias) return fail(err, 500, "logit_bias", "out of memory");
    cJSON_ArrayForEach(e, f) {
        if (cJSON_IsObject(f)) {
            if (add_bias(r, lim, NULL, e, err)) return -1;
        } else if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 ||
                   (!cJSON_IsNumber(e->child) && !cJSON_IsString(e->child))) {
            return fail(err, 400, "logit_bias", "logit_bias: each entry of the list must be [token id or text, bias]");
        } else if (add_bias(r, lim, e->child, e->child->next, err)) {
            return -1;
        }
    }
    return 0;
}

/* The sampling fields, llama-server's defaults where OpenAI gives none (the library's: temperature
   0.8, top_k 40, top_p 0.95, min_p 0.05; no repetition penalty). */
static int parse_sampling(const cJSON *o, srv_request *r, srv_error *err)
{
    swa_sampler_config *s = &r->sampling;
    double t = s->temperature, p = s->top_p, mp = s->min_p, rp = 1, pp = 0, fp = 0;
    int64_t k = s->top_k, seed = -1, rl = 64;
    if (get_number(o, "temperature", 0, 100, &t, err) || get_number(o, "top_p", 0, 1, &p, err) ||
        get_number(o, "min_p", 0, 1, &mp, err) || get_int(o, "top_k", 0, 1e9, &k, err) ||
        get_int(o, "seed", -9.2e18, 9.2e18, &seed, err) || get_number(o, "repeat_penalty", 0, 100, &rp, err) ||
        get_int(o, "repeat_last_n", 0, 1e6, &rl, err) || get_number(o, "presence_penalty", -2, 2, &pp, err) ||
        get_number(o, "frequency_penalty", -2, 2, &fp, err) || parse_stop(o, r, err))
        return -1;
    s->temperature = (float)t;
    s->top_p = (float)p;
    s->min_p = (float)mp;
    s->top_k = (int32_t)k;
    s->repeat_penalty = (float)rp;
    s->repeat_last_n = (int32_t)rl;
    s->presence_penalty = (float)pp;
    s->frequency_penalty = (float)fp;
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

/* The prompt tokens of r (its text `text`) that hold msgs[0..n-1), formatted without the
   assistant's prefix after them: where a conversation's past ends, for the snapshot cache. 0 when
   they do not format as a prefix of text; else the tokens both tokenizations share. */
static size_t chat_head(const srv_limits *lim, const swa_chat_message *msgs, size_t n, const char *text, size_t len,
                        int flags, const srv_request *r)
{
    size_t head = 0, nt = 0, i = 0;
    char *buf;
    int32_t *t;
    if (n < 2 || swa_chat_format(lim->tmpl, msgs, n - 1, 0, NULL, 0, &head, NULL) != SWA_ERR_BUFFER_TOO_SMALL ||
        head > len || !(buf = (char *)malloc(head + 1)))
        return 0;
    if (swa_chat_format(lim->tmpl, msgs, n - 1, 0, buf, head + 1, &head, NULL) != SWA_OK || memcmp(buf, text, head) ||
        srv_tokenize(lim->vocab, text, head, flags, &t, &nt))
        nt = 0, t = NULL;
    free(buf);
    while (i < nt && i < r->n_prompt[0] && t[i] == r->prompt[0][i]) i++;
    free(t);
    return i;
}

/* Messages formatted with the chat template, with the assistant's prefix at the end, tokenized
   (special tokens as such) into prompt slot 0. */
static int format_chat(const srv_limits *lim, const swa_chat_message *cm, size_t n, srv_request *r, const char *field,
                       srv_error *err)
{
    char *text;
    size_t len;
    swa_error e;
    if (swa_chat_format(lim->tmpl, cm, n, 1, NULL, 0, &len, &e) != SWA_ERR_BUFFER_TOO_SMALL)
        return fail(err, 400, field, "%s: %s", field, e.msg);
    if (!(text = (char *)malloc(len + 1))) return fail(err, 500, field, "out of memory");
    if (swa_chat_format(lim->tmpl, cm, n, 1, text, len + 1, &len, &e) != SWA_OK) {
        free(text);
        return fail(err, 400, field, "%s: %s", field, e.msg);
    }
    if (srv_tokenize(lim->vocab, text, len, SWA_TOKENIZE_SPECIAL | (swa_vocab_add_bos(lim->vocab) ? SWA_TOKENIZE_ADD_BOS : 0),
                     &r->prompt[0], &r->n_prompt[0])) {
        free(text);
        return fail(err, 500, field, "the prompt could not be tokenized");
    }
    r->n_head = chat_head(lim, cm, n, text, len,
                          SWA_TOKENIZE_SPECIAL | (swa_vocab_add_bos(lim->vocab) ? SWA_TOKENIZE_ADD_BOS : 0), r);
    if (!r->prompt_text) r->prompt_text = text;
    else free(text);
    r->n_prompts = 1;
    return 0;
}

/* ---- chat: tools, reasoning and the model's Jinja template ---- */

enum { TC_NONE, TC_AUTO, TC_REQUIRED, TC_NAMED };

typedef struct chat_tools {
    const cJSON *tools;                /* the request's non-empty list, or NULL */
    int choice;                        /* TC_* */
    const char *name;                  /* TC_NAMED: the function */
    int parallel;
    cJSON *kwargs;                     /* the template's extra variables, or NULL (owned) */
} chat_tools;

static int parse_tool_choice(const cJSON *o, chat_tools *t, srv_error *err)
{
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(o, "tool_choice");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tc, "function"), "name");
    t->choice = TC_AUTO;
    if (!tc || cJSON_IsNull(tc)) return 0;
    if (cJSON_IsString(tc) && !strcmp(tc->valuestring, "none")) t->choice = TC_NONE;
    else if (cJSON_IsString(tc) && !strcmp(tc->valuestring, "auto")) t->choice = TC_AUTO;
    else if (cJSON_IsString(tc) && !strcmp(tc->valuestring, "required")) t->choice = TC_REQUIRED;
    else if (cJSON_IsObject(tc) && cJSON_IsString(name)) t->choice = TC_NAMED, t->name = name->valuestring;
    else return fail(err, 400, "tool_choice", "tool_choice must be none, auto, required or {\"type\": \"function\", "
                      "\"function\": {\"name\": ...}}");
    return 0;
}

/* chat_template_kwargs, with reasoning_effort among them */
static int parse_kwargs(const cJSON *o, chat_tools *t, srv_error *err)
{
    const cJSON *kw = cJSON_GetObjectItemCaseSensitive(o, "chat_template_kwargs");
    const cJSON *eff = cJSON_GetObjectItemCaseSensitive(o, "reasoning_effort");
    if (kw && !cJSON_IsNull(kw) && !cJSON_IsObject(kw))
        return fail(err, 400, "chat_template_kwargs", "chat_template_kwargs must be an object");
    if (eff && !cJSON_IsNull(eff) && !cJSON_IsString(eff))
        return fail(err, 400, "reasoning_effort", "reasoning_effort must be a string (low, medium, high)");
    if (!cJSON_IsObject(kw) && !cJSON_IsString(eff)) return 0;
    if (!(t->kwargs = cJSON_IsObject(kw) ? cJSON_Duplicate(kw, 1) : cJSON_CreateObject()))
        return fail(err, 500, "chat_template_kwargs", "out of memory");
    if (cJSON_IsString(eff)) {
        cJSON_DeleteItemFromObjectCaseSensitive(t->kwargs, "reasoning_effort");
        cJSON_AddStringToObject(t->kwargs, "reasoning_effort", eff->valuestring);
    }
    return 0;
}

/* The request's tools (OpenAI's and ollama's: a list of {"type": "function", "function": ...}),
   the calls read in the template's syntax (the generic one without a Jinja template). */
static int take_tools(const cJSON *o, const srv_limits *lim, chat_tools *t, srv_request *r, srv_error *err)
{
    const cJSON *tools = cJSON_GetObjectItemCaseSensitive(o, "tools");
    memset(t, 0, sizeof *t);
    t->parallel = 1;
    t->choice = TC_AUTO;
    if (tools && !cJSON_IsNull(tools) && !cJSON_IsArray(tools)) return fail(err, 400, "tools", "tools must be a list of functions");
    if (cJSON_GetArraySize(tools) > 0) t->tools = tools;
    r->tool_format = lim->jinja ? lim->tool_format : SWA_TOOL_FORMAT_GENERIC;
    return 0;
}

static int parse_chat_tools(const cJSON *o, const srv_limits *lim, chat_tools *t, srv_request *r, srv_error *err)
{
    const cJSON *rf = cJSON_GetObjectItemCaseSensitive(o, "reasoning_format");
    swa_reasoning_format reasoning = (swa_reasoning_format)lim->reasoning;
    if (take_tools(o, lim, t, r, err)) return -1;
    if (parse_tool_choice(o, t, err) || get_bool(o, "parallel_tool_calls", &t->parallel, err)) return -1;
    if ((t->choice == TC_REQUIRED || t->choice == TC_NAMED) && !t->tools)
        return fail(err, 400, "tool_choice", "tool_choice %s needs tools", t->choice == TC_REQUIRED ? "required" : "naming a function");
    if (rf && !cJSON_IsNull(rf) && (!cJSON_IsString(rf) || swa_reasoning_format_by_name(rf->valuestring, &reasoning, NULL)))
        return fail(err, 400, "reasoning_format", "reasoning_format must be none, deepseek or auto");
    r->reasoning = (int)reasoning;
    return parse_kwargs(o, t, err);
}

/* ollama's /api/chat: tools as OpenAI's, the model free to call them or not (ollama has no
   tool_choice); think true, or a level as gpt-oss takes it ("low", "medium", "high"), turns the
   template's thinking on (enable_thinking, and reasoning_effort for a level) and reads the
   reasoning out of the answer into message.thinking; false turns it off (enable_thinking false)
   and leaves the answer as written, as does no think at all. */
static int parse_ollama_tools(const cJSON *o, const srv_limits *lim, chat_tools *t, srv_request *r, srv_error *err)
{
    const cJSON *think = cJSON_GetObjectItemCaseSensitive(o, "think");
    int level = cJSON_IsString(think) && (!strcmp(think->valuestring, "low") || !strcmp(think->valuestring, "medium") ||
                                          !strcmp(think->valuestring, "high"));
    if (take_tools(o, lim, t, r, err)) return -1;
    r->reasoning = SWA_REASONING_NONE;
    if (!think || cJSON_IsNull(think)) return 0;
    if (!cJSON_IsBool(think) && !level) return fail(err, 400, "think", "think must be true, false, \"low\", \"medium\" or \"high\"");
    if (!lim->thinking) {   /* nothing to turn off; nothing to turn on, as ollama answers */
        if (cJSON_IsFalse(think)) return 0;
        return fail(err, 400, "think", "the model does not support thinking (its chat template has none)");
    }
    if (!(t->kwargs = cJSON_CreateObject()) || !cJSON_AddBoolToObject(t->kwargs, "enable_thinking", !cJSON_IsFalse(think)) ||
        (level && !cJSON_AddStringToObject(t->kwargs, "reasoning_effort", think->valuestring)))
        return fail(err, 500, "think", "out of memory");
    if (!cJSON_IsFalse(think)) r->reasoning = SWA_REASONING_DEEPSEEK;
    return 0;
}

/* Whether a tool says "strict": true: its call's arguments must meet its schema, whatever tool_choice. */
static int strict_tools(const cJSON *tools)
{
    const cJSON *tl;
    cJSON_ArrayForEach(tl, tools)
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tl, "function"), "strict")))
            return 1;
    return 0;
}

/* tool_choice auto with strict tools, in a format whose calls open with a marker: a lazy grammar,
   free text until the marker, then a call whose arguments meet its function's schema if it is
   strict (any object if not). The text is parsed as the sampler's grammar with its trigger. */
static int strict_grammar(const chat_tools *t, const swa_chat_parse_config *cfg, srv_request *r, srv_error *err)
{
    swa_chat_parse_config lazy = *cfg;
    cJSON *tools = cJSON_Duplicate(t->tools, 1), *tl;
    char *text, *gbnf = NULL;
    swa_error e;
    swa_status rc;
    if (!tools) return fail(err, 500, "tools", "out of memory");
    cJSON_ArrayForEach(tl, tools) {
        cJSON *fn = cJSON_GetObjectItemCaseSensitive(tl, "function"), *any = cJSON_Parse("{\"type\": \"object\"}");
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(fn, "strict"))) { cJSON_Delete(any); continue; }
        if (!any || (cJSON_GetObjectItemCaseSensitive(fn, "parameters") ? !cJSON_ReplaceItemInObjectCaseSensitive(fn, "parameters", any)
                                                                         : !cJSON_AddItemToObject(fn, "parameters", any))) {
            cJSON_Delete(any);
            cJSON_Delete(tools);
            return fail(err, 500, "tools", "out of memory");
        }
    }
    text = cJSON_PrintUnformatted(tools);
    cJSON_Delete(tools);
    if (!text) return fail(err, 500, "tools", "out of memory");
    lazy.tools = text;
    lazy.tools_len = strlen(text);
    rc = swa_tool_call_grammar(&lazy, NULL, t->parallel, &gbnf, &e);
    free(text);
    if (rc != SWA_OK) return fail(err, 400, "tools", "a strict function: %s", e.msg);
    rc = swa_grammar_parse(gbnf, strlen(gbnf), NULL, &r->grammar, &e);
    free(gbnf);   /* SWA_FREE is free here */
    if (rc != SWA_OK) return fail(err, 400, "tools", "the grammar of a strict tool call: %s", e.msg);
    r->grammar_trigger = swa_tool_call_trigger(cfg->format);
    return 0;
}

/* The tools the answer's calls are read against, checked as the parser takes them; with
   tool_choice required or named, the grammar that forces a call; with auto and strict tools, the
   lazy grammar that holds a call to its schema once it begins. */
static int tools_for_answer(const chat_tools *t, srv_request *r, srv_error *err)
{
    swa_chat_parse_config cfg = swa_chat_parse_config_default();
    swa_chat_parser *p;
    swa_error e;
    char *gbnf = NULL;
    swa_status rc;
    if (!t->tools || t->choice == TC_NONE) return 0;
    if (!(r->tools = cJSON_PrintUnformatted(t->tools))) return fail(err, 500, "tools", "out of memory");
    cfg.format = (swa_tool_format)r->tool_format;
    cfg.tools = r->tools;
    cfg.tools_len = strlen(r->tools);
    if (swa_chat_parser_create(&cfg, &p, &e) != SWA_OK) return fail(err, 400, "tools", "%s", e.msg);
    swa_chat_parser_free(p);
    if (t->choice == TC_AUTO && strict_tools(t->tools) && swa_tool_call_trigger(cfg.format))
        return strict_grammar(t, &cfg, r, err);
    if (t->choice != TC_REQUIRED && t->choice != TC_NAMED) return 0;
    if (swa_tool_call_grammar(&cfg, t->name, t->parallel, &gbnf, &e) != SWA_OK)
        return fail(err, 400, t->choice == TC_NAMED ? "tool_choice" : "tools", "%s", e.msg);
    rc = swa_grammar_parse(gbnf, strlen(gbnf), NULL, &r->grammar, &e);
    free(gbnf);   /* SWA_FREE is free here */
    return rc == SWA_OK ? 0 : fail(err, 400, "tools", "the grammar of the tool call: %s", e.msg);
}

/* Text in the family's format, tokenized into prompt slot 0 (a leading BOS text dropped: the
   tokenizer adds BOS where the vocabulary wants it). */
static int tokenize_chat(const srv_limits *lim, const char *text, size_t len, srv_request *r, srv_error *err)
{
    size_t nb = lim->bos_text ? strlen(lim->bos_text) : 0;
    if (nb && len >= nb && !memcmp(text, lim->bos_text, nb)) text += nb, len -= nb;
    if (srv_tokenize(lim->vocab, text, len, SWA_TOKENIZE_SPECIAL | (swa_vocab_add_bos(lim->vocab) ? SWA_TOKENIZE_ADD_BOS : 0),
                     &r->prompt[0], &r->n_prompt[0]))
        return fail(err, 500, "messages", "the prompt could not be tokenized");
    r->n_prompts = 1;
    return 0;
}

/* Member `from` of m copied as `to` where m has no `to` (ollama's names for what templates read
   under OpenAI's). */
static void alias(cJSON *m, const char *from, const char *to)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(m, from);
    if (f && !cJSON_GetObjectItemCaseSensitive(m, to)) cJSON_AddItemToObject(m, to, cJSON_Duplicate(f, 1));
}

/* A message as the Jinja template gets it: developer as system, a call's arguments as the object
   its JSON text holds (templates write them with tojson, as transformers passes them); ollama's
   tool_name as name, its thinking as reasoning_content and its calls typed "function", as
   OpenAI's are. */
static void message_for_template(cJSON *m)
{
    cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role"), *calls = cJSON_GetObjectItemCaseSensitive(m, "tool_calls"), *c;
    if (cJSON_IsString(role) && !strcmp(role->valuestring, "developer")) cJSON_SetValuestring(role, "system");
    alias(m, "tool_name", "name");
    alias(m, "thinking", "reasoning_content");
    cJSON_ArrayForEach(c, calls) {
        cJSON *fn = cJSON_GetObjectItemCaseSensitive(c, "function");
        cJSON *args = cJSON_GetObjectItemCaseSensitive(fn, "arguments"), *parsed;
        if (cJSON_IsObject(c) && !cJSON_GetObjectItemCaseSensitive(c, "type")) cJSON_AddStringToObject(c, "type", "function");
        if (cJSON_IsString(args) && (parsed = cJSON_Parse(args->valuestring)) != NULL) {
            if (cJSON_IsObject(parsed)) cJSON_ReplaceItemInObjectCaseSensitive(fn, "arguments", parsed);
            else cJSON_Delete(parsed);
        }
    }
}

/* The conversation through the model's Jinja template, with the tools and extra variables. */
static int render_jinja(const cJSON *msgs, const chat_tools *t, const srv_limits *lim, srv_request *r, srv_error *err)
{
    cJSON *copy = cJSON_Duplicate(msgs, 1), *m;
    char *mj = NULL, *tj = NULL, *kj = NULL, *text = NULL;
    size_t len = 0;
    swa_jinja_chat chat;
    swa_error e;
    int rc = -1;
    cJSON_ArrayForEach(m, copy) message_for_template(m);
    mj = copy ? cJSON_PrintUnformatted(copy) : NULL;
    tj = t->tools ? cJSON_PrintUnformatted(t->tools) : NULL;
    kj = t->kwargs ? cJSON_PrintUnformatted(t->kwargs) : NULL;
    if (!mj || (t->tools && !tj) || (t->kwargs && !kj)) { fail(err, 500, "messages", "out of memory"); goto out; }
    memset(&chat, 0, sizeof chat);
    chat.messages = mj;
    chat.tools = tj;
    chat.add_generation_prompt = 1;
    chat.bos_token = lim->bos_text;
    chat.eos_token = lim->eos_text;
    chat.kwargs = kj;
    if (swa_jinja_apply(lim->jinja, &chat, &text, &len, &e) != SWA_OK) {
        fail(err, 400, "messages", "the model's chat template: %s", e.msg);
        goto out;
    }
    r->reasoning_open = swa_chat_prompt_opens_reasoning((swa_tool_format)r->tool_format, text, len);
    rc = tokenize_chat(lim, text, len, r, err);
    if (rc == 0 && !r->prompt_text && (r->prompt_text = (char *)malloc(len + 1)) != NULL) memcpy(r->prompt_text, text, len + 1);
out:
    swa_jinja_text_free(text);
    cJSON_free(mj), cJSON_free(tj), cJSON_free(kj);
    cJSON_Delete(copy);
    return rc;
}

/* Without a Jinja template, the family's format carries the tools as llama.cpp's generic format
   does: a system message lists them and asks for JSON, an assistant's calls are written as the
   JSON it would answer, and a tool's result as a user turn holding {"tool_response": ...}. */
static char *generic_text(const cJSON *m, const char *role, const char *content, const cJSON *tools)
{
    cJSON *o = cJSON_CreateObject(), *c;
    char *s, *out = NULL;
    if (!strcmp(role, "system") || (!role[0] && tools)) {
        char *tj = cJSON_PrintUnformatted(tools);
        size_t n = strlen(content) + (tj ? strlen(tj) : 0) + 256;
        if (tj && (out = (char *)malloc(n)) != NULL)
            snprintf(out, n, "%s%sYou can call these tools: %s\nRespond in JSON format, either with `tool_call` (a request "
                     "to call tools) or with `response` reply to the user's request", content, *content ? "\n\n" : "", tj);
        cJSON_free(tj);
        cJSON_Delete(o);
        return out;
    }
    if (!strcmp(role, "tool")) {
        cJSON *r = cJSON_AddObjectToObject(o, "tool_response");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "tool_call_id");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "tool_name");   /* ollama's; OpenAI's name */
        if (!cJSON_IsString(name)) name = cJSON_GetObjectItemCaseSensitive(m, "name");
        if (cJSON_IsString(id)) cJSON_AddStringToObject(r, "tool_call_id", id->valuestring);
        if (cJSON_IsString(name)) cJSON_AddStringToObject(r, "name", name->valuestring);
        cJSON_AddStringToObject(r, "content", content);
    } else {
        cJSON *arr = cJSON_AddArrayToObject(o, "tool_calls");
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(m, "tool_calls")) {
            cJSON *fn = cJSON_GetObjectItemCaseSensitive(c, "function"), *call = cJSON_CreateObject(), *args;
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(fn, "name"), *id = cJSON_GetObjectItemCaseSensitive(c, "id");
            cJSON_AddItemToArray(arr, call);
            if (cJSON_IsString(name)) cJSON_AddStringToObject(call, "name", name->valuestring);
            args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
            args = cJSON_IsString(args) ? cJSON_Parse(args->valuestring) : cJSON_Duplicate(args, 1);
            cJSON_AddItemToObject(call, "arguments", args ? args : cJSON_CreateObject());
            if (cJSON_IsString(id)) cJSON_AddStringToObject(call, "id", id->valuestring);
        }
    }
    if ((s = cJSON_PrintUnformatted(o)) != NULL && (out = (char *)malloc(strlen(s) + 1)) != NULL) strcpy(out, s);
    cJSON_free(s);
    cJSON_Delete(o);
    return out;
}

/* The conversation in the family's format, tools carried as generic_text says. */
static int render_generic(const cJSON *msgs, const swa_chat_message *cm, size_t n, const chat_tools *t,
                          const srv_limits *lim, srv_request *r, srv_error *err)
{
    swa_chat_message *pm = (swa_chat_message *)calloc(n + 1, sizeof *pm);
    char **texts = (char **)calloc(n + 1, sizeof *texts);
    const cJSON *tools = t->choice != TC_NONE ? t->tools : NULL;
    size_t i, k = 0;
    int rc = -1;
    if (!pm || !texts) { fail(err, 500, "messages", "out of memory"); goto out; }
    if (tools && strcmp(cm[0].role, "system")) {
        pm[k].role = "system";
        if (!(pm[k].content = texts[k] = generic_text(NULL, "", "", tools))) { fail(err, 500, "messages", "out of memory"); goto out; }
        k++;
    }
    for (i = 0; i < n; i++, k++) {
        const cJSON *m = cJSON_GetArrayItem(msgs, (int)i);
        int sys = i == 0 && tools && !strcmp(cm[i].role, "system");
        int call = cJSON_GetObjectItemCaseSensitive(m, "tool_calls") != NULL, tool = !strcmp(cm[i].role, "tool");
        pm[k] = cm[i];
        if (tool) pm[k].role = "user";
        if ((sys || call || tool) &&
            !(pm[k].content = texts[k] = generic_text(m, sys ? "system" : cm[i].role, cm[i].content, tools))) {
            fail(err, 500, "messages", "out of memory");
            goto out;
        }
    }
    rc = format_chat(lim, pm, k, r, "messages", err);
out:
    for (i = 0; texts && i <= n; i++) free(texts[i]);
    free(texts);
    free(pm);
    return rc;
}

/* A message's role and tool calls, checked; *tooled set when it carries calls or is a tool's result. */
static int check_message(const cJSON *m, size_t i, const char **role_out, int *tooled, srv_error *err)
{
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role"), *calls = cJSON_GetObjectItemCaseSensitive(m, "tool_calls");
    const char *rl;
    char field[48];
    snprintf(field, sizeof field, "messages[%zu].role", i);
    if (!cJSON_IsObject(m)) return fail(err, 400, "messages", "messages[%zu] must be an object", i);
    if (!cJSON_IsString(role)) return fail(err, 400, field, "%s must be a string", field);
    rl = strcmp(role->valuestring, "developer") ? role->valuestring : "system";
    if (strcmp(rl, "system") && strcmp(rl, "user") && strcmp(rl, "assistant") && strcmp(rl, "tool"))
        return fail(err, 400, field, "%s must be system, developer, user, assistant or tool, not \"%.40s\"", field,
                    role->valuestring);
    snprintf(field, sizeof field, "messages[%zu]", i);
    if (cJSON_GetObjectItemCaseSensitive(m, "images")) return fail(err, 400, field, "%s: images are not supported by this server", field);
    if (calls && !cJSON_IsNull(calls) && (strcmp(rl, "assistant") || !cJSON_IsArray(calls)))
        return fail(err, 400, field, "%s: tool_calls is a list, on an assistant's message", field);
    *tooled |= (calls && cJSON_IsArray(calls)) || !strcmp(rl, "tool");
    *role_out = rl;
    return 0;
}

static int chat_prompt(const cJSON *o, const srv_limits *lim, srv_request *r, srv_error *err)
{
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(o, "messages"), *m;
    swa_chat_message *cm = NULL;
    char **contents = NULL;
    chat_tools t;
    size_t n, i = 0;
    int rc = -1, tooled = 0;
    memset(&t, 0, sizeof t);
    if (!msgs) return fail(err, 400, "messages", "messages is required");
    if (!cJSON_IsArray(msgs)) return fail(err, 400, "messages", "messages must be a list of messages");
    n = (size_t)cJSON_GetArraySize(msgs);
    if (n == 0) return fail(err, 400, "messages", "messages is empty");
    r->tool_format = lim->tool_format;
    r->reasoning = lim->reasoning;
    if (r->kind == SRV_CHAT ? parse_chat_tools(o, lim, &t, r, err) : parse_ollama_tools(o, lim, &t, r, err)) goto out;
    cm = (swa_chat_message *)calloc(n, sizeof *cm);
    contents = (char **)calloc(n, sizeof *contents);
    if (!cm || !contents) { fail(err, 500, "messages", "out of memory"); goto out; }
    cJSON_ArrayForEach(m, msgs) {
        if (check_message(m, i, &cm[i].role, &tooled, err) ||
            content_text(cJSON_GetObjectItemCaseSensitive(m, "content"), i, &contents[i], err))
            goto out;
        cm[i].content = contents[i];
        i++;
    }
    if (lim->jinja) rc = render_jinja(msgs, &t, lim, r, err);   /* the model's own template, as transformers renders it */
    else if (!(t.tools && t.choice != TC_NONE) && !tooled && !t.kwargs) rc = format_chat(lim, cm, n, r, "messages", err);
    else if (t.kwargs) rc = fail(err, 400, "chat_template_kwargs", "chat_template_kwargs and reasoning_effort reach the "
                                 "model's Jinja template, and this model has none");
    else rc = render_generic(msgs, cm, n, &t, lim, r, err);
    if (rc == 0) rc = tools_for_answer(&t, r, err);
out:
    for (i = 0; contents && i < n; i++) free(contents[i]);
    free(contents);
    free(cm);
    cJSON_Delete(t.kwargs);
    return rc;
}

/* ollama's /api/generate: the prompt (and system) in the chat template, unless raw. */
static int ollama_prompt(const cJSON *o, const srv_limits *lim, srv_request *r, srv_error *err)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "prompt"), *sys = cJSON_GetObjectItemCaseSensitive(o, "system");
    const cJSON *think = cJSON_GetObjectItemCaseSensitive(o, "think");
    swa_chat_message cm[2];
    int raw = 0, n = 0;
    if (!cJSON_IsString(p)) return fail(err, 400, "prompt", "prompt must be a string");
    if (sys && !cJSON_IsNull(sys) && !cJSON_IsString(sys)) return fail(err, 400, "system", "system must be a string");
    if (get_bool(o, "raw", &raw, err)) return -1;
    /* the prompt is written in the family's format, not the Jinja template that thinking lives in */
    if (think && !cJSON_IsNull(think) && (!cJSON_IsFalse(think) || lim->thinking))
        return fail(err, 400, "think", "think reaches the model's template through /api/chat only; /api/generate takes "
                    "false where the model has no thinking");
    if (!srv_utf8_valid(p->valuestring, strlen(p->valuestring))) return fail(err, 400, "prompt", "prompt is not valid UTF-8");
    if (raw) {
        if (cJSON_IsString(sys)) return fail(err, 400, "system", "system has no place in a raw prompt");
        if (srv_tokenize(lim->vocab, p->valuestring, strlen(p->valuestring), swa_vocab_add_bos(lim->vocab) ? SWA_TOKENIZE_ADD_BOS : 0,
                         &r->prompt[0], &r->n_prompt[0]))
            return fail(err, 500, "prompt", "the prompt could not be tokenized");
        r->n_prompts = 1;
        return 0;
    }
    if (cJSON_IsString(sys) && *sys->valuestring) {
        if (!srv_utf8_valid(sys->valuestring, strlen(sys->valuestring))) return fail(err, 400, "system", "system is not valid UTF-8");
        cm[n].role = "system";
        cm[n++].content = sys->valuestring;
    }
    cm[n].role = "user";
    cm[n++].content = p->valuestring;
    return format_chat(lim, cm, (size_t)n, r, "prompt", err);
}

/* The text of tokens (for echo), without the BOS the tokenizer put first. */
static char *detokenize(const swa_vocab *v, const int32_t *tok, size_t n, size_t *len)
{
    size_t cap = 16 * n + 64, used = 0, i;
    char *out = (char *)malloc(cap);
    swa_decoder d;
    if (!out) return NULL;
    swa_decoder_init(&d, v);
    d.at_start = 0;
    for (i = 0; i < n; i++) {
        if (i == 0 && tok[0] == swa_vocab_bos(v)) continue;
        if (cap - used < 600) {
            char *o2 = (char *)realloc(out, cap *= 2);
            if (!o2) { free(out); return NULL; }
            out = o2;
        }
        used += swa_decoder_push(&d, tok[i], out + used, cap - used - 1);
    }
    used += swa_decoder_flush(&d, out + used, cap - used - 1);
    out[used] = '\0';
    *len = used;
    return out;
}

/* One prompt: a string or a list of token ids, into slot i. */
static int one_prompt(const cJSON *p, int i, const srv_limits *lim, srv_request *r, srv_error *err)
{
    const cJSON *t;
    char field[32];
    int32_t n_vocab = swa_vocab_size(lim->vocab);
    snprintf(field, sizeof field, r->n_prompts > 1 ? "prompt[%d]" : "prompt", i);
    if (cJSON_IsString(p)) {
        size_t n = strlen(p->valuestring);
        int flags = swa_vocab_add_bos(lim->vocab) ? SWA_TOKENIZE_ADD_BOS : 0;
        if (!srv_utf8_valid(p->valuestring, n)) return fail(err, 400, field, "%s is not valid UTF-8", field);
        if (srv_tokenize(lim->vocab, p->valuestring, n, flags, &r->prompt[i], &r->n_prompt[i]))
            return fail(err, 500, field, "%s could not be tokenized", field);
        return 0;
    }
    if (!cJSON_IsArray(p))
        return fail(err, 400, field, "%s must be a string or a list of token ids", field);
    r->prompt[i] = (int32_t *)malloc(((size_t)cJSON_GetArraySize(p) + 1) * sizeof(int32_t));
    if (!r->prompt[i]) return fail(err, 500, field, "out of memory");
    cJSON_ArrayForEach(t, p) {
        if (!cJSON_IsNumber(t) || t->valuedouble != floor(t->valuedouble) || t->valuedouble < 0 || t->valuedouble >= n_vocab)
            return fail(err, 400, field, "%s[%zu] is not a token id (an integer from 0 to %d)", field, r->n_prompt[i], n_vocab - 1);
        r->prompt[i][r->n_prompt[i]++] = (int32_t)t->valuedouble;
    }
    return 0;
}

/* A token list grown piece by piece: a fill-in-the-middle prompt. A failed allocation sticks. */
typedef struct toks {
    int32_t *t;
    size_t n, cap;
    int failed;
} toks;

static void toks_add(toks *k, const int32_t *t, size_t n)
{
    int32_t *p;
    if (k->failed || !n) return;
    if (!(p = (int32_t *)srv_grow(k->t, &k->cap, k->n + n, sizeof *p))) { k->failed = 1; return; }
    k->t = p;
    memcpy(k->t + k->n, t, n * sizeof *t);
    k->n += n;
}

static void toks_id(toks *k, int32_t id) { toks_add(k, &id, 1); }

/* Text tokenized without BOS, appended. */
static void toks_text(toks *k, const swa_vocab *v, const char *text)
{
    int32_t *t = NULL;
    size_t n = 0;
    if (srv_tokenize(v, text, strlen(text), 0, &t, &n)) k->failed = 1;
    else toks_add(k, t, n);
    free(t);
}

/* /infill's context before the prefix, as llama-server writes it: with a FIM_REP token the
   repository's name first, each chunk behind FIM_SEP and its file name (else behind a snippet
   line), then, with FIM_SEP, the name of the file being filled. */
static void fim_extra(toks *k, const cJSON *extra, const srv_limits *lim)
{
    const cJSON *e;
    if (lim->fim_rep >= 0) toks_id(k, lim->fim_rep), toks_text(k, lim->vocab, "myproject\n");
    cJSON_ArrayForEach(e, extra) {
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(e, "filename");
        char name[300];
        if (lim->fim_sep >= 0) {
            snprintf(name, sizeof name, "%s\n", cJSON_IsString(fn) ? fn->valuestring : "tmp");
            toks_id(k, lim->fim_sep);
            toks_text(k, lim->vocab, name);
        } else {
            toks_text(k, lim->vocab, "\n\n--- snippet ---\n\n");
        }
        toks_text(k, lim->vocab, cJSON_GetObjectItemCaseSensitive(e, "text")->valuestring);
    }
    if (lim->fim_sep >= 0) toks_id(k, lim->fim_sep), toks_text(k, lim->vocab, "filename\n");
}

/* Fill-in-the-middle, into prompt i: [BOS] extra PRE prefix SUF suffix MID middle. The strings
   are checked (UTF-8) by the caller; extra (a checked /infill input_extra) and middle may be NULL. */
static int fim_tokens(const cJSON *extra, const char *prefix, const char *suffix, const char *middle, int i,
                      const srv_limits *lim, srv_request *r, srv_error *err)
{
    toks k = {NULL, 0, 0, 0};
    if (swa_vocab_add_bos(lim->vocab) && swa_vocab_bos(lim->vocab) >= 0) toks_id(&k, swa_vocab_bos(lim->vocab));
    if (extra) fim_extra(&k, extra, lim);
    toks_id(&k, lim->fim_pre);
    toks_text(&k, lim->vocab, prefix);
    toks_id(&k, lim->fim_suf);
    toks_text(&k, lim->vocab, suffix);
    toks_id(&k, lim->fim_mid);
    if (middle) toks_text(&k, lim->vocab, middle);
    if (k.failed) {
        free(k.t);
        return fail(err, 500, "prompt", "the prompt could not be tokenized");
    }
    r->prompt[i] = k.t;
    r->n_prompt[i] = k.n;
    return 0;
}

static int has_fim(const srv_limits *lim) { return lim->fim_pre >= 0 && lim->fim_suf >= 0 && lim->fim_mid >= 0; }

/* Fill-in-the-middle: prompt i (a string) and the suffix as PRE prefix SUF suffix MID. */
static int fim_prompt(const cJSON *p, const cJSON *suffix, int i, const srv_limits *lim, srv_request *r, srv_error *err)
{
    if (!has_fim(lim)) return fail(err, 400, "suffix", "suffix needs fill-in-the-middle tokens, and this model's vocabulary has none");
    if (!cJSON_IsString(p)) return fail(err, 400, "prompt", "with a suffix, each prompt must be a string");
    if (!srv_utf8_valid(p->valuestring, strlen(p->valuestring)) || !srv_utf8_valid(suffix->valuestring, strlen(suffix->valuestring)))
        return fail(err, 400, "suffix", "prompt or suffix is not valid UTF-8");
    return fim_tokens(NULL, p->valuestring, suffix->valuestring, NULL, i, lim, r, err);
}

/* A string field of /infill: required or not, valid UTF-8. */
static int infill_string(const cJSON *o, const char *name, int required, const char **out, srv_error *err)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, name);
    *out = NULL;
    if (!f || cJSON_IsNull(f)) return required ? fail(err, 400, name, "\"%s\" is required", name) : 0;
    if (!cJSON_IsString(f)) return fail(err, 400, name, "\"%s\" must be a string", name);
    if (!srv_utf8_valid(f->valuestring, strlen(f->valuestring))) return fail(err, 400, name, "%s is not valid UTF-8", name);
    *out = f->valuestring;
    return 0;
}

/* input_extra: a list of {"filename": string (optional), "text": string}. */
static int infill_extra(const cJSON *x, srv_error *err)
{
    const cJSON *e, *f;
    if (!x || cJSON_IsNull(x)) return 0;
    if (!cJSON_IsArray(x))
        return fail(err, 400, "input_extra", "\"input_extra\" must be an array of {\"filename\": string, \"text\": string}");
    cJSON_ArrayForEach(e, x) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "text");
        if (!cJSON_IsObject(e) || !cJSON_IsString(t))
            return fail(err, 400, "input_extra", "each input_extra chunk must hold a \"text\" string");
        cJSON_ArrayForEach(f, e) {
            int is_name = !strcmp(f->string, "filename");
            if (!is_name && strcmp(f->string, "text"))
                return fail(err, 400, "input_extra", "unknown field \"%.60s\" in an input_extra chunk", f->string);
            if (!cJSON_IsString(f) || !srv_utf8_valid(f->valuestring, strlen(f->valuestring)) ||
                (is_name && strlen(f->valuestring) > 255))
                return fail(err, 400, "input_extra", "input_extra's %s must be a string of valid UTF-8%s", f->string,
                            is_name ? ", at most 255 bytes" : "");
        }
    }
    return 0;
}

/* llama-server's /infill: input_extra, input_prefix, input_suffix and prompt (after FIM_MID). A
   vocabulary without the three FIM tokens is 501, as llama-server answers. */
static int infill_prompt(const cJSON *o, const srv_limits *lim, srv_request *r, srv_error *err)
{
    const char *prefix, *suffix, *middle;
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, "input_extra");
    if (!has_fim(lim))
        return fail(err, 501, "", "Infill is not supported by this model: its vocabulary has no fill-in-the-middle tokens "
                    "(tokenizer.ggml.fim_pre_token_id, fim_suf_token_id, fim_mid_token_id)");
    if (infill_string(o, "input_prefix", 1, &prefix, err) || infill_string(o, "input_suffix", 1, &suffix, err) ||
        infill_string(o, "prompt", 0, &middle, err) || infill_extra(x, err))
        return -1;
    r->n_prompts = 1;
    return fim_tokens(cJSON_IsArray(x) ? x : NULL, prefix, suffix, middle, 0, lim, r, err);
}

/* A completion's prompt: a string, a list of token ids, or a list of those (one choice set each). */
static int completion_prompt(const cJSON *o, const srv_limits *lim, srv_request *r, srv_error *err)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "prompt"), *suf = cJSON_GetObjectItemCaseSensitive(o, "suffix"), *e;
    int many, i = 0;
    if (!p) return fail(err, 400, "prompt", "prompt is required");
    if (suf && !cJSON_IsNull(suf) && !cJSON_IsString(suf)) return fail(err, 400, "suffix", "suffix must be a string");
    if (suf && (!cJSON_IsString(suf) || !*suf->valuestring)) suf = NULL;   /* "" adds nothing */
    many = cJSON_IsArray(p) && p->child && !cJSON_IsNumber(p->child);
    if (!many) {
        r->n_prompts = 1;
        return suf ? fim_prompt(p, suf, 0, lim, r, err) : one_prompt(p, 0, lim, r, err);
    }
    if (r->kind == SRV_NATIVE && cJSON_GetArraySize(p) > 1)
        return fail(err, 400, "prompt", "one prompt per /completion request (a string or a list of token ids)");
    r->n_prompts = cJSON_GetArraySize(p);
    if (r->n_prompts > SRV_MAX_PROMPTS || r->n_prompts > lim->n_slots)
        return fail(err, 400, "prompt", "prompt lists %d prompts, and this server takes at most %d in one request",
                    r->n_prompts, lim->n_slots < SRV_MAX_PROMPTS ? lim->n_slots : SRV_MAX_PROMPTS);
    cJSON_ArrayForEach(e, p) {
        if (suf ? fim_prompt(e, suf, i, lim, r, err) : one_prompt(e, i, lim, r, err)) return -1;
        i++;
    }
    return 0;
}

/* Each prompt's echo: its text as given (a string), or its tokens' text. */
static int echo_prompts(const cJSON *o, const srv_limits *lim, srv_request *r, srv_error *err)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "prompt");
    int i;
    if (cJSON_IsArray(p) && p->child && !cJSON_IsNumber(p->child)) p = p->child;
    for (i = 0; i < r->n_prompts; i++, p = p ? p->next : NULL) {
        if (cJSON_IsString(p)) {
            r->echo_len[i] = strlen(p->valuestring);
            r->echo[i] = (char *)malloc(r->echo_len[i] + 1);
            if (r->echo[i]) memcpy(r->echo[i], p->valuestring, r->echo_len[i] + 1);
        } else {
            r->echo[i] = detokenize(lim->vocab, r->prompt[i], r->n_prompt[i], &r->echo_len[i]);
        }
        if (!r->echo[i]) return fail(err, 500, "echo", "out of memory");
    }
    return 0;
}

/* The prompt of any kind. */
static int parse_prompt(const cJSON *o, const srv_limits *lim, srv_request *r, srv_error *err)
{
    int i;
    switch (r->kind) {
    case SRV_CHAT: case SRV_OLLAMA_CHAT: if (chat_prompt(o, lim, r, err)) return -1; break;
    case SRV_INFILL: if (infill_prompt(o, lim, r, err)) return -1; break;
    case SRV_OLLAMA_GENERATE: {
        const cJSON *suf = cJSON_GetObjectItemCaseSensitive(o, "suffix");
        if (cJSON_IsString(suf) && *suf->valuestring) {
            r->n_prompts = 1;
            if (fim_prompt(cJSON_GetObjectItemCaseSensitive(o, "prompt"), suf, 0, lim, r, err)) return -1;
        } else if (ollama_prompt(o, lim, r, err)) {
            return -1;
        }
        break;
    }
    default: if (completion_prompt(o, lim, r, err)) return -1;
    }
    for (i = 0; i < r->n_prompts; i++) {
        const char *field = r->kind == SRV_CHAT || r->kind == SRV_OLLAMA_CHAT ? "messages" : "prompt";
        if (r->n_prompt[i] == 0) return fail(err, 400, field, "the prompt is empty");
        if (r->n_prompt[i] >= (size_t)lim->n_ctx)
            return fail(err, 400, field, "the prompt is %zu tokens, and the context holds %d (prompt and completion): shorten it",
                        r->n_prompt[i], lim->n_ctx);
    }
    return 0;
}

/* ollama's options object, and its num_ctx as a cap on prompt and completion. */
static int ollama_options(const cJSON *o, const srv_limits *lim, srv_request *r, srv_error *err)
{
    const cJSON *opt = cJSON_GetObjectItemCaseSensitive(o, "options");
    int64_t np = -1, nc = 0;
    if (!opt || cJSON_IsNull(opt)) return 0;
    if (!cJSON_IsObject(opt)) return fail(err, 400, "options", "options must be an object");
    if (check_fields(opt, K_OPT, err) || parse_sampling(opt, r, err) || get_int(opt, "num_predict", -2, 1e9, &np, err) ||
        get_int(opt, "num_ctx", 1, 1e9, &nc, err))
        return -1;
    r->max_tokens = np < 0 ? -1 : np;   /* -1 until the end, -2 until the context is full: the same here */
    if (nc > lim->n_ctx)
        return fail(err, 400, "num_ctx", "num_ctx %lld is more than the %d positions a slot of this server holds",
                    (long long)nc, lim->n_ctx);
    if (nc) {
        int64_t room = nc - (int64_t)r->n_prompt[0];
        if (room < 1) return fail(err, 400, "num_ctx", "the prompt is %zu tokens, and num_ctx is %lld", r->n_prompt[0], (long long)nc);
        if (r->max_tokens < 0 || r->max_tokens > room) r->max_tokens = room;
    }
    return 0;
}

static int parse_counts(const cJSON *o, const srv_limits *lim, srv_request *r, srv_error *err)
{
    int64_t max = -1, n = 1, best = 0;
    if (get_int(o, "max_tokens", 0, 1e9, &max, err) || get_int(o, "max_completion_tokens", 0, 1e9, &max, err) ||
        get_int(o, "n_predict", -1, 1e9, &max, err) || get_int(o, "n", 1, lim->n_slots, &n, err) ||
        get_int(o, "best_of", 1, lim->n_slots, &best, err))
        return -1;
    r->max_tokens = max;
    r->n_choices = (int)n;
    r->best_of = best ? (int)best : (int)n;
    if (r->best_of < r->n_choices) return fail(err, 400, "best_of", "best_of (%d) must be at least n (%d)", r->best_of, r->n_choices);
    if (r->best_of > r->n_choices && r->stream) return fail(err, 400, "best_of", "best_of cannot be streamed");
    if ((int64_t)r->n_prompts * r->best_of > lim->n_slots)
        return fail(err, 400, r->best_of > r->n_choices ? "best_of" : "n",
                    "%d prompts x %d choices is more than the %d slots of this server", r->n_prompts, r->best_of, lim->n_slots);
    return 0;
}

static int parse_logprobs(const cJSON *o, srv_request *r, srv_error *err)
{
    const cJSON *lp = cJSON_GetObjectItemCaseSensitive(o, "logprobs");
    int64_t top = 0;
    if (r->kind == SRV_CHAT) {
        if (get_bool(o, "logprobs", &r->logprobs, err) || get_int(o, "top_logprobs", 0, SRV_MAX_TOP_LOGPROBS, &top, err))
            return -1;
        if (top > 0 && !r->logprobs) return fail(err, 400, "top_logprobs", "top_logprobs needs logprobs: true");
    } else if (lp && !cJSON_IsNull(lp)) {   /* completions: logprobs is the number of alternatives */
        if (cJSON_IsBool(lp)) r->logprobs = cJSON_IsTrue(lp);
        else if (get_int(o, "logprobs", 0, 5, &top, err)) return -1;
        else r->logprobs = 1;
    }
    r->top_logprobs = (int)top;
    return 0;
}

static const int kind_fields[] = {K_CHAT, K_COMPL, K_NATIVE, K_OCHAT, K_OGEN, K_INFILL};

/* ---- structured output ---- */

/* The grammar of a JSON Schema, as text or as a cJSON value, or of GBNF text; a refusal names
   the field and repeats the library's message (which gives the line and column, or the keyword). */
static int schema_text_grammar(const char *text, const char *field, srv_request *r, srv_error *err)
{
    swa_error e;
    if (swa_grammar_from_json_schema(text, strlen(text), &r->grammar, &e) != SWA_OK)
        return fail(err, 400, field, "%s: %s", field, e.msg);
    return 0;
}

static int schema_grammar(const cJSON *schema, const char *field, srv_request *r, srv_error *err)
{
    char *text = cJSON_PrintUnformatted(schema);
    int rc;
    if (!text) return fail(err, 500, field, "out of memory");
    rc = schema_text_grammar(text, field, r, err);
    cJSON_free(text);
    return rc;
}

static int gbnf_grammar(const char *text, const char *field, srv_request *r, srv_error *err)
{
    swa_error e;
    if (swa_grammar_parse(text, strlen(text), NULL, &r->grammar, &e) != SWA_OK)
        return fail(err, 400, field, "%s: %s", field, e.msg);
    return 0;
}

/* OpenAI's response_format: {"type": "text" | "json_object" | "json_schema", "json_schema":
   {"name", "schema", "strict", "description"}}; llama-server's {"type": "json_object", "schema"} too. */
static int response_format(const cJSON *f, srv_request *r, srv_error *err)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(f, "type"), *js, *schema;
    if (!cJSON_IsObject(f) || !cJSON_IsString(type))
        return fail(err, 400, "response_format", "response_format must be an object with a string \"type\"");
    if (!strcmp(type->valuestring, "text")) return 0;
    if (!strcmp(type->valuestring, "json_object")) {
        schema = cJSON_GetObjectItemCaseSensitive(f, "schema");
        if (schema && !cJSON_IsNull(schema)) return schema_grammar(schema, "response_format", r, err);
        return schema_text_grammar("{\"type\": \"object\"}", "response_format", r, err);   /* any object */
    }
    if (strcmp(type->valuestring, "json_schema"))
        return fail(err, 400, "response_format", "response_format.type must be text, json_object or json_schema, not \"%.40s\"",
                    type->valuestring);
    js = cJSON_GetObjectItemCaseSensitive(f, "json_schema");
    schema = cJSON_IsObject(js) ? cJSON_GetObjectItemCaseSensitive(js, "schema") : NULL;
    if (!schema) schema = cJSON_GetObjectItemCaseSensitive(f, "schema");   /* llama-server's shorter form */
    if (!schema || cJSON_IsNull(schema))
        return fail(err, 400, "response_format", "response_format json_schema needs json_schema.schema");
    return schema_grammar(schema, "response_format", r, err);
}

/* grammar (GBNF), json_schema, response_format, ollama's format ("json" or a schema): at most one;
   the sampler of every choice then follows the grammar. */
static int parse_structured(const cJSON *o, srv_request *r, srv_error *err)
{
    static const char *const names[] = {"grammar", "json_schema", "response_format", "format"};
    const cJSON *f = NULL;
    const char *name = NULL;
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, names[i]);
        if (!x || is_empty(x)) continue;
        if (f) return fail(err, 400, names[i], "give one of %s and %s", name, names[i]);
        f = x;
        name = names[i];
    }
    if (!f) return 0;
    if (r->grammar && r->grammar_trigger) {          /* the whole answer's format wins over strict calls */
        swa_grammar_free(r->grammar);
        r->grammar = NULL, r->grammar_trigger = NULL;
    }
    if (r->grammar) return fail(err, 400, name, "give one of %s and tool_choice required or naming a function", name);
    if (!strcmp(name, "grammar")) {
        if (!cJSON_IsString(f)) return fail(err, 400, name, "grammar must be a string of GBNF");
        return gbnf_grammar(f->valuestring, name, r, err);
    }
    if (!strcmp(name, "json_schema")) {
        if (!cJSON_IsObject(f) && !cJSON_IsBool(f)) return fail(err, 400, name, "json_schema must be a JSON Schema (an object)");
        return schema_grammar(f, name, r, err);
    }
    if (!strcmp(name, "response_format")) return response_format(f, r, err);
    if (cJSON_IsString(f) && !strcmp(f->valuestring, "json")) return schema_text_grammar("true", name, r, err);   /* any value */
    if (!cJSON_IsObject(f)) return fail(err, 400, name, "format must be \"json\" or a JSON Schema");
    return schema_grammar(f, name, r, err);
}

/* llama-server's speculative.n_max, .n_min (-1 when absent) and .p_min: n_max and n_min up to
   the server's --draft-max, what its verifiers hold; the server brings n_min down to n_max, as
   llama-server does. Each acts only where the server drafts (p_min where a draft model does): a
   value that would change something elsewhere is refused, not ignored. */
static int parse_speculative(const cJSON *o, const srv_limits *lim, srv_request *r, srv_error *err)
{
    double hi = lim->draft_max > 0 ? lim->draft_max : 256, p = lim->draft_p_min;
    int64_t n_max = -1, n_min = -1;
    if (get_int(o, "speculative.n_max", 0, hi, &n_max, err) || get_int(o, "speculative.n_min", 0, hi, &n_min, err) ||
        get_number(o, "speculative.p_min", 0, 1, &p, err))
        return -1;
    if (lim->draft_max <= 0 && n_max > 0)
        return fail(err, 400, "speculative.n_max", "speculative.n_max needs speculative decoding (the server started "
                    "with --lookup or -md); without it only 0 is taken");
    if (lim->draft_max <= 0 && n_min > 0)
        return fail(err, 400, "speculative.n_min", "speculative.n_min needs speculative decoding (the server started "
                    "with --lookup or -md); without it only 0 is taken");
    if (!lim->draft_model && p != lim->draft_p_min)
        return fail(err, 400, "speculative.p_min", "speculative.p_min needs a draft model (-md); without one only "
                    "%g, the default, is taken", lim->draft_p_min);
    r->spec_n_max = (int32_t)n_max;
    r->spec_n_min = (int32_t)n_min;
    r->spec_p_min = p;
    return 0;
}

/* llama-server's id_slot: a slot of the server (0..n_slots - 1), or -1 for any. A request that
   takes more than one slot (several prompts, n or best_of above 1) cannot name one. */
static int parse_id_slot(const cJSON *o, const srv_limits *lim, srv_request *r, srv_error *err)
{
    int64_t id = -1;
    if (get_int(o, "id_slot", -1, (double)lim->n_slots - 1, &id, err)) return -1;
    if (id >= 0 && r->n_prompts * r->best_of > 1)
        return fail(err, 400, "id_slot", "id_slot runs one choice on one slot: this request takes %d",
                    r->n_prompts * r->best_of);
    r->id_slot = (int32_t)id;
    return 0;
}

/* llama-server's penalize_nl and ollama's penalize_newline: the penalties here count a newline
   as any token (as both servers do now), which true asks for; false, which would spare newlines,
   is taken only while no penalty acts. o NULL: absent. */
static int penalize_newlines(const cJSON *o, const char *name, const srv_request *r, srv_error *err)
{
    const swa_sampler_config *sc = &r->sampling;
    int on = 1;
    if (o && get_bool(o, name, &on, err)) return -1;
    if (!on && ((sc->repeat_penalty != 0 && sc->repeat_penalty != 1) || sc->presence_penalty != 0 || sc->frequency_penalty != 0))
        return fail(err, 400, name, "%s false is not supported with a penalty: this server's penalties count newlines as "
                    "any token", name);
    return 0;
}

static int parse_object(const cJSON *o, const srv_limits *lim, srv_request *r, srv_error *err)
{
    const cJSON *opt = cJSON_GetObjectItemCaseSensitive(o, "options");
    const cJSON *so = cJSON_GetObjectItemCaseSensitive(o, "stream_options");
    int ollama = r->kind == SRV_OLLAMA_CHAT || r->kind == SRV_OLLAMA_GENERATE;
    if (!cJSON_IsObject(o)) return fail(err, 400, "", "the request body must be a JSON object");
    r->stream = ollama;   /* ollama streams unless told not to */
    if (check_fields(o, kind_fields[r->kind], err) || parse_prompt(o, lim, r, err) ||
        get_bool(o, "stream", &r->stream, err) || get_bool(o, "ignore_eos", &r->ignore_eos, err) ||
        get_bool(o, "cache_prompt", &r->cache_prompt, err) || parse_speculative(o, lim, r, err) ||
        parse_counts(o, lim, r, err) || parse_id_slot(o, lim, r, err) || parse_sampling(o, r, err) ||
        parse_bias(o, lim, r, err) || parse_logprobs(o, r, err) || (ollama && ollama_options(o, lim, r, err)) ||
        parse_structured(o, r, err) || penalize_newlines(o, "penalize_nl", r, err) ||
        penalize_newlines(cJSON_IsObject(opt) ? opt : NULL, "penalize_newline", r, err))
        return -1;
    if (so && !cJSON_IsNull(so)) {
        const cJSON *f;
        if (!cJSON_IsObject(so)) return fail(err, 400, "stream_options", "stream_options must be an object");
        int obfuscate = 0;
        cJSON_ArrayForEach(f, so)
            if (strcmp(f->string, "include_usage") && strcmp(f->string, "include_obfuscation"))
                return fail(err, 400, "stream_options", "unknown field \"stream_options.%.40s\"", f->string);
        if (get_bool(so, "include_usage", &r->include_usage, err) || get_bool(so, "include_obfuscation", &obfuscate, err))
            return -1;
        /* OpenAI's padding of each chunk against length side channels: not written here */
        if (obfuscate) return fail(err, 400, "stream_options.include_obfuscation", "stream_options.include_obfuscation: "
                                   "chunks are not padded by this server; send false");
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "echo"))) {
        if (r->logprobs) return fail(err, 400, "echo", "echo with logprobs is not supported by this server");
        if (echo_prompts(o, lim, r, err)) return -1;
    } else {
        int echo = 0;
        if (get_bool(o, "echo", &echo, err)) return -1;
    }
    return 0;
}

/* Line and column (from 1) of byte off, and up to 24 bytes of the text from there (printable). */
static void where(const char *body, size_t len, size_t off, int *line, int *col, char *excerpt, size_t cap)
{
    size_t i, k = 0;
    *line = 1;
    *col = 1;
    for (i = 0; i < off && i < len; i++) {
        if (body[i] == '\n') { (*line)++; *col = 1; }
        else if (((unsigned char)body[i] & 0xC0) != 0x80) (*col)++;
    }
    for (i = off; i < len && k + 1 < cap && i < off + 24; i++)
        excerpt[k++] = (unsigned char)body[i] < 0x20 || body[i] == '"' ? ' ' : body[i];
    excerpt[k] = '\0';
}

/* What cJSON stopped at, in words: where a value's nesting runs past cJSON's limit, the end of
   the body, or the character it could not take. */
static const char *what_wrong(const char *body, size_t len, size_t off)
{
    size_t i;
    int depth = 0, in_str = 0;
    for (i = 0; i < off && i < len; i++) {
        char c = body[i];
        if (in_str) { if (c == '\\') i++; else if (c == '"') in_str = 0; }
        else if (c == '"') in_str = 1;
        else if (c == '[' || c == '{') depth++;
        else if (c == ']' || c == '}') depth--;
    }
    if (depth >= CJSON_NESTING_LIMIT) return "nesting deeper than this server takes";
    for (i = off; i < len && strchr(" \t\r\n", body[i]); i++) {}
    if (i >= len) return in_str ? "the body ends inside a string" : "the body ends early (an unclosed object, list or value)";
    if (in_str) return "a bad character or escape in a string";
    return "an unexpected character";
}

/* A NUL character escaped in a string (\u0000): refused, since the text would end there. */
static size_t find_nul_escape(const char *body, size_t len)
{
    size_t i;
    for (i = 0; i + 6 <= len; i++) {
        if (body[i] != '\\') continue;
        if (body[i + 1] == 'u' && !memcmp(body + i + 2, "0000", 4)) return i;
        i++;   /* skip the escaped character, so \\u0000 is text */
    }
    return (size_t)-1;
}

cJSON *srv_parse_json(const char *body, size_t len, srv_error *err)
{
    cJSON *o;
    const char *at = NULL;
    size_t nul = find_nul_escape(body, len);
    int line, col;
    char ex[32];
    if (nul != (size_t)-1) {
        where(body, len, nul, &line, &col, ex, sizeof ex);
        fail(err, 400, "", "the body holds a NUL character (\\u0000) at line %d, column %d: text with NUL is refused",
             line, col);
        return NULL;
    }
    /* with its own end pointer: cJSON_GetErrorPtr is one global for every thread */
    if (!(o = cJSON_ParseWithLengthOpts(body, len, &at, 0))) {
        size_t off = at && at >= body && at <= body + len ? (size_t)(at - body) : len;
        where(body, len, off, &line, &col, ex, sizeof ex);
        fail(err, 400, "", "the body is not valid JSON: %s at line %d, column %d%s%s%s", what_wrong(body, len, off), line, col,
             *ex ? " (at \"" : "", ex, *ex ? "\")" : "");
        return NULL;
    }
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        fail(err, 400, "", "the request body must be a JSON object");
        return NULL;
    }
    return o;
}

int srv_parse_request(const char *body, size_t len, int kind, const srv_limits *lim, srv_request *r, srv_error *err)
{
    cJSON *o;
    int rc;
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->cache_prompt = 1;
    r->spec_n_max = r->spec_n_min = -1;
    r->id_slot = -1;
    r->sampling = swa_sampler_config_default();
    if (!(o = srv_parse_json(body, len, err))) return -1;
    rc = parse_object(o, lim, r, err);
    cJSON_Delete(o);
    if (rc) srv_request_free(r);
    return rc;
}

void srv_request_free(srv_request *r)
{
    int i;
    for (i = 0; i < SRV_MAX_PROMPTS; i++) {
        free(r->prompt[i]);
        free(r->echo[i]);
    }
    free(r->bias_id);
    free(r->bias);
    swa_grammar_free(r->grammar);
    free(r->prompt_text);
    for (i = 0; i < r->n_stop; i++) free(r->stop[i]);
    free(r->tools);
    memset(r, 0, sizeof *r);
}

/* ---- embeddings ---- */

int srv_parse_embed(const char *body, size_t len, int ollama, const srv_limits *lim, srv_embed_request *r, srv_error *err)
{
    cJSON *o;
    const cJSON *in, *f, *e;
    srv_request tmp;
    int i = 0, rc = -1;
    memset(r, 0, sizeof *r);
    memset(&tmp, 0, sizeof tmp);
    if (!(o = srv_parse_json(body, len, err))) return -1;
    cJSON_ArrayForEach(f, o) {   /* the fields: few, and each acts or changes nothing */
        const char *k = f->string;
        if (strcmp(k, "input") && strcmp(k, "content") && strcmp(k, "model") && strcmp(k, "encoding_format") &&
            strcmp(k, "user") && strcmp(k, "keep_alive") && strcmp(k, "truncate") && strcmp(k, "options")) {
            fail(err, 400, k, "%s is not supported by this server", k);
            goto out;
        }
        if (!strcmp(k, "options") && cJSON_GetArraySize(f) > 0) { fail(err, 400, k, "options are not supported for embeddings"); goto out; }
        if (!strcmp(k, "truncate") && !cJSON_IsTrue(f)) { fail(err, 400, k, "truncate: false is not supported"); goto out; }
    }
    f = cJSON_GetObjectItemCaseSensitive(o, "encoding_format");
    if (f && !cJSON_IsNull(f) && !(cJSON_IsString(f) && (!strcmp(f->valuestring, "float") || !strcmp(f->valuestring, "base64")))) {
        fail(err, 400, "encoding_format", "encoding_format must be \"float\" or \"base64\"");
        goto out;
    }
    r->base64 = cJSON_IsString(f) && !strcmp(f->valuestring, "base64");
    in = cJSON_GetObjectItemCaseSensitive(o, "input");
    if (!in && !ollama) in = cJSON_GetObjectItemCaseSensitive(o, "content");
    if (!in) { fail(err, 400, "input", "input is required"); goto out; }
    tmp.n_prompts = 1;
    if (cJSON_IsArray(in) && in->child && !cJSON_IsNumber(in->child)) {
        tmp.n_prompts = cJSON_GetArraySize(in);
        if (tmp.n_prompts > SRV_MAX_PROMPTS) { fail(err, 400, "input", "input lists more than %d inputs", SRV_MAX_PROMPTS); goto out; }
        cJSON_ArrayForEach(e, in) if (one_prompt(e, i++, lim, &tmp, err)) goto out;
    } else if (cJSON_IsArray(in) && !in->child) {
        fail(err, 400, "input", "input is empty");
        goto out;
    } else if (one_prompt(in, 0, lim, &tmp, err)) {
        goto out;
    }
    for (i = 0; i < tmp.n_prompts; i++) {
        if (tmp.n_prompt[i] == 0 || tmp.n_prompt[i] > (size_t)lim->n_ctx) {
            fail(err, 400, "input", "input %d is %zu tokens: it must be 1 to %d", i, tmp.n_prompt[i], lim->n_ctx);
            goto out;
        }
        r->prompt[i] = tmp.prompt[i];
        r->n_prompt[i] = tmp.n_prompt[i];
        tmp.prompt[i] = NULL;
    }
    r->n = tmp.n_prompts;
    rc = 0;
out:
    srv_request_free(&tmp);
    cJSON_Delete(o);
    return rc;
}

void srv_embed_free(srv_embed_request *r)
{
    int i;
    for (i = 0; i < r->n; i++) free(r->prompt[i]);
    memset(r, 0, sizeof *r);
}

/* ---- slot actions ---- */

int srv_filename_valid(const char *name)
{
    size_t n = strlen(name), i;
    if (n == 0 || n > 255 || !srv_utf8_valid(name, n)) return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7F || strchr("/\\:*?\"<>|", c)) return 0;
        /* C1 controls (U+0080..U+009F are C2 80..C2 9F) */
        if (c == 0xC2 && (unsigned char)name[i + 1] >= 0x80 && (unsigned char)name[i + 1] <= 0x9F) return 0;
    }
    if (name[0] == ' ' || name[n - 1] == ' ' || name[n - 1] == '.') return 0;
    return strstr(name, "..") == NULL;
}

int srv_parse_slot_action(const char *body, size_t len, int action, char *name, size_t cap, srv_error *err)
{
    cJSON *o;
    const cJSON *f, *fn;
    int rc = 0;
    size_t k = 0;
    name[0] = '\0';
    while (k < len && body[k] && strchr(" \t\r\n", body[k])) k++;
    if (action == SRV_SLOT_ERASE && k == len) return 0;   /* no body */
    if (!(o = srv_parse_json(body, len, err))) return -1;
    cJSON_ArrayForEach(f, o)
        if (action == SRV_SLOT_ERASE || strcmp(f->string, "filename")) {
            rc = fail(err, 400, f->string, "unknown field \"%.60s\"", f->string);
            break;
        }
    fn = cJSON_GetObjectItemCaseSensitive(o, "filename");
    if (rc == 0 && action != SRV_SLOT_ERASE) {
        if (!cJSON_IsString(fn)) rc = fail(err, 400, "filename", "\"filename\" is required: a string");
        else if (!srv_filename_valid(fn->valuestring) || strlen(fn->valuestring) >= cap)
            rc = fail(err, 400, "filename", "Invalid filename: a plain name of 1 to 255 bytes, without / \\ : * ? \" < > |, "
                      "control characters or \"..\", no space at either end nor '.' at the end");
        else memcpy(name, fn->valuestring, strlen(fn->valuestring) + 1);
    }
    cJSON_Delete(o);
    return rc;
}
