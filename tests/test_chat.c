/* Chat templates: every family's format of several conversations (with and without a system
   message, a system message in the middle, a tool's message), with and without the assistant
   prefix, against llama.cpp's own formatter; family detection from real templates; the
   unknown-template error; the size query; a GGUF file's template; the end-of-turn token in a real
   vocabulary.

   Where the expected strings come from:
   - tests/data/chat_expected.inc is the output of llama.cpp's llm_chat_apply_template of
     December 2025 (src/llama-chat.cpp as vendored by ollama/ollama at 49a9c9ba6), an
     implementation written independently of ours, printed by tools/reference/chat_reference.c
     (which says how to build it against that file alone).
   - test_three_turns_match_llama_cpp_tests holds, verbatim, the expected_output strings of
     llama.cpp's tests/test-chat-template.cpp (February 2025, c392e50) for its 30 templates,
     written by hand there from each model's Jinja template on Hugging Face. Two families changed
     between February and December, and swa.h follows December: chatglm4's assistant prefix gained
     a newline ("<|assistant|>\n") and granite's lost one ("<|end_of_role|>").
   - tests/data/chat_templates.txt: template texts from llama.cpp's tests/test-chat-template.cpp
     and models/templates/ (copied from the models' tokenizer_config.json on Hugging Face), and
     short templates around the markers llama.cpp's detector looks for, each with the family
     llama.cpp's detector gives it (checked by tools/reference/chat_reference.c). */
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tests/testutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEMPLATES "tests/data/chat_templates.txt"
#define PHI3_VOCAB "../shared/testdata/ggml-vocab-phi-3.gguf"
#define LLAMA3_VOCAB "../shared/testdata/ggml-vocab-llama-bpe.gguf"

#define CHAT_MESSAGE swa_chat_message
#include "tests/data/chat_conversations.inc"
#undef CHAT_MESSAGE

typedef struct expectation {
    const char *family;
    int conversation;
    size_t n_messages;
    int add_generation_prompt;
    const char *text;
} expectation;

static const expectation expected[] = {
#include "tests/data/chat_expected.inc"
};

static const swa_chat_template *family(const char *name)
{
    const swa_chat_template *t = swa_chat_template_by_name(name);
    if (!t) fail_msg("no family \"%s\"", name);
    return t;
}

static void test_every_family_formats_as_llama_cpp(void **state)
{
    char buf[2048];
    size_t i, n;
    swa_error err;
    int32_t f, rows, with_tool = 0;
    (void)state;
    for (i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        const expectation *e = &expected[i];
        swa_status s = swa_chat_format(family(e->family), conversation(e->conversation), e->n_messages,
                                       e->add_generation_prompt, buf, sizeof buf, &n, &err);
        if (s != SWA_OK) fail_msg("%s: %s", e->family, err.msg);
        if (n != strlen(e->text) || strcmp(buf, e->text))
            fail_msg("%s, conversation %d, %zu messages, prefix %d:\nwant \"%s\"\ngot  \"%s\"", e->family,
                     e->conversation, e->n_messages, e->add_generation_prompt, e->text, buf);
    }
    /* every family we list has its 14 rows, and the tool conversation when it writes "tool";
       no row names a family we do not list */
    for (f = 0; swa_chat_template_at(f); f++) {
        const swa_chat_template *t = swa_chat_template_at(f);
        int tool_row = 0;
        for (rows = 0, i = 0; i < sizeof expected / sizeof expected[0]; i++)
            if (!strcmp(expected[i].family, swa_chat_template_name(t))) {
                rows++;
                tool_row |= expected[i].conversation == 3;
            }
        assert_int_equal(rows, 14 + tool_row);
        assert_int_equal(tool_row, swa_chat_format(t, tool, 3, 1, buf, sizeof buf, &n, NULL) == SWA_OK);
        with_tool += tool_row;
    }
    assert_int_equal(f, 49);   /* llama.cpp's 48 names, and dots1 which it detects but does not name */
    assert_int_equal((size_t)f * 14 + (size_t)with_tool, sizeof expected / sizeof expected[0]);
}

