/* swa-loadgen: load and faults for an OpenAI-compatible server on this machine (loopback only).

   swa-loadgen --port N [-c CLIENTS] [-r REQUESTS] [-n MAX_TOKENS] [--chat] [--faults PERCENT]
               [--api-key KEY] [--slow-limit S] [--check-slots] [--label TEXT]
   swa-loadgen --port N --conversations K --turns T [-c CLIENTS] [-n MAX_TOKENS]

   C clients each send R streaming requests (/v1/completions, or /v1/chat/completions with --chat)
   one after another, over plain sockets, and time them: throughput (generated tokens, counted as
   streamed text events, per second of wall time), time to first token and the time between
   tokens (percentiles), errors. With --faults P, about P% of the requests are faults instead,
   in turn: a client that leaves mid-stream, one that leaves before the answer, headers sent a
   byte a second, a body over the limit, truncated JSON, invalid JSON, invalid UTF-8, nesting
   10,000 deep, a prompt longer than the context, max_tokens past the context; each must get
   the answer the server promises (docs/server.md). --check-slots reads /metrics at the end and
   fails unless every slot is free. Exit status 0 when every well-formed request was answered
   and every fault got its expected answer. Requests go to 127.0.0.1 only: this is a test tool,
   not a way to load another machine.

   With --conversations K --turns T, the clients hold K chats of T turns, taken in turn (the
   first turn of every chat, then the second of every chat, ...): each turn sends the chat so
   far (one system prompt shared by all, each user message and each answer as it was streamed)
   and a new user message, greedily (temperature 0). With fewer slots than chats, a chat finds
   its slot taken by others when it comes back. Besides the times, the prompt tokens the server
   evaluated (its /metrics: swa_prompt_tokens_total, or llama-server's llamacpp:prompt_tokens_total
   when it runs with --metrics). */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef struct opts {
    int port, clients, requests, max_tokens, chat, faults, slow_limit, check_slots, ignore_eos, timeout;
    const char *api_key, *label;
    int conversations, turns;
} opts;

static opts O = {8080, 4, 4, 64, 0, 0, 15, 0, 1, 120, NULL, "", 0, 0};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- results, under mu ---- */

enum { F_NONE = -1, F_LEAVE_STREAM, F_LEAVE_EARLY, F_SLOW, F_BIG, F_TRUNC, F_INVALID, F_UTF8, F_DEEP, F_LONG_PROMPT,
       F_PAST_CTX, F_COUNT };
static const char *fault_names[F_COUNT] = {"leaves mid-stream", "leaves before the answer", "headers a byte a second",
                                           "body over the limit", "truncated JSON", "invalid JSON", "invalid UTF-8",
                                           "nesting 10,000 deep", "prompt longer than the context",
                                           "max_tokens past the context"};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static double *ttft, *itl;
static size_t n_ttft, n_itl, cap_itl;
static long ok_requests, failed_requests, tokens, fault_sent[F_COUNT], fault_ok[F_COUNT];
static char first_error[512];
static long conv_prompt, conv_cached;   /* --conversations: prompt_tokens and cached_tokens the usage reported */

/* The integer after key in line, 0 when absent. */
static long field(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    return p ? strtol(p + strlen(key), NULL, 10) : 0;
}

static void record_itl(double v)
{
    if (n_itl == cap_itl) {
        size_t cap = cap_itl ? 2 * cap_itl : 4096;
        double *p = (double *)realloc(itl, cap * sizeof *p);
        if (!p) return;
        itl = p;
        cap_itl = cap;
    }
    itl[n_itl++] = v;
}

static void note_error(const char *fmt, ...)
{
    va_list ap;
    if (first_error[0]) return;
    va_start(ap, fmt);
    vsnprintf(first_error, sizeof first_error, fmt, ap);
    va_end(ap);
}

/* ---- HTTP over a socket ---- */

