/* swa-inspect: print what a GGUF file holds (header, metadata, tensor table) and, when it
   loads as a llama model, a one-line summary of its hyperparameters; or write a copy of the
   file with another sliding window.

   swa-inspect FILE.gguf
   swa-inspect IN.gguf --set-window W OUT.gguf
   swa-inspect IN.gguf --set-window W0,W1,... OUT.gguf   (a per-layer pattern, repeated)

   Strings from the file may hold anything, so control bytes, C1 controls and invalid UTF-8
   are printed escaped: any file is safe to show on a terminal. Exit status: 0 when the GGUF
   parsed (a file that is not a model included) or the copy was written, 1 when a file cannot
   be opened or written, 2 for bad usage. */
#define _POSIX_C_SOURCE 200809L
#include "swa.h"
#include "tools/common/printable.h"
#include "tools/common/safe_write.h"
#define PROG "swa-inspect"
#include "tools/common/tool.h"   /* int_list */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define STR_SHOWN   48      /* bytes of a string shown before "..." */
#define ELEMS_SHOWN 4       /* elements of a top-level array; nested arrays show 2 */
#define NEST_SHOWN  3       /* arrays nested deeper print only their "[n type]" */
#define KEY_COLS    40      /* widest key and tensor name we pad the columns for */

static void usage(FILE *f)
{
    fprintf(f, "usage: swa-inspect [-m] FILE.gguf\n"
               "       swa-inspect [-m] IN.gguf --set-window W OUT.gguf\n"
               "       swa-inspect [-m] IN.gguf --set-window W0,W1,... OUT.gguf\n"
               "  Print the header, metadata and tensor table of a GGUF file, then a summary\n"
               "  of the hyperparameters, each layer's window and cache memory if it loads as\n"
               "  a model.\n"
               "  --set-window W  instead write OUT.gguf, a copy of IN.gguf whose key\n"
               "                  {arch}.attention.sliding_window is the u32 W (W >= 1, the\n"
               "                  windowed layers of the architecture: all of them but in Gemma);\n"
               "                  with a list W0,W1,... (0 = full attention) the key becomes one\n"
               "                  u32 per layer, the list repeated over the layers (e.g.\n"
               "                  0,32768,32768,32768). An existing key is replaced where it\n"
               "                  stands, else the key is added last. Every other key, the tensor\n"
               "                  table, the tensor data, the GGUF version and the alignment are\n"
               "                  kept.\n"
               "  -h  this help\n");
}


/* Print up to `max` bytes of s, escaped, then "..." if it was cut; quoted strings also
   escape '"'. Returns the columns used, counting one per character, for padding. */
static int print_escaped(FILE *f, const char *s, size_t len, size_t max, int quote)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, k;
    int cols = quote ? 2 : 0;
    if (quote) fputc('"', f);
    for (; i < len && i < max; i += k ? k : 1) {
        k = printable_utf8(p + i, len - i);
        if (k == 1 && (p[i] == '\\' || (quote && p[i] == '"'))) cols += fprintf(f, "\\%c", p[i]);
        else if (k) { fwrite(p + i, 1, k, f); cols++; }
        else if (p[i] == '\n') cols += fprintf(f, "\\n");
        else if (p[i] == '\t') cols += fprintf(f, "\\t");
        else cols += fprintf(f, "\\x%02x", p[i]);
    }
    if (quote) fputc('"', f);
    if (i < len) cols += fprintf(f, "...");
    return cols;
}

static void print_value(const swa_gguf_value *v, int depth);

/* "[3 u32] 1, 2, 3" or "[32000 strings] "<unk>", "<s>", "</s>", ..."; array elements come
   in parentheses, fewer of them at each level. */
static void print_array(const swa_gguf_value *v, int depth)
{
    uint64_t j, shown = depth == 0 ? ELEMS_SHOWN : 2;
    int nested = v->elem_type == SWA_GGUF_ARRAY;
    swa_gguf_value e;
    printf("[%llu %s%s]", (unsigned long long)v->n, swa_gguf_type_name(v->elem_type),
           nested || v->elem_type == SWA_GGUF_STRING ? "s" : "");
    if (depth >= NEST_SHOWN) shown = 0;
    for (j = 0; j < v->n && j < shown && swa_gguf_value_at(v, j, &e) == SWA_OK; j++) {
        fputs(j ? (nested ? ", (" : ", ") : (nested ? " (" : " "), stdout);
        print_value(&e, depth + 1);
        if (nested) putchar(')');
    }
    if (v->n > shown) fputs(shown ? ", ..." : " ...", stdout);
}

