/* swa-quantize: convert the weight matrices of a GGUF model to another type, or to one of
   llama.cpp's named mixes.

   swa-quantize [options] IN.gguf [OUT.gguf] TYPE [NTHREADS]

   TYPE is f32, f16, bf16, or a llama-quantize name: q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k_s,
   q3_k_m, q3_k_l, q4_k_s, q4_k_m, q5_k_s, q5_k_m, q6_k, iq4_nl, iq4_xs, mxfp4_moe, in either
   case (q3_k, q4_k and q5_k are q3_k_m, q4_k_m and q5_k_m; tools/common/targets.h), or mxfp4
   (every matrix MXFP4 under the same rules as q4_0). Every metadata key is copied in
   order, with general.file_type set to llama.cpp's number for the result and
   general.quantization_version 2 added to quantized files that lack it; the alignment is kept.
   1-D tensors (the norms) are written as F32.

   Which matrix gets which type follows llama.cpp's llama_tensor_get_type for llama models (see
   mix_type; the README lists the rules). Rows that are not whole blocks of the chosen type fall
   back as llama.cpp's do: Q2_K, Q3_K and IQ4_XS to IQ4_NL, Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to
   Q8_0, and to F16 when rows are not whole blocks of 32 either (where llama.cpp stops), with a
   note.

   A matrix that is already quantized is not quantized again unless --allow-requantize is given
   (each pass adds its own rounding error; llama-quantize refuses too); one already in the type
   it would get is copied unchanged. Each matrix is dequantized row by row with
   swa_dequantize_row and converted with gw_convert_row.

   The output is streamed tensor by tensor through a buffer of about 16 MB, the input mapped
   read-only, so memory stays small for any model size. -t N converts with N threads (default:
   online CPUs); the output does not depend on it.

   llama-quantize's command line works as it is: IN [OUT] TYPE [NTHREADS] (without OUT, the
   file ggml-model-TYPE.gguf beside IN), --pure (every matrix TYPE, no mix), --leave-output-tensor
   (output.weight copied as it is), --output-tensor-type and --token-embedding-type (a ggml type
   name for those two); its importance-matrix, split-file and metadata-override flags are refused,
   saying so. On a terminal, quantizing shows a progress line (tools/common/progress.h). */
#define _POSIX_C_SOURCE 200809L    /* clock_gettime, sysconf */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"
#include "tools/common/targets.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROG "swa-quantize"
#include "tools/common/tool.h"
#include "tools/common/gguf_copy.h"
#include "tools/common/progress.h"

/* The choices beyond TYPE: llama-quantize's --pure, --leave-output-tensor, --output-tensor-type
   and --token-embedding-type (0xffffffff: not given). */
typedef struct choices {
    int pure, leave_output;
    uint32_t output_type, embd_type;
} choices;
#define NO_TYPE 0xffffffffu

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) fail("out of memory (%zu bytes)", n);
    return p;
}

/* A swa_str as a C string, in buf (cut at cap - 1 bytes). */
static const char *cstr(swa_str s, char *buf, size_t cap)
{
    size_t n = s.len < cap - 1 ? s.len : cap - 1;
    memcpy(buf, s.ptr, n);
    buf[n] = '\0';
    return buf;
}

/* ==== metadata ==== */

static void copy_metadata(const swa_gguf *g, gw_writer *w, uint32_t file_type, int quantized)
{
    int64_t i, n = swa_gguf_kv_count(g);
    int have_ftype = 0, have_qver = 0;
    char key[1024];
    gc_bytes b = {NULL, 0, 0};
    if (swa_gguf_alignment(g) != 32 && swa_gguf_kv_find(g, "general.alignment") < 0)
        fail("the input's alignment %llu is not the default, yet it has no general.alignment key",
             (unsigned long long)swa_gguf_alignment(g));
    for (i = 0; i < n; i++) {
        swa_gguf_value v = swa_gguf_kv_value(g, i);
        cstr(swa_gguf_kv_key(g, i), key, sizeof key);
        if (!strcmp(key, "general.file_type")) {
            gw_kv_u32(w, key, file_type);
            have_ftype = 1;
        } else if (!strcmp(key, "general.alignment")) {
            gw_set_alignment(w, (uint32_t)swa_gguf_alignment(g));    /* writes the key itself */
        } else {
            if (!strcmp(key, "general.quantization_version")) have_qver = 1;
            gc_kv_copy(w, key, &v, &b);
        }
        if (gw_error(w)[0]) fail("metadata %s: %s", key, gw_error(w));
    }
    if (!have_ftype) gw_kv_u32(w, "general.file_type", file_type);
    if (quantized && !have_qver) gw_kv_u32(w, "general.quantization_version", 2);
    free(b.p);
}

