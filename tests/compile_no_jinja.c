/* With SWA_NO_JINJA the Jinja engine compiles out (this file's own static swa_jinja_parse would
   clash with its declaration): the chat template families still format a conversation. */
#define SWA_NO_JINJA
#define SWA_IMPLEMENTATION
#include "swa.h"
#include <stdio.h>
#include <string.h>

static int swa_jinja_parse(void) { return 0; }

int main(void)
{
    const swa_chat_template *t = swa_chat_template_by_name("chatml");
    swa_chat_message m;
    char out[256];
    size_t n = 0;
    m.role = "user";
    m.content = "hi";
    if (!t || swa_chat_format(t, &m, 1, 1, out, sizeof out, &n, NULL) != SWA_OK ||
        strcmp(out, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n") != 0) {
        printf("compile_no_jinja: chatml does not format\n");
        return 1;
    }
    printf("compile_no_jinja: ok%s\n", swa_jinja_parse() ? "?" : "");
    return 0;
}
