/* safe_write.h - write an output file so that nothing is lost, for the tools of swa.h.
   Not part of the library. MIT licence, see LICENSE.

       sw_file out;
       const char *inputs[] = {model_path};
       if (sw_open(&out, out_path, inputs, 1)) { fprintf(stderr, "%s\n", out.error); ... }
       fwrite(..., out.f);                              (any stdio writes to out.f)
       if (sw_commit(&out)) { fprintf(stderr, "%s\n", out.error); ... }   or sw_abort(&out)

   sw_open refuses an output that is the same file as one of the inputs, compared as files
   (device and inode, or volume and file index on Windows), so a symbolic or a hard link to
   an input is caught as well as the same path spelled another way. The data goes to a new
   temporary file beside the destination (through a symbolic link: beside its target);
   sw_commit flushes it to the disk, checks every step and only then renames it over the
   destination, which keeps its permissions. On any failure, on exit() before the commit and
   on SIGINT, SIGTERM, SIGHUP or SIGXFSZ (the file size limit), the temporary file is removed
   and the destination is as it was. A destination that exists and is not a regular file
   (/dev/null, /dev/full, a pipe) is written directly, every write checked.

   Every function is static inline: include this header wherever it is needed. */
#ifndef SAFE_WRITE_H
#define SAFE_WRITE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#if defined(_WIN32)
#include <io.h>
#include <windows.h>
#else
#include <signal.h>
#include <unistd.h>
#endif

typedef struct sw_file {
    FILE *f;            /* where to write, between sw_open and sw_commit or sw_abort */
    char *dest;         /* the file that is replaced on commit */
    char *tmp;          /* the temporary file; NULL when writing straight to a device */
    char error[512];    /* why sw_open or sw_commit failed */
} sw_file;

#define SW__MAX_PENDING 8
static char *volatile sw__pending[SW__MAX_PENDING];   /* temporary files to remove on exit */

static inline void sw__remove_pending(void)
{
    int i;
    for (i = 0; i < SW__MAX_PENDING; i++)
        if (sw__pending[i]) remove(sw__pending[i]);
}

/* Remove the unfinished files now; async-signal-safe, for a program's own signal handler (one
   that ends the program: an open sw_file cannot be committed after it). */
static inline void sw_remove_unfinished(void)
{
    int i;
    for (i = 0; i < SW__MAX_PENDING; i++)
        if (sw__pending[i]) {
#if defined(_WIN32)
            remove(sw__pending[i]);
#else
            unlink(sw__pending[i]);   /* async-signal-safe, as remove is not */
#endif
        }
}

#if !defined(_WIN32)
/* Remove what is pending, then die of the signal as if it had never been caught. */
static inline void sw__on_signal(int sig)
{
    sw_remove_unfinished();
    signal(sig, SIG_DFL);
    raise(sig);
}
#endif

/* Once per program: the exit handler and, for each signal the program leaves at its default
   action, the cleanup handler (a program's own SIGINT handler stays in place). */
static inline void sw__install_cleanup(void)
{
    static int installed;
    if (installed) return;
    installed = 1;
    atexit(sw__remove_pending);
#if !defined(_WIN32)
    {
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ};
        size_t i;
        for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
            struct sigaction old, sa;
            if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = sw__on_signal;
            sigemptyset(&sa.sa_mask);
            sigaction(sigs[i], &sa, NULL);
        }
    }
#endif
}

static inline void sw__set_pending(const char *old, char *now)
{
    int i;
    for (i = 0; i < SW__MAX_PENDING; i++)
        if (sw__pending[i] == old) {
            sw__pending[i] = now;
            return;
        }
}

static inline char *sw__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = (char *)malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* 1 when both paths name one existing file, 0 otherwise. */
static inline int sw_same_file(const char *a, const char *b)
{
#if defined(_WIN32)
    BY_HANDLE_FILE_INFORMATION ia, ib;
    HANDLE ha, hb;
    int same = 0;
    ha = CreateFileA(a, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                     FILE_FLAG_BACKUP_SEMANTICS, NULL);
    hb = CreateFileA(b, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                     FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (ha != INVALID_HANDLE_VALUE && hb != INVALID_HANDLE_VALUE && GetFileInformationByHandle(ha, &ia) &&
        GetFileInformationByHandle(hb, &ib))
        same = ia.dwVolumeSerialNumber == ib.dwVolumeSerialNumber && ia.nFileIndexHigh == ib.nFileIndexHigh &&
               ia.nFileIndexLow == ib.nFileIndexLow;
    if (ha != INVALID_HANDLE_VALUE) CloseHandle(ha);
    if (hb != INVALID_HANDLE_VALUE) CloseHandle(hb);
    return same;
#else
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
#endif
}

static inline int sw__fail(sw_file *s, const char *what, const char *path, int err)
{
    snprintf(s->error, sizeof s->error, "%s %.300s: %s", what, path, strerror(err));
    return -1;
}

/* The file a write to `path` lands in: the end of a chain of symbolic links, else `path`. */
static inline char *sw__resolve(const char *path)
{
    char *cur = sw__strdup(path);
#if !defined(_WIN32)
    int hops;
    for (hops = 0; cur && hops < 40; hops++) {
        char target[4096], *next;
        const char *slash;
        struct stat st;
        ssize_t n;
        size_t dir;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) break;
        if ((n = readlink(cur, target, sizeof target - 1)) < 0) break;
        target[n] = '\0';
        slash = strrchr(cur, '/');
        dir = target[0] != '/' && slash ? (size_t)(slash - cur) + 1 : 0;   /* relative to the link's folder */
        if ((next = (char *)malloc(dir + (size_t)n + 1))) {
            memcpy(next, cur, dir);
            memcpy(next + dir, target, (size_t)n + 1);
        }
        free(cur);
        cur = next;
    }
#endif
    return cur;
}

