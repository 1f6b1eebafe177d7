/* build/swa-span as a user runs it: the reach it prints for hand-derived cases and for models
   with per-layer windows written here, checked again against a brute-force walk down the
   layers; its SVG parsed as XML-ish text; its PNG taken apart chunk by chunk with a CRC-32 and
   an Adler-32 written here, bit by bit, sharing nothing with the tool. Run from the project
   root after `make` (the Makefile's test target does both). */
#define _POSIX_C_SOURCE 200809L   /* mkstemp, popen */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tests/programs.h"
#include <sys/wait.h>
#include <unistd.h>

#include "tests/testutil.h"

#define SPAN_FILE PROGRAM_FILE("swa-span")
#define SPAN PROGRAM("swa-span")
#ifndef STORIES
#define STORIES "examples/models/swa-stories.gguf"   /* -DSTORIES=... tries another model */
#endif

/* ---- helpers: files, commands ---- */

static void need_program(void)
{
    if (access(SPAN_FILE, X_OK) != 0) fail_msg("%s is missing: run make first", SPAN_FILE);
}

/* Run swa-span with `args`, expect exit 0, return stdout. */
static char *span_ok(const char *args)
{
    char cmd[1024];
    int rc;
    char *out;
    snprintf(cmd, sizeof cmd, "%s %s", SPAN, args);
    out = tu_capture(cmd, &rc);
    if (rc != 0) fail_msg("%s: exit %d\n%s", cmd, rc, out);
    return out;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0, k = strlen(needle);
    for (hay = strstr(hay, needle); hay; hay = strstr(hay + k, needle)) n++;
    return n;
}

static void expect_in(const char *out, const char *want)
{
    if (!strstr(out, want)) fail_msg("\"%s\" is not in the output:\n%s", want, out);
}

/* ---- reading the text chart ---- */

typedef struct row {
    char w[16];           /* the window column: a number or "full" */
    char chart[160];
    long long dlo, dhi, rlo, rhi;
} row;

/* The row of `layer`: "  <layer> <W>  |<chart>|  <dlo>..<dhi>  <rlo>..<rhi>". Fails when absent. */
static row get_row(const char *out, int layer)
{
    const char *line = out;
    row r;
    while (line && *line) {
        const char *nl = strchr(line, '\n'), *bar;
        char buf[512];
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        int l, n = -1;
        if (len >= sizeof buf) len = sizeof buf - 1;
        memcpy(buf, line, len);
        buf[len] = '\0';
        line = nl ? nl + 1 : NULL;
        memset(&r, 0, sizeof r);
        if (sscanf(buf, " %d %15s |%n", &l, r.w, &n) != 2 || n < 0 || l != layer) continue;
        bar = strchr(buf + n, '|');
        assert_non_null(bar);
        assert_true((size_t)(bar - (buf + n)) < sizeof r.chart);
        memcpy(r.chart, buf + n, (size_t)(bar - (buf + n)));
        assert_int_equal(sscanf(bar + 1, " %lld..%lld %lld..%lld", &r.dlo, &r.dhi, &r.rlo, &r.rhi), 4);
        return r;
    }
    fail_msg("no row for layer %d in:\n%s", layer, out);
    return r;
}

static void expect_row(const char *out, int layer, const char *w, long long dlo, long long rlo, long long pos)
{
    row r = get_row(out, layer);
    if (strcmp(r.w, w) || r.dlo != dlo || r.dhi != pos || r.rlo != rlo || r.rhi != pos)
        fail_msg("layer %d: got W %s, direct %lld..%lld, reach %lld..%lld; want W %s, direct %lld..%lld, "
                 "reach %lld..%lld", layer, r.w, r.dlo, r.dhi, r.rlo, r.rhi, w, dlo, pos, rlo, pos);
}

