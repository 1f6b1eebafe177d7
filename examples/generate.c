/* swa-generate: text generation and chat with swa.h.

   swa-generate -m MODEL.gguf -p "Once upon a time" [-n 256] [--temp 0.8] ...
   swa-generate -m MODEL.gguf --chat

   The prompt is echoed, then the continuation streams to stdout; a model summary and the
   speeds go to stderr. Ctrl-C stops generation and still prints the timings. */
#define _POSIX_C_SOURCE 200809L
#define SWA_IMPLEMENTATION
#include "swa.h"
#include "tools/safe_write.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct options {
    const char *model, *prompt, *prompt_file, *ids, *dump_logits;
    int32_t *prompt_ids;          /* --ids, parsed */
    size_t n_prompt_ids;
    long n_predict;               /* -1: until end-of-sequence */
    int no_bos, chat, seed_given, no_mmap;
    swa_ctx_config cfg;
    swa_sampler_config sampling;
} options;

typedef struct timings {
    double prompt_s, gen_s;
    long n_prompt, n_gen;
} timings;

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) { (void)sig; interrupted = 1; }

static void usage(FILE *f)
{
    fprintf(f,
        "usage: swa-generate -m MODEL.gguf [-p TEXT | -f FILE | --ids 1,2,3] [options]\n"
        "       swa-generate -m MODEL.gguf -i\n"
        "  -m FILE              GGUF model (architecture llama)\n"
        "  -p TEXT              prompt text\n"
        "  -f FILE              read the prompt from a file\n"
        "  --ids LIST           prompt as comma-separated token ids, used as given\n"
        "  --no-bos             do not put BOS before the prompt\n"
        "  -n N                 tokens to generate (default 256; -1 = until end of sequence,\n"
        "                       which with a window may be forever; 0 = evaluate the prompt only)\n"
        "  -i, --chat           interactive chat in the Mistral format [INST] ... [/INST]\n"
        "  -s SEED              sampling seed (default: from the clock, printed)\n"
        "  --temp T             temperature (default 0.8; 0 = greedy)\n"
        "  --top-k N            keep the N most likely tokens (default 40; 0 = off)\n"
        "  --top-p P            nucleus sampling (default 0.95; 1 = off)\n"
        "  --min-p P            drop tokens below P x the best (default 0.05; 0 = off)\n"
        "  --repeat-penalty R   penalise recent tokens (default 1.0 = off)\n"
        "  --repeat-last-n N    tokens the penalty looks at (default 64)\n"
        "  -t N                 threads (default: online CPUs)\n"
        "  -w N                 sliding window for every layer (default: the model's)\n"
        "  -c N                 cache size for layers without a window (default min(trained, 4096))\n"
        "  -b N                 prompt tokens per forward pass (default 64)\n"
        "  --kv TYPE            key/value cache type: f16 (default), f32, or q8_0 (about half of f16)\n"
        "  --kv-f32             the same as --kv f32\n"
        "  --no-mmap            read the model into memory instead of mapping it (faster in some VMs)\n"
        "  --dump-logits FILE   float32 logits, one row of n_vocab per evaluated position\n"
        "  -h, --help           this help\n");
}

static int bad_value(const char *flag, const char *val, const char *want)
{
    fprintf(stderr, "swa-generate: %s wants %s, got \"%s\"\n", flag, want, val);
    return 0;
}

static int parse_long(const char *flag, const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;
    char want[96];
    errno = 0;
    v = strtol(s, &end, 10);
    snprintf(want, sizeof want, "a number in %ld..%ld", lo, hi);
    if (errno || end == s || *end || v < lo || v > hi) return bad_value(flag, s, want);
    *out = v;
    return 1;
}

static int parse_float(const char *flag, const char *s, float lo, float hi, float *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= lo && v <= hi)) return bad_value(flag, s, "a number in range");
    *out = (float)v;
    return 1;
}

