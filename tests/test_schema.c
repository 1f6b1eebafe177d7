/* test_schema.c - JSON Schema to grammar, checked against expectations made without this library:
   llama.cpp's own schema cases (tests/data/schema/llamacpp.txt: texts its grammars must and must
   not match, and the schemas it refuses), Python jsonschema's verdicts on texts drawn from ten
   schemas and mutated (tests/data/schema/reference.txt, see tools/reference/schema_reference.py),
   integer bounds against plain arithmetic, and hostile schemas that must fail fast with a
   message naming what is wrong. */
#include "swa.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file, NUL-terminated. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    assert_true(n >= 0);
    buf = (char *)malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The grammar of schema (NUL-terminated), which must convert. */
static swa_grammar *grammar_of(const char *schema)
{
    swa_grammar *g = NULL;
    swa_error err;
    if (swa_grammar_from_json_schema(schema, strlen(schema), &g, &err) != SWA_OK)
        fail_msg("schema %.200s: %s", schema, err.msg);
    return g;
}

/* Whether text matches; any error but "no match" fails the test. */
static int matches(const swa_grammar *g, const char *text, size_t len)
{
    swa_error err;
    swa_status st = swa_grammar_match(g, text, len, NULL, &err);
    if (st != SWA_OK && st != SWA_ERR_NO_MATCH) fail_msg("match of %.200s: %s", text, err.msg);
    return st == SWA_OK;
}

static int has(const swa_grammar *g, const char *text) { return matches(g, text, strlen(text)); }

/* A line of the data file, without its newline; NULL at the end. */
static char *next_line(char **p)
{
    char *line = *p, *nl;
    if (!*line) return NULL;
    nl = strchr(line, '\n');
    if (nl) { *nl = '\0'; *p = nl + 1; }
    else *p = line + strlen(line);
    return line;
}

/* Text with each pilcrow (U+00B6, the data files' newline) back to a newline, in place. */
static size_t unpilcrow(char *s)
{
    size_t i, n = 0, len = strlen(s);
    for (i = 0; i < len; i++) {
        if ((unsigned char)s[i] == 0xC2 && (unsigned char)s[i + 1] == 0xB6) { s[n++] = '\n'; i++; }
        else s[n++] = s[i];
    }
    s[n] = '\0';
    return n;
}

/* llama.cpp's cases: "== name", schema lines, "+ text" / "- text"; "!= name", a schema it refuses. */
static void test_llamacpp_cases(void **state)
{
    char *data = read_text("tests/data/schema/llamacpp.txt"), *p = data, *line, schema[4096];
    swa_grammar *g = NULL;
    int refuse = 0, n_texts = 0, n_refused = 0;
    size_t n = 0;
    (void)state;
    assert_non_null(data);
    schema[0] = '\0';
    for (;;) {
        line = next_line(&p);
        if (line && line[0] == '#') continue;
        if (!line || line[0] == '=' || line[0] == '!') {          /* a case ends: check a refused schema */
            if (refuse && n) {
                swa_error err;
                swa_grammar *bad = NULL;
                assert_int_not_equal(swa_grammar_from_json_schema(schema, n, &bad, &err), SWA_OK);
                assert_null(bad);
                n_refused++;
            }
            swa_grammar_free(g);
            g = NULL;
            if (!line) break;
            refuse = line[0] == '!';
            n = 0;
            schema[0] = '\0';
            continue;
        }
        if ((line[0] == '+' || line[0] == '-') && line[1] == ' ') {
            if (!g) g = grammar_of(schema);
            if (matches(g, line + 2, strlen(line + 2)) != (line[0] == '+'))
                fail_msg("schema %s: \"%s\" should %smatch", schema, line + 2, line[0] == '+' ? "" : "not ");
            n_texts++;
            continue;
        }
        assert_true(n + strlen(line) + 2 < sizeof schema);
        n += (size_t)sprintf(schema + n, "%s\n", line);
    }
    assert_true(n_texts >= 200);
    assert_int_equal(n_refused, 2);
    free(data);
}

/* jsonschema's verdicts: every text it rejects is rejected, every valid one in the form the
   grammar promises is accepted; "~" lines are the documented differences, not checked. */
