/* The library's JSON reader and its JSON string writer: what RFC 8259 accepts and refuses, with
   the line and column of the first error; numbers as integers or reals; escapes, surrogate
   pairs and UTF-8 checked; members in document order; the nesting limit; and strings written
   byte for byte as Python's json.dumps writes them (the expected texts are json.dumps's). */
#define SWA_INTERNALS
#include "swa.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

static swa__json *parse_ok(const char *text)
{
    swa__json *j = NULL;
    swa_error err;
    if (swa__json_parse(text, strlen(text), &j, &err) != SWA_OK) fail_msg("%s: %s", text, err.msg);
    return j;
}

static void test_values_and_order(void **state)
{
    swa__json *j = parse_ok(" {\"b\": [1, -2.5e1, \"x\", true, false, null, {}, []], \"a\": 9007199254740993,"
                            " \"b\": -0, \"\": 1E400} ");
    const swa__json *b, *a;
    (void)state;
    assert_int_equal(j->kind, SWA__JSON_OBJECT);
    assert_int_equal(j->n, 4);
    assert_string_equal(j->items[0].key, "b");
    assert_string_equal(j->items[1].key, "a");
    assert_string_equal(j->items[3].key, "");
    b = &j->items[0];
    assert_int_equal(b->kind, SWA__JSON_ARRAY);
    assert_int_equal(b->n, 8);
    assert_int_equal(b->items[0].kind, SWA__JSON_INT);
    assert_int_equal(b->items[0].i, 1);
    assert_int_equal(b->items[1].kind, SWA__JSON_REAL);
    assert_true(b->items[1].num == -25.0);
    assert_int_equal(b->items[2].kind, SWA__JSON_STRING);
    assert_string_equal(b->items[2].str, "x");
    assert_int_equal(b->items[3].kind, SWA__JSON_TRUE);
    assert_int_equal(b->items[4].kind, SWA__JSON_FALSE);
    assert_int_equal(b->items[5].kind, SWA__JSON_NULL);
    assert_int_equal(b->items[6].kind, SWA__JSON_OBJECT);
    assert_int_equal(b->items[6].n, 0);
    assert_int_equal(b->items[7].kind, SWA__JSON_ARRAY);
    assert_int_equal(b->items[7].n, 0);
    a = swa__json_get(j, "a");
    assert_non_null(a);
    assert_int_equal(a->kind, SWA__JSON_INT);
    assert_true(a->i == 9007199254740993LL);                 /* exact, past a double's 53 bits */
    assert_int_equal(swa__json_get(j, "b")->kind, SWA__JSON_INT);   /* the last of a repeated name */
    assert_null(swa__json_get(j, "c"));
    assert_null(swa__json_get(b, "b"));                      /* not an object */
    assert_int_equal(j->items[3].kind, SWA__JSON_REAL);      /* out of range: infinity, as Python reads it */
    free(j);
}

static void test_integers_and_reals(void **state)
{
    static const struct { const char *text; swa__json_kind kind; double num; } cases[] = {
        {"0", SWA__JSON_INT, 0}, {"-7", SWA__JSON_INT, -7}, {"1.0", SWA__JSON_REAL, 1},
        {"2e3", SWA__JSON_REAL, 2000}, {"-0.5E-1", SWA__JSON_REAL, -0.05},
        {"9223372036854775807", SWA__JSON_INT, 9223372036854775807.0},
        {"9223372036854775808", SWA__JSON_REAL, 9223372036854775808.0},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        swa__json *j = parse_ok(cases[i].text);
        assert_int_equal(j->kind, cases[i].kind);
        assert_true(j->num == cases[i].num);
        free(j);
    }
}

