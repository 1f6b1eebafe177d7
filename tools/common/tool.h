/* tool.h - what the programs in tools/ share: errors that end the program, timing.h's clock,
   reading a whole file, random numbers and, after swa.h, tokenizing a whole text. Define PROG,
   the program's name for its messages, before including it (and _POSIX_C_SOURCE 200809L before
   the first system header, for clock_gettime). */
#ifndef SWA_TOOLS_TOOL_H
#define SWA_TOOLS_TOOL_H
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"   /* now(), median() */

/* A message on stderr and exit: status 1 for a file that cannot be read or written. */
_Noreturn static inline void vfail(int status, const char *fmt, va_list ap)
{
    fprintf(stderr, PROG ": ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    exit(status);   /* an unfinished output is removed at exit (safe_write.h) */
}

_Noreturn static inline void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(1, fmt, ap);
}

/* Bad usage: status 2. */
_Noreturn static inline void usage_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(2, fmt, ap);
}


/* The whole file ("-": standard input), NUL-terminated for convenience (the length in *len is
   what counts). NULL and a message on failure. */
static inline char *read_all(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    char *buf = NULL, *p;
    size_t cap = 0, n = 0, got;
    if (!f) {
        fprintf(stderr, PROG ": cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        if (cap - n < 4096) {
            cap = cap ? cap * 2 : 65536;
            if (!(p = (char *)realloc(buf, cap + 1))) {
                fprintf(stderr, PROG ": out of memory reading %s\n", path);
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                fprintf(stderr, PROG ": cannot read %s: %s\n", path, strerror(errno));
                free(buf);
                buf = NULL;
            }
            break;
        }
    }
    if (f != stdin) fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* ---- random numbers ----
   xorshift64* (Vigna), its state started by splitmix64 so that any seed, 0 and 1 included,
   gives a well-mixed state. swa-mkmodel's weights come from it: changing either function
   changes every file that program writes. */

static inline uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline uint64_t rng_seed(uint64_t seed) { return splitmix64(seed) | 1; }   /* never 0 */

/* The next 64 bits; the high ones are the best, so take a value's bits from the top. */
static inline uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

/* ---- with swa.h, included before this header ---- */
#if defined(SWA_H) && !defined(SWA_NO_TOKENIZER)
/* The ids of len bytes of text in a malloc'd array (the caller frees it), their count in *n:
   room for cap ids first, then exactly the count the library asks for when that is too few.
   NULL and a message on failure. */
static inline int32_t *tokenize_all(const swa_vocab *v, const char *text, size_t len, int flags, size_t cap,
                                    size_t *n)
{
    int32_t *ids = NULL, *p;
    swa_error err;
    swa_status s;
    for (;;) {
        if (!(p = (int32_t *)realloc(ids, (cap ? cap : 1) * sizeof *ids))) {
            fprintf(stderr, PROG ": out of memory for %zu tokens\n", cap);
            break;
        }
        ids = p;
        if ((s = swa_tokenize(v, text, len, flags, ids, cap, n, &err)) == SWA_OK) return ids;
        if (s != SWA_ERR_BUFFER_TOO_SMALL || *n <= cap) {
            fprintf(stderr, PROG ": %s\n", err.msg);
            break;
        }
        cap = *n;
    }
    free(ids);
    return NULL;
}
#endif /* SWA_H */
#endif /* SWA_TOOLS_TOOL_H */
