/* swa-server: an OpenAI-compatible HTTP server on swa.h's batched sequences.

   swa-server -m MODEL.gguf [--host 127.0.0.1] [--port 8080] [--parallel N] [-c N_CTX] [-t THREADS]
              [--api-key KEY] [--chat-template NAME] ...      (swa-server --help lists them all)

   One scheduler thread owns the context. Each of its steps is one swa_ctx_decode over the next
   token of every generating slot and a bounded chunk of the prompts being read, so a long
   prompt delays the other streams by one chunk at most. A slot is one sequence of the context;
   it keeps the tokens it holds, so a request that extends them (a chat's next turn) evaluates
   only what is new, and the n choices of one request are forked from one prompt evaluation with
   swa_seq_copy. HTTP is libmicrohttpd's (a thread per connection, with timeouts), JSON is cJSON's;
   request parsing is in server_request.c, where the fuzzer reaches it. docs/server.md is the manual.
   All of the server's state is one struct server, made in main and given to each function that uses
   it (or only the part it uses); the one file-scope variable is the flag the signal handler sets. */
#define _POSIX_C_SOURCE 200809L
#include "swa.h"
#include "server_request.h"
#include "server_cache.h"
#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

/* Flags one thread sets and another polls, without a lock: atomic, ordered with what was written before. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

/* ---- options ---- */

enum { POOL_FILE = -1, POOL_NONE = 0, POOL_MEAN = 1, POOL_CLS = 2, POOL_LAST = 3 };   /* gguf's pooling_type ids */

typedef struct options {
    const char *model, *host, *api_key, *chat_template, *alias;
    const char *slot_save_path;   /* --slot-save-path DIR: where POST /slots/{id} saves and restores; NULL: off */
    int pooling;               /* POOL_*: --pooling, else the file's {arch}.pooling_type, else mean */
    int log_json, log_off;     /* --log-format json, --log-disable */
    double shutdown_timeout;   /* --shutdown-timeout S */
    int port, parallel, n_ctx, threads, n_batch, n_rewind, queue, timeout, max_conn;
    int cache_ram;             /* MiB of snapshots kept in host memory; -1: srv_cache_default_mib */
    size_t max_body;
    /* speculative decoding (docs/speculative.md): drafts by prompt lookup or from a draft model */
    const char *model_draft;   /* -md FILE */
    int lookup;                /* --lookup */
    int draft_max, draft_min, ngram_min, ngram_max;   /* -1 until given or defaulted by spec_args */
    double draft_p_min;        /* --draft-p-min: a draft model's draft ends after a token less likely; -1 until set */
} options;

static void usage(FILE *f)
{
    int i;
    fprintf(f,
        "usage: swa-server -m MODEL.gguf [options]\n"
        "  -m, --model FILE         the GGUF model\n"
        "  --host ADDR              address to listen on (127.0.0.1)\n"
        "  --port N                 port (8080; 0 picks a free one, printed)\n"
        "  -np, --parallel N        slots: requests generated at once, one sequence each (4)\n"
        "  -c, --ctx-size N         positions per slot, prompt and completion (the model's, at most 4096)\n"
        "  -t, --threads N          threads (the CPUs online)\n"
        "  -b, --batch-size N       tokens per step: the generating slots' and a chunk of prompts (256)\n"
        "  --rewind N               extra ring slots per windowed layer, to step back over (8)\n"
        "  --queue N                requests waiting for a slot before 503 (64)\n"
        "  --cache-ram MIB          host memory for snapshots of sequences a slot let go (1/8 of RAM, at most 8192; 0: none)\n"
        "  --timeout S              seconds a connection may idle (10)\n"
        "  --max-connections N      open connections (256)\n"
        "  --max-body BYTES         largest request body (1048576)\n"
        "  --api-key KEY            require Authorization: Bearer KEY\n"
        "  --slot-save-path DIR     where POST /slots/{id}?action=save|restore keeps slots' files (off)\n"
        "  --lookup                 speculative decoding, drafts looked up in each slot's text so far\n"
        "  -md, --model-draft FILE  speculative decoding, drafts from a small model of the same vocabulary\n"
        "  --draft-max N            tokens drafted per step, 1..256 (16; --draft, --draft-n)\n"
        "  --draft-min N            verify drafts of at least N tokens only (0; --draft-n-min)\n"
        "  --draft-p-min P          -md: a draft ends after a token the draft model gives less than P (0.75)\n"
        "  --lookup-ngram-min N, --lookup-ngram-max N  the n-grams --lookup matches (1..4)\n"
        "  --pooling mean|cls|last  embeddings' pooling (the file's {arch}.pooling_type, else mean)\n"
        "  --log-format text|json   the access log's lines on stderr (text)\n"
        "  --log-disable            no access log\n"
        "  --shutdown-timeout S     on SIGTERM/SIGINT, seconds to end every request and exit (5)\n"
        "  -a, --alias NAME         the model's name in responses (the file's name)\n"
        "  --chat-template NAME     chat format for models without one (or to override it):");
    for (i = 0; swa_chat_template_at(i); i++) fprintf(f, " %s", swa_chat_template_name(swa_chat_template_at(i)));
    fprintf(f, "\n");
}

static int int_arg(const char *flag, const char *v, long lo, long hi, int *out)
{
    char *end;
    long x;
    errno = 0;
    x = v ? strtol(v, &end, 10) : 0;
    if (!v || errno || *end || end == v || x < lo || x > hi) {
        fprintf(stderr, "swa-server: %s needs an integer from %ld to %ld, not \"%s\"\n", flag, lo, hi, v ? v : "");
        return 0;
    }
    *out = (int)x;
    return 1;
}

/* A number from 0 to hi (seconds, a probability). */
static int double_arg(const char *flag, const char *v, double hi, double *out)
{
    char *end;
    double x = v ? strtod(v, &end) : -1;
    if (!v || *end || end == v || !(x >= 0 && x <= hi)) {
        fprintf(stderr, "swa-server: %s needs a number from 0 to %g, not \"%s\"\n", flag, hi, v ? v : "");
        return 0;
    }
    *out = x;
    return 1;
}

/* The speculative flags agree, and the unset ones get swa-generate's defaults (llama-server's
   --draft-max 16 and --draft-p-min 0.75; lookup's n-grams 1..4, as llama-lookup's). 0 after
   saying why not. */
static int spec_args(options *o)
{
    const char *e = NULL;
    if (!o->lookup && !o->model_draft) {
        if (o->draft_max >= 0 || o->draft_min >= 0 || o->ngram_min >= 0 || o->ngram_max >= 0)
            e = "--draft-max, --draft-min and --lookup-ngram-min/max need --lookup or --model-draft";
    } else if (o->lookup && o->model_draft) {
        e = "give one of --lookup and --model-draft";
    } else if (o->model_draft && (o->ngram_min >= 0 || o->ngram_max >= 0)) {
        e = "--lookup-ngram-min/max are for --lookup, not --model-draft";
    }
    if (!e && !o->model_draft && o->draft_p_min >= 0) e = "--draft-p-min needs --model-draft";
    if (o->draft_p_min < 0) o->draft_p_min = 0.75;   /* llama-server's */
    if (o->draft_max < 0) o->draft_max = 16;
    if (o->draft_min < 0) o->draft_min = 0;
    if (o->ngram_min < 0) o->ngram_min = 1;
    if (o->ngram_max < 0) o->ngram_max = o->ngram_min > 4 ? o->ngram_min : 4;
    if (!e && o->draft_min > o->draft_max) e = "--draft-min is above --draft-max";
    if (!e && o->ngram_min > o->ngram_max) e = "--lookup-ngram-min is above --lookup-ngram-max";
    if (e) fprintf(stderr, "swa-server: %s\n", e);
    return !e;
}

static int parse_args(int argc, char **argv, options *o)
{
    int i, mb = 1 << 20;
    memset(o, 0, sizeof *o);
    o->host = "127.0.0.1";
    o->port = 8080;
    o->parallel = 4;
    o->n_batch = 256;
    o->n_rewind = 8;
    o->queue = 64;
    o->timeout = 10;
    o->max_conn = 256;
    o->cache_ram = -1;
    o->pooling = POOL_FILE;
    o->shutdown_timeout = 5;
    o->draft_max = o->draft_min = o->ngram_min = o->ngram_max = -1;
    o->draft_p_min = -1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1, *ip = NULL;
        long lo = 1, hi = 1 << 20;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
        else if (!strcmp(a, "-m") || !strcmp(a, "--model")) o->model = v;
        else if (!strcmp(a, "--host")) o->host = v;
        else if (!strcmp(a, "--api-key")) o->api_key = v;
        else if (!strcmp(a, "--chat-template")) o->chat_template = v;
        else if (!strcmp(a, "--slot-save-path")) o->slot_save_path = v;
        else if (!strcmp(a, "-md") || !strcmp(a, "--model-draft")) o->model_draft = v;
        else if (!strcmp(a, "--lookup")) { o->lookup = 1; continue; }
        else if (!strcmp(a, "--draft-p-min")) { if (!double_arg(a, v, 1, &o->draft_p_min)) return 0; }
        else if (!strcmp(a, "-a") || !strcmp(a, "--alias")) o->alias = v;
        else if (!strcmp(a, "--log-disable")) { o->log_off = 1; continue; }
        else if (!strcmp(a, "--log-format")) {
            if (!v || (strcmp(v, "text") && strcmp(v, "json"))) { fprintf(stderr, "swa-server: --log-format is text or json\n"); return 0; }
            o->log_json = !strcmp(v, "json");
        } else if (!strcmp(a, "--pooling")) {
            static const char *names[] = {"none", "mean", "cls", "last"};
            int k;
            for (k = 0; k < 4 && (!v || strcmp(v, names[k])); k++) {}
            if (k == 0 || k == 4) {
                fprintf(stderr, "swa-server: --pooling is mean, cls or last (none, a vector per token, is not supported)\n");
                return 0;
            }
            o->pooling = k;
        } else if (!strcmp(a, "--shutdown-timeout")) {
            if (!double_arg(a, v, 3600, &o->shutdown_timeout)) return 0;
        }
        else if (!strcmp(a, "--port")) { ip = &o->port; lo = 0; hi = 65535; }
        else if (!strcmp(a, "-np") || !strcmp(a, "--parallel")) { ip = &o->parallel; hi = 256; }
        else if (!strcmp(a, "-c") || !strcmp(a, "--ctx-size")) { ip = &o->n_ctx; lo = 0; }
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) { ip = &o->threads; lo = 0; hi = 256; }
        else if (!strcmp(a, "-b") || !strcmp(a, "--batch-size")) { ip = &o->n_batch; lo = 8; hi = 65536; }
        else if (!strcmp(a, "--rewind")) { ip = &o->n_rewind; lo = 0; hi = 65536; }
        else if (!strcmp(a, "--queue")) { ip = &o->queue; lo = 0; }
        else if (!strcmp(a, "--cache-ram")) { ip = &o->cache_ram; lo = 0; hi = 1 << 24; }
        else if (!strcmp(a, "--timeout")) { ip = &o->timeout; hi = 86400; }
        else if (!strcmp(a, "--max-connections")) { ip = &o->max_conn; hi = 65536; }
        else if (!strcmp(a, "--max-body")) { ip = &mb; lo = 64; hi = 1 << 30; }
        else if (!strcmp(a, "--draft-max") || !strcmp(a, "--draft") || !strcmp(a, "--draft-n")) { ip = &o->draft_max; hi = 256; }
        else if (!strcmp(a, "--draft-min") || !strcmp(a, "--draft-n-min")) { ip = &o->draft_min; lo = 0; hi = 256; }
        else if (!strcmp(a, "--lookup-ngram-min")) { ip = &o->ngram_min; hi = 64; }
        else if (!strcmp(a, "--lookup-ngram-max")) { ip = &o->ngram_max; hi = 64; }
        else { fprintf(stderr, "swa-server: unknown option %s (--help lists them)\n", a); return 0; }
        if (ip) ok = int_arg(a, v, lo, hi, ip);
        else if (!v) { fprintf(stderr, "swa-server: %s needs a value\n", a); ok = 0; }
        if (!ok) return 0;
        i++;
    }
    o->max_body = (size_t)mb;
    if (!o->model) { usage(stderr); return 0; }
    if (!spec_args(o)) return 0;
    if (o->slot_save_path) {   /* made when absent, as llama-server does */
        struct stat st;
        if (stat(o->slot_save_path, &st) != 0 && mkdir(o->slot_save_path, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "swa-server: --slot-save-path %s: %s\n", o->slot_save_path, strerror(errno));
            return 0;
        }
        if (stat(o->slot_save_path, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "swa-server: --slot-save-path %s is not a directory\n", o->slot_save_path);
            return 0;
        }
    }
    if (o->chat_template && !swa_chat_template_by_name(o->chat_template)) {
        fprintf(stderr, "swa-server: unknown chat template \"%s\" (--help lists them)\n", o->chat_template);
        return 0;
    }
    return 1;
}

/* ---- growable byte buffer ---- */

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int failed;
} sbuf;

static void sb_add(sbuf *b, const char *p, size_t n)
{
    char *q;
    if (b->failed) return;
    if (!(q = (char *)srv_grow(b->s, &b->cap, b->len + n + 1, 1))) { b->failed = 1; return; }
    b->s = q;
    if (n) memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_addf(sbuf *b, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) sb_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- requests in flight ---- */

enum { EMB_NONE = 0, EMB_OPENAI, EMB_LLAMA, EMB_OLLAMA };

enum { FIN_NONE = 0, FIN_STOP, FIN_LENGTH, FIN_WORD };   /* FIN_STOP: end of sequence; FIN_WORD: a stop string */

enum { OP_NONE = 0, OP_SAVE, OP_RESTORE, OP_ERASE };   /* slot actions: SRV_SLOT_* + 1 */

typedef struct choice {
    swa_sampler *sampler;
    swa_decoder dec;
    sbuf text;                 /* the generated text, cut at a stop string */
    size_t sent;               /* bytes of text already streamed */
    int64_t n_gen;
    int finish;                /* FIN_* */
    int slot;
    int started;               /* the role chunk is streamed */
    cJSON *lp;                 /* logprobs not yet streamed (chat: content entries; completions: an object) */
    int group;                 /* the prompt it continues (a completion's list of prompts) */
    double cum_lp;             /* the sum of its tokens' log-probabilities (best_of) */
    int stop_word;             /* the stop string that ended it (FIN_WORD) */
    swa_chat_parser *parser;   /* chat: the answer read into content, reasoning and tool calls */
    int32_t spec_max, spec_min;   /* speculative decoding: the longest and shortest draft; spec_max 0: none */
    float spec_p_min;          /* a draft model's draft ends after a token it gives less (speculative.p_min) */
    int64_t n_drafted, n_accepted;   /* tokens drafted for it, and of them accepted */
} choice;

typedef struct job {
    struct server *srv;        /* the server that made it, for what is given only the job: job_release,
                                  the stream's callbacks, the model's name in responses */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;                  /* the connection's and the scheduler's */
    srv_request req;
    char id[80];
    long created;
    choice *ch;
    int n_ch;                  /* choices generated: prompts x best_of */
    int first_slot;            /* the slot of choice 0, for the log and llama-server's id_slot */
    int pin;                   /* the slot the request named (id_slot): it waits for that one; -1: any */
    sbuf out;                  /* bytes for the client: SSE events, or the whole JSON response */
    size_t taken;              /* bytes of out handed to the connection */
    int done;                  /* out is complete */
    int status;                /* HTTP status of a non-streamed response */
    int cancelled;             /* the client went away: read and written with LOAD/STORE */
    int fd;                    /* the connection's socket, to see the client leave */
    struct MHD_Connection *http;   /* its connection: idle timeout off until out is complete */
    int64_t n_cached;          /* prompt tokens found in the slot */
    double t_arrive, t_first;
    int n_finished;
    int embed;                 /* EMB_*: an embeddings request (ereq), answered by the scheduler */
    srv_embed_request ereq;
    int op;                    /* OP_*: a slot action on slot first_slot, answered by the scheduler */
    char op_file[256];         /* its file's name, in --slot-save-path */
    struct job *next;          /* the queue */
} job;

/* The slots a job takes: one per choice, one for an embeddings job, none for a slot action
   (which waits for its own slot). */
static int job_slots(const job *j) { return j->op ? 0 : j->embed ? 1 : j->n_ch; }

/* ---- the server ---- */

enum { SLOT_IDLE = 0, SLOT_PREFILL, SLOT_FORK, SLOT_GEN };

typedef struct slot {
    int32_t *hist;             /* the tokens the sequence holds, in order */
    size_t n_hist, cap;
    job *job;
    int choice;
    int state;
    size_t done;               /* prompt tokens of job evaluated (PREFILL) */
    int32_t next;              /* sampled, evaluated in the next step (GEN) */
    double last_used;
    /* Where the rings cannot rewind far, a snapshot of the sequence at the end of its last prompt:
       the next turn of that chat starts from it when the reply does not tokenize as it was sampled. */
    void *snap;
    size_t snap_size, snap_cap;
    int32_t *snap_tok;         /* the tokens the snapshot holds */
    size_t snap_n, snap_tok_cap;
    swa_spec *verifier;        /* speculative decoding (--lookup, -md): the slot's verifier */
    swa_drafter *drafter;      /* -md: the draft model in a context of its own, following the slot's text */
    int shown_busy;            /* what /slots shows, copied under mu after each step */
    size_t shown_n_hist;
} slot;

typedef struct server {
    options o;
    swa_model *model;
    const swa_vocab *vocab;
    const swa_chat_template *tmpl;
    swa_jinja *jinja;          /* the model's own template, for every chat (NULL: none, or refused) */
    char bos_text[128], eos_text[128];
    int32_t eot, eos, n_vocab;
    swa_ctx *ctx;
    swa_model *draft;          /* -md */
    int32_t *spec_buf, *spec_out;   /* a lookup's draft [draft_max], a verification's tokens [draft_max + 1] */
    srv_cache *cache;          /* NULL with --cache-ram 0 */
    srv_limits lim;
    char model_id[256];
    int pooling;               /* POOL_MEAN, POOL_CLS or POOL_LAST */
    slot *slots;
    int n_slots;
    /* shared with the connections, under mu */
    pthread_mutex_t mu;
    pthread_cond_t wake;
    job *queue_head, *queue_tail;
    int n_queued, n_busy, stopping;
    job *ops_waiting;          /* slot actions whose slot is busy: the scheduler's alone */
    int loaded;                /* LOAD/STORE: the model is loaded, the scheduler runs */
    /* metrics, under mu */
    uint64_t m_requests, m_errors, m_prompt_tokens, m_cached_tokens, m_gen_tokens, m_decodes;
    double m_prompt_s, m_gen_s;
    uint64_t m_by_status[6];   /* 2xx..5xx by hundreds (index status/100) */
    int n_jobs;                /* jobs not yet freed (__atomic): a stop waits for them */
    unsigned long n_ids;       /* jobs made, under mu: their ids */
    /* the connections' deadlines (watchdog), under wmu */
    pthread_mutex_t wmu;
    struct watch *watches;
    /* the scheduler's scratch */
    int32_t *b_tok, *b_seq;
    int8_t *b_logits;
    int *b_slot;               /* the slot whose token is at batch row i */
    float *rows;
    size_t b_cap;
} server;

/* The one variable outside a server: a signal handler has no argument, so SIGINT and SIGTERM
   set this flag (a lock-free atomic store is async-signal-safe) and main's loop reads it. */
static volatile sig_atomic_t g_stop;

/* Drop a reference to j; the last frees it. */
static void job_release(job *j)
{
    int refs, i;
    pthread_mutex_lock(&j->mu);
    refs = --j->refs;
    pthread_mutex_unlock(&j->mu);
    if (refs) return;
    __atomic_sub_fetch(&j->srv->n_jobs, 1, __ATOMIC_ACQ_REL);
    for (i = 0; j->ch && i < j->n_ch; i++) {
        swa_sampler_free(j->ch[i].sampler);
        swa_chat_parser_free(j->ch[i].parser);
        free(j->ch[i].text.s);
        cJSON_Delete(j->ch[i].lp);
    }
    free(j->ch);
    srv_request_free(&j->req);
    srv_embed_free(&j->ereq);
    free(j->out.s);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j);
}