/* With one column per position the chart is exactly: '.' below rlo, '+' below dlo, '#' up to pos. */
static void expect_chart(const char *out, int layer, long long dlo, long long rlo, long long pos)
{
    row r = get_row(out, layer);
    char want[160];
    long long j;
    assert_true(pos + 1 < (long long)sizeof want);
    for (j = 0; j <= pos; j++) want[j] = j >= dlo ? '#' : j >= rlo ? '+' : '.';
    want[pos + 1] = '\0';
    assert_string_equal(r.chart, want);
}

/* The layer's row and its chart (one column per position). */
static void expect_layer(const char *out, int layer, const char *w, long long dlo, long long rlo, long long pos)
{
    expect_row(out, layer, w, dlo, rlo, pos);
    expect_chart(out, layer, dlo, rlo, pos);
}

/* ---- the reference: walk down the layers position by position ---- */

/* After layers 0..l, which positions can influence pos? Start from pos at layer l's output and
   step down one layer at a time: a position seen at layer k's output read the keys of its window
   (all earlier positions for W = 0) at layer k's input. No closed form, just sets. */
static long long brute_reach(const int *windows, int l, long long pos)
{
    char *seen = (char *)calloc((size_t)pos + 1, 1), *next = (char *)calloc((size_t)pos + 1, 1);
    long long j, i, lo = pos;
    int k;
    assert_non_null(seen);
    assert_non_null(next);
    seen[pos] = 1;
    for (k = l; k >= 0; k--) {
        memset(next, 0, (size_t)pos + 1);
        for (j = 0; j <= pos; j++) {
            if (!seen[j]) continue;
            for (i = windows[k] ? j - windows[k] + 1 : 0; i <= j; i++)
                if (i >= 0) next[i] = 1;
        }
        memcpy(seen, next, (size_t)pos + 1);
    }
    for (j = 0; j <= pos; j++)
        if (seen[j]) { lo = j; break; }
    free(seen);
    free(next);
    return lo;
}

static long long brute_direct(int w, long long pos)
{
    return w == 0 || pos - w + 1 < 0 ? 0 : pos - w + 1;
}

/* Every row and the summary of `out` against the brute-force walk. */
static void expect_brute(const char *out, const int *windows, int n_layer, long long pos)
{
    char w[16], want[256];
    int l;
    for (l = 0; l < n_layer; l++) {
        if (windows[l]) snprintf(w, sizeof w, "%d", windows[l]);
        else snprintf(w, sizeof w, "full");
        expect_row(out, l, w, brute_direct(windows[l], pos), brute_reach(windows, l, pos), pos);
    }
    snprintf(want, sizeof want, "after %d layer%s, token %lld sees positions %lld..%lld (directly %lld..%lld)",
             n_layer, n_layer == 1 ? "" : "s", pos, brute_reach(windows, n_layer - 1, pos), pos,
             brute_direct(windows[n_layer - 1], pos), pos);
    expect_in(out, want);
}

/* ---- model files ---- */

static void write_model(const char *path, int n_layer, const int *windows)
{
    tu_model tm;
    tu_spec s;
    memset(&s, 0, sizeof s);
    s.n_layer = n_layer; s.n_embd = 16; s.n_head = 2; s.n_kv_head = 1; s.n_ff = 32; s.n_vocab = 32;
    s.n_ctx = 256; s.type = GW_F32; s.windows = windows; s.seed = 5;
    assert_true(tu_build(&tm, &s));
    tu_write_file(path, tm.gguf, tm.gguf_size);
    tu_free(&tm);
}

/* ---- PNG, taken apart by hand ---- */

