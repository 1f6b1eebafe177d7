/* swa-quantize: convert the weight matrices of a GGUF model to another type.

   swa-quantize IN.gguf OUT.gguf TYPE [-t N]

   TYPE is f32, f16, bf16, q8_0, q4_0, q4_k, q5_k or q6_k. Every metadata key is copied in
   order, with general.file_type set to llama.cpp's number for the result (0 F32, 1 F16,
   32 BF16, 7 Q8_0, 2 Q4_0, 15 Q4_K_M, 17 Q5_K_M, 18 Q6_K) and general.quantization_version 2
   added to quantized files that lack it; the alignment is kept. 1-D tensors (the norms) are
   written as F32. Each matrix is dequantized row by row with swa_dequantize_row (the library;
   for a type it lacks, the GGUF writer's reference dequantizer) and converted with
   gw_convert_row; a tensor already in the target type is copied unchanged. With q4_k and q5_k,
   output.weight (or token_embd.weight when the model has no output.weight and reuses it)
   becomes Q6_K, as in llama.cpp's Q4_K_M and Q5_K_M.

   Rows that are not whole blocks of the target type fall back, with a note on stderr: Q4_K to
   Q4_0, Q5_K and Q6_K to Q8_0 when rows are a multiple of 32 (the nearest types we write;
   llama.cpp picks Q5_0, Q5_1 and Q8_0), else to F16 (stories260K's FFN of 172, for instance).

   The output is streamed tensor by tensor through a buffer of about 16 MB, the input mapped
   read-only, so memory stays small for any model size. -t N converts with N threads (default:
   online CPUs); the output does not depend on it. */
#define _POSIX_C_SOURCE 200809L    /* clock_gettime, sysconf */
#define SWA_IMPLEMENTATION
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/gguf_writer.h"

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

/* A message on stderr and exit: status 1 for a file that cannot be read or written. */
_Noreturn static void vfail(int status, const char *fmt, va_list ap)
{
    fprintf(stderr, PROG ": ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    exit(status);   /* an unfinished output is removed at exit (safe_write.h) */
}

_Noreturn static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(1, fmt, ap);
}

/* Bad usage: status 2. */
_Noreturn static void usage_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(2, fmt, ap);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) fail("out of memory (%zu bytes)", n);
    return p;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const struct { const char *name; uint32_t type, file_type; } targets[] = {
    {"f32", GW_F32, 0},   {"f16", GW_F16, 1},   {"bf16", GW_BF16, 32}, {"q8_0", GW_Q8_0, 7},
    {"q4_0", GW_Q4_0, 2}, {"q4_k", GW_Q4_K, 15}, {"q5_k", GW_Q5_K, 17}, {"q6_k", GW_Q6_K, 18},
};

static int is_quantized(uint32_t t) { return t != GW_F32 && t != GW_F16 && t != GW_BF16; }

/* A swa_str as a C string, in buf (cut at cap - 1 bytes). */
static const char *cstr(swa_str s, char *buf, size_t cap)
{
    size_t n = s.len < cap - 1 ? s.len : cap - 1;
    memcpy(buf, s.ptr, n);
    buf[n] = '\0';
    return buf;
}

/* ==== metadata ==== */

typedef struct bytes { uint8_t *p; size_t len, cap; } bytes;

