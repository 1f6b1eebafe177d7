/* tool.h - what the programs in tools/ share: errors that end the program, timing.h's clock and
   reading a whole file. Define PROG, the program's name for its messages, before including it
   (and _POSIX_C_SOURCE 200809L before the first system header, for clock_gettime). */
#ifndef SWA_TOOLS_TOOL_H
#define SWA_TOOLS_TOOL_H
#include <errno.h>
#include <stdarg.h>
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
#endif
