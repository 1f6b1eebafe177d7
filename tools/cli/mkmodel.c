/* swa-mkmodel: write a GGUF model with random weights in the shape of a real one, for benchmarks,
   for testing loaders on big files and for comparing each architecture with another
   implementation on the same weights.

   swa-mkmodel --shape stories15m|tinyllama|mistral7b|gemma3-1b|mixtral|qwen3-30b-a3b|gpt-oss-20b|custom --type TYPE
               OUT.gguf [options]

   --arch llama|gemma2|gemma3|phi3|qwen2|qwen3|qwen3moe|gpt-oss|mistral3|olmo2|cohere2|llama4|exaone4|
   gemma-embedding|smallthinker|afmoe (default
   llama; gemma3-1b implies gemma3) writes llama.cpp's layout of that architecture: its key prefix
   and tensor names, tied embeddings for Gemma and Command R7B, attn_qkv and a double-height
   ffn_up for Phi-3, Q/K/V biases for Qwen 2, attn_q_norm and attn_k_norm for Qwen 3 and Gemma 3
   (a head wide) and OLMo 2 (the whole projection wide), post_attention_norm and post_ffw_norm for
   Gemma and OLMo 2 (which has no attn_norm or ffn_norm), Gemma 2's soft-capping keys (50 and 30);
   Command R7B's LayerNorms (attention.layer_norm_epsilon, no ffn_norm) and logit_scale (0.25),
   and it needs --window. olmo2 with --window is OLMo 3 (three windowed layers, then a global
   one). --head-dim H writes attention.key_length/value_length (default
   dim/heads); --pattern P writes attention.sliding_window_pattern = P (a period); --rope-base B;
   --rope-scale F (linear RoPE scaling, global layers); --rope-factors O writes Phi-3's
   rope_factors_long/short, rope.scaling.original_context_length = O and the attention factor
   sqrt(1 + ln(ctx/O) / ln O); --rope-llama3 F,L,H,O (llama, mistral3, llama4, exaone4) writes
   rope_freqs.weight as llama.cpp's converter computes it for rope_scaling type llama3 (factor F,
   low_freq_factor L, high_freq_factor H, original_max_position_embeddings O). Norm weights of
   these architectures are random around 1 (as the file stores them: Gemma's converter stores
   1 + w), biases random around 0, Phi-3's RoPE factors in [1, 3]; llama's norms stay ones.
   gemma3-1b: dim 1152, 26 layers, 4 heads of 256, 1 KV head, FFN 6912, 262144 tokens, context
   32768, window 512 (five windowed layers, then a global one).
   --experts N --experts-used K (default 2) writes a mixture of experts in llama.cpp's layout
   (llama: Mixtral's; qwen3moe needs it): {arch}.expert_count and expert_used_count, an F32
   router ffn_gate_inp and the 3-D ffn_gate_exps, ffn_down_exps, ffn_up_exps in place of the MLP;
   --expert-ff F the rows of each expert (qwen3moe's expert_feed_forward_length; llama's are --ff).
   mixtral: the Mixtral 8x7B shape (mistral7b's, 8 experts, 2 per token, no window);
   qwen3-30b-a3b: dim 2048, 48 layers, 32 heads of 128, 4 KV heads, 128 experts of FFN 768, 8
   per token, 151936 tokens, context 40960. --layers N makes either smaller for benchmarks.
   gpt-oss (llama.cpp's openai-moe layout): Q/K/V and output biases, attn_sinks (one logit per
   head, random in [-2, 2]), post_attention_norm as the norm before the experts (no ffn_norm),
   the router's bias and the experts' 2-D biases ffn_{gate,up,down}_exps.bias; it needs --experts
   and takes expert_feed_forward_length from --expert-ff. mistral3: llama's tensors with head
   size and RoPE keys. --yarn F [--yarn-orig O] writes rope.scaling.type yarn, factor F and
   original_context_length O (default ctx / F); for mistral3 also yarn_beta_fast (--yarn-beta-fast,
   default 32), yarn_beta_slow 1 and yarn_log_multiplier 1, as its converter writes Ministral 3's,
   and --attn-temp S attention.temperature_scale. --expert-type T gives the experts' matrices
   their own type (default --type). gpt-oss-20b: 24 layers, dim 2880, 64 heads of 64, 8 KV heads,
   32 experts of FFN 2880, 4 per token, window 128 on the even layers, 201088 tokens, context
   131072, RoPE base 150000, YaRN factor 32 over 4096, experts MXFP4 unless --expert-type says
   otherwise; with --type bf16 it is laid out as llama.cpp's converter writes the released
   checkpoint (13.8 GB: MXFP4 experts, other matrices BF16, vectors F32), but with this tool's
   SentencePiece vocabulary, not gpt-oss's o200k BPE one.
   llama4: llama's tensors with the key llama.cpp requires (interleave_moe_layer_step, --moe-step,
   default 1; experts on the layers l with (l + 1) % S == 0, ffn_gate/up/down between) and a shared
   expert (ffn_*_shexp) beside the routed ones; --chunk C writes attention.chunk_size (ollama's
   key), --window 0 writes attention.sliding_window 0 (no chunking), --attn-temp and --temp-len the
   temperature's keys, --no-qk-norm use_qk_norm false. exaone4: OLMo 2's norms with a head-wide
   attn_q_norm/attn_k_norm. gemma-embedding: gemma3's tensors, pooling_type mean, and with --dense
   F the projections dense_2 (dim to F) and dense_3 (back). smallthinker: experts on every layer,
   expert_gating_func from --gating (1 softmax, 2 sigmoid). afmoe: Gemma-like norms on both sides,
   attn_gate, head-wide Q/K norms, --dense-lead N dense layers first, --shared S shared experts
   (one MLP S experts wide), exp_probs_b, expert_weights_norm, --route-scale F
   expert_weights_scale.

   Shapes (every one with a 32000-token vocabulary):
       stories15m   dim 288,  6 layers,  6 heads,  6 KV heads, FFN 768,   context 256
       tinyllama    dim 2048, 22 layers, 32 heads, 4 KV heads, FFN 5632,  context 2048
       mistral7b    dim 4096, 32 layers, 32 heads, 8 KV heads, FFN 14336, context 32768, window 4096
       custom       needs --dim, --heads, --ff and --layers; KV heads default to heads, the
                    vocabulary to 32000, the context to 2048, no window
   Any number can be overridden: --layers N --dim D --heads H --kv-heads K --ff F --vocab V
   --ctx C --window W (0 = no llama.attention.sliding_window key). --seed S picks the weights,
   -t N the threads (default: online CPUs); the file is the same for any -t. --distinct-rows N
   makes only the first N rows of each matrix and repeats them (row r is row r mod N): a file of
   tens of GB is then written at the disk's speed rather than the quantizer's, for speed tests,
   where the values do not matter (the routers of a mixture of experts, with fewer rows, stay
   random, so tokens still pick different experts).

   TYPE is any name swa-quantize takes (tools/common/targets.h): f32, f16, bf16, q4_0, q4_1, q5_0, q5_1,
   q8_0, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl, iq4_xs, or a mix's name (q3_k_s, q4_k_m, ...),
   which stands for its main type and sets general.file_type to the mix's number; the mix's
   per-matrix rules are swa-quantize's, not applied here. The type is for the 2-D matrices
   including token_embd and output, as llama.cpp's quantized files have them; norms are F32.
   With Q4_K and Q5_K, output.weight is Q6_K, as llama.cpp's Q4_K_M and Q5_K_M do it. A matrix
   whose rows do not fit the type's block falls back as in swa-quantize and llama.cpp, with a
   note: Q2_K, Q3_K and IQ4_XS to IQ4_NL, Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0, then to F16
   when rows are not whole blocks of 32 either.

   Weights are uniform with standard deviation 1/sqrt(n_in), n_in being the row length, each
   row from its own xorshift64* stream seeded by (seed, tensor, row). The vocabulary is a valid
   SentencePiece "llama" one: <unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF>, "▁" and the
   printable ASCII characters, then unique fillers "▁t<i>" up to the vocabulary size.
   --vocab-from VOCAB.gguf takes another file's vocabulary instead: every tokenizer.* key copied
   as it is there (model, pre, tokens, scores, token types, merges, special ids, add_bos...,
   chat_template), and its token count as the vocabulary size (the rows of token_embd and
   output); it cannot go with --vocab.

   The file is streamed: header first, then every tensor generated, converted and written a
   block of rows at a time, so memory stays at a few tens of MB whatever the model's size. The
   free space of the target's file system is checked first. */