/* ---- JSON helpers ---- */

/* Text for JSON: valid UTF-8 (cJSON passes bytes through), each bad byte as U+FFFD. */
static char *clean_utf8(const char *s, size_t n)
{
    char *out = (char *)malloc(3 * n + 1), *p = out;
    size_t i = 0;
    if (!out) return NULL;
    while (i < n) {
        size_t k = 1;
        unsigned c = (unsigned char)s[i];
        if (c >= 0x80) k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        if (c < 0x80 || (i + k <= n && srv_utf8_valid(s + i, k))) {
            memcpy(p, s + i, k);
            p += k;
            i += k;
        } else {
            memcpy(p, "\xEF\xBF\xBD", 3);
            p += 3;
            i++;
        }
    }
    *p = '\0';
    return out;
}

static cJSON *add_text(cJSON *o, const char *name, const char *s, size_t n)
{
    char *c = clean_utf8(s, n);
    cJSON *r = cJSON_AddStringToObject(o, name, c ? c : "");
    free(c);
    return r;
}

/* A choice's logprobs into its JSON object ch (under "logprobs", inside "content" for a chat),
   which takes them over; null when none were asked for. */
static void attach_logprobs(cJSON *ch, choice *c, int chat)
{
    if (!c->lp) {
        cJSON_AddNullToObject(ch, "logprobs");
        return;
    }
    cJSON_AddItemToObject(chat ? cJSON_AddObjectToObject(ch, "logprobs") : ch, chat ? "content" : "logprobs", c->lp);
    c->lp = NULL;
}

static void json_out(sbuf *b, cJSON *o, int sse)
{
    char *s = cJSON_PrintUnformatted(o);
    if (!s) { b->failed = 1; return; }
    if (sse) sb_add(b, "data: ", 6);
    sb_add(b, s, strlen(s));
    if (sse) sb_add(b, "\n\n", 2);
    free(s);
}

static cJSON *error_json(int status, const char *type, const char *param, const char *msg)
{
    cJSON *o = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(o, "error");
    add_text(e, "message", msg, strlen(msg));
    cJSON_AddStringToObject(e, "type", type);
    if (param && *param) cJSON_AddStringToObject(e, "param", param);
    else cJSON_AddNullToObject(e, "param");
    (void)status;
    cJSON_AddNullToObject(e, "code");
    return o;
}

/* ---- generation: what the scheduler writes for the client ---- */

static const char *finish_name(int f) { return f == FIN_STOP || f == FIN_WORD ? "stop" : f == FIN_LENGTH ? "length" : NULL; }

static int is_ollama(const job *j) { return j->req.kind == SRV_OLLAMA_CHAT || j->req.kind == SRV_OLLAMA_GENERATE; }
/* llama-server's /completion and /infill answer alike */
static int is_native(const job *j) { return j->req.kind == SRV_NATIVE || j->req.kind == SRV_INFILL; }

/* RFC 3339 time now, as ollama writes created_at. */
static void iso_time(char *out, size_t cap)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, (long)(ts.tv_nsec / 1000) % 1000000);
}

/* A chat answer's tool calls (or those a delta made whole) as ollama writes them: {"function":
   {"index", "name", "arguments": OBJECT}}. */
static void ollama_calls(cJSON *msg, const swa_chat_msg *m)
{
    cJSON *arr = cJSON_AddArrayToObject(msg, "tool_calls");
    size_t k;
    for (k = 0; k < m->n_calls; k++) {
        cJSON *tc = cJSON_CreateObject(), *fn = cJSON_AddObjectToObject(tc, "function");
        cJSON *args = cJSON_Parse(m->calls[k].arguments);   /* the parser's JSON text of an object */
        cJSON_AddItemToArray(arr, tc);
        cJSON_AddNumberToObject(fn, "index", (double)(m->first_call + k));
        cJSON_AddStringToObject(fn, "name", m->calls[k].name);
        cJSON_AddItemToObject(fn, "arguments", args ? args : cJSON_CreateObject());
    }
}

/* An ollama chunk or response: text so far or all of it, or (pm) what the chat parser read of
   it: content, thinking and the calls made whole; at the end the counts and durations. */
static void ollama_out(job *j, const swa_chat_msg *pm, const char *text, size_t n, int done)
{
    cJSON *o = cJSON_CreateObject();
    char t[96];
    iso_time(t, sizeof t);
    cJSON_AddStringToObject(o, "model", j->srv->model_id);
    cJSON_AddStringToObject(o, "created_at", t);
    if (j->req.kind == SRV_OLLAMA_CHAT) {
        cJSON *m = cJSON_AddObjectToObject(o, "message");
        cJSON_AddStringToObject(m, "role", "assistant");
        if (pm) {
            add_text(m, "content", pm->content, pm->content_len);
            if (pm->reasoning_len) add_text(m, "thinking", pm->reasoning, pm->reasoning_len);
            if (pm->n_calls) ollama_calls(m, pm);
        } else {
            add_text(m, "content", text, n);
        }
    } else {
        add_text(o, "response", text, n);
    }
    cJSON_AddBoolToObject(o, "done", done);
    if (done) {
        double now = now_s(), first = j->t_first ? j->t_first : now;
        cJSON_AddStringToObject(o, "done_reason", finish_name(j->ch[0].finish) ? finish_name(j->ch[0].finish) : "stop");
        cJSON_AddNumberToObject(o, "total_duration", floor((now - j->t_arrive) * 1e9));
        cJSON_AddNumberToObject(o, "load_duration", 0);
        cJSON_AddNumberToObject(o, "prompt_eval_count", (double)j->req.n_prompt[0]);
        cJSON_AddNumberToObject(o, "prompt_eval_duration", floor((first - j->t_arrive) * 1e9));
        cJSON_AddNumberToObject(o, "eval_count", (double)j->ch[0].n_gen);
        cJSON_AddNumberToObject(o, "eval_duration", floor((now - first) * 1e9));
    }
    {
        char *s = cJSON_PrintUnformatted(o);
        if (s) { sb_add(&j->out, s, strlen(s)); sb_add(&j->out, "\n", 1); free(s); }
        else j->out.failed = 1;
    }
    cJSON_Delete(o);
}

/* llama-server's {what}_n, {what}_ms, {what}_per_token_ms and {what}_per_second for n tokens in
   ms milliseconds (the rates 0 where there is nothing to divide). */
static void rates(cJSON *t, const char *what, int64_t n, double ms)
{
    char key[40];
    snprintf(key, sizeof key, "%s_n", what);
    cJSON_AddNumberToObject(t, key, (double)n);
    snprintf(key, sizeof key, "%s_ms", what);
    cJSON_AddNumberToObject(t, key, ms);
    snprintf(key, sizeof key, "%s_per_token_ms", what);
    cJSON_AddNumberToObject(t, key, n > 0 ? ms / (double)n : 0);
    snprintf(key, sizeof key, "%s_per_second", what);
    cJSON_AddNumberToObject(t, key, ms > 0 ? 1e3 * (double)n / ms : 0);
}

/* llama-server's timings, over the request's choices: the prompt tokens evaluated and the time
   to the first token, the tokens generated and the time since; draft_n and draft_n_accepted
   where drafts were verified. */
static cJSON *timings_json(const job *j)
{
    cJSON *t = cJSON_CreateObject();
    double now = now_s(), first = j->t_first ? j->t_first : now;
    int64_t prompt = 0, gen = 0, drafted = 0, accepted = 0;
    int i;
    for (i = 0; i < j->req.n_prompts; i++) prompt += (int64_t)j->req.n_prompt[i];
    for (i = 0; i < j->n_ch; i++) gen += j->ch[i].n_gen, drafted += j->ch[i].n_drafted, accepted += j->ch[i].n_accepted;
    rates(t, "prompt", prompt - j->n_cached, (first - j->t_arrive) * 1e3);
    rates(t, "predicted", gen, (now - first) * 1e3);
    if (drafted) {
        cJSON_AddNumberToObject(t, "draft_n", (double)drafted);
        cJSON_AddNumberToObject(t, "draft_n_accepted", (double)accepted);
    }
    return t;
}

/* llama-server's /completion response (or its last streamed event). */
static cJSON *native_json(job *j, const char *text, size_t n, int done)
{
    cJSON *o = cJSON_CreateObject();
    choice *c = &j->ch[0];
    add_text(o, "content", text, n);
    cJSON_AddArrayToObject(o, "tokens");
    cJSON_AddNumberToObject(o, "id_slot", c->slot >= 0 ? c->slot : j->first_slot);
    cJSON_AddBoolToObject(o, "stop", done);
    if (!done) return o;
    cJSON_AddStringToObject(o, "model", j->srv->model_id);
    cJSON_AddNumberToObject(o, "tokens_predicted", (double)c->n_gen);
    cJSON_AddNumberToObject(o, "tokens_evaluated", (double)j->req.n_prompt[0]);
    cJSON_AddNumberToObject(o, "tokens_cached", (double)j->n_cached);
    cJSON_AddStringToObject(o, "stop_type", c->finish == FIN_WORD ? "word" : c->finish == FIN_STOP ? "eos" : "limit");
    cJSON_AddStringToObject(o, "stopping_word", c->finish == FIN_WORD ? j->req.stop[c->stop_word] : "");
    cJSON_AddBoolToObject(o, "truncated", 0);
    cJSON_AddItemToObject(o, "timings", timings_json(j));
    return o;
}

static cJSON *usage_json(const job *j)
{
    cJSON *u = cJSON_CreateObject(), *d;
    int64_t gen = 0, prompt = 0;
    int i;
    for (i = 0; i < j->n_ch; i++) gen += j->ch[i].n_gen;
    for (i = 0; i < j->req.n_prompts; i++) prompt += (int64_t)j->req.n_prompt[i];
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)prompt);
    cJSON_AddNumberToObject(u, "completion_tokens", (double)gen);
    cJSON_AddNumberToObject(u, "total_tokens", (double)(gen + prompt));
    d = cJSON_AddObjectToObject(u, "prompt_tokens_details");
    cJSON_AddNumberToObject(d, "cached_tokens", (double)j->n_cached);
    return u;
}

static cJSON *response_head(const job *j, const char *object)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", j->id);
    cJSON_AddStringToObject(o, "object", object);
    cJSON_AddNumberToObject(o, "created", (double)j->created);
    cJSON_AddStringToObject(o, "model", j->srv->model_id);
    cJSON_AddStringToObject(o, "system_fingerprint", "swa.h-" "server");
    return o;
}

/* A chat answer's tool calls as OpenAI writes them. */
static void add_calls(cJSON *msg, const swa_chat_msg *m)
{
    cJSON *arr = cJSON_AddArrayToObject(msg, "tool_calls");
    size_t k;
    for (k = 0; k < m->n_calls; k++) {
        cJSON *tc = cJSON_CreateObject(), *fn;
        cJSON_AddItemToArray(arr, tc);
        cJSON_AddStringToObject(tc, "id", m->calls[k].id);
        cJSON_AddStringToObject(tc, "type", "function");
        fn = cJSON_AddObjectToObject(tc, "function");
        cJSON_AddStringToObject(fn, "name", m->calls[k].name);
        cJSON_AddStringToObject(fn, "arguments", m->calls[k].arguments);
    }
}

/* What the chat parser makes of c's text from `sent` to `upto` (and of the end, with end set):
   the delta, or (whole) the message so far. Nothing when memory runs out. */
static void chat_read(choice *c, size_t upto, int end, int whole, swa_chat_msg *m)
{
    memset(m, 0, sizeof *m);
    m->content = m->reasoning = "";
    if ((swa_chat_parser_feed(c->parser, c->text.s ? c->text.s + c->sent : "", upto - c->sent, end ? NULL : m, NULL) != SWA_OK ||
         (end && swa_chat_parser_finish(c->parser, m, NULL) != SWA_OK)) && !whole)
        return;
    if (whole) swa_chat_parser_message(c->parser, m);
}

/* OpenAI's finish_reason of a choice: tool_calls when its answer holds calls, unless the token
   limit cut it (a streamed call may have begun and stayed unfinished). */
static const char *choice_finish(choice *c)
{
    swa_chat_msg m;
    if (c->parser && c->finish != FIN_LENGTH) {
        swa_chat_parser_message(c->parser, &m);
        if (m.n_calls) return "tool_calls";
    }
    return finish_name(c->finish) ? finish_name(c->finish) : "stop";
}

/* A delta's pieces of calls as OpenAI streams them: a call's first piece as its index, id, type
   and name with "arguments": "", what its arguments gained as {"index", "function":
   {"arguments"}}. Those come in the array *more when the delta began a call (for a chunk after
   this one, so a call's head goes out alone), else in d's own. */
static void add_pieces(cJSON *d, const swa_chat_msg *m, cJSON **more)
{
    cJSON *arr = cJSON_AddArrayToObject(d, "tool_calls"), *to = arr;
    int began = 0;
    size_t k;
    for (k = 0; k < m->n_pieces; k++) {
        const swa_tool_call_piece *pc = &m->pieces[k];
        cJSON *tc, *fn;
        if (!pc->id) continue;
        tc = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, tc);
        cJSON_AddNumberToObject(tc, "index", (double)pc->index);
        cJSON_AddStringToObject(tc, "id", pc->id);
        cJSON_AddStringToObject(tc, "type", "function");
        fn = cJSON_AddObjectToObject(tc, "function");
        cJSON_AddStringToObject(fn, "name", pc->name);
        cJSON_AddStringToObject(fn, "arguments", "");
        began = 1;
    }
    for (k = 0; k < m->n_pieces; k++) {
        const swa_tool_call_piece *pc = &m->pieces[k];
        cJSON *tc, *fn;
        if (!pc->arguments_len) continue;
        if (began && to == arr) to = *more = cJSON_CreateArray();
        tc = cJSON_CreateObject();
        cJSON_AddItemToArray(to, tc);
        cJSON_AddNumberToObject(tc, "index", (double)pc->index);
        fn = cJSON_AddObjectToObject(tc, "function");
        add_text(fn, "arguments", pc->arguments, pc->arguments_len);
    }
}

/* A chat chunk's delta: the role first, then reasoning, content and the calls' pieces (*more:
   the arguments of calls it began, for the next chunk). */
static void chat_delta(cJSON *ch, choice *c, size_t upto, int end, cJSON **more)
{
    cJSON *d = cJSON_AddObjectToObject(ch, "delta");
    swa_chat_msg m;
    if (!c->started) cJSON_AddStringToObject(d, "role", "assistant");
    if (!c->parser) {
        if (upto > c->sent || !c->started) add_text(d, "content", c->text.s ? c->text.s + c->sent : "", upto - c->sent);
        return;
    }
    chat_read(c, upto, end, 0, &m);
    if (m.reasoning_len) add_text(d, "reasoning_content", m.reasoning, m.reasoning_len);
    if (m.content_len || !c->started) add_text(d, "content", m.content, m.content_len);
    if (m.n_pieces) add_pieces(d, &m, more);
}

/* A streamed chunk for choice i: its text from `sent` to `upto`, its logprobs, its finish. */
static void stream_chunk(job *j, int i, size_t upto, int with_finish)
{
    choice *c = &j->ch[i];
    int chat = j->req.kind == SRV_CHAT;
    if (is_ollama(j) || is_native(j)) {   /* one choice: its new text */
        const char *t = c->text.s ? c->text.s + c->sent : "";
        c->started = 1;
        if (is_ollama(j) && c->parser) {   /* what became certain, if anything */
            swa_chat_msg m;
            chat_read(c, upto, with_finish && c->finish, 0, &m);
            if (m.content_len || m.reasoning_len || m.n_calls) ollama_out(j, &m, NULL, 0, 0);
        } else if (is_ollama(j)) {
            ollama_out(j, NULL, t, upto - c->sent, 0);
        } else {
            cJSON *o = native_json(j, t, upto - c->sent, 0);
            json_out(&j->out, o, 1);
            cJSON_Delete(o);
        }
        c->sent = upto;
        return;
    }
    cJSON *o = response_head(j, chat ? "chat.completion.chunk" : "text_completion"), *more = NULL;
    cJSON *arr = cJSON_AddArrayToObject(o, "choices"), *ch = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, ch);
    cJSON_AddNumberToObject(ch, "index", i);
    if (chat) {
        chat_delta(ch, c, upto, with_finish && c->finish, &more);
    } else {
        add_text(ch, "text", c->text.s ? c->text.s + c->sent : "", upto - c->sent);
    }
    c->started = 1;
    c->sent = upto;
    if (more) {   /* the calls begun went out with "arguments": ""; their arguments follow */
        cJSON_AddNullToObject(ch, "finish_reason");
        json_out(&j->out, o, 1);
        cJSON_Delete(o);
        o = response_head(j, "chat.completion.chunk");
        arr = cJSON_AddArrayToObject(o, "choices"), ch = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, ch);
        cJSON_AddNumberToObject(ch, "index", i);
        cJSON_AddItemToObject(cJSON_AddObjectToObject(ch, "delta"), "tool_calls", more);
    }
    attach_logprobs(ch, c, chat);
    if (with_finish && c->finish) cJSON_AddStringToObject(ch, "finish_reason", chat ? choice_finish(c) : finish_name(c->finish));
    else cJSON_AddNullToObject(ch, "finish_reason");
    if (with_finish && c->finish && j->n_finished == j->n_ch)   /* the last choice's last chunk, as llama-server's */
        cJSON_AddItemToObject(o, "timings", timings_json(j));
    json_out(&j->out, o, 1);
    cJSON_Delete(o);
}

/* best_of: order prompt g's candidates by their summed log-probability, best first. */
static void rank_candidates(job *j, int g, int *order)
{
    int k, m, n = j->req.best_of;
    for (k = 0; k < n; k++) order[k] = g * n + k;
    for (k = 1; k < n; k++)
        for (m = k; m > 0 && j->ch[order[m]].cum_lp > j->ch[order[m - 1]].cum_lp; m--) {
            int t = order[m];
            order[m] = order[m - 1];
            order[m - 1] = t;
        }
}

/* The OpenAI response of a request that is not streamed: n choices per prompt, indexed
   prompt * n + choice (the best n of best_of candidates). */