static uint32_t crc32_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    size_t i;
    int k;
    for (i = 0; i < n; i++) {
        c ^= p[i];
        for (k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static uint32_t adler32_plain(const uint8_t *p, size_t n)
{
    uint32_t a = 1, b = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        a = (a + p[i]) % 65521u;
        b = (b + a) % 65521u;
    }
    return b << 16 | a;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

typedef struct png {
    uint32_t w, h;
    uint8_t *raw;           /* the scanlines with their filter bytes */
    size_t raw_n;
    int n_idat, n_blocks;
} png;

/* Check every part of the file and inflate its stored blocks. */
static png parse_png(const uint8_t *d, size_t n)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    png p;
    uint8_t *z = (uint8_t *)malloc(n);
    size_t zn = 0, o = 8, zi;
    int chunk = 0, ended = 0;
    memset(&p, 0, sizeof p);
    assert_non_null(z);
    assert_true(n > 8);
    assert_memory_equal(d, sig, 8);
    while (o < n) {
        uint32_t len, crc;
        const uint8_t *type;
        assert_false(ended);                    /* nothing after IEND */
        assert_true(n - o >= 12);
        len = be32(d + o);
        assert_true(len <= n - o - 12);
        type = d + o + 4;
        crc = be32(d + o + 8 + len);
        if (crc != crc32_bitwise(type, (size_t)len + 4))
            fail_msg("chunk %d (%.4s): CRC %08x, computed %08x", chunk, (const char *)type, crc,
                     crc32_bitwise(type, (size_t)len + 4));
        if (chunk == 0) {
            assert_memory_equal(type, "IHDR", 4);
            assert_int_equal(len, 13);
            p.w = be32(d + o + 8);
            p.h = be32(d + o + 12);
            assert_int_equal(d[o + 16], 8);      /* bit depth */
            assert_int_equal(d[o + 17], 2);      /* RGB */
            assert_int_equal(d[o + 18], 0);
            assert_int_equal(d[o + 19], 0);
            assert_int_equal(d[o + 20], 0);
        } else if (!memcmp(type, "IDAT", 4)) {
            memcpy(z + zn, d + o + 8, len);
            zn += len;
            p.n_idat++;
        } else if (!memcmp(type, "IEND", 4)) {
            assert_int_equal(len, 0);
            ended = 1;
        }
        o += 12 + (size_t)len;
        chunk++;
    }
    assert_true(ended);
    assert_true(p.n_idat >= 1);

    /* zlib: CMF/FLG, stored deflate blocks, Adler-32 of what they hold. */
    assert_true(zn >= 2 + 5 + 4);
    assert_int_equal(z[0] & 0x0f, 8);                      /* deflate */
    assert_true((z[0] >> 4) <= 7);                         /* window <= 32K */
    assert_int_equal(((unsigned)z[0] << 8 | z[1]) % 31, 0);
    assert_int_equal(z[1] & 0x20, 0);                      /* no preset dictionary */
    p.raw = (uint8_t *)malloc(zn);
    assert_non_null(p.raw);
    for (zi = 2;;) {
        unsigned hdr, len, nlen;
        assert_true(zn - zi >= 5);
        hdr = z[zi];
        assert_int_equal((hdr >> 1) & 3, 0);               /* BTYPE 00: stored */
        len = z[zi + 1] | (unsigned)z[zi + 2] << 8;
        nlen = z[zi + 3] | (unsigned)z[zi + 4] << 8;
        assert_int_equal(len ^ nlen, 0xffff);
        zi += 5;
        assert_true(len <= zn - zi);
        memcpy(p.raw + p.raw_n, z + zi, len);
        p.raw_n += len;
        zi += len;
        p.n_blocks++;
        if (hdr & 1) break;                                /* BFINAL */
    }
    assert_int_equal(zn - zi, 4);
    assert_int_equal(be32(z + zi), adler32_plain(p.raw, p.raw_n));
    free(z);
    return p;
}

/* Run with --png, parse the file, and check it against the size the tool reports. */
static png png_of(const char *args, const char *path)
{
    char cmd[1024], want[512];
    const char *at;
    int rc, w = 0, h = 0;
    char *out;
    uint8_t *data;
    size_t n;
    png p;
    snprintf(cmd, sizeof cmd, "%s %s --png %s 2>&1", SPAN, args, path);
    out = tu_capture(cmd, &rc);
    if (rc != 0) fail_msg("%s: exit %d\n%s", cmd, rc, out);
    snprintf(want, sizeof want, "wrote %s: ", path);
    at = strstr(out, want);
    if (!at) fail_msg("no \"%s\" in\n%s", want, out);
    assert_int_equal(sscanf(at + strlen(want), "%dx%d pixels", &w, &h), 2);
    data = tu_read_file(path, &n);
    p = parse_png(data, n);
    assert_int_equal(p.w, (uint32_t)w);
    assert_int_equal(p.h, (uint32_t)h);
    assert_int_equal(p.raw_n, (size_t)h * (1 + (size_t)w * 3));
    free(data);
    free(out);
    return p;
}

/* ---- SVG, XML-ish ---- */

/* Tags nest and close, attributes are quoted, text holds no raw '<' and entities are ours. */
static void expect_well_formed(const char *s)
{
    const char *stack[64];
    size_t depth = 0, k;
    int seen_root = 0;
    while (*s) {
        if (*s == '&') {
            assert_true(!strncmp(s, "&amp;", 5) || !strncmp(s, "&lt;", 4) || !strncmp(s, "&gt;", 4) ||
                        !strncmp(s, "&quot;", 6));
            s++;
        } else if (*s == '<') {
            int closing = s[1] == '/';
            const char *name = s + 1 + closing, *e = name;
            while (*e && *e != ' ' && *e != '>' && *e != '/' && *e != '\n') e++;
            assert_true(e > name);
            for (s = e; *s && *s != '>'; s++)
                if (*s == '"') {                           /* a quoted attribute value */
                    for (s++; *s && *s != '"'; s++) assert_true(*s != '<');
                    assert_true(*s == '"');
                }
            assert_true(*s == '>');
            if (closing) {
                assert_true(depth > 0);
                k = (size_t)(e - name);
                if (strncmp(stack[depth - 1], name, k) || !strchr(" >/\n", stack[depth - 1][k]))
                    fail_msg("</%.*s> closes <%.20s", (int)k, name, stack[depth - 1]);
                depth--;
            } else if (s[-1] != '/') {
                if (depth == 0) {
                    assert_false(seen_root);
                    assert_true(!strncmp(name, "svg", 3));
                    seen_root = 1;
                }
                assert_true(depth < 64);
                stack[depth++] = name;
            }
            s++;
        } else {
            assert_true(depth > 0 || *s == '\n');
            s++;
        }
    }
    assert_true(seen_root);
    assert_int_equal(depth, 0);
}

static char *svg_of(const char *args, const char *path)
{
    char cmd[1024];
    size_t n, len;
    char *out, *svg;
    int rc;
    snprintf(cmd, sizeof cmd, "%s %s --svg %s 2>&1", SPAN, args, path);
    out = tu_capture(cmd, &rc);
    if (rc != 0) fail_msg("%s: exit %d\n%s", cmd, rc, out);
    free(out);
    svg = (char *)tu_read_file(path, &n);
    assert_int_equal(strlen(svg), n);
    assert_true(!strncmp(svg, "<svg", 4));
    len = n;
    while (len && (svg[len - 1] == '\n' || svg[len - 1] == ' ')) len--;
    assert_true(len >= 6 && !strncmp(svg + len - 6, "</svg>", 6));
    expect_well_formed(svg);
    return svg;
}

/* ---- the tests ---- */

/* Cases derived by hand, each row checked with its chart (one column per position here).
   3 layers of W = 4 at position 20: layer 0 reads 17..20; each layer adds W - 1 = 3 below, so
   after 2 layers 14..20 and after 3 layers 20 - 3*3 = 11..20. W = 1: a token sees only itself,
   however deep. Near the start everything clamps at 0: position 2 with W = 4 reads 0..2 in
   every layer; position 5 reads 2..5 in layer 0, and 5 - 2*3 = -1 clamps to 0 after two layers. */
static void test_by_hand(void **state)
{
    static const struct {
        const char *args, *line;
        long long pos;
        struct { int layer; const char *w; long long dlo, rlo; } rows[3];   /* up to w == NULL */
    } cases[] = {
        {"-l 3 -w 4 -p 20", "3 layers, window 4: after 3 layers, token 20 sees positions 11..20 (directly 17..20)",
         20,
         {{0, "4", 17, 17}, {1, "4", 17, 14}, {2, "4", 17, 11}}},
        {"-l 4 -w 1 -p 10", "after 4 layers, token 10 sees positions 10..10 (directly 10..10)", 10, {{3, "1", 10, 10}}},
        {"-l 1 -w 7 -p 0", "1 layer, window 7: after 1 layer, token 0 sees positions 0..0 (directly 0..0)", 0,
         {{0, "7", 0, 0}}},
        {"-l 3 -w 4 -p 2", "after 3 layers, token 2 sees positions 0..2 (directly 0..2)", 2,
         {{0, "4", 0, 0}, {1, "4", 0, 0}, {2, "4", 0, 0}}},
        {"-l 2 -w 4 -p 5", "after 2 layers, token 5 sees positions 0..5 (directly 2..5)", 5, {{0, "4", 2, 2}, {1, "4", 2, 0}}},
    };
    size_t i, k;
    (void)state;
    need_program();
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = span_ok(cases[i].args);
        expect_in(out, cases[i].line);
        expect_in(out, "1 column = 1 position");
        for (k = 0; k < 3 && cases[i].rows[k].w; k++)
            expect_layer(out, cases[i].rows[k].layer, cases[i].rows[k].w, cases[i].rows[k].dlo, cases[i].rows[k].rlo,
                         cases[i].pos);
        if (i == 0)   /* the last layer is printed first */
            assert_true(strstr(out, "\n    2    4  |") < strstr(out, "\n    0    4  |"));
        free(out);
    }
}

