/* Nothing lost when a program writes: tools/common/safe_write.h on its own, then every program that
   writes a file, run as a user runs them with an output that is their input (the same path
   spelled another way, a symbolic link, a hard link), a full device, a file size limit that
   stops the write midway, and an existing destination that must survive a failure. The
   expectation is the file system's: the input's bytes unchanged, the destination's bytes as
   before, no other file left in the folder. Run from the project root after `make`. */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp, symlink, link, fork, setrlimit */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tests/programs.h"
#include <dirent.h>
#include <signal.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tests/testutil.h"

static char dir[64];          /* a fresh folder per test */
static char model[128];       /* a small model in it */

static void path_in(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
}

static void expect_content(const char *path, const void *data, size_t n)
{
    size_t got;
    uint8_t *p = tu_read_file(path, &got);
    if (got != n || memcmp(p, data, n) != 0) fail_msg("%s: %zu bytes, not the %zu expected", path, got, n);
    free(p);
}

/* The folder holds exactly the n names given (besides . and ..): no temporary file left. */
static void expect_only(int n, ...)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int count = 0;
    assert_non_null(d);
    while ((e = readdir(d))) {
        va_list ap;
        int i, known = 0;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        va_start(ap, n);
        for (i = 0; i < n; i++) known |= !strcmp(e->d_name, va_arg(ap, const char *));
        va_end(ap);
        if (!known) fail_msg("%s/%s was left behind", dir, e->d_name);
        count++;
    }
    closedir(d);
    assert_int_equal(count, n);
}