/* ==== choosing types ==== */

static const char *tname(uint32_t t)
{
    const char *s = swa_type_name(t);
    return s ? s : "?";
}

/* Whether this is the first fallback note for this tensor kind: "blk.N.x" counts as "x". */
static int first_note(const char *name)
{
    static char seen[64][64];
    static int n_seen;
    const char *kind = name;
    int i;
    if (!strncmp(name, "blk.", 4) && strchr(name + 4, '.')) kind = strchr(name + 4, '.') + 1;
    for (i = 0; i < n_seen; i++)
        if (!strncmp(seen[i], kind, 63)) return 0;
    if (n_seen < 64) {
        size_t len = strlen(kind) < 63 ? strlen(kind) : 63;
        memcpy(seen[n_seen], kind, len);
        seen[n_seen++][len] = '\0';
    }
    return 1;
}

/* What the rules need to know of the model, and where they are in it: tensors are visited in
   file order, as llama.cpp visits them. */
typedef struct mix_state {
    int has_output;            /* an output.weight of its own (else token_embd.weight is the classifier) */
    int n_gqa;                 /* query heads per key/value head */
    int n_attn_v, i_attn_v;    /* attn_v matrices, and how many have been seen */
    int n_layer, i_ffn_down;
    int n_expert;              /* {arch}.expert_count, 0 without experts */
} mix_state;

static int64_t kv_int(const swa_gguf *g, const char *key, int64_t fallback)
{
    int64_t i = swa_gguf_kv_find(g, key), v;
    swa_gguf_value val;
    if (i < 0) return fallback;
    val = swa_gguf_kv_value(g, i);
    return swa_gguf_value_int(&val, &v) == SWA_OK ? v : fallback;
}

static mix_state mix_start(const swa_gguf *g)
{
    mix_state s = {0, 1, 0, 0, 0, 0, 0};
    int64_t i, heads, kv_heads, a = swa_gguf_kv_find(g, "general.architecture");
    char name[1024], arch[64] = "llama", key[128];
    swa_gguf_value v;
    swa_str str;
    if (a >= 0 && (v = swa_gguf_kv_value(g, a), swa_gguf_value_str(&v, &str) == SWA_OK) && str.len < sizeof arch) {
        memcpy(arch, str.ptr, str.len);
        arch[str.len] = '\0';
    }
#define KEY(suffix) (snprintf(key, sizeof key, "%s." suffix, arch), key)
    heads = kv_int(g, KEY("attention.head_count"), 1);
    kv_heads = kv_int(g, KEY("attention.head_count_kv"), heads);
    s.n_expert = (int)kv_int(g, KEY("expert_count"), 0);
    s.has_output = swa_gguf_tensor_find(g, "output.weight") >= 0;
    s.n_gqa = kv_heads > 0 ? (int)(heads / kv_heads) : 1;
    s.n_layer = (int)kv_int(g, KEY("block_count"), 0);
#undef KEY
    for (i = 0; i < swa_gguf_tensor_count(g); i++)
        if (strstr(cstr(swa_gguf_tensor_at(g, i)->name, name, sizeof name), "attn_v.weight")) s.n_attn_v++;
    return s;
}

/* llama.cpp's use_more_bits: the first and last eighth of the layers and every third between. */
static int more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