static void openai_response(job *j)
{
    int g, k, chat = j->req.kind == SRV_CHAT, order[256];
    cJSON *o = response_head(j, chat ? "chat.completion" : "text_completion");
    cJSON *arr = cJSON_AddArrayToObject(o, "choices");
    for (g = 0; g < j->req.n_prompts; g++) {
        rank_candidates(j, g, order);
        for (k = 0; k < j->req.n_choices; k++) {
            choice *c = &j->ch[order[k]];
            cJSON *ch = cJSON_CreateObject();
            cJSON_AddItemToArray(arr, ch);
            cJSON_AddNumberToObject(ch, "index", g * j->req.n_choices + k);
            if (chat && c->parser) {
                cJSON *m = cJSON_AddObjectToObject(ch, "message");
                swa_chat_msg msg;
                cJSON_AddStringToObject(m, "role", "assistant");
                chat_read(c, c->text.len, 1, 1, &msg);
                if (msg.n_calls && !msg.content_len) cJSON_AddNullToObject(m, "content");
                else add_text(m, "content", msg.content, msg.content_len);
                if (msg.reasoning_len) add_text(m, "reasoning_content", msg.reasoning, msg.reasoning_len);
                if (msg.n_calls) add_calls(m, &msg);
            } else if (chat) {
                cJSON *m = cJSON_AddObjectToObject(ch, "message");
                cJSON_AddStringToObject(m, "role", "assistant");
                add_text(m, "content", c->text.s ? c->text.s : "", c->text.len);
            } else {
                add_text(ch, "text", c->text.s ? c->text.s : "", c->text.len);
            }
            attach_logprobs(ch, c, chat);
            cJSON_AddStringToObject(ch, "finish_reason", chat ? choice_finish(c) : finish_name(c->finish) ? finish_name(c->finish) : "stop");
        }
    }
    cJSON_AddItemToObject(o, "usage", usage_json(j));
    cJSON_AddItemToObject(o, "timings", timings_json(j));   /* llama-server's extension */
    json_out(&j->out, o, 0);
    cJSON_Delete(o);
}

/* The whole response of a request that is not streamed, or the closing events of one that is. */
static void finish_job(job *j)
{
    int chat = j->req.kind == SRV_CHAT;
    choice *c0 = &j->ch[0];
    if (is_ollama(j)) {   /* the last line (streamed) or the whole answer */
        swa_chat_msg m;
        if (j->req.stream) ollama_out(j, NULL, "", 0, 1);
        else if (c0->parser) chat_read(c0, c0->text.len, 1, 1, &m), ollama_out(j, &m, NULL, 0, 1);
        else ollama_out(j, NULL, c0->text.s ? c0->text.s : "", c0->text.len, 1);
        j->status = 200;
    } else if (is_native(j)) {
        cJSON *o = j->req.stream ? native_json(j, "", 0, 1) : native_json(j, c0->text.s ? c0->text.s : "", c0->text.len, 1);
        json_out(&j->out, o, j->req.stream);
        cJSON_Delete(o);
        j->status = 200;
    } else if (j->req.stream) {
        if (j->req.include_usage) {
            cJSON *o = response_head(j, chat ? "chat.completion.chunk" : "text_completion");
            cJSON_AddArrayToObject(o, "choices");
            cJSON_AddItemToObject(o, "usage", usage_json(j));
            json_out(&j->out, o, 1);
            cJSON_Delete(o);
        }
        sb_add(&j->out, "data: [DONE]\n\n", 14);
    } else {
        openai_response(j);
        j->status = 200;
    }
}

/* How much of c's text may be sent: all but a tail that could be the start of a stop string. */
static size_t safe_len(const job *j, const choice *c)
{
    size_t n = c->text.len, hold = 0;
    int k;
    for (k = 0; k < j->req.n_stop; k++) {
        const char *s = j->req.stop[k];
        size_t ls = strlen(s), m;
        for (m = ls - 1 < n ? ls - 1 : n; m > hold; m--)
            if (!memcmp(c->text.s + n - m, s, m)) { hold = m; break; }
    }
    return srv_utf8_complete(c->text.s, n - hold);
}

/* Cut c's text at the first stop string in its new part; 1 if one was found. */
static int cut_at_stop(const job *j, choice *c, size_t before)
{
    size_t best = (size_t)-1;
    int k;
    for (k = 0; k < j->req.n_stop; k++) {
        const char *s = j->req.stop[k];
        size_t ls = strlen(s), from = before >= ls ? before - ls + 1 : 0, i;
        for (i = from; i + ls <= c->text.len && i < best; i++)
            if (!memcmp(c->text.s + i, s, ls)) { best = i; c->stop_word = k; break; }
    }
    if (best == (size_t)-1) return 0;
    c->text.len = best;
    c->text.s[best] = '\0';
    return 1;
}

/* The logprob entries of a token sampled from row: its own and the top alternatives. */
static void add_logprobs(const server *srv, job *j, choice *c, const float *row, int32_t tok, size_t text_offset)
{
    int n = srv->n_vocab, k, top = j->req.top_logprobs, best[SRV_MAX_TOP_LOGPROBS];
    float mx = row[0];
    double sum = 0, lse;
    char piece[256];
    size_t pl;
    cJSON *e;
    for (k = 1; k < n; k++) if (row[k] > mx) mx = row[k];
    for (k = 0; k < n; k++) sum += exp((double)(row[k] - mx));
    lse = (double)mx + log(sum);
    for (k = 0; k < top; k++) best[k] = -1;
    for (k = 0; k < n && top > 0; k++) {   /* insertion into the top list */
        int p = top - 1;
        if (best[p] >= 0 && row[k] <= row[best[p]]) continue;
        while (p > 0 && (best[p - 1] < 0 || row[k] > row[best[p - 1]])) { best[p] = best[p - 1]; p--; }
        best[p] = k;
    }
    pl = swa_token_to_text(srv->vocab, tok, piece, sizeof piece - 1);
    if (pl > sizeof piece - 1) pl = sizeof piece - 1;
    if (j->req.kind == SRV_CHAT) {
        cJSON *alts;
        if (!c->lp) c->lp = cJSON_CreateArray();
        e = cJSON_CreateObject();
        cJSON_AddItemToArray(c->lp, e);
        add_text(e, "token", piece, pl);
        cJSON_AddNumberToObject(e, "logprob", (double)row[tok] - lse);
        cJSON_AddNullToObject(e, "bytes");
        alts = cJSON_AddArrayToObject(e, "top_logprobs");
        for (k = 0; k < top && best[k] >= 0; k++) {
            cJSON *a = cJSON_CreateObject();
            size_t al = swa_token_to_text(srv->vocab, best[k], piece, sizeof piece - 1);
            cJSON_AddItemToArray(alts, a);
            add_text(a, "token", piece, al < sizeof piece - 1 ? al : sizeof piece - 1);
            cJSON_AddNumberToObject(a, "logprob", (double)row[best[k]] - lse);
            cJSON_AddNullToObject(a, "bytes");
        }
    } else {
        cJSON *alts;
        if (!c->lp) {
            c->lp = cJSON_CreateObject();
            cJSON_AddArrayToObject(c->lp, "tokens");
            cJSON_AddArrayToObject(c->lp, "token_logprobs");
            cJSON_AddArrayToObject(c->lp, "top_logprobs");
            cJSON_AddArrayToObject(c->lp, "text_offset");
        }
        {
            char *t = clean_utf8(piece, pl);
            cJSON_AddItemToArray(cJSON_GetObjectItem(c->lp, "tokens"), cJSON_CreateString(t ? t : ""));
            free(t);
        }
        cJSON_AddItemToArray(cJSON_GetObjectItem(c->lp, "token_logprobs"), cJSON_CreateNumber((double)row[tok] - lse));
        alts = cJSON_CreateObject();
        for (k = 0; k < top && best[k] >= 0; k++) {
            size_t al = swa_token_to_text(srv->vocab, best[k], piece, sizeof piece - 1);
            char *t = clean_utf8(piece, al < sizeof piece - 1 ? al : sizeof piece - 1);
            if (t && !cJSON_GetObjectItemCaseSensitive(alts, t)) cJSON_AddNumberToObject(alts, t, (double)row[best[k]] - lse);
            free(t);
        }
        cJSON_AddItemToArray(cJSON_GetObjectItem(c->lp, "top_logprobs"), alts);
        cJSON_AddItemToArray(cJSON_GetObjectItem(c->lp, "text_offset"), cJSON_CreateNumber((double)text_offset));
    }
}

/* ---- the scheduler ---- */

static void slot_hist_push(slot *s, int32_t t)
{
    int32_t *h = (int32_t *)srv_grow(s->hist, &s->cap, s->n_hist + 1, sizeof *h);
    if (!h) { s->n_hist = 0; return; }   /* forget: the next request starts afresh */
    s->hist = h;
    s->hist[s->n_hist++] = t;
}

/* The scheduler's scratch: a step's batch (n_batch prompt tokens and a token for each slot) and
   the logits rows it gives back. 0 when out of memory. */
static int scratch_alloc(server *srv)
{
    srv->b_cap = (size_t)srv->o.n_batch + (size_t)srv->n_slots;
    srv->b_tok = (int32_t *)malloc(srv->b_cap * sizeof(int32_t));
    srv->b_seq = (int32_t *)malloc(srv->b_cap * sizeof(int32_t));
    srv->b_logits = (int8_t *)malloc(srv->b_cap);
    srv->b_slot = (int *)malloc(srv->b_cap * sizeof(int));
    srv->rows = (float *)malloc((size_t)(2 * srv->n_slots) * (size_t)srv->n_vocab * sizeof(float));
    return srv->b_tok && srv->b_seq && srv->b_logits && srv->b_slot && srv->rows;
}

static void scratch_free(server *srv)
{
    free(srv->b_tok);
    free(srv->b_seq);
    free(srv->b_logits);
    free(srv->b_slot);
    free(srv->rows);
}

/* Row n of the step's batch: token t of slot i, with its logits or without. */
static void batch_put(server *srv, size_t n, int i, int32_t t, int logits)
{
    srv->b_tok[n] = t;
    srv->b_seq[n] = (int32_t)i;
    srv->b_logits[n] = (int8_t)logits;
    srv->b_slot[n] = i;
}

static void slot_forget(server *srv, int i)
{
    swa_seq_reset(srv->ctx, i, NULL);
    srv->slots[i].n_hist = 0;
}

/* The job is over (finished, cancelled or failed): its slots go back to idle. */
static void job_end(server *srv, job *j, int status, const char *msg)
{
    int i;
    for (i = 0; i < j->n_ch; i++) {
        int s = j->ch[i].slot;
        if (s < 0) continue;
        /* whatever the sequence holds stays usable: its history says what that is */
        srv->slots[s].job = NULL;
        srv->slots[s].state = SLOT_IDLE;
        srv->slots[s].last_used = now_s();
        j->ch[i].slot = -1;
        pthread_mutex_lock(&srv->mu);
        srv->n_busy--;
        pthread_mutex_unlock(&srv->mu);
    }
    pthread_mutex_lock(&j->mu);
    if (status != 200) {
        cJSON *e;
        if (is_ollama(j)) {   /* ollama's shape: {"error": "..."}, a line of its own in a stream */
            e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "error", msg);
        } else {
            e = error_json(status, "server_error", NULL, msg);
        }
        if (!j->req.stream) j->out.len = 0;
        json_out(&j->out, e, j->req.stream && !is_ollama(j));
        if (is_ollama(j) && j->req.stream) sb_add(&j->out, "\n", 1);
        cJSON_Delete(e);
        /* a stream already under way: the error event, then the end */
        if (j->req.stream && (j->req.kind == SRV_CHAT || j->req.kind == SRV_COMPLETION)) sb_add(&j->out, "data: [DONE]\n\n", 14);
        j->status = status;
    } else if (!LOAD(j->cancelled)) {
        finish_job(j);
    }
    j->done = 1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    pthread_mutex_lock(&srv->mu);
    srv->m_requests++;
    if (status != 200) srv->m_errors++;
    pthread_mutex_unlock(&srv->mu);
    job_release(j);
}

/* Choice c has its finish: what the decoder holds goes to its text, its slot back to idle. */
static void finish_choice(server *srv, job *j, choice *c)
{
    char text[512];
    slot *s = &srv->slots[c->slot];
    if (c->finish == FIN_LENGTH) sb_add(&c->text, text, swa_decoder_flush(&c->dec, text, sizeof text));
    j->n_finished++;
    s->state = SLOT_IDLE;            /* the sequence holds what it evaluated: reusable */
    s->job = NULL;
    s->last_used = now_s();
    pthread_mutex_lock(&srv->mu);
    srv->n_busy--;
    pthread_mutex_unlock(&srv->mu);
    c->slot = -1;
}

/* log p(tok) under row's softmax: best_of ranks its candidates by the sum. */
static double token_logprob(const float *row, int n_vocab, int32_t tok)
{
    float mx = row[0];
    double sum = 0;
    int k;
    for (k = 1; k < n_vocab; k++) if (row[k] > mx) mx = row[k];
    for (k = 0; k < n_vocab; k++) sum += exp((double)(row[k] - mx));
    return (double)(row[tok] - mx) - log(sum);
}

/* A sampled token for choice i of j: its text, stop strings, limits. */
static void take_token(server *srv, job *j, int i, const float *row, int32_t tok)
{
    choice *c = &j->ch[i];
    slot *s = &srv->slots[c->slot];
    char text[512];
    size_t before = c->text.len, n;
    int64_t pos = (int64_t)s->n_hist;   /* where tok would be evaluated */
    if (!j->t_first) j->t_first = now_s();
    if (!j->req.ignore_eos && (tok == srv->eos || tok == srv->eot || (srv->eot < 0 && swa_vocab_is_eog(srv->vocab, tok)))) {
        c->finish = FIN_STOP;
    } else {
        if (j->req.logprobs) add_logprobs(srv, j, c, row, tok, c->text.len);
        if (j->req.best_of > j->req.n_choices) c->cum_lp += token_logprob(row, srv->n_vocab, tok);
        n = swa_decoder_push(&c->dec, tok, text, sizeof text);
        pthread_mutex_lock(&j->mu);   /* the access log may read the count of a request its client left */
        sb_add(&c->text, text, n);
        c->n_gen++;
        pthread_mutex_unlock(&j->mu);
        if (j->req.n_stop && cut_at_stop(j, c, before)) c->finish = FIN_WORD;
        else if ((j->req.max_tokens >= 0 && c->n_gen >= j->req.max_tokens) || pos + 1 >= srv->lim.n_ctx)
            c->finish = FIN_LENGTH;
    }
    if (c->finish) {
        finish_choice(srv, j, c);
    } else {
        s->next = tok;
        s->state = SLOT_GEN;
    }
    if (j->req.stream) {
        pthread_mutex_lock(&j->mu);
        if (c->finish) stream_chunk(j, i, c->text.len, 1);
        else {
            size_t upto = safe_len(j, c);
            if (upto > c->sent || !c->started || c->lp) stream_chunk(j, i, upto, 0);
        }
        pthread_cond_broadcast(&j->cv);
        pthread_mutex_unlock(&j->mu);
    }
}

static size_t common_prefix(const int32_t *a, size_t na, const int32_t *b, size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i]) i++;
    return i;
}

/* ---- the snapshot cache's hooks (server_cache.c) ---- */

/* Before slot i takes another prompt: keep what its sequence holds, unless the prompt goes on from all of it. */
static void cache_keep(server *srv, int i, const int32_t *prompt, size_t n_prompt)
{
    slot *s = &srv->slots[i];
    if (s->n_hist && common_prefix(s->hist, s->n_hist, prompt, n_prompt) < s->n_hist)
        srv_cache_save(srv->cache, srv->ctx, i, s->hist, s->n_hist);
}

/* In reuse_prefix: restore into dst a longer prefix than the slots' `best`, if the cache has one. */
static size_t cache_restore(server *srv, int dst, const int32_t *prompt, size_t want, size_t best)
{
    slot *d = &srv->slots[dst];
    size_t got = srv_cache_restore(srv->cache, srv->ctx, dst, prompt, want, best), i;
    if (got || swa_seq_pos(srv->ctx, dst) != (int64_t)d->n_hist) d->n_hist = 0;   /* restored, or lost */
    for (i = 0; i < got; i++) slot_hist_push(d, prompt[i]);
    if (got && d->n_hist != got) slot_forget(srv, dst);
    return got && d->n_hist == got ? got : 0;
}

/* Where to keep a snapshot on the way through dst's prompt: the longest prefix it shares with a
   cached or held sequence (a branch point: a third prompt like them starts there), or `head`
   (a chat's messages before the last: a system prompt, the conversation so far), when that is
   at least SRV_CACHE_MIN_GAIN tokens past what dst starts from. */
enum { SRV_CACHE_MIN_GAIN = 32 };
static void cache_plan(server *srv, int dst, const int32_t *prompt, size_t n_prompt, size_t head, size_t reused)
{
    size_t want = n_prompt - 1, at = srv_cache_shared(srv->cache, prompt, want), i;
    for (i = 0; srv->cache && i < (size_t)srv->n_slots; i++) {
        size_t cp = (int)i == dst ? 0 : common_prefix(srv->slots[i].hist, srv->slots[i].n_hist, prompt, want);
        if (cp > at) at = cp;
    }
    if (head > at && head <= want) at = head;
    srv_cache_mark(srv->cache, dst, at >= reused + SRV_CACHE_MIN_GAIN ? at : 0);
}

/* After a prompt: its end is kept, for the next turn of its chat: the rings may not rewind to it
   once a reply follows, and the reply, tokenized again, may differ from the tokens sampled. */
static void cache_prompt_end(server *srv, int i)
{
    srv_cache_save(srv->cache, srv->ctx, i, srv->slots[i].hist, srv->slots[i].n_hist);
}

/* Prepare slot `dst` for a prompt: reuse what some slot holds of it. A candidate is any slot whose
   sequence shares a prefix with the prompt and can be rewound to it (the windowed layers' rings
   allow swa_seq_max_rewind steps back; a full-attention layer any), or whose snapshot holds a
   prefix of the prompt. The best is copied into dst (or is dst) and rewound, or its snapshot
   loaded. Returns the prompt tokens that need no evaluation. */
static size_t reuse_prefix(server *srv, int dst, const int32_t *prompt, size_t n_prompt)
{
    size_t best = 0, i, want = n_prompt - 1;   /* the last prompt token is always evaluated, for its logits */
    int from = -1, snap = 0;
    slot *d = &srv->slots[dst];
    for (i = 0; i < (size_t)srv->n_slots; i++) {
        slot *s = &srv->slots[i];
        size_t cp;
        if (s->snap_n && s->snap_n <= want && s->snap_n > best &&
            common_prefix(s->snap_tok, s->snap_n, prompt, want) == s->snap_n) {
            best = s->snap_n;
            from = (int)i;
            snap = 1;
        }
        /* dst itself (marked for this prompt), an idle slot, or one generating */
        if ((int)i != dst && s->state != SLOT_IDLE && s->state != SLOT_GEN) continue;
        if (s->n_hist != (size_t)swa_seq_pos(srv->ctx, (int32_t)i)) continue;   /* a sequence we lost track of */
        cp = common_prefix(s->hist, s->n_hist, prompt, want);
        /* a generating slot's next token is not evaluated yet: its history is its position */
        if ((int64_t)(s->n_hist - cp) > swa_seq_max_rewind(srv->ctx, (int32_t)i)) continue;
        if (cp > best || (cp == best && cp > 0 && (int)i == dst && !snap)) { best = cp; from = (int)i; snap = 0; }
    }
    if ((i = cache_restore(srv, dst, prompt, want, best)) > 0) return i;
    if (from < 0 || best == 0) {
        if (d->n_hist || swa_seq_pos(srv->ctx, dst) != 0) slot_forget(srv, dst);
        return 0;
    }
    if (snap) {
        slot *f = &srv->slots[from];
        if (swa_state_load(srv->ctx, dst, f->snap, f->snap_size, NULL) != SWA_OK) { slot_forget(srv, dst); return 0; }
        d->n_hist = 0;
        for (i = 0; i < best; i++) slot_hist_push(d, f->snap_tok[i]);
        return d->n_hist == best ? best : 0;
    }
    if (from != dst) {
        slot *f = &srv->slots[from];
        if (swa_seq_copy(srv->ctx, from, dst, NULL) != SWA_OK) { slot_forget(srv, dst); return 0; }
        d->n_hist = 0;
        for (i = 0; i < f->n_hist; i++) slot_hist_push(d, f->hist[i]);
    }
    if (swa_seq_rewind(srv->ctx, dst, (int64_t)(d->n_hist - best), NULL) != SWA_OK) {
        slot_forget(srv, dst);
        return 0;
    }
    d->n_hist = best;
    return best;
}