#define _POSIX_C_SOURCE 200809L    /* clock_gettime, sysconf, statvfs, isatty */
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"
#include "tools/common/targets.h"
#include "swa.h"                   /* the version macros and swa_type_name */

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <windows.h>
#else
#include <sys/statvfs.h>
#endif
#include <time.h>
#include <unistd.h>

#define PROG "swa-mkmodel"
#include "tools/common/tool.h"
#include "tools/common/gguf_copy.h"

/* ==== options ==== */

typedef struct shape {
    const char *name;
    int64_t dim, layers, heads, kv_heads, ff, vocab, ctx, window, head_dim;   /* head_dim 0: dim/heads */
    const char *arch;
    int64_t experts, experts_used, expert_ff;   /* 0 experts: dense; expert_ff 0: ff */
} shape;

static const shape shapes[] = {
    {"stories15m", 288, 6, 6, 6, 768, 32000, 256, 0, 0, "llama", 0, 0, 0},
    {"tinyllama", 2048, 22, 32, 4, 5632, 32000, 2048, 0, 0, "llama", 0, 0, 0},
    {"mistral7b", 4096, 32, 32, 8, 14336, 32000, 32768, 4096, 0, "llama", 0, 0, 0},
    {"gemma3-1b", 1152, 26, 4, 1, 6912, 262144, 32768, 512, 256, "gemma3", 0, 0, 0},
    {"mixtral", 4096, 32, 32, 8, 14336, 32000, 32768, 0, 0, "llama", 8, 2, 0},
    {"qwen3-30b-a3b", 2048, 48, 32, 4, 6144, 151936, 40960, 0, 128, "qwen3moe", 128, 8, 768},
    {"gpt-oss-20b", 2880, 24, 64, 8, 2880, 201088, 131072, 128, 64, "gpt-oss", 32, 4, 2880},
    {"custom", 0, 0, 0, 0, 0, 32000, 2048, 0, 0, "llama", 0, 0, 0},
};
#define SHAPE_NAMES "stories15m, tinyllama, mistral7b, gemma3-1b, mixtral, qwen3-30b-a3b, gpt-oss-20b or custom"

static const char *const archs[] = {"llama", "gemma2", "gemma3", "phi3", "qwen2", "qwen3", "qwen3moe", "gpt-oss", "mistral3",
                                    "olmo2", "cohere2", "llama4", "exaone4", "gemma-embedding",
                                    "smallthinker", "afmoe"};
enum { LLAMA, GEMMA2, GEMMA3, PHI3, QWEN2, QWEN3, QWEN3MOE, GPTOSS, MISTRAL3, OLMO2, COHERE2, LLAMA4, EXAONE4, GEMMA_EMB,
       SMALLTHINKER, AFMOE };
#define ARCH_NAMES "llama, gemma2, gemma3, phi3, qwen2, qwen3, qwen3moe, gpt-oss, mistral3, olmo2, cohere2, llama4, exaone4, " \
                   "gemma-embedding, smallthinker or afmoe"

typedef struct options {
    shape s;
    const char *type_name, *out;
    uint32_t type, file_type;
    uint32_t expert_type;      /* the experts' matrices: --expert-type, or type (gpt-oss-20b: MXFP4) */
    uint64_t seed;
    int threads;
    int arch;                  /* LLAMA... */
    int64_t pattern;           /* attention.sliding_window_pattern, 0 = no key */
    int64_t rope_factors_ctx;  /* Phi-3's original context, 0 = no factors */
    double llama3[4];          /* --rope-llama3 factor, low, high, original context (factor 0: none) */
    double rope_base, rope_scale;   /* 0 = the architecture's default; no scaling */
    double yarn, yarn_beta_fast, attn_temp;   /* YaRN factor (0 = none), mistral3's beta_fast and temperature */
    int64_t yarn_orig;         /* rope.scaling.original_context_length with --yarn */
    int64_t distinct;          /* rows made per matrix, the rest copies (0: all) */
    int64_t chunk, moe_step;   /* llama4: attention.chunk_size (0 = no key), interleave_moe_layer_step */
    int64_t temp_len;          /* llama4: attention.temperature_length (0 = no key) */
    int no_qk_norm;            /* llama4: use_qk_norm false */
    int window_key;            /* llama4: --window given, written even when 0 (no chunking) */
    int64_t dense;             /* gemma-embedding: dense_2 to this many outputs and dense_3 back (0: none) */
    int64_t gating;            /* smallthinker: expert_gating_func (1 softmax, 2 sigmoid) */
    int64_t dense_lead, shared;   /* afmoe: leading_dense_block_count, expert_shared_count */
    double route_scale;        /* afmoe: expert_weights_scale (0: no key) */
    const char *vocab_from;    /* --vocab-from: the file whose tokenizer.* keys are copied (NULL: made up) */
    swa_gguf *vocab_file;      /* that file, open */
} options;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " --shape stories15m|tinyllama|mistral7b|gemma3-1b|mixtral|qwen3-30b-a3b|gpt-oss-20b|custom --type TYPE\n"
            "       OUT.gguf [options]\n"
            "  --type T       " TARGET_NAMES "\n"
            "                 (the matrices, a mix's name its main type; norms are F32)\n"
            "  --seed S       weights seed (default 1)\n"
            "  --window W     {arch}.attention.sliding_window (0 = none; mistral7b has 4096)\n"
            "  --arch A       " ARCH_NAMES " (default llama): llama.cpp's layout\n"
            "  --experts N --experts-used K --expert-ff F\n"
            "                 a mixture of N experts, K per token, F rows each (llama: --ff; qwen3moe needs N)\n"
            "  --head-dim H   attention.key_length/value_length (default dim/heads)\n"
            "  --pattern P    attention.sliding_window_pattern = P (default: no key)\n"
            "  --rope-base B  rope.freq_base   --rope-scale F  linear RoPE scaling (rope.scaling.factor)\n"
            "  --rope-factors O  Phi-3 rope_factors_long/short with original context O\n"
            "  --rope-llama3 F,L,H,O  rope_freqs.weight of rope_scaling llama3: factor F, low_freq_factor L,\n"
            "                 high_freq_factor H, original_max_position_embeddings O\n"
            "  --yarn F --yarn-orig O  YaRN RoPE scaling: factor F over an original context O (default ctx / F)\n"
            "  --yarn-beta-fast B  mistral3's rope.scaling.yarn_beta_fast (default 32)\n"
            "  --attn-temp S  mistral3's and llama4's attention.temperature_scale (default none)\n"
            "  --dense F      gemma-embedding: dense_2 (dim to F) and dense_3 (F to dim)\n"
            "  --gating G     smallthinker's expert_gating_func (1 softmax, default; 2 sigmoid)\n"
            "  --dense-lead N --shared S --route-scale F\n"
            "                 afmoe: N dense layers first, S shared experts (default 1), expert_weights_scale F\n"
            "  --chunk C --moe-step S --temp-len L --no-qk-norm\n"
            "                 llama4: attention.chunk_size, interleave_moe_layer_step (default 1),\n"
            "                 attention.temperature_length (default: no key), use_qk_norm false\n"
            "  --expert-type T  the experts' matrices (default --type; gpt-oss-20b: mxfp4)\n"
            "  --layers N  --dim D  --heads H  --kv-heads K  --ff F  --vocab V  --ctx C\n"
            "  --vocab-from F  the tokenizer of GGUF file F (every tokenizer.* key) and its size, for --vocab\n"
            "                 override the shape's numbers (custom needs dim, heads, ff, layers)\n"
            "  --distinct-rows N  make N random rows per matrix and repeat them (speed tests of big shapes)\n"
            "  -t N           threads (default: online CPUs); the output does not depend on it\n");
}