static void test_strings(void **state)
{
    swa__json *j = parse_ok("[\"a\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\\u00e9\\u20AC\\ud83d\\ude00\", \"x\\u0000y\", \"\xc3\xa9\"]");
    (void)state;
    assert_int_equal(j->items[0].len, 9);
    assert_memory_equal(j->items[0].str, "a\"\\/\b\f\n\r\t", 9);
    assert_string_equal(j->items[1].str, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    assert_int_equal(j->items[2].len, 3);                    /* a NUL is kept, not an end */
    assert_memory_equal(j->items[2].str, "x\0y", 4);
    assert_string_equal(j->items[3].str, "\xc3\xa9");
    free(j);
}

/* Texts RFC 8259 refuses, with where the first error is (line, column of characters). */
static void test_refused(void **state)
{
    static const struct { const char *text, *where; } cases[] = {
        {"", "line 1, column 1: expected a value"}, {"[1,]", "line 1, column 4: expected a value"},
        {"{\"a\" 1}", "line 1, column 6: expected ':'"}, {"{\"a\":1,}", "line 1, column 8: expected a member"},
        {"[1 2]", "line 1, column 4: expected ','"}, {"01", "line 1, column 2: text after the value"},
        {"1.", "line 1, column 3: a digit must follow"}, {".5", "line 1, column 1: expected a value"},
        {"+1", "line 1, column 1: expected a value"}, {"1e", "line 1, column 3: an exponent"},
        {"\"abc", "column 5: a string has no closing quote"}, {"\"a\tb\"", "column 3: a control character"},
        {"\"\\x\"", "column 3: an unknown escape"}, {"\"\\u12g4\"", "\\u needs four hex digits"},
        {"\"\\udc00\"", "a low surrogate without a high one"}, {"\"\\ud800x\"", "a high surrogate without a low one"},
        {"\"\xff\"", "not valid UTF-8"}, {"\"\xc3\"", "not valid UTF-8"}, {"\"\xed\xa0\x80\"", "not valid UTF-8"},
        {"tru", "expected a value"}, {"nul", "expected a value"}, {"[\n  1,\n  x]", "line 3, column 3: expected a value"},
        {"{} {}", "line 1, column 4: text after the value"}, {"[\"\xc3\xa9\" 1]", "line 1, column 6: expected ','"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        swa__json *j = (swa__json *)&j;
        swa_error err;
        assert_int_equal(swa__json_parse(cases[i].text, strlen(cases[i].text), &j, &err), SWA_ERR_FORMAT);
        assert_null(j);
        if (!strstr(err.msg, cases[i].where)) fail_msg("%s: \"%s\" does not say \"%s\"", cases[i].text, err.msg, cases[i].where);
    }
}

/* 256 levels are read; one more is refused, and so are a million (the reader stops at the limit). */
static void test_depth(void **state)
{
    size_t depth[3] = {256, 257, 1000000}, k, i;
    (void)state;
    for (k = 0; k < 3; k++) {
        char *t = (char *)malloc(2 * depth[k]);
        swa__json *j = NULL;
        swa_error err;
        assert_non_null(t);
        for (i = 0; i < depth[k]; i++) { t[i] = '['; t[2 * depth[k] - 1 - i] = ']'; }
        assert_int_equal(swa__json_parse(t, 2 * depth[k], &j, &err), k == 0 ? SWA_OK : SWA_ERR_FORMAT);
        if (k) assert_non_null(strstr(err.msg, "nesting deeper than 256"));
        free(j);
        free(t);
    }
}

static void check_written(const char *s, size_t n, int ensure_ascii, const char *want)
{
    swa__buf b;
    char *out;
    memset(&b, 0, sizeof b);
    swa__buf_json_string(&b, s, n, ensure_ascii);
    out = b.p ? b.p : NULL;
    assert_int_equal(b.n, strlen(want));
    assert_memory_equal(out, want, b.n);
    free(b.p);
}

/* The expected texts are Python's: json.dumps(s) and json.dumps(s, ensure_ascii=False). */
static void test_written_as_python(void **state)
{
    static const char ctl[] = "a\"b\\c/d\b\f\n\r\t\x01\x1f\x7f";
    static const char uni[] = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    (void)state;
    check_written(ctl, sizeof ctl - 1, 1, "\"a\\\"b\\\\c/d\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\"");
    check_written(ctl, sizeof ctl - 1, 0, "\"a\\\"b\\\\c/d\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\"");
    check_written(uni, sizeof uni - 1, 1, "\"\\u00e9\\u20ac\\ud83d\\ude00\"");
    check_written(uni, sizeof uni - 1, 0, "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    check_written("\0x", 2, 1, "\"\\u0000x\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_and_order), cmocka_unit_test(test_integers_and_reals),
        cmocka_unit_test(test_strings), cmocka_unit_test(test_refused), cmocka_unit_test(test_depth),
        cmocka_unit_test(test_written_as_python),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