/* The type llama.cpp's mix `ft` gives a matrix, before any fallback (llama_tensor_get_type): the
   classifier Q6_K (Q8_0 if its rows are not whole blocks of the base type, and Q8_0 stays Q8_0);
   attn_v, ffn_down and attn_output more bits in some mixes and layers. With experts, the router
   (ffn_gate_inp) keeps its type; each expert's rows are quantized as a 2-D matrix's, ffn_down_exps
   by its layer's rule; a model of 8 experts (Mixtral) gets Q8_0 attn_k and attn_v and, in the
   mixes llama.cpp names, Q5_K attn_output. MXFP4_MOE (moe set) gives the classifier Q8_0, the
   expert tensors (3-D: a matrix per expert) MXFP4 and every other matrix Q8_0. */
static uint32_t mix_type(mix_state *s, const swa_gguf_tensor *t, const char *name, uint32_t base, uint32_t ft, int moe)
{
    uint32_t type = base;
    if (!is_quantized(base)) return base;
    if (!strcmp(name, "output.weight") || (!s->has_output && !strcmp(name, "token_embd.weight"))) {
        if (moe || t->ne[0] % swa_type_block_size(base)) return GW_Q8_0;
        return base == GW_Q8_0 ? GW_Q8_0 : GW_Q6_K;
    }
    if (strstr(name, "ffn_gate_inp.weight")) return t->type;   /* the router is never quantized */
    if (moe) return t->ne[2] > 1 ? GW_MXFP4 : GW_Q8_0;
    if (!strcmp(name, "token_embd.weight")) return base;
    if (strstr(name, "attn_k.weight") && s->n_expert == 8) return GW_Q8_0;   /* Mixtral's: ~128 MB for accuracy */
    if (strstr(name, "attn_v.weight")) {
        int i = s->i_attn_v++;
        if (ft == FT_Q2_K) type = s->n_gqa >= 4 ? GW_Q4_K : GW_Q3_K;
        else if (ft == FT_Q3_K_M) type = i < 2 ? GW_Q5_K : GW_Q4_K;
        else if (ft == FT_Q3_K_L) type = GW_Q5_K;
        else if ((ft == FT_IQ4_NL || ft == FT_IQ4_XS) && s->n_gqa >= 4) type = GW_Q5_K;
        else if ((ft == FT_Q4_K_M || ft == FT_Q5_K_M) && more_bits(i, s->n_attn_v)) type = GW_Q6_K;
        else if (ft == FT_Q4_K_S && i < 4) type = GW_Q5_K;
        if (s->n_expert == 8) type = GW_Q8_0;
    } else if (strstr(name, "ffn_down")) {
        int i = s->i_ffn_down++, n = s->n_layer;
        if (ft == FT_Q2_K) type = GW_Q3_K;
        else if (ft == FT_Q3_K_M) type = i < n / 16 ? GW_Q5_K : GW_Q4_K;
        else if (ft == FT_Q3_K_L) type = GW_Q5_K;
        else if ((ft == FT_Q4_K_M || ft == FT_Q5_K_M) && more_bits(i, n)) type = GW_Q6_K;
        else if ((ft == FT_IQ4_NL || ft == FT_IQ4_XS || ft == FT_Q4_K_S) && i < n / 8) type = GW_Q5_K;
    } else if (strstr(name, "attn_output.weight") && s->n_expert == 8) {
        if (ft == FT_Q2_K || ft == FT_Q3_K_S || ft == FT_Q3_K_M || ft == FT_IQ4_NL || ft == FT_Q4_K_S || ft == FT_Q4_K_M ||
            ft == FT_IQ4_XS)
            type = GW_Q5_K;
    } else if (strstr(name, "attn_output.weight")) {
        if (ft == FT_Q2_K) type = GW_Q3_K;
        else if (ft == FT_Q3_K_M) type = GW_Q4_K;
        else if (ft == FT_Q3_K_L) type = GW_Q5_K;
    }
    return type;
}

/* The type a matrix gets: the mix's choice, or llama.cpp's fallback when its rows are not whole
   blocks of it. */