/* After a prompt: where the rings could not go back to its end after a reply, keep a snapshot. */
static void snapshot_prompt(server *srv, int i)
{
    slot *s = &srv->slots[i];
    size_t need, written = 0;
    s->snap_n = 0;
    if (swa_seq_max_rewind(srv->ctx, i) >= (int64_t)s->n_hist) return;   /* rewinding gets back here */
    need = swa_state_size(srv->ctx, i);
    if (need > s->snap_cap) {
        void *p = realloc(s->snap, need);
        if (!p) return;
        s->snap = p;
        s->snap_cap = need;
    }
    if (s->n_hist > s->snap_tok_cap) {
        int32_t *t = (int32_t *)realloc(s->snap_tok, s->n_hist * sizeof *t);
        if (!t) return;
        s->snap_tok = t;
        s->snap_tok_cap = s->n_hist;
    }
    if (swa_state_save(srv->ctx, i, s->snap, s->snap_cap, &written, NULL) != SWA_OK) return;
    s->snap_size = written;
    memcpy(s->snap_tok, s->hist, s->n_hist * sizeof *s->hist);
    s->snap_n = s->n_hist;
}

/* The idle slot for a new prompt: the one with the longest common prefix, else the one idle the longest. */
static int pick_slot(server *srv, const int32_t *prompt, size_t n_prompt, const int *taken)
{
    int i, best = -1;
    size_t best_cp = 0;
    double oldest = 0;
    for (i = 0; i < srv->n_slots; i++) {
        size_t cp;
        if (srv->slots[i].state != SLOT_IDLE || taken[i]) continue;
        cp = common_prefix(srv->slots[i].hist, srv->slots[i].n_hist, prompt, n_prompt);
        if (best < 0 || cp > best_cp || (cp == best_cp && srv->slots[i].last_used < oldest)) {
            best = i;
            best_cp = cp;
            oldest = srv->slots[i].last_used;
        }
    }
    return best;
}

/* Start j in free slots: the first choice of each prompt reads it, the others wait to be forked from it. */
static int start_job(server *srv, job *j)
{
    int *taken = (int *)calloc((size_t)srv->n_slots, sizeof(int)), i;
    if (!taken) return 0;
    for (i = 0; i < j->n_ch; i++) {
        const srv_request *r = &j->req;
        int g = j->ch[i].group, lead = i % r->best_of == 0;
        int s = j->pin >= 0 ? j->pin : pick_slot(srv, r->prompt[g], r->n_prompt[g], taken);
        taken[s] = 1;
        j->ch[i].slot = s;
        if (i == 0) j->first_slot = s;
        srv->slots[s].job = j;
        srv->slots[s].choice = i;
        srv->slots[s].state = lead ? SLOT_PREFILL : SLOT_FORK;
    }
    free(taken);
    for (i = 0; i < j->n_ch; i++)   /* a draft model follows one text: this request's from its start */
        if (srv->slots[j->ch[i].slot].drafter) swa_drafter_reset(srv->slots[j->ch[i].slot].drafter);
    for (i = 0; i < j->n_ch; i++) cache_keep(srv, j->ch[i].slot, j->req.prompt[j->ch[i].group], j->req.n_prompt[j->ch[i].group]);
    for (i = 0; i < j->n_ch; i += j->req.best_of) {
        int s = j->ch[i].slot, g = j->ch[i].group;
        size_t reused = 0;
        if (j->req.cache_prompt) reused = reuse_prefix(srv, s, j->req.prompt[g], j->req.n_prompt[g]);
        else slot_forget(srv, s);
        srv->slots[s].done = reused;
        cache_plan(srv, s, j->req.prompt[g], j->req.n_prompt[g], g == 0 ? j->req.n_head : 0, reused);
        j->n_cached += (int64_t)reused;
        pthread_mutex_lock(&srv->mu);
        srv->m_cached_tokens += reused;
        pthread_mutex_unlock(&srv->mu);
    }
    return 1;
}

/* base64 of n bytes, as OpenAI's encoding_format "base64" sends the little-endian floats. */
static char *base64(const unsigned char *p, size_t n)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = (char *)malloc(4 * ((n + 2) / 3) + 1), *q = o;
    size_t i;
    if (!o) return NULL;
    for (i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        *q++ = a[v >> 18 & 63];
        *q++ = a[v >> 12 & 63];
        *q++ = i + 1 < n ? a[v >> 6 & 63] : '=';
        *q++ = i + 2 < n ? a[v & 63] : '=';
    }
    *q = '\0';
    return o;
}

/* One input's vector, unit length, on sequence seq: the mean, the last token's, or the first's. */
static swa_status embed_one(server *srv, int seq, const int32_t *tok, size_t n, float *out, swa_error *err)
{
    int32_t pooling = srv->pooling == POOL_CLS ? SWA_POOL_CLS : srv->pooling == POOL_LAST ? SWA_POOL_LAST : SWA_POOL_MEAN;
    return swa_ctx_embed(srv->ctx, seq, tok, n, pooling, 1, out, err);
}

/* An embeddings job, on a free slot's sequence (which then forgets what it held): the response in
   the shape of the endpoint that asked. */
static void run_embed(server *srv, job *j, int seq)
{
    int d = swa_model_hparams(srv->model)->n_embd, i, k;
    float *v = (float *)malloc((size_t)d * sizeof *v);
    cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, j->embed == EMB_OPENAI ? "data" : "embeddings");
    swa_error err;
    int64_t total = 0;
    if (!v) { cJSON_Delete(o); job_end(srv, j, 500, "out of memory"); return; }
    cache_keep(srv, seq, NULL, 0);
    for (i = 0; i < j->ereq.n; i++) {
        cJSON *e, *vec;
        if (embed_one(srv, seq, j->ereq.prompt[i], j->ereq.n_prompt[i], v, &err) != SWA_OK) {
            free(v);
            cJSON_Delete(o);
            slot_forget(srv, seq);
            pthread_mutex_lock(&srv->mu);
            srv->n_busy--;
            pthread_mutex_unlock(&srv->mu);
            job_end(srv, j, 500, err.msg);
            return;
        }
        total += (int64_t)j->ereq.n_prompt[i];
        if (j->embed != EMB_OPENAI) vec = cJSON_CreateArray(), cJSON_AddItemToArray(arr, vec);
        else {
            e = cJSON_CreateObject();
            cJSON_AddItemToArray(arr, e);
            cJSON_AddStringToObject(e, "object", "embedding");
            cJSON_AddNumberToObject(e, "index", i);
            if (j->ereq.base64) {
                char *b = base64((const unsigned char *)v, (size_t)d * sizeof *v);
                cJSON_AddStringToObject(e, "embedding", b ? b : "");
                free(b);
                continue;
            }
            vec = cJSON_AddArrayToObject(e, "embedding");
        }
        for (k = 0; k < d; k++) cJSON_AddItemToArray(vec, cJSON_CreateNumber((double)v[k]));
    }
    free(v);
    slot_forget(srv, seq);
    if (j->embed == EMB_OPENAI) {
        cJSON *u = cJSON_AddObjectToObject(o, "usage");
        cJSON_AddStringToObject(o, "object", "list");
        cJSON_AddStringToObject(o, "model", srv->model_id);
        cJSON_AddNumberToObject(u, "prompt_tokens", (double)total);
        cJSON_AddNumberToObject(u, "total_tokens", (double)total);
    } else if (j->embed == EMB_OLLAMA) {
        cJSON_AddStringToObject(o, "model", srv->model_id);
        cJSON_AddNumberToObject(o, "prompt_eval_count", (double)total);
    }
    pthread_mutex_lock(&j->mu);
    json_out(&j->out, o, 0);
    j->status = 200;
    j->done = 1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    cJSON_Delete(o);
    pthread_mutex_lock(&srv->mu);
    srv->n_busy--;
    srv->m_requests++;
    pthread_mutex_unlock(&srv->mu);
    job_release(j);
}

/* ---- slot actions: llama-server's POST /slots/{id}?action=save|restore|erase ----

   A slot file holds a header (SLOT_HEAD bytes: "swa-slot", the version, the token count, the
   snapshot's size, an FNV-1a checksum of the rest), the slot's tokens (little-endian int32) and
   the library's snapshot of its sequence (swa_state_save: its own checksum, the model's and the
   ring layout). Restoring checks all of it before the slot changes. The scheduler runs an action
   when its slot is idle; one whose slot is busy waits, as llama-server defers it. */

