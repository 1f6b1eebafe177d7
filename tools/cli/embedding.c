/* swa-embedding: embeddings of texts, as llama-embedding prints them.

   swa-embedding -m MODEL.gguf (-p TEXT | -f FILE) [--embd-separator S] [--pooling mean|cls|last]
                 [--embd-normalize N] [--embd-output-format ''|array|json|json+] [-c N] [-t N]
                 [--verbose-prompt]

   The text is cut into prompts at each separator (a newline unless --embd-separator says
   otherwise; -f drops one newline at the end of the file first, as llama-embedding does). Each
   prompt is tokenized as llama-embedding tokenizes it (BOS and EOS as the vocabulary asks,
   control tokens written in the text become those tokens) and embedded by swa_ctx_embed, from
   position 0, in a context whose positions and batch hold the longest prompt and whose cache is
   F32; the pooled vector is then scaled as --embd-normalize says (llama.cpp's
   common_embd_normalize):
       -1  none
        0  max-abs: v * 32760 / max|v| (the int16 range; printed as integers)
        1  taxicab: v / sum|v|
        2  euclidean: v / sqrt(sum v^2) (the default)
       p>2 p-norm: v / (sum |v|^p)^(1/p)
   A zero vector stays zero. Pooling: mean, last (the last token's state) or cls (the first
   token's: an encoder's has seen the whole text, a causal model's only itself); by default the file's
   {arch}.pooling_type when it names cls or last, else mean. none (a vector per token) and rank
   (a classifier's score) are not supported. Output on stdout, in llama-embedding's shapes:
       ''     "embedding N: v v ..." per prompt (the whole vector for one prompt, the first 16
              values each for several), then for several prompts their cosine similarity matrix
       array  [[v,...],[v,...]]
       json   OpenAI's list: {"object": "list", "data": [{"object": "embedding", "index": 0,
              "embedding": [...]}, ...]}
       json+  json with "cosineSimilarity", the matrix, when there are several prompts
   --verbose-prompt lists each prompt's tokens on stderr. Exit status: 0 complete, 1 an error
   (a model or file that cannot be read, a prompt with no tokens or longer than -c), 2 bad usage,
   130 stopped by Ctrl-C. */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime, sigaction */
#include "swa.h"
#include "tools/common/printable.h"
#define PROG "swa-embedding"
#include "tools/common/tool.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { POOL_FILE = -1, POOL_NONE = 0, POOL_MEAN = 1, POOL_CLS = 2, POOL_LAST = 3, POOL_RANK = 4 };   /* GGUF's ids */
enum { OUT_TEXT, OUT_ARRAY, OUT_JSON, OUT_JSON_PLUS };
#define SHOWN_OF_MANY 16   /* values printed per prompt in the plain output when there are several */

typedef struct options {
    const char *model, *prompt, *file, *sep;
    int pooling, format, verbose_prompt, no_mmap;
    int32_t normalize, n_ctx, n_threads;
} options;

typedef struct prompt {
    const char *text;
    size_t len;
    int32_t *ids;
    size_t n;
} prompt;

static void usage(FILE *f)
{
    fprintf(f, "usage: swa-embedding -m MODEL.gguf (-p TEXT | -f FILE) [--embd-separator S] [--pooling mean|cls|last]\n"
               "                     [--embd-normalize N] [--embd-output-format ''|array|json|json+] [-c N] [-t N]\n"
               "                     [--verbose-prompt] [--no-mmap]\n"
               "  -m, --model FILE          GGUF model with a vocabulary\n"
               "  -p, --prompt TEXT         the prompts, separated by the separator\n"
               "  -f, --file FILE           read them from a file (- for stdin); one final newline is dropped\n"
               "  --embd-separator S        what separates prompts (default: a newline)\n"
               "  --pooling P               mean, cls or last; default: the file's\n"
               "                            {arch}.pooling_type when cls or last, else mean\n"
               "  --embd-normalize N        -1 none, 0 max-abs to the int16 range, 1 taxicab, 2 euclidean\n"
               "                            (default), >2 p-norm\n"
               "  --embd-output-format F    '' (default): \"embedding N: ...\" lines and, for several prompts,\n"
               "                            their cosine similarities; array: [[...],...]; json: OpenAI's list;\n"
               "                            json+: json and the cosine similarity matrix\n"
               "  -c, --ctx-size N          positions (default: the longest prompt's tokens)\n"
               "  -t, --threads N           threads (default 0: every online CPU)\n"
               "  --verbose-prompt          each prompt's tokens on stderr\n"
               "  --no-mmap                 read the model into memory instead of mapping it\n"
               "  -h, --help                this help; --version: the program's name and version\n"
               "  Exit status: 0 complete, 1 error, 2 bad usage, 130 stopped by Ctrl-C.\n");
}