static uint32_t out_type(mix_state *s, const swa_gguf_tensor *t, const char *name, uint32_t target, uint32_t ft, int moe,
                         const choices *c)
{
    uint32_t want, type;
    size_t len = strlen(name);
    /* vectors, and (as llama-quantize) any tensor not named *weight: gpt-oss's 2-D expert biases */
    if (t->n_dims == 1 || len < 6 || strcmp(name + len - 6, "weight")) return GW_F32;
    if (c->leave_output && !strcmp(name, "output.weight")) return t->type;
    want = c->pure && !strstr(name, "ffn_gate_inp.weight") ? target : mix_type(s, t, name, target, ft, moe);
    /* as llama-quantize: the output type is the mix's classifier type (a tied token_embd.weight
       too), --pure's output.weight; the embedding type comes last */
    if (c->output_type != NO_TYPE &&
        (!strcmp(name, "output.weight") || (!c->pure && !s->has_output && !strcmp(name, "token_embd.weight"))))
        want = c->output_type;
    if (c->embd_type != NO_TYPE && !strcmp(name, "token_embd.weight")) want = c->embd_type;
    type = fallback_type(want, t->ne[0]);
    if (type != want && first_note(name))
        fprintf(stderr, PROG ": note: %s has rows of %lld, not whole blocks of %s: written as %s%s\n", name,
                (long long)t->ne[0], tname(want), tname(type), strncmp(name, "blk.", 4) ? "" : " (and so on in later layers)");
    return type;
}

/* ==== converting, in parallel ==== */

typedef struct job {
    const uint8_t *src;          /* the chunk's first source row */
    size_t src_row, dst_row;     /* bytes per row */
    uint32_t src_type, dst_type;
    int64_t n, n_rows;           /* row length, rows in the chunk */
    uint8_t *dst;
    int ith, nth, use_gw;        /* use_gw: the library cannot dequantize src_type */
    int failed;
} job;

static void *work(void *arg)
{
    job *j = (job *)arg;
    float *x = (float *)malloc((size_t)j->n * sizeof *x);
    int64_t r;
    if (!x) { j->failed = 1; return NULL; }
    for (r = j->ith; r < j->n_rows; r += j->nth) {
        const uint8_t *src = j->src + (size_t)r * j->src_row;
        int bad = j->use_gw ? gw_dequant_row(j->src_type, src, x, j->n) != 0
                            : swa_dequantize_row(j->src_type, src, x, j->n) != SWA_OK;
        if (bad) { j->failed = 1; break; }
        gw_convert_row(j->dst_type, x, j->dst + (size_t)r * j->dst_row, j->n);
    }
    free(x);
    return NULL;
}

/* What the progress line needs: the input's bytes converted so far, of all. */
typedef struct done_bytes {
    progress *pg;
    uint64_t done, total;
} done_bytes;

