/* swa-bench: how fast swa.h runs a model on this machine, and how close that is to the limit.

   swa-bench -m MODEL.gguf [-p 128] [-n 32] [-t 2] [-r 3] [--kernels best|ref|avx2|avx-vnni|avx512|amx|neon] [--kv f16|f32|q8_0]
             [--depths] [--no-mmap] [-o text|md|csv|json|jsonl]

   Reports, as median +- half the range over -r repetitions (like llama-bench's pp and tg):
   - pp: prompt processing, -p tokens in one batch from position 0;
   - tg: generation, -n tokens one at a time after a one-token prompt;
   - the memory read bandwidth this process reaches with -t threads (a STREAM-like sum over
     1 GiB, read once before each tg repetition), the bytes one generated token reads (every
     weight matrix once, plus the keys and values it attends to), and tg as a fraction of
     bandwidth / bytes-per-token, each repetition against its own bandwidth reading;
   - with --depths, tg at positions 0, W and 4W: with a window the speed stays flat.
   Random token ids are used: speed does not depend on what the tokens say. With --markdown
   each line is a table row: model | type | load (mmap or read) | threads | kernels | pp t/s |
   tg t/s | depth | GB/s | MB per token | tg as % of the bandwidth limit; -o csv, json and jsonl
   write the same fields as llama-bench's formats do (a header line, an array, a line each).
   llama-bench's spellings work where they mean the same (--model, --n-prompt, --n-gen,
   --threads, --repetitions, --batch-size, -o/--output, -mmp/--mmap 0|1); one value each (its
   lists are refused), and its GPU, NUMA and scheduling flags are refused, saying so. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE            /* MAP_ANONYMOUS, MADV_HUGEPAGE for the bandwidth buffer */
#include "swa.h"
#define PROG "swa-bench"
#include "tools/common/tool.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <windows.h>               /* VirtualAlloc for the bandwidth buffer */
#else
#include <sys/mman.h>
#endif

typedef struct options {
    const char *model;
    int n_prompt, n_gen, reps, depths, markdown, no_mmap;
    int format;                   /* FMT_*: -o */
    swa_ctx_config cfg;
} options;

enum { FMT_TEXT, FMT_MD, FMT_CSV, FMT_JSON, FMT_JSONL };

typedef struct summary { double median, spread; } summary;

static summary summarize(double *v, int n)
{
    summary s;
    s.median = median(v, n);   /* sorts v */
    s.spread = 0.5 * (v[n - 1] - v[0]);
    return s;
}

/* ---- memory bandwidth: each thread sums its share of a large buffer ----
   A shared machine's bandwidth moves by a factor of two within minutes, so each repetition of
   a test reads the buffer once just before it, and a generation's share of the limit is
   taken against the bandwidth of its own moment. */

typedef struct reader { const uint64_t *p; size_t n; uint64_t sum; } reader;

static void *read_share(void *arg)
{
    reader *r = (reader *)arg;
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t i;
    for (i = 0; i + 4 <= r->n; i += 4) { a += r->p[i]; b += r->p[i + 1]; c += r->p[i + 2]; d += r->p[i + 3]; }
    r->sum = a ^ b ^ c ^ d;
    return NULL;
}

typedef struct bandwidth { uint64_t *buf; size_t words; int threads; } bandwidth;