/* One flag with its value; 0 on a bad value. */
static int parse_flag(options *o, const char *a, const char *val)
{
    long v;
    if (!strcmp(a, "-m")) o->model = val;
    else if (!strcmp(a, "-p")) o->prompt = val;
    else if (!strcmp(a, "-f")) o->prompt_file = val;
    else if (!strcmp(a, "--ids")) o->ids = val;
    else if (!strcmp(a, "--dump-logits")) o->dump_logits = val;
    else if (!strcmp(a, "-n")) return parse_long(a, val, -1, LONG_MAX, &o->n_predict);
    else if (!strcmp(a, "-s")) {
        char *end;
        errno = 0;
        o->sampling.seed = strtoull(val, &end, 10);
        if (errno || end == val || *end || *val == '-') return bad_value(a, val, "a non-negative integer");
        o->seed_given = 1;
    }
    else if (!strcmp(a, "--temp")) return parse_float(a, val, 0.0f, 100.0f, &o->sampling.temperature);
    else if (!strcmp(a, "--top-k")) { if (!parse_long(a, val, 0, 1 << 30, &v)) return 0; o->sampling.top_k = (int32_t)v; }
    else if (!strcmp(a, "--top-p")) return parse_float(a, val, 0.0f, 1.0f, &o->sampling.top_p);
    else if (!strcmp(a, "--min-p")) return parse_float(a, val, 0.0f, 1.0f, &o->sampling.min_p);
    else if (!strcmp(a, "--repeat-penalty")) return parse_float(a, val, 0.0f, 100.0f, &o->sampling.repeat_penalty);
    else if (!strcmp(a, "--repeat-last-n")) { if (!parse_long(a, val, 1, 1 << 20, &v)) return 0; o->sampling.repeat_last_n = (int32_t)v; }
    else if (!strcmp(a, "-t")) { if (!parse_long(a, val, 1, 256, &v)) return 0; o->cfg.n_threads = (int32_t)v; }
    else if (!strcmp(a, "-w")) { if (!parse_long(a, val, 1, INT32_MAX, &v)) return 0; o->cfg.window = (int32_t)v; }
    else if (!strcmp(a, "-c")) { if (!parse_long(a, val, 1, INT32_MAX, &v)) return 0; o->cfg.n_ctx = (int32_t)v; }
    else if (!strcmp(a, "-b")) { if (!parse_long(a, val, 1, 1 << 20, &v)) return 0; o->cfg.n_batch = (int32_t)v; }
    else if (!strcmp(a, "--kv")) {
        if ((o->cfg.kv_type = swa_kv_type_from_name(val)) < 0) return bad_value(a, val, "f16, f32 or q8_0");
    }
    else { fprintf(stderr, "swa-generate: unknown flag %s\n", a); return 0; }
    return 1;
}

/* "1,2,3" -> ids; returns the count, 0 on a malformed list. */
static size_t parse_ids(const char *s, int32_t **out)
{
    size_t n = 1, k;
    const char *p;
    for (p = s; *p; p++) n += *p == ',';
    if (!(*out = (int32_t *)malloc(n * sizeof(int32_t)))) return 0;
    for (p = s, k = 0; k < n; k++) {
        char *end;
        long v;
        errno = 0;
        v = strtol(p, &end, 10);
        if (errno || end == p || v < INT32_MIN || v > INT32_MAX || (*end != ',' && *end != '\0')) {
            fprintf(stderr, "swa-generate: --ids: bad token id at \"%s\"\n", p);
            return 0;
        }
        (*out)[k] = (int32_t)v;
        p = end + (*end == ',');
    }
    return n;
}