enum { SLOT_HEAD = 40, SLOT_VERSION = 1 };
static const char slot_magic[8] = {'s', 'w', 'a', '-', 's', 'l', 'o', 't'};

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    int i;
    for (i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    int i;
    for (i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* The action's answer: o (freed here) with its status; the scheduler's reference dropped. */
static void op_answer(server *srv, job *j, int status, cJSON *o)
{
    pthread_mutex_lock(&j->mu);
    json_out(&j->out, o, 0);
    j->status = status;
    j->done = 1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    cJSON_Delete(o);
    pthread_mutex_lock(&srv->mu);
    srv->m_requests++;
    if (status != 200) srv->m_errors++;
    pthread_mutex_unlock(&srv->mu);
    job_release(j);
}

static void op_fail(server *srv, job *j, int status, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    cJSON *e;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    e = error_json(status, status == 400 ? "invalid_request_error" : status == 503 ? "unavailable_error" : "server_error", NULL, msg);
    cJSON_AddNumberToObject(cJSON_GetObjectItem(e, "error"), "status", status);   /* as send_error writes it */
    op_answer(srv, j, status, e);
}

/* DIR/NAME (malloc'd), with a suffix. */
static char *slot_path(const char *dir, const char *name, const char *suffix)
{
    size_t n = strlen(dir) + strlen(name) + strlen(suffix) + 2;
    char *p = (char *)malloc(n);
    if (p) snprintf(p, n, "%s/%s%s", dir, name, suffix);
    return p;
}

/* n bytes to path through a temporary file beside it, flushed to the disk and renamed over it:
   a crash leaves the old file or the new one, never half of one. 0, or -1 with errno. */
static int write_whole(const char *path, const void *p, size_t n)
{
    char *tmp = (char *)malloc(strlen(path) + 5);
    FILE *f;
    int ok, e;
    if (!tmp) { errno = ENOMEM; return -1; }
    sprintf(tmp, "%s.tmp", path);
    if (!(f = fopen(tmp, "wb"))) { e = errno; free(tmp); errno = e; return -1; }
    ok = fwrite(p, 1, n, f) == n && fflush(f) == 0 && fsync(fileno(f)) == 0;
    e = errno;
    if (fclose(f) != 0 && ok) ok = 0, e = errno;
    if (ok && rename(tmp, path) != 0) ok = 0, e = errno;
    if (!ok) unlink(tmp);
    free(tmp);
    errno = e;
    return ok ? 0 : -1;
}

/* A regular file of at most cap bytes, whole, in a malloc'd buffer; NULL with errno. */
static unsigned char *read_whole(const char *path, size_t cap, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *p = NULL;
    struct stat st;
    int e = 0;
    if (!f) return NULL;
    if (fstat(fileno(f), &st) != 0) e = errno;
    else if (!S_ISREG(st.st_mode)) e = EISDIR;
    else if ((uint64_t)st.st_size > cap) e = EFBIG;
    else if (!(p = (unsigned char *)malloc((size_t)st.st_size + 1))) e = ENOMEM;
    else if ((*n = fread(p, 1, (size_t)st.st_size, f)) != (size_t)st.st_size) { free(p); p = NULL; e = EIO; }
    fclose(f);
    errno = e;
    return p;
}

/* Slot i in a file at path: 0 with its size in *bytes, or -1 with msg. */
static int slot_write(server *srv, int i, const char *path, size_t *bytes, char *msg, size_t cap)
{
    slot *s = &srv->slots[i];
    size_t snap = swa_state_size(srv->ctx, i), head = SLOT_HEAD + 4 * s->n_hist, written = 0, k;
    unsigned char *buf;
    swa_error err;
    int rc = -1;
    if (s->n_hist != (size_t)swa_seq_pos(srv->ctx, i)) { snprintf(msg, cap, "its tokens are not known"); return -1; }
    if (!(buf = (unsigned char *)malloc(head + snap))) { snprintf(msg, cap, "out of memory"); return -1; }
    if (swa_state_save(srv->ctx, i, buf + head, snap, &written, &err) != SWA_OK) {
        snprintf(msg, cap, "%s", err.msg);
    } else {
        memcpy(buf, slot_magic, 8);
        put_le(buf + 8, SLOT_VERSION, 4);
        put_le(buf + 12, 0, 4);
        put_le(buf + 16, s->n_hist, 8);
        put_le(buf + 24, written, 8);
        for (k = 0; k < s->n_hist; k++) put_le(buf + SLOT_HEAD + 4 * k, (uint32_t)s->hist[k], 4);
        put_le(buf + 32, fnv1a(buf + SLOT_HEAD, head - SLOT_HEAD + written), 8);
        if (write_whole(path, buf, head + written) != 0) snprintf(msg, cap, "%s", strerror(errno));
        else *bytes = head + written, rc = 0;
    }
    free(buf);
    return rc;
}

static void op_save(server *srv, job *j, double t0)
{
    int i = j->first_slot;
    char *path = slot_path(srv->o.slot_save_path, j->op_file, ""), msg[320];
    size_t bytes = 0;
    cJSON *o, *t;
    if (!path) { op_fail(srv, j, 500, "out of memory"); return; }
    if (slot_write(srv, i, path, &bytes, msg, sizeof msg) != 0) {
        free(path);
        op_fail(srv, j, 500, "slot %d could not be saved to %s: %s", i, j->op_file, msg);
        return;
    }
    free(path);
    o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id_slot", i);
    cJSON_AddStringToObject(o, "filename", j->op_file);
    cJSON_AddNumberToObject(o, "n_saved", (double)srv->slots[i].n_hist);
    cJSON_AddNumberToObject(o, "n_written", (double)bytes);
    t = cJSON_AddObjectToObject(o, "timings");
    cJSON_AddNumberToObject(t, "save_ms", 1e3 * (now_s() - t0));
    op_answer(srv, j, 200, o);
}

/* A slot file's tokens, the file checked whole but for its snapshot (which swa_state_load
   checks), and where the snapshot starts: NULL with msg. */
static int32_t *slot_file_tokens(const server *srv, const unsigned char *p, size_t size, size_t *n, size_t *snap_at,
                                 char *msg, size_t cap)
{
    uint64_t nt, ns, v;
    int32_t *tok;
    size_t k;
    if (size < SLOT_HEAD || memcmp(p, slot_magic, 8)) { snprintf(msg, cap, "it is not a swa-server slot file"); return NULL; }
    if ((v = get_le(p + 8, 4)) != SLOT_VERSION) {
        snprintf(msg, cap, "it is a slot file of version %llu; this server reads version %d", (unsigned long long)v, SLOT_VERSION);
        return NULL;
    }
    nt = get_le(p + 16, 8);
    ns = get_le(p + 24, 8);
    if (nt > (uint64_t)srv->lim.n_ctx) {
        snprintf(msg, cap, "it holds %llu tokens, and a slot here holds at most %d (-c)", (unsigned long long)nt, srv->lim.n_ctx);
        return NULL;
    }
    if (4 * nt > size - SLOT_HEAD || ns != size - SLOT_HEAD - 4 * nt) {
        snprintf(msg, cap, "it is truncated or damaged: %zu bytes, which do not hold the %llu tokens and %llu-byte snapshot "
                 "its header announces", size, (unsigned long long)nt, (unsigned long long)ns);
        return NULL;
    }
    if (get_le(p + 32, 8) != fnv1a(p + SLOT_HEAD, size - SLOT_HEAD)) {
        snprintf(msg, cap, "it is damaged: its checksum does not match its contents");
        return NULL;
    }
    if (!(tok = (int32_t *)calloc((size_t)nt + 1, sizeof *tok))) { snprintf(msg, cap, "out of memory"); return NULL; }
    for (k = 0; k < nt; k++) {
        if ((v = get_le(p + SLOT_HEAD + 4 * k, 4)) >= (uint64_t)srv->n_vocab) {
            snprintf(msg, cap, "token %zu (%llu) is outside this model's vocabulary", k, (unsigned long long)v);
            free(tok);
            return NULL;
        }
        tok[k] = (int32_t)v;
    }
    *n = (size_t)nt;
    *snap_at = SLOT_HEAD + 4 * (size_t)nt;
    return tok;
}

/* Everything is checked before the slot changes: a refused file leaves it as it was. */
static void op_restore(server *srv, job *j, double t0)
{
    int i = j->first_slot;
    slot *s = &srv->slots[i];
    char *path = slot_path(srv->o.slot_save_path, j->op_file, ""), msg[320];
    size_t size = 0, n = 0, at = 0, k;
    unsigned char *p = path ? read_whole(path, (size_t)1 << 31, &size) : NULL;
    int32_t *tok;
    swa_error err;
    cJSON *o, *t;
    free(path);
    if (!p) { op_fail(srv, j, 400, "cannot read %s: %s", j->op_file, strerror(errno)); return; }
    if (!(tok = slot_file_tokens(srv, p, size, &n, &at, msg, sizeof msg))) {
        free(p);
        op_fail(srv, j, 400, "cannot restore %s: %s", j->op_file, msg);
        return;
    }
    cache_keep(srv, i, tok, n);   /* what the slot held goes to the snapshot cache, as when a prompt takes it */
    if (swa_state_load(srv->ctx, i, p + at, size - at, &err) != SWA_OK) {
        free(p);
        free(tok);
        op_fail(srv, j, 400, "cannot restore %s: %s", j->op_file, err.msg);
        return;
    }
    free(p);
    s->n_hist = 0;
    for (k = 0; k < n; k++) slot_hist_push(s, tok[k]);
    free(tok);
    if (swa_seq_pos(srv->ctx, i) != (int64_t)n || s->n_hist != n) {
        slot_forget(srv, i);
        op_fail(srv, j, 400, "cannot restore %s: its tokens do not match its snapshot (slot %d is now empty)", j->op_file, i);
        return;
    }
    s->last_used = now_s();
    o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id_slot", i);
    cJSON_AddStringToObject(o, "filename", j->op_file);
    cJSON_AddNumberToObject(o, "n_restored", (double)n);
    cJSON_AddNumberToObject(o, "n_read", (double)size);
    t = cJSON_AddObjectToObject(o, "timings");
    cJSON_AddNumberToObject(t, "restore_ms", 1e3 * (now_s() - t0));
    op_answer(srv, j, 200, o);
}

static void op_erase(server *srv, job *j)
{
    int i = j->first_slot;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id_slot", i);
    cJSON_AddNumberToObject(o, "n_erased", (double)srv->slots[i].n_hist);
    slot_forget(srv, i);
    srv->slots[i].snap_n = 0;   /* and the snapshot of its last prompt: nothing of it stays reusable */
    op_answer(srv, j, 200, o);
}

static void op_run(server *srv, job *j)
{
    double t0 = now_s();
    if (LOAD(j->cancelled)) op_fail(srv, j, 499, "the client went away");
    else if (j->op == OP_SAVE) op_save(srv, j, t0);
    else if (j->op == OP_RESTORE) op_restore(srv, j, t0);
    else op_erase(srv, j);
}

/* An action leaving the queue: run now if its slot is idle, else wait for it (in arrival order). */
static void op_start(server *srv, job *j)
{
    job **pp = &srv->ops_waiting;
    if (srv->slots[j->first_slot].state == SLOT_IDLE) { op_run(srv, j); return; }
    while (*pp) pp = &(*pp)->next;
    j->next = NULL;
    *pp = j;
}

/* Before each step: the waiting actions whose slot is idle run, those whose client left end. */
static void ops_run_waiting(server *srv)
{
    job **pp = &srv->ops_waiting;
    while (*pp) {
        job *j = *pp;
        if (srv->slots[j->first_slot].state != SLOT_IDLE && !LOAD(j->cancelled)) { pp = &j->next; continue; }
        *pp = j->next;
        op_run(srv, j);
    }
}

/* The queued job to admit next (srv->mu held), NULL for none: the first that can start (its slots
   free, or the slot it named idle; or cancelled, to be ended), passing over only those that wait
   for the slot they named, so that the others keep their order. *prev: the job before it. */
static job *next_admissible(server *srv, job **prev)
{
    job *j, *p = NULL;
    int n_free = srv->n_slots - srv->n_busy;
    for (j = srv->queue_head; j; p = j, j = j->next) {
        if (LOAD(j->cancelled)) break;
        if (j->pin >= 0 ? srv->slots[j->pin].state == SLOT_IDLE && n_free > 0 : job_slots(j) <= n_free) break;
        if (j->pin < 0) return NULL;
    }
    *prev = p;
    return j;
}

/* Move queued jobs into slots while there are enough free; drop cancelled ones. */
static void admit(server *srv)
{
    for (;;) {
        job *j, *prev;
        pthread_mutex_lock(&srv->mu);
        if (!(j = next_admissible(srv, &prev))) { pthread_mutex_unlock(&srv->mu); return; }
        if (prev) prev->next = j->next;
        else srv->queue_head = j->next;
        if (srv->queue_tail == j) srv->queue_tail = prev;
        srv->n_queued--;
        if (!LOAD(j->cancelled)) srv->n_busy += job_slots(j);
        pthread_mutex_unlock(&srv->mu);
        if (LOAD(j->cancelled)) job_end(srv, j, 499, "the client went away");
        else if (j->op) op_start(srv, j);
        else if (j->embed) {
            int seq, *none = (int *)calloc((size_t)srv->n_slots, sizeof(int));
            seq = none ? pick_slot(srv, NULL, 0, none) : -1;
            free(none);
            if (seq < 0) { pthread_mutex_lock(&srv->mu); srv->n_busy--; pthread_mutex_unlock(&srv->mu); job_end(srv, j, 500, "no slot"); }
            else run_embed(srv, j, seq);
        } else if (!start_job(srv, j)) {
            pthread_mutex_lock(&srv->mu);
            srv->n_busy -= j->n_ch;
            pthread_mutex_unlock(&srv->mu);
            job_end(srv, j, 500, "out of memory starting the request");
        }
    }
}

/* Prompt g of j is evaluated (its last logits in row): fork its other choices, sample each (or,
   with max_tokens 0, finish each: the prompt is in the slot's cache, nothing is generated). */
static void prompt_done(server *srv, job *j, int g, const float *row)
{
    int first = g * j->req.best_of, lead = j->ch[first].slot, i;
    snapshot_prompt(srv, lead);
    cache_prompt_end(srv, lead);
    for (i = first + 1; i < first + j->req.best_of; i++) {
        int s = j->ch[i].slot;
        size_t k;
        if (swa_seq_copy(srv->ctx, lead, s, NULL) != SWA_OK) { job_end(srv, j, 500, "could not fork the sequence"); return; }
        srv->slots[s].n_hist = 0;
        for (k = 0; k < srv->slots[lead].n_hist; k++) slot_hist_push(&srv->slots[s], srv->slots[lead].hist[k]);
    }
    for (i = first; i < first + j->req.best_of; i++) {
        srv->slots[j->ch[i].slot].state = SLOT_GEN;
        if (j->req.max_tokens != 0) {
            take_token(srv, j, i, row, swa_sampler_sample(j->ch[i].sampler, row));
            continue;
        }
        j->ch[i].finish = FIN_LENGTH;
        if (!j->t_first) j->t_first = now_s();
        finish_choice(srv, j, &j->ch[i]);
        if (j->req.stream) {
            pthread_mutex_lock(&j->mu);
            stream_chunk(j, i, j->ch[i].text.len, 1);
            pthread_cond_broadcast(&j->cv);
            pthread_mutex_unlock(&j->mu);
        }
    }
    if (j->n_finished == j->n_ch) job_end(srv, j, 200, NULL);
}

/* ---- speculative decoding (--lookup, -md): a slot's draft verified in a decode of its own ---- */

/* The longest draft for slot i now: within its choice's spec_max, the tokens max_tokens still
   allows after the one to evaluate, and the positions the slot has left. */
static int32_t spec_room(const server *srv, int i)
{
    const slot *s = &srv->slots[i];
    const choice *c = &s->job->ch[s->choice];
    int64_t k = c->spec_max, room = (int64_t)srv->lim.n_ctx - (int64_t)s->n_hist - 1;
    if (s->job->req.max_tokens >= 0 && s->job->req.max_tokens - c->n_gen - 1 < k) k = s->job->req.max_tokens - c->n_gen - 1;
    if (room < k) k = room;
    return k > 0 ? (int32_t)k : 0;
}

/* A draft of k tokens to follow slot i's text, which ends with its next token (d->n 0: none). A
   draft model that fails (its context full) drafts no more for this choice. */
static void spec_draft(server *srv, int i, int32_t k, swa_draft *d)
{
    slot *s = &srv->slots[i];
    choice *c = &s->job->ch[s->choice];
    swa_error err;
    swa_status st;
    memset(d, 0, sizeof *d);
    d->token = srv->spec_buf;
    if (!s->drafter) st = swa_spec_lookup(s->hist, s->n_hist, srv->o.ngram_min, srv->o.ngram_max, srv->spec_buf, k, &d->n, &err);
    else if ((st = swa_drafter_set_p_min(s->drafter, c->spec_p_min, &err)) == SWA_OK)
        st = swa_drafter_draft(s->drafter, s->hist, s->n_hist, k, d, &err);
    if (st != SWA_OK) {
        fprintf(stderr, "swa-server: slot %d: no more drafts for this request: %s\n", i, err.msg);
        c->spec_max = 0;
        d->n = 0;
    }
    if (d->n < c->spec_min) d->n = 0;
}

/* The tokens a verification chose, to choice i of j as take_token takes sampled ones; where one
   ends it, the sequence goes back to before the tokens after it (as if they were never drafted). */
static void spec_take(server *srv, job *j, int i, const int32_t *out, int32_t n_out)
{
    choice *c = &j->ch[i];
    int sl = c->slot;
    int32_t k;
    for (k = 0; k < n_out; k++) {
        take_token(srv, j, i, NULL, out[k]);
        if (c->finish) {
            if (k + 1 < n_out && swa_seq_rewind(srv->ctx, sl, n_out - 1 - k, NULL) != SWA_OK) slot_forget(srv, sl);
            return;
        }
        if (k + 1 < n_out) slot_hist_push(&srv->slots[sl], out[k]);
    }
}

/* Slot i (generating, with drafts) verifies a draft after its next token in one decode: 1 when it
   did, 0 when there is no draft worth it now (the slot joins the step's batch). */
static int spec_step(server *srv, int i)
{
    slot *s = &srv->slots[i];
    job *j = s->job;
    choice *c = &j->ch[s->choice];
    int32_t k = spec_room(srv, i), n_out = 0;
    swa_draft d;
    swa_error err;
    swa_status st;
    double t0;
    if (k <= 0 || k < c->spec_min) return 0;
    slot_hist_push(s, s->next);   /* the text so far ends with it; evaluated by the verification */
    if (!s->n_hist) { slot_forget(srv, i); job_end(srv, j, 500, "out of memory"); return 1; }   /* the history is lost */
    spec_draft(srv, i, k, &d);
    if (d.n == 0) { s->n_hist--; return 0; }
    t0 = now_s();
    st = swa_spec_verify(s->verifier, srv->ctx, i, c->sampler, s->next, &d, srv->spec_out, &n_out, &err);
    if (st != SWA_OK) {   /* the sequence and the sampler are as they were: on without drafts */
        fprintf(stderr, "swa-server: slot %d: no more drafts for this request: %s\n", i, err.msg);
        c->spec_max = 0;
        s->n_hist--;
        return 0;
    }
    pthread_mutex_lock(&srv->mu);
    srv->m_decodes++;
    srv->m_gen_tokens += (uint64_t)n_out;
    srv->m_gen_s += now_s() - t0;
    pthread_mutex_unlock(&srv->mu);
    pthread_mutex_lock(&j->mu);
    c->n_drafted += d.n;
    c->n_accepted += n_out - 1;
    pthread_mutex_unlock(&j->mu);
    spec_take(srv, j, s->choice, srv->spec_out, n_out);
    if (j->n_finished == j->n_ch) job_end(srv, j, 200, NULL);
    return 1;
}

/* One step: a token of every generating slot and a chunk of the prompts, one swa_ctx_decode. */
static int step(server *srv)
{
    size_t n = 0, budget = (size_t)srv->o.n_batch, n_prompt = 0, n_gen = 0, r, i;
    int busy = 0;
    swa_batch b;
    swa_error err;
    swa_status st;
    double t0, dt;
    for (i = 0; i < (size_t)srv->n_slots; i++) {   /* the clients that left free their slots now */
        job *j = srv->slots[i].job;
        if (j && LOAD(j->cancelled)) job_end(srv, j, 499, "the client went away");
    }
    for (i = 0; i < (size_t)srv->n_slots; i++) {
        slot *s = &srv->slots[i];
        if (s->state != SLOT_GEN) continue;
        if (s->job->ch[s->choice].spec_max && spec_step(srv, (int)i)) { busy = 1; continue; }
        batch_put(srv, n++, (int)i, s->next, 1);
        n_gen++;
    }
    budget = budget > n ? budget - n : 0;
    for (i = 0; i < (size_t)srv->n_slots && budget > 0; i++) {   /* prompts, oldest slot order */
        slot *s = &srv->slots[i];
        size_t take, k;
        int g;
        if (s->state != SLOT_PREFILL) continue;
        g = s->job->ch[s->choice].group;
        take = s->job->req.n_prompt[g] - s->done;
        if (take > budget) take = budget;
        take = srv_cache_chunk(srv->cache, (int32_t)i, s->done, take);
        for (k = 0; k < take; k++)
            batch_put(srv, n++, (int)i, s->job->req.prompt[g][s->done + k], s->done + k + 1 == s->job->req.n_prompt[g]);
        budget -= take;
        n_prompt += take;
    }
    if (n == 0) return busy;
    b.n = n;
    b.token = srv->b_tok;
    b.seq = srv->b_seq;
    b.logits = srv->b_logits;
    t0 = now_s();
    st = swa_ctx_decode(srv->ctx, &b, srv->rows, &err);
    dt = now_s() - t0;
    pthread_mutex_lock(&srv->mu);
    srv->m_decodes++;
    srv->m_prompt_tokens += n_prompt;
    srv->m_gen_tokens += n_gen;
    srv->m_prompt_s += dt * (double)n_prompt / (double)n;
    srv->m_gen_s += dt * (double)n_gen / (double)n;
    pthread_mutex_unlock(&srv->mu);
    if (st != SWA_OK) {   /* nothing was evaluated: every job in the batch fails, their sequences are reset */
        fprintf(stderr, "swa-server: decode failed: %s\n", err.msg);
        for (i = 0; i < n; i++) {
            slot *s = &srv->slots[srv->b_slot[i]];
            if (s->job) job_end(srv, s->job, 500, err.msg);
            slot_forget(srv, srv->b_slot[i]);
        }
        return 1;
    }
    for (i = 0; i < n; i++) slot_hist_push(&srv->slots[srv->b_slot[i]], srv->b_tok[i]);
    for (i = 0, r = 0; i < n; i++) {   /* the prompt progress first: prompt_done may sample */
        slot *s = &srv->slots[srv->b_slot[i]];
        if (s->state == SLOT_PREFILL) s->done++;
    }
    for (i = 0; i < (size_t)srv->n_slots; i++) {   /* a snapshot where a prompt's chunk stopped for one */
        slot *s = &srv->slots[i];
        if (s->state == SLOT_PREFILL)
            srv_cache_reached(srv->cache, srv->ctx, (int32_t)i, s->job->req.prompt[s->job->ch[s->choice].group], s->done);
    }
    for (i = 0, r = 0; i < n; i++) {
        slot *s = &srv->slots[srv->b_slot[i]];
        const float *row;
        job *j = s->job;
        if (!srv->b_logits[i]) continue;
        row = srv->rows + r++ * (size_t)srv->n_vocab;
        if (!j) continue;
        if (s->state == SLOT_PREFILL) {
            prompt_done(srv, j, j->ch[s->choice].group, row);
        } else if (s->state == SLOT_GEN) {
            take_token(srv, j, s->choice, row, swa_sampler_sample(j->ch[s->choice].sampler, row));
            if (j->n_finished == j->n_ch) job_end(srv, j, 200, NULL);
        }
    }
    return 1;
}

/* The scheduler thread: arg is the server. */
static void *scheduler(void *arg)
{
    server *srv = (server *)arg;
    for (;;) {
        int busy;
        job *prev;
        ops_run_waiting(srv);
        admit(srv);
        busy = step(srv);
        pthread_mutex_lock(&srv->mu);
        for (int i = 0; i < srv->n_slots; i++) {
            srv->slots[i].shown_busy = srv->slots[i].state != SLOT_IDLE;
            srv->slots[i].shown_n_hist = srv->slots[i].n_hist;
        }
        if (srv->stopping) { pthread_mutex_unlock(&srv->mu); break; }
        if (!busy && !next_admissible(srv, &prev)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 100 * 1000 * 1000;   /* wake now and then to see cancelled requests */
            if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
            pthread_cond_timedwait(&srv->wake, &srv->mu, &ts);
        }
        pthread_mutex_unlock(&srv->mu);
    }
    return NULL;
}

/* ---- HTTP ---- */

typedef struct conn {
    struct MHD_Connection *http;   /* libmicrohttpd's connection it came on */
    int ollama;                /* it came to ollama's /api/: errors in ollama's shape */
    sbuf body;
    int too_big;
    int responded;
    /* for its line in the access log */
    char method[12], path[128];
    int status;
    double t_start;
    job *job;                  /* a generation's counts (the connection's reference) */
} conn;

/* A path as it may stand in a JSON string of the log: quotes, backslashes and controls as '_'. */
static const char *json_safe_path(char *p)
{
    char *q;
    for (q = p; *q; q++) if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20) *q = '_';
    return p;
}

/* The client closed its end (or the socket failed): nothing waits for the answer. */
static int peer_gone(int fd)
{
    char c;
    ssize_t r;
    if (fd < 0) return 0;
    r = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static enum MHD_Result send_text(conn *cc, int status, const char *type, const char *text, size_t len,
                                 int retry_after)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ok;
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
    if (retry_after) MHD_add_response_header(r, "Retry-After", "1");
    if (status == 405) MHD_add_response_header(r, "Allow", retry_after < 0 ? "GET" : "POST");
    cc->status = status;
    ok = MHD_queue_response(cc->http, (unsigned)status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result send_json(conn *cc, int status, cJSON *o)
{
    char *s = cJSON_PrintUnformatted(o);
    enum MHD_Result ok;
    cJSON_Delete(o);
    if (!s) return MHD_NO;
    ok = send_text(cc, status, "application/json; charset=utf-8", s, strlen(s), 0);
    free(s);
    return ok;
}

static enum MHD_Result send_error(server *srv, conn *cc, int status, const char *type, const char *param,
                                  const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    cJSON *e;
    char *s;
    enum MHD_Result ok;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (cc->ollama) {
        e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "error", msg);
    } else {
        e = error_json(status, type, param, msg);
        cJSON_AddNumberToObject(cJSON_GetObjectItem(e, "error"), "status", status);
    }
    s = cJSON_PrintUnformatted(e);
    cJSON_Delete(e);
    if (!s) return MHD_NO;
    ok = send_text(cc, status, "application/json; charset=utf-8", s, strlen(s), status == 503 ? 1 : status == 405 ? 0 : 0);
    free(s);
    pthread_mutex_lock(&srv->mu);
    srv->m_by_status[status / 100 < 6 ? status / 100 : 5]++;
    pthread_mutex_unlock(&srv->mu);
    return ok;
}

/* The idle timeout back on (run_job turned it off); turning it on restarts its clock. */
static void timeout_on(struct MHD_Connection *c, int timeout)
{
    MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)timeout);
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    job *j = (job *)cls;
    server *srv = j->srv;
    size_t n;
    (void)pos;
    pthread_mutex_lock(&j->mu);
    while (j->taken == j->out.len && !j->done) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&j->cv, &j->mu, &ts);
        if (j->taken == j->out.len && !j->done && peer_gone(j->fd)) {
            STORE(j->cancelled, 1);
            pthread_mutex_unlock(&j->mu);
            pthread_mutex_lock(&srv->mu);
            pthread_cond_signal(&srv->wake);
            pthread_mutex_unlock(&srv->mu);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
    }
    if (j->done) timeout_on(j->http, srv->o.timeout);   /* a client that stops reading the rest is cut off */
    if (j->taken == j->out.len) {
        pthread_mutex_unlock(&j->mu);
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    n = j->out.len - j->taken;
    if (n > max) n = max;
    memcpy(buf, j->out.s + j->taken, n);
    j->taken += n;
    pthread_mutex_unlock(&j->mu);
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    job *j = (job *)cls;
    pthread_mutex_lock(&j->mu);
    if (!j->done) STORE(j->cancelled, 1);
    pthread_mutex_unlock(&j->mu);
    job_release(j);
}

/* The request carries the API key (any request, without one). */
static int authorized(struct MHD_Connection *c, const char *key)
{
    const char *h;
    size_t n;
    if (!key) return 1;
    h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    n = strlen(key);
    if (h && !strncmp(h, "Bearer ", 7) && strlen(h + 7) == n) {
        size_t i;
        unsigned diff = 0;   /* the same time whatever matches */
        for (i = 0; i < n; i++) diff |= (unsigned char)h[7 + i] ^ (unsigned char)key[i];
        return diff == 0;
    }
    return 0;
}

/* A new job with its two references: the connection's and the scheduler's. */
static job *job_new(server *srv)
{
    job *j = (job *)calloc(1, sizeof *j);
    unsigned long id;
    if (!j) return NULL;
    __atomic_add_fetch(&srv->n_jobs, 1, __ATOMIC_ACQ_REL);
    j->srv = srv;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    j->refs = 2;
    j->first_slot = j->pin = -1;
    j->created = (long)time(NULL);
    j->t_arrive = now_s();
    pthread_mutex_lock(&srv->mu);
    id = ++srv->n_ids;
    pthread_mutex_unlock(&srv->mu);
    snprintf(j->id, sizeof j->id, "%lx%lx", (unsigned long)j->created, id);
    return j;
}

/* Queue j and answer with what the scheduler writes: a stream, or the whole response. The
   connection keeps a third reference for its line in the access log. */