/* A new file beside `dest`, created exclusively: "DEST.tmp-PID-N". */
static inline int sw__create_tmp(sw_file *s)
{
    static unsigned counter;
    size_t cap = strlen(s->dest) + 64;
    int tries, fd = -1;
    if (!(s->tmp = (char *)malloc(cap))) return -1;
    for (tries = 0; tries < 100 && fd < 0; tries++) {
#if defined(_WIN32)
        snprintf(s->tmp, cap, "%s.tmp-%lu-%u", s->dest, (unsigned long)GetCurrentProcessId(), counter++);
        fd = _open(s->tmp, _O_WRONLY | _O_CREAT | _O_EXCL | _O_BINARY, _S_IREAD | _S_IWRITE);
#else
        snprintf(s->tmp, cap, "%s.tmp-%ld-%u", s->dest, (long)getpid(), counter++);
        fd = open(s->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
#endif
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) return -1;
    /* registered before anything can fail, so that exit() or a signal removes it */
    sw__set_pending(NULL, s->tmp);
#if !defined(_WIN32)
    {
        struct stat st;   /* a replaced file keeps its permissions */
        if (stat(s->dest, &st) == 0) (void)fchmod(fd, st.st_mode & 07777);
    }
    s->f = fdopen(fd, "wb");
#else
    s->f = _fdopen(fd, "wb");
#endif
    if (!s->f) {
        int e = errno;
#if defined(_WIN32)
        _close(fd);
#else
        close(fd);
#endif
        errno = e;
        return -1;
    }
    return 0;
}

static inline void sw__release(sw_file *s)
{
    if (s->tmp) {
        remove(s->tmp);
        sw__set_pending(s->tmp, NULL);
    }
    free(s->tmp);
    free(s->dest);
    s->tmp = s->dest = NULL;
    s->f = NULL;
}

/* Open `dest` for writing; `inputs` are the n_inputs files the program reads (NULL entries
   are skipped). 0, or -1 with s->error set and nothing touched. */
static inline int sw_open(sw_file *s, const char *dest, const char *const *inputs, int n_inputs)
{
    struct stat st;
    int i;
    memset(s, 0, sizeof *s);
    for (i = 0; i < n_inputs; i++)
        if (inputs[i] && sw_same_file(inputs[i], dest)) {
            snprintf(s->error, sizeof s->error, "%.200s is the input file %.200s: write the output to another file", dest,
                     inputs[i]);
            return -1;
        }
    sw__install_cleanup();
    if (!(s->dest = sw__resolve(dest))) return sw__fail(s, "cannot write", dest, ENOMEM);
    if (stat(s->dest, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (!(s->f = fopen(s->dest, "wb"))) {
            sw__fail(s, "cannot open", dest, errno);
            sw__release(s);
            return -1;
        }
        return 0;
    }
    if (sw__create_tmp(s)) {
        int e = errno;
        snprintf(s->error, sizeof s->error, "cannot write %.300s: cannot create a temporary file beside it: %s", dest,
                 strerror(e));
        sw__release(s);
        return -1;
    }
    return 0;
}

/* Flush what was written to the disk; fsync fails on some devices, which is no error. */
static inline int sw__sync(sw_file *s)
{
    if (!s->tmp) return 0;
#if defined(_WIN32)
    return _commit(_fileno(s->f));
#else
    if (fsync(fileno(s->f)) != 0) return -1;
#if defined(POSIX_FADV_DONTNEED)
    /* The tools write models, which a later load maps and reads whole: let the written pages
       leave the cache now that they are on disk, so that the mapping reads them back fresh
       (and can get large pages for them). */
    (void)posix_fadvise(fileno(s->f), 0, 0, POSIX_FADV_DONTNEED);
#endif
    return 0;
#endif
}

static inline int sw__rename(const char *from, const char *to)
{
#if defined(_WIN32)
    if (MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) return 0;
    errno = EACCES;
    return -1;
#else
    return rename(from, to);
#endif
}

/* Finish: flush, sync, close and put the file in place. 0, or -1 with s->error set, the
   temporary file removed and the destination untouched. */
static inline int sw_commit(sw_file *s)
{
    int e = 0, closed;
    if (!s->f) {
        if (!s->error[0]) snprintf(s->error, sizeof s->error, "sw_commit: nothing is open");
        sw__release(s);
        return -1;
    }
    if (ferror(s->f)) e = errno ? errno : EIO;
    if (!e && fflush(s->f) != 0) e = errno;
    if (!e && sw__sync(s) != 0) e = errno;
    closed = fclose(s->f);
    s->f = NULL;
    if (!e && closed != 0) e = errno;
    if (!e && s->tmp && sw__rename(s->tmp, s->dest) != 0) e = errno;
    if (e) {
        sw__fail(s, "cannot write", s->dest, e);
        sw__release(s);
        return -1;
    }
    if (s->tmp) sw__set_pending(s->tmp, NULL);
    free(s->tmp);
    s->tmp = NULL;
    free(s->dest);
    s->dest = NULL;
    return 0;
}

/* Give up: close and remove the temporary file; the destination is untouched. */
static inline void sw_abort(sw_file *s)
{
    if (s->f) fclose(s->f);
    s->f = NULL;
    sw__release(s);
}

#endif /* SAFE_WRITE_H */