static int connect_local(void)
{
    struct sockaddr_in a;
    struct timeval tv;
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0) return -1;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)O.port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);   /* 127.0.0.1, always */
    tv.tv_sec = O.timeout;
    tv.tv_usec = 0;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) { close(fd); return -1; }
    return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_request(int fd, const char *path, const char *body, size_t len)
{
    char head[512];
    int n = snprintf(head, sizeof head,
                     "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n"
                     "%s%s%sContent-Length: %zu\r\n\r\n", path, O.api_key ? "Authorization: Bearer " : "",
                     O.api_key ? O.api_key : "", O.api_key ? "\r\n" : "", len);
    if (send_all(fd, head, (size_t)n)) return -1;
    return send_all(fd, body, len);
}

/* A response read as it arrives: status, then the body de-chunked, events timed as they end. */
typedef struct reader {
    char head[8192];
    size_t n_head;
    int status, chunked, in_body;
    long content_length;       /* -1: not given */
    long body_read;
    long chunk_left;           /* bytes of the current chunk still to come; -1: a size line is next */
    char line[65536];          /* the body's current line (events are lines) */
    size_t n_line;
    char size_line[32];
    size_t n_size;
    int skip_crlf;
    long events, text_events;
    int done_seen, finish_length;
    double t_start, t_first, t_last;
    int stop_after;            /* leave after this many text events (0: never) */
    char *text;                /* with --conversations: the streamed content, JSON-escaped as sent */
    size_t n_text, cap_text;
} reader;

/* The JSON string after "content":" in line, as it is (escapes kept), appended to r->text. */
static void keep_content(reader *r, const char *line)
{
    const char *p = strstr(line, "\"content\":\""), *q;
    if (!p) return;
    p += 11;
    for (q = p; *q && *q != '"'; q++)
        if (*q == '\\' && q[1]) q++;
    if (r->n_text + (size_t)(q - p) + 1 > r->cap_text) {
        size_t cap = 2 * (r->n_text + (size_t)(q - p)) + 256;
        char *t = (char *)realloc(r->text, cap);
        if (!t) return;
        r->text = t;
        r->cap_text = cap;
    }
    memcpy(r->text + r->n_text, p, (size_t)(q - p));
    r->n_text += (size_t)(q - p);
    r->text[r->n_text] = '\0';
}

static void on_line(reader *r)
{
    r->line[r->n_line] = '\0';
    if (!strncmp(r->line, "data: ", 6)) {
        r->events++;
        if (!strcmp(r->line + 6, "[DONE]")) { r->done_seen = 1; return; }
        if (strstr(r->line, "\"finish_reason\":\"length\"")) r->finish_length = 1;
        if (O.conversations) {
            keep_content(r, r->line);
            if (strstr(r->line, "\"usage\":{")) {
                pthread_mutex_lock(&mu);
                conv_prompt += field(r->line, "\"prompt_tokens\":");
                conv_cached += field(r->line, "\"cached_tokens\":");
                pthread_mutex_unlock(&mu);
            }
        }
        /* a token: a non-empty "text" or "content" */
        if ((strstr(r->line, "\"text\":\"") && !strstr(r->line, "\"text\":\"\"")) ||
            (strstr(r->line, "\"content\":\"") && !strstr(r->line, "\"content\":\"\""))) {
            double t = now_s();
            r->text_events++;
            if (!r->t_first) r->t_first = t;
            else {
                pthread_mutex_lock(&mu);
                record_itl(t - r->t_last);
                pthread_mutex_unlock(&mu);
            }
            r->t_last = t;
        }
    } else if (strstr(r->line, "\"finish_reason\":\"length\"")) {
        r->finish_length = 1;
    }
}

static void body_bytes(reader *r, const char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (p[i] == '\n') { on_line(r); r->n_line = 0; }
        else if (r->n_line < sizeof r->line - 1) r->line[r->n_line++] = p[i];
    }
}