static enum MHD_Result run_job(server *srv, conn *cc, job *j)
{
    struct MHD_Connection *c = cc->http;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    int full, stopping;
    j->fd = ci ? ci->connect_fd : -1;
    j->refs++;
    cc->job = j;
    pthread_mutex_lock(&srv->mu);
    stopping = srv->stopping;
    full = stopping || (srv->n_queued >= srv->o.queue && !(srv->n_slots - srv->n_busy >= job_slots(j) && !srv->queue_head));
    if (!full) {
        if (srv->queue_tail) srv->queue_tail->next = j;
        else srv->queue_head = j;
        srv->queue_tail = j;
        srv->n_queued++;
        pthread_cond_signal(&srv->wake);
    }
    pthread_mutex_unlock(&srv->mu);
    if (full) {
        job_release(j);
        if (stopping) return send_error(srv, cc, 503, "unavailable_error", NULL, "the server is stopping");
        return send_error(srv, cc, 503, "server_error", NULL, "the server is busy: every slot is taken and %d requests wait",
                          srv->o.queue);
    }
    /* The client has nothing to send while its answer is computed, and a first token may take
       longer than --timeout: the idle timeout is off until the answer is complete. */
    j->http = c;
    MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
    if (j->req.stream) {
        struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_reader, j, stream_free);
        enum MHD_Result ok;
        if (!r) { STORE(j->cancelled, 1); job_release(j); return MHD_NO; }
        MHD_add_response_header(r, "Content-Type", is_ollama(j) ? "application/x-ndjson" : "text/event-stream");
        MHD_add_response_header(r, "Cache-Control", "no-cache");
        MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
        cc->status = 200;
        ok = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        pthread_mutex_lock(&srv->mu);
        srv->m_by_status[2]++;
        pthread_mutex_unlock(&srv->mu);
        return ok;
    }
    pthread_mutex_lock(&j->mu);
    while (!j->done) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&j->cv, &j->mu, &ts);
        if (!j->done && !LOAD(j->cancelled) && peer_gone(j->fd)) {
            STORE(j->cancelled, 1);
            pthread_mutex_unlock(&j->mu);
            pthread_mutex_lock(&srv->mu);
            pthread_cond_signal(&srv->wake);
            pthread_mutex_unlock(&srv->mu);
            pthread_mutex_lock(&j->mu);
        }
    }
    pthread_mutex_unlock(&j->mu);
    timeout_on(c, srv->o.timeout);
    {
        enum MHD_Result ok = MHD_NO;
        int st = j->status ? j->status : 500;
        if (!LOAD(j->cancelled) || j->status == 200) {
            ok = send_text(cc, st, "application/json; charset=utf-8", j->out.s ? j->out.s : "{}", j->out.len, st == 503);
            pthread_mutex_lock(&srv->mu);
            srv->m_by_status[st / 100 < 6 ? st / 100 : 5]++;
            pthread_mutex_unlock(&srv->mu);
        }
        job_release(j);
        return ok;
    }
}

/* Choice ch's drafts: the request's speculative.n_max and n_min, else --draft-max and --draft-min
   (n_min brought down to n_max, as llama-server does). None without speculation, nor where each
   token's logits are needed (logprobs, best_of's ranking): a verification does not keep them. */
static void spec_settings(const server *srv, const srv_request *r, choice *ch)
{
    ch->spec_max = r->spec_n_max >= 0 ? r->spec_n_max : srv->o.draft_max;
    ch->spec_min = r->spec_n_min >= 0 ? r->spec_n_min : srv->o.draft_min;
    if (ch->spec_min > ch->spec_max) ch->spec_min = ch->spec_max;
    ch->spec_p_min = (float)r->spec_p_min;
    if (!srv->slots[0].verifier || r->logprobs || r->best_of > r->n_choices) ch->spec_max = 0;
}

/* Choice i's reader of the answer: the request's tool-call syntax, tools and reasoning format. */
static int chat_parser(job *j, int i, uint64_t seed, swa_error *e)
{
    swa_chat_parse_config cfg = swa_chat_parse_config_default();
    cfg.format = (swa_tool_format)j->req.tool_format;
    cfg.reasoning = (swa_reasoning_format)j->req.reasoning;
    cfg.reasoning_open = j->req.reasoning_open;
    cfg.tools = j->req.tools;
    cfg.tools_len = j->req.tools ? strlen(j->req.tools) : 0;
    cfg.id_seed = seed;
    /* OpenAI streams a call's arguments as they are written; ollama a call once it is whole */
    cfg.stream_arguments = j->req.stream && j->req.kind == SRV_CHAT;
    return swa_chat_parser_create(&cfg, &j->ch[i].parser, e) == SWA_OK;
}

static enum MHD_Result handle_generate(server *srv, conn *cc, int kind)
{
    srv_error err;
    swa_error e;
    job *j = job_new(srv);
    int i;
    char id[96];
    if (!j) return send_error(srv, cc, 500, "server_error", NULL, "out of memory");
    if (srv_parse_request(cc->body.s ? cc->body.s : "", cc->body.len, kind, &srv->lim, &j->req, &err)) {
        j->refs = 1;
        job_release(j);
        return send_error(srv, cc, err.status, err.type, err.param, "%s", err.message);
    }
    j->n_ch = j->req.n_prompts * j->req.best_of;
    if (!(j->ch = (choice *)calloc((size_t)j->n_ch, sizeof *j->ch))) {
        j->refs = 1;
        job_release(j);
        return send_error(srv, cc, 500, "server_error", NULL, "out of memory");
    }
    j->pin = j->req.id_slot;
    snprintf(id, sizeof id, "%s-%s", kind == SRV_CHAT ? "chatcmpl" : "cmpl", j->id);
    snprintf(j->id, sizeof j->id, "%.70s", id);
    if (j->req.sampling.seed == (uint64_t)-1) j->req.sampling.seed = (uint64_t)time(NULL) * 2654435761u + (uint64_t)j->created;
    for (i = 0; i < j->n_ch; i++) {
        swa_sampler_config sc = j->req.sampling;
        choice *ch = &j->ch[i];
        int g = i / j->req.best_of;
        size_t k;
        sc.seed += (uint64_t)(i % j->req.best_of);   /* the request's seed + i, as swa-generate --parallel */
        ch->slot = -1;
        ch->group = g;
        spec_settings(srv, &j->req, ch);
        if (swa_sampler_create(&sc, srv->n_vocab, &ch->sampler, NULL) != SWA_OK ||
            swa_sampler_set_logit_bias(ch->sampler, j->req.bias_id, j->req.bias, j->req.n_bias, NULL) != SWA_OK) {
            j->refs = 1;
            job_release(j);
            return send_error(srv, cc, 400, "invalid_request_error", NULL, "the sampling settings were refused");
        }
        /* the penalties see the prompt; sampled tokens the sampler records itself */
        if ((sc.repeat_penalty > 0 && sc.repeat_penalty != 1) || sc.presence_penalty != 0 || sc.frequency_penalty != 0)
            for (k = 0; k < j->req.n_prompt[g]; k++) swa_sampler_accept(ch->sampler, j->req.prompt[g][k]);
        /* then the grammar, which follows the generated tokens only */
        if (j->req.grammar && (j->req.grammar_trigger
                                   ? swa_sampler_set_grammar_lazy(ch->sampler, j->req.grammar, srv->vocab,
                                                                  &j->req.grammar_trigger, 1, &e)
                                   : swa_sampler_set_grammar(ch->sampler, j->req.grammar, srv->vocab, &e)) != SWA_OK) {
            j->refs = 1;
            job_release(j);
            return send_error(srv, cc, 400, "invalid_request_error", NULL, "%s", e.msg);
        }
        /* ollama's chat is read when it has tools or thinking; else it is the text as written */
        if ((kind == SRV_CHAT || (kind == SRV_OLLAMA_CHAT && (j->req.tools || j->req.reasoning))) &&
            !chat_parser(j, i, sc.seed, &e)) {
            j->refs = 1;
            job_release(j);
            return send_error(srv, cc, 500, "server_error", NULL, "%s", e.msg);
        }
        swa_decoder_init(&ch->dec, srv->vocab);
        /* a completion goes on from its prompt: keep its first space; a chat reply starts afresh */
        ch->dec.at_start = kind == SRV_CHAT || kind == SRV_OLLAMA_CHAT || kind == SRV_OLLAMA_GENERATE;
        /* the parser reads the format's markers ([TOOL_CALLS], <|channel|>) even where the
           vocabulary holds them as control tokens; the client sees what the parser makes of them */
        if (ch->parser) ch->dec.markers = swa_tool_format_markers((swa_tool_format)j->req.tool_format, &ch->dec.n_markers);
        if (j->req.echo[g]) sb_add(&ch->text, j->req.echo[g], j->req.echo_len[g]);
    }
    return run_job(srv, cc, j);
}

static enum MHD_Result handle_embed(server *srv, conn *cc, int kind)
{
    srv_error err;
    job *j = job_new(srv);
    if (!j) return send_error(srv, cc, 500, "server_error", NULL, "out of memory");
    if (srv_parse_embed(cc->body.s ? cc->body.s : "", cc->body.len, kind == EMB_OLLAMA, &srv->lim, &j->ereq, &err)) {
        j->refs = 1;
        job_release(j);
        return send_error(srv, cc, err.status, err.type, err.param, "%s", err.message);
    }
    j->embed = kind;
    return run_job(srv, cc, j);
}

static enum MHD_Result handle_tokenize(server *srv, conn *cc, int detok)
{
    cJSON *o = cJSON_ParseWithLengthOpts(cc->body.s ? cc->body.s : "", cc->body.len, NULL, 0), *out, *f, *t;
    if (!o || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return send_error(srv, cc, 400, "invalid_request_error", NULL, "the body is not a JSON object");
    }
    out = cJSON_CreateObject();
    if (!detok) {
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(o, "content");
        const cJSON *special = cJSON_GetObjectItemCaseSensitive(o, "add_special");
        const cJSON *pieces = cJSON_GetObjectItemCaseSensitive(o, "with_pieces");
        int32_t *tok;
        size_t n, i;
        if (!cJSON_IsString(content)) {
            cJSON_Delete(o);
            cJSON_Delete(out);
            return send_error(srv, cc, 400, "invalid_request_error", "content", "content must be a string");
        }
        if (srv_tokenize(srv->vocab, content->valuestring, strlen(content->valuestring),
                         SWA_TOKENIZE_SPECIAL | (cJSON_IsTrue(special) && swa_vocab_add_bos(srv->vocab) ? SWA_TOKENIZE_ADD_BOS : 0),
                         &tok, &n)) {
            cJSON_Delete(o);
            cJSON_Delete(out);
            return send_error(srv, cc, 500, "server_error", NULL, "tokenization failed");
        }
        f = cJSON_AddArrayToObject(out, "tokens");
        for (i = 0; i < n; i++) {
            if (cJSON_IsTrue(pieces)) {
                char piece[256];
                size_t pl = swa_token_to_text(srv->vocab, tok[i], piece, sizeof piece);
                cJSON *p = cJSON_CreateObject();
                cJSON_AddNumberToObject(p, "id", tok[i]);
                add_text(p, "piece", piece, pl < sizeof piece ? pl : sizeof piece);
                cJSON_AddItemToArray(f, p);
            } else {
                cJSON_AddItemToArray(f, cJSON_CreateNumber(tok[i]));
            }
        }
        free(tok);
    } else {
        const cJSON *tokens = cJSON_GetObjectItemCaseSensitive(o, "tokens");
        swa_decoder d;
        sbuf text = {NULL, 0, 0, 0};
        char buf[512];
        size_t i = 0;
        if (!cJSON_IsArray(tokens)) {
            cJSON_Delete(o);
            cJSON_Delete(out);
            return send_error(srv, cc, 400, "invalid_request_error", "tokens", "tokens must be a list of token ids");
        }
        swa_decoder_init(&d, srv->vocab);
        d.at_start = 0;
        cJSON_ArrayForEach(t, tokens) {
            if (!cJSON_IsNumber(t) || t->valuedouble < 0 || t->valuedouble >= srv->n_vocab || t->valuedouble != floor(t->valuedouble)) {
                free(text.s);
                cJSON_Delete(o);
                cJSON_Delete(out);
                return send_error(srv, cc, 400, "invalid_request_error", "tokens", "tokens[%zu] is not a token id (0 to %d)", i,
                                  srv->n_vocab - 1);
            }
            sb_add(&text, buf, swa_decoder_push(&d, (int32_t)t->valuedouble, buf, sizeof buf));
            i++;
        }
        sb_add(&text, buf, swa_decoder_flush(&d, buf, sizeof buf));
        add_text(out, "content", text.s ? text.s : "", text.len);
        free(text.s);
    }
    cJSON_Delete(o);
    return send_json(cc, 200, out);
}

static void cache_metrics(sbuf *b, srv_cache *cache)
{
    srv_cache_stats st;
    srv_cache_stats_get(cache, &st);
    sb_addf(b, "# HELP swa_cache_hits_total Prompts that started from a snapshot in the cache (--cache-ram).\n"
               "# TYPE swa_cache_hits_total counter\nswa_cache_hits_total %llu\n", (unsigned long long)st.hits);
    sb_addf(b, "# HELP swa_cache_misses_total Prompts for which the cache held no longer prefix than the slots.\n"
               "# TYPE swa_cache_misses_total counter\nswa_cache_misses_total %llu\n", (unsigned long long)st.misses);
    sb_addf(b, "# HELP swa_cache_tokens_restored_total Prompt tokens restored from the cache.\n"
               "# TYPE swa_cache_tokens_restored_total counter\nswa_cache_tokens_restored_total %llu\n",
            (unsigned long long)st.tokens_restored);
    sb_addf(b, "# HELP swa_cache_saves_total Snapshots stored.\n# TYPE swa_cache_saves_total counter\n"
               "swa_cache_saves_total %llu\n", (unsigned long long)st.saves);
    sb_addf(b, "# HELP swa_cache_evictions_total Snapshots dropped for room or found damaged.\n"
               "# TYPE swa_cache_evictions_total counter\nswa_cache_evictions_total %llu\n", (unsigned long long)st.evictions);
    sb_addf(b, "# HELP swa_cache_bytes Bytes the cache holds.\n# TYPE swa_cache_bytes gauge\nswa_cache_bytes %zu\n", st.bytes);
    sb_addf(b, "# HELP swa_cache_limit_bytes The cache's budget.\n# TYPE swa_cache_limit_bytes gauge\n"
               "swa_cache_limit_bytes %zu\n", st.limit);
    sb_addf(b, "# HELP swa_cache_entries Snapshots the cache holds.\n# TYPE swa_cache_entries gauge\nswa_cache_entries %zu\n",
            st.entries);
}

static enum MHD_Result handle_metrics(server *srv, conn *cc)
{
    sbuf b = {NULL, 0, 0, 0};
    enum MHD_Result ok;
    pthread_mutex_lock(&srv->mu);
    sb_addf(&b, "# HELP swa_requests_total Generation requests finished (answered, failed or abandoned).\n"
                "# TYPE swa_requests_total counter\nswa_requests_total %llu\n", (unsigned long long)srv->m_requests);
    sb_addf(&b, "# HELP swa_requests_failed_total Generation requests that ended in an error or a client that left.\n"
                "# TYPE swa_requests_failed_total counter\nswa_requests_failed_total %llu\n", (unsigned long long)srv->m_errors);
    sb_addf(&b, "# HELP swa_http_responses_total Responses by status class.\n# TYPE swa_http_responses_total counter\n");
    {
        int k;
        for (k = 2; k <= 5; k++)
            sb_addf(&b, "swa_http_responses_total{class=\"%dxx\"} %llu\n", k, (unsigned long long)srv->m_by_status[k]);
    }
    sb_addf(&b, "# HELP swa_prompt_tokens_total Prompt tokens evaluated.\n# TYPE swa_prompt_tokens_total counter\n"
                "swa_prompt_tokens_total %llu\n", (unsigned long long)srv->m_prompt_tokens);
    sb_addf(&b, "# HELP swa_prompt_tokens_cached_total Prompt tokens a slot already held (not evaluated again).\n"
                "# TYPE swa_prompt_tokens_cached_total counter\nswa_prompt_tokens_cached_total %llu\n",
            (unsigned long long)srv->m_cached_tokens);
    cache_metrics(&b, srv->cache);
    sb_addf(&b, "# HELP swa_tokens_predicted_total Generated tokens evaluated.\n# TYPE swa_tokens_predicted_total counter\n"
                "swa_tokens_predicted_total %llu\n", (unsigned long long)srv->m_gen_tokens);
    sb_addf(&b, "# HELP swa_prompt_tokens_seconds Prompt tokens per second of decoding.\n# TYPE swa_prompt_tokens_seconds gauge\n"
                "swa_prompt_tokens_seconds %.3f\n", srv->m_prompt_s > 0 ? (double)srv->m_prompt_tokens / srv->m_prompt_s : 0.0);
    sb_addf(&b, "# HELP swa_predicted_tokens_seconds Generated tokens per second of decoding.\n"
                "# TYPE swa_predicted_tokens_seconds gauge\nswa_predicted_tokens_seconds %.3f\n",
            srv->m_gen_s > 0 ? (double)srv->m_gen_tokens / srv->m_gen_s : 0.0);
    sb_addf(&b, "# HELP swa_decode_total Engine steps (swa_ctx_decode calls).\n# TYPE swa_decode_total counter\n"
                "swa_decode_total %llu\n", (unsigned long long)srv->m_decodes);
    sb_addf(&b, "# HELP swa_requests_deferred Requests waiting for a slot.\n# TYPE swa_requests_deferred gauge\n"
                "swa_requests_deferred %d\n", srv->n_queued);
    sb_addf(&b, "# HELP swa_slots_busy Slots generating or reading a prompt.\n# TYPE swa_slots_busy gauge\n"
                "swa_slots_busy %d\n", srv->n_busy);
    sb_addf(&b, "# HELP swa_slots_total Slots (--parallel).\n# TYPE swa_slots_total gauge\nswa_slots_total %d\n", srv->n_slots);
    pthread_mutex_unlock(&srv->mu);
    if (b.failed || !b.s) { free(b.s); return send_error(srv, cc, 500, "server_error", NULL, "out of memory"); }
    ok = send_text(cc, 200, "text/plain; version=0.0.4", b.s, b.len, 0);
    free(b.s);
    return ok;
}

/* The model as OpenAI's /v1/models lists it. */
static cJSON *model_json(const server *srv)
{
    cJSON *m = cJSON_CreateObject(), *meta;
    const swa_hparams *hp = swa_model_hparams(srv->model);
    cJSON_AddStringToObject(m, "id", srv->model_id);
    cJSON_AddStringToObject(m, "object", "model");
    cJSON_AddNumberToObject(m, "created", 0);
    cJSON_AddStringToObject(m, "owned_by", "swa.h");
    meta = cJSON_AddObjectToObject(m, "meta");
    cJSON_AddNumberToObject(meta, "n_vocab", hp->n_vocab);
    cJSON_AddNumberToObject(meta, "n_ctx", srv->lim.n_ctx);
    cJSON_AddNumberToObject(meta, "n_ctx_train", hp->n_ctx_train);
    cJSON_AddNumberToObject(meta, "n_embd", hp->n_embd);
    cJSON_AddNumberToObject(meta, "window", hp->window);
    cJSON_AddStringToObject(meta, "chat_template", swa_chat_template_name(srv->tmpl));
    cJSON_AddNumberToObject(meta, "slots", srv->n_slots);
    return m;
}