static int bandwidth_open(bandwidth *bw, int threads)
{
    const size_t bytes = (size_t)1 << 30;
    /* in 2 MB pages where the kernel gives them, so that TLB misses do not lower the limit */
#if defined(_WIN32)
    void *map = VirtualAlloc(NULL, bytes, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
    if (!map) return 0;
#else
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return 0;
#if defined(MADV_HUGEPAGE)                  /* Linux only */
    madvise(map, bytes, MADV_HUGEPAGE);
#endif
#endif
    bw->buf = (uint64_t *)map;
    bw->words = bytes / 8;
    bw->threads = threads;
    for (size_t i = 0; i < bw->words; i++) bw->buf[i] = i;   /* touch every page first */
    return 1;
}

/* GB/s of one read of the whole buffer by the threads. */
static double bandwidth_once(const bandwidth *bw)
{
    pthread_t tid[64];
    reader r[64];
    double t0 = now();
    int t;
    for (t = 0; t < bw->threads; t++) {
        r[t].p = bw->buf + bw->words / (size_t)bw->threads * (size_t)t;
        r[t].n = bw->words / (size_t)bw->threads;
        pthread_create(&tid[t], NULL, read_share, &r[t]);
    }
    for (t = 0; t < bw->threads; t++) pthread_join(tid[t], NULL);
    return (double)(bw->words * 8) / (now() - t0) / 1e9;
}

static void bandwidth_close(bandwidth *bw)
{
#if defined(_WIN32)
    VirtualFree(bw->buf, 0, MEM_RELEASE);
#else
    munmap(bw->buf, bw->words * 8);
#endif
}

/* ---- the model ---- */

static void random_tokens(int32_t *tok, int n, int32_t n_vocab, uint64_t seed)
{
    uint64_t s = rng_seed(seed);
    int i;
    for (i = 0; i < n; i++) tok[i] = 3 + (int32_t)(rng_next(&s) % (uint64_t)(n_vocab - 3));
}

/* Bytes of every 2-D weight a token reads once (the embedding table contributes one row); of a
   3-D tensor of experts, the n_expert_used experts a token goes through. */
static double weight_bytes_per_token(const swa_model *m)
{
    const swa_gguf *g = swa_model_gguf(m);
    const swa_hparams *hp = swa_model_hparams(m);
    double total = 0;
    int64_t i;
    for (i = 0; i < swa_gguf_tensor_count(g); i++) {
        const swa_gguf_tensor *t = swa_gguf_tensor_at(g, i);
        if (t->n_dims < 2) continue;
        if (t->n_dims == 3 && hp->n_expert > 0 && t->ne[2] == hp->n_expert) {
            total += (double)t->nbytes * hp->n_expert_used / hp->n_expert;
        } else if (t->name.len == 17 && !memcmp(t->name.ptr, "token_embd.weight", 17)) {
            total += (double)t->nbytes / (double)t->ne[1];
            if (swa_gguf_tensor_find(g, "output.weight") < 0) total += (double)t->nbytes;   /* tied */
        } else {
            total += (double)t->nbytes;
        }
    }
    return total;
}

/* Keys and values one token at position pos reads, over all layers. */
static double kv_bytes_per_token(const swa_model *m, const swa_ctx *c, int64_t pos)
{
    const swa_hparams *hp = swa_model_hparams(m);
    int32_t kv = swa_ctx_config_get(c).kv_type;
    double per_value = kv == SWA_KV_F32 ? 4.0 : kv == SWA_KV_F16 ? 2.0 : 34.0 / 32.0;
    double per_pos = 2.0 * hp->n_kv_head * hp->head_dim * per_value, total = 0;
    int32_t l;
    for (l = 0; l < hp->n_layer; l++) {
        int64_t w = swa_ctx_window(c, l), keys = pos + 1;
        if (w > 0 && keys > w) keys = w;
        total += per_pos * (double)keys;
    }
    return total;
}

/* Ctrl-C stops an evaluation within a layer (the abort callback) and the program, status 130. */
static void eval_or_die(swa_ctx *c, const int32_t *tok, size_t n)
{
    swa_error err;
    if (swa_ctx_eval(c, tok, n, NULL, &err) != SWA_OK) {
        if (interrupted()) interrupt_exit(NULL);
        fail("%s", err.msg);
    }
}

/* One untimed pass before the repetitions, as llama-bench does: a prompt of the length measured
   (one token when only generation is). The first pass over a mapped file takes its page faults
   and reads the file from disk if it is not cached; the first prompt of a length writes the
   context's buffers for that many tokens for the first time, and the kernel zeroes each page
   then (for 4096 tokens of the Mistral-7B shape that took as long as the pass itself). */
static void warm_up(swa_ctx *c, int32_t n_vocab, int64_t n_tokens)
{
    int32_t *tok = (int32_t *)malloc(sizeof(int32_t) * (size_t)(n_tokens > 1 ? n_tokens : 1));
    if (!tok) fail("out of memory");
    random_tokens(tok, n_tokens > 1 ? (int)n_tokens : 1, n_vocab, 3);
    swa_ctx_reset(c);
    eval_or_die(c, tok, (size_t)(n_tokens > 1 ? n_tokens : 1));
    free(tok);
}

/* Prompt processing: n tokens at once from position 0. */
static summary bench_pp(swa_ctx *c, const options *o, int32_t n_vocab)
{
    int32_t *tok = (int32_t *)malloc(sizeof(int32_t) * (size_t)o->n_prompt);
    double v[64];
    int r;
    if (!tok) fail("out of memory");
    random_tokens(tok, o->n_prompt, n_vocab, 1);
    for (r = 0; r < o->reps; r++) {
        double t0;
        swa_ctx_reset(c);
        t0 = now();
        eval_or_die(c, tok, (size_t)o->n_prompt);
        v[r] = o->n_prompt / (now() - t0);
    }
    free(tok);
    return summarize(v, o->reps);
}

/* Generation: n tokens one by one after `depth` tokens of context, each repetition after a
   bandwidth reading (before its prompt, which brings the weights back into the caches);
   share: generation as % of the limit those bandwidths and bytes_per_token give. */
static void bench_tg(swa_ctx *c, const options *o, int32_t n_vocab, int64_t depth, const bandwidth *bw,
                     double bytes_per_token, summary *out, summary *gbs, summary *share)
{
    int32_t *tok = (int32_t *)malloc(sizeof(int32_t) * (size_t)(depth + o->n_gen + 1));
    double v[64], g[64], pct[64];
    int r, i;
    if (!tok) fail("out of memory");
    random_tokens(tok, (int)depth + o->n_gen + 1, n_vocab, 2);
    for (r = 0; r < o->reps; r++) {
        double t0;
        g[r] = bandwidth_once(bw);
        swa_ctx_reset(c);
        eval_or_die(c, tok, (size_t)depth + 1);
        t0 = now();
        for (i = 0; i < o->n_gen; i++) eval_or_die(c, &tok[depth + 1 + i], 1);
        v[r] = o->n_gen / (now() - t0);
        pct[r] = 100.0 * v[r] * bytes_per_token / (g[r] * 1e9);
    }
    free(tok);
    *out = summarize(v, o->reps);
    *gbs = summarize(g, o->reps);
    *share = summarize(pct, o->reps);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: swa-bench -m MODEL.gguf [-p 128] [-n 32] [-t THREADS] [-r 3] [--kernels best|ref|avx2|avx-vnni|avx512|amx|neon] [--kv f16|f32|q8_0]\n"
               "                 [--depths] [--no-mmap] [-o text|md|csv|json|jsonl]\n"
               "  -m, --model FILE  the model\n"
               "  -p, --n-prompt N  prompt tokens for the pp test (0 = skip)\n"
               "  -n, --n-gen N     generated tokens for the tg test (0 = skip)\n"
               "  -b, --batch-size N  prompt tokens per forward pass (default: the whole prompt)\n"
               "  -t, --threads N   threads (default: online CPUs)\n"
               "  -c N          positions a global layer keeps (default: the library's, raised to\n"
               "                hold the prompt and the generated tokens, as llama-bench's context)\n"
               "  -r, --repetitions N  repetitions; medians are reported (default 3, at most 64)\n"
               "  --kernels K   best (default): the widest SIMD this CPU runs; ref: the scalar loops;\n"
               "                avx2, avx-vnni, avx512, amx, neon: that instruction set (an error where the CPU lacks it)\n"
               "  --kv T        key/value cache type (default f16)\n"
               "  --depths      also generate at positions W and 4W (window) or n_ctx/2\n"
               "  --no-mmap     read the model into memory (swa_model_load_resident) instead of mapping it;\n"
               "                -mmp 0 / --mmap 0 the same, -mmp 1 the default\n"
               "  -o, --output F  text (default: prose), md (one table row per test; --markdown the same),\n"
               "                csv (a header, then a row per test), json (an array of objects), jsonl (an object a line)\n"
               "  --version     the program's name and version\n"
               "  Exit status: 0 complete, 1 error, 2 bad usage, 130 stopped by Ctrl-C.\n");
}