static void test_jsonschema_reference(void **state)
{
    char *data = read_text("tests/data/schema/reference.txt"), *p = data, *line;
    swa_grammar *g = NULL;
    int n_valid = 0, n_invalid = 0, n_schemas = 0;
    (void)state;
    assert_non_null(data);
    while ((line = next_line(&p)) != NULL) {
        if (strncmp(line, "== ", 3) == 0) {
            swa_grammar_free(g);
            g = grammar_of(next_line(&p));
            n_schemas++;
        } else if ((line[0] == '+' || line[0] == '-') && line[1] == ' ') {
            size_t len = unpilcrow(line + 2);
            if (matches(g, line + 2, len) != (line[0] == '+'))
                fail_msg("schema %d: \"%s\" should %smatch", n_schemas, line + 2, line[0] == '+' ? "" : "not ");
            if (line[0] == '+') n_valid++;
            else n_invalid++;
        }
    }
    swa_grammar_free(g);
    assert_int_equal(n_schemas, 10);
    assert_true(n_valid >= 100 && n_invalid >= 200);
    free(data);
}

/* Integer bounds against arithmetic, every value from -2100 to 2100 and the edges of int64. */
static void test_integer_bounds(void **state)
{
    static const struct { const char *schema; long long lo, hi; } cases[] = {
        {"{\"type\":\"integer\",\"minimum\":-123,\"maximum\":42}", -123, 42},
        {"{\"type\":\"integer\",\"minimum\":7,\"maximum\":1999}", 7, 1999},
        {"{\"type\":\"integer\",\"minimum\":-2000,\"maximum\":-101}", -2000, -101},
        {"{\"type\":\"integer\",\"exclusiveMinimum\":-1.5,\"exclusiveMaximum\":99}", -1, 98},
        {"{\"type\":\"integer\",\"minimum\":0.5,\"maximum\":1000.9}", 1, 1000},
        {"{\"type\":\"integer\",\"minimum\":1099}", 1099, 9999999999999999LL},
        {"{\"type\":\"integer\",\"maximum\":-17}", -9999999999999999LL, -17},
        {"{\"type\":\"integer\",\"minimum\":-9223372036854775807,\"maximum\":9223372036854775807}",
         -9223372036854775807LL, 9223372036854775807LL},
    };
    static const long long edges[] = {9999999999999999LL, -9999999999999999LL, 10000000000000000LL,
                                      9223372036854775807LL, -9223372036854775807LL, 1000000000000LL};
    size_t k, e;
    long long x;
    (void)state;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        swa_grammar *g = grammar_of(cases[k].schema);
        char text[32];
        for (x = -2100; x <= 2100 + (long long)(sizeof edges / sizeof edges[0]); x++) {
            long long v = x <= 2100 ? x : edges[x - 2101];
            int n = snprintf(text, sizeof text, "%lld", v);
            if (matches(g, text, (size_t)n) != (v >= cases[k].lo && v <= cases[k].hi))
                fail_msg("%s: %lld", cases[k].schema, v);
        }
        for (e = 0; e < 3; e++) {
            static const char *const never[] = {"-0", "007", "1.0"};
            assert_false(matches(g, never[e], strlen(never[e])));
        }
        swa_grammar_free(g);
    }
}

/* A schema that must fail with status st and a message holding word. */
static void refused(const char *schema, size_t len, swa_status st, const char *word)
{
    swa_error err;
    char *gbnf = (char *)"unchanged";
    swa_grammar *g = (swa_grammar *)&err;
    swa_status got = swa_json_schema_to_grammar(schema, len, &gbnf, &err);
    if (got == SWA_OK) got = swa_grammar_from_json_schema(schema, len, &g, &err);
    else assert_null(gbnf);
    if (got != st || !strstr(err.msg, word))
        fail_msg("%.120s: want %s with \"%s\", got %s: %s", schema, swa_status_str(st), word, swa_status_str(got), err.msg);
}

