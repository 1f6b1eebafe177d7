/* swa-gbnf-validator: whether a text matches a GBNF grammar, with llama.cpp's
   llama-gbnf-validator's interface and messages.

   swa-gbnf-validator GRAMMAR_FILE INPUT_FILE
   swa-gbnf-validator --json-schema SCHEMA_FILE INPUT_FILE   (the grammar of a JSON Schema)

   Prints "Input string is valid according to the grammar." or "Input string is invalid
   according to the grammar." followed by the error ("Unexpected character 'X' at position N" or
   "Unexpected end of input at position N", N counted in characters, as llama.cpp counts) and
   the input with the failing character and what follows it in red. Exit status (unlike
   llama.cpp's, which is 0 for both): 0 valid, 1 invalid, 2 a grammar that cannot be used, a
   file that cannot be read, or bad usage. */
#define _POSIX_C_SOURCE 200809L
#include "swa.h"
#define PROG "swa-gbnf-validator"
#include "tools/common/tool.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: swa-gbnf-validator GRAMMAR_FILE INPUT_FILE\n"
               "       swa-gbnf-validator --json-schema SCHEMA_FILE INPUT_FILE\n"
               "  -h, --help  this help; --version: the program's name and version\n"
               "  Checks that the whole of INPUT_FILE matches the GBNF grammar in GRAMMAR_FILE (rule root),\n"
               "  or the grammar of the JSON Schema in SCHEMA_FILE (docs/grammar.md).\n"
               "  -h, --help  this help; --version: the program's name and version\n"
               "  Exit status: 0 valid, 1 invalid, 2 an unusable grammar, an unreadable file or bad usage.\n");
}

/* Characters (UTF-8 lead bytes) in text[0..n): llama.cpp reports positions in code points. */
static size_t chars_before(const char *text, size_t n)
{
    size_t i, c = 0;
    for (i = 0; i < n; i++) c += ((unsigned char)text[i] & 0xC0) != 0x80;
    return c;
}

/* The length of the character at text[at] (1 for a byte that starts none). */
static size_t char_len(const char *text, size_t len, size_t at)
{
    size_t k = 1;
    while (at + k < len && ((unsigned char)text[at + k] & 0xC0) == 0x80 && k < 4) k++;
    return k;
}

static void print_invalid(const char *text, size_t len, size_t where)
{
    printf("Input string is invalid according to the grammar.\n");
    if (where < len)
        printf("Error: Unexpected character '%.*s' at position %zu\n", (int)char_len(text, len, where), text + where,
               chars_before(text, where));
    else
        printf("Error: Unexpected end of input at position %zu\n", chars_before(text, len));
    printf("\nInput string:\n");
    fwrite(text, 1, where, stdout);
    if (where < len) {
        size_t k = char_len(text, len, where);
        printf("\033[1;31m%.*s", (int)k, text + where);
        if (where + k < len) {
            printf("\033[0;31m");
            fwrite(text + where + k, 1, len - where - k, stdout);
        }
        printf("\033[0m\n");
    }
}

int main(int argc, char **argv)
{
    char *grammar_text, *input;
    size_t grammar_len, len, where = 0;
    swa_grammar *g;
    swa_error err;
    swa_status s;
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        printf(PROG " %s\n", swa_version());
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "--json-schema")) {
        char *schema;
        argv++;
        argc--;
        if (!(schema = read_all(argv[1], &grammar_len))) return EXIT_USAGE;
        s = swa_json_schema_to_grammar(schema, grammar_len, &grammar_text, &err);
        free(schema);
        if (s != SWA_OK) {
            fprintf(stderr, PROG ": %s: %s\n", argv[1], err.msg);
            return EXIT_USAGE;
        }
        grammar_len = strlen(grammar_text);
    } else if (argc != 3) {
        usage(stderr);
        return EXIT_USAGE;
    } else if (!(grammar_text = read_all(argv[1], &grammar_len))) {
        return EXIT_USAGE;
    }
    s = swa_grammar_parse(grammar_text, grammar_len, NULL, &g, &err);
    free(grammar_text);
    if (s != SWA_OK) {
        fprintf(stderr, PROG ": %s: %s\n", argv[1], err.msg);
        return EXIT_USAGE;
    }
    if (!(input = read_all(argv[2], &len))) {
        swa_grammar_free(g);
        return EXIT_USAGE;
    }
    s = swa_grammar_match(g, input, len, &where, &err);
    if (s == SWA_OK) printf("Input string is valid according to the grammar.\n");
    else if (s == SWA_ERR_NO_MATCH) print_invalid(input, len, where);
    else fprintf(stderr, PROG ": %s\n", err.msg);
    stdout_flush();
    swa_grammar_free(g);
    free(input);
    return s == SWA_OK ? 0 : s == SWA_ERR_NO_MATCH ? 1 : EXIT_USAGE;
}