static void parse_int(const char *flag, const char *s, long lo, long hi, int32_t *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) usage_fail("%s wants a number in %ld..%ld, got \"%s\"", flag, lo, hi, s);
    *out = (int32_t)v;
}

static int parse_pooling(const char *s)
{
    static const char *const names[] = {"none", "mean", "cls", "last", "rank"};
    int k;
    for (k = 0; k < 5; k++)
        if (!strcmp(s, names[k])) break;
    if (k == POOL_NONE || k == POOL_RANK)
        usage_fail("--pooling %s is not supported (a vector per token, a classifier's score): give mean, cls or last", s);
    if (k == 5) usage_fail("--pooling is mean, cls or last, got \"%s\"", s);
    return k;
}

static int parse_format(const char *s)
{
    static const char *const names[] = {"", "array", "json", "json+"};
    int k;
    for (k = 0; k < 4; k++)
        if (!strcmp(s, names[k])) return k;
    usage_fail("--embd-output-format is '', array, json or json+, got \"%s\"", s);
}

/* The value of flag argv[*i], which must have one. */
static const char *value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) usage_fail("%s needs a value", argv[*i]);
    return argv[++*i];
}

static void parse_args(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->sep = "\n";
    o->pooling = POOL_FILE;
    o->normalize = 2;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); stdout_flush(); exit(0); }
        if (!strcmp(a, "--version")) {
            printf("%s %d.%d.%d\n", PROG, SWA_VERSION_MAJOR, SWA_VERSION_MINOR, SWA_VERSION_PATCH);
            stdout_flush();
            exit(0);
        }
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) o->model = value(argc, argv, &i);
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) o->prompt = value(argc, argv, &i);
        else if (!strcmp(a, "-f") || !strcmp(a, "--file")) o->file = value(argc, argv, &i);
        else if (!strcmp(a, "--embd-separator")) o->sep = value(argc, argv, &i);
        else if (!strcmp(a, "--pooling")) o->pooling = parse_pooling(value(argc, argv, &i));
        else if (!strcmp(a, "--embd-normalize")) parse_int(a, value(argc, argv, &i), -1, INT_MAX, &o->normalize);
        else if (!strcmp(a, "--embd-output-format")) o->format = parse_format(value(argc, argv, &i));
        else if (!strcmp(a, "-c") || !strcmp(a, "--ctx-size")) parse_int(a, value(argc, argv, &i), 1, INT_MAX, &o->n_ctx);
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) parse_int(a, value(argc, argv, &i), 0, 256, &o->n_threads);
        else if (!strcmp(a, "--verbose-prompt")) o->verbose_prompt = 1;
        else if (!strcmp(a, "--no-mmap")) o->no_mmap = 1;
        else usage_fail("unknown flag %s", a);
    }
    if (!o->model) usage_fail("-m MODEL is required");
    if (!!o->prompt + !!o->file != 1) usage_fail("give one of -p TEXT and -f FILE");
    if (!*o->sep) usage_fail("--embd-separator must not be empty");
}

/* The prompts of text[0..len), cut at each separator: *n of them in a malloc'd array. */
static prompt *split(const char *text, size_t len, const char *sep, size_t *n)
{
    size_t k = strlen(sep), cap = 1, i, start = 0;
    prompt *p;
    for (i = 0; i + k <= len; i++)
        if (!memcmp(text + i, sep, k)) { cap++; i += k - 1; }
    if (!(p = (prompt *)calloc(cap, sizeof *p))) fail("out of memory for %zu prompts", cap);
    *n = 0;
    for (i = 0; i + k <= len; i++)
        if (!memcmp(text + i, sep, k)) {
            p[*n].text = text + start;
            p[(*n)++].len = i - start;
            start = i + k;
            i += k - 1;
        }
    p[*n].text = text + start;
    p[(*n)++].len = len - start;
    return p;
}

/* The pooling asked for, or the file's: {arch}.pooling_type when it is cls or last, else mean
   (as swa-server chooses). */
static int file_pooling(const swa_model *m)
{
    const swa_gguf *g = swa_model_gguf(m);
    char key[160];
    int64_t k, v;
    swa_gguf_value val;
    snprintf(key, sizeof key, "%s.pooling_type", swa_model_hparams(m)->arch);
    if ((k = swa_gguf_kv_find(g, key)) < 0) return POOL_MEAN;
    val = swa_gguf_kv_value(g, k);
    if (swa_gguf_value_int(&val, &v) != SWA_OK) return POOL_MEAN;
    return v == POOL_CLS || v == POOL_LAST ? (int)v : POOL_MEAN;
}