/* Without -p the token sits at 4W: 6 layers of 64 look from 256, reach 256 - 6*63 < 0, so
   0..256, and 257 positions need 3 to a column (86 columns). */
static void test_default_position_and_scale(void **state)
{
    char *out;
    int l;
    (void)state;
    need_program();
    out = span_ok("-l 6 -w 64");
    expect_in(out, "6 layers, window 64: after 6 layers, token 256 sees positions 0..256 (directly 193..256)");
    expect_in(out, "1 column = 3 positions");
    for (l = 0; l < 6; l++) {
        row r = get_row(out, l);
        long long rlo = 256 - 63LL * (l + 1) < 0 ? 0 : 256 - 63LL * (l + 1), last;
        char want[87];
        int c;
        expect_row(out, l, "64", 193, rlo, 256);
        /* column c holds positions 3c..3c+2 and is drawn as the last of them */
        for (c = 0; c < 86; c++) {
            last = 3 * c + 2 < 256 ? 3 * c + 2 : 256;
            want[c] = last >= 193 ? '#' : last >= rlo ? '+' : '.';
        }
        want[86] = '\0';
        assert_string_equal(r.chart, want);
    }
    assert_int_equal(get_row(out, 0).chart[63], '.');   /* 189..191: out of layer 0's reach */
    assert_int_equal(get_row(out, 1).chart[63], '+');
    assert_int_equal(get_row(out, 0).chart[64], '#');   /* 192..194 holds 193 */
    free(out);

    out = span_ok("-l 2 -w 1");   /* 4W = 4 */
    expect_in(out, "token 4 sees positions 4..4");
    free(out);
}