static int setup(void **state)
{
    tu_spec s;
    tu_model tm;
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/swa_safe_write_XXXXXX");
    assert_non_null(mkdtemp(dir));
    memset(&s, 0, sizeof s);
    s.n_layer = 1; s.n_embd = 64; s.n_head = 2; s.n_kv_head = 1; s.n_ff = 64; s.n_vocab = 40;
    s.n_ctx = 32; s.type = GW_F32; s.window = 8; s.seed = 11;
    assert_true(tu_build(&tm, &s));
    path_in(model, sizeof model, "model.gguf");
    tu_write_file(model, tm.gguf, tm.gguf_size);
    tu_free(&tm);
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- the helper ---- */

static void test_refuses_its_input(void **state)
{
    static const char old[] = "the input";
    char in[128], dotted[160], sym[128], hard[128];
    const char *inputs[2];
    sw_file out;
    (void)state;
    path_in(in, sizeof in, "in");
    tu_write_file(in, old, sizeof old);
    snprintf(dotted, sizeof dotted, "%s/./in", dir);
    path_in(sym, sizeof sym, "sym");
    path_in(hard, sizeof hard, "hard");
    assert_int_equal(symlink(in, sym), 0);
    assert_int_equal(link(in, hard), 0);
    inputs[0] = "/nonexistent/other";
    inputs[1] = in;
    assert_int_equal(sw_open(&out, in, inputs, 2), -1);
    assert_non_null(strstr(out.error, "is the input file"));
    assert_int_equal(sw_open(&out, dotted, inputs, 2), -1);
    assert_int_equal(sw_open(&out, sym, inputs, 2), -1);
    assert_int_equal(sw_open(&out, hard, inputs, 2), -1);
    inputs[1] = sym;                                   /* the input named through the link */
    assert_int_equal(sw_open(&out, in, inputs, 2), -1);
    expect_content(in, old, sizeof old);
    remove(model);
    expect_only(3, "in", "sym", "hard");
}

static void test_replaces_when_complete(void **state)
{
    static const char old[] = "precious", new_[] = "the new content";
    char dest[128], sym[128];
    sw_file out;
    struct stat st;
    (void)state;
    remove(model);
    path_in(dest, sizeof dest, "dest");
    tu_write_file(dest, old, sizeof old);
    assert_int_equal(chmod(dest, 0640), 0);
    assert_int_equal(sw_open(&out, dest, NULL, 0), 0);
    assert_int_equal(fwrite(new_, 1, sizeof new_, out.f), sizeof new_);
    assert_int_equal(fflush(out.f), 0);
    expect_content(dest, old, sizeof old);             /* nothing replaced before the commit */
    assert_int_equal(sw_commit(&out), 0);
    expect_content(dest, new_, sizeof new_);
    assert_int_equal(stat(dest, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);         /* the permissions kept */
    /* abandoned: the destination as it was */
    assert_int_equal(sw_open(&out, dest, NULL, 0), 0);
    fputs("half", out.f);
    sw_abort(&out);
    expect_content(dest, new_, sizeof new_);
    /* through a symbolic link: the target replaced, the link kept */
    path_in(sym, sizeof sym, "sym");
    assert_int_equal(symlink("dest", sym), 0);
    assert_int_equal(sw_open(&out, sym, NULL, 0), 0);
    fputs("via the link", out.f);
    assert_int_equal(sw_commit(&out), 0);
    expect_content(dest, "via the link", 12);
    assert_int_equal(lstat(sym, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    expect_only(2, "dest", "sym");
}

static void test_full_device(void **state)
{
    static char block[1 << 16];
    sw_file out;
    (void)state;
    if (access("/dev/full", W_OK) != 0) skip();      /* not a Linux-like system */
    assert_int_equal(sw_open(&out, "/dev/full", NULL, 0), 0);
    fwrite(block, 1, sizeof block, out.f);
    assert_int_equal(sw_commit(&out), -1);
    assert_non_null(strstr(out.error, "/dev/full"));
    assert_non_null(strstr(out.error, strerror(ENOSPC)));
}

/* A write stopped midway by the file size limit: with SIGXFSZ ignored the writes fail and the
   commit reports it; with SIGXFSZ at its default the process dies of it. Either way the
   destination keeps its bytes and no temporary file is left. */
static void write_over_limit(const char *dest, int ignore_signal)
{
    static char block[1 << 16];
    struct rlimit rl;
    sw_file out;
    size_t i;
    rl.rlim_cur = rl.rlim_max = 20000;
    if (ignore_signal) signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(3);
    if (sw_open(&out, dest, NULL, 0) != 0) _exit(4);
    for (i = 0; i < 4; i++) fwrite(block, 1, sizeof block, out.f);
    _exit(sw_commit(&out) == -1 && strstr(out.error, strerror(EFBIG)) ? 0 : 5);
}

static void test_error_midway(void **state)
{
    static const char old[] = "precious";
    char dest[128];
    int mode;
    (void)state;
    remove(model);
    path_in(dest, sizeof dest, "dest");
    tu_write_file(dest, old, sizeof old);
    for (mode = 1; mode >= 0; mode--) {
        int status;
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) write_over_limit(dest, mode);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (mode) assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        else assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ);
        expect_content(dest, old, sizeof old);
        expect_only(1, "dest");
    }
}

/* ---- the programs ---- */

static void need(const char *file)
{
    if (access(file, X_OK) != 0) fail_msg("%s is missing: run make first", file);
}

/* Each program asked to write over its input by path, by ./path, by symbolic and hard link:
   refused with an error exit, the input's bytes unchanged, nothing else left. */
static void test_programs_keep_their_input(void **state)
{
    static const char *fmt[] = {
        PROGRAM("swa-quantize") " %s %s q8_0",
        PROGRAM("swa-inspect") " %s --set-window 4 %s",
        PROGRAM("swa-span") " -m %s -p 10 --svg %s",
        PROGRAM("swa-span") " -m %s -p 10 --png %s",
        PROGRAM("swa-generate") " -m %s --ids 1,2 -n 1 --dump-logits %s",
    };
    char sym[128], hard[128], dotted[160], cmd[1024];
    const char *outs[4];
    size_t n, i, k;
    uint8_t *before;
    (void)state;
    need(PROGRAM_FILE("swa-quantize"));
    need(PROGRAM_FILE("swa-inspect"));
    need(PROGRAM_FILE("swa-span"));
    need(PROGRAM_FILE("swa-generate"));
    before = tu_read_file(model, &n);
    path_in(sym, sizeof sym, "sym.gguf");
    path_in(hard, sizeof hard, "hard.gguf");
    snprintf(dotted, sizeof dotted, "%s/./model.gguf", dir);
    assert_int_equal(symlink("model.gguf", sym), 0);
    assert_int_equal(link(model, hard), 0);
    outs[0] = model; outs[1] = dotted; outs[2] = sym; outs[3] = hard;
    for (i = 0; i < sizeof fmt / sizeof fmt[0]; i++)
        for (k = 0; k < 4; k++) {
            int rc;
            snprintf(cmd, sizeof cmd, fmt[i], model, outs[k]);
            strcat(cmd, " 2>&1 >/dev/null | grep -q 'is the input file'");
            rc = tu_run(cmd);
            if (rc != 0) fail_msg("not refused: %s", cmd);
            expect_content(model, before, n);
            expect_only(3, "model.gguf", "sym.gguf", "hard.gguf");
        }
    /* and the exit status says so */
    snprintf(cmd, sizeof cmd, PROGRAM("swa-quantize") " %s %s q8_0 2>/dev/null", model, sym);
    assert_int_not_equal(tu_run(cmd), 0);
    free(before);
}

/* llama2.c's converter reads a checkpoint and a tokenizer: neither may be its output. */
static void test_convert_keeps_its_input(void **state)
{
    static const char *src[2] = {"../shared/models/stories260K.bin", "../shared/models/tok512.bin"};
    char bin[128], tok[128], sym[128], cmd[1024];
    size_t n;
    uint8_t *before, *tok_before;
    size_t tok_n;
    int i;
    (void)state;
    if (access(src[0], R_OK) != 0 || access(src[1], R_OK) != 0) {
        printf("skipped: ../shared/models/stories260K.bin is absent\n");
        skip();
    }
    need(PROGRAM_FILE("swa-convert-llama2c"));
    path_in(bin, sizeof bin, "m.bin");
    path_in(tok, sizeof tok, "tok.bin");
    before = tu_read_file(src[0], &n);
    tu_write_file(bin, before, n);
    tok_before = tu_read_file(src[1], &tok_n);
    tu_write_file(tok, tok_before, tok_n);
    remove(model);
    path_in(sym, sizeof sym, "sym");
    for (i = 0; i < 2; i++) {
        remove(sym);
        assert_int_equal(symlink(i ? "tok.bin" : "m.bin", sym), 0);
        snprintf(cmd, sizeof cmd, PROGRAM("swa-convert-llama2c") " %s %s %s 2>&1 | grep -q 'is the input file'", bin, tok, sym);
        assert_int_equal(tu_run(cmd), 0);
        snprintf(cmd, sizeof cmd, PROGRAM("swa-convert-llama2c") " %s %s %s 2>/dev/null", bin, tok, sym);
        assert_int_not_equal(tu_run(cmd), 0);
        expect_content(bin, before, n);
        expect_content(tok, tok_before, tok_n);
        expect_only(3, "m.bin", "tok.bin", "sym");
    }
    free(before);
    free(tok_before);
}

/* A full device and a write cut short by the file size limit: an error exit, the existing
   output kept, no temporary file. */
static void test_programs_report_failed_writes(void **state)
{
    static const char old[] = "an older file";
    static const char *fmt[] = {
        PROGRAM("swa-quantize") " %s %s q8_0",
        PROGRAM("swa-inspect") " %s --set-window 4 %s",
        PROGRAM("swa-generate") " -m %s --ids 1,2,3,4,5,6,7,8 -n 8 --dump-logits %s",
    };
    char dest[128], cmd[1024];
    size_t i;
    (void)state;
    need(PROGRAM_FILE("swa-mkmodel"));
    path_in(dest, sizeof dest, "out");
    for (i = 0; i < sizeof fmt / sizeof fmt[0]; i++) {
        if (access("/dev/full", W_OK) == 0) {
            snprintf(cmd, sizeof cmd, fmt[i], model, "/dev/full");
            strcat(cmd, " 2>&1 >/dev/null | grep -q 'No space left'");
            if (tu_run(cmd) != 0) fail_msg("no error reported: %s", cmd);
            snprintf(cmd, sizeof cmd, fmt[i], model, "/dev/full");
            strcat(cmd, " >/dev/null 2>&1");
            assert_int_equal(tu_run(cmd), 1);
        }
        /* 4 blocks of 512 bytes: the model (about 50 KB) and its logits do not fit */
        tu_write_file(dest, old, sizeof old);
        snprintf(cmd, sizeof cmd, "ulimit -f 4; exec ");
        {
            char tail[900];
            snprintf(tail, sizeof tail, fmt[i], model, dest);
            strncat(cmd, tail, sizeof cmd - strlen(cmd) - 40);
        }
        strcat(cmd, " >/dev/null 2>&1");
        assert_int_not_equal(tu_run(cmd), 0);
        expect_content(dest, old, sizeof old);
        expect_only(2, "model.gguf", "out");
    }
    snprintf(cmd, sizeof cmd, PROGRAM("swa-mkmodel") " --shape custom --layers 1 --dim 32 --heads 2 --kv-heads 1 "
             "--ff 32 --vocab 260 --ctx 64 --window 8 --type f32 /dev/full 2>&1 | grep -q 'No space left'");
    if (access("/dev/full", W_OK) == 0) assert_int_equal(tu_run(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_refuses_its_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replaces_when_complete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_midway, setup, teardown),
        cmocka_unit_test_setup_teardown(test_programs_keep_their_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_convert_keeps_its_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_programs_report_failed_writes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