static int parse_args(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->n_predict = 256;
    o->sampling.temperature = 0.8f;
    o->sampling.top_k = 40;
    o->sampling.top_p = 0.95f;
    o->sampling.min_p = 0.05f;
    o->sampling.repeat_penalty = 1.0f;
    o->sampling.repeat_last_n = 64;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
        if (!strcmp(a, "--version")) { printf("%s %d.%d.%d\n", "swa-generate", SWA_VERSION_MAJOR, SWA_VERSION_MINOR, SWA_VERSION_PATCH); exit(0); }
        else if (!strcmp(a, "--no-bos")) o->no_bos = 1;
        else if (!strcmp(a, "--kv-f32")) o->cfg.kv_type = SWA_KV_F32;
        else if (!strcmp(a, "--no-mmap")) o->no_mmap = 1;
        else if (!strcmp(a, "-i") || !strcmp(a, "--chat")) o->chat = 1;
        else if (a[0] != '-' || a[1] == '\0') { fprintf(stderr, "swa-generate: unexpected argument \"%s\"\n", a); return 0; }
        else if (i + 1 >= argc) {
            fprintf(stderr, strstr(" -m -p -f --ids --dump-logits -n -s --temp --top-k --top-p --min-p --repeat-penalty "
                                   "--repeat-last-n -t -w -c -b --kv ", a) ? "swa-generate: %s needs a value\n"
                                                                     : "swa-generate: unknown flag %s\n", a);
            return 0;
        }
        else if (!parse_flag(o, a, argv[++i])) return 0;
    }
    if (!o->model) { fprintf(stderr, "swa-generate: -m MODEL is required\n"); return 0; }
    if (!!o->prompt + !!o->prompt_file + !!o->ids > 1) { fprintf(stderr, "swa-generate: give one of -p, -f and --ids\n"); return 0; }
    if (o->ids && !(o->n_prompt_ids = parse_ids(o->ids, &o->prompt_ids))) return 0;
    if (!o->seed_given) o->sampling.seed = (uint64_t)time(NULL);
    return 1;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    if (!f) { fprintf(stderr, "swa-generate: cannot open %s: %s\n", path, strerror(errno)); return NULL; }
    do {
        if (n + 4096 + 1 > cap) {
            char *p = (char *)realloc(buf, cap = 2 * cap + 8192);
            if (!p) { free(buf); fclose(f); return NULL; }
            buf = p;
        }
        n += got = fread(buf + n, 1, cap - n - 1, f);
    } while (got > 0);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int contains_nocase(swa_str s, const char *needle)
{
    size_t i, j, n = strlen(needle);
    for (i = 0; i + n <= s.len; i++) {
        for (j = 0; j < n && tolower((unsigned char)s.ptr[i + j]) == needle[j]; j++) {}
        if (j == n) return 1;
    }
    return 0;
}

/* llama.cpp's converter never writes the window of Mistral 7B v0.1, which was trained with one. */
static void hint_missing_window(const swa_model *m, const swa_ctx *c, const char *path)
{
    const swa_gguf *g = swa_model_gguf(m);
    int64_t k = swa_gguf_kv_find(g, "general.name");
    swa_gguf_value v = swa_gguf_kv_value(g, k);
    swa_str name;
    if (k < 0 || swa_gguf_value_str(&v, &name) != SWA_OK) { name.ptr = path; name.len = strlen(path); }
    if (swa_ctx_window(c, 0) == 0 && contains_nocase(name, "mistral") &&
        (contains_nocase(name, "v0.1") || contains_nocase(name, "0.1")))
        fprintf(stderr, "hint: Mistral 7B v0.1 was trained with a 4096-token sliding window this file does not record; "
                        "pass -w 4096 or write it with: swa-inspect %s --set-window 4096 OUT.gguf\n", path);
}

static void print_summary(const swa_model *m, const swa_ctx *c, const options *o)
{
    const swa_hparams *hp = swa_model_hparams(m);
    swa_ctx_config cfg = swa_ctx_config_get(c);
    int32_t w = swa_ctx_window(c, 0);
    char attention[64];
    if (w) snprintf(attention, sizeof attention, "window %d", w);
    else snprintf(attention, sizeof attention, "full attention over %d positions", cfg.n_ctx);
    fprintf(stderr, "swa-generate: %d layers, %d heads (%d kv), embd %d, vocab %d, %s; %s; cache %.2f MiB %s; "
                    "%d threads, %s kernels; seed %llu; model %s\n",
            hp->n_layer, hp->n_head, hp->n_kv_head, hp->n_embd, hp->n_vocab, swa_type_name(hp->weight_type),
            attention, (double)swa_ctx_cache_bytes(c) / (1024.0 * 1024.0), swa_kv_type_name(cfg.kv_type),
            cfg.n_threads, swa_ctx_kernels(c), (unsigned long long)o->sampling.seed,
            swa_load_path_name(swa_model_load_path(m)));
}

