/* swa-perplexity: perplexity of a model on a text file.

   swa-perplexity -m MODEL.gguf -f TEXT [-w W] [-c N] [-b N] [-t N] [--chunks N] [--no-bos]

   The definition, which other parts of the project compare with a PyTorch figure:
       tokens = [BOS] + tokenize(text)          (no BOS with --no-bos or add_bos_token false)
       nll[t] = -log softmax(logits[t-1])[tokens[t]]      for t = 1 .. N-1
       ppl    = exp(mean of nll)
   where logits[t-1] come from evaluating all tokens in order in ONE context. With a sliding
   window on every layer the rolling buffer runs through the whole text in one pass, in
   constant memory. A model with a full-attention layer can only hold n_ctx positions, so a
   longer text is cut into independent consecutive segments of n_ctx tokens, the context is
   reset before each, and every token of a segment except its first is scored.

   Logits are evaluated BLOCK tokens per swa_ctx_eval_all call; the last row of a block is kept
   to score the first token of the next. Log-softmax is taken in double with the maximum
   subtracted. The result goes to stdout; progress to stderr: on a terminal one line redrawn in
   place (tools/common/progress.h), else a line every REPORT_EVERY tokens scored. Exit status: 0, 1 when the model
   or text cannot be read or evaluated, 2 for bad usage, 130 when Ctrl-C stopped it (within a
   layer, through the library's abort callback; no result is printed then). */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime */
#include "swa.h"
#define PROG "swa-perplexity"
#include "tools/common/tool.h"
#include "tools/common/progress.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCK 512            /* tokens per swa_ctx_eval_all call */
#define REPORT_EVERY 256     /* scored tokens between progress lines */

typedef struct options {
    const char *model, *text;
    swa_ctx_config cfg;
    int no_bos, no_mmap, no_progress, log_disable;
    int32_t chunks;          /* --chunks N: only the first N x n_ctx tokens; 0: all */
} options;

/* Running mean and sum of squared deviations (Welford): no cancellation over long texts. */
typedef struct stats {
    int64_t count;
    double mean, m2;
} stats;

static void stats_add(stats *s, double x)
{
    double delta = x - s->mean;
    s->count++;
    s->mean += delta / (double)s->count;
    s->m2 += delta * (x - s->mean);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: swa-perplexity -m MODEL.gguf -f TEXT [-w W] [-c N] [-b N] [-t N] [--chunks N] [--no-bos]\n"
               "                      [--kv f16|f32|q8_0] [--no-mmap] [--no-progress] [--log-disable]\n"
               "  -m, --model FILE       GGUF model with a vocabulary\n"
               "  -f, --file FILE        the text, tokenized as a whole (BOS first)\n"
               "  -w W                   sliding window for every layer (default: the model's)\n"
               "  -c, --ctx-size N       positions kept by full-attention layers (default min(trained, 4096))\n"
               "  -b, --batch-size N     tokens per forward pass (default 64)\n"
               "  -t, --threads N        threads (default 0: every online CPU)\n"
               "  --chunks N             score only the first N x n_ctx tokens of the text (llama-perplexity's\n"
               "                         chunks are n_ctx tokens long; -1: all, the default)\n"
               "  --no-bos               do not put BOS first\n"
               "  --kv T                 key/value cache type: f16 (default), f32 or q8_0; --kv-f32 = --kv f32\n"
               "  --no-mmap              read the model into memory instead of mapping it\n"
               "  --no-progress          no progress line on a terminal (the periodic lines instead)\n"
               "  --log-disable          nothing on stderr but warnings and errors\n"
               "  -h, --help             this help; --version: the program's name and version\n"
               "  Exit status: 0 complete, 1 error, 2 bad usage, 130 stopped by Ctrl-C.\n"
               "  ppl = exp(mean of -log p(token[t] | tokens before t)) over t = 1..N-1, all tokens\n"
               "  evaluated in order in one context. With a window on every layer the whole text\n"
               "  is one pass. A model with a full-attention layer keeps only -c positions, so a\n"
               "  longer text is scored in independent segments of -c tokens (the context is reset\n"
               "  before each, the first token of each segment is not scored).\n");
}

