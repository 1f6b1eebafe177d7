/* GBNF grammars: llama.cpp's grammar test cases (tests/data/grammar/cases.txt), random near-valid
   strings judged by llama.cpp's llama-gbnf-validator (random.txt), refusals with their place,
   hostile grammars, a match arriving in pieces, and constrained sampling on a small vocabulary
   written here (byte fallback, multi-byte pieces; copies sharing the trie, on two threads) and on
   the shipped model. */
#define _POSIX_C_SOURCE 200809L   /* strtok_r */
#define SWA_INTERNALS   /* swa__sampler_trie: which trie a sampler holds */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tests/testutil.h"
#include "tests/programs.h"

#define DATA "tests/data/grammar/"

/* ---- the data files' escapes: \n \t \r \\ \xNN \uNNNN ---- */

static size_t put_utf8(uint32_t c, char *out)
{
    if (c < 0x80) { out[0] = (char)c; return 1; }
    if (c < 0x800) { out[0] = (char)(0xC0 | c >> 6); out[1] = (char)(0x80 | (c & 63)); return 2; }
    out[0] = (char)(0xE0 | c >> 12); out[1] = (char)(0x80 | (c >> 6 & 63)); out[2] = (char)(0x80 | (c & 63));
    return 3;
}

static size_t unescape(const char *s, size_t n, char *out)
{
    size_t i, k = 0;
    for (i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 >= n) { out[k++] = s[i]; continue; }
        switch (s[++i]) {
        case 'n': out[k++] = '\n'; break;
        case 't': out[k++] = '\t'; break;
        case 'r': out[k++] = '\r'; break;
        case 'x': out[k++] = (char)strtol((char[]){s[i + 1], s[i + 2], 0}, NULL, 16); i += 2; break;
        case 'u': k += put_utf8((uint32_t)strtol((char[]){s[i + 1], s[i + 2], s[i + 3], s[i + 4], 0}, NULL, 16), out + k);
                  i += 4; break;
        default: out[k++] = s[i]; break;
        }
    }
    return k;
}

