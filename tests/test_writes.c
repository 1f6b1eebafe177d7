/* tools/common/safe_write.h on every platform (test_safe_write covers links, signals and the programs
   on POSIX systems): an output that is its input by path or by hard link is refused, a commit
   replaces the destination, an abandoned write leaves it and no temporary file. Built for
   Windows too, where it runs under Wine with the Win32 branches (CreateFile identities,
   MoveFileEx). The expectation is the bytes read back from the file system. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include "tools/common/safe_write.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

static char dir[512];

static void path_in(char *buf, size_t cap, const char *name) { snprintf(buf, cap, "%s/%s", dir, name); }

static int make_hard_link(const char *from, const char *to)
{
#if defined(_WIN32)
    return CreateHardLinkA(to, from, NULL) ? 0 : -1;
#else
    return link(from, to);
#endif
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void expect_text(const char *path, const char *text)
{
    char buf[256];
    size_t n;
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_string_equal(buf, text);
}

/* No file whose name starts with `prefix` and contains ".tmp-" is left in dir. */
static void expect_no_temporary(const char *name)
{
    char probe[600];
    unsigned k;
    /* the names are DEST.tmp-PID-N: try this process's first counters */
    for (k = 0; k < 16; k++) {
        FILE *f;
#if defined(_WIN32)
        snprintf(probe, sizeof probe, "%s/%s.tmp-%lu-%u", dir, name, (unsigned long)GetCurrentProcessId(), k);
#else
        snprintf(probe, sizeof probe, "%s/%s.tmp-%ld-%u", dir, name, (long)getpid(), k);
#endif
        if ((f = fopen(probe, "rb"))) {
            fclose(f);
            fail_msg("%s was left behind", probe);
        }
    }
}

static int setup(void **state)
{
    const char *base = getenv("TEMP") ? getenv("TEMP") : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    (void)state;
#if defined(_WIN32)
    snprintf(dir, sizeof dir, "%s/swa_writes_%lu", base, (unsigned long)GetCurrentProcessId());
    return CreateDirectoryA(dir, NULL) ? 0 : -1;
#else
    snprintf(dir, sizeof dir, "%s/swa_writes_%ld", base, (long)getpid());
    return mkdir(dir, 0700);
#endif
}

static int teardown(void **state)
{
    static const char *names[] = {"in", "hard", "dest"};
    char p[600];
    size_t i;
    (void)state;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        path_in(p, sizeof p, names[i]);
        remove(p);
    }
#if defined(_WIN32)
    return RemoveDirectoryA(dir) ? 0 : -1;
#else
    return rmdir(dir);
#endif
}

static void test_refuses_input(void **state)
{
    char in[600], hard[600], dotted[600];
    const char *inputs[1];
    sw_file out;
    (void)state;
    path_in(in, sizeof in, "in");
    path_in(hard, sizeof hard, "hard");
    snprintf(dotted, sizeof dotted, "%s/./in", dir);
    write_text(in, "the input");
    assert_int_equal(make_hard_link(in, hard), 0);
    inputs[0] = in;
    assert_int_equal(sw_open(&out, in, inputs, 1), -1);
    assert_non_null(strstr(out.error, "is the input file"));
    assert_int_equal(sw_open(&out, dotted, inputs, 1), -1);
    assert_int_equal(sw_open(&out, hard, inputs, 1), -1);
    expect_text(in, "the input");
    expect_no_temporary("in");
    expect_no_temporary("hard");
}

static void test_commit_and_abort(void **state)
{
    char dest[600];
    sw_file out;
    (void)state;
    path_in(dest, sizeof dest, "dest");
    write_text(dest, "precious");
    assert_int_equal(sw_open(&out, dest, NULL, 0), 0);
    fputs("half", out.f);
    sw_abort(&out);
    expect_text(dest, "precious");
    expect_no_temporary("dest");
    assert_int_equal(sw_open(&out, dest, NULL, 0), 0);
    fputs("the new content", out.f);
    assert_int_equal(fflush(out.f), 0);
    expect_text(dest, "precious");           /* nothing replaced before the commit */
    assert_int_equal(sw_commit(&out), 0);
    expect_text(dest, "the new content");
    expect_no_temporary("dest");
    /* a destination that does not exist yet */
    remove(dest);
    assert_int_equal(sw_open(&out, dest, NULL, 0), 0);
    fputs("fresh", out.f);
    assert_int_equal(sw_commit(&out), 0);
    expect_text(dest, "fresh");
}

static void test_missing_folder(void **state)
{
    char dest[600];
    sw_file out;
    (void)state;
    path_in(dest, sizeof dest, "no-such-folder/dest");
    assert_int_equal(sw_open(&out, dest, NULL, 0), -1);
    assert_non_null(strstr(out.error, "cannot create a temporary file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_refuses_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_and_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_folder, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