typedef struct session {
    const options *o;
    swa_ctx *ctx;
    const swa_vocab *vocab;       /* NULL: print ids */
    swa_sampler *sampler;
    FILE *dump;
    float *rows;                  /* [n_batch][n_vocab] for --dump-logits */
    size_t n_vocab;
    const float *logits;          /* of the last evaluated token */
    timings t;
} session;

/* Evaluate tokens batch by batch, dumping logits when asked, and let the sampler see them;
   *done counts the tokens evaluated before any error. */
static swa_status eval_tokens(session *s, const int32_t *tok, size_t n, size_t *done, swa_error *err)
{
    size_t step = (size_t)swa_ctx_config_get(s->ctx).n_batch, i;
    swa_status st = SWA_OK;
    for (*done = 0; *done < n && st == SWA_OK; *done += step) {
        size_t len = n - *done < step ? n - *done : step;
        if (s->dump) {
            if ((st = swa_ctx_eval_all(s->ctx, tok + *done, len, s->rows, err)) != SWA_OK) break;
            fwrite(s->rows, sizeof(float), len * s->n_vocab, s->dump);
            s->logits = s->rows + (len - 1) * s->n_vocab;
        } else {
            st = swa_ctx_eval(s->ctx, tok + *done, len, &s->logits, err);
        }
        if (st != SWA_OK) break;
    }
    if (*done > n) *done = n;
    for (i = 0; i < *done; i++) swa_sampler_accept(s->sampler, tok[i]);
    return st;
}

static int feed(session *s, const int32_t *tok, size_t n)
{
    swa_error err;
    size_t done;
    if (eval_tokens(s, tok, n, &done, &err) == SWA_OK) return 1;
    fprintf(stderr, "\nswa-generate: %s\n", err.msg);
    return 0;
}

/* The timings count only what was evaluated. */
static int feed_prompt(session *s, const int32_t *tok, size_t n)
{
    double t0 = now_seconds();
    swa_error err;
    size_t done;
    swa_status st = eval_tokens(s, tok, n, &done, &err);
    s->t.prompt_s += now_seconds() - t0;
    s->t.n_prompt += (long)done;
    if (st != SWA_OK) fprintf(stderr, "\nswa-generate: %s\n", err.msg);
    return st == SWA_OK;
}

/* Feed back one generated token: 1, or -1 when a full-attention context has no room left
   (generation ends there, which is no error), or 0 on error. */
static int generate_step(session *s, int32_t tok)
{
    swa_error err;
    size_t done;
    swa_status st = eval_tokens(s, &tok, 1, &done, &err);
    if (st == SWA_OK) return 1;
    if (st == SWA_ERR_CONTEXT_FULL) {
        fflush(stdout);
        fprintf(stderr, "\nswa-generate: the context is full (%d positions); generation stops here\n",
                swa_ctx_config_get(s->ctx).n_ctx);
        return -1;
    }
    fprintf(stderr, "\nswa-generate: %s\n", err.msg);
    return 0;
}

/* Sample, print and feed back up to n_predict tokens (-1: no limit). Returns 0 on error;
   *ended says whether end-of-sequence was sampled. */