/* A model file with its own windows per layer, a full-attention layer among them:
   windows 4 4 full 3 8 at position 30. Layer 0 reads 27..30; layer 1 adds 3 below: 24..30;
   layer 2 has full attention: 0..30 from there up; layers 3 and 8 read 28..30 and 23..30. */
static void test_model_windows(void **state)
{
    static const int win[5] = {4, 4, 0, 3, 8}, win2[3] = {2, 3, 5}, full[2] = {0, 0};
    static const long long positions[5] = {0, 1, 7, 30, 100};
    char path[64], args[256];
    swa_model *m;
    swa_error err;
    char *out;
    int l, i;
    (void)state;
    need_program();
    tu_tmp_path(path, sizeof path, "model");
    write_model(path, 5, win);

    /* the library agrees with the file we wrote */
    assert_int_equal(swa_model_load(path, &m, &err), SWA_OK);
    for (l = 0; l < 5; l++) assert_int_equal(swa_model_layer_window(m, l), win[l]);
    swa_model_free(m);

    snprintf(args, sizeof args, "-m %s -p 30", path);
    out = span_ok(args);
    expect_in(out, "5 layers, windows 4x2, full, 3, 8: after 5 layers, token 30 sees positions 0..30 "
                   "(directly 23..30)");
    expect_row(out, 0, "4", 27, 27, 30);
    expect_row(out, 1, "4", 27, 24, 30);
    expect_layer(out, 2, "full", 0, 0, 30);
    expect_layer(out, 3, "3", 28, 0, 30);
    expect_row(out, 4, "8", 23, 0, 30);
    free(out);

    for (i = 0; i < 5; i++) {
        snprintf(args, sizeof args, "-m %s -p %lld", path, positions[i]);
        out = span_ok(args);
        expect_brute(out, win, 5, positions[i]);
        free(out);
    }

    /* default position: 4 x the largest window */
    snprintf(args, sizeof args, "-m %s", path);
    out = span_ok(args);
    expect_in(out, "token 32 sees positions 0..32 (directly 25..32)");
    free(out);

    /* -w overrides every layer, the full one too: 5 layers of 2 at 10 reach 10 - 5 = 5 */
    snprintf(args, sizeof args, "-m %s -w 2 -p 10", path);
    out = span_ok(args);
    expect_in(out, "5 layers, window 2: after 5 layers, token 10 sees positions 5..10 (directly 9..10)");
    expect_row(out, 2, "2", 9, 7, 10);   /* after 3 layers: 10 - 3 */
    free(out);
    unlink(path);

    /* windows 2 3 5 at 20: 19..20; 20-1-2 = 17; 17-4 = 13 */
    write_model(path, 3, win2);
    snprintf(args, sizeof args, "-m %s -p 20", path);
    out = span_ok(args);
    expect_row(out, 0, "2", 19, 19, 20);
    expect_row(out, 1, "3", 18, 17, 20);
    expect_row(out, 2, "5", 16, 13, 20);
    expect_in(out, "after 3 layers, token 20 sees positions 13..20 (directly 16..20)");
    free(out);
    unlink(path);

    /* every layer full: the default position is 64 and everything is direct */
    write_model(path, 2, full);
    snprintf(args, sizeof args, "-m %s", path);
    out = span_ok(args);
    expect_in(out, "2 layers, full attention: after 2 layers, token 64 sees positions 0..64 (directly 0..64)");
    expect_row(out, 1, "full", 0, 0, 64);
    free(out);
    unlink(path);
}