static int64_t number(const char *flag, const char *v, int64_t lo, int64_t hi)
{
    char *end;
    long long x;
    errno = 0;
    x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        usage_fail("%s wants a number in %lld..%lld, got \"%s\"", flag, (long long)lo, (long long)hi, v);
    return x;
}

/* Open --vocab-from's file; its token count, or a usage error when it has no token list. */
static int64_t open_vocab(const char *path, swa_gguf **out)
{
    swa_error err;
    swa_gguf_value v;
    int64_t k;
    if (swa_gguf_open(path, out, &err)) usage_fail("--vocab-from %s: %s", path, err.msg);
    if ((k = swa_gguf_kv_find(*out, "tokenizer.ggml.tokens")) < 0)
        usage_fail("--vocab-from %s: no tokenizer.ggml.tokens: not a vocabulary", path);
    v = swa_gguf_kv_value(*out, k);
    if (v.type != SWA_GGUF_ARRAY || v.elem_type != SWA_GGUF_STRING || v.n < 1 || v.n > INT32_MAX)
        usage_fail("--vocab-from %s: tokenizer.ggml.tokens is not a list of 1..%d strings", path, INT32_MAX);
    return (int64_t)v.n;
}

static void parse_args(int argc, char **argv, options *o)
{
    static const char *const num_flags[] = {"--layers", "--dim", "--heads", "--kv-heads", "--ff",
                                            "--vocab", "--ctx", "--window", "--seed", "-t",
                                            "--head-dim", "--pattern", "--rope-factors", "--experts",
                                            "--experts-used", "--expert-ff", "--yarn-orig", "--distinct-rows",
                                            "--chunk", "--moe-step", "--temp-len", "--dense", "--gating",
                                            "--dense-lead", "--shared"};
    int64_t given[25];
    const char *shape_name = NULL, *arch_name = NULL, *expert_type = NULL;
    const target *type;
    int i, k, have[25] = {0};
    size_t j;
    long cpus;
    memset(o, 0, sizeof *o);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
        if (!strcmp(a, "--version")) { printf("%s %d.%d.%d\n", "swa-mkmodel", SWA_VERSION_MAJOR, SWA_VERSION_MINOR, SWA_VERSION_PATCH); exit(0); }
        if (!strcmp(a, "--shape") || !strcmp(a, "--type") || !strcmp(a, "--arch") || !strcmp(a, "--expert-type") ||
            !strcmp(a, "--vocab-from")) {
            if (i + 1 >= argc) usage_fail("%s needs a value", a);
            if (!strcmp(a, "--shape")) shape_name = argv[++i];
            else if (!strcmp(a, "--vocab-from")) o->vocab_from = argv[++i];
            else if (!strcmp(a, "--arch")) arch_name = argv[++i];
            else if (!strcmp(a, "--expert-type")) expert_type = argv[++i];
            else o->type_name = argv[++i];
            continue;
        }
        if (!strcmp(a, "--rope-llama3")) {
            double *q = o->llama3;
            char tail;
            if (i + 1 >= argc) usage_fail("%s needs a value", a);
            if (sscanf(argv[++i], "%lf,%lf,%lf,%lf%c", &q[0], &q[1], &q[2], &q[3], &tail) != 4 || !(q[0] > 0.0 && q[0] < 1e6) ||
                !(q[1] > 0.0 && q[2] > q[1] && q[2] < 1e6) || !(q[3] >= 1.0 && q[3] < 1e12))
                usage_fail("%s wants FACTOR,LOW,HIGH,ORIG with 0 < LOW < HIGH and ORIG >= 1, got \"%s\"", a, argv[i]);
            continue;
        }
        if (!strcmp(a, "--no-qk-norm")) {
            o->no_qk_norm = 1;
            continue;
        }
        if (!strcmp(a, "--attn-temp")) {
            char *end;
            if (i + 1 >= argc) usage_fail("%s needs a value", a);
            o->attn_temp = strtod(argv[++i], &end);
            if (end == argv[i] || *end || !(o->attn_temp > -1e3 && o->attn_temp < 1e3)) usage_fail("%s wants a number, got \"%s\"", a, argv[i]);
            continue;
        }
        if (!strcmp(a, "--rope-base") || !strcmp(a, "--rope-scale") || !strcmp(a, "--yarn") || !strcmp(a, "--yarn-beta-fast") ||
            !strcmp(a, "--route-scale")) {
            char *end;
            double x;
            if (i + 1 >= argc) usage_fail("%s needs a value", a);
            x = strtod(argv[++i], &end);
            if (end == argv[i] || *end || !(x > 0.0 && x < 1e12)) usage_fail("%s wants a positive number, got \"%s\"", a, argv[i]);
            if (!strcmp(a, "--rope-base")) o->rope_base = x;
            else if (!strcmp(a, "--yarn")) o->yarn = x;
            else if (!strcmp(a, "--yarn-beta-fast")) o->yarn_beta_fast = x;
            else if (!strcmp(a, "--route-scale")) o->route_scale = x;
            else o->rope_scale = x;
            continue;
        }
        for (k = 0; k < 25; k++)
            if (!strcmp(a, num_flags[k])) break;
        if (k < 25) {
            if (i + 1 >= argc) usage_fail("%s needs a value", a);
            given[k] = number(a, argv[++i], k == 7 || k == 11 || k == 13 || k == 19 || k == 23 || k == 24 ? 0 : 1,
                              k == 8 ? INT64_MAX : k == 9 ? 256 : k == 13 ? 512 : INT32_MAX);
            have[k] = 1;
        } else if (a[0] == '-' && a[1]) {
            usage(stderr);
            usage_fail("unknown option %s", a);
        } else {
            if (o->out) { usage(stderr); usage_fail("one output file, please (at \"%s\")", a); }
            o->out = a;
        }
    }
    if (!shape_name || !o->type_name || !o->out) { usage(stderr); usage_fail("want --shape, --type and OUT.gguf"); }
    for (j = 0; j < sizeof shapes / sizeof shapes[0]; j++)
        if (!strcmp(shape_name, shapes[j].name)) break;
    if (j == sizeof shapes / sizeof shapes[0])
        usage_fail("--shape wants " SHAPE_NAMES ", got \"%s\"", shape_name);
    o->s = shapes[j];
    if (arch_name) o->s.arch = arch_name;
    for (j = 0; j < sizeof archs / sizeof archs[0]; j++)
        if (!strcmp(o->s.arch, archs[j])) break;
    if (j == sizeof archs / sizeof archs[0]) usage_fail("--arch wants " ARCH_NAMES ", got \"%s\"", o->s.arch);
    o->arch = (int)j;
    if (!(type = target_find(o->type_name))) usage_fail("--type wants " TARGET_NAMES ", got \"%s\"", o->type_name);
    o->type = type->type;
    o->file_type = type->file_type;
    o->expert_type = !expert_type && !strcmp(o->s.name, "gpt-oss-20b") ? GW_MXFP4 : o->type;
    if (expert_type) {
        if (!(type = target_find(expert_type))) usage_fail("--expert-type wants " TARGET_NAMES ", got \"%s\"", expert_type);
        o->expert_type = type->type;
    }
    if (!strcmp(o->s.name, "gpt-oss-20b")) {   /* as llama.cpp's converter writes it, unless told otherwise */
        if (o->rope_base <= 0.0) o->rope_base = 150000.0;
        if (o->yarn <= 0.0 && o->rope_scale <= 0.0) o->yarn = 32.0, o->yarn_orig = 4096;
    }

    if (!strcmp(o->s.name, "custom")) {
        if (!have[0] || !have[1] || !have[2] || !have[4]) usage_fail("--shape custom needs --layers, --dim, --heads and --ff");
        if (!have[3]) o->s.kv_heads = given[2];
    }
    if (have[0]) o->s.layers = given[0];
    if (have[1]) o->s.dim = given[1];
    if (have[2]) o->s.heads = given[2];
    if (have[3]) o->s.kv_heads = given[3];
    if (have[4]) o->s.ff = given[4];
    if (have[5]) o->s.vocab = given[5];
    if (o->vocab_from && have[5]) usage_fail("--vocab-from and --vocab: one vocabulary, please");
    if (o->vocab_from) o->s.vocab = open_vocab(o->vocab_from, &o->vocab_file);
    if (have[6]) o->s.ctx = given[6];
    if (have[7]) o->s.window = given[7];
    if (have[10]) o->s.head_dim = given[10];
    if (have[11]) o->pattern = given[11];
    if (have[12]) o->rope_factors_ctx = given[12];
    if (have[13]) o->s.experts = given[13];
    if (have[14]) o->s.experts_used = given[14];
    if (have[15]) o->s.expert_ff = given[15];
    if (have[16]) o->yarn_orig = given[16];
    if (have[17]) o->distinct = given[17];
    if (have[18]) o->chunk = given[18];
    o->window_key = have[7] && o->arch == LLAMA4;
    o->moe_step = have[19] ? given[19] : 1;
    if (have[20]) o->temp_len = given[20];
    if (have[21]) o->dense = given[21];
    o->gating = have[22] ? given[22] : 1;
    if (have[22] && (o->arch != SMALLTHINKER || o->gating > 2)) usage_fail("--gating 1|2 is smallthinker's");
    if ((o->arch == SMALLTHINKER || o->arch == AFMOE) && !o->s.experts) usage_fail("%s wants --experts", archs[o->arch]);
    o->dense_lead = have[23] ? given[23] : 0;
    o->shared = have[24] ? given[24] : 1;
    if ((have[23] || have[24] || o->route_scale > 0.0) && o->arch != AFMOE)
        usage_fail("--dense-lead, --shared and --route-scale are afmoe's");
    if (have[21] && o->arch != GEMMA_EMB) usage_fail("--dense is gemma-embedding's");
    if (o->arch == GEMMA_EMB && !o->s.window) usage_fail("gemma-embedding wants --window (llama.cpp requires the key)");
    if ((have[18] || have[19] || have[20] || o->no_qk_norm) && o->arch != LLAMA4)
        usage_fail("--chunk, --moe-step, --temp-len and --no-qk-norm are llama4's");
    if (o->yarn > 0.0 && !o->yarn_orig) o->yarn_orig = (int64_t)((double)o->s.ctx / o->yarn) > 0 ? (int64_t)((double)o->s.ctx / o->yarn) : 1;
    if ((have[16] || o->yarn_beta_fast > 0.0) && o->yarn <= 0.0) usage_fail("--yarn-orig and --yarn-beta-fast go with --yarn");
    if (o->yarn > 0.0 && o->rope_scale > 0.0) usage_fail("--yarn or --rope-scale, not both");
    if (o->yarn_beta_fast > 0.0 && o->arch != MISTRAL3) usage_fail("--yarn-beta-fast is mistral3's");
    if (o->attn_temp != 0.0 && o->arch != MISTRAL3 && o->arch != LLAMA4) usage_fail("--attn-temp is mistral3's and llama4's");
    if (o->attn_temp != 0.0 && o->arch == MISTRAL3 && o->yarn <= 0.0)
        usage_fail("--attn-temp wants --yarn (its length is the original context)");
    if (o->s.experts && !o->s.experts_used) o->s.experts_used = o->s.experts < 2 ? o->s.experts : 2;
    if (o->s.experts && !o->s.expert_ff) o->s.expert_ff = o->s.ff;
    if (o->s.experts_used > o->s.experts) usage_fail("--experts-used wants at most --experts (%lld)", (long long)o->s.experts);
    if ((o->arch == QWEN3MOE || o->arch == GPTOSS) && !o->s.experts) usage_fail("%s wants --experts", archs[o->arch]);
    if (o->arch == LLAMA && o->s.experts && o->s.expert_ff != o->s.ff) usage_fail("llama's experts are --ff wide");
    if (o->s.experts && o->arch != LLAMA && o->arch != QWEN3MOE && o->arch != GPTOSS && o->arch != LLAMA4 && o->arch != SMALLTHINKER &&
        o->arch != AFMOE)
        usage_fail("--experts is for llama, qwen3moe, gpt-oss, llama4, smallthinker and afmoe");
    if (!o->s.head_dim) o->s.head_dim = o->s.dim / o->s.heads;
    if ((o->arch == PHI3 || o->arch == OLMO2 || o->arch == COHERE2 || o->arch == EXAONE4) && o->s.head_dim * o->s.heads != o->s.dim)
        usage_fail("%s wants heads x head-dim = dim", archs[o->arch]);
    if (o->arch == COHERE2 && !o->s.window) usage_fail("cohere2 wants --window (llama.cpp requires the key)");
    if (o->arch == LLAMA && (have[10] || have[11] || o->rope_scale > 0.0 || have[12] || o->yarn > 0.0))
        usage_fail("--head-dim, --pattern, --rope-scale, --yarn and --rope-factors are for the other architectures");
    if (have[12] && o->arch != PHI3) usage_fail("--rope-factors is Phi-3's");
    if (o->llama3[0] > 0.0 && ((o->arch != LLAMA && o->arch != MISTRAL3 && o->arch != LLAMA4 && o->arch != EXAONE4) ||
                               o->yarn > 0.0 || o->rope_scale > 0.0))
        usage_fail("--rope-llama3 is for llama, mistral3, llama4 and exaone4, without --yarn or --rope-scale");
    o->seed = have[8] ? (uint64_t)given[8] : 1;