static void convert_tensor(gw_writer *w, const swa_gguf_tensor *t, const char *name, uint32_t dst_type, int threads,
                           uint8_t *buf, size_t buf_size, int *warned_gw, done_bytes *d)
{
    const int64_t n = t->ne[0], rows = t->ne[1] * t->ne[2] * t->ne[3];
    const size_t src_row = (size_t)(n / swa_type_block_size(t->type) * swa_type_block_bytes(t->type));
    const size_t dst_row = gw_row_bytes(dst_type, n);
    const int64_t chunk = (int64_t)(buf_size / dst_row) > 0 ? (int64_t)(buf_size / dst_row) : 1;
    float probe[256];
    int use_gw = 0, k;
    int64_t r;
    pthread_t tid[256];
    job jobs[256];

    if (t->type == dst_type) {                            /* nothing to convert */
        if (gw_stream_write(w, t->data, (size_t)t->nbytes)) fail("%s: %s", name, gw_error(w));
        return;
    }
    /* which dequantizer: the library's, or the writer's for a type the library lacks */
    if (swa_dequantize_row(t->type, t->data, probe, 0) == SWA_ERR_UNSUPPORTED) {
        if (!gw_row_bytes(t->type, n)) fail("%s: cannot dequantize type %s", name, tname(t->type));
        use_gw = 1;
        if (!*warned_gw)
            fprintf(stderr, PROG ": note: swa.h does not dequantize %s; using the GGUF writer's reference dequantizer\n",
                    tname(t->type));
        *warned_gw = 1;
    }
    if (dst_row > buf_size) fail("%s: a row of %zu bytes does not fit the buffer", name, dst_row);
    for (r = 0; r < rows; r += chunk) {
        int64_t m = rows - r < chunk ? rows - r : chunk;
        int nth = m < threads ? (int)m : threads;
        for (k = 0; k < nth; k++) {
            job *j = &jobs[k];
            j->src = (const uint8_t *)t->data + (size_t)r * src_row;
            j->src_row = src_row;
            j->dst_row = dst_row;
            j->src_type = t->type;
            j->dst_type = dst_type;
            j->n = n;
            j->n_rows = m;
            j->dst = buf;
            j->ith = k;
            j->nth = nth;
            j->use_gw = use_gw;
            j->failed = 0;
            if (k > 0 && pthread_create(&tid[k], NULL, work, j)) fail("cannot start a thread");
        }
        work(&jobs[0]);
        for (k = 1; k < nth; k++) pthread_join(tid[k], NULL);
        for (k = 0; k < nth; k++)
            if (jobs[k].failed) fail("%s: dequantizing %s rows of %lld failed", name, tname(t->type), (long long)n);
        if (gw_stream_write(w, buf, (size_t)m * dst_row)) fail("%s: %s", name, gw_error(w));
        progress_show(d->pg, (double)(d->done + (uint64_t)(r + m) * src_row) / 1e6, (double)d->total / 1e6, "MB",
                      "quantizing");
    }
}

/* ==== main ==== */

static void usage(FILE *f)
{
    fprintf(f, "usage: " PROG " [options] [-m] IN.gguf [OUT.gguf] TYPE [NTHREADS]\n"
               "  TYPE   " TARGET_NAMES "\n"
               "         (the matrices, as llama-quantize's mixes of the same name; 1-D tensors stay F32)\n"
               "  OUT    default: ggml-model-TYPE.gguf beside IN, as llama-quantize names it\n"
               "  -t N, NTHREADS  threads (default 0: every online CPU)\n"
               "  --allow-requantize  quantize matrices that are already quantized\n"
               "  --pure  every matrix TYPE: no mix (the router of a mixture of experts stays as it is)\n"
               "  --leave-output-tensor  copy output.weight as it is\n"
               "  --output-tensor-type T, --token-embedding-type T  a ggml type (q8_0, Q6_K, f16...) for\n"
               "         output.weight or token_embd.weight, over the mix\n"
               "  --no-progress  no progress line on stderr (drawn only on a terminal, for work over a second)\n"
               "  --version  the program's name and version\n"
               "  Exit status: 0 complete, 1 error, 2 bad usage; Ctrl-C ends it at once and removes the\n"
               "  unfinished output (a shell reports 130).\n");
}

typedef struct options {
    const char *in, *out;
    const target *chosen;
    int threads, allow_requantize, no_progress;
    choices c;
    char out_name[4096];          /* the default OUT */
} options;

static int parse_threads(const char *flag, const char *val)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(val, &end, 10);
    if (errno || end == val || *end || v < 0 || v > 256) usage_fail("%s wants 0..256 (0: every CPU), got \"%s\"", flag, val);
    return (int)v;
}

/* A ggml type name in any case, of a type this program writes. */
static uint32_t parse_type(const char *flag, const char *val)
{
    uint32_t t;
    for (t = 0; t < 64; t++) {
        const char *name = swa_type_name(t);
        size_t k;
        if (!name || !gw_row_bytes(t, 256)) continue;
        for (k = 0; name[k] && tolower((unsigned char)val[k]) == tolower((unsigned char)name[k]); k++) continue;
        if (!name[k] && !val[k]) return t;
    }
    usage_fail("%s wants a ggml type swa-quantize writes (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_K, q3_K, "
               "q4_K, q5_K, q6_K, iq4_nl, iq4_xs, mxfp4), got \"%s\"", flag, val);
}