/* One rect per non-empty segment of each layer, plus the background and the three legend keys. */
static void test_svg(void **state)
{
    static const int win[5] = {4, 4, 0, 3, 8};
    char path[64], model[64], args[256], want[128];
    char *svg;
    int l, segs;
    (void)state;
    need_program();
    tu_tmp_path(path, sizeof path, "svg");

    svg = svg_of("-l 3 -w 4 -p 20", path);
    /* layer 0: out + direct; layers 1 and 2: out + reach + direct */
    assert_int_equal(count(svg, "class=\"seg "), 8);
    assert_int_equal(count(svg, "<rect"), 8 + 4);
    assert_int_equal(count(svg, "class=\"bg\""), 1);
    assert_int_equal(count(svg, "class=\"key\""), 3);
    expect_in(svg, "<title>layer 2: positions 0..10, out of reach</title>");
    expect_in(svg, "<title>layer 2: positions 11..16, through lower layers</title>");
    expect_in(svg, "<title>layer 2: positions 17..20, direct window</title>");
    expect_in(svg, "<title>layer 1: positions 14..16, through lower layers</title>");
    expect_in(svg, "<title>layer 0: positions 0..16, out of reach</title>");
    expect_in(svg, "<title>layer 0: positions 17..20, direct window</title>");
    assert_null(strstr(svg, "<title>layer 0: positions 17..16"));
    assert_int_equal(count(svg, "<title>layer 0:"), 2);
    expect_in(svg, "layer 2  W 4");
    expect_in(svg, "after 3 layers it sees positions 11..20 (directly 17..20)");
    free(svg);

    svg = svg_of("-l 3 -w 4 -p 2", path);   /* everything direct: one segment a layer */
    assert_int_equal(count(svg, "class=\"seg "), 3);
    assert_int_equal(count(svg, "class=\"seg direct\""), 3);
    free(svg);

    svg = svg_of("-l 1024 -w 4096 -p 1000000000000000", path);   /* the largest the tool takes */
    /* layer 0 has no reach segment; the others have all three */
    assert_int_equal(count(svg, "class=\"seg "), 2 + 1023 * 3);
    free(svg);

    /* a model with a full layer: segments as the brute-force walk says */
    tu_tmp_path(model, sizeof model, "svgmodel");
    write_model(model, 5, win);
    snprintf(args, sizeof args, "-m %s -p 30", model);
    svg = svg_of(args, path);
    for (segs = 0, l = 0; l < 5; l++) {
        long long d = brute_direct(win[l], 30), r = brute_reach(win, l, 30);
        segs += 1 + (r > 0) + (d > r);
        snprintf(want, sizeof want, "<title>layer %d: positions %lld..30, direct window</title>", l, d);
        expect_in(svg, want);
    }
    assert_int_equal(count(svg, "class=\"seg "), (size_t)segs);
    expect_in(svg, "layer 2  W full");
    free(svg);
    unlink(model);
    unlink(path);
}