/* The expected_output strings of llama.cpp's tests/test-chat-template.cpp (February 2025), as
   written there; december is +1 where December's llama.cpp adds a final newline, -1 where it
   drops one. */
static void test_three_turns_match_llama_cpp_tests(void **state)
{
    static const struct { const char *family; int december; const char *text; } cases[] = {
        {"chatml", 0, "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n"},
        {"llama2", 0, "[INST] You are a helpful assistant\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]"},
        {"llama2-sys-bos", 0, "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s><s>[INST] Who are you [/INST]   I am an assistant   </s><s>[INST] Another question [/INST]"},
        {"llama2-sys-strip", 0, "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you [/INST]I am an assistant</s>[INST] Another question [/INST]"},
        {"monarch", 0, "system\nYou are a helpful assistant</s>\n<s>user\nHello</s>\n<s>assistant\nHi there</s>\n<s>user\nWho are you</s>\n<s>assistant\n   I am an assistant   </s>\n<s>user\nAnother question</s>\n<s>assistant\n"},
        {"gemma", 0, "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n<start_of_turn>model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\nI am an assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_turn>\n<start_of_turn>model\n"},
        {"orion", 0, "Human: You are a helpful assistant\n\nHello\n\nAssistant: </s>Hi there</s>Human: Who are you\n\nAssistant: </s>   I am an assistant   </s>Human: Another question\n\nAssistant: </s>"},
        {"openchat", 0, "You are a helpful assistant<|end_of_turn|>GPT4 Correct User: Hello<|end_of_turn|>GPT4 Correct Assistant: Hi there<|end_of_turn|>GPT4 Correct User: Who are you<|end_of_turn|>GPT4 Correct Assistant:    I am an assistant   <|end_of_turn|>GPT4 Correct User: Another question<|end_of_turn|>GPT4 Correct Assistant:"},
        {"deepseek", 0, "You are a helpful assistant### Instruction:\nHello\n### Response:\nHi there\n<|EOT|>\n### Instruction:\nWho are you\n### Response:\n   I am an assistant   \n<|EOT|>\n### Instruction:\nAnother question\n### Response:\n"},
        {"vicuna", 0, "You are a helpful assistant\n\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:"},
        {"vicuna-orca", 0, "SYSTEM: You are a helpful assistant\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:"},
        {"command-r", 0, "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a helpful assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hi there<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are you<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>I am an assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Another question<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"},
        {"llama3", 0, "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
        {"phi3", 0, "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"},
        {"phi3", 0, "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"},
        {"phi3", 0, "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"},
        {"phi3", 0, "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"},
        {"chatglm3", 0, "[gMASK]sop<|system|>\n You are a helpful assistant<|user|>\n Hello<|assistant|>\n Hi there<|user|>\n Who are you<|assistant|>\n    I am an assistant   <|user|>\n Another question<|assistant|>"},
        {"chatglm4", 1, "[gMASK]<sop><|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>"},
        {"glmedge", 0, "<|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>"},
        {"minicpm", 0, "You are a helpful assistant<\347\224\250\346\210\267>Hello<AI>Hi there<\347\224\250\346\210\267>Who are you<AI>I am an assistant<\347\224\250\346\210\267>Another question<AI>"},
        {"deepseek2", 0, "You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there<\357\275\234end\342\226\201of\342\226\201sentence\357\275\234>User: Who are you\n\nAssistant:    I am an assistant   <\357\275\234end\342\226\201of\342\226\201sentence\357\275\234>User: Another question\n\nAssistant:"},
        {"granite", -1, "<|start_of_role|>system<|end_of_role|>You are a helpful assistant<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Hello<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>Hi there<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Who are you<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>   I am an assistant   <|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Another question<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>\n"},
        {"mistral-v1", 0, " [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you [/INST]    I am an assistant   </s> [INST] Another question [/INST]"},
        {"mistral-v3", 0, "[INST] You are a helpful assistant\n\nHello[/INST] Hi there</s>[INST] Who are you[/INST] I am an assistant</s>[INST] Another question[/INST]"},
        {"mistral-v3-tekken", 0, "[INST]You are a helpful assistant\n\nHello[/INST]Hi there</s>[INST]Who are you[/INST]   I am an assistant   </s>[INST]Another question[/INST]"},
        {"mistral-v7", 0, "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT][INST] Hello[/INST] Hi there</s>[INST] Who are you[/INST]    I am an assistant   </s>[INST] Another question[/INST]"},
        {"gigachat", 0, "<s>You are a helpful assistant<|message_sep|>user<|role_sep|>Hello<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>Hi there<|message_sep|>user<|role_sep|>Who are you<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>   I am an assistant   <|message_sep|>user<|role_sep|>Another question<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>"},
        {"megrez", 0, "<|role_start|>system<|role_end|>You are a helpful assistant<|turn_end|><|role_start|>user<|role_end|>Hello<|turn_end|><|role_start|>assistant<|role_end|>Hi there<|turn_end|><|role_start|>user<|role_end|>Who are you<|turn_end|><|role_start|>assistant<|role_end|>   I am an assistant   <|turn_end|><|role_start|>user<|role_end|>Another question<|turn_end|><|role_start|>assistant<|role_end|>"},
        {"phi4", 0, "<|im_start|>system<|im_sep|>You are a helpful assistant<|im_end|><|im_start|>user<|im_sep|>Hello<|im_end|><|im_start|>assistant<|im_sep|>Hi there<|im_end|><|im_start|>user<|im_sep|>Who are you<|im_end|><|im_start|>assistant<|im_sep|>   I am an assistant   <|im_end|><|im_start|>user<|im_sep|>Another question<|im_end|><|im_start|>assistant<|im_sep|>"},
    };
    char buf[2048], want[2048];
    size_t i, n;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = strlen(cases[i].text);
        assert_true(len + 2 < sizeof want);
        memcpy(want, cases[i].text, len + 1);
        if (cases[i].december > 0) strcpy(want + len, "\n");
        if (cases[i].december < 0) {
            assert_int_equal(want[len - 1], '\n');
            want[len - 1] = '\0';
        }
        assert_int_equal(swa_chat_format(family(cases[i].family), chat, 6, 1, buf, sizeof buf, &n, NULL), SWA_OK);
        if (strcmp(buf, want)) fail_msg("%s:\nwant \"%s\"\ngot  \"%s\"", cases[i].family, want, buf);
    }
    assert_int_equal(i, 30);
}

