// Compiles llama.cpp's src/llama-chat.cpp on its own for tools/reference/chat_reference.c:
// llama.h is replaced by the one type the file uses, and llama_chat_apply_template is written
// as src/llama.cpp (December 2025) writes it. Build with -I DEC/src -I DEC/include: llama.h must
// exist, but LLAMA_H, its include guard, defined here, leaves it empty.
#define LLAMA_H
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
extern "C" {
typedef struct llama_chat_message { const char *role, *content; } llama_chat_message;
}
#include "llama-chat.cpp"

extern "C" int32_t llama_chat_apply_template(const char *tmpl, const llama_chat_message *chat, size_t n_msg,
                                             bool add_ass, char *buf, int32_t length)
{
    const std::string curr_tmpl(tmpl == nullptr ? "chatml" : tmpl);
    std::vector<const llama_chat_message *> chat_vec(n_msg);
    for (size_t i = 0; i < n_msg; i++) chat_vec[i] = &chat[i];
    std::string formatted_chat;
    llm_chat_template detected_tmpl = llm_chat_detect_template(curr_tmpl);
    if (detected_tmpl == LLM_CHAT_TEMPLATE_UNKNOWN) return -1;
    int32_t res = llm_chat_apply_template(detected_tmpl, chat_vec, formatted_chat, add_ass);
    if (res < 0) return res;
    if (buf && length > 0) strncpy(buf, formatted_chat.c_str(), length);
    return res;
}