static void print_value(const swa_gguf_value *v, int depth)
{
    int64_t i;
    uint64_t u;
    double d;
    swa_str s;
    if (v->type == SWA_GGUF_ARRAY) {
        print_array(v, depth);
    } else if (swa_gguf_value_str(v, &s) == SWA_OK) {
        print_escaped(stdout, s.ptr, s.len, STR_SHOWN, 1);
    } else if (v->type == SWA_GGUF_BOOL) {
        fputs(swa_gguf_value_int(v, &i) == SWA_OK && i ? "true" : "false", stdout);
    } else if (v->type == SWA_GGUF_F32 || v->type == SWA_GGUF_F64) {
        if (swa_gguf_value_float(v, &d) == SWA_OK) printf("%g", d);
    } else if (v->type == SWA_GGUF_U64) {
        memcpy(&u, v->data, 8);             /* value_int refuses values past INT64_MAX */
        printf("%llu", (unsigned long long)u);
    } else if (swa_gguf_value_int(v, &i) == SWA_OK) {
        printf("%lld", (long long)i);
    }
}

/* A library message, which may quote names from the file, on a line of its own. */
static void print_message(FILE *f, const char *prefix, const char *msg)
{
    fputs(prefix, f);
    print_escaped(f, msg, strlen(msg), strlen(msg), 0);
    fputc('\n', f);
}

/* A key or tensor name, indented and padded to the first column. */
static void print_name(swa_str name)
{
    int cols;
    fputs("  ", stdout);
    cols = print_escaped(stdout, name.ptr, name.len, KEY_COLS * 2, 0);
    printf("%*s", cols < KEY_COLS ? KEY_COLS - cols : 0, "");
}

static void print_metadata(const swa_gguf *g)
{
    int64_t i, n = swa_gguf_kv_count(g);
    for (i = 0; i < n; i++) {
        swa_gguf_value v = swa_gguf_kv_value(g, i);
        print_name(swa_gguf_kv_key(g, i));
        printf(" %-6s ", swa_gguf_type_name(v.type));
        print_value(&v, 0);
        putchar('\n');
    }
}

static void print_tensors(const swa_gguf *g)
{
    int64_t i, n = swa_gguf_tensor_count(g);
    uint32_t d;
    if (n == 0) return;
    printf("  %-*s %-8s %-20s %12s %12s\n", KEY_COLS, "name", "type", "shape", "bytes", "offset");
    for (i = 0; i < n; i++) {
        const swa_gguf_tensor *t = swa_gguf_tensor_at(g, i);
        char shape[128];
        size_t used = 0;
        for (d = 0; d < t->n_dims; d++)     /* four 19-digit numbers always fit */
            used += (size_t)snprintf(shape + used, sizeof shape - used, "%s%lld", d ? " x " : "",
                                     (long long)t->ne[d]);
        print_name(t->name);
        printf(" %-8s %-20s %12llu %12llu\n", swa_type_name(t->type), shape,
               (unsigned long long)t->nbytes, (unsigned long long)t->offset);
    }
}

/* "window 4096", "full attention", or one entry per layer when the layers differ. */
static void print_windows(const swa_model *m)
{
    int32_t l, n = swa_model_hparams(m)->n_layer, w0 = swa_model_layer_window(m, 0);
    for (l = 1; l < n && swa_model_layer_window(m, l) == w0; l++) continue;
    if (l == n) {
        if (w0) printf("window %d", (int)w0);
        else fputs("full attention", stdout);
        return;
    }
    fputs("windows", stdout);
    for (l = 0; l < n; l++) printf("%s%d", l ? "," : " ", (int)swa_model_layer_window(m, l));
}

