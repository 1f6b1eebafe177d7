/* swa-server's cache of sequence snapshots in host memory: see server_cache.h. Entries sit in
   one array, scanned whole on each lookup: there are hundreds at most (each holds a window of
   every layer), and a scan compares tokens, far cheaper than evaluating one. */
#define _POSIX_C_SOURCE 200809L
#include "server_cache.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct entry {
    int32_t *tok;              /* the tokens the snapshot holds, in order: the key */
    size_t n;
    void *snap;                /* swa_state_save's bytes */
    size_t size;
    int64_t rewind;            /* how far the restored sequence can step back from n */
    uint64_t used;             /* the clock when last saved or restored */
} entry;

struct srv_cache {
    pthread_mutex_t mu;        /* the entries and the counters, for srv_cache_stats */
    entry *e;
    size_t n, cap;
    uint64_t clock;
    size_t *mark;              /* per sequence: the position to save at, 0 for none */
    int n_seq;
    srv_cache_stats st;
};

size_t srv_cache_default_mib(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    size_t mib = pages > 0 && page > 0 ? (size_t)pages / 8 * (size_t)page >> 20 : 1024;
    return mib < 8192 ? mib : 8192;
}

srv_cache *srv_cache_create(size_t limit, int n_seq)
{
    srv_cache *c;
    if (limit == 0 || n_seq <= 0 || !(c = (srv_cache *)calloc(1, sizeof *c))) return NULL;
    if (!(c->mark = (size_t *)calloc((size_t)n_seq, sizeof *c->mark))) {
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    c->n_seq = n_seq;
    c->st.limit = limit;
    return c;
}

static size_t entry_bytes(const entry *e) { return e->size + e->n * sizeof *e->tok + sizeof *e; }

/* Drop entry i (under mu); the last one takes its place. */
static void drop(srv_cache *c, size_t i)
{
    c->st.bytes -= entry_bytes(&c->e[i]);
    free(c->e[i].tok);
    free(c->e[i].snap);
    c->e[i] = c->e[--c->n];
    c->st.entries = c->n;
}

void srv_cache_free(srv_cache *c)
{
    if (!c) return;
    while (c->n) drop(c, c->n - 1);
    free(c->e);
    free(c->mark);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static size_t common_prefix(const int32_t *a, size_t na, const int32_t *b, size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i]) i++;
    return i;
}

/* The prefix of p[0..want) that entry e can give: the shared tokens, if e rewinds to them. */
static size_t usable(const entry *e, const int32_t *p, size_t want)
{
    size_t cp = common_prefix(e->tok, e->n, p, want);
    return (int64_t)(e->n - cp) <= e->rewind ? cp : 0;
}

/* Make room for `need` more bytes (under mu): the least recently used entries go. */
static void evict_for(srv_cache *c, size_t need)
{
    while (c->n && c->st.bytes + need > c->st.limit) {
        size_t i, old = 0;
        for (i = 1; i < c->n; i++)
            if (c->e[i].used < c->e[old].used) old = i;
        drop(c, old);
        c->st.evictions++;
    }
}

/* Entries e makes useless: each a prefix of e's tokens whose every usable prefix e gives too. */
static void drop_covered(srv_cache *c, const entry *e)
{
    size_t i = 0;
    while (i < c->n) {
        const entry *o = &c->e[i];
        int covered = o->n <= e->n && common_prefix(o->tok, o->n, e->tok, e->n) == o->n &&
                      (int64_t)(e->n - o->n) + o->rewind <= e->rewind;
        if (covered) drop(c, i);
        else i++;
    }
}

/* A snapshot of seq with its tokens, in a new entry (under mu); 0 when it does not fit. */
static int add(srv_cache *c, swa_ctx *ctx, int32_t seq, const int32_t *tok, size_t n)
{
    entry e;
    memset(&e, 0, sizeof e);
    e.n = n;
    e.size = swa_state_size(ctx, seq);
    if (!e.size || entry_bytes(&e) > c->st.limit) return 0;
    evict_for(c, entry_bytes(&e));
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        entry *p = (entry *)realloc(c->e, cap * sizeof *p);
        if (!p) return 0;
        c->e = p;
        c->cap = cap;
    }
    e.tok = (int32_t *)malloc(n * sizeof *tok);
    e.snap = malloc(e.size);
    if (!e.tok || !e.snap || swa_state_save(ctx, seq, e.snap, e.size, NULL, NULL) != SWA_OK) {
        free(e.tok);
        free(e.snap);
        return 0;
    }
    memcpy(e.tok, tok, n * sizeof *tok);
    e.rewind = swa_seq_max_rewind(ctx, seq);
    e.used = ++c->clock;
    drop_covered(c, &e);
    c->e[c->n++] = e;
    c->st.bytes += entry_bytes(&e);
    c->st.entries = c->n;
    c->st.saves++;
    return 1;
}

