/* Where the tests find the programs they run (the Makefile passes its build folder and, for a
   cross build, the emulator that runs them, e.g. qemu-aarch64-static), temporary files to give
   them, and how to run them and read what they print. Include after cmocka, with
   _POSIX_C_SOURCE 200809L defined before the first system header (mkstemp, popen). */
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
#endif
#endif