/* Signature, IHDR as announced, a CRC on every chunk, stored blocks whose Adler-32 holds and
   whose size is one filter byte plus RGB per row. */
static void test_png(void **state)
{
    static const uint8_t check[9] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
    char path[64];
    png p;
    uint32_t y, x, k, n_colours = 0, colours[64];
    (void)state;
    need_program();
    /* the test's own checksums against their published check values */
    assert_int_equal(crc32_bitwise(check, 9), 0xCBF43926u);
    assert_int_equal(adler32_plain((const uint8_t *)"Wikipedia", 9), 0x11E60398u);

    tu_tmp_path(path, sizeof path, "png");
    p = png_of("-l 3 -w 4 -p 20", path);
    assert_true(p.w >= 100 && p.h >= 50);
    /* filter 0 on every row, and a handful of flat colours: no blur, no noise */
    for (y = 0; y < p.h; y++) {
        const uint8_t *row = p.raw + (size_t)y * (1 + (size_t)p.w * 3);
        assert_int_equal(row[0], 0);
        for (x = 0; x < p.w; x++) {
            uint32_t c = (uint32_t)row[1 + 3 * x] << 16 | (uint32_t)row[2 + 3 * x] << 8 | row[3 + 3 * x];
            for (k = 0; k < n_colours && colours[k] != c; k++) continue;
            if (k == n_colours) {
                assert_true(n_colours < 64);
                colours[n_colours++] = c;
            }
        }
    }
    assert_true(n_colours >= 4 && n_colours <= 12);
    free(p.raw);

    /* many layers: a zlib stream over many stored blocks and IDAT chunks */
    p = png_of("-l 40 -w 3", path);
    assert_true(p.n_blocks > 1);
    assert_true(p.n_idat > 1);
    free(p.raw);

    p = png_of("-l 1 -w 1 -p 0", path);
    assert_int_equal(p.n_blocks, (int)((p.raw_n + 65534) / 65535));
    free(p.raw);
    unlink(path);
}

