/* With SWA_NO_TOOLS the tool-call and reasoning parser compiles out (this file's own static
   swa_chat_parse would clash with its declaration); the chat templates still write a chat. */
#define SWA_NO_TOOLS
#define SWA_IMPLEMENTATION
#include "swa.h"
#include <stdio.h>
#include <string.h>

static int swa_chat_parse(void) { return 0; }

int main(void)
{
    swa_chat_message m[1];
    char out[128];
    size_t n = 0;
    swa_error err;
    m[0].role = "user";
    m[0].content = "Hi";
    if (swa_chat_format(swa_chat_template_by_name("chatml"), m, 1, 1, out, sizeof out, &n, &err) != SWA_OK ||
        strcmp(out, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n") != 0) {
        printf("compile_no_tools: the chat is not written\n");
        return 1;
    }
    return swa_chat_parse();
}