/* llama-perplexity's flags for what this program does not do, each refused with the reason. */
static const char *const not_here[][2] = {
    {"--hellaswag", "HellaSwag scoring"}, {"--hellaswag-tasks", "HellaSwag scoring"},
    {"--winogrande", "WinoGrande scoring"}, {"--winogrande-tasks", "WinoGrande scoring"},
    {"--multiple-choice", "multiple-choice scoring"}, {"--multiple-choice-tasks", "multiple-choice scoring"},
    {"--kl-divergence", "KL divergence against saved logits"},
    {"--kl-divergence-base", "saving logits for KL divergence (swa-generate --dump-logits writes them)"},
    {"--save-all-logits", "saving logits for KL divergence (swa-generate --dump-logits writes them)"},
    {"--ppl-stride", "strided perplexity"}, {"--ppl-output-type", "the per-chunk output format"},
    {"-ngl", "GPU offload (swa.h runs on the CPU)"}, {"--n-gpu-layers", "GPU offload (swa.h runs on the CPU)"},
    {"-ctk", "separate key and value cache types (--kv sets both)"},
    {"-ctv", "separate key and value cache types (--kv sets both)"},
};

/* The short spelling of a long one llama-perplexity takes, or a itself. */
static const char *short_flag(const char *a)
{
    static const char *const longs[][2] = {{"--model", "-m"}, {"--file", "-f"}, {"--ctx-size", "-c"},
                                           {"--batch-size", "-b"}, {"--threads", "-t"}};
    return peer_flag(a, longs, sizeof longs / sizeof longs[0], not_here, sizeof not_here / sizeof not_here[0]);
}

static void parse_args(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    for (i = 1; i < argc; i++) {
        const char *a = short_flag(argv[i]), *val;
        help_or_version(a, usage);
        if (!strcmp(a, "--no-bos")) { o->no_bos = 1; continue; }
        if (!strcmp(a, "--kv-f32")) { o->cfg.kv_type = SWA_KV_F32; continue; }
        if (!strcmp(a, "--no-mmap")) { o->no_mmap = 1; continue; }
        if (!strcmp(a, "--no-progress")) { o->no_progress = 1; continue; }
        if (!strcmp(a, "--log-disable")) { o->no_progress = o->log_disable = 1; continue; }
        if (!strcmp(a, "--chunks")) {
            if (i + 1 >= argc) usage_fail("--chunks needs a value");
            parse_int(a, argv[++i], -1, INT32_MAX, &o->chunks);
            if (o->chunks == 0) usage_fail("--chunks wants a positive count, or -1 for all");
            if (o->chunks < 0) o->chunks = 0;
            continue;
        }
        if (!strcmp(a, "--kv")) {
            if (i + 1 >= argc || (o->cfg.kv_type = swa_kv_type_from_name(argv[i + 1])) < 0)
                usage_fail("--kv takes f16, f32 or q8_0");
            i++;
            continue;
        }
        if (a[0] != '-') usage_fail("unexpected argument %s", a);
        if (strlen(a) != 2 || !strstr(" -m -f -w -c -b -t ", a)) usage_fail("unknown flag %s", a);
        if (i + 1 >= argc) usage_fail("%s needs a value", a);
        val = argv[++i];
        switch (a[1]) {
        case 'm': o->model = val; break;
        case 'f': o->text = val; break;
        case 'w': parse_int(a, val, 1, INT32_MAX, &o->cfg.window); break;
        case 'c': parse_int(a, val, 1, INT32_MAX, &o->cfg.n_ctx); break;
        case 'b': parse_int(a, val, 1, 1 << 20, &o->cfg.n_batch); break;
        default: parse_int(a, val, 0, 256, &o->cfg.n_threads); break;
        }
    }
    if (!o->model || !o->text) usage_fail("%s is required", !o->model ? "-m MODEL" : "-f TEXT");
}