/* --verbose-prompt: the prompt and its tokens, each with its text (bytes that are not printable
   UTF-8 as \xHH), on stderr. */
static void print_token_list(const swa_vocab *v, const prompt *p, size_t index)
{
    size_t i, j, k, len;
    char text[256];
    fprintf(stderr, PROG ": prompt %zu: '%.*s'\n" PROG ": number of tokens in prompt = %zu\n", index, (int)p->len, p->text, p->n);
    for (i = 0; i < p->n; i++) {
        len = swa_token_to_text(v, p->ids[i], text, sizeof text);
        if (len > sizeof text) len = sizeof text;
        fprintf(stderr, "%6d -> '", p->ids[i]);
        for (j = 0; j < len; j += k ? k : 1) {
            k = printable_utf8((const unsigned char *)text + j, len - j);
            if (k) fwrite(text + j, 1, k, stderr);
            else fprintf(stderr, "\\x%02x", (unsigned char)text[j]);
        }
        fprintf(stderr, "'\n");
    }
}

/* Every prompt's tokens, as llama-embedding's common_tokenize(ctx, text, true, true) makes them. */
static void tokenize_prompts(const swa_vocab *v, prompt *p, size_t n, int verbose)
{
    int flags = SWA_TOKENIZE_SPECIAL | (swa_vocab_add_bos(v) ? SWA_TOKENIZE_ADD_BOS : 0) |
                (swa_vocab_add_eos(v) ? SWA_TOKENIZE_ADD_EOS : 0);
    size_t i;
    for (i = 0; i < n; i++) {
        if (!(p[i].ids = tokenize_all(v, p[i].text, p[i].len, flags, p[i].len + 4, &p[i].n))) exit(1);
        if (p[i].n == 0) fail("prompt %zu is empty: it has no tokens to embed", i);
        if (verbose) print_token_list(v, &p[i], i);
    }
}

/* llama.cpp's common_embd_normalize, the p-norm taken over |v| / max|v| so that a large p
   neither overflows nor underflows (the same quotient in exact arithmetic). */
static void normalize(float *v, int64_t d, int32_t how)
{
    double sum = 0.0, max = 0.0, scale;
    int64_t i;
    for (i = 0; i < d; i++) max = fabs((double)v[i]) > max ? fabs((double)v[i]) : max;
    if (how == -1 || max == 0.0) return;
    if (how == 0) sum = max / 32760.0;
    else {
        for (i = 0; i < d; i++) sum += how == 2 ? ((double)v[i] / max) * ((double)v[i] / max) : pow(fabs((double)v[i]) / max, how);
        sum = max * (how == 2 ? sqrt(sum) : pow(sum, 1.0 / how));
    }
    scale = 1.0 / sum;
    for (i = 0; i < d; i++) v[i] = (float)(v[i] * scale);
}

static double cosine(const float *a, const float *b, int64_t d)
{
    double ab = 0.0, aa = 0.0, bb = 0.0;
    int64_t i;
    for (i = 0; i < d; i++) {
        ab += (double)a[i] * b[i];
        aa += (double)a[i] * a[i];
        bb += (double)b[i] * b[i];
    }
    if (aa == 0.0 || bb == 0.0) return aa == bb ? 1.0 : 0.0;   /* two zero vectors are alike */
    return ab / (sqrt(aa) * sqrt(bb));
}

/* The plain output: each prompt's vector (or its first values when there are several), then
   the cosine similarity matrix headed by each prompt's first 6 bytes. */
static void print_text(const options *o, const prompt *p, size_t n, const float *e, int64_t d)
{
    size_t i, j;
    int64_t k, shown = n > 1 && d > SHOWN_OF_MANY ? SHOWN_OF_MANY : d;
    for (i = 0; i < n; i++) {
        printf("embedding %zu: ", i);
        for (k = 0; k < shown; k++) printf(o->normalize == 0 ? "%6.0f " : "%9.6f ", (double)e[i * (size_t)d + (size_t)k]);
        printf("\n");
    }
    if (n < 2) return;
    printf("\ncosine similarity matrix:\n\n");
    for (i = 0; i < n; i++) printf("%6.*s ", (int)(p[i].len < 6 ? p[i].len : 6), p[i].text);
    printf("\n");
    for (i = 0; i < n; i++) {
        for (j = 0; j < n; j++) printf("%6.2f ", cosine(e + i * (size_t)d, e + j * (size_t)d, d));
        printf("%.*s\n", (int)(p[i].len < 10 ? p[i].len : 10), p[i].text);
    }
}

