/* interrupt.h - Ctrl-C as a request, shared by swa-generate and the tools (tool.h).

   The SIGINT handler sets a flag, interrupted() reads it: the long loops poll it, and the
   library polls it through interrupt_abort (swa_ctx_set_abort: between layers) or a load's
   progress callback. The handler may run on any thread (POSIX gives a process's signal to any
   thread that does not block it, Windows runs it on a thread of its own), so the flag is a
   lock-free C11 atomic, which a handler may use (C11 7.14.1.1); before C11, volatile
   sig_atomic_t.

   Needs only the C library (and sigaction on POSIX: define _POSIX_C_SOURCE 200809L before the
   first system header). */
#ifndef SWA_TOOLS_INTERRUPT_H
#define SWA_TOOLS_INTERRUPT_H
#include <signal.h>
#include <string.h>
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
#endif

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_ATOMICS__) && ATOMIC_INT_LOCK_FREE == 2
static inline atomic_int *interrupt_flag(void) { static atomic_int flag; return &flag; }
static inline int interrupted(void) { return atomic_load(interrupt_flag()); }
static inline void set_interrupted(int v) { atomic_store(interrupt_flag(), v); }
#else
static inline volatile sig_atomic_t *interrupt_flag(void) { static volatile sig_atomic_t flag; return &flag; }
static inline int interrupted(void) { return *interrupt_flag(); }
static inline void set_interrupted(int v) { *interrupt_flag() = v; }
#endif

/* The library's callback that stops an evaluation between layers. */
static inline int interrupt_abort(void *data) { (void)data; return interrupted(); }

/* Installs handler for SIGINT. POSIX: through sigaction; with `once`, the handler runs for the
   first SIGINT only, the second taking the default action (SA_RESETHAND), and a read the signal
   interrupts goes on (SA_RESTART); without it the handler stays and an interrupted read returns.
   The Windows C runtime resets a handler to the default as it calls it, whatever `once`. */
static inline void catch_sigint(void (*handler)(int), int once)
{
#if defined(_WIN32)
    (void)once;
    signal(SIGINT, handler);
#else
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = once ? SA_RESETHAND | SA_RESTART : 0;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
#endif
}

#endif