/* One number in lo..hi; llama-bench's lists ("128,512") are refused. */
static int number(const char *flag, const char *v, long lo, long hi)
{
    char *end;
    long x;
    errno = 0;
    x = strtol(v, &end, 10);
    if (*end == ',') usage_fail("%s %s: swa-bench takes one value, not llama-bench's lists", flag, v);
    if (errno || end == v || *end || x < lo || x > hi) usage_fail("%s wants a number in %ld..%ld, got \"%s\"", flag, lo, hi, v);
    return (int)x;
}

/* llama-bench's spelling of a flag as ours, and its flags for what this program does not do
   refused with the reason. */
static const char *our_flag(const char *a)
{
    static const char *const same[][2] = {
        {"--model", "-m"}, {"--n-prompt", "-p"}, {"--n-gen", "-n"}, {"--threads", "-t"}, {"--repetitions", "-r"},
        {"--batch-size", "-b"}, {"--output", "-o"}, {"--mmap", "-mmp"},
    };
    static const char *const not_here[][2] = {
        {"-ngl", "GPU offload (swa.h runs on the CPU)"}, {"--n-gpu-layers", "GPU offload (swa.h runs on the CPU)"},
        {"-sm", "GPU splits"}, {"--split-mode", "GPU splits"}, {"-mg", "GPU splits"}, {"--main-gpu", "GPU splits"},
        {"-ts", "GPU splits"}, {"--tensor-split", "GPU splits"}, {"-nkvo", "GPU offload"}, {"--no-kv-offload", "GPU offload"},
        {"-rpc", "RPC servers"}, {"--rpc", "RPC servers"}, {"-fa", "a flash-attention switch (one attention path)"},
        {"--flash-attn", "a flash-attention switch (one attention path)"},
        {"-C", "CPU masks"}, {"--cpu-mask", "CPU masks"}, {"--cpu-strict", "CPU masks"}, {"--poll", "polling levels"},
        {"--numa", "NUMA placement"}, {"--prio", "process priorities"}, {"--delay", "delays between tests"},
        {"-ub", "micro-batches"}, {"--ubatch-size", "micro-batches"},
        {"-ctk", "separate key and value cache types (--kv sets both)"}, {"--cache-type-k", "separate key and value cache types (--kv sets both)"},
        {"-ctv", "separate key and value cache types (--kv sets both)"}, {"--cache-type-v", "separate key and value cache types (--kv sets both)"},
        {"-pg", "combined prompt and generation tests"}, {"-d", "chosen depths (--depths measures at W and 4W)"},
        {"--n-depth", "chosen depths (--depths measures at W and 4W)"}, {"-embd", "embedding tests"}, {"--embeddings", "embedding tests"},
        {"-oe", "a second report on stderr"}, {"--output-err", "a second report on stderr"}, {"-v", "verbose logs"},
        {"--verbose", "verbose logs"}, {"--progress", "progress lines"},
    };
    return peer_flag(a, same, sizeof same / sizeof same[0], not_here, sizeof not_here / sizeof not_here[0]);
}