/* llama-quantize's flags for what this program does not do, each refused with the reason. */
static void refuse_peer_flag(const char *a)
{
    static const char *const not_here[][2] = {
        {"--imatrix", "importance matrices"}, {"--include-weights", "importance matrices"},
        {"--exclude-weights", "importance matrices"}, {"--keep-split", "split GGUF files"},
        {"--override-kv", "metadata overrides (swa-inspect --set-window writes the window's keys)"},
    };
    peer_flag(a, NULL, 0, not_here, sizeof not_here / sizeof not_here[0]);
}

/* IN [OUT] TYPE [NTHREADS], as llama-quantize reads them: without OUT, TYPE is the second. */
static void parse_positionals(options *o, const char **pos, int n)
{
    const char *threads = NULL;
    if (n >= 2 && n <= 3 && target_find(pos[1])) {
        const char *slash = strrchr(pos[0], '/');
        size_t k, at;
        o->chosen = target_find(pos[1]);
        threads = n == 3 ? pos[2] : NULL;
        at = (size_t)snprintf(o->out_name, sizeof o->out_name, "%.*sggml-model-", slash ? (int)(slash - pos[0] + 1) : 0, pos[0]);
        for (k = 0; o->chosen->name[k] && at + 6 < sizeof o->out_name; k++)
            o->out_name[at++] = (char)toupper((unsigned char)o->chosen->name[k]);
        snprintf(o->out_name + at, sizeof o->out_name - at, ".gguf");
        o->out = o->out_name;
    } else {
        if (n < 3 || n > 4) usage_fail("want IN.gguf [OUT.gguf] TYPE [NTHREADS]");
        if (!(o->chosen = target_find(pos[2]))) usage_fail("TYPE wants " TARGET_NAMES ", got \"%s\"", pos[2]);
        o->out = pos[1];
        threads = n == 4 ? pos[3] : NULL;
    }
    o->in = pos[0];
    if (threads) o->threads = parse_threads("NTHREADS", threads);
}

static void parse_args(int argc, char **argv, options *o)
{
    const char *pos[5] = {NULL, NULL, NULL, NULL, NULL}, *in = NULL;
    int n_pos = 0, i;
    memset(o, 0, sizeof *o);
    o->c.output_type = o->c.embd_type = NO_TYPE;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        help_or_version(a, usage);
        refuse_peer_flag(a);
        if (!strcmp(a, "--allow-requantize")) o->allow_requantize = 1;
        else if (!strcmp(a, "--pure")) o->c.pure = 1;
        else if (!strcmp(a, "--leave-output-tensor")) o->c.leave_output = 1;
        else if (!strcmp(a, "--no-progress")) o->no_progress = 1;
        else if (!strcmp(a, "-m") || !strcmp(a, "-t") || !strcmp(a, "--output-tensor-type") ||
                 !strcmp(a, "--token-embedding-type")) {
            const char *v = i + 1 < argc ? argv[++i] : NULL;
            if (!v) usage_fail("%s needs a value", a);
            if (!strcmp(a, "-t")) o->threads = parse_threads(a, v);
            else if (!strcmp(a, "--output-tensor-type")) o->c.output_type = parse_type(a, v);
            else if (!strcmp(a, "--token-embedding-type")) o->c.embd_type = parse_type(a, v);
            else if (in) usage_fail("one input model, please (at -m %s)", v);   /* the input may be given as -m IN */
            else in = v;
        } else if (a[0] == '-' && a[1]) {
            usage_fail("unknown option %s", a);
        } else {
            if (n_pos == 4) usage_fail("too many arguments (at \"%s\")", a);
            pos[n_pos++] = a;
        }
    }
    if (in) {
        if (n_pos == 4) usage_fail("too many arguments (at \"%s\")", pos[3]);
        memmove(pos + 1, pos, (size_t)n_pos * sizeof *pos);
        pos[0] = in;
        n_pos++;
    }
    parse_positionals(o, pos, n_pos);
}