/* Feed n bytes from the socket. */
static void feed(reader *r, const char *p, size_t n)
{
    while (n) {
        if (!r->in_body) {
            char *end;
            size_t k = n < sizeof r->head - 1 - r->n_head ? n : sizeof r->head - 1 - r->n_head;
            memcpy(r->head + r->n_head, p, k);
            r->n_head += k;
            r->head[r->n_head] = '\0';
            if (!(end = strstr(r->head, "\r\n\r\n"))) { p += k; n -= k; if (!k) return; continue; }
            {
                size_t used = (size_t)(end + 4 - r->head) - (r->n_head - k);
                sscanf(r->head, "HTTP/1.%*d %d", &r->status);
                const char *cl = strstr(r->head, "Content-Length:");
                if (!cl) cl = strstr(r->head, "content-length:");
                r->content_length = cl ? strtol(cl + 15, NULL, 10) : -1;
                r->chunked = strstr(r->head, "chunked") != NULL || strstr(r->head, "Chunked") != NULL;
                r->in_body = 1;
                r->chunk_left = -1;
                p += used;
                n -= used;
            }
            continue;
        }
        if (!r->chunked) { body_bytes(r, p, n); r->body_read += (long)n; return; }
        if (r->skip_crlf) {
            if (*p == '\r' || *p == '\n') { if (*p == '\n') r->skip_crlf = 0; p++; n--; continue; }
            r->skip_crlf = 0;
        }
        if (r->chunk_left < 0) {   /* a size line */
            if (*p == '\n') {
                r->size_line[r->n_size] = '\0';
                r->chunk_left = strtol(r->size_line, NULL, 16);
                r->n_size = 0;
                if (r->chunk_left == 0) { r->chunk_left = -2; return; }
            } else if (*p != '\r' && r->n_size < sizeof r->size_line - 1) {
                r->size_line[r->n_size++] = *p;
            }
            p++;
            n--;
            continue;
        }
        if (r->chunk_left == -2) return;
        {
            size_t k = (size_t)r->chunk_left < n ? (size_t)r->chunk_left : n;
            body_bytes(r, p, k);
            p += k;
            n -= k;
            r->chunk_left -= (long)k;
            if (r->chunk_left == 0) { r->chunk_left = -1; r->skip_crlf = 1; }
        }
    }
}

/* Read until the server closes (or, with stop_after, until that many text events). */
static int read_response(int fd, reader *r)
{
    char buf[16384];
    for (;;) {
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (r->n_line) { on_line(r); r->n_line = 0; }   /* a body without a last newline */
            return k == 0 ? 0 : -1;
        }
        feed(r, buf, (size_t)k);
        if (r->stop_after && r->text_events >= r->stop_after) return 1;
        /* the whole answer: a server may keep the connection open whatever the request said */
        if (r->done_seen || (r->chunked && r->chunk_left == -2) ||
            (!r->chunked && r->in_body && r->content_length >= 0 && r->body_read >= r->content_length)) {
            if (r->n_line) { on_line(r); r->n_line = 0; }
            return 0;
        }
    }
}

/* One request: send, read, time. Returns the reader's status (0 when none came). */
static int exchange(const char *path, const char *body, size_t len, reader *r, int stop_after)
{
    int fd = connect_local(), rc;
    memset(r, 0, sizeof *r);
    r->stop_after = stop_after;
    r->t_start = now_s();
    if (fd < 0) return 0;
    if (send_request(fd, path, body, len)) {   /* a server may answer before it reads a body it refuses */
        shutdown(fd, SHUT_WR);
    }
    rc = read_response(fd, r);
    (void)rc;
    close(fd);
    return r->status;
}

static const char *openers[] = {"Once upon a time", "One day, a little girl named Lily", "Tom had a red ball",
                                "The sun was shining and the birds", "There was a big dog who", "Sam and his mom went to",
                                "In a small town there lived", "The cat saw a bird on"};

static size_t make_body(char *buf, size_t cap, int i, int max_tokens, int stream)
{
    const char *p = openers[i % (int)(sizeof openers / sizeof openers[0])];
    if (O.chat)
        return (size_t)snprintf(buf, cap, "{\"messages\":[{\"role\":\"user\",\"content\":\"%s\"}],\"max_tokens\":%d,"
                                "\"stream\":%s,\"seed\":%d,\"ignore_eos\":%s}", p, max_tokens, stream ? "true" : "false", i,
                                O.ignore_eos ? "true" : "false");
    return (size_t)snprintf(buf, cap, "{\"prompt\":\"%s\",\"max_tokens\":%d,\"stream\":%s,\"seed\":%d,\"ignore_eos\":%s}", p,
                            max_tokens, stream ? "true" : "false", i, O.ignore_eos ? "true" : "false");
}