/* n copies of a, then mid, then n copies of b. */
static char *nest(const char *a, const char *mid, const char *b, int n)
{
    size_t la = strlen(a), lb = strlen(b), lm = strlen(mid), i, k = 0;
    char *s = (char *)malloc((la + lb) * (size_t)n + lm + 1);
    assert_non_null(s);
    for (i = 0; i < (size_t)n; i++, k += la) memcpy(s + k, a, la);
    memcpy(s + k, mid, lm);
    k += lm;
    for (i = 0; i < (size_t)n; i++, k += lb) memcpy(s + k, b, lb);
    s[k] = '\0';
    return s;
}

static void test_refused(void **state)
{
    static const struct { const char *schema; swa_status st; const char *word; } cases[] = {
        {"{\"type\": \"kaboom\"}", SWA_ERR_UNSUPPORTED, "kaboom"},
        {"{\"type\": 123}", SWA_ERR_FORMAT, "type"},
        {"{\"type\": \"object\",", SWA_ERR_FORMAT, "line 1"},
        {"false", SWA_ERR_UNSUPPORTED, "false"},
        {"{\"$ref\": \"https://example.com/s.json\"}", SWA_ERR_UNSUPPORTED, "$ref"},
        {"{\"$ref\": \"#/$defs/missing\"}", SWA_ERR_FORMAT, "missing"},
        {"{\"$ref\": \"#\"}", SWA_ERR_UNSUPPORTED, "itself"},
        {"{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"$ref\":\"#/$defs/a\"}},\"$ref\":\"#/$defs/a\"}", SWA_ERR_FORMAT,
         "left-recursive"},
        {"{\"type\":\"array\",\"items\":{},\"minItems\":1000000000}", SWA_ERR_UNSUPPORTED, "minItems"},
        {"{\"type\":\"array\",\"items\":{},\"maxItems\":1e300}", SWA_ERR_UNSUPPORTED, "maxItems"},
        {"{\"type\":\"array\",\"items\":{},\"minItems\":-1}", SWA_ERR_FORMAT, "minItems"},
        {"{\"type\":\"array\",\"items\":{},\"minItems\":3,\"maxItems\":2}", SWA_ERR_UNSUPPORTED, "maxItems"},
        {"{\"type\":\"string\",\"maxLength\":99999999}", SWA_ERR_UNSUPPORTED, "maxLength"},
        {"{\"type\":\"integer\",\"minimum\":5,\"maximum\":4}", SWA_ERR_UNSUPPORTED, "minimum"},
        {"{\"type\":\"integer\",\"minimum\":1e30}", SWA_ERR_UNSUPPORTED, "minimum"},
        {"{\"pattern\":\"abc\"}", SWA_ERR_UNSUPPORTED, "pattern"},
        {"{\"pattern\":\"^(?=a)b$\"}", SWA_ERR_UNSUPPORTED, "(?"},
        {"{\"pattern\":\"^a{2,1}$\"}", SWA_ERR_UNSUPPORTED, "{m,n}"},
        {"{\"pattern\":\"^a{1000000}$\"}", SWA_ERR_UNSUPPORTED, "10000"},
        {"{\"pattern\":\"^(a$\"}", SWA_ERR_UNSUPPORTED, "'('"},
        {"{\"pattern\":\"^[a$\"}", SWA_ERR_UNSUPPORTED, "']'"},
        {"{\"pattern\":\"^\\\\1$\"}", SWA_ERR_UNSUPPORTED, "escape"},
        {"{\"pattern\":\"^a+?$\"}", SWA_ERR_UNSUPPORTED, "lazy"},
        {"{\"properties\":{\"a\":{}},\"required\":[\"b\"]}", SWA_ERR_UNSUPPORTED, "\"b\""},
        {"{\"enum\": []}", SWA_ERR_FORMAT, "enum"},
        {"{\"anyOf\": {}}", SWA_ERR_FORMAT, "anyOf"},
        {"{\"description\": \"no type\"}", SWA_ERR_UNSUPPORTED, "type"},
    };
    size_t k;
    char *s;
    (void)state;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) refused(cases[k].schema, strlen(cases[k].schema), cases[k].st, cases[k].word);
    s = nest("{\"items\":", "{}", "}", 200);                        /* deeper than the converter goes */
    refused(s, strlen(s), SWA_ERR_UNSUPPORTED, "deeper");
    free(s);
    s = nest("[", "", "]", 500000);                                 /* 1 MB deeper than JSON goes */
    refused(s, strlen(s), SWA_ERR_FORMAT, "256");
    free(s);
    /* a list of types converts its schema once a type: 16^6 conversions are refused, not done */
    s = nest("{\"type\":[\"array\",\"array\",\"array\",\"array\",\"array\",\"array\",\"array\",\"array\","
             "\"array\",\"array\",\"array\",\"array\",\"array\",\"array\",\"array\",\"array\"],\"items\":", "{}", "}", 6);
    refused(s, strlen(s), SWA_ERR_UNSUPPORTED, "100000");
    free(s);
    refused(NULL, 0, SWA_ERR_INVALID_ARG, "NULL");
}