/* llama-server's /props: the settings a client reads to adapt. */
static enum MHD_Result handle_props(server *srv, conn *cc)
{
    cJSON *o = cJSON_CreateObject(), *g = cJSON_AddObjectToObject(o, "default_generation_settings"), *p;
    swa_sampler_config d = swa_sampler_config_default();
    cJSON_AddNumberToObject(g, "n_ctx", srv->lim.n_ctx);
    p = cJSON_AddObjectToObject(g, "params");
    cJSON_AddNumberToObject(p, "n_predict", -1);
    cJSON_AddNumberToObject(p, "temperature", d.temperature);
    cJSON_AddNumberToObject(p, "top_k", d.top_k);
    cJSON_AddNumberToObject(p, "top_p", d.top_p);
    cJSON_AddNumberToObject(p, "min_p", d.min_p);
    cJSON_AddNumberToObject(p, "repeat_penalty", 1);
    cJSON_AddNumberToObject(p, "repeat_last_n", 64);
    cJSON_AddNumberToObject(p, "speculative.n_max", srv->o.draft_max);
    cJSON_AddNumberToObject(p, "speculative.n_min", srv->o.draft_min);
    cJSON_AddNumberToObject(p, "speculative.p_min", srv->o.draft_p_min);
    cJSON_AddNumberToObject(o, "total_slots", srv->n_slots);
    cJSON_AddStringToObject(o, "model_path", srv->o.model);
    cJSON_AddStringToObject(o, "model_alias", srv->model_id);
    cJSON_AddStringToObject(o, "chat_template", swa_chat_template_name(srv->tmpl));
    cJSON_AddStringToObject(o, "build_info", "swa.h");
    return send_json(cc, 200, o);
}

/* llama-server's /apply-template: a chat request's messages (and tools) as the template writes
   them, {"prompt": TEXT}, nothing evaluated, so a text longer than a slot is shown too. */
static enum MHD_Result handle_apply_template(server *srv, conn *cc)
{
    srv_request r;
    srv_error err;
    srv_limits lim = srv->lim;
    cJSON *o;
    lim.n_ctx = INT32_MAX;
    if (srv_parse_request(cc->body.s ? cc->body.s : "", cc->body.len, SRV_CHAT, &lim, &r, &err))
        return send_error(srv, cc, err.status, err.type, err.param, "%s", err.message);
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "prompt", r.prompt_text ? r.prompt_text : "");
    srv_request_free(&r);
    return send_json(cc, 200, o);
}

/* llama-server's /slots: one entry per slot. */
static enum MHD_Result handle_slots(server *srv, conn *cc)
{
    cJSON *arr = cJSON_CreateArray();
    int i;
    pthread_mutex_lock(&srv->mu);   /* as the scheduler left them after its last step */
    for (i = 0; i < srv->n_slots; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "id", i);
        cJSON_AddNumberToObject(e, "n_ctx", srv->lim.n_ctx);
        cJSON_AddBoolToObject(e, "is_processing", srv->slots[i].shown_busy);
        cJSON_AddNumberToObject(e, "n_past", (double)srv->slots[i].shown_n_hist);
        cJSON_AddBoolToObject(e, "speculative", srv->slots[i].verifier != NULL);
        cJSON_AddItemToArray(arr, e);
    }
    pthread_mutex_unlock(&srv->mu);
    return send_json(cc, 200, arr);
}

/* llama-server's POST /slots/{id}?action=save|restore|erase: checked here, run by the scheduler
   when the slot is idle. Its checks in llama-server's order: the flag, the slot, the action. */
static enum MHD_Result handle_slot_action(server *srv, conn *cc, const char *id)
{
    static const char *names[] = {"save", "restore", "erase"};
    const char *a = MHD_lookup_connection_value(cc->http, MHD_GET_ARGUMENT_KIND, "action");
    char *end;
    long n;
    int action;
    srv_error err;
    job *j;
    if (!srv->o.slot_save_path)
        return send_error(srv, cc, 501, "not_supported_error", NULL,
                          "This server does not support slots action. Start it with `--slot-save-path`");
    n = *id >= '0' && *id <= '9' ? strtol(id, &end, 10) : -1;
    if (n < 0 || *end || n >= srv->n_slots)
        return send_error(srv, cc, 400, "invalid_request_error", NULL, "Invalid slot ID \"%.40s\": this server has slots 0 to %d", id,
                          srv->n_slots - 1);
    for (action = 0; action < 3 && (!a || strcmp(a, names[action])); action++) {}
    if (action == 3)
        return send_error(srv, cc, 400, "invalid_request_error", "action", "Invalid action \"%.40s\": save, restore or erase", a ? a : "");
    if (!(j = job_new(srv))) return send_error(srv, cc, 500, "server_error", NULL, "out of memory");
    if (srv_parse_slot_action(cc->body.s ? cc->body.s : "", cc->body.len, action, j->op_file, sizeof j->op_file, &err)) {
        j->refs = 1;
        job_release(j);
        return send_error(srv, cc, err.status, err.type, err.param, "%s", err.message);
    }
    j->op = OP_SAVE + action;
    j->first_slot = (int)n;
    return run_job(srv, cc, j);
}

/* ollama's "details" of the model: its family, parameter count ("1.1B") and weight type. */
static void ollama_details(cJSON *d, const swa_model *model)
{
    const swa_gguf *g = swa_model_gguf(model);
    const swa_hparams *hp = swa_model_hparams(model);
    double n = 0;
    char size[32];
    for (int64_t i = 0; i < swa_gguf_tensor_count(g); i++) {
        const swa_gguf_tensor *t = swa_gguf_tensor_at(g, i);
        n += (double)t->ne[0] * (double)t->ne[1] * (double)t->ne[2] * (double)t->ne[3];
    }
    if (n >= 1e9) snprintf(size, sizeof size, "%.1fB", n / 1e9);
    else if (n >= 1e6) snprintf(size, sizeof size, "%.1fM", n / 1e6);
    else snprintf(size, sizeof size, "%.0fK", n / 1e3);
    cJSON_AddStringToObject(d, "format", "gguf");
    cJSON_AddStringToObject(d, "family", hp->arch);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(d, "families"), cJSON_CreateString(hp->arch));
    cJSON_AddStringToObject(d, "parameter_size", size);
    cJSON_AddStringToObject(d, "quantization_level", swa_type_name(hp->weight_type));
}

/* ollama's /api/tags, /api/ps, /api/show, /api/version. */
static enum MHD_Result handle_ollama_info(server *srv, conn *cc, const char *what)
{
    cJSON *o = cJSON_CreateObject(), *m, *d;
    const swa_hparams *hp = swa_model_hparams(srv->model);
    struct stat st;
    char when[32] = "1970-01-01T00:00:00Z";
    if (stat(srv->o.model, &st) == 0) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&st.st_mtime));
    else st.st_size = 0;
    if (!strcmp(what, "version")) {
        cJSON_AddStringToObject(o, "version", "0.5.0");
        return send_json(cc, 200, o);
    }
    if (!strcmp(what, "show")) m = o;
    else {
        m = cJSON_CreateObject();
        cJSON_AddItemToArray(cJSON_AddArrayToObject(o, "models"), m);
        cJSON_AddStringToObject(m, "name", srv->model_id);
        cJSON_AddStringToObject(m, "model", srv->model_id);
        cJSON_AddStringToObject(m, "modified_at", when);
        cJSON_AddStringToObject(m, "digest", "");
        cJSON_AddNumberToObject(m, "size", (double)st.st_size);
    }
    d = cJSON_AddObjectToObject(m, "details");
    ollama_details(d, srv->model);
    if (!strcmp(what, "show")) {
        cJSON *mi = cJSON_AddObjectToObject(o, "model_info"), *cap;
        cJSON_AddStringToObject(o, "modelfile", "");
        cJSON_AddStringToObject(o, "parameters", "");
        cJSON_AddStringToObject(o, "template", swa_chat_template_name(srv->tmpl));
        cJSON_AddNumberToObject(mi, "general.context_length", srv->lim.n_ctx);
        cJSON_AddNumberToObject(mi, "general.embedding_length", hp->n_embd);
        cap = cJSON_AddArrayToObject(o, "capabilities");   /* tools: the template's, or the generic form */
        cJSON_AddItemToArray(cap, cJSON_CreateString("completion"));
        cJSON_AddItemToArray(cap, cJSON_CreateString("tools"));
        if (srv->lim.thinking) cJSON_AddItemToArray(cap, cJSON_CreateString("thinking"));
    } else if (!strcmp(what, "ps")) {
        cJSON_AddStringToObject(m, "expires_at", "2100-01-01T00:00:00Z");
        cJSON_AddNumberToObject(m, "size_vram", 0);
        cJSON_AddNumberToObject(m, "context_length", srv->lim.n_ctx);
    }
    return send_json(cc, 200, o);
}

static enum MHD_Result handle_models(server *srv, conn *cc)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "object", "list");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(o, "data"), model_json(srv));
    return send_json(cc, 200, o);
}

/* Routes: path, method, handler id. A known path with another method is 405. */
enum { R_CHAT, R_COMPLETION, R_MODELS, R_HEALTH, R_TOKENIZE, R_DETOKENIZE, R_METRICS, R_NATIVE, R_PROPS, R_SLOTS,
       R_EMBED, R_EMBED_LLAMA, R_MODEL, R_OCHAT, R_OGEN, R_OEMBED, R_OTAGS, R_OSHOW, R_OPS, R_OVERSION, R_APPLY,
       R_INFILL, R_SLOT_ACTION };
static const struct { const char *path; int post; int id; } routes[] = {
    {"/v1/chat/completions", 1, R_CHAT}, {"/chat/completions", 1, R_CHAT},
    {"/v1/completions", 1, R_COMPLETION}, {"/completions", 1, R_COMPLETION},
    {"/v1/models", 0, R_MODELS}, {"/models", 0, R_MODELS},
    {"/health", 0, R_HEALTH}, {"/v1/health", 0, R_HEALTH},
    {"/tokenize", 1, R_TOKENIZE}, {"/detokenize", 1, R_DETOKENIZE}, {"/metrics", 0, R_METRICS},
    {"/completion", 1, R_NATIVE}, {"/props", 0, R_PROPS}, {"/slots", 0, R_SLOTS}, {"/apply-template", 1, R_APPLY},
    {"/v1/embeddings", 1, R_EMBED}, {"/embeddings", 1, R_EMBED}, {"/embedding", 1, R_EMBED_LLAMA},
    {"/api/chat", 1, R_OCHAT}, {"/api/generate", 1, R_OGEN}, {"/api/embed", 1, R_OEMBED}, {"/api/tags", 0, R_OTAGS},
    {"/api/show", 1, R_OSHOW}, {"/api/ps", 0, R_OPS}, {"/api/version", 0, R_OVERSION}, {"/infill", 1, R_INFILL},
    {"/slots/{id}", 1, R_SLOT_ACTION}, {"/v1/models/{id}", 0, R_MODEL}};
#define R_MODEL_ROUTE ((int)(sizeof routes / sizeof routes[0]) - 1)
#define R_SLOT_ROUTE (R_MODEL_ROUTE - 1)

static void watch_set(server *srv, struct MHD_Connection *c, int reading);

enum { MAX_URI = 8192, MAX_HEADERS = 32768 };

static enum MHD_Result header_size(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    *(size_t *)cls += strlen(key) + (value ? strlen(value) : 0) + 4;
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    server *srv = (server *)cls;
    conn *cc = (conn *)*con_cls;
    size_t k;
    int route = -1, post = !strcmp(method, "POST"), get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    if (!cc) {   /* the first call: headers only */
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        size_t head = 0;
        if (!(cc = (conn *)calloc(1, sizeof *cc))) return MHD_NO;
        *con_cls = cc;
        cc->http = c;
        cc->ollama = !strncmp(url, "/api/", 5);
        cc->t_start = now_s();
        snprintf(cc->method, sizeof cc->method, "%s", method);
        snprintf(cc->path, sizeof cc->path, "%s", url);
        MHD_get_connection_values(c, MHD_HEADER_KIND, header_size, &head);
        /* our own limits below libmicrohttpd's (which answers past them in HTML): JSON answers */
        if (strlen(url) > MAX_URI) {
            cc->responded = 1;
            return send_error(srv, cc, 414, "invalid_request_error", NULL, "the URI is longer than %d bytes", MAX_URI);
        }
        if (head > MAX_HEADERS) {
            cc->responded = 1;
            return send_error(srv, cc, 431, "invalid_request_error", NULL, "the headers are larger than %d bytes", MAX_HEADERS);
        }
        if (strcmp(version, MHD_HTTP_VERSION_1_1) && strcmp(version, MHD_HTTP_VERSION_1_0)) {
            cc->responded = 1;
            return send_error(srv, cc, 505, "invalid_request_error", NULL, "HTTP version %.20s is not supported", version);
        }
        if (cl && strtoull(cl, NULL, 10) > srv->o.max_body) {
            cc->responded = 1;
            return send_error(srv, cc, 413, "invalid_request_error", NULL, "the body is larger than %zu bytes", srv->o.max_body);
        }
        return MHD_YES;
    }
    if (*upload_size) {   /* the body, as it arrives */
        if (!cc->responded) {
            if (cc->body.len + *upload_size > srv->o.max_body) cc->too_big = 1;
            else sb_add(&cc->body, upload, *upload_size);
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (cc->responded) return MHD_YES;
    cc->responded = 1;
    watch_set(srv, c, 0);
    if (cc->too_big) return send_error(srv, cc, 413, "invalid_request_error", NULL, "the body is larger than %zu bytes", srv->o.max_body);
    if (cc->body.failed) return send_error(srv, cc, 500, "server_error", NULL, "out of memory reading the body");
    for (k = 0; k < sizeof routes / sizeof routes[0]; k++)
        if (!strcmp(url, routes[k].path)) { route = (int)k; break; }
    if (route < 0 && !strncmp(url, "/v1/models/", 11) && !strcmp(url + 11, srv->model_id)) route = R_MODEL_ROUTE;
    if (route < 0 && !strncmp(url, "/slots/", 7)) route = R_SLOT_ROUTE;
    if (route < 0) return send_error(srv, cc, 404, "invalid_request_error", NULL, "no such endpoint: %s %.100s", method, url);
    if (!strcmp(method, "OPTIONS")) return send_text(cc, 204, "text/plain", "", 0, 0);
    if ((routes[route].post && !post) || (!routes[route].post && !get)) {
        struct MHD_Response *r;
        char *s;
        cJSON *e = error_json(405, "invalid_request_error", NULL, routes[route].post ? "use POST" : "use GET");
        enum MHD_Result ok;
        s = cJSON_PrintUnformatted(e);
        cJSON_Delete(e);
        r = MHD_create_response_from_buffer(strlen(s), s, MHD_RESPMEM_MUST_FREE);
        MHD_add_response_header(r, "Content-Type", "application/json; charset=utf-8");
        MHD_add_response_header(r, "Allow", routes[route].post ? "POST" : "GET, HEAD");
        ok = MHD_queue_response(c, 405, r);
        MHD_destroy_response(r);
        return ok;
    }
    if (routes[route].id == R_HEALTH) {
        if (!LOAD(srv->loaded)) {
            const char *t = "{\"status\":\"loading\",\"error\":{\"message\":\"Loading model\",\"type\":\"unavailable_error\","
                            "\"param\":null,\"code\":503}}";
            return send_text(cc, 503, "application/json; charset=utf-8", t, strlen(t), 1);
        }
        return send_text(cc, 200, "application/json; charset=utf-8", "{\"status\":\"ok\"}", 15, 0);
    }
    if (!authorized(c, srv->o.api_key))
        return send_error(srv, cc, 401, "authentication_error", NULL, "a missing or wrong API key (Authorization: Bearer KEY)");
    if (!LOAD(srv->loaded)) return send_error(srv, cc, 503, "unavailable_error", NULL, "the model is loading");
    switch (routes[route].id) {
    case R_CHAT: return handle_generate(srv, cc, SRV_CHAT);
    case R_COMPLETION: return handle_generate(srv, cc, SRV_COMPLETION);
    case R_NATIVE: return handle_generate(srv, cc, SRV_NATIVE);
    case R_INFILL: return handle_generate(srv, cc, SRV_INFILL);
    case R_SLOT_ACTION: return handle_slot_action(srv, cc, url + 7);
    case R_OCHAT: return handle_generate(srv, cc, SRV_OLLAMA_CHAT);
    case R_OGEN: return handle_generate(srv, cc, SRV_OLLAMA_GENERATE);
    case R_EMBED: return handle_embed(srv, cc, EMB_OPENAI);
    case R_EMBED_LLAMA: return handle_embed(srv, cc, EMB_LLAMA);
    case R_OEMBED: return handle_embed(srv, cc, EMB_OLLAMA);
    case R_PROPS: return handle_props(srv, cc);
    case R_SLOTS: return handle_slots(srv, cc);
    case R_APPLY: return handle_apply_template(srv, cc);
    case R_MODEL: {
        cJSON *m = model_json(srv);
        return send_json(cc, 200, m);
    }
    case R_OTAGS: return handle_ollama_info(srv, cc, "tags");
    case R_OSHOW: return handle_ollama_info(srv, cc, "show");
    case R_OPS: return handle_ollama_info(srv, cc, "ps");
    case R_OVERSION: return handle_ollama_info(srv, cc, "version");
    case R_MODELS: return handle_models(srv, cc);
    case R_TOKENIZE: return handle_tokenize(srv, cc, 0);
    case R_DETOKENIZE: return handle_tokenize(srv, cc, 1);
    default: return handle_metrics(srv, cc);
    }
}

/* One line per request on stderr: time, method, path, status, slot, prompt / cached / completion
   tokens, time to first token and total, in ms (text, or a JSON object per line). */
static void access_log(conn *cc, enum MHD_RequestTerminationCode why, int json)
{
    char t[96], line[768];
    job *j = cc->job;
    int64_t prompt = 0, gen = 0, drafted = 0, accepted = 0, i;
    char spec[96] = "";
    double total = (now_s() - cc->t_start) * 1e3, ttft = j && j->t_first ? (j->t_first - j->t_arrive) * 1e3 : -1;
    int slot = j ? j->first_slot : -1;
    const char *end = why == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "ok" : "aborted";
    for (i = 0; j && i < j->req.n_prompts; i++) prompt += (int64_t)j->req.n_prompt[i];
    for (i = 0; j && j->embed && i < j->ereq.n; i++) prompt += (int64_t)j->ereq.n_prompt[i];
    if (j) pthread_mutex_lock(&j->mu);   /* a request whose client left may still be generating */
    for (i = 0; j && i < j->n_ch; i++) gen += j->ch[i].n_gen, drafted += j->ch[i].n_drafted, accepted += j->ch[i].n_accepted;
    if (j) pthread_mutex_unlock(&j->mu);
    if (drafted)   /* speculative decoding's tokens drafted and accepted, where it drafted */
        snprintf(spec, sizeof spec, json ? ",\"draft_n\":%lld,\"draft_n_accepted\":%lld" : " draft_n=%lld draft_n_accepted=%lld",
                 (long long)drafted, (long long)accepted);
    iso_time(t, sizeof t);
    if (json)
        snprintf(line, sizeof line, "{\"time\":\"%s\",\"method\":\"%s\",\"path\":\"%.100s\",\"status\":%d,\"slot\":%d,"
                 "\"prompt_tokens\":%lld,\"cached_tokens\":%lld,\"completion_tokens\":%lld%s,\"ttft_ms\":%.1f,"
                 "\"total_ms\":%.1f,\"end\":\"%s\"}", t, cc->method, json_safe_path(cc->path), cc->status, slot, (long long)prompt,
                 (long long)(j ? j->n_cached : 0), (long long)gen, spec, ttft, total, end);
    else
        snprintf(line, sizeof line, "%s %s %.100s %d slot=%d prompt=%lld cached=%lld completion=%lld%s ttft_ms=%.1f total_ms=%.1f %s",
                 t, cc->method, cc->path, cc->status, slot, (long long)prompt, (long long)(j ? j->n_cached : 0),
                 (long long)gen, spec, ttft, total, end);
    fprintf(stderr, "%s\n", line);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why)
{
    server *srv = (server *)cls;
    conn *cc = (conn *)*con_cls;
    watch_set(srv, c, 1);   /* the next request on this connection has its own deadline */
    timeout_on(c, srv->o.timeout);
    if (!cc) return;
    if (!srv->o.log_off) access_log(cc, why, srv->o.log_json);
    if (cc->job) job_release(cc->job);
    free(cc->body.s);
    free(cc);
    *con_cls = NULL;
}

/* Slow clients. libmicrohttpd's timeout closes a connection that sends nothing for --timeout
   seconds, but a client sending a byte a second is never idle. So each connection also has a
   deadline to deliver a whole request (headers and body) in: --timeout seconds from its start or
   from the end of its last response. A watchdog (the main thread) shuts down the socket of any
   connection past it, which makes the connection's own thread see the end and clean up. */
typedef struct watch {
    int fd;
    int reading;               /* a request is being received */
    double deadline;
    struct watch *prev, *next;
} watch;

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    server *srv = (server *)cls;
    watch *w = (watch *)*socket_context;
    pthread_mutex_lock(&srv->wmu);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if ((w = (watch *)calloc(1, sizeof *w)) != NULL) {
            int one = 1;
            w->fd = ci ? ci->connect_fd : -1;
            /* a streamed token is a small write: without this, Nagle's algorithm holds it until
               the client acknowledges the previous one, which a delayed ACK makes 40 ms */
            if (w->fd >= 0) setsockopt(w->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            w->reading = 1;
            w->deadline = now_s() + srv->o.timeout;
            w->next = srv->watches;
            if (srv->watches) srv->watches->prev = w;
            srv->watches = w;
        }
        *socket_context = w;
    } else if (w) {   /* closed */
        if (w->prev) w->prev->next = w->next;
        else srv->watches = w->next;
        if (w->next) w->next->prev = w->prev;
        free(w);
        *socket_context = NULL;
    }
    pthread_mutex_unlock(&srv->wmu);
}

static void watch_set(server *srv, struct MHD_Connection *c, int reading)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    watch *w = ci ? (watch *)ci->socket_context : NULL;
    if (!w) return;
    pthread_mutex_lock(&srv->wmu);
    w->reading = reading;
    w->deadline = now_s() + srv->o.timeout;
    pthread_mutex_unlock(&srv->wmu);
}