static size_t chars(const char *s, size_t n)
{
    size_t i, c = 0;
    for (i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static swa_grammar *parse_ok(const char *text)
{
    swa_grammar *g = NULL;
    swa_error err;
    if (swa_grammar_parse(text, strlen(text), NULL, &g, &err) != SWA_OK) fail_msg("%s\n%s", err.msg, text);
    return g;
}

/* ---- llama.cpp's cases ---- */

static void check_case(const char *name, const char *grammar, size_t glen, int parses, char **lines, int n_lines)
{
    swa_grammar *g = NULL;
    swa_error err;
    swa_status s = swa_grammar_parse(grammar, glen, NULL, &g, &err);
    int i;
    if (!parses) {
        if (s == SWA_OK) fail_msg("case '%s': the grammar parsed, llama.cpp refuses it", name);
        assert_int_equal(s, SWA_ERR_FORMAT);
        assert_null(g);
        return;
    }
    if (s != SWA_OK) fail_msg("case '%s': %s", name, err.msg);
    for (i = 0; i < n_lines; i++) {
        char buf[4096];
        size_t n = unescape(lines[i] + 2, strlen(lines[i] + 2), buf), where;
        s = swa_grammar_match(g, buf, n, &where, &err);
        if ((s == SWA_OK) != (lines[i][0] == '+'))
            fail_msg("case '%s': \"%s\" %s, llama.cpp says it %s", name, lines[i] + 2, s == SWA_OK ? "matched" : err.msg,
                     lines[i][0] == '+' ? "matches" : "does not");
    }
    swa_grammar_free(g);
}

static void test_llama_cases(void **state)
{
    size_t size;
    char *text = tu_read_text(DATA "cases.txt", &size), *p, *lines[256], grammar[8192], name[256] = "";
    int n_cases = 0, n_lines = 0, parses = -1;
    size_t glen = 0;
    (void)state;
    assert_non_null(text);
    for (p = strtok(text, "\n"); ; p = strtok(NULL, "\n")) {
        if (!p || !strncmp(p, "=== ", 4)) {
            if (parses >= 0) { check_case(name, grammar, glen, parses, lines, n_lines); n_cases++; }
            if (!p) break;
            snprintf(name, sizeof name, "%s", p + 4);
            glen = 0; n_lines = 0; parses = -1;
        } else if (!strncmp(p, "--- ", 4)) {
            parses = !strcmp(p + 4, "parses");
        } else if (parses >= 0 && (p[0] == '+' || p[0] == '-') && p[1] == ' ') {
            lines[n_lines++] = p;
        } else if (p[0] != '#' || glen) {
            glen += (size_t)snprintf(grammar + glen, sizeof grammar - glen, "%s\n", p);
        }
    }
    assert_int_equal(n_cases, 33);
    free(text);
}

/* ---- random strings against llama-gbnf-validator's verdicts ---- */

static void test_random_strings(void **state)
{
    static const char *const names[] = {"json.gbnf", "arithmetic.gbnf", "list.gbnf", "chess.gbnf", "japanese.gbnf"};
    swa_grammar *g[5];
    size_t size;
    char *text = tu_read_text(DATA "random.txt", &size), *p, *save = NULL;
    int i, n = 0;
    (void)state;
    assert_non_null(text);
    for (i = 0; i < 5; i++) {
        char path[128], *gt;
        size_t glen;
        swa_error err;
        snprintf(path, sizeof path, DATA "%s", names[i]);
        assert_non_null(gt = tu_read_text(path, &glen));
        if (swa_grammar_parse(gt, glen, NULL, &g[i], &err) != SWA_OK) fail_msg("%s: %s", path, err.msg);
        free(gt);
    }
    for (p = strtok_r(text, "\n", &save); p; p = strtok_r(NULL, "\n", &save), n++) {
        char *tab1 = strchr(p, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL, buf[2048];
        size_t len, where;
        long want_pos = -1;
        swa_status s;
        assert_non_null(tab2);
        *tab1 = '\0';
        for (i = 0; i < 5 && strcmp(p, names[i]); i++) {}
        assert_true(i < 5);
        if (tab1[1] == '0') want_pos = strtol(tab1 + 3, NULL, 10);
        len = unescape(tab2 + 1, strlen(tab2 + 1), buf);
        s = swa_grammar_match(g[i], buf, len, &where, NULL);
        if ((s == SWA_OK) != (want_pos < 0) || (s != SWA_OK && (long)chars(buf, where) != want_pos))
            fail_msg("%s line %d \"%s\": %s at character %zu; llama-gbnf-validator: %s at %ld", names[i], n + 1,
                     tab2 + 1, s == SWA_OK ? "valid" : "invalid", chars(buf, where), want_pos < 0 ? "valid" : "invalid",
                     want_pos);
    }
    assert_int_equal(n, 3500);
    for (i = 0; i < 5; i++) swa_grammar_free(g[i]);
    free(text);
}

/* ---- refusals ---- */

static void expect_refusal(const char *text, size_t len, const char *msg_part)
{
    swa_grammar *g = (swa_grammar *)1;
    swa_error err;
    swa_status s = swa_grammar_parse(text, len, NULL, &g, &err);
    if (s == SWA_OK) fail_msg("parsed: %.80s", text);
    assert_null(g);
    if (!strstr(err.msg, msg_part)) fail_msg("'%s' does not say '%s'", err.msg, msg_part);
}

static void refuse(const char *text, const char *msg_part) { expect_refusal(text, strlen(text), msg_part); }

static void test_refusals(void **state)
{
    (void)state;
    refuse("root ::= \"a\"\nfoo ::= \"b\" bar\n", "line 2, column 13: undefined rule 'bar'");
    refuse("root ::= \"a\" |\n  \"b\" )\n", "line 2, column 7: expected a newline");
    refuse("root ::= [ab", "line 1, column 10: unexpected end of input");
    refuse("root ::= \"\\q\"", "line 1, column 11: unknown escape");
    refuse("root ::= \"a\"{3,2}", "line 1, column 13: a repetition {3,2}");
    refuse("root ::= *", "a repetition with nothing before it");
    refuse("root ::= a\na ::= b\nb ::= a \"x\"\n", "left-recursive");
    refuse("root ::= (\"x\"? root)", "line 1, column 1: rule 'root' is left-recursive");
    refuse("root ::= \"a\"\nroot ::= \"b\"\n", "line 2, column 1: rule 'root' is defined twice");
    refuse("root ::= \"\xc3\"", "invalid UTF-8");
    expect_refusal("root ::= \"a\0\"", 13, "a NUL byte");
    refuse("main ::= \"a\"", "no rule named 'root'");
    refuse("", "no rule named 'root'");
    refuse("root ::= [b-a]", "end comes before its start");
}

static void test_hostile(void **state)
{
    size_t n = 1 << 20, i;
    char *big = (char *)malloc(n + 64);
    swa_grammar *g;
    swa_error err;
    (void)state;
    assert_non_null(big);
    memcpy(big, "root ::= ", 9);                       /* deep nesting */
    for (i = 9; i < 9 + 100000; i++) big[i] = '(';
    expect_refusal(big, 9 + 100000, "nested deeper than");
    refuse("root ::= \"x\"{0,1000000}", "too large");
    refuse("root ::= \"x\"{99999999999}", "a repetition count above");
    refuse("root ::= \"abcd\"{300000}", "too large");
    refuse("root ::= a\na ::= b\nb ::= c\nc ::= a\n", "left-recursive");       /* a cycle */
    /* 1 MB of rules, each using the next: parses (or is refused) quickly */
    for (i = 0; i + 40 < n;) i += (size_t)sprintf(big + i, "r%zu ::= \"x\" r%zu\n", i, i + 100000000);
    expect_refusal(big, i, "undefined rule");
    for (i = 0; i < n; i++) big[i] = (char)(0x80 | (i * 7 & 0x3F));   /* invalid UTF-8 */
    expect_refusal(big, n, "expected a rule name");
    /* 1 MB of a valid grammar: one long literal */
    memcpy(big, "root ::= \"", 10);
    for (i = 10; i < n - 1; i++) big[i] = (char)('a' + i % 26);
    big[n - 1] = '"';
    if (swa_grammar_parse(big, n, NULL, &g, &err) == SWA_OK) swa_grammar_free(g);
    else assert_non_null(strstr(err.msg, "too large"));
    free(big);
}

/* An exploding ambiguous grammar: the stacks are capped with a clear error, never exhausted. */
static void test_ambiguity_cap(void **state)
{
    static const char nested[] = "root ::= x+\nx ::= \"a\" y\ny ::= \"a\" | x \"a\"\n";
    static const char empties[] = "root ::= e{24} \"x\"\ne ::= \"\" | \"\"\n";
    swa_grammar *g = parse_ok(nested);
    swa_grammar_state *st;
    swa_error err;
    swa_status s = SWA_OK;
    int i;
    (void)state;
    assert_int_equal(swa_grammar_state_create(g, &st, &err), SWA_OK);
    for (i = 0; i < 5000 && s == SWA_OK; i++) s = swa_grammar_state_accept(st, "a", 1, NULL, &err);
    assert_int_equal(s, SWA_ERR_UNSUPPORTED);
    if (!strstr(err.msg, "ambiguous") && !strstr(err.msg, "deeper")) fail_msg("%s", err.msg);
    swa_grammar_state_free(st);
    swa_grammar_free(g);
    expect_refusal(empties, sizeof empties - 1, "ambiguous");
}

/* ---- a match in pieces ---- */

static void test_pieces(void **state)
{
    swa_grammar *g = parse_ok("root ::= \"\xc3\xa9\" [a-z]+ \"\xe6\x97\xa5\"?\n");
    swa_grammar_state *st, *copy;
    swa_error err;
    size_t used;
    (void)state;
    assert_int_equal(swa_grammar_state_create(g, &st, &err), SWA_OK);
    assert_int_equal(swa_grammar_state_accept(st, "\xc3", 1, &used, &err), SWA_OK);   /* half of é waits */
    assert_false(swa_grammar_state_can_end(st));
    assert_int_equal(swa_grammar_state_accept(st, "\xa9" "ab", 3, &used, &err), SWA_OK);
    assert_true(swa_grammar_state_can_end(st));
    assert_false(swa_grammar_state_done(st));
    assert_int_equal(swa_grammar_state_copy(st, &copy, &err), SWA_OK);
    assert_int_equal(swa_grammar_state_accept(st, "\xe6\x97", 2, &used, &err), SWA_OK);   /* 日 begun */
    assert_false(swa_grammar_state_can_end(st));
    assert_int_equal(swa_grammar_state_accept(st, "\xa5", 1, &used, &err), SWA_OK);
    assert_true(swa_grammar_state_done(st));
    assert_int_equal(swa_grammar_state_accept(st, "x", 1, &used, &err), SWA_ERR_NO_MATCH);
    assert_true(swa_grammar_state_done(st));                                              /* unchanged */
    /* the copy went on from "éab" on its own; a refused piece leaves it as it was */
    assert_int_equal(swa_grammar_state_accept(copy, "c\xe6\x98", 3, &used, &err), SWA_ERR_NO_MATCH);  /* 昀.. not 日 */
    assert_int_equal(used, 1);
    assert_true(swa_grammar_state_can_end(copy));
    assert_int_equal(swa_grammar_state_accept(copy, "\xd0", 1, &used, &err), SWA_ERR_NO_MATCH);  /* no 2-byte char fits */
    assert_int_equal(swa_grammar_state_accept(copy, "\xff", 1, &used, &err), SWA_ERR_NO_MATCH);
    swa_grammar_state_reset(copy);
    assert_false(swa_grammar_state_can_end(copy));
    assert_int_equal(swa_grammar_state_accept(copy, "\xc3\xa9z", 3, &used, &err), SWA_OK);
    swa_grammar_state_free(copy);
    swa_grammar_state_free(st);
    swa_grammar_free(g);
}

/* ---- constrained sampling on a small vocabulary ---- */

/* Pieces: <unk> <s> </s>, the 256 byte tokens, then text pieces (SentencePiece, "▁" a space),
   a control token and an end of turn. */
static const char *const text_pieces[] = {"{", "}", "a", "b", "ab", "ba", "{a", "b}", "\xc3\xa9", "a\xc3\xa9",
                                         "\xe2\x96\x81", ("\xe2\x96\x81" "a"), "x", "}}", "", "[INST]", "<|im_end|>"};
enum { N_TEXT = sizeof text_pieces / sizeof text_pieces[0], N_SMALL = 3 + 256 + N_TEXT, INST = N_SMALL - 2,
       IM_END = N_SMALL - 1, EMPTY = N_SMALL - 3 };

/* The small vocabulary, loaded before a test as its *state and freed after it. */
static swa_gguf *small_gguf;
static uint8_t *small_bytes;

static int small_open(void **state)
{
    gw_writer *w = gw_new(3);
    tu_small_vocab(w, text_pieces, N_TEXT, 2);
    *state = tu_vocab_load(w, &small_gguf, &small_bytes);
    return 0;
}

static int small_close(void **state)
{
    swa_vocab_free((swa_vocab *)*state);
    swa_gguf_close(small_gguf);
    free(small_bytes);
    return 0;
}

/* The grammar of these tests, "{" ("a" | "b" | "é")+ "}", judged by hand: whether text[0..n) can
   begin a match (a character may be unfinished at the end), and whether it is one. */
static const char small_grammar[] = "root ::= \"{\" ([ab] | \"\\u00e9\")+ \"}\"\n";

static int small_prefix(const unsigned char *t, size_t n, int *complete)
{
    size_t i;
    *complete = 0;
    if (n == 0) return 1;
    if (t[0] != '{') return 0;
    for (i = 1; i < n; i++) {
        if (t[i] == 'a' || t[i] == 'b') continue;
        if (t[i] == 0xC3 && (i + 1 == n || t[i + 1] == 0xA9)) { i++; continue; }
        if (t[i] == '}' && i >= 2 && i + 1 == n) { *complete = 1; return 1; }
        return 0;
    }
    return 1;
}

static void random_logits(float *l, int n, uint64_t *rng)
{
    int i;
    for (i = 0; i < n; i++) l[i] = tu_uniform(rng, 4.0f);
}

/* Sample until EOS (or 60 tokens): every token continues the text by hand's judgement, EOS
   comes only after a whole match, and a whole match ends in EOS at the next step. */
static void run_small(swa_sampler *s, const swa_vocab *v, uint64_t seed)
{
    unsigned char text[512];
    size_t n = 0;
    float logits[N_SMALL];
    uint64_t rng = seed;
    int step, complete = 0;
    for (step = 0; step < 60; step++) {
        int32_t id;
        random_logits(logits, N_SMALL, &rng);
        if (step % 3 == 0) logits[2] += 3.0f;              /* EOS tempting now and then */
        if (step % 5 == 0) logits[3 + 0xC3] += 6.0f;       /* and half an é */
        logits[INST] += 10.0f;                             /* a control token: its piece never fits */
        logits[EMPTY] += 10.0f;
        id = swa_sampler_sample(s, logits);
        assert_int_equal(swa_sampler_status(s, NULL), SWA_OK);
        if (id == 2 || id == IM_END) {
            assert_true(complete);
            return;
        }
        assert_false(complete);                            /* a whole match allows nothing but EOS */
        n += swa_token_to_text(v, id, (char *)text + n, sizeof text - n);
        if (!small_prefix(text, n, &complete)) fail_msg("token %d made \"%.*s\"", (int)id, (int)n, text);
    }
}

static void test_small_sampling(void **state)
{
    swa_vocab *v = (swa_vocab *)*state;
    swa_grammar *gr = parse_ok(small_grammar);
    swa_sampler_config sc = swa_sampler_config_default();
    swa_sampler *s;
    swa_error err;
    uint64_t seed;
    for (seed = 1; seed <= 200; seed++) {
        sc.temperature = seed % 4 == 0 ? 0.0f : 1.0f;     /* greedy and sampled */
        sc.top_k = seed % 2 ? 0 : 40;
        sc.min_p = seed % 3 ? 0.0f : 0.05f;
        sc.seed = seed;
        assert_int_equal(swa_sampler_create(&sc, swa_vocab_size(v), &s, &err), SWA_OK);
        if (swa_sampler_set_grammar(s, gr, v, &err) != SWA_OK) fail_msg("%s", err.msg);
        run_small(s, v, seed * 77);
        swa_sampler_reset(s);                               /* and again from the start */
        run_small(s, v, seed * 91);
        swa_sampler_free(s);
    }
    swa_grammar_free(gr);
}

/* A greedy sampler over the small vocabulary. */
static swa_sampler *greedy_sampler(void)
{
    swa_sampler_config sc = swa_sampler_config_default();
    swa_sampler *s = NULL;
    sc.temperature = 0;
    assert_int_equal(swa_sampler_create(&sc, N_SMALL, &s, NULL), SWA_OK);
    return s;
}

/* A byte token that begins é: then only its second byte (or a piece starting with it) may come. */
static void test_split_character(void **state)
{
    swa_vocab *v = (swa_vocab *)*state;
    swa_grammar *gr = parse_ok(small_grammar);
    swa_sampler *s, *copy;
    swa_error err;
    float logits[N_SMALL];
    s = greedy_sampler();
    assert_int_equal(swa_sampler_set_grammar(s, gr, v, &err), SWA_OK);
    memset(logits, 0, sizeof logits);
    logits[3 + '{'] = 5;
    assert_int_equal(swa_sampler_sample(s, logits), 3 + '{');
    logits[3 + 0xC3] = 9;
    assert_int_equal(swa_sampler_sample(s, logits), 3 + 0xC3);
    assert_int_equal(swa_sampler_copy(s, &copy, &err), SWA_OK);
    logits[3 + 'a'] = 20;                                   /* tempting, but the character is unfinished */
    assert_int_equal(swa_sampler_sample(s, logits), 3 + 0xA9);
    assert_int_equal(swa_sampler_sample(copy, logits), 3 + 0xA9);   /* the copy is there too */
    assert_int_equal(swa_sampler_sample(s, logits), 3 + 'a');
    logits[2] = 30;                                         /* EOS: not before "}" */
    assert_int_equal(swa_sampler_sample(s, logits), 3 + 'a');
    logits[3 + '}'] = 25;
    assert_int_equal(swa_sampler_sample(s, logits), 3 + '}');
    assert_int_equal(swa_sampler_sample(s, logits), 2);
    logits[2] = -INFINITY;                                  /* done: EOS whatever the logits say */
    assert_int_equal(swa_sampler_sample(s, logits), 2);
    /* a token the grammar refuses, given from outside, is recorded */
    swa_sampler_accept(copy, 3 + 'x');
    assert_int_equal(swa_sampler_status(copy, &err), SWA_ERR_NO_MATCH);
    assert_non_null(strstr(err.msg, "refused"));
    swa_sampler_reset(copy);
    assert_int_equal(swa_sampler_status(copy, &err), SWA_OK);
    swa_sampler_accept(copy, 3 + '{');
    swa_sampler_accept(copy, IM_END);                       /* an end of turn before the end */
    assert_int_equal(swa_sampler_status(copy, &err), SWA_ERR_NO_MATCH);
    assert_int_equal(swa_sampler_set_grammar(copy, NULL, NULL, &err), SWA_OK);   /* detached: free again */
    logits[3 + 'x'] = 100;
    assert_int_equal(swa_sampler_sample(copy, logits), 3 + 'x');
    swa_sampler_free(copy);
    swa_sampler_free(s);
    swa_grammar_free(gr);
}

/* ---- copies share the vocabulary's trie ---- */

enum { SHARED_STEPS = 40 };

typedef struct shared_run {
    swa_sampler *s;
    const swa_vocab *v;
    int32_t ids[SHARED_STEPS];
    int n, bad;                   /* tokens drawn; a token made text the grammar refuses */
    int free_after;               /* free the sampler when done (two threads at once drop their holds) */
} shared_run;

/* Sample up to SHARED_STEPS tokens (EOS ends it) with logits that depend on the step only,
   each one checked by hand's judgement of the text so far. */
static void *shared_sample(void *arg)
{
    shared_run *r = (shared_run *)arg;
    unsigned char text[512] = {'{'};                       /* the sampler was given "{" */
    size_t n = 1;
    int complete = 0;
    uint64_t rng = 1234;
    float logits[N_SMALL];
    for (r->n = 0; r->n < SHARED_STEPS; r->n++) {
        random_logits(logits, N_SMALL, &rng);
        logits[2] -= 2.0f;                                  /* EOS not at once */
        r->ids[r->n] = swa_sampler_sample(r->s, logits);
        if (r->ids[r->n] == 2) { r->n++; break; }
        n += swa_token_to_text(r->v, r->ids[r->n], (char *)text + n, sizeof text - n);
        if (!small_prefix(text, n, &complete)) { r->bad = 1; break; }
    }
    if (r->free_after) swa_sampler_free(r->s);
    return NULL;
}

static void expect_same_run(const shared_run *a, const shared_run *b)
{
    int i;
    assert_int_equal(a->n, b->n);
    for (i = 0; i < a->n; i++) assert_int_equal(a->ids[i], b->ids[i]);
}

/* Copies hold the original's trie (the same one: a copy does not build its own), draw what
   the original draws from the same seed and logits, from two threads at once too (which then
   free theirs at once), and any of them may be freed first. */
static void test_shared_trie(void **state)
{
    swa_vocab *v = (swa_vocab *)*state;
    swa_grammar *gr = parse_ok(small_grammar);
    swa_sampler_config sc = swa_sampler_config_default();
    swa_sampler *s, *c1, *c2, *c3;
    shared_run r[4];
    pthread_t tid[2];
    swa_error err;
    int order, i;
    sc.temperature = 1.0f;
    sc.top_k = 0;
    for (order = 0; order < 3; order++) {
        assert_int_equal(swa_sampler_create(&sc, N_SMALL, &s, &err), SWA_OK);
        assert_null(swa__sampler_trie(s));
        assert_int_equal(swa_sampler_set_grammar(s, gr, v, &err), SWA_OK);
        swa_sampler_accept(s, 3 + '{');                     /* mid-text: the copies go on from here */
        assert_int_equal(swa_sampler_copy(s, &c1, &err), SWA_OK);
        assert_int_equal(swa_sampler_copy(c1, &c2, &err), SWA_OK);
        assert_int_equal(swa_sampler_copy(c1, &c3, &err), SWA_OK);
        assert_non_null(swa__sampler_trie(s));
        assert_ptr_equal(swa__sampler_trie(c1), swa__sampler_trie(s));
        assert_ptr_equal(swa__sampler_trie(c2), swa__sampler_trie(s));
        assert_ptr_equal(swa__sampler_trie(c3), swa__sampler_trie(s));
        memset(r, 0, sizeof r);
        r[0].s = s; r[1].s = c1; r[2].s = c2; r[3].s = c3;
        for (i = 0; i < 4; i++) r[i].v = v;
        r[2].free_after = r[3].free_after = 1;
        if (order == 0) swa_sampler_free(s);                /* the original first: its copies go on */
        if (order == 1) swa_sampler_free(c1);               /* a copy that was copied, first */
        for (i = 0; i < 2; i++) assert_int_equal(pthread_create(&tid[i], NULL, shared_sample, &r[i + 2]), 0);
        for (i = 0; i < 2; i++) assert_int_equal(pthread_join(tid[i], NULL), 0);
        if (order != 0) shared_sample(&r[0]);
        if (order != 1) shared_sample(&r[1]);
        for (i = 0; i < 4; i++) assert_false(r[i].bad);
        assert_int_equal(r[2].ids[r[2].n - 1], 2);          /* a whole match, ended */
        expect_same_run(&r[2], &r[3]);
        if (order != 0) expect_same_run(&r[0], &r[2]);
        if (order != 1) expect_same_run(&r[1], &r[2]);
        c3 = order == 1 ? s : c1;                           /* one left: detaching drops its hold */
        assert_int_equal(swa_sampler_set_grammar(c3, NULL, NULL, &err), SWA_OK);
        assert_null(swa__sampler_trie(c3));
        if (order == 2) swa_sampler_free(c1);               /* the original last */
        swa_sampler_free(order == 0 ? c1 : s);
    }
    swa_grammar_free(gr);
}

/* A lazy grammar: free text, EOS too, until the trigger appears (across tokens, inside one);
   then the grammar, having read the text from the trigger on, holds every token; a copy carries
   what was seen, a reset waits again, and text after the trigger the grammar refuses is recorded. */
static void test_lazy_grammar(void **state)
{
    enum { AB = 3 + 256 + 4, X = 3 + 256 + 12, BRACE_A = 3 + 256 + 6, CLOSE = 3 + 256 + 1, CLOSE2 = 3 + 256 + 13 };
    swa_vocab *v = (swa_vocab *)*state;
    swa_grammar *gr = parse_ok("root ::= \"x{\" [ab]+ \"}\"\n");
    const char *trigger = "x{", *none = "";
    swa_sampler *s, *copy;
    swa_error err;
    float logits[N_SMALL];
    s = greedy_sampler();
    assert_int_equal(swa_sampler_set_grammar_lazy(s, gr, v, &trigger, 0, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_sampler_set_grammar_lazy(s, gr, v, &none, 1, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_sampler_set_grammar_lazy(s, gr, v, &trigger, 1, &err), SWA_OK);
    memset(logits, 0, sizeof logits);
    logits[2] = 30;                                         /* before the trigger EOS may come */
    assert_int_equal(swa_sampler_sample(s, logits), 2);
    logits[2] = 0, logits[AB] = 30;                         /* and what the grammar would refuse */
    assert_int_equal(swa_sampler_sample(s, logits), AB);
    logits[AB] = 0, logits[X] = 30;
    assert_int_equal(swa_sampler_sample(s, logits), X);
    assert_int_equal(swa_sampler_copy(s, &copy, &err), SWA_OK);
    logits[X] = 0, logits[BRACE_A] = 30;                    /* "x" + "{a": the trigger spans two tokens */
    assert_int_equal(swa_sampler_sample(s, logits), BRACE_A);
    logits[X] = 40, logits[3 + 'b'] = 5, logits[2] = 35;    /* now held: neither "x" nor EOS */
    assert_int_equal(swa_sampler_sample(s, logits), 3 + 'b');
    logits[CLOSE] = 20;
    assert_int_equal(swa_sampler_sample(s, logits), CLOSE);
    assert_int_equal(swa_sampler_sample(s, logits), 2);     /* whole: only EOS */
    assert_int_equal(swa_sampler_status(s, &err), SWA_OK);
    swa_sampler_accept(copy, BRACE_A);                      /* the copy had seen "x" */
    swa_sampler_accept(copy, CLOSE2);                       /* "}}": the second brace is refused */
    assert_int_equal(swa_sampler_status(copy, &err), SWA_ERR_NO_MATCH);
    swa_sampler_reset(s);                                   /* waiting again */
    memset(logits, 0, sizeof logits);
    logits[3 + 'q'] = 30;
    assert_int_equal(swa_sampler_sample(s, logits), 3 + 'q');
    swa_sampler_free(copy);
    swa_grammar_free(gr);
    gr = parse_ok("root ::= \"[INST]a\"\n");                /* a control token's piece triggers */
    trigger = "[INST]";
    assert_int_equal(swa_sampler_set_grammar_lazy(s, gr, v, &trigger, 1, &err), SWA_OK);
    logits[3 + 'q'] = 0, logits[INST] = 30;
    assert_int_equal(swa_sampler_sample(s, logits), INST);
    logits[3 + 'x'] = 40, logits[3 + 'a'] = 1;
    assert_int_equal(swa_sampler_sample(s, logits), 3 + 'a');
    assert_int_equal(swa_sampler_status(s, &err), SWA_OK);
    swa_sampler_free(s);
    swa_grammar_free(gr);
}

/* The grammar's limits while sampling: the sampler stops with EOS and reports why. */
static void test_sampling_cap(void **state)
{
    swa_vocab *v = (swa_vocab *)*state;
    swa_grammar *gr = parse_ok("root ::= x+\nx ::= \"a\" y\ny ::= \"a\" | x \"a\"\n");
    swa_sampler *s;
    swa_error err;
    float logits[N_SMALL];
    int i;
    int32_t id = 0;
    s = greedy_sampler();
    assert_int_equal(swa_sampler_set_grammar(s, gr, v, &err), SWA_OK);
    memset(logits, 0, sizeof logits);
    logits[3 + 'a'] = 5;
    for (i = 0; i < 5000 && id != 2; i++) id = swa_sampler_sample(s, logits);
    assert_int_equal(id, 2);
    assert_int_equal(swa_sampler_status(s, &err), SWA_ERR_UNSUPPORTED);
    if (!strstr(err.msg, "ambiguous") && !strstr(err.msg, "deeper")) fail_msg("%s", err.msg);
    swa_sampler_free(s);
    swa_grammar_free(gr);
}

/* ---- the shipped model: 50 seeds at temperature 1, every output matches ---- */

static void test_model_outputs(void **state)
{
    static const char grammar[] = "root ::= \" \" word (\" \" word){2,6} \".\"\nword ::= [a-z]{1,10}\n";
    swa_model *m;
    const swa_vocab *v;
    swa_ctx *c;
    swa_grammar *gr = parse_ok(grammar);
    swa_error err;
    int seed;
    (void)state;
    if (swa_model_load("examples/models/swa-stories.gguf", &m, &err) != SWA_OK) fail_msg("%s", err.msg);
    assert_int_equal(swa_model_vocab(m, &v, &err), SWA_OK);
    assert_int_equal(swa_ctx_create(m, NULL, &c, &err), SWA_OK);
    for (seed = 1; seed <= 50; seed++) {
        swa_sampler_config sc = swa_sampler_config_default();
        swa_sampler *s;
        int32_t tok[64];
        size_t n, len = 0, where;
        char text[1024];
        const float *logits;
        int i;
        sc.temperature = 1.0f;
        sc.seed = (uint64_t)seed;
        assert_int_equal(swa_sampler_create(&sc, swa_vocab_size(v), &s, &err), SWA_OK);
        assert_int_equal(swa_sampler_set_grammar(s, gr, v, &err), SWA_OK);
        assert_int_equal(swa_seq_reset(c, 0, &err), SWA_OK);
        assert_int_equal(swa_tokenize(v, "Once upon a time", 16, SWA_TOKENIZE_ADD_BOS, tok, 64, &n, &err), SWA_OK);
        for (i = 0; i < 60; i++, n = 1) {
            assert_int_equal(swa_ctx_eval(c, tok, n, &logits, &err), SWA_OK);
            tok[0] = swa_sampler_sample(s, logits);
            if (tok[0] == swa_vocab_eos(v)) break;
            len += swa_token_to_text(v, tok[0], text + len, sizeof text - len);
        }
        assert_int_equal(swa_sampler_status(s, &err), SWA_OK);
        if (tok[0] != swa_vocab_eos(v)) fail_msg("seed %d: no end after 60 tokens: \"%.*s\"", seed, (int)len, text);
        if (swa_grammar_match(gr, text, len, &where, &err) != SWA_OK)
            fail_msg("seed %d: \"%.*s\": %s", seed, (int)len, text, err.msg);
        swa_sampler_free(s);
    }
    swa_ctx_free(c);
    swa_model_free(m);
    swa_grammar_free(gr);
}

/* ---- the trie's allowed tokens against the matcher, token by token ----
   On llama.cpp's test vocabularies (../shared; skipped when absent): at each step along a JSON
   text with multi-byte characters, the tokens the sampler allows (its distribution from equal
   logits, no other filter) are exactly those whose text the grammar's matcher takes after the
   text so far, a token ending inside a character included (the matcher takes a character in
   pieces), the end-of-generation tokens where the text is a match. */
static void check_allowed_step(swa_sampler *s, const swa_grammar_state *st, const swa_vocab *v, swa_token_prob *p,
                               float *logits, uint8_t *want, int step)
{
    int32_t n, i, nv = swa_vocab_size(v), n_want = 0;
    swa_error err;
    char buf[512];
    for (i = 0; i < nv; i++) {
        swa_token_type t = swa_vocab_type(v, i);
        swa_grammar_state *c;
        swa_str piece = swa_vocab_piece(v, i);
        size_t len = t == SWA_TOKEN_CONTROL ? piece.len : swa_token_to_text(v, i, buf, sizeof buf), used;
        want[i] = 0;
        if (swa_vocab_is_eog(v, i)) want[i] = (uint8_t)swa_grammar_state_can_end(st);
        else if (t != SWA_TOKEN_UNUSED && t != SWA_TOKEN_UNKNOWN && len > 0 && len <= sizeof buf) {
            if (t == SWA_TOKEN_CONTROL) memcpy(buf, piece.ptr, len);
            assert_int_equal(swa_grammar_state_copy(st, &c, &err), SWA_OK);
            want[i] = swa_grammar_state_accept(c, buf, len, &used, NULL) == SWA_OK;
            swa_grammar_state_free(c);
        }
        n_want += want[i];
    }
    assert_int_equal(swa_sampler_dist(s, logits, p, nv, &n, &err), SWA_OK);
    for (i = 0; i < n; i++)
        if (!want[p[i].id]) fail_msg("step %d: token %d allowed, the matcher refuses it", step, (int)p[i].id);
    if (n != n_want) fail_msg("step %d: %d tokens allowed, the matcher takes %d", step, (int)n, (int)n_want);
}

static void check_allowed(const char *path, const swa_grammar *gr)
{
    static const char text[] = "{\"name\": \"F\xc3\xbchrer \xf0\x9f\xa6\x99 \xe6\x97\xa5\xe6\x9c\xac\", \"n\": [1, -2.5e3, true, null], "
                               "\"o\": {\"k\": \"\xd0\xbd\xd0\xb5\xd1\x89\xd0\xbe\"}}";
    swa_gguf *g;
    swa_vocab *v;
    swa_sampler_config sc = swa_sampler_config_default();
    swa_sampler *s;
    swa_grammar_state *st;
    swa_error err;
    swa_token_prob *p;
    float *logits;
    uint8_t *want;
    int32_t ids[256];
    size_t n_ids, k, used;
    char buf[512];
    if (swa_gguf_open(path, &g, &err) != SWA_OK) {
        fprintf(stderr, "skipped: %s is absent\n", path);
        return;
    }
    assert_int_equal(swa_vocab_load(g, &v, &err), SWA_OK);
    sc.temperature = 1.0f, sc.top_k = 0, sc.top_p = 1.0f, sc.min_p = 0.0f;
    assert_int_equal(swa_sampler_create(&sc, swa_vocab_size(v), &s, &err), SWA_OK);
    assert_int_equal(swa_sampler_set_grammar(s, gr, v, &err), SWA_OK);
    assert_int_equal(swa_grammar_state_create(gr, &st, &err), SWA_OK);
    assert_int_equal(swa_tokenize(v, text, sizeof text - 1, 0, ids, 256, &n_ids, &err), SWA_OK);
    p = (swa_token_prob *)malloc((size_t)swa_vocab_size(v) * sizeof *p);
    logits = (float *)calloc((size_t)swa_vocab_size(v), sizeof *logits);
    want = (uint8_t *)malloc((size_t)swa_vocab_size(v));
    assert_true(p && logits && want);
    for (k = 0; k <= n_ids; k++) {
        check_allowed_step(s, st, v, p, logits, want, (int)k);
        if (k == n_ids) break;
        swa_sampler_accept(s, ids[k]);
        assert_int_equal(swa_grammar_state_accept(st, buf, swa_token_to_text(v, ids[k], buf, sizeof buf), &used, &err), SWA_OK);
    }
    assert_true(swa_grammar_state_can_end(st));
    free(p); free(logits); free(want);
    swa_grammar_state_free(st);
    swa_sampler_free(s);
    swa_vocab_free(v);
    swa_gguf_close(g);
}

static void test_allowed_tokens(void **state)
{
    size_t len;
    char *text = tu_read_text(DATA "json.gbnf", &len), *at = strstr(text, "::= object"), *root;
    swa_grammar *gr;
    (void)state;
    /* a space first too: SentencePiece's tokenizer puts one in front of the text */
    assert_non_null(at);
    root = (char *)malloc(len + 8);
    assert_non_null(root);
    snprintf(root, len + 8, "%.*s::= ws object%s", (int)(at - text), text, at + strlen("::= object"));
    gr = parse_ok(root);
    free(root);
    check_allowed("../shared/testdata/ggml-vocab-llama-bpe.gguf", gr);
    check_allowed("../shared/testdata/ggml-vocab-llama-spm.gguf", gr);
    swa_grammar_free(gr);
    free(text);
}

/* ---- swa-gbnf-validator: llama-gbnf-validator's messages; exit 0, 1, 2 ---- */

static void test_validator(void **state)
{
#ifndef _WIN32
    char in[64], cmd[512], *out;
    int rc;
    (void)state;
    tu_tmp_path(in, sizeof in, "gbnf_in");
    tu_write_file(in, "{\"a\": nul}", 10);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-gbnf-validator") " " DATA "json.gbnf %s", in);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 1);
    assert_string_equal(out, "Input string is invalid according to the grammar.\n"
                             "Error: Unexpected character '}' at position 9\n\nInput string:\n"
                             "{\"a\": nul\033[1;31m}\033[0m\n");
    free(out);
    tu_write_file(in, "{\"\xc3\xa9\": [", 8);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "Error: Unexpected end of input at position 7\n"));
    free(out);
    tu_write_file(in, "{\"a\": null}", 11);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "Input string is valid according to the grammar.\n");
    free(out);
    snprintf(cmd, sizeof cmd, PROGRAM("swa-gbnf-validator") " %s %s 2>&1", in, in);   /* JSON is no grammar */
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "line 1, column 1"));
    free(out);
    remove(in);
#else
    (void)state;
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama_cases),
        cmocka_unit_test(test_random_strings),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_ambiguity_cap),
        cmocka_unit_test(test_pieces),
        cmocka_unit_test_setup_teardown(test_small_sampling, small_open, small_close),
        cmocka_unit_test_setup_teardown(test_split_character, small_open, small_close),
        cmocka_unit_test_setup_teardown(test_shared_trie, small_open, small_close),
        cmocka_unit_test_setup_teardown(test_lazy_grammar, small_open, small_close),
        cmocka_unit_test_setup_teardown(test_sampling_cap, small_open, small_close),
        cmocka_unit_test(test_allowed_tokens),
        cmocka_unit_test(test_model_outputs),
        cmocka_unit_test(test_validator),
    };
#ifdef SWA_TEST_TSAN
    cmocka_set_test_filter("test_shared_trie");   /* ThreadSanitizer: the one test whose threads share state */
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