static int parse(int argc, char **argv, options *o)
{
    static const char *const formats[] = {"text", "md", "csv", "json", "jsonl"};
    int i, f;
    memset(o, 0, sizeof *o);
    o->n_prompt = 128;
    o->n_gen = 32;
    o->reps = 3;
    for (i = 1; i < argc; i++) {
        const char *a = our_flag(argv[i]), *v = i + 1 < argc ? argv[i + 1] : NULL;
        help_or_version(a, usage);
        if (!strcmp(a, "--depths")) { o->depths = 1; continue; }
        if (!strcmp(a, "--no-mmap")) { o->no_mmap = 1; continue; }
        if (!strcmp(a, "--markdown")) { o->format = FMT_MD; continue; }   /* -o md */
        if (!v) usage_fail("%s needs a value or is unknown", argv[i]);
        i++;
        if (!strcmp(a, "-m")) o->model = v;
        else if (!strcmp(a, "-p")) o->n_prompt = number(a, v, 0, 1 << 20);
        else if (!strcmp(a, "-n")) o->n_gen = number(a, v, 0, 1 << 20);
        else if (!strcmp(a, "-t")) o->cfg.n_threads = number(a, v, 0, 64);
        else if (!strcmp(a, "-c")) o->cfg.n_ctx = number(a, v, 0, INT32_MAX);
        else if (!strcmp(a, "-b")) o->cfg.n_batch = number(a, v, 1, 1 << 20);
        else if (!strcmp(a, "-r")) o->reps = number(a, v, 1, 64);
        else if (!strcmp(a, "-mmp")) o->no_mmap = !number(a, v, 0, 1);
        else if (!strcmp(a, "-o")) {
            for (f = 0; f < 5 && strcmp(v, formats[f]); f++) continue;
            if (f == 5) usage_fail("-o wants text, md, csv, json or jsonl, got \"%s\"", v);
            o->format = f;
        }
        else if (!strcmp(a, "--kernels") && swa_kernels_from_name(v) >= 0) o->cfg.kernels = swa_kernels_from_name(v);
        else if (!strcmp(a, "--kv") && swa_kv_type_from_name(v) >= 0) o->cfg.kv_type = swa_kv_type_from_name(v);
        else usage_fail("bad flag or value: %s %s", argv[i - 1], v);
    }
    if (!o->model) usage_fail("-m MODEL is required");
    o->markdown = o->format != FMT_TEXT;
    return 1;
}