#if defined(_WIN32)
    cpus = (long)GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
#else
    cpus = sysconf(_SC_NPROCESSORS_ONLN);
#endif
    o->threads = have[9] ? (int)given[9] : cpus > 0 ? (int)(cpus < 256 ? cpus : 256) : 1;

    if (o->arch == LLAMA && o->s.dim % o->s.heads)
        usage_fail("dim %lld is not a multiple of heads %lld", (long long)o->s.dim, (long long)o->s.heads);
    if (o->s.head_dim < 2 || o->s.head_dim % 2) usage_fail("the head size %lld must be even for RoPE", (long long)o->s.head_dim);
    if (o->s.kv_heads > o->s.heads || o->s.heads % o->s.kv_heads)
        usage_fail("heads %lld are not a multiple of kv-heads %lld", (long long)o->s.heads, (long long)o->s.kv_heads);
    if (!o->vocab_from && o->s.vocab < 259) usage_fail("the vocabulary needs at least 259 tokens (3 special, 256 bytes), got %lld", (long long)o->s.vocab);
}

/* ==== the model's tensors ==== */

enum { MATRIX, ONES, NORM, BIAS, FACTOR, SINK };   /* what a tensor's values are */

typedef struct tensor {
    char name[64];
    uint32_t type, n_dims;
    int64_t ne[3];           /* ne[0] = row length = n_in; ne[1] = rows (1 for vectors); ne[2] experts */
    int kind;
    float *values;           /* a vector's values when computed (rope_freqs), NULL: random of its kind */
} tensor;

