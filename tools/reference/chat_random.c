/* chat_random: swa_chat_format against llama.cpp's llama_chat_apply_template on random
   conversations (0-7 messages, roles and contents drawn from small pools that include empty and
   space-padded contents and several system messages), for every family, with and without the
   assistant prefix. Conversations swa.h refuses (a role a family has no place for) are counted,
   the rest must be equal byte for byte.

   Not built by the Makefile (it needs llama.cpp); with the objects of chat_reference.c's build:
     cc -std=c11 -I. -c tools/reference/chat_random.c -o build/chat_random.o
     c++ build/chat_random.o build/swa.o build/chat_reference_dec.o -o build/chat_random -lm -lpthread
     build/chat_random [ITERATIONS [N_ROLES]]
   N_ROLES 3 draws system/user/assistant only; 7 (the default) adds tool and other names. */
#include "swa.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct llama_chat_message { const char *role, *content; } llama_chat_message;
int32_t llama_chat_apply_template(const char *tmpl, const llama_chat_message *chat, size_t n_msg, bool add_ass,
                                  char *buf, int32_t length);

static uint32_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*s >> 33);
}

int main(int argc, char **argv)
{
    static const char *roles[] = {"system", "user", "assistant", "tool", "function", "assistant_tool_call", "x"};
    static const char *contents[] = {"", " ", "Hello", "  Be brief  ", "\tline\nline\n", "a\n\nb", "  ", "Hi there"};
    static char a[1 << 16], b[1 << 16];
    long iterations = argc > 1 ? atol(argv[1]) : 20000, it, compared = 0, differ = 0, refused = 0;
    uint32_t n_roles = argc > 2 ? (uint32_t)atoi(argv[2]) : 7;
    uint64_t rng = 12345;
    if (n_roles < 1 || n_roles > 7) n_roles = 7;
    for (it = 0; it < iterations; it++) {
        llama_chat_message lm[8];
        swa_chat_message sm[8];
        size_t n = next(&rng) % 8, i;
        int32_t f;
        for (i = 0; i < n; i++) {
            lm[i].role = sm[i].role = roles[next(&rng) % n_roles];
            lm[i].content = sm[i].content = contents[next(&rng) % 8];
        }
        for (f = 0; swa_chat_template_at(f); f++) {
            const swa_chat_template *t = swa_chat_template_at(f);
            const char *name = swa_chat_template_name(t);
            const char *tmpl = strcmp(name, "dots1") ? name : "<|endofuserprompt|>";   /* llama.cpp has no name for it */
            int gen;
            for (gen = 0; gen <= 1; gen++) {
                size_t len;
                int m;
                if (swa_chat_format(t, sm, n, gen, a, sizeof a, &len, NULL) != SWA_OK) { refused++; continue; }
                m = llama_chat_apply_template(tmpl, lm, n, gen, b, (int32_t)sizeof b);
                compared++;
                if (m < 0 || (size_t)m != len || memcmp(a, b, len)) {
                    if (differ++ < 10) printf("%s, prefix %d, %zu messages:\n  swa.h    \"%s\"\n  llama.cpp \"%.*s\"\n",
                                              name, gen, n, a, m < 0 ? 0 : m, b);
                }
            }
        }
    }
    printf("%ld compared, %ld differ, %ld refused by swa.h\n", compared, differ, refused);
    return differ != 0;
}