static int generate(session *s, long n_predict, int *ended)
{
    swa_decoder dec;
    char text[256];
    double t0 = now_seconds();
    long i;
    int ok = 1;
    *ended = 0;
    swa_decoder_init(&dec, s->vocab);
    dec.at_start = 0;   /* the prompt is already printed: keep every space */
    for (i = 0; (n_predict < 0 || i < n_predict) && !interrupted; i++) {
        int32_t tok = swa_sampler_sample(s->sampler, s->logits);
        if (s->vocab && tok == swa_vocab_eos(s->vocab)) { *ended = 1; break; }
        if (s->vocab) fwrite(text, 1, swa_decoder_push(&dec, tok, text, sizeof text), stdout);
        else printf("%s%d", i ? " " : "", tok);
        fflush(stdout);
        s->t.n_gen++;
        if (n_predict >= 0 && i + 1 == n_predict) break;   /* the last token needs no evaluation */
        if (!(ok = generate_step(s, tok))) break;
        if (ok < 0) {
            ok = 1;
            break;
        }
    }
    if (s->vocab) fwrite(text, 1, swa_decoder_flush(&dec, text, sizeof text), stdout);
    s->t.gen_s += now_seconds() - t0;
    return ok;
}

/* Tokenize text; BOS first when asked. Returns the count, 0 on error. */
static size_t tokenize(const swa_vocab *v, const char *text, int flags, int32_t **out)
{
    size_t n = 0, len = strlen(text), cap = len + 2;
    swa_error err;
    swa_status st;
    if (!(*out = (int32_t *)malloc(cap * sizeof(int32_t)))) return 0;
    st = swa_tokenize(v, text, len, flags, *out, cap, &n, &err);
    if (st == SWA_ERR_BUFFER_TOO_SMALL) {     /* byte fallback can give more tokens than bytes */
        int32_t *p = (int32_t *)realloc(*out, n * sizeof(int32_t));
        if (!p) return 0;
        *out = p;
        st = swa_tokenize(v, text, len, flags, *out, n, &n, &err);
    }
    if (st != SWA_OK) {
        fprintf(stderr, "swa-generate: %s\n", err.msg);
        return 0;
    }
    return n;
}

/* Mistral's instruct format: [BOS] "[INST] message [/INST]" answer [EOS] "[INST] ..." */
static int chat(session *s)
{
    char line[8192];
    int first = 1, ended;
    for (;;) {
        int32_t *tok;
        size_t n;
        char turn[8300];
        if (first && (s->o->prompt || s->o->prompt_file)) {
            char *text = s->o->prompt_file ? read_file(s->o->prompt_file) : NULL;
            size_t len;
            if (s->o->prompt_file && !text) return 0;
            len = (size_t)snprintf(line, sizeof line, "%s", text ? text : s->o->prompt);
            free(text);
            if (len >= sizeof line) {
                fprintf(stderr, "swa-generate: the first turn is longer than %zu bytes\n", sizeof line - 1);
                return 0;
            }
            if (len && line[len - 1] == '\n') line[len - 1] = '\0';   /* a file's last newline */
        } else {
            fprintf(stderr, "> ");
            interrupted = 0;
            if (!fgets(line, sizeof line, stdin)) return 1;
            line[strcspn(line, "\n")] = '\0';
            if (!line[0]) continue;
        }
        snprintf(turn, sizeof turn, "[INST] %s [/INST]", line);
        n = tokenize(s->vocab, turn, SWA_TOKENIZE_SPECIAL | (first && !s->o->no_bos ? SWA_TOKENIZE_ADD_BOS : 0), &tok);
        first = 0;
        if (!n || !feed_prompt(s, tok, n)) { free(tok); return 0; }
        free(tok);
        if (!generate(s, s->o->n_predict, &ended)) return 0;
        printf("\n");
        if (!ended) {                  /* close the turn as the format expects */
            int32_t eos = swa_vocab_eos(s->vocab);
            if (eos >= 0 && !feed(s, &eos, 1)) return 0;
        }
    }
}