static const char *gen_path(void) { return O.chat ? "/v1/chat/completions" : "/v1/completions"; }

/* A streamed generation's outcome counted (the caller holds mu): 1 when it succeeded (status
   200, text and [DONE] seen), its tokens and time to the first one kept; 0 when it failed. */
static int tally_stream(int st, const reader *r)
{
    if (st == 200 && r->done_seen && r->text_events > 0) {
        ok_requests++;
        tokens += r->text_events;
        ttft[n_ttft++] = r->t_first - r->t_start;
        return 1;
    }
    failed_requests++;
    return 0;
}

static void well_formed(int i)
{
    char body[1024];
    reader r;
    size_t len = make_body(body, sizeof body, i, O.max_tokens, 1);
    int st = exchange(gen_path(), body, len, &r, 0);
    pthread_mutex_lock(&mu);
    if (!tally_stream(st, &r))
        note_error("request %d: status %d, %ld text events, [DONE] %s", i, st, r.text_events, r.done_seen ? "seen" : "missing");
    pthread_mutex_unlock(&mu);
}

/* Headers a byte a second: the server must close the connection within --slow-limit seconds. */
static int slow_client(void)
{
    const char *req = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 20\r\n";
    int fd = connect_local(), closed = 0;
    double t0 = now_s();
    size_t i;
    if (fd < 0) return 0;
    for (i = 0; now_s() - t0 < O.slow_limit; i++) {
        char c;
        ssize_t k;
        if (send(fd, req + i % strlen(req), 1, MSG_NOSIGNAL) != 1) { closed = 1; break; }
        k = recv(fd, &c, 1, MSG_DONTWAIT);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) { closed = 1; break; }
        if (k > 0) { closed = 1; break; }   /* an answer (a 408, say) is a close too */
        sleep(1);
    }
    close(fd);
    return closed;
}

static int fault(int kind, int i)
{
    char small[1024], *big;
    reader r;
    size_t len;
    int st, ok = 0;
    switch (kind) {
    case F_LEAVE_STREAM:
        len = make_body(small, sizeof small, i, 1000, 1);
        st = exchange(gen_path(), small, len, &r, 3);
        return st == 200;
    case F_LEAVE_EARLY: {
        int fd = connect_local();
        len = make_body(small, sizeof small, i, 200, 0);
        if (fd < 0) return 0;
        ok = send_request(fd, gen_path(), small, len) == 0;
        close(fd);
        return ok;
    }
    case F_SLOW: return slow_client();
    case F_BIG:
        len = 2u << 20;
        if (!(big = (char *)malloc(len))) return 0;
        memset(big, ' ', len);
        memcpy(big, "{\"prompt\":\"", 11);
        big[len - 2] = '"';
        big[len - 1] = '}';
        st = exchange(gen_path(), big, len, &r, 0);
        free(big);
        return st == 413;
    case F_TRUNC:
        len = make_body(small, sizeof small, i, 8, 0);
        return exchange(gen_path(), small, len / 2, &r, 0) == 400;
    case F_INVALID:
        len = (size_t)snprintf(small, sizeof small, "{\"prompt\": Once upon, \"max_tokens\": 8}");
        return exchange(gen_path(), small, len, &r, 0) == 400;
    case F_UTF8:
        len = (size_t)snprintf(small, sizeof small, O.chat ? "{\"messages\":[{\"role\":\"user\",\"content\":\"Once \xff\xfe\xc3 upon\"}]}"
                                                           : "{\"prompt\":\"Once \xff\xfe\xc3 upon\",\"max_tokens\":8}");
        return exchange(gen_path(), small, len, &r, 0) == 400;
    case F_DEEP:
        len = 20000;
        if (!(big = (char *)malloc(len))) return 0;
        memset(big, '[', len / 2);
        memset(big + len / 2, ']', len / 2);
        st = exchange(gen_path(), big, len, &r, 0);
        free(big);
        return st == 400;
    case F_LONG_PROMPT: {
        size_t k, n = 0, cap = 200000;
        if (!(big = (char *)malloc(cap))) return 0;
        n += (size_t)snprintf(big, cap, "{\"prompt\":\"");
        for (k = 0; k < 8000; k++) n += (size_t)snprintf(big + n, cap - n, "a cat ");
        n += (size_t)snprintf(big + n, cap - n, "\",\"max_tokens\":8}");
        st = exchange("/v1/completions", big, n, &r, 0);
        free(big);
        return st == 400;
    }
    case F_PAST_CTX:
        len = (size_t)snprintf(small, sizeof small, "{\"prompt\":\"Once upon a time\",\"max_tokens\":1000000,\"ignore_eos\":true}");
        st = exchange("/v1/completions", small, len, &r, 0);
        return st == 200 && r.finish_length;
    }
    return 0;
}