/* s as a JSON string's contents (a file name: quotes, backslashes and control bytes escaped). */
static void json_text(const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", (unsigned)(unsigned char)*s);
        else putchar(*s);
    }
}

/* One test's row in the -o format (md, csv, json, jsonl); first: the first row of the run. */
typedef struct row {
    const char *model, *type, *load, *kernels;
    int threads, n_prompt, n_gen;
    summary pp, tg;
    long long depth;
    double gbs, mb_per_token, share;
} row;

static void print_row(int format, const row *r, int first)
{
    if (format == FMT_MD) {
        printf("| %s | %s | %s | %d | %s | %.1f ± %.1f | %.2f ± %.2f | %lld | %.1f | %.1f | %.0f%% |\n", r->model, r->type,
               r->load, r->threads, r->kernels, r->pp.median, r->pp.spread, r->tg.median, r->tg.spread, r->depth, r->gbs,
               r->mb_per_token, r->share);
        return;
    }
    if (format == FMT_CSV) {
        if (first)
            printf("model,type,load,threads,kernels,n_prompt,pp_ts,pp_spread,n_gen,tg_ts,tg_spread,depth,gbs,mb_per_token,"
                   "limit_pct\n");
        printf("\"");
        json_text(r->model);   /* a CSV field in quotes: the same escapes do for a file name */
        printf("\",%s,%s,%d,%s,%d,%.2f,%.2f,%d,%.2f,%.2f,%lld,%.2f,%.2f,%.1f\n", r->type, r->load, r->threads, r->kernels,
               r->n_prompt, r->pp.median, r->pp.spread, r->n_gen, r->tg.median, r->tg.spread, r->depth, r->gbs,
               r->mb_per_token, r->share);
        return;
    }
    printf("%s{\"model\": \"", format == FMT_JSON ? (first ? "[\n  " : ",\n  ") : "");
    json_text(r->model);
    printf("\", \"type\": \"%s\", \"load\": \"%s\", \"threads\": %d, \"kernels\": \"%s\", \"n_prompt\": %d, "
           "\"pp_ts\": %.2f, \"pp_spread\": %.2f, \"n_gen\": %d, \"tg_ts\": %.2f, \"tg_spread\": %.2f, \"depth\": %lld, "
           "\"gbs\": %.2f, \"mb_per_token\": %.2f, \"limit_pct\": %.1f}%s",
           r->type, r->load, r->threads, r->kernels, r->n_prompt, r->pp.median, r->pp.spread, r->n_gen, r->tg.median,
           r->tg.spread, r->depth, r->gbs, r->mb_per_token, r->share, format == FMT_JSONL ? "\n" : "");
}