/* Every template of tests/data/chat_templates.txt is detected as the family written above it,
   or refused with an error that quotes it. */
static void test_detection_from_real_templates(void **state)
{
    size_t size = 0;
    char *text = tu_read_text(TEMPLATES, &size), *p, *next;
    int n_known = 0, n_unknown = 0;
    (void)state;
    assert_non_null(text);
    for (p = strstr(text, "#### "); p; p = next) {
        char want[64], *body = strchr(p, '\n'), *end;
        const swa_chat_template *t = NULL;
        swa_error err;
        swa_status s;
        assert_non_null(body);
        assert_int_equal(sscanf(p + 5, "%63s", want), 1);
        body++;
        next = strstr(body, "\n#### ");
        end = next ? next : text + size - 1;   /* the newline before the next entry is not the template's */
        if (next) next++;
        s = swa_chat_template_detect(body, (size_t)(end - body), &t, &err);
        if (!strcmp(want, "unknown")) {
            if (s != SWA_ERR_UNSUPPORTED) fail_msg("%.*s: detected as %s", (int)(body - p - 1), p, t ? swa_chat_template_name(t) : "?");
            assert_null(t);
            assert_int_equal(err.code, SWA_ERR_UNSUPPORTED);
            assert_non_null(strstr(err.msg, "chat template \""));
            n_unknown++;
        } else {
            if (s != SWA_OK) fail_msg("%.*s: %s", (int)(body - p - 1), p, err.msg);
            if (strcmp(swa_chat_template_name(t), want))
                fail_msg("%.*s: detected as %s", (int)(body - p - 1), p, swa_chat_template_name(t));
            n_known++;
        }
    }
    assert_true(n_known >= 60);   /* the file holds 60 known and 2 unknown */
    assert_true(n_unknown >= 2);
    free(text);
}

