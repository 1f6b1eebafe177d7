/* tool.h - what the programs in tools/ share: errors that end the program, checked writes to
   stdout, -h and --version, a flag's number or list of numbers (int_list alone for a program with
   messages of its own), a peer program's flags, Ctrl-C, timing.h's clock, reading a whole file,
   random numbers and, after swa.h, tokenizing a whole text. Define PROG, the program's name for
   its messages, before including it (and _POSIX_C_SOURCE 200809L before the first system header,
   for clock_gettime and sigaction).

   Exit status, in every program: 0 when the work is complete, 1 on an error, 2 for bad usage,
   130 when Ctrl-C stopped it. */
#ifndef SWA_TOOLS_TOOL_H
#define SWA_TOOLS_TOOL_H
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interrupt.h"   /* interrupted(), interrupt_abort */
#include "timing.h"      /* now(), median() */

enum { EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };   /* besides 0 (complete) and 1 (an error) */

/* A message on stderr and exit: status 1 for a file that cannot be read or written. */
_Noreturn static inline void vfail(int status, const char *fmt, va_list ap)
{
    fprintf(stderr, PROG ": ");
    vfprintf(stderr, fmt, ap);
    if (status == EXIT_USAGE) fprintf(stderr, " (see " PROG " --help)");
    fputc('\n', stderr);
    exit(status);   /* an unfinished output is removed at exit (safe_write.h) */
}

_Noreturn static inline void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(1, fmt, ap);
}

/* Bad usage: one line that points at --help, status 2. */
_Noreturn static inline void usage_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(EXIT_USAGE, fmt, ap);
}

/* A flag's whole-number value in lo..hi into *out, else bad usage naming the flag. */
static inline void parse_int(const char *flag, const char *s, long lo, long hi, int32_t *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) usage_fail("%s wants a number in %ld..%ld, got \"%s\"", flag, lo, hi, s);
    *out = (int32_t)v;
}

/* A list of whole numbers separated by commas, each in lo..hi, into out: how many (1 to cap), or
   -1 when s is not such a list. */
static inline int int_list(const char *s, long lo, long hi, int32_t *out, int cap)
{
    const char *p = s;
    int n = 0;
    for (;;) {
        char *end;
        long v;
        errno = 0;
        v = strtol(p, &end, 10);
        if (errno || end == p || (*end && *end != ',') || v < lo || v > hi || n == cap) return -1;
        out[n++] = (int32_t)v;
        if (!*end) return n;
        p = end + 1;
    }
}

/* A flag's list of whole numbers (int_list), else bad usage naming the flag. */
static inline int parse_int_list(const char *flag, const char *s, long lo, long hi, int32_t *out, int cap)
{
    int n = int_list(s, lo, hi, out, cap);
    if (n < 0) usage_fail("%s wants up to %d numbers in %ld..%ld separated by commas, got \"%s\"", flag, cap, lo, hi, s);
    return n;
}

/* Flush stdout and end the program (status 1) if any write to it failed: a closed pipe (with
   SIGPIPE ignored), a full disk. Called after each line a long loop prints, so that a reader
   that went away stops the work, and once at the end. */
static inline void stdout_flush(void)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) fail("cannot write to standard output: %s", strerror(errno ? errno : EIO));
}

/* The flags every program answers the same way: -h or --help prints usage(stdout), --version
   the program's name and the library's version; either ends the program, status 0. Returns for
   any other flag. */
static inline void help_or_version(const char *a, void (*usage)(FILE *))
{
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) usage(stdout);
    else if (!strcmp(a, "--version")) printf("%s %d.%d.%d\n", PROG, SWA_VERSION_MAJOR, SWA_VERSION_MINOR, SWA_VERSION_PATCH);
    else return;
    stdout_flush();
    exit(0);
}

/* A peer program's spelling of a flag, as ours: a itself, or the second of its pair in same
   (n_same pairs: the peer's spelling, ours). A flag in refused (n_refused pairs: the flag, what
   this program does not do) ends the program as bad usage, with that reason. */
static inline const char *peer_flag(const char *a, const char *const same[][2], size_t n_same,
                                    const char *const refused[][2], size_t n_refused)
{
    size_t k;
    for (k = 0; k < n_same; k++)
        if (!strcmp(a, same[k][0])) return same[k][1];
    for (k = 0; k < n_refused; k++)
        if (!strcmp(a, refused[k][0])) usage_fail("%s: " PROG " does not do %s", a, refused[k][1]);
    return a;
}

/* ---- Ctrl-C ----
   catch_interrupt() makes the first SIGINT a request: interrupted() turns true (interrupt.h),
   which the long loops poll, and which the library polls through interrupt_abort
   (swa_ctx_set_abort: between layers) and interrupt_progress (swa_model_params.progress: while a
   model loads). The program then stops with EXIT_INTERRUPTED. The second SIGINT takes the
   default action and ends the program at once. */
static inline void interrupt_handler(int sig) { (void)sig; set_interrupted(1); }
static inline void catch_interrupt(void) { catch_sigint(interrupt_handler, 1); }
static inline int interrupt_progress(float fraction, void *data) { (void)fraction; (void)data; return interrupted(); }

/* End the program for Ctrl-C, saying how far it got. */
_Noreturn static inline void interrupt_exit(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "\n" PROG ": interrupted");
    if (fmt) {
        fprintf(stderr, " ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    exit(EXIT_INTERRUPTED);
}

/* A model, mapped or read into memory (resident), whose loading Ctrl-C stops; the program ends
   with the reason when it does not load. */
static inline swa_model *load_model_or_exit(const char *path, int resident)
{
    swa_model_params mp = swa_model_params_default();
    swa_model *m;
    swa_error err;
    mp.resident = resident;
    mp.progress = interrupt_progress;
    if (swa_model_load_with(path, &mp, &m, &err) != SWA_OK) {
        if (interrupted()) interrupt_exit("while loading the model");
        fail("%s", err.msg);
    }
    return m;
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