/* -log softmax(logits)[target], in double with the maximum subtracted. */
static double nll(const float *logits, int64_t n_vocab, int32_t target)
{
    double max = logits[0], sum = 0.0;
    int64_t i;
    for (i = 1; i < n_vocab; i++)
        if (logits[i] > max) max = logits[i];
    for (i = 0; i < n_vocab; i++) sum += exp((double)logits[i] - max);
    return max + log(sum) - (double)logits[target];
}

/* "window 4096", "full attention", or "windows 4096,0,4096,0" when the layers differ. */
static void describe_attention(const swa_ctx *c, int32_t n_layer, char *buf, size_t cap)
{
    int32_t l, w0 = swa_ctx_window(c, 0);
    size_t used;
    for (l = 1; l < n_layer && swa_ctx_window(c, l) == w0; l++) continue;
    if (l == n_layer) {
        if (w0) snprintf(buf, cap, "window %d", (int)w0);
        else snprintf(buf, cap, "full attention");
        return;
    }
    used = (size_t)snprintf(buf, cap, "windows");
    for (l = 0; l < n_layer && used + 16 < cap; l++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%d", l ? "," : " ", (int)swa_ctx_window(c, l));
    if (l < n_layer) snprintf(buf + used, cap - used, ",...");
}

int main(int argc, char **argv)
{
    options o;
    swa_model *model = NULL;
    swa_ctx *ctx = NULL;
    const swa_vocab *vocab;
    swa_error err;
    char *text = NULL, attention[160];
    int32_t *tok = NULL, n_layer, l;
    float *logits = NULL, *carry = NULL;
    size_t len, n_tok;
    int64_t V, seg_len, n_score, seg, i;
    int full = 0, rc = 1;
    stats st;
    double t0, elapsed, ppl, se;
    swa_model_params mp = swa_model_params_default();
    progress pg;
    progress_loading loading;
    swa_status loaded;
    parse_args(argc, argv, &o);
    catch_interrupt();
    if (!(text = read_all(o.text, &len))) return 1;
    mp.resident = o.no_mmap;
    loading.stop = interrupted;
    loaded = progress_load_model(o.model, &mp, &loading, !o.no_progress, &model, &err);
    if (loaded != SWA_OK || swa_model_vocab(model, &vocab, &err) != SWA_OK ||
        swa_ctx_create(model, &o.cfg, &ctx, &err) != SWA_OK) {
        if (interrupted()) interrupt_exit("while loading the model");
        fprintf(stderr, "swa-perplexity: %s%s%s\n", model ? o.model : "", model ? ": " : "", err.msg);
        goto done;
    }
    swa_ctx_set_abort(ctx, interrupt_abort, NULL);
    /* room for len + 16 ids first: enough for SentencePiece; the library says if not */
    if (!(tok = tokenize_all(vocab, text, len, !o.no_bos && swa_vocab_add_bos(vocab) ? SWA_TOKENIZE_ADD_BOS : 0,
                             len + 16, &n_tok)))
        goto done;
    if (o.chunks > 0 && (int64_t)o.chunks * swa_ctx_config_get(ctx).n_ctx < (int64_t)n_tok)   /* --chunks */
        n_tok = (size_t)((int64_t)o.chunks * swa_ctx_config_get(ctx).n_ctx);
    if (n_tok < 2) {
        fprintf(stderr, "swa-perplexity: %s gives %zu token%s; at least 2 are needed to score one\n", o.text, n_tok,
                n_tok == 1 ? "" : "s");
        goto done;
    }
    V = swa_model_hparams(model)->n_vocab;
    n_layer = swa_model_hparams(model)->n_layer;
    for (l = 0; l < n_layer; l++)
        if (swa_ctx_window(ctx, l) == 0) full = 1;
    /* one segment of all tokens, unless a full-attention layer cannot hold them */
    seg_len = full ? swa_ctx_config_get(ctx).n_ctx : (int64_t)n_tok;
    if (seg_len > (int64_t)n_tok) seg_len = (int64_t)n_tok;
    /* every segment scores all its tokens but the first; a last segment of 1 token scores none */
    n_score = (int64_t)n_tok - ((int64_t)n_tok + seg_len - 1) / seg_len;
    logits = (float *)malloc((size_t)BLOCK * (size_t)V * sizeof(float));
    carry = (float *)malloc((size_t)V * sizeof(float));
    if (!logits || !carry) {
        fprintf(stderr, "swa-perplexity: out of memory for %d x %lld logits\n", BLOCK, (long long)V);
        goto done;
    }
    describe_attention(ctx, n_layer, attention, sizeof attention);
    if (seg_len < (int64_t)n_tok) {
        size_t used = strlen(attention);
        snprintf(attention + used, sizeof attention - used, ", %lld independent segments of %lld tokens",
                 (long long)(((int64_t)n_tok + seg_len - 1) / seg_len), (long long)seg_len);
    }
    if (!o.log_disable)
        fprintf(stderr, "swa-perplexity: %zu tokens (%s), %lld to score; %s; n_ctx %d, n_batch %d, %d threads, kv %s\n",
                n_tok,
                n_tok > 0 && tok[0] == swa_vocab_bos(vocab) && !o.no_bos && swa_vocab_add_bos(vocab) ? "BOS first" : "no BOS",
                (long long)n_score, attention, swa_ctx_config_get(ctx).n_ctx, swa_ctx_config_get(ctx).n_batch,
                swa_ctx_config_get(ctx).n_threads, swa_kv_type_name(swa_ctx_config_get(ctx).kv_type));
    memset(&st, 0, sizeof st);
    t0 = now();
    progress_start(&pg, !o.no_progress);
    for (seg = 0; seg < (int64_t)n_tok; seg += seg_len) {
        int64_t seg_end = seg + seg_len < (int64_t)n_tok ? seg + seg_len : (int64_t)n_tok, b0;
        swa_ctx_reset(ctx);
        for (b0 = seg; b0 < seg_end; b0 += BLOCK) {
            int64_t n = seg_end - b0 < BLOCK ? seg_end - b0 : BLOCK;
            if (swa_ctx_eval_all(ctx, tok + b0, (size_t)n, logits, &err) != SWA_OK) {
                progress_end(&pg);
                if (interrupted()) interrupt_exit("after %lld of %lld tokens scored", (long long)st.count, (long long)n_score);
                fprintf(stderr, "swa-perplexity: at token %lld: %s\n", (long long)b0, err.msg);
                goto done;
            }
            /* row r holds the logits after token b0+r, which predict token b0+r+1 */
            for (i = 0; i < n; i++) {
                int64_t t = b0 + i;
                if (t == seg) continue;
                stats_add(&st, nll(i ? logits + (i - 1) * V : carry, V, tok[t]));
                if (st.count % REPORT_EVERY == 0 && !pg.on && !o.log_disable)
                    fprintf(stderr, "[%lld/%lld] ppl %.4f\n", (long long)st.count, (long long)n_score, exp(st.mean));
            }
            memcpy(carry, logits + (n - 1) * V, (size_t)V * sizeof(float));
            progress_show(&pg, (double)(b0 + n), (double)n_tok, "tokens", "scoring (ppl %.4f)", exp(st.mean));
        }
    }
    progress_end(&pg);
    elapsed = now() - t0;
    /* The standard error of the mean NLL is sd(nll) / sqrt(count), with the sample standard
       deviation; by the delta method the error of exp(mean) is exp(mean) times that. */
    ppl = exp(st.mean);
    se = st.count > 1 ? ppl * sqrt(st.m2 / (double)(st.count - 1)) / sqrt((double)st.count) : 0.0;
    printf("perplexity: %.4f +/- %.4f over %lld tokens (%s)\n", ppl, se, (long long)st.count, attention);
    stdout_flush();
    if (!o.log_disable)
        fprintf(stderr, "swa-perplexity: %zu tokens evaluated in %.2f s, %.1f tokens/s\n", n_tok, elapsed,
                elapsed > 0 ? (double)n_tok / elapsed : 0.0);
    rc = 0;
done:
    free(logits);
    free(carry);
    free(tok);
    free(text);
    swa_ctx_free(ctx);
    swa_model_free(model);
    return rc;
}