/* array, json and json+. */
static void print_json(const options *o, size_t n, const float *e, int64_t d)
{
    int wrap = o->format != OUT_ARRAY;
    size_t i, j;
    int64_t k;
    printf(wrap ? "{\n  \"object\": \"list\",\n  \"data\": [\n" : "[");
    for (i = 0; i < n; i++) {
        if (wrap) printf("    {\n      \"object\": \"embedding\",\n      \"index\": %zu,\n      \"embedding\": ", i);
        printf("[");
        for (k = 0; k < d; k++) printf(o->normalize == 0 ? "%s%1.0f" : "%s%1.7f", k ? "," : "", (double)e[i * (size_t)d + (size_t)k]);
        printf(wrap ? "]\n    }" : "]");
        if (i + 1 < n) printf(wrap ? ",\n" : ",");
    }
    printf(wrap ? "\n  ]" : "]\n");
    if (o->format == OUT_JSON_PLUS && n > 1) {
        printf(",\n  \"cosineSimilarity\": [\n");
        for (i = 0; i < n; i++) {
            printf("    [");
            for (j = 0; j < n; j++) printf("%s%6.2f", j ? ", " : "", cosine(e + i * (size_t)d, e + j * (size_t)d, d));
            printf(i + 1 < n ? " ],\n" : " ]");
        }
        printf("\n  ]");
    }
    if (wrap) printf("\n}\n");
}

/* The pooled vectors of the prompts into e[n][d], scaled as asked. */
/* GGUF's pooling id as the library's. */
static int32_t library_pooling(int pooling)
{
    return pooling == POOL_CLS ? SWA_POOL_CLS : pooling == POOL_LAST ? SWA_POOL_LAST : SWA_POOL_MEAN;
}

static void embed_all(const options *o, const swa_model *m, int pooling, const prompt *p, size_t n, float *e)
{
    swa_ctx_config cfg = swa_ctx_config_default(m);
    swa_ctx *c;
    swa_error err;
    size_t i, longest = 1;
    int64_t d = swa_model_hparams(m)->n_embd;
    for (i = 0; i < n; i++) longest = p[i].n > longest ? p[i].n : longest;
    if (longest > INT_MAX) fail("a prompt of %zu tokens is too long", longest);
    cfg.n_ctx = o->n_ctx ? o->n_ctx : (int32_t)longest;
    cfg.n_batch = (int32_t)longest;   /* an encoder reads each text in one batch */
    cfg.n_threads = o->n_threads;
    cfg.kv_type = SWA_KV_F32;
    if (swa_ctx_create(m, &cfg, &c, &err) != SWA_OK) fail("%s", err.msg);
    swa_ctx_set_abort(c, interrupt_abort, NULL);
    for (i = 0; i < n; i++) {
        float *out = e + i * (size_t)d;
        swa_status s = swa_ctx_embed(c, 0, p[i].ids, p[i].n, library_pooling(pooling), 0, out, &err);
        if (s == SWA_ERR_ABORTED && interrupted()) interrupt_exit("after %zu of %zu prompts", i, n);
        if (s != SWA_OK) fail("prompt %zu (%zu tokens): %s", i, p[i].n, err.msg);
        normalize(out, d, o->normalize);
    }
    swa_ctx_free(c);
}

int main(int argc, char **argv)
{
    options o;
    char *text = NULL;
    size_t len, n, i;
    prompt *p;
    swa_model *m;
    const swa_vocab *v;
    swa_error err;
    float *e;
    int pooling;
    int64_t d;
    parse_args(argc, argv, &o);
    catch_interrupt();
    if (o.file) {
        if (!(text = read_all(o.file, &len))) return 1;
        if (len && text[len - 1] == '\n') len--;
    } else {
        len = strlen(o.prompt);
    }
    p = split(o.file ? text : o.prompt, len, o.sep, &n);
    m = load_model_or_exit(o.model, o.no_mmap);
    if (swa_model_vocab(m, &v, &err) != SWA_OK) fail("%s: %s", o.model, err.msg);
    pooling = o.pooling == POOL_FILE ? file_pooling(m) : o.pooling;
    tokenize_prompts(v, p, n, o.verbose_prompt);
    d = swa_model_hparams(m)->n_embd;
    if (n > SIZE_MAX / sizeof(float) / (size_t)d || !(e = (float *)malloc(n * (size_t)d * sizeof(float))))
        fail("out of memory for %zu embeddings", n);
    embed_all(&o, m, pooling, p, n, e);
    if (o.format == OUT_TEXT) print_text(&o, p, n, e, d);
    else print_json(&o, n, e, d);
    stdout_flush();
    for (i = 0; i < n; i++) free(p[i].ids);
    free(p);
    free(e);
    free(text);
    swa_model_free(m);
    return 0;
}