static int run(session *s)
{
    const options *o = s->o;
    int32_t *prompt = NULL;
    size_t n = 0;
    char *text = NULL;
    int ended, ok;
    if (o->chat) return chat(s);
    if (o->ids) {
        n = o->n_prompt_ids;
        prompt = (int32_t *)malloc(n * sizeof(int32_t));
        if (prompt) memcpy(prompt, o->prompt_ids, n * sizeof(int32_t));
    } else {
        const char *p = o->prompt ? o->prompt : "";
        if (o->prompt_file && !(text = read_file(o->prompt_file))) return 0;
        if (text) p = text;
        n = tokenize(s->vocab, p, o->no_bos || !swa_vocab_add_bos(s->vocab) ? 0 : SWA_TOKENIZE_ADD_BOS, &prompt);
        if (n) fputs(p, stdout);       /* echo the prompt */
        fflush(stdout);
    }
    ok = n > 0 && feed_prompt(s, prompt, n) && generate(s, o->n_predict, &ended);
    if (ok && o->n_predict != 0) printf("\n");
    free(prompt);
    free(text);
    return ok;
}

int main(int argc, char **argv)
{
    options o;
    session s;
    swa_model *model = NULL;
    swa_error err;
    sw_file dump;
    int rc = 1;
    memset(&s, 0, sizeof s);
    if (!parse_args(argc, argv, &o)) { free(o.prompt_ids); usage(stderr); return 2; }
    s.o = &o;
    if ((o.no_mmap ? swa_model_load_resident(o.model, &model, &err) : swa_model_load(o.model, &model, &err)) != SWA_OK ||
        swa_ctx_create(model, &o.cfg, &s.ctx, &err) != SWA_OK ||
        swa_sampler_create(&o.sampling, swa_model_hparams(model)->n_vocab, &s.sampler, &err) != SWA_OK) {
        fprintf(stderr, "swa-generate: %s\n", err.msg);
        goto done;
    }
    s.n_vocab = (size_t)swa_model_hparams(model)->n_vocab;
    if (swa_model_vocab(model, &s.vocab, &err) != SWA_OK && !o.ids) {
        fprintf(stderr, "swa-generate: %s (use --ids to give token ids)\n", err.msg);
        goto done;
    }
    if (o.ids) s.vocab = NULL;
    if (o.chat && !s.vocab) { fprintf(stderr, "swa-generate: --chat needs a vocabulary\n"); goto done; }
    print_summary(model, s.ctx, &o);
    hint_missing_window(model, s.ctx, o.model);
    if (o.dump_logits) {
        s.rows = (float *)malloc(s.n_vocab * (size_t)swa_ctx_config_get(s.ctx).n_batch * sizeof(float));
        const char *inputs[2];
        inputs[0] = o.model;
        inputs[1] = o.prompt_file;
        if (!s.rows) {
            fprintf(stderr, "swa-generate: out of memory\n");
            goto done;
        }
        if (sw_open(&dump, o.dump_logits, inputs, 2) != 0) {
            fprintf(stderr, "swa-generate: %s\n", dump.error);
            goto done;
        }
        s.dump = dump.f;
    }
    signal(SIGINT, on_sigint);
    rc = run(&s) ? 0 : 1;
    fflush(stdout);
    if (interrupted) fprintf(stderr, "\nswa-generate: interrupted\n");
    fprintf(stderr, "prompt: %ld tokens, %.1f tokens/s; generation: %ld tokens, %.1f tokens/s\n", s.t.n_prompt,
            s.t.prompt_s > 0 ? (double)s.t.n_prompt / s.t.prompt_s : 0.0, s.t.n_gen,
            s.t.gen_s > 0 ? (double)s.t.n_gen / s.t.gen_s : 0.0);
done:
    if (s.dump && rc != 0) sw_abort(&dump);
    if (s.dump && rc == 0 && sw_commit(&dump) != 0) {
        fprintf(stderr, "swa-generate: %s\n", dump.error);
        rc = 1;
    }
    free(s.rows);
    free(o.prompt_ids);
    swa_sampler_free(s.sampler);
    swa_ctx_free(s.ctx);
    swa_model_free(model);
    return rc;
}
