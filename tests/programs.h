/* Where the tests find the programs they run (the Makefile passes its build folder and, for a
   cross build, the emulator that runs them, e.g. qemu-aarch64-static), temporary files to give
   them, and how to run them, read what they print and send them signals. Include after cmocka,
   with _POSIX_C_SOURCE 200809L defined before the first system header (mkstemp, popen,
   clock_gettime). */
#ifndef SWA_TEST_PROGRAMS_H
#define SWA_TEST_PROGRAMS_H
#ifndef SWA_TEST_BIN
#define SWA_TEST_BIN "build/"
#endif
#ifndef SWA_TEST_RUN
#define SWA_TEST_RUN ""
#endif
#define PROGRAM_FILE(name) SWA_TEST_BIN name                  /* for access() */
#define PROGRAM(name) SWA_TEST_RUN SWA_TEST_BIN name          /* to start in a command */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* A new empty file /tmp/swa_test_TAG_XXXXXX; its name in buf. */
static inline void tu_tmp_path(char *buf, size_t cap, const char *tag)
{
    int fd;
    snprintf(buf, cap, "/tmp/swa_test_%s_XXXXXX", tag);
    fd = mkstemp(buf);
    assert_true(fd >= 0);
    close(fd);
}

/* The tests drive the programs through a POSIX shell: on Windows they skip before. */
#ifndef _WIN32
#include <sys/wait.h>

/* The exit status of a shell command: 128 + the signal's number when one killed it. */
static inline int tu_run(const char *cmd)
{
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : WIFSIGNALED(rc) ? 128 + WTERMSIG(rc) : -1;
}

/* A command's stdout (stderr too when the command line says 2>&1); its exit status in *rc. */
static inline char *tu_capture(const char *cmd, int *rc)
{
    FILE *p = popen(cmd, "r");
    size_t cap = 4096, n = 0, got;
    char *buf = (char *)malloc(cap);
    int status;
    assert_non_null(p);
    assert_non_null(buf);
    while ((got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (cap - n < 1024) {
            buf = (char *)realloc(buf, cap *= 2);
            assert_non_null(buf);
        }
    }
    buf[n] = '\0';
    status = pclose(p);
    *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return buf;
}

/* ---- programs running beside the test, to be sent signals ---- */
#include <signal.h>
#include <string.h>
#include <time.h>

/* How long a program may take from SIGINT to its exit: half a second in a plain build (one
   layer's work is far less). ThreadSanitizer runs a handler only at the next call it intercepts
   and the sanitizers and emulators slow every step, so there the tests check what a stop does,
   not how fast (a limit of 10 s). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define TU_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define TU_SANITIZED 1
#endif
static inline double tu_stop_limit(void)
{
#if defined(TU_SANITIZED)
    return 10.0;
#else
    return strlen(SWA_TEST_RUN) > 1 ? 10.0 : 0.5;   /* an emulator runs the programs */
#endif
}

static inline double tu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void tu_sleep(double seconds)
{
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

/* Start a shell command whose last word is exec'd (write "exec PROGRAM ..."), so that the pid
   returned is the program's; stdin_fd, when >= 0, becomes its standard input. */
static inline pid_t tu_spawn(const char *cmd, int stdin_fd)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (stdin_fd >= 0) dup2(stdin_fd, 0);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* The exit status of pid as tu_run gives it, or -1 when it did not end within `seconds` (it is
   then killed). */
static inline int tu_wait(pid_t pid, double seconds)
{
    double end = tu_seconds() + seconds;
    int status;
    for (;;) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
        if (tu_seconds() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        tu_sleep(0.001);
    }
}

/* 1 once the file holds `needle`, 0 if it does not within `seconds`. */
static inline int tu_wait_for_text(const char *path, const char *needle, double seconds)
{
    double end = tu_seconds() + seconds;
    char buf[8192];
    do {
        FILE *f = fopen(path, "rb");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f) fclose(f);
        buf[n] = '\0';
        if (strstr(buf, needle)) return 1;
        tu_sleep(0.005);
    } while (tu_seconds() < end);
    return 0;
}
#endif
#endif
