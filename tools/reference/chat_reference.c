/* chat_reference: prints the expected strings of tests/test_chat.c from llama.cpp's own
   llama_chat_apply_template, an implementation written independently of swa.h's.

   Not built by the Makefile (it needs llama.cpp). With llama.cpp's headers and libllama.so:
     cc -std=c11 -I LLAMA/include -I LLAMA/ggml/include tools/reference/chat_reference.c \
        -L LLAMA/build/bin -lllama -Wl,-rpath,LLAMA/build/bin -o build/chat_reference
     build/chat_reference > chat_expected.inc
     build/chat_reference tests/data/chat_templates.txt
   The first prints the table expected[] of tests/test_chat.c, one row per family, conversation
   and add_generation_prompt setting, the conversations being those of that test. The second
   checks the family written in front of each template of the file: llama.cpp formats the test
   conversation with the template text, and that must equal its format of the family named
   (or, for "unknown", none of the families listed here). */
#include "llama.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *families[] = {
    "chatml", "llama2", "llama2-sys", "llama2-sys-bos", "llama2-sys-strip", "mistral-v1", "mistral-v3",
    "mistral-v3-tekken", "mistral-v7", "llama3", "gemma", "phi3", "phi4", "deepseek", "deepseek2", "deepseek3"
};

/* The conversation of llama.cpp's tests/test-chat-template.cpp; its first n messages. */
static const struct llama_chat_message chat[] = {
    {"system", "You are a helpful assistant"}, {"user", "Hello"}, {"assistant", "Hi there"},
    {"user", "Who are you"}, {"assistant", "   I am an assistant   "}, {"user", "Another question"},
};
static const size_t lengths[] = {2, 3, 4, 6};   /* 1 turn, 1 turn answered, 2 turns, 3 turns */

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

/* The family among ours whose format of the whole test conversation equals text's; "unknown". */
static const char *family_of(const char *tmpl)
{
    static char want[8192], got[8192];
    size_t n_chat = sizeof chat / sizeof chat[0], f;
    int n = llama_chat_apply_template(tmpl, chat, n_chat, 1, want, (int32_t)sizeof want);
    if (n < 0 || n >= (int)sizeof want) return "unknown";
    for (f = 0; f < sizeof families / sizeof families[0]; f++) {
        int m = llama_chat_apply_template(families[f], chat, n_chat, 1, got, (int32_t)sizeof got);
        if (m == n && !memcmp(want, got, (size_t)n)) return families[f];
    }
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

int main(int argc, char **argv)
{
    static char buf[8192];
    size_t f, k;
    int gen;
    if (argc > 1) return check_file(argv[1]);
    for (f = 0; f < sizeof families / sizeof families[0]; f++)
        for (k = 0; k < sizeof lengths / sizeof lengths[0]; k++)
            for (gen = 0; gen <= 1; gen++) {
                int n = llama_chat_apply_template(families[f], chat, lengths[k], gen, buf, (int32_t)sizeof buf);
                if (n < 0 || n >= (int)sizeof buf) { fprintf(stderr, "%s: failed\n", families[f]); return 1; }
                printf("    {\"%s\", %zu, %d, ", families[f], lengths[k], gen);
                print_c_string(buf, n);
                printf("},\n");
            }
    return 0;
}