static void watchdog(server *srv)
{
    watch *w;
    double t = now_s();
    pthread_mutex_lock(&srv->wmu);
    for (w = srv->watches; w; w = w->next)
        if (w->reading && t > w->deadline && w->fd >= 0) {
            shutdown(w->fd, SHUT_RDWR);
            w->reading = 0;
        }
    pthread_mutex_unlock(&srv->wmu);
}

static void on_signal(int sig)
{
    (void)sig;
    STORE(g_stop, 1);   /* a lock-free atomic store: async-signal-safe */
}

/* ---- main ---- */

/* The stop's deadline: past --shutdown-timeout (*arg, in seconds: a copy, freed here, as main
   may have returned before this thread runs), exit whatever is still open. */
static void *stop_guard(void *arg)
{
    double t = *(double *)arg;
    struct timespec ts;
    free(arg);
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
    fprintf(stderr, "swa-server: --shutdown-timeout passed with connections open: exiting\n");
    _exit(0);
    return NULL;
}

/* Wait until every request has delivered its answer (its job freed), or the guard ends us. */
static void drain_connections(server *srv)
{
    while (LOAD(srv->n_jobs)) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* An integer of the model's metadata, -1 when absent or not an integer. */
static int32_t gguf_int(const swa_gguf *g, const char *key)
{
    int64_t i = swa_gguf_kv_find(g, key), v;
    swa_gguf_value val;
    if (i < 0) return -1;
    val = swa_gguf_kv_value(g, i);
    return swa_gguf_value_int(&val, &v) == SWA_OK && v >= 0 && v <= INT32_MAX ? (int32_t)v : -1;
}

/* Whether a template's text holds "think" or "reasoning", in any case: enable_thinking, <think>,
   [THINK], <|START_THINKING|>, reasoning_content, reasoning_effort. One that holds neither has
   no thinking to turn on. */
static int speaks_of_thinking(const char *s, size_t n)
{
    static const char *const words[] = {"think", "reasoning"};
    size_t i, w;
    for (w = 0; w < 2; w++)
        for (i = 0; i + strlen(words[w]) <= n; i++) {
            size_t k = 0;
            while (words[w][k] && tolower((unsigned char)s[i + k]) == words[w][k]) k++;
            if (!words[w][k]) return 1;
        }
    return 0;
}

/* The model's Jinja template (unless --chat-template chose a family): every chat goes through
   it, and its markers tell the syntax of the calls; a template the engine refuses leaves the
   family's format, with a warning. */
static void setup_jinja(server *srv)
{
    const swa_gguf *g = swa_model_gguf(srv->model);
    swa_gguf_value v;
    swa_str src, piece;
    int64_t k;
    swa_error err;
    swa_status st = srv->o.chat_template ? SWA_ERR_NOT_FOUND : swa_jinja_of(g, &srv->jinja, &err);
    srv->lim.tool_format = SWA_TOOL_FORMAT_GENERIC;
    srv->lim.reasoning = SWA_REASONING_DEEPSEEK;   /* llama-server's "auto" */
    if (st == SWA_OK && (k = swa_gguf_kv_find(g, "tokenizer.chat_template")) >= 0) {
        v = swa_gguf_kv_value(g, k);
        if (swa_gguf_value_str(&v, &src) == SWA_OK) {
            srv->lim.tool_format = swa_tool_format_detect(src.ptr, src.len);
            srv->lim.thinking = speaks_of_thinking(src.ptr, src.len);
        }
    } else if (st != SWA_ERR_NOT_FOUND) {
        fprintf(stderr, "swa-server: warning: the model's chat template is not usable (%s); chats are written in its "
                "family's format\n", err.msg);
    }
    if (swa_vocab_bos(srv->vocab) >= 0 &&
        (piece = swa_vocab_piece(srv->vocab, swa_vocab_bos(srv->vocab))).len < sizeof srv->bos_text)
        memcpy(srv->bos_text, piece.ptr, piece.len), srv->lim.bos_text = srv->bos_text;
    if (srv->eos >= 0 && (piece = swa_vocab_piece(srv->vocab, srv->eos)).len < sizeof srv->eos_text)
        memcpy(srv->eos_text, piece.ptr, piece.len), srv->lim.eos_text = srv->eos_text;
    srv->lim.jinja = srv->jinja;
}

/* --lookup, -md: a verifier per slot, and with -md the draft model (refused unless it has the
   target's vocabulary) in a context per slot, with the target's threads, batch and positions.
   0 after saying why not. */
static int setup_spec(server *srv, const swa_ctx_config *cfg)
{
    swa_ctx_config dc;
    swa_error err;
    int i;
    memset(&dc, 0, sizeof dc);
    dc.n_threads = cfg->n_threads;
    dc.n_batch = cfg->n_batch;
    dc.n_ctx = cfg->n_ctx;
    srv->spec_buf = (int32_t *)malloc((size_t)srv->o.draft_max * sizeof(int32_t));
    srv->spec_out = (int32_t *)malloc((size_t)(srv->o.draft_max + 1) * sizeof(int32_t));
    if (!srv->spec_buf || !srv->spec_out) { fprintf(stderr, "swa-server: out of memory\n"); return 0; }
    if (srv->o.model_draft && swa_model_load(srv->o.model_draft, &srv->draft, &err) != SWA_OK) {
        fprintf(stderr, "swa-server: --model-draft %s: %s\n", srv->o.model_draft, err.msg);
        return 0;
    }
    for (i = 0; i < srv->n_slots; i++)
        if (swa_spec_create(srv->n_vocab, srv->o.draft_max, &srv->slots[i].verifier, &err) != SWA_OK ||
            (srv->draft &&
             swa_drafter_create(srv->draft, srv->model, &dc, NULL, srv->o.draft_max, &srv->slots[i].drafter, &err) != SWA_OK)) {
            fprintf(stderr, "swa-server: %s%s%s%s\n", srv->draft ? "--model-draft " : "", srv->draft ? srv->o.model_draft : "",
                    srv->draft ? ": " : "", err.msg);
            return 0;
        }
    srv->lim.draft_max = srv->o.draft_max;
    srv->lim.draft_model = srv->draft != NULL;
    fprintf(stderr, "swa-server: speculative decoding: drafts of %d..%d tokens %s%s\n", srv->o.draft_min, srv->o.draft_max,
            srv->draft ? "from " : "by prompt lookup", srv->draft ? srv->o.model_draft : "");
    return 1;
}

/* What setup_spec made (nothing when it was not called). */
static void spec_free(server *srv)
{
    int i;
    for (i = 0; i < srv->n_slots; i++) {
        swa_spec_free(srv->slots[i].verifier);
        swa_drafter_free(srv->slots[i].drafter);
    }
    free(srv->spec_buf);
    free(srv->spec_out);
    swa_model_free(srv->draft);
}

static int setup_engine(server *srv)
{
    swa_error err;
    swa_ctx_config cfg;
    const swa_hparams *hp;
    const char *base;
    int i;
    if (swa_model_load(srv->o.model, &srv->model, &err) != SWA_OK) {
        fprintf(stderr, "swa-server: %s\n", err.msg);
        return 0;
    }
    if (swa_model_vocab(srv->model, &srv->vocab, &err) != SWA_OK) {
        fprintf(stderr, "swa-server: the model has no usable vocabulary: %s\n", err.msg);
        return 0;
    }
    hp = swa_model_hparams(srv->model);
    srv->n_vocab = hp->n_vocab;
    if (srv->o.chat_template) srv->tmpl = swa_chat_template_by_name(srv->o.chat_template);
    else if (swa_model_chat_template(srv->model, &srv->tmpl, &err) != SWA_OK) {
        srv->tmpl = swa_chat_template_by_name("llama2");
        fprintf(stderr, "swa-server: %s; chat uses llama2 ([INST] ... [/INST]); --chat-template chooses another\n",
                err.code == SWA_ERR_NOT_FOUND ? "the model has no chat template" : err.msg);
    }
    srv->eos = swa_vocab_eos(srv->vocab);
    srv->eot = swa_chat_template_eot_token(srv->tmpl, srv->vocab);
    setup_jinja(srv);
    cfg = swa_ctx_config_default(srv->model);
    cfg.n_seq = srv->o.parallel;
    cfg.n_threads = srv->o.threads;
    cfg.n_batch = srv->o.n_batch;
    cfg.n_rewind = srv->o.n_rewind;
    if ((srv->o.lookup || srv->o.model_draft) && cfg.n_rewind < srv->o.draft_max)
        cfg.n_rewind = srv->o.draft_max;   /* a draft's rewind */
    if (srv->o.n_ctx) cfg.n_ctx = srv->o.n_ctx;
    if (swa_ctx_create(srv->model, &cfg, &srv->ctx, &err) != SWA_OK) {
        fprintf(stderr, "swa-server: %s\n", err.msg);
        return 0;
    }
    cfg = swa_ctx_config_get(srv->ctx);
    srv->n_slots = srv->o.parallel;
    if (srv->o.cache_ram < 0) srv->o.cache_ram = (int)srv_cache_default_mib();
    srv->cache = srv_cache_create((size_t)srv->o.cache_ram << 20, srv->n_slots);
    if (srv->o.cache_ram && !srv->cache) fprintf(stderr, "swa-server: out of memory for the snapshot cache: none kept\n");
    srv->lim.vocab = srv->vocab;
    srv->lim.tmpl = srv->tmpl;
    srv->lim.n_ctx = cfg.n_ctx;
    srv->lim.n_slots = srv->n_slots;
    srv->lim.draft_p_min = srv->o.draft_p_min;
    srv->lim.fim_pre = gguf_int(swa_model_gguf(srv->model), "tokenizer.ggml.fim_pre_token_id");
    srv->lim.fim_suf = gguf_int(swa_model_gguf(srv->model), "tokenizer.ggml.fim_suf_token_id");
    srv->lim.fim_mid = gguf_int(swa_model_gguf(srv->model), "tokenizer.ggml.fim_mid_token_id");
    srv->lim.fim_rep = gguf_int(swa_model_gguf(srv->model), "tokenizer.ggml.fim_rep_token_id");
    srv->lim.fim_sep = gguf_int(swa_model_gguf(srv->model), "tokenizer.ggml.fim_sep_token_id");
    srv->pooling = srv->o.pooling;
    if (srv->pooling == POOL_FILE) {
        char key[128];
        swa_str arch = {NULL, 0};
        int64_t a = swa_gguf_kv_find(swa_model_gguf(srv->model), "general.architecture");
        swa_gguf_value av;
        if (a >= 0) { av = swa_gguf_kv_value(swa_model_gguf(srv->model), a); swa_gguf_value_str(&av, &arch); }
        snprintf(key, sizeof key, "%.*s.pooling_type", (int)arch.len, arch.ptr ? arch.ptr : "");
        srv->pooling = (int)gguf_int(swa_model_gguf(srv->model), key);
        if (srv->pooling != POOL_CLS && srv->pooling != POOL_LAST) srv->pooling = POOL_MEAN;   /* none or absent: mean */
    }
    srv->slots = (slot *)calloc((size_t)srv->n_slots, sizeof *srv->slots);
    if (!scratch_alloc(srv) || !srv->slots) {
        fprintf(stderr, "swa-server: out of memory\n");
        return 0;
    }
    for (i = 0; i < srv->n_slots; i++) srv->slots[i].state = SLOT_IDLE;
    if ((srv->o.lookup || srv->o.model_draft) && !setup_spec(srv, &cfg)) return 0;
    base = srv->o.alias ? srv->o.alias : strrchr(srv->o.model, '/') ? strrchr(srv->o.model, '/') + 1 : srv->o.model;
    snprintf(srv->model_id, sizeof srv->model_id, "%s", base);
    fprintf(stderr, "swa-server: %s: %d slots of %d positions (window %d, %d of %d layers windowed), %s kernels, "
                    "%d threads, chat template %s, %.1f MB of cache\n",
            srv->model_id, srv->n_slots, cfg.n_ctx, hp->window, hp->n_windowed, hp->n_layer, swa_ctx_kernels(srv->ctx),
            cfg.n_threads, swa_chat_template_name(srv->tmpl), (double)swa_ctx_cache_bytes(srv->ctx) / 1e6);
    return 1;
}

/* Everything setup_engine made, once the connections are closed. */
static void server_free(server *srv)
{
    int i;
    spec_free(srv);
    for (i = 0; i < srv->n_slots; i++) {
        free(srv->slots[i].hist);
        free(srv->slots[i].snap);
        free(srv->slots[i].snap_tok);
    }
    free(srv->slots);
    scratch_free(srv);
    srv_cache_free(srv->cache);
    swa_ctx_free(srv->ctx);
    swa_jinja_free(srv->jinja);
    swa_model_free(srv->model);
}

int main(int argc, char **argv)
{
    server state, *srv = &state;   /* all of the server: each function is given it, or the part it uses */
    struct MHD_Daemon *d;
    struct sockaddr_in addr;
    const union MHD_DaemonInfo *info;
    pthread_t sched;
    struct sigaction sa;
    int i;
    memset(&state, 0, sizeof state);
    if (!parse_args(argc, argv, &srv->o)) return 2;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)srv->o.port);
    if (!strcmp(srv->o.host, "localhost")) srv->o.host = "127.0.0.1";
    if (inet_pton(AF_INET, srv->o.host, &addr.sin_addr) != 1) {
        fprintf(stderr, "swa-server: --host needs an IPv4 address (or localhost), not \"%s\"\n", srv->o.host);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    pthread_mutex_init(&srv->mu, NULL);
    pthread_cond_init(&srv->wake, NULL);
    pthread_mutex_init(&srv->wmu, NULL);
    d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC,
                         0, NULL, NULL,
                         on_request, srv,
                         MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)srv->o.timeout,
                         MHD_OPTION_CONNECTION_LIMIT, (unsigned)srv->o.max_conn,
                         MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(MAX_HEADERS + MAX_URI + 65536),
                         MHD_OPTION_THREAD_STACK_SIZE, (size_t)(256 * 1024),
                         MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
                         MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
                         MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "swa-server: cannot listen on %s:%d: %s\n", srv->o.host, srv->o.port, strerror(errno));
        return 1;
    }
    info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    fprintf(stderr, "swa-server: listening on http://%s:%u (loading %s)\n", srv->o.host,
            info ? (unsigned)info->port : (unsigned)srv->o.port, srv->o.model);
    if (!setup_engine(srv)) {
        MHD_stop_daemon(d);
        return 1;
    }
    if (pthread_create(&sched, NULL, scheduler, srv)) {
        fprintf(stderr, "swa-server: cannot start the scheduler thread\n");
        return 1;
    }
    STORE(srv->loaded, 1);
    fprintf(stderr, "swa-server: ready on http://%s:%u\n", srv->o.host, info ? (unsigned)info->port : (unsigned)srv->o.port);
    while (!LOAD(g_stop)) {
        struct timespec ts = {0, 250 * 1000 * 1000};
        nanosleep(&ts, NULL);
        watchdog(srv);
    }
    /* A graceful stop: no new connections; every request in a slot or in the queue ends now, a
       stream with an error event (and [DONE]), the others with 503 and Retry-After; the
       connections then deliver what they hold, within --shutdown-timeout. */
    fprintf(stderr, "swa-server: stopping\n");
    MHD_quiesce_daemon(d);
    pthread_mutex_lock(&srv->mu);
    srv->stopping = 1;
    pthread_cond_signal(&srv->wake);
    pthread_mutex_unlock(&srv->mu);
    pthread_join(sched, NULL);
    while (srv->ops_waiting) {
        job *j = srv->ops_waiting;
        srv->ops_waiting = j->next;
        op_fail(srv, j, 503, "the server is stopping");
    }
    for (i = 0; i < srv->n_slots; i++)
        if (srv->slots[i].job) job_end(srv, srv->slots[i].job, 503, "the server is stopping");
    pthread_mutex_lock(&srv->mu);
    while (srv->queue_head) {
        job *j = srv->queue_head;
        srv->queue_head = j->next;
        srv->n_queued--;
        pthread_mutex_unlock(&srv->mu);
        job_end(srv, j, 503, "the server is stopping");
        pthread_mutex_lock(&srv->mu);
    }
    srv->queue_tail = NULL;
    pthread_mutex_unlock(&srv->mu);
    {
        pthread_t guard;
        double *t = (double *)malloc(sizeof *t);
        if (t) *t = srv->o.shutdown_timeout;
        if (t && pthread_create(&guard, NULL, stop_guard, t) == 0) pthread_detach(guard);
        else free(t);
    }
    drain_connections(srv);
    MHD_stop_daemon(d);
    server_free(srv);
    return 0;
}
