/* chat_reference: prints the expected strings of tests/test_chat.c from llama.cpp's own
   llama_chat_apply_template, an implementation written independently of swa.h's.

   Not built by the Makefile (it needs llama.cpp). The reference is the December 2025
   src/llama-chat.cpp (as vendored by ollama/ollama at commit 49a9c9ba6, directory
   llama/llama.cpp/src): chat_reference_dec.cpp compiles it alone, with the public entry point
   llama_chat_apply_template written as llama.cpp's src/llama.cpp writes it:
     c++ -std=c++17 -I DEC/src -I DEC/include -c tools/reference/chat_reference_dec.cpp -o build/chat_reference_dec.o
     cc -std=c11 -I . -c tools/reference/chat_reference.c -o build/chat_reference.o
     c++ build/chat_reference.o build/chat_reference_dec.o -o build/chat_reference
   (or link chat_reference.o with -lllama of any llama.cpp build, for that tree's formats).
     build/chat_reference > tests/data/chat_expected.inc
     build/chat_reference tests/data/chat_templates.txt
   The first prints the table expected[] of tests/test_chat.c: one row per family, conversation,
   length and add_generation_prompt setting, the conversations being those of that test. The
   second checks the family written in front of each template of the file: llama.cpp formats the
   test conversation and the tool conversation with the template text, and that must equal its
   format of the family named (or, for "unknown", of none of the families listed here). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* llama.h's declarations, so that no llama.h is needed */
typedef struct llama_chat_message { const char *role, *content; } llama_chat_message;
int32_t llama_chat_apply_template(const char *tmpl, const llama_chat_message *chat, size_t n_msg, bool add_ass,
                                  char *buf, int32_t length);

static const char *families[] = {
    "chatml", "llama2", "llama2-sys", "llama2-sys-bos", "llama2-sys-strip", "mistral-v1", "mistral-v3",
    "mistral-v3-tekken", "mistral-v7", "mistral-v7-tekken", "llama3", "gemma", "phi3", "phi4", "deepseek",
    "deepseek2", "deepseek3", "falcon3", "zephyr", "monarch", "orion", "openchat", "vicuna", "vicuna-orca",
    "command-r", "chatglm3", "chatglm4", "glmedge", "minicpm", "exaone3", "exaone4", "rwkv-world", "granite",
    "gigachat", "megrez", "yandex", "bailing", "bailing-think", "bailing2", "llama4", "smolvlm", "dots1",
    "hunyuan-moe", "gpt-oss", "hunyuan-dense", "kimi-k2", "seed_oss", "grok-2", "pangu-embedded"
};

/* The families that write a "tool" message (conversation 3 is printed for them only). */
static const char *tool_families[] = {
    "chatml", "llama3", "gemma", "phi3", "phi4", "falcon3", "zephyr", "monarch", "openchat", "chatglm3",
    "chatglm4", "glmedge", "exaone4", "granite", "megrez", "bailing", "bailing-think", "bailing2", "llama4",
    "gpt-oss", "kimi-k2", "seed_oss", "pangu-embedded"
};

#define CHAT_MESSAGE llama_chat_message
#include "tests/data/chat_conversations.inc"
#undef CHAT_MESSAGE

static const struct { int conv; size_t n; } cases[] = {
    {0, 2}, {0, 3}, {0, 4}, {0, 6}, {1, 0}, {1, 5}, {2, 4},
};

/* The template text that selects a family: its name, but for dots1, which llama.cpp detects by
   this marker and has no name for. */
static const char *template_of(const char *family)
{
    return strcmp(family, "dots1") ? family : "<|endofuserprompt|>";
}

static void print_c_string(const char *s, int n)
{
    int i;
    putchar('"');
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n') fputs("\\n", stdout);
        else if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20 || c >= 0x7f) printf("\\%03o", c);   /* octal: at most 3 digits */
        else putchar(c);
    }
    putchar('"');
}

/* Whether llama.cpp formats conversation conv (its n messages) alike with two templates. */
static int same_format(const char *a, const char *b, int conv, size_t n)
{
    static char x[8192], y[8192];
    int nx = llama_chat_apply_template(a, conversation(conv), n, 1, x, (int32_t)sizeof x);
    int ny = llama_chat_apply_template(b, conversation(conv), n, 1, y, (int32_t)sizeof y);
    return nx >= 0 && nx < (int)sizeof x && nx == ny && !memcmp(x, y, (size_t)nx);
}

/* The family among ours whose format of the test conversation and of the tool conversation
   equals text's; "unknown". */
static const char *family_of(const char *tmpl)
{
    size_t f;
    for (f = 0; f < sizeof families / sizeof families[0]; f++)
        if (same_format(tmpl, template_of(families[f]), 0, sizeof chat / sizeof chat[0]) &&
            same_format(tmpl, template_of(families[f]), 3, sizeof tool / sizeof tool[0]))
            return families[f];
    return "unknown";
}

static int check_file(const char *path)
{
    static char text[1 << 20];
    FILE *fp = fopen(path, "rb");
    size_t len;
    char *p, *end, *next;
    int bad = 0;
    if (!fp) { perror(path); return 1; }
    len = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    text[len] = '\0';
    for (p = strstr(text, "#### "); p; p = next) {
        char family[64], *body = strchr(p, '\n');
        const char *got;
        if (!body || sscanf(p + 5, "%63s", family) != 1) return 1;
        next = strstr(body, "\n#### ");
        end = next ? next : text + len - 1;   /* the last newline is not the template's */
        if (next) next++;
        *end = '\0';
        got = family_of(body + 1);
        printf("%-18s %-18s %.*s\n", family, got, (int)(body - p) - 6 - (int)strlen(family), p + 6 + strlen(family));
        bad |= strcmp(family, got) != 0;
    }
    printf(bad ? "MISMATCH\n" : "all families agree\n");
    return bad;
}

static int print_row(const char *family, int conv, size_t n, int gen)
{
    static char buf[8192];
    int len = llama_chat_apply_template(template_of(family), conversation(conv), n, gen, buf, (int32_t)sizeof buf);
    if (len < 0 || len >= (int)sizeof buf) { fprintf(stderr, "%s: failed\n", family); return 1; }
    printf("    {\"%s\", %d, %zu, %d, ", family, conv, n, gen);
    print_c_string(buf, len);
    printf("},\n");
    return 0;
}

int main(int argc, char **argv)
{
    size_t f, k;
    int gen;
    if (argc > 1) return check_file(argv[1]);
    for (f = 0; f < sizeof families / sizeof families[0]; f++)
        for (k = 0; k < sizeof cases / sizeof cases[0]; k++)
            for (gen = 0; gen <= 1; gen++)
                if (print_row(families[f], cases[k].conv, cases[k].n, gen)) return 1;
    for (f = 0; f < sizeof tool_families / sizeof tool_families[0]; f++)
        if (print_row(tool_families[f], 3, 3, 1)) return 1;
    return 0;
}