static void test_names_and_unknown_template(void **state)
{
    static const char *names[] = {
        "chatml", "llama2", "llama2-sys", "llama2-sys-bos", "llama2-sys-strip", "mistral-v1", "mistral-v3",
        "mistral-v3-tekken", "mistral-v7", "llama3", "gemma", "phi3", "phi4", "deepseek", "deepseek2", "deepseek3",
        "mistral-v7-tekken", "falcon3", "zephyr", "monarch", "orion", "openchat", "vicuna", "vicuna-orca", "command-r",
        "chatglm3", "chatglm4", "glmedge", "minicpm", "exaone3", "exaone4", "rwkv-world", "granite", "gigachat",
        "megrez", "yandex", "bailing", "bailing-think", "bailing2", "llama4", "smolvlm", "dots1", "hunyuan-moe",
        "gpt-oss", "hunyuan-dense", "kimi-k2", "seed_oss", "grok-2", "pangu-embedded"
    };
    const char *tmpl = "{% for m in messages %}<<{{ m['role'] }}>> {{ m['content'] }}\n{% endfor %}";
    const swa_chat_template *t = NULL;
    swa_error err;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        assert_non_null(swa_chat_template_at((int32_t)i));
        assert_string_equal(swa_chat_template_name(swa_chat_template_at((int32_t)i)), names[i]);
        assert_int_equal(swa_chat_template_detect(names[i], strlen(names[i]), &t, &err), SWA_OK);   /* by name */
        assert_string_equal(swa_chat_template_name(t), names[i]);
    }
    assert_null(swa_chat_template_at((int32_t)i));
    assert_null(swa_chat_template_at(-1));
    assert_null(swa_chat_template_by_name("chatml2"));
    assert_null(swa_chat_template_by_name(NULL));
    /* a bare "mistral" is llama.cpp's name for the pre-v1 [INST] format */
    assert_int_equal(swa_chat_template_detect("mistral", 7, &t, &err), SWA_OK);
    assert_string_equal(swa_chat_template_name(t), "llama2");

    assert_int_equal(swa_chat_template_detect(tmpl, strlen(tmpl), &t, &err), SWA_ERR_UNSUPPORTED);
    assert_null(t);
    assert_non_null(strstr(err.msg, "{% for m in messages %}<<{{ m['role'] }}>>"));   /* quoted */
    assert_non_null(strstr(err.msg, "..."));                                         /* and cut */
    assert_int_equal(swa_chat_template_detect("", 0, &t, &err), SWA_ERR_UNSUPPORTED);
    assert_int_equal(swa_chat_template_detect(NULL, 0, &t, &err), SWA_ERR_INVALID_ARG);

    assert_string_equal(swa_chat_template_eot(family("chatml")), "<|im_end|>");
    assert_string_equal(swa_chat_template_eot(family("llama3")), "<|eot_id|>");
    assert_string_equal(swa_chat_template_eot(family("gemma")), "<end_of_turn>");
    assert_string_equal(swa_chat_template_eot(family("phi3")), "<|end|>");
    assert_string_equal(swa_chat_template_eot(family("mistral-v7")), "</s>");
    assert_string_equal(swa_chat_template_eot(family("deepseek")), "<|EOT|>");
    assert_string_equal(swa_chat_template_eot(family("gpt-oss")), "<|return|>");
    assert_string_equal(swa_chat_template_eot(family("command-r")), "<|END_OF_TURN_TOKEN|>");
    assert_string_equal(swa_chat_template_eot(family("rwkv-world")), "\n\n");
    /* every family's end of turn is text its format writes, or a token of its own */
    for (i = 0; swa_chat_template_at((int32_t)i); i++) assert_true(swa_chat_template_eot(swa_chat_template_at((int32_t)i))[0]);
}

