/* swa-tokenize: show how a GGUF vocabulary tokenizes a text.

   swa-tokenize -m MODEL.gguf (-p TEXT | -f FILE | --stdin) [--no-bos] [--pieces] [--special] [--timing]

   Only the metadata and the vocabulary are read, so vocabulary-only files (llama.cpp's
   ggml-vocab-*.gguf) work as well as whole models. The ids go to stdout on one line; with
   --pieces, one token per line: id, the piece as stored, and the text it decodes to. Pieces
   and text come from the file and may hold anything, so bytes that are not printable UTF-8
   are shown as \xHH. The token count goes to stderr, with --timing also the time swa_tokenize took. Exit status: 0 on success, 1 when the
   file or vocabulary cannot be read, 2 for bad usage.

   llama-tokenize's spellings are taken where they mean what this program does: --model,
   --prompt, --file, --stdin (-f -), --no-bos, --ids (the ids as it prints them: [1, 2, 3]),
   --show-count (its "Total number of tokens: N" line on stdout), --log-disable (no count on
   stderr), and --no-escape and --no-parse-special, which ask for what this program does
   anyway (no escapes processed; control tokens only with --special). */
#define _POSIX_C_SOURCE 200809L
#include "swa.h"
#include "tools/common/printable.h"
#define PROG "swa-tokenize"
#include "tools/common/tool.h"

#include <errno.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIECE_COLS 24       /* the piece column is padded to this width */

static void usage(FILE *f)
{
    fprintf(f, "usage: swa-tokenize -m MODEL.gguf (-p TEXT | -f FILE | --stdin) [--no-bos] [--pieces | --ids] [--special] [--timing]\n"
               "  -m, --model FILE   GGUF file with a tokenizer.ggml.* vocabulary (weights not needed)\n"
               "  -p, --prompt TEXT  text to tokenize\n"
               "  -f, --file FILE    read the text from a file, byte for byte (- for stdin)\n"
               "  --stdin     the same as -f -\n"
               "  --no-bos    do not put BOS first (it is also left out when the vocabulary's\n"
               "              tokenizer.ggml.add_bos_token is false)\n"
               "  --pieces    one token per line: id, the piece as stored, its decoded text\n"
               "  --special   control-token text in the input (\"</s>\") becomes that token\n"
               "  --timing    print the time tokenizing took (one swa_tokenize call), wall and CPU, to stderr\n"
               "  --ids       the ids as llama-tokenize --ids prints them: [1, 2, 3]\n"
               "  --show-count  then \"Total number of tokens: N\" on stdout, as llama-tokenize prints it\n"
               "  --log-disable no token count on stderr\n"
               "  --no-escape, --no-parse-special  llama-tokenize's flags for what this program does by\n"
               "              default: \\n stays two characters; control tokens only with --special\n"
               "  -h, --help  this help; --version: the program's name and version\n"
               "  The ids go to stdout, the token count to stderr. A NUL byte in the text is a byte\n"
               "  like any other (swa-generate -f passes it on the same way).\n"
               "  Exit status: 0 complete, 1 error, 2 bad usage.\n");
}


/* Print s escaped: printable UTF-8 as is, '\\' (and '"' when quoting) with a backslash,
   everything else as \xHH. Returns the columns used, one per character. */
static int print_escaped(const char *s, size_t len, int quote)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i, k;
    int cols = 0;
    if (quote) cols += printf("\"");
    for (i = 0; i < len; i += k ? k : 1) {
        k = printable_utf8(p + i, len - i);
        if (k == 1 && (p[i] == '\\' || (quote && p[i] == '"'))) cols += printf("\\%c", p[i]);
        else if (k) { fwrite(p + i, 1, k, stdout); cols++; }
        else cols += printf("\\x%02x", p[i]);
    }
    if (quote) cols += printf("\"");
    return cols;
}

static void print_pieces(const swa_vocab *v, const int32_t *ids, size_t n)
{
    char small[256], *text;
    size_t i, len;
    for (i = 0; i < n; i++) {
        swa_str piece = swa_vocab_piece(v, ids[i]);
        int cols;
        printf("%6d  ", ids[i]);
        cols = print_escaped(piece.ptr, piece.len, 0);
        printf("%*s  ", cols < PIECE_COLS ? PIECE_COLS - cols : 0, "");
        len = swa_token_to_text(v, ids[i], small, sizeof small);
        text = small;
        if (len > sizeof small && (text = (char *)malloc(len)) != NULL)
            swa_token_to_text(v, ids[i], text, len);
        print_escaped(text ? text : small, text ? len : sizeof small, 1);
        putchar('\n');
        if (text != small) free(text);
    }
}