static void *client(void *arg)
{
    int c = (int)(long)arg, k;
    for (k = 0; k < O.requests; k++) {
        int i = c * O.requests + k;
        /* faults spread evenly: request i is one when the running share passes the percentage */
        if (O.faults && (i * O.faults) / 100 != ((i + 1) * O.faults) / 100) {
            int kind = ((i + 1) * O.faults / 100) % F_COUNT, good = fault(kind, i);
            pthread_mutex_lock(&mu);
            fault_sent[kind]++;
            fault_ok[kind] += good;
            if (!good) note_error("fault \"%s\" (request %d) did not get its expected answer", fault_names[kind], i);
            pthread_mutex_unlock(&mu);
        } else {
            well_formed(i);
        }
    }
    return NULL;
}

/* ---- conversations (--conversations K --turns T) ---- */

static const char *conv_system =
    "You tell short stories to small children. Every story has a child and an animal in it, a dog, a cat or a "
    "bird, and something that goes wrong and is put right. Use short words and short sentences. When the child "
    "asks for more, go on with the same story, the same names and the same place.";
static const char *conv_names[] = {"Lily", "Tom", "Sam", "Mia", "Ben", "Anna", "Max", "Sue"};
static const char *conv_asks[] = {"Tell me a story about %s and a lost ball.", "What did %s do next?",
                                  "And then what happened to the dog?", "Did %s find a friend?",
                                  "What did they eat for lunch?", "How did the story end?"};

typedef struct conv {
    char **answer;             /* per turn: the streamed content, JSON-escaped */
    int done;                  /* turns answered, under mu */
} conv;

static conv *convs;
static int conv_next;          /* the next (turn, chat) to send, under mu */
static pthread_cond_t conv_cv = PTHREAD_COND_INITIALIZER;

static void cat(char **b, size_t *n, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    int k;
    va_start(ap, fmt);
    k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0 || !*b) return;
    if (*n + (size_t)k + 1 > *cap) {
        char *g = (char *)realloc(*b, 2 * (*n + (size_t)k) + 1);
        if (!g) { free(*b); *b = NULL; return; }
        *b = g;
        *cap = 2 * (*n + (size_t)k) + 1;
    }
    va_start(ap, fmt);
    vsnprintf(*b + *n, *cap - *n, fmt, ap);
    va_end(ap);
    *n += (size_t)k;
}

/* Turn t of chat c: the system prompt, the turns before with their answers, a new question. */
static char *conv_body(int c, int t, size_t *n)
{
    size_t cap = 4096;
    char *b = (char *)malloc(cap), ask[256];
    const char *name = conv_names[c % 8];
    int k;
    *n = 0;
    cat(&b, n, &cap, "{\"messages\":[{\"role\":\"system\",\"content\":\"%s\"}", conv_system);
    for (k = 0; k <= t; k++) {
        snprintf(ask, sizeof ask, conv_asks[k % 6], name);
        if (k == 0) cat(&b, n, &cap, ",{\"role\":\"user\",\"content\":\"I am child number %d. %s\"}", c, ask);
        else cat(&b, n, &cap, ",{\"role\":\"user\",\"content\":\"%s\"}", ask);
        if (k < t) cat(&b, n, &cap, ",{\"role\":\"assistant\",\"content\":\"%s\"}", convs[c].answer[k]);
    }
    cat(&b, n, &cap, "],\"max_tokens\":%d,\"temperature\":0,\"stream\":true,\"stream_options\":{\"include_usage\":true},"
        "\"ignore_eos\":%s}", O.max_tokens, O.ignore_eos ? "true" : "false");
    return b;
}