/* Bad usage exits 2 with a message and the usage; a model or picture that fails exits 1. */
static void test_usage_errors(void **state)
{
    static const char *usage_cases[] = {
        "", "-l 3", "-l 0 -w 4", "-l 1025 -w 4", "-l 3 -w 0", "-l 3 -w -2", "-l 3 -w 4 -p -1",
        "-l 3 -w 4 -p 12abc", "-l 3 -w 4 -p", "-l x -w 4", "-m a.gguf -l 3 -w 4", "--frobnicate",
        "-l 3 -w 4 --svg", "-l 3 -w 99999999999",
    };
    char cmd[512], path[64], bad[64];
    size_t i;
    int rc;
    char *out;
    (void)state;
    need_program();
    for (i = 0; i < sizeof usage_cases / sizeof usage_cases[0]; i++) {
        snprintf(cmd, sizeof cmd, "%s %s 2>&1 >/dev/null", SPAN, usage_cases[i]);
        out = tu_capture(cmd, &rc);
        if (rc != 2 || !strstr(out, "swa-span: ") || !strstr(out, "usage:"))
            fail_msg("\"%s\": exit %d, stderr:\n%s", usage_cases[i], rc, out);
        free(out);
    }
    snprintf(cmd, sizeof cmd, "%s -h", SPAN);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 0);
    expect_in(out, "usage:");
    free(out);

    snprintf(cmd, sizeof cmd, "%s -m /nonexistent/model.gguf 2>&1", SPAN);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 1);
    expect_in(out, "/nonexistent/model.gguf");
    free(out);

    tu_tmp_path(bad, sizeof bad, "notgguf");   /* an empty file is no model */
    snprintf(cmd, sizeof cmd, "%s -m %s 2>&1", SPAN, bad);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 1);
    expect_in(out, "swa-span: ");
    free(out);
    unlink(bad);

    tu_tmp_path(path, sizeof path, "dir");
    unlink(path);
    snprintf(cmd, sizeof cmd, "%s -l 2 -w 3 --svg %s/no/such/dir.svg 2>&1", SPAN, path);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 1);
    expect_in(out, "cannot write");
    free(out);
    snprintf(cmd, sizeof cmd, "%s -l 2 -w 3 --png %s/no/such/dir.png 2>&1", SPAN, path);
    out = tu_capture(cmd, &rc);
    assert_int_equal(rc, 1);
    expect_in(out, "cannot write");
    free(out);
}

/* The project's own model, when it has been trained: windows as the library reads them. */
static void test_stories(void **state)
{
    swa_model *m;
    swa_error err;
    int *win, l, n, largest = 0;
    long long pos;
    char args[256], svg[64], pic[64];
    char *out, *text;
    png p;
    (void)state;
    need_program();
    if (access(STORIES, R_OK) != 0) {
        print_message("%s is absent (tools/train/run.sh makes it): skipping\n", STORIES);
        skip();
    }
    assert_int_equal(swa_model_load(STORIES, &m, &err), SWA_OK);
    n = swa_model_hparams(m)->n_layer;
    win = (int *)malloc(sizeof(int) * (size_t)n);
    assert_non_null(win);
    for (l = 0; l < n; l++) {
        win[l] = swa_model_layer_window(m, l);
        if (win[l] > largest) largest = win[l];
    }
    swa_model_free(m);
    pos = largest ? 4LL * largest : 64;

    out = span_ok("-m " STORIES);
    expect_brute(out, win, n, pos);
    free(out);
    out = span_ok("-m " STORIES " -p 100");
    expect_brute(out, win, n, 100);
    free(out);

    tu_tmp_path(svg, sizeof svg, "stories_svg");
    tu_tmp_path(pic, sizeof pic, "stories_png");
    text = svg_of("-m " STORIES, svg);
    expect_in(text, strrchr("/" STORIES, '/') + 1);   /* the title names the file */
    free(text);
    snprintf(args, sizeof args, "-m %s", STORIES);
    p = png_of(args, pic);
    free(p.raw);
    unlink(svg);
    unlink(pic);
    free(win);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_default_position_and_scale),
        cmocka_unit_test(test_model_windows),
        cmocka_unit_test(test_svg),
        cmocka_unit_test(test_png),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_stories),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
