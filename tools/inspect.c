/* swa-inspect: print what a GGUF file holds (header, metadata, tensor table) and, when it
   loads as a llama model, a one-line summary of its hyperparameters.

   swa-inspect FILE.gguf

   Strings from the file may hold anything, so control bytes, C1 controls and invalid UTF-8
   are printed escaped: any file is safe to show on a terminal. Exit status: 0 when the GGUF
   parsed (a file that is not a model included), 1 when it cannot be opened, 2 for bad usage. */
#define _POSIX_C_SOURCE 200809L
#define SWA_IMPLEMENTATION
#include "swa.h"

#include <stdio.h>
#include <string.h>

#define STR_SHOWN   48      /* bytes of a string shown before "..." */
#define ELEMS_SHOWN 4       /* elements of a top-level array; nested arrays show 2 */
#define NEST_SHOWN  3       /* arrays nested deeper print only their "[n type]" */
#define KEY_COLS    40      /* widest key and tensor name we pad the columns for */

static void usage(FILE *f)
{
    fprintf(f, "usage: swa-inspect FILE.gguf\n"
               "  Print the header, metadata and tensor table of a GGUF file, then a summary\n"
               "  of the hyperparameters if it loads as a llama model.\n"
               "  -h  this help\n");
}

/* Bytes in the UTF-8 sequence at p[0..n) if it is valid and safe to print, else 0. We refuse
   overlong forms, surrogates and U+0080..U+009F, which some terminals take as controls. */
static size_t printable_utf8(const unsigned char *p, size_t n)
{
    size_t len, i;
    uint32_t cp;
    if (p[0] >= 0x20 && p[0] < 0x7f) return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf) { len = 2; cp = p[0] & 0x1fu; }
    else if ((p[0] & 0xf0) == 0xe0) { len = 3; cp = p[0] & 0x0fu; }
    else if (p[0] >= 0xf0 && p[0] <= 0xf4) { len = 4; cp = p[0] & 0x07u; }
    else return 0;
    if (len > n) return 0;
    for (i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3fu);
    }
    if (cp < 0xa0 || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
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
    printf("model: %d layers, embd %d, %d heads, %d kv heads, head dim %d, ff %d, vocab %d, ",
           hp->n_layer, hp->n_embd, hp->n_head, hp->n_kv_head, hp->head_dim, hp->n_ff, hp->n_vocab);
    if (hp->n_ctx_train > 0) printf("ctx %d, ", hp->n_ctx_train);
    else fputs("ctx not given, ", stdout);
    printf("rope base %g, n_rot %d, eps %g, ", hp->rope_base, hp->n_rot, hp->rms_eps);
    print_windows(m);
    printf(", weights %s\n", type ? type : "?");
    swa_model_free(m);
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    swa_gguf *g;
    swa_error err;
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        /* Options that take values are matched here, ahead of the unknown-option check;
           each one moves i past the arguments it consumes. */
        if ((a[0] == '-' && a[1]) || path) {
            fprintf(stderr, "swa-inspect: unexpected argument %s\n", a);
            usage(stderr);
            return 2;
        }
        path = a;
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
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
