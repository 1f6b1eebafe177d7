/* swa-server's cache of sequence snapshots in host memory (--cache-ram).

   An entry is a snapshot of one sequence (swa_state_save) and the exact tokens it holds, in
   order: its key. A prompt may start from an entry when the entry's tokens and the prompt share
   a prefix the restored sequence can rewind to (swa_seq_max_rewind: on a windowed layer a few
   tokens, on a full-attention model any); the entry giving the longest such prefix wins. A
   windowed layer keeps W positions, so a snapshot costs O(W) bytes however long the
   conversation. Entries are checked when restored (the library's checksum; a damaged one is
   dropped), bounded by a byte budget, and the least recently used go first.

   Besides entries saved and restored, the cache keeps one "mark" per sequence: a position in
   the prompt being evaluated where a snapshot is to be taken on the way (a prefix other
   prompts are likely to share, such as a system prompt). The scheduler stops each chunk of that
   prompt at the mark (srv_cache_chunk) and reports each chunk done (srv_cache_reached).

   Every function is called by the scheduler thread, except srv_cache_stats, which any thread
   may call. A NULL cache is valid everywhere and keeps nothing. */
#ifndef SWA_SERVER_CACHE_H
#define SWA_SERVER_CACHE_H
#include <stddef.h>
#include <stdint.h>
#include "swa.h"

typedef struct srv_cache srv_cache;

typedef struct srv_cache_stats {
    uint64_t hits;             /* prompts that started from an entry */
    uint64_t misses;           /* prompts for which no entry held more than the slots did */
    uint64_t tokens_restored;  /* prompt tokens those hits did not evaluate */
    uint64_t saves;            /* entries stored */
    uint64_t evictions;        /* entries dropped for room (or found damaged) */
    size_t bytes, entries, limit;
} srv_cache_stats;

/* The default budget in MiB: an eighth of the physical memory, at most 8192. */
size_t srv_cache_default_mib(void);
/* A cache of at most limit bytes for a context of n_seq sequences; NULL when limit is 0 or out
   of memory (then nothing is cached). */
srv_cache *srv_cache_create(size_t limit, int n_seq);
void srv_cache_free(srv_cache *c);

/* Store sequence seq of ctx, which holds exactly tok[0..n) (its position must be n). An entry
   with the same tokens is only marked as used; entries the new one makes useless (a prefix of
   it that it can rewind to) are dropped. 1 when the cache holds it afterwards. */
int srv_cache_save(srv_cache *c, swa_ctx *ctx, int32_t seq, const int32_t *tok, size_t n);

/* For a prompt whose first `want` tokens may come from elsewhere: if an entry gives a longer
   usable prefix than `beat` (what the slots offer), restore it into seq, rewind it to that
   prefix and return its length (seq then holds prompt[0..length)). 0 when none does: seq is
   as it was, unless restoring failed past the load, and then seq is reset (position 0). */
size_t srv_cache_restore(srv_cache *c, swa_ctx *ctx, int32_t seq, const int32_t *prompt, size_t want, size_t beat);

/* The longest prefix of prompt[0..want) any entry shares, usable or not. */
size_t srv_cache_shared(const srv_cache *c, const int32_t *prompt, size_t want);

/* Marks: take a snapshot of seq when its prompt reaches position `at` (0: none). */
void srv_cache_mark(srv_cache *c, int32_t seq, size_t at);
/* How many of `take` prompt tokens, from position `done`, seq may evaluate in this step. */
size_t srv_cache_chunk(const srv_cache *c, int32_t seq, size_t done, size_t take);
/* seq's prompt has reached position done (prompt[0..done) evaluated): save it if marked there. */
void srv_cache_reached(srv_cache *c, swa_ctx *ctx, int32_t seq, const int32_t *prompt, size_t done);

void srv_cache_stats_get(srv_cache *c, srv_cache_stats *st);
#endif
