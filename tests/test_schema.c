/* test_schema.c - JSON Schema to grammar, checked against expectations made without this library:
   llama.cpp's own schema cases (tests/data/schema/llamacpp.txt: texts its grammars must and must
   not match, and the schemas it refuses), Python jsonschema's verdicts on texts drawn from ten
   schemas and mutated (tests/data/schema/reference.txt, see tools/reference/schema_reference.py),
   integer bounds against plain arithmetic, hostile schemas that must fail fast with a message
   naming what is wrong, and texts sampled under a schema's grammar from the shipped model, each
   parsed as JSON and checked against the schema's constraints by code written for each. */
#define SWA_INTERNALS      /* swa__json_parse, to read what the sampler wrote */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/testutil.h"

/* The whole file, NUL-terminated: the test fails when it cannot be read. */
static char *read_text(const char *path)
{
    size_t n;
    return (char *)tu_read_file(path, &n);
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
    if (got == SWA_OK) {   /* converted: the grammar parser refuses it */
        free(gbnf);
        got = swa_grammar_from_json_schema(schema, len, &g, &err);
    } else {
        assert_null(gbnf);
    }
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

/* ---- sampling under a schema's grammar ---- */

static const char *const sample_schemas[] = {
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":12},"
    "\"age\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":120},\"pet\":{\"enum\":[\"cat\",\"dog\",null]}},"
    "\"required\":[\"name\",\"age\"]}",
    "{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"minimum\":-5,\"maximum\":5},\"minItems\":1,\"maxItems\":4}",
    "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\",\"pattern\":\"^[A-Z]{2}-[0-9]{3}$\"},"
    "\"ok\":{\"type\":\"boolean\"},\"tags\":{\"type\":\"array\",\"items\":{\"enum\":[\"a\",\"b\"]},\"maxItems\":3}},"
    "\"required\":[\"id\",\"ok\"]}",
};