/* The writable type for rows of `row` values: the chosen one, or its fallback (named on stderr
   when `note` is set: once per kind of matrix is enough). */
static uint32_t fit_type(uint32_t type, int64_t row, const char *name, int note)
{
    uint32_t t = fallback_type(type, row);
    if (t != type && note)
        fprintf(stderr, PROG ": note: %s has rows of %lld, not whole blocks of its type: written as %s%s\n", name,
                (long long)row, swa_type_name(t), strncmp(name, "blk.0.", 6) ? "" : " (in every layer)");
    return t;
}

/* A matrix of `rows` rows of `row` values, or a vector of `kind` when rows is 0. */
static void add(tensor *t, size_t *n, const char *name, uint32_t type, int64_t row, int64_t rows, int note, int kind)
{
    tensor *x = &t[(*n)++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->n_dims = rows ? 2 : 1;
    x->ne[0] = row;
    x->ne[1] = rows ? rows : 1;
    x->ne[2] = 1;
    x->type = rows ? fit_type(type, row, name, note) : GW_F32;
    x->kind = rows ? MATRIX : kind;
}

/* rope_freqs.weight as llama.cpp's converter computes it for rope_scaling type llama3: pair i's
   wavelength 2 pi base^(2i/n) against the original context O: shorter than O/H, divisor 1;
   longer than O/L, the factor F; between, 1 / ((1 - s)/F + s) with s = (O/wavelength - L)/(H - L). */
static float *llama3_factors(const double q[4], double base, int64_t n)
{
    float *f = (float *)malloc((size_t)(n / 2) * sizeof *f);
    int64_t i;
    if (!f) fail("out of memory");
    for (i = 0; i < n / 2; i++) {
        double wavelen = 2.0 * 3.14159265358979323846 * pow(base, (double)(2 * i) / (double)n);
        double smooth = (q[3] / wavelen - q[1]) / (q[2] - q[1]);
        f[i] = wavelen < q[3] / q[2] ? 1.0f : wavelen > q[3] / q[1] ? (float)q[0] : (float)(1.0 / ((1.0 - smooth) / q[0] + smooth));
    }
    return f;
}

static double rope_base(const options *o)
{
    return o->rope_base > 0.0 ? o->rope_base : o->arch == GEMMA3 || o->arch == GEMMA_EMB ? 1e6 : 10000.0;
}

/* llama.cpp's names and shapes for the architecture; ggml's ne = {n_in, n_out}. */
static tensor *plan(const options *o, size_t *count)
{
    const shape *s = &o->s;
    const int64_t d = s->dim, qd = s->heads * s->head_dim, kv = s->kv_heads * s->head_dim;
    const int a = o->arch, norm = a == LLAMA ? ONES : NORM;
    const int gemma3 = a == GEMMA3 || a == GEMMA_EMB;
    const int pre_norms = a != OLMO2 && a != EXAONE4, post_norms = a == GEMMA2 || gemma3 || a == OLMO2 || a == EXAONE4 || a == AFMOE;
    tensor *t = (tensor *)calloc((size_t)(5 + 28 * s->layers), sizeof *t);
    size_t n = 0;
    int64_t l;
    char name[64];
    if (!t) fail("out of memory");
    add(t, &n, "token_embd.weight", o->type, d, s->vocab, 1, 0);
    add(t, &n, "output_norm.weight", GW_F32, d, 0, 1, norm);
    if (a != GEMMA2 && !gemma3 && a != COHERE2)   /* Gemma's and Command R7B's output is the embedding */
        add(t, &n, "output.weight", o->type == GW_Q4_K || o->type == GW_Q5_K ? GW_Q6_K : o->type, d, s->vocab, 1, 0);
    if (o->dense) {   /* ggml's ne: dense_2 {dim, F}, dense_3 {F, dim} */
        add(t, &n, "dense_2.weight", o->type, d, o->dense, 1, 0);
        add(t, &n, "dense_3.weight", o->type, o->dense, d, 1, 0);
    }
    if (o->rope_factors_ctx) {
        add(t, &n, "rope_factors_long.weight", GW_F32, s->head_dim / 2, 0, 1, FACTOR);
        add(t, &n, "rope_factors_short.weight", GW_F32, s->head_dim / 2, 0, 1, FACTOR);
    }
    if (o->llama3[0] > 0.0) {
        add(t, &n, "rope_freqs.weight", GW_F32, s->head_dim / 2, 0, 1, FACTOR);
        t[n - 1].values = llama3_factors(o->llama3, rope_base(o), s->head_dim);
    }
    for (l = 0; l < s->layers; l++) {
        int first = l == 0;
#define T(suffix, row, rows, kind) (snprintf(name, sizeof name, "blk.%lld." suffix, (long long)l), \
                                    add(t, &n, name, o->type, row, rows, first, kind))
        if (pre_norms) T("attn_norm.weight", d, 0, norm);
        if (a == PHI3) {
            T("attn_qkv.weight", d, qd + 2 * kv, 0);
        } else {
            T("attn_q.weight", d, qd, 0);
            T("attn_k.weight", d, kv, 0);
            T("attn_v.weight", d, kv, 0);
        }
        if (a == QWEN2 || a == GPTOSS) {
            T("attn_q.bias", qd, 0, BIAS);
            T("attn_k.bias", kv, 0, BIAS);
            T("attn_v.bias", kv, 0, BIAS);
        }
        if (gemma3 || a == QWEN3 || a == QWEN3MOE || a == EXAONE4 || a == AFMOE) {
            T("attn_q_norm.weight", s->head_dim, 0, NORM);
            T("attn_k_norm.weight", s->head_dim, 0, NORM);
        }
        if (a == OLMO2) {
            T("attn_q_norm.weight", qd, 0, NORM);
            T("attn_k_norm.weight", kv, 0, NORM);
        }
        T("attn_output.weight", qd, d, 0);
        if (a == AFMOE) T("attn_gate.weight", d, qd, 0);
        if (a == GPTOSS) {   /* gpt-oss: the output's bias, the sinks; its FFN's norm is post_attention_norm */
            T("attn_output.bias", d, 0, BIAS);
            T("attn_sinks.weight", s->heads, 0, SINK);
            T("post_attention_norm.weight", d, 0, NORM);
        }
        if (post_norms) T("post_attention_norm.weight", d, 0, NORM);
        if (pre_norms && a != COHERE2 && a != GPTOSS) T("ffn_norm.weight", d, 0, norm);
        if (s->experts && (o->moe_step == 0 || (l + 1) % o->moe_step != 0 || l < o->dense_lead)) {   /* llama4's, afmoe's dense layers */
            T("ffn_gate.weight", d, s->ff, 0);
            T("ffn_down.weight", s->ff, d, 0);
            T("ffn_up.weight", d, s->ff, 0);
        } else if (s->experts) {   /* the router stays F32, as llama.cpp's converter and llama-quantize keep it */
            const int64_t E = s->experts, ff = s->expert_ff;
            const uint32_t et = o->expert_type;
            snprintf(name, sizeof name, "blk.%lld.ffn_gate_inp.weight", (long long)l);
            add(t, &n, name, GW_F32, d, E, first, 0);
            if (a == GPTOSS) T("ffn_gate_inp.bias", E, 0, BIAS);
            if (a == AFMOE) T("exp_probs_b.bias", E, 0, BIAS);
#define X(suffix, row, rows) (snprintf(name, sizeof name, "blk.%lld." suffix, (long long)l), \
                              add(t, &n, name, et, row, rows, first, 0), t[n - 1].n_dims = 3, t[n - 1].ne[2] = E)
            X("ffn_gate_exps.weight", d, ff);
            X("ffn_down_exps.weight", ff, d);
            X("ffn_up_exps.weight", d, ff);
#undef X
            if (a == LLAMA4 || (a == AFMOE && o->shared)) {   /* the shared expert(s), each as wide as a routed one */
                const int64_t sff = a == AFMOE ? ff * o->shared : ff;
                T("ffn_gate_shexp.weight", d, sff, 0);
                T("ffn_down_shexp.weight", sff, d, 0);
                T("ffn_up_shexp.weight", d, sff, 0);
            }
            if (a == GPTOSS) {   /* the experts' biases: [E][ff] and [E][d] */
                T("ffn_gate_exps.bias", ff, 0, BIAS), t[n - 1].n_dims = 2, t[n - 1].ne[1] = E;
                T("ffn_down_exps.bias", d, 0, BIAS), t[n - 1].n_dims = 2, t[n - 1].ne[1] = E;
                T("ffn_up_exps.bias", ff, 0, BIAS), t[n - 1].n_dims = 2, t[n - 1].ne[1] = E;
            }
        } else {
            if (a != PHI3) T("ffn_gate.weight", d, s->ff, 0);
            T("ffn_down.weight", s->ff, d, 0);
            T("ffn_up.weight", d, a == PHI3 ? 2 * s->ff : s->ff, 0);
        }
        if (post_norms) T("post_ffw_norm.weight", d, 0, NORM);
#undef T
    }
    *count = n;
    return t;
}