int main(int argc, char **argv)
{
    options o;
    const char *pos[2];
    int threads, warned_gw = 0, moe;
    long cpus = swa_cpu_count();
    uint32_t target = 0, file_type = 0, *types;
    mix_state mix;
    size_t k, buf_size = (size_t)16 << 20;
    swa_gguf *g;
    swa_error err;
    gw_writer *w;
    uint8_t *buf;
    int64_t n_tensors, ti;
    uint64_t in_bytes = 0;
    double t0 = now();
    char name[1024];
    progress pg;
    done_bytes d;

    parse_args(argc, argv, &o);
    threads = o.threads > 0 ? o.threads : cpus > 0 ? (int)(cpus < 256 ? cpus : 256) : 1;
    pos[0] = o.in;
    pos[1] = o.out;
    target = o.chosen->type;
    file_type = o.chosen->file_type;
    moe = !strcmp(o.chosen->name, "mxfp4_moe");

    if (swa_gguf_open(pos[0], &g, &err) != SWA_OK) {   /* the library's message names the file */
        if (strstr(err.msg, pos[0])) fail("%s", err.msg);
        fail("%s: %s", pos[0], err.msg);
    }
    if (!(w = gw_new(3))) fail("out of memory");
    gw_set_inputs(w, pos, 1);
    copy_metadata(g, w, file_type, is_quantized(target));

    n_tensors = swa_gguf_tensor_count(g);
    types = (uint32_t *)xmalloc((size_t)n_tensors * sizeof *types);
    mix = mix_start(g);
    for (ti = 0; ti < n_tensors; ti++) {
        const swa_gguf_tensor *t = swa_gguf_tensor_at(g, ti);
        cstr(t->name, name, sizeof name);
        types[ti] = out_type(&mix, t, name, target, file_type, moe, &o.c);
        if (types[ti] != t->type && is_quantized(t->type) && is_quantized(types[ti]) && !o.allow_requantize)
            fail("%s is already quantized (%s): quantizing it again to %s would add a second rounding error to the first; "
                 "quantize the F32/F16/BF16 original instead, or pass --allow-requantize", name, tname(t->type),
                 tname(types[ti]));
        if (gw_declare_tensor(w, name, types[ti], t->n_dims, t->ne)) fail("%s: %s", name, gw_error(w));
        in_bytes += t->nbytes;
    }
    buf = (uint8_t *)xmalloc(buf_size);
    if (gw_stream_open(w, pos[1])) fail("%s", gw_error(w));
    progress_start(&pg, !o.no_progress);
    d.pg = &pg;
    d.total = in_bytes;
    for (d.done = 0, ti = 0; ti < n_tensors; ti++) {
        const swa_gguf_tensor *t = swa_gguf_tensor_at(g, ti);
        cstr(t->name, name, sizeof name);
        convert_tensor(w, t, name, types[ti], threads, buf, buf_size, &warned_gw, &d);
        d.done += t->nbytes;
    }
    progress_end(&pg);
    if (gw_stream_close(w)) fail("%s", gw_error(w));
    {
        uint64_t out_bytes = gw_data_size(w);
        int64_t count[64] = {0};
        char mix[512] = "";
        size_t at = 0;
        for (ti = 0; ti < n_tensors; ti++)
            if (types[ti] < 64) count[types[ti]]++;
        for (k = 0; k < 64; k++)
            if (count[k] && at < sizeof mix)
                at += (size_t)snprintf(mix + at, sizeof mix - at, "%s%lld %s", at ? ", " : "", (long long)count[k], tname((uint32_t)k));
        fprintf(stderr, PROG ": wrote %s: %lld tensors (%s), tensor data %.2f MB -> %.2f MB, in %.1f s\n", pos[1],
                (long long)n_tensors, mix, (double)in_bytes / 1e6, (double)out_bytes / 1e6, now() - t0);
    }
    free(buf);
    free(types);
    gw_free(w);
    swa_gguf_close(g);
    return 0;
}