/* "512 KiB", "2.00 MiB", "1.25 GiB" */
static const char *human_bytes(char *buf, size_t cap, double b)
{
    if (b < 1048576.0) snprintf(buf, cap, "%.1f KiB", b / 1024.0);
    else if (b < 1073741824.0) snprintf(buf, cap, "%.2f MiB", b / 1048576.0);
    else snprintf(buf, cap, "%.2f GiB", b / 1073741824.0);
    return buf;
}

/* Each layer's window and the cache it keeps at the default context (F16 keys and values):
   W slots for a windowed layer, n_ctx for a global one. */
static void print_layers(const swa_model *m)
{
    const swa_hparams *hp = swa_model_hparams(m);
    swa_ctx_config cfg = swa_ctx_config_default(m);
    size_t windowed, global, row = (size_t)hp->n_kv_head * (size_t)hp->head_dim * 2;
    int32_t l;
    char a[32], b[32], c[32];
    cfg.kv_type = SWA_KV_F16;
    swa_ctx_cache_split(m, &cfg, &windowed, &global);
    printf("layers: %d windowed, %d global; cache at n_ctx %d (f16): windowed %s + global %s = %s\n",
           hp->n_windowed, hp->n_layer - hp->n_windowed, cfg.n_ctx, human_bytes(a, sizeof a, (double)windowed),
           human_bytes(b, sizeof b, (double)global), human_bytes(c, sizeof c, (double)(windowed + global)));
    for (l = 0; l < hp->n_layer; l++) {
        int32_t w = swa_model_layer_window(m, l);
        char label[32];
        if (w) snprintf(label, sizeof label, "window %d", (int)w);
        else snprintf(label, sizeof label, "full attention");
        printf("  layer %3d: %-16s cache %s (%d slots)\n", (int)l, label,
               human_bytes(a, sizeof a, (double)(2 * row * (size_t)(w ? w : cfg.n_ctx))), (int)(w ? w : cfg.n_ctx));
    }
}

static void print_model(const char *path)
{
    const swa_hparams *hp;
    const char *type;
    swa_model *m;
    swa_error err;
    if (swa_model_load(path, &m, &err) != SWA_OK) {
        print_message(stdout, "not loadable as a model: ", err.msg);
        return;
    }
    hp = swa_model_hparams(m);
    type = swa_type_name(hp->weight_type);
    printf("model: %s, %d layers, embd %d, %d heads, %d kv heads, head dim %d, ff %d, vocab %d, ",
           hp->arch, hp->n_layer, hp->n_embd, hp->n_head, hp->n_kv_head, hp->head_dim, hp->n_ff, hp->n_vocab);
    if (hp->n_expert > 0) printf("%d experts of ff %d, %d per token, ", hp->n_expert, hp->n_ff_exp, hp->n_expert_used);
    if (hp->n_ctx_train > 0) printf("ctx %d, ", hp->n_ctx_train);
    else fputs("ctx not given, ", stdout);
    printf("rope base %g, n_rot %d, eps %g, ", hp->rope_base, hp->n_rot, hp->rms_eps);
    print_windows(m);
    printf(", weights %s\n", type ? type : "?");
    print_layers(m);
    swa_model_free(m);
}

/* ==== --set-window: copy a file with another {arch}.attention.sliding_window ==== */

/* The new window: one number, or one per layer (a pattern repeated over the layers). */
typedef struct new_window {
    char key[96];              /* {arch}.attention.sliding_window of the input's architecture */
    uint32_t *w;               /* [n] */
    uint64_t n;
    int is_array;
} new_window;

/* Encoded size of a value of `type` whose encoding starts at p (strings and arrays: at their
   length or header). swa_gguf_open has already checked that every value lies inside the file;
   write_copy also checks that each entry ends where the next one starts. */