/* ==== vocabulary ==== */

static void put_vocab(gw_writer *w, int64_t n)
{
    char **pieces = (char **)calloc((size_t)n, sizeof *pieces);
    float *scores = (float *)calloc((size_t)n, sizeof *scores);
    int32_t *kinds = (int32_t *)calloc((size_t)n, sizeof *kinds);
    int64_t i = 0, j;
    int c;
    if (!pieces || !scores || !kinds) usage_fail("out of memory");
    for (j = 0; j < n; j++)
        if (!(pieces[j] = (char *)malloc(32))) usage_fail("out of memory");
    strcpy(pieces[i], "<unk>"), kinds[i++] = 2;
    strcpy(pieces[i], "<s>"), kinds[i++] = 3;
    strcpy(pieces[i], "</s>"), kinds[i++] = 3;
    for (c = 0; c < 256; c++) snprintf(pieces[i], 32, "<0x%02X>", c), kinds[i++] = 6;
    /* then normal pieces, scores falling as SentencePiece's do: "▁", the printable ASCII
       characters, fillers */
    if (i < n) strcpy(pieces[i], "\xe2\x96\x81"), kinds[i] = 1, scores[i] = -(float)(i - 259), i++;
    for (c = '!'; c <= '~' && i < n; c++) pieces[i][0] = (char)c, pieces[i][1] = 0, kinds[i] = 1, scores[i] = -(float)(i - 259), i++;
    for (; i < n; i++) {
        snprintf(pieces[i], 32, "\xe2\x96\x81t%lld", (long long)i);
        kinds[i] = 1;
        scores[i] = -(float)(i - 259);
    }
    gw_kv_str(w, "tokenizer.ggml.model", "llama");
    gw_kv_array_str(w, "tokenizer.ggml.tokens", (uint64_t)n, (const char *const *)pieces);
    gw_kv_array(w, "tokenizer.ggml.scores", GW_F32V, (uint64_t)n, scores);
    gw_kv_array(w, "tokenizer.ggml.token_type", GW_I32, (uint64_t)n, kinds);
    gw_kv_u32(w, "tokenizer.ggml.bos_token_id", 1);
    gw_kv_u32(w, "tokenizer.ggml.eos_token_id", 2);
    gw_kv_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    gw_kv_bool(w, "tokenizer.ggml.add_bos_token", 1);
    gw_kv_bool(w, "tokenizer.ggml.add_space_prefix", 1);
    for (j = 0; j < n; j++) free(pieces[j]);
    free(pieces);
    free(scores);
    free(kinds);
}

/* --vocab-from: every tokenizer.* key copied. */
static void copy_vocab(gw_writer *w, const swa_gguf *g)
{
    gc_bytes b = {NULL, 0, 0};
    int64_t i;
    char key[256];
    for (i = 0; i < swa_gguf_kv_count(g); i++) {
        swa_str k = swa_gguf_kv_key(g, i);
        swa_gguf_value v = swa_gguf_kv_value(g, i);
        if (k.len < 10 || memcmp(k.ptr, "tokenizer.", 10) != 0) continue;
        if (k.len >= sizeof key) fail("a key of %zu bytes is too long to copy", k.len);
        memcpy(key, k.ptr, k.len);
        key[k.len] = 0;
        if (gc_kv_copy(w, key, &v, &b)) fail("%s: %s", key, gw_error(w));
    }
    free(b.p);
}

/* ==== random rows, in parallel ==== */

/* Row r of tensor `id`: n uniform values in [-a, a) with a = sqrt(3/n), so their standard
   deviation is 1/sqrt(n). tool.h's xorshift64* gives 64 bits per step; we use the top 32. */
static void random_row(float *x, int64_t n, uint64_t seed, uint64_t id, uint64_t r)
{
    uint64_t s = rng_seed(seed ^ splitmix64((id << 40) ^ r));
    const float scale = sqrtf(3.0f / (float)n) / 2147483648.0f;
    int64_t i;
    for (i = 0; i < n; i++) x[i] = (float)(int32_t)(rng_next(&s) >> 32) * scale;
}

typedef struct job {
    const tensor *t;
    uint64_t seed, id;
    int64_t row0, n_rows;    /* the chunk */
    size_t row_bytes;
    uint8_t *out;            /* n_rows * row_bytes */
    int ith, nth;
} job;

static void *work(void *arg)
{
    const job *j = (const job *)arg;
    float *x = (float *)malloc((size_t)j->t->ne[0] * sizeof *x);
    int64_t r;
    if (!x) return (void *)1;
    for (r = j->ith; r < j->n_rows; r += j->nth) {
        random_row(x, j->t->ne[0], j->seed, j->id, (uint64_t)(j->row0 + r));
        gw_convert_row(j->t->type, x, j->out + (size_t)r * j->row_bytes, j->t->ne[0]);
    }
    free(x);
    return NULL;
}