int main(int argc, char **argv)
{
    const char *model = NULL, *prompt = NULL, *file = NULL;
    int no_bos = 0, pieces = 0, special = 0, timing = 0, flags = 0, rc = 1, i;
    int ids_list = 0, show_count = 0, quiet = 0, no_special = 0;
    double t0 = 0, seconds = 0, cpu = 0;
    clock_t c0;
    char *text = NULL;
    size_t len = 0, n = 0, k;
    int32_t *ids = NULL;
    swa_gguf *g = NULL;
    swa_vocab *v = NULL;
    swa_error err;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        help_or_version(a, usage);
        if (!strcmp(a, "--no-bos")) no_bos = 1;
        else if (!strcmp(a, "--pieces")) pieces = 1;
        else if (!strcmp(a, "--special")) special = 1;
        else if (!strcmp(a, "--timing")) timing = 1;
        else if (!strcmp(a, "--ids")) ids_list = 1;
        else if (!strcmp(a, "--show-count")) show_count = 1;
        else if (!strcmp(a, "--log-disable")) quiet = 1;
        else if (!strcmp(a, "--no-escape")) continue;           /* escapes are never processed */
        else if (!strcmp(a, "--no-parse-special")) no_special = 1;
        else if (!strcmp(a, "--stdin")) {
            if (file) usage_fail("give one of -p TEXT and -f FILE");
            file = "-";
        }
        else if (!strcmp(a, "-m") || !strcmp(a, "-p") || !strcmp(a, "-f") || !strcmp(a, "--model") ||
                 !strcmp(a, "--prompt") || !strcmp(a, "--file")) {
            char c = a[1] == '-' ? a[2] : a[1];
            if (i + 1 >= argc) usage_fail("%s needs a value", a);
            if (c == 'm') model = argv[++i];
            else if (c == 'p') prompt = argv[++i];
            else if (file) usage_fail("give one of -p TEXT and -f FILE");
            else file = argv[++i];
        } else {
            usage_fail("unknown flag %s", a);
        }
    }
    if (!model || !!prompt + !!file != 1) usage_fail("%s", !model ? "-m MODEL is required" : "give one of -p TEXT and -f FILE");
    if (special && no_special) usage_fail("--special and --no-parse-special ask for opposite things");
    if (pieces && ids_list) usage_fail("give one of --pieces and --ids");
    if (prompt) len = strlen(prompt);
    else if (!(text = read_all(file, &len))) return 1;
    if (swa_gguf_open(model, &g, &err) != SWA_OK || swa_vocab_load(g, &v, &err) != SWA_OK) {
        fprintf(stderr, "swa-tokenize: %s%s%s\n", g ? model : "", g ? ": " : "", err.msg);
        goto done;
    }
    if (!no_bos && swa_vocab_add_bos(v)) flags |= SWA_TOKENIZE_ADD_BOS;
    if (special) flags |= SWA_TOKENIZE_SPECIAL;
    /* with --timing, room for every token at once, so one call is what is timed */
    t0 = now();
    c0 = clock();
    if (!(ids = tokenize_all(v, prompt ? prompt : text, len, flags, timing ? len + 16 : 256, &n))) goto done;
    seconds = now() - t0;
    cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    if (pieces) {
        print_pieces(v, ids, n);
    } else if (ids_list) {
        putchar('[');
        for (k = 0; k < n; k++) printf(k ? ", %d" : "%d", ids[k]);
        printf("]\n");
    } else {
        for (k = 0; k < n; k++) printf(k ? " %d" : "%d", ids[k]);
        putchar('\n');
    }
    if (show_count) printf("Total number of tokens: %zu\n", n);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "swa-tokenize: cannot write the output: %s\n", strerror(errno));
        goto done;
    }
    if (!quiet) fprintf(stderr, "swa-tokenize: %zu tokens\n", n);
    if (timing)
        fprintf(stderr, "swa-tokenize: %zu bytes tokenized in %.3f s (%.2f MB/s), %.3f s of CPU time\n", len,
                seconds, seconds > 0 ? (double)len / seconds / 1e6 : 0.0, cpu);
    rc = 0;
done:
    free(ids);
    free(text);
    swa_vocab_free(v);
    swa_gguf_close(g);
    return rc;
}