int main(int argc, char **argv)
{
    options o;
    swa_model *m = NULL;
    swa_ctx *c = NULL;
    swa_error err;
    const swa_hparams *hp;
    summary pp = {0, 0}, tg = {0, 0}, gbs = {0, 0}, share = {0, 0};
    bandwidth bw = {NULL, 0, 0};
    double wbytes;
    const char *name;
    int64_t depth[3];
    int n_depth = 1, k;
    parse(argc, argv, &o);
    catch_interrupt();
    m = load_model_or_exit(o.model, o.no_mmap);
    hp = swa_model_hparams(m);
    if (o.n_prompt > 0 && o.cfg.n_batch == 0) o.cfg.n_batch = o.n_prompt;   /* the whole prompt in one pass */
    if (o.cfg.n_ctx == 0) {                                   /* the library's default, or what the tests need */
        int32_t lib = hp->n_ctx_train > 0 && hp->n_ctx_train < 4096 ? hp->n_ctx_train : 4096;
        if (o.n_prompt + o.n_gen + 1 > lib) o.cfg.n_ctx = o.n_prompt + o.n_gen + 1;
    }
    if (swa_ctx_create(m, &o.cfg, &c, &err) != SWA_OK) fail("%s", err.msg);
    swa_ctx_set_abort(c, interrupt_abort, NULL);
    if (!bandwidth_open(&bw, swa_ctx_config_get(c).n_threads)) fail("no memory for the bandwidth test");
    name = strrchr(o.model, '/') ? strrchr(o.model, '/') + 1 : o.model;
    depth[0] = 0;
    if (o.depths) {
        if (hp->window > 0) { depth[1] = hp->window; depth[2] = 4 * (int64_t)hp->window; n_depth = 3; }
        else { depth[1] = swa_ctx_config_get(c).n_ctx / 2; n_depth = 2; }
    }
    wbytes = weight_bytes_per_token(m);
    bandwidth_once(&bw);                                      /* warm-up */
    warm_up(c, hp->n_vocab, o.n_prompt);
    if (o.n_prompt > 0) pp = bench_pp(c, &o, hp->n_vocab);
    if (!o.markdown)
        printf("%s: %s, %d layers, window %d; %d threads, kernels %s, kv %s\n"
               "pp%d: %.1f ± %.1f tokens/s\n",
               name, swa_type_name(hp->weight_type), hp->n_layer, hp->window, swa_ctx_config_get(c).n_threads,
               swa_ctx_kernels(c), swa_kv_type_name(swa_ctx_config_get(c).kv_type), o.n_prompt, pp.median, pp.spread);
    stdout_flush();
    if (o.n_gen == 0) {                                       /* the row still shows the bandwidth */
        double g[64];
        for (k = 0; k < o.reps; k++) g[k] = bandwidth_once(&bw);
        gbs = summarize(g, o.reps);
    }
    for (k = 0; k < n_depth && (o.n_gen > 0 || (o.markdown && k == 0)); k++) {
        double bytes = wbytes + kv_bytes_per_token(m, c, depth[k]);
        if (o.n_gen > 0) bench_tg(c, &o, hp->n_vocab, depth[k], &bw, bytes, &tg, &gbs, &share);
        if (o.markdown) {
            row r;
            r.model = name;
            r.type = swa_type_name(hp->weight_type);
            r.load = o.no_mmap ? "read" : "mmap";
            r.kernels = swa_ctx_kernels(c);
            r.threads = swa_ctx_config_get(c).n_threads;
            r.n_prompt = o.n_prompt;
            r.n_gen = o.n_gen;
            r.pp = pp;
            r.tg = tg;
            r.depth = (long long)depth[k];
            r.gbs = gbs.median;
            r.mb_per_token = bytes / 1e6;
            r.share = share.median;
            print_row(o.format, &r, k == 0);
        } else
            printf("tg%d at depth %lld: %.2f ± %.2f tokens/s; %.1f MB per token; bandwidth %.1f ± %.1f GB/s "
                   "(1 GiB read by %d threads before each repetition); %.0f%% ± %.0f%% of the limit they give\n",
                   o.n_gen, (long long)depth[k], tg.median, tg.spread, bytes / 1e6, gbs.median, gbs.spread,
                   bw.threads, share.median, share.spread);
        stdout_flush();
    }
    if (o.format == FMT_JSON) printf("\n]\n");
    stdout_flush();
    bandwidth_close(&bw);
    swa_ctx_free(c);
    swa_model_free(m);
    return 0;
}