/* Rows row0 .. row0 + n - 1 of tensor `id`, converted to its type into out, on `threads` threads. */
static void convert_rows(const tensor *t, uint64_t seed, uint64_t id, int threads, int64_t row0, int64_t n,
                         size_t row_bytes, uint8_t *out)
{
    pthread_t tid[256];
    job jobs[256];
    int nth = n < threads ? (int)n : threads, k;
    for (k = 0; k < nth; k++) {
        jobs[k].t = t;
        jobs[k].seed = seed;
        jobs[k].id = id;
        jobs[k].row0 = row0;
        jobs[k].n_rows = n;
        jobs[k].row_bytes = row_bytes;
        jobs[k].out = out;
        jobs[k].ith = k;
        jobs[k].nth = nth;
        if (k > 0 && pthread_create(&tid[k], NULL, work, &jobs[k])) usage_fail("cannot start a thread");
    }
    if (work(&jobs[0])) usage_fail("out of memory");
    for (k = 1; k < nth; k++) {
        void *rc;
        pthread_join(tid[k], &rc);
        if (rc) usage_fail("out of memory");
    }
}

/* A matrix is written a buffer of rows at a time; with `distinct` > 0 only its first `distinct`
   rows are made, and row r is a copy of row r mod distinct. */
static void write_tensor(gw_writer *w, const tensor *t, uint64_t seed, uint64_t id, int threads, int64_t distinct,
                         uint8_t *buf, size_t buf_size)
{
    size_t row_bytes = gw_row_bytes(t->type, t->ne[0]);
    int64_t chunk = (int64_t)(buf_size / row_bytes), rows = t->ne[1] * t->ne[2], r, i;
    uint8_t *pool = NULL;
    if (t->values) {
        if (gw_stream_rows(w, t->values, 1)) fail("%s: %s", t->name, gw_error(w));
        return;
    }
    if (t->kind != MATRIX) {   /* llama's norms: ones, as a trained model's are near; the others vary */
        float *v = (float *)buf;
        double unit = sqrt((double)t->ne[0] / 3.0);   /* random_row's amplitude is 1 / unit */
        for (r = 0; r < t->ne[1]; r++) {   /* one row, or gpt-oss's experts' biases, one per expert */
            random_row(v, t->ne[0], seed, id, (uint64_t)r);
            for (i = 0; i < t->ne[0]; i++)
                v[i] = t->kind == ONES ? 1.0f : t->kind == NORM ? 1.0f + (float)(0.3 * unit) * v[i]
                     : t->kind == BIAS ? (float)(0.2 * unit) * v[i] : t->kind == SINK ? (float)(2.0 * unit) * v[i]
                     : 2.0f + (float)unit * v[i];
            if (gw_stream_rows(w, v, 1)) fail("%s: %s", t->name, gw_error(w));
        }
        return;
    }
    if (chunk < 1) usage_fail("%s: a row of %zu bytes does not fit the buffer", t->name, row_bytes);
    if (distinct > 0 && rows > distinct) {
        if (!(pool = (uint8_t *)malloc((size_t)distinct * row_bytes))) fail("out of memory");
        convert_rows(t, seed, id, threads, 0, distinct, row_bytes, pool);
    }
    for (r = 0; r < rows; r += chunk) {
        int64_t n = rows - r < chunk ? rows - r : chunk;
        if (!pool) convert_rows(t, seed, id, threads, r, n, row_bytes, buf);
        else
            for (i = 0; i < n; i++) memcpy(buf + (size_t)i * row_bytes, pool + (size_t)((r + i) % distinct) * row_bytes, row_bytes);
        if (gw_stream_write(w, buf, (size_t)n * row_bytes)) usage_fail("%s: %s", t->name, gw_error(w));
    }
    free(pool);
}

/* ==== main ==== */

/* The keys llama.cpp's converter writes for the architecture. */
static void put_hparams(gw_writer *w, const options *o, const char *name)
{
    const char *arch = archs[o->arch];
    const shape *s = &o->s;
    char key[96];
#define KEY(suffix) (snprintf(key, sizeof key, "%s.%s", arch, suffix), key)
    gw_kv_str(w, "general.architecture", arch);
    gw_kv_str(w, "general.name", name);
    gw_kv_u32(w, "general.file_type", o->file_type);
    if (is_quantized(o->type)) gw_kv_u32(w, "general.quantization_version", 2);
    gw_kv_u32(w, KEY("context_length"), (uint32_t)s->ctx);
    gw_kv_u32(w, KEY("embedding_length"), (uint32_t)s->dim);
    gw_kv_u32(w, KEY("block_count"), (uint32_t)s->layers);
    gw_kv_u32(w, KEY("feed_forward_length"), (uint32_t)s->ff);
    gw_kv_u32(w, KEY("attention.head_count"), (uint32_t)s->heads);
    gw_kv_u32(w, KEY("attention.head_count_kv"), (uint32_t)s->kv_heads);
    if (o->arch == LLAMA || o->arch == PHI3 || o->arch == MISTRAL3 || o->arch == GPTOSS || o->arch == LLAMA4)
        gw_kv_u32(w, KEY("rope.dimension_count"), (uint32_t)s->head_dim);
    if (o->arch == LLAMA4) {   /* llama.cpp requires the step; the chunk is the key ollama's converter writes */
        gw_kv_u32(w, KEY("interleave_moe_layer_step"), (uint32_t)o->moe_step);
        if (o->chunk) gw_kv_u32(w, KEY("attention.chunk_size"), (uint32_t)o->chunk);
        if (o->temp_len) gw_kv_u32(w, KEY("attention.temperature_length"), (uint32_t)o->temp_len);
        if (o->no_qk_norm) gw_kv_bool(w, KEY("use_qk_norm"), 0);
    }
    if (s->experts) {
        gw_kv_u32(w, KEY("expert_count"), (uint32_t)s->experts);
        gw_kv_u32(w, KEY("expert_used_count"), (uint32_t)s->experts_used);
        if (o->arch == QWEN3MOE || o->arch == GPTOSS || o->arch == LLAMA4 || o->arch == SMALLTHINKER || o->arch == AFMOE)
            gw_kv_u32(w, KEY("expert_feed_forward_length"), (uint32_t)s->expert_ff);
        if (o->arch == SMALLTHINKER) gw_kv_u32(w, KEY("expert_gating_func"), (uint32_t)o->gating);
        if (o->arch == AFMOE) {   /* as llama.cpp's converter writes Trinity's: sigmoid, normalized, scaled */
            gw_kv_u32(w, KEY("leading_dense_block_count"), (uint32_t)o->dense_lead);
            gw_kv_u32(w, KEY("expert_shared_count"), (uint32_t)o->shared);
            gw_kv_u32(w, KEY("expert_gating_func"), 2);
            gw_kv_bool(w, KEY("expert_weights_norm"), 1);
            if (o->route_scale > 0.0) gw_kv_f32(w, KEY("expert_weights_scale"), (float)o->route_scale);
        }
    }
    if (o->arch != LLAMA && o->arch != PHI3) {
        gw_kv_u32(w, KEY("attention.key_length"), (uint32_t)s->head_dim);
        gw_kv_u32(w, KEY("attention.value_length"), (uint32_t)s->head_dim);
    }
    gw_kv_f32(w, KEY("rope.freq_base"), (float)rope_base(o));
    if (o->arch == COHERE2) {
        gw_kv_f32(w, KEY("attention.layer_norm_epsilon"), 1e-5f);
        gw_kv_f32(w, KEY("logit_scale"), 0.25f);
    } else {
        gw_kv_f32(w, KEY("attention.layer_norm_rms_epsilon"), o->arch == LLAMA || o->arch == PHI3 || o->arch == GPTOSS ||
                  o->arch == MISTRAL3 || o->arch == LLAMA4 ? 1e-5f : 1e-6f);
    }
    if (o->arch == LLAMA) gw_kv_u32(w, KEY("vocab_size"), (uint32_t)s->vocab);
    if (o->arch == GEMMA_EMB) {   /* mean pooling, and the projections' sizes when --dense gives them */
        gw_kv_u32(w, KEY("pooling_type"), 1);
        if (o->dense) {
            gw_kv_u32(w, KEY("dense_2_feat_in"), (uint32_t)s->dim);
            gw_kv_u32(w, KEY("dense_2_feat_out"), (uint32_t)o->dense);
            gw_kv_u32(w, KEY("dense_3_feat_in"), (uint32_t)o->dense);
            gw_kv_u32(w, KEY("dense_3_feat_out"), (uint32_t)s->dim);
        }
    }
    if (o->arch == GEMMA2) {
        gw_kv_f32(w, KEY("attn_logit_softcapping"), 50.0f);
        gw_kv_f32(w, KEY("final_logit_softcapping"), 30.0f);
    }
    if (o->rope_scale > 0.0) {
        gw_kv_str(w, KEY("rope.scaling.type"), "linear");
        gw_kv_f32(w, KEY("rope.scaling.factor"), (float)o->rope_scale);
    }
    if (o->yarn > 0.0) {   /* and mistral3's YaRN keys, as its converter writes Ministral 3's (mscale_all_dim 1) */
        gw_kv_str(w, KEY("rope.scaling.type"), "yarn");
        gw_kv_f32(w, KEY("rope.scaling.factor"), (float)o->yarn);
        gw_kv_u32(w, KEY("rope.scaling.original_context_length"), (uint32_t)o->yarn_orig);
        if (o->arch == MISTRAL3) {
            gw_kv_f32(w, KEY("rope.scaling.yarn_beta_fast"), (float)(o->yarn_beta_fast > 0.0 ? o->yarn_beta_fast : 32.0));
            gw_kv_f32(w, KEY("rope.scaling.yarn_beta_slow"), 1.0f);
            gw_kv_f32(w, KEY("rope.scaling.yarn_log_multiplier"), 1.0f);
        }
    }
    if (o->attn_temp != 0.0) gw_kv_f32(w, KEY("attention.temperature_scale"), (float)o->attn_temp);
    if (o->rope_factors_ctx) {
        double scale = (double)s->ctx / (double)o->rope_factors_ctx;
        gw_kv_u32(w, KEY("rope.scaling.original_context_length"), (uint32_t)o->rope_factors_ctx);
        gw_kv_f32(w, KEY("rope.scaling.attn_factor"),
                  scale > 1.0 ? (float)sqrt(1.0 + log(scale) / log((double)o->rope_factors_ctx)) : 1.0f);
    }
    if (s->window || o->arch == PHI3 || o->window_key) gw_kv_u32(w, KEY("attention.sliding_window"), (uint32_t)s->window);
    if (o->pattern) gw_kv_u32(w, KEY("attention.sliding_window_pattern"), (uint32_t)o->pattern);
#undef KEY
}

