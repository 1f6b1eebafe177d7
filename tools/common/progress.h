/* progress.h - one line of progress on stderr for long work (loading a model, evaluating a
   prompt, quantizing, scoring a text), shared by swa-generate and the tools.

   The line appears only when stderr is a terminal, the program was not asked to be quiet
   (--no-progress, --log-disable) and the work has gone on for longer than a second; it is
   redrawn in place ("\r", then spaces over what the previous line left) at most ten times a
   second and wiped when the work ends, so that a script reading stderr, or a terminal after a
   short run, sees none of it. The environment variable SWA_PROGRESS_DELAY=SECONDS changes the
   second (0: from the first step; the tests use it).

       progress p;
       progress_start(&p, !no_progress);
       for (...) progress_show(&p, done, total, "tokens", "prompt");   // prompt: 3200/8000 tokens, 66.1 tokens/s, 1:12 left
       progress_end(&p);

   After swa.h, progress_load_model loads a model under such a line.

   Needs only the C library (with <unistd.h> on POSIX; on Windows <io.h> and <windows.h>, for
   _isatty and QueryPerformanceCounter: no winpthreads). */
#ifndef SWA_TOOLS_PROGRESS_H
#define SWA_TOOLS_PROGRESS_H
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(_WIN32)
#include <io.h>
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN       /* no rpcndr.h, whose `small` macro would rename variables */
#endif
#ifndef NOMINMAX
#define NOMINMAX                  /* no min and max macros */
#endif
#include <windows.h>
#else
#include <unistd.h>
#endif

#define PROGRESS_COLS 79            /* a line never wraps on an 80-column terminal */

typedef struct progress {
    int on;                         /* stderr is a terminal and the line was not turned off */
    double start, last;             /* when the work began; the last redraw (0: none yet) */
    double delay;                   /* seconds of work before the first line */
    int shown;                      /* columns of the line on screen now; 0: none */
} progress;

/* Seconds on a monotonic clock (only differences mean anything). */
static inline double progress_clock(void)
{
#if defined(_WIN32)
    LARGE_INTEGER t, f;
    QueryPerformanceCounter(&t);
    QueryPerformanceFrequency(&f);
    return (double)t.QuadPart / (double)f.QuadPart;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
}

static inline int progress_terminal(void)
{
#if defined(_WIN32)
    return _isatty(_fileno(stderr));
#else
    return isatty(STDERR_FILENO);
#endif
}

/* Start timing a piece of work; `enabled` 0 (the user's --no-progress) draws nothing. */
static inline void progress_start(progress *p, int enabled)
{
    const char *d = getenv("SWA_PROGRESS_DELAY");
    char *end;
    memset(p, 0, sizeof *p);
    p->on = enabled && progress_terminal();
    p->start = progress_clock();
    p->delay = 1.0;
    if (d && *d) {
        double v = strtod(d, &end);
        if (!*end && v >= 0) p->delay = v;
    }
}

/* "1:05" or "2:01:05". */
static inline void progress_duration(char *buf, size_t cap, double s)
{
    long t = s < 0 ? 0 : s > 3.6e6 ? 3600000L : (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else snprintf(buf, cap, "%ld:%02ld", t / 60, t % 60);
}

/* Redraw the line, if it is due: "LABEL: DONE/TOTAL UNIT, RATE UNIT/s, T left", or with unit
   NULL (done and total a fraction) "LABEL: 42%, T left". LABEL is printf's fmt. */
static inline void progress_show(progress *p, double done, double total, const char *unit, const char *fmt, ...)
{
    char line[256], left[32];
    double t = progress_clock(), elapsed = t - p->start, rate = elapsed > 0 ? done / elapsed : 0;
    size_t n;
    va_list ap;
    if (!p->on || elapsed < p->delay || (p->last > 0 && t - p->last < 0.1)) return;
    p->last = t;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    n = strlen(line);
    if (rate > 0 && done < total) progress_duration(left, sizeof left, (total - done) / rate);
    else snprintf(left, sizeof left, "-:--");
    if (unit)
        snprintf(line + n, sizeof line - n, ": %.0f/%.0f %s, %.1f %s/s, %s left", done, total, unit, rate, unit, left);
    else
        snprintf(line + n, sizeof line - n, ": %.0f%%, %s left", total > 0 ? 100.0 * done / total : 0.0, left);
    n = strlen(line);
    if (n > PROGRESS_COLS) {        /* cut, on a character's first byte */
        n = PROGRESS_COLS;
        while (n > 0 && ((unsigned char)line[n] & 0xc0) == 0x80) n--;
        line[n] = '\0';
    }
    fprintf(stderr, "\r%s%*s", line, p->shown > (int)n ? p->shown - (int)n : 0, "");
    if (p->shown > (int)n) fprintf(stderr, "\r%s", line);
    fflush(stderr);
    p->shown = (int)n;
}

/* The work is over: wipe the line if one was drawn. Call before printing anything else to
   stderr (an error, a result), and again is harmless. */
static inline void progress_end(progress *p)
{
    if (p->shown) {
        fprintf(stderr, "\r%*s\r", p->shown, "");
        fflush(stderr);
    }
    p->shown = 0;
    p->on = 0;
}

#ifdef SWA_H
/* Loading a model under a line "loading the model": the line, and stop(), which ends the load
   (SWA_ERR_ABORTED) when it returns nonzero (Ctrl-C). */
typedef struct progress_loading {
    progress line;
    int (*stop)(void);
} progress_loading;

static inline int progress_loading_step(float fraction, void *data)
{
    progress_loading *l = (progress_loading *)data;
    progress_show(&l->line, fraction, 1, NULL, "loading the model");
    return l->stop();
}

/* swa_model_load_with(path, mp, ...) with mp's progress callback set to draw l's line (when
   shown) and to poll l->stop; mp keeps that callback for any later load. */
static inline swa_status progress_load_model(const char *path, swa_model_params *mp, progress_loading *l, int shown,
                                             swa_model **m, swa_error *err)
{
    swa_status st;
    mp->progress = progress_loading_step;
    mp->progress_data = l;
    progress_start(&l->line, shown);
    st = swa_model_load_with(path, mp, m, err);
    progress_end(&l->line);
    return st;
}
#endif /* SWA_H */
#endif