static uint64_t value_bytes(uint32_t type, const uint8_t *p)
{
    static const uint8_t scalar[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    uint64_t n, i, total;
    uint32_t elem;
    if (type < 13 && scalar[type]) return scalar[type];
    if (type == SWA_GGUF_STRING) {
        memcpy(&n, p, 8);
        return 8 + n;
    }
    memcpy(&elem, p, 4);
    memcpy(&n, p + 4, 8);
    if (elem < 13 && scalar[elem]) return 12 + n * scalar[elem];
    for (total = 12, i = 0; i < n; i++) total += value_bytes(elem, p + total);
    return total;
}

/* Where a value's encoding starts: the reader's data pointer is past a string's length and
   past an array's element type and count. */
static const uint8_t *value_start(const swa_gguf_value *v)
{
    return v->type == SWA_GGUF_STRING ? v->data - 8 : v->type == SWA_GGUF_ARRAY ? v->data - 12 : v->data;
}

typedef struct out_file {
    FILE *f;
    uint64_t written;
    int failed;          /* 1: a write failed (errno says why), 2: bad input, already reported */
} out_file;

static void put(out_file *o, const void *p, uint64_t n)
{
    const uint8_t *b = (const uint8_t *)p;
    while (n && !o->failed) {                 /* pieces of 1 GiB: fwrite takes a size_t */
        size_t k = n > (1u << 30) ? (size_t)1 << 30 : (size_t)n;
        if (fwrite(b, 1, k, o->f) != k) o->failed = 1;
        b += k;
        n -= k;
        o->written += k;
    }
}

static void put_u32(out_file *o, uint32_t v) { put(o, &v, 4); }   /* the reader refuses big-endian hosts */
static void put_u64(out_file *o, uint64_t v) { put(o, &v, 8); }

static void put_window(out_file *o, const new_window *nw)
{
    uint64_t i;
    put_u64(o, strlen(nw->key));
    put(o, nw->key, strlen(nw->key));
    if (nw->is_array) {
        put_u32(o, SWA_GGUF_ARRAY);
        put_u32(o, SWA_GGUF_U32);
        put_u64(o, nw->n);
    } else {
        put_u32(o, SWA_GGUF_U32);
    }
    for (i = 0; i < nw->n; i++) put_u32(o, nw->w[i]);
}

/* Write the copy: header, metadata entries copied byte for byte from the input (the window
   entry replaced in place, or added last), tensor infos re-encoded from the table, zeros up
   to the input's alignment, then the input's data section as it stands. The tensor offsets
   are relative to the data section, so they stay valid; general.alignment is one of the
   copied keys, in its place, and the padding follows the alignment the reader resolved from
   it (32 when it is absent), as the input's did. Returns 0 or -1 with a message printed. */
static int write_copy(const swa_gguf *g, FILE *f, const char *out_path, const new_window *nw, int64_t window_kv)
{
    int64_t n_kv = swa_gguf_kv_count(g), n_t = swa_gguf_tensor_count(g), i;
    uint64_t align = swa_gguf_alignment(g), data_bytes = swa_gguf_file_size(g) - swa_gguf_data_offset(g);
    static const uint8_t zeros[64] = {0};
    out_file o;
    uint32_t d;
    memset(&o, 0, sizeof o);
    o.f = f;
    put(&o, "GGUF", 4);
    put_u32(&o, swa_gguf_version(g));
    put_u64(&o, (uint64_t)n_t);
    put_u64(&o, (uint64_t)(n_kv + (window_kv < 0)));
    for (i = 0; i < n_kv; i++) {
        swa_str key = swa_gguf_kv_key(g, i);
        swa_gguf_value v = swa_gguf_kv_value(g, i);
        const uint8_t *start = (const uint8_t *)key.ptr - 8, *end = value_start(&v) + value_bytes(v.type, value_start(&v));
        const char *next = i + 1 < n_kv ? swa_gguf_kv_key(g, i + 1).ptr : n_t ? swa_gguf_tensor_at(g, 0)->name.ptr : NULL;
        if (next && end != (const uint8_t *)next - 8) {
            fprintf(stderr, "swa-inspect: cannot find the end of key %.*s in the input\n", (int)key.len, key.ptr);
            o.failed = 2;
            break;
        }
        if (i == window_kv) put_window(&o, nw);
        else put(&o, start, (uint64_t)(end - start));
    }
    if (window_kv < 0) put_window(&o, nw);
    for (i = 0; i < n_t; i++) {
        const swa_gguf_tensor *t = swa_gguf_tensor_at(g, i);
        put_u64(&o, t->name.len);
        put(&o, t->name.ptr, t->name.len);
        put_u32(&o, t->n_dims);
        for (d = 0; d < t->n_dims; d++) put_u64(&o, (uint64_t)t->ne[d]);
        put_u32(&o, t->type);
        put_u64(&o, t->offset);
    }
    if (n_t > 0) {      /* without tensors there is no data section to align */
        const swa_gguf_tensor *t0 = swa_gguf_tensor_at(g, 0);
        while (o.written % align && !o.failed) {
            uint64_t k = align - o.written % align;
            put(&o, zeros, k < sizeof zeros ? k : sizeof zeros);
        }
        put(&o, (const uint8_t *)t0->data - t0->offset, data_bytes);
    }
    if (fflush(o.f) != 0 && !o.failed) o.failed = 1;
    if (o.failed) {
        if (o.failed == 1) fprintf(stderr, "swa-inspect: cannot write %s: %s\n", out_path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Open the copy again and compare it with the input: version, alignment, keys, the window,
   the tensor table. The tensor bytes are not compared again: they were copied as one block
   whose position the matching tensor table confirms, and rereading a large model costs as
   much as writing it. */
/* The window entry of the copy holds what was asked. */
static int window_reads_back(const swa_gguf_value *v, const new_window *nw)
{
    swa_gguf_value e;
    int64_t w;
    uint64_t i;
    if (!nw->is_array) return v->type == SWA_GGUF_U32 && swa_gguf_value_int(v, &w) == SWA_OK && w == (int64_t)nw->w[0];
    if (v->type != SWA_GGUF_ARRAY || v->n != nw->n) return 0;
    for (i = 0; i < nw->n; i++)
        if (swa_gguf_value_at(v, i, &e) != SWA_OK || swa_gguf_value_int(&e, &w) != SWA_OK || w != (int64_t)nw->w[i]) return 0;
    return 1;
}

static int check_copy(const swa_gguf *g, const char *out_path, const new_window *nw, int64_t window_kv)
{
    swa_gguf *c;
    swa_error err;
    int64_t i, wi, n_kv = swa_gguf_kv_count(g);
    int ok;
    swa_gguf_value v;
    if (swa_gguf_open(out_path, &c, &err) != SWA_OK) {
        print_message(stderr, "swa-inspect: the copy does not read back: ", err.msg);
        return -1;
    }
    wi = swa_gguf_kv_find(c, nw->key);
    v = swa_gguf_kv_value(c, wi);
    ok = swa_gguf_version(c) == swa_gguf_version(g) && swa_gguf_alignment(c) == swa_gguf_alignment(g) &&
         swa_gguf_kv_count(c) == n_kv + (window_kv < 0) && wi == (window_kv < 0 ? n_kv : window_kv) &&
         window_reads_back(&v, nw) &&
         swa_gguf_tensor_count(c) == swa_gguf_tensor_count(g) &&
         swa_gguf_file_size(c) - swa_gguf_data_offset(c) == swa_gguf_file_size(g) - swa_gguf_data_offset(g);
    for (i = 0; ok && i < n_kv; i++) {
        swa_str a = swa_gguf_kv_key(g, i), b = swa_gguf_kv_key(c, i);
        ok = a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0;
    }
    for (i = 0; ok && i < swa_gguf_tensor_count(g); i++) {
        const swa_gguf_tensor *a = swa_gguf_tensor_at(g, i), *b = swa_gguf_tensor_at(c, i);
        ok = a->name.len == b->name.len && memcmp(a->name.ptr, b->name.ptr, a->name.len) == 0 &&
             a->type == b->type && a->n_dims == b->n_dims && memcmp(a->ne, b->ne, sizeof a->ne) == 0 &&
             a->offset == b->offset && a->nbytes == b->nbytes;
    }
    swa_gguf_close(c);
    if (!ok) fprintf(stderr, "swa-inspect: the copy does not read back as expected (%s)\n", out_path);
    return ok ? 0 : -1;
}

/* The key's name from general.architecture (llama when absent), and a pattern spread over the
   layers ({arch}.block_count). Returns 0, or 2 with a message. */
static int resolve_window(const swa_gguf *g, const int32_t *pattern, uint64_t n_pattern, new_window *nw)
{
    int64_t i = swa_gguf_kv_find(g, "general.architecture"), n_layer = 0;
    swa_gguf_value v;
    swa_str arch = {"llama", 5};
    char key[96];
    uint64_t l;
    if (i >= 0) {
        v = swa_gguf_kv_value(g, i);
        if (swa_gguf_value_str(&v, &arch) != SWA_OK || arch.len == 0 || arch.len > 40) {
            fprintf(stderr, "swa-inspect: general.architecture is not a short string\n");
            return 2;
        }
    }
    snprintf(nw->key, sizeof nw->key, "%.*s.attention.sliding_window", (int)arch.len, arch.ptr);
    nw->is_array = n_pattern > 1;
    nw->n = 1;
    if (nw->is_array) {
        snprintf(key, sizeof key, "%.*s.block_count", (int)arch.len, arch.ptr);
        i = swa_gguf_kv_find(g, key);
        if (i >= 0) v = swa_gguf_kv_value(g, i);
        if (i < 0 || v.type == SWA_GGUF_ARRAY || swa_gguf_value_int(&v, &n_layer) != SWA_OK || n_layer < 1 || n_layer > 65536) {
            fprintf(stderr, "swa-inspect: a per-layer window needs the layer count, %s (1..65536)\n", key);
            return 2;
        }
        nw->n = (uint64_t)n_layer;
    }
    if (!(nw->w = (uint32_t *)malloc(nw->n * sizeof *nw->w))) {
        fprintf(stderr, "swa-inspect: out of memory\n");
        return 1;
    }
    for (l = 0; l < nw->n; l++) nw->w[l] = (uint32_t)pattern[l % n_pattern];
    if (nw->is_array && (uint64_t)n_layer % n_pattern)
        fprintf(stderr, "swa-inspect: note: %llu layers are not whole repeats of the %llu-entry pattern\n",
                (unsigned long long)n_layer, (unsigned long long)n_pattern);
    return 0;
}

static int set_window(const char *in_path, const char *out_path, const int32_t *pattern, uint64_t n_pattern)
{
    swa_gguf *g;
    swa_error err;
    int64_t wi;
    swa_gguf_value old;
    char was[96];
    new_window nw;
    sw_file out;
    int rc;
    uint64_t l;
    if (sw_same_file(in_path, out_path)) {
        fprintf(stderr, "swa-inspect: %s is the input file; write the copy to another path\n", out_path);
        return 2;
    }
    if (swa_gguf_open(in_path, &g, &err) != SWA_OK) {
        print_message(stderr, "swa-inspect: ", err.msg);
        return 1;
    }
    memset(&nw, 0, sizeof nw);
    if ((rc = resolve_window(g, pattern, n_pattern, &nw)) != 0) {
        swa_gguf_close(g);
        return rc;
    }
    wi = swa_gguf_kv_find(g, nw.key);
    old = swa_gguf_kv_value(g, wi);
    if (wi < 0) snprintf(was, sizeof was, "added as the last key");
    else if (old.type == SWA_GGUF_ARRAY) snprintf(was, sizeof was, "replacing an array of %llu per-layer windows",
                                                   (unsigned long long)old.n);
    else {
        int64_t w;
        if (swa_gguf_value_int(&old, &w) == SWA_OK) snprintf(was, sizeof was, "replacing the %s %lld",
                                                            swa_gguf_type_name(old.type), (long long)w);
        else snprintf(was, sizeof was, "replacing a %s", swa_gguf_type_name(old.type));
    }
    if (sw_open(&out, out_path, &in_path, 1) != 0) {
        fprintf(stderr, "swa-inspect: %s\n", out.error);
        swa_gguf_close(g);
        free(nw.w);
        return 1;
    }
    /* The copy is read back before it replaces anything. */
    if (write_copy(g, out.f, out_path, &nw, wi) != 0 || check_copy(g, out.tmp ? out.tmp : out_path, &nw, wi) != 0) {
        sw_abort(&out);
        swa_gguf_close(g);
        free(nw.w);
        return 1;
    }
    if (sw_commit(&out) != 0) {
        fprintf(stderr, "swa-inspect: %s\n", out.error);
        swa_gguf_close(g);
        free(nw.w);
        return 1;
    }
    print_escaped(stdout, out_path, strlen(out_path), strlen(out_path), 0);
    printf(": %s = ", nw.key);
    if (!nw.is_array) printf("%u", (unsigned)nw.w[0]);
    else for (l = 0; l < nw.n; l++) printf("%s%u", l ? "," : "[", (unsigned)nw.w[l]);
    printf("%s (%s); %lld keys, %lld tensors and the data copied from ", nw.is_array ? "]" : "", was,
           (long long)swa_gguf_kv_count(g) - (wi >= 0), (long long)swa_gguf_tensor_count(g));
    print_escaped(stdout, in_path, strlen(in_path), strlen(in_path), 0);
    putchar('\n');
    swa_gguf_close(g);
    free(nw.w);
    return 0;
}

/* "W" (1..INT32_MAX) or "W0,W1,..." (each 0..INT32_MAX written without a sign, at most cap, not
   all 0): how many, else -1. */
static int parse_windows(const char *val, int32_t *out, int cap)
{
    int n, l, any = 0;
    if (strpbrk(val, "+-")) return -1;
    n = int_list(val, 0, INT32_MAX, out, cap);
    for (l = 0; l < n; l++) any |= out[l] > 0;
    return any ? n : -1;
}

int main(int argc, char **argv)
{
    const char *path = NULL, *out = NULL;
    static int32_t pattern[65536];
    int n_pattern = 0;
    int window = 0;
    swa_gguf *g;
    swa_error err;
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--version")) { printf("%s %d.%d.%d\n", "swa-inspect", SWA_VERSION_MAJOR, SWA_VERSION_MINOR, SWA_VERSION_PATCH); return 0; }
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) {   /* the input may also be given as -m FILE.gguf */
            if (i + 1 >= argc || path) {
                fprintf(stderr, "swa-inspect: %s\n", path ? "one input file, please" : "-m needs a value");
                usage(stderr);
                return 2;
            }
            path = argv[++i];
            continue;
        }
        /* Options that take values are matched here, ahead of the unknown-option check;
           each one moves i past the arguments it consumes. */
        if (!strcmp(a, "--set-window")) {
            const char *val = i + 1 < argc ? argv[++i] : NULL;
            if (!val || (n_pattern = parse_windows(val, pattern, (int)(sizeof pattern / sizeof pattern[0]))) < 0) {
                if (val) fprintf(stderr, "swa-inspect: --set-window wants a number in 1..%ld or a list of windows "
                                 "(0 = full attention, not all 0), got \"%s\"\n", (long)INT32_MAX, val);
                else fprintf(stderr, "swa-inspect: --set-window needs a value\n");
                usage(stderr);
                return 2;
            }
            window = 1;
            continue;
        }
        /* a second file name is the output of --set-window, checked below */
        if ((a[0] == '-' && a[1]) || out) {
            fprintf(stderr, "swa-inspect: unexpected argument %s\n", a);
            usage(stderr);
            return 2;
        }
        if (path) out = a;
        else path = a;
    }
    if (out && !window) {
        fprintf(stderr, "swa-inspect: unexpected argument %s\n", out);
        usage(stderr);
        return 2;
    }
    if (window && (!path || !out)) {
        fprintf(stderr, "swa-inspect: --set-window needs IN.gguf and OUT.gguf\n");
        usage(stderr);
        return 2;
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    if (window) return set_window(path, out, pattern, (uint64_t)n_pattern);
    if (swa_gguf_open(path, &g, &err) != SWA_OK) {
        print_message(stderr, "swa-inspect: ", err.msg);
        return 1;
    }
    print_escaped(stdout, path, strlen(path), strlen(path), 0);
    printf(": GGUF v%u, %llu bytes, alignment %llu, data at %llu, %lld keys, %lld tensors\n",
           (unsigned)swa_gguf_version(g), (unsigned long long)swa_gguf_file_size(g),
           (unsigned long long)swa_gguf_alignment(g), (unsigned long long)swa_gguf_data_offset(g),
           (long long)swa_gguf_kv_count(g), (long long)swa_gguf_tensor_count(g));
    print_metadata(g);
    print_tensors(g);
    swa_gguf_close(g);
    print_model(path);
    return 0;
}