/* Refuse when the file system of `path` has less free space than the file needs. */
static void check_space(const char *path, uint64_t need)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    double free_bytes;
    if (n >= sizeof dir) return;
    if (slash) memcpy(dir, path, n ? n : 1), dir[n ? n : 1] = 0;
    else strcpy(dir, ".");
#if defined(_WIN32)
    {
        ULARGE_INTEGER avail;
        if (!GetDiskFreeSpaceExA(dir, &avail, NULL, NULL)) return;   /* cannot tell: let the write find out */
        free_bytes = (double)avail.QuadPart;
    }
#else
    {
        struct statvfs sv;
        if (statvfs(dir, &sv) != 0) return;
        free_bytes = (double)sv.f_bavail * (double)sv.f_frsize;
    }
#endif
    if (free_bytes < (double)(need + (need >> 6)))
        fail("%s: needs %.2f GB, the file system has %.2f GB free", path, (double)need / 1e9, free_bytes / 1e9);
}

int main(int argc, char **argv)
{
    options o;
    tensor *t;
    size_t n_tensors, i, buf_size = (size_t)16 << 20;
    gw_writer *w;
    uint8_t *buf;
    uint64_t total, params = 0;
    double t0 = now(), t_head;
    char name[128];
    int tty = isatty(2);

    parse_args(argc, argv, &o);
    t = plan(&o, &n_tensors);
    if (!(w = gw_new(3))) fail("out of memory");
    /* no architecture in the name: llama.cpp looks for tokens Phi-3's vocabulary has when a name says "phi3" */
    snprintf(name, sizeof name, "random %s %s", o.s.name, o.type_name);
    put_hparams(w, &o, name);
    if (o.vocab_file) {
        copy_vocab(w, o.vocab_file);
        gw_set_inputs(w, &o.vocab_from, 1);   /* never written over its own vocabulary */
    } else {
        put_vocab(w, o.s.vocab);
    }
    for (i = 0; i < n_tensors; i++) {
        if (gw_declare_tensor(w, t[i].name, t[i].type, t[i].n_dims, t[i].ne)) fail("%s: %s", t[i].name, gw_error(w));
        params += (uint64_t)(t[i].ne[0] * t[i].ne[1] * t[i].ne[2]);
    }
    total = gw_data_size(w);
    check_space(o.out, total);
    fprintf(stderr, PROG ": %s: %s %s, %lld layers, dim %lld, %lld/%lld heads, FFN %lld, vocab %lld, window %lld: "
            "%.3f B parameters, %.2f GB of tensor data, %d thread%s\n", o.out, archs[o.arch], o.s.name, (long long)o.s.layers,
            (long long)o.s.dim, (long long)o.s.heads, (long long)o.s.kv_heads, (long long)o.s.ff,
            (long long)o.s.vocab, (long long)o.s.window, (double)params / 1e9, (double)total / 1e9, o.threads,
            o.threads == 1 ? "" : "s");
    if (o.s.experts)
        fprintf(stderr, PROG ": %lld experts of FFN %lld, %lld per token\n", (long long)o.s.experts, (long long)o.s.expert_ff,
                (long long)o.s.experts_used);
    if (!(buf = (uint8_t *)malloc(buf_size))) fail("out of memory");
    if (gw_stream_open(w, o.out)) fail("%s", gw_error(w));
    t_head = now();

    for (i = 0; i < n_tensors; i++) {
        write_tensor(w, &t[i], o.seed, i, o.threads, o.distinct, buf, buf_size);
        if (tty) fprintf(stderr, "\r[%3d%%] %-40s", (int)(100 * (i + 1) / n_tensors), t[i].name);
    }
    if (tty) fputc('\n', stderr);
    if (gw_stream_close(w)) fail("%s", gw_error(w));
    {
        double dt = now() - t0;
        int k_mix = o.type == GW_Q4_K || o.type == GW_Q5_K;
        fprintf(stderr, PROG ": wrote %s (%s matrices%s) in %.1f s (header %.1f s): %.1f M parameters/s, %.0f MB/s\n",
                o.out, swa_type_name(o.type), k_mix ? ", output Q6_K" : "", dt, t_head - t0,
                (double)params / 1e6 / dt, (double)total / 1e6 / dt);
    }
    free(buf);
    for (i = 0; i < n_tensors; i++) free(t[i].values);
    free(t);
    gw_free(w);
    swa_gguf_close(o.vocab_file);
    return 0;
}