/* The size query of swa_tokenize: too small says how much, and exactly that much fits. */
static void test_buffer_too_small(void **state)
{
    const swa_chat_template *t = family("llama3");
    char buf[512];
    size_t n = 0, need;
    swa_error err;
    (void)state;
    assert_int_equal(swa_chat_format(t, chat, 4, 1, NULL, 0, &need, &err), SWA_ERR_BUFFER_TOO_SMALL);
    assert_int_equal(err.code, SWA_ERR_BUFFER_TOO_SMALL);
    assert_true(need > 100 && need + 1 < sizeof buf);
    memset(buf, 'x', sizeof buf);
    assert_int_equal(swa_chat_format(t, chat, 4, 1, buf, need, &n, &err), SWA_ERR_BUFFER_TOO_SMALL);   /* no room for NUL */
    assert_int_equal(n, need);
    assert_int_equal(buf[need], 'x');                                     /* nothing past cap */
    assert_int_equal(swa_chat_format(t, chat, 4, 1, buf, need + 1, &n, &err), SWA_OK);
    assert_int_equal(n, need);
    assert_int_equal(strlen(buf), need);
    assert_int_equal(buf[need + 1], 'x');
    /* no messages: only the prefix */
    assert_int_equal(swa_chat_format(t, chat, 0, 1, buf, sizeof buf, &n, &err), SWA_OK);
    assert_string_equal(buf, "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

static void test_bad_arguments(void **state)
{
    swa_chat_message tool[] = {{"user", "What time is it?"}, {"tool", "12:00"}};
    swa_chat_message null_content[] = {{"user", NULL}};
    char buf[256];
    size_t n;
    swa_error err;
    (void)state;
    assert_int_equal(swa_chat_format(NULL, chat, 2, 1, buf, sizeof buf, &n, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_chat_format(family("chatml"), chat, 2, 1, buf, sizeof buf, NULL, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_chat_format(family("chatml"), null_content, 1, 1, buf, sizeof buf, &n, &err), SWA_ERR_INVALID_ARG);
    /* chatml writes any role's name; the [INST] formats have no place for a tool's message */
    assert_int_equal(swa_chat_format(family("chatml"), tool, 2, 0, buf, sizeof buf, &n, &err), SWA_OK);
    assert_string_equal(buf, "<|im_start|>user\nWhat time is it?<|im_end|>\n<|im_start|>tool\n12:00<|im_end|>\n");
    assert_int_equal(swa_chat_format(family("mistral-v3"), tool, 2, 0, buf, sizeof buf, &n, &err), SWA_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "\"tool\""));
}

/* A GGUF file's tokenizer.chat_template: found, absent, or not a string. */
static void test_template_of_gguf(void **state)
{
    const char *gemma2 = "{{ bos_token }}{% for message in messages %}{{ '<start_of_turn>' + message['role'] }}{% endfor %}";
    const swa_chat_template *t = NULL;
    swa_error err;
    int round;
    (void)state;
    for (round = 0; round < 3; round++) {
        gw_writer *w = gw_new(3);
        uint8_t *file;
        size_t size;
        swa_gguf *g;
        swa_status s;
        if (round == 0) gw_kv_str(w, "tokenizer.chat_template", gemma2);
        if (round == 2) gw_kv_u32(w, "tokenizer.chat_template", 7);
        file = gw_to_memory(w, &size);
        assert_non_null(file);
        assert_int_equal(swa_gguf_open_memory(file, size, &g, &err), SWA_OK);
        s = swa_chat_template_of(g, &t, &err);
        if (round == 0) {
            assert_int_equal(s, SWA_OK);
            assert_string_equal(swa_chat_template_name(t), "gemma");
        } else {
            assert_int_equal(s, round == 1 ? SWA_ERR_NOT_FOUND : SWA_ERR_FORMAT);
            assert_non_null(strstr(err.msg, "tokenizer.chat_template"));
            assert_null(t);
        }
        swa_gguf_close(g);
        free(file);
        gw_free(w);
    }
}

/* A vocabulary file from ../shared, and the file it came from (skips without ../shared). */
static swa_vocab *vocab_or_skip(const char *path, swa_gguf **g)
{
    swa_vocab *v;
    swa_error err;
    if (swa_gguf_open(path, g, &err) != SWA_OK) {
        print_message("skipped: %s (needs ../shared)\n", err.msg);
        skip();
    }
    assert_int_equal(swa_vocab_load(*g, &v, &err), SWA_OK);
    return v;
}

/* One "Hello" from the user, formatted by t (as `text` when not NULL) and tokenized with special
   tokens on: its special tokens (ids from first_special up, bos aside) are `want`, in order, and
   t's end of turn in this vocabulary is eot. */
static void expect_markers(const swa_chat_template *t, const swa_vocab *v, int32_t eot, int32_t first_special,
                           int32_t bos, const int32_t *want, size_t n_want, const char *text)
{
    swa_chat_message one[] = {{"user", "Hello"}};
    swa_error err;
    char buf[256];
    int32_t tok[64];
    size_t n, i, k = 0;
    assert_int_equal(swa_chat_template_eot_token(t, v), eot);
    assert_int_equal(swa_chat_format(t, one, 1, 1, buf, sizeof buf, &n, &err), SWA_OK);
    if (text) assert_string_equal(buf, text);
    assert_int_equal(swa_tokenize(v, buf, n, SWA_TOKENIZE_SPECIAL, tok, 64, &n, &err), SWA_OK);
    for (i = 0; i < n; i++)
        if (tok[i] >= first_special && tok[i] != bos) {
            assert_true(k < n_want);
            assert_int_equal(tok[i], want[k++]);
        }
    assert_int_equal(k, n_want);
}

/* llama.cpp's Phi-3 vocabulary file: its template is phi3, and the markers are the added
   tokens of Phi-3's tokenizer.json: <|assistant|> 32001, <|end|> 32007, <|user|> 32010. */
static void test_phi3_vocabulary(void **state)
{
    const int32_t want[] = {32010, 32007, 32001};
    const swa_chat_template *t;
    swa_gguf *g;
    swa_vocab *v = vocab_or_skip(PHI3_VOCAB, &g);
    swa_error err;
    (void)state;
    assert_int_equal(swa_chat_template_of(g, &t, &err), SWA_OK);
    assert_string_equal(swa_chat_template_name(t), "phi3");
    assert_int_equal(swa_chat_template_eot_token(family("chatml"), v), -1);   /* no <|im_end|> in Phi-3 */
    expect_markers(t, v, 32007, 32000, -1, want, 3, "<|user|>\nHello<|end|>\n<|assistant|>\n");
    swa_vocab_free(v);
    swa_gguf_close(g);
}

/* llama.cpp's Llama 3 vocabulary file (byte-level BPE): the llama3 family's markers are Llama 3's
   special tokens, <|start_header_id|> 128006, <|end_header_id|> 128007, <|eot_id|> 128009, as in
   Meta's tokenizer.json, and <|eot_id|> is where an answer stops. */
static void test_llama3_vocabulary(void **state)
{
    const int32_t want[] = {128006, 128007, 128009, 128006, 128007};
    swa_gguf *g;
    swa_vocab *v = vocab_or_skip(LLAMA3_VOCAB, &g);
    (void)state;
    expect_markers(family("llama3"), v, 128009, 128000, 128000 /* BOS */, want, 5, NULL);
    swa_vocab_free(v);
    swa_gguf_close(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_family_formats_as_llama_cpp),
        cmocka_unit_test(test_three_turns_match_llama_cpp_tests),
        cmocka_unit_test(test_detection_from_real_templates),
        cmocka_unit_test(test_names_and_unknown_template),
        cmocka_unit_test(test_buffer_too_small),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_template_of_gguf),
        cmocka_unit_test(test_phi3_vocabulary),
        cmocka_unit_test(test_llama3_vocabulary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