static void conv_turn(int item)
{
    int c = item % O.conversations, t = item / O.conversations, st;
    size_t len;
    char *body;
    reader r;
    pthread_mutex_lock(&mu);
    while (convs[c].done < t) pthread_cond_wait(&conv_cv, &mu);
    body = conv_body(c, t, &len);
    pthread_mutex_unlock(&mu);
    st = body ? exchange("/v1/chat/completions", body, len, &r, 0) : 0;
    pthread_mutex_lock(&mu);
    if (!tally_stream(st, &r)) note_error("chat %d turn %d: status %d, %ld text events", c, t + 1, st, r.text_events);
    convs[c].answer[t] = r.text ? r.text : strdup("");
    convs[c].done = t + 1;
    pthread_cond_broadcast(&conv_cv);
    pthread_mutex_unlock(&mu);
    free(body);
}

static void *conv_client(void *arg)
{
    (void)arg;
    for (;;) {
        int item;
        pthread_mutex_lock(&mu);
        item = conv_next++;
        pthread_mutex_unlock(&mu);
        if (item >= O.conversations * O.turns) return NULL;
        conv_turn(item);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
    size_t i;
    if (!n) return 0;
    i = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

/* /metrics: the value of the counter or gauge `name`, or -1. */
static long metric(const char *name)
{
    reader r;
    int fd = connect_local();
    const char *req = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    char *p;
    if (fd < 0) return -1;
    memset(&r, 0, sizeof r);
    if (send_all(fd, req, strlen(req))) { close(fd); return -1; }
    {
        static char buf[1 << 18];   /* one caller at a time */
        size_t n = 0;
        ssize_t k;
        while (n < sizeof buf - 1 && (k = recv(fd, buf + n, sizeof buf - 1 - n, 0)) > 0) n += (size_t)k;
        buf[n] = '\0';
        close(fd);
        {
            char key[128];
            snprintf(key, sizeof key, "\n%s ", name);
            p = strstr(buf, key);
            return p ? (long)strtod(p + strlen(key), NULL) : -1;
        }
    }
}

/* The prompt tokens the server evaluated in the run (its /metrics then and now), those sent, and
   those the usage said were cached; the chats' memory is freed. */
static void conv_report(long before)
{
    long after = metric("swa_prompt_tokens_total"), i, t;
    if (after < 0) after = metric("llamacpp:prompt_tokens_total");
    printf("conversations %d x %d turns, %d clients: prompt tokens sent %ld, reported cached %ld, evaluated %s",
           O.conversations, O.turns, O.clients, conv_prompt, conv_cached, before >= 0 && after >= 0 ? "" : "unknown");
    if (before >= 0 && after >= 0) printf("%ld", after - before);
    printf("\n");
    for (i = 0; i < O.conversations; i++) {
        for (t = 0; t < O.turns; t++) free(convs[i].answer[t]);
        free(convs[i].answer);
    }
    free(convs);
}

static void usage(void)
{
    fprintf(stderr, "usage: swa-loadgen --port N [-c CLIENTS] [-r REQUESTS] [-n MAX_TOKENS] [--chat] [--faults PERCENT]\n"
                    "                   [--no-ignore-eos] [--api-key KEY] [--slow-limit S] [--timeout S] [--check-slots] [--label TEXT]\n"
                    "       swa-loadgen --port N --conversations K --turns T [-c CLIENTS] [-n MAX_TOKENS] [--label TEXT]\n");
}

int main(int argc, char **argv)
{
    pthread_t *th;
    double t0, wall;
    int i, bad, k;
    long evaluated = -1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--port")) O.port = atoi(v);
        else if (!strcmp(a, "-c")) O.clients = atoi(v);
        else if (!strcmp(a, "-r")) O.requests = atoi(v);
        else if (!strcmp(a, "-n")) O.max_tokens = atoi(v);
        else if (!strcmp(a, "--faults")) O.faults = atoi(v);
        else if (!strcmp(a, "--slow-limit")) O.slow_limit = atoi(v);
        else if (!strcmp(a, "--timeout")) O.timeout = atoi(v);
        else if (!strcmp(a, "--api-key")) O.api_key = v;
        else if (!strcmp(a, "--label")) O.label = v;
        else if (!strcmp(a, "--conversations")) O.conversations = atoi(v);
        else if (!strcmp(a, "--turns")) O.turns = atoi(v);
        else if (!strcmp(a, "--chat")) { O.chat = 1; continue; }
        else if (!strcmp(a, "--check-slots")) { O.check_slots = 1; continue; }
        else if (!strcmp(a, "--no-ignore-eos")) { O.ignore_eos = 0; continue; }
        else { usage(); return 2; }
        i++;
    }
    if (O.port <= 0 || O.port > 65535 || O.clients < 1 || O.clients > 1024 || O.requests < 1 || O.requests > 100000 ||
        O.max_tokens < 1 || O.faults < 0 || O.faults > 100 || O.slow_limit < 1 || O.timeout < 1 ||
        O.conversations < 0 || O.conversations > 100000 || O.turns < 0 || O.turns > 1000 || !O.conversations != !O.turns ||
        (O.conversations && O.faults)) {
        usage();
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (O.conversations) {
        O.chat = 1;
        O.requests = (O.conversations * O.turns + O.clients - 1) / O.clients;   /* for the report's arrays */
        if (!(convs = (conv *)calloc((size_t)O.conversations, sizeof *convs))) return 1;
        for (i = 0; i < O.conversations; i++)
            if (!(convs[i].answer = (char **)calloc((size_t)O.turns, sizeof(char *)))) return 1;
        evaluated = metric("swa_prompt_tokens_total");
        if (evaluated < 0) evaluated = metric("llamacpp:prompt_tokens_total");
    }
    ttft = (double *)calloc((size_t)O.clients * (size_t)O.requests, sizeof *ttft);
    th = (pthread_t *)calloc((size_t)O.clients, sizeof *th);
    if (!ttft || !th) return 1;
    t0 = now_s();
    for (i = 0; i < O.clients; i++) pthread_create(&th[i], NULL, O.conversations ? conv_client : client, (void *)(long)i);
    for (i = 0; i < O.clients; i++) pthread_join(th[i], NULL);
    wall = now_s() - t0;
    if (O.conversations) conv_report(evaluated);
    qsort(ttft, n_ttft, sizeof *ttft, cmp_double);
    qsort(itl, n_itl, sizeof *itl, cmp_double);
    printf("loadgen%s%s: %d clients x %d requests, max_tokens %d%s: %ld ok, %ld failed, %ld tokens in %.2f s\n",
           *O.label ? " " : "", O.label, O.clients, O.requests, O.max_tokens, O.chat ? " (chat)" : "", ok_requests,
           failed_requests, tokens, wall);
    printf("  throughput %.1f tokens/s; time to first token p50 %.1f p90 %.1f p99 %.1f ms; "
           "between tokens p50 %.1f p90 %.1f p99 %.1f ms\n", (double)tokens / wall,
           1e3 * pct(ttft, n_ttft, 50), 1e3 * pct(ttft, n_ttft, 90), 1e3 * pct(ttft, n_ttft, 99),
           1e3 * pct(itl, n_itl, 50), 1e3 * pct(itl, n_itl, 90), 1e3 * pct(itl, n_itl, 99));
    bad = failed_requests > 0;
    for (k = 0; k < F_COUNT; k++) {
        if (!fault_sent[k]) continue;
        printf("  fault %-32s %ld sent, %ld as expected\n", fault_names[k], fault_sent[k], fault_ok[k]);
        bad |= fault_ok[k] != fault_sent[k];
    }
    if (O.check_slots) {
        long busy = -1;
        double t1 = now_s();
        /* the scheduler frees a slot at its next step: give it a moment */
        while ((busy = metric("swa_slots_busy")) != 0 && now_s() - t1 < 5) { struct timespec ts = {0, 100 * 1000 * 1000}; nanosleep(&ts, NULL); }
        printf("  slots busy after the run: %ld\n", busy);
        if (busy != 0) { bad = 1; note_error("%ld slots still busy after the run", busy); }
    }
    if (first_error[0]) printf("  first error: %s\n", first_error);
    printf("loadgen: %s\n", bad ? "FAILED" : "passed");
    free(ttft);
    free(itl);
    free(th);
    return bad;
}