int srv_cache_save(srv_cache *c, swa_ctx *ctx, int32_t seq, const int32_t *tok, size_t n)
{
    size_t i;
    int ok = 0;
    if (!c || n == 0 || swa_seq_pos(ctx, seq) != (int64_t)n) return 0;
    pthread_mutex_lock(&c->mu);
    for (i = 0; i < c->n && !ok; i++)
        if (c->e[i].n == n && !memcmp(c->e[i].tok, tok, n * sizeof *tok)) {
            c->e[i].used = ++c->clock;
            ok = 1;
        }
    if (!ok) ok = add(c, ctx, seq, tok, n);
    pthread_mutex_unlock(&c->mu);
    return ok;
}

/* The entry giving the longest usable prefix of p[0..want), and that prefix (under mu). */
static size_t best_entry(const srv_cache *c, const int32_t *p, size_t want, size_t *got)
{
    size_t i, best = c->n;
    *got = 0;
    for (i = 0; i < c->n; i++) {
        size_t u = usable(&c->e[i], p, want);
        if (u > *got) { *got = u; best = i; }
    }
    return best;
}

/* Restore entry i into seq and rewind it to `to` tokens (under mu); 0 on failure, with seq as
   it was when the load failed (a damaged entry, dropped) or reset when the rewind did. */
static int restore(srv_cache *c, swa_ctx *ctx, int32_t seq, size_t i, size_t to)
{
    entry *e = &c->e[i];
    if (swa_state_load(ctx, seq, e->snap, e->size, NULL) != SWA_OK) {
        drop(c, i);
        c->st.evictions++;
        return 0;
    }
    if (swa_seq_rewind(ctx, seq, (int64_t)(e->n - to), NULL) != SWA_OK) {
        swa_seq_reset(ctx, seq, NULL);
        return 0;
    }
    e->used = ++c->clock;
    return 1;
}

size_t srv_cache_restore(srv_cache *c, swa_ctx *ctx, int32_t seq, const int32_t *prompt, size_t want, size_t beat)
{
    size_t got, i;
    if (!c) return 0;
    pthread_mutex_lock(&c->mu);
    i = best_entry(c, prompt, want, &got);
    if (got <= beat || !restore(c, ctx, seq, i, got)) got = 0;
    if (got) {
        c->st.hits++;
        c->st.tokens_restored += got;
    } else {
        c->st.misses++;
    }
    pthread_mutex_unlock(&c->mu);
    return got;
}

size_t srv_cache_shared(const srv_cache *c, const int32_t *prompt, size_t want)
{
    size_t i, best = 0;
    if (!c) return 0;
    for (i = 0; i < c->n; i++) {   /* only the scheduler changes entries: no lock to read them */
        size_t cp = common_prefix(c->e[i].tok, c->e[i].n, prompt, want);
        if (cp > best) best = cp;
    }
    return best;
}

void srv_cache_mark(srv_cache *c, int32_t seq, size_t at)
{
    if (c && seq >= 0 && seq < c->n_seq) c->mark[seq] = at;
}

size_t srv_cache_chunk(const srv_cache *c, int32_t seq, size_t done, size_t take)
{
    size_t at = c && seq >= 0 && seq < c->n_seq ? c->mark[seq] : 0;
    return at > done && done + take > at ? at - done : take;
}

void srv_cache_reached(srv_cache *c, swa_ctx *ctx, int32_t seq, const int32_t *prompt, size_t done)
{
    if (!c || seq < 0 || seq >= c->n_seq || c->mark[seq] != done || done == 0) return;
    c->mark[seq] = 0;
    srv_cache_save(c, ctx, seq, prompt, done);
}

void srv_cache_stats_get(srv_cache *c, srv_cache_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    *st = c->st;
    pthread_mutex_unlock(&c->mu);
}