static size_t utf8_chars(const char *s, size_t n)
{
    size_t i, c = 0;
    for (i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static int is_str(const swa__json *j, const char *s)
{
    return j->kind == SWA__JSON_STRING && j->len == strlen(s) && !memcmp(j->str, s, j->len);
}

static int is_key(const swa__json *m, const char *key) { return m->key_len == strlen(key) && !memcmp(m->key, key, m->key_len); }

/* Schema 0: name (1 to 12 characters), age (0..120), then pet ("cat", "dog" or null) or nothing. */
static int check_person(const swa__json *v)
{
    size_t len;
    if (v->kind != SWA__JSON_OBJECT || v->n < 2 || v->n > 3 || !is_key(&v->items[0], "name") || !is_key(&v->items[1], "age"))
        return 0;
    len = utf8_chars(v->items[0].str, v->items[0].len);
    if (v->items[0].kind != SWA__JSON_STRING || len < 1 || len > 12) return 0;
    if (v->items[1].kind != SWA__JSON_INT || v->items[1].i < 0 || v->items[1].i > 120) return 0;
    return v->n == 2 || (is_key(&v->items[2], "pet") && (v->items[2].kind == SWA__JSON_NULL ||
                                                         is_str(&v->items[2], "cat") || is_str(&v->items[2], "dog")));
}

/* Schema 1: 1 to 4 integers from -5 to 5. */
static int check_ints(const swa__json *v)
{
    size_t i;
    if (v->kind != SWA__JSON_ARRAY || v->n < 1 || v->n > 4) return 0;
    for (i = 0; i < v->n; i++)
        if (v->items[i].kind != SWA__JSON_INT || v->items[i].i < -5 || v->items[i].i > 5) return 0;
    return 1;
}

/* Schema 2: id (two capitals, '-', three digits), ok (a boolean), then tags (up to 3 of a, b) or nothing. */
static int check_tagged(const swa__json *v)
{
    const swa__json *id, *tags;
    size_t i;
    if (v->kind != SWA__JSON_OBJECT || v->n < 2 || v->n > 3 || !is_key(&v->items[0], "id") || !is_key(&v->items[1], "ok"))
        return 0;
    id = &v->items[0];
    if (id->kind != SWA__JSON_STRING || id->len != 6 || id->str[2] != '-') return 0;
    for (i = 0; i < 6; i++)
        if (i != 2 && !(i < 2 ? id->str[i] >= 'A' && id->str[i] <= 'Z' : id->str[i] >= '0' && id->str[i] <= '9')) return 0;
    if (v->items[1].kind != SWA__JSON_TRUE && v->items[1].kind != SWA__JSON_FALSE) return 0;
    if (v->n == 2) return 1;
    tags = &v->items[2];
    if (!is_key(tags, "tags") || tags->kind != SWA__JSON_ARRAY || tags->n > 3) return 0;
    for (i = 0; i < tags->n; i++)
        if (!is_str(&tags->items[i], "a") && !is_str(&tags->items[i], "b")) return 0;
    return 1;
}

/* One text sampled from the prompt by s (its grammar attached), with a fresh sequence and seed. */
static size_t sample_text(swa_ctx *ctx, swa_sampler *s, const swa_vocab *v, uint64_t seed, char *out, size_t cap)
{
    swa_error err;
    int32_t tok[32];
    const float *logits;
    size_t n_tok, len = 0;
    int i;
    swa_sampler_reseed(s, seed);
    swa_sampler_reset(s);
    if (swa_seq_reset(ctx, 0, &err) || swa_tokenize(v, "Once upon a time", 16, SWA_TOKENIZE_ADD_BOS, tok, 32, &n_tok, &err))
        fail_msg("%s", err.msg);
    for (i = 0; i < 400; i++, n_tok = 1) {
        if (swa_ctx_eval(ctx, tok, n_tok, &logits, &err)) fail_msg("%s", err.msg);
        tok[0] = swa_sampler_sample(s, logits);
        if (tok[0] == swa_vocab_eos(v)) break;
        len += swa_token_to_text(v, tok[0], out + len, cap - 1 - len);
        assert_true(len < cap - 1);
    }
    if (swa_sampler_status(s, &err) != SWA_OK) fail_msg("seed %llu: %s", (unsigned long long)seed, err.msg);
    assert_true(i < 400);                       /* the grammar ended it: the schemas are bounded */
    out[len] = '\0';
    return len;
}

static void test_sampling(void **state)
{
    static int (*const checks[])(const swa__json *) = {check_person, check_ints, check_tagged};
    const char *path = "examples/models/swa-stories.gguf";
    swa_sampler_config sc = swa_sampler_config_default();
    swa_ctx_config ccfg;
    swa_ctx *ctx = NULL;
    swa_model *m = NULL;
    const swa_vocab *v;
    swa_error err;
    size_t k;
    char text[4096];
    uint64_t seed;
    (void)state;
    if (swa_model_load(path, &m, &err) || swa_model_vocab(m, &v, &err)) fail_msg("%s: %s", path, err.msg);
    sc.temperature = 1.0f;                      /* every token the grammar allows may be drawn */
    sc.top_k = 0;
    sc.top_p = 1.0f;
    sc.min_p = 0.0f;
    ccfg = swa_ctx_config_default(m);
    ccfg.n_ctx = 512;
    if (swa_ctx_create(m, &ccfg, &ctx, &err)) fail_msg("%s", err.msg);
    for (k = 0; k < sizeof sample_schemas / sizeof sample_schemas[0]; k++) {
        swa_grammar *g = grammar_of(sample_schemas[k]);
        swa_sampler *s = NULL;
        if (swa_sampler_create(&sc, swa_vocab_size(v), &s, &err) || swa_sampler_set_grammar(s, g, v, &err)) fail_msg("%s", err.msg);
        for (seed = 1; seed <= 50; seed++) {
            size_t len = sample_text(ctx, s, v, seed, text, sizeof text);
            swa__json *doc = NULL;
            if (!matches(g, text, len)) fail_msg("schema %zu, seed %llu: the grammar refuses what it sampled: %s", k,
                                                 (unsigned long long)seed, text);
            if (swa__json_parse(text, len, &doc, &err)) fail_msg("schema %zu, seed %llu: %s: %s", k, (unsigned long long)seed, err.msg, text);
            if (!checks[k](doc)) fail_msg("schema %zu, seed %llu: outside the schema: %s", k, (unsigned long long)seed, text);
            free(doc);
        }
        swa_sampler_free(s);
        swa_grammar_free(g);
    }
    swa_ctx_free(ctx);
    swa_model_free(m);
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
        cmocka_unit_test(test_sampling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