/* A megabyte of schema that is within the limits converts, and quickly. (Not one of thousands
   of optional properties: the grammar's alternatives would keep more parses alive than a match
   allows.) */
static void test_large(void **state)
{
    size_t cap = 1 << 20, n = 0, k = 0;
    char *s = (char *)malloc(cap + 4096), *doc = (char *)malloc(1 << 20);
    swa_grammar *g;
    int i, count;
    (void)state;
    assert_non_null(s);
    assert_non_null(doc);
    n += (size_t)sprintf(s, "{\"type\":\"object\",\"properties\":{");
    for (count = 0; n + 400 < cap - 40000; count++)
        n += (size_t)sprintf(s + n, "%s\"p%05d\":{\"description\":\"%0300d\",\"enum\":[%d,\"v%d\"]}", count ? "," : "", count,
                             0, count, count);
    n += (size_t)sprintf(s + n, "},\"required\":[");
    for (i = 0; i < count; i++) n += (size_t)sprintf(s + n, "%s\"p%05d\"", i ? "," : "", i);
    n += (size_t)sprintf(s + n, "]}");
    assert_true(n > 900000);
    g = grammar_of(s);
    k += (size_t)sprintf(doc, "{");
    for (i = 0; i < count; i++) k += (size_t)sprintf(doc + k, i % 2 ? "%s\"p%05d\": %d" : "%s\"p%05d\": \"v%d\"", i ? ", " : "", i, i);
    sprintf(doc + k, "}");
    assert_true(has(g, doc));
    doc[k - 1] = 'x';
    assert_false(has(g, doc));
    swa_grammar_free(g);
    free(s);
    free(doc);
}

/* What llama.cpp's converter gets wrong and this one must not: a pattern's quote and backslash,
   a constant's backslash, a property name with a quote beside additionalProperties. */
static void test_json_text(void **state)
{
    swa_grammar *g;
    (void)state;
    g = grammar_of("{\"pattern\": \"^a\\\"b\\\\\\\\c$\"}");     /* the string a"b\c */
    assert_true(has(g, "\"a\\\"b\\\\c\""));
    assert_false(has(g, "\"a\"b\\c\""));
    swa_grammar_free(g);
    g = grammar_of("{\"const\": \"x\\\\y\"}");                     /* the string x\y */
    assert_true(has(g, "\"x\\\\y\""));
    assert_false(has(g, "\"x\\y\""));
    swa_grammar_free(g);
    g = grammar_of("{\"pattern\": \"^[^a].$\"}");                  /* never a raw quote or control */
    assert_true(has(g, "\"bc\""));
    assert_false(has(g, "\"\"\"\""));
    assert_false(has(g, "\"b\n\""));
    swa_grammar_free(g);
    g = grammar_of("{\"properties\": {\"q\\\"\": {\"type\": \"integer\"}}, \"additionalProperties\": true}");
    assert_true(has(g, "{\"q\\\"\": 1, \"q\": 2}"));
    assert_false(has(g, "{\"q\\\"\": 1, \"q\\\"\": 2}"));
    swa_grammar_free(g);
    g = grammar_of("{\"pattern\": \"^\\\\d{2}\\\\w\\\\s\\\\S$\"}");
    assert_true(has(g, "\"12_ x\""));
    assert_true(has(g, "\"12a\\tx\""));
    assert_false(has(g, "\"1aa x\""));
    swa_grammar_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llamacpp_cases),
        cmocka_unit_test(test_jsonschema_reference),
        cmocka_unit_test(test_integer_bounds),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_json_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