static void put(bytes *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        if (!(b->p = (uint8_t *)realloc(b->p, cap))) fail("out of memory");
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static size_t scalar_size(swa_gguf_type t)
{
    switch (t) {
    case SWA_GGUF_U8: case SWA_GGUF_I8: case SWA_GGUF_BOOL: return 1;
    case SWA_GGUF_U16: case SWA_GGUF_I16: return 2;
    case SWA_GGUF_U32: case SWA_GGUF_I32: case SWA_GGUF_F32: return 4;
    case SWA_GGUF_U64: case SWA_GGUF_I64: case SWA_GGUF_F64: return 8;
    default: return 0;
    }
}

/* The GGUF encoding of a value's payload (what follows its type tag), nested arrays included. */
static void encode(bytes *b, const swa_gguf_value *v)
{
    size_t size = scalar_size(v->type);
    if (size) {
        put(b, v->data, size);
    } else if (v->type == SWA_GGUF_STRING) {
        uint64_t n = v->n;
        put(b, &n, 8);
        put(b, v->data, (size_t)v->n);
    } else {
        uint32_t et = (uint32_t)v->elem_type;
        uint64_t n = v->n, j;
        put(b, &et, 4);
        put(b, &n, 8);
        if (scalar_size(v->elem_type)) {
            put(b, v->data, (size_t)n * scalar_size(v->elem_type));
        } else {
            for (j = 0; j < n; j++) {
                swa_gguf_value e;
                if (swa_gguf_value_at(v, j, &e) != SWA_OK) fail("cannot read element %llu of an array", (unsigned long long)j);
                encode(b, &e);
            }
        }
    }
}

static void copy_metadata(const swa_gguf *g, gw_writer *w, uint32_t file_type, int quantized)
{
    int64_t i, n = swa_gguf_kv_count(g);
    int have_ftype = 0, have_qver = 0;
    char key[1024];
    bytes b = {NULL, 0, 0};
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
            b.len = 0;
            encode(&b, &v);
            gw_kv_raw(w, key, (uint32_t)v.type, b.p, b.len);
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

/* The type a matrix gets: the target, Q6_K for the classifier under q4_k and q5_k, and the fallback
   when its rows are not whole blocks. */
static uint32_t out_type(const swa_gguf *g, const swa_gguf_tensor *t, const char *name, uint32_t target)
{
    uint32_t want = target, type;
    if (t->n_dims == 1) return GW_F32;
    if ((target == GW_Q4_K || target == GW_Q5_K) && (!strcmp(name, "output.weight") ||
                              (!strcmp(name, "token_embd.weight") && swa_gguf_tensor_find(g, "output.weight") < 0)))
        want = GW_Q6_K;
    type = want;
    if (!gw_row_bytes(type, t->ne[0]) && (type == GW_Q4_K || type == GW_Q5_K || type == GW_Q6_K))
        type = type == GW_Q4_K ? GW_Q4_0 : GW_Q8_0;
    if (!gw_row_bytes(type, t->ne[0])) type = GW_F16;
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

static void convert_tensor(gw_writer *w, const swa_gguf_tensor *t, const char *name, uint32_t dst_type, int threads,
                           uint8_t *buf, size_t buf_size, int *warned_gw)
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
    }
}

/* ==== main ==== */

static void usage(FILE *f)
{
    fprintf(f, "usage: " PROG " [-m] IN.gguf OUT.gguf TYPE [-t N]\n"
               "  TYPE   f32, f16, bf16, q8_0, q4_0, q4_k, q5_k or q6_k (the matrices; 1-D tensors stay F32)\n"
               "  -t N   threads (default: online CPUs)\n");
}

int main(int argc, char **argv)
{
    const char *pos[3] = {NULL, NULL, NULL}, *in = NULL;
    int n_pos = 0, threads, warned_gw = 0, i;
    long cpus = swa_cpu_count();
    uint32_t target = 0, file_type = 0, *types;
    size_t k, buf_size = (size_t)16 << 20;
    swa_gguf *g;
    swa_error err;
    gw_writer *w;
    uint8_t *buf;
    int64_t n_tensors, ti;
    uint64_t in_bytes = 0;
    double t0 = now();
    char name[1024];

    threads = cpus > 0 ? (int)(cpus < 256 ? cpus : 256) : 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!strcmp(a, "--version")) { printf("%s %d.%d.%d\n", "swa-quantize", SWA_VERSION_MAJOR, SWA_VERSION_MINOR, SWA_VERSION_PATCH); return 0; }
        if (!strcmp(a, "-m")) {            /* the input may also be given as -m IN.gguf */
            if (i + 1 >= argc) usage_fail("-m needs a value");
            if (in) usage_fail("one input model, please (at -m %s)", argv[i + 1]);
            in = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "-t")) {
            char *end;
            long v;
            if (i + 1 >= argc) usage_fail("-t needs a value");
            errno = 0;
            v = strtol(argv[++i], &end, 10);
            if (errno || *end || v < 1 || v > 256) usage_fail("-t wants 1..256, got \"%s\"", argv[i]);
            threads = (int)v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            usage(stderr);
            usage_fail("unknown option %s", argv[i]);
        } else {
            if (n_pos == 3) { usage(stderr); usage_fail("too many arguments (at \"%s\")", argv[i]); }
            pos[n_pos++] = argv[i];
        }
    }
    if (in) {
        if (n_pos == 3) { usage(stderr); usage_fail("too many arguments (at \"%s\")", pos[2]); }
        memmove(pos + 1, pos, (size_t)n_pos * sizeof *pos);
        pos[0] = in;
        n_pos++;
    }
    if (n_pos != 3) { usage(stderr); usage_fail("want IN.gguf OUT.gguf TYPE"); }
    for (k = 0; k < sizeof targets / sizeof targets[0]; k++)
        if (!strcmp(pos[2], targets[k].name)) break;
    if (k == sizeof targets / sizeof targets[0]) usage_fail("TYPE wants f32, f16, bf16, q8_0, q4_0, q4_k, q5_k or q6_k, got \"%s\"", pos[2]);
    target = targets[k].type;
    file_type = targets[k].file_type;

    if (swa_gguf_open(pos[0], &g, &err) != SWA_OK) {   /* the library's message names the file */
        if (strstr(err.msg, pos[0])) fail("%s", err.msg);
        fail("%s: %s", pos[0], err.msg);
    }
    if (!(w = gw_new(3))) fail("out of memory");
    gw_set_inputs(w, pos, 1);
    copy_metadata(g, w, file_type, is_quantized(target));

    n_tensors = swa_gguf_tensor_count(g);
    types = (uint32_t *)xmalloc((size_t)n_tensors * sizeof *types);
    for (ti = 0; ti < n_tensors; ti++) {
        const swa_gguf_tensor *t = swa_gguf_tensor_at(g, ti);
        cstr(t->name, name, sizeof name);
        types[ti] = out_type(g, t, name, target);
        if (gw_declare_tensor(w, name, types[ti], t->n_dims, t->ne)) fail("%s: %s", name, gw_error(w));
        in_bytes += t->nbytes;
    }
    buf = (uint8_t *)xmalloc(buf_size);
    if (gw_stream_open(w, pos[1])) fail("%s", gw_error(w));
    for (ti = 0; ti < n_tensors; ti++) {
        const swa_gguf_tensor *t = swa_gguf_tensor_at(g, ti);
        cstr(t->name, name, sizeof name);
        convert_tensor(w, t, name, types[ti], threads, buf, buf_size, &warned_gw);
    }
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
