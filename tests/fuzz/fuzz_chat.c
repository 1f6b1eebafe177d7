/* libFuzzer harness: any bytes as a chat template to detect, then split at NUL bytes into
   messages (roles from the first byte of each piece: the three common ones, a tool's, and names
   only some families write, one of which granite marks) formatted by every family, with and
   without the assistant prefix. The size query must agree with the text
   written, the text must be NUL-terminated at that length, and a buffer one byte short must be
   refused, filled with the same text and nothing written past it. */
#include "swa.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *roles[] = {"system", "user", "assistant", "tool", "assistant_tool_call", "function"};
    char *copy = (char *)malloc(size + 1), *buf;
    swa_chat_message msgs[16];
    const swa_chat_template *t;
    size_t n = 0, i = 0, len, len2;
    int32_t f;
    swa_chat_template_detect((const char *)data, size, &t, NULL);
    memcpy(copy, data, size);
    copy[size] = '\0';
    while (i < size && n < 16) {           /* pieces between NULs; the first byte picks the role */
        msgs[n].role = roles[(unsigned char)copy[i] % 6];
        msgs[n++].content = copy + i + 1 <= copy + size ? copy + i + 1 : copy + size;
        i += strlen(copy + i) + 1;
    }
    for (f = 0; (t = swa_chat_template_at(f)) != NULL; f++) {
        int gen;
        for (gen = 0; gen <= 1; gen++) {
            if (swa_chat_format(t, msgs, n, gen, NULL, 0, &len, NULL) != SWA_ERR_BUFFER_TOO_SMALL) continue;   /* a role t has no place for */
            buf = (char *)malloc(len + 1);
            if (swa_chat_format(t, msgs, n, gen, buf, len + 1, &len2, NULL) != SWA_OK || len2 != len || buf[len] != '\0') abort();
            if (len > 0) {                  /* exactly len bytes: AddressSanitizer sees a write past them */
                char *short_buf = (char *)malloc(len);
                if (swa_chat_format(t, msgs, n, gen, short_buf, len, &len2, NULL) != SWA_ERR_BUFFER_TOO_SMALL ||
                    len2 != len || memcmp(short_buf, buf, len))
                    abort();
                free(short_buf);
            }
            free(buf);
        }
    }
    free(copy);
    return 0;
}
